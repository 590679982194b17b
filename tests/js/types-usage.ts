// Type-checked (never run) by `tsc -p js/tsconfig.json` in npm test: the
// declarations describe the API as the tests use it, through the package's
// exports map, including the generated proto types.
import { create, toBinary } from '@bufbuild/protobuf';
import {
  InferenceSession,
  OnnxLightError,
  env,
  Tensor,
  inferShapes,
  init,
  memoryStats,
  simdLevel,
  parseModel,
  printModel,
  resetPeakMemory,
  version,
  type LoadOptions,
  type MemoryStats,
  PersistentValueState,
  bindCache,
  bindPersistent,
  createGenerator,
  emptyCaches,
  type GenerateStep,
  EncodedValue,
  type StructValue,
  type Value,
  type TokenGenerator,
  PagedCache,
  quantizePagedCache,
  toPagedModel,
  withPagedCacheInitializers,
  type GenerateResult,
  type PagedCacheBlock,
  type PagedCacheInput,
  type PagedFormatRule,
  type PagedFormats,
  fromPretrained,
  type ChatMessage,
  type PretrainedModel,
  type PretrainedProgress,
  type PretrainedResult,
  type TextTokenizer,
  GraphBuilder,
} from 'onnx-light';
import { ModelProtoSchema, type ModelProto } from 'onnx-light/proto';

export async function usage(bytes: Uint8Array): Promise<number> {
  const options: LoadOptions = { wasmUrl: new URL('https://example.invalid/onnx_light.wasm') };
  env.wasm.relaxedSimd = false;
  await init(options);
  const simd: 'relaxed' | 'simd128' = simdLevel();
  if (simd === 'relaxed') env.wasm.numThreads = 1;
  const session = await InferenceSession.create(bytes, { wasmBinary: new ArrayBuffer(8) });
  const names: readonly string[] = session.inputNames;
  for (const meta of session.inputMetadata) {
    if (meta.isTensor) {
      const type: Tensor.Type = meta.type;
      const dims: ReadonlyArray<number | string> = meta.shape;
      void type, dims;
    }
  }
  const x = Tensor.alloc('float32', [2, 3]);
  const view: Float32Array = x.data;
  view.set([1, 2, 3]);
  const ids = new Tensor('int64', BigInt64Array.of(1n, 2n), [1, 2]);
  const ids64: BigInt64Array = ids.data;
  const labels = new Tensor('string', ['a', 'b']);
  const strings: string[] = labels.data;
  const inferred = new Tensor(new Int32Array(4), [2, 2]);
  const offset: number | undefined = inferred.wasmByteOffset;
  const controller = new AbortController();
  const out = await session.run({ [names[0]]: x }, ['y'], { signal: controller.signal });
  const y = out.y;
  if (y instanceof Tensor) {
    const data = await y.getData();
    void data;
    y.dispose();
  }
  await session.run({ x }, { signal: controller.signal });
  try {
    await session.run({});
  } catch (e) {
    if (e instanceof OnnxLightError) {
      const code: OnnxLightError.Code = e.code;
      void code;
    }
  }
  const stats: MemoryStats = memoryStats();
  resetPeakMemory();
  const text: string = await printModel(await parseModel('<ir_version: 10> g () => () {}'));
  const withShapes: Uint8Array = await inferShapes(await inferShapes(bytes, { wasmUrl: 'x.wasm' }));
  const model: ModelProto = create(ModelProtoSchema, { irVersion: 10n });
  const wire: Uint8Array = toBinary(ModelProtoSchema, model);
  await session.release();
  void ids64, strings, offset, stats, text, withShapes, wire, version;
  await persistence(bytes, model);
  return model.graph?.persistentBindings.length ?? 0;
}

