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
 * Loads and stores are unaligned. */
#ifndef OL_SIMD_VEC_H
#define OL_SIMD_VEC_H

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
#endif

/* ------------------------------------------------------------ shared helpers */

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
