// The storage format of paged-cache pages (ai.rt::PagedAttention appends,
// quantizePagedCache converts), from JS options to the C structs.
//
// The `pagedFormats` option of PersistentValueState.create,
// InferenceSession.create, generate / generateStream and createGenerator:
//   - rules: [{ fromTokens: 0 }, { fromTokens: 1024, key: { type: 'int8',
//     scale: 0.01, zeroPoint: 0 }, value: { type: 'uint4', scale: 'auto' } }]
//     (the last rule whose fromTokens <= the cached length applies; no key or
//     value: dense float32; scale 'auto': calibrated for each appended page
//     from its own values, recorded in the page). They become the C
//     ol_page_format_rule table (32 bytes a rule: int64 from_tokens, then
//     {i32 type, f32 scale, i32 zero_point} for key and value; abi.c checks
//     this layout), which C copies and checks when the session is made;
//   - a function (key: Tensor, value: Tensor, pastLength: number) =>
//     ({ key, value }) called in this thread for every PagedAttention
//     execution: a wasm function pointer (Module.addFunction, signature
//     'iiidi'), removed with the session. The tensors are views valid during
//     the call. A function that throws fails the run; the error is rethrown
//     (OnnxLightError with the function's error as `cause`).
import { OnnxLightError, invalidArgument } from './errors.js';
import { tensorFromValue } from './tensor.js';

/** Page storage types: the ONNX data type codes (= ol_dtype). */
const PAGE_TYPES = Object.freeze({
  float32: 1, float16: 10, bfloat16: 16, int8: 3, uint8: 2, int4: 22, uint4: 21, int2: 26, uint2: 25,
});
const APPENDED = new Set(['float32', 'int8', 'uint8', 'int4', 'uint4', 'int2', 'uint2']);
const RULE_BYTES = 32;

/**
 * One format { type, scale, zeroPoint } -> { type: code, scale, zeroPoint }
 * (scale 0 = 'auto': calibrated per page). append: a format PagedAttention
 * appends (float32 or codes); else a conversion (also float16/bfloat16).
 * Ranges are C's to check.
 */
export function pageFormat(format, what, append) {
  if (format === undefined || format === null) return { type: PAGE_TYPES.float32, scale: 0, zeroPoint: 0 };
  if (typeof format !== 'object') throw invalidArgument(`${what} must be an object { type, scale, zeroPoint }, got ${typeof format}`);
  const { type, scale, zeroPoint } = format;
  const allowed = append ? APPENDED : Object.keys(PAGE_TYPES);
  if (!PAGE_TYPES[type] || (append && !APPENDED.has(type))) {
    throw invalidArgument(`${what}.type must be one of ${[...allowed].join(', ')}, got ${JSON.stringify(type)}`);
  }
  const dense = type === 'float32' || type === 'float16' || type === 'bfloat16';
  if (dense) return { type: PAGE_TYPES[type], scale: 1, zeroPoint: 0 };
  if (scale === 'auto') {
    if (zeroPoint !== undefined) throw invalidArgument(`${what}.zeroPoint is chosen with scale 'auto' (0 for signed, the midpoint for unsigned codes); leave it out`);
    return { type: PAGE_TYPES[type], scale: 0, zeroPoint: 0 };
  }
  if (typeof scale !== 'number' || !(scale > 0) || !Number.isFinite(scale)) {
    throw invalidArgument(`${what}.scale must be a positive finite number or 'auto', got ${scale}`);
  }
  const zero = zeroPoint ?? 0;
  if (!Number.isInteger(zero)) throw invalidArgument(`${what}.zeroPoint must be an integer, got ${zeroPoint}`);
  return { type: PAGE_TYPES[type], scale, zeroPoint: zero };
}

/**
 * The pagedFormats option checked: null (absent), { rules } or { fn }.
 * Rules stay plain data (they cross into a generator worker as they are).
 */
