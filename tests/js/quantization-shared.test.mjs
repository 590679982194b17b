// Shared quantization parameter sets from JS: the seed's two-path example
// (3-byte compact payload, saturation of the second input, materialization),
// quantizeTensorShared, dequantizeTensor of compact values with and without
// their model, snapshots outliving the session, and the C rejections.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProto_AttributeType as AttrType,
  EncodedValueProtoSchema,
  ModelProtoSchema,
  StructTypeProtoSchema,
  ValueInfoProtoSchema,
} from 'onnx-light/proto';
import * as ol from 'onnx-light';

import { DataType, tensorInfo } from './models.mjs';

const { OnnxLightError, QuantizationFormat: QF, SharedQuantizedValue, Tensor } = ol;
const failsWith = (code, pattern) => (e) => e instanceof OnnxLightError && e.code === code && pattern.test(e.message);

before(async () => {
  await ol.init();
});

const utf8 = (text) => new TextEncoder().encode(text);

/** The seed's graph: two Quantize nodes sharing "common", one path through Identity. */
async function seedModel() {
  const plan = ol.makeQuantizationPlan(QF.INT4, 4, { blockSize: 4 });
  const storage = ol.makeQuantizationType(plan);
  const storageType = fromBinary(StructTypeProtoSchema, storage);
  const typeAttr = { name: 'type', type: AttrType.TYPE_PROTO, tp: { value: { case: 'structType', value: storageType } } };
  const refAttr = { name: 'parameter_ref', type: AttrType.STRING, s: utf8('common') };
  const nodes = [0, 1].map((i) => ({ opType: 'Quantize', domain: 'ai.rt', input: [`X${i}`], output: [`Q${i}`], attribute: [typeAttr, refAttr] }));
  nodes.push({ opType: 'Identity', input: ['Q1'], output: ['Q1_copy'] });
  ['Q0', 'Q1_copy'].forEach((encoded, i) =>
    nodes.push({ opType: 'Dequantize', domain: 'ai.rt', input: [encoded], output: [`Y${i}`], attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }] }),
  );
  const model = create(ModelProtoSchema, {
    irVersion: 10n,
    opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
    graph: {
      name: 'shared_quantization',
      node: nodes,
      input: [tensorInfo('X0', DataType.FLOAT, [4]), tensorInfo('X1', DataType.FLOAT, [4])],
      output: [tensorInfo('Y0', DataType.FLOAT, [4]), tensorInfo('Y1', DataType.FLOAT, [4])],
    },
  });
  const compact = await ol.addQuantizationParameters(model, 'common', storage, { type: 'float32', dims: [4] }, {
    scales: new Tensor('float32', Float32Array.of(0.5), []),
  });
  model.graph.output.push(create(ValueInfoProtoSchema, { name: 'Q0', type: { value: { case: 'structType', value: compact } } }));
  return { model, compact, storage };
}

