/* Persistent state with structured values: struct_type declarations (inline
 * structure or type_ref into ModelProto.struct_types), typed sequences of
 * tensors and structs (empty ones too), encoded values checked through their
 * logical tensor type; rejections of map/optional/sparse/opaque/string
 * state, also nested, at creation (declarations) and at retention/publication
 * (values); zero-copy retention by pointer identity. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/status.h"
#include "core/value.h"
#include "ir/model.h"
#include "onnxlight.h"

/* ------------------------------------------------------------ TypeProto builders */

/* Messages built here live in a pool freed at the end of each test (after
 * every model and value using them is gone). */
static void *pool[1024];
static size_t npool;

static void *mk(size_t size, const void *init) {
  void *p = malloc(size);
  memcpy(p, init, size);
  if (npool < sizeof pool / sizeof *pool) pool[npool++] = p;
  return p;
}
#define NEW(T, INIT) ((T *)mk(sizeof(T), &(T)INIT))

static void pool_free(void) {
  while (npool) free(pool[--npool]);
}

static void **ptrs(size_t n) {
  void **p = calloc(n ? n : 1, sizeof *p);
  if (npool < sizeof pool / sizeof *pool) pool[npool++] = p;
  return p;
}

#define SYM (-1) /* a symbolic dimension "N" */

