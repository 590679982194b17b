// The CLI's generate command: bound KV cache, seeded sampling, a
// tokenizer.json through @huggingface/tokenizers; and the persistent-feedback benchmark's JSON (a smoke
// run, no timing assertions).
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import { FORTUNES, ROOT } from './models.mjs';

/** A tokenizer.json whose ids are the bytes (GPT-2 byte-level alphabet, no merges). */
function byteLevelTokenizer() {
  const bytes = [];
  for (let i = 33; i <= 126; i++) bytes.push(i);
  for (let i = 161; i <= 172; i++) bytes.push(i);
  for (let i = 174; i <= 255; i++) bytes.push(i);
  const chars = [...bytes];
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (!bytes.includes(b)) {
      bytes.push(b);
      chars.push(256 + extra++);
    }
  }
  const vocab = Object.fromEntries(bytes.map((b, i) => [String.fromCodePoint(chars[i]), b]));
  const byteLevel = { type: 'ByteLevel', add_prefix_space: false, trim_offsets: true, use_regex: false };
  return {
    version: '1.0',
    truncation: null,
    padding: null,
    added_tokens: [],
    normalizer: null,
    pre_tokenizer: byteLevel,
    post_processor: null,
    decoder: byteLevel,
    model: { type: 'BPE', dropout: null, unk_token: null, continuing_subword_prefix: null, end_of_word_suffix: null, fuse_unk: false, byte_fallback: false, vocab, merges: [] },
  };
}

const cli = (...args) => spawnSync(process.execPath, [join(ROOT, 'dist/cli.js'), 'generate', '--model', FORTUNES, ...args], { encoding: 'utf8' });

describe('onnx-light generate', () => {
  test('decodes with the persistent KV cache and reports tokens/s', () => {
    const run = cli('--prompt', 'The ', '--max-new-tokens', '12');
    assert.equal(run.status, 0, run.stderr);
    assert.equal(Buffer.byteLength(run.stdout), 4 + 12 + 1);
    assert.match(run.stderr, /12 tokens in .* tokens\/s after the first \(persistent KV cache/);
  });

  test('--temperature with --seed is reproducible', () => {
    const a = cli('--prompt', 'The ', '--max-new-tokens', '24', '--temperature', '0.9', '--seed', '5');
    const b = cli('--prompt', 'The ', '--max-new-tokens', '24', '--temperature', '0.9', '--seed', '5');
    const greedy = cli('--prompt', 'The ', '--max-new-tokens', '24');
    assert.equal(a.status, 0, a.stderr);
    assert.equal(a.stdout, b.stdout);
    assert.notEqual(a.stdout, greedy.stdout);
  });

  test('bad options are usage errors', () => {
    assert.equal(cli('--prompt', 'x', '--temperature', '-1').status, 2);
    assert.equal(cli('--prompt', 'x', '--seed', 'abc').status, 2);
    assert.equal(cli('--prompt', 'x', '--max-new-tokens', '1.5').status, 2);
    assert.equal(cli('--prompt', 'x', '--threads', '0').status, 2);
  });

  test('--threads 1 and 2 give the same text and report the count', () => {
    const one = cli('--prompt', 'The ', '--max-new-tokens', '16', '--threads', '1');
    const two = cli('--prompt', 'The ', '--max-new-tokens', '16', '--threads', '2');
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
