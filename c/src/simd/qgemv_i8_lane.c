/* MatMulNBits GEMV with int8 activations, lane per output: see
 * qgemv_i8_lane.h. A 16-byte chunk holds one 4-byte word of four outputs;
 * its 16-bit lane 2i+h holds bytes 2h, 2h+1 of output i's word, i.e. block
 * elements E*c + F*h + k in field k (bits F*k.. of the lane: F = 16 / bits
 * fields, E = 2F elements per chunk; 4 bits: element 2b in the low nibble
 * of byte b). The prepared activation vector of chunk c, field k holds in
 * lane 2i+h the code of that element, the same for every i;
 * i32x4.dot_i16x8 sums h = 0, 1 exactly, so i32 lane i accumulates output
 * i's integer block sum. The float part is that of qgemv_i8.c, four outputs
 * wide, in the same order. A group of eight outputs is two such halves side
 * by side (32 bytes per chunk) that share each chunk's activation vectors;
 * several rows of A run one after the other on each group. */
#include "simd/qgemv_i8_lane.h"

#include <stdbool.h>
#include <string.h>

#include "core/value.h" /* OL_LANE_GROUP */
#include "simd/qgemv_i8.h"
#include "simd/vec.h"

#define OL_AI static inline __attribute__((always_inline))

/* per chunk F vectors of 8 codes: 4 * block int16 per block for either width */
static size_t codes_bytes(const ol_qgemv_shape *s) {
  return sizeof(int16_t) * 4 * (size_t)(ol_qgemv_blocks(s) * s->block);
}

size_t ol_qgemv_i8_lane_work_bytes(const ol_qgemv_shape *s) {
  return codes_bytes(s) + 2 * sizeof(float) * (size_t)ol_qgemv_blocks(s);
}

void ol_qgemv_i8_lane_prepare(const ol_qgemv_shape *s, const float *a, void *work) {
  const int64_t kb = ol_qgemv_blocks(s), cpb = ol_qgemv_blob_bytes(s) / 4;
  const int F = 16 / s->bits, E = 2 * F;
  int16_t *codes = work;
  float *sa = (float *)((char *)work + codes_bytes(s)), *asum = sa + kb;
  int16_t q[256];
  for (int64_t j = 0; j < kb; j++) {
    sa[j] = ol_qgemv_i8_quantize_block(s, a, j, q);
    int32_t sum = 0;
    for (int64_t e = 0; e < s->block; e++) sum += q[e];
    asum[j] = (float)sum;
    for (int64_t c = 0; c < cpb; c++)
      for (int k = 0; k < F; k++) {
        int16_t *dst = codes + ((j * cpb + c) * F + k) * 8;
        for (int l = 0; l < 8; l++) dst[l] = q[E * c + F * (l & 1) + k];
      }
  }
}

/* output n's zero point of block j (ol_qgemv_zero_point, inlined) */
OL_AI float zero_point(const int bits, ptrdiff_t kb, const uint8_t *zp_u8, const float *zp_f, int64_t n, ptrdiff_t j) {
  if (zp_f) return zp_f[n * kb + j];
  ptrdiff_t zrow = (kb * bits + 7) / 8;
  if (bits == 4) {
    uint8_t b = zp_u8[n * zrow + j / 2];
    return (float)((j & 1) ? b >> 4 : b & 15);
  }
  return (float)zp_u8[n * zrow + j];
}

/* The integer block sums of four outputs side by side for R prepared rows
 * (codes from at), 4 bits: one 16-byte chunk of weights v. */
OL_AI void chunk4(const int R, ol_i32x4 v, const int16_t *const *codes, ptrdiff_t at, ol_i32x4 *d) {
  const ol_i32x4 low4 = ol_i16x8_splat(0x000f);
  ol_i32x4 f0 = ol_i32x4_and(v, low4), f1 = ol_i32x4_and(ol_u16x8_shr(v, 4), low4);
  ol_i32x4 f2 = ol_i32x4_and(ol_u16x8_shr(v, 8), low4), f3 = ol_u16x8_shr(v, 12);
  for (int r = 0; r < R; r++) {
    const int16_t *q = codes[r] + at;
    ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(f0, ol_i32x4_load(q)), ol_i32x4_dot_i16x8(f1, ol_i32x4_load(q + 8)));
    ol_i32x4 d23 = ol_i32x4_add(ol_i32x4_dot_i16x8(f2, ol_i32x4_load(q + 16)), ol_i32x4_dot_i16x8(f3, ol_i32x4_load(q + 24)));
    d[r] = ol_i32x4_add(d[r], ol_i32x4_add(d01, d23));
  }
}

/* The same for 8 bits. */
OL_AI void chunk8(const int R, ol_i32x4 v, const int16_t *const *codes, ptrdiff_t at, ol_i32x4 *d) {
  const ol_i32x4 low8 = ol_i16x8_splat(0x00ff);
  ol_i32x4 f0 = ol_i32x4_and(v, low8), f1 = ol_u16x8_shr(v, 8);
  for (int r = 0; r < R; r++) {
    const int16_t *q = codes[r] + at;
    d[r] = ol_i32x4_add(d[r], ol_i32x4_add(ol_i32x4_dot_i16x8(f0, ol_i32x4_load(q)),
                                           ol_i32x4_dot_i16x8(f1, ol_i32x4_load(q + 8))));
  }
}

