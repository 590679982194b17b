/* Sessions: plan once, run many times. */
#include "runtime/session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "ir/quant_params.h"
#include "model/element_types.h"
#include "quant/paged.h"
#include "quant/wire.h"
#include "quant/wire_proto.h"
#include "runtime/completion.h"
#include "runtime/context.h"

ol_status ol_session_create(ol_model *model, const ol_session_options *options, ol_session **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_session_create: out is NULL");
  *out = NULL;
  if (!model) return ol_error(OL_INVALID_ARGUMENT, "ol_session_create: model is NULL");
  if (options && options->intra_op_num_threads < 0)
    return ol_error(OL_INVALID_ARGUMENT, "ol_session_create: intra_op_num_threads must be >= 0 (0: default), got %d",
                    options->intra_op_num_threads);
  OL_TRY(ol_model_check(model));
  ol_session *s = ol_xcalloc(1, sizeof *s);
  if (!s) return OL_OUT_OF_MEMORY;
  s->model = ol_model_data_retain(model->data);
  s->allocator = options && options->allocator ? options->allocator : ol_allocator_default();
  s->threads = options ? options->intra_op_num_threads : 0;
  s->grow_outputs = options && options->grow_outputs;
  if (s->threads > 1) ol_pool_reserve(s->threads);
  ol_status formats = options ? ol_session_set_page_formats(s, options) : OL_OK;
  if (formats != OL_OK) {
    ol_session_destroy(s);
    return formats;
  }
  const ol_graph *g = s->model->graph;
  ol_status st = ol_plan_create(g, NULL, &s->plan);
  if (st == OL_OK) st = ol_session_reuse_payloads(s, true);
  if (st == OL_OK) st = ol_model_check_element_types(s->model);
  if (st == OL_OK) {
    s->input_index = ol_xcalloc(g->num_inputs, sizeof(size_t));
    if (!s->input_index) st = OL_OUT_OF_MEMORY;
  }
  if (st == OL_OK)
    for (size_t i = 0; i < g->num_inputs; i++) {
      if (ol_graph_find_initializer(g, g->inputs[i].name)) continue;
      s->input_index[s->num_inputs++] = i;
    }
  if (st != OL_OK) {
    ol_session_destroy(s);
    return st;
  }
  *out = s;
  return OL_OK;
}

void ol_session_grow_outputs(ol_session *s, bool on) { s->grow_outputs = on; }

/* Rules: from_tokens >= 0 and ascending, formats PagedAttention can append. */
static ol_status check_page_format_rules(const ol_page_format_rule *rules, size_t n) {
  if (n && !rules) return ol_error(OL_INVALID_ARGUMENT, "page_format_rules is NULL but page_format_rule_count is %zu", n);
  for (size_t i = 0; i < n; i++) {
    if (rules[i].from_tokens < 0 || (i && rules[i].from_tokens <= rules[i - 1].from_tokens))
      return ol_error(OL_INVALID_ARGUMENT,
                      "page format rule %zu: from_tokens %lld must be >= 0 and above the previous rule's", i,
                      (long long)rules[i].from_tokens);
    ol_status s = ol_page_format_validate("key", &rules[i].formats.key, true);
    if (s == OL_OK) s = ol_page_format_validate("value", &rules[i].formats.value, true);
    if (s != OL_OK) return ol_error_wrap(s, "page format rule %zu", i);
  }
  return OL_OK;
}

ol_status ol_session_set_page_formats(ol_session *s, const ol_session_options *options) {
  ol_page_format_rule *rules = NULL;
  size_t n = options->page_format_rule_count;
  OL_TRY(check_page_format_rules(options->page_format_rules, n));
  if (n) {
    rules = ol_xcalloc(n, sizeof *rules);
    if (!rules) return OL_OUT_OF_MEMORY;
    memcpy(rules, options->page_format_rules, n * sizeof *rules);
  }
  free((void *)s->paged.rules);
  s->paged = (ol_paged_policy){options->page_format_fn, options->page_format_user, rules, rules ? n : 0};
  return OL_OK;
}

bool ol_session_input_grow_axis(const ol_session *s, size_t i, int64_t *axis) {
  return s && axis && s->grow_outputs && i < s->num_inputs && ol_plan_input_grow_axis(s->plan, s->input_index[i], axis);
}

bool ol_session_scope_begin(const ol_session *s, ol_run_scope *scope) {
  _Static_assert(sizeof(ol_payload_pool_scope) <= sizeof(ol_run_scope), "ol_run_scope holds a pool scope");
  if (!scope) return false;
  ol_payload_pool_scope inner = ol_payload_pool_enter(s ? s->pool : NULL, s ? s->allocator : NULL);
  memset(scope, 0, sizeof *scope);
  memcpy(scope, &inner, sizeof inner);
  return inner.pool != NULL;
}

