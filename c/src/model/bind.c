/* Adding persistent bindings to a model (the C side of bindPersistent).
 *
 * The bound model shares the source model's protobuf sub-messages (its
 * initializers and their weights above all) by reference: it owns only the
 * structs it changes (ModelProto and GraphProto, the node and binding pointer
 * arrays, the forwarding Identity nodes and the nodes whose inputs it renames,
 * copied on write) and retains the source's proto owner. The source model is
 * left unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "ir/model.h"
#include "ir/proto_patch.h"

#define NO_MEMORY(name) ol_error(OL_OUT_OF_MEMORY, "out of memory binding '%s'", name)

static ol_status renamed_graph(ol_proto_patch *p, Onnx__GraphProto *g, const char *from, char *to,
                               Onnx__GraphProto **out);

/* The attribute with its subgraphs renamed, or a itself when they have no use of from. */
static ol_status renamed_attribute(ol_proto_patch *p, Onnx__AttributeProto *a, const char *from, char *to,
                                   Onnx__AttributeProto **out) {
  *out = a;
  Onnx__GraphProto *g = a->g;
  if (g) OL_TRY(renamed_graph(p, a->g, from, to, &g));
  Onnx__GraphProto **graphs = NULL;
  for (size_t k = 0; k < a->n_graphs; k++) {
    Onnx__GraphProto *r;
    OL_TRY(renamed_graph(p, a->graphs[k], from, to, &r));
    if (r == a->graphs[k]) continue;
    if (!graphs && !(graphs = ol_proto_patch_copy(p, a->graphs, a->n_graphs * sizeof *graphs))) return NO_MEMORY(from);
    graphs[k] = r;
  }
  if (g == a->g && !graphs) return OL_OK;
  Onnx__AttributeProto *copy = ol_proto_patch_copy(p, a, sizeof *a);
  if (!copy) return NO_MEMORY(from);
  copy->g = g;
  if (graphs) copy->graphs = graphs;
  *out = copy;
  return OL_OK;
}

/* The node with every input equal to from (also in its subgraphs) renamed to
 * to, or n itself when it has no such use. */
static ol_status renamed_node(ol_proto_patch *p, Onnx__NodeProto *n, const char *from, char *to,
                              Onnx__NodeProto **out) {
  *out = n;
  char **inputs = NULL;
  for (size_t k = 0; k < n->n_input; k++) {
    if (!n->input[k] || strcmp(n->input[k], from) != 0) continue;
    if (!inputs && !(inputs = ol_proto_patch_copy(p, n->input, n->n_input * sizeof *inputs))) return NO_MEMORY(from);
    inputs[k] = to;
  }
  Onnx__AttributeProto **attributes = NULL;
  for (size_t a = 0; a < n->n_attribute; a++) {
    Onnx__AttributeProto *r;
    OL_TRY(renamed_attribute(p, n->attribute[a], from, to, &r));
    if (r == n->attribute[a]) continue;
    if (!attributes && !(attributes = ol_proto_patch_copy(p, n->attribute, n->n_attribute * sizeof *attributes)))
      return NO_MEMORY(from);
    attributes[a] = r;
  }
  if (!inputs && !attributes) return OL_OK;
  Onnx__NodeProto *copy = ol_proto_patch_copy(p, n, sizeof *n);
  if (!copy) return NO_MEMORY(from);
  if (inputs) copy->input = inputs;
  if (attributes) copy->attribute = attributes;
  *out = copy;
  return OL_OK;
}

/* Renames the uses in the nodes of nodes[0..count) in place (the array is the patch's). */
static ol_status rename_nodes(ol_proto_patch *p, Onnx__NodeProto **nodes, size_t count, const char *from, char *to) {
  for (size_t i = 0; i < count; i++) OL_TRY(renamed_node(p, nodes[i], from, to, &nodes[i]));
  return OL_OK;
}

