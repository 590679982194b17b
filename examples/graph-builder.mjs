// GraphBuilder: build a small model from scratch whose weight is a
// structured (encoded) initializer — stored as its EncodedValueProto, never
// decoded into a TensorProto — run it, and print its inferred shapes.
// (`npm run build` first.)
//   node examples/graph-builder.mjs
import { fromBinary } from '@bufbuild/protobuf';
import {
  GraphBuilder,
  InferenceSession,
  QuantizationFormat,
  Tensor,
  calibrateQuantizationPlan,
  inferShapes,
  makeQuantizationPlan,
  quantizeTensor,
} from 'onnx-light';
import { AttributeProto_AttributeType, ModelProtoSchema } from 'onnx-light/proto';

const builder = await GraphBuilder.create({ irVersion: 10, opsetImports: [{ domain: '', version: 21 }, { domain: 'ai.rt', version: 1 }] });

// W: a float[64, 16] weight quantized to int4 in blocks of 32, kept encoded.
const w = new Tensor('float32', Float32Array.from({ length: 1024 }, (_, i) => Math.sin(i) / 2), [64, 16]);
const plan = makeQuantizationPlan(QuantizationFormat.INT4, 1024, { blockSize: 32 });
calibrateQuantizationPlan(plan, w);
const name = builder.makeStructuredInitializer(quantizeTensor(w, plan, { name: 'W' }));

// Y = X @ Dequantize(W): the decoder is explicit, MatMul sees a tensor.
builder
  .addInput(GraphBuilder.tensorInfo('X', 'float32', ['batch', 64]))
  .addNode({ opType: 'Dequantize', domain: 'ai.rt', name: 'decode', input: [name], output: ['W_float'],
             attribute: [{ name: 'dtype', type: AttributeProto_AttributeType.INT, i: 1n }] })
  .addNode({ opType: 'MatMul', name: 'matmul', input: ['X', 'W_float'], output: ['Y'] })
  .addOutput(GraphBuilder.tensorInfo('Y', 'float32'));

const bytes = builder.toBytes();
const stored = builder.structuredInitializers[0];
console.log(`structured initializer '${stored.name}': ${stored.rawData.length} payload bytes (the float weight takes ${w.data.byteLength})`);

const session = await InferenceSession.create(bytes);
const { Y } = await session.run({ X: new Tensor('float32', Float32Array.from({ length: 128 }, (_, i) => (i % 7) / 7), [2, 64]) });
console.log(`Y = ${Y.type}[${Y.dims}], first values: ${Array.from(Y.data.subarray(0, 4), (v) => v.toFixed(3)).join(' ')}`);
await session.release();

const DTYPES = { 1: 'float32' };
const text = (type) => {
  if (type?.value.case !== 'tensorType') return type?.value.case ?? 'unknown';
  const t = type.value.value;
  const dims = t.shape ? `[${t.shape.dim.map((d) => d.value.value ?? '?').join(', ')}]` : '';
  return `${DTYPES[t.elemType] ?? t.elemType}${dims}`;
};
const inferred = fromBinary(ModelProtoSchema, await inferShapes(bytes));
for (const v of [...inferred.graph.valueInfo, ...inferred.graph.output]) console.log(`inferred ${v.name}: ${text(v.type)}`);
builder.dispose();
