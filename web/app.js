// The chat page: downloads the model once (progress bar, Cache API), restores
// the saved conversation (IndexedDB), and talks to chat-worker.js, which
// holds the model and the conversation's KV cache. A service worker (sw.js)
// keeps the page, the runtime and the model available offline.
// Test hooks: data-testid attributes (index.html); ?seed=N fixes the seed
// of answer k to N + k (Regenerate then gives the same answer again).
import { MODEL_URL, POLICY_TEXT } from './config.js';
import { loadModel } from './download.js';
import { clearConversation, loadConversation, saveConversation } from './store.js';

const $ = (id) => document.getElementById(id);
const ui = {
  form: $('form'),
  prompt: $('prompt'),
  send: $('send'),
  stop: $('stop'),
  regenerate: $('regenerate'),
  newChat: $('new-chat'),
  status: $('status'),
  transcript: $('transcript'),
  progress: $('load-progress'),
  loadText: $('load-text'),
  speed: $('speed'),
  threads: $('threads'),
  seedInfo: $('seed-info'),
  cacheBytes: $('cache-bytes'),
  policy: $('policy'),
};

const modelUrl = new URL(MODEL_URL, location.href).href;
const seedParam = new URLSearchParams(location.search).get('seed');
const fixedSeed = seedParam !== null && /^\d+$/.test(seedParam) ? Number(seedParam) : null;

let worker = null;
let transcript = []; // [{ role, text }]
let live = null; // the answer being written: { li, decoder, count, first }
let waiting = null; // { resolve, reject } of the worker job in progress
let workerReady = false; // the worker has the model
let jobs = 0; // id of the last job sent

function setState(state, text = state) {
  document.body.dataset.state = state;
  ui.status.textContent = text;
  const idle = state === 'ready';
  ui.send.disabled = !idle;
  // after a failed answer (e.g. a conversation past the cache's 4096 tokens) New chat starts over
  ui.newChat.disabled = !(idle || (state === 'error' && workerReady));
  ui.regenerate.disabled = !idle || !transcript.some((m) => m.role === 'bot');
  ui.stop.disabled = state !== 'generating';
}

function addMessage(role, text) {
  const li = document.createElement('li');
  li.className = role;
  li.textContent = text;
  ui.transcript.append(li);
  li.scrollIntoView({ block: 'nearest' });
  return li;
}

function showStats(stats) {
  if (!stats.tokens) {
    ui.cacheBytes.textContent = 'empty';
    return;
  }
  const parts = Object.entries(stats.formats).map(([format, { tokens, bytes }]) => `${format}: ${tokens} tokens, ${bytes} bytes`);
  ui.cacheBytes.textContent = `${stats.tokens} tokens × ${stats.layers} layers; ${parts.join('; ')} (dense float32 would be ${stats.fp32Bytes} bytes); wasm memory ${(stats.memory.wasmMemoryBytes / 1e6).toFixed(1)} MB, peak allocated ${(stats.memory.peakBytes / 1e6).toFixed(1)} MB`;
}

function seedFor(answerIndex) {
  if (fixedSeed !== null) return fixedSeed + answerIndex;
  return crypto.getRandomValues(new Uint32Array(1))[0];
}

/** Sends a job to the worker; resolves with its 'answer' or 'ready' message. */
function ask(message) {
  return new Promise((resolve, reject) => {
    waiting = { resolve, reject };
    worker.postMessage({ ...message, id: ++jobs });
  });
}

function onWorkerMessage({ data }) {
  switch (data.type) {
    case 'token':
      if (live) {
        if (live.count++ === 0) live.first = performance.now();
        if (data.byte !== 10) live.li.textContent += live.decoder.decode(Uint8Array.of(data.byte), { stream: true });
        const seconds = (performance.now() - live.first) / 1000;
        if (live.count > 1 && seconds > 0) ui.speed.textContent = ((live.count - 1) / seconds).toFixed(0);
      }
      return;
    case 'ready':
    case 'answer':
      showStats(data.stats);
      waiting?.resolve(data);
      waiting = null;
      return;
    case 'error':
      waiting?.reject(new Error(data.message));
      waiting = null;
      return;
    default:
  }
}

