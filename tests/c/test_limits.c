/* Size, memory and depth limits (docs/limits.md): hostile sizes and nesting
 * are errors naming what was asked for, never wrapped sizes, hangs or stack
 * overflows. Each case is a regression test for an attack that once worked. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/limits.h"
#include "core/payload_pool.h"
#include "harness.h"
#include "kernel_util.h"
#include "onnxlight.h"

/* A case that used to spin forever fails the test run instead. */
static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_limits: a case did not finish in time (hang)\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(2);
}
static void deadline(unsigned seconds) {
  signal(SIGALRM, on_alarm);
  alarm(seconds);
}

static bool error_mentions(const char *needle) {
  bool ok = strstr(ol_last_error(), needle) != NULL;
  if (!ok) fprintf(stderr, "  error '%s' does not mention '%s'\n", ol_last_error(), needle);
  return ok;
}

/* ------------------------------------------------------------ checked arithmetic */

static void checked_helpers(void) {
  size_t z;
  int64_t n;
  CHECK(ol_mul_size(SIZE_MAX / 2, 2, &z) && z == SIZE_MAX - 1);
  CHECK(!ol_mul_size(SIZE_MAX / 2 + 1, 2, &z));
  CHECK(!ol_add_size(SIZE_MAX, 1, &z));
  CHECK(!ol_i64_mul(INT64_MAX / 2 + 1, 2, &n));
  CHECK(!ol_i64_add(INT64_MAX, 1, &n));
  CHECK(!ol_i64_sub(INT64_MIN, 1, &n));
  int64_t ok_dims[2] = {1 << 20, 1 << 20}, huge[2] = {INT64_MAX / 2, 3}, negative[2] = {2, -1};
  CHECK(ol_shape_count_checked(2, ok_dims, &n) && n == (int64_t)1 << 40);
  CHECK(!ol_shape_count_checked(2, huge, &n));
  CHECK(!ol_shape_count_checked(2, negative, &n));
  int64_t at_limit[1] = {OL_MAX_ELEMENTS}, past[1] = {OL_MAX_ELEMENTS + 1};
  CHECK(ol_shape_count_checked(1, at_limit, &n));
  CHECK(!ol_shape_count_checked(1, past, &n));
}

/* Storage bytes never wrap: 2^59 complex128 elements are 2^66 bytes (the
 * product of count and bits wrapped to 0 before). */
static void storage_bytes_do_not_wrap(void) {
  size_t bytes;
  CHECK(ol_dtype_storage_bytes_checked(OL_DTYPE_FLOAT, 3, &bytes) && bytes == 12);
  CHECK(ol_dtype_storage_bytes_checked(OL_DTYPE_INT4, 3, &bytes) && bytes == 2);
  CHECK(!ol_dtype_storage_bytes_checked(OL_DTYPE_COMPLEX128, (int64_t)1 << 59, &bytes));
  CHECK(ol_dtype_storage_bytes(OL_DTYPE_COMPLEX128, (int64_t)1 << 59) == SIZE_MAX);
  CHECK(!ol_dtype_storage_bytes_checked(OL_DTYPE_STRING, INT64_MAX, &bytes));
  /* more elements than a tensor may have (natively the first limit met;
   * in wasm storage past 4 GiB comes first: tests/js/limits.test.mjs) */
  ol_value *v = NULL;
  int64_t dims[2] = {(int64_t)1 << 31, (int64_t)1 << 31};
  CHECK_STATUS(ol_tensor_create(NULL, OL_DTYPE_COMPLEX128, dims, 2, &v), OL_INVALID_ARGUMENT);
  CHECK(v == NULL && error_mentions("complex128[2147483648,2147483648] has a negative dimension or more than"));
}

/* An allocation near the top of size_t while a session's payload pool is
 * active: the size class computation shifted by the width of size_t and
 * looped forever (in wasm: any allocation between 2 and 4 GiB). */
