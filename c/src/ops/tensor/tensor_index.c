/* Indexing operators of the tensor family (registered in tensor.c):
 *
 *   Gather 1-23   GatherElements 11-23   GatherND 11-23 (batch_dims 12+)
 *   ScatterND 11-23 (reduction 16+, max/min 18+)
 *   ScatterElements 11-23 (reduction 16+, max/min 18+), Scatter 9-10
 *   Compress 9-23
 *
 * Indices may be int32 or int64, negative values count from the end, and
 * every index is validated before any output is written (out of range:
 * OL_INVALID_ARGUMENT). Element movement is dtype-agnostic. */
#include <stdlib.h>
#include <string.h>

#include "ops/tensor/tensor.h"

/* ------------------------------------------------------------ element movement */

static void contiguous_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

/* Reads an int32/int64 index tensor element as int64. */
static inline int64_t index_at(const ol_tensor *t, int64_t i) {
  return t->dtype == OL_DTYPE_INT64 ? ((const int64_t *)ol_tdata(t))[i]
                                    : ((const int32_t *)ol_tdata(t))[i];
}

static ol_status check_index_tensor(const ol_node *node, const ol_tensor *t, const char *what) {
  if (t->dtype != OL_DTYPE_INT64 && t->dtype != OL_DTYPE_INT32)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be int32 or int64, got %s",
                           what, ol_dtype_name(t->dtype));
  return OL_OK;
}

static ol_status normalize_index(const ol_node *node, int64_t v, int64_t dim, const char *what,
                                 int64_t *out) {
  int64_t i = v < 0 ? v + dim : v;
  if (i < 0 || i >= dim)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "%s %lld is out of range for a dimension of size %lld", what,
                           (long long)v, (long long)dim);
  *out = i;
  return OL_OK;
}

/* ------------------------------------------------------------ Gather */

static ol_status gather_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  ol_axis_kernel *k = (ol_axis_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *ind;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &ind));
  OL_TRY(check_index_tensor(node, ind, "indices"));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "data must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  int out_rank = x->rank - 1 + ind->rank;
  if (out_rank > OL_MAX_RANK)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank %d is too large", out_rank);
  int64_t dims[OL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < axis; i++) dims[r++] = x->dims[i];
  for (int i = 0; i < ind->rank; i++) dims[r++] = ind->dims[i];
  for (int i = axis + 1; i < x->rank; i++) dims[r++] = x->dims[i];
  int64_t n = x->dims[axis], nidx = ol_tcount(ind);
  for (int64_t j = 0; j < nidx; j++) {
    int64_t v = 0;
    OL_TRY(normalize_index(node, index_at(ind, j), n, "index", &v));
  }
  ol_tensor *y;
  /* every (outer, index) row copied; indices were checked above */
  OL_TRY(ol_ctx_output_uninit(ctx, 0, x->dtype, out_rank, dims, &y));
  int64_t outer = ol_shape_count(axis, x->dims);
  int64_t inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t j = 0; j < nidx; j++) {
      int64_t v = index_at(ind, j);
      if (v < 0) v += n;
      OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), (o * nidx + j) * inner, ol_tdata(x),
                       (o * n + v) * inner, inner));
    }
  return OL_OK;
}

ol_status ol_tensor_gather_create(const ol_node *node, ol_kernel **out) {
  return ol_axis_kernel_create(node, gather_compute, 0, out);
}

/* ------------------------------------------------------------ GatherElements */

static ol_status gather_elements_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  ol_axis_kernel *k = (ol_axis_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *ind;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &ind));
  OL_TRY(check_index_tensor(node, ind, "indices"));
  if (x->rank == 0 || ind->rank != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "data and indices must have the same rank >= 1 (got %d and %d)",
                           x->rank, ind->rank);
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  for (int i = 0; i < x->rank; i++)
    if (i != axis && ind->dims[i] > x->dims[i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "indices dimension %d (%lld) exceeds the data dimension (%lld)", i,
                             (long long)ind->dims[i], (long long)x->dims[i]);
  int64_t n = ol_tcount(ind), base = 0; /* base: data offset without the axis term */
  for (int64_t e = 0; e < n; e++) {
    int64_t v = 0;
    OL_TRY(normalize_index(node, index_at(ind, e), x->dims[axis], "index", &v));
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, ind->rank, ind->dims, &y));
  int64_t xs[OL_MAX_RANK];
  contiguous_strides(x->rank, x->dims, xs);
  int64_t idx[OL_MAX_RANK] = {0};
  for (int64_t e = 0; e < n; e++) {
    int64_t v = index_at(ind, e);
    if (v < 0) v += x->dims[axis];
    OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), e, ol_tdata(x), base + v * xs[axis], 1));
    for (int i = ind->rank - 1; i >= 0; i--) {
      if (i != axis) base += xs[i];
      if (++idx[i] < ind->dims[i]) break;
      if (i != axis) base -= xs[i] * ind->dims[i];
      idx[i] = 0;
    }
  }
  return OL_OK;
}

