#!/usr/bin/env node
// Builds the libFuzzer harnesses (tests/fuzz/fuzz_*.c, clang-19 with ASan +
// UBSan, in build-asan/: the tree scripts/sanitize.mjs tests, configured the
// same way, so CI compiles the instrumented library once; model32 is the
// model harness built for i386 in build-asan32/) and runs each for a bounded
// time:
//   node tests/fuzz/run.mjs [--seconds N] [--build-only] [harness ...]
// e.g. `node tests/fuzz/run.mjs --seconds 600 model`. Default: 60 s each.
//
// Seeds are made at run time from the repository's models, tests/data and
// the ONNX backend test models (Debian libonnx-testdata), never committed:
// build-asan/seeds/<harness>/ is rebuilt on every run, and what libFuzzer
// learns accumulates in build-asan/corpus/<harness>/. A crash, a sanitizer
// report, a leak, an input slower than -timeout or a run past -rss_limit_mb
// fails the harness; the reproducer is kept in build-asan/crashes/ (turn it
// into a regression test in tests/c, see tests/fuzz/README.md).
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const BUILD = join(ROOT, 'build-asan');
const TESTDATA = process.env.ONNX_TESTDATA ?? '/usr/share/libonnx-testdata/data';

// The build trees: the 64-bit one (shared with scripts/sanitize.mjs) and a
// 32-bit one (i386: size_t as narrow as in wasm32, so that truncated sizes
// show up natively as the heap overflows they are in the wasm module).
const TREES = {
  asan: { dir: BUILD, flags: [] },
  asan32: { dir: join(ROOT, 'build-asan32'), flags: ['-DOL_M32=ON'] },
};
// name -> its program and tree, what one input may be (bytes) and the kinds
// of seeds it starts from
const HARNESSES = {
  model: { program: 'fuzz_model', tree: 'asan', maxLen: 65536, seeds: 'model' },
  model32: { program: 'fuzz_model', tree: 'asan32', maxLen: 65536, seeds: 'model' },
  text: { program: 'fuzz_text', tree: 'asan', maxLen: 65536, seeds: 'text' },
  encoded: { program: 'fuzz_encoded', tree: 'asan', maxLen: 16384, seeds: 'encoded' },
  paged: { program: 'fuzz_paged', tree: 'asan', maxLen: 16384, seeds: 'paged' },
};
// One input: at most 10 s (runs are cancelled after 2 s, see fuzz_util.h)
// and 2 GiB of memory; sanitizer reports end the process.
const PER_INPUT_SECONDS = 10;
const RSS_LIMIT_MB = 2048;
const SANITIZER_ENV = {
  // OOM paths are part of what is tested: allocations past 1 GiB fail
  // (NULL) as they would on a device, instead of ending the fuzzer
  ASAN_OPTIONS: 'allocator_may_return_null=1:max_allocation_size_mb=1024:detect_leaks=1:detect_stack_use_after_return=1',
  UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1',
};
const SYMBOLIZER = '/usr/lib/llvm-19/bin/llvm-symbolizer'; // (Debian llvm-19): reports with file and line
if (existsSync(SYMBOLIZER)) SANITIZER_ENV.ASAN_SYMBOLIZER_PATH = SANITIZER_ENV.UBSAN_SYMBOLIZER_PATH = SYMBOLIZER;

const argv = process.argv.slice(2);
let seconds = 60;
const wanted = [];
let buildOnly = false;
for (let i = 0; i < argv.length; i++) {
  if (argv[i] === '--seconds') seconds = Number(argv[++i]);
  else if (argv[i] === '--build-only') buildOnly = true;
  else wanted.push(argv[i]);
}
const names = wanted.length ? wanted : Object.keys(HARNESSES);
const unknown = names.filter((n) => !HARNESSES[n]);
if (unknown.length || !(seconds > 0)) {
  console.error(`usage: node tests/fuzz/run.mjs [--seconds N] [--build-only] [${Object.keys(HARNESSES).join('|')} ...]`);
  process.exit(2);
}

function run(command, args, options = {}) {
  const r = spawnSync(command, args, { cwd: ROOT, stdio: 'inherit', ...options });
  if (r.error) throw new Error(`${command}: ${r.error.message}${r.error.code === 'ENOENT' ? ' (run bash scripts/setup.sh)' : ''}`);
  if (r.status !== 0) throw new Error(`${command} ${args.join(' ')} failed with exit code ${r.status}`);
}

