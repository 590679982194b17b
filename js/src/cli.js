#!/usr/bin/env node
// onnx-light command line.
//   onnx-light generate --model PATH --prompt TEXT [--max-new-tokens N]
// Greedy decoding for byte-vocabulary decoder models (a token is a byte of
// UTF-8 text): streams text to stdout, speed to stderr.
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

import { greedyDecode } from './greedy.js';
import { InferenceSession, OnnxLightError, Tensor, memoryStats } from './node.js';

const USAGE = `usage: onnx-light generate --model PATH --prompt TEXT [--max-new-tokens N]

  --model PATH          ONNX decoder with a KV cache and a 256-byte vocabulary
  --prompt TEXT         text to continue
  --max-new-tokens N    tokens (bytes) to generate (default 64)
`;

async function generate(argv) {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: 'string' },
      prompt: { type: 'string', default: '' },
      'max-new-tokens': { type: 'string', default: '64' },
    },
  });
  const maxNewTokens = Number(values['max-new-tokens']);
  if (!values.model || !Number.isInteger(maxNewTokens) || maxNewTokens < 0) throw new UsageError();
  const promptIds = [...new TextEncoder().encode(values.prompt)];
  if (promptIds.length === 0) throw new UsageError('--prompt must not be empty');

  const createStart = performance.now();
  const session = await InferenceSession.create(await readFile(values.model));
  const createMs = performance.now() - createStart;

  const decoder = new TextDecoder('utf-8');
  process.stdout.write(values.prompt);
  let count = 0;
  let firstMs = 0;
  const start = performance.now();
  for await (const token of greedyDecode({ session, Tensor, promptIds, maxNewTokens })) {
    if (count++ === 0) firstMs = performance.now() - start;
    process.stdout.write(decoder.decode(Uint8Array.of(token), { stream: true }));
  }
  process.stdout.write(`${decoder.decode()}\n`);
  const seconds = (performance.now() - start) / 1000;
  const rest = count > 1 ? ((count - 1) / (seconds - firstMs / 1000)).toFixed(1) : '-';
  const stats = memoryStats();
  const mib = (bytes) => (bytes / 2 ** 20).toFixed(1);
  process.stderr.write(
    `[onnx-light] ${count} tokens in ${seconds.toFixed(2)} s: ${rest} tokens/s after the first ` +
      `(prompt of ${promptIds.length} tokens: ${firstMs.toFixed(0)} ms; session create: ${createMs.toFixed(0)} ms; ` +
      `allocator peak ${mib(stats.peakBytes)} MiB, wasm memory ${mib(stats.wasmMemoryBytes)} MiB)\n`,
  );
  await session.release();
}

class UsageError extends Error {}

async function main(argv) {
  const [command, ...rest] = argv;
  if (command === 'generate') return generate(rest);
  if (command === '--help' || command === '-h' || command === 'help') {
    process.stdout.write(USAGE);
    return;
  }
  throw new UsageError(command ? `unknown command '${command}'` : '');
}

main(process.argv.slice(2)).catch((error) => {
  if (error instanceof UsageError || error.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    process.stderr.write(`${error.message ? `onnx-light: ${error.message}\n` : ''}${USAGE}`);
    process.exit(2);
  }
  const code = error instanceof OnnxLightError ? ` [${error.code}]` : '';
  process.stderr.write(`onnx-light: ${error.message}${code}\n`);
  process.exit(1);
});
