/* Zero-copy weights: large initializer payloads are viewed in the model's own
 * wire buffer at 16-byte aligned addresses (not copied by protobuf-c), small
 * ones are copied, layouts the pass does not handle fall back to a plain
 * unpack, and the model reads the same either way. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "ir/wire_weights.h"
#include "onnxlight.h"

#define N_BIG 300 /* floats: 1200 bytes, above OL_WIRE_VIEW_MIN_BYTES */

static float big[N_BIG], small[4] = {1, 2, 3, 4};

/* y = Add(Add(x, w), u) over float[N_BIG] with initializers w (big) and u
 * (big) and a small unused one s; optionally an encoded initializer. */
static uint8_t *model_bytes(size_t *size, bool with_encoded) {
  for (int i = 0; i < N_BIG; i++) big[i] = 0.5f * (float)i - 7.0f;
  Onnx__TensorProto w = ONNX__TENSOR_PROTO__INIT, u = ONNX__TENSOR_PROTO__INIT, sm = ONNX__TENSOR_PROTO__INIT;
  int64_t dims[1] = {N_BIG}, sdims[1] = {4};
  Onnx__TensorProto *inits[3] = {&w, &u, &sm};
  const char *names[3] = {"w", "u", "s"};
  for (int i = 0; i < 3; i++) {
    inits[i]->name = (char *)names[i];
    inits[i]->has_data_type = 1;
    inits[i]->data_type = OL_DTYPE_FLOAT;
    inits[i]->n_dims = 1;
    inits[i]->dims = i < 2 ? dims : sdims;
    inits[i]->has_raw_data = 1;
    inits[i]->raw_data.data = (uint8_t *)(i < 2 ? big : small);
    inits[i]->raw_data.len = i < 2 ? sizeof big : sizeof small;
  }
  Onnx__NodeProto n1 = ONNX__NODE_PROTO__INIT, n2 = ONNX__NODE_PROTO__INIT;
  char *in1[2] = {"x", "w"}, *out1[1] = {"t"}, *in2[2] = {"t", "u"}, *out2[1] = {"y"};
  n1.op_type = n2.op_type = "Add";
  n1.n_input = n2.n_input = 2;
  n1.n_output = n2.n_output = 1;
  n1.input = in1, n1.output = out1, n2.input = in2, n2.output = out2;
  Onnx__NodeProto *nodes[2] = {&n1, &n2};
  Onnx__TensorShapeProto__Dimension d = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
  d.value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
  d.dim_value = N_BIG;
  Onnx__TensorShapeProto__Dimension *dl[1] = {&d};
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = 1, shape.dim = dl;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  tt.has_elem_type = 1, tt.elem_type = OL_DTYPE_FLOAT, tt.shape = &shape;
  Onnx__TypeProto type = ONNX__TYPE_PROTO__INIT;
  type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, type.tensor_type = &tt;
  Onnx__ValueInfoProto x = ONNX__VALUE_INFO_PROTO__INIT, y = ONNX__VALUE_INFO_PROTO__INIT;
  x.name = "x", y.name = "y", x.type = y.type = &type;
  Onnx__ValueInfoProto *xs[1] = {&x}, *ys[1] = {&y};
  Onnx__EncodedValueProto enc = ONNX__ENCODED_VALUE_PROTO__INIT;
  Onnx__EncodedValueProto *encs[1] = {&enc};
  enc.name = "e";
  enc.has_raw_data = 1;
  enc.raw_data.data = (uint8_t *)big;
  enc.raw_data.len = 512;
  Onnx__GraphProto g = ONNX__GRAPH_PROTO__INIT;
  g.name = "g";
  g.n_node = 2, g.node = nodes;
  g.n_initializer = 3, g.initializer = inits;
  g.n_input = 1, g.input = xs;
  g.n_output = 1, g.output = ys;
  if (with_encoded) g.n_encoded_initializer = 1, g.encoded_initializer = encs;
  Onnx__OperatorSetIdProto opset = ONNX__OPERATOR_SET_ID_PROTO__INIT;
  opset.domain = "", opset.has_version = 1, opset.version = 17;
  Onnx__OperatorSetIdProto *opsets[1] = {&opset};
  Onnx__ModelProto m = ONNX__MODEL_PROTO__INIT;
  m.has_ir_version = 1, m.ir_version = 8;
  m.n_opset_import = 1, m.opset_import = opsets;
  m.graph = &g;
  *size = onnx__model_proto__get_packed_size(&m);
  uint8_t *bytes = malloc(*size);
  onnx__model_proto__pack(&m, bytes);
  return bytes;
}

