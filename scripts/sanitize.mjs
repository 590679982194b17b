#!/usr/bin/env node
// The native C tests and the conformance runner under AddressSanitizer,
// UndefinedBehaviorSanitizer and LeakSanitizer (clang-19, build-asan/, which
// also holds the libFuzzer harnesses of tests/fuzz/run.mjs):
//   node scripts/sanitize.mjs [--build-only]
// Any report fails: the code is built with -fno-sanitize-recover=all, so the
// first undefined behaviour, memory error or leak ends the process with a
// non-zero status and a stack trace.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const BUILD = join(ROOT, 'build-asan');
const jobs = String(availableParallelism());
const env = {
  ...process.env,
  // out of memory is a tested path (allocations the machine cannot give
  // return NULL and become OL_OUT_OF_MEMORY), not a sanitizer finding
  ASAN_OPTIONS: 'allocator_may_return_null=1:detect_leaks=1:detect_stack_use_after_return=1:strict_string_checks=1',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
};
const SYMBOLIZER = '/usr/lib/llvm-19/bin/llvm-symbolizer'; // (Debian llvm-19)
if (existsSync(SYMBOLIZER)) env.ASAN_SYMBOLIZER_PATH = env.UBSAN_SYMBOLIZER_PATH = SYMBOLIZER;

function run(name, command, args, options = {}) {
  console.log(`\n== sanitize: ${name}`);
  const start = performance.now();
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', env, ...options });
  if (r.error) {
    console.error(`${command}: ${r.error.message}${r.error.code === 'ENOENT' ? ' (run bash scripts/setup.sh)' : ''}`);
    return false;
  }
  console.log(`${r.status === 0 ? 'ok' : 'FAIL'} ${name} (${((performance.now() - start) / 1000).toFixed(1)} s)`);
  return r.status === 0;
}

let ok = true;
if (!existsSync(join(BUILD, 'CMakeCache.txt'))) {
  ok = run('configure', 'cmake', ['-S', '.', '-B', BUILD, '-DOL_SANITIZE=ON', '-DOL_FUZZ=ON', '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], {
    env: { ...env, CC: 'clang-19' },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}
ok = ok && run('build', 'cmake', ['--build', BUILD, '-j', jobs], { stdio: ['ignore', 'ignore', 'inherit'] });
if (ok && !process.argv.includes('--build-only')) {
  const tests = run('ctest', 'ctest', ['--test-dir', BUILD, '--output-on-failure', '-j', jobs]);
  const conformance = run('conformance', process.execPath, [
    'tests/conformance/run.mjs',
    '--native-only',
    '--no-docs',
    '--tool',
    join(BUILD, 'conformance'),
  ]);
  ok = tests && conformance;
}
process.exit(ok ? 0 : 1);
