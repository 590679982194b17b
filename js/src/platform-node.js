// Node.js side of module loading and model reading: files are read with fs
// (Emscripten's own loader would call fetch() with a file path, which fails in
// Node); http(s) URLs, when the caller names one, are fetched.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';

/** The Emscripten factory (CommonJS glue shipped next to this file). */
export async function loadFactory() {
  return createRequire(import.meta.url)('./onnx_light.cjs');
}

export function defaultWasmUrl() {
  return new URL('./onnx_light.wasm', import.meta.url);
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

export async function instantiate(source, imports) {
  const bytes = ArrayBuffer.isView(source) || source instanceof ArrayBuffer ? source : await readBytes(source);
  return WebAssembly.instantiate(bytes, imports);
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
