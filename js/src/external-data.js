// ONNX external data (TensorProto.data_location = EXTERNAL, the bytes in a
// file beside the model such as model.onnx_data) copied into the model: the
// JS loaders take one buffer, so a model whose initializers live in other
// files gets their bytes as raw_data. Works on the wire bytes (the fields
// scanner of model.js): everything else is copied verbatim, so no protobuf
// library is needed and the model is never decoded.
import { invalidArgument } from './errors.js';
import { fields } from './model.js';

const MODEL_GRAPH = 7;
const GRAPH_INITIALIZER = 5;
const TENSOR_NAME = 8;
const TENSOR_RAW_DATA = 9;
const TENSOR_EXTERNAL_DATA = 13;
const TENSOR_DATA_LOCATION = 14;
const EXTERNAL = 1n;

const utf8 = new TextDecoder();

function varintBytes(value) {
  const out = [];
  let v = BigInt(value);
  while (v >= 0x80n) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return Uint8Array.from(out);
}

/** A length-delimited field: key, length, then the parts. */
function message(field, parts) {
  const length = parts.reduce((n, p) => n + p.length, 0);
  return [varintBytes((field << 3) | 2), varintBytes(length), ...parts];
}

function concat(parts) {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.length;
  }
  return out;
}

/** { name, location, offset, length } of an initializer whose data is external, else null. */
function externalEntry(bytes, tensor) {
  let external = false;
  let name = '';
  const entry = {};
  for (const f of fields(bytes, tensor.start, tensor.end)) {
    if (f.field === TENSOR_DATA_LOCATION && f.wire === 0) external = f.value === EXTERNAL;
    if (f.field === TENSOR_NAME && f.wire === 2) name = utf8.decode(bytes.subarray(f.start, f.end));
    if (f.field === TENSOR_EXTERNAL_DATA && f.wire === 2) {
      let key = '';
      let value = '';
      for (const kv of fields(bytes, f.start, f.end)) {
        if (kv.wire !== 2) continue;
        if (kv.field === 1) key = utf8.decode(bytes.subarray(kv.start, kv.end));
        if (kv.field === 2) value = utf8.decode(bytes.subarray(kv.start, kv.end));
      }
      entry[key] = value;
    }
  }
  return external ? { name, ...entry } : null;
}

/** True when an initializer of the model keeps its data in an external file. */
export function hasExternalData(bytes) {
  for (const m of fields(bytes, 0, bytes.length)) {
    if (m.field !== MODEL_GRAPH || m.wire !== 2) continue;
    for (const g of fields(bytes, m.start, m.end)) {
      if (g.field === GRAPH_INITIALIZER && g.wire === 2 && externalEntry(bytes, g)) return true;
    }
  }
  return false;
}

/**
 * The model bytes with every external initializer's data read (through
 * readFile(location) -> Uint8Array, once per file) and stored as raw_data;
 * the external_data entries and data_location are dropped.
 * @param {Uint8Array} bytes
 * @param {(location: string, tensorName: string) => Promise<Uint8Array>} readFile
 */
export async function inlineExternalData(bytes, readFile) {
  const files = new Map();
  const parts = [];
  for (const m of fields(bytes, 0, bytes.length)) {
    if (m.field !== MODEL_GRAPH || m.wire !== 2) {
      parts.push(bytes.subarray(m.from, m.to));
      continue;
    }
    const graph = [];
    for (const g of fields(bytes, m.start, m.end)) {
      const entry = g.field === GRAPH_INITIALIZER && g.wire === 2 ? externalEntry(bytes, g) : null;
      if (!entry) {
        graph.push(bytes.subarray(g.from, g.to));
        continue;
      }
      const { name, location } = entry;
      if (!location || location.startsWith('/') || location.split(/[\\/]/).includes('..')) {
        throw invalidArgument(`initializer '${name}': external data location '${location ?? ''}' must be a relative path inside the model's folder`);
      }
      if (!files.has(location)) files.set(location, await readFile(location, name));
      const data = files.get(location);
      const offset = Number(entry.offset ?? 0);
      const length = entry.length === undefined ? data.length - offset : Number(entry.length);
      if (!(Number.isSafeInteger(offset) && Number.isSafeInteger(length) && offset >= 0 && length >= 0 && offset + length <= data.length)) {
        throw invalidArgument(`initializer '${name}': external bytes ${entry.offset ?? 0}+${entry.length ?? 'rest'} are outside '${location}' (${data.length} bytes)`);
      }
      const tensor = [];
      for (const t of fields(bytes, g.start, g.end)) {
        if (t.field === TENSOR_EXTERNAL_DATA || t.field === TENSOR_DATA_LOCATION || t.field === TENSOR_RAW_DATA) continue;
        tensor.push(bytes.subarray(t.from, t.to));
      }
      tensor.push(...message(TENSOR_RAW_DATA, [data.subarray(offset, offset + length)]));
      graph.push(...message(GRAPH_INITIALIZER, tensor));
    }
    parts.push(...message(MODEL_GRAPH, graph));
  }
  return concat(parts);
}
