// The saved conversation in IndexedDB: one record { model, transcript, saved }
// where saved = { caches: { name: PagedCacheProto bytes }, pending, lastTurn }
// (chat-worker.js) and transcript = [{ role: 'user' | 'bot', text }].
const DB = 'onnx-light-chat';
const STORE = 'conversation';
const KEY = 'current';

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

/** The saved conversation, or null. */
export function loadConversation() {
  return transaction('readonly', (store) => store.get(KEY)).then((record) => record ?? null);
}

export function saveConversation(record) {
  return transaction('readwrite', (store) => store.put(record, KEY));
}

export function clearConversation() {
  return transaction('readwrite', (store) => store.delete(KEY));
}
