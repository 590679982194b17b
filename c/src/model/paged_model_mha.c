/* com.microsoft MultiHeadAttention with 3-D query/key/value ([B, S, N * D])
 * and past_key/past_value (inputs 6, 7), present outputs 1, 2:
 *   Y, present = ai.rt::PagedAttention(heads(query), heads(key), heads(value), past)
 *   output     = merged heads of Y
 * unidirectional 1, or an attention_bias (taken for the causal mask decoder
 * exports build), make a causal PagedAttention; neither, a non-causal one.
 * key_padding_mask then feeds nothing (padding is not supported on paged
 * caches). scale maps onto a scaled query. Refused: bias (input 3),
 * past_sequence_length, cache_indirection, packed QKV (no key). */
#include "model/paged_model_forms.h"

ol_status ol_paged_match_mha(paged_build *b, int i, paged_layer *l, bool *matched) {
  const ol_node *n = &b->g->nodes[i];
  *matched = false;
  if (!ol_paged_is_ms(n, "MultiHeadAttention") || (!ol_paged_input(n, 6) && !ol_paged_input(n, 7))) return OL_OK;
  OL_TRY(ol_paged_cache_pair(b->g, n, 6, 7, l));
  if (!ol_paged_input(n, 1) || !ol_paged_input(n, 2))
    return ol_paged_refuse(n, "packed QKV (no key/value input) is not supported");
  if (ol_paged_input(n, 3)) return ol_paged_refuse(n, "input bias is not supported (add it to Q/K/V before the node)");
  if (ol_paged_input(n, 8)) return ol_paged_refuse(n, "input past_sequence_length is not supported");
  if (ol_paged_input(n, 9)) return ol_paged_refuse(n, "input cache_indirection is not supported");
  if (ol_paged_declared_rank(b->g, n->inputs[1]) == 4)
    return ol_paged_refuse(n, "4-D key (already split per head) is not supported");
  int64_t heads = ol_attr_int(n, "num_heads", 0);
  if (heads < 1) return ol_paged_refuse(n, "attribute 'num_heads' must be positive");
  bool causal = ol_attr_int(n, "unidirectional", 0) != 0 || ol_paged_input(n, 5);
  return ol_paged_replace_with_attention(b, i, l, n, n->inputs[0], n->inputs[1], n->inputs[2], heads, heads, causal,
                                         matched);
}
