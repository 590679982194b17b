/* Regression tests for what the fuzzers (tests/fuzz) found: each case is the
 * minimized input, as a kernel call or model text, and the clean error (or
 * result) it gets now. Run under build-asan they would report the old bug. */
#include <stdio.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "kernel_util.h"
#include "onnxlight.h"

static bool error_mentions(const char *needle) {
  bool ok = strstr(ol_last_error(), needle) != NULL;
  if (!ok) fprintf(stderr, "  error '%s' does not mention '%s'\n", ol_last_error(), needle);
  return ok;
}

/* fuzz_model: the backend model test_einsum_batch_matmul with its equation
 * mutated to "biJ, bjk -> kik". A label repeated in the output was looped
 * over twice: the output offsets ran past the input (heap-buffer-overflow). */
static void einsum_repeated_output_label(void) {
  int64_t xd[3] = {5, 2, 3}, yd[3] = {5, 3, 4};
  double xv[30] = {0}, yv[60] = {0};
  char equation[] = "biJ, bjk -> kik";
  ol_attr attrs[1] = {tk_attr_string("equation", equation)};
  ol_value *in[2] = {tk_tensor(OL_DTYPE_DOUBLE, 3, xd, xv), tk_tensor(OL_DTYPE_DOUBLE, 3, yd, yv)}, *out[1] = {NULL};
  CHECK_STATUS(tk_run("Einsum", 12, attrs, 1, in, 2, out, 1), OL_INVALID_ARGUMENT);
  CHECK(out[0] == NULL && error_mentions("output label 'k' appears more than once"));
  tk_release_all(in, 2);
  tk_release_all(out, 1);
}

/* fuzz_model: test_qlinearmatmul_2D with a zero point of another size than
 * its scale: zero points were read per row/column without a size check
 * (heap-buffer-overflow). */
static void qlinear_matmul_zero_point_sizes(void) {
  int64_t ad[2] = {2, 4}, bd[2] = {4, 3}, one[1] = {1}, two[1] = {2}, none[1] = {0};
  uint8_t av[8] = {1, 2, 3, 4, 5, 6, 7, 8}, bv[12] = {0}, zp[2] = {1, 1};
  float scale = 1;
  ol_value *a = tk_tensor(OL_DTYPE_UINT8, 2, ad, av), *b = tk_tensor(OL_DTYPE_UINT8, 2, bd, bv);
  ol_value *s = tk_f32(1, one, &scale), *z1 = tk_tensor(OL_DTYPE_UINT8, 1, one, zp);
  ol_value *z2 = tk_tensor(OL_DTYPE_UINT8, 1, two, zp), *z0 = tk_tensor(OL_DTYPE_UINT8, 1, none, zp);
  struct {
    ol_value *az, *bz, *yz;
    const char *what;
  } cases[3] = {{z1, z2, z1, "b_zero_point must be a scalar or have N=3"},
                {z2, z1, z1, NULL}, /* a's per-row zero points (M = 2) are fine */
                {z1, z1, z0, "y_zero_point must be a scalar"}};
  for (int c = 0; c < 3; c++) {
    ol_value *in[8] = {a, s, cases[c].az, b, s, cases[c].bz, s, cases[c].yz}, *out[1] = {NULL};
    if (cases[c].what) {
      CHECK_STATUS(tk_run("QLinearMatMul", 10, NULL, 0, in, 8, out, 1), OL_INVALID_ARGUMENT);
      CHECK(error_mentions(cases[c].what));
    } else {
      CHECK_OK(tk_run("QLinearMatMul", 10, NULL, 0, in, 8, out, 1));
    }
    tk_release_all(out, 1);
  }
  ol_value *all[7] = {a, b, s, z1, z2, z0, NULL};
  tk_release_all(all, 6);
}

/* fuzz_model: serializing a model with an empty bytes field (an initializer
 * whose raw_data is present and empty) passed NULL to memcpy (UBSan). */
