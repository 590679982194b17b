/* Shape functions of MatMul (numpy semantics, broadcast batch dims; also
 * MatMulInteger and QLinearMatMul), Gemm
 * and the Reduce* / ArgMax / ArgMin reductions. */
#include <string.h>

#include "ops/infer.h"

/* A contraction dim pair must agree when both are known. */
static ol_status check_inner(const ol_infer_ctx *ctx, ol_dim a, ol_dim b) {
  if (a.is_value && b.is_value && a.value != b.value)
    return ol_infer_error(ctx, "inner dimensions %lld and %lld differ", (long long)a.value, (long long)b.value);
  return OL_OK;
}

/* The MatMul of a and b (numpy semantics) with element type dtype into out. */
static ol_status matmul_shape(const ol_infer_ctx *ctx, const ol_infer_type *a, const ol_infer_type *b, ol_dtype dtype,
                              ol_infer_type *out) {
  ol_infer_set_tensor(out, dtype, -1, NULL);
  if (!a || !b || a->rank < 0 || b->rank < 0) return OL_OK;
  if (a->rank == 0 || b->rank == 0) return ol_infer_error(ctx, "MatMul inputs must have rank >= 1");
  /* 1-D operands are promoted ([k] -> [1, k], [k] -> [k, 1]) and the added dim removed */
  ol_dim da[OL_MAX_RANK], db[OL_MAX_RANK];
  int ra = a->rank, rb = b->rank;
  if (ra == 1) {
    da[0] = ol_dim_of(1);
    da[1] = a->dims[0];
    ra = 2;
  } else {
    memcpy(da, a->dims, sizeof(ol_dim) * (size_t)ra);
  }
  if (rb == 1) {
    db[0] = b->dims[0];
    db[1] = ol_dim_of(1);
    rb = 2;
  } else {
    memcpy(db, b->dims, sizeof(ol_dim) * (size_t)rb);
  }
  OL_TRY(check_inner(ctx, da[ra - 1], db[rb - 2]));
  ol_dim dims[OL_MAX_RANK + 2];
  int rank;
  OL_TRY(ol_infer_broadcast(ctx, ra - 2, da, rb - 2, db, &rank, dims));
  if (a->rank > 1) dims[rank++] = da[ra - 2];
  if (b->rank > 1) dims[rank++] = db[rb - 1];
  ol_infer_set_tensor(out, dtype, rank, dims);
  return OL_OK;
}

static ol_status infer_matmul(ol_infer_ctx *ctx) {
  const ol_infer_type *a = ol_infer_input(ctx, 0);
  if (!a || ctx->num_outputs < 1) return OL_OK;
  return matmul_shape(ctx, a, ol_infer_input(ctx, 1), a->dtype, &ctx->outputs[0]);
}

static ol_status infer_matmul_integer(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  return matmul_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 1), OL_DTYPE_INT32, &ctx->outputs[0]);
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): y_zp's type. */
static ol_status infer_qlinear_matmul(ol_infer_ctx *ctx) {
  const ol_infer_type *zp = ol_infer_input(ctx, 7);
  if (!zp || ctx->num_outputs < 1) return OL_OK;
  return matmul_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 3), zp->dtype, &ctx->outputs[0]);
}

static ol_status infer_gemm(ol_infer_ctx *ctx) {
  const ol_infer_type *a = ol_infer_input(ctx, 0), *b = ol_infer_input(ctx, 1);
  if (!a || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, a->dtype, -1, NULL);
  if (!b || a->rank < 0 || b->rank < 0) return OL_OK;
  if (a->rank != 2 || b->rank != 2)
    return ol_infer_error(ctx, "Gemm inputs A and B must have rank 2 (got %d and %d)", a->rank, b->rank);
  bool ta = ol_attr_int(ctx->node, "transA", 0) != 0, tb = ol_attr_int(ctx->node, "transB", 0) != 0;
  ol_dim m = a->dims[ta ? 1 : 0], k = a->dims[ta ? 0 : 1], k2 = b->dims[tb ? 1 : 0], n = b->dims[tb ? 0 : 1];
  OL_TRY(check_inner(ctx, k, k2));
  ol_dim dims[2] = {m, n};
  ol_infer_set_tensor(out, a->dtype, 2, dims);
  return OL_OK;
}

/* The opset from which an operator takes its axes as input 1. */
static int axes_input_since(const char *op_type) {
  if (strcmp(op_type, "ReduceSum") == 0) return 13;
  if (strncmp(op_type, "Reduce", 6) == 0) return 18;
  return 1000; /* ArgMax / ArgMin: attribute `axis` */
}

static ol_status infer_reduce(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  const ol_node *node = ctx->node;
  bool arg = strncmp(node->op_type, "Arg", 3) == 0;
  ol_dtype dtype = arg ? OL_DTYPE_INT64 : x->dtype;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, dtype, -1, NULL);
  if (x->rank < 0) return OL_OK;
  bool keep = ol_attr_int(node, "keepdims", 1) != 0;
  int64_t axes[OL_MAX_RANK];
  int count = 0;
  if (arg) {
    axes[0] = ol_attr_int(node, "axis", 0);
    count = 1;
  } else if (node->opset < axes_input_since(node->op_type)) {
    const int64_t *values;
    int64_t n = ol_attr_ints(node, "axes", &values);
    if (n > OL_MAX_RANK) return OL_OK;
    for (int64_t i = 0; i < n; i++) axes[i] = values[i];
    count = n > 0 ? (int)n : 0;
  } else if (ol_node_has_input(node, 1)) {
    if (!ol_infer_ints(ctx, 1, axes, &count, OL_MAX_RANK)) {
      /* unknown axes: with keepdims the rank stays */
      if (keep) {
        ol_dim dims[OL_MAX_RANK];
        for (int i = 0; i < x->rank; i++) dims[i] = ol_dim_unknown();
        ol_infer_set_tensor(out, dtype, x->rank, dims);
      }
      return OL_OK;
    }
  }
  bool reduced[OL_MAX_RANK] = {false};
  if (count == 0) {
    if (!arg && ol_attr_int(node, "noop_with_empty_axes", 0) != 0 && node->opset >= 13) {
      ol_infer_set_tensor(out, dtype, x->rank, x->dims);
      return OL_OK;
    }
    for (int i = 0; i < x->rank; i++) reduced[i] = true;
  }
  for (int i = 0; i < count; i++) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, axes[i], x->rank, &axis));
    reduced[axis] = true;
  }
  ol_dim dims[OL_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!reduced[i]) dims[rank++] = x->dims[i];
    else if (keep) dims[rank++] = ol_dim_of(1);
  }
  ol_infer_set_tensor(out, dtype, rank, dims);
  return OL_OK;
}

#define REDUCE(name) {"", name, infer_reduce}

const ol_infer_rule ol_infer_rules_math[] = {
    {"", "MatMul", infer_matmul},
    {"", "Gemm", infer_gemm},
    {"", "MatMulInteger", infer_matmul_integer},
    {"", "QLinearMatMul", infer_qlinear_matmul},
    REDUCE("ReduceMean"), REDUCE("ReduceSum"), REDUCE("ReduceMax"), REDUCE("ReduceMin"),
    REDUCE("ReduceProd"), REDUCE("ReduceL1"), REDUCE("ReduceL2"), REDUCE("ReduceLogSum"),
    REDUCE("ReduceLogSumExp"), REDUCE("ReduceSumSquare"), REDUCE("ArgMax"), REDUCE("ArgMin"),
    {0},
};
