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

#include "simd/vec.h"

#define OL_AI static inline __attribute__((always_inline))

static int64_t nblocks(const ol_qgemv_shape *s) { return (s->K + s->block - 1) / s->block; }
static int64_t blob_bytes(const ol_qgemv_shape *s) { return s->block * s->bits / 8; }
/* 16-byte chunks per block (one 8-byte chunk for 4-bit blocks of 16) */
static int64_t nchunks(const ol_qgemv_shape *s) {
  int64_t b = blob_bytes(s);
  return b >= 16 ? b / 16 : 1;
}
/* block elements per chunk, and int16 codes stored per chunk (8 lanes x fields) */
static int64_t chunk_elems(const ol_qgemv_shape *s) { return s->bits == 4 ? (s->block < 32 ? s->block : 32) : 16; }
static int64_t chunk_codes(int bits) { return bits == 4 ? 32 : 16; }

static size_t codes_bytes(const ol_qgemv_shape *s) {
  return sizeof(int16_t) * (size_t)(nblocks(s) * nchunks(s) * chunk_codes(s->bits));
}

size_t ol_qgemv_i8_work_bytes(const ol_qgemv_shape *s) { return codes_bytes(s) + 2 * sizeof(float) * (size_t)nblocks(s); }

/* block j's scale and rounded codes (its elements past K are zero) */
static float quantize_block(const ol_qgemv_shape *s, const float *a, int64_t j, int16_t *q) {
  int64_t e0 = j * s->block, n = s->K - e0 < s->block ? s->K - e0 : s->block;
  float amax = 0.0f;
  for (int64_t e = 0; e < n; e++) {
    float v = fabsf(a[e0 + e]);
    if (v > amax) amax = v;
  }
  float sa = amax / 127.0f;
  for (int64_t e = 0; e < s->block; e++) {
    float r = e < n && sa > 0.0f ? nearbyintf(a[e0 + e] / sa) : 0.0f;
    q[e] = (int16_t)(r > 127.0f ? 127 : r < -127.0f ? -127 : r);
  }
  return sa;
}

