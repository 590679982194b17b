// Shared quantization parameter sets (seed 003, "Model-level shared
// parameters"): addQuantizationParameters declares a named set in a model's
// root quantization_annotation catalogue, quantizeTensorShared encodes with it
// into a compact value, materializeQuantizedValue exports a self-contained
// one. All validation is the C library's (c/src/quant/shared.c,
// c/src/ir/quant_params.c).
import { dtypeOf } from './dtypes.js';
import { invalidArgument } from './errors.js';
import { EncodedValue, loadProto, loadedProto } from './quantization.js';
import { currentRuntime } from './runtime.js';
import { SharedQuantizedValue, encodedInfo } from './shared-value.js';
import { Tensor, copyToValue, valueOfTensor } from './tensor.js';

// Quantize's optional inputs, in input order after X (the C role order).
const ROLES = ['scales', 'zeroPoints', 'offsets', 'codebooks', 'permutation', 'forward', 'inverse', 'outliers'];
const ELEM_TYPES = { float32: 1, float64: 11, float16: 10, bfloat16: 16 };

/** A numerical parameter as a Tensor: Tensor, number (float32 scalar) or typed array (1-D). */
function asParameter(value, role) {
  if (value instanceof Tensor) return value;
  if (typeof value === 'number') return new Tensor('float32', Float32Array.of(value), []);
  if (value instanceof Float32Array) return new Tensor('float32', value, [value.length]);
  if (value instanceof Float64Array) return new Tensor('float64', value, [value.length]);
  if (value instanceof BigInt64Array) return new Tensor('int64', value, [value.length]);
  throw invalidArgument(`addQuantizationParameters: '${role}' must be a Tensor, a number or a typed array`);
}

function bytesOf(value, schemaName, what, protoModules) {
  if (value instanceof Uint8Array) return value;
  const { schema, protobuf } = protoModules;
  const expected = { StructTypeProtoSchema: 'onnx.StructTypeProto', TypeProtoSchema: 'onnx.TypeProto' }[schemaName];
  if (value?.$typeName !== expected) throw invalidArgument(`addQuantizationParameters: ${what} must be a ${expected.slice(5)} object or its serialized bytes`);
  return protobuf.toBinary(schema[schemaName], value);
}

/** logicalType: a TypeProto (object or bytes) or the shorthand { type: 'float32', dims: [4] }. */
function logicalBytes(logicalType, protoModules) {
  if (logicalType && typeof logicalType.type === 'string' && Array.isArray(logicalType.dims)) {
    const elemType = ELEM_TYPES[logicalType.type];
    if (!elemType) throw invalidArgument(`addQuantizationParameters: logical type must be float32, float64, float16 or bfloat16 (got ${logicalType.type})`);
    const { schema, protobuf } = protoModules;
    const dim = logicalType.dims.map((d) => ({ value: { case: 'dimValue', value: BigInt(d) } }));
    const type = protobuf.create(schema.TypeProtoSchema, { value: { case: 'tensorType', value: { elemType, shape: { dim } } } });
    return protobuf.toBinary(schema.TypeProtoSchema, type);
  }
  return bytesOf(logicalType, 'TypeProtoSchema', 'logicalType', protoModules);
}

function modelBytes(model, what) {
  if (model instanceof Uint8Array) return model;
  if (model instanceof ArrayBuffer) return new Uint8Array(model);
  if (model?.$typeName === 'onnx.ModelProto') {
    const modules = loadedProto();
    if (modules) return modules.protobuf.toBinary(modules.schema.ModelProtoSchema, model);
    throw invalidArgument(`${what}: pass the model as serialized ModelProto bytes (the protobuf modules are not loaded yet)`);
  }
  throw invalidArgument(`${what}: model must be a ModelProto object or serialized ModelProto bytes`);
}

/**
 * add_quantization_parameters: declares the shared parameter set `name` in
 * the model's root graph (a quantization_annotation named
 * "onnx_light.quantization.parameters:<name>" and initializers
 * "onnx_light.quantization.parameters:<name>/<role>"). model is a ModelProto
 * object, changed in place only after the C library validated everything.
 * scales is required (shared mode never calibrates). Resolves to the compact
 * storage type (a StructTypeProto object) to declare compact graph outputs.
 */
