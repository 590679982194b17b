// The wasm module: loaded once per JS realm, then shared by every session and
// tensor. Runtime wraps the Emscripten module object with the few helpers the
// other classes need: status checks, strings, scratch memory, heap views.
//
// Nothing is fetched from anywhere the caller did not name: the .wasm comes
// from `wasmBinary`, else `wasmUrl`, else the file next to this script.
import { OnnxLightError } from './errors.js';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** @type {{loadFactory(): Promise<Function>, defaultWasmUrl(): URL, readBytes(source: any): Promise<Uint8Array>, startWorker(): Promise<any>, instantiate(source: any, imports: object): Promise<{instance: WebAssembly.Instance, module: WebAssembly.Module}>}} */
let platform = null;
let loading = null;
let current = null;

/** Called once by the entry module (node.js or browser.js). */
export function setPlatform(p) {
  platform = p;
}

/**
 * Loads the wasm module (only the first call's options count) and resolves
 * to the Runtime.
 * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
 */
export function init(options = {}) {
  if (!loading) {
    loading = Runtime.load(options).then(
      (runtime) => (current = runtime),
      (error) => {
        loading = null;
        throw error;
      },
    );
  }
  return loading;
}

/** Bytes of a path or URL the caller named (fs in Node, fetch in browsers). */
export function readBytes(source) {
  return platform.readBytes(source);
}

/** A worker running the generator loop (generator-worker.js / browser-worker.js). */
export function startWorker() {
  return platform.startWorker();
}

/** The loaded Runtime; throws when init() has not finished yet. */
export function currentRuntime() {
  if (!current) {
    throw new OnnxLightError(
      'OL_FAILED_PRECONDITION',
      'the onnx-light wasm module is not loaded yet: await init() or InferenceSession.create() first',
    );
  }
  return current;
}

export class Runtime {
  /** @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} options */
  static async load({ wasmUrl, wasmBinary } = {}) {
    const factory = await platform.loadFactory();
    const source = wasmBinary ?? wasmUrl ?? platform.defaultWasmUrl();
    let failed;
    const failure = new Promise((_, reject) => (failed = reject));
    const ready = factory({
      // Our own instantiation, so the glue never fetches or reads files itself.
      instantiateWasm(imports, receive) {
        platform.instantiate(source, imports).then(
          ({ instance, module }) => receive(instance, module),
          (error) => failed(new OnnxLightError('OL_INVALID_ARGUMENT', `cannot load the onnx-light wasm module: ${error.message}`)),
        );
        return {};
      },
      print: (text) => console.log(text),
      printErr: (text) => console.error(text),
    });
    return new Runtime(await Promise.race([ready, failure]));
  }

  constructor(module) {
    this.m = module;
    this.version = this.string(module._olw_version());
  }

  /** The current wasm memory (a new ArrayBuffer after every growth). */
  get buffer() {
    return this.m.HEAPU8.buffer;
  }

  get heap() {
    return this.m.HEAPU8;
  }

  /** The NUL-terminated UTF-8 string at ptr. */
  string(ptr) {
    return ptr ? this.m.UTF8ToString(ptr) : '';
  }

  /** Throws an OnnxLightError for a non-zero status (message from ol_last_error). */
  check(status) {
    if (status !== 0) throw this.error(status);
  }

  error(status) {
    const code = this.string(this.m._olw_status_name(status));
    return new OnnxLightError(code, this.string(this.m._olw_last_error()));
  }

  /** malloc that throws OL_OUT_OF_MEMORY instead of returning 0. */
  alloc(bytes) {
    const ptr = this.m._malloc(Math.max(bytes, 1));
    if (!ptr) throw new OnnxLightError('OL_OUT_OF_MEMORY', `out of wasm memory allocating ${bytes} bytes`);
    return ptr;
  }

  free(ptr) {
    if (ptr) this.m._free(ptr);
  }

  /** Copies bytes into new wasm memory; the caller frees the pointer. */
  copyIn(bytes) {
    const ptr = this.alloc(bytes.byteLength);
    this.heap.set(bytes, ptr);
    return ptr;
  }

  /** A NUL-terminated UTF-8 copy of text in wasm memory; the caller frees it. */
  cstring(text) {
    const bytes = encoder.encode(text);
    const ptr = this.alloc(bytes.length + 1);
    this.heap.set(bytes, ptr);
    this.heap[ptr + bytes.length] = 0;
    return ptr;
  }

  /** Decodes `length` UTF-8 bytes at ptr (may contain NUL). */
  text(ptr, length) {
    return decoder.decode(this.heap.subarray(ptr, ptr + length));
  }

  /**
   * Runs fn(ptr) with `bytes` of zeroed scratch memory, freed afterwards.
   * @template T @param {number} bytes @param {(ptr: number) => T} fn @returns {T}
   */
  scratch(bytes, fn) {
    const ptr = this.alloc(bytes);
    this.heap.fill(0, ptr, ptr + bytes);
    try {
      return fn(ptr);
    } finally {
      this.free(ptr);
    }
  }

  view() {
    return new DataView(this.buffer);
  }

  u32(ptr) {
    return this.view().getUint32(ptr, true);
  }

  i32(ptr) {
    return this.view().getInt32(ptr, true);
  }

  i64(ptr) {
    return Number(this.view().getBigInt64(ptr, true));
  }

  /** Writes dims as int64 at ptr. */
  setDims(ptr, dims) {
    const view = this.view();
    dims.forEach((d, i) => view.setBigInt64(ptr + 8 * i, BigInt(d), true));
  }

  /** Default allocator statistics (bytes and allocation counts). */
  stats() {
    return this.scratch(32, (ptr) => {
      this.m._olw_allocator_stats(ptr);
      const view = this.view();
      const at = (i) => view.getFloat64(ptr + 8 * i, true);
      return {
        liveBytes: at(0),
        peakBytes: at(1),
        totalAllocations: at(2),
        liveAllocations: at(3),
        wasmMemoryBytes: this.buffer.byteLength,
      };
    });
  }
}
