// The worker side of createGenerator(model, { worker: true }): shared by the
// Node worker_threads entry (generator-worker.js) and the browser Web Worker
// bundle (browser-worker.js). Messages (structured clones):
//   in:  { type: 'init', model: Uint8Array, options, numThreads, relaxedSimd }
//        { type: 'generate', id, feeds: { name: { type, data, dims } | { paged: bytes } }, options }
//        { type: 'abort', id, reason } | { type: 'stop', id }
//   out: { type: 'ready' } | { type: 'token', id, tokens, step }
//        { type: 'done', id, data: BigInt64Array, dims, caches? } | { type: 'error', id, error }
// Paged caches travel as PagedCacheProto bytes ({ paged }), other caches as
// { type, data, dims }.
// The token loop yields to the event loop between steps, so an 'abort' or
// 'stop' message is seen within one step.

/** Caches for postMessage (copies; the wasm values are released). */
function serializeCaches(caches) {
  return Object.fromEntries(Object.entries(caches).map(([name, c]) => {
    try {
      return [name, typeof c.toBytes === 'function' ? { paged: c.toBytes() } : { type: c.type, data: c.data.slice(), dims: c.dims }];
    } finally {
      c.dispose();
    }
  }));
}

/** Plain-object form of an error for postMessage. */
export function errorMessage(error) {
  return { name: error?.name ?? 'Error', code: error?.code, message: String(error?.message ?? error) };
}

/**
 * @param {{InferenceSession: any, Tensor: any, PagedCache: any, env: any}} api the package entry of this realm
 * @param {{post(message: any, transfer?: any[]): void, onMessage(fn: (message: any) => void): void}} port
 */
export function serveGenerator(api, port) {
  let session = null;
  let ready = null;
  const running = new Map(); // id -> { controller, stop }

  port.onMessage(async (message) => {
    switch (message.type) {
      case 'init':
        if (message.numThreads !== undefined) api.env.wasm.numThreads = message.numThreads;
        if (message.relaxedSimd !== undefined) api.env.wasm.relaxedSimd = message.relaxedSimd;
        ready = api.InferenceSession.create(message.model, message.options ?? {}).then(
          (s) => {
            session = s;
            port.post({ type: 'ready' });
          },
          (error) => port.post({ type: 'error', id: null, error: errorMessage(error) }),
        );
        return;
      case 'abort':
        running.get(message.id)?.controller.abort(new Error(message.reason ?? 'aborted'));
        return;
      case 'stop': {
        const job = running.get(message.id);
        if (job) job.stop = true;
        return;
      }
      case 'close':
        for (const job of running.values()) job.controller.abort(new Error('generator closed'));
        await ready;
        await session?.release();
        session = null;
        return;
      case 'generate':
        await ready;
        return generate(message);
      default:
    }
  });

  async function generate({ id, feeds, options }) {
    const job = { controller: new AbortController(), stop: false };
    running.set(id, job);
    try {
      if (!session) throw Object.assign(new Error('the generator has no model (closed or failed to load)'), { code: 'OL_FAILED_PRECONDITION' });
      const values = Object.fromEntries(Object.entries(feeds).map(([name, t]) => [name, t.paged ? api.PagedCache.fromBytes(t.paged) : new api.Tensor(t.type, t.data, t.dims)]));
      let result;
      try {
        result = await session.generate(values, {
          ...options,
          signal: job.controller.signal,
          onToken: (tokens, step) => {
            port.post({ type: 'token', id, tokens, step });
            return !job.stop;
          },
        });
      } finally {
        for (const value of Object.values(values)) value.dispose();
      }
      const tokens = options?.returnCaches ? result.tokens : result;
      const data = tokens.data.slice();
      const caches = options?.returnCaches ? serializeCaches(result.caches) : undefined;
      port.post({ type: 'done', id, data, dims: tokens.dims, caches }, [data.buffer]);
    } catch (error) {
      port.post({ type: 'error', id, error: errorMessage(error) });
    } finally {
      running.delete(id);
    }
  }
}
