#!/usr/bin/env node
// Decode benchmark: onnx-light (dist/node.js) against onnxruntime-web (wasm
// backend) on Llama-shaped decoders with seeded random weights, in the
// plain-operator form torch exports (bench/lib/llama_model.mjs). Both runtimes
// run in the same invocation, interleaved (ol, ort, ol, ort, ...), each
// measurement in a fresh child process. Output: JSON on stdout.
//
//   node bench/decode.mjs [--shapes tiny,58M] [--runs 5] [--threads 1,2]
//                         [--prompt 32] [--steps 64] [--prefill-runs 20] [--runtimes ol,ort]
//                         [--contexts 1024,2048] [--forms plain,int4]
//
// Forms: 'plain' (fp32 MatMul weights), 'int4' (projections and head as
// com.microsoft MatMulNBits, 4 bits, block 32) and 'int4a4' (the same with
// accuracy_level 4: int8 activations allowed). With several forms every
// (form, runtime) pair joins one interleaving; keys are the runtime name for
// 'plain' and `runtime@form` otherwise, and the ratios compare each form's
// onnx-light against ORT-web on the same form and on the plain fp32 form
// (ratiosOverOrt: { 'ol@int4': { vs 'ort@int4' }, ... }).
//
// Threads: every count in --threads joins the interleaving too; with more
// than one, keys end in `/<n>t` ('ol/2t', 'ort@int4/1t') and each
// onnx-light key is compared with ORT-web at the same count. onnx-light gets
// env.wasm.numThreads = n (1: its single-threaded module), ORT-web
// env.wasm.numThreads = n and intraOpNumThreads = n.
//
// Per child: session create (module init + create, model bytes already in
// memory), prefill of `prompt` tokens from an empty cache (the first call, and
// the median of the second half of `prefill-runs` calls, once V8 has tiered the
// wasm up), then `steps` single-token decode steps feeding present.* back
// as past_key_values.* (per-token median and p90), per-token decode with a
// cache of each of `contexts` tokens already present (seeded values fed as
// past, median of 15 steps: decodeAt<N>Ms), peak RSS (maxRSS of the child). The parent reports per-runtime medians over runs and the ratio
// onnx-light / ORT-web of each median. Another onnx-light build joins the
// interleaving as a runtime `ol=path/to/dist` (e.g. --runtimes ol,ort,ol=/tmp/old/dist
// for before/after); OL_DIST=path/to/dist replaces `ol` itself. `olstate` (or
// `olstate=path/to/dist`) runs onnx-light the way generation does: caches bound as
// bindCache does, inside wasm (PersistentValueState.create's bindCache option: builds
// from before 2026-11-30 lack it), kept in the state (growing in place), each step
// fetching only the logits. `olpaged` and `olpagedq` (also `=path/to/dist`)
// run the decoder rewritten onto paged caches (toPagedModel, done once by this
// process before the runs and cached beside the model: pagedConvertMs of the
// model entry) in a PersistentValueState, float32 pages or
// int8 keys / uint4 values; their long-context caches are seeded float pages
// of 16 tokens (quantized with fixed scales for olpagedq). cacheBytes and
// cacheBytesAt<N>: the page payloads held after decoding (paged forms) or the
// dense float32 K and V of those tokens (others). Models are cached in
// bench/.models/ (git-ignored).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { runChild } from './lib/decode_child.mjs';
import { SHAPES, buildLlama, paramCount } from './lib/llama_model.mjs';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const MODELS = join(ROOT, 'bench/.models');
const { values: args } = parseArgs({
  options: {
    shapes: { type: 'string', default: 'tiny,58M' },
    runs: { type: 'string', default: '5' },
    threads: { type: 'string', default: '1,2' },
    prompt: { type: 'string', default: '32' },
    steps: { type: 'string', default: '64' },
    'prefill-runs': { type: 'string', default: '20' },
    contexts: { type: 'string', default: '1024,2048' },
    forms: { type: 'string', default: 'plain' },
    runtimes: { type: 'string', default: 'ol,ort' },
    seed: { type: 'string', default: '1234' },
    child: { type: 'string' }, // internal: runtime of a measurement child
    model: { type: 'string' },
  },
});

const contextList = args.contexts ? args.contexts.split(',').filter(Boolean).map(Number) : [];

