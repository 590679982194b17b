/* PersistentValueState: values retained between runs for the inputs bound by
 * GraphProto.persistent_bindings. The state layer never copies payloads: it
 * retains owner handles at creation/reset, feeds them by reference and
 * publishes the bound outputs by swapping handles after a run has fully
 * succeeded. Eligible kernels (Attention) append into spare capacity of
 * buffers this file certifies (see reserve_append below). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "quant/paged.h"
#include "runtime/completion.h"
#include "runtime/session.h"

typedef struct binding {
  size_t input;   /* graph input index */
  size_t output;  /* graph output index */
  const char *input_name;
  const char *output_name;
  ol_value *value;            /* retained value */
  const ol_buffer *certified; /* append buffer made here (capacity may exceed the view) */
  /* The user's view of a pitched (multi-head, growing in place) value: a
   * dense copy made on first demand after each publication, shared by the
   * run's returned output and ol_state_value so both see one tensor. */
  ol_value *dense;
  size_t compact_mark; /* a paged cache's block count after its last compaction (ol_paged_cache_compact_grown) */
} binding;

struct ol_state {
  ol_session *session;
  size_t num_bindings;
  binding *bindings;
  bool *bound; /* per graph input */
  int64_t initial_capacity;
  bool closed;
};

void ol_session_options_init(ol_session_options *o) {
  memset(o, 0, sizeof *o);
  o->persistent_tensor_initial_capacity = 32;
}

/* ------------------------------------------------------------ validation */

/* Declarations: every level of a persistent input/output type must have a
 * native persistent representation (tensors but strings, named structs,
 * typed sequences). path names the position, "[]" standing for any element. */
typedef struct dwalk {
  const ol_type_catalogue *types;
  const char *what; /* "input" / "output" */
  const char *name;
  char path[512];
} dwalk;

static ol_status decl_fail(const dwalk *w, ol_status code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ol_error(code, "persistent %s '%s': %s%s%s", w->what, w->name, w->path, w->path[0] ? ": " : "", msg);
}

static size_t decl_push(dwalk *w, const char *field) {
  size_t len = strlen(w->path);
  if (field)
    snprintf(w->path + len, sizeof w->path - len, len ? ".%s" : "field '%s'", field);
  else
    snprintf(w->path + len, sizeof w->path - len, len ? "[]" : "element []");
  return len;
}

/* A named cache declaration's pages are logically FLOAT (FLOAT16 and
 * BFLOAT16 are page formats, not declarations), start and length INT64. */
static ol_status check_cache_decl(dwalk *w, const ol_cache_decl *cache) {
  const Onnx__TypeProto *types[4] = {cache->start, cache->length, cache->key, cache->value};
  static const char *const names[4] = {"start", "length", "key", "value"};
  for (int i = 0; cache->named && i < 4; i++) {
    const Onnx__TypeProto *tp = types[i];
    if (!tp || tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) continue;
    int want = i < 2 ? OL_DTYPE_INT64 : OL_DTYPE_FLOAT;
    bool tensor = tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    if (tensor && (!tp->tensor_type->has_elem_type || !tp->tensor_type->elem_type || tp->tensor_type->elem_type == want))
      continue;
    size_t len = decl_push(w, "blocks");
    decl_push(w, NULL);
    decl_push(w, names[i]);
    ol_status s = decl_fail(w, OL_INVALID_MODEL, "a paged cache's %s must be declared as a %s tensor%s", names[i],
                            ol_dtype_name((ol_dtype)want),
                            i < 2 ? "" : " (FLOAT16 and BFLOAT16 are page formats, not declarations)");
    w->path[len] = '\0';
    return s;
  }
  return OL_OK;
}

