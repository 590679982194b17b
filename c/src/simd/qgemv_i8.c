/* MatMulNBits GEMV with int8 activations: see qgemv_i8.h for the formula.
 *
 * Weight fields are taken straight from 16-bit lanes, so no unpacking to
 * bytes is needed: lane l of a 16-byte chunk holds bytes 2l and 2l+1, i.e.
 * four 4-bit codes (elements 4l..4l+3, field k = bits 4k..4k+3) or two 8-bit
 * codes (elements 2l, 2l+1). The prepared activations use the same order:
 * vector k of a chunk holds, in lane l, the code of element 4l+k (or 2l+k).
 * i32x4.dot_i16x8_s then multiplies and sums lane pairs exactly. */
#include "simd/qgemv_i8.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include "simd/qgemv_i8_chunk.h"
#include "simd/vec.h"
#include "simd/vec_f64.h"

/* block elements per chunk, and int16 codes stored per chunk (8 lanes x fields) */
static int64_t chunk_elems(const ol_qgemv_shape *s) { return s->bits == 4 ? (s->block < 32 ? s->block : 32) : 16; }
static int64_t chunk_codes(int bits) { return bits == 4 ? 32 : 16; }

static size_t codes_bytes(const ol_qgemv_shape *s) {
  return sizeof(int16_t) * (size_t)(ol_qgemv_blocks(s) * ol_qgemv_chunks(s) * chunk_codes(s->bits));
}

size_t ol_qgemv_i8_work_bytes(const ol_qgemv_shape *s) { return codes_bytes(s) + 2 * sizeof(float) * (size_t)ol_qgemv_blocks(s); }

/* The block's codes as the scalar loop below gives them, eight at a time,
 * for blocks whose elements are all finite: the maximum is exact in any
 * order; |a * inv| <= 127 plus two roundings' worth (below 127.5), so no
 * code needs the clamp; and adding M = 1.5 * 2^23 rounds x to the nearest
 * integer (ties to even) in the low bits of the sum, so bits(x + M) -
 * bits(M) is the code. Returns false (nothing written) when some element
 * is not finite or 127 / amax overflows. */
static bool quantize_finite(const float *a, int64_t n, float *amax_out, int16_t *q) {
  const int64_t nv = n - n % 8;
  ol_f32x4 mx = ol_f32x4_zero(), sum = ol_f32x4_zero();
  const ol_i32x4 abs_mask = ol_i32x4_splat(0x7fffffff);
  for (int64_t e = 0; e < nv; e += 4) {
    const ol_f32x4 v = ol_f32x4_load(a + e);
    sum = ol_f32x4_add(sum, v);
    ol_f32x4 av;
    ol_i32x4 bits = ol_i32x4_and(ol_f32x4_bits(v), abs_mask);
    memcpy(&av, &bits, sizeof av);
    mx = ol_f32x4_max(av, mx); /* av > mx ? av : mx, as the scalar loop */
  }
  float amax = 0.0f, total = ol_f32x4_hsum(sum);
  for (int k = 0; k < 4; k++) amax = ol_f32x4_lane(mx, k) > amax ? ol_f32x4_lane(mx, k) : amax;
  for (int64_t e = nv; e < n; e++) {
    float v = fabsf(a[e]);
    total = total + a[e];
    if (v > amax) amax = v;
  }
  const float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  /* a NaN or an infinity (or a huge sum), or amax so small that 127 / amax
   * overflows: the scalar path */
  if (!isfinite(total) || !isfinite(inv)) return false;
  const ol_f32x4 iv = ol_f32x4_splat(inv);
  for (int64_t e = 0; e < nv; e += 8) {
    ol_i32x4 lo = ol_f32x4_round_small(ol_f32x4_mul(ol_f32x4_load(a + e), iv));
    ol_i32x4 hi = ol_f32x4_round_small(ol_f32x4_mul(ol_f32x4_load(a + e + 4), iv));
    ol_i32x4 packed = ol_i16x8_narrow(lo, hi);
    memcpy(q + e, &packed, 16);
  }
  for (int64_t e = nv; e < n; e++) q[e] = (int16_t)nearbyintf(a[e] * inv);
  *amax_out = amax;
  return true;
}

