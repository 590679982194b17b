/* Compacting a paged cache (ol_paged_cache_compact, onnxlight.h): runs of
 * consecutive blocks in one format become one block, without requantizing.
 *
 * PagedAttention seals every execution's pages, so a decoder appending one
 * token per step makes one block per token, and a block's metadata (its
 * struct of four values in memory; start, length and two payload
 * descriptors on the wire) outweighs a quantized token's payload. Merging
 * a run copies the valid rows of its pages into one page per K and V:
 * dense elements and affine codes are concatenated as they are, and the
 * scalar (or per-token) affine parameters of the pages become one scale
 * and zero point per token (AffineLayoutProto axis 2), or stay one pair
 * when every token has the same. Every element decodes to the same float
 * before and after, so attention over the compacted cache gives the same
 * bits (attention reads tokens in order, whatever the page boundaries).
 *
 * A run is consecutive blocks whose K pages share a storage type, whose V
 * pages do too, and whose affine parameters do not vary along the width
 * (per tensor or per token), with at most max_block_tokens tokens in all.
 * A block alone in its run is shared, not copied. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "quant/paged.h"

/* Parameters that a per-token layout can carry: one set, or one per token. */
static bool row_params(const ol_page_payload *p) { return !ol_page_is_affine(p) || p->n_params == 1 || p->axis == 2; }

static bool mergeable(const ol_page *p) { return row_params(&p->key) && row_params(&p->value); }

static bool same_formats(const ol_page *a, const ol_page *b) {
  return a->key.storage == b->key.storage && a->value.storage == b->value.storage;
}

static const ol_page_payload *payload_of(const ol_page *p, int which) { return which ? &p->value : &p->key; }

/* Dense: the valid rows of every page, one after the other. */
static ol_status merge_dense(const ol_page *pages, size_t count, int which, int64_t tokens, ol_value **out) {
  const ol_page_payload *first = payload_of(&pages[0], which);
  OL_TRY(ol_page_dense_new(NULL, first->storage, tokens, first->width, out));
  char *dst = ol_tensor_data(*out);
  for (size_t i = 0; i < count; i++) {
    size_t bytes = ol_dtype_storage_bytes(first->storage, pages[i].length * first->width);
    memcpy(dst, payload_of(&pages[i], which)->data, bytes);
    dst += bytes;
  }
  return OL_OK;
}

/* Affine: the codes concatenated, the parameters spread to one set per token. */
static ol_status merge_affine(const ol_page *pages, size_t count, int which, int64_t tokens, ol_value **out) {
  const ol_page_payload *first = payload_of(&pages[0], which);
  float *scales = ol_xmalloc((sizeof(float) + sizeof(int32_t)) * (size_t)tokens);
  if (!scales) return OL_OUT_OF_MEMORY;
  int32_t *zeros = (int32_t *)(scales + tokens);
  bool uniform = true;
  int64_t row = 0;
  for (size_t i = 0; i < count; i++) {
    const ol_page_payload *p = payload_of(&pages[i], which);
    for (int64_t t = 0; t < pages[i].length; t++, row++) {
      int64_t k = ol_page_param_index(p, t, 0);
      scales[row] = p->n_params == 1 ? p->scale0 : p->scales[k];
      zeros[row] = p->n_params == 1 ? p->zero0 : p->zeros[k];
      /* compared as bits: the same float bit pattern decodes the same */
      uniform = uniform && memcmp(&scales[row], &scales[0], sizeof(float)) == 0 && zeros[row] == zeros[0];
    }
  }
  uint8_t *codes;
  size_t bytes;
  ol_status s = ol_page_affine_rows_new(first->storage, scales, zeros, uniform ? 1 : tokens, tokens, first->width,
                                        out, &codes, &bytes);
  free(scales);
  if (s != OL_OK) return s;
  int64_t at = 0;
  for (size_t i = 0; i < count; i++) {
    int64_t n = pages[i].length * first->width;
    ol_page_copy_codes(first->storage, payload_of(&pages[i], which)->data, 0, codes, at, n);
    at += n;
  }
  return OL_OK;
}

/* One block of the `tokens` valid tokens of pages[0..count). */
static ol_status merge_run(const ol_page *pages, size_t count, int64_t tokens, ol_value **out) {
  ol_value *payloads[2] = {NULL, NULL};
  ol_status s = OL_OK;
  for (int which = 0; which < 2 && s == OL_OK; which++)
    s = ol_page_is_affine(payload_of(&pages[0], which)) ? merge_affine(pages, count, which, tokens, &payloads[which])
                                                        : merge_dense(pages, count, which, tokens, &payloads[which]);
  if (s == OL_OK) s = ol_page_block_new(pages[0].start, tokens, payloads[0], payloads[1], out);
  ol_value_release(payloads[0]);
  ol_value_release(payloads[1]);
  return s;
}

ol_status ol_paged_cache_compact(const ol_value *cache, int64_t max_block_tokens, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_compact: out is NULL");
  *out = NULL;
  if (max_block_tokens < 1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_compact: max_block_tokens must be >= 1, got %lld",
                    (long long)max_block_tokens);
  OL_TRY(ol_paged_cache_validate(cache, NULL, NULL, NULL));
  size_t n = ol_paged_cache_block_count(cache), viewed = 0, made = 0;
  ol_page *views = ol_xcalloc(n + 1, sizeof *views);
  ol_value **blocks = ol_xcalloc(n + 1, sizeof *blocks);
  ol_status s = views && blocks ? OL_OK : OL_OUT_OF_MEMORY;
  for (; s == OL_OK && viewed < n; viewed++) s = ol_page_view(ol_paged_cache_block(cache, viewed), viewed, &views[viewed]);
  for (size_t i = 0; s == OL_OK && i < n;) {
    size_t j = i + 1;
    int64_t tokens = views[i].length;
    while (mergeable(&views[i]) && j < n && mergeable(&views[j]) && same_formats(&views[i], &views[j]) &&
           tokens + views[j].length <= max_block_tokens)
      tokens += views[j++].length;
    if (j == i + 1) blocks[made++] = ol_value_retain((ol_value *)ol_paged_cache_block(cache, i)); /* shared */
    else if ((s = merge_run(&views[i], j - i, tokens, &blocks[made])) == OL_OK) made++;
    i = j;
  }
  if (s == OL_OK) s = ol_paged_cache_new(blocks, made, out);
  for (size_t i = 0; i < made; i++) ol_value_release(blocks[i]);
  for (size_t i = 0; i < viewed; i++) ol_page_clear(&views[i]);
  free(views);
  free(blocks);
  return s;
}

ol_status ol_paged_cache_compact_grown(const ol_value *cache, size_t *mark, ol_value **out) {
  *out = NULL;
  const size_t blocks = ol_paged_cache_block_count(cache);
  if (blocks < *mark) *mark = blocks; /* a smaller cache took the place of the last one compacted */
  if (blocks < *mark + OL_PAGED_CACHE_COMPACT_TOKENS) return OL_OK;
  OL_TRY(ol_paged_cache_compact(cache, OL_PAGED_CACHE_COMPACT_TOKENS, out));
  *mark = ol_paged_cache_block_count(*out);
  return OL_OK;
}
