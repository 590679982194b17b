/* The graph builder (ol_builder_*): storage, the shared namespace, removal,
 * round trips, catalogue compaction and remap, ToGraph's refusal of
 * model-level references; and the text export's refusals of what the text
 * form cannot hold. */
#include <stdlib.h>
#include <string.h>

#include "builder_messages.h"
#include "harness.h"
#include "model/builder_internal.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"
#include "quant/shared.h"

/* ------------------------------------------------------------ message helpers */

/* A float tensor value info name[dim]. */
static ol_status add_value(ol_builder *b, ol_builder_part part, const char *name, int64_t dim) {
  return put_float_value(b, part, ADD_PART, name, &dim, 1);
}

static ol_status add_node(ol_builder *b, const char *name, const char *op, const char *a, const char *c,
                          const char *out) {
  char *inputs[] = {(char *)a, (char *)c};
  char *outputs[] = {(char *)out};
  Onnx__NodeProto n = node_proto(name, op, inputs, 2, outputs, 1);
  return add_packed(b, OL_BUILDER_NODE, &n.base);
}

static ol_status add_tensor(ol_builder *b, const char *name, float value) {
  int64_t dims[] = {2};
  float data[] = {value, value};
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  t.name = (char *)name;
  t.has_data_type = 1;
  t.data_type = OL_DTYPE_FLOAT;
  t.n_dims = 1;
  t.dims = dims;
  t.has_raw_data = 1;
  t.raw_data.data = (uint8_t *)data;
  t.raw_data.len = sizeof data;
  return add_packed(b, OL_BUILDER_INITIALIZER, &t.base);
}

/* An empty paged cache initializer (its contents are the loader's to check). */
static ol_status add_cache(ol_builder *b, const char *name) {
  Onnx__PagedCacheProto cache = ONNX__PAGED_CACHE_PROTO__INIT;
  cache.name = (char *)name;
  return add_packed(b, OL_BUILDER_CACHE_INITIALIZER, &cache.base);
}

/* An EncodedValueProto whose struct_type is type_ref `ref` (0: an inline
 * array of 4 UINT8), with payload `payload` (4 bytes). */
static ol_status add_structured(ol_builder *b, const char *name, uint64_t ref, const char *payload) {
  Onnx__TypeProto__Tensor elem_tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
  elem_tensor.has_elem_type = 1;
  elem_tensor.elem_type = OL_DTYPE_UINT8;
  Onnx__TypeProto elem = ONNX__TYPE_PROTO__INIT;
  elem.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  elem.tensor_type = &elem_tensor;
  Onnx__StructTypeProto__Array array = ONNX__STRUCT_TYPE_PROTO__ARRAY__INIT;
  array.element_type = &elem;
  array.has_dimension = 1;
  array.dimension = 4;
  Onnx__StructTypeProto st = ONNX__STRUCT_TYPE_PROTO__INIT;
  if (ref) {
    st.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
    st.type_ref = ref;
  } else {
    st.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY;
    st.array = &array;
  }
  Onnx__EncodedValueProto ev = ONNX__ENCODED_VALUE_PROTO__INIT;
  ev.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  ev.struct_type = &st;
  ev.name = (char *)name;
  ev.has_raw_data = 1;
  ev.raw_data.data = (uint8_t *)payload;
  ev.raw_data.len = 4;
  return add_packed(b, OL_BUILDER_STRUCTURED_INITIALIZER, &ev.base);
}

/* A catalogue entry: an array of 4 UINT8, or (ref != 0) a structure whose
 * one field has struct_type type_ref ref. */
