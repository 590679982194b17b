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
 * by side (32 bytes per chunk). Both groups of a pair (whose blocks the
 * layout alternates) go in one pass where both are in range: with one row
 * their four halves share each chunk's activation vectors, with more rows
 * a half of each group is read per pass, so that every pass reads the
 * pair's bytes in address order.
 *
 * 4-bit codes where the 8-bit dot is one instruction (OL_VEC_DOT_I8: the
 * relaxed wasm build, SSSE3 natively): byte b of output i's word holds
 * elements 8c + 2b (low nibble) and 8c + 2b + 1 (high nibble), so the
 * chunk's low and high nibbles, kept as bytes 0..15, meet two prepared
 * vectors of int8 codes whose byte 4i + b is that element's code (the same
 * for every i). ol_i16x8_dot_i8x16_u7 sums byte pairs into 16-bit lanes,
 * added up over at most four chunks (per lane 16 products of at most
 * 15 * 127: |sum| <= 30480, no overflow), then widened, each output's two
 * 16-bit lanes into its i32 lane: the same exact integer sums. (The 8-bit
 * dot into 32 bits with its add, i32x4.relaxed_dot_i8x16_i7x16_add_s, is
 * three instructions in V8 on x86 without AVX-VNNI and measured no faster
 * than SIMD128 here; the 16-bit one is one pmaddubsw.) With the default
 * zero point 8, the one-row kernel starts each span's 16-bit sums at
 * -8 times the span's codes in that lane (prepared), so that they end as
 * sum (w - 8) * a (|lane| <= 16 * 8 * 127: no overflow at the end, and
 * wrapping on the way is exact): the integer (float)d - 8 * asum is, the
 * same bits without the float subtraction.
 *
 * 8-bit codes (every build): 16-bit lane 2i+h holds two codes of output i,
 * w0 (low byte, element 4c + 2h) and w1 (high byte, stored XOR 0x80: the
 * lane read as int16 is v = w0 + 256 * (w1 - 128) exactly). With the
 * prepared lanes x0 = a0 and x1 = a1 - 256 * a0 (|x1| <= 32639: int16),
 * v * x0 + (v >> 8) * x1 = w0 * a0 + (w1 - 128) * a1: two 16-bit dot
 * products and one arithmetic shift per chunk, no masking. So the block's
 * integer sum d is sum w * a - 128 * ahi (ahi: the block's codes at odd
 * elements, asum - alo), and with the default zero point 128
 * ((float)d - 128 * alo) is the exact integer the formula's
 * (float)sum w * a - 128 * asum is (every term below 2^24: the same bits);
 * a given zero point z takes (float)d + 128 * ahi = (float)sum w * a
 * (exact) first, then the formula. */
#include "simd/qgemv_i8_lane.h"

#include <stdbool.h>
#include <string.h>

#include "simd/qgemv_i8.h"
#include "simd/qgemv_i8_chunk.h"
#include "simd/vec.h"

/* 4-bit codes on 8-bit dot products (see above) */
#define DOT8(bits) ((bits) == 4 && OL_VEC_DOT_I8)

/* int16 units of prepared codes per chunk: F vectors of 8 int16, or two of
 * 16 int8 for DOT8 */
#define CHUNK_CODES(bits) (DOT8(bits) ? 16 : 8 * (16 / (bits)))

/* per chunk at most F vectors of 8 codes: 4 * block int16 per block for either width */
static size_t codes_bytes(const ol_qgemv_shape *s) {
  return sizeof(int16_t) * 4 * (size_t)(ol_qgemv_blocks(s) * s->block);
}

/* DOT8: chunks summed in 16 bits before widening (see above) */
#define DOT8_SPAN 4

/* DOT8: spans per block */
static int64_t spans(const ol_qgemv_shape *s) { return (ol_qgemv_blob_bytes(s) / 4 + DOT8_SPAN - 1) / DOT8_SPAN; }

/* after the codes, per block: sa, asum, alo (the codes at even elements);
 * DOT8: then per block and span the 16-bit start of the sums (see above) */
