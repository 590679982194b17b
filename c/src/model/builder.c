/* The graph builder (onnxlight.h, "graph builder"): storage of a model's
 * parts as their protobuf messages, the shared namespace of value names,
 * import, append, remove and read back. Exports are in builder_types.c. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/proto_depth.h"
#include "ir/structured.h"
#include "model/builder_internal.h"

/* ------------------------------------------------------------ the parts */

/* Where a part's repeated field lives: in ModelProto or in the root
 * GraphProto, as (count, array) at these offsets. */
typedef struct part_row {
  const char *name;
  const ProtobufCMessageDescriptor *descriptor;
  bool in_model;
  size_t count_offset, items_offset;
  bool defines; /* its name enters the shared namespace */
} part_row;

#define GRAPH_FIELD(field) false, offsetof(Onnx__GraphProto, n_##field), offsetof(Onnx__GraphProto, field)
#define MODEL_FIELD(field) true, offsetof(Onnx__ModelProto, n_##field), offsetof(Onnx__ModelProto, field)

static const part_row parts[OL_BUILDER_PART_COUNT] = {
    [OL_BUILDER_INPUT] = {"graph input", &onnx__value_info_proto__descriptor, GRAPH_FIELD(input), true},
    [OL_BUILDER_OUTPUT] = {"graph output", &onnx__value_info_proto__descriptor, GRAPH_FIELD(output), false},
    [OL_BUILDER_NODE] = {"node", &onnx__node_proto__descriptor, GRAPH_FIELD(node), true},
    [OL_BUILDER_INITIALIZER] = {"initializer", &onnx__tensor_proto__descriptor, GRAPH_FIELD(initializer), true},
    [OL_BUILDER_STRUCTURED_INITIALIZER] = {"structured initializer", &onnx__encoded_value_proto__descriptor,
                                           GRAPH_FIELD(encoded_initializer), true},
    [OL_BUILDER_CACHE_INITIALIZER] = {"cache initializer", &onnx__paged_cache_proto__descriptor,
                                      GRAPH_FIELD(paged_cache_initializer), true},
    [OL_BUILDER_PERSISTENT_BINDING] = {"persistent binding", &onnx__persistent_binding_proto__descriptor,
                                       GRAPH_FIELD(persistent_bindings), false},
    [OL_BUILDER_STRUCT_TYPE] = {"struct type", &onnx__struct_type_proto__descriptor, MODEL_FIELD(struct_types),
                                false},
    [OL_BUILDER_FUNCTION] = {"function", &onnx__function_proto__descriptor, MODEL_FIELD(functions), false},
    [OL_BUILDER_VALUE_INFO] = {"value info", &onnx__value_info_proto__descriptor, GRAPH_FIELD(value_info), false},
    [OL_BUILDER_SPARSE_INITIALIZER] = {"sparse initializer", &onnx__sparse_tensor_proto__descriptor,
                                       GRAPH_FIELD(sparse_initializer), true},
    [OL_BUILDER_OPSET_IMPORT] = {"opset import", &onnx__operator_set_id_proto__descriptor, MODEL_FIELD(opset_import),
                                 false},
};

static bool part_valid(ol_builder_part part) { return (unsigned)part < OL_BUILDER_PART_COUNT; }

const char *ol_builder_part_name(ol_builder_part part) { return part_valid(part) ? parts[part].name : ""; }

static size_t *count_of(const Onnx__ModelProto *m, ol_builder_part part) {
  char *base = parts[part].in_model ? (char *)m : (char *)m->graph;
  return (size_t *)(base + parts[part].count_offset);
}

static ProtobufCMessage ***items_of(const Onnx__ModelProto *m, ol_builder_part part) {
  char *base = parts[part].in_model ? (char *)m : (char *)m->graph;
  return (ProtobufCMessage ***)(base + parts[part].items_offset);
}

static ProtobufCMessage *item(const Onnx__ModelProto *m, ol_builder_part part, size_t index) {
  return (*items_of(m, part))[index];
}

size_t ol_builder_part_count(const Onnx__ModelProto *m, ol_builder_part part) { return *count_of(m, part); }
ProtobufCMessage *ol_builder_part_item(const Onnx__ModelProto *m, ol_builder_part part, size_t index) {
  return item(m, part, index);
}

ProtobufCMessage **ol_builder_part_items(const Onnx__ModelProto *m, ol_builder_part part) {
  return *items_of(m, part);
}
void ol_builder_set_part_items(Onnx__ModelProto *m, ol_builder_part part, ProtobufCMessage **items) {
  *items_of(m, part) = items;
}

static const char *str(const char *s) { return s ? s : ""; }

