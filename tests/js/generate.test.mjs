// session.generate / generateStream on the fortunes decoder: greedy tokens
// equal onnxruntime-node's loop feeding present.* back, with bindings (state:
// prompt once, then one token per step) and without (the growing prefix);
// seeded sampling is reproducible; EOS, padding, onToken stop, abort, a
// session released mid-generation and the option checks (made in C).
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { greedyWithOrt } from '../parity/ort_greedy.mjs';
import { FORTUNES } from './models.mjs';

const { OnnxLightError, Tensor } = ol;
const PROMPT = [...new TextEncoder().encode('The ')];
const STEPS = 16;
const isCode = (code) => (e) => e instanceof OnnxLightError && e.code === code;

let ortTokens;
let bound;
let plain;
let caches;
let caches2;

const ids = (rows) => new Tensor('int64', BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0].length]);
const generatedOf = (tensor, row = 0) => {
  const n = tensor.dims[1];
  return Array.from(tensor.data.subarray(row * n + PROMPT.length, (row + 1) * n), Number);
};

before(async () => {
  ortTokens = await greedyWithOrt(FORTUNES, PROMPT, STEPS);
  const boundBytes = await ol.bindCache(FORTUNES);
  bound = await ol.InferenceSession.create(boundBytes);
  plain = await ol.InferenceSession.create(FORTUNES);
  caches = await ol.emptyCaches(boundBytes);
  caches2 = await ol.emptyCaches(boundBytes, { batch: 2 });
});

describe('greedy generation', () => {
  test(`with bindCache: ${STEPS} tokens equal onnxruntime-node's`, async () => {
    const input = ids([PROMPT]);
    const out = await bound.generate({ input_ids: input, ...caches }, { maxNewTokens: STEPS });
    assert.equal(out.type, 'int64');
    assert.deepEqual(out.dims, [1, PROMPT.length + STEPS]);
    assert.deepEqual(Array.from(out.data.subarray(0, PROMPT.length), Number), PROMPT);
    assert.deepEqual(generatedOf(out), ortTokens);
    assert.deepEqual(Array.from(input.data, Number), PROMPT, 'the feeds are not modified');
  });

  test(`without bindings (growing prefix): ${STEPS} tokens equal onnxruntime-node's`, async () => {
    const out = await plain.generate({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: STEPS });
    assert.deepEqual(generatedOf(out), ortTokens);
  });

  test('generateStream yields every step; onToken sees the same tokens', async () => {
    const seen = [];
    const steps = [];
    for await (const step of bound.generateStream({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: 8, onToken: (t, i) => seen.push([i, ...t]) })) {
      steps.push([step.step, ...step.tokens]);
    }
    assert.deepEqual(steps, ortTokens.slice(0, 8).map((t, i) => [i, BigInt(t)]));
    assert.deepEqual(seen, steps);
  });

  test('batch of 2 with a left-padded row', async () => {
    const pad = [32, ...PROMPT.slice(1)];
    const mask = new Tensor('int64', BigInt64Array.from([1, 1, 1, 1, 0, 1, 1, 1].map(BigInt)), [2, 4]);
    const out = await bound.generate({ input_ids: ids([PROMPT, pad]), attention_mask: mask, ...caches2 }, { maxNewTokens: 4 });
    assert.deepEqual(out.dims, [2, PROMPT.length + 4]);
    assert.deepEqual(generatedOf(out, 0), ortTokens.slice(0, 4));
  });

  test('EOS stops generation; finished rows are padded', async () => {
    const eos = ortTokens[2];
    const out = await bound.generate({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: STEPS, eosTokenId: eos });
    assert.deepEqual(generatedOf(out), ortTokens.slice(0, 3));
    // row 2 (a different prompt) does not hit the EOS as early: row 1 is padded
    const other = [...new TextEncoder().encode('Abc ')];
    const two = await bound.generate({ input_ids: ids([PROMPT, other]), ...caches2 }, { maxNewTokens: 6, eosTokenId: eos, padTokenId: 0 });
    const row0 = generatedOf(two, 0);
    const k = row0.indexOf(eos);
    assert.ok(k >= 0 && k <= 2);
    assert.ok(row0.slice(k + 1).every((t) => t === 0), `padded after EOS: ${row0}`);
  });

  test('onToken returning false stops early (not an error)', async () => {
    const out = await bound.generate({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: STEPS, onToken: (_, step) => step < 2 });
    assert.deepEqual(generatedOf(out), ortTokens.slice(0, 3));
  });
});