void ol_session_scope_end(ol_run_scope *scope) {
  if (!scope) return;
  ol_payload_pool_scope inner;
  memcpy(&inner, scope, sizeof inner);
  memset(scope, 0, sizeof *scope);
  ol_payload_pool_leave(inner);
}

ol_status ol_quant_bind_session(ol_value *encoded, const ol_session *session) {
  return ol_quant_bind_value(encoded, session ? session->model : NULL);
}

ol_status ol_session_reuse_payloads(ol_session *s, bool on) {
  if (on == (s->pool != NULL)) return OL_OK;
  if (!on) {
    ol_payload_pool_destroy(s->pool);
    s->pool = NULL;
    return OL_OK;
  }
  s->pool = ol_payload_pool_create(s->allocator);
  return s->pool ? OL_OK : ol_error(OL_OUT_OF_MEMORY, "out of memory creating a session");
}

void ol_session_destroy(ol_session *s) {
  if (!s) return;
  ol_payload_pool_destroy(s->pool);
  ol_plan_destroy(s->plan);
  free((void *)s->paged.rules);
  free(s->input_index);
  ol_model_data_release(s->model);
  free(s);
}

size_t ol_session_input_count(const ol_session *s) { return s->num_inputs; }
size_t ol_session_output_count(const ol_session *s) { return s->model->graph->num_outputs; }

const char *ol_session_input_name(const ol_session *s, size_t i) {
  return i < s->num_inputs ? s->model->graph->inputs[s->input_index[i]].name : NULL;
}
const char *ol_session_output_name(const ol_session *s, size_t i) {
  return i < s->model->graph->num_outputs ? s->model->graph->outputs[i].name : NULL;
}

static ol_status describe(const ol_graph_value *v, ol_value_info *out) {
  ol_graph_value_info(v, out);
  return OL_OK;
}

ol_status ol_session_input_info(const ol_session *s, size_t i, ol_value_info *out) {
  if (i >= s->num_inputs) return ol_error(OL_INVALID_ARGUMENT, "input index %zu out of range", i);
  return describe(&s->model->graph->inputs[s->input_index[i]], out);
}

ol_status ol_session_output_info(const ol_session *s, size_t i, ol_value_info *out) {
  if (i >= s->model->graph->num_outputs) return ol_error(OL_INVALID_ARGUMENT, "output index %zu out of range", i);
  return describe(&s->model->graph->outputs[i], out);
}

/* ------------------------------------------------------------ value checks */

/* The declared type of a struct field with a runtime value (NULL: none, or
 * a constant field); *found says whether the field exists. */
static const Onnx__TypeProto *field_type(const Onnx__StructTypeProto__Structure *S, const char *name, bool *found) {
  for (size_t f = 0; S && f < S->n_field; f++) {
    const Onnx__StructTypeProto__Structure__Field *fd = S->field[f];
    if (!fd->name || strcmp(fd->name, name) != 0) continue;
    *found = fd->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE;
    return *found ? fd->type : NULL;
  }
  *found = false;
  return NULL;
}

/* Runtime (non-constant) fields of a structure. */
static size_t runtime_fields(const Onnx__StructTypeProto__Structure *S) {
  size_t n = 0;
  for (size_t f = 0; S && f < S->n_field; f++)
    n += S->field[f]->content_case != ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT;
  return n;
}

bool ol_struct_type_paged_cache(const ol_type_catalogue *types, const Onnx__StructTypeProto *st, ol_cache_decl *out) {
  memset(out, 0, sizeof *out);
  if (!st || st->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND__NOT_SET) return true;
  if (st->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE || runtime_fields(st->structure) != 1) return false;
  bool found;
  const Onnx__TypeProto *blocks = field_type(st->structure, "blocks", &found);
  if (!found || !blocks || blocks->value_case != ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE) return false;
  const Onnx__TypeProto *elem = blocks->sequence_type->elem_type;
  const Onnx__StructTypeProto *block = NULL;
  if (!elem || elem->value_case != ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE ||
      ol_type_catalogue_resolve(types, elem->struct_type, &block) != OL_OK || !block ||
      block->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE || runtime_fields(block->structure) != 4)
    return false;
  const Onnx__TypeProto **slots[4] = {&out->start, &out->length, &out->key, &out->value};
  static const char *const names[4] = {"start", "length", "key", "value"};
  for (int i = 0; i < 4; i++) {
    *slots[i] = field_type(block->structure, names[i], &found);
    if (!found) {
      memset(out, 0, sizeof *out);
      return false;
    }
  }
  out->named = true;
  return true;
}

