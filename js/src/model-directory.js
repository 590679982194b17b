// The files of a model directory, whatever holds them: a folder on disk
// (Node: a path or file: URL, platform part), an http(s) base URL (fetch), a
// FileSystemDirectoryHandle (browsers' directory picker, OPFS), or File /
// Blob objects by relative path (a Map, a plain object, or a FileList / File
// array from <input type="file" webkitdirectory>, keyed by webkitRelativePath). Every form reads the same way:
//   { label, read(path, onChunk(loaded, total)) -> Uint8Array | null (missing) }
import { OnnxLightError, invalidArgument } from './errors.js';
import { localDirectory } from './runtime.js';

/** Reads a stream to its end, reporting bytes as they arrive. */
async function readStream(stream, total, onChunk) {
  const reader = stream.getReader();
  const chunks = [];
  let loaded = 0;
  onChunk?.(0, total);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    loaded += value.byteLength;
    onChunk?.(loaded, total ?? loaded);
  }
  if (chunks.length === 1) return chunks[0];
  const bytes = new Uint8Array(loaded);
  let at = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, at);
    at += chunk.byteLength;
  }
  return bytes;
}

/** Bytes of a Blob / File, in chunks when it can stream. */
function readBlob(blob, onChunk) {
  if (typeof blob.stream === 'function') return readStream(blob.stream(), blob.size, onChunk);
  return blob.arrayBuffer().then((buffer) => {
    onChunk?.(buffer.byteLength, buffer.byteLength);
    return new Uint8Array(buffer);
  });
}

function urlDirectory(base) {
  const root = new URL(base);
  if (!root.pathname.endsWith('/')) root.pathname += '/';
  return {
    label: root.href,
    async read(path, onChunk) {
      const url = new URL(path, root);
      let response;
      try {
        response = await fetch(url);
      } catch (error) {
        throw new OnnxLightError('OL_NOT_FOUND', `fetching ${url} failed: ${error.message}`);
      }
      if (response.status === 404) return null;
      if (!response.ok) throw new OnnxLightError('OL_NOT_FOUND', `fetching ${url} failed: HTTP ${response.status}`);
      const length = Number(response.headers.get('content-length'));
      // a compressed response's length is not the body's
      const total = Number.isSafeInteger(length) && length > 0 && !response.headers.get('content-encoding') ? length : undefined;
      if (!response.body) return readBlob(await response.blob(), onChunk);
      return readStream(response.body, total, onChunk);
    },
  };
}

function isDirectoryHandle(source) {
  return source !== null && typeof source === 'object' && source.kind === 'directory' && typeof source.getFileHandle === 'function';
}

function handleDirectory(handle) {
  return {
    label: handle.name || 'the directory',
    async read(path, onChunk) {
      const parts = path.split('/');
      let dir = handle;
      try {
        for (const part of parts.slice(0, -1)) dir = await dir.getDirectoryHandle(part);
        const file = await (await dir.getFileHandle(parts[parts.length - 1])).getFile();
        return readBlob(file, onChunk);
      } catch (error) {
        if (error?.name === 'NotFoundError' || error?.name === 'TypeMismatchError') return null;
        throw error;
      }
    },
  };
}

/**
 * Files by relative path. Keys (or a File's webkitRelativePath) may start
 * with the picked folder's name ('model/config.json'): when every path
 * shares one first component and no config.json is at the top, it is dropped.
 */
function fileDirectory(source) {
  let entries;
  if (source instanceof Map) entries = [...source.entries()];
  else if (Array.isArray(source) || (typeof source.length === 'number' && typeof source.item === 'function')) {
    entries = Array.from(source, (file) => [file?.webkitRelativePath || file?.name, file]); // FileList, File[]
  } else entries = Object.entries(source);
  for (const [path, file] of entries) {
    if (typeof path !== 'string' || file === null || typeof file !== 'object' || typeof file.arrayBuffer !== 'function') {
      throw invalidArgument(`fromPretrained: the file map's entry '${path}' is not a File or Blob`);
    }
  }
  let files = new Map(entries.map(([path, file]) => [path.replace(/^\.?\//, ''), file]));
  const firsts = new Set([...files.keys()].map((p) => (p.includes('/') ? p.split('/')[0] : '')));
  let label = 'the files';
  if (!files.has('config.json') && firsts.size === 1 && !firsts.has('')) {
    label = [...firsts][0];
    files = new Map([...files].map(([path, file]) => [path.slice(label.length + 1), file]));
  }
  return {
    label,
    async read(path, onChunk) {
      const file = files.get(path);
      return file ? readBlob(file, onChunk) : null;
    },
  };
}

/** The reader of any accepted directory source. */
export async function openDirectory(source) {
  if (typeof source === 'string' || source instanceof URL) {
    const local = await localDirectory(source);
    if (local) return local;
    const text = String(source);
    if (!/^https?:/i.test(text)) {
      // browsers: relative to the page
      const base = globalThis.location?.href;
      if (!base) throw invalidArgument(`fromPretrained: '${text}' is not an http(s) URL`);
      return urlDirectory(new URL(text, base));
    }
    return urlDirectory(text);
  }
  if (isDirectoryHandle(source)) return handleDirectory(source);
  if (source !== null && typeof source === 'object') return fileDirectory(source);
  throw invalidArgument('fromPretrained: expected a directory path, a URL, a FileSystemDirectoryHandle or a map of File objects');
}
