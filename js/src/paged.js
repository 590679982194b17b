// Paged KV caches from JS (C: ol_model_to_paged, ops/paged/).
//   toPagedModel(model, { blockSize, maxTokens, leftWindowSize })
//     a decoder whose cached attention is torch's `present = Concat(past, new)`
//     pairs, GroupQueryAttention, Attention 23 or MultiHeadAttention,
//     rewritten onto ai.rt::PagedAttention: one bound paged-cache input
//     `past_key_values.{i}` and output `present.{i}` per layer (see
//     docs/paged-cache.md). The result has the kind of the input (a ModelProto
//     object for one, else bytes).
//   withPagedCacheInitializers(model, { inputName: PagedCache | Uint8Array })
//     the model with those caches as GraphProto.paged_cache_initializer
//     (C: ol_model_with_paged_cache_initializers): a state or generation
//     without that input starts from the cache (resuming offline).
// Caches themselves: PagedCache (paged-cache.js); emptyCaches gives
// PagedCache.empty() for every cache input.
import { invalidArgument } from './errors.js';
import { modelBytes, sameKind, serializeModelHandle, withModelHandle } from './model.js';
import { PagedCache } from './paged-cache.js';
import { init } from './runtime.js';

function integerOption(value, name, min, fallback) {
  if (value === undefined) return fallback;
  if (!Number.isSafeInteger(value) || value < min) {
    throw invalidArgument(`toPagedModel: ${name} must be an integer >= ${min}, got ${value}`);
  }
  return value;
}

/**
 * @param {any} model bytes, path/URL or ModelProto
 * @param {{ blockSize?: number, maxTokens?: number, leftWindowSize?: number, wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array }} [options]
 */
export async function toPagedModel(model, options = {}) {
  const blockSize = integerOption(options.blockSize, 'blockSize', 1, 16);
  const maxTokens = integerOption(options.maxTokens, 'maxTokens', 1, 4096);
  const leftWindowSize = integerOption(options.leftWindowSize, 'leftWindowSize', -1, -1);
  const runtime = await init(options);
  const bytes = await modelBytes(model, 'toPagedModel');
  const paged = withModelHandle(runtime, bytes, (source) =>
    runtime.scratch(4, (out) => {
      runtime.check(runtime.m._olw_model_to_paged(source, blockSize, maxTokens, leftWindowSize, out));
      const handle = runtime.u32(out);
      try {
        return serializeModelHandle(runtime, handle);
      } finally {
        runtime.m._olw_model_destroy(handle);
      }
    }));
  return sameKind(model, paged);
}

/**
 * The model (bytes, or a ModelProto for a ModelProto) with each cache as the
 * paged_cache_initializer of the graph input it is named after (replacing
 * one of that name). Caches are PagedCache or PagedCacheProto bytes (checked
 * as PagedCache.fromBytes does); they are saved compacted.
 * @param {any} model bytes, path/URL or ModelProto
 * @param {Record<string, PagedCache | Uint8Array>} caches
 * @param {{wasmUrl?: string|URL, wasmBinary?: ArrayBuffer|Uint8Array}} [options]
 */
export async function withPagedCacheInitializers(model, caches, options = {}) {
  if (caches === null || typeof caches !== 'object' || Array.isArray(caches)) {
    throw invalidArgument('withPagedCacheInitializers: caches must be an object { inputName: PagedCache | Uint8Array }');
  }
  const runtime = await init(options);
  const bytes = await modelBytes(model, 'withPagedCacheInitializers');
  const entries = Object.entries(caches);
  const parsed = []; // caches made here from bytes, disposed at the end
  try {
    const values = entries.map(([name, cache]) => {
      if (cache instanceof PagedCache) return cache;
      if (cache instanceof Uint8Array || cache instanceof ArrayBuffer) {
        const made = PagedCache.fromBytes(cache);
        parsed.push(made);
        return made;
      }
      throw invalidArgument(`withPagedCacheInitializers: '${name}' must be a PagedCache or PagedCacheProto bytes`);
    });
    const edited = withModelHandle(runtime, bytes, (source) => {
      const count = entries.length;
      const table = runtime.alloc(8 * Math.max(count, 1));
      const names = entries.map(([name]) => runtime.cstring(name));
      try {
        const view = runtime.view();
        names.forEach((ptr, i) => view.setUint32(table + 4 * i, ptr, true));
        values.forEach((cache, i) => view.setUint32(table + 4 * count + 4 * i, cache.handle, true));
        return runtime.scratch(4, (out) => {
          runtime.check(runtime.m._olw_model_with_paged_cache_initializers(source, table, table + 4 * count, count, out));
          const handle = runtime.u32(out);
          try {
            return serializeModelHandle(runtime, handle);
          } finally {
            runtime.m._olw_model_destroy(handle);
          }
        });
      } finally {
        names.forEach((ptr) => runtime.free(ptr));
        runtime.free(table);
      }
    });
    return sameKind(model, edited);
  } finally {
    parsed.forEach((cache) => cache.dispose());
  }
}
