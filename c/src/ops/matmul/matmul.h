/* Matrix products: MatMul, Gemm, MatMulInteger (matmul.c), the MatMul that
 * reads its B operand transposed in place (matmul_tb.c), MatMul over an
 * ai.rt::Dequantize of affine encoded weights (matmul_affine.c),
 * com.microsoft MatMulNBits and GatherBlockQuantized (matmul_nbits.c);
 * shape functions in infer.c. */
#ifndef OL_OPS_MATMUL_H
#define OL_OPS_MATMUL_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_matmul[];

/* packing.c: the weight layouts of this family and the rows' pack hooks */
extern const ol_packing_kind ol_packing_f32_tiles;
extern const ol_packing_kind ol_packing_lanes;
size_t ol_matmul_pack(const ol_node *node, const ol_tensor *const *constants, ol_pack_request *requests);
size_t ol_nbits_pack(const ol_node *node, const ol_tensor *const *constants, ol_pack_request *requests);

/* matmul_nbits.c */
ol_status ol_cms_matmul_nbits_create(const ol_node *node, ol_kernel **out);
ol_status ol_cms_gather_block_quantized_create(const ol_node *node, ol_kernel **out);

/* infer.c */
ol_status ol_infer_matmul(ol_infer_ctx *ctx);
ol_status ol_infer_matmul_integer(ol_infer_ctx *ctx);
ol_status ol_infer_gemm(ol_infer_ctx *ctx);
ol_status ol_infer_matmul_nbits(ol_infer_ctx *ctx);
/* The MatMul of a and b (numpy semantics) with element type dtype into out
 * (also QLinearMatMul's). */
ol_status ol_infer_matmul_shape(const ol_infer_ctx *ctx, const ol_infer_type *a, const ol_infer_type *b,
                                ol_dtype dtype, ol_infer_type *out);

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

/* MatMul's fusions (ops/schema.h, ol_fusion). MatMul(A, Transpose(B)) with
 * a Transpose swapping the last two axes, computed reading B (possibly a
 * pitched cache) in place (matmul_tb.c). */
ol_status ol_matmul_fuse_transposed_b(const ol_fusion_site *site, ol_kernel **out);
/* MatMul(A, ai.rt::Dequantize(E, dtype = FLOAT)) with E a constant encoded
 * initializer of an eligible affine layout, decoded in register
 * (matmul_affine.c). */
ol_status ol_matmul_fuse_dequantized_b(const ol_fusion_site *site, ol_kernel **out);

#endif