static Onnx__TypeProto *tensor_t(int dtype, int rank, const int64_t *dims) {
  Onnx__TypeProto__Tensor *t = NEW(Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
  t->has_elem_type = dtype != 0;
  t->elem_type = dtype;
  if (rank >= 0) {
    Onnx__TensorShapeProto *sh = NEW(Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
    sh->n_dim = (size_t)rank;
    sh->dim = (Onnx__TensorShapeProto__Dimension **)ptrs((size_t)rank);
    for (int i = 0; i < rank; i++) {
      Onnx__TensorShapeProto__Dimension *d = NEW(Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
      if (dims[i] >= 0) {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d->dim_value = dims[i];
      } else {
        d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d->dim_param = (char *)"N";
      }
      sh->dim[i] = d;
    }
    t->shape = sh;
  }
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp->tensor_type = t;
  return tp;
}

static Onnx__TypeProto *vec_t(int dtype, int64_t n) { return tensor_t(dtype, 1, &n); }

static Onnx__TypeProto *seq_t(Onnx__TypeProto *elem) {
  Onnx__TypeProto__Sequence *s = NEW(Onnx__TypeProto__Sequence, ONNX__TYPE_PROTO__SEQUENCE__INIT);
  s->elem_type = elem;
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
  tp->sequence_type = s;
  return tp;
}

static Onnx__TypeProto *untyped_t(void) { return NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT); }

static Onnx__TypeProto *map_t(void) {
  Onnx__TypeProto__Map *m = NEW(Onnx__TypeProto__Map, ONNX__TYPE_PROTO__MAP__INIT);
  m->has_key_type = 1;
  m->key_type = OL_DTYPE_INT64;
  m->value_type = vec_t(OL_DTYPE_FLOAT, 2);
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
  tp->map_type = m;
  return tp;
}

static Onnx__TypeProto *optional_t(Onnx__TypeProto *elem) {
  Onnx__TypeProto__Optional *o = NEW(Onnx__TypeProto__Optional, ONNX__TYPE_PROTO__OPTIONAL__INIT);
  o->elem_type = elem;
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
  tp->optional_type = o;
  return tp;
}

static Onnx__TypeProto *sparse_t(void) {
  Onnx__TypeProto__SparseTensor *s = NEW(Onnx__TypeProto__SparseTensor, ONNX__TYPE_PROTO__SPARSE_TENSOR__INIT);
  s->has_elem_type = 1;
  s->elem_type = OL_DTYPE_FLOAT;
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
  tp->sparse_tensor_type = s;
  return tp;
}

static Onnx__TypeProto *opaque_t(void) {
  Onnx__TypeProto__Opaque *o = NEW(Onnx__TypeProto__Opaque, ONNX__TYPE_PROTO__OPAQUE__INIT);
  o->domain = (char *)"x";
  o->name = (char *)"handle";
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE;
  tp->opaque_type = o;
  return tp;
}

static Onnx__TypeProto *of_struct(Onnx__StructTypeProto *st) {
  Onnx__TypeProto *tp = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  tp->value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  tp->struct_type = st;
  return tp;
}

/* A structure from NULL-terminated (name, type) pairs; a name starting with
 * '=' declares an INT64 constant field (not a runtime field). */
static Onnx__StructTypeProto *structure(const char *const *names, Onnx__TypeProto *const *types) {
  size_t n = 0;
  while (names[n]) n++;
  Onnx__StructTypeProto__Structure *s = NEW(Onnx__StructTypeProto__Structure, ONNX__STRUCT_TYPE_PROTO__STRUCTURE__INIT);
  s->n_field = n;
  s->field = (Onnx__StructTypeProto__Structure__Field **)ptrs(n);
  for (size_t i = 0; i < n; i++) {
    Onnx__StructTypeProto__Structure__Field *f =
        NEW(Onnx__StructTypeProto__Structure__Field, ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__INIT);
    if (names[i][0] == '=') {
      f->name = (char *)names[i] + 1;
      Onnx__TensorProto *c = NEW(Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
      c->has_data_type = 1;
      c->data_type = types[i] ? OL_DTYPE_STRING : OL_DTYPE_INT64; /* a non-NULL type: a string constant */
      static int64_t one = 1;
      static ProtobufCBinaryData word = {1, (uint8_t *)"v"};
      if (types[i]) {
        c->n_string_data = 1;
        c->string_data = &word;
      } else {
        c->n_int64_data = 1;
        c->int64_data = &one;
      }
      f->content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT;
      f->constant = c;
    } else {
      f->name = (char *)names[i];
      f->content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE;
      f->type = types[i];
    }
    s->field[i] = f;
  }
  Onnx__StructTypeProto *st = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  st->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE;
  st->structure = s;
  return st;
}

static Onnx__TypeProto *struct_t(const char *const *names, Onnx__TypeProto *const *types) {
  return of_struct(structure(names, types));
}

static Onnx__TypeProto *ref_t(uint64_t id) {
  Onnx__StructTypeProto *st = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  st->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  st->type_ref = id;
  return of_struct(st);
}

static Onnx__TypeProto *layoutless_t(void) {
  return of_struct(NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT));
}

/* The cache declaration of most tests:
 *   struct { key: float[1, N, 4]; version = 1 (constant); blocks: seq(float[2]) } */
static Onnx__TypeProto *cache_t(void) {
  int64_t kd[3] = {1, SYM, 4};
  const char *names[] = {"key", "=version", "blocks", NULL};
  Onnx__TypeProto *types[] = {tensor_t(OL_DTYPE_FLOAT, 3, kd), NULL, seq_t(vec_t(OL_DTYPE_FLOAT, 2))};
  return struct_t(names, types);
}

/* ------------------------------------------------------------ models */

/* Parses text, replaces the declared types named in `names` (graph inputs or
 * outputs), binds bind_in <- bind_out, adds a struct_types catalogue and
 * reloads the bytes. The parsed proto is restored before it is destroyed. */
static ol_status typed_model(const char *text, const char *const *names, Onnx__TypeProto *const *types, size_t n,
                             const char *bind_in, const char *bind_out, Onnx__StructTypeProto **catalogue,
                             size_t n_catalogue, ol_model **result) {
  *result = NULL;
  ol_model *m = NULL;
  OL_TRY(ol_model_parse_text(text, &m));
  Onnx__ModelProto *mp = m->data->proto;
  Onnx__GraphProto *g = mp->graph;
  Onnx__TypeProto *saved[16];
  Onnx__ValueInfoProto *where[16];
  for (size_t i = 0; i < n && i < 16; i++) {
    where[i] = NULL;
    for (size_t k = 0; k < g->n_input && !where[i]; k++)
      if (strcmp(g->input[k]->name, names[i]) == 0) where[i] = g->input[k];
    for (size_t k = 0; k < g->n_output && !where[i]; k++)
      if (strcmp(g->output[k]->name, names[i]) == 0) where[i] = g->output[k];
    saved[i] = where[i] ? where[i]->type : NULL;
    if (where[i]) where[i]->type = types[i];
  }
  Onnx__PersistentBindingProto b = ONNX__PERSISTENT_BINDING_PROTO__INIT;
  b.input_name = (char *)bind_in;
  b.output_name = (char *)bind_out;
  Onnx__PersistentBindingProto *list[1] = {&b};
  size_t saved_nb = g->n_persistent_bindings, saved_nc = mp->n_struct_types;
  Onnx__PersistentBindingProto **saved_b = g->persistent_bindings;
  Onnx__StructTypeProto **saved_c = mp->struct_types;
  if (bind_in) {
    g->n_persistent_bindings = 1;
    g->persistent_bindings = list;
  }
  mp->n_struct_types = n_catalogue;
  mp->struct_types = catalogue;
  void *bytes = NULL;
  size_t size = 0;
  ol_status s = ol_model_serialize(m, &bytes, &size);
  g->n_persistent_bindings = saved_nb;
  g->persistent_bindings = saved_b;
  mp->n_struct_types = saved_nc;
  mp->struct_types = saved_c;
  for (size_t i = 0; i < n && i < 16; i++)
    if (where[i]) where[i]->type = saved[i];
  ol_model_destroy(m);
  if (s != OL_OK) return s;
  s = ol_model_load(bytes, size, NULL, result);
  ol_free(bytes);
  return s;
}

/* cache and tokens are separate inputs; next_cache forwards the whole cache */
static const char *PASS =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (float[2] cache, int64[1] tokens) => (float[2] next_cache, int64[1] echo) {\n"
    "  next_cache = Identity(cache)\n  echo = Identity(tokens)\n}";

static ol_model *cache_model(Onnx__TypeProto *in, Onnx__TypeProto *out) {
  const char *names[2] = {"cache", "next_cache"};
  Onnx__TypeProto *types[2] = {in, out};
  ol_model *m = NULL;
  CHECK_OK(typed_model(PASS, names, types, 2, "cache", "next_cache", NULL, 0, &m));
  return m;
}

/* ------------------------------------------------------------ values */

static ol_value *ftensor(int rank, const int64_t *dims, float fill) {
  ol_value *v = NULL;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, (size_t)rank, &v);
  float *p = ol_tensor_data(v);
  for (int64_t i = 0, n = ol_shape_count(rank, dims); i < n; i++) p[i] = fill;
  return v;
}

static ol_value *fvec(int64_t n, float fill) { return ftensor(1, &n, fill); }

static ol_value *strings1(void) {
  int64_t one = 1;
  ol_value *v = NULL;
  ol_tensor_create(NULL, OL_DTYPE_STRING, &one, 1, &v);
  ol_tensor_set_string(v, 0, "x", 1);
  return v;
}

/* Takes ownership of the values. */
static ol_value *strukt(const char *const *names, ol_value **fields, size_t n) {
  ol_value *v = NULL;
  CHECK_OK(ol_struct_create(names, fields, n, &v));
  for (size_t i = 0; i < n; i++) ol_value_release(fields[i]);
  return v;
}

/* A sequence of any values (the public constructor takes tensors only);
 * takes ownership of the items. */
static ol_value *seq_of(ol_value **items, size_t n) {
  ol_value *s = NULL;
  CHECK_OK(ol_sequence_create(OL_DTYPE_UNDEFINED, NULL, 0, &s));
  free(s->items);
  s->items = calloc(n ? n : 1, sizeof *s->items);
  for (size_t i = 0; i < n; i++) s->items[i] = items[i];
  s->count = n;
  return s;
}

static ol_value *fseq(size_t n, float fill) {
  ol_value *items[8] = {0};
  for (size_t i = 0; i < n; i++) items[i] = fvec(2, fill + (float)i);
  ol_value *s = NULL;
  CHECK_OK(ol_sequence_create(OL_DTYPE_FLOAT, items, n, &s));
  for (size_t i = 0; i < n; i++) ol_value_release(items[i]);
  return s;
}

/* struct { key: float[1, len, 4], blocks: seq of nblocks float[2] } */
static ol_value *cache_value(int64_t len, size_t nblocks) {
  int64_t kd[3] = {1, len, 4};
  const char *names[2] = {"key", "blocks"};
  ol_value *f[2] = {ftensor(3, kd, 1.0f), fseq(nblocks, 0.0f)};
  return strukt(names, f, 2);
}

static ol_value *tokens(void) {
  int64_t one = 1;
  ol_value *v = NULL;
  ol_tensor_create(NULL, OL_DTYPE_INT64, &one, 1, &v);
  ((int64_t *)ol_tensor_data(v))[0] = 42;
  return v;
}

static const char *CACHE = "cache";
static const char *TOKENS = "tokens";

static bool error_has(const char *a, const char *b) {
  const char *e = ol_last_error();
  bool ok = strstr(e, a) != NULL && (!b || strstr(e, b) != NULL);
  if (!ok) fprintf(stderr, "unexpected error text: %s\n", e);
  return ok;
}

/* ------------------------------------------------------------ tests */

static void struct_cache_is_retained_by_reference(void) {
  ol_model *m = cache_model(cache_t(), cache_t());
  if (!m) {
    pool_free();
    return;
  }
  ol_value *init = cache_value(3, 2), *tok = tokens();
  ol_value *key = ol_struct_field(init, "key"), *blocks = ol_struct_field(init, "blocks");
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &CACHE, &init, 1, NULL, &st));
  ol_model_destroy(m);
  if (!st) goto done;
  ol_value *v = NULL;
  CHECK_OK(ol_state_value(st, "cache", &v));
  CHECK(v == init && ol_struct_field(v, "key") == key && ol_struct_field(v, "blocks") == blocks);
  CHECK(ol_struct_field_count(v) == 2 && strcmp(ol_struct_field_name(v, 1), "blocks") == 0);
  ol_value *out[2] = {NULL, NULL};
  for (int step = 0; step < 3; step++) {
    CHECK_OK(ol_state_run(st, NULL, &TOKENS, &tok, 1, NULL, out, 2, NULL));
    CHECK_OK(ol_state_value(st, "cache", &v));
    /* publication swaps the whole value: the same struct, fields by reference */
    CHECK(out[0] == v && v == init);
    CHECK(ol_struct_field(v, "key") == key && ol_tensor_data(ol_struct_field(v, "key")) == ol_tensor_data(key));
    CHECK(ol_sequence_at(ol_struct_field(v, "blocks"), 1) == ol_sequence_at(blocks, 1));
    CHECK(out[1] && ((int64_t *)ol_tensor_data(out[1]))[0] == 42);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
  }
  /* symbolic dims stay valid in the declaration: another length, no blocks */
  ol_value *again = cache_value(7, 0);
  CHECK_OK(ol_state_reset(st, &CACHE, &again, 1));
  CHECK_OK(ol_state_value(st, "cache", &v));
  CHECK(v == again && ol_sequence_length(ol_struct_field(v, "blocks")) == 0);
  CHECK_OK(ol_state_run(st, NULL, &TOKENS, &tok, 1, NULL, out, 2, NULL));
  CHECK(out[0] == again);
  ol_value_release(out[0]);
  ol_value_release(out[1]);
  ol_value_release(again);
  /* ordinary session feeds of struct inputs go through the same check */
  ol_state_destroy(st);
done:
  ol_value_release(init);
  ol_value_release(tok);
  pool_free();
}

