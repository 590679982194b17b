/* Extensions of the 128-bit layer (simd/vec.h) for decoding affine codes in
 * register exactly as the portable codec does, in double precision:
 *
 *   ol_f64x2                 two double lanes: splat, mul, add
 *   ol_f64x2_from_i32_lo/hi  lanes 0-1 / 2-3 of an ol_i32x4, converted exactly
 *   ol_f32x4_from_f64x2      [lo0, lo1, hi0, hi1] each rounded to float once
 *                            (round to nearest even, like a C cast)
 *   ol_u8x16_nibbles         the 8 low bytes split into 16 nibbles in
 *                            LSB-first element order (byte i -> lanes 2i, 2i+1)
 *   ol_u8x16_crumbs          the 8 low bytes, each holding two 2-bit fields in
 *                            its low nibble, split likewise (byte i -> lanes
 *                            2i: bits 0-1, 2i + 1: bits 2-3); after
 *                            ol_u8x16_nibbles: 4 bytes -> 16 2-bit codes
 *   ol_u8x16_widen           the 16 bytes zero-extended into four ol_i32x4
 *   ol_u8x16_biased          the 16 bytes b as four ol_f32x4 of 2^23 + b
 *                            (the bits 0x4B000000 | b: exact, no conversion)
 *   ol_i32x4_xor, ol_i32x4_sub
 *   ol_i32x4_mul             lanes multiplied, the low 32 bits (wrapping)
 *   ol_f32x4_bits            the lanes' bits as an ol_i32x4 (no conversion)
 *   ol_i16x8_narrow          a's four lanes then b's, each saturated to
 *                            int16, as eight 16-bit lanes
 *   ol_u8x16_zip_lo/hi       bytes 0-7 / 8-15 of a and b interleaved
 *                            (a0 b0 a1 b1 ...)
 *   ol_u16x8_from_u8_lo/hi   bytes 0-7 / 8-15 zero-extended to 16-bit lanes
 *   ol_i16x8_from_i8_lo/hi   bytes 0-7 / 8-15 sign-extended to 16-bit lanes
 *   ol_f32x4_round_small     lanes (|x| < 2^22) rounded to int32, ties to
 *                            even: the low bits of x + 1.5 * 2^23
 *
 * Every operation is exact or one IEEE rounding, so SSE2, wasm SIMD128 and the
 * plain-C fallback give the same bits. */
#ifndef OL_SIMD_VEC_F64_H
#define OL_SIMD_VEC_F64_H
#include <stdint.h>

#include "simd/vec.h"

