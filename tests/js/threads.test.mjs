// Threads: env.wasm.numThreads picks the module (1: single-threaded, more:
// the pthreads build), intraOpNumThreads sets a session's count, results are
// bit-identical at any count, bad counts are rejected, and a process that
// used the threaded module exits on its own.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, test } from 'node:test';

import { InferenceSession, PersistentValueState, Tensor, bindCache, emptyCaches, env, init, numThreads, parseModel } from 'onnx-light';

import { FORTUNES, ROOT } from './models.mjs';

/** stdout of a module snippet in a fresh process; fails on a hang (the pool's workers must not keep it alive). */
function runChild(code) {
  const result = spawnSync(process.execPath, ['--input-type=module', '-e', code], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
  assert.equal(result.error?.code, undefined, `child did not exit: ${result.error?.message}`);
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

// 24 greedy steps of the fortunes decoder with its KV cache fed back; prints
// the thread count, whether memory is shared, and a digest of every logit.
const decodeScript = (threads) => `
  import { createHash } from 'node:crypto';
  import { InferenceSession, Tensor, env, numThreads } from 'onnx-light';
  env.wasm.numThreads = ${threads};
  const session = await InferenceSession.create('models/fortunes-byte-0.8M.onnx');
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const shape = session.inputMetadata[session.inputNames.indexOf(pastNames[0])].shape;
  let past = Object.fromEntries(pastNames.map((n) => [n, new Tensor('float32', new Float32Array(0), [1, shape[1], 0, shape[3]])]));
  const hash = createHash('sha256');
  let ids = [...Buffer.from('The ')].map(BigInt), length = 0;
  for (let step = 0; step < 24; step++) {
    const n = ids.length;
    const out = await session.run({
      ...past,
      input_ids: new Tensor('int64', BigInt64Array.from(ids), [1, n]),
      attention_mask: new Tensor('int64', new BigInt64Array(length + n).fill(1n), [1, length + n]),
      position_ids: new Tensor('int64', BigInt64Array.from(ids, (_, i) => BigInt(length + i)), [1, n]),
    });
    const logits = out.logits.data;
    hash.update(new Uint8Array(logits.slice().buffer));
    const last = logits.subarray(logits.length - 256);
    ids = [BigInt(last.indexOf(Math.max(...last)))];
    length += n;
    past = Object.fromEntries(pastNames.map((p) => [p, out['present.' + p.slice('past_key_values.'.length)]]));
  }
  console.log(JSON.stringify({ threads: numThreads(), shared: logits0Shared(), digest: hash.digest('hex') }));
  function logits0Shared() { return Tensor.alloc('float32', [1]).data.buffer instanceof SharedArrayBuffer; }
`;

describe('threads', () => {
  test('numThreads 1 and 2: the fortunes decoder gives identical logits bits', () => {
    const one = JSON.parse(runChild(decodeScript(1)));
    const two = JSON.parse(runChild(decodeScript(2)));
    assert.deepEqual([one.threads, one.shared], [1, false], 'numThreads 1: the single-threaded module');
    assert.deepEqual([two.threads, two.shared], [2, true], 'numThreads 2: the threaded module, shared memory');
    assert.equal(two.digest, one.digest);
  });

  test('a product big enough to split: same bits at 1, 2 and 3 threads (intraOpNumThreads)', async () => {
    env.wasm.numThreads = 3;
    const model = await parseModel(
      '<ir_version: 10, opset_import: ["" : 18]>\n' +
        'g (float[5, 512] x, float[1, 512] v, float[512, 1376] w) => (float[5, 1376] y, float[1, 1376] z) {\n' +
        '  y = MatMul(x, w)\n  z = MatMul(v, w)\n}',
    );
    assert.equal(numThreads(), 3);
    let seed = 7;
    const random = (n) => Float32Array.from({ length: n }, () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) - 0.5);
    const x = new Tensor('float32', random(5 * 512), [5, 512]);
    const v = new Tensor('float32', random(512), [1, 512]);
    const w = new Tensor('float32', random(512 * 1376), [512, 1376]);
    const outputs = [];
    for (const intraOpNumThreads of [1, 2, 3, undefined]) {
      const session = await InferenceSession.create(model, { intraOpNumThreads });
      const { y, z } = await session.run({ x, v, w });
      outputs.push([y.data.slice(), z.data.slice()]);
      await session.release();
    }
    for (const [y, z] of outputs.slice(1)) {
      assert.deepEqual(new Uint32Array(y.buffer), new Uint32Array(outputs[0][0].buffer));
      assert.deepEqual(new Uint32Array(z.buffer), new Uint32Array(outputs[0][1].buffer));
    }
  });

  test('bad thread counts are OL_INVALID_ARGUMENT', async () => {
    for (const bad of [-1, 1.5, 65, Number.NaN, '2']) {
      await assert.rejects(InferenceSession.create(new Uint8Array(0), { intraOpNumThreads: bad }), (e) =>
        e.code === 'OL_INVALID_ARGUMENT' && /intraOpNumThreads must be an integer from 1 to 64/.test(e.message));
    }
    await assert.rejects(PersistentValueState.create(new Uint8Array(0), {}, { intraOpNumThreads: -1 }), (e) =>
      e.code === 'OL_INVALID_ARGUMENT' && /intraOpNumThreads/.test(e.message));
    const out = runChild(`
      import { env, init } from 'onnx-light';
      env.wasm.numThreads = -2;
      try { await init(); console.log('loaded'); } catch (e) { console.log(e.code, e.message); }
      env.wasm.numThreads = 1;
      await init();
      console.log('then loaded');
    `);
    assert.match(out, /^OL_INVALID_ARGUMENT env\.wasm\.numThreads must be an integer from 1 to 64 \(or 0 for the number of cores\), got -2\nthen loaded$/);
  });

  test('the default is the number of cores, and strings decode from shared memory', () => {
    const out = runChild(`
      import { availableParallelism } from 'node:os';
      import { Tensor, init, numThreads, parseModel, printModel } from 'onnx-light';
      await init();
      console.log(numThreads() === Math.min(availableParallelism(), 64));
      const text = await printModel(await parseModel('<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Add(x, x) }'));
      console.log(text.includes('Add(x, x)'));
    `);
    assert.equal(out, 'true\ntrue');
  });

  test('generation with a persistent KV cache: same tokens at 1 and 3 threads', async () => {
    const model = await bindCache(FORTUNES);
    const prompt = new Tensor('int64', BigInt64Array.from([84n, 104n, 101n, 32n]), [1, 4]);
    const tokens = [];
    for (const intraOpNumThreads of [1, 3]) {
      const session = await InferenceSession.create(model, { intraOpNumThreads });
      const out = await session.generate({ input_ids: prompt, ...(await emptyCaches(model)) }, { maxNewTokens: 24 });
      tokens.push([...out.data]);
      await session.release();
    }
    assert.deepEqual(tokens[1], tokens[0]);
  });

  test('init() after a threaded load keeps the first module', async () => {
    await init();
    env.wasm.numThreads = 1;
    await init();
    assert.equal(numThreads(), 3);
  });
});
