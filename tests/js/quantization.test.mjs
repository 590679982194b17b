// The quantization JS API over the C codec: catalogue names, plans, encode /
// decode round trips, errors carrying the C message, and the ORT MatMulNBits
// export checked against onnxruntime-node.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import ort from 'onnxruntime-node';
import * as ol from 'onnx-light';

import { runModule } from './child.mjs';
import { DataType, ROOT, makeModel, tensorInfo } from './models.mjs';

const { OnnxLightError, QuantizationFormat: QF, Tensor } = ol;
const invalid = (pattern) => (e) => e instanceof OnnxLightError && e.code === 'OL_INVALID_ARGUMENT' && pattern.test(e.message);

/** Deterministic uniform values in [-1, 1) (xorshift32). */
function random(count, seed = 1) {
  let s = seed >>> 0 || 1;
  return Float32Array.from({ length: count }, () => {
    s ^= s << 13;
    s >>>= 0;
    s ^= s >>> 17;
    s ^= s << 5;
    s >>>= 0;
    return s / 2 ** 31 - 1;
  });
}

// QuantizationFormat comes from the wasm module: load it before the tests are declared
await ol.init();

describe('catalogue', () => {
  test('43 formats in catalogue order; every name round-trips', () => {
    const formats = ol.quantizationFormats();
    assert.equal(formats.length, 43);
    assert.deepEqual(formats.map((f) => f.value), [...Array(43).keys()]);
    assert.equal(QF.INT8.value, 0);
    assert.equal(QF.INT4.value, 2);
    assert.equal(QF.ORT_MATMULNBITS_INT8.value, 42);
    for (const [key, format] of Object.entries(QF)) {
      assert.equal(format.name, key);
      assert.equal(String(format), `QuantizationFormat.${key}`);
      assert.ok(Object.isFrozen(format));
      const name = ol.quantizationFormatName(format);
      assert.equal(name, key.toLowerCase(), `wire name of ${key}`);
      assert.equal(ol.parseQuantizationFormat(name), format, 'parsing gives the member itself');
    }
    assert.ok(Object.isFrozen(QF));
  });

  test('formats are enum members: integers, strings and look-alikes are rejected with the reason', () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 4);
    const wrong = [
      [2, /plan\.format: expected a QuantizationFormat member, got the number 2 \(formats are enum members such as QuantizationFormat\.INT4, not integers\)/],
      ['int4', /got the string 'int4' \(convert wire names with parseQuantizationFormat\)/],
      [{ name: 'INT4', value: 2 }, /got object/],
      [null, /got null/],
    ];
    for (const [value, message] of wrong) {
      assert.throws(() => (plan.format = value), invalid(message));
      assert.equal(plan.format, QF.INT8, 'a rejected assignment leaves the plan unchanged');
    }
    assert.throws(() => ol.makeQuantizationPlan(2, 4), invalid(/makeQuantizationPlan: expected a QuantizationFormat member, got the number 2/));
    assert.throws(() => ol.makeMatMulNBitsPlan(41, 16, 2), invalid(/makeMatMulNBitsPlan: .*the number 41/));
    assert.throws(() => ol.quantizationFormatName('INT4'), invalid(/quantizationFormatName: .*the string 'INT4'/));
    plan.format = QF.INT4;
    assert.equal(plan.format, QF.INT4);
  });

  test('QuantizationFormat is read from the C catalogue; the TypeScript declaration lists the same profiles', () => {
    const dts = readFileSync(join(ROOT, 'js/types/index.d.ts'), 'utf8');
    const start = dts.indexOf('export const QuantizationFormat');
    const block = dts.slice(start, dts.indexOf('}>;', start));
    const declared = [...block.matchAll(/(\w+): QuantizationFormatMember<'(\w+)', (\d+)>;/g)];
    assert.deepEqual(
      declared.map(([, key, name, value]) => [key, name, Number(value)]),
      Object.entries(QF).map(([key, format]) => [key, format.name, format.value]),
    );
    assert.equal(ol.quantizationFormatName(QF.ORT_MATMULNBITS_INT2), 'ort_matmulnbits_int2');
  });

  test('QuantizationFormat before the module is loaded throws instead of giving undefined', () => {
    const out = runModule(`
      import { QuantizationFormat, init } from 'onnx-light';
      let message = '';
      try { QuantizationFormat.INT4; } catch (e) { message = e.code + ': ' + e.message; }
      await init();
      console.log(JSON.stringify({ message, int4: QuantizationFormat.INT4.value, frozen: Object.isFrozen(QuantizationFormat) }));`);
    const { message, int4, frozen } = JSON.parse(out);
    assert.match(message, /^OL_FAILED_PRECONDITION: .*await init\(\) first/);
    assert.equal(int4, 2);
    assert.ok(frozen);
  });

  test('parsing is case-sensitive and unknown names throw the C error', () => {
    assert.throws(() => ol.parseQuantizationFormat('INT4'), invalid(/Unknown quantization format: 'INT4'/));
    assert.throws(() => ol.parseQuantizationFormat('int3'), invalid(/int3/));
    assert.throws(() => ol.quantizationFormatName(43), invalid(/expected a QuantizationFormat member, got the number 43/));
  });
});

