// GraphBuilder from JS (the C builder through the wasm ABI): building and
// running a model with a structured initializer, the shared namespace,
// removal rules, catalogue compaction and remap, toGraph's refusal of
// model-level references, the text export's refusals, and round trips of the
// quantized fortunes models (MatMulNBits, portable int4, shared parameter
// sets, persistent bindings) that must come back semantically identical.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { create, equals, fromBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType as AttrType, EncodedValueProtoSchema, ModelProtoSchema, StructTypeProtoSchema } from 'onnx-light/proto';
import * as ol from 'onnx-light';

import { DataType, FORTUNES, ROOT } from './models.mjs';

const { GraphBuilder, OnnxLightError, Tensor } = ol;
const failsWith = (code, pattern) => (e) => e instanceof OnnxLightError && e.code === code && pattern.test(e.message);
const dir = mkdtempSync(join(tmpdir(), 'ol-builder-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const quantize = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'quantize', ...args], { encoding: 'utf8' });

const dequantize = (input, output) => ({ opType: 'Dequantize', domain: 'ai.rt', input: [input], output: [output], attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }] });

/** A uint8[4] array type, or a structure whose field refers to `ref`. */
function structType(typeId, ref) {
  const uint8 = { value: { case: 'tensorType', value: { elemType: DataType.UINT8 } } };
  const kind = ref
    ? { case: 'structure', value: { field: [{ name: 'f', content: { case: 'type', value: { value: { case: 'structType', value: { kind: { case: 'typeRef', value: BigInt(ref) } } } } } }] } }
    : { case: 'array', value: { elementType: uint8, dimension: 4n } };
  return { typeId: BigInt(typeId), kind };
}

/** An EncodedValueProto init object with a type_ref layout and 4 payload bytes. */
const referencing = (name, ref) => ({ name, layout: { case: 'structType', value: { kind: { case: 'typeRef', value: BigInt(ref) } } }, rawData: Uint8Array.of(1, 2, 3, 4) });

