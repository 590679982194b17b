// PersistentValueState through JS: the seed's accumulate example, zero-copy
// retention (pointer identity), reset, close, cancellation and injected
// faults leaving the state bit-identical, input forms, the rejections, and the
// Attention fixture's storage events.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as ol from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

const { OnnxLightError, PersistentValueState, Tensor } = ol;

const ACCUMULATE =
  '<ir_version: 10, opset_import: ["" : 18]>' +
  'accumulate (float[2] delta, float[2] past) => (float[2] present)' +
  '{ present = Add(delta, past) }';
// Two nodes, so an allocation can fail mid-graph.
const SQUARE_ACCUMULATE =
  '<ir_version: 10, opset_import: ["" : 18]>' +
  'accumulate2 (float[2] delta, float[2] past) => (float[2] present, float[2] square)' +
  '{ square = Mul(delta, delta) present = Add(square, past) }';

const isCode = (code) => (e) => e instanceof OnnxLightError && e.code === code;
const f32 = (values) => new Tensor('float32', Float32Array.from(values), [values.length]);

async function accumulateModel(text = ACCUMULATE) {
  return ol.bindPersistent(await ol.parseModel(text), { past: 'present' });
}

/** Bytes and address of every retained value (views disposed). */
function snapshot(state) {
  const values = state.values;
  const result = {};
  for (const [name, t] of Object.entries(values)) {
    result[name] = { bytes: [...new Uint8Array(t.data.buffer, t.data.byteOffset, t.data.byteLength)], address: t.wasmByteOffset, dims: t.dims };
    t.dispose();
  }
  return result;
}

