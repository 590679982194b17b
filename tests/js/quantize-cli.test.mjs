// `onnx-light quantize` on the fortunes decoder: every float MatMul weight
// becomes a com.microsoft MatMulNBits node (or, for portable profiles, an
// encoded initializer decoded by ai.rt::Dequantize), the int4 file is at most 35 % of
// the original (the 256 x 128 embedding Gather weight stays float32), and the
// quantized models still generate. Greedy token agreement with the float
// model (and with onnxruntime-node on the quantized model) is reported as a
// diagnostic, not asserted.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';

import { fromBinary } from '@bufbuild/protobuf';
import * as ol from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

import { greedyWithOrt } from '../parity/ort_greedy.mjs';
import { FORTUNES, ROOT } from './models.mjs';

const PROMPT = [...new TextEncoder().encode('The ')];
const STEPS = 32;
const dir = mkdtempSync(join(tmpdir(), 'onnx-light-quantize-'));
const quantize = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'quantize', ...args], { encoding: 'utf8' });

async function greedy(path) {
  const bound = await ol.bindCache(path);
  const session = await ol.InferenceSession.create(bound);
  const ids = new ol.Tensor('int64', BigInt64Array.from(PROMPT, BigInt), [1, PROMPT.length]);
  const out = await session.generate({ input_ids: ids, ...(await ol.emptyCaches(bound)) }, { maxNewTokens: STEPS });
  await session.release();
  return Array.from(out.data.subarray(PROMPT.length), Number);
}

const agreement = (a, b) => a.filter((t, i) => t === b[i]).length;
const prefix = (a, b) => {
  let i = 0;
  while (i < a.length && a[i] === b[i]) i++;
  return i;
};
const text = (tokens) => JSON.stringify(new TextDecoder().decode(Uint8Array.from(tokens)));

let reference;
before(async () => {
  reference = await greedy(FORTUNES);
});
after(() => rmSync(dir, { recursive: true, force: true }));

