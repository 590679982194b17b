/* Incremental shape inference inside the graph builder (ol_builder_infer,
 * ol_builder_value_info): after every edit the kept types equal a fresh full
 * inference of the exported model (ol_model_infer_shapes), and the counter of
 * re-run shape functions shows that an edit re-infers what it affects only
 * (an edit at the end of a 100-node chain: one node, not 100). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "builder_messages.h"
#include "harness.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"

#define CHAIN 100 /* nodes: a Constant shape, then Add/Relu/Reshape triples */

static ol_status add_node(ol_builder *b, const char *op, const char *a, const char *c, const char *out) {
  char *inputs[] = {(char *)a, (char *)c};
  char *outputs[] = {(char *)out};
  Onnx__NodeProto n = node_proto(out, op, inputs, c ? 2 : 1, outputs, 1);
  return add_packed(b, OL_BUILDER_NODE, &n.base);
}

/* A float tensor of dims filled with value. */
static Onnx__TensorProto *float_tensor(const char *name, const int64_t *dims, size_t rank, float value) {
  static float data[64];
  static int64_t dims_copy[4];
  static Onnx__TensorProto t;
  size_t count = 1;
  for (size_t i = 0; i < rank; i++) count *= (size_t)dims[i], dims_copy[i] = dims[i];
  for (size_t i = 0; i < count; i++) data[i] = value;
  onnx__tensor_proto__init(&t);
  t.name = (char *)name;
  t.has_data_type = 1;
  t.data_type = OL_DTYPE_FLOAT;
  t.n_dims = rank;
  t.dims = dims_copy;
  t.has_raw_data = 1;
  t.raw_data.len = count * sizeof(float);
  t.raw_data.data = (uint8_t *)data;
  return &t;
}

/* x: float[first, 8] (first: a number, or -1 for the symbol 'batch'). */
static ol_status input_x(ol_builder *b, int64_t first, bool replace) {
  int64_t dims[] = {first, 8};
  return put_float_value(b, OL_BUILDER_INPUT, replace ? 0 : ADD_PART, "x", dims, 2);
}

/* The chain: shape = Constant([-1, 8]); v1 = Add(x, bias), v2 = Relu(v1),
 * v3 = Reshape(v2, shape), v4 = Add(v3, bias) ... up to v99. */
static ol_builder *chain(void) {
  ol_builder_opset opset = {"", 18};
  ol_builder *b = NULL;
  CHECK_OK(ol_builder_create(10, &opset, 1, &b));
  CHECK_OK(input_x(b, -1, false));
  int64_t bias_dims[] = {8};
  CHECK_OK(add_packed(b, OL_BUILDER_INITIALIZER, &float_tensor("bias", bias_dims, 1, 0.5f)->base));
  int64_t shape_values[] = {-1, 8}, shape_dims[] = {2};
  Onnx__TensorProto shape = ONNX__TENSOR_PROTO__INIT;
  shape.has_data_type = 1;
  shape.data_type = OL_DTYPE_INT64;
  shape.n_dims = 1;
  shape.dims = shape_dims;
  shape.n_int64_data = 2;
  shape.int64_data = shape_values;
  Onnx__AttributeProto value = ONNX__ATTRIBUTE_PROTO__INIT;
  value.name = "value";
  value.has_type = 1;
  value.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  value.t = &shape;
  Onnx__AttributeProto *attrs[] = {&value};
  char *outputs[] = {"shape"};
  Onnx__NodeProto constant = node_proto("shape", "Constant", NULL, 0, outputs, 1);
  constant.n_attribute = 1;
  constant.attribute = attrs;
  CHECK_OK(add_packed(b, OL_BUILDER_NODE, &constant.base));
  char prev[16] = "x", out[16];
  for (int i = 1; i < CHAIN; i++) {
    snprintf(out, sizeof out, "v%d", i);
    const char *op = i % 3 == 1 ? "Add" : i % 3 == 2 ? "Relu" : "Reshape";
    CHECK_OK(add_node(b, op, prev, i % 3 == 1 ? "bias" : i % 3 == 0 ? "shape" : NULL, out));
    memcpy(prev, out, sizeof prev);
  }
  return b;
}

/* ------------------------------------------------------------ comparison with a full inference */

static Onnx__TypeProto *full_type(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_value_info; i++)
    if (strcmp(g->value_info[i]->name, name) == 0) return g->value_info[i]->type;
  for (size_t i = 0; i < g->n_output; i++)
    if (strcmp(g->output[i]->name, name) == 0) return g->output[i]->type;
  return NULL;
}

