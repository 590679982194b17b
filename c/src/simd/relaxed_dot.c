/* The call that scripts/relax-wasm.mjs turns into
 * i32x4.relaxed_dot_i8x16_i7x16_add_s (simd/relaxed_dot.h). Its body is the
 * plain integer definition, so the module is right before the rewrite too.
 * It keeps a loop on purpose: emcc's optimizer (binaryen) inlines small
 * loop-free functions, which would leave no call to rewrite; the rewrite finds
 * it as the one function of type (v128, v128, v128) -> v128. Empty in every
 * other build. */
#include "simd/relaxed_dot.h"

#if defined(OL_WASM_RELAXED)
#include <stdint.h>

__attribute__((noinline)) v128_t ol_relaxed_dot_i8x16_i7x16_add(v128_t a, v128_t b, v128_t c) {
  int8_t x[16], y[16];
  int32_t r[4];
  wasm_v128_store(x, a);
  wasm_v128_store(y, b);
  wasm_v128_store(r, c);
#pragma clang loop unroll(disable) vectorize(disable)
  for (int i = 0; i < 4; i++)
    r[i] += x[4 * i] * y[4 * i] + x[4 * i + 1] * y[4 * i + 1] + x[4 * i + 2] * y[4 * i + 2] + x[4 * i + 3] * y[4 * i + 3];
  return wasm_v128_load(r);
}
#else
typedef int ol_relaxed_dot_unused; /* ISO C: no empty translation unit */
#endif
