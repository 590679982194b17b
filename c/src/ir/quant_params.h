/* Shared quantization parameter declarations in a ModelProto (seed 003,
 * "Representation, scope and lifetime"; wire-facts §3.6): a root-graph
 * quantization_annotation named "onnx_light.quantization.parameters:<name>"
 * maps roles to root initializer names through quant_parameter_tensor_names.
 * Roles storage_type and logical_type are rank-1 UINT8 initializers holding a
 * serialized StructTypeProto and TypeProto; the numerical roles are named like
 * Quantize's optional inputs (scales, zero_points, offsets, codebooks,
 * permutation, forward, inverse, outliers). add_quantization_parameters names
 * its initializers "onnx_light.quantization.parameters:<name>/<role>".
 * Unprefixed annotations keep their ordinary meaning and are ignored here. */
#ifndef OL_IR_QUANT_PARAMS_H
#define OL_IR_QUANT_PARAMS_H
#include "ir/model.h"
#include "quant/shared.h"

/* Builds the catalogue of every declaration (an empty catalogue when there is
 * none). Rejects duplicate set names, duplicate or unknown roles, missing
 * initializers, malformed descriptors and incompatible numerical tensors, with
 * a message naming the set. src (may be NULL: payloads copied, no external
 * data) decodes the numerical initializers. */
ol_status ol_quant_catalogue_from_model(const Onnx__ModelProto *model, const ol_tensor_source *src,
                                        ol_quant_catalogue **out);

/* add_quantization_parameters: validates the declaration completely, then
 * appends its initializers and annotation to model's root graph (model is
 * unchanged on failure; its repeated fields must be malloc-owned, as in a
 * message unpacked with the default allocator). inputs: Quantize's tensors in
 * ol_quant_input order (index 0 ignored, NULL = absent; scales required).
 * *compact (may be NULL) receives the compact storage type (caller frees it
 * with ol_quant_type_free). */
ol_status ol_quant_add_parameters_proto(Onnx__ModelProto *model, const char *name,
                                  const Onnx__StructTypeProto *storage, const Onnx__TypeProto *logical,
                                  const ol_tensor *const inputs[OL_QUANT_IN_COUNT],
                                  Onnx__StructTypeProto **compact);

/* The set named name that a loaded model declares (a new reference; an
 * error naming the set when it does not, or the model's declaration error
 * when its declarations failed to load). md NULL: an error asking for it. */
ol_status ol_quant_model_set(const ol_model_data *md, const char *name, ol_quant_shared_set **out);

/* Binds a compact value that carries no set to the set md declares (the
 * value then retains it); self-contained values and values with a set are
 * left alone. An undeclared set or a mismatching value is an error. Used by
 * conversions that receive bare messages for a known model (JS feeds). */
ol_status ol_quant_bind_value(ol_value *value, const ol_model_data *md);

#endif
