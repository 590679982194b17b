/* ONNX text syntax: ol_model_parse_text / ol_model_print_text. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "harness.h"
#include "ir/model.h"
#include "ir/text.h"
#include "onnxlight.h"

static const char *SEED =
    "<ir_version: 10, opset_import: [\"\" : 18]> accumulate (float[2] delta, float[2] past) => "
    "(float[2] present) { present = Add(delta, past) }";

/* print(m) parses back and prints identically. */
static void check_fixed_point(const ol_model *m) {
  char *t1 = NULL, *t2 = NULL;
  ol_model *m2 = NULL;
  CHECK_OK(ol_model_print_text(m, &t1));
  if (!t1) return;
  CHECK_OK(ol_model_parse_text(t1, &m2));
  if (m2) {
    CHECK_OK(ol_model_print_text(m2, &t2));
    CHECK(t2 && strcmp(t1, t2) == 0);
    if (t2 && strcmp(t1, t2) != 0) fprintf(stderr, "--- printed:\n%s--- reprinted:\n%s", t1, t2);
  }
  ol_free(t1);
  ol_free(t2);
  ol_model_destroy(m2);
}

static ol_model *parse_ok(const char *text) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (m) check_fixed_point(m);
  return m;
}

static const Onnx__GraphProto *G(const ol_model *m) { return m->data->proto->graph; }

/* The attribute named name of node n of the main graph. */
static const Onnx__AttributeProto *attr(const ol_model *m, size_t n, const char *name) {
  const Onnx__NodeProto *node = G(m)->node[n];
  for (size_t i = 0; i < node->n_attribute; i++)
    if (strcmp(node->attribute[i]->name, name) == 0) return node->attribute[i];
  return NULL;
}

static const void *raw(const Onnx__TensorProto *t) { return t ? t->raw_data.data : NULL; }

static void test_seed(void) {
  ol_model *m = parse_ok(SEED);
  if (!m) return;
  const Onnx__ModelProto *p = m->data->proto;
  CHECK(p->has_ir_version && p->ir_version == 10);
  CHECK(p->n_opset_import == 1 && p->opset_import[0]->version == 18);
  CHECK(p->opset_import[0]->domain == NULL || p->opset_import[0]->domain[0] == 0);
  const ol_graph *g = m->data->graph;
  CHECK(strcmp(g->name, "accumulate") == 0);
  CHECK(g->num_inputs == 2 && strcmp(g->inputs[0].name, "delta") == 0 &&
        strcmp(g->inputs[1].name, "past") == 0);
  CHECK(g->inputs[0].type.dtype == OL_DTYPE_FLOAT && g->inputs[0].type.rank == 1 &&
        g->inputs[0].type.dims[0] == 2);
  CHECK(g->num_outputs == 1 && strcmp(g->outputs[0].name, "present") == 0);
  CHECK(g->num_nodes == 1 && strcmp(g->nodes[0].op_type, "Add") == 0 && g->nodes[0].opset == 18);
  CHECK(g->nodes[0].num_inputs == 2 && strcmp(g->nodes[0].inputs[1], "past") == 0);
  char *text = NULL;
  CHECK_OK(ol_model_print_text(m, &text));
  CHECK(text && strstr(text, "present = Add(delta, past)"));
  CHECK(text && strstr(text, "accumulate (float[2] delta, float[2] past) => (float[2] present)"));
  ol_free(text);
  /* same model as from bytes */
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &bytes, &size));
  ol_model *m2 = NULL;
  CHECK_OK(ol_model_load(bytes, size, NULL, &m2));
  if (m2) check_fixed_point(m2);
  ol_free(bytes);
  ol_model_destroy(m2);
  ol_model_destroy(m);
}

