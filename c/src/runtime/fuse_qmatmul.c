/* MatMul + Dequantize fusion (see fuse_qmatmul.h). */
#include "runtime/fuse_qmatmul.h"

#include <stdlib.h>
#include <string.h>

#include "ir/model.h"
#include "ops/qmatmul.h"

static bool is_dequantize_float(const ol_node *d) {
  if (strcmp(d->op_type, "Dequantize") != 0 || strcmp(d->domain, "ai.rt") != 0 || d->num_inputs != 1 ||
      !d->inputs[0][0] || d->num_outputs != 1)
    return false;
  const ol_attr *dtype = ol_node_attr(d, "dtype");
  return dtype && dtype->type == OL_ATTR_INT && dtype->i == OL_DTYPE_FLOAT;
}

/* The encoded initializer named name, unless a graph input overrides it. */
static ol_value *constant_encoded(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return NULL;
  const ol_initializer *init = ol_graph_find_initializer(g, name);
  return init && init->encoded ? init->value : NULL;
}

ol_status ol_fuse_dequantized_b(const ol_graph *g, const int32_t *producer, int32_t *const *use_slots,
                                const size_t *use_counts, const int32_t *output_slots, bool *skip,
                                int32_t *bypass, ol_kernel **kernels) {
  const ol_type_catalogue *types = g->model ? g->model->types : NULL;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *m = &g->nodes[i];
    if (strcmp(m->op_type, "MatMul") != 0 || (m->domain[0] && strcmp(m->domain, "ai.onnx") != 0) ||
        m->num_inputs != 2 || !m->inputs[0][0] || !m->inputs[1][0] || use_counts[i] < 2 || bypass[i] >= 0)
      continue;
    int32_t wslot = use_slots[i][1];
    int32_t di = wslot >= 0 ? producer[wslot] : -1;
    if (di < 0 || skip[di] || !is_dequantize_float(&g->nodes[di]) || use_counts[di] != 1) continue;
    size_t readers = 0;
    for (size_t j = 0; j < g->num_nodes; j++)
      for (size_t k = 0; k < use_counts[j]; k++) readers += use_slots[j][k] == wslot;
    for (size_t o = 0; o < g->num_outputs; o++) readers += output_slots[o] == wslot;
    ol_value *encoded = constant_encoded(g, g->nodes[di].inputs[0]);
    if (readers != 1 || !encoded) continue;
    ol_kernel *kernel = NULL;
    OL_TRY(ol_qmatmul_create(m, encoded, types, &kernel));
    if (!kernel) continue; /* layout not eligible: Dequantize + MatMul as written */
    int32_t eslot = use_slots[di][0];
    skip[di] = true;
    bypass[i] = eslot;
    kernels[i] = kernel;
    for (size_t k = 0; k < use_counts[i]; k++)
      if (use_slots[i][k] == wslot) use_slots[i][k] = eslot;
  }
  return OL_OK;
}

void ol_fuse_kernels_free(ol_kernel **kernels, size_t n) {
  for (size_t i = 0; kernels && i < n; i++)
    if (kernels[i]) {
      if (kernels[i]->destroy) kernels[i]->destroy(kernels[i]);
      else free(kernels[i]);
      kernels[i] = NULL;
    }
}
