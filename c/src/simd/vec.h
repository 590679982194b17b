/* The 128-bit vector layer: four float lanes (ol_f32x4).
 *
 * One API, three implementations chosen at compile time:
 *   __wasm_simd128__  wasm_simd128.h (emcc -msimd128)
 *   __SSE2__          emmintrin.h (x86 natively)
 *   otherwise         a struct of four floats, plain C
 * Every operation is lane-wise IEEE single precision (add, sub, mul, div
 * round once; no fused multiply-add anywhere: build with -ffp-contract=off),
 * so a kernel written against this layer gives the same bits in all three.
 * Horizontal operations fix their order: hsum is (l0 + l1) + (l2 + l3).
 * max/min are defined as (a > b ? a : b) and (a < b ? a : b) lane-wise
 * (SSE maxps/minps; wasm pmax/pmin with swapped operands), which makes NaN
 * and signed-zero results agree too: the second operand wins on a NaN or a tie.
 * Loads and stores are unaligned.
 *
 * ol_i32x4: four 32-bit integer lanes, just what the quantized kernels need:
 * loads of 16 bytes (or 8, upper half zero; lane i = bytes 4i..4i+3, little
 * endian) and stores of 16, bitwise and, logical shift right by a constant, exact conversion
 * to float (signed lanes; round to nearest for |x| > 2^24); plus, for the
 * int8-activation kernels, lane-wise i32 addition and two views of the same
 * 128 bits as eight 16-bit lanes: logical and arithmetic shift right
 * (ol_u16x8_shr, ol_i16x8_shr), the
 * 16-bit splat (ol_i16x8_splat) and the signed dot product of 16-bit lane
 * pairs into 32-bit lanes (ol_i32x4_dot_i16x8: lane i = a2i*b2i + a2i+1*b2i+1,
 * wasm i32x4.dot_i16x8_s, SSE2 pmaddwd), interleaves of 32- and 64-bit
 * lanes (zip_lo/zip_hi, for transposing sums) and ol_f32x4_set (lanes in
 * order). Integer results are exact. ol_f32x4_hsum4(a, b, c, d): lane i is
 * the i-th vector's ol_f32x4_hsum (below), four at once by shuffles.
 *
 * ol_i16x8_dot_i8x16_u7(a, b): 16-bit lane j = a[2j] * b[2j] + a[2j+1] *
 * b[2j+1], a signed bytes, b bytes the CALLER keeps in 0..127 (there the
 * relaxed-SIMD instruction i16x8.relaxed_dot_i8x16_i7x16_s is deterministic
 * and cannot saturate), with ol_i16x8_add (wrapping; callers keep sums in
 * range) and ol_i32x4_sum_i16x8_pairs(a, ones) (lane i = 16-bit lanes 2i +
 * 2i+1, signed: a dot product with ones, the caller's
 * ol_i32x4_opaque(ol_i16x8_splat(1)); i32x4.extadd_pairwise_i16x8_s is the
 * same sum, but V8 makes it with a constant it rebuilds at every use on
 * V8 14). ol_i32x4_opaque(v) is v, made
 * where neither the compiler nor the wasm engine can see that it is a
 * constant (wasm: v xor a zero read at run time; elsewhere v itself): a
 * vector constant made with it ahead of a loop stays in a register. A
 * v128.const used inside a loop is rebuilt at every use, by the wasm backend
 * (which rematerializes it) and by V8 14 (three instructions apiece on x64,
 * measured: the 4-bit GEMV ran 1.2x slower in Node 26 for it), however
 * it was hoisted in C (simd/math.c's expf_fast_x4 reads its constants from
 * a writable table instead, as memory operands). OL_VEC_DOT_I8 is 1 where the dot
 * is one instruction (SSSE3 pmaddubsw; the relaxed wasm build,
 * OL_WASM_RELAXED, see simd/relaxed_dot.h), 0 where it is emulated (wasm
 * SIMD128, SSE2, scalar): kernels pick their formulation by it, and every
 * formulation sums the same integers exactly. */
