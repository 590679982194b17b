/* com.microsoft GroupQueryAttention with separate query/key/value
 * ([B, S, N * D], [B, S, KN * D]) and past_key/past_value caches:
 *   Q, K     = RotaryEmbedding(query or key, positions, cos_cache, sin_cache)   (do_rotary)
 *   Y, present = ai.rt::PagedAttention(heads(Q), heads(K), heads(value), past)
 *   output   = merged heads of Y
 * Rotary: com.microsoft RotaryEmbedding (the same rotation GQA applies,
 * rotary_interleaved kept) at GQA's position_ids input when given, else at
 * the offset total_sequence_length - S (GQA's past length + t for unpadded
 * rows: seqlens_k + 1 - S). seqlens_k then feeds nothing (padding is not
 * supported on paged caches). scale maps onto a scaled query;
 * local_window_size w (the last w keys) onto left_window_size w - 1.
 * Refused: packed QKV, softcap, smooth_softmax, qk_output, attention_bias,
 * head_sink, local_window_size 0, a local window conflicting with the
 * leftWindowSize option. */
#include "model/paged_model_forms.h"

static ol_status check(const ol_node *n, const ol_paged_model_options *o, int64_t *window) {
  static const char *const unsupported_inputs[] = {NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
                                                   "attention_bias", "head_sink"};
  if (!ol_paged_input(n, 1) || !ol_paged_input(n, 2))
    return ol_paged_refuse(n, "packed QKV (no key/value input) is not supported");
  for (size_t k = 10; k < n->num_inputs && k < 12; k++)
    if (ol_paged_input(n, k)) return ol_paged_refuse(n, "input %s is not supported", unsupported_inputs[k]);
  if (n->num_inputs > 12) return ol_paged_refuse(n, "inputs after head_sink are not supported");
  if (ol_attr_float(n, "softcap", 0.0f) != 0.0f)
    return ol_paged_refuse(n, "attribute 'softcap' is not supported (PagedAttention has no softcap)");
  if (ol_attr_int(n, "smooth_softmax", 0) != 0) return ol_paged_refuse(n, "attribute 'smooth_softmax' is not supported");
  if (ol_attr_int(n, "qk_output", 0) != 0) return ol_paged_refuse(n, "attribute 'qk_output' is not supported");
  if (ol_node_has_output(n, 3)) return ol_paged_refuse(n, "output 3 (qk) is not supported");
  int64_t w = ol_attr_int(n, "local_window_size", -1);
  *window = -1;
  if (w == 0) return ol_paged_refuse(n, "attribute 'local_window_size' = 0 (no visible key) is not supported");
  if (w > 0) {
    *window = w - 1; /* GQA sees the last w keys, the query's own among them */
    if (o->left_window_size >= 0 && o->left_window_size != *window)
      return ol_paged_refuse(n, "attribute 'local_window_size' = %lld conflicts with leftWindowSize %lld "
                                "(left_window_size %lld)",
                             (long long)w, (long long)o->left_window_size, (long long)*window);
  }
  if (ol_attr_int(n, "num_heads", 0) < 1 || ol_attr_int(n, "kv_num_heads", 0) < 1)
    return ol_paged_refuse(n, "attributes 'num_heads' and 'kv_num_heads' must be positive");
  if (ol_attr_int(n, "do_rotary", 0) && (!ol_paged_input(n, 7) || !ol_paged_input(n, 8)))
    return ol_paged_refuse(n, "do_rotary needs cos_cache and sin_cache");
  return OL_OK;
}

/* x rotated like GQA's do_rotary: RotaryEmbedding(x, positions, cos, sin). */
static const char *rotary(paged_build *b, paged_layer *l, const ol_node *n, const char *x, const char *positions,
                          int64_t heads) {
  const char *in[4] = {x, positions, n->inputs[7], n->inputs[8]};
  const char *y = ol_paged_emit(b, l, "RotaryEmbedding", "com.microsoft", in, 4, NULL);
  if (!y) return NULL;
  Onnx__NodeProto *r = l->nodes[l->n_nodes - 1];
  ol_paged_attr_int(b, r, "num_heads", heads);
  ol_paged_attr_int(b, r, "interleaved", ol_attr_int(n, "rotary_interleaved", 0) != 0);
  return y;
}

/* GQA's positions: its position_ids, else total_sequence_length - S, one
 * int64 offset (RotaryEmbedding's (1) form). */
static const char *positions(paged_build *b, paged_layer *l, const ol_node *n) {
  if (ol_paged_input(n, 9)) return n->inputs[9];
  const int64_t one[1] = {1};
  const char *in[2] = {n->inputs[6], NULL};
  const char *total = ol_paged_emit(b, l, "Cast", NULL, in, 1, NULL);
  if (total) ol_paged_attr_int(b, l->nodes[l->n_nodes - 1], "to", ONNX__TENSOR_PROTO__DATA_TYPE__INT64);
  in[0] = n->inputs[0];
  in[0] = ol_paged_emit(b, l, "Shape", NULL, in, 1, NULL);
  in[1] = ol_paged_const_ints(b, l, one, 1);
  const char *length = ol_paged_emit(b, l, "Gather", NULL, in, 2, NULL); /* [S] */
  in[0] = total, in[1] = length;
  return ol_paged_emit(b, l, "Sub", NULL, in, 2, NULL);
}

ol_status ol_paged_match_gqa(paged_build *b, int i, paged_layer *l, bool *matched) {
  const ol_node *n = &b->g->nodes[i];
  *matched = false;
  if (!ol_paged_is_ms(n, "GroupQueryAttention") || (!ol_paged_input(n, 3) && !ol_paged_input(n, 4))) return OL_OK;
  OL_TRY(ol_paged_cache_pair(b->g, n, 3, 4, l));
  OL_TRY(check(n, b->o, &l->left_window));
  int64_t heads = ol_attr_int(n, "num_heads", 0), kv_heads = ol_attr_int(n, "kv_num_heads", 0);
  const char *q = n->inputs[0], *k = n->inputs[1];
  if (ol_attr_int(n, "do_rotary", 0)) {
    const char *at = positions(b, l, n);
    q = rotary(b, l, n, q, at, heads);
    k = rotary(b, l, n, k, at, kv_heads);
  }
  return ol_paged_replace_with_attention(b, i, l, n, q, k, n->inputs[2], heads, kv_heads, true, matched);
}
