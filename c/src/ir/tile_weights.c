/* Load-time layouts of weights (see tile_weights.h): float MatMul weights
 * tiled, MatMulNBits weights and scales in the lane layout. */
#include "ir/tile_weights.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/strmap.h"

static bool is_matmul(const ol_node *n) {
  return strcmp(n->op_type, "MatMul") == 0 && (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0);
}

static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* A MatMulNBits node whose kernel runs the lane kernel on lane-layout weights
 * (simd/qgemv_i8_lane.h): int8 activations (accuracy_level 4, blocks up to
 * 256), 4 or 8 bits, at least one group of OL_LANE_GROUP outputs, no g_idx.
 * Its zero points are checked with the graph (node_pairs). */
static bool is_lane_nbits(const ol_node *n) {
  if (strcmp(n->op_type, "MatMulNBits") != 0 || strcmp(n->domain, "com.microsoft") != 0 || n->num_inputs < 3 ||
      !n->inputs[1][0] || !n->inputs[2][0] || (n->num_inputs > 4 && n->inputs[4][0]))
    return false;
  int64_t bits = ol_attr_int(n, "bits", 4), bs = ol_attr_int(n, "block_size", -1);
  return (bits == 4 || bits == 8) && bs >= 16 && bs <= 256 && pow2(bs) && ol_attr_int(n, "accuracy_level", 0) == 4 &&
         ol_attr_int(n, "K", -1) >= 1 && ol_attr_int(n, "N", -1) >= OL_LANE_GROUP;
}

/* How the graph reads a name: a combination of these. */
enum { ROLE_MATMUL_B = 1, ROLE_NBITS_B = 2, ROLE_NBITS_SCALES = 4, ROLE_OTHER = 8 };

static void add_role(ol_strmap *roles, const char *name, int32_t role) {
  int32_t r = ol_strmap_get(roles, name);
  /* a failed insertion costs speed, never correctness: readers that do not
   * declare a layout get dense copies */
  (void)ol_strmap_put(roles, name, (r < 0 ? 0 : r) | role);
}

/* Records how g (and its subgraphs) reads each name: B of the root graph's
 * MatMul nodes, B or scales of its lane MatMulNBits nodes, or otherwise
 * (root: g is the root graph). */
static void mark_readers(const ol_graph *g, bool root, ol_strmap *roles) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    bool lane = root && is_lane_nbits(n);
    for (size_t j = 0; j < n->num_inputs; j++) {
      if (!n->inputs[j][0]) continue;
      int32_t role = !root ? ROLE_OTHER
                     : j == 1 && is_matmul(n) ? ROLE_MATMUL_B
                     : lane && j == 1 ? ROLE_NBITS_B
                     : lane && j == 2 ? ROLE_NBITS_SCALES
                                      : ROLE_OTHER;
      add_role(roles, n->inputs[j], role);
    }
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *at = &n->attrs[a];
      if (at->graph) mark_readers(at->graph, false, roles);
      for (size_t k = 0; at->graphs && k < at->count; k++) mark_readers(at->graphs[k], false, roles);
    }
    if (n->function_body) mark_readers(n->function_body, false, roles);
  }
}

static void mark_annotated(const Onnx__GraphProto *gp, ol_strmap *roles) {
  for (size_t i = 0; i < gp->n_quantization_annotation; i++) {
    const Onnx__TensorAnnotation *a = gp->quantization_annotation[i];
    if (a->tensor_name) add_role(roles, a->tensor_name, ROLE_OTHER);
    for (size_t k = 0; k < a->n_quant_parameter_tensor_names; k++)
      if (a->quant_parameter_tensor_names[k]->value) add_role(roles, a->quant_parameter_tensor_names[k]->value, ROLE_OTHER);
  }
}

static uint8_t *view_data(const ol_proto_owner *owner, const ol_wire_view *v) {
  return v->copy ? v->copy : owner->wire + v->offset;
}

/* The plain tensor initializer named name whose payload is a wire view
 * (views: name -> view index), else NULL. */
