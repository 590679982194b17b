// Autoregressive generation: session.generate / session.generateStream.
//
// The token loop runs in JS over the wasm runtime (one ol_state_run or
// ol_session_run per token), with the semantics of the C ol_generate:
//  - models with GraphProto.persistent_bindings run in a fresh
//    PersistentValueState (initial values of the bound inputs taken from the
//    feeds, e.g. emptyCaches()): the prompt once, then one token per step;
//    the caches never leave wasm memory;
//  - models without bindings re-run the whole growing prefix every step
//    (nothing is guessed from names);
//  - declared int64 attention_mask / position_ids inputs are created when not
//    fed (ones; positions = cumulative mask - 1, clamped at 0) and extended
//    every step; a fed mask must be left-padded;
//  - tokens are picked in wasm by the same C function ol_generate uses
//    (olw_pick_token): temperature 0 is greedy (largest logit, lowest index
//    on ties, NaN never wins); temperature > 0 samples softmax(logits / T)
//    with one splitmix64 draw per unfinished row per step, seeded by `seed`,
//    reading the logits in place — so JS, native and wasm draw identical
//    tokens from the same seed;
//  - stops after maxNewTokens or when every row has emitted eosTokenId;
//    finished rows are padded with padTokenId (eosTokenId by default);
//  - caller feeds and the model are never modified.
// Between steps the loop yields to the event loop, so an AbortSignal fired by
// a timer, a UI event or a worker message stops it within one step.
import { invalidArgument } from './errors.js';
import { createStateFromHandle } from './state.js';
import { Tensor } from './tensor.js';
import { asTensor, cancelledError } from './values.js';

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
 */

/** The int64 Tensor [batch, prompt + generated]. */
export async function generateTokens(target, feeds, options = {}) {
  const result = {};
  for await (const _ of loop(target, feeds, options, result)); // eslint-disable-line no-unused-vars
  return result.tensor;
}

/** Async iterator of steps { tokens: bigint[] (one per row), step }. */
export function generateSteps(target, feeds, options = {}) {
  return loop(target, feeds, options, {});
}

function checkOptions(o) {
  const maxNewTokens = o.maxNewTokens ?? 16;
  if (!Number.isSafeInteger(maxNewTokens) || maxNewTokens < 0) throw invalidArgument(`generate: maxNewTokens must be an integer >= 0, got ${o.maxNewTokens}`);
  const temperature = o.temperature ?? 0;
  if (typeof temperature !== 'number' || !(temperature >= 0) || !Number.isFinite(temperature)) {
    throw invalidArgument(`generate: temperature must be a finite number >= 0, got ${o.temperature}`);
  }
  const id = (value, name) => {
    if (value === undefined || value === null || value === -1) return -1;
    if (!Number.isSafeInteger(Number(value)) || Number(value) < 0) throw invalidArgument(`generate: ${name} must be a token id >= 0, got ${value}`);
    return Number(value);
  };
  const eos = id(o.eosTokenId, 'eosTokenId');
  const padded = id(o.padTokenId, 'padTokenId');
  let seed = o.seed ?? 0;
  if (typeof seed === 'number' && !Number.isSafeInteger(seed)) throw invalidArgument(`generate: seed must be an integer, got ${seed}`);
  if (typeof seed !== 'number' && typeof seed !== 'bigint') throw invalidArgument('generate: seed must be an integer or a bigint');
  if (o.onToken !== undefined && typeof o.onToken !== 'function') throw invalidArgument('generate: onToken must be a function');
  return {
    maxNewTokens,
    temperature,
    seed,
    eos,
    pad: padded >= 0 ? padded : eos,
    idsName: o.inputIdsName ?? 'input_ids',
    logitsName: o.logitsName ?? 'logits',
    maskName: o.attentionMaskName ?? 'attention_mask',
    posName: o.positionIdsName ?? 'position_ids',
  };
}

