/* Adding paged caches to a model as GraphProto.paged_cache_initializer
 * (ol_model_with_paged_cache_initializers): how a conversation is resumed
 * offline. Each cache is serialized (validated and compacted) and unpacked
 * into memory owned by the new model's patch; the new model shares every
 * other message of the source, like ol_model_bind_persistent. An
 * initializer of the same name is replaced. */
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "ir/model.h"
#include "ir/proto_patch.h"

static void *patch_alloc(void *patch, size_t size) { return ol_proto_patch_alloc(patch, size); }
static void patch_free(void *patch, void *ptr) { (void)patch, (void)ptr; } /* freed with the patch */

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

/* The message of cache, named, in memory owned by p. */
static ol_status cache_message(ol_proto_patch *p, const char *name, const ol_value *cache,
                               Onnx__PagedCacheProto **out) {
  void *bytes = NULL;
  size_t size = 0;
  ol_status s = ol_paged_cache_serialize(cache, &bytes, &size);
  if (s != OL_OK) return ol_error_wrap(s, "paged cache initializer '%s'", name);
  ProtobufCAllocator allocator = {patch_alloc, patch_free, p};
  *out = onnx__paged_cache_proto__unpack(&allocator, size, bytes);
  ol_free(bytes);
  if (!*out || !((*out)->name = ol_proto_patch_strdup(p, name))) return OL_OUT_OF_MEMORY;
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
  ol_proto_patch *p = calloc(1, sizeof *p);
  if (!p) return OL_OUT_OF_MEMORY;
  Onnx__ModelProto *proto = ol_proto_patch_copy(p, source, sizeof *source);
  Onnx__GraphProto *g = ol_proto_patch_copy(p, sg, sizeof *sg);
  Onnx__PagedCacheProto **list = ol_proto_patch_alloc(p, (sg->n_paged_cache_initializer + count + 1) * sizeof *list);
  ol_status s = proto && g && list ? OL_OK : OL_OUT_OF_MEMORY;
  size_t n = 0;
  for (size_t i = 0; s == OL_OK && i < sg->n_paged_cache_initializer; i++) { /* kept unless replaced */
    const char *name = sg->paged_cache_initializer[i]->name;
    bool replaced = false;
    for (size_t k = 0; name && k < count; k++) replaced |= strcmp(names[k], name) == 0;
    if (!replaced) list[n++] = sg->paged_cache_initializer[i];
  }
  for (size_t i = 0; s == OL_OK && i < count; i++) s = cache_message(p, names[i], caches[i], &list[n++]);
  if (s != OL_OK) {
    ol_proto_patch_free(p);
    return s;
  }
  g->paged_cache_initializer = list;
  g->n_paged_cache_initializer = n;
  proto->graph = g;
  return ol_model_from_patch(p, proto, model->data->owner, out);
}
