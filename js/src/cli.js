#!/usr/bin/env node
// onnx-light command line.
//   onnx-light generate --model PATH --prompt TEXT [--max-new-tokens N]
//                       [--temperature T | --greedy] [--seed S] [--eos-token-id ID]
//                       [--tokenizer tokenizer.json] [--threads N]
//                       [--paged [--kv-format int8/uint4]]
//   onnx-light generate --model-dir DIR --prompt TEXT [--chat] [--dtype q4] ...
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
// Sampling is the default (temperature 0.7, seed 0); --greedy or
// --temperature 0 decodes greedily. --model-dir opens a Hugging Face model
// directory with fromPretrained (tokenizer, chat template, eos ids).
import { readFile, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { parseArgs } from 'node:util';

import { InferenceSession, OnnxLightError, Tensor, emptyCaches, env, fromPretrained, memoryStats, numThreads, parseQuantizationFormat, toPagedModel } from './node.js';
import { quantizeModel } from './quantize-model.js';
import { byteTokenizer, jsonTokenizer } from './tokenizer.js';

const USAGE = `usage: onnx-light generate --model PATH --prompt TEXT [options]
       onnx-light generate --model-dir DIR --prompt TEXT [--chat] [options]
       onnx-light quantize --model IN.onnx --out OUT.onnx [--format F] [--block-size B]

generate:

  --model PATH          ONNX decoder (input_ids -> logits, optionally with
                        past_key_values.* / present.* caches)
  --model-dir DIR       a model directory in the Hugging Face layout
                        (config.json, tokenizer.json, onnx/model*.onnx, ...),
                        opened with fromPretrained
  --dtype D             with --model-dir: the onnx/ variant (fp32:
                        model.onnx, q4: model_q4.onnx, ...; default:
                        config.json's transformers.js_config.dtype, else fp32)
  --chat                with --model-dir: the prompt is a user message,
                        rendered with the directory's chat template
  --prompt TEXT         text to continue
  --max-new-tokens N    tokens to generate (default 64)
  --temperature T       sampling temperature (default 0.7; with --model-dir
                        generation_config.json's when it sets do_sample);
                        0: greedy, the most likely token every step
  --greedy              greedy decoding (same as --temperature 0)
  --seed S              sampling seed (default 0): same seed, same text
  --eos-token-id ID     stop when this token is produced
  --tokenizer FILE      a Hugging Face tokenizer.json (read with the package
                        @huggingface/tokenizers; a tokenizer_config.json
                        beside it is used too);
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
  --accuracy-level L    MatMulNBits only: the accuracy_level attribute (0-4;
                        4: activations quantized to int8 per block, the
                        fastest kernel); default: no attribute (0)
`;

/** A tokenizer.json file (and a tokenizer_config.json beside it) through @huggingface/tokenizers. */
async function tokenizerFile(path) {
  const json = JSON.parse(await readFile(path, 'utf8'));
  let config = {};
  try {
    config = JSON.parse(await readFile(join(dirname(path), 'tokenizer_config.json'), 'utf8'));
  } catch {
    config = {};
  }
  return jsonTokenizer(json, config, path);
}

function integer(value, name, min) {
  const n = Number(value);
  if (!Number.isSafeInteger(n) || n < min) throw new UsageError(`${name} must be an integer >= ${min}, got '${value}'`);
  return n;
}

const DEFAULT_TEMPERATURE = 0.7;

async function generate(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      'model-dir': { type: 'string' },
      dtype: { type: 'string' },
      chat: { type: 'boolean', default: false },
      prompt: { type: 'string', default: '' },
      'max-new-tokens': { type: 'string', default: '64' },
      temperature: { type: 'string' },
      greedy: { type: 'boolean', default: false },
      seed: { type: 'string', default: '0' },
      'eos-token-id': { type: 'string' },
      tokenizer: { type: 'string' },
      threads: { type: 'string' },
      paged: { type: 'boolean', default: false },
      'kv-format': { type: 'string' },
    },
  });
  const dir = values['model-dir'];
  if (!values.model === !dir) throw new UsageError(values.model ? '--model and --model-dir exclude each other' : '');
  if (dir && values.tokenizer) throw new UsageError('--tokenizer is for --model; a --model-dir has its own tokenizer.json');
  if (!dir && (values.chat || values.dtype)) throw new UsageError(`${values.chat ? '--chat' : '--dtype'} needs --model-dir`);
  if (values['kv-format'] !== undefined && !values.paged) throw new UsageError('--kv-format needs --paged');
  if (values.greedy && values.temperature !== undefined) throw new UsageError('--greedy and --temperature exclude each other');
  const pagedFormats = values.paged ? kvFormats(values['kv-format'] ?? 'float32') : undefined;
  if (values.threads !== undefined) env.wasm.numThreads = integer(values.threads, '--threads', 1);
  const maxNewTokens = integer(values['max-new-tokens'], '--max-new-tokens', 0);
  let temperature = values.greedy ? 0 : values.temperature === undefined ? undefined : Number(values.temperature);
  if (temperature !== undefined && (!(temperature >= 0) || !Number.isFinite(temperature))) {
    throw new UsageError(`--temperature must be a number >= 0, got '${values.temperature}'`);
  }
  const seed = BigInt(integer(values.seed, '--seed', 0));
  const eosTokenId = values['eos-token-id'] === undefined ? undefined : integer(values['eos-token-id'], '--eos-token-id', 0);
  if (values.prompt === '') throw new UsageError('--prompt must not be empty');
  if (dir) return generateFromDirectory(dir, values, { maxNewTokens, temperature, seed, eosTokenId, pagedFormats });
  temperature ??= DEFAULT_TEMPERATURE;

  const tokenizer = values.tokenizer ? await tokenizerFile(values.tokenizer) : byteTokenizer();
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

  const text = tokenizer.decoder();
  process.stdout.write(values.prompt);
  const timing = timer();
  const result = await session.generate(feeds, {
    maxNewTokens,
    temperature,
    seed,
    eosTokenId,
    onToken: (tokens) => {
      timing.token();
      process.stdout.write(text.push(tokens[0]));
    },
    returnCaches: values.paged,
  });
  process.stdout.write(`${text.end()}\n`);
  report(timing, { mode, temperature, seed, promptTokens: promptIds.length, createMs });
  if (values.paged) process.stderr.write(`[onnx-light] ${cacheReport(result.caches)}\n`);
  await session.release();
}

