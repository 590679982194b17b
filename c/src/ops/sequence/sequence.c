/* Sequence and optional operators (ai.onnx):
 *   SequenceConstruct 11-23, SequenceEmpty 11-23, SequenceInsert 11-23,
 *   SequenceErase 11-23, SequenceAt 11-23, SequenceLength 11-23,
 *   SplitToSequence 11-23, ConcatFromSequence 11-23, SequenceMap 17-23,
 *   Optional 15-23, OptionalHasElement 15-17 and 18-23,
 *   OptionalGetElement 15-17 and 18-23 (18 also accepts a plain tensor or
 *   sequence, and OptionalHasElement 18 an absent input).
 * Sequences are immutable: Insert/Erase build a new sequence that retains the
 * items (no tensor copies); SequenceAt returns the item itself. Splits along
 * a leading axis are views on the input's buffer. */
#include <stdlib.h>
#include <string.h>

#include "ir/model.h"
#include "ops/sequence/sequence.h"

/* ------------------------------------------------------------ helpers */

static const char *kind_name(const ol_value *v) {
  if (!v) return "absent";
  switch (v->kind) {
    case OL_VALUE_TENSOR: return "a tensor";
    case OL_VALUE_SEQUENCE: return "a sequence";
    case OL_VALUE_MAP: return "a map";
    case OL_VALUE_OPTIONAL: return "an optional";
    case OL_VALUE_ENCODED: return "an encoded value";
    case OL_VALUE_STRUCT: return "a struct";
  }
  return "unknown";
}

static const ol_value *ctx_value(const ol_kernel_ctx *ctx, size_t i) {
  return i < ctx->num_inputs ? ctx->inputs[i] : NULL;
}

/* Input i must be a sequence. */
static ol_status require_sequence(const ol_kernel_ctx *ctx, size_t i, const ol_value **out) {
  const ol_value *v = ctx_value(ctx, i);
  *out = v;
  if (v && v->kind == OL_VALUE_SEQUENCE) return OL_OK;
  return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "input %zu must be a sequence, got %s", i,
                         kind_name(v));
}

/* Reads a position input (int32/int64 tensor with one element). */
static ol_status read_position(const ol_kernel_ctx *ctx, size_t i, int64_t *out) {
  const ol_tensor *t;
  OL_TRY(ol_ctx_require(ctx, i, &t));
  if (t->dtype != OL_DTYPE_INT64 && t->dtype != OL_DTYPE_INT32)
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "position must be int32 or int64, got %s",
                           ol_dtype_name(t->dtype));
  if (ol_tcount(t) != 1 || t->rank > 1)
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "position must be a scalar");
  *out = t->dtype == OL_DTYPE_INT64 ? *(const int64_t *)ol_tdata(t) : *(const int32_t *)ol_tdata(t);
  return OL_OK;
}

/* Normalizes pos against [-count, count - 1 + extra] (extra = 1 for insert). */
static ol_status check_position(const ol_node *node, int64_t pos, size_t count, int extra, size_t *out) {
  int64_t n = (int64_t)count;
  if (pos < -n || pos > n - 1 + extra)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "position %lld is out of range [%lld, %lld] for a sequence of %lld",
                           (long long)pos, (long long)-n, (long long)(n - 1 + extra), (long long)n);
  *out = (size_t)(pos < 0 ? pos + n : pos);
  return OL_OK;
}

/* New sequence from a borrowed item array (items retained). */
static ol_status make_sequence(ol_kernel_ctx *ctx, size_t out_index, ol_dtype dtype, ol_value *const *items,
                               size_t count) {
  ol_value *seq;
  ol_status s = ol_sequence_create(dtype, items, count, &seq);
  if (s != OL_OK) return ol_error_wrap(s, "%s node '%s'", ctx->node->op_type, ctx->node->name);
  return ol_ctx_set_output(ctx, out_index, seq);
}

