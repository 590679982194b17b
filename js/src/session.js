// InferenceSession: a model planned once in wasm, run many times. Shaped like
// onnxruntime-web's InferenceSession (create / run / release, names and
// metadata), so switching needs minimal changes.
import { threadCount } from './env.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { dtypeOfCode } from './dtypes.js';
import { generateSteps, generateTokens } from './generate.js';
import { loadModelMaybeBound } from './bind.js';
import { parsePagedFormats, withPagedFormats } from './paged-formats.js';
import { init } from './runtime.js';
import { readEvents } from './events.js';
import { runWith } from './values.js';

const OL_VALUE_TENSOR = 0;
/* ol_value_kind names of the other kinds (c/include/onnxlight.h) */
const VALUE_KINDS = ['tensor', 'sequence', 'map', 'optional', 'encoded', 'struct'];
const CREATE = Symbol('InferenceSession.create');

export class InferenceSession {
  #runtime;
  #handle;
  #model; // the ol_model (kept for persistent state and generation)
  #threads; // intraOpNumThreads (0: the module's count), also for generation
  #growAxes; // input name -> Concat axis of the caches that grow in place
  #context = 0; // the ol_context of runs and generations when events are on
  #pagedFormats = null; // parsed pagedFormats (generation's default)
  #formats = null; // a pagedFormats function kept alive while the session lives

  /**
   * Loads a model (bytes, a file path in Node, a URL) and plans it.
   * @param {Uint8Array | ArrayBuffer | string | URL} model
   * options.intraOpNumThreads: threads of this session's runs (0 or absent:
   * env.wasm.numThreads; at most the threads the module was loaded with).
   * options.bindCache: bind past_key_values.{i}.key|value <- present.{i}.key|value
   * (as bindCache() does) inside wasm memory, without a second copy of the
   * model, when the model has such inputs and no persistent bindings yet
   * (see persistentBindings for the outcome); emptyCaches(session) then gives
   * the initial caches for generate().
   * options.pagedFormats: the storage of the paged-cache pages that runs and
   * generations append (rules or a function, see paged-formats.js).
   * options.events: record runtime events of runs and generations (events()).
   * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView, intraOpNumThreads?: number, bindCache?: boolean, pagedFormats?: any, events?: boolean}} [options]
   */
  static async create(model, options = {}) {
    const threads = threadCount(options?.intraOpNumThreads, 'intraOpNumThreads');
    const pagedFormats = parsePagedFormats(options?.pagedFormats, 'InferenceSession.create');
    const runtime = await init(options);
    const { handle: modelHandle, bindings } = await loadModelMaybeBound(runtime, model, 'InferenceSession.create', options?.bindCache);
    const m = runtime.m;
    let formats = null;
    let context = 0;
    try {
      let handle;
      ({ result: handle, formats } = withPagedFormats(runtime, pagedFormats, (rules, ruleCount, fn) => runtime.scratch(4, (out) => {
        runtime.check(m._olw_session_create(modelHandle, threads, 1, rules, ruleCount, fn, out)); // caches grow in place (1)
        return runtime.u32(out);
      })));
      if (options?.events) {
        context = runtime.u32Result((out) => m._olw_context_create(1, out));
      }
      const session = new InferenceSession(CREATE, runtime, handle, modelHandle, bindings);
      session.#threads = threads;
      session.#context = context;
      session.#pagedFormats = pagedFormats;
      session.#formats = formats;
      return session;
    } catch (error) {
      if (context) m._olw_context_destroy(context);
      formats?.release();
      m._olw_model_destroy(modelHandle);
      throw error;
    }
  }

