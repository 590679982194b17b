// The quantization catalogue (the public C API ol_quant_* through thin
// olw_quant_* exports): profile names, plans, encoded values (serialized
// EncodedValueProto bytes) and the ORT MatMulNBits input export. Names mirror
// the Python API of the seed in camelCase. Every function needs the wasm
// module loaded (`await init()` or any InferenceSession.create first); C
// errors surface as OnnxLightError with the C message.
import { dtypeOf, dtypeOfCode } from './dtypes.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { formatCode, formatOfCode, methods } from './quantization-format.js';
import { currentRuntime } from './runtime.js';
import { SharedQuantizedValue, serializeEncoded } from './shared-value.js';
import { Tensor, copyToValue, tensorFromValue, valueOfTensor } from './tensor.js';

export { QuantizationFormat, formatInfo, parseQuantizationFormat, quantizationFormatName, quantizationFormats } from './quantization-format.js';

function size(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) throw invalidArgument(`${what} must be a non-negative integer, got ${String(value)}`);
  return value;
}

/** Bytes the library allocated (ptr at out, length at out + 4), copied out and freed. */
export function takeBytes(runtime, out) {
  const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
  const copy = runtime.heap.slice(ptr, ptr + length);
  runtime.m._olw_ol_free(ptr);
  return copy;
}

/** Internal: runs fn(handle) with an ol_value of tensor (its own when it lives in wasm memory, else a copy). */
export function withTensorValue(runtime, tensor, fn) {
  const own = valueOfTensor(tensor, runtime);
  const handle = own || copyToValue(tensor, runtime);
  try {
    return fn(handle);
  } finally {
    if (!own) runtime.m._olw_value_release(handle);
  }
}

/** Runs fn(handle) with an encoded value parsed from serialized EncodedValueProto bytes. */
function withEncodedValue(runtime, bytes, fn) {
  const ptr = runtime.copyIn(bytes);
  let handle = 0;
  try {
    handle = runtime.u32Result((out) => runtime.m._olw_encoded_value_parse(ptr, bytes.byteLength, out));
  } finally {
    runtime.free(ptr);
  }
  try {
    return fn(handle);
  } finally {
    runtime.m._olw_value_release(handle);
  }
}

/** Internal: runs fn(modelHandle) with serialized ModelProto bytes loaded (0 when bytes is null). */
export function withModel(runtime, bytes, fn) {
  if (!bytes) return fn(0);
  const ptr = runtime.copyIn(bytes);
  const handle = runtime.u32Result((out) => runtime.m._olw_model_load_owned(ptr, bytes.byteLength, out)); // takes ptr, also on failure
  try {
    return fn(handle);
  } finally {
    runtime.m._olw_model_destroy(handle);
  }
}

/** Internal: a new value handle's serialized EncodedValueProto, releasing the handle. */
function takeEncoded(runtime, handle) {
  try {
    return serializeEncoded(runtime, handle);
  } finally {
    runtime.m._olw_value_release(handle);
  }
}

const plans = new FinalizationRegistry(({ runtime, handle }) => runtime.m._olw_quant_plan_destroy(handle));

/**
 * A quantization plan (owned by wasm memory; dispose() frees it early, else
 * the garbage collector does). Getters return copies.
 */
export class QuantizationPlan {
  #runtime;
  #handle;
  #token = {};

