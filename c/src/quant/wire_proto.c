/* Shared protobuf-c builders and readers for the quantization wire layouts. */
#include "quant/wire_proto.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "core/value.h"

#define INVALID(...) ol_error(OL_INVALID_ARGUMENT, __VA_ARGS__)

void *ol_qw_msg_new(size_t size, const void *init) {
  void *m = malloc(size);
  if (m) memcpy(m, init, size);
  return m;
}

Onnx__TypeProto *ol_qw_tensor_type(int32_t dtype, int rank, const int64_t *dims) {
  Onnx__TypeProto *type = NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT);
  Onnx__TypeProto__Tensor *tensor = NEW(Onnx__TypeProto__Tensor, ONNX__TYPE_PROTO__TENSOR__INIT);
  Onnx__TensorShapeProto *shape = NEW(Onnx__TensorShapeProto, ONNX__TENSOR_SHAPE_PROTO__INIT);
  Onnx__TensorShapeProto__Dimension **dim = rank ? calloc((size_t)rank, sizeof(*dim)) : NULL;
  bool ok = type && tensor && shape && (rank == 0 || dim);
  for (int i = 0; ok && i < rank; i++) {
    dim[i] = NEW(Onnx__TensorShapeProto__Dimension, ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT);
    if (!dim[i]) {
      ok = false;
      break;
    }
    dim[i]->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    dim[i]->dim_value = dims[i];
  }
  if (shape) shape->dim = dim, shape->n_dim = dim ? (size_t)rank : 0;
  else free(dim);
  if (tensor) tensor->has_elem_type = 1, tensor->elem_type = dtype, tensor->shape = shape;
  if (type) type->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, type->tensor_type = tensor;
  if (!type || !tensor) {
    if (tensor) protobuf_c_message_free_unpacked(&tensor->base, NULL);
    else if (shape) onnx__tensor_shape_proto__free_unpacked(shape, NULL);
    free(type);
    return NULL;
  }
  if (!ok) {
    onnx__type_proto__free_unpacked(type, NULL);
    return NULL;
  }
  return type;
}

Onnx__TypeProto *ol_qw_struct_type_of(Onnx__StructTypeProto *inner) {
  Onnx__TypeProto *type = inner ? NEW(Onnx__TypeProto, ONNX__TYPE_PROTO__INIT) : NULL;
  if (!type) {
    if (inner) onnx__struct_type_proto__free_unpacked(inner, NULL);
    return NULL;
  }
  type->value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  type->struct_type = inner;
  return type;
}

Onnx__TensorProto *ol_qw_int64_constant(const int64_t *values, size_t n, bool with_dims) {
  Onnx__TensorProto *t = NEW(Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
  if (!t) return NULL;
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64;
  t->int64_data = malloc(n * sizeof(int64_t));
  t->dims = with_dims ? malloc(sizeof(int64_t)) : NULL;
  if (!t->int64_data || (with_dims && !t->dims)) {
    onnx__tensor_proto__free_unpacked(t, NULL);
    return NULL;
  }
  memcpy(t->int64_data, values, n * sizeof(int64_t));
  t->n_int64_data = n;
  if (with_dims) t->dims[0] = (int64_t)n, t->n_dims = 1;
  return t;
}

Onnx__StructTypeProto *ol_qw_new_structure(const char *name) {
  Onnx__StructTypeProto *st = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  Onnx__StructTypeProto__Structure *s =
      NEW(Onnx__StructTypeProto__Structure, ONNX__STRUCT_TYPE_PROTO__STRUCTURE__INIT);
  char *copy = name ? ol_strdup(name) : NULL;
  if (!st || !s || (name && !copy)) {
    free(st), free(s), free(copy);
    return NULL;
  }
  st->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE;
  st->structure = s;
  st->name = copy;
  return st;
}

/* Appends a field holding type (TypeProto) or constant (TensorProto); takes
 * ownership of both. Returns false (and frees them) when out of memory. */
bool ol_qw_add_field(Onnx__StructTypeProto *st, const char *name, Onnx__TypeProto *type,
                      Onnx__TensorProto *constant) {
  Onnx__StructTypeProto__Structure *s = st->structure;
  field_t *f = (type || constant) ? NEW(field_t, ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__INIT)
                                  : NULL;
  field_t **grown = f ? realloc(s->field, (s->n_field + 1) * sizeof(*grown)) : NULL;
  char *copy = grown ? ol_strdup(name) : NULL;
  if (!copy) {
    if (grown) s->field = grown;
    free(f);
    if (type) onnx__type_proto__free_unpacked(type, NULL);
    if (constant) onnx__tensor_proto__free_unpacked(constant, NULL);
    return false;
  }
  f->name = copy;
  if (type) f->content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE, f->type = type;
  else f->content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT, f->constant = constant;
  s->field = grown;
  s->field[s->n_field++] = f;
  return true;
}

bool ol_qw_add_tensor(Onnx__StructTypeProto *st, const char *name, int32_t dtype, int rank,
                       int64_t d0, int64_t d1) {
  const int64_t dims[2] = {d0, d1};
  return ol_qw_add_field(st, name, ol_qw_tensor_type(dtype, rank, dims), NULL);
}

/* Element count of a concrete shape. */
ol_status ol_qw_shape_count(int rank, const int64_t *dims, uint64_t *count) {
  *count = 0;
  if (rank < 0 || rank > OL_MAX_RANK) return INVALID("Quantization rank %d out of range", rank);
  uint64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0) return INVALID("Quantization shape must be concrete (dim %d is %lld)", i,
                                    (long long)dims[i]);
    if (dims[i] != 0 && n > UINT64_MAX / (uint64_t)dims[i]) return INVALID("Quantization size overflow");
    n *= (uint64_t)dims[i];
  }
  *count = n;
  return OL_OK;
}

