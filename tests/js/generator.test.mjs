// createGenerator(model, { worker: true }): the token loop in worker_threads,
// tokens streamed back as they are produced, abort within one step; the same
// API in-thread with worker: false.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { FORTUNES } from './models.mjs';

const { OnnxLightError, Tensor } = ol;
const PROMPT = [...new TextEncoder().encode('The ')];
const isCode = (code) => (e) => e instanceof OnnxLightError && e.code === code;
const ids = () => new Tensor('int64', BigInt64Array.from(PROMPT, BigInt), [1, PROMPT.length]);

let boundBytes;
let caches;
let expected;
let generator;

before(async () => {
  boundBytes = await ol.bindCache(FORTUNES);
  caches = await ol.emptyCaches(boundBytes);
  const session = await ol.InferenceSession.create(boundBytes);
  expected = Array.from((await session.generate({ input_ids: ids(), ...caches }, { maxNewTokens: 24 })).data, Number);
  await session.release();
  generator = await ol.createGenerator(boundBytes, { worker: true });
});

after(async () => {
  await generator?.close();
});

describe('createGenerator', () => {
  test('in a worker: generate equals the in-thread session; onToken streams', async () => {
    assert.equal(generator.inWorker, true);
    const seen = [];
    const out = await generator.generate({ input_ids: ids(), ...caches }, { maxNewTokens: 24, onToken: (t, step) => seen.push([step, Number(t[0])]) });
    assert.ok(out instanceof Tensor);
    assert.deepEqual(Array.from(out.data, Number), expected);
    assert.deepEqual(seen, expected.slice(PROMPT.length).map((t, i) => [i, t]));
  });

  test('generateStream delivers steps while the worker is still generating', async () => {
    const arrivals = [];
    const tokens = [];
    for await (const step of generator.generateStream({ input_ids: ids(), ...caches }, { maxNewTokens: 24 })) {
      arrivals.push(performance.now());
      tokens.push(Number(step.tokens[0]));
      // the consumer is slow: the worker keeps producing meanwhile
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    assert.deepEqual(tokens, expected.slice(PROMPT.length));
    assert.ok(new Set(arrivals).size > 1);
  });

  test('aborting stops the worker within one step (OL_CANCELLED); the generator stays usable', async () => {
    const controller = new AbortController();
    let received = 0;
    let abortedAt = -1;
    await assert.rejects(async () => {
      for await (const step of generator.generateStream({ input_ids: ids(), ...caches }, { maxNewTokens: 100000, signal: controller.signal })) {
        received++;
        if (step.step === 3) {
          controller.abort(new Error('stop now'));
          abortedAt = received;
        }
      }
    }, (e) => isCode('OL_CANCELLED')(e) && /stop now/.test(e.message));
    assert.ok(abortedAt > 0);
    // messages already in flight may still arrive, but the loop stops soon after
    assert.ok(received < abortedAt + 64, `received ${received} steps after aborting at ${abortedAt}`);
    await assert.rejects(generator.generate({ input_ids: ids(), ...caches }, { signal: AbortSignal.abort() }), isCode('OL_CANCELLED'));
    const out = await generator.generate({ input_ids: ids(), ...caches }, { maxNewTokens: 4 });
    assert.deepEqual(Array.from(out.data, Number), expected.slice(0, PROMPT.length + 4));
  });

  test('breaking out of generateStream stops the worker loop', async () => {
    const tokens = [];
    for await (const step of generator.generateStream({ input_ids: ids(), ...caches }, { maxNewTokens: 100000 })) {
      tokens.push(step.tokens[0]);
      if (tokens.length === 2) break;
    }
    assert.equal(tokens.length, 2);
  });

  test('errors from the worker are OnnxLightErrors', async () => {
    await assert.rejects(generator.generate({ input_ids: ids() }, { maxNewTokens: 2 }), isCode('OL_INVALID_ARGUMENT'));
    await assert.rejects(generator.generate({ input_ids: ids(), ...caches }, { maxNewTokens: -3 }), isCode('OL_INVALID_ARGUMENT'));
  });

  test('worker: false runs in this thread with the same API; closed generators reject', async () => {
    const local = await ol.createGenerator(boundBytes, { worker: false });
    assert.equal(local.inWorker, false);
    const steps = [];
    for await (const step of local.generateStream({ input_ids: ids(), ...caches }, { maxNewTokens: 5 })) steps.push(Number(step.tokens[0]));
    assert.deepEqual(steps, expected.slice(PROMPT.length, PROMPT.length + 5));
    await local.close();
    const other = await ol.createGenerator(FORTUNES, { worker: true });
    await other.close();
    await assert.rejects(other.generate({ input_ids: ids(), ...caches }), isCode('OL_FAILED_PRECONDITION'));
  });
});
