// The package surface: exports match the declarations, versions agree, the
// wasm module is found next to the JS or where the caller says (never
// fetched from elsewhere), and the generated proto classes round-trip.
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import * as api from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

import { runModule } from './child.mjs';
import { ROOT } from './models.mjs';

describe('package', () => {
  test('every declared export exists, and nothing else', () => {
    const dts = readFileSync(join(ROOT, 'js/types/index.d.ts'), 'utf8');
    const declared = [...dts.matchAll(/^export (?:declare )?(?:class|function|const) (\w+)/gm)].map((m) => m[1]);
    assert.deepEqual([...new Set(declared)].sort(), Object.keys(api).sort());
  });

  test('version equals package.json and OL_VERSION', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
    const header = readFileSync(join(ROOT, 'c/include/onnxlight.h'), 'utf8');
    assert.equal(api.version, pkg.version);
    assert.equal(api.version, header.match(/#define OL_VERSION "([^"]+)"/)[1]);
  });

  test('the default load reads the .wasm next to the JS and fetches nothing', () => {
    const out = runModule(`
      globalThis.fetch = () => { throw new Error('fetch called'); };
      import { init, Tensor } from 'onnx-light';
      await init();
      console.log(Tensor.alloc('float32', [2]).location);
    `);
    assert.equal(out.trim(), 'wasm');
  });

  test('loading installs no process-wide handlers in Node', () => {
    const out = runModule(`
      import { init } from 'onnx-light';
      await init();
      console.log(process.listenerCount('uncaughtException'), process.listenerCount('unhandledRejection'));
    `);
    assert.equal(out.trim(), '0 0');
  });

  test('wasmBinary and wasmUrl options', () => {
    const dir = mkdtempSync(join(tmpdir(), 'onnx-light-wasm-'));
    const wasm = join(dir, 'copy.wasm');
    copyFileSync(join(ROOT, 'dist/onnx_light.wasm'), wasm);
    const binary = runModule(`
      import { readFileSync } from 'node:fs';
      import { init, memoryStats } from 'onnx-light';
      await init({ wasmBinary: readFileSync(${JSON.stringify(wasm)}) });
      console.log(memoryStats().wasmMemoryBytes > 0);
    `);
    assert.equal(binary.trim(), 'true');
    const url = runModule(`
      import { pathToFileURL } from 'node:url';
      import { init, OnnxLightError } from 'onnx-light';
      try { await init({ wasmUrl: '/nonexistent/onnx_light.wasm' }); }
      catch (e) { console.log(e instanceof OnnxLightError, e.code, /nonexistent/.test(e.message)); }
      await init({ wasmUrl: pathToFileURL(${JSON.stringify(wasm)}) }); // a failed load can be retried
      console.log('loaded');
    `);
    assert.deepEqual(url.trim().split('\n'), ['true OL_INVALID_ARGUMENT true', 'loaded']);
  });

  test('onnx-light/proto: typed ModelProto with the project extensions', () => {
    const model = create(ModelProtoSchema, {
      irVersion: 10n,
      graph: { name: 'g', persistentBindings: [{ inputName: 'past', outputName: 'present' }] },
    });
    const back = fromBinary(ModelProtoSchema, toBinary(ModelProtoSchema, model));
    assert.equal(back.irVersion, 10n);
    assert.equal(back.graph.persistentBindings[0].outputName, 'present');
  });
});
