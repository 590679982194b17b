// Model conversion behind `onnx-light quantize`. ORT MatMulNBits formats:
// every float32 MatMul whose second input is a 2-D [K, N] initializer becomes
// a com.microsoft::MatMulNBits node (attributes K, N, bits, block_size; inputs A, B, scales, optional
// zero_points) whose inputs come from the C codec (makeMatMulNBitsPlan,
// per-block calibration, quantizeTensor, exportMatMulNBitsInputs). Float
// weights no node reads any more are dropped. Portable formats (int4, nf4,
// ...): the weight becomes an encoded initializer
// (GraphProto.encoded_initializer, calibrated per block) decoded by an
// ai.rt::Dequantize node that produces the original weight name. The model is
// edited through the GraphBuilder (C ol_builder_*): every other part is kept
// as it is (encoded initializers stay encoded, external data stays external).
import { invalidArgument } from './errors.js';
import { dtypeOf } from './dtypes.js';
import { GraphBuilder } from './graph-builder.js';
import {
  QuantizationFormat,
  calibrateQuantizationPlan,
  formatInfo,
  exportMatMulNBitsInputs,
  makeMatMulNBitsPlan,
  makeQuantizationPlan,
  quantizeTensor,
} from './quantization.js';
import { init } from './runtime.js';
import { Tensor } from './tensor.js';

const FLOAT = 1;
const ATTRIBUTE_INT = 2;
const MS_DOMAIN = 'com.microsoft';
const RT_DOMAIN = 'ai.rt';

/** Float32 values of a FLOAT TensorProto (raw_data or float_data), or null for external data. */
function floatValues(tensor) {
  if (tensor.externalData?.length || tensor.dataLocation === 1) return null;
  const count = tensor.dims.reduce((a, b) => a * Number(b), 1);
  if (tensor.rawData.length) {
    if (tensor.rawData.length !== 4 * count) return null;
    const copy = new Uint8Array(tensor.rawData); // a copy (Buffer.slice would share memory)
    return new Float32Array(copy.buffer, 0, count);
  }
  if (tensor.floatData.length === count) return Float32Array.from(tensor.floatData);
  return null;
}

/**
 * Asymmetric min/max calibration of an ORT MatMulNBits plan: per column and K
 * block, the range [min(0, lo), max(0, hi)] maps onto the codes 0 .. 2^bits - 1
 * with an integer zero point (so zero stays exact and zero points pack).
 */
function calibrateMinMax(plan, values, k, n) {
  const run = plan.run(0);
  const size = run.layout.count;
  const top = 2 ** run.layout.bits - 1;
  const groups = Math.ceil(k / size);
  const scales = new Float64Array(n * groups);
  const zeros = new Float64Array(n * groups);
  for (let col = 0; col < n; col++) {
    for (let g = 0; g < groups; g++) {
      let lo = 0;
      let hi = 0;
      for (let row = g * size; row < Math.min((g + 1) * size, k); row++) {
        const v = values[row * n + col];
        if (!Number.isFinite(v)) throw invalidArgument(`Quantization input must be finite (row ${row}, column ${col})`);
        lo = Math.min(lo, v);
        hi = Math.max(hi, v);
      }
      const i = col * groups + g;
      if (hi === lo) {
        scales[i] = 1;
        zeros[i] = 2 ** (run.layout.bits - 1);
        continue;
      }
      // float32 scale, as the encoder rounds it to the source dtype
      const scale = Math.fround((hi - lo) / top);
      scales[i] = scale;
      zeros[i] = Math.min(top, Math.max(0, Math.round(-lo / scale)));
    }
  }
  plan.setScales(0, scales);
  plan.setZeroPoints(0, zeros);
}

