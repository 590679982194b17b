// The chat page: downloads the default model directory once (progress bar,
// Cache API), or opens one from disk (directory picker / file input),
// restores the model's saved conversation (IndexedDB), and talks to
// chat-worker.js, which holds the model (fromPretrained) and the
// conversation's KV cache. A service worker (sw.js) keeps the page, the
// runtime and the default model available offline.
// Test hooks: data-testid attributes (index.html); ?seed=N fixes the seed
// of answer k to N + k (Regenerate then gives the same answer again);
// ?max-tokens=N caps an answer's length; body[data-model] is the id the
// conversation is saved under.
import { MAX_ANSWER_TOKENS, MODEL_DIR, MODEL_FILES, POLICY_TEXT } from './config.js';
import { loadDirectory } from './download.js';
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
  modelName: $('model-name'),
  modelInfo: $('model-info'),
  openModel: $('open-model'),
  modelFiles: $('model-files'),
};

const modelUrl = new URL(MODEL_DIR, location.href).href;
const params = new URLSearchParams(location.search);
const fixedSeed = /^\d+$/.test(params.get('seed') ?? '') ? Number(params.get('seed')) : null;
const maxTokens = /^[1-9]\d*$/.test(params.get('max-tokens') ?? '') ? Number(params.get('max-tokens')) : MAX_ANSWER_TOKENS;

let worker = null;
let transcript = []; // [{ role, text }]
let live = null; // the answer being written: { li, decoder, count, first }
let waiting = null; // { resolve, reject } of the worker job in progress
let workerReady = false; // the worker has the model
let jobs = 0; // id of the last job sent
let modelId = null; // the conversation is saved under it