static void test_header_and_graph(void) {
  ol_model *m = parse_ok(
      "# a comment\n"
      "<ir_version: 9, opset_import: [\"\" : 17, \"com.microsoft\" : 1], producer_name: \"me\",\n"
      " producer_version: \"1.0\", domain: \"ai.test\", model_version: 3, doc_string: \"a "
      "\\\"doc\\\"\",\n"
      " metadata_props: [\"k\": \"v\", \"k2\": \"v2\"]>\n"
      "g (float[N,3] x, int64[] k, float s, float[?,\"a b\"] q, x2) => (float[N] y, z)\n"
      "  <float[2] w = {1.0, 2.0}, float[N] t, int64 c = {7}>\n"
      "{  # nodes\n"
      "  [first] t = Add(x, w)\n"
      "  y, z = com.microsoft.Foo <alpha = 1> (t, , k, \"\")\n"
      "  = Bar(y)\n"
      "}\n");
  if (!m) return;
  const Onnx__ModelProto *p = m->data->proto;
  CHECK(p->n_opset_import == 2 && strcmp(p->opset_import[1]->domain, "com.microsoft") == 0);
  CHECK(strcmp(p->producer_name, "me") == 0 && strcmp(p->producer_version, "1.0") == 0);
  CHECK(strcmp(p->domain, "ai.test") == 0 && p->has_model_version && p->model_version == 3);
  CHECK(strcmp(p->doc_string, "a \"doc\"") == 0);
  CHECK(p->n_metadata_props == 2 && strcmp(p->metadata_props[1]->value, "v2") == 0);
  const Onnx__GraphProto *g = G(m);
  CHECK(g->n_input == 5 && g->n_output == 2 && g->n_value_info == 1 && g->n_initializer == 2);
  const Onnx__TypeProto__Tensor *x = g->input[0]->type->tensor_type;
  CHECK(x->shape->n_dim == 2 && strcmp(x->shape->dim[0]->dim_param, "N") == 0 &&
        x->shape->dim[1]->dim_value == 3);
  CHECK(g->input[1]->type->tensor_type->elem_type == OL_DTYPE_INT64 &&
        g->input[1]->type->tensor_type->shape == NULL);
  CHECK(g->input[2]->type->tensor_type->shape && g->input[2]->type->tensor_type->shape->n_dim == 0);
  const Onnx__TensorShapeProto *q = g->input[3]->type->tensor_type->shape;
  CHECK(q->dim[0]->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE__NOT_SET);
  CHECK(strcmp(q->dim[1]->dim_param, "a b") == 0);
  CHECK(g->input[4]->type == NULL && strcmp(g->input[4]->name, "x2") == 0);
  CHECK(g->output[1]->type == NULL);
  const float *w = raw(g->initializer[0]);
  CHECK(w && w[0] == 1.0f && w[1] == 2.0f && strcmp(g->initializer[0]->name, "w") == 0);
  CHECK(g->initializer[1]->n_dims == 0 && *(const int64_t *)raw(g->initializer[1]) == 7);
  const Onnx__NodeProto *n0 = g->node[0], *n1 = g->node[1], *n2 = g->node[2];
  CHECK(strcmp(n0->name, "first") == 0);
  CHECK(strcmp(n1->domain, "com.microsoft") == 0 && strcmp(n1->op_type, "Foo") == 0);
  CHECK(n1->n_input == 4 && n1->input[1][0] == 0 && strcmp(n1->input[2], "k") == 0 &&
        n1->input[3][0] == 0);
  CHECK(n1->n_output == 2 && strcmp(n1->output[1], "z") == 0);
  CHECK(n2->n_output == 0 && n2->n_input == 1);
  CHECK(m->data->graph->nodes[1].opset == 1);
  ol_model_destroy(m);

  /* input defaults become inputs + initializers; attributes after inputs; overloads */
  m = parse_ok("g (float[2] x = {1, 2}) => (y) { y = local.F:v2 (x, ) <a = 1> }");
  if (!m) return;
  CHECK(G(m)->n_input == 1 && G(m)->n_initializer == 1);
  CHECK(strcmp(G(m)->node[0]->overload, "v2") == 0 && G(m)->node[0]->n_input == 1);
  CHECK(G(m)->node[0]->n_attribute == 1);
  ol_model_destroy(m);
}

