// Declaring persistent feedback on a model:
//   bindPersistent(model, { inputName: outputName })  GraphProto.persistent_bindings added
//   bindCache(model)        past_key_values.{i}.key|value <- present.{i}.key|value
//   emptyCaches(model)      empty initial values for the cache inputs
// Binding goes through the C function ol_model_bind_persistent, which also
// enforces the single-use rule of bound inputs: an input read by several node
// positions (torch exports read past_key_values.0.key with Shape and Concat)
// gets one forwarding Identity node. The result has the kind of the input:
// a ModelProto object for a ModelProto object, else serialized bytes.
import { invalidArgument } from './errors.js';
import { dtypeOf } from './dtypes.js';
import { graphInputsOf } from './graph_inputs.js';
import { loadModelInput, modelBytes, persistentBindingsOf, sameKind, serializeModelHandle, withModelHandle } from './model.js';
import { PagedCache } from './paged-cache.js';
import { init } from './runtime.js';
import { Tensor } from './tensor.js';

const CACHE_INPUT = /^past_key_values\.(\d+)\.(key|value)$/;

/**
 * The model with persistent bindings added (input <- output for every entry).
 * @param {any} model bytes, path/URL or ModelProto
 * @param {Record<string, string>} bindings { inputName: outputName }
 * @param {object} [options] load options (wasmUrl, wasmBinary)
 */
export async function bindPersistent(model, bindings, options) {
  if (bindings === null || typeof bindings !== 'object' || Array.isArray(bindings)) {
    throw invalidArgument('bindPersistent: bindings must be an object { inputName: outputName }');
  }
  const entries = Object.entries(bindings);
  for (const [input, output] of entries) {
    if (typeof output !== 'string') throw invalidArgument(`bindPersistent: the output bound to '${input}' must be a string`);
  }
  const runtime = await init(options);
  const bytes = await modelBytes(model, 'bindPersistent');
  return sameKind(model, withModelHandle(runtime, bytes, (source) => bindHandle(runtime, source, entries)));
}

/**
 * A new model handle: `source` with the cache bindings added (the caller
 * destroys both). The bound model shares the source's weights in wasm memory.
 * @returns {{handle: number, bindings: {input: string, output: string}[]}}
 */
function bindCacheHandle(runtime, source) {
  const entries = Object.entries(cacheBindings(interfaceOf(runtime, source)));
  const handle = bindEntries(runtime, source, entries);
  return { handle, bindings: entries.map(([input, output]) => ({ input, output })) };
}

/** Whether the model handle has past_key_values.* inputs (what bindCache binds). */
function hasCacheInputs(runtime, model) {
  return interfaceOf(runtime, model).inputs.some((name) => CACHE_INPUT.test(name));
}

/**
 * loadModelInput, then with bindCache the cache bindings added inside wasm
 * memory when the model has past_key_values.* inputs and no bindings yet.
 * @returns {Promise<{handle: number, bindings: {input: string, output: string}[]}>}
 */
export async function loadModelMaybeBound(runtime, model, what, bindCache) {
  const loaded = await loadModelInput(runtime, model, what);
  if (!bindCache || loaded.bindings.length || !hasCacheInputs(runtime, loaded.handle)) return loaded;
  try {
    return bindCacheHandle(runtime, loaded.handle); // shares the weights
  } finally {
    runtime.m._olw_model_destroy(loaded.handle);
  }
}

/** A new model handle: source with the bindings [[input, output]] added (in wasm). */
function bindEntries(runtime, source, entries) {
  const owned = [];
  try {
    const n = entries.length;
    const table = runtime.alloc(8 * n + 4);
    owned.push(() => runtime.free(table));
    entries.forEach(([input, output], i) => {
      const a = runtime.cstring(input);
      const b = runtime.cstring(output);
      owned.push(() => runtime.free(a), () => runtime.free(b));
      runtime.view().setUint32(table + 4 * i, a, true);
      runtime.view().setUint32(table + 4 * (n + i), b, true);
    });
    const out = table + 8 * n;
    runtime.check(runtime.m._olw_model_bind_persistent(source, table, table + 4 * n, n, out));
    return runtime.u32(out);
  } finally {
    for (const release of owned.reverse()) release();
  }
}

/** Serialized bytes of the model handle `source` with the bindings [[input, output]] added. */
function bindHandle(runtime, source, entries, io = interfaceOf(runtime, source)) {
  // names are exact graph names; unknown and duplicate names are rejected
  const outputs = new Set();
  for (const [input, output] of entries) {
    if (!io.inputs.includes(input)) throw invalidArgument(`bindPersistent: '${input}' is not a graph input (names are exact, literal graph names)`);
    if (!io.outputs.includes(output)) throw invalidArgument(`bindPersistent: '${output}' (bound to '${input}') is not a graph output`);
    if (outputs.has(output)) throw invalidArgument(`bindPersistent: output '${output}' is bound twice`);
    outputs.add(output);
  }
  if (entries.length === 0) throw invalidArgument('bindPersistent: no bindings given');
  const bound = bindEntries(runtime, source, entries);
  try {
    return serializeModelHandle(runtime, bound);
  } finally {
    runtime.m._olw_model_destroy(bound);
  }
}

