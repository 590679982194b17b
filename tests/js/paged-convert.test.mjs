// toPagedModel on decoders whose attention is one fused node (see
// attention_decoders.mjs and bench/lib/llama_model.mjs 'fused'):
// GroupQueryAttention with rotary inside (also with a local window),
// Attention 23 (3-D with grouped heads, 4-D, is_causal, scale) and
// MultiHeadAttention (unidirectional, scale). Converted, each gives the contiguous model's logits within 1e-4
// and greedy tokens step by step through session.run, the same 40 tokens
// through session.generate, and generates with int8 keys / uint4 values.
// Unsupported attributes are refused naming the node and the attribute.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as ol from 'onnx-light';
import { AttributeProto_AttributeType as A, AttributeProtoSchema, ModelProtoSchema } from 'onnx-light/proto';

import { buildLlama } from '../../bench/lib/llama_model.mjs';
import { buildAttentionDecoder } from './attention_decoders.mjs';

const { InferenceSession, PagedCache, Tensor, emptyCaches, toPagedModel } = ol;
const Q8U4 = [{ fromTokens: 0, key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } }];
const PROMPT = [3, 14, 15, 9, 26];
const GQA_SHAPE = { layers: 2, width: 32, heads: 2, headSize: 16, ffn: 64, vocab: 64, maxPos: 256 };

const i64 = (values, dims) => new Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
const ids = (tokens) => i64(tokens, [1, tokens.length]);

/** The feeds of one step that the session declares. */
function stepFeeds(session, tokens, past) {
  const all = {
    input_ids: ids(tokens),
    attention_mask: i64(new Array(past + tokens.length).fill(1), [1, past + tokens.length]),
    position_ids: i64(tokens.map((_, i) => past + i), [1, tokens.length]),
  };
  return Object.fromEntries(Object.entries(all).filter(([name]) => session.inputNames.includes(name)));
}

/** n greedy steps through session.run: the tokens and each step's last logits. */
async function greedyRun(session, steps) {
  const names = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const presentOf = (n) => `present${n.slice('past_key_values'.length)}`;
  let caches = await emptyCaches(session);
  let tokens = PROMPT, past = 0;
  const out = { tokens: [], logits: [] };
  for (let step = 0; step < steps; step++) {
    const result = await session.run({ ...stepFeeds(session, tokens, past), ...caches });
    const vocab = result.logits.dims[2];
    const row = result.logits.data.slice((tokens.length - 1) * vocab, tokens.length * vocab);
    let best = 0;
    for (let i = 1; i < vocab; i++) if (row[i] > row[best]) best = i;
    out.tokens.push(best), out.logits.push(row);
    caches = Object.fromEntries(names.map((n) => [n, result[presentOf(n)]]));
    past += tokens.length;
    tokens = [best];
  }
  return out;
}

async function generated(model, options = {}, sessionOptions = {}) {
  const session = await InferenceSession.create(model, sessionOptions);
  const tokens = await session.generate({ input_ids: ids(PROMPT), ...(await emptyCaches(session)) }, { maxNewTokens: 40, ...options });
  await session.release();
  return Array.from(tokens.data.subarray(PROMPT.length), Number);
}

/** The fused llama with extra attributes on every GroupQueryAttention. */
function gqaWith(attributes) {
  const model = fromBinary(ModelProtoSchema, buildLlama(GQA_SHAPE, 11, 'fused'));
  for (const node of model.graph.node.filter((n) => n.opType === 'GroupQueryAttention'))
    node.attribute.push(...attributes.map((a) => create(AttributeProtoSchema, a)));
  return toBinary(ModelProtoSchema, model);
}

const FORMS = [
  ['GroupQueryAttention (rotary inside, int4 weights)', () => buildLlama(GQA_SHAPE, 11, 'fused'), 2],
  ['GroupQueryAttention, local_window_size 6', () => gqaWith([{ name: 'local_window_size', type: A.INT, i: 6n }]), 2],
  ['Attention 23, 3-D, grouped heads, is_causal', () => buildAttentionDecoder({ form: 'attention', kvHeads: 2, attrs: { is_causal: 1 } }), 2],
  ['Attention 23, 4-D, is_causal, scale', () => buildAttentionDecoder({ form: 'attention4d', kvHeads: 2, attrs: { is_causal: 1, scale: { f: 0.2 } } }), 2],
  ['MultiHeadAttention, unidirectional, scale', () => buildAttentionDecoder({ form: 'mha', attrs: { unidirectional: 1, scale: { f: 0.3 } } }), 2],
];

describe('toPagedModel on fused attention', () => {
  for (const [label, build, layers] of FORMS) {
    test(`${label}: the contiguous model's logits and tokens, generate, int8/uint4 pages`, async (t) => {
      const bytes = build();
      const paged = await toPagedModel(bytes, { blockSize: 4 });
      const a = await InferenceSession.create(bytes);
      const b = await InferenceSession.create(paged);
      const caches = b.inputNames.filter((n) => n.startsWith('past_key_values.'));
      assert.deepEqual(caches, Array.from({ length: layers }, (_, i) => `past_key_values.${i}`));
      assert.deepEqual(b.outputNames.filter((n) => n.startsWith('present')), Array.from({ length: layers }, (_, i) => `present.${i}`));
      const ra = await greedyRun(a, 33);
      const rb = await greedyRun(b, 33);
      assert.deepEqual(rb.tokens, ra.tokens);
      assert.ok(new Set(ra.tokens).size > 3, `a degenerate model: ${ra.tokens}`);
      for (let s = 0; s < ra.logits.length; s++) {
        let worst = 0;
        for (let i = 0; i < ra.logits[s].length; i++) worst = Math.max(worst, Math.abs(ra.logits[s][i] - rb.logits[s][i]));
        assert.ok(worst < 1e-4, `step ${s}: logits differ by ${worst}`);
      }
      await a.release();
      await b.release();
      const contiguous = await generated(bytes, {}, { bindCache: true });
      assert.equal(contiguous.length, 40);
      assert.deepEqual(await generated(paged), contiguous);
      const quantized = await generated(paged, { pagedFormats: Q8U4 });
      assert.equal(quantized.length, 40);
      const same = quantized.filter((token, i) => token === contiguous[i]).length;
      t.diagnostic(`int8/uint4 pages: ${same} of 40 greedy tokens equal to fp32`);
    });
  }

  test('a converted GroupQueryAttention model keeps its caches as PagedCache', async () => {
    const paged = await toPagedModel(buildLlama(GQA_SHAPE, 11, 'fused'));
    const session = await InferenceSession.create(paged);
    const { caches } = await session.generate({ input_ids: ids(PROMPT), ...(await emptyCaches(session)) }, { maxNewTokens: 8, returnCaches: true });
    assert.ok(caches['past_key_values.0'] instanceof PagedCache);
    assert.equal(caches['past_key_values.0'].length, PROMPT.length + 7);
    await session.release();
  });

  test('refusals name the node and the attribute', async () => {
    const refused = async (model, pattern) => assert.rejects(toPagedModel(model), (e) => e.code === 'OL_NOT_IMPLEMENTED' && pattern.test(e.message));
    await refused(buildAttentionDecoder({ form: 'attention', attrs: { softcap: { f: 30 } } }), /Attention node 'n\d+': attribute 'softcap'/);
    await refused(buildAttentionDecoder({ form: 'attention', attrs: { is_causal: 1, softcap: { f: 5 } } }), /softcap/);
    await refused(gqaWith([{ name: 'softcap', type: A.FLOAT, f: 30 }]), /GroupQueryAttention node '[^']+': attribute 'softcap'/);
  });
});
