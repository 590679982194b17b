/* Persistent state: zero-copy retention and publication, validation of
 * bindings/initial values/feeds, atomic publication under failure and
 * cancellation, reset/close, sequences. */
#include <string.h>

#include "harness.h"
#include "core/status.h"
#include "ir/model.h"
#include "onnxlight.h"

static ol_model *bound_model(const char *text, const char *in, const char *out) {
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return NULL;
  CHECK_OK(ol_model_bind_persistent(m, &in, &out, 1, &bound));
  ol_model_destroy(m);
  return bound;
}

static ol_value *vec2(float a, float b) {
  int64_t dims[1] = {2};
  ol_value *v;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 1, &v);
  ((float *)ol_tensor_data(v))[0] = a;
  ((float *)ol_tensor_data(v))[1] = b;
  return v;
}

static const char *ACCUMULATE =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "accumulate (float[2] delta, float[2] past) => (float[2] present) { present = Add(delta, past) }";

static const char *PAST = "past";
static const char *DELTA = "delta";

static void accumulate_example_is_zero_copy(void) {
  ol_model *m = bound_model(ACCUMULATE, "past", "present");
  if (!m) return;
  ol_value *initial = vec2(0, 0), *delta = vec2(1, 1);
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &PAST, &initial, 1, NULL, &st));
  ol_model_destroy(m); /* the state keeps the model alive */
  if (!st) return;
  ol_value *v = NULL;
  CHECK_OK(ol_state_value(st, "past", &v));
  CHECK(v == initial); /* retained by reference */
  ol_value *out[1];
  CHECK_OK(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, out, 1, NULL));
  CHECK_OK(ol_state_value(st, "past", &v));
  CHECK(v == out[0] && ol_tensor_data(v) == ol_tensor_data(out[0])); /* published by handle */
  ol_value_release(out[0]);
  CHECK_OK(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, out, 1, NULL));
  CHECK(((float *)ol_tensor_data(out[0]))[0] == 2.0f && ((float *)ol_tensor_data(out[0]))[1] == 2.0f);
  CHECK(((float *)ol_tensor_data(initial))[0] == 0.0f); /* the initial value was never written */
  /* reset retains the new initial value, close releases; old views stay readable */
  ol_value *again = vec2(5, 5);
  CHECK_OK(ol_state_reset(st, &PAST, &again, 1));
  CHECK_OK(ol_state_value(st, "past", &v));
  CHECK(v == again);
  CHECK_OK(ol_state_close(st));
  CHECK(((float *)ol_tensor_data(out[0]))[1] == 2.0f);
  ol_value *after[1];
  CHECK_STATUS(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, after, 1, NULL), OL_FAILED_PRECONDITION);
  CHECK_STATUS(ol_state_reset(st, &PAST, &again, 1), OL_FAILED_PRECONDITION);
  CHECK_STATUS(ol_state_close(st), OL_FAILED_PRECONDITION);
  CHECK_STATUS(ol_state_value(st, "past", &v), OL_FAILED_PRECONDITION);
  ol_value_release(out[0]);
  ol_value_release(again);
  ol_value_release(initial);
  ol_value_release(delta);
  ol_state_destroy(st);
}

