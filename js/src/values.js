// Moving named values across the wasm boundary, shared by InferenceSession,
// PersistentValueState and generation:
//  - inputs: a Tensor (wasm tensors pass their handle: no copy; cpu tensors
//    are copied once), or { data: TypedArray, dims } (copied once); for
//    sequence, struct and encoded declarations also arrays (sequences), other
//    plain objects (named structs, fields in insertion order) and
//    EncodedValue or SharedQuantizedValue; paged caches as PagedCache (by
//    handle) or a plain { blocks: [{ start, length, key, value }] } (start
//    and length may be numbers). Anything else (strided views, DataView, ...)
//    raises: nothing is ever copied silently to make it fit;
//  - outputs: ol_value handles wrapped as Tensors viewing wasm memory
//    (sequences: arrays, structs: plain objects, paged caches: PagedCache,
//    encoded values: EncodedValue, compact values: SharedQuantizedValue
//    retaining their parameter set);
//  - AbortSignal -> a fresh ol_completion.
import { OnnxLightError, invalidArgument } from './errors.js';
import { typeOfArray } from './dtypes.js';
import { PagedCache, pagedCacheFromValue } from './paged-cache.js';
import { EncodedValue } from './quantization.js';
import { SharedQuantizedValue, encodedInfo } from './shared-value.js';
import { MAX_DESCRIBED_RANK, Tensor, copyToValue, describeArea, tensorFromValue, valueOfTensor } from './tensor.js';

const OL_VALUE_TENSOR = 0;
const OL_VALUE_SEQUENCE = 1;
const OL_VALUE_OPTIONAL = 3;
const OL_VALUE_ENCODED = 4;
const OL_VALUE_STRUCT = 5;
const MAX_NESTING = 64; // the C runtime's struct nesting bound

function isTensorLike(input) {
  return input !== null && typeof input === 'object' && !Array.isArray(input) && 'data' in input && 'dims' in input;
}

/** A Tensor for any accepted input form (same object for a Tensor). */
export function asTensor(input, name, what) {
  if (input instanceof Tensor) return input;
  if (isTensorLike(input)) {
    const { data, dims } = input;
    if (!ArrayBuffer.isView(data) || data instanceof DataView) {
      throw invalidArgument(`${what}: '${name}'.data must be a typed array, got ${describe(data)}`);
    }
    if (input.strides !== undefined && !isContiguous(input.strides, dims)) {
      throw invalidArgument(`${what}: '${name}' is not contiguous (strides [${input.strides}] for dims [${dims}]); pass a contiguous copy`);
    }
    const type = input.type ?? typeOfArray(data);
    return new Tensor(type, data, dims);
  }
  throw invalidArgument(`${what}: '${name}' is not a Tensor or { data: TypedArray, dims } (got ${describe(input)})`);
}

function isPlainObject(x) {
  return x !== null && typeof x === 'object' && Object.getPrototypeOf(x) === Object.prototype;
}

const BLOCK_FIELDS = ['start', 'length', 'key', 'value'];

/** A plain { blocks: [{ start, length, key, value }] } with exactly those fields: a paged cache. */
function isPlainCache(x) {
  if (!isPlainObject(x) || Object.keys(x).length !== 1 || !Array.isArray(x.blocks)) return false;
  return x.blocks.every((b) => isPlainObject(b) && Object.keys(b).length === 4 && BLOCK_FIELDS.every((f) => f in b));
}

/** The cache's struct fields with numeric starts and lengths as int64 scalars. */
function plainCacheFields(cache, name, what) {
  const scalar = (v, field) => {
    if (v instanceof Tensor) return v;
    if ((typeof v === 'number' && Number.isSafeInteger(v)) || typeof v === 'bigint') return new Tensor('int64', BigInt64Array.of(BigInt(v)), []);
    throw invalidArgument(`${what}: '${name}' block ${field} must be an integer or an int64 scalar Tensor, got ${describe(v)}`);
  };
  return {
    blocks: cache.blocks.map((b, i) => ({
      start: scalar(b.start, `${i} start`), length: scalar(b.length, `${i} length`), key: b.key, value: b.value,
    })),
  };
}

function isContiguous(strides, dims) {
  if (!Array.isArray(strides) || !Array.isArray(dims) || strides.length !== dims.length) return false;
  let expected = 1;
  for (let i = dims.length - 1; i >= 0; i--) {
    if (dims[i] !== 1 && strides[i] !== expected) return false;
    expected *= dims[i];
  }
  return true;
}

function describe(x) {
  if (x === null) return 'null';
  if (Array.isArray(x)) return 'a plain array';
  if (ArrayBuffer.isView(x)) return x.constructor.name;
  return typeof x === 'object' ? (x.constructor?.name ?? 'an object') : typeof x;
}