size_t ol_qgemv_i8_lane_work_bytes(const ol_qgemv_shape *s) {
  size_t starts = DOT8(s->bits) ? 16 * (size_t)(ol_qgemv_blocks(s) * spans(s)) : 0;
  return codes_bytes(s) + 3 * sizeof(float) * (size_t)ol_qgemv_blocks(s) + starts;
}

/* a code's byte and a 16-bit lane, as the low bits of a 32-bit word */
static inline uint32_t byte(int16_t v) { return (uint8_t)v; }
static inline uint32_t lane16(int32_t v) { return (uint16_t)v; }

void ol_qgemv_i8_lane_prepare(const ol_qgemv_shape *s, const float *a, void *work) {
  const int64_t kb = ol_qgemv_blocks(s), cpb = ol_qgemv_blob_bytes(s) / 4;
  const int F = 16 / s->bits, E = 2 * F;
  int16_t *codes = work;
  float *sa = (float *)((char *)work + codes_bytes(s)), *asum = sa + kb, *alo = asum + kb;
  int16_t q[256];
  for (int64_t j = 0; j < kb; j++) {
    sa[j] = ol_qgemv_i8_quantize_block_sum(s, a, j, q, &asum[j]);
    int32_t even = 0;
    for (int64_t e = 0; e < s->block; e += 2) even += q[e];
    alo[j] = (float)even;
    if (DOT8(s->bits)) {
      /* Each 16 bytes below repeat one 4-byte pattern (the same for the
       * four outputs of a chunk), so they are written as a splatted
       * 32-bit word: a decoder prepares every projection's input once per
       * token, and byte by byte this took a tenth of the kernel's time. */
      /* span t's start: lane 2i + h = -8 * the codes that lane sums
       * (elements 8c + 4h .. 8c + 4h + 3 of its chunks c) */
      int16_t *start = (int16_t *)(alo + kb) + 8 * j * spans(s);
      for (int64_t c0 = 0, t = 0; c0 < cpb; c0 += DOT8_SPAN, t++) {
        int32_t sum[2] = {0, 0};
        for (int h = 0; h < 2; h++)
          for (int64_t c = c0; c < c0 + DOT8_SPAN && c < cpb; c++)
            for (int e = 0; e < 4; e++) sum[h] += q[8 * c + 4 * h + e];
        ol_i32x4_store(start + 8 * t, ol_i32x4_splat((int32_t)(lane16(-8 * sum[0]) | lane16(-8 * sum[1]) << 16)));
      }
      /* chunk c: 16 bytes of the low nibbles' codes (byte 4i + b: element
       * 8c + 2b), then 16 of the high (element 8c + 2b + 1) */
      for (int64_t c = 0; c < cpb; c++) {
        int16_t *dst = codes + (j * cpb + c) * CHUNK_CODES(4);
        const int16_t *e = q + 8 * c;
        ol_i32x4_store(dst, ol_i32x4_splat((int32_t)(byte(e[0]) | byte(e[2]) << 8 | byte(e[4]) << 16 | byte(e[6]) << 24)));
        ol_i32x4_store(dst + 8, ol_i32x4_splat((int32_t)(byte(e[1]) | byte(e[3]) << 8 | byte(e[5]) << 16 | byte(e[7]) << 24)));
      }
      continue;
    }
    /* lanes 2l and 2l + 1 of vector (c, k): the codes of elements E c + k
     * and E c + F + k, the same pair in all four 32-bit lanes; 8 bits,
     * k = 1: x1 = a1 - 256 * a0 (see above) */
    for (int64_t c = 0; c < cpb; c++)
      for (int k = 0; k < F; k++) {
        int e0 = (int)(E * c + k), e1 = e0 + F;
        int16_t x0 = q[e0], x1 = q[e1];
        if (s->bits == 8 && k == 1) x0 = (int16_t)(x0 - 256 * q[e0 - 1]), x1 = (int16_t)(x1 - 256 * q[e1 - 1]);
        ol_i32x4_store(codes + ((j * cpb + c) * F + k) * 8, ol_i32x4_splat((int32_t)(lane16(x0) | lane16(x1) << 16)));
      }
  }
}

