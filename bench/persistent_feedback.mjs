#!/usr/bin/env node
// The seed's decode comparison, through the JS package (wasm):
// a persistent state (PersistentValueState, K/V bound with persistent
// bindings, storage events on) against an explicit stateless session fed the
// previous call's outputs according to model.graph.persistent_bindings (no
// names guessed, no second mapping). Per token: wall time of each, retained
// logical bytes (visible tensor lengths, not reserved capacity), the event
// workspace peak, the Attention kernel's storage counters, a numerical check
// (stateful outputs equal the stateless ones) and pointer identity (the
// retained value is the returned output's buffer).
//
//   node bench/persistent_feedback.mjs [--tokens 16] [--fixture attention|fortunes|all] [--warmup 1]
//
// Fixtures: `attention`, the seed's small synthetic one (ONNX Attention,
// opset 23, one KV head, [1, 1, L, D] caches); `fortunes`, the repository's
// byte-level decoder (4 layers, bound with bindCache). Times are single
// observations in one process after --warmup discarded passes, not claims.
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import * as ol from 'onnx-light';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const { values: args } = parseArgs({
  options: { tokens: { type: 'string', default: '16' }, fixture: { type: 'string', default: 'all' }, warmup: { type: 'string', default: '1' } },
});
const TOKENS = Number(args.tokens);
const WARMUP = Number(args.warmup);
const now = () => process.hrtime.bigint();
const ns = (start) => Number(now() - start);

