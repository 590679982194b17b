#!/usr/bin/env node
// npm run build: the native library and tests (build-native/), the wasm module
// (build-wasm/), then the package's dist/:
//   onnx_light.wasm, onnx_light.cjs  the module and its Emscripten glue
//   threads/                         the threaded module (pthreads): .wasm, glue,
//                                    worker script, package.json (CommonJS folder)
//   onnx_light_relaxed.wasm,         both modules with relaxed SIMD (8-bit dot
//   threads/onnx_light_threads_relaxed.wasm  products), loaded with the same glue
//                                    (scripts/relax-wasm.mjs, run by CMake)
//   node.js + modules, cli.js        ESM for Node (copied from js/src)
//   browser.js                       ESM bundle for browsers (esbuild, glue inside)
//   browser-worker.js                the generator's Web Worker (esbuild)
//   index.d.ts                       TypeScript declarations (js/types)
//   proto/onnx_light_pb.{js,d.ts}    typed ModelProto etc. (protoc-gen-es)
// and web/dist/ (the chat app, bundled with esbuild: buildApp).
// CMake rebuilds only what changed; the JS steps take well under a second.
// Options: --quiet (print tool output only on failure), --native, --wasm, --js
// (only those steps; default all).
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const DIST = join(ROOT, 'dist');
const args = new Set(process.argv.slice(2));
const quiet = args.has('--quiet');
const only = ['--native', '--wasm', '--js'].filter((a) => args.has(a));
const wants = (step) => only.length === 0 || only.includes(step);
const jobs = String(availableParallelism());
// Debian's emcc needs acorn, which Debian installs outside Node's default path.
const EMSDK_ENV = { ...process.env, NODE_PATH: [process.env.NODE_PATH, '/usr/share/nodejs'].filter(Boolean).join(':') };

function run(command, commandArgs, { env = process.env } = {}) {
  const result = spawnSync(command, commandArgs, { cwd: ROOT, env, stdio: quiet ? 'pipe' : 'inherit', encoding: 'utf8' });
  if (result.error) {
    const hint = result.error.code === 'ENOENT' ? ' (missing tool: run bash scripts/setup.sh)' : '';
    throw new Error(`${command}: ${result.error.message}${hint}`);
  }
  if (result.status !== 0) {
    if (quiet) process.stderr.write(`${result.stdout ?? ''}${result.stderr ?? ''}`);
    throw new Error(`${command} ${commandArgs.join(' ')} failed with exit code ${result.status}`);
  }
}

function step(name) {
  if (!quiet) console.log(`\n== build: ${name}`);
}

function newer(source, target) {
  return !existsSync(target) || statSync(source).mtimeMs > statSync(target).mtimeMs;
}

/** Copies when the content differs, so unchanged files keep their mtime. */
function copyIfChanged(from, to) {
  if (existsSync(to) && readFileSync(from).equals(readFileSync(to))) return;
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
}

function writeIfChanged(to, text) {
  if (existsSync(to) && readFileSync(to, 'utf8') === text) return;
  mkdirSync(dirname(to), { recursive: true });
  writeFileSync(to, text);
}

function buildNative() {
  step('native (build-native, Release)');
  if (!existsSync(join(ROOT, 'build-native/CMakeCache.txt'))) {
    if (quiet) console.error('build: first native build (build-native), this takes a while');
    run('cmake', ['-S', '.', '-B', 'build-native', '-DCMAKE_BUILD_TYPE=Release']);
  }
  run('cmake', ['--build', 'build-native', '-j', jobs]);
}

function buildWasm() {
  step('wasm (build-wasm, emcmake)');
  if (!existsSync(join(ROOT, 'build-wasm/CMakeCache.txt'))) {
    if (quiet) console.error('build: first wasm build (build-wasm), this takes a while');
    run('emcmake', ['cmake', '-S', '.', '-B', 'build-wasm', '-DCMAKE_BUILD_TYPE=Release'], { env: EMSDK_ENV });
  }
  run('cmake', ['--build', 'build-wasm', '-j', jobs], { env: EMSDK_ENV });
}

function buildProto() {
  const proto = join(ROOT, 'proto/onnx_light.proto');
  const out = join(DIST, 'proto');
  if (!newer(proto, join(out, 'onnx_light_pb.js'))) return;
  step('proto JS (protoc-gen-es)');
  mkdirSync(out, { recursive: true });
  run('protoc', [
    `--plugin=protoc-gen-es=${join(ROOT, 'node_modules/.bin/protoc-gen-es')}`,
    `--es_out=${out}`,
    '--es_opt=target=js+dts',
    `-I${join(ROOT, 'proto')}`,
    proto,
  ]);
}

