// Browser (and worker) side of module loading and model reading: fetch() of
// URLs the caller gave, or of the package's run-time files under one base URL
// (env.wasm.wasmPaths, else the directory of this bundle).
import { env } from './env.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import createOnnxLight from './onnx_light.cjs';
import createOnnxLightThreads from './threads/onnx_light_threads.js';

// The files each module variant loads at run time, by their path in dist/
// (the glue itself is bundled). A new variant is a new entry here; the base
// they are found under stays the one option env.wasm.wasmPaths.
// The relaxed-SIMD forms share their SIMD128 twin's glue and scripts.
const THREAD_SCRIPTS = ['threads/onnx_light_threads.js', 'threads/onnx_light_threads.worker.js'];
const VARIANTS = {
  single: { wasm: 'onnx_light.wasm', scripts: [] },
  singleRelaxed: { wasm: 'onnx_light_relaxed.wasm', scripts: [] },
  // the pool's Web Workers load the glue and the worker script as classic scripts
  threads: { wasm: 'threads/onnx_light_threads.wasm', scripts: THREAD_SCRIPTS },
  threadsRelaxed: { wasm: 'threads/onnx_light_threads_relaxed.wasm', scripts: THREAD_SCRIPTS },
};

const variant = (threaded, relaxed = false) => VARIANTS[`${threaded ? 'threads' : 'single'}${relaxed ? 'Relaxed' : ''}`];

/** The base URL of the package's run-time files (ends with '/'). */
export function filesBase() {
  const base = env.wasm.wasmPaths;
  if (base === undefined || base === null || base === '') return new URL('./', import.meta.url);
  if (typeof base !== 'string' && !(base instanceof URL)) {
    throw invalidArgument(`env.wasm.wasmPaths must be a URL or a string (the base URL of the package's dist/ files), got ${typeof base}`);
  }
  const href = String(base);
  try {
    return new URL(href.endsWith('/') ? href : `${href}/`, globalThis.location?.href);
  } catch {
    throw invalidArgument(`env.wasm.wasmPaths is not a URL: ${href}`);
  }
}

export async function loadFactory(threaded) {
  return threaded ? createOnnxLightThreads : createOnnxLight;
}

/** The package's module: threaded or not, relaxed SIMD or SIMD128 (the glue is the same). */
export function defaultWasmUrl(threaded, relaxed) {
  return new URL(variant(threaded, relaxed).wasm, filesBase());
}

/** fetch() whose failures name the URL (OL_NOT_FOUND for a missing file). */
async function fetchFile(url, what) {
  let response;
  try {
    response = await fetch(url);
  } catch (error) {
    throw new OnnxLightError('OL_NOT_FOUND', `fetching ${what} ${url} failed: ${error.message}`);
  }
  if (!response.ok) throw new OnnxLightError(response.status === 404 ? 'OL_NOT_FOUND' : 'OL_INVALID_ARGUMENT', `fetching ${what} ${url} failed: HTTP ${response.status}`);
  return response;
}

/**
 * The variant's scripts are reachable: a Web Worker that cannot load its
 * script fails silently, and the pool would wait for it forever. Fetched
 * whole, so the workers find them in the HTTP cache.
 */
export async function checkFiles(threaded) {
  const base = filesBase();
  await Promise.all(variant(threaded).scripts.map(async (path) => {
    const response = await fetchFile(new URL(path, base), 'the onnx-light module script');
    await response.arrayBuffer();
  }));
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
  const [glue] = variant(true).scripts;
  const script = new URL(glue, filesBase());
  return {
    mainScriptUrlOrBlob: script.href,
    locateFile: (path) => new URL(path, script).href,
  };
}

/** Web Workers do not keep a page alive. */
export function releaseWorkers() {}

export async function readBytes(source) {
  const response = await fetch(source);
  if (!response.ok) throw new Error(`fetching ${source} failed: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

/** Browsers have no local directories: paths and URLs are fetched. */
export async function localDirectory() {
  return null;
}

/** Browsers fetch models as whole responses (readBytes): nothing to read in place. */
export async function readInto() {
  return null;
}

/**
 * The module of a .wasm URL, compiled while it downloads (compileStreaming)
 * when the server sends application/wasm. Compiling rather than
 * instantiating: which glue (and so which imports) a caller's URL needs is
 * read from the compiled module's imports; instantiating a compiled module
 * afterwards costs no second compilation. tests/browser/streaming.test.mjs.
 */
export async function compile(source) {
  if (ArrayBuffer.isView(source) || source instanceof ArrayBuffer) return WebAssembly.compile(source);
  const response = await fetchFile(source, 'the onnx-light wasm module');
  if (response.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.compileStreaming(response);
  }
  // Servers that do not send application/wasm (compileStreaming would reject
  // the response): compile from the downloaded bytes.
  return WebAssembly.compile(await response.arrayBuffer());
}

/** A module Web Worker running browser-worker.js (under the files' base). */
export async function startWorker() {
  const worker = new Worker(new URL('browser-worker.js', filesBase()), { type: 'module' });
  return {
    post: (message, transfer) => worker.postMessage(message, transfer ?? []),
    onMessage: (fn) => worker.addEventListener('message', (event) => fn(event.data)),
    onError: (fn) => worker.addEventListener('error', (event) => fn(new Error(event.message || 'the generator worker failed to start'))),
    terminate: () => worker.terminate(),
  };
}