/* DOT8: the chunk's 16-bit sums from its low nibbles (lo) and high nibbles
 * (hi), 0..15 as bytes, and the prepared codes a_lo, a_hi */
OL_AI ol_i32x4 dot8_chunk(ol_i32x4 a_lo, ol_i32x4 lo, ol_i32x4 a_hi, ol_i32x4 hi) {
  return ol_i16x8_add(ol_i16x8_dot_i8x16_u7(a_lo, lo), ol_i16x8_dot_i8x16_u7(a_hi, hi));
}

/* DOT8: one 16-byte chunk (four outputs' words) times R rows' prepared
 * codes at codes[r] + at, added to the 16-bit sums s[r] (nibbles: 0x0f in
 * every byte) */
OL_AI void chunk4_dot8(const int R, ol_i32x4 v, const int16_t *const *codes, ptrdiff_t at, ol_i32x4 *s,
                       ol_i32x4 nibbles) {
  ol_i32x4 lo = ol_i32x4_and(v, nibbles), hi = ol_i32x4_and(ol_u16x8_shr(v, 4), nibbles);
  for (int r = 0; r < R; r++) {
    const int16_t *q = codes[r] + at;
    s[r] = ol_i16x8_add(s[r], dot8_chunk(ol_i32x4_load(q), lo, ol_i32x4_load(q + 8), hi));
  }
}

/* 8-bit codes: one 16-byte chunk (four outputs' words, odd bytes stored
 * XOR 0x80) times R rows' prepared lanes x0, x1 (see above), added to d[r] */
OL_AI void chunk8(const int R, ol_i32x4 v, const int16_t *const *codes, ptrdiff_t at, ol_i32x4 *d) {
  ol_i32x4 hi = ol_i16x8_shr(v, 8);
  for (int r = 0; r < R; r++) {
    const int16_t *q = codes[r] + at;
    ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(v, ol_i32x4_load(q)), ol_i32x4_dot_i16x8(hi, ol_i32x4_load(q + 8)));
    d[r] = ol_i32x4_add(d[r], d01);
  }
}

/* acc[r] = acc[r] + ((float)d[r] - z * asum_j) * (sa_j * sw), four outputs
 * wide: the order of qgemv_i8.c per output (8 bits: d as above, the same
 * integer first; FOLDED: d already less the default zero point's part;
 * GIVEN: z given, else the default 2^(bits-1)). sa[r]: the row's per-block
 * floats, sa, asum and alo, kb apart. */
OL_AI void block_epilogue(const int bits, const bool GIVEN, const bool FOLDED, const int R, const ol_i32x4 *d,
                          ol_f32x4 z, ol_f32x4 sw, const float *const *sa, ptrdiff_t kb, ptrdiff_t j, ol_f32x4 *acc) {
  for (int r = 0; r < R; r++) {
    const float asum = sa[r][kb + j], alo = sa[r][2 * kb + j];
    ol_f32x4 w = ol_f32x4_mul(ol_f32x4_splat(sa[r][j]), sw), dz = ol_i32x4_to_f32x4(d[r]);
    if (FOLDED) {
      /* d is the integer of dz already */
    } else if (bits == 8 && !GIVEN) {
      dz = ol_f32x4_sub(dz, ol_f32x4_mul(z, ol_f32x4_splat(alo)));
    } else {
      if (bits == 8) dz = ol_f32x4_add(dz, ol_f32x4_splat(128.0f * (asum - alo)));
      dz = ol_f32x4_sub(dz, ol_f32x4_mul(z, ol_f32x4_splat(asum)));
    }
    acc[r] = ol_f32x4_add(acc[r], ol_f32x4_mul(dz, w));
  }
}

/* The zero points of outputs n .. n+m-1 (m <= 4) of block j (lanes past m: 0). */
OL_AI ol_f32x4 zero_points(const int bits, ptrdiff_t kb, const uint8_t *zp_u8, const float *zp_f, int64_t n, int m,
                           ptrdiff_t j) {
  float zz[4] = {0, 0, 0, 0};
  for (int i = 0; i < m; i++) zz[i] = ol_qgemv_given_zero_point(bits, kb, zp_u8, zp_f, n + i, j);
  return ol_f32x4_set(zz[0], zz[1], zz[2], zz[3]);
}

