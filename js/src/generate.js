// Autoregressive generation: session.generate / session.generateStream.
//
// The token loop is the C library's, stepped from here (ol_generator_*, the
// step form of ol_generate; see c/include/onnxlight.h): option ranges, the
// run (in this session for models without bindings, in a fresh persistent
// state for models with), attention_mask / position_ids, left padding,
// sampling and every stop condition live there. This module only marshals:
//  - the feeds go into wasm memory once (wasm tensors by handle), the options
//    become C values (integers, a uint64 seed, names);
//  - one ol_generator_step per token, yielding to the event loop in between,
//    so that an AbortSignal fired by a timer, a UI event or a worker message
//    cancels the generator's ol_completion before the next step (OL_CANCELLED
//    within one step), and a released session is noticed before C uses it;
//  - onToken returning false is ol_generator_stop;
//  - every step's tokens, and at the end the int64 [batch, prompt + generated]
//    tensor, come back as JS values; with returnCaches also the caches of the
//    generator's persistent state (PagedCache for paged caches), as they are
//    after the last step (ol_generator_state);
//  - pagedFormats (the session's unless the generation gives its own) become
//    the generator's session options (paged-formats.js).
import { invalidArgument } from './errors.js';
import { parsePagedFormats, withPagedFormats } from './paged-formats.js';
import { Tensor } from './tensor.js';
import { abortReason, cancelledError, createCompletion, marshalInputs, wrapOutput } from './values.js';

/**
 * @typedef {object} GenerateOptions
 * @property {number} [maxNewTokens] default 16
 * @property {number} [temperature] default 0 (greedy)
 * @property {number | bigint} [seed] default 0
 * @property {number} [eosTokenId] default none
 * @property {number} [padTokenId] default eosTokenId
 * @property {(tokens: bigint[], step: number) => unknown} [onToken] return false to stop early
 * @property {AbortSignal} [signal]
 * @property {string} [inputIdsName] @property {string} [logitsName]
 * @property {string} [attentionMaskName] @property {string} [positionIdsName]
 * @property {number} [persistentTensorInitialCapacity] for models with bindings (default 32)
 * @property {any} [pagedFormats] page formats of paged caches (default: the session's)
 * @property {boolean} [returnCaches] generate() resolves to { tokens, caches } (models with bindings)
 */

/** The int64 Tensor [batch, prompt + generated], or { tokens, caches } with returnCaches. */
export async function generateTokens(target, feeds, options = {}) {
  const result = {};
  for await (const _ of loop(target, feeds, options, result)); // eslint-disable-line no-unused-vars
  return options?.returnCaches ? { tokens: result.tensor, caches: result.caches } : result.tensor;
}

/** Async iterator of steps { tokens: bigint[] (one per row), step }. */
export function generateSteps(target, feeds, options = {}) {
  if (options?.returnCaches) throw invalidArgument('generateStream: returnCaches is an option of generate()');
  return loop(target, feeds, options, {});
}

/** Lets timers, UI events and worker messages (e.g. an abort) run. */
function yieldToEventLoop() {
  if (typeof setImmediate === 'function') return new Promise((resolve) => setImmediate(resolve));
  return new Promise((resolve) => {
    const channel = new MessageChannel();
    channel.port1.onmessage = () => {
      channel.port1.close();
      resolve();
    };
    channel.port2.postMessage(0);
  });
}

// An integer option passed as a double; NaN leaves the C default.
const C_DEFAULT = NaN;

/** An integer option as a double for C (absent: C's default); C checks the range. */
function integer(value, name) {
  if (value === undefined || value === null) return C_DEFAULT;
  const n = typeof value === 'bigint' ? Number(value) : value;
  if (!Number.isSafeInteger(n)) throw invalidArgument(`generate: ${name} must be an integer, got ${value}`);
  return n;
}

/** The options in the C types olw_generator_create takes (what JS values cannot say is rejected here). */
function cOptions(o) {
  const temperature = o.temperature ?? 0;
  if (typeof temperature !== 'number') throw invalidArgument(`generate: temperature must be a number, got ${typeof temperature}`);
  const seed = o.seed ?? 0;
  if (typeof seed === 'number' && !Number.isSafeInteger(seed)) throw invalidArgument(`generate: seed must be an integer, got ${seed}`);
  if (typeof seed !== 'number' && typeof seed !== 'bigint') throw invalidArgument('generate: seed must be an integer or a bigint');
  if (o.onToken !== undefined && typeof o.onToken !== 'function') throw invalidArgument('generate: onToken must be a function');
  const names = ['inputIdsName', 'logitsName', 'attentionMaskName', 'positionIdsName'].map((key) => {
    if (o[key] !== undefined && typeof o[key] !== 'string') throw invalidArgument(`generate: ${key} must be a string`);
    return o[key];
  });
  const seed64 = BigInt.asUintN(64, BigInt(seed));
  return {
    maxNewTokens: integer(o.maxNewTokens, 'maxNewTokens'),
    temperature,
    seedLow: Number(seed64 & 0xffffffffn),
    seedHigh: Number(seed64 >> 32n),
    eos: integer(o.eosTokenId, 'eosTokenId'),
    pad: integer(o.padTokenId, 'padTokenId'),
    names,
    capacity: integer(o.persistentTensorInitialCapacity, 'persistentTensorInitialCapacity'),
    pagedFormats: parsePagedFormats(o.pagedFormats, 'generate'),
  };
}

