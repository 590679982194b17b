// Random cases for the com.microsoft contrib operators and the opset-23
// neural operators (RMSNormalization, RotaryEmbedding); see random_graphs.mjs.
import { F, floatTensor, intTensor, nibbleTensor, oneNodeModel, randFloat } from './gen_util.mjs';

const MS = 'com.microsoft';
const FLOATS = ['float32', 'float16'];

function mk(c, spec) {
  const m = oneNodeModel(spec);
  const { compare, ...rest } = c;
  return { ...rest, domain: spec.domain ?? '', op: spec.op, ...m, outputs: compare ?? m.outputs };
}
const I = (name, t, init = false) => (t ? { name, ...t, init } : null);
const out = (name, type) => ({ name, type });

/** cos/sin caches of shape dims (last = rot/2) from random angles. */
function caches(r, type, rows, half) {
  const ang = Array.from({ length: rows * half }, () => r.uniform(-3.2, 3.2));
  return [floatTensor(type, [rows, half], (i) => Math.cos(ang[i])), floatTensor(type, [rows, half], (i) => Math.sin(ang[i]))];
}

function rmsNorm23(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (let k = 0; k < 3; k++) {
      const rank = r.int(2, 4);
      const dims = Array.from({ length: rank }, () => r.int(1, 6));
      dims[rank - 1] = r.int(2, 24);
      const axis = r.pick([-1, rank - 1, -2].filter((a) => a >= -rank));
      const an = axis < 0 ? axis + rank : axis;
      list.push(
        mk({ name: `RMSNormalization ${dtype} [${dims}] axis ${axis}`, dtype }, {
          op: 'RMSNormalization',
          opset: 23,
          attrs: { axis, epsilon: F(r.pick([1e-5, 1e-6, 1e-3])) },
          inputs: [I('x', randFloat(r, dtype, dims, -2, 2)), I('scale', randFloat(r, dtype, dims.slice(an)))],
          outputs: [out('y', dtype)],
        }),
      );
    }
  return list;
}

function rotary23(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (let k = 0; k < 4; k++) {
      const B = r.int(1, 2), N = r.int(1, 3), S = r.int(1, 5), H = r.pick([4, 8, 16]);
      const rot = r.bool() ? H : H / 2;
      const interleaved = r.int(0, 1);
      const withPos = k % 2 === 0;
      const four = r.bool();
      const x = randFloat(r, dtype, four ? [B, N, S, H] : [B, S, N * H], -2, 2);
      const maxPos = S + 6;
      let cos, sin, pos = null;
      if (withPos) {
        [cos, sin] = caches(r, dtype, maxPos, rot / 2);
        pos = intTensor('int64', [B, S], () => r.int(0, maxPos - 1));
      } else {
        [cos, sin] = caches(r, dtype, B * S, rot / 2);
        cos.dims = [B, S, rot / 2];
        sin.dims = [B, S, rot / 2];
      }
      list.push(
        mk({ name: `RotaryEmbedding-23 ${dtype} ${four ? 'BNSH' : 'BSD'} [${x.dims}] rot ${rot} il ${interleaved} pos ${withPos}`, dtype }, {
          op: 'RotaryEmbedding',
          opset: 23,
          attrs: { interleaved, num_heads: four ? undefined : N, rotary_embedding_dim: rot === H ? undefined : rot },
          inputs: [I('x', x), I('cos', cos), I('sin', sin), I('pos', pos)],
          outputs: [out('y', dtype)],
        }),
      );
    }
  return list;
}

function simplifiedLN(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (const domain of ['']) // onnxruntime registers it in the default domain only
      for (let k = 0; k < 2; k++) {
        const dims = [r.int(1, 3), r.int(1, 4), r.int(4, 32)];
        list.push(
          mk({ name: `SimplifiedLayerNormalization(${domain || 'ai.onnx'}) ${dtype} [${dims}]`, dtype }, {
            op: 'SimplifiedLayerNormalization',
            domain,
            attrs: { axis: -1, epsilon: F(r.pick([1e-5, 1e-6])) },
            inputs: [I('x', randFloat(r, dtype, dims, -2, 2)), I('scale', randFloat(r, dtype, [dims[2]]))],
            outputs: k === 0 ? [out('y', dtype), out('inv', 'float32')] : [out('y', dtype)],
          }),
        );
      }
  return list;
}

