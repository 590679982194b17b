// Tensor: construction, types, wasm-resident storage, views across memory
// growth, dispose and the FinalizationRegistry safety net.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { OnnxLightError, Tensor, init, memoryStats } from 'onnx-light';

import { runModule } from './child.mjs';

before(() => init());

const isInvalid = (error) => error instanceof OnnxLightError && error.code === 'OL_INVALID_ARGUMENT';

describe('new Tensor', () => {
  test('type, data and dims', () => {
    const data = new Float32Array([1, 2, 3, 4, 5, 6]);
    const t = new Tensor('float32', data, [2, 3]);
    assert.equal(t.type, 'float32');
    assert.deepEqual(t.dims, [2, 3]);
    assert.equal(t.size, 6);
    assert.equal(t.location, 'cpu');
    assert.equal(t.data, data, 'typed arrays are kept, not copied');
    assert.equal(t.wasmByteOffset, undefined);
  });

  test('type inferred from the typed array; dims default to [length]', () => {
    assert.equal(new Tensor(new Int32Array(4)).type, 'int32');
    assert.equal(new Tensor(new BigInt64Array(2)).type, 'int64');
    assert.equal(new Tensor(new Uint8Array(2)).type, 'uint8');
    assert.equal(new Tensor(new Float64Array(2)).type, 'float64');
    assert.deepEqual(new Tensor(new Int8Array(5)).dims, [5]);
    assert.equal(new Tensor(['a', 'b']).type, 'string');
  });

  test('plain arrays are converted to the type\'s array', () => {
    assert.deepEqual(new Tensor('int64', [1, 2], [2]).data, BigInt64Array.of(1n, 2n));
    assert.deepEqual(new Tensor('uint64', [3n], [1]).data, BigUint64Array.of(3n));
    assert.deepEqual(new Tensor('bool', [true, false, true]).data, Uint8Array.of(1, 0, 1));
    assert.deepEqual(new Tensor('float32', [0.5, 2]).data, Float32Array.of(0.5, 2));
    assert.deepEqual(new Tensor('string', ['x', 'yz']).data, ['x', 'yz']);
  });

  test('every ORT type string plus bfloat16, int4, uint4', () => {
    const arrays = {
      float32: Float32Array, float64: Float64Array, float16: Uint16Array, bfloat16: Uint16Array,
      int8: Int8Array, int16: Int16Array, int32: Int32Array, int64: BigInt64Array,
      uint8: Uint8Array, uint16: Uint16Array, uint32: Uint32Array, uint64: BigUint64Array, bool: Uint8Array,
    };
    for (const [type, Array_] of Object.entries(arrays)) {
      const t = new Tensor(type, new Array_(6), [2, 3]);
      assert.equal(t.type, type);
      assert.equal(t.size, 6);
    }
    // 4-bit types: two elements per byte.
    assert.equal(new Tensor('int4', new Uint8Array(3), [5]).size, 5);
    assert.equal(new Tensor('uint4', new Uint8Array(2), [2, 2]).size, 4);
  });

  test('invalid arguments', () => {
    assert.throws(() => new Tensor('float32', new Float32Array(5), [2, 3]), isInvalid);
    assert.throws(() => new Tensor('float32', new Float32Array(6), [2, -3]), isInvalid);
    assert.throws(() => new Tensor('float32', new Float32Array(6), [2, 1.5]), isInvalid);
    assert.throws(() => new Tensor('float32', new Int32Array(6), [6]), isInvalid);
    assert.throws(() => new Tensor('float16', [1, 2], [2]), isInvalid, 'numbers are ambiguous for float16');
    assert.throws(() => new Tensor('int4', [1, 2], [2]), isInvalid);
    assert.throws(() => new Tensor('string', 'abc', [1]), isInvalid);
    assert.throws(() => new Tensor('complex64', new Float32Array(2), [1]), TypeError);
  });

  test('dispose drops the data', () => {
    const t = new Tensor('int32', [1, 2]);
    t.dispose();
    t.dispose();
    assert.throws(() => t.data, (e) => e instanceof OnnxLightError && e.code === 'OL_FAILED_PRECONDITION' && /disposed/.test(e.message));
  });
});