describe('GraphBuilder', () => {
  test('new GraphBuilder before loading names what to await', () => {
    assert.throws(() => new GraphBuilder(), failsWith('OL_FAILED_PRECONDITION', /init\(\)|GraphBuilder\.load/));
  });

  test('builds a model with a structured initializer from scratch and runs it', async () => {
    const b = await GraphBuilder.create({ irVersion: 10, opsetImports: [{ domain: '', version: 21 }, { domain: 'ai.rt', version: 1 }] });
    const w = new Tensor('float32', Float32Array.from({ length: 8 }, (_, i) => i - 4), [2, 4]);
    const plan = ol.makeQuantizationPlan(ol.QuantizationFormat.INT8, 8, { blockSize: 4 });
    ol.calibrateQuantizationPlan(plan, w);
    const encoded = ol.quantizeTensor(w, plan, { name: 'W' });
    assert.equal(b.makeStructuredInitializer(encoded), 'W');
    b.addInput(GraphBuilder.tensorInfo('X', 'float32', [2, 4]))
      .addNode(dequantize('W', 'Wf'))
      .addNode({ opType: 'Add', input: ['X', 'Wf'], output: ['Y'], name: 'add' })
      .addOutput(GraphBuilder.tensorInfo('Y', 'float32', [2, 4]));
    // stored unchanged: the same bytes come back
    assert.deepEqual(b.structuredInitializers.map((e) => e.rawData), [fromBinary(EncodedValueProtoSchema, encoded.bytes).rawData]);
    const session = await ol.InferenceSession.create(b.toBytes());
    const { Y } = await session.run({ X: new Tensor('float32', new Float32Array(8).fill(10), [2, 4]) });
    const expected = ol.dequantizeTensor(encoded);
    assert.deepEqual(Array.from(Y.data), Array.from(expected.data, (v) => Math.fround(v + 10)));
    await session.release();
    const inferred = fromBinary(ModelProtoSchema, await ol.inferShapes(b.toBytes()));
    assert.ok(inferred.graph.valueInfo.some((v) => v.name === 'Wf'));
    b.dispose();
    assert.throws(() => b.toBytes(), failsWith('OL_FAILED_PRECONDITION', /disposed/));
  });

  test('names are shared: a clash names both holders', async () => {
    const b = await GraphBuilder.create();
    b.addInput(GraphBuilder.tensorInfo('x', 'float32', [2]));
    assert.throws(() => b.makeStructuredInitializer({ name: 'x', layout: { case: 'structType', value: structType(0) }, rawData: new Uint8Array(4) }),
      failsWith('OL_INVALID_ARGUMENT', /structured initializer 'x' clashes with the graph input 'x'/));
    b.addNode({ opType: 'Relu', input: ['x'], output: ['y'], name: 'relu' });
    assert.throws(() => b.addInitializer({ name: 'y', dataType: DataType.FLOAT, dims: [1n], floatData: [1] }),
      failsWith('OL_INVALID_ARGUMENT', /initializer 'y' clashes with the output 'y' of node 'relu' \(Relu\)/));
    assert.throws(() => b.addNode({ opType: 'Relu', input: ['y'], output: ['x'] }), failsWith('OL_INVALID_ARGUMENT', /clashes with the graph input 'x'/));
    b.addInitializer({ name: 'x', dataType: DataType.FLOAT, dims: [2n], floatData: [1, 2] }); // an input's default
    assert.equal(b.nodes.length, 1);
    assert.throws(() => b.removeNode('nothing'), failsWith('OL_NOT_FOUND', /no node 'nothing'/));
    b.removeNode('relu');
    b.addInitializer({ name: 'y', dataType: DataType.FLOAT, dims: [1n], floatData: [1] });
    b.removeInitializer('y');
    assert.throws(() => b.removeInitializer('y'), failsWith('OL_NOT_FOUND', /no initializer 'y'/));
    assert.throws(() => b.addNode(new Uint8Array([0xff, 0xff])), failsWith('OL_INVALID_ARGUMENT', /not a serialized/));
    b.dispose();
  });

  test('persistent bindings: declared ends, removed before their input', async () => {
    const b = await GraphBuilder.create();
    b.addInput(GraphBuilder.tensorInfo('past', 'float32', [2])).addInput(GraphBuilder.tensorInfo('delta', 'float32', [2]));
    b.addNode({ opType: 'Add', input: ['past', 'delta'], output: ['present'] }).addOutput(GraphBuilder.tensorInfo('present', 'float32', [2]));
    assert.throws(() => b.addPersistentBinding('past', 'nope'), failsWith('OL_INVALID_ARGUMENT', /'nope' is not a graph output/));
    b.addPersistentBinding('past', 'present');
    assert.deepEqual(b.persistentBindings.map((p) => [p.inputName, p.outputName]), [['past', 'present']]);
    assert.throws(() => b.removeInput('past'), failsWith('OL_FAILED_PRECONDITION', /persistent binding 'past' <- 'present'/));
    await assert.rejects(ol.printModel(b.toBytes()), failsWith('OL_NOT_IMPLEMENTED', /persistent binding 'past' <- 'present'/));
    b.removePersistentBinding('past').removeInput('past');
    assert.deepEqual(b.inputs.map((i) => i.name), ['delta']);
    b.dispose();
  });

  test('toModel compacts the catalogue and remaps type_ref; toGraph refuses model-level references', async () => {
    const b = await GraphBuilder.create();
    b.addStructType(structType(5)).addStructType(structType(9)).addStructType(structType(7, 9));
    assert.throws(() => b.addStructType(structType(7)), failsWith('OL_INVALID_ARGUMENT', /struct type id 7 is declared twice/));
    b.makeStructuredInitializer(referencing('w', 7));
    const model = b.toModel();
    assert.deepEqual(model.structTypes.map((t) => t.typeId), [1n, 2n]);
    assert.equal(model.structTypes[1].kind.value.field[0].content.value.value.value.kind.value, 1n); // 9 -> 1
    assert.equal(model.graph.encodedInitializer[0].layout.value.kind.value, 2n); // 7 -> 2
    assert.equal(b.structTypes.length, 3); // the builder keeps its own catalogue
    assert.throws(() => b.toGraph(), failsWith('OL_FAILED_PRECONDITION', /structured initializer 'w' uses struct_type.type_ref 7, a model-level reference/));
    b.removeStructType(9);
    assert.throws(() => b.toModel(), failsWith('OL_INVALID_MODEL', /struct type 7 .* uses struct_type.type_ref 9, which ModelProto.struct_types does not declare/));
    b.removeInitializer('w');
    b.makeStructuredInitializer({ name: 'inline', layout: { case: 'structType', value: structType(0) }, rawData: Uint8Array.of(9, 8, 7, 6) });
    const graph = b.toGraph();
    assert.deepEqual(graph.encodedInitializer[0].rawData, Uint8Array.of(9, 8, 7, 6));
    await assert.rejects(ol.printModel(b.toBytes()), failsWith('OL_NOT_IMPLEMENTED', /encoded initializer 'inline'/));
    b.dispose();
  });

  test('dedupInitializers keeps byte-identical payloads with different descriptors apart', async () => {
    const b = await GraphBuilder.create();
    const layout = (elemType) => ({ case: 'structType', value: { kind: { case: 'array', value: { elementType: { value: { case: 'tensorType', value: { elemType } } }, dimension: 4n } } } });
    const bytes = Uint8Array.of(1, 2, 3, 4);
    b.makeStructuredInitializer({ name: 'u1', layout: layout(DataType.UINT8), rawData: bytes });
    b.makeStructuredInitializer({ name: 's1', layout: layout(DataType.INT8), rawData: bytes });
    b.makeStructuredInitializer({ name: 'u2', layout: layout(DataType.UINT8), rawData: bytes });
    b.addNode({ opType: 'Pack', input: ['u2', 's1'], output: ['p'] });
    assert.equal(b.dedupInitializers(), 1);
    assert.deepEqual(b.structuredInitializers.map((e) => e.name), ['u1', 's1']);
    assert.deepEqual(b.nodes[0].input, ['u1', 's1']);
    b.dispose();
  });

  test('external data stays external and cache initializers are kept', async () => {
    const model = create(ModelProtoSchema, {
      irVersion: 10n,
      graph: {
        name: 'g',
        initializer: [{ name: 'w', dataType: DataType.FLOAT, dims: [4n], dataLocation: 1, externalData: [{ key: 'location', value: 'weights.bin' }] }],
        pagedCacheInitializer: [{ name: 'kv' }],
      },
    });
    const b = await GraphBuilder.fromModel(model);
    assert.ok(equals(ModelProtoSchema, b.toModel(), model));
    assert.throws(() => b.addInitializer({ name: 'kv', dataType: DataType.FLOAT, dims: [1n], floatData: [0] }), failsWith('OL_INVALID_ARGUMENT', /cache initializer 'kv'/));
    b.dispose();
  });
});