static bool inside(const void *p, const uint8_t *wire, size_t size) {
  return wire && (const uint8_t *)p >= wire && (const uint8_t *)p < wire + size;
}

static void run_and_check(ol_model *m) {
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  if (!s) return;
  int64_t dims[1] = {N_BIG};
  ol_value *x = NULL, *y = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 1, &x));
  float *xd = ol_tensor_data(x);
  for (int i = 0; i < N_BIG; i++) xd[i] = (float)i;
  const char *name = "x";
  CHECK_OK(ol_session_run(s, &name, &x, 1, NULL, &y, 1, NULL));
  bool same = y != NULL;
  for (int i = 0; same && i < N_BIG; i++) same = ((float *)ol_tensor_data(y))[i] == (float)i + 2.0f * big[i];
  CHECK(same);
  ol_value_release(x);
  ol_value_release(y);
  ol_session_destroy(s);
}

static void large_payloads_view_the_wire_buffer(void) {
  size_t size = 0;
  uint8_t *bytes = model_bytes(&size, true);
  ol_model *m = NULL;
  CHECK_OK(ol_model_load(bytes, size, NULL, &m));
  memset(bytes, 0, size); /* the model keeps its own copy */
  free(bytes);
  if (!m) return;
  const ol_proto_owner *owner = m->data->owner;
  CHECK(owner->wire != NULL && owner->weights.count == 3); /* w, u and the encoded payload */
  const Onnx__GraphProto *g = m->data->proto->graph;
  for (int i = 0; i < 2; i++) {
    const ProtobufCBinaryData *raw = &g->initializer[i]->raw_data;
    CHECK(inside(raw->data, owner->wire, size) && (uintptr_t)raw->data % 16 == 0 && raw->len == sizeof big);
    CHECK(memcmp(raw->data, big, sizeof big) == 0);
    const ol_initializer *init = ol_graph_find_initializer(m->data->graph, i ? "u" : "w");
    CHECK(init && ol_tensor_data(init->value) == raw->data); /* the tensor views it too */
  }
  CHECK(!inside(g->initializer[2]->raw_data.data, owner->wire, size)); /* small: copied */
  CHECK(memcmp(g->initializer[2]->raw_data.data, small, sizeof small) == 0);
  const ProtobufCBinaryData *enc = &g->encoded_initializer[0]->raw_data;
  CHECK(inside(enc->data, owner->wire, size) && enc->len == 512 && memcmp(enc->data, big, 512) == 0);
  ol_model_destroy(m);
  /* without the (not decodable) encoded payload the model runs on its views */
  bytes = model_bytes(&size, false);
  CHECK_OK(ol_model_load(bytes, size, NULL, &m));
  free(bytes);
  if (!m) return;
  CHECK(m->data->owner->weights.count == 2);
  run_and_check(m);
  /* serializing writes the payloads back: a reload reads the same model */
  void *again = NULL;
  size_t again_size = 0;
  CHECK_OK(ol_model_serialize(m, &again, &again_size));
  ol_model *m2 = NULL;
  CHECK_OK(ol_model_load(again, again_size, NULL, &m2));
  void *third = NULL;
  size_t third_size = 0;
  if (m2) CHECK_OK(ol_model_serialize(m2, &third, &third_size));
  CHECK(third_size == again_size && third && memcmp(third, again, again_size) == 0);
  ol_free(third);
  ol_free(again);
  ol_model_destroy(m2);
  /* a tensor viewing a weight outlives the model */
  ol_value *w = ol_value_retain(ol_graph_find_initializer(m->data->graph, "w")->value);
  ol_model_destroy(m);
  CHECK(memcmp(ol_tensor_data(w), big, sizeof big) == 0);
  ol_value_release(w);
}

