// The wasm module: loaded once per JS realm, then shared by every session and
// tensor. Runtime wraps the Emscripten module object with the few helpers the
// other classes need: status checks, strings, scratch memory, heap views.
//
// Nothing is fetched from anywhere the caller did not name: the .wasm comes
// from `wasmBinary`, else `wasmUrl`, else the package's file (in browsers
// under env.wasm.wasmPaths, by default next to this script).
import { env, threadCount } from './env.js';
import { OnnxLightError } from './errors.js';
import { relaxedSimdSupported } from './relaxed-probe.js';

/** The custom section scripts/relax-wasm.mjs adds to the relaxed-SIMD modules. */
const RELAXED_SECTION = 'onnx-light:relaxed-simd';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

/** @type {{loadFactory(threaded: boolean): Promise<Function>, defaultWasmUrl(threaded: boolean, relaxed: boolean): URL, readBytes(source: any): Promise<Uint8Array>, readInto(source: any, memory: object): Promise<{ptr: number, size: number} | null>, startWorker(): Promise<any>, compile(source: any): Promise<WebAssembly.Module>, checkFiles(threaded: boolean): Promise<void>, threadsSupported(): boolean, cores(): number, moduleOptions(threaded: boolean): object, releaseWorkers(module: any): void}} */
let platform = null;
let loading = null;
let current = null;
const loadHooks = [];