static void initial_values_and_feeds_are_validated(void) {
  ol_model *m = bound_model(ACCUMULATE, "past", "present");
  if (!m) return;
  ol_value *ok = vec2(0, 0), *delta = vec2(1, 1);
  int64_t three[1] = {3};
  ol_value *wrong;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, three, 1, &wrong);
  ol_state *st = NULL;
  CHECK_STATUS(ol_state_create(m, NULL, NULL, 0, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "no initial value for persistent input 'past'") != NULL);
  CHECK_STATUS(ol_state_create(m, &DELTA, &ok, 1, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'delta' does not name a persistent input") != NULL);
  const char *twice[2] = {"past", "past"};
  ol_value *two[2] = {ok, ok};
  CHECK_STATUS(ol_state_create(m, twice, two, 2, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_state_create(m, &PAST, &wrong, 1, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "dimension 0 must be 2") != NULL);
  ol_session_options bad;
  ol_session_options_init(&bad);
  CHECK(bad.persistent_tensor_initial_capacity == 32);
  bad.persistent_tensor_initial_capacity = -1;
  CHECK_STATUS(ol_state_create(m, &PAST, &ok, 1, &bad, &st), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_state_create(m, &PAST, &ok, 1, NULL, &st));
  if (st) {
    ol_value *out[1];
    const char *both[2] = {"delta", "past"};
    ol_value *feeds[2] = {delta, ok};
    CHECK_STATUS(ol_state_run(st, NULL, both, feeds, 2, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "cannot override") != NULL);
    CHECK_STATUS(ol_state_run(st, NULL, NULL, NULL, 0, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "missing input 'delta'") != NULL);
    CHECK_STATUS(ol_state_reset(st, &PAST, &wrong, 1), OL_INVALID_ARGUMENT);
    ol_value *v;
    CHECK_OK(ol_state_value(st, "past", &v));
    CHECK(v == ok); /* a rejected reset changes nothing */
    ol_state_destroy(st);
  }
  ol_model *plain = NULL;
  CHECK_OK(ol_model_parse_text(ACCUMULATE, &plain));
  CHECK_STATUS(ol_state_create(plain, &PAST, &ok, 1, NULL, &st), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "no persistent_bindings") != NULL);
  ol_model_destroy(plain);
  ol_value_release(ok);
  ol_value_release(delta);
  ol_value_release(wrong);
  ol_model_destroy(m);
}

/* Adds a binding to the proto as-is (no forwarding), reloading the bytes. */
static ol_status raw_bind(const char *text, const char *in, const char *out, ol_model **result) {
  ol_model *m = NULL;
  OL_TRY(ol_model_parse_text(text, &m));
  Onnx__PersistentBindingProto b = ONNX__PERSISTENT_BINDING_PROTO__INIT;
  b.input_name = (char *)in;
  b.output_name = (char *)out;
  Onnx__PersistentBindingProto *list[1] = {&b};
  Onnx__GraphProto *g = m->data->proto->graph;
  size_t saved_n = g->n_persistent_bindings;
  Onnx__PersistentBindingProto **saved = g->persistent_bindings;
  g->n_persistent_bindings = 1;
  g->persistent_bindings = list;
  void *bytes;
  size_t size;
  ol_status s = ol_model_serialize(m, &bytes, &size);
  g->n_persistent_bindings = saved_n;
  g->persistent_bindings = saved;
  ol_model_destroy(m);
  if (s != OL_OK) return s;
  s = ol_model_load(bytes, size, NULL, result);
  ol_free(bytes);
  return s;
}

static void single_use_rule(void) {
  const char *twice = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                      "g (float[2] delta, float[2] past) => (float[2] present, int64[1] n) {\n"
                      "  present = Add(delta, past)\n  n = Shape(past)\n}";
  ol_model *m = NULL;
  ol_value *init = vec2(0, 0), *delta = vec2(1, 1);
  ol_state *st = NULL;
  CHECK_OK(raw_bind(twice, "past", "present", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "exactly one use") && strstr(ol_last_error(), "found 2"));
    CHECK_STATUS(ol_state_create(m, &PAST, &init, 1, NULL, &st), OL_INVALID_MODEL);
    ol_model_destroy(m);
  }
  /* a graph output returning the bound input counts as a use */
  const char *returned = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                         "g (float[2] delta, float[2] past) => (float[2] present, float[2] echo) {\n"
                         "  present = Add(delta, past)\n  echo = Identity(delta)\n}";
  CHECK_OK(raw_bind(returned, "past", "present", &m));
  if (m) {
    CHECK_OK(ol_model_check(m));
    ol_model_destroy(m);
  }
  /* captures in both branches of an If count */
  const char *captured = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                         "g (bool c, float[2] past) => (float[2] present) {\n"
                         "  present = If (c) <then_branch = t () => (float[2] a) { a = Neg(past) },\n"
                         "                    else_branch = e () => (float[2] b) { b = Abs(past) }>\n}";
  CHECK_OK(raw_bind(captured, "past", "present", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    ol_model_destroy(m);
  }
  /* ol_model_bind_persistent forwards a multi-use input through one Identity */
  ol_model *plain = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(twice, &plain));
  const char *out = "present";
  CHECK_OK(ol_model_bind_persistent(plain, &PAST, &out, 1, &bound));
  if (bound) {
    CHECK_OK(ol_state_create(bound, &PAST, &init, 1, NULL, &st));
    ol_value *outs[2];
    if (st) CHECK_OK(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, outs, 2, NULL));
    if (st && outs[0]) {
      CHECK(((float *)ol_tensor_data(outs[0]))[0] == 1.0f);
      ol_value_release(outs[0]);
      ol_value_release(outs[1]);
    }
    ol_state_destroy(st);
  }
  ol_model_destroy(plain);
  ol_model_destroy(bound);
  ol_value_release(init);
  ol_value_release(delta);
}

static void bad_declarations_are_rejected(void) {
  ol_model *m = NULL;
  /* unknown names */
  CHECK_OK(raw_bind(ACCUMULATE, "pest", "present", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'pest' is not a graph input") != NULL);
    ol_model_destroy(m);
  }
  CHECK_OK(raw_bind(ACCUMULATE, "past", "presents", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    ol_model_destroy(m);
  }
  /* strings cannot be persistent */
  const char *strings = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                        "g (string[1] past) => (string[1] present) { present = Identity(past) }";
  CHECK_OK(raw_bind(strings, "past", "present", &m));
  if (m) {
    int64_t one[1] = {1};
    ol_value *s;
    ol_tensor_create(NULL, OL_DTYPE_STRING, one, 1, &s);
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &PAST, &s, 1, NULL, &st), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "string tensors cannot be persistent") != NULL);
    ol_value_release(s);
    ol_model_destroy(m);
  }
}