function setState(state, text = state) {
  document.body.dataset.state = state;
  ui.status.textContent = text;
  const idle = state === 'ready';
  ui.send.disabled = !idle;
  // after a failed answer (e.g. a conversation past the cache's 4096 tokens) New chat starts over
  ui.newChat.disabled = !(idle || (state === 'error' && workerReady));
  ui.regenerate.disabled = !idle || !transcript.some((m) => m.role === 'bot');
  ui.stop.disabled = state !== 'generating';
  ui.openModel.disabled = !(idle || state === 'error');
  ui.modelFiles.disabled = ui.openModel.disabled;
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
    case 'text':
      if (live) {
        if (live.count++ === 0) live.first = performance.now();
        live.li.textContent += data.piece;
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
  live = { li: addMessage('bot', ''), count: 0, first: 0 };
  setState('generating', 'generating');
  try {
    const result = await ask(message.type === 'turn' ? { ...message, seed: seedFor(answerIndex) } : { ...message, seed: fixedSeed === null ? seedFor(answerIndex) : undefined });
    // the chat template adds its own end-of-answer text (the worker feeds the difference)
    const text = result.text.trimEnd();
    live.li.textContent = text;
    transcript.push({ role: 'bot', text });
    if (result.tokensPerSecond) ui.speed.textContent = result.tokensPerSecond.toFixed(0);
    await saveConversation({ model: modelId, transcript, saved: result.saved });
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
  const messages = transcript.map((m) => ({ role: m.role === 'bot' ? 'assistant' : 'user', content: m.text }));
  await generate({ type: 'turn', messages });
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
  await clearConversation(modelId);
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

/** The default model directory: downloaded once with a progress bar, then from the Cache API. */
async function loadDefaultModel() {
  const { files, bytes, fromCache } = await loadDirectory(modelUrl, MODEL_FILES, (loaded, total) => {
    ui.progress.max = total || 1;
    ui.progress.value = loaded;
    ui.progress.dataset.loaded = String(loaded);
    ui.loadText.textContent = `model: ${(loaded / 1e6).toFixed(1)} of ${(total / 1e6).toFixed(1)} MB`;
  });
  ui.loadText.textContent = `model: ${(bytes / 1e6).toFixed(1)} MB ${fromCache ? 'from this browser\'s cache' : 'downloaded'}`;
  return files;
}

/**
 * Runs the model directory `files` (Map: relative path -> File/Blob) in a
 * new worker, with the conversation saved under `id` if there is one.
 */
async function openModel({ id, name, files }) {
  setState('loading', 'loading');
  worker?.terminate();
  waiting?.reject(new Error('another model was opened'));
  workerReady = false;
  transcript = [];
  ui.transcript.replaceChildren();
  ui.speed.textContent = '–';
  modelId = id;
  document.body.dataset.model = id;
  ui.modelName.textContent = name;
  const record = await loadConversation(id).catch(() => null);
  const current = new Worker(new URL('chat-worker.js', import.meta.url), { type: 'module' });
  worker = current;
  worker.addEventListener('message', onWorkerMessage);
  worker.addEventListener('error', (event) => {
    if (worker !== current) return;
    waiting?.reject(new Error(event.message || 'the worker failed'));
    setState('error', `error: ${event.message || 'the worker failed'}`);
  });
  // threads on cross-origin isolated pages (0: one per core), else one
  const ready = await ask({ type: 'init', files, maxTokens, threads: globalThis.crossOriginIsolated ? 0 : 1, saved: record?.saved ?? null });
  workerReady = true;
  ui.threads.textContent = `${ready.threads} thread${ready.threads === 1 ? '' : 's'}${globalThis.crossOriginIsolated ? ' (cross-origin isolated)' : ''}`;
  const { file, template, tokenizer } = ready.model;
  ui.modelInfo.textContent = `${file}; tokens: ${tokenizer === 'bytes' ? 'bytes' : 'tokenizer.json'}; turns: ${template === 'directory' ? 'the directory\'s chat template' : 'no chat template in the directory, so plain "You: …\\nBot: …" lines'}; answers of at most ${maxTokens} tokens`;
  if (record) {
    transcript = record.transcript;
    for (const m of transcript) addMessage(m.role, m.text);
  }
  setState('ready');
}

/** Files of a picked directory by path below it, its name, and an id (name, file count and bytes) to save its conversation under. */
function pickedModel(name, files) {
  let bytes = 0;
  for (const file of files.values()) bytes += file.size;
  return { id: `picked:${name}:${files.size} files:${bytes} bytes`, name, files };
}

/** The files below a FileSystemDirectoryHandle (showDirectoryPicker). */
async function handleFiles(handle, prefix = '', files = new Map()) {
  for await (const entry of handle.values()) {
    if (entry.kind === 'directory') await handleFiles(entry, `${prefix}${entry.name}/`, files);
    else files.set(prefix + entry.name, await entry.getFile());
  }
  return files;
}

/** The files of <input type=file webkitdirectory> by path below the picked folder. */
function inputFiles(list) {
  const files = new Map();
  let name = 'the files';
  for (const file of list) {
    const path = file.webkitRelativePath || file.name;
    const slash = path.indexOf('/');
    if (slash > 0) name = path.slice(0, slash);
    files.set(slash > 0 ? path.slice(slash + 1) : path, file);
  }
  return { name, files };
}

async function openFromDisk() {
  if (ui.openModel.disabled) return;
  if (typeof globalThis.showDirectoryPicker !== 'function') {
    ui.modelFiles.click(); // continues in the input's change event
    return;
  }
  let handle;
  try {
    handle = await globalThis.showDirectoryPicker({ id: 'onnx-light-model', mode: 'read' });
  } catch (error) {
    if (error?.name === 'AbortError') return; // the picker was closed
    throw error;
  }
  await openModel(pickedModel(handle.name, await handleFiles(handle)));
}

async function start() {
  setState('loading', 'loading');
  ui.policy.textContent = `KV cache policy: ${POLICY_TEXT}.`;
  ui.seedInfo.textContent = fixedSeed === null ? 'random seeds' : `seed ${fixedSeed} (+ answer number)`;
  ui.modelName.textContent = MODEL_DIR.replace(/\/$/, '').split('/').pop();
  registerServiceWorker();
  const files = await loadDefaultModel();
  await openModel({ id: modelUrl, name: ui.modelName.textContent, files });
  document.body.dataset.loadMs = String(Math.round(performance.now())); // since navigation
}

const failed = (error) => setState('error', `error: ${error.message}`);
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
ui.openModel.addEventListener('click', () => openFromDisk().catch(failed));
ui.modelFiles.addEventListener('change', () => {
  if (!ui.modelFiles.files.length) return;
  const { name, files } = inputFiles(ui.modelFiles.files);
  ui.modelFiles.value = '';
  openModel(pickedModel(name, files)).catch(failed);
});

start().catch(failed);
