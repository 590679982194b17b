// Runs the ONNX backend test data (Debian libonnx-testdata) through the native
// and the wasm build of tests/conformance/conformance.c, then:
//  - fails on any case whose operators are all registered but that does not
//    pass (unless tests/conformance/exceptions.json lists it with a reason);
//  - fails when a case passing natively gives different output bits in wasm;
//  - writes docs/operators.md from the registry and these results.
// Usage: node tests/conformance/run.mjs [--native-only] [--no-docs] [--tool PATH]
// (--tool: another native build of the runner, e.g. build-asan/conformance)
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
const dataRoot = process.env.ONNX_TESTDATA ?? '/usr/share/libonnx-testdata/data';
const suites = ['node', 'pytorch-converted', 'pytorch-operator', 'simple'];
const argv = process.argv.slice(2);
const toolAt = argv.indexOf('--tool');
const nativeTool = toolAt >= 0 ? argv.splice(toolAt, 2)[1] : join(root, 'build-native', 'conformance');
const wasmTool = join(root, 'build-wasm', 'conformance.cjs');
const args = new Set(argv);

function runTool(command, toolArgs) {
  const out = execFileSync(command, toolArgs, { maxBuffer: 1 << 28, encoding: 'utf8' });
  return out.split('\n').filter(Boolean).map((line) => JSON.parse(line));
}

function runSuite(suite) {
  const dir = join(dataRoot, suite);
  const native = runTool(nativeTool, [dir]);
  const wasm = args.has('--native-only')
    ? null
    : runTool(process.execPath, ['--no-experimental-fetch', wasmTool, dir]);
  return { suite, native, wasm };
}

if (!existsSync(join(dataRoot, 'node'))) {
  console.error(`conformance: ${dataRoot} not found (apt-get install libonnx-testdata)`);
  process.exit(1);
}

const registry = runTool(nativeTool, ['--registry']);
const registered = new Set(registry.filter((r) => r.kernel).map((r) => (r.domain ? `${r.domain}::${r.op}` : r.op)));
const exceptions = JSON.parse(readFileSync(join(root, 'tests/conformance/exceptions.json'), 'utf8'));

const results = suites.map(runSuite);
let failed = 0;
let passed = 0;
const problems = [];
const summary = {};
for (const { suite, native, wasm } of results) {
  const counts = { pass: 0, fail: 0, unsupported: 0, excepted: 0, wasmPass: 0, bitExact: 0 };
  const wasmByName = new Map((wasm ?? []).map((r) => [r.name, r]));
  for (const r of native) {
    counts[r.result] += 1;
    const covered = r.ops.length > 0 && r.ops.every((op) => registered.has(op));
    const w = wasmByName.get(r.name);
    if (w?.result === 'pass') counts.wasmPass += 1;
    const exception = exceptions[r.name];
    if (r.result !== 'pass' && covered) {
      if (exception) {
        counts.excepted += 1;
      } else {
        failed += 1;
        problems.push(`${suite}/${r.name}: native ${r.result}: ${r.reason}`);
      }
      continue;
    }
    if (r.result === 'pass' && wasm) {
      if (!w || w.result !== 'pass' || w.hash !== r.hash) {
        failed += 1;
        problems.push(`${suite}/${r.name}: wasm ${w?.result ?? 'missing'} (hash ${w?.hash} vs native ${r.hash}) ${w?.reason ?? ''}`);
        continue;
      }
      counts.bitExact += 1;
    }
    if (r.result === 'pass') passed += 1;
  }
  summary[suite] = counts;
}

for (const p of problems) console.error(`FAIL ${p}`);
console.log(JSON.stringify({ conformance: summary }, null, 1));

if (!args.has('--no-docs')) {
  const { writeOperatorsDoc } = await import('./operators_doc.mjs');
  writeOperatorsDoc({ root, registry, results, exceptions, summary });
}
console.log(`conformance: ${passed} passed, ${failed} failed`);
process.exit(failed ? 1 : 0);
