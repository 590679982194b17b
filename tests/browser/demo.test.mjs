// The web demo (web/ -> web/dist/) in headless Chromium: the page loads the
// default model, generates in a Web Worker, streams text into the page,
// stops on the Stop button and shows tokens/s; greedy text equals Node's.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as ol from 'onnx-light';
import { chromium } from 'playwright-core';

import { serve } from './server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let server;
let context;
let page;
let profile;
const offsite = [];
const pageErrors = [];

before(async () => {
  server = await serve(ROOT);
  profile = mkdtempSync(join(tmpdir(), 'onnx-light-demo-'));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  context.on('request', (request) => {
    if (!request.url().startsWith(server.origin)) offsite.push(request.url());
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.on('pageerror', (error) => pageErrors.push(error.message));
  await page.goto(`${server.origin}/web/dist/index.html`);
  await page.waitForSelector('body[data-state="ready"]', { timeout: 20000 });
});

after(async () => {
  await context?.close();
  await server?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
});

describe('web demo', () => {
  test('greedy text streamed into the page equals Node generation', async () => {
    const model = await ol.bindCache(join(ROOT, 'models/fortunes-byte-0.8M.onnx'));
    const session = await ol.InferenceSession.create(model);
    const prompt = [...new TextEncoder().encode('The ')];
    const out = await session.generate(
      { input_ids: new ol.Tensor('int64', BigInt64Array.from(prompt, BigInt), [1, 4]), ...(await ol.emptyCaches(model)) },
      { maxNewTokens: 32 },
    );
    const expected = new TextDecoder().decode(Uint8Array.from(out.data.subarray(4), Number));
    await session.release();

    await page.fill('#prompt', 'The ');
    await page.fill('#max-tokens', '32');
    await page.fill('#temperature', '0');
    await page.click('#generate');
    await page.waitForSelector('body[data-state="done"]', { timeout: 20000 });
    assert.equal(await page.textContent('#output .generated'), expected);
    assert.equal(await page.textContent('#count'), '32');
    assert.match(await page.textContent('#speed'), /^\d+$/);
  });

  test('text streams while generating and the Stop button stops it', async () => {
    await page.fill('#max-tokens', '4096');
    await page.fill('#temperature', '0.8');
    await page.click('#generate');
    await page.waitForSelector('body[data-state="generating"]');
    // streamed: text is visible before the generation ends
    await page.waitForFunction(() => Number(document.getElementById('count').textContent) >= 20, null, { timeout: 20000 });
    assert.equal(await page.getAttribute('body', 'data-state'), 'generating');
    assert.ok((await page.textContent('#output .generated')).length > 0);
    await page.click('#stop');
    await page.waitForSelector('body[data-state="stopped"]', { timeout: 5000 });
    const stopped = Number(await page.textContent('#count'));
    assert.ok(stopped < 4096, `stopped after ${stopped} tokens`);
    await page.waitForTimeout(300);
    assert.equal(Number(await page.textContent('#count')), stopped, 'no tokens after Stop');
    assert.match(await page.textContent('#status'), /stopped after/);
    assert.match(await page.textContent('#speed'), /^\d+$/);
    assert.equal(await page.isDisabled('#stop'), true);
    assert.equal(await page.isDisabled('#generate'), false);
  });

  test('nothing was fetched beyond the local server; no page errors', () => {
    assert.deepEqual(offsite, []);
    assert.deepEqual(pageErrors, []);
    assert.ok(server.requests.includes('/dist/browser-worker.js'));
  });
});
