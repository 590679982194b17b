/* ai.onnx Attention (opset 23) with past_key/past_value (inputs 4, 5) and
 * present_key/present_value (outputs 1, 2):
 *   Y, present = ai.rt::PagedAttention(Q, K, V, past)
 * with 3-D Q/K/V ([B, S, heads * D], q_num_heads / kv_num_heads) split into
 * heads and Y merged back; 4-D ones are PagedAttention's layout already.
 * 3-D or 4-D: the declared rank of Q when known, else 3-D when q_num_heads
 * is set. is_causal 1, or an attn_mask (taken for the causal mask decoder
 * exports build; paged attention is causal and has no padding), make a
 * causal PagedAttention; is_causal 0 without a mask a non-causal one. scale
 * maps onto a scaled query. Refused: softcap, the qk_matmul_output output,
 * nonpad_kv_seqlen. */
#include "model/paged_model_forms.h"

ol_status ol_paged_match_attention(paged_build *b, int i, paged_layer *l, bool *matched) {
  const ol_node *n = &b->g->nodes[i];
  *matched = false;
  if (!ol_paged_is_op(n, "Attention") || (!ol_paged_input(n, 4) && !ol_paged_input(n, 5))) return OL_OK;
  OL_TRY(ol_paged_cache_pair(b->g, n, 4, 5, l));
  if (ol_paged_input(n, 6)) return ol_paged_refuse(n, "input nonpad_kv_seqlen is not supported");
  if (ol_node_has_output(n, 3)) return ol_paged_refuse(n, "output qk_matmul_output is not supported");
  if (ol_attr_float(n, "softcap", 0.0f) != 0.0f)
    return ol_paged_refuse(n, "attribute 'softcap' is not supported (PagedAttention has no softcap)");
  int64_t causal = ol_attr_int(n, "is_causal", 0);
  if (causal != 0 && causal != 1) return ol_paged_refuse(n, "attribute 'is_causal' must be 0 or 1");
  int64_t q_heads = ol_attr_int(n, "q_num_heads", 0), kv_heads = ol_attr_int(n, "kv_num_heads", 0);
  int rank = ol_paged_declared_rank(b->g, n->inputs[0]);
  bool flat = rank == 3 || (rank < 0 && q_heads > 0);
  if (rank >= 0 && rank != 3 && rank != 4) return ol_paged_refuse(n, "Q must be 3-D or 4-D, declared rank %d", rank);
  if (flat && (q_heads < 1 || kv_heads < 1))
    return ol_paged_refuse(n, "3-D inputs need attributes 'q_num_heads' and 'kv_num_heads'");
  return ol_paged_replace_with_attention(b, i, l, n, n->inputs[0], n->inputs[1], n->inputs[2], flat ? q_heads : 0,
                                         kv_heads, causal || ol_paged_input(n, 3), matched);
}
