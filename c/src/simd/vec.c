/* The zero that ol_i32x4_opaque (simd/vec.h) reads at run time. */
#include "simd/vec.h"

#if defined(__wasm_simd128__)
volatile int32_t ol_vec_opaque_zero = 0;
#else
typedef int ol_vec_unused; /* ISO C: no empty translation unit */
#endif
