/* The portable quantization codecs: affine, codebook and cast blocks, with
 * the seed's pipeline (outliers -> permutation -> forward transform -> blocks;
 * decoding runs it backwards) over the self-contained raw_data layout of
 * wire-facts §3.5:
 *
 *   0x00 | P x int64 permutation | n^2 x double forward | n^2 x double inverse |
 *   O x int64 outlier indices | O x double outlier values |
 *   per block: double scale, zero_point, offset, codebook doubles, code bytes
 *
 * Everything little-endian; binary codes LSB-first with zero padding bits;
 * base-3 codes five trits per byte, first trit least significant.
 *
 * The ORT MatMulNBits profiles are rejected here: their layout is ort.h.
 *
 * Values cross this layer as doubles (exact widening of FLOAT, FLOAT16 and
 * BFLOAT16); ol_quant_read_floats / ol_quant_write_floats convert from and to
 * the four supported logical dtypes with nonfinite and overflow checks. */
#ifndef OL_QUANT_CODEC_H
#define OL_QUANT_CODEC_H
#include <stddef.h>
#include <stdint.h>

#include "onnxlight.h"
#include "quant/plan.h"

/* Widens count elements of a FLOAT/DOUBLE/FLOAT16/BFLOAT16 array. */
ol_status ol_quant_read_floats(ol_dtype dtype, const void *data, uint64_t count, double *out);
/* Narrows count values into dtype; rejects nonfinite values and overflow. */
ol_status ol_quant_write_floats(ol_dtype dtype, const double *values, uint64_t count, void *out);

/* Per-block calibration (the Quantize operator's rule when scales are
 * omitted), from the values as the blocks will see them (after outlier
 * removal, permutation and the forward transform). Sets every block's scale:
 * affine: the largest ratio of a positive (negative) value minus the offset to
 * the codes above (below) the zero point; scalar codebooks: ratio to the
 * largest (smallest) entry; cast: 1; all-zero blocks: 1. Zero points and
 * offsets are used as they are in the plan. Vector/additive codebooks need
 * explicit scales and are rejected, as are missing codebooks. ORT
 * MatMulNBits plans calibrate per column and K block (ol_quant_ort_calibrate). */
ol_status ol_quant_calibrate_values(ol_quant_plan *plan, const double *values, uint64_t count);

/* Encodes count values with plan into a new payload (malloc'd, *size bytes).
 * logical_dtype is the dtype decoding will produce: reconstructions that are
 * nonfinite or overflow it are rejected. */
ol_status ol_quant_encode(const ol_quant_plan *plan, const double *values, uint64_t count,
                          ol_dtype logical_dtype, uint8_t **payload, size_t *size);

/* Decodes a payload. `shape` gives the structure the descriptor declares:
 * format, run layouts and block counts (block parameters ignored, blocks may
 * be NULL), permutation_size, transform_size and outlier_count (arrays may be
 * NULL). Reads and validates every parameter, codebook index, padding bit,
 * permutation, inverse pair and the exact coverage of count values, then
 * writes the reconstruction to out[0..count). If parsed is not NULL it
 * receives the full plan read from the payload. */
ol_status ol_quant_decode(const ol_quant_plan *shape, const uint8_t *payload, size_t size,
                          uint64_t count, ol_dtype logical_dtype, double *out,
                          ol_quant_plan **parsed);

/* Round half to even, independent of the process rounding mode. */
double ol_quant_round_half_even(double value);

#endif
