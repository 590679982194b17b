/* Tensor generators of the shape family (registered in shape.c):
 *
 *   Range 11-23 (float32 float64 int16 int32 int64; values accumulate
 *                start, start+delta, ... as the ONNX function body does)
 *   EyeLike 9-23   Trilu 14-23   OneHot 9-23   NonZero 9-23
 *
 * Element movement is dtype-agnostic (private copies of shape.c's helpers). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/tensor/tensor.h"

/* ------------------------------------------------------------ helpers */

static bool elem_nonzero(const ol_tensor *t, int64_t i) {
  if (t->dtype == OL_DTYPE_STRING) return ((const ol_string *)ol_tdata(t))[i].length != 0;
  return ol_tensor_get_double(t, i) != 0.0;
}

static ol_status read_scalar_int(const ol_node *node, const ol_tensor *t, const char *what,
                                 int64_t *out) {
  if (ol_tcount(t) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input '%s' must hold exactly one value, got %lld elements", what,
                           (long long)ol_tcount(t));
  if (t->dtype == OL_DTYPE_INT64)
    *out = *(const int64_t *)ol_tdata(t);
  else if (t->dtype == OL_DTYPE_INT32)
    *out = *(const int32_t *)ol_tdata(t);
  else
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be int64 or int32, got %s",
                           what, ol_dtype_name(t->dtype));
  return OL_OK;
}

typedef struct axis_kernel {
  ol_kernel base;
  int64_t axis;
} axis_kernel;

/* ------------------------------------------------------------ Range */

static ol_status range_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *t[3];
  static const char *const names[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; i++) {
    OL_TRY(ol_ctx_require(ctx, (size_t)i, &t[i]));
    if (ol_tcount(t[i]) != 1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be a scalar, got %lld elements",
                             names[i], (long long)ol_tcount(t[i]));
    if (t[i]->dtype != t[0]->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' is %s but 'start' is %s",
                             names[i], ol_dtype_name(t[i]->dtype), ol_dtype_name(t[0]->dtype));
  }
  ol_dtype dt = t[0]->dtype;
  int64_t n;
  ol_tensor *y;
  switch (dt) {
    case OL_DTYPE_INT16:
    case OL_DTYPE_INT32:
    case OL_DTYPE_INT64: {
      int64_t start = (int64_t)ol_tensor_get_double(t[0], 0);
      int64_t limit = (int64_t)ol_tensor_get_double(t[1], 0);
      int64_t delta = (int64_t)ol_tensor_get_double(t[2], 0);
      if (dt == OL_DTYPE_INT64) {
        start = *(const int64_t *)ol_tdata(t[0]);
        limit = *(const int64_t *)ol_tdata(t[1]);
        delta = *(const int64_t *)ol_tdata(t[2]);
      }
      if (delta == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "delta is zero");
      if ((delta > 0 && limit <= start) || (delta < 0 && limit >= start)) {
        n = 0;
      } else {
        uint64_t span = delta > 0 ? (uint64_t)limit - (uint64_t)start : (uint64_t)start - (uint64_t)limit;
        uint64_t step = delta > 0 ? (uint64_t)delta : 0 - (uint64_t)delta;
        n = (int64_t)((span + step - 1) / step);
      }
      OL_TRY(ol_ctx_output(ctx, 0, dt, 1, &n, &y));
      int64_t v = start;
      for (int64_t i = 0; i < n; i++, v += delta) {
        if (dt == OL_DTYPE_INT64) ((int64_t *)ol_tdata(y))[i] = v;
        else if (dt == OL_DTYPE_INT32) ((int32_t *)ol_tdata(y))[i] = (int32_t)v;
        else ((int16_t *)ol_tdata(y))[i] = (int16_t)v;
      }
      return OL_OK;
    }
    case OL_DTYPE_FLOAT: {
      float start = *(const float *)ol_tdata(t[0]);
      float limit = *(const float *)ol_tdata(t[1]);
      float delta = *(const float *)ol_tdata(t[2]);
      if (delta == 0.0f) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "delta is zero");
      float c = ceilf((limit - start) / delta);
      if (!(c < 9.0e18f))
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "range length is not finite");
      n = c > 0 ? (int64_t)c : 0;
      OL_TRY(ol_ctx_output(ctx, 0, dt, 1, &n, &y));
      float v = start;
      for (int64_t i = 0; i < n; i++, v += delta) ((float *)ol_tdata(y))[i] = v;
      return OL_OK;
    }
    case OL_DTYPE_DOUBLE: {
      double start = *(const double *)ol_tdata(t[0]);
      double limit = *(const double *)ol_tdata(t[1]);
      double delta = *(const double *)ol_tdata(t[2]);
      if (delta == 0.0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "delta is zero");
      double c = ceil((limit - start) / delta);
      if (!(c < 9.0e18))
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "range length is not finite");
      n = c > 0 ? (int64_t)c : 0;
      OL_TRY(ol_ctx_output(ctx, 0, dt, 1, &n, &y));
      double v = start;
      for (int64_t i = 0; i < n; i++, v += delta) ((double *)ol_tdata(y))[i] = v;
      return OL_OK;
    }
    default:
      return ol_kernel_bad_dtype(node, "input 'start'", dt);
  }
}