static const char *kind_name(ol_value_kind k) {
  switch (k) {
    case OL_VALUE_TENSOR: return "tensor";
    case OL_VALUE_SEQUENCE: return "sequence";
    case OL_VALUE_MAP: return "map";
    case OL_VALUE_OPTIONAL: return "optional";
    case OL_VALUE_ENCODED: return "encoded value";
    case OL_VALUE_STRUCT: return "struct";
  }
  return "value";
}

/* One walk of a value against a TypeProto: path names the position ("field
 * 'blocks'[2].key") for messages "<label> '<name>': <path>: <problem>". */
typedef struct vwalk {
  const ol_type_catalogue *types;
  bool persistent;
  const char *label;
  const char *name;
  char path[512];
  const ol_value *accepted; /* a value that passed this declaration (or NULL), see walk_cache */
} vwalk;

static ol_status fail(const vwalk *w, ol_status code, const char *fmt, ...) {
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  return ol_error(code, "%s '%s': %s%s%s", w->label, w->name, w->path, w->path[0] ? ": " : "", msg);
}

static size_t push_field(vwalk *w, const char *field) {
  size_t len = strlen(w->path);
  snprintf(w->path + len, sizeof w->path - len, len ? ".%s" : "field '%s'", field);
  return len;
}

static size_t push_element(vwalk *w, size_t i) {
  size_t len = strlen(w->path);
  snprintf(w->path + len, sizeof w->path - len, len ? "[%zu]" : "element [%zu]", i);
  return len;
}

/* Whether check_shape would pass (the fast path: no description formatted). */
static bool shape_matches(const Onnx__TypeProto__Tensor *t, ol_dtype dtype, int rank, const int64_t *dims) {
  if (t->has_elem_type && t->elem_type && (ol_dtype)t->elem_type != dtype) return false;
  if (!t->shape) return true;
  if ((size_t)rank != t->shape->n_dim) return false;
  for (int d = 0; d < rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = t->shape->dim[d];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0 &&
        dims[d] != dim->dim_value)
      return false;
  }
  return true;
}

/* dtype/rank/fixed dims of a tensor against a declared tensor type */
static ol_status check_shape(const vwalk *w, const Onnx__TypeProto__Tensor *t, ol_dtype dtype, int rank,
                             const int64_t *dims, const char *got, const char *what) {
  if (t->has_elem_type && t->elem_type && (ol_dtype)t->elem_type != dtype)
    return fail(w, OL_INVALID_ARGUMENT, "%sexpected element type %s, got %s", what,
                ol_dtype_name((ol_dtype)t->elem_type), got);
  if (!t->shape) return OL_OK;
  if ((size_t)rank != t->shape->n_dim)
    return fail(w, OL_INVALID_ARGUMENT, "%sexpected rank %zu, got %s", what, t->shape->n_dim, got);
  for (int d = 0; d < rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = t->shape->dim[d];
    if (dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE && dim->dim_value >= 0 &&
        dims[d] != dim->dim_value)
      return fail(w, OL_INVALID_ARGUMENT, "%sdimension %d must be %lld, got %s", what, d,
                  (long long)dim->dim_value, got);
  }
  return OL_OK;
}

/* A retained encoded value must carry its bytes: one marked EXTERNAL is
 * accepted once its raw_data is loaded (seed 003). */
static ol_status fail_unloaded(const vwalk *w) {
  return fail(w, OL_INVALID_ARGUMENT, "an encoded value with an external payload must be loaded before it is retained");
}

/* Encoded values are checked through their logical tensor type, never decoded.
 * t (may be NULL: unconstrained) is the declared tensor type. */
