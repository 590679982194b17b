#!/usr/bin/env node
// Randomized one-node graphs per operator (seeded), run through
// onnxruntime-node (the oracle) and onnx-light (dist/node.js, the wasm build),
// compared with per-dtype tolerances: |a - b| <= atol + rtol * |b|.
// Covers the com.microsoft contrib operators and opset 18-23 forms of
// standard operators. Prints a JSON summary (max abs error per operator and
// dtype), then "N passed, M failed"; exits nonzero on failure.
// A case may carry `known` (a documented difference of a kernel owned
// elsewhere): its mismatch is listed under knownDifferences (and in docs/parity.md), not counted.
// Options: --seeds 1,2,3 (default 1..4), --filter OpName, --verbose.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { create, toBinary } from '@bufbuild/protobuf';
import { TensorProtoSchema } from 'onnx-light/proto';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ort from 'onnxruntime-node';

import { InferenceSession, Tensor } from '../../dist/node.js';
import { cases as contribCases, int8Cases as contribInt8Cases } from './gen_contrib.mjs';
import { cases as standardCases } from './gen_standard.mjs';
import { DT, rng, toFloat64 } from './gen_util.mjs';

const ROOT_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

export const TOLERANCE = {
  float32: { atol: 1e-4, rtol: 1e-4 },
  float16: { atol: 1e-2, rtol: 1e-2 },
  int64: { atol: 0, rtol: 0 },
  int32: { atol: 0, rtol: 0 },
  int8: { atol: 0, rtol: 0 },
  uint8: { atol: 0, rtol: 0 },
};

const argv = process.argv.slice(2);
const opt = (name, dflt) => {
  const i = argv.indexOf(name);
  return i >= 0 ? argv[i + 1] : dflt;
};
const seeds = opt('--seeds', opt('--seed', '1,2,3,4')).split(',').map(Number);
const filter = opt('--filter', null);
const verbose = argv.includes('--verbose');

const all = seeds
  .flatMap((seed) => {
    const r = rng(seed);
    return [...contribCases(r), ...standardCases(r), ...contribInt8Cases(rng(seed + 0xacc4))].map((c) => ({
      ...c,
      name: `${c.name} (seed ${seed})`,
    }));
  })
  .filter((c) => !filter || c.op === filter);

function compare(a, b, tol) {
  // a: onnx-light, b: onnxruntime (Float64Arrays)
  let maxAbs = 0;
  let bad = -1;
  for (let i = 0; i < b.length; i++) {
    const x = a[i];
    const y = b[i];
    if (Number.isNaN(y) || Number.isNaN(x)) {
      if (Number.isNaN(x) !== Number.isNaN(y) && bad < 0) bad = i;
      continue;
    }
    if (x === y) continue;
    if (!Number.isFinite(x) || !Number.isFinite(y)) {
      if (bad < 0) bad = i;
      maxAbs = Infinity;
      continue;
    }
    const d = Math.abs(x - y);
    if (!(d <= tol.atol + tol.rtol * Math.abs(y)) && bad < 0) bad = i;
    if (d > maxAbs) maxAbs = d;
  }
  return { maxAbs, bad };
}

const summary = {};
let passed = 0;
let failed = 0;
let skipped = 0;
const failures = [];
const known = [];
const compared = []; // cases onnxruntime ran, with its outputs, for the native/wasm check
const t0 = Date.now();

for (const c of all) {
  const key = `${c.domain ? `${c.domain}.` : ''}${c.op}`;
  const entry = (summary[key] ??= {});
  const st = (entry[c.dtype] ??= { cases: 0, maxAbsError: 0, failed: 0 });
  let oSess;
  try {
    oSess = await ort.InferenceSession.create(c.bytes);
  } catch (e) {
    skipped += 1;
    st.skipped = (st.skipped ?? 0) + 1;
    st.skipReason = String(e.message).split('\n')[0].slice(0, 160);
    if (verbose) console.log(`skip ${c.name}: onnxruntime rejects the model: ${st.skipReason}`);
    continue;
  }
  st.cases += 1;
  let why = null;
  try {
    const oFeeds = {};
    const lFeeds = {};
    for (const [name, t] of Object.entries(c.feeds)) {
      oFeeds[name] = new ort.Tensor(t.type, t.data, t.dims);
      lFeeds[name] = new Tensor(t.type, t.data, t.dims);
    }
    const oOut = await oSess.run(oFeeds);
    compared.push({ c, expected: c.outputs.map((name) => oOut[name]) });
    const lSess = await InferenceSession.create(c.bytes);
    const lOut = await lSess.run(lFeeds);
    for (const name of c.outputs) {
      const o = oOut[name];
      const l = lOut[name];
      if (!l) throw new Error(`onnx-light produced no output '${name}'`);
      if (JSON.stringify([...o.dims]) !== JSON.stringify([...l.dims]))
        throw new Error(`output '${name}' shape [${l.dims}] vs onnxruntime [${o.dims}]`);
      if (o.type !== l.type) throw new Error(`output '${name}' type ${l.type} vs onnxruntime ${o.type}`);
      const tol = c.tolerance ?? TOLERANCE[o.type] ?? TOLERANCE.float32;
      const a = toFloat64({ type: l.type, data: l.data });
      const b = toFloat64({ type: o.type, data: o.data });
      const { maxAbs, bad } = compare(a, b, tol);
      st.maxAbsError = Math.max(st.maxAbsError, maxAbs);
      if (bad >= 0 && !why) why = `output '${name}'[${bad}] = ${a[bad]}, onnxruntime ${b[bad]} (tolerance ${tol.atol} + ${tol.rtol}*|b|)`;
    }
    await lSess.release();
  } catch (e) {
    why = `error: ${e.message}`;
  }
  await oSess.release?.();
  if (why && c.known) {
    // a documented difference of another operator's kernel: reported, not counted as a failure
    st.knownDifferences = (st.knownDifferences ?? 0) + 1;
    st.knownReason = c.known;
    known.push(`${c.name}: ${why}`);
    if (verbose) console.log(`known ${c.name}: ${why}`);
  } else if (why) {
    failed += 1;
    st.failed += 1;
    failures.push(`${c.name}: ${why}`);
    console.log(`FAIL ${c.name}: ${why}`);
  } else {
    passed += 1;
    if (verbose) console.log(`ok ${c.name}`);
  }
}

