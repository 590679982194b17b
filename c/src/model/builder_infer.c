/* Shape inference inside the graph builder (ol_builder_infer,
 * ol_builder_value_info): the inferred types of the root graph's values are
 * kept between edits, and the next inference re-runs only the nodes an edit
 * affects.
 *
 * Each inference decodes the builder's model in place (ol_model_borrow_proto:
 * no copy, weights viewed) and walks it with model/infer.c in dependency
 * order. Initializers with external data are never read (the builder has
 * no folder): their declared data type and dims are their types, their
 * values are not propagated. A root node runs its shape function again when
 * an edit touched one of its outputs (the node itself, their declarations),
 * when one of its inputs was touched or got a different type in this pass,
 * when it has no kept type, or when it has subgraphs or is a function call
 * (their reads of outer values are not tracked). Any other node keeps its types, so
 * propagation stops at a node whose outputs come out unchanged. Edits of
 * opset imports, struct types or functions re-infer everything.
 *
 * Kept types borrow the builder's messages (an edit touches the names of
 * every message it frees, so a type pointing into one is recomputed before
 * it is read) and, for constants, the tensors of the decoding they came
 * from: those are found again in the next decoding by their source (an
 * initializer, or a tensor attribute of a node). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/grow.h"
#include "core/status.h"
#include "ir/model.h"
#include "model/builder_internal.h"
#include "model/infer_internal.h"

/* ------------------------------------------------------------ tables */

/* One value's type; constant_key names where type.constant comes from
 * ("i:<initializer>" or "n:<node output>:<attribute>"), NULL when none. */
typedef struct entry {
  char *name;
  ol_infer_type type;
  char *constant_key;
} entry;

typedef struct table {
  ol_strmap index; /* name (owned by the entry) -> entry */
  entry *entries;
  size_t count, capacity;
} table;

/* A set of owned names. */
typedef struct name_set {
  ol_strmap index;
  char **items;
  size_t count, capacity;
} name_set;

struct ol_builder_inference {
  table types;          /* the last complete inference */
  ol_model *generation; /* the decoding whose constant tensors `types` view */
  name_set touched;     /* values an edit changed since */
  bool everything;      /* no inference yet, or an edit that can change any type */
};

#define NO_MEMORY ol_error(OL_OUT_OF_MEMORY, "out of memory inferring the builder's shapes")

static void table_free(table *t) {
  for (size_t i = 0; i < t->count; i++) {
    free(t->entries[i].name);
    free(t->entries[i].constant_key);
  }
  free(t->entries);
  ol_strmap_free(&t->index);
  memset(t, 0, sizeof *t);
}

static const entry *table_get(const table *t, const char *name) {
  int32_t i = ol_strmap_get(&t->index, name);
  return i >= 0 ? &t->entries[i] : NULL;
}

/* Puts (or replaces) name's type; takes key (malloc'd, may be NULL). */
static ol_status table_put(table *t, const char *name, const ol_infer_type *type, char *key) {
  int32_t i = ol_strmap_get(&t->index, name);
  if (i >= 0) {
    free(t->entries[i].constant_key);
    t->entries[i].type = *type;
    t->entries[i].constant_key = key;
    return OL_OK;
  }
  /* the map's keys are the entries' names: they do not move when entries does */
  if (!ol_grow(&t->entries, &t->capacity, t->count, 1, sizeof *t->entries, 64)) return free(key), NO_MEMORY;
  char *copy = ol_strdup(name);
  if (!copy || ol_strmap_put(&t->index, copy, (int32_t)t->count) != OL_OK) {
    free(copy);
    free(key);
    return NO_MEMORY;
  }
  t->entries[t->count++] = (entry){copy, *type, key};
  return OL_OK;
}

static bool has_name(const name_set *s, const char *name) { return ol_strmap_get(&s->index, name) >= 0; }

static ol_status add_name(name_set *s, const char *name) {
  if (has_name(s, name)) return OL_OK;
  if (!ol_grow(&s->items, &s->capacity, s->count, 1, sizeof *s->items, 16)) return NO_MEMORY;
  char *copy = ol_strdup(name);
  if (!copy || ol_strmap_put(&s->index, copy, 0) != OL_OK) {
    free(copy);
    return NO_MEMORY;
  }
  s->items[s->count++] = copy;
  return OL_OK;
}

static void names_free(name_set *s) {
  for (size_t i = 0; i < s->count; i++) free(s->items[i]);
  free(s->items);
  ol_strmap_free(&s->index);
  memset(s, 0, sizeof *s);
}

/* ------------------------------------------------------------ constants */

/* The first named output of n ("" when none). */
static const char *first_output(const ol_node *n) {
  for (size_t o = 0; o < n->num_outputs; o++)
    if (n->outputs[o][0]) return n->outputs[o];
  return "";
}