static ol_status check_encoded(const vwalk *w, const Onnx__TypeProto__Tensor *t, const ol_value *v) {
  const Onnx__EncodedValueProto *e = v->encoded;
  if (!e) return fail(w, OL_INVALID_ARGUMENT, "encoded value without a payload");
  if (w->persistent && ol_quant_payload_unloaded(e)) return fail_unloaded(w);
  if (e->parameter_ref && e->parameter_ref[0]) {
    /* a compact value carries its parameter set: reference, types and byte
     * extent are checked without materializing it */
    const ol_quant_shared_set *set = ol_quant_shared_of(v);
    if (!set)
      return fail(w, OL_INVALID_ARGUMENT,
                  "compact encoded value refers to the quantization parameter set '%s' but carries "
                  "no parameter catalogue", e->parameter_ref);
    if (ol_quant_shared_check(set, e, w->types) != OL_OK) {
      char why[384];
      snprintf(why, sizeof why, "%s", ol_last_error());
      return fail(w, OL_INVALID_ARGUMENT, "compact encoded value: %s", why);
    }
  }
  const Onnx__TypeProto *lt = e->logical_type;
  if (!lt || lt->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !lt->tensor_type->has_elem_type)
    return fail(w, OL_INVALID_ARGUMENT, "encoded value without a logical tensor type");
  const Onnx__TypeProto__Tensor *lg = lt->tensor_type;
  int64_t dims[OL_MAX_RANK];
  if (!lg->shape || lg->shape->n_dim > OL_MAX_RANK)
    return fail(w, OL_INVALID_ARGUMENT, "encoded value: logical_type has no rank (it must be concrete)");
  int rank = (int)lg->shape->n_dim;
  for (int d = 0; d < rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = lg->shape->dim[d];
    if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dim->dim_value < 0)
      return fail(w, OL_INVALID_ARGUMENT, "encoded value: logical_type dimension %d is not concrete", d);
    dims[d] = dim->dim_value;
  }
  ol_dtype dtype = (ol_dtype)lg->elem_type;
  if (w->persistent && dtype == OL_DTYPE_STRING)
    return fail(w, OL_INVALID_ARGUMENT, "string tensors cannot be persistent");
  if (!t) return OL_OK;
  char got[128];
  int n = snprintf(got, sizeof got, "%s[", ol_dtype_name(dtype));
  for (int d = 0; d < rank && n > 0 && (size_t)n < sizeof got; d++)
    n += snprintf(got + n, sizeof got - (size_t)n, d ? ",%lld" : "%lld", (long long)dims[d]);
  if (n > 0 && (size_t)n < sizeof got - 1) snprintf(got + n, sizeof got - (size_t)n, "]");
  return check_shape(w, t, dtype, rank, dims, got, "encoded value: logical type: ");
}

static ol_status walk_value(vwalk *w, const Onnx__TypeProto *tp, const ol_value *v, int depth);

static const char *layout_label(const Onnx__StructTypeProto *st) {
  if (st->name && st->name[0]) return st->name;
  switch (st->kind_case) {
    case ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY: return "(an array layout)";
    case ONNX__STRUCT_TYPE_PROTO__KIND_BIT_PACKING: return "(a bit_packing layout)";
    default: return "(a structure layout)";
  }
}

/* An encoded value under a struct_type declaration: its storage type (inline
 * or a type_ref into the same model) must be the declared layout, byte for
 * byte once both references are resolved (type_id ignored). The payload is
 * never decoded. */
static ol_status check_encoded_layout(const vwalk *w, const Onnx__StructTypeProto *declared, const ol_value *v) {
  const Onnx__EncodedValueProto *e = v->encoded;
  if (!e) return fail(w, OL_INVALID_ARGUMENT, "encoded value without a payload");
  if (e->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE)
    return fail(w, OL_INVALID_ARGUMENT,
                "an encoded value without a struct_type layout describes a tensor; the declaration expects "
                "storage type %s",
                layout_label(declared));
  if (w->persistent && ol_quant_payload_unloaded(e)) return fail_unloaded(w);
  const Onnx__StructTypeProto *storage = NULL;
  if (ol_type_catalogue_resolve(w->types, e->struct_type, &storage) != OL_OK) {
    char why[256];
    snprintf(why, sizeof why, "%s", ol_last_error());
    return fail(w, OL_INVALID_ARGUMENT, "encoded value: %s", why);
  }
  size_t a_size = 0, b_size = 0;
  uint8_t *a = ol_qw_pack_without_id(storage, &a_size), *b = ol_qw_pack_without_id(declared, &b_size);
  bool same = a && b && a_size == b_size && memcmp(a, b, a_size) == 0;
  bool oom = !a || !b;
  free(a), free(b);
  if (oom) return OL_OUT_OF_MEMORY;
  if (!same)
    return fail(w, OL_INVALID_ARGUMENT, "encoded value: storage type %s differs from the declared layout %s",
                layout_label(storage), layout_label(declared));
  return e->logical_type ? check_encoded(w, NULL, v) : OL_OK;
}

/* Persistent values under an unconstrained declaration still reject their
 * unsupported leaves. */
static ol_status walk_unconstrained(vwalk *w, const ol_value *v, int depth) {
  if (!w->persistent) return OL_OK;
  if (v->kind == OL_VALUE_ENCODED) return check_encoded(w, NULL, v);
  if (v->kind != OL_VALUE_SEQUENCE && v->kind != OL_VALUE_STRUCT) return OL_OK;
  for (size_t i = 0; i < v->count; i++) {
    size_t len = v->kind == OL_VALUE_STRUCT ? push_field(w, v->field_names[i]) : push_element(w, i);
    ol_status s = walk_value(w, NULL, v->items[i], depth + 1);
    if (s != OL_OK) return s;
    w->path[len] = '\0';
  }
  return OL_OK;
}

/* A page under a declared key/value type: an encoded page is checked
 * through its logical type; a dense FLOAT16 or BFLOAT16 page is a physical
 * form of a FLOAT declaration (its dims are still checked). */