static ol_tensor *viewed(const ol_graph *g, const ol_strmap *views, const char *name) {
  if (ol_strmap_get(views, name) < 0) return NULL;
  const ol_initializer *init = ol_graph_find_initializer(g, name);
  return init && !init->encoded && init->value && init->value->kind == OL_VALUE_TENSOR ? &init->value->tensor : NULL;
}

/* A lane MatMulNBits node lays out its B and scales together or neither:
 * both must be viewed initializers of the expected type and size that only
 * such nodes read in that role, all of them with the same N, and the zero
 * points absent or a uint8 initializer. A node that fails marks both names
 * read otherwise, which may make another node fail: repeated until stable.
 * rows: name -> N. */
static void node_pairs(const ol_graph *g, const ol_strmap *views, ol_strmap *roles, ol_strmap *rows) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    if (!is_lane_nbits(n)) continue;
    int64_t N = ol_attr_int(n, "N", -1);
    for (int j = 1; j <= 2; j++) {
      int32_t r = ol_strmap_get(rows, n->inputs[j]);
      if (N > INT32_MAX || (r >= 0 && r != N) || (r < 0 && ol_strmap_put(rows, n->inputs[j], (int32_t)N) != OL_OK))
        add_role(roles, n->inputs[j], ROLE_OTHER);
    }
  }
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g->num_nodes; i++) {
      const ol_node *n = &g->nodes[i];
      if (!is_lane_nbits(n)) continue;
      const char *b = n->inputs[1], *sc = n->inputs[2];
      int64_t K = ol_attr_int(n, "K", -1), N = ol_attr_int(n, "N", -1), bits = ol_attr_int(n, "bits", 4);
      int64_t bs = ol_attr_int(n, "block_size", -1), kb = (K + bs - 1) / bs;
      const ol_tensor *tb = viewed(g, views, b), *ts = viewed(g, views, sc), *tz = NULL;
      bool ok = tb && ts && ol_strmap_get(roles, b) == ROLE_NBITS_B && ol_strmap_get(roles, sc) == ROLE_NBITS_SCALES &&
                tb->dtype == OL_DTYPE_UINT8 && tb->dims[0] == N && ol_tcount(tb) == N * kb * (bs * bits / 8) &&
                ts->dtype == OL_DTYPE_FLOAT && ol_tcount(ts) == N * kb;
      if (ok && n->num_inputs > 3 && n->inputs[3][0]) {
        const ol_initializer *z = ol_graph_find_initializer(g, n->inputs[3]);
        tz = z && !z->encoded && z->value && z->value->kind == OL_VALUE_TENSOR ? &z->value->tensor : NULL;
        bool input = false;
        for (size_t k = 0; k < g->num_inputs; k++) input = input || strcmp(g->inputs[k].name, n->inputs[3]) == 0;
        ok = tz && !input && tz->dtype == OL_DTYPE_UINT8;
      }
      for (int j = 1; !ok && j <= 2; j++) {
        int32_t r = ol_strmap_get(roles, n->inputs[j]);
        if (r >= 0 && !(r & ROLE_OTHER)) {
          add_role(roles, n->inputs[j], ROLE_OTHER);
          changed = changed || ol_strmap_get(roles, n->inputs[j]) != r;
        }
      }
    }
  }
}

