// One measurement: create a session, prefill, decode; returns plain numbers.
// Platform-neutral (no Node APIs): bench/lib/decode_child.mjs runs it in a
// fresh Node process (bench/decode.mjs), bench/lib/browser_page.mjs in a
// fresh Chromium page (bench/browser.mjs). onnx-light and onnxruntime-web
// share the InferenceSession/Tensor API, so one driver serves both.

// 'olpaged[=dist]': the decoder rewritten onto paged caches (toPagedModel),
// float32 pages; 'olpagedq[=dist]': appended pages stored as int8 keys and
// uint4 values (scales calibrated per page). Both keep the caches in a
// PersistentValueState, like olstate.
const PAGED_FORMS = { olpagedq: [{ fromTokens: 0, key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } }], olpaged: null };
export const pagedForm = (runtime) => Object.keys(PAGED_FORMS).find((p) => runtime === p || runtime.startsWith(`${p}=`));

/** The onnx-light build an onnx-light runtime name means: null for the package's own, else the dist folder after '='; undefined for other runtimes. */
export function olBuild(runtime) {
  const m = /^(ol|olstate|olpaged|olpagedq)(=(.+))?$/.exec(runtime);
  return m ? (m[3] ?? null) : undefined;
}

function quantile(xs, q) {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(q * s.length))];
}

/**
 * rt: the loaded runtime module (onnx-light's or onnxruntime-web's); bytes:
 * the model; modelName: its file name (shape dims are read from it); now():
 * milliseconds; rssMB(): the process's resident memory now (null if unknown).
 */
