// PersistentValueState: values retained in wasm memory between runs for the
// inputs bound by GraphProto.persistent_bindings (ol_state). Payloads are
// never copied by the state layer: initial values, retained values and the
// published outputs are the same wasm buffers (pointer identity is testable
// with tensor.wasmByteOffset). Each state owns one ol_context (its event log)
// and every run gets a fresh ol_completion tied to the run's AbortSignal.
import { threadCount } from './env.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { loadModelMaybeBound } from './bind.js';
import { parsePagedFormats, withPagedFormats } from './paged-formats.js';
import { init } from './runtime.js';
import { readEvents } from './events.js';
import { marshalInputs, runWith, wrapOutput } from './values.js';

const CREATE = Symbol('PersistentValueState.create');

export class PersistentValueState {
  #runtime;
  #handle = 0;
  #context = 0;
  #closed = false;
  #running = false;
  #formats = null; // a pagedFormats function kept alive while the state lives

  /**
   * @param {any} model bytes, path/URL or ModelProto with persistent_bindings
   * @param {Record<string, any>} initial one value per bound input (Tensor or { data, dims })
   * options.bindCache: bind the KV cache inside wasm memory first, as
   * InferenceSession.create's option does (initial: emptyCaches(model)).
   * options.pagedFormats: the storage of appended paged-cache pages (rules or
   * a function, see paged-formats.js); options.events: record runtime events.
   * @param {{persistentTensorInitialCapacity?: number, events?: boolean, bindCache?: boolean, pagedFormats?: any, wasmUrl?: any, wasmBinary?: any}} [options]
   */
  static async create(model, initial, options = {}) {
    const { persistentTensorInitialCapacity = 32, events = false } = options;
    const intraOpNumThreads = threadCount(options.intraOpNumThreads, 'intraOpNumThreads');
    const pagedFormats = parsePagedFormats(options.pagedFormats, 'PersistentValueState.create');
    if (!Number.isSafeInteger(persistentTensorInitialCapacity) || persistentTensorInitialCapacity < 0) {
      throw invalidArgument(`persistentTensorInitialCapacity must be a non-negative integer, got ${persistentTensorInitialCapacity}`);
    }
    checkMap(initial, 'PersistentValueState.create: initial');
    const runtime = await init(options);
    const { handle: modelHandle, bindings } = await loadModelMaybeBound(runtime, model, 'PersistentValueState.create', options.bindCache);
    try {
      return createStateFromHandle(runtime, modelHandle, bindings, initial, { persistentTensorInitialCapacity, events: !!events, intraOpNumThreads, pagedFormats });
    } finally {
      runtime.m._olw_model_destroy(modelHandle); // the state's session keeps its own reference
    }
  }

  /** @private use PersistentValueState.create() */
  constructor(key, runtime, handle, context, bindings, options, formats) {
    if (key !== CREATE) throw new TypeError('use PersistentValueState.create() to make a state');
    this.#runtime = runtime;
    this.#handle = handle;
    this.#context = context;
    this.#formats = formats;
    const m = runtime.m;
    const session = m._olw_state_session(handle);
    const names = (count, name) => Object.freeze(Array.from({ length: count }, (_, i) => runtime.string(name(session, i))));
    /** Graph input names (bound ones included). */
    this.inputNames = names(m._olw_session_input_count(session), m._olw_session_input_name);
    this.outputNames = names(m._olw_session_output_count(session), m._olw_session_output_name);
    /** [{ input, output }] from GraphProto.persistent_bindings. */
    this.bindings = Object.freeze(bindings.map((b) => Object.freeze({ ...b })));
    /** The options the state was created with (copied). */
    this.options = Object.freeze({ ...options });
  }

