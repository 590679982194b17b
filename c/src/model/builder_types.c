/* The struct-type catalogue in the builder's exports: ToModel compacts
 * ModelProto.struct_types to the entries something references and
 * renumbers them 1..n, rewriting every struct_type.type_ref; ToGraph
 * refuses a graph holding any type_ref. References are found with the
 * generic message walk (ir/proto_walk.h), so every place a StructTypeProto
 * can sit is covered; the storage and logical descriptors of shared
 * quantization parameter sets are serialized inside UINT8 initializers and
 * are unpacked, walked and, when renumbered, written back. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/proto_depth.h"
#include "ir/proto_walk.h"
#include "model/builder_internal.h"
#include "quant/shared.h"

typedef enum scan_mode { SCAN_MARK, SCAN_REMAP, SCAN_REJECT } scan_mode;

typedef struct scan {
  scan_mode mode;
  const Onnx__ModelProto *model;
  uint8_t *used;      /* per catalogue entry (SCAN_MARK) */
  uint64_t *new_ids;  /* per catalogue entry, 0 = dropped (SCAN_REMAP) */
  size_t *queue;      /* entries marked but not yet walked (SCAN_MARK) */
  size_t queued;
  bool changed;       /* a type_ref was rewritten */
  char label[320];    /* the part being walked, for messages */
} scan;

static long entry_of(const Onnx__ModelProto *m, uint64_t id) {
  for (size_t i = 0; i < m->n_struct_types; i++)
    if (m->struct_types[i]->type_id == id) return (long)i;
  return -1;
}

static ol_status visit(void *user, ProtobufCMessage *msg) {
  scan *s = user;
  Onnx__StructTypeProto *t = (Onnx__StructTypeProto *)msg;
  if (t->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF) return OL_OK;
  if (s->mode == SCAN_REJECT)
    return ol_error(OL_FAILED_PRECONDITION,
                    "%s uses struct_type.type_ref %" PRIu64 ", a model-level reference that a standalone graph "
                    "cannot resolve (export the model instead)", s->label, t->type_ref);
  long e = entry_of(s->model, t->type_ref);
  if (e < 0)
    return ol_error(OL_INVALID_MODEL, "%s uses struct_type.type_ref %" PRIu64
                    ", which ModelProto.struct_types does not declare", s->label, t->type_ref);
  if (s->mode == SCAN_MARK) {
    if (!s->used[e]) s->used[e] = 1, s->queue[s->queued++] = (size_t)e;
  } else if (t->type_ref != s->new_ids[e]) {
    t->type_ref = s->new_ids[e];
    s->changed = true;
  }
  return OL_OK;
}

static ol_status walk(scan *s, ProtobufCMessage *msg) {
  return ol_proto_walk(msg, &onnx__struct_type_proto__descriptor, visit, s);
}

/* Every graph part, labelled. */
static const ol_builder_part graph_parts[] = {
    OL_BUILDER_INPUT,       OL_BUILDER_OUTPUT,        OL_BUILDER_VALUE_INFO,    OL_BUILDER_NODE,
    OL_BUILDER_INITIALIZER, OL_BUILDER_SPARSE_INITIALIZER, OL_BUILDER_STRUCTURED_INITIALIZER,
    OL_BUILDER_CACHE_INITIALIZER};

static ol_status walk_graph(scan *s, const Onnx__ModelProto *m) {
  for (size_t k = 0; k < sizeof graph_parts / sizeof *graph_parts; k++) {
    ol_builder_part part = graph_parts[k];
    for (size_t i = 0; i < ol_builder_part_count(m, part); i++) {
      ol_builder_part_label(m, part, i, s->label, sizeof s->label);
      OL_TRY(walk(s, ol_builder_part_item(m, part, i)));
    }
  }
  return OL_OK;
}

/* ------------------------------------------------------------ shared descriptors */