static void field_mismatch_rejected_at_create_and_reset(void) {
  ol_model *m = cache_model(cache_t(), cache_t());
  if (!m) {
    pool_free();
    return;
  }
  ol_state *st = NULL;
  int64_t kd[3] = {1, 3, 4}, wrong_dims[3] = {1, 3, 5};
  /* key of the wrong element type */
  {
    const char *names[2] = {"key", "blocks"};
    ol_value *key = NULL;
    ol_tensor_create(NULL, OL_DTYPE_INT32, kd, 3, &key);
    ol_value *f[2] = {key, fseq(1, 0)};
    ol_value *bad = strukt(names, f, 2);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("persistent input 'cache': field 'key': expected element type float32, got int32", NULL));
    ol_value_release(bad);
  }
  /* fixed dim */
  {
    const char *names[2] = {"key", "blocks"};
    ol_value *f[2] = {ftensor(3, wrong_dims, 0), fseq(1, 0)};
    ol_value *bad = strukt(names, f, 2);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("field 'key': dimension 2 must be 4", NULL));
    ol_value_release(bad);
  }
  /* declaration order, missing field, a constant field is not a runtime field */
  {
    const char *names[2] = {"blocks", "key"};
    ol_value *f[2] = {fseq(1, 0), ftensor(3, kd, 0)};
    ol_value *bad = strukt(names, f, 2);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("struct field 0 is 'blocks', expected 'key'", NULL));
    ol_value_release(bad);
    const char *one[1] = {"key"};
    ol_value *g1[1] = {ftensor(3, kd, 0)};
    bad = strukt(one, g1, 1);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("expected a struct of 2 runtime fields, got 1", NULL));
    ol_value_release(bad);
    const char *three[3] = {"key", "version", "blocks"};
    ol_value *g3[3] = {ftensor(3, kd, 0), tokens(), fseq(1, 0)};
    bad = strukt(three, g3, 3);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    ol_value_release(bad);
  }
  /* sequence element: dtype of the sequence and shape of an element */
  {
    const char *names[2] = {"key", "blocks"};
    ol_value *items[2] = {fvec(2, 0), fvec(3, 0)};
    ol_value *s = NULL;
    CHECK_OK(ol_sequence_create(OL_DTYPE_FLOAT, items, 2, &s));
    ol_value_release(items[0]);
    ol_value_release(items[1]);
    ol_value *f[2] = {ftensor(3, kd, 0), s};
    ol_value *bad = strukt(names, f, 2);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("field 'blocks'[1]: dimension 0 must be 2", NULL));
    ol_value_release(bad);
    ol_value *empty_int = NULL;
    CHECK_OK(ol_sequence_create(OL_DTYPE_INT64, NULL, 0, &empty_int));
    ol_value *f2[2] = {ftensor(3, kd, 0), empty_int};
    bad = strukt(names, f2, 2);
    CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("field 'blocks': expected a sequence of", NULL));
    ol_value_release(bad);
  }
  /* a tensor where the struct is declared */
  ol_value *flat = ftensor(3, kd, 0);
  CHECK_STATUS(ol_state_create(m, &CACHE, &flat, 1, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(error_has("expected a struct, got a tensor", NULL));
  /* reset: rejected values leave the retained one in place */
  ol_value *good = cache_value(3, 1);
  CHECK_OK(ol_state_create(m, &CACHE, &good, 1, NULL, &st));
  if (st) {
    CHECK_STATUS(ol_state_reset(st, &CACHE, &flat, 1), OL_INVALID_ARGUMENT);
    const char *names[2] = {"key", "blocks"};
    ol_value *f[2] = {ftensor(3, wrong_dims, 0), fseq(1, 0)};
    ol_value *bad = strukt(names, f, 2);
    CHECK_STATUS(ol_state_reset(st, &CACHE, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("field 'key'", NULL));
    ol_value *v = NULL;
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == good);
    ol_value_release(bad);
    /* ordinary feeds cannot override the retained struct */
    ol_value *out[2];
    const char *both[2] = {"cache", "tokens"};
    ol_value *tok = tokens(), *feeds[2] = {good, tok};
    CHECK_STATUS(ol_state_run(st, NULL, both, feeds, 2, NULL, out, 2, NULL), OL_INVALID_ARGUMENT);
    ol_value_release(tok);
    ol_state_destroy(st);
  }
  ol_value_release(good);
  ol_value_release(flat);
  ol_model_destroy(m);
  pool_free();
}

/* next_cache comes from another input declared loosely: a value that passes
 * the feed check but not the cache declaration fails publication. */
static void field_mismatch_rejected_at_publication(void) {
  const char *text = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                     "g (float[2] cache, float[2] fresh, int64[1] tokens) => (float[2] next_cache, float[2] seen) {\n"
                     "  next_cache = Identity(fresh)\n  seen = Identity(cache)\n}";
  int64_t any3[3] = {SYM, SYM, SYM};
  const char *loose_names[] = {"key", "blocks", NULL};
  Onnx__TypeProto *loose_types[] = {tensor_t(0, 3, any3), seq_t(untyped_t())};
  const char *names[4] = {"cache", "next_cache", "seen", "fresh"};
  Onnx__TypeProto *types[4] = {cache_t(), cache_t(), cache_t(), struct_t(loose_names, loose_types)};
  ol_model *m = NULL;
  CHECK_OK(typed_model(text, names, types, 4, "cache", "next_cache", NULL, 0, &m));
  if (!m) {
    pool_free();
    return;
  }
  ol_value *init = cache_value(2, 1), *tok = tokens();
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &CACHE, &init, 1, NULL, &st));
  if (st) {
    int64_t kd[3] = {1, 2, 4};
    const char *fnames[2] = {"key", "blocks"};
    ol_value *key = NULL;
    ol_tensor_create(NULL, OL_DTYPE_INT32, kd, 3, &key);
    ol_value *f[2] = {key, fseq(1, 0)};
    ol_value *bad = strukt(fnames, f, 2);
    const char *feed_names[2] = {"fresh", "tokens"};
    ol_value *feeds[2] = {bad, tok}, *out[2] = {NULL, NULL};
    CHECK_STATUS(ol_state_run(st, NULL, feed_names, feeds, 2, NULL, out, 2, NULL), OL_INVALID_ARGUMENT);
    CHECK(error_has("next value of 'cache' from output 'next_cache'", "field 'key': expected element type"));
    ol_value *v = NULL;
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == init); /* nothing published */
    /* a nested string in the next value is rejected at publication too */
    const char *snames[2] = {"key", "blocks"};
    ol_value *sitems[2] = {fvec(2, 0), strings1()};
    ol_value *f2[2] = {ftensor(3, kd, 0), seq_of(sitems, 2)};
    ol_value *stringy = strukt(snames, f2, 2);
    feeds[0] = stringy;
    CHECK_STATUS(ol_state_run(st, NULL, feed_names, feeds, 2, NULL, out, 2, NULL), OL_INVALID_ARGUMENT);
    CHECK(error_has("field 'blocks'[1]: string tensors cannot be persistent", NULL));
    ol_value_release(stringy);
    /* a matching value is published whole, by reference */
    ol_value *good = cache_value(5, 3);
    feeds[0] = good;
    CHECK_OK(ol_state_run(st, NULL, feed_names, feeds, 2, NULL, out, 2, NULL));
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == good && out[0] == good && out[1] == init);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
    ol_value_release(good);
    ol_value_release(bad);
    ol_state_destroy(st);
  }
  ol_value_release(init);
  ol_value_release(tok);
  ol_model_destroy(m);
  pool_free();
}

