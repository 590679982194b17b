#!/usr/bin/env node
// Makes a relaxed-SIMD module from one linked with OL_WASM_RELAXED
// (CMakeLists.txt): every call to ol_relaxed_dot_i8x16_i7x16 (simd/relaxed_dot.h)
// becomes the instruction i16x8.relaxed_dot_i8x16_i7x16_s. Both take two
// v128 from the wasm stack and leave one, so in wabt's flat text the call line
// is replaced by the instruction line and nothing else moves.
//
//   node scripts/relax-wasm.mjs IN.wasm OUT.wasm GLUE.js IN_GLUE.js
//
// IN.wasm is linked without a name section (a name section changes emcc's
// glue), so the function is found by its shape: the only function of type
// (v128, v128) -> v128 with a loop and integer products (its plain C
// definition, simd/relaxed_dot.c). Anything else (none, two, no call to it:
// emcc's optimizer inlined it) fails the build rather than ship a module
// without the instruction. The package loads OUT.wasm with the SIMD128 glue
// GLUE.js, so IN_GLUE.js must equal it but for the file names it mentions.
// OUT.wasm gets a custom section "onnx-light:relaxed-simd" by which the
// loader (js/src/runtime.js) recognises a relaxed module it is given.
// Tools: wabt's wasm2wat and wat2wasm (Debian package wabt, scripts/setup.sh;
// 1.0.32 spells the instruction i16x8.dot_i8x16_i7x16_s).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';

const RELAXED_SECTION = 'onnx-light:relaxed-simd';
const FEATURES = ['--enable-threads', '--enable-relaxed-simd'];

function tool(name, args) {
  const result = spawnSync(name, args, { encoding: 'utf8', maxBuffer: 1 << 30 });
  if (result.error) {
    const hint = result.error.code === 'ENOENT' ? ' (install Debian package wabt: bash scripts/setup.sh)' : '';
    throw new Error(`${name}: ${result.error.message}${hint}`);
  }
  if (result.status !== 0) throw new Error(`${name} ${args.join(' ')} failed: ${result.stderr}`);
  return result.stdout;
}

/** The instruction's name in this wabt (renamed in wabt 1.0.33). */
function dotName() {
  const version = tool('wat2wasm', ['--version']).trim();
  const [major, minor, patch] = version.split('.').map(Number);
  const old = major < 1 || (major === 1 && (minor === 0 && patch < 33));
  return old ? 'i16x8.dot_i8x16_i7x16_s' : 'i16x8.relaxed_dot_i8x16_i7x16_s';
}

/** The flat text with every call to the marker replaced; throws unless exactly one marker with calls. */
function relaxText(wat, instruction) {
  const lines = wat.split('\n');
  const markers = [];
  for (let i = 0; i < lines.length; i++) {
    // (func (;N;) ...), or (func $name ...) in a module with names (OL_WASM_PROFILING)
    const m = /^ {2}\(func (?:\(;(\d+);\)|(\$\S+)) \(type \d+\) \(param v128 v128\) \(result v128\)/.exec(lines[i]);
    if (!m) continue;
    const body = [];
    for (let j = i + 1; j < lines.length && !lines[j].startsWith('  ('); j++) body.push(lines[j].trim());
    markers.push({ index: m[1] ?? m[2], plain: body.some((l) => l.startsWith('loop')) && body.includes('i32.mul') });
  }
  if (markers.length !== 1 || !markers[0].plain) {
    throw new Error(`expected one function (v128, v128) -> v128 with a loop of i32.mul, found ${markers.length}` +
      `${markers.length === 1 ? ' without them' : ''}`);
  }
  const call = `call ${markers[0].index}`;
  let calls = 0;
  for (let i = 0; i < lines.length; i++) {
    if (lines[i].trim() !== call) continue;
    lines[i] = lines[i].replace(call, instruction);
    calls += 1;
  }
  if (calls === 0) throw new Error(`no call to the marker function ${markers[0].index}: was it inlined?`);
  return { text: lines.join('\n'), calls, named: markers[0].index.startsWith('$') };
}

function uleb(n) {
  const out = [];
  do {
    let byte = n & 0x7f;
    n >>>= 7;
    if (n) byte |= 0x80;
    out.push(byte);
  } while (n);
  return out;
}

/** A custom section (id 0) named name with an empty payload. */
function customSection(name) {
  const bytes = [...Buffer.from(name, 'utf8')];
  const body = [...uleb(bytes.length), ...bytes];
  return Buffer.from([0, ...uleb(body.length), ...body]);
}

/** Glue text with the module's own file names replaced by the SIMD128 module's. */
function normalizedGlue(path, from, to) {
  return readFileSync(path, 'utf8').split(from).join(to);
}

function main([input, output, glue, inputGlue]) {
  if (!inputGlue) throw new Error('usage: relax-wasm.mjs IN.wasm OUT.wasm GLUE.js IN_GLUE.js');
  const stem = (p) => basename(p).replace(/\.js$/, '');
  if (normalizedGlue(inputGlue, stem(inputGlue), stem(glue)) !== readFileSync(glue, 'utf8')) {
    throw new Error(`${inputGlue} differs from ${glue}: the relaxed module cannot share the SIMD128 glue`);
  }
  const dir = mkdtempSync(join(tmpdir(), 'relax-wasm-'));
  try {
    const wat = tool('wasm2wat', [...FEATURES, input]);
    const { text, calls, named } = relaxText(wat, dotName());
    const watFile = join(dir, 'relaxed.wat');
    const wasmFile = join(dir, 'relaxed.wasm');
    writeFileSync(watFile, text);
    tool('wat2wasm', [...FEATURES, ...(named ? ['--debug-names'] : []), watFile, '-o', wasmFile]);
    writeFileSync(output, Buffer.concat([readFileSync(wasmFile), customSection(RELAXED_SECTION)]));
    console.log(`relax-wasm: ${basename(output)}: ${calls} relaxed dot products`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

try {
  main(process.argv.slice(2));
} catch (error) {
  console.error(`relax-wasm: ${error.message}`);
  process.exit(1);
}
