// createGenerator(model, { worker }): the token loop of session.generate in a
// Web Worker (browsers) or worker_threads (Node), or in this thread with
// `worker: false`. Same generate / generateStream API as InferenceSession;
// with a worker, tokens stream back as messages while they are produced and
// an AbortSignal stops the loop within one step. Paged caches cross as
// PagedCacheProto bytes (PagedCache.toBytes / fromBytes) and pagedFormats
// rules as data; a pagedFormats function cannot cross into a worker.
import { env } from './env.js';
import { OnnxLightError, invalidArgument } from './errors.js';
import { modelBytes } from './model.js';
import { PagedCache } from './paged-cache.js';
import { parsePagedFormats } from './paged-formats.js';
import { init, startWorker } from './runtime.js';
import { InferenceSession } from './session.js';
import { Tensor } from './tensor.js';
import { asTensor, cancelledError } from './values.js';

/** pagedFormats for a worker: rules (checked here), never a function. */
function workerFormats(pagedFormats, what) {
  if (typeof pagedFormats === 'function') {
    throw invalidArgument(`${what}: a pagedFormats function runs in the calling thread; pass rules to a worker generator, or use { worker: false }`);
  }
  parsePagedFormats(pagedFormats, what);
  return pagedFormats;
}

/**
 * @param {any} model bytes, path/URL or ModelProto
 * @param {{worker?: boolean, pagedFormats?: any, wasmUrl?: string | URL, wasmBinary?: ArrayBuffer | ArrayBufferView}} [options]
 */
export async function createGenerator(model, options = {}) {
  const { worker = true, ...load } = options;
  if (!worker) return new ThreadGenerator(await InferenceSession.create(model, load));
  if (load.pagedFormats !== undefined) workerFormats(load.pagedFormats, 'createGenerator');
  const bytes = await modelBytes(model, 'createGenerator');
  const port = await startWorker();
  const generator = new WorkerGenerator(port);
  await generator.init(bytes.slice(), load);
  return generator;
}

/** In-thread: a thin wrapper of an InferenceSession. */
class ThreadGenerator {
  #session;

  constructor(session) {
    this.#session = session;
    this.inWorker = false;
  }

  generate(feeds, options) {
    return this.#session.generate(feeds, options);
  }

  generateStream(feeds, options) {
    return this.#session.generateStream(feeds, options);
  }

  async close() {
    await this.#session.release();
  }
}

function rebuildError(e) {
  return e?.code ? new OnnxLightError(e.code, e.message) : Object.assign(new Error(e?.message ?? 'worker error'), { name: e?.name ?? 'Error' });
}

function isCache(value) {
  return value instanceof PagedCache || (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype &&
    Object.keys(value).length === 1 && Array.isArray(value.blocks));
}

/** Serializable feeds: { name: { type, data (a copy), dims } | { paged: PagedCacheProto bytes } }. */
function serializeFeeds(feeds) {
  if (feeds === null || typeof feeds !== 'object') throw invalidArgument('generate: feeds must be an object { inputName: Tensor }');
  return Object.fromEntries(
    Object.entries(feeds).map(([name, value]) => {
      if (isCache(value)) {
        const cache = value instanceof PagedCache ? value : PagedCache.from(value);
        try {
          return [name, { paged: cache.toBytes() }];
        } finally {
          if (cache !== value) cache.dispose();
        }
      }
      const t = asTensor(value, name, 'generate');
      return [name, { type: t.type, data: t.type === 'string' ? [...t.data] : t.data.slice(), dims: t.dims }];
    }),
  );
}

/** The result of a worker's 'done' message: the tokens, or { tokens, caches } (caches rebuilt here). */
async function workerResult(message) {
  const tokens = new Tensor('int64', message.data, message.dims);
  if (!message.caches) return tokens;
  const entries = Object.entries(message.caches);
  if (entries.some(([, c]) => c.paged)) await init();
  const caches = Object.fromEntries(entries.map(([name, c]) => [name, c.paged ? PagedCache.fromBytes(c.paged) : new Tensor(c.type, c.data, c.dims)]));
  return { tokens, caches };
}

class WorkerGenerator {
  #port;
  #jobs = new Map();
  #nextId = 1;
  #ready = null;
  #closed = false;
  #failure = null;

