// Module worker for the browser tests: the same greedy run as the page, but
// inside a Web Worker (where the generation loop is meant to live).
import { InferenceSession, Tensor } from '/dist/browser.js';
import { greedyDecode } from '/dist/greedy.js';

self.onmessage = async ({ data: { steps, prompt } }) => {
  try {
    const session = await InferenceSession.create('/models/fortunes-byte-0.8M.onnx');
    const promptIds = [...new TextEncoder().encode(prompt)];
    const tokens = [];
    for await (const t of greedyDecode({ session, Tensor, promptIds, maxNewTokens: steps })) tokens.push(t);
    await session.release();
    self.postMessage({ tokens });
  } catch (error) {
    self.postMessage({ error: `${error.name}: ${error.message}` });
  }
};