/** An InferenceSession (duck-typed: bind.js sits below session.js). */
function isSession(x) {
  return x !== null && typeof x === 'object' && typeof x.run === 'function' && Array.isArray(x.inputMetadata) &&
    Array.isArray(x.persistentBindings);
}

/** Graph input (those without an initializer) and output names of a model handle. */
function interfaceOf(runtime, model) {
  const m = runtime.m;
  const names = (isOutput) =>
    Array.from({ length: m._olw_model_io_count(model, isOutput) }, (_, i) => runtime.string(m._olw_model_io_name(model, isOutput, i)));
  return { inputs: names(0), outputs: names(1) };
}

/** { 'past_key_values.i.key': 'present.i.key', ... } for every cache input of the model. */
function cacheBindings(io) {
  const bindings = {};
  for (const name of io.inputs) {
    const match = CACHE_INPUT.exec(name);
    if (!match) continue;
    const output = `present.${match[1]}.${match[2]}`;
    if (!io.outputs.includes(output)) {
      throw invalidArgument(`bindCache: input '${name}' has no matching output '${output}'`);
    }
    bindings[name] = output;
  }
  if (Object.keys(bindings).length === 0) {
    throw invalidArgument("bindCache: the model has no 'past_key_values.{i}.key|value' inputs");
  }
  return bindings;
}

/**
 * bindPersistent with the Optimum/transformers.js cache naming:
 * past_key_values.{i}.key|value <- present.{i}.key|value.
 */
export async function bindCache(model, options) {
  const runtime = await init(options);
  const bytes = await modelBytes(model, 'bindCache');
  const bound = withModelHandle(runtime, bytes, (source) => {
    const io = interfaceOf(runtime, source);
    return bindHandle(runtime, source, Object.entries(cacheBindings(io)), io);
  });
  return sameKind(model, bound);
}

/** The names bindCache would bind, without binding ({ input: output }). */
export async function cacheBindingsOf(model, options) {
  const runtime = await init(options);
  const bytes = await modelBytes(model, 'cacheBindingsOf');
  return cacheBindings(withModelHandle(runtime, bytes, (handle) => interfaceOf(runtime, handle)));
}

/**
 * Empty initial caches: for each bound input (or, without bindings, each
 * past_key_values.* input) an empty PagedCache when it is
 * declared as a struct (toPagedModel), else a tensor of the declared type with dims
 * [batch, heads, 0, headSize]: the first dim is the batch, the
 * second-to-last (the sequence) is 0, the others come from the declared shape.
 * model: the model (bytes, path, URL, ModelProto) or an InferenceSession.
 * @returns {Promise<Record<string, Tensor | PagedCache>>}
 */
export async function emptyCaches(model, { batch = 1, ...options } = {}) {
  if (!Number.isSafeInteger(batch) || batch < 1) throw invalidArgument(`emptyCaches: batch must be a positive integer, got ${batch}`);
  await init(options);
  // a session: its declared inputs (no model bytes needed)
  const session = isSession(model);
  const bytes = session ? null : await modelBytes(model, 'emptyCaches');
  const inputs = session
    ? model.inputMetadata.map((meta) => ({ name: meta.name, kind: meta.isTensor ? 0 : meta.kind === 'struct' ? 5 : -1, type: meta.type, shape: meta.shape ?? [] }))
    : graphInputsOf(bytes);
  const bound = (session ? model.persistentBindings : persistentBindingsOf(bytes)).map((b) => b.input);
  const names = bound.length ? bound : inputs.map((x) => x.name).filter((name) => CACHE_INPUT.test(name));
  if (names.length === 0) throw invalidArgument('emptyCaches: the model has neither persistent bindings nor past_key_values.* inputs');
  const result = {};
  for (const name of names) {
    const meta = inputs.find((x) => x.name === name);
    if (meta?.kind === 5) { // a struct-typed input: a paged cache (toPagedModel)
      result[name] = PagedCache.empty();
      continue;
    }
    if (!meta || meta.kind !== 0) throw invalidArgument(`emptyCaches: input '${name}' is not a tensor or a paged cache`);
    const rank = meta.shape.length;
    if (rank < 2) throw invalidArgument(`emptyCaches: input '${name}' has no declared [batch, ..., sequence, size] shape`);
    const dims = meta.shape.map((d, i) => {
      if (i === 0) return batch;
      if (i === rank - 2) return 0;
      if (typeof d === 'number' && d >= 0) return d;
      throw invalidArgument(`emptyCaches: dim ${i} of input '${name}' is symbolic ('${d}'); cannot size an empty cache`);
    });
    const d = dtypeOf(meta.type);
    result[name] = new Tensor(meta.type, new d.array(0), dims);
  }
  return result;
}
