/* A decoder rewritten onto paged KV caches (the C side of toPagedModel).
 *
 * Recognized form, per layer (torch exports, the bench's plain form):
 *   present_k = Concat(past_k, K, axis = 2)     past_k a graph input, present_k a graph output
 *   present_v = Concat(past_v, V, axis = 2)     likewise
 *   Kr, Vr    = present_k, present_v through Unsqueeze/Expand/Reshape (repeat_kv, optional)
 *   S = MatMul(Q, Transpose(Kr, perm = [0, 1, 3, 2]))
 *   P = Softmax(Add(S / sqrt(Dk) or S * (1 / sqrt(Dk)), mask), axis = -1)   (the Add optional)
 *   Y = MatMul(P, Vr)
 * becomes
 *   Y, present = ai.rt::PagedAttention(Q, K, V, past)     past <- present bound
 * with one paged-cache input `<prefix>` replacing `<prefix>.key` and
 * `<prefix>.value` (the same for outputs), declared with a layout-less
 * struct_type. The attention mask is then unused: PagedAttention is causal
 * (left padding is not supported on paged caches). Nodes that only fed the
 * replaced ones are dropped; the conversion fails, naming it, when a node
 * that stays reads a replaced cache input.
 *
 * The result shares the source's weights and unchanged messages
 * (ir/proto_patch.h), like ol_model_bind_persistent. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "ir/model.h"
#include "core/strmap.h"
#include "ir/proto_patch.h"

#define NO_MEMORY ol_error(OL_OUT_OF_MEMORY, "out of memory converting to paged caches")

/* One recognized layer: node indices of the root graph. */
typedef struct paged_layer {
  int concat_k, concat_v, matmul_scores, matmul_values;
  int chain[16]; /* the other nodes it replaces */
  int n_chain;
} paged_layer;

static bool is_op(const ol_node *n, const char *op) {
  return strcmp(n->op_type, op) == 0 && (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0);
}

/* The node producing name (-1: a graph input, initializer or absent). */
static int producer(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_nodes; i++)
    for (size_t o = 0; o < g->nodes[i].num_outputs; o++)
      if (strcmp(g->nodes[i].outputs[o], name) == 0) return (int)i;
  return -1;
}

static size_t readers(const ol_graph *g, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < g->num_nodes; i++)
    for (size_t k = 0; k < g->nodes[i].num_inputs; k++) n += strcmp(g->nodes[i].inputs[k], name) == 0;
  for (size_t o = 0; o < g->num_outputs; o++) n += strcmp(g->outputs[o].name, name) == 0;
  return n;
}

static bool is_graph_input(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return true;
  return false;
}

static bool is_graph_output(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_outputs; i++)
    if (strcmp(g->outputs[i].name, name) == 0) return true;
  return false;
}

/* A cache Concat: Concat(past, new, axis = 2) with past a graph input read
 * only here and the result a graph output. */
static bool is_cache_concat(const ol_graph *g, int i) {
  const ol_node *n = &g->nodes[i];
  return is_op(n, "Concat") && n->num_inputs == 2 && ol_attr_int(n, "axis", 0) == 2 &&
         is_graph_input(g, n->inputs[0]) && is_graph_output(g, n->outputs[0]);
}

/* Follows repeat_kv (Unsqueeze, Expand, Reshape, each with this reader only)
 * back from name to a cache Concat; its index or -1. */
static int cache_behind(const ol_graph *g, const char *name, paged_layer *layer) {
  for (int hops = 0; hops < 8; hops++) {
    int p = producer(g, name);
    if (p < 0) return -1;
    if (is_cache_concat(g, p)) return p;
    const ol_node *n = &g->nodes[p];
    if ((!is_op(n, "Unsqueeze") && !is_op(n, "Expand") && !is_op(n, "Reshape")) || readers(g, name) != 1 ||
        layer->n_chain == 16)
      return -1;
    layer->chain[layer->n_chain++] = p;
    name = n->inputs[0];
  }
  return -1;
}

/* The scalar float constant name (an initializer or a Constant's value). */
static bool scalar_constant(const ol_graph *g, const char *name, double *out) {
  const ol_tensor *t = NULL;
  const ol_initializer *init = ol_graph_find_initializer(g, name);
  if (init && !init->encoded && init->value && init->value->kind == OL_VALUE_TENSOR) t = &init->value->tensor;
  int p = t ? -1 : producer(g, name);
  if (p >= 0 && is_op(&g->nodes[p], "Constant")) {
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
  int p = producer(g, name);
  return p >= 0 && is_op(&g->nodes[p], op) && readers(g, name) == 1 ? p : -1;
}

/* dims[3] of the declared type of graph input name (-1: unknown). */
static int64_t declared_head_size(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0)
      return g->inputs[i].type.rank == 4 ? g->inputs[i].type.dims[3] : -1;
  return -1;
}

