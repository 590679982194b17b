/* The call that scripts/relax-wasm.mjs turns into
 * i16x8.relaxed_dot_i8x16_i7x16_s (simd/relaxed_dot.h). Its body is the
 * plain integer definition, so the module is right before the rewrite too.
 * It keeps a loop on purpose: emcc's optimizer (binaryen) inlines small
 * loop-free functions, which would leave no call to rewrite; the rewrite finds
 * it as the one function of type (v128, v128) -> v128 with a loop of
 * products. Empty in every
 * other build. */
#include "simd/relaxed_dot.h"

#if defined(OL_WASM_RELAXED)
#include <stdint.h>

__attribute__((noinline)) v128_t ol_relaxed_dot_i8x16_i7x16(v128_t a, v128_t b) {
  int8_t x[16], y[16];
  int16_t r[8];
  wasm_v128_store(x, a);
  wasm_v128_store(y, b);
#pragma clang loop unroll(disable) vectorize(disable)
  for (int j = 0; j < 8; j++) r[j] = (int16_t)(x[2 * j] * y[2 * j] + x[2 * j + 1] * y[2 * j + 1]);
  return wasm_v128_load(r);
}
#else
typedef int ol_relaxed_dot_unused; /* ISO C: no empty translation unit */
#endif
