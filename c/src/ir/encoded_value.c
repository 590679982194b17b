/* Encoded values (OL_VALUE_ENCODED) to and from EncodedValueProto bytes: the
 * bridge the JS package uses to pass quantized values in and out of a run. */
#include <stdlib.h>

#include "core/alloc.h"
#include "core/status.h"
#include "core/value.h"
#include "ir/model.h"
#include "ir/proto_depth.h"

static void free_unpacked(void *payload) { onnx__encoded_value_proto__free_unpacked(payload, NULL); }

/* A shallow copy of the EncodedValueProto whose nested fields and raw_data
 * belong to the owner's message, plus a reference on the owner. Consumers
 * read it as a const Onnx__EncodedValueProto (the message is the first
 * member). */
typedef struct encoded_view {
  Onnx__EncodedValueProto message;
  ol_proto_owner *owner;
} encoded_view;

static void encoded_view_free(void *payload) {
  encoded_view *view = payload;
  ol_proto_owner_release(view->owner);
  free(view);
}

ol_status ol_encoded_view_new(const Onnx__EncodedValueProto *ev, ol_proto_owner *owner, ol_value **out) {
  *out = NULL;
  encoded_view *view = ol_xmalloc(sizeof *view);
  if (!view) return OL_OUT_OF_MEMORY;
  view->message = *ev;
  view->owner = ol_proto_owner_retain(owner);
  return ol_value_new_encoded(view, encoded_view_free, out);
}

ol_status ol_encoded_value_parse(const void *bytes, size_t size, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_parse: out is NULL");
  *out = NULL;
  if (!bytes && size) return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_parse: bytes is NULL");
  OL_TRY(ol_proto_check_depth(&onnx__encoded_value_proto__descriptor, bytes, size, "EncodedValueProto"));
  Onnx__EncodedValueProto *proto = onnx__encoded_value_proto__unpack(NULL, size, bytes);
  if (!proto) return ol_error(OL_INVALID_ARGUMENT, "not a serialized EncodedValueProto (%zu bytes)", size);
  return ol_value_new_encoded(proto, free_unpacked, out);
}

ol_status ol_encoded_value_serialize(const ol_value *value, void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_serialize: NULL output");
  *out_bytes = NULL;
  *out_size = 0;
  if (!value || value->kind != OL_VALUE_ENCODED || !value->encoded)
    return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_serialize: not an encoded value");
  const Onnx__EncodedValueProto *proto = value->encoded;
  size_t n = onnx__encoded_value_proto__get_packed_size(proto);
  void *bytes = ol_xmalloc(n ? n : 1);
  if (!bytes) return OL_OUT_OF_MEMORY;
  onnx__encoded_value_proto__pack(proto, bytes);
  *out_bytes = bytes;
  *out_size = n;
  return OL_OK;
}

ol_status ol_encoded_value_logical_type(const ol_value *value, ol_dtype *dtype, int64_t *dims, size_t *rank) {
  if (!value || value->kind != OL_VALUE_ENCODED || !value->encoded || !dtype || !dims || !rank)
    return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_logical_type: not an encoded value (or NULL output)");
  const Onnx__EncodedValueProto *e = value->encoded;
  const Onnx__TypeProto *lt = e->logical_type;
  if (!lt || lt->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !lt->tensor_type->has_elem_type ||
      !lt->tensor_type->shape)
    return ol_error(OL_INVALID_ARGUMENT, "encoded value '%s' has no logical tensor type with a shape",
                    e->name ? e->name : "");
  const Onnx__TensorShapeProto *shape = lt->tensor_type->shape;
  if (shape->n_dim > OL_MAX_RANK)
    return ol_error(OL_INVALID_ARGUMENT, "encoded value '%s': logical rank %zu exceeds %d", e->name ? e->name : "",
                    shape->n_dim, OL_MAX_RANK);
  for (size_t d = 0; d < shape->n_dim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dim->dim_value < 0)
      return ol_error(OL_INVALID_ARGUMENT, "encoded value '%s': logical dimension %zu is not concrete",
                      e->name ? e->name : "", d);
    dims[d] = dim->dim_value;
  }
  *dtype = (ol_dtype)lt->tensor_type->elem_type;
  *rank = shape->n_dim;
  return OL_OK;
}

const char *ol_encoded_value_layout_name(const ol_value *value) {
  if (!value || value->kind != OL_VALUE_ENCODED || !value->encoded) return NULL;
  const Onnx__EncodedValueProto *e = value->encoded;
  if (e->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE || !e->struct_type) return NULL;
  return e->struct_type->name && e->struct_type->name[0] ? e->struct_type->name : NULL;
}

const char *ol_encoded_value_parameter_ref(const ol_value *value) {
  if (!value || value->kind != OL_VALUE_ENCODED || !value->encoded) return NULL;
  const Onnx__EncodedValueProto *e = value->encoded;
  return e->parameter_ref && e->parameter_ref[0] ? e->parameter_ref : NULL;
}

ol_status ol_encoded_value_raw_data(const ol_value *value, const void **data, size_t *size) {
  if (!data || !size) return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_raw_data: NULL output");
  *data = NULL;
  *size = 0;
  if (!value || value->kind != OL_VALUE_ENCODED || !value->encoded)
    return ol_error(OL_INVALID_ARGUMENT, "ol_encoded_value_raw_data: not an encoded value");
  const Onnx__EncodedValueProto *e = value->encoded;
  if (e->has_raw_data) {
    *data = e->raw_data.data;
    *size = e->raw_data.len;
  }
  return OL_OK;
}