/* Matches a layer ending in MatMul node m (Y = MatMul(P, Vr)) whose score
 * scale is PagedAttention's, 1 / sqrt(head size). */
static bool match_layer(const ol_graph *g, int m, paged_layer *layer) {
  const ol_node *mv = &g->nodes[m];
  memset(layer, 0, sizeof *layer);
  if (!is_op(mv, "MatMul") || mv->num_inputs != 2) return false;
  layer->matmul_values = m;
  layer->concat_v = cache_behind(g, mv->inputs[1], layer);
  int sm = sole_producer(g, mv->inputs[0], "Softmax");
  if (layer->concat_v < 0 || sm < 0 || ol_attr_int(&g->nodes[sm], "axis", -1) != -1) return false;
  layer->chain[layer->n_chain++] = sm;
  const char *scaled = g->nodes[sm].inputs[0];
  int add = sole_producer(g, scaled, "Add");
  if (add >= 0) { /* the mask: whichever side is not the scaled scores */
    layer->chain[layer->n_chain++] = add;
    int a0 = producer(g, g->nodes[add].inputs[0]);
    bool first = a0 >= 0 && (is_op(&g->nodes[a0], "Div") || is_op(&g->nodes[a0], "Mul"));
    scaled = g->nodes[add].inputs[first ? 0 : 1];
  }
  int sc = producer(g, scaled);
  if (sc < 0 || readers(g, scaled) != 1 || (!is_op(&g->nodes[sc], "Div") && !is_op(&g->nodes[sc], "Mul"))) return false;
  double c;
  if (!scalar_constant(g, g->nodes[sc].inputs[1], &c)) return false;
  layer->chain[layer->n_chain++] = sc;
  int ms = sole_producer(g, g->nodes[sc].inputs[0], "MatMul");
  if (ms < 0) return false;
  layer->matmul_scores = ms;
  int tr = sole_producer(g, g->nodes[ms].inputs[1], "Transpose");
  if (tr < 0) return false;
  const ol_attr *perm = ol_node_attr(&g->nodes[tr], "perm");
  if (!perm || perm->count != 4 || perm->ints[0] != 0 || perm->ints[1] != 1 || perm->ints[2] != 3 || perm->ints[3] != 2)
    return false;
  layer->chain[layer->n_chain++] = tr;
  layer->concat_k = cache_behind(g, g->nodes[tr].inputs[0], layer);
  if (layer->concat_k < 0) return false;
  double scale = is_op(&g->nodes[sc], "Div") ? 1.0 / c : c;
  int64_t dk = declared_head_size(g, g->nodes[layer->concat_k].inputs[0]);
  return dk > 0 && fabs(scale * sqrt((double)dk) - 1.0) < 1e-6;
}

/* ------------------------------------------------------------ the new graph */

/* Strips ".key" / ".value" from a cache input or output name. */
static char *cache_name(ol_proto_patch *p, const char *name) {
  size_t n = strlen(name);
  if (n > 4 && strcmp(name + n - 4, ".key") == 0) n -= 4;
  else if (n > 6 && strcmp(name + n - 6, ".value") == 0) n -= 6;
  char *s = ol_proto_patch_alloc(p, n + 1);
  if (s) memcpy(s, name, n);
  return s;
}

static Onnx__TypeProto *cache_type(ol_proto_patch *p) {
  Onnx__TypeProto *t = ol_proto_patch_alloc(p, sizeof *t);
  Onnx__StructTypeProto *st = ol_proto_patch_alloc(p, sizeof *st);
  if (!t || !st) return NULL;
  onnx__type_proto__init(t);
  onnx__struct_type_proto__init(st); /* layout-less: a paged cache */
  t->value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  t->struct_type = st;
  return t;
}

static Onnx__ValueInfoProto *cache_info(ol_proto_patch *p, char *name) {
  Onnx__ValueInfoProto *v = ol_proto_patch_alloc(p, sizeof *v);
  Onnx__TypeProto *t = cache_type(p);
  if (!v || !t) return NULL;
  onnx__value_info_proto__init(v);
  v->name = name;
  v->type = t;
  return v;
}