static ol_status add_type(ol_builder *b, uint64_t id, uint64_t ref) {
  Onnx__TypeProto__Tensor elem_tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
  elem_tensor.has_elem_type = 1;
  elem_tensor.elem_type = OL_DTYPE_UINT8;
  Onnx__TypeProto elem = ONNX__TYPE_PROTO__INIT;
  elem.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  elem.tensor_type = &elem_tensor;
  Onnx__StructTypeProto__Array array = ONNX__STRUCT_TYPE_PROTO__ARRAY__INIT;
  array.element_type = &elem;
  array.has_dimension = 1;
  array.dimension = 4;
  Onnx__StructTypeProto inner = ONNX__STRUCT_TYPE_PROTO__INIT;
  inner.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  inner.type_ref = ref;
  Onnx__TypeProto field_type = ONNX__TYPE_PROTO__INIT;
  field_type.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  field_type.struct_type = &inner;
  Onnx__StructTypeProto__Structure__Field field = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__INIT;
  field.name = "f";
  field.content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE;
  field.type = &field_type;
  Onnx__StructTypeProto__Structure__Field *fields[] = {&field};
  Onnx__StructTypeProto__Structure structure = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__INIT;
  structure.n_field = 1;
  structure.field = fields;
  Onnx__StructTypeProto st = ONNX__STRUCT_TYPE_PROTO__INIT;
  if (ref) {
    st.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE;
    st.structure = &structure;
  } else {
    st.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY;
    st.array = &array;
  }
  st.has_type_id = 1;
  st.type_id = id;
  return add_packed(b, OL_BUILDER_STRUCT_TYPE, &st.base);
}

static ol_builder *new_builder(void) {
  ol_builder_opset opset = {"", 18};
  ol_builder *b = NULL;
  CHECK_OK(ol_builder_create(10, &opset, 1, &b));
  return b;
}

static Onnx__ModelProto *exported(const ol_builder *b) {
  void *data = NULL;
  size_t size = 0;
  CHECK_OK(ol_builder_to_model(b, &data, &size));
  Onnx__ModelProto *m = data ? onnx__model_proto__unpack(NULL, size, data) : NULL;
  ol_free(data);
  CHECK(m != NULL);
  return m;
}

static bool has_text(const char *needle) {
  bool found = strstr(ol_last_error(), needle) != NULL;
  if (!found) fprintf(stderr, "  message without '%s': %s\n", needle, ol_last_error());
  return found;
}

/* ------------------------------------------------------------ tests */

/* A model built from scratch loads, runs and survives a second round trip byte for byte. */
static void test_build_and_run(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "x", 2));
  CHECK_OK(add_tensor(b, "w", 1.5f));
  CHECK_OK(add_node(b, "add", "Add", "x", "w", "y"));
  CHECK_OK(add_value(b, OL_BUILDER_OUTPUT, "y", 2));
  CHECK(ol_builder_count(b, OL_BUILDER_NODE) == 1);
  void *data = NULL;
  size_t size = 0;
  CHECK_OK(ol_builder_to_model(b, &data, &size));
  ol_model *model = NULL;
  CHECK_OK(ol_model_load(data, size, NULL, &model));
  ol_session *session = NULL;
  if (model) CHECK_OK(ol_session_create(model, NULL, &session));
  float xs[] = {1, 2};
  int64_t dims[] = {2};
  ol_value *x = NULL, *y = NULL;
  CHECK_OK(ol_tensor_wrap(OL_DTYPE_FLOAT, dims, 1, xs, sizeof xs, NULL, NULL, &x));
  const char *in[] = {"x"}, *out[] = {"y"};
  if (session) CHECK_OK(ol_session_run(session, in, (ol_value *const *)&x, 1, out, &y, 1, NULL));
  if (y) CHECK(((float *)ol_tensor_data(y))[1] == 3.5f);
  ol_value_release(x);
  ol_value_release(y);
  ol_session_destroy(session);
  ol_model_destroy(model);

  ol_builder *again = NULL;
  CHECK_OK(ol_builder_from_model(data, size, &again));
  void *data2 = NULL;
  size_t size2 = 0;
  if (again) CHECK_OK(ol_builder_to_model(again, &data2, &size2));
  CHECK(size2 == size && data2 && memcmp(data, data2, size) == 0);
  ol_free(data);
  ol_free(data2);
  ol_builder_destroy(again);
  ol_builder_destroy(b);
}