describe('plans', () => {
  test('a run of full blocks and a tail run', () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 300, { blockSize: 128 });
    assert.equal(plan.format, QF.INT8);
    const runs = plan.runs;
    assert.equal(runs.length, 2);
    assert.equal(runs[0].layout.count, 128);
    assert.equal(runs[0].blocks.length, 2);
    assert.equal(runs[1].layout.count, 44);
    assert.equal(runs[0].layout.method, 'affine');
    assert.equal(runs[0].layout.bits, 8);
    assert.deepEqual(plan.matrixShape, []);
    runs[0].blocks[0].scale = 99; // a copy
    assert.equal(plan.run(0).blocks[0].scale, 1);
    assert.equal(ol.makeQuantizationPlan(QF.INT4, 0).runs.length, 0);
    plan.dispose();
  });

  test('default block size is 128; NF4 blocks carry the fixed table', () => {
    const plan = ol.makeQuantizationPlan(QF.NF4, 256);
    assert.equal(plan.runs.length, 1);
    assert.equal(plan.run(0).blocks.length, 2);
    assert.equal(plan.run(0).layout.method, 'codebook');
    assert.equal(plan.run(0).blocks[0].codebook.length, 16);
  });

  test('bad block sizes and ORT formats raise the C errors', () => {
    assert.throws(() => ol.makeQuantizationPlan(QF.INT4, 8, { blockSize: 0 }), invalid(/block/i));
    assert.throws(() => ol.makeQuantizationPlan(QF.ORT_MATMULNBITS_INT4, 8), invalid(/matmul_nbits|MatMulNBits/i));
    assert.throws(
      () => ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 35, 3, { blockSize: 20 }),
      invalid(/block_size must be a power of two in \[16, UINT32_MAX\] \(got 20\)/),
    );
    assert.throws(() => ol.makeMatMulNBitsPlan(QF.INT4, 35, 3), invalid(/./));
  });

  test('MatMulNBits plan: matrix shape and N * ceil(K / block) blocks', () => {
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 35, 3, { blockSize: 16 });
    assert.deepEqual(plan.matrixShape, [35, 3]);
    assert.equal(plan.format, QF.ORT_MATMULNBITS_INT4);
    const run = plan.run(0);
    assert.equal(run.layout.count, 16);
    assert.equal(run.layout.signedCodes, false);
    assert.equal(run.blocks.length, 9);
    assert.equal(run.blocks[0].zeroPoint, 8);
    plan.matrixShape = [34, 3];
    assert.deepEqual(plan.matrixShape, [34, 3]);
    const weights = new Tensor('float32', new Float32Array(35 * 3), [35, 3]);
    assert.throws(() => ol.quantizeTensor(weights, plan), (e) => e instanceof OnnxLightError, 'mismatched sources are rejected');
    assert.throws(() => (plan.matrixShape = [1, 2, 3]), invalid(/\[K, N\]/));
    plan.format = QF.ORT_MATMULNBITS_INT8;
    assert.equal(plan.format, QF.ORT_MATMULNBITS_INT8);
  });
});

