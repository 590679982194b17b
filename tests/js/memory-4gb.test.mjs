// Wasm memory past 2 GiB (the module is linked for 4 GB). A wasm i32 result
// reaches JS signed, so pointers at or past 2^31 came back negative: after a
// legitimate 2 GiB output every run, new session and memoryStats() threw a
// RangeError. And an allocation between 2 and 4 GiB never returned (the
// payload pool's size class computation shifted a 32-bit size_t by 32).
// Needs about 3 GB of memory; runs in its own process (node --test).
import assert from 'node:assert/strict';
import { test } from 'node:test';

import { InferenceSession, Tensor, init, memoryStats, parseModel } from 'onnx-light';

const TWO_GIB = 2 ** 31;

test('a 2 GiB output, then tensors, sessions and runs past 2 GiB', { timeout: 300000 }, async () => {
  await init();
  const fill = await InferenceSession.create(
    await parseModel(
      '<ir_version: 10, opset_import: ["" : 18]> g (int64[1] s) => (uint8[N] y) ' +
        '{ y = ConstantOfShape <value = uint8[1] {7}> (s) }',
    ),
  );
  const n = 2147483748; // 2 GiB + 100 bytes, allocated during a run (with the session's payload pool)
  const { y } = await fill.run({ s: new Tensor('int64', new BigInt64Array([BigInt(n)]), [1]) });
  assert.deepEqual(y.dims, [n]);
  assert.equal(y.data.length, n);
  assert.equal(y.data[0], 7);
  assert.equal(y.data[n - 1], 7);
  const stats = memoryStats();
  assert.ok(stats.wasmMemoryBytes > TWO_GIB, `wasm memory is ${stats.wasmMemoryBytes} bytes`);
  assert.ok(stats.liveBytes >= n);

  // new allocations land past 2 GiB: a tensor JS writes, a session, its output
  const x = Tensor.alloc('float32', [1 << 20]);
  assert.ok(x.data.byteOffset >= TWO_GIB, `tensor at ${x.data.byteOffset}`);
  x.data.fill(1.5);
  x.data[12345] = -2;
  const add = await InferenceSession.create(
    await parseModel('<ir_version: 10, opset_import: ["" : 18]> g (float[N] x) => (float[N] z) { z = Add(x, x) }'),
  );
  assert.deepEqual(add.inputNames, ['x']);
  const { z } = await add.run({ x });
  assert.ok(z.data.byteOffset >= TWO_GIB, `output at ${z.data.byteOffset}`);
  assert.equal(z.data.length, 1 << 20);
  assert.equal(z.data[0], 3);
  assert.equal(z.data[12345], -4);
  assert.equal(z.data[(1 << 20) - 1], 3);
  assert.ok(memoryStats().liveBytes > n);

  // and after the big output is gone, everything still works
  y.dispose();
  z.dispose();
  x.dispose();
  const again = await add.run({ x: new Tensor('float32', new Float32Array([1, 2]), [2]) });
  assert.deepEqual([...again.z.data], [2, 4]);
  assert.ok(memoryStats().liveBytes < n);
  await add.release();
  await fill.release();
});
