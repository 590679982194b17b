// Tensor: an element type, dims and data, shaped like onnxruntime-web's.
//
// A tensor lives in one of two places:
//  - 'cpu': JS owns a typed array (or string[]); a run copies it into wasm
//    memory once and frees the copy afterwards;
//  - 'wasm': the payload is inside wasm memory, held by an ol_value handle.
//    Tensor.alloc() makes one, and every run output is one. Feeding it to a
//    run passes the handle: no copy. `data` is a typed-array view re-derived
//    from the current memory buffer, so it survives memory growth (but a view
//    kept in a variable does not: read `tensor.data` again after a run).
// dispose() frees wasm storage early; a FinalizationRegistry frees it when a
// tensor is garbage collected without dispose().
import { OnnxLightError, invalidArgument } from './errors.js';
import { dtypeOf, dtypeOfCode, storageBytes, storageLength, typeOfArray } from './dtypes.js';
import { currentRuntime } from './runtime.js';

/** Internal: ranks olw_value_describe reports in one call (larger ones: olw_tensor_dims). */
export const MAX_DESCRIBED_RANK = 16;

/** Internal: the runtime area (index 0) olw_value_describe writes to. */
export function describeArea(runtime) {
  return runtime.area(0, 8 * (3 + MAX_DESCRIBED_RANK));
}

// First constructor argument of tensors adopting an ol_value (internal).
const WASM_VALUE = Symbol('wasm value');

const finalizer = new FinalizationRegistry(({ runtime, handle }) => runtime.m._olw_value_release(handle));

/** Internal: a Tensor taking ownership of an ol_value reference. */
export let tensorFromValue;
/** Internal: the ol_value handle of a wasm tensor, or 0 for a cpu tensor. */
export let valueOfTensor;
/** Internal: a new ol_value holding a copy of a cpu tensor (caller releases). */
export let copyToValue;

export class Tensor {
  #type;
  #dims;
  #size;
  #cpuData = null;
  #runtime = null;
  #handle = 0;
  #ptr = 0;
  #view = null;
  #disposed = false;

  /**
   * new Tensor(type, data, dims?) or new Tensor(data, dims?).
   * @param {string | any} typeOrData
   * @param {any} [dataOrDims]
   * @param {readonly number[]} [maybeDims]
   */
  constructor(typeOrData, dataOrDims, maybeDims) {
    if (typeOrData === WASM_VALUE) {
      this.#adopt(dataOrDims);
      return;
    }
    const typed = typeof typeOrData === 'string';
    const type = typed ? typeOrData : typeOfArray(typeOrData);
    let data = typed ? dataOrDims : typeOrData;
    let dims = typed ? maybeDims : dataOrDims;
    const d = dtypeOf(type);
    data = toArrayData(d, data);
    dims = checkDims(dims ?? [data.length]);
    const size = dims.reduce((a, b) => a * b, 1);
    if (data.length !== storageLength(d, size)) {
      throw invalidArgument(
        `tensor data has ${data.length} elements but dims [${dims}] need ${storageLength(d, size)} (${type})`,
      );
    }
    this.#type = type;
    this.#dims = dims;
    this.#size = size;
    this.#cpuData = data;
  }

  /**
   * A zeroed tensor in wasm memory: `data` is a view on it and runs read it
   * in place. Needs the module loaded (await init() or InferenceSession.create()).
   * @param {string} type @param {readonly number[]} dims
   */
  static alloc(type, dims) {
    const d = dtypeOf(type);
    if (d.bits === 0) throw invalidArgument(`Tensor.alloc: '${type}' tensors cannot be views on wasm memory`);
    checkDims(dims);
    const runtime = currentRuntime();
    return tensorFromValue(runtime, runtime.u32(createValue(runtime, d, dims)));
  }

  /** Element type ('float32', 'int64', ...). */
  get type() {
    return this.#type;
  }

