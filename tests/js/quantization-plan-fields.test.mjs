// Seed 003 plan fields assigned the way the seed writes them (transformSize,
// forward, inverse, the live matrixShape view), name / doc_string presence
// through the proto conversions, and tensors marked EXTERNAL whose raw_data
// is loaded. Every rule and error case gets a test that triggers it.
import assert from 'node:assert/strict';
import { inspect } from 'node:util';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { DataType } from './models.mjs';

const { OnnxLightError, QuantizationFormat: QF, Tensor } = ol;
const invalid = (pattern) => (e) => e instanceof OnnxLightError && e.code === 'OL_INVALID_ARGUMENT' && pattern.test(e.message);

await ol.init();

const { clearField, clone, create, fromBinary, isFieldSet, toBinary } = await import('@bufbuild/protobuf');
const { EncodedValueProtoSchema, TensorProtoSchema, TensorProto_DataLocation } = await import('onnx-light/proto');

const h = Math.SQRT1_2;
const rotation = [h, h, h, -h];
const weights = Float32Array.from({ length: 16 }, (_, i) => -1 + (2 * i) / 15); // linspace(-1, 1, 16)
const x = new Tensor('float32', weights, [4, 4]);

describe('transformSize, forward and inverse assigned field by field', () => {
  for (const [name, format, forward, inverse] of [
    ['QUAROT', QF.QUAROT, rotation, rotation],
    ['SMOOTHQUANT', QF.SMOOTHQUANT, [2, 0, 0, 0.5], [0.5, 0, 0, 2]],
  ]) {
    test(`${name} (seed catalogue row): the assignments configure the plan and encode`, () => {
      const plan = ol.makeQuantizationPlan(format, weights.length);
      plan.transformSize = 2;
      plan.forward = forward;
      plan.inverse = inverse;
      plan.setScales(0, [0.25]);
      assert.equal(plan.transformSize, 2);
      assert.deepEqual(plan.forward, forward);
      assert.deepEqual(plan.inverse, inverse);
      const restored = ol.dequantizeTensor(ol.quantizeTensor(x, plan)).data;
      // the same plan through setTransform gives the same bytes
      const other = ol.makeQuantizationPlan(format, weights.length);
      other.setTransform(2, forward, inverse);
      other.setScales(0, [0.25]);
      assert.deepEqual(ol.quantizeTensor(x, other).bytes, ol.quantizeTensor(x, plan).bytes);
      for (let i = 0; i < weights.length; i++) assert.ok(Math.abs(restored[i] - weights[i]) <= 0.5, `element ${i}`);
    });
  }

  test('transformSize must be an integer in [0, 2^32)', () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 16);
    for (const size of [-1, 1.5, '2', 2 ** 32, NaN]) {
      assert.throws(() => (plan.transformSize = size), invalid(/plan\.transformSize: expected an integer in \[0, 2\^32\)/), String(size));
    }
    assert.equal(plan.transformSize, 0);
  });

  test('a nonzero transformSize must divide the element count', () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 16);
    assert.throws(() => (plan.transformSize = 3), invalid(/transform_size 3 must divide the plan's 16 elements/));
    assert.equal(plan.transformSize, 0, 'unchanged');
    plan.transformSize = 4;
    assert.equal(plan.transformSize, 4);
  });

  test('ORT MatMulNBits plans take no transform', () => {
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 32, 2, { blockSize: 16 });
    assert.throws(() => (plan.transformSize = 2), invalid(/ORT MatMulNBits profile 'ort_matmulnbits_int4' takes no transform/));
    plan.transformSize = 0; // the identity is fine
    assert.equal(plan.transformSize, 0);
  });

  test('forward / inverse must hold transformSize^2 values: set the size first', () => {
    const plan = ol.makeQuantizationPlan(QF.QUAROT, 16);
    assert.throws(() => (plan.forward = rotation), invalid(/forward must hold transform_size\^2 = 0 values \(transform_size 0\), got 4; set transform_size first/));
    plan.transformSize = 2;
    assert.throws(() => (plan.forward = [1, 0, 0]), invalid(/forward must hold transform_size\^2 = 4 values \(transform_size 2\), got 3/));
    assert.throws(() => (plan.inverse = [1, 0, 0, 1, 0]), invalid(/inverse must hold transform_size\^2 = 4 values \(transform_size 2\), got 5/));
    assert.deepEqual(plan.forward, [], 'rejected assignments leave the plan unchanged');
  });

  test('matrix values must be finite numbers', () => {
    const plan = ol.makeQuantizationPlan(QF.QUAROT, 16);
    plan.transformSize = 2;
    assert.throws(() => (plan.forward = [1, 0, NaN, 1]), invalid(/forward value 2 is not finite/));
    assert.throws(() => (plan.inverse = [Infinity, 0, 0, 1]), invalid(/inverse value 0 is not finite/));
    assert.throws(() => (plan.forward = [1, 0, '0', 1]), invalid(/plan\.forward: expected numbers/));
  });

  test('a new size drops matrices of the old size; the same size keeps them; 0 disables', () => {
    const plan = ol.makeQuantizationPlan(QF.QUAROT, 16);
    plan.setScales(0, [0.25]);
    plan.transformSize = 2;
    plan.forward = rotation;
    plan.inverse = rotation;
    plan.transformSize = 2;
    assert.deepEqual(plan.forward, rotation, 'reassigning the same size keeps fitting matrices');
    plan.transformSize = 4;
    assert.deepEqual([plan.forward, plan.inverse], [[], []], 'matrices of the old size are dropped');
    assert.throws(() => ol.quantizeTensor(x, plan), invalid(/Transform matrices must be square \(4 x 4\)/), 'never encoded with a stale matrix');
    plan.transformSize = 0;
    assert.throws(() => ol.quantizeTensor(x, plan), invalid(/The profile 'quarot' requires explicit forward\/inverse transforms/));
  });

  test('forward and inverse must be inverse of each other (checked when encoding, in either assignment order)', () => {
    const plan = ol.makeQuantizationPlan(QF.SMOOTHQUANT, 16);
    plan.transformSize = 2;
    plan.inverse = [0.5, 0, 0, 2]; // inverse first is allowed
    plan.forward = [2, 0, 0, 1];
    assert.throws(() => ol.quantizeTensor(x, plan), invalid(/must be inverse matrices \(forward x inverse \[1\]\[1\] = 2\)/));
    plan.forward = [2, 0, 0, 0.5];
    assert.equal(ol.quantizeTensor(x, plan).format, QF.SMOOTHQUANT);
  });
});