/** Runs a turn (or a regeneration) and saves the conversation afterwards. */
async function generate(message) {
  const answerIndex = transcript.filter((m) => m.role === 'user').length - 1;
  live = { li: addMessage('bot', ''), decoder: new TextDecoder(), count: 0, first: 0 };
  setState('generating', 'generating');
  try {
    const result = await ask(message.type === 'turn' ? { ...message, seed: seedFor(answerIndex) } : { ...message, seed: fixedSeed === null ? seedFor(answerIndex) : undefined });
    const text = new TextDecoder().decode(Uint8Array.from(result.bytes));
    live.li.textContent = text;
    transcript.push({ role: 'bot', text });
    if (result.tokensPerSecond) ui.speed.textContent = result.tokensPerSecond.toFixed(0);
    await saveConversation({ model: modelUrl, transcript, saved: result.saved });
    document.body.dataset.answers = String(Number(document.body.dataset.answers ?? 0) + 1); // answers given since the page loaded
    setState('ready');
  } catch (error) {
    setState('error', `error: ${error.message}`);
  } finally {
    live = null;
  }
}

async function send() {
  const text = ui.prompt.value.trim();
  if (!text || document.body.dataset.state !== 'ready') return;
  ui.prompt.value = '';
  addMessage('user', text);
  transcript.push({ role: 'user', text });
  await generate({ type: 'turn', message: text });
}

async function regenerate() {
  if (document.body.dataset.state !== 'ready' || transcript.at(-1)?.role !== 'bot') return;
  transcript.pop();
  ui.transcript.lastElementChild.remove();
  await generate({ type: 'regenerate' });
}

async function newChat() {
  if (ui.newChat.disabled) return;
  setState('busy', 'clearing');
  await clearConversation();
  transcript = [];
  ui.transcript.replaceChildren();
  ui.speed.textContent = '–';
  await ask({ type: 'reset' });
  setState('ready');
}

async function registerServiceWorker() {
  if (!('serviceWorker' in navigator)) return;
  try {
    await navigator.serviceWorker.register('sw.js');
  } catch (error) {
    console.warn(`offline use is not available: ${error.message}`);
  }
}

async function start() {
  setState('loading', 'loading');
  ui.policy.textContent = `KV cache policy: ${POLICY_TEXT}.`;
  ui.seedInfo.textContent = fixedSeed === null ? 'random seeds' : `seed ${fixedSeed} (+ answer number)`;
  $('model-name').textContent = MODEL_URL.split('/').pop();
  registerServiceWorker();
  // The model: MODEL_URL (config.js). Opening a model directory from disk
  // (fromPretrained: directory picker / file input, with its tokenizer and
  // chat template) belongs here, as another source of the bytes handed to
  // the worker; its turns would then come from the chat template instead of
  // config.js's plain-text format.
  const [{ bytes, fromCache }, record] = await Promise.all([
    loadModel(modelUrl, (loaded, total) => {
      ui.progress.max = total || 1;
      ui.progress.value = loaded;
      ui.progress.dataset.loaded = String(loaded);
      ui.loadText.textContent = `model: ${(loaded / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
    }),
    loadConversation().catch(() => null),
  ]);
  ui.loadText.textContent = `model: ${(bytes.byteLength / 1e6).toFixed(1)} MB ${fromCache ? 'from this browser\'s cache' : 'downloaded'}`;
  const restored = record?.model === modelUrl ? record : null;
  worker = new Worker(new URL('chat-worker.js', import.meta.url), { type: 'module' });
  worker.addEventListener('message', onWorkerMessage);
  worker.addEventListener('error', (event) => {
    waiting?.reject(new Error(event.message || 'the worker failed'));
    setState('error', `error: ${event.message || 'the worker failed'}`);
  });
  // threads on cross-origin isolated pages (0: one per core), else one
  const ready = await ask({ type: 'init', model: bytes, threads: globalThis.crossOriginIsolated ? 0 : 1, saved: restored?.saved ?? null });
  workerReady = true;
  ui.threads.textContent = `${ready.threads} thread${ready.threads === 1 ? '' : 's'}${globalThis.crossOriginIsolated ? ' (cross-origin isolated)' : ''}`;
  if (restored) {
    transcript = restored.transcript;
    for (const m of transcript) addMessage(m.role, m.text);
  }
  document.body.dataset.loadMs = String(Math.round(performance.now())); // since navigation
  setState('ready');
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  send();
});
ui.prompt.addEventListener('keydown', (event) => {
  if (event.key === 'Enter' && !event.shiftKey) {
    event.preventDefault();
    send();
  }
});
ui.stop.addEventListener('click', () => worker?.postMessage({ type: 'stop', id: jobs }));
ui.regenerate.addEventListener('click', regenerate);
ui.newChat.addEventListener('click', newChat);

start().catch((error) => setState('error', `error: ${error.message}`));