#ifndef OL_SIMD_VEC_H
#define OL_SIMD_VEC_H
#include <stdint.h>

/* A kernel's helper that must inline into its caller, so that its
 * constant parameters (widths, row counts) specialize the code. */
#define OL_AI static inline __attribute__((always_inline))

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#define OL_VEC_ISA "wasmsimd"
typedef v128_t ol_f32x4;
static inline ol_f32x4 ol_f32x4_load(const float *p) { return wasm_v128_load(p); }
static inline void ol_f32x4_store(float *p, ol_f32x4 v) { wasm_v128_store(p, v); }
static inline ol_f32x4 ol_f32x4_splat(float s) { return wasm_f32x4_splat(s); }
static inline ol_f32x4 ol_f32x4_zero(void) { return wasm_f32x4_splat(0.0f); }
static inline ol_f32x4 ol_f32x4_add(ol_f32x4 a, ol_f32x4 b) { return wasm_f32x4_add(a, b); }
static inline ol_f32x4 ol_f32x4_sub(ol_f32x4 a, ol_f32x4 b) { return wasm_f32x4_sub(a, b); }
static inline ol_f32x4 ol_f32x4_mul(ol_f32x4 a, ol_f32x4 b) { return wasm_f32x4_mul(a, b); }
static inline ol_f32x4 ol_f32x4_div(ol_f32x4 a, ol_f32x4 b) { return wasm_f32x4_div(a, b); }
static inline ol_f32x4 ol_f32x4_max(ol_f32x4 a, ol_f32x4 b) { return wasm_f32x4_pmax(b, a); }
static inline ol_f32x4 ol_f32x4_min(ol_f32x4 a, ol_f32x4 b) { return wasm_f32x4_pmin(b, a); }
static inline float ol_f32x4_lane(ol_f32x4 v, int i) {
  float f[4];
  wasm_v128_store(f, v);
  return f[i];
}
typedef v128_t ol_i32x4;
static inline ol_i32x4 ol_i32x4_load(const void *p) { return wasm_v128_load(p); }
static inline ol_i32x4 ol_i32x4_load64_zero(const void *p) { return wasm_v128_load64_zero(p); }
static inline void ol_i32x4_store(void *p, ol_i32x4 v) { wasm_v128_store(p, v); }
static inline ol_i32x4 ol_i32x4_splat(int32_t s) { return wasm_i32x4_splat(s); }
static inline ol_i32x4 ol_i32x4_and(ol_i32x4 a, ol_i32x4 b) { return wasm_v128_and(a, b); }
#define ol_u32x4_shr(a, n) wasm_u32x4_shr((a), (n))
static inline ol_f32x4 ol_i32x4_to_f32x4(ol_i32x4 a) { return wasm_f32x4_convert_i32x4(a); }
static inline ol_i32x4 ol_i32x4_add(ol_i32x4 a, ol_i32x4 b) { return wasm_i32x4_add(a, b); }
static inline ol_i32x4 ol_i16x8_splat(int16_t s) { return wasm_i16x8_splat(s); }
#define ol_u16x8_shr(a, n) wasm_u16x8_shr((a), (n))
#define ol_i16x8_shr(a, n) wasm_i16x8_shr((a), (n))
static inline ol_i32x4 ol_i32x4_dot_i16x8(ol_i32x4 a, ol_i32x4 b) { return wasm_i32x4_dot_i16x8(a, b); }
static inline int32_t ol_i32x4_lane(ol_i32x4 v, int i) {
  int32_t x[4];
  wasm_v128_store(x, v);
  return x[i];
}
/* [a0 b0 a1 b1], [a2 b2 a3 b3], [a0 a1 b0 b1], [a2 a3 b2 b3] (32-bit lanes) */
static inline ol_i32x4 ol_i32x4_zip_lo(ol_i32x4 a, ol_i32x4 b) { return wasm_i32x4_shuffle(a, b, 0, 4, 1, 5); }
static inline ol_i32x4 ol_i32x4_zip_hi(ol_i32x4 a, ol_i32x4 b) { return wasm_i32x4_shuffle(a, b, 2, 6, 3, 7); }
static inline ol_i32x4 ol_i64x2_zip_lo(ol_i32x4 a, ol_i32x4 b) { return wasm_i64x2_shuffle(a, b, 0, 2); }
static inline ol_i32x4 ol_i64x2_zip_hi(ol_i32x4 a, ol_i32x4 b) { return wasm_i64x2_shuffle(a, b, 1, 3); }
static inline ol_f32x4 ol_f32x4_set(float a, float b, float c, float d) { return wasm_f32x4_make(a, b, c, d); }
/* lane i: the i-th vector's lanes as (l0 + l1) + (l2 + l3) */
static inline ol_f32x4 ol_f32x4_hsum4(ol_f32x4 a, ol_f32x4 b, ol_f32x4 c, ol_f32x4 d) {
  v128_t ab_lo = wasm_i32x4_shuffle(a, b, 0, 4, 1, 5), ab_hi = wasm_i32x4_shuffle(a, b, 2, 6, 3, 7);
  v128_t cd_lo = wasm_i32x4_shuffle(c, d, 0, 4, 1, 5), cd_hi = wasm_i32x4_shuffle(c, d, 2, 6, 3, 7);
  v128_t l0 = wasm_i64x2_shuffle(ab_lo, cd_lo, 0, 2), l1 = wasm_i64x2_shuffle(ab_lo, cd_lo, 1, 3);
  v128_t l2 = wasm_i64x2_shuffle(ab_hi, cd_hi, 0, 2), l3 = wasm_i64x2_shuffle(ab_hi, cd_hi, 1, 3);
  return wasm_f32x4_add(wasm_f32x4_add(l0, l1), wasm_f32x4_add(l2, l3));
}
static inline ol_i32x4 ol_i16x8_add(ol_i32x4 a, ol_i32x4 b) { return wasm_i16x8_add(a, b); }
extern volatile int32_t ol_vec_opaque_zero; /* simd/vec.c */
static inline ol_i32x4 ol_i32x4_opaque(ol_i32x4 v) { return wasm_v128_xor(v, wasm_i32x4_splat(ol_vec_opaque_zero)); }
#if defined(OL_WASM_RELAXED)
#include "simd/relaxed_dot.h"
#define OL_VEC_DOT_I8 1
static inline ol_i32x4 ol_i16x8_dot_i8x16_u7(ol_i32x4 a, ol_i32x4 b) { return ol_relaxed_dot_i8x16_i7x16(a, b); }
#else
#define OL_VEC_DOT_I8 0
/* even and odd bytes as 16-bit lanes (a sign-extended, b zero-extended) */
static inline ol_i32x4 ol_i16x8_dot_i8x16_u7(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 a_even = wasm_i16x8_shr(wasm_i16x8_shl(a, 8), 8), a_odd = wasm_i16x8_shr(a, 8);
  ol_i32x4 b_even = wasm_v128_and(b, wasm_i16x8_splat(0x00ff)), b_odd = wasm_u16x8_shr(b, 8);
  return wasm_i16x8_add(wasm_i16x8_mul(a_even, b_even), wasm_i16x8_mul(a_odd, b_odd));
}
#endif

