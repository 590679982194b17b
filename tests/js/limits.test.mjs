// Size and depth limits through the wasm ABI (docs/limits.md): sizes that do
// not fit wasm32 and deeply nested models fail with an OnnxLightError, and
// the module keeps working afterwards (no trap, no "memory access out of
// bounds", no stack overflow). Allocations past 2 GiB: memory-4gb.test.mjs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';

import { InferenceSession, OnnxLightError, Tensor, inferShapes, init, memoryStats, parseModel, printModel } from 'onnx-light';

import { UNSIGNED_RESULTS } from '../../dist/runtime.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

const fails = (code, re) => (e) => {
  assert.ok(e instanceof OnnxLightError, `expected an OnnxLightError, got ${e}`);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, re);
  return true;
};

/** Protobuf bytes written back to front: a message's length is known when its header is prepended. */
class Wire {
  #buf = new Uint8Array(1024);
  #front = 1024;
  get size() {
    return this.#buf.length - this.#front;
  }
  bytes() {
    return this.#buf.slice(this.#front);
  }
  prepend(bytes) {
    if (bytes.length > this.#front) {
      const bigger = new Uint8Array(this.#buf.length * 2 + bytes.length);
      bigger.set(this.#buf.subarray(this.#front), bigger.length - this.size);
      this.#front = bigger.length - this.size;
      this.#buf = bigger;
    }
    this.#front -= bytes.length;
    this.#buf.set(bytes, this.#front);
  }
  varint(v) {
    const out = [];
    do {
      out.push((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
      v = Math.floor(v / 128);
    } while (v);
    this.prepend(out);
  }
  /** Everything prepended so far becomes field `field` (length-delimited). */
  wrap(field) {
    this.varint(this.size);
    this.varint(field * 8 + 2);
  }
  string(field, text) {
    const bytes = new TextEncoder().encode(text);
    this.prepend(bytes);
    this.varint(bytes.length);
    this.varint(field * 8 + 2);
  }
  int(field, v) {
    this.varint(v);
    this.varint(field * 8);
  }
  /** ModelProto { ir_version 8, opset "" 13, graph = (what was written) }. */
  model() {
    this.wrap(7);
    const graph = this.bytes();
    const w = new Wire();
    w.int(2, 13);
    w.string(1, '');
    w.wrap(8);
    w.int(1, 8);
    const head = w.bytes();
    const out = new Uint8Array(head.length + graph.length);
    out.set(head);
    out.set(graph, head.length);
    return out;
  }
}

/** If nodes `depth` graphs deep (26 to 35 bytes a level, as the lengths grow). */
function nestedGraphs(depth) {
  const w = new Wire();
  for (let level = 1; level < depth; level++) {
    w.wrap(6);
    w.int(20, 5);
    w.string(1, 'then_branch');
    w.wrap(5);
    w.string(4, 'If');
    w.wrap(1);
  }
  return w.model();
}

/** A graph input typed with `depth` sequence types inside each other (6 bytes a level). */
function nestedTypes(depth) {
  const w = new Wire();
  w.int(1, 1);
  w.wrap(1);
  for (let level = 1; level < depth; level++) {
    w.wrap(1);
    w.wrap(4);
  }
  w.wrap(2);
  w.string(1, 'x');
  w.wrap(11);
  return w.model();
}

/** The model still works: a session runs and memoryStats reads. */
async function stillWorks() {
  const session = await InferenceSession.create(
    await parseModel('<ir_version: 10, opset_import: ["" : 18]> g (float[2] x) => (float[2] y) { y = Add(x, x) }'),
  );
  const { y } = await session.run({ x: new Tensor('float32', new Float32Array([1, 2]), [2]) });
  assert.deepEqual([...y.data], [2, 4]);
  await session.release();
  assert.ok(memoryStats().wasmMemoryBytes > 0);
}

before(async () => {
  await init();
});

describe('sizes past wasm32', () => {
  test('tensors of 4 GiB and more are refused, not given a truncated buffer', async () => {
    assert.throws(() => Tensor.alloc('float32', [2 ** 30]), fails('OL_OUT_OF_MEMORY', /float32\[1073741824\].*more bytes than this build can address/));
    assert.throws(() => Tensor.alloc('float32', [1.2e9]), fails('OL_OUT_OF_MEMORY', /float32\[1200000000\]/));
    assert.throws(() => Tensor.alloc('float64', [2 ** 16, 2 ** 16]), fails('OL_OUT_OF_MEMORY', /float64\[65536,65536\]/));
    await stillWorks();
  });

  test('a ConstantOfShape of 2^30 + 16 floats fails cleanly and the module keeps working', async () => {
    const session = await InferenceSession.create(
      await parseModel(
        '<ir_version: 10, opset_import: ["" : 18]> g (int64[1] s) => (float[N] y) { y = ConstantOfShape(s) }',
      ),
    );
    await assert.rejects(
      session.run({ s: new Tensor('int64', new BigInt64Array([2n ** 30n + 16n]), [1]) }),
      fails('OL_OUT_OF_MEMORY', /float32\[1073741840\]/),
    );
    await assert.rejects(
      session.run({ s: new Tensor('int64', new BigInt64Array([1200000000n]), [1]) }),
      fails('OL_OUT_OF_MEMORY', /float32\[1200000000\]/),
    );
    const { y } = await session.run({ s: new Tensor('int64', new BigInt64Array([3n]), [1]) });
    assert.deepEqual([...y.data], [0, 0, 0]);
    await session.release();
    await stillWorks();
  });

  test('Tile and Pad with overflowing sizes are errors', async () => {
    const tile = await InferenceSession.create(
      await parseModel('<ir_version: 10, opset_import: ["" : 18]> g (float[3] x, int64[1] r) => (float[N] y) { y = Tile(x, r) }'),
    );
    const x = new Tensor('float32', new Float32Array([1, 2, 3]), [3]);
    await assert.rejects(
      tile.run({ x, r: new Tensor('int64', new BigInt64Array([6148914691236517206n]), [1]) }),
      fails('OL_INVALID_ARGUMENT', /overflows dimension 0/),
    );
    await tile.release();
    const pad = await InferenceSession.create(
      await parseModel('<ir_version: 10, opset_import: ["" : 18]> g (float[3] x, int64[2] p) => (float[N] y) { y = Pad(x, p) }'),
    );
    for (const pads of [[2n ** 63n - 1n, 2n ** 63n - 1n], [-(2n ** 63n - 1n), -(2n ** 63n - 2n)]]) {
      await assert.rejects(pad.run({ x, p: new Tensor('int64', new BigInt64Array(pads), [2]) }), fails('OL_INVALID_ARGUMENT', /overflow dimension 0/));
    }
    await pad.release();
    await stillWorks();
  });

  test('MaxPool with kernel_shape [2, 4294967295] finishes at once', async () => {
    const session = await InferenceSession.create(
      await parseModel(
        '<ir_version: 10, opset_import: ["" : 18]> g (float[1,1,3,4] x) => (float[1,1,3,4] y) ' +
          '{ y = MaxPool <kernel_shape = [2, 4294967295], auto_pad = "SAME_UPPER"> (x) }',
      ),
    );
    const x = new Tensor('float32', new Float32Array([1, 5, 2, 0, 3, -1, 7, 4, -2, 6, 0, 8]), [1, 1, 3, 4]);
    const start = performance.now();
    const { y } = await session.run({ x });
    assert.ok(performance.now() - start < 5000);
    assert.deepEqual([...y.data], [7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8]);
    await session.release();
  });
});

describe('nesting', () => {
  test('1,000 nested graph attributes (35 KB) are refused before they reach the stack', async () => {
    const bytes = nestedGraphs(1000);
    assert.ok(bytes.length < 40000);
    const deep = fails('OL_INVALID_MODEL', /nests graphs deeper than 32 levels/);
    await assert.rejects(InferenceSession.create(bytes), deep);
    await assert.rejects(printModel(bytes), deep);
    await assert.rejects(inferShapes(bytes), deep);
    await stillWorks();
  });

  test('2,000 nested sequence types (12 KB) are refused', async () => {
    const bytes = nestedTypes(2000);
    const deep = fails('OL_INVALID_MODEL', /nests types deeper than 32 levels/);
    await assert.rejects(InferenceSession.create(bytes), deep);
    await assert.rejects(printModel(bytes), deep);
    await assert.rejects(inferShapes(bytes), deep);
    await stillWorks();
  });

  test('graphs and types at the limits load, print, infer and run in wasm (1 MiB stack)', async () => {
    assert.match(await printModel(nestedTypes(32)), /seq\(/);
    await assert.rejects(printModel(nestedTypes(33)), fails('OL_INVALID_MODEL', /types deeper than 32/));
    // If nodes 32 graphs deep (the root counts), the innermost adds 1
    let body = 'y31 = Add(x, one)';
    for (let level = 30; level >= 0; level--) {
      body =
        `y${level} = If (c) <then_branch = t${level} () => (float[1] y${level + 1}) { ${body} }, ` +
        `else_branch = e${level} () => (float[1] z${level}) { z${level} = Identity(x) }>`;
    }
    const bytes = await parseModel(`<ir_version: 10, opset_import: ["" : 18]> g (bool c, float[1] x) => (float[1] y0) <float[1] one = {1}> { ${body} }`);
    assert.match(await printModel(bytes), /then_branch/);
    await inferShapes(bytes);
    const session = await InferenceSession.create(bytes);
    const { y0 } = await session.run({ c: new Tensor('bool', new Uint8Array([1]), []), x: new Tensor('float32', new Float32Array([41]), [1]) });
    assert.deepEqual([...y0.data], [42]);
    await session.release();
    await stillWorks();
  });
});

describe('wasm ABI', () => {
  test('every export returning a pointer or a size_t is read unsigned', () => {
    const declared = new Set(['_malloc']);
    for (const file of readdirSync(join(ROOT, 'c/src/wasm')).filter((f) => f.endsWith('.c'))) {
      const source = readFileSync(join(ROOT, 'c/src/wasm', file), 'utf8');
      for (const [, type, name] of source.matchAll(/^OLW\s+([\w\s*]+?)\s*\b(olw_\w+)\s*\(/gm)) {
        if (type.includes('*') || /\bsize_t\b|\buint32_t\b/.test(type)) declared.add(`_${name}`);
      }
    }
    assert.deepEqual([...UNSIGNED_RESULTS].sort(), [...declared].sort());
  });
});