// runtime areas (Runtime.area) holding a run's tables
const AREA_INPUTS = 1;
const AREA_OUTPUTS = 2;
const AREA_DESCRIBED = 3; // output records (area 0 is what tensor.js describes single values into)
const AREA_RUN_SCOPE = 4; // the ol_run_scope of a run's payload reuse

/** `bytes` for a run's table: the reused area when free, else an allocation (freed by `owned`). */
function tables(runtime, index, bytes, owned) {
  const reused = runtime.claimArea(index, bytes);
  if (reused) {
    owned.push(() => runtime.releaseArea(index));
    return reused;
  }
  const ptr = runtime.alloc(bytes);
  owned.push(() => runtime.free(ptr));
  return ptr;
}

/** A C string for a value name: interned (names repeat run after run), else a copy freed by `owned`. */
function nameOf(runtime, name, owned) {
  const interned = runtime.internedName(name);
  if (interned) return interned;
  const str = runtime.cstring(name);
  owned.push(() => runtime.free(str));
  return str;
}

/**
 * Writes a table of C strings and ol_value handles for `entries` ([name, input]).
 * Returns { names, values, count, release() } (pointers into wasm memory).
 * bind(handle) -> status (optional) resolves a compact EncodedValue's
 * parameter_ref against the receiving session's or state's model.
 * growAxes (optional, Map name -> axis): cpu Tensors fed under these names are
 * copied in with spare rows along the axis (a session's caches, see session.js).
 */
