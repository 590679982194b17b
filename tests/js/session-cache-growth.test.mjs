// InferenceSession lets a torch export's present.* (Concat(past, new, axis=2))
// keep spare rows: fed back as past.*, the next run appends in place instead
// of copying the prefix. Results must not depend on it: every step equals a
// run fed dense copies of the same caches, branches from one past stay
// independent, and reading a present's data gives the dense elements.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import * as ort from 'onnxruntime-node';
import * as ol from 'onnx-light';

import { FORTUNES } from './models.mjs';

const { InferenceSession, Tensor, emptyCaches, memoryStats, resetPeakMemory } = ol;

const i64 = (values, dims) => new Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
const feedsFor = (ids, past) => ({
  input_ids: i64(ids, [1, ids.length]),
  attention_mask: i64(new Array(past + ids.length).fill(1), [1, past + ids.length]),
  position_ids: i64(ids.map((_, i) => past + i), [1, ids.length]),
});
const denseCopy = (t) => new Tensor(t.type, Float32Array.from(t.data), t.dims);

async function fortunes() {
  const bytes = new Uint8Array(readFileSync(FORTUNES));
  const session = await InferenceSession.create(bytes);
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const presentOf = (n) => `present.${n.slice('past_key_values.'.length)}`;
  const empty = await emptyCaches(bytes, { batch: 1 });
  return { session, pastNames, presentOf, empty };
}

describe('session caches grow in place', () => {
  test('feeding presents back gives the bits of feeding dense copies, step after step', async () => {
    const { session, pastNames, presentOf, empty } = await fortunes();
    let grown = empty; // presents as returned (spare rows kept)
    let copied = empty; // dense copies of the same values
    let length = 0;
    const prompt = [72, 101, 108, 108, 111];
    for (let step = 0; step < 12; step++) {
      const ids = step === 0 ? prompt : [97 + step];
      const a = await session.run({ ...feedsFor(ids, length), ...grown });
      const b = await session.run({ ...feedsFor(ids, length), ...copied });
      length += ids.length;
      assert.deepEqual([...a.logits.data], [...b.logits.data], `logits of step ${step}`);
      grown = Object.fromEntries(pastNames.map((n) => [n, a[presentOf(n)]]));
      copied = Object.fromEntries(pastNames.map((n) => [n, denseCopy(b[presentOf(n)])]));
      for (const n of pastNames) assert.deepEqual(grown[n].dims, copied[n].dims);
    }
    // the data of a grown present is its dense elements (and stays readable)
    for (const n of pastNames) {
      assert.deepEqual([...grown[n].data], [...copied[n].data], n);
      assert.equal(typeof grown[n].wasmByteOffset, 'number');
      grown[n].dispose();
    }
    await session.release();
  });

  test('two runs from one past do not disturb each other (the second copies)', async () => {
    const { session, pastNames, presentOf, empty } = await fortunes();
    const first = await session.run({ ...feedsFor([72, 105], 0), ...empty });
    const past = Object.fromEntries(pastNames.map((n) => [n, first[presentOf(n)]]));
    const dense = Object.fromEntries(pastNames.map((n) => [n, denseCopy(first[presentOf(n)])]));
    const x = await session.run({ ...feedsFor([33], 2), ...past }); // appends in place
    const y = await session.run({ ...feedsFor([63], 2), ...past }); // the same past again: must copy
    const xRef = await session.run({ ...feedsFor([33], 2), ...dense });
    const yRef = await session.run({ ...feedsFor([63], 2), ...dense });
    assert.deepEqual([...y.logits.data], [...yRef.logits.data], 'the second branch');
    for (const n of pastNames) {
      assert.deepEqual([...x[presentOf(n)].data], [...xRef[presentOf(n)].data], `first branch ${n} after the second ran`);
      assert.deepEqual([...y[presentOf(n)].data], [...yRef[presentOf(n)].data], `second branch ${n}`);
      assert.deepEqual([...past[n].data], [...dense[n].data], `the shared past ${n} is unchanged`);
    }
    assert.deepEqual([...x.logits.data], [...xRef.logits.data], 'the first branch');
    await session.release();
  });

  test('an imported cache (JS data) is copied in with spare rows: the run appends without a second copy', async () => {
    const { session, pastNames, presentOf, empty } = await fortunes();
    const [, H, , D] = empty[pastNames[0]].dims;
    const L = 300;
    let x = 12345;
    const random = () => ((x = (Math.imul(x, 1664525) + 1013904223) >>> 0) / 2 ** 32 - 0.5);
    const imported = Object.fromEntries(pastNames.map((n) => [n, new Tensor('float32', Float32Array.from({ length: H * L * D }, random), [1, H, L, D])]));
    const importedBytes = pastNames.length * H * L * D * 4;
    const feeds = { ...feedsFor([104], L), ...imported };
    const liveBefore = memoryStats().liveBytes;
    resetPeakMemory();
    const ours = await session.run(feeds);
    // the copies in with half again spare rows (1.5x), the run's own values (0.5x here), and
    // no second copy of the caches for the presents (3x: measured before imported caches grew)
    const peak = memoryStats().peakBytes - liveBefore;
    assert.ok(peak < 2.5 * importedBytes, `run peak ${peak} bytes for ${importedBytes} imported`);
    const oracle = await ort.InferenceSession.create(readFileSync(FORTUNES));
    const theirs = await oracle.run(Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, new ort.Tensor(t.type, t.data, t.dims)])));
    const close = (a, b, what) => a.forEach((v, i) => assert.ok(Math.abs(v - b[i]) <= 1e-4 + 1e-4 * Math.abs(b[i]), `${what}[${i}]: ${v} vs ${b[i]}`));
    close(ours.logits.data, theirs.logits.data, 'logits');
    for (const n of pastNames) {
      const present = ours[presentOf(n)];
      assert.deepEqual(present.dims, [1, H, L + 1, D]);
      close(present.data, theirs[presentOf(n)].data, presentOf(n));
      for (let h = 0; h < H; h++) {
        const rows = present.data.subarray(h * (L + 1) * D, h * (L + 1) * D + L * D);
        assert.deepEqual(rows, imported[n].data.subarray(h * L * D, (h + 1) * L * D), `${n} head ${h}: the imported rows`);
      }
    }
    // and the next step appends to these presents in place as usual
    const next = await session.run({ ...feedsFor([105], L + 1), ...Object.fromEntries(pastNames.map((n) => [n, ours[presentOf(n)]])) });
    assert.equal(next[presentOf(pastNames[0])].dims[2], L + 2);
    await session.release();
  });
});

