// Type declarations for the onnx-light package (every export of dist/node.js
// and dist/browser.js). Checked by `tsc --noEmit` in npm test.

/** Where the wasm module comes from; nothing else is ever fetched. */
export interface LoadOptions {
  /** URL (browsers, Node) or file path (Node) of onnx_light.wasm. Default: the file next to the package's JS. */
  wasmUrl?: string | URL;
  /** The module's bytes; takes precedence over wasmUrl. */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
}

/** An error from the runtime: `code` is the C status name, `message` the C message. */
export class OnnxLightError extends Error {
  constructor(code: OnnxLightError.Code, message: string);
  readonly name: 'OnnxLightError';
  readonly code: OnnxLightError.Code;
}

export declare namespace OnnxLightError {
  type Code =
    | 'OL_INVALID_ARGUMENT'
    | 'OL_INVALID_MODEL'
    | 'OL_NOT_IMPLEMENTED'
    | 'OL_OUT_OF_MEMORY'
    | 'OL_CANCELLED'
    | 'OL_FAILED_PRECONDITION'
    | 'OL_NOT_FOUND'
    | 'OL_INTERNAL'
    | 'OL_UNKNOWN';
}

export declare namespace Tensor {
  /** Element types, named as in onnxruntime-web, plus bfloat16, int4/uint4 and the float8 family. */
  interface DataTypeMap {
    float32: Float32Array;
    float64: Float64Array;
    /** IEEE half-precision bit patterns. */
    float16: Uint16Array;
    /** bfloat16 bit patterns. */
    bfloat16: Uint16Array;
    int8: Int8Array;
    int16: Int16Array;
    int32: Int32Array;
    int64: BigInt64Array;
    uint8: Uint8Array;
    uint16: Uint16Array;
    uint32: Uint32Array;
    uint64: BigUint64Array;
    /** One byte per element, 0 or 1. */
    bool: Uint8Array;
    string: string[];
    /** Two elements per byte, low nibble first. */
    int4: Uint8Array;
    /** Two elements per byte, low nibble first. */
    uint4: Uint8Array;
    float8e4m3fn: Uint8Array;
    float8e4m3fnuz: Uint8Array;
    float8e5m2: Uint8Array;
    float8e5m2fnuz: Uint8Array;
  }
  type Type = keyof DataTypeMap;
  type DataType = DataTypeMap[Type];
  /** 'cpu': data owned by JS; 'wasm': a view on wasm memory (Tensor.alloc, run outputs). */
  type DataLocation = 'cpu' | 'wasm';
  /** Plain arrays accepted by the constructor (copied into a typed array). */
  type ArrayInput = readonly number[] | readonly bigint[] | readonly boolean[] | readonly string[];
}

export class Tensor<T extends Tensor.Type = Tensor.Type> {
  /** A tensor of `type` from a typed array (kept, not copied) or a plain array (copied). dims default to [data.length]. */
  constructor(type: T, data: Tensor.DataTypeMap[T] | Tensor.ArrayInput, dims?: readonly number[]);
  /** The type inferred from the typed array. */
  constructor(data: Tensor.DataTypeMap[T], dims?: readonly number[]);

  /**
   * A zeroed tensor in wasm memory: `data` is a view on it and a run reads it
   * in place (no copy). Needs the module loaded: `await init()` or a session.
   */
  static alloc<T extends Exclude<Tensor.Type, 'string'>>(type: T, dims: readonly number[]): Tensor<T>;

  readonly type: T;
  readonly dims: readonly number[];
  /** Number of elements. */
  readonly size: number;
  readonly location: Tensor.DataLocation;
  /**
   * The elements. For 'wasm' tensors a view re-derived from the current wasm
   * memory on every access: read it again after a run (memory may have grown).
   */
  readonly data: Tensor.DataTypeMap[T];
  /** Byte offset of the payload in wasm memory ('wasm' tensors), else undefined. */
  readonly wasmByteOffset: number | undefined;
  /** onnxruntime-web compatibility: resolves to `data`. */
  getData(): Promise<Tensor.DataTypeMap[T]>;
  /** Frees wasm storage now; afterwards `data` throws. Idempotent. */
  dispose(): void;
}

export declare namespace InferenceSession {
  interface TensorValueMetadata {
    readonly name: string;
    readonly isTensor: true;
    readonly type: Tensor.Type;
    /** Numbers for fixed dims, names for symbolic ones, -1 for unknown; [] when the rank is unknown. */
    readonly shape: ReadonlyArray<number | string>;
  }
  interface NonTensorValueMetadata {
    readonly name: string;
    readonly isTensor: false;
  }
  type ValueMetadata = TensorValueMetadata | NonTensorValueMetadata;

  type SessionOptions = LoadOptions;

  interface RunOptions {
    /** Cancels the run (OL_CANCELLED) when aborted. */
    signal?: AbortSignal;
  }

  type FeedsType = { readonly [name: string]: Tensor };
  /** Output names, or an object whose keys are output names (values ignored). */
  type FetchesType = readonly string[] | { readonly [name: string]: Tensor | null };
  /** Sequence outputs are arrays of tensors; optional outputs may be null. */
  type OnnxValue = Tensor | Tensor[] | null;
  type ReturnType = { [name: string]: OnnxValue };
}

export class InferenceSession {
  private constructor();
  /** Loads a model from bytes, a file path (Node) or a URL, and plans it. */
  static create(
    model: Uint8Array | ArrayBuffer | ArrayBufferView | string | URL,
    options?: InferenceSession.SessionOptions,
  ): Promise<InferenceSession>;

  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly inputMetadata: readonly InferenceSession.ValueMetadata[];
  readonly outputMetadata: readonly InferenceSession.ValueMetadata[];

  /** Runs the graph; outputs are views on wasm memory owned by the returned tensors. */
  run(feeds: InferenceSession.FeedsType, options?: InferenceSession.RunOptions): Promise<InferenceSession.ReturnType>;
  run(
    feeds: InferenceSession.FeedsType,
    fetches: InferenceSession.FetchesType,
    options?: InferenceSession.RunOptions,
  ): Promise<InferenceSession.ReturnType>;
  /** Frees the session; tensors it returned stay valid. */
  release(): Promise<void>;
}

export interface MemoryStats {
  /** Bytes currently allocated by the runtime's default allocator. */
  liveBytes: number;
  /** Largest liveBytes since start or the last resetPeakMemory(). */
  peakBytes: number;
  totalAllocations: number;
  liveAllocations: number;
  /** Current size of the wasm memory. */
  wasmMemoryBytes: number;
}

/** Loads the wasm module now (sessions do it too). Only the first call's options count. */
export function init(options?: LoadOptions): Promise<void>;
/** Allocation statistics; needs the module loaded. */
export function memoryStats(): MemoryStats;
/** Starts a new peak (peakBytes = liveBytes). */
export function resetPeakMemory(): void;
/** Serialized ModelProto bytes from the ONNX text syntax. */
export function parseModel(text: string, options?: LoadOptions): Promise<Uint8Array>;
/** The ONNX text syntax of serialized ModelProto bytes. */
export function printModel(bytes: Uint8Array | ArrayBuffer, options?: LoadOptions): Promise<string>;
/** Package version (equals the C library's OL_VERSION). */
export const version: string;
