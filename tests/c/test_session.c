/* Sessions: planning errors, feed validation, release schedule, cancellation,
 * control flow, fault injection. Models are written in the ONNX text syntax. */
#include <pthread.h>
#include <string.h>
#include <unistd.h>

#include "core/value.h"
#include "harness.h"
#include "onnxlight.h"
#include "runtime/session.h"

static ol_session *make_session(const char *text, ol_model **model_out) {
  ol_model *m = NULL;
  ol_session *s = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (m) CHECK_OK(ol_session_create(m, NULL, &s));
  if (model_out) *model_out = m;
  else ol_model_destroy(m); /* the session keeps what it needs */
  return s;
}

static ol_value *vec(float a, float b) {
  int64_t dims[1] = {2};
  ol_value *v;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 1, &v);
  ((float *)ol_tensor_data(v))[0] = a;
  ((float *)ol_tensor_data(v))[1] = b;
  return v;
}

static const char *ACCUMULATE =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "accumulate (float[2] delta, float[2] past) => (float[2] present) {\n"
    "  present = Add(delta, past)\n"
    "}\n";

static void runs_the_seed_example(void) {
  ol_session *s = make_session(ACCUMULATE, NULL);
  if (!s) return;
  CHECK(ol_session_input_count(s) == 2 && ol_session_output_count(s) == 1);
  CHECK(strcmp(ol_session_input_name(s, 1), "past") == 0);
  ol_value_info info;
  CHECK_OK(ol_session_input_info(s, 0, &info));
  CHECK(info.dtype == OL_DTYPE_FLOAT && info.rank == 1 && info.dims[0] == 2);
  ol_value *feeds[2] = {vec(1, 2), vec(10, 20)};
  const char *names[2] = {"delta", "past"};
  ol_value *out[1];
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL));
  CHECK(((float *)ol_tensor_data(out[0]))[1] == 22.0f);
  ol_value_release(out[0]);
  ol_value_release(feeds[0]);
  ol_value_release(feeds[1]);
  ol_session_destroy(s);
}

static void feed_errors_leave_the_session_usable(void) {
  ol_session *s = make_session(ACCUMULATE, NULL);
  if (!s) return;
  ol_value *good[2] = {vec(1, 2), vec(3, 4)};
  int64_t dims3[1] = {3};
  ol_value *wrong_shape, *wrong_type;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims3, 1, &wrong_shape);
  int64_t dims2[1] = {2};
  ol_tensor_create(NULL, OL_DTYPE_INT64, dims2, 1, &wrong_type);
  const char *names[2] = {"delta", "past"};
  const char *unknown[2] = {"delta", "pasta"};
  const char *twice[2] = {"delta", "delta"};
  ol_value *out[1];
  ol_value *feeds[2];

  CHECK_STATUS(ol_session_run(s, names, good, 1, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "missing input 'past'") != NULL);
  CHECK_STATUS(ol_session_run(s, unknown, good, 2, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "unknown input name 'pasta'") != NULL);
  CHECK_STATUS(ol_session_run(s, twice, good, 2, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
  feeds[0] = good[0];
  feeds[1] = wrong_shape;
  CHECK_STATUS(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "input 'past': dimension 0 must be 2") != NULL);
  feeds[1] = wrong_type;
  CHECK_STATUS(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "expected element type float32") != NULL);
  const char *bad_out[1] = {"nope"};
  CHECK_STATUS(ol_session_run(s, names, good, 2, bad_out, out, 1, NULL), OL_INVALID_ARGUMENT);
  CHECK(out[0] == NULL);
  /* still works */
  CHECK_OK(ol_session_run(s, names, good, 2, NULL, out, 1, NULL));
  if (out[0]) CHECK(((float *)ol_tensor_data(out[0]))[0] == 4.0f);
  ol_value_release(out[0]);
  ol_value_release(good[0]);
  ol_value_release(good[1]);
  ol_value_release(wrong_shape);
  ol_value_release(wrong_type);
  ol_session_destroy(s);
}