/* The source key of a node-attribute tensor t of g's nodes (malloc'd), or NULL. */
static char *attribute_key(const ol_graph *g, const ol_tensor *t) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    for (size_t a = 0; a < n->num_attrs; a++) {
      if (!n->attrs[a].tensor || &n->attrs[a].tensor->tensor != t) continue;
      const char *out = first_output(n);
      size_t size = strlen(out) + strlen(n->attrs[a].name) + 4;
      char *key = out[0] ? ol_xmalloc(size) : NULL;
      if (key) snprintf(key, size, "n:%s:%s", out, n->attrs[a].name);
      return key;
    }
  }
  return NULL;
}

static char *initializer_key(const char *name) {
  size_t size = strlen(name) + 3;
  char *key = ol_xmalloc(size);
  if (key) snprintf(key, size, "i:%s", name);
  return key;
}

/* The source key of t (a constant of g's root values), or NULL. */
static char *constant_key(const ol_graph *g, const ol_tensor *t) {
  if (!t) return NULL;
  for (size_t i = 0; i < g->num_initializers; i++) {
    const ol_value *v = g->initializers[i].value;
    if (v && v->kind == OL_VALUE_TENSOR && &v->tensor == t) return initializer_key(g->initializers[i].name);
  }
  return attribute_key(g, t);
}

/* The tensor key names in g, or NULL. */
static const ol_tensor *constant_of(const ol_graph *g, const char *key) {
  if (strncmp(key, "i:", 2) == 0) {
    const ol_initializer *init = ol_graph_find_initializer(g, key + 2);
    return init && init->value && init->value->kind == OL_VALUE_TENSOR ? &init->value->tensor : NULL;
  }
  const char *colon = strrchr(key, ':');
  if (strncmp(key, "n:", 2) != 0 || colon == key + 1) return NULL;
  size_t out_length = (size_t)(colon - key - 2);
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    const char *out = first_output(n);
    if (strlen(out) != out_length || strncmp(out, key + 2, out_length) != 0) continue;
    const ol_attr *a = ol_node_attr(n, colon + 1);
    return a && a->tensor ? &a->tensor->tensor : NULL;
  }
  return NULL;
}

/* The value a constant key depends on (the initializer, or the node output). */
static bool constant_touched(const name_set *touched, const char *key) {
  char name[512];
  const char *colon = key[0] == 'n' ? strrchr(key, ':') : NULL;
  size_t length = colon ? (size_t)(colon - key - 2) : strlen(key + 2);
  if (length >= sizeof name) return true;
  memcpy(name, key + 2, length);
  name[length] = 0;
  return has_name(touched, name);
}

/* ------------------------------------------------------------ one inference */

typedef struct pass {
  ol_builder_inference *s;
  const ol_graph *graph; /* the new decoding's root graph */
  table next;
  name_set changed; /* values whose type this pass changed */
  size_t reinferred;
} pass;

static bool same_dim(ol_dim a, ol_dim b) { return a.is_value == b.is_value && a.value == b.value && a.param == b.param; }

/* Whether a recomputed type equals the kept one: the same fields, the same
 * borrowed messages and names (pointers), constants from the same source. */
static bool same_type(const entry *kept, const ol_infer_type *t, const char *key, const name_set *touched) {
  const ol_infer_type *k = &kept->type;
  if (k->known != t->known || k->kind != t->kind || k->dtype != t->dtype || k->rank != t->rank ||
      k->proto != t->proto || k->data_count != t->data_count || k->encoded != t->encoded ||
      k->has_record != t->has_record || (k->constant == NULL) != (t->constant == NULL))
    return false;
  for (int i = 0; i < t->rank; i++)
    if (!same_dim(k->dims[i], t->dims[i])) return false;
  for (int i = 0; i < t->data_count; i++)
    if (!same_dim(k->data[i], t->data[i])) return false;
  if (t->has_record && memcmp(&k->record, &t->record, sizeof t->record) != 0) return false;
  if (!t->constant) return true;
  return kept->constant_key && key && strcmp(kept->constant_key, key) == 0 && !constant_touched(touched, key);
}

static bool has_body(const ol_node *n) {
  if (n->function_body) return true;
  for (size_t a = 0; a < n->num_attrs; a++)
    if (n->attrs[a].graph || n->attrs[a].graphs) return true;
  return false;
}

static bool reuse(void *user, const ol_node *n, ol_infer_type *outputs) {
  pass *p = user;
  const ol_builder_inference *s = p->s;
  if (s->everything || has_body(n)) return false;
  for (size_t i = 0; i < n->num_inputs; i++) {
    const char *in = n->inputs[i];
    /* a changed type, or an edited name nothing defines (any more) */
    if (in[0] && (has_name(&p->changed, in) || (has_name(&s->touched, in) && !table_get(&p->next, in)))) return false;
  }
  for (size_t o = 0; o < n->num_outputs; o++) {
    if (!n->outputs[o][0]) continue;
    const entry *e = has_name(&s->touched, n->outputs[o]) ? NULL : table_get(&s->types, n->outputs[o]);
    if (!e || (e->type.constant && !e->constant_key)) return false;
    outputs[o] = e->type;
    if (e->constant_key && !(outputs[o].constant = constant_of(p->graph, e->constant_key))) return false;
  }
  for (size_t o = 0; o < n->num_outputs; o++) {
    if (!n->outputs[o][0]) continue;
    const char *key = table_get(&s->types, n->outputs[o])->constant_key;
    char *copy = key ? ol_strdup(key) : NULL;
    if ((key && !copy) || table_put(&p->next, n->outputs[o], &outputs[o], copy) != OL_OK) return false;
  }
  return true;
}

