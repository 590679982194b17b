// Parity of the fortunes decoder: 64 greedy tokens with the KV cache fed back,
// (1) native vs wasm build of tests/parity/decode.c: same tokens, same logits bits,
//     also on 2 and 3 threads (native, and the threaded wasm build decode_threads);
// (1b) the same for the decoder quantized to portable int4 (fused MatMuls);
// (1c) the same on paged caches (float pages, and quantized ones: integer products
//      and codes decoded in register);
// (2) onnx-light vs onnxruntime-node (the oracle): same tokens; the JS
//     package's generate() (the C token loop stepped through the wasm ABI)
//     gives the native tool's tokens, greedy and seeded sampling;
// (3) randomized single-operator graphs vs onnxruntime-node (random_graphs.mjs);
// (4) Silero VAD v5, state fed back, vs onnxruntime-node (silero_vad.mjs).
// Prints "N passed, M failed" and exits nonzero on failure.
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ol from 'onnx-light';

import { greedyWithOrt } from './ort_greedy.mjs';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const model = process.env.PARITY_MODEL ?? join(root, 'models', 'fortunes-byte-0.8M.onnx');
const steps = 64;
const prompt = [...Buffer.from('The ', 'utf8')];

let passed = 0;
let failed = 0;
function check(name, ok, detail) {
  if (ok) passed += 1;
  else failed += 1;
  console.log(`${ok ? 'ok' : 'FAIL'} ${name}${ok ? '' : `: ${detail}`}`);
}

const decodeArgs = [model, String(steps), ...prompt.map(String)];
const native = JSON.parse(execFileSync(join(root, 'build-native', 'decode'), decodeArgs, { encoding: 'utf8' }));
const wasm = JSON.parse(
  execFileSync(process.execPath, ['--no-experimental-fetch', join(root, 'build-wasm', 'decode.cjs'), ...decodeArgs], {
    encoding: 'utf8',
  }),
);
const text = Buffer.from(native.tokens).toString('latin1');
console.log(`native: ${JSON.stringify(text)}`);
check('native and wasm produce the same tokens', JSON.stringify(native.tokens) === JSON.stringify(wasm.tokens),
  `${native.tokens} vs ${wasm.tokens}`);
check('native and wasm logits are bit-identical at every step', native.hash === wasm.hash,
  `${native.hash} vs ${wasm.hash}`);
// the same run on 2 and 3 threads, natively and in the threaded wasm build
for (const threads of ['2', '3']) {
  const args = ['--threads', threads, ...decodeArgs];
  const nativeT = JSON.parse(execFileSync(join(root, 'build-native', 'decode'), args, { encoding: 'utf8' }));
  const wasmT = JSON.parse(
    execFileSync(process.execPath, ['--no-experimental-fetch', join(root, 'build-wasm', 'decode_threads.cjs'), ...args], {
      encoding: 'utf8',
    }),
  );
  check(`native on ${threads} threads: the single-threaded logits bits`, nativeT.hash === native.hash, `${nativeT.hash} vs ${native.hash}`);
  check(`threaded wasm on ${threads} threads: the native logits bits`, wasmT.hash === native.hash, `${wasmT.hash} vs ${native.hash}`);
}

check('seeded sampling (ol_generate, temperature 0.8, seed 1234) repeats within a run',
  native.sampled.length === 32 && JSON.stringify(native.sampled) === JSON.stringify(native.sampledAgain),
  `${native.sampled} vs ${native.sampledAgain}`);
check('seeded sampling gives the same tokens native and wasm', JSON.stringify(native.sampled) === JSON.stringify(wasm.sampled),
  `${native.sampled} vs ${wasm.sampled}`);

// (1b) the decoder quantized to the portable int4 profile: its MatMuls run
// fused, decoding the encoded weights in register (simd/qaffine.c)
const int4Dir = mkdtempSync(join(tmpdir(), 'onnx-light-parity-'));
const int4 = join(int4Dir, 'int4.onnx');
execFileSync(process.execPath, [join(root, 'dist', 'cli.js'), 'quantize', '--model', model, '--out', int4, '--format', 'int4',
  '--block-size', '32'], { stdio: 'pipe' });