export async function addQuantizationParameters(model, name, storageType, logicalType, parameters = {}) {
  const modules = await loadProto();
  const { schema, protobuf } = modules;
  if (model?.$typeName !== 'onnx.ModelProto' || !model.graph) throw invalidArgument('addQuantizationParameters: model must be a ModelProto object with a graph');
  if (typeof name !== 'string' || !name) throw invalidArgument('addQuantizationParameters: the parameter set name must be a nonempty string');
  if (parameters.scales === undefined || parameters.scales === null) throw invalidArgument(`addQuantizationParameters: set '${name}': shared quantization requires fixed scales`);
  const unknown = Object.keys(parameters).filter((k) => !ROLES.includes(k));
  if (unknown.length) throw invalidArgument(`addQuantizationParameters: unknown parameter '${unknown[0]}' (expected ${ROLES.join(', ')})`);
  const storage = bytesOf(storageType, 'StructTypeProtoSchema', 'storageType', modules);
  const logical = logicalBytes(logicalType, modules);
  const before = protobuf.toBinary(schema.ModelProtoSchema, model);
  const runtime = currentRuntime();
  const m = runtime.m;
  const owned = [];
  try {
    const table = runtime.alloc(4 * 9);
    owned.push(() => runtime.free(table));
    runtime.heap.fill(0, table, table + 36);
    ROLES.forEach((role, i) => {
      if (parameters[role] === undefined || parameters[role] === null) return;
      const tensor = asParameter(parameters[role], role);
      let handle = valueOfTensor(tensor, runtime);
      if (!handle) {
        handle = copyToValue(tensor, runtime);
        owned.push(() => m._olw_value_release(handle));
      }
      runtime.view().setUint32(table + 4 * (i + 1), handle, true);
    });
    const pointers = [before, storage, logical].map((bytes) => runtime.copyIn(bytes));
    pointers.forEach((p) => owned.push(() => runtime.free(p)));
    const namePtr = runtime.cstring(name);
    owned.push(() => runtime.free(namePtr));
    const [updated, compact] = runtime.scratch(16, (out) => {
      runtime.check(m._olw_quant_add_parameters(pointers[0], before.length, namePtr, pointers[1], storage.length,
        pointers[2], logical.length, table, out, out + 4, out + 8, out + 12));
      const take = (at) => {
        const [ptr, length] = [runtime.u32(out + at), runtime.u32(out + at + 4)];
        const copy = runtime.heap.slice(ptr, ptr + length);
        runtime.free(ptr);
        return copy;
      };
      return [take(0), take(8)];
    });
    const graph = protobuf.fromBinary(schema.ModelProtoSchema, updated).graph;
    model.graph.initializer.push(...graph.initializer.slice(model.graph.initializer.length));
    model.graph.quantizationAnnotation.push(graph.quantizationAnnotation[graph.quantizationAnnotation.length - 1]);
    return protobuf.fromBinary(schema.StructTypeProtoSchema, compact);
  } finally {
    for (const release of owned.reverse()) release();
  }
}

/**
 * quantize_tensor_shared: encodes a tensor of exactly the set's logical type
 * with the fixed parameters of the set `name` declared by model (ModelProto
 * bytes, or an object once the protobuf modules are loaded). Values outside
 * the set's range saturate. Returns a SharedQuantizedValue.
 */
export function quantizeTensorShared(tensor, model, name, { valueName } = {}) {
  if (!(tensor instanceof Tensor)) throw invalidArgument('quantizeTensorShared: expected a Tensor');
  if (typeof name !== 'string' || !name) throw invalidArgument('quantizeTensorShared: the parameter set name must be a nonempty string');
  const bytes = modelBytes(model, 'quantizeTensorShared');
  const d = dtypeOf(tensor.type);
  if (d.bits === 0) throw invalidArgument('quantizeTensorShared: string tensors cannot be quantized');
  const runtime = currentRuntime();
  const data = tensor.data;
  const owned = [];
  try {
    const modelPtr = runtime.copyIn(bytes);
    owned.push(modelPtr);
    const dataPtr = runtime.copyIn(new Uint8Array(data.buffer, data.byteOffset, data.byteLength));
    owned.push(dataPtr);
    const dims = tensor.dims;
    const dimsPtr = runtime.alloc(8 * Math.max(dims.length, 1));
    owned.push(dimsPtr);
    runtime.setDims(dimsPtr, dims);
    const namePtr = runtime.cstring(name);
    owned.push(namePtr);
    const valueNamePtr = valueName === undefined ? 0 : runtime.cstring(valueName);
    if (valueNamePtr) owned.push(valueNamePtr);
    const handle = runtime.scratch(4, (out) => {
      runtime.check(runtime.m._olw_quant_shared_encode(modelPtr, bytes.length, namePtr, d.code, dataPtr, dimsPtr, dims.length, valueNamePtr, out));
      return runtime.u32(out);
    });
    return new SharedQuantizedValue(runtime, handle);
  } finally {
    for (const ptr of owned) runtime.free(ptr);
  }
}

/**
 * materialize_quantized_value: a self-contained EncodedValue (inline storage
 * type and every numerical parameter, no parameter_ref) from a
 * SharedQuantizedValue, or from compact EncodedValueProto bytes plus
 * { model }. The source is not changed.
 */
export function materializeQuantizedValue(shared, { model } = {}) {
  const runtime = currentRuntime();
  const take = (call) => runtime.scratch(8, (out) => {
    runtime.check(call(out));
    const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
    const copy = runtime.heap.slice(ptr, ptr + length);
    runtime.free(ptr);
    return copy;
  });
  if (shared instanceof SharedQuantizedValue) {
    const bytes = take((out) => runtime.m._olw_quant_materialize(shared.handle, out, out + 4));
    return new EncodedValue(bytes, shared.type, shared.dims, shared.format);
  }
  if (!(shared instanceof Uint8Array)) throw invalidArgument('materializeQuantizedValue: expected a SharedQuantizedValue or compact EncodedValueProto bytes');
  const modelData = model === undefined || model === null ? null : modelBytes(model, 'materializeQuantizedValue');
  const valuePtr = runtime.copyIn(shared);
  const modelPtr = modelData ? runtime.copyIn(modelData) : 0;
  try {
    const bytes = take((out) => runtime.m._olw_quant_materialize_bytes(valuePtr, shared.length, modelPtr, modelData ? modelData.length : 0, out, out + 4));
    const handle = runtime.scratch(4, (out) => {
      const ptr = runtime.copyIn(bytes);
      try {
        runtime.check(runtime.m._olw_encoded_value_parse(ptr, bytes.length, out));
      } finally {
        runtime.free(ptr);
      }
      return runtime.u32(out);
    });
    try {
      const info = encodedInfo(runtime, handle);
      return new EncodedValue(bytes, info.type, info.dims, info.format);
    } finally {
      runtime.m._olw_value_release(handle);
    }
  } finally {
    runtime.free(valuePtr);
    runtime.free(modelPtr);
  }
}
