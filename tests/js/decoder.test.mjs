// The fortunes decoder end to end: greedy tokens with the KV cache fed back
// equal onnxruntime-node's; the CLI streams the same text.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, test } from 'node:test';

import * as ort from 'onnxruntime-node';
import * as ol from 'onnx-light';

import { greedyDecode } from '../../dist/greedy.js';
import { FORTUNES, ROOT, fortunesBytes } from './models.mjs';

const PROMPT = [...new TextEncoder().encode('The ')];
const STEPS = 16;

async function tokens(api, bytes) {
  const session = await api.InferenceSession.create(bytes);
  const out = [];
  for await (const token of greedyDecode({ session, Tensor: api.Tensor, promptIds: PROMPT, maxNewTokens: STEPS })) out.push(token);
  await session.release();
  return out;
}

describe('fortunes decoder', () => {
  test(`${STEPS} greedy tokens equal onnxruntime-node's`, async () => {
    const bytes = fortunesBytes();
    const expected = await tokens(ort, bytes);
    assert.equal(expected.length, STEPS);
    assert.deepEqual(await tokens(ol, bytes), expected);
  });

  test('metadata of the decoder', async () => {
    const session = await ol.InferenceSession.create(FORTUNES);
    assert.equal(session.inputNames[0], 'input_ids');
    const past = session.inputMetadata.find((m) => m.name === 'past_key_values.0.key');
    assert.equal(past.type, 'float32');
    assert.equal(past.shape.length, 4);
    assert.equal(past.shape[3], 32);
    assert.ok(session.outputNames.includes('present.3.value'));
    await session.release();
  });

  test('onnx-light generate streams text and reports speed', () => {
    const result = execFileSync(
      process.execPath,
      [join(ROOT, 'dist/cli.js'), 'generate', '--model', FORTUNES, '--prompt', 'The ', '--max-new-tokens', '8', '--greedy'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] },
    );
    assert.match(result, /^The .+\n$/s);
    assert.equal(Buffer.byteLength(result), 4 + 8 + 1);
  });

  test('the CLI explains its usage', () => {
    const run = (...args) => {
      try {
        execFileSync(process.execPath, [join(ROOT, 'dist/cli.js'), ...args], { encoding: 'utf8', stdio: 'pipe' });
        return 0;
      } catch (e) {
        assert.match(e.stderr, /usage: onnx-light generate/);
        return e.status;
      }
    };
    assert.equal(run('frobnicate'), 2);
    assert.equal(run('generate', '--prompt', 'x'), 2);
  });
});