static void serialize_empty_bytes_field(void) {
  /* ModelProto { ir_version 8, opset 13, graph { initializer { dims 0, FLOAT, "w", raw_data "" } } } */
  static const uint8_t bytes[] = {0x08, 0x08, 0x42, 0x02, 0x10, 0x0d, 0x3a, 0x0b, 0x2a, 0x09,
                                  0x08, 0x00, 0x10, 0x01, 0x42, 0x01, 0x77, 0x4a, 0x00};
  ol_model *m = NULL;
  CHECK_OK(ol_model_load(bytes, sizeof bytes, NULL, &m));
  void *out = NULL;
  size_t size = 0;
  if (m) CHECK_OK(ol_model_serialize(m, &out, &size));
  CHECK(size == sizeof bytes); /* the same fields (protobuf-c writes them in field-number order) */
  ol_model *again = NULL;
  if (out) CHECK_OK(ol_model_load(out, size, NULL, &again));
  ol_model_destroy(again);
  ol_free(out);
  ol_model_destroy(m);
}

/* fuzz_model: shape inference of Unsqueeze (opset < 13) with an empty axes
 * list passed NULL to memcpy (UBSan), and Slice's the same (empty INTS
 * attributes are a valid empty array now: ol_attr_ints). */
static void infer_unsqueeze_empty_axes(void) {
  ol_model *m = NULL, *inferred = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 6, opset_import: [\"\" : 11]>\n"
                               "g (float[2,3] x) => (y) { y = Unsqueeze <axes: ints = []> (x) }",
                               &m));
  if (m) CHECK_OK(ol_model_infer_shapes(m, &inferred));
  ol_model_destroy(inferred);
  ol_model_destroy(m);
  m = inferred = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 3, opset_import: [\"\" : 9]>\n"
                               "g (float[2,3] x) => (y) { y = Slice <starts: ints = [], ends: ints = []> (x) }",
                               &m));
  if (m) ol_model_infer_shapes(m, &inferred); /* (may refuse the empty lists: what matters is no UB) */
  ol_model_destroy(inferred);
  ol_model_destroy(m);
}

/* fuzz_model: a Loop whose trip count M is INT64_MAX (a Cast of a large
 * float) was converted through a double to int64: undefined (UBSan). */
static void loop_trip_count_int64_max(void) {
  ol_model *m = NULL;
  ol_session *s = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (int64[] n, float[1] x) => (float[1] y) {\n"
                               "  y = Loop (n, , x) <body = body (int64 i, bool c, float[1] v) => (bool c2, float[1] w) {\n"
                               "    c2 = Constant <value = bool {0}> ()\n"
                               "    w = Neg(v)\n"
                               "  }>\n"
                               "}\n",
                               &m));
  if (m) CHECK_OK(ol_session_create(m, NULL, &s));
  if (s) {
    int64_t one[1] = {1};
    ol_value *n = NULL, *x = NULL, *y[1] = {NULL};
    ol_tensor_create(NULL, OL_DTYPE_INT64, one, 0, &n);
    ol_tensor_create(NULL, OL_DTYPE_FLOAT, one, 1, &x);
    *(int64_t *)ol_tensor_data(n) = INT64_MAX;
    *(float *)ol_tensor_data(x) = 3;
    const char *names[2] = {"n", "x"};
    ol_value *feeds[2] = {n, x};
    CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, y, 1, NULL));
    if (y[0]) CHECK(*(float *)ol_tensor_data(y[0]) == -3); /* one iteration: the body's condition is false */
    tk_release_all(y, 1);
    ol_value_release(n);
    ol_value_release(x);
  }
  ol_session_destroy(s);
  ol_model_destroy(m);
}

/* fuzz_model (32-bit build): test_roialign_aligned_true with spatial_scale
 * -1.2e24. The sampling grid, ceil(roi size / output size), was converted
 * to int64 from a double far out of range (UBSan). */
