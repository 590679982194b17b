/* Structured values in shape inference: the record of an encoded
 * initializer (ir/structured.h: physical type, dims, checked byte size,
 * logical type and shape), its use through a model-local function and a
 * subgraph, the refusal of an encoded value on a tensor operator's input,
 * payload size checks for generic layouts, and the builder checking its
 * structured initializers with the same helper. */
#include <stdlib.h>
#include <string.h>

#include "builder_messages.h"
#include "harness.h"
#include "recorded_type.h"
#include "ir/model.h"
#include "ir/structured.h"
#include "model/infer_internal.h"
#include "onnxlight.h"

/* A portable INT8 encoded value named name of a float[2,4] tensor (serialized). */
static void *encoded_weight(const char *name, size_t *size) {
  float data[8] = {-4, -3, -2, -1, 0, 1, 2, 3};
  int64_t dims[] = {2, 4};
  ol_value *t = NULL, *e = NULL;
  ol_quant_plan *plan = NULL;
  void *bytes = NULL;
  CHECK_OK(ol_tensor_wrap(OL_DTYPE_FLOAT, dims, 2, data, sizeof data, NULL, NULL, &t));
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 8, 4, &plan));
  if (plan && t) CHECK_OK(ol_quant_calibrate(plan, t));
  if (plan && t) CHECK_OK(ol_quant_quantize(plan, t, name, &e));
  if (e) CHECK_OK(ol_encoded_value_serialize(e, &bytes, size));
  ol_value_release(e);
  ol_value_release(t);
  ol_quant_plan_destroy(plan);
  return bytes;
}

/* text (which reads W without defining it) + the encoded initializer W. */
static ol_model *with_weight(const char *text) {
  ol_model *parsed = NULL, *model = NULL;
  CHECK_OK(ol_model_parse_text(text, &parsed));
  void *bytes = NULL, *w = NULL;
  size_t size = 0, w_size = 0;
  if (parsed) CHECK_OK(ol_model_serialize(parsed, &bytes, &size));
  ol_model_destroy(parsed);
  ol_builder *b = NULL;
  if (bytes) CHECK_OK(ol_builder_from_model(bytes, size, &b));
  ol_free(bytes);
  bytes = NULL;
  w = encoded_weight("W", &w_size);
  if (b && w) CHECK_OK(ol_builder_add_structured_initializer(b, w, w_size));
  if (b) CHECK_OK(ol_builder_to_model(b, &bytes, &size));
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &model));
  ol_free(w);
  ol_free(bytes);
  ol_builder_destroy(b);
  return model;
}

/* The record: resolved physical type, byte size checked by the wire decoder, logical shape. */
static void test_record_of_encoded_initializer(void) {
  size_t size = 0;
  void *bytes = encoded_weight("W", &size);
  Onnx__EncodedValueProto *ev = bytes ? onnx__encoded_value_proto__unpack(NULL, size, bytes) : NULL;
  CHECK(ev != NULL);
  if (ev) {
    ol_struct_record r;
    CHECK_OK(ol_structured_describe(ev, NULL, &r));
    CHECK(r.physical == ev->struct_type);
    CHECK(r.size_known && r.byte_size == ev->raw_data.len);
    CHECK(r.has_tensor && r.dtype == OL_DTYPE_FLOAT && r.tensor_rank == 2 && r.tensor_dims[0] == 2 &&
          r.tensor_dims[1] == 4);
    /* one byte short: the wire decoder refuses it, naming the value */
    ev->raw_data.len--;
    CHECK_STATUS(ol_structured_describe(ev, NULL, &r), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "structured value 'W'") != NULL);
    onnx__encoded_value_proto__free_unpacked(ev, NULL);
  }
  ol_free(bytes);
}

/* Generic layouts: an array of 3 records { uint8 a; int4[2] b } takes 3 * 16 bits;
 * through a type_ref the record names the resolved declaration and its dims. */