static ol_status walk_page(vwalk *w, const Onnx__TypeProto *tp, const ol_value *v, int depth) {
  if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || v->kind != OL_VALUE_TENSOR)
    return walk_value(w, tp, v, depth);
  const Onnx__TypeProto__Tensor *t = tp->tensor_type;
  ol_dtype dtype = v->tensor.dtype;
  bool physical = (dtype == OL_DTYPE_FLOAT16 || dtype == OL_DTYPE_BFLOAT16) &&
                  (!t->has_elem_type || !t->elem_type || t->elem_type == OL_DTYPE_FLOAT);
  if (physical) dtype = OL_DTYPE_FLOAT;
  if (shape_matches(t, dtype, v->tensor.rank, v->tensor.dims)) return OL_OK;
  char got[256];
  ol_tensor_describe(&v->tensor, got, sizeof got);
  return check_shape(w, t, dtype, v->tensor.rank, v->tensor.dims, got, "");
}

/* Block i of v is block i of prev (a cache that passed the same declaration
 * and is still held, so the block is the same immutable value): a cache a
 * kernel publishes keeps its past blocks in place and appends, so each step
 * checks only the new blocks. */
static bool accepted_block(const ol_value *prev, const ol_value *v, size_t i) {
  return prev && i < ol_paged_cache_block_count(prev) && ol_paged_cache_block(prev, i) == ol_paged_cache_block(v, i);
}

static bool cache_structure(const ol_value *v, const ol_value *prev) {
  if (!ol_paged_cache_outline_is(v)) return false;
  for (size_t i = 0; i < ol_paged_cache_block_count(v); i++)
    if (!accepted_block(prev, v, i) && !ol_paged_cache_block_is(ol_paged_cache_block(v, i))) return false;
  return true;
}

/* A value under a paged cache declaration: the cache structure, then (named
 * declarations) every block's fields against the declared ones. Page
 * ranges and payload extents are the cache's own rules (quant/paged.h),
 * checked where caches are retained and by the kernels. Under a next value
 * (vwalk.accepted) the blocks it shares with the value it replaces are
 * skipped. */
static ol_status walk_cache(vwalk *w, const ol_cache_decl *decl, const ol_value *v, int depth) {
  /* the top-level value's previously accepted one, when it is a cache too */
  const ol_value *prev = depth == 0 && w->accepted && ol_paged_cache_outline_is(w->accepted) ? w->accepted : NULL;
  if (!cache_structure(v, prev))
    return fail(w, OL_INVALID_ARGUMENT,
                "expected a paged cache (a struct whose one field 'blocks' is a sequence of blocks with exactly "
                "start, length, key and value), got a %s",
                kind_name(v->kind));
  if (!decl->named) return OL_OK;
  const Onnx__TypeProto *types[4] = {decl->start, decl->length, decl->key, decl->value};
  static const char *const names[4] = {"start", "length", "key", "value"};
  size_t at = push_field(w, "blocks");
  for (size_t i = 0; i < ol_paged_cache_block_count(v); i++) {
    if (accepted_block(prev, v, i)) continue;
    const ol_value *block = ol_paged_cache_block(v, i);
    size_t len = push_element(w, i);
    for (int f = 0; f < 4; f++) {
      size_t flen = push_field(w, names[f]);
      const ol_value *item = ol_struct_field(block, names[f]);
      OL_TRY(f < 2 ? walk_value(w, types[f], item, depth + 3) : walk_page(w, types[f], item, depth + 3));
      w->path[flen] = '\0';
    }
    w->path[len] = '\0';
  }
  w->path[at] = '\0';
  return OL_OK;
}

