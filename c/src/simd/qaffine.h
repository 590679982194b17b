/* MatMul with a [K, N] float weight kept in the portable affine encoding
 * (quant/codec.h) and decoded in register: Y[M x N] = A[M x K] * W.
 *
 * W is flattened row-major and cut into blocks along that order (a block may
 * span rows). Each block holds, little-endian in the encoded payload:
 * float64 scale, zero point, offset, then its codes (4 bits LSB-first with
 * zero high padding, or 8 bits; signed or unsigned). The kernels read them
 * in place.
 *
 * Bits: every weight is the float the codec's decoder produces,
 *   w = (float)(((double)code - zero_point) * scale + offset)
 * (here computed as (double)(code - zero_point) in exact integers, the
 * product in float64 lanes, + offset unless it is zero, which cannot change
 * the value: the product is never -0 since scale > 0), and every output is
 * summed like ol_f32_gemm_scalar: y = +0; y = y + a[k] * w[k][n] for k in
 * order, separate multiply and add. So the result equals Dequantize then
 * MatMul bit for bit, natively and in wasm, for every M and shape.
 * ol_qaffine_decode_scalar is the reference decoder (the codec's formula as
 * written). */
#ifndef OL_SIMD_QAFFINE_H
#define OL_SIMD_QAFFINE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

#define OL_QAFFINE_PARAM_BYTES 24 /* scale, zero point, offset before each block's codes */

/* Consecutive blocks with one layout. */
typedef struct ol_qaffine_run {
  int64_t first;       /* first flattened element */
  int64_t blocks;      /* number of blocks */
  int64_t count;       /* elements per block */
  int64_t stride;      /* payload bytes per block: 24 + code bytes */
  const uint8_t *base; /* the first block's scale */
  int bits;            /* 4 or 8 */
  bool signed_codes;
} ol_qaffine_run;

typedef struct ol_qaffine {
  int64_t K, N;
  size_t num_runs;
  const ol_qaffine_run *runs; /* cover [0, K * N) in order */
} ol_qaffine;

/* dst[0..n) = elements [e0, e0 + n) of W, vector kernel. */
void ol_qaffine_decode(const ol_qaffine *w, int64_t e0, int64_t n, float *dst);
/* The same with the codec's scalar formula (the reference). */
void ol_qaffine_decode_scalar(const ol_qaffine *w, int64_t e0, int64_t n, float *dst);

/* C = A * W (A: M x K, lda K; C: M x N, ldc N). One row: codes decoded and
 * multiplied in register; up to 8 rows: one decoded row of W reused by every
 * row of A; more: decoded column panels through ol_f32_gemm. Fails only with
 * OL_OUT_OF_MEMORY (scratch). */
ol_status ol_qaffine_matmul(const ol_qaffine *w, int64_t M, const float *A, float *C);

/* The reference: W decoded by ol_qaffine_decode_scalar, then ol_f32_gemm_scalar. */
ol_status ol_qaffine_matmul_scalar(const ol_qaffine *w, int64_t M, const float *A, float *C);

#endif