describe('round trips', () => {
  for (const [name, format] of [['INT8', QF.INT8], ['INT4', QF.INT4]]) {
    test(`${name}: calibrated affine round trip within half a scale step`, () => {
      const count = 1000;
      const values = random(count, 7);
      const x = new Tensor('float32', values, [10, 100]);
      const plan = ol.makeQuantizationPlan(format, count, { blockSize: 64 });
      ol.calibrateQuantizationPlan(plan, x);
      const encoded = ol.quantizeTensor(x, plan);
      assert.ok(encoded.bytes instanceof Uint8Array);
      assert.deepEqual(encoded.dims, [10, 100]);
      assert.equal(encoded.type, 'float32');
      const y = ol.dequantizeTensor(encoded);
      assert.equal(y.type, 'float32');
      assert.deepEqual(y.dims, [10, 100]);
      let index = 0;
      for (const run of plan.runs) {
        for (const block of run.blocks) {
          assert.ok(block.scale > 0);
          for (let i = 0; i < run.layout.count; i++, index++) {
            const error = Math.abs(y.data[index] - values[index]);
            assert.ok(error <= block.scale / 2 + 1e-6, `element ${index}: error ${error} > ${block.scale / 2}`);
          }
        }
      }
      assert.equal(index, count);
      // serialized bytes decode too
      assert.deepEqual(Array.from(ol.dequantizeTensor(encoded.bytes).data), Array.from(y.data));
    });
  }

  test('explicit scales are used unchanged (INT4 seed example)', () => {
    const plan = ol.makeQuantizationPlan(QF.INT4, 3);
    plan.setScales(0, [0.5]);
    const y = ol.dequantizeTensor(ol.quantizeTensor(new Tensor('float32', Float32Array.of(-4, 0, 3.5), [3]), plan));
    assert.deepEqual(Array.from(y.data), [-4, 0, 3.5]);
  });

  test('EXL2 mixed precision (seed example) restores exactly; runs and blocks are copies', () => {
    const weights = Float32Array.of(-4, 0, 3.5, -32, 0, 30);
    const plan = ol.makeQuantizationPlan(QF.EXL2, weights.length, { blockSize: 3 });
    const runs = [];
    for (const [bits, scale] of [[4, 0.5], [5, 2]]) {
      const run = plan.run(0);
      run.layout.bits = bits;
      const block = run.block(0);
      block.scale = scale;
      run.blocks = [block];
      runs.push(run);
    }
    assert.equal(plan.run(0).layout.bits, 4, 'run copies do not touch the plan');
    plan.runs = runs;
    runs[0].blocks[0].scale = 7; // the plan holds its own copy
    assert.deepEqual(plan.runs.map((r) => [r.layout.bits, r.blocks.length, r.blocks[0].scale]), [[4, 1, 0.5], [5, 1, 2]]);
    const restored = ol.dequantizeTensor(ol.quantizeTensor(new Tensor('float32', weights, [2, 3]), plan));
    assert.deepEqual(Array.from(restored.data), Array.from(weights));

    const run = plan.run(1);
    const block = run.block(0);
    block.scale = 4;
    assert.equal(run.blocks[0].scale, 2, 'block(j) is a copy');
    run.setBlock(0, block);
    block.scale = 8;
    assert.equal(run.blocks[0].scale, 4, 'setBlock copies');
    plan.setRun(1, run);
    assert.equal(plan.run(1).blocks[0].scale, 4);
    assert.throws(() => plan.setRun(2, run), invalid(/out of range/));
    assert.throws(() => run.block(1), invalid(/out of range/));
  });

  test('invalid run parameters raise the C error when encoding', () => {
    const plan = ol.makeQuantizationPlan(QF.INT4, 3);
    const run = plan.run(0);
    run.layout.bits = 99;
    plan.setRun(0, run);
    assert.throws(
      () => ol.quantizeTensor(new Tensor('float32', Float32Array.of(1, 2, 3), [3]), plan),
      invalid(/Quantization index width must be between 1 and 16 \(got 99\)/),
    );
  });

  test('permutation, transform and exact outliers are plan copies and round-trip', () => {
    const plan = ol.makeQuantizationPlan(QF.INT8, 8, { blockSize: 4 });
    plan.permutation = [7, 6, 5, 4, 3, 2, 1, 0];
    plan.outliers = [3];
    const h = Math.SQRT1_2;
    plan.setTransform(2, [h, h, h, -h], [h, h, h, -h]);
    assert.deepEqual(plan.permutation, [7, 6, 5, 4, 3, 2, 1, 0]);
    assert.deepEqual(plan.outliers, [3]);
    assert.equal(plan.transformSize, 2);
    assert.deepEqual(plan.forward, [h, h, h, -h]);
    assert.deepEqual(plan.inverse, [h, h, h, -h]);
    const values = Float32Array.of(1, -2, 3, 100, 0.5, -0.25, 2, -1);
    const x = new Tensor('float32', values, [8]);
    ol.calibrateQuantizationPlan(plan, x);
    const y = ol.dequantizeTensor(ol.quantizeTensor(x, plan)).data;
    assert.equal(y[3], 100, 'outliers are exact');
    const step = Math.max(...plan.runs.flatMap((r) => r.blocks.map((b) => b.scale)));
    for (let i = 0; i < 8; i++) assert.ok(Math.abs(y[i] - values[i]) <= step, `element ${i}`);
    plan.permutation = [0, 0, 1, 2, 3, 4, 5, 6];
    assert.throws(() => ol.quantizeTensor(x, plan), invalid(/Invalid or duplicate permutation index 0 at position 1/));
  });

  test('makeQuantizationType: the portable storage descriptor', () => {
    const type = ol.makeQuantizationType(ol.makeQuantizationPlan(QF.INT4, 8, { blockSize: 4 }));
    assert.ok(type instanceof Uint8Array);
    assert.ok(new TextDecoder().decode(type).includes('onnx_light.quantization.v1/int4'));
    assert.throws(() => ol.makeQuantizationType(ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 16, 2, { blockSize: 16 })), (e) => e instanceof OnnxLightError);
  });

  test('quantizeTensorProto / dequantizeTensorProto on proto objects', async () => {
    const { create } = await import('@bufbuild/protobuf');
    const { TensorProtoSchema } = await import('onnx-light/proto');
    const weights = Float32Array.of(-4, 0, 3.5);
    const tensor = create(TensorProtoSchema, { name: 'weight', dims: [3n], dataType: DataType.FLOAT, floatData: Array.from(weights) });
    const plan = ol.makeQuantizationPlan(QF.INT4, 3);
    plan.setScales(0, [0.5]);
    const encoded = await ol.quantizeTensorProto(tensor, plan);
    assert.equal(encoded.$typeName, 'onnx.EncodedValueProto');
    assert.equal(encoded.name, 'weight');
    const restored = await ol.dequantizeTensorProto(encoded);
    assert.equal(restored.$typeName, 'onnx.TensorProto');
    assert.equal(restored.name, 'weight');
    assert.equal(restored.dataType, DataType.FLOAT);
    assert.deepEqual(restored.dims, [3n]);
    assert.deepEqual(Array.from(new Float32Array(restored.rawData.slice().buffer)), Array.from(weights));
    const ints = create(TensorProtoSchema, { name: 'i', dims: [1n], dataType: DataType.INT32, int32Data: [1] });
    await assert.rejects(ol.quantizeTensorProto(ints, plan), invalid(/FLOAT, DOUBLE, FLOAT16 or BFLOAT16/));
  });

  test('malformed encoded bytes and non-float tensors are rejected', () => {
    assert.throws(() => ol.dequantizeTensor(Uint8Array.of(0xff, 0xff, 0xff)), (e) => e instanceof OnnxLightError);
    const plan = ol.makeQuantizationPlan(QF.INT8, 2);
    assert.throws(() => ol.quantizeTensor(new Tensor('int32', Int32Array.of(1, 2), [2]), plan), invalid(/float32/));
    assert.throws(() => ol.quantizeTensor(new Tensor('float32', Float32Array.of(1, 2, 3), [3]), plan), (e) => e instanceof OnnxLightError);
  });
});

