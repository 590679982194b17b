/* Shape functions of PagedAttention and QuantizePagedCache: Y has Q's batch,
 * heads, tokens and element type and V's head size; a cache output keeps
 * the structured declaration of the cache input. */
#include "ops/paged/paged.h"

static void keep_cache_type(ol_infer_ctx *ctx, size_t input, size_t output) {
  if (output < ctx->num_outputs && input < ctx->num_inputs && ctx->inputs[input] && ctx->inputs[input]->known)
    ctx->outputs[output] = *ctx->inputs[input];
}

ol_status ol_infer_paged_attention(ol_infer_ctx *ctx) {
  const ol_infer_type *q = ol_infer_shaped(ctx, 0), *v = ol_infer_shaped(ctx, 2);
  if (q && ctx->num_outputs > 0) {
    if (q->rank != 4) return ol_infer_error(ctx, "Q must have rank 4, got %d", q->rank);
    if (v && v->rank != 4) return ol_infer_error(ctx, "V must have rank 4, got %d", v->rank);
    ol_dim dims[4] = {q->dims[0], q->dims[1], q->dims[2], v ? v->dims[3] : ol_dim_unknown()};
    ol_infer_set_tensor(&ctx->outputs[0], q->dtype, 4, dims);
  }
  keep_cache_type(ctx, 3, 1);
  return OL_OK;
}

ol_status ol_infer_quantize_paged_cache(ol_infer_ctx *ctx) {
  keep_cache_type(ctx, 0, 0);
  return OL_OK;
}