ol_status ol_tensor_gather_elements_create(const ol_node *node, ol_kernel **out) {
  return ol_axis_kernel_create(node, gather_elements_compute, 0, out);
}

/* ------------------------------------------------------------ GatherND */

static ol_status gather_nd_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  ol_axis_kernel *k = (ol_axis_kernel *)kernel; /* axis holds batch_dims */
  const ol_node *node = ctx->node;
  const ol_tensor *x, *ind;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &ind));
  OL_TRY(check_index_tensor(node, ind, "indices"));
  int64_t b = k->axis;
  if (ind->rank < 1 || x->rank < 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "data and indices must have rank >= 1");
  if (b < 0 || b >= ind->rank || b >= x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "batch_dims %lld must be smaller than both ranks (%d, %d)",
                           (long long)b, x->rank, ind->rank);
  int64_t m = ind->dims[ind->rank - 1];
  if (m > x->rank - b)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "indices last dimension %lld exceeds data rank %d - batch_dims %lld",
                           (long long)m, x->rank, (long long)b);
  for (int64_t i = 0; i < b; i++)
    if (x->dims[i] != ind->dims[i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "batch dimension %lld differs: data %lld vs indices %lld",
                             (long long)i, (long long)x->dims[i], (long long)ind->dims[i]);
  int64_t dims[OL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < ind->rank - 1; i++) dims[r++] = ind->dims[i];
  for (int64_t i = b + m; i < x->rank; i++) {
    if (r >= OL_MAX_RANK)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank is too large");
    dims[r++] = x->dims[i];
  }
  int64_t xs[OL_MAX_RANK];
  contiguous_strides(x->rank, x->dims, xs);
  int64_t batches = ol_shape_count((int)b, x->dims);
  int64_t per_batch = ol_shape_count(ind->rank - 1 - (int)b, ind->dims + b);
  int64_t slice = ol_shape_count(x->rank - (int)(b + m), x->dims + b + m);
  int64_t batch_stride = ol_shape_count(x->rank - (int)b, x->dims + b);
  for (int64_t e = 0; e < batches * per_batch * m; e++) {
    int64_t v = 0;
    OL_TRY(normalize_index(node, index_at(ind, e), x->dims[b + e % m], "index", &v));
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, r, dims, &y));
  for (int64_t bi = 0; bi < batches; bi++)
    for (int64_t j = 0; j < per_batch; j++) {
      int64_t row = bi * per_batch + j, off = bi * batch_stride;
      for (int64_t t = 0; t < m; t++) {
        int64_t v = index_at(ind, row * m + t);
        if (v < 0) v += x->dims[b + t];
        off += v * xs[b + t];
      }
      OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), row * slice, ol_tdata(x), off, slice));
    }
  return OL_OK;
}

ol_status ol_tensor_gather_nd_create(const ol_node *node, ol_kernel **out) {
  ol_axis_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, gather_nd_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "batch_dims", 0);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Scatter* */

enum { RED_NONE, RED_ADD, RED_MUL, RED_MAX, RED_MIN };

/* dst[di] = reduce(dst[di], src[si]). Floating types compute in double and
 * round once, which equals the native-precision result for + and *. */