float ol_qgemv_i8_quantize_block(const ol_qgemv_shape *s, const float *a, int64_t j, int16_t *q) {
  int64_t e0 = j * s->block, n = s->K - e0 < s->block ? s->K - e0 : s->block;
  float amax = 0.0f;
  if (quantize_finite(a + e0, n, &amax, q)) {
    for (int64_t e = n; e < s->block; e++) q[e] = 0;
    return amax / 127.0f;
  }
  for (int64_t e = 0; e < n; e++) {
    float v = fabsf(a[e0 + e]);
    if (v > amax) amax = v;
  }
  float sa = amax / 127.0f, inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int64_t e = 0; e < s->block; e++) {
    float r = e < n ? nearbyintf(a[e0 + e] * inv) : 0.0f;
    q[e] = (int16_t)(r != r ? 0 : r > 127.0f ? 127 : r < -127.0f ? -127 : r); /* a NaN's code: 0 */
  }
  return sa;
}

float ol_qgemv_i8_quantize_block_sum(const ol_qgemv_shape *s, const float *a, int64_t j, int16_t *q, float *asum) {
  float sa = ol_qgemv_i8_quantize_block(s, a, j, q);
  int32_t sum = 0;
  for (int64_t e = 0; e < s->block; e++) sum += q[e];
  *asum = (float)sum;
  return sa;
}

void ol_qgemv_i8_prepare(const ol_qgemv_shape *s, const float *a, void *work) {
  const int64_t kb = ol_qgemv_blocks(s), nc = ol_qgemv_chunks(s), cc = chunk_codes(s->bits), ce = chunk_elems(s);
  const int fields = s->bits == 4 ? 4 : 2;
  int16_t *codes = work;
  float *sa = (float *)((char *)work + codes_bytes(s)), *asum = sa + kb;
  int16_t q[256];
  for (int64_t j = 0; j < kb; j++) {
    sa[j] = ol_qgemv_i8_quantize_block_sum(s, a, j, q, &asum[j]);
    for (int64_t c = 0; c < nc; c++) {
      int16_t *dst = codes + (j * nc + c) * cc;
      for (int k = 0; k < fields; k++)
        for (int l = 0; l < 8; l++) {
          int64_t e = fields * l + k;
          dst[8 * k + l] = e < ce ? q[c * ce + e] : 0;
        }
    }
  }
}

/* The exact integer dot products of one block of weight codes with the
 * block's codes of R prepared rows (p[r] + at), as four partial sums per row:
 * the weight fields are extracted once for all rows. */
OL_AI void block_dots(const int bits, const int NC, const int R, ptrdiff_t nc, const uint8_t *b,
                      const int16_t *const *p, ptrdiff_t at, ol_i32x4 *acc) {
  for (int r = 0; r < R; r++) acc[r] = ol_i32x4_splat(0);
  ptrdiff_t chunks = NC >= 0 ? 1 : nc;
  for (ptrdiff_t c = 0; c < chunks; c++, b += 16, at += bits == 4 ? 32 : 16) {
    ol_i32x4 v = NC == 0 ? ol_i32x4_load64_zero(b) : ol_i32x4_load(b);
    if (bits == 4) ol_qgemv_i8_chunk4(R, v, p, at, acc, ol_i16x8_splat(0x000f));
    else ol_qgemv_i8_chunk8(R, v, p, at, acc);
  }
}

/* R prepared rows, four outputs n..n+3: each weight block's fields are
 * extracted once for all rows; per row the integer sums are transposed so
 * that lane i is output n+i, and the float part runs four outputs wide (the
 * same operations in the same order as one output at a time). GIVEN: zero
 * points given (else 2^(bits-1)), a constant, so that no call sits in the
 * block loop (a call there spilled the integer sums). */