static ol_status check_decl(dwalk *w, const Onnx__TypeProto *tp, int depth) {
  if (depth > OL_TYPE_REF_MAX_DEPTH)
    return decl_fail(w, OL_INVALID_MODEL, "types nest deeper than %d levels", OL_TYPE_REF_MAX_DEPTH);
  if (!tp) return OL_OK;
  switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE__NOT_SET:
      return OL_OK;
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
      if (tp->tensor_type->has_elem_type && tp->tensor_type->elem_type == OL_DTYPE_STRING)
        return decl_fail(w, OL_INVALID_MODEL, "string tensors cannot be persistent");
      return OL_OK;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
      size_t len = decl_push(w, NULL);
      OL_TRY(check_decl(w, tp->sequence_type->elem_type, depth + 1));
      w->path[len] = '\0';
      return OL_OK;
    }
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
      return decl_fail(w, OL_INVALID_MODEL, "map values cannot be persistent");
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE:
      return decl_fail(w, OL_INVALID_MODEL, "optional values cannot be persistent");
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
      return decl_fail(w, OL_INVALID_MODEL, "sparse tensor values cannot be persistent");
    case ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE:
      return decl_fail(w, OL_INVALID_MODEL, "opaque values cannot be persistent");
    case ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE:
      break;
    default:
      return decl_fail(w, OL_INVALID_MODEL, "unknown TypeProto kind %d", (int)tp->value_case);
  }
  const Onnx__StructTypeProto *st = NULL;
  if (ol_type_catalogue_resolve(w->types, tp->struct_type, &st) != OL_OK) {
    char why[256];
    snprintf(why, sizeof why, "%s", ol_last_error());
    return decl_fail(w, OL_INVALID_MODEL, "%s", why);
  }
  ol_cache_decl cache;
  if (ol_struct_type_paged_cache(w->types, st, &cache)) OL_TRY(check_cache_decl(w, &cache));
  switch (st->kind_case) {
    case ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE:
      break;
    case ONNX__STRUCT_TYPE_PROTO__KIND__NOT_SET:
      return OL_OK; /* a paged cache, recognized by its structure */
    case ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY: { /* an encoded layout: its element type must be persistable too */
      size_t len = decl_push(w, NULL);
      OL_TRY(check_decl(w, st->array ? st->array->element_type : NULL, depth + 1));
      w->path[len] = '\0';
      return OL_OK;
    }
    default:
      return OL_OK; /* a bit_packing layout: unsigned bit fields */
  }
  const Onnx__StructTypeProto__Structure *S = st->structure;
  for (size_t f = 0; S && f < S->n_field; f++) {
    const Onnx__StructTypeProto__Structure__Field *fd = S->field[f];
    const char *fname = fd->name ? fd->name : "";
    if (!fname[0]) return decl_fail(w, OL_INVALID_MODEL, "struct field %zu has no name", f);
    for (size_t k = 0; k < f; k++)
      if (S->field[k]->name && strcmp(S->field[k]->name, fname) == 0)
        return decl_fail(w, OL_INVALID_MODEL, "struct field '%s' is declared twice", fname);
    size_t len = decl_push(w, fname);
    if (fd->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT) {
      if (fd->constant && fd->constant->data_type == OL_DTYPE_STRING)
        return decl_fail(w, OL_INVALID_MODEL, "string tensors cannot be persistent (constant field)");
    } else if (fd->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE) {
      OL_TRY(check_decl(w, fd->type, depth + 1));
    } else {
      return decl_fail(w, OL_INVALID_MODEL, "struct field has neither a type nor a constant");
    }
    w->path[len] = '\0';
  }
  return OL_OK;
}

static ol_status reject_unsupported(const ol_state *st, const char *what, const char *name, const ol_graph_value *gv) {
  const ol_type_info *t = &gv->type;
  if (!gv->has_type) return OL_OK;
  if (t->proto) {
    dwalk w = {st->session->model->types, what, name, {0}};
    return check_decl(&w, t->proto, 0);
  }
  if (t->kind == OL_VALUE_MAP || t->kind == OL_VALUE_OPTIONAL)
    return ol_error(OL_INVALID_MODEL, "persistent %s '%s': map and optional values cannot be persistent", what, name);
  if (t->dtype == OL_DTYPE_STRING)
    return ol_error(OL_INVALID_MODEL, "persistent %s '%s': string tensors cannot be persistent", what, name);
  return OL_OK;
}

/* Input and output declarations of a binding describe the same value:
 * same kinds, element types, ranks and fixed dims where both say, the same
 * runtime struct fields in the same order. path gets the first mismatch. */
#define CONSTANT_FIELD ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT

