// The JS token loop (session.generate) against the C loop (ol_generate,
// through the thin olw_generate export): the same greedy tokens with and
// without bindings, including a left-padded batch (mask and positions), EOS
// padding, and seeded sampling.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { loadModelHandle } from '../../dist/model.js';
import { currentRuntime } from '../../dist/runtime.js';
import { marshalInputs, wrapOutput } from '../../dist/values.js';
import { FORTUNES } from './models.mjs';

/** ol_generate on model bytes, as an int64 Tensor. */
function generateInC(bytes, feeds, { maxNewTokens, temperature = 0, seed = 0, eosTokenId = -1, padTokenId = -1 }) {
  const runtime = currentRuntime();
  const m = runtime.m;
  const model = loadModelHandle(runtime, bytes);
  const inputs = marshalInputs(runtime, Object.entries(feeds), 'ol_generate');
  try {
    return runtime.scratch(4, (out) => {
      runtime.check(m._olw_generate(model, inputs.names, inputs.values, inputs.count, maxNewTokens, temperature, seed, eosTokenId, padTokenId, out));
      return wrapOutput(runtime, runtime.u32(out));
    });
  } finally {
    inputs.release();
    m._olw_model_destroy(model);
  }
}

const ids = (rows) => new ol.Tensor('int64', BigInt64Array.from(rows.flat(), BigInt), [rows.length, rows[0].length]);

describe('JS generation loop = C ol_generate', () => {
  test('greedy and seeded sampling, with and without bindings, a left-padded batch, EOS', async (t) => {
    const plain = new Uint8Array((await import('node:fs')).readFileSync(FORTUNES));
    const bound = await ol.bindCache(plain);
    const caches = await ol.emptyCaches(bound);
    const caches2 = await ol.emptyCaches(bound, { batch: 2 });
    await ol.init();
    if (!currentRuntime().m._olw_generate) {
      t.skip('this wasm build has no olw_generate');
      return;
    }
    const prompt = [...new TextEncoder().encode('The ')];
    const padded = [0, ...new TextEncoder().encode('Abc')];
    const mask = new ol.Tensor('int64', BigInt64Array.from([1, 1, 1, 1, 0, 1, 1, 1].map(BigInt)), [2, 4]);
    const cases = [
      ['bound', bound, { input_ids: ids([prompt]), ...caches }, 24],
      ['plain', plain, { input_ids: ids([prompt]), ...caches }, 12],
      ['bound, batch 2 left-padded', bound, { input_ids: ids([prompt, padded]), attention_mask: mask, ...caches2 }, 12],
      ['bound, EOS', bound, { input_ids: ids([prompt, padded]), attention_mask: mask, ...caches2 }, 12, { eosTokenId: 32, padTokenId: 0 }],
      // the JS loop picks tokens with the same C function (olw_pick_token): identical draws
      ['bound, sampled (seed 42)', bound, { input_ids: ids([prompt]), ...caches }, 48, { temperature: 0.9, seed: 42 }],
      ['plain, sampled (seed 1)', plain, { input_ids: ids([prompt]), ...caches }, 12, { temperature: 0.9, seed: 1 }],
    ];
    for (const [name, bytes, feeds, maxNewTokens, extra = {}] of cases) {
      const session = await ol.InferenceSession.create(bytes);
      const js = await session.generate(feeds, { maxNewTokens, ...extra });
      const c = generateInC(bytes, feeds, { maxNewTokens, ...extra });
      assert.deepEqual(js.dims, c.dims, name);
      assert.deepEqual([...js.data], [...c.data], name);
      await session.release();
    }
  });
});
