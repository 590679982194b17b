// The quantization catalogue (c/src/quant through thin olw_quant_* exports):
// profile names, plans, encoded values (serialized EncodedValueProto bytes)
// and the ORT MatMulNBits input export. Names mirror the Python API of the
// seed in camelCase. Every function needs the wasm module loaded
// (`await init()` or any InferenceSession.create first); C errors surface as
// OnnxLightError with the C message.
import { dtypeOf, dtypeOfCode } from './dtypes.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { currentRuntime } from './runtime.js';
import { SharedQuantizedValue } from './shared-value.js';
import { Tensor, tensorFromValue } from './tensor.js';

// Upper-case profile names in catalogue order (the wire contract's enum order,
// c/src/quant/catalogue.h; the tests check it against the C catalogue).
const NAMES = [
  'INT8', 'INT8_PER_CHANNEL', 'INT4', 'GPTQ', 'AWQ', 'EETQ', 'MATMULNBITS', 'Q2_K', 'Q3_K', 'Q4_K',
  'Q5_K', 'Q6_K', 'HQQ', 'EXL2', 'EXL3', 'NF4', 'IQ4_NL', 'BINARY', 'TERNARY', 'TQ1_0', 'TQ2_0',
  'BITNET', 'PARETOQ', 'TEQUILA', 'STQ1_0', 'IQ1_S', 'AQLM', 'QUIP_SHARP', 'SPQR', 'SQUEEZELLM',
  'LOG', 'FP6_LLM', 'FP8_E4M3', 'MXFP4', 'MXFP6', 'NVFP4', 'QUAROT', 'SMOOTHQUANT', 'TILED_FLOAT',
  'COLUMN_MAJOR', 'ORT_MATMULNBITS_INT2', 'ORT_MATMULNBITS_INT4', 'ORT_MATMULNBITS_INT8',
];

/** Upper-case profile name -> numeric format (QuantizationFormat.INT4 === 2). */
export const QuantizationFormat = Object.freeze(Object.fromEntries(NAMES.map((name, i) => [name, i])));

const ORT_BITS = new Map([
  [QuantizationFormat.ORT_MATMULNBITS_INT2, 2],
  [QuantizationFormat.ORT_MATMULNBITS_INT4, 4],
  [QuantizationFormat.ORT_MATMULNBITS_INT8, 8],
]);
const METHODS = ['affine', 'codebook', 'cast'];
const FLOAT_TYPES = new Set(['float32', 'float64', 'float16', 'bfloat16']);

function checkFormat(format, what) {
  if (!Number.isInteger(format) || format < 0 || format >= NAMES.length) {
    throw invalidArgument(`${what}: expected a QuantizationFormat value, got ${String(format)}`);
  }
}

function size(value, what) {
  if (!Number.isSafeInteger(value) || value < 0) throw invalidArgument(`${what} must be a non-negative integer, got ${String(value)}`);
  return value;
}

/** All formats in catalogue order. */
export function quantizationFormats() {
  return NAMES.map((_, i) => i);
}

/** The stable wire name of a format ('int4', 'ort_matmulnbits_int4'). */
export function quantizationFormatName(format) {
  checkFormat(format, 'quantizationFormatName');
  const runtime = currentRuntime();
  return runtime.string(runtime.m._olw_quant_format_name(format));
}