static bool types_compatible(const ol_type_catalogue *m, const Onnx__TypeProto *a, const Onnx__TypeProto *b,
                             char *path, size_t cap, int depth) {
  if (!a || !b || a->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET ||
      b->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET)
    return true;
  if (depth > OL_TYPE_REF_MAX_DEPTH || a->value_case != b->value_case) return false;
  size_t len = strlen(path);
  switch (a->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
      const Onnx__TypeProto__Tensor *x = a->tensor_type, *y = b->tensor_type;
      if (x->has_elem_type && y->has_elem_type && x->elem_type && y->elem_type && x->elem_type != y->elem_type)
        return false;
      if (!x->shape || !y->shape) return true;
      if (x->shape->n_dim != y->shape->n_dim) return false;
      for (size_t d = 0; d < x->shape->n_dim; d++) {
        const Onnx__TensorShapeProto__Dimension *p = x->shape->dim[d], *q = y->shape->dim[d];
        if (p->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE &&
            q->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && p->dim_value != q->dim_value)
          return false;
      }
      return true;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
      snprintf(path + len, cap - len, len ? "[]" : "element []");
      if (!types_compatible(m, a->sequence_type->elem_type, b->sequence_type->elem_type, path, cap, depth + 1))
        return false;
      path[len] = '\0';
      return true;
    case ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE: {
      const Onnx__StructTypeProto *x = NULL, *y = NULL;
      if (ol_type_catalogue_resolve(m, a->struct_type, &x) != OL_OK ||
          ol_type_catalogue_resolve(m, b->struct_type, &y) != OL_OK)
        return false;
      if (x == y) return true;
      ol_cache_decl cx, cy; /* a layout-less cache and a named one describe the same value */
      if (x->kind_case != y->kind_case)
        return ol_struct_type_paged_cache(m, x, &cx) && ol_struct_type_paged_cache(m, y, &cy);
      if (x->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE) return true; /* rejected by check_decl */
      size_t i = 0, j = 0, nx = x->structure ? x->structure->n_field : 0, ny = y->structure ? y->structure->n_field : 0;
      for (;;) {
        while (i < nx && x->structure->field[i]->content_case == CONSTANT_FIELD) i++;
        while (j < ny && y->structure->field[j]->content_case == CONSTANT_FIELD) j++;
        if (i == nx || j == ny) return i == nx && j == ny;
        const Onnx__StructTypeProto__Structure__Field *p = x->structure->field[i++], *q = y->structure->field[j++];
        snprintf(path + len, cap - len, len ? ".%s" : "field '%s'", p->name ? p->name : "");
        if (strcmp(p->name ? p->name : "", q->name ? q->name : "") != 0) {
          size_t at = strlen(path);
          snprintf(path + at, cap - at, " (the output declares '%s')", q->name ? q->name : "");
          return false;
        }
        if (!types_compatible(m, p->type, q->type, path, cap, depth + 1)) return false;
        path[len] = '\0';
      }
    }
    default:
      return true; /* other kinds are rejected by check_decl */
  }
}

/* Retained and published values against the input's declaration: walked
 * whole, except (next values) what they share with the value they replace. */
static ol_status check_value(const ol_state *st, const binding *b, const ol_value *v, const ol_value *replaced) {
  const ol_graph *g = st->session->model->graph;
  return ol_check_next_value_decl(st->session->model->types, &g->inputs[b->input], v, replaced, "persistent input");
}

/* Values retained from outside a run also obey a paged cache's own rules
 * (ranges, capacities, widths, page formats: checked once here; published
 * caches come from kernels that checked them). */
static ol_status check_retained(const ol_state *st, const binding *b, const ol_value *v) {
  OL_TRY(check_value(st, b, v, NULL));
  if (!ol_paged_cache_is(v)) return OL_OK;
  ol_status s = ol_paged_cache_validate(v, NULL, NULL, NULL);
  return s == OL_OK ? OL_OK : ol_error_wrap(s, "persistent input '%s'", b->input_name);
}

static binding *find_binding(const ol_state *st, const char *input_name) {
  for (size_t i = 0; i < st->num_bindings; i++)
    if (strcmp(st->bindings[i].input_name, input_name) == 0) return &st->bindings[i];
  return NULL;
}

