// PersistentValueState: values retained in wasm memory between runs for the
// inputs bound by GraphProto.persistent_bindings (ol_state). Payloads are
// never copied by the state layer: initial values, retained values and the
// published outputs are the same wasm buffers (pointer identity is testable
// with tensor.wasmByteOffset). Each state owns one ol_context (its event log)
// and every run gets a fresh ol_completion tied to the run's AbortSignal.
import { threadCount } from './env.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { loadModelMaybeBound } from './bind.js';
import { init } from './runtime.js';
import { marshalInputs, runWith, wrapOutput } from './values.js';

const CREATE = Symbol('PersistentValueState.create');
const EVENT_ACTIONS = { 1: 'persistentStorage' };

export class PersistentValueState {
  #runtime;
  #handle = 0;
  #context = 0;
  #closed = false;
  #running = false;

  /**
   * @param {any} model bytes, path/URL or ModelProto with persistent_bindings
   * @param {Record<string, any>} initial one value per bound input (Tensor or { data, dims })
   * options.bindCache: bind the KV cache inside wasm memory first, as
   * InferenceSession.create's option does (initial: emptyCaches(model)).
   * @param {{persistentTensorInitialCapacity?: number, events?: boolean, bindCache?: boolean, wasmUrl?: any, wasmBinary?: any}} [options]
   */
  static async create(model, initial, options = {}) {
    const { persistentTensorInitialCapacity = 32, events = false } = options;
    const intraOpNumThreads = threadCount(options.intraOpNumThreads, 'intraOpNumThreads');
    if (!Number.isSafeInteger(persistentTensorInitialCapacity) || persistentTensorInitialCapacity < 0) {
      throw invalidArgument(`persistentTensorInitialCapacity must be a non-negative integer, got ${persistentTensorInitialCapacity}`);
    }
    checkMap(initial, 'PersistentValueState.create: initial');
    const runtime = await init(options);
    const { handle: modelHandle, bindings } = await loadModelMaybeBound(runtime, model, 'PersistentValueState.create', options.bindCache);
    try {
      return createStateFromHandle(runtime, modelHandle, bindings, initial, { persistentTensorInitialCapacity, events: !!events, intraOpNumThreads });
    } finally {
      runtime.m._olw_model_destroy(modelHandle); // the state's session keeps its own reference
    }
  }

  /** @private use PersistentValueState.create() */
  constructor(key, runtime, handle, context, bindings, options) {
    if (key !== CREATE) throw new TypeError('use PersistentValueState.create() to make a state');
    this.#runtime = runtime;
    this.#handle = handle;
    this.#context = context;
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
    } finally {
      this.#running = false;
    }
  }

  /**
   * The retained values: { inputName: Tensor } viewing the retained wasm
   * buffers (no copy). Each access returns new Tensor objects holding a
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

  /** Replaces every retained value (by reference, no copy). */
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
   * `{ events: true }`): plain objects with the storage counters.
   */
  events() {
    const runtime = this.#alive('events');
    const m = runtime.m;
    const count = m._olw_context_event_count(this.#context);
    return runtime.scratch(64 + 8, (out) => {
      const names = out + 64;
      const events = [];
      for (let i = 0; i < count; i++) {
        runtime.check(m._olw_context_event(this.#context, i, out, names));
        const view = runtime.view();
        const at = (k) => view.getFloat64(out + 8 * k, true);
        events.push({
          action: EVENT_ACTIONS[at(0)] ?? at(0),
          nodeName: runtime.string(runtime.u32(names)),
          opType: runtime.string(runtime.u32(names + 4)),
          storageAllocations: at(1),
          storageAllocatedBytes: at(2),
          storagePrefixCopiedBytes: at(3),
          storageAppendCopiedBytes: at(4),
          storageReuseCount: at(5),
          allocatedBytes: at(6),
          peakBytes: at(7),
        });
      }
      return events;
    });
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
function createStateFromHandle(runtime, modelHandle, bindings, initial, { persistentTensorInitialCapacity = 32, events = false, intraOpNumThreads = 0 } = {}) {
  checkMap(initial, 'PersistentValueState.create: initial');
  const m = runtime.m;
  let handle = 0;
  try {
    const values = marshalInputs(runtime, Object.entries(initial), 'PersistentValueState.create', (v) => m._olw_quant_bind_model(v, modelHandle));
    try {
      handle = runtime.scratch(4, (out) => {
        runtime.check(m._olw_state_create(modelHandle, values.names, values.values, values.count, persistentTensorInitialCapacity, intraOpNumThreads, out));
        return runtime.u32(out);
      });
    } finally {
      values.release();
    }
    const context = runtime.scratch(4, (out) => {
      runtime.check(m._olw_context_create(events ? 1 : 0, out));
      return runtime.u32(out);
    });
    return new PersistentValueState(CREATE, runtime, handle, context, bindings, { persistentTensorInitialCapacity, events });
  } catch (error) {
    if (handle) m._olw_state_destroy(handle);
    throw error;
  }
}

function checkMap(map, what) {
  if (map === null || typeof map !== 'object' || Array.isArray(map)) {
    throw invalidArgument(`${what} must be an object { inputName: Tensor }`);
  }
}