/* R prepared rows, the m (<= 4) outputs n.. of half a group: interleaved
 * (tail false, m = 4: block j's chunks 32 bytes apart from b + bstep * j,
 * its four scales at sc + sstep * j; NH = 2: the same half of both groups
 * of a pair at once, the second's block 8 * blob bytes and its scales 8
 * further, its outputs at n + 8 and y + 8, so that the pass reads the
 * pair's one stream) or the dense tail (NH = 1; rows from b and sc,
 * gathered per chunk). Four lanes per row and half are written to y (lanes
 * past m from zero weights). GIVEN: zero points given (else 2^(bits-1)), a
 * constant so that no call sits in the loop. */
OL_AI void half(const int bits, const int R, const int NH, const bool GIVEN, const bool tail, const ol_qgemv_shape *s,
                const int16_t *const *codes, const float *const *sa, const uint8_t *b, ptrdiff_t bstep,
                const float *sc, ptrdiff_t sstep, const uint8_t *zp_u8, const float *zp_f, int64_t n, int m,
                float *y, ptrdiff_t ldy) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), blob = (ptrdiff_t)ol_qgemv_blob_bytes(s), cpb = blob / 4;
  const ptrdiff_t G = OL_LANE_GROUP;
  const ol_f32x4 zdef = ol_f32x4_splat((float)(1 << (bits - 1)));
  const ol_i32x4 low4 = ol_i32x4_opaque(ol_i16x8_splat(0x000f)), nibbles = ol_i32x4_opaque(ol_i16x8_splat(0x0f0f));
  const ol_i32x4 ones = ol_i32x4_opaque(ol_i16x8_splat(1));
  ol_f32x4 acc[2][4];
  for (int k = 0; k < NH; k++)
    for (int r = 0; r < R; r++) acc[k][r] = ol_f32x4_zero();
  ptrdiff_t at = 0; /* codes of chunk (j, c) at (j * cpb + c) * CHUNK_CODES */
  for (ptrdiff_t j = 0; j < kb; j++) {
    ol_i32x4 d[2][4], s16[2][4]; /* s16: DOT8's 16-bit sums */
    for (int k = 0; k < NH; k++)
      for (int r = 0; r < R; r++) d[k][r] = s16[k][r] = ol_i32x4_splat(0);
    /* kept a loop: unrolled, the compiler hoists every load of the block
     * ahead and the wasm engine spills them (measured 1.3x slower) */
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
    for (ptrdiff_t c = 0; c < cpb; c++, at += CHUNK_CODES(bits)) {
      for (int k = 0; k < NH; k++) {
        ol_i32x4 v;
        if (tail) {
          uint8_t t[16] = {0};
          for (int i = 0; i < m; i++) memcpy(t + 4 * i, b + (i * kb + j) * blob + 4 * c, 4);
          v = ol_i32x4_load(t);
        } else {
          v = ol_i32x4_load(b + k * G * blob + bstep * j + 32 * c);
        }
        if (DOT8(bits)) {
          chunk4_dot8(R, v, codes, at, s16[k], nibbles);
          if (c % DOT8_SPAN == DOT8_SPAN - 1 || c == cpb - 1)
            for (int r = 0; r < R; r++) {
              d[k][r] = ol_i32x4_add(d[k][r], ol_i32x4_sum_i16x8_pairs(s16[k][r], ones));
              s16[k][r] = ol_i32x4_splat(0);
            }
        } else if (bits == 4) {
          ol_qgemv_i8_chunk4(R, v, codes, at, d[k], low4);
        } else {
          chunk8(R, v, codes, at, d[k]);
        }
      }
    }
    for (int k = 0; k < NH; k++) {
      ol_f32x4 z = GIVEN ? zero_points(bits, kb, zp_u8, zp_f, n + k * G, m, j) : zdef, sw;
      if (tail) {
        float ss[4] = {0, 0, 0, 0};
        for (int i = 0; i < m; i++) ss[i] = sc[i * kb + j];
        sw = ol_f32x4_set(ss[0], ss[1], ss[2], ss[3]);
      } else {
        sw = ol_f32x4_load(sc + k * G + sstep * j);
      }
      block_epilogue(bits, GIVEN, false, R, d[k], z, sw, sa, kb, j, acc[k]);
    }
  }
  for (int k = 0; k < NH; k++)
    for (int r = 0; r < R; r++) ol_f32x4_store(y + k * G + r * ldy, acc[k][r]);
}

