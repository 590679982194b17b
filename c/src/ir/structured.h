/* What is known about one structured (encoded) value without decoding it
 * (seed 002's SymStruct): the physical type (inline, or the declaration a
 * type_ref resolves to), the physical dims, the checked byte size, the
 * logical (decoded) type and, when that is a tensor, its shape.
 *
 * ol_structured_describe is the one helper that builds it: the graph builder
 * runs it on every structured initializer it is given, shape inference on
 * every encoded initializer it seeds. Its steps: resolve the physical type;
 * bind the dims (an array or bit_packing layout has its dimension, a
 * structure is one record); check the payload size for every layout kind
 * (the quantization wire layouts through their own decoder, other layouts
 * against the size their fields add up to); read the logical type. */
#ifndef OL_IR_STRUCTURED_H
#define OL_IR_STRUCTURED_H
#include <stdbool.h>
#include <stdint.h>

#include "onnx_light.pb-c.h"
#include "onnxlight.h"
#include "quant/type_catalogue.h"

typedef struct ol_struct_record {
  /* the physical layout (borrowed: the value's own or a catalogue entry);
   * NULL for an affine layout (AffineLayoutProto describes a tensor) */
  const Onnx__StructTypeProto *physical;
  int rank;                   /* physical dims: 1 for array / bit_packing, 0 for a structure */
  uint64_t dims[1];
  uint64_t byte_size;         /* the layout's payload bytes (0 when not computable: see size_known) */
  bool size_known;            /* byte_size follows from the layout alone */
  const Onnx__TypeProto *logical; /* EncodedValueProto.logical_type (borrowed; may be NULL) */
  /* the logical tensor, when logical is a tensor type */
  bool has_tensor;
  ol_dtype dtype;
  int tensor_rank;            /* -1: unknown */
  int64_t tensor_dims[OL_MAX_RANK]; /* -1: a dim without a value */
} ol_struct_record;

/* Fills *out for ev; types (may be NULL) resolves type_refs. A broken
 * reference, an unsupported element type or a payload whose size differs
 * from the layout's is OL_INVALID_MODEL naming the value. External and
 * compact (parameter_ref) payloads are not size-checked here (their bytes
 * are elsewhere: the loader and the parameter set check them). */
ol_status ol_structured_describe(const Onnx__EncodedValueProto *ev, const ol_type_catalogue *types,
                                 ol_struct_record *out);

/* The payload bits of a resolved struct type, or false when the layout does
 * not fix them (a field without a concrete shape, an unconstrained kind). */
bool ol_struct_type_bits(const Onnx__StructTypeProto *type, const ol_type_catalogue *types, uint64_t *bits);

#endif