describe('shared parameter sets', () => {
  test('seed example: two paths share one scale; the compact Q0 holds 3 bytes', async () => {
    const { model, compact } = await seedModel();
    // the declaration in the root catalogue (wire-facts §3.6)
    const annotation = model.graph.quantizationAnnotation.at(-1);
    assert.equal(annotation.tensorName, 'onnx_light.quantization.parameters:common');
    assert.deepEqual(
      annotation.quantParameterTensorNames.map((e) => [e.key, e.value]),
      ['storage_type', 'logical_type', 'scales'].map((role) => [role, `onnx_light.quantization.parameters:common/${role}`]),
    );
    assert.equal(compact.name, 'onnx_light.quantization.v1/shared/int4');
    // model serialization keeps the declaration, initializers and references
    const loaded = fromBinary(ModelProtoSchema, toBinary(ModelProtoSchema, model));
    const session = await ol.InferenceSession.create(toBinary(ModelProtoSchema, loaded));
    const out = await session.run({
      X0: new Tensor('float32', Float32Array.of(-4, -0.5, 0.5, 3.5), [4]),
      X1: new Tensor('float32', Float32Array.of(-8, -1, 1, 7), [4]),
    });
    await session.release();
    assert.deepEqual(Array.from(out.Y0.data), [-4, -0.5, 0.5, 3.5]);
    // the second input saturates at the range of the shared scale
    assert.deepEqual(Array.from(out.Y1.data), [-4, -1, 1, 3.5]);
    const shared = /** @type {any} */ (out.Q0);
    assert.ok(shared instanceof SharedQuantizedValue);
    assert.equal(shared.parameterRef, 'common');
    assert.equal(shared.rawData.length, 3); // reserved byte plus four INT4 codes, no scale
    assert.deepEqual(Array.from(shared.rawData), [0, 0xf8, 0x71]);
    assert.equal(shared.format, QF.INT4);
    const standalone = ol.materializeQuantizedValue(shared);
    const proto = fromBinary(EncodedValueProtoSchema, standalone.bytes);
    assert.equal(proto.parameterRef, '');
    assert.equal(proto.layout.case, 'structType');
    assert.equal(proto.layout.value?.name, 'onnx_light.quantization.v1/int4');
    // decodes without any model; the source is unchanged
    assert.deepEqual(Array.from(ol.dequantizeTensor(standalone).data), [-4, -0.5, 0.5, 3.5]);
    assert.deepEqual(Array.from(ol.dequantizeTensor(shared).data), [-4, -0.5, 0.5, 3.5]);
    assert.equal(shared.rawData.length, 3);
    // shared.encoded is an independent snapshot; decoding it needs the model
    const snapshot = shared.encoded;
    assert.equal(fromBinary(EncodedValueProtoSchema, snapshot).parameterRef, 'common');
    assert.throws(() => ol.dequantizeTensor(snapshot), failsWith('OL_INVALID_ARGUMENT', /parameter set 'common'/));
    const modelBytes = toBinary(ModelProtoSchema, model);
    assert.deepEqual(Array.from(ol.dequantizeTensor(snapshot, { model: modelBytes }).data), [-4, -0.5, 0.5, 3.5]);
    const restored = await ol.dequantizeTensorProto(fromBinary(EncodedValueProtoSchema, snapshot), { model });
    assert.deepEqual(Array.from(new Float32Array(restored.rawData.slice().buffer)), [-4, -0.5, 0.5, 3.5]);
    const again = ol.materializeQuantizedValue(snapshot, { model: modelBytes });
    assert.deepEqual(again.bytes, standalone.bytes);
    assert.deepEqual(again.dims, [4]);
    shared.dispose();
    assert.throws(() => shared.rawData, failsWith('OL_FAILED_PRECONDITION', /disposed/));
  });

  test('quantizeTensorShared encodes without a graph; the value outlives its model', async () => {
    const { model } = await seedModel();
    const bytes = toBinary(ModelProtoSchema, model);
    const shared = ol.quantizeTensorShared(new Tensor('float32', Float32Array.of(-8, -1, 1, 7), [4]), bytes, 'common');
    assert.equal(shared.parameterRef, 'common');
    assert.deepEqual(Array.from(shared.rawData), [0, 0xe8, 0x72]); // codes -8, -2, 2, 7: saturated
    assert.deepEqual(Array.from(ol.dequantizeTensor(shared).data), [-4, -1, 1, 3.5]);
    // the model object is accepted too (the protobuf modules are loaded)
    const fromObject = ol.quantizeTensorShared(new Tensor('float32', Float32Array.of(1, 1, 1, 1), [4]), model, 'common');
    assert.deepEqual(Array.from(ol.dequantizeTensor(fromObject).data), [1, 1, 1, 1]);
    assert.throws(() => ol.quantizeTensorShared(new Tensor('float32', new Float32Array(8), [8]), bytes, 'common'),
      failsWith('OL_INVALID_ARGUMENT', /'common'/));
    assert.throws(() => ol.quantizeTensorShared(new Tensor('float32', new Float32Array(4), [4]), bytes, 'other'),
      failsWith('OL_INVALID_ARGUMENT', /does not declare the quantization parameter set 'other'/));
  });

  test('compact encoded initializers run in sessions and are checked against their set', async () => {
    const { model } = await seedModel();
    const weights = ol.quantizeTensorShared(new Tensor('float32', Float32Array.of(0.5, 1, 1.5, 2), [4]), model, 'common', { valueName: 'W' });
    const compactProto = fromBinary(EncodedValueProtoSchema, weights.encoded);
    assert.equal(compactProto.name, 'W');
    const withWeights = () => {
      const m = create(ModelProtoSchema, {
        irVersion: 10n,
        opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
        graph: {
          name: 'weights',
          node: [{ opType: 'Dequantize', domain: 'ai.rt', input: ['W'], output: ['Y'], attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }] }],
          output: [tensorInfo('Y', DataType.FLOAT, [4])],
          initializer: model.graph.initializer,
          quantizationAnnotation: model.graph.quantizationAnnotation,
        },
      });
      m.graph.encodedInitializer.push(fromBinary(EncodedValueProtoSchema, weights.encoded));
      return m;
    };
    const session = await ol.InferenceSession.create(toBinary(ModelProtoSchema, withWeights()));
    const { Y } = await session.run({});
    assert.deepEqual(Array.from(Y.data), [0.5, 1, 1.5, 2]);
    await session.release();
    // a truncated payload is rejected when the session starts, naming the initializer
    const truncated = withWeights();
    truncated.graph.encodedInitializer[0].rawData = truncated.graph.encodedInitializer[0].rawData.slice(0, 2);
    await assert.rejects(ol.InferenceSession.create(toBinary(ModelProtoSchema, truncated)),
      failsWith('OL_INVALID_MODEL', /encoded initializer 'W'.*'common'.*2 bytes/));
    // an undeclared set
    const unknown = withWeights();
    unknown.graph.encodedInitializer[0].parameterRef = 'missing';
    await assert.rejects(ol.InferenceSession.create(toBinary(ModelProtoSchema, unknown)),
      failsWith('OL_INVALID_MODEL', /'W' refers to the quantization parameter set 'missing'/));
  });

  test('addQuantizationParameters validates before changing the model', async () => {
    const { model, storage } = await seedModel();
    const initializers = model.graph.initializer.length;
    await assert.rejects(ol.addQuantizationParameters(model, 'common', storage, { type: 'float32', dims: [4] }, { scales: 0.5 }),
      failsWith('OL_INVALID_ARGUMENT', /Duplicate quantization parameter set 'common'/));
    await assert.rejects(ol.addQuantizationParameters(model, 'negative', storage, { type: 'float32', dims: [4] }, { scales: -1 }),
      failsWith('OL_INVALID_ARGUMENT', /'negative'.*scale/));
    await assert.rejects(ol.addQuantizationParameters(model, 'eight', storage, { type: 'float32', dims: [8] }, { scales: 0.5 }),
      failsWith('OL_INVALID_ARGUMENT', /'eight'.*covers 4 values but logical_type has 8/));
    await assert.rejects(ol.addQuantizationParameters(model, 'noscale', storage, { type: 'float32', dims: [4] }, {}),
      failsWith('OL_INVALID_ARGUMENT', /requires fixed scales/));
    await assert.rejects(ol.addQuantizationParameters(model, 'typo', storage, { type: 'float32', dims: [4] }, { scales: 1, zero_points: 0 }),
      failsWith('OL_INVALID_ARGUMENT', /unknown parameter 'zero_points'/));
    assert.equal(model.graph.initializer.length, initializers);
    assert.equal(model.graph.quantizationAnnotation.length, 1);
    // per-block scales and zero points for an unsigned profile
    const gptq = ol.makeQuantizationType(ol.makeQuantizationPlan(QF.GPTQ, 8, { blockSize: 4 }));
    await ol.addQuantizationParameters(model, 'gptq', gptq, { type: 'float32', dims: [8] }, {
      scales: Float32Array.of(0.25, 1),
      zeroPoints: Float32Array.of(8, 7),
    });
    const x = new Tensor('float32', Float32Array.of(0, 0.25, -0.5, 1, 0, 1, -2, 8), [8]);
    const q = ol.quantizeTensorShared(x, model, 'gptq');
    assert.deepEqual(Array.from(ol.dequantizeTensor(q).data), [0, 0.25, -0.5, 1, 0, 1, -2, 8]);
    assert.equal(q.rawData.length, 1 + 2 * 2); // reserved byte + two blocks of four 4-bit codes
  });
});

