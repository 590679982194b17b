// Node worker_threads entry of createGenerator(model, { worker: true }).
import { parentPort } from 'node:worker_threads';

import * as api from './node.js';
import { serveGenerator } from './worker-core.js';

serveGenerator(api, {
  post: (message, transfer) => parentPort.postMessage(message, transfer),
  onMessage: (fn) => parentPort.on('message', fn),
});
