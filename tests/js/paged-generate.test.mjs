// Generation on paged KV caches (toPagedModel): greedy tokens with float
// pages equal the contiguous model's and onnxruntime-node's; int8 keys /
// uint4 values with calibrated scales from token 0 shrink the cache (bytes
// in memory and saved) and every decode step appends exactly one token's
// payload; a generation resumed in a fresh process from saved bytes
// (PagedCache.fromBytes + withPagedCacheInitializers) continues with the
// uninterrupted run's tokens, float and quantized; the worker generator and
// the CLI; cancelled generations return nothing.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { before, describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { greedyWithOrt } from '../parity/ort_greedy.mjs';
import { runModule } from './child.mjs';
import { FORTUNES, ROOT, fortunesBytes } from './models.mjs';

const { InferenceSession, OnnxLightError, PagedCache, Tensor, emptyCaches, toPagedModel } = ol;
const PROMPT = [...new TextEncoder().encode('The ')];
const LAYERS = 4;
const KV_WIDTH = 64; // 2 KV heads x head size 32
const DENSE_PER_TOKEN = LAYERS * 2 * KV_WIDTH * 4; // fp32 K and V of every layer
const Q8U4 = [{ fromTokens: 0, key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } }];

const ids = (tokens) => new Tensor('int64', BigInt64Array.from(tokens, BigInt), [1, tokens.length]);
const generated = (tensor, skip) => Array.from(tensor.data.subarray(skip), Number);
const isCode = (code) => (e) => e instanceof OnnxLightError && e.code === code;

let paged; // fortunes on paged caches (bytes)
let ortTokens;
let contiguousTokens;

before(async () => {
  paged = await toPagedModel(fortunesBytes());
  ortTokens = await greedyWithOrt(FORTUNES, PROMPT, 64);
  const bound = await InferenceSession.create(FORTUNES, { bindCache: true });
  contiguousTokens = generated(await bound.generate({ input_ids: ids(PROMPT), ...(await emptyCaches(bound)) }, { maxNewTokens: 64 }), PROMPT.length);
  await bound.release();
});

/** Greedy tokens after the prompt, and the caches (returnCaches). */
async function run(session, steps, options = {}, prompt = PROMPT, extra = {}) {
  const feeds = { input_ids: ids(prompt), ...extra };
  if (!Object.keys(extra).some((name) => name.startsWith('past_key_values.'))) Object.assign(feeds, await emptyCaches(session));
  const { tokens, caches } = await session.generate(feeds, { maxNewTokens: steps, returnCaches: true, ...options });
  return { tokens: generated(tokens, prompt.length), caches };
}