static bool same_message(const ProtobufCMessage *a, const ProtobufCMessage *b) {
  if (!a || !b) return a == b;
  size_t sa = protobuf_c_message_get_packed_size(a), sb = protobuf_c_message_get_packed_size(b);
  uint8_t *pa = malloc(sa + 1), *pb = malloc(sb + 1);
  protobuf_c_message_pack(a, pa);
  protobuf_c_message_pack(b, pb);
  bool same = sa == sb && memcmp(pa, pb, sa) == 0;
  free(pa);
  free(pb);
  return same;
}

/* Every node output's kept type equals what ol_model_infer_shapes records
 * for the exported model; returns how many values were compared. */
static size_t check_full(ol_builder *b) {
  void *bytes = NULL;
  size_t size = 0, compared = 0;
  CHECK_OK(ol_builder_to_model(b, &bytes, &size));
  ol_model *model = NULL, *inferred = NULL;
  CHECK_OK(ol_model_load(bytes, size, NULL, &model));
  ol_free(bytes);
  if (model) CHECK_OK(ol_model_infer_shapes(model, &inferred));
  bytes = NULL;
  if (inferred) CHECK_OK(ol_model_serialize(inferred, &bytes, &size));
  Onnx__ModelProto *full = bytes ? onnx__model_proto__unpack(NULL, size, bytes) : NULL;
  ol_free(bytes);
  CHECK(full != NULL);
  for (size_t i = 0; full && i < ol_builder_count(b, OL_BUILDER_NODE); i++) {
    void *node_bytes = NULL, *vi_bytes = NULL;
    size_t node_size = 0, vi_size = 0;
    CHECK_OK(ol_builder_get(b, OL_BUILDER_NODE, i, &node_bytes, &node_size));
    Onnx__NodeProto *n = onnx__node_proto__unpack(NULL, node_size, node_bytes);
    CHECK_OK(ol_builder_value_info(b, n->output[0], &vi_bytes, &vi_size));
    Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, vi_size, vi_bytes);
    bool same = vi && same_message(vi->type ? &vi->type->base : NULL, (ProtobufCMessage *)full_type(full->graph, n->output[0]));
    if (!same) fprintf(stderr, "  the kept type of '%s' differs from a full inference\n", n->output[0]);
    CHECK(same);
    compared++;
    onnx__value_info_proto__free_unpacked(vi, NULL);
    onnx__node_proto__free_unpacked(n, NULL);
    ol_free(vi_bytes);
    ol_free(node_bytes);
  }
  if (full) onnx__model_proto__free_unpacked(full, NULL);
  ol_model_destroy(inferred);
  ol_model_destroy(model);
  return compared;
}

/* The dims of a value's kept type as text ("batch,8"), for spot checks. */
static bool kept_dims(ol_builder *b, const char *name, const char *expected) {
  void *bytes = NULL;
  size_t size = 0;
  if (ol_builder_value_info(b, name, &bytes, &size) != OL_OK) return false;
  Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, size, bytes);
  ol_free(bytes);
  char text[128] = "";
  const Onnx__TensorShapeProto *shape = vi && vi->type && vi->type->tensor_type ? vi->type->tensor_type->shape : NULL;
  for (size_t i = 0; shape && i < shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
    size_t used = strlen(text);
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      snprintf(text + used, sizeof text - used, "%s%lld", i ? "," : "", (long long)d->dim_value);
    else
      snprintf(text + used, sizeof text - used, "%s%s", i ? "," : "", d->dim_param ? d->dim_param : "?");
  }
  if (vi) onnx__value_info_proto__free_unpacked(vi, NULL);
  bool same = strcmp(text, expected) == 0;
  if (!same) fprintf(stderr, "  '%s' is [%s], expected [%s]\n", name, text, expected);
  return same;
}

/* ------------------------------------------------------------ tests */