  constructor(port) {
    this.#port = port;
    this.inWorker = true;
    port.onMessage((message) => this.#receive(message));
    port.onError((error) => this.#fail(error));
  }

  init(model, options) {
    this.#ready = new Promise((resolve, reject) => this.#jobs.set(null, { resolve, reject, onStep() {} }));
    this.#updateRef();
    // the worker's own module follows this realm's thread setting
    this.#port.post({ type: 'init', model, options, numThreads: env.wasm.numThreads, relaxedSimd: env.wasm.relaxedSimd }, [model.buffer]);
    return this.#ready;
  }

  /** Keeps the process alive (Node) only while something is pending. */
  #updateRef() {
    if (this.#jobs.size) this.#port.ref?.();
    else this.#port.unref?.();
  }

  #fail(error) {
    this.#failure = error instanceof Error ? error : new Error(String(error?.message ?? error));
    for (const job of this.#jobs.values()) job.reject(this.#failure);
    this.#jobs.clear();
    this.#updateRef();
  }

  #receive(message) {
    const job = this.#jobs.get(message.type === 'ready' ? null : message.id);
    if (!job) return;
    queueMicrotask(() => this.#updateRef());
    switch (message.type) {
      case 'ready':
        this.#jobs.delete(null);
        job.resolve();
        break;
      case 'token':
        job.onStep({ tokens: message.tokens, step: message.step });
        break;
      case 'done':
        this.#jobs.delete(message.id);
        job.resolve(workerResult(message));
        break;
      case 'error':
        this.#jobs.delete(message.id);
        job.reject(rebuildError(message.error));
        break;
      default:
    }
  }

  /**
   * Starts a generation in the worker; onStep(step) gets every streamed step.
   * Resolves to the int64 tokens Tensor.
   */
  #start(feeds, options = {}, onStep) {
    const fail = (error) => ({ id: 0, done: Promise.reject(error) });
    if (this.#closed) return fail(new OnnxLightError('OL_FAILED_PRECONDITION', 'the generator is closed'));
    if (this.#failure) return fail(this.#failure);
    const { signal, onToken, ...rest } = options ?? {};
    if (signal?.aborted) return fail(cancelledError(signal, 'generate'));
    let serialized;
    try {
      if (rest.pagedFormats !== undefined) workerFormats(rest.pagedFormats, 'generate');
      serialized = serializeFeeds(feeds);
    } catch (error) {
      return fail(error);
    }
    const id = this.#nextId++;
    const onAbort = () => this.#port.post({ type: 'abort', id, reason: String(signal.reason?.message ?? signal.reason ?? 'aborted') });
    signal?.addEventListener('abort', onAbort, { once: true });
    const done = new Promise((resolve, reject) => {
      this.#jobs.set(id, {
        resolve,
        reject,
        onStep: (step) => {
          if (onToken && onToken(step.tokens, step.step) === false) this.#port.post({ type: 'stop', id });
          onStep?.(step);
        },
      });
    });
    this.#updateRef();
    this.#port.post({ type: 'generate', id, feeds: serialized, options: rest });
    return { id, done: done.finally(() => signal?.removeEventListener('abort', onAbort)) };
  }

  /** The int64 Tensor [batch, prompt + generated] (or { tokens, caches } with returnCaches); onToken is called as tokens arrive. */
  generate(feeds, options) {
    return this.#start(feeds, options).done;
  }

  /** Async iterator of steps { tokens, step } as the worker produces them. */
  async *generateStream(feeds, options) {
    if (options?.returnCaches) throw invalidArgument('generateStream: returnCaches is an option of generate()');
    const queue = [];
    let wake = null;
    let finished = false;
    let failure = null;
    const job = this.#start(feeds, options, (step) => {
      queue.push(step);
      wake?.();
    });
    const done = job.done.then(
      () => {
        finished = true;
        wake?.();
      },
      (error) => {
        failure = error;
        finished = true;
        wake?.();
      },
    );
    try {
      for (;;) {
        if (queue.length) {
          yield queue.shift();
          continue;
        }
        if (finished) break;
        await new Promise((resolve) => (wake = resolve));
        wake = null;
      }
      if (failure) throw failure;
    } finally {
      // the consumer stopped early: end the worker's loop at the next step
      if (!finished && job.id && !this.#closed) this.#port.post({ type: 'stop', id: job.id });
      await done;
    }
  }

  /** Stops the worker (running generations are aborted). */
  async close() {
    if (this.#closed) return;
    this.#closed = true;
    this.#fail(new OnnxLightError('OL_FAILED_PRECONDITION', 'the generator is closed'));
    await this.#port.terminate();
  }
}