function revision() {
  try {
    return execFileSync('git', ['rev-parse', 'HEAD'], { cwd: ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return null;
  }
}

const sum = (events, field) => events.reduce((s, e) => s + e[field], 0);
const bytesOf = (t) => t.data.byteLength;
const sameData = (a, b) => a.dims.join() === b.dims.join() && a.data.every((x, i) => Object.is(x, b.data[i]) || x === b.data[i]);

/** One decode comparison. fixture: { model (bound bytes), initial(), feeds(t), fetch } */
async function compare(name, fixture) {
  const { model, initial, feeds } = fixture;
  // ---- setup
  let start = now();
  const state = await ol.PersistentValueState.create(model, initial(), { events: true });
  const statefulSetupNs = ns(start);
  start = now();
  const session = await ol.InferenceSession.create(model);
  const statelessSetupNs = ns(start);
  const bindings = session.persistentBindings; // the stateless loop follows the graph's declarations
  let carried = initial();

  const tokens = [];
  for (let t = 0; t < TOKENS; t++) {
    const input = feeds(t);
    // ---- stateful
    state.clearEvents();
    start = now();
    const outs = await state.run(input);
    const statefulNs = ns(start);
    const events = state.events();
    const values = state.values;
    const pointerIdentity = bindings.every((b) => values[b.input].wasmByteOffset === outs[b.output].wasmByteOffset);
    const retainedLogicalBytes = Object.values(values).reduce((s, v) => s + bytesOf(v), 0);
    // ---- stateless
    start = now();
    const plain = await session.run({ ...input, ...carried });
    const statelessNs = ns(start);
    const numericalMatch = session.outputNames.every((o) => sameData(outs[o], plain[o]));
    for (const v of Object.values(carried)) v.dispose?.();
    carried = Object.fromEntries(bindings.map((b) => [b.input, plain[b.output]]));
    for (const o of session.outputNames) if (!bindings.some((b) => b.output === o)) plain[o].dispose();
    // views held across the next call would force fresh buffers: drop them now
    for (const v of Object.values(values)) v.dispose();
    for (const v of Object.values(outs)) v.dispose();
    tokens.push({
      token: t + 1,
      statefulNs,
      statelessNs,
      retainedLogicalBytes,
      eventWorkspacePeakBytes: events.reduce((m, e) => Math.max(m, e.peakBytes), 0),
      kernelAllocations: sum(events, 'storageAllocations'),
      kernelAllocatedBytes: sum(events, 'storageAllocatedBytes'),
      kernelPrefixCopiedBytes: sum(events, 'storagePrefixCopiedBytes'),
      kernelAppendCopiedBytes: sum(events, 'storageAppendCopiedBytes'),
      kernelReuseCount: sum(events, 'storageReuseCount'),
      storageEvents: events.length,
      pointerIdentity,
      numericalMatch,
    });
  }
  await state.close();
  await session.release();
  for (const v of Object.values(carried)) v.dispose?.();
  const median = (k) => {
    const xs = tokens.slice(1).map((r) => r[k]).sort((a, b) => a - b);
    return xs.length ? xs[xs.length >> 1] : null;
  };
  return {
    fixture: name,
    description: fixture.description,
    bindings,
    persistentTensorInitialCapacity: 32,
    statefulSetupNs,
    statelessSetupNs,
    medianStatefulNsAfterFirst: median('statefulNs'),
    medianStatelessNsAfterFirst: median('statelessNs'),
    allPointerIdentity: tokens.every((r) => r.pointerIdentity),
    allNumericalMatch: tokens.every((r) => r.numericalMatch),
    tokens,
  };
}

async function attentionFixture() {
  const D = 8;
  const Dv = 8;
  const text =
    '<ir_version: 10, opset_import: ["" : 23]>' +
    `decode (float[1,2,1,${D}] q, float[1,1,1,${D}] k, float[1,1,1,${Dv}] v, float[1,1,L,${D}] past_key, float[1,1,L,${Dv}] past_value)` +
    ` => (float[1,2,1,${Dv}] y, float[1,1,M,${D}] present_key, float[1,1,M,${Dv}] present_value)` +
    '{ y, present_key, present_value = Attention(q, k, v, , past_key, past_value) }';
  const model = await ol.bindPersistent(await ol.parseModel(text), { past_key: 'present_key', past_value: 'present_value' });
  const tensor = (n, dims, t) => new ol.Tensor('float32', Float32Array.from({ length: n }, (_, i) => Math.sin(0.37 * t + 0.11 * i)), dims);
  return {
    description: `ONNX Attention (opset 23), 2 query heads, 1 KV head, Dk = ${D}, Dv = ${Dv}, caches [1, 1, L, D]`,
    model,
    initial: () => ({
      past_key: new ol.Tensor('float32', new Float32Array(0), [1, 1, 0, D]),
      past_value: new ol.Tensor('float32', new Float32Array(0), [1, 1, 0, Dv]),
    }),
    feeds: (t) => ({ q: tensor(2 * D, [1, 2, 1, D], t), k: tensor(D, [1, 1, 1, D], t + 1), v: tensor(Dv, [1, 1, 1, Dv], t + 2) }),
  };
}

async function fortunesFixture() {
  const path = join(ROOT, 'models/fortunes-byte-0.8M.onnx');
  const model = await ol.bindCache(readFileSync(path));
  const prompt = [...new TextEncoder().encode('The ')];
  const caches = await ol.emptyCaches(model);
  // a fixed token sequence (the greedy continuation is not needed for timing)
  const text = [...new TextEncoder().encode('The quick brown fox jumps over the lazy dog again and again.')];
  const int64 = (xs, dims) => new ol.Tensor('int64', BigInt64Array.from(xs, BigInt), dims);
  return {
    description: 'models/fortunes-byte-0.8M.onnx bound with bindCache (4 layers, 2 KV heads of 32 per layer); token 1 is a 4-byte prompt',
    model,
    initial: () => Object.fromEntries(Object.entries(caches).map(([k, t]) => [k, new ol.Tensor(t.type, t.data.slice(), t.dims)])),
    feeds: (t) => {
      const start = t === 0 ? 0 : prompt.length + t - 1;
      const end = prompt.length + t;
      const ids = text.slice(start, end);
      return {
        input_ids: int64(ids, [1, ids.length]),
        attention_mask: int64(new Array(end).fill(1), [1, end]),
        position_ids: int64(ids.map((_, i) => start + i), [1, ids.length]),
      };
    },
  };
}

const fixtures = { attention: attentionFixture, fortunes: fortunesFixture };
const chosen = args.fixture === 'all' ? Object.keys(fixtures) : [args.fixture];
const results = [];
for (const name of chosen) {
  if (!fixtures[name]) throw new Error(`unknown fixture '${name}' (attention, fortunes, all)`);
  try {
    const fixture = await fixtures[name]();
    for (let i = 0; i < WARMUP; i++) await compare(name, fixture); // JIT and allocator warm-up, discarded
    results.push(await compare(name, fixture));
  } catch (error) {
    results.push({ fixture: name, error: `${error.code ?? error.name}: ${error.message}` });
  }
}
console.log(
  JSON.stringify(
    {
      benchmark: 'persistent_feedback',
      sourceRevision: revision(),
      runtime: `onnx-light ${ol.version} (wasm, Node ${process.version}, ${process.platform}/${process.arch})`,
      executionPolicy: 'single thread, events enabled for the stateful runs (timings include auditing)',
      tokens: TOKENS,
      warmupPasses: WARMUP,
      results,
    },
    null,
    2,
  ),
);