describe('PersistentValueState: the accumulate example', () => {
  test('present = delta + past accumulates; values.past and the returned present are the same wasm buffer', async () => {
    const model = await accumulateModel();
    const state = await PersistentValueState.create(model, { past: f32([0, 0]) });
    const delta = f32([1, 1]);
    const first = await state.run({ delta });
    assert.deepEqual([...first.present.data], [1, 1]);
    const second = await state.run({ delta });
    assert.deepEqual([...second.present.data], [2, 2]);
    const { past } = state.values;
    assert.equal(past.location, 'wasm');
    assert.equal(past.wasmByteOffset, second.present.wasmByteOffset, 'retained without a copy');
    assert.deepEqual([...past.data], [2, 2]);
    // the first output is still its own, unchanged buffer
    assert.deepEqual([...first.present.data], [1, 1]);
    await state.reset({ past: f32([0, 0]) });
    assert.deepEqual([...state.values.past.data], [0, 0]);
    await state.close();
    // returned views stay readable after close
    assert.deepEqual([...second.present.data], [2, 2]);
    assert.deepEqual([...past.data], [2, 2]);
  });

  test('initial and reset values in wasm memory are retained by reference (no copy)', async () => {
    await ol.init();
    const initial = Tensor.alloc('float32', [2]);
    initial.data.set([5, 6]);
    const state = await PersistentValueState.create(await accumulateModel(), { past: initial });
    assert.equal(state.values.past.wasmByteOffset, initial.wasmByteOffset);
    const out = await state.run({ delta: f32([1, 1]) });
    assert.deepEqual([...out.present.data], [6, 7]);
    const again = Tensor.alloc('float32', [2]);
    await state.reset({ past: again });
    assert.equal(state.values.past.wasmByteOffset, again.wasmByteOffset);
    // a returned output can seed another state without a copy
    const other = await PersistentValueState.create(await accumulateModel(), { past: out.present });
    assert.equal(other.values.past.wasmByteOffset, out.present.wasmByteOffset);
    await other.close();
    await state.close();
  });

  test('inputs: Tensor, wasm tensor and { data, dims } are accepted', async () => {
    await ol.init();
    const state = await PersistentValueState.create(await accumulateModel(), { past: { data: new Float32Array([1, 2]), dims: [2] } });
    const resident = Tensor.alloc('float32', [2]);
    resident.data.set([10, 10]);
    await state.run({ delta: resident });
    await state.run({ delta: { data: new Float32Array([1, 1]), dims: [2] } });
    const out = await state.run({ delta: f32([0, 0]) });
    assert.deepEqual([...out.present.data], [12, 13]);
    await state.close();
  });

  test('unsupported input forms raise instead of being copied', async () => {
    const state = await PersistentValueState.create(await accumulateModel(), { past: f32([0, 0]) });
    await assert.rejects(state.run({ delta: [1, 1] }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(state.run({ delta: new Float32Array([1, 1]) }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(state.run({ delta: { data: new DataView(new ArrayBuffer(8)), dims: [2] } }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(
      state.run({ delta: { data: new Float32Array(4), dims: [2, 2], strides: [1, 2] } }),
      (e) => isCode('OL_INVALID_ARGUMENT')(e) && /not contiguous/.test(e.message),
    );
    await assert.rejects(state.run({ delta: f32([1, 1, 1]) }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(state.run({ delta: new Tensor('int32', [1, 1], [2]) }), isCode('OL_INVALID_ARGUMENT'));
    const out = await state.run({ delta: f32([1, 2]) });
    assert.deepEqual([...out.present.data], [1, 2], 'the state is still usable');
    await state.close();
  });
});

describe('PersistentValueState: rejections', () => {
  test('feeds must not override retained inputs', async () => {
    const state = await PersistentValueState.create(await accumulateModel(), { past: f32([0, 0]) });
    await assert.rejects(state.run({ delta: f32([1, 1]), past: f32([5, 5]) }), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /past/.test(e.message));
    await assert.rejects(state.run({}), isCode('OL_INVALID_ARGUMENT'));
    await state.close();
  });

  test('initial values: unknown, missing, wrong type and not-an-object are rejected', async () => {
    const model = await accumulateModel();
    await assert.rejects(
      PersistentValueState.create(model, { past: f32([0, 0]), pats: f32([0, 0]) }),
      (e) => isCode('OL_INVALID_ARGUMENT')(e) && /pats/.test(e.message),
    );
    await assert.rejects(PersistentValueState.create(model, {}), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /past/.test(e.message));
    await assert.rejects(PersistentValueState.create(model, { delta: f32([0, 0]), past: f32([0, 0]) }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(PersistentValueState.create(model, { past: new Tensor('int32', [0, 0], [2]) }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(PersistentValueState.create(model, null), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(PersistentValueState.create(model, { past: f32([0, 0]) }, { persistentTensorInitialCapacity: -1 }), isCode('OL_INVALID_ARGUMENT'));
    const state = await PersistentValueState.create(model, { past: f32([0, 0]) });
    await assert.rejects(state.reset({ nope: f32([0, 0]) }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(state.reset({}), isCode('OL_INVALID_ARGUMENT'));
    await state.close();
  });

  test('a model without bindings cannot make a state', async () => {
    await assert.rejects(PersistentValueState.create(await ol.parseModel(ACCUMULATE), { past: f32([0, 0]) }), isCode('OL_INVALID_ARGUMENT'));
  });

  test('use after close raises OL_FAILED_PRECONDITION; close is idempotent', async () => {
    const state = await PersistentValueState.create(await accumulateModel(), { past: f32([0, 0]) });
    await state.close();
    await state.close();
    assert.equal(state.closed, true);
    await assert.rejects(state.run({ delta: f32([1, 1]) }), isCode('OL_FAILED_PRECONDITION'));
    await assert.rejects(state.reset({ past: f32([0, 0]) }), isCode('OL_FAILED_PRECONDITION'));
    assert.throws(() => state.values, isCode('OL_FAILED_PRECONDITION'));
    assert.throws(() => state.events(), isCode('OL_FAILED_PRECONDITION'));
  });
});

describe('PersistentValueState: failures leave the state bit-identical', () => {
  test('an aborted signal cancels without running (OL_CANCELLED), the retry succeeds', async () => {
    const state = await PersistentValueState.create(await accumulateModel(), { past: f32([3, 4]) });
    const before = snapshot(state);
    const controller = new AbortController();
    controller.abort(new Error('request no longer needed'));
    await assert.rejects(
      state.run({ delta: f32([1, 1]) }, { signal: controller.signal }),
      (e) => isCode('OL_CANCELLED')(e) && /request no longer needed/.test(e.message),
    );
    assert.deepEqual(snapshot(state), before);
    const out = await state.run({ delta: f32([1, 1]) }, { signal: new AbortController().signal });
    assert.deepEqual([...out.present.data], [4, 5]);
    await state.close();
  });

  test('allocation faults injected at every point of the run leave the values unchanged', async () => {
    const state = await PersistentValueState.create(await accumulateModel(SQUARE_ACCUMULATE), { past: f32([3, 4]) });
    await state.run({ delta: f32([1, 1]) }); // past = [4, 5] in a buffer the run made
    const before = snapshot(state);
    let failures = 0;
    for (let k = 0; k < 64; k++) {
      ol.injectAllocationFailure(k);
      let out;
      try {
        out = await state.run({ delta: f32([2, 2]) });
      } catch (e) {
        assert.ok(isCode('OL_OUT_OF_MEMORY')(e), `fault ${k}: ${e.message}`);
        failures++;
        assert.deepEqual(snapshot(state), before, `fault ${k} left the state unchanged`);
        continue;
      } finally {
        ol.injectAllocationFailure(-1);
      }
      assert.deepEqual([...out.present.data], [8, 9], 'the retry after the faults computes from the old state');
      break;
    }
    assert.ok(failures >= 2, `faults were injected mid-graph (${failures})`);
    await state.close();
  });
});

describe('bindPersistent / bindCache / emptyCaches', () => {
  test('bytes in, bytes out; ModelProto in, ModelProto out', async () => {
    const bytes = await ol.parseModel(ACCUMULATE);
    const bound = await ol.bindPersistent(bytes, { past: 'present' });
    assert.ok(bound instanceof Uint8Array);
    const proto = fromBinary(ModelProtoSchema, bytes);
    const boundProto = await ol.bindPersistent(proto, { past: 'present' });
    assert.equal(boundProto.$typeName, 'onnx.ModelProto');
    assert.deepEqual(
      boundProto.graph.persistentBindings.map((b) => [b.inputName, b.outputName]),
      [['past', 'present']],
    );
    assert.equal(proto.graph.persistentBindings.length, 0, 'the source is not modified');
    const state = await PersistentValueState.create(boundProto, { past: f32([1, 1]) });
    assert.deepEqual(state.bindings, [{ input: 'past', output: 'present' }]);
    await state.close();
  });

  test('unknown names are rejected', async () => {
    const bytes = await ol.parseModel(ACCUMULATE);
    await assert.rejects(ol.bindPersistent(bytes, { pats: 'present' }), (e) => e instanceof OnnxLightError && /pats/.test(e.message));
    await assert.rejects(ol.bindPersistent(bytes, { past: 'presnt' }), (e) => e instanceof OnnxLightError && /presnt/.test(e.message));
    await assert.rejects(ol.bindPersistent(bytes, ['past']), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(ol.bindPersistent(42, { past: 'present' }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(ol.bindCache(bytes), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /past_key_values/.test(e.message));
  });

  test('a bound input read by several nodes gets one forwarding Identity (single-use rule)', async () => {
    // like torch exports: Shape(past) and Concat(past, delta) both read the cache
    const text =
      '<ir_version: 10, opset_import: ["" : 18]>' +
      'grow (float[1,1] delta, float[1,N] past) => (float[1,M] present, int64[2] shape)' +
      '{ shape = Shape(past) present = Concat<axis = 1>(past, delta) }';
    const plain = await ol.parseModel(text);
    // declaring the binding without the rewrite violates the rule
    const proto = fromBinary(ModelProtoSchema, plain);
    proto.graph.persistentBindings.push({ $typeName: 'onnx.PersistentBindingProto', inputName: 'past', outputName: 'present' });
    const violating = toBinary(ModelProtoSchema, create(ModelProtoSchema, proto));
    await assert.rejects(
      PersistentValueState.create(violating, { past: new Tensor('float32', new Float32Array(0), [1, 0]) }),
      (e) => e instanceof OnnxLightError && /past/.test(e.message),
    );
    const bound = fromBinary(ModelProtoSchema, await ol.bindPersistent(plain, { past: 'present' }));
    const identities = bound.graph.node.filter((n) => n.opType === 'Identity');
    assert.equal(identities.length, 1);
    assert.deepEqual(identities[0].input, ['past']);
    const uses = bound.graph.node.flatMap((n) => n.input).filter((x) => x === 'past');
    assert.equal(uses.length, 1);
    const state = await PersistentValueState.create(bound, { past: new Tensor('float32', new Float32Array(0), [1, 0]) });
    for (let i = 1; i <= 3; i++) {
      const out = await state.run({ delta: new Tensor('float32', [i], [1, 1]) });
      assert.deepEqual([...out.shape.data], [1n, BigInt(i - 1)]);
      assert.deepEqual([...out.present.data], Array.from({ length: i }, (_, k) => k + 1));
    }
    await state.close();
  });

  test('emptyCaches reads the declared shapes from the bytes, as a session lists its inputs', async () => {
    // symbolic dims other than the batch and the sequence cannot size a cache;
    // an input with an initializer is not an input
    const text =
      '<ir_version: 10, opset_import: ["" : 18]>' +
      'g (float[B,2,S,4] k, float16[B,3,S,5] v, float[B,H,S,4] h, float[1,1,1,1] w)' +
      ' => (float[B,2,T,4] pk, float16[B,3,T,5] pv, float[B,H,T,4] ph, float[1,1,1,1] pw)' +
      ' <float[1,1,1,1] w = {1}>' +
      '{ pk = Identity(k) pv = Identity(v) ph = Identity(h) pw = Identity(w) }';
    const bytes = await ol.parseModel(text);
    const session = await ol.InferenceSession.create(bytes);
    assert.deepEqual(session.inputNames, ['k', 'v', 'h']);
    await session.release();
    const symbolic = await ol.bindPersistent(bytes, { k: 'pk', h: 'ph' });
    await assert.rejects(ol.emptyCaches(symbolic), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /symbolic \('H'\)/.test(e.message));
    const bound = await ol.bindPersistent(bytes, { k: 'pk', v: 'pv' });
    const caches = await ol.emptyCaches(bound, { batch: 3 });
    assert.deepEqual(Object.keys(caches), ['k', 'v']);
    assert.deepEqual([caches.k.type, caches.k.dims], ['float32', [3, 2, 0, 4]]);
    assert.deepEqual([caches.v.type, caches.v.dims], ['float16', [3, 3, 0, 5]]);
    const proto = fromBinary(ModelProtoSchema, bound);
    proto.graph.persistentBindings.push({ $typeName: 'onnx.PersistentBindingProto', inputName: 'w', outputName: 'pw' });
    const initialized = toBinary(ModelProtoSchema, create(ModelProtoSchema, proto));
    await assert.rejects(ol.emptyCaches(initialized), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /'w' is not a tensor/.test(e.message));
    // the bound bytes are the canonical serialization of the bound model
    assert.deepEqual(toBinary(ModelProtoSchema, fromBinary(ModelProtoSchema, bound)), bound);
  });

  test('bindCache binds past_key_values.i.* <- present.i.*; emptyCaches sizes [batch, heads, 0, head]', async () => {
    const { FORTUNES } = await import('./models.mjs');
    const bound = await ol.bindCache(FORTUNES);
    const session = await ol.InferenceSession.create(bound);
    assert.equal(session.persistentBindings.length, 8);
    assert.ok(session.persistentBindings.every((b) => b.output === b.input.replace('past_key_values.', 'present.')));
    const caches = await ol.emptyCaches(bound, { batch: 2 });
    assert.equal(Object.keys(caches).length, 8);
    const key = caches['past_key_values.0.key'];
    assert.equal(key.type, 'float32');
    assert.equal(key.dims[0], 2);
    assert.equal(key.dims[2], 0);
    assert.equal(key.dims[3], 32);
    // the unbound model: caches from the past_key_values.* names
    assert.deepEqual(Object.keys(await ol.emptyCaches(FORTUNES)).sort(), Object.keys(caches).sort());
    await session.release();
  });
});

describe("PersistentValueState: the seed's four-token decode table", () => {
  // Dk = Dv = 2 and a capacity of 4 tokens reproduce the seed's table:
  // token 1 allocates 2 buffers of 32 bytes (64), every token appends 16 bytes
  // (4 * (Dk + Dv)) and copies no prefix, tokens 2-4 reuse both buffers;
  // retained logical bytes grow by 16 per token.
  test('counters per token match the table', async () => {
    const D = 2;
    const text =
      '<ir_version: 10, opset_import: ["" : 23]>' +
      `attn (float[1,2,1,${D}] q, float[1,1,1,${D}] k, float[1,1,1,${D}] v, float[1,1,L,${D}] past_key, float[1,1,L,${D}] past_value)` +
      ` => (float[1,2,1,${D}] y, float[1,1,M,${D}] present_key, float[1,1,M,${D}] present_value)` +
      '{ y, present_key, present_value = Attention(q, k, v, , past_key, past_value) }';
    const model = await ol.bindPersistent(await ol.parseModel(text), { past_key: 'present_key', past_value: 'present_value' });
    const empty = { past_key: new Tensor('float32', new Float32Array(0), [1, 1, 0, D]), past_value: new Tensor('float32', new Float32Array(0), [1, 1, 0, D]) };
    const state = await PersistentValueState.create(model, empty, { events: true, persistentTensorInitialCapacity: 4 });
    const sum = (events, field) => events.reduce((s, e) => s + e[field], 0);
    const rows = [];
    for (let t = 0; t < 4; t++) {
      state.clearEvents();
      const feeds = {
        q: { data: Float32Array.from({ length: 2 * D }, (_, i) => Math.cos(t + i)), dims: [1, 2, 1, D] },
        k: { data: Float32Array.from({ length: D }, (_, i) => t + i), dims: [1, 1, 1, D] },
        v: { data: Float32Array.from({ length: D }, (_, i) => t - i), dims: [1, 1, 1, D] },
      };
      const out = await state.run(feeds);
      const events = state.events();
      const values = state.values;
      rows.push({
        retainedLogicalBytes: values.past_key.data.byteLength + values.past_value.data.byteLength,
        allocations: sum(events, 'storageAllocations'),
        allocatedBytes: sum(events, 'storageAllocatedBytes'),
        prefixCopiedBytes: sum(events, 'storagePrefixCopiedBytes'),
        appendCopiedBytes: sum(events, 'storageAppendCopiedBytes'),
        reuseCount: sum(events, 'storageReuseCount'),
      });
      assert.equal(values.past_key.wasmByteOffset, out.present_key.wasmByteOffset);
      for (const v of [...Object.values(values), ...Object.values(out)]) v.dispose();
    }
    assert.deepEqual(rows, [
      { retainedLogicalBytes: 16, allocations: 2, allocatedBytes: 64, prefixCopiedBytes: 0, appendCopiedBytes: 16, reuseCount: 0 },
      { retainedLogicalBytes: 32, allocations: 0, allocatedBytes: 0, prefixCopiedBytes: 0, appendCopiedBytes: 16, reuseCount: 2 },
      { retainedLogicalBytes: 48, allocations: 0, allocatedBytes: 0, prefixCopiedBytes: 0, appendCopiedBytes: 16, reuseCount: 2 },
      { retainedLogicalBytes: 64, allocations: 0, allocatedBytes: 0, prefixCopiedBytes: 0, appendCopiedBytes: 16, reuseCount: 2 },
    ]);
    await state.close();
  });
});

describe('PersistentValueState: Attention K/V append and storage events', () => {
  const D = 4;
  const Dv = 2;
  const text =
    '<ir_version: 10, opset_import: ["" : 23]>' +
    `attn (float[1,2,1,${D}] q, float[1,1,1,${D}] k, float[1,1,1,${Dv}] v, float[1,1,L,${D}] past_key, float[1,1,L,${Dv}] past_value)` +
    ` => (float[1,2,1,${Dv}] y, float[1,1,M,${D}] present_key, float[1,1,M,${Dv}] present_value)` +
    '{ y, present_key, present_value = Attention(q, k, v, , past_key, past_value) }';
  const empty = () => ({
    past_key: new Tensor('float32', new Float32Array(0), [1, 1, 0, D]),
    past_value: new Tensor('float32', new Float32Array(0), [1, 1, 0, Dv]),
  });
  const token = (t) => ({
    q: { data: Float32Array.from({ length: 2 * D }, (_, i) => Math.sin(t + i)), dims: [1, 2, 1, D] },
    k: { data: Float32Array.from({ length: D }, (_, i) => t + i / 8), dims: [1, 1, 1, D] },
    v: { data: Float32Array.from({ length: Dv }, (_, i) => t - i), dims: [1, 1, 1, Dv] },
  });
  const sum = (events, field) => events.reduce((s, e) => s + e[field], 0);

  test('one token appends 4*(Dk+Dv) bytes, copies no prefix and reuses capacity', async () => {
    const model = await ol.bindPersistent(await ol.parseModel(text), { past_key: 'present_key', past_value: 'present_value' });
    const state = await PersistentValueState.create(model, empty(), { events: true, persistentTensorInitialCapacity: 4 });
    const rows = [];
    for (let i = 0; i < 6; i++) {
      state.clearEvents();
      const out = await state.run(token(i), ['y']);
      out.y.dispose();
      const events = state.events();
      assert.ok(events.every((e) => e.action === 'persistentStorage' && e.opType === 'Attention'));
      rows.push({
        allocations: sum(events, 'storageAllocations'),
        prefix: sum(events, 'storagePrefixCopiedBytes'),
        append: sum(events, 'storageAppendCopiedBytes'),
        reuse: sum(events, 'storageReuseCount'),
      });
    }
    const append = 4 * (D + Dv);
    assert.deepEqual(rows[0], { allocations: 2, prefix: 0, append, reuse: 0 });
    for (const i of [1, 2, 3]) assert.deepEqual(rows[i], { allocations: 0, prefix: 0, append, reuse: 2 }, `token ${i}`);
    // capacity 4 exhausted: one new buffer per tensor, prefix copied once
    assert.deepEqual(rows[4], { allocations: 2, prefix: 4 * 4 * (D + Dv), append, reuse: 0 });
    assert.deepEqual(rows[5], { allocations: 0, prefix: 0, append, reuse: 2 });
    const { past_key: key, past_value: value } = state.values;
    value.dispose(); // only the key view stays outstanding
    assert.deepEqual(key.dims, [1, 1, 6, D]);
    assert.deepEqual([...key.data.subarray(5 * D)], Array.from({ length: D }, (_, i) => 5 + i / 8));
    // an outstanding view forces a fresh buffer and stays unchanged
    const held = [...key.data];
    state.clearEvents();
    (await state.run(token(6), ['y'])).y.dispose();
    const events = state.events();
    assert.equal(sum(events, 'storageReuseCount'), 1, 'the value cache (not held) is reused');
    assert.equal(sum(events, 'storageAllocations'), 1, 'the held key cache gets a new buffer');
    assert.deepEqual([...key.data], held);
    assert.deepEqual(key.dims, [1, 1, 6, D]);
    key.dispose();
    // events are off by default
    const quiet = await PersistentValueState.create(model, empty());
    (await quiet.run(token(0), ['y'])).y.dispose();
    assert.deepEqual(quiet.events(), []);
    await quiet.close();
    await state.close();
  });
});
