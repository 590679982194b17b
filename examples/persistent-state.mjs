// Persistent feedback state: the seed's accumulate example, then the
// fortunes decoder with its KV cache bound (bindCache) and generated in a
// worker thread, streaming tokens as they are produced.
// (`npm run build` first.)
//   node examples/persistent-state.mjs [PROMPT]
import { PersistentValueState, Tensor, bindCache, bindPersistent, createGenerator, emptyCaches, parseModel } from 'onnx-light';

// ---- accumulate: present = delta + past, present fed back as past
const model = await bindPersistent(
  await parseModel(
    '<ir_version: 10, opset_import: ["" : 18]> accumulate (float[2] delta, float[2] past) => (float[2] present) { present = Add(delta, past) }',
  ),
  { past: 'present' },
);
const state = await PersistentValueState.create(model, { past: new Tensor('float32', [0, 0], [2]) });
const delta = new Tensor('float32', [1, 1], [2]);
await state.run({ delta });
const { present } = await state.run({ delta });
const { past } = state.values;
console.log(`present = [${present.data}], state.values.past is the same wasm buffer: ${past.wasmByteOffset === present.wasmByteOffset}`);
await state.reset({ past: new Tensor('float32', [0, 0], [2]) });
await state.close();

// ---- generation in a worker, the KV cache kept in wasm memory
const prompt = process.argv[2] ?? 'The ';
const decoder = await bindCache(new URL('../models/fortunes-byte-0.8M.onnx', import.meta.url));
const promptIds = [...new TextEncoder().encode(prompt)];
const feeds = { input_ids: new Tensor('int64', BigInt64Array.from(promptIds, BigInt), [1, promptIds.length]), ...(await emptyCaches(decoder)) };
const generator = await createGenerator(decoder, { worker: true });
const text = new TextDecoder();
let out = prompt;
for await (const { tokens } of generator.generateStream(feeds, { maxNewTokens: 48, temperature: 0.7, seed: 42 })) {
  out += text.decode(Uint8Array.of(Number(tokens[0])), { stream: true });
}
console.log(out + text.decode());
await generator.close();
