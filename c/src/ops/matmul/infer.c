/* Shape functions of MatMul (numpy semantics, broadcast batch dims; also
 * MatMulInteger), Gemm and com.microsoft MatMulNBits. */
#include <string.h>

#include "ops/matmul/matmul.h"

/* A contraction dim pair must agree when both are known. */
static ol_status check_inner(const ol_infer_ctx *ctx, ol_dim a, ol_dim b) {
  if (a.is_value && b.is_value && a.value != b.value)
    return ol_infer_error(ctx, "inner dimensions %lld and %lld differ", (long long)a.value, (long long)b.value);
  return OL_OK;
}

/* The MatMul of a and b (numpy semantics) with element type dtype into out. */
ol_status ol_infer_matmul_shape(const ol_infer_ctx *ctx, const ol_infer_type *a, const ol_infer_type *b, ol_dtype dtype,
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

ol_status ol_infer_matmul(ol_infer_ctx *ctx) {
  const ol_infer_type *a = ol_infer_input(ctx, 0);
  if (!a || ctx->num_outputs < 1) return OL_OK;
  return ol_infer_matmul_shape(ctx, a, ol_infer_input(ctx, 1), a->dtype, &ctx->outputs[0]);
}

ol_status ol_infer_matmul_integer(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  return ol_infer_matmul_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 1), OL_DTYPE_INT32, &ctx->outputs[0]);
}

ol_status ol_infer_gemm(ol_infer_ctx *ctx) {
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

#define REDUCE(name) {"", name, ol_infer_reduce}

/* com.microsoft MatMulNBits: A [..., K] -> [..., N]. */
ol_status ol_infer_matmul_nbits(ol_infer_ctx *ctx) {
  const ol_infer_type *a = ol_infer_input(ctx, 0);
  if (!a || ctx->num_outputs < 1) return OL_OK;
  int64_t n = ol_attr_int(ctx->node, "N", -1);
  ol_infer_set_tensor(&ctx->outputs[0], a->dtype, a->rank, a->dims);
  if (a->rank >= 1) ctx->outputs[0].dims[a->rank - 1] = n >= 0 ? ol_dim_of(n) : ol_dim_unknown();
  return OL_OK;
}
