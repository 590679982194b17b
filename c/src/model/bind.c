/* Adding persistent bindings to a model (the C side of bindPersistent),
 * made through a graph builder that shares the source model
 * (ol_builder_share): the bound model shares the source's protobuf
 * sub-messages (its initializers and their weights above all) by reference
 * and owns only what the edit changes (ModelProto and GraphProto, the node
 * and binding arrays, the bindings, the forwarding Identity nodes and
 * renamed copies of the nodes that read a forwarded input). It retains the
 * source's proto owner; the source model is left unchanged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "ir/model.h"
#include "ir/proto_walk.h"
#include "model/builder_internal.h"

typedef struct uses {
  const char *name;
  size_t count;
} uses;

static ol_status count_use(void *user, ProtobufCMessage *msg) {
  uses *u = user;
  const Onnx__NodeProto *n = (const Onnx__NodeProto *)msg;
  for (size_t k = 0; k < n->n_input; k++) u->count += n->input[k] && strcmp(n->input[k], u->name) == 0;
  return OL_OK;
}

/* Node input positions (subgraphs included) reading name. */
static size_t node_uses(const Onnx__GraphProto *g, const char *name) {
  uses u = {name, 0};
  for (size_t i = 0; i < g->n_node; i++)
    (void)ol_proto_walk(&g->node[i]->base, &onnx__node_proto__descriptor, count_use, &u);
  return u.count;
}

/* `name/persistent_read = Identity(name)` as the first node, every other
 * use of name reading it: a bound input is read by one node position. */
static ol_status add_forwarding(ol_builder *b, const char *name) {
  char forward[1024];
  snprintf(forward, sizeof forward, "%s/persistent_read", name);
  OL_TRY(ol_builder_rename_uses(b, name, forward));
  Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
  char *input = (char *)name, *output = forward;
  n.op_type = "Identity";
  n.name = forward;
  n.n_input = 1;
  n.input = &input;
  n.n_output = 1;
  n.output = &output;
  return ol_builder_add_copy(b, OL_BUILDER_NODE, &n.base, 0);
}

static ol_status bind_one(ol_builder *b, const char *input, const char *output) {
  OL_TRY(ol_builder_append_binding(b, input, output));
  if (node_uses(b->model->graph, input) > 1) OL_TRY(add_forwarding(b, input));
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
  ol_builder *b = NULL;
  OL_TRY(ol_builder_share(model->data->proto, &b));
  ol_status st = OL_OK;
  for (size_t i = 0; st == OL_OK && i < count; i++) st = bind_one(b, input_names[i], output_names[i]);
  if (st != OL_OK) {
    ol_builder_destroy(b);
    return ol_error_wrap(st, "ol_model_bind_persistent");
  }
  ol_proto_patch *patch = NULL;
  Onnx__ModelProto *proto = NULL;
  OL_TRY(ol_builder_share_export(b, &patch, &proto));
  /* the checker (run by sessions) checks the bound model as a whole */
  return ol_model_from_patch(patch, proto, model->data->owner, out);
}