static void pool_size_class_of_huge_request(void) {
  deadline(20);
  ol_allocator *a = NULL;
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
  ol_payload_pool *pool = ol_payload_pool_create(a);
  ol_payload_pool_scope scope = ol_payload_pool_enter(pool, a);
  CHECK(scope.pool == pool);
  size_t sizes[3] = {((size_t)1 << (sizeof(size_t) * 8 - 1)) + 100, SIZE_MAX / 2 + 1, SIZE_MAX - 64};
  for (int i = 0; i < 3; i++) {
    void *p = ol_alloc(a, sizes[i]);
    CHECK(p == NULL);
    ol_dealloc(a, p);
  }
  void *small = ol_alloc(a, 100); /* the pool still works */
  CHECK(small != NULL);
  ol_dealloc(a, small);
  ol_payload_pool_leave(scope);
  ol_payload_pool_destroy(pool);
  ol_allocator_destroy(a);
  alarm(0);
}

/* ------------------------------------------------------------ kernels */

/* Tile: dims * repeats overflowed int64 to a small count (3 * 6148914691236517206
 * is 2^64 + 2): a 2-element output received 3 elements per repeat. */
static void tile_repeats_overflow(void) {
  int64_t xd[1] = {3}, rd[1] = {1};
  float xv[3] = {1, 2, 3};
  int64_t reps[1] = {6148914691236517206};
  ol_value *in[2] = {tk_f32(1, xd, xv), tk_i64(1, rd, reps)}, *out[1] = {NULL};
  CHECK_STATUS(tk_run("Tile", 13, NULL, 0, in, 2, out, 1), OL_INVALID_ARGUMENT);
  CHECK(out[0] == NULL && error_mentions("overflows dimension 0"));
  tk_release_all(in, 2);
  tk_release_all(out, 1);
}

/* Pad: pads near INT64_MAX wrapped the output dims (3 elements became 1, or
 * 6 zeros); onnxruntime refuses them. */
static void pad_overflow(void) {
  int64_t xd[1] = {3}, pd[1] = {2};
  float xv[3] = {1, 2, 3};
  int64_t cases[2][2] = {{INT64_MAX, INT64_MAX}, {-(INT64_MAX), -(INT64_MAX - 1)}};
  for (int c = 0; c < 2; c++) {
    ol_value *in[2] = {tk_f32(1, xd, xv), tk_i64(1, pd, cases[c])}, *out[1] = {NULL};
    CHECK_STATUS(tk_run("Pad", 13, NULL, 0, in, 2, out, 1), OL_INVALID_ARGUMENT);
    CHECK(out[0] == NULL && error_mentions("overflow dimension 0"));
    tk_release_all(in, 2);
    tk_release_all(out, 1);
  }
}

/* Reshape: the product of the requested dims overflowed (undefined behaviour). */
static void reshape_overflow(void) {
  int64_t xd[1] = {4}, sd[3] = {3};
  float xv[4] = {1, 2, 3, 4};
  int64_t shape[3] = {(int64_t)1 << 40, (int64_t)1 << 40, -1};
  ol_value *in[2] = {tk_f32(1, xd, xv), tk_i64(1, sd, shape)}, *out[1] = {NULL};
  CHECK_STATUS(tk_run("Reshape", 14, NULL, 0, in, 2, out, 1), OL_INVALID_ARGUMENT);
  CHECK(error_mentions("overflow"));
  tk_release_all(in, 2);
  tk_release_all(out, 1);
}

/* MaxPool with kernel_shape [2, 4294967295] walked every position of the
 * window (hours); the window is clipped to the input now, same result. */