/* The name a part is known by ("" when it has none). */
static const char *name_of(ol_builder_part part, const ProtobufCMessage *msg) {
  switch (part) {
  case OL_BUILDER_INPUT:
  case OL_BUILDER_OUTPUT:
  case OL_BUILDER_VALUE_INFO: return str(((const Onnx__ValueInfoProto *)msg)->name);
  case OL_BUILDER_NODE: return str(((const Onnx__NodeProto *)msg)->name);
  case OL_BUILDER_INITIALIZER: return str(((const Onnx__TensorProto *)msg)->name);
  case OL_BUILDER_STRUCTURED_INITIALIZER: return str(((const Onnx__EncodedValueProto *)msg)->name);
  case OL_BUILDER_CACHE_INITIALIZER: return str(((const Onnx__PagedCacheProto *)msg)->name);
  case OL_BUILDER_PERSISTENT_BINDING: return str(((const Onnx__PersistentBindingProto *)msg)->input_name);
  case OL_BUILDER_FUNCTION: return str(((const Onnx__FunctionProto *)msg)->name);
  case OL_BUILDER_OPSET_IMPORT: return str(((const Onnx__OperatorSetIdProto *)msg)->domain);
  case OL_BUILDER_SPARSE_INITIALIZER: {
    const Onnx__SparseTensorProto *s = (const Onnx__SparseTensorProto *)msg;
    return s->values ? str(s->values->name) : "";
  }
  default: return "";
  }
}

/* Tells the kept inference which values a part's edit changes. */
static void touch_part(ol_builder *b, ol_builder_part part, const ProtobufCMessage *msg) {
  switch (part) {
  case OL_BUILDER_NODE: {
    const Onnx__NodeProto *n = (const Onnx__NodeProto *)msg;
    for (size_t o = 0; o < n->n_output; o++)
      if (str(n->output[o])[0]) ol_builder_infer_touch(b, n->output[o]);
    return;
  }
  case OL_BUILDER_STRUCT_TYPE:
  case OL_BUILDER_FUNCTION:
  case OL_BUILDER_OPSET_IMPORT: ol_builder_infer_touch(b, NULL); return;
  case OL_BUILDER_PERSISTENT_BINDING: return;
  default: ol_builder_infer_touch(b, name_of(part, msg)); return;
  }
}

void ol_builder_part_label(const Onnx__ModelProto *m, ol_builder_part part, size_t index, char *buf, size_t size) {
  const ProtobufCMessage *msg = item(m, part, index);
  if (part == OL_BUILDER_NODE) {
    const Onnx__NodeProto *n = (const Onnx__NodeProto *)msg;
    snprintf(buf, size, "node '%s' (%s)", str(n->name), str(n->op_type));
  } else if (part == OL_BUILDER_STRUCT_TYPE) {
    snprintf(buf, size, "struct type %" PRIu64, ((const Onnx__StructTypeProto *)msg)->type_id);
  } else {
    snprintf(buf, size, "%s '%s'", parts[part].name, name_of(part, msg));
  }
}

/* ------------------------------------------------------------ namespace */

#define HOLDER(index, part) ((int32_t)((index) << 4 | (size_t)(part)))
#define HOLDER_PART(h) ((ol_builder_part)((h) & 15))
#define HOLDER_INDEX(h) ((size_t)(h) >> 4)

/* The text naming a holder of name, for clash messages. */
static void holder_text(const Onnx__ModelProto *m, int32_t holder, const char *name, char *buf, size_t size) {
  if (HOLDER_PART(holder) == OL_BUILDER_NODE) {
    const Onnx__NodeProto *n = m->graph->node[HOLDER_INDEX(holder)];
    snprintf(buf, size, "the output '%s' of node '%s' (%s)", name, str(n->name), str(n->op_type));
  } else {
    snprintf(buf, size, "the %s '%s'", parts[HOLDER_PART(holder)].name, name);
  }
}

/* A graph input and its default (a TensorProto or paged cache initializer
 * of the same name, which a caller may override) may share a name; nothing
 * else may. */
static bool is_default(ol_builder_part p) { return p == OL_BUILDER_INITIALIZER || p == OL_BUILDER_CACHE_INITIALIZER; }
static bool may_share(ol_builder_part a, ol_builder_part b) {
  return (a == OL_BUILDER_INPUT && is_default(b)) || (is_default(a) && b == OL_BUILDER_INPUT);
}

/* The graph input other than the one at skip named name (-1: none). */
static long other_input(const Onnx__ModelProto *m, const char *name, size_t skip) {
  for (size_t i = 0; i < m->graph->n_input; i++)
    if (i != skip && strcmp(str(m->graph->input[i]->name), name) == 0) return (long)i;
  return -1;
}

/* Whether name may be defined by new_holder; the clash error otherwise. The
 * map holds a name's default rather than its input when it has both, so a
 * second default clashes with the first; a second input is looked up. */
