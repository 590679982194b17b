// The model's bytes: from the Cache API when this browser has them, else
// downloaded once (streamed, so progress can be shown) and put there. The
// service worker (sw.js) answers from the same caches, so the page keeps
// working offline.
const MODELS = 'onnx-light-models';

/**
 * @param {string} url
 * @param {(loaded: number, total: number) => void} onProgress
 * @returns {Promise<{ bytes: Uint8Array, fromCache: boolean }>}
 */
export async function loadModel(url, onProgress) {
  const store = await caches.open(MODELS);
  const cached = await store.match(url);
  const response = cached ?? (await fetch(url));
  if (!response.ok) throw new Error(`fetching ${url} failed: HTTP ${response.status}`);
  const total = Number(response.headers.get('content-length')) || 0;
  const chunks = [];
  let loaded = 0;
  onProgress(0, total);
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onProgress(loaded, Math.max(total, loaded));
  }
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  if (!cached) {
    await store.put(url, new Response(bytes, { headers: { 'content-type': 'application/octet-stream', 'content-length': String(loaded) } }));
  }
  return { bytes, fromCache: Boolean(cached) };
}
