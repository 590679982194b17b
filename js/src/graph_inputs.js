// The root graph's inputs with their declared types, read straight from
// serialized model bytes: the inputs a session lists (those without an
// initializer), without copying the model into wasm memory. emptyCaches
// needs only this, often while a state already holds the model there.
import { dtypeOfCode } from './dtypes.js';
import { fields } from './model.js';

const textDecoder = new TextDecoder();
const text = (bytes, f) => textDecoder.decode(bytes.subarray(f.start, f.end));
const messages = (bytes, f, number) => [...fields(bytes, f.start, f.end)].filter((x) => x.field === number && x.wire === 2);

/** TensorShapeProto -> dims: numbers, dim_param strings, -1 when neither. */
function shapeOf(bytes, shape) {
  return messages(bytes, shape, 1).map((dim) => {
    let d = -1;
    for (const x of fields(bytes, dim.start, dim.end)) {
      if (x.field === 1 && x.wire === 0) d = Number(BigInt.asIntN(64, x.value));
      if (x.field === 2 && x.wire === 2) d = text(bytes, x);
    }
    return d;
  });
}

/** TypeProto -> { kind (0: tensor, 5: struct), type (ORT type string), shape }. */
function typeOf(bytes, type) {
  const tensor = type ? messages(bytes, type, 1).at(-1) : undefined;
  if (!tensor && type && messages(bytes, type, 1000).length) return { kind: 5, type: undefined, shape: [] };
  if (!tensor) return { kind: -1, type: undefined, shape: [] };
  let code = 0;
  let shape = [];
  for (const x of fields(bytes, tensor.start, tensor.end)) {
    if (x.field === 1 && x.wire === 0) code = Number(x.value);
    if (x.field === 2 && x.wire === 2) shape = shapeOf(bytes, x);
  }
  return { kind: 0, type: dtypeOfCode(code)?.type, shape };
}

/**
 * [{ name, kind, type, shape }] for the graph inputs of bytes that have no
 * initializer (tensor or encoded), in declaration order.
 * @param {Uint8Array} bytes
 */
export function graphInputsOf(bytes) {
  const inputs = [];
  const initialized = new Set();
  for (const f of fields(bytes, 0, bytes.length)) {
    if (f.field !== 7 || f.wire !== 2) continue; // ModelProto.graph
    for (const g of fields(bytes, f.start, f.end)) {
      if (g.wire !== 2) continue;
      if (g.field === 11) {
        let name = '';
        let type;
        for (const x of fields(bytes, g.start, g.end)) {
          if (x.field === 1 && x.wire === 2) name = text(bytes, x);
          if (x.field === 2 && x.wire === 2) type = x;
        }
        inputs.push({ name, ...typeOf(bytes, type) });
      }
      // TensorProto.name is field 8, EncodedValueProto.name field 7
      const nameField = g.field === 5 ? 8 : g.field === 1000 ? 7 : 0;
      if (nameField) for (const x of messages(bytes, g, nameField)) initialized.add(text(bytes, x));
    }
  }
  return inputs.filter((input) => !initialized.has(input.name));
}