static void test_counts_and_equality(void) {
  ol_builder *b = chain();
  size_t reinferred = 0;
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == CHAIN);
  CHECK(check_full(b) == CHAIN);
  CHECK(kept_dims(b, "v99", "batch,8"));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 0); /* nothing changed */

  /* a node at the end of the chain: that node alone */
  CHECK_OK(add_node(b, "Relu", "v99", NULL, "end"));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 1);
  CHECK(check_full(b) == CHAIN + 1);
  /* removing it: no node reads its output */
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_NODE, "end"));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 0);
  void *bytes = NULL;
  size_t size = 0;
  CHECK_STATUS(ol_builder_value_info(b, "end", &bytes, &size), OL_NOT_FOUND);
  CHECK(check_full(b) == CHAIN);

  /* a node replaced in the middle by one giving the same type: it alone */
  char *in[] = {"v49"}, *out[] = {"v50"};
  Onnx__NodeProto sigmoid = node_proto("v50", "Sigmoid", in, 1, out, 1);
  CHECK_OK(replace_packed(b, OL_BUILDER_NODE, 50, &sigmoid.base));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 1);
  CHECK(check_full(b) == CHAIN);

  /* the bias replaced by one of the same shape: its 33 readers, nothing after */
  int64_t bias_dims[] = {8}, wide_dims[] = {3, 1, 8};
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INITIALIZER, "bias"));
  CHECK_OK(add_packed(b, OL_BUILDER_INITIALIZER, &float_tensor("bias", bias_dims, 1, 2.0f)->base));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 33);
  CHECK(check_full(b) == CHAIN);
  /* a bias of another rank changes every type from the first Add on */
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INITIALIZER, "bias"));
  CHECK_OK(add_packed(b, OL_BUILDER_INITIALIZER, &float_tensor("bias", wide_dims, 3, 1.0f)->base));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == CHAIN - 1);
  CHECK(kept_dims(b, "v1", "3,batch,8"));
  CHECK(check_full(b) == CHAIN);

  /* the input declaration: everything that reads x, onwards */
  CHECK_OK(input_x(b, 4, true));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == CHAIN - 1);
  CHECK(kept_dims(b, "v1", "3,4,8") && kept_dims(b, "v3", "12,8"));
  CHECK(check_full(b) == CHAIN);
  /* an opset import can change any node's rules: everything */
  Onnx__OperatorSetIdProto ms = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  ms.domain = "com.microsoft";
  ms.has_version = 1;
  ms.version = 1;
  CHECK_OK(add_packed(b, OL_BUILDER_OPSET_IMPORT, &ms.base));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == CHAIN);
  CHECK(check_full(b) == CHAIN);
  ol_builder_destroy(b);
}

/* Inputs and initializers have value infos too; an inference error names
 * the node and leaves the edit pending until it is undone. */
static void test_values_and_errors(void) {
  ol_builder *b = chain();
  CHECK(kept_dims(b, "x", "batch,8") && kept_dims(b, "bias", "8") && kept_dims(b, "shape", "2"));
  void *bytes = NULL;
  size_t size = 0;
  CHECK_STATUS(ol_builder_value_info(b, "nothing", &bytes, &size), OL_NOT_FOUND);
  int64_t five[] = {5};
  CHECK_OK(add_packed(b, OL_BUILDER_INITIALIZER, &float_tensor("five", five, 1, 1.0f)->base));
  CHECK_OK(add_node(b, "Add", "v99", "five", "bad"));
  size_t reinferred = 0;
  CHECK_STATUS(ol_builder_infer(b, &reinferred), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "'bad'") != NULL);
  CHECK_STATUS(ol_builder_value_info(b, "v99", &bytes, &size), OL_INVALID_MODEL);
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_NODE, "bad"));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 0);
  CHECK(check_full(b) == CHAIN);
  ol_builder_destroy(b);
}

/* ------------------------------------------------------------ external data */

#define WEIGHTS_FILE "weights.bin" /* never created: inference must not need it */

/* A float tensor of dims whose payload is declared in WEIGHTS_FILE at
 * offset (length: the dims' byte size, or the given one when >= 0), handed
 * to use (an initializer, a Constant's value). */
static ol_status with_external(ol_builder *b, const char *name, const int64_t *dims, size_t rank, size_t offset,
                               long long length, ol_status (*use)(ol_builder *, Onnx__TensorProto *)) {
  size_t count = 1;
  for (size_t i = 0; i < rank; i++) count *= (size_t)dims[i];
  char offset_text[24], length_text[24];
  snprintf(offset_text, sizeof offset_text, "%zu", offset);
  snprintf(length_text, sizeof length_text, "%lld", length >= 0 ? length : (long long)(count * sizeof(float)));
  Onnx__StringStringEntryProto entries[3], *entry_ptrs[3];
  const char *keys[] = {"location", "offset", "length"}, *values[] = {WEIGHTS_FILE, offset_text, length_text};
  for (size_t i = 0; i < 3; i++) {
    onnx__string_string_entry_proto__init(&entries[i]);
    entries[i].key = (char *)keys[i];
    entries[i].value = (char *)values[i];
    entry_ptrs[i] = &entries[i];
  }
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  t.name = (char *)name;
  t.has_data_type = 1;
  t.data_type = OL_DTYPE_FLOAT;
  t.n_dims = rank;
  t.dims = (int64_t *)dims;
  t.has_data_location = 1;
  t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  t.n_external_data = 3;
  t.external_data = entry_ptrs;
  return use(b, &t);
}

static ol_status as_initializer(ol_builder *b, Onnx__TensorProto *t) { return add_packed(b, OL_BUILDER_INITIALIZER, &t->base); }

