/* libFuzzer: PagedCacheProto bytes (a saved KV cache, or a
 * paged_cache_initializer) -> parse -> length, payload bytes, compact,
 * truncate, fork, convert the first block to int4 keys / float16 values,
 * serialize: everything the JS PagedCache and a resumed session do with a
 * cache read from disk. */
#include "onnxlight.h"

static void serialize_and_drop(ol_value *cache) {
  void *bytes = NULL;
  size_t n = 0;
  if (ol_paged_cache_serialize(cache, &bytes, &n) == OL_OK) ol_free(bytes);
  ol_value_release(cache);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ol_value *cache = NULL;
  if (ol_paged_cache_parse(data, size, &cache) != OL_OK) return 0;
  int64_t tokens = 0;
  size_t payload = 0;
  (void)ol_paged_cache_payload_bytes(cache, &payload);
  if (ol_paged_cache_length(cache, &tokens) == OL_OK) {
    ol_value *out = NULL;
    if (ol_paged_cache_compact(cache, 3, &out) == OL_OK) serialize_and_drop(out);
    out = NULL;
    if (ol_paged_cache_truncate(cache, tokens / 2, &out) == OL_OK) serialize_and_drop(out);
    out = NULL;
    if (ol_paged_cache_fork(cache, &out) == OL_OK) ol_value_release(out);
    const int64_t first = 0; /* refused when the cache has no block */
    ol_page_format key = {.type = OL_DTYPE_INT4, .scale = 0.125f, .zero_point = 0};
    ol_page_format value = {.type = OL_DTYPE_FLOAT16};
    out = NULL;
    if (ol_paged_cache_quantize(cache, &first, 1, &key, &value, &out) == OL_OK) serialize_and_drop(out);
  }
  serialize_and_drop(cache);
  return 0;
}