static void unsupported_operator_fails_at_creation(void) {
  ol_model *m = NULL;
  ol_session *s = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2] x) => (float[2] y) { y = NoSuchOp <alpha = 1.0> (x) }",
                               &m));
  if (!m) return;
  /* the node has no name: the message still names op, domain and version */
  CHECK_STATUS(ol_session_create(m, NULL, &s), OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "ai.onnx::NoSuchOp version 18") != NULL);
  CHECK(s == NULL);
  ol_model_destroy(m);
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18, \"com.example\" : 3]>\n"
                               "g (float[2] x) => (float[2] y) { y = com.example.Fancy (x) }",
                               &m));
  if (!m) return;
  CHECK_STATUS(ol_session_create(m, NULL, &s), OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "com.example::Fancy version 3") != NULL);
  ol_model_destroy(m);
}

static void malformed_graphs_are_rejected(void) {
  ol_model *m = NULL;
  ol_session *s = NULL;
  /* undefined input */
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2] x) => (float[2] y) { y = Add(x, ghost) }", &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &s), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'ghost' is not defined") != NULL);
    ol_model_destroy(m);
  }
  /* two producers of one name */
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2] x) => (float[2] y) { y = Neg(x)\n y = Abs(x) }", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'y' is defined more than once") != NULL);
    ol_model_destroy(m);
  }
  /* a cycle */
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2] x) => (float[2] y) { a = Add(x, b)\n b = Neg(a)\n y = Abs(b) }", &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &s), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "cycle") != NULL);
    ol_model_destroy(m);
  }
  /* output never produced */
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2] x) => (float[2] y, float[2] z) { y = Neg(x) }", &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &s), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "output 'z'") != NULL);
    ol_model_destroy(m);
  }
  /* domain not imported */
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2] x) => (float[2] y) { y = com.other.Neg(x) }", &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &s), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "domain 'com.other'") != NULL);
    ol_model_destroy(m);
  }
}

/* A chain of 16 Neg nodes on a 1 MiB tensor: with intermediates released
 * after their last use, the peak stays at about two tensors. */
static void intermediates_are_released_after_last_use(void) {
  char text[4096];
  int w = snprintf(text, sizeof text, "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                                      "g (float[262144] x) => (float[262144] y) {\n t0 = Neg(x)\n");
  for (int i = 1; i < 16; i++) w += snprintf(text + w, sizeof text - (size_t)w, " t%d = Neg(t%d)\n", i, i - 1);
  snprintf(text + w, sizeof text - (size_t)w, " y = Neg(t15)\n}\n");
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return;
  ol_allocator *a;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_session_options options = {.allocator = a};
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, &options, &s));
  int64_t dims[1] = {262144};
  ol_value *x, *y = NULL;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 1, &x);
  const char *names[1] = {"x"};
  CHECK_OK(ol_session_run(s, names, &x, 1, NULL, &y, 1, NULL));
  ol_allocator_stats st;
  ol_allocator_get_stats(a, &st);
  CHECK(st.peak_bytes <= 2u * 262144 * 4);
  CHECK(st.live_bytes == 262144 * 4); /* only y is alive */
  ol_value_release(y);
  /* fault injection: the 5th allocation fails; nothing leaks, the session still works */
  ol_allocator_fail_after(a, 5);
  CHECK_STATUS(ol_session_run(s, names, &x, 1, NULL, &y, 1, NULL), OL_OUT_OF_MEMORY);
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_bytes == 0);
  ol_allocator_fail_after(a, -1);
  CHECK_OK(ol_session_run(s, names, &x, 1, NULL, &y, 1, NULL));
  ol_value_release(y);
  ol_value_release(x);
  ol_session_destroy(s);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
}

static void cancelled_before_running(void) {
  ol_session *s = make_session(ACCUMULATE, NULL);
  if (!s) return;
  ol_completion *c;
  CHECK_OK(ol_completion_create(&c));
  CHECK_OK(ol_completion_cancel(c, "user pressed stop"));
  ol_value *feeds[2] = {vec(1, 2), vec(3, 4)};
  const char *names[2] = {"delta", "past"};
  ol_value *out[1];
  CHECK_STATUS(ol_session_run(s, names, feeds, 2, NULL, out, 1, c), OL_CANCELLED);
  CHECK(strstr(ol_last_error(), "user pressed stop") != NULL);
  ol_completion_destroy(c);
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL));
  ol_value_release(out[0]);
  ol_value_release(feeds[0]);
  ol_value_release(feeds[1]);
  ol_session_destroy(s);
}

/* A Loop that would run for a very long time, cancelled from another thread. */
static void *cancel_later(void *arg) {
  usleep(20000);
  ol_completion_cancel(arg, "timeout");
  return NULL;
}