static ol_status elem_reduce(ol_dtype dt, void *dst, int64_t di, const void *src, int64_t si,
                             int red) {
  if (red == RED_NONE) return ol_elements_copy(dt, dst, di, src, si, 1);
  switch (dt) {
#define IRED(T)                                                               \
  {                                                                           \
    T *d = (T *)dst + di;                                                     \
    T s = ((const T *)src)[si];                                               \
    switch (red) {                                                            \
      case RED_ADD: *d = (T)((uint64_t)*d + (uint64_t)s); break;              \
      case RED_MUL: *d = (T)((uint64_t)*d * (uint64_t)s); break;              \
      case RED_MAX: if (s > *d) *d = s; break;                                \
      default: if (s < *d) *d = s; break;                                     \
    }                                                                         \
    return OL_OK;                                                             \
  }
    case OL_DTYPE_INT8: IRED(int8_t)
    case OL_DTYPE_UINT8: IRED(uint8_t)
    case OL_DTYPE_INT16: IRED(int16_t)
    case OL_DTYPE_UINT16: IRED(uint16_t)
    case OL_DTYPE_INT32: IRED(int32_t)
    case OL_DTYPE_UINT32: IRED(uint32_t)
    case OL_DTYPE_INT64: IRED(int64_t)
    case OL_DTYPE_UINT64: IRED(uint64_t)
#undef IRED
    case OL_DTYPE_BOOL: {
      uint8_t *d = (uint8_t *)dst + di, s = ((const uint8_t *)src)[si] != 0;
      if (red == RED_ADD || red == RED_MAX) *d = *d || s;
      else *d = *d && s;
      return OL_OK;
    }
    default: {
      if (!ol_dtype_is_arith_float(dt))
        return ol_error(OL_NOT_IMPLEMENTED, "reduction on %s elements is not supported",
                        ol_dtype_name(dt));
      /* through the dtype table: widened to double, rounded once on store */
      const ol_dtype_traits *t = ol_dtype_info(dt);
      double a = t->to_double(dst, di), b = t->to_double(src, si);
      double r = red == RED_ADD ? a + b : red == RED_MUL ? a * b
               : red == RED_MAX ? (b > a || b != b ? b : a) : (b < a || b != b ? b : a);
      t->from_double(dst, di, r);
      return OL_OK;
    }
  }
}

typedef struct scatter_kernel {
  ol_kernel base;
  int64_t axis;
  int reduction;
} scatter_kernel;

static ol_status scatter_create_common(const ol_node *node, ol_kernel_compute_fn fn,
                                       ol_kernel **out) {
  const char *red = node->opset >= 16 ? ol_attr_string(node, "reduction", "none") : "none";
  int r;
  if (strcmp(red, "none") == 0) r = RED_NONE;
  else if (strcmp(red, "add") == 0) r = RED_ADD;
  else if (strcmp(red, "mul") == 0) r = RED_MUL;
  else if (strcmp(red, "max") == 0 && node->opset >= 18) r = RED_MAX;
  else if (strcmp(red, "min") == 0 && node->opset >= 18) r = RED_MIN;
  else
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "reduction '%s' is not valid in opset %d", red, node->opset);
  scatter_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, fn, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", 0);
  k->reduction = r;
  *out = &k->base;
  return OL_OK;
}

static ol_status scatter_nd_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  scatter_kernel *k = (scatter_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *ind, *upd;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &ind));
  OL_TRY(ol_ctx_require(ctx, 2, &upd));
  OL_TRY(check_index_tensor(node, ind, "indices"));
  if (upd->dtype != x->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "updates are %s but data is %s",
                           ol_dtype_name(upd->dtype), ol_dtype_name(x->dtype));
  if (ind->rank < 1 || x->rank < 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "data and indices must have rank >= 1");
  int64_t m = ind->dims[ind->rank - 1];
  if (m > x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "indices last dimension %lld exceeds the data rank %d", (long long)m,
                           x->rank);
  /* updates shape = indices.shape[:-1] + data.shape[m:] */
  int urank = ind->rank - 1 + x->rank - (int)m;
  bool ok = upd->rank == urank;
  for (int i = 0; ok && i < ind->rank - 1; i++) ok = upd->dims[i] == ind->dims[i];
  for (int i = 0; ok && i < x->rank - (int)m; i++) ok = upd->dims[ind->rank - 1 + i] == x->dims[m + i];
  if (!ok) {
    char b1[160], b2[160], b3[160];
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "updates %s do not match indices %s and data %s",
                           ol_tensor_describe(upd, b1, sizeof b1),
                           ol_tensor_describe(ind, b2, sizeof b2),
                           ol_tensor_describe(x, b3, sizeof b3));
  }
  int64_t xs[OL_MAX_RANK];
  contiguous_strides(x->rank, x->dims, xs);
  int64_t rows = ol_shape_count(ind->rank - 1, ind->dims);
  int64_t slice = ol_shape_count(x->rank - (int)m, x->dims + m);
  /* validate before touching the output */
  for (int64_t j = 0; j < rows * m; j++) {
    int64_t v = 0;
    OL_TRY(normalize_index(node, index_at(ind, j), x->dims[j % m], "index", &v));
  }
  ol_value *out;
  OL_TRY(ol_tensor_clone(ctx->allocator, x, &out));
  OL_TRY(ol_ctx_set_output(ctx, 0, out));
  ol_tensor *y = &out->tensor;
  for (int64_t j = 0; j < rows; j++) {
    int64_t off = 0;
    for (int64_t t = 0; t < m; t++) {
      int64_t v = index_at(ind, j * m + t);
      if (v < 0) v += x->dims[t];
      off += v * xs[t];
    }
    if (k->reduction == RED_NONE) {
      OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), off, ol_tdata(upd), j * slice, slice));
    } else {
      for (int64_t e = 0; e < slice; e++)
        OL_TRY(elem_reduce(x->dtype, ol_tdata(y), off + e, ol_tdata(upd), j * slice + e,
                           k->reduction));
    }
  }
  return OL_OK;
}

