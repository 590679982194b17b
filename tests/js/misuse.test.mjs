// Concurrency misuse from JS: overlapping runs on one session or state,
// release()/close() while a run is pending, closing twice, an already-aborted
// signal. Each either works (with the results a careful caller would get) or
// raises a clear OnnxLightError; never a crash or a corrupted session.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

const { OnnxLightError, PersistentValueState, Tensor } = ol;

const ACCUMULATE =
  '<ir_version: 10, opset_import: ["" : 18]>' +
  'accumulate (float[2] delta, float[2] past) => (float[2] present)' +
  '{ present = Add(delta, past) }';

const isCode = (code) => (e) => e instanceof OnnxLightError && e.code === code;
const f32 = (values) => new Tensor('float32', Float32Array.from(values), [values.length]);

describe('misuse', () => {
  test('overlapping runs on one session give the results of sequential runs', async () => {
    const session = await ol.InferenceSession.create(await ol.parseModel(ACCUMULATE));
    const feeds = (d) => ({ delta: f32([d, 2 * d]), past: f32([1, 1]) });
    const pending = [1, 2, 3, 4].map((d) => session.run(feeds(d)));
    const outputs = await Promise.all(pending);
    assert.deepEqual(outputs.map((o) => Array.from(o.present.data)), [[2, 3], [3, 5], [4, 7], [5, 9]]);
    await session.release();
  });

  test('release() while a run is pending: the run settles, later runs fail cleanly', async () => {
    const session = await ol.InferenceSession.create(await ol.parseModel(ACCUMULATE));
    const pending = session.run({ delta: f32([1, 2]), past: f32([3, 4]) });
    const released = session.release();
    const settled = await pending.then((out) => Array.from(out.present.data), (error) => error);
    // either the run finished first (its outputs outlive the session) or it was refused clearly
    assert.ok(Array.isArray(settled) ? settled.join() === '4,6' : settled instanceof OnnxLightError, String(settled));
    await released;
    await assert.rejects(session.run({ delta: f32([1, 2]), past: f32([3, 4]) }), isCode('OL_FAILED_PRECONDITION'));
    await session.release(); // again: nothing happens
  });

  test('overlapping runs of one state apply in call order', async () => {
    const model = await ol.bindPersistent(await ol.parseModel(ACCUMULATE), { past: 'present' });
    const state = await PersistentValueState.create(model, { past: f32([0, 0]) });
    const outputs = await Promise.all([1, 10, 100].map((d) => state.run({ delta: f32([d, d]) })));
    assert.deepEqual(outputs.map((o) => Array.from(o.present.data)), [[1, 1], [11, 11], [111, 111]]);
    const { past } = state.values;
    assert.deepEqual(Array.from(past.data), [111, 111]);
    past.dispose();
    await state.close();
  });

  test('close() while a state run is pending, close twice, run after close', async () => {
    const model = await ol.bindPersistent(await ol.parseModel(ACCUMULATE), { past: 'present' });
    const state = await PersistentValueState.create(model, { past: f32([0, 0]) });
    const pending = state.run({ delta: f32([5, 6]) });
    const closing = state.close();
    const settled = await pending.then((out) => Array.from(out.present.data), (error) => error);
    assert.ok(Array.isArray(settled) ? settled.join() === '5,6' : settled instanceof OnnxLightError, String(settled));
    await closing;
    await state.close();
    await assert.rejects(state.run({ delta: f32([1, 1]) }), isCode('OL_FAILED_PRECONDITION'));
  });

  test('an already-aborted signal: no run happens, the session and state stay usable', async () => {
    const session = await ol.InferenceSession.create(await ol.parseModel(ACCUMULATE));
    await assert.rejects(session.run({ delta: f32([1, 2]), past: f32([3, 4]) }, { signal: AbortSignal.abort() }), isCode('OL_CANCELLED'));
    assert.deepEqual(Array.from((await session.run({ delta: f32([1, 2]), past: f32([3, 4]) })).present.data), [4, 6]);
    await session.release();
    const model = await ol.bindPersistent(await ol.parseModel(ACCUMULATE), { past: 'present' });
    const state = await PersistentValueState.create(model, { past: f32([0, 0]) });
    await assert.rejects(state.run({ delta: f32([7, 7]) }, { signal: AbortSignal.abort() }), isCode('OL_CANCELLED'));
    const { past } = state.values;
    assert.deepEqual(Array.from(past.data), [0, 0]); // the cancelled run published nothing
    past.dispose();
    await state.close();
  });
});
