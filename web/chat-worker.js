// The app's Web Worker: a model directory opened with fromPretrained (its
// tokenizer, chat template and eos ids), the decoder on paged KV caches, and
// the conversation's cache. The page sends the directory's files and, when
// it restores a saved conversation, its caches (PagedCacheProto bytes); then
// turns. Messages:
//   in:  { type: 'init', files: Map<path, Blob>, threads, maxTokens, saved: { caches: { name: bytes }, ids, lastTurn } | null }
//        { type: 'turn', id, messages: [{ role, content }], seed } | { type: 'regenerate', id, seed }
//        { type: 'stop', id } | { type: 'reset' }
//   out: { type: 'ready', threads, stats, model } | { type: 'text', piece }
//        { type: 'answer', text, tokensPerSecond, stats, saved } | { type: 'error', message }
// A turn is the whole conversation rendered by the chat template; only the
// tokens the cache does not hold yet are fed (where the rendering differs
// from what the cache holds, e.g. the template's end-of-answer text, the
// cache is truncated to the common prefix first). `saved` is what the page
// stores after every answer; `ids` are the conversation's tokens, of which
// the cache holds all but the last generated one.
import { PagedCache, Tensor, emptyCaches, env, fromPretrained, init, memoryStats, numThreads, quantizePagedCache } from 'onnx-light';

import { PLAIN_TEMPLATE, QUANTIZED, TEMPERATURE } from './config.js';

let model = null; // fromPretrained's generator
let maxTokens = 0;
let caches = null; // { name: PagedCache }: the conversation so far
let ids = []; // the conversation's tokens (the cache holds the first cacheLength())
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
    case 'turn': {
      const { ids: wanted } = await model.encode(message.messages);
      let common = 0;
      while (common < ids.length && common < wanted.length && ids[common] === wanted[common]) common++;
      const start = Math.min(common, cacheLength());
      if (start < cacheLength()) cut(start);
      return answer(message.id, wanted.slice(start), start, message.seed);
    }
    case 'regenerate':
      if (!lastTurn) throw new Error('there is no answer to regenerate');
      cut(lastTurn.start);
      return answer(message.id, lastTurn.input, lastTurn.start, message.seed ?? lastTurn.seed);
    case 'reset':
      replaceCaches(await emptyCaches(model.session));
      ids = [];
      lastTurn = null;
      post({ type: 'ready', threads: numThreads(), stats: stats(), model: describe() });
      return;
    default:
  }
}

async function start({ files, threads, saved, maxTokens: max }) {
  env.wasm.numThreads = threads;
  await init();
  model = await fromPretrained(files);
  if (!model.paged) throw new Error(`this app keeps conversations on paged KV caches, which this decoder cannot use: ${model.pagedFallbackReason}`);
  if (!model.chatTemplate) model.chatTemplate = PLAIN_TEMPLATE; // read when the template is first rendered
  maxTokens = max;
  if (saved) {
    replaceCaches(Object.fromEntries(Object.entries(saved.caches).map(([name, bytes]) => [name, PagedCache.fromBytes(bytes)])));
    ids = saved.ids;
    lastTurn = saved.lastTurn;
  } else {
    replaceCaches(await emptyCaches(model.session));
  }
  post({ type: 'ready', threads: numThreads(), stats: stats(), model: describe() });
}

/** What the page shows about the model. */
function describe() {
  return {
    file: model.modelFile,
    template: model.tokenizerConfig.chat_template === undefined ? 'plain' : 'directory',
    tokenizer: model.tokenizer.kind === 'bytes' ? 'bytes' : 'tokenizer.json',
    eos: model.eosTokenIds,
  };
}

function replaceCaches(next) {
  for (const cache of Object.values(caches ?? {})) cache.dispose();
  caches = next;
}

/** Keeps the first `length` tokens of the conversation (PagedCache.truncate). */
function cut(length) {
  replaceCaches(Object.fromEntries(Object.entries(caches).map(([name, cache]) => [name, cache.truncate(length)])));
  ids = ids.slice(0, length);
}

function cacheLength() {
  return Object.values(caches)[0]?.length ?? 0;
}

/** Job `id`: generates the answer to `input` (fed at position `start`, the cache's length) and settles the cache. */
async function answer(id, input, start, seed) {
  const inputIds = new Tensor('int64', BigInt64Array.from(input, BigInt), [1, input.length]);
  const positions = new Tensor('int64', BigInt64Array.from(input, (_, i) => BigInt(start + i)), [1, input.length]);
  const g = model.generationConfig;
  const eos = new Set(model.eosTokenIds);
  const decoder = model.tokenizer.decoder();
  let first = 0;
  let count = 0;
  const { tokens, caches: next } = await model.session.generate(
    { input_ids: inputIds, position_ids: positions, ...caches },
    {
      maxNewTokens: maxTokens,
      temperature: g.do_sample === false ? 0 : g.temperature ?? TEMPERATURE,
      seed,
      eosTokenId: model.eosTokenIds[0],
      returnCaches: true,
      onToken: ([token]) => {
        if (count++ === 0) first = performance.now();
        const tokenId = Number(token);
        if (eos.has(tokenId)) return false; // the C loop stops at the first eos id, this at the others
        const piece = decoder.push(tokenId);
        if (piece) post({ type: 'text', piece });
        return stopId !== id; // Stop: the answer ends here, its cache kept
      },
    },
  );
  const seconds = (performance.now() - first) / 1000;
  const generated = Array.from(tokens.data.subarray(input.length), Number);
  replaceCaches(Object.fromEntries(Object.entries(next).map(([name, cache]) => [name, settle(cache)])));
  for (const cache of Object.values(next)) cache.dispose();
  ids = [...ids.slice(0, start), ...input, ...generated];
  lastTurn = { start, input, seed };
  const saved = {
    caches: Object.fromEntries(Object.entries(caches).map(([name, cache]) => [name, cache.toBytes()])),
    ids,
    lastTurn,
  };
  const text = model.tokenizer.decode(eos.has(generated.at(-1)) ? generated.slice(0, -1) : generated);
  post({ type: 'answer', text, tokensPerSecond: count > 1 && seconds > 0 ? (count - 1) / seconds : null, stats: stats(), saved });
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
