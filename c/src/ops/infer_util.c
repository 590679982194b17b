/* The helpers shape functions share (ops/infer.h). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "ops/infer.h"

void ol_infer_unknown(ol_infer_type *t) {
  memset(t, 0, sizeof *t);
  t->rank = -1;
  t->data_count = -1;
}

void ol_infer_set_tensor(ol_infer_type *t, ol_dtype dtype, int rank, const ol_dim *dims) {
  ol_infer_unknown(t);
  t->known = true;
  t->kind = OL_VALUE_TENSOR;
  t->dtype = dtype;
  t->rank = rank;
  for (int i = 0; i < rank && i < OL_MAX_RANK; i++) {
    t->dims[i] = dims ? dims[i] : ol_dim_unknown();
    if (t->dims[i].is_value && t->dims[i].value < 0) t->dims[i] = ol_dim_unknown();
  }
  if (rank > OL_MAX_RANK) t->rank = -1;
}

bool ol_dim_same(ol_dim a, ol_dim b) {
  if (a.is_value && b.is_value) return a.value == b.value;
  return !a.is_value && !b.is_value && a.param && b.param && strcmp(a.param, b.param) == 0;
}

const ol_infer_type *ol_infer_input(const ol_infer_ctx *ctx, size_t i) {
  if (i >= ctx->num_inputs || !ctx->inputs[i]) return NULL;
  const ol_infer_type *t = ctx->inputs[i];
  if (!t->known || t->kind != OL_VALUE_TENSOR || t->proto || t->dtype == OL_DTYPE_UNDEFINED) return NULL;
  return t;
}

const ol_infer_type *ol_infer_shaped(const ol_infer_ctx *ctx, size_t i) {
  const ol_infer_type *t = ol_infer_input(ctx, i);
  return t && t->rank >= 0 ? t : NULL;
}

bool ol_infer_ints(const ol_infer_ctx *ctx, size_t i, int64_t *values, int *count, int capacity) {
  const ol_infer_type *t = ol_infer_input(ctx, i);
  if (!t || t->data_count < 0 || t->data_count > capacity) return false;
  for (int k = 0; k < t->data_count; k++) {
    if (!t->data[k].is_value) return false;
    values[k] = t->data[k].value;
  }
  *count = t->data_count;
  return true;
}

ol_status ol_infer_error(const ol_infer_ctx *ctx, const char *fmt, ...) {
  char message[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(message, sizeof message, fmt, ap);
  va_end(ap);
  const ol_node *n = ctx->node;
  if (n->name[0])
    return ol_error(OL_INVALID_MODEL, "shape inference: node '%s' (%s): %s", n->name, n->op_type, message);
  return ol_error(OL_INVALID_MODEL, "shape inference: unnamed node #%zu (%s): %s", n->index, n->op_type,
                  message);
}

ol_status ol_infer_broadcast(const ol_infer_ctx *ctx, int rank_a, const ol_dim *a, int rank_b,
                             const ol_dim *b, int *rank_out, ol_dim *out) {
  int rank = rank_a > rank_b ? rank_a : rank_b;
  ol_dim result[OL_MAX_RANK];
  for (int i = 0; i < rank; i++) {
    int ia = i - (rank - rank_a), ib = i - (rank - rank_b);
    ol_dim da = ia >= 0 ? a[ia] : ol_dim_of(1), db = ib >= 0 ? b[ib] : ol_dim_of(1);
    if (da.is_value && da.value == 1) result[i] = db;
    else if (db.is_value && db.value == 1) result[i] = da;
    else if (da.is_value && db.is_value) {
      if (da.value != db.value)
        return ol_infer_error(ctx, "dimensions %lld and %lld (axis %d of the broadcast result) cannot broadcast",
                              (long long)da.value, (long long)db.value, i);
      result[i] = da;
    } else if (ol_dim_same(da, db)) result[i] = da;
    else if (da.is_value) result[i] = da; /* a symbolic db must be 1 or equal */
    else if (db.is_value) result[i] = db;
    else result[i] = ol_dim_unknown(); /* two different names: either may be 1 */
  }
  for (int i = 0; i < rank; i++) out[i] = result[i];
  *rank_out = rank;
  return OL_OK;
}

ol_status ol_infer_axis(const ol_infer_ctx *ctx, int64_t axis, int rank, int *out) {
  if (axis < -(int64_t)rank || axis >= rank)
    return ol_infer_error(ctx, "axis %lld is out of range for rank %d", (long long)axis, rank);
  *out = (int)(axis < 0 ? axis + rank : axis);
  return OL_OK;
}

void ol_infer_from_tensor(const ol_tensor *t, ol_infer_type *out) {
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0; i < t->rank; i++) dims[i] = ol_dim_of(t->dims[i]);
  ol_infer_set_tensor(out, t->dtype, t->rank, dims);
  out->constant = t;
  int64_t count = ol_tcount(t);
  const void *data = ol_tdata(t);
  if (t->rank > 1 || count > OL_INFER_MAX_DATA || (count && !data)) return;
  for (int64_t i = 0; i < count; i++) {
    int64_t v;
    if (t->dtype == OL_DTYPE_INT64) v = ((const int64_t *)data)[i];
    else if (t->dtype == OL_DTYPE_INT32) v = ((const int32_t *)data)[i];
    else if (t->dtype == OL_DTYPE_BOOL) v = ((const uint8_t *)data)[i] != 0;
    else return;
    out->data[i] = ol_dim_of(v);
  }
  out->data_count = (int)count;
}

ol_status ol_infer_like_input0(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (x && ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, x->dims);
  return OL_OK;
}

bool ol_infer_doubles(const ol_infer_ctx *ctx, size_t i, double *values, int *count, int capacity) {
  const ol_infer_type *t = ol_infer_input(ctx, i);
  if (!t || !t->constant || t->constant->rank > 1) return false;
  int64_t n = ol_tcount(t->constant);
  const void *data = ol_tdata(t->constant);
  if (n > capacity || (n && !data)) return false;
  for (int64_t k = 0; k < n; k++) {
    switch (t->constant->dtype) {
      case OL_DTYPE_FLOAT: values[k] = ((const float *)data)[k]; break;
      case OL_DTYPE_DOUBLE: values[k] = ((const double *)data)[k]; break;
      case OL_DTYPE_INT64: values[k] = (double)((const int64_t *)data)[k]; break;
      case OL_DTYPE_INT32: values[k] = ((const int32_t *)data)[k]; break;
      default:
        if (!ol_dtype_widens(t->constant->dtype)) return false;
        values[k] = ol_dtype_info(t->constant->dtype)->to_double(data, k); /* float16, bfloat16 */
        break;
    }
  }
  *count = (int)n;
  return true;
}