describe('compact feeds', () => {
  test('a SharedQuantizedValue feeds a struct-typed input with its parameter set', async () => {
    const { model, compact } = await seedModel();
    const consumer = create(ModelProtoSchema, {
      irVersion: 10n,
      opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
      graph: {
        name: 'consumer',
        node: [{ opType: 'Dequantize', domain: 'ai.rt', input: ['Q'], output: ['Y'], attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }] }],
        input: [{ name: 'Q', type: { value: { case: 'structType', value: compact } } }],
        output: [tensorInfo('Y', DataType.FLOAT, [4])],
      },
    });
    const session = await ol.InferenceSession.create(toBinary(ModelProtoSchema, consumer));
    const shared = ol.quantizeTensorShared(new Tensor('float32', Float32Array.of(-1, 0.5, 1, 2), [4]), model, 'common');
    const { Y } = await session.run({ Q: /** @type {any} */ (shared) });
    assert.deepEqual(Array.from(Y.data), [-1, 0.5, 1, 2]);
    await session.release();
  });
});

describe('ORT MatMulNBits sets', () => {
  test('the compact value is B; materializing gives the self-contained ORT value', async () => {
    const weights = new Tensor('float32', Float32Array.from({ length: 40 }, (_, i) => ((i % 7) - 3) * 0.5), [20, 2]);
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 20, 2, { blockSize: 16 });
    plan.setScales(0, new Float64Array(plan.run(0).blocks.length).fill(0.25));
    const reference = ol.quantizeTensor(weights, plan);
    const proto = fromBinary(EncodedValueProtoSchema, reference.bytes);
    const model = create(ModelProtoSchema, { irVersion: 10n, graph: { name: 'ort' } });
    const compact = await ol.addQuantizationParameters(model, 'ort', /** @type {any} */ (proto.layout.value), proto.logicalType, { scales: 0.25 });
    assert.equal(compact.name, 'onnx_light.quantization.v1/shared/ort_matmulnbits_int4');
    const shared = ol.quantizeTensorShared(weights, model, 'ort');
    assert.equal(shared.rawData.length, 2 * 2 * 8); // N * ceil(K / 16) * 16 * 4 / 8: B only
    assert.deepEqual(shared.rawData, proto.rawData.slice(0, 32));
    assert.deepEqual(fromBinary(EncodedValueProtoSchema, ol.materializeQuantizedValue(shared).bytes).rawData, proto.rawData);
    assert.deepEqual(Array.from(ol.dequantizeTensor(shared).data), Array.from(ol.dequantizeTensor(reference).data));
    // zero points that change the zero-point storage do not fit this descriptor
    await assert.rejects(ol.addQuantizationParameters(model, 'ort2', /** @type {any} */ (proto.layout.value), proto.logicalType, { scales: 0.25, zeroPoints: 3 }),
      failsWith('OL_INVALID_ARGUMENT', /'ort2'.*zero-point storage/));
  });
});