static Onnx__AttributeProto *int_attribute(ol_proto_patch *p, const char *name, int64_t value) {
  Onnx__AttributeProto *a = ol_proto_patch_alloc(p, sizeof *a);
  char *n = ol_proto_patch_strdup(p, name);
  if (!a || !n) return NULL;
  onnx__attribute_proto__init(a);
  a->name = n;
  a->has_type = 1;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = 1;
  a->i = value;
  return a;
}

/* The PagedAttention node of layer: (Q, K, V, past) -> (Y, present). */
static Onnx__NodeProto *paged_node(ol_proto_patch *p, const ol_graph *g, const paged_layer *l, char *past,
                                   char *present, const ol_paged_model_options *o) {
  Onnx__NodeProto *n = ol_proto_patch_alloc(p, sizeof *n);
  char **in = ol_proto_patch_alloc(p, 4 * sizeof *in), **out = ol_proto_patch_alloc(p, 2 * sizeof *out);
  Onnx__AttributeProto **attrs = ol_proto_patch_alloc(p, 3 * sizeof *attrs);
  char name[512];
  snprintf(name, sizeof name, "%s/paged_attention", past);
  char *node_name = ol_proto_patch_strdup(p, name), *op = ol_proto_patch_strdup(p, "PagedAttention"),
       *domain = ol_proto_patch_strdup(p, "ai.rt");
  if (!n || !in || !out || !attrs || !node_name || !op || !domain) return NULL;
  onnx__node_proto__init(n);
  const Onnx__GraphProto *gp = (const Onnx__GraphProto *)g->proto;
  in[0] = gp->node[l->matmul_scores]->input[0];
  in[1] = gp->node[l->concat_k]->input[1];
  in[2] = gp->node[l->concat_v]->input[1];
  in[3] = past;
  out[0] = gp->node[l->matmul_values]->output[0];
  out[1] = present;
  n->name = node_name, n->op_type = op, n->domain = domain;
  n->n_input = 4, n->input = in, n->n_output = 2, n->output = out;
  attrs[n->n_attribute++] = int_attribute(p, "block_size", o->block_size);
  attrs[n->n_attribute++] = int_attribute(p, "max_tokens", o->max_tokens);
  if (o->left_window_size >= 0) attrs[n->n_attribute++] = int_attribute(p, "left_window_size", o->left_window_size);
  for (size_t a = 0; a < n->n_attribute; a++)
    if (!attrs[a]) return NULL;
  n->attribute = attrs;
  return n;
}

/* ------------------------------------------------------------ liveness */

/* Adds every name a subgraph reads (its captures among them) to needed. */
static ol_status need_subgraph_reads(const Onnx__GraphProto *g, ol_strmap *needed) {
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && n->input[k][0]) OL_TRY(ol_strmap_put(needed, n->input[k], 1));
    for (size_t a = 0; a < n->n_attribute; a++) {
      if (n->attribute[a]->g) OL_TRY(need_subgraph_reads(n->attribute[a]->g, needed));
      for (size_t k = 0; k < n->attribute[a]->n_graphs; k++) OL_TRY(need_subgraph_reads(n->attribute[a]->graphs[k], needed));
    }
  }
  return OL_OK;
}

/* live[i]: node i (of a topologically sorted list) feeds a graph output. */
static ol_status mark_live(Onnx__NodeProto *const *nodes, size_t n_nodes, Onnx__ValueInfoProto *const *outputs,
                           size_t n_outputs, bool *live) {
  ol_strmap needed;
  ol_strmap_init(&needed);
  ol_status s = OL_OK;
  for (size_t k = 0; k < n_outputs && s == OL_OK; k++) s = ol_strmap_put(&needed, outputs[k]->name, 1);
  for (size_t i = n_nodes; s == OL_OK && i-- > 0;) {
    const Onnx__NodeProto *n = nodes[i];
    for (size_t o = 0; o < n->n_output && !live[i]; o++)
      live[i] = n->output[o] && n->output[o][0] && ol_strmap_get(&needed, n->output[o]) >= 0;
    if (!live[i]) continue;
    for (size_t k = 0; k < n->n_input && s == OL_OK; k++)
      if (n->input[k] && n->input[k][0]) s = ol_strmap_put(&needed, n->input[k], 1);
    for (size_t a = 0; a < n->n_attribute && s == OL_OK; a++) {
      if (n->attribute[a]->g) s = need_subgraph_reads(n->attribute[a]->g, &needed);
      for (size_t k = 0; k < n->attribute[a]->n_graphs && s == OL_OK; k++)
        s = need_subgraph_reads(n->attribute[a]->graphs[k], &needed);
    }
  }
  ol_strmap_free(&needed);
  return s == OL_OK ? OL_OK : NO_MEMORY;
}