/** Runs fn(runtime) once the wasm module is loaded (now when it already is). */
export function onLoad(fn) {
  if (current) fn(current);
  else loadHooks.push(fn);
}

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
    let threads;
    try {
      threads = threadCount(env.wasm.numThreads, 'env.wasm.numThreads') || platform.cores();
      if (typeof env.wasm.relaxedSimd !== 'boolean') {
        throw new OnnxLightError('OL_INVALID_ARGUMENT', `env.wasm.relaxedSimd must be true or false, got ${String(env.wasm.relaxedSimd)}`);
      }
    } catch (error) {
      return Promise.reject(error);
    }
    loading = Runtime.load(options, threads, env.wasm.relaxedSimd).then(
      (runtime) => {
        current = runtime;
        for (const hook of loadHooks) hook(runtime);
        return runtime;
      },
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

/**
 * A local model file read straight into wasm memory ({ ptr, size }, owned by
 * the caller), or null when the source is not a local file (then readBytes).
 */
export function readIntoWasm(runtime, source) {
  return platform.readInto(source, {
    alloc: (size) => runtime.alloc(size),
    free: (ptr) => runtime.free(ptr),
    heap: () => runtime.heap,
  });
}

/**
 * A model directory on the local file system ({ label, read }: see
 * model-directory.js) for a path or file: URL, or null (then fetched).
 */
export function localDirectory(source) {
  return platform.localDirectory(source);
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

// Interned C strings (input and output names of runs): at most this many, of
// at most MAX_INTERNED_LENGTH characters; other names are copied per call.
const MAX_INTERNED = 4096;
const MAX_INTERNED_LENGTH = 256;

/** The most bytes one allocation can have in wasm32 (size_t is 32 bits). */
export const MAX_WASM_BYTES = 2 ** 32 - 1;

// Exports whose C result is a pointer or a size_t (c/src/wasm/*.c: checked by
// tests/js/wasm-abi.test.mjs). A wasm i32 result reaches JS signed, so a
// pointer at or past 2 GiB of memory would be negative: these are read
// unsigned (>>> 0). Pointers JS passes in need nothing (ToInt32 keeps the bits).
export const UNSIGNED_RESULTS = Object.freeze([
  '_malloc',
  '_olw_context_event_count',
  '_olw_dtype_name',
  '_olw_encoded_value_parameter_ref',
  '_olw_generator_batch',
  '_olw_generator_last_tokens',
  '_olw_last_error',
  '_olw_model_io_count',
  '_olw_model_io_name',
  '_olw_optional_get',
  '_olw_quant_format_count',
  '_olw_quant_method_name',
  '_olw_sequence_at',
  '_olw_sequence_length',
  '_olw_session_input_count',
  '_olw_session_input_name',
  '_olw_session_output_count',
  '_olw_session_output_name',
  '_olw_state_session',
  '_olw_state_value_count',
  '_olw_state_value_name',
  '_olw_status_name',
  '_olw_struct_field',
  '_olw_struct_field_count',
  '_olw_struct_field_name',
  '_olw_tensor_data',
  '_olw_tensor_dims',
  '_olw_tensor_rank',
  '_olw_value_retain',
  '_olw_version',
]);

/** The module with UNSIGNED_RESULTS wrapped; everything else reads through to it. */
function unsignedResults(module) {
  const m = Object.create(module);
  for (const name of UNSIGNED_RESULTS) {
    // module[name] at call time: the glue replaces its lazy stubs by the raw export
    m[name] = (...args) => module[name](...args) >>> 0;
  }
  return m;
}

export class Runtime {
  #heap = null;
  #view = null;
  #f64 = null;
  #u32 = null;
  #names = new Map(); // text -> NUL-terminated copy in wasm memory, kept for the module's life
  #areas = []; // persistent scratch buffers: [ptr, bytes] per area index
  #claimed = []; // area indexes in use by a run's tables

  /**
   * Loads the module with `threads` intra-op threads: the threaded build when
   * threads > 1 and the platform allows it, else the single-threaded one;
   * each in its relaxed-SIMD form when `relaxed` and the engine passes the
   * known-answer probe, else in its SIMD128 form. A caller-supplied .wasm
   * (wasmBinary / wasmUrl) may be any of the four: its imports tell threads
   * (the threaded one imports a shared memory), a custom section relaxed SIMD.
   * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} options
   * @param {number} threads
   * @param {boolean} relaxed
   */
  static async load({ wasmUrl, wasmBinary } = {}, threads = 1, relaxed = true) {
    const supported = platform.threadsSupported();
    const source = wasmBinary ?? wasmUrl ?? platform.defaultWasmUrl(threads > 1 && supported, relaxed && relaxedSimdSupported());
    // the platform's own errors keep their code (OL_NOT_FOUND for a missing file in browsers)
    const cannotLoad = (error) => new OnnxLightError(error instanceof OnnxLightError ? error.code : 'OL_INVALID_ARGUMENT', `cannot load the onnx-light wasm module: ${error.message}`);
    let module;
    try {
      module = await platform.compile(source);
    } catch (error) {
      throw cannotLoad(error);
    }
    const threaded = WebAssembly.Module.imports(module).some((i) => i.kind === 'memory');
    if (threaded && !supported) {
      throw new OnnxLightError('OL_FAILED_PRECONDITION', 'the threaded onnx-light wasm module needs SharedArrayBuffer (a cross-origin isolated page); pass the single-threaded onnx_light.wasm');
    }
    const relaxedModule = WebAssembly.Module.customSections(module, RELAXED_SECTION).length > 0;
    if (relaxedModule && !relaxedSimdSupported()) {
      throw new OnnxLightError('OL_FAILED_PRECONDITION', 'this engine compiles relaxed SIMD but fails the known-answer test of its 8-bit dot products; pass the SIMD128 module (onnx_light.wasm or threads/onnx_light_threads.wasm)');
    }
    try {
      await platform.checkFiles(threaded);
    } catch (error) {
      throw cannotLoad(error);
    }
    const factory = await platform.loadFactory(threaded);
    let failed;
    const failure = new Promise((_, reject) => (failed = reject));
    const ready = factory({
      ...platform.moduleOptions(threaded),
      // Web Workers preloaded for the pool (CMakeLists.txt): one per thread
      // besides the caller, at least one (a pool of none never finishes loading)
      olPoolSize: Math.max(1, threads - 1),
      // Our own instantiation, so the glue never fetches or reads files itself.
      instantiateWasm(imports, receive) {
        WebAssembly.instantiate(module, imports).then(
          (instance) => receive(instance, module),
          (error) => failed(new OnnxLightError('OL_INVALID_ARGUMENT', `cannot load the onnx-light wasm module: ${error.message}`)),
        );
        return {};
      },
      print: (text) => console.log(text),
      printErr: (text) => console.error(text),
    });
    const runtime = new Runtime(await Promise.race([ready, failure]), relaxedModule ? 'relaxed' : 'simd128');
    if (threaded) {
      runtime.check(runtime.m._olw_set_num_threads(threads));
      platform.releaseWorkers(runtime.m);
    }
    return runtime;
  }

  constructor(module, simd) {
    this.m = unsignedResults(module);
    /** 'relaxed' (the relaxed-SIMD module) or 'simd128'. */
    this.simd = simd;
    /** The threaded build's shared memory (its views must be re-derived after growth in any thread). */
    this.memory = module.wasmMemory ?? null;
    this.version = this.string(this.m._olw_version());
  }

  /** Threads runs use by default (1 in the single-threaded module). */
  get threads() {
    return this.memory ? this.m._olw_get_num_threads() : 1;
  }

  /** The current wasm memory (a new ArrayBuffer after every growth). */
  get buffer() {
    return this.memory ? this.memory.buffer : this.m.HEAPU8.buffer;
  }

  /** A Uint8Array over all of wasm memory (a SharedArrayBuffer in the threaded build). */
  get heap() {
    if (!this.memory) return this.m.HEAPU8;
    const buffer = this.memory.buffer;
    if (this.#heap?.buffer !== buffer) this.#heap = new Uint8Array(buffer);
    return this.#heap;
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
    if (!(bytes <= MAX_WASM_BYTES)) throw new OnnxLightError('OL_OUT_OF_MEMORY', `cannot allocate ${bytes} bytes: more than wasm memory can hold (4 GiB)`);
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
    const bytes = this.heap.subarray(ptr, ptr + length);
    // TextDecoder refuses views of a SharedArrayBuffer
    return decoder.decode(this.memory ? bytes.slice() : bytes);
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

  /** A DataView over all of wasm memory (re-derived after growth). */
  view() {
    const buffer = this.buffer;
    if (this.#view?.buffer !== buffer) this.#view = new DataView(buffer);
    return this.#view;
  }

  /**
   * area(index, bytes) for a caller that holds it across other calls (a run's
   * name and value tables): 0 while another caller holds that index (then
   * allocate instead). releaseArea(index) when done.
   */
  claimArea(index, bytes) {
    if (this.#claimed[index]) return 0;
    const ptr = this.area(index, bytes);
    this.#claimed[index] = true;
    return ptr;
  }

  releaseArea(index) {
    this.#claimed[index] = false;
  }

  /** A Uint32Array over all of wasm memory (re-derived after growth): aligned u32 reads. */
  u32s() {
    const buffer = this.buffer;
    if (this.#u32?.buffer !== buffer) this.#u32 = new Uint32Array(buffer);
    return this.#u32;
  }

  /** A Float64Array over all of wasm memory (re-derived after growth). */
  f64() {
    const buffer = this.buffer;
    if (this.#f64?.buffer !== buffer) this.#f64 = new Float64Array(buffer);
    return this.#f64;
  }

  /**
   * A long-lived copy of a name in wasm memory (never freed: names of runs
   * repeat), or 0 for long names and once MAX_INTERNED names are kept (then
   * copy with cstring).
   */
  internedName(text) {
    let ptr = this.#names.get(text);
    if (ptr === undefined) {
      if (this.#names.size >= MAX_INTERNED || text.length > MAX_INTERNED_LENGTH) return 0;
      ptr = this.cstring(text);
      this.#names.set(text, ptr);
    }
    return ptr;
  }

  /**
   * `bytes` (at least) of reused wasm memory, 8-byte aligned, not zeroed: the
   * same pointer until the next area(index) call asks for more. Callers use
   * an index per purpose and finish with it before anything else can ask
   * for the same index (no user code in between).
   */
  area(index, bytes) {
    const a = this.#areas[index];
    if (a && a[1] >= bytes) return a[0];
    const size = Math.max(256, 2 ** Math.ceil(Math.log2(Math.max(bytes, 1))));
    const ptr = this.alloc(size);
    if (a) this.free(a[0]);
    this.#areas[index] = [ptr, size];
    return ptr;
  }

  u32(ptr) {
    return this.view().getUint32(ptr, true);
  }

  /** The u32 (a handle, a count) that `call(out)` stores at out, after checking its status. */
  u32Result(call) {
    return this.scratch(4, (out) => {
      this.check(call(out));
      return this.u32(out);
    });
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
    return this.scratch(40, (ptr) => {
      this.m._olw_allocator_stats(ptr);
      const view = this.view();
      const at = (i) => view.getFloat64(ptr + 8 * i, true);
      return {
        liveBytes: at(0),
        peakBytes: at(1),
        totalAllocations: at(2),
        liveAllocations: at(3),
        pooledBytes: at(4),
        wasmMemoryBytes: this.buffer.byteLength,
      };
    });
  }
}