  /** Dimensions (a fresh copy). */
  get dims() {
    return [...this.#dims];
  }

  /** Number of elements. */
  get size() {
    return this.#size;
  }

  /** 'cpu' (JS-owned data) or 'wasm' (a view on wasm memory). */
  get location() {
    return this.#runtime ? 'wasm' : 'cpu';
  }

  /** Byte offset of the payload in wasm memory ('wasm' tensors), else undefined. */
  get wasmByteOffset() {
    this.#checkAlive();
    if (this.#runtime) this.#makeDense();
    return this.#runtime ? this.#ptr : undefined;
  }

  /** The elements: a typed array (string[] for 'string'). */
  get data() {
    this.#checkAlive();
    if (!this.#runtime) return this.#cpuData;
    this.#makeDense();
    const buffer = this.#runtime.buffer;
    if (this.#view === null || this.#view.buffer !== buffer) {
      const d = dtypeOf(this.#type);
      this.#view = new d.array(buffer, this.#ptr, storageLength(d, this.#size));
    }
    return this.#view;
  }

  /** ORT compatibility: the data, as a Promise. */
  async getData() {
    return this.data;
  }

  /** Frees wasm storage now (no-op for cpu tensors besides dropping data). */
  dispose() {
    if (this.#disposed) return;
    this.#disposed = true;
    if (this.#runtime) {
      finalizer.unregister(this);
      this.#runtime.m._olw_value_release(this.#handle);
      this.#handle = 0;
      this.#ptr = 0;
      this.#view = null;
    }
    this.#cpuData = null;
  }

  #adopt({ runtime, handle, type, dims, size, ptr }) {
    this.#type = type;
    this.#dims = dims;
    this.#size = size;
    this.#runtime = runtime;
    this.#handle = handle;
    this.#ptr = ptr;
    finalizer.register(this, { runtime, handle }, this);
  }

  /* A KV cache a session let grow in place (present.* with spare rows, fed
   * back as past.* without copying the prefix) has no dense view: the first
   * look at its elements swaps in a dense copy. */
  #makeDense() {
    if (this.#ptr !== -1) return;
    const runtime = this.#runtime;
    const m = runtime.m;
    const dense = runtime.u32Result((out) => m._olw_value_densify(this.#handle, out));
    finalizer.unregister(this);
    m._olw_value_release(this.#handle);
    this.#handle = dense;
    this.#ptr = m._olw_tensor_data(dense);
    this.#view = null;
    finalizer.register(this, { runtime, handle: dense }, this);
  }

  #checkAlive() {
    if (this.#disposed) throw new OnnxLightError('OL_FAILED_PRECONDITION', `${this.#describe()} was disposed`);
  }

  #describe() {
    return `tensor ${this.#type}[${this.#dims}]`;
  }

  static {
    /* Wraps an ol_value tensor handle (takes the reference). Payloads that a
     * typed array cannot view (strings, misaligned views into model bytes) are
     * copied out and the handle is released. */
    const wrap = (runtime, handle, described = 0) => {
      const m = runtime.m;
      // one olw_value_describe call (already made by the caller when `described`)
      const at = described || describeArea(runtime);
      if (!described) m._olw_value_describe(handle, at, MAX_DESCRIBED_RANK);
      const f64 = runtime.f64();
      const base = at / 8;
      const code = f64[base];
      const rank = f64[base + 1];
      const ptr = f64[base + 2];
      const d = dtypeOfCode(code);
      const type = d ? d.type : runtime.string(m._olw_dtype_name(code));
      if (!d) {
        m._olw_value_release(handle);
        throw new OnnxLightError('OL_NOT_IMPLEMENTED', `tensors of type ${type} cannot be read in JS`);
      }
      let dims;
      if (rank >= 0) {
        dims = new Array(rank);
        for (let i = 0; i < rank; i++) dims[i] = f64[base + 3 + i];
      } else {
        const dimsPtr = m._olw_tensor_dims(handle);
        dims = Array.from({ length: m._olw_tensor_rank(handle) }, (_, i) => runtime.i64(dimsPtr + 8 * i));
      }
      let size = 1;
      for (let i = 0; i < dims.length; i++) size *= dims[i];
      if (d.bits === 0 || (ptr !== -1 && ptr % d.array.BYTES_PER_ELEMENT !== 0)) {
        const data = d.bits === 0 ? readStrings(runtime, handle, size) : copyOut(runtime, d, ptr, size);
        m._olw_value_release(handle);
        return new Tensor(type, data, dims);
      }
      return new Tensor(WASM_VALUE, { runtime, handle, type, dims, size, ptr });
    };
    tensorFromValue = wrap;

    valueOfTensor = (tensor, runtime) => {
      tensor.#checkAlive();
      if (tensor.#runtime && tensor.#runtime !== runtime) {
        throw invalidArgument(`${tensor.#describe()} belongs to another onnx-light module instance`);
      }
      return tensor.#handle;
    };

    copyToValue = (tensor, runtime, growAxis) => {
      tensor.#checkAlive();
      const d = dtypeOf(tensor.#type);
      const grown = growAxis === undefined ? null : copyToGrownValue(runtime, d, tensor.#dims, tensor.#cpuData, growAxis);
      if (grown) return grown;
      const created = createValue(runtime, d, tensor.#dims);
      const handle = runtime.u32(created);
      const payload = runtime.u32(created + 4);
      const data = tensor.#cpuData;
      if (d.bits === 0) {
        try {
          data.forEach((s, i) => writeString(runtime, handle, i, s));
        } catch (error) {
          runtime.m._olw_value_release(handle);
          throw error;
        }
      } else if (data.length) {
        const bytes = new Uint8Array(data.buffer, data.byteOffset, storageBytes(d, tensor.#size));
        runtime.heap.set(bytes, payload);
      }
      return handle;
    };
  }
}

// ------------------------------------------------------------ helpers

function checkDims(dims) {
  if (!Array.isArray(dims) || !dims.every((x) => Number.isSafeInteger(x) && x >= 0)) {
    throw invalidArgument(`tensor dims must be an array of non-negative integers, got ${JSON.stringify(dims)}`);
  }
  return [...dims];
}

/** JS data as the typed array (or string[]) the type stores. */
function toArrayData(d, data) {
  if (d.bits === 0) {
    if (!Array.isArray(data)) throw invalidArgument("a 'string' tensor's data must be an array of strings");
    return data;
  }
  if (data instanceof d.array) return data;
  // Where the platform has Float16Array, float16 data may be one (same bytes as the Uint16Array codes).
  if (d.type === 'float16' && globalThis.Float16Array && data instanceof globalThis.Float16Array) return data;
  if (Array.isArray(data)) {
    if (d.type === 'bool') return Uint8Array.from(data, (x) => (x ? 1 : 0));
    if (d.array === BigInt64Array || d.array === BigUint64Array) return d.array.from(data, (x) => BigInt(x));
    if ((d.array === Uint16Array && d.type !== 'uint16') || (d.array === Uint8Array && d.type !== 'uint8')) {
      // float16/bfloat16/fp8 codes and packed 4-bit pairs: numbers are ambiguous
      throw invalidArgument(`creating a '${d.type}' tensor from a number array is not supported; pass a ${d.array.name}`);
    }
    return d.array.from(data);
  }
  throw invalidArgument(`a '${d.type}' tensor's data must be a ${d.array.name} or an array`);
}

/**
 * A new zeroed tensor value: returns where its handle (u32) and then its
 * payload pointer (u32) are written, read them at once (caller releases the handle).
 */
function createValue(runtime, d, dims) {
  // the runtime area 0: [handle, data] (int32) then the dims (int64)
  const out = runtime.area(0, 8 + 8 * dims.length);
  const view = runtime.view();
  for (let i = 0; i < dims.length; i++) {
    view.setUint32(out + 8 + 8 * i, dims[i] % 2 ** 32, true);
    view.setUint32(out + 12 + 8 * i, Math.floor(dims[i] / 2 ** 32), true);
  }
  runtime.check(runtime.m._olw_tensor_new(d.code, out + 8, dims.length, out));
  return out;
}

/**
 * A cache fed to a session whose Concat appends to it (session.js): the copy
 * gets spare rows along `axis` (ol_tensor_create_grown), so the first run
 * appends in place instead of copying the imported cache again. Returns the
 * handle, or null when C finds the tensor not worth growing.
 */
function copyToGrownValue(runtime, d, dims, data, axis) {
  const rank = dims.length;
  if (axis < 0) axis += rank;
  if (axis < 0 || axis >= rank) return null; // a feed of another rank: the run reports it
  const out = runtime.area(0, 16 + 8 * rank);
  const view = runtime.view();
  for (let i = 0; i < rank; i++) {
    view.setUint32(out + 16 + 8 * i, dims[i] % 2 ** 32, true);
    view.setUint32(out + 20 + 8 * i, Math.floor(dims[i] / 2 ** 32), true);
  }
  runtime.check(runtime.m._olw_tensor_new_grown(d.code, out + 16, rank, axis, out));
  const handle = runtime.u32(out);
  if (!handle) return null;
  const payload = runtime.u32(out + 4);
  const capacity = runtime.u32(out + 8);
  // rows of the same outer index stay together, `capacity` rows apart
  let outer = 1;
  for (let i = 0; i < axis; i++) outer *= dims[i];
  const block = storageBytes(d, data.length / outer);
  const stride = (block / dims[axis]) * capacity;
  const bytes = new Uint8Array(data.buffer, data.byteOffset, block * outer);
  for (let o = 0; o < outer; o++) runtime.heap.set(bytes.subarray(o * block, (o + 1) * block), payload + o * stride);
  return handle;
}

function copyOut(runtime, d, ptr, size) {
  const bytes = runtime.heap.slice(ptr, ptr + storageBytes(d, size));
  return new d.array(bytes.buffer, 0, storageLength(d, size));
}

function readStrings(runtime, handle, size) {
  return runtime.scratch(8, (out) =>
    Array.from({ length: size }, (_, i) => {
      runtime.check(runtime.m._olw_tensor_get_string(handle, i, out, out + 4));
      return runtime.text(runtime.u32(out), runtime.u32(out + 4));
    }),
  );
}

function writeString(runtime, handle, index, text) {
  if (typeof text !== 'string') throw invalidArgument(`string tensor element ${index} is not a string`);
  const bytes = new TextEncoder().encode(text);
  const ptr = runtime.copyIn(bytes);
  try {
    runtime.check(runtime.m._olw_tensor_set_string(handle, index, ptr, bytes.length));
  } finally {
    runtime.free(ptr);
  }
}