export function parsePagedFormats(option, what) {
  if (option === undefined || option === null) return null;
  if (typeof option === 'function') return { fn: option, rules: null };
  if (!Array.isArray(option)) throw invalidArgument(`${what}: pagedFormats must be an array of rules or a function (key, value, pastLength) => ({ key, value })`);
  const rules = option.map((rule, i) => {
    if (rule === null || typeof rule !== 'object') throw invalidArgument(`${what}: pagedFormats[${i}] must be an object { fromTokens, key?, value? }`);
    const { fromTokens = 0 } = rule;
    if (!Number.isSafeInteger(fromTokens)) throw invalidArgument(`${what}: pagedFormats[${i}].fromTokens must be an integer, got ${fromTokens}`);
    return {
      fromTokens,
      key: pageFormat(rule.key, `${what}: pagedFormats[${i}].key`, true),
      value: pageFormat(rule.value, `${what}: pagedFormats[${i}].value`, true),
    };
  });
  return { fn: null, rules };
}

/**
 * The C side of parsed pagedFormats for one session/state/generator creation:
 * create(rulesPtr, ruleCount, fnPointer) is called with the rules written to
 * wasm memory (freed afterwards: C copies them) and the function added to the
 * wasm table. Returns { result, formats } where formats (or null) keeps the
 * function alive: formats.release() removes it, formats.rethrow(error)
 * replaces a run's error by the function's own failure.
 */
export function withPagedFormats(runtime, parsed, create) {
  if (!parsed) return { result: create(0, 0, 0), formats: null };
  const formats = parsed.fn ? new FormatFunction(runtime, parsed.fn) : null;
  const rules = parsed.rules ?? [];
  const table = rules.length ? runtime.alloc(RULE_BYTES * rules.length) : 0;
  try {
    const view = runtime.view();
    rules.forEach((rule, i) => {
      const at = table + RULE_BYTES * i;
      view.setBigInt64(at, BigInt(rule.fromTokens), true);
      writeFormats(view, at + 8, rule);
    });
    const result = create(table, rules.length, formats ? formats.pointer : 0);
    return { result, formats };
  } catch (error) {
    formats?.release();
    throw error;
  } finally {
    runtime.free(table);
  }
}

/** Writes ol_page_formats {key, value} (24 bytes) at ptr. */
function writeFormats(view, ptr, { key, value }) {
  [key, value].forEach((f, i) => {
    view.setInt32(ptr + 12 * i, f.type, true);
    view.setFloat32(ptr + 12 * i + 4, f.scale, true);
    view.setInt32(ptr + 12 * i + 8, f.zeroPoint, true);
  });
}

/** A JS format function as a wasm function pointer. */
class FormatFunction {
  #runtime;
  #pending = null;

  constructor(runtime, fn) {
    if (typeof runtime.m.addFunction !== 'function') {
      throw new OnnxLightError('OL_NOT_IMPLEMENTED', 'this onnx-light wasm module cannot call JS functions (built without addFunction); pass pagedFormats rules');
    }
    this.#runtime = runtime;
    const call = (keyPtr, valuePtr, pastLength, outPtr) => {
      const m = runtime.m;
      let key = null;
      let value = null;
      try {
        key = tensorFromValue(runtime, m._olw_value_retain(keyPtr));
        value = tensorFromValue(runtime, m._olw_value_retain(valuePtr));
        const chosen = fn(key, value, pastLength);
        if (chosen === null || typeof chosen !== 'object' || typeof chosen.then === 'function') {
          throw invalidArgument('pagedFormats function must return { key, value } synchronously');
        }
        const formats = {
          key: pageFormat(chosen.key, 'pagedFormats function result key', true),
          value: pageFormat(chosen.value, 'pagedFormats function result value', true),
        };
        writeFormats(runtime.view(), outPtr, formats);
        return 0;
      } catch (error) {
        this.#pending = error;
        return 1; // OL_INVALID_ARGUMENT: the run fails, rethrow() reports this error
      } finally {
        key?.dispose();
        value?.dispose();
      }
    };
    this.pointer = runtime.m.addFunction(call, 'iiidi');
  }

  /** The error a run failed with, or the function's own when it threw during the run. */
  rethrow(error) {
    const cause = this.#pending;
    this.#pending = null;
    if (!cause) return error;
    const wrapped = new OnnxLightError(cause.code ?? 'OL_INVALID_ARGUMENT', `the pagedFormats function failed: ${cause.message ?? cause}`);
    wrapped.cause = cause;
    return wrapped;
  }

  release() {
    if (this.pointer) this.#runtime.m.removeFunction(this.pointer);
    this.pointer = 0;
  }
}
