// Run a model: build a tiny ONNX model with the typed protobuf classes, load
// it, inspect its inputs, run it. (`npm run build` first.)
//   node examples/run-model.mjs
import { create, toBinary } from '@bufbuild/protobuf';
import { InferenceSession, Tensor } from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

const FLOAT = 1;
const vector = (name) => ({
  name,
  type: { value: { case: 'tensorType', value: { elemType: FLOAT, shape: { dim: [{ value: { case: 'dimParam', value: 'n' } }] } } } },
});

const model = create(ModelProtoSchema, {
  irVersion: 8n,
  opsetImport: [{ domain: '', version: 17n }],
  graph: {
    name: 'double',
    node: [{ opType: 'Add', input: ['x', 'x'], output: ['y'] }],
    input: [vector('x')],
    output: [vector('y')],
  },
});

const session = await InferenceSession.create(toBinary(ModelProtoSchema, model));
console.log('inputs:', session.inputMetadata);
const { y } = await session.run({ x: new Tensor('float32', [1, 2, 3], [3]) });
console.log('y =', Array.from(y.data)); // [2, 4, 6]
y.dispose();
await session.release();