export function marshalInputs(runtime, entries, what, bind = null, growAxes = null) {
  const owned = [];
  const release = () => {
    for (let i = owned.length - 1; i >= 0; i--) owned[i]();
    owned.length = 0;
  };
  try {
    const count = entries.length;
    const table = tables(runtime, AREA_INPUTS, 8 * count, owned);
    const names = table;
    const values = table + 4 * count;
    for (let i = 0; i < count; i++) {
      const name = entries[i][0];
      const input = entries[i][1];
      const axis = growAxes?.get(name);
      const value = axis !== undefined && input instanceof Tensor
        ? tensorValue(runtime, input, owned, axis)
        : inputValue(runtime, input, name, what, owned, 0, bind);
      const str = nameOf(runtime, name, owned);
      const view = runtime.view();
      view.setUint32(names + 4 * i, str, true);
      view.setUint32(values + 4 * i, value, true);
    }
    return { names, values, count, release };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * The ol_value handle of one input (see the header for the accepted forms).
 * Handles made here are released by `owned` (containers retain their items).
 */
function inputValue(runtime, input, name, what, owned, depth, bind) {
  const m = runtime.m;
  if (depth > MAX_NESTING) throw invalidArgument(`${what}: '${name}' nests deeper than ${MAX_NESTING} levels`);
  if (input instanceof Tensor) return tensorValue(runtime, input, owned); // the common case first
  const adopt = (create) => {
    const value = runtime.u32Result((out) => create(out));
    owned.push(() => m._olw_value_release(value));
    return value;
  };
  const table = (count) => {
    const ptr = runtime.alloc(4 * Math.max(count, 1));
    owned.push(() => runtime.free(ptr));
    return ptr;
  };
  if (isTensorLike(input)) return tensorValue(runtime, asTensor(input, name, what), owned);
  if (input instanceof SharedQuantizedValue) return input.handle; // feeds with its retained parameter set
  if (input instanceof PagedCache) return input.handle; // by reference: blocks are immutable
  if (isPlainCache(input)) input = plainCacheFields(input, name, what);
  if (input instanceof EncodedValue) {
    const bytes = runtime.copyIn(input.bytes);
    owned.push(() => runtime.free(bytes));
    const value = adopt((out) => m._olw_encoded_value_parse(bytes, input.bytes.byteLength, out));
    if (bind) runtime.check(bind(value)); // a compact value retains its model's parameter set
    return value;
  }
  if (Array.isArray(input)) {
    const items = input.map((item, i) => inputValue(runtime, item, `${name}[${i}]`, what, owned, depth + 1, bind));
    const ptr = table(items.length);
    items.forEach((h, i) => runtime.view().setUint32(ptr + 4 * i, h, true));
    // tensors of one element type make a typed sequence; anything else an untyped one
    const codes = new Set(items.map((h) => (m._olw_value_kind(h) === OL_VALUE_TENSOR ? m._olw_tensor_dtype(h) : -1)));
    const dtype = codes.size === 1 && !codes.has(-1) ? [...codes][0] : 0;
    return adopt((out) => m._olw_sequence_create(dtype, ptr, items.length, out));
  }
  if (input !== null && typeof input === 'object' && Object.getPrototypeOf(input) === Object.prototype) {
    const fields = Object.entries(input);
    const names = table(fields.length);
    const values = table(fields.length);
    fields.forEach(([field, item], i) => {
      const str = runtime.cstring(field);
      owned.push(() => runtime.free(str));
      runtime.view().setUint32(names + 4 * i, str, true);
      // the field's value first: making it may grow wasm memory, which detaches an earlier view
      const value = inputValue(runtime, item, `${name}.${field}`, what, owned, depth + 1, bind);
      runtime.view().setUint32(values + 4 * i, value, true);
    });
    return adopt((out) => m._olw_struct_create(names, values, fields.length, out));
  }
  throw invalidArgument(
    `${what}: '${name}' is not a Tensor, { data: TypedArray, dims }, array (sequence), plain object (struct), PagedCache or EncodedValue (got ${describe(input)})`,
  );
}

/**
 * A Tensor's handle: its own (wasm tensors) or a copy released by `owned`
 * (cpu tensors; with spare rows along growAxis when given, see copyToValue).
 */
function tensorValue(runtime, tensor, owned, growAxis) {
  const value = valueOfTensor(tensor, runtime);
  if (value) return value;
  const copy = copyToValue(tensor, runtime, growAxis);
  owned.push(() => runtime.m._olw_value_release(copy));
  return copy;
}

/** A table of C strings for output names plus room for the output handles. */
export function marshalOutputs(runtime, outputNames) {
  const owned = [];
  const release = () => {
    for (let i = owned.length - 1; i >= 0; i--) owned[i]();
    owned.length = 0;
  };
  try {
    const n = outputNames.length;
    const table = tables(runtime, AREA_OUTPUTS, 8 * n, owned);
    runtime.heap.fill(0, table, table + 8 * n);
    for (let i = 0; i < n; i++) {
      const str = nameOf(runtime, String(outputNames[i]), owned);
      runtime.view().setUint32(table + 4 * i, str, true);
    }
    return { names: table, values: table + 4 * n, count: n, release };
  } catch (error) {
    release();
    throw error;
  }
}

/**
 * Collects the output handles after a call that returned `status`: wraps
 * them as Tensors ({ name: Tensor }) on success, releases them on failure.
 */
export function collectOutputs(runtime, status, outputNames, out) {
  const m = runtime.m;
  const n = outputNames.length;
  const u32 = runtime.u32s();
  const handles = new Array(n);
  for (let i = 0; i < n; i++) handles[i] = u32[(out.values >>> 2) + i];
  if (status !== 0) {
    const error = runtime.error(status);
    handles.forEach((h) => h && m._olw_value_release(h));
    throw error;
  }
  const results = {};
  try {
    // one call describes every output (records of 4 + MAX_DESCRIBED_RANK doubles)
    const stride = 4 + MAX_DESCRIBED_RANK;
    const records = runtime.area(AREA_DESCRIBED, 8 * stride * Math.max(n, 1));
    m._olw_values_describe(out.values, n, records, MAX_DESCRIBED_RANK);
    for (let i = 0; i < n; i++) {
      const h = handles[i];
      handles[i] = 0; // wrapOutput takes the reference (or releases it on failure)
      const record = records + 8 * stride * i;
      // tensors straight from their record; other kinds (and NULL handles) through wrapOutput
      results[outputNames[i]] = h && runtime.f64()[record / 8] === OL_VALUE_TENSOR
        ? tensorFromValue(runtime, h, record + 8)
        : wrapOutput(runtime, h);
    }
  } catch (error) {
    handles.forEach((h) => h && m._olw_value_release(h));
    throw error;
  }
  return results;
}

/**
 * A run output as JS: Tensor; sequences: arrays; optionals: the value or null;
 * structs: plain objects of their fields; encoded values: EncodedValue.
 * Takes the reference.
 */
export function wrapOutput(runtime, handle) {
  const m = runtime.m;
  const described = describeArea(runtime);
  const kind = m._olw_value_describe(handle, described, MAX_DESCRIBED_RANK);
  if (kind === OL_VALUE_TENSOR) return tensorFromValue(runtime, handle, described);
  const items = [];
  try {
    if (kind === OL_VALUE_SEQUENCE) {
      const n = m._olw_sequence_length(handle);
      for (let i = 0; i < n; i++) items.push(wrapOutput(runtime, m._olw_value_retain(m._olw_sequence_at(handle, i))));
      return items;
    }
    if (kind === OL_VALUE_OPTIONAL) {
      const inner = m._olw_optional_get(handle);
      return inner ? wrapOutput(runtime, m._olw_value_retain(inner)) : null;
    }
    if (kind === OL_VALUE_STRUCT && m._olw_paged_cache_is(handle)) {
      const cache = pagedCacheFromValue(runtime, handle);
      handle = 0;
      return cache;
    }
    if (kind === OL_VALUE_STRUCT) {
      const fields = {};
      const n = m._olw_struct_field_count(handle);
      for (let i = 0; i < n; i++) {
        const namePtr = m._olw_struct_field_name(handle, i);
        const field = wrapOutput(runtime, m._olw_value_retain(m._olw_struct_field(handle, namePtr)));
        items.push(field);
        fields[runtime.string(namePtr)] = field;
      }
      return fields;
    }
    if (kind === OL_VALUE_ENCODED) {
      // a compact value keeps the handle (and so its parameter set) alive
      if (m._olw_encoded_value_parameter_ref(handle)) {
        const shared = new SharedQuantizedValue(runtime, handle);
        handle = 0;
        return shared;
      }
      return encodedFromValue(runtime, handle);
    }
    throw new OnnxLightError('OL_NOT_IMPLEMENTED', `outputs of value kind ${kind} (maps) cannot be read in JS`);
  } catch (error) {
    for (const item of items.flat(Infinity)) item?.dispose?.();
    throw error;
  } finally {
    if (handle) m._olw_value_release(handle);
  }
}

/** An EncodedValue (serialized bytes, logical type, catalogue format when named) of an encoded handle. */
function encodedFromValue(runtime, handle) {
  const m = runtime.m;
  const bytes = runtime.scratch(8, (out) => {
    runtime.check(m._olw_encoded_value_serialize(handle, out, out + 4));
    const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
    const copy = runtime.heap.slice(ptr, ptr + length);
    runtime.free(ptr);
    return copy;
  });
  const { type, dims, format } = encodedInfo(runtime, handle);
  return new EncodedValue(bytes, type, dims, format);
}

/** The reason of an aborted signal as text. */
export function abortReason(signal) {
  const r = signal?.reason;
  return String(r?.message ?? r ?? 'aborted');
}

/** An OL_CANCELLED error for an aborted signal (raised without calling into wasm). */
export function cancelledError(signal, what) {
  return new OnnxLightError('OL_CANCELLED', `${what} cancelled: ${abortReason(signal)}`);
}

/** A fresh ol_completion; cancelled now when the signal is already aborted. Caller destroys it. */
export function createCompletion(runtime, signal) {
  const m = runtime.m;
  const completion = runtime.u32Result((out) => m._olw_completion_create(out));
  if (signal?.aborted) {
    const reason = runtime.cstring(abortReason(signal));
    m._olw_completion_cancel(completion, reason);
    runtime.free(reason);
  }
  return completion;
}

/**
 * One ol_session_run_with / ol_state_run call: feeds marshalled (wasm tensors
 * by handle), a fresh completion for the signal, outputs wrapped as Tensors.
 * `state`: an ol_state handle (then `handle` is ignored) or 0.
 */
export function runWith(runtime, handle, context, feeds, outputNames, signal, what, state = 0, growAxes = null) {
  const m = runtime.m;
  if (signal?.aborted) throw cancelledError(signal, what);
  const session = state ? m._olw_state_session(state) : handle;
  const bind = session ? (v) => m._olw_quant_bind_session(v, session) : null;
  // the feeds' wasm copies come from (and go back to) the run's reusable payloads
  const scope = runtime.claimArea(AREA_RUN_SCOPE, 8);
  const reuse = scope && m._olw_session_scope_begin(session, scope);
  let inputs;
  let outputs;
  let completion = 0;
  try {
    inputs = marshalInputs(runtime, Object.entries(feeds), what, bind, growAxes);
    outputs = marshalOutputs(runtime, outputNames);
    completion = signal ? createCompletion(runtime, signal) : 0;
    const status = state
      ? m._olw_state_run(state, context, inputs.names, inputs.values, inputs.count, outputs.names, outputs.values, outputs.count, completion)
      : context
        ? m._olw_session_run_with(handle, context, inputs.names, inputs.values, inputs.count, outputs.names, outputs.values, outputs.count, completion)
        : m._olw_session_run(handle, inputs.names, inputs.values, inputs.count, outputs.names, outputs.values, outputs.count, completion);
    return collectOutputs(runtime, status, outputNames, outputs);
  } finally {
    inputs?.release();
    outputs?.release();
    if (completion) m._olw_completion_destroy(completion);
    if (reuse) m._olw_session_scope_end(scope);
    if (scope) runtime.releaseArea(AREA_RUN_SCOPE);
  }
}
