/* MatMulNBits GEMV with int8 activations (accuracy_level 4), the integer
 * twin of simd/qgemv.h for token generation.
 *
 * Each block of a row of A (the MatMulNBits block along K) is quantized
 * symmetrically as onnxruntime's CPU kernels do: sa = max|a| / 127,
 * qa = round-half-even(a * (127 / max|a|)) in [-127, 127] (sa = 0 and qa = 0
 * for an all-zero block). Then per output n
 * and block j, with q the weight codes and z the zero point:
 *   isum = sum over the block of qa * q          (exact, 32-bit)
 *   acc  = acc + ((float)isum - z * (float)asum_j) * (sa_j * scale[n][j])
 * in block order from acc = 0, then + bias[n]. asum_j = sum of qa over the
 * block. Every term is an integer below 2^24 or a fixed float operation, so
 * the vector kernel, the scalar reference, native and wasm agree bit for bit.
 * B, scales and zero points are laid out as ol_qgemv_nbits takes them. */
#ifndef OL_SIMD_QGEMV_I8_H
#define OL_SIMD_QGEMV_I8_H
#include <stddef.h>
#include <stdint.h>

#include "simd/qgemv.h"

/* Bytes of scratch for one prepared row of A. */
size_t ol_qgemv_i8_work_bytes(const ol_qgemv_shape *s);

/* Quantizes a (K floats) block by block into work: codes arranged in the
 * order the kernel extracts weight fields, block scales and code sums. */
void ol_qgemv_i8_prepare(const ol_qgemv_shape *s, const float *a, void *work);

/* y[n - n0] for n in [n0, n1); arguments as ol_qgemv_nbits. */
void ol_qgemv_i8_nbits(const ol_qgemv_shape *s, const void *work, const uint8_t *B, const float *scales,
                       const uint8_t *zp_u8, const float *zp_f, const float *bias, int64_t n0, int64_t n1,
                       float *y);

/* The same for nrows (1..4) prepared rows at once, each weight block read
 * once for all: row r's y[n - n0] at y[r * ldy + n - n0]. Same bits. */
void ol_qgemv_i8_nbits_rows(const ol_qgemv_shape *s, const void *const *works, int nrows, const uint8_t *B,
                            const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                            int64_t n0, int64_t n1, float *y, int64_t ldy);

/* Block j of a (K floats) quantized: its codes in q[0 .. block) (zero past
 * K; 0 for a NaN element, whose product with 127 / amax has no integer),
 * returns the block's scale sa. What the prepare functions store. */
float ol_qgemv_i8_quantize_block(const ol_qgemv_shape *s, const float *a, int64_t j, int16_t *q);
/* The same, plus the sum of the block's codes in *asum (as a float: exact). */
float ol_qgemv_i8_quantize_block_sum(const ol_qgemv_shape *s, const float *a, int64_t j, int16_t *q, float *asum);

/* The reference: plain C from the unprepared a, same bits. */
void ol_qgemv_i8_nbits_scalar(const ol_qgemv_shape *s, const float *a, const uint8_t *B, const float *scales,
                              const uint8_t *zp_u8, const float *zp_f, const float *bias, float *y);

#endif