if (args.child) {
  const result = await runChild({
    runtime: args.child,
    modelPath: args.model,
    threads: Number(args.threads),
    prompt: Number(args.prompt),
    steps: Number(args.steps),
    seed: Number(args.seed),
    prefillRuns: Number(args['prefill-runs']),
    contexts: contextList,
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

function modelPath(shapeName, seed, form = 'plain') {
  const s = SHAPES[shapeName];
  const dims = `L${s.layers}-W${s.width}-H${s.heads}x${s.headSize}-F${s.ffn}-V${s.vocab}-P${s.maxPos}`;
  const path = join(MODELS, `llama-${shapeName}-${dims}-${form}-seed${seed}.onnx`);
  if (!existsSync(path)) {
    mkdirSync(MODELS, { recursive: true });
    const bytes = buildLlama(SHAPES[shapeName], seed, form);
    writeFileSync(`${path}.tmp`, bytes);
    renameSync(`${path}.tmp`, path);
  }
  return path;
}

// The paged rewrite of a model, made once (with the package's toPagedModel)
// and cached beside it: { path, convertMs } (convertMs null when it was cached).
const PAGED_RUNTIME = /^olpagedq?(=|$)/;
async function pagedModel(path) {
  const out = path.replace(/\.onnx$/, '-paged.onnx');
  if (existsSync(out)) return { path: out, convertMs: null };
  const ol = await import('onnx-light');
  const t = performance.now();
  const bytes = await ol.toPagedModel(readFileSync(path));
  const convertMs = performance.now() - t;
  writeFileSync(`${out}.tmp`, bytes);
  renameSync(`${out}.tmp`, out);
  return { path: out, convertMs };
}

function measure(runtime, path, threads) {
  const child = spawnSync(
    process.execPath,
    [fileURLToPath(import.meta.url), '--child', runtime, '--model', path, '--threads', String(threads), '--prompt', args.prompt, '--steps', args.steps, '--seed', args.seed, '--prefill-runs', args['prefill-runs'], '--contexts', args.contexts],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (child.status !== 0) return { error: `exit ${child.status}: ${(child.stderr || '').slice(-2000)}` };
  const line = child.stdout.trim().split('\n').pop();
  return JSON.parse(line);
}

const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length & 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};
const METRICS = ['createMs', 'prefillFirstMs', 'prefillSteadyMs', 'decodeMedianMs', 'decodeP90Ms', ...contextList.map((c) => `decodeAt${c}Ms`), 'peakRssMB',
  'cacheBytes', ...contextList.map((c) => `cacheBytesAt${c}`)];

function revision() {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

const runtimes = args.runtimes.split(',');
const RUNS = Number(args.runs);
const report = {
  bench: 'decode',
  revision: revision(),
  node: process.version,
  date: new Date().toISOString(),
  threads: args.threads.split(',').map(Number),
  prompt: Number(args.prompt),
  steps: Number(args.steps),
  prefillRuns: Number(args['prefill-runs']),
  contexts: contextList,
  runs: RUNS,
  forms: args.forms.split(','),
  models: [],
};
const forms = args.forms.split(',');
const threadCounts = args.threads.split(',').map(Number);
if (threadCounts.some((t) => !Number.isInteger(t) || t < 1)) throw new Error(`--threads: integers >= 1, got ${args.threads}`);
const key = (r, f, t) => `${f === 'plain' ? r : `${r}@${f}`}${threadCounts.length > 1 ? `/${t}t` : ''}`;
for (const shapeName of args.shapes.split(',')) {
  const shape = SHAPES[shapeName];
  if (!shape) throw new Error(`unknown shape ${shapeName} (have ${Object.keys(SHAPES)})`);
  const paths = Object.fromEntries(forms.map((f) => [f, modelPath(shapeName, Number(args.seed), f)]));
  const pairs = threadCounts.flatMap((t) => forms.flatMap((f) => runtimes.map((r) => [key(r, f, t), r, f, t])));
  const raw = Object.fromEntries(pairs.map(([k]) => [k, []]));
  const pagedModels = {};
  if (runtimes.some((r) => PAGED_RUNTIME.test(r))) for (const f of forms) pagedModels[f] = await pagedModel(paths[f]);
  for (let run = 0; run < RUNS; run++) {
    for (const [k, r, f, t] of pairs) raw[k].push(measure(r, PAGED_RUNTIME.test(r) ? pagedModels[f].path : paths[f], t));
  }
  const medians = Object.fromEntries(
    pairs.map(([k]) => [k, Object.fromEntries(METRICS.map((m) => [m, median(raw[k].map((x) => x[m]))]))]),
  );
  const modelBytes = Object.fromEntries(forms.map((f) => [f, readFileSync(paths[f]).byteLength]));
  const entry = { shape: shapeName, ...shape, params: paramCount(shape), modelBytes: forms.length === 1 ? modelBytes[forms[0]] : modelBytes, medians };
  for (const [f, { convertMs }] of Object.entries(pagedModels)) (entry.pagedConvertMs ??= {})[f] = convertMs; // null: cached
  const ratio = (a, b) => Object.fromEntries(METRICS.map((k) => [k, a[k] && b[k] ? +(a[k] / b[k]).toFixed(3) : null]));
  if (medians.ol && medians.ort) entry.ratioOlOverOrt = ratio(medians.ol, medians.ort);
  const ratios = {};
  for (const [k, r, f, t] of pairs) {
    if (!r.startsWith('ol')) continue;
    const vs = {};
    const ortSame = key('ort', f, t), ortPlain = key('ort', 'plain', t);
    if (f !== 'plain' || r !== 'ol' || threadCounts.length > 1) if (medians[ortSame]) vs[ortSame] = ratio(medians[k], medians[ortSame]);
    if (f !== 'plain' && medians[ortPlain]) vs[ortPlain] = ratio(medians[k], medians[ortPlain]);
    if (Object.keys(vs).length) ratios[k] = vs;
  }
  if (Object.keys(ratios).length) entry.ratiosOverOrt = ratios;
  entry.raw = raw;
  report.models.push(entry);
}
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