static ol_status walk_struct(vwalk *w, const Onnx__StructTypeProto *declared, const ol_value *v, int depth) {
  const Onnx__StructTypeProto *st = NULL;
  if (ol_type_catalogue_resolve(w->types, declared, &st) != OL_OK) {
    char why[256];
    snprintf(why, sizeof why, "%s", ol_last_error());
    return fail(w, OL_INVALID_MODEL, "%s", why);
  }
  bool layoutless = !st || st->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND__NOT_SET;
  ol_cache_decl cache;
  bool is_cache = ol_struct_type_paged_cache(w->types, st, &cache); /* always for layout-less */
  /* layout-less: a paged cache when persistent, any struct in a session's feeds */
  if (is_cache && (!layoutless || w->persistent)) return walk_cache(w, &cache, v, depth);
  if (layoutless) {
    if (v->kind != OL_VALUE_STRUCT && v->kind != OL_VALUE_ENCODED)
      return fail(w, OL_INVALID_ARGUMENT, "expected a struct, got a %s", kind_name(v->kind));
    return OL_OK;
  }
  if (v->kind == OL_VALUE_ENCODED) return check_encoded_layout(w, st, v);
  if (st->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE)
    return fail(w, OL_INVALID_ARGUMENT, "expected an encoded value with storage type %s, got a %s",
                layout_label(st), kind_name(v->kind));
  if (v->kind != OL_VALUE_STRUCT) return fail(w, OL_INVALID_ARGUMENT, "expected a struct, got a %s", kind_name(v->kind));
  const Onnx__StructTypeProto__Structure *S = st->structure;
  size_t n = 0; /* runtime fields: constant fields are not part of the value */
  for (size_t f = 0; S && f < S->n_field; f++)
    if (S->field[f]->content_case != ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT) n++;
  if (v->count != n)
    return fail(w, OL_INVALID_ARGUMENT, "expected a struct of %zu runtime fields, got %zu fields", n, v->count);
  size_t i = 0;
  for (size_t f = 0; S && f < S->n_field; f++) {
    const Onnx__StructTypeProto__Structure__Field *fd = S->field[f];
    if (fd->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT) continue;
    const char *want = fd->name ? fd->name : "";
    if (strcmp(v->field_names[i], want) != 0)
      return fail(w, OL_INVALID_ARGUMENT, "struct field %zu is '%s', expected '%s' (declaration order)", i,
                  v->field_names[i], want);
    size_t len = push_field(w, want);
    ol_status s = walk_value(
        w, fd->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE ? fd->type : NULL,
        v->items[i], depth + 1);
    if (s != OL_OK) return s;
    w->path[len] = '\0';
    i++;
  }
  return OL_OK;
}

static ol_status walk_value(vwalk *w, const Onnx__TypeProto *tp, const ol_value *v, int depth) {
  if (depth > OL_TYPE_REF_MAX_DEPTH)
    return fail(w, OL_INVALID_MODEL, "types nest deeper than %d levels", OL_TYPE_REF_MAX_DEPTH);
  if (!v) return fail(w, OL_INVALID_ARGUMENT, "value is NULL");
  if (w->persistent) {
    if (v->kind == OL_VALUE_MAP || v->kind == OL_VALUE_OPTIONAL)
      return fail(w, OL_INVALID_ARGUMENT, "%s values cannot be persistent", kind_name(v->kind));
    if (v->kind == OL_VALUE_TENSOR && v->tensor.dtype == OL_DTYPE_STRING)
      return fail(w, OL_INVALID_ARGUMENT, "string tensors cannot be persistent");
  }
  if (!tp) return walk_unconstrained(w, v, depth);
  switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
      if (v->kind == OL_VALUE_ENCODED) return check_encoded(w, tp->tensor_type, v);
      if (v->kind != OL_VALUE_TENSOR)
        return fail(w, OL_INVALID_ARGUMENT, "expected a tensor value, got a %s", kind_name(v->kind));
      if (shape_matches(tp->tensor_type, v->tensor.dtype, v->tensor.rank, v->tensor.dims)) return OL_OK;
      char got[256];
      ol_tensor_describe(&v->tensor, got, sizeof got);
      return check_shape(w, tp->tensor_type, v->tensor.dtype, v->tensor.rank, v->tensor.dims, got, "");
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
      if (v->kind != OL_VALUE_SEQUENCE)
        return fail(w, OL_INVALID_ARGUMENT, "expected a sequence value, got a %s", kind_name(v->kind));
      const Onnx__TypeProto *elem = tp->sequence_type->elem_type;
      if (elem && elem->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && elem->tensor_type->has_elem_type &&
          elem->tensor_type->elem_type && v->element_dtype != OL_DTYPE_UNDEFINED &&
          v->element_dtype != (ol_dtype)elem->tensor_type->elem_type)
        return fail(w, OL_INVALID_ARGUMENT, "expected a sequence of %s tensors, got a sequence of %s",
                    ol_dtype_name((ol_dtype)elem->tensor_type->elem_type), ol_dtype_name(v->element_dtype));
      for (size_t i = 0; i < v->count; i++) {
        size_t len = push_element(w, i);
        ol_status s = walk_value(w, elem, v->items[i], depth + 1);
        if (s != OL_OK) return s;
        w->path[len] = '\0';
      }
      return OL_OK;
    }
    case ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE:
      return walk_struct(w, tp->struct_type, v, depth);
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
      bool map = tp->value_case == ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
      if (w->persistent) return fail(w, OL_INVALID_MODEL, "%s values cannot be persistent", map ? "map" : "optional");
      ol_value_kind want = map ? OL_VALUE_MAP : OL_VALUE_OPTIONAL;
      if (v->kind != want)
        return fail(w, OL_INVALID_ARGUMENT, "expected a %s value, got a %s", kind_name(want), kind_name(v->kind));
      return OL_OK;
    }
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
    case ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE:
      if (w->persistent)
        return fail(w, OL_INVALID_MODEL, "%s values cannot be persistent",
                    tp->value_case == ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE ? "opaque" : "sparse tensor");
      /* fallthrough */
    default:
      /* no type: ordinary feeds keep the tensor kind, persistent values are walked */
      if (!w->persistent && v->kind != OL_VALUE_TENSOR)
        return fail(w, OL_INVALID_ARGUMENT, "expected a tensor value, got a %s", kind_name(v->kind));
      return walk_unconstrained(w, v, depth);
  }
}

