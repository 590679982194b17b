// One measurement in a fresh Node process (bench/decode.mjs --child): loads
// the runtime, reads the model and runs bench/lib/decode_run.mjs; adds the
// import time and the process's peak RSS.
import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';

import { olBuild, runDecode } from './decode_run.mjs';

const now = () => Number(process.hrtime.bigint()) / 1e6;

async function loadRuntime(runtime, threads) {
  // 'ol', 'olstate', 'olpaged', 'olpagedq' (each also '=path/to/dist': another
  // build, for before/after comparisons; OL_DIST replaces the package's own)
  const build = olBuild(runtime);
  if (build !== undefined) {
    const dist = build ?? process.env.OL_DIST;
    const ol = await (dist ? import(pathToFileURL(`${dist}/node.js`).href) : import('onnx-light'));
    if (ol.env) ol.env.wasm.numThreads = threads; // builds without threads have no env
    return ol;
  }
  if (runtime === 'ort') {
    const ort = await import('onnxruntime-web');
    ort.env.wasm.numThreads = threads;
    ort.env.wasm.simd = true;
    ort.env.logLevel = 'error';
    return ort;
  }
  throw new Error(`unknown runtime ${runtime}`);
}

export async function runChild({ runtime, modelPath, ...options }) {
  // the file's own buffer, not a copy: a garbage copy of the model would sit in
  // peak RSS whenever no GC ran before the runtime's memory grew (a shared
  // wasm memory, onnx-light's threaded module, grows without prompting one)
  const bytes = readFileSync(modelPath);
  const t = now();
  const rt = await loadRuntime(runtime, options.threads);
  const importMs = now() - t;
  const result = await runDecode({ rt, runtime, bytes, modelName: basename(modelPath), now, rssMB: () => process.memoryUsage().rss / 2 ** 20, ...options });
  return { ...result, importMs, peakRssMB: process.resourceUsage().maxRSS / 1024 };
}
