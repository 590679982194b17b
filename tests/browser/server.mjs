// A static file server on 127.0.0.1 (random port) for the browser tests,
// the chat app (npm run web) and bench/browser.mjs: serves the repository's
// dist/, models/, tests/browser/ and web/ only, unless told more.
import { createReadStream, statSync } from 'node:fs';
import { createServer } from 'node:http';
import { extname, join, normalize } from 'node:path';

const TYPES = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.map': 'application/json',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.onnx': 'application/octet-stream',
  '.json': 'application/json',
};
const ALLOWED = ['/dist/', '/models/', '/tests/browser/', '/web/'];

/**
 * Starts the server; resolves to { origin, requests, close() }. isolated:
 * send COOP/COEP, so pages are cross-origin isolated (SharedArrayBuffer,
 * hence the threaded module). prefixes: more folders of root to serve
 * ('/bench/'); mounts: { '/url/prefix/': '/folder/' } served from elsewhere;
 * noStore: responses the browser may not cache; wasmType: the content-type
 * of .wasm files (a misconfigured server's, for the loader's fallback).
 */
export function serve(root, port = 0, { isolated = false, prefixes = [], mounts = {}, noStore = false, wasmType = TYPES['.wasm'] } = {}) {
  const headers = {
    ...(isolated ? { 'cross-origin-opener-policy': 'same-origin', 'cross-origin-embedder-policy': 'require-corp' } : {}),
    ...(noStore ? { 'cache-control': 'no-store' } : {}),
  };
  const allowed = [...ALLOWED, ...prefixes];
  // the file a URL path names, or null
  const fileOf = (path) => {
    const mount = Object.keys(mounts).find((prefix) => path.startsWith(prefix));
    if (mount) return join(mounts[mount], path.slice(mount.length));
    return allowed.some((prefix) => path.startsWith(prefix)) ? join(root, path) : null;
  };
  const requests = [];
  const server = createServer((req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, 'http://x').pathname));
    if (path.endsWith('/') && path !== '/') path += 'index.html';
    requests.push(path);
    const file = req.method === 'GET' ? fileOf(path) : null;
    let stat = null;
    if (file) {
      try {
        stat = statSync(file);
      } catch {
        stat = null;
      }
    }
    if (req.method === 'GET' && path === '/') {
      res.writeHead(302, { location: '/web/dist/index.html' }).end();
      return;
    }
    if (!stat?.isFile()) {
      res.writeHead(404).end('not found');
      return;
    }
    const type = extname(path) === '.wasm' ? wasmType : (TYPES[extname(path)] ?? 'application/octet-stream');
    res.writeHead(200, { 'content-type': type, 'content-length': stat.size, ...headers });
    createReadStream(file).pipe(res);
  });
  return new Promise((resolve) => {
    server.listen(port, '127.0.0.1', () => {
      const { port } = server.address();
      resolve({
        origin: `http://127.0.0.1:${port}`,
        requests,
        // also drops kept-alive connections: the origin is unreachable at once
        close: () => new Promise((r) => {
          server.close(r);
          server.closeAllConnections();
        }),
      });
    });
  });
}

// `node tests/browser/server.mjs [port] [--not-isolated]` (npm run web):
// serves the chat app and prints its URL as the first line. The port: the
// argument, else $PORT, else 8080 (0: any free port). Cross-origin isolated
// (threads) unless --not-isolated.
if (import.meta.url === `file://${process.argv[1]}`) {
  const { fileURLToPath } = await import('node:url');
  const root = fileURLToPath(new URL('../../', import.meta.url));
  const port = process.argv.slice(2).find((a) => /^\d+$/.test(a)) ?? process.env.PORT ?? 8080;
  const isolated = !process.argv.includes('--not-isolated');
  const { origin } = await serve(root, Number(port), { isolated });
  console.log(`${origin}/web/dist/index.html`);
  console.log(`onnx-light chat app, ${isolated ? 'cross-origin isolated (threads)' : 'not isolated (one thread)'}; Ctrl-C to stop`);
}
