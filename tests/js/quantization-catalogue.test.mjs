// Every quantization catalogue profile through the JS API, and the seed's
// INT4 calibration graph through InferenceSession. JS ports of
// tests/c/test_quant.c (seed_row_plan + test_every_catalogue_row,
// test_seed_int4_calibration) and tests/c/test_quantize_ops.c
// (int4_calibration_graph): each profile is configured on the 4x4 weight
// matrix linspace(-1, 1, 16) as the seed's catalogue table does, encoded with
// quantizeTensor, decoded with dequantizeTensor, and held to the C bounds.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { AttributeProto_AttributeType as AttrType, EncodedValueProtoSchema, ModelProtoSchema, StructTypeProtoSchema } from 'onnx-light/proto';
import * as ol from 'onnx-light';

import { DataType, tensorInfo } from './models.mjs';

const { QuantizationFormat: QF, Tensor } = ol;

await ol.init();

// ------------------------------------------------------------ the seed's common setup

const N = 16;
/** linspace(-1, 1, 16) in float32, viewed as a 4x4 matrix. */
const WEIGHTS = Float32Array.from({ length: N }, (_, i) => -1 + (i * 2) / 15);
/** Row-major positions in column-major order (columns as channels). */
const TRANSPOSE = Array.from({ length: N }, (_, i) => (i % 4) * 4 + Math.floor(i / 4));
/** 2x2 tiles: indices reshaped to (2, 2, 2, 2), transposed to (0, 2, 1, 3). */
const TILES = Array.from({ length: N }, (_, i) => {
  const [a, c, b, d] = [Math.floor(i / 8), Math.floor(i / 4) % 2, Math.floor(i / 2) % 2, i % 2];
  return a * 8 + b * 4 + c * 2 + d;
});
const R = Math.SQRT1_2;
const ROTATION = [R, R, R, -R];

const linspace = (lo, hi, n) => Array.from({ length: n }, (_, i) => (n === 1 ? lo : lo + ((hi - lo) * i) / (n - 1)));
const signedMax = (bits) => 2 ** (bits - 1) - 1;

/** The seed's idiom for one block: copy the run and block, edit, write both back. */
function editBlock(plan, r, j, edit) {
  const run = plan.run(r);
  const block = run.block(j);
  edit(block, run.layout);
  run.setBlock(j, block);
  plan.setRun(r, run);
}

/** Edits every block of every run (edit(block, index in its run, layout)), assigning plan.runs back. */
function editBlocks(plan, edit) {
  const runs = plan.runs;
  for (const run of runs) run.blocks.forEach((block, j) => edit(block, j, run.layout));
  plan.runs = runs;
}

const setScale = (scale) => (plan) => editBlock(plan, 0, 0, (b) => (b.scale = scale));
const setCodebook = (table) => (plan) => editBlocks(plan, (b) => (b.codebook = table));

/** Two 256-entry eight-component additive books (AQLM row). */
function additiveBooks() {
  const table = [];
  for (const [lo, hi] of [[-1, 1], [-0.125, 0.125]]) {
    for (const level of linspace(lo, hi, 256)) table.push(...Array(8).fill(level));
  }
  return table;
}

/**
 * The catalogue table: profiles (upper-case names) and how their plan is made
 * and configured. blockSize defaults to 128 (one block of 16); matrix rows use
 * makeMatMulNBitsPlan on [4, 4] instead of makeQuantizationPlan.
 */