/* One row, NG (1, or 2: a pair) whole groups of eight outputs n..n+8NG-1
 * (b, sc: the first group's block 0, blocks bstep bytes and sstep scales
 * apart; in a pair the second group's block follows the first's, 8 * blob
 * bytes and 8 scales further): each chunk's activation vectors are loaded
 * once for all 2NG halves. The same integers and float operations per output as
 * half() (DOT8 without a given zero point: folded, see above). ONE_SPAN:
 * DOT8 blocks of one span (block <= 32), no 32-bit sums carried. */
OL_AI void group1(const int bits, const int NG, const bool GIVEN, const bool ONE_SPAN, const ol_qgemv_shape *s,
                  const int16_t *const *codes, const float *const *sa, const uint8_t *b, ptrdiff_t bstep,
                  const float *sc, ptrdiff_t sstep, const uint8_t *zp_u8, const float *zp_f, int64_t n, float *y) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), blob = (ptrdiff_t)ol_qgemv_blob_bytes(s), cpb = blob / 4;
  const ptrdiff_t gstride = OL_LANE_GROUP * blob; /* a pair's second group */
  const ol_f32x4 zdef = ol_f32x4_splat((float)(1 << (bits - 1)));
  const ol_i32x4 low4 = ol_i32x4_opaque(ol_i16x8_splat(0x000f)), nibbles = ol_i32x4_opaque(ol_i16x8_splat(0x0f0f));
  const ol_i32x4 ones = ol_i32x4_opaque(ol_i16x8_splat(1));
  enum { H = 2 * 2 }; /* halves, room for NG = 2 */
  ol_f32x4 acc[H];
  for (int h = 0; h < 2 * NG; h++) acc[h] = ol_f32x4_zero();
  const int16_t *q = codes[0];
  const bool FOLDED = DOT8(bits) && !GIVEN;
  const int16_t *start = (const int16_t *)(sa[0] + 3 * kb); /* FOLDED: the spans' 16-bit starts */
  const ptrdiff_t nspans = (cpb + DOT8_SPAN - 1) / DOT8_SPAN;
  for (ptrdiff_t j = 0; j < kb; j++) {
    ol_i32x4 d[H];
    for (int h = 0; h < 2 * NG; h++) d[h] = ol_i32x4_splat(0);
    if (DOT8(bits)) {
      /* spans of at most DOT8_SPAN chunks summed in 16 bits, each widened
       * after its own branch-free loop */
      for (ptrdiff_t c0 = 0; c0 < cpb; c0 += DOT8_SPAN) {
        const ptrdiff_t span = ONE_SPAN ? cpb : cpb - c0 < DOT8_SPAN ? cpb - c0 : DOT8_SPAN;
        const ptrdiff_t t = ONE_SPAN ? j : j * nspans + c0 / DOT8_SPAN; /* span index */
        const ol_i32x4 s0 = FOLDED ? ol_i32x4_load(start + 8 * t) : ol_i32x4_splat(0);
        ol_i32x4 s16[H];
        for (int h = 0; h < 2 * NG; h++) s16[h] = s0;
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
        for (ptrdiff_t c = 0; c < span; c++, q += CHUNK_CODES(4), b += 32) {
          ol_i32x4 a_lo = ol_i32x4_load(q), a_hi = ol_i32x4_load(q + 8);
          for (int h = 0; h < 2 * NG; h++) {
            ol_i32x4 v = ol_i32x4_load(b + gstride * (h / 2) + 16 * (h % 2));
            s16[h] = ol_i16x8_add(s16[h], dot8_chunk(a_lo, ol_i32x4_and(v, nibbles), a_hi,
                                                     ol_i32x4_and(ol_u16x8_shr(v, 4), nibbles)));
          }
        }
        for (int h = 0; h < 2 * NG; h++)
          d[h] = ONE_SPAN ? ol_i32x4_sum_i16x8_pairs(s16[h], ones) : ol_i32x4_add(d[h], ol_i32x4_sum_i16x8_pairs(s16[h], ones));
        if (ONE_SPAN) break;
      }
    }
#if defined(__clang__)
#pragma clang loop unroll(disable)
#endif
    for (ptrdiff_t c = 0; c < (DOT8(bits) ? 0 : cpb); c++, q += CHUNK_CODES(bits), b += 32) {
      if (bits == 4) {
        ol_i32x4 a0 = ol_i32x4_load(q), a1 = ol_i32x4_load(q + 8), a2 = ol_i32x4_load(q + 16), a3 = ol_i32x4_load(q + 24);
        for (int h = 0; h < 2 * NG; h++) {
          ol_i32x4 v = ol_i32x4_load(b + gstride * (h / 2) + 16 * (h % 2));
          ol_i32x4 f0 = ol_i32x4_and(v, low4), f1 = ol_i32x4_and(ol_u16x8_shr(v, 4), low4);
          ol_i32x4 f2 = ol_i32x4_and(ol_u16x8_shr(v, 8), low4), f3 = ol_u16x8_shr(v, 12);
          ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(f0, a0), ol_i32x4_dot_i16x8(f1, a1));
          ol_i32x4 d23 = ol_i32x4_add(ol_i32x4_dot_i16x8(f2, a2), ol_i32x4_dot_i16x8(f3, a3));
          d[h] = ol_i32x4_add(d[h], ol_i32x4_add(d01, d23));
        }
      } else {
        ol_i32x4 a0 = ol_i32x4_load(q), a1 = ol_i32x4_load(q + 8);
        for (int h = 0; h < 2 * NG; h++) {
          ol_i32x4 v = ol_i32x4_load(b + gstride * (h / 2) + 16 * (h % 2));
          ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(v, a0), ol_i32x4_dot_i16x8(ol_i16x8_shr(v, 8), a1));
          d[h] = ol_i32x4_add(d[h], d01);
        }
      }
    }
    b += bstep - gstride; /* the chunk loops advanced one group's block */
    for (int h = 0; h < 2 * NG; h++) {
      const ptrdiff_t g = h / 2, i = h % 2;
      ol_f32x4 z = GIVEN ? zero_points(bits, kb, zp_u8, zp_f, n + 8 * g + 4 * i, 4, j) : zdef;
      ol_f32x4 sw = ol_f32x4_load(sc + sstep * j + OL_LANE_GROUP * g + 4 * i);
      block_epilogue(bits, GIVEN, FOLDED, 1, &d[h], z, sw, sa, kb, j, &acc[h]);
    }
  }
  for (int h = 0; h < 2 * NG; h++) ol_f32x4_store(y + 4 * h, acc[h]);
}

