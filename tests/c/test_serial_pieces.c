/* ol_model_serialize_pieces: the pieces concatenate to the bytes of
 * ol_model_serialize; large payloads are views of the model's own weights. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "kernel_util.h"
#include "ir/serial_pieces.h"
#include "onnxlight.h"

#define WEIGHTS 1024 /* 4 KB: viewed at load and by the pieces */

static ol_model *weighted_model(void) {
  static char values[WEIGHTS * 8], text[WEIGHTS * 8 + 1024];
  size_t at = 0;
  for (int i = 0; i < WEIGHTS; i++) at += (size_t)snprintf(values + at, sizeof values - at, "%s%d", i ? "," : "", i);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "acc (float[1,S] x, float[1,P] past) => (float[1,T] present, float[1] t)"
           " <float[%d] w = {%s}, float[4] small = {1, 2, 3, 4}> {\n"
           "  present = Concat<axis = 1>(past, x)\n"
           "  u = Concat<axis = 0>(w, small)\n"
           "  t = ReduceSum<keepdims = 1>(u)\n"
           "}\n",
           WEIGHTS, values);
  return tk_model_on_wire(text); /* weights view the wire bytes */
}

/* The pieces of m equal its serialization; returns how many view `payload`. */
static int check_pieces(const ol_model *m, const void *payload) {
  void *bytes = NULL;
  size_t size = 0;
  ol_serial_pieces *p = NULL;
  CHECK_OK(ol_model_serialize(m, &bytes, &size));
  CHECK_OK(ol_model_serialize_pieces(m, &p));
  int views = 0;
  if (bytes && p) {
    CHECK(ol_serial_pieces_total(p) == size);
    const ol_serial_piece *list = ol_serial_pieces_list(p);
    size_t at = 0;
    for (size_t i = 0; i < ol_serial_pieces_count(p); i++) {
      CHECK(at + list[i].size <= size && memcmp((const char *)bytes + at, list[i].data, list[i].size) == 0);
      views += list[i].data == payload;
      at += list[i].size;
    }
    CHECK(at == size);
    CHECK(ol_serial_pieces_count(p) <= 5); /* copies merge between the views */
  }
  free(bytes);
  ol_serial_pieces_destroy(p);
  return views;
}

static void pieces_concatenate_to_the_serialization(void) {
  ol_model *m = weighted_model();
  if (!m) return;
  const Onnx__TensorProto *w = m->data->proto->graph->initializer[0];
  CHECK(w->raw_data.len == WEIGHTS * sizeof(float));
  CHECK(check_pieces(m, w->raw_data.data) == 1);
  const char *in = "past", *out = "present";
  ol_model *bound = NULL;
  CHECK_OK(ol_model_bind_persistent(m, &in, &out, 1, &bound));
  if (bound) CHECK(check_pieces(bound, w->raw_data.data) == 1); /* the source's weights */
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

static void pieces_outlive_the_model(void) {
  ol_model *m = weighted_model();
  ol_serial_pieces *p = NULL;
  void *bytes = NULL;
  size_t size = 0;
  if (m) CHECK_OK(ol_model_serialize(m, &bytes, &size));
  if (m) CHECK_OK(ol_model_serialize_pieces(m, &p));
  ol_model_destroy(m);
  if (p && bytes) {
    char *joined = malloc(size);
    size_t at = 0;
    for (size_t i = 0; joined && i < ol_serial_pieces_count(p); i++) {
      memcpy(joined + at, ol_serial_pieces_list(p)[i].data, ol_serial_pieces_list(p)[i].size);
      at += ol_serial_pieces_list(p)[i].size;
    }
    CHECK(joined && at == size && memcmp(joined, bytes, size) == 0);
    free(joined);
  }
  free(bytes);
  ol_serial_pieces_destroy(p);
}

static void null_arguments(void) {
  ol_serial_pieces *p = (ol_serial_pieces *)&p;
  CHECK_STATUS(ol_model_serialize_pieces(NULL, &p), OL_INVALID_ARGUMENT);
  CHECK(p == NULL);
  CHECK_STATUS(ol_model_serialize_pieces(NULL, NULL), OL_INVALID_ARGUMENT);
  ol_serial_pieces_destroy(NULL);
}

OL_TEST_MAIN(TEST(pieces_concatenate_to_the_serialization), TEST(pieces_outlive_the_model), TEST(null_arguments))
