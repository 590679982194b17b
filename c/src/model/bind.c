/* Adding persistent bindings to a model (the C side of bindPersistent). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "ir/model.h"

static char *dup_string(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s, n);
  return d;
}

/* Renames every node input equal to from (in g and nested graphs) to to. */
static ol_status rename_uses(Onnx__GraphProto *g, const char *from, const char *to) {
  for (size_t i = 0; i < g->n_node; i++) {
    Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_input; k++)
      if (n->input[k] && strcmp(n->input[k], from) == 0) {
        char *copy = dup_string(to);
        if (!copy) return ol_error(OL_OUT_OF_MEMORY, "out of memory binding '%s'", from);
        free(n->input[k]);
        n->input[k] = copy;
      }
    for (size_t a = 0; a < n->n_attribute; a++) {
      Onnx__AttributeProto *attr = n->attribute[a];
      if (attr->g) OL_TRY(rename_uses(attr->g, from, to));
      for (size_t k = 0; k < attr->n_graphs; k++) OL_TRY(rename_uses(attr->graphs[k], from, to));
    }
  }
  return OL_OK;
}

static size_t node_uses(const Onnx__GraphProto *g, const char *name) {
  size_t uses = 0;
  for (size_t i = 0; i < g->n_node; i++) {
    const Onnx__NodeProto *n = g->node[i];
    for (size_t k = 0; k < n->n_input; k++) uses += n->input[k] && strcmp(n->input[k], name) == 0;
    for (size_t a = 0; a < n->n_attribute; a++) {
      if (n->attribute[a]->g) uses += node_uses(n->attribute[a]->g, name);
      for (size_t k = 0; k < n->attribute[a]->n_graphs; k++) uses += node_uses(n->attribute[a]->graphs[k], name);
    }
  }
  return uses;
}

/* Inserts `forward = Identity(name)` first and points every use at forward. */
static ol_status add_forwarding(Onnx__GraphProto *g, const char *name) {
  char forward[1024];
  snprintf(forward, sizeof forward, "%s/persistent_read", name);
  OL_TRY(rename_uses(g, name, forward));
  Onnx__NodeProto *n = malloc(sizeof *n);
  Onnx__NodeProto **nodes = realloc(g->node, (g->n_node + 1) * sizeof *nodes);
  if (!n || !nodes) {
    free(n);
    if (nodes) g->node = nodes;
    return ol_error(OL_OUT_OF_MEMORY, "out of memory binding '%s'", name);
  }
  g->node = nodes;
  onnx__node_proto__init(n);
  n->op_type = dup_string("Identity");
  n->name = dup_string(forward);
  n->n_input = 1;
  n->input = malloc(sizeof(char *));
  n->n_output = 1;
  n->output = malloc(sizeof(char *));
  if (n->input) n->input[0] = dup_string(name);
  if (n->output) n->output[0] = dup_string(forward);
  memmove(g->node + 1, g->node, g->n_node * sizeof *g->node);
  g->node[0] = n;
  g->n_node++;
  if (!n->op_type || !n->name || !n->input || !n->output || !n->input[0] || !n->output[0])
    return ol_error(OL_OUT_OF_MEMORY, "out of memory binding '%s'", name);
  return OL_OK;
}

ol_status ol_model_bind_persistent(const ol_model *model, const char *const *input_names,
                                   const char *const *output_names, size_t count, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_bind_persistent: out is NULL");
  *out = NULL;
  if (!model || (count && (!input_names || !output_names)))
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_bind_persistent: NULL argument");
  void *bytes;
  size_t size;
  OL_TRY(ol_model_serialize(model, &bytes, &size));
  Onnx__ModelProto *proto = onnx__model_proto__unpack(NULL, size, bytes);
  free(bytes);
  if (!proto) return ol_error(OL_OUT_OF_MEMORY, "cannot copy the model");
  Onnx__GraphProto *g = proto->graph;
  ol_status s = OL_OK;
  size_t base = g->n_persistent_bindings;
  Onnx__PersistentBindingProto **list = realloc(g->persistent_bindings, (base + count + 1) * sizeof *list);
  if (!list) s = ol_error(OL_OUT_OF_MEMORY, "out of memory binding");
  else g->persistent_bindings = list;
  for (size_t i = 0; s == OL_OK && i < count; i++) {
    if (!input_names[i] || !output_names[i]) {
      s = ol_error(OL_INVALID_ARGUMENT, "binding %zu has a NULL name", i);
      break;
    }
    Onnx__PersistentBindingProto *b = malloc(sizeof *b);
    if (!b) {
      s = ol_error(OL_OUT_OF_MEMORY, "out of memory binding");
      break;
    }
    onnx__persistent_binding_proto__init(b);
    b->input_name = dup_string(input_names[i]);
    b->output_name = dup_string(output_names[i]);
    g->persistent_bindings[g->n_persistent_bindings++] = b;
    if (!b->input_name || !b->output_name) s = ol_error(OL_OUT_OF_MEMORY, "out of memory binding");
    if (s == OL_OK && node_uses(g, input_names[i]) > 1) s = add_forwarding(g, input_names[i]);
  }
  if (s != OL_OK) {
    onnx__model_proto__free_unpacked(proto, NULL);
    return s;
  }
  /* decoding checks nothing about bindings; the checker (run by sessions) does */
  return ol_model_from_proto(proto, NULL, out);
}
