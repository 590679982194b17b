// Token generation with the KV cache kept in wasm memory: each step's
// present.* outputs are fed back as past_key_values.* without a copy.
// (`npm run build` first.)
//   node examples/generate.mjs [PROMPT]
import { InferenceSession, Tensor } from 'onnx-light';

import { greedyDecode } from '../dist/greedy.js';

const prompt = process.argv[2] ?? 'The ';
const session = await InferenceSession.create(new URL('../models/fortunes-byte-0.8M.onnx', import.meta.url));
const promptIds = [...new TextEncoder().encode(prompt)];
const bytes = [];
for await (const token of greedyDecode({ session, Tensor, promptIds, maxNewTokens: 48 })) bytes.push(token);
console.log(prompt + new TextDecoder().decode(Uint8Array.from(bytes)));
await session.release();
