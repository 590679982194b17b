// Portable int4/int8 weights (`onnx-light quantize --format int4|int8|gptq`:
// encoded initializer + ai.rt::Dequantize + MatMul) run as one MatMul
// decoding the codes in register (wasm build). The fused model's results
// equal, bit for bit, those of the same model with the dequantized weight
// also a graph output (which keeps Dequantize + MatMul unfused), for one
// row, a few rows and many rows of A; and the quantized fortunes decoder
// generates the same tokens either way.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as ol from 'onnx-light';
import { ModelProtoSchema, ValueInfoProtoSchema } from 'onnx-light/proto';

import { DataType, FORTUNES, ROOT, makeModel, tensorInfo } from './models.mjs';

const K = 72;
const N = 40;
const dir = mkdtempSync(join(tmpdir(), 'onnx-light-qmatmul-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const quantize = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'quantize', ...args], { encoding: 'utf8' });

let seed = 12345;
const random = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31 - 0.5;
};

/** Y = MatMul(X, W), X float32 [m, K], W a float initializer [K, N]. */
function matmulModel() {
  const w = Float32Array.from({ length: K * N }, () => random() * 2);
  return makeModel({
    nodes: [{ opType: 'MatMul', input: ['X', 'W'], output: ['Y'], name: 'mm' }],
    inputs: [tensorInfo('X', DataType.FLOAT, ['m', K])],
    outputs: [tensorInfo('Y', DataType.FLOAT, ['m', N])],
    initializers: [{ name: 'W', dims: [BigInt(K), BigInt(N)], dataType: DataType.FLOAT, rawData: new Uint8Array(w.buffer) }],
  });
}

/** The same model with the dequantized weights as extra graph outputs (unfused). */
function unfused(bytes, names) {
  const model = fromBinary(ModelProtoSchema, bytes);
  for (const name of names) model.graph.output.push(create(ValueInfoProtoSchema, { name }));
  return toBinary(ModelProtoSchema, model);
}

const bits = (t) => new Uint32Array(t.data.buffer, t.data.byteOffset, t.data.length);

describe('fused dequantize-in-register MatMul', () => {
  for (const [format, block] of [['int4', 32], ['int8', 16], ['gptq', 24]]) {
    test(`${format} block ${block}: fused equals Dequantize + MatMul bit for bit`, async () => {
      const source = join(dir, 'mm.onnx');
      const out = join(dir, `mm-${format}.onnx`);
      writeFileSync(source, matmulModel());
      const run = quantize('--model', source, '--out', out, '--format', format, '--block-size', String(block));
      assert.equal(run.status, 0, run.stderr);
      const bytes = readFileSync(out);
      const fused = await ol.InferenceSession.create(bytes);
      const plain = await ol.InferenceSession.create(unfused(bytes, ['W']));
      for (const m of [1, 3, 9, 33]) {
        const x = new ol.Tensor('float32', Float32Array.from({ length: m * K }, () => random() * 4), [m, K]);
        const a = (await fused.run({ X: x })).Y;
        const b = (await plain.run({ X: x }, ['Y'])).Y;
        assert.deepEqual(a.dims, [m, N]);
        assert.deepEqual(bits(a), bits(b), `${format}, ${m} rows`);
      }
      await fused.release();
      await plain.release();
    });
  }

  test('int4 fortunes decoder: the same greedy tokens fused and unfused', async () => {
    const out = join(dir, 'fortunes-int4.onnx');
    const run = quantize('--model', FORTUNES, '--out', out, '--format', 'int4', '--block-size', '32');
    assert.equal(run.status, 0, run.stderr);
    const bytes = readFileSync(out);
    const weights = fromBinary(ModelProtoSchema, bytes)
      .graph.node.filter((n) => n.opType === 'Dequantize')
      .map((n) => n.output[0]);
    assert.equal(weights.length, 29);
    const tokens = async (model) => {
      const bound = await ol.bindCache(model);
      const session = await ol.InferenceSession.create(bound);
      const prompt = [...new TextEncoder().encode('The ')];
      const ids = new ol.Tensor('int64', BigInt64Array.from(prompt, BigInt), [1, prompt.length]);
      const result = await session.generate({ input_ids: ids, ...(await ol.emptyCaches(bound)) }, { maxNewTokens: 24 });
      await session.release();
      return Array.from(result.data, Number);
    };
    assert.deepEqual(await tokens(bytes), await tokens(unfused(bytes, weights)));
  });
});