static void maxpool_huge_kernel(void) {
  deadline(20);
  int64_t xd[4] = {1, 1, 3, 4};
  float xv[12] = {1, 5, 2, 0, 3, -1, 7, 4, -2, 6, 0, 8};
  int64_t kernel[2] = {2, 4294967295};
  char same[] = "SAME_UPPER";
  ol_attr attrs[2] = {tk_attr_ints("kernel_shape", kernel, 2), tk_attr_string("auto_pad", same)};
  ol_value *in[1] = {tk_f32(4, xd, xv)}, *out[1] = {NULL};
  CHECK_OK(tk_run("MaxPool", 12, attrs, 2, in, 1, out, 1));
  /* every window spans all columns and rows i..i+1 */
  float want[12] = {7, 7, 7, 7, 8, 8, 8, 8, 8, 8, 8, 8};
  int64_t yd[4] = {1, 1, 3, 4};
  CHECK(out[0] && tk_shape_is(out[0], 4, yd) && tk_near_f32(out[0], want, 12, 0));
  tk_release_all(out, 1);
  /* AveragePool counting the padding divides by the whole (clipped) window */
  int64_t avg_kernel[2] = {1, 1000000001};
  int64_t one = 1;
  ol_attr avg[3] = {tk_attr_ints("kernel_shape", avg_kernel, 2), tk_attr_string("auto_pad", same),
                    tk_attr_int("count_include_pad", one)};
  CHECK_OK(tk_run("AveragePool", 19, avg, 3, in, 1, out, 1));
  if (out[0]) {
    const float *y = ol_tensor_data(out[0]);
    CHECK(y[0] == (float)(8.0 / 1000000001.0) && y[4] == (float)(13.0 / 1000000001.0)); /* row sums 8, 13 */
  }
  tk_release_all(out, 1);
  /* a kernel whose dilated extent overflows int64 is an error */
  int64_t wide[2] = {2, INT64_MAX / 2}, dil[2] = {1, 4};
  ol_attr over[3] = {tk_attr_ints("kernel_shape", wide, 2), tk_attr_string("auto_pad", same),
                     tk_attr_ints("dilations", dil, 2)};
  CHECK_STATUS(tk_run("MaxPool", 12, over, 3, in, 1, out, 1), OL_INVALID_ARGUMENT);
  CHECK(error_mentions("overflows"));
  tk_release_all(in, 1);
  tk_release_all(out, 1);
  alarm(0);
}

/* LRN with size 2^53 summed 2^53 channels per element (hours); the window is
 * clipped to the channels now. */
static void lrn_huge_size(void) {
  deadline(20);
  int64_t xd[4] = {1, 3, 1, 1};
  float xv[3] = {1, 2, 3};
  int64_t size = (int64_t)1 << 53;
  ol_attr attrs[1] = {tk_attr_int("size", size)};
  ol_value *in[1] = {tk_f32(4, xd, xv)}, *out[1] = {NULL};
  CHECK_OK(tk_run("LRN", 13, attrs, 1, in, 1, out, 1));
  if (out[0]) {
    /* every window holds all three channels: sum of squares 14 */
    double scale = pow(1.0 + 1e-4 / (double)size * 14.0, 0.75);
    const float *y = ol_tensor_data(out[0]);
    for (int i = 0; i < 3; i++) CHECK(fabsf(y[i] - (float)(xv[i] / scale)) < 1e-6f);
  }
  tk_release_all(in, 1);
  tk_release_all(out, 1);
  alarm(0);
}

/* QuantizeLinear with y_scale 0: 0 / 0 is NaN, and converting NaN (or an
 * infinity) to an integer is undefined in C. NaN becomes 0, infinities
 * saturate. */
static void quantize_zero_scale(void) {
  int64_t xd[1] = {3};
  float xv[3] = {0, 1, -1}, zero = 0;
  ol_value *in[2] = {tk_f32(1, xd, xv), tk_f32(0, NULL, &zero)}, *out[1] = {NULL};
  CHECK_OK(tk_run("QuantizeLinear", 13, NULL, 0, in, 2, out, 1));
  if (out[0]) {
    const uint8_t *y = ol_tensor_data(out[0]);
    CHECK(y[0] == 0 && y[1] == 255 && y[2] == 0);
  }
  tk_release_all(out, 1);
  int8_t zp = 0;
  ol_value *in3[3] = {in[0], in[1], tk_tensor(OL_DTYPE_INT8, 0, NULL, &zp)};
  CHECK_OK(tk_run("QuantizeLinear", 13, NULL, 0, in3, 3, out, 1));
  if (out[0]) {
    const int8_t *y = ol_tensor_data(out[0]);
    CHECK(y[0] == 0 && y[1] == 127 && y[2] == -128);
  }
  ol_value_release(in3[2]);
  tk_release_all(in, 2);
  tk_release_all(out, 1);
}

/* ------------------------------------------------------------ sessions */

