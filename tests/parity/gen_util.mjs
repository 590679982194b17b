// Helpers for tests/parity/random_graphs.mjs: a seeded PRNG, float16 bits,
// one-node ModelProto builders (generated @bufbuild classes) and quantization
// packing.
import { create, toBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType, ModelProtoSchema, TensorProto_DataType } from 'onnx-light/proto';

export const DT = {
  float32: TensorProto_DataType.FLOAT,
  float16: TensorProto_DataType.FLOAT16,
  int64: TensorProto_DataType.INT64,
  int32: TensorProto_DataType.INT32,
  uint8: TensorProto_DataType.UINT8,
  int8: TensorProto_DataType.INT8,
  int4: TensorProto_DataType.INT4,
  uint4: TensorProto_DataType.UINT4,
};

/** mulberry32: deterministic floats in [0, 1). */
export function rng(seed) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    uniform: (lo, hi) => lo + (hi - lo) * next(),
    int: (lo, hi) => lo + Math.floor(next() * (hi - lo + 1)), // inclusive
    pick: (list) => list[Math.floor(next() * list.length)],
    bool: () => next() < 0.5,
  };
}

const f32 = new Float32Array(1);
const u32 = new Uint32Array(f32.buffer);
/** float32 -> float16 bits, round to nearest even. */
export function f32ToF16(v) {
  f32[0] = v;
  const x = u32[0];
  const sign = (x >>> 16) & 0x8000;
  const exp = (x >>> 23) & 0xff;
  let mant = x & 0x7fffff;
  if (exp === 0xff) return sign | 0x7c00 | (mant ? 0x200 : 0);
  let e = exp - 127 + 15;
  if (e >= 0x1f) return sign | 0x7c00;
  if (e <= 0) {
    if (e < -10) return sign;
    mant |= 0x800000;
    const shift = 14 - e;
    let h = mant >>> shift;
    const rem = mant & ((1 << shift) - 1);
    const half = 1 << (shift - 1);
    if (rem > half || (rem === half && h & 1)) h++;
    return sign | h;
  }
  let h = (e << 10) | (mant >>> 13);
  const rem = mant & 0x1fff;
  if (rem > 0x1000 || (rem === 0x1000 && h & 1)) h++;
  return sign | h;
}
export function f16ToF32(h) {
  const s = h & 0x8000 ? -1 : 1;
  const e = (h >>> 10) & 0x1f;
  const m = h & 0x3ff;
  if (e === 0) return s * m * 2 ** -24;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (1 + m / 1024) * 2 ** (e - 15);
}

/** A tensor spec: { type, dims, data } with data a typed array. */
export function floatTensor(type, dims, values) {
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === 'float16') {
    const d = new Uint16Array(n);
    for (let i = 0; i < n; i++) d[i] = f32ToF16(values(i));
    return { type, dims, data: d };
  }
  const d = new Float32Array(n);
  for (let i = 0; i < n; i++) d[i] = values(i);
  return { type, dims, data: d };
}
export function randFloat(r, type, dims, lo = -1, hi = 1) {
  return floatTensor(type, dims, () => r.uniform(lo, hi));
}
export function intTensor(type, dims, values) {
  const n = dims.reduce((a, b) => a * b, 1);
  if (type === 'int64') return { type, dims, data: BigInt64Array.from({ length: n }, (_, i) => BigInt(values(i))) };
  if (type === 'int32') return { type, dims, data: Int32Array.from({ length: n }, (_, i) => values(i)) };
  if (type === 'uint8') return { type, dims, data: Uint8Array.from({ length: n }, (_, i) => values(i)) };
  throw new Error(`intTensor: ${type}`);
}
/** int4/uint4 values (logical dims), packed two per byte, low nibble first. */
export function nibbleTensor(type, dims, values) {
  const n = dims.reduce((a, b) => a * b, 1);
  const d = new Uint8Array((n + 1) >> 1);
  for (let i = 0; i < n; i++) d[i >> 1] |= (values(i) & 15) << (i & 1 ? 4 : 0);
  return { type, dims, data: d };
}
export function toFloat64(t) {
  const n = t.data.length;
  const out = new Float64Array(n);
  for (let i = 0; i < n; i++) out[i] = t.type === 'float16' ? f16ToF32(t.data[i]) : Number(t.data[i]);
  return out;
}

function attribute(name, v) {
  const A = AttributeProto_AttributeType;
  if (typeof v === 'object' && v !== null && 'f' in v) return { name, type: A.FLOAT, f: v.f };
  if (Array.isArray(v)) return { name, type: A.INTS, ints: v.map(BigInt) };
  if (typeof v === 'string') return { name, type: A.STRING, s: new TextEncoder().encode(v) };
  return { name, type: A.INT, i: BigInt(v) };
}
export const F = (f) => ({ f });

function valueInfo(name, type, dims) {
  const shape = dims ? { dim: dims.map((d) => ({ value: { case: 'dimValue', value: BigInt(d) } })) } : undefined;
  return { name, type: { value: { case: 'tensorType', value: { elemType: DT[type], shape } } } };
}

/**
 * One-node model. inputs: array of { name, type, dims, data, init? } or null
 * (omitted optional input); outputs: [{ name, type }]; feeds are the non-init inputs.
 */
export function oneNodeModel({ op, domain = '', attrs = {}, inputs, outputs, opset = 21 }) {
  const node = {
    opType: op,
    domain,
    name: 'n0',
    input: inputs.map((i) => (i ? i.name : '')),
    output: outputs.map((o) => (o ? o.name : '')),
    attribute: Object.entries(attrs)
      .filter(([, v]) => v !== undefined)
      .map(([k, v]) => attribute(k, v)),
  };
  // drop trailing omitted inputs
  while (node.input.length && node.input[node.input.length - 1] === '') node.input.pop();
  const present = inputs.filter(Boolean);
  const initializer = present
    .filter((i) => i.init)
    .map((i) => ({
      name: i.name,
      dims: i.dims.map(BigInt),
      dataType: DT[i.type],
      rawData: new Uint8Array(i.data.buffer, i.data.byteOffset, i.data.byteLength),
    }));
  const model = create(ModelProtoSchema, {
    irVersion: 10n,
    producerName: 'onnx-light random_graphs',
    opsetImport: [
      { domain: '', version: BigInt(opset) },
      { domain: 'com.microsoft', version: 1n },
    ],
    graph: {
      name: op,
      node: [node],
      input: present.filter((i) => !i.init).map((i) => valueInfo(i.name, i.type, i.dims)),
      output: outputs.filter(Boolean).map((o) => valueInfo(o.name, o.type)),
      initializer,
    },
  });
  const feeds = Object.fromEntries(present.filter((i) => !i.init).map((i) => [i.name, i]));
  return { bytes: toBinary(ModelProtoSchema, model), feeds, outputs: outputs.filter(Boolean).map((o) => o.name) };
}
