// bench/decode.mjs still runs: the tiny shape, one run, a few steps, both
// runtimes and the paged one, children under the Node binary --node names.
// No timing is asserted (benchmarks are measured elsewhere); every measured
// field must be a number and no run may fail.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { test } from 'node:test';

import { ROOT } from './models.mjs';

const TINY = ['--shapes', 'tiny', '--runs', '1', '--threads', '1', '--steps', '3', '--prefill-runs', '2', '--contexts', '20'];
const bench = (args) => spawnSync(process.execPath, [join(ROOT, 'bench/decode.mjs'), ...args], { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 26 });

test('bench/decode.mjs --node: tiny shape, children under that binary, JSON with every metric', () => {
  const run = bench([...TINY, '--runtimes', 'ol,ort,olpaged', '--node', process.execPath]);
  assert.equal(run.status, 0, run.stderr);
  const report = JSON.parse(run.stdout);
  assert.equal(report.node, process.version);
  assert.equal(report.nodePath, process.execPath);
  const [model] = report.models;
  assert.equal(model.shape, 'tiny');
  assert.deepEqual(Object.keys(model.medians), ['ol', 'ort', 'olpaged']);
  for (const [key, runs] of Object.entries(model.raw)) assert.equal(runs[0].error, undefined, `${key}: ${runs[0].error}`);
  for (const [key, m] of Object.entries(model.medians)) {
    for (const field of ['createMs', 'prefillFirstMs', 'prefillSteadyMs', 'decodeMedianMs', 'decodeAt20Ms', 'peakRssMB', 'cacheBytes']) {
      assert.ok(m[field] > 0, `${key}.${field} = ${m[field]}`);
    }
  }
  assert.ok(model.ratioOlOverOrt.decodeMedianMs > 0);
});

test('bench/decode.mjs --node with a path that is not a Node binary: a clear error', () => {
  const run = bench([...TINY, '--node', join(ROOT, 'no-such-node')]);
  assert.notEqual(run.status, 0);
  assert.match(run.stderr, /--node .*no-such-node: cannot run it/);
});