/* Names are shared by inputs, initializers of every kind and node outputs. */
static void test_name_clash(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "x", 2));
  CHECK_STATUS(add_structured(b, "x", 0, "abcd"), OL_INVALID_ARGUMENT);
  CHECK(has_text("the structured initializer 'x' clashes with the graph input 'x'"));
  CHECK(ol_builder_count(b, OL_BUILDER_STRUCTURED_INITIALIZER) == 0);
  CHECK_OK(add_structured(b, "q", 0, "abcd"));
  CHECK_STATUS(add_node(b, "n1", "Add", "x", "x", "q"), OL_INVALID_ARGUMENT);
  CHECK(has_text("the output 'q' of node 'n1' (Add) clashes with the structured initializer 'q'"));
  CHECK(ol_builder_count(b, OL_BUILDER_NODE) == 0);
  CHECK_OK(add_node(b, "n1", "Add", "x", "x", "y"));
  CHECK_STATUS(add_tensor(b, "y", 1), OL_INVALID_ARGUMENT);
  CHECK(has_text("the initializer 'y' clashes with the output 'y' of node 'n1' (Add)"));
  CHECK_STATUS(add_value(b, OL_BUILDER_INPUT, "y", 2), OL_INVALID_ARGUMENT);
  CHECK(has_text("the graph input 'y' clashes with the output 'y' of node 'n1' (Add)"));
  /* ONNX's overridable default: an initializer named like an input */
  CHECK_OK(add_tensor(b, "x", 1));
  /* ... one default per input, in either kind, and one input per default */
  CHECK_STATUS(add_cache(b, "x"), OL_INVALID_ARGUMENT);
  CHECK(has_text("the cache initializer 'x' clashes with the initializer 'x'"));
  CHECK_STATUS(add_value(b, OL_BUILDER_INPUT, "x", 2), OL_INVALID_ARGUMENT);
  CHECK(has_text("the graph input 'x' clashes with the graph input 'x'"));
  /* a paged cache initializer is a default too (seed 000), before or after its input */
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "kv", 2));
  CHECK_OK(add_cache(b, "kv"));
  CHECK_OK(add_cache(b, "kv2"));
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "kv2", 2));
  CHECK_STATUS(add_tensor(b, "kv", 1), OL_INVALID_ARGUMENT);
  CHECK(has_text("the initializer 'kv' clashes with the cache initializer 'kv'"));
  CHECK_STATUS(add_value(b, OL_BUILDER_INPUT, "kv2", 2), OL_INVALID_ARGUMENT);
  CHECK(has_text("the graph input 'kv2' clashes with the graph input 'kv2'"));
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INPUT, "kv2")); /* rebuilt names keep the rule */
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "kv2", 2));
  CHECK_STATUS(add_cache(b, "kv"), OL_INVALID_ARGUMENT);
  /* a node naming one output twice */
  CHECK_STATUS(add_node(b, "n2", "Add", "y", "y", "y"), OL_INVALID_ARGUMENT);
  Onnx__NodeProto n = ONNX__NODE_PROTO__INIT;
  char *outs[] = {"z", "z"};
  n.op_type = "Split";
  n.n_output = 2;
  n.output = outs;
  CHECK_STATUS(add_packed(b, OL_BUILDER_NODE, &n.base), OL_INVALID_ARGUMENT);
  CHECK(has_text("names the output 'z' twice"));
  /* a declared output is declared once; names and op types are required */
  CHECK_OK(add_value(b, OL_BUILDER_OUTPUT, "y", 2));
  CHECK_STATUS(add_value(b, OL_BUILDER_OUTPUT, "y", 2), OL_INVALID_ARGUMENT);
  CHECK(has_text("graph output 'y' is already declared"));
  CHECK_STATUS(add_value(b, OL_BUILDER_INPUT, "", 2), OL_INVALID_ARGUMENT);
  CHECK_STATUS(add_node(b, "n3", "", "x", "x", "w"), OL_INVALID_ARGUMENT);
  CHECK(has_text("has no op_type"));
  CHECK_STATUS(ol_builder_add(b, OL_BUILDER_NODE, "\xff\xff", 2), OL_INVALID_ARGUMENT);
  CHECK(has_text("not a serialized"));
  CHECK_STATUS(ol_builder_add(b, OL_BUILDER_PART_COUNT, "", 0), OL_INVALID_ARGUMENT);
  ol_builder_destroy(b);
}

