/* Encoded values through the public API: EncodedValueProto bytes parsed into
 * OL_VALUE_ENCODED values and serialized back byte for byte, their logical
 * type and layout name read without decoding, bad bytes rejected; untyped
 * sequences of structs and encoded values. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"

/* EncodedValueProto bytes: a named inline layout, logical float[2, 3]. */
static uint8_t *sample_bytes(size_t *size, bool with_shape) {
  Onnx__StructTypeProto layout = ONNX__STRUCT_TYPE_PROTO__INIT;
  Onnx__StructTypeProto__Structure structure = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__INIT;
  layout.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE;
  layout.structure = &structure;
  layout.name = "example.layout/v1";
  Onnx__TensorShapeProto__Dimension d0 = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT, d1 = d0;
  d0.value_case = d1.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  d0.dim_value = 2;
  d1.dim_value = 3;
  Onnx__TensorShapeProto__Dimension *dims[2] = {&d0, &d1};
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = 2;
  shape.dim = dims;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  tt.has_elem_type = 1;
  tt.elem_type = OL_DTYPE_FLOAT;
  tt.shape = with_shape ? &shape : NULL;
  Onnx__TypeProto logical = ONNX__TYPE_PROTO__INIT;
  logical.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  logical.tensor_type = &tt;
  Onnx__EncodedValueProto e = ONNX__ENCODED_VALUE_PROTO__INIT;
  e.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  e.struct_type = &layout;
  e.logical_type = &logical;
  e.has_raw_data = 1;
  e.raw_data.len = 4;
  e.raw_data.data = (uint8_t *)"\x01\x02\x03\x04";
  e.name = "w";
  *size = onnx__encoded_value_proto__get_packed_size(&e);
  uint8_t *bytes = malloc(*size);
  onnx__encoded_value_proto__pack(&e, bytes);
  return bytes;
}

static void parse_and_serialize_round_trip(void) {
  size_t size = 0;
  uint8_t *bytes = sample_bytes(&size, true);
  ol_value *v = NULL;
  CHECK_OK(ol_encoded_value_parse(bytes, size, &v));
  if (!v) {
    free(bytes);
    return;
  }
  CHECK(ol_value_get_kind(v) == OL_VALUE_ENCODED);
  ol_dtype dtype = OL_DTYPE_UNDEFINED;
  int64_t dims[OL_MAX_RANK];
  size_t rank = 0;
  CHECK_OK(ol_encoded_value_logical_type(v, &dtype, dims, &rank));
  CHECK(dtype == OL_DTYPE_FLOAT && rank == 2 && dims[0] == 2 && dims[1] == 3);
  CHECK(ol_encoded_value_layout_name(v) && strcmp(ol_encoded_value_layout_name(v), "example.layout/v1") == 0);
  void *again = NULL;
  size_t again_size = 0;
  CHECK_OK(ol_encoded_value_serialize(v, &again, &again_size));
  CHECK(again_size == size && again && memcmp(again, bytes, size) == 0);
  ol_free(again);
  memset(bytes, 0, size); /* the value owns a copy */
  CHECK_OK(ol_encoded_value_serialize(v, &again, &again_size));
  CHECK(again_size == size);
  ol_free(again);
  ol_value_release(v);
  free(bytes);
}

static void bad_inputs_are_rejected(void) {
  ol_value *v = NULL;
  const uint8_t garbage[3] = {0xff, 0xff, 0xff};
  CHECK_STATUS(ol_encoded_value_parse(garbage, sizeof garbage, &v), OL_INVALID_ARGUMENT);
  CHECK(v == NULL && strstr(ol_last_error(), "not a serialized EncodedValueProto"));
  int64_t two = 2;
  ol_value *t = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, &two, 1, &t));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_STATUS(ol_encoded_value_serialize(t, &bytes, &size), OL_INVALID_ARGUMENT);
  ol_dtype dtype;
  int64_t dims[OL_MAX_RANK];
  size_t rank;
  CHECK_STATUS(ol_encoded_value_logical_type(t, &dtype, dims, &rank), OL_INVALID_ARGUMENT);
  CHECK(ol_encoded_value_layout_name(t) == NULL);
  uint8_t *shapeless = sample_bytes(&size, false);
  CHECK_OK(ol_encoded_value_parse(shapeless, size, &v));
  CHECK_STATUS(ol_encoded_value_logical_type(v, &dtype, dims, &rank), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "encoded value 'w' has no logical tensor type with a shape"));
  ol_value_release(v);
  free(shapeless);
  ol_value_release(t);
}

static void untyped_sequences_hold_one_kind(void) {
  int64_t two = 2;
  ol_value *t = NULL, *a = NULL, *b = NULL, *seq = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, &two, 1, &t));
  const char *names[1] = {"key"};
  CHECK_OK(ol_struct_create(names, &t, 1, &a));
  CHECK_OK(ol_struct_create(names, &t, 1, &b));
  ol_value *structs[2] = {a, b}, *mixed[2] = {a, t};
  CHECK_OK(ol_sequence_create(OL_DTYPE_UNDEFINED, structs, 2, &seq));
  CHECK(seq && ol_sequence_length(seq) == 2 && ol_sequence_at(seq, 1) == b);
  ol_value_release(seq);
  seq = NULL;
  CHECK_STATUS(ol_sequence_create(OL_DTYPE_UNDEFINED, mixed, 2, &seq), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "sequence item 1 is not of the same kind as item 0"));
  CHECK_STATUS(ol_sequence_create(OL_DTYPE_FLOAT, structs, 2, &seq), OL_INVALID_ARGUMENT);
  ol_value_release(a);
  ol_value_release(b);
  ol_value_release(t);
}

OL_TEST_MAIN(TEST(parse_and_serialize_round_trip), TEST(bad_inputs_are_rejected), TEST(untyped_sequences_hold_one_kind))
