#!/usr/bin/env node
// MatMulNBits GEMV microbenchmark (accuracy_level 4, block 32, default zero
// points): the decode step's projections of a Llama shape as one-node-deep
// chains run through the JS package, one row of A, one thread. Several
// builds (dist folders) load side by side in one process and their runs
// interleave, so that a shared, noisy machine affects them alike.
//
//   node bench/qgemv_kernel.mjs [--dist dist,/tmp/other-dist] [--shape 58M]
//                               [--bits 4,8] [--reps 200] [--rows 1]
//
// Cases (58M: width 512, ffn 1376, vocab 32000): 'attn' a chain of 16
// width x width nodes, 'mlp' 8 pairs width -> ffn -> width, 'head' one
// width -> vocab node (these fit in a large last-level cache), 'decode' the
// projections of one token (4 width x width per layer, 1.5 pairs width ->
// ffn -> width per layer, the head). Output: JSON, per case, bits and dist the min and
// median wall milliseconds per run, the mean CPU milliseconds per run
// (process.cpuUsage, user + system) and, for every dist after the first,
// the median over repetitions of its run's wall time over the first dist's
// run just before it (vsFirst: robust to load that changes slowly). Every
// dist must compute the same bits. Run it under Node 22 for the
// relaxed-SIMD module.
import { create, toBinary } from '@bufbuild/protobuf';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { AttributeProto_AttributeType as A, ModelProtoSchema, TensorProto_DataType as DT } from 'onnx-light/proto';

import { rng, SHAPES } from './lib/llama_model.mjs';

const { values: args } = parseArgs({
  options: {
    dist: { type: 'string', default: 'dist' }, shape: { type: 'string', default: '58M' }, bits: { type: 'string', default: '4,8' },
    reps: { type: 'string', default: '200' }, rows: { type: 'string', default: '1' },
  },
});
const REPS = Number(args.reps), ROWS = Number(args.rows), BLOCK = 32;
const shape = SHAPES[args.shape];
if (!shape) throw new Error(`unknown shape '${args.shape}' (${Object.keys(SHAPES).join(', ')})`);

const dim = (d) => ({ value: { case: 'dimValue', value: BigInt(d) } });
const info = (name, dims) => ({ name, type: { value: { case: 'tensorType', value: { elemType: DT.FLOAT, shape: { dim: dims.map(dim) } } } } });
const int = (name, v) => ({ name, type: A.INT, i: BigInt(v) });

/** A chain of MatMulNBits nodes through the widths dims[0] -> dims[1] -> ... */
function chain(dims, bits, seed) {
  const rand = rng(seed), nodes = [], inits = [];
  let x = 'x';
  for (let l = 0; l + 1 < dims.length; l++) {
    const K = dims[l], N = dims[l + 1], kb = Math.ceil(K / BLOCK);
    const q = new Uint8Array(N * kb * (BLOCK * bits / 8));
    for (let i = 0; i < q.length; i++) q[i] = Math.floor(rand() * 256);
    const sc = new Float32Array(N * kb);
    for (let i = 0; i < sc.length; i++) sc[i] = (0.75 + 0.5 * rand()) / Math.sqrt(K) / (1 << (bits - 1));
    inits.push({ name: `w${l}`, dims: [BigInt(N), BigInt(kb), BigInt(BLOCK * bits / 8)], dataType: DT.UINT8, rawData: q });
    inits.push({ name: `s${l}`, dims: [BigInt(N * kb)], dataType: DT.FLOAT, rawData: new Uint8Array(sc.buffer) });
    const y = l + 2 === dims.length ? 'y' : `h${l}`;
    nodes.push({
      opType: 'MatMulNBits', domain: 'com.microsoft', name: `n${l}`, input: [x, `w${l}`, `s${l}`], output: [y],
      attribute: [int('K', K), int('N', N), int('bits', bits), int('block_size', BLOCK), int('accuracy_level', 4)],
    });
    x = y;
  }
  return toBinary(ModelProtoSchema, create(ModelProtoSchema, {
    irVersion: 8n, opsetImport: [{ domain: '', version: 17n }, { domain: 'com.microsoft', version: 1n }],
    graph: { name: 'qgemv', node: nodes, initializer: inits, input: [info('x', [ROWS, dims[0]])], output: [info('y', [ROWS, dims.at(-1)])] },
  }));
}

const W = shape.width, F = shape.ffn, V = shape.vocab;
const CASES = {
  attn: Array.from({ length: 17 }, () => W),
  mlp: [W, ...Array.from({ length: 8 }, () => [F, W]).flat()],
  head: [W, V],
  // a decode step's projections, about as many bytes as the model's (4
  // per layer W x W, 3 per layer W <-> F, the head): beyond the last-level
  // cache, so each run streams its weights from memory as a token does
  decode: [W, ...Array.from({ length: 4 * shape.layers }, () => W), ...Array.from({ length: Math.round(1.5 * shape.layers) }, () => [F, W]).flat(), V],
};

const dists = args.dist.split(',');
const runtimes = [];
for (const d of dists) {
  const ol = await import(pathToFileURL(resolve(d, 'node.js')).href);
  if (ol.env) ol.env.wasm.numThreads = 1;
  runtimes.push(ol);
}

const quantile = (xs, q) => [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor(q * xs.length))];
const results = [];
for (const bits of args.bits.split(',').map(Number)) {
  for (const [name, dims] of Object.entries(CASES)) {
    const bytes = chain(dims, bits, 1234);
    const input = new Float32Array(ROWS * dims[0]).map((_, i) => Math.sin(i * 0.37));
    const sessions = [];
    for (const ol of runtimes) sessions.push(await ol.InferenceSession.create(bytes, { intraOpNumThreads: 1 }));
    const feeds = runtimes.map((ol) => ({ x: new ol.Tensor('float32', input, [ROWS, dims[0]]) }));
    const wall = dists.map(() => []), cpu = dists.map(() => 0);
    let ref = null;
    for (let r = -10; r < REPS; r++) { // 10 warm-up runs
      for (let k = 0; k < sessions.length; k++) {
        const c0 = process.cpuUsage(), t0 = performance.now();
        const out = await sessions[k].run(feeds[k]);
        const t1 = performance.now(), c1 = process.cpuUsage(c0);
        if (r < 0) {
          // every build must give the same bits
          const y = out.y.data;
          const same = !ref || (ref.length === y.length && ref.every((v, i) => Object.is(v, y[i])));
          if (!same) throw new Error(`${dists[k]}: ${name} bits ${bits} differs from ${dists[0]}`);
          ref ??= Float32Array.from(y);
          continue;
        }
        wall[k].push(t1 - t0);
        cpu[k] += (c1.user + c1.system) / 1000;
      }
    }
    for (let k = 0; k < sessions.length; k++) {
      const vsFirst = k ? { vsFirst: +quantile(wall[k].map((t, r) => t / wall[0][r]), 0.5).toFixed(4) } : {};
      const ms = (v) => +v.toFixed(4);
      results.push({
        case: name, bits, dist: dists[k], minMs: ms(Math.min(...wall[k])), medianMs: ms(quantile(wall[k], 0.5)), cpuMs: ms(cpu[k] / REPS), ...vsFirst,
      });
      await sessions[k].release?.();
    }
  }
}
console.log(JSON.stringify({ shape: args.shape, rows: ROWS, reps: REPS, node: process.version, results }, null, 1));
