// Text <-> token ids for generation: a Hugging Face tokenizer.json through
// @huggingface/tokenizers, or the byte tokenizer of byte-level models (a
// token is one byte of UTF-8 text; no tokenizer.json needed). Both give
//   encode(text, { addSpecialTokens }) -> number[]
//   decode(ids, { skipSpecialTokens }) -> string
//   decoder() -> { push(id) -> new text, end() -> the rest }: incremental
//     decoding that never splits a UTF-8 character or a merged piece.
import { OnnxLightError } from './errors.js';

const encoder = new TextEncoder();

/** A token is a byte of UTF-8 text (byte-vocabulary models). */
export function byteTokenizer() {
  return {
    kind: 'bytes',
    encode: (text) => [...encoder.encode(text)],
    decode: (ids) => new TextDecoder('utf-8').decode(Uint8Array.from(ids, Number)),
    decoder() {
      const utf8 = new TextDecoder('utf-8');
      return {
        push: (id) => utf8.decode(Uint8Array.of(Number(id)), { stream: true }),
        end: () => utf8.decode(),
      };
    },
  };
}

let tokenizersModule = null;

/**
 * @huggingface/tokenizers' Tokenizer for a parsed tokenizer.json and
 * tokenizer_config.json. `what` names the file in errors.
 */
export async function jsonTokenizer(json, config = {}, what = 'tokenizer.json') {
  if (!tokenizersModule) {
    // loaded on first use (bundlers put it in the bundle, Node reads it then)
    tokenizersModule = import('@huggingface/tokenizers').catch((error) => {
      tokenizersModule = null;
      throw new OnnxLightError('OL_FAILED_PRECONDITION', `${what}: loading the package @huggingface/tokenizers failed: ${error.message}`);
    });
  }
  const { Tokenizer } = await tokenizersModule;
  let tokenizer;
  try {
    tokenizer = new Tokenizer(json, config);
  } catch (error) {
    throw new OnnxLightError('OL_INVALID_ARGUMENT', `${what}: not a tokenizer @huggingface/tokenizers can read: ${error.message}`);
  }
  const decode = (ids, { skipSpecialTokens = true } = {}) =>
    ids.length ? tokenizer.decode(ids.map(Number), { skip_special_tokens: skipSpecialTokens }) : '';
  return {
    kind: 'tokenizer.json',
    tokenizer,
    encode: (text, { addSpecialTokens = true } = {}) => tokenizer.encode(text, { add_special_tokens: addSpecialTokens }).ids,
    decode,
    /** The id of a token string (e.g. '</s>'), or undefined. */
    tokenId: (token) => tokenizer.token_to_id(token),
    decoder: () => incrementalDecoder(decode),
  };
}

/**
 * Incremental decoding by differences (as text-generation-inference does):
 * the text of the tokens since a recent offset, minus the text of those
 * already printed. Decoding a short window keeps it linear; starting the
 * window a few tokens back keeps context-dependent pieces (a SentencePiece
 * leading space, a byte-fallback sequence) right; text ending in U+FFFD (an
 * incomplete UTF-8 character) waits for the next token.
 */
export function incrementalDecoder(decode) {
  const ids = [];
  let prefixOffset = 0;
  let readOffset = 0;
  return {
    push(id) {
      ids.push(Number(id));
      const prefix = decode(ids.slice(prefixOffset, readOffset));
      const text = decode(ids.slice(prefixOffset));
      if (text.length <= prefix.length || text.endsWith('\uFFFD')) return '';
      prefixOffset = readOffset;
      readOffset = ids.length;
      return text.slice(prefix.length);
    },
    end() {
      const prefix = decode(ids.slice(prefixOffset, readOffset));
      const text = decode(ids.slice(prefixOffset));
      readOffset = prefixOffset = ids.length;
      return text.length > prefix.length ? text.slice(prefix.length) : '';
    },
  };
}
