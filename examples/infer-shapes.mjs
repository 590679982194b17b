// Type and shape inference: fill graph.value_info of the shipped decoder and
// print what was inferred for a few intermediate values, symbolic dims
// (batch_size, sequence_length) carried through. (`npm run build` first.)
//   node examples/infer-shapes.mjs
import { fromBinary } from '@bufbuild/protobuf';
import { inferShapes } from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

const DTYPES = { 1: 'float32', 7: 'int64', 9: 'bool' };

function typeText(type) {
  if (type?.value.case !== 'tensorType') return type?.value.case ?? 'unknown';
  const t = type.value.value;
  const elem = DTYPES[t.elemType] ?? `dtype ${t.elemType}`;
  if (!t.shape) return elem;
  const dims = t.shape.dim.map((d) => (d.value.case === 'dimValue' ? String(d.value.value) : d.value.value ?? '?'));
  return `${elem}[${dims.join(', ')}]`;
}

const bytes = await inferShapes('models/fortunes-byte-0.8M.onnx');
const model = fromBinary(ModelProtoSchema, bytes);
console.log(`${model.graph.valueInfo.length} intermediate values typed`);
for (const name of ['/Gather_2_output_0', '/MatMul_output_0', '/Reshape_output_0', '/Transpose_output_0', '/Softmax_output_0']) {
  const info = model.graph.valueInfo.find((v) => v.name === name);
  console.log(`${name}: ${typeText(info?.type)}`);
}
const logits = model.graph.output.find((o) => o.name === 'logits');
console.log(`logits: ${typeText(logits.type)}`);