/* The first rows that the lane layout keeps in pairs of groups (the rest:
 * a lone group, then the dense tail). */
static int64_t paired_rows(int64_t rows) { return rows / (2 * OL_LANE_GROUP) * (2 * OL_LANE_GROUP); }

OL_AI void rows(const int bits, const int R, const bool GIVEN, const ol_qgemv_shape *s, const void *const *works,
                const uint8_t *B, const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                int64_t n0, int64_t n1, float *y, int64_t ldy) {
  const int64_t G = OL_LANE_GROUP, kb = ol_qgemv_blocks(s), blob = ol_qgemv_blob_bytes(s), nG = s->N / G * G;
  const int64_t nP = paired_rows(s->N);
  const int16_t *codes[4];
  const float *sa[4];
  for (int r = 0; r < R; r++) {
    codes[r] = works[r];
    sa[r] = (const float *)((const char *)works[r] + codes_bytes(s));
  }
  for (int64_t g0 = n0 / G * G; g0 < n1; g0 += G) {
    const bool tail = g0 >= nG, whole = !tail && g0 >= n0 && g0 + G <= n1;
    const int m = tail ? (int)(s->N - g0) : (int)G;
    /* the group's block 0 and the steps between its blocks (lane layout:
     * in a pair, the pair's blocks alternate between its two groups) */
    const int64_t r0 = g0 < nP ? g0 / (2 * G) * (2 * G) : g0, in_pair = g0 < nP ? g0 - r0 : 0;
    const uint8_t *b = B + r0 * kb * blob + in_pair * blob;
    const float *sc = scales + r0 * kb + in_pair;
    const ptrdiff_t bstep = (ptrdiff_t)((g0 < nP ? 2 : 1) * G * blob), sstep = g0 < nP ? 2 * G : G;
    float t[4 * OL_LANE_GROUP];
    float *dst = whole ? y + (g0 - n0) : t; /* a whole group straight to y */
    const ptrdiff_t ld = whole ? (ptrdiff_t)ldy : (ptrdiff_t)G;
    /* both groups of a pair in one pass where both are in range */
    const int ng = whole && g0 < nP && in_pair == 0 && g0 + 2 * G <= n1 ? 2 : 1;
    if (!tail && R == 1) {
      if (DOT8(bits) && blob <= 4 * DOT8_SPAN) {
        if (ng == 2) group1(bits, 2, GIVEN, true, s, codes, sa, b, bstep, sc, sstep, zp_u8, zp_f, g0, dst);
        else group1(bits, 1, GIVEN, true, s, codes, sa, b, bstep, sc, sstep, zp_u8, zp_f, g0, dst);
      } else {
        if (ng == 2) group1(bits, 2, GIVEN, false, s, codes, sa, b, bstep, sc, sstep, zp_u8, zp_f, g0, dst);
        else group1(bits, 1, GIVEN, false, s, codes, sa, b, bstep, sc, sstep, zp_u8, zp_f, g0, dst);
      }
    } else if (!tail && ng == 2) {
      half(bits, R, 2, GIVEN, false, s, codes, sa, b, bstep, sc, sstep, zp_u8, zp_f, g0, 4, dst, ld);
      half(bits, R, 2, GIVEN, false, s, codes, sa, b + 16, bstep, sc + 4, sstep, zp_u8, zp_f, g0 + 4, 4, dst + 4, ld);
    } else if (!tail) {
      half(bits, R, 1, GIVEN, false, s, codes, sa, b, bstep, sc, sstep, zp_u8, zp_f, g0, 4, dst, ld);
      half(bits, R, 1, GIVEN, false, s, codes, sa, b + 16, bstep, sc + 4, sstep, zp_u8, zp_f, g0 + 4, 4, dst + 4, ld);
    } else {
      half(bits, R, 1, GIVEN, true, s, codes, sa, b, 0, sc, 0, zp_u8, zp_f, g0, m < 4 ? m : 4, dst, ld);
      if (m > 4)
        half(bits, R, 1, GIVEN, true, s, codes, sa, b + 4 * kb * blob, 0, sc + 4 * kb, 0, zp_u8, zp_f, g0 + 4, m - 4,
             dst + 4, ld);
    }
    if (whole) {
      if (bias)
        for (int r = 0; r < R; r++)
          for (int h = 0; h < 2 * ng; h++) {
            float *yo = dst + r * ld + 4 * h;
            ol_f32x4_store(yo, ol_f32x4_add(ol_f32x4_load(yo), ol_f32x4_load(bias + g0 + 4 * h)));
          }
      g0 += (ng - 1) * G;
      continue;
    }
    for (int64_t n = g0 > n0 ? g0 : n0; n < g0 + m && n < n1; n++)
      for (int r = 0; r < R; r++) {
        float v = t[r * G + (n - g0)];
        y[r * ldy + n - n0] = bias ? v + bias[n] : v;
      }
  }
}