/** Configures (once) and builds the programs the named harnesses need, and fuzz_seeds. */
function build(harnesses) {
  const programs = { asan: new Set(['fuzz_seeds']) };
  for (const { program, tree } of harnesses.map((n) => HARNESSES[n])) (programs[tree] ??= new Set()).add(program);
  for (const [tree, targets] of Object.entries(programs)) {
    const { dir, flags } = TREES[tree];
    if (!existsSync(join(dir, 'CMakeCache.txt'))) {
      run('cmake', ['-S', '.', '-B', dir, '-DOL_SANITIZE=ON', '-DOL_FUZZ=ON', ...flags, '-DCMAKE_BUILD_TYPE=RelWithDebInfo'], {
        env: { ...process.env, CC: 'clang-19' },
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    }
    run('cmake', ['--build', dir, '-j', String(availableParallelism()), '--target', ...targets], {
      stdio: ['ignore', 'ignore', 'inherit'],
    });
  }
}

/** Every file under dir whose name ends with one of the suffixes. */
function filesUnder(dir, suffixes, out = []) {
  if (!existsSync(dir)) return out;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) filesUnder(path, suffixes, out);
    else if (suffixes.some((s) => entry.name.endsWith(s))) out.push(path);
  }
  return out;
}

function makeSeeds() {
  const seeds = join(BUILD, 'seeds');
  rmSync(seeds, { recursive: true, force: true });
  for (const kind of ['model', 'text', 'encoded', 'paged']) mkdirSync(join(seeds, kind), { recursive: true });
  const files = [
    ...filesUnder(join(ROOT, 'models'), ['.onnx']),
    ...filesUnder(join(ROOT, 'tests/data'), ['.onnx', '.pb']),
    ...filesUnder(TESTDATA, ['.onnx']),
  ];
  if (!existsSync(TESTDATA)) console.error(`fuzz: ${TESTDATA} not found (apt-get install libonnx-testdata): fewer seeds`);
  run(join(BUILD, 'fuzz_seeds'), [seeds, ...files], { env: { ...process.env, ...SANITIZER_ENV, FUZZ_MAX_LEN: '65536' } });
  return seeds;
}

/** Runs one harness; resolves to its statistics and whether it failed. */
function fuzz(name, seeds) {
  const { maxLen, program, tree } = HARNESSES[name];
  const corpus = join(BUILD, 'corpus', name);
  const crashes = join(BUILD, 'crashes');
  const logs = join(BUILD, 'logs');
  for (const dir of [corpus, crashes, logs]) mkdirSync(dir, { recursive: true });
  const args = [
    `-max_total_time=${seconds}`,
    `-timeout=${PER_INPUT_SECONDS}`,
    `-rss_limit_mb=${RSS_LIMIT_MB}`,
    `-max_len=${maxLen}`,
    `-artifact_prefix=${crashes}/${name}-`,
    '-print_final_stats=1',
    corpus,
    join(seeds, HARNESSES[name].seeds),
  ];
  const logPath = join(logs, `${name}.log`);
  const log = createWriteStream(logPath);
  return new Promise((resolve) => {
    const start = performance.now();
    const child = spawn(join(TREES[tree].dir, program), args, { cwd: BUILD, env: { ...process.env, ...SANITIZER_ENV } });
    let tail = '';
    const keep = (chunk) => {
      log.write(chunk);
      tail = (tail + chunk.toString()).slice(-200000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('close', (code, signal) => {
      log.end();
      const stat = (key) => Number(tail.match(new RegExp(`stat::${key}:\\s+(\\d+)`))?.[1] ?? NaN);
      const failed = code !== 0 || signal !== null;
      const report = failed ? tail.split('\n').filter((l) => /ERROR|SUMMARY|Test unit written|ALARM|==\d+==|#\d+ 0x/.test(l)).slice(0, 40) : [];
      resolve({
        name,
        failed,
        seconds: (performance.now() - start) / 1000,
        executions: stat('number_of_executed_units'),
        perSecond: stat('average_exec_per_sec'),
        corpus: readdirSync(corpus).length,
        logPath,
        report,
      });
    });
  });
}

try {
  build(names);
} catch (error) {
  console.error(`fuzz: build failed: ${error.message}`);
  process.exit(1);
}
if (buildOnly) process.exit(0);
const seeds = makeSeeds();
let failures = 0;
let total = 0;
for (const name of names) {
  const r = await fuzz(name, seeds);
  total += Number.isFinite(r.executions) ? r.executions : 0;
  console.log(
    `${r.failed ? 'FAIL' : 'ok  '} ${name}: ${r.executions} executions in ${r.seconds.toFixed(0)} s ` +
      `(${r.perSecond}/s), corpus ${r.corpus} inputs, log ${r.logPath}`,
  );
  if (r.failed) {
    failures++;
    for (const line of r.report) console.log(`    ${line}`);
  }
}
console.log(`fuzz: ${total} executions, ${failures} harness(es) failed`);
process.exit(failures ? 1 : 0);
