// The app's Web Worker: the model on paged KV caches and the conversation's
// cache. The page sends the model bytes and, when it restores a saved
// conversation, its caches (PagedCacheProto bytes); then turns. Messages:
//   in:  { type: 'init', model: Uint8Array, threads, saved: { caches: { name: bytes }, pending, lastTurn } | null }
//        { type: 'turn', id, message, seed } | { type: 'regenerate', id, seed } | { type: 'stop', id } | { type: 'reset' }
//   out: { type: 'ready', threads, stats } | { type: 'token', byte }
//        { type: 'answer', bytes, tokensPerSecond, stats, saved } | { type: 'error', message }
// `saved` ({ caches, pending, lastTurn }) is what the page stores after every
// answer; `pending` is the answer's last token (not in the cache yet: the
// next turn's input starts with it).
import { InferenceSession, PagedCache, Tensor, emptyCaches, env, init, memoryStats, numThreads, quantizePagedCache, toPagedModel } from 'onnx-light';

import { END_OF_ANSWER, MAX_ANSWER_BYTES, QUANTIZED, TEMPERATURE, turnInput } from './config.js';

let session = null;
let caches = null; // { name: PagedCache }: the conversation so far
let pending = []; // generated tokens not in the cache yet
let lastTurn = null; // { start, input, seed }: to regenerate the last answer
let stopId = null; // the job whose answer should end (Stop may come before the job starts)
let busy = Promise.resolve();

const post = (message, transfer) => self.postMessage(message, transfer ?? []);

self.addEventListener('message', ({ data }) => {
  if (data.type === 'stop') {
    stopId = data.id;
    return;
  }
  // one job at a time, in order
  busy = busy.then(() => handle(data)).catch((error) => post({ type: 'error', message: String(error?.message ?? error) }));
});

async function handle(message) {
  switch (message.type) {
    case 'init':
      return start(message);
    case 'turn':
      return answer(message.id, turnInput(pending, message.message), cacheLength(), message.seed);
    case 'regenerate': {
      if (!lastTurn) throw new Error('there is no answer to regenerate');
      const cut = Object.fromEntries(Object.entries(caches).map(([name, cache]) => [name, cache.truncate(lastTurn.start)]));
      replaceCaches(cut);
      return answer(message.id, lastTurn.input, lastTurn.start, message.seed ?? lastTurn.seed);
    }
    case 'reset':
      replaceCaches(await emptyCaches(session));
      pending = [];
      lastTurn = null;
      post({ type: 'ready', threads: numThreads(), stats: stats() });
      return;
    default:
  }
}

async function start({ model, threads, saved }) {
  env.wasm.numThreads = threads;
  await init();
  session = await InferenceSession.create(await toPagedModel(model));
  if (saved) {
    replaceCaches(Object.fromEntries(Object.entries(saved.caches).map(([name, bytes]) => [name, PagedCache.fromBytes(bytes)])));
    pending = saved.pending;
    lastTurn = saved.lastTurn;
  } else {
    replaceCaches(await emptyCaches(session));
  }
  post({ type: 'ready', threads: numThreads(), stats: stats() });
}

function replaceCaches(next) {
  for (const cache of Object.values(caches ?? {})) cache.dispose();
  caches = next;
}

function cacheLength() {
  return Object.values(caches)[0]?.length ?? 0;
}

/** Job `id`: generates the answer to `input` (fed at position `start`, the cache's length) and settles the cache. */
async function answer(id, input, start, seed) {
  const ids = new Tensor('int64', BigInt64Array.from(input, BigInt), [1, input.length]);
  const positions = new Tensor('int64', BigInt64Array.from(input, (_, i) => BigInt(start + i)), [1, input.length]);
  let first = 0;
  let count = 0;
  const { tokens, caches: next } = await session.generate(
    { input_ids: ids, position_ids: positions, ...caches },
    {
      maxNewTokens: MAX_ANSWER_BYTES,
      temperature: TEMPERATURE,
      seed,
      eosTokenId: END_OF_ANSWER,
      returnCaches: true,
      onToken: ([token]) => {
        if (count++ === 0) first = performance.now();
        post({ type: 'token', byte: Number(token) });
        return stopId !== id; // Stop: the answer ends here, its cache kept
      },
    },
  );
  const seconds = (performance.now() - first) / 1000;
  const generated = Array.from(tokens.data.subarray(input.length), Number);
  replaceCaches(Object.fromEntries(Object.entries(next).map(([name, cache]) => [name, settle(cache)])));
  for (const cache of Object.values(next)) cache.dispose();
  pending = generated.slice(-1);
  lastTurn = { start, input, seed };
  const saved = {
    caches: Object.fromEntries(Object.entries(caches).map(([name, cache]) => [name, cache.toBytes()])),
    pending,
    lastTurn,
  };
  const bytes = generated.at(-1) === END_OF_ANSWER ? generated.slice(0, -1) : generated;
  post({ type: 'answer', bytes, tokensPerSecond: count > 1 && seconds > 0 ? (count - 1) / seconds : null, stats: stats(), saved });
}

/** The policy of config.js: every dense block converted to int8 keys / uint4 values, then compacted. */
function settle(cache) {
  const dense = [];
  cache.blocks.forEach((block, index) => {
    if (block.key instanceof Tensor) dense.push(index);
    block.key.dispose?.();
    block.value.dispose?.();
  });
  const quantized = dense.length ? quantizePagedCache(cache, dense, QUANTIZED) : cache.fork();
  try {
    return quantized.compact();
  } finally {
    quantized.dispose();
  }
}

/**
 * The cache by page format: tokens (per layer) and payload bytes (all
 * layers), the bytes dense fp32 pages of the same tokens would take, and
 * the runtime's memory (memoryStats()).
 */
function stats() {
  const formats = {};
  let fp32Bytes = 0;
  Object.values(caches).forEach((cache, layer) => {
    for (const block of cache.blocks) {
      const dense = block.key instanceof Tensor;
      const width = block.key.dims[3];
      const kind = dense ? 'float32' : `${QUANTIZED.key.type} keys / ${QUANTIZED.value.type} values`;
      const entry = (formats[kind] ??= { tokens: 0, bytes: 0 });
      if (layer === 0) entry.tokens += block.length;
      entry.bytes += block.length * (dense ? 8 * width : width + width / 2);
      fp32Bytes += block.length * 8 * width;
      block.key.dispose?.();
      block.value.dispose?.();
    }
  });
  return { tokens: cacheLength(), layers: Object.keys(caches).length, formats, fp32Bytes, memory: memoryStats() };
}
