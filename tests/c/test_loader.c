/* Model loading: weights viewed in place, errors for bad and truncated bytes,
 * external data, legacy persistent-binding fields. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"

#define FORTUNES "models/fortunes-byte-0.8M.onnx"

static char *slurp(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *size = (size_t)ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(*size);
  if (fread(buf, 1, *size, f) != *size) *size = 0;
  fclose(f);
  return buf;
}

static void initializers_view_the_message(void) {
  ol_model *m;
  CHECK_OK(ol_model_load_file(FORTUNES, &m));
  if (!m) return;
  const ol_graph *g = m->data->graph;
  CHECK(g->num_initializers == 40);
  CHECK(g->num_nodes > 900);
  int viewed = 0;
  for (size_t i = 0; i < g->num_initializers; i++) {
    const Onnx__TensorProto *tp = m->data->proto->graph->initializer[i];
    if (tp->has_raw_data && tp->raw_data.len)
      viewed += ol_tensor_data(g->initializers[i].value) == (void *)tp->raw_data.data;
  }
  size_t raw = 0;
  for (size_t i = 0; i < g->num_initializers; i++)
    raw += m->data->proto->graph->initializer[i]->has_raw_data &&
           m->data->proto->graph->initializer[i]->raw_data.len;
  CHECK(viewed > 0 && (size_t)viewed == raw); /* no second copy of any weight */
  CHECK_OK(ol_model_check(m));
  /* a weight view keeps its bytes alive after the model is gone */
  ol_value *w = ol_value_retain(g->initializers[0].value);
  float first = *(float *)ol_tensor_data(w);
  ol_model_destroy(m);
  CHECK(*(float *)ol_tensor_data(w) == first);
  ol_value_release(w);
}

static void bad_and_truncated_bytes_are_rejected(void) {
  size_t size;
  char *bytes = slurp(FORTUNES, &size);
  CHECK(bytes != NULL);
  if (!bytes) return;
  ol_model *m = (ol_model *)1;
  CHECK_STATUS(ol_model_load(bytes, size / 2, NULL, &m), OL_INVALID_MODEL);
  CHECK(m == NULL);
  CHECK(strstr(ol_last_error(), "truncated") != NULL);
  char junk[64];
  memset(junk, 0xFF, sizeof junk);
  CHECK_STATUS(ol_model_load(junk, sizeof junk, NULL, &m), OL_INVALID_MODEL);
  CHECK_STATUS(ol_model_load(bytes, 0, NULL, &m), OL_INVALID_MODEL);
  CHECK_STATUS(ol_model_load_file("does/not/exist.onnx", &m), OL_NOT_FOUND);
  /* a model without a graph */
  CHECK_STATUS(ol_model_load("\x08\x07", 2, NULL, &m), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "no graph") != NULL);
  free(bytes);
}

/* A one-initializer model built with protobuf-c, data stored externally. */
static Onnx__ModelProto *external_model(const char *location, const char *length) {
  static Onnx__StringStringEntryProto loc, len;
  static Onnx__StringStringEntryProto *entries[2];
  static Onnx__TensorProto w;
  static Onnx__TensorProto *inits[1];
  static Onnx__ValueInfoProto out;
  static Onnx__ValueInfoProto *outs[1];
  static Onnx__GraphProto g;
  static Onnx__OperatorSetIdProto op;
  static Onnx__OperatorSetIdProto *ops[1];
  static Onnx__ModelProto m;
  static int64_t dims[1] = {3};
  onnx__string_string_entry_proto__init(&loc);
  loc.key = "location";
  loc.value = (char *)location;
  onnx__string_string_entry_proto__init(&len);
  len.key = "length";
  len.value = (char *)length;
  entries[0] = &loc;
  entries[1] = &len;
  onnx__tensor_proto__init(&w);
  w.name = "w";
  w.has_data_type = 1;
  w.data_type = OL_DTYPE_FLOAT;
  w.n_dims = 1;
  w.dims = dims;
  w.has_data_location = 1;
  w.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  w.n_external_data = 2;
  w.external_data = entries;
  inits[0] = &w;
  onnx__value_info_proto__init(&out);
  out.name = "w";
  outs[0] = &out;
  onnx__graph_proto__init(&g);
  g.name = "g";
  g.n_initializer = 1;
  g.initializer = inits;
  g.n_output = 1;
  g.output = outs;
  onnx__operator_set_id_proto__init(&op);
  op.domain = "";
  op.has_version = 1;
  op.version = 18;
  ops[0] = &op;
  onnx__model_proto__init(&m);
  m.has_ir_version = 1;
  m.ir_version = 8;
  m.graph = &g;
  m.n_opset_import = 1;
  m.opset_import = ops;
  return &m;
}