const int4Args = [int4, String(steps), ...prompt.map(String)];
const int4Native = JSON.parse(execFileSync(join(root, 'build-native', 'decode'), int4Args, { encoding: 'utf8' }));
const int4Wasm = JSON.parse(
  execFileSync(process.execPath, ['--no-experimental-fetch', join(root, 'build-wasm', 'decode.cjs'), ...int4Args], {
    encoding: 'utf8',
  }),
);
const int4Threads = ['--threads', '2', ...int4Args];
const int4Native2 = JSON.parse(execFileSync(join(root, 'build-native', 'decode'), int4Threads, { encoding: 'utf8' }));
const int4Wasm2 = JSON.parse(
  execFileSync(process.execPath, ['--no-experimental-fetch', join(root, 'build-wasm', 'decode_threads.cjs'), ...int4Threads], {
    encoding: 'utf8',
  }),
);
rmSync(int4Dir, { recursive: true, force: true });
check('int4 (fused encoded MatMul): native and wasm tokens and logits bits agree',
  JSON.stringify(int4Native.tokens) === JSON.stringify(int4Wasm.tokens) && int4Native.hash === int4Wasm.hash,
  `${int4Native.tokens} (${int4Native.hash}) vs ${int4Wasm.tokens} (${int4Wasm.hash})`);
check('int4 on 2 threads (native and threaded wasm): the single-threaded logits bits',
  int4Native2.hash === int4Native.hash && int4Wasm2.hash === int4Native.hash,
  `${int4Native2.hash} / ${int4Wasm2.hash} vs ${int4Native.hash}`);

// (1c) the decoder on paged caches (ol_model_to_paged) with float pages and
// quantized ones (int8 keys / uint4 values as apps use, and the other code
// widths), calibrated scales: heads of 32 take the integer products
// (simd/qpage_int.c) for 8- and 4-bit codes, 2-bit codes are decoded in
// register (simd/qpage.c), natively and in wasm to the same bits
for (const formats of ['float32/float32', 'int8/uint4', 'uint8/int4', 'int2/uint2']) {
  const args = ['--paged', formats, ...decodeArgs];
  const pagedNative = JSON.parse(execFileSync(join(root, 'build-native', 'decode'), args, { encoding: 'utf8' }));
  const pagedWasm = JSON.parse(
    execFileSync(process.execPath, ['--no-experimental-fetch', join(root, 'build-wasm', 'decode.cjs'), ...args], {
      encoding: 'utf8',
    }),
  );
  check(`paged caches, ${formats} pages: native and wasm tokens and logits bits agree`,
    JSON.stringify(pagedNative.tokens) === JSON.stringify(pagedWasm.tokens) && pagedNative.hash === pagedWasm.hash,
    `${pagedNative.tokens} (${pagedNative.hash}) vs ${pagedWasm.tokens} (${pagedWasm.hash})`);
  if (formats === 'float32/float32')
    check('paged caches, float32 pages: the contiguous greedy tokens', JSON.stringify(pagedNative.tokens) === JSON.stringify(native.tokens),
      `${pagedNative.tokens} vs ${native.tokens}`);
}

const ort = await greedyWithOrt(model, prompt, steps);
check('greedy tokens equal onnxruntime-node over 64 steps', JSON.stringify(native.tokens) === JSON.stringify(ort),
  `onnx-light ${native.tokens}\n onnxruntime ${ort}`);

// (2b) session.generate in the JS package (wasm) against the native runs
const generating = await ol.InferenceSession.create(model, { bindCache: true });
const caches = await ol.emptyCaches(generating);
const jsGenerate = async (options) => {
  const ids = new ol.Tensor('int64', BigInt64Array.from(prompt, BigInt), [1, prompt.length]);
  const out = await generating.generate({ input_ids: ids, ...caches }, options);
  return Array.from(out.data.subarray(prompt.length), Number);
};
const jsGreedy = await jsGenerate({ maxNewTokens: steps });
check('JS generate(): the native greedy tokens over 64 steps', JSON.stringify(jsGreedy) === JSON.stringify(native.tokens),
  `${jsGreedy} vs ${native.tokens}`);
const jsSampled = await jsGenerate({ maxNewTokens: 32, temperature: 0.8, seed: 1234 });
check('JS generate(): the native ol_generate seeded samples', JSON.stringify(jsSampled) === JSON.stringify(native.sampled),
  `${jsSampled} vs ${native.sampled}`);
await generating.release();

// (3) randomized single-operator graphs against onnxruntime-node (wasm build)
const random = spawnSync(process.execPath, [join(root, 'tests', 'parity', 'random_graphs.mjs')], { stdio: 'inherit' });
check('randomized operator graphs match onnxruntime-node', random.status === 0, `exit code ${random.status}`);

// (4) a real stateful model against onnxruntime-node
const vad = spawnSync(process.execPath, [join(root, 'tests', 'parity', 'silero_vad.mjs')], { stdio: 'inherit' });
check('Silero VAD v5 matches onnxruntime-node over 50 frames with its state fed back', vad.status === 0,
  `exit code ${vad.status}`);

console.log(`parity: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