/** generate --model-dir: fromPretrained's tokenizer, chat template and ids; the text streamed. */
async function generateFromDirectory(dir, values, { maxNewTokens, temperature, seed, eosTokenId, pagedFormats }) {
  const createStart = performance.now();
  const model = await fromPretrained(dir, { dtype: values.dtype, paged: values.paged, pagedFormats });
  const createMs = performance.now() - createStart;
  const g = model.generationConfig;
  temperature ??= g.do_sample === true && typeof g.temperature === 'number' ? g.temperature : DEFAULT_TEMPERATURE;
  const input = values.chat ? [{ role: 'user', content: values.prompt }] : values.prompt;
  const { ids: promptIds } = await model.encode(input);
  const mode = model.paged
    ? `paged KV cache, ${values['kv-format'] ?? 'float32'} pages`
    : model.session.persistentBindings.length ? 'persistent KV cache' : 'full prefix every step';
  if (!values.chat) process.stdout.write(values.prompt);
  const timing = timer();
  const options = { maxNewTokens, temperature, seed, eosTokenId, onToken: () => timing.token() };
  for await (const piece of model.stream(input, options)) process.stdout.write(piece);
  process.stdout.write('\n');
  report(timing, { mode, temperature, seed, promptTokens: promptIds.length, createMs, file: model.modelFile });
  await model.release();
}

function timer() {
  const start = performance.now();
  return {
    count: 0,
    firstMs: 0,
    start,
    token() {
      if (this.count++ === 0) this.firstMs = performance.now() - start;
    },
  };
}

function report(timing, { mode, temperature, seed, promptTokens, createMs, file }) {
  const { count, firstMs, start } = timing;
  const seconds = (performance.now() - start) / 1000;
  const rest = count > 1 ? ((count - 1) / (seconds - firstMs / 1000)).toFixed(1) : '-';
  const stats = memoryStats();
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
  const sampling = temperature === 0 ? 'greedy' : `temperature ${temperature}, seed ${seed}; --greedy for greedy decoding`;
  process.stderr.write(
    `[onnx-light] ${count} tokens in ${seconds.toFixed(2)} s: ${rest} tokens/s after the first ` +
      `(${mode}; ${numThreads()} thread${numThreads() > 1 ? 's' : ''}; prompt of ${promptTokens} tokens: ${firstMs.toFixed(0)} ms; load: ${createMs.toFixed(0)} ms; ` +
      `allocator peak ${mib(stats.peakBytes)} MiB, wasm memory ${mib(stats.wasmMemoryBytes)} MiB)\n` +
      `[onnx-light] sampling: ${sampling}${file ? `; model file ${file}` : ''}\n`,
  );
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
      'accuracy-level': { type: 'string' },
    },
  });
  if (!values.model || !values.out) throw new UsageError('quantize needs --model and --out');
  const blockSize = integer(values['block-size'], '--block-size', 1);
  const accuracyLevel = values['accuracy-level'] === undefined ? undefined : integer(values['accuracy-level'], '--accuracy-level', 0);
  if (accuracyLevel > 4) throw new UsageError(`--accuracy-level must be 0..4, got '${values['accuracy-level']}'`);
  const input = await readFile(values.model);
  const start = performance.now();
  await InferenceSession.create(input).then((s) => s.release()); // loads the module, checks the input
  const format = parseQuantizationFormat(values.format); // case-sensitive wire name
  const { bytes, replaced, skipped } = await quantizeModel(input, { format, blockSize, asymmetric: values.asymmetric, accuracyLevel });
  await writeFile(values.out, bytes);
  const kib = (n) => (n / 1024).toFixed(1);
  process.stderr.write(
    `[onnx-light] quantize ${values.format} block ${blockSize}${values.asymmetric ? ' asymmetric' : ''}` +
      `${accuracyLevel === undefined ? '' : ` accuracy_level ${accuracyLevel}`}: ${replaced} MatMul nodes -> ` +
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