/* Keeps name's new type t (constant source key: takes it), noting whether it changed. */
static ol_status keep(pass *p, const char *name, const ol_infer_type *t, char *key) {
  const entry *kept = table_get(&p->s->types, name);
  /* an edited value whose type is a borrowed message counts as changed: a
   * new message may sit at the freed one's address (same pointer, new type) */
  bool edited_message = t->proto && has_name(&p->s->touched, name);
  if (!kept || p->s->everything || edited_message || !same_type(kept, t, key, &p->s->touched)) {
    ol_status st = add_name(&p->changed, name);
    if (st != OL_OK) return free(key), st;
  }
  return table_put(&p->next, name, t, key);
}

static ol_status store(void *user, const ol_node *n, const ol_infer_type *outputs) {
  pass *p = user;
  p->reinferred++;
  for (size_t o = 0; o < n->num_outputs; o++) {
    const char *name = n->outputs[o];
    if (!name[0]) continue;
    /* no key: a constant of a function body or a tensors attribute, not
     * found again next time (then the node runs again) */
    OL_TRY(keep(p, name, &outputs[o], constant_key(p->graph, outputs[o].constant)));
  }
  return OL_OK;
}

static ol_status seeded(void *user, const char *name, const ol_infer_type *t) {
  pass *p = user;
  char *key = t->constant ? initializer_key(name) : NULL;
  if (t->constant && !key) return NO_MEMORY;
  return keep(p, name, t, key);
}

/* ------------------------------------------------------------ builder entry points */

void ol_builder_inference_free(ol_builder_inference *s) {
  if (!s) return;
  table_free(&s->types);
  names_free(&s->touched);
  ol_model_destroy(s->generation);
  free(s);
}

void ol_builder_infer_touch(ol_builder *b, const char *name) {
  ol_builder_inference *s = b->inference;
  if (!s || s->everything) return;
  if (!name || add_name(&s->touched, name) != OL_OK) {
    ol_clear_error();
    s->everything = true; /* out of memory: infer everything next time */
  }
}

ol_status ol_builder_infer(ol_builder *b, size_t *reinferred) {
  if (reinferred) *reinferred = 0;
  if (!b) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_infer: builder is NULL");
  if (!b->inference) {
    if (!(b->inference = ol_xcalloc(1, sizeof *b->inference))) return NO_MEMORY;
    b->inference->everything = true;
  }
  ol_builder_inference *s = b->inference;
  if (!s->everything && s->touched.count == 0 && s->generation) return OL_OK; /* up to date */
  ol_model *generation = NULL;
  ol_status st = ol_model_borrow_proto(b->model, &generation);
  if (st != OL_OK) return st == OL_OUT_OF_MEMORY ? st : ol_error_wrap(st, "ol_builder_infer");
  pass p = {.s = s, .graph = generation->data->graph};
  ol_infer_cache cache = {seeded, reuse, store, &p};
  st = ol_infer_walk_cached(generation->data, &cache);
  names_free(&p.changed);
  if (st != OL_OK) { /* the edits stay pending: the next call tries again */
    table_free(&p.next);
    ol_model_destroy(generation);
    return st == OL_OUT_OF_MEMORY ? st : ol_error_wrap(st, "ol_builder_infer");
  }
  table_free(&s->types);
  s->types = p.next;
  names_free(&s->touched);
  s->everything = false;
  ol_model_destroy(s->generation);
  s->generation = generation;
  if (reinferred) *reinferred = p.reinferred;
  return OL_OK;
}

ol_status ol_builder_value_info(ol_builder *b, const char *name, void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size || !name) return ol_error(OL_INVALID_ARGUMENT, "ol_builder_value_info: an argument is NULL");
  *out_bytes = NULL;
  *out_size = 0;
  OL_TRY(ol_builder_infer(b, NULL));
  const entry *e = table_get(&b->inference->types, name);
  if (!e) return ol_error(OL_NOT_FOUND, "ol_builder_value_info: the builder's graph has no value '%s'", name);
  Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
  vi.name = (char *)name;
  if (ol_infer_recordable(&e->type)) OL_TRY(ol_infer_record_in(&vi, &e->type));
  size_t size = onnx__value_info_proto__get_packed_size(&vi);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (bytes) onnx__value_info_proto__pack(&vi, bytes);
  if (vi.type) onnx__type_proto__free_unpacked(vi.type, NULL);
  if (!bytes) return NO_MEMORY;
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}
