// Model inputs accepted by every API that takes a model: serialized bytes
// (Uint8Array, ArrayBuffer, any ArrayBufferView), a path (Node) or URL, or a
// ModelProto object made with 'onnx-light/proto' and @bufbuild/protobuf.
// Also a tiny reader of GraphProto.persistent_bindings straight from the bytes
// (no protobuf library needed), so the JS layer knows a model's bindings.
import { invalidArgument } from './errors.js';
import { readBytes, readIntoWasm } from './runtime.js';

/** True for a ModelProto message object of 'onnx-light/proto'. */
export function isModelProto(model) {
  return model !== null && typeof model === 'object' && model.$typeName === 'onnx.ModelProto';
}

// The generated schema and @bufbuild/protobuf are loaded only when a
// ModelProto object is actually passed (kept out of the browser bundle).
let protoModules = null;
async function proto() {
  if (!protoModules) {
    const schemaPath = './proto/onnx_light_pb.js';
    const protobufPath = '@bufbuild/protobuf';
    protoModules = Promise.all([import(/* @vite-ignore */ schemaPath), import(/* @vite-ignore */ protobufPath)]).then(
      ([schema, protobuf]) => ({ schema: schema.ModelProtoSchema, toBinary: protobuf.toBinary, fromBinary: protobuf.fromBinary }),
    );
  }
  return protoModules;
}

/**
 * Serialized bytes of any accepted model input.
 * @returns {Promise<Uint8Array>}
 */
export async function modelBytes(model, what = 'model') {
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (ArrayBuffer.isView(model)) return new Uint8Array(model.buffer, model.byteOffset, model.byteLength);
  if (typeof model === 'string' || model instanceof URL) return readBytes(model);
  if (isModelProto(model)) {
    const { schema, toBinary } = await proto();
    return toBinary(schema, model);
  }
  throw invalidArgument(`${what}: expected model bytes (Uint8Array/ArrayBuffer), a path or URL, or a ModelProto object`);
}

/** Returns bytes in the kind of the original input: a ModelProto for a ModelProto, else bytes. */
export async function sameKind(original, bytes) {
  if (!isModelProto(original)) return bytes;
  const { schema, fromBinary } = await proto();
  return fromBinary(schema, bytes);
}

/**
 * Loads bytes into an ol_model handle (caller destroys it with
 * _olw_model_destroy). The one copy made here becomes the model's own: its
 * weights are viewed in it, so wasm memory holds the model once.
 */
export function loadModelHandle(runtime, bytes) {
  const ptr = runtime.copyIn(bytes);
  return runtime.u32Result((out) => runtime.m._olw_model_load_owned(ptr, bytes.byteLength, out)); // frees ptr on failure
}

/**
 * Serialized bytes of an ol_model handle, copied out of wasm memory once:
 * the C side lists the serialization as pieces (the weights are pieces that
 * point into the model's own message), so wasm memory never holds a second
 * copy of them.
 */
export function serializeModelHandle(runtime, handle) {
  return runtime.scratch(16, (out) => {
    runtime.check(runtime.m._olw_model_serialize_pieces(handle, out));
    const [pieces, list, count, total] = [0, 1, 2, 3].map((k) => runtime.u32(out + 4 * k));
    try {
      const bytes = new Uint8Array(total);
      const heap = runtime.heap;
      let at = 0;
      for (let i = 0; i < count; i++) {
        const ptr = runtime.u32(list + 8 * i);
        const size = runtime.u32(list + 8 * i + 4);
        bytes.set(heap.subarray(ptr, ptr + size), at);
        at += size;
      }
      return bytes;
    } finally {
      runtime.m._olw_serial_pieces_destroy(pieces);
    }
  });
}

/**
 * Loads any accepted model input into an ol_model handle (the caller destroys
 * it) with its persistent bindings. A local file goes straight into wasm
 * memory, so the process holds the model once instead of twice while loading.
 * @returns {Promise<{handle: number, bindings: {input: string, output: string}[]}>}
 */
export async function loadModelInput(runtime, model, what) {
  const inPlace = typeof model === 'string' || model instanceof URL ? await readIntoWasm(runtime, model) : null;
  if (!inPlace) {
    const bytes = await modelBytes(model, what);
    return { handle: loadModelHandle(runtime, bytes), bindings: persistentBindingsOf(bytes) };
  }
  const { ptr, size } = inPlace;
  // the bindings before loading rearranges the bytes; on malformed bytes the
  // loader's error (the one bytes get) is the one reported
  let bindings, scanError;
  try {
    bindings = persistentBindingsOf(runtime.heap.subarray(ptr, ptr + size));
  } catch (error) {
    scanError = error;
  }
  const handle = runtime.u32Result((out) => runtime.m._olw_model_load_owned(ptr, size, out)); // frees ptr on failure
  if (scanError) {
    runtime.m._olw_model_destroy(handle);
    throw scanError;
  }
  return { handle, bindings };
}

/** Runs use(handle) on a model handle loaded from bytes, destroyed afterwards. */
export function withModelHandle(runtime, bytes, use) {
  const handle = loadModelHandle(runtime, bytes);
  try {
    return use(handle);
  } finally {
    runtime.m._olw_model_destroy(handle);
  }
}

// ------------------------------------------------------------ persistent_bindings from bytes

const textDecoder = new TextDecoder();

/**
 * The fields of a message in bytes[start, end): { field, wire, value
 * (varints) | start, end (length-delimited), from, to (the whole field, key
 * included) }; fixed-width fields (wire 1, 5) have only from and to.
 */
export function* fields(bytes, start, end) {
  let i = start;
  const varint = () => {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (i >= end) throw invalidArgument('malformed model bytes (truncated varint)');
      const b = bytes[i++];
      result |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return result;
      shift += 7n;
    }
  };
  while (i < end) {
    const from = i;
    const key = Number(varint());
    const field = key >>> 3;
    const wire = key & 7;
    if (wire === 0) {
      const value = varint();
      yield { field, wire, value, from, to: i };
    } else if (wire === 1 || wire === 5) {
      i += wire === 1 ? 8 : 4;
      if (i > end) throw invalidArgument('malformed model bytes (truncated field)');
      yield { field, wire, from, to: i };
    } else if (wire === 2) {
      const length = Number(varint());
      const s = i;
      i += length;
      if (i > end) throw invalidArgument('malformed model bytes (truncated field)');
      yield { field, wire, start: s, end: i, from, to: i };
    } else {
      throw invalidArgument(`malformed model bytes (wire type ${wire})`);
    }
  }
}

/**
 * GraphProto.persistent_bindings (field 1001) of serialized ModelProto bytes:
 * [{ input, output }] in declaration order.
 * @param {Uint8Array} bytes
 */
export function persistentBindingsOf(bytes) {
  const result = [];
  for (const f of fields(bytes, 0, bytes.length)) {
    if (f.field !== 7 || f.wire !== 2) continue; // ModelProto.graph
    for (const g of fields(bytes, f.start, f.end)) {
      if (g.field !== 1001 || g.wire !== 2) continue;
      const binding = { input: '', output: '' };
      for (const b of fields(bytes, g.start, g.end)) {
        if (b.wire !== 2) continue;
        if (b.field === 1) binding.input = textDecoder.decode(bytes.subarray(b.start, b.end));
        if (b.field === 2) binding.output = textDecoder.decode(bytes.subarray(b.start, b.end));
      }
      result.push(binding);
    }
  }
  return result;
}