static void cancelled_from_another_thread(void) {
  ol_session *s = make_session(
      "<ir_version: 10, opset_import: [\"\" : 18]>\n"
      "g (int64[] n, float[1] x) => (float[1] y) {\n"
      "  y = Loop (n, , x) <body = body (int64 i, bool c, float[1] v) => (bool c2, float[1] w) {\n"
      "    c2 = Identity(c)\n"
      "    w = Neg(v)\n"
      "  }>\n"
      "}\n",
      NULL);
  if (!s) return;
  int64_t scalar[1];
  ol_value *n, *x;
  ol_tensor_create(NULL, OL_DTYPE_INT64, scalar, 0, &n);
  *(int64_t *)ol_tensor_data(n) = 1LL << 40;
  int64_t one[1] = {1};
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, one, 1, &x);
  ol_completion *c;
  ol_completion_create(&c);
  pthread_t th;
  pthread_create(&th, NULL, cancel_later, c);
  const char *names[2] = {"n", "x"};
  ol_value *feeds[2] = {n, x};
  ol_value *out[1];
  CHECK_STATUS(ol_session_run(s, names, feeds, 2, NULL, out, 1, c), OL_CANCELLED);
  pthread_join(th, NULL);
  /* a short loop afterwards works: 3 negations */
  *(int64_t *)ol_tensor_data(n) = 3;
  ((float *)ol_tensor_data(x))[0] = 2.0f;
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL));
  if (out[0]) CHECK(((float *)ol_tensor_data(out[0]))[0] == -2.0f);
  ol_value_release(out[0]);
  ol_completion_destroy(c);
  ol_value_release(n);
  ol_value_release(x);
  ol_session_destroy(s);
}

static void if_reads_outer_scope(void) {
  ol_session *s = make_session(
      "<ir_version: 10, opset_import: [\"\" : 18]>\n"
      "g (bool c, float[2] x) => (float[2] y) {\n"
      "  n = Neg(x)\n"
      "  y = If (c) <then_branch = t () => (float[2] a) { a = Identity(n) },\n"
      "              else_branch = e () => (float[2] b) { b = Abs(n) }>\n"
      "}\n",
      NULL);
  if (!s) return;
  int64_t none[1];
  ol_value *c;
  ol_tensor_create(NULL, OL_DTYPE_BOOL, none, 0, &c);
  ol_value *x = vec(-1, 2);
  const char *names[2] = {"c", "x"};
  ol_value *feeds[2] = {c, x};
  ol_value *out[1];
  *(uint8_t *)ol_tensor_data(c) = 1;
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL));
  if (out[0]) CHECK(((float *)ol_tensor_data(out[0]))[0] == 1.0f && ((float *)ol_tensor_data(out[0]))[1] == -2.0f);
  ol_value_release(out[0]);
  *(uint8_t *)ol_tensor_data(c) = 0;
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL));
  if (out[0]) CHECK(((float *)ol_tensor_data(out[0]))[1] == 2.0f);
  ol_value_release(out[0]);
  ol_value_release(c);
  ol_value_release(x);
  ol_session_destroy(s);
}

static void scan_accumulates(void) {
  ol_session *s = make_session(
      "<ir_version: 10, opset_import: [\"\" : 18]>\n"
      "g (float[2] init, float[3,2] xs) => (float[2] total, float[3,2] partial) {\n"
      "  total, partial = Scan (init, xs) <num_scan_inputs = 1, body = b (float[2] acc, float[2] x) => (float[2] next, float[2] out) {\n"
      "    next = Add(acc, x)\n"
      "    out = Identity(next)\n"
      "  }>\n"
      "}\n",
      NULL);
  if (!s) return;
  int64_t dims[2] = {3, 2};
  ol_value *xs;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 2, &xs);
  for (int i = 0; i < 6; i++) ((float *)ol_tensor_data(xs))[i] = (float)(i + 1);
  ol_value *init = vec(0, 0);
  const char *names[2] = {"init", "xs"};
  ol_value *feeds[2] = {init, xs};
  ol_value *out[2];
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 2, NULL));
  if (out[0] && out[1]) {
    const float *t = ol_tensor_data(out[0]), *p = ol_tensor_data(out[1]);
    CHECK(t[0] == 9 && t[1] == 12);
    CHECK(p[0] == 1 && p[2] == 4 && p[5] == 12);
  }
  ol_value_release(out[0]);
  ol_value_release(out[1]);
  ol_value_release(init);
  ol_value_release(xs);
  ol_session_destroy(s);
}

