/* Adding paged caches to a model as GraphProto.paged_cache_initializer
 * (ol_model_with_paged_cache_initializers): how a conversation is resumed
 * offline. Each cache is serialized (validated and compacted), unpacked and
 * added through a graph builder sharing the source (ol_builder_share), so
 * the new model shares every other message of the source, like
 * ol_model_bind_persistent. An initializer of the same name is replaced. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/model.h"
#include "model/builder_internal.h"

static bool is_graph_input(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_input; i++)
    if (g->input[i]->name && strcmp(g->input[i]->name, name) == 0) return true;
  return false;
}

static bool is_other_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return true;
  for (size_t i = 0; i < g->n_encoded_initializer; i++)
    if (g->encoded_initializer[i]->name && strcmp(g->encoded_initializer[i]->name, name) == 0) return true;
  return false;
}

static ol_status check_request(const Onnx__GraphProto *g, const char *const *names, ol_value *const *caches,
                               size_t count) {
  for (size_t i = 0; i < count; i++) {
    if (!names[i] || !names[i][0] || !caches[i])
      return ol_error(OL_INVALID_ARGUMENT, "paged cache initializer %zu has no name or no cache", i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[k], names[i]) == 0)
        return ol_error(OL_INVALID_ARGUMENT, "paged cache initializer '%s' is given twice", names[i]);
    if (!is_graph_input(g, names[i]))
      return ol_error(OL_INVALID_ARGUMENT, "paged cache initializer '%s' names no graph input", names[i]);
    if (is_other_initializer(g, names[i]))
      return ol_error(OL_INVALID_ARGUMENT, "'%s' already has a tensor or encoded initializer", names[i]);
    if (!ol_paged_cache_is(caches[i]))
      return ol_error(OL_INVALID_ARGUMENT, "the value for '%s' is not a paged cache", names[i]);
  }
  return OL_OK;
}

/* The message of cache, named (unpacked by the default allocator). */
static ol_status cache_message(const char *name, const ol_value *cache, ProtobufCMessage **out) {
  void *bytes = NULL;
  size_t size = 0;
  ol_status s = ol_paged_cache_serialize(cache, &bytes, &size);
  if (s != OL_OK) return ol_error_wrap(s, "paged cache initializer '%s'", name);
  Onnx__PagedCacheProto *msg = onnx__paged_cache_proto__unpack(NULL, size, bytes);
  ol_free(bytes);
  char *copy = ol_strdup(name);
  if (!msg || !copy) {
    free(copy);
    if (msg) onnx__paged_cache_proto__free_unpacked(msg, NULL);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory adding the paged cache initializer '%s'", name);
  }
  free(msg->name); /* proto2 without a default: NULL or malloc'd */
  msg->name = copy;
  *out = &msg->base;
  return OL_OK;
}

ol_status ol_model_with_paged_cache_initializers(const ol_model *model, const char *const *names,
                                                 ol_value *const *caches, size_t count, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_with_paged_cache_initializers: out is NULL");
  *out = NULL;
  if (!model || (count && (!names || !caches)))
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_with_paged_cache_initializers: NULL argument");
  const Onnx__ModelProto *source = model->data->proto;
  const Onnx__GraphProto *sg = source ? source->graph : NULL;
  if (!sg) return ol_error(OL_INVALID_MODEL, "the model has no graph");
  OL_TRY(check_request(sg, names, caches, count));
  ol_builder *b = NULL;
  OL_TRY(ol_builder_share(source, &b));
  ol_status s = OL_OK;
  for (size_t i = 0; s == OL_OK && i < count; i++) {
    if (ol_builder_remove(b, OL_BUILDER_CACHE_INITIALIZER, names[i]) != OL_OK) /* replaced, or new */
      ol_clear_error();
    ProtobufCMessage *msg = NULL;
    s = cache_message(names[i], caches[i], &msg);
    if (s == OL_OK) s = ol_builder_insert_message(b, OL_BUILDER_CACHE_INITIALIZER, msg, ol_builder_count(b, OL_BUILDER_CACHE_INITIALIZER));
  }
  if (s != OL_OK) {
    ol_builder_destroy(b);
    return s;
  }
  ol_proto_patch *patch = NULL;
  Onnx__ModelProto *proto = NULL;
  OL_TRY(ol_builder_share_export(b, &patch, &proto));
  return ol_model_from_patch(patch, proto, model->data->owner, out);
}
