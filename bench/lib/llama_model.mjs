// Llama-shaped decoder graphs with seeded random weights, in the plain-operator
// form torch's exporter produces: Gather embedding, decomposed RMSNorm
// (Pow/ReduceMean/Add/Sqrt/Div/Mul), Q/K/V/O MatMuls, rotary through
// Slice/Neg/Concat/Mul/Add, KV append by Concat on past_key_values.{i}.key|value
// -> present.{i}.key|value, Softmax attention with an additive causal mask
// built from attention_mask and position_ids, SwiGLU MLP, untied head.
//
// Inputs: input_ids int64 [1, S], attention_mask int64 [1, P + S],
// position_ids int64 [1, S], past_key_values.{i}.key|value float32 [1, H, P, D].
// Outputs: logits float32 [1, S, V], present.{i}.key|value [1, H, P + S, D].
import { create, toBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType as A, ModelProtoSchema, TensorProto_DataType as DT } from 'onnx-light/proto';

export const SHAPES = {
  tiny: { layers: 2, width: 64, heads: 4, headSize: 16, ffn: 172, vocab: 256, maxPos: 4096 },
  '58M': { layers: 8, width: 512, heads: 8, headSize: 64, ffn: 1376, vocab: 32000, maxPos: 4096 },
};

/** mulberry32 */
export function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function paramCount(s) {
  const layer = 4 * s.width * s.width + 3 * s.width * s.ffn + 2 * s.width;
  return 2 * s.vocab * s.width + s.layers * layer + s.width;
}

function attr(name, v) {
  if (typeof v === 'object' && v !== null && 'f' in v) return { name, type: A.FLOAT, f: v.f };
  if (Array.isArray(v)) return { name, type: A.INTS, ints: v.map(BigInt) };
  if (typeof v === 'object' && v !== null && 't' in v) return { name, type: A.TENSOR, t: v.t };
  return { name, type: A.INT, i: BigInt(v) };
}

function info(name, elemType, dims) {
  const dim = dims.map((d) => (typeof d === 'string' ? { value: { case: 'dimParam', value: d } } : { value: { case: 'dimValue', value: BigInt(d) } }));
  return { name, type: { value: { case: 'tensorType', value: { elemType, shape: { dim } } } } };
}

/** Serialized ModelProto (Uint8Array) of the decoder with the given shape.
 * form 'plain': fp32 MatMul weights; 'int4': the projections and the head are
 * com.microsoft MatMulNBits (bits 4, block 32, no zero points: default 8) with
 * seeded random nibbles and per-block scales (the rest as in 'plain');
 * 'int4a4': the same weights with accuracy_level 4 (int8 activations allowed,
 * as onnxruntime's quantizer writes for CPU targets); 'int8a4': 8-bit codes
 * (MatMulNBits bits 8, block 32, default zero point 128) with accuracy_level
 * 4; 'fused': the form
 * onnxruntime-genai exports for CPU int4: the int4a4 MatMulNBits weights,
 * SimplifiedLayerNormalization / com.microsoft SkipSimplifiedLayerNormalization
 * (residual adds inside), com.microsoft GroupQueryAttention with rotary inside
 * (cos/sin caches), KV appended by the operator; seqlens_k and
 * total_sequence_length computed from attention_mask (position_ids unused). */