/* The bytes of a UINT8 descriptor initializer (raw_data or int32_data). */
static uint8_t *descriptor_bytes(const Onnx__TensorProto *t, size_t *size) {
  if (t->has_raw_data) {
    uint8_t *copy = ol_xmalloc(t->raw_data.len ? t->raw_data.len : 1);
    if (copy) memcpy(copy, t->raw_data.data, t->raw_data.len);
    *size = t->raw_data.len;
    return copy;
  }
  uint8_t *copy = ol_xmalloc(t->n_int32_data ? t->n_int32_data : 1);
  if (copy)
    for (size_t i = 0; i < t->n_int32_data; i++) copy[i] = (uint8_t)t->int32_data[i];
  *size = t->n_int32_data;
  return copy;
}

/* Replaces t's payload by the serialized msg (raw_data, dims {size}). */
static ol_status rewrite_descriptor(Onnx__TensorProto *t, const ProtobufCMessage *msg) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (!bytes) return OL_OUT_OF_MEMORY;
  protobuf_c_message_pack(msg, bytes);
  if (t->has_raw_data) free(t->raw_data.data);
  free(t->int32_data);
  t->int32_data = NULL;
  t->n_int32_data = 0;
  t->has_raw_data = 1;
  t->raw_data.data = bytes;
  t->raw_data.len = size;
  if (t->n_dims == 1) t->dims[0] = (int64_t)size;
  return OL_OK;
}

static Onnx__TensorProto *find_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return g->initializer[i];
  return NULL;
}

/* Walks the storage_type / logical_type descriptors of one shared set;
 * descriptors that do not parse are left to the loader to report. */
static ol_status walk_descriptor(scan *s, Onnx__TensorProto *t, bool storage, const char *set) {
  const ProtobufCMessageDescriptor *d = storage ? &onnx__struct_type_proto__descriptor : &onnx__type_proto__descriptor;
  size_t size = 0;
  uint8_t *bytes = descriptor_bytes(t, &size);
  if (!bytes) return OL_OUT_OF_MEMORY;
  ProtobufCMessage *msg = NULL;
  if (ol_proto_check_depth(d, bytes, size, "descriptor") == OL_OK) msg = protobuf_c_message_unpack(d, NULL, size, bytes);
  free(bytes);
  ol_clear_error();
  if (!msg) return OL_OK;
  snprintf(s->label, sizeof s->label, "the %s of shared quantization parameter set '%s' (initializer '%s')",
           storage ? "storage_type" : "logical_type", set, t->name ? t->name : "");
  bool before = s->changed;
  s->changed = false;
  ol_status st = walk(s, msg);
  if (st == OL_OK && s->mode == SCAN_REMAP && s->changed) st = rewrite_descriptor(t, msg);
  s->changed = s->changed || before;
  protobuf_c_message_free_unpacked(msg, NULL);
  return st;
}

static ol_status walk_shared_sets(scan *s, const Onnx__ModelProto *m) {
  const Onnx__GraphProto *g = m->graph;
  const size_t prefix = strlen(OL_QUANT_PARAMETERS_PREFIX);
  for (size_t i = 0; i < g->n_quantization_annotation; i++) {
    const Onnx__TensorAnnotation *a = g->quantization_annotation[i];
    if (!a->tensor_name || strncmp(a->tensor_name, OL_QUANT_PARAMETERS_PREFIX, prefix) != 0) continue;
    for (size_t k = 0; k < a->n_quant_parameter_tensor_names; k++) {
      const Onnx__StringStringEntryProto *e = a->quant_parameter_tensor_names[k];
      if (!e->key || !e->value) continue;
      bool storage = strcmp(e->key, "storage_type") == 0;
      if (!storage && strcmp(e->key, "logical_type") != 0) continue;
      Onnx__TensorProto *t = find_initializer(g, e->value);
      if (t) OL_TRY(walk_descriptor(s, t, storage, a->tensor_name + prefix));
    }
  }
  return OL_OK;
}

/* ------------------------------------------------------------ whole model */

/* Everything outside the catalogue: the graph, the shared descriptors,
 * model-local functions and training info. */
static ol_status walk_uses(scan *s, const Onnx__ModelProto *m) {
  OL_TRY(walk_graph(s, m));
  OL_TRY(walk_shared_sets(s, m));
  for (size_t i = 0; i < m->n_functions; i++) {
    snprintf(s->label, sizeof s->label, "function '%s'", m->functions[i]->name ? m->functions[i]->name : "");
    OL_TRY(walk(s, &m->functions[i]->base));
  }
  for (size_t i = 0; i < m->n_training_info; i++) {
    snprintf(s->label, sizeof s->label, "training_info %zu", i);
    OL_TRY(walk(s, &m->training_info[i]->base));
  }
  return OL_OK;
}