static ol_status check_free(const Onnx__ModelProto *m, const ol_strmap *names, const char *name, int32_t new_holder,
                            const char *what) {
  int32_t held = ol_strmap_get(names, name);
  if (held >= 0 && may_share(HOLDER_PART(held), HOLDER_PART(new_holder)) && HOLDER_PART(new_holder) == OL_BUILDER_INPUT) {
    long input = other_input(m, name, HOLDER_INDEX(new_holder));
    if (input >= 0) held = HOLDER((size_t)input, OL_BUILDER_INPUT);
  }
  if (held < 0 || may_share(HOLDER_PART(held), HOLDER_PART(new_holder))) return OL_OK;
  char a[256], b[256];
  holder_text(m, held, name, a, sizeof a);
  if (HOLDER_PART(new_holder) == OL_BUILDER_NODE) {
    const Onnx__NodeProto *n = (const Onnx__NodeProto *)item(m, OL_BUILDER_NODE, HOLDER_INDEX(new_holder));
    snprintf(b, sizeof b, "the output '%s' of node '%s' (%s)", name, str(n->name), str(n->op_type));
  } else {
    snprintf(b, sizeof b, "the %s '%s'", parts[HOLDER_PART(new_holder)].name, name);
  }
  return ol_error(OL_INVALID_ARGUMENT,
                  "%s: the name '%s' is taken: %s clashes with %s (graph inputs, initializers of every kind "
                  "and node outputs share one namespace)", what, name, b, a);
}

static ol_status define(const Onnx__ModelProto *m, ol_strmap *names, const char *name, int32_t holder,
                        const char *what) {
  if (!name[0]) return OL_OK;
  OL_TRY(check_free(m, names, name, holder, what));
  int32_t held = ol_strmap_get(names, name);
  if (held >= 0 && HOLDER_PART(held) != OL_BUILDER_INPUT) return OL_OK; /* input added to its default */
  return ol_strmap_put(names, name, holder); /* new, or a default joining its input */
}

/* The names of one part's items (node outputs for nodes). */
static ol_status define_item(const Onnx__ModelProto *m, ol_strmap *names, ol_builder_part part, size_t index,
                             const char *what) {
  const ProtobufCMessage *msg = item(m, part, index);
  if (part != OL_BUILDER_NODE) return define(m, names, name_of(part, msg), HOLDER(index, part), what);
  const Onnx__NodeProto *n = (const Onnx__NodeProto *)msg;
  for (size_t o = 0; o < n->n_output; o++) OL_TRY(define(m, names, str(n->output[o]), HOLDER(index, part), what));
  return OL_OK;
}

static const ol_builder_part defining_parts[] = {OL_BUILDER_INPUT,
                                                 OL_BUILDER_INITIALIZER,
                                                 OL_BUILDER_SPARSE_INITIALIZER,
                                                 OL_BUILDER_STRUCTURED_INITIALIZER,
                                                 OL_BUILDER_CACHE_INITIALIZER,
                                                 OL_BUILDER_NODE};

static ol_status rebuild_names(ol_builder *b, const char *what) {
  ol_strmap_free(&b->names);
  ol_strmap_init(&b->names);
  b->names_stale = true;
  for (size_t k = 0; k < sizeof defining_parts / sizeof *defining_parts; k++) {
    ol_builder_part part = defining_parts[k];
    for (size_t i = 0; i < *count_of(b->model, part); i++) OL_TRY(define_item(b->model, &b->names, part, i, what));
  }
  b->names_stale = false;
  return OL_OK;
}

static ol_status fresh_names(ol_builder *b, const char *what) {
  return b->names_stale ? rebuild_names(b, what) : OL_OK;
}

/* ------------------------------------------------------------ rules of one new part */

static ol_status find(const Onnx__ModelProto *m, ol_builder_part part, const char *key, size_t *index);

static ol_status check_output(const Onnx__ModelProto *m, const Onnx__ValueInfoProto *vi, const char *what) {
  size_t index = 0;
  if (find(m, OL_BUILDER_OUTPUT, vi->name, &index) == OL_OK)
    return ol_error(OL_INVALID_ARGUMENT, "%s: the graph output '%s' is already declared", what, vi->name);
  ol_clear_error();
  return OL_OK;
}

static ol_status check_binding(const Onnx__ModelProto *m, const Onnx__PersistentBindingProto *pb, const char *what) {
  const char *in = str(pb->input_name), *out = str(pb->output_name);
  if (!out[0]) return ol_error(OL_INVALID_ARGUMENT, "%s: the persistent binding of '%s' has no output_name", what, in);
  size_t index = 0;
  if (find(m, OL_BUILDER_INPUT, in, &index) != OL_OK)
    return ol_error(OL_INVALID_ARGUMENT, "%s: persistent binding '%s' <- '%s': '%s' is not a graph input", what, in,
                    out, in);
  if (find(m, OL_BUILDER_OUTPUT, out, &index) != OL_OK)
    return ol_error(OL_INVALID_ARGUMENT, "%s: persistent binding '%s' <- '%s': '%s' is not a graph output", what,
                    in, out, out);
  if (find(m, OL_BUILDER_PERSISTENT_BINDING, in, &index) == OL_OK)
    return ol_error(OL_INVALID_ARGUMENT, "%s: the graph input '%s' already has a persistent binding", what, in);
  ol_clear_error();
  return OL_OK;
}

