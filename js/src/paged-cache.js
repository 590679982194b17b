// PagedCache: a paged KV cache (the past/present of ai.rt::PagedAttention)
// held in wasm memory as the C value (c/include/onnxlight.h, "paged KV
// caches"). Session outputs that are caches, state values and
// emptyCaches() give PagedCache objects; feeding one passes its handle (no
// copy). Blocks are immutable in C, so truncate() and fork() share pages
// instead of copying them.
//
// A plain object { blocks: [{ start, length, key, value }] } with exactly
// those fields (start/length numbers, bigints or int64 scalar Tensors; key
// and value Tensors [1, 1, capacity, width] or EncodedValues) is accepted
// wherever a cache is (values.js marshals it).
//
// quantizePagedCache(cache, blockIndices, { key, value }) converts selected
// blocks (ol_paged_cache_quantize, the code of ai.rt::QuantizePagedCache).
import { OnnxLightError, invalidArgument } from './errors.js';
import { pageFormat } from './paged-formats.js';
import { currentRuntime } from './runtime.js';
import { marshalInputs, wrapOutput } from './values.js';

const CREATE = Symbol('PagedCache');
const FIELD_NAMES = new WeakMap(); // runtime -> { field name: C string kept for the module's life }
const finalizer = new FinalizationRegistry(({ runtime, handle }) => runtime.m._olw_value_release(handle));

/** Internal: a PagedCache taking the reference on a cache value handle. */
export function pagedCacheFromValue(runtime, handle) {
  return new PagedCache(CREATE, runtime, handle);
}

/** Internal: the handle of a PagedCache (not retained; throws once disposed). */
export function valueOfPagedCache(cache) {
  return cache.handle;
}

/** A C string of a cache field name (made once per module). */
function fieldName(runtime, name) {
  let names = FIELD_NAMES.get(runtime);
  if (!names) FIELD_NAMES.set(runtime, (names = {}));
  return (names[name] ??= runtime.cstring(name));
}

export class PagedCache {
  #runtime;
  #handle;
  #token = {};

