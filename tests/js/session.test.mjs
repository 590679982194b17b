// InferenceSession: loading from bytes, paths and URLs, names and metadata,
// runs with cpu and wasm feeds, zero-copy of Tensor.alloc feeds, fetches,
// cancellation, release.
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { describe, test } from 'node:test';

import { InferenceSession, OnnxLightError, Tensor, memoryStats } from 'onnx-light';

import { serve } from '../browser/server.mjs';
import { DataType, ROOT, addModel, identityModel, makeModel, tensorInfo } from './models.mjs';

const A = [1, 2, 3, 4, 5, 6];
const B = [10, 20, 30, 40, 50, 60];

describe('InferenceSession', () => {
  test('create from Uint8Array, ArrayBuffer, a path and a file URL', async () => {
    const bytes = addModel();
    const dir = mkdtempSync(join(tmpdir(), 'onnx-light-'));
    const path = join(dir, 'add.onnx');
    writeFileSync(path, bytes);
    const copy = bytes.slice();
    for (const source of [bytes, copy.buffer, path, pathToFileURL(path), pathToFileURL(path).href]) {
      const session = await InferenceSession.create(source);
      assert.deepEqual(session.inputNames, ['a', 'b']);
      await session.release();
    }
  });

  test('create from an http URL the caller names', async () => {
    const server = await serve(ROOT);
    try {
      const session = await InferenceSession.create(`${server.origin}/models/fortunes-byte-0.8M.onnx`);
      assert.equal(session.inputNames[0], 'input_ids');
      await session.release();
      assert.deepEqual(server.requests, ['/models/fortunes-byte-0.8M.onnx']);
      await assert.rejects(InferenceSession.create(new URL(`${server.origin}/models/missing.onnx`)), /HTTP 404/);
    } finally {
      await server.close();
    }
  });

  test('names and metadata shaped like onnxruntime-web', async () => {
    const session = await InferenceSession.create(addModel());
    assert.deepEqual(session.inputNames, ['a', 'b']);
    assert.deepEqual(session.outputNames, ['sum', 'twice']);
    assert.deepEqual(session.inputMetadata[0], { name: 'a', isTensor: true, type: 'float32', shape: [2, 3] });
    assert.deepEqual(session.outputMetadata[1], { name: 'twice', isTensor: true, type: 'float32', shape: [2, 3] });
    const identity = await InferenceSession.create(identityModel());
    assert.deepEqual(identity.inputMetadata, [{ name: 'x', isTensor: true, type: 'float32', shape: ['n'] }]);
    await identity.release();
    await session.release();
  });

  test('run with cpu tensors: outputs are wasm views', async () => {
    const session = await InferenceSession.create(addModel());
    const results = await session.run({
      a: new Tensor('float32', A, [2, 3]),
      b: new Tensor('float32', Float32Array.from(B), [2, 3]),
    });
    assert.deepEqual(Object.keys(results).sort(), ['sum', 'twice']);
    assert.equal(results.sum.location, 'wasm');
    assert.equal(results.sum.type, 'float32');
    assert.deepEqual(results.sum.dims, [2, 3]);
    assert.deepEqual([...results.sum.data], A.map((x, i) => x + B[i]));
    assert.deepEqual([...results.twice.data], A.map((x) => 2 * x));
    for (const t of Object.values(results)) t.dispose();
    await session.release();
  });

  test('fetches select outputs (array or object form); options may follow', async () => {
    const session = await InferenceSession.create(addModel());
    const feeds = { a: new Tensor('float32', A, [2, 3]), b: new Tensor('float32', B, [2, 3]) };
    assert.deepEqual(Object.keys(await session.run(feeds, ['twice'])), ['twice']);
    assert.deepEqual(Object.keys(await session.run(feeds, { sum: null })), ['sum']);
    assert.deepEqual(Object.keys(await session.run(feeds, ['sum'], {})), ['sum']);
    assert.deepEqual(Object.keys(await session.run(feeds, {})).sort(), ['sum', 'twice']);
    await session.release();
  });

  test('Tensor.alloc feeds are read in place (zero-copy, proven by address)', async () => {
    const session = await InferenceSession.create(identityModel());
    const x = Tensor.alloc('float32', [4]);
    x.data.set([1.5, 2.5, 3.5, 4.5]);
    const before = memoryStats();
    const { y } = await session.run({ x });
    // Identity returns a view of its input: the output payload is the very
    // bytes JS wrote, so the run neither copied the feed nor the result.
    assert.equal(y.wasmByteOffset, x.wasmByteOffset);
    assert.deepEqual([...y.data], [1.5, 2.5, 3.5, 4.5]);
    x.data[0] = 9;
    assert.equal(y.data[0], 9, 'output and feed share storage');
    assert.ok(memoryStats().liveBytes - before.liveBytes < 16, 'no payload-sized allocation survived the run');
    // The output keeps the payload alive after the feed is disposed.
    x.dispose();
    assert.equal(y.data[3], 4.5);
    y.dispose();
    await session.release();
  });

  test('cpu feeds are copied once and freed after the run', async () => {
    const session = await InferenceSession.create(identityModel());
    const x = new Tensor('float32', new Float32Array(256).fill(1), [256]);
    const before = memoryStats().liveBytes;
    const { y } = await session.run({ x });
    assert.notEqual(y.data.buffer, x.data.buffer);
    assert.equal(memoryStats().liveBytes - before, 1024, 'only the output copy stays live');
    y.dispose();
    assert.equal(memoryStats().liveBytes, before);
    await session.release();
  });

  test('outputs can be fed back as inputs without a copy', async () => {
    const session = await InferenceSession.create(identityModel());
    let t = Tensor.alloc('float32', [3]);
    const address = t.wasmByteOffset;
    for (let i = 0; i < 3; i++) {
      const { y } = await session.run({ x: t });
      t.dispose();
      t = y;
    }
    assert.equal(t.wasmByteOffset, address);
    t.dispose();
    await session.release();
  });

  test('an aborted signal cancels the run (OL_CANCELLED)', async () => {
    const session = await InferenceSession.create(identityModel());
    const controller = new AbortController();
    controller.abort(new Error('user stop'));
    await assert.rejects(
      session.run({ x: new Tensor('float32', [1], [1]) }, { signal: controller.signal }),
      (e) => e instanceof OnnxLightError && e.code === 'OL_CANCELLED',
    );
    const { y } = await session.run({ x: new Tensor('float32', [1], [1]) }, { signal: new AbortController().signal });
    assert.deepEqual([...y.data], [1]);
    await session.release();
  });

  test('release is idempotent; outputs outlive the session; runs afterwards fail', async () => {
    const session = await InferenceSession.create(identityModel());
    const { y } = await session.run({ x: new Tensor('float32', [5, 6], [2]) });
    await session.release();
    await session.release();
    assert.deepEqual([...y.data], [5, 6]);
    await assert.rejects(
      session.run({ x: new Tensor('float32', [1], [1]) }),
      (e) => e instanceof OnnxLightError && e.code === 'OL_FAILED_PRECONDITION',
    );
    y.dispose();
  });

  test('sequence outputs are arrays of tensors; string tensors round-trip', async () => {
    const tensorType = { value: { case: 'tensorType', value: { elemType: DataType.FLOAT } } };
    const session = await InferenceSession.create(
      makeModel({
        nodes: [
          { opType: 'SequenceConstruct', input: ['x', 'x'], output: ['seq'] },
          { opType: 'Identity', input: ['words'], output: ['same'] },
        ],
        inputs: [tensorInfo('x', DataType.FLOAT, [2]), tensorInfo('words', DataType.STRING, [3])],
        outputs: [
          { name: 'seq', type: { value: { case: 'sequenceType', value: { elemType: tensorType } } } },
          tensorInfo('same', DataType.STRING, [3]),
        ],
      }),
    );
    assert.deepEqual(session.outputMetadata[0], { name: 'seq', isTensor: false, kind: 'sequence' });
    const words = ['héllo', '', 'wörld with spaces'];
    const { seq, same } = await session.run({ x: new Tensor('float32', [1, 2]), words: new Tensor('string', words) });
    assert.ok(Array.isArray(seq));
    assert.equal(seq.length, 2);
    assert.deepEqual([...seq[1].data], [1, 2]);
    assert.equal(same.type, 'string');
    assert.deepEqual(same.data, words);
    await session.release();
  });

  test('every element type travels in and out unchanged', async () => {
    const samples = {
      float32: [DataType.FLOAT, Float32Array.of(1.5, -2, 3e-8, 4)],
      float64: [DataType.DOUBLE, Float64Array.of(1e300, -2, 0.1, 4)],
      float16: [DataType.FLOAT16, Uint16Array.of(0x3c00, 0xc000, 0x7bff, 1)],
      bfloat16: [DataType.BFLOAT16, Uint16Array.of(0x3f80, 0xc000, 0x7f7f, 1)],
      int8: [DataType.INT8, Int8Array.of(-128, 127, 0, 1)],
      int16: [DataType.INT16, Int16Array.of(-32768, 32767, 0, 1)],
      int32: [DataType.INT32, Int32Array.of(-(2 ** 31), 2 ** 31 - 1, 0, 1)],
      int64: [DataType.INT64, BigInt64Array.of(-(2n ** 63n), 2n ** 63n - 1n, 0n, 1n)],
      uint8: [DataType.UINT8, Uint8Array.of(0, 255, 7, 1)],
      uint16: [DataType.UINT16, Uint16Array.of(0, 65535, 7, 1)],
      uint32: [DataType.UINT32, Uint32Array.of(0, 2 ** 32 - 1, 7, 1)],
      uint64: [DataType.UINT64, BigUint64Array.of(0n, 2n ** 64n - 1n, 7n, 1n)],
      bool: [DataType.BOOL, Uint8Array.of(1, 0, 1, 1)],
      int4: [DataType.INT4, Uint8Array.of(0x8f, 0x71)],
      uint4: [DataType.UINT4, Uint8Array.of(0xf0, 0x5a)],
    };
    for (const [type, [code, data]] of Object.entries(samples)) {
      const session = await InferenceSession.create(
        makeModel({
          nodes: [{ opType: 'Identity', input: ['x'], output: ['y'] }],
          inputs: [tensorInfo('x', code, [2, 2])],
          outputs: [tensorInfo('y', code, [2, 2])],
          opset: 21,
        }),
      );
      assert.equal(session.inputMetadata[0].type, type);
      const { y } = await session.run({ x: new Tensor(type, data, [2, 2]) });
      assert.equal(y.type, type);
      assert.deepEqual(y.dims, [2, 2]);
      assert.deepEqual(y.data, data, type);
      y.dispose();
      await session.release();
    }
  });

  test('the constructor is private', () => {
    assert.throws(() => new InferenceSession(), TypeError);
  });
});