static void test_generic_layout_size(void) {
  Onnx__TypeProto__Tensor u8 = ONNX__TYPE_PROTO__TENSOR__INIT, i4 = ONNX__TYPE_PROTO__TENSOR__INIT;
  u8.has_elem_type = i4.has_elem_type = 1;
  u8.elem_type = OL_DTYPE_UINT8;
  i4.elem_type = OL_DTYPE_INT4;
  Onnx__TensorShapeProto__Dimension two = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
  two.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  two.dim_value = 2;
  Onnx__TensorShapeProto__Dimension *dims[] = {&two};
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = 1;
  shape.dim = dims;
  i4.shape = &shape;
  Onnx__TypeProto ta = ONNX__TYPE_PROTO__INIT, tb = ONNX__TYPE_PROTO__INIT;
  ta.value_case = tb.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  ta.tensor_type = &u8;
  tb.tensor_type = &i4;
  Onnx__StructTypeProto__Structure__Field fa = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__INIT, fb = fa;
  fa.name = "a";
  fb.name = "b";
  fa.content_case = fb.content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE;
  fa.type = &ta;
  fb.type = &tb;
  Onnx__StructTypeProto__Structure__Field *fields[] = {&fa, &fb};
  Onnx__StructTypeProto__Structure structure = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__INIT;
  structure.n_field = 2;
  structure.field = fields;
  Onnx__StructTypeProto record = ONNX__STRUCT_TYPE_PROTO__INIT;
  record.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE;
  record.structure = &structure;
  Onnx__TypeProto record_type = ONNX__TYPE_PROTO__INIT;
  record_type.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  record_type.struct_type = &record;
  Onnx__StructTypeProto__Array array = ONNX__STRUCT_TYPE_PROTO__ARRAY__INIT;
  array.element_type = &record_type;
  array.has_dimension = 1;
  array.dimension = 3;
  Onnx__StructTypeProto decl = ONNX__STRUCT_TYPE_PROTO__INIT;
  decl.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY;
  decl.array = &array;
  decl.has_type_id = 1;
  decl.type_id = 4;
  decl.name = "records";
  const Onnx__StructTypeProto *decls[] = {&decl};
  ol_type_catalogue *types = NULL;
  CHECK_OK(ol_type_catalogue_create(decls, 1, &types));

  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 4;
  uint8_t payload[6] = {0};
  Onnx__EncodedValueProto ev = ONNX__ENCODED_VALUE_PROTO__INIT;
  ev.name = "R";
  ev.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  ev.struct_type = &ref;
  ev.has_raw_data = 1;
  ev.raw_data.data = payload;
  ev.raw_data.len = 6;
  ol_struct_record r;
  CHECK_OK(ol_structured_describe(&ev, types, &r));
  CHECK(r.physical == &decl && r.rank == 1 && r.dims[0] == 3 && r.size_known && r.byte_size == 6);
  CHECK(!r.has_tensor && r.logical == NULL);
  ev.raw_data.len = 5;
  CHECK_STATUS(ol_structured_describe(&ev, types, &r), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "'R': the payload holds 5 bytes, its layout 'records' takes 6") != NULL);
  /* the builder refuses it with the same helper ... */
  ol_builder_opset opset = {"", 18};
  ol_builder *b = NULL;
  CHECK_OK(ol_builder_create(10, &opset, 1, &b));
  bytes short_value = packed(&ev.base), declaration = packed(&decl.base);
  /* ... first because type 4 is not declared yet */
  CHECK_STATUS(ol_builder_add_structured_initializer(b, short_value.data, short_value.size), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "type_ref 4") != NULL);
  CHECK_OK(ol_builder_add_struct_type(b, declaration.data, declaration.size));
  CHECK_STATUS(ol_builder_add_structured_initializer(b, short_value.data, short_value.size), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "holds 5 bytes") != NULL);
  ev.raw_data.len = 6;
  bytes value = packed(&ev.base);
  CHECK_OK(ol_builder_add_structured_initializer(b, value.data, value.size));
  free(value.data);
  free(short_value.data);
  free(declaration.data);
  ol_builder_destroy(b);
  ol_type_catalogue_destroy(types);
}

/* W reaches ai.rt::Dequantize through a model-local function (its record
 * bound to the function input) and inside both branches of an If (outer
 * structured values in scope); the logical shape comes out everywhere. */
static void test_through_function_and_subgraph(void) {
  ol_model *m = with_weight(
      "<ir_version: 10, opset_import: [\"\" : 18, \"ai.rt\" : 1, \"local\" : 1]>\n"
      "g (bool c) => (float[2,4] y, float[2,4] z) {\n"
      "  t = local.Decode(W)\n"
      "  y = Identity(t)\n"
      "  u = If(c) <then_branch = a () => (oa) { oa = ai.rt.Dequantize <dtype = 1> (W) },\n"
      "             else_branch = e () => (oe) { pe = local.Decode(W)\n oe = Identity(pe) }>\n"
      "  z = Identity(u)\n"
      "}\n"
      "<domain: \"local\", opset_import: [\"\" : 18, \"ai.rt\" : 1]>\n"
      "Decode (x) => (r) { r = ai.rt.Dequantize <dtype = 1> (x) }\n");
  if (!m) return;
  ol_model *inferred = NULL;
  CHECK_OK(ol_model_infer_shapes(m, &inferred));
  if (inferred) {
    const ol_graph *g = inferred->data->graph;
    CHECK_RECORDED(g, "t", "float32[2,4]");
    CHECK_RECORDED(g, "u", "float32[2,4]");
    /* the branches' own values */
    const ol_graph *then_branch = NULL, *else_branch = NULL;
    for (size_t i = 0; i < g->num_nodes; i++)
      if (strcmp(g->nodes[i].op_type, "If") == 0) {
        then_branch = ol_attr_graph(&g->nodes[i], "then_branch");
        else_branch = ol_attr_graph(&g->nodes[i], "else_branch");
      }
    if (else_branch) CHECK_RECORDED(else_branch, "pe", "float32[2,4]");
    CHECK(then_branch != NULL);
  }
  ol_model_destroy(inferred);
  ol_model_destroy(m);
}

/* A tensor operator given the encoded W directly is refused by name. */
static void test_tensor_op_refuses_structured_input(void) {
  ol_model *m = with_weight(
      "<ir_version: 10, opset_import: [\"\" : 18, \"ai.rt\" : 1]>\n"
      "g (float[2,4] x) => (float[2,4] y) { y = Add(x, W) }\n");
  if (!m) return;
  ol_model *inferred = NULL;
  CHECK_STATUS(ol_model_infer_shapes(m, &inferred), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "input 1 'W' is a structured (encoded) value") != NULL);
  CHECK(inferred == NULL);
  ol_model_destroy(m);
  /* Identity forwards it: allowed */
  m = with_weight("<ir_version: 10, opset_import: [\"\" : 18, \"ai.rt\" : 1]>\n"
                  "g () => (float[2,4] y) { c = Identity(W)\n y = ai.rt.Dequantize <dtype = 1> (c) }\n");
  if (m) CHECK_OK(ol_model_infer_shapes(m, &inferred));
  ol_model_destroy(inferred);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(test_record_of_encoded_initializer), TEST(test_generic_layout_size),
             TEST(test_through_function_and_subgraph), TEST(test_tensor_op_refuses_structured_input))