/* Constant(value = t) -> t's name */
static ol_status as_constant(ol_builder *b, Onnx__TensorProto *t) {
  char *outputs[] = {t->name};
  Onnx__NodeProto n = node_proto(t->name, "Constant", NULL, 0, outputs, 1);
  Onnx__AttributeProto a = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = {&a};
  a.name = "value";
  a.has_type = 1;
  a.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
  a.t = t;
  n.n_attribute = 1;
  n.attribute = attrs;
  return add_packed(b, OL_BUILDER_NODE, &n.base);
}

static ol_status add_external(ol_builder *b, const char *name, const int64_t *dims, size_t rank, size_t offset,
                              long long length) {
  return with_external(b, name, dims, rank, offset, length, as_initializer);
}

/* The element type of a value's kept type (0: none). */
static int kept_elem_type(ol_builder *b, const char *name) {
  void *bytes = NULL;
  size_t size = 0;
  if (ol_builder_value_info(b, name, &bytes, &size) != OL_OK) return 0;
  Onnx__ValueInfoProto *vi = onnx__value_info_proto__unpack(NULL, size, bytes);
  ol_free(bytes);
  int elem = vi && vi->type && vi->type->tensor_type ? vi->type->tensor_type->elem_type : 0;
  if (vi) onnx__value_info_proto__free_unpacked(vi, NULL);
  return elem;
}

/* Initializers and Constant values whose payloads are external: inference
 * reads their declared data type and dims, never the file (which does not
 * exist here). */
static void test_external_initializers(void) {
  FILE *absent = fopen(WEIGHTS_FILE, "rb");
  CHECK(absent == NULL);
  if (absent) fclose(absent);
  ol_builder_opset opset = {"", 18};
  ol_builder *b = NULL;
  CHECK_OK(ol_builder_create(10, &opset, 1, &b));
  int64_t x_dims[] = {-1, 4}, w_dims[] = {4, 3}, bias_dims[] = {3};
  CHECK_OK(put_float_value(b, OL_BUILDER_INPUT, ADD_PART, "x", x_dims, 2));
  CHECK_OK(add_external(b, "w", w_dims, 2, 0, -1));
  CHECK_OK(add_external(b, "bias", bias_dims, 1, 48, -1));
  CHECK_OK(add_node(b, "MatMul", "x", "w", "y"));
  CHECK_OK(add_node(b, "Add", "y", "bias", "z"));
  size_t reinferred = 0;
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 2);
  CHECK(kept_dims(b, "w", "4,3") && kept_dims(b, "y", "batch,3") && kept_dims(b, "z", "batch,3"));
  CHECK(kept_elem_type(b, "w") == OL_DTYPE_FLOAT && kept_elem_type(b, "z") == OL_DTYPE_FLOAT);

  /* edits re-infer incrementally: a node after z, w's payload moved, w widened */
  CHECK_OK(add_node(b, "Relu", "z", NULL, "r"));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 1);
  CHECK(kept_dims(b, "r", "batch,3"));
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INITIALIZER, "w"));
  CHECK_OK(add_external(b, "w", w_dims, 2, 12, -1));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 0); /* the same declared type, and its values are never read */
  /* w of another width changes everything after it: Add now fails to broadcast */
  int64_t wide[] = {4, 5};
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INITIALIZER, "w"));
  CHECK_OK(add_external(b, "w", wide, 2, 0, -1));
  CHECK_STATUS(ol_builder_infer(b, &reinferred), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "'z'") != NULL);
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INITIALIZER, "bias"));
  int64_t wide_bias[] = {5};
  CHECK_OK(add_external(b, "bias", wide_bias, 1, 80, -1));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(reinferred == 3);
  CHECK(kept_dims(b, "r", "batch,5"));

  /* a Constant whose value is external: its declared type and dims */
  int64_t c_dims[] = {2, 5};
  CHECK_OK(with_external(b, "c", c_dims, 2, 96, -1, as_constant));
  CHECK_OK(add_node(b, "Add", "c", "r", "cr"));
  CHECK_OK(ol_builder_infer(b, &reinferred));
  CHECK(kept_dims(b, "c", "2,5") && kept_dims(b, "cr", "2,5") && kept_elem_type(b, "c") == OL_DTYPE_FLOAT);

  /* a declaration that cannot be right is still an error naming the tensor */
  CHECK_OK(add_external(b, "short", bias_dims, 1, 0, 4));
  CHECK_STATUS(ol_builder_infer(b, &reinferred), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "'short'") != NULL);
  ol_builder_destroy(b);
}

OL_TEST_MAIN(TEST(test_counts_and_equality), TEST(test_values_and_errors), TEST(test_external_initializers))
