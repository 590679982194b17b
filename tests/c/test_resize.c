/* Resize / Upsample kernels: modes, coordinate transforms, sizes/axes/
 * keep_aspect_ratio_policy, antialias, tf_crop_and_resize extrapolation and
 * error paths. Expected values from the ONNX operator examples or computed
 * by hand from the specification formulas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static void test_nearest_upsample(void) {
  int64_t d[4] = {1, 1, 2, 2};
  float x[4] = {1, 2, 3, 4};
  float sc[4] = {1, 1, 2, 3};
  int64_t ds[1] = {4};
  ol_value *in[3] = {tk_f32(4, d, x), NULL, tk_f32(1, ds, sc)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 13, NULL, 0, in, 3, &out, 1));
  int64_t want_d[4] = {1, 1, 4, 6};
  float want[24] = {1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4};
  CHECK(tk_shape_is(out, 4, want_d));
  CHECK(tk_near_f32(out, want, 24, 0));
  ol_value_release(out);
  /* Upsample 9 (scales input) and 7 (attribute) give the same result */
  ol_value *up[2] = {in[0], in[2]};
  CHECK_OK(tk_run("Upsample", 9, NULL, 0, up, 2, &out, 1));
  CHECK(tk_near_f32(out, want, 24, 0));
  ol_value_release(out);
  ol_attr a7[1];
  float sc7[4] = {1, 1, 2, 3};
  a7[0] = (ol_attr){0};
  a7[0].name = "scales";
  a7[0].type = OL_ATTR_FLOATS;
  a7[0].floats = sc7;
  a7[0].count = 4;
  CHECK_OK(tk_run("Upsample", 7, a7, 1, up, 1, &out, 1));
  CHECK(tk_near_f32(out, want, 24, 0));
  ol_value_release(out);
  tk_release_all(in, 3);
}

static void test_linear_half_pixel(void) {
  int64_t d[4] = {1, 1, 2, 2};
  float x[4] = {1, 2, 3, 4};
  float sc[4] = {1, 1, 2, 2};
  int64_t ds[1] = {4};
  ol_value *in[3] = {tk_f32(4, d, x), NULL, tk_f32(1, ds, sc)};
  ol_attr a[1] = {tk_attr_string("mode", "linear")};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 13, a, 1, in, 3, &out, 1));
  float want[16] = {1, 1.25f, 1.75f, 2, 1.5f, 1.75f, 2.25f, 2.5f,
                    2.5f, 2.75f, 3.25f, 3.5f, 3, 3.25f, 3.75f, 4};
  CHECK(tk_near_f32(out, want, 16, 1e-6f));
  ol_value_release(out);
  /* align_corners */
  ol_attr b[2] = {tk_attr_string("mode", "linear"),
                  tk_attr_string("coordinate_transformation_mode", "align_corners")};
  CHECK_OK(tk_run("Resize", 13, b, 2, in, 3, &out, 1));
  float wa[16] = {1, 4.f / 3, 5.f / 3, 2, 5.f / 3, 2, 7.f / 3, 8.f / 3,
                  7.f / 3, 8.f / 3, 3, 10.f / 3, 3, 10.f / 3, 11.f / 3, 4};
  CHECK(tk_near_f32(out, wa, 16, 1e-6f));
  ol_value_release(out);
  tk_release_all(in, 3);
}

static void test_float16_linear(void) {
  int64_t d[4] = {1, 1, 1, 2};
  uint16_t x[2] = {ol_f32_to_f16(1.0f), ol_f32_to_f16(2.0f)};
  int64_t sz[4] = {1, 1, 1, 4}, dsz[1] = {4};
  ol_value *in[4] = {tk_tensor(OL_DTYPE_FLOAT16, 4, d, x), NULL, NULL, tk_i64(1, dsz, sz)};
  ol_attr a[1] = {tk_attr_string("mode", "linear")};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 13, a, 1, in, 4, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_FLOAT16 && ol_tcount(&out->tensor) == 4);
  if (out && ol_tcount(&out->tensor) == 4) {
    const uint16_t *y = ol_tdata(&out->tensor);
    float want[4] = {1, 1.25f, 1.75f, 2};
    for (int i = 0; i < 4; i++) CHECK(ol_f16_to_f32(y[i]) == want[i]);
  }
  ol_value_release(out);
  tk_release_all(in, 4);
}

static void test_sizes_axes_aspect(void) {
  int64_t d[4] = {1, 1, 2, 2};
  float x[4] = {1, 2, 3, 4};
  int64_t sz[2] = {7, 8}, dsz[1] = {2};
  int64_t axes[2] = {2, 3};
  ol_value *in[4] = {tk_f32(4, d, x), NULL, NULL, tk_i64(1, dsz, sz)};
  ol_attr a[2] = {tk_attr_ints("axes", axes, 2), tk_attr_string("keep_aspect_ratio_policy", "not_larger")};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 18, a, 2, in, 4, &out, 1));
  int64_t w1[4] = {1, 1, 7, 7};
  CHECK(tk_shape_is(out, 4, w1));
  ol_value_release(out);
  a[1] = tk_attr_string("keep_aspect_ratio_policy", "not_smaller");
  CHECK_OK(tk_run("Resize", 18, a, 2, in, 4, &out, 1));
  int64_t w2[4] = {1, 1, 8, 8};
  CHECK(tk_shape_is(out, 4, w2));
  ol_value_release(out);
  /* axes are an opset-18 attribute: at 13 sizes must cover every axis */
  CHECK_STATUS(tk_run("Resize", 13, NULL, 0, in, 4, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  tk_release_all(in, 4);
}

static void test_antialias(void) {
  int64_t d[4] = {1, 1, 1, 4};
  float x[4] = {1, 2, 3, 4};
  int64_t sz[4] = {1, 1, 1, 2}, dsz[1] = {4};
  ol_value *in[4] = {tk_f32(4, d, x), NULL, NULL, tk_i64(1, dsz, sz)};
  ol_attr a[2] = {tk_attr_string("mode", "linear"), tk_attr_int("antialias", 1)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 18, a, 2, in, 4, &out, 1));
  float want[2] = {1.625f, 3.375f};
  CHECK(tk_near_f32(out, want, 2, 1e-6f));
  ol_value_release(out);
  /* without antialias: plain half_pixel linear samples at 0.5 and 2.5 */
  CHECK_OK(tk_run("Resize", 18, a, 1, in, 4, &out, 1));
  float plain[2] = {1.5f, 3.5f};
  CHECK(tk_near_f32(out, plain, 2, 1e-6f));
  ol_value_release(out);
  tk_release_all(in, 4);
}

