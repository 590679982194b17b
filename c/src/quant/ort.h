/* ORT MatMulNBits input layout (com.microsoft::MatMulNBits v1): profiles
 * ort_matmulnbits_int{2,4,8}. One shared unsigned affine run of
 * N * ceil(K/block_size) blocks (column first, then K group), encoded as an
 * EncodedValueProto whose raw_data is B, then scales, then optional zero
 * points, with no portable header:
 *
 *   parameters  INT64 constant [bits, block_size]
 *   B           UINT8 [N, G, block_size * bits / 8]   (LSB-first, zero tail codes)
 *   scales      source dtype [N, G]
 *   zero_points UINT8 [N, ceil(G * bits / 8)] packed per column, or source
 *               dtype [N, G]; omitted when all equal 2^(bits-1)
 *
 * Scales and zero points are rounded to the source dtype before encoding;
 * codes are round-half-even clipped to [0, 2^bits - 1]; reconstruction is
 * (code - zero_point) * scale. */
#ifndef OL_QUANT_ORT_H
#define OL_QUANT_ORT_H
#include <stdint.h>

#include "onnx_light.pb-c.h"
#include "quant/plan.h"
#include "quant/wire.h"

/* Owned initializers of a MatMulNBits node (zero_points NULL when implicit). */
typedef struct ol_quant_matmul_nbits_inputs {
  Onnx__TensorProto *weights; /* "B" */
  Onnx__TensorProto *scales;
  Onnx__TensorProto *zero_points;
  int64_t k, n, bits, block_size;
} ol_quant_matmul_nbits_inputs;

/* Extracts the node inputs without dequantizing (validates the descriptor,
 * payload extent, tail codes and zero-point padding). types may be NULL. */
ol_status ol_quant_export_matmul_nbits_inputs(const Onnx__EncodedValueProto *value,
                                              const ol_type_catalogue *types,
                                              ol_quant_matmul_nbits_inputs *out);
void ol_quant_matmul_nbits_inputs_clear(ol_quant_matmul_nbits_inputs *inputs);

/* Calibration of an ORT MatMulNBits plan from its [K, N] source (count =
 * K * N values, row-major): per column and K block, the largest ratio of a
 * positive (negative) value to the codes above (below) the block's zero
 * point; all-zero blocks get scale 1. Zero points are used as they are. */
ol_status ol_quant_ort_calibrate(ol_quant_plan *plan, const double *values, uint64_t count);

/* Used by wire.c: ORT encode (source [K, N] FLOAT/FLOAT16/BFLOAT16) and decode
 * of a resolved root whose name selected an ORT format. */
ol_status ol_quant_ort_encode_proto(const ol_quant_plan *plan, ol_dtype dtype, const void *data,
                                    int rank, const int64_t *dims, const char *name,
                                    Onnx__EncodedValueProto **out);
ol_status ol_quant_ort_decode_proto(const Onnx__EncodedValueProto *value,
                                    const Onnx__StructTypeProto *root, ol_quant_format format,
                                    ol_quant_decoded *out);

/* The parameter bytes of an ORT payload (scales, then zero points: what
 * follows B) and the descriptor, from a plan whose blocks carry fixed
 * parameters, without any source tensor (shared parameter sets).
 * *weight_bytes receives the size of B. */
ol_status ol_quant_ort_parameters(const ol_quant_plan *plan, ol_dtype dtype,
                                  Onnx__StructTypeProto **type, uint8_t **tail, size_t *tail_size,
                                  uint64_t *weight_bytes);

#endif
