// The CLI's generate command: bound KV cache, seeded sampling by default,
// --greedy, a tokenizer.json through @huggingface/tokenizers, --model-dir
// (fromPretrained) with the shipped default model; and the persistent-feedback benchmark's JSON (a smoke
// run, no timing assertions).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { byteLevelTokenizer } from '../../scripts/train-default-model/model-dir.mjs';
import { FORTUNES, ROOT } from './models.mjs';

const DEFAULT_MODEL = join(ROOT, 'models/fortunes-byte-4M');
const cli = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'generate', '--model', FORTUNES, ...args], { encoding: 'utf8' });

describe('onnx-light generate', () => {
  test('decodes with the persistent KV cache and reports tokens/s', () => {
    const run = cli('--prompt', 'The ', '--max-new-tokens', '12', '--greedy');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(Buffer.byteLength(run.stdout), 4 + 12 + 1);
    assert.match(run.stderr, /12 tokens in .* tokens\/s after the first \(persistent KV cache/);
    assert.match(run.stderr, /sampling: greedy/);
  });

  test('samples by default (temperature 0.7, seed 0); --greedy and --temperature 0 decode greedily', () => {
    const sampled = cli('--prompt', 'The ', '--max-new-tokens', '32');
    assert.equal(sampled.status, 0, sampled.stderr);
    assert.match(sampled.stderr, /sampling: temperature 0\.7, seed 0; --greedy for greedy decoding/);
    assert.equal(sampled.stdout, cli('--prompt', 'The ', '--max-new-tokens', '32', '--temperature', '0.7', '--seed', '0').stdout);
    const greedy = cli('--prompt', 'The ', '--max-new-tokens', '32', '--greedy');
    assert.equal(greedy.stdout, cli('--prompt', 'The ', '--max-new-tokens', '32', '--temperature', '0').stdout);
    assert.notEqual(sampled.stdout, greedy.stdout);
    const help = spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), '--help'], { encoding: 'utf8' });
    assert.match(help.stdout, /--temperature T +sampling temperature \(default 0\.7/);
    assert.match(help.stdout, /--greedy +greedy decoding/);
  });

  test('--temperature with --seed is reproducible', () => {
    const a = cli('--prompt', 'The ', '--max-new-tokens', '24', '--temperature', '0.9', '--seed', '5');
    const b = cli('--prompt', 'The ', '--max-new-tokens', '24', '--temperature', '0.9', '--seed', '5');
    const other = cli('--prompt', 'The ', '--max-new-tokens', '24', '--temperature', '0.9', '--seed', '6');
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stdout, b.stdout);
    assert.notEqual(a.stdout, other.stdout);
  });

  test('bad options are usage errors', () => {
    assert.equal(cli('--prompt', 'x', '--temperature', '-1').status, 2);
    assert.equal(cli('--prompt', 'x', '--seed', 'abc').status, 2);
    assert.equal(cli('--prompt', 'x', '--max-new-tokens', '1.5').status, 2);
    assert.equal(cli('--prompt', 'x', '--threads', '0').status, 2);
    assert.equal(cli('--prompt', 'x', '--greedy', '--temperature', '0.5').status, 2);
    assert.equal(cli('--prompt', 'x', '--model-dir', DEFAULT_MODEL).status, 2);
    assert.equal(cli('--prompt', 'x', '--chat').status, 2);
  });

  test('--model-dir: the shipped default model through fromPretrained, with --chat', () => {
    const run = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'generate', '--model-dir', DEFAULT_MODEL, ...args], { encoding: 'utf8' });
    const text = run('--prompt', 'The ', '--max-new-tokens', '24', '--seed', '1');
    assert.equal(text.status, 0, text.stderr);
    assert.ok(text.stdout.startsWith('The '));
    assert.match(text.stderr, /sampling: temperature 0\.7, seed 1.*model file onnx\/model_q4\.onnx/);
    assert.equal(text.stdout, run('--prompt', 'The ', '--max-new-tokens', '24', '--seed', '1').stdout);
    const chat = run('--prompt', 'Never', '--chat', '--max-new-tokens', '16', '--greedy');
    assert.equal(chat.status, 0, chat.stderr);
    assert.match(chat.stderr, /prompt of 5 tokens/);
    assert.equal(run('--prompt', 'x', '--dtype', 'fp32').status, 1); // onnx/model.onnx is not shipped
  });

  test('--threads 1 and 2 give the same text and report the count', () => {
    const one = cli('--prompt', 'The ', '--max-new-tokens', '16', '--threads', '1', '--greedy');
    const two = cli('--prompt', 'The ', '--max-new-tokens', '16', '--threads', '2', '--greedy');
    assert.equal(two.status, 0, two.stderr);
    assert.equal(two.stdout, one.stdout);
    assert.match(one.stderr, /; 1 thread;/);
    assert.match(two.stderr, /; 2 threads;/);
  });

  test('--tokenizer: a byte-level BPE tokenizer.json gives the same text as bytes', (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'onnx-light-tokenizer-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const path = join(dir, 'tokenizer.json');
    writeFileSync(path, JSON.stringify(byteLevelTokenizer()));
    const withTokenizer = cli('--prompt', 'Thé ', '--max-new-tokens', '16', '--tokenizer', path);
    assert.equal(withTokenizer.status, 0, withTokenizer.stderr);
    assert.equal(withTokenizer.stdout, cli('--prompt', 'Thé ', '--max-new-tokens', '16').stdout);
  });
});

test('bench/persistent_feedback.mjs prints its JSON with pointer identity and the append counters', () => {
  const out = execFileSync(process.execPath, [join(ROOT, 'bench/persistent_feedback.mjs'), '--tokens', '3', '--warmup', '0'], { cwd: ROOT, encoding: 'utf8' });
  const report = JSON.parse(out);
  assert.equal(report.benchmark, 'persistent_feedback');
  assert.equal(report.results.length, 2);
  for (const result of report.results) {
    assert.equal(result.error, undefined, result.error);
    assert.equal(result.tokens.length, 3);
    assert.equal(result.allPointerIdentity, true);
    assert.equal(result.allNumericalMatch, true);
  }
  const attention = report.results.find((r) => r.fixture === 'attention');
  assert.deepEqual(attention.tokens.map((t) => t.kernelPrefixCopiedBytes), [0, 0, 0]);
  assert.deepEqual(attention.tokens.map((t) => t.kernelAppendCopiedBytes), [64, 64, 64]);
  assert.deepEqual(attention.tokens.map((t) => t.kernelReuseCount), [0, 2, 2]);
  assert.deepEqual(attention.tokens.map((t) => t.retainedLogicalBytes), [64, 128, 192]);
});
