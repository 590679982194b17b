// Multi-head KV caches growing in place on the default model (a torch export:
// present = Concat(past, new, axis=2), 2 KV heads): after bindCache, every
// token after the prompt reports zero prefix bytes and appends exactly the
// new K/V bytes; logits, returned presents and state.values are dense and
// bit-identical to a stateless session fed the previous presents.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { FORTUNES } from './models.mjs';

const { InferenceSession, PersistentValueState, Tensor, bindCache, emptyCaches } = ol;

const i64 = (values, dims) => new Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);
function feedsFor(ids, past) {
  return {
    input_ids: i64(ids, [1, ids.length]),
    attention_mask: i64(new Array(past + ids.length).fill(1), [1, past + ids.length]),
    position_ids: i64(ids.map((_, i) => past + i), [1, ids.length]),
  };
}
const sum = (events, key) => events.reduce((a, e) => a + Number(e[key]), 0);

describe('multi-head KV caches grow in place', () => {
  test('fortunes after bindCache: zero prefix bytes per token, append = the new K/V bytes', async () => {
    const bytes = new Uint8Array(readFileSync(FORTUNES));
    const model = await bindCache(bytes);
    const initial = await emptyCaches(model, { batch: 1 });
    const state = await PersistentValueState.create(model, initial, { events: true });
    const session = await InferenceSession.create(bytes);
    const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
    const presentOf = (n) => `present.${n.slice('past_key_values.'.length)}`;
    const caches = pastNames.length; // layers x {key, value}
    const [, heads, , headSize] = initial[pastNames[0]].dims;
    const tokenBytes = caches * heads * headSize * 4;

    let past = initial;
    let length = 0;
    const prompt = [72, 101, 108, 108, 111, 44];
    for (let step = 0; step < 6; step++) {
      const ids = step === 0 ? prompt : [97 + step];
      const feeds = feedsFor(ids, length);
      state.clearEvents();
      const out = await state.run(feeds, ['logits', ...pastNames.map(presentOf)]);
      const ref = await session.run({ ...feeds, ...past });
      length += ids.length;
      assert.deepEqual([...out.logits.data], [...ref.logits.data], `logits of step ${step}`);
      const values = state.values;
      for (const name of pastNames) {
        const p = out[presentOf(name)];
        assert.deepEqual(p.dims, [1, heads, length, headSize]);
        assert.deepEqual([...p.data], [...ref[presentOf(name)].data], `${presentOf(name)} of step ${step}`);
        assert.deepEqual([...values[name].data], [...p.data], `state.values.${name}`);
        values[name].dispose?.();
      }
      const events = state.events();
      assert.equal(events.length, caches, 'one storage event per Concat of a bound pair');
      assert.ok(events.every((e) => e.opType === 'Concat'));
      assert.equal(sum(events, 'storageAppendCopiedBytes'), tokenBytes * ids.length);
      assert.equal(sum(events, 'storagePrefixCopiedBytes'), 0);
      if (step === 0) {
        assert.equal(sum(events, 'storageAllocations'), caches, 'the imported empty caches get capacity once');
      } else {
        assert.equal(sum(events, 'storageAllocations'), 0);
        assert.equal(sum(events, 'storageAllocatedBytes'), 0);
        assert.equal(sum(events, 'storageReuseCount'), caches);
      }
      for (const t of Object.values(out)) t.dispose?.();
      past = Object.fromEntries(pastNames.map((n) => [n, ref[presentOf(n)]]));
    }
    await state.close();
    await session.release?.();
  });
});
