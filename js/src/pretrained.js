// fromPretrained(dirOrUrl, options): a model directory in the Hugging Face
// layout transformers.js reads, opened as a ready text generator.
//   config.json                 required; eos/bos/pad ids, vocab_size,
//                               "transformers.js_config": { "dtype" } (the default variant)
//   generation_config.json      optional; eos/pad ids, do_sample, temperature, max_new_tokens
//   tokenizer.json              @huggingface/tokenizers; may be absent for a
//                               byte-level model (vocab_size 256): a token is a byte of UTF-8
//   tokenizer_config.json       optional; chat_template, special tokens
//   chat_template.jinja         optional; the chat template when tokenizer_config has none
//   onnx/model{suffix}.onnx     the decoder; the dtype option picks the variant
//                               (fp32 -> model.onnx, q4 -> model_q4.onnx, ...),
//                               external data files beside it are inlined
// The directory comes from model-directory.js (disk, http(s), a
// FileSystemDirectoryHandle or File objects). Generation is the C token loop
// (session.generate / generateStream) on paged KV caches when toPagedModel
// converts the decoder, on contiguous bound caches otherwise.
import { OnnxLightError, invalidArgument } from './errors.js';
import { emptyCaches } from './bind.js';
import { hasExternalData, inlineExternalData } from './external-data.js';
import { openDirectory } from './model-directory.js';
import { toPagedModel } from './paged.js';
import { InferenceSession } from './session.js';
import { Tensor } from './tensor.js';
import { byteTokenizer, jsonTokenizer } from './tokenizer.js';

/** onnx/ file names of the dtype variants (transformers.js' names). */
export const MODEL_VARIANTS = Object.freeze({
  fp32: 'model.onnx',
  fp16: 'model_fp16.onnx',
  q8: 'model_quantized.onnx',
  int8: 'model_int8.onnx',
  uint8: 'model_uint8.onnx',
  q4: 'model_q4.onnx',
  q4f16: 'model_q4f16.onnx',
  bnb4: 'model_bnb4.onnx',
});

const notFound = (message) => new OnnxLightError('OL_NOT_FOUND', message);

/** Reads files of the directory with per-file progress. */
function fileReader(dir, onProgress) {
  if (onProgress !== undefined && typeof onProgress !== 'function') throw invalidArgument('fromPretrained: onProgress must be a function');
  const name = (path) => `${dir.label.replace(/\/$/, '')}/${path}`;
  return {
    name,
    async bytes(path) {
      return dir.read(path, onProgress && ((loaded, total) => onProgress({ file: path, loaded, total })));
    },
    async json(path, required) {
      const bytes = await this.bytes(path);
      if (!bytes) {
        if (required) throw notFound(`fromPretrained: ${name(path)} not found`);
        return null;
      }
      try {
        return JSON.parse(new TextDecoder().decode(bytes));
      } catch (error) {
        throw invalidArgument(`fromPretrained: ${name(path)} is not valid JSON: ${error.message}`);
      }
    },
  };
}

/** A special token's text from tokenizer_config.json (a string or an AddedToken object). */
function tokenText(value) {
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && typeof value.content === 'string') return value.content;
  return undefined;
}

/** The chat template: tokenizer_config.chat_template (a string, or named templates), else chat_template.jinja. */
function pickTemplate(config, file, name) {
  const template = config.chat_template;
  if (Array.isArray(template)) {
    const wanted = name ?? 'default';
    const found = template.find((t) => t?.name === wanted);
    if (!found) throw invalidArgument(`fromPretrained: tokenizer_config.json has no chat template named '${wanted}'`);
    return found.template;
  }
  if (typeof template === 'string') return template;
  return file;
}

function firstId(value) {
  if (Array.isArray(value)) return value.length ? value[0] : undefined;
  return typeof value === 'number' ? value : undefined;
}

function idList(value) {
  if (Array.isArray(value)) return value.filter((v) => typeof v === 'number');
  return typeof value === 'number' ? [value] : [];
}

/**
 * Opens a model directory as a text generator.
 * @param {string | URL | object} source directory path or file: URL (Node), http(s) base URL,
 *   FileSystemDirectoryHandle, or File/Blob objects by relative path (Map, object, FileList)
 * @param {object} [options] see PretrainedOptions in index.d.ts
 */