static ol_status renamed_graph(ol_proto_patch *p, Onnx__GraphProto *g, const char *from, char *to,
                               Onnx__GraphProto **out) {
  *out = g;
  Onnx__NodeProto **nodes = NULL;
  for (size_t i = 0; i < g->n_node; i++) {
    Onnx__NodeProto *r;
    OL_TRY(renamed_node(p, g->node[i], from, to, &r));
    if (r == g->node[i]) continue;
    if (!nodes && !(nodes = ol_proto_patch_copy(p, g->node, g->n_node * sizeof *nodes))) return NO_MEMORY(from);
    nodes[i] = r;
  }
  if (!nodes) return OL_OK;
  Onnx__GraphProto *copy = ol_proto_patch_copy(p, g, sizeof *g);
  if (!copy) return NO_MEMORY(from);
  copy->node = nodes;
  *out = copy;
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

/* Inserts `forward = Identity(name)` first and points every use at forward
 * (g->node has room for one more node). */
static ol_status add_forwarding(ol_proto_patch *p, Onnx__GraphProto *g, char *name) {
  char buffer[1024];
  snprintf(buffer, sizeof buffer, "%s/persistent_read", name);
  char *forward = ol_proto_patch_strdup(p, buffer);
  if (!forward) return NO_MEMORY(name);
  OL_TRY(rename_nodes(p, g->node, g->n_node, name, forward));
  Onnx__NodeProto *n = ol_proto_patch_alloc(p, sizeof *n);
  char **input = ol_proto_patch_alloc(p, sizeof *input);
  char **output = ol_proto_patch_alloc(p, sizeof *output);
  char *op_type = ol_proto_patch_strdup(p, "Identity");
  if (!n || !input || !output || !op_type) return NO_MEMORY(name);
  onnx__node_proto__init(n);
  n->op_type = op_type;
  n->name = forward;
  n->n_input = 1;
  n->input = input;
  n->n_output = 1;
  n->output = output;
  input[0] = name;
  output[0] = forward;
  memmove(g->node + 1, g->node, g->n_node * sizeof *g->node);
  g->node[0] = n;
  g->n_node++;
  return OL_OK;
}

/* Appends binding input <- output to g (room reserved) with its forwarding. */
static ol_status add_binding(ol_proto_patch *p, Onnx__GraphProto *g, const char *input, const char *output) {
  Onnx__PersistentBindingProto *b = ol_proto_patch_alloc(p, sizeof *b);
  char *input_name = ol_proto_patch_strdup(p, input);
  char *output_name = ol_proto_patch_strdup(p, output);
  if (!b || !input_name || !output_name) return NO_MEMORY(input);
  onnx__persistent_binding_proto__init(b);
  b->input_name = input_name;
  b->output_name = output_name;
  g->persistent_bindings[g->n_persistent_bindings++] = b;
  if (node_uses(g, input) > 1) OL_TRY(add_forwarding(p, g, input_name));
  return OL_OK;
}

/* The shallow copy of the source's ModelProto and root graph, with pointer
 * arrays sized for count more bindings and forwarding nodes. */
static ol_status patched_model(ol_proto_patch *p, const Onnx__ModelProto *source, size_t count,
                               Onnx__ModelProto **out) {
  const Onnx__GraphProto *sg = source->graph;
  Onnx__ModelProto *proto = ol_proto_patch_copy(p, source, sizeof *source);
  Onnx__GraphProto *g = ol_proto_patch_copy(p, sg, sizeof *sg);
  Onnx__NodeProto **nodes = ol_proto_patch_alloc(p, (sg->n_node + count + 1) * sizeof *nodes);
  Onnx__PersistentBindingProto **bindings =
      ol_proto_patch_alloc(p, (sg->n_persistent_bindings + count + 1) * sizeof *bindings);
  if (!proto || !g || !nodes || !bindings) return ol_error(OL_OUT_OF_MEMORY, "out of memory binding");
  if (sg->n_node) memcpy(nodes, sg->node, sg->n_node * sizeof *nodes);
  if (sg->n_persistent_bindings)
    memcpy(bindings, sg->persistent_bindings, sg->n_persistent_bindings * sizeof *bindings);
  g->node = nodes;
  g->persistent_bindings = bindings;
  proto->graph = g;
  *out = proto;
  return OL_OK;
}

ol_status ol_model_bind_persistent(const ol_model *model, const char *const *input_names,
                                   const char *const *output_names, size_t count, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_bind_persistent: out is NULL");
  *out = NULL;
  if (!model || (count && (!input_names || !output_names)))
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_bind_persistent: NULL argument");
  for (size_t i = 0; i < count; i++)
    if (!input_names[i] || !output_names[i]) return ol_error(OL_INVALID_ARGUMENT, "binding %zu has a NULL name", i);
  ol_proto_patch *p = calloc(1, sizeof *p);
  if (!p) return ol_error(OL_OUT_OF_MEMORY, "out of memory binding");
  Onnx__ModelProto *proto = NULL;
  ol_status s = patched_model(p, model->data->proto, count, &proto);
  for (size_t i = 0; s == OL_OK && i < count; i++) s = add_binding(p, proto->graph, input_names[i], output_names[i]);
  if (s != OL_OK) {
    ol_proto_patch_free(p);
    return s;
  }
  /* decoding checks nothing about bindings; the checker (run by sessions) does */
  return ol_model_from_patch(p, proto, model->data->owner, out);
}
