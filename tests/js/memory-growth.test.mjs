// Marshaling while wasm memory grows. In the single-threaded module growing
// the memory detaches every earlier view of it, so a view must be taken after
// the call that may grow it (the threaded module's shared memory does not
// detach, which hides the mistake there): this file runs the single-threaded one.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';

import * as ol from 'onnx-light';

const { PagedCache, Tensor } = ol;

before(async () => {
  if (ol.env) ol.env.wasm.numThreads = 1; // the single-threaded module
  await ol.init();
});

test('a struct whose fields are larger than the free memory (PagedCache.from pages)', () => {
  const width = 64;
  const have = ol.memoryStats().wasmMemoryBytes;
  const blocks = 8;
  const tokens = Math.ceil((have + (32 << 20)) / (blocks * 2 * 4 * width));
  const page = (v) => new Tensor('float32', new Float32Array(tokens * width).fill(v), [1, 1, tokens, width]);
  const plain = { blocks: Array.from({ length: blocks }, (_, b) => ({ start: b * tokens, length: tokens, key: page(b), value: page(-b) })) };
  const cache = PagedCache.from(plain);
  assert.ok(ol.memoryStats().wasmMemoryBytes > have, 'the memory grew while marshaling');
  assert.equal(cache.length, blocks * tokens);
  const last = cache.blocks.at(-1);
  assert.equal(last.key.data[tokens * width - 1], blocks - 1);
  assert.equal(last.value.data[0], -(blocks - 1));
  last.key.dispose();
  last.value.dispose();
  cache.dispose();
});