const CATALOGUE = [
  [['INT8', 'EETQ', 'INT4'], { configure: (plan) => editBlock(plan, 0, 0, (b, l) => (b.scale = 1 / signedMax(l.bits))) }],
  [
    ['INT8_PER_CHANNEL'],
    {
      blockSize: 4,
      configure(plan) {
        plan.permutation = TRANSPOSE;
        for (let column = 0; column < 4; column++) {
          const maximum = Math.max(...[0, 1, 2, 3].map((row) => Math.abs(WEIGHTS[row * 4 + column])));
          editBlock(plan, 0, column, (b) => (b.scale = maximum > 0 ? maximum / 127 : 1));
        }
      },
    },
  ],
  [
    ['GPTQ', 'AWQ', 'MATMULNBITS'],
    {
      blockSize: 4,
      configure: (plan) =>
        editBlocks(plan, (b, j) => {
          b.scale = [0.15, 0.05, 0.05, 0.15][j];
          b.zeroPoint = 8;
        }),
    },
  ],
  [
    ['Q2_K', 'Q3_K', 'Q4_K', 'Q5_K', 'Q6_K'],
    {
      blockSize: 4,
      configure: (plan) =>
        editBlocks(plan, (b, _, l) => {
          b.scale = 1 / signedMax(l.bits);
          b.offset = 0.125;
        }),
    },
  ],
  [
    ['HQQ', 'EXL2', 'EXL3'],
    {
      blockSize: 8,
      configure(plan) {
        // mixed precision: a 3-bit run and a 5-bit run of one block each
        plan.runs = [[3, 0.25], [5, 0.125]].map(([bits, scale]) => {
          const run = plan.run(0);
          run.layout.bits = bits;
          const block = run.block(0);
          block.scale = scale;
          run.blocks = [block];
          return run;
        });
      },
    },
  ],
  [['NF4'], { configure: setScale(1) }],
  [['IQ4_NL'], { configure: setScale(1 / 127) }],
  [['BINARY'], { configure: setScale(0.5) }],
  [['TERNARY', 'TQ1_0', 'BITNET', 'PARETOQ', 'TEQUILA', 'TQ2_0'], { configure: setScale(0.75) }],
  [['STQ1_0'], { configure: setCodebook(linspace(-1, 1, 128)) }],
  [['IQ1_S'], { configure: setCodebook(linspace(-1, 1, 2048)) }],
  [
    ['QUIP_SHARP'],
    {
      configure(plan) {
        setCodebook(linspace(-1, 1, 2048))(plan);
        // as the seed writes it: the size first, then each matrix
        plan.transformSize = 2;
        plan.forward = ROTATION;
        plan.inverse = ROTATION;
      },
    },
  ],
  [['AQLM'], { configure: setCodebook(additiveBooks()) }],
  [
    ['SPQR'],
    {
      configure(plan) {
        plan.outliers = [0, 15];
        setScale(0.125)(plan);
      },
    },
  ],
  [
    ['SQUEEZELLM'],
    {
      configure(plan) {
        plan.outliers = [0, 15];
        setCodebook(linspace(-1, 1, 16))(plan);
      },
    },
  ],
  [['LOG'], { configure: setScale(0.125) }],
  [['FP6_LLM', 'MXFP6'], { configure: setScale(0.25) }],
  [['FP8_E4M3'], { configure: setScale(0.5) }],
  [['MXFP4', 'NVFP4'], { blockSize: 8, configure: (plan) => editBlocks(plan, (b, j) => (b.scale = [0.25, 0.5][j])) }],
  [
    ['QUAROT'],
    {
      configure(plan) {
        // as the seed writes it: the size first, then each matrix
        plan.transformSize = 2;
        plan.forward = ROTATION;
        plan.inverse = ROTATION;
        setScale(0.25)(plan);
      },
    },
  ],
  [
    ['SMOOTHQUANT'],
    {
      configure(plan) {
        plan.transformSize = 2;
        plan.forward = [2, 0, 0, 0.5];
        plan.inverse = [0.5, 0, 0, 2];
        setScale(0.25)(plan);
      },
    },
  ],
  [
    ['TILED_FLOAT'],
    {
      blockSize: 4,
      configure(plan) {
        plan.permutation = TILES;
        const runs = plan.runs;
        for (const run of runs) run.layout.castType = 'float16'; // physical storage; the logical type stays float32
        plan.runs = runs;
      },
    },
  ],
  [['COLUMN_MAJOR'], { configure: (plan) => (plan.permutation = TRANSPOSE) }],
  // ORT MatMulNBits: K = N = 4 in one padded K block of 16 per column; default
  // zero points (2^(bits-1)) with scales covering [-1, 1] unsaturated.
  [
    ['ORT_MATMULNBITS_INT2', 'ORT_MATMULNBITS_INT4', 'ORT_MATMULNBITS_INT8'],
    { matrix: { k: 4, n: 4, blockSize: 16 }, configure: (plan) => editBlocks(plan, (b, _, l) => (b.scale = 1 / signedMax(l.bits))) },
  ],
];

