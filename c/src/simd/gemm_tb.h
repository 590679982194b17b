/* float32 products with a transposed right operand: C[M x N] = A[M x K] *
 * Bt[N x K]^T, row-major with leading dimensions lda/ldb/ldc (elements) —
 * attention scores Q.K^T read straight from a (pitched) key cache, whose
 * rows are contiguous along K.
 *
 * Every output element is a dot product summed in one fixed order: four
 * partial sums, lane l taking k = 4q + l over the whole blocks of four
 * (p = p + a * b, separate multiply and add), then (l0 + l1) + (l2 + l3),
 * then the remaining k in increasing order (c = c + a[k] * b[k]). The scalar
 * reference spells that order out; the vector kernel keeps it, so both
 * return the same bits natively (SSE2) and in wasm (SIMD128). */
#ifndef OL_SIMD_GEMM_TB_H
#define OL_SIMD_GEMM_TB_H
#include <stdint.h>

void ol_f32_gemm_tb_scalar(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bt,
                           int64_t ldb, float *C, int64_t ldc);
void ol_f32_gemm_tb(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bt, int64_t ldb,
                    float *C, int64_t ldc);

#endif