static void unhandled_layouts_fall_back(void) {
  size_t size = 0;
  uint8_t *bytes = model_bytes(&size, false);
  /* a second (empty) graph field: protobuf merges it, so the pass steps aside */
  uint8_t *twice = malloc(size + 2);
  memcpy(twice, bytes, size);
  twice[size] = (7 << 3) | 2;
  twice[size + 1] = 0;
  ol_model *m = NULL;
  CHECK_OK(ol_model_load(twice, size + 2, NULL, &m));
  if (m) {
    CHECK(m->data->owner->wire == NULL && m->data->owner->weights.count == 0);
    run_and_check(m);
    ol_model_destroy(m);
  }
  free(twice);
  /* truncated bytes: a clear error, nothing leaked */
  CHECK_STATUS(ol_model_load(bytes, size - 5, NULL, &m), OL_INVALID_MODEL);
  CHECK(m == NULL && strstr(ol_last_error(), "cannot parse"));
  CHECK_STATUS(ol_model_load_owned(NULL, 0, NULL, &m), OL_INVALID_MODEL);
  free(bytes);
}

/* A payload whose aligned home would start after it gets its own copy: a
 * hand-made wire whose first payload begins at byte 9 of a buffer placed at
 * an address 1 past a 16-byte boundary (its aligned home is byte 15). */
static void misaligned_buffers_still_work(void) {
  const size_t n = sizeof big;             /* 1200: varint 0xb0 0x09 */
  const size_t tensor = 1 + 2 + n;         /* raw_data key, length, payload */
  const size_t graph = 1 + 2 + tensor;     /* initializer key, length, tensor */
  size_t size = 1 + 2 + graph;             /* graph key, length, graph */
  uint8_t *buffer = aligned_alloc(16, 16 + size + 15 - (16 + size + 15) % 16);
  uint8_t *wire = buffer + 1;
  uint8_t head[9] = {(7 << 3) | 2, (uint8_t)(graph | 0x80), (uint8_t)(graph >> 7), (5 << 3) | 2,
                     (uint8_t)(tensor | 0x80), (uint8_t)(tensor >> 7), (9 << 3) | 2, (uint8_t)(n | 0x80),
                     (uint8_t)(n >> 7)};
  memcpy(wire, head, sizeof head);
  memcpy(wire + sizeof head, big, n);
  ol_wire_weights w;
  ol_status s = OL_OK;
  CHECK(ol_wire_weights_split(wire, size, &w, &s) && s == OL_OK && w.count == 1);
  Onnx__ModelProto *proto = onnx__model_proto__unpack(NULL, w.stripped_size, w.stripped);
  CHECK(proto != NULL && proto->graph && proto->graph->n_initializer == 1);
  if (proto && proto->graph && proto->graph->n_initializer == 1 && w.count == 1) {
    CHECK(w.views[0].copy != NULL);
    CHECK_OK(ol_wire_weights_attach(&w, wire, proto));
    const ProtobufCBinaryData *raw = &proto->graph->initializer[0]->raw_data;
    CHECK(raw->data == w.views[0].copy && raw->len == n && memcmp(raw->data, big, n) == 0);
  }
  ol_wire_weights_detach(&w, proto);
  if (proto) onnx__model_proto__free_unpacked(proto, NULL);
  free(buffer);
}

OL_TEST_MAIN(TEST(large_payloads_view_the_wire_buffer), TEST(unhandled_layouts_fall_back),
             TEST(misaligned_buffers_still_work))
