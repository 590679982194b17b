/* The portable self-contained EncodedValueProto layout (wire-facts §3.5):
 * an inline StructTypeProto named "onnx_light.quantization.v1/<profile>"
 * with fields reserved, permutation, forward, inverse, outlier_indices,
 * outlier_values and blocks { count (constant), run_<first block> ... },
 * each run an array of blocks { parameters (9 x INT64 constant), scale,
 * zero_point, offset, codebook, codes }; adjacent runs with identical headers
 * are merged. raw_data is the codec payload (codec.h).
 *
 * The ORT MatMulNBits profiles use their own layout (ort.h); the two proto
 * entry points below dispatch to it by the plan's format / the root name.
 *
 * Messages built here are malloc-owned throughout, so they are released with
 * the generated *_free_unpacked(msg, NULL) (ol_quant_proto_free). */
#ifndef OL_QUANT_WIRE_H
#define OL_QUANT_WIRE_H
#include <stdint.h>

#include "core/value.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"
#include "quant/plan.h"
#include "quant/type_catalogue.h"

/* make_quantization_type(plan): the storage descriptor of a portable plan
 * (needs only layouts and sizes, not codebook values or matrices). */
ol_status ol_quant_make_type_proto(const ol_quant_plan *plan, Onnx__StructTypeProto **out);

/* quantize_tensor_proto: data holds the logical tensor (FLOAT/DOUBLE/FLOAT16/BFLOAT16,
 * rank/dims concrete); name may be NULL (absent). */
ol_status ol_quant_encode_proto(const ol_quant_plan *plan, ol_dtype dtype, const void *data,
                                int rank, const int64_t *dims, const char *name,
                                Onnx__EncodedValueProto **out);

/* A decoded logical tensor as doubles (values malloc'd). */
typedef struct ol_quant_decoded {
  ol_dtype dtype;
  int rank;
  int64_t dims[OL_MAX_RANK];
  uint64_t count;
  double *values;
} ol_quant_decoded;

/* dequantize: checks the descriptor against the exact versioned schema and the
 * payload against it; types (may be NULL) resolves struct_type.type_ref. If parsed is not NULL it receives the plan
 * read from the message (portable layouts only; NULL for ORT values).
 * Converting out->values to out->dtype is ol_quant_write_floats (codec.h). */
ol_status ol_quant_decode_proto(const Onnx__EncodedValueProto *value, const ol_type_catalogue *types,
                                ol_quant_decoded *out, ol_quant_plan **parsed);
void ol_quant_decoded_clear(ol_quant_decoded *decoded);

/* The plan a destination descriptor (inline or a struct_type.type_ref resolved
 * through types) declares for a tensor of count elements, as the
 * Quantize operator uses it: the format from the root name, run layouts and
 * block counts from the headers (checked against the exact versioned schema),
 * and per-block defaults: scale 1, zero point 0 (2^(bits-1) for unsigned
 * affine codes), offset 0, the profile's fixed table where its size matches
 * (learned codebooks stay empty). permutation_size, transform_size
 * (forward_size/inverse_size) and outlier_count are the declared sizes with
 * NULL arrays: the caller supplies them (ol_quant_plan_set_*) before encoding.
 * ORT MatMulNBits descriptors give OL_NOT_IMPLEMENTED. */
ol_status ol_quant_plan_from_type(const Onnx__StructTypeProto *type, const ol_type_catalogue *types,
                                  uint64_t count, ol_quant_plan **out);
/* The same plan without a tensor (Quantize builds it once, at kernel
 * creation): ol_quant_plan_fits then checks the declared permutation and
 * outlier sizes against a tensor of count elements. */
ol_status ol_quant_plan_declared(const Onnx__StructTypeProto *type, const ol_type_catalogue *types,
                                 ol_quant_plan **out);
ol_status ol_quant_plan_fits(const ol_quant_plan *declared, uint64_t count);

/* The structure a resolved portable descriptor root declares for count
 * elements (format already set in shape, which must be empty): run layouts
 * and block counts (no blocks), permutation_size, transform_size and
 * outlier_count, checked against the exact versioned schema. No payload is
 * read. */
ol_status ol_quant_descriptor_shape(const Onnx__StructTypeProto *root, uint64_t count,
                                    ol_quant_plan *shape);

void ol_quant_proto_free(Onnx__EncodedValueProto *value);

/* True when the value is marked external (data_location EXTERNAL or
 * external_data entries) and its raw_data is not loaded yet. A loaded value
 * keeps that metadata and is accepted (seed: "quantization accepts it once
 * raw_data is loaded, without changing that metadata"). */
bool ol_quant_payload_unloaded(const Onnx__EncodedValueProto *value);
void ol_quant_type_free(Onnx__StructTypeProto *type);

#endif
