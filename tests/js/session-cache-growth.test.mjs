// InferenceSession lets a torch export's present.* (Concat(past, new, axis=2))
// keep spare rows: fed back as past.*, the next run appends in place instead
// of copying the prefix. Results must not depend on it: every step equals a
// run fed dense copies of the same caches, branches from one past stay
// independent, and reading a present's data gives the dense elements.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { FORTUNES } from './models.mjs';

const { InferenceSession, Tensor, emptyCaches } = ol;

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
});
