// Structured persistent values through JS: named structs (plain objects),
// typed sequences (arrays, empty ones too) and encoded values (EncodedValue)
// retained whole, read back as the same JS shapes, zero-copy by wasm address;
// mismatches rejected with the offending field named.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';
import { DataType, makeModel, tensorInfo } from './models.mjs';

const { OnnxLightError, PersistentValueState, Tensor } = ol;
const isCode = (code, text) => (e) => e instanceof OnnxLightError && e.code === code && (!text || e.message.includes(text));
const f32 = (values, dims) => new Tensor('float32', Float32Array.from(values), dims);
const i64 = (values) => new Tensor('int64', BigInt64Array.from(values, BigInt), [values.length]);

const tensorType = (elemType, dims) => tensorInfo('', elemType, dims).type;
const field = (name, type) => ({ name, content: { case: 'type', value: type } });
/** struct { key: float[1, N, 4]; blocks: sequence(float[2]) } */
const cacheType = () => ({
  value: {
    case: 'structType',
    value: {
      name: 'cache',
      kind: {
        case: 'structure',
        value: {
          field: [
            field('key', tensorType(DataType.FLOAT, [1, 'N', 4])),
            field('blocks', { value: { case: 'sequenceType', value: { elemType: tensorType(DataType.FLOAT, [2]) } } }),
          ],
        },
      },
    },
  },
});

/** next_cache = Identity(cache), echo = Identity(tokens); cache typed by `type()`. */
function passModel(type, tensorDims) {
  const info = (name) => (type ? { name, type: type() } : tensorInfo(name, DataType.FLOAT, tensorDims));
  return makeModel({
    nodes: [
      { opType: 'Identity', input: ['cache'], output: ['next_cache'], name: 'keep' },
      { opType: 'Identity', input: ['tokens'], output: ['echo'], name: 'echo' },
    ],
    inputs: [info('cache'), tensorInfo('tokens', DataType.INT64, [1])],
    outputs: [info('next_cache'), tensorInfo('echo', DataType.INT64, [1])],
  });
}

describe('PersistentValueState: structured values in JS', () => {
  test('a named struct with a sequence field is retained whole and read back as an object', async () => {
    const model = await ol.bindPersistent(passModel(cacheType), { cache: 'next_cache' });
    const initial = { key: f32([1, 2, 3, 4, 5, 6, 7, 8], [1, 2, 4]), blocks: [f32([1, 2], [2]), f32([3, 4], [2])] };
    const state = await PersistentValueState.create(model, { cache: initial });
    const out = await state.run({ tokens: i64([7]) });
    const cache = out.next_cache;
    assert.deepEqual(Object.keys(cache), ['key', 'blocks']);
    assert.deepEqual(cache.key.dims, [1, 2, 4]);
    assert.deepEqual([...cache.key.data], [1, 2, 3, 4, 5, 6, 7, 8]);
    assert.equal(cache.blocks.length, 2);
    assert.deepEqual([...cache.blocks[1].data], [3, 4]);
    const values = state.values.cache;
    assert.equal(values.key.wasmByteOffset, cache.key.wasmByteOffset, 'retained and returned views share the buffer');
    assert.equal(values.blocks[0].wasmByteOffset, cache.blocks[0].wasmByteOffset);
    // an empty sequence field is a valid state
    await state.reset({ cache: { key: f32([], [1, 0, 4]), blocks: [] } });
    assert.deepEqual(state.values.cache.blocks, []);
    assert.deepEqual(state.values.cache.key.dims, [1, 0, 4]);
    await state.close();
  });

  test('struct mismatches are rejected with the field named and leave the state unchanged', async () => {
    const model = await ol.bindPersistent(passModel(cacheType), { cache: 'next_cache' });
    const good = { key: f32([1, 2, 3, 4], [1, 1, 4]), blocks: [] };
    const state = await PersistentValueState.create(model, { cache: good });
    const before = state.values.cache.key.wasmByteOffset;
    await assert.rejects(
      state.reset({ cache: { key: f32([1, 2, 3], [1, 1, 3]), blocks: [] } }),
      isCode('OL_INVALID_ARGUMENT', "field 'key': dimension 2 must be 4"),
    );
    await assert.rejects(state.reset({ cache: { blocks: [], key: good.key } }), isCode('OL_INVALID_ARGUMENT', "struct field 0 is 'blocks', expected 'key'"));
    await assert.rejects(
      state.reset({ cache: { key: good.key, blocks: [f32([1, 2, 3], [3])] } }),
      isCode('OL_INVALID_ARGUMENT', "field 'blocks'[0]"),
    );
    await assert.rejects(state.reset({ cache: { key: good.key, blocks: [1, 2] } }), isCode('OL_INVALID_ARGUMENT', "'cache.blocks[0]' is not a Tensor"));
    await assert.rejects(state.reset({ cache: f32([1, 2], [2]) }), isCode('OL_INVALID_ARGUMENT', 'expected a struct, got a tensor'));
    assert.equal(state.values.cache.key.wasmByteOffset, before);
    await state.close();
  });

  test('ordinary sessions accept struct feeds and return struct outputs', async () => {
    const session = await ol.InferenceSession.create(passModel(cacheType));
    const out = await session.run({ cache: { key: f32([1, 2, 3, 4], [1, 1, 4]), blocks: [f32([5, 6], [2])] }, tokens: i64([1]) });
    assert.deepEqual([...out.next_cache.blocks[0].data], [5, 6]);
    assert.deepEqual([...out.echo.data], [1n]);
    await session.release();
  });

  test('an encoded value is retained without decoding and read back as an EncodedValue', async () => {
    const model = await ol.bindPersistent(passModel(null, ['N', 2]), { cache: 'next_cache' });
    const plan = ol.makeQuantizationPlan(ol.QuantizationFormat.INT8, 6, { blockSize: 32 });
    const weights = f32([0.5, -1, 0.25, 2, -0.75, 1.5], [3, 2]);
    ol.calibrateQuantizationPlan(plan, weights);
    const encoded = ol.quantizeTensor(weights, plan);
    const state = await PersistentValueState.create(model, { cache: encoded });
    const out = await state.run({ tokens: i64([3]) });
    const back = out.next_cache;
    assert.ok(back instanceof ol.EncodedValue);
    assert.deepEqual([...back.bytes], [...encoded.bytes], 'the same EncodedValueProto bytes');
    assert.equal(back.type, 'float32');
    assert.deepEqual(back.dims, [3, 2]);
    assert.equal(back.format, ol.QuantizationFormat.INT8);
    assert.deepEqual([...ol.dequantizeTensor(back).data], [...ol.dequantizeTensor(encoded).data]);
    assert.ok(state.values.cache instanceof ol.EncodedValue);
    // the logical type is checked against the declaration without decoding
    const wide = ol.quantizeTensor(f32([1, 2, 3, 4, 5, 6], [2, 3]), plan);
    await assert.rejects(state.reset({ cache: wide }), isCode('OL_INVALID_ARGUMENT', 'encoded value: logical type: dimension 1 must be 2'));
    await assert.rejects(
      state.reset({ cache: new ol.EncodedValue(new Uint8Array([0xff, 0xff]), 'float32', [1], null) }),
      isCode('OL_INVALID_ARGUMENT', 'not a serialized EncodedValueProto'),
    );
    plan.dispose();
    await state.close();
  });
});
