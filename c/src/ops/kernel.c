/* Helpers shared by all kernels. */
#include "ops/kernel.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ol_status ol_kernel_alloc(const ol_node *node, size_t size, ol_kernel_compute_fn fn,
                          ol_kernel **out) {
  ol_kernel *k = ol_xcalloc(1, size < sizeof *k ? sizeof *k : size);
  if (!k) return OL_OUT_OF_MEMORY;
  k->compute = fn;
  k->node = node;
  *out = k;
  return OL_OK;
}

ol_status ol_kernel_simple(const ol_node *node, ol_kernel_compute_fn fn, ol_kernel **out) {
  return ol_kernel_alloc(node, sizeof(ol_kernel), fn, out);
}

ol_status ol_axis_kernel_create(const ol_node *node, ol_kernel_compute_fn fn, int64_t default_axis,
                                ol_kernel **out) {
  ol_axis_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, fn, (ol_kernel **)&k));
  k->has_axis = ol_node_attr(node, "axis") != NULL;
  k->axis = ol_attr_int(node, "axis", default_axis);
  *out = &k->base;
  return OL_OK;
}

ol_status ol_attr_copy_ints(const ol_node *node, const char *name, int64_t *dst, int64_t cap, int64_t *count,
                            bool positive) {
  const int64_t *v;
  int64_t n = ol_attr_ints(node, name, &v);
  *count = n < 0 ? 0 : n;
  if (n > cap) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute '%s' has too many values", name);
  for (int64_t i = 0; i < *count; i++) {
    if (positive ? v[i] < 1 : v[i] < 0)
      return ol_kernel_error(node, OL_INVALID_MODEL, "attribute '%s' has invalid value %lld", name, (long long)v[i]);
    dst[i] = v[i];
  }
  return OL_OK;
}

ol_status ol_kernel_error(const ol_node *node, ol_status status, const char *fmt, ...) {
  char message[768];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  return ol_error(status, "%s node '%s': %s", node->op_type, node->name, message);
}

ol_status ol_kernel_bad_dtype(const ol_node *node, const char *what, ol_dtype dtype) {
  return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "%s of type %s is not supported (opset %d)",
                         what, ol_dtype_name(dtype), node->opset);
}

const ol_tensor *ol_ctx_input(const ol_kernel_ctx *ctx, size_t i) {
  if (i >= ctx->num_inputs || !ctx->inputs[i] || ctx->inputs[i]->kind != OL_VALUE_TENSOR)
    return NULL;
  return &ctx->inputs[i]->tensor;
}

ol_status ol_ctx_require(const ol_kernel_ctx *ctx, size_t i, const ol_tensor **out) {
  *out = ol_ctx_input(ctx, i);
  if (*out) return OL_OK;
  if (i < ctx->num_inputs && ctx->inputs[i])
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "input %zu must be a tensor", i);
  return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "required input %zu is missing", i);
}

bool ol_ctx_wants_output(const ol_kernel_ctx *ctx, size_t i) {
  return i < ctx->num_outputs && ol_node_has_output(ctx->node, i);
}

ol_status ol_ctx_set_output(ol_kernel_ctx *ctx, size_t i, ol_value *value) {
  if (i >= ctx->num_outputs) {
    ol_value_release(value);
    return ol_kernel_error(ctx->node, OL_INTERNAL, "output %zu out of range", i);
  }
  ol_value_release(ctx->outputs[i]);
  ctx->outputs[i] = value;
  return OL_OK;
}

static ol_status ctx_output(ol_kernel_ctx *ctx, size_t i, ol_dtype dtype, int rank,
                            const int64_t *dims, bool zeroed, ol_tensor **out) {
  ol_value *v;
  ol_status s = zeroed ? ol_value_new_tensor(ctx->allocator, dtype, rank, dims, &v)
                       : ol_value_new_tensor_uninit(ctx->allocator, dtype, rank, dims, &v);
  if (s != OL_OK) return ol_error_wrap(s, "%s node '%s' output %zu", ctx->node->op_type,
                                       ctx->node->name, i);
  OL_TRY(ol_ctx_set_output(ctx, i, v));
  *out = &v->tensor;
  return OL_OK;
}

ol_status ol_ctx_output(ol_kernel_ctx *ctx, size_t i, ol_dtype dtype, int rank,
                        const int64_t *dims, ol_tensor **out) {
  return ctx_output(ctx, i, dtype, rank, dims, true, out);
}

ol_status ol_ctx_output_uninit(ol_kernel_ctx *ctx, size_t i, ol_dtype dtype, int rank,
                               const int64_t *dims, ol_tensor **out) {
  return ctx_output(ctx, i, dtype, rank, dims, false, out);
}

ol_status ol_ctx_output_view(ol_kernel_ctx *ctx, size_t i, const ol_tensor *src, int rank,
                             const int64_t *dims) {
  ol_value *v;
  ol_status s;
  if (src->buffer)
    s = ol_value_new_view(src->buffer, src->offset, src->dtype, rank, dims, &v);
  else
    s = ol_value_new_tensor(ctx->allocator, src->dtype, rank, dims, &v);
  if (s != OL_OK) return ol_error_wrap(s, "%s node '%s'", ctx->node->op_type, ctx->node->name);
  return ol_ctx_set_output(ctx, i, v);
}

