// Element types as data: one row per ORT type string, with the ONNX
// TensorProto.DataType code (= ol_dtype), bits per element and the typed
// array that holds the data in JS. Sub-byte types (int4/uint4) are packed two
// per byte, low nibble first, in a Uint8Array (as onnxruntime-web does).

const ROWS = [
  // type        code bits  array
  ['float32', 1, 32, Float32Array],
  ['uint8', 2, 8, Uint8Array],
  ['int8', 3, 8, Int8Array],
  ['uint16', 4, 16, Uint16Array],
  ['int16', 5, 16, Int16Array],
  ['int32', 6, 32, Int32Array],
  ['int64', 7, 64, BigInt64Array],
  ['string', 8, 0, Array],
  ['bool', 9, 8, Uint8Array],
  ['float16', 10, 16, Uint16Array],
  ['float64', 11, 64, Float64Array],
  ['uint32', 12, 32, Uint32Array],
  ['uint64', 13, 64, BigUint64Array],
  ['bfloat16', 16, 16, Uint16Array],
  ['float8e4m3fn', 17, 8, Uint8Array],
  ['float8e4m3fnuz', 18, 8, Uint8Array],
  ['float8e5m2', 19, 8, Uint8Array],
  ['float8e5m2fnuz', 20, 8, Uint8Array],
  ['uint4', 21, 4, Uint8Array],
  ['int4', 22, 4, Uint8Array],
];

/** @typedef {{type: string, code: number, bits: number, array: any}} DType */

const BY_TYPE = new Map(ROWS.map(([type, code, bits, array]) => [type, { type, code, bits, array }]));
const BY_CODE = new Map([...BY_TYPE.values()].map((d) => [d.code, d]));

/** The row for an ORT type string; throws TypeError for unknown types. */
export function dtypeOf(type) {
  const d = BY_TYPE.get(type);
  if (!d) throw new TypeError(`unsupported tensor type '${type}' (expected one of ${[...BY_TYPE.keys()].join(', ')})`);
  return d;
}

/** The row for an ONNX data type code, or undefined. */
export function dtypeOfCode(code) {
  return BY_CODE.get(code);
}

/** The type string inferred from a typed array (new Tensor(data, dims)). */
export function typeOfArray(data) {
  if (globalThis.Float16Array && data instanceof globalThis.Float16Array) return 'float16';
  if (data instanceof Float32Array) return 'float32';
  if (data instanceof Float64Array) return 'float64';
  if (data instanceof Int32Array) return 'int32';
  if (data instanceof BigInt64Array) return 'int64';
  if (data instanceof Uint8Array) return 'uint8';
  if (data instanceof Int8Array) return 'int8';
  if (data instanceof Uint16Array) return 'uint16';
  if (data instanceof Int16Array) return 'int16';
  if (data instanceof Uint32Array) return 'uint32';
  if (data instanceof BigUint64Array) return 'uint64';
  if (Array.isArray(data) && data.every((x) => typeof x === 'string')) return 'string';
  if (Array.isArray(data) && data.every((x) => typeof x === 'boolean')) return 'bool';
  throw new TypeError('cannot infer the tensor type from the data; pass the type first');
}

/** Number of array elements that hold `size` tensor elements. */
export function storageLength(d, size) {
  return d.bits === 4 ? Math.ceil(size / 2) : size;
}

/** Bytes that hold `size` elements (0 for strings). */
export function storageBytes(d, size) {
  return Math.ceil((size * d.bits) / 8);
}