/* Sequence element dtype, or the first item's when undeclared. */
static ol_dtype sequence_dtype(const ol_value *seq) {
  if (seq->element_dtype) return seq->element_dtype;
  return seq->count && seq->items[0]->kind == OL_VALUE_TENSOR ? seq->items[0]->tensor.dtype : OL_DTYPE_UNDEFINED;
}

/* ------------------------------------------------------------ SequenceConstruct / Empty / Length */

static ol_status construct_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  if (ctx->num_inputs == 0) return ol_kernel_error(k->node, OL_INVALID_MODEL, "needs at least one input");
  ol_dtype dtype = OL_DTYPE_UNDEFINED;
  for (size_t i = 0; i < ctx->num_inputs; i++) {
    const ol_tensor *t;
    OL_TRY(ol_ctx_require(ctx, i, &t));
    if (i == 0) dtype = t->dtype;
    else if (t->dtype != dtype)
      return ol_kernel_error(k->node, OL_INVALID_ARGUMENT, "input %zu is %s, input 0 is %s", i,
                             ol_dtype_name(t->dtype), ol_dtype_name(dtype));
  }
  return make_sequence(ctx, 0, dtype, ctx->inputs, ctx->num_inputs);
}

static ol_status construct_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, construct_compute, out);
}

typedef struct empty_kernel {
  ol_kernel base;
  ol_dtype dtype;
} empty_kernel;

static ol_status empty_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  return make_sequence(ctx, 0, ((empty_kernel *)k)->dtype, NULL, 0);
}

static ol_status empty_create(const ol_node *node, ol_kernel **out) {
  int64_t dtype = ol_attr_int(node, "dtype", OL_DTYPE_FLOAT);
  if (dtype <= 0 || dtype > 0x7fff || !ol_dtype_valid((ol_dtype)dtype))
    return ol_kernel_error(node, OL_INVALID_MODEL, "dtype attribute %lld is not a tensor element type",
                           (long long)dtype);
  OL_TRY(ol_kernel_alloc(node, sizeof(empty_kernel), empty_compute, out));
  ((empty_kernel *)*out)->dtype = (ol_dtype)dtype;
  return OL_OK;
}

static ol_status length_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  (void)k;
  const ol_value *seq;
  OL_TRY(require_sequence(ctx, 0, &seq));
  ol_tensor *t;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_INT64, 0, NULL, &t));
  *(int64_t *)ol_tdata(t) = (int64_t)seq->count;
  return OL_OK;
}

static ol_status length_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, length_compute, out);
}

/* ------------------------------------------------------------ SequenceInsert / Erase / At */

static ol_status insert_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_value *seq;
  const ol_tensor *t;
  OL_TRY(require_sequence(ctx, 0, &seq));
  OL_TRY(ol_ctx_require(ctx, 1, &t));
  ol_dtype dtype = sequence_dtype(seq);
  if (dtype && t->dtype != dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot insert a %s tensor into a sequence of %s",
                           ol_dtype_name(t->dtype), ol_dtype_name(dtype));
  size_t at = seq->count;
  if (ctx_value(ctx, 2)) {
    int64_t pos;
    OL_TRY(read_position(ctx, 2, &pos));
    OL_TRY(check_position(node, pos, seq->count, 1, &at));
  }
  ol_value **items = ol_calloc(ctx->allocator, seq->count + 1, sizeof *items);
  if (!items) return OL_OUT_OF_MEMORY;
  for (size_t i = 0, j = 0; i <= seq->count; i++)
    items[i] = i == at ? ctx->inputs[1] : seq->items[j++];
  ol_status s = make_sequence(ctx, 0, t->dtype, items, seq->count + 1);
  ol_dealloc(ctx->allocator, items);
  return s;
}

static ol_status insert_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, insert_compute, out);
}

