// toPagedModel: the fortunes decoder rewritten onto paged caches
// (ai.rt::PagedAttention) gives the contiguous model's logits within 1e-4
// and its greedy tokens, step after step through InferenceSession.run with
// caches as PagedCache values; options are checked; a model without
// the recognized attention is refused with OL_NOT_IMPLEMENTED.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { FORTUNES } from './models.mjs';

const { InferenceSession, Tensor, emptyCaches, toPagedModel, parseModel } = ol;

const i64 = (values, dims) => new Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
const feedsFor = (ids, past) => ({
  input_ids: i64(ids, [1, ids.length]),
  attention_mask: i64(new Array(past + ids.length).fill(1), [1, past + ids.length]),
  position_ids: i64(ids.map((_, i) => past + i), [1, ids.length]),
});

/** Runs n greedy steps after prompt; returns the tokens and the logits of each step. */
async function greedy(session, caches, prompt, steps) {
  const pastNames = Object.keys(caches);
  const presentOf = (n) => `present.${n.slice('past_key_values.'.length)}`;
  let past = caches;
  let length = 0;
  let ids = prompt;
  const tokens = [];
  const logits = [];
  for (let step = 0; step < steps; step++) {
    const out = await session.run({ ...feedsFor(ids, length), ...past });
    length += ids.length;
    const row = out.logits.data.slice((ids.length - 1) * 256, ids.length * 256);
    logits.push(row);
    let best = 0;
    for (let i = 1; i < 256; i++) if (row[i] > row[best]) best = i;
    tokens.push(best);
    past = Object.fromEntries(pastNames.map((n) => [n, out[presentOf(n)]]));
    ids = [best];
  }
  return { tokens, logits };
}

describe('toPagedModel', () => {
  test('fortunes on paged caches: the contiguous model\'s logits (1e-4) and greedy tokens', async () => {
    const bytes = new Uint8Array(readFileSync(FORTUNES));
    const paged = await toPagedModel(bytes, { blockSize: 8 });
    const a = await InferenceSession.create(bytes);
    const b = await InferenceSession.create(paged);
    assert.deepEqual(b.inputNames.filter((n) => n.startsWith('past_key_values.')),
      ['past_key_values.0', 'past_key_values.1', 'past_key_values.2', 'past_key_values.3']);
    assert.deepEqual(b.outputNames, ['logits', 'present.0', 'present.1', 'present.2', 'present.3']);
    assert.equal(b.inputMetadata.find((m) => m.name === 'past_key_values.0').kind, 'struct');
    const emptyB = await emptyCaches(b);
    assert.ok(emptyB['past_key_values.0'] instanceof ol.PagedCache);
    assert.equal(emptyB['past_key_values.0'].length, 0);
    const prompt = [84, 104, 101, 32]; // "The "
    const ra = await greedy(a, await emptyCaches(bytes), prompt, 32);
    const rb = await greedy(b, await emptyCaches(paged), prompt, 32);
    assert.deepEqual(rb.tokens, ra.tokens);
    for (let s = 0; s < ra.logits.length; s++) {
      let worst = 0;
      for (let i = 0; i < 256; i++) worst = Math.max(worst, Math.abs(ra.logits[s][i] - rb.logits[s][i]));
      assert.ok(worst < 1e-4, `step ${s}: logits differ by ${worst}`);
    }
    await a.release();
    await b.release();
  });

  test('a present holds sealed pages of at most blockSize tokens', async () => {
    const paged = await toPagedModel(new Uint8Array(readFileSync(FORTUNES)), { blockSize: 3 });
    const session = await InferenceSession.create(paged);
    const out = await session.run({ ...feedsFor([72, 101, 108, 108, 111, 33, 32], 0), ...(await emptyCaches(session)) });
    const blocks = out['present.0'].blocks;
    assert.deepEqual(blocks.map((b) => [b.start, b.length]), [[0, 3], [3, 3], [6, 1]]);
    assert.deepEqual(blocks[0].key.dims, [1, 1, 3, 2 * 32]); // each row: every head of the token
    await session.release();
  });

  test('options are checked; a model without the attention pattern is refused', async () => {
    const bytes = new Uint8Array(readFileSync(FORTUNES));
    for (const options of [{ blockSize: 0 }, { maxTokens: -1 }, { leftWindowSize: -2 }, { blockSize: 1.5 }]) {
      await assert.rejects(toPagedModel(bytes, options), { code: 'OL_INVALID_ARGUMENT' });
    }
    const plain = await parseModel('<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Neg(x) }');
    await assert.rejects(toPagedModel(plain), { code: 'OL_NOT_IMPLEMENTED', message: /no cached attention was recognized/ });
    const paged = await toPagedModel(bytes);
    await assert.rejects(toPagedModel(paged), { code: 'OL_INVALID_ARGUMENT', message: /already has persistent bindings/ });
  });
});
