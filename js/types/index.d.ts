// Type declarations for the onnx-light package (every export of dist/node.js
// and dist/browser.js). Checked by `tsc --noEmit` in npm test.

/** Where the wasm module comes from; nothing else is ever fetched. */
export interface LoadOptions {
  /**
   * URL (browsers, Node) or file path (Node) of onnx_light.wasm, of the
   * threaded threads/onnx_light_threads.wasm (told apart by its imports), or
   * of their relaxed-SIMD forms onnx_light_relaxed.wasm and
   * threads/onnx_light_threads_relaxed.wasm (which need an engine that passes
   * the relaxed-SIMD known-answer test). Default: the package's own file,
   * chosen by env.wasm.numThreads and env.wasm.relaxedSimd.
   */
  wasmUrl?: string | URL;
  /** The module's bytes; takes precedence over wasmUrl. */
  wasmBinary?: ArrayBuffer | ArrayBufferView;
}

/** Process-wide settings, read when the wasm module loads (like onnxruntime-web's env). */
export const env: {
  wasm: {
    /**
     * Intra-op threads, the calling thread included: 0 (default) for the
     * number of cores, 1 for the single-threaded module, at most 64. More
     * than 1 loads the threaded module where SharedArrayBuffer is available
     * (Node; cross-origin isolated pages), else falls back to one thread.
     * Set it before the first session or init(); later changes have no effect.
     */
    numThreads: number;
    /**
     * Browsers: the base URL of the package's dist/ files (a string resolved
     * against the page, or a URL), like onnxruntime-web's env.wasm.wasmPaths.
     * Every module variant is found under it at its dist/ path
     * (onnx_light.wasm; threads/onnx_light_threads.wasm, .js and .worker.js),
     * and so is the generator's browser-worker.js. Default: the directory of
     * the script holding the package. A missing file fails the load with an
     * OnnxLightError naming its URL. Set it before the module loads.
     */
    wasmPaths?: string | URL;
    /**
     * true (default): the relaxed-SIMD module (8-bit dot products in the int4
     * MatMulNBits kernels with accuracy_level 4; results identical to the
     * SIMD128 module's bits) where the engine passes a known-answer test of
     * the relaxed 8-bit dot products, else the SIMD128 module. false:
     * always the SIMD128 module. Set it before the first session or init().
     */
    relaxedSimd: boolean;
  };
};

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
   * A KV cache a session returned with spare rows (present.*, growing in place
   * when fed back) is first replaced by a dense copy of its elements.
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
    /** The value kind ('struct' for a paged cache). */
    readonly kind: 'sequence' | 'map' | 'optional' | 'encoded' | 'struct' | 'unknown';
  }
  type ValueMetadata = TensorValueMetadata | NonTensorValueMetadata;

  interface SessionOptions extends LoadOptions {
    /** Threads of this session's runs: 0 or absent for the module's count, at most the threads it loaded with. */
    intraOpNumThreads?: number;
    /**
     * Binds past_key_values.{i}.key|value <- present.{i}.key|value (as bindCache does) inside
     * wasm memory, without a second copy of the model, when the model has such inputs and no
     * persistent bindings yet; see persistentBindings. emptyCaches(session) gives the initial caches.
     */
    bindCache?: boolean;
    /** Storage of the paged-cache pages runs and generations append (see PagedFormats). */
    pagedFormats?: PagedFormats;
    /** Record runtime events of runs and generations (session.events()). Default false. */
    events?: boolean;
  }

  interface RunOptions {
    /** Cancels the run (OL_CANCELLED) when aborted. */
    signal?: AbortSignal;
  }

  /** Tensors, or { data: TypedArray, dims } (copied once); arrays, plain objects and EncodedValue for sequence, struct and encoded inputs. */
  type FeedsType = { readonly [name: string]: ValueInput };
  /** Output names, or an object whose keys are output names (values ignored). */
  type FetchesType = readonly string[] | { readonly [name: string]: Tensor | null };
  /** Sequence outputs are arrays, struct outputs plain objects, encoded outputs EncodedValue; optional outputs may be null. */
  type OnnxValue = Value | null;
  type ReturnType = { [name: string]: OnnxValue };
}

/**
 * A ModelProto message object of 'onnx-light/proto' (made with
 * @bufbuild/protobuf's create/fromBinary). Accepted wherever a model is; the
 * package loads 'onnx-light/proto' and @bufbuild/protobuf only when one is
 * passed (in browsers the page must be able to resolve them: a bundler or an
 * import map).
 */
export interface ModelProtoLike {
  readonly $typeName: 'onnx.ModelProto';
}

/** Every API that takes a model accepts serialized bytes, a path (Node) or URL, or a ModelProto object. */
export type ModelSource = Uint8Array | ArrayBuffer | ArrayBufferView | string | URL | ModelProtoLike;

/** What binding returns: a ModelProto for a ModelProto input, serialized bytes for every other input. */
export type BoundModel<M> = M extends ModelProtoLike ? M : Uint8Array;

/** An input value: a Tensor (wasm tensors are passed without a copy) or a typed array with dims (copied once). */
export type TensorInput = Tensor | { readonly data: Exclude<Tensor.DataType, string[]>; readonly dims: readonly number[]; readonly type?: Tensor.Type };
/** A named struct value: its fields in declaration order. */
export interface StructValue {
  readonly [field: string]: Value;
}
/** A value a run returns: a tensor, a sequence (array), a named struct, a paged cache or an encoded value (compact: SharedQuantizedValue). */
export type Value = Tensor | Value[] | StructValue | PagedCache | EncodedValue | SharedQuantizedValue;
/** A value a run takes: tensors as TensorInput, sequences as arrays, structs as plain objects, paged caches, encoded values. */
export type ValueInput =
  | TensorInput
  | PagedCache
  | PagedCacheInput
  | EncodedValue
  | SharedQuantizedValue
  | readonly ValueInput[]
  | { readonly [field: string]: ValueInput };
/** The feeds of a generation: tensors and (for models with bindings) the initial caches. */
export type GenerateFeeds = { readonly [name: string]: TensorInput | PagedCache | PagedCacheInput };

