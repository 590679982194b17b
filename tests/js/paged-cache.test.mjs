// PagedCache (js/src/paged-cache.js) on the fortunes decoder rewritten onto
// paged caches: session outputs and state values are PagedCache objects;
// bytes round trips (compacted, the same tokens); truncate and fork share
// pages; plain { blocks } objects are accepted; malformed bytes and caches
// raise OnnxLightError and leave a state untouched; failing runs (an
// allocation failure, a pagedFormats function that throws) publish nothing;
// pagedFormats rules and functions; paged_attention events; quantizePagedCache.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { fortunesBytes } from './models.mjs';

const { InferenceSession, OnnxLightError, PagedCache, PersistentValueState, Tensor, emptyCaches, toPagedModel } = ol;
const LAYERS = 4;
const WIDTH = 64; // 2 KV heads x head size 32, the same for keys and values
const isCode = (code, message) => (e) => e instanceof OnnxLightError && e.code === code && (!message || message.test(e.message));

const i64 = (values, dims) => new Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
const feedsFor = (ids, past) => ({
  input_ids: i64(ids, [1, ids.length]),
  attention_mask: i64(new Array(past + ids.length).fill(1), [1, past + ids.length]), // declared, not read by PagedAttention
  position_ids: i64(ids.map((_, i) => past + i), [1, ids.length]),
});
const PROMPT = [84, 104, 101, 32]; // "The "

let paged; // model bytes (blockSize 4)

/** Runs `steps` one-token steps after the prompt on a state; returns the last logits. */
async function decode(state, steps, from = 0) {
  let past = from;
  let ids = from ? [101] : PROMPT;
  let logits;
  for (let s = 0; s < steps; s++) {
    const out = await state.run(feedsFor(ids, past), ['logits']);
    logits?.dispose();
    logits = out.logits;
    past += ids.length;
    ids = [101];
  }
  return logits;
}

/** Every block's [start, length] and the types of its pages. */
function layout(cache) {
  return cache.blocks.map((b) => {
    const kind = (p) => (p instanceof Tensor ? p.type : `encoded ${p.type}`);
    const entry = [b.start, b.length, kind(b.key), kind(b.value)];
    b.key.dispose?.();
    b.value.dispose?.();
    return entry;
  });
}

const Q8U4 = [{ fromTokens: 0, key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } }];

before(async () => {
  paged = await toPagedModel(fortunesBytes(), { blockSize: 4 });
});

