/* Messages for the graph builder tests: packing a protobuf-c message and
 * adding or replacing it as a builder part, node protos and float value
 * infos built on the stack. */
#ifndef OL_TESTS_BUILDER_MESSAGES_H
#define OL_TESTS_BUILDER_MESSAGES_H

#include <stdint.h>
#include <stdlib.h>

#include "onnx_light.pb-c.h"
#include "onnxlight.h"

#define ADD_PART SIZE_MAX /* put_float_value: add instead of replacing */

typedef struct bytes {
  uint8_t *data;
  size_t size;
} bytes;

static inline bytes packed(const ProtobufCMessage *msg) {
  bytes b = {NULL, protobuf_c_message_get_packed_size(msg)};
  b.data = malloc(b.size ? b.size : 1);
  protobuf_c_message_pack(msg, b.data);
  return b;
}

static inline ol_status add_packed(ol_builder *b, ol_builder_part part, const ProtobufCMessage *msg) {
  bytes p = packed(msg);
  ol_status st = ol_builder_add(b, part, p.data, p.size);
  free(p.data);
  return st;
}

static inline ol_status replace_packed(ol_builder *b, ol_builder_part part, size_t index, const ProtobufCMessage *msg) {
  bytes p = packed(msg);
  ol_status st = ol_builder_replace(b, part, index, p.data, p.size);
  free(p.data);
  return st;
}

/* A node reading inputs and writing outputs (the arrays must outlive it). */
static inline Onnx__NodeProto node_proto(const char *name, const char *op, char **inputs, size_t n_inputs,
                                         char **outputs, size_t n_outputs) {
  Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
  n.name = (char *)name;
  n.op_type = (char *)op;
  n.n_input = n_inputs;
  n.input = inputs;
  n.n_output = n_outputs;
  n.output = outputs;
  return n;
}

/* Adds (index ADD_PART) or replaces a float tensor value info name[dims]; a
 * negative dim is the symbol 'batch'. */
static inline ol_status put_float_value(ol_builder *b, ol_builder_part part, size_t index, const char *name,
                                        const int64_t *dims, size_t rank) {
  Onnx__TensorShapeProto__Dimension d[4], *dim_ptrs[4];
  for (size_t i = 0; i < rank && i < 4; i++) {
    onnx__tensor_shape_proto__dimension__init(&d[i]);
    if (dims[i] < 0) {
      d[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
      d[i].dim_param = "batch";
    } else {
      d[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
      d[i].dim_value = dims[i];
    }
    dim_ptrs[i] = &d[i];
  }
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = rank < 4 ? rank : 4;
  shape.dim = dim_ptrs;
  Onnx__TypeProto__Tensor tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
  tensor.has_elem_type = 1;
  tensor.elem_type = OL_DTYPE_FLOAT;
  tensor.shape = &shape;
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp.tensor_type = &tensor;
  Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
  vi.name = (char *)name;
  vi.type = &tp;
  return index == ADD_PART ? add_packed(b, part, &vi.base) : replace_packed(b, part, index, &vi.base);
}

#endif