/** One persistent binding: the graph input fed from the graph output of the previous run. */
export interface PersistentBinding {
  readonly input: string;
  readonly output: string;
}

export interface GenerateOptions {
  /** Tokens to generate (default 16). */
  maxNewTokens?: number;
  /** 0 (default): greedy. > 0: sample softmax(logits / temperature). */
  temperature?: number;
  /** Sampling seed (default 0): the same seed gives the same tokens with this package. */
  seed?: number | bigint;
  /** Generation stops when every row has produced it. */
  eosTokenId?: number;
  /** Token for rows that have finished (default eosTokenId). */
  padTokenId?: number;
  /** Called after each step with the new token of every row; return false to stop early (not an error). */
  onToken?: (tokens: bigint[], step: number) => unknown;
  /** Aborting rejects with OnnxLightError OL_CANCELLED (checked before every step). */
  signal?: AbortSignal;
  /** Graph names (defaults input_ids, logits, attention_mask, position_ids). */
  inputIdsName?: string;
  logitsName?: string;
  attentionMaskName?: string;
  positionIdsName?: string;
  /** Append capacity of persistent caches for models with bindings (default 32). */
  persistentTensorInitialCapacity?: number;
  /** Storage of appended paged-cache pages for this generation (default: the session's). */
  pagedFormats?: PagedFormats;
  /**
   * generate() resolves to { tokens, caches }: the caches of the generation's
   * persistent state after the last step (models with bindings; the last
   * token is not in them yet: it is the next step's input).
   */
  returnCaches?: boolean;
}

/** What generate() resolves to with returnCaches. */
export interface GenerateResult {
  tokens: Tensor<'int64'>;
  caches: Record<string, PagedCache | Tensor>;
}

/** One generation step: the new token of every row. */
export interface GenerateStep {
  tokens: bigint[];
  step: number;
}

export class InferenceSession {
  private constructor();
  /** Loads a model from bytes, a file path (Node), a URL or a ModelProto, and plans it. */
  static create(model: ModelSource, options?: InferenceSession.SessionOptions): Promise<InferenceSession>;

  /** GraphProto.persistent_bindings of the model. */
  readonly persistentBindings: readonly PersistentBinding[];

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
  /** Events of this session's runs and generations (needs { events: true }). */
  events(): PersistentValueState.RuntimeEvent[];
  clearEvents(): void;

  /**
   * Autoregressive generation: feeds hold int64 input_ids [batch, prompt] and
   * the other inputs (initial empty caches for models with bindings, see
   * emptyCaches). Models with persistent bindings run the prompt once and then
   * one token per step in a fresh PersistentValueState; models without re-run
   * the growing prefix in this session. The token loop is the C library's
   * (ol_generator_*), so option errors name its fields (max_new_tokens, ...).
   * Resolves to int64 [batch, prompt + generated] ({ tokens, caches } with returnCaches).
   */
  generate(feeds: GenerateFeeds, options: GenerateOptions & { returnCaches: true }): Promise<GenerateResult>;
  generate(feeds: GenerateFeeds, options?: GenerateOptions & { returnCaches?: false }): Promise<Tensor<'int64'>>;
  /** generate() as an async iterator of steps (returnCaches is not an option here). */
  generateStream(feeds: GenerateFeeds, options?: GenerateOptions & { returnCaches?: false }): AsyncGenerator<GenerateStep, void, undefined>;
}

export declare namespace PersistentValueState {
  interface Options extends LoadOptions {
    /** Initial append capacity (tokens for Attention) of persistent buffers; 0 disables reservations. Default 32. */
    persistentTensorInitialCapacity?: number;
    /** Record runtime events (storage counters) in the state's log. Default false. */
    events?: boolean;
    /** Threads of this state's runs, as InferenceSession's option. */
    intraOpNumThreads?: number;
    /** Bind the KV cache inside wasm memory first, as InferenceSession's option (initial: emptyCaches(model)). */
    bindCache?: boolean;
    /** Storage of the paged-cache pages runs append (see PagedFormats). */
    pagedFormats?: PagedFormats;
  }
  interface RunOptions {
    /** An aborted signal rejects with OL_CANCELLED and leaves the state unchanged. */
    signal?: AbortSignal;
  }
  /** What every runtime event has. */
  interface RuntimeEventBase {
    /** The node that recorded it (also as nodeName). */
    node: string;
    nodeName: string;
    opType: string;
    /** Allocator live bytes when recorded. */
    allocatedBytes: number;
    /** Allocator peak bytes when recorded. */
    peakBytes: number;
  }
  /** Persistent storage of a cache growing in place (Attention, Concat, ...). */
  interface StorageEvent extends RuntimeEventBase {
    kind: 'persistent_storage';
    action: 'persistentStorage';
    storageAllocations: number;
    storageAllocatedBytes: number;
    storagePrefixCopiedBytes: number;
    storageAppendCopiedBytes: number;
    storageReuseCount: number;
  }
  /** One ai.rt::PagedAttention execution. */
  interface PagedAttentionEvent extends RuntimeEventBase {
    kind: 'paged_attention';
    action: 'pagedAttention';
    /** Payload bytes of the pages this execution appended (copied or converted). */
    copiedBytes: number;
    /** Float bytes decoded from quantized pages for visible tokens (every query counts). */
    dequantizedBytes: number;
    /** Peak numerical scratch. */
    peakWorkspaceBytes: number;
    /** Past pages whose metadata this node checked for the first time. */
    validatedPages: number;
  }
  /** A runtime event (plain object). */
  type RuntimeEvent = StorageEvent | PagedAttentionEvent;
}

/**
 * Values retained in wasm memory between runs for the inputs bound by
 * GraphProto.persistent_bindings. The state layer never copies payloads: after
 * a run, `values[input]` and the returned bound output view the same wasm
 * buffer. A failed or cancelled run leaves the values unchanged.
 */
