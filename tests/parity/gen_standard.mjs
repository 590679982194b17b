// Random cases for opset 18-23 forms of standard operators that the ONNX 1.12
// test data (opset <= 17) does not cover; see random_graphs.mjs.
import { F, floatTensor, intTensor, nibbleTensor, oneNodeModel, randFloat } from './gen_util.mjs';

const FLOATS = ['float32', 'float16'];
const I = (name, t, init = false) => (t ? { name, ...t, init } : null);
const out = (name, type) => ({ name, type });
function mk(c, spec) {
  return { ...c, domain: '', op: spec.op, ...oneNodeModel(spec) };
}
const randDims = (r, rank, lo = 1, hi = 5) => Array.from({ length: rank }, () => r.int(lo, hi));

function reduces(r) {
  const list = [];
  for (const op of ['ReduceMean', 'ReduceSum', 'ReduceMax', 'ReduceL2', 'ReduceLogSumExp'])
    for (const dtype of FLOATS)
      for (let k = 0; k < 2; k++) {
        const rank = r.int(1, 4);
        const dims = randDims(r, rank);
        const nAxes = r.int(0, rank);
        const axes = [...new Set(Array.from({ length: nAxes }, () => r.int(-rank, rank - 1)).map((a) => (a + rank) % rank))];
        const opset = r.pick([18, 21, 23]);
        const keepdims = r.int(0, 1);
        list.push(
          mk({ name: `${op}-${opset} ${dtype} [${dims}] axes [${axes}] keepdims ${keepdims}`, dtype }, {
            op,
            opset,
            attrs: { keepdims },
            inputs: [I('x', randFloat(r, dtype, dims, -2, 2)), axes.length ? I('axes', intTensor('int64', [axes.length], (i) => axes[i]), true) : null],
            outputs: [out('y', dtype)],
          }),
        );
      }
  return list;
}

function splits(r) {
  const list = [];
  for (let k = 0; k < 4; k++) {
    const rank = r.int(1, 3);
    const dims = randDims(r, rank, 2, 7);
    const axis = r.int(0, rank - 1);
    let n = r.int(2, Math.min(4, dims[axis]));
    // every output non-empty: (n - 1) * ceil(d / n) < d (onnxruntime rejects empty chunks)
    while (n > 2 && (n - 1) * Math.ceil(dims[axis] / n) >= dims[axis]) n -= 1;
    list.push(
      mk({ name: `Split-18 float32 [${dims}] axis ${axis} num_outputs ${n}`, dtype: 'float32' }, {
        op: 'Split',
        opset: 18,
        attrs: { axis, num_outputs: n },
        inputs: [I('x', randFloat(r, 'float32', dims))],
        outputs: Array.from({ length: n }, (_, i) => out(`y${i}`, 'float32')),
      }),
    );
  }
  return list;
}

function pads(r) {
  const list = [];
  for (const mode of ['constant', 'reflect', 'edge', 'wrap'])
    for (let k = 0; k < 2; k++) {
      const rank = r.int(1, 3);
      const dims = randDims(r, rank, 2, 5);
      const axes = [...new Set([r.int(0, rank - 1), r.int(-rank, rank - 1)].map((a) => (a + rank) % rank))];
      const maxPad = (a) => (mode === 'reflect' ? dims[a] - 1 : mode === 'wrap' ? dims[a] - 1 : 3);
      const p = [...axes.map((a) => r.int(0, maxPad(a))), ...axes.map((a) => r.int(0, maxPad(a)))];
      const opset = mode === 'wrap' ? 19 : 18;
      list.push(
        mk({ name: `Pad-${opset} float32 ${mode} [${dims}] axes [${axes}] pads [${p}]`, dtype: 'float32' }, {
          op: 'Pad',
          opset,
          attrs: { mode },
          inputs: [
            I('x', randFloat(r, 'float32', dims)),
            I('pads', intTensor('int64', [p.length], (i) => p[i]), true),
            mode === 'constant' ? I('value', randFloat(r, 'float32', [])) : null,
            I('axes', intTensor('int64', [axes.length], (i) => axes[i]), true),
          ],
          outputs: [out('y', 'float32')],
        }),
      );
    }
  return list;
}