static void roialign_huge_spatial_scale(void) {
  int64_t xd[4] = {1, 1, 10, 10}, rd[2] = {1, 4}, bd[1] = {1};
  float xv[100], rv[4] = {0, 0, 9, 9};
  for (int i = 0; i < 100; i++) xv[i] = (float)i;
  int64_t batch[1] = {0};
  ol_attr attrs[3] = {tk_attr_float("spatial_scale", -1.20892582e+24f), tk_attr_int("output_height", 5),
                      tk_attr_int("output_width", 5)};
  ol_value *in[3] = {tk_f32(4, xd, xv), tk_f32(2, rd, rv), tk_i64(1, bd, batch)}, *out[1] = {NULL};
  CHECK_OK(tk_run("RoiAlign", 16, attrs, 3, in, 3, out, 1));
  int64_t yd[4] = {1, 1, 5, 5};
  CHECK(out[0] && tk_shape_is(out[0], 4, yd));
  tk_release_all(in, 3);
  tk_release_all(out, 1);
}

/* fuzz_model: test_roialign_aligned_true with an empty image (X of height
 * 0): the bilinear corners were clamped to row H - 1 = -1 (heap overflow);
 * NaN boxes converted NaN to int64. Both sample nothing now. */
static void roialign_empty_image_and_nan_boxes(void) {
  int64_t xd[4] = {1, 1, 0, 10}, rd[2] = {1, 4}, bd[1] = {1}, batch[1] = {0};
  float rv[4] = {0, 0, 9, 9}, one = 1;
  char half[] = "half_pixel";
  ol_attr attrs[4] = {tk_attr_string("coordinate_transformation_mode", half), tk_attr_int("output_height", 5),
                      tk_attr_int("output_width", 5), tk_attr_int("sampling_ratio", 2)};
  ol_value *in[3] = {tk_f32(4, xd, &one), tk_f32(2, rd, rv), tk_i64(1, bd, batch)}, *out[1] = {NULL};
  CHECK_OK(tk_run("RoiAlign", 16, attrs, 4, in, 3, out, 1));
  if (out[0]) CHECK(((const float *)ol_tensor_data(out[0]))[0] == 0.0f);
  tk_release_all(in, 3);
  tk_release_all(out, 1);
  int64_t xd2[4] = {1, 1, 4, 4};
  float xv[16] = {0}, nan_box[4] = {NAN, 0, 2, 2};
  ol_value *in2[3] = {tk_f32(4, xd2, xv), tk_f32(2, rd, nan_box), tk_i64(1, bd, batch)};
  CHECK_OK(tk_run("RoiAlign", 16, attrs, 4, in2, 3, out, 1));
  tk_release_all(in2, 3);
  tk_release_all(out, 1);
}

/* fuzz_model (the long run): test_gridsample_border_padding with X of width
 * 0: border padding clamped the sample to column -1 (heap overflow). An
 * empty image has nothing to sample: every output is 0, in every mode. */
static void gridsample_empty_image(void) {
  int64_t xd[4] = {1, 1, 3, 0}, gd[4] = {1, 2, 4, 2};
  float gv[16];
  for (int i = 0; i < 16; i++) gv[i] = (float)(i % 5) * 0.5f - 1.0f;
  char *const paddings[3] = {"zeros", "border", "reflection"};
  for (int p = 0; p < 3; p++) {
    ol_attr attrs[1] = {tk_attr_string("padding_mode", paddings[p])};
    ol_value *in[2] = {tk_f32(4, xd, NULL), tk_f32(4, gd, gv)}, *out[1] = {NULL};
    CHECK_OK(tk_run("GridSample", 16, attrs, 1, in, 2, out, 1));
    if (out[0]) {
      const float *y = ol_tensor_data(out[0]);
      bool zeros = ol_tensor_element_count(out[0]) == 8;
      for (int i = 0; i < 8 && zeros; i++) zeros = y[i] == 0.0f;
      CHECK(zeros);
    }
    tk_release_all(in, 2);
    tk_release_all(out, 1);
  }
}

