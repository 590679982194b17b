// The model directory's files: from the Cache API when this browser has
// them, else downloaded once (streamed, so progress can be shown) and put
// there. The service worker (sw.js) answers from the same caches, so the
// page keeps working offline.
const MODELS = 'onnx-light-models';

/** A response's body read to its end, reporting every chunk's size. */
async function readBody(response, onChunk) {
  const chunks = [];
  const reader = response.body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    onChunk(value.byteLength);
  }
  return new Blob(chunks);
}

/**
 * The files `paths` of the directory at `base`, all at once, with one
 * progress over their bytes.
 * @param {string} base the directory's URL (ends with '/')
 * @param {string[]} paths
 * @param {(loaded: number, total: number) => void} onProgress
 * @returns {Promise<{ files: Map<string, Blob>, bytes: number, fromCache: boolean }>}
 */
export async function loadDirectory(base, paths, onProgress) {
  const store = await caches.open(MODELS);
  const sources = await Promise.all(paths.map(async (path) => {
    const url = new URL(path, base).href;
    const cached = await store.match(url);
    const response = cached ?? (await fetch(url));
    if (!response.ok) throw new Error(`fetching ${url} failed: HTTP ${response.status}`);
    return { path, url, response, cached: Boolean(cached), total: Number(response.headers.get('content-length')) || 0 };
  }));
  let total = sources.reduce((sum, s) => sum + s.total, 0);
  let loaded = 0;
  onProgress(0, total);
  const blobs = await Promise.all(sources.map((s) => readBody(s.response, (n) => {
    loaded += n;
    total = Math.max(total, loaded);
    onProgress(loaded, total);
  })));
  const files = new Map();
  await Promise.all(sources.map(async (s, i) => {
    files.set(s.path, blobs[i]);
    if (!s.cached) {
      await store.put(s.url, new Response(blobs[i], { headers: { 'content-type': 'application/octet-stream', 'content-length': String(blobs[i].size) } }));
    }
  }));
  return { files, bytes: loaded, fromCache: sources.every((s) => s.cached) };
}