/** Every name the nodes (and their subgraphs) read or the outputs name. */
function usedNames(nodes, outputs, used = new Set()) {
  for (const node of nodes) {
    for (const input of node.input) if (input) used.add(input);
    for (const attribute of node.attribute) {
      if (attribute.g) usedNames(attribute.g.node, attribute.g.output, used);
      for (const g of attribute.graphs ?? []) usedNames(g.node, g.output, used);
    }
  }
  for (const output of outputs) used.add(output.name);
  return used;
}

function uniqueName(taken, base) {
  let name = base;
  for (let i = 1; taken.has(name); i++) name = `${base}_${i}`;
  taken.add(name);
  return name;
}

/** An INT attribute init object. */
const intAttribute = (name, value) => ({ name, type: ATTRIBUTE_INT, i: BigInt(value) });

/** The float weights of a node eligible for quantization (MatMul by a 2-D float initializer), else null. */
function eligibleWeight(node, initializers, graphInputs) {
  if (node.opType !== 'MatMul' || (node.domain !== '' && node.domain !== 'ai.onnx') || node.input.length !== 2) return null;
  const weight = initializers.get(node.input[1]);
  if (!weight || graphInputs.has(weight.name)) return null;
  if (weight.dataType !== FLOAT || weight.dims.length !== 2) return null;
  return weight;
}

/** Values of a non-empty [K, N] weight, or null (external data, odd payload). */
function weightValues(weight) {
  const [k, n] = weight.dims.map(Number);
  const values = k > 0 && n > 0 ? floatValues(weight) : null;
  return values && { k, n, tensor: new Tensor('float32', values, [k, n]), values };
}

/** Portable formats: the weight as an encoded initializer; returns the Dequantize node producing the weight's name. */
function encodeWeight(builder, taken, weight, { k, n, tensor }, format, blockSize) {
  const plan = makeQuantizationPlan(format, k * n, { blockSize });
  try {
    calibrateQuantizationPlan(plan, tensor);
    const encodedName = builder.makeStructuredInitializer(quantizeTensor(tensor, plan, { name: uniqueName(taken, `${weight.name}_encoded`) }));
    return {
      name: `${weight.name}_Dequantize`,
      opType: 'Dequantize',
      domain: RT_DOMAIN,
      input: [encodedName],
      output: [weight.name],
      attribute: [intAttribute('dtype', FLOAT)],
    };
  } finally {
    plan.dispose();
  }
}

/** ORT formats: the MatMulNBits inputs of a weight as initializers; returns their names and the node attributes. */
function matMulNBitsWeight(builder, taken, weight, { k, n, tensor, values }, format, blockSize, asymmetric) {
  const plan = makeMatMulNBitsPlan(format, k, n, { blockSize });
  try {
    if (asymmetric) calibrateMinMax(plan, values, k, n);
    else calibrateQuantizationPlan(plan, tensor);
    const inputs = exportMatMulNBitsInputs(quantizeTensor(tensor, plan, { name: weight.name }));
    const names = [];
    for (const [key, suffix] of [['B', 'Q'], ['scales', 'scales'], ['zero_points', 'zero_points']]) {
      const t = inputs[key];
      if (!t) continue;
      const name = uniqueName(taken, `${weight.name}_${suffix}`);
      const data = t.data;
      builder.addInitializer({
        name,
        dims: t.dims.map(BigInt),
        dataType: dtypeOf(t.type).code,
        rawData: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)),
      });
      names.push(name);
    }
    return { names, k: inputs.k, n: inputs.n, bits: inputs.bits, blockSize: inputs.blockSize };
  } finally {
    plan.dispose();
  }
}

/**
 * Quantizes the eligible MatMul weights of model bytes.
 * @param {Uint8Array} bytes serialized ModelProto
 * @param {{format?: {name: string, value: number}, blockSize?: number, asymmetric?: boolean, accuracyLevel?: number}} [options]
 *   format: a QuantizationFormat member (numbers are rejected);
 *   asymmetric: per-block integer zero points from the block's min/max
 *   (scale = (max - min) / (2^bits - 1)) instead of the midpoint zero point;
 *   accuracyLevel: MatMulNBits' accuracy_level attribute (0-4; 4 lets the
 *   kernel quantize activations to int8 per block), absent when not given
 * @returns {Promise<{bytes: Uint8Array, replaced: number, skipped: string[]}>}
 */
