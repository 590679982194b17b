// The web demo: loads the default model, binds its KV cache, and generates in
// a Web Worker (createGenerator with worker: true), streaming text into the
// page; Stop aborts the generation within one token.
import { Tensor, bindCache, createGenerator, emptyCaches } from '../dist/browser.js';

const MODEL_URL = new URL('../../models/fortunes-byte-0.8M.onnx', import.meta.url);
const $ = (id) => document.getElementById(id);
const ui = {
  form: $('form'),
  prompt: $('prompt'),
  maxTokens: $('max-tokens'),
  temperature: $('temperature'),
  seed: $('seed'),
  generate: $('generate'),
  stop: $('stop'),
  status: $('status'),
  output: $('output'),
  count: $('count'),
  speed: $('speed'),
};

function setState(state, message) {
  document.body.dataset.state = state;
  ui.status.textContent = message;
  ui.generate.disabled = state === 'loading' || state === 'generating' || state === 'error';
  ui.stop.disabled = state !== 'generating';
}

let generator;
let caches;
let controller = null;

async function load() {
  const model = await bindCache(MODEL_URL);
  caches = await emptyCaches(model);
  generator = await createGenerator(model, { worker: true });
  setState('ready', 'ready');
}

async function generate() {
  const promptBytes = [...new TextEncoder().encode(ui.prompt.value)];
  if (promptBytes.length === 0) {
    setState('ready', 'type a prompt first');
    return;
  }
  controller = new AbortController();
  const decoder = new TextDecoder('utf-8');
  ui.output.textContent = '';
  const promptSpan = document.createElement('span');
  promptSpan.className = 'prompt';
  promptSpan.textContent = ui.prompt.value;
  const generated = document.createElement('span');
  generated.className = 'generated';
  ui.output.append(promptSpan, generated);
  ui.count.textContent = '0';
  ui.speed.textContent = '–';
  setState('generating', 'generating…');
  const feeds = { input_ids: new Tensor('int64', BigInt64Array.from(promptBytes, BigInt), [1, promptBytes.length]), ...caches };
  const options = {
    maxNewTokens: Number(ui.maxTokens.value) || 1,
    temperature: Number(ui.temperature.value) || 0,
    seed: Number(ui.seed.value) || 0,
    signal: controller.signal,
  };
  let count = 0;
  let first = 0;
  const start = performance.now();
  try {
    for await (const { tokens } of generator.generateStream(feeds, options)) {
      if (count++ === 0) first = performance.now();
      generated.textContent += decoder.decode(Uint8Array.of(Number(tokens[0])), { stream: true });
      ui.count.textContent = String(count);
      const seconds = (performance.now() - first) / 1000;
      if (count > 1 && seconds > 0) ui.speed.textContent = ((count - 1) / seconds).toFixed(0);
    }
    generated.textContent += decoder.decode();
    setState('done', `done in ${((performance.now() - start) / 1000).toFixed(2)} s`);
  } catch (error) {
    if (error.code === 'OL_CANCELLED') setState('stopped', `stopped after ${count} tokens`);
    else setState('error', `error: ${error.message}`);
  } finally {
    controller = null;
  }
}

ui.form.addEventListener('submit', (event) => {
  event.preventDefault();
  generate();
});
ui.stop.addEventListener('click', () => controller?.abort(new Error('stopped by the user')));

setState('loading', 'loading the model…');
load().catch((error) => setState('error', `cannot load the model: ${error.message}`));
