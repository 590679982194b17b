/* The torch form of a cached attention (torch exports, the bench's plain
 * form), per layer:
 *   present_k = Concat(past_k, K, axis = 2)     past_k a graph input, present_k a graph output
 *   present_v = Concat(past_v, V, axis = 2)     likewise
 *   Kr, Vr    = present_k, present_v through Unsqueeze/Expand/Reshape (repeat_kv, optional)
 *   S = MatMul(Q, Transpose(Kr, perm = [0, 1, 3, 2]))
 *   P = Softmax(Add(S / sqrt(Dk) or S * (1 / sqrt(Dk)), mask), axis = -1)   (the Add optional)
 *   Y = MatMul(P, Vr)
 * becomes Y, present = ai.rt::PagedAttention(Q, K, V, past). The mask Add is
 * taken for the causal mask it is in these exports. A scale other than
 * 1 / sqrt(Dk) is not this form (nothing matches). */
#include <math.h>
#include <string.h>

#include "model/paged_model_forms.h"

/* A cache Concat: Concat(past, new, axis = 2) with past a graph input and
 * the result a graph output. */
static bool is_cache_concat(const ol_graph *g, int i) {
  const ol_node *n = &g->nodes[i];
  return ol_paged_is_op(n, "Concat") && n->num_inputs == 2 && ol_attr_int(n, "axis", 0) == 2 &&
         ol_paged_is_graph_input(g, n->inputs[0]) && ol_paged_is_graph_output(g, n->outputs[0]);
}

static bool replace(paged_layer *l, int node) {
  if (l->n_replaced == PAGED_MAX_REPLACED) return false;
  l->replaced[l->n_replaced++] = node;
  return true;
}

/* Follows repeat_kv (Unsqueeze, Expand, Reshape, each with this reader only)
 * back from name to a cache Concat; its index or -1. */
static int cache_behind(const ol_graph *g, const char *name, paged_layer *layer) {
  for (int hops = 0; hops < 8; hops++) {
    int p = ol_paged_producer(g, name);
    if (p < 0) return -1;
    if (is_cache_concat(g, p)) return p;
    const ol_node *n = &g->nodes[p];
    if ((!ol_paged_is_op(n, "Unsqueeze") && !ol_paged_is_op(n, "Expand") && !ol_paged_is_op(n, "Reshape")) ||
        ol_paged_readers(g, name) != 1 || !replace(layer, p))
      return -1;
    name = n->inputs[0];
  }
  return -1;
}

/* The scalar float constant name (an initializer or a Constant's value). */
static bool scalar_constant(const ol_graph *g, const char *name, double *out) {
  const ol_tensor *t = NULL;
  const ol_initializer *init = ol_graph_find_initializer(g, name);
  if (init && !init->encoded && init->value && init->value->kind == OL_VALUE_TENSOR) t = &init->value->tensor;
  int p = t ? -1 : ol_paged_producer(g, name);
  if (p >= 0 && ol_paged_is_op(&g->nodes[p], "Constant")) {
    const ol_attr *a = ol_node_attr(&g->nodes[p], "value");
    if (a && a->tensor && a->tensor->kind == OL_VALUE_TENSOR) t = &a->tensor->tensor;
    if (a && a->type == OL_ATTR_FLOAT) {
      *out = a->f;
      return true;
    }
  }
  if (!t || ol_tcount(t) != 1 || (t->dtype != OL_DTYPE_FLOAT && t->dtype != OL_DTYPE_DOUBLE)) return false;
  *out = t->dtype == OL_DTYPE_FLOAT ? ((const float *)ol_tdata(t))[0] : ((const double *)ol_tdata(t))[0];
  return true;
}

/* The node producing name when it is op with name its only read value. */
static int sole_producer(const ol_graph *g, const char *name, const char *op) {
  int p = ol_paged_producer(g, name);
  return p >= 0 && ol_paged_is_op(&g->nodes[p], op) && ol_paged_readers(g, name) == 1 ? p : -1;
}

