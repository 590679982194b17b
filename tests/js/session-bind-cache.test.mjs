// InferenceSession.create(model, { bindCache: true }) binds the KV cache
// inside wasm memory: the same bindings, caches and generated tokens as
// bindCache() + create, without the bound model's bytes passing through JS.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { FORTUNES } from './models.mjs';

const { InferenceSession, Tensor, bindCache, emptyCaches } = ol;

const ids = (rows) => new Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [rows.length, rows[0].length]);
const plain = () => new Uint8Array(readFileSync(FORTUNES));

describe('InferenceSession.create with bindCache', () => {
  test('bindings, empty caches and greedy and sampled tokens equal the bindCache() route', async () => {
    const bound = await bindCache(plain());
    const viaBytes = await InferenceSession.create(bound);
    for (const source of [plain(), FORTUNES]) {
      const session = await InferenceSession.create(source, { bindCache: true });
      assert.deepEqual(session.persistentBindings.map((b) => ({ ...b })), viaBytes.persistentBindings.map((b) => ({ ...b })));
      const caches = await emptyCaches(session);
      const reference = await emptyCaches(bound);
      assert.deepEqual(Object.keys(caches), Object.keys(reference));
      for (const name of Object.keys(caches)) {
        assert.deepEqual(caches[name].dims, reference[name].dims, name);
        assert.equal(caches[name].type, reference[name].type, name);
      }
      const prompt = [...new TextEncoder().encode('The ')];
      for (const options of [{ maxNewTokens: 24 }, { maxNewTokens: 24, temperature: 0.9, seed: 7 }]) {
        const got = await session.generate({ input_ids: ids([prompt]), ...caches }, options);
        const want = await viaBytes.generate({ input_ids: ids([prompt]), ...reference }, options);
        assert.deepEqual([...got.data], [...want.data], JSON.stringify(options));
      }
      await session.release();
    }
    await viaBytes.release();
  });

  test('PersistentValueState.create with bindCache runs like a state of the bound bytes', async () => {
    const bytes = plain();
    const bound = await bindCache(bytes);
    const a = await ol.PersistentValueState.create(bytes, await emptyCaches(bytes), { bindCache: true });
    const b = await ol.PersistentValueState.create(bound, await emptyCaches(bound));
    assert.deepEqual(a.bindings.map((x) => ({ ...x })), b.bindings.map((x) => ({ ...x })));
    let length = 0;
    for (const step of [[72, 105, 33], [32], [119]]) {
      const position = step.map((_, i) => length + i);
      length += step.length;
      const feeds = () => ({
        input_ids: ids([step]),
        attention_mask: ids([new Array(length).fill(1)]),
        position_ids: ids([position]),
      });
      const x = await a.run(feeds(), ['logits']);
      const y = await b.run(feeds(), ['logits']);
      assert.deepEqual([...x.logits.data], [...y.logits.data]);
    }
    await a.close();
    await b.close();
  });

  test('models without cache inputs, or already bound, are left as they are', async () => {
    const noCache = await ol.parseModel(
      '<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Neg(x) }',
    );
    const session = await InferenceSession.create(noCache, { bindCache: true });
    assert.deepEqual(session.persistentBindings, []);
    const { y } = await session.run({ x: new Tensor('float32', Float32Array.from([1, -2]), [2]) });
    assert.deepEqual([...y.data], [-1, 2]);
    await session.release();
    const bound = await bindCache(plain());
    const again = await InferenceSession.create(bound, { bindCache: true });
    const once = await InferenceSession.create(bound);
    assert.deepEqual(again.persistentBindings.map((b) => ({ ...b })), once.persistentBindings.map((b) => ({ ...b })));
    await again.release();
    await once.release();
    await assert.rejects(emptyCaches(session), /neither persistent bindings nor past_key_values/);
  });
});
