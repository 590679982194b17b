// The chat app (web/, npm run web) in headless Chromium: the first visit
// shows the model's download progress, then `ready`; messages get answers;
// with the origin gone (server closed, browser restarted on the same
// profile, context offline) the page opens from its service worker with the
// same transcript, and the next answer is
// the one an uninterrupted session (another profile, one thread: results
// do not depend on the thread count) gives with the same ?seed; Regenerate
// gives the same answer again; New chat clears the saved conversation; Stop
// ends an answer early. The
// saved cache (IndexedDB) is compared with dense fp32 pages of the same
// tokens. Screenshots of every step go to tests/browser/screenshots/
// (git-ignored). A model directory opened from disk (the file input, with a
// copy of the default model's directory) answers like the default model.
// Rough figures of the run (load times, download size, tokens/s with and
// without threads, the worker's wasm memory) are printed at the end.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as ol from 'onnx-light';

import { MODEL_FILES, MODEL_DIR as MODEL_DIR_URL } from '../../web/config.js';
import { launchChromium, newProfile } from './chromium.mjs';
import { serve } from './server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SHOTS = join(ROOT, 'tests/browser/screenshots');
const MODEL_DIR = join(ROOT, 'web/dist', MODEL_DIR_URL); // MODEL_DIR_URL is relative to the page
const MODEL_BYTES = MODEL_FILES.reduce((sum, file) => sum + statSync(join(MODEL_DIR, file)).size, 0);
const SEED = 7;
const MAX_TOKENS = 48; // short answers: the 4M model takes a few ms a token
const MESSAGES = ['Never trust a man who', 'The best way to see the sea is'];

const opened = []; // { context, profile, server }
const pageErrors = [];
let page; // the main session's page
let server;
let main; // its { profile, server, context }
const answers = []; // the main session's answers
const timings = {};

async function openApp({ isolated }) {
  const s = await serve(ROOT, 0, { isolated });
  const profile = newProfile('onnx-light-app-');
  const entry = { profile, server: s };
  opened.push(entry);
  const p = await launch(entry);
  await p.goto(`${s.origin}/web/dist/index.html?seed=${SEED}&max-tokens=${MAX_TOKENS}`);
  await waitReady(p);
  return { page: p, context: entry.context, server: s, entry };
}

