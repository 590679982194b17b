// InferenceSession: a model planned once in wasm, run many times. Shaped like
// onnxruntime-web's InferenceSession (create / run / release, names and
// metadata), so switching needs minimal changes.
import { OnnxLightError, invalidArgument } from './errors.js';
import { dtypeOfCode } from './dtypes.js';
import { init, readBytes } from './runtime.js';
import { Tensor, copyToValue, tensorFromValue, valueOfTensor } from './tensor.js';

const OL_VALUE_TENSOR = 0;
const OL_VALUE_SEQUENCE = 1;
const OL_VALUE_OPTIONAL = 3;
const CREATE = Symbol('InferenceSession.create');

export class InferenceSession {
  #runtime;
  #handle;

  /**
   * Loads a model (bytes, a file path in Node, a URL) and plans it.
   * @param {Uint8Array | ArrayBuffer | string | URL} model
   * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
   */
  static async create(model, options = {}) {
    const runtime = await init(options);
    const bytes = await modelBytes(model);
    const m = runtime.m;
    const modelHandle = runtime.scratch(4, (out) => {
      const ptr = runtime.copyIn(bytes);
      try {
        runtime.check(m._olw_model_load(ptr, bytes.byteLength, out));
      } finally {
        runtime.free(ptr);
      }
      return runtime.u32(out);
    });
    try {
      const handle = runtime.scratch(4, (out) => {
        runtime.check(m._olw_session_create(modelHandle, out));
        return runtime.u32(out);
      });
      return new InferenceSession(CREATE, runtime, handle);
    } finally {
      m._olw_model_destroy(modelHandle); // the session keeps its own reference
    }
  }