/* Removing frees the name; bound inputs and outputs go after their binding. */
static void test_remove_and_bindings(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "past", 2));
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "delta", 2));
  CHECK_OK(add_node(b, "acc", "Add", "past", "delta", "present"));
  CHECK_OK(add_value(b, OL_BUILDER_OUTPUT, "present", 2));
  CHECK_STATUS(ol_builder_add_persistent_binding(b, "nope", "present"), OL_INVALID_ARGUMENT);
  CHECK(has_text("'nope' is not a graph input"));
  CHECK_STATUS(ol_builder_add_persistent_binding(b, "past", "nope"), OL_INVALID_ARGUMENT);
  CHECK(has_text("'nope' is not a graph output"));
  CHECK_OK(ol_builder_add_persistent_binding(b, "past", "present"));
  CHECK_STATUS(ol_builder_add_persistent_binding(b, "past", "present"), OL_INVALID_ARGUMENT);
  CHECK(has_text("already has a persistent binding"));
  CHECK_STATUS(ol_builder_remove(b, OL_BUILDER_INPUT, "past"), OL_FAILED_PRECONDITION);
  CHECK(has_text("persistent binding 'past' <- 'present'"));
  CHECK_STATUS(ol_builder_remove(b, OL_BUILDER_OUTPUT, "present"), OL_FAILED_PRECONDITION);
  CHECK_STATUS(ol_builder_remove(b, OL_BUILDER_NODE, "nothing"), OL_NOT_FOUND);
  CHECK(has_text("no node 'nothing'"));

  /* the binding survives a round trip and is refused by the text form */
  void *data = NULL;
  size_t size = 0;
  CHECK_OK(ol_builder_to_model(b, &data, &size));
  ol_model *model = NULL;
  CHECK_OK(ol_model_load(data, size, NULL, &model));
  char *text = NULL;
  if (model) CHECK_STATUS(ol_model_print_text(model, &text), OL_NOT_IMPLEMENTED);
  CHECK(has_text("persistent binding 'past' <- 'present'"));
  ol_model_destroy(model);
  ol_free(data);

  CHECK_OK(ol_builder_remove(b, OL_BUILDER_PERSISTENT_BINDING, "past"));
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INPUT, "past"));
  CHECK(ol_builder_count(b, OL_BUILDER_INPUT) == 1);
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_NODE, "acc"));
  /* the node's output name is free again */
  CHECK_OK(add_tensor(b, "present", 2));
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_INITIALIZER, "present"));
  CHECK_OK(add_node(b, "", "Mul", "delta", "delta", "present"));
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_NODE, "present")); /* unnamed: found by its output */
  CHECK(ol_builder_count(b, OL_BUILDER_NODE) == 0);
  ol_builder_destroy(b);
}

/* Structured initializers are stored unchanged; ToModel keeps only the
 * referenced catalogue entries, renumbered, with every reference remapped
 * (nested references and shared descriptors included). */