static ol_status erase_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_value *seq;
  OL_TRY(require_sequence(ctx, 0, &seq));
  int64_t pos = -1;
  if (ctx_value(ctx, 1)) OL_TRY(read_position(ctx, 1, &pos));
  size_t at = 0;
  OL_TRY(check_position(node, pos, seq->count, 0, &at));
  ol_value **items = ol_calloc(ctx->allocator, seq->count, sizeof *items);
  if (!items) return OL_OUT_OF_MEMORY;
  for (size_t i = 0, j = 0; i < seq->count; i++)
    if (i != at) items[j++] = seq->items[i];
  ol_status s = make_sequence(ctx, 0, seq->element_dtype, items, seq->count - 1);
  ol_dealloc(ctx->allocator, items);
  return s;
}

static ol_status erase_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, erase_compute, out);
}

static ol_status at_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_value *seq;
  OL_TRY(require_sequence(ctx, 0, &seq));
  int64_t pos;
  OL_TRY(read_position(ctx, 1, &pos));
  size_t at = 0;
  OL_TRY(check_position(k->node, pos, seq->count, 0, &at));
  return ol_ctx_set_output(ctx, 0, ol_value_retain(seq->items[at]));
}

static ol_status at_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, at_compute, out);
}

/* ------------------------------------------------------------ SplitToSequence */

typedef struct split_kernel {
  ol_kernel base;
  int64_t axis;
  bool keepdims;
} split_kernel;

/* Part [start, start+len) of src along axis; drop removes the axis (len 1).
 * A view when the part is contiguous in src (nothing but 1s before axis). */
static ol_status split_part(ol_allocator *alloc, const ol_tensor *src, int axis, int64_t start, int64_t len,
                            bool drop, ol_value **out) {
  int64_t dims[OL_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < src->rank; d++) {
    if (d != axis) dims[rank++] = src->dims[d];
    else if (!drop) dims[rank++] = len;
  }
  int64_t outer = ol_shape_count(axis, src->dims);
  int64_t inner = ol_shape_count(src->rank - axis - 1, src->dims + axis + 1);
  int64_t dim = src->dims[axis];
  size_t es = ol_dtype_size(src->dtype);
  if (outer == 1 && es && src->dtype != OL_DTYPE_STRING && src->buffer)
    return ol_value_new_view(src->buffer, src->offset + (size_t)(start * inner) * es, src->dtype, rank, dims, out);
  OL_TRY(ol_value_new_tensor(alloc, src->dtype, rank, dims, out));
  for (int64_t o = 0; o < outer; o++) {
    ol_status s = ol_elements_copy(src->dtype, ol_tdata(&(*out)->tensor), o * len * inner, ol_tdata(src),
                                   (o * dim + start) * inner, len * inner);
    if (s != OL_OK) {
      ol_value_release(*out);
      *out = NULL;
      return s;
    }
  }
  return OL_OK;
}