describe('onnx-light quantize', () => {
  for (const [format, bits, maxRatio] of [['ort_matmulnbits_int4', 4, 0.35], ['ort_matmulnbits_int8', 8, 0.4]]) {
    test(`${format}: MatMulNBits nodes, size, generation`, async (t) => {
      const out = join(dir, `${format}.onnx`);
      const run = quantize('--model', FORTUNES, '--out', out, '--format', format, '--block-size', '32');
      assert.equal(run.status, 0, run.stderr);
      assert.match(run.stderr, /29 MatMul nodes -> MatMulNBits/);
      assert.match(run.stderr, /size 3254119 -> \d+ bytes/);
      const ratio = statSync(out).size / statSync(FORTUNES).size;
      t.diagnostic(`size ratio ${ratio.toFixed(3)} (${statSync(out).size} / ${statSync(FORTUNES).size} bytes)`);
      assert.ok(ratio <= maxRatio, `ratio ${ratio}`);

      const model = fromBinary(ModelProtoSchema, readFileSync(out));
      const nodes = model.graph.node;
      const nbits = nodes.filter((n) => n.opType === 'MatMulNBits');
      assert.equal(nbits.length, 29);
      assert.ok(nbits.every((n) => n.domain === 'com.microsoft'));
      const attr = (n, name) => Number(n.attribute.find((a) => a.name === name).i);
      assert.ok(nbits.every((n) => attr(n, 'bits') === bits && attr(n, 'block_size') === 32));
      assert.ok(model.opsetImport.some((o) => o.domain === 'com.microsoft' && o.version === 1n));
      const initializers = new Set(model.graph.initializer.map((i) => i.name));
      assert.ok(![...initializers].some((name) => name.startsWith('onnx::MatMul_') && !/_(Q|scales|zero_points)$/.test(name)), 'float weights removed');
      assert.ok(initializers.has('emb'), 'the embedding Gather weight stays');
      // the 8 remaining MatMul nodes multiply activations
      assert.ok(nodes.filter((n) => n.opType === 'MatMul').every((n) => !initializers.has(n.input[1])));

      const tokens = await greedy(out);
      assert.equal(tokens.length, STEPS);
      t.diagnostic(`fp32 tokens: ${text(reference)}`);
      t.diagnostic(`${format} tokens: ${text(tokens)}`);
      t.diagnostic(`greedy agreement with fp32: ${agreement(tokens, reference)}/${STEPS} positions, common prefix ${prefix(tokens, reference)}`);
      const ortTokens = await greedyWithOrt(out, PROMPT, STEPS);
      t.diagnostic(`agreement with onnxruntime-node on the ${format} model: ${agreement(tokens, ortTokens)}/${STEPS}`);
    });
  }

  test('--asymmetric: per-block integer zero points, still generates', async (t) => {
    const out = join(dir, 'asymmetric.onnx');
    const run = quantize('--model', FORTUNES, '--out', out, '--asymmetric');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /block 32 asymmetric: 29 MatMul nodes/);
    const model = fromBinary(ModelProtoSchema, readFileSync(out));
    const nbits = model.graph.node.filter((n) => n.opType === 'MatMulNBits');
    assert.ok(nbits.every((n) => n.input.length === 4), 'zero_points inputs');
    const tokens = await greedy(out);
    assert.equal(tokens.length, STEPS);
    t.diagnostic(`asymmetric int4 tokens: ${text(tokens)}; agreement with fp32 ${agreement(tokens, reference)}/${STEPS}`);
    const ortTokens = await greedyWithOrt(out, PROMPT, STEPS);
    t.diagnostic(`agreement with onnxruntime-node on the asymmetric model: ${agreement(tokens, ortTokens)}/${STEPS}`);
  });

  test('--accuracy-level 4: the attribute on every MatMulNBits node, still generates', async () => {
    const out = join(dir, 'accuracy4.onnx');
    const run = quantize('--model', FORTUNES, '--out', out, '--accuracy-level', '4');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /block 32 accuracy_level 4: 29 MatMul nodes/);
    const model = fromBinary(ModelProtoSchema, readFileSync(out));
    const nbits = model.graph.node.filter((n) => n.opType === 'MatMulNBits');
    assert.equal(nbits.length, 29);
    assert.ok(nbits.every((n) => Number(n.attribute.find((a) => a.name === 'accuracy_level')?.i) === 4));
    const tokens = await greedy(out);
    assert.equal(tokens.length, STEPS);
    const plain = fromBinary(ModelProtoSchema, readFileSync(join(dir, 'ort_matmulnbits_int4.onnx')));
    assert.ok(plain.graph.node.every((n) => !n.attribute.some((a) => a.name === 'accuracy_level')), 'no attribute unless asked');
    assert.equal(quantize('--model', FORTUNES, '--out', join(dir, 'x.onnx'), '--accuracy-level', '5').status, 2);
    const portable = quantize('--model', FORTUNES, '--out', join(dir, 'x.onnx'), '--format', 'int4', '--accuracy-level', '4');
    assert.equal(portable.status, 1);
    assert.match(portable.stderr, /accuracyLevel applies to the ORT MatMulNBits formats only/);
  });

  test('portable int4: encoded initializers decoded by ai.rt::Dequantize, still generates', async (t) => {
    const out = join(dir, 'portable-int4.onnx');
    const run = quantize('--model', FORTUNES, '--out', out, '--format', 'int4');
    assert.equal(run.status, 0, run.stderr);
    assert.match(run.stderr, /29 MatMul nodes -> Dequantize\(encoded weight\) \+ MatMul/);
    const model = fromBinary(ModelProtoSchema, readFileSync(out));
    assert.equal(model.graph.encodedInitializer.length, 29);
    assert.equal(model.graph.node.filter((n) => n.opType === 'Dequantize' && n.domain === 'ai.rt').length, 29);
    assert.ok(model.opsetImport.some((o) => o.domain === 'ai.rt'));
    assert.ok(!model.graph.initializer.some((i) => i.name.startsWith('onnx::MatMul_')));
    const ratio = statSync(out).size / statSync(FORTUNES).size;
    const tokens = await greedy(out);
    assert.equal(tokens.length, STEPS);
    t.diagnostic(`portable int4: size ratio ${ratio.toFixed(3)}; tokens ${text(tokens)}; agreement with fp32 ${agreement(tokens, reference)}/${STEPS}`);
  });

  test('usage errors', () => {
    const missing = quantize('--model', FORTUNES);
    assert.equal(missing.status, 2);
    assert.match(missing.stderr, /quantize needs --model and --out/);
    const format = quantize('--model', FORTUNES, '--out', join(dir, 'x.onnx'), '--format', 'INT4');
    assert.equal(format.status, 1);
    assert.match(format.stderr, /Unknown quantization format: 'INT4' \[OL_INVALID_ARGUMENT\]/);
    const block = quantize('--model', FORTUNES, '--out', join(dir, 'x.onnx'), '--block-size', '20');
    assert.equal(block.status, 1);
    assert.match(block.stderr, /block_size must be a power of two .*\(got 20\) \[OL_INVALID_ARGUMENT\]/);
  });
});