describe('sampling', () => {
  test('a seed makes sampling reproducible; another seed differs', async () => {
    const run = (session, seed) => session.generate({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: 24, temperature: 0.9, seed }).then((t) => generatedOf(t));
    const a = await run(bound, 42);
    const b = await run(bound, 42);
    assert.deepEqual(a, b);
    assert.deepEqual(await run(bound, 42n), a, 'a bigint seed is the same seed');
    const c = await run(bound, 7);
    assert.notDeepEqual(a, c);
    assert.notDeepEqual(a, ortTokens.concat(ortTokens).slice(0, 24), 'sampling is not greedy');
  });
});

describe('cancellation and errors', () => {
  test('an AbortSignal stops within one step with OL_CANCELLED', async () => {
    const controller = new AbortController();
    let steps = 0;
    await assert.rejects(
      bound.generate({ input_ids: ids([PROMPT]), ...caches }, {
        maxNewTokens: 64,
        signal: controller.signal,
        onToken: (_, step) => {
          steps = step + 1;
          if (step === 2) controller.abort(new Error('enough'));
        },
      }),
      (e) => isCode('OL_CANCELLED')(e) && /enough/.test(e.message),
    );
    assert.equal(steps, 3);
    const aborted = AbortSignal.abort();
    await assert.rejects(bound.generate({ input_ids: ids([PROMPT]), ...caches }, { signal: aborted }), isCode('OL_CANCELLED'));
    // a timer firing during generation is seen between steps
    const timed = new AbortController();
    setTimeout(() => timed.abort(), 5);
    let count = 0;
    await assert.rejects(async () => {
      for await (const _ of plain.generateStream({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: 100000, signal: timed.signal })) count++;
    }, isCode('OL_CANCELLED'));
    assert.ok(count < 100000);
  });

  test('releasing the session ends a generation in progress with OL_FAILED_PRECONDITION', async () => {
    const session = await ol.InferenceSession.create(FORTUNES);
    const steps = [];
    await assert.rejects(async () => {
      for await (const step of session.generateStream({ input_ids: ids([PROMPT]), ...caches }, { maxNewTokens: 8 })) {
        steps.push(step.step);
        if (step.step === 1) await session.release();
      }
    }, (e) => isCode('OL_FAILED_PRECONDITION')(e) && /released/.test(e.message));
    assert.deepEqual(steps, [0, 1]);
  });

  test('option and feed errors', async () => {
    const feeds = { input_ids: ids([PROMPT]), ...caches };
    await assert.rejects(bound.generate(feeds, { maxNewTokens: -1 }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(bound.generate(feeds, { temperature: -1 }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(bound.generate(feeds, { temperature: Infinity }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(bound.generate({ ...caches }, {}), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /input_ids/.test(e.message));
    await assert.rejects(bound.generate({ ...feeds, input_ids: new Tensor('int32', [1, 2], [1, 2]) }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(bound.generate({ input_ids: ids([PROMPT]) }), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /past_key_values/.test(e.message));
    const badMask = new Tensor('int64', BigInt64Array.from([1n, 0n, 1n, 1n]), [1, 4]);
    await assert.rejects(bound.generate({ ...feeds, attention_mask: badMask }), (e) => isCode('OL_INVALID_ARGUMENT')(e) && /left-padded/.test(e.message));
    await assert.rejects(bound.generate(feeds, { logitsName: 'nope' }), isCode('OL_INVALID_ARGUMENT'));
    const zero = await bound.generate(feeds, { maxNewTokens: 0 });
    assert.deepEqual(zero.dims, [1, PROMPT.length]);
  });
});