export function buildLlama(s, seed = 1234, form = 'plain') {
  if (!['plain', 'int4', 'int4a4', 'int8a4', 'fused'].includes(form)) throw new Error(`unknown form '${form}' (plain, int4, int4a4, int8a4, fused)`);
  const quantized = form !== 'plain';
  const rand = rng(seed);
  const nodes = [];
  const inits = [];
  let counter = 0;
  const fresh = (base) => `${base}_${counter++}`;
  const node = (opType, input, attrs = {}, nOut = 1, outNames, domain = '') => {
    const output = outNames ?? Array.from({ length: nOut }, () => fresh(opType));
    nodes.push({ opType, domain, name: fresh(`n_${opType}`), input, output, attribute: Object.entries(attrs).map(([k, v]) => attr(k, v)) });
    return nOut === 1 ? output[0] : output;
  };
  const msNode = (opType, input, attrs, nOut, outNames) => node(opType, input, attrs, nOut, outNames, 'com.microsoft');
  const f32 = (name, dims, data) => {
    inits.push({ name, dims: dims.map(BigInt), dataType: DT.FLOAT, rawData: new Uint8Array(data.buffer, data.byteOffset, data.byteLength) });
    return name;
  };
  const i64 = (name, values) => {
    const data = BigInt64Array.from(values.map(BigInt));
    inits.push({ name, dims: [BigInt(values.length)], dataType: DT.INT64, rawData: new Uint8Array(data.buffer) });
    return name;
  };
  const i64s = (name, v) => {
    inits.push({ name, dims: [], dataType: DT.INT64, rawData: new Uint8Array(new BigInt64Array([BigInt(v)]).buffer) });
    return name;
  };
  const scalarF = (name, v) => {
    inits.push({ name, dims: [], dataType: DT.FLOAT, rawData: new Uint8Array(new Float32Array([v]).buffer) });
    return name;
  };
  const weight = (name, rows, cols) => {
    const a = 1 / Math.sqrt(rows);
    const d = new Float32Array(rows * cols);
    for (let i = 0; i < d.length; i++) d[i] = (2 * rand() - 1) * a;
    return f32(name, [rows, cols], d);
  };
  // x [.., rows] times a [rows, cols] weight: MatMul, or MatMulNBits (K = rows, N = cols)
  const BLOCK = 32;
  const BITS = form === 'int8a4' ? 8 : 4;
  const linear = (x, name, rows, cols) => {
    if (!quantized) return node('MatMul', [x, weight(name, rows, cols)]);
    const kb = Math.ceil(rows / BLOCK);
    const q = new Uint8Array(cols * kb * (BLOCK * BITS / 8));
    for (let i = 0; i < q.length; i++) q[i] = Math.floor(rand() * 256);
    inits.push({ name: `${name}.qweight`, dims: [BigInt(cols), BigInt(kb), BigInt(BLOCK * BITS / 8)], dataType: DT.UINT8, rawData: q });
    const sc = new Float32Array(cols * kb);
    const a = 1 / Math.sqrt(rows) / (1 << (BITS - 1)); // codes span +-2^(BITS-1) around the zero point
    for (let i = 0; i < sc.length; i++) sc[i] = a * (0.75 + 0.5 * rand());
    f32(`${name}.scales`, [cols * kb], sc);
    const out = fresh('MatMulNBits');
    nodes.push({
      opType: 'MatMulNBits', domain: 'com.microsoft', name: fresh('n_MatMulNBits'), input: [x, `${name}.qweight`, `${name}.scales`], output: [out],
      attribute: [attr('K', rows), attr('N', cols), attr('bits', BITS), attr('block_size', BLOCK), ...(form !== 'int4' ? [attr('accuracy_level', 4)] : [])],
    });
    return out;
  };
  const ones = (name, n) => f32(name, [n], new Float32Array(n).fill(1).map(() => 0.9 + 0.2 * rand()));

  const { layers, width: W, heads: H, headSize: D, ffn: F, vocab: V, maxPos } = s;
  // constants
  const eps = scalarF('eps', 1e-5);
  const two = scalarF('two', 2);
  const scale = scalarF('attn_scale', 1 / Math.sqrt(D));
  const zeroF = scalarF('zero_f', 0);
  const negBig = scalarF('neg_big', -3.4028234663852886e38);
  const shapeHeads = i64('shape_heads', [1, -1, H, D]);
  const shapeFlat = i64('shape_flat', [1, -1, W]);
  const axisMinus1 = i64('axis_m1', [-1]);
  const half0 = i64('half_start0', [0]);
  const halfMid = i64('half_mid', [D / 2]);
  const halfEnd = i64('half_end', [D]);
  const one64 = i64('one64', [1]);
  const zero64 = i64('zero64', [0]);
  // rotary tables [maxPos, D] (each half repeated, as Llama's cos_cached)
  const cosT = new Float32Array(maxPos * D);
  const sinT = new Float32Array(maxPos * D);
  for (let p = 0; p < maxPos; p++)
    for (let i = 0; i < D / 2; i++) {
      const theta = p / 10000 ** ((2 * i) / D);
      cosT[p * D + i] = cosT[p * D + i + D / 2] = Math.cos(theta);
      sinT[p * D + i] = sinT[p * D + i + D / 2] = Math.sin(theta);
    }
  const fused = form === 'fused';
  if (!fused) {
    f32('cos_cached', [maxPos, D], cosT);
    f32('sin_cached', [maxPos, D], sinT);
  }
  const cos = fused ? null : node('Unsqueeze', [node('Gather', ['cos_cached', 'position_ids']), one64]); // [1,1,S,D]
  const sin = fused ? null : node('Unsqueeze', [node('Gather', ['sin_cached', 'position_ids']), one64]);

  // causal + padding mask [1,1,S,T]: key j visible to query at position p iff j <= p and mask[j] != 0
  const T = node('Gather', [node('Shape', ['attention_mask']), one64]); // [1]
  const Tscalar = node('Squeeze', [T, zero64]);
  const causalMask = () => {
    const kpos = node('Range', [i64s('range_start', 0), Tscalar, i64s('range_delta', 1)]); // [T]
    const qpos = node('Unsqueeze', ['position_ids', axisMinus1]); // [1,S,1]
    const causal = node('LessOrEqual', [kpos, qpos]); // [1,S,T]
    const padOk = node('Unsqueeze', [node('Cast', ['attention_mask'], { to: DT.BOOL }), one64]); // [1,1,T]
    const visible = node('And', [causal, padOk]);
    return node('Unsqueeze', [node('Where', [visible, zeroF, negBig]), one64]); // [1,1,S,T]
  };
  const mask = fused ? null : causalMask();

  const rmsnorm = (x, w) => {
    const ms = node('ReduceMean', [node('Pow', [x, two])], { axes: [-1], keepdims: 1 });
    return node('Mul', [node('Div', [x, node('Sqrt', [node('Add', [ms, eps])])]), w]);
  };
  const rotary = (x) => {
    const x1 = node('Slice', [x, half0, halfMid, axisMinus1]);
    const x2 = node('Slice', [x, halfMid, halfEnd, axisMinus1]);
    const rot = node('Concat', [node('Neg', [x2]), x1], { axis: -1 });
    return node('Add', [node('Mul', [x, cos]), node('Mul', [rot, sin])]);
  };
  const heads = (x) => node('Transpose', [node('Reshape', [x, shapeHeads])], { perm: [0, 2, 1, 3] });

  f32('embed_tokens', [V, W], (() => {
    const d = new Float32Array(V * W);
    for (let i = 0; i < d.length; i++) d[i] = (2 * rand() - 1) * 0.5;
    return d;
  })());
  let x = node('Gather', ['embed_tokens', 'input_ids']);
  const inputs = [info('input_ids', DT.INT64, [1, 'sequence']), info('attention_mask', DT.INT64, [1, 'total']), info('position_ids', DT.INT64, [1, 'sequence'])];
  const outputs = [info('logits', DT.FLOAT, [1, 'sequence', V])];
  if (fused) {
    // GroupQueryAttention's lengths from the mask; rotary tables [maxPos, D/2]
    const seqlensK = node('Cast', [node('Sub', [node('ReduceSum', ['attention_mask', one64], { keepdims: 0 }), one64])], { to: DT.INT32 });
    const totalLen = node('Cast', [Tscalar], { to: DT.INT32 });
    const cosH = new Float32Array(maxPos * (D / 2)), sinH = new Float32Array(maxPos * (D / 2));
    for (let p = 0; p < maxPos; p++)
      for (let i = 0; i < D / 2; i++) (cosH[p * (D / 2) + i] = cosT[p * D + i]), (sinH[p * (D / 2) + i] = sinT[p * D + i]);
    f32('cos_cache', [maxPos, D / 2], cosH);
    f32('sin_cache', [maxPos, D / 2], sinH);
    let residual = x;
    let h = node('SimplifiedLayerNormalization', [x, ones('layers.0.input_layernorm.weight', W)], { axis: -1, epsilon: { f: 1e-5 } });
    for (let l = 0; l < layers; l++) {
      const p = `layers.${l}`;
      const pk = `past_key_values.${l}.key`, pv = `past_key_values.${l}.value`;
      inputs.push(info(pk, DT.FLOAT, [1, H, 'past', D]), info(pv, DT.FLOAT, [1, H, 'past', D]));
      const [attn] = msNode(
        'GroupQueryAttention',
        [linear(h, `${p}.q_proj`, W, W), linear(h, `${p}.k_proj`, W, W), linear(h, `${p}.v_proj`, W, W), pk, pv, seqlensK, totalLen, 'cos_cache', 'sin_cache'],
        { num_heads: H, kv_num_heads: H, do_rotary: 1, scale: { f: 1 / Math.sqrt(D) } },
        3,
        [fresh('gqa'), `present.${l}.key`, `present.${l}.value`],
      );
      outputs.push(info(`present.${l}.key`, DT.FLOAT, [1, H, 'total', D]), info(`present.${l}.value`, DT.FLOAT, [1, H, 'total', D]));
      const skip = (input, gamma) => {
        const [normed, , , sum] = msNode('SkipSimplifiedLayerNormalization', [input, residual, gamma], { epsilon: { f: 1e-5 } }, 4);
        residual = sum;
        return normed;
      };
      const h2 = skip(linear(attn, `${p}.o_proj`, W, W), ones(`${p}.post_attention_layernorm.weight`, W));
      const g = linear(h2, `${p}.gate_proj`, W, F);
      const act = node('Mul', [node('Mul', [g, node('Sigmoid', [g])]), linear(h2, `${p}.up_proj`, W, F)]);
      const next = l + 1 < layers ? `layers.${l + 1}.input_layernorm.weight` : 'norm.weight';
      h = skip(linear(act, `${p}.down_proj`, F, W), ones(next, W));
    }
    node('Identity', [linear(h, 'lm_head', W, V)], {}, 1, ['logits']);
  }
  for (let l = 0; l < layers && !fused; l++) {
    const p = `layers.${l}`;
    const h = rmsnorm(x, ones(`${p}.input_layernorm.weight`, W));
    const q = rotary(heads(linear(h, `${p}.q_proj`, W, W)));
    const k = rotary(heads(linear(h, `${p}.k_proj`, W, W)));
    const v = heads(linear(h, `${p}.v_proj`, W, W));
    const pk = `past_key_values.${l}.key`, pv = `past_key_values.${l}.value`;
    inputs.push(info(pk, DT.FLOAT, [1, H, 'past', D]), info(pv, DT.FLOAT, [1, H, 'past', D]));
    const keys = node('Concat', [pk, k], { axis: 2 }, 1, [`present.${l}.key`]);
    const values = node('Concat', [pv, v], { axis: 2 }, 1, [`present.${l}.value`]);
    outputs.push(info(keys, DT.FLOAT, [1, H, 'total', D]), info(values, DT.FLOAT, [1, H, 'total', D]));
    const scores = node('Add', [node('Mul', [node('MatMul', [q, node('Transpose', [keys], { perm: [0, 1, 3, 2] })]), scale]), mask]);
    const probs = node('Softmax', [scores], { axis: -1 });
    const ctx = node('Reshape', [node('Transpose', [node('MatMul', [probs, values])], { perm: [0, 2, 1, 3] }), shapeFlat]);
    x = node('Add', [x, linear(ctx, `${p}.o_proj`, W, W)]);
    const h2 = rmsnorm(x, ones(`${p}.post_attention_layernorm.weight`, W));
    const g = linear(h2, `${p}.gate_proj`, W, F);
    const u = linear(h2, `${p}.up_proj`, W, F);
    const act = node('Mul', [node('Mul', [g, node('Sigmoid', [g])]), u]);
    x = node('Add', [x, linear(act, `${p}.down_proj`, F, W)]);
  }
  if (!fused) {
    const hn = rmsnorm(x, ones('norm.weight', W));
    if (quantized) node('Identity', [linear(hn, 'lm_head', W, V)], {}, 1, ['logits']);
    else node('MatMul', [hn, weight('lm_head', W, V)], {}, 1, ['logits']);
  }
  const model = create(ModelProtoSchema, {
    irVersion: 8n,
    producerName: 'onnx-light bench/decode.mjs',
    opsetImport: quantized ? [{ domain: '', version: 17n }, { domain: 'com.microsoft', version: 1n }] : [{ domain: '', version: 17n }],
    graph: { name: 'llama', node: nodes, input: inputs, output: outputs, initializer: inits },
  });
  return toBinary(ModelProtoSchema, model);
}
