/* ol_model_bind_persistent: the bound model shares the source's weights and
 * unchanged sub-messages, leaves the source unchanged, serializes to a model
 * that loads like any other, and either model may be destroyed first. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "kernel_util.h"
#include "onnxlight.h"

#define WEIGHTS 128

/* past is read by Concat and by both If branches: binding it forwards it
 * through one Identity, renaming the uses inside the subgraphs too. */
static ol_model *source_model(void) {
  char values[WEIGHTS * 8], text[8192];
  size_t at = 0;
  for (int i = 0; i < WEIGHTS; i++) at += (size_t)snprintf(values + at, sizeof values - at, "%s%d.5", i ? ", " : "", i);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "acc (float[1,S] x, float[1,P] past, bool c) => (float[1,T] present, float[1,P] y, float[1] t)"
           " <float[%d] w = {%s}> {\n"
           "  present = Concat<axis = 1>(past, x)\n"
           "  y = If (c) <then_branch = a () => (float[1,P] ya) { ya = Neg(past) },\n"
           "              else_branch = b () => (float[1,P] yb) { yb = Abs(past) }>\n"
           "  t = ReduceSum<keepdims = 1>(w)\n"
           "}\n",
           WEIGHTS, values);
  return tk_model_on_wire(text); /* weights view the wire bytes */
}

static ol_model *bind_past(const ol_model *m) {
  const char *in = "past", *out = "present";
  ol_model *bound = NULL;
  CHECK_OK(ol_model_bind_persistent(m, &in, &out, 1, &bound));
  return bound;
}

static int same_serialization(const ol_model *a, const void *bytes, size_t size) {
  void *other = NULL;
  size_t n = 0;
  CHECK_OK(ol_model_serialize(a, &other, &n));
  int same = other && n == size && memcmp(other, bytes, size) == 0;
  free(other);
  return same;
}

static ol_value *floats(const float *v, int64_t n) {
  int64_t dims[2] = {1, n};
  ol_value *t = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 2, &t));
  if (t && n) memcpy(ol_tensor_data(t), v, (size_t)n * sizeof *v);
  return t;
}

static ol_value *flag(int on) {
  ol_value *t = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_BOOL, NULL, 0, &t));
  if (t) *(unsigned char *)ol_tensor_data(t) = (unsigned char)on;
  return t;
}

/* Two steps through a state of the bound model: step 2 reads step 1's present. */
static void run_bound(ol_model *bound) {
  const char *names[1] = {"past"};
  ol_value *initial[1] = {floats(NULL, 0)};
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(bound, names, initial, 1, NULL, &st));
  ol_value_release(initial[0]);
  if (!st) return;
  const float x1[2] = {1, 2}, x2[1] = {3};
  const char *feed_names[2] = {"x", "c"}, *out_names[2] = {"y", "t"};
  for (int step = 0; step < 2; step++) {
    ol_value *feeds[2] = {step ? floats(x2, 1) : floats(x1, 2), flag(1)};
    ol_value *out[2] = {0};
    CHECK_OK(ol_state_run(st, NULL, feed_names, feeds, 2, out_names, out, 2, NULL));
    if (out[0] && out[1]) {
      const float *y = ol_tensor_data(out[0]), *t = ol_tensor_data(out[1]);
      CHECK(ol_tensor_dims(out[0])[1] == (step ? 2 : 0));
      if (step) CHECK(y[0] == -1.0f && y[1] == -2.0f);
      CHECK(t[0] == (float)(WEIGHTS * WEIGHTS / 2)); /* sum of i + 0.5 */
    }
    for (int i = 0; i < 2; i++) ol_value_release(feeds[i]), ol_value_release(out[i]);
  }
  ol_state_destroy(st);
}

/* One stateless run of the source model. */
static void run_source(ol_model *m) {
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  if (!s) return;
  const float x[1] = {3}, past[2] = {1, 2};
  const char *feed_names[3] = {"x", "past", "c"}, *out_names[2] = {"present", "y"};
  ol_value *feeds[3] = {floats(x, 1), floats(past, 2), flag(0)};
  ol_value *out[2] = {0};
  CHECK_OK(ol_session_run(s, feed_names, feeds, 3, out_names, out, 2, NULL));
  if (out[0] && out[1]) {
    const float *p = ol_tensor_data(out[0]), *y = ol_tensor_data(out[1]);
    CHECK(ol_tensor_dims(out[0])[1] == 3 && p[0] == 1 && p[1] == 2 && p[2] == 3);
    CHECK(y[0] == 1 && y[1] == 2);
  }
  for (int i = 0; i < 3; i++) ol_value_release(feeds[i]);
  for (int i = 0; i < 2; i++) ol_value_release(out[i]);
  ol_session_destroy(s);
}

