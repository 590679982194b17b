/* A [K, N] FLOAT encoded value of a portable affine profile, viewed in place
 * for simd/qaffine.h (the fused dequantize-in-register MatMul).
 *
 * Eligible values: self-contained (no parameter_ref), payload loaded, inline
 * or type_ref descriptor of a portable profile (not ORT), logical FLOAT
 * [K, N] with K, N > 0, no permutation, transform or outliers, every run
 * affine with 4- or 8-bit codes (int4, int8, eetq, gptq, awq, matmulnbits,
 * q4_k, hqq, exl2/exl3 with such runs, int8_per_channel or spqr without
 * their permutation/outliers...). The whole payload is checked as the
 * decoder would check it (schema, exact size, reserved byte, every block's
 * parameters and padding bits) and every possible code of every block must
 * reconstruct a finite float, so Dequantize would succeed and produce the
 * very values the kernel computes. Anything else is simply not eligible (the
 * caller keeps Dequantize + MatMul, which reports any error itself). */
#ifndef OL_QUANT_AFFINE_VIEW_H
#define OL_QUANT_AFFINE_VIEW_H
#include <stdbool.h>

#include "onnx_light.pb-c.h"
#include "quant/type_catalogue.h"
#include "simd/qaffine.h"

typedef struct ol_quant_affine_view {
  ol_qaffine weight;     /* runs point into the value's raw_data */
  ol_qaffine_run *runs;  /* owned */
} ol_quant_affine_view;

/* OL_OK with *eligible (and view filled) or !*eligible (*reason says why,
 * a static string); other statuses only for OL_OUT_OF_MEMORY. types (may be
 * NULL) resolves struct_type.type_ref. */
ol_status ol_quant_affine_view_make(const Onnx__EncodedValueProto *value, const ol_type_catalogue *types,
                                    ol_quant_affine_view *view, bool *eligible, const char **reason);
void ol_quant_affine_view_clear(ol_quant_affine_view *view);

#endif
