// Model conversion behind `onnx-light quantize`. ORT MatMulNBits formats:
// every float32 MatMul whose second input is a 2-D [K, N] initializer becomes
// a com.microsoft::MatMulNBits node (attributes K, N, bits, block_size; inputs A, B, scales, optional
// zero_points) whose inputs come from the C codec (makeMatMulNBitsPlan,
// per-block calibration, quantizeTensor, exportMatMulNBitsInputs). Float
// weights no node reads any more are dropped. Portable formats (int4, nf4,
// ...): the weight becomes an encoded initializer
// (GraphProto.encoded_initializer, calibrated per block) decoded by an
// ai.rt::Dequantize node that produces the original weight name. Works on the ModelProto with
// @bufbuild/protobuf and the package's generated schema.
import { invalidArgument } from './errors.js';
import { dtypeOf } from './dtypes.js';
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

async function protoModules() {
  const schemaPath = './proto/onnx_light_pb.js';
  const protobufPath = '@bufbuild/protobuf';
  const [schema, protobuf] = await Promise.all([import(/* @vite-ignore */ schemaPath), import(/* @vite-ignore */ protobufPath)]);
  return { schema, protobuf };
}

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

/** Every name a node of graph (and its subgraphs) reads. */
function usedNames(graph, used = new Set()) {
  for (const node of graph.node) {
    for (const input of node.input) if (input) used.add(input);
    for (const attribute of node.attribute) {
      if (attribute.g) usedNames(attribute.g, used);
      for (const g of attribute.graphs ?? []) usedNames(g, used);
    }
  }
  for (const output of graph.output) used.add(output.name);
  return used;
}

function uniqueName(taken, base) {
  let name = base;
  for (let i = 1; taken.has(name); i++) name = `${base}_${i}`;
  taken.add(name);
  return name;
}

/**
 * Quantizes the eligible MatMul weights of model bytes.
 * @param {Uint8Array} bytes serialized ModelProto
 * @param {{format?: number, blockSize?: number, asymmetric?: boolean, accuracyLevel?: number}} [options]
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
  const { schema, protobuf } = await protoModules();
  const model = protobuf.fromBinary(schema.ModelProtoSchema, bytes);
  const graph = model.graph;
  if (!graph) throw invalidArgument('quantizeModel: the model has no graph');
  const initializers = new Map(graph.initializer.map((t) => [t.name, t]));
  const graphInputs = new Set(graph.input.map((i) => i.name));
  const taken = new Set([...initializers.keys(), ...graphInputs]);
  for (const node of graph.node) for (const name of [...node.input, ...node.output]) taken.add(name);

  const converted = new Map(); // weight name -> { names, attributes } (null: portable, Dequantize'd)
  const dequantizeNodes = [];
  const skipped = [];
  let replaced = 0;
  for (let index = 0; index < graph.node.length; index++) {
    const node = graph.node[index];
    if (node.opType !== 'MatMul' || (node.domain !== '' && node.domain !== 'ai.onnx') || node.input.length !== 2) continue;
    const weightName = node.input[1];
    const weight = initializers.get(weightName);
    if (!weight || graphInputs.has(weightName)) continue;
    if (weight.dataType !== FLOAT || weight.dims.length !== 2) continue;
    if (!ort) {
      if (!converted.has(weightName)) {
        const [k, n] = weight.dims.map(Number);
        const values = k > 0 && n > 0 ? floatValues(weight) : null;
        if (!values) {
          skipped.push(weightName);
          continue;
        }
        const plan = makeQuantizationPlan(format, k * n, { blockSize });
        try {
          const tensor = new Tensor('float32', values, [k, n]);
          calibrateQuantizationPlan(plan, tensor);
          const encodedName = uniqueName(taken, `${weightName}_encoded`);
          const encoded = quantizeTensor(tensor, plan, { name: encodedName });
          const proto = protobuf.fromBinary(schema.EncodedValueProtoSchema, encoded.bytes);
          proto.name = encodedName;
          graph.encodedInitializer.push(proto);
          dequantizeNodes.push(
            protobuf.create(schema.NodeProtoSchema, {
              name: `${weightName}_Dequantize`,
              opType: 'Dequantize',
              domain: RT_DOMAIN,
              input: [encodedName],
              output: [weightName],
              attribute: [protobuf.create(schema.AttributeProtoSchema, { name: 'dtype', type: ATTRIBUTE_INT, i: BigInt(FLOAT) })],
            }),
          );
          converted.set(weightName, null);
        } finally {
          plan.dispose();
        }
      }
      replaced++;
      continue;
    }
    let entry = converted.get(weightName);
    if (!entry) {
      const [k, n] = weight.dims.map(Number);
      const values = k > 0 && n > 0 ? floatValues(weight) : null;
      if (!values) {
        skipped.push(weightName);
        continue;
      }
      const plan = makeMatMulNBitsPlan(format, k, n, { blockSize });
      try {
        const tensor = new Tensor('float32', values, [k, n]);
        if (asymmetric) calibrateMinMax(plan, values, k, n);
        else calibrateQuantizationPlan(plan, tensor);
        const inputs = exportMatMulNBitsInputs(quantizeTensor(tensor, plan, { name: weightName }));
        const names = [];
        for (const [key, suffix] of [['B', 'Q'], ['scales', 'scales'], ['zero_points', 'zero_points']]) {
          const t = inputs[key];
          if (!t) continue;
          const name = uniqueName(taken, `${weightName}_${suffix}`);
          const data = t.data;
          graph.initializer.push(
            protobuf.create(schema.TensorProtoSchema, {
              name,
              dims: t.dims.map(BigInt),
              dataType: dtypeOf(t.type).code,
              rawData: new Uint8Array(data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength)),
            }),
          );
          names.push(name);
        }
        entry = { names, k: inputs.k, n: inputs.n, bits: inputs.bits, blockSize: inputs.blockSize };
        converted.set(weightName, entry);
      } finally {
        plan.dispose();
      }
    }
    const attribute = (name, value) => protobuf.create(schema.AttributeProtoSchema, { name, type: ATTRIBUTE_INT, i: BigInt(value) });
    graph.node[index] = protobuf.create(schema.NodeProtoSchema, {
      name: node.name ? `${node.name}_MatMulNBits` : '',
      opType: 'MatMulNBits',
      domain: MS_DOMAIN,
      input: [node.input[0], ...entry.names],
      output: node.output,
      attribute: [
        attribute('K', entry.k),
        attribute('N', entry.n),
        attribute('bits', entry.bits),
        attribute('block_size', entry.blockSize),
        ...(accuracyLevel === undefined ? [] : [attribute('accuracy_level', accuracyLevel)]),
      ],
    });
    replaced++;
  }
  const domain = ort ? MS_DOMAIN : RT_DOMAIN;
  if (replaced > 0 && !model.opsetImport.some((o) => o.domain === domain)) {
    model.opsetImport.push(protobuf.create(schema.OperatorSetIdProtoSchema, { domain, version: 1n }));
  }
  if (ort) {
    const used = usedNames(graph);
    graph.initializer = graph.initializer.filter((t) => !converted.has(t.name) || used.has(t.name) || graphInputs.has(t.name));
  } else {
    // the Dequantize nodes now produce the weights
    graph.node = [...dequantizeNodes, ...graph.node];
    graph.initializer = graph.initializer.filter((t) => !converted.has(t.name));
  }
  return { bytes: protobuf.toBinary(schema.ModelProtoSchema, model), replaced, skipped };
}
