// Paged, quantized KV caches: the decoder rewritten onto ai.rt::PagedAttention,
// keys stored as int8 and values as uint4 (scales calibrated per page), the
// caches saved as bytes and the conversation resumed from them in a new
// session, as a later process would. (`npm run build` first.)
//   node examples/paged-cache.mjs [PROMPT]
import { InferenceSession, Tensor, emptyCaches, toPagedModel, withPagedCacheInitializers } from 'onnx-light';

const prompt = process.argv[2] ?? 'The ';
const promptIds = [...new TextEncoder().encode(prompt)];
const text = (ids) => new TextDecoder().decode(Uint8Array.from(ids, Number));

const paged = await toPagedModel(new URL('../models/fortunes-byte-0.8M.onnx', import.meta.url));
const pagedFormats = [{ fromTokens: 0, key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } }];
const session = await InferenceSession.create(paged, { pagedFormats });
const input = new Tensor('int64', BigInt64Array.from(promptIds, BigInt), [1, promptIds.length]);
const { tokens, caches } = await session.generate({ input_ids: input, ...(await emptyCaches(session)) },
  { maxNewTokens: 32, returnCaches: true });
const ids = Array.from(tokens.data);

let bytes = 0;
let saved = 0;
const files = {};
for (const [name, cache] of Object.entries(caches)) {
  files[name] = cache.toBytes();
  bytes += cache.byteLength;
  saved += files[name].length;
  cache.dispose();
}
const cached = ids.length - 1; // the last token is the next step's input
console.log(`${prompt}${text(ids.slice(promptIds.length))}`);
console.log(`caches: ${cached} tokens, ${bytes} bytes of pages (float32: ${cached * 4 * 2 * 64 * 4}), ${saved} bytes saved`);
await session.release();

// later: the model with the saved caches as initializers continues the text
const resumed = await InferenceSession.create(await withPagedCacheInitializers(paged, files), { pagedFormats });
const more = await resumed.generate({
  input_ids: new Tensor('int64', BigInt64Array.of(ids.at(-1)), [1, 1]),
  position_ids: new Tensor('int64', BigInt64Array.of(BigInt(cached)), [1, 1]),
}, { maxNewTokens: 32 });
console.log(`...${text(Array.from(more.data).slice(1))}`);
await resumed.release();