#elif defined(__SSE2__)
#include <emmintrin.h>
#define OL_VEC_ISA "sse2"
typedef __m128 ol_f32x4;
static inline ol_f32x4 ol_f32x4_load(const float *p) { return _mm_loadu_ps(p); }
static inline void ol_f32x4_store(float *p, ol_f32x4 v) { _mm_storeu_ps(p, v); }
static inline ol_f32x4 ol_f32x4_splat(float s) { return _mm_set1_ps(s); }
static inline ol_f32x4 ol_f32x4_zero(void) { return _mm_setzero_ps(); }
static inline ol_f32x4 ol_f32x4_add(ol_f32x4 a, ol_f32x4 b) { return _mm_add_ps(a, b); }
static inline ol_f32x4 ol_f32x4_sub(ol_f32x4 a, ol_f32x4 b) { return _mm_sub_ps(a, b); }
static inline ol_f32x4 ol_f32x4_mul(ol_f32x4 a, ol_f32x4 b) { return _mm_mul_ps(a, b); }
static inline ol_f32x4 ol_f32x4_div(ol_f32x4 a, ol_f32x4 b) { return _mm_div_ps(a, b); }
static inline ol_f32x4 ol_f32x4_max(ol_f32x4 a, ol_f32x4 b) { return _mm_max_ps(a, b); }
static inline ol_f32x4 ol_f32x4_min(ol_f32x4 a, ol_f32x4 b) { return _mm_min_ps(a, b); }
static inline float ol_f32x4_lane(ol_f32x4 v, int i) {
  float f[4];
  _mm_storeu_ps(f, v);
  return f[i];
}
typedef __m128i ol_i32x4;
static inline ol_i32x4 ol_i32x4_load(const void *p) { return _mm_loadu_si128((const __m128i *)p); }
static inline ol_i32x4 ol_i32x4_load64_zero(const void *p) { return _mm_loadl_epi64((const __m128i *)p); }
static inline void ol_i32x4_store(void *p, ol_i32x4 v) { _mm_storeu_si128((__m128i *)p, v); }
static inline ol_i32x4 ol_i32x4_splat(int32_t s) { return _mm_set1_epi32(s); }
static inline ol_i32x4 ol_i32x4_and(ol_i32x4 a, ol_i32x4 b) { return _mm_and_si128(a, b); }
#define ol_u32x4_shr(a, n) _mm_srli_epi32((a), (n))
static inline ol_f32x4 ol_i32x4_to_f32x4(ol_i32x4 a) { return _mm_cvtepi32_ps(a); }
static inline ol_i32x4 ol_i32x4_add(ol_i32x4 a, ol_i32x4 b) { return _mm_add_epi32(a, b); }
static inline ol_i32x4 ol_i16x8_splat(int16_t s) { return _mm_set1_epi16(s); }
#define ol_u16x8_shr(a, n) _mm_srli_epi16((a), (n))
#define ol_i16x8_shr(a, n) _mm_srai_epi16((a), (n))
static inline ol_i32x4 ol_i32x4_dot_i16x8(ol_i32x4 a, ol_i32x4 b) { return _mm_madd_epi16(a, b); }
static inline int32_t ol_i32x4_lane(ol_i32x4 v, int i) {
  int32_t x[4];
  _mm_storeu_si128((__m128i *)x, v);
  return x[i];
}
static inline ol_i32x4 ol_i32x4_zip_lo(ol_i32x4 a, ol_i32x4 b) { return _mm_unpacklo_epi32(a, b); }
static inline ol_i32x4 ol_i32x4_zip_hi(ol_i32x4 a, ol_i32x4 b) { return _mm_unpackhi_epi32(a, b); }
static inline ol_i32x4 ol_i64x2_zip_lo(ol_i32x4 a, ol_i32x4 b) { return _mm_unpacklo_epi64(a, b); }
static inline ol_i32x4 ol_i64x2_zip_hi(ol_i32x4 a, ol_i32x4 b) { return _mm_unpackhi_epi64(a, b); }
static inline ol_f32x4 ol_f32x4_set(float a, float b, float c, float d) { return _mm_setr_ps(a, b, c, d); }
static inline ol_f32x4 ol_f32x4_hsum4(ol_f32x4 a, ol_f32x4 b, ol_f32x4 c, ol_f32x4 d) {
  __m128 ab_lo = _mm_unpacklo_ps(a, b), ab_hi = _mm_unpackhi_ps(a, b);
  __m128 cd_lo = _mm_unpacklo_ps(c, d), cd_hi = _mm_unpackhi_ps(c, d);
  __m128 l0 = _mm_movelh_ps(ab_lo, cd_lo), l1 = _mm_movehl_ps(cd_lo, ab_lo);
  __m128 l2 = _mm_movelh_ps(ab_hi, cd_hi), l3 = _mm_movehl_ps(cd_hi, ab_hi);
  return _mm_add_ps(_mm_add_ps(l0, l1), _mm_add_ps(l2, l3));
}
static inline ol_i32x4 ol_i16x8_add(ol_i32x4 a, ol_i32x4 b) { return _mm_add_epi16(a, b); }
static inline ol_i32x4 ol_i32x4_opaque(ol_i32x4 v) { return v; }
#if defined(__SSSE3__)
#include <tmmintrin.h>
#define OL_VEC_DOT_I8 1
/* pmaddubsw: unsigned b times signed a, byte pairs summed to 16 bits
 * (|sum| <= 2 * 127 * 128: no saturation) */