typedef struct decl_case {
  Onnx__TypeProto *type;
  ol_status code;
  const char *message;
} decl_case;

/* Declarations that cannot be persistent, also nested, fail ol_state_create. */
static void unsupported_declarations_rejected(void) {
  decl_case cases[16];
  size_t n = 0;
  {
    const char *nm[] = {"blocks", NULL};
    const char *inner[] = {"key", "label", NULL};
    Onnx__TypeProto *it[] = {vec_t(OL_DTYPE_FLOAT, 2), vec_t(OL_DTYPE_STRING, 1)};
    Onnx__TypeProto *ty[] = {seq_t(struct_t(inner, it))};
    cases[n++] = (decl_case){struct_t(nm, ty), OL_INVALID_MODEL,
                                    "persistent input 'cache': field 'blocks'[].label: string tensors cannot be persistent"};
  }
  {
    const char *nm[] = {"m", NULL};
    Onnx__TypeProto *ty[] = {map_t()};
    cases[n++] = (decl_case){struct_t(nm, ty), OL_INVALID_MODEL, "field 'm': map values cannot be persistent"};
  }
  {
    const char *nm[] = {"o", NULL};
    Onnx__TypeProto *ty[] = {optional_t(vec_t(OL_DTYPE_FLOAT, 2))};
    cases[n++] = (decl_case){seq_t(struct_t(nm, ty)), OL_INVALID_MODEL,
                                    "element [].o: optional values cannot be persistent"};
  }
  {
    const char *nm[] = {"s", NULL};
    Onnx__TypeProto *ty[] = {sparse_t()};
    cases[n++] = (decl_case){struct_t(nm, ty), OL_INVALID_MODEL, "field 's': sparse tensor values cannot be persistent"};
  }
  {
    const char *nm[] = {"h", NULL};
    Onnx__TypeProto *ty[] = {seq_t(opaque_t())};
    cases[n++] = (decl_case){struct_t(nm, ty), OL_INVALID_MODEL, "field 'h'[]: opaque values cannot be persistent"};
  }
  /* a layout-less struct_type declares a paged cache (tests/c/test_paged_proto.c): other structs are refused */
  cases[n++] = (decl_case){layoutless_t(), OL_INVALID_ARGUMENT, "persistent input 'cache': expected a paged cache"};
  {
    const char *nm[] = {"key", "=tag", NULL};
    Onnx__TypeProto *ty[] = {vec_t(OL_DTYPE_FLOAT, 2), untyped_t() /* non-NULL: string constant */};
    cases[n++] = (decl_case){struct_t(nm, ty), OL_INVALID_MODEL, "field 'tag': string tensors cannot be persistent"};
  }
  cases[n++] = (decl_case){ref_t(99), OL_INVALID_MODEL, "type_ref 99 does not name"};
  cases[n++] = (decl_case){map_t(), OL_INVALID_MODEL, "persistent input 'cache': map values cannot be persistent"};
  for (size_t i = 0; i < n; i++) {
    ol_model *m = cache_model(cases[i].type, cases[i].type);
    if (!m) continue;
    ol_value *init = cache_value(1, 0);
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &CACHE, &init, 1, NULL, &st), cases[i].code);
    CHECK(error_has(cases[i].message, NULL));
    ol_state_destroy(st);
    ol_value_release(init);
    ol_model_destroy(m);
  }
  /* the output's declaration must describe the same struct */
  const char *other_names[] = {"key", "=version", "pages", NULL};
  int64_t kd[3] = {1, SYM, 4};
  Onnx__TypeProto *other_types[] = {tensor_t(OL_DTYPE_FLOAT, 3, kd), NULL, seq_t(vec_t(OL_DTYPE_FLOAT, 2))};
  ol_model *m = cache_model(cache_t(), struct_t(other_names, other_types));
  if (m) {
    ol_value *init = cache_value(1, 0);
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &CACHE, &init, 1, NULL, &st), OL_INVALID_MODEL);
    CHECK(error_has("the output's type does not match the input's at field 'blocks' (the output declares 'pages')", NULL));
    ol_value_release(init);
    ol_model_destroy(m);
  }
  const char *dtype_names[] = {"key", "blocks", NULL};
  Onnx__TypeProto *dtype_types[] = {tensor_t(OL_DTYPE_FLOAT, 3, kd), seq_t(vec_t(OL_DTYPE_DOUBLE, 2))};
  m = cache_model(cache_t(), struct_t(dtype_names, dtype_types));
  if (m) {
    ol_value *init = cache_value(1, 0);
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &CACHE, &init, 1, NULL, &st), OL_INVALID_MODEL);
    CHECK(error_has("does not match the input's at field 'blocks'[]", NULL));
    ol_value_release(init);
    ol_model_destroy(m);
  }
  pool_free();
}

