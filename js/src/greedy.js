// Greedy decoding for decoder models exported with a KV cache (inputs
// input_ids, attention_mask, position_ids, past_key_values.N.key/value;
// outputs logits, present.N.key/value), feeding present.* back as
// past_key_values.* without copying. Used by the CLI and by the tests.
// It imports nothing and uses only onnxruntime-web's API, so the browser tests
// load it beside the bundle and the tests run it on onnxruntime-node too.

const PAST = 'past_key_values.';

/**
 * Yields one generated token id per step.
 * @param {{session: any, Tensor: any, promptIds: number[], maxNewTokens: number}} args
 * @returns {AsyncGenerator<number>}
 */
export async function* greedyDecode({ session, Tensor, promptIds, maxNewTokens }) {
  const pastNames = session.inputNames.filter((name) => name.startsWith(PAST));
  const presentName = (name) => `present.${name.slice(PAST.length)}`;
  const fetches = ['logits', ...pastNames.map(presentName)];
  const wants = new Set(session.inputNames);
  let past = Object.fromEntries(pastNames.map((name) => [name, emptyPast(session, Tensor, name)]));
  let ids = promptIds;
  let pastLength = 0;
  try {
    for (let step = 0; step < maxNewTokens; step++) {
      const n = ids.length;
      const feeds = { ...past, input_ids: int64(Tensor, ids, [1, n]) };
      if (wants.has('attention_mask')) {
        feeds.attention_mask = int64(Tensor, new Array(pastLength + n).fill(1), [1, pastLength + n]);
      }
      if (wants.has('position_ids')) {
        feeds.position_ids = int64(Tensor, ids.map((_, i) => pastLength + i), [1, n]);
      }
      const outputs = await session.run(feeds, fetches);
      const next = argmaxLastRow(outputs.logits);
      outputs.logits.dispose();
      for (const tensor of Object.values(past)) tensor.dispose();
      past = Object.fromEntries(pastNames.map((name) => [name, outputs[presentName(name)]]));
      pastLength += n;
      ids = [next];
      yield next;
    }
  } finally {
    for (const tensor of Object.values(past)) tensor.dispose();
  }
}

/** The first step's cache: dims from the metadata, batch 1, past length 0. */
function emptyPast(session, Tensor, name) {
  const meta = session.inputMetadata[session.inputNames.indexOf(name)];
  const dims = meta.shape.map((d, i) => (typeof d === 'number' && d >= 0 ? d : i === 0 ? 1 : 0));
  const Array_ = meta.type === 'float32' ? Float32Array : meta.type === 'float64' ? Float64Array : Uint16Array;
  return new Tensor(meta.type, new Array_(0), dims);
}

function int64(Tensor, values, dims) {
  return new Tensor('int64', BigInt64Array.from(values, (v) => BigInt(v)), dims);
}

function argmaxLastRow(logits) {
  const vocab = logits.dims[logits.dims.length - 1];
  const data = logits.data;
  const start = data.length - vocab;
  let best = 0;
  for (let i = 1; i < vocab; i++) if (data[start + i] > data[start + best]) best = i;
  return best;
}
