// quantizeModel (the `onnx-light quantize` conversion, edited through the
// GraphBuilder) on a small model, against expectations computed here from
// the same plans: the node list keeps its order (MatMulNBits replaces its
// MatMul in place; portable Dequantize nodes come first), the new payloads
// are the codec's bytes, float weights go unless something else reads them,
// and the parts the conversion does not touch come back unchanged (a
// weight with external data stays external and unquantized, an existing
// encoded initializer stays encoded, the opset is imported once).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { create, equals, toBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType as AttrType, EncodedValueProtoSchema, ModelProtoSchema, NodeProtoSchema, TensorProtoSchema } from 'onnx-light/proto';
import * as ol from 'onnx-light';

import { quantizeModel } from '../../dist/quantize-model.js';
import { DataType } from './models.mjs';

const { GraphBuilder, QuantizationFormat, Tensor } = ol;

const values = (count, seed) => Float32Array.from({ length: count }, (_, i) => Math.sin(i * seed) / 2);
const floatInit = (name, dims, data) => ({ name, dims: dims.map(BigInt), dataType: DataType.FLOAT, rawData: new Uint8Array(data.buffer.slice(0)) });
const node = (opType, input, output, extra = {}) => ({ opType, input, output, ...extra });
const dequantize = (input, output, name = '') => node('Dequantize', [input], [output], { name, domain: 'ai.rt', attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }] });

const W1 = values(64 * 32, 0.37);
const W2 = values(32 * 16, 0.11);
const E = values(8, 0.9);
const EXTERNAL = {
  name: 'Wext',
  dims: [16n, 8n],
  dataType: DataType.FLOAT,
  dataLocation: 1,
  externalData: [{ key: 'location', value: 'weights.bin' }, { key: 'offset', value: '0' }, { key: 'length', value: '512' }],
};

/** X[2,64] -> MatMul W1 -> MatMul W2 -> MatMul Wext (external) -> + Dequantize(E); W1 also read by Identity. */
async function sourceModel() {
  const b = await GraphBuilder.create({ opsetImports: [{ domain: '', version: 21 }, { domain: 'ai.rt', version: 1 }] });
  const plan = ol.makeQuantizationPlan(QuantizationFormat.INT8, 8, { blockSize: 8 });
  ol.calibrateQuantizationPlan(plan, new Tensor('float32', E, [8]));
  b.makeStructuredInitializer(ol.quantizeTensor(new Tensor('float32', E, [8]), plan, { name: 'E' }));
  plan.dispose();
  b.addInput(GraphBuilder.tensorInfo('X', 'float32', [2, 64]))
    .addInitializer(floatInit('W1', [64, 32], W1))
    .addInitializer(floatInit('W2', [32, 16], W2))
    .addInitializer(EXTERNAL)
    .addNode(dequantize('E', 'Ef', 'dq_E'))
    .addNode(node('MatMul', ['X', 'W1'], ['H1'], { name: 'mm1' }))
    .addNode(node('MatMul', ['H1', 'W2'], ['H2']))
    .addNode(node('MatMul', ['H2', 'Wext'], ['H3'], { name: 'mm3' }))
    .addNode(node('Add', ['H3', 'Ef'], ['Y'], { name: 'add' }))
    .addNode(node('Identity', ['W1'], ['W1copy'], { name: 'keep' }))
    .addOutput(GraphBuilder.tensorInfo('Y', 'float32'))
    .addOutput(GraphBuilder.tensorInfo('W1copy', 'float32'));
  const model = b.toModel();
  b.dispose();
  return model;
}

/**
 * The source model converted to a QuantizationFormat (its name: the enum is
 * read once the module is loaded) with blocks of 32, two weights replaced and
 * the external one skipped: { source, model }.
 */
async function quantized(format) {
  const source = await sourceModel();
  assert.ok(format in QuantizationFormat, format);
  const result = await quantizeModel(toBinary(ModelProtoSchema, source), { format: QuantizationFormat[format], blockSize: 32 });
  assert.equal(result.replaced, 2);
  assert.deepEqual(result.skipped, ['Wext']);
  const b = await GraphBuilder.fromModel(result.bytes);
  const model = b.toModel();
  b.dispose();
  return { source, model };
}

const attr = (n, name) => Number(n.attribute.find((a) => a.name === name).i);
const byName = (list) => new Map(list.map((t) => [t.name, t]));