static ol_status walk_entry(scan *s, const Onnx__ModelProto *m, size_t e) {
  snprintf(s->label, sizeof s->label, "struct type %" PRIu64 " ('%s')", m->struct_types[e]->type_id,
           m->struct_types[e]->name ? m->struct_types[e]->name : "");
  return walk(s, &m->struct_types[e]->base);
}

ol_status ol_builder_check_standalone(const Onnx__ModelProto *m) {
  scan s = {.mode = SCAN_REJECT, .model = m};
  OL_TRY(walk_graph(&s, m));
  return walk_shared_sets(&s, m);
}

/* Marks the entries reachable from the uses; *identity when the export
 * keeps every entry under its id. */
static ol_status mark(scan *s, const Onnx__ModelProto *m, bool *identity) {
  OL_TRY(walk_uses(s, m));
  while (s->queued) OL_TRY(walk_entry(s, m, s->queue[--s->queued]));
  uint64_t next = 1;
  *identity = true;
  for (size_t e = 0; e < m->n_struct_types; e++) {
    s->new_ids[e] = s->used[e] ? next++ : 0;
    if (s->new_ids[e] != m->struct_types[e]->type_id) *identity = false;
  }
  return OL_OK;
}

/* Drops the unused entries of copy and renumbers references and ids. */
static ol_status compact(scan *s, Onnx__ModelProto *copy) {
  s->mode = SCAN_REMAP;
  s->model = copy;
  OL_TRY(walk_uses(s, copy));
  for (size_t e = 0; e < copy->n_struct_types; e++)
    if (s->new_ids[e]) OL_TRY(walk_entry(s, copy, e));
  size_t kept = 0;
  for (size_t e = 0; e < copy->n_struct_types; e++) {
    Onnx__StructTypeProto *t = copy->struct_types[e];
    if (!s->new_ids[e]) {
      onnx__struct_type_proto__free_unpacked(t, NULL);
      continue;
    }
    t->type_id = s->new_ids[e];
    copy->struct_types[kept++] = t;
  }
  copy->n_struct_types = kept;
  return OL_OK;
}

static ol_status pack_model(const Onnx__ModelProto *m, void **out_bytes, size_t *out_size) {
  size_t size = onnx__model_proto__get_packed_size(m);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (!bytes) return OL_OUT_OF_MEMORY;
  onnx__model_proto__pack(m, bytes);
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}

ol_status ol_builder_export_model(const Onnx__ModelProto *m, void **out_bytes, size_t *out_size) {
  size_t n = m->n_struct_types;
  scan s = {.mode = SCAN_MARK, .model = m};
  s.used = ol_xcalloc(n ? n : 1, 1);
  s.new_ids = ol_xcalloc(n ? n : 1, sizeof *s.new_ids);
  s.queue = ol_xcalloc(n ? n : 1, sizeof *s.queue);
  ol_status st = s.used && s.new_ids && s.queue ? OL_OK : OL_OUT_OF_MEMORY;
  bool identity = true;
  if (st == OL_OK) st = mark(&s, m, &identity);
  void *bytes = NULL;
  size_t size = 0;
  if (st == OL_OK) st = pack_model(m, &bytes, &size);
  if (st == OL_OK && !identity) {
    /* the builder keeps its catalogue: compact a copy */
    Onnx__ModelProto *copy = onnx__model_proto__unpack(NULL, size, bytes);
    free(bytes);
    bytes = NULL;
    st = copy ? compact(&s, copy) : ol_error(OL_OUT_OF_MEMORY, "out of memory copying the model");
    if (st == OL_OK) st = pack_model(copy, &bytes, &size);
    if (copy) onnx__model_proto__free_unpacked(copy, NULL);
  }
  free(s.used);
  free(s.new_ids);
  free(s.queue);
  if (st != OL_OK) {
    free(bytes);
    return st;
  }
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}