ol_status ol_qw_get_field(const Onnx__StructTypeProto *type, size_t index, const char *name,
                           const field_t **out) {
  *out = NULL;
  if (type->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE || !type->structure ||
      index >= type->structure->n_field)
    return INVALID("Invalid quantization structure (no field '%s')", name);
  const field_t *f = type->structure->field[index];
  if (!f->name || strcmp(f->name, name) != 0)
    return INVALID("Unexpected quantization field '%s' (expected '%s')", f->name ? f->name : "",
                   name);
  *out = f;
  return OL_OK;
}

/* Dimension `axis` of a tensor field of the given dtype and rank. */
ol_status ol_qw_extent(const field_t *f, int32_t dtype, size_t rank, size_t axis, uint64_t *out) {
  *out = 0;
  const Onnx__TypeProto__Tensor *t =
      f->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE && f->type &&
              f->type->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE
          ? f->type->tensor_type
          : NULL;
  if (!t || !t->has_elem_type || t->elem_type != dtype || !t->shape || t->shape->n_dim != rank ||
      axis >= rank || t->shape->dim[axis]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
      t->shape->dim[axis]->dim_value < 0)
    return INVALID("Invalid quantization field '%s' dtype or dimensions", f->name);
  *out = (uint64_t)t->shape->dim[axis]->dim_value;
  return OL_OK;
}

const Onnx__StructTypeProto *ol_qw_field_struct(const field_t *f) {
  return f->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE && f->type &&
                 f->type->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE
             ? f->type->struct_type
             : NULL;
}

/* The logical tensor: a concrete FLOAT/DOUBLE/FLOAT16/BFLOAT16 shape. */
ol_status ol_qw_logical_tensor(const Onnx__EncodedValueProto *v, ol_quant_decoded *out) {
  const Onnx__TypeProto *t = v->logical_type;
  if (!t || t->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !t->tensor_type->has_elem_type ||
      !ol_quant_float_bytes((ol_dtype)t->tensor_type->elem_type))
    return INVALID("Quantization logical type must be a concrete floating-point tensor");
  const Onnx__TensorShapeProto *shape = t->tensor_type->shape;
  if (!shape) return INVALID("Missing quantization logical shape");
  if (shape->n_dim > OL_MAX_RANK) return INVALID("Quantization logical rank too large");
  out->dtype = (ol_dtype)t->tensor_type->elem_type;
  out->rank = (int)shape->n_dim;
  for (size_t i = 0; i < shape->n_dim; i++) {
    if (shape->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE ||
        shape->dim[i]->dim_value < 0)
      return INVALID("Quantization logical shape must be concrete");
    out->dims[i] = shape->dim[i]->dim_value;
  }
  return ol_qw_shape_count(out->rank, out->dims, &out->count);
}

bool ol_quant_payload_unloaded(const Onnx__EncodedValueProto *value) {
  bool external = value->n_external_data ||
                  (value->has_data_location && value->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
  return external && !value->has_raw_data;
}

/* Serialized bytes of a descriptor ignoring type_id, for exact comparison. */
uint8_t *ol_qw_pack_without_id(const Onnx__StructTypeProto *type, size_t *size) {
  Onnx__StructTypeProto copy = *type;
  copy.has_type_id = 0;
  *size = onnx__struct_type_proto__get_packed_size(&copy);
  uint8_t *bytes = malloc(*size ? *size : 1);
  if (bytes) onnx__struct_type_proto__pack(&copy, bytes);
  return bytes;
}
ol_status ol_qw_same_descriptor(const Onnx__StructTypeProto *actual,
                                const Onnx__StructTypeProto *expected) {
  size_t a_size, b_size;
  uint8_t *a = ol_qw_pack_without_id(actual, &a_size), *b = ol_qw_pack_without_id(expected, &b_size);
  ol_status s = !a || !b ? ol_error(OL_OUT_OF_MEMORY, "out of memory comparing descriptors")
                : a_size != b_size || memcmp(a, b, a_size) != 0
                    ? INVALID("Quantization descriptor '%s' does not match its versioned schema",
                              actual->name ? actual->name : "")
                    : OL_OK;
  free(a), free(b);
  return s;
}
