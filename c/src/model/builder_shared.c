/* A graph builder that edits a loaded model's proto without copying it
 * (builder_internal.h, ol_builder_share): the builder owns the ModelProto
 * and GraphProto structs, the arrays of its parts and the messages it adds;
 * every other message stays the source's until an edit replaces it. The
 * export hands these pieces to an ol_proto_patch, so the edited model
 * shares the source's weights (ol_model_from_patch). */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/proto_walk.h"
#include "model/builder_internal.h"

#define NO_MEMORY ol_error(OL_OUT_OF_MEMORY, "out of memory sharing a model with a builder")

ol_status ol_builder_share(const Onnx__ModelProto *source, ol_builder **out) {
  *out = NULL;
  if (!source || !source->graph) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_share: the model has no graph");
  ol_builder *b = ol_xcalloc(1, sizeof *b);
  ol_proto_patch *p = ol_xcalloc(1, sizeof *p);
  if (!b || !p) {
    free(b);
    free(p);
    return NO_MEMORY;
  }
  ol_strmap_init(&b->names);
  b->shared = p;
  Onnx__ModelProto *m = ol_proto_patch_copy(p, source, sizeof *source);
  Onnx__GraphProto *g = m ? ol_proto_patch_copy(p, source->graph, sizeof *source->graph) : NULL;
  if (!g) {
    ol_proto_patch_free(p);
    ol_strmap_free(&b->names);
    free(b);
    return NO_MEMORY;
  }
  m->graph = g;
  b->model = m;
  /* m still points at the source's arrays: copy them all before destroy may free any */
  ProtobufCMessage **copies[OL_BUILDER_PART_COUNT] = {0};
  ol_status st = OL_OK;
  for (int part = 0; part < OL_BUILDER_PART_COUNT && st == OL_OK; part++) {
    size_t n = ol_builder_part_count(m, (ol_builder_part)part);
    if (n && !(copies[part] = ol_xmalloc(n * sizeof **copies))) st = NO_MEMORY;
    if (n && copies[part]) memcpy(copies[part], ol_builder_part_items(m, (ol_builder_part)part), n * sizeof **copies);
  }
  for (int part = 0; part < OL_BUILDER_PART_COUNT; part++) ol_builder_set_part_items(m, (ol_builder_part)part, copies[part]);
  if (st == OL_OK) st = ol_builder_index(b, "ol_builder_share");
  if (st != OL_OK) {
    ol_builder_destroy(b);
    return st;
  }
  *out = b;
  return OL_OK;
}

ol_status ol_builder_share_export(ol_builder *b, ol_proto_patch **out_patch, Onnx__ModelProto **out_model) {
  *out_patch = NULL;
  *out_model = NULL;
  if (!ol_proto_patch_reserve(b->shared, OL_BUILDER_PART_COUNT)) {
    ol_builder_destroy(b);
    return NO_MEMORY;
  }
  for (int part = 0; part < OL_BUILDER_PART_COUNT; part++) {
    void *items = ol_builder_part_items(b->model, (ol_builder_part)part);
    if (items) ol_proto_patch_adopt(b->shared, items); /* reserved: cannot fail */
  }
  *out_patch = b->shared;
  *out_model = b->model;
  ol_builder_inference_free(b->inference);
  ol_strmap_free(&b->names);
  free(b);
  return OL_OK;
}

/* A copy of msg unpacked with the default allocator (NULL: out of memory). */
static ProtobufCMessage *copy_message(const ProtobufCMessage *msg) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (!bytes) return NULL;
  protobuf_c_message_pack(msg, bytes);
  ProtobufCMessage *copy = protobuf_c_message_unpack(msg->descriptor, NULL, size, bytes);
  free(bytes);
  return copy;
}

ol_status ol_builder_append_binding(ol_builder *b, const char *input_name, const char *output_name) {
  Onnx__PersistentBindingProto pb = ONNX__PERSISTENT_BINDING_PROTO__INIT;
  pb.input_name = (char *)input_name;
  pb.output_name = (char *)output_name;
  ProtobufCMessage *msg = copy_message(&pb.base);
  if (!msg) return NO_MEMORY;
  size_t n = ol_builder_part_count(b->model, OL_BUILDER_PERSISTENT_BINDING);
  ProtobufCMessage **items = realloc(ol_builder_part_items(b->model, OL_BUILDER_PERSISTENT_BINDING), (n + 1) * sizeof *items);
  if (!items || (b->shared && !ol_proto_patch_adopt_message(b->shared, msg))) {
    if (items) ol_builder_set_part_items(b->model, OL_BUILDER_PERSISTENT_BINDING, items);
    protobuf_c_message_free_unpacked(msg, NULL);
    return NO_MEMORY;
  }
  items[n] = msg;
  ol_builder_set_part_items(b->model, OL_BUILDER_PERSISTENT_BINDING, items);
  b->model->graph->n_persistent_bindings = n + 1;
  return OL_OK;
}

typedef struct rename {
  const char *from, *to;
  size_t uses;
} rename;

static ol_status count_uses(void *user, ProtobufCMessage *msg) {
  rename *r = user;
  const Onnx__NodeProto *n = (const Onnx__NodeProto *)msg;
  for (size_t i = 0; i < n->n_input; i++) r->uses += n->input[i] && strcmp(n->input[i], r->from) == 0;
  return OL_OK;
}

static ol_status rename_inputs(void *user, ProtobufCMessage *msg) {
  const rename *r = user;
  Onnx__NodeProto *n = (Onnx__NodeProto *)msg;
  for (size_t i = 0; i < n->n_input; i++) {
    if (!n->input[i] || strcmp(n->input[i], r->from) != 0) continue;
    char *copy = ol_strdup(r->to);
    if (!copy) return OL_OUT_OF_MEMORY;
    free(n->input[i]);
    n->input[i] = copy;
  }
  return OL_OK;
}

ol_status ol_builder_rename_uses(ol_builder *b, const char *from, const char *to) {
  rename r = {from, to, 0};
  ol_builder_infer_touch(b, NULL); /* readers anywhere, subgraphs included */
  size_t n = ol_builder_part_count(b->model, OL_BUILDER_NODE);
  ProtobufCMessage **nodes = ol_builder_part_items(b->model, OL_BUILDER_NODE);
  for (size_t i = 0; i < n; i++) {
    r.uses = 0;
    OL_TRY(ol_proto_walk(nodes[i], &onnx__node_proto__descriptor, count_uses, &r));
    if (!r.uses) continue;
    ProtobufCMessage *node = nodes[i];
    if (b->shared && !ol_proto_patch_owns_message(b->shared, node)) {
      /* the source's node: edit a copy of it (the source stays unchanged) */
      if (!(node = copy_message(nodes[i]))) return NO_MEMORY;
      if (!ol_proto_patch_adopt_message(b->shared, node)) {
        protobuf_c_message_free_unpacked(node, NULL);
        return NO_MEMORY;
      }
      nodes[i] = node;
    }
    ol_status st = ol_proto_walk(node, &onnx__node_proto__descriptor, rename_inputs, &r);
    if (st != OL_OK) return st == OL_OUT_OF_MEMORY ? NO_MEMORY : st;
  }
  return OL_OK;
}