static void external_data_from_caller_buffers(void) {
  Onnx__ModelProto *proto = external_model("weights.bin", "12");
  size_t n = onnx__model_proto__get_packed_size(proto);
  uint8_t *bytes = malloc(n);
  onnx__model_proto__pack(proto, bytes);
  float weights[4] = {9, 1, 2, 3}; /* offset 0 */
  const char *names[1] = {"weights.bin"};
  const void *datas[1] = {weights};
  size_t sizes[1] = {sizeof weights};
  ol_model_load_options options = {NULL, 1, names, datas, sizes};
  ol_model *m = NULL;
  CHECK_OK(ol_model_load(bytes, n, &options, &m));
  if (m) {
    const float *w = ol_tensor_data(m->data->graph->initializers[0].value);
    CHECK(w[0] == 9 && w[2] == 2);
    ol_session *s;
    CHECK_OK(ol_session_create(m, NULL, &s));
    ol_value *out[1];
    CHECK_OK(ol_session_run(s, NULL, NULL, 0, NULL, out, 1, NULL));
    CHECK(((float *)ol_tensor_data(out[0]))[1] == 1);
    ol_value_release(out[0]);
    ol_session_destroy(s);
    /* models derived from it share what it read (the caller's buffer may
     * be gone by then): bound, inferred, converted with cache initializers */
    weights[0] = -1;
    ol_model *derived[3] = {NULL, NULL, NULL};
    CHECK_OK(ol_model_bind_persistent(m, NULL, NULL, 0, &derived[0]));
    CHECK_OK(ol_model_infer_shapes(m, &derived[1]));
    CHECK_OK(ol_model_with_paged_cache_initializers(m, NULL, NULL, 0, &derived[2]));
    for (int k = 0; k < 3; k++) {
      if (!derived[k]) continue;
      const float *dw = ol_tensor_data(derived[k]->data->graph->initializers[0].value);
      CHECK(dw == w && dw[0] == 9);
      ol_model_destroy(derived[k]);
    }
  }
  ol_model_destroy(m);
  CHECK_STATUS(ol_model_load(bytes, n, NULL, &m), OL_NOT_FOUND);
  CHECK(strstr(ol_last_error(), "weights.bin") != NULL);
  free(bytes);

  proto = external_model("../../etc/passwd", "12");
  n = onnx__model_proto__get_packed_size(proto);
  bytes = malloc(n);
  onnx__model_proto__pack(proto, bytes);
  CHECK_STATUS(ol_model_load(bytes, n, &options, &m), OL_INVALID_MODEL);
  free(bytes);
}

static void legacy_binding_field_paths_are_rejected(void) {
  Onnx__ModelProto *proto = external_model("weights.bin", "12");
  size_t n = onnx__model_proto__get_packed_size(proto);
  /* append GraphProto field 1001 holding a binding with field 3 (legacy path) */
  const uint8_t binding[] = {0x0a, 0x01, 'w', 0x12, 0x01, 'w', 0x1a, 0x01, 'x'};
  uint8_t extra[32];
  size_t e = 0;
  extra[e++] = 0xca; /* field 1001, wire type 2: (1001 << 3) | 2 = 8010 = 0xca 0x3e */
  extra[e++] = 0x3e;
  extra[e++] = sizeof binding;
  memcpy(extra + e, binding, sizeof binding);
  e += sizeof binding;
  Onnx__GraphProto *g = proto->graph;
  size_t gn = onnx__graph_proto__get_packed_size(g);
  uint8_t *gbytes = malloc(gn + e);
  onnx__graph_proto__pack(g, gbytes);
  memcpy(gbytes + gn, extra, e);
  /* model = ir_version + opset + graph(field 7) */
  uint8_t *bytes = malloc(n + e + 16);
  size_t k = 0;
  bytes[k++] = 0x08;
  bytes[k++] = 8;
  bytes[k++] = 0x42; /* opset_import field 8 */
  bytes[k++] = 2;
  bytes[k++] = 0x10;
  bytes[k++] = 18;
  bytes[k++] = 0x3a; /* graph field 7 */
  bytes[k++] = (uint8_t)(gn + e);
  memcpy(bytes + k, gbytes, gn + e);
  k += gn + e;
  ol_model *m = NULL;
  float weights[3] = {0};
  const char *names[1] = {"weights.bin"};
  const void *datas[1] = {weights};
  size_t sizes[1] = {sizeof weights};
  ol_model_load_options options = {NULL, 1, names, datas, sizes};
  CHECK_STATUS(ol_model_load(bytes, k, &options, &m), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "field-path") != NULL);
  free(gbytes);
  free(bytes);
}

OL_TEST_MAIN(TEST(initializers_view_the_message), TEST(bad_and_truncated_bytes_are_rejected),
             TEST(external_data_from_caller_buffers), TEST(legacy_binding_field_paths_are_rejected))