export class PersistentValueState<V extends Value = Tensor> {
  private constructor();
  /**
   * initial: one value per bound input (exact graph input names). V types the
   * values and outputs: Tensor (default), or Value for states holding
   * structs, sequences or encoded values.
   */
  static create<V extends Value = Tensor>(
    model: ModelSource,
    initial: { readonly [name: string]: ValueInput },
    options?: PersistentValueState.Options,
  ): Promise<PersistentValueState<V>>;
  readonly inputNames: readonly string[];
  readonly outputNames: readonly string[];
  readonly bindings: readonly PersistentBinding[];
  readonly options: Readonly<{ persistentTensorInitialCapacity: number; events: boolean }>;
  readonly closed: boolean;
  /** Runs with the retained values plus feeds (the unbound inputs only). */
  run(feeds: { readonly [name: string]: ValueInput }, options?: PersistentValueState.RunOptions): Promise<Record<string, V>>;
  run(
    feeds: { readonly [name: string]: ValueInput },
    fetches: readonly string[],
    options?: PersistentValueState.RunOptions,
  ): Promise<Record<string, V>>;
  /**
   * Views of the retained values (new Tensor objects at every access, no copy).
   * Dispose them when done: a live view makes the next append allocate a fresh buffer.
   */
  readonly values: Record<string, V>;
  /** Replaces every retained value (by reference). */
  reset(initial: { readonly [name: string]: ValueInput }): Promise<void>;
  /** Releases the retained values; later calls raise OL_FAILED_PRECONDITION. Returned views stay valid. */
  close(): Promise<void>;
  /** Events recorded by this state's runs (needs { events: true }). */
  events(): PersistentValueState.RuntimeEvent[];
  clearEvents(): void;
}

/** Adds persistent bindings { inputName: outputName }; a ModelProto in gives a ModelProto out, anything else gives bytes. */
export function bindPersistent<M extends ModelSource>(model: M, bindings: { readonly [input: string]: string }, options?: LoadOptions): Promise<BoundModel<M>>;
/** bindPersistent with past_key_values.{i}.key|value <- present.{i}.key|value. */
export function bindCache<M extends ModelSource>(model: M, options?: LoadOptions): Promise<BoundModel<M>>;
/** Empty initial caches (dims [batch, heads, 0, headSize] from the declared shapes) for the bound (or past_key_values.*) inputs; `PagedCache.empty()` for paged caches (`emptyCaches<PagedCache>(pagedModel)`). */
export function emptyCaches<V extends Tensor | PagedCache = Tensor>(model: ModelSource | InferenceSession, options?: LoadOptions & { batch?: number }): Promise<Record<string, V>>;

/** One block of a paged cache: `length` tokens from `start`; pages [1, 1, capacity, width]. */
export interface PagedCacheBlock {
  readonly start: number;
  readonly length: number;
  /** A dense page (float32, float16, bfloat16) or an affine one (EncodedValue). */
  readonly key: Tensor | EncodedValue;
  readonly value: Tensor | EncodedValue;
}
/** A paged cache as plain data, accepted wherever a cache is (start/length as numbers, bigints or int64 scalars). */
export interface PagedCacheInput {
  readonly blocks: ReadonlyArray<{
    readonly start: number | bigint | Tensor<'int64'>;
    readonly length: number | bigint | Tensor<'int64'>;
    readonly key: TensorInput | EncodedValue;
    readonly value: TensorInput | EncodedValue;
  }>;
}
/** @deprecated the plain form of a paged cache: PagedCacheInput. */
export type PagedCacheValue = PagedCacheInput;

/**
 * A paged KV cache (the past/present of ai.rt::PagedAttention) in wasm memory.
 * Blocks are immutable: truncate() and fork() share pages. dispose() frees it
 * early, else the garbage collector does.
 */
export class PagedCache {
  private constructor();
  /** An empty cache. Needs the module loaded (await init()). */
  static empty(): PagedCache;
  /** A cache from PagedCacheProto bytes; malformed bytes raise OnnxLightError. Needs the module loaded. */
  static fromBytes(bytes: Uint8Array | ArrayBuffer): PagedCache;
  /** A cache from its plain form (copied once and checked), or a fork of a PagedCache. Needs the module loaded. */
  static from(cache: PagedCache | PagedCacheInput): PagedCache;
  /** Tokens held. */
  readonly length: number;
  /** Bytes of the K and V page payloads. */
  readonly byteLength: number;
  readonly blockCount: number;
  /** The blocks (new objects each access; dispose the tensors when done). */
  readonly blocks: PagedCacheBlock[];
  readonly disposed: boolean;
  /** PagedCacheProto bytes, saved compacted (lossless). */
  toBytes(): Uint8Array;
  /** A new cache of the first `tokens` tokens, pages shared. */
  truncate(tokens: number): PagedCache;
  /** A new cache sharing every block. */
  fork(): PagedCache;
  /** A new cache with runs of one format merged into blocks of at most maxBlockTokens (default 64), losslessly. */
  compact(maxBlockTokens?: number): PagedCache;
  dispose(): void;
}

/** The storage of pages: float32 (dense) or affine codes. 'auto' scales are calibrated for each appended page. */
export type PageFormat =
  | { type: 'float32' }
  | { type: 'int8' | 'uint8' | 'int4' | 'uint4' | 'int2' | 'uint2'; scale: number; zeroPoint?: number }
  | { type: 'int8' | 'uint8' | 'int4' | 'uint4' | 'int2' | 'uint2'; scale: 'auto' };
/** A format rule: from `fromTokens` cached tokens on; key/value left out: dense float32. */
export interface PagedFormatRule {
  fromTokens?: number;
  key?: PageFormat;
  value?: PageFormat;
}
/**
 * Formats of the pages ai.rt::PagedAttention appends: rules (the last whose
 * fromTokens <= the cached length applies; ascending), or a function called in
 * this thread for every execution (its tensors are views valid during the call).
 */
export type PagedFormats =
  | readonly PagedFormatRule[]
  | ((key: Tensor, value: Tensor, pastLength: number) => { key?: PageFormat; value?: PageFormat });