#if defined(__wasm_simd128__)
typedef v128_t ol_f64x2;
static inline ol_f64x2 ol_f64x2_splat(double s) { return wasm_f64x2_splat(s); }
static inline ol_f64x2 ol_f64x2_mul(ol_f64x2 a, ol_f64x2 b) { return wasm_f64x2_mul(a, b); }
static inline ol_f64x2 ol_f64x2_add(ol_f64x2 a, ol_f64x2 b) { return wasm_f64x2_add(a, b); }
static inline ol_f64x2 ol_f64x2_from_i32_lo(ol_i32x4 v) { return wasm_f64x2_convert_low_i32x4(v); }
static inline ol_f64x2 ol_f64x2_from_i32_hi(ol_i32x4 v) {
  return wasm_f64x2_convert_low_i32x4(wasm_i32x4_shuffle(v, v, 2, 3, 2, 3));
}
static inline ol_f32x4 ol_f32x4_from_f64x2(ol_f64x2 lo, ol_f64x2 hi) {
  return wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 2);
}
static inline ol_i32x4 ol_u8x16_nibbles(ol_i32x4 v) {
  ol_i32x4 lo = wasm_v128_and(v, wasm_i8x16_splat(15)), hi = wasm_u8x16_shr(v, 4);
  return wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
static inline ol_i32x4 ol_u8x16_crumbs(ol_i32x4 v) {
  ol_i32x4 lo = wasm_v128_and(v, wasm_i8x16_splat(3)), hi = wasm_v128_and(wasm_u8x16_shr(v, 2), wasm_i8x16_splat(3));
  return wasm_i8x16_shuffle(lo, hi, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
static inline void ol_u8x16_widen(ol_i32x4 v, ol_i32x4 out[4]) {
  ol_i32x4 l = wasm_u16x8_extend_low_u8x16(v), h = wasm_u16x8_extend_high_u8x16(v);
  out[0] = wasm_u32x4_extend_low_u16x8(l), out[1] = wasm_u32x4_extend_high_u16x8(l);
  out[2] = wasm_u32x4_extend_low_u16x8(h), out[3] = wasm_u32x4_extend_high_u16x8(h);
}
static inline void ol_u8x16_biased(ol_i32x4 v, ol_f32x4 out[4]) {
  const v128_t m = wasm_i16x8_splat(0x4B00);
  v128_t l = wasm_u16x8_extend_low_u8x16(v), h = wasm_u16x8_extend_high_u8x16(v);
  out[0] = wasm_i16x8_shuffle(l, m, 0, 8, 1, 9, 2, 10, 3, 11), out[1] = wasm_i16x8_shuffle(l, m, 4, 12, 5, 13, 6, 14, 7, 15);
  out[2] = wasm_i16x8_shuffle(h, m, 0, 8, 1, 9, 2, 10, 3, 11), out[3] = wasm_i16x8_shuffle(h, m, 4, 12, 5, 13, 6, 14, 7, 15);
}
static inline ol_i32x4 ol_i32x4_xor(ol_i32x4 a, ol_i32x4 b) { return wasm_v128_xor(a, b); }
static inline ol_i32x4 ol_i32x4_sub(ol_i32x4 a, ol_i32x4 b) { return wasm_i32x4_sub(a, b); }
static inline ol_i32x4 ol_i32x4_mul(ol_i32x4 a, ol_i32x4 b) { return wasm_i32x4_mul(a, b); }
static inline ol_i32x4 ol_f32x4_bits(ol_f32x4 v) { return v; }
static inline ol_i32x4 ol_i16x8_narrow(ol_i32x4 a, ol_i32x4 b) { return wasm_i16x8_narrow_i32x4(a, b); }

static inline ol_i32x4 ol_u8x16_zip_lo(ol_i32x4 a, ol_i32x4 b) {
  return wasm_i8x16_shuffle(a, b, 0, 16, 1, 17, 2, 18, 3, 19, 4, 20, 5, 21, 6, 22, 7, 23);
}
static inline ol_i32x4 ol_u8x16_zip_hi(ol_i32x4 a, ol_i32x4 b) {
  return wasm_i8x16_shuffle(a, b, 8, 24, 9, 25, 10, 26, 11, 27, 12, 28, 13, 29, 14, 30, 15, 31);
}
static inline ol_i32x4 ol_u16x8_from_u8_lo(ol_i32x4 v) { return wasm_u16x8_extend_low_u8x16(v); }
static inline ol_i32x4 ol_u16x8_from_u8_hi(ol_i32x4 v) { return wasm_u16x8_extend_high_u8x16(v); }
static inline ol_i32x4 ol_i16x8_from_i8_lo(ol_i32x4 v) { return wasm_i16x8_extend_low_i8x16(v); }
static inline ol_i32x4 ol_i16x8_from_i8_hi(ol_i32x4 v) { return wasm_i16x8_extend_high_i8x16(v); }

#elif defined(__SSE2__)
typedef __m128d ol_f64x2;
static inline ol_f64x2 ol_f64x2_splat(double s) { return _mm_set1_pd(s); }
static inline ol_f64x2 ol_f64x2_mul(ol_f64x2 a, ol_f64x2 b) { return _mm_mul_pd(a, b); }
static inline ol_f64x2 ol_f64x2_add(ol_f64x2 a, ol_f64x2 b) { return _mm_add_pd(a, b); }
static inline ol_f64x2 ol_f64x2_from_i32_lo(ol_i32x4 v) { return _mm_cvtepi32_pd(v); }
static inline ol_f64x2 ol_f64x2_from_i32_hi(ol_i32x4 v) {
  return _mm_cvtepi32_pd(_mm_shuffle_epi32(v, _MM_SHUFFLE(3, 2, 3, 2)));
}
static inline ol_f32x4 ol_f32x4_from_f64x2(ol_f64x2 lo, ol_f64x2 hi) {
  return _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi));
}
static inline ol_i32x4 ol_u8x16_nibbles(ol_i32x4 v) {
  const __m128i m = _mm_set1_epi8(15);
  return _mm_unpacklo_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 4), m));
}
static inline ol_i32x4 ol_u8x16_crumbs(ol_i32x4 v) {
  const __m128i m = _mm_set1_epi8(3);
  return _mm_unpacklo_epi8(_mm_and_si128(v, m), _mm_and_si128(_mm_srli_epi16(v, 2), m));
}
static inline void ol_u8x16_widen(ol_i32x4 v, ol_i32x4 out[4]) {
  const __m128i z = _mm_setzero_si128();
  __m128i l = _mm_unpacklo_epi8(v, z), h = _mm_unpackhi_epi8(v, z);
  out[0] = _mm_unpacklo_epi16(l, z), out[1] = _mm_unpackhi_epi16(l, z);
  out[2] = _mm_unpacklo_epi16(h, z), out[3] = _mm_unpackhi_epi16(h, z);
}
static inline void ol_u8x16_biased(ol_i32x4 v, ol_f32x4 out[4]) {
  const __m128i z = _mm_setzero_si128(), m = _mm_set1_epi16(0x4B00);
  __m128i l = _mm_unpacklo_epi8(v, z), h = _mm_unpackhi_epi8(v, z);
  out[0] = _mm_castsi128_ps(_mm_unpacklo_epi16(l, m)), out[1] = _mm_castsi128_ps(_mm_unpackhi_epi16(l, m));
  out[2] = _mm_castsi128_ps(_mm_unpacklo_epi16(h, m)), out[3] = _mm_castsi128_ps(_mm_unpackhi_epi16(h, m));
}
static inline ol_i32x4 ol_i32x4_xor(ol_i32x4 a, ol_i32x4 b) { return _mm_xor_si128(a, b); }
static inline ol_i32x4 ol_i32x4_sub(ol_i32x4 a, ol_i32x4 b) { return _mm_sub_epi32(a, b); }
/* SSE2 has no 32-bit lane product: lanes 0, 2 and 1, 3 as 64-bit products, low halves rejoined */
static inline ol_i32x4 ol_i32x4_mul(ol_i32x4 a, ol_i32x4 b) {
  const __m128i even = _mm_mul_epu32(a, b), odd = _mm_mul_epu32(_mm_srli_si128(a, 4), _mm_srli_si128(b, 4));
  return _mm_unpacklo_epi32(_mm_shuffle_epi32(even, _MM_SHUFFLE(0, 0, 2, 0)), _mm_shuffle_epi32(odd, _MM_SHUFFLE(0, 0, 2, 0)));
}
static inline ol_i32x4 ol_f32x4_bits(ol_f32x4 v) { return _mm_castps_si128(v); }
static inline ol_i32x4 ol_i16x8_narrow(ol_i32x4 a, ol_i32x4 b) { return _mm_packs_epi32(a, b); }

