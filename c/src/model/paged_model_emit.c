/* What the matchers of paged_model_forms.h share: questions about the
 * source graph and the nodes they build (in the conversion's patch). */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "model/paged_model_forms.h"

/* ------------------------------------------------------------ graph queries */

bool ol_paged_is_op(const ol_node *n, const char *op) {
  return strcmp(n->op_type, op) == 0 && (!n->domain[0] || strcmp(n->domain, "ai.onnx") == 0);
}

bool ol_paged_is_ms(const ol_node *n, const char *op) {
  return strcmp(n->op_type, op) == 0 && strcmp(n->domain, "com.microsoft") == 0;
}

int ol_paged_producer(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_nodes; i++)
    for (size_t o = 0; o < g->nodes[i].num_outputs; o++)
      if (strcmp(g->nodes[i].outputs[o], name) == 0) return (int)i;
  return -1;
}

size_t ol_paged_readers(const ol_graph *g, const char *name) {
  size_t n = 0;
  for (size_t i = 0; i < g->num_nodes; i++)
    for (size_t k = 0; k < g->nodes[i].num_inputs; k++) n += strcmp(g->nodes[i].inputs[k], name) == 0;
  for (size_t o = 0; o < g->num_outputs; o++) n += strcmp(g->outputs[o].name, name) == 0;
  return n;
}

bool ol_paged_is_graph_input(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return true;
  return false;
}

bool ol_paged_is_graph_output(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_outputs; i++)
    if (strcmp(g->outputs[i].name, name) == 0) return true;
  return false;
}

static const ol_graph_value *declared(const ol_graph *g, const char *name) {
  for (size_t i = 0; i < g->num_inputs; i++)
    if (strcmp(g->inputs[i].name, name) == 0) return &g->inputs[i];
  for (size_t i = 0; i < g->num_value_infos; i++)
    if (strcmp(g->value_infos[i].name, name) == 0) return &g->value_infos[i];
  return NULL;
}

int ol_paged_declared_rank(const ol_graph *g, const char *name) {
  const ol_graph_value *v = declared(g, name);
  return v && v->has_type && v->type.kind == OL_VALUE_TENSOR ? v->type.rank : -1;
}

int64_t ol_paged_declared_head_size(const ol_graph *g, const char *name) {
  const ol_graph_value *v = declared(g, name);
  return v && v->type.rank == 4 ? v->type.dims[3] : -1;
}

const char *ol_paged_input(const ol_node *n, size_t k) { return ol_node_has_input(n, k) ? n->inputs[k] : NULL; }

/* name without ".key" / ".value" (the paged cache's name), in the patch. */
static char *cache_name(ol_proto_patch *p, const char *name) {
  size_t n = strlen(name);
  if (n > 4 && strcmp(name + n - 4, ".key") == 0) n -= 4;
  else if (n > 6 && strcmp(name + n - 6, ".value") == 0) n -= 6;
  char *s = ol_proto_patch_alloc(p, n + 1);
  if (s) memcpy(s, name, n);
  return s;
}

ol_status ol_paged_refuse(const ol_node *n, const char *fmt, ...) {
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return ol_error(OL_NOT_IMPLEMENTED, "cannot convert to paged caches: %s node '%s': %s", n->op_type, n->name,
                  message);
}

ol_status ol_paged_cache_pair(const ol_graph *g, const ol_node *n, size_t past_k, size_t past_v, paged_layer *l) {
  l->past_k = ol_paged_input(n, past_k), l->past_v = ol_paged_input(n, past_v);
  l->present_k = ol_node_has_output(n, 1) ? n->outputs[1] : NULL;
  l->present_v = ol_node_has_output(n, 2) ? n->outputs[2] : NULL;
  if (!l->past_k || !l->past_v || !ol_paged_is_graph_input(g, l->past_k) || !ol_paged_is_graph_input(g, l->past_v))
    return ol_paged_refuse(n, "past_key and past_value must both be graph inputs");
  if (!l->present_k || !l->present_v || !ol_paged_is_graph_output(g, l->present_k) ||
      !ol_paged_is_graph_output(g, l->present_v))
    return ol_paged_refuse(n, "present_key and present_value must both be graph outputs");
  return OL_OK;
}

/* ------------------------------------------------------------ new nodes */