const SETUPS = new Map(CATALOGUE.flatMap(([names, setup]) => names.map((name) => [name, setup])));

/** The configured plan of a profile. */
function seedRowPlan(format) {
  const setup = SETUPS.get(ol.quantizationFormatName(format).toUpperCase());
  assert.ok(setup, `no catalogue row for ${ol.quantizationFormatName(format)}`);
  const { matrix, blockSize = 128, configure } = setup;
  const plan = matrix
    ? ol.makeMatMulNBitsPlan(format, matrix.k, matrix.n, { blockSize: matrix.blockSize })
    : ol.makeQuantizationPlan(format, N, { blockSize });
  configure(plan);
  return plan;
}

// ------------------------------------------------------------ bounds

/**
 * The layout and parameters of the block encoding source element i. ORT
 * plans: blocks by column, then K group. Portable plans: the element's
 * position after the permutation, through the runs in order.
 */
function blockOf(plan, runs, i) {
  if (plan.matrixShape.length === 2) {
    const [k, n] = plan.matrixShape;
    const { layout, blocks } = runs[0];
    const groups = Math.ceil(k / layout.count);
    return { layout, block: blocks[(i % n) * groups + Math.floor(Math.floor(i / n) / layout.count)] };
  }
  const permutation = plan.permutation;
  let position = permutation.length ? permutation.indexOf(i) : i;
  for (const { layout, blocks } of runs) {
    if (position < layout.count * blocks.length) return { layout, block: blocks[Math.floor(position / layout.count)] };
    position -= layout.count * blocks.length;
  }
  throw new Error(`element ${i} is not covered by the plan's runs`);
}

// Decoded values are float32 (the logical type); the C test decodes to
// double, so the affine bound allows the final float32 rounding of |y| <= 2.
const FLOAT32_ROUNDING = 2 ** -23;

/**
 * Affine blocks without a transform: every element whose code is in range
 * (not saturated) is within half a scale step. ORT scales are rounded to the
 * source dtype (float32) before quantizing.
 */
function checkAffineSteps(plan, restored) {
  const runs = plan.runs;
  const ort = plan.matrixShape.length === 2;
  let checked = 0;
  for (let i = 0; i < N; i++) {
    const { layout, block } = blockOf(plan, runs, i);
    const scale = ort ? Math.fround(block.scale) : block.scale;
    const lo = layout.signedCodes ? -(2 ** (layout.bits - 1)) : 0;
    const hi = lo + 2 ** layout.bits - 1;
    const code = (WEIGHTS[i] - block.offset) / scale + block.zeroPoint;
    if (code < lo - 0.5 || code > hi + 0.5) continue; // saturated
    const error = Math.abs(restored[i] - WEIGHTS[i]);
    assert.ok(error <= 0.5 * scale * (1 + 1e-12) + FLOAT32_ROUNDING, `element ${i}: error ${error} > half a step of ${scale}`);
    checked++;
  }
  return checked;
}

// ------------------------------------------------------------ every profile

