// Node.js side of module loading and model reading: files are read with fs
// (Emscripten's own loader would call fetch() with a file path, which fails in
// Node); http(s) URLs, when the caller names one, are fetched.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';

/**
 * The Emscripten factory (CommonJS glue shipped next to this file; the
 * threaded build's in threads/, a CommonJS folder its worker_threads load).
 */
export async function loadFactory(threaded) {
  const require = createRequire(import.meta.url);
  return threaded ? require('./threads/onnx_light_threads.js') : require('./onnx_light.cjs');
}

export function defaultWasmUrl(threaded) {
  return new URL(threaded ? './threads/onnx_light_threads.wasm' : './onnx_light.wasm', import.meta.url);
}

/** worker_threads and SharedArrayBuffer: always in Node 20. */
export function threadsSupported() {
  return typeof SharedArrayBuffer === 'function';
}

export function cores() {
  return Math.min(availableParallelism(), 64);
}

/** The glue finds its worker script next to itself. */
export function moduleOptions() {
  return {};
}

/**
 * The pool's workers wait for work for as long as the module lives; unref'd,
 * they never keep the process alive.
 */
export function releaseWorkers(module) {
  const { unusedWorkers = [], runningWorkers = [] } = module.PThread ?? {};
  for (const worker of [...unusedWorkers, ...runningWorkers]) worker.unref?.();
}

/** Bytes of a file path, file: URL or http(s): URL. */
export async function readBytes(source) {
  const url = source instanceof URL ? source : /^(https?|file|data):/i.test(source) ? new URL(source) : null;
  if (url && url.protocol !== 'file:') {
    const response = await fetch(url);
    if (!response.ok) throw new Error(`fetching ${url} failed: HTTP ${response.status}`);
    return new Uint8Array(await response.arrayBuffer());
  }
  const data = await readFile(url ?? source);
  return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
}

export async function compile(source) {
  return WebAssembly.compile(ArrayBuffer.isView(source) || source instanceof ArrayBuffer ? source : await readBytes(source));
}

/** A worker_threads Worker running dist/generator-worker.js. */
export async function startWorker() {
  const { Worker } = await import('node:worker_threads');
  const worker = new Worker(new URL('./generator-worker.js', import.meta.url));
  return {
    post: (message, transfer) => worker.postMessage(message, transfer),
    onMessage: (fn) => worker.on('message', fn),
    onError: (fn) => worker.on('error', fn),
    terminate: () => worker.terminate(),
    // an idle generator does not keep the process alive; a running one does
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  };
}