static char *fresh_name(paged_build *b, const paged_layer *l, const char *what) {
  char name[512];
  snprintf(name, sizeof name, "%s/paged/%s_%d", l->past_k, what, b->counter++);
  char *s = ol_proto_patch_strdup(b->p, name);
  if (!s) b->oom = true;
  return s;
}

const char *ol_paged_emit(paged_build *b, paged_layer *l, const char *op, const char *domain, const char *const *in,
                          size_t n_in, const char *out) {
  if (b->oom) return NULL;
  if (l->n_nodes == PAGED_MAX_NEW) { /* a matcher's fixed budget: a bug, not input */
    b->oom = true;
    return NULL;
  }
  Onnx__NodeProto *n = ol_proto_patch_alloc(b->p, sizeof *n);
  char **ins = ol_proto_patch_alloc(b->p, (n_in + 1) * sizeof *ins), **outs = ol_proto_patch_alloc(b->p, sizeof *outs);
  Onnx__AttributeProto **attrs = ol_proto_patch_alloc(b->p, 4 * sizeof *attrs);
  char *name = fresh_name(b, l, op), *type = ol_proto_patch_strdup(b->p, op);
  char *dom = domain ? ol_proto_patch_strdup(b->p, domain) : NULL;
  char *output = out ? (char *)out : fresh_name(b, l, "out");
  if (!n || !ins || !outs || !attrs || !name || !type || (domain && !dom) || !output) {
    b->oom = true;
    return NULL;
  }
  onnx__node_proto__init(n);
  for (size_t k = 0; k < n_in; k++) ins[k] = (char *)in[k];
  outs[0] = output;
  n->name = name, n->op_type = type;
  if (dom) n->domain = dom;
  n->n_input = n_in, n->input = ins, n->n_output = 1, n->output = outs;
  n->attribute = attrs; /* room for 4 */
  l->nodes[l->n_nodes++] = n;
  return output;
}

static Onnx__AttributeProto *new_attr(paged_build *b, Onnx__NodeProto *n, const char *name) {
  if (!n || b->oom || n->n_attribute == 4) {
    b->oom = true;
    return NULL;
  }
  Onnx__AttributeProto *a = ol_proto_patch_alloc(b->p, sizeof *a);
  char *s = ol_proto_patch_strdup(b->p, name);
  if (!a || !s) {
    b->oom = true;
    return NULL;
  }
  onnx__attribute_proto__init(a);
  a->name = s;
  a->has_type = 1;
  n->attribute[n->n_attribute++] = a;
  return a;
}

void ol_paged_attr_int(paged_build *b, Onnx__NodeProto *n, const char *name, int64_t value) {
  Onnx__AttributeProto *a = new_attr(b, n, name);
  if (!a) return;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
  a->has_i = 1;
  a->i = value;
}

void ol_paged_attr_ints(paged_build *b, Onnx__NodeProto *n, const char *name, const int64_t *values, size_t count) {
  Onnx__AttributeProto *a = new_attr(b, n, name);
  int64_t *v = a ? ol_proto_patch_copy(b->p, values, count * sizeof *values) : NULL;
  if (!v) {
    b->oom = true;
    return;
  }
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
  a->n_ints = count;
  a->ints = v;
}

static Onnx__NodeProto *last(paged_layer *l) { return l->n_nodes ? l->nodes[l->n_nodes - 1] : NULL; }

const char *ol_paged_const_ints(paged_build *b, paged_layer *l, const int64_t *values, size_t count) {
  const char *out = ol_paged_emit(b, l, "Constant", NULL, NULL, 0, NULL);
  if (out) ol_paged_attr_ints(b, last(l), "value_ints", values, count);
  return b->oom ? NULL : out;
}

const char *ol_paged_const_float(paged_build *b, paged_layer *l, float value) {
  const char *out = ol_paged_emit(b, l, "Constant", NULL, NULL, 0, NULL);
  Onnx__AttributeProto *a = out ? new_attr(b, last(l), "value_float") : NULL;
  if (!a) return NULL;
  a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
  a->has_f = 1;
  a->f = value;
  return out;
}

static const int64_t heads_first[4] = {0, 2, 1, 3};

