// The app's service worker: the page, its scripts, the wasm runtime (the
// files listed by the build in APP_FILES) are cached when it installs, and
// every GET is answered from the caches first (the model is put in them by
// download.js), so the app opens and runs offline. A new build changes
// APP_VERSION, which installs a new cache and deletes the old one.
/* global APP_VERSION, APP_FILES */
const SHELL = `onnx-light-app-${APP_VERSION}`;

self.addEventListener('install', (event) => {
  event.waitUntil(caches.open(SHELL).then((cache) => cache.addAll(APP_FILES)).then(() => self.skipWaiting()));
});

self.addEventListener('activate', (event) => {
  event.waitUntil(
    caches.keys()
      .then((keys) => Promise.all(keys.filter((k) => k.startsWith('onnx-light-app-') && k !== SHELL).map((k) => caches.delete(k))))
      .then(() => self.clients.claim()),
  );
});

self.addEventListener('fetch', (event) => {
  if (event.request.method !== 'GET') return;
  // ?seed=… and other parameters do not change a file
  event.respondWith(caches.match(event.request, { ignoreSearch: true }).then((cached) => cached ?? fetch(event.request)));
});
