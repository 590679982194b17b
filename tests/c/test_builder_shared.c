/* The shared graph builder (model/builder_internal.h) that
 * ol_model_bind_persistent edits through: removing, renaming and adding
 * never reach the source's messages, and dropping the builder frees only
 * what it owns (the source stays loadable and unchanged). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "kernel_util.h"
#include "model/builder_internal.h"
#include "onnxlight.h"

static const char *TEXT = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                          "g (float[2] past, float[2] x) => (float[4] present, float[2] y)"
                          " <float[2] w = {1, 2}> {\n"
                          "  present = Concat<axis = 0>(past, x)\n"
                          "  y = Add(past, w)\n"
                          "}\n";

static int serialized_equal(const ol_model *m, const void *bytes, size_t size) {
  void *now = NULL;
  size_t n = 0;
  CHECK_OK(ol_model_serialize(m, &now, &n));
  int same = now && n == size && memcmp(now, bytes, size) == 0;
  free(now);
  return same;
}

/* removing, adding and renaming on a shared builder, then dropping it: the source is unchanged */
static void edits_stay_off_the_source(void) {
  ol_model *m = tk_model_on_wire(TEXT);
  if (!m) return;
  void *before = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &before, &size));
  ol_builder *b = NULL;
  CHECK_OK(ol_builder_share(m->data->proto, &b));
  if (b) {
    CHECK_OK(ol_builder_remove(b, OL_BUILDER_NODE, "y"));
    CHECK_OK(ol_builder_rename_uses(b, "past", "x"));
    CHECK(strcmp(((Onnx__NodeProto *)ol_builder_part_item(b->model, OL_BUILDER_NODE, 0))->input[0], "x") == 0);
    CHECK_STATUS(ol_builder_dedup_initializers(b, NULL), OL_FAILED_PRECONDITION);
    CHECK_OK(ol_builder_append_binding(b, "past", "present"));
    CHECK(ol_builder_count(b, OL_BUILDER_NODE) == 1 && ol_builder_count(b, OL_BUILDER_PERSISTENT_BINDING) == 1);
    ol_builder_destroy(b);
  }
  CHECK(serialized_equal(m, before, size));
  CHECK(m->data->proto->graph->n_node == 2 && strcmp(m->data->proto->graph->node[0]->input[0], "past") == 0);
  free(before);
  ol_model_destroy(m);
}

/* TEXT with node 1's output y renamed (graph output too) to name. */
static ol_model *renamed_y(const char *name) {
  ol_model *m = tk_model_on_wire(TEXT), *out = NULL;
  void *bytes = NULL;
  size_t size = 0;
  if (m) CHECK_OK(ol_model_serialize(m, &bytes, &size));
  ol_model_destroy(m);
  Onnx__ModelProto *p = bytes ? onnx__model_proto__unpack(NULL, size, bytes) : NULL;
  free(bytes);
  if (!p) return NULL;
  free(p->graph->node[1]->output[0]);
  free(p->graph->output[1]->name);
  p->graph->node[1]->output[0] = strdup(name);
  p->graph->output[1]->name = strdup(name);
  size = onnx__model_proto__get_packed_size(p);
  bytes = malloc(size);
  onnx__model_proto__pack(p, bytes);
  onnx__model_proto__free_unpacked(p, NULL);
  CHECK_OK(ol_model_load(bytes, size, NULL, &out));
  free(bytes);
  return out;
}

/* past is read twice, so binding it forwards it through past/persistent_read:
 * a value of that name already exists, an error naming both (no duplicate) */
static void forwarding_name_clash_is_an_error(void) {
  ol_model *m = renamed_y("past/persistent_read");
  if (!m) return;
  void *before = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &before, &size));
  const char *in = "past", *out = "present";
  ol_model *bound = NULL;
  CHECK_STATUS(ol_model_bind_persistent(m, &in, &out, 1, &bound), OL_INVALID_ARGUMENT);
  CHECK(bound == NULL);
  CHECK(strstr(ol_last_error(), "past/persistent_read") != NULL);
  CHECK(serialized_equal(m, before, size));
  free(before);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(edits_stay_off_the_source), TEST(forwarding_name_clash_is_an_error))