/* acc[r] = acc[r] + ((float)d[r] - z * asum_j) * (sa_j * sw), four outputs
 * wide: the order of qgemv_i8.c per output. */
OL_AI void block_epilogue(const int R, const ol_i32x4 *d, ol_f32x4 z, ol_f32x4 sw, const float *const *sa,
                          const float *const *asum, ptrdiff_t j, ol_f32x4 *acc) {
  for (int r = 0; r < R; r++) {
    ol_f32x4 w = ol_f32x4_mul(ol_f32x4_splat(sa[r][j]), sw);
    ol_f32x4 dz = ol_f32x4_sub(ol_i32x4_to_f32x4(d[r]), ol_f32x4_mul(z, ol_f32x4_splat(asum[r][j])));
    acc[r] = ol_f32x4_add(acc[r], ol_f32x4_mul(dz, w));
  }
}

/* The zero points of outputs n .. n+m-1 (m <= 4) of block j (lanes past m: 0). */
OL_AI ol_f32x4 zero_points(const int bits, ptrdiff_t kb, const uint8_t *zp_u8, const float *zp_f, int64_t n, int m,
                           ptrdiff_t j) {
  float zz[4] = {0, 0, 0, 0};
  for (int i = 0; i < m; i++) zz[i] = zero_point(bits, kb, zp_u8, zp_f, n + i, j);
  return ol_f32x4_set(zz[0], zz[1], zz[2], zz[3]);
}

/* One prepared row, the m (<= 4) outputs n.. of the dense tail (rows from b
 * and sc, their chunks gathered side by side): the operations of group1 per
 * output. Four lanes are written to y (lanes past m from zero weights). */
OL_AI void tail_half(const int bits, const bool GIVEN, const ol_qgemv_shape *s, const int16_t *const *codes,
                     const float *const *sa, const float *const *asum, const uint8_t *b, const float *sc,
                     const uint8_t *zp_u8, const float *zp_f, int64_t n, int m, float *y) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), blob = (ptrdiff_t)ol_qgemv_blob_bytes(s), cpb = blob / 4;
  const int F = 16 / bits;
  const ol_f32x4 zdef = ol_f32x4_splat((float)(1 << (bits - 1)));
  ol_f32x4 acc = ol_f32x4_zero();
  ptrdiff_t at = 0; /* codes of chunk (j, c) at (j * cpb + c) * 8F */
  for (ptrdiff_t j = 0; j < kb; j++) {
    ol_i32x4 d = ol_i32x4_splat(0);
    for (ptrdiff_t c = 0; c < cpb; c++, at += 8 * F) {
      uint8_t t[16] = {0};
      for (int i = 0; i < m; i++) memcpy(t + 4 * i, b + (i * kb + j) * blob + 4 * c, 4);
      if (bits == 4) chunk4(1, ol_i32x4_load(t), codes, at, &d);
      else chunk8(1, ol_i32x4_load(t), codes, at, &d);
    }
    float ss[4] = {0, 0, 0, 0};
    for (int i = 0; i < m; i++) ss[i] = sc[i * kb + j];
    ol_f32x4 z = GIVEN ? zero_points(bits, kb, zp_u8, zp_f, n, m, j) : zdef;
    block_epilogue(1, &d, z, ol_f32x4_set(ss[0], ss[1], ss[2], ss[3]), sa, asum, j, &acc);
  }
  ol_f32x4_store(y, acc);
}

/* One row, a whole group of eight outputs n..n+7 (b, sc: the group's
 * weights and scales): each chunk's activation vectors are loaded once for
 * both halves. Per output: the operations and order of qgemv_i8.c. */
