/* A decoder rewritten onto paged KV caches (the C side of toPagedModel).
 *
 * Every cached attention of a recognized form (paged_model_forms.h: the
 * torch Concat form, GroupQueryAttention, Attention 23, MultiHeadAttention)
 * becomes one ai.rt::PagedAttention, with what adapts its inputs and output,
 * in the place of the nodes it replaces; one paged-cache input `<prefix>`
 * replaces `<prefix>.key` and `<prefix>.value` (the same for outputs, bound
 * input <- output), declared with a layout-less struct_type. Masks and
 * sequence lengths then feed nothing: PagedAttention is causal (left padding
 * is not supported on paged caches). Nodes that only fed the replaced ones
 * are dropped; the conversion fails, naming it, when a node that stays reads
 * a replaced cache input or output.
 *
 * The result shares the source's weights and unchanged messages
 * (ir/proto_patch.h), like ol_model_bind_persistent. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/strmap.h"
#include "ir/model.h"
#include "ir/proto_patch.h"
#include "model/paged_model_forms.h"

#define NO_MEMORY ol_error(OL_OUT_OF_MEMORY, "out of memory converting to paged caches")

static const paged_matcher matchers[] = {ol_paged_match_concat, ol_paged_match_gqa, ol_paged_match_attention,
                                         ol_paged_match_mha};

/* ------------------------------------------------------------ the new graph */

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

/* name is a cache input or output some layer replaces. */
static bool replaced_cache(const converter *c, const char *name, bool inputs) {
  for (size_t l = 0; l < c->n_layers; l++) {
    const paged_layer *L = &c->layers[l];
    if (inputs ? strcmp(name, L->past_k) == 0 || strcmp(name, L->past_v) == 0
               : strcmp(name, L->present_k) == 0 || strcmp(name, L->present_v) == 0)
      return true;
  }
  return false;
}

static bool is_new(const converter *c, const Onnx__NodeProto *n) {
  for (size_t l = 0; l < c->n_layers; l++)
    for (int k = 0; k < c->layers[l].n_nodes; k++)
      if (c->layers[l].nodes[k] == n) return true;
  return false;
}

/* A kept node must not read a replaced cache input or output. */
static ol_status check_kept(const converter *c) {
  const Onnx__GraphProto *dst = c->dst;
  for (size_t i = 0; i < dst->n_node; i++)
    for (size_t k = 0; k < dst->node[i]->n_input && !is_new(c, dst->node[i]); k++) {
      const char *in = dst->node[i]->input[k];
      if (in && in[0] && (replaced_cache(c, in, true) || replaced_cache(c, in, false)))
        return ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: node '%s' (%s) reads the cache '%s' "
                                            "besides the attention",
                        dst->node[i]->name ? dst->node[i]->name : "", dst->node[i]->op_type, in);
    }
  return OL_OK;
}

