// bench/browser.mjs still runs: the tiny shape, one run, a few steps,
// onnx-light and onnxruntime-web on 1 thread (plain page) and 2 threads
// (cross-origin isolated page). No timing is asserted; every measured field
// must be a number, the renderer's memory found, and no page may fail.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

test('bench/browser.mjs: tiny shape in Chromium, 1 and 2 threads, JSON with every metric', () => {
  const run = spawnSync(
    process.execPath,
    [join(ROOT, 'bench/browser.mjs'), '--shapes', 'tiny', '--runs', '1', '--threads', '1,2', '--steps', '3', '--prefill-runs', '2', '--contexts', '20', '--runtimes', 'ol,ort'],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 },
  );
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.equal(report.bench, 'browser');
  assert.match(report.browser, /Chromium/);
  assert.equal(report.pageErrors, undefined);
  const [model] = report.models;
  assert.deepEqual(Object.keys(model.medians), ['ol/1t', 'ort/1t', 'ol/2t', 'ort/2t']);
  for (const [key, [result]] of Object.entries(model.raw)) {
    assert.equal(result.error, undefined, `${key}: ${result.error}`);
    assert.equal(result.crossOriginIsolated, key.endsWith('/2t'), key);
    if (key.startsWith('ol')) assert.equal(result.moduleThreads, key.endsWith('/2t') ? 2 : 1, key);
    for (const field of ['importMs', 'createMs', 'prefillFirstMs', 'prefillSteadyMs', 'decodeMedianMs', 'decodeAt20Ms', 'rssAfterCreateMB', 'peakRssMB', 'cacheBytes']) {
      assert.ok(result[field] > 0, `${key}.${field} = ${result[field]}`);
    }
  }
  assert.ok(model.ratiosOverOrt['ol/2t']['ort/2t'].createMs > 0);
});