describe('PagedCache', () => {
  test('session outputs are PagedCache: length, byteLength, blocks, and fed back as past', async () => {
    const session = await InferenceSession.create(paged);
    const empty = await emptyCaches(session);
    assert.ok(empty['past_key_values.0'] instanceof PagedCache);
    assert.equal(empty['past_key_values.0'].length, 0);
    const out = await session.run({ ...feedsFor([72, 101, 108, 108, 111, 33, 32], 0), ...empty });
    const present = out['present.0'];
    assert.ok(present instanceof PagedCache);
    assert.equal(present.length, 7);
    assert.equal(present.blockCount, 2);
    assert.equal(present.byteLength, 7 * 2 * WIDTH * 4);
    assert.deepEqual(layout(present), [[0, 4, 'float32', 'float32'], [4, 3, 'float32', 'float32']]);
    const [first] = present.blocks;
    assert.deepEqual(first.key.dims, [1, 1, 4, WIDTH]);
    first.key.dispose();
    first.value.dispose();
    // fed back: the next run appends one block
    const pasts = Object.fromEntries([0, 1, 2, 3].map((i) => [`past_key_values.${i}`, out[`present.${i}`]]));
    const next = await session.run({ ...feedsFor([101], 7), ...pasts });
    assert.equal(next['present.0'].length, 8);
    assert.equal(next['present.0'].blockCount, 3);
    await session.release();
  });

  test('toBytes / fromBytes: compacted, the same tokens, the same next logits', async () => {
    await ol.init();
    const state = await PersistentValueState.create(paged, await emptyCaches(paged), { pagedFormats: Q8U4 });
    (await decode(state, 6)).dispose(); // prompt of 4 (one block), then 5 one-token blocks
    const cache = state.values['past_key_values.1'];
    assert.equal(cache.length, 9);
    assert.equal(cache.blockCount, 6);
    const bytes = cache.toBytes();
    const back = PagedCache.fromBytes(bytes);
    assert.equal(back.length, 9);
    assert.equal(back.blockCount, 1, 'one run of int8/uint4 blocks saved as one block');
    assert.equal(back.byteLength, cache.byteLength);
    assert.deepEqual(layout(back), [[0, 9, 'encoded float32', 'encoded float32']]);
    assert.deepEqual(back.toBytes(), bytes, 'saving again gives the same bytes');
    assert.equal(PagedCache.fromBytes(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength)).length, 9);
    // resumed from the bytes (reset), the next logits are the same bits
    const all = Object.fromEntries(Object.entries(state.values).map(([name, c]) => [name, PagedCache.fromBytes(c.toBytes())]));
    const expected = await decode(state, 1, 9);
    const other = await PersistentValueState.create(paged, all, { pagedFormats: Q8U4 });
    const got = await decode(other, 1, 9);
    assert.deepEqual(got.data, expected.data);
    await state.close();
    await other.close();
  });

  test('truncate and fork share pages; appending to a fork leaves the original', async () => {
    const state = await PersistentValueState.create(paged, await emptyCaches(paged));
    (await decode(state, 4)).dispose(); // 4 + 1 + 1 + 1 tokens in blocks of 4, 1, 1, 1
    const cache = state.values['past_key_values.0'];
    const offset = (c, i) => {
      const b = c.blocks[i];
      const at = b.key.wasmByteOffset;
      b.key.dispose();
      b.value.dispose();
      return at;
    };
    const cut = cache.truncate(2);
    assert.equal(cut.length, 2);
    assert.deepEqual(layout(cut), [[0, 2, 'float32', 'float32']]);
    assert.equal(offset(cut, 0), offset(cache, 0), 'the crossing block keeps its payload');
    assert.equal(cache.truncate(100).length, 7);
    assert.throws(() => cache.truncate(-1), isCode('OL_INVALID_ARGUMENT'));
    const fork = cache.fork();
    assert.equal(offset(fork, 3), offset(cache, 3));
    // the state appends to its cache; the fork stays at 7 tokens
    (await decode(state, 1, 7)).dispose();
    assert.equal(state.values['past_key_values.0'].length, 8);
    assert.equal(fork.length, 7);
    // resetting the state to the truncated cache continues from 2 tokens
    await state.reset({ ...Object.fromEntries([1, 2, 3].map((i) => [`past_key_values.${i}`, state.values[`past_key_values.${i}`].truncate(2)])), 'past_key_values.0': cut });
    assert.equal(state.values['past_key_values.3'].length, 2);
    cut.dispose();
    assert.ok(cut.disposed);
    assert.throws(() => cut.length, isCode('OL_FAILED_PRECONDITION'));
    cut.dispose(); // idempotent
    await state.close();
  });

  test('plain { blocks } objects are caches; PagedCache.from checks them', async () => {
    await ol.init();
    const session = await InferenceSession.create(paged);
    const key = new Tensor('float32', new Float32Array(3 * WIDTH).fill(0.5), [1, 1, 3, WIDTH]);
    const value = new Tensor('float32', new Float32Array(3 * WIDTH).fill(-0.25), [1, 1, 3, WIDTH]);
    const plain = { blocks: [{ start: 0, length: 2, key, value }, { start: 2n, length: new Tensor('int64', BigInt64Array.of(1n), []), key, value }] };
    const cache = PagedCache.from(plain);
    assert.equal(cache.length, 3);
    assert.deepEqual(layout(cache), [[0, 2, 'float32', 'float32'], [2, 1, 'float32', 'float32']]);
    const pasts = Object.fromEntries([0, 1, 2, 3].map((i) => [`past_key_values.${i}`, i % 2 ? cache : plain]));
    const out = await session.run({ ...feedsFor([101], 3), ...pasts });
    assert.equal(out['present.0'].length, 4);
    const gap = { blocks: [{ start: 0, length: 2, key, value }, { start: 3, length: 1, key, value }] };
    assert.throws(() => PagedCache.from(gap), isCode('OL_INVALID_ARGUMENT', /block 1 starts at 3, expected 2/));
    assert.throws(() => PagedCache.from({ blocks: [{ start: 0.5, length: 1, key, value }] }), isCode('OL_INVALID_ARGUMENT', /start must be an integer/));
    await assert.rejects(session.run({ ...feedsFor([101], 3), ...pasts, 'past_key_values.2': gap }), isCode('OL_INVALID_ARGUMENT'));
    await session.release();
  });

  test('malformed bytes and caches raise OnnxLightError and leave a state untouched', async () => {
    const state = await PersistentValueState.create(paged, await emptyCaches(paged));
    (await decode(state, 2)).dispose();
    const before = state.values['past_key_values.0'].toBytes();
    const good = state.values['past_key_values.0'].toBytes();
    for (const bytes of [Uint8Array.of(0xff, 0xff, 0xff), good.subarray(0, good.length - 7)]) {
      assert.throws(() => PagedCache.fromBytes(bytes), isCode('OL_INVALID_ARGUMENT'));
    }
    assert.throws(() => PagedCache.fromBytes('bytes'), isCode('OL_INVALID_ARGUMENT'));
    // a cache whose widths disagree with block 0's
    const key = new Tensor('float32', new Float32Array(8), [1, 1, 1, 8]);
    const wide = new Tensor('float32', new Float32Array(16), [1, 1, 1, 16]);
    const broken = { blocks: [{ start: 0, length: 1, key, value: key }, { start: 1, length: 1, key: wide, value: key }] };
    const initial = { ...state.values, 'past_key_values.0': broken };
    await assert.rejects(state.reset(initial), isCode('OL_INVALID_ARGUMENT', /widths/));
    assert.deepEqual(state.values['past_key_values.0'].toBytes(), before);
    await state.close();
  });

  test('a failing run publishes no block: allocation failure, a throwing pagedFormats function', async () => {
    let calls = -100; // armed below
    const failing = () => {
      if (++calls === 3) throw new RangeError('no format for layer 2');
      return {};
    };
    const state = await PersistentValueState.create(paged, await emptyCaches(paged), { pagedFormats: failing });
    (await decode(state, 1)).dispose();
    const lengths = () => Object.values(state.values).map((c) => [c.length, c.blockCount]);
    const before = lengths();
    calls = 0;
    const error = await state.run(feedsFor([101], 4), ['logits']).then(() => null, (e) => e);
    assert.ok(error instanceof OnnxLightError && error.code === 'OL_INVALID_ARGUMENT', String(error));
    assert.match(error.message, /pagedFormats function failed: no format for layer 2/);
    assert.ok(error.cause instanceof RangeError);
    assert.equal(calls, 3, 'layers 0 and 1 appended before layer 2 failed');
    assert.deepEqual(lengths(), before);
    calls = 100; // no more failures
    ol.injectAllocationFailure(20);
    try {
      await assert.rejects(state.run(feedsFor([101], 4), ['logits']), isCode('OL_OUT_OF_MEMORY'));
    } finally {
      ol.injectAllocationFailure(-1);
    }
    assert.deepEqual(lengths(), before);
    (await decode(state, 1, 4)).dispose();
    assert.deepEqual(lengths()[0], [5, 2]);
    await state.close();
  });

  test('pagedFormats: rules switch formats by cached length; a function sees K, V and the length; events count bytes', async () => {
    const rules = [{ fromTokens: 0 }, { fromTokens: 5, key: { type: 'int8', scale: 0.02, zeroPoint: 0 }, value: { type: 'uint4', scale: 'auto' } }];
    const state = await PersistentValueState.create(paged, await emptyCaches(paged), { pagedFormats: rules, events: true });
    (await decode(state, 3)).dispose(); // 4 + 1 + 1 tokens: the third run has 5 cached
    const events = state.events();
    assert.equal(events.length, 3 * LAYERS);
    assert.ok(events.every((e) => e.kind === 'paged_attention' && e.opType === 'PagedAttention' && e.node.length > 0));
    assert.deepEqual(events.map((e) => e.copiedBytes), [
      ...new Array(LAYERS).fill(4 * 2 * WIDTH * 4), // prompt: 4 dense tokens
      ...new Array(LAYERS).fill(2 * WIDTH * 4), // one dense token
      ...new Array(LAYERS).fill(WIDTH + WIDTH / 2), // one int8 / uint4 token
    ]);
    assert.ok(events.slice(0, 2 * LAYERS).every((e) => e.dequantizedBytes === 0));
    assert.ok(events.slice(2 * LAYERS).every((e) => e.dequantizedBytes > 0 && e.peakWorkspaceBytes > 0 && e.validatedPages === 0));
    assert.deepEqual(layout(state.values['past_key_values.2']).map((b) => b.slice(2)), [
      ['float32', 'float32'], ['float32', 'float32'], ['encoded float32', 'encoded float32'],
    ]);
    await state.close();

    const seen = [];
    const fn = (key, value, pastLength) => {
      seen.push([pastLength, key.type, key.dims.join('x'), value.dims.join('x')]);
      return pastLength >= 4 ? { key: { type: 'int4', scale: 0.1 }, value: { type: 'int2', scale: 0.5, zeroPoint: 1 } } : {};
    };
    const withFn = await PersistentValueState.create(paged, await emptyCaches(paged), { pagedFormats: fn });
    (await decode(withFn, 2)).dispose();
    assert.deepEqual(seen.slice(0, LAYERS + 1), [...new Array(LAYERS).fill([0, 'float32', '1x2x4x32', '1x2x4x32']), [4, 'float32', '1x2x1x32', '1x2x1x32']]);
    assert.equal(withFn.values['past_key_values.0'].byteLength, 4 * 2 * WIDTH * 4 + WIDTH / 2 + WIDTH / 4);
    await withFn.close();
  });

  test('pagedFormats are checked: names, scales, zero points, order', async () => {
    const bad = [
      [[{ key: { type: 'int16', scale: 1 } }], /type must be one of/],
      [[{ key: { type: 'int8', scale: -1 } }], /scale must be a positive finite number or 'auto'/],
      [[{ key: { type: 'int8', scale: 'auto', zeroPoint: 3 } }], /zeroPoint is chosen with scale 'auto'/],
      [[{ value: { type: 'uint4', scale: 0.5, zeroPoint: 16 } }], /rule 0: value zero point 16 is outside the uint4 range/],
      [[{ fromTokens: 8 }, { fromTokens: 4 }], /rule 1: from_tokens 4 must be >= 0 and above the previous rule's/],
      [{ fromTokens: 0 }, /must be an array of rules or a function/],
    ];
    for (const [pagedFormats, message] of bad) {
      await assert.rejects(PersistentValueState.create(paged, await emptyCaches(paged), { pagedFormats }), isCode('OL_INVALID_ARGUMENT', message));
      await assert.rejects(InferenceSession.create(paged, { pagedFormats }), isCode('OL_INVALID_ARGUMENT', message));
    }
    const state = await PersistentValueState.create(paged, await emptyCaches(paged), { pagedFormats: () => ({ key: { type: 'int8', scale: 0 } }) });
    await assert.rejects(state.run(feedsFor(PROMPT, 0), ['logits']), isCode('OL_INVALID_ARGUMENT', /pagedFormats function failed: .*scale must be a positive/));
    await state.close();
  });

  test('quantizePagedCache converts selected blocks and shares the others', async () => {
    const state = await PersistentValueState.create(paged, await emptyCaches(paged));
    (await decode(state, 2)).dispose();
    const cache = state.values['past_key_values.0'];
    const q = ol.quantizePagedCache(cache, [1], { key: { type: 'int8', scale: 0.05 }, value: { type: 'uint4', scale: 0.25, zeroPoint: 8 } });
    assert.deepEqual(layout(q), [[0, 4, 'float32', 'float32'], [4, 1, 'encoded float32', 'encoded float32']]);
    assert.equal(q.byteLength, 4 * 2 * WIDTH * 4 + WIDTH + WIDTH / 2);
    const back = ol.quantizePagedCache(q, [1], { key: { type: 'float16' }, value: { type: 'bfloat16' } });
    assert.deepEqual(layout(back)[1], [4, 1, 'float16', 'bfloat16']);
    assert.throws(() => ol.quantizePagedCache(cache, [1, 1], { key: { type: 'int8', scale: 1 }, value: { type: 'int8', scale: 1 } }), isCode('OL_INVALID_ARGUMENT', /repeated/));
    // 'auto': each converted page calibrated from its own values (C checks the scales: tests/c/test_paged_compact.c)
    const calibrated = ol.quantizePagedCache(cache, [0], { key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } });
    assert.deepEqual(layout(calibrated)[0], [0, 4, 'encoded float32', 'encoded float32']);
    calibrated.dispose();
    assert.throws(() => ol.quantizePagedCache(cache, [0], { key: { type: 'int8', scale: 'auto', zeroPoint: 1 }, value: { type: 'float32' } }), isCode('OL_INVALID_ARGUMENT', /zeroPoint is chosen/));
    assert.throws(() => ol.quantizePagedCache(cache, [0], { key: { type: 'int8', scale: 0 }, value: { type: 'float32' } }), isCode('OL_INVALID_ARGUMENT', /positive finite number or 'auto'/));
    assert.throws(() => ol.quantizePagedCache(cache, [0], { key: { type: 'int8', scale: 1 } }), isCode('OL_INVALID_ARGUMENT'));
    // a state continues from the mixed cache
    const initial = { ...state.values, 'past_key_values.0': q };
    await state.reset(initial);
    (await decode(state, 1, 5)).dispose();
    assert.equal(state.values['past_key_values.0'].length, 6);
    await state.close();
  });
});
