// InferenceSession lets a torch export's present.* (Concat(past, new, axis=2))
// keep spare rows: fed back as past.*, the next run appends in place instead
// of copying the prefix. Results must not depend on it: every step equals a
// run fed dense copies of the same caches, branches from one past stay
// independent, and reading a present's data gives the dense elements. The
// float16 caches of GroupQueryAttention, MultiHeadAttention and Attention 23
// grow in place too (checked against onnxruntime-node and by the run's
// memory peak).
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import { create, toBinary } from '@bufbuild/protobuf';
import * as ort from 'onnxruntime-node';
import * as ol from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

import { DataType, FORTUNES, tensorInfo } from './models.mjs';

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


// ------------------------------------------------------------ float16 attention caches

const HEADS = 8; // query and K/V heads
const HEAD = 8; // head size
const W = HEADS * HEAD;

/** One float16 attention node with past/present caches [1, HEADS, len, HEAD]. */
function halfAttentionModel(op) {
  const f16 = DataType.FLOAT16;
  const int = (name, i) => ({ name, type: 2, i: BigInt(i) }); // AttributeProto INT
  const cache = (name, len) => tensorInfo(name, f16, [1, HEADS, len, HEAD]);
  const pasts = [cache('past_key', 'past'), cache('past_value', 'past')];
  const qkv = (dims) => ['q', 'k', 'v'].map((n) => tensorInfo(n, f16, dims));
  const nodes = {
    gqa: {
      inputs: [...qkv([1, 1, W]), ...pasts, tensorInfo('seqlens_k', DataType.INT32, [1]), tensorInfo('total', DataType.INT32, [])],
      node: { opType: 'GroupQueryAttention', domain: 'com.microsoft', input: ['q', 'k', 'v', 'past_key', 'past_value', 'seqlens_k', 'total'],
        attribute: [int('num_heads', HEADS), int('kv_num_heads', HEADS)] },
      y: [1, 1, W],
    },
    mha: {
      inputs: [...qkv([1, 1, W]), ...pasts],
      node: { opType: 'MultiHeadAttention', domain: 'com.microsoft', input: ['q', 'k', 'v', '', '', '', 'past_key', 'past_value'],
        attribute: [int('num_heads', HEADS)] },
      y: [1, 1, W],
    },
    attention: {
      inputs: [...qkv([1, HEADS, 1, HEAD]), ...pasts],
      node: { opType: 'Attention', domain: '', input: ['q', 'k', 'v', '', 'past_key', 'past_value'], attribute: [] },
      y: [1, HEADS, 1, HEAD],
    },
  }[op];
  const model = create(ModelProtoSchema, {
    irVersion: 10n,
    producerName: 'onnx-light tests',
    opsetImport: [{ domain: '', version: 23n }, { domain: 'com.microsoft', version: 1n }],
    graph: {
      name: op,
      node: [{ ...nodes.node, name: op, output: ['y', 'present_key', 'present_value'] }],
      input: nodes.inputs,
      output: [tensorInfo('y', f16, nodes.y), cache('present_key', 'total'), cache('present_value', 'total')],
    },
  });
  return { bytes: toBinary(ModelProtoSchema, model), yDims: nodes.y };
}

/** float16 codes as numbers. */
const halfValue = (h) => {
  const sign = h >> 15 ? -1 : 1, e = (h >> 10) & 31, m = h & 1023;
  return e === 0 ? sign * m * 2 ** -24 : e === 31 ? (m ? NaN : sign * Infinity) : sign * (1 + m / 1024) * 2 ** (e - 15);
};

describe('float16 attention caches grow in place', () => {
  let seed = 99;
  // random float16 codes of magnitude 2^-5 .. 1
  const randomHalf = () => {
    seed = (Math.imul(seed, 1664525) + 1013904223) >>> 0;
    return ((seed >>> 31) << 15) | ((10 + ((seed >>> 10) % 5)) << 10) | (seed & 1023);
  };
  const half = (dims) => new Tensor('float16', Uint16Array.from({ length: dims.reduce((a, b) => a * b, 1) }, randomHalf), dims);
  const L = 512; // imported cache rows

  for (const op of ['gqa', 'mha', 'attention']) {
    test(`${op}: presents fed back append in place and match onnxruntime`, async () => {
      const { bytes, yDims } = halfAttentionModel(op);
      const session = await InferenceSession.create(bytes);
      const oracle = await ort.InferenceSession.create(bytes);
      const toOrt = (feeds) => Object.fromEntries(Object.entries(feeds).map(([k, t]) => [k, new ort.Tensor(t.type, t.data, t.dims)]));
      let ours = { past_key: half([1, HEADS, L, HEAD]), past_value: half([1, HEADS, L, HEAD]) };
      let theirs = toOrt(ours);
      const cacheBytes = 2 * HEADS * L * HEAD * 2; // K and V, float16
      const peaks = [];
      for (let step = 0; step < 6; step++) {
        const p = L + step;
        const kvDims = op === 'attention' ? yDims : [1, 1, W];
        const fresh = { q: half(yDims), k: half(kvDims), v: half(kvDims) };
        if (op === 'gqa') {
          fresh.seqlens_k = new Tensor('int32', Int32Array.from([p]), [1]);
          fresh.total = new Tensor('int32', Int32Array.from([p + 1]), []);
        }
        const liveBefore = memoryStats().liveBytes;
        resetPeakMemory();
        const a = await session.run({ ...fresh, ...ours });
        peaks.push(memoryStats().peakBytes - liveBefore);
        const b = await oracle.run({ ...toOrt(fresh), ...theirs });
        a.y.data.forEach((x, i) => {
          const [u, w] = [halfValue(x), halfValue(b.y.data[i])];
          assert.ok(Math.abs(u - w) <= 2e-3 + 4e-3 * Math.abs(w), `${op} step ${step} y[${i}]: ${u} vs ${w}`);
        });
        a.y.dispose();
        assert.deepEqual(a.present_key.dims, [1, HEADS, p + 1, HEAD]);
        ours = { past_key: a.present_key, past_value: a.present_value };
        theirs = { past_key: b.present_key, past_value: b.present_value };
      }
      // the caches themselves: the rows onnxruntime holds, bit for bit
      for (const n of ['past_key', 'past_value']) assert.deepEqual([...ours[n].data], [...theirs[n].data], `${op} ${n}`);
      // the first run copies the imported caches in with spare rows; each later
      // one writes only its row: far below one copy of the caches (a dense
      // present per step takes cacheBytes)
      assert.ok(peaks[0] >= cacheBytes, `${op}: the import copies the caches in (${peaks[0]} bytes)`);
      for (const [step, peak] of peaks.entries()) {
        if (step) assert.ok(peak < cacheBytes / 2, `${op} step ${step}: run peak ${peak} bytes, caches ${cacheBytes}`);
      }
      await session.release();
    });
  }
});