static ol_status check_struct_type(const Onnx__ModelProto *m, const Onnx__StructTypeProto *t, const char *what) {
  if (!t->has_type_id || t->type_id == 0)
    return ol_error(OL_INVALID_ARGUMENT, "%s: a catalogue struct type needs a nonzero type_id (name '%s')", what,
                    str(t->name));
  for (size_t i = 0; i < m->n_struct_types; i++)
    if (m->struct_types[i] != t && m->struct_types[i]->type_id == t->type_id)
      return ol_error(OL_INVALID_ARGUMENT, "%s: the struct type id %" PRIu64 " is declared twice ('%s' and '%s')",
                      what, t->type_id, str(m->struct_types[i]->name), str(t->name));
  return OL_OK;
}

static ol_status check_function(const Onnx__ModelProto *m, const Onnx__FunctionProto *f, const char *what) {
  if (!str(f->name)[0]) return ol_error(OL_INVALID_ARGUMENT, "%s: a function needs a name", what);
  for (size_t i = 0; i < m->n_functions; i++) {
    const Onnx__FunctionProto *g = m->functions[i];
    if (g != f && strcmp(str(g->name), f->name) == 0 && strcmp(str(g->domain), str(f->domain)) == 0 &&
        strcmp(str(g->overload), str(f->overload)) == 0)
      return ol_error(OL_INVALID_ARGUMENT, "%s: the function '%s' (domain '%s') is declared twice", what, f->name,
                      str(f->domain));
  }
  return OL_OK;
}

/* A domain is imported once, with a positive version ("" is the default domain). */
static ol_status check_opset(const Onnx__ModelProto *m, const Onnx__OperatorSetIdProto *o, const char *what) {
  if (!o->has_version || o->version <= 0)
    return ol_error(OL_INVALID_ARGUMENT, "%s: the opset import of domain '%s' needs a positive version", what,
                    str(o->domain));
  for (size_t i = 0; i < m->n_opset_import; i++)
    if (m->opset_import[i] != o && strcmp(str(m->opset_import[i]->domain), str(o->domain)) == 0)
      return ol_error(OL_INVALID_ARGUMENT, "%s: the domain '%s' is already imported (version %lld)", what,
                      str(o->domain), (long long)m->opset_import[i]->version);
  return OL_OK;
}

/* MakeStructuredInitializer's checks, by the helper shape inference seeds
 * encoded initializers with: the layout resolves through the catalogue as
 * it is now (declare struct types first) and the payload fits it. */
static ol_status check_structured(const Onnx__ModelProto *m, const Onnx__EncodedValueProto *ev, const char *what) {
  ol_type_catalogue *types = NULL;
  OL_TRY(ol_type_catalogue_create((const Onnx__StructTypeProto *const *)m->struct_types, m->n_struct_types, &types));
  ol_struct_record record;
  ol_status st = ol_structured_describe(ev, types, &record);
  ol_type_catalogue_destroy(types);
  if (st == OL_INVALID_MODEL) st = ol_error_wrap(OL_INVALID_ARGUMENT, "%s", what);
  return st;
}

/* Rules that do not involve the namespace. */
static ol_status check_part(const Onnx__ModelProto *m, ol_builder_part part, const ProtobufCMessage *msg,
                            const char *what) {
  switch (part) {
  case OL_BUILDER_NODE:
    if (!str(((const Onnx__NodeProto *)msg)->op_type)[0])
      return ol_error(OL_INVALID_ARGUMENT, "%s: node '%s' has no op_type", what, name_of(part, msg));
    return OL_OK;
  case OL_BUILDER_OUTPUT: OL_TRY(check_output(m, (const Onnx__ValueInfoProto *)msg, what)); break;
  case OL_BUILDER_PERSISTENT_BINDING: return check_binding(m, (const Onnx__PersistentBindingProto *)msg, what);
  case OL_BUILDER_STRUCT_TYPE: return check_struct_type(m, (const Onnx__StructTypeProto *)msg, what);
  case OL_BUILDER_FUNCTION: return check_function(m, (const Onnx__FunctionProto *)msg, what);
  case OL_BUILDER_OPSET_IMPORT: return check_opset(m, (const Onnx__OperatorSetIdProto *)msg, what);
  case OL_BUILDER_STRUCTURED_INITIALIZER:
    if (!name_of(part, msg)[0]) break;
    return check_structured(m, (const Onnx__EncodedValueProto *)msg, what);
  default: break;
  }
  if (!name_of(part, msg)[0])
    return ol_error(OL_INVALID_ARGUMENT, "%s: a %s needs a name", what, parts[part].name);
  return OL_OK;
}

/* ------------------------------------------------------------ storage */