function skipLN(r, simplified) {
  const op = simplified ? 'SkipSimplifiedLayerNormalization' : 'SkipLayerNormalization';
  const list = [];
  for (const dtype of FLOATS)
    for (let k = 0; k < 4; k++) {
      const B = r.int(1, 3), S = r.int(1, 4), H = r.int(4, 40);
      const three = k !== 3;
      const dims = three ? [B, S, H] : [B * S, H];
      const skipDims = three && k === 2 ? [S, H] : dims;
      const withBeta = !simplified && r.bool();
      const withBias = r.bool();
      const inputs = [I('x', randFloat(r, dtype, dims, -2, 2)), I('skip', randFloat(r, dtype, skipDims, -2, 2)), I('gamma', randFloat(r, dtype, [H]))];
      if (!simplified) inputs.push(I('beta', withBeta ? randFloat(r, dtype, [H]) : null));
      inputs.push(I('bias', withBias ? randFloat(r, dtype, [H]) : null));
      list.push(
        mk({ name: `${op} ${dtype} [${dims}] skip [${skipDims}] beta ${withBeta} bias ${withBias}`, dtype }, {
          op,
          domain: MS,
          attrs: { epsilon: F(r.pick([1e-5, 1e-12])) },
          inputs,
          outputs: k === 0 ? [out('y', dtype), out('mean', 'float32'), out('inv', 'float32'), out('sum', dtype)] : [out('y', dtype), null, null, out('sum', dtype)],
        }),
      );
    }
  return list;
}

function gelus(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (const op of ['FastGelu', 'Gelu', 'BiasGelu', 'QuickGelu', 'BiasAdd']) {
      const dims = [r.int(1, 3), r.int(1, 4), r.int(2, 16)];
      const C = dims[2];
      const inputs = [I('x', randFloat(r, dtype, dims, -4, 4))];
      const attrs = {};
      if (op === 'FastGelu' && r.bool()) inputs.push(I('bias', randFloat(r, dtype, [C])));
      if (op === 'BiasGelu' || op === 'BiasAdd') inputs.push(I('bias', randFloat(r, dtype, [C])));
      if (op === 'BiasAdd') inputs.push(I('skip', randFloat(r, dtype, dims)));
      if (op === 'QuickGelu') attrs.alpha = F(r.pick([1.702, 1.0, 0.5]));
      list.push(mk({ name: `${op} ${dtype} [${dims}] inputs ${inputs.length}`, dtype }, { op, domain: MS, attrs, inputs, outputs: [out('y', dtype)] }));
    }
  // onnxruntime has BiasAdd and BiasSplitGelu on CUDA only: reported as skipped
  for (const dtype of FLOATS) {
    const dims = [r.int(1, 2), r.int(1, 4), 2 * r.int(1, 8)];
    list.push(
      mk({ name: `BiasSplitGelu ${dtype} [${dims}]`, dtype }, {
        op: 'BiasSplitGelu',
        domain: MS,
        inputs: [I('x', randFloat(r, dtype, dims, -3, 3)), I('bias', randFloat(r, dtype, [dims[2]]))],
        outputs: [out('y', dtype)],
      }),
    );
  }
  return list;
}