/** A conversion target of quantizePagedCache ('auto': calibrated for each converted page). */
export type PageConversion =
  | { type: 'float32' | 'float16' | 'bfloat16' }
  | { type: 'int8' | 'uint8' | 'int4' | 'uint4' | 'int2' | 'uint2'; scale: number; zeroPoint?: number }
  | { type: 'int8' | 'uint8' | 'int4' | 'uint4' | 'int2' | 'uint2'; scale: 'auto' };
/** A new cache with the blocks blockIndices converted (others shared), as ai.rt::QuantizePagedCache. */
export function quantizePagedCache(cache: PagedCache, blockIndices: readonly number[], formats: { key: PageConversion; value: PageConversion }): PagedCache;
/** The model with the caches as GraphProto.paged_cache_initializer of the graph inputs they are named after. */
export function withPagedCacheInitializers<M extends ModelSource>(
  model: M,
  caches: { readonly [input: string]: PagedCache | Uint8Array },
  options?: LoadOptions,
): Promise<BoundModel<M>>;
export interface PagedModelOptions extends LoadOptions {
  /** Tokens per appended page at most (16). */
  blockSize?: number;
  /** Cached tokens at most (4096). */
  maxTokens?: number;
  /** -1 (default): every preceding token; >= 0: the preceding tokens each query sees. */
  leftWindowSize?: number;
}
/** A decoder (torch Concat caches, GroupQueryAttention, Attention 23 or MultiHeadAttention) rewritten onto paged caches (ai.rt::PagedAttention), one bound cache per layer. */
export function toPagedModel<M extends ModelSource>(model: M, options?: PagedModelOptions): Promise<BoundModel<M>>;

/** The token loop of InferenceSession.generate, in a worker (default) or in this thread. */
export interface TokenGenerator {
  readonly inWorker: boolean;
  generate(feeds: GenerateFeeds, options: GenerateOptions & { returnCaches: true }): Promise<GenerateResult>;
  generate(feeds: GenerateFeeds, options?: GenerateOptions & { returnCaches?: false }): Promise<Tensor<'int64'>>;
  generateStream(feeds: GenerateFeeds, options?: GenerateOptions & { returnCaches?: false }): AsyncGenerator<GenerateStep, void, undefined>;
  /** Ends the worker (or releases the session). */
  close(): Promise<void>;
}
/**
 * worker: true (default) runs the loop in a Web Worker / worker_threads; tokens stream back as produced.
 * pagedFormats: rules only with a worker (a function runs in the calling thread: worker: false).
 */
export function createGenerator(model: ModelSource, options?: LoadOptions & { worker?: boolean; pagedFormats?: PagedFormats }): Promise<TokenGenerator>;
/** A chat message for a model's chat template. */
export interface ChatMessage {
  role: string;
  content: string;
  [key: string]: unknown;
}

/** Progress of one file of a model directory. */
export interface PretrainedProgress {
  /** Path inside the directory, e.g. 'onnx/model_q4.onnx'. */
  file: string;
  loaded: number;
  /** The file's size (undefined while unknown, e.g. a compressed HTTP response). */
  total: number | undefined;
}

/**
 * A model directory: a path or file: URL (Node), an http(s) base URL, a
 * FileSystemDirectoryHandle (directory picker, OPFS), or File/Blob objects by
 * relative path (a Map, a plain object, or the FileList of
 * <input type="file" webkitdirectory>; a common leading folder is dropped).
 */
export type PretrainedSource =
  | string
  | URL
  | { readonly kind: 'directory'; getFileHandle(name: string): Promise<unknown>; getDirectoryHandle(name: string): Promise<unknown> }
  | ReadonlyMap<string, Blob>
  | { readonly [path: string]: Blob }
  | ArrayLike<Blob & { readonly webkitRelativePath?: string; readonly name: string }>;

export interface PretrainedOptions extends LoadOptions {
  /** Bytes read so far, per file. */
  onProgress?: (progress: PretrainedProgress) => void;
  /**
   * The onnx/ variant: fp32 (model.onnx), fp16, q8 (model_quantized.onnx),
   * int8, uint8, q4 (model_q4.onnx), q4f16, bnb4. Default: config.json's
   * "transformers.js_config".dtype, else fp32.
   */
  dtype?: 'fp32' | 'fp16' | 'q8' | 'int8' | 'uint8' | 'q4' | 'q4f16' | 'bnb4';
  /** A model file path inside the directory instead of a dtype variant. */
  modelFile?: string;
  /** Paged KV caches when toPagedModel converts the decoder (default true); contiguous bound caches otherwise. */
  paged?: boolean;
  /** Page formats of the paged caches (default float32 pages). */
  pagedFormats?: PagedFormats;
  /** The name of the chat template when tokenizer_config.json lists several (default 'default'). */
  chatTemplate?: string;
  /** Paged-cache page size and capacity (toPagedModel). */
  blockSize?: number;
  maxTokens?: number;
  intraOpNumThreads?: number;
}

export interface PretrainedGenerateOptions {
  /** Default: generation_config.json's max_new_tokens, else 64. */
  maxNewTokens?: number;
  /** Default: generation_config.json's temperature when do_sample is true, else 0 (greedy). */
  temperature?: number;
  seed?: number | bigint;
  /** Stop tokens (default: generation_config.json's / config.json's eos_token_id; [] for none). */
  eosTokenId?: number | number[];
  padTokenId?: number;
  signal?: AbortSignal;
  pagedFormats?: PagedFormats;
  /** Called with each generated id; return false to stop. */
  onToken?: (id: number, step: number) => unknown;
  /** Messages only: end the prompt with the assistant's turn (default true). */
  addGenerationPrompt?: boolean;
  /** Messages only: more variables for the chat template (e.g. tools, documents). */
  templateVariables?: Record<string, unknown>;
  /** Default: true for a text (the tokenizer's post-processor, e.g. <s>), false for messages (the template writes them). */
  addSpecialTokens?: boolean;
}

export interface PretrainedResult {
  /** The generated text (special tokens and a final eos left out). */
  text: string;
  /** Generated ids (a final eos included). */
  ids: number[];
  promptIds: number[];
  /** The prompt text (the rendered chat template for messages). */
  prompt: string;
}