  /** Internal: adopts a plan handle. */
  constructor(runtime, handle) {
    this.#runtime = runtime;
    this.#handle = handle;
    plans.register(this, { runtime, handle }, this.#token);
  }

  /** Internal: the live plan handle. */
  get handle() {
    if (!this.#handle) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'the quantization plan was disposed');
    return this.#handle;
  }

  #info() {
    const r = this.#runtime;
    return r.scratch(64, (out) => {
      r.m._olw_quant_plan_info(this.handle, out);
      const v = r.view();
      return Array.from({ length: 8 }, (_, i) => v.getFloat64(out + 8 * i, true));
    });
  }

  /**
   * The QuantizationFormat member; assignable with a member only (numbers and
   * strings are rejected). Existing blocks are not reconfigured.
   */
  get format() {
    return formatOfCode(this.#info()[0]);
  }

  set format(format) {
    this.#runtime.check(this.#runtime.m._olw_quant_plan_set_format(this.handle, formatCode(format, 'plan.format')));
  }

  get permutationSize() {
    return this.#info()[2];
  }

  /** Width of the transformed row vectors (0: no transform). */
  get transformSize() {
    return this.#info()[3];
  }

  /**
   * A nonzero size must divide the plan's element count; matrices that no
   * longer hold size^2 values are dropped (assign forward / inverse after it).
   */
  set transformSize(size) {
    if (!Number.isSafeInteger(size) || size < 0 || size > 0xffffffff) {
      throw invalidArgument(`plan.transformSize: expected an integer in [0, 2^32), got ${String(size)}`);
    }
    this.#runtime.check(this.#runtime.m._olw_quant_plan_set_transform_size(this.handle, size));
  }

  /** A copy of array which (0 permutation, 1 forward, 2 inverse, 3 outliers), read in place. */
  #array(which) {
    const r = this.#runtime;
    return r.scratch(36, (out) => {
      r.m._olw_quant_plan_arrays(this.handle, out);
      const [ptr, n] = [r.u32(out + 8 * which), r.u32(out + 8 * which + 4)];
      const view = r.view();
      const int64 = which === 0 || which === 3;
      return Array.from({ length: n }, (_, i) => (int64 ? Number(view.getBigInt64(ptr + 8 * i, true)) : view.getFloat64(ptr + 8 * i, true)));
    });
  }

  /** Runs fn(ptr, count) with indices copied into wasm memory as int64. */
  #withIndices(values, what, fn) {
    const r = this.#runtime;
    const data = BigInt64Array.from(values ?? [], (v) => {
      if (typeof v === 'bigint') return v;
      if (!Number.isSafeInteger(v)) throw invalidArgument(`${what}: expected integer indices`);
      return BigInt(v);
    });
    const ptr = r.copyIn(new Uint8Array(data.buffer));
    try {
      return fn(ptr, data.length);
    } finally {
      r.free(ptr);
    }
  }

