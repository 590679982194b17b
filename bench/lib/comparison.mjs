// The parent side of the decode comparisons (bench/decode.mjs in Node
// processes, bench/browser.mjs in Chromium pages): options, models built and
// cached in bench/.models/, the interleaved runs, medians and ratios, JSON.
// `measure(runtime, modelPath, threads)` makes one measurement (a fresh
// process or page) and returns the numbers of bench/lib/decode_run.mjs, or
// { error }.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

import { pagedForm } from './decode_run.mjs';
import { SHAPES, buildLlama, paramCount } from './llama_model.mjs';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '../..');
const MODELS = join(ROOT, 'bench/.models');

/** parseArgs options both benchmarks take. */
export const COMMON_OPTIONS = {
  shapes: { type: 'string', default: 'tiny,58M' },
  runs: { type: 'string', default: '5' },
  threads: { type: 'string', default: '1,2' },
  prompt: { type: 'string', default: '32' },
  steps: { type: 'string', default: '64' },
  'prefill-runs': { type: 'string', default: '20' },
  contexts: { type: 'string', default: '1024,2048' },
  forms: { type: 'string', default: 'plain' },
  runtimes: { type: 'string', default: 'ol,ort' },
  skip: { type: 'string', default: '' }, // keys left out of the interleaving, e.g. ort@int4a4
  seed: { type: 'string', default: '1234' },
};

export const contextList = (args) => (args.contexts ? args.contexts.split(',').filter(Boolean).map(Number) : []);

/** The path of the model of a shape and form, built on first use. */
export function modelPath(shapeName, seed, form = 'plain') {
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

export const median = (xs) => {
  const s = xs.filter((x) => typeof x === 'number').sort((a, b) => a - b);
  if (!s.length) return null;
  const m = s.length >> 1;
  return s.length & 1 ? s[m] : (s[m - 1] + s[m]) / 2;
};

export function revision() {
  const r = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : null;
}

/**
 * Runs every (thread count, form, runtime) of args on every shape, --runs
 * times interleaved, and returns the report: `header` fields, the settings,
 * and per shape the medians, ratios against ORT-web and the raw runs.
 */
export async function runComparison(args, measure, header) {
  const contexts = contextList(args);
  const metrics = ['createMs', 'prefillFirstMs', 'prefillSteadyMs', 'decodeMedianMs', 'decodeP90Ms', ...contexts.map((c) => `decodeAt${c}Ms`), 'peakRssMB',
    'cacheBytes', ...contexts.map((c) => `cacheBytesAt${c}`)];
  const runtimes = args.runtimes.split(',');
  const forms = args.forms.split(',');
  const runs = Number(args.runs);
  const threadCounts = args.threads.split(',').map(Number);
  const skip = args.skip ? args.skip.split(',') : [];
  if (threadCounts.some((t) => !Number.isInteger(t) || t < 1)) throw new Error(`--threads: integers >= 1, got ${args.threads}`);
  if (!Number.isInteger(runs) || runs < 1) throw new Error(`--runs: an integer >= 1, got ${args.runs}`);
  const report = {
    ...header,
    revision: revision(),
    date: new Date().toISOString(),
    threads: threadCounts,
    prompt: Number(args.prompt),
    steps: Number(args.steps),
    prefillRuns: Number(args['prefill-runs']),
    contexts,
    runs,
    forms,
    skip,
    models: [],
  };
  const key = (r, f, t) => `${f === 'plain' ? r : `${r}@${f}`}${threadCounts.length > 1 ? `/${t}t` : ''}`;
  for (const shapeName of args.shapes.split(',')) {
    const shape = SHAPES[shapeName];
    if (!shape) throw new Error(`unknown shape ${shapeName} (have ${Object.keys(SHAPES)})`);
    const paths = Object.fromEntries(forms.map((f) => [f, modelPath(shapeName, Number(args.seed), f)]));
    const pairs = threadCounts.flatMap((t) => forms.flatMap((f) => runtimes.map((r) => [key(r, f, t), r, f, t])))
      .filter(([k]) => !skip.includes(k));
    const raw = Object.fromEntries(pairs.map(([k]) => [k, []]));
    const pagedModels = {};
    if (runtimes.some((r) => pagedForm(r))) for (const f of forms) pagedModels[f] = await pagedModel(paths[f]);
    for (let run = 0; run < runs; run++) {
      for (const [k, r, f, t] of pairs) raw[k].push(await measure(r, pagedForm(r) ? pagedModels[f].path : paths[f], t));
    }
    const medians = Object.fromEntries(
      pairs.map(([k]) => [k, Object.fromEntries(metrics.map((m) => [m, median(raw[k].map((x) => x[m]))]))]),
    );
    const modelBytes = Object.fromEntries(forms.map((f) => [f, readFileSync(paths[f]).byteLength]));
    const entry = { shape: shapeName, ...shape, params: paramCount(shape), modelBytes: forms.length === 1 ? modelBytes[forms[0]] : modelBytes, medians };
    for (const [f, { convertMs }] of Object.entries(pagedModels)) (entry.pagedConvertMs ??= {})[f] = convertMs; // null: cached
    const ratio = (a, b) => Object.fromEntries(metrics.map((k) => [k, a[k] && b[k] ? +(a[k] / b[k]).toFixed(3) : null]));
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
  return report;
}
