/* Shape functions of the decoder operators: ONNX Attention (23), and the
 * com.microsoft GroupQueryAttention and skip layer norms (the others are
 * shaped like their input 0). */
#include <string.h>

#include "ops/transformer/transformer.h"

/* a + b for sequence lengths (unknown unless both are concrete; a + 0 = a). */
static ol_dim dim_add(ol_dim a, ol_dim b) {
  int64_t sum;
  if (a.is_value && b.is_value) return ol_i64_add(a.value, b.value, &sum) ? ol_dim_of(sum) : ol_dim_unknown();
  if (b.is_value && b.value == 0) return a;
  if (a.is_value && a.value == 0) return b;
  return ol_dim_unknown();
}

static ol_dim dim_div(ol_dim a, int64_t b) {
  return a.is_value && b > 0 && a.value % b == 0 ? ol_dim_of(a.value / b) : ol_dim_unknown();
}

/* ONNX Attention 23: Q, K, V 4-D [B, heads, S, head] or 3-D [B, S, hidden]. */
ol_status ol_infer_attention(ol_infer_ctx *ctx) {
  const ol_infer_type *q = ol_infer_shaped(ctx, 0), *k = ol_infer_shaped(ctx, 1), *v = ol_infer_shaped(ctx, 2);
  const ol_infer_type *past_k = ol_infer_shaped(ctx, 4), *past_v = ol_infer_shaped(ctx, 5);
  if (!q || ctx->num_outputs < 1) return OL_OK;
  if (q->rank != 3 && q->rank != 4) return ol_infer_error(ctx, "Q must have rank 3 or 4 (got %d)", q->rank);
  ol_dim y[4];
  if (q->rank == 4) {
    y[0] = q->dims[0], y[1] = q->dims[1], y[2] = q->dims[2];
    y[3] = v && v->rank == 4 ? v->dims[3] : ol_dim_unknown();
  } else {
    int64_t qh = ol_attr_int(ctx->node, "q_num_heads", 0), kvh = ol_attr_int(ctx->node, "kv_num_heads", 0);
    y[0] = q->dims[0], y[1] = q->dims[1];
    ol_dim v_head = v && v->rank == 3 ? dim_div(v->dims[2], kvh) : ol_dim_unknown();
    int64_t width;
    y[2] = v_head.is_value && qh > 0 && ol_i64_mul(qh, v_head.value, &width) ? ol_dim_of(width) : ol_dim_unknown();
  }
  ol_infer_set_tensor(&ctx->outputs[0], q->dtype, q->rank, y);
  /* present_key / present_value: the past along the sequence axis plus the new entries */
  const ol_infer_type *news[2] = {k, v}, *pasts[2] = {past_k, past_v};
  for (size_t o = 1; o < 3 && o < ctx->num_outputs; o++) {
    const ol_infer_type *now = news[o - 1], *past = pasts[o - 1];
    if (!now || now->rank != 4) continue;
    ol_dim d[4] = {now->dims[0], now->dims[1], now->dims[2], now->dims[3]};
    if (ol_node_has_input(ctx->node, 3 + o)) d[2] = past && past->rank == 4 ? dim_add(past->dims[2], now->dims[2]) : ol_dim_unknown();
    ol_infer_set_tensor(&ctx->outputs[o], now->dtype, 4, d);
  }
  return OL_OK;
}

/* com.microsoft GroupQueryAttention: query [B, S, hidden] (packed QKV when
 * key is absent); present_key/value [B, kv_num_heads, ?, head_size]. */
ol_status ol_infer_gqa(ol_infer_ctx *ctx) {
  const ol_infer_type *q = ol_infer_shaped(ctx, 0);
  if (!q || q->rank != 3 || ctx->num_outputs < 1) return OL_OK;
  int64_t heads = ol_attr_int(ctx->node, "num_heads", 0), kv_heads = ol_attr_int(ctx->node, "kv_num_heads", 0);
  bool packed = !ol_node_has_input(ctx->node, 1);
  if (heads <= 0 || kv_heads <= 0 || heads > (1 << 20) || kv_heads > (1 << 20)) return OL_OK;
  ol_dim head = dim_div(q->dims[2], packed ? heads + 2 * kv_heads : heads);
  int64_t width;
  ol_dim y[3] = {q->dims[0], q->dims[1],
                 head.is_value && ol_i64_mul(heads, head.value, &width) ? ol_dim_of(width) : ol_dim_unknown()};
  if (!packed) y[2] = q->dims[2];
  ol_infer_set_tensor(&ctx->outputs[0], q->dtype, 3, y);
  for (size_t o = 1; o < 3 && o < ctx->num_outputs; o++) {
    ol_dim d[4] = {q->dims[0], ol_dim_of(kv_heads), ol_dim_unknown(), head};
    ol_infer_set_tensor(&ctx->outputs[o], q->dtype, 4, d);
  }
  return OL_OK;
}

/* SkipLayerNormalization / SkipSimplifiedLayerNormalization: output 0 and
 * input_skip_bias_sum (output 3) like the input. */
ol_status ol_infer_skip_norm(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, x->dims);
  if (ctx->num_outputs > 3) ol_infer_set_tensor(&ctx->outputs[3], x->dtype, x->rank, x->dims);
  return OL_OK;
}

#define MS "com.microsoft"