  /** @private PagedCache.empty(), PagedCache.fromBytes() or run outputs make caches. */
  constructor(key, runtime, handle) {
    if (key !== CREATE) throw new TypeError('use PagedCache.empty() or PagedCache.fromBytes() to make a cache');
    this.#runtime = runtime;
    this.#handle = handle;
    finalizer.register(this, { runtime, handle }, this.#token);
  }

  /** An empty cache ({ blocks: [] }). Needs the module loaded (await init()). */
  static empty() {
    const runtime = currentRuntime();
    return pagedCacheFromValue(runtime, runtime.u32Result((out) => runtime.m._olw_paged_cache_empty(out)));
  }

  /**
   * A cache from PagedCacheProto bytes (toBytes()), owning its pages.
   * Malformed bytes raise OnnxLightError naming the block. Needs the module
   * loaded (await init()).
   * @param {Uint8Array | ArrayBuffer} bytes
   */
  static fromBytes(bytes) {
    const data = bytes instanceof ArrayBuffer ? new Uint8Array(bytes) : bytes;
    if (!(data instanceof Uint8Array)) throw invalidArgument('PagedCache.fromBytes: bytes must be a Uint8Array or ArrayBuffer');
    const runtime = currentRuntime();
    const ptr = runtime.copyIn(data);
    try {
      return pagedCacheFromValue(runtime, runtime.u32Result((out) => runtime.m._olw_paged_cache_parse(ptr, data.byteLength, out)));
    } finally {
      runtime.free(ptr);
    }
  }

  /**
   * A PagedCache of a plain { blocks: [{ start, length, key, value }] }
   * (copied into wasm memory once and checked), or a fork of a PagedCache.
   * Needs the module loaded (await init()).
   */
  static from(cache) {
    if (cache instanceof PagedCache) return cache.fork();
    const runtime = currentRuntime();
    const table = marshalInputs(runtime, [['cache', cache]], 'PagedCache.from');
    try {
      const handle = runtime.u32(table.values);
      if (!runtime.m._olw_paged_cache_is(handle)) {
        throw invalidArgument('PagedCache.from: not a paged cache { blocks: [{ start, length, key, value }] }');
      }
      const made = pagedCacheFromValue(runtime, runtime.m._olw_value_retain(handle));
      try {
        void made.length; // checks every block
      } catch (error) {
        made.dispose();
        throw error;
      }
      return made;
    } finally {
      table.release();
    }
  }

  /** Internal: the ol_value handle (throws once disposed). */
  get handle() {
    if (!this.#handle) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'the PagedCache was disposed');
    return this.#handle;
  }

  /** Tokens held. */
  get length() {
    return this.#count((out) => this.#runtime.m._olw_paged_cache_length(this.handle, out));
  }

  /** Bytes of the K and V page payloads (codes or elements; shared pages counted in full). */
  get byteLength() {
    return this.#count((out) => this.#runtime.m._olw_paged_cache_payload_bytes(this.handle, out));
  }

  /** Number of blocks. */
  get blockCount() {
    const m = this.#runtime.m;
    return m._olw_sequence_length(m._olw_struct_field(this.handle, fieldName(this.#runtime, 'blocks')));
  }

  /**
   * The blocks: { start, length, key, value } with Tensor views of dense
   * pages ([1, 1, capacity, width], kept alive by the view: dispose() them
   * when done) and EncodedValue copies of affine ones. New objects each time.
   * @returns {{start: number, length: number, key: any, value: any}[]}
   */
  get blocks() {
    const runtime = this.#runtime;
    const m = runtime.m;
    const field = (value, name) => m._olw_struct_field(value, fieldName(runtime, name));
    const sequence = field(this.handle, 'blocks');
    const blocks = [];
    try {
      for (let i = 0; i < m._olw_sequence_length(sequence); i++) {
        const block = m._olw_sequence_at(sequence, i);
        const scalar = (name) => Number(runtime.i64(m._olw_tensor_data(field(block, name))));
        const entry = { start: scalar('start'), length: scalar('length'), key: null, value: null };
        blocks.push(entry);
        entry.key = wrapOutput(runtime, m._olw_value_retain(field(block, 'key')));
        entry.value = wrapOutput(runtime, m._olw_value_retain(field(block, 'value')));
      }
    } catch (error) {
      for (const b of blocks) [b.key, b.value].forEach((p) => p?.dispose?.());
      throw error;
    }
    return blocks;
  }

  /**
   * PagedCacheProto bytes (a copy out of wasm memory), compacted: runs of
   * blocks in one format are saved as blocks of up to 64 tokens, losslessly
   * (docs/paged-cache.md).
   */
  toBytes() {
    const runtime = this.#runtime;
    return runtime.scratch(8, (out) => {
      runtime.check(runtime.m._olw_paged_cache_serialize(this.handle, out, out + 4));
      const [ptr, size] = [runtime.u32(out), runtime.u32(out + 4)];
      const copy = runtime.heap.slice(ptr, ptr + size);
      runtime.m._olw_ol_free(ptr);
      return copy;
    });
  }

  /** A new cache of the first `tokens` tokens (all when more): pages shared, none copied. */
  truncate(tokens) {
    if (!Number.isSafeInteger(tokens) || tokens < 0) throw invalidArgument(`PagedCache.truncate: tokens must be a non-negative integer, got ${tokens}`);
    const runtime = this.#runtime;
    return pagedCacheFromValue(runtime, runtime.u32Result((out) => runtime.m._olw_paged_cache_truncate(this.handle, tokens, out)));
  }

  /** A second cache sharing every (immutable) block: appending to one leaves the other as it is. */
  fork() {
    const runtime = this.#runtime;
    return pagedCacheFromValue(runtime, runtime.u32Result((out) => runtime.m._olw_paged_cache_fork(this.handle, out)));
  }

  /**
   * A new cache with runs of blocks in one format merged into blocks of at
   * most maxBlockTokens tokens (copied once, losslessly): less metadata for
   * a cache decoded one token per step. toBytes() does it on its own.
   */
  compact(maxBlockTokens = 64) {
    if (!Number.isSafeInteger(maxBlockTokens) || maxBlockTokens < 1) throw invalidArgument(`PagedCache.compact: maxBlockTokens must be a positive integer, got ${maxBlockTokens}`);
    const runtime = this.#runtime;
    return pagedCacheFromValue(runtime, runtime.u32Result((out) => runtime.m._olw_paged_cache_compact(this.handle, maxBlockTokens, out)));
  }

  /** Releases the cache now (pages shared with other caches stay theirs). Idempotent. */
  dispose() {
    if (!this.#handle) return;
    finalizer.unregister(this.#token);
    this.#runtime.m._olw_value_release(this.#handle);
    this.#handle = 0;
  }

  /** True after dispose(). */
  get disposed() {
    return !this.#handle;
  }

  #count(call) {
    const runtime = this.#runtime;
    return runtime.scratch(8, (out) => {
      runtime.check(call(out));
      return runtime.f64()[out / 8];
    });
  }
}

/**
 * A new cache with the blocks blockIndices converted (others shared):
 * formats { type, scale, zeroPoint } for keys and values, type int8, uint8,
 * int4, uint4, int2, uint2 (scale > 0, or 'auto': calibrated for each page
 * from its values, as appended pages are) or float32, float16, bfloat16.
 * @param {PagedCache} cache @param {number[]} blockIndices
 * @param {{key: {type: string, scale?: number | 'auto', zeroPoint?: number}, value: {type: string, scale?: number | 'auto', zeroPoint?: number}}} formats
 */
export function quantizePagedCache(cache, blockIndices, formats) {
  if (!(cache instanceof PagedCache)) throw invalidArgument('quantizePagedCache: cache must be a PagedCache');
  if (!Array.isArray(blockIndices) || !blockIndices.every(Number.isSafeInteger)) throw invalidArgument('quantizePagedCache: blockIndices must be an array of integers');
  if (formats === null || typeof formats !== 'object' || !formats.key || !formats.value) throw invalidArgument('quantizePagedCache: formats must be { key, value }');
  const key = pageFormat(formats.key, 'quantizePagedCache: key', false);
  const value = pageFormat(formats.value, 'quantizePagedCache: value', false);
  const runtime = currentRuntime();
  const indices = runtime.alloc(8 * blockIndices.length);
  try {
    const view = runtime.view();
    blockIndices.forEach((b, i) => view.setBigInt64(indices + 8 * i, BigInt(b), true));
    return pagedCacheFromValue(runtime, runtime.u32Result((out) => runtime.m._olw_paged_cache_quantize(cache.handle, indices, blockIndices.length,
      key.type, key.scale, key.zeroPoint, value.type, value.scale, value.zeroPoint, out)));
  } finally {
    runtime.free(indices);
  }
}