static inline ol_i32x4 ol_i16x8_dot_i8x16_u7(ol_i32x4 a, ol_i32x4 b) { return _mm_maddubs_epi16(b, a); }
#else
#define OL_VEC_DOT_I8 0
static inline ol_i32x4 ol_i16x8_dot_i8x16_u7(ol_i32x4 a, ol_i32x4 b) {
  __m128i a_even = _mm_srai_epi16(_mm_slli_epi16(a, 8), 8), a_odd = _mm_srai_epi16(a, 8);
  __m128i b_even = _mm_and_si128(b, _mm_set1_epi16(0x00ff)), b_odd = _mm_srli_epi16(b, 8);
  return _mm_add_epi16(_mm_mullo_epi16(a_even, b_even), _mm_mullo_epi16(a_odd, b_odd));
}
#endif

#else
#include <string.h>
#define OL_VEC_ISA "scalar"
typedef struct ol_f32x4 {
  float f[4];
} ol_f32x4;
static inline ol_f32x4 ol_f32x4_load(const float *p) {
  ol_f32x4 v;
  memcpy(v.f, p, sizeof v.f);
  return v;
}
static inline void ol_f32x4_store(float *p, ol_f32x4 v) { memcpy(p, v.f, sizeof v.f); }
static inline ol_f32x4 ol_f32x4_splat(float s) { return (ol_f32x4){{s, s, s, s}}; }
static inline ol_f32x4 ol_f32x4_zero(void) { return ol_f32x4_splat(0.0f); }
#define OL_F32X4_LANEWISE(NAME, EXPR)                                  \
  static inline ol_f32x4 NAME(ol_f32x4 a, ol_f32x4 b) {                \
    ol_f32x4 r;                                                        \
    for (int i = 0; i < 4; i++) {                                      \
      float x = a.f[i], y = b.f[i];                                    \
      r.f[i] = (EXPR);                                                 \
    }                                                                  \
    return r;                                                          \
  }