describe('matrixShape is a live view', () => {
  test('assigning an element changes the plan; blocks are not rebuilt, the geometry is checked when encoding', () => {
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 32, 2, { blockSize: 16 });
    const view = plan.matrixShape;
    assert.equal(view.length, 2);
    assert.deepEqual([...view], [32, 2]);
    const blocks = plan.run(0).blocks.length;
    plan.matrixShape[0] = 64;
    assert.deepEqual([...plan.matrixShape], [64, 2], 'the change took effect');
    assert.deepEqual([...view], [64, 2], 'an earlier view sees it too');
    assert.equal(view[0], 64);
    assert.equal(plan.run(0).blocks.length, blocks, 'blocks are not rebuilt');
    const tall = new Tensor('float32', new Float32Array(64 * 2), [64, 2]);
    assert.throws(() => ol.quantizeTensor(tall, plan), (e) => e instanceof OnnxLightError, 'incompatible geometry is rejected when encoding');
    view[0] = 32;
    assert.deepEqual(Array.from(ol.dequantizeTensor(ol.quantizeTensor(new Tensor('float32', new Float32Array(64), [32, 2]), plan)).data), new Array(64).fill(0));
    assert.deepEqual(Array.from(view), [32, 2]);
    assert.deepEqual(view, [32, 2]);
    assert.equal(inspect(view), '[ 32, 2 ]', 'printed with the live dims');
    assert.deepEqual(Object.keys(view), ['0', '1']);
    assert.equal(view.join('x'), '32x2');
  });

  test('element assignments are validated', () => {
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT8, 32, 2, { blockSize: 16 });
    const view = plan.matrixShape;
    assert.throws(() => (view[1] = -1), invalid(/plan\.matrixShape: dimensions must be non-negative integers/));
    assert.throws(() => (view[1] = 2.5), invalid(/non-negative integers/));
    assert.throws(() => (view[2] = 4), invalid(/plan\.matrixShape\[2\]: index out of range for a shape of 2 dimensions/));
    assert.throws(() => (view.length = 3), invalid(/only elements can be assigned, not 'length'/));
    assert.throws(() => delete view[0], invalid(/dimensions cannot be deleted/));
    assert.deepEqual([...view], [32, 2], 'rejected assignments change nothing');
  });

  test('portable plans have an empty shape whose elements cannot be assigned; the whole shape still can', () => {
    const plan = ol.makeQuantizationPlan(QF.INT4, 8);
    assert.equal(plan.matrixShape.length, 0);
    assert.throws(() => (plan.matrixShape[0] = 4), invalid(/index out of range for a shape of 0 dimensions \(assign plan\.matrixShape = \[K, N\]\)/));
    plan.matrixShape = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 16, 4, { blockSize: 16 }).matrixShape; // copies a view
    assert.deepEqual([...plan.matrixShape], [16, 4]);
    assert.throws(() => ol.quantizeTensor(new Tensor('float32', new Float32Array(8), [8]), plan), invalid(/Only ORT MatMulNBits profiles accept a matrix_shape/));
  });

  test('a view of a disposed plan throws instead of reading freed memory', () => {
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 16, 1, { blockSize: 16 });
    const view = plan.matrixShape;
    plan.dispose();
    assert.throws(() => view[0], (e) => e instanceof OnnxLightError && /disposed/.test(e.message));
  });
});