function fusedMatMul(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (let k = 0; k < 4; k++) {
      const M = r.int(1, 7), K = r.int(1, 19), N = r.int(1, 9);
      const transA = r.int(0, 1), transB = r.int(0, 1);
      const batchA = k >= 2 ? [r.int(1, 3)] : [];
      const batchB = k === 3 ? [1] : k === 2 ? batchA : [];
      const a = randFloat(r, dtype, [...batchA, ...(transA ? [K, M] : [M, K])]);
      const b = randFloat(r, dtype, [...batchB, ...(transB ? [N, K] : [K, N])]);
      list.push(
        mk({ name: `FusedMatMul ${dtype} A [${a.dims}] B [${b.dims}] tA ${transA} tB ${transB}`, dtype }, {
          op: 'FusedMatMul',
          domain: MS,
          attrs: { transA, transB, alpha: F(r.pick([1, 0.5, 0.125])) },
          inputs: [I('a', a), I('b', b)],
          outputs: [out('y', dtype)],
        }),
      );
    }
  for (const dtype of FLOATS) {
    const K = r.int(1, 9), N = r.int(1, 5), batch = r.int(1, 3);
    list.push(
      mk({ name: `FusedMatMul ${dtype} A [${K}] B [${batch},${N},${K}] tB 1`, dtype }, {
        op: 'FusedMatMul',
        domain: MS,
        attrs: { transB: 1, alpha: F(2) },
        inputs: [I('a', randFloat(r, dtype, [K])), I('b', randFloat(r, dtype, [batch, N, K]))],
        outputs: [out('y', dtype)],
      }),
    );
  }
  return list;
}

function rotaryMS(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (let k = 0; k < 4; k++) {
      const B = r.int(1, 2), N = r.int(1, 3), S = r.int(1, 5), H = r.pick([8, 16]);
      const partial = k === 3;
      const rot = partial ? H / 2 : H;
      const four = k === 1;
      const x = randFloat(r, dtype, four ? [B, N, S, H] : [B, S, N * H], -2, 2);
      const maxPos = S + 8;
      const [cos, sin] = caches(r, dtype, maxPos, rot / 2);
      const offset = k === 2;
      const pos = offset ? intTensor('int64', [1], () => r.int(0, 8)) : intTensor('int64', [B, S], () => r.int(0, maxPos - 1));
      const interleaved = r.int(0, 1);
      list.push(
        mk({ name: `RotaryEmbedding(ms) ${dtype} [${x.dims}] rot ${rot} il ${interleaved} offset ${offset}`, dtype }, {
          op: 'RotaryEmbedding',
          domain: MS,
          attrs: { interleaved, num_heads: partial ? N : undefined, rotary_embedding_dim: partial ? rot : undefined },
          inputs: [I('x', x), I('pos', pos), I('cos', cos), I('sin', sin)],
          outputs: [out('y', dtype)],
        }),
      );
    }
  return list;
}

/**
 * accuracyLevel 4 lets both runtimes quantize each block of A to int8 (our
 * simd/qgemv_i8.c; float32 only). Float zero points keep the float kernel in
 * both. onnxruntime 1.30 computes 8-bit blocks of 256 in float while we use
 * int8 there too, so those are not generated.
 */
function matMulNBits(r, accuracyLevel = 0) {
  const list = [];
  const int8 = accuracyLevel === 4;
  const configs = [];
  for (const bits of [4, 8])
    for (const zp of ['none', 'uint8', 'float']) if (!(bits === 8 && zp === 'float')) configs.push({ bits, zp }); // onnxruntime: float zero points need bits 2/4
  for (const dtype of int8 ? ['float32'] : FLOATS)
    for (const { bits, zp } of configs.filter((c) => !int8 || c.zp !== 'float')) {
      const block = r.pick(int8 && bits === 8 ? [16, 32, 64, 128] : [16, 32, 64, 128, 256]);
      const big = r.next() < 0.3;
      const K = big ? r.pick([512, 768, 1024]) : r.pick([block, 2 * block, block + 16, 48, 100].filter((v) => v % 2 === 0 && v >= 16));
      const N = big ? r.int(32, 96) : r.int(1, 24);
      const kb = Math.ceil(K / block);
      const blob = (block * bits) / 8;
      const withBias = r.bool();
      const M = r.int(1, 5);
      const aDims = r.bool() ? [M, K] : [r.int(1, 2), M, K];
      const bq = intTensor('uint8', [N, kb, blob], () => r.int(0, 255));
      const scales = floatTensor(dtype, [N * kb], () => r.uniform(0.005, 0.05));
      let zpt = null;
      if (zp === 'uint8') {
        const zrow = Math.ceil((kb * bits) / 8);
        zpt = intTensor('uint8', [N * zrow], () => r.int(0, 255));
      } else if (zp === 'float') {
        zpt = floatTensor(dtype, [N * kb], () => r.int(0, (1 << bits) - 1));
      }
      list.push(
        mk({ name: `MatMulNBits ${dtype} bits ${bits} zp ${zp} block ${block}${int8 ? ' accuracy_level 4' : ''} A [${aDims}] N ${N} bias ${withBias}`, dtype, tolerance: dtype === 'float32' ? { atol: 2e-4, rtol: 2e-4 } : undefined }, {
          op: 'MatMulNBits',
          domain: MS,
          attrs: { K, N, bits, block_size: block, ...(int8 ? { accuracy_level: 4 } : {}) },
          inputs: [
            I('a', randFloat(r, dtype, aDims)),
            I('b', bq, true),
            I('scales', scales, true),
            I('zp', zpt, true),
            null,
            I('bias', withBias ? randFloat(r, dtype, [N]) : null, true),
          ],
          outputs: [out('y', dtype)],
        }),
      );
    }
  return list;
}