OL_F32X4_LANEWISE(ol_f32x4_add, x + y)
OL_F32X4_LANEWISE(ol_f32x4_sub, x - y)
OL_F32X4_LANEWISE(ol_f32x4_mul, x * y)
OL_F32X4_LANEWISE(ol_f32x4_div, x / y)
OL_F32X4_LANEWISE(ol_f32x4_max, x > y ? x : y)
OL_F32X4_LANEWISE(ol_f32x4_min, x < y ? x : y)
#undef OL_F32X4_LANEWISE
static inline float ol_f32x4_lane(ol_f32x4 v, int i) { return v.f[i]; }
typedef struct ol_i32x4 {
  uint32_t u[4];
} ol_i32x4;
static inline ol_i32x4 ol_i32x4_load(const void *p) {
  const unsigned char *b = (const unsigned char *)p;
  ol_i32x4 v;
  for (int i = 0; i < 4; i++)
    v.u[i] = (uint32_t)b[4 * i] | (uint32_t)b[4 * i + 1] << 8 | (uint32_t)b[4 * i + 2] << 16 |
             (uint32_t)b[4 * i + 3] << 24;
  return v;
}
static inline ol_i32x4 ol_i32x4_load64_zero(const void *p) {
  unsigned char b[16] = {0};
  memcpy(b, p, 8);
  return ol_i32x4_load(b);
}
static inline void ol_i32x4_store(void *p, ol_i32x4 v) {
  unsigned char *b = (unsigned char *)p;
  for (int i = 0; i < 16; i++) b[i] = (unsigned char)(v.u[i / 4] >> (8 * (i % 4)));
}
static inline ol_i32x4 ol_i32x4_splat(int32_t s) {
  return (ol_i32x4){{(uint32_t)s, (uint32_t)s, (uint32_t)s, (uint32_t)s}};
}
static inline ol_i32x4 ol_i32x4_and(ol_i32x4 a, ol_i32x4 b) {
  for (int i = 0; i < 4; i++) a.u[i] &= b.u[i];
  return a;
}
static inline ol_i32x4 ol_u32x4_shr(ol_i32x4 a, int n) {
  for (int i = 0; i < 4; i++) a.u[i] >>= n;
  return a;
}
static inline ol_f32x4 ol_i32x4_to_f32x4(ol_i32x4 a) {
  ol_f32x4 r;
  for (int i = 0; i < 4; i++) r.f[i] = (float)(int32_t)a.u[i];
  return r;
}
static inline ol_i32x4 ol_i32x4_add(ol_i32x4 a, ol_i32x4 b) {
  for (int i = 0; i < 4; i++) a.u[i] += b.u[i];
  return a;
}
/* 16-bit lane j of v: the low (j even) or high half of 32-bit lane j / 2 */
static inline uint16_t ol_i16x8_get(ol_i32x4 v, int j) { return (uint16_t)(v.u[j / 2] >> (16 * (j % 2))); }
static inline ol_i32x4 ol_i16x8_splat(int16_t s) {
  uint32_t w = (uint32_t)(uint16_t)s * 0x10001u;
  return (ol_i32x4){{w, w, w, w}};
}
static inline ol_i32x4 ol_u16x8_shr(ol_i32x4 a, int n) {
  ol_i32x4 r;
  for (int i = 0; i < 4; i++)
    r.u[i] = (uint32_t)(uint16_t)(ol_i16x8_get(a, 2 * i) >> n) | (uint32_t)(uint16_t)(ol_i16x8_get(a, 2 * i + 1) >> n) << 16;
  return r;
}
/* (int16 >> n: arithmetic, as every compiler this builds with does it) */
static inline ol_i32x4 ol_i16x8_shr(ol_i32x4 a, int n) {
  ol_i32x4 r;
  for (int i = 0; i < 4; i++)
    r.u[i] = (uint32_t)(uint16_t)((int16_t)ol_i16x8_get(a, 2 * i) >> n) |
             (uint32_t)(uint16_t)((int16_t)ol_i16x8_get(a, 2 * i + 1) >> n) << 16;
  return r;
}
static inline ol_i32x4 ol_i32x4_dot_i16x8(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 r;
  for (int i = 0; i < 4; i++) {
    int32_t lo = (int32_t)(int16_t)ol_i16x8_get(a, 2 * i) * (int16_t)ol_i16x8_get(b, 2 * i);
    int32_t hi = (int32_t)(int16_t)ol_i16x8_get(a, 2 * i + 1) * (int16_t)ol_i16x8_get(b, 2 * i + 1);
    r.u[i] = (uint32_t)lo + (uint32_t)hi;
  }
  return r;
}
static inline int32_t ol_i32x4_lane(ol_i32x4 v, int i) { return (int32_t)v.u[i]; }
static inline ol_i32x4 ol_i32x4_zip_lo(ol_i32x4 a, ol_i32x4 b) { return (ol_i32x4){{a.u[0], b.u[0], a.u[1], b.u[1]}}; }
static inline ol_i32x4 ol_i32x4_zip_hi(ol_i32x4 a, ol_i32x4 b) { return (ol_i32x4){{a.u[2], b.u[2], a.u[3], b.u[3]}}; }
static inline ol_i32x4 ol_i64x2_zip_lo(ol_i32x4 a, ol_i32x4 b) { return (ol_i32x4){{a.u[0], a.u[1], b.u[0], b.u[1]}}; }
static inline ol_i32x4 ol_i64x2_zip_hi(ol_i32x4 a, ol_i32x4 b) { return (ol_i32x4){{a.u[2], a.u[3], b.u[2], b.u[3]}}; }
static inline ol_f32x4 ol_f32x4_set(float a, float b, float c, float d) { return (ol_f32x4){{a, b, c, d}}; }
static inline ol_f32x4 ol_f32x4_hsum4(ol_f32x4 a, ol_f32x4 b, ol_f32x4 c, ol_f32x4 d) {
  const ol_f32x4 *v[4] = {&a, &b, &c, &d};
  ol_f32x4 r;
  for (int i = 0; i < 4; i++) r.f[i] = (v[i]->f[0] + v[i]->f[1]) + (v[i]->f[2] + v[i]->f[3]);
  return r;
}
#define OL_VEC_DOT_I8 0
static inline ol_i32x4 ol_i16x8_dot_i8x16_u7(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 r;
  for (int i = 0; i < 4; i++) {
    uint32_t w = 0;
    for (int h = 0; h < 2; h++) {
      int32_t sum = 0;
      for (int k = 2 * h; k < 2 * h + 2; k++) sum += (int8_t)(a.u[i] >> (8 * k)) * (int32_t)(uint8_t)(b.u[i] >> (8 * k));
      w |= (uint32_t)(uint16_t)sum << (16 * h);
    }
    r.u[i] = w;
  }
  return r;
}
static inline ol_i32x4 ol_i16x8_add(ol_i32x4 a, ol_i32x4 b) {
  ol_i32x4 r;
  for (int i = 0; i < 4; i++)
    r.u[i] = (uint32_t)(uint16_t)(ol_i16x8_get(a, 2 * i) + ol_i16x8_get(b, 2 * i)) |
             (uint32_t)(uint16_t)(ol_i16x8_get(a, 2 * i + 1) + ol_i16x8_get(b, 2 * i + 1)) << 16;
  return r;
}
static inline ol_i32x4 ol_i32x4_opaque(ol_i32x4 v) { return v; }
#endif

