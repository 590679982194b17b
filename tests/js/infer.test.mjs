// inferShapes(model): model bytes with value_info filled by the C shape
// inference, for every accepted model input, on the shipped decoder.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';

import { fromBinary, toBinary } from '@bufbuild/protobuf';
import { InferenceSession, OnnxLightError, inferShapes, parseModel } from 'onnx-light';
import { ModelProtoSchema } from 'onnx-light/proto';

import { FORTUNES, fortunesBytes } from './models.mjs';

/** "float32[batch,3]"-style text of a TypeProto's tensor type. */
function typeText(type) {
  assert.equal(type.value.case, 'tensorType');
  const t = type.value.value;
  const names = { 1: 'float32', 7: 'int64', 9: 'bool', 10: 'float16' };
  const elem = names[t.elemType] ?? `dtype${t.elemType}`;
  if (!t.shape) return elem;
  const dims = t.shape.dim.map((d) => (d.value.case === 'dimValue' ? String(d.value.value) : d.value.case === 'dimParam' ? d.value.value : '?'));
  return `${elem}[${dims.join(',')}]`;
}

function valueInfo(model, name) {
  const vi = model.graph.valueInfo.find((v) => v.name === name);
  return vi ? typeText(vi.type) : undefined;
}

describe('inferShapes', () => {
  test('the fortunes decoder: symbolic dims carried to logits', async () => {
    const source = fortunesBytes();
    const proto = fromBinary(ModelProtoSchema, source);
    const logits = proto.graph.output.find((o) => o.name === 'logits');
    // what the model declares
    assert.equal(typeText(logits.type), 'float32[batch_size,sequence_length,256]');
    // remove the declaration: inference must find it again
    logits.type = undefined;
    const inferred = fromBinary(ModelProtoSchema, await inferShapes(toBinary(ModelProtoSchema, proto)));
    const out = inferred.graph.output.find((o) => o.name === 'logits');
    assert.equal(typeText(out.type), 'float32[batch_size,sequence_length,256]');
    assert.ok(inferred.graph.valueInfo.length > 500, `${inferred.graph.valueInfo.length} value_info entries`);
    assert.equal(valueInfo(inferred, '/Gather_2_output_0'), 'float32[batch_size,sequence_length,128]');
    assert.equal(valueInfo(inferred, '/Reshape_output_0'), 'float32[batch_size,sequence_length,4,32]');
    assert.equal(valueInfo(inferred, '/Transpose_output_0'), 'float32[batch_size,4,sequence_length,32]');
    // the source bytes are unchanged and the result still runs
    assert.deepEqual(fortunesBytes(), source);
    const session = await InferenceSession.create(await inferShapes(FORTUNES));
    assert.deepEqual(session.outputMetadata[0].shape, ['batch_size', 'sequence_length', 256]);
    await session.release();
  });

  test('accepts bytes, ArrayBuffer, a path and a ModelProto object', async () => {
    const bytes = await parseModel(`<ir_version: 10, opset_import: ["" : 18]>
g (float[N,3] x, float[3] b) => (float[N,3] y) { s = Add(x, b)
 y = Relu(s) }`);
    const fromBytes = fromBinary(ModelProtoSchema, await inferShapes(bytes));
    assert.equal(valueInfo(fromBytes, 's'), 'float32[N,3]');
    const copy = bytes.slice();
    const fromBuffer = fromBinary(ModelProtoSchema, await inferShapes(copy.buffer));
    assert.equal(valueInfo(fromBuffer, 's'), 'float32[N,3]');
    const fromProto = fromBinary(ModelProtoSchema, await inferShapes(fromBinary(ModelProtoSchema, bytes)));
    assert.equal(valueInfo(fromProto, 's'), 'float32[N,3]');
    const fromPath = await inferShapes(FORTUNES);
    assert.ok(fromPath instanceof Uint8Array && fromPath.byteLength > 0);
  });

  test('an unsupported element type fails at session creation, before any run', async () => {
    const bytes = await parseModel(`<ir_version: 10, opset_import: ["" : 18]>
g (float[4] x) => (int64[4] y) { i = Cast <to = 7> (x)
 [root] y = Sqrt(i) }`);
    await assert.rejects(InferenceSession.create(bytes), (e) => {
      assert.ok(e instanceof OnnxLightError);
      assert.equal(e.code, 'OL_NOT_IMPLEMENTED');
      assert.match(e.message, /Sqrt/);
      assert.match(e.message, /'root'/);
      assert.match(e.message, /int64/);
      return true;
    });
  });

  test('a contradiction names the value and the node', async () => {
    const bytes = await parseModel(`<ir_version: 10, opset_import: ["" : 18]>
g (float[2,3] x) => (float[2,4] y) { [relu] y = Relu(x) }`);
    await assert.rejects(inferShapes(bytes), (e) => {
      assert.ok(e instanceof OnnxLightError);
      assert.equal(e.code, 'OL_INVALID_MODEL');
      assert.match(e.message, /'relu'/);
      assert.match(e.message, /'y'/);
      return true;
    });
    await assert.rejects(inferShapes(42), (e) => e instanceof OnnxLightError && e.code === 'OL_INVALID_ARGUMENT');
  });
});