/** Text <-> ids: @huggingface/tokenizers for tokenizer.json, or bytes. */
export interface TextTokenizer {
  readonly kind: 'tokenizer.json' | 'bytes';
  encode(text: string, options?: { addSpecialTokens?: boolean }): number[];
  decode(ids: readonly number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Incremental decoding: push(id) returns the new complete text (never a split character). */
  decoder(): { push(id: number | bigint): string; end(): string };
}

/** A model directory opened for generation. */
export interface PretrainedModel {
  readonly session: InferenceSession;
  readonly tokenizer: TextTokenizer;
  readonly config: Record<string, any>;
  readonly generationConfig: Record<string, any>;
  readonly tokenizerConfig: Record<string, any>;
  readonly chatTemplate: string | null;
  readonly eosTokenIds: number[];
  readonly bosTokenId: number | undefined;
  readonly padTokenId: number | undefined;
  /** True when the decoder runs on paged caches. */
  readonly paged: boolean;
  /** Why it does not (toPagedModel's error, or 'paged: false'). */
  readonly pagedFallbackReason: string | null;
  /** The model file inside the directory, e.g. 'onnx/model_q4.onnx'. */
  readonly modelFile: string;
  applyChatTemplate(messages: ChatMessage[], options?: { addGenerationPrompt?: boolean; [kwarg: string]: unknown }): Promise<string>;
  encode(input: string | ChatMessage[], options?: PretrainedGenerateOptions): Promise<{ prompt: string; ids: number[] }>;
  generate(input: string | ChatMessage[], options?: PretrainedGenerateOptions): Promise<PretrainedResult>;
  /** Text pieces as they are generated. */
  stream(input: string | ChatMessage[], options?: PretrainedGenerateOptions): AsyncGenerator<string, void, undefined>;
  release(): Promise<void>;
}

/** Opens a model directory in the Hugging Face layout (config.json, tokenizer.json, onnx/model*.onnx, ...). */
export function fromPretrained(source: PretrainedSource, options?: PretrainedOptions): Promise<PretrainedModel>;

/** Testing aid: after `count` more runtime allocations every allocation fails (OL_OUT_OF_MEMORY); -1 turns it off. */
export function injectAllocationFailure(count: number): void;

export interface MemoryStats {
  /** Bytes currently allocated by the runtime's default allocator. */
  liveBytes: number;
  /** Largest liveBytes + pooledBytes since start or the last resetPeakMemory(). */
  peakBytes: number;
  /** Calls that reached the allocator (a payload reused from an earlier run does not count). */
  totalAllocations: number;
  liveAllocations: number;
  /** Released payloads sessions keep to reuse in their next runs (at most what one run released). */
  pooledBytes: number;
  /** Current size of the wasm memory. */
  wasmMemoryBytes: number;
}

/** Loads the wasm module now (sessions do it too). Only the first call's options count. */
export function init(options?: LoadOptions): Promise<void>;
/** Threads runs use by default in the loaded module (1 for the single-threaded module); needs the module loaded. */
export function numThreads(): number;
/** The loaded module's vector instructions: 'relaxed' (env.wasm.relaxedSimd) or 'simd128'; needs the module loaded. */
export function simdLevel(): 'relaxed' | 'simd128';
/** Allocation statistics; needs the module loaded. */
export function memoryStats(): MemoryStats;
/** Starts a new peak (peakBytes = liveBytes + pooledBytes). */
export function resetPeakMemory(): void;
/** Serialized ModelProto bytes from the ONNX text syntax. */
export function parseModel(text: string, options?: LoadOptions): Promise<Uint8Array>;
/** The ONNX text syntax of serialized ModelProto bytes. */
export function printModel(bytes: Uint8Array | ArrayBuffer, options?: LoadOptions): Promise<string>;
/**
 * Type and shape inference: serialized model bytes whose graph.value_info records the inferred
 * type of every intermediate value (element type; shape with concrete dims and symbolic
 * dim_params carried through; ai.rt Quantize outputs get their physical struct_type). Graph
 * output declarations are refined in place. A contradiction with a declaration rejects with
 * OL_INVALID_MODEL naming the value and the node. The input is not modified.
 */
export function inferShapes(model: ModelSource, options?: LoadOptions): Promise<Uint8Array>;
/** Package version (equals the C library's OL_VERSION). */
export const version: string;

// ------------------------------------------------------------ quantization
// Needs the wasm module loaded (await init() first). C errors throw
// OnnxLightError with the C message.

/**
 * One profile of the catalogue: an enum member, not a number (the seed: the
 * factories and plan.format "do not accept strings or integers"; they throw
 * OnnxLightError for them). `name` is the enum name ('INT4'), `value` its
 * catalogue position (2); members are frozen and compared by identity.
 * quantizationFormatName(format) gives the stable wire name ('int4').
 */
declare const quantizationFormatBrand: unique symbol;
export interface QuantizationFormatMember<Name extends string = string, Value extends number = number> {
  /** Only the members of QuantizationFormat have it (look-alike objects are not formats). */
  readonly [quantizationFormatBrand]: true;
  readonly name: Name;
  readonly value: Value;
  /** 'QuantizationFormat.INT4' */
  toString(): string;
}

/**
 * Upper-case profile name -> member, in catalogue order (INT8 = 0 ...
 * ORT_MATMULNBITS_INT8 = 42). Filled from the C catalogue when the wasm module
 * loads (await init()); tests/js/quantization.test.mjs keeps this list equal to it.
 */
export const QuantizationFormat: Readonly<{
  INT8: QuantizationFormatMember<'INT8', 0>;
  INT8_PER_CHANNEL: QuantizationFormatMember<'INT8_PER_CHANNEL', 1>;
  INT4: QuantizationFormatMember<'INT4', 2>;
  GPTQ: QuantizationFormatMember<'GPTQ', 3>;
  AWQ: QuantizationFormatMember<'AWQ', 4>;
  EETQ: QuantizationFormatMember<'EETQ', 5>;
  MATMULNBITS: QuantizationFormatMember<'MATMULNBITS', 6>;
  Q2_K: QuantizationFormatMember<'Q2_K', 7>;
  Q3_K: QuantizationFormatMember<'Q3_K', 8>;
  Q4_K: QuantizationFormatMember<'Q4_K', 9>;
  Q5_K: QuantizationFormatMember<'Q5_K', 10>;
  Q6_K: QuantizationFormatMember<'Q6_K', 11>;
  HQQ: QuantizationFormatMember<'HQQ', 12>;
  EXL2: QuantizationFormatMember<'EXL2', 13>;
  EXL3: QuantizationFormatMember<'EXL3', 14>;
  NF4: QuantizationFormatMember<'NF4', 15>;
  IQ4_NL: QuantizationFormatMember<'IQ4_NL', 16>;
  BINARY: QuantizationFormatMember<'BINARY', 17>;
  TERNARY: QuantizationFormatMember<'TERNARY', 18>;
  TQ1_0: QuantizationFormatMember<'TQ1_0', 19>;
  TQ2_0: QuantizationFormatMember<'TQ2_0', 20>;
  BITNET: QuantizationFormatMember<'BITNET', 21>;
  PARETOQ: QuantizationFormatMember<'PARETOQ', 22>;
  TEQUILA: QuantizationFormatMember<'TEQUILA', 23>;
  STQ1_0: QuantizationFormatMember<'STQ1_0', 24>;
  IQ1_S: QuantizationFormatMember<'IQ1_S', 25>;
  AQLM: QuantizationFormatMember<'AQLM', 26>;
  QUIP_SHARP: QuantizationFormatMember<'QUIP_SHARP', 27>;
  SPQR: QuantizationFormatMember<'SPQR', 28>;
  SQUEEZELLM: QuantizationFormatMember<'SQUEEZELLM', 29>;
  LOG: QuantizationFormatMember<'LOG', 30>;
  FP6_LLM: QuantizationFormatMember<'FP6_LLM', 31>;
  FP8_E4M3: QuantizationFormatMember<'FP8_E4M3', 32>;
  MXFP4: QuantizationFormatMember<'MXFP4', 33>;
  MXFP6: QuantizationFormatMember<'MXFP6', 34>;
  NVFP4: QuantizationFormatMember<'NVFP4', 35>;
  QUAROT: QuantizationFormatMember<'QUAROT', 36>;
  SMOOTHQUANT: QuantizationFormatMember<'SMOOTHQUANT', 37>;
  TILED_FLOAT: QuantizationFormatMember<'TILED_FLOAT', 38>;
  COLUMN_MAJOR: QuantizationFormatMember<'COLUMN_MAJOR', 39>;
  ORT_MATMULNBITS_INT2: QuantizationFormatMember<'ORT_MATMULNBITS_INT2', 40>;
  ORT_MATMULNBITS_INT4: QuantizationFormatMember<'ORT_MATMULNBITS_INT4', 41>;
  ORT_MATMULNBITS_INT8: QuantizationFormatMember<'ORT_MATMULNBITS_INT8', 42>;
}>;
export type QuantizationFormat = (typeof QuantizationFormat)[keyof typeof QuantizationFormat];

/** All formats in catalogue order. */
export function quantizationFormats(): QuantizationFormat[];
/** The stable wire name ('int4', 'ort_matmulnbits_int4'). */
export function quantizationFormatName(format: QuantizationFormat): string;
/** Case-sensitive; throws OnnxLightError (OL_INVALID_ARGUMENT) for unknown names. */
export function parseQuantizationFormat(name: string): QuantizationFormat;

/** Shared type parameters of a run (the wire header). */
export interface QuantizationLayout {
  count: number;
  method: 'affine' | 'codebook' | 'cast';
  bits: number;
  signedCodes: boolean;
  books: number;
  entries: number;
  vectorSize: number;
  base3: boolean;
  castType: 'float32' | 'float64' | 'float16' | 'bfloat16';
}

/** Numerical parameters of one block (a copy). */
export interface QuantizationBlock {
  scale: number;
  zeroPoint: number;
  offset: number;
  codebook: number[];
}

/** A copy of one run of a plan. */
export interface QuantizationRun {
  layout: QuantizationLayout;
  blocks: QuantizationBlock[];
  /** A copy of block j. */
  block(j: number): QuantizationBlock;
  /** Replaces block j of this run copy with a copy of block. */
  setBlock(j: number, block: QuantizationBlock): void;
}

/** A plan held in wasm memory; getters return copies. */
export class QuantizationPlan {
  private constructor();
  /** Assignable with a QuantizationFormat member only (numbers and strings throw); blocks are not reconfigured. */
  format: QuantizationFormat;
  readonly runCount: number;
  /** Copies of every run; assigning replaces all runs with copies (checked when encoding). */
  get runs(): QuantizationRun[];
  set runs(runs: ReadonlyArray<{ layout: QuantizationLayout; blocks: ReadonlyArray<QuantizationBlock> }>);
  readonly permutationSize: number;
  /**
   * Width of the transformed row vectors (0: none). Assigning checks it: an
   * integer that divides the plan's element count (ORT plans take none);
   * matrices that no longer hold transformSize^2 values are dropped.
   */
  transformSize: number;
  readonly outlierCount: number;
  /** A copy of the permutation (empty = identity); assigning copies the indices in. */
  get permutation(): number[];
  set permutation(indices: ArrayLike<number | bigint>);
  /**
   * Copies of the forward / inverse transforms (row-major). Assigning copies
   * exactly transformSize^2 finite numbers in (set transformSize first);
   * that they are inverse of each other is checked when encoding.
   */
  get forward(): number[];
  set forward(values: ArrayLike<number>);
  get inverse(): number[];
  set inverse(values: ArrayLike<number>);
  /** Sets transformSize and copies both matrices at once (checked when encoding). */
  setTransform(size: number, forward: ArrayLike<number>, inverse: ArrayLike<number>): void;
  /** A copy of the outlier indices; assigning copies the indices in. */
  get outliers(): number[];
  set outliers(indices: ArrayLike<number | bigint>);
  /**
   * A live view of [K, N] for ORT MatMulNBits plans, else []: reading an
   * element reads the plan and `plan.matrixShape[0] = 64` changes it (checked:
   * a non-negative integer, index within the shape). Assigning the property
   * copies the dims; blocks are not rebuilt (mismatches fail when encoding).
   * Use [...plan.matrixShape] for a plain array.
   */
  get matrixShape(): number[];
  set matrixShape(shape: ArrayLike<number>);
  /** A copy of run i. */
  run(i: number): QuantizationRun;
  /** Replaces run i with a copy of run. */
  setRun(i: number, run: { layout: QuantizationLayout; blocks: ReadonlyArray<QuantizationBlock> }): void;
  /** Sets the scale of every block of run i (block order). */
  setScales(i: number, scales: ArrayLike<number>): void;
  /** Sets the zero point of every block of run i (block order). */
  setZeroPoints(i: number, zeroPoints: ArrayLike<number>): void;
  /** Frees the plan now (else the garbage collector does). */
  dispose(): void;
}

/** A self-contained encoded value: serialized EncodedValueProto bytes and its logical type. */
export class EncodedValue {
  private constructor();
  readonly bytes: Uint8Array;
  readonly type: 'float32' | 'float64' | 'float16' | 'bfloat16';
  readonly dims: number[];
  /** The catalogue profile for quantization layouts; null for other encodings. */
  readonly format: QuantizationFormat | null;
}

/** The storage descriptor of a portable plan: serialized StructTypeProto bytes. */
export function makeQuantizationType(plan: QuantizationPlan): Uint8Array;
/** A portable plan of count elements in blocks of blockSize (default 128). */
export function makeQuantizationPlan(format: QuantizationFormat, count: number, options?: { blockSize?: number }): QuantizationPlan;
/** An ORT MatMulNBits plan for a [k, n] weight (blockSize a power of two >= 16, default 128). */
export function makeMatMulNBitsPlan(format: QuantizationFormat, k: number, n: number, options?: { blockSize?: number }): QuantizationPlan;
/** Sets the plan's block scales from a tensor (the Quantize operator's calibration rule). */
export function calibrateQuantizationPlan(plan: QuantizationPlan, tensor: Tensor): void;
/** Encodes a float tensor with the plan's parameters unchanged. */
export function quantizeTensor(tensor: Tensor, plan: QuantizationPlan, options?: { name?: string }): EncodedValue;
/**
 * Decodes an encoded value. model (ModelProto bytes, or an object once the
 * protobuf modules are loaded) resolves struct_type.type_ref and the shared
 * parameter set of compact bytes; a SharedQuantizedValue uses the set it retains.
 */
export function dequantizeTensor(
  encoded: EncodedValue | SharedQuantizedValue | Uint8Array,
  options?: { model?: Uint8Array | ArrayBuffer | import('onnx-light/proto').ModelProto },
): Tensor;

/**
 * A compact encoded value (parameter_ref set) retaining its model's shared
 * quantization parameter set, so it outlives the model, session and run.
 * Session outputs of compact values are SharedQuantizedValue objects.
 */
export class SharedQuantizedValue {
  private constructor();
  /** EncodedValueProto.parameter_ref: the parameter set's name. */
  readonly parameterRef: string;
  readonly type: 'float32' | 'float64' | 'float16' | 'bfloat16';
  readonly dims: number[];
  readonly format: QuantizationFormat;
  /** A copy of the compact payload: reserved byte, outlier values, codes. */
  readonly rawData: Uint8Array;
  /** An independent snapshot of the compact EncodedValueProto (serialized). */
  readonly encoded: Uint8Array;
  dispose(): void;
}

/** Numerical parameters of a shared set: the names of Quantize's optional inputs. */
export interface QuantizationParameters {
  /** Required: shared mode never calibrates. A number is a float32 scalar. */
  scales: Tensor | number | Float32Array | Float64Array;
  zeroPoints?: Tensor | number | Float32Array | Float64Array;
  offsets?: Tensor | number | Float32Array | Float64Array;
  codebooks?: Tensor | Float32Array | Float64Array;
  permutation?: Tensor | BigInt64Array;
  forward?: Tensor;
  inverse?: Tensor;
  outliers?: Tensor | BigInt64Array;
}

/**
 * add_quantization_parameters: declares the set `name` in the model's root
 * quantization_annotation catalogue (the model object is changed only after
 * validation). Resolves to the compact storage type for compact graph outputs.
 */
export function addQuantizationParameters(
  model: import('onnx-light/proto').ModelProto,
  name: string,
  storageType: Uint8Array | import('onnx-light/proto').StructTypeProto,
  logicalType: Uint8Array | import('onnx-light/proto').TypeProto | { type: 'float32' | 'float64' | 'float16' | 'bfloat16'; dims: number[] },
  parameters: QuantizationParameters,
): Promise<import('onnx-light/proto').StructTypeProto>;
/** quantize_tensor_shared: encodes with the fixed parameters of the model's set `name`. */
export function quantizeTensorShared(
  tensor: Tensor,
  model: Uint8Array | ArrayBuffer | import('onnx-light/proto').ModelProto,
  name: string,
  options?: { valueName?: string },
): SharedQuantizedValue;
/** materialize_quantized_value: a self-contained EncodedValue (no parameter_ref). */
export function materializeQuantizedValue(
  shared: SharedQuantizedValue | Uint8Array,
  options?: { model?: Uint8Array | ArrayBuffer | import('onnx-light/proto').ModelProto },
): EncodedValue;

/**
 * quantize_tensor_proto: a TensorProto object ('onnx-light/proto') encoded with
 * the plan's parameters unchanged. Async: the protobuf modules load on first use.
 */
export function quantizeTensorProto(tensor: import('onnx-light/proto').TensorProto, plan: QuantizationPlan): Promise<import('onnx-light/proto').EncodedValueProto>;
/** dequantize_tensor_proto: an EncodedValueProto object decoded into a TensorProto object (raw_data). */
export function dequantizeTensorProto(
  encoded: import('onnx-light/proto').EncodedValueProto,
  options?: { model?: import('onnx-light/proto').ModelProto | Uint8Array | ArrayBuffer },
): Promise<import('onnx-light/proto').TensorProto>;

/** Initializers and attributes of a com.microsoft::MatMulNBits node. */
export interface MatMulNBitsInputs {
  B: Tensor<'uint8'>;
  scales: Tensor;
  /** Absent when every zero point is the midpoint 2^(bits-1). */
  zero_points?: Tensor;
  k: number;
  n: number;
  bits: number;
  blockSize: number;
}
export function exportMatMulNBitsInputs(encoded: EncodedValue | Uint8Array, options?: { model?: Uint8Array | ArrayBuffer }): MatMulNBitsInputs;

type Schemas = typeof import('onnx-light/proto');
/** A message object or its init shape (what @bufbuild/protobuf's create takes), or its serialized bytes. */
export type MessageInput<K extends keyof Schemas> = Schemas[K] extends import('@bufbuild/protobuf').DescMessage
  ? import('@bufbuild/protobuf').MessageInitShape<Schemas[K]> | Uint8Array
  : never;

/**
 * Builds or edits a model (seed 002's GraphBuilder); the behaviour is the C
 * builder's (ol_builder_*). Every part is kept as its message, unchanged:
 * structured initializers stay encoded, external data stays external, cache
 * initializers and persistent bindings are kept. Graph inputs, initializers of
 * every kind and node outputs share one namespace: a clash throws an
 * OnnxLightError ('OL_INVALID_ARGUMENT') naming both holders.
 */
export class GraphBuilder {
  /** Loads the wasm module and the protobuf schema; needed before `new GraphBuilder`. */
  static load(): Promise<void>;
  /** Loads, then `new GraphBuilder(options)`. */
  static create(options?: GraphBuilderOptions): Promise<GraphBuilder>;
  /** Imports a model (bytes, a path or URL, or a ModelProto object). */
  static fromModel(model: ModelSource): Promise<GraphBuilder>;
  /** An empty model (defaults: irVersion 10, opset 18 of the default domain). Throws OL_FAILED_PRECONDITION before load(). */
  constructor(options?: GraphBuilderOptions);
  /** A tensor ValueInfoProto init object; dims are numbers (dim_value) or strings (dim_param). */
  static tensorInfo(name: string, type: string, dims?: (number | string)[]): MessageInput<'ValueInfoProtoSchema'>;

