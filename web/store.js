// The saved conversations in IndexedDB, one record per model (key: the
// model's id, app.js) { model, transcript, saved } where saved =
// { caches: { name: PagedCacheProto bytes }, ids, lastTurn } (chat-worker.js)
// and transcript = [{ role: 'user' | 'bot', text }].
const DB = 'onnx-light-chat';
const STORE = 'conversation';

function open() {
  return new Promise((resolve, reject) => {
    const request = indexedDB.open(DB, 1);
    request.onupgradeneeded = () => request.result.createObjectStore(STORE);
    request.onsuccess = () => resolve(request.result);
    request.onerror = () => reject(request.error);
  });
}

async function transaction(mode, fn) {
  const db = await open();
  try {
    return await new Promise((resolve, reject) => {
      const tx = db.transaction(STORE, mode);
      const request = fn(tx.objectStore(STORE));
      tx.oncomplete = () => resolve(request.result);
      tx.onerror = () => reject(tx.error);
      tx.onabort = () => reject(tx.error ?? new Error('the IndexedDB transaction was aborted'));
    });
  } finally {
    db.close();
  }
}

/** The conversation saved with the model `model`, or null. */
export function loadConversation(model) {
  return transaction('readonly', (store) => store.get(model)).then((record) => record ?? null);
}

export function saveConversation(record) {
  return transaction('readwrite', (store) => store.put(record, record.model));
}

export function clearConversation(model) {
  return transaction('readwrite', (store) => store.delete(model));
}
