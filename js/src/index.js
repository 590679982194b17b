// The public API, shared by the Node entry (node.js) and the browser bundle
// (browser.js), which only differ in how they load files.
import { currentRuntime, init as loadRuntime } from './runtime.js';

export { env } from './env.js';
export { OnnxLightError } from './errors.js';
export { InferenceSession } from './session.js';
export { Tensor } from './tensor.js';
export { parseModel, printModel } from './text.js';
export { inferShapes } from './infer.js';
export { version } from './version.js';
export { bindCache, bindPersistent, emptyCaches } from './bind.js';
export { toPagedModel, withPagedCacheInitializers } from './paged.js';
export { PagedCache, quantizePagedCache } from './paged-cache.js';
export { PersistentValueState } from './state.js';
export { createGenerator } from './generator.js';
export { fromPretrained } from './pretrained.js';

/**
 * Loads the wasm module now (InferenceSession.create does it too). Needed
 * before Tensor.alloc() or memoryStats(). Only the first call's options count.
 * @param {{wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
 */
export async function init(options) {
  await loadRuntime(options);
}

/**
 * Threads runs use by default in the loaded module (env.wasm.numThreads, or
 * the number of cores; 1 when the single-threaded module was loaded).
 */
export function numThreads() {
  return currentRuntime().threads;
}

/** Allocation statistics of the runtime's default allocator, and wasm memory size. */
export function memoryStats() {
  return currentRuntime().stats();
}

/** Starts a new peak: peakBytes becomes the current liveBytes + pooledBytes. */
export function resetPeakMemory() {
  currentRuntime().m._olw_allocator_reset_peak();
}

/**
 * Testing aid: after `count` more successful runtime allocations every
 * allocation fails with OL_OUT_OF_MEMORY (a fault injected mid-graph);
 * -1 turns it off. Needs the module loaded.
 * @param {number} count
 */
export function injectAllocationFailure(count) {
  currentRuntime().m._olw_allocator_fail_after(count);
}
export {
  EncodedValue,
  QuantizationFormat,
  QuantizationPlan,
  calibrateQuantizationPlan,
  dequantizeTensor,
  exportMatMulNBitsInputs,
  makeMatMulNBitsPlan,
  makeQuantizationPlan,
  makeQuantizationType,
  parseQuantizationFormat,
  quantizationFormatName,
  quantizationFormats,
  quantizeTensor,
  quantizeTensorProto,
  dequantizeTensorProto,
} from './quantization.js';
export { addQuantizationParameters, materializeQuantizedValue, quantizeTensorShared } from './quantization-shared.js';
export { SharedQuantizedValue } from './shared-value.js';
export { GraphBuilder } from './graph-builder.js';
