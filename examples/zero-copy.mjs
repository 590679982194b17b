// Zero-copy feeds: a tensor made with Tensor.alloc lives in wasm memory, so a
// run reads it in place; outputs are views on wasm memory too, and can be fed
// straight back. (`npm run build` first.)
//   node examples/zero-copy.mjs
import { InferenceSession, Tensor, init, memoryStats, parseModel } from 'onnx-light';

await init();
const x = Tensor.alloc('float32', [1024]); // zeroed, in wasm memory
x.data.fill(0.5); // writes straight into wasm memory

const bytes = await parseModel(
  '<ir_version: 10, opset_import: ["" : 18]> pass (float[N] x) => (float[N] y) { y = Identity(x) }',
);
const session = await InferenceSession.create(bytes);
const { y } = await session.run({ x });
console.log('input  at wasm byte offset', x.wasmByteOffset);
console.log('output at wasm byte offset', y.wasmByteOffset, y.wasmByteOffset === x.wasmByteOffset ? '(same bytes: nothing was copied)' : '');
console.log('runtime memory:', memoryStats());
x.dispose();
y.dispose();
await session.release();