export async function fromPretrained(source, options = {}) {
  if (options === null || typeof options !== 'object') throw invalidArgument('fromPretrained: options must be an object');
  const { onProgress, dtype, modelFile, paged = true, pagedFormats, chatTemplate: templateName, ...sessionOptions } = options;
  const dir = await openDirectory(source);
  const files = fileReader(dir, onProgress);

  const config = await files.json('config.json', true);
  const generationConfig = (await files.json('generation_config.json', false)) ?? {};
  const tokenizerConfig = (await files.json('tokenizer_config.json', false)) ?? {};
  const tokenizerJson = await files.json('tokenizer.json', false);
  const templateFile = tokenizerConfig.chat_template === undefined ? await files.bytes('chat_template.jinja') : null;

  let tokenizer;
  if (tokenizerJson) tokenizer = await jsonTokenizer(tokenizerJson, tokenizerConfig, files.name('tokenizer.json'));
  else if (config.vocab_size === 256) tokenizer = byteTokenizer();
  else {
    throw notFound(
      `fromPretrained: ${files.name('tokenizer.json')} not found (only byte-level models, config.json vocab_size 256, go without one; this one has ${config.vocab_size})`,
    );
  }

  const variant = dtype ?? config['transformers.js_config']?.dtype ?? 'fp32';
  if (modelFile === undefined && !Object.hasOwn(MODEL_VARIANTS, variant)) {
    throw invalidArgument(`fromPretrained: unknown dtype '${variant}' (one of ${Object.keys(MODEL_VARIANTS).join(', ')}, or pass modelFile)`);
  }
  const modelPath = modelFile ?? `onnx/${MODEL_VARIANTS[variant]}`;
  let bytes = await files.bytes(modelPath);
  if (!bytes) throw notFound(`fromPretrained: ${files.name(modelPath)} not found${dtype || modelFile ? '' : ' (the dtype option picks another variant, e.g. { dtype: \'q4\' } for onnx/model_q4.onnx)'}`);
  if (hasExternalData(bytes)) {
    const folder = modelPath.slice(0, modelPath.lastIndexOf('/') + 1);
    try {
      bytes = await inlineExternalData(bytes, async (location) => {
        const data = await files.bytes(folder + location);
        if (!data) throw notFound(`${files.name(folder + location)} (external data) not found`);
        return data;
      });
    } catch (error) {
      if (error instanceof OnnxLightError) throw new OnnxLightError(error.code, `fromPretrained: ${files.name(modelPath)}: ${error.message}`);
      throw error;
    }
  }

  // paged caches when the decoder converts, contiguous bound caches otherwise
  let pagedBytes = null;
  let pagedReason = paged ? null : 'paged: false';
  if (paged) {
    try {
      pagedBytes = await toPagedModel(bytes, sessionOptions);
    } catch (error) {
      if (!(error instanceof OnnxLightError)) throw error;
      pagedReason = error.message; // e.g. attention this rewrite does not know
    }
  }
  const session = pagedBytes
    ? await InferenceSession.create(pagedBytes, { ...sessionOptions, pagedFormats })
    : await InferenceSession.create(bytes, { ...sessionOptions, bindCache: true });
  bytes = pagedBytes = null;

  const eosIds = idList(generationConfig.eos_token_id ?? config.eos_token_id);
  const template = pickTemplate(tokenizerConfig, templateFile && new TextDecoder().decode(templateFile), templateName);
  return new PretrainedGenerator({
    session,
    tokenizer,
    config,
    generationConfig,
    tokenizerConfig,
    template,
    eosIds,
    padTokenId: firstId(generationConfig.pad_token_id ?? config.pad_token_id),
    bosTokenId: firstId(generationConfig.bos_token_id ?? config.bos_token_id),
    paged: pagedReason === null,
    pagedReason,
    modelPath,
  });
}

let jinjaModule = null;
function jinja() {
  jinjaModule ??= import('@huggingface/jinja');
  return jinjaModule;
}

class PretrainedGenerator {
  #s;
  #template = null;

  constructor(state) {
    this.#s = state;
    this.session = state.session;
    this.tokenizer = state.tokenizer;
    this.config = state.config;
    this.generationConfig = state.generationConfig;
    this.tokenizerConfig = state.tokenizerConfig;
    this.chatTemplate = state.template ?? null;
    this.eosTokenIds = state.eosIds;
    this.padTokenId = state.padTokenId;
    this.bosTokenId = state.bosTokenId;
    this.paged = state.paged;
    this.pagedFallbackReason = state.paged ? null : state.pagedReason;
    this.modelFile = state.modelPath;
  }