describe('every catalogue profile encodes and decodes through the JS API', () => {
  const covered = [];
  for (const format of ol.quantizationFormats()) {
    const wire = ol.quantizationFormatName(format);
    test(wire, () => {
      const plan = seedRowPlan(format);
      assert.equal(plan.format, format);
      const encoded = ol.quantizeTensor(new Tensor('float32', WEIGHTS.slice(), [4, 4]), plan);
      assert.equal(encoded.format, format);
      assert.equal(encoded.type, 'float32');
      assert.deepEqual(encoded.dims, [4, 4]);

      const y = ol.dequantizeTensor(encoded);
      assert.equal(y.type, 'float32');
      assert.deepEqual(y.dims, [4, 4]);
      const restored = Array.from(y.data);

      // the serialized EncodedValueProto bytes decode again, also after a
      // protobuf parse and re-serialization, and name the profile
      assert.deepEqual(Array.from(ol.dequantizeTensor(encoded.bytes.slice()).data), restored);
      const proto = fromBinary(EncodedValueProtoSchema, encoded.bytes);
      assert.equal(proto.layout.case, 'structType');
      assert.equal(proto.layout.value.name, `onnx_light.quantization.v1/${wire}`);
      assert.deepEqual(Array.from(ol.dequantizeTensor(toBinary(EncodedValueProtoSchema, proto)).data), restored);

      // the C bounds: 0.5 overall (1.25 for the seed's synthetic vector
      // tables, ramps far from these weights)
      const layout = plan.run(0).layout;
      const error = Math.max(...restored.map((v, i) => Math.abs(v - WEIGHTS[i])));
      const bound = layout.vectorSize > 1 ? 1.25 : 0.5;
      assert.ok(error <= bound, `max error ${error} > ${bound}`);
      if (layout.method === 'cast' && layout.castType === 'float32') assert.equal(error, 0, 'FLOAT casts are exact');
      for (const i of plan.outliers) assert.equal(restored[i], WEIGHTS[i], `outlier ${i} is exact`);
      if (layout.method === 'affine' && plan.transformSize === 0) {
        assert.ok(checkAffineSteps(plan, restored) > 0, 'some element is not saturated');
      }
      plan.dispose();
      covered.push(wire);
    });
  }

  test('all 43 profiles are covered, each by one catalogue row', () => {
    assert.equal(SETUPS.size, 43);
    assert.equal(covered.length, 43);
    assert.deepEqual(new Set(covered), new Set(ol.quantizationFormats().map((f) => ol.quantizationFormatName(f))));
  });

  test('the row setups configure what the seed says (spot checks)', () => {
    const tiled = seedRowPlan(QF.TILED_FLOAT);
    assert.deepEqual(tiled.permutation, [0, 1, 4, 5, 2, 3, 6, 7, 8, 9, 12, 13, 10, 11, 14, 15]);
    assert.ok(tiled.runs.every((run) => run.layout.castType === 'float16' && run.layout.method === 'cast'));
    const exl2 = seedRowPlan(QF.EXL2);
    assert.deepEqual(exl2.runs.map((r) => [r.layout.bits, r.layout.count, r.blocks.length, r.blocks[0].scale]), [[3, 8, 1, 0.25], [5, 8, 1, 0.125]]);
    const aqlm = seedRowPlan(QF.AQLM).run(0);
    assert.deepEqual([aqlm.layout.books, aqlm.layout.entries, aqlm.layout.vectorSize], [2, 256, 8]);
    assert.equal(aqlm.blocks[0].codebook.length, 4096);
    const quip = seedRowPlan(QF.QUIP_SHARP);
    assert.equal(quip.transformSize, 2);
    assert.deepEqual(quip.forward, ROTATION);
    const ort = seedRowPlan(QF.ORT_MATMULNBITS_INT4);
    assert.deepEqual(ort.matrixShape, [4, 4]);
    assert.deepEqual(ort.run(0).blocks.map((b) => [b.scale, b.zeroPoint]), Array(4).fill([1 / 7, 8]));
  });
});

// ------------------------------------------------------------ INT4 calibration