/* Values that cannot be persistent under an unconstrained declaration. */
static void nested_unsupported_values_rejected(void) {
  const char *inner[] = {"key", NULL};
  Onnx__TypeProto *it[] = {untyped_t()};
  const char *outer[] = {"blocks", NULL};
  Onnx__TypeProto *ot[] = {seq_t(struct_t(inner, it))};
  ol_model *m = cache_model(struct_t(outer, ot), struct_t(outer, ot));
  if (!m) {
    pool_free();
    return;
  }
  const char *kn[1] = {"key"}, *bn[1] = {"blocks"};
  ol_value *blocks[3];
  for (int i = 0; i < 2; i++) {
    ol_value *f[1] = {fvec(2, (float)i)};
    blocks[i] = strukt(kn, f, 1);
  }
  ol_value *sf[1] = {strings1()};
  blocks[2] = strukt(kn, sf, 1);
  ol_value *bf[1] = {seq_of(blocks, 3)};
  ol_value *bad = strukt(bn, bf, 1);
  ol_state *st = NULL;
  CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(error_has("persistent input 'cache': field 'blocks'[2].key: string tensors cannot be persistent", NULL));
  ol_value_release(bad);
  /* an optional value in a field */
  ol_value *t = fvec(2, 0), *opt = NULL;
  CHECK_OK(ol_optional_create(t, &opt));
  ol_value_release(t);
  ol_value *of[1] = {opt};
  ol_value *blk[1] = {strukt(kn, of, 1)};
  ol_value *bf2[1] = {seq_of(blk, 1)};
  bad = strukt(bn, bf2, 1);
  CHECK_STATUS(ol_state_create(m, &CACHE, &bad, 1, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(error_has("field 'blocks'[0].key: optional values cannot be persistent", NULL));
  ol_value_release(bad);
  ol_model_destroy(m);
  pool_free();
}

/* Sequences of structs (incl. empty ones) retained whole, through a type_ref
 * into ModelProto.struct_types. */
static void sequences_of_structs(void) {
  const char *kv[] = {"k", "v", NULL};
  Onnx__TypeProto *kvt[] = {vec_t(OL_DTYPE_FLOAT, 2), vec_t(OL_DTYPE_FLOAT, 2)};
  Onnx__StructTypeProto *layer = structure(kv, kvt);
  layer->has_type_id = 1;
  layer->type_id = 7;
  Onnx__StructTypeProto *catalogue[1] = {layer};
  const char *names[2] = {"cache", "next_cache"};
  Onnx__TypeProto *types[2] = {seq_t(ref_t(7)), seq_t(ref_t(7))};
  ol_model *m = NULL;
  CHECK_OK(typed_model(PASS, names, types, 2, "cache", "next_cache", catalogue, 1, &m));
  if (!m) {
    pool_free();
    return;
  }
  const char *kn[2] = {"k", "v"};
  ol_value *layers[2];
  for (int i = 0; i < 2; i++) {
    ol_value *f[2] = {fvec(2, (float)i), fvec(2, (float)-i)};
    layers[i] = strukt(kn, f, 2);
  }
  ol_value *l1 = layers[1];
  ol_value *init = seq_of(layers, 2), *tok = tokens();
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &CACHE, &init, 1, NULL, &st));
  if (st) {
    ol_value *out[2] = {NULL, NULL}, *v = NULL;
    CHECK_OK(ol_state_run(st, NULL, &TOKENS, &tok, 1, NULL, out, 2, NULL));
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == init && out[0] == init && ol_sequence_at(v, 1) == l1);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
    /* empty sequences are values too */
    ol_value *empty = seq_of(NULL, 0);
    CHECK_OK(ol_state_reset(st, &CACHE, &empty, 1));
    CHECK_OK(ol_state_run(st, NULL, &TOKENS, &tok, 1, NULL, out, 2, NULL));
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == empty && ol_sequence_length(v) == 0);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
    ol_value_release(empty);
    /* an element of the wrong struct type */
    const char *wn[2] = {"k", "w"};
    ol_value *wf[2] = {fvec(2, 0), fvec(2, 0)};
    ol_value *wrong[1] = {strukt(wn, wf, 2)};
    ol_value *bad = seq_of(wrong, 1);
    CHECK_STATUS(ol_state_reset(st, &CACHE, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("element [0]: struct field 1 is 'w', expected 'v'", NULL));
    ol_value_release(bad);
    ol_value *tf[1] = {fvec(2, 0)};
    bad = seq_of(tf, 1);
    CHECK_STATUS(ol_state_reset(st, &CACHE, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("element [0]: expected a struct, got a tensor", NULL));
    ol_value_release(bad);
    ol_state_destroy(st);
  }
  ol_value_release(init);
  ol_value_release(tok);
  ol_model_destroy(m);
  pool_free();
}