static void on_alarm(int sig) {
  (void)sig;
  static const char msg[] = "test_fuzz_found: a cancelled run did not stop (hang)\n";
  (void)!write(2, msg, sizeof msg - 1);
  _exit(2);
}

static void *cancel_soon(void *completion) {
  struct timespec pause = {0, 100 * 1000000L};
  nanosleep(&pause, NULL);
  ol_completion_cancel(completion, "test");
  return NULL;
}

/* A run of RoiAlign with the extra attributes attrs (X 1x1x10x10, output
 * 5x5) on the box rois, cancelled after 100 ms: it must end with
 * OL_CANCELLED inside the sampling grid (an alarm fails the test if it does
 * not stop). */
static void roialign_cancelled_run(const char *attrs, const float rois[4]) {
  char text[512];
  snprintf(text, sizeof text,
           "<ir_version: 8, opset_import: [\"\" : 16]>"
           "g (float[1,1,10,10] X, float[1,4] rois, int64[1] batch) => (float[1,1,5,5] Y) {"
           "  Y = RoiAlign <output_height = 5, output_width = 5%s> (X, rois, batch) }",
           attrs);
  ol_model *model = NULL;
  CHECK_OK(ol_model_parse_text(text, &model));
  ol_session *session = NULL;
  CHECK_OK(ol_session_create(model, NULL, &session));
  int64_t xd[4] = {1, 1, 10, 10}, rd[2] = {1, 4}, bd[1] = {1}, batch[1] = {0};
  float xv[100];
  for (int i = 0; i < 100; i++) xv[i] = (float)i;
  ol_value *in[3] = {tk_f32(4, xd, xv), tk_f32(2, rd, rois), tk_i64(1, bd, batch)}, *out[1] = {NULL};
  const char *names[3] = {"X", "rois", "batch"}, *out_names[1] = {"Y"};
  ol_completion *completion = NULL;
  CHECK_OK(ol_completion_create(&completion));
  pthread_t canceller;
  CHECK(pthread_create(&canceller, NULL, cancel_soon, completion) == 0);
  signal(SIGALRM, on_alarm);
  alarm(60);
  CHECK_STATUS(ol_session_run(session, names, in, 3, out_names, out, 1, completion), OL_CANCELLED);
  alarm(0);
  pthread_join(canceller, NULL);
  CHECK(out[0] == NULL && error_mentions("sampling grid"));
  ol_completion_destroy(completion);
  tk_release_all(in, 3);
  tk_release_all(out, 1);
  ol_session_destroy(session);
  ol_model_destroy(model);
}

/* fuzz_model (the long run, a libFuzzer timeout): test_roialign_aligned_false
 * with spatial_scale 2^20 and no sampling_ratio: the adaptive grid is ~2
 * million samples a side per bin, hours of work that a cancellation between
 * nodes could not stop. */
static void roialign_grid_stops_when_cancelled(void) {
  const float rois[4] = {0, 0, 9, 9};
  roialign_cancelled_run(", spatial_scale = 1048576.0", rois);
}

/* fuzz_model (a libFuzzer timeout in CI, session 19): a box one row of
 * samples high and ~10^11 wide per bin, which a check once per row of the
 * grid never reached. The grid is now checked every few thousand samples. */
static void roialign_wide_grid_row_stops_when_cancelled(void) {
  const float rois[4] = {0, 0, 1e12f, 1};
  roialign_cancelled_run("", rois);
}

OL_TEST_MAIN(TEST(einsum_repeated_output_label), TEST(roialign_grid_stops_when_cancelled), TEST(roialign_wide_grid_row_stops_when_cancelled), TEST(gridsample_empty_image), TEST(roialign_huge_spatial_scale),
             TEST(roialign_empty_image_and_nan_boxes), TEST(qlinear_matmul_zero_point_sizes),
             TEST(serialize_empty_bytes_field), TEST(infer_unsqueeze_empty_axes), TEST(loop_trip_count_int64_max))