  /**
   * Runs the graph once with the retained values plus `feeds` (the unbound
   * inputs); publishes the bound outputs only when the whole run succeeded.
   * run(feeds, options) or run(feeds, fetches, options); options.signal: AbortSignal.
   * @returns {Promise<Record<string, import('./tensor.js').Tensor>>}
   */
  async run(feeds, fetchesOrOptions, maybeOptions) {
    const [fetches, options] = Array.isArray(fetchesOrOptions)
      ? [fetchesOrOptions, maybeOptions ?? {}]
      : [undefined, fetchesOrOptions ?? {}];
    const runtime = this.#alive('run');
    checkMap(feeds, 'PersistentValueState.run: feeds');
    const outputNames = fetches ?? [...this.outputNames];
    this.#running = true;
    try {
      return runWith(runtime, 0, this.#context, feeds, outputNames, options.signal, 'PersistentValueState.run', this.#handle);
    } catch (error) {
      throw this.#formats ? this.#formats.rethrow(error) : error;
    } finally {
      this.#running = false;
    }
  }

  /**
   * The retained values: { inputName: Tensor | PagedCache } viewing the
   * retained wasm buffers (no copy; a paged cache is a PagedCache sharing
   * the state's blocks). Each access returns new Tensor objects holding a
   * reference; dispose() them when done, since a live view of a cache makes
   * the next append allocate a fresh buffer instead of reusing capacity.
   * Multi-head caches growing in place are stored with spare room per head;
   * they appear here (and in run outputs) as one dense copy per published
   * run, which does not hold the capacity (docs/kv-cache.md).
   */
  get values() {
    const runtime = this.#alive('values');
    const m = runtime.m;
    const count = m._olw_state_value_count(this.#handle);
    const result = {};
    runtime.scratch(4, (out) => {
      for (let i = 0; i < count; i++) {
        const namePtr = m._olw_state_value_name(this.#handle, i);
        runtime.check(m._olw_state_value(this.#handle, namePtr, out));
        result[runtime.string(namePtr)] = wrapOutput(runtime, m._olw_value_retain(runtime.u32(out)));
      }
    });
    return result;
  }

  /**
   * Replaces every retained value (by reference, no copy; caches as
   * PagedCache or { blocks }). Checked whole first: on failure nothing changes.
   */
  async reset(initial) {
    const runtime = this.#alive('reset');
    checkMap(initial, 'PersistentValueState.reset: initial');
    const state = this.#handle;
    const values = marshalInputs(runtime, Object.entries(initial), 'PersistentValueState.reset', (v) => runtime.m._olw_quant_bind_session(v, runtime.m._olw_state_session(state)));
    try {
      runtime.check(runtime.m._olw_state_reset(this.#handle, values.names, values.values, values.count));
    } finally {
      values.release();
    }
  }

  /** Releases the retained values; later calls raise OL_FAILED_PRECONDITION. Returned views stay valid. Idempotent. */
  async close() {
    if (this.#closed) return;
    if (this.#running) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'PersistentValueState.close: a run is in progress');
    this.#closed = true;
    const m = this.#runtime.m;
    const status = m._olw_state_close(this.#handle);
    m._olw_state_destroy(this.#handle);
    m._olw_context_destroy(this.#context);
    this.#formats?.release();
    this.#handle = 0;
    this.#context = 0;
    this.#runtime.check(status);
  }

  /** True after close(). */
  get closed() {
    return this.#closed;
  }

  /**
   * The runtime events recorded by this state's runs (enable with
   * `{ events: true }`): plain objects (see readEvents).
   */
  events() {
    return readEvents(this.#alive('events'), this.#context);
  }

  /** Empties the event log. */
  clearEvents() {
    const runtime = this.#alive('clearEvents');
    runtime.m._olw_context_clear_events(this.#context);
  }

  #alive(what) {
    if (this.#closed) throw new OnnxLightError('OL_FAILED_PRECONDITION', `PersistentValueState.${what}: the state is closed`);
    return this.#runtime;
  }
}

/**
 * Internal: a state on a loaded ol_model handle (the handle stays the
 * caller's). bindings: [{ input, output }] for the `bindings` property.
 */
function createStateFromHandle(runtime, modelHandle, bindings, initial, { persistentTensorInitialCapacity = 32, events = false, intraOpNumThreads = 0, pagedFormats = null } = {}) {
  checkMap(initial, 'PersistentValueState.create: initial');
  const m = runtime.m;
  let handle = 0;
  let formats = null;
  try {
    const values = marshalInputs(runtime, Object.entries(initial), 'PersistentValueState.create', (v) => m._olw_quant_bind_model(v, modelHandle));
    try {
      ({ result: handle, formats } = withPagedFormats(runtime, pagedFormats, (rules, ruleCount, fn) => runtime.scratch(4, (out) => {
        runtime.check(m._olw_state_create(modelHandle, values.names, values.values, values.count, persistentTensorInitialCapacity, intraOpNumThreads,
          rules, ruleCount, fn, out));
        return runtime.u32(out);
      })));
    } finally {
      values.release();
    }
    const context = runtime.u32Result((out) => m._olw_context_create(events ? 1 : 0, out));
    return new PersistentValueState(CREATE, runtime, handle, context, bindings, { persistentTensorInitialCapacity, events }, formats);
  } catch (error) {
    if (handle) m._olw_state_destroy(handle);
    formats?.release();
    throw error;
  }
}

function checkMap(map, what) {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    throw invalidArgument(`${what} must be an object { inputName: Tensor }`);
  }
}