static void test_catalogue_compaction(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_type(b, 5, 0));  /* unused */
  CHECK_OK(add_type(b, 9, 0));  /* used by entry 7 */
  CHECK_OK(add_type(b, 7, 9));  /* used by w */
  CHECK_OK(add_type(b, 11, 0)); /* used by a shared descriptor */
  CHECK_STATUS(add_type(b, 7, 0), OL_INVALID_ARGUMENT);
  CHECK(has_text("struct type id 7 is declared twice"));
  CHECK_STATUS(add_type(b, 0, 0), OL_INVALID_ARGUMENT);
  CHECK(has_text("nonzero type_id"));
  CHECK_OK(add_structured(b, "w", 7, "\x01\x02\x03\x04"));

  void *stored = NULL;
  size_t stored_size = 0;
  CHECK_OK(ol_builder_get(b, OL_BUILDER_STRUCTURED_INITIALIZER, 0, &stored, &stored_size));
  Onnx__EncodedValueProto *ev = stored ? onnx__encoded_value_proto__unpack(NULL, stored_size, stored) : NULL;
  CHECK(ev && ev->raw_data.len == 4 && memcmp(ev->raw_data.data, "\x01\x02\x03\x04", 4) == 0);
  CHECK(ev && ev->struct_type->type_ref == 7);
  if (ev) onnx__encoded_value_proto__free_unpacked(ev, NULL);
  ol_free(stored);

  /* a shared quantization set whose storage descriptor refers to 11 */
  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 11;
  bytes desc = packed(&ref.base);
  int64_t dims[] = {(int64_t)desc.size};
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  t.name = "desc";
  t.has_data_type = 1;
  t.data_type = OL_DTYPE_UINT8;
  t.n_dims = 1;
  t.dims = dims;
  t.has_raw_data = 1;
  t.raw_data.data = desc.data;
  t.raw_data.len = desc.size;
  CHECK_OK(add_packed(b, OL_BUILDER_INITIALIZER, &t.base));
  free(desc.data);
  /* without the set, 11 is unreferenced: dropped with 5 */
  void *data = NULL;
  size_t size = 0;
  Onnx__ModelProto *m = exported(b);
  if (m) {
    CHECK(m->n_struct_types == 2);
    onnx__model_proto__free_unpacked(m, NULL);
  }
  /* the annotation is not a builder part: attached to the builder's own
   * model (white box), serialized and imported */
  Onnx__StringStringEntryProto role = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  role.key = "storage_type";
  role.value = "desc";
  Onnx__StringStringEntryProto *roles[] = {&role};
  Onnx__TensorAnnotation a = ONNX__TENSOR_ANNOTATION__INIT;
  a.tensor_name = OL_QUANT_PARAMETERS_PREFIX "set";
  a.n_quant_parameter_tensor_names = 1;
  a.quant_parameter_tensor_names = roles;
  Onnx__TensorAnnotation *annotations[] = {&a};
  Onnx__GraphProto *own = b->model->graph;
  own->n_quantization_annotation = 1;
  own->quantization_annotation = annotations;
  bytes with_set = packed(&b->model->base);
  own->n_quantization_annotation = 0;
  own->quantization_annotation = NULL;
  ol_builder_destroy(b);
  b = NULL;
  CHECK_OK(ol_builder_from_model(with_set.data, with_set.size, &b));
  free(with_set.data);
  if (!b) return;
  CHECK(ol_builder_count(b, OL_BUILDER_STRUCT_TYPE) == 4); /* the builder itself keeps all it was given */

  m = exported(b);
  if (m) {
    CHECK(m->n_struct_types == 3);
    /* catalogue order kept, ids 1..3: 9 -> 1, 7 -> 2, 11 -> 3 */
    if (m->n_struct_types == 3) {
      CHECK(m->struct_types[0]->type_id == 1);
      CHECK(m->struct_types[1]->type_id == 2);
      CHECK(m->struct_types[1]->structure->field[0]->type->struct_type->type_ref == 1);
      CHECK(m->struct_types[2]->type_id == 3);
    }
    CHECK(m->graph->encoded_initializer[0]->struct_type->type_ref == 2);
    const Onnx__TensorProto *d = m->graph->initializer[0];
    Onnx__StructTypeProto *st = onnx__struct_type_proto__unpack(NULL, d->raw_data.len, d->raw_data.data);
    CHECK(st && st->type_ref == 3 && d->dims[0] == (int64_t)d->raw_data.len);
    if (st) onnx__struct_type_proto__free_unpacked(st, NULL);
    onnx__model_proto__free_unpacked(m, NULL);
  }

  /* ToGraph cannot carry the references */
  void *graph = NULL;
  size_t graph_size = 0;
  CHECK_STATUS(ol_builder_to_graph(b, &graph, &graph_size), OL_FAILED_PRECONDITION);
  CHECK(has_text("structured initializer 'w' uses struct_type.type_ref 7, a model-level reference"));
  /* ... nor a reference to nothing */
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_STRUCT_TYPE, "9"));
  CHECK_STATUS(ol_builder_to_model(b, &data, &size), OL_INVALID_MODEL);
  CHECK(has_text("struct type 7 ('') uses struct_type.type_ref 9, which ModelProto.struct_types does not declare"));
  CHECK_STATUS(ol_builder_remove(b, OL_BUILDER_STRUCT_TYPE, "x9"), OL_INVALID_ARGUMENT);
  ol_builder_destroy(b);
}

/* A graph without model-level references exports standalone; an inline
 * structured initializer is kept, and the text form refuses it by name. */
