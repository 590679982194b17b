// One measurement in a fresh Chromium page (bench/browser.mjs): imports the
// runtime's browser bundle, fetches the model, then runs
// bench/lib/decode_run.mjs. Served by the bench server: onnx-light from /dist/
// (or another build mounted at /ol-builds/<i>/), onnxruntime-web's wasm-only
// bundle from /node_modules/onnxruntime-web/dist/ (its .wasm beside it).
import { olBuild, runDecode } from './decode_run.mjs';

async function loadRuntime(runtime, threads, builds) {
  const build = olBuild(runtime);
  if (build !== undefined) {
    const ol = await import(`${builds[build ?? ''] ?? '/dist/'}browser.js`);
    if (ol.env) ol.env.wasm.numThreads = threads;
    return ol;
  }
  if (runtime === 'ort') {
    const ort = await import('/node_modules/onnxruntime-web/dist/ort.wasm.min.mjs');
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.simd = true;
    ort.env.logLevel = 'error';
    return ort;
  }
  throw new Error(`unknown runtime ${runtime}`);
}

/**
 * options: those of runDecode but rt, bytes, now and rssMB; modelUrl; builds:
 * { dist folder: URL prefix } of other onnx-light builds ('' for OL_DIST).
 * The renderer's resident memory comes from the bench (window.benchRendererRssMB,
 * exposed by bench/browser.mjs, reads /proc).
 */
export async function run({ runtime, modelUrl, builds = {}, ...options }) {
  const response = await fetch(modelUrl);
  if (!response.ok) throw new Error(`fetching ${modelUrl}: HTTP ${response.status}`);
  const bytes = new Uint8Array(await response.arrayBuffer());
  const now = () => performance.now();
  const t = now();
  const rt = await loadRuntime(runtime, options.threads, builds);
  const importMs = now() - t;
  const rssMB = () => globalThis.benchRendererRssMB?.() ?? null;
  const result = await runDecode({ rt, runtime, bytes, modelName: modelUrl.split('/').pop(), now, rssMB, ...options });
  // onnx-light's module threads (1: the single-threaded module), to tell which module ran
  const moduleThreads = runtime.startsWith('ol') ? (rt.numThreads?.() ?? 1) : undefined;
  return { ...result, importMs, moduleThreads, crossOriginIsolated: globalThis.crossOriginIsolated === true };
}