static ol_status split_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const split_kernel *sk = (const split_kernel *)k;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot split a scalar");
  int axis;
  OL_TRY(ol_normalize_axis(node, sk->axis, x->rank, &axis));
  int64_t dim = x->dims[axis];
  const ol_tensor *split = NULL;
  if (ctx_value(ctx, 1)) OL_TRY(ol_ctx_require(ctx, 1, &split));
  bool drop = false;
  int64_t *lengths = NULL;
  size_t n = 0;
  if (!split) {
    /* pieces of length 1; keepdims=0 removes the split axis */
    drop = !sk->keepdims;
    n = (size_t)dim;
    lengths = ol_calloc(ctx->allocator, n, sizeof *lengths);
    if (!lengths) return OL_OUT_OF_MEMORY;
    for (size_t i = 0; i < n; i++) lengths[i] = 1;
  } else {
    if (split->dtype != OL_DTYPE_INT64 && split->dtype != OL_DTYPE_INT32)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "split must be int32 or int64, got %s",
                             ol_dtype_name(split->dtype));
    if (split->rank > 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "split must be a scalar or 1-D");
    int64_t count = ol_tcount(split);
    int64_t *values = ol_calloc(ctx->allocator, (size_t)count, sizeof *values);
    if (!values) return OL_OUT_OF_MEMORY;
    size_t got;
    ol_status s = ol_tensor_to_int64s(split, values, (size_t)count, &got);
    if (s != OL_OK) {
      ol_dealloc(ctx->allocator, values);
      return ol_error_wrap(s, "%s node '%s': split", node->op_type, node->name);
    }
    if (split->rank == 0) {
      int64_t chunk = values[0];
      ol_dealloc(ctx->allocator, values);
      if (chunk <= 0)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "split %lld must be positive", (long long)chunk);
      n = (size_t)(dim / chunk + (dim % chunk != 0));
      lengths = ol_calloc(ctx->allocator, n, sizeof *lengths);
      if (!lengths) return OL_OUT_OF_MEMORY;
      for (size_t i = 0; i < n; i++) {
        int64_t left = dim - (int64_t)i * chunk;
        lengths[i] = left < chunk ? left : chunk;
      }
    } else {
      int64_t sum = 0;
      for (int64_t i = 0; i < count; i++) {
        if (values[i] < 0 || values[i] > dim - sum) {
          ol_dealloc(ctx->allocator, values);
          return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                                 "split lengths must be >= 0 and sum to the axis dimension %lld", (long long)dim);
        }
        sum += values[i];
      }
      if (sum != dim) {
        ol_dealloc(ctx->allocator, values);
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "split lengths sum to %lld, the axis dimension is %lld",
                               (long long)sum, (long long)dim);
      }
      lengths = values;
      n = (size_t)count;
    }
  }
  ol_value **items = ol_calloc(ctx->allocator, n, sizeof *items);
  ol_status s = items ? OL_OK : OL_OUT_OF_MEMORY;
  int64_t start = 0;
  for (size_t i = 0; s == OL_OK && i < n; i++) {
    s = split_part(ctx->allocator, x, axis, start, lengths[i], drop, &items[i]);
    start += lengths[i];
  }
  if (s == OL_OK) s = make_sequence(ctx, 0, x->dtype, items, n);
  for (size_t i = 0; items && i < n; i++) ol_value_release(items[i]);
  ol_dealloc(ctx->allocator, items);
  ol_dealloc(ctx->allocator, lengths);
  return s;
}

static ol_status split_create(const ol_node *node, ol_kernel **out) {
  OL_TRY(ol_kernel_alloc(node, sizeof(split_kernel), split_compute, out));
  split_kernel *sk = (split_kernel *)*out;
  sk->axis = ol_attr_int(node, "axis", 0);
  sk->keepdims = ol_attr_int(node, "keepdims", 1) != 0;
  return OL_OK;
}

/* ------------------------------------------------------------ ConcatFromSequence */

typedef struct concat_kernel {
  ol_kernel base;
  int64_t axis;
  bool new_axis;
} concat_kernel;