function gatherBlockQuantized(r) {
  const list = [];
  const kinds = ['int4', 'uint4', 'uint4-zp', 'int4-zp', 'uint8-4', 'uint8-4-zp', 'uint8-8', 'uint8-8-zp'];
  for (const dtype of FLOATS)
    for (const kind of kinds) {
      const block = r.pick([16, 32, 64]);
      const rows = r.int(2, 9);
      const cols = r.pick([block, 2 * block, 32, 64].filter((c) => c % 2 === 0));
      const withZp = kind.endsWith('zp');
      const quantAxis = kind.startsWith('uint8') ? 1 : r.pick([0, 1]);
      const sdims = quantAxis === 1 ? [rows, Math.ceil(cols / block)] : [Math.ceil(rows / block), cols];
      const scales = floatTensor(dtype, sdims, () => r.uniform(0.01, 0.1));
      let data, zpt = null;
      const gatherAxis = kind.startsWith('uint8') ? 0 : r.pick([0, 1]);
      const attrs = { gather_axis: gatherAxis, quantize_axis: quantAxis, block_size: block };
      if (kind.startsWith('int4') || kind.startsWith('uint4')) {
        const type = kind.startsWith('int4') ? 'int4' : 'uint4';
        data = nibbleTensor(type, [rows, cols], () => r.int(0, 15));
        if (withZp) zpt = nibbleTensor(type, sdims, () => r.int(0, 15));
      } else {
        const bits = kind.startsWith('uint8-4') ? 4 : 8;
        attrs.bits = bits;
        data = intTensor('uint8', [rows, bits === 4 ? cols / 2 : cols], () => r.int(0, 255));
        if (withZp) {
          const zc = bits === 4 ? Math.ceil(sdims[1] / 2) : sdims[1];
          zpt = intTensor('uint8', [sdims[0], zc], () => r.int(0, 255));
        }
      }
      const nIdx = r.int(1, 4);
      const G = gatherAxis === 0 ? rows : cols;
      const idx = intTensor(r.pick(['int64', 'int32']), r.bool() ? [nIdx] : [1, nIdx], () => r.int(-G, G - 1));
      list.push(
        mk({ name: `GatherBlockQuantized ${dtype} ${kind} [${rows},${cols}] gaxis ${gatherAxis} qaxis ${quantAxis} block ${block} idx ${idx.type}`, dtype }, {
          op: 'GatherBlockQuantized',
          domain: MS,
          attrs,
          inputs: [I('data', data, true), I('idx', idx), I('scales', scales, true), I('zp', zpt, true)],
          outputs: [out('y', dtype)],
        }),
      );
    }
  return list;
}