ol_status ol_model_tile_weights(ol_model_data *d) {
  ol_proto_owner *owner = d->owner;
  ol_graph *g = d->graph;
  if (!owner || !owner->wire || owner->base || !owner->weights.count || !g) return OL_OK;
  ol_strmap roles, views, rows;
  ol_strmap_init(&roles);
  ol_strmap_init(&views);
  ol_strmap_init(&rows);
  mark_readers(g, true, &roles);
  mark_annotated(d->proto->graph, &roles);
  for (size_t i = 0; i < g->num_inputs; i++) add_role(&roles, g->inputs[i].name, ROLE_OTHER);
  for (size_t i = 0; i < g->num_outputs; i++) add_role(&roles, g->outputs[i].name, ROLE_OTHER);
  for (size_t vi = 0; vi < owner->weights.count; vi++) {
    ol_wire_view *v = &owner->weights.views[vi];
    if (v->encoded || v->index >= g->num_initializers) continue;
    ol_initializer *init = &g->initializers[v->index];
    ol_tensor *t = init->value && init->value->kind == OL_VALUE_TENSOR ? &init->value->tensor : NULL;
    if (t && !init->encoded && ol_tdata(t) == view_data(owner, v)) (void)ol_strmap_put(&views, init->name, (int32_t)vi);
  }
  node_pairs(g, &views, &roles, &rows);
  void *scratch = NULL;
  size_t scratch_bytes = 0;
  for (size_t vi = 0; vi < owner->weights.count; vi++) {
    ol_wire_view *v = &owner->weights.views[vi];
    if (v->encoded || v->index >= g->num_initializers) continue;
    ol_initializer *init = &g->initializers[v->index];
    ol_tensor *t = init->value && init->value->kind == OL_VALUE_TENSOR ? &init->value->tensor : NULL;
    if (!t || init->encoded || ol_tdata(t) != view_data(owner, v) || ol_strmap_get(&views, init->name) != (int32_t)vi)
      continue;
    int32_t role = ol_strmap_get(&roles, init->name);
    bool tile = role == ROLE_MATMUL_B && t->dtype == OL_DTYPE_FLOAT && t->rank == 2 && t->dims[1] >= OL_TILE_COLS &&
                t->dims[0] >= 1;
    bool laid = role == ROLE_NBITS_B || role == ROLE_NBITS_SCALES;
    if (!tile && !laid) continue;
    int64_t qrows = laid ? ol_strmap_get(&rows, init->name) : 0;
    size_t row_bytes = laid ? v->length / (size_t)qrows : 0;
    if (laid && (qrows < OL_LANE_GROUP || row_bytes % 4 || row_bytes * (size_t)qrows != v->length)) continue;
    size_t need = tile ? sizeof(float) * (size_t)(OL_TILE_ROWS * t->dims[1]) : OL_LANE_GROUP * row_bytes;
    if (need > scratch_bytes) {
      free(scratch);
      scratch = malloc(need);
      scratch_bytes = scratch ? need : 0;
      if (!scratch) break; /* an optimization: the rest stays dense */
    }
    if (tile) {
      ol_tiles_from_dense(t->dims[0], t->dims[1], OL_TILE_ROWS, ol_tdata(t), scratch);
      t->tile_rows = OL_TILE_ROWS;
      v->tile_rows = OL_TILE_ROWS;
      v->tile_width = t->dims[1];
    } else {
      ol_lanes_from_dense(qrows, row_bytes, ol_tdata(t), scratch);
      t->lane_rows = qrows;
      v->lane_rows = qrows;
    }
  }
  free(scratch);
  ol_strmap_free(&roles);
  ol_strmap_free(&views);
  ol_strmap_free(&rows);
  return OL_OK;
}

const ol_wire_view *ol_proto_owner_find_tiled(const ol_proto_owner *owner, const void *data) {
  for (; owner && data; owner = owner->base) {
    if (!owner->wire) continue;
    for (size_t i = 0; i < owner->weights.count; i++) {
      const ol_wire_view *v = &owner->weights.views[i];
      if ((v->tile_rows || v->lane_rows) && view_data(owner, v) == data) return v;
    }
  }
  return NULL;
}

void ol_tiled_view_to_dense(const ol_wire_view *v, const void *data, void *dense) {
  if (v->lane_rows) {
    ol_lanes_to_dense(v->lane_rows, v->length / (size_t)v->lane_rows, data, dense);
    return;
  }
  const int64_t N = v->tile_width, K = (int64_t)(v->length / sizeof(float)) / N;
  ol_tiles_to_dense(K, N, v->tile_rows, data, dense);
}