  /** The chat template rendered for messages (with the generation prompt by default). */
  async applyChatTemplate(messages, { addGenerationPrompt = true, ...kwargs } = {}) {
    if (!Array.isArray(messages)) throw invalidArgument('applyChatTemplate: messages must be an array of { role, content }');
    if (!this.chatTemplate) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'applyChatTemplate: the model directory has no chat template (tokenizer_config.json chat_template)');
    if (!this.#template) {
      const { Template } = await jinja();
      this.#template = new Template(this.chatTemplate);
    }
    const special = {};
    for (const key of ['bos_token', 'eos_token', 'unk_token', 'pad_token', 'sep_token', 'cls_token', 'mask_token']) {
      const text = tokenText(this.tokenizerConfig[key]);
      if (text !== undefined) special[key] = text;
    }
    return this.#template.render({ ...special, ...kwargs, messages, add_generation_prompt: addGenerationPrompt });
  }

  /**
   * Prompt ids of a text (special tokens added as the tokenizer's
   * post-processor says) or of messages (through the chat template, whose
   * text carries its own special tokens).
   */
  async encode(input, options = {}) {
    if (typeof input === 'string') return { prompt: input, ids: this.tokenizer.encode(input, { addSpecialTokens: options.addSpecialTokens ?? true }) };
    const prompt = await this.applyChatTemplate(input, { ...options.templateVariables, addGenerationPrompt: options.addGenerationPrompt ?? true });
    return { prompt, ids: this.tokenizer.encode(prompt, { addSpecialTokens: options.addSpecialTokens ?? false }) };
  }

  /** session.generate options from generation options and generation_config.json. */
  #loopOptions(options, onToken) {
    const g = this.generationConfig;
    const sample = g.do_sample === true;
    const eos = options.eosTokenId === undefined ? this.eosTokenIds : idList(options.eosTokenId);
    const extraEos = new Set(eos.slice(1));
    return {
      options: {
        maxNewTokens: options.maxNewTokens ?? g.max_new_tokens ?? 64,
        temperature: options.temperature ?? (sample ? g.temperature ?? 1 : 0),
        seed: options.seed ?? 0,
        eosTokenId: eos[0],
        padTokenId: options.padTokenId ?? this.padTokenId,
        signal: options.signal,
        pagedFormats: options.pagedFormats,
        // more than one eos id: the C loop stops at the first, the others stop it here
        onToken: (tokens, step) => {
          const id = Number(tokens[0]);
          if (onToken?.(id, step) === false) return false;
          return extraEos.size && extraEos.has(id) ? false : undefined;
        },
      },
      eos: new Set(eos),
    };
  }

  async #feeds(ids) {
    const feeds = { input_ids: new Tensor('int64', BigInt64Array.from(ids, BigInt), [1, ids.length]) };
    if (this.session.persistentBindings.length) Object.assign(feeds, await emptyCaches(this.session));
    return feeds;
  }

  /**
   * Generates from a text or chat messages: { text, ids (generated), promptIds, prompt }.
   * The text leaves out a final eos token and special tokens.
   */
  async generate(input, options = {}) {
    const { prompt, ids: promptIds } = await this.encode(input, options);
    if (promptIds.length === 0) throw invalidArgument('generate: the prompt is empty (no tokens)');
    const { options: loop, eos } = this.#loopOptions(options, options.onToken);
    const tokens = await this.session.generate(await this.#feeds(promptIds), loop);
    const ids = Array.from(tokens.data.subarray(promptIds.length), Number);
    const textIds = ids.length && eos.has(ids[ids.length - 1]) ? ids.slice(0, -1) : ids;
    return { text: this.tokenizer.decode(textIds), ids, promptIds, prompt };
  }

  /** Async iterator of text pieces as tokens are produced (never a split character). */
  async *stream(input, options = {}) {
    const { ids: promptIds } = await this.encode(input, options);
    if (promptIds.length === 0) throw invalidArgument('generate: the prompt is empty (no tokens)');
    const { options: loop, eos } = this.#loopOptions(options, options.onToken);
    const decoder = this.tokenizer.decoder();
    for await (const { tokens } of this.session.generateStream(await this.#feeds(promptIds), loop)) {
      const id = Number(tokens[0]);
      if (eos.has(id)) break;
      const piece = decoder.push(id);
      if (piece) yield piece;
    }
    const rest = decoder.end();
    if (rest) yield rest;
  }

  /** Releases the session. */
  async release() {
    await this.session.release();
  }
}