  addInput(valueInfo: MessageInput<'ValueInfoProtoSchema'>): this;
  addOutput(valueInfo: MessageInput<'ValueInfoProtoSchema'>): this;
  addNode(node: MessageInput<'NodeProtoSchema'>): this;
  /** A node placed at position index of the node list. */
  insertNode(index: number, node: MessageInput<'NodeProtoSchema'>): this;
  /** Replaces the node at position index (same position; it may reuse the old node's output names). */
  replaceNode(index: number, node: MessageInput<'NodeProtoSchema'>): this;
  addInitializer(tensor: MessageInput<'TensorProtoSchema'>): this;
  /** Stores an encoded value unchanged; returns its name. */
  makeStructuredInitializer(value: EncodedValue | MessageInput<'EncodedValueProtoSchema'>): string;
  addCacheInitializer(cache: MessageInput<'PagedCacheProtoSchema'>): this;
  /** A model-level struct type (nonzero typeId, unique). */
  addStructType(type: MessageInput<'StructTypeProtoSchema'>): this;
  addFunction(fn: MessageInput<'FunctionProtoSchema'>): this;
  addPersistentBinding(inputName: string, outputName: string): this;
  /** An opset import; a domain is imported once, with a positive version. */
  addOpsetImport(opset: { domain?: string; version: number | bigint }): this;