#define OL_LANE_ROWS(R)                                                                              \
  do {                                                                                               \
    bool given_ = zp_u8 || zp_f;                                                                     \
    if (s->bits == 4) {                                                                              \
      if (given_) rows(4, R, true, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);          \
      else rows(4, R, false, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);                \
    } else {                                                                                         \
      if (given_) rows(8, R, true, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);          \
      else rows(8, R, false, s, works, B, scales, zp_u8, zp_f, bias, n0, n1, y, ldy);                \
    }                                                                                                \
  } while (0)

void ol_qgemv_i8_lane_rows(const ol_qgemv_shape *s, const void *const *works, int nrows, const uint8_t *B,
                           const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                           int64_t n0, int64_t n1, float *y, int64_t ldy) {
  /* pairs of rows, as ol_qgemv_i8_nbits_rows */
  while (nrows >= 2) {
    OL_LANE_ROWS(2);
    works += 2, nrows -= 2, y += 2 * ldy;
  }
  if (nrows == 1) OL_LANE_ROWS(1);
}

/* ------------------------------------------------------------ the layout
 * MatMulNBits weights and scales with the 4-byte words of OL_LANE_GROUP
 * outputs side by side, so that one 16-byte load holds one word of four of
 * them, and the blocks of two groups alternating, so that the one-row
 * kernel, which reads both groups of a pair at once, reads one ascending
 * stream (two streams a group apart confused the hardware prefetcher: the
 * 58M shape's head ran 1.8x slower from memory). Units (a pair of groups,
 * or the lone last group) only permute their own words. */