static ol_status run_text_model(const char *text, ol_value **out) {
  ol_model *m = NULL;
  ol_session *s = NULL;
  *out = NULL;
  ol_status st = ol_model_parse_text(text, &m);
  if (st == OL_OK) st = ol_session_create(m, NULL, &s);
  if (st == OL_OK) st = ol_session_run(s, NULL, NULL, 0, NULL, out, 1, NULL);
  ol_session_destroy(s);
  ol_model_destroy(m);
  return st;
}

/* A ConstantOfShape asking for more than memory can hold fails cleanly, and
 * the next session runs as before. */
static void huge_outputs_are_out_of_memory(void) {
  ol_value *out = NULL;
  CHECK_STATUS(run_text_model("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                              "g () => (float[N] y) { s = Constant <value = int64[1] {4611686018427387904}> ()\n"
                              "  y = ConstantOfShape(s) }",
                              &out),
               OL_INVALID_ARGUMENT);
  CHECK(out == NULL && error_mentions("float32[4611686018427387904]"));
  CHECK_STATUS(run_text_model("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                              "g () => (float[N] y) { s = Constant <value = int64[1] {144115188075855872}> ()\n"
                              "  y = ConstantOfShape(s) }",
                              &out),
               OL_OUT_OF_MEMORY); /* 2^59 bytes: malloc returns NULL (ASan runs with allocator_may_return_null=1) */
  CHECK(out == NULL);
  CHECK_OK(run_text_model("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                          "g () => (float[N] y) { s = Constant <value = int64[1] {3}> ()\n"
                          "  y = ConstantOfShape(s) }",
                          &out));
  CHECK(out && ol_tensor_element_count(out) == 3);
  ol_value_release(out);
}

/* ------------------------------------------------------------ nesting */

/* Protobuf bytes written back to front, so that every message's length is
 * known when its header is prepended (nesting 100,000 deep stays linear). */
typedef struct wire {
  uint8_t *buf;
  size_t cap, front; /* the message is buf[front..cap) */
} wire;

static void prepend(wire *w, const void *bytes, size_t n) {
  if (n > w->front) {
    size_t grow = w->cap + n + 1024, used = w->cap - w->front;
    uint8_t *bigger = malloc(w->cap + grow);
    memcpy(bigger + w->cap + grow - used, w->buf + w->front, used);
    free(w->buf);
    w->buf = bigger;
    w->front = w->cap + grow - used;
    w->cap += grow;
  }
  w->front -= n;
  memcpy(w->buf + w->front, bytes, n);
}

static void prepend_varint(wire *w, uint64_t v) {
  uint8_t b[10];
  int n = 0;
  do {
    b[n++] = (uint8_t)((v & 0x7F) | (v > 0x7F ? 0x80 : 0));
    v >>= 7;
  } while (v);
  prepend(w, b, (size_t)n);
}

static size_t wire_size(const wire *w) { return w->cap - w->front; }

/* Wraps everything after `mark` (the bytes prepended since) as field `field`. */
static void wrap(wire *w, size_t size_before, int field) {
  prepend_varint(w, wire_size(w) - size_before);
  prepend_varint(w, (uint64_t)field << 3 | 2);
}

static void prepend_string(wire *w, int field, const char *s) {
  prepend(w, s, strlen(s));
  prepend_varint(w, strlen(s));
  prepend_varint(w, (uint64_t)field << 3 | 2);
}

static void prepend_int(wire *w, int field, uint64_t v) {
  prepend_varint(w, v);
  prepend_varint(w, (uint64_t)field << 3);
}

/* ModelProto { ir_version 8, opset 13, graph = body } where body is what w
 * holds (a GraphProto's fields). */
static void finish_model(wire *w) {
  wrap(w, 0, 7); /* graph */
  size_t before = wire_size(w);
  prepend_int(w, 2, 13);
  prepend_string(w, 1, "");
  wrap(w, before, 8); /* opset_import */
  prepend_int(w, 1, 8);
}

/* Graph attributes `depth` graphs deep (If nodes whose then_branch holds the
 * next graph): 26 bytes a level. */
static wire nested_graphs(int depth) {
  wire w = {malloc(64), 64, 64};
  for (int level = 1; level < depth; level++) {
    /* the graph below becomes: Node { op_type "If", attribute { name, type GRAPH, g } } */
    wrap(&w, 0, 6);
    prepend_int(&w, 20, 5);
    prepend_string(&w, 1, "then_branch");
    wrap(&w, 0, 5);
    prepend_string(&w, 4, "If");
    wrap(&w, 0, 1);
  }
  finish_model(&w);
  return w;
}

/* A graph input whose type is `depth` sequence types inside each other. */
static wire nested_types(int depth) {
  wire w = {malloc(64), 64, 64};
  prepend_int(&w, 1, 1); /* TypeProto.Tensor.elem_type FLOAT */
  wrap(&w, 0, 1);        /* TypeProto.tensor_type */
  for (int level = 1; level < depth; level++) {
    wrap(&w, 0, 1); /* Sequence.elem_type */
    wrap(&w, 0, 4); /* TypeProto.sequence_type */
  }
  wrap(&w, 0, 2); /* ValueInfoProto.type */
  prepend_string(&w, 1, "x");
  wrap(&w, 0, 11); /* GraphProto.input */
  finish_model(&w);
  return w;
}

static ol_status load_wire(wire *w, ol_model **m) {
  ol_status s = ol_model_load(w->buf + w->front, wire_size(w), NULL, m);
  free(w->buf);
  return s;
}

/* 100,000 nested graphs (2.6 MB) overflowed the stack in protobuf-c natively,
 * 1,000 (26 KB) in wasm; 2,000 nested sequence types (12 KB) too. */
static void deep_wire_nesting_is_refused(void) {
  ol_model *m = NULL;
  wire w = nested_graphs(100000);
  CHECK_STATUS(load_wire(&w, &m), OL_INVALID_MODEL);
  CHECK(m == NULL && error_mentions("nests graphs deeper than 32 levels"));
  w = nested_types(2000);
  CHECK_STATUS(load_wire(&w, &m), OL_INVALID_MODEL);
  CHECK(m == NULL && error_mentions("nests types deeper than 32 levels"));
  /* at the limits the bytes load */
  w = nested_graphs(OL_MAX_GRAPH_DEPTH);
  CHECK_OK(load_wire(&w, &m));
  ol_model_destroy(m);
  w = nested_graphs(OL_MAX_GRAPH_DEPTH + 1);
  CHECK_STATUS(load_wire(&w, &m), OL_INVALID_MODEL);
  w = nested_types(OL_MAX_TYPE_DEPTH);
  CHECK_OK(load_wire(&w, &m));
  char *text = NULL;
  if (m) CHECK_OK(ol_model_print_text(m, &text));
  ol_free(text);
  ol_model_destroy(m);
  w = nested_types(OL_MAX_TYPE_DEPTH + 1);
  CHECK_STATUS(load_wire(&w, &m), OL_INVALID_MODEL);
  /* an encoded value (JS hands these over as bytes) is checked the same way */
  w = (wire){malloc(64), 64, 64};
  prepend_int(&w, 1, 1);
  wrap(&w, 0, 1);
  for (int level = 1; level < 5000; level++) {
    wrap(&w, 0, 1);
    wrap(&w, 0, 4);
  }
  wrap(&w, 0, 3); /* EncodedValueProto.logical_type */
  ol_value *v = NULL;
  CHECK_STATUS(ol_encoded_value_parse(w.buf + w.front, wire_size(&w), &v), OL_INVALID_MODEL);
  CHECK(v == NULL && error_mentions("EncodedValueProto nests types"));
  free(w.buf);
}

/* If nodes nested `depth` graphs deep (the root counts): the innermost
 * returns x + 1 and every level passes it up. */
static char *nested_if_text(int depth) {
  size_t cap = 4096 + (size_t)depth * 256;
  char *t = malloc(cap), *tail = malloc(cap);
  snprintf(tail, cap, "y%d = Add(x, one)", depth - 1);
  for (int level = depth - 2; level >= 0; level--) {
    char *body = malloc(cap);
    snprintf(body, cap,
             "y%d = If (c) <then_branch = t%d () => (float[1] y%d) { %s },\n"
             " else_branch = e%d () => (float[1] z%d) { z%d = Identity(x) }>",
             level, level, level + 1, tail, level, level, level);
    free(tail);
    tail = body;
  }
  snprintf(t, cap,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "g (bool c, float[1] x) => (float[1] y0) <float[1] one = {1}> { %s }",
           tail);
  free(tail);
  return t;
}

static void graphs_at_the_depth_limit_work(void) {
  char *text = nested_if_text(OL_MAX_GRAPH_DEPTH);
  ol_model *m = NULL, *inferred = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  free(text);
  if (!m) return;
  CHECK_OK(ol_model_check(m));
  CHECK_OK(ol_model_infer_shapes(m, &inferred));
  ol_model_destroy(inferred);
  char *printed = NULL;
  CHECK_OK(ol_model_print_text(m, &printed));
  ol_free(printed);
  /* through bytes, the way a file loads */
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &bytes, &size));
  ol_model *loaded = NULL;
  CHECK_OK(ol_model_load(bytes, size, NULL, &loaded));
  ol_free(bytes);
  ol_session *s = NULL;
  if (loaded) CHECK_OK(ol_session_create(loaded, NULL, &s));
  if (s) {
    int64_t one[1] = {1};
    ol_value *c = NULL, *x = NULL, *out[1] = {NULL};
    ol_tensor_create(NULL, OL_DTYPE_BOOL, one, 0, &c);
    ol_tensor_create(NULL, OL_DTYPE_FLOAT, one, 1, &x);
    *(uint8_t *)ol_tensor_data(c) = 1;
    *(float *)ol_tensor_data(x) = 41;
    const char *names[2] = {"c", "x"};
    ol_value *feeds[2] = {c, x};
    CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 1, NULL));
    if (out[0]) CHECK(*(float *)ol_tensor_data(out[0]) == 42);
    tk_release_all(out, 1);
    ol_value_release(c);
    ol_value_release(x);
  }
  ol_session_destroy(s);
  ol_model_destroy(loaded);
  ol_model_destroy(m);
  /* one more is refused by the text parser too */
  text = nested_if_text(OL_MAX_GRAPH_DEPTH + 1);
  CHECK_STATUS(ol_model_parse_text(text, &m), OL_INVALID_MODEL);
  CHECK(error_mentions("graphs are nested deeper than 32 levels"));
  free(text);
}

