#!/usr/bin/env node
// Writes the Hugging Face metadata of a byte-level fortunes model directory
// (what fromPretrained and transformers.js read beside onnx/):
//   config.json             architecture (from CFG), eos id, the default
//                           variant ("transformers.js_config": { "dtype": "q4" })
//   generation_config.json  sampling at temperature 0.7, 256 new tokens at most
//   tokenizer.json          bytes as tokens: ids 0..255 are the byte values,
//                           through the GPT-2 byte-level alphabet with no merges
//                           (so @huggingface/tokenizers encodes and decodes them)
//   tokenizer_config.json   the chat template (below)
// usage: CFG=vocab,dim,layers,heads,kv_heads,ffn,seq,batch model-dir.mjs OUT_DIR
//
// A fortune ends with a line '%'; the byte '%' (37) is the eos token, so an
// answer is one fortune. The chat template is a completion: a user message
// is the start of a fortune the model continues, an assistant message is a
// finished one (followed by the separator).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const FIELDS = ['vocab', 'dim', 'layers', 'heads', 'kv_heads', 'ffn', 'seq', 'batch'];
const PERCENT = 37;

export const CHAT_TEMPLATE =
  "{% for message in messages %}{% if message['role'] == 'assistant' %}{{ message['content'] }}\n%\n" +
  "{% elif message['role'] == 'user' %}{{ message['content'] }}{% endif %}{% endfor %}";

/** A tokenizer.json whose ids are the bytes (GPT-2 byte-level alphabet, no merges). */
export function byteLevelTokenizer() {
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

export function parseConfig(text) {
  const values = text.split(',').map(Number);
  if (values.length !== FIELDS.length || !values.every(Number.isSafeInteger)) throw new Error(`CFG needs ${FIELDS.length} integers: ${FIELDS.join(',')}`);
  return Object.fromEntries(FIELDS.map((f, i) => [f, values[i]]));
}

/** The metadata files of a model directory: { name: JSON value }. */
export function modelDirectoryFiles(c) {
  return {
    'config.json': {
      architectures: ['LlamaForCausalLM'],
      model_type: 'llama',
      vocab_size: c.vocab,
      hidden_size: c.dim,
      intermediate_size: c.ffn,
      num_hidden_layers: c.layers,
      num_attention_heads: c.heads,
      num_key_value_heads: c.kv_heads,
      head_dim: c.dim / c.heads,
      max_position_embeddings: c.seq,
      rms_norm_eps: 1e-5,
      rope_theta: 10000,
      hidden_act: 'silu',
      tie_word_embeddings: true,
      eos_token_id: PERCENT,
      'transformers.js_config': { dtype: 'q4' },
    },
    'generation_config.json': { do_sample: true, temperature: 0.7, max_new_tokens: 256, eos_token_id: PERCENT },
    'tokenizer.json': byteLevelTokenizer(),
    'tokenizer_config.json': {
      tokenizer_class: 'PreTrainedTokenizerFast',
      model_max_length: c.seq,
      clean_up_tokenization_spaces: false,
      eos_token: '%',
      chat_template: CHAT_TEMPLATE,
    },
  };
}

export function writeModelDirectory(out, c) {
  mkdirSync(join(out, 'onnx'), { recursive: true });
  for (const [name, value] of Object.entries(modelDirectoryFiles(c))) writeFileSync(join(out, name), `${JSON.stringify(value, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) {
  if (process.argv.length !== 3) {
    console.error('usage: CFG=vocab,dim,layers,heads,kv_heads,ffn,seq,batch model-dir.mjs OUT_DIR');
    process.exit(2);
  }
  writeModelDirectory(process.argv[2], parseConfig(process.env.CFG ?? '256,256,6,8,4,688,256,32'));
}
