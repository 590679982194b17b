// The ONNX text syntax: parseModel(text) -> ModelProto bytes, printModel(bytes) -> text.
import { init } from './runtime.js';
import { invalidArgument } from './errors.js';
import { loadModelHandle } from './model.js';

/**
 * Parses the ONNX text syntax into serialized ModelProto bytes.
 * @param {string} text e.g. '<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Add(x, x) }'
 * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
 * @returns {Promise<Uint8Array>}
 */
export async function parseModel(text, options) {
  if (typeof text !== 'string') throw invalidArgument('parseModel: text must be a string');
  const runtime = await init(options);
  const m = runtime.m;
  const source = runtime.cstring(text);
  try {
    return runtime.scratch(12, (out) => {
      runtime.check(m._olw_model_parse_text(source, out));
      const model = runtime.u32(out);
      try {
        runtime.check(m._olw_model_serialize(model, out + 4, out + 8));
        const [ptr, size] = [runtime.u32(out + 4), runtime.u32(out + 8)];
        const bytes = runtime.heap.slice(ptr, ptr + size);
        m._olw_ol_free(ptr);
        return bytes;
      } finally {
        m._olw_model_destroy(model);
      }
    });
  } finally {
    runtime.free(source);
  }
}

/**
 * Prints serialized ModelProto bytes in the ONNX text syntax.
 * @param {Uint8Array | ArrayBuffer} bytes
 * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
 * @returns {Promise<string>}
 */
export async function printModel(bytes, options) {
  if (bytes instanceof ArrayBuffer) bytes = new Uint8Array(bytes);
  if (!(bytes instanceof Uint8Array)) throw invalidArgument('printModel: expected model bytes (Uint8Array)');
  const runtime = await init(options);
  const m = runtime.m;
  return runtime.scratch(8, (out) => {
    const model = loadModelHandle(runtime, bytes);
    try {
      runtime.check(m._olw_model_print_text(model, out + 4));
      const text = runtime.u32(out + 4);
      const result = runtime.string(text);
      m._olw_ol_free(text);
      return result;
    } finally {
      m._olw_model_destroy(model);
    }
  });
}
