// Encoded runtime values seen from JS: SharedQuantizedValue (a compact value
// that retains its model's shared quantization parameter set inside wasm
// memory, so it outlives the model, session and run that produced it) and the
// conversion of encoded session outputs. The set is an immutable snapshot.
import { dtypeOfCode } from './dtypes.js';
import { OnnxLightError } from './errors.js';

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

/** { type, dims, format } of an encoded value handle (format -1: none). */
export function encodedInfo(runtime, handle) {
  return runtime.scratch(8 * 19, (out) => {
    runtime.check(runtime.m._olw_encoded_logical(handle, out));
    const view = runtime.view();
    const at = (i) => view.getFloat64(out + 8 * i, true);
    const rank = at(1);
    return { type: dtypeOfCode(at(0)).type, dims: Array.from({ length: rank }, (_, i) => at(3 + i)), format: at(2) };
  });
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
    return this.#runtime.string(this.#runtime.m._olw_encoded_parameter_ref(this.handle));
  }

  /** The logical tensor type ('float32', ...). */
  get type() {
    return this.#info.type;
  }

  /** The logical tensor dims. */
  get dims() {
    return [...this.#info.dims];
  }

  /** The profile (QuantizationFormat value). */
  get format() {
    return this.#info.format;
  }

  /** A copy of the compact payload (reserved byte, outlier values, codes). */
  get rawData() {
    const runtime = this.#runtime;
    return runtime.scratch(8, (out) => {
      runtime.check(runtime.m._olw_encoded_raw(this.handle, out, out + 4));
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