export async function runDecode({ rt, runtime, bytes, modelName, threads, prompt, steps, seed, prefillRuns = 20, contexts = [], contextSteps = 16, now, rssMB }) {
  // paged forms get the model already rewritten (toPagedModel, done once by
  // the parent and cached: an app ships or saves the paged model)
  const paged = pagedForm(runtime);
  const pagedBytes = paged ? bytes : null;
  let t = now();
  const options = runtime === 'ort' ? { executionProviders: ['wasm'], intraOpNumThreads: threads, graphOptimizationLevel: 'all' } : { intraOpNumThreads: threads };
  // olstate: the KV cache stays in a PersistentValueState (bound inside wasm
  // as bindCache does, created with empty caches); each step fetches only the logits
  const stateful = runtime.startsWith('olstate') || !!paged;
  const session = paged
    ? await rt.PersistentValueState.create(pagedBytes, await rt.emptyCaches(pagedBytes), { intraOpNumThreads: threads, pagedFormats: PAGED_FORMS[paged] ?? undefined })
    : stateful
      ? await rt.PersistentValueState.create(bytes, await rt.emptyCaches(bytes, { batch: 1 }), { intraOpNumThreads: threads, bindCache: true })
      : await rt.InferenceSession.create(bytes, options);
  const createMs = now() - t;
  const rssAfterCreateMB = await rssMB();

  // heads and head size from the metadata or the float caches emptyCaches makes
  const empty = stateful && !paged ? await rt.emptyCaches(bytes, { batch: 1 }) : null;
  const pastNames = paged ? Object.keys(await rt.emptyCaches(pagedBytes))
    : stateful ? Object.keys(empty) : session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = (name) => {
    const m = session.inputMetadata?.[session.inputNames.indexOf(name)];
    return m?.shape;
  };
  const shapeOf = (name) => meta(name) ?? null;
  // (a paged model's caches have no dims: heads and head size from the file name)
  const named = /-H(\d+)x(\d+)-/.exec(modelName);
  const kvShape = paged ? [1, named?.[1], 0, named?.[2]] : stateful ? Object.values(empty)[0].dims : shapeOf(pastNames[0]);
  const H = Number(kvShape?.[1]), D = Number(kvShape?.[3]);
  let state = (seed * 2654435761) >>> 0;
  const nextToken = (vocab) => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state % vocab;
  };
  const vocab = Number(session.outputMetadata?.[session.outputNames.indexOf('logits')]?.shape?.[2]) ||
    Number(/-V(\d+)-/.exec(modelName)?.[1]) || 256;
  // int64 feeds; the attention mask is filled directly (at 2048 cached tokens
  // converting an array of 2049 numbers took ~0.35 ms, in every runtime's step)
  const i64 = (values, dims) => new rt.Tensor('int64', BigInt64Array.from(values, BigInt), dims);
  const ones = (n) => new rt.Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]);
  const emptyPast = async () => paged ? rt.emptyCaches(pagedBytes)
    : Object.fromEntries(pastNames.map((n) => [n, new rt.Tensor('float32', new Float32Array(0), [1, H, 0, D])]));
  // bytes of the caches a state holds: page payloads for paged caches, else
  // the dense float32 K and V of `tokens` (what the plain caches carry: one
  // input per layer and K or V)
  const cacheBytes = (tokens) => {
    if (!paged) return pastNames.length * H * tokens * D * 4;
    let total = 0;
    for (const value of Object.values(session.values)) {
      total += value.byteLength;
      value.dispose();
    }
    return total;
  };
  const present = (n) => `present.${n.slice('past_key_values.'.length)}`;
  const fetches = ['logits', ...pastNames.map(present)];

  async function step(past, pastLen, ids) {
    const n = ids.length;
    const feeds = {
      ...past,
      input_ids: i64(ids, [1, n]),
      attention_mask: ones(pastLen + n),
      position_ids: i64(ids.map((_, i) => pastLen + i), [1, n]),
    };
    if (stateful) for (const name of pastNames) delete feeds[name];
    const out = await session.run(feeds, stateful ? ['logits'] : fetches);
    const logits = out.logits.data;
    const last = logits[logits.length - 1]; // touch the result
    if (!Number.isFinite(last)) throw new Error('non-finite logits');
    out.logits.dispose?.();
    if (stateful) return {};
    for (const v of Object.values(past)) v.dispose?.();
    return Object.fromEntries(pastNames.map((nm) => [nm, out[present(nm)]]));
  }

  const promptIds = Array.from({ length: prompt }, () => nextToken(vocab));
  const prefills = [];
  let past;
  for (let r = 0; r < prefillRuns; r++) {
    if (past) for (const v of Object.values(past)) v.dispose?.();
    const p0 = await emptyPast();
    if (stateful) await session.reset(p0);
    t = now();
    past = await step(p0, 0, promptIds);
    prefills.push(now() - t);
  }
  const decode = [];
  let pastLen = prompt;
  for (let s = 0; s < steps; s++) {
    const id = nextToken(vocab);
    t = now();
    past = await step(past, pastLen, [id]);
    decode.push(now() - t);
    pastLen++;
  }
  for (const v of Object.values(past)) v.dispose?.();
  const decodedCacheBytes = cacheBytes(pastLen);
  // long context: a cache of `ctx` tokens (seeded values, fed as past), then
  // contextSteps single-token steps; per-token median
  const longContext = {};
  const longContextBytes = {};
  for (const ctx of contexts) {
    let x = seed >>> 0;
    const values = new Float32Array(H * ctx * D);
    for (let i = 0; i < values.length; i++) {
      x = (Math.imul(x, 1664525) + 1013904223) >>> 0;
      values[i] = x / 2 ** 32 - 0.5;
    }
    let cache = Object.fromEntries(pastNames.map((n) => [n, paged ? pagedCacheOf(rt, values, ctx, H * D, paged === 'olpagedq')
      : new rt.Tensor('float32', values.slice(), [1, H, ctx, D])]));
    if (stateful) {
      // imported: the first step moves it into capacity, or compacts paged
      // blocks (excluded below); the state holds its own references, so the
      // caller's go (else a compacted cache would be resident twice)
      await session.reset(cache);
      for (const v of Object.values(cache)) v.dispose?.();
      cache = {};
    }
    const times = [];
    for (let s = 0; s < contextSteps; s++) {
      const id = nextToken(vocab);
      t = now();
      cache = await step(cache, ctx + s, [id]);
      times.push(now() - t);
    }
    for (const v of Object.values(cache)) v.dispose?.();
    longContext[ctx] = quantile(times.slice(1), 0.5);
    longContextBytes[ctx] = cacheBytes(ctx + contextSteps);
  }
  if (stateful) await session.close();
  else await session.release();
  return {
    runtime,
    createMs,
    prefillFirstMs: prefills[0],
    // V8 runs wasm in its baseline tier until functions tier up, which takes
    // onnx-light (lazily compiled) ten to fifteen calls: steady is the second half
    prefillSteadyMs: quantile(prefills.slice(Math.max(1, prefills.length >> 1)), 0.5),
    decodeMedianMs: quantile(decode, 0.5),
    decodeP90Ms: quantile(decode, 0.9),
    ...Object.fromEntries(Object.entries(longContext).map(([ctx, ms]) => [`decodeAt${ctx}Ms`, ms])),
    cacheBytes: decodedCacheBytes,
    ...Object.fromEntries(Object.entries(longContextBytes).map(([ctx, b]) => [`cacheBytesAt${ctx}`, b])),
    rssAfterCreateMB,
  };
}

// A paged cache of `tokens` seeded rows (values: tokens x width floats, row
// t = every head of token t) in blocks of 16 tokens, the paged model's
// default block size; `quantized`: keys int8, values uint4 (fixed scales for
// values in [-0.5, 0.5]), as the olpagedq formats would have stored them.
function pagedCacheOf(rt, values, tokens, width, quantized) {
  const blocks = [];
  for (let start = 0; start < tokens; start += 16) {
    const length = Math.min(16, tokens - start);
    const page = () => new rt.Tensor('float32', values.slice(start * width, (start + length) * width), [1, 1, length, width]);
    blocks.push({ start, length, key: page(), value: page() });
  }
  const cache = rt.PagedCache.from({ blocks });
  if (!quantized) return cache;
  const q = rt.quantizePagedCache(cache, blocks.map((_, i) => i),
    { key: { type: 'int8', scale: 0.5 / 127 }, value: { type: 'uint4', scale: 1 / 15, zeroPoint: 8 } });
  cache.dispose();
  return q;
}