/** The format of a wire name; case-sensitive, throws OnnxLightError for unknown names. */
export function parseQuantizationFormat(name) {
  if (typeof name !== 'string') throw invalidArgument(`parseQuantizationFormat: expected a string, got ${typeof name}`);
  const runtime = currentRuntime();
  const text = runtime.cstring(name);
  try {
    return runtime.scratch(4, (out) => {
      runtime.check(runtime.m._olw_quant_format_parse(text, out));
      return runtime.i32(out);
    });
  } finally {
    runtime.free(text);
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

  /** The numeric QuantizationFormat; assignable (checked when encoding). */
  get format() {
    return this.#info()[0];
  }

  set format(format) {
    checkFormat(format, 'plan.format');
    this.#runtime.check(this.#runtime.m._olw_quant_plan_set_format(this.handle, format));
  }

  get permutationSize() {
    return this.#info()[2];
  }

  get transformSize() {
    return this.#info()[3];
  }

  #array(which) {
    const r = this.#runtime;
    const n = r.m._olw_quant_plan_array_size(this.handle, which);
    return r.scratch(8 * n, (out) => {
      r.m._olw_quant_plan_array(this.handle, which, out);
      return Array.from(new Float64Array(r.buffer.slice(out, out + 8 * n)));
    });
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
    this.#withDoubles(indices, 'plan.permutation', (ptr, n) => this.#runtime.check(this.#runtime.m._olw_quant_plan_set_permutation(this.handle, ptr, n)));
  }

  /** A copy of the forward transform (row-major, transformSize^2 values). */
  get forward() {
    return this.#array(1);
  }

  /** A copy of the inverse transform. */
  get inverse() {
    return this.#array(2);
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
    this.#withDoubles(indices, 'plan.outliers', (ptr, n) => this.#runtime.check(this.#runtime.m._olw_quant_plan_set_outliers(this.handle, ptr, n)));
  }

  get outlierCount() {
    return this.#info()[4];
  }

  /** [K, N] for ORT MatMulNBits plans, else []. */
  get matrixShape() {
    const info = this.#info();
    return info[5] === 2 ? [info[6], info[7]] : [];
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
      r.check(r.m._olw_quant_plan_run_info(handle, i, out));
      const v = r.view();
      const h = Array.from({ length: 10 }, (_, j) => v.getFloat64(out + 8 * j, true));
      return {
        count: h[0], method: METHODS[h[1]] ?? h[1], bits: h[2], signedCodes: h[3] !== 0, books: h[4],
        entries: h[5], vectorSize: h[6], base3: h[7] !== 0, castType: dtypeOfCode(h[8])?.type ?? h[8], blockCount: h[9],
      };
    });
    const blocks = [];
    for (let j = 0; j < layout.blockCount; j++) {
      blocks.push(
        r.scratch(32, (out) => {
          r.check(r.m._olw_quant_plan_block(handle, i, j, out));
          const v = r.view();
          const [scale, zeroPoint, offset, n] = [0, 1, 2, 3].map((k) => v.getFloat64(out + 8 * k, true));
          const codebook = r.scratch(8 * n, (book) => {
            r.check(r.m._olw_quant_plan_block_codebook(handle, i, j, book));
            return Array.from(new Float64Array(r.buffer.slice(book, book + 8 * n)));
          });
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
      const method = typeof l.method === 'string' ? METHODS.indexOf(l.method) : l.method;
      if (method < 0) throw invalidArgument(`plan.runs[${i}].layout.method: expected one of ${METHODS.join(', ')}`);
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
  const handle = runtime.scratch(4, (out) => {
    runtime.check(call(out));
    return runtime.u32(out);
  });
  return new QuantizationPlan(runtime, handle);
}

/** A portable plan: count elements in blocks of blockSize (ORT profiles: makeMatMulNBitsPlan). */
export function makeQuantizationPlan(format, count, { blockSize = 128 } = {}) {
  checkFormat(format, 'makeQuantizationPlan');
  size(count, 'count');
  size(blockSize, 'blockSize');
  const runtime = currentRuntime();
  return adoptPlan(runtime, (out) => runtime.m._olw_quant_make_plan(format, count, blockSize, out));
}

/** An ORT MatMulNBits plan for a [k, n] weight. */
export function makeMatMulNBitsPlan(format, k, n, { blockSize = 128 } = {}) {
  checkFormat(format, 'makeMatMulNBitsPlan');
  size(k, 'k');
  size(n, 'n');
  size(blockSize, 'blockSize');
  const runtime = currentRuntime();
  return adoptPlan(runtime, (out) => runtime.m._olw_quant_make_matmul_nbits_plan(format, k, n, blockSize, out));
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
    const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
    const copy = runtime.heap.slice(ptr, ptr + length);
    runtime.free(ptr);
    return copy;
  });
}

/** A self-contained encoded value: serialized EncodedValueProto bytes plus its logical type. */
export class EncodedValue {
  /** @param {Uint8Array} bytes @param {string} type @param {number[]} dims @param {number} format */
  constructor(bytes, type, dims, format) {
    this.bytes = bytes;
    this.type = type;
    this.dims = dims;
    this.format = format;
  }
}

function tensorBytes(tensor) {
  const data = tensor.data;
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

function checkFloatTensor(tensor, what) {
  if (!(tensor instanceof Tensor)) throw invalidArgument(`${what}: expected a Tensor`);
  if (!FLOAT_TYPES.has(tensor.type)) {
    throw invalidArgument(`${what}: the tensor must be float32, float64, float16 or bfloat16 (got ${tensor.type})`);
  }
}

/**
 * Calibrates a plan's block scales from a tensor (the Quantize operator's
 * rule when scales are omitted). Portable plans: ol_quant_calibrate. ORT
 * MatMulNBits plans: per column and K block, the largest ratio of a positive
 * (negative) value to the codes above (below) the block's zero point.
 */
export function calibrateQuantizationPlan(plan, tensor) {
  checkFloatTensor(tensor, 'calibrateQuantizationPlan');
  const runtime = currentRuntime();
  const bits = ORT_BITS.get(plan.format);
  if (bits === undefined) {
    const ptr = runtime.copyIn(tensorBytes(tensor));
    try {
      runtime.check(runtime.m._olw_quant_calibrate(plan.handle, dtypeOf(tensor.type).code, ptr, tensor.size));
    } finally {
      runtime.free(ptr);
    }
    return;
  }
  if (tensor.type !== 'float32' && tensor.type !== 'float64') {
    throw invalidArgument(`calibrateQuantizationPlan: ORT MatMulNBits calibration reads float32 or float64 (got ${tensor.type})`);
  }
  const [k, n] = plan.matrixShape;
  const dims = tensor.dims;
  if (dims.length !== 2 || dims[0] !== k || dims[1] !== n) {
    throw invalidArgument(`calibrateQuantizationPlan: the plan is for a [${k}, ${n}] matrix, got [${dims.join(', ')}]`);
  }
  const run = plan.run(0);
  const blockSize = run.layout.count;
  const groups = Math.ceil(k / blockSize);
  const maximum = 2 ** bits - 1;
  const v = tensor.data;
  const scales = new Float64Array(n * groups);
  for (let col = 0; col < n; col++) {
    for (let g = 0; g < groups; g++) {
      const zero = run.blocks[col * groups + g].zeroPoint;
      const up = maximum - zero;
      const down = zero;
      let scale = 0;
      for (let row = g * blockSize; row < Math.min((g + 1) * blockSize, k); row++) {
        const value = v[row * n + col];
        if (!Number.isFinite(value)) throw invalidArgument(`Quantization input must be finite (row ${row}, column ${col})`);
        let ratio = 0;
        if (value > 0 && up > 0) ratio = value / up;
        if (value < 0 && down > 0) ratio = -value / down;
        if (ratio > scale) scale = ratio;
      }
      scales[col * groups + g] = scale > 0 && Number.isFinite(scale) ? scale : 1;
    }
  }
  plan.setScales(0, scales);
}

/**
 * Encodes a float tensor with a plan, using the plan's parameters unchanged.
 * @returns {EncodedValue}
 */
export function quantizeTensor(tensor, plan, { name } = {}) {
  checkFloatTensor(tensor, 'quantizeTensor');
  if (!(plan instanceof QuantizationPlan)) throw invalidArgument('quantizeTensor: expected a QuantizationPlan');
  const runtime = currentRuntime();
  const dims = tensor.dims;
  const owned = [];
  try {
    const data = runtime.copyIn(tensorBytes(tensor));
    owned.push(data);
    const dimsPtr = runtime.alloc(8 * Math.max(dims.length, 1));
    owned.push(dimsPtr);
    runtime.setDims(dimsPtr, dims);
    const namePtr = name === undefined ? 0 : runtime.cstring(name);
    if (namePtr) owned.push(namePtr);
    const bytes = runtime.scratch(8, (out) => {
      runtime.check(runtime.m._olw_quant_encode(plan.handle, dtypeOf(tensor.type).code, data, dimsPtr, dims.length, namePtr, out, out + 4));
      const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
      const copy = runtime.heap.slice(ptr, ptr + length);
      runtime.free(ptr);
      return copy;
    });
    return new EncodedValue(bytes, tensor.type, dims, plan.format);
  } finally {
    for (const ptr of owned) runtime.free(ptr);
  }
}

function encodedBytes(encoded, what) {
  if (encoded instanceof EncodedValue) return encoded.bytes;
  if (encoded instanceof Uint8Array) return encoded;
  throw invalidArgument(`${what}: expected an EncodedValue${what === 'dequantizeTensor' ? ', a SharedQuantizedValue' : ''} or serialized EncodedValueProto bytes`);
}

function modelArg(model, what) {
  if (model === undefined || model === null) return null;
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (model?.$typeName === 'onnx.ModelProto' && protoLoaded) return protoLoaded.protobuf.toBinary(protoLoaded.schema.ModelProtoSchema, model);
  throw invalidArgument(`${what}: model must be serialized ModelProto bytes (Uint8Array)`);
}

/** Runs fn(valuePtr, valueSize, modelPtr, modelSize) with both copied into wasm memory. */
function withInputs(runtime, bytes, model, fn) {
  const value = runtime.copyIn(bytes);
  const modelPtr = model ? runtime.copyIn(model) : 0;
  try {
    return fn(value, bytes.byteLength, modelPtr, model ? model.byteLength : 0);
  } finally {
    runtime.free(value);
    runtime.free(modelPtr);
  }
}

/**
 * Decodes an encoded value (EncodedValue, SharedQuantizedValue or
 * EncodedValueProto bytes) into a Tensor of its logical type. model
 * (ModelProto bytes) resolves type_ref and, for compact bytes, the shared
 * parameter set named by parameter_ref; a SharedQuantizedValue uses the set
 * it retains.
 */
export function dequantizeTensor(encoded, { model } = {}) {
  if (encoded instanceof SharedQuantizedValue) {
    const runtime = currentRuntime();
    const handle = runtime.scratch(4, (out) => {
      runtime.check(runtime.m._olw_quant_decode_value(encoded.handle, out));
      return runtime.u32(out);
    });
    return tensorFromValue(runtime, handle);
  }
  const bytes = encodedBytes(encoded, 'dequantizeTensor');
  const modelBytes = modelArg(model, 'dequantizeTensor');
  const runtime = currentRuntime();
  const handle = withInputs(runtime, bytes, modelBytes, (v, vs, mp, ms) =>
    runtime.scratch(4, (out) => {
      runtime.check(runtime.m._olw_quant_decode(v, vs, mp, ms, out));
      return runtime.u32(out);
    }),
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
  const m = runtime.m;
  const handle = withInputs(runtime, bytes, modelBytes, (v, vs, mp, ms) =>
    runtime.scratch(4, (out) => {
      runtime.check(m._olw_quant_export_matmul_nbits(v, vs, mp, ms, out));
      return runtime.u32(out);
    }),
  );
  try {
    const result = {};
    runtime.scratch(32, (attrs) => {
      m._olw_quant_matmul_nbits_attributes(handle, attrs);
      const view = runtime.view();
      [result.k, result.n, result.bits, result.blockSize] = [0, 1, 2, 3].map((i) => view.getFloat64(attrs + 8 * i, true));
    });
    ['B', 'scales', 'zero_points'].forEach((key, i) => {
      runtime.scratch(56, (info) => {
        if (!m._olw_quant_matmul_nbits_tensor(handle, i, info, info + 48, info + 52)) return;
        const view = runtime.view();
        const rank = view.getFloat64(info + 8, true);
        const d = dtypeOfCode(view.getFloat64(info, true));
        const dims = Array.from({ length: rank }, (_, j) => view.getFloat64(info + 16 + 8 * j, true));
        const [ptr, length] = [runtime.u32(info + 48), runtime.u32(info + 52)];
        const raw = runtime.heap.slice(ptr, ptr + length);
        result[key] = new Tensor(d.type, new d.array(raw.buffer, 0, raw.byteLength / d.array.BYTES_PER_ELEMENT), dims);
      });
    });
    return result;
  } finally {
    m._olw_quant_matmul_nbits_destroy(handle);
  }
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

const PROTO_TYPES = new Map([
  [1, ['float32', 'floatData']],
  [11, ['float64', 'doubleData']],
  [10, ['float16', 'int32Data']],
  [16, ['bfloat16', 'int32Data']],
]);

function tensorOfProto(t) {
  const row = PROTO_TYPES.get(t.dataType);
  if (!row) throw invalidArgument(`quantizeTensorProto: '${t.name}' must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (data_type ${t.dataType})`);
  if (t.externalData?.length || t.dataLocation === 1) throw invalidArgument(`quantizeTensorProto: '${t.name}' has external data`);
  const [type, field] = row;
  const d = dtypeOf(type);
  const dims = t.dims.map(Number);
  const count = dims.reduce((a, b) => a * b, 1);
  let data;
  if (t.rawData.length) {
    if (t.rawData.length !== count * d.array.BYTES_PER_ELEMENT) throw invalidArgument(`quantizeTensorProto: '${t.name}' raw_data has ${t.rawData.length} bytes for ${count} elements`);
    const copy = new Uint8Array(t.rawData);
    data = new d.array(copy.buffer, 0, count);
  } else {
    if (t[field].length !== count) throw invalidArgument(`quantizeTensorProto: '${t.name}' holds ${t[field].length} values for ${count} elements`);
    data = d.array.from(t[field]);
  }
  return new Tensor(type, data, dims);
}

/**
 * quantize_tensor_proto: a TensorProto object ('onnx-light/proto') encoded
 * with the plan's parameters unchanged, as an EncodedValueProto object.
 * Async: the protobuf modules load on first use.
 */
export async function quantizeTensorProto(tensorProto, plan) {
  if (tensorProto?.$typeName !== 'onnx.TensorProto') throw invalidArgument('quantizeTensorProto: expected a TensorProto object');
  const { schema, protobuf } = await proto();
  const encoded = quantizeTensor(tensorOfProto(tensorProto), plan, tensorProto.name ? { name: tensorProto.name } : {});
  return protobuf.fromBinary(schema.EncodedValueProtoSchema, encoded.bytes);
}

/**
 * dequantize_tensor_proto: an EncodedValueProto object decoded into a
 * TensorProto object (raw_data, the value's name). model: a ModelProto
 * object or bytes, resolving struct_type.type_ref.
 */
export async function dequantizeTensorProto(encodedProto, { model } = {}) {
  if (encodedProto?.$typeName !== 'onnx.EncodedValueProto') throw invalidArgument('dequantizeTensorProto: expected an EncodedValueProto object');
  const { schema, protobuf } = await proto();
  const bytes = protobuf.toBinary(schema.EncodedValueProtoSchema, encodedProto);
  const modelBytes = model?.$typeName === 'onnx.ModelProto' ? protobuf.toBinary(schema.ModelProtoSchema, model) : model;
  const tensor = dequantizeTensor(bytes, { model: modelBytes });
  const data = tensor.data;
  const rawData = new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength));
  const result = protobuf.create(schema.TensorProtoSchema, {
    name: encodedProto.name,
    dims: tensor.dims.map(BigInt),
    dataType: dtypeOf(tensor.type).code,
    rawData,
  });
  tensor.dispose?.();
  return result;
}