describe('persistent compact values', () => {
  test('a PersistentValueState retains a SharedQuantizedValue with its parameter set', async () => {
    const { model, compact } = await seedModel();
    const stateModel = create(ModelProtoSchema, {
      irVersion: 10n,
      opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
      graph: {
        name: 'state',
        node: [
          { opType: 'Identity', input: ['past'], output: ['C'] },
          { opType: 'Identity', input: ['C'], output: ['present'] },
          { opType: 'Dequantize', domain: 'ai.rt', input: ['C'], output: ['Y'], attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }] },
        ],
        input: [{ name: 'past', type: { value: { case: 'structType', value: compact } } }],
        output: [tensorInfo('Y', DataType.FLOAT, [4]), { name: 'present', type: { value: { case: 'structType', value: compact } } }],
        initializer: model.graph.initializer,
        quantizationAnnotation: model.graph.quantizationAnnotation,
        persistentBindings: [{ inputName: 'past', outputName: 'present' }],
      },
    });
    const shared = ol.quantizeTensorShared(new Tensor('float32', Float32Array.of(-1, 0.5, 1, 2), [4]), model, 'common');
    const state = await ol.PersistentValueState.create(toBinary(ModelProtoSchema, stateModel), { past: shared });
    const out = await state.run({});
    assert.deepEqual(Array.from(/** @type {any} */ (out.Y).data), [-1, 0.5, 1, 2]);
    const kept = /** @type {any} */ (state.values.past);
    assert.ok(kept instanceof SharedQuantizedValue);
    assert.equal(kept.parameterRef, 'common');
    await state.close();
    shared.dispose();
    // the retained value outlives the state and the value it came from
    assert.deepEqual(Array.from(ol.dequantizeTensor(kept).data), [-1, 0.5, 1, 2]);
    // a bare compact EncodedValue resolves parameter_ref against the state's model
    const bare = new ol.EncodedValue(kept.encoded, 'float32', [4], QF.INT4);
    const again = await ol.PersistentValueState.create(toBinary(ModelProtoSchema, stateModel), { past: bare });
    assert.deepEqual(Array.from(/** @type {any} */ ((await again.run({})).Y).data), [-1, 0.5, 1, 2]);
    assert.ok(again.values.past instanceof SharedQuantizedValue);
    await again.reset({ past: bare });
    // ... and must name a set that model declares
    const proto = fromBinary(EncodedValueProtoSchema, kept.encoded);
    proto.parameterRef = 'missing';
    const stranger = new ol.EncodedValue(toBinary(EncodedValueProtoSchema, proto), 'float32', [4], QF.INT4);
    await assert.rejects(again.reset({ past: stranger }),
      failsWith('OL_INVALID_ARGUMENT', /parameter set 'missing', which the model does not declare/));
    await again.close();
    // sessions resolve compact feeds the same way
    const session = await ol.InferenceSession.create(toBinary(ModelProtoSchema, stateModel));
    const { Y } = await session.run({ past: bare });
    assert.deepEqual(Array.from(/** @type {any} */ (Y).data), [-1, 0.5, 1, 2]);
    await assert.rejects(session.run({ past: stranger }), failsWith('OL_INVALID_ARGUMENT', /'missing'/));
    await session.release();
  });
});