static void weights_are_the_sources_bytes(void) {
  ol_model *m = source_model();
  ol_model *bound = m ? bind_past(m) : NULL;
  if (!bound) goto out;
  const Onnx__GraphProto *sg = m->data->proto->graph, *bg = bound->data->proto->graph;
  CHECK(sg->n_initializer == 1 && bg->n_initializer == 1);
  CHECK(bg->initializer[0] == sg->initializer[0]);
  CHECK(sg->initializer[0]->raw_data.len == WEIGHTS * sizeof(float));
  /* the payload views the source's wire buffer, and so do the decoded weights */
  const uint8_t *wire = m->data->owner->wire, *raw = sg->initializer[0]->raw_data.data;
  CHECK(wire && raw >= wire && raw < wire + 4096);
  const ol_initializer *si = ol_graph_find_initializer(m->data->graph, "w");
  const ol_initializer *bi = ol_graph_find_initializer(bound->data->graph, "w");
  CHECK(si && bi && ol_tensor_data(si->value) == raw && ol_tensor_data(bi->value) == raw);
  CHECK(bound->data->owner->base == m->data->owner);
out:
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

static void source_is_unchanged(void) {
  ol_model *m = source_model();
  void *before = NULL;
  size_t size = 0;
  if (m) CHECK_OK(ol_model_serialize(m, &before, &size));
  ol_model *bound = m ? bind_past(m) : NULL;
  if (!bound || !before) goto out;
  CHECK(same_serialization(m, before, size));
  const Onnx__GraphProto *sg = m->data->proto->graph, *bg = bound->data->proto->graph;
  CHECK(sg->n_node == 3 && sg->n_persistent_bindings == 0);
  CHECK(bg->n_node == 4 && bg->n_persistent_bindings == 1);
  CHECK(strcmp(bg->node[0]->op_type, "Identity") == 0 && strcmp(bg->node[0]->input[0], "past") == 0);
  CHECK(strcmp(sg->node[0]->input[0], "past") == 0 && strcmp(bg->node[1]->input[0], "past/persistent_read") == 0);
  /* the If node is renamed inside its branches: copied, not changed in place */
  const Onnx__NodeProto *sif = sg->node[1], *bif = bg->node[2];
  CHECK(sif != bif && bg->node[3] == sg->node[2]);
  for (size_t a = 0; a < 2; a++) {
    CHECK(strcmp(sif->attribute[a]->g->node[0]->input[0], "past") == 0);
    CHECK(strcmp(bif->attribute[a]->g->node[0]->input[0], "past/persistent_read") == 0);
  }
  run_source(m);
out:
  free(before);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

static void serialized_bound_model_loads(void) {
  ol_model *m = source_model();
  ol_model *bound = m ? bind_past(m) : NULL, *loaded = NULL;
  void *bytes = NULL;
  size_t size = 0;
  if (bound) CHECK_OK(ol_model_serialize(bound, &bytes, &size));
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &loaded));
  if (!loaded) goto out;
  CHECK(same_serialization(loaded, bytes, size));
  const Onnx__GraphProto *g = loaded->data->proto->graph;
  CHECK(g->n_node == 4 && g->n_persistent_bindings == 1);
  CHECK(strcmp(g->persistent_bindings[0]->input_name, "past") == 0);
  CHECK(strcmp(g->persistent_bindings[0]->output_name, "present") == 0);
  run_bound(loaded);
  /* binding a bound model adds to its bindings (here: a rebinding the checker rejects) */
  ol_model *twice = bind_past(loaded);
  CHECK(twice && twice->data->proto->graph->n_persistent_bindings == 2);
  ol_session *s = NULL;
  if (twice) CHECK(ol_session_create(twice, NULL, &s) != OL_OK);
  ol_session_destroy(s);
  ol_model_destroy(twice);
out:
  free(bytes);
  ol_model_destroy(loaded);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

static void source_destroyed_first(void) {
  ol_model *m = source_model();
  ol_model *bound = m ? bind_past(m) : NULL;
  ol_model_destroy(m);
  if (bound) run_bound(bound);
  ol_model_destroy(bound);
}

static void bound_destroyed_first(void) {
  ol_model *m = source_model();
  ol_model *bound = m ? bind_past(m) : NULL;
  if (bound) run_bound(bound);
  ol_model_destroy(bound);
  if (m) run_source(m);
  ol_model_destroy(m);
}

static void null_names_are_rejected(void) {
  ol_model *m = source_model();
  const char *in[2] = {"past", NULL}, *out[2] = {"present", "y"};
  ol_model *bound = NULL;
  if (m) CHECK_STATUS(ol_model_bind_persistent(m, in, out, 2, &bound), OL_INVALID_ARGUMENT);
  CHECK(bound == NULL);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(weights_are_the_sources_bytes), TEST(source_is_unchanged), TEST(serialized_bound_model_loads),
             TEST(source_destroyed_first), TEST(bound_destroyed_first), TEST(null_names_are_rejected))
