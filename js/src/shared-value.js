// Encoded runtime values seen from JS: SharedQuantizedValue (a compact value
// that retains its model's shared quantization parameter set inside wasm
// memory, so it outlives the model, session and run that produced it) and the
// conversion of encoded session outputs. The set is an immutable snapshot.
import { dtypeOfCode } from './dtypes.js';
import { OnnxLightError } from './errors.js';
import { formatOfCode } from './quantization-format.js';

const handles = new FinalizationRegistry(({ runtime, handle }) => runtime.m._olw_value_release(handle));

/** Serialized EncodedValueProto of an encoded value handle (an independent copy). */
export function serializeEncoded(runtime, handle) {
  return runtime.scratch(8, (out) => {
    runtime.check(runtime.m._olw_encoded_value_serialize(handle, out, out + 4));
    const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
    const copy = runtime.heap.slice(ptr, ptr + length);
    runtime.free(ptr);
    return copy;
  });
}

/** { type, dims, format } of an encoded value handle (format null when the layout names no profile). */
export function encodedInfo(runtime, handle) {
  const m = runtime.m;
  const { type, dims } = runtime.scratch(8 + 8 * 16, (out) => {
    const dimsPtr = out + 8;
    runtime.check(m._olw_encoded_value_logical_type(handle, out, dimsPtr, out + 4));
    const rank = runtime.u32(out + 4);
    const view = runtime.view();
    const d = dtypeOfCode(view.getInt32(out, true));
    return { type: d?.type ?? 'unknown', dims: Array.from({ length: rank }, (_, i) => Number(view.getBigInt64(dimsPtr + 8 * i, true))) };
  });
  // the profile its layout names (ol_quant_value_format), else null
  const format = runtime.scratch(4, (out) => (m._olw_quant_value_format(handle, out) === 0 ? formatOfCode(runtime.i32(out)) : null));
  return { type, dims, format };
}

/**
 * A compact encoded value (EncodedValueProto.parameter_ref set) together with
 * the parameter set it refers to. Session outputs of compact values and
 * quantizeTensorShared() return it; dequantizeTensor() and
 * materializeQuantizedValue() use its retained parameters. dispose() frees it
 * early, else the garbage collector does.
 */
export class SharedQuantizedValue {
  #runtime;
  #handle;
  #token = {};
  #info;

  /** Internal: takes the reference on an ENCODED value handle. */
  constructor(runtime, handle) {
    this.#runtime = runtime;
    this.#handle = handle;
    this.#info = encodedInfo(runtime, handle);
    handles.register(this, { runtime, handle }, this.#token);
  }

  /** Internal: the ol_value handle (throws once disposed). */
  get handle() {
    if (!this.#handle) throw new OnnxLightError('OL_FAILED_PRECONDITION', 'the SharedQuantizedValue was disposed');
    return this.#handle;
  }

  /** The parameter set's name (EncodedValueProto.parameter_ref). */
  get parameterRef() {
    return this.#runtime.string(this.#runtime.m._olw_encoded_value_parameter_ref(this.handle));
  }

  /** The logical tensor type ('float32', ...). */
  get type() {
    return this.#info.type;
  }

  /** The logical tensor dims. */
  get dims() {
    return [...this.#info.dims];
  }

  /** The profile (a QuantizationFormat member). */
  get format() {
    return this.#info.format;
  }

  /** A copy of the compact payload (reserved byte, outlier values, codes). */
  get rawData() {
    const runtime = this.#runtime;
    return runtime.scratch(8, (out) => {
      runtime.check(runtime.m._olw_encoded_value_raw_data(this.handle, out, out + 4));
      const [ptr, length] = [runtime.u32(out), runtime.u32(out + 4)];
      return runtime.heap.slice(ptr, ptr + length);
    });
  }

  /**
   * An independent snapshot of the compact EncodedValueProto (serialized
   * bytes); decoding it needs the declaring model: dequantizeTensor(bytes, { model }).
   */
  get encoded() {
    return serializeEncoded(this.#runtime, this.handle);
  }

  dispose() {
    if (!this.#handle) return;
    handles.unregister(this.#token);
    this.#runtime.m._olw_value_release(this.#handle);
    this.#handle = 0;
  }
}