const char *ol_paged_split_heads(paged_build *b, paged_layer *l, const char *x, int64_t heads) {
  const int64_t shape[4] = {0, 0, heads, -1};
  const char *in[2] = {x, ol_paged_const_ints(b, l, shape, 4)};
  in[0] = ol_paged_emit(b, l, "Reshape", NULL, in, 2, NULL);
  const char *y = ol_paged_emit(b, l, "Transpose", NULL, in, 1, NULL);
  ol_paged_attr_ints(b, last(l), "perm", heads_first, 4);
  return b->oom ? NULL : y;
}

const char *ol_paged_merge_heads(paged_build *b, paged_layer *l, const char *y, const char *out) {
  const int64_t shape[3] = {0, 0, -1};
  const char *in[2] = {y, NULL};
  in[0] = ol_paged_emit(b, l, "Transpose", NULL, in, 1, NULL);
  ol_paged_attr_ints(b, last(l), "perm", heads_first, 4);
  in[1] = ol_paged_const_ints(b, l, shape, 3);
  const char *r = ol_paged_emit(b, l, "Reshape", NULL, in, 2, out);
  return b->oom ? NULL : r;
}

ol_status ol_paged_scaled_query(paged_build *b, paged_layer *l, const ol_node *n, const char *what, double scale,
                                int64_t head_size, const char **q) {
  if (scale == 0) return OL_OK;
  if (head_size <= 0)
    return ol_paged_refuse(n, "attribute '%s' = %g needs the head size, which the declared past_key shape does not give",
                           what, scale);
  double factor = scale * sqrt((double)head_size); /* PagedAttention scales by 1 / sqrt(head size) */
  if (fabs(factor - 1.0) < 1e-6) return OL_OK;
  const char *in[2] = {*q, ol_paged_const_float(b, l, (float)factor)};
  *q = ol_paged_emit(b, l, "Mul", NULL, in, 2, NULL);
  return OL_OK;
}

static void attr_if(paged_build *b, Onnx__NodeProto *n, const char *name, int64_t value, int64_t fallback) {
  if (value != fallback) ol_paged_attr_int(b, n, name, value);
}

const char *ol_paged_emit_attention(paged_build *b, paged_layer *l, const char *q, const char *k, const char *v,
                                  const char *y, bool causal) {
  char *past = cache_name(b->p, l->past_k), *present = cache_name(b->p, l->present_k);
  if (!past || !present || !q || !k || !v || b->oom) {
    b->oom = true;
    return NULL;
  }
  l->cache_past = past, l->cache_present = present;
  const char *in[4] = {q, k, v, past};
  y = ol_paged_emit(b, l, "PagedAttention", "ai.rt", in, 4, y);
  if (!y) return NULL;
  Onnx__NodeProto *n = last(l);
  char **outs = ol_proto_patch_alloc(b->p, 2 * sizeof *outs);
  char name[512];
  snprintf(name, sizeof name, "%s/paged_attention", past);
  char *node_name = ol_proto_patch_strdup(b->p, name);
  if (!outs || !node_name) {
    b->oom = true;
    return NULL;
  }
  outs[0] = n->output[0], outs[1] = present;
  n->output = outs, n->n_output = 2, n->name = node_name;
  ol_paged_attr_int(b, n, "block_size", b->o->block_size);
  ol_paged_attr_int(b, n, "max_tokens", b->o->max_tokens);
  attr_if(b, n, "left_window_size", l->left_window >= 0 ? l->left_window : b->o->left_window_size, -1);
  attr_if(b, n, "is_causal", causal, 1);
  return b->oom ? NULL : y;
}

ol_status ol_paged_replace_with_attention(paged_build *b, int i, paged_layer *l, const ol_node *n, const char *q,
                                          const char *k, const char *v, int64_t heads, int64_t kv_heads, bool causal,
                                          bool *matched) {
  bool flat = heads > 0;
  if (flat) {
    q = ol_paged_split_heads(b, l, q, heads);
    k = ol_paged_split_heads(b, l, k, kv_heads);
    v = ol_paged_split_heads(b, l, v, kv_heads);
  }
  OL_TRY(ol_paged_scaled_query(b, l, n, "scale", ol_attr_float(n, "scale", 0.0f),
                               ol_paged_declared_head_size(b->g, l->past_k), &q));
  const char *y = ol_paged_emit_attention(b, l, q, k, v, flat ? NULL : n->outputs[0], causal);
  if (flat) ol_paged_merge_heads(b, l, y, n->outputs[0]);
  l->anchor = i;
  l->replaced[l->n_replaced++] = i;
  *matched = true;
  return OL_OK;
}