static void test_to_graph_and_text(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "x", 2));
  CHECK_OK(add_structured(b, "packed", 0, "wxyz"));
  CHECK_OK(add_node(b, "n", "Add", "x", "x", "y"));
  CHECK_OK(add_value(b, OL_BUILDER_OUTPUT, "y", 2));
  void *graph = NULL;
  size_t size = 0;
  CHECK_OK(ol_builder_to_graph(b, &graph, &size));
  Onnx__GraphProto *g = graph ? onnx__graph_proto__unpack(NULL, size, graph) : NULL;
  CHECK(g && g->n_encoded_initializer == 1 && memcmp(g->encoded_initializer[0]->raw_data.data, "wxyz", 4) == 0);
  if (g) onnx__graph_proto__free_unpacked(g, NULL);
  ol_free(graph);

  void *data = NULL;
  CHECK_OK(ol_builder_to_model(b, &data, &size));
  ol_model *model = NULL;
  CHECK_OK(ol_model_load(data, size, NULL, &model));
  char *text = NULL;
  if (model) CHECK_STATUS(ol_model_print_text(model, &text), OL_NOT_IMPLEMENTED);
  CHECK(has_text("encoded initializer 'packed'"));
  CHECK(text == NULL);
  ol_model_destroy(model);
  ol_free(data);
  ol_builder_destroy(b);
}

/* Import keeps what the builder does not interpret: external data, cache
 * initializers, functions; and rejects a model breaking the namespace. */
static void test_import_keeps_everything(void) {
  Onnx__StringStringEntryProto loc = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  loc.key = "location";
  loc.value = "weights.bin";
  Onnx__StringStringEntryProto *ext[] = {&loc};
  int64_t dims[] = {4};
  Onnx__TensorProto t = ONNX__TENSOR_PROTO__INIT;
  t.name = "w";
  t.has_data_type = 1;
  t.data_type = OL_DTYPE_FLOAT;
  t.n_dims = 1;
  t.dims = dims;
  t.has_data_location = 1;
  t.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  t.n_external_data = 1;
  t.external_data = ext;
  Onnx__TensorProto *inits[] = {&t};
  Onnx__PagedCacheProto cache = ONNX__PAGED_CACHE_PROTO__INIT;
  cache.name = "kv";
  Onnx__PagedCacheProto *caches[] = {&cache};
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  g.name = "g";
  g.n_initializer = 1;
  g.initializer = inits;
  g.n_paged_cache_initializer = 1;
  g.paged_cache_initializer = caches;
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  m.has_ir_version = 1;
  m.ir_version = 10;
  m.graph = &g;
  bytes in = packed(&m.base);
  ol_builder *b = NULL;
  CHECK_OK(ol_builder_from_model(in.data, in.size, &b));
  void *out = NULL;
  size_t size = 0;
  if (b) CHECK_OK(ol_builder_to_model(b, &out, &size));
  CHECK(out && size == in.size && memcmp(out, in.data, size) == 0);
  ol_free(out);
  CHECK_STATUS(add_tensor(b, "kv", 1), OL_INVALID_ARGUMENT);
  CHECK(has_text("clashes with the cache initializer 'kv'"));
  ol_builder_destroy(b);
  free(in.data);

  /* a cache initializer named like an initializer */
  cache.name = "w";
  in = packed(&m.base);
  b = NULL;
  CHECK_STATUS(ol_builder_from_model(in.data, in.size, &b), OL_INVALID_MODEL);
  CHECK(has_text("the cache initializer 'w' clashes with the initializer 'w'"));
  CHECK(b == NULL);
  free(in.data);
  CHECK_STATUS(ol_builder_from_model("\xff\xff\xff", 3, &b), OL_INVALID_MODEL);
  ol_builder_opset twice[] = {{"", 18}, {NULL, 17}};
  CHECK_STATUS(ol_builder_create(10, twice, 2, &b), OL_INVALID_ARGUMENT);
  CHECK(has_text("imported twice"));
  ol_builder_destroy(NULL);
}