/** (Re)starts the browser on the entry's profile; resolves to its page. */
async function launch(entry) {
  entry.context = await launchChromium(entry.profile, { viewport: { width: 900, height: 900 } });
  const p = entry.context.pages()[0] ?? (await entry.context.newPage());
  p.on('pageerror', (error) => pageErrors.push(error.message));
  p.on('console', (message) => message.type() === 'error' && pageErrors.push(`${message.text()} ${message.location().url}`));
  // every download progress value the page shows
  await p.addInitScript(() => {
    globalThis.progressSeen = [];
    new MutationObserver(() => {
      const v = document.querySelector('[data-testid=load-progress]')?.dataset.loaded;
      if (v !== undefined && globalThis.progressSeen.at(-1) !== v) globalThis.progressSeen.push(v);
    }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-loaded'] });
  });
  return p;
}

function waitReady(p) {
  return p.waitForFunction(() => document.querySelector('[data-testid=status]').textContent === 'ready', null, { timeout: 30000 });
}

function transcriptOf(p) {
  return p.$$eval('[data-testid=transcript] li', (items) => items.map((li) => ({ role: li.className, text: li.textContent })));
}

/** Sends a message; resolves to the answer's text and the page's tokens/s. */
async function say(p, message) {
  const before = (await transcriptOf(p)).length;
  await p.fill('[data-testid=prompt]', message);
  await p.click('[data-testid=send]');
  await p.waitForFunction((n) => document.querySelectorAll('[data-testid=transcript] li').length === n
    && document.querySelector('[data-testid=status]').textContent === 'ready', before + 2, { timeout: 30000 });
  const transcript = await transcriptOf(p);
  return { text: transcript.at(-1).text, speed: Number(await p.textContent('#speed')) };
}

function shot(p, name) {
  return p.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** The saved record's caches as { name: Uint8Array } (null when nothing is saved). */
async function savedCaches(p) {
  const caches = await p.evaluate(() => new Promise((resolve, reject) => {
    const request = indexedDB.open('onnx-light-chat');
    request.onerror = () => reject(request.error);
    request.onsuccess = () => {
      const db = request.result;
      const get = db.transaction('conversation').objectStore('conversation').get(document.body.dataset.model);
      get.onsuccess = () => {
        db.close();
        const record = get.result;
        resolve(record ? Object.fromEntries(Object.entries(record.saved.caches).map(([name, bytes]) => [name, Array.from(bytes)])) : null);
      };
      get.onerror = () => reject(get.error);
    };
  }));
  return caches && Object.fromEntries(Object.entries(caches).map(([name, bytes]) => [name, Uint8Array.from(bytes)]));
}

before(async () => {
  mkdirSync(SHOTS, { recursive: true });
  await ol.init();
  ({ page, server, entry: main } = await openApp({ isolated: true }));
});

after(async () => {
  for (const { context, profile, server: s } of opened) {
    await context?.close();
    await s.close();
    rmSync(profile, { recursive: true, force: true });
  }
  console.log(`app timings (rough, this run): ${JSON.stringify(timings)}\nanswers: ${JSON.stringify(answers)}`);
});

describe('the chat app in Chromium', () => {
  test('first visit: the model download shows progress, then ready (threads: the page is cross-origin isolated)', async () => {
    await shot(page, '01-loaded');
    const seen = (await page.evaluate(() => globalThis.progressSeen)).map(Number);
    assert.ok(seen.length >= 2 && seen[0] < MODEL_BYTES, `progress values seen: ${seen}`);
    assert.equal(seen.at(-1), MODEL_BYTES);
    assert.equal(Number(await page.getAttribute('[data-testid=load-progress]', 'max')), MODEL_BYTES);
    assert.match(await page.textContent('#load-text'), /downloaded/);
    assert.match(await page.textContent('#threads'), /^2 threads \(cross-origin isolated\)/);
    assert.equal(await page.textContent('[data-testid=cache-bytes]'), 'empty');
    timings.firstLoadMs = Number(await page.getAttribute('body', 'data-load-ms'));
    timings.downloadBytes = MODEL_BYTES;
  });

  test('a message gets an answer; the cache is shown by format', async () => {
    const { text, speed } = await say(page, MESSAGES[0]);
    assert.ok(text.length > 0, 'an answer');
    answers.push(text);
    timings.threadedTokensPerSecond = speed;
    timings.answerTokens = (await page.textContent('[data-testid=cache-bytes]')).match(/^(\d+) tokens/)[1];
    timings.wasmMemory = (await page.textContent('[data-testid=cache-bytes]')).match(/wasm memory .*$/)[0];
    assert.match(await page.textContent('[data-testid=cache-bytes]'), /int8 keys \/ uint4 values: \d+ tokens/);
    await shot(page, '02-answer');
  });

  test('offline, after a browser restart: the page opens from the service worker and the next answer equals an uninterrupted session\'s', async () => {
    assert.ok(await page.evaluate(() => navigator.serviceWorker.ready.then((r) => r.active !== null)));
    const url = page.url();
    await main.context.close();
    await server.close(); // the origin is gone...
    page = await launch(main);
    await main.context.setOffline(true); // ...and the browser offline
    await page.goto(url);
    await waitReady(page);
    timings.offlineLoadMs = Number(await page.getAttribute('body', 'data-load-ms'));
    assert.deepEqual(await transcriptOf(page), [{ role: 'user', text: MESSAGES[0] }, { role: 'bot', text: answers[0] }]);
    assert.match(await page.textContent('#load-text'), /from this browser's cache/);
    await shot(page, '03-offline-reloaded');
    const next = await say(page, MESSAGES[1]);
    answers.push(next.text);
    await shot(page, '04-offline-answer');

    // the same conversation without interruption, in a fresh profile, on a page that is not isolated (one thread)
    const reference = await openApp({ isolated: false });
    assert.match(await reference.page.textContent('#threads'), /^1 thread$/);
    const uninterrupted = [];
    for (const message of MESSAGES) uninterrupted.push(await say(reference.page, message));
    timings.singleThreadTokensPerSecond = uninterrupted[0].speed;
    assert.deepEqual(uninterrupted.map((a) => a.text), answers);
    await reference.context.close();
  });

  test('the saved cache is at most 0.25x the bytes of dense fp32 pages of the same tokens', async () => {
    const caches = await savedCaches(page);
    let saved = 0;
    let dense = 0;
    let tokens = 0;
    for (const bytes of Object.values(caches)) {
      const cache = ol.PagedCache.fromBytes(bytes);
      const blocks = cache.blocks;
      const width = blocks[0].key.dims[3];
      for (const b of blocks) [b.key, b.value].forEach((p) => p.dispose?.());
      tokens = cache.length;
      saved += bytes.byteLength;
      dense += 2 * 4 * width * cache.length; // K and V, float32
      cache.dispose();
    }
    timings.savedCache = { tokens, layers: Object.keys(caches).length, savedBytes: saved, denseFp32Bytes: dense, ratio: Number((saved / dense).toFixed(3)) };
    assert.ok(tokens > 40, `${tokens} tokens`);
    assert.ok(saved <= 0.25 * dense, `saved ${saved} bytes, dense fp32 ${dense} bytes`);
  });

  test('Regenerate gives the same answer as the first time with the same seed', async () => {
    const before = await transcriptOf(page);
    const saved = await savedCaches(page);
    const given = Number(await page.getAttribute('body', 'data-answers'));
    await page.click('[data-testid=regenerate]');
    await page.waitForFunction((n) => Number(document.body.dataset.answers) === n, given + 1);
    await waitReady(page);
    assert.deepEqual(await transcriptOf(page), before);
    assert.equal((await transcriptOf(page)).at(-1).text, answers[1]);
    assert.deepEqual(await savedCaches(page), saved, 'the same cache saved again');
    await shot(page, '05-regenerated');
  });

  test('New chat clears the transcript and the saved state, also after a reload', async () => {
    await page.click('[data-testid=new-chat]');
    await page.waitForFunction(() => document.querySelectorAll('[data-testid=transcript] li').length === 0);
    await waitReady(page);
    assert.equal(await savedCaches(page), null);
    assert.equal(await page.textContent('[data-testid=cache-bytes]'), 'empty');
    await page.reload();
    await waitReady(page);
    assert.deepEqual(await transcriptOf(page), []);
    await shot(page, '06-new-chat');
  });

  test('Stop ends the answer early and keeps it; Regenerate then gives the whole answer it began', async () => {
    // Send and Stop in one task: the Stop reaches the worker before its first step is over
    const given = Number(await page.getAttribute('body', 'data-answers') ?? 0);
    await page.fill('[data-testid=prompt]', MESSAGES[1]);
    await page.evaluate(() => {
      document.querySelector('[data-testid=send]').click();
      document.querySelector('[data-testid=stop]').click();
    });
    await page.waitForFunction((n) => Number(document.body.dataset.answers) === n, given + 1);
    await waitReady(page);
    const stopped = (await transcriptOf(page)).at(-1).text;
    await shot(page, '07-stopped');
    await page.click('[data-testid=regenerate]');
    await page.waitForFunction((n) => Number(document.body.dataset.answers) === n, given + 2);
    await waitReady(page);
    const whole = (await transcriptOf(page)).at(-1).text;
    assert.ok(stopped.length < whole.length && whole.startsWith(stopped), `stopped ${JSON.stringify(stopped)}, whole ${JSON.stringify(whole)}`);
  });

  test('a model directory opened from disk (file input) answers with its tokenizer and chat template; its conversation is saved apart', async () => {
    const folder = join(mkdtempSync(join(tmpdir(), 'onnx-light-picked-')), 'my-fortunes');
    cpSync(MODEL_DIR, folder, { recursive: true });
    try {
      const defaultTranscript = await transcriptOf(page);
      assert.ok(defaultTranscript.length > 0);
      const pick = async () => {
        await page.setInputFiles('[data-testid=model-files]', folder);
        await page.waitForFunction(() => document.body.dataset.model.startsWith('picked:'));
        await waitReady(page);
      };
      await pick();
      assert.equal(await page.textContent('#model-name'), 'my-fortunes');
      assert.match(await page.textContent('#model-info'), /onnx\/model_q4\.onnx; tokens: tokenizer\.json; turns: the directory's chat template/);
      assert.deepEqual(await transcriptOf(page), [], 'the picked model has no conversation yet');
      // the same model, seed and empty conversation as the first answer of the session
      const { text } = await say(page, MESSAGES[0]);
      assert.equal(text, answers[0]);
      assert.ok((await savedCaches(page)) !== null, 'saved under the picked model');
      await shot(page, '08-picked-model');

      // a reload opens the default model with its own conversation; picking the directory again brings its one back
      await page.reload();
      await waitReady(page);
      assert.deepEqual(await transcriptOf(page), defaultTranscript);
      await pick();
      assert.deepEqual(await transcriptOf(page), [{ role: 'user', text: MESSAGES[0] }, { role: 'bot', text: answers[0] }]);
    } finally {
      rmSync(dirname(folder), { recursive: true, force: true });
    }
  });

  test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});

describe('npm run web', () => {
  test('prints the app URL as its first line, on $PORT', async () => {
    const port = await new Promise((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address();
        probe.close(() => resolve(free));
      });
    });
    const child = spawn('npm', ['run', '--silent', 'web'], { cwd: ROOT, env: { ...process.env, PORT: String(port) }, detached: true, stdio: ['ignore', 'pipe', 'inherit'] });
    try {
      const first = await new Promise((resolve, reject) => {
        let out = '';
        child.stdout.on('data', (chunk) => {
          out += chunk;
          if (out.includes('\n')) resolve(out.slice(0, out.indexOf('\n')));
        });
        child.on('exit', (code) => reject(new Error(`npm run web exited with ${code}: ${out}`)));
      });
      assert.equal(first, `http://127.0.0.1:${port}/web/dist/index.html`);
      const response = await fetch(first);
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('cross-origin-embedder-policy'), 'require-corp');
      assert.match(await response.text(), /data-testid="transcript"/);
    } finally {
      process.kill(-child.pid);
    }
  });
});