ol_status ol_shape_range_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, range_compute, out);
}

/* ------------------------------------------------------------ EyeLike */

typedef struct eyelike_kernel {
  ol_kernel base;
  int64_t k;
  ol_dtype dtype; /* UNDEFINED: input type */
} eyelike_kernel;

static bool eyelike_dtype_ok(ol_dtype d) {
  switch (d) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_INT8: case OL_DTYPE_INT16: case OL_DTYPE_INT32: case OL_DTYPE_INT64:
    case OL_DTYPE_UINT8: case OL_DTYPE_UINT16: case OL_DTYPE_UINT32: case OL_DTYPE_UINT64:
    case OL_DTYPE_BOOL:
      return true;
    default:
      return false;
  }
}

static ol_status eyelike_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  eyelike_kernel *k = (eyelike_kernel *)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->rank != 2)
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "input must be 2-D, got rank %d",
                           x->rank);
  ol_dtype dt = k->dtype ? k->dtype : x->dtype;
  if (!eyelike_dtype_ok(dt)) return ol_kernel_bad_dtype(ctx->node, "output", dt);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, dt, 2, x->dims, &y));
  for (int64_t i = 0; i < x->dims[0]; i++) {
    int64_t j = i + k->k;
    if (j >= 0 && j < x->dims[1]) ol_tensor_set_double(y, i * x->dims[1] + j, 1.0);
  }
  return OL_OK;
}

ol_status ol_shape_eyelike_create(const ol_node *node, ol_kernel **out) {
  eyelike_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, eyelike_compute, (ol_kernel **)&k));
  k->k = ol_attr_int(node, "k", 0);
  k->dtype = (ol_dtype)ol_attr_int(node, "dtype", 0);
  if (k->dtype && !eyelike_dtype_ok(k->dtype)) {
    int64_t d = (int64_t)k->dtype;
    free(k);
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'dtype' %lld is not supported",
                           (long long)d);
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Trilu */

typedef struct trilu_kernel {
  ol_kernel base;
  bool upper;
} trilu_kernel;

static ol_status trilu_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  trilu_kernel *tk = (trilu_kernel *)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->rank < 2)
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "input must have rank >= 2, got %d",
                           x->rank);
  int64_t k = 0;
  const ol_tensor *kt = ol_ctx_input(ctx, 1);
  if (kt) OL_TRY(read_scalar_int(ctx->node, kt, "k", &k));
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int64_t rows = x->dims[x->rank - 2], cols = x->dims[x->rank - 1];
  int64_t mats = ol_shape_count(x->rank - 2, x->dims);
  for (int64_t m = 0; m < mats; m++) {
    for (int64_t i = 0; i < rows; i++) {
      int64_t lo, hi; /* kept columns [lo, hi) */
      /* saturating i + k */
      int64_t d = k > cols ? cols + 1 : k < -rows - 1 ? -rows - 1 : k;
      if (tk->upper) {
        lo = i + d;
        hi = cols;
      } else {
        lo = 0;
        hi = i + d + 1;
      }
      if (lo < 0) lo = 0;
      if (hi > cols) hi = cols;
      if (hi <= lo) continue;
      int64_t base = (m * rows + i) * cols;
      OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), base + lo, ol_tdata(x), base + lo, hi - lo));
    }
  }
  return OL_OK;
}

