/* Structured value records (see structured.h). */
#include "ir/structured.h"

#include <string.h>

#include "core/dtype.h"
#include "core/limits.h"
#include "core/status.h"
#include "quant/catalogue.h"
#include "quant/wire.h"

#define INVALID(...) ol_error(OL_INVALID_MODEL, __VA_ARGS__)

static bool mul_ok(uint64_t a, uint64_t b, uint64_t *out) {
  if (a && b > UINT64_MAX / a) return false;
  *out = a * b;
  return true;
}

static bool type_bits(const Onnx__TypeProto *tp, const ol_type_catalogue *types, int depth, uint64_t *bits);

static bool struct_bits(const Onnx__StructTypeProto *type, const ol_type_catalogue *types, int depth, uint64_t *bits) {
  if (depth > OL_TYPE_REF_MAX_DEPTH) return false;
  const Onnx__StructTypeProto *st = NULL;
  if (ol_type_catalogue_resolve(types, type, &st) != OL_OK) {
    ol_clear_error();
    return false;
  }
  uint64_t total = 0, part = 0;
  switch (st->kind_case) {
  case ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY:
    return st->array && type_bits(st->array->element_type, types, depth + 1, &part) &&
           mul_ok(part, st->array->dimension, bits);
  case ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE:
    for (size_t f = 0; st->structure && f < st->structure->n_field; f++) {
      const Onnx__StructTypeProto__Structure__Field *fd = st->structure->field[f];
      if (fd->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT) continue; /* no payload */
      if (fd->content_case != ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE ||
          !type_bits(fd->type, types, depth + 1, &part) || total + part < total)
        return false;
      total += part;
    }
    *bits = total;
    return true;
  case ONNX__STRUCT_TYPE_PROTO__KIND_BIT_PACKING:
    if (!st->bit_packing) return false;
    for (size_t c = 0; c < st->bit_packing->n_component; c++) total += st->bit_packing->component[c]->bit_width;
    return mul_ok(total, st->bit_packing->dimension, bits);
  default:
    return false; /* unconstrained */
  }
}

/* A tensor of concrete shape and fixed-width elements, or a struct type. */
static bool type_bits(const Onnx__TypeProto *tp, const ol_type_catalogue *types, int depth, uint64_t *bits) {
  if (!tp) return false;
  if (tp->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE) return struct_bits(tp->struct_type, types, depth, bits);
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !tp->tensor_type->has_elem_type) return false;
  int width = ol_dtype_bits((ol_dtype)tp->tensor_type->elem_type);
  if (width <= 0) return false;
  uint64_t count = 1;
  const Onnx__TensorShapeProto *shape = tp->tensor_type->shape;
  for (size_t d = 0; shape && d < shape->n_dim; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dim->dim_value < 0 ||
        !mul_ok(count, (uint64_t)dim->dim_value, &count))
      return false;
  }
  return mul_ok(count, (uint64_t)width, bits);
}

bool ol_struct_type_bits(const Onnx__StructTypeProto *type, const ol_type_catalogue *types, uint64_t *bits) {
  return struct_bits(type, types, 0, bits);
}

static bool is_quantization_layout(const Onnx__StructTypeProto *root) {
  return root->name && strncmp(root->name, OL_QUANT_WIRE_PREFIX, strlen(OL_QUANT_WIRE_PREFIX)) == 0;
}

static void read_logical(const Onnx__TypeProto *lt, ol_struct_record *out) {
  out->logical = lt;
  if (!lt || lt->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) return;
  const Onnx__TypeProto__Tensor *t = lt->tensor_type;
  out->has_tensor = true;
  out->dtype = t->has_elem_type ? (ol_dtype)t->elem_type : OL_DTYPE_UNDEFINED;
  out->tensor_rank = t->shape && t->shape->n_dim <= OL_MAX_RANK ? (int)t->shape->n_dim : -1;
  for (int d = 0; d < out->tensor_rank; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = t->shape->dim[d];
    out->tensor_dims[d] = dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ? dim->dim_value : -1;
  }
}

ol_status ol_structured_describe(const Onnx__EncodedValueProto *ev, const ol_type_catalogue *types,
                                 ol_struct_record *out) {
  memset(out, 0, sizeof *out);
  out->tensor_rank = -1;
  const char *name = ev->name ? ev->name : "";
  read_logical(ev->logical_type, out);
  if (ev->layout_case == ONNX__ENCODED_VALUE_PROTO__LAYOUT_AFFINE) return OL_OK; /* a tensor layout: its codec checks it */
  if (ev->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE || !ev->struct_type)
    return INVALID("structured value '%s' has no layout (affine or struct_type)", name);
  /* 1. the physical type */
  if (ol_type_catalogue_resolve(types, ev->struct_type, &out->physical) != OL_OK)
    return ol_error_wrap(OL_INVALID_MODEL, "structured value '%s'", name);
  /* 2. its dims */
  const Onnx__StructTypeProto *st = out->physical;
  if (st->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY && st->array) {
    out->rank = 1;
    out->dims[0] = st->array->dimension;
  } else if (st->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_BIT_PACKING && st->bit_packing) {
    out->rank = 1;
    out->dims[0] = st->bit_packing->dimension;
  }
  /* 3. the payload size */
  bool external = ol_quant_payload_unloaded(ev);
  bool compact = ev->parameter_ref && ev->parameter_ref[0];
  uint64_t payload = ev->has_raw_data ? ev->raw_data.len : 0;
  if (is_quantization_layout(st)) {
    out->size_known = !external && !compact;
    out->byte_size = payload;
    if (!out->size_known) return OL_OK;
    ol_quant_decoded decoded;
    ol_status s = ol_quant_decode_proto(ev, types, &decoded, NULL);
    ol_quant_decoded_clear(&decoded);
    if (s == OL_OK || s == OL_OUT_OF_MEMORY) return s;
    return ol_error_wrap(OL_INVALID_MODEL, "structured value '%s': the payload does not fit its layout '%s'", name,
                         st->name);
  }
  uint64_t bits = 0;
  out->size_known = ol_struct_type_bits(st, types, &bits);
  out->byte_size = out->size_known ? bits / 8 + (bits % 8 != 0) : 0;
  if (out->size_known && !external && !compact && payload != out->byte_size)
    return INVALID("structured value '%s': the payload holds %llu bytes, its layout%s%s%s takes %llu", name,
                   (unsigned long long)payload, st->name ? " '" : "", st->name ? st->name : "", st->name ? "'" : "",
                   (unsigned long long)out->byte_size);
  return OL_OK;
}
