// Bundlers: a small app importing 'onnx-light' (resolved through the
// package's exports, as an app's node_modules would) bundled with esbuild,
// with the run-time files of dist/ copied where the README says, runs in
// Chromium on a cross-origin isolated page (threaded module) and on a plain
// one; env.wasm.wasmPaths moves every module variant's files at once; a
// missing or unreachable file fails within seconds with an OnnxLightError
// naming its URL, also the threaded module's scripts when only the .wasm
// files were copied (which used to hang).
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import * as esbuild from 'esbuild';
import * as ol from 'onnx-light';

import { launchChromium, newProfile } from './chromium.mjs';
import { serve } from './server.mjs';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const STEPS = 6;
const PROMPT = [84, 104, 101, 32]; // 'The '
// the SIMD128 and relaxed-SIMD modules (Chromium passes the relaxed probe)
const WASM_ONLY = ['onnx_light.wasm', 'onnx_light_relaxed.wasm', 'threads/onnx_light_threads.wasm', 'threads/onnx_light_threads_relaxed.wasm'];
const ALL = [...WASM_ONLY, 'threads/onnx_light_threads.js', 'threads/onnx_light_threads.worker.js'];

const APP = `
import { InferenceSession, Tensor, emptyCaches, env, numThreads } from 'onnx-light';

globalThis.runApp = async ({ wasmPaths, threads, steps, prompt }) => {
  if (wasmPaths !== null) env.wasm.wasmPaths = wasmPaths;
  env.wasm.numThreads = threads;
  const started = performance.now();
  try {
    const session = await InferenceSession.create('/site/model.onnx');
    const input_ids = new Tensor('int64', BigInt64Array.from(prompt, BigInt), [1, prompt.length]);
    const out = await session.generate({ input_ids, ...(await emptyCaches(session)) }, { maxNewTokens: steps });
    await session.release();
    return { isolated: crossOriginIsolated, threads: numThreads(), tokens: Array.from(out.data, Number) };
  } catch (error) {
    return { error: { name: error.name, code: error.code, message: error.message }, seconds: (performance.now() - started) / 1000 };
  }
};
`;

let site;
let servers;
let context;
let profile;
let expected;
const pageErrors = [];

function place(files, under) {
  for (const file of files) {
    mkdirSync(dirname(join(site, under, file)), { recursive: true });
    copyFileSync(join(ROOT, 'dist', file), join(site, under, file));
  }
}

before(async () => {
  const session = await ol.InferenceSession.create(join(ROOT, 'models/fortunes-byte-0.8M.onnx'));
  const input_ids = new ol.Tensor('int64', BigInt64Array.from(PROMPT, BigInt), [1, PROMPT.length]);
  const out = await session.generate({ input_ids, ...(await ol.emptyCaches(session)) }, { maxNewTokens: STEPS });
  expected = Array.from(out.data, Number);
  await session.release();

  // the app's project: its source, and the package in its node_modules
  site = mkdtempSync(join(tmpdir(), 'onnx-light-bundle-'));
  mkdirSync(join(site, 'project/node_modules'), { recursive: true });
  symlinkSync(ROOT, join(site, 'project/node_modules/onnx-light'));
  writeFileSync(join(site, 'project/app.js'), APP);
  await esbuild.build({
    entryPoints: [join(site, 'project/app.js')],
    outfile: join(site, 'site/app.js'),
    bundle: true,
    format: 'esm',
    platform: 'browser',
    logLevel: 'error',
  });
  writeFileSync(join(site, 'site/index.html'), '<!doctype html><meta charset="utf-8"><script type="module" src="app.js"></script>\n');
  copyFileSync(join(ROOT, 'models/fortunes-byte-0.8M.onnx'), join(site, 'site/model.onnx'));
  place(ALL, 'site'); // beside the bundle: the default
  place(ALL, 'site/vendor/onnx-light'); // under env.wasm.wasmPaths
  place(WASM_ONLY, 'site/wasm-only'); // the .wasm files only
  servers = {
    isolated: await serve(site, 0, { isolated: true, prefixes: ['/site/'] }),
    plain: await serve(site, 0, { prefixes: ['/site/'] }),
  };
  profile = newProfile('onnx-light-bundle-profile-');
  context = await launchChromium(profile);
});