ol_status ol_shape_trilu_create(const ol_node *node, ol_kernel **out) {
  trilu_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, trilu_compute, (ol_kernel **)&k));
  k->upper = ol_attr_int(node, "upper", 1) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ OneHot */

static ol_status onehot_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  axis_kernel *k = (axis_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *ind, *dep, *val;
  OL_TRY(ol_ctx_require(ctx, 0, &ind));
  OL_TRY(ol_ctx_require(ctx, 1, &dep));
  OL_TRY(ol_ctx_require(ctx, 2, &val));
  if (ol_tcount(dep) != 1 || dep->rank > 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input 'depth' must be a scalar or a one-element 1-D tensor");
  if (dep->dtype == OL_DTYPE_STRING || ind->dtype == OL_DTYPE_STRING)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "indices and depth must be numeric");
  double dd = ol_tensor_get_double(dep, 0);
  if (!(dd >= 1.0) || dd > 9.0e15)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "depth must be positive, got %g", dd);
  int64_t depth = (int64_t)dd;
  if (ol_tcount(val) != 2 || val->rank != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input 'values' must be 1-D with two elements [off, on]");
  int out_rank = ind->rank + 1;
  if (out_rank > OL_MAX_RANK)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank %d is too large", out_rank);
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, out_rank, &axis));
  int64_t dims[OL_MAX_RANK];
  for (int i = 0, j = 0; i < out_rank; i++) dims[i] = i == axis ? depth : ind->dims[j++];
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, val->dtype, out_rank, dims, &y));
  OL_TRY(ol_elements_fill(val->dtype, ol_tdata(y), ol_tcount(y), ol_tdata(val), 0));
  int64_t outer = ol_shape_count(axis, ind->dims);
  int64_t inner = ol_shape_count(ind->rank - axis, ind->dims + axis);
  for (int64_t o = 0; o < outer; o++) {
    for (int64_t i = 0; i < inner; i++) {
      double v = ol_tensor_get_double(ind, o * inner + i);
      if (v != v) continue;
      int64_t idx = (int64_t)v;
      if (idx < 0) idx += depth;
      if (idx < 0 || idx >= depth) continue;
      OL_TRY(ol_elements_copy(val->dtype, ol_tdata(y), (o * depth + idx) * inner + i, ol_tdata(val), 1, 1));
    }
  }
  return OL_OK;
}

ol_status ol_shape_onehot_create(const ol_node *node, ol_kernel **out) {
  axis_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, onehot_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", -1);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ NonZero */

static ol_status nonzero_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t n = ol_tcount(x), nnz = 0;
  for (int64_t i = 0; i < n; i++) nnz += elem_nonzero(x, i);
  int r = x->rank ? x->rank : 1;
  int64_t dims[2] = {r, nnz};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_INT64, 2, dims, &y));
  int64_t *out = ol_tdata(y);
  int64_t col = 0;
  for (int64_t i = 0; i < n; i++) {
    if (!elem_nonzero(x, i)) continue;
    int64_t rem = i;
    if (x->rank == 0) out[col] = 0;
    for (int d = x->rank - 1; d >= 0; d--) {
      out[d * nnz + col] = rem % x->dims[d];
      rem /= x->dims[d];
    }
    col++;
  }
  return OL_OK;
}

ol_status ol_shape_nonzero_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, nonzero_compute, out);
}
