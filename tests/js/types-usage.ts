// Type-checked (never run) by `tsc -p js/tsconfig.json` in npm test: the
// declarations describe the API as the tests use it, through the package's
// exports map, including the generated proto types.
import { create, toBinary } from '@bufbuild/protobuf';
import {
  InferenceSession,
  OnnxLightError,
  Tensor,
  init,
  memoryStats,
  parseModel,
  printModel,
  resetPeakMemory,
  version,
  type LoadOptions,
  type MemoryStats,
} from 'onnx-light';
import { ModelProtoSchema, type ModelProto } from 'onnx-light/proto';

export async function usage(bytes: Uint8Array): Promise<number> {
  const options: LoadOptions = { wasmUrl: new URL('https://example.invalid/onnx_light.wasm') };
  await init(options);
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
  const model: ModelProto = create(ModelProtoSchema, { irVersion: 10n });
  const wire: Uint8Array = toBinary(ModelProtoSchema, model);
  await session.release();
  void ids64, strings, offset, stats, text, wire, version;
  return model.graph?.persistentBindings.length ?? 0;
}