/* Rewrites the root graph's nodes, inputs, outputs and bindings. */
static ol_status assemble(converter *c) {
  const Onnx__GraphProto *src = c->src;
  for (size_t i = 0; i < src->n_paged_cache_initializer; i++) /* defaults of inputs that would be gone */
    if (src->paged_cache_initializer[i]->name && replaced_cache(c, src->paged_cache_initializer[i]->name, true))
      return ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: the paged cache initializer '%s' names a "
                                          "cache input the conversion replaces",
                      src->paged_cache_initializer[i]->name);
  Onnx__GraphProto *dst = c->dst;
  size_t n = src->n_node, added = 0;
  for (size_t l = 0; l < c->n_layers; l++) added += (size_t)c->layers[l].n_nodes;
  bool *replaced = calloc(n + 1, 1), *live = calloc(n + added + 1, 1);
  Onnx__NodeProto **nodes = ol_proto_patch_alloc(c->p, (n + added + 1) * sizeof *nodes);
  Onnx__ValueInfoProto **inputs = ol_proto_patch_alloc(c->p, (src->n_input + c->n_layers + 1) * sizeof *inputs);
  Onnx__ValueInfoProto **outputs = ol_proto_patch_alloc(c->p, (src->n_output + c->n_layers + 1) * sizeof *outputs);
  Onnx__PersistentBindingProto **bindings = ol_proto_patch_alloc(c->p, (c->n_layers + 1) * sizeof *bindings);
  ol_status s = replaced && live && nodes && inputs && outputs && bindings ? OL_OK : NO_MEMORY;
  for (size_t l = 0; s == OL_OK && l < c->n_layers; l++)
    for (int k = 0; k < c->layers[l].n_replaced; k++) replaced[c->layers[l].replaced[k]] = true;
  /* nodes in order, each layer's new nodes where its anchor was */
  size_t count = 0;
  for (size_t i = 0; s == OL_OK && i < n; i++) {
    for (size_t l = 0; l < c->n_layers; l++)
      if ((size_t)c->layers[l].anchor == i)
        for (int k = 0; k < c->layers[l].n_nodes; k++) nodes[count++] = c->layers[l].nodes[k];
    if (!replaced[i]) nodes[count++] = src->node[i];
  }
  /* interface: cache pairs become one cache each */
  size_t ni = 0, no = 0;
  for (size_t i = 0; s == OL_OK && i < src->n_input; i++)
    if (!replaced_cache(c, src->input[i]->name, true)) inputs[ni++] = src->input[i];
  for (size_t i = 0; s == OL_OK && i < src->n_output; i++)
    if (!replaced_cache(c, src->output[i]->name, false)) outputs[no++] = src->output[i];
  for (size_t l = 0; s == OL_OK && l < c->n_layers; l++) {
    char *past = ol_paged_cache_name(c->p, c->layers[l].past_k), *present = ol_paged_cache_name(c->p, c->layers[l].present_k);
    Onnx__PersistentBindingProto *b = ol_proto_patch_alloc(c->p, sizeof *b);
    inputs[ni] = past ? cache_info(c->p, past) : NULL;
    outputs[no] = present ? cache_info(c->p, present) : NULL;
    if (!inputs[ni] || !outputs[no] || !b) s = NO_MEMORY;
    else {
      onnx__persistent_binding_proto__init(b);
      b->input_name = past;
      b->output_name = present;
      bindings[l] = b;
      ni++, no++;
    }
  }
  if (s == OL_OK) s = mark_live(nodes, count, outputs, no, live);
  if (s == OL_OK) {
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
      if (live[i]) nodes[kept++] = nodes[i];
    dst->node = nodes, dst->n_node = kept;
    dst->input = inputs, dst->n_input = ni;
    dst->output = outputs, dst->n_output = no;
    dst->persistent_bindings = bindings, dst->n_persistent_bindings = c->n_layers;
    dst->n_value_info = 0; /* names may be gone; shape inference records them again */
    s = check_kept(c);
  }
  free(replaced);
  free(live);
  return s;
}

/* Every layer of the root graph (*n_layers of them); an error when a
 * matcher refuses a node or names repeat across layers. */
static ol_status find_layers(paged_build *b, paged_layer *layers, size_t *n_layers) {
  const ol_graph *g = b->g;
  *n_layers = 0;
  for (size_t i = 0; i < g->num_nodes; i++) {
    for (size_t m = 0; m < sizeof matchers / sizeof *matchers; m++) {
      paged_layer *l = &layers[*n_layers];
      memset(l, 0, sizeof *l);
      l->left_window = -1;
      bool matched = false;
      OL_TRY(matchers[m](b, (int)i, l, &matched));
      if (b->oom) return NO_MEMORY;
      if (!matched) continue;
      for (size_t k = 0; k < *n_layers; k++)
        if (strcmp(layers[k].past_k, l->past_k) == 0 || strcmp(layers[k].past_v, l->past_v) == 0)
          return ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: the cache '%s' is read by two attentions",
                          l->past_k);
      (*n_layers)++;
      break;
    }
  }
  return OL_OK;
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
  ol_proto_patch *p = calloc(1, sizeof *p);
  if (!layers || !p) {
    free(layers);
    free(p);
    return NO_MEMORY;
  }
  paged_build b = {p, g, &o, 0, false};
  size_t n_layers = 0;
  ol_status s = find_layers(&b, layers, &n_layers);
  if (s == OL_OK && !n_layers)
    s = ol_error(OL_NOT_IMPLEMENTED, "ol_model_to_paged: no cached attention was recognized (a Concat(past, new) "
                                     "pair, GroupQueryAttention, Attention or MultiHeadAttention with past inputs; "
                                     "see docs/paged-cache.md)");
  const Onnx__ModelProto *sm = model->data->proto;
  Onnx__ModelProto *m = s == OL_OK ? ol_proto_patch_copy(p, sm, sizeof *sm) : NULL;
  Onnx__GraphProto *dst = m ? ol_proto_patch_copy(p, sm->graph, sizeof *sm->graph) : NULL;
  if (s == OL_OK && !dst) s = NO_MEMORY;
  if (s == OL_OK) {
    m->graph = dst;
    converter c = {p, g, sm->graph, dst, layers, n_layers};
    s = assemble(&c);
  }
  if (s == OL_OK) s = import_rt(p, m);
  free(layers);
  if (s != OL_OK) {
    ol_proto_patch_free(p);
    return s;
  }
  return ol_model_from_patch(p, m, model->data->owner, out);
}