describe('quantizeModel through the GraphBuilder', () => {
  test('ORT int4: MatMulNBits in place, codec payloads, used float weights kept', async () => {
    const { source, model } = await quantized('ORT_MATMULNBITS_INT4');
    const g = model.graph;

    assert.deepEqual(g.node.map((n) => [n.name, n.opType, n.domain, n.input.join(','), n.output.join(',')]), [
      ['dq_E', 'Dequantize', 'ai.rt', 'E', 'Ef'],
      ['mm1_MatMulNBits', 'MatMulNBits', 'com.microsoft', 'X,W1_Q,W1_scales' + (g.node[1].input.length === 4 ? ',W1_zero_points' : ''), 'H1'],
      ['', 'MatMulNBits', 'com.microsoft', 'H1,W2_Q,W2_scales' + (g.node[2].input.length === 4 ? ',W2_zero_points' : ''), 'H2'],
      ['mm3', 'MatMul', '', 'H2,Wext', 'H3'],
      ['add', 'Add', '', 'H3,Ef', 'Y'],
      ['keep', 'Identity', '', 'W1', 'W1copy'],
    ]);
    for (const [n, k, width] of [[g.node[1], 64, 32], [g.node[2], 32, 16]]) {
      assert.deepEqual([attr(n, 'K'), attr(n, 'N'), attr(n, 'bits'), attr(n, 'block_size')], [k, width, 4, 32]);
      assert.ok(!n.attribute.some((a) => a.name === 'accuracy_level'));
    }

    const inits = byName(g.initializer);
    assert.ok(inits.has('W1'), 'W1 stays: Identity reads it');
    assert.ok(!inits.has('W2'), 'W2 goes: nothing reads it');
    assert.ok(equals(TensorProtoSchema, inits.get('Wext'), byName(source.graph.initializer).get('Wext')), 'external data kept as it was');
    for (const [name, data, k, n, node] of [['W1', W1, 64, 32, g.node[1]], ['W2', W2, 32, 16, g.node[2]]]) {
      const plan = ol.makeMatMulNBitsPlan(QuantizationFormat.ORT_MATMULNBITS_INT4, k, n, { blockSize: 32 });
      const tensor = new Tensor('float32', data, [k, n]);
      ol.calibrateQuantizationPlan(plan, tensor);
      const expected = ol.exportMatMulNBitsInputs(ol.quantizeTensor(tensor, plan, { name }));
      plan.dispose();
      const keys = ['B', 'scales', 'zero_points'].filter((key) => expected[key]);
      assert.equal(node.input.length, 1 + keys.length);
      keys.forEach((key, i) => {
        const t = inits.get(node.input[1 + i]);
        const want = expected[key];
        assert.deepEqual(t.dims.map(Number), want.dims, `${name} ${key} dims`);
        assert.deepEqual(t.rawData, new Uint8Array(want.data.buffer, want.data.byteOffset, want.data.byteLength), `${name} ${key} payload`);
      });
    }

    assert.equal(g.encodedInitializer.length, 1);
    assert.ok(equals(EncodedValueProtoSchema, g.encodedInitializer[0], source.graph.encodedInitializer[0]), 'the encoded initializer stays encoded, unchanged');
    assert.deepEqual(model.opsetImport.map((o) => [o.domain, Number(o.version)]), [['', 21], ['ai.rt', 1], ['com.microsoft', 1]]);
    assert.deepEqual(g.output, source.graph.output);
  });

  test('accuracyLevel: the attribute on each MatMulNBits node', async () => {
    const result = await quantizeModel(toBinary(ModelProtoSchema, await sourceModel()), { accuracyLevel: 4 });
    const nodes = (await GraphBuilder.fromModel(result.bytes)).nodes.filter((n) => n.opType === 'MatMulNBits');
    assert.equal(nodes.length, 2);
    assert.ok(nodes.every((n) => attr(n, 'accuracy_level') === 4));
  });

  test('portable int4: encoded weights decoded by Dequantize nodes placed first', async () => {
    const { source, model } = await quantized('INT4');
    const g = model.graph;
    assert.deepEqual(g.node.map((n) => [n.name, n.opType, n.input.join(','), n.output.join(',')]), [
      ['W1_Dequantize', 'Dequantize', 'W1_encoded', 'W1'],
      ['W2_Dequantize', 'Dequantize', 'W2_encoded', 'W2'],
      ...source.graph.node.map((n) => [n.name, n.opType, n.input.join(','), n.output.join(',')]),
    ]);
    assert.deepEqual(g.initializer.map((t) => t.name), ['Wext'], 'float weights replaced, the external one kept');
    assert.ok(equals(TensorProtoSchema, g.initializer[0], source.graph.initializer[2]));
    const encoded = byName(g.encodedInitializer);
    assert.deepEqual([...encoded.keys()], ['E', 'W1_encoded', 'W2_encoded']);
    assert.ok(equals(EncodedValueProtoSchema, encoded.get('E'), source.graph.encodedInitializer[0]));
    for (const [name, data, k, n] of [['W1', W1, 64, 32], ['W2', W2, 32, 16]]) {
      const plan = ol.makeQuantizationPlan(QuantizationFormat.INT4, k * n, { blockSize: 32 });
      const tensor = new Tensor('float32', data, [k, n]);
      ol.calibrateQuantizationPlan(plan, tensor);
      const expected = ol.quantizeTensor(tensor, plan, { name: `${name}_encoded` });
      plan.dispose();
      assert.deepEqual(toBinary(EncodedValueProtoSchema, encoded.get(`${name}_encoded`)), expected.bytes, `${name}: the codec's encoded value`);
    }
    assert.deepEqual(model.opsetImport.map((o) => [o.domain, Number(o.version)]), [['', 21], ['ai.rt', 1]], 'ai.rt imported once');
  });

  test('a taken name gets a suffix instead of clashing', async () => {
    const source = await sourceModel();
    source.graph.node.push(create(NodeProtoSchema, node('Identity', ['X'], ['W2_encoded'], { name: 'taken' })));
    const result = await quantizeModel(toBinary(ModelProtoSchema, source), { format: QuantizationFormat.INT4 });
    const names = (await GraphBuilder.fromModel(result.bytes)).structuredInitializers.map((e) => e.name);
    assert.deepEqual(names, ['E', 'W1_encoded', 'W2_encoded_1']);
  });
});
