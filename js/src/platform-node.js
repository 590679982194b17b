// Node.js side of module loading and model reading: files are read with fs
// (Emscripten's own loader would call fetch() with a file path, which fails in
// Node); http(s) URLs, when the caller names one, are fetched.
import { open, readFile, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { OnnxLightError } from './errors.js';

/**
 * The Emscripten factory (CommonJS glue shipped next to this file; the
 * threaded build's in threads/, a CommonJS folder its worker_threads load).
 */
export async function loadFactory(threaded) {
  const require = createRequire(import.meta.url);
  return threaded ? require('./threads/onnx_light_threads.js') : require('./onnx_light.cjs');
}

/** The package's module: threaded or not, relaxed SIMD or SIMD128 (the glue is the same). */
export function defaultWasmUrl(threaded, relaxed) {
  const name = `${threaded ? 'threads/onnx_light_threads' : 'onnx_light'}${relaxed ? '_relaxed' : ''}.wasm`;
  return new URL(`./${name}`, import.meta.url);
}

/** worker_threads and SharedArrayBuffer: always in Node 20. */
export function threadsSupported() {
  return typeof SharedArrayBuffer === 'function';
}

export function cores() {
  return Math.min(availableParallelism(), 64);
}

/** The glue and its worker script are this package's own files: nothing to check. */
export async function checkFiles() {}

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

/**
 * Reads a local file (path or file: URL) straight into wasm memory through
 * one small chunk buffer, so the process never holds a second whole copy.
 * memory: { alloc(size) -> ptr, free(ptr), heap() -> current Uint8Array view }.
 * Returns { ptr, size } (the caller owns ptr), or null for sources that are
 * not local files.
 */
export async function readInto(source, memory) {
  const url = source instanceof URL ? source : /^(https?|file|data):/i.test(source) ? new URL(source) : null;
  if (url && url.protocol !== 'file:') return null;
  const file = await open(url ?? source, 'r');
  let ptr = 0;
  try {
    const { size } = await file.stat();
    ptr = memory.alloc(size);
    const chunk = Buffer.allocUnsafe(Math.min(size, 8 << 20));
    for (let at = 0; at < size; ) {
      const { bytesRead } = await file.read(chunk, 0, Math.min(chunk.length, size - at), at);
      if (bytesRead === 0) throw new Error(`${source}: the file ended after ${at} of ${size} bytes`);
      memory.heap().set(chunk.subarray(0, bytesRead), ptr + at); // a fresh view: memory may have grown meanwhile
      at += bytesRead;
    }
    const result = { ptr, size };
    ptr = 0;
    return result;
  } finally {
    if (ptr) memory.free(ptr);
    await file.close();
  }
}

/**
 * A model directory on disk (a path or file: URL; null for other URLs):
 * { label, read(path, onChunk) -> bytes | null when the file is missing }.
 */
export async function localDirectory(source) {
  const url = source instanceof URL ? source : /^[a-z][a-z0-9+.-]+:/i.test(source) && !/^[a-z]:[\\/]/i.test(source) ? new URL(source) : null;
  if (url && url.protocol !== 'file:') return null;
  const root = url ? fileURLToPath(url) : source;
  const info = await stat(root).catch(() => null);
  if (!info?.isDirectory()) {
    throw new OnnxLightError('OL_NOT_FOUND', `fromPretrained: ${root} is not a directory`);
  }
  return {
    label: root,
    async read(path, onChunk) {
      let file;
      try {
        file = await open(join(root, path), 'r');
      } catch (error) {
        if (error.code === 'ENOENT') return null;
        throw error;
      }
      try {
        const { size } = await file.stat();
        const bytes = new Uint8Array(size);
        onChunk?.(0, size);
        for (let at = 0; at < size; ) {
          const { bytesRead } = await file.read(bytes, at, Math.min(8 << 20, size - at), at);
          if (bytesRead === 0) throw new Error(`${join(root, path)}: the file ended after ${at} of ${size} bytes`);
          at += bytesRead;
          onChunk?.(at, size);
        }
        return bytes;
      } finally {
        await file.close();
      }
    },
  };
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