static ol_status check_decl(const ol_type_catalogue *types, const ol_graph_value *decl, const ol_value *v,
                            const ol_value *accepted, bool persistent, const char *label);

ol_status ol_check_value_decl(const ol_type_catalogue *types, const ol_graph_value *decl, const ol_value *v,
                              bool persistent, const char *label) {
  return check_decl(types, decl, v, NULL, persistent, label);
}

ol_status ol_check_next_value_decl(const ol_type_catalogue *types, const ol_graph_value *decl, const ol_value *v,
                                   const ol_value *accepted, const char *label) {
  return check_decl(types, decl, v, accepted, true, label);
}

static ol_status check_decl(const ol_type_catalogue *types, const ol_graph_value *decl, const ol_value *v,
                            const ol_value *accepted, bool persistent, const char *label) {
  const ol_type_info *t = &decl->type;
  /* the common case without setting up a walk: a tensor matching its declared tensor type */
  const Onnx__TypeProto *tp = decl->has_type ? t->proto : NULL;
  if (v && v->kind == OL_VALUE_TENSOR && tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
      tp->tensor_type && !(persistent && v->tensor.dtype == OL_DTYPE_STRING) &&
      shape_matches(tp->tensor_type, v->tensor.dtype, v->tensor.rank, v->tensor.dims))
    return OL_OK;
  vwalk w = {types, persistent, label ? label : "input", decl->name ? decl->name : "", {0}, accepted};
  if (!decl->has_type) return walk_value(&w, NULL, v, 0);
  if (t->proto) return walk_value(&w, t->proto, v, 0);
  /* a declaration without its TypeProto: kind, element type, rank and fixed dims */
  if (!v) return fail(&w, OL_INVALID_ARGUMENT, "value is NULL");
  if (v->kind != t->kind) return fail(&w, OL_INVALID_ARGUMENT, "expected a %s value", kind_name(t->kind));
  OL_TRY(walk_unconstrained(&w, v, 0));
  if (v->kind != OL_VALUE_TENSOR) return OL_OK;
  if (persistent && v->tensor.dtype == OL_DTYPE_STRING)
    return fail(&w, OL_INVALID_ARGUMENT, "string tensors cannot be persistent");
  bool ok = !(t->dtype && v->tensor.dtype != t->dtype) && !(t->rank >= 0 && v->tensor.rank != t->rank);
  for (int d = 0; ok && t->rank >= 0 && d < t->rank; d++) ok = !(t->dims[d] >= 0 && v->tensor.dims[d] != t->dims[d]);
  if (ok) return OL_OK;
  char got[256];
  ol_tensor_describe(&v->tensor, got, sizeof got);
  if (t->dtype && v->tensor.dtype != t->dtype)
    return fail(&w, OL_INVALID_ARGUMENT, "expected element type %s, got %s", ol_dtype_name(t->dtype), got);
  if (t->rank >= 0 && v->tensor.rank != t->rank)
    return fail(&w, OL_INVALID_ARGUMENT, "expected rank %d, got %s", t->rank, got);
  for (int d = 0; t->rank >= 0 && d < t->rank; d++)
    if (t->dims[d] >= 0 && v->tensor.dims[d] != t->dims[d])
      return fail(&w, OL_INVALID_ARGUMENT, "dimension %d must be %lld, got %s", d, (long long)t->dims[d], got);
  return OL_OK;
}

/* A feed must match the declared kind, element type, rank and fixed dims,
 * recursively through struct fields and sequence elements. */
ol_status ol_check_value_type(const ol_graph_value *decl, const ol_value *v) {
  return ol_check_value_decl(NULL, decl, v, false, "input");
}

ol_status ol_session_run(ol_session *s, const char *const *input_names, ol_value *const *inputs,
                         size_t n_inputs, const char *const *output_names, ol_value **outputs,
                         size_t n_outputs, ol_completion *completion) {
  return ol_session_run_with(s, NULL, input_names, inputs, n_inputs, output_names, outputs, n_outputs,
                             completion);
}