typedef struct concat_match {
  int concat_k, concat_v, matmul_scores;
} concat_match;

/* Matches a layer ending in MatMul node m (Y = MatMul(P, Vr)) whose score
 * scale is PagedAttention's, 1 / sqrt(head size). */
static bool match(const ol_graph *g, int m, paged_layer *layer, concat_match *c) {
  const ol_node *mv = &g->nodes[m];
  if (!ol_paged_is_op(mv, "MatMul") || mv->num_inputs != 2) return false;
  c->concat_v = cache_behind(g, mv->inputs[1], layer);
  int sm = sole_producer(g, mv->inputs[0], "Softmax");
  if (c->concat_v < 0 || sm < 0 || ol_attr_int(&g->nodes[sm], "axis", -1) != -1 || !replace(layer, sm)) return false;
  const char *scaled = g->nodes[sm].inputs[0];
  int add = sole_producer(g, scaled, "Add");
  if (add >= 0) { /* the mask: whichever side is not the scaled scores */
    if (!replace(layer, add)) return false;
    int a0 = ol_paged_producer(g, g->nodes[add].inputs[0]);
    bool first = a0 >= 0 && (ol_paged_is_op(&g->nodes[a0], "Div") || ol_paged_is_op(&g->nodes[a0], "Mul"));
    scaled = g->nodes[add].inputs[first ? 0 : 1];
  }
  int sc = ol_paged_producer(g, scaled);
  if (sc < 0 || ol_paged_readers(g, scaled) != 1 ||
      (!ol_paged_is_op(&g->nodes[sc], "Div") && !ol_paged_is_op(&g->nodes[sc], "Mul")))
    return false;
  double k;
  if (!scalar_constant(g, g->nodes[sc].inputs[1], &k) || !replace(layer, sc)) return false;
  c->matmul_scores = sole_producer(g, g->nodes[sc].inputs[0], "MatMul");
  if (c->matmul_scores < 0 || !replace(layer, c->matmul_scores)) return false;
  int tr = sole_producer(g, g->nodes[c->matmul_scores].inputs[1], "Transpose");
  if (tr < 0) return false;
  const ol_attr *perm = ol_node_attr(&g->nodes[tr], "perm");
  if (!perm || perm->count != 4 || perm->ints[0] != 0 || perm->ints[1] != 1 || perm->ints[2] != 3 || perm->ints[3] != 2 ||
      !replace(layer, tr))
    return false;
  c->concat_k = cache_behind(g, g->nodes[tr].inputs[0], layer);
  if (c->concat_k < 0) return false;
  double scale = ol_paged_is_op(&g->nodes[sc], "Div") ? 1.0 / k : k;
  int64_t dk = ol_paged_declared_head_size(g, g->nodes[c->concat_k].inputs[0]);
  return dk > 0 && fabs(scale * sqrt((double)dk) - 1.0) < 1e-6;
}

ol_status ol_paged_match_concat(paged_build *b, int i, paged_layer *layer, bool *matched) {
  const ol_graph *g = b->g;
  concat_match c;
  *matched = false;
  if (!match(g, i, layer, &c) || !replace(layer, i) || !replace(layer, c.concat_k) || !replace(layer, c.concat_v))
    return OL_OK;
  const ol_node *ck = &g->nodes[c.concat_k], *cv = &g->nodes[c.concat_v];
  layer->past_k = ck->inputs[0], layer->past_v = cv->inputs[0];
  layer->present_k = ck->outputs[0], layer->present_v = cv->outputs[0];
  layer->anchor = i;
  *matched = true;
  ol_paged_emit_attention(b, layer, g->nodes[c.matmul_scores].inputs[0], ck->inputs[1], cv->inputs[1],
                          g->nodes[i].outputs[0], true);
  return OL_OK;
}