static ol_status append(Onnx__ModelProto *m, ol_builder_part part, ProtobufCMessage *msg) {
  size_t *count = count_of(m, part);
  ProtobufCMessage ***items = items_of(m, part);
  ProtobufCMessage **grown = realloc(*items, (*count + 1) * sizeof *grown);
  if (!grown) return ol_error(OL_OUT_OF_MEMORY, "out of memory adding a %s", parts[part].name);
  grown[*count] = msg;
  *items = grown;
  (*count)++;
  return OL_OK;
}

static ProtobufCMessage *unpack(ol_builder_part part, const void *bytes, size_t size, const char *what) {
  if (ol_proto_check_depth(parts[part].descriptor, bytes, size, parts[part].descriptor->name) != OL_OK) {
    ol_error_wrap(OL_INVALID_ARGUMENT, "%s", what);
    return NULL;
  }
  ProtobufCMessage *msg = protobuf_c_message_unpack(parts[part].descriptor, NULL, size, bytes);
  if (!msg)
    ol_error(OL_INVALID_ARGUMENT, "%s: the bytes are not a serialized %s", what, parts[part].descriptor->name);
  return msg;
}

ol_status ol_builder_add(ol_builder *b, ol_builder_part part, const void *bytes, size_t size) {
  return ol_builder_add_at(b, part, bytes, size, b && part_valid(part) ? *count_of(b->model, part) : 0);
}

/* Moves the last item of a repeated field to index. */
static void move_last_to(Onnx__ModelProto *m, ol_builder_part part, size_t index) {
  size_t count = *count_of(m, part);
  ProtobufCMessage **items = *items_of(m, part);
  if (index + 1 >= count) return;
  ProtobufCMessage *last = items[count - 1];
  memmove(items + index + 1, items + index, (count - 1 - index) * sizeof *items);
  items[index] = last;
}

ol_status ol_builder_add_at(ol_builder *b, ol_builder_part part, const void *bytes, size_t size, size_t at) {
  const char *what = "ol_builder_add";
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "%s: builder is NULL", what);
  if (!part_valid(part)) return ol_error(OL_INVALID_ARGUMENT, "%s: unknown part %d", what, (int)part);
  if (!bytes && size) return ol_error(OL_INVALID_ARGUMENT, "%s: bytes is NULL", what);
  ProtobufCMessage *msg = unpack(part, bytes ? bytes : "", size, what);
  if (!msg) return OL_INVALID_ARGUMENT;
  return ol_builder_insert_message(b, part, msg, at);
}

ol_status ol_builder_insert_message(ol_builder *b, ol_builder_part part, ProtobufCMessage *msg, size_t at) {
  const char *what = "ol_builder_add";
  ol_status st = fresh_names(b, what);
  if (st == OL_OK && at > *count_of(b->model, part))
    st = ol_error(OL_INVALID_ARGUMENT, "%s: position %zu is past the %zu %s parts", what, at,
                  *count_of(b->model, part), parts[part].name);
  if (st != OL_OK) {
    protobuf_c_message_free_unpacked(msg, NULL);
    return st;
  }
  st = check_part(b->model, part, msg, what);
  /* the new item goes at the end: appended first so that its index and its
   * node are what clash messages name, taken out again on failure */
  size_t index = *count_of(b->model, part);
  if (st == OL_OK) st = append(b->model, part, msg);
  if (st == OL_OK && parts[part].defines) {
    ol_strmap trial;
    ol_strmap_init(&trial);
    /* check against the map first, so that a failure leaves it untouched */
    if (part == OL_BUILDER_NODE) {
      const Onnx__NodeProto *n = (const Onnx__NodeProto *)msg;
      for (size_t o = 0; o < n->n_output && st == OL_OK; o++) {
        const char *name = str(n->output[o]);
        if (!name[0]) continue;
        st = check_free(b->model, &b->names, name, HOLDER(index, part), what);
        if (st == OL_OK && ol_strmap_get(&trial, name) >= 0)
          st = ol_error(OL_INVALID_ARGUMENT, "%s: node '%s' (%s) names the output '%s' twice", what, str(n->name),
                        str(n->op_type), name);
        if (st == OL_OK) st = ol_strmap_put(&trial, name, 0);
      }
    } else {
      st = check_free(b->model, &b->names, name_of(part, msg), HOLDER(index, part), what);
    }
    ol_strmap_free(&trial);
    if (st == OL_OK) st = define_item(b->model, &b->names, part, index, what);
    if (st != OL_OK) (*count_of(b->model, part))--;
  } else if (st != OL_OK && *count_of(b->model, part) > index) {
    (*count_of(b->model, part))--;
  }
  if (st == OL_OK && b->shared && !ol_proto_patch_adopt_message(b->shared, msg)) {
    (*count_of(b->model, part))--;
    st = ol_error(OL_OUT_OF_MEMORY, "out of memory adding a %s", parts[part].name);
  }
  if (st != OL_OK) {
    protobuf_c_message_free_unpacked(msg, NULL);
    b->names_stale = true; /* a failed define may have left some outputs in */
    return st;
  }
  if (at < index) {
    move_last_to(b->model, part, at);
    if (parts[part].defines) b->names_stale = true; /* holder indices shifted */
  }
  touch_part(b, part, msg);
  return OL_OK;
}

