// Paged KV caches from JS (C: ol_model_to_paged, ops/paged/).
//   toPagedModel(model, { blockSize, maxTokens, leftWindowSize })
//     a torch-exported decoder whose caches are `present = Concat(past, new)`
//     pairs rewritten onto ai.rt::PagedAttention: one bound paged-cache input
//     `past_key_values.{i}` and output `present.{i}` per layer (see
//     docs/paged-cache.md). The result has the kind of the input (a ModelProto
//     object for one, else bytes).
// A paged cache crosses the API as { blocks: [{ start, length, key, value }] }
// (emptyCaches gives { blocks: [] } for every cache input).
import { invalidArgument } from './errors.js';
import { modelBytes, sameKind, serializeModelHandle, withModelHandle } from './model.js';
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