  #withDoubles(values, what, fn) {
    const r = this.#runtime;
    const data = Float64Array.from(values ?? [], (v) => {
      if (typeof v !== 'number' && typeof v !== 'bigint') throw invalidArgument(`${what}: expected numbers`);
      return Number(v);
    });
    const ptr = r.copyIn(new Uint8Array(data.buffer));
    try {
      return fn(ptr, data.length);
    } finally {
      r.free(ptr);
    }
  }

  /** A copy of the permutation (source indices; empty = identity). */
  get permutation() {
    return this.#array(0);
  }

  set permutation(indices) {
    this.#withIndices(indices, 'plan.permutation', (ptr, n) => this.#runtime.check(this.#runtime.m._olw_quant_plan_set_permutation(this.handle, ptr, n)));
  }

  /** A copy of the forward transform (row-major, transformSize^2 values). */
  get forward() {
    return this.#array(1);
  }

  /** Copies transformSize^2 finite values in (row-major). */
  set forward(values) {
    this.#withDoubles(values, 'plan.forward', (ptr, n) => this.#runtime.check(this.#runtime.m._olw_quant_plan_set_forward(this.handle, ptr, n)));
  }

  /** A copy of the inverse transform. */
  get inverse() {
    return this.#array(2);
  }

  /** Copies transformSize^2 finite values in (row-major); checked against forward when encoding. */
  set inverse(values) {
    this.#withDoubles(values, 'plan.inverse', (ptr, n) => this.#runtime.check(this.#runtime.m._olw_quant_plan_set_inverse(this.handle, ptr, n)));
  }

  /** Sets transformSize and copies both matrices (row-major; size 0 disables the transform). */
  setTransform(size, forward, inverse) {
    this.#withDoubles(forward, 'plan.setTransform forward', (f, nf) =>
      this.#withDoubles(inverse, 'plan.setTransform inverse', (i, ni) =>
        this.#runtime.check(this.#runtime.m._olw_quant_plan_set_transform(this.handle, size, f, nf, i, ni)),
      ),
    );
  }

  /** A copy of the outlier indices (flattened source positions). */
  get outliers() {
    return this.#array(3);
  }

  set outliers(indices) {
    this.#withIndices(indices, 'plan.outliers', (ptr, n) => this.#runtime.check(this.#runtime.m._olw_quant_plan_set_outliers(this.handle, ptr, n)));
  }

  get outlierCount() {
    return this.#info()[4];
  }

  /** The current dims: [K, N] for ORT MatMulNBits plans, else []. */
  #matrixDims() {
    const info = this.#info();
    return info[5] === 2 ? [info[6], info[7]] : [];
  }

  /**
   * A live view of [K, N] (ORT MatMulNBits plans; [] otherwise): reading an
   * element reads the plan, `plan.matrixShape[0] = 64` changes it. Use
   * [...plan.matrixShape] for a plain array.
   */
  get matrixShape() {
    return matrixShapeView(
      () => this.#matrixDims(),
      (dims) => (this.matrixShape = dims),
    );
  }

  /** Copies [K, N] (or [] to clear) in; blocks are not rebuilt (mismatches fail when encoding). */
  set matrixShape(shape) {
    const dims = Array.from(shape ?? [], Number);
    if (dims.length !== 0 && dims.length !== 2) throw invalidArgument(`plan.matrixShape: expected [K, N] or [], got ${dims.length} dimensions`);
    if (!dims.every((d) => Number.isSafeInteger(d) && d >= 0)) throw invalidArgument('plan.matrixShape: dimensions must be non-negative integers');
    this.#runtime.check(this.#runtime.m._olw_quant_plan_set_matrix_shape(this.handle, dims.length, dims[0] ?? 0, dims[1] ?? 0));
  }

  get runCount() {
    return this.#info()[1];
  }

  /** Copies of every run. */
  get runs() {
    return Array.from({ length: this.runCount }, (_, i) => this.run(i));
  }

  /** A copy of run i: { layout, blocks: [{ scale, zeroPoint, offset, codebook }] }. */
  run(i) {
    const r = this.#runtime;
    const handle = this.handle;
    const layout = r.scratch(80, (out) => {
      r.check(r.m._olw_quant_plan_run_layout(handle, i, out));
      const v = r.view();
      const h = Array.from({ length: 10 }, (_, j) => v.getFloat64(out + 8 * j, true));
      return {
        count: h[0], method: methods[h[1]] ?? h[1], bits: h[2], signedCodes: h[3] !== 0, books: h[4],
        entries: h[5], vectorSize: h[6], base3: h[7] !== 0, castType: dtypeOfCode(h[8])?.type ?? h[8], blockCount: h[9],
      };
    });
    const blocks = [];
    for (let j = 0; j < layout.blockCount; j++) {
      blocks.push(
        r.scratch(40, (out) => {
          r.check(r.m._olw_quant_plan_block(handle, i, j, out, out + 32));
          const v = r.view();
          const [scale, zeroPoint, offset, n] = [0, 1, 2, 3].map((k) => v.getFloat64(out + 8 * k, true));
          const book = r.u32(out + 32); // the plan's own codebook, read in place
          const codebook = Array.from({ length: n }, (_, k) => v.getFloat64(book + 8 * k, true));
          return { scale, zeroPoint, offset, codebook };
        }),
      );
    }
    delete layout.blockCount;
    return makeRun(layout, blocks);
  }

  /** Replaces every run with copies of `runs` (the seed's `plan.runs = [...]`). */
  set runs(runs) {
    if (!Array.isArray(runs)) throw invalidArgument('plan.runs: expected an array of runs');
    const r = this.#runtime;
    const headers = [];
    const blockCounts = [];
    const params = [];
    const bookSizes = [];
    const books = [];
    runs.forEach((run, i) => {
      const l = run?.layout;
      if (!l || !Array.isArray(run.blocks)) throw invalidArgument(`plan.runs[${i}]: expected { layout, blocks }`);
      const method = typeof l.method === 'string' ? methods.indexOf(l.method) : l.method;
      if (method < 0) throw invalidArgument(`plan.runs[${i}].layout.method: expected one of ${methods.join(', ')}`);
      const cast = typeof l.castType === 'string' ? dtypeOf(l.castType).code : l.castType;
      headers.push(l.count, method, l.bits, l.signedCodes ? 1 : 0, l.books, l.entries, l.vectorSize, l.base3 ? 1 : 0, cast);
      blockCounts.push(run.blocks.length);
      for (const b of run.blocks) {
        params.push(b.scale, b.zeroPoint, b.offset);
        const book = b.codebook ?? [];
        bookSizes.push(book.length);
        books.push(...book);
      }
    });
    for (const [what, v] of [['layout', headers], ['block', params], ['codebook', books]]) {
      if (v.some((x) => typeof x !== 'number')) throw invalidArgument(`plan.runs: every ${what} field must be a number`);
    }
    const arrays = [headers, blockCounts, params, bookSizes, books].map((a) => r.copyIn(new Uint8Array(Float64Array.from(a).buffer)));
    try {
      r.check(r.m._olw_quant_plan_set_runs(this.handle, runs.length, ...arrays));
    } finally {
      arrays.forEach((ptr) => r.free(ptr));
    }
  }

  /** Replaces run i with a copy of `run`. */
  setRun(i, run) {
    const runs = this.runs;
    if (!Number.isInteger(i) || i < 0 || i >= runs.length) throw invalidArgument(`plan.setRun: run index ${i} out of range (${runs.length} runs)`);
    runs[i] = run;
    this.runs = runs;
  }

  /** Sets the scales of every block of run i (block order). */
  setScales(i, scales) {
    this.#setParameters('_olw_quant_plan_set_scales', i, scales);
  }

  /** Sets the zero points of every block of run i (block order). */
  setZeroPoints(i, zeroPoints) {
    this.#setParameters('_olw_quant_plan_set_zero_points', i, zeroPoints);
  }

  #setParameters(fn, i, values) {
    const r = this.#runtime;
    const data = Float64Array.from(values);
    const ptr = r.copyIn(new Uint8Array(data.buffer));
    try {
      r.check(r.m[fn](this.handle, i, ptr, data.length));
    } finally {
      r.free(ptr);
    }
  }

  /** Frees the plan now. */
  dispose() {
    if (!this.#handle) return;
    plans.unregister(this.#token);
    this.#runtime.m._olw_quant_plan_destroy(this.#handle);
    this.#handle = 0;
  }
}

/**
 * An array-like live view over a plan's matrix shape (the seed's mutable
 * `plan.matrix_shape` view that keeps the plan alive): index reads go to
 * read(), index writes go through write(dims) with the plan's validation.
 */
function matrixShapeView(read, write) {
  const index = (key) => (typeof key === 'string' && /^(0|[1-9]\d*)$/.test(key) ? Number(key) : -1);
  // Node's util.inspect shows a proxy's target: let the target print the live dims
  const target = Object.defineProperty([], Symbol.for('nodejs.util.inspect.custom'), { value: (depth, options, inspect) => inspect(read(), options), configurable: true });
  return new Proxy(target, {
    get(target, key) {
      const dims = read();
      if (key === 'length') return dims.length;
      if (index(key) >= 0) return dims[index(key)];
      const method = Reflect.get(dims, key);
      return typeof method === 'function' ? method.bind(dims) : method;
    },
    set(target, key, value) {
      const dims = read();
      const i = index(key);
      if (i < 0) throw invalidArgument(`plan.matrixShape: only elements can be assigned, not '${String(key)}'`);
      if (i >= dims.length) throw invalidArgument(`plan.matrixShape[${i}]: index out of range for a shape of ${dims.length} dimensions (assign plan.matrixShape = [K, N])`);
      dims[i] = value;
      write(dims);
      return true;
    },
    has: (target, key) => key in read(),
    ownKeys: () => Reflect.ownKeys(read()),
    getOwnPropertyDescriptor(target, key) {
      const d = Reflect.getOwnPropertyDescriptor(read(), key);
      return d && key !== 'length' ? { ...d, configurable: true } : d; // length: non-configurable like the target's
    },
    deleteProperty(target, key) {
      throw invalidArgument(`plan.matrixShape: dimensions cannot be deleted ('${String(key)}')`);
    },
  });
}

const copyBlock = (b) => ({ scale: b.scale, zeroPoint: b.zeroPoint, offset: b.offset, codebook: Array.from(b.codebook ?? []) });

/** A run copy: { layout, blocks } with block(j) / setBlock(j, block) copying. */
function makeRun(layout, blocks) {
  return {
    layout,
    blocks,
    block(j) {
      if (!Number.isInteger(j) || j < 0 || j >= this.blocks.length) throw invalidArgument(`run.block: block index ${j} out of range (${this.blocks.length} blocks)`);
      return copyBlock(this.blocks[j]);
    },
    setBlock(j, block) {
      if (!Number.isInteger(j) || j < 0 || j >= this.blocks.length) throw invalidArgument(`run.setBlock: block index ${j} out of range (${this.blocks.length} blocks)`);
      this.blocks[j] = copyBlock(block);
    },
  };
}

function adoptPlan(runtime, call) {
  return new QuantizationPlan(runtime, runtime.u32Result(call));
}

/** A portable plan: count elements in blocks of blockSize (ORT profiles: makeMatMulNBitsPlan). */
export function makeQuantizationPlan(format, count, { blockSize = 128 } = {}) {
  const code = formatCode(format, 'makeQuantizationPlan');
  size(count, 'count');
  size(blockSize, 'blockSize');
  const runtime = currentRuntime();
  return adoptPlan(runtime, (out) => runtime.m._olw_quant_make_plan(code, count, blockSize, out));
}

/** An ORT MatMulNBits plan for a [k, n] weight. */
export function makeMatMulNBitsPlan(format, k, n, { blockSize = 128 } = {}) {
  const code = formatCode(format, 'makeMatMulNBitsPlan');
  size(k, 'k');
  size(n, 'n');
  size(blockSize, 'blockSize');
  const runtime = currentRuntime();
  return adoptPlan(runtime, (out) => runtime.m._olw_quant_make_matmul_nbits_plan(code, k, n, blockSize, out));
}

/**
 * The storage descriptor of a portable plan (make_quantization_type):
 * serialized StructTypeProto bytes (decode with 'onnx-light/proto').
 */
export function makeQuantizationType(plan) {
  if (!(plan instanceof QuantizationPlan)) throw invalidArgument('makeQuantizationType: expected a QuantizationPlan');
  const runtime = currentRuntime();
  return runtime.scratch(8, (out) => {
    runtime.check(runtime.m._olw_quant_make_type(plan.handle, out, out + 4));
    return takeBytes(runtime, out);
  });
}

/** A self-contained encoded value: serialized EncodedValueProto bytes plus its logical type. */
export class EncodedValue {
  /** @param {Uint8Array} bytes @param {string} type @param {number[]} dims @param {object | null} format a QuantizationFormat member */
  constructor(bytes, type, dims, format) {
    this.bytes = bytes;
    this.type = type;
    this.dims = dims;
    this.format = format;
  }
}

function checkTensor(tensor, what) {
  if (!(tensor instanceof Tensor)) throw invalidArgument(`${what}: expected a Tensor`);
}

/**
 * Calibrates a plan's block scales from a tensor (ol_quant_calibrate: the
 * Quantize operator's rule when scales are omitted; per column and K block
 * for ORT MatMulNBits plans).
 */
export function calibrateQuantizationPlan(plan, tensor) {
  if (!(plan instanceof QuantizationPlan)) throw invalidArgument('calibrateQuantizationPlan: expected a QuantizationPlan');
  checkTensor(tensor, 'calibrateQuantizationPlan');
  const runtime = currentRuntime();
  withTensorValue(runtime, tensor, (handle) => runtime.check(runtime.m._olw_quant_calibrate(plan.handle, handle)));
}

/**
 * Encodes a float tensor with a plan, using the plan's parameters unchanged.
 * @returns {EncodedValue}
 */
export function quantizeTensor(tensor, plan, { name } = {}) {
  checkTensor(tensor, 'quantizeTensor');
  if (!(plan instanceof QuantizationPlan)) throw invalidArgument('quantizeTensor: expected a QuantizationPlan');
  const runtime = currentRuntime();
  const namePtr = name === undefined ? 0 : runtime.cstring(String(name));
  try {
    const encoded = withTensorValue(runtime, tensor, (handle) =>
      runtime.u32Result((out) => runtime.m._olw_quant_quantize(plan.handle, handle, namePtr, out)),
    );
    return new EncodedValue(takeEncoded(runtime, encoded), tensor.type, tensor.dims, plan.format);
  } finally {
    runtime.free(namePtr);
  }
}

function encodedBytes(encoded, what) {
  if (encoded instanceof EncodedValue) return encoded.bytes;
  if (encoded instanceof Uint8Array) return encoded;
  throw invalidArgument(`${what}: expected an EncodedValue${what === 'dequantizeTensor' ? ', a SharedQuantizedValue' : ''} or serialized EncodedValueProto bytes`);
}

/** Internal: model bytes of a `model` option (Uint8Array, ArrayBuffer or a loaded-proto ModelProto object), or null. */
export function modelArg(model, what) {
  if (model === undefined || model === null) return null;
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (model?.$typeName === 'onnx.ModelProto') {
    if (protoLoaded) return protoLoaded.protobuf.toBinary(protoLoaded.schema.ModelProtoSchema, model);
    throw invalidArgument(`${what}: pass the model as serialized ModelProto bytes (the protobuf modules are not loaded yet)`);
  }
  throw invalidArgument(`${what}: model must be a ModelProto object or serialized ModelProto bytes`);
}

/** A cpu Tensor copied from a new tensor handle (the handle is released). */
function takeTensor(runtime, handle) {
  const t = tensorFromValue(runtime, handle);
  const copy = new Tensor(t.type, t.data.slice(), t.dims);
  t.dispose();
  return copy;
}

/**
 * Decodes an encoded value (EncodedValue, SharedQuantizedValue or
 * EncodedValueProto bytes) into a Tensor of its logical type. model
 * (ModelProto bytes) resolves type_ref and, for compact bytes, the shared
 * parameter set named by parameter_ref; a SharedQuantizedValue uses the set
 * it retains.
 */
export function dequantizeTensor(encoded, { model } = {}) {
  const runtime = currentRuntime();
  const m = runtime.m;
  if (encoded instanceof SharedQuantizedValue) {
    return tensorFromValue(runtime, runtime.u32Result((out) => m._olw_quant_dequantize(encoded.handle, 0, out)));
  }
  const bytes = encodedBytes(encoded, 'dequantizeTensor');
  const modelBytes = modelArg(model, 'dequantizeTensor');
  const handle = withEncodedValue(runtime, bytes, (value) =>
    withModel(runtime, modelBytes, (modelHandle) => runtime.u32Result((out) => m._olw_quant_dequantize(value, modelHandle, out))),
  );
  return tensorFromValue(runtime, handle);
}

/**
 * The initializers of a com.microsoft::MatMulNBits node from an ORT MatMulNBits
 * encoded value: { B, scales, zero_points? } (cpu Tensors) and the node
 * attributes { k, n, bits, blockSize }.
 */
export function exportMatMulNBitsInputs(encoded, { model } = {}) {
  const bytes = encodedBytes(encoded, 'exportMatMulNBitsInputs');
  const modelBytes = modelArg(model, 'exportMatMulNBitsInputs');
  const runtime = currentRuntime();
  return withEncodedValue(runtime, bytes, (value) =>
    withModel(runtime, modelBytes, (modelHandle) =>
      runtime.scratch(48, (out) => {
        runtime.check(runtime.m._olw_quant_export_matmul_nbits(value, modelHandle, out, out + 16));
        const handles = [0, 1, 2].map((i) => runtime.u32(out + 4 * i));
        const view = runtime.view();
        const [k, n, bits, blockSize] = [0, 1, 2, 3].map((i) => view.getFloat64(out + 16 + 8 * i, true));
        const result = { k, n, bits, blockSize };
        ['B', 'scales', 'zero_points'].forEach((key, i) => {
          if (handles[i]) result[key] = takeTensor(runtime, handles[i]);
        });
        return result;
      }),
    ),
  );
}

// ------------------------------------------------------------ proto objects

// The generated schema and @bufbuild/protobuf load only when proto objects are
// used (kept out of the browser bundle, as in model.js).
let protoModules = null;
let protoLoaded = null;
function proto() {
  if (!protoModules) {
    const schemaPath = './proto/onnx_light_pb.js';
    const protobufPath = '@bufbuild/protobuf';
    protoModules = Promise.all([import(/* @vite-ignore */ schemaPath), import(/* @vite-ignore */ protobufPath)]).then(([schema, protobuf]) => (protoLoaded = { schema, protobuf }));
  }
  return protoModules;
}

/** Internal: loads { schema, protobuf } (the generated classes and @bufbuild/protobuf). */
export function loadProto() {
  return proto();
}

/** Internal: the protobuf modules when already loaded, else null. */
export function loadedProto() {
  return protoLoaded;
}

/** Runs call(ptr, size, out) on bytes copied into wasm memory; returns the bytes it allocated at out. */
function bytesCall(runtime, bytes, call) {
  const ptr = runtime.copyIn(bytes);
  try {
    return runtime.scratch(8, (out) => {
      runtime.check(call(ptr, bytes.byteLength, out));
      return takeBytes(runtime, out);
    });
  } finally {
    runtime.free(ptr);
  }
}

/**
 * quantize_tensor_proto: a TensorProto object ('onnx-light/proto') encoded
 * with the plan's parameters unchanged, as an EncodedValueProto object.
 * Async: the protobuf modules load on first use.
 */
export async function quantizeTensorProto(tensorProto, plan) {
  if (tensorProto?.$typeName !== 'onnx.TensorProto') throw invalidArgument('quantizeTensorProto: expected a TensorProto object');
  if (!(plan instanceof QuantizationPlan)) throw invalidArgument('quantizeTensorProto: expected a QuantizationPlan');
  const { schema, protobuf } = await proto();
  const runtime = currentRuntime();
  const bytes = bytesCall(runtime, protobuf.toBinary(schema.TensorProtoSchema, tensorProto), (ptr, size, out) =>
    runtime.m._olw_quant_quantize_tensor_proto(plan.handle, ptr, size, out, out + 4),
  );
  return protobuf.fromBinary(schema.EncodedValueProtoSchema, bytes);
}

/**
 * dequantize_tensor_proto: an EncodedValueProto object decoded into a
 * TensorProto object (raw_data, the value's name). model: a ModelProto
 * object or bytes, resolving struct_type.type_ref.
 */
export async function dequantizeTensorProto(encodedProto, { model } = {}) {
  if (encodedProto?.$typeName !== 'onnx.EncodedValueProto') throw invalidArgument('dequantizeTensorProto: expected an EncodedValueProto object');
  const { schema, protobuf } = await proto();
  const runtime = currentRuntime();
  const modelBytes = modelArg(model, 'dequantizeTensorProto');
  const bytes = withModel(runtime, modelBytes, (modelHandle) =>
    bytesCall(runtime, protobuf.toBinary(schema.EncodedValueProtoSchema, encodedProto), (ptr, size, out) =>
      runtime.m._olw_quant_dequantize_tensor_proto(ptr, size, modelHandle, out, out + 4),
    ),
  );
  return protobuf.fromBinary(schema.TensorProtoSchema, bytes);
}