ol_status ol_tensor_to_int64s(const ol_tensor *t, int64_t *values, size_t cap, size_t *count) {
  int64_t n = ol_tcount(t);
  if (t->rank > 1) return ol_error(OL_INVALID_ARGUMENT, "expected a 1-D tensor, got rank %d", t->rank);
  if ((size_t)n > cap) return ol_error(OL_INVALID_ARGUMENT, "too many values (%lld > %zu)", (long long)n, cap);
  if (t->dtype == OL_DTYPE_INT64)
    memcpy(values, ol_tdata(t), sizeof(int64_t) * (size_t)n);
  else if (t->dtype == OL_DTYPE_INT32)
    for (int64_t i = 0; i < n; i++) values[i] = ((const int32_t *)ol_tdata(t))[i];
  else
    return ol_error(OL_INVALID_ARGUMENT, "expected an int64 or int32 tensor, got %s",
                    ol_dtype_name(t->dtype));
  *count = (size_t)n;
  return OL_OK;
}

double ol_tensor_get_double(const ol_tensor *t, int64_t i) {
  ol_to_double_fn get = ol_dtype_info(t->dtype)->to_double;
  return get ? get(ol_tdata(t), i) : 0.0;
}

double ol_tensor_scalar_double(const ol_tensor *t, int64_t index) {
  return ol_tensor_get_double(t, index);
}

int64_t ol_tensor_get_int64(const ol_tensor *t, int64_t i) {
  if (t->dtype == OL_DTYPE_INT64) return ((const int64_t *)ol_tdata(t))[i];
  if (t->dtype == OL_DTYPE_UINT64) {
    uint64_t u = ((const uint64_t *)ol_tdata(t))[i];
    return u > INT64_MAX ? INT64_MAX : (int64_t)u;
  }
  return ol_double_to_int64(ol_tensor_get_double(t, i));
}

void ol_tensor_set_double(ol_tensor *t, int64_t i, double v) {
  ol_from_double_fn set = ol_dtype_info(t->dtype)->from_double;
  if (set) set(ol_tdata(t), i, v);
}

ol_status ol_normalize_axis(const ol_node *node, int64_t axis, int rank, int *out) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= (rank ? rank : 1))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is out of range for rank %d",
                           (long long)axis, rank);
  *out = (int)a;
  return OL_OK;
}

ol_status ol_softmax_axis_split(const ol_node *node, int64_t axis, const ol_tensor *x, int64_t *outer,
                                int64_t *n, int64_t *inner) {
  if (node->opset < 13) {
    int64_t a = axis < 0 ? axis + x->rank : axis;
    if (a < 0 || a > x->rank)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)axis,
                             x->rank);
    *outer = ol_shape_count((int)a, x->dims);
    *n = ol_shape_count(x->rank - (int)a, x->dims + a);
    *inner = 1;
    return OL_OK;
  }
  int a = 0;
  if (x->rank > 0) OL_TRY(ol_normalize_axis(node, axis, x->rank, &a));
  *outer = ol_shape_count(a, x->dims);
  *n = x->rank ? x->dims[a] : 1;
  *inner = ol_shape_count(x->rank - a - 1, x->dims + a + 1);
  return OL_OK;
}

ol_status ol_broadcast_shapes(const ol_node *node, int ra, const int64_t *a, int rb,
                              const int64_t *b, int *rank_out, int64_t *out) {
  int r = ra > rb ? ra : rb;
  for (int i = 0; i < r; i++) {
    int64_t da = i < r - ra ? 1 : a[i - (r - ra)];
    int64_t db = i < r - rb ? 1 : b[i - (r - rb)];
    if (da != db && da != 1 && db != 1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "shapes cannot broadcast: dimension %d is %lld vs %lld", i,
                             (long long)da, (long long)db);
    out[i] = da == 1 ? db : da;
  }
  *rank_out = r;
  return OL_OK;
}

ol_status ol_kernel_run_densified(ol_kernel *kernel, ol_kernel_ctx *ctx, uint32_t which, ol_kernel_compute_fn fn) {
  size_t n = ctx->num_inputs;
  ol_value **in = ol_calloc(ctx->allocator, n + 1, sizeof *in);
  ol_value **dense = ol_calloc(ctx->allocator, n + 1, sizeof *dense);
  ol_status s = !in || !dense ? OL_OUT_OF_MEMORY : OL_OK;
  for (size_t i = 0; s == OL_OK && i < n; i++) {
    in[i] = ctx->inputs[i];
    if (i < 32 && (which & (1u << i)) && in[i] && in[i]->kind == OL_VALUE_TENSOR && ol_tensor_is_strided(&in[i]->tensor)) {
      s = ol_tensor_materialize(ctx->allocator, &in[i]->tensor, &dense[i]);
      in[i] = dense[i];
    }
  }
  if (s == OL_OK) {
    ol_kernel_ctx inner = *ctx;
    inner.inputs = in;
    s = fn(kernel, &inner);
  }
  for (size_t i = 0; dense && i < n; i++) ol_value_release(dense[i]);
  ol_dealloc(ctx->allocator, in);
  ol_dealloc(ctx->allocator, dense);
  return s;
}