console.log(JSON.stringify({ seeds, tolerance: TOLERANCE, seconds: (Date.now() - t0) / 1000, skipped, knownDifferences: known, operators: summary }, null, 1));
if (!filter) writeParityDoc(summary, known); // a filtered run would shrink the doc to one operator
const bitExact = nativeMatchesWasm(compared);
if (!bitExact.ok) failed += 1;
if (known.length) console.log(`random graphs: ${known.length} documented differences from onnxruntime (listed above and in docs/parity.md)`);
console.log(`random graphs: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);

/** docs/parity.md: the maximum absolute error per operator and dtype (generated; do not edit). */
function writeParityDoc(ops, differences) {
  const lines = [
    '# Parity with onnxruntime-node',
    '',
    'Generated by `node tests/parity/random_graphs.mjs`: seeded random single-operator',
    'graphs run through onnxruntime-node and onnx-light (wasm build). Tolerances:',
    Object.entries(TOLERANCE).map(([t, v]) => `${t} ${v.atol} abs + ${v.rtol} rel`).join(', ') + '.',
    'Do not edit by hand.',
    '',
    '| operator | dtype | cases | max abs error | failed | note |',
    '| --- | --- | ---: | ---: | ---: | --- |',
  ];
  for (const op of Object.keys(ops).sort()) {
    for (const [dtype, st] of Object.entries(ops[op])) {
      const note = st.knownReason ?? (st.skipped ? `skipped ${st.skipped}: ${st.skipReason}` : '');
      lines.push(`| ${op} | ${dtype} | ${st.cases} | ${st.maxAbsError.toExponential(2)} | ${st.failed} | ${note.replaceAll('|', '\\|')} |`);
    }
  }
  lines.push('', '## Documented differences', '');
  lines.push(...(differences.length ? differences.map((d) => `- ${d}`) : ['None.']), '');
  mkdirSync(join(ROOT_DIR, 'docs'), { recursive: true });
  writeFileSync(join(ROOT_DIR, 'docs', 'parity.md'), lines.join('\n'));
}

function tensorProto(name, type, dims, data) {
  const bytes = new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
  return toBinary(TensorProtoSchema, create(TensorProtoSchema, { name, dims: dims.map(BigInt), dataType: DT[type], rawData: bytes }));
}

/** Runs every compared case through the native and the wasm build of
 * tests/conformance/conformance.c (the cases written in the ONNX backend-test
 * layout) and checks that both builds give the same output bits. */
function nativeMatchesWasm(list) {
  const dir = mkdtempSync(join(tmpdir(), 'onnx-light-random-'));
  try {
    list.forEach(({ c, expected }, index) => {
      const caseDir = join(dir, `case_${String(index).padStart(4, '0')}`);
      mkdirSync(join(caseDir, 'test_data_set_0'), { recursive: true });
      writeFileSync(join(caseDir, 'model.onnx'), c.bytes);
      Object.entries(c.feeds).forEach(([name, t], i) =>
        writeFileSync(join(caseDir, 'test_data_set_0', `input_${i}.pb`), tensorProto(name, t.type, t.dims, t.data)));
      expected.forEach((t, i) =>
        writeFileSync(join(caseDir, 'test_data_set_0', `output_${i}.pb`), tensorProto(c.outputs[i], t.type, [...t.dims], t.data)));
    });
    const parse = (out) => new Map(out.split('\n').filter(Boolean).map((l) => JSON.parse(l)).map((r) => [r.name, r]));
    const native = parse(execFileSync(join(ROOT_DIR, 'build-native', 'conformance'), [dir], { encoding: 'utf8', maxBuffer: 1 << 26 }));
    const wasm = parse(execFileSync(process.execPath, ['--no-experimental-fetch', join(ROOT_DIR, 'build-wasm', 'conformance.cjs'), dir],
      { encoding: 'utf8', maxBuffer: 1 << 26 }));
    const differing = [...native.values()].filter((r) => r.hash === '0000000000000000' || wasm.get(r.name)?.hash !== r.hash);
    for (const r of differing) console.log(`FAIL native/wasm ${r.name}: native ${r.hash} (${r.result} ${r.reason}), wasm ${wasm.get(r.name)?.hash}`);
    console.log(`random graphs: native and wasm builds bit-identical on ${native.size - differing.length} of ${native.size} cases`);
    return { ok: differing.length === 0 };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
