// Browser (and worker) side of module loading and model reading: fetch() of
// URLs the caller gave, or of the .wasm next to this bundle.
import createOnnxLight from './onnx_light.cjs';

export async function loadFactory() {
  return createOnnxLight;
}

export function defaultWasmUrl() {
  return new URL('./onnx_light.wasm', import.meta.url);
}

export async function readBytes(source) {
  const response = await fetch(source);
  if (!response.ok) throw new Error(`fetching ${source} failed: HTTP ${response.status}`);
  return new Uint8Array(await response.arrayBuffer());
}

export async function instantiate(source, imports) {
  if (ArrayBuffer.isView(source) || source instanceof ArrayBuffer) {
    return WebAssembly.instantiate(source, imports);
  }
  const response = await fetch(source);
  if (!response.ok) throw new Error(`fetching ${source} failed: HTTP ${response.status}`);
  if (response.headers.get('content-type')?.startsWith('application/wasm')) {
    return WebAssembly.instantiateStreaming(response, imports);
  }
  // Servers that do not send application/wasm: compile from the bytes.
  return WebAssembly.instantiate(await response.arrayBuffer(), imports);
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
