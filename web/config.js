// What the app runs: the model (one constant to switch it), the plain-text
// turn format of a byte-level model without a chat template, the sampling
// defaults and the KV cache's format policy. Shared by the page (app.js)
// and its worker (chat-worker.js).

/** The model the page downloads (and caches) the first time, relative to this page. */
export const MODEL_URL = '../../models/fortunes-byte-0.8M.onnx';

// The turn format: "You: <message>\nBot: <answer>\n". An answer ends at the
// model's first newline (its end-of-sequence token) or after MAX_ANSWER_BYTES.
export const USER_PREFIX = 'You: ';
export const BOT_PREFIX = 'Bot: ';
export const END_OF_ANSWER = 10; // '\n'
export const MAX_ANSWER_BYTES = 160;
export const TEMPERATURE = 0.8;

/**
 * The bytes that ask for the next answer: the last answer's final token
 * (generated but not yet in the cache), a newline when that answer was cut
 * before its end, then the user's line and the answer's prefix.
 */
export function turnInput(pending, message) {
  const encoder = new TextEncoder();
  const lead = pending.length && pending.at(-1) !== END_OF_ANSWER ? [END_OF_ANSWER] : [];
  const line = `${USER_PREFIX}${message.replace(/\s*\n\s*/g, ' ').trim()}\n${BOT_PREFIX}`;
  return [...pending, ...lead, ...encoder.encode(line)];
}

// The KV cache policy: the turn being answered (the user's line and the
// answer as it grows) is appended as dense float32 pages; when the answer is
// done, every dense block behind it is converted to int8 keys / uint4 values,
// each page's scale calibrated from its values (scale 'auto'), and the
// blocks are compacted. Saved caches are therefore quantized whole, and a
// Regenerate cut (PagedCache.truncate at the turn's start) gives back exactly
// the cache the answer was first generated from.
export const QUANTIZED = { key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } };
export const POLICY_TEXT = 'dense float32 pages for the turn being answered; int8 keys / uint4 values (scales calibrated per page) behind it';
