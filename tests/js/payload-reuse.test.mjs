// Payload reuse across runs (c/src/core/payload_pool.h), seen through
// memoryStats().totalAllocations: once shapes are stable a run (feeds copied
// into wasm, intermediates, outputs) makes no allocator call; a decode step
// of a KV-cache state whose shapes grow by one position allocates only now
// and then (generate() too); an output kept across later runs keeps its data.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import * as ol from 'onnx-light';

import { DataType, FORTUNES, makeModel, tensorInfo } from './models.mjs';

const { InferenceSession, PersistentValueState, Tensor, emptyCaches, memoryStats } = ol;

const calls = () => memoryStats().totalAllocations;
const i64 = (values, dims) => new Tensor('int64', BigInt64Array.from(values.map(BigInt)), dims);

// x [8, 16] -> a dozen intermediates of three sizes -> y [8, 16], p [8, 8]
const STABLE = makeModel({
  nodes: [
    { opType: 'Transpose', input: ['x'], output: ['xt'], attribute: [{ name: 'perm', type: 7, ints: [1n, 0n] }] },
    { opType: 'MatMul', input: ['x', 'xt'], output: ['s'] },
    { opType: 'Softmax', input: ['s'], output: ['p'] },
    { opType: 'MatMul', input: ['p', 'x'], output: ['h'] },
    { opType: 'Relu', input: ['h'], output: ['r'] },
    { opType: 'Neg', input: ['x'], output: ['n'] },
    { opType: 'Add', input: ['r', 'n'], output: ['a'] },
    { opType: 'Mul', input: ['a', 'a'], output: ['y'] },
  ],
  inputs: [tensorInfo('x', DataType.FLOAT, [8, 16])],
  outputs: [tensorInfo('y', DataType.FLOAT, [8, 16]), tensorInfo('p', DataType.FLOAT, [8, 8])],
});

describe('payload reuse across runs', () => {
  test('stable shapes: no allocator call per run after warm-up; a kept output keeps its data', async () => {
    const session = await InferenceSession.create(STABLE);
    const x = (run) => new Tensor('float32', Float32Array.from({ length: 128 }, (_, i) => Math.sin(i + run)), [8, 16]);
    const kept = await session.run({ x: x(0) });
    const keptData = Float32Array.from(kept.y.data);
    const perRun = [];
    for (let run = 1; run <= 8; run++) {
      const before = calls();
      const out = await session.run({ x: x(run) });
      perRun.push(calls() - before);
      assert.ok(out.y.data.some((v) => v !== 0));
      out.y.dispose();
      out.p.dispose();
    }
    assert.deepEqual(perRun.slice(2), [0, 0, 0, 0, 0, 0], `allocator calls per run: ${perRun}`);
    assert.deepEqual(kept.y.data, keptData, 'a kept output is never overwritten by reuse');
    kept.y.dispose();
    kept.p.dispose();
    await session.release();
    assert.equal(memoryStats().pooledBytes, 0, 'the pool is freed with its session');
  });

  test('a decode state whose caches grow by one position allocates now and then', async () => {
    const caches = await emptyCaches(FORTUNES, { batch: 1 });
    const state = await PersistentValueState.create(FORTUNES, caches, { bindCache: true });
    const prompt = Array.from({ length: 16 }, (_, i) => 65 + i);
    const step = async (ids, past) => {
      const n = ids.length;
      const out = await state.run(
        {
          input_ids: i64(ids, [1, n]),
          attention_mask: i64(new Array(past + n).fill(1), [1, past + n]),
          position_ids: i64(ids.map((_, i) => past + i), [1, n]),
        },
        ['logits'],
      );
      const logits = out.logits.data;
      out.logits.dispose();
      return logits;
    };
    await step(prompt, 0);
    const perStep = [];
    let past = prompt.length;
    for (let s = 0; s < 48; s++) {
      const before = calls();
      await step([97 + (s % 26)], past++);
      perStep.push(calls() - before);
    }
    const warm = perStep.slice(2);
    const total = warm.reduce((a, b) => a + b, 0);
    const zero = warm.filter((c) => c === 0).length;
    // without reuse every step made about a hundred calls; with it, steps
    // only allocate when a growing tensor outgrows its block (or the caches
    // double their capacity)
    assert.ok(total <= warm.length, `allocator calls per step: ${perStep}`);
    assert.ok(zero >= 0.75 * warm.length, `allocator calls per step: ${perStep}`);
    await state.close();
    assert.equal(memoryStats().pooledBytes, 0, 'the pool is freed with its state');
  });

  test('generate(): a few allocator calls per token, not a few hundred', async () => {
    const session = await InferenceSession.create(FORTUNES, { bindCache: true });
    const caches = await emptyCaches(session);
    const prompt = [...new TextEncoder().encode('The ')];
    const count = async (maxNewTokens) => {
      const before = calls();
      const out = await session.generate({ input_ids: i64(prompt, [1, prompt.length]), ...caches }, { maxNewTokens });
      assert.equal(out.dims[1], prompt.length + maxNewTokens);
      return calls() - before;
    };
    const short = await count(8);
    const perToken = ((await count(72)) - short) / 64;
    // each step's feeds, intermediates and logits reuse the previous step's
    // blocks; growing ones allocate when they outgrow theirs
    assert.ok(perToken <= 8, `allocator calls per generated token: ${perToken}`);
    await session.release();
  });
});