describe('generation on paged caches', () => {
  test('float pages: 64 greedy tokens = the contiguous model = onnxruntime-node', async () => {
    const session = await InferenceSession.create(paged);
    const { tokens, caches } = await run(session, 64);
    assert.deepEqual(contiguousTokens, ortTokens);
    assert.deepEqual(tokens, ortTokens);
    const streamed = [];
    for await (const step of session.generateStream({ input_ids: ids(PROMPT), ...(await emptyCaches(session)) }, { maxNewTokens: 8 })) streamed.push(Number(step.tokens[0]));
    assert.deepEqual(streamed, ortTokens.slice(0, 8));
    // the caches hold the prompt and every token but the last (the next step's input)
    assert.deepEqual(Object.keys(caches), ['past_key_values.0', 'past_key_values.1', 'past_key_values.2', 'past_key_values.3']);
    for (const cache of Object.values(caches)) {
      assert.ok(cache instanceof PagedCache);
      assert.equal(cache.length, PROMPT.length + 63);
      assert.equal(cache.byteLength, (PROMPT.length + 63) * DENSE_PER_TOKEN / LAYERS);
    }
    await session.release();
  });

  test('int8 keys / uint4 values from token 0: smaller caches, one token of payload per step', async (t) => {
    const session = await InferenceSession.create(paged, { pagedFormats: Q8U4, events: true });
    const steps = 256 - PROMPT.length + 1; // the caches then hold 256 tokens
    const { tokens, caches } = await run(session, steps);
    const events = session.events();
    assert.equal(events.length, steps * LAYERS);
    // the prompt's pages, then one int8 + uint4 token per layer and step
    assert.ok(events.slice(0, LAYERS).every((e) => e.copiedBytes === PROMPT.length * (KV_WIDTH + KV_WIDTH / 2)));
    const decode = events.slice(LAYERS);
    assert.ok(decode.every((e) => e.kind === 'paged_attention' && e.copiedBytes === KV_WIDTH + KV_WIDTH / 2), 'every decode step appends one token');
    assert.ok(decode.every((e) => e.dequantizedBytes > 0));
    // pages PagedAttention made are not checked again; after the state
    // compacts a cache (every 64 new blocks) the next step views the merged
    // blocks once
    const validated = decode.reduce((n, e) => n + e.validatedPages, 0);
    assert.ok(decode.every((e) => e.validatedPages <= 2) && validated > 0 && validated <= LAYERS * 2 * 4, `${validated} pages validated`);
    const values = Object.values(caches);
    const length = values[0].length;
    assert.equal(length, 256);
    const dense = length * DENSE_PER_TOKEN;
    const bytes = values.reduce((sum, c) => sum + c.byteLength, 0);
    const saved = values.reduce((sum, c) => sum + c.toBytes().length, 0);
    const blocks = values.reduce((sum, c) => sum + c.blockCount, 0);
    t.diagnostic(`256 tokens: ${bytes} payload bytes (${(bytes / dense).toFixed(4)}x dense fp32 ${dense}), toBytes ${saved} bytes (${(saved / dense).toFixed(4)}x), ${blocks} blocks in memory`);
    // the state compacts every 64 new blocks: per layer at most 4 blocks of
    // 64 and 63 one-token ones (one block per decoded token without it)
    assert.ok(blocks <= LAYERS * (4 + 63), `${blocks} blocks in memory for ${LAYERS} layers of 256 tokens`);
    assert.ok(bytes <= 0.22 * dense, `byteLength ${bytes} > 0.22 x ${dense}`);
    assert.ok(saved <= 0.25 * dense, `toBytes ${saved} > 0.25 x ${dense}`);
    // agreement with float pages over the first 64 tokens
    const same = tokens.slice(0, 64).filter((token, i) => token === ortTokens[i]).length;
    const firstDiff = tokens.findIndex((token, i) => i < 64 && token !== ortTokens[i]);
    t.diagnostic(`int8/uint4 greedy tokens equal to fp32: ${same} of 64 (first difference at ${firstDiff})`);
    assert.ok(same >= 32, `only ${same} of 64 tokens agree with fp32 pages`);
    await session.release();
  });

  for (const [label, pagedFormats] of [['float pages', undefined], ['int8/uint4 pages', Q8U4]]) {
    test(`resume in a fresh process (${label}): 32 + 32 tokens = the uninterrupted 64`, async () => {
      const session = await InferenceSession.create(paged, { pagedFormats });
      const whole = (await run(session, 64)).tokens;
      const first = await run(session, 32);
      assert.deepEqual(first.tokens, whole.slice(0, 32));
      const dir = mkdtempSync(join(tmpdir(), 'ol-paged-'));
      try {
        writeFileSync(join(dir, 'model.onnx'), paged);
        for (const [name, cache] of Object.entries(first.caches)) writeFileSync(join(dir, `${name}.pb`), cache.toBytes());
        // the caches hold the prompt and 31 tokens; the 32nd is the next input, at that position
        const position = PROMPT.length + 31;
        const code = `
          import { readFileSync } from 'node:fs';
          import * as ol from 'onnx-light';
          const dir = ${JSON.stringify(dir)};
          await ol.init();
          const caches = {};
          for (let i = 0; i < 4; i++) caches['past_key_values.' + i] = ol.PagedCache.fromBytes(readFileSync(dir + '/past_key_values.' + i + '.pb'));
          const model = await ol.withPagedCacheInitializers(readFileSync(dir + '/model.onnx'), caches);
          const session = await ol.InferenceSession.create(model, { pagedFormats: ${JSON.stringify(pagedFormats ?? null)} ?? undefined });
          const feeds = { input_ids: new ol.Tensor('int64', BigInt64Array.of(${whole[31]}n), [1, 1]), position_ids: new ol.Tensor('int64', BigInt64Array.of(${position}n), [1, 1]) };
          const out = await session.generate(feeds, { maxNewTokens: 32 });
          console.log(JSON.stringify(Array.from(out.data.subarray(1), Number)));
        `;
        const resumed = JSON.parse(runModule(code));
        assert.deepEqual(resumed, whole.slice(32));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
      await session.release();
    });
  }

  test('the worker generator: paged caches and pagedFormats rules cross as data', async () => {
    const session = await InferenceSession.create(paged, { pagedFormats: Q8U4 });
    const expected = await run(session, 24);
    const generator = await ol.createGenerator(paged, { worker: true, pagedFormats: Q8U4 });
    try {
      const out = await generator.generate({ input_ids: ids(PROMPT), ...(await emptyCaches(paged)) }, { maxNewTokens: 24, returnCaches: true });
      assert.deepEqual(generated(out.tokens, PROMPT.length), expected.tokens);
      const cache = out.caches['past_key_values.2'];
      assert.ok(cache instanceof PagedCache);
      assert.equal(cache.length, PROMPT.length + 23);
      assert.equal(cache.byteLength, expected.caches['past_key_values.2'].byteLength);
      // a resumed cache fed to the worker (as bytes), with the generation's own rules
      const again = await generator.generate({ input_ids: ids([expected.tokens[23]]), position_ids: ids([PROMPT.length + 23]), ...out.caches }, { maxNewTokens: 4, pagedFormats: Q8U4 });
      const whole = await run(session, 28);
      assert.deepEqual(generated(again, 1), whole.tokens.slice(24));
      await assert.rejects(generator.generate({ input_ids: ids(PROMPT), ...out.caches }, { pagedFormats: () => ({}) }), isCode('OL_INVALID_ARGUMENT'));
    } finally {
      await generator.close();
    }
    await assert.rejects(ol.createGenerator(paged, { pagedFormats: () => ({}) }), isCode('OL_INVALID_ARGUMENT'));
    await session.release();
  });

  test('a cancelled generation gives no caches; returnCaches needs bindings', async () => {
    const session = await InferenceSession.create(paged);
    const controller = new AbortController();
    const feeds = { input_ids: ids(PROMPT), ...(await emptyCaches(session)) };
    await assert.rejects(session.generate(feeds, {
      maxNewTokens: 20, returnCaches: true, signal: controller.signal, onToken: (_, step) => {
        if (step === 3) controller.abort(new Error('enough'));
      },
    }), isCode('OL_CANCELLED'));
    // aborted from inside a step (the pagedFormats function of layer 1): the step stops at the next node
    const mid = new AbortController();
    let calls = 0;
    const aborting = () => {
      if (++calls === LAYERS + 2) mid.abort(new Error('mid-step'));
      return {};
    };
    await assert.rejects(session.generate(feeds, { maxNewTokens: 20, returnCaches: true, signal: mid.signal, pagedFormats: aborting }), isCode('OL_CANCELLED'));
    assert.equal(calls, LAYERS + 2, 'layers 2 and 3 of the second step never ran');
    const plain = await InferenceSession.create(FORTUNES);
    await assert.rejects(plain.generate({ input_ids: ids(PROMPT) }, { returnCaches: true }), isCode('OL_INVALID_ARGUMENT'));
    assert.throws(() => session.generateStream(feeds, { returnCaches: true }), isCode('OL_INVALID_ARGUMENT'));
    await plain.release();
    await session.release();
  });

  test('the CLI: generate --paged --kv-format int8/uint4', () => {
    const cli = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'generate', '--model', FORTUNES, '--prompt', 'The ', '--max-new-tokens', '24', '--greedy', ...args], { encoding: 'utf8' });
    const plainRun = cli();
    const float = cli('--paged');
    const quantized = cli('--paged', '--kv-format', 'int8/uint4');
    for (const r of [plainRun, float, quantized]) assert.equal(r.status, 0, r.stderr);
    assert.equal(float.stdout, plainRun.stdout);
    assert.match(float.stderr, /paged KV cache, float32 pages/);
    assert.match(float.stderr, /paged KV cache: 27 tokens in 4 caches, .* \(100\.0 % of/);
    assert.match(quantized.stderr, /paged KV cache: 27 tokens in 4 caches, .* \(18\.8 % of/);
    const bad = cli('--kv-format', 'int8');
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /--kv-format needs --paged/);
    assert.match(cli('--paged', '--kv-format', 'int3').stderr, /--kv-format must be/);
  });
});