OL_AI void four_outputs(const int bits, const int NC, const int R, const bool GIVEN, const ol_qgemv_shape *s,
                        const int16_t *const *codes, const float *const *sa, const float *const *asum,
                        const uint8_t *B, const float *scales, const uint8_t *zp_u8, const float *zp_f,
                        const float *bias, int64_t n, float *y, int64_t ldy) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), blob = (ptrdiff_t)ol_qgemv_blob_bytes(s), nc = (ptrdiff_t)ol_qgemv_chunks(s);
  const ptrdiff_t block_codes = nc * (ptrdiff_t)chunk_codes(bits);
  const ol_f32x4 zdef = ol_f32x4_splat((float)(1 << (bits - 1)));
  const uint8_t *b = B + n * kb * blob;
  const float *sc = scales + n * kb;
  ol_f32x4 acc[4];
  for (int r = 0; r < R; r++) acc[r] = ol_f32x4_zero();
  for (ptrdiff_t j = 0; j < kb; j++) {
    ol_i32x4 d[4][4]; /* [output][row] */
    for (int o = 0; o < 4; o++) block_dots(bits, NC, R, nc, b + (o * kb + j) * blob, codes, j * block_codes, d[o]);
    ol_f32x4 z = GIVEN ? ol_f32x4_set(ol_qgemv_given_zero_point(bits, kb, zp_u8, zp_f, n, j),
                                      ol_qgemv_given_zero_point(bits, kb, zp_u8, zp_f, n + 1, j),
                                      ol_qgemv_given_zero_point(bits, kb, zp_u8, zp_f, n + 2, j),
                                      ol_qgemv_given_zero_point(bits, kb, zp_u8, zp_f, n + 3, j))
                       : zdef;
    ol_f32x4 sw = ol_f32x4_set(sc[j], sc[kb + j], sc[2 * kb + j], sc[3 * kb + j]);
    for (int r = 0; r < R; r++) {
      ol_i32x4 s01 = ol_i32x4_add(ol_i32x4_zip_lo(d[0][r], d[1][r]), ol_i32x4_zip_hi(d[0][r], d[1][r]));
      ol_i32x4 s23 = ol_i32x4_add(ol_i32x4_zip_lo(d[2][r], d[3][r]), ol_i32x4_zip_hi(d[2][r], d[3][r]));
      ol_i32x4 isum = ol_i32x4_add(ol_i64x2_zip_lo(s01, s23), ol_i64x2_zip_hi(s01, s23));
      ol_f32x4 w = ol_f32x4_mul(ol_f32x4_splat(sa[r][j]), sw);
      ol_f32x4 dz = ol_f32x4_sub(ol_i32x4_to_f32x4(isum), ol_f32x4_mul(z, ol_f32x4_splat(asum[r][j])));
      acc[r] = ol_f32x4_add(acc[r], ol_f32x4_mul(dz, w));
    }
  }
  for (int r = 0; r < R; r++) {
    if (bias) acc[r] = ol_f32x4_add(acc[r], ol_f32x4_load(bias + n));
    ol_f32x4_store(y + r * ldy, acc[r]);
  }
}

/* y[r * ldy + n - n0] for R prepared rows (works[r]) and n in [n0, n1). */
OL_AI void rows(const int bits, const int NC, const int R, const bool GIVEN, const ol_qgemv_shape *s, const void *const *works,
                const uint8_t *B, const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                int64_t n0, int64_t n1, float *y, int64_t ldy) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), blob = (ptrdiff_t)ol_qgemv_blob_bytes(s), nc = (ptrdiff_t)ol_qgemv_chunks(s);
  const ptrdiff_t block_codes = nc * (ptrdiff_t)chunk_codes(bits);
  const int16_t *codes[4];
  const float *sa[4], *asum[4];
  for (int r = 0; r < R; r++) {
    codes[r] = works[r];
    sa[r] = (const float *)((const char *)works[r] + codes_bytes(s));
    asum[r] = sa[r] + kb;
  }
  const float zdef = (float)(1 << (bits - 1));
  int64_t n = n0;
  for (; n + 4 <= n1; n += 4)
    four_outputs(bits, NC, R, GIVEN, s, codes, sa, asum, B, scales, zp_u8, zp_f, bias, n, y + n - n0, ldy);
  for (; n < n1; n++) {
    const uint8_t *b0 = B + n * kb * blob;
    const float *s0 = scales + n * kb;
    float acc[4] = {0.0f, 0.0f, 0.0f, 0.0f};
    for (ptrdiff_t j = 0; j < kb; j++) {
      ol_i32x4 d[4];
      block_dots(bits, NC, R, nc, b0 + j * blob, codes, j * block_codes, d);
      float z = GIVEN ? ol_qgemv_given_zero_point(bits, kb, zp_u8, zp_f, n, j) : zdef;
      for (int r = 0; r < R; r++) {
        int32_t isum = (ol_i32x4_lane(d[r], 0) + ol_i32x4_lane(d[r], 1)) + (ol_i32x4_lane(d[r], 2) + ol_i32x4_lane(d[r], 3));
        acc[r] = acc[r] + ((float)isum - z * asum[r][j]) * (sa[r][j] * s0[j]);
      }
    }
    for (int r = 0; r < R; r++) y[r * ldy + n - n0] = bias ? acc[r] + bias[n] : acc[r];
  }
}

