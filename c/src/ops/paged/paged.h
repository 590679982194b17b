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

/* infer.c */
ol_status ol_infer_paged_attention(ol_infer_ctx *ctx);
ol_status ol_infer_quantize_paged_cache(ol_infer_ctx *ctx);

#endif