static ol_status concat_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const concat_kernel *ck = (const concat_kernel *)k;
  const ol_value *seq;
  OL_TRY(require_sequence(ctx, 0, &seq));
  if (seq->count == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "the input sequence is empty");
  const ol_tensor *first = &seq->items[0]->tensor;
  int rank = first->rank;
  int axis;
  if (ck->new_axis) {
    if (rank + 1 > OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "result rank exceeds %d", OL_MAX_RANK);
    OL_TRY(ol_normalize_axis(node, ck->axis, rank + 1, &axis));
  } else {
    if (rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot concatenate scalars without new_axis");
    OL_TRY(ol_normalize_axis(node, ck->axis, rank, &axis));
  }
  /* Every item seen as a tensor of rank r (new_axis: a 1 inserted at axis). */
  int r = ck->new_axis ? rank + 1 : rank;
  int64_t out_dims[OL_MAX_RANK];
  for (int d = 0, s = 0; d < r; d++) out_dims[d] = ck->new_axis && d == axis ? 0 : first->dims[s++];
  int64_t total = 0;
  for (size_t i = 0; i < seq->count; i++) {
    const ol_value *v = seq->items[i];
    char a[128], b[128];
    if (v->kind != OL_VALUE_TENSOR || v->tensor.dtype != first->dtype || v->tensor.rank != rank)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "item %zu does not match item 0 (%s)", i,
                             ol_tensor_describe(first, b, sizeof b));
    const ol_tensor *t = &v->tensor;
    for (int d = 0; d < rank; d++) {
      int od = ck->new_axis && d >= axis ? d + 1 : d;
      if (od != axis && t->dims[d] != first->dims[d])
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "item %zu is %s, item 0 is %s", i,
                               ol_tensor_describe(t, a, sizeof a), ol_tensor_describe(first, b, sizeof b));
    }
    total += ck->new_axis ? 1 : t->dims[axis];
  }
  out_dims[axis] = total;
  ol_tensor *out;
  OL_TRY(ol_ctx_output(ctx, 0, first->dtype, r, out_dims, &out));
  int64_t outer = ol_shape_count(axis, out_dims);
  int64_t inner = ol_shape_count(r - axis - 1, out_dims + axis + 1);
  int64_t offset = 0;
  for (size_t i = 0; i < seq->count; i++) {
    const ol_tensor *t = &seq->items[i]->tensor;
    int64_t len = ck->new_axis ? 1 : t->dims[axis];
    for (int64_t o = 0; o < outer; o++)
      OL_TRY(ol_elements_copy(t->dtype, ol_tdata(out), (o * total + offset) * inner, ol_tdata(t), o * len * inner,
                              len * inner));
    offset += len;
  }
  return OL_OK;
}

static ol_status concat_create(const ol_node *node, ol_kernel **out) {
  if (!ol_node_attr(node, "axis"))
    return ol_kernel_error(node, OL_INVALID_MODEL, "ConcatFromSequence needs the axis attribute");
  OL_TRY(ol_kernel_alloc(node, sizeof(concat_kernel), concat_compute, out));
  concat_kernel *ck = (concat_kernel *)*out;
  ck->axis = ol_attr_int(node, "axis", 0);
  ck->new_axis = ol_attr_int(node, "new_axis", 0) != 0;
  return OL_OK;
}

/* ------------------------------------------------------------ SequenceMap */