ol_status ol_builder_add_input(ol_builder *b, const void *vi, size_t size) { return ol_builder_add(b, OL_BUILDER_INPUT, vi, size); }
ol_status ol_builder_add_output(ol_builder *b, const void *vi, size_t size) { return ol_builder_add(b, OL_BUILDER_OUTPUT, vi, size); }
ol_status ol_builder_add_node(ol_builder *b, const void *node, size_t size) { return ol_builder_add(b, OL_BUILDER_NODE, node, size); }
ol_status ol_builder_add_initializer(ol_builder *b, const void *tensor, size_t size) {
  return ol_builder_add(b, OL_BUILDER_INITIALIZER, tensor, size);
}
ol_status ol_builder_add_structured_initializer(ol_builder *b, const void *encoded, size_t size) {
  return ol_builder_add(b, OL_BUILDER_STRUCTURED_INITIALIZER, encoded, size);
}
ol_status ol_builder_add_cache_initializer(ol_builder *b, const void *paged_cache, size_t size) {
  return ol_builder_add(b, OL_BUILDER_CACHE_INITIALIZER, paged_cache, size);
}
ol_status ol_builder_add_struct_type(ol_builder *b, const void *struct_type, size_t size) {
  return ol_builder_add(b, OL_BUILDER_STRUCT_TYPE, struct_type, size);
}

ol_status ol_builder_add_persistent_binding(ol_builder *b, const char *input_name, const char *output_name) {
  if (!input_name || !output_name)
    return ol_error(OL_INVALID_ARGUMENT, "ol_builder_add_persistent_binding: a name is NULL");
  Onnx__PersistentBindingProto pb = ONNX__PERSISTENT_BINDING_PROTO__INIT;
  pb.input_name = (char *)input_name;
  pb.output_name = (char *)output_name;
  return ol_builder_add_copy(b, OL_BUILDER_PERSISTENT_BINDING, &pb.base, ol_builder_count(b, OL_BUILDER_PERSISTENT_BINDING));
}

ol_status ol_builder_add_copy(ol_builder *b, ol_builder_part part, const ProtobufCMessage *msg, size_t at) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (!bytes) return OL_OUT_OF_MEMORY;
  protobuf_c_message_pack(msg, bytes);
  ol_status st = ol_builder_add_at(b, part, bytes, size, at);
  free(bytes);
  return st;
}

/* ------------------------------------------------------------ find, remove, read */

static bool node_matches(const Onnx__NodeProto *n, const char *key) {
  if (n->name && n->name[0]) return strcmp(n->name, key) == 0;
  for (size_t o = 0; o < n->n_output; o++)
    if (n->output[o] && strcmp(n->output[o], key) == 0) return true;
  return false;
}

static ol_status find(const Onnx__ModelProto *m, ol_builder_part part, const char *key, size_t *index) {
  uint64_t id = 0;
  if (part == OL_BUILDER_STRUCT_TYPE) {
    char *end = NULL;
    id = strtoull(key, &end, 10);
    if (!key[0] || *end) return ol_error(OL_INVALID_ARGUMENT, "'%s' is not a struct type id", key);
  }
  for (size_t i = 0; i < *count_of(m, part); i++) {
    const ProtobufCMessage *msg = item(m, part, i);
    bool hit = part == OL_BUILDER_NODE          ? node_matches((const Onnx__NodeProto *)msg, key)
               : part == OL_BUILDER_STRUCT_TYPE ? ((const Onnx__StructTypeProto *)msg)->type_id == id
                                                : strcmp(name_of(part, msg), key) == 0;
    if (hit) return *index = i, OL_OK;
  }
  return ol_error(OL_NOT_FOUND, "the builder has no %s '%s'", parts[part].name, key);
}

/* A bound graph input or output goes only after its binding. */
static ol_status check_unbound(const Onnx__ModelProto *m, ol_builder_part part, const char *name) {
  if (part != OL_BUILDER_INPUT && part != OL_BUILDER_OUTPUT) return OL_OK;
  const Onnx__GraphProto *g = m->graph;
  for (size_t i = 0; i < g->n_persistent_bindings; i++) {
    const Onnx__PersistentBindingProto *pb = g->persistent_bindings[i];
    const char *bound = part == OL_BUILDER_INPUT ? str(pb->input_name) : str(pb->output_name);
    if (strcmp(bound, name) == 0)
      return ol_error(OL_FAILED_PRECONDITION,
                      "ol_builder_remove: the %s '%s' is used by the persistent binding '%s' <- '%s'; remove the "
                      "binding first", parts[part].name, name, str(pb->input_name), str(pb->output_name));
  }
  return OL_OK;
}

/* Takes the item at index out of its repeated field (the array keeps its
 * size, so putting it back never allocates). */