ol_status ol_session_match_feeds(const ol_session *s, const char *const *names, ol_value *const *inputs,
                                 size_t n_inputs, const bool *bound, ol_value **feeds) {
  const ol_graph *g = s->model->graph;
  for (size_t k = 0; k < g->num_inputs; k++) feeds[k] = NULL;
  if (n_inputs && (!names || !inputs)) return ol_error(OL_INVALID_ARGUMENT, "feed names or values are NULL");
  for (size_t i = 0; i < n_inputs; i++) {
    if (!names[i] || !inputs[i]) return ol_error(OL_INVALID_ARGUMENT, "feed %zu has no name or no value", i);
    size_t k = 0;
    while (k < g->num_inputs && strcmp(g->inputs[k].name, names[i]) != 0) k++;
    if (k == g->num_inputs) return ol_error(OL_INVALID_ARGUMENT, "unknown input name '%s'", names[i]);
    if (bound && bound[k])
      return ol_error(OL_INVALID_ARGUMENT, "input '%s' is retained by the persistent state; current feeds cannot override it",
                      names[i]);
    if (feeds[k]) return ol_error(OL_INVALID_ARGUMENT, "input '%s' is fed twice", names[i]);
    OL_TRY(ol_check_value_decl(s->model->types, &g->inputs[k], inputs[i], false, "input"));
    feeds[k] = inputs[i];
  }
  for (size_t k = 0; k < g->num_inputs; k++)
    if (!feeds[k] && !(bound && bound[k]) && !ol_graph_find_initializer(g, g->inputs[k].name))
      return ol_error(OL_INVALID_ARGUMENT, "missing input '%s'", g->inputs[k].name);
  return OL_OK;
}

ol_status ol_session_match_outputs(const ol_session *s, const char *const *names, size_t n, size_t *pick) {
  const ol_graph *g = s->model->graph;
  if (!names && n != g->num_outputs)
    return ol_error(OL_INVALID_ARGUMENT, "the model has %zu outputs, %zu requested", g->num_outputs, n);
  for (size_t i = 0; i < n; i++) {
    if (!names) {
      pick[i] = i;
      continue;
    }
    const char *name = names[i] ? names[i] : "(null)";
    size_t k = 0;
    while (k < g->num_outputs && strcmp(g->outputs[k].name, name) != 0) k++;
    if (k == g->num_outputs) return ol_error(OL_INVALID_ARGUMENT, "unknown output name '%s'", name);
    pick[i] = k;
  }
  return OL_OK;
}

ol_status ol_session_run_with(ol_session *s, ol_context *context, const char *const *input_names,
                              ol_value *const *inputs, size_t n_inputs, const char *const *output_names,
                              ol_value **outputs, size_t n_outputs, ol_completion *completion) {
  if (!s) return ol_error(OL_INVALID_ARGUMENT, "ol_session_run: session is NULL");
  const ol_graph *g = s->model->graph;
  if (n_outputs && !outputs) return ol_error(OL_INVALID_ARGUMENT, "ol_session_run: outputs is NULL");
  for (size_t i = 0; i < n_outputs; i++) outputs[i] = NULL;
  /* small graphs (the common case) need no heap for the per-run tables */
  enum { LOCAL = 32 };
  ol_value *local_feeds[LOCAL] = {0}, *local_all[LOCAL] = {0};
  size_t local_pick[LOCAL] = {0};
  ol_value **feeds = g->num_inputs <= LOCAL ? local_feeds : ol_xcalloc(g->num_inputs, sizeof *feeds);
  ol_value **all = g->num_outputs <= LOCAL ? local_all : ol_xcalloc(g->num_outputs, sizeof *all);
  size_t *pick = n_outputs <= LOCAL ? local_pick : ol_xcalloc(n_outputs, sizeof *pick);
  ol_status st = (!feeds || !all || !pick) ? OL_OUT_OF_MEMORY : OL_OK;
  ol_allocator *allocator = context && context->allocator ? context->allocator : s->allocator;
  ol_payload_pool_scope reuse = ol_payload_pool_enter(s->pool, allocator);
  if (st == OL_OK) st = ol_session_match_feeds(s, input_names, inputs, n_inputs, NULL, feeds);
  if (st == OL_OK) st = ol_session_match_outputs(s, output_names, n_outputs, pick);
  if (st == OL_OK) {
    ol_run_env env = {allocator, completion ? &completion->cancelled : NULL, context, NULL, s->threads,
                      s->grow_outputs, &s->paged};
    st = ol_plan_run(s->plan, NULL, &env, feeds, g->num_inputs, all, g->num_outputs);
    if (st == OL_CANCELLED && completion && completion->reason[0]) ol_error_wrap(st, "%s", completion->reason);
  }
  /* outputs escape as dense tensors (a pitched value is copied), unless the
   * caller takes growing caches as they are */
  for (size_t i = 0; st == OL_OK && i < n_outputs; i++) {
    outputs[i] = ol_value_retain(all[pick[i]]);
    if (!s->grow_outputs || ol_tensor_is_packed(&outputs[i]->tensor)) st = ol_value_densify(s->allocator, &outputs[i]);
  }
  if (st != OL_OK)
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
  return st;
}