static void failures_leave_the_state_intact(void) {
  ol_model *m = bound_model(ACCUMULATE, "past", "present");
  if (!m) return;
  ol_allocator *a;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_session_options options;
  ol_session_options_init(&options);
  options.allocator = a;
  ol_value *init = vec2(3, 4), *delta = vec2(1, 1);
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &PAST, &init, 1, &options, &st));
  ol_model_destroy(m);
  if (!st) return;
  ol_value *out[1], *v;
  ol_allocator_fail_after(a, 0); /* the Add output allocation fails mid-graph */
  CHECK_STATUS(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, out, 1, NULL), OL_OUT_OF_MEMORY);
  CHECK_OK(ol_state_value(st, "past", &v));
  CHECK(v == init && ((float *)ol_tensor_data(v))[0] == 3.0f);
  ol_allocator_fail_after(a, -1);
  /* cancelled: no publication, completion stays usable for the error only */
  ol_completion *c;
  ol_completion_create(&c);
  ol_completion_cancel(c, "stop");
  CHECK_STATUS(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, out, 1, c), OL_CANCELLED);
  CHECK_OK(ol_state_value(st, "past", &v));
  CHECK(v == init);
  ol_completion_destroy(c);
  /* retry succeeds; the completion completes and cannot be cancelled or reused */
  ol_completion_create(&c);
  CHECK_OK(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, out, 1, c));
  CHECK_STATUS(ol_completion_cancel(c, "too late"), OL_FAILED_PRECONDITION);
  ol_value *again[1];
  CHECK_STATUS(ol_state_run(st, NULL, &DELTA, &delta, 1, NULL, again, 1, c), OL_FAILED_PRECONDITION);
  ol_completion_destroy(c);
  CHECK(((float *)ol_tensor_data(out[0]))[1] == 5.0f);
  ol_value_release(out[0]);
  ol_state_destroy(st);
  ol_allocator_get_stats(a, NULL);
  ol_value_release(init);
  ol_value_release(delta);
  ol_allocator_destroy(a);
}

static void independent_states_share_read_only_inputs(void) {
  ol_model *m = bound_model(ACCUMULATE, "past", "present");
  if (!m) return;
  ol_value *shared = vec2(1, 1), *d1 = vec2(1, 1), *d2 = vec2(10, 10);
  ol_state *a = NULL, *b = NULL;
  CHECK_OK(ol_state_create(m, &PAST, &shared, 1, NULL, &a));
  CHECK_OK(ol_state_create(m, &PAST, &shared, 1, NULL, &b));
  ol_value *oa[1], *ob[1];
  if (a && b) {
    CHECK_OK(ol_state_run(a, NULL, &DELTA, &d1, 1, NULL, oa, 1, NULL));
    CHECK_OK(ol_state_run(b, NULL, &DELTA, &d2, 1, NULL, ob, 1, NULL));
    CHECK(((float *)ol_tensor_data(oa[0]))[0] == 2.0f && ((float *)ol_tensor_data(ob[0]))[0] == 11.0f);
    CHECK(((float *)ol_tensor_data(shared))[0] == 1.0f);
    ol_value_release(oa[0]);
    ol_value_release(ob[0]);
  }
  ol_state_destroy(a);
  ol_state_destroy(b);
  ol_model_destroy(m);
  ol_value_release(shared);
  ol_value_release(d1);
  ol_value_release(d2);
}

static void sequences_are_retained_whole(void) {
  ol_model *m = bound_model("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                            "g (float[2] x, seq(float[2]) past) => (seq(float[2]) present, int64 n) {\n"
                            "  present = SequenceInsert(past, x)\n  n = SequenceLength(present)\n}",
                            "past", "present");
  if (!m) return;
  ol_value *empty, *x = vec2(1, 2);
  ol_sequence_create(OL_DTYPE_FLOAT, NULL, 0, &empty);
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &PAST, &empty, 1, NULL, &st));
  const char *xn = "x";
  ol_value *out[2] = {0};
  for (int i = 0; st && i < 3; i++) {
    CHECK_OK(ol_state_run(st, NULL, &xn, &x, 1, NULL, out, 2, NULL));
    if (out[1]) CHECK(*(int64_t *)ol_tensor_data(out[1]) == i + 1);
    ol_value_release(out[0]);
    ol_value_release(out[1]);
  }
  ol_value *v = NULL;
  if (st) CHECK_OK(ol_state_value(st, "past", &v));
  CHECK(v && ol_sequence_length(v) == 3 && ol_sequence_at(v, 2) == x); /* elements by reference */
  ol_state_destroy(st);
  ol_model_destroy(m);
  ol_value_release(empty);
  ol_value_release(x);
}

OL_TEST_MAIN(TEST(accumulate_example_is_zero_copy), TEST(initial_values_and_feeds_are_validated),
             TEST(single_use_rule), TEST(bad_declarations_are_rejected), TEST(failures_leave_the_state_intact),
             TEST(independent_states_share_read_only_inputs), TEST(sequences_are_retained_whole))
