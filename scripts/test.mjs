#!/usr/bin/env node
// npm test (after set-up and build): runs every suite, in order, even when an
// earlier one fails, then prints a summary and exits non-zero on any failure.
//   node scripts/test.mjs [suite ...]    e.g. `node scripts/test.mjs js browser`
// Suites: ctest (native C tests), js (node --test tests/js/), conformance and
// parity (when their runners exist), browser (headless Chromium), types (tsc),
// and two that run in CI (CI=true) or when named: asan (C tests and the
// conformance runner under ASan + UBSan + LSan) and fuzz (each libFuzzer
// harness for 60 s). Both use build-asan/, built with clang-19 (a few
// minutes the first time).
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const node = process.execPath;

const SUITES = [
  ['ctest', 'ctest', ['--test-dir', 'build-native', '--output-on-failure', '-j', '2']],
  ['js', node, ['--test', 'tests/js/']],
  ['conformance', node, ['tests/conformance/run.mjs'], 'tests/conformance/run.mjs'],
  ['parity', node, ['tests/parity/run.mjs'], 'tests/parity/run.mjs'],
  ['browser', node, ['--test', 'tests/browser/']],
  ['types', node, ['node_modules/typescript/bin/tsc', '-p', 'js/tsconfig.json']],
  ['asan', node, ['scripts/sanitize.mjs'], null, { ciOnly: true }],
  ['fuzz', node, ['tests/fuzz/run.mjs', '--seconds', '60'], null, { ciOnly: true }],
];
const inCI = process.env.CI === 'true' || process.env.CI === '1';

const wanted = process.argv.slice(2);
const unknown = wanted.filter((name) => !SUITES.some(([n]) => n === name));
if (unknown.length) {
  console.error(`unknown suite(s): ${unknown.join(', ')} (have: ${SUITES.map(([n]) => n).join(', ')})`);
  process.exit(2);
}

const results = [];
for (const [name, command, args, requires, { ciOnly = false } = {}] of SUITES) {
  if (wanted.length && !wanted.includes(name)) continue;
  if (!wanted.length && ciOnly && !inCI) {
    console.log(`\n== test: ${name} runs in CI (CI=true) or when named: node scripts/test.mjs ${name}`);
    continue;
  }
  if (requires && !existsSync(join(ROOT, requires))) {
    console.log(`\n== test: ${name} skipped (${requires} does not exist yet)`);
    continue;
  }
  console.log(`\n== test: ${name}`);
  const start = performance.now();
  const run = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit' });
  const seconds = ((performance.now() - start) / 1000).toFixed(1);
  const ok = run.status === 0;
  if (run.error) console.error(`${command}: ${run.error.message}`);
  results.push({ name, ok, seconds });
}

console.log('\n== test summary');
for (const { name, ok, seconds } of results) console.log(`${ok ? 'ok  ' : 'FAIL'} ${name} (${seconds} s)`);
const failed = results.filter((r) => !r.ok).length;
console.log(`suites: ${results.length - failed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
