/* The relaxed-SIMD build's 8-bit dot product (OL_WASM_RELAXED: the
 * onnx_light_relaxed modules, CMakeLists.txt). Emscripten 3.1.6 cannot emit
 * i16x8.relaxed_dot_i8x16_i7x16_s, so the C code calls this function,
 * never inlined, whose body is the plain integer definition; after linking,
 * scripts/relax-wasm.mjs replaces every call to it by the instruction (same
 * operands and result on the wasm stack). Callers keep b in 0..127, where
 * the instruction is deterministic (no sum can saturate) and equals the
 * definition bit for bit. */
#ifndef OL_SIMD_RELAXED_DOT_H
#define OL_SIMD_RELAXED_DOT_H
#if defined(OL_WASM_RELAXED)
#include <wasm_simd128.h>

__attribute__((const)) v128_t ol_relaxed_dot_i8x16_i7x16(v128_t a, v128_t b);
#endif
#endif