/* Validates a complete set of initial values; on success retains them all. */
static ol_status take_initial(ol_state *st, const char *const *names, ol_value *const *initial, size_t count) {
  if (count && (!names || !initial)) return ol_error(OL_INVALID_ARGUMENT, "initial names or values are NULL");
  ol_value **chosen = ol_xcalloc(st->num_bindings + 1, sizeof *chosen);
  if (!chosen) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (size_t i = 0; s == OL_OK && i < count; i++) {
    binding *b = names[i] ? find_binding(st, names[i]) : NULL;
    if (!b)
      s = ol_error(OL_INVALID_ARGUMENT, "initial value '%s' does not name a persistent input", names[i] ? names[i] : "(null)");
    else if (chosen[b - st->bindings])
      s = ol_error(OL_INVALID_ARGUMENT, "initial value '%s' is given twice", names[i]);
    else if ((s = check_retained(st, b, initial[i])) == OL_OK)
      chosen[b - st->bindings] = initial[i];
  }
  /* an omitted input starts from its initializer default (a paged cache
   * initializer, say), by reference like any initial value */
  const ol_graph *g = st->session->model->graph;
  for (size_t k = 0; s == OL_OK && k < st->num_bindings; k++) {
    if (chosen[k]) continue;
    const ol_initializer *init = ol_graph_find_initializer(g, st->bindings[k].input_name);
    if (!init)
      s = ol_error(OL_INVALID_ARGUMENT, "no initial value for persistent input '%s' (and no initializer default)",
                   st->bindings[k].input_name);
    else if ((s = check_retained(st, &st->bindings[k], init->value)) == OL_OK)
      chosen[k] = init->value;
    else
      s = ol_error_wrap(s, "the %s default", ol_initializer_kind(init));
  }
  if (s == OL_OK)
    for (size_t k = 0; k < st->num_bindings; k++) {
      ol_value_release(st->bindings[k].value);
      st->bindings[k].value = ol_value_retain(chosen[k]); /* by reference: no payload copy */
      ol_value_release(st->bindings[k].dense);
      st->bindings[k].dense = NULL;
      st->bindings[k].certified = NULL; /* imported bytes carry no append capacity */
    }
  free(chosen);
  return s;
}

/* ------------------------------------------------------------ lifecycle */

ol_status ol_state_create(ol_model *model, const char *const *names, ol_value *const *initial, size_t count,
                          const ol_session_options *options, ol_state **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_state_create: out is NULL");
  *out = NULL;
  if (!model) return ol_error(OL_INVALID_ARGUMENT, "ol_state_create: model is NULL");
  const Onnx__ModelProto *gp_model = model->data->proto;
  const Onnx__GraphProto *gp = gp_model->graph;
  if (gp->n_persistent_bindings == 0)
    return ol_error(OL_INVALID_ARGUMENT, "the model declares no persistent_bindings; use a session");
  ol_state *st = ol_xcalloc(1, sizeof *st);
  if (!st) return OL_OUT_OF_MEMORY;
  ol_session_options session_options;
  if (options) session_options = *options;
  else ol_session_options_init(&session_options);
  session_options.grow_outputs = 0; /* the state grows its caches through append reservations */
  st->initial_capacity = session_options.persistent_tensor_initial_capacity;
  ol_status s = st->initial_capacity < 0
                    ? ol_error(OL_INVALID_ARGUMENT, "persistent_tensor_initial_capacity must be >= 0")
                    : ol_session_create(model, &session_options, &st->session); /* runs the checker */
  const ol_graph *g = model->data->graph;
  if (s == OL_OK) {
    st->bindings = ol_xcalloc(gp->n_persistent_bindings, sizeof *st->bindings);
    st->bound = ol_xcalloc(g->num_inputs, sizeof *st->bound);
    if (!st->bindings || !st->bound) s = OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; s == OL_OK && i < gp->n_persistent_bindings; i++) {
    const char *in = gp->persistent_bindings[i]->input_name, *outn = gp->persistent_bindings[i]->output_name;
    binding *b = &st->bindings[st->num_bindings++];
    b->input_name = in ? in : "";
    b->output_name = outn ? outn : "";
    while (b->input < g->num_inputs && strcmp(g->inputs[b->input].name, b->input_name) != 0) b->input++;
    while (b->output < g->num_outputs && strcmp(g->outputs[b->output].name, b->output_name) != 0) b->output++;
    /* the checker guarantees both exist */
    st->bound[b->input] = true;
    const ol_graph_value *gi = &g->inputs[b->input], *go = &g->outputs[b->output];
    if ((s = reject_unsupported(st, "input", b->input_name, gi)) != OL_OK) break;
    if ((s = reject_unsupported(st, "output", b->output_name, go)) != OL_OK) break;
    if (!gi->has_type || !go->has_type) continue;
    const ol_type_info *ti = &gi->type, *to = &go->type;
    char path[512] = "";
    if (ti->proto && to->proto) {
      if (!types_compatible(model->data->types, ti->proto, to->proto, path, sizeof path, 0))
        s = ol_error(OL_INVALID_MODEL,
                     "persistent binding '%s' <- '%s': the output's type does not match the input's%s%s",
                     b->input_name, b->output_name, path[0] ? " at " : "", path);
    } else if (ti->kind != to->kind || (ti->dtype && to->dtype && ti->dtype != to->dtype) ||
               (ti->rank >= 0 && to->rank >= 0 && ti->rank != to->rank)) {
      s = ol_error(OL_INVALID_MODEL, "persistent binding '%s' <- '%s': the output's type does not match the input's",
                   b->input_name, b->output_name);
    }
  }
  if (s == OL_OK) s = take_initial(st, names, initial, count);
  if (s != OL_OK) {
    ol_state_destroy(st);
    return s;
  }
  *out = st;
  return OL_OK;
}

