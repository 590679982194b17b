// Threads in Chromium: on a cross-origin isolated page (COOP/COEP) the bundle
// loads the threaded module, its pool runs on Web Workers, and the fortunes
// decoder's tokens equal the single-threaded Node run; env.wasm.numThreads = 1
// still picks the single-threaded module there. Chromium passes the
// relaxed-SIMD probe, so both come in their relaxed form unless
// env.wasm.relaxedSimd = false asks for SIMD128.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as ol from 'onnx-light';

import { greedyDecode } from '../../dist/greedy.js';
import { launchChromium, newProfile } from './chromium.mjs';
import { serve } from './server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STEPS = 32;
const PROMPT = 'The ';

let server;
let context;
let profile;
let nodeTokens;
const pageErrors = [];

before(async () => {
  ol.env.wasm.numThreads = 1;
  const session = await ol.InferenceSession.create(join(ROOT, 'models/fortunes-byte-0.8M.onnx'));
  nodeTokens = [];
  const promptIds = [...new TextEncoder().encode(PROMPT)];
  for await (const t of greedyDecode({ session, Tensor: ol.Tensor, promptIds, maxNewTokens: STEPS })) nodeTokens.push(t);
  await session.release();
  server = await serve(ROOT, 0, { isolated: true });
  profile = newProfile('onnx-light-chromium-');
  context = await launchChromium(profile);
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** A fresh page (a fresh module) running fn(args) after setting env.wasm.numThreads (and relaxedSimd). */
async function inPage(numThreads, fn, args, relaxedSimd = true) {
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  try {
    await page.goto(`${server.origin}/tests/browser/index.html`);
    return await page.evaluate(
      async ({ numThreads, relaxedSimd, source, args }) => {
        const api = await import('/dist/browser.js');
        api.env.wasm.numThreads = numThreads;
        api.env.wasm.relaxedSimd = relaxedSimd;
        return (0, eval)(`(${source})`)(api, args);
      },
      { numThreads, relaxedSimd, source: fn.toString(), args },
    );
  } finally {
    await page.close();
  }
}

async function decode(api, { steps, prompt }) {
  const { greedyDecode } = await import('/dist/greedy.js');
  const session = await api.InferenceSession.create('/models/fortunes-byte-0.8M.onnx');
  const tokens = [];
  const promptIds = [...new TextEncoder().encode(prompt)];
  for await (const t of greedyDecode({ session, Tensor: api.Tensor, promptIds, maxNewTokens: steps })) tokens.push(t);
  await session.release();
  return { isolated: globalThis.crossOriginIsolated, threads: api.numThreads(), simd: api.simdLevel(), shared: api.Tensor.alloc('float32', [1]).data.buffer instanceof SharedArrayBuffer, tokens };
}

describe('threads in Chromium (cross-origin isolated page)', () => {
  test(`numThreads 2: the threaded module, ${STEPS} greedy tokens equal Node's`, async () => {
    const result = await inPage(2, decode, { steps: STEPS, prompt: PROMPT });
    assert.deepEqual({ ...result, tokens: undefined }, { isolated: true, threads: 2, simd: 'relaxed', shared: true, tokens: undefined });
    assert.deepEqual(result.tokens, nodeTokens);
    assert.ok(server.requests.includes('/dist/threads/onnx_light_threads_relaxed.wasm'));
    assert.ok(server.requests.includes('/dist/threads/onnx_light_threads.worker.js'));
  });

  test('numThreads 1: the single-threaded module even when isolated', async () => {
    const result = await inPage(1, decode, { steps: 4, prompt: PROMPT });
    assert.deepEqual([result.isolated, result.threads, result.simd, result.shared], [true, 1, 'relaxed', false]);
    assert.deepEqual(result.tokens, nodeTokens.slice(0, 4));
  });

  test('relaxedSimd false: the SIMD128 threaded module, the same tokens', async () => {
    const result = await inPage(2, decode, { steps: 4, prompt: PROMPT }, false);
    assert.deepEqual([result.threads, result.simd, result.shared], [2, 'simd128', true]);
    assert.deepEqual(result.tokens, nodeTokens.slice(0, 4));
    assert.ok(server.requests.includes('/dist/threads/onnx_light_threads.wasm'));
  });

  test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