  /** @private use InferenceSession.create() */
  constructor(key, runtime, handle) {
    if (key !== CREATE) throw new TypeError('use InferenceSession.create() to make a session');
    this.#runtime = runtime;
    this.#handle = handle;
    const m = runtime.m;
    const names = (count, name) => Object.freeze(Array.from({ length: count }, (_, i) => runtime.string(name(handle, i))));
    /** @type {readonly string[]} */
    this.inputNames = names(m._olw_session_input_count(handle), m._olw_session_input_name);
    /** @type {readonly string[]} */
    this.outputNames = names(m._olw_session_output_count(handle), m._olw_session_output_name);
    this.inputMetadata = Object.freeze(this.inputNames.map((name, i) => this.#metadata(name, 0, i)));
    this.outputMetadata = Object.freeze(this.outputNames.map((name, i) => this.#metadata(name, 1, i)));
  }

  /**
   * Runs the graph. feeds: { inputName: Tensor }. fetches (optional): output
   * names to compute (default: all). options.signal: an AbortSignal.
   * Resolves to { outputName: Tensor } (views on wasm memory).
   * @returns {Promise<Record<string, Tensor>>}
   */
  async run(feeds, fetchesOrOptions, maybeOptions) {
    const [fetches, options] = Array.isArray(fetchesOrOptions) || this.#isFetchMap(fetchesOrOptions)
      ? [fetchesOrOptions, maybeOptions ?? {}]
      : [undefined, fetchesOrOptions ?? {}];
    const runtime = this.#alive();
    if (feeds === null || typeof feeds !== 'object') throw invalidArgument('run: feeds must be an object { inputName: Tensor }');
    const inputNames = Object.keys(feeds);
    const outputNames = fetches === undefined ? [...this.outputNames] : Array.isArray(fetches) ? fetches : Object.keys(fetches);
    for (const name of inputNames) {
      if (!(feeds[name] instanceof Tensor)) throw invalidArgument(`run: feed '${name}' is not a Tensor`);
    }

    const m = runtime.m;
    const owned = []; // wasm memory and values to free after the run
    const completion = options.signal ? createCompletion(runtime, options.signal) : 0;
    let handles; // output references not yet owned by a Tensor
    try {
      const nIn = inputNames.length;
      const nOut = outputNames.length;
      const table = runtime.alloc(4 * (2 * nIn + 2 * nOut));
      owned.push(() => runtime.free(table));
      runtime.heap.fill(0, table, table + 4 * (2 * nIn + 2 * nOut));
      const [inNames, inValues, outNames, outValues] = [0, nIn, 2 * nIn, 2 * nIn + nOut].map((i) => table + 4 * i);
      inputNames.forEach((name, i) => {
        const str = runtime.cstring(name);
        owned.push(() => runtime.free(str));
        let value = valueOfTensor(feeds[name], runtime);
        if (!value) {
          value = copyToValue(feeds[name], runtime);
          owned.push(() => m._olw_value_release(value));
        }
        runtime.view().setUint32(inNames + 4 * i, str, true);
        runtime.view().setUint32(inValues + 4 * i, value, true);
      });
      outputNames.forEach((name, i) => {
        const str = runtime.cstring(String(name));
        owned.push(() => runtime.free(str));
        runtime.view().setUint32(outNames + 4 * i, str, true);
      });
      const status = m._olw_session_run(this.#handle, inNames, inValues, nIn, outNames, outValues, nOut, completion);
      handles = outputNames.map((_, i) => runtime.u32(outValues + 4 * i));
      if (status !== 0) throw runtime.error(status);
      const results = {};
      outputNames.forEach((name, i) => {
        try {
          results[name] = wrapOutput(runtime, handles[i]);
        } finally {
          handles[i] = 0; // wrapOutput took the reference, or released it on failure
        }
      });
      return results;
    } catch (error) {
      handles?.forEach((h) => h && m._olw_value_release(h));
      throw error;
    } finally {
      for (const release of owned.reverse()) release();
      if (completion) m._olw_completion_destroy(completion);
    }
  }

  /** Frees the session (idempotent). Tensors it returned stay valid. */
  async release() {
    if (this.#handle) {
      this.#runtime.m._olw_session_destroy(this.#handle);
      this.#handle = 0;
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

  /** onnxruntime-web's ValueMetadata for input (0) or output (1) i. */
  #metadata(name, isOutput, index) {
    const runtime = this.#runtime;
    return runtime.scratch(20, (out) => {
      runtime.check(runtime.m._olw_session_io_info(this.#handle, isOutput, index, out));
      const [kind, dtype, rank, dims, params] = [0, 1, 2, 3, 4].map((i) => runtime.i32(out + 4 * i));
      if (kind !== OL_VALUE_TENSOR) return Object.freeze({ name, isTensor: false });
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

// ------------------------------------------------------------ helpers

async function modelBytes(model) {
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (ArrayBuffer.isView(model)) return new Uint8Array(model.buffer, model.byteOffset, model.byteLength);
  if (typeof model === 'string' || model instanceof URL) return readBytes(model);
  throw invalidArgument('InferenceSession.create: expected model bytes, a path or a URL');
}

/** An ol_completion cancelled when signal aborts (already aborted: cancelled now). */
function createCompletion(runtime, signal) {
  const m = runtime.m;
  const completion = runtime.scratch(4, (out) => {
    runtime.check(m._olw_completion_create(out));
    return runtime.u32(out);
  });
  if (signal.aborted) {
    const reason = runtime.cstring(String(signal.reason?.message ?? signal.reason ?? 'aborted'));
    m._olw_completion_cancel(completion, reason);
    runtime.free(reason);
  }
  return completion;
}

/** A run output as a Tensor (sequences: arrays of Tensors; optionals: Tensor or null). */
function wrapOutput(runtime, handle) {
  const m = runtime.m;
  const kind = m._olw_value_kind(handle);
  if (kind === OL_VALUE_TENSOR) return tensorFromValue(runtime, handle);
  try {
    if (kind === OL_VALUE_SEQUENCE) {
      const n = m._olw_sequence_length(handle);
      return Array.from({ length: n }, (_, i) => tensorFromValue(runtime, m._olw_value_retain(m._olw_sequence_at(handle, i))));
    }
    if (kind === OL_VALUE_OPTIONAL) {
      const inner = m._olw_optional_get(handle);
      return inner ? wrapOutput(runtime, m._olw_value_retain(inner)) : null;
    }
    throw new OnnxLightError('OL_NOT_IMPLEMENTED', `outputs of value kind ${kind} cannot be read in JS yet`);
  } finally {
    m._olw_value_release(handle);
  }
}