static inline ol_i32x4 ol_u8x16_zip_lo(ol_i32x4 a, ol_i32x4 b) { return _mm_unpacklo_epi8(a, b); }
static inline ol_i32x4 ol_u8x16_zip_hi(ol_i32x4 a, ol_i32x4 b) { return _mm_unpackhi_epi8(a, b); }
static inline ol_i32x4 ol_u16x8_from_u8_lo(ol_i32x4 v) { return _mm_unpacklo_epi8(v, _mm_setzero_si128()); }
static inline ol_i32x4 ol_u16x8_from_u8_hi(ol_i32x4 v) { return _mm_unpackhi_epi8(v, _mm_setzero_si128()); }
static inline ol_i32x4 ol_i16x8_from_i8_lo(ol_i32x4 v) { return _mm_srai_epi16(_mm_unpacklo_epi8(v, v), 8); }
static inline ol_i32x4 ol_i16x8_from_i8_hi(ol_i32x4 v) { return _mm_srai_epi16(_mm_unpackhi_epi8(v, v), 8); }

#else
typedef struct ol_f64x2 {
  double d[2];
} ol_f64x2;
static inline ol_f64x2 ol_f64x2_splat(double s) { return (ol_f64x2){{s, s}}; }
static inline ol_f64x2 ol_f64x2_mul(ol_f64x2 a, ol_f64x2 b) { return (ol_f64x2){{a.d[0] * b.d[0], a.d[1] * b.d[1]}}; }
static inline ol_f64x2 ol_f64x2_add(ol_f64x2 a, ol_f64x2 b) { return (ol_f64x2){{a.d[0] + b.d[0], a.d[1] + b.d[1]}}; }
static inline ol_f64x2 ol_f64x2_from_i32_lo(ol_i32x4 v) {
  return (ol_f64x2){{(double)(int32_t)v.u[0], (double)(int32_t)v.u[1]}};
}
static inline ol_f64x2 ol_f64x2_from_i32_hi(ol_i32x4 v) {
  return (ol_f64x2){{(double)(int32_t)v.u[2], (double)(int32_t)v.u[3]}};
}
static inline ol_f32x4 ol_f32x4_from_f64x2(ol_f64x2 lo, ol_f64x2 hi) {
  return (ol_f32x4){{(float)lo.d[0], (float)lo.d[1], (float)hi.d[0], (float)hi.d[1]}};
}
/* byte i of v: lane i / 4, little endian (as ol_i32x4_load builds it) */
static inline unsigned ol_u8x16_get(ol_i32x4 v, int i) { return (v.u[i / 4] >> (8 * (i % 4))) & 255u; }
static inline ol_i32x4 ol_u8x16_nibbles(ol_i32x4 v) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) {
    unsigned b = ol_u8x16_get(v, i);
    r.u[i / 2] |= ((b & 15u) | (b >> 4) << 8) << (16 * (i % 2));
  }
  return r;
}
static inline ol_i32x4 ol_u8x16_crumbs(ol_i32x4 v) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) {
    unsigned b = ol_u8x16_get(v, i);
    r.u[i / 2] |= ((b & 3u) | (b >> 2 & 3u) << 8) << (16 * (i % 2));
  }
  return r;
}
static inline void ol_u8x16_widen(ol_i32x4 v, ol_i32x4 out[4]) {
  for (int q = 0; q < 4; q++)
    for (int i = 0; i < 4; i++) out[q].u[i] = ol_u8x16_get(v, 4 * q + i);
}
static inline void ol_u8x16_biased(ol_i32x4 v, ol_f32x4 out[4]) {
  for (int q = 0; q < 4; q++)
    for (int i = 0; i < 4; i++) out[q].f[i] = 8388608.0f + (float)ol_u8x16_get(v, 4 * q + i);
}
static inline ol_i32x4 ol_i32x4_xor(ol_i32x4 a, ol_i32x4 b) {
  for (int i = 0; i < 4; i++) a.u[i] ^= b.u[i];
  return a;
}
static inline ol_i32x4 ol_i32x4_sub(ol_i32x4 a, ol_i32x4 b) {
  for (int i = 0; i < 4; i++) a.u[i] -= b.u[i];
  return a;
}
static inline ol_i32x4 ol_i32x4_mul(ol_i32x4 a, ol_i32x4 b) {
  for (int i = 0; i < 4; i++) a.u[i] *= b.u[i];
  return a;
}
static inline ol_i32x4 ol_f32x4_bits(ol_f32x4 v) {
  ol_i32x4 r;
  memcpy(r.u, v.f, sizeof r.u);
  return r;
}
static inline uint32_t ol_i16_saturated(uint32_t lane) {
  int32_t x = (int32_t)lane;
  return (uint16_t)(int16_t)(x > 32767 ? 32767 : x < -32768 ? -32768 : x);
}
static inline ol_i32x4 ol_i16x8_narrow(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 r;
  for (int i = 0; i < 2; i++) {
    r.u[i] = ol_i16_saturated(a.u[2 * i]) | ol_i16_saturated(a.u[2 * i + 1]) << 16;
    r.u[2 + i] = ol_i16_saturated(b.u[2 * i]) | ol_i16_saturated(b.u[2 * i + 1]) << 16;
  }
  return r;
}
static inline ol_i32x4 ol_u8x16_zip_lo(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) r.u[i / 2] |= (ol_u8x16_get(a, i) | ol_u8x16_get(b, i) << 8) << (16 * (i % 2));
  return r;
}
static inline ol_i32x4 ol_u8x16_zip_hi(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) r.u[i / 2] |= (ol_u8x16_get(a, 8 + i) | ol_u8x16_get(b, 8 + i) << 8) << (16 * (i % 2));
  return r;
}
static inline ol_i32x4 ol_u16x8_from_u8_lo(ol_i32x4 v) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) r.u[i / 2] |= ol_u8x16_get(v, i) << (16 * (i % 2));
  return r;
}
static inline ol_i32x4 ol_u16x8_from_u8_hi(ol_i32x4 v) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) r.u[i / 2] |= ol_u8x16_get(v, 8 + i) << (16 * (i % 2));
  return r;
}
static inline ol_i32x4 ol_i16x8_from_i8_lo(ol_i32x4 v) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) r.u[i / 2] |= (uint32_t)(uint16_t)(int8_t)ol_u8x16_get(v, i) << (16 * (i % 2));
  return r;
}
static inline ol_i32x4 ol_i16x8_from_i8_hi(ol_i32x4 v) {
  ol_i32x4 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 8; i++) r.u[i / 2] |= (uint32_t)(uint16_t)(int8_t)ol_u8x16_get(v, 8 + i) << (16 * (i % 2));
  return r;
}
#endif

/* (composed of the operations above, so the same in every backend) */
static inline ol_i32x4 ol_f32x4_round_small(ol_f32x4 x) {
  return ol_i32x4_sub(ol_f32x4_bits(ol_f32x4_add(x, ol_f32x4_splat(12582912.0f))), ol_i32x4_splat(0x4B400000));
}

#endif