/* ------------------------------------------------------------ shared helpers */

/* The pairwise widening sum as a dot product with the caller's opaque ones
 * (see above). */
static inline ol_i32x4 ol_i32x4_sum_i16x8_pairs(ol_i32x4 a, ol_i32x4 ones) { return ol_i32x4_dot_i16x8(a, ones); }

/* acc + a * b, two roundings (never fused). */
static inline ol_f32x4 ol_f32x4_muladd(ol_f32x4 acc, ol_f32x4 a, ol_f32x4 b) {
  return ol_f32x4_add(acc, ol_f32x4_mul(a, b));
}
/* (l0 + l1) + (l2 + l3) */
static inline float ol_f32x4_hsum(ol_f32x4 v) {
  return (ol_f32x4_lane(v, 0) + ol_f32x4_lane(v, 1)) + (ol_f32x4_lane(v, 2) + ol_f32x4_lane(v, 3));
}
/* max(max(l0, l1), max(l2, l3)) with the lane-wise rule above */
static inline float ol_f32x4_hmax(ol_f32x4 v) {
  float a = ol_f32x4_lane(v, 0), b = ol_f32x4_lane(v, 1), c = ol_f32x4_lane(v, 2), d = ol_f32x4_lane(v, 3);
  float x = a > b ? a : b, y = c > d ? c : d;
  return x > y ? x : y;
}

#endif
