/* Shared pieces of the matrix products (matmul.c) and the MatMul that reads
 * its B operand transposed in place (matmul_tb.c). */
#ifndef OL_OPS_MATMUL_H
#define OL_OPS_MATMUL_H
#include "ops/kernel.h"

/* numpy batching of A [.., M, K] by B [.., K, N] */
typedef struct ol_mm_plan {
  int out_rank;
  int64_t out_dims[OL_MAX_RANK];
  int64_t M, N, K;
  int brank; /* broadcast batch rank */
  int64_t bdims[OL_MAX_RANK], astr[OL_MAX_RANK], bstr[OL_MAX_RANK]; /* batch strides, 0 = broadcast */
  int64_t batches;
  bool fold_a; /* B has no real batch and A is contiguous: fold A's batch into M */
} ol_mm_plan;

/* Validates shapes (only a's and b's rank and dims are read). */
ol_status ol_mm_plan_make(const ol_node *node, const ol_tensor *a, const ol_tensor *b, ol_mm_plan *p);
/* Element offsets of batch t's A and B matrices (dense layouts). */
void ol_mm_offsets(const ol_mm_plan *p, int64_t t, int64_t *aoff, int64_t *boff);
/* One contiguous M x K by K x N product of any MatMul element type; scratch
 * for half types: ol_mm_scratch_bytes(M, K, N), else unused. */
size_t ol_mm_scratch_bytes(int64_t M, int64_t K, int64_t N);
ol_status ol_mm_gemm_any(ol_dtype dt, int64_t M, int64_t N, int64_t K, const void *A, const void *B, void *C,
                         float *scratch);

/* The kernel of a MatMul whose input 1 is the input of a Transpose swapping
 * the last two axes, fused at plan time (runtime/fuse.c): it computes
 * MatMul(A, Transpose(B)) reading B (possibly a pitched cache) in place;
 * rank: the Transpose perm's length (B must have that rank). */
ol_status ol_matmul_transposed_b_create(const ol_node *node, int rank, ol_kernel **out);

#endif
