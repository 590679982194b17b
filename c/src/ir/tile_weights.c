/* Load-time tiling of float MatMul weights (see tile_weights.h). */
#include "ir/tile_weights.h"

#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

static bool is_matmul(const ol_node *n) {
  return strcmp(n->op_type, "MatMul") == 0 && (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0);
}

/* Marks every name g (and its subgraphs) reads as disqualified, except B of
 * the root graph's MatMul nodes (root: g is the root graph). */
static void mark_readers(const ol_graph *g, bool root, ol_strmap *other) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    for (size_t j = 0; j < n->num_inputs; j++)
      if (n->inputs[j][0] && !(root && j == 1 && is_matmul(n))) ol_strmap_put(other, n->inputs[j], 1);
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *at = &n->attrs[a];
      if (at->graph) mark_readers(at->graph, false, other);
      for (size_t k = 0; at->graphs && k < at->count; k++) mark_readers(at->graphs[k], false, other);
    }
    if (n->function_body) mark_readers(n->function_body, false, other);
  }
}

static void mark_annotated(const Onnx__GraphProto *gp, ol_strmap *other) {
  for (size_t i = 0; i < gp->n_quantization_annotation; i++) {
    const Onnx__TensorAnnotation *a = gp->quantization_annotation[i];
    if (a->tensor_name) ol_strmap_put(other, a->tensor_name, 1);
    for (size_t k = 0; k < a->n_quant_parameter_tensor_names; k++)
      if (a->quant_parameter_tensor_names[k]->value) ol_strmap_put(other, a->quant_parameter_tensor_names[k]->value, 1);
  }
}

static uint8_t *view_data(const ol_proto_owner *owner, const ol_wire_view *v) {
  return v->copy ? v->copy : owner->wire + v->offset;
}

ol_status ol_model_tile_weights(ol_model_data *d) {
  ol_proto_owner *owner = d->owner;
  ol_graph *g = d->graph;
  if (!owner || !owner->wire || owner->base || !owner->weights.count || !g) return OL_OK;
  /* names read other than as a root MatMul's B. A name lost to a failed
   * insertion costs speed, never correctness: readers that do not declare
   * tiled inputs get dense copies. */
  ol_strmap map, *other = &map;
  ol_strmap_init(other);
  mark_readers(g, true, other);
  mark_annotated(d->proto->graph, other);
  for (size_t i = 0; i < g->num_inputs; i++) ol_strmap_put(other, g->inputs[i].name, 1);
  for (size_t i = 0; i < g->num_outputs; i++) ol_strmap_put(other, g->outputs[i].name, 1);
  float *scratch = NULL;
  size_t scratch_floats = 0;
  for (size_t vi = 0; vi < owner->weights.count; vi++) {
    ol_wire_view *v = &owner->weights.views[vi];
    if (v->encoded || v->index >= g->num_initializers) continue;
    ol_initializer *init = &g->initializers[v->index];
    ol_tensor *t = init->value && init->value->kind == OL_VALUE_TENSOR ? &init->value->tensor : NULL;
    if (!t || init->encoded || t->dtype != OL_DTYPE_FLOAT || t->rank != 2 || t->dims[1] < OL_TILE_COLS ||
        t->dims[0] < 1 || ol_tdata(t) != view_data(owner, v) || ol_strmap_get(other, init->name) >= 0)
      continue;
    size_t need = (size_t)(OL_TILE_ROWS * t->dims[1]);
    if (need > scratch_floats) {
      free(scratch);
      scratch = malloc(sizeof(float) * need);
      scratch_floats = scratch ? need : 0;
      if (!scratch) break; /* tiling is an optimization: the rest stays row-major */
    }
    ol_tiles_from_dense(t->dims[0], t->dims[1], OL_TILE_ROWS, ol_tdata(t), scratch);
    t->tile_rows = OL_TILE_ROWS;
    v->tile_rows = OL_TILE_ROWS;
    v->tile_width = t->dims[1];
  }
  free(scratch);
  ol_strmap_free(other);
  return OL_OK;
}

const ol_wire_view *ol_proto_owner_find_tiled(const ol_proto_owner *owner, const void *data) {
  for (; owner && data; owner = owner->base) {
    if (!owner->wire) continue;
    for (size_t i = 0; i < owner->weights.count; i++) {
      const ol_wire_view *v = &owner->weights.views[i];
      if (v->tile_rows && view_data(owner, v) == data) return v;
    }
  }
  return NULL;
}

void ol_tiled_view_to_dense(const ol_wire_view *v, const void *data, void *dense) {
  const int64_t N = v->tile_width, K = (int64_t)(v->length / sizeof(float)) / N;
  ol_tiles_to_dense(K, N, v->tile_rows, data, dense);
}