describe('formats are members everywhere', () => {
  test('encoded values and plans report members', () => {
    const plan = ol.makeQuantizationPlan(QF.NF4, 16);
    assert.equal(plan.format, QF.NF4);
    assert.equal(ol.quantizeTensor(x, plan).format, QF.NF4);
  });
});

/** A FLOAT TensorProto of weights with the given optional fields. */
function tensorProto(fields) {
  return create(TensorProtoSchema, { dims: [4n, 4n], dataType: DataType.FLOAT, floatData: Array.from(weights), ...fields });
}

describe('name and doc_string presence is kept independently', () => {
  const presence = (schema, message) => ({
    name: isFieldSet(message, schema.field.name) ? message.name : undefined,
    docString: isFieldSet(message, schema.field.docString) ? message.docString : undefined,
  });
  for (const fields of [{}, { name: '' }, { docString: '' }, { name: '', docString: '' }, { name: 'w', docString: 'd' }, { name: 'w' }, { docString: 'only doc' }]) {
    test(`TensorProto ${JSON.stringify(fields)} -> EncodedValueProto -> bytes -> TensorProto`, async () => {
      const plan = ol.makeQuantizationPlan(QF.INT8, 16);
      const expected = { name: fields.name, docString: fields.docString };
      const encoded = await ol.quantizeTensorProto(tensorProto(fields), plan);
      assert.deepEqual(presence(EncodedValueProtoSchema, encoded), expected, 'encoded');
      const parsed = fromBinary(EncodedValueProtoSchema, toBinary(EncodedValueProtoSchema, encoded));
      assert.deepEqual(presence(EncodedValueProtoSchema, parsed), expected, 'serialized and parsed');
      const restored = await ol.dequantizeTensorProto(parsed);
      assert.deepEqual(presence(TensorProtoSchema, restored), expected, 'decoded');
    });
  }
});

describe('tensors marked EXTERNAL', () => {
  const location = { dataLocation: TensorProto_DataLocation.EXTERNAL, externalData: [{ key: 'location', value: 'weights.bin' }] };
  const raw = new Uint8Array(weights.buffer.slice(0));

  test('a TensorProto is accepted once raw_data is loaded; its metadata is not changed', async () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 16);
    const loaded = create(TensorProtoSchema, { name: 'w', dims: [4n, 4n], dataType: DataType.FLOAT, rawData: raw, ...location });
    const before = toBinary(TensorProtoSchema, loaded);
    const encoded = await ol.quantizeTensorProto(loaded, plan);
    const plain = await ol.quantizeTensorProto(tensorProto({ name: 'w' }), plan);
    assert.deepEqual(encoded.rawData, plain.rawData, 'encodes the loaded bytes');
    assert.deepEqual(toBinary(TensorProtoSchema, loaded), before);
    assert.equal(loaded.dataLocation, TensorProto_DataLocation.EXTERNAL);
  });

  test('a TensorProto marked EXTERNAL without raw_data is rejected: load it first', async () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 16);
    const unloaded = create(TensorProtoSchema, { name: 'w', dims: [4n, 4n], dataType: DataType.FLOAT, ...location });
    await assert.rejects(ol.quantizeTensorProto(unloaded, plan), invalid(/tensor 'w' has external data \(load it first\)/));
    const entriesOnly = create(TensorProtoSchema, { name: 'w', dims: [4n, 4n], dataType: DataType.FLOAT, externalData: location.externalData });
    await assert.rejects(ol.quantizeTensorProto(entriesOnly, plan), invalid(/load it first/));
  });

  test('an EncodedValueProto is decoded once raw_data is loaded, and rejected before', async () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 16);
    const encoded = await ol.quantizeTensorProto(tensorProto({ name: 'w' }), plan);
    const marked = clone(EncodedValueProtoSchema, encoded);
    marked.dataLocation = location.dataLocation;
    marked.externalData = create(TensorProtoSchema, location).externalData;
    const restored = await ol.dequantizeTensorProto(marked);
    assert.deepEqual(restored.rawData, (await ol.dequantizeTensorProto(encoded)).rawData);
    assert.equal(marked.dataLocation, TensorProto_DataLocation.EXTERNAL, 'metadata unchanged');
    const unloaded = clone(EncodedValueProtoSchema, marked);
    clearField(unloaded, EncodedValueProtoSchema.field.rawData);
    await assert.rejects(ol.dequantizeTensorProto(unloaded), invalid(/Load external encoded data before dequantization/));
  });
});
