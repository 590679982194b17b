/* Writing inferred types into GraphProto.value_info. The new messages are
 * built on the stack and copied by a pack/unpack round trip, so every part
 * of the result is owned by the default protobuf-c allocator like the rest
 * of the unpacked model (and freed with it). */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "model/infer_internal.h"

/* A malloc-owned copy of tp. */
static Onnx__TypeProto *copy_type(const Onnx__TypeProto *tp) {
  size_t size = onnx__type_proto__get_packed_size(tp);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (!bytes) return NULL;
  onnx__type_proto__pack(tp, bytes);
  Onnx__TypeProto *copy = onnx__type_proto__unpack(NULL, size, bytes);
  free(bytes);
  if (!copy) ol_error(OL_OUT_OF_MEMORY, "out of memory copying an inferred type");
  return copy;
}

/* The TypeProto of an inferred type (malloc-owned), NULL when out of memory. */
static Onnx__TypeProto *build_type(const ol_infer_type *t) {
  if (t->proto) return copy_type(t->proto);
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  if (t->kind == OL_VALUE_ENCODED) {
    tp.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
    tp.struct_type = t->encoded->struct_type;
    return copy_type(&tp);
  }
  Onnx__TypeProto__Tensor tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  Onnx__TensorShapeProto__Dimension dims[OL_MAX_RANK], *list[OL_MAX_RANK];
  tensor.has_elem_type = 1;
  tensor.elem_type = (int32_t)t->dtype;
  if (t->rank >= 0) {
    for (int i = 0; i < t->rank; i++) {
      Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
      if (t->dims[i].is_value) {
        d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
        d.dim_value = t->dims[i].value;
      } else if (t->dims[i].param) {
        d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
        d.dim_param = (char *)t->dims[i].param;
      }
      dims[i] = d;
      list[i] = &dims[i];
    }
    shape.n_dim = (size_t)t->rank;
    shape.dim = list;
    tensor.shape = &shape;
  }
  tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp.tensor_type = &tensor;
  return copy_type(&tp);
}

ol_status ol_infer_record_in(Onnx__ValueInfoProto *vi, const ol_infer_type *t) {
  Onnx__TypeProto *type = build_type(t);
  if (!type) return OL_OUT_OF_MEMORY;
  if (vi->type) onnx__type_proto__free_unpacked(vi->type, NULL);
  vi->type = type;
  return OL_OK;
}

ol_status ol_infer_record(Onnx__GraphProto *graph, const char *name, const ol_infer_type *t) {
  for (size_t i = 0; i < graph->n_value_info; i++) {
    Onnx__ValueInfoProto *vi = graph->value_info[i];
    if (vi->name && strcmp(vi->name, name) == 0) return ol_infer_record_in(vi, t);
  }
  Onnx__TypeProto *type = build_type(t);
  if (!type) return OL_OUT_OF_MEMORY;
  Onnx__ValueInfoProto *vi = malloc(sizeof *vi);
  char *copy = malloc(strlen(name) + 1);
  Onnx__ValueInfoProto **list = realloc(graph->value_info, (graph->n_value_info + 1) * sizeof *list);
  if (list) graph->value_info = list;
  if (!vi || !copy || !list) {
    free(vi);
    free(copy);
    onnx__type_proto__free_unpacked(type, NULL);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory recording the type of '%s'", name);
  }
  onnx__value_info_proto__init(vi);
  strcpy(copy, name);
  vi->name = copy;
  vi->type = type;
  graph->value_info[graph->n_value_info++] = vi;
  return OL_OK;
}
