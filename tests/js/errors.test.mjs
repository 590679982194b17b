// Every error path raises an OnnxLightError with the C status name and a
// message naming the problem, and the session keeps working afterwards.
import assert from 'node:assert/strict';
import { before, describe, test } from 'node:test';

import { InferenceSession, OnnxLightError, Tensor } from 'onnx-light';

import { fortunesBytes, identityModel, unknownOpModel } from './models.mjs';

/** assert.rejects matcher: code and a message matching re. */
const fails = (code, re) => (e) => {
  assert.ok(e instanceof OnnxLightError, `expected an OnnxLightError, got ${e}`);
  assert.equal(e.code, code, e.message);
  assert.match(e.message, re);
  return true;
};

describe('loading errors', () => {
  test('bad bytes', async () => {
    await assert.rejects(InferenceSession.create(new Uint8Array([0xff, 0xff, 0xff, 0x0f, 0x42])), fails('OL_INVALID_MODEL', /./));
    await assert.rejects(InferenceSession.create(new TextEncoder().encode('not an onnx model at all')), fails('OL_INVALID_MODEL', /./));
  });

  test('a truncated file', async () => {
    const bytes = fortunesBytes();
    await assert.rejects(InferenceSession.create(bytes.subarray(0, bytes.length >> 1)), fails('OL_INVALID_MODEL', /./));
  });

  test('empty bytes', async () => {
    await assert.rejects(InferenceSession.create(new Uint8Array(0)), (e) => e instanceof OnnxLightError);
  });

  test('a missing file', async () => {
    await assert.rejects(InferenceSession.create('/nonexistent/model.onnx'), /ENOENT/);
  });

  test('an unknown operator names op type, domain, version and node', async () => {
    await assert.rejects(InferenceSession.create(unknownOpModel()), fails('OL_NOT_IMPLEMENTED', /FrobnicateWidgets.*17.*frob|frob.*FrobnicateWidgets/));
  });

  test('not a model source', async () => {
    await assert.rejects(InferenceSession.create(42), fails('OL_INVALID_ARGUMENT', /model bytes/));
  });
});

describe('run errors leave the session usable', () => {
  let session;
  before(async () => {
    session = await InferenceSession.create(identityModel());
  });

  const good = () => ({ x: new Tensor('float32', [1, 2, 3], [3]) });

  async function stillWorks() {
    const { y } = await session.run(good());
    assert.deepEqual([...y.data], [1, 2, 3]);
    y.dispose();
  }

  const cases = {
    'wrong feed dtype': [{ x: new Tensor('int32', [1, 2, 3], [3]) }, 'OL_INVALID_ARGUMENT', /'x'.*(float32|int32)|(float32|int32).*'x'/],
    'wrong feed rank': [{ x: new Tensor('float32', [1, 2, 3, 4], [2, 2]) }, 'OL_INVALID_ARGUMENT', /'x'/],
    'missing feed': [{}, 'OL_INVALID_ARGUMENT', /missing input 'x'/],
    'unknown feed name': [{ ...good(), nope: new Tensor('float32', [1], [1]) }, 'OL_INVALID_ARGUMENT', /unknown input name 'nope'/],
    'a feed that is not a Tensor': [{ x: new Float32Array(3) }, 'OL_INVALID_ARGUMENT', /'x' is not a Tensor/],
  };
  for (const [name, [feeds, code, re]] of Object.entries(cases)) {
    test(name, async () => {
      await assert.rejects(session.run(feeds), fails(code, re));
      await stillWorks();
    });
  }

  test('unknown output name', async () => {
    await assert.rejects(session.run(good(), ['nope']), fails('OL_INVALID_ARGUMENT', /unknown output name 'nope'/));
    await stillWorks();
  });

  test('a disposed feed', async () => {
    const x = Tensor.alloc('float32', [3]);
    x.dispose();
    await assert.rejects(session.run({ x }), fails('OL_FAILED_PRECONDITION', /disposed/));
    await stillWorks();
  });

  test('feeds that are not an object', async () => {
    await assert.rejects(session.run(null), fails('OL_INVALID_ARGUMENT', /feeds/));
    await stillWorks();
  });
});