/* A self-referencing catalogue entry nests without end: the walk stops at 64. */
static void nesting_is_bounded(void) {
  const char *nm[] = {"next", NULL};
  Onnx__TypeProto *ty[] = {seq_t(ref_t(5))};
  Onnx__StructTypeProto *node = structure(nm, ty);
  node->has_type_id = 1;
  node->type_id = 5;
  Onnx__StructTypeProto *catalogue[1] = {node};
  const char *names[2] = {"cache", "next_cache"};
  Onnx__TypeProto *types[2] = {ref_t(5), ref_t(5)};
  ol_model *m = NULL;
  ol_status s = typed_model(PASS, names, types, 2, "cache", "next_cache", catalogue, 1, &m);
  if (s == OL_OK) {
    const char *nn[1] = {"next"};
    ol_value *f[1] = {seq_of(NULL, 0)};
    ol_value *init = strukt(nn, f, 1);
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &CACHE, &init, 1, NULL, &st), OL_INVALID_MODEL);
    CHECK(error_has("nest deeper than 64", NULL) || error_has("cycle", NULL));
    ol_value_release(init);
    ol_model_destroy(m);
  } else {
    CHECK(s == OL_INVALID_MODEL); /* or the loader refuses the cyclic catalogue */
  }
  pool_free();
}

/* Encoded values: accepted for a tensor declaration through their logical
 * type (never decoded), retained whole; rejected for struct declarations. */
static void free_nothing(void *p) { (void)p; }

/* payload: a plain one, one marked EXTERNAL whose raw_data is loaded, or
 * one marked EXTERNAL without raw_data (not loaded yet). */
enum payload { INLINE, EXTERNAL_LOADED, EXTERNAL_UNLOADED };

static ol_value *encoded(int dtype, int rank, const int64_t *dims, enum payload payload) {
  Onnx__EncodedValueProto *e = NEW(Onnx__EncodedValueProto, ONNX__ENCODED_VALUE_PROTO__INIT);
  e->logical_type = tensor_t(dtype, rank, dims);
  if (payload != EXTERNAL_UNLOADED) {
    e->has_raw_data = 1;
    e->raw_data.len = 2;
    e->raw_data.data = (uint8_t *)"\x01\x02";
  }
  if (payload != INLINE) {
    e->has_data_location = 1;
    e->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  }
  ol_value *v = NULL;
  CHECK_OK(ol_value_new_encoded(e, free_nothing, &v));
  return v;
}