function mha(r) {
  const list = [];
  for (const dtype of FLOATS)
    for (let k = 0; k < 6; k++) {
      const B = r.int(1, 2), N = r.int(1, 3), H = r.pick([4, 8]), S = r.int(1, 4);
      const D = N * H;
      const withPast = k >= 3;
      const P = withPast ? r.int(1, 4) : 0;
      const unidirectional = k === 1 || k === 4 ? 1 : 0;
      // causal masks only self-attention (L == S); onnxruntime's cross-attention causal mask is irregular
      const L = withPast || unidirectional ? S : r.int(1, 5);
      const T = P + L;
      const withBias = k === 2 || k === 5;
      const withMask = k === 2 || k === 4;
      const lengthsMask = k === 2 && r.bool();
      const withAB = k === 5 || k === 0;
      const inputs = [
        I('q', randFloat(r, dtype, [B, S, D])),
        I('k', randFloat(r, dtype, [B, L, D])),
        I('v', randFloat(r, dtype, [B, L, D])),
        I('bias', withBias ? randFloat(r, dtype, [3 * D], -0.5, 0.5) : null),
        I('mask', withMask ? (lengthsMask ? intTensor('int32', [B], () => r.int(1, T)) : intTensor('int32', [B, T], (i) => (i % T === 0 ? 1 : r.int(0, 1)))) : null),
        I('ab', withAB ? randFloat(r, dtype, [r.pick([1, B]), r.pick([1, N]), S, T]) : null),
        I('pk', withPast ? randFloat(r, dtype, [B, N, P, H]) : null),
        I('pv', withPast ? randFloat(r, dtype, [B, N, P, H]) : null),
      ];
      const outputs = [out('y', dtype)];
      if (withPast) outputs.push(out('present_k', dtype), out('present_v', dtype));
      list.push(
        mk({ name: `MultiHeadAttention ${dtype} B${B} S${S} L${L} P${P} N${N} H${H} uni ${unidirectional} bias ${withBias} mask ${withMask}${lengthsMask ? ' (lengths)' : ''} ab ${withAB}`, dtype }, {
          op: 'MultiHeadAttention',
          domain: MS,
          attrs: { num_heads: N, unidirectional, scale: k === 3 ? F(0.3) : undefined },
          inputs,
          outputs,
        }),
      );
    }
  // cross attention with key/value already split per head (B, N, L, H)
  for (const dtype of FLOATS) {
    const B = r.int(1, 2), N = r.int(1, 3), H = r.pick([4, 8]), S = r.int(1, 4), L = r.int(1, 5);
    list.push(
      mk({ name: `MultiHeadAttention ${dtype} BNLH key/value B${B} S${S} L${L} N${N} H${H}`, dtype }, {
        op: 'MultiHeadAttention',
        domain: MS,
        attrs: { num_heads: N },
        inputs: [I('q', randFloat(r, dtype, [B, S, N * H])), I('k', randFloat(r, dtype, [B, N, L, H])), I('v', randFloat(r, dtype, [B, N, L, H]))],
        outputs: [out('y', dtype)],
      }),
    );
  }
  return list;
}

