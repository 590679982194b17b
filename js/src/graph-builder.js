// GraphBuilder: builds or edits a model (seed 002). The behaviour lives in C
// (ol_builder_*: storage, the shared namespace, removal rules, catalogue
// compaction, ToGraph's refusal of model-level references); this class
// marshals proto objects ('onnx-light/proto') to serialized messages and back.
import { dtypeOf } from './dtypes.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { modelBytes } from './model.js';
import { EncodedValue, loadProto, loadedProto, takeBytes } from './quantization.js';
import { currentRuntime, init } from './runtime.js';

// ol_builder_part values (c/include/onnxlight.h) and the message schema of each.
const PART = Object.freeze({
  input: [0, 'ValueInfoProtoSchema'],
  output: [1, 'ValueInfoProtoSchema'],
  node: [2, 'NodeProtoSchema'],
  initializer: [3, 'TensorProtoSchema'],
  structuredInitializer: [4, 'EncodedValueProtoSchema'],
  cacheInitializer: [5, 'PagedCacheProtoSchema'],
  persistentBinding: [6, 'PersistentBindingProtoSchema'],
  structType: [7, 'StructTypeProtoSchema'],
  function: [8, 'FunctionProtoSchema'],
  valueInfo: [9, 'ValueInfoProtoSchema'],
  sparseInitializer: [10, 'SparseTensorProtoSchema'],
  opsetImport: [11, 'OperatorSetIdProtoSchema'],
});

const registry = new FinalizationRegistry(({ runtime, handle }) => runtime.m._olw_builder_destroy(handle));

function modules(what) {
  const loaded = loadedProto();
  if (!loaded) {
    throw new OnnxLightError('OL_FAILED_PRECONDITION', `${what}: the protobuf schema is not loaded yet: await GraphBuilder.load() first (GraphBuilder.create and GraphBuilder.fromModel do it)`);
  }
  return loaded;
}

/** A message's bytes: bytes as given, an EncodedValue's bytes, or a message object / init object of the part's schema. */
function messageBytes(value, schemaName, what) {
  if (value instanceof Uint8Array) return value;
  if (value instanceof EncodedValue) return value.bytes;
  if (value === null || typeof value !== 'object') throw invalidArgument(`${what}: expected a ${schemaName.replace('Schema', '')} object or its bytes`);
  const { schema, protobuf } = modules(what);
  const message = value.$typeName ? value : protobuf.create(schema[schemaName], value);
  if (message.$typeName !== schema[schemaName].typeName) {
    throw invalidArgument(`${what}: expected a ${schema[schemaName].typeName} object, got ${message.$typeName}`);
  }
  return protobuf.toBinary(schema[schemaName], message);
}

function bytesResult(runtime, call) {
  return runtime.scratch(8, (out) => {
    runtime.check(call(out, out + 4));
    return takeBytes(runtime, out);
  });
}

export class GraphBuilder {
  #runtime;
  #handle;

  /** Loads what the builder needs: the wasm module (init) and the protobuf schema. */
  static async load() {
    await Promise.all([init(), loadProto()]);
  }

  /** new GraphBuilder(options) after loading. */
  static async create(options) {
    await GraphBuilder.load();
    return new GraphBuilder(options);
  }

  /**
   * Imports a model: bytes, a path or URL (Node), or a ModelProto object.
   * Every part is kept unchanged (structured initializers stay encoded,
   * external data stays external).
   */
  static async fromModel(model) {
    const bytes = await modelBytes(model, 'GraphBuilder.fromModel');
    await GraphBuilder.load();
    const runtime = currentRuntime();
    const ptr = runtime.copyIn(bytes);
    try {
      const handle = runtime.u32Result((out) => runtime.m._olw_builder_from_model(ptr, bytes.byteLength, out));
      return new GraphBuilder(undefined, handle);
    } finally {
      runtime.free(ptr);
    }
  }

