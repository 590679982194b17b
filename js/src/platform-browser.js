// Browser (and worker) side of module loading and model reading: fetch() of
// URLs the caller gave, or of the .wasm next to this bundle.
import createOnnxLight from './onnx_light.cjs';
import createOnnxLightThreads from './threads/onnx_light_threads.js';

export async function loadFactory(threaded) {
  return threaded ? createOnnxLightThreads : createOnnxLight;
}

/** The package's module: threaded or not, relaxed SIMD or SIMD128 (the glue is the same). */
export function defaultWasmUrl(threaded, relaxed) {
  const name = `${threaded ? 'threads/onnx_light_threads' : 'onnx_light'}${relaxed ? '_relaxed' : ''}.wasm`;
  return new URL(`./${name}`, import.meta.url);
}

/** Shared memory needs a cross-origin isolated page (COOP + COEP headers). */
export function threadsSupported() {
  return globalThis.crossOriginIsolated === true && typeof SharedArrayBuffer === 'function';
}

export function cores() {
  return Math.min(globalThis.navigator?.hardwareConcurrency || 1, 64);
}

/**
 * The threaded glue is bundled here, but its Web Workers load it as a
 * classic script, shipped beside this bundle with the worker script.
 */
export function moduleOptions(threaded) {
  if (!threaded) return {};
  const dir = new URL('./threads/', import.meta.url);
  return {
    mainScriptUrlOrBlob: new URL('onnx_light_threads.js', dir).href,
    locateFile: (path) => new URL(path, dir).href,
  };
}

/** Web Workers do not keep a page alive. */
export function releaseWorkers() {}

export async function readBytes(source) {
  const response = await fetch(source);
  if (!response.ok) throw new Error(`fetching ${source} failed: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Browsers fetch models as whole responses (readBytes): nothing to read in place. */
export async function readInto() {
  return null;
}

export async function compile(source) {
  if (ArrayBuffer.isView(source) || source instanceof ArrayBuffer) return WebAssembly.compile(source);
  const response = await fetch(source);
  if (!response.ok) throw new Error(`fetching ${source} failed: HTTP ${response.status}`);
  if (response.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(response);
  }
  // Servers that do not send application/wasm: compile from the bytes.
  return WebAssembly.compile(await response.arrayBuffer());
}

/** A module Web Worker running browser-worker.js (next to this bundle). */
export async function startWorker() {
  const worker = new Worker(new URL('./browser-worker.js', import.meta.url), { type: 'module' });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    onMessage: (fn) => worker.addEventListener('message', (event) => fn(event.data)),
    onError: (fn) => worker.addEventListener('error', (event) => fn(new Error(event.message || 'the generator worker failed to start'))),
    terminate: () => worker.terminate(),
  };
}