ol_status ol_state_reset(ol_state *st, const char *const *names, ol_value *const *initial, size_t count) {
  if (!st) return ol_error(OL_INVALID_ARGUMENT, "ol_state_reset: state is NULL");
  if (st->closed) return ol_error(OL_FAILED_PRECONDITION, "the state is closed");
  return take_initial(st, names, initial, count);
}

ol_status ol_state_close(ol_state *st) {
  if (!st) return ol_error(OL_INVALID_ARGUMENT, "ol_state_close: state is NULL");
  if (st->closed) return ol_error(OL_FAILED_PRECONDITION, "the state is already closed");
  for (size_t i = 0; i < st->num_bindings; i++) {
    ol_value_release(st->bindings[i].value);
    ol_value_release(st->bindings[i].dense);
    st->bindings[i].value = NULL;
    st->bindings[i].dense = NULL;
    st->bindings[i].certified = NULL;
  }
  st->closed = true;
  return OL_OK;
}

void ol_state_destroy(ol_state *st) {
  if (!st) return;
  for (size_t i = 0; st->bindings && i < st->num_bindings; i++) {
    ol_value_release(st->bindings[i].value);
    ol_value_release(st->bindings[i].dense);
  }
  free(st->bindings);
  free(st->bound);
  ol_session_destroy(st->session);
  free(st);
}

size_t ol_state_value_count(const ol_state *st) { return st && !st->closed ? st->num_bindings : 0; }

const char *ol_state_value_name(const ol_state *st, size_t i) {
  return st && !st->closed && i < st->num_bindings ? st->bindings[i].input_name : NULL;
}

/* What the user sees of binding b: the retained value itself, or for a
 * pitched cache its dense copy (made once per publication). */
static ol_status user_view(const ol_state *st, binding *b, ol_value **out) {
  *out = b->value;
  if (!b->value || b->value->kind != OL_VALUE_TENSOR || !ol_tensor_is_strided(&b->value->tensor)) return OL_OK;
  if (!b->dense) OL_TRY(ol_tensor_materialize(st->session->allocator, &b->value->tensor, &b->dense));
  *out = b->dense;
  return OL_OK;
}

ol_status ol_state_value(const ol_state *st, const char *name, ol_value **out) {
  if (!st || !name || !out) return ol_error(OL_INVALID_ARGUMENT, "ol_state_value: NULL argument");
  *out = NULL;
  if (st->closed) return ol_error(OL_FAILED_PRECONDITION, "the state is closed");
  binding *b = find_binding(st, name);
  if (!b) return ol_error(OL_NOT_FOUND, "'%s' is not a persistent input", name);
  return user_view(st, b, out);
}

const ol_session *ol_state_session(const ol_state *st) { return st ? st->session : NULL; }

/* ------------------------------------------------------------ append reservations */

/* Per-run bookkeeping: one attempt per binding, and the candidate buffers the
 * kernels committed (they become certified only if published unchanged). */
typedef struct run_appends {
  ol_state *state;
  bool *attempted;
  ol_value **candidate; /* committed result per binding (borrowed) */
} run_appends;

/* Dtypes whose caches may grow in place (whole-byte floating point). */
static bool append_dtype(ol_dtype dt) {
  return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_FLOAT16 || dt == OL_DTYPE_BFLOAT16;
}

/* The layout: a buffer of outer x capacity x inner elements, the prefix of
 * outer row o at o * capacity * inner. With one outer row that is plain
 * contiguous storage; with several (batches, heads) the result is a pitched
 * view (core/pitched.c) so the prefix never moves while capacity lasts. */