#define OL_QGEMV_I8_ROWS(R, GIVEN)                                                                        \
  do {                                                                                                    \
    if (s->bits == 4) {                                                                                   \
      if (blob == 8) rows(4, 0, R, GIVEN, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);        \
      else if (blob == 16) rows(4, 1, R, GIVEN, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);  \
      else rows(4, -1, R, GIVEN, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);                 \
    } else {                                                                                              \
      if (blob == 16) rows(8, 1, R, GIVEN, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);       \
      else rows(8, -1, R, GIVEN, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);                 \
    }                                                                                                     \
  } while (0)
#define OL_QGEMV_I8_DISPATCH(R)                           \
  do {                                                    \
    if (zp_u8 || zp_f) OL_QGEMV_I8_ROWS(R, true);         \
    else OL_QGEMV_I8_ROWS(R, false);                      \
  } while (0)

void ol_qgemv_i8_nbits_rows(const ol_qgemv_shape *s, const void *const *works, int nrows, const uint8_t *B,
                            const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                            int64_t n0, int64_t n1, float *y, int64_t ldy) {
  int64_t blob = ol_qgemv_blob_bytes(s);
  /* pairs of rows: measured fastest (four rows at once spill the 16 vector
   * registers: 8x4 integer sums plus the weight fields) */
  while (nrows >= 2) {
    OL_QGEMV_I8_DISPATCH(2);
    works += 2, nrows -= 2, y += 2 * ldy;
  }
  if (nrows == 1) OL_QGEMV_I8_DISPATCH(1);
}

void ol_qgemv_i8_nbits(const ol_qgemv_shape *s, const void *work, const uint8_t *B, const float *scales,
                       const uint8_t *zp_u8, const float *zp_f, const float *bias, int64_t n0, int64_t n1,
                       float *y) {
  ol_qgemv_i8_nbits_rows(s, &work, 1, B, scales, zp_u8, zp_f, bias, n0, n1, y, 0);
}

/* ------------------------------------------------------------ reference */

void ol_qgemv_i8_nbits_scalar(const ol_qgemv_shape *s, const float *a, const uint8_t *B, const float *scales,
                              const uint8_t *zp_u8, const float *zp_f, const float *bias, float *y) {
  const int64_t kb = ol_qgemv_blocks(s), blob = ol_qgemv_blob_bytes(s);
  int16_t q[256];
  for (int64_t n = 0; n < s->N; n++) {
    float acc = 0.0f;
    for (int64_t j = 0; j < kb; j++) {
      float sa = ol_qgemv_i8_quantize_block(s, a, j, q);
      int32_t isum = 0, asum = 0;
      for (int64_t e = 0; e < s->block; e++) {
        const uint8_t *blk = B + (n * kb + j) * blob;
        int32_t code = s->bits == 8 ? blk[e] : (e & 1) ? blk[e / 2] >> 4 : blk[e / 2] & 15;
        isum += q[e] * code;
        asum += q[e];
      }
      float z = ol_qgemv_zero_point(s, zp_u8, zp_f, n, j);
      acc = acc + ((float)isum - z * (float)asum) * (sa * scales[n * kb + j]);
    }
    if (bias) acc = acc + bias[n];
    y[n] = acc;
  }
}
