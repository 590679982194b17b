/* Block-quantized GEMV on the 128-bit vector layer (simd/vec.h): the
 * com.microsoft MatMulNBits form for a few rows of A (token generation).
 *
 * y[n] = sum over blocks j of scale[n][j] * sum over the block's elements e
 *        of a[e] * (q[n][e] - zp[n][j])   (+ bias[n])
 * B packed as MatMulNBits stores it: uint8 (N, kb, blob), blob = block *
 * bits / 8 bytes, 4 bits LSB-first (element 2b in the low nibble of byte b)
 * or 8 bits; kb = ceil(K / block); block a power of two >= 16.
 *
 * Dequantized in register, B streamed once per row of A, never copied.
 * Fixed order per output (ol_qgemv_nbits_scalar is the reference and gives
 * the same bits for every shape, natively and in wasm):
 *   B is read in 16-byte chunks (8 for 4-bit blocks of 16) as four 32-bit
 *   lanes; lane i's field k (bits*k .. bits*k+bits-1) is block element
 *   e = c*128/bits + i*per + k (chunk c, per = 32/bits fields). A is
 *   prepared once per row into the same layout (zero past K), field k < per-1
 *   multiplied by 2^-(bits*k) so that the masked, unshifted field
 *   (q * 2^(bits*k), converted exactly) needs no shift; the top field is
 *   shifted down and taken unscaled. Per lane, block j:
 *     ev = 0, od = 0; for each chunk, k = 0..per-1:
 *       (k even ? ev : od) += A'[k] * float(field_k)       (mul, then add)
 *     d = ev + od;  acc = acc + s_j * (d - z_j * S_j)
 *   with S_j lane i = a's elements of that lane summed chunk by chunk, k in
 *   order. y = (acc0 + acc1) + (acc2 + acc3), then + bias. */
#ifndef OL_SIMD_QGEMV_H
#define OL_SIMD_QGEMV_H
#include <stdbool.h>
#include <stdint.h>

typedef struct ol_qgemv_shape {
  int64_t K, N, block;
  int bits; /* 4 or 8 */
} ol_qgemv_shape;

/* Geometry shared by the float (qgemv.c) and int8 (qgemv_i8.c) kernels:
 * blocks along K, bytes per block, and 16-byte chunks per block (one 8-byte
 * chunk for 4-bit blocks of 16). */
static inline int64_t ol_qgemv_blocks(const ol_qgemv_shape *s) { return (s->K + s->block - 1) / s->block; }
static inline int64_t ol_qgemv_blob_bytes(const ol_qgemv_shape *s) { return s->block * s->bits / 8; }
static inline int64_t ol_qgemv_chunks(const ol_qgemv_shape *s) {
  int64_t b = ol_qgemv_blob_bytes(s);
  return b >= 16 ? b / 16 : 1;
}

/* Floats of scratch for one prepared row of A. */
int64_t ol_qgemv_work_floats(const ol_qgemv_shape *s);

/* Prepares a (K floats) into work (see above): A', the lane sums S_j, the
 * default zero point's terms 2^(bits-1) * S_j (used when the kernel gets
 * neither zp_u8 nor zp_f) and the field masks. Once per row of A. */
void ol_qgemv_prepare(const ol_qgemv_shape *s, const float *a, float *work);

/* y[n - n0] for n in [n0, n1). scales: N * kb floats; zp_u8: packed uint8
 * (N, ceil(kb * bits / 8)) or NULL; zp_f: N * kb floats or NULL (neither:
 * 2^(bits-1)); bias: N floats or NULL. */
void ol_qgemv_nbits(const ol_qgemv_shape *s, const float *work, const uint8_t *B,
                    const float *scales, const uint8_t *zp_u8, const float *zp_f,
                    const float *bias, int64_t n0, int64_t n1, float *y);

/* The zero point of output n, block j when zero points are given (zp_f, else
 * zp_u8 packed bits wide; kb blocks per output). Inline: kernels call it per
 * block from their hot loops, where a call makes the compiler spill their
 * vector accumulators. */
static inline __attribute__((always_inline)) float ol_qgemv_given_zero_point(const int bits, int64_t kb, const uint8_t *zp_u8,
                                                                            const float *zp_f, int64_t n, int64_t j) {
  if (zp_f) return zp_f[n * kb + j];
  int64_t zrow = (kb * bits + 7) / 8;
  if (bits == 4) {
    uint8_t b = zp_u8[n * zrow + j / 2];
    return (float)((j & 1) ? b >> 4 : b & 15);
  }
  return (float)zp_u8[n * zrow + j];
}

/* The zero point of output n, block j: from zp_f, zp_u8, else 2^(bits-1). */
float ol_qgemv_zero_point(const ol_qgemv_shape *s, const uint8_t *zp_u8, const float *zp_f, int64_t n, int64_t j);

/* The reference: plain C from the unprepared a, same bits. */
void ol_qgemv_nbits_scalar(const ol_qgemv_shape *s, const float *a, const uint8_t *B,
                           const float *scales, const uint8_t *zp_u8, const float *zp_f,
                           const float *bias, float *y);

#endif