async function buildJs() {
  step('dist/ (ESM, browser bundle, types)');
  mkdirSync(DIST, { recursive: true });
  copyIfChanged(join(ROOT, 'build-wasm/onnx_light.wasm'), join(DIST, 'onnx_light.wasm'));
  copyIfChanged(join(ROOT, 'build-wasm/onnx_light.js'), join(DIST, 'onnx_light.cjs'));
  copyIfChanged(join(ROOT, 'build-wasm/onnx_light_relaxed.wasm'), join(DIST, 'onnx_light_relaxed.wasm'));
  // The threaded module's files keep their .js names: its Web Workers and
  // worker_threads load the glue and worker script by name, as classic scripts.
  for (const file of ['onnx_light_threads.wasm', 'onnx_light_threads_relaxed.wasm', 'onnx_light_threads.js', 'onnx_light_threads.worker.js']) {
    copyIfChanged(join(ROOT, 'build-wasm', file), join(DIST, 'threads', file));
  }
  writeIfChanged(join(DIST, 'threads/package.json'), '{ "type": "commonjs" }\n');
  const browserOnly = new Set(['browser.js', 'platform-browser.js', 'worker-browser.js']);
  for (const file of readdirSync(join(ROOT, 'js/src'))) {
    if (file.endsWith('.js') && !browserOnly.has(file)) copyIfChanged(join(ROOT, 'js/src', file), join(DIST, file));
  }
  chmodSync(join(DIST, 'cli.js'), 0o755);
  copyIfChanged(join(ROOT, 'js/types/index.d.ts'), join(DIST, 'index.d.ts'));
  buildProto();

  const esbuild = await import('esbuild');
  const bundle = (entry, outfile) =>
    esbuild.build({
      entryPoints: [join(ROOT, entry)],
      outfile,
      bundle: true,
      format: 'esm',
      platform: 'browser',
      target: 'es2022',
      minify: true,
      sourcemap: true,
      legalComments: 'none',
      logLevel: 'error',
      // The glue's Node-only branch requires these; it never runs in a browser.
      external: ['fs', 'path', 'crypto', 'url', 'worker_threads', 'os', 'perf_hooks'],
      plugins: [
        {
          name: 'emscripten-glue',
          setup(build) {
            build.onResolve({ filter: /onnx_light\.cjs$/ }, () => ({ path: join(DIST, 'onnx_light.cjs') }));
            build.onResolve({ filter: /onnx_light_threads\.js$/ }, () => ({ path: join(DIST, 'threads/onnx_light_threads.js') }));
          },
        },
      ],
    });
  await bundle('js/src/browser.js', join(DIST, 'browser.js'));
  // The Web Worker of createGenerator(model, { worker: true }), next to browser.js.
  await bundle('js/src/worker-browser.js', join(DIST, 'browser-worker.js'));
  if (existsSync(join(ROOT, 'web/index.html'))) await buildApp(esbuild);
}

// The files of dist/ a page using the browser bundle serves beside it (the
// README's "Bundlers" section): the wasm modules and the threaded module's
// scripts, which its Web Workers load by URL.
const RUNTIME_FILES = [
  'onnx_light.wasm', 'onnx_light_relaxed.wasm',
  'threads/onnx_light_threads.wasm', 'threads/onnx_light_threads_relaxed.wasm', 'threads/onnx_light_threads.js', 'threads/onnx_light_threads.worker.js',
];

/**
 * The chat app: web/ -> web/dist/ (git-ignored, not part of the package),
 * built the way the README tells bundler users to: the page's scripts
 * bundled with esbuild ('onnx-light' resolved to dist/browser.js), the
 * runtime files copied beside them, and a service worker that caches all of
 * it (its cache version is a hash of the files, so a new build replaces it).
 */
async function buildApp(esbuild) {
  const out = join(ROOT, 'web/dist');
  mkdirSync(out, { recursive: true });
  for (const file of readdirSync(join(ROOT, 'web'))) {
    if (/\.(html|css)$/.test(file)) copyIfChanged(join(ROOT, 'web', file), join(out, file));
  }
  for (const file of RUNTIME_FILES) copyIfChanged(join(DIST, file), join(out, file));
  const common = { bundle: true, format: 'esm', platform: 'browser', target: 'es2022', minify: true, logLevel: 'error', alias: { 'onnx-light': join(DIST, 'browser.js') } };
  await esbuild.build({ ...common, entryPoints: [join(ROOT, 'web/app.js')], outfile: join(out, 'app.js'), sourcemap: true });
  await esbuild.build({ ...common, entryPoints: [join(ROOT, 'web/chat-worker.js')], outfile: join(out, 'chat-worker.js'), sourcemap: true });
  const files = ['index.html', 'app.css', 'app.js', 'chat-worker.js', ...RUNTIME_FILES];
  const hash = createHash('sha256');
  for (const file of files) hash.update(readFileSync(join(out, file)));
  await esbuild.build({
    ...common,
    entryPoints: [join(ROOT, 'web/sw.js')],
    outfile: join(out, 'sw.js'),
    define: { APP_VERSION: JSON.stringify(hash.digest('hex').slice(0, 16)), APP_FILES: JSON.stringify(['./', ...files]) },
  });
}

try {
  if (wants('--native')) buildNative();
  if (wants('--wasm')) buildWasm();
  if (wants('--js')) await buildJs();
} catch (error) {
  console.error(`build failed: ${error.message}`);
  process.exit(1);
}
