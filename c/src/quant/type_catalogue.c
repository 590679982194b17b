/* Struct type catalogues: type_ref chains resolved once (see type_catalogue.h). */
#include "quant/type_catalogue.h"

#include <stdbool.h>
#include <stdlib.h>

#include "core/alloc.h"
#include "core/status.h"

typedef struct entry {
  uint64_t id;
  const Onnx__StructTypeProto *root; /* NULL: the chain is broken */
  int steps;                         /* references followed from the declaration to root */
  uint64_t missing;                  /* broken: the undeclared id (when not too long) */
  bool too_long;
} entry;

struct ol_type_catalogue {
  size_t count;
  entry *entries; /* declarations with a type_id, in declaration order */
  const Onnx__StructTypeProto *const *declared; /* entries[i]'s declaration: declared[index[i]] */
  size_t *index;
};

/* The first declaration whose type_id is id, or NULL. */
static const Onnx__StructTypeProto *find(const ol_type_catalogue *c, uint64_t id) {
  for (size_t i = 0; c && i < c->count; i++)
    if (c->entries[i].id == id) return c->declared[c->index[i]];
  return NULL;
}

static const entry *find_entry(const ol_type_catalogue *c, uint64_t id) {
  for (size_t i = 0; c && i < c->count; i++)
    if (c->entries[i].id == id) return &c->entries[i];
  return NULL;
}

ol_status ol_type_catalogue_create(const Onnx__StructTypeProto *const *types, size_t count,
                                   ol_type_catalogue **out) {
  *out = NULL;
  ol_type_catalogue *c = ol_xcalloc(1, sizeof *c);
  entry *entries = ol_xcalloc(count ? count : 1, sizeof *entries);
  size_t *index = ol_xcalloc(count ? count : 1, sizeof *index);
  if (!c || !entries || !index) {
    free(c), free(entries), free(index);
    return OL_OUT_OF_MEMORY;
  }
  c->entries = entries;
  c->index = index;
  c->declared = types;
  for (size_t i = 0; i < count; i++)
    if (types[i] && types[i]->has_type_id) {
      c->index[c->count] = i;
      c->entries[c->count++].id = types[i]->type_id;
    }
  for (size_t i = 0; i < c->count; i++) {
    entry *e = &c->entries[i];
    const Onnx__StructTypeProto *t = types[c->index[i]];
    while (t && t->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF && e->steps < OL_TYPE_REF_MAX_DEPTH) {
      const Onnx__StructTypeProto *next = find(c, t->type_ref);
      if (!next) e->missing = t->type_ref;
      t = next;
      e->steps++;
    }
    if (t && t->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF) e->too_long = true;
    else e->root = t;
  }
  *out = c;
  return OL_OK;
}

void ol_type_catalogue_destroy(ol_type_catalogue *c) {
  if (!c) return;
  free(c->entries);
  free(c->index);
  free(c);
}

ol_status ol_type_catalogue_resolve(const ol_type_catalogue *c, const Onnx__StructTypeProto *type,
                                    const Onnx__StructTypeProto **out) {
  *out = NULL;
  if (!type) return ol_error(OL_INVALID_ARGUMENT, "missing struct type");
  if (type->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF) {
    *out = type;
    return OL_OK;
  }
  const unsigned long long ref = (unsigned long long)type->type_ref;
  const entry *e = find_entry(c, type->type_ref);
  if (!e)
    return ol_error(OL_INVALID_ARGUMENT, "struct_type.type_ref %llu does not name a ModelProto.struct_types entry",
                    ref);
  if (e->too_long || e->steps + 1 > OL_TYPE_REF_MAX_DEPTH)
    return ol_error(OL_INVALID_ARGUMENT,
                    "struct_type.type_ref %llu: the reference chain is longer than %d (a cycle?)", ref,
                    OL_TYPE_REF_MAX_DEPTH);
  if (!e->root)
    return ol_error(OL_INVALID_ARGUMENT,
                    "struct_type.type_ref %llu leads to type_ref %llu, which does not name a "
                    "ModelProto.struct_types entry", ref, (unsigned long long)e->missing);
  *out = e->root;
  return OL_OK;
}