static ol_status map_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_graph *body = ol_attr_graph(node, "body");
  if (!ctx->run_subgraph)
    return ol_kernel_error(node, OL_FAILED_PRECONDITION, "no runtime to run the body graph");
  const ol_value *seq;
  OL_TRY(require_sequence(ctx, 0, &seq));
  size_t n_in = ctx->num_inputs, n_out = ctx->num_outputs, len = seq->count;
  if (body->num_inputs != n_in || body->num_outputs != n_out)
    return ol_kernel_error(node, OL_INVALID_MODEL, "body takes %zu inputs and gives %zu outputs; the node has %zu and %zu",
                           body->num_inputs, body->num_outputs, n_in, n_out);
  for (size_t j = 1; j < n_in; j++) {
    const ol_value *v = ctx_value(ctx, j);
    if (!v || (v->kind != OL_VALUE_SEQUENCE && v->kind != OL_VALUE_TENSOR))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input %zu must be a tensor or a sequence, got %s", j,
                             kind_name(v));
    if (v->kind == OL_VALUE_SEQUENCE && v->count != len)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence input %zu has %zu items, input 0 has %zu", j,
                             v->count, len);
  }
  ol_value **in = ol_calloc(ctx->allocator, n_in, sizeof *in);
  ol_value **results = ol_calloc(ctx->allocator, n_out * len + 1, sizeof *results);
  ol_status s = in && results ? OL_OK : OL_OUT_OF_MEMORY;
  for (size_t i = 0; s == OL_OK && i < len; i++) {
    if (ctx->cancelled && *ctx->cancelled) {
      s = ol_kernel_error(node, OL_CANCELLED, "cancelled between iterations");
      break;
    }
    for (size_t j = 0; j < n_in; j++) {
      ol_value *v = ctx->inputs[j];
      in[j] = v->kind == OL_VALUE_SEQUENCE ? v->items[i] : v;
    }
    ol_value **row = results + i * n_out;
    s = ctx->run_subgraph(ctx->runtime, body, in, n_in, row, n_out);
    for (size_t m = 0; s == OL_OK && m < n_out; m++)
      if (!row[m] || row[m]->kind != OL_VALUE_TENSOR)
        s = ol_kernel_error(node, OL_INVALID_MODEL, "body output %zu is not a tensor", m);
  }
  ol_value **column = s == OL_OK ? ol_calloc(ctx->allocator, len + 1, sizeof *column) : NULL;
  if (s == OL_OK && !column) s = OL_OUT_OF_MEMORY;
  for (size_t m = 0; s == OL_OK && m < n_out; m++) {
    for (size_t i = 0; i < len; i++) column[i] = results[i * n_out + m];
    ol_dtype dtype = len ? column[0]->tensor.dtype : body->outputs[m].type.dtype;
    s = make_sequence(ctx, m, dtype, column, len);
  }
  for (size_t i = 0; results && i < n_out * len; i++) ol_value_release(results[i]);
  ol_dealloc(ctx->allocator, column);
  ol_dealloc(ctx->allocator, results);
  ol_dealloc(ctx->allocator, in);
  return s;
}

static ol_status map_create(const ol_node *node, ol_kernel **out) {
  if (!ol_attr_graph(node, "body")) return ol_kernel_error(node, OL_INVALID_MODEL, "SequenceMap needs a body graph");
  return ol_kernel_simple(node, map_compute, out);
}

/* ------------------------------------------------------------ Optional */

typedef struct optional_kernel {
  ol_kernel base;
  bool has_type;
  ol_type_info type; /* from the type attribute */
} optional_kernel;

static ol_status optional_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const optional_kernel *ok = (const optional_kernel *)k;
  ol_value *input = ctx->num_inputs ? ctx->inputs[0] : NULL;
  if (!input && !ok->has_type)
    return ol_kernel_error(k->node, OL_INVALID_MODEL, "an Optional without input needs the type attribute");
  if (input && input->kind != OL_VALUE_TENSOR && input->kind != OL_VALUE_SEQUENCE)
    return ol_kernel_error(k->node, OL_INVALID_ARGUMENT, "input must be a tensor or a sequence, got %s",
                           kind_name(input));
  ol_value *opt;
  ol_status s = ol_optional_create(input, &opt);
  if (s != OL_OK) return s;
  if (input && input->kind == OL_VALUE_SEQUENCE) opt->element_dtype = input->element_dtype;
  if (!input) opt->element_dtype = ok->type.dtype;
  return ol_ctx_set_output(ctx, 0, opt);
}

static ol_status optional_create(const ol_node *node, ol_kernel **out) {
  const ol_attr *type = ol_node_attr(node, "type");
  const Onnx__TypeProto *tp = NULL;
  if (type) {
    const Onnx__AttributeProto *ap = type->proto;
    tp = type->type == OL_ATTR_TYPE_PROTO && ap ? ap->tp : NULL;
    if (!tp) return ol_kernel_error(node, OL_INVALID_MODEL, "the type attribute must be a TypeProto");
    if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE && tp->value_case != ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE)
      return ol_kernel_error(node, OL_INVALID_MODEL, "the type attribute must name a tensor or sequence type");
  }
  OL_TRY(ol_kernel_alloc(node, sizeof(optional_kernel), optional_compute, out));
  optional_kernel *ok = (optional_kernel *)*out;
  ok->has_type = tp != NULL;
  if (tp) ol_type_info_from_proto(tp, &ok->type);
  return OL_OK;
}