static void test_tf_crop_extrapolation(void) {
  int64_t d[4] = {1, 1, 1, 2};
  float x[2] = {1, 2};
  float roi[8] = {0, 0, 0, 0, 1, 1, 1, 2};
  int64_t dr[1] = {8}, sz[4] = {1, 1, 1, 3}, dsz[1] = {4};
  ol_value *in[4] = {tk_f32(4, d, x), tk_f32(1, dr, roi), NULL, tk_i64(1, dsz, sz)};
  ol_attr a[3] = {tk_attr_string("mode", "linear"),
                  tk_attr_string("coordinate_transformation_mode", "tf_crop_and_resize"),
                  tk_attr_float("extrapolation_value", 10.0f)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 13, a, 3, in, 4, &out, 1));
  float want[3] = {1, 2, 10};
  CHECK(tk_near_f32(out, want, 3, 1e-6f));
  ol_value_release(out);
  tk_release_all(in, 4);
}

static void test_cubic(void) {
  /* cubic on a linear ramp reproduces the ramp away from the borders */
  int64_t d[4] = {1, 1, 1, 8};
  float x[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  float sc[4] = {1, 1, 1, 2};
  int64_t ds[1] = {4};
  ol_value *in[3] = {tk_f32(4, d, x), NULL, tk_f32(1, ds, sc)};
  ol_attr a[2] = {tk_attr_string("mode", "cubic"), tk_attr_string("coordinate_transformation_mode", "asymmetric")};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Resize", 11, a, 2, in, 3, &out, 1));
  CHECK(out && ol_tcount(&out->tensor) == 16);
  if (out) {
    const float *y = ol_tdata(&out->tensor);
    for (int i = 2; i < 12; i++) CHECK(fabsf(y[i] - 0.5f * (float)i) < 1e-5f);
  }
  ol_value_release(out);
  tk_release_all(in, 3);
}

static void test_errors(void) {
  int64_t d[4] = {1, 1, 2, 2};
  float x[4] = {1, 2, 3, 4};
  float sc[4] = {1, 1, 2, 2};
  int64_t ds[1] = {4}, sz[4] = {1, 1, 4, 4};
  ol_value *in[4] = {tk_f32(4, d, x), NULL, tk_f32(1, ds, sc), tk_i64(1, ds, sz)};
  ol_value *out = NULL;
  CHECK_STATUS(tk_run("Resize", 13, NULL, 0, in, 4, &out, 1), OL_INVALID_ARGUMENT); /* both */
  ol_value_release(out);
  out = NULL;
  ol_value *none[2] = {in[0], NULL};
  CHECK_STATUS(tk_run("Resize", 13, NULL, 0, none, 2, &out, 1), OL_INVALID_ARGUMENT); /* neither */
  ol_attr bad[1] = {tk_attr_string("mode", "quadratic")};
  CHECK_STATUS(tk_run("Resize", 13, bad, 1, in, 3, &out, 1), OL_INVALID_MODEL);
  ol_attr badct[1] = {tk_attr_string("coordinate_transformation_mode", "corners")};
  CHECK_STATUS(tk_run("Resize", 18, badct, 1, in, 3, &out, 1), OL_INVALID_MODEL);
  float neg[4] = {1, 1, -2, 2};
  ol_value *ns = tk_f32(1, ds, neg);
  ol_value *in2[3] = {in[0], NULL, ns};
  CHECK_STATUS(tk_run("Resize", 13, NULL, 0, in2, 3, &out, 1), OL_INVALID_ARGUMENT);
  float three[3] = {1, 2, 2};
  int64_t d3[1] = {3};
  ol_value *s3 = tk_f32(1, d3, three);
  in2[2] = s3;
  CHECK_STATUS(tk_run("Resize", 13, NULL, 0, in2, 3, &out, 1), OL_INVALID_ARGUMENT);
  ol_value *up[1] = {in[0]};
  CHECK_STATUS(tk_run("Upsample", 7, NULL, 0, up, 1, &out, 1), OL_INVALID_MODEL); /* scales attr required */
  ol_value_release(out);
  ol_value_release(ns);
  ol_value_release(s3);
  tk_release_all(in, 4);
}

OL_TEST_MAIN(TEST(test_nearest_upsample), TEST(test_linear_half_pixel), TEST(test_float16_linear), TEST(test_sizes_axes_aspect),
             TEST(test_antialias), TEST(test_tf_crop_extrapolation), TEST(test_cubic), TEST(test_errors))