/** Y = MatMulNBits(A, B, scales[, zero_points]) with K, N, bits, block_size. */
function matMulNBitsModel(inputs, m) {
  const initializers = [];
  const names = ['A'];
  for (const key of ['B', 'scales', 'zero_points']) {
    const t = inputs[key];
    if (!t) continue;
    const data = t.data;
    const code = { uint8: DataType.UINT8, float32: DataType.FLOAT }[t.type];
    initializers.push({ name: key, dims: t.dims.map(BigInt), dataType: code, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    names.push(key);
  }
  const attribute = (name, value) => ({ name, type: 2, i: BigInt(value) });
  const model = makeModel({
    nodes: [
      {
        opType: 'MatMulNBits',
        domain: 'com.microsoft',
        input: names,
        output: ['Y'],
        name: 'mm',
        attribute: [attribute('K', inputs.k), attribute('N', inputs.n), attribute('bits', inputs.bits), attribute('block_size', inputs.blockSize)],
      },
    ],
    inputs: [tensorInfo('A', DataType.FLOAT, [m, inputs.k])],
    outputs: [tensorInfo('Y', DataType.FLOAT, [m, inputs.n])],
    initializers,
  });
  return model;
}

/** The same model bytes with the com.microsoft opset imported. */
async function withMsOpset(bytes) {
  const { fromBinary, toBinary, create } = await import('@bufbuild/protobuf');
  const { ModelProtoSchema, OperatorSetIdProtoSchema } = await import('onnx-light/proto');
  const model = fromBinary(ModelProtoSchema, bytes);
  model.opsetImport.push(create(OperatorSetIdProtoSchema, { domain: 'com.microsoft', version: 1n }));
  return toBinary(ModelProtoSchema, model);
}

describe('ORT MatMulNBits export', () => {
  test('seed example: [35, 3] INT4, block 16', () => {
    const weights = Float32Array.from({ length: 105 }, (_, i) => (i % 3) - 1);
    const plan = ol.makeMatMulNBitsPlan(QF.ORT_MATMULNBITS_INT4, 35, 3, { blockSize: 16 });
    const encoded = ol.quantizeTensor(new Tensor('float32', weights, [35, 3]), plan);
    const inputs = ol.exportMatMulNBitsInputs(encoded);
    assert.equal(inputs.k, 35);
    assert.equal(inputs.n, 3);
    assert.equal(inputs.bits, 4);
    assert.equal(inputs.blockSize, 16);
    assert.deepEqual(inputs.B.dims, [3, 3, 8]);
    assert.equal(inputs.B.type, 'uint8');
    assert.deepEqual(inputs.scales.dims, [3, 3]);
    assert.equal(inputs.zero_points, undefined);
    assert.deepEqual(Array.from(ol.dequantizeTensor(encoded).data), Array.from(weights));
  });

  const K = 80;
  const N = 24;
  const M = 3;
  for (const [bits, format] of [[4, QF.ORT_MATMULNBITS_INT4], [8, QF.ORT_MATMULNBITS_INT8]]) {
    for (const zeroPoints of [false, true]) {
      test(`INT${bits} ${zeroPoints ? 'with' : 'without'} zero points: onnx-light equals onnxruntime-node`, async () => {
        const weights = random(K * N, 3 + bits);
        const plan = ol.makeMatMulNBitsPlan(format, K, N, { blockSize: 16 });
        const blocks = plan.run(0).blocks.length;
        const middle = 2 ** (bits - 1);
        if (zeroPoints) plan.setZeroPoints(0, Array.from({ length: blocks }, (_, i) => middle + (i % 3) - 1));
        const tensor = new Tensor('float32', weights, [K, N]);
        ol.calibrateQuantizationPlan(plan, tensor);
        const encoded = ol.quantizeTensor(tensor, plan);
        const inputs = ol.exportMatMulNBitsInputs(encoded);
        assert.equal(inputs.zero_points !== undefined, zeroPoints);
        if (zeroPoints) assert.equal(inputs.zero_points.type, 'uint8', 'packed integer zero points');
        const model = await withMsOpset(matMulNBitsModel(inputs, M));
        const a = random(M * K, 11);
        const session = await ol.InferenceSession.create(model);
        const ours = (await session.run({ A: new Tensor('float32', a, [M, K]) })).Y.data;
        const ortSession = await ort.InferenceSession.create(model);
        const theirs = (await ortSession.run({ A: new ort.Tensor('float32', a, [M, K]) })).Y.data;
        assert.equal(ours.length, M * N);
        // fp32 sums of K products with mixed signs: elementwise relative error
        // is meaningless near zero outputs (either runtime is ~1e-6 absolute
        // from the exact sum), so the bound is relative to the output's range.
        const range = Math.max(...Array.from(theirs, Math.abs));
        let worst = 0;
        for (let i = 0; i < M * N; i++) worst = Math.max(worst, Math.abs(ours[i] - theirs[i]));
        assert.ok(worst <= 1e-5 * range, `max |onnx-light - onnxruntime| = ${worst} > 1e-5 x ${range}`);
        // and both agree with A x dequantize(B)
        const w = ol.dequantizeTensor(encoded).data;
        for (let i = 0; i < M; i++) {
          for (let j = 0; j < N; j++) {
            let sum = 0;
            for (let k = 0; k < K; k++) sum += a[i * K + k] * w[k * N + j];
            assert.ok(Math.abs(sum - ours[i * N + j]) <= 1e-4 * Math.max(1, Math.abs(sum)));
          }
        }
        await session.release();
      });
    }
  }
});
