#!/usr/bin/env node
// Browser benchmark: the comparison of bench/decode.mjs (onnx-light against
// onnxruntime-web's wasm backend on the seeded Llama-shaped decoders: session
// create, prefill, decode, decode at long contexts, memory) run in headless
// Chromium (Debian's /usr/bin/chromium or CHROMIUM_PATH, through
// playwright-core) instead of Node processes. Same options, keys, medians,
// ratios and JSON as bench/decode.mjs (read its header); differences:
//
//   node bench/browser.mjs [--shapes tiny,58M] [--runs 5] [--threads 1,2]
//                          [--forms plain,int4] [--runtimes ol,ort,olpaged] [--skip ort@int4a4]
//                          [--contexts 1024,2048] [--chromium PATH] ...
//
// - Every measurement is a fresh page (a fresh renderer process) of one
//   browser session, interleaved as the processes of decode.mjs are.
//   onnx-light is dist/browser.js (build it first: node scripts/build.mjs),
//   ORT-web its wasm-only bundle ort.wasm.min.mjs from node_modules.
// - 1 thread runs on a plain page; more threads on a cross-origin isolated
//   page (COOP/COEP headers: SharedArrayBuffer) served by a second server.
//   onnx-light gets env.wasm.numThreads = n (1: its single-threaded module),
//   ORT-web env.wasm.numThreads = n and intraOpNumThreads = n.
// - createMs includes fetching and compiling the .wasm (both runtimes stream
//   it from the server; the server sends cache-control: no-store, so no run
//   reuses the HTTP cache or V8's code cache of another: every create is a
//   first visit's). The model bytes are fetched before the timing starts.
// - peakRssMB and rssAfterCreateMB are the page's renderer process (VmHWM and
//   VmRSS in /proc; its workers run inside it), renderer baseline included;
//   null when the renderer could not be told apart.
// - `ol=path/to/dist` builds and OL_DIST are served from their folders.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { parseArgs } from 'node:util';

import { chromium } from 'playwright-core';

import { serve } from '../tests/browser/server.mjs';
import { COMMON_OPTIONS, ROOT, contextList, runComparison } from './lib/comparison.mjs';
import { olBuild } from './lib/decode_run.mjs';

const { values: args } = parseArgs({
  options: {
    ...COMMON_OPTIONS,
    chromium: { type: 'string', default: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium' },
  },
});

const version = spawnSync(args.chromium, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) throw new Error(`--chromium ${args.chromium}: cannot run it (${version.error?.message ?? version.stderr})`);

// other onnx-light builds, each served from its own folder
const mounts = { '/node_modules/onnxruntime-web/dist/': join(ROOT, 'node_modules/onnxruntime-web/dist/') };
const builds = {};
const mount = (dist, key) => {
  const prefix = `/ol-builds/${Object.keys(builds).length}/`;
  mounts[prefix] = `${resolve(dist)}/`;
  builds[key] = prefix;
};
if (process.env.OL_DIST) mount(process.env.OL_DIST, '');
for (const r of args.runtimes.split(',')) {
  const dist = olBuild(r);
  if (dist && !(dist in builds)) mount(dist, dist);
}
const serverOptions = { prefixes: ['/bench/'], mounts, noStore: true };
const servers = { plain: await serve(ROOT, 0, serverOptions), isolated: await serve(ROOT, 0, { ...serverOptions, isolated: true }) };

const profile = mkdtempSync(join(tmpdir(), 'onnx-light-bench-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: args.chromium,
  headless: true,
  args: [
    '--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
    '--disable-component-update', '--disable-sync',
    // no spare renderer started ahead: each new page's process is the one that appears with it
    '--disable-features=SpareRendererForSitePerProcess',
  ],
});

// renderer processes of this browser (pids), from /proc (Chromium rewrites
// its children's command lines as one string: arguments split by spaces)
function renderers() {
  const pids = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmdline;
    try {
      cmdline = ` ${readFileSync(`/proc/${entry}/cmdline`, 'utf8').replaceAll('\0', ' ')} `;
    } catch {
      continue; // exited meanwhile
    }
    if (cmdline.includes(' --type=renderer ') && cmdline.includes(` --user-data-dir=${profile} `)) pids.push(Number(entry));
  }
  return pids;
}

// a /proc/<pid>/status memory field in MiB (VmRSS, VmHWM), null if unreadable
function statusMB(pid, field) {
  try {
    const kb = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
    return kb ? Number(kb) / 1024 : null;
  } catch {
    return null;
  }
}

const pageErrors = [];
async function measure(runtime, path, threads) {
  const server = threads > 1 ? servers.isolated : servers.plain;
  const before = new Set(renderers());
  const page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(`${runtime}: ${error.message}`));
  // The page's renderer: the one that appeared with it. A cross-origin
  // isolated page leaves its first (about:blank) process for a new one, which
  // may not have exited yet: then the larger of them (the page holds the model).
  const renderer = () => {
    const fresh = renderers().filter((p) => !before.has(p));
    return fresh.length ? fresh.reduce((a, b) => (statusMB(b, 'VmRSS') > statusMB(a, 'VmRSS') ? b : a)) : null;
  };
  try {
    await page.exposeFunction('benchRendererRssMB', () => statusMB(renderer(), 'VmRSS'));
    await page.goto(`${server.origin}/tests/browser/index.html`);
    const options = {
      runtime,
      modelUrl: `/${relative(ROOT, path)}`,
      builds,
      threads,
      prompt: Number(args.prompt),
      steps: Number(args.steps),
      seed: Number(args.seed),
      prefillRuns: Number(args['prefill-runs']),
      contexts: contextList(args),
    };
    const result = await page.evaluate(async (o) => (await import('/bench/lib/browser_page.mjs')).run(o), options);
    if (threads > 1 && !result.crossOriginIsolated) return { error: 'the page is not cross-origin isolated' };
    return { ...result, peakRssMB: statusMB(renderer(), 'VmHWM') };
  } catch (error) {
    return { error: error.message.slice(0, 2000) };
  } finally {
    await page.close();
  }
}

const ortWeb = JSON.parse(readFileSync(join(ROOT, 'node_modules/onnxruntime-web/package.json'), 'utf8')).version;
try {
  const report = await runComparison(args, measure, { bench: 'browser', browser: version.stdout.trim(), onnxruntimeWeb: ortWeb });
  if (pageErrors.length) report.pageErrors = pageErrors;
  process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
} finally {
  await context.close();
  await Promise.all(Object.values(servers).map((s) => s.close()));
  rmSync(profile, { recursive: true, force: true });
}