after(async () => {
  await context?.close();
  for (const server of Object.values(servers ?? {})) await server.close();
  for (const dir of [site, profile]) if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A fresh page (a fresh module) of the bundled app running runApp(options). */
async function run(kind, { wasmPaths = null, threads }) {
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
  try {
    await page.goto(`${servers[kind].origin}/site/index.html`);
    await page.waitForFunction(() => typeof globalThis.runApp === 'function');
    let timer;
    const hung = new Promise((_, reject) => (timer = setTimeout(() => reject(new Error('no result within 30 s: the page hangs')), 30000)));
    try {
      return await Promise.race([page.evaluate((options) => globalThis.runApp(options), { wasmPaths, threads, steps: STEPS, prompt: PROMPT }), hung]);
    } finally {
      clearTimeout(timer);
    }
  } finally {
    await page.close();
  }
}

describe('an esbuild bundle of the package in Chromium', () => {
  test('cross-origin isolated: the threaded module from beside the bundle', async () => {
    const result = await run('isolated', { threads: 2 });
    assert.deepEqual(result, { isolated: true, threads: 2, tokens: expected });
    assert.ok(servers.isolated.requests.includes('/site/threads/onnx_light_threads.worker.js'));
  });

  test('not isolated: the single-threaded module', async () => {
    assert.deepEqual(await run('plain', { threads: 2 }), { isolated: false, threads: 1, tokens: expected });
  });

  test('env.wasm.wasmPaths: one base URL for both variants', async () => {
    const before = servers.isolated.requests.length;
    assert.deepEqual(await run('isolated', { threads: 2, wasmPaths: '/site/vendor/onnx-light' }), { isolated: true, threads: 2, tokens: expected });
    const fetched = servers.isolated.requests.slice(before).filter((path) => /onnx_light/.test(path));
    assert.deepEqual(fetched.filter((path) => !path.startsWith('/site/vendor/onnx-light/')), []);
    assert.ok(fetched.includes('/site/vendor/onnx-light/threads/onnx_light_threads.js'));
    assert.deepEqual(await run('plain', { threads: 1, wasmPaths: `${servers.plain.origin}/site/vendor/onnx-light/` }), { isolated: false, threads: 1, tokens: expected });
  });

  test('only the .wasm files copied: the isolated page fails fast naming the missing script; the plain page runs', async () => {
    const result = await run('isolated', { threads: 2, wasmPaths: '/site/wasm-only/' });
    assert.equal(result.error?.name, 'OnnxLightError', JSON.stringify(result));
    assert.equal(result.error.code, 'OL_NOT_FOUND');
    assert.match(result.error.message, new RegExp(`${servers.isolated.origin}/site/wasm-only/threads/onnx_light_threads\\.(worker\\.)?js failed: HTTP 404`));
    assert.ok(result.seconds < 5, `failed after ${result.seconds} s`);
    assert.deepEqual(await run('plain', { threads: 2, wasmPaths: '/site/wasm-only/' }), { isolated: false, threads: 1, tokens: expected });
  });

  test('a missing or unreachable module fails within seconds, naming the URL', async () => {
    const missing = await run('plain', { threads: 1, wasmPaths: '/site/nowhere/' });
    assert.equal(missing.error?.code, 'OL_NOT_FOUND', JSON.stringify(missing));
    assert.match(missing.error.message, new RegExp(`${servers.plain.origin}/site/nowhere/onnx_light_relaxed\\.wasm failed: HTTP 404`));
    const unreachable = await run('isolated', { threads: 2, wasmPaths: 'http://127.0.0.1:9/onnx-light/' });
    assert.equal(unreachable.error?.code, 'OL_NOT_FOUND', JSON.stringify(unreachable));
    assert.match(unreachable.error.message, /http:\/\/127\.0\.0\.1:9\/onnx-light\/threads\/onnx_light_threads_relaxed\.wasm failed/);
    for (const r of [missing, unreachable]) assert.ok(r.seconds < 5, `failed after ${r.seconds} s`);
    const bad = await run('plain', { threads: 1, wasmPaths: 42 });
    assert.equal(bad.error?.code, 'OL_INVALID_ARGUMENT');
    assert.match(bad.error.message, /env\.wasm\.wasmPaths must be a URL or a string/);
  });

  test('no page errors', () => {
    assert.deepEqual(pageErrors, []);
  });
});