describe('Tensor.alloc', () => {
  test('a zeroed view on wasm memory', () => {
    const t = Tensor.alloc('float32', [2, 3]);
    assert.equal(t.location, 'wasm');
    assert.equal(t.type, 'float32');
    assert.deepEqual(t.dims, [2, 3]);
    assert.ok(t.data instanceof Float32Array);
    assert.deepEqual([...t.data], [0, 0, 0, 0, 0, 0]);
    assert.equal(t.data.byteOffset, t.wasmByteOffset);
    t.data.set([1, 2, 3, 4, 5, 6]);
    assert.equal(t.data[5], 6, 'writes go to wasm memory and read back');
    t.dispose();
  });

  test('every numeric type', () => {
    for (const type of ['float32', 'float64', 'float16', 'bfloat16', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'bool']) {
      const t = Tensor.alloc(type, [3]);
      assert.equal(t.data.length, 3, type);
      t.dispose();
    }
    const packed = Tensor.alloc('int4', [5]);
    assert.equal(packed.data.length, 3);
    packed.dispose();
    assert.throws(() => Tensor.alloc('string', [1]), isInvalid);
    assert.throws(() => Tensor.alloc('float32', [-1]), isInvalid);
  });

  test('live bytes follow alloc and dispose', () => {
    const before = memoryStats().liveBytes;
    const t = Tensor.alloc('float32', [1024]);
    assert.equal(memoryStats().liveBytes - before, 4096);
    t.dispose();
    assert.equal(memoryStats().liveBytes, before);
    assert.throws(() => t.data, /disposed/);
    t.dispose();
  });

  test('views stay valid across wasm memory growth', () => {
    const t = Tensor.alloc('int32', [4]);
    t.data.set([7, 8, 9, 10]);
    const oldView = t.data;
    const memoryBefore = memoryStats().wasmMemoryBytes;
    const big = Tensor.alloc('uint8', [64 * 2 ** 20]); // forces the memory to grow
    assert.ok(memoryStats().wasmMemoryBytes > memoryBefore, 'memory grew');
    if (oldView.buffer instanceof SharedArrayBuffer) {
      // the threaded module: a shared memory grows without detaching old views
      assert.notEqual(t.data.buffer.byteLength, oldView.buffer.byteLength, 'a fresh view is over the grown memory');
    } else {
      assert.equal(oldView.length, 0, 'the old ArrayBuffer was detached by the growth');
    }
    assert.deepEqual([...t.data], [7, 8, 9, 10], 'a fresh view reads the same payload');
    big.dispose();
    t.dispose();
  });

  test('before the module is loaded: OL_FAILED_PRECONDITION', () => {
    const out = runModule(`
      import { Tensor } from 'onnx-light';
      try { Tensor.alloc('float32', [1]); console.log('no error'); }
      catch (e) { console.log(e.name, e.code); }
    `);
    assert.equal(out.trim(), 'OnnxLightError OL_FAILED_PRECONDITION');
  });

  test('garbage-collected tensors are freed (FinalizationRegistry)', () => {
    const out = runModule(
      `
      import { Tensor, init, memoryStats } from 'onnx-light';
      await init();
      const base = memoryStats().liveBytes;
      (() => { for (let i = 0; i < 64; i++) Tensor.alloc('float32', [1024]); })();
      const held = memoryStats().liveBytes - base;
      for (let i = 0; i < 10 && memoryStats().liveBytes > base; i++) {
        globalThis.gc();
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      console.log(held, memoryStats().liveBytes - base);
    `,
      ['--expose-gc'],
    );
    assert.deepEqual(out.trim().split(' ').map(Number), [64 * 4096, 0]);
  });
});
