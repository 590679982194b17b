/* Shared quantization parameter sets and compact encoded values (seed 003,
 * "Model-level shared parameters"; wire-facts §3.6).
 *
 * A parameter set binds a full portable storage descriptor, a concrete
 * logical tensor type and fixed numerical parameters (the Quantize inputs:
 * scales required, the rest optional). It is an immutable, ref-counted
 * snapshot: values retain it, so they outlive the model, session and context
 * that produced them.
 *
 * A compact value sets EncodedValueProto.parameter_ref to the set's name and
 * carries only the local bytes, in this order:
 *
 *   0x00 | O x double outlier values | every block's code bytes (run order)
 *
 * Its storage type (the "compact type", ol_quant_shared_type) is a structure
 * named "onnx_light.quantization.v1/shared/<profile>" with the fields
 * reserved UINT8 [1], outlier_values DOUBLE [O] and codes UINT8 [C], so the
 * descriptor's byte size equals the payload (e.g. 4 INT4 codes: 3 bytes).
 *
 * For the ORT MatMulNBits layouts the compact payload is the B bytes alone
 * (no header of any kind) and the compact type has the single field
 * B UINT8 [N, G, block_size * bits / 8]; the set keeps the descriptor and the
 * serialized scales / zero points that follow B in a self-contained value.
 * The set's storage type must be exactly the descriptor its parameters give
 * (scale dtype, zero-point storage). */
#ifndef OL_QUANT_SHARED_H
#define OL_QUANT_SHARED_H
#include <stdint.h>

#include "core/value.h"
#include "onnx_light.pb-c.h"
#include "quant/inputs.h"
#include "quant/plan.h"
#include "quant/wire.h"

#define OL_QUANT_PARAMETERS_PREFIX "onnx_light.quantization.parameters:"
#define OL_QUANT_SHARED_PREFIX OL_QUANT_WIRE_PREFIX "shared/"

typedef struct ol_quant_shared_set {
  int refcount;
  char *name;
  ol_quant_plan *plan;            /* every parameter resolved; never modified */
  Onnx__StructTypeProto *compact; /* the compact storage type */
  ol_dtype dtype;                 /* logical tensor type */
  int rank;
  int64_t dims[OL_MAX_RANK];
  uint64_t count;
  uint64_t compact_size; /* local payload bytes of every compact value */
  /* ORT MatMulNBits sets only (else NULL / 0): the full descriptor and the
   * parameter bytes that follow B */
  Onnx__StructTypeProto *ort_type;
  uint8_t *ort_tail;
  size_t ort_tail_size;
} ol_quant_shared_set;

/* Builds a set (refcount 1). storage: the full descriptor, inline or a
 * type_ref resolved through types (may be NULL); logical: a
 * concrete FLOAT/DOUBLE/FLOAT16/BFLOAT16 tensor TypeProto; inputs: tensors in
 * ol_quant_input order (index 0 ignored, NULL = absent), scales required.
 * Errors name the set. */
ol_status ol_quant_shared_create(const char *name, const Onnx__StructTypeProto *storage,
                                 const Onnx__TypeProto *logical, const ol_type_catalogue *types,
                                 const ol_tensor *const inputs[OL_QUANT_IN_COUNT],
                                 ol_quant_shared_set **out);
ol_quant_shared_set *ol_quant_shared_retain(ol_quant_shared_set *set);
void ol_quant_shared_release(ol_quant_shared_set *set);
/* Release callback for ol_value_attach_resource. */
void ol_quant_shared_release_resource(void *set);

/* The set an encoded value retains (ol_value_attach_resource), or NULL. */
ol_quant_shared_set *ol_quant_shared_of(const ol_value *value);
/* Attaches a new reference to set to value. */
void ol_quant_shared_attach(ol_value *value, ol_quant_shared_set *set);

/* A new copy of the set's compact storage type. */
ol_status ol_quant_shared_type(const ol_quant_shared_set *set, Onnx__StructTypeProto **out);

/* quantize_tensor_shared: encodes a tensor of exactly the set's logical type
 * with its fixed parameters (no calibration; values outside the range
 * saturate) into a compact value. name may be NULL. */
ol_status ol_quant_shared_encode(const ol_quant_shared_set *set, ol_dtype dtype, const void *data,
                                 int rank, const int64_t *dims, const char *name,
                                 Onnx__EncodedValueProto **out);

/* Non-materializing validation of a compact value against the set: reference
 * name, storage type (inline or type_ref through types), logical type, byte
 * extent, no external data and the reserved byte. Nothing is decoded. */
ol_status ol_quant_shared_check(const ol_quant_shared_set *set, const Onnx__EncodedValueProto *value,
                                const ol_type_catalogue *types);

/* A Quantize `type` attribute (inline or type_ref through types) selecting
 * the set must be its full storage descriptor. */
ol_status ol_quant_shared_check_storage(const ol_quant_shared_set *set,
                                        const Onnx__StructTypeProto *type,
                                        const ol_type_catalogue *types);

/* materialize_quantized_value: a self-contained value (inline full storage
 * type, every parameter, no parameter_ref); the source is unchanged. */
ol_status ol_quant_shared_materialize(const ol_quant_shared_set *set,
                                      const Onnx__EncodedValueProto *value,
                                      const ol_type_catalogue *types, Onnx__EncodedValueProto **out);

/* Dequantizes a compact value (materializes, then decodes). */
ol_status ol_quant_shared_decode(const ol_quant_shared_set *set, const Onnx__EncodedValueProto *value,
                                 const ol_type_catalogue *types, ol_quant_decoded *out);

/* ---- catalogues: the sets a model declares ------------------------------ */

typedef struct ol_quant_catalogue {
  int refcount;
  size_t count;
  ol_quant_shared_set **sets; /* retained */
} ol_quant_catalogue;

ol_status ol_quant_catalogue_new(ol_quant_catalogue **out);
/* Adds a reference to set; duplicate names are rejected. */
ol_status ol_quant_catalogue_add(ol_quant_catalogue *catalogue, ol_quant_shared_set *set);
/* The set named name, or NULL (catalogue may be NULL). */
ol_quant_shared_set *ol_quant_catalogue_find(const ol_quant_catalogue *catalogue, const char *name);
ol_quant_catalogue *ol_quant_catalogue_retain(ol_quant_catalogue *catalogue);
void ol_quant_catalogue_release(ol_quant_catalogue *catalogue);

#endif
