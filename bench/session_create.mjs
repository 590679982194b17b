// Session start-up of onnx-light in Node: wasm module load, model parse + plan,
// the wasm heap high-water mark (wasm memory never shrinks, so its size after
// creation bounds the peak) and process RSS. Each sample runs in a fresh process.
// Usage: node bench/session_create.mjs [model.onnx] [runs]   → JSON on stdout
import { execFileSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

if (process.argv[2] === '--child') {
  const model = process.argv[3];
  const { init, InferenceSession, memoryStats, simdLevel } = await import(join(root, 'dist', 'node.js'));
  const t0 = performance.now();
  await init();
  const t1 = performance.now();
  const before = memoryStats();
  const bytes = readFileSync(model);
  const t2 = performance.now();
  const session = await InferenceSession.create(bytes);
  const t3 = performance.now();
  const after = memoryStats();
  session.release();
  console.log(JSON.stringify({
    simd: simdLevel(),
    wasmInitMs: t1 - t0,
    sessionCreateMs: t3 - t2,
    wasmMemoryBeforeBytes: before.wasmMemoryBytes,
    wasmMemoryAfterCreateBytes: after.wasmMemoryBytes,
    runtimeLiveBytesAfterCreate: after.liveBytes,
    rssBytes: process.memoryUsage().rss,
  }));
  process.exit(0);
}

const model = process.argv[2] ?? join(root, 'models', 'fortunes-byte-0.8M.onnx');
const runs = Number(process.argv[3] ?? 5);
const samples = [];
for (let i = 0; i < runs; i++) {
  const out = execFileSync(process.execPath, [fileURLToPath(import.meta.url), '--child', model], { encoding: 'utf8' });
  samples.push(JSON.parse(out));
}
const median = (key) => {
  const v = samples.map((s) => s[key]).sort((a, b) => a - b);
  return v[Math.floor(v.length / 2)];
};
// the module the runtime chose (env.wasm.relaxedSimd picks the relaxed one where the engine runs it)
const wasmPath = join(root, 'dist', samples[0].simd === 'relaxed' ? 'onnx_light_relaxed.wasm' : 'onnx_light.wasm');
console.log(JSON.stringify({
  model,
  modelBytes: statSync(model).size,
  simd: samples[0].simd,
  wasmBytes: statSync(wasmPath).size,
  runs,
  median: Object.fromEntries(Object.keys(samples[0]).filter((k) => k !== 'simd').map((k) => [k, median(k)])),
  samples,
}, null, 1));
