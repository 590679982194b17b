#!/usr/bin/env node
// Validation loss of byte-level decoders with onnx-light: teacher-forced
// bits per byte on the held-out slice of the fortunes corpus (its last 5 %,
// as train.py splits it), in windows of --window bytes from an empty cache
// (each window predicts its bytes 2..window from the ones before).
// usage: node evaluate.mjs --corpus corpus.txt [--bytes N|all] [--window W] MODEL.onnx...
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';

import { InferenceSession, Tensor, emptyCaches } from '../../dist/node.js';

const VALIDATION_FRACTION = 0.05; // corpus.py

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: { corpus: { type: 'string' }, bytes: { type: 'string', default: '32768' }, window: { type: 'string', default: '128' } },
});
if (!values.corpus || positionals.length === 0) {
  console.error('usage: node evaluate.mjs --corpus corpus.txt [--bytes N|all] [--window W] MODEL.onnx...');
  process.exit(2);
}
const corpus = readFileSync(values.corpus);
const validation = corpus.subarray(Math.floor(corpus.length * (1 - VALIDATION_FRACTION)));
const window = Number(values.window);
const limit = values.bytes === 'all' ? validation.length : Math.min(Number(values.bytes), validation.length);
const windows = Math.floor(limit / window);

/** Sum of -log2 p(next byte) over one window, and the count of predicted bytes. */
async function windowBits(session, bytes, caches) {
  const n = bytes.length;
  const ids = BigInt64Array.from(bytes, BigInt);
  const feeds = {
    input_ids: new Tensor('int64', ids, [1, n]),
    attention_mask: new Tensor('int64', new BigInt64Array(n).fill(1n), [1, n]),
    position_ids: new Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(i)), [1, n]),
    ...caches,
  };
  const { logits } = await session.run(feeds, ['logits']);
  const vocab = logits.dims[2];
  let bits = 0;
  for (let t = 0; t + 1 < n; t++) {
    const row = logits.data.subarray(t * vocab, (t + 1) * vocab);
    let max = -Infinity;
    for (const v of row) max = Math.max(max, v);
    let sum = 0;
    for (const v of row) sum += Math.exp(v - max);
    bits += (Math.log(sum) + max - row[bytes[t + 1]]) / Math.LN2;
  }
  logits.dispose?.();
  return bits;
}

for (const path of positionals) {
  const session = await InferenceSession.create(path);
  const caches = await emptyCaches(session);
  let bits = 0;
  let count = 0;
  const start = performance.now();
  for (let w = 0; w < windows; w++) {
    const bytes = validation.subarray(w * window, (w + 1) * window);
    bits += await windowBits(session, bytes, caches);
    count += bytes.length - 1;
  }
  await session.release();
  console.log(JSON.stringify({ model: path, bitsPerByte: Number((bits / count).toFixed(4)), predictedBytes: count, window, seconds: Number(((performance.now() - start) / 1000).toFixed(1)) }));
}
