// Small random-weight decoders whose attention is one fused node with
// past/present caches, for toPagedModel's tests: ai.onnx Attention (opset
// 23, 3-D or 4-D inputs, grouped-query heads) and com.microsoft
// MultiHeadAttention. Per layer: x += Wo . Attention(x Wq, x Wk, x Wv,
// past_key_values.{i}.key|value) -> present.{i}.key|value; then logits =
// x Wlm. x starts as token + position embeddings (input_ids, position_ids).
import { create, toBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType as A, ModelProtoSchema, TensorProto_DataType as DT } from 'onnx-light/proto';

import { tensorInfo } from './models.mjs';

/** mulberry32 */
function rng(seed) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function attr(name, v) {
  if (typeof v === 'object' && 'f' in v) return { name, type: A.FLOAT, f: v.f };
  if (Array.isArray(v)) return { name, type: A.INTS, ints: v.map(BigInt) };
  return { name, type: A.INT, i: BigInt(v) };
}

/**
 * Serialized ModelProto. form: 'attention' (Attention 23, 3-D inputs),
 * 'attention4d' (Attention 23 on [B, H, S, D] inputs) or 'mha'
 * (MultiHeadAttention). attrs: extra attributes of the attention node.
 * @param {{form: string, layers?: number, heads?: number, kvHeads?: number, headSize?: number, vocab?: number, seed?: number, attrs?: object}} o
 */
export function buildAttentionDecoder({ form, layers = 2, heads = 4, kvHeads = heads, headSize = 8, vocab = 64, seed = 7, attrs = {} }) {
  const rand = rng(seed);
  const W = heads * headSize, KW = kvHeads * headSize;
  const nodes = [], inits = [];
  let counter = 0;
  const node = (opType, input, attributes = {}, outputs = [`v${counter++}`], domain = '') => {
    nodes.push({ opType, domain, name: `n${counter++}`, input, output: outputs, attribute: Object.entries(attributes).map(([k, v]) => attr(k, v)) });
    return outputs[0];
  };
  const weight = (name, rows, cols, gain = 1) => {
    const d = new Float32Array(rows * cols);
    for (let i = 0; i < d.length; i++) d[i] = (2 * rand() - 1) * gain / Math.sqrt(rows);
    inits.push({ name, dims: [BigInt(rows), BigInt(cols)], dataType: DT.FLOAT, rawData: new Uint8Array(d.buffer) });
    return name;
  };
  const ints = (name, values) => {
    if (inits.some((t) => t.name === name)) return name;
    inits.push({ name, dims: [BigInt(values.length)], dataType: DT.INT64, rawData: new Uint8Array(BigInt64Array.from(values.map(BigInt)).buffer) });
    return name;
  };
  const inputs = [tensorInfo('input_ids', DT.INT64, [1, 'sequence']), tensorInfo('position_ids', DT.INT64, [1, 'sequence'])];
  const outputs = [tensorInfo('logits', DT.FLOAT, [1, 'sequence', vocab])];
  let x = node('Add', [node('Gather', [weight('embed', vocab, W, 8), 'input_ids']), node('Gather', [weight('positions', 512, W, 8), 'position_ids'])]);
  const four = form === 'attention4d';
  const toHeads = (t, h) => node('Transpose', [node('Reshape', [t, ints(`heads${h}`, [1, -1, h, headSize])])], { perm: [0, 2, 1, 3] });
  for (let l = 0; l < layers; l++) {
    const pk = `past_key_values.${l}.key`, pv = `past_key_values.${l}.value`;
    const kvh = form === 'mha' ? heads : kvHeads;
    inputs.push(tensorInfo(pk, DT.FLOAT, [1, kvh, 'past', headSize]), tensorInfo(pv, DT.FLOAT, [1, kvh, 'past', headSize]));
    outputs.push(tensorInfo(`present.${l}.key`, DT.FLOAT, [1, kvh, 'total', headSize]), tensorInfo(`present.${l}.value`, DT.FLOAT, [1, kvh, 'total', headSize]));
    let q = node('MatMul', [x, weight(`l${l}.q`, W, W)]);
    let k = node('MatMul', [x, weight(`l${l}.k`, W, form === 'mha' ? W : KW)]);
    let v = node('MatMul', [x, weight(`l${l}.v`, W, form === 'mha' ? W : KW)]);
    const present = [`y${l}`, `present.${l}.key`, `present.${l}.value`];
    let y;
    if (form === 'mha') {
      y = node('MultiHeadAttention', [q, k, v, '', '', '', pk, pv], { num_heads: heads, ...attrs }, present, 'com.microsoft');
    } else if (four) {
      q = toHeads(q, heads), k = toHeads(k, kvHeads), v = toHeads(v, kvHeads);
      y = node('Attention', [q, k, v, '', pk, pv], attrs, present);
      y = node('Reshape', [node('Transpose', [y], { perm: [0, 2, 1, 3] }), ints(`flat${l}`, [1, -1, W])]);
    } else {
      y = node('Attention', [q, k, v, '', pk, pv], { q_num_heads: heads, kv_num_heads: kvHeads, ...attrs }, present);
    }
    x = node('Add', [x, node('MatMul', [y, weight(`l${l}.o`, W, W)])]);
  }
  node('MatMul', [x, weight('lm_head', W, vocab, 4)], {}, ['logits']);
  const opsetImport = form === 'mha'
    ? [{ domain: '', version: 17n }, { domain: 'com.microsoft', version: 1n }]
    : [{ domain: '', version: 23n }];
  const model = create(ModelProtoSchema, {
    irVersion: form === 'mha' ? 8n : 11n,
    producerName: 'onnx-light tests',
    opsetImport,
    graph: { name: 'decoder', node: nodes, input: inputs, output: outputs, initializer: inits },
  });
  return toBinary(ModelProtoSchema, model);
}
