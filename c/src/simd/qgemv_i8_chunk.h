/* The integer core of the int8-activation MatMulNBits kernels (qgemv_i8.c;
 * qgemv_i8_lane.c for 4 bits): one 16-byte chunk of weight codes, its
 * fields taken from 16-bit lanes, times R prepared rows of int16 codes (from
 * codes[r] + at), added exactly to d[r] (four i32 partial sums per row). */
#ifndef OL_SIMD_QGEMV_I8_CHUNK_H
#define OL_SIMD_QGEMV_I8_CHUNK_H
#include <stddef.h>
#include <stdint.h>

#include "simd/vec.h"

/* 4-bit codes: four fields per 16-bit lane (low4: 0x000f in every lane,
 * made by the caller ahead of its loop). */
static inline __attribute__((always_inline)) void ol_qgemv_i8_chunk4(const int R, ol_i32x4 v, const int16_t *const *codes,
                                                                      ptrdiff_t at, ol_i32x4 *d, ol_i32x4 low4) {
  ol_i32x4 f0 = ol_i32x4_and(v, low4), f1 = ol_i32x4_and(ol_u16x8_shr(v, 4), low4);
  ol_i32x4 f2 = ol_i32x4_and(ol_u16x8_shr(v, 8), low4), f3 = ol_u16x8_shr(v, 12);
  for (int r = 0; r < R; r++) {
    const int16_t *q = codes[r] + at;
    ol_i32x4 d01 = ol_i32x4_add(ol_i32x4_dot_i16x8(f0, ol_i32x4_load(q)), ol_i32x4_dot_i16x8(f1, ol_i32x4_load(q + 8)));
    ol_i32x4 d23 = ol_i32x4_add(ol_i32x4_dot_i16x8(f2, ol_i32x4_load(q + 16)), ol_i32x4_dot_i16x8(f3, ol_i32x4_load(q + 24)));
    d[r] = ol_i32x4_add(d[r], ol_i32x4_add(d01, d23));
  }
}

/* 8-bit codes: two fields per 16-bit lane. */
static inline __attribute__((always_inline)) void ol_qgemv_i8_chunk8(const int R, ol_i32x4 v, const int16_t *const *codes,
                                                                      ptrdiff_t at, ol_i32x4 *d) {
  const ol_i32x4 low8 = ol_i16x8_splat(0x00ff);
  ol_i32x4 f0 = ol_i32x4_and(v, low8), f1 = ol_u16x8_shr(v, 8);
  for (int r = 0; r < R; r++) {
    const int16_t *q = codes[r] + at;
    d[r] = ol_i32x4_add(d[r], ol_i32x4_add(ol_i32x4_dot_i16x8(f0, ol_i32x4_load(q)),
                                           ol_i32x4_dot_i16x8(f1, ol_i32x4_load(q + 8))));
  }
}

#endif
