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
 * The matchers read the loaded graph and build their nodes in a scratch
 * patch; the model is then edited through a graph builder sharing the
 * source (ol_builder_share), so the result shares the source's weights and
 * unchanged messages like ol_model_bind_persistent, and keeps the builder's
 * rules (one namespace: a new cache's name must be free). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/strmap.h"
#include "ir/model.h"
#include "model/builder_internal.h"
#include "model/paged_model_forms.h"

#define NO_MEMORY ol_error(OL_OUT_OF_MEMORY, "out of memory converting to paged caches")

static const paged_matcher matchers[] = {ol_paged_match_concat, ol_paged_match_gqa, ol_paged_match_attention,
                                         ol_paged_match_mha};

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
static ol_status mark_live(Onnx__NodeProto *const *nodes, size_t n_nodes, const char *const *outputs,
                           size_t n_outputs, bool *live) {
  ol_strmap needed;
  ol_strmap_init(&needed);
  ol_status s = OL_OK;
  for (size_t k = 0; k < n_outputs && s == OL_OK; k++) s = ol_strmap_put(&needed, outputs[k], 1);
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

/* ------------------------------------------------------------ the new node list */

typedef struct converter {
  paged_build *b;
  const Onnx__GraphProto *src;
  paged_layer *layers;
  size_t n_layers;
  /* the root graph's nodes after the conversion, in order: source nodes
   * (src_index >= 0) and the layers' new nodes (src_index -1) */
  Onnx__NodeProto **nodes;
  long *src_index;
  size_t n_nodes;
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

/* A kept node must not read a replaced cache input or output. */
static ol_status check_kept(const converter *c) {
  for (size_t i = 0; i < c->n_nodes; i++) {
    const Onnx__NodeProto *n = c->nodes[i];
    for (size_t k = 0; k < n->n_input && c->src_index[i] >= 0; k++) {
      const char *in = n->input[k];
      if (in && in[0] && (replaced_cache(c, in, true) || replaced_cache(c, in, false)))
        return ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: node '%s' (%s) reads the cache '%s' "
                                            "besides the attention",
                        n->name ? n->name : "", n->op_type, in);
    }
  }
  return OL_OK;
}

/* The root graph's outputs after the conversion (for liveness). */
static ol_status new_outputs(const converter *c, const char ***out, size_t *count) {
  const Onnx__GraphProto *src = c->src;
  const char **names = calloc(src->n_output + c->n_layers + 1, sizeof *names);
  if (!names) return NO_MEMORY;
  size_t n = 0;
  for (size_t i = 0; i < src->n_output; i++)
    if (!replaced_cache(c, src->output[i]->name, false)) names[n++] = src->output[i]->name;
  for (size_t l = 0; l < c->n_layers; l++) names[n++] = c->layers[l].cache_present;
  *out = names;
  *count = n;
  return OL_OK;
}

/* Fills c->nodes: each layer's new nodes where its anchor was, the nodes
 * they replace gone, then only what feeds a graph output. */
static ol_status list_nodes(converter *c) {
  const Onnx__GraphProto *src = c->src;
  size_t n = src->n_node, added = 0;
  for (size_t l = 0; l < c->n_layers; l++) added += (size_t)c->layers[l].n_nodes;
  bool *replaced = calloc(n + 1, 1), *live = calloc(n + added + 1, 1);
  c->nodes = calloc(n + added + 1, sizeof *c->nodes);
  c->src_index = calloc(n + added + 1, sizeof *c->src_index);
  const char **outputs = NULL;
  size_t n_outputs = 0;
  ol_status s = replaced && live && c->nodes && c->src_index ? new_outputs(c, &outputs, &n_outputs) : NO_MEMORY;
  for (size_t l = 0; s == OL_OK && l < c->n_layers; l++)
    for (int k = 0; k < c->layers[l].n_replaced; k++) replaced[c->layers[l].replaced[k]] = true;
  size_t count = 0;
  for (size_t i = 0; s == OL_OK && i < n; i++) {
    for (size_t l = 0; l < c->n_layers; l++)
      if ((size_t)c->layers[l].anchor == i)
        for (int k = 0; k < c->layers[l].n_nodes; k++) {
          c->src_index[count] = -1;
          c->nodes[count++] = c->layers[l].nodes[k];
        }
    if (replaced[i]) continue;
    c->src_index[count] = (long)i;
    c->nodes[count++] = src->node[i];
  }
  if (s == OL_OK) s = mark_live(c->nodes, count, outputs, n_outputs, live);
  if (s == OL_OK) {
    size_t kept = 0;
    for (size_t i = 0; i < count; i++)
      if (live[i]) c->src_index[kept] = c->src_index[i], c->nodes[kept++] = c->nodes[i];
    c->n_nodes = kept;
    s = check_kept(c);
  }
  free(replaced);
  free(live);
  free(outputs);
  return s;
}

/* ------------------------------------------------------------ the edit */

/* `name` declared as a paged cache: a layout-less struct_type. */
static ol_status add_cache_value(ol_builder *builder, ol_builder_part part, const char *name) {
  Onnx__StructTypeProto st = ONNX__STRUCT_TYPE_PROTO__INIT;
  Onnx__TypeProto t = ONNX__TYPE_PROTO__INIT;
  t.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  t.struct_type = &st;
  Onnx__ValueInfoProto v = ONNX__VALUE_INFO_PROTO__INIT;
  v.name = (char *)name;
  v.type = &t;
  return ol_builder_add_copy(builder, part, &v.base, ol_builder_count(builder, part));
}

/* Adds ai.rt version 1 to the opset imports when missing. */
static ol_status import_rt(ol_builder *builder, const Onnx__ModelProto *m) {
  for (size_t i = 0; i < m->n_opset_import; i++)
    if (m->opset_import[i]->domain && strcmp(m->opset_import[i]->domain, "ai.rt") == 0) return OL_OK;
  Onnx__OperatorSetIdProto rt = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  rt.domain = "ai.rt";
  rt.has_version = 1;
  rt.version = 1;
  return ol_builder_add_copy(builder, OL_BUILDER_OPSET_IMPORT, &rt.base, ol_builder_count(builder, OL_BUILDER_OPSET_IMPORT));
}

/* Edits the shared builder of the source into the converted model: value
 * infos dropped (names may be gone; shape inference records them again),
 * the source nodes not in c->nodes removed, the new nodes inserted in
 * place, cache pairs replaced by one bound cache each. */
static ol_status edit(const converter *c, ol_builder *builder, const Onnx__ModelProto *source) {
  for (size_t i = ol_builder_count(builder, OL_BUILDER_VALUE_INFO); i-- > 0;)
    OL_TRY(ol_builder_remove_at(builder, OL_BUILDER_VALUE_INFO, i));
  bool *kept = calloc(c->src->n_node + 1, 1);
  if (!kept) return NO_MEMORY;
  for (size_t i = 0; i < c->n_nodes; i++)
    if (c->src_index[i] >= 0) kept[c->src_index[i]] = true;
  ol_status s = OL_OK;
  for (size_t i = c->src->n_node; s == OL_OK && i-- > 0;) /* the builder's nodes are the source's, in order */
    if (!kept[i]) s = ol_builder_remove_at(builder, OL_BUILDER_NODE, i);
  free(kept);
  for (size_t i = 0; s == OL_OK && i < c->n_nodes; i++)
    if (c->src_index[i] < 0) s = ol_builder_add_copy(builder, OL_BUILDER_NODE, &c->nodes[i]->base, i);
  for (size_t l = 0; s == OL_OK && l < c->n_layers; l++) {
    const paged_layer *L = &c->layers[l];
    const char *past = L->cache_past, *present = L->cache_present;
    const char *gone_in[2] = {L->past_k, L->past_v}, *gone_out[2] = {L->present_k, L->present_v};
    for (int k = 0; k < 2 && s == OL_OK; k++) s = ol_builder_remove(builder, OL_BUILDER_INPUT, gone_in[k]);
    for (int k = 0; k < 2 && s == OL_OK; k++) s = ol_builder_remove(builder, OL_BUILDER_OUTPUT, gone_out[k]);
    if (s == OL_OK) s = add_cache_value(builder, OL_BUILDER_INPUT, past);
    if (s == OL_OK) s = add_cache_value(builder, OL_BUILDER_OUTPUT, present);
    if (s == OL_OK) s = ol_builder_add_persistent_binding(builder, past, present);
  }
  if (s == OL_OK) s = import_rt(builder, source);
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

void ol_paged_model_options_init(ol_paged_model_options *o) {
  o->block_size = 16;
  o->max_tokens = 4096;
  o->left_window_size = -1;
}

/* The source's paged cache initializers must not default an input that
 * would be gone. */
static ol_status check_cache_defaults(const converter *c) {
  for (size_t i = 0; i < c->src->n_paged_cache_initializer; i++)
    if (c->src->paged_cache_initializer[i]->name && replaced_cache(c, c->src->paged_cache_initializer[i]->name, true))
      return ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: the paged cache initializer '%s' names a "
                                          "cache input the conversion replaces",
                      c->src->paged_cache_initializer[i]->name);
  return OL_OK;
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
  const Onnx__ModelProto *sm = model->data->proto;
  if (sm->graph->n_persistent_bindings)
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_to_paged: the model already has persistent bindings");
  paged_layer *layers = calloc(g->num_nodes + 1, sizeof *layers);
  ol_proto_patch *scratch = calloc(1, sizeof *scratch); /* the matchers' nodes, copied into the builder */
  if (!layers || !scratch) {
    free(layers);
    free(scratch);
    return NO_MEMORY;
  }
  paged_build b = {scratch, g, &o, 0, false};
  converter c = {&b, sm->graph, layers, 0, NULL, NULL, 0};
  ol_status s = find_layers(&b, layers, &c.n_layers);
  if (s == OL_OK && !c.n_layers)
    s = ol_error(OL_NOT_IMPLEMENTED, "ol_model_to_paged: no cached attention was recognized (a Concat(past, new) "
                                     "pair, GroupQueryAttention, Attention or MultiHeadAttention with past inputs; "
                                     "see docs/paged-cache.md)");
  if (s == OL_OK) s = check_cache_defaults(&c);
  if (s == OL_OK) s = list_nodes(&c);
  ol_builder *builder = NULL;
  if (s == OL_OK) s = ol_builder_share(sm, &builder);
  if (s == OL_OK && (s = edit(&c, builder, sm)) != OL_OK && s != OL_OUT_OF_MEMORY)
    s = ol_error_wrap(s, "ol_model_to_paged"); /* a builder rule, e.g. a cache name already taken */
  free(c.nodes);
  free(c.src_index);
  free(layers);
  ol_proto_patch_free(scratch);
  if (s != OL_OK) {
    ol_builder_destroy(builder);
    return s == OL_OUT_OF_MEMORY ? NO_MEMORY : s;
  }
  ol_proto_patch *patch = NULL;
  Onnx__ModelProto *proto = NULL;
  OL_TRY(ol_builder_share_export(builder, &patch, &proto));
  return ol_model_from_patch(patch, proto, model->data->owner, out);
}
