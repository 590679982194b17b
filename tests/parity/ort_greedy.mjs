// The oracle: greedy decoding with onnxruntime-node, present.* fed back as past_key_values.*.
import ort from 'onnxruntime-node';

export async function greedyWithOrt(modelPath, prompt, steps) {
  const session = await ort.InferenceSession.create(modelPath);
  const feeds = {};
  for (const name of session.inputNames) {
    if (!name.startsWith('past_key_values.')) continue;
    const meta = session.inputMetadata.find?.((m) => m.name === name);
    const shape = meta?.shape ?? [];
    const heads = typeof shape[1] === 'number' ? shape[1] : 2;
    const head = typeof shape[3] === 'number' ? shape[3] : 32;
    feeds[name] = new ort.Tensor('float32', new Float32Array(0), [1, heads, 0, head]);
  }
  const tokens = [...prompt];
  let past = 0;
  const generated = [];
  for (let step = 0; step < steps; step++) {
    const seq = step === 0 ? prompt.length : 1;
    const ids = tokens.slice(tokens.length - seq).map(BigInt);
    feeds.input_ids = new ort.Tensor('int64', BigInt64Array.from(ids), [1, seq]);
    feeds.attention_mask = new ort.Tensor('int64', new BigInt64Array(past + seq).fill(1n), [1, past + seq]);
    feeds.position_ids = new ort.Tensor('int64', BigInt64Array.from({ length: seq }, (_, j) => BigInt(past + j)), [1, seq]);
    const out = await session.run(feeds);
    const logits = out.logits;
    const vocab = logits.dims[2];
    const last = logits.data.subarray((logits.dims[1] - 1) * vocab, logits.dims[1] * vocab);
    let best = 0;
    for (let v = 1; v < vocab; v++) if (last[v] > last[best]) best = v;
    tokens.push(best);
    generated.push(best);
    for (const name of Object.keys(feeds)) {
      if (name.startsWith('past_key_values.')) feeds[name] = out[`present.${name.slice('past_key_values.'.length)}`];
    }
    past += seq;
  }
  await session.release?.();
  return generated;
}
