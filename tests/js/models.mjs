// Small test models built with the package's generated protobuf classes
// (onnx-light/proto + @bufbuild/protobuf), as users would.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { create, toBinary } from '@bufbuild/protobuf';
import { ModelProtoSchema, TensorProto_DataType } from 'onnx-light/proto';

export const ROOT = fileURLToPath(new URL('../../', import.meta.url));
export const FORTUNES = `${ROOT}models/fortunes-byte-0.8M.onnx`;
export const DataType = TensorProto_DataType;

/** A ValueInfoProto of a tensor; dims are numbers (fixed) or strings (symbolic). */
export function tensorInfo(name, elemType, dims) {
  const dim = dims.map((d) =>
    typeof d === 'string' ? { value: { case: 'dimParam', value: d } } : { value: { case: 'dimValue', value: BigInt(d) } },
  );
  return { name, type: { value: { case: 'tensorType', value: { elemType, shape: { dim } } } } };
}

/**
 * Serialized ModelProto of one graph.
 * @param {{nodes: object[], inputs: object[], outputs: object[], initializers?: object[], opset?: number}} graph
 */
export function makeModel({ nodes, inputs, outputs, initializers = [], opset = 17 }) {
  const model = create(ModelProtoSchema, {
    irVersion: 8n,
    producerName: 'onnx-light tests',
    opsetImport: [{ domain: '', version: BigInt(opset) }],
    graph: { name: 'test', node: nodes, input: inputs, output: outputs, initializer: initializers },
  });
  return toBinary(ModelProtoSchema, model);
}

/** y = Identity(x), float32 [n] ('n' symbolic). */
export function identityModel() {
  return makeModel({
    nodes: [{ opType: 'Identity', input: ['x'], output: ['y'], name: 'id' }],
    inputs: [tensorInfo('x', DataType.FLOAT, ['n'])],
    outputs: [tensorInfo('y', DataType.FLOAT, ['n'])],
  });
}

/** sum = Add(a, b) and twice = Add(a, a), float32 [2, 3]. */
export function addModel() {
  return makeModel({
    nodes: [
      { opType: 'Add', input: ['a', 'b'], output: ['sum'], name: 'add' },
      { opType: 'Add', input: ['a', 'a'], output: ['twice'], name: 'twice' },
    ],
    inputs: [tensorInfo('a', DataType.FLOAT, [2, 3]), tensorInfo('b', DataType.FLOAT, [2, 3])],
    outputs: [tensorInfo('sum', DataType.FLOAT, [2, 3]), tensorInfo('twice', DataType.FLOAT, [2, 3])],
  });
}

/** A graph using an operator no registry has. */
export function unknownOpModel() {
  return makeModel({
    nodes: [{ opType: 'FrobnicateWidgets', input: ['x'], output: ['y'], name: 'frob' }],
    inputs: [tensorInfo('x', DataType.FLOAT, [1])],
    outputs: [tensorInfo('y', DataType.FLOAT, [1])],
  });
}

export function fortunesBytes() {
  return new Uint8Array(readFileSync(FORTUNES));
}
