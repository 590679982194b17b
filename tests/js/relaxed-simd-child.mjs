// Child of relaxed-simd.test.mjs, run under Node 20 or Node 22:
//   node relaxed-simd-child.mjs RELAXED THREADS
// loads the package with env.wasm.relaxedSimd = RELAXED ('true'/'false') and
// env.wasm.numThreads = THREADS, then prints one JSON line: the module it got
// (simdLevel, numThreads) and sha256 digests of the output bits of
// com.microsoft MatMulNBits cases with accuracy_level 4 (int8 activations:
// 4 bits, where the relaxed module uses 8-bit dot products, and 8 bits) and
// of 16 greedy decode steps of tiny Llama-shaped int4 decoders (MatMulNBits
// block 32, accuracy_level 4: plain attention, and the fused GQA form).
import { createHash } from 'node:crypto';

import { create, toBinary } from '@bufbuild/protobuf';
import { InferenceSession, Tensor, env, init, numThreads, simdLevel } from 'onnx-light';
import { ModelProtoSchema, TensorProto_DataType as DT } from 'onnx-light/proto';

import { SHAPES, buildLlama } from '../../bench/lib/llama_model.mjs';

env.wasm.relaxedSimd = process.argv[2] === 'true';
env.wasm.numThreads = Number(process.argv[3]);
await init();

let seed = 20261202;
const random = () => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
  return seed / 2 ** 32;
};

const info = (name, dims) => ({
  name,
  type: { value: { case: 'tensorType', value: { elemType: DT.FLOAT, shape: { dim: dims.map((d) => ({ value: typeof d === 'string' ? { case: 'dimParam', value: d } : { case: 'dimValue', value: BigInt(d) } })) } } } },
});
const raw = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);

/** Y = MatMulNBits(X, B, scales[, zero_points][, bias]) with accuracy_level 4, X float [m, K]. */
function nbitsModel({ bits, K, N, block, zeroPoints, bias }) {
  const kb = Math.ceil(K / block);
  const blob = (block * bits) / 8;
  const B = Uint8Array.from({ length: N * kb * blob }, () => Math.floor(random() * 256));
  const scales = Float32Array.from({ length: N * kb }, () => (0.5 + random()) / 64);
  const initializer = [
    { name: 'B', dims: [BigInt(N), BigInt(kb), BigInt(blob)], dataType: DT.UINT8, rawData: B },
    { name: 'scales', dims: [BigInt(N * kb)], dataType: DT.FLOAT, rawData: raw(scales) },
  ];
  const input = ['X', 'B', 'scales'];
  if (zeroPoints) {
    const zrow = Math.ceil((kb * bits) / 8);
    const zp = Uint8Array.from({ length: N * zrow }, () => Math.floor(random() * 256));
    initializer.push({ name: 'zp', dims: [BigInt(N), BigInt(zrow)], dataType: DT.UINT8, rawData: zp });
    input.push('zp');
  }
  if (bias) {
    while (input.length < 5) input.push('');
    initializer.push({ name: 'bias', dims: [BigInt(N)], dataType: DT.FLOAT, rawData: raw(Float32Array.from({ length: N }, () => random() - 0.5)) });
    input.push('bias');
  }
  const attr = (name, i) => ({ name, type: 2, i: BigInt(i) }); // AttributeProto.INT
  const model = create(ModelProtoSchema, {
    irVersion: 8n,
    opsetImport: [{ domain: '', version: 17n }, { domain: 'com.microsoft', version: 1n }],
    graph: {
      name: 'nbits',
      node: [{ opType: 'MatMulNBits', domain: 'com.microsoft', name: 'mm', input, output: ['Y'],
        attribute: [attr('K', K), attr('N', N), attr('bits', bits), attr('block_size', block), attr('accuracy_level', 4)] }],
      input: [info('X', ['m', K])],
      output: [info('Y', ['m', N])],
      initializer,
    },
  });
  return toBinary(ModelProtoSchema, model);
}

const cases = {};
const shapes = [
  { K: 64, N: 24, block: 32 },
  { K: 172, N: 37, block: 32 }, // K past the last whole block, N % 8 = 5 (the dense tail)
  { K: 256, N: 64, block: 16 },
  { K: 300, N: 20, block: 64 },
  { K: 512, N: 40, block: 128 },
  { K: 160, N: 13, block: 256 },
];
for (const bits of [4, 8]) {
  for (const shape of shapes) {
    for (const [zeroPoints, bias] of [[false, false], [true, false], [false, true], [true, true]]) {
      const spec = { bits, ...shape, zeroPoints, bias };
      const session = await InferenceSession.create(nbitsModel(spec));
      const hash = createHash('sha256');
      for (const m of [1, 2, 3, 5, 9]) {
        // activations with a wide range, exact zeros and a few outliers
        const x = Float32Array.from({ length: m * shape.K }, (_, i) => (i % 17 === 0 ? 0 : (random() - 0.5) * (i % 29 === 0 ? 40 : 2)));
        const { Y } = await session.run({ X: new Tensor('float32', x, [m, shape.K]) });
        hash.update(raw(Y.data.slice()));
      }
      cases[`bits ${bits} K ${shape.K} N ${shape.N} block ${shape.block}${zeroPoints ? ' zero points' : ''}${bias ? ' bias' : ''}`] = hash.digest('hex');
      await session.release();
    }
  }
}

/** 16 greedy steps (a 4-token prompt, then one token per run, cache fed back): digest of every logit. */
async function decode(form) {
  const session = await InferenceSession.create(buildLlama(SHAPES.tiny, 7, form));
  const pastNames = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const shape = session.inputMetadata[session.inputNames.indexOf(pastNames[0])].shape;
  let past = Object.fromEntries(pastNames.map((n) => [n, new Tensor('float32', new Float32Array(0), [1, shape[1], 0, shape[3]])]));
  const hash = createHash('sha256');
  let ids = [...Buffer.from('The ')].map(BigInt);
  let length = 0;
  const tokens = [];
  for (let step = 0; step < 16; step++) {
    const n = ids.length;
    const out = await session.run({
      ...past,
      input_ids: new Tensor('int64', BigInt64Array.from(ids), [1, n]),
      attention_mask: new Tensor('int64', new BigInt64Array(length + n).fill(1n), [1, length + n]),
      position_ids: new Tensor('int64', BigInt64Array.from(ids, (_, i) => BigInt(length + i)), [1, n]),
    });
    const logits = out.logits.data;
    hash.update(raw(logits.slice()));
    const last = Array.from(logits.subarray(logits.length - SHAPES.tiny.vocab));
    const next = last.indexOf(Math.max(...last));
    tokens.push(next);
    ids = [BigInt(next)];
    length += n;
    past = Object.fromEntries(pastNames.map((p) => [p, out[`present.${p.slice('past_key_values.'.length)}`]]));
  }
  await session.release();
  return { tokens, digest: hash.digest('hex') };
}

const decodes = { int4a4: await decode('int4a4'), fused: await decode('fused') };
console.log(JSON.stringify({ simd: simdLevel(), threads: numThreads(), cases, decodes }));
