// Models given as local file paths (or file: URLs) are read straight into
// wasm memory: the same sessions, bindings and errors as from bytes.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { pathToFileURL } from 'node:url';

import * as ol from 'onnx-light';

const { InferenceSession, OnnxLightError, PersistentValueState, Tensor } = ol;

const ACCUMULATE =
  '<ir_version: 10, opset_import: ["" : 18]>' +
  'accumulate (float[2] delta, float[2] past) => (float[2] present)' +
  '{ present = Add(delta, past) }';
// a 32 x 16 weight: tiled at load, so the file path meets the weight preparation too
const WEIGHTS = Array.from({ length: 32 * 16 }, (_, i) => ((i * 7) % 11) - 5);
const LINEAR =
  '<ir_version: 10, opset_import: ["" : 18]>' +
  `linear (float[1,32] x) => (float[1,16] y) <float[32,16] w = {${WEIGHTS.join(', ')}}> { y = MatMul(x, w) }`;

const dir = mkdtempSync(join(tmpdir(), 'onnx-light-model-file-'));
after(() => rmSync(dir, { recursive: true, force: true }));

async function writeModel(name, text, bind) {
  let bytes = await ol.parseModel(text); // serialized bytes
  if (bind) bytes = await ol.bindPersistent(bytes, bind);
  const path = join(dir, name);
  writeFileSync(path, bytes);
  return { path, bytes };
}

describe('models from local files', () => {
  test('a session from a path or a file: URL computes what the session from bytes does', async () => {
    const { path, bytes } = await writeModel('linear.onnx', LINEAR);
    const x = new Tensor('float32', Float32Array.from({ length: 32 }, (_, i) => i / 8 - 2), [1, 32]);
    const results = [];
    for (const source of [bytes, path, pathToFileURL(path)]) {
      const session = await InferenceSession.create(source);
      const { y } = await session.run({ x });
      results.push(Array.from(y.data));
      y.dispose?.();
      await session.release();
    }
    const want = Array.from({ length: 16 }, (_, j) => {
      let s = 0;
      for (let k = 0; k < 32; k++) s = Math.fround(s + Math.fround((k / 8 - 2) * WEIGHTS[k * 16 + j]));
      return s;
    });
    assert.deepEqual(results[0], want);
    assert.deepEqual(results[1], want);
    assert.deepEqual(results[2], want);
  });

  test('persistent bindings are read from the file: a state from a path accumulates', async () => {
    const { path } = await writeModel('accumulate.onnx', ACCUMULATE, { past: 'present' });
    const session = await InferenceSession.create(path);
    assert.deepEqual(session.persistentBindings.map((b) => ({ ...b })), [{ input: 'past', output: 'present' }]);
    await session.release();
    const state = await PersistentValueState.create(path, { past: new Tensor('float32', new Float32Array(2), [2]) });
    assert.deepEqual(state.bindings.map((b) => ({ ...b })), [{ input: 'past', output: 'present' }]);
    const delta = new Tensor('float32', Float32Array.from([1, 2]), [2]);
    await state.run({ delta });
    const second = await state.run({ delta });
    assert.deepEqual(Array.from(second.present.data), [2, 4]);
    await state.close();
  });

  test('a truncated file is an invalid model; a missing one is the file system error', async () => {
    const { bytes } = await writeModel('full.onnx', LINEAR);
    const truncated = join(dir, 'truncated.onnx');
    writeFileSync(truncated, bytes.subarray(0, bytes.length >> 1));
    await assert.rejects(InferenceSession.create(truncated), (e) => e instanceof OnnxLightError && e.code === 'OL_INVALID_MODEL');
    const empty = join(dir, 'empty.onnx');
    writeFileSync(empty, new Uint8Array(0));
    await assert.rejects(InferenceSession.create(empty), (e) => e instanceof OnnxLightError);
    await assert.rejects(PersistentValueState.create(join(dir, 'missing.onnx'), {}), /ENOENT/);
  });
});