  /** @private use InferenceSession.create() */
  constructor(key, runtime, handle, modelHandle, bindings) {
    if (key !== CREATE) throw new TypeError('use InferenceSession.create() to make a session');
    this.#runtime = runtime;
    this.#handle = handle;
    this.#model = modelHandle;
    /** GraphProto.persistent_bindings of the model: [{ input, output }]. */
    this.persistentBindings = Object.freeze(bindings.map((b) => Object.freeze({ ...b })));
    const m = runtime.m;
    const names = (count, name) => Object.freeze(Array.from({ length: count }, (_, i) => runtime.string(name(handle, i))));
    /** @type {readonly string[]} */
    this.inputNames = names(m._olw_session_input_count(handle), m._olw_session_input_name);
    /** @type {readonly string[]} */
    this.outputNames = names(m._olw_session_output_count(handle), m._olw_session_output_name);
    this.inputMetadata = Object.freeze(this.inputNames.map((name, i) => this.#metadata(name, 0, i)));
    // caches a node continues into an output (Concat, Attention, GroupQueryAttention): fed from JS data, they get spare rows
    this.#growAxes = new Map();
    runtime.scratch(8, (out) => this.inputNames.forEach((name, i) => {
      if (m._olw_session_input_grow_axis(handle, i, out)) this.#growAxes.set(name, runtime.i64(out));
    }));
    this.outputMetadata = Object.freeze(this.outputNames.map((name, i) => this.#metadata(name, 1, i)));
  }

  /**
   * Runs the graph. feeds: { inputName: Tensor | { data, dims } }. fetches
   * (optional): output names to compute (default: all). options.signal: an
   * AbortSignal. Resolves to { outputName: Tensor } (views on wasm memory).
   * @returns {Promise<Record<string, Tensor>>}
   */
  async run(feeds, fetchesOrOptions, maybeOptions) {
    // (no array destructuring here: code that V8 has not optimized yet runs it as iteration)
    const isFetches = Array.isArray(fetchesOrOptions) || this.#isFetchMap(fetchesOrOptions);
    const fetches = isFetches ? fetchesOrOptions : undefined;
    const options = isFetches ? (maybeOptions ?? {}) : (fetchesOrOptions ?? {});
    const runtime = this.#alive();
    if (feeds === null || typeof feeds !== 'object') throw invalidArgument('run: feeds must be an object { inputName: Tensor }');
    const outputNames = fetches === undefined ? [...this.outputNames] : Array.isArray(fetches) ? fetches : Object.keys(fetches);
    try {
      return runWith(runtime, this.#handle, this.#context, feeds, outputNames, options.signal, 'run', 0, this.#growAxes);
    } catch (error) {
      throw this.#formats ? this.#formats.rethrow(error) : error;
    }
  }

  /**
   * The runtime events of this session's runs and generations (create the
   * session with `{ events: true }`): see PersistentValueState.events().
   */
  events() {
    const runtime = this.#alive();
    if (!this.#context) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'events: create the session with { events: true }');
    return readEvents(runtime, this.#context);
  }

  /** Empties the event log. */
  clearEvents() {
    const runtime = this.#alive();
    if (this.#context) runtime.m._olw_context_clear_events(this.#context);
  }

  /**
   * Autoregressive generation (see generate.js): int64 Tensor [batch, prompt
   * + generated], or { tokens, caches } with options.returnCaches.
   * @param {Record<string, any>} feeds @param {import('./generate.js').GenerateOptions} [options]
   */
  async generate(feeds, options = {}) {
    this.#alive();
    return generateTokens(this.#generationModel(), feeds, options);
  }

  /** Like generate(), as an async iterator of steps { tokens: bigint[], step }. */
  generateStream(feeds, options = {}) {
    this.#alive();
    return generateSteps(this.#generationModel(), feeds, options);
  }

  /**
   * Internal: what generation needs of this session. handles() gives the
   * ol_model and ol_session (the generator runs models without bindings in
   * this session) and raises once the session is released.
   */
  #generationModel() {
    const handles = () => {
      this.#alive();
      return { model: this.#model, session: this.#handle, context: this.#context };
    };
    return { runtime: this.#runtime, threads: this.#threads, handles, pagedFormats: this.#pagedFormats, formats: this.#formats, bound: this.persistentBindings.length > 0 };
  }

  /** Frees the session (idempotent). Tensors it returned stay valid. */
  async release() {
    if (this.#handle) {
      this.#runtime.m._olw_session_destroy(this.#handle);
      this.#runtime.m._olw_model_destroy(this.#model);
      if (this.#context) this.#runtime.m._olw_context_destroy(this.#context);
      this.#formats?.release();
      this.#handle = 0;
      this.#model = 0;
      this.#context = 0;
    }
  }

  /** ORT's rule: an object whose keys are output names is a fetch map, else options. */
  #isFetchMap(x) {
    if (x === null || typeof x !== 'object') return false;
    const keys = Object.keys(x);
    return keys.length > 0 && keys.every((k) => this.outputNames.includes(k));
  }

  #alive() {
    if (!this.#handle) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'the session was released');
    return this.#runtime;
  }

  /** onnxruntime-web's ValueMetadata for input (0) or output (1) i (non-tensors also say their kind). */
  #metadata(name, isOutput, index) {
    const runtime = this.#runtime;
    return runtime.scratch(20, (out) => {
      runtime.check(runtime.m._olw_session_io_info(this.#handle, isOutput, index, out));
      const [kind, dtype, rank] = [0, 1, 2].map((i) => runtime.i32(out + 4 * i));
      const [dims, params] = [3, 4].map((i) => runtime.u32(out + 4 * i)); // pointers: unsigned
      if (kind !== OL_VALUE_TENSOR) return Object.freeze({ name, isTensor: false, kind: VALUE_KINDS[kind] ?? 'unknown' });
      const type = dtypeOfCode(dtype)?.type ?? runtime.string(runtime.m._olw_dtype_name(dtype));
      const shape = Array.from({ length: Math.max(rank, 0) }, (_, i) => {
        const param = params ? runtime.u32(params + 4 * i) : 0;
        const dim = dims ? runtime.i64(dims + 8 * i) : -1;
        return param ? runtime.string(param) : dim;
      });
      return Object.freeze({ name, isTensor: true, type, shape: Object.freeze(shape) });
    });
  }
}