/* An inline array uint8[4] or int8[4] layout. */
static ol_status add_typed_structured(ol_builder *b, const char *name, ol_dtype elem, const char *payload) {
  Onnx__TypeProto__Tensor elem_tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
  elem_tensor.has_elem_type = 1;
  elem_tensor.elem_type = (int32_t)elem;
  Onnx__TypeProto et = ONNX__TYPE_PROTO__INIT;
  et.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  et.tensor_type = &elem_tensor;
  Onnx__StructTypeProto__Array array = ONNX__STRUCT_TYPE_PROTO__ARRAY__INIT;
  array.element_type = &et;
  array.has_dimension = 1;
  array.dimension = 4;
  Onnx__StructTypeProto st = ONNX__STRUCT_TYPE_PROTO__INIT;
  st.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY;
  st.array = &array;
  Onnx__EncodedValueProto ev = ONNX__ENCODED_VALUE_PROTO__INIT;
  ev.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  ev.struct_type = &st;
  ev.name = (char *)name;
  ev.has_raw_data = 1;
  ev.raw_data.data = (uint8_t *)payload;
  ev.raw_data.len = 4;
  return add_packed(b, OL_BUILDER_STRUCTURED_INITIALIZER, &ev.base);
}

static bool node_reads(const ol_builder *b, size_t node, size_t input, const char *name) {
  void *data = NULL;
  size_t size = 0;
  if (ol_builder_get(b, OL_BUILDER_NODE, node, &data, &size) != OL_OK) return false;
  Onnx__NodeProto *n = onnx__node_proto__unpack(NULL, size, data);
  bool same = n && input < n->n_input && strcmp(n->input[input], name) == 0;
  if (n) onnx__node_proto__free_unpacked(n, NULL);
  ol_free(data);
  return same;
}

/* De-duplication compares what a value decodes to: byte-identical payloads
 * with different descriptors stay apart; equal ones merge, readers renamed. */
static void test_dedup(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_type(b, 7, 0)); /* array uint8[4], like the inline u1 below */
  CHECK_OK(add_typed_structured(b, "u1", OL_DTYPE_UINT8, "abcd"));
  CHECK_OK(add_typed_structured(b, "s1", OL_DTYPE_INT8, "abcd"));    /* same bytes, another descriptor */
  CHECK_OK(add_structured(b, "u2", 7, "abcd"));                       /* same resolved type as u1 */
  CHECK_OK(add_typed_structured(b, "u3", OL_DTYPE_UINT8, "abce"));   /* other bytes */
  CHECK_OK(add_tensor(b, "t1", 2.0f));
  CHECK_OK(add_tensor(b, "t2", 2.0f));
  CHECK_OK(add_tensor(b, "t3", 3.0f));
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "x", 2));
  CHECK_OK(add_tensor(b, "x", 2.0f)); /* an input's default: kept, never a keeper */
  CHECK_OK(add_node(b, "a", "Add", "t2", "x", "y"));
  CHECK_OK(add_node(b, "p", "Pack", "u2", "s1", "z"));
  size_t removed = 0;
  CHECK_OK(ol_builder_dedup_initializers(b, &removed));
  CHECK(removed == 2); /* t2 -> t1, u2 -> u1 */
  CHECK(ol_builder_count(b, OL_BUILDER_INITIALIZER) == 3);
  CHECK(ol_builder_count(b, OL_BUILDER_STRUCTURED_INITIALIZER) == 3);
  CHECK(node_reads(b, 0, 0, "t1") && node_reads(b, 0, 1, "x"));
  CHECK(node_reads(b, 1, 0, "u1") && node_reads(b, 1, 1, "s1"));
  /* the removed names are free again */
  CHECK_OK(add_tensor(b, "t2", 5.0f));
  CHECK_OK(ol_builder_dedup_initializers(b, &removed));
  CHECK(removed == 0);
  ol_builder_destroy(b);
}

/* Positions: a node inserted before its readers, a node replaced in place
 * (reusing its outputs), opset imports as parts; failures change nothing. */