static void model_local_functions_run_per_call_site(void) {
  ol_session *s = make_session(
      "<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1]>\n"
      "g (float[2] x) => (float[2] y, float[2] z) {\n"
      "  y = local.Scale <alpha = 3.0> (x)\n"
      "  z = local.Scale (x)\n"
      "}\n"
      "<domain: \"local\", opset_import: [\"\" : 18]>\n"
      "Scale <alpha: float = 2.0> (a) => (b) {\n"
      "  s = Constant <value_float: float = @alpha> ()\n"
      "  b = Mul(a, s)\n"
      "}\n",
      NULL);
  if (!s) return;
  ol_value *x = vec(1, -2);
  const char *names[1] = {"x"};
  ol_value *out[2] = {0};
  CHECK_OK(ol_session_run(s, names, &x, 1, NULL, out, 2, NULL));
  if (out[0] && out[1]) {
    CHECK(((float *)ol_tensor_data(out[0]))[1] == -6.0f); /* the call site's alpha */
    CHECK(((float *)ol_tensor_data(out[1]))[0] == 2.0f);  /* the function's default */
  }
  ol_value_release(out[0]);
  ol_value_release(out[1]);
  ol_value_release(x);
  ol_session_destroy(s);
  /* a function that calls itself is refused, not a stack overflow */
  ol_model *m = NULL;
  CHECK_STATUS(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1]>\n"
                                   "g (float[2] x) => (float[2] y) { y = local.Loop1 (x) }\n"
                                   "<domain: \"local\", opset_import: [\"\" : 18, \"local\" : 1]>\n"
                                   "Loop1 (a) => (b) { b = local.Loop1 (a) }\n",
                                   &m),
               OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), "nest deeper") != NULL);
  CHECK(m == NULL);
}

/* Sessions that let caches grow (ol_session_grow_outputs, the JS package):
 * present = Concat(past, x) leaves with spare rows; fed back, the next run
 * appends into them (same buffer, prefix untouched); a second run from the
 * same past copies, so both branches keep their own rows. */
static float cache_at(const ol_value *v, int64_t h, int64_t r) {
  const ol_tensor *t = &v->tensor;
  int64_t pitch = t->pitch > 0 ? t->pitch : t->dims[1];
  return ((const float *)ol_tdata(t))[(h * pitch + r) * 2];
}

static void caches_grow_in_place_and_branch(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2, L, 2] past, float[2, 1, 2] x) => (float[2, N, 2] present) {\n"
                               "  present = Concat <axis = 1> (past, x)\n}",
                               &m));
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  ol_model_destroy(m);
  if (!s) return;
  ol_session_grow_outputs(s, true);
  const char *names[2] = {"past", "x"};
  int64_t d0[3] = {2, 0, 2}, dx[3] = {2, 1, 2};
  ol_value *past = NULL, *x = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, d0, 3, &past));
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dx, 3, &x));
  if (!past || !x) return;
  float *xd = ol_tensor_data(x);
  const ol_buffer *storage = NULL;
  for (int step = 0; step < 5; step++) {
    for (int i = 0; i < 4; i++) xd[i] = (float)(10 * step + i);
    ol_value *in[2] = {past, x}, *present = NULL;
    CHECK_OK(ol_session_run(s, names, in, 2, NULL, &present, 1, NULL));
    if (!present) break;
    const ol_tensor *t = &present->tensor;
    CHECK(t->dims[1] == step + 1 && t->pitch > t->dims[1] && t->buffer->append_end == step + 1);
    if (step == 0) storage = t->buffer;
    CHECK(t->buffer == storage); /* appended in place after the first run */
    for (int r = 0; r <= step; r++) CHECK(cache_at(present, 1, r) == (float)(10 * r + 2));
    ol_value_release(past);
    past = present;
  }
  /* branch: two runs from the same past of 5 rows */
  ol_value *in[2] = {past, x}, *a = NULL, *b = NULL;
  xd[0] = 100;
  CHECK_OK(ol_session_run(s, names, in, 2, NULL, &a, 1, NULL));
  xd[0] = 200;
  CHECK_OK(ol_session_run(s, names, in, 2, NULL, &b, 1, NULL));
  if (a && b) {
    CHECK(a->tensor.buffer == past->tensor.buffer && b->tensor.buffer != past->tensor.buffer);
    CHECK(cache_at(a, 0, 5) == 100 && cache_at(b, 0, 5) == 200 && cache_at(b, 0, 4) == 40);
    CHECK(past->tensor.dims[1] == 5 && cache_at(past, 1, 4) == 42);
  }
  ol_value_release(a), ol_value_release(b), ol_value_release(past), ol_value_release(x);
  /* without growth (the C API default) outputs are dense */
  ol_session_grow_outputs(s, false);
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, d0, 3, &past));
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dx, 3, &x));
  ol_value *in2[2] = {past, x}, *dense = NULL;
  CHECK_OK(ol_session_run(s, names, in2, 2, NULL, &dense, 1, NULL));
  CHECK(dense && dense->tensor.pitch == 0);
  ol_value_release(dense), ol_value_release(past), ol_value_release(x);
  ol_session_destroy(s);
}

