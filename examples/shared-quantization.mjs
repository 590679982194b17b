// Shared quantization parameters (the seed's example): two Quantize nodes
// select one named INT4 parameter set, so both paths use the same scale (the
// second input saturates instead of being recalibrated), and the encoded
// output keeps only its codes: 3 bytes for 4 values. Materializing it gives a
// self-contained value that decodes without the model.
// (`npm run build` first.)
//   node examples/shared-quantization.mjs
import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import {
  AttributeProto_AttributeType as AttrType,
  ModelProtoSchema,
  StructTypeProtoSchema,
  TensorProto_DataType as DataType,
  ValueInfoProtoSchema,
} from 'onnx-light/proto';
import {
  InferenceSession,
  QuantizationFormat,
  Tensor,
  addQuantizationParameters,
  dequantizeTensor,
  init,
  makeQuantizationPlan,
  makeQuantizationType,
  materializeQuantizedValue,
} from 'onnx-light';

await init();
const floats = (name) => ({
  name,
  type: { value: { case: 'tensorType', value: { elemType: DataType.FLOAT, shape: { dim: [{ value: { case: 'dimValue', value: 4n } }] } } } },
});

// INT4, four values in one block: the storage descriptor of the set
const storage = makeQuantizationType(makeQuantizationPlan(QuantizationFormat.INT4, 4, { blockSize: 4 }));
const quantize = (i) => ({
  opType: 'Quantize',
  domain: 'ai.rt',
  input: [`X${i}`],
  output: [`Q${i}`],
  attribute: [
    { name: 'type', type: AttrType.TYPE_PROTO, tp: { value: { case: 'structType', value: fromBinary(StructTypeProtoSchema, storage) } } },
    { name: 'parameter_ref', type: AttrType.STRING, s: new TextEncoder().encode('common') },
  ],
});
const dequantize = (input, output) => ({
  opType: 'Dequantize', domain: 'ai.rt', input: [input], output: [output], attribute: [{ name: 'dtype', type: AttrType.INT, i: 1n }],
});
const model = create(ModelProtoSchema, {
  irVersion: 10n,
  opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
  graph: {
    name: 'shared_quantization',
    node: [quantize(0), quantize(1), { opType: 'Identity', input: ['Q1'], output: ['Q1_copy'] }, dequantize('Q0', 'Y0'), dequantize('Q1_copy', 'Y1')],
    input: [floats('X0'), floats('X1')],
    output: [floats('Y0'), floats('Y1')],
  },
});

// declare "common" (scale 0.5) in the root quantization_annotation catalogue
const compact = await addQuantizationParameters(model, 'common', storage, { type: 'float32', dims: [4] }, { scales: 0.5 });
model.graph.output.push(create(ValueInfoProtoSchema, { name: 'Q0', type: { value: { case: 'structType', value: compact } } }));

const session = await InferenceSession.create(toBinary(ModelProtoSchema, model));
const out = await session.run({
  X0: new Tensor('float32', [-4, -0.5, 0.5, 3.5], [4]),
  X1: new Tensor('float32', [-8, -1, 1, 7], [4]),
});
await session.release();
console.log(`Y0 = [${out.Y0.data}]`);
console.log(`Y1 = [${out.Y1.data}]  (saturated at the shared scale)`);
const shared = out.Q0;
console.log(`Q0: parameter_ref '${shared.parameterRef}', ${shared.rawData.length} payload bytes`);
const standalone = materializeQuantizedValue(shared);
console.log(`materialized: ${standalone.bytes.length} bytes, decodes alone to [${dequantizeTensor(standalone).data}]`);
shared.dispose();
