// Type and shape inference: inferShapes(model) -> model bytes whose
// graph.value_info records the inferred type of every intermediate value
// (element type; shape with concrete dims and symbolic dim_params), through
// the C function ol_model_infer_shapes. Graph output declarations are
// refined in place; a contradiction with a declaration is an OnnxLightError
// (OL_INVALID_MODEL) naming the value and the node.
import { loadModelHandle, modelBytes, serializeModelHandle } from './model.js';
import { init } from './runtime.js';

/**
 * The model with inferred value_info (the input is not modified).
 * @param {any} model bytes, path/URL or ModelProto (as InferenceSession.create accepts)
 * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
 * @returns {Promise<Uint8Array>} serialized ModelProto
 */
export async function inferShapes(model, options) {
  const runtime = await init(options);
  const bytes = await modelBytes(model, 'inferShapes');
  const m = runtime.m;
  const source = loadModelHandle(runtime, bytes);
  try {
    const inferred = runtime.u32Result((out) => m._olw_model_infer_shapes(source, out));
    try {
      return serializeModelHandle(runtime, inferred);
    } finally {
      m._olw_model_destroy(inferred);
    }
  } finally {
    m._olw_model_destroy(source);
  }
}