static void encoded_values(void) {
  const char *text = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                     "g (float[N, 2] past, int64[1] tokens) => (float[N, 2] present, int64[1] echo) {\n"
                     "  present = Identity(past)\n  echo = Identity(tokens)\n}";
  ol_model *m = NULL;
  CHECK_OK(typed_model(text, NULL, NULL, 0, "past", "present", NULL, 0, &m));
  if (!m) {
    pool_free();
    return;
  }
  const char *PAST = "past";
  int64_t ok_dims[2] = {3, 2}, bad_dims[2] = {3, 5}, sym_dims[2] = {SYM, 2};
  ol_value *e = encoded(OL_DTYPE_FLOAT, 2, ok_dims, INLINE), *tok = tokens();
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &PAST, &e, 1, NULL, &st));
  if (st) {
    ol_value *out[2] = {NULL, NULL}, *v = NULL;
    CHECK_OK(ol_state_run(st, NULL, &TOKENS, &tok, 1, NULL, out, 2, NULL));
    CHECK_OK(ol_state_value(st, "past", &v));
    CHECK(v == e && out[0] == e && ol_value_get_kind(v) == OL_VALUE_ENCODED);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
    ol_value *bad = encoded(OL_DTYPE_FLOAT, 2, bad_dims, INLINE);
    CHECK_STATUS(ol_state_reset(st, &PAST, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("encoded value: logical type: dimension 1 must be 2", NULL));
    ol_value_release(bad);
    bad = encoded(OL_DTYPE_FLOAT, 2, sym_dims, INLINE);
    CHECK_STATUS(ol_state_reset(st, &PAST, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("logical_type dimension 0 is not concrete", NULL));
    ol_value_release(bad);
    bad = encoded(OL_DTYPE_FLOAT, -1, NULL, INLINE);
    CHECK_STATUS(ol_state_reset(st, &PAST, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("logical_type has no rank", NULL));
    ol_value_release(bad);
    bad = encoded(OL_DTYPE_DOUBLE, 2, ok_dims, INLINE);
    CHECK_STATUS(ol_state_reset(st, &PAST, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("expected element type", NULL));
    ol_value_release(bad);
    bad = encoded(OL_DTYPE_FLOAT, 2, ok_dims, EXTERNAL_UNLOADED);
    CHECK_STATUS(ol_state_reset(st, &PAST, &bad, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("external payload must be loaded", NULL));
    ol_value_release(bad);
    CHECK_OK(ol_state_value(st, "past", &v));
    CHECK(v == e);
    /* marked EXTERNAL but loaded (seed 003): retained like any other */
    ol_value *loaded = encoded(OL_DTYPE_FLOAT, 2, ok_dims, EXTERNAL_LOADED);
    CHECK_OK(ol_state_reset(st, &PAST, &loaded, 1));
    CHECK_OK(ol_state_value(st, "past", &v));
    CHECK(v == loaded);
    ol_value_release(loaded);
    ol_state_destroy(st);
  }
  ol_model_destroy(m);
  /* a struct declaration: an encoded value needs a struct_type storage layout */
  m = cache_model(cache_t(), cache_t());
  if (m) {
    CHECK_STATUS(ol_state_create(m, &CACHE, &e, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(error_has("persistent input 'cache': ", "without a struct_type layout describes a tensor"));
    ol_model_destroy(m);
  }
  ol_value_release(e);
  ol_value_release(tok);
  pool_free();
}

/* Encoded values under struct_type declarations: accepted when their storage
 * layout (inline or a type_ref into the model's catalogue) is the declared
 * one, retained whole by reference, never decoded; other layouts, plain
 * tensors and string element layouts are rejected. */
static Onnx__StructTypeProto *nibbles(uint64_t dimension) {
  Onnx__StructTypeProto__BitPacking *bp = NEW(Onnx__StructTypeProto__BitPacking, ONNX__STRUCT_TYPE_PROTO__BIT_PACKING__INIT);
  bp->n_component = 2;
  bp->component = (Onnx__StructTypeProto__BitPacking__Component **)ptrs(2);
  const char *names[2] = {"lo", "hi"};
  for (int i = 0; i < 2; i++) {
    Onnx__StructTypeProto__BitPacking__Component *c =
        NEW(Onnx__StructTypeProto__BitPacking__Component, ONNX__STRUCT_TYPE_PROTO__BIT_PACKING__COMPONENT__INIT);
    c->name = (char *)names[i];
    c->has_bit_width = 1;
    c->bit_width = 4;
    bp->component[i] = c;
  }
  bp->has_dimension = 1;
  bp->dimension = dimension;
  Onnx__StructTypeProto *st = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  st->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_BIT_PACKING;
  st->bit_packing = bp;
  st->name = (char *)"nibbles";
  return st;
}

static ol_value *encoded_as(Onnx__StructTypeProto *layout) {
  Onnx__EncodedValueProto *e = NEW(Onnx__EncodedValueProto, ONNX__ENCODED_VALUE_PROTO__INIT);
  e->layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  e->struct_type = layout;
  e->has_raw_data = 1;
  e->raw_data.len = 3;
  e->raw_data.data = (uint8_t *)"\x21\x43\x65";
  ol_value *v = NULL;
  CHECK_OK(ol_value_new_encoded(e, free_nothing, &v));
  return v;
}

static void encoded_struct_layouts(void) {
  Onnx__StructTypeProto *entry = nibbles(3);
  entry->has_type_id = 1;
  entry->type_id = 7;
  Onnx__StructTypeProto *catalogue[1] = {entry};
  const char *names[2] = {"cache", "next_cache"};
  Onnx__TypeProto *types[2] = {ref_t(7), ref_t(7)};
  ol_model *m = NULL;
  CHECK_OK(typed_model(PASS, names, types, 2, "cache", "next_cache", catalogue, 1, &m));
  if (!m) {
    pool_free();
    return;
  }
  Onnx__StructTypeProto *by_ref = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  by_ref->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  by_ref->type_ref = 7;
  ol_value *inline_value = encoded_as(nibbles(3)), *ref_value = encoded_as(by_ref), *tok = tokens();
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &CACHE, &inline_value, 1, NULL, &st));
  if (st) {
    ol_value *out[2] = {NULL, NULL}, *v = NULL;
    CHECK_OK(ol_state_run(st, NULL, &TOKENS, &tok, 1, NULL, out, 2, NULL));
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == inline_value && out[0] == inline_value);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
    CHECK_OK(ol_state_reset(st, &CACHE, &ref_value, 1));
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == ref_value);
    ol_value *other = encoded_as(nibbles(4));
    CHECK_STATUS(ol_state_reset(st, &CACHE, &other, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("persistent input 'cache': ", "storage type nibbles differs from the declared layout nibbles"));
    ol_value_release(other);
    int64_t two = 2;
    ol_value *plain = fvec(two, 1.0f);
    CHECK_STATUS(ol_state_reset(st, &CACHE, &plain, 1), OL_INVALID_ARGUMENT);
    CHECK(error_has("expected an encoded value with storage type nibbles, got a tensor", NULL));
    ol_value_release(plain);
    CHECK_OK(ol_state_value(st, "cache", &v));
    CHECK(v == ref_value); /* failed resets left the state unchanged */
    ol_state_destroy(st);
  }
  ol_model_destroy(m);
  /* an array layout of strings cannot be persistent */
  Onnx__StructTypeProto__Array *arr = NEW(Onnx__StructTypeProto__Array, ONNX__STRUCT_TYPE_PROTO__ARRAY__INIT);
  arr->element_type = vec_t(OL_DTYPE_STRING, 1);
  arr->has_dimension = 1;
  arr->dimension = 2;
  Onnx__StructTypeProto *words = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  words->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY;
  words->array = arr;
  m = cache_model(of_struct(words), of_struct(words));
  if (m) {
    ol_value *w = encoded_as(words);
    CHECK_STATUS(ol_state_create(m, &CACHE, &w, 1, NULL, &st), OL_INVALID_MODEL);
    CHECK(error_has("persistent input 'cache': element []: string tensors cannot be persistent", NULL));
    ol_value_release(w);
    ol_model_destroy(m);
  }
  ol_value_release(inline_value);
  ol_value_release(ref_value);
  ol_value_release(tok);
  pool_free();
}

/* Ordinary sessions see struct inputs as STRUCT and check them the same way. */
static void sessions_check_struct_feeds(void) {
  const char *names[2] = {"cache", "next_cache"};
  Onnx__TypeProto *types[2] = {cache_t(), cache_t()};
  ol_model *m = NULL;
  CHECK_OK(typed_model(PASS, names, types, 2, NULL, NULL, NULL, 0, &m));
  if (!m) {
    pool_free();
    return;
  }
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  if (s) {
    ol_value_info info;
    CHECK_OK(ol_session_input_info(s, 0, &info));
    CHECK(info.kind == OL_VALUE_STRUCT);
    ol_value *c = cache_value(2, 1), *tok = tokens(), *out[2] = {NULL, NULL};
    const char *feed_names[2] = {"cache", "tokens"};
    ol_value *feeds[2] = {c, tok};
    CHECK_OK(ol_session_run(s, feed_names, feeds, 2, NULL, out, 2, NULL));
    CHECK(out[0] == c);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
    int64_t kd[3] = {1, 2, 5};
    const char *fn[2] = {"key", "blocks"};
    ol_value *f[2] = {ftensor(3, kd, 0), fseq(0, 0)};
    ol_value *bad = strukt(fn, f, 2);
    feeds[0] = bad;
    CHECK_STATUS(ol_session_run(s, feed_names, feeds, 2, NULL, out, 2, NULL), OL_INVALID_ARGUMENT);
    CHECK(error_has("input 'cache': field 'key': dimension 2 must be 4", NULL));
    ol_value_release(bad);
    ol_value_release(c);
    ol_value_release(tok);
    ol_session_destroy(s);
  }
  ol_model_destroy(m);
  pool_free();
}

/* A paged cache block {start, length 1, key, value} (pages [1, 1, 1, 2])
 * or, when !ok, a struct with only start and length. */
static ol_value *paged_block(int64_t start, bool ok) {
  const char *names[4] = {"start", "length", "key", "value"};
  const int64_t dims[4] = {1, 1, 1, 2};
  ol_value *f[4] = {NULL, NULL, ftensor(4, dims, 0.5f), ftensor(4, dims, 0.25f)};
  for (int i = 0; i < 2; i++) {
    ol_tensor_create(NULL, OL_DTYPE_INT64, NULL, 0, &f[i]);
    if (f[i]) *(int64_t *)ol_tensor_data(f[i]) = i ? 1 : start;
  }
  if (ok) return strukt(names, f, 4);
  ol_value_release(f[2]), ol_value_release(f[3]);
  return strukt(names, f, 2);
}

/* { blocks: [shared blocks retained..., fresh blocks (owned)...] } */
static ol_value *paged_of(ol_value *const *shared, size_t n_shared, ol_value **fresh, size_t n_fresh) {
  ol_value *items[8];
  for (size_t i = 0; i < n_shared; i++) items[i] = ol_value_retain(shared[i]);
  for (size_t i = 0; i < n_fresh; i++) items[n_shared + i] = fresh[i];
  const char *bn[1] = {"blocks"};
  ol_value *bf[1] = {seq_of(items, n_shared + n_fresh)};
  return strukt(bn, bf, 1);
}

/* A next paged cache that keeps the current value's blocks in place is
 * checked only in its other blocks (a decoder's step appends one): a bad
 * new block, or a bad block where the current value had another, is still
 * refused and nothing is published; a good one publishes. */
static void next_cache_checks_its_new_blocks(void) {
  const char *text = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                     "g (float[2] cache, float[2] fresh, int64[1] tokens) => (float[2] next_cache, float[2] seen) {\n"
                     "  next_cache = Identity(fresh)\n  seen = Identity(cache)\n}";
  const char *names[4] = {"cache", "next_cache", "seen", "fresh"};
  Onnx__TypeProto *types[4] = {layoutless_t(), layoutless_t(), layoutless_t(), layoutless_t()};
  ol_model *m = NULL;
  CHECK_OK(typed_model(text, names, types, 4, "cache", "next_cache", NULL, 0, &m));
  if (!m) {
    pool_free();
    return;
  }
  ol_value *fresh0[2] = {paged_block(0, true), paged_block(1, true)};
  ol_value *init = paged_of(NULL, 0, fresh0, 2), *tok = tokens();
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &CACHE, &init, 1, NULL, &st));
  if (st) {
    const ol_value *seq = init->items[0];
    ol_value *kept[2] = {seq->items[0], seq->items[1]};
    const char *feed_names[2] = {"fresh", "tokens"};
    for (int variant = 0; variant < 3; variant++) {
      ol_value *next = NULL;
      if (variant == 0) { /* the current blocks, then a bad one */
        ol_value *add[1] = {paged_block(2, false)};
        next = paged_of(kept, 2, add, 1);
      } else if (variant == 1) { /* a bad block in place of the current block 1 */
        ol_value *add[1] = {paged_block(1, false)};
        next = paged_of(kept, 1, add, 1);
      } else { /* the current blocks, then a good one */
        ol_value *add[1] = {paged_block(2, true)};
        next = paged_of(kept, 2, add, 1);
      }
      ol_value *feeds[2] = {next, tok}, *out[2] = {NULL, NULL};
      ol_status s = ol_state_run(st, NULL, feed_names, feeds, 2, NULL, out, 2, NULL);
      ol_value *v = NULL; /* borrowed */
      CHECK_OK(ol_state_value(st, "cache", &v));
      if (variant < 2) {
        CHECK(s == OL_INVALID_ARGUMENT && error_has("next value of 'cache' from output 'next_cache'", "expected a paged cache"));
        CHECK(v == init); /* nothing published */
      } else {
        CHECK(s == OL_OK && v == next);
      }
      for (int i = 0; i < 2; i++) ol_value_release(out[i]);
      ol_value_release(next);
    }
    ol_state_destroy(st);
  }
  ol_value_release(init);
  ol_value_release(tok);
  ol_model_destroy(m);
  pool_free();
}

OL_TEST_MAIN(TEST(struct_cache_is_retained_by_reference), TEST(field_mismatch_rejected_at_create_and_reset),
             TEST(field_mismatch_rejected_at_publication), TEST(unsupported_declarations_rejected),
             TEST(nested_unsupported_values_rejected), TEST(sequences_of_structs), TEST(nesting_is_bounded), TEST(encoded_values), TEST(encoded_struct_layouts),
             TEST(sessions_check_struct_feeds), TEST(next_cache_checks_its_new_blocks))