static void test_positions_and_opsets(void) {
  ol_builder *b = new_builder();
  CHECK_OK(add_value(b, OL_BUILDER_INPUT, "x", 2));
  CHECK_OK(add_node(b, "second", "Add", "h", "h", "y"));
  char *in[] = {"x"}, *out[] = {"h"};
  Onnx__NodeProto first = node_proto("first", "Relu", in, 1, out, 1);
  bytes p = packed(&first.base);
  CHECK_STATUS(ol_builder_add_at(b, OL_BUILDER_NODE, p.data, p.size, 2), OL_INVALID_ARGUMENT);
  CHECK(has_text("position 2 is past the 1 node parts"));
  CHECK_OK(ol_builder_add_at(b, OL_BUILDER_NODE, p.data, p.size, 0));
  free(p.data);
  CHECK(node_reads(b, 1, 0, "h"));
  /* replace 'second' (index 1) by a Mul reusing 'y'; a clash leaves it in place */
  char *mul_in[] = {"h", "x"}, *clash[] = {"h"}, *mul_out[] = {"y"};
  Onnx__NodeProto mul = node_proto("mul", "Mul", mul_in, 2, clash, 1);
  p = packed(&mul.base);
  CHECK_STATUS(ol_builder_replace(b, OL_BUILDER_NODE, 1, p.data, p.size), OL_INVALID_ARGUMENT);
  CHECK(has_text("clashes with the output 'h' of node 'first'"));
  free(p.data);
  CHECK(ol_builder_count(b, OL_BUILDER_NODE) == 2 && node_reads(b, 1, 0, "h"));
  CHECK_STATUS(add_tensor(b, "y", 1), OL_INVALID_ARGUMENT); /* 'second' still holds y */
  mul.output = mul_out;
  p = packed(&mul.base);
  CHECK_STATUS(ol_builder_replace(b, OL_BUILDER_NODE, 2, p.data, p.size), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_builder_replace(b, OL_BUILDER_NODE, 1, p.data, p.size));
  free(p.data);
  Onnx__ModelProto *m = exported(b);
  CHECK(m->graph->n_node == 2 && strcmp(m->graph->node[0]->name, "first") == 0 &&
        strcmp(m->graph->node[1]->name, "mul") == 0 && strcmp(m->graph->node[1]->input[1], "x") == 0);
  onnx__model_proto__free_unpacked(m, NULL);
  /* a bound input is replaced only by one of the same name */
  CHECK_OK(add_value(b, OL_BUILDER_OUTPUT, "y", 2));
  CHECK_OK(ol_builder_add_persistent_binding(b, "x", "y"));
  Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT;
  vi.name = "x2";
  p = packed(&vi.base);
  CHECK_STATUS(ol_builder_replace(b, OL_BUILDER_INPUT, 0, p.data, p.size), OL_FAILED_PRECONDITION);
  CHECK(has_text("persistent binding 'x' <- 'y'"));
  free(p.data);
  CHECK(ol_builder_count(b, OL_BUILDER_INPUT) == 1);
  CHECK_STATUS(add_value(b, OL_BUILDER_INPUT, "x2", 2), OL_OK); /* the failed replacement released x2 */

  /* opset imports: a domain once, a positive version, removed by domain */
  Onnx__OperatorSetIdProto ms = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  ms.domain = "com.microsoft";
  CHECK_STATUS(add_packed(b, OL_BUILDER_OPSET_IMPORT, &ms.base), OL_INVALID_ARGUMENT);
  CHECK(has_text("needs a positive version"));
  ms.has_version = 1;
  ms.version = 1;
  CHECK_OK(add_packed(b, OL_BUILDER_OPSET_IMPORT, &ms.base));
  Onnx__OperatorSetIdProto onnx = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  onnx.has_version = 1;
  onnx.version = 21;
  CHECK_STATUS(add_packed(b, OL_BUILDER_OPSET_IMPORT, &onnx.base), OL_INVALID_ARGUMENT);
  CHECK(has_text("the domain '' is already imported (version 18)"));
  CHECK(ol_builder_count(b, OL_BUILDER_OPSET_IMPORT) == 2);
  m = exported(b);
  CHECK(m->n_opset_import == 2 && strcmp(m->opset_import[1]->domain, "com.microsoft") == 0);
  onnx__model_proto__free_unpacked(m, NULL);
  CHECK_OK(ol_builder_remove(b, OL_BUILDER_OPSET_IMPORT, ""));
  CHECK(ol_builder_count(b, OL_BUILDER_OPSET_IMPORT) == 1);
  ol_builder_destroy(b);
}

OL_TEST_MAIN(TEST(test_dedup), TEST(test_positions_and_opsets), TEST(test_build_and_run), TEST(test_name_clash), TEST(test_remove_and_bindings),
             TEST(test_catalogue_compaction), TEST(test_to_graph_and_text), TEST(test_import_keeps_everything))
