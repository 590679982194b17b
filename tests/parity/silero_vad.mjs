// A real stateful model: Silero VAD v5 (silero_vad_v5.onnx from npm
// @ricky0123/vad-web) over 50 frames of 512 samples at 16 kHz, its `stateN`
// output fed back as `state`. onnx-light (wasm build) must match
// onnxruntime-node within 1e-4 on every output at every frame.
// Prints "N passed, M failed"; exits nonzero on failure.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const require = createRequire(import.meta.url);
const modelPath = join(dirname(require.resolve('@ricky0123/vad-web/package.json')), 'dist', 'silero_vad_v5.onnx');
const ol = await import(join(root, 'dist', 'node.js'));

const FRAMES = 50;
const FRAME = 512;
const TOLERANCE = 1e-4;

/** Deterministic audio: a chirp that fades in and out over seeded noise. */
function frame(index) {
  let seed = 12345 + index;
  const noise = () => {
    seed = (seed * 1103515245 + 12345) >>> 0;
    return (seed / 2 ** 32 - 0.5) * 0.05;
  };
  const samples = new Float32Array(FRAME);
  for (let i = 0; i < FRAME; i++) {
    const t = (index * FRAME + i) / 16000;
    const envelope = index >= 10 && index < 35 ? 0.6 : 0.0;
    samples[i] = envelope * Math.sin(2 * Math.PI * (200 + 400 * t) * t) + noise();
  }
  return samples;
}

const bytes = readFileSync(modelPath);
const ortSession = await ort.InferenceSession.create(bytes);
const olSession = await ol.InferenceSession.create(bytes);

let ortState = new ort.Tensor('float32', new Float32Array(2 * 1 * 128), [2, 1, 128]);
let olState = new ol.Tensor('float32', new Float32Array(2 * 1 * 128), [2, 1, 128]);
const srOrt = new ort.Tensor('int64', BigInt64Array.from([16000n]), []);
const srOl = new ol.Tensor('int64', BigInt64Array.from([16000n]), []);

let worst = 0;
let failures = 0;
const failedFrames = new Set();
const probabilities = [];
for (let f = 0; f < FRAMES; f++) {
  const audio = frame(f);
  const a = await ortSession.run({ input: new ort.Tensor('float32', audio, [1, FRAME]), state: ortState, sr: srOrt });
  const b = await olSession.run({ input: new ol.Tensor('float32', audio, [1, FRAME]), state: olState, sr: srOl });
  for (const name of ['output', 'stateN']) {
    const x = a[name].data;
    const y = b[name].data;
    if (x.length !== y.length) {
      failures++;
      failedFrames.add(f);
      console.log(`FAIL frame ${f} ${name}: ${y.length} values, onnxruntime ${x.length}`);
      continue;
    }
    let err = 0;
    for (let i = 0; i < x.length; i++) err = Math.max(err, Math.abs(x[i] - y[i]));
    worst = Math.max(worst, err);
    if (!(err <= TOLERANCE)) {
      failures++;
      failedFrames.add(f);
      console.log(`FAIL frame ${f} ${name}: max abs error ${err}`);
    }
  }
  probabilities.push(b.output.data[0]);
  ortState = a.stateN;
  if (olState !== undefined && olState.location === 'wasm') olState.dispose();
  olState = b.stateN;
  b.output.dispose();
}
console.log(JSON.stringify({ model: 'silero_vad_v5', frames: FRAMES, maxAbsError: worst, tolerance: TOLERANCE,
  speechProbabilities: probabilities.map((p) => Number(p.toFixed(4))) }));
console.log(`silero vad frames: ${FRAMES - failedFrames.size} passed, ${failedFrames.size} failed`);
await olSession.release();
process.exit(failures ? 1 : 0);