/* Model-local functions calling each other deeper than the limit (or
 * themselves) are refused with the chain's outermost call named. */
static void function_call_depth(void) {
  size_t cap = 64 * 1024;
  char *text = malloc(cap);
  int n = snprintf(text, cap,
                   "<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1]>\n"
                   "g (float[1] x) => (float[1] y) { y = local.f0(x) }\n");
  for (int i = 0; i <= OL_MAX_FUNCTION_DEPTH; i++)
    n += snprintf(text + n, cap - (size_t)n,
                  "<domain: \"local\", opset_import: [\"\" : 18, \"local\" : 1]>\nf%d (a) => (b) { b = %s%d(a) }\n", i,
                  i < OL_MAX_FUNCTION_DEPTH ? "local.f" : "Neg", i + 1);
  ol_model *m = NULL;
  CHECK_STATUS(ol_model_parse_text(text, &m), OL_INVALID_MODEL);
  CHECK(m == NULL && error_mentions("nest deeper than 32"));
  snprintf(text, cap,
           "<ir_version: 10, opset_import: [\"\" : 18, \"local\" : 1]>\n"
           "g (float[1] x) => (float[1] y) { y = local.f(x) }\n"
           "<domain: \"local\", opset_import: [\"\" : 18, \"local\" : 1]>\nf (a) => (b) { b = local.f(a) }\n");
  CHECK_STATUS(ol_model_parse_text(text, &m), OL_INVALID_MODEL);
  CHECK(m == NULL && error_mentions("recursion"));
  free(text);
}

OL_TEST_MAIN(TEST(checked_helpers), TEST(storage_bytes_do_not_wrap), TEST(pool_size_class_of_huge_request),
             TEST(tile_repeats_overflow), TEST(pad_overflow), TEST(reshape_overflow), TEST(maxpool_huge_kernel),
             TEST(lrn_huge_size), TEST(quantize_zero_scale), TEST(huge_outputs_are_out_of_memory),
             TEST(deep_wire_nesting_is_refused), TEST(graphs_at_the_depth_limit_work), TEST(function_call_depth))
