// Headless Chromium (Debian's /usr/bin/chromium through playwright-core)
// loads the browser bundle from a local server and runs 64 greedy steps of the
// fortunes decoder with the KV cache fed back; the tokens must equal the same
// run in Node and onnxruntime-node's, in the page and in a module Web Worker. Nothing may be fetched
// from anywhere but the local server.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as ol from 'onnx-light';

import { greedyDecode } from '../../dist/greedy.js';
import { greedyWithOrt } from '../parity/ort_greedy.mjs';
import { launchChromium, newProfile } from './chromium.mjs';
import { serve } from './server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STEPS = 64;
const PROMPT = 'The ';

let server;
let nodeTokens;
let ortTokens;
let context;
let page;
let profile;
const offsite = [];
const pageErrors = [];

before(async () => {
  const session = await ol.InferenceSession.create(join(ROOT, 'models/fortunes-byte-0.8M.onnx'));
  const promptIds = [...new TextEncoder().encode(PROMPT)];
  nodeTokens = [];
  for await (const t of greedyDecode({ session, Tensor: ol.Tensor, promptIds, maxNewTokens: STEPS })) nodeTokens.push(t);
  await session.release();
  ortTokens = await greedyWithOrt(join(ROOT, 'models/fortunes-byte-0.8M.onnx'), [...new TextEncoder().encode(PROMPT)], STEPS);

  server = await serve(ROOT);
  profile = newProfile('onnx-light-chromium-');
  context = await launchChromium(profile);
  context.on('request', (request) => {
    if (!request.url().startsWith(server.origin)) offsite.push(request.url());
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${server.origin}/tests/browser/index.html`);
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('browser bundle in Chromium', () => {
  test(`${STEPS} greedy steps of the fortunes decoder equal Node's and onnxruntime-node's`, async () => {
    const inBrowser = await page.evaluate(
      async ({ steps, prompt }) => {
        const api = await import('/dist/browser.js');
        const { greedyDecode } = await import('/dist/greedy.js');
        const session = await api.InferenceSession.create('/models/fortunes-byte-0.8M.onnx');
        const promptIds = [...new TextEncoder().encode(prompt)];
        const tokens = [];
        for await (const t of greedyDecode({ session, Tensor: api.Tensor, promptIds, maxNewTokens: steps })) tokens.push(t);
        await session.release();
        return tokens;
      },
      { steps: STEPS, prompt: PROMPT },
    );

    assert.equal(inBrowser.length, STEPS);
    assert.deepEqual(inBrowser, nodeTokens);
    assert.deepEqual(inBrowser, ortTokens, "the page's tokens equal onnxruntime-node's");
  });

  test('the bundle runs in a module Web Worker too', async () => {
    const result = await page.evaluate(
      ({ steps, prompt }) =>
        new Promise((resolve) => {
          const worker = new Worker('/tests/browser/worker.mjs', { type: 'module' });
          worker.onmessage = ({ data }) => {
            worker.terminate();
            resolve(data);
          };
          worker.onerror = (event) => resolve({ error: event.message });
          worker.postMessage({ steps, prompt });
        }),
      { steps: STEPS, prompt: PROMPT },
    );
    assert.equal(result.error, undefined);
    assert.deepEqual(result.tokens, nodeTokens);
  });

  test('Tensor.alloc views and OnnxLightError in the browser', async () => {
    const result = await page.evaluate(async () => {
      const api = await import('/dist/browser.js');
      await api.init();
      const bad = await api.InferenceSession.create(new Uint8Array([0xff, 0xff, 0x0f])).catch((e) => e);
      const x = api.Tensor.alloc('float32', [4]);
      x.data.set([1, 2, 3, 4]);
      return {
        badName: bad.name,
        badCode: bad.code,
        isError: bad instanceof api.OnnxLightError,
        location: x.location,
        view: x.data.byteOffset === x.wasmByteOffset && x.data.buffer.byteLength > 0,
        version: api.version,
        threads: api.numThreads(),
        simd: api.simdLevel(),
      };
    });
    assert.deepEqual(result, {
      badName: 'OnnxLightError',
      badCode: 'OL_INVALID_MODEL',
      isError: true,
      location: 'wasm',
      view: true,
      version: ol.version,
      threads: 1, // not cross-origin isolated: the single-threaded module
      simd: 'relaxed', // Chromium passes the relaxed-SIMD probe
    });
  });

  test('the page fetched nothing beyond the local server, and the wasm came from dist/', () => {
    assert.deepEqual(offsite, []);
    assert.deepEqual(pageErrors, []);
    assert.ok(server.requests.includes('/dist/onnx_light_relaxed.wasm'));
    assert.ok(!server.requests.some((path) => path.startsWith('/dist/threads/')), 'no threaded module without isolation');
  });
});
