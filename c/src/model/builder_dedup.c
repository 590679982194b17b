/* Initializer de-duplication on the builder (ol_builder_dedup_initializers).
 *
 * Two initializers are the same value when everything that decides what
 * they decode to is equal, not just their bytes: for TensorProto the data
 * type, dims, payload (every data field) and external data entries; for
 * structured initializers the resolved physical type (a type_ref compared
 * through the declaration it names, type_id ignored), the payload, the
 * logical type, the affine layout, parameter_ref and external data. Names
 * and doc strings do not count. A later duplicate is removed and every node
 * input naming it (subgraphs included) is renamed to the first one. Values
 * something outside the nodes names (graph inputs and outputs, persistent
 * bindings, quantization annotations) are left alone. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "core/strmap.h"
#include "ir/proto_walk.h"
#include "model/builder_internal.h"
#include "quant/type_catalogue.h"
#include "quant/wire_proto.h"

typedef struct key {
  uint8_t *bytes;
  size_t size;
} key;

static bool pack_into(const ProtobufCMessage *msg, key *k) {
  k->size = protobuf_c_message_get_packed_size(msg);
  k->bytes = ol_xmalloc(k->size ? k->size : 1);
  if (k->bytes) protobuf_c_message_pack(msg, k->bytes);
  return k->bytes != NULL;
}

/* The comparison key of a dense initializer: the message without name and doc. */
static ol_status tensor_key(const Onnx__TensorProto *t, key *k) {
  Onnx__TensorProto copy = *t;
  copy.name = NULL;
  copy.doc_string = NULL;
  return pack_into(&copy.base, k) ? OL_OK : OL_OUT_OF_MEMORY;
}

/* The comparison key of a structured initializer: the resolved physical
 * type without its id, then the message without name, doc and layout
 * reference. An unresolvable layout has no key (never merged). */
static ol_status structured_key(const Onnx__EncodedValueProto *ev, const ol_type_catalogue *types, key *k) {
  k->bytes = NULL;
  k->size = 0;
  size_t type_size = 0;
  uint8_t *type_bytes = NULL;
  Onnx__EncodedValueProto copy = *ev;
  copy.name = NULL;
  copy.doc_string = NULL;
  if (ev->layout_case == ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE) {
    const Onnx__StructTypeProto *physical = NULL;
    if (ol_type_catalogue_resolve(types, ev->struct_type, &physical) != OL_OK) {
      ol_clear_error();
      return OL_OK;
    }
    type_bytes = ol_qw_pack_without_id(physical, &type_size);
    if (!type_bytes) return OL_OUT_OF_MEMORY;
    copy.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT__NOT_SET;
    copy.struct_type = NULL;
  }
  key rest;
  if (!pack_into(&copy.base, &rest)) {
    free(type_bytes);
    return OL_OUT_OF_MEMORY;
  }
  /* [type size][type bytes][rest]: the size keeps the two parts apart */
  k->size = sizeof(size_t) + type_size + rest.size;
  k->bytes = ol_xmalloc(k->size);
  if (k->bytes) {
    memcpy(k->bytes, &type_size, sizeof(size_t));
    if (type_size) memcpy(k->bytes + sizeof(size_t), type_bytes, type_size);
    memcpy(k->bytes + sizeof(size_t) + type_size, rest.bytes, rest.size);
  }
  free(type_bytes);
  free(rest.bytes);
  return k->bytes ? OL_OK : OL_OUT_OF_MEMORY;
}

/* Names something besides node inputs refers to. */
static ol_status pinned_names(const Onnx__GraphProto *g, ol_strmap *pinned) {
  for (size_t i = 0; i < g->n_input; i++) OL_TRY(ol_strmap_put(pinned, g->input[i]->name ? g->input[i]->name : "", 1));
  for (size_t i = 0; i < g->n_output; i++) OL_TRY(ol_strmap_put(pinned, g->output[i]->name ? g->output[i]->name : "", 1));
  for (size_t i = 0; i < g->n_persistent_bindings; i++) {
    const Onnx__PersistentBindingProto *pb = g->persistent_bindings[i];
    if (pb->input_name) OL_TRY(ol_strmap_put(pinned, pb->input_name, 1));
    if (pb->output_name) OL_TRY(ol_strmap_put(pinned, pb->output_name, 1));
  }
  for (size_t i = 0; i < g->n_quantization_annotation; i++) {
    const Onnx__TensorAnnotation *a = g->quantization_annotation[i];
    if (a->tensor_name) OL_TRY(ol_strmap_put(pinned, a->tensor_name, 1));
    for (size_t k = 0; k < a->n_quant_parameter_tensor_names; k++)
      if (a->quant_parameter_tensor_names[k]->value)
        OL_TRY(ol_strmap_put(pinned, a->quant_parameter_tensor_names[k]->value, 1));
  }
  return OL_OK;
}

typedef struct renames {
  ol_strmap from;     /* removed name -> index into to */
  const char **to;    /* the kept names */
} renames;

static ol_status rename_inputs(void *user, ProtobufCMessage *msg) {
  const renames *r = user;
  Onnx__NodeProto *n = (Onnx__NodeProto *)msg;
  for (size_t i = 0; i < n->n_input; i++) {
    int32_t k = n->input[i] ? ol_strmap_get(&r->from, n->input[i]) : -1;
    if (k < 0) continue;
    char *copy = ol_strdup(r->to[k]);
    if (!copy) return OL_OUT_OF_MEMORY;
    free(n->input[i]);
    n->input[i] = copy;
  }
  return OL_OK;
}

