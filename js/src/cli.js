#!/usr/bin/env node
// onnx-light command line.
//   onnx-light generate --model PATH --prompt TEXT [--max-new-tokens N]
//                       [--temperature T] [--seed S] [--eos-token-id ID]
//                       [--tokenizer tokenizer.json] [--threads N]
//                       [--paged [--kv-format int8/uint4]]
//   onnx-light quantize --model IN.onnx --out OUT.onnx
//                       [--format ort_matmulnbits_int4] [--block-size 32]
// Streams the continuation to stdout and the speed to stderr. Models with
// past_key_values.* inputs are bound as bindCache does (inside wasm memory:
// InferenceSession.create's bindCache option) and decoded with a
// persistent state (the KV cache stays in wasm memory: prompt once, then one
// token per step); other models re-run the growing prefix. With --paged the
// decoder is first rewritten onto paged KV caches (toPagedModel) whose
// pages may be quantized (--kv-format), and the cache's size is reported.
// Without --tokenizer a token is a byte of UTF-8 text (byte-vocabulary models).
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

import { InferenceSession, OnnxLightError, Tensor, emptyCaches, env, memoryStats, numThreads, parseQuantizationFormat, toPagedModel } from './node.js';
import { quantizeModel } from './quantize-model.js';

const USAGE = `usage: onnx-light generate --model PATH --prompt TEXT [options]
       onnx-light quantize --model IN.onnx --out OUT.onnx [--format F] [--block-size B]

generate:

  --model PATH          ONNX decoder (input_ids -> logits, optionally with
                        past_key_values.* / present.* caches)
  --prompt TEXT         text to continue
  --max-new-tokens N    tokens to generate (default 64)
  --temperature T       0 (default) greedy; > 0 samples softmax(logits / T)
  --seed S              sampling seed (default 0)
  --eos-token-id ID     stop when this token is produced
  --tokenizer FILE      a Hugging Face tokenizer.json (read with the package
                        @huggingface/tokenizers, installed separately; a
                        tokenizer_config.json beside it is used too);
                        default: a token is a byte of UTF-8
  --threads N           intra-op threads (default: the number of cores;
                        1: the single-threaded module)
  --paged               rewrite the decoder onto paged KV caches
                        (ai.rt::PagedAttention, pages of 16 tokens)
  --kv-format K[/V]     with --paged: the storage of key/value pages,
                        float32 (default), int8, uint8, int4, uint4, int2 or
                        uint2 (scales calibrated per page); one name for
                        both, or key/value (e.g. int8/uint4)

quantize: every float32 MatMul whose second input is a 2-D [K, N]
initializer gets per-block calibrated quantized weights; the float weights
are dropped and the sizes reported on stderr.
  --format F            ort_matmulnbits_int4 (default), ort_matmulnbits_int8,
                        ort_matmulnbits_int2: a com.microsoft MatMulNBits node;
                        any other catalogue wire name (int4, int8, nf4, ...):
                        an encoded initializer decoded by ai.rt::Dequantize
  --block-size B        elements per block (default 32; a power of two >= 16
                        for MatMulNBits)
  --asymmetric          MatMulNBits only: per-block min/max scales with
                        integer zero points (default: the codec's rule,
                        zero point 2^(bits-1))
`;

/** Byte-level text: a token is one byte of UTF-8. */
function byteTokenizer() {
  const decoder = new TextDecoder('utf-8');
  return {
    encode: (text) => [...new TextEncoder().encode(text)],
    stream: () => ({
      push: (token) => decoder.decode(Uint8Array.of(Number(token)), { stream: true }),
      end: () => decoder.decode(),
    }),
  };
}