void ol_qgemv_i8_prepare(const ol_qgemv_shape *s, const float *a, void *work) {
  const int64_t kb = nblocks(s), nc = nchunks(s), cc = chunk_codes(s->bits), ce = chunk_elems(s);
  const int fields = s->bits == 4 ? 4 : 2;
  int16_t *codes = work;
  float *sa = (float *)((char *)work + codes_bytes(s)), *asum = sa + kb;
  int16_t q[256];
  for (int64_t j = 0; j < kb; j++) {
    sa[j] = quantize_block(s, a, j, q);
    int32_t sum = 0;
    for (int64_t e = 0; e < s->block; e++) sum += q[e];
    asum[j] = (float)sum;
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

/* the exact integer dot product of one block of codes with one row's block */
OL_AI ol_i32x4 block_dot(const int bits, const int NC, ptrdiff_t nc, const uint8_t *b, const int16_t *p) {
  const ol_i32x4 low4 = ol_i16x8_splat(0x000f), low8 = ol_i16x8_splat(0x00ff);
  ol_i32x4 acc = ol_i32x4_splat(0);
  ptrdiff_t chunks = NC >= 0 ? 1 : nc;
  for (ptrdiff_t c = 0; c < chunks; c++, b += 16, p += bits == 4 ? 32 : 16) {
    ol_i32x4 v = NC == 0 ? ol_i32x4_load64_zero(b) : ol_i32x4_load(b);
    if (bits == 4) {
      ol_i32x4 f0 = ol_i32x4_and(v, low4), f1 = ol_i32x4_and(ol_u16x8_shr(v, 4), low4);
      ol_i32x4 f2 = ol_i32x4_and(ol_u16x8_shr(v, 8), low4), f3 = ol_u16x8_shr(v, 12);
      ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(f0, ol_i32x4_load(p)), ol_i32x4_dot_i16x8(f1, ol_i32x4_load(p + 8)));
      ol_i32x4 d23 = ol_i32x4_add(ol_i32x4_dot_i16x8(f2, ol_i32x4_load(p + 16)), ol_i32x4_dot_i16x8(f3, ol_i32x4_load(p + 24)));
      acc = ol_i32x4_add(acc, ol_i32x4_add(d01, d23));
    } else {
      ol_i32x4 f0 = ol_i32x4_and(v, low8), f1 = ol_u16x8_shr(v, 8);
      acc = ol_i32x4_add(acc, ol_i32x4_add(ol_i32x4_dot_i16x8(f0, ol_i32x4_load(p)), ol_i32x4_dot_i16x8(f1, ol_i32x4_load(p + 8))));
    }
  }
  return acc;
}

OL_AI int32_t hsum_i32(ol_i32x4 v) { return (ol_i32x4_lane(v, 0) + ol_i32x4_lane(v, 1)) + (ol_i32x4_lane(v, 2) + ol_i32x4_lane(v, 3)); }

OL_AI void rows(const int bits, const int NC, const ol_qgemv_shape *s, const void *work, const uint8_t *B,
                const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias, int64_t n0,
                int64_t n1, float *y) {
  const ptrdiff_t kb = (ptrdiff_t)nblocks(s), blob = (ptrdiff_t)blob_bytes(s), nc = (ptrdiff_t)nchunks(s);
  const ptrdiff_t block_codes = nc * (ptrdiff_t)chunk_codes(bits);
  const int16_t *codes = work;
  const float *sa = (const float *)((const char *)work + codes_bytes(s)), *asum = sa + kb;
  const float zdef = (float)(1 << (bits - 1));
  const bool given = zp_u8 || zp_f;
  int64_t n = n0;
  for (; n + 2 <= n1; n += 2) {
    const uint8_t *b0 = B + n * kb * blob, *b1 = b0 + kb * blob;
    const float *s0 = scales + n * kb, *s1 = s0 + kb;
    float acc0 = 0.0f, acc1 = 0.0f;
    for (ptrdiff_t j = 0; j < kb; j++) {
      const int16_t *p = codes + j * block_codes;
      int32_t i0 = hsum_i32(block_dot(bits, NC, nc, b0 + j * blob, p));
      int32_t i1 = hsum_i32(block_dot(bits, NC, nc, b1 + j * blob, p));
      float z0 = given ? ol_qgemv_zero_point(s, zp_u8, zp_f, n, j) : zdef;
      float z1 = given ? ol_qgemv_zero_point(s, zp_u8, zp_f, n + 1, j) : zdef;
      acc0 = acc0 + ((float)i0 - z0 * asum[j]) * (sa[j] * s0[j]);
      acc1 = acc1 + ((float)i1 - z1 * asum[j]) * (sa[j] * s1[j]);
    }
    if (bias) acc0 = acc0 + bias[n], acc1 = acc1 + bias[n + 1];
    y[n - n0] = acc0;
    y[n + 1 - n0] = acc1;
  }
  for (; n < n1; n++) {
    const uint8_t *b0 = B + n * kb * blob;
    const float *s0 = scales + n * kb;
    float acc0 = 0.0f;
    for (ptrdiff_t j = 0; j < kb; j++) {
      int32_t i0 = hsum_i32(block_dot(bits, NC, nc, b0 + j * blob, codes + j * block_codes));
      float z0 = given ? ol_qgemv_zero_point(s, zp_u8, zp_f, n, j) : zdef;
      acc0 = acc0 + ((float)i0 - z0 * asum[j]) * (sa[j] * s0[j]);
    }
    if (bias) acc0 = acc0 + bias[n];
    y[n - n0] = acc0;
  }
}

void ol_qgemv_i8_nbits(const ol_qgemv_shape *s, const void *work, const uint8_t *B, const float *scales,
                       const uint8_t *zp_u8, const float *zp_f, const float *bias, int64_t n0, int64_t n1,
                       float *y) {
  int64_t blob = blob_bytes(s);
  if (s->bits == 4) {
    if (blob == 8) rows(4, 0, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
    else if (blob == 16) rows(4, 1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
    else rows(4, -1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
  } else {
    if (blob == 16) rows(8, 1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
    else rows(8, -1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
  }
}

/* ------------------------------------------------------------ reference */

void ol_qgemv_i8_nbits_scalar(const ol_qgemv_shape *s, const float *a, const uint8_t *B, const float *scales,
                              const uint8_t *zp_u8, const float *zp_f, const float *bias, float *y) {
  const int64_t kb = nblocks(s), blob = blob_bytes(s);
  int16_t q[256];
  for (int64_t n = 0; n < s->N; n++) {
    float acc = 0.0f;
    for (int64_t j = 0; j < kb; j++) {
      float sa = quantize_block(s, a, j, q);
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