static ProtobufCMessage *take_out(Onnx__ModelProto *m, ol_builder_part part, size_t index) {
  size_t *count = count_of(m, part);
  ProtobufCMessage **items = *items_of(m, part);
  ProtobufCMessage *msg = items[index];
  memmove(items + index, items + index + 1, (*count - index - 1) * sizeof *items);
  (*count)--;
  return msg;
}

static void put_back(Onnx__ModelProto *m, ol_builder_part part, size_t index, ProtobufCMessage *msg) {
  size_t *count = count_of(m, part);
  ProtobufCMessage **items = *items_of(m, part);
  memmove(items + index + 1, items + index, (*count - index) * sizeof *items);
  items[index] = msg;
  (*count)++;
}

static void free_part(ol_builder *b, ProtobufCMessage *msg) {
  /* a shared builder's source messages are not its own to free */
  if (!b->shared) protobuf_c_message_free_unpacked(msg, NULL);
  else ol_proto_patch_free_message(b->shared, msg);
}

ol_status ol_builder_remove(ol_builder *b, ol_builder_part part, const char *key) {
  if (!b || !key) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_remove: builder or key is NULL");
  if (!part_valid(part)) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_remove: unknown part %d", (int)part);
  size_t index = 0;
  ol_status st = find(b->model, part, key, &index);
  if (st != OL_OK) return ol_error_wrap(st, "ol_builder_remove");
  return ol_builder_remove_at(b, part, index);
}

ol_status ol_builder_remove_at(ol_builder *b, ol_builder_part part, size_t index) {
  ProtobufCMessage *msg = item(b->model, part, index);
  OL_TRY(check_unbound(b->model, part, name_of(part, msg)));
  touch_part(b, part, msg);
  free_part(b, take_out(b->model, part, index));
  if (parts[part].defines) b->names_stale = true;
  return OL_OK;
}

ol_status ol_builder_replace(ol_builder *b, ol_builder_part part, size_t index, const void *bytes, size_t size) {
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_replace: builder is NULL");
  if (!part_valid(part)) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_replace: unknown part %d", (int)part);
  if (index >= *count_of(b->model, part))
    return ol_error(OL_INVALID_ARGUMENT, "ol_builder_replace: index %zu is past the %zu %s parts", index,
                    *count_of(b->model, part), parts[part].name);
  ProtobufCMessage *old = take_out(b->model, part, index);
  if (parts[part].defines) b->names_stale = true; /* the old part's names are free */
  ol_status st = ol_builder_add_at(b, part, bytes, size, index);
  if (st == OL_OK && strcmp(name_of(part, old), name_of(part, item(b->model, part, index))) != 0) {
    st = check_unbound(b->model, part, name_of(part, old)); /* a binding keeps its input and output */
    if (st != OL_OK) free_part(b, take_out(b->model, part, index));
  }
  if (st != OL_OK) {
    put_back(b->model, part, index, old);
    b->names_stale = true;
    return ol_error_wrap(st, "ol_builder_replace");
  }
  touch_part(b, part, old);
  free_part(b, old);
  b->names_stale = true;
  return OL_OK;
}

size_t ol_builder_count(const ol_builder *b, ol_builder_part part) {
  return b && part_valid(part) ? *count_of(b->model, part) : 0;
}

static ol_status pack(const ProtobufCMessage *msg, void **out_bytes, size_t *out_size) {
  size_t size = protobuf_c_message_get_packed_size(msg);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (!bytes) return OL_OUT_OF_MEMORY;
  protobuf_c_message_pack(msg, bytes);
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}