static void xor_odd_bytes(size_t bytes, uint8_t odd_xor, uint8_t *data) {
  if (odd_xor)
    for (size_t i = 1; i < bytes; i += 2) data[i] ^= odd_xor;
}

/* The word offset in its unit of word w of row i of the unit (P groups):
 * block j = w / cpw, word c = w % cpw of the block (cpw words per block). */
static size_t unit_word(size_t P, size_t cpw, size_t i, size_t w) {
  const size_t G = OL_LANE_GROUP;
  return w / cpw * (P * G * cpw) + i / G * (G * cpw) + G * (w % cpw) + i % G;
}

void ol_lanes_from_dense(int64_t rows, size_t row_bytes, size_t block_bytes, uint8_t odd_xor, void *data,
                         void *scratch) {
  const size_t G = OL_LANE_GROUP, words = row_bytes / 4, cpw = block_bytes / 4;
  xor_odd_bytes((size_t)rows * row_bytes, odd_xor, data); /* words keep their byte order */
  for (int64_t r0 = 0; r0 + (int64_t)G <= rows;) {
    const size_t P = r0 < paired_rows(rows) ? 2 : 1; /* groups in this unit */
    uint8_t *unit = (uint8_t *)data + (size_t)r0 * row_bytes;
    memcpy(scratch, unit, P * G * row_bytes);
    for (size_t i = 0; i < P * G; i++)
      for (size_t w = 0; w < words; w++)
        memcpy(unit + 4 * unit_word(P, cpw, i, w), (uint8_t *)scratch + 4 * (i * words + w), 4);
    r0 += (int64_t)(P * G);
  }
}

void ol_lanes_to_dense(int64_t rows, size_t row_bytes, size_t block_bytes, uint8_t odd_xor, const void *lanes,
                       void *dense) {
  const size_t G = OL_LANE_GROUP, words = row_bytes / 4, cpw = block_bytes / 4;
  int64_t r0 = 0;
  while (r0 + (int64_t)G <= rows) {
    const size_t P = r0 < paired_rows(rows) ? 2 : 1; /* groups in this unit */
    const uint8_t *unit = (const uint8_t *)lanes + (size_t)r0 * row_bytes;
    uint8_t *out = (uint8_t *)dense + (size_t)r0 * row_bytes;
    for (size_t i = 0; i < P * G; i++)
      for (size_t w = 0; w < words; w++) memcpy(out + 4 * (i * words + w), unit + 4 * unit_word(P, cpw, i, w), 4);
    r0 += (int64_t)(P * G);
  }
  if (r0 < rows) memcpy((uint8_t *)dense + (size_t)r0 * row_bytes, (const uint8_t *)lanes + (size_t)r0 * row_bytes,
                        (size_t)(rows - r0) * row_bytes);
  xor_odd_bytes((size_t)rows * row_bytes, odd_xor, dense);
}