/** A C string table of the graph names (0: C's default); returns [table, free]. */
function nameTable(runtime, names) {
  const table = runtime.alloc(4 * names.length);
  const strings = names.map((name) => (name === undefined ? 0 : runtime.cstring(name)));
  strings.forEach((ptr, i) => runtime.view().setUint32(table + 4 * i, ptr, true));
  return [table, () => [table, ...strings].forEach((ptr) => ptr && runtime.free(ptr))];
}

/**
 * An ol_generator for the feeds (copied into wasm memory once, retained by
 * C): { generator, formats } where formats (or null) is the pagedFormats
 * function in use (the generation's own, released by the caller, or the
 * session's).
 */
function createGenerator(target, feeds, c, completion) {
  const { runtime, threads } = target;
  const { model, session, context = 0 } = target.handles();
  const m = runtime.m;
  const bind = (v) => m._olw_quant_bind_model(v, model);
  const inputs = marshalInputs(runtime, Object.entries(feeds), 'generate', bind);
  const [names, freeNames] = nameTable(runtime, c.names);
  // the generation's own pagedFormats, else the session's (its function is already a wasm pointer)
  const inherited = c.pagedFormats ? null : target.pagedFormats;
  const parsed = c.pagedFormats ?? (inherited?.rules ? inherited : null);
  try {
    const { result: generator, formats } = withPagedFormats(runtime, parsed, (rules, ruleCount, fn) => runtime.scratch(4, (out) => {
      runtime.check(m._olw_generator_create(model, session, context, inputs.names, inputs.values, inputs.count, c.maxNewTokens, c.temperature,
        c.seedLow, c.seedHigh, c.eos, c.pad, names, c.capacity, threads ?? 0, rules, ruleCount, fn || (inherited?.fn ? target.formats.pointer : 0),
        completion, out));
      return runtime.u32(out);
    }));
    return { generator, own: formats, formats: formats ?? (inherited?.fn ? target.formats : null) };
  } finally {
    freeNames();
    inputs.release();
  }
}

/** The generator's state values: { name: PagedCache | Tensor } (new references). */
function stateValues(runtime, generator) {
  const m = runtime.m;
  return runtime.scratch(4, (out) => {
    m._olw_generator_state(generator, out);
    const state = runtime.u32(out);
    const caches = {};
    try {
      for (let i = 0; state && i < m._olw_state_value_count(state); i++) {
        const namePtr = m._olw_state_value_name(state, i);
        runtime.check(m._olw_state_value(state, namePtr, out));
        caches[runtime.string(namePtr)] = wrapOutput(runtime, m._olw_value_retain(runtime.u32(out)));
      }
    } catch (error) {
      for (const value of Object.values(caches)) value?.dispose?.();
      throw error;
    }
    return caches;
  });
}

/** One ol_generator_step: { tokens (one per row), step }. */
function step(runtime, generator) {
  const m = runtime.m;
  runtime.check(m._olw_generator_step(generator, 0));
  const batch = m._olw_generator_batch(generator);
  const ptr = m._olw_generator_last_tokens(generator);
  const view = runtime.view();
  const tokens = Array.from({ length: batch }, (_, b) => view.getBigInt64(ptr + 8 * b, true));
  return { tokens, step: m._olw_generator_generated(generator) - 1 };
}

/** The generator's int64 [batch, prompt + generated], copied out of wasm memory. */
function allTokens(runtime, generator) {
  const value = runtime.u32Result((out) => runtime.m._olw_generator_tokens(generator, out));
  const tensor = wrapOutput(runtime, value);
  try {
    return new Tensor('int64', tensor.data.slice(), tensor.dims);
  } finally {
    tensor.dispose();
  }
}

async function* loop(target, feeds, options, result) {
  const o = options ?? {};
  const { signal, onToken } = o;
  const c = cOptions(o);
  if (feeds === null || typeof feeds !== 'object') throw invalidArgument('generate: feeds must be an object { inputName: Tensor }');
  if (signal?.aborted) throw cancelledError(signal, 'generate');
  const { runtime } = target;
  const m = runtime.m;
  const completion = signal ? createCompletion(runtime, signal) : 0;
  const onAbort = () => {
    const reason = runtime.cstring(abortReason(signal));
    m._olw_completion_cancel(completion, reason);
    runtime.free(reason);
  };
  if (o.returnCaches && !target.bound) throw invalidArgument('generate: returnCaches needs a model with persistent bindings (bindCache or toPagedModel)');
  signal?.addEventListener('abort', onAbort, { once: true });
  let generator = 0;
  let made = null;
  try {
    made = createGenerator(target, feeds, c, completion);
    generator = made.generator;
    for (let first = true; !m._olw_generator_done(generator); first = false) {
      if (!first) await yieldToEventLoop();
      target.handles(); // the session it may run in is still there
      let stepped;
      try {
        stepped = step(runtime, generator);
      } catch (error) {
        throw made.formats ? made.formats.rethrow(error) : error;
      }
      const { tokens, step: index } = stepped;
      if (onToken && onToken(tokens, index) === false) m._olw_generator_stop(generator);
      yield { tokens, step: index };
    }
    result.tensor = allTokens(runtime, generator);
    if (o.returnCaches) result.caches = stateValues(runtime, generator);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    m._olw_generator_destroy(generator);
    made?.own?.release();
    if (completion) m._olw_completion_destroy(completion);
  }
}