ol_status ol_builder_get(const ol_builder *b, ol_builder_part part, size_t index, void **out_bytes,
                         size_t *out_size) {
  if (!out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_get: an output is NULL");
  *out_bytes = NULL;
  *out_size = 0;
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_get: builder is NULL");
  if (!part_valid(part)) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_get: unknown part %d", (int)part);
  if (index >= *count_of(b->model, part))
    return ol_error(OL_INVALID_ARGUMENT, "ol_builder_get: index %zu is past the %zu %s parts", index,
                    *count_of(b->model, part), parts[part].name);
  return pack(item(b->model, part, index), out_bytes, out_size);
}

/* ------------------------------------------------------------ create, import, export */

static ol_status new_builder(Onnx__ModelProto *m, ol_builder **out) {
  ol_builder *b = ol_xcalloc(1, sizeof *b);
  if (!b) {
    onnx__model_proto__free_unpacked(m, NULL);
    return OL_OUT_OF_MEMORY;
  }
  b->model = m;
  ol_strmap_init(&b->names);
  ol_status st = ol_builder_index(b, "ol_builder_from_model");
  if (st != OL_OK) {
    ol_builder_destroy(b);
    return st;
  }
  *out = b;
  return OL_OK;
}

ol_status ol_builder_index(ol_builder *b, const char *what) {
  b->names_stale = true;
  OL_TRY(rebuild_names(b, what));
  for (size_t i = 0; i < b->model->n_struct_types; i++) OL_TRY(check_struct_type(b->model, b->model->struct_types[i], what));
  return OL_OK;
}

static Onnx__GraphProto *empty_graph(void) {
  Onnx__GraphProto *g = ol_xmalloc(sizeof *g);
  if (!g) return NULL;
  onnx__graph_proto__init(g);
  if (!(g->name = ol_strdup("graph"))) {
    free(g);
    return NULL;
  }
  return g;
}

ol_status ol_builder_create(int64_t ir_version, const ol_builder_opset *opsets, size_t count, ol_builder **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_create: out is NULL");
  *out = NULL;
  if (count && !opsets) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_create: opsets is NULL");
  if (ir_version <= 0) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_create: ir_version %lld is not positive", (long long)ir_version);
  for (size_t i = 0; i < count; i++) {
    for (size_t j = 0; j < i; j++)
      if (strcmp(str(opsets[i].domain), str(opsets[j].domain)) == 0)
        return ol_error(OL_INVALID_ARGUMENT, "ol_builder_create: the domain '%s' is imported twice", str(opsets[i].domain));
    if (opsets[i].version <= 0)
      return ol_error(OL_INVALID_ARGUMENT, "ol_builder_create: opset version %lld of domain '%s' is not positive",
                      (long long)opsets[i].version, str(opsets[i].domain));
  }
  /* built as a message on the stack, packed and unpacked: every piece of the
   * stored tree then comes from the default allocator */
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  Onnx__OperatorSetIdProto *ops = ol_xcalloc(count ? count : 1, sizeof *ops);
  Onnx__OperatorSetIdProto **list = ol_xcalloc(count ? count : 1, sizeof *list);
  if (!ops || !list) {
    free(ops);
    free(list);
    return OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < count; i++) {
    onnx__operator_set_id_proto__init(&ops[i]);
    ops[i].domain = (char *)str(opsets[i].domain);
    ops[i].has_version = 1;
    ops[i].version = opsets[i].version;
    list[i] = &ops[i];
  }
  g.name = "graph";
  m.has_ir_version = 1;
  m.ir_version = ir_version;
  m.n_opset_import = count;
  m.opset_import = list;
  m.graph = &g;
  void *bytes = NULL;
  size_t size = 0;
  ol_status st = pack(&m.base, &bytes, &size);
  free(ops);
  free(list);
  if (st != OL_OK) return st;
  Onnx__ModelProto *copy = onnx__model_proto__unpack(NULL, size, bytes);
  free(bytes);
  if (!copy) return ol_error(OL_OUT_OF_MEMORY, "out of memory creating a builder");
  return new_builder(copy, out);
}

ol_status ol_builder_from_model(const void *bytes, size_t size, ol_builder **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_from_model: out is NULL");
  *out = NULL;
  if (!bytes && size) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_from_model: bytes is NULL");
  if (!bytes) bytes = "";
  ol_status st = ol_proto_check_depth(&onnx__model_proto__descriptor, bytes, size, "model");
  if (st != OL_OK) return ol_error_wrap(st, "ol_builder_from_model");
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, bytes);
  if (!m) return ol_error(OL_INVALID_MODEL, "ol_builder_from_model: the bytes are not a serialized ModelProto");
  if (!m->graph && !(m->graph = empty_graph())) {
    onnx__model_proto__free_unpacked(m, NULL);
    return OL_OUT_OF_MEMORY;
  }
  st = new_builder(m, out);
  if (st == OL_INVALID_ARGUMENT) st = ol_error_wrap(OL_INVALID_MODEL, "ol_builder_from_model");
  return st;
}

void ol_builder_destroy(ol_builder *b) {
  if (!b) return;
  if (b->shared) {
    for (int part = 0; part < OL_BUILDER_PART_COUNT; part++) free(*items_of(b->model, (ol_builder_part)part));
    ol_proto_patch_free(b->shared); /* the model and graph structs, the added messages */
  } else if (b->model) {
    onnx__model_proto__free_unpacked(b->model, NULL);
  }
  ol_builder_inference_free(b->inference);
  ol_strmap_free(&b->names);
  free(b);
}

ol_status ol_builder_to_model(const ol_builder *b, void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_to_model: an output is NULL");
  *out_bytes = NULL;
  *out_size = 0;
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_to_model: builder is NULL");
  ol_status st = ol_builder_export_model(b->model, out_bytes, out_size);
  return st == OL_OK || st == OL_OUT_OF_MEMORY ? st : ol_error_wrap(st, "ol_builder_to_model");
}

ol_status ol_builder_to_graph(const ol_builder *b, void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_to_graph: an output is NULL");
  *out_bytes = NULL;
  *out_size = 0;
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_to_graph: builder is NULL");
  ol_status st = ol_builder_check_standalone(b->model);
  if (st != OL_OK) return ol_error_wrap(st, "ol_builder_to_graph");
  return pack(&b->model->graph->base, out_bytes, out_size);
}