OL_AI void group1(const int bits, const bool GIVEN, const ol_qgemv_shape *s, const int16_t *const *codes,
                  const float *const *sa, const float *const *asum, const uint8_t *b, const float *sc,
                  const uint8_t *zp_u8, const float *zp_f, int64_t n, float *y) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), blob = (ptrdiff_t)ol_qgemv_blob_bytes(s), cpb = blob / 4;
  const int F = 16 / bits;
  const ol_f32x4 zdef = ol_f32x4_splat((float)(1 << (bits - 1)));
  const ol_i32x4 low4 = ol_i16x8_splat(0x000f), low8 = ol_i16x8_splat(0x00ff);
  ol_f32x4 acc[2] = {ol_f32x4_zero(), ol_f32x4_zero()};
  const int16_t *q = codes[0];
  for (ptrdiff_t j = 0; j < kb; j++) {
    ol_i32x4 d[2] = {ol_i32x4_splat(0), ol_i32x4_splat(0)};
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
    for (ptrdiff_t c = 0; c < cpb; c++, q += 8 * F, b += 32) {
      if (bits == 4) {
        ol_i32x4 a0 = ol_i32x4_load(q), a1 = ol_i32x4_load(q + 8), a2 = ol_i32x4_load(q + 16), a3 = ol_i32x4_load(q + 24);
        for (int h = 0; h < 2; h++) {
          ol_i32x4 v = ol_i32x4_load(b + 16 * h);
          ol_i32x4 f0 = ol_i32x4_and(v, low4), f1 = ol_i32x4_and(ol_u16x8_shr(v, 4), low4);
          ol_i32x4 f2 = ol_i32x4_and(ol_u16x8_shr(v, 8), low4), f3 = ol_u16x8_shr(v, 12);
          ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(f0, a0), ol_i32x4_dot_i16x8(f1, a1));
          ol_i32x4 d23 = ol_i32x4_add(ol_i32x4_dot_i16x8(f2, a2), ol_i32x4_dot_i16x8(f3, a3));
          d[h] = ol_i32x4_add(d[h], ol_i32x4_add(d01, d23));
        }
      } else {
        ol_i32x4 a0 = ol_i32x4_load(q), a1 = ol_i32x4_load(q + 8);
        for (int h = 0; h < 2; h++) {
          ol_i32x4 v = ol_i32x4_load(b + 16 * h);
          ol_i32x4 f0 = ol_i32x4_and(v, low8), f1 = ol_u16x8_shr(v, 8);
          d[h] = ol_i32x4_add(d[h], ol_i32x4_add(ol_i32x4_dot_i16x8(f0, a0), ol_i32x4_dot_i16x8(f1, a1)));
        }
      }
    }
    for (int h = 0; h < 2; h++) {
      ol_f32x4 z = GIVEN ? zero_points(bits, kb, zp_u8, zp_f, n + 4 * h, 4, j) : zdef;
      block_epilogue(1, &d[h], z, ol_f32x4_load(sc + 8 * j + 4 * h), sa, asum, j, &acc[h]);
    }
  }
  ol_f32x4_store(y, acc[0]);
  ol_f32x4_store(y + 4, acc[1]);
}

/* All nrows prepared rows, n in [n0, n1): group by group, each row in turn
 * (one row at a time is the fastest form of the kernel, and a group's
 * weights stay in the first-level cache for the next rows). */
OL_AI void rows(const int bits, const bool GIVEN, const ol_qgemv_shape *s, const void *const *works, int nrows,
                const uint8_t *B, const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                int64_t n0, int64_t n1, float *y, int64_t ldy) {
  const int64_t G = OL_LANE_GROUP, kb = ol_qgemv_blocks(s), blob = ol_qgemv_blob_bytes(s), nG = s->N / G * G;
  for (int64_t g0 = n0 / G * G; g0 < n1; g0 += G) {
    const bool tail = g0 >= nG, whole = !tail && g0 >= n0 && g0 + G <= n1;
    const int m = tail ? (int)(s->N - g0) : (int)G;
    const uint8_t *b = B + g0 * kb * blob;
    const float *sc = scales + g0 * kb;
    for (int r = 0; r < nrows; r++) {
      const int16_t *codes[1] = {works[r]};
      const float *sa[1] = {(const float *)((const char *)works[r] + codes_bytes(s))}, *asum[1] = {sa[0] + kb};
      float t[OL_LANE_GROUP];
      float *dst = whole ? y + r * ldy + (g0 - n0) : t; /* a whole group straight to y */
      if (!tail) {
        group1(bits, GIVEN, s, codes, sa, asum, b, sc, zp_u8, zp_f, g0, dst);
      } else {
        tail_half(bits, GIVEN, s, codes, sa, asum, b, sc, zp_u8, zp_f, g0, m < 4 ? m : 4, dst);
        if (m > 4)
          tail_half(bits, GIVEN, s, codes, sa, asum, b + 4 * kb * blob, sc + 4 * kb, zp_u8, zp_f, g0 + 4, m - 4, dst + 4);
      }
      if (whole) {
        if (bias)
          for (int h = 0; h < 2; h++)
            ol_f32x4_store(dst + 4 * h, ol_f32x4_add(ol_f32x4_load(dst + 4 * h), ol_f32x4_load(bias + g0 + 4 * h)));
        continue;
      }
      for (int64_t n = g0 > n0 ? g0 : n0; n < g0 + m && n < n1; n++)
        y[r * ldy + n - n0] = bias ? t[n - g0] + bias[n] : t[n - g0];
    }
  }
}

void ol_qgemv_i8_lane_rows(const ol_qgemv_shape *s, const void *const *works, int nrows, const uint8_t *B,
                           const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                           int64_t n0, int64_t n1, float *y, int64_t ldy) {
  const bool given = zp_u8 || zp_f;
  if (s->bits == 4) {
    if (given) rows(4, true, s, works, nrows, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);
    else rows(4, false, s, works, nrows, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);
  } else {
    if (given) rows(8, true, s, works, nrows, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);
    else rows(8, false, s, works, nrows, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);
  }
}