/* Removes items marked in drop from a repeated field of count messages. */
static void drop_marked(ProtobufCMessage **items, size_t *count, const bool *drop) {
  size_t kept = 0;
  for (size_t i = 0; i < *count; i++) {
    if (drop[i]) protobuf_c_message_free_unpacked(items[i], NULL);
    else items[kept++] = items[i];
  }
  *count = kept;
}

/* Marks the later duplicates among n keys (empty keys never match); each
 * dropped item i gets its keeper's index in keeper[i]. Keepers are movable
 * too: an input's default may be overridden, so nothing is redirected to it. */
static void find_duplicates(const key *keys, size_t n, const bool *movable, bool *drop, size_t *keeper) {
  for (size_t i = 0; i < n; i++) {
    if (!movable[i] || !keys[i].bytes) continue;
    for (size_t j = 0; j < i; j++)
      if (!drop[j] && movable[j] && keys[j].bytes && keys[j].size == keys[i].size && memcmp(keys[j].bytes, keys[i].bytes, keys[i].size) == 0) {
        drop[i] = true;
        keeper[i] = j;
        break;
      }
  }
}

ol_status ol_builder_dedup_initializers(ol_builder *b, size_t *removed) {
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_dedup_initializers: builder is NULL");
  if (b->shared) /* it renames node inputs in place: the source's nodes */
    return ol_error(OL_FAILED_PRECONDITION, "ol_builder_dedup_initializers: the builder shares its source model");
  if (removed) *removed = 0;
  ol_builder_infer_touch(b, NULL); /* readers are renamed in place */
  Onnx__ModelProto *m = b->model;
  Onnx__GraphProto *g = m->graph;
  size_t nt = g->n_initializer, ns = g->n_encoded_initializer, total = nt + ns;
  if (!total) return OL_OK;
  key *keys = ol_xcalloc(total, sizeof *keys);
  bool *movable = ol_xcalloc(total, sizeof *movable);
  bool *drop = ol_xcalloc(total, sizeof *drop);
  size_t *keeper = ol_xcalloc(total, sizeof *keeper);
  const char **to = ol_xcalloc(total, sizeof *to);
  ol_type_catalogue *types = NULL;
  ol_strmap pinned;
  renames r = {.to = to};
  ol_strmap_init(&pinned);
  ol_strmap_init(&r.from);
  ol_status st = keys && movable && drop && keeper && to ? OL_OK : OL_OUT_OF_MEMORY;
  if (st == OL_OK)
    st = ol_type_catalogue_create((const Onnx__StructTypeProto *const *)m->struct_types, m->n_struct_types, &types);
  if (st == OL_OK) st = pinned_names(g, &pinned);
  for (size_t i = 0; st == OL_OK && i < total; i++) {
    const char *name = i < nt ? g->initializer[i]->name : g->encoded_initializer[i - nt]->name;
    movable[i] = name && name[0] && ol_strmap_get(&pinned, name) < 0;
    if (i < nt) st = tensor_key(g->initializer[i], &keys[i]);
    else st = structured_key(g->encoded_initializer[i - nt], types, &keys[i]);
  }
  if (st == OL_OK) {
    find_duplicates(keys, nt, movable, drop, keeper);
    find_duplicates(keys + nt, ns, movable + nt, drop + nt, keeper + nt);
  }
  size_t count = 0;
  for (size_t i = 0; st == OL_OK && i < total; i++) {
    if (!drop[i]) continue;
    bool dense = i < nt;
    const char *name = dense ? g->initializer[i]->name : g->encoded_initializer[i - nt]->name;
    size_t k = keeper[i]; /* within its own kind */
    to[count] = dense ? g->initializer[k]->name : g->encoded_initializer[k]->name;
    st = ol_strmap_put(&r.from, name, (int32_t)count);
    count++;
  }
  if (st == OL_OK && count) st = ol_proto_walk(&g->base, &onnx__node_proto__descriptor, rename_inputs, &r);
  if (st == OL_OK && count) {
    /* value infos of removed names go with them */
    bool *vi_drop = ol_xcalloc(g->n_value_info ? g->n_value_info : 1, sizeof *vi_drop);
    if (!vi_drop) st = OL_OUT_OF_MEMORY;
    for (size_t i = 0; vi_drop && i < g->n_value_info; i++)
      vi_drop[i] = g->value_info[i]->name && ol_strmap_get(&r.from, g->value_info[i]->name) >= 0;
    ol_strmap_free(&r.from); /* its keys are about to be freed */
    ol_strmap_init(&r.from);
    if (vi_drop) drop_marked((ProtobufCMessage **)g->value_info, &g->n_value_info, vi_drop);
    free(vi_drop);
    if (st == OL_OK) {
      drop_marked((ProtobufCMessage **)g->initializer, &g->n_initializer, drop);
      drop_marked((ProtobufCMessage **)g->encoded_initializer, &g->n_encoded_initializer, drop + nt);
      b->names_stale = true;
      if (removed) *removed = count;
    }
  }
  for (size_t i = 0; keys && i < total; i++) free(keys[i].bytes);
  free(keys);
  free(movable);
  free(drop);
  free(keeper);
  free(to);
  ol_type_catalogue_destroy(types);
  ol_strmap_free(&pinned);
  ol_strmap_free(&r.from);
  return st;
}