function centerCropPads(r) {
  const list = [];
  for (let k = 0; k < 6; k++) {
    const rank = r.int(1, 3);
    const dims = randDims(r, rank, 1, 6);
    const all = k % 2 === 0;
    const axes = all ? [...dims.keys()] : [r.int(-rank, rank - 1)];
    const shape = axes.map(() => r.int(1, 8));
    list.push(
      mk({ name: `CenterCropPad-18 float32 [${dims}] ${all ? '' : `axes [${axes}] `}shape [${shape}]`, dtype: 'float32' }, {
        op: 'CenterCropPad',
        opset: 18,
        attrs: all ? {} : { axes },
        inputs: [I('x', randFloat(r, 'float32', dims)), I('shape', intTensor('int64', [shape.length], (i) => shape[i]), true)],
        outputs: [out('y', 'float32')],
      }),
    );
  }
  return list;
}

function groupNorm(r) {
  const list = [];
  for (let k = 0; k < 3; k++) {
    const G = r.int(1, 3);
    const C = G * r.int(1, 3);
    const dims = [r.int(1, 2), C, r.int(1, 4), r.int(1, 4)];
    list.push(
      mk({ name: `GroupNormalization-21 float32 [${dims}] groups ${G}`, dtype: 'float32' }, {
        op: 'GroupNormalization',
        opset: 21,
        attrs: { num_groups: G, epsilon: F(1e-5) },
        inputs: [I('x', randFloat(r, 'float32', dims, -2, 2)), I('scale', randFloat(r, 'float32', [C])), I('bias', randFloat(r, 'float32', [C]))],
        outputs: [out('y', 'float32')],
      }),
    );
  }
  return list;
}


function unaries(r) {
  const list = [];
  for (const [op, opset, attrs] of [['Mish', 18, {}], ['Gelu', 20, {}], ['Gelu', 20, { approximate: 'tanh' }]])
    for (const dtype of FLOATS) {
      const dims = randDims(r, r.int(1, 3), 1, 6);
      list.push(
        mk({ name: `${op}-${opset} ${dtype} [${dims}] ${JSON.stringify(attrs)}`, dtype }, {
          op, opset, attrs, inputs: [I('x', randFloat(r, dtype, dims, -4, 4))], outputs: [out('y', dtype)],
        }),
      );
    }
  return list;
}

function scatters(r) {
  const list = [];
  for (const reduction of ['max', 'min', 'add', 'mul', 'none']) {
    const rows = r.int(2, 6), cols = r.int(1, 5);
    const n = r.int(1, 3);
    // ScatterElements along axis 0 with distinct targets per column when reduction is none
    const idx = intTensor('int64', [n, cols], (i) => (reduction === 'none' ? Math.floor(i / cols) % rows : r.int(0, rows - 1)));
    list.push(
      mk({ name: `ScatterElements-18 float32 reduction ${reduction} [${rows},${cols}]`, dtype: 'float32' }, {
        op: 'ScatterElements', opset: 18, attrs: { axis: 0, reduction },
        inputs: [I('x', randFloat(r, 'float32', [rows, cols])), I('i', idx), I('u', randFloat(r, 'float32', [n, cols]))],
        outputs: [out('y', 'float32')],
      }),
    );
    const nd = intTensor('int64', [n, 1], (i) => (reduction === 'none' ? i % rows : r.int(0, rows - 1)));
    list.push(
      mk({ name: `ScatterND-18 float32 reduction ${reduction} [${rows},${cols}]`, dtype: 'float32' }, {
        op: 'ScatterND', opset: 18, attrs: { reduction },
        inputs: [I('x', randFloat(r, 'float32', [rows, cols])), I('i', nd), I('u', randFloat(r, 'float32', [n, cols]))],
        outputs: [out('y', 'float32')],
      }),
    );
  }
  return list;
}

function quantizeLinear(r) {
  const list = [];
  for (const type of ['int8', 'uint8', 'int4', 'uint4']) {
    const block = r.pick([2, 4]);
    const rows = r.int(1, 4), cols = block * r.int(1, 3);
    const sdims = [rows, cols / block];
    const ns = rows * (cols / block);
    const qmax = type === 'int8' ? 127 : type === 'uint8' ? 255 : type === 'int4' ? 7 : 15;
    const qmin = type === 'int8' ? -128 : type === 'int4' ? -8 : 0;
    const scale = floatTensor('float32', sdims, () => r.uniform(0.02, 0.2));
    const zpVals = Array.from({ length: ns }, () => r.int(qmin, qmax));
    const zp = type.endsWith('4')
      ? nibbleTensor(type, sdims, (i) => zpVals[i])
      : { type, dims: sdims, data: type === 'int8' ? Int8Array.from(zpVals) : Uint8Array.from(zpVals) };
    const dataVals = Array.from({ length: rows * cols }, () => r.int(qmin, qmax));
    const data = type.endsWith('4')
      ? nibbleTensor(type, [rows, cols], (i) => dataVals[i])
      : { type, dims: [rows, cols], data: type === 'int8' ? Int8Array.from(dataVals) : Uint8Array.from(dataVals) };
    list.push(
      mk({ name: `DequantizeLinear-21 ${type} blocked [${rows},${cols}] block ${block}`, dtype: 'float32' }, {
        op: 'DequantizeLinear', opset: 21, attrs: { axis: 1, block_size: block },
        inputs: [I('x', data, true), I('s', scale, true), I('z', zp, true)],
        outputs: [out('y', 'float32')],
      }),
    );
    // onnxruntime-node 1.30 aborts when returning an int4/uint4 output tensor
    if (type.endsWith('4')) continue;
    list.push(
      mk({ name: `QuantizeLinear-21 ${type} blocked [${rows},${cols}] block ${block}`, dtype: type }, {
        op: 'QuantizeLinear', opset: 21, attrs: { axis: 1, block_size: block },
        inputs: [I('x', randFloat(r, 'float32', [rows, cols], -3, 3)), I('s', scale, true), I('z', zp, true)],
        outputs: [out('y', type)],
      }),
    );
  }
  return list;
}

