// GraphBuilder.infer / valueInfo (the C builder's incremental shape
// inference): the kept types equal a full inference (inferShapes of the
// exported model) after each edit, and the count of re-inferred nodes shows
// that an edit at the end of a 40-node chain re-infers that node only.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { equals, fromBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, TensorProto_DataLocation, TypeProtoSchema } from 'onnx-light/proto';
import * as ol from 'onnx-light';

import { DataType } from './models.mjs';

const { GraphBuilder } = ol;
const LENGTH = 40;

/** x: float[batch, 4] -> Add(bias) -> Relu -> Add(bias) -> ... v40. */
async function chain() {
  const b = await GraphBuilder.create({ opsetImports: [{ domain: '', version: 18 }] });
  b.addInput(GraphBuilder.tensorInfo('x', 'float32', ['batch', 4]));
  b.addInitializer({ name: 'bias', dims: [4n], dataType: DataType.FLOAT, floatData: [1, 2, 3, 4] });
  let previous = 'x';
  for (let i = 1; i <= LENGTH; i++) {
    const odd = i % 2 === 1;
    b.addNode({ name: `v${i}`, opType: odd ? 'Add' : 'Relu', input: odd ? [previous, 'bias'] : [previous], output: [`v${i}`] });
    previous = `v${i}`;
  }
  return b;
}

/** Every node output's kept type against what inferShapes records for the exported model. */
async function assertFull(b) {
  const full = fromBinary(ModelProtoSchema, await ol.inferShapes(b.toBytes()));
  const recorded = new Map([...full.graph.valueInfo, ...full.graph.output].map((v) => [v.name, v.type]));
  for (const node of b.nodes) {
    const kept = b.valueInfo(node.output[0]);
    assert.ok(kept, node.output[0]);
    const want = recorded.get(node.output[0]);
    assert.ok(kept.type && want && equals(TypeProtoSchema, kept.type, want), `the kept type of ${node.output[0]} equals a full inference`);
  }
}

const dims = (info) => info.type.value.value.shape.dim.map((d) => (d.value.case === 'dimValue' ? Number(d.value.value) : d.value.value));

describe('GraphBuilder incremental inference', () => {
  test('counts and equality with a full inference after each edit', async () => {
    const b = await chain();
    assert.equal(b.infer(), LENGTH);
    assert.equal(b.infer(), 0, 'no edit: nothing to re-infer');
    await assertFull(b);
    assert.deepEqual(dims(b.valueInfo(`v${LENGTH}`)), ['batch', 4]);
    assert.deepEqual(dims(b.valueInfo('bias')), [4]);
    assert.equal(b.valueInfo('nothing'), undefined);

    b.addNode({ name: 'end', opType: 'Sigmoid', input: [`v${LENGTH}`], output: ['end'] });
    assert.equal(b.infer(), 1, 'an edit at the end of the chain re-infers one node');
    await assertFull(b);
    b.removeNode('end');
    assert.equal(b.infer(), 0);
    assert.equal(b.valueInfo('end'), undefined);

    b.removeInitializer('bias');
    b.addInitializer({ name: 'bias', dims: [3n, 1n, 4n], dataType: DataType.FLOAT, floatData: Array(12).fill(1) });
    assert.equal(b.infer(), LENGTH, 'a bias of another rank changes every type');
    assert.deepEqual(dims(b.valueInfo(`v${LENGTH}`)), [3, 'batch', 4]);
    await assertFull(b);

    b.addNode({ name: 'bad', opType: 'Relu', input: [`v${LENGTH}`], output: ['bad'] });
    b.addInitializer({ name: 'five', dims: [5n], dataType: DataType.FLOAT, floatData: [1, 2, 3, 4, 5] });
    b.replaceNode(LENGTH, { name: 'bad', opType: 'Add', input: [`v${LENGTH}`, 'five'], output: ['bad'] });
    assert.throws(() => b.infer(), (e) => e.code === 'OL_INVALID_MODEL' && /'bad'/.test(e.message));
    b.removeNode('bad');
    assert.equal(b.infer(), 0);
    await assertFull(b);
    b.dispose();
  });

  test('initializers with external data: their declared types, the file never read', async () => {
    const external = (name, dims, offset) => ({
      name, dims: dims.map(BigInt), dataType: DataType.FLOAT, dataLocation: TensorProto_DataLocation.EXTERNAL,
      externalData: [{ key: 'location', value: 'weights.bin' }, { key: 'offset', value: String(offset) }, { key: 'length', value: String(4 * dims.reduce((a, d) => a * d, 1)) }],
    });
    const b = await GraphBuilder.create({ opsetImports: [{ domain: '', version: 18 }] });
    b.addInput(GraphBuilder.tensorInfo('x', 'float32', ['batch', 4]));
    b.addInitializer(external('w', [4, 3], 0)).addInitializer(external('bias', [3], 48));
    b.addNode({ name: 'y', opType: 'MatMul', input: ['x', 'w'], output: ['y'] });
    b.addNode({ name: 'z', opType: 'Add', input: ['y', 'bias'], output: ['z'] });
    assert.equal(b.infer(), 2);
    assert.deepEqual(dims(b.valueInfo('z')), ['batch', 3]);
    assert.equal(b.valueInfo('z').type.value.value.elemType, DataType.FLOAT);
    b.addNode({ name: 'r', opType: 'Relu', input: ['z'], output: ['r'] });
    assert.equal(b.infer(), 1, 'a node after z: that node alone');
    b.removeInitializer('w').addInitializer(external('w', [4, 3], 12));
    assert.equal(b.infer(), 0, 'the same declared type: its payload is never read');
    b.addInitializer({ ...external('short', [3], 0), externalData: [{ key: 'location', value: 'weights.bin' }, { key: 'length', value: '4' }] });
    assert.throws(() => b.infer(), (e) => e.code === 'OL_INVALID_MODEL' && /'short'/.test(e.message));
    b.dispose();
  });
});
