/* Plan-time fusions (see fuse.h). */
#include "runtime/fuse.h"

#include <stdlib.h>
#include <string.h>

static bool same_domain(const char *a, const char *b) {
  if (strcmp(a, "ai.onnx") == 0) a = "";
  if (strcmp(b, "ai.onnx") == 0) b = "";
  return strcmp(a, b) == 0;
}

/* Position of node input `input` in its use_slots (nonempty inputs first), or -1 when absent. */
static int use_index(const ol_node *n, size_t input) {
  if (input >= n->num_inputs || !n->inputs[input][0]) return -1;
  int k = 0;
  for (size_t j = 0; j < input; j++) k += n->inputs[j][0] != 0;
  return k;
}

static size_t readers_of(const ol_graph *g, int32_t slot, int32_t *const *use_slots, const size_t *use_counts,
                         const int32_t *output_slots) {
  size_t readers = 0;
  for (size_t j = 0; j < g->num_nodes; j++)
    for (size_t k = 0; k < use_counts[j]; k++) readers += use_slots[j][k] == slot;
  for (size_t o = 0; o < g->num_outputs; o++) readers += output_slots[o] == slot;
  return readers;
}

/* The initializer named name, unless a graph input overrides it. */
static const ol_initializer *constant_of(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return NULL;
  return ol_graph_find_initializer(g, name);
}

/* Tries fusion f at node i: OL_OK with fused[i].kernel set when it applies. */
static ol_status try_fusion(const ol_graph *g, size_t i, const ol_fusion *f, const int32_t *producer,
                            int32_t *const *use_slots, const size_t *use_counts, const int32_t *output_slots,
                            bool *skip, ol_fused *fused) {
  const ol_node *n = &g->nodes[i];
  int u = use_index(n, f->input);
  if (u < 0 || (size_t)u >= use_counts[i]) return OL_OK;
  int32_t slot = use_slots[i][u];
  int32_t pi = slot >= 0 ? producer[slot] : -1;
  if (pi < 0 || skip[pi]) return OL_OK;
  const ol_node *p = &g->nodes[pi];
  if (strcmp(p->op_type, f->producer_op) != 0 || !same_domain(p->domain, f->producer_domain) ||
      p->num_outputs != 1 || p->num_inputs < 1 || !p->inputs[0][0] || use_counts[pi] != 1 ||
      readers_of(g, slot, use_slots, use_counts, output_slots) != 1)
    return OL_OK;
  ol_fusion_site site = {g, n, p, f->input, constant_of(g, p->inputs[0])};
  ol_kernel *kernel = NULL;
  OL_TRY(f->create(&site, &kernel));
  if (!kernel) return OL_OK;
  int32_t source = use_slots[pi][0];
  skip[pi] = true;
  fused[i] = (ol_fused){kernel, f, source};
  for (size_t k = 0; k < use_counts[i]; k++)
    if (use_slots[i][k] == slot) use_slots[i][k] = source;
  return OL_OK;
}

ol_status ol_fuse_apply(const ol_graph *g, const ol_op_schema *const *rows, const int32_t *producer,
                        int32_t *const *use_slots, const size_t *use_counts, const int32_t *output_slots,
                        bool *skip, ol_fused *fused) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    if (skip[i] || !rows[i] || !rows[i]->fusions) continue;
    for (const ol_fusion *f = rows[i]->fusions; f->create && !fused[i].kernel; f++)
      OL_TRY(try_fusion(g, i, f, producer, use_slots, use_counts, output_slots, skip, fused));
  }
  return OL_OK;
}

void ol_fused_free(ol_fused *fused, size_t n) {
  for (size_t i = 0; fused && i < n; i++)
    if (fused[i].kernel) {
      if (fused[i].kernel->destroy) fused[i].kernel->destroy(fused[i].kernel);
      else free(fused[i].kernel);
      fused[i].kernel = NULL;
    }
}