ol_status ol_tensor_scatter_nd_create(const ol_node *node, ol_kernel **out) {
  return scatter_create_common(node, scatter_nd_compute, out);
}

static ol_status scatter_elements_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  scatter_kernel *k = (scatter_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *ind, *upd;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &ind));
  OL_TRY(ol_ctx_require(ctx, 2, &upd));
  OL_TRY(check_index_tensor(node, ind, "indices"));
  if (upd->dtype != x->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "updates are %s but data is %s",
                           ol_dtype_name(upd->dtype), ol_dtype_name(x->dtype));
  if (x->rank == 0 || ind->rank != x->rank || upd->rank != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "data, indices and updates must have the same rank >= 1");
  for (int i = 0; i < x->rank; i++)
    if (ind->dims[i] != upd->dims[i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "indices and updates shapes differ at dimension %d (%lld vs %lld)",
                             i, (long long)ind->dims[i], (long long)upd->dims[i]);
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  for (int i = 0; i < x->rank; i++)
    if (i != axis && ind->dims[i] > x->dims[i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "indices dimension %d (%lld) exceeds the data dimension (%lld)", i,
                             (long long)ind->dims[i], (long long)x->dims[i]);
  int64_t n = ol_tcount(ind);
  for (int64_t e = 0; e < n; e++) {
    int64_t v = 0;
    OL_TRY(normalize_index(node, index_at(ind, e), x->dims[axis], "index", &v));
  }
  ol_value *out;
  OL_TRY(ol_tensor_clone(ctx->allocator, x, &out));
  OL_TRY(ol_ctx_set_output(ctx, 0, out));
  ol_tensor *y = &out->tensor;
  int64_t xs[OL_MAX_RANK], idx[OL_MAX_RANK] = {0}, base = 0;
  contiguous_strides(x->rank, x->dims, xs);
  for (int64_t e = 0; e < n; e++) {
    int64_t v = index_at(ind, e);
    if (v < 0) v += x->dims[axis];
    OL_TRY(elem_reduce(x->dtype, ol_tdata(y), base + v * xs[axis], ol_tdata(upd), e, k->reduction));
    for (int i = ind->rank - 1; i >= 0; i--) {
      if (i != axis) base += xs[i];
      if (++idx[i] < ind->dims[i]) break;
      if (i != axis) base -= xs[i] * ind->dims[i];
      idx[i] = 0;
    }
  }
  return OL_OK;
}

ol_status ol_tensor_scatter_elements_create(const ol_node *node, ol_kernel **out) {
  return scatter_create_common(node, scatter_elements_compute, out);
}

/* ------------------------------------------------------------ Compress */

static ol_status compress_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  ol_axis_kernel *k = (ol_axis_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *c;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &c));
  if (c->rank != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "condition must be 1-D, got rank %d", c->rank);
  int axis = 0;
  int64_t outer = 1, dim, inner = 1;
  if (k->has_axis) {
    OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
    if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input is a scalar");
    outer = ol_shape_count(axis, x->dims);
    dim = x->dims[axis];
    inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  } else {
    dim = ol_tcount(x);
  }
  int64_t nc = ol_tcount(c), selected = 0;
  for (int64_t i = 0; i < nc; i++) {
    if (ol_tensor_get_double(c, i) == 0.0) continue;
    if (i >= dim)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "condition selects index %lld but the axis has %lld entries",
                             (long long)i, (long long)dim);
    selected++;
  }
  int64_t dims[OL_MAX_RANK];
  int r;
  if (k->has_axis) {
    r = x->rank;
    memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
    dims[axis] = selected;
  } else {
    r = 1;
    dims[0] = selected;
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, r, dims, &y));
  int64_t pos = 0;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < nc && i < dim; i++) {
      if (ol_tensor_get_double(c, i) == 0.0) continue;
      OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), pos, ol_tdata(x), (o * dim + i) * inner, inner));
      pos += inner;
    }
  return OL_OK;
}

ol_status ol_tensor_compress_create(const ol_node *node, ol_kernel **out) {
  return ol_axis_kernel_create(node, compress_compute, 0, out);
}