/* ------------------------------------------------------------ assembling */

typedef struct converter {
  ol_proto_patch *p;
  const ol_graph *g;
  const Onnx__GraphProto *src;
  Onnx__GraphProto *dst;
  paged_layer *layers;
  size_t n_layers;
} converter;

/* Rewrites the root graph's nodes, inputs, outputs and bindings. */
static ol_status assemble(converter *c, const ol_paged_model_options *o) {
  const Onnx__GraphProto *src = c->src;
  Onnx__GraphProto *dst = c->dst;
  size_t n = src->n_node;
  bool *replaced = calloc(n + 1, 1), *live = calloc(n + c->n_layers + 1, 1);
  Onnx__NodeProto **nodes = ol_proto_patch_alloc(c->p, (n + c->n_layers + 1) * sizeof *nodes);
  Onnx__ValueInfoProto **inputs = ol_proto_patch_alloc(c->p, (src->n_input + c->n_layers + 1) * sizeof *inputs);
  Onnx__ValueInfoProto **outputs = ol_proto_patch_alloc(c->p, (src->n_output + c->n_layers + 1) * sizeof *outputs);
  Onnx__PersistentBindingProto **bindings =
      ol_proto_patch_alloc(c->p, (src->n_persistent_bindings + c->n_layers + 1) * sizeof *bindings);
  ol_status s = replaced && live && nodes && inputs && outputs && bindings ? OL_OK : NO_MEMORY;
  char **past = calloc(c->n_layers + 1, sizeof *past), **present = calloc(c->n_layers + 1, sizeof *present);
  if (!past || !present) s = NO_MEMORY;
  for (size_t l = 0; s == OL_OK && l < c->n_layers; l++) {
    const paged_layer *L = &c->layers[l];
    replaced[L->concat_k] = replaced[L->concat_v] = replaced[L->matmul_scores] = replaced[L->matmul_values] = true;
    for (int k = 0; k < L->n_chain; k++) replaced[L->chain[k]] = true;
    past[l] = cache_name(c->p, src->node[L->concat_k]->input[0]);
    present[l] = cache_name(c->p, src->node[L->concat_k]->output[0]);
    if (!past[l] || !present[l]) s = NO_MEMORY;
  }
  /* nodes in order, each layer's PagedAttention where its last MatMul was */
  size_t count = 0;
  for (size_t i = 0; s == OL_OK && i < n; i++) {
    for (size_t l = 0; l < c->n_layers; l++)
      if ((size_t)c->layers[l].matmul_values == i) {
        nodes[count] = paged_node(c->p, c->g, &c->layers[l], past[l], present[l], o);
        if (!nodes[count++]) s = NO_MEMORY;
      }
    if (!replaced[i]) nodes[count++] = src->node[i];
  }
  /* interface: cache pairs become one cache each */
  size_t ni = 0, no = 0;
  for (size_t i = 0; s == OL_OK && i < src->n_input; i++) {
    bool cache = false;
    for (size_t l = 0; l < c->n_layers; l++)
      cache |= strcmp(src->input[i]->name, src->node[c->layers[l].concat_k]->input[0]) == 0 ||
               strcmp(src->input[i]->name, src->node[c->layers[l].concat_v]->input[0]) == 0;
    if (!cache) inputs[ni++] = src->input[i];
  }
  for (size_t i = 0; s == OL_OK && i < src->n_output; i++) {
    bool cache = false;
    for (size_t l = 0; l < c->n_layers; l++)
      cache |= strcmp(src->output[i]->name, src->node[c->layers[l].concat_k]->output[0]) == 0 ||
               strcmp(src->output[i]->name, src->node[c->layers[l].concat_v]->output[0]) == 0;
    if (!cache) outputs[no++] = src->output[i];
  }
  for (size_t l = 0; s == OL_OK && l < c->n_layers; l++) {
    inputs[ni] = cache_info(c->p, past[l]);
    outputs[no] = cache_info(c->p, present[l]);
    Onnx__PersistentBindingProto *b = ol_proto_patch_alloc(c->p, sizeof *b);
    if (!inputs[ni] || !outputs[no] || !b) s = NO_MEMORY;
    else {
      onnx__persistent_binding_proto__init(b);
      b->input_name = past[l];
      b->output_name = present[l];
      bindings[l] = b;
      ni++, no++;
    }
  }
  if (s == OL_OK) {
    s = mark_live(nodes, count, outputs, no, live);
  }
  if (s == OL_OK) {
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
      if (live[i]) nodes[kept++] = nodes[i];
    dst->node = nodes, dst->n_node = kept;
    dst->input = inputs, dst->n_input = ni;
    dst->output = outputs, dst->n_output = no;
    dst->persistent_bindings = bindings, dst->n_persistent_bindings = c->n_layers;
    dst->n_value_info = 0; /* names may be gone; shape inference records them again */
  }
  /* a kept node must not read a replaced cache input */
  for (size_t i = 0; s == OL_OK && i < dst->n_node; i++)
    for (size_t k = 0; k < dst->node[i]->n_input && s == OL_OK; k++)
      for (size_t l = 0; l < c->n_layers && s == OL_OK; l++) {
        const char *in = dst->node[i]->input[k];
        const char *pk = src->node[c->layers[l].concat_k]->input[0], *pv = src->node[c->layers[l].concat_v]->input[0];
        if (in && (strcmp(in, pk) == 0 || strcmp(in, pv) == 0))
          s = ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: node '%s' (%s) reads the cache input '%s' "
                                           "besides the attention",
                       dst->node[i]->name ? dst->node[i]->name : "", dst->node[i]->op_type, in);
      }
  free(replaced);
  free(live);
  free(past);
  free(present);
  return s;
}

