/* Paged KV caches (ai.rt opset 1, seed 000 "Optional heterogeneous paged
 * KV"): PagedAttention (paged_attention.c) attends over a cache of sealed
 * pages and appends the new tokens as pages in a per-execution format;
 * QuantizePagedCache (quantize_paged_cache.c) converts selected pages. The
 * cache values themselves: quant/paged.h. Shape functions in infer.c. */
#ifndef OL_OPS_PAGED_H
#define OL_OPS_PAGED_H
#include "ops/schema.h"
#include "quant/paged.h"

extern const ol_op_schema ol_schema_paged[];

ol_status ol_paged_attention_create(const ol_node *node, ol_kernel **out);
ol_status ol_quantize_paged_cache_create(const ol_node *node, ol_kernel **out);

/* paged_attend.c: every query of Q [B, Hq, L, Dk] over the visible tokens
 * of pages (sorted, contiguous from token 0), into Y [B, Hq, L, Dv], in
 * chunks of OL_PAGED_CHUNK tokens at multiples of OL_PAGED_CHUNK (absolute
 * positions). Adds to stats' dequantized_bytes, sets its
 * peak_workspace_bytes; the numerics: paged_attention.c. */
enum { OL_PAGED_CHUNK = 64 };
typedef struct ol_paged_dims {
  int64_t B, Hq, Hkv, L, Dk, Dv, group; /* group = Hq / Hkv */
  int64_t past, total;                  /* tokens before and after this execution */
} ol_paged_dims;
ol_status ol_paged_attend(ol_allocator *alloc, const ol_paged_dims *d, bool causal, int64_t window,
                          const ol_tensor *Q, const ol_page *pages, size_t n_pages, ol_tensor *Y,
                          ol_paged_stats *stats);

/* infer.c */
ol_status ol_infer_paged_attention(ol_infer_ctx *ctx);
ol_status ol_infer_quantize_paged_cache(ol_infer_ctx *ctx);

#endif