  /**
   * An empty model (graph named 'graph').
   * @param {{irVersion?: number, opsetImports?: {domain?: string, version: number}[]}} [options]
   */
  constructor({ irVersion = 10, opsetImports = [{ domain: '', version: 18 }] } = {}, handle = 0) {
    const runtime = currentRuntime();
    modules('new GraphBuilder');
    this.#runtime = runtime;
    if (!handle) {
      if (!Array.isArray(opsetImports) || opsetImports.length > 64) throw invalidArgument('new GraphBuilder: opsetImports must be an array of at most 64 { domain, version }');
      const names = opsetImports.map((o) => runtime.cstring(String(o?.domain ?? '')));
      try {
        handle = runtime.scratch(16 + 12 * names.length, (out) => {
          const domains = out + 4;
          const versions = (domains + 4 * names.length + 7) & ~7;
          names.forEach((ptr, i) => runtime.view().setUint32(domains + 4 * i, ptr, true));
          opsetImports.forEach((o, i) => runtime.view().setFloat64(versions + 8 * i, Number(o?.version), true));
          runtime.check(runtime.m._olw_builder_create(Number(irVersion), domains, versions, names.length, out));
          return runtime.u32(out);
        });
      } finally {
        names.forEach((ptr) => runtime.free(ptr));
      }
    }
    this.#handle = handle;
    registry.register(this, { runtime, handle }, this);
  }

  /** Releases the builder (also done by the garbage collector). */
  dispose() {
    if (!this.#handle) return;
    registry.unregister(this);
    this.#runtime.m._olw_builder_destroy(this.#handle);
    this.#handle = 0;
  }

  #live(what) {
    if (!this.#handle) throw new OnnxLightError('OL_FAILED_PRECONDITION', `GraphBuilder.${what}: the builder was disposed`);
    return this.#handle;
  }

  /** Adds a part: appended (at undefined), inserted at a position, or replacing the part at a position. */
  #add(kind, value, what, { at, replace = false } = {}) {
    const [part, schemaName] = PART[kind];
    const bytes = messageBytes(value, schemaName, `GraphBuilder.${what}`);
    const runtime = this.#runtime;
    const handle = this.#live(what);
    if (at !== undefined && (!Number.isInteger(at) || at < 0)) throw invalidArgument(`GraphBuilder.${what}: the position must be a non-negative integer, got ${at}`);
    const ptr = runtime.copyIn(bytes);
    try {
      const m = runtime.m;
      if (replace) runtime.check(m._olw_builder_replace(handle, part, at, ptr, bytes.byteLength));
      else if (at !== undefined) runtime.check(m._olw_builder_add_at(handle, part, ptr, bytes.byteLength, at));
      else runtime.check(m._olw_builder_add(handle, part, ptr, bytes.byteLength));
    } finally {
      runtime.free(ptr);
    }
    return this;
  }