static ol_status reserve_append(void *user, const ol_node *node, size_t graph_input, const ol_value *value,
                                int frame_refs, size_t output, int rank, const int64_t *dims, int axis,
                                ol_append_reservation *res) {
  run_appends *ra = user;
  ol_state *st = ra->state;
  binding *b = NULL;
  for (size_t k = 0; k < st->num_bindings && !b; k++)
    if (st->bindings[k].input == graph_input) b = &st->bindings[k];
  if (!b || !ol_node_has_output(node, output) || strcmp(node->outputs[output], b->output_name) != 0)
    return OL_OK; /* not a bound pair: ordinary path */
  size_t k = (size_t)(b - st->bindings);
  if (ra->attempted[k])
    return ol_kernel_error(node, OL_FAILED_PRECONDITION, "second append reservation for '%s' in one run", b->output_name);
  ra->attempted[k] = true;
  res->bound = true;
  const ol_value *prev = b->value;
  if (st->initial_capacity == 0 || !prev || prev != value || prev->kind != OL_VALUE_TENSOR) return OL_OK;
  const ol_tensor *t = &prev->tensor;
  /* eligible: same dims but the axis, which does not shrink */
  if (!append_dtype(t->dtype) || t->rank != rank || axis < 0 || axis >= rank) return OL_OK;
  for (int d = 0; d < rank; d++)
    if (d != axis && dims[d] != t->dims[d]) return OL_OK;
  if (dims[axis] < t->dims[axis]) return OL_OK;
  if (t->pitch > 0 && t->pitch_axis != axis) return OL_OK;
  size_t es = ol_dtype_size(t->dtype);
  int64_t outer = ol_shape_count(axis, dims);
  size_t row = es * (size_t)ol_shape_count(rank - axis - 1, dims + axis + 1); /* bytes per position */
  if (!row || !outer) return OL_OK; /* zero-width caches keep the dense path */
  int64_t old = t->dims[axis], need = dims[axis];
  ol_buffer *buf = t->buffer;
  /* capacity only in our own buffer, unshared: one reference from the state
   * plus those of the running frame; any other holder is an outstanding alias */
  bool ours = buf && buf == b->certified && t->offset == 0 && buf->refcount == 1;
  int64_t pitch = t->pitch > 0 ? t->pitch : t->dims[axis]; /* positions per outer row of t's storage */
  int64_t have = !ours ? 0 : outer == 1 ? (int64_t)(buf->size / row) : pitch;
  bool reusable = ours && prev->refcount == 1 + frame_refs;
  int64_t capacity = have;
  if (reusable && have >= need) {
    buf = ol_buffer_retain(buf);
    res->counts.reuse_count = 1;
  } else {
    /* geometric from the larger of the old capacity and the prefix (an
     * imported cache of L tokens gets room for L more, not one) */
    capacity = st->initial_capacity;
    if (capacity < 2 * have) capacity = 2 * have;
    if (capacity < 2 * old) capacity = 2 * old;
    /* and room for the next append: a prompt that fills the initial
     * capacity exactly would otherwise move at the very next token */
    while (capacity <= need) capacity *= 2;
    size_t bytes = (size_t)outer * (size_t)capacity * row;
    /* uninitialized: only rows in use are ever read, and spare rows of
     * fresh memory stay out of the resident set until appended to */
    buf = ol_buffer_new_uninit(st->session->allocator, bytes);
    if (!buf) return ol_kernel_error(node, OL_OUT_OF_MEMORY, "cannot allocate %zu bytes of append capacity", bytes);
    /* the prefix moves once, row by row from the previous layout */
    size_t prefix = (size_t)old * row, from = (size_t)pitch * row;
    if (outer == 1) from = prefix;
    if (prefix)
      for (int64_t o = 0; o < outer; o++)
        memcpy((char *)buf->data + (size_t)o * (size_t)capacity * row, (const char *)ol_tdata(t) + (size_t)o * from,
               prefix);
    res->counts.allocations = 1;
    res->counts.allocated_bytes = bytes;
    res->counts.prefix_copied_bytes = (size_t)outer * prefix;
  }
  ol_status s = outer > 1 ? ol_value_new_pitched_view(buf, 0, t->dtype, rank, dims, axis, capacity, &res->result)
                    : ol_value_new_view(buf, 0, t->dtype, rank, dims, &res->result);
  ol_buffer_release(buf);
  if (s != OL_OK) {
    memset(&res->counts, 0, sizeof res->counts);
    return s;
  }
  res->rows = (size_t)outer;
  res->row_bytes = (size_t)(need - old) * row;
  res->row_stride = (size_t)capacity * row;
  res->writable = (char *)buf->data + (size_t)old * row;
  res->writable_bytes = res->rows * res->row_bytes;
  return OL_OK;
}

