// What the app runs: the default model directory (one constant to switch
// it) and the files of it the app downloads, the answers' length and
// sampling defaults, and the KV cache's format policy. Shared by the page
// (app.js) and its worker (chat-worker.js). The turn format is the model
// directory's chat template (fromPretrained), for the default model and a
// directory opened from disk alike.

/** The model directory (Hugging Face layout) the page downloads and caches the first time, relative to this page. */
export const MODEL_DIR = '../../models/fortunes-byte-4M/';

/**
 * The files of MODEL_DIR the app reads (what fromPretrained reads for it:
 * config.json's dtype q4 picks onnx/model_q4.onnx), downloaded once with a
 * progress bar and kept in the Cache API for offline use.
 */
export const MODEL_FILES = ['config.json', 'generation_config.json', 'tokenizer.json', 'tokenizer_config.json', 'onnx/model_q4.onnx'];

/** An answer's most tokens (the URL parameter max-tokens overrides it). */
export const MAX_ANSWER_TOKENS = 200;
/** Sampling temperature when generation_config.json gives none (do_sample false: greedy). */
export const TEMPERATURE = 0.8;

/**
 * The turn format of a model directory without a chat template: the
 * plain-text lines "You: <message>\nBot: <answer>\n".
 */
export const PLAIN_TEMPLATE = "{% for m in messages %}{% if m['role'] == 'user' %}You: {{ m['content'] }}\nBot: {% else %}{{ m['content'] }}\n{% endif %}{% endfor %}";

// The KV cache policy: the turn being answered (the user's message and the
// answer as it grows) is appended as dense float32 pages; when the answer is
// done, every dense block behind it is converted to int8 keys / uint4 values,
// each page's scale calibrated from its values (scale 'auto'), and the
// blocks are compacted. Saved caches are therefore quantized whole, and a
// Regenerate cut (PagedCache.truncate at the turn's start) gives back exactly
// the cache the answer was first generated from.
export const QUANTIZED = { key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } };
export const POLICY_TEXT = 'dense float32 pages for the turn being answered; int8 keys / uint4 values (scales calibrated per page) behind it';