/* A past copied in with spare rows (ol_value_new_grown, what the JS package
 * does for an imported cache) is appended to in place by the first run. */
static void imported_caches_copied_in_with_spare_rows(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[2, L, 2] past, float[2, 1, 2] x) => (float[2, N, 2] present, float[2, L, 2] other) {\n"
                               "  present = Concat <axis = -2> (past, x)\n  other = Neg (past)\n}",
                               &m));
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  ol_model_destroy(m);
  if (!s) return;
  int64_t axis = 99;
  CHECK(!ol_session_input_grow_axis(s, 0, &axis)); /* growth off: C API default */
  ol_session_grow_outputs(s, true);
  CHECK(ol_session_input_grow_axis(s, 0, &axis) && axis == -2);
  CHECK(!ol_session_input_grow_axis(s, 1, &axis) && !ol_session_input_grow_axis(s, 2, &axis));
  int64_t dp[3] = {2, 3, 2}, dx[3] = {2, 1, 2};
  ol_value *past = NULL, *x = NULL, *out[2] = {NULL, NULL};
  CHECK_OK(ol_value_new_grown(NULL, OL_DTYPE_FLOAT, 3, dp, 1, &past));
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dx, 3, &x));
  if (!past || !x) return;
  const ol_tensor *p = &past->tensor;
  CHECK(p->pitch == ol_grow_capacity(3) && p->pitch_axis == 1 && p->buffer->append_end == 3);
  for (int o = 0; o < 2; o++)
    for (int r = 0; r < 3; r++)
      for (int i = 0; i < 2; i++) ((float *)ol_tensor_data(past))[(o * p->pitch + r) * 2 + i] = (float)(100 * o + 10 * r + i);
  for (int i = 0; i < 4; i++) ((float *)ol_tensor_data(x))[i] = (float)(-1 - i);
  const char *names[2] = {"past", "x"}, *fetch[2] = {"present", "other"};
  ol_value *in[2] = {past, x};
  CHECK_OK(ol_session_run(s, names, in, 2, fetch, out, 2, NULL));
  if (out[0] && out[1]) {
    CHECK(out[0]->tensor.buffer == p->buffer && out[0]->tensor.dims[1] == 4); /* appended in place */
    CHECK(cache_at(out[0], 1, 2) == 120 && cache_at(out[0], 0, 3) == -1 && cache_at(out[0], 1, 3) == -3);
    CHECK(cache_at(out[1], 1, 2) == -120 && cache_at(out[1], 0, 1) == -10); /* other readers see the rows too */
  }
  ol_value_release(out[0]), ol_value_release(out[1]), ol_value_release(past), ol_value_release(x);
  ol_session_destroy(s);
}

OL_TEST_MAIN(TEST(runs_the_seed_example), TEST(caches_grow_in_place_and_branch),
             TEST(imported_caches_copied_in_with_spare_rows), TEST(feed_errors_leave_the_session_usable),
             TEST(unsupported_operator_fails_at_creation), TEST(malformed_graphs_are_rejected),
             TEST(intermediates_are_released_after_last_use), TEST(cancelled_before_running),
             TEST(cancelled_from_another_thread), TEST(if_reads_outer_scope), TEST(scan_accumulates),
             TEST(model_local_functions_run_per_call_site))
