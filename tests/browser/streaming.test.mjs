// The browser loader compiles the .wasm while it downloads
// (WebAssembly.compileStreaming) when the server sends application/wasm, and
// falls back to compiling the whole response's bytes when the server sends
// another content type (compileStreaming would reject the response), for the
// bundle's own .wasm and for a wasmUrl the caller gives. Each case is a fresh
// page whose WebAssembly.compileStreaming / compile calls are recorded.
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
const MODEL = 'models/fortunes-byte-0.8M.onnx';
const STEPS = 4;
const PROMPT = 'The ';

let servers;
let context;
let profile;
let nodeTokens;
const pageErrors = [];

before(async () => {
  const session = await ol.InferenceSession.create(join(ROOT, MODEL));
  nodeTokens = [];
  const promptIds = [...new TextEncoder().encode(PROMPT)];
  for await (const t of greedyDecode({ session, Tensor: ol.Tensor, promptIds, maxNewTokens: STEPS })) nodeTokens.push(t);
  await session.release();
  servers = {
    wasm: await serve(ROOT),
    octet: await serve(ROOT, 0, { wasmType: 'application/octet-stream' }),
  };
  profile = newProfile('onnx-light-chromium-');
  context = await launchChromium(profile);
});

after(async () => {
  await context?.close();
  await Promise.all(Object.values(servers ?? {}).map((s) => s.close()));
  if (profile) rmSync(profile, { recursive: true, force: true });
});

/** A fresh page of `server` decoding STEPS tokens; returns the tokens and the WebAssembly compile calls. */
async function decodeInPage(server, wasmUrl) {
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  try {
    await page.goto(`${server.origin}/tests/browser/index.html`);
    return await page.evaluate(
      async ({ model, steps, prompt, wasmUrl }) => {
        const calls = [];
        for (const name of ['compileStreaming', 'compile', 'instantiateStreaming']) {
          const original = WebAssembly[name];
          WebAssembly[name] = (...args) => {
            calls.push(name);
            return original.apply(WebAssembly, args);
          };
        }
        const api = await import('/dist/browser.js');
        const { greedyDecode } = await import('/dist/greedy.js');
        const session = await api.InferenceSession.create(`/${model}`, wasmUrl ? { wasmUrl } : {});
        const tokens = [];
        const promptIds = [...new TextEncoder().encode(prompt)];
        for await (const t of greedyDecode({ session, Tensor: api.Tensor, promptIds, maxNewTokens: steps })) tokens.push(t);
        await session.release();
        return { calls, tokens };
      },
      { model: MODEL, steps: STEPS, prompt: PROMPT, wasmUrl },
    );
  } finally {
    await page.close();
  }
}

describe('wasm streaming compilation in Chromium', () => {
  test('application/wasm: the bundle streams its own .wasm', async () => {
    const { calls, tokens } = await decodeInPage(servers.wasm);
    assert.deepEqual(calls, ['compileStreaming']);
    assert.deepEqual(tokens, nodeTokens);
  });

  test('application/wasm: a wasmUrl the caller gives is streamed too', async () => {
    const { calls, tokens } = await decodeInPage(servers.wasm, '/dist/onnx_light.wasm');
    assert.deepEqual(calls, ['compileStreaming']);
    assert.deepEqual(tokens, nodeTokens);
  });

  test('another content type: compiled from the downloaded bytes, same tokens', async () => {
    for (const wasmUrl of [undefined, '/dist/onnx_light.wasm']) {
      const { calls, tokens } = await decodeInPage(servers.octet, wasmUrl);
      assert.deepEqual(calls, ['compile'], `wasmUrl ${wasmUrl}`);
      assert.deepEqual(tokens, nodeTokens);
    }
    assert.ok(servers.octet.requests.includes('/dist/onnx_light.wasm'));
  });

  test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