function gridSample(r) {
  const list = [];
  for (const mode of ['linear', 'nearest', 'cubic'])
    for (const padding_mode of ['zeros', 'border', 'reflection']) {
      const N = r.int(1, 2), C = r.int(1, 3), H = r.int(2, 5), W = r.int(2, 5), Ho = r.int(1, 4), Wo = r.int(1, 4);
      const align_corners = r.int(0, 1);
      list.push(
        mk({
          name: `GridSample-20 float32 ${mode} ${padding_mode} align ${align_corners} [${N},${C},${H},${W}] -> [${Ho},${Wo}]`,
          dtype: 'float32',
          known: mode === 'cubic' && padding_mode === 'border'
            ? 'cubic with border padding: near the border onnx-light clamps each of the 4x4 taps to the edge and differs from onnxruntime; not reconciled yet'
            : undefined,
        }, {
          op: 'GridSample', opset: 20, attrs: { mode, padding_mode, align_corners },
          inputs: [I('x', randFloat(r, 'float32', [N, C, H, W])), I('grid', randFloat(r, 'float32', [N, Ho, Wo, 2], -1.2, 1.2))],
          outputs: [out('y', 'float32')],
        }),
      );
    }
  return list;
}

function resizes(r) {
  const list = [];
  for (const mode of ['nearest', 'linear', 'cubic'])
    for (let k = 0; k < 3; k++) {
      const dims = [1, r.int(1, 2), r.int(2, 6), r.int(2, 6)];
      const antialias = mode !== 'nearest' && k === 2 ? 1 : 0;
      const useSizes = k === 1;
      const scales = [1, 1, r.pick([0.5, 0.75, 1.5, 2]), r.pick([0.5, 1.25, 2, 3])];
      const sizes = [dims[0], dims[1], r.int(1, 9), r.int(1, 9)];
      const ctm = r.pick(['half_pixel', 'asymmetric', 'align_corners', 'pytorch_half_pixel']);
      list.push(
        mk({
          name: `Resize-19 float32 ${mode} ${ctm} [${dims}] ${useSizes ? `sizes [${sizes}]` : `scales [${scales}]`} antialias ${antialias}`,
          dtype: 'float32',
          known: ctm === 'align_corners' && !useSizes && scales.some((f, i) => Math.floor(f * dims[i]) !== f * dims[i])
            ? 'align_corners with scales whose output length is rounded down: onnx-light maps with the unrounded length as the ONNX reference and backend tests do, onnxruntime with the rounded one'
            : undefined,
        }, {
          op: 'Resize', opset: 19,
          attrs: { mode, coordinate_transformation_mode: ctm, antialias: antialias || undefined, nearest_mode: mode === 'nearest' ? r.pick(['round_prefer_floor', 'floor', 'ceil']) : undefined },
          inputs: [
            I('x', randFloat(r, 'float32', dims)),
            null,
            useSizes ? null : I('scales', { type: 'float32', dims: [4], data: Float32Array.from(scales) }, true),
            useSizes ? I('sizes', intTensor('int64', [4], (i) => sizes[i]), true) : null,
          ],
          outputs: [out('y', 'float32')],
        }),
      );
    }
  return list;
}

export function cases(r) {
  return [...reduces(r), ...splits(r), ...pads(r), ...groupNorm(r), ...unaries(r), ...scatters(r), ...quantizeLinear(r), ...gridSample(r), ...resizes(r), ...centerCropPads(r)];
}