static void test_scalar_attributes(void) {
  ol_model *m = parse_ok(
      "g (x) => (y) { y = Op <i = -42, f = 1.5, e = 2.5E+2, small = 1e-3, pinf = inf, ninf = -inf, "
      "n = nan, big = 9223372036854775807, s = \"a\\\"b\\\\c\\n\\x01\\t\", tf: float = 2, "
      "neg0 = -0.0, d = 0.1> (x) }");
  if (!m) return;
  const Onnx__AttributeProto *a;
  CHECK((a = attr(m, 0, "i")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT &&
        a->i == -42);
  CHECK((a = attr(m, 0, "f")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT &&
        a->f == 1.5f);
  CHECK((a = attr(m, 0, "e")) && a->f == 250.0f);
  CHECK((a = attr(m, 0, "small")) && a->f == 1e-3f);
  CHECK((a = attr(m, 0, "pinf")) && isinf(a->f) && a->f > 0);
  CHECK((a = attr(m, 0, "ninf")) && isinf(a->f) && a->f < 0);
  CHECK((a = attr(m, 0, "n")) && isnan(a->f));
  CHECK((a = attr(m, 0, "big")) && a->i == INT64_MAX);
  CHECK((a = attr(m, 0, "s")) && a->s.len == 8 && memcmp(a->s.data, "a\"b\\c\n\x01\t", 8) == 0);
  CHECK((a = attr(m, 0, "tf")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT &&
        a->f == 2.0f);
  CHECK((a = attr(m, 0, "neg0")) && a->f == 0.0f && signbit(a->f));
  CHECK((a = attr(m, 0, "d")) && a->f == 0.1f);
  char *text = NULL;
  CHECK_OK(ol_model_print_text(m, &text));
  CHECK(text && strstr(text, "tf = 2.0") && strstr(text, "ninf = -inf") && strstr(text, "\\x01"));
  ol_free(text);
  ol_model_destroy(m);
}

static void test_list_attributes(void) {
  ol_model *m = parse_ok(
      "g (x) => (y) { y = Op <is = [1, -2, 3], fs = [1.5, 2.0], mixed = [1, 2.5], ss = [\"a\", "
      "\"b\"], "
      "empty: ints = [], ef: floats = [], es: strings = [], fl: floats = [1, 2], "
      "ts = [float[2] {1, 2}, int64 {3}], tps = [float[2], seq(int64)], "
      "gs = [a () => (float o) { o = C() }, \"b c\" () => (float o) { o = C() }]> (x) }");
  if (!m) return;
  const Onnx__AttributeProto *a;
  CHECK((a = attr(m, 0, "is")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS &&
        a->n_ints == 3 && a->ints[1] == -2);
  CHECK((a = attr(m, 0, "fs")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS &&
        a->n_floats == 2);
  CHECK((a = attr(m, 0, "mixed")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS &&
        a->n_floats == 2 && a->floats[0] == 1.0f && a->floats[1] == 2.5f && a->n_ints == 0);
  CHECK((a = attr(m, 0, "ss")) && a->n_strings == 2 && a->strings[1].len == 1);
  CHECK((a = attr(m, 0, "empty")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS &&
        a->n_ints == 0);
  CHECK((a = attr(m, 0, "ef")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS);
  CHECK((a = attr(m, 0, "es")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRINGS);
  CHECK((a = attr(m, 0, "fl")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS &&
        a->floats[1] == 2.0f);
  CHECK((a = attr(m, 0, "ts")) && a->n_tensors == 2 && a->tensors[1]->data_type == OL_DTYPE_INT64);
  CHECK((a = attr(m, 0, "tps")) && a->n_type_protos == 2 &&
        a->type_protos[1]->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
  CHECK((a = attr(m, 0, "gs")) && a->n_graphs == 2 && strcmp(a->graphs[1]->name, "b c") == 0);
  char *text = NULL;
  CHECK_OK(ol_model_print_text(m, &text));
  CHECK(text && strstr(text, "empty: ints = []") && strstr(text, "fl = [1.0, 2.0]"));
  ol_free(text);
  ol_model_destroy(m);
}

static void test_tensor_literals(void) {
  ol_model *m = NULL;
  m = parse_ok(
      "g (x) => (y) { y = Op <"
      "f = float[2,2] named {1, -2.5, 3e2, inf}, d = double[2] {0.1, -nan}, "
      "i64 = int64[2] {-9223372036854775808, 9223372036854775807}, u64 = uint64[1] "
      "{18446744073709551615}, "
      "b = bool[3] {1, 0, true}, s = string[2] {\"x\", \"\\x00y\"}, h = float16[2] {1.5, -0.1}, "
      "bf = bfloat16[1] {3.0}, i4 = int4[3] {-8, 7, -1}, u4 = uint4[3] {1, 15, 2}, "
      "f8 = float8e4m3fn[2] {0.5, -448}, c = complex64[2] {1, 2, 3, 4}, sc = float {5}, "
      "u8 = uint8[2] {0, 255}, i8 = int8[1] {-128}, u16 = uint16[1] {65535}, i32 = int32[1] {-5}, "
      "u32 = uint32[1] {4294967295}, i16 = int16[1] {-32768}, e = float[0] {}, "
      "eq = float[1] \"quoted name\" = {2}> (x) }");
  if (!m) return;
  const Onnx__AttributeProto *a;
  const Onnx__TensorProto *t;
  CHECK((a = attr(m, 0, "f")) && (t = a->t) && strcmp(t->name, "named") == 0 && t->n_dims == 2);
  if (a && a->t) {
    const float *f = raw(a->t);
    CHECK(f[0] == 1.0f && f[1] == -2.5f && f[2] == 300.0f && isinf(f[3]));
  }
  CHECK((a = attr(m, 0, "d")) && ((const double *)raw(a->t))[0] == 0.1 &&
        isnan(((const double *)raw(a->t))[1]));
  CHECK((a = attr(m, 0, "i64")) && ((const int64_t *)raw(a->t))[0] == INT64_MIN);
  CHECK((a = attr(m, 0, "u64")) && ((const uint64_t *)raw(a->t))[0] == UINT64_MAX);
  CHECK((a = attr(m, 0, "b")) && memcmp(raw(a->t), "\1\0\1", 3) == 0);
  CHECK((a = attr(m, 0, "s")) && a->t->n_string_data == 2 && a->t->string_data[1].len == 2 &&
        a->t->string_data[1].data[0] == 0);
  CHECK((a = attr(m, 0, "h")) && ((const uint16_t *)raw(a->t))[0] == ol_f32_to_f16(1.5f) &&
        ((const uint16_t *)raw(a->t))[1] == ol_f32_to_f16(-0.1f));
  CHECK((a = attr(m, 0, "bf")) && ((const uint16_t *)raw(a->t))[0] == ol_f32_to_bf16(3.0f));
  CHECK((a = attr(m, 0, "i4")) && a->t->raw_data.len == 2 &&
        ol_packed_get(OL_DTYPE_INT4, raw(a->t), 0) == -8 &&
        ol_packed_get(OL_DTYPE_INT4, raw(a->t), 2) == -1);
  CHECK((a = attr(m, 0, "u4")) && ol_packed_get(OL_DTYPE_UINT4, raw(a->t), 1) == 15);
  CHECK((a = attr(m, 0, "f8")) &&
        ((const uint8_t *)raw(a->t))[1] == ol_f32_to_minifloat(OL_DTYPE_FLOAT8E4M3FN, -448, false));
  CHECK((a = attr(m, 0, "c")) && a->t->raw_data.len == 16 && ((const float *)raw(a->t))[3] == 4.0f);
  CHECK((a = attr(m, 0, "sc")) && a->t->n_dims == 0 && ((const float *)raw(a->t))[0] == 5.0f);
  CHECK((a = attr(m, 0, "u32")) && ((const uint32_t *)raw(a->t))[0] == UINT32_MAX);
  CHECK((a = attr(m, 0, "i16")) && ((const int16_t *)raw(a->t))[0] == INT16_MIN);
  CHECK((a = attr(m, 0, "e")) && a->t->n_dims == 1 && a->t->dims[0] == 0 &&
        a->t->raw_data.len == 0);
  CHECK((a = attr(m, 0, "eq")) && strcmp(a->t->name, "quoted name") == 0);
  /* decoded by the loader */
  CHECK(m->data->graph->nodes[0].attrs[0].tensor != NULL);
  ol_model_destroy(m);

  /* NaN and infinity spellings survive a print/parse cycle in every float format */
  m = parse_ok(
      "g (x) => (y) { y = Op <a = float8e4m3fn[3] {nan, -nan, -0.0}, b = float8e5m2[4] {inf, -inf, nan, -nan}, "
      "c = float16[3] {-inf, nan, 65504}, d = bfloat16[2] {-nan, 1e38}, e = float8e4m3fnuz[1] {nan}, "
      "f = float8e5m2fnuz[1] {nan}, g = float8e8m0[2] {nan, 0.5}, h = float4e2m1[3] {-6, 0.5, 1.5}, "
      "i = complex128[1] {1e300, -1e-300}, j = double[2] {-inf, 4.9406564584124654e-324}> (x) }");
  if (m) {
    CHECK((a = attr(m, 0, "a")) && memcmp(raw(a->t), "\x7f\xff\x80", 3) == 0);
    CHECK((a = attr(m, 0, "b")) && memcmp(raw(a->t), "\x7c\xfc\x7f\xff", 4) == 0);
    CHECK((a = attr(m, 0, "h")) && ol_packed_get(OL_DTYPE_FLOAT4E2M1, raw(a->t), 0) == (int32_t)0xFFFFFFFF);
    CHECK((a = attr(m, 0, "j")) && ((const double *)raw(a->t))[1] == 4.9406564584124654e-324);
  }
  ol_model_destroy(m);

  /* every element type name */
  static const char *types[] = {
      "float",      "double",         "float16",   "bfloat16",   "int8",         "int16",
      "int32",      "int64",          "uint8",     "uint16",     "uint32",       "uint64",
      "bool",       "string",         "complex64", "complex128", "float8e4m3fn", "float8e4m3fnuz",
      "float8e5m2", "float8e5m2fnuz", "uint4",     "int4",       "float4e2m1"};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    char text[256];
    snprintf(text, sizeof text, "g (%s[2,N] x) => (%s[] y) { y = Identity(x) }", types[i],
             types[i]);
    m = parse_ok(text);
    CHECK(m && G(m)->input[0]->type->tensor_type->elem_type ==
                   ol_text_dtype_from_name(types[i], strlen(types[i])));
    ol_model_destroy(m);
  }
}

static void test_types(void) {
  ol_model *m = parse_ok(
      "g (seq(float[N]) a, map(int64, float) b, optional(seq(int32[4])) c, "
      "sparse_tensor(float[3,4]) d,\n"
      "   opaque(\"com.x\", \"Rng\") e, map(string, seq(map(int64, double))) f) => (float y) {\n"
      "  y = Op <t = optional(float[2]), sp = sparse_tensor(float[4]) {int64[1] {2}, float[1] "
      "{5.0}}> (a)\n"
      "}");
  if (!m) return;
  const Onnx__GraphProto *g = G(m);
  CHECK(g->input[0]->type->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
  CHECK(g->input[1]->type->map_type->key_type == OL_DTYPE_INT64);
  CHECK(g->input[2]->type->optional_type->elem_type->value_case ==
        ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE);
  CHECK(g->input[3]->type->sparse_tensor_type->shape->n_dim == 2);
  CHECK(strcmp(g->input[4]->type->opaque_type->domain, "com.x") == 0 &&
        strcmp(g->input[4]->type->opaque_type->name, "Rng") == 0);
  CHECK(m->data->graph->inputs[0].type.kind == OL_VALUE_SEQUENCE);
  const Onnx__AttributeProto *a;
  CHECK((a = attr(m, 0, "t")) && a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO &&
        a->tp);
  CHECK((a = attr(m, 0, "sp")) && a->sparse_tensor && a->sparse_tensor->n_dims == 1 &&
        a->sparse_tensor->dims[0] == 4 && a->sparse_tensor->values->data_type == OL_DTYPE_FLOAT);
  ol_model_destroy(m);
}

static void test_subgraphs(void) {
  ol_model *m = parse_ok(
      "<ir_version: 8, opset_import: [\"\" : 16]>\n"
      "main (bool c, float[2] x) => (float[2] y) {\n"
      "  y = If(c) <then_branch = then_g () => (float[2] t) { t = Relu(x) },\n"
      "             else_branch = \"else g\" () => (float[2] e) {\n"
      "               k = Constant <value = float[2] {1, 2}> ()\n"
      "               e = Add(x, k)\n"
      "             }>\n"
      "}");
  if (!m) return;
  const ol_graph *g = m->data->graph;
  const ol_graph *then_g = ol_attr_graph(&g->nodes[0], "then_branch");
  const ol_graph *else_g = ol_attr_graph(&g->nodes[0], "else_branch");
  CHECK(then_g && strcmp(then_g->name, "then_g") == 0 && then_g->num_nodes == 1 &&
        then_g->parent == g);
  CHECK(else_g && strcmp(else_g->name, "else g") == 0 && else_g->num_nodes == 2);
  ol_model_destroy(m);
}

static void test_functions(void) {
  ol_model *m = parse_ok(
      "<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1]>\n"
      "main (float[2] x) => (float[2] y) { y = local.Scale <s = 3.0> (x) }\n"
      "<domain: \"local\", opset_import: [\"\" : 18], doc_string: \"scales\">\n"
      "Scale <s, bias: float = 0.5> (float[2] a) => (b)\n"
      "  <float[2] t>\n"
      "{\n"
      "  k = Constant <value_float: float = @s> ()\n"
      "  t = Mul(a, k)\n"
      "  b = If(c) <then_branch = g () => (o) { o = Constant <value_float: float = @bias> () },\n"
      "             else_branch = h () => (o) { o = Identity(t) }>\n"
      "}\n"
      "<domain: \"local\", overload: \"v2\"> Other (x) => (y) { y = Identity(x) }\n");
  if (!m) return;
  const Onnx__ModelProto *p = m->data->proto;
  CHECK(p->n_functions == 2);
  if (p->n_functions == 2) {
    const Onnx__FunctionProto *f = p->functions[0];
    CHECK(strcmp(f->name, "Scale") == 0 && strcmp(f->domain, "local") == 0 &&
          strcmp(f->doc_string, "scales") == 0);
    CHECK(f->n_attribute == 1 && strcmp(f->attribute[0], "s") == 0);
    CHECK(f->n_attribute_proto == 1 && strcmp(f->attribute_proto[0]->name, "bias") == 0 &&
          f->attribute_proto[0]->f == 0.5f);
    CHECK(f->n_input == 1 && f->n_output == 1 && f->n_value_info == 2);
    CHECK(f->n_node == 3 && strcmp(f->node[0]->attribute[0]->ref_attr_name, "s") == 0 &&
          f->node[0]->attribute[0]->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    CHECK(strcmp(p->functions[1]->overload, "v2") == 0);
  }
  ol_model_destroy(m);
}

/* Malformed text fails with OL_INVALID_MODEL and a positioned message. */
static void expect_error(const char *text, const char *needle) {
  ol_model *m = NULL;
  ol_status s = ol_model_parse_text(text, &m);
  CHECK(s == OL_INVALID_MODEL && m == NULL);
  const char *msg = ol_last_error();
  bool ok = strstr(msg, "line ") && strstr(msg, needle);
  CHECK(ok);
  if (!ok || s != OL_INVALID_MODEL) fprintf(stderr, "  text: %s\n  error: %s\n", text, msg);
  ol_model_destroy(m);
}

static void test_errors(void) {
  expect_error("", "line 1, column 1: expected a graph name, found end of input");
  expect_error("g (float[2] x {",
               "line 1, column 15: expected ',' or ')' after the input list, found '{'");
  expect_error("g (x) => (y) {\n  y = Add(x, x\n}",
               "line 3, column 1: expected ',' or ')' after the node inputs, found '}'");
  expect_error("g (x) => (y) { y = Add(x) ", "expected '}' to close the nodes of 'g'");
  expect_error("g (x) (y) { }", "expected '=>' after the input list");
  expect_error("<ir_version: \"ten\"> g () => () {}",
               "expected an IR version, found string \"ten\"");
  expect_error("<irversion: 3> g () => () {}", "unknown model property 'irversion'");
  expect_error("g (floot[2] x) => () {}", "line 1, column 4: unknown type 'floot'");
  expect_error("g (float[2 x) => () {}", "expected ',' or ']' in the dimension list");
  expect_error("g () => () { y = Op <a = > () }", "expected an attribute value, found '>'");
  expect_error("g () => () { y = Op <a = []> () }", "an empty list needs a type annotation");
  expect_error("g () => () { y = Op <a: int = \"s\"> () }", "declared int but the value is string");
  expect_error("g () => () { y = Op <a: bogus = 1> () }", "expected an attribute type");
  expect_error("g () => () { y = Op <a = [1, \"s\"]> () }",
               "list element of type string in a list of ints");
  expect_error("g () => () { y = Op <a = float[2] {1}> () }", "has 2 elements but 1 value");
  expect_error("g () => () { y = Op <a = float[1] {1, 2}> () }", "too many values");
  expect_error("g () => () { y = Op <a = float[N] {1}> () }", "needs numeric dimensions");
  expect_error("g () => () { y = Op <a = int8[1] {200}> () }", "out of range");
  expect_error("g () => () { y = Op <a = int64[1] {99999999999999999999}> () }", "out of range");
  expect_error("g () => () { y = Op <a = uint64[1] {-1}> () }", "out of range");
  expect_error("g () => () { y = Op <a = bool[1] {2}> () }", "out of range");
  expect_error("g () => () { y = Op <a = string[1] {1}> () }", "expected a string value");
  expect_error("g () => () { y = Op <a = @b> () }", "only allowed inside functions");
  expect_error("g () => () { y = Op <a = \"unterminated> () }", "unterminated string literal");
  expect_error("g () => () { y = Op <a = \"\\x4\"> () }", "\\x needs two hex digits");
  expect_error("g () => () { y = Op <a = 12abc> () }", "malformed number '12abc'");
  expect_error("g () => () { y = Op <a = 1> () } $", "unexpected character '$'");
  expect_error("g () => () { y = Op () } 42",
               "expected a function or end of input, found number 42");
  expect_error("g () => () { y = Op () }\nf (x) => (y)", "expected '{' to start the nodes of 'f'");
  expect_error("g () => () { y = 3 () }", "expected an operator name, found number 3");
  expect_error("g () => () { y = a. () }", "expected an operator name after '.'");
  expect_error("g (map(float) m) => () {}", "expected ',' after the map key type");
  expect_error("g (seq(float[2] s) => () {}", "expected ')' to close the type");
  expect_error("g (\"a\\x00b\" x) => () {}", "cannot contain a NUL byte");
  expect_error("g () => () <float[2] w = {1, 2}, x = {3}> {}",
               "initializer 'x' needs a tensor type");
  expect_error("g () => () { y = Op <g = h (x) => (y) { y = Op(x) > () }", "expected");
  /* deep nesting is refused, not a stack overflow */
  char deep[4096] = "g (";
  for (int i = 0; i < 200; i++) strcat(deep, "seq(");
  strcat(deep, "float x) => () {}");
  expect_error(deep, "types are nested deeper than 32 levels");
  /* the loader's own checks still apply */
  ol_model *m = NULL;
  CHECK_STATUS(ol_model_parse_text(NULL, &m), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_model_parse_text(SEED, NULL), OL_INVALID_ARGUMENT);
}

/* Every prefix and many mutations of a rich model must fail cleanly (run
 * under valgrind / ASan to see leaks). */
static void test_truncations_and_mutations(void) {
  const char *text =
      "<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1], producer_name: \"p\">\n"
      "g (float[N,2] x, int64[] k) => (float[N] y) <float[2] w = {1.5, -2}, string[1] s = "
      "{\"a\\n\"}> {\n"
      "  [n0] t = Add(x, w)\n"
      "  y, , z = local.F <f = 1.0, fs = [1.0, 2], i = [1], str = \"q\", tp = seq(float[2]),\n"
      "    ten = int4[3] {1, -2, 3}, e: ints = []> (t, , k)\n"
      "  u = If(k) <then_branch = a () => (float o) { o = C() }, else_branch = b () => (o) { o = "
      "D() }>\n"
      "}\n"
      "<domain: \"local\", opset_import: [\"\" : 18]> F <a, b: int = 2> (p, q) => (r) { r = Op <v "
      "= @a> (p) }\n";
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (m) check_fixed_point(m);
  ol_model_destroy(m);
  size_t len = strlen(text);
  char *buf = malloc(len + 1);
  if (!buf) return;
  int accepted = 0;
  for (size_t cut = 0; cut < len; cut++) {
    memcpy(buf, text, cut);
    buf[cut] = 0;
    m = NULL;
    ol_status s = ol_model_parse_text(buf, &m);
    CHECK(s == OL_OK || s == OL_INVALID_MODEL);
    if (s == OL_OK) accepted++;
    ol_model_destroy(m);
  }
  /* valid prefixes: the model without its function ("}" and "}\n") and the
   * text without its final newline */
  CHECK(accepted == 3);
  static const char junk[] = "(){}[]<>,=:.@?\"#-+1ex_ ";
  uint32_t seed = 12345;
  for (int round = 0; round < 3000; round++) {
    memcpy(buf, text, len + 1);
    for (int k = 0; k < 3; k++) {
      seed = seed * 1103515245u + 12345u;
      size_t at = (seed >> 8) % len;
      seed = seed * 1103515245u + 12345u;
      buf[at] = junk[(seed >> 8) % (sizeof junk - 1)];
    }
    m = NULL;
    ol_status s = ol_model_parse_text(buf, &m);
    CHECK(s == OL_OK || s == OL_INVALID_MODEL || s == OL_NOT_IMPLEMENTED);
    if (m) check_fixed_point(m);
    ol_model_destroy(m);
  }
  free(buf);
}

static void test_print_loaded_model(void) {
  /* a proto built with typed fields (not raw_data) prints as literals too */
  ol_model *m =
      parse_ok("g (float[2] x) => (float[2] y) <float[2] w = {0.25, 1e-7}> { y = Add(x, w) }");
  if (!m) return;
  Onnx__TensorProto *w = m->data->proto->graph->initializer[0];
  float *fd = malloc(2 * sizeof(float));
  if (!fd) return;
  fd[0] = 3.0f;
  fd[1] = -0.0f;
  free(w->raw_data.data);
  w->raw_data.data = NULL;
  w->raw_data.len = 0;
  w->has_raw_data = 0;
  w->float_data = fd;
  w->n_float_data = 2;
  char *text = NULL;
  CHECK_OK(ol_model_print_text(m, &text));
  CHECK(text && strstr(text, "float[2] w = {3, -0}"));
  ol_free(text);
  ol_model_destroy(m);
}

/* Names that are not plain identifiers print quoted and read back. */
static void test_quoting(void) {
  ol_model *m = parse_ok(
      "\"my graph\" (float \"float\", float inf, float[\"batch size\"] \"a.b\") => (float \"x:0\") "
      "{\n"
      "  [\"node one\"] \"x:0\", \"\", \"seq\" = \"my-domain\".Op <\"attr name\" = 1> (\"float\", "
      "\"\", inf)\n"
      "  q = If(inf) <then_branch = \"float\" () => (o) { o = C() }, else_branch = \"\" () => (o) "
      "{ o = C() }>\n"
      "}");
  if (!m) return;
  const Onnx__GraphProto *g = G(m);
  CHECK(strcmp(g->name, "my graph") == 0 && strcmp(g->input[0]->name, "float") == 0);
  CHECK(strcmp(g->input[1]->name, "inf") == 0 && strcmp(g->input[2]->name, "a.b") == 0);
  CHECK(strcmp(g->node[0]->name, "node one") == 0 && strcmp(g->node[0]->domain, "my-domain") == 0);
  CHECK(g->node[0]->n_output == 3 && g->node[0]->output[1][0] == 0 &&
        strcmp(g->node[0]->output[2], "seq") == 0);
  CHECK(strcmp(g->node[0]->attribute[0]->name, "attr name") == 0);
  CHECK(g->node[1]->attribute[0]->g && strcmp(g->node[1]->attribute[0]->g->name, "float") == 0);
  CHECK(g->node[1]->attribute[1]->g && g->node[1]->attribute[1]->g->name == NULL);
  char *text = NULL;
  CHECK_OK(ol_model_print_text(m, &text));
  CHECK(text && strstr(text, "[\"node one\"] \"x:0\", \"\", \"seq\" = \"my-domain\".Op"));
  ol_free(text);
  ol_model_destroy(m);
}

/* External data references parse and print (loading them needs the files). */
static void test_external_data(void) {
  const char *text =
      "g () => (float[2] y) <float[2] w = [\"location\": \"w.bin\", \"offset\": \"0\"]> { y = "
      "Identity(w) }";
  Onnx__ModelProto *p = NULL;
  CHECK_OK(ol_text_parse_proto(text, &p));
  if (!p) return;
  const Onnx__TensorProto *w = p->graph->initializer[0];
  CHECK(w->has_data_location && w->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
  CHECK(w->n_external_data == 2 && strcmp(w->external_data[0]->value, "w.bin") == 0);
  char *printed = NULL;
  CHECK_OK(ol_text_print_proto(p, &printed));
  CHECK(printed && strstr(printed, "float[2] w = [\"location\": \"w.bin\", \"offset\": \"0\"]"));
  ol_free(printed);
  onnx__model_proto__free_unpacked(p, NULL);
  ol_model *m = NULL;
  CHECK_STATUS(ol_model_parse_text(text, &m), OL_NOT_FOUND);
  CHECK(m == NULL);
}

/* An initializer named "" (found by fuzz_text): printed with its quoted
 * name, which the parser requires, so the text reads back. */
static void test_empty_initializer_name(void) {
  ol_model *m = parse_ok("g (float[3] x) => (float[3] y) <float[3] \"\" = {1.25, 0.25, 0.25}> { y = Identity(x) }");
  char *printed = NULL;
  if (m) CHECK_OK(ol_model_print_text(m, &printed));
  CHECK(printed && strstr(printed, "<float[3] \"\" = {1.25, 0.25, 0.25}>"));
  ol_free(printed);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(test_seed), TEST(test_header_and_graph), TEST(test_scalar_attributes),
             TEST(test_list_attributes), TEST(test_tensor_literals), TEST(test_types),
             TEST(test_subgraphs), TEST(test_functions), TEST(test_errors),
             TEST(test_truncations_and_mutations), TEST(test_print_loaded_model),
             TEST(test_quoting), TEST(test_external_data),
             TEST(test_empty_initializer_name))