describe('INT4 calibration (seed example)', () => {
  test('calibrateQuantizationPlan: per-block scales from the data', () => {
    const values = Float32Array.of(-4, -1, 0.5, 3.5, 7, -2, 1, 0);
    const x = new Tensor('float32', values, [8]);
    const plan = ol.makeQuantizationPlan(QF.INT4, 8, { blockSize: 4 });
    ol.calibrateQuantizationPlan(plan, x);
    // block 0: max(3.5 / 7, 4 / 8) = 0.5; block 1: max(7 / 7, 2 / 8) = 1
    assert.deepEqual(plan.run(0).blocks.map((b) => b.scale), [0.5, 1]);
    assert.deepEqual(Array.from(ol.dequantizeTensor(ol.quantizeTensor(x, plan)).data), Array.from(values));

    // all-zero blocks use scale one; unsigned codes use the zero point
    const gptq = ol.makeQuantizationPlan(QF.GPTQ, 4, { blockSize: 4 });
    ol.calibrateQuantizationPlan(gptq, new Tensor('float32', new Float32Array(4), [4]));
    assert.equal(gptq.run(0).blocks[0].scale, 1);
    ol.calibrateQuantizationPlan(gptq, new Tensor('float32', Float32Array.of(-16, 0, 1, 7), [4]));
    assert.equal(gptq.run(0).blocks[0].scale, 2, 'zero point 8: max(7 / 7, 16 / 8)');

    // scalar codebooks: ratio to the extreme entries (NF4: +-1); casts: one
    const nf = new Tensor('float32', Float32Array.of(-3, 0.5, 2, 0), [4]);
    const nf4 = ol.makeQuantizationPlan(QF.NF4, 4, { blockSize: 4 });
    ol.calibrateQuantizationPlan(nf4, nf);
    assert.equal(nf4.run(0).blocks[0].scale, 3);
    const tiled = ol.makeQuantizationPlan(QF.TILED_FLOAT, 4, { blockSize: 4 });
    ol.calibrateQuantizationPlan(tiled, nf);
    assert.equal(tiled.run(0).blocks[0].scale, 1);
  });

  /** X float[8] -> ai.rt.Quantize(type = INT4 plan of 8 in blocks of 4) -> ai.rt.Dequantize(FLOAT) -> Y. */
  function int4CalibrationModel() {
    const plan = ol.makeQuantizationPlan(QF.INT4, 8, { blockSize: 4 });
    const storage = fromBinary(StructTypeProtoSchema, ol.makeQuantizationType(plan));
    plan.dispose();
    const type = { name: 'type', type: AttrType.TYPE_PROTO, tp: { value: { case: 'structType', value: storage } } };
    const dtype = { name: 'dtype', type: AttrType.INT, i: BigInt(DataType.FLOAT) };
    const model = create(ModelProtoSchema, {
      irVersion: 10n,
      opsetImport: [{ domain: '', version: 21n }, { domain: 'ai.rt', version: 1n }],
      graph: {
        name: 'quantization',
        node: [
          { opType: 'Quantize', domain: 'ai.rt', input: ['X'], output: ['Q'], name: 'encode', attribute: [type] },
          { opType: 'Dequantize', domain: 'ai.rt', input: ['Q'], output: ['Y'], name: 'decode', attribute: [dtype] },
        ],
        input: [tensorInfo('X', DataType.FLOAT, [8])],
        output: [tensorInfo('Y', DataType.FLOAT, [8])],
      },
    });
    return toBinary(ModelProtoSchema, model);
  }

  test('the Quantize -> Dequantize graph calibrates each block; all-zero input restores zeros', async () => {
    const session = await ol.InferenceSession.create(int4CalibrationModel());
    try {
      const x = Float32Array.of(-4, -0.5, 0.5, 3.5, 1, 2, 3, -1);
      const { Y } = await session.run({ X: new Tensor('float32', x, [8]) });
      assert.equal(Y.type, 'float32');
      assert.deepEqual(Y.dims, [8]);
      // block 0: scale max(3.5 / 7, 4 / 8) = 0.5 restores exactly
      assert.deepEqual(Array.from(Y.data.subarray(0, 4)), Array.from(x.subarray(0, 4)));
      // block 1: scale max(3 / 7, 1 / 8) = 3 / 7; codes round half to even
      const step = 3 / 7;
      [2, 5, 7, -2].forEach((code, i) => {
        assert.equal(Y.data[4 + i], Math.fround(code * step), `element ${4 + i}`);
        assert.ok(Math.abs(Y.data[4 + i] - x[4 + i]) <= step / 2 + 1e-6);
      });

      const zeros = await session.run({ X: new Tensor('float32', new Float32Array(8), [8]) });
      assert.deepEqual(Array.from(zeros.Y.data), Array(8).fill(0));
    } finally {
      await session.release();
    }
  });
});