  #remove(kind, key, what) {
    const runtime = this.#runtime;
    const handle = this.#live(what);
    const ptr = runtime.cstring(String(key));
    try {
      runtime.check(runtime.m._olw_builder_remove(handle, PART[kind][0], ptr));
    } finally {
      runtime.free(ptr);
    }
    return this;
  }

  #list(kind) {
    const [part, schemaName] = PART[kind];
    const runtime = this.#runtime;
    const handle = this.#live(kind);
    const { schema, protobuf } = modules(`GraphBuilder.${kind}`);
    const count = runtime.m._olw_builder_count(handle, part);
    const items = [];
    for (let i = 0; i < count; i++) {
      const bytes = bytesResult(runtime, (ptr, size) => runtime.m._olw_builder_get(handle, part, i, ptr, size));
      items.push(protobuf.fromBinary(schema[schemaName], bytes));
    }
    return items;
  }

  /** A graph input: a ValueInfoProto (object, init object or bytes). */
  addInput(valueInfo) {
    return this.#add('input', valueInfo, 'addInput');
  }
  addOutput(valueInfo) {
    return this.#add('output', valueInfo, 'addOutput');
  }
  /** A NodeProto (object or init object such as { opType: 'Add', input: ['a', 'b'], output: ['c'] }). */
  addNode(node) {
    return this.#add('node', node, 'addNode');
  }
  /** A node placed at position index of the node list (e.g. before the nodes reading its outputs). */
  insertNode(index, node) {
    return this.#add('node', node, 'insertNode', { at: index });
  }
  /**
   * Replaces the node at position index by node (same position); the new
   * node may reuse the old one's output names.
   */
  replaceNode(index, node) {
    return this.#add('node', node, 'replaceNode', { at: index, replace: true });
  }
  addInitializer(tensorProto) {
    return this.#add('initializer', tensorProto, 'addInitializer');
  }
  /**
   * Stores an encoded value unchanged (an EncodedValue from quantizeTensor,
   * an EncodedValueProto object or its bytes); returns its name.
   */
  makeStructuredInitializer(value) {
    this.#add('structuredInitializer', value, 'makeStructuredInitializer');
    const last = this.#runtime.m._olw_builder_count(this.#handle, PART.structuredInitializer[0]) - 1;
    const bytes = bytesResult(this.#runtime, (ptr, size) => this.#runtime.m._olw_builder_get(this.#handle, PART.structuredInitializer[0], last, ptr, size));
    const { schema, protobuf } = modules('GraphBuilder.makeStructuredInitializer');
    return protobuf.fromBinary(schema.EncodedValueProtoSchema, bytes).name;
  }
  /** A paged cache initializer (PagedCacheProto object or bytes). */
  addCacheInitializer(pagedCacheProto) {
    return this.#add('cacheInitializer', pagedCacheProto, 'addCacheInitializer');
  }
  /** A model-level struct type (StructTypeProto with a nonzero typeId). */
  addStructType(structType) {
    return this.#add('structType', structType, 'addStructType');
  }
  /** A model-local function (FunctionProto). */
  addFunction(functionProto) {
    return this.#add('function', functionProto, 'addFunction');
  }
  /** An opset import ({ domain, version }); a domain is imported once. */
  addOpsetImport(opset) {
    const value = opset?.$typeName ? opset : { domain: String(opset?.domain ?? ''), version: BigInt(opset?.version ?? 0) };
    return this.#add('opsetImport', value, 'addOpsetImport');
  }
  /** Feeds graph output `outputName` back into graph input `inputName` across runs. */
  addPersistentBinding(inputName, outputName) {
    const runtime = this.#runtime;
    const handle = this.#live('addPersistentBinding');
    const a = runtime.cstring(String(inputName));
    const b = runtime.cstring(String(outputName));
    try {
      runtime.check(runtime.m._olw_builder_add_persistent_binding(handle, a, b));
    } finally {
      runtime.free(a);
      runtime.free(b);
    }
    return this;
  }

  removeInput(name) {
    return this.#remove('input', name, 'removeInput');
  }
  removeOutput(name) {
    return this.#remove('output', name, 'removeOutput');
  }
  /** By node name, or for an unnamed node by one of its outputs. */
  removeNode(nameOrOutput) {
    return this.#remove('node', nameOrOutput, 'removeNode');
  }
  /** An initializer of any kind (dense, structured, sparse, cache). */
  removeInitializer(name) {
    for (const kind of ['initializer', 'structuredInitializer', 'sparseInitializer', 'cacheInitializer']) {
      try {
        return this.#remove(kind, name, 'removeInitializer');
      } catch (error) {
        if (error?.code !== 'OL_NOT_FOUND') throw error;
      }
    }
    throw new OnnxLightError('OL_NOT_FOUND', `GraphBuilder.removeInitializer: the builder has no initializer '${name}'`);
  }
  removePersistentBinding(inputName) {
    return this.#remove('persistentBinding', inputName, 'removePersistentBinding');
  }
  removeStructType(typeId) {
    return this.#remove('structType', String(typeId), 'removeStructType');
  }
  removeFunction(name) {
    return this.#remove('function', name, 'removeFunction');
  }
  removeOpsetImport(domain) {
    return this.#remove('opsetImport', domain, 'removeOpsetImport');
  }

  get inputs() {
    return this.#list('input');
  }
  get outputs() {
    return this.#list('output');
  }
  get nodes() {
    return this.#list('node');
  }
  get initializers() {
    return this.#list('initializer');
  }
  /** StructuredInitializers(): the stored EncodedValueProto messages. */
  get structuredInitializers() {
    return this.#list('structuredInitializer');
  }
  get cacheInitializers() {
    return this.#list('cacheInitializer');
  }
  get persistentBindings() {
    return this.#list('persistentBinding');
  }
  get structTypes() {
    return this.#list('structType');
  }
  get functions() {
    return this.#list('function');
  }
  get valueInfos() {
    return this.#list('valueInfo');
  }
  get opsetImports() {
    return this.#list('opsetImport');
  }

  /**
   * Removes initializers equal to an earlier one of the same kind and renames
   * their readers: equal data type, dims and payload; for structured ones the
   * resolved physical type, payload and interpretation metadata too (equal
   * bytes alone are not enough). Returns how many were removed.
   */
  dedupInitializers() {
    const handle = this.#live('dedupInitializers');
    return this.#runtime.u32Result((out) => this.#runtime.m._olw_builder_dedup_initializers(handle, out));
  }

  /**
   * Shape inference, kept up to date incrementally: after edits only the
   * nodes they affect run their shape functions again (the result equals a
   * full inference). Returns how many nodes were (re)inferred.
   */
  infer() {
    const handle = this.#live('infer');
    return this.#runtime.u32Result((out) => this.#runtime.m._olw_builder_infer(handle, out));
  }

  /**
   * The inferred ValueInfoProto of a root-graph value (graph input,
   * initializer or node output), inferring first when edits are pending;
   * undefined for a name the graph does not define.
   */
  valueInfo(name) {
    const runtime = this.#runtime;
    const handle = this.#live('valueInfo');
    const { schema, protobuf } = modules('GraphBuilder.valueInfo');
    const ptr = runtime.cstring(String(name));
    try {
      const bytes = bytesResult(runtime, (out, size) => runtime.m._olw_builder_value_info(handle, ptr, out, size));
      return protobuf.fromBinary(schema.ValueInfoProtoSchema, bytes);
    } catch (error) {
      if (error?.code === 'OL_NOT_FOUND') return undefined;
      throw error;
    } finally {
      runtime.free(ptr);
    }
  }

  /** ToModel as bytes: the struct-type catalogue compacted to what is referenced, ids renumbered 1..n. */
  toBytes() {
    const handle = this.#live('toBytes');
    return bytesResult(this.#runtime, (ptr, size) => this.#runtime.m._olw_builder_to_model(handle, ptr, size));
  }
  /** ToModel: a ModelProto object (see toBytes). */
  toModel() {
    const { schema, protobuf } = modules('GraphBuilder.toModel');
    return protobuf.fromBinary(schema.ModelProtoSchema, this.toBytes());
  }
  /** ToGraph: a GraphProto object; fails when a part uses a model-level struct_type.type_ref. */
  toGraph() {
    const handle = this.#live('toGraph');
    const { schema, protobuf } = modules('GraphBuilder.toGraph');
    const bytes = bytesResult(this.#runtime, (ptr, size) => this.#runtime.m._olw_builder_to_graph(handle, ptr, size));
    return protobuf.fromBinary(schema.GraphProtoSchema, bytes);
  }

  /**
   * A tensor ValueInfoProto init object: GraphBuilder.tensorInfo('x', 'float32', [2, 'batch']).
   * dims: numbers (dim_value) or strings (dim_param); omitted: unknown rank.
   */
  static tensorInfo(name, type, dims) {
    const elemType = dtypeOf(type).code;
    const shape = dims === undefined ? undefined : { dim: dims.map((d) => (typeof d === 'string' ? { value: { case: 'dimParam', value: d } } : { value: { case: 'dimValue', value: BigInt(d) } })) };
    return { name, type: { value: { case: 'tensorType', value: { elemType, shape } } } };
  }
}