/* ------------------------------------------------------------ OptionalHasElement / GetElement */

/* Opset 18 widened both ops to plain tensors and sequences. Earlier opsets
 * also take them as a present element: a Loop hands a carried optional(seq)
 * back to its body as the plain sequence the body produced
 * (test_loop16_seq_none). Only opset 18+ accepts an absent input. */
static ol_status has_element_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_value *v = ctx_value(ctx, 0);
  bool has;
  if (v && v->kind == OL_VALUE_OPTIONAL) has = v->contained != NULL;
  else if (v && (v->kind == OL_VALUE_TENSOR || v->kind == OL_VALUE_SEQUENCE)) has = true;
  else if (!v && node->opset >= 18) has = false;
  else
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be an optional, a tensor or a sequence, got %s",
                           kind_name(v));
  ol_tensor *t;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_BOOL, 0, NULL, &t));
  *(uint8_t *)ol_tdata(t) = has;
  return OL_OK;
}

static ol_status has_element_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, has_element_compute, out);
}

static ol_status get_element_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_value *v = ctx_value(ctx, 0);
  if (v && v->kind == OL_VALUE_OPTIONAL) {
    if (!v->contained) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "the optional input is empty");
    return ol_ctx_set_output(ctx, 0, ol_value_retain(v->contained));
  }
  if (v && (v->kind == OL_VALUE_TENSOR || v->kind == OL_VALUE_SEQUENCE))
    return ol_ctx_set_output(ctx, 0, ol_value_retain((ol_value *)v));
  return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be an optional, a tensor or a sequence, got %s",
                         kind_name(v));
}

static ol_status get_element_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, get_element_compute, out);
}

#define SEQ_TYPES "all tensor types"

const ol_op_schema ol_schema_sequence[] = {
    {"", "SequenceConstruct", 11, OL_OPSET_LATEST, construct_create, NULL, SEQ_TYPES, .structured_inputs = ~0u},
    {"", "SequenceEmpty", 11, OL_OPSET_LATEST, empty_create, NULL, SEQ_TYPES},
    {"", "SequenceInsert", 11, OL_OPSET_LATEST, insert_create, NULL, SEQ_TYPES, .structured_inputs = 1u << 1},
    {"", "SequenceErase", 11, OL_OPSET_LATEST, erase_create, NULL, SEQ_TYPES},
    {"", "SequenceAt", 11, OL_OPSET_LATEST, at_create, NULL, SEQ_TYPES},
    {"", "SequenceLength", 11, OL_OPSET_LATEST, length_create, NULL, SEQ_TYPES},
    {"", "SplitToSequence", 11, OL_OPSET_LATEST, split_create, NULL, SEQ_TYPES},
    {"", "ConcatFromSequence", 11, OL_OPSET_LATEST, concat_create, NULL, SEQ_TYPES},
    {"", "SequenceMap", 17, OL_OPSET_LATEST, map_create, NULL, SEQ_TYPES},
    {"", "Optional", 15, OL_OPSET_LATEST, optional_create, NULL, "optional(tensor) optional(seq(tensor))",
     .structured_inputs = 1},
    {"", "OptionalHasElement", 15, 17, has_element_create, NULL, "optional(tensor) optional(seq(tensor))"},
    {"", "OptionalHasElement", 18, OL_OPSET_LATEST, has_element_create, NULL,
     "optional(tensor) optional(seq(tensor)) tensor seq(tensor)"},
    {"", "OptionalGetElement", 15, 17, get_element_create, NULL, "optional(tensor) optional(seq(tensor))"},
    {"", "OptionalGetElement", 18, OL_OPSET_LATEST, get_element_create, NULL,
     "optional(tensor) optional(seq(tensor)) tensor seq(tensor)"},
    {0},
};