export async function quantizeModel(bytes, { format, blockSize = 32, asymmetric = false, accuracyLevel } = {}) {
  await init(); // the catalogue comes from the C library
  format ??= QuantizationFormat.ORT_MATMULNBITS_INT4;
  const ort = formatInfo(format, 'quantizeModel').matmulNBits;
  if (!ort && asymmetric) throw invalidArgument('quantizeModel: asymmetric calibration applies to the ORT MatMulNBits formats only');
  if (accuracyLevel !== undefined) {
    if (!ort) throw invalidArgument('quantizeModel: accuracyLevel applies to the ORT MatMulNBits formats only');
    if (!Number.isInteger(accuracyLevel) || accuracyLevel < 0 || accuracyLevel > 4) {
      throw invalidArgument(`quantizeModel: accuracyLevel must be an integer 0..4, got ${accuracyLevel}`);
    }
  }
  const builder = await GraphBuilder.fromModel(bytes);
  try {
    const nodes = builder.nodes;
    const initializers = new Map(builder.initializers.map((t) => [t.name, t]));
    const graphInputs = new Set(builder.inputs.map((i) => i.name));
    const taken = new Set([...initializers.keys(), ...graphInputs]);
    for (const kind of ['structuredInitializers', 'cacheInitializers']) for (const v of builder[kind]) taken.add(v.name);
    for (const node of nodes) for (const name of [...node.input, ...node.output]) taken.add(name);

    const converted = new Map(); // weight name -> MatMulNBits inputs (ORT) or its Dequantize node (portable)
    const skipped = [];
    let replaced = 0;
    for (let index = 0; index < nodes.length; index++) {
      const node = nodes[index];
      const weight = eligibleWeight(node, initializers, graphInputs);
      if (!weight) continue;
      let entry = converted.get(weight.name);
      if (!entry) {
        const weightData = weightValues(weight);
        if (!weightData) {
          skipped.push(weight.name);
          continue;
        }
        entry = ort
          ? matMulNBitsWeight(builder, taken, weight, weightData, format, blockSize, asymmetric)
          : encodeWeight(builder, taken, weight, weightData, format, blockSize);
        converted.set(weight.name, entry);
      }
      replaced++;
      if (!ort) continue; // the MatMul stays; a Dequantize node produces its weight
      builder.replaceNode(index, {
        name: node.name ? `${node.name}_MatMulNBits` : '',
        opType: 'MatMulNBits',
        domain: MS_DOMAIN,
        input: [node.input[0], ...entry.names],
        output: node.output,
        attribute: [
          intAttribute('K', entry.k),
          intAttribute('N', entry.n),
          intAttribute('bits', entry.bits),
          intAttribute('block_size', entry.blockSize),
          ...(accuracyLevel === undefined ? [] : [intAttribute('accuracy_level', accuracyLevel)]),
        ],
      });
    }
    const domain = ort ? MS_DOMAIN : RT_DOMAIN;
    if (replaced > 0 && !builder.opsetImports.some((o) => o.domain === domain)) builder.addOpsetImport({ domain, version: 1 });
    if (ort) {
      const used = usedNames(builder.nodes, builder.outputs);
      for (const name of converted.keys()) if (!used.has(name)) builder.removeInitializer(name);
    } else {
      // the Dequantize nodes now produce the weights, ahead of every other node
      for (const name of converted.keys()) builder.removeInitializer(name);
      [...converted.values()].forEach((dequantize, i) => builder.insertNode(i, dequantize));
    }
    return { bytes: builder.toBytes(), replaced, skipped };
  } finally {
    builder.dispose();
  }
}
