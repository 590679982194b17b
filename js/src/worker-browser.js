// Web Worker entry of createGenerator(model, { worker: true }), bundled by
// scripts/build.mjs into dist/browser-worker.js (module worker).
import * as api from './browser.js';
import { serveGenerator } from './worker-core.js';

serveGenerator(api, {
  post: (message, transfer) => self.postMessage(message, transfer ?? []),
  onMessage: (fn) => self.addEventListener('message', (event) => fn(event.data)),
});