export async function persistence(bytes: Uint8Array, proto: ModelProto): Promise<bigint> {
  const boundBytes: Uint8Array = await bindPersistent(bytes, { past: 'present' });
  const boundProto: ModelProto = await bindPersistent(proto, { past: 'present' });
  const cached: Uint8Array = await bindCache('model.onnx');
  const caches: Record<string, Tensor> = await emptyCaches(cached, { batch: 1 });
  const state = await PersistentValueState.create(boundBytes, { past: { data: new Float32Array(2), dims: [2] } }, {
    persistentTensorInitialCapacity: 0,
    events: true,
  });
  const out = await state.run({ delta: new Tensor('float32', [1, 1], [2]) }, { signal: new AbortController().signal });
  const same: boolean = state.values.past.wasmByteOffset === out.present.wasmByteOffset;
  const bytesCopied: number = state.events().reduce((sum, e) => sum + (e.kind === 'persistent_storage' ? e.storageAppendCopiedBytes : e.copiedBytes), 0);
  state.clearEvents();
  await state.reset({ past: new Tensor('float32', [0, 0], [2]) });
  await state.close();
  const session = await InferenceSession.create(cached);
  const ids = new Tensor('int64', BigInt64Array.of(1n), [1, 1]);
  const tokens: Tensor<'int64'> = await session.generate({ input_ids: ids, ...caches }, { maxNewTokens: 4, temperature: 0.5, seed: 1n, onToken: (t: bigint[]) => t.length > 0 });
  for await (const step of session.generateStream({ input_ids: ids, ...caches })) {
    const s: GenerateStep = step;
    void s;
  }
  const generator: TokenGenerator = await createGenerator(cached, { worker: true });
  const result = await generator.generate({ input_ids: ids, ...caches }, { signal: AbortSignal.timeout(1000) });
  await generator.close();
  void boundProto, same, bytesCopied;
  return tokens.data[0] + result.data[0];
}

export async function structuredState(bytes: Uint8Array, key: Tensor): Promise<number> {
  const state = await PersistentValueState.create<Value>(bytes, { cache: { key, blocks: [key] } });
  const out = await state.run({ tokens: { data: new BigInt64Array(1), dims: [1] } });
  const cache = out.next_cache as StructValue;
  const blocks = cache.blocks as Value[];
  const stored = state.values.cache;
  await state.close();
  return blocks.length + (stored instanceof EncodedValue ? stored.dims.length : 0);
}

// Shared quantization parameter sets.
export async function sharedQuantization(model: import('onnx-light/proto').ModelProto): Promise<number> {
  const ol = await import('onnx-light');
  const plan = ol.makeQuantizationPlan(ol.QuantizationFormat.INT4, 4, { blockSize: 4 });
  const compact: import('onnx-light/proto').StructTypeProto = await ol.addQuantizationParameters(
    model, 'common', ol.makeQuantizationType(plan), { type: 'float32', dims: [4] }, { scales: 0.5, zeroPoints: Float32Array.of(0) },
  );
  const shared: import('onnx-light').SharedQuantizedValue = ol.quantizeTensorShared(new Tensor('float32', [1, 2, 3, 4], [4]), model, 'common');
  const name: string = shared.parameterRef;
  const bytes: Uint8Array = shared.encoded;
  const standalone: import('onnx-light').EncodedValue = ol.materializeQuantizedValue(shared);
  const again: import('onnx-light').EncodedValue = ol.materializeQuantizedValue(bytes, { model });
  const restored: Tensor = ol.dequantizeTensor(shared);
  ol.dequantizeTensor(bytes, { model: toBinary((await import('onnx-light/proto')).ModelProtoSchema, model) });
  shared.dispose();
  void compact, name, standalone, again;
  return restored.size + shared.rawData.length;
}

// Plan fields assigned as the seed writes them; formats are enum members.
export async function planFields(): Promise<number> {
  const ol = await import('onnx-light');
  const plan = ol.makeQuantizationPlan(ol.QuantizationFormat.QUAROT, 4);
  const h = Math.SQRT1_2;
  plan.transformSize = 2;
  plan.forward = [h, h, h, -h];
  plan.inverse = Float64Array.of(h, h, h, -h);
  const format: import('onnx-light').QuantizationFormatMember = plan.format;
  const name: 'INT4' = ol.QuantizationFormat.INT4.name;
  const value: 2 = ol.QuantizationFormat.INT4.value;
  plan.format = ol.QuantizationFormat.INT4;
  // @ts-expect-error formats are enum members, not integers
  plan.format = 2;
  // @ts-expect-error nor look-alike objects
  ol.makeQuantizationPlan({ name: 'INT4', value: 2 }, 4);
  const ort = ol.makeMatMulNBitsPlan(ol.QuantizationFormat.ORT_MATMULNBITS_INT4, 32, 2, { blockSize: 16 });
  ort.matrixShape[0] = 64;
  const dims: number[] = [...ort.matrixShape];
  void format, name;
  return value + dims[0] + plan.forward.length;
}