async function jsonTokenizer(path) {
  let Tokenizer;
  try {
    const specifier = '@huggingface/tokenizers';
    ({ Tokenizer } = await import(specifier));
  } catch {
    throw new Error('--tokenizer needs the package @huggingface/tokenizers, which is not installed (npm install @huggingface/tokenizers)');
  }
  const json = JSON.parse(await readFile(path, 'utf8'));
  let config = {};
  try {
    config = JSON.parse(await readFile(join(dirname(path), 'tokenizer_config.json'), 'utf8'));
  } catch {
    config = {};
  }
  const tokenizer = new Tokenizer(json, config);
  return {
    encode: (text) => tokenizer.encode(text).ids,
    stream: () => {
      const ids = [];
      let printed = '';
      return {
        push(token) {
          ids.push(Number(token));
          const text = tokenizer.decode(ids);
          // hold back an incomplete character at the end
          if (text.endsWith('\uFFFD')) return '';
          const out = text.slice(printed.length);
          printed = text;
          return out;
        },
        end: () => tokenizer.decode(ids).slice(printed.length),
      };
    },
  };
}

function integer(value, name, min) {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${name} must be an integer >= ${min}, got '${value}'`);
  return n;
}

async function generate(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      prompt: { type: 'string', default: '' },
      'max-new-tokens': { type: 'string', default: '64' },
      temperature: { type: 'string', default: '0' },
      seed: { type: 'string', default: '0' },
      'eos-token-id': { type: 'string' },
      tokenizer: { type: 'string' },
      threads: { type: 'string' },
      paged: { type: 'boolean', default: false },
      'kv-format': { type: 'string' },
    },
  });
  if (!values.model) throw new UsageError();
  if (values['kv-format'] !== undefined && !values.paged) throw new UsageError('--kv-format needs --paged');
  const pagedFormats = values.paged ? kvFormats(values['kv-format'] ?? 'float32') : undefined;
  if (values.threads !== undefined) env.wasm.numThreads = integer(values.threads, '--threads', 1);
  const maxNewTokens = integer(values['max-new-tokens'], '--max-new-tokens', 0);
  const temperature = Number(values.temperature);
  if (!(temperature >= 0) || !Number.isFinite(temperature)) throw new UsageError(`--temperature must be a number >= 0, got '${values.temperature}'`);
  const seed = BigInt(integer(values.seed, '--seed', 0));
  const eosTokenId = values['eos-token-id'] === undefined ? undefined : integer(values['eos-token-id'], '--eos-token-id', 0);
  const tokenizer = values.tokenizer ? await jsonTokenizer(values.tokenizer) : byteTokenizer();
  const promptIds = tokenizer.encode(values.prompt);
  if (promptIds.length === 0) throw new UsageError('--prompt must not be empty');

  const createStart = performance.now();
  // the file read straight into wasm memory, its KV cache bound there (one
  // copy of the model); with --paged the rewritten model
  const session = values.paged
    ? await InferenceSession.create(await toPagedModel(values.model), { pagedFormats })
    : await InferenceSession.create(values.model, { bindCache: true });
  const feeds = { input_ids: new Tensor('int64', BigInt64Array.from(promptIds, BigInt), [1, promptIds.length]) };
  if (session.persistentBindings.length) Object.assign(feeds, await emptyCaches(session));
  const createMs = performance.now() - createStart;
  const mode = values.paged
    ? `paged KV cache, ${values['kv-format'] ?? 'float32'} pages`
    : session.persistentBindings.length ? 'persistent KV cache' : 'full prefix every step';

  const text = tokenizer.stream();
  process.stdout.write(values.prompt);
  let count = 0;
  let firstMs = 0;
  const start = performance.now();
  const onToken = (tokens) => {
    if (count++ === 0) firstMs = performance.now() - start;
    process.stdout.write(text.push(tokens[0]));
  };
  const result = await session.generate(feeds, { maxNewTokens, temperature, seed, eosTokenId, onToken, returnCaches: values.paged });
  process.stdout.write(`${text.end()}\n`);
  const seconds = (performance.now() - start) / 1000;
  const rest = count > 1 ? ((count - 1) / (seconds - firstMs / 1000)).toFixed(1) : '-';
  const stats = memoryStats();
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
  process.stderr.write(
    `[onnx-light] ${count} tokens in ${seconds.toFixed(2)} s: ${rest} tokens/s after the first ` +
      `(${mode}; ${numThreads()} thread${numThreads() > 1 ? 's' : ''}; prompt of ${promptIds.length} tokens: ${firstMs.toFixed(0)} ms; load: ${createMs.toFixed(0)} ms; ` +
      `allocator peak ${mib(stats.peakBytes)} MiB, wasm memory ${mib(stats.wasmMemoryBytes)} MiB)\n`,
  );
  if (values.paged) process.stderr.write(`[onnx-light] ${cacheReport(result.caches)}\n`);
  await session.release();
}

const KV_TYPES = ['float32', 'int8', 'uint8', 'int4', 'uint4', 'int2', 'uint2'];

/** --kv-format K[/V] as pagedFormats rules (scales calibrated per page). */
function kvFormats(text) {
  const names = text.split('/');
  if (names.length > 2 || !names.every((n) => KV_TYPES.includes(n))) {
    throw new UsageError(`--kv-format must be K or K/V with K and V among ${KV_TYPES.join(', ')}, got '${text}'`);
  }
  const format = (type) => (type === 'float32' ? undefined : { type, scale: 'auto' });
  return [{ fromTokens: 0, key: format(names[0]), value: format(names[names.length - 1]) }];
}

/** The paged caches' tokens and payload bytes against dense float32 pages (disposes the caches). */
function cacheReport(caches) {
  let tokens = 0;
  let bytes = 0;
  let dense = 0;
  let saved = 0;
  for (const cache of Object.values(caches)) {
    tokens = Math.max(tokens, cache.length);
    bytes += cache.byteLength;
    saved += cache.toBytes().length;
    const [first, ...rest] = cache.blocks;
    if (first) dense += 4 * cache.length * (first.key.dims[3] + first.value.dims[3]);
    for (const block of [first, ...rest]) [block?.key, block?.value].forEach((p) => p?.dispose?.());
    cache.dispose();
  }
  const kib = (n) => (n / 1024).toFixed(1);
  return `paged KV cache: ${tokens} tokens in ${Object.keys(caches).length} caches, ${kib(bytes)} KiB of pages ` +
    `(${((100 * bytes) / (dense || 1)).toFixed(1)} % of ${kib(dense)} KiB in float32), ${kib(saved)} KiB saved with toBytes()`;
}

async function quantize(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      out: { type: 'string' },
      format: { type: 'string', default: 'ort_matmulnbits_int4' },
      'block-size': { type: 'string', default: '32' },
      asymmetric: { type: 'boolean', default: false },
    },
  });
  if (!values.model || !values.out) throw new UsageError('quantize needs --model and --out');
  const blockSize = integer(values['block-size'], '--block-size', 1);
  const input = await readFile(values.model);
  const start = performance.now();
  await InferenceSession.create(input).then((s) => s.release()); // loads the module, checks the input
  const format = parseQuantizationFormat(values.format); // case-sensitive wire name
  const { bytes, replaced, skipped } = await quantizeModel(input, { format, blockSize, asymmetric: values.asymmetric });
  await writeFile(values.out, bytes);
  const kib = (n) => (n / 1024).toFixed(1);
  process.stderr.write(
    `[onnx-light] quantize ${values.format} block ${blockSize}${values.asymmetric ? ' asymmetric' : ''}: ${replaced} MatMul nodes -> ` +
      `${values.format.startsWith('ort_matmulnbits_') ? 'MatMulNBits' : 'Dequantize(encoded weight) + MatMul'}` +
      `${skipped.length ? ` (skipped weights: ${skipped.join(', ')})` : ''}; ` +
      `size ${input.length} -> ${bytes.length} bytes (${kib(input.length)} KiB -> ${kib(bytes.length)} KiB, ` +
      `${((100 * bytes.length) / input.length).toFixed(1)} %) in ${(performance.now() - start).toFixed(0)} ms\n`,
  );
}

class UsageError extends Error {}

async function main(argv) {
  const [command, ...rest] = argv;
  if (command === 'generate') return generate(rest);
  if (command === 'quantize') return quantize(rest);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  throw new UsageError(command ? `unknown command '${command}'` : '');
}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof UsageError || String(error.code).startsWith('ERR_PARSE_ARGS')) {
    process.stderr.write(`${error.message ? `onnx-light: ${error.message}\n` : ''}${USAGE}`);
    process.exit(2);
  }
  const code = error instanceof OnnxLightError ? ` [${error.code}]` : '';
  process.stderr.write(`onnx-light: ${error.message}${code}\n`);
  process.exit(1);
});