static ol_status commit_append(void *user, const ol_node *node, size_t output, ol_append_reservation *res,
                               ol_value **out) {
  run_appends *ra = user;
  binding *b = NULL;
  for (size_t k = 0; k < ra->state->num_bindings && !b; k++)
    if (ol_node_has_output(node, output) && strcmp(node->outputs[output], ra->state->bindings[k].output_name) == 0)
      b = &ra->state->bindings[k];
  if (!b || !res->result) return ol_kernel_error(node, OL_INTERNAL, "commit without a reservation");
  ra->candidate[b - ra->state->bindings] = res->result;
  *out = res->result; /* ownership moves to the node output */
  res->result = NULL;
  return OL_OK;
}

/* ------------------------------------------------------------ run */

ol_payload_pool *ol_state_payload_pool(const ol_state *st) { return st ? st->session->pool : NULL; }

static ol_allocator *allocator_of(const ol_state *st, const ol_context *context) {
  return context && context->allocator ? context->allocator : st->session->allocator;
}

/* The run itself. watch (may be NULL) is polled between nodes and gates the
 * publication; complete says whether a successful run completes it (the
 * public call) or only watches it (generation polling its caller's token). */
static ol_status state_run(ol_state *st, ol_context *context, const char *const *input_names, ol_value *const *inputs,
                           size_t n_inputs, const char *const *output_names, ol_value **outputs, size_t n_outputs,
                           ol_completion *completion, bool complete) {
  if (!st) return ol_error(OL_INVALID_ARGUMENT, "ol_state_run: state is NULL");
  if (n_outputs && !outputs) return ol_error(OL_INVALID_ARGUMENT, "ol_state_run: outputs is NULL");
  for (size_t i = 0; i < n_outputs; i++) outputs[i] = NULL;
  if (st->closed) return ol_error(OL_FAILED_PRECONDITION, "the state is closed");
  if (complete && completion && completion->completed)
    return ol_error(OL_FAILED_PRECONDITION, "the completion was already used by a successful run (single use)");
  if (completion && completion->cancelled)
    return ol_error(OL_CANCELLED, "run cancelled before it started: %s", completion->reason);
  ol_session *session = st->session;
  const ol_graph *g = session->model->graph;
  /* small graphs (the common case) keep the per-run tables on the stack */
  enum { LOCAL = 64 };
  ol_value *local_feeds[LOCAL] = {0}, *local_all[LOCAL] = {0}, *local_candidate[LOCAL] = {0};
  size_t local_pick[LOCAL] = {0};
  bool local_attempted[LOCAL] = {0};
  ol_value **feeds = g->num_inputs < LOCAL ? local_feeds : ol_xcalloc(g->num_inputs + 1, sizeof *feeds);
  ol_value **all = g->num_outputs < LOCAL ? local_all : ol_xcalloc(g->num_outputs + 1, sizeof *all);
  size_t *pick = n_outputs < LOCAL ? local_pick : ol_xcalloc(n_outputs + 1, sizeof *pick);
  bool small = st->num_bindings < LOCAL;
  bool *attempted = small ? local_attempted : ol_xcalloc(st->num_bindings, sizeof *attempted);
  ol_value **candidate = small ? local_candidate : ol_xcalloc(st->num_bindings, sizeof *candidate);
  ol_status s = (!feeds || !all || !pick || !attempted || !candidate) ? OL_OUT_OF_MEMORY : OL_OK;
  ol_payload_pool_scope reuse = ol_payload_pool_enter(session->pool, allocator_of(st, context));
  if (s == OL_OK) s = ol_session_match_feeds(session, input_names, inputs, n_inputs, st->bound, feeds);
  if (s == OL_OK) s = ol_session_match_outputs(session, output_names, n_outputs, pick);
  if (s == OL_OK) {
    for (size_t k = 0; k < st->num_bindings; k++) feeds[st->bindings[k].input] = st->bindings[k].value;
    run_appends ra = {st, attempted, candidate};
    ol_append_host host = {&ra, reserve_append, commit_append};
    ol_allocator *allocator = allocator_of(st, context);
    ol_run_env env = {allocator, completion ? &completion->cancelled : NULL, context,
                      st->initial_capacity > 0 ? &host : NULL, session->threads, false, &session->paged};
    s = ol_plan_run(session->plan, NULL, &env, feeds, g->num_inputs, all, g->num_outputs);
  }
  /* validate every next value before publishing any */
  for (size_t k = 0; s == OL_OK && k < st->num_bindings; k++) {
    const binding *b = &st->bindings[k];
    ol_status v = check_value(st, b, all[b->output], b->value);
    if (v != OL_OK) s = ol_error_wrap(v, "next value of '%s' from output '%s'", b->input_name, b->output_name);
  }
  /* A paged cache grown by many blocks (one per decoded token) is
   * compacted before it is published or returned; its new mark is kept
   * with the publication. */
  size_t local_marks[LOCAL] = {0};
  size_t *marks = small ? local_marks : ol_xcalloc(st->num_bindings, sizeof *marks);
  if (!marks && s == OL_OK) s = OL_OUT_OF_MEMORY;
  for (size_t k = 0; s == OL_OK && k < st->num_bindings; k++) {
    binding *b = &st->bindings[k];
    ol_value **next = &all[b->output], *compacted = NULL;
    marks[k] = b->compact_mark;
    if (!ol_paged_cache_outline_is(*next)) continue;
    s = ol_paged_cache_compact_grown(*next, &marks[k], &compacted);
    if (compacted) {
      ol_value_release(*next);
      *next = compacted;
    }
  }
  /* Returned outputs are dense tensors: pitched caches get a dense copy
   * (made before publishing, so failing here publishes nothing); a
   * published one becomes the state's view of it (see user_view). */
  for (size_t i = 0; s == OL_OK && i < n_outputs; i++) {
    outputs[i] = ol_value_retain(all[pick[i]]);
    s = ol_value_densify(allocator_of(st, context), &outputs[i]);
  }
  /* the publication gate: a cancellation that wins the race prevents it */
  if (s == OL_OK && completion && completion->cancelled)
    s = ol_error(OL_CANCELLED, "run cancelled before publication: %s", completion->reason);
  if (s == OL_OK) {
    for (size_t k = 0; k < st->num_bindings; k++) {
      binding *b = &st->bindings[k];
      ol_value *next = all[b->output];
      /* capacity survives only if the published value is the kernel's candidate */
      b->certified = next == candidate[k] ? next->tensor.buffer : NULL;
      b->compact_mark = marks[k];
      ol_value_release(b->value);
      ol_value_release(b->dense);
      b->value = ol_value_retain(next);
      b->dense = NULL;
      for (size_t i = 0; i < n_outputs && !b->dense; i++)
        if (all[pick[i]] == next && outputs[i] != next) b->dense = ol_value_retain(outputs[i]);
    }
    if (complete && completion) completion->completed = 1;
  }
  if (s != OL_OK)
    for (size_t i = 0; i < n_outputs; i++) {
      ol_value_release(outputs[i]);
      outputs[i] = NULL;
    }
  if (all)
    for (size_t k = 0; k < g->num_outputs; k++) ol_value_release(all[k]);
  ol_payload_pool_leave(reuse);
  if (feeds != local_feeds) free(feeds);
  if (all != local_all) free(all);
  if (pick != local_pick) free(pick);
  if (!small) {
    free(attempted);
    free(candidate);
    free(marks);
  }
  return s;
}

ol_status ol_state_run(ol_state *st, ol_context *context, const char *const *input_names, ol_value *const *inputs,
                       size_t n_inputs, const char *const *output_names, ol_value **outputs, size_t n_outputs,
                       ol_completion *completion) {
  return state_run(st, context, input_names, inputs, n_inputs, output_names, outputs, n_outputs, completion, true);
}

ol_status ol_state_run_watching(ol_state *st, ol_context *context, const char *const *input_names,
                                ol_value *const *inputs, size_t n_inputs, const char *const *output_names,
                                ol_value **outputs, size_t n_outputs, ol_completion *watch) {
  return state_run(st, context, input_names, inputs, n_inputs, output_names, outputs, n_outputs, watch, false);
}