// Paged KV caches.
export async function pagedCaches(bytes: Uint8Array): Promise<number> {
  const paged: Uint8Array = await toPagedModel(bytes, { blockSize: 16 });
  const formats: PagedFormatRule[] = [{ fromTokens: 0 }, { fromTokens: 64, key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 0.25, zeroPoint: 8 } }];
  const session = await InferenceSession.create(paged, { pagedFormats: formats, events: true });
  const caches: Record<string, PagedCache> = await emptyCaches<PagedCache>(session);
  const ids = new Tensor('int64', BigInt64Array.of(1n), [1, 1]);
  const { tokens, caches: after }: GenerateResult = await session.generate({ input_ids: ids, ...caches }, { maxNewTokens: 8, returnCaches: true });
  const copied: number = session.events().reduce((sum, e) => sum + (e.kind === 'paged_attention' ? e.copiedBytes + e.validatedPages : 0), 0);
  const cache = after['past_key_values.0'] as PagedCache;
  const saved: Uint8Array = cache.toBytes();
  const back: PagedCache = PagedCache.fromBytes(saved);
  const blocks: PagedCacheBlock[] = back.truncate(4).fork().compact(32).blocks;
  const plain: PagedCacheInput = { blocks: [{ start: 0, length: 1n, key: new Tensor('float32', new Float32Array(64), [1, 1, 1, 64]), value: { data: new Float32Array(64), dims: [1, 1, 1, 64] } }] };
  const fromPlain: PagedCache = PagedCache.from(plain);
  const quantized: PagedCache = quantizePagedCache(back, [0], { key: { type: 'int8', scale: 0.1 }, value: { type: 'float16' } });
  const calibrated: PagedCache = quantizePagedCache(back, [0], { key: { type: 'int8', scale: 'auto' }, value: { type: 'uint4', scale: 'auto' } });
  calibrated.dispose();
  const resumed: Uint8Array = await withPagedCacheInitializers(paged, { 'past_key_values.0': back, 'past_key_values.1': saved });
  const fn: PagedFormats = (key: Tensor, value: Tensor, pastLength: number) => (pastLength > 8 && key.size === value.size ? { key: { type: 'int4', scale: 'auto' } } : {});
  const state = await PersistentValueState.create<Value>(paged, { ...caches, 'past_key_values.1': plain }, { pagedFormats: fn });
  const generator = await createGenerator(paged, { worker: true, pagedFormats: formats });
  const fromWorker: GenerateResult = await generator.generate({ input_ids: ids, ...after }, { returnCaches: true });
  await generator.close();
  await state.close();
  cache.dispose();
  return tokens.size + copied + blocks.length + fromPlain.length + quantized.byteLength + resumed.length + back.blockCount + fromWorker.tokens.size;
}

// Model directories (Hugging Face layout).
export async function pretrained(dir: string, picked: Map<string, File>): Promise<string> {
  const model: PretrainedModel = await fromPretrained(dir, { dtype: 'q4', onProgress: (p: PretrainedProgress) => void (p.loaded / (p.total ?? 1)) });
  const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
  const rendered: string = await model.applyChatTemplate(messages);
  const { text, ids }: PretrainedResult = await model.generate(messages, { maxNewTokens: 8, temperature: 0.7, seed: 1, eosTokenId: [2, 3] });
  let streamed = '';
  for await (const piece of model.stream('Once', { temperature: 0 })) streamed += piece;
  const fromFiles = await fromPretrained(picked, { paged: false });
  const tokenizer: TextTokenizer = fromFiles.tokenizer;
  const back: string = tokenizer.decode(tokenizer.encode(text));
  await fromFiles.release();
  await model.release();
  return rendered + back + streamed + ids.length + String(model.paged) + model.modelFile;
}

// env.wasm: threads and the base URL of the run-time files (browsers)
env.wasm.numThreads = 2;
env.wasm.wasmPaths = '/vendor/onnx-light/';
env.wasm.wasmPaths = new URL('https://example.invalid/onnx-light/');

export async function builderUsage(model: ModelProto, encoded: EncodedValue): Promise<number> {
  const imported = await GraphBuilder.fromModel(model);
  const b: GraphBuilder = await GraphBuilder.create({ irVersion: 10, opsetImports: [{ domain: '', version: 21 }] });
  const name: string = b.makeStructuredInitializer(encoded);
  b.addInput(GraphBuilder.tensorInfo('X', 'float32', ['batch', 4]))
    .addNode({ opType: 'Relu', input: ['X'], output: ['Y'] })
    .addOutput(GraphBuilder.tensorInfo('Y', 'float32'))
    .addPersistentBinding('X', 'Y')
    .removePersistentBinding('X');
  const removed: number = b.dedupInitializers();
  const exported: ModelProto = b.toModel();
  const bytes: Uint8Array = imported.toBytes();
  const names: string[] = b.structuredInitializers.map((e) => e.name);
  b.dispose();
  return name.length + removed + exported.structTypes.length + bytes.length + names.length + b.toGraph().node.length;
}