function gqa(r) {
  const list = [];
  // variants: prompt/decode, rotary (with or without position_ids), packed QKV,
  // local window, attention_bias, softcap, padded batch in a larger past buffer
  const variants = [
    {}, { decode: 1 }, { packed: 1 }, { decode: 1, window: 1 }, { rotary: 1 }, { decode: 1, rotary: 1, packed: 1 },
    { window: 1, rotary: 1 }, { decode: 1, rotary: 1, posIds: 1 }, { bias: 1 }, { decode: 1, bias: 1, softcap: 1 },
    { softcap: 1 }, { decode: 1, buffer: 1 }, { decode: 1, buffer: 1, rotary: 1, batch2: 1 },
    { padded: 1, batch2: 1 }, { padded: 1, batch2: 1, rotary: 1 },
    { smooth: 1 }, { decode: 1, sink: 1 },
  ];
  for (const dtype of FLOATS)
    for (const v of variants) {
      const B = v.batch2 ? 2 : r.int(1, 2), KN = r.int(1, 2), N = KN * r.int(1, 3), H = r.pick([16, 32]); // onnxruntime: head size % 16 == 0
      const decode = !!v.decode;
      const S = decode ? (B === 1 ? r.int(1, 3) : 1) : v.padded ? r.int(2, 5) : r.int(1, 5); // onnxruntime: S > 1 with past needs B == 1
      // right-padded prompt: batch b holds len[b] <= S tokens (seqlens_k = len - 1)
      const len = Array.from({ length: B }, (_, b) => (v.padded && b > 0 ? r.int(1, S) : S));
      // valid past length per batch, past buffer length P
      const valid = Array.from({ length: B }, () => (decode ? r.int(1, 6) : 0));
      if (decode && !v.buffer) valid.fill(valid[0]);
      const P = decode ? Math.max(...valid) + (v.buffer ? r.int(1, 3) : 0) : 0;
      const total = Math.max(...valid) + S;
      const inputs = [];
      if (v.packed) inputs.push(I('q', randFloat(r, dtype, [B, S, (N + 2 * KN) * H])), null, null);
      else inputs.push(I('q', randFloat(r, dtype, [B, S, N * H])), I('k', randFloat(r, dtype, [B, S, KN * H])), I('v', randFloat(r, dtype, [B, S, KN * H])));
      inputs.push(I('pk', decode ? randFloat(r, dtype, [B, KN, P, H]) : null), I('pv', decode ? randFloat(r, dtype, [B, KN, P, H]) : null));
      inputs.push(I('seqlens', intTensor('int32', [B], (b) => valid[b] + len[b] - 1)), I('total', intTensor('int32', [], () => total)));
      const maxPos = total + 4;
      if (v.rotary) {
        const [cos, sin] = caches(r, dtype, maxPos, H / 2);
        inputs.push(I('cos', cos), I('sin', sin));
      } else inputs.push(null, null);
      inputs.push(v.posIds ? I('pos', intTensor('int64', [B, S], (i) => valid[Math.floor(i / S)] + (i % S))) : null);
      inputs.push(v.bias ? I('ab', randFloat(r, dtype, [r.pick([1, B]), r.pick([1, N]), S, total])) : null);
      inputs.push(v.sink ? I('sink', randFloat(r, dtype, [N], -1, 2)) : null);
      const outputs = [out('y', dtype), out('present_k', dtype), out('present_v', dtype)];
      const window = v.window ? r.int(1, 3) : undefined;
      list.push(
        // present rows past each batch's length are unspecified in buffer mode: compare y only
        mk({ name: `GroupQueryAttention ${dtype} B${B} S${S} past [${valid}] buffer ${P} N${N} KN${KN} H${H} ${JSON.stringify(v)} window ${window}`, dtype, compare: v.buffer ? ['y'] : undefined }, {
          op: 'GroupQueryAttention',
          domain: MS,
          attrs: {
            num_heads: N,
            kv_num_heads: KN,
            do_rotary: v.rotary ? 1 : undefined,
            rotary_interleaved: v.rotary && r.bool() ? 1 : undefined,
            local_window_size: window,
            softcap: v.softcap ? F(r.pick([2.0, 5.0])) : undefined,
            scale: v.bias ? F(0.2) : undefined,
            smooth_softmax: v.smooth ? 1 : undefined,
          },
          inputs,
          outputs,
        }),
      );
    }
  return list;
}

export function cases(r) {
  return [
    ...rmsNorm23(r),
    ...rotary23(r),
    ...simplifiedLN(r),
    ...skipLN(r, false),
    ...skipLN(r, true),
    ...gelus(r),
    ...fusedMatMul(r),
    ...rotaryMS(r),
    ...matMulNBits(r),
    ...gatherBlockQuantized(r),
    ...mha(r),
    ...gqa(r),
  ];
}

/** MatMulNBits with accuracy_level 4, from its own stream (the other cases keep theirs). */
export function int8Cases(r) {
  return [...matMulNBits(r, 4), ...matMulNBits(r, 4)];
}