/* Adds ai.rt version 1 to the opset imports when missing. */
static ol_status import_rt(ol_proto_patch *p, Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; i++)
    if (m->opset_import[i]->domain && strcmp(m->opset_import[i]->domain, "ai.rt") == 0) return OL_OK;
  Onnx__OperatorSetIdProto **list = ol_proto_patch_alloc(p, (m->n_opset_import + 1) * sizeof *list);
  Onnx__OperatorSetIdProto *rt = ol_proto_patch_alloc(p, sizeof *rt);
  char *domain = ol_proto_patch_strdup(p, "ai.rt");
  if (!list || !rt || !domain) return NO_MEMORY;
  memcpy(list, m->opset_import, m->n_opset_import * sizeof *list);
  onnx__operator_set_id_proto__init(rt);
  rt->domain = domain;
  rt->has_version = 1;
  rt->version = 1;
  list[m->n_opset_import++] = rt;
  m->opset_import = list;
  return OL_OK;
}

void ol_paged_model_options_init(ol_paged_model_options *o) {
  o->block_size = 16;
  o->max_tokens = 4096;
  o->left_window_size = -1;
}

ol_status ol_model_to_paged(const ol_model *model, const ol_paged_model_options *options, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_to_paged: out is NULL");
  *out = NULL;
  if (!model) return ol_error(OL_INVALID_ARGUMENT, "ol_model_to_paged: model is NULL");
  ol_paged_model_options o;
  ol_paged_model_options_init(&o);
  if (options) o = *options;
  if (o.block_size <= 0 || o.max_tokens <= 0 || o.left_window_size < -1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_to_paged: block_size and max_tokens must be positive and "
                                         "left_window_size -1 or >= 0");
  const ol_graph *g = model->data->graph;
  if (model->data->proto->graph->n_persistent_bindings)
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_to_paged: the model already has persistent bindings");
  paged_layer *layers = calloc(g->num_nodes + 1, sizeof *layers);
  if (!layers) return NO_MEMORY;
  size_t n_layers = 0;
  for (size_t i = 0; i < g->num_nodes; i++)
    if (match_layer(g, (int)i, &layers[n_layers])) n_layers++;
  if (!n_layers) {
    free(layers);
    return ol_error(OL_NOT_IMPLEMENTED, "ol_model_to_paged: no attention over a Concat(past, new) cache pair was "
                                        "recognized (see docs/paged-cache.md for the supported forms)");
  }
  ol_proto_patch *p = calloc(1, sizeof *p);
  const Onnx__ModelProto *sm = model->data->proto;
  Onnx__ModelProto *m = p ? ol_proto_patch_copy(p, sm, sizeof *sm) : NULL;
  Onnx__GraphProto *dst = m ? ol_proto_patch_copy(p, sm->graph, sizeof *sm->graph) : NULL;
  ol_status s = dst ? OL_OK : NO_MEMORY;
  if (s == OL_OK) {
    m->graph = dst;
    converter c = {p, g, sm->graph, dst, layers, n_layers};
    s = assemble(&c, &o);
  }
  if (s == OL_OK) s = import_rt(p, m);
  free(layers);
  if (s != OL_OK) {
    ol_proto_patch_free(p);
    return s;
  }
  return ol_model_from_patch(p, m, model->data->owner, out);
}