  removeInput(name: string): this;
  removeOutput(name: string): this;
  /** By node name, or for an unnamed node by one of its outputs. */
  removeNode(nameOrOutput: string): this;
  /** An initializer of any kind. */
  removeInitializer(name: string): this;
  removePersistentBinding(inputName: string): this;
  removeStructType(typeId: number | bigint): this;
  removeFunction(name: string): this;
  removeOpsetImport(domain: string): this;

  readonly inputs: import('onnx-light/proto').ValueInfoProto[];
  readonly outputs: import('onnx-light/proto').ValueInfoProto[];
  readonly nodes: import('onnx-light/proto').NodeProto[];
  readonly initializers: import('onnx-light/proto').TensorProto[];
  readonly structuredInitializers: import('onnx-light/proto').EncodedValueProto[];
  readonly cacheInitializers: import('onnx-light/proto').PagedCacheProto[];
  readonly persistentBindings: import('onnx-light/proto').PersistentBindingProto[];
  readonly structTypes: import('onnx-light/proto').StructTypeProto[];
  readonly functions: import('onnx-light/proto').FunctionProto[];
  readonly valueInfos: import('onnx-light/proto').ValueInfoProto[];
  readonly opsetImports: import('onnx-light/proto').OperatorSetIdProto[];

  /** Shape inference kept up to date incrementally (only what edits affect is re-inferred); returns the number of nodes (re)inferred. */
  infer(): number;
  /** The inferred ValueInfoProto of a graph input, initializer or node output (inferring first when edits are pending); undefined for an unknown name. */
  valueInfo(name: string): import('onnx-light/proto').ValueInfoProto | undefined;

  /** Removes initializers equal to an earlier one (structured: resolved physical type, payload and metadata compared); returns the count. */
  dedupInitializers(): number;
  /** ToModel as bytes: the struct-type catalogue compacted to what is referenced, ids renumbered 1..n, references remapped. */
  toBytes(): Uint8Array;
  /** ToModel as a ModelProto object. */
  toModel(): import('onnx-light/proto').ModelProto;
  /** ToGraph: throws OL_FAILED_PRECONDITION when a part uses a model-level struct_type.type_ref. */
  toGraph(): import('onnx-light/proto').GraphProto;
  dispose(): void;
}

export interface GraphBuilderOptions {
  irVersion?: number;
  opsetImports?: { domain?: string; version: number }[];
}
