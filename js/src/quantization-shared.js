// Shared quantization parameter sets (seed 003, "Model-level shared
// parameters"): addQuantizationParameters declares a named set in a model's
// root quantization_annotation catalogue, quantizeTensorShared encodes with it
// into a compact value, materializeQuantizedValue exports a self-contained
// one. All validation is the C library's (c/src/quant/shared.c,
// c/src/ir/quant_params.c).
import { dtypeOf } from './dtypes.js';
import { invalidArgument } from './errors.js';
import { serializeModelHandle } from './model.js';
import { EncodedValue, loadProto, modelArg, withModel, withTensorValue } from './quantization.js';
import { currentRuntime } from './runtime.js';
import { SharedQuantizedValue, encodedInfo, serializeEncoded } from './shared-value.js';
import { Tensor, copyToValue, valueOfTensor } from './tensor.js';

// Quantize's optional inputs, in input order after X (ol_quant_parameters order).
const ROLES = ['scales', 'zeroPoints', 'offsets', 'codebooks', 'permutation', 'forward', 'inverse', 'outliers'];

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

/**
 * logicalType as the C API takes it ({ code, dims }): the shorthand
 * { type: 'float32', dims: [4] }, or a TypeProto (object or bytes) holding a
 * tensor type with concrete dims.
 */
function logicalTensorType(logicalType, protoModules) {
  if (logicalType && typeof logicalType.type === 'string' && Array.isArray(logicalType.dims)) {
    return { code: dtypeOf(logicalType.type).code, dims: logicalType.dims };
  }
  const { schema, protobuf } = protoModules;
  const type = protobuf.fromBinary(schema.TypeProtoSchema, bytesOf(logicalType, 'TypeProtoSchema', 'logicalType', protoModules));
  const tensorType = type.value.case === 'tensorType' ? type.value.value : null;
  const dims = tensorType?.shape?.dim.map((d) => (d.value.case === 'dimValue' ? Number(d.value.value) : NaN));
  if (!tensorType || !dims || dims.some((d) => !Number.isSafeInteger(d))) {
    throw invalidArgument('addQuantizationParameters: logicalType must be a tensor type with concrete dims');
  }
  return { code: tensorType.elemType, dims };
}

function modelBytes(model, what) {
  if (model === undefined || model === null) throw invalidArgument(`${what}: model must be a ModelProto object or serialized ModelProto bytes`);
  return modelArg(model, what);
}

/**
 * add_quantization_parameters: declares the shared parameter set `name` in
 * the model's root graph (a quantization_annotation named
 * "onnx_light.quantization.parameters:<name>" and initializers
 * "onnx_light.quantization.parameters:<name>/<role>"). model is a ModelProto
 * object, changed in place only after the C library validated everything
 * (ol_quant_add_parameters). scales is required (shared mode never
 * calibrates). Resolves to the compact storage type (a StructTypeProto
 * object) to declare compact graph outputs.
 */
export async function addQuantizationParameters(model, name, storageType, logicalType, parameters = {}) {
  const modules = await loadProto();
  const { schema, protobuf } = modules;
  if (model?.$typeName !== 'onnx.ModelProto' || !model.graph) throw invalidArgument('addQuantizationParameters: model must be a ModelProto object with a graph');
  if (typeof name !== 'string') throw invalidArgument('addQuantizationParameters: the parameter set name must be a string');
  const unknown = Object.keys(parameters).filter((k) => !ROLES.includes(k));
  if (unknown.length) throw invalidArgument(`addQuantizationParameters: unknown parameter '${unknown[0]}' (expected ${ROLES.join(', ')})`);
  const storage = bytesOf(storageType, 'StructTypeProtoSchema', 'storageType', modules);
  const logical = logicalTensorType(logicalType, modules);
  const runtime = currentRuntime();
  const m = runtime.m;
  const owned = [];
  try {
    const table = runtime.alloc(4 * ROLES.length);
    owned.push(() => runtime.free(table));
    runtime.heap.fill(0, table, table + 4 * ROLES.length);
    ROLES.forEach((role, i) => {
      if (parameters[role] === undefined || parameters[role] === null) return;
      const tensor = asParameter(parameters[role], role);
      let handle = valueOfTensor(tensor, runtime);
      if (!handle) {
        handle = copyToValue(tensor, runtime);
        owned.push(() => m._olw_value_release(handle));
      }
      runtime.view().setUint32(table + 4 * i, handle, true);
    });
    const storagePtr = runtime.copyIn(storage);
    owned.push(() => runtime.free(storagePtr));
    const dimsPtr = runtime.alloc(8 * Math.max(logical.dims.length, 1));
    owned.push(() => runtime.free(dimsPtr));
    runtime.setDims(dimsPtr, logical.dims);
    const namePtr = runtime.cstring(name);
    owned.push(() => runtime.free(namePtr));
    const [updated, compact] = withModel(runtime, protobuf.toBinary(schema.ModelProtoSchema, model), (modelHandle) =>
      runtime.scratch(12, (out) => {
        runtime.check(m._olw_quant_add_parameters(modelHandle, namePtr, storagePtr, storage.length, logical.code, dimsPtr,
          logical.dims.length, table, out, out + 4, out + 8));
        const [handle, ptr, length] = [runtime.u32(out), runtime.u32(out + 4), runtime.u32(out + 8)];
        const compactBytes = runtime.heap.slice(ptr, ptr + length);
        m._olw_ol_free(ptr);
        try {
          return [serializeModelHandle(runtime, handle), compactBytes];
        } finally {
          m._olw_model_destroy(handle);
        }
      }),
    );
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
  const runtime = currentRuntime();
  const namePtr = runtime.cstring(name);
  const valueNamePtr = valueName === undefined ? 0 : runtime.cstring(valueName);
  try {
    const handle = withModel(runtime, bytes, (modelHandle) =>
      withTensorValue(runtime, tensor, (value) =>
        runtime.u32Result((out) => runtime.m._olw_quant_quantize_shared(value, modelHandle, namePtr, valueNamePtr, out)),
      ),
    );
    return new SharedQuantizedValue(runtime, handle);
  } finally {
    runtime.free(namePtr);
    runtime.free(valueNamePtr);
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
  const m = runtime.m;
  const take = (handle) => {
    try {
      const info = encodedInfo(runtime, handle);
      return new EncodedValue(serializeEncoded(runtime, handle), info.type, info.dims, info.format);
    } finally {
      m._olw_value_release(handle);
    }
  };
  if (shared instanceof SharedQuantizedValue) {
    return take(runtime.u32Result((out) => m._olw_quant_materialize(shared.handle, 0, out)));
  }
  if (!(shared instanceof Uint8Array)) throw invalidArgument('materializeQuantizedValue: expected a SharedQuantizedValue or compact EncodedValueProto bytes');
  const modelData = model === undefined || model === null ? null : modelBytes(model, 'materializeQuantizedValue');
  const ptr = runtime.copyIn(shared);
  let value = 0;
  try {
    value = runtime.u32Result((out) => m._olw_encoded_value_parse(ptr, shared.length, out));
  } finally {
    runtime.free(ptr);
  }
  try {
    return take(withModel(runtime, modelData, (modelHandle) => runtime.u32Result((out) => m._olw_quant_materialize(value, modelHandle, out))));
  } finally {
    m._olw_value_release(value);
  }
}