describe('GraphBuilder round trips of quantized fortunes models', () => {
  /** fromModel -> toModel gives back the same message (graph, payload bytes, types). */
  async function roundTrip(bytes) {
    const b = await GraphBuilder.fromModel(bytes);
    const again = b.toModel();
    b.dispose();
    assert.ok(equals(ModelProtoSchema, again, bytes.$typeName ? bytes : fromBinary(ModelProtoSchema, bytes)));
    return again;
  }

  test('MatMulNBits, portable int4 with encoded initializers, persistent bindings, shared parameter sets', async () => {
    let count = 0;
    for (const format of ['ort_matmulnbits_int4', 'int4']) {
      const out = join(dir, `fortunes-${format}.onnx`);
      const run = quantize('--model', FORTUNES, '--out', out, '--format', format, '--block-size', '32');
      assert.equal(run.status, 0, run.stderr);
      const bytes = readFileSync(out);
      const model = await roundTrip(bytes);
      if (format === 'int4') assert.ok(model.graph.encodedInitializer.length > 0);
      const bound = await ol.bindCache(bytes);
      assert.ok((await roundTrip(bound)).graph.persistentBindings.length > 0);
      count += 2;
    }
    // a shared parameter set (serialized descriptors in UINT8 initializers) and its compact graph output
    const plan = ol.makeQuantizationPlan(ol.QuantizationFormat.INT4, 4, { blockSize: 4 });
    const storage = fromBinary(StructTypeProtoSchema, ol.makeQuantizationType(plan));
    const model = create(ModelProtoSchema, {
      irVersion: 10n,
      opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
      graph: {
        name: 'shared',
        node: [{ opType: 'Quantize', domain: 'ai.rt', input: ['X'], output: ['Q'], attribute: [
          { name: 'type', type: AttrType.TYPE_PROTO, tp: { value: { case: 'structType', value: storage } } },
          { name: 'parameter_ref', type: AttrType.STRING, s: new TextEncoder().encode('common') },
        ] }, dequantize('Q', 'Y')],
        input: [{ name: 'X', type: { value: { case: 'tensorType', value: { elemType: DataType.FLOAT, shape: { dim: [{ value: { case: 'dimValue', value: 4n } }] } } } } }],
        output: [{ name: 'Y' }],
      },
    });
    await ol.addQuantizationParameters(model, 'common', storage, { type: 'float32', dims: [4] }, { scales: new Tensor('float32', Float32Array.of(0.5), []) });
    const shared = await roundTrip(model);
    assert.ok(shared.graph.quantizationAnnotation.length > 0);
    count++;
    assert.equal(count, 5);
  });
});
