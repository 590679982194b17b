/* Plan-time rewrites (see fuse.h). */
#include "runtime/fuse.h"

#include <string.h>

static bool is_op(const ol_node *n, const char *op) {
  return strcmp(n->op_type, op) == 0 && (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0);
}

/* perm = [0, 1, ..., r-3, r-1, r-2] with r >= 2 */
static bool swaps_last_two(const ol_node *t) {
  const ol_attr *perm = ol_node_attr(t, "perm");
  if (!perm || perm->type != OL_ATTR_INTS || perm->count < 2) return false;
  size_t r = perm->count;
  for (size_t i = 0; i + 2 < r; i++)
    if (perm->ints[i] != (int64_t)i) return false;
  return perm->ints[r - 2] == (int64_t)(r - 1) && perm->ints[r - 1] == (int64_t)(r - 2);
}

void ol_fuse_transposed_b(const ol_graph *g, const int32_t *producer,
                          int32_t *const *use_slots, const size_t *use_counts, const int32_t *output_slots,
                          bool *skip, int32_t *bypass) {
  for (size_t i = 0; i < g->num_nodes; i++) bypass[i] = -1;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *m = &g->nodes[i];
    if (!is_op(m, "MatMul") || m->num_inputs != 2 || !m->inputs[0][0] || !m->inputs[1][0] || use_counts[i] < 2)
      continue;
    int32_t tslot = use_slots[i][1];
    int32_t ti = tslot >= 0 ? producer[tslot] : -1;
    if (ti < 0) continue;
    const ol_node *t = &g->nodes[ti];
    if (skip[ti] || !is_op(t, "Transpose") || t->num_inputs != 1 || !t->inputs[0][0] || t->num_outputs != 1 ||
        use_counts[ti] != 1 || !swaps_last_two(t))
      continue;
    /* the transposed value must have this single reader */
    size_t readers = 0;
    for (size_t j = 0; j < g->num_nodes; j++)
      for (size_t k = 0; k < use_counts[j]; k++) readers += use_slots[j][k] == tslot;
    for (size_t o = 0; o < g->num_outputs; o++) readers += output_slots[o] == tslot;
    if (readers != 1) continue;
    int32_t bslot = use_slots[ti][0];
    skip[ti] = true;
    bypass[i] = bslot;
    for (size_t k = 0; k < use_counts[i]; k++)
      if (use_slots[i][k] == tslot) use_slots[i][k] = bslot;
  }
}