/** Lets timers, UI events and worker messages (e.g. an abort) run. */
export function yieldToEventLoop() {
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

/** [batch, prompt] rows of a 2-D int64 tensor as arrays of bigint. */
function rowsOf(tensor, name, batch, prompt) {
  if (tensor.type !== 'int64' || tensor.dims.length !== 2 || (batch !== undefined && (tensor.dims[0] !== batch || tensor.dims[1] !== prompt))) {
    const want = batch === undefined ? '[batch, prompt]' : `[${batch},${prompt}]`;
    throw invalidArgument(`generate: '${name}' must be an int64 ${want} tensor, got ${tensor.type}[${tensor.dims}]`);
  }
  const [b, n] = tensor.dims;
  const data = tensor.data;
  return Array.from({ length: b }, (_, r) => Array.from(data.subarray(r * n, (r + 1) * n)));
}

const LOGIT_TYPES = { float32: [1, 4], float64: [11, 8], float16: [10, 2], bfloat16: [16, 2] };

/** Where row `row` (last position) of the logits lies in wasm memory. */
function logitRow(logits, batch, row) {
  const rank = logits.dims.length;
  const vocab = logits.dims[rank - 1];
  const seq = rank === 3 ? logits.dims[1] : 1;
  const type = LOGIT_TYPES[logits.type];
  if (!type || (rank !== 2 && rank !== 3) || logits.dims[0] !== batch || vocab < 1 || seq < 1) {
    throw invalidArgument(
      `generate: logits are ${logits.type}[${logits.dims}]; expected float32/float64/float16/bfloat16 [${batch}, sequence, vocab] or [${batch}, vocab]`,
    );
  }
  const [dtype, size] = type;
  return { dtype, vocab, ptr: logits.wasmByteOffset + (row * seq + seq - 1) * vocab * size };
}


/** A copy of `tensor` in wasm memory (fed by handle every step, copied only here). */
function resident(tensor, owned) {
  if (tensor.location === 'wasm' || tensor.type === 'string') return tensor;
  const copy = Tensor.alloc(tensor.type, tensor.dims);
  copy.data.set(tensor.data);
  owned.push(copy);
  return copy;
}

function int64Tensor(rows, start, end, owned) {
  const batch = rows.length;
  const n = end - start;
  const t = Tensor.alloc('int64', [batch, n]);
  owned.push(t);
  const data = t.data;
  for (let b = 0; b < batch; b++) for (let j = 0; j < n; j++) data[b * n + j] = rows[b][start + j];
  return t;
}

async function* loop(target, feeds, options, result) {
  const o = checkOptions(options ?? {});
  const { signal, onToken } = options ?? {};
  if (feeds === null || typeof feeds !== 'object') throw invalidArgument('generate: feeds must be an object { inputName: Tensor }');
  if (signal?.aborted) throw cancelledError(signal, 'generate');
  const { runtime, session, modelHandle, bindings } = target;
  const inputs = new Set(session.inputNames);
  if (!inputs.has(o.idsName)) throw invalidArgument(`generate: the model has no input '${o.idsName}'`);
  if (!session.outputNames.includes(o.logitsName)) throw invalidArgument(`generate: the model has no output '${o.logitsName}'`);
  const tensors = Object.fromEntries(Object.entries(feeds).map(([name, value]) => [name, asTensor(value, name, 'generate')]));
  const idsTensor = tensors[o.idsName];
  if (!idsTensor) throw invalidArgument(`generate: the feeds have no '${o.idsName}' (int64 [batch, prompt])`);
  const ids = rowsOf(idsTensor, o.idsName);
  const batch = ids.length;
  const prompt = ids[0]?.length ?? 0;
  if (batch < 1 || prompt < 1) throw invalidArgument(`generate: '${o.idsName}' must not be empty, got [${idsTensor.dims}]`);
  const hasMask = inputs.has(o.maskName);
  const hasPos = inputs.has(o.posName);
  if (tensors[o.maskName] && !hasMask) throw invalidArgument(`generate: '${o.maskName}' is fed but the model has no such input`);
  if (tensors[o.posName] && !hasPos) throw invalidArgument(`generate: '${o.posName}' is fed but the model has no such input`);
  const mask = tensors[o.maskName] ? rowsOf(tensors[o.maskName], o.maskName, batch, prompt) : ids.map((row) => row.map(() => 1n));
  mask.forEach((row, b) => {
    row.forEach((x, j) => {
      if (x !== 0n && x !== 1n) throw invalidArgument(`generate: '${o.maskName}'[${b},${j}] is ${x}; a mask holds 0 or 1`);
      if (j > 0 && x < row[j - 1]) {
        throw invalidArgument(`generate: row ${b} of '${o.maskName}' is not left-padded (a 0 at position ${j} follows a 1); prompts must be unpadded or left-padded`);
      }
    });
    if (row[prompt - 1] !== 1n) throw invalidArgument(`generate: row ${b} of '${o.maskName}' is all padding`);
  });
  const pos = tensors[o.posName]
    ? rowsOf(tensors[o.posName], o.posName, batch, prompt)
    : mask.map((row) => {
        let ones = 0n;
        return row.map((x) => {
          ones += x;
          return ones > 0n ? ones - 1n : 0n;
        });
      });

  const owned = []; // wasm tensors made here, disposed at the end
  const boundNames = new Set(bindings.map((b) => b.input));
  const fixed = {};
  const initial = {};
  for (const [name, tensor] of Object.entries(tensors)) {
    if (name === o.idsName || name === o.maskName || name === o.posName) continue;
    if (boundNames.has(name)) initial[name] = tensor;
    else fixed[name] = resident(tensor, owned);
  }
  let state = null;
  const finished = new Array(batch).fill(false);
  // sampler state in wasm memory: the splitmix64 state and a weights scratch
  const rngPtr = runtime.alloc(8);
  runtime.view().setBigUint64(rngPtr, BigInt.asUintN(64, BigInt(o.seed)), true);
  let weightsPtr = 0;
  let weightsCap = 0;
  try {
    if (bindings.length) {
      state = createStateFromHandle(runtime, modelHandle, bindings, initial, {
        persistentTensorInitialCapacity: options.persistentTensorInitialCapacity ?? 32,
        intraOpNumThreads: target.threads ?? 0,
      });
    }
    let len = prompt;
    for (let generated = 0; generated < o.maxNewTokens; generated++) {
      if (generated > 0) await yieldToEventLoop();
      if (signal?.aborted) throw cancelledError(signal, `generate (after ${generated} tokens)`);
      const start = state && generated > 0 ? len - 1 : 0;
      const stepOwned = [];
      let logits;
      try {
        const stepFeeds = { ...fixed, [o.idsName]: int64Tensor(ids, start, len, stepOwned) };
        if (hasMask) stepFeeds[o.maskName] = int64Tensor(mask, 0, len, stepOwned);
        if (hasPos) stepFeeds[o.posName] = int64Tensor(pos, start, len, stepOwned);
        const outputs = state
          ? await state.run(stepFeeds, [o.logitsName], { signal })
          : await session.run(stepFeeds, [o.logitsName], { signal });
        logits = outputs[o.logitsName];
        if (!(logits instanceof Tensor)) throw invalidArgument(`generate: output '${o.logitsName}' is not a tensor`);
        const tokens = new Array(batch);
        for (let b = 0; b < batch; b++) {
          let token;
          if (finished[b]) {
            token = o.pad;
          } else {
            const row = logitRow(logits, batch, b);
            if (o.temperature > 0 && weightsCap < row.vocab) {
              runtime.free(weightsPtr);
              weightsPtr = 0;
              weightsPtr = runtime.alloc(row.vocab * 8);
              weightsCap = row.vocab;
            }
            token = runtime.m._olw_pick_token(row.dtype, row.ptr, row.vocab, o.temperature, rngPtr, weightsPtr);
            if (o.eos >= 0 && token === o.eos) finished[b] = true;
          }
          tokens[b] = BigInt(token);
          ids[b].push(BigInt(token));
          mask[b].push(1n);
          pos[b].push(pos[b][len - 1] + 1n);
        }
        len++;
        const step = { tokens, step: generated };
        const stop = onToken ? onToken(tokens, generated) === false : false;
        yield step;
        if (stop || finished.every(Boolean)) break;
      } finally {
        logits?.dispose();
        for (const t of stepOwned) t.dispose();
      }
    }
    const flat = new BigInt64Array(batch * len);
    ids.forEach((row, b) => flat.set(row, b * len));
    result.tensor = new Tensor('int64', flat, [batch, len]);
  } finally {
    runtime.free(rngPtr);
    runtime.free(weightsPtr);
    if (state) await state.close();
    for (const t of owned) t.dispose();
  }
}

