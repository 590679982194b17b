// Process-wide settings read when the wasm module loads (the first session or
// init()), shaped like onnxruntime-web's `env`:
//   env.wasm.numThreads  intra-op threads, the calling thread included;
//                        0 (the default): the number of cores; 1: the
//                        single-threaded module. More than one needs the
//                        threaded module: always available in Node, in
//                        browsers only on cross-origin isolated pages
//                        (COOP/COEP), else the single-threaded one is used.
//   env.wasm.wasmPaths   browsers: the base URL of the package's dist/ files
//                        (a string, resolved against the page, or a URL),
//                        like onnxruntime-web's: every module variant is
//                        found there at its dist/ path (onnx_light.wasm,
//                        threads/onnx_light_threads.{wasm,js,worker.js}),
//                        and the generator's browser-worker.js. Default:
//                        the directory of the script that holds the package.
//   env.wasm.relaxedSimd true (the default): the relaxed-SIMD module (8-bit
//                        dot products in the int4 MatMulNBits kernels, the
//                        same bits) where a known-answer probe passes
//                        (js/src/relaxed-probe.js), else the SIMD128 one;
//                        false: always the SIMD128 module.
import { invalidArgument } from './errors.js';

export const MAX_THREADS = 64;

export const env = { wasm: { numThreads: 0, wasmPaths: undefined, relaxedSimd: true } };

/**
 * A thread count option: undefined or 0 for the default, else an integer in
 * [1, MAX_THREADS]; anything else throws OL_INVALID_ARGUMENT naming `what`.
 */
export function threadCount(value, what) {
  if (value === undefined || value === 0) return 0;
  if (!Number.isInteger(value) || value < 1 || value > MAX_THREADS) {
    throw invalidArgument(`${what} must be an integer from 1 to ${MAX_THREADS} (or 0 for the number of cores), got ${String(value)}`);
  }
  return value;
}
