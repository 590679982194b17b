/* QuantizeLinear / DequantizeLinear (per tensor, per axis, blocked int4,
 * float8), DynamicQuantizeLinear, QLinearMatMul, ConvInteger, QLinearConv.
 * Expected values from the ONNX operator examples or computed by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static bool eq_bytes(const ol_value *v, ol_dtype dt, const void *want, size_t n) {
  if (!v || v->tensor.dtype != dt) return false;
  if (memcmp(ol_tdata(&v->tensor), want, n) != 0) {
    const unsigned char *g = ol_tdata(&v->tensor);
    for (size_t i = 0; i < n; i++) fprintf(stderr, " %d", g[i]);
    fprintf(stderr, "\n");
    return false;
  }
  return true;
}

static void test_quantize(void) {
  int64_t d[1] = {6};
  float x[6] = {0, 2, 3, 1000, -254, -1000};
  float s = 2;
  uint8_t zp = 128;
  ol_value *in[3] = {tk_f32(1, d, x), tk_f32(0, NULL, &s), tk_tensor(OL_DTYPE_UINT8, 0, NULL, &zp)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("QuantizeLinear", 10, NULL, 0, in, 3, &out, 1));
  uint8_t want[6] = {128, 129, 130, 255, 1, 0};
  CHECK(eq_bytes(out, OL_DTYPE_UINT8, want, 6));
  ol_value_release(out);
  /* no zero point: uint8 with zero point 0 */
  CHECK_OK(tk_run("QuantizeLinear", 13, NULL, 0, in, 2, &out, 1));
  uint8_t want0[6] = {0, 1, 2, 255, 0, 0};
  CHECK(eq_bytes(out, OL_DTYPE_UINT8, want0, 6));
  ol_value_release(out);
  tk_release_all(in, 3);

  /* per axis, int8 */
  int64_t d2[2] = {2, 2}, d1[1] = {2};
  float x2[4] = {1.5f, -3, 4, 5};
  float s2[2] = {1, 2};
  int8_t z2[2] = {0, 1};
  ol_value *pa[3] = {tk_f32(2, d2, x2), tk_f32(1, d1, s2), tk_tensor(OL_DTYPE_INT8, 1, d1, z2)};
  ol_attr ax[1] = {tk_attr_int("axis", 0)};
  CHECK_OK(tk_run("QuantizeLinear", 13, ax, 1, pa, 3, &out, 1));
  int8_t w2[4] = {2, -3, 3, 3};
  CHECK(eq_bytes(out, OL_DTYPE_INT8, w2, 4));
  ol_value_release(out);
  /* and back */
  int8_t q2[4] = {2, -3, 3, 3};
  ol_value *dq[3] = {tk_tensor(OL_DTYPE_INT8, 2, d2, q2), pa[1], pa[2]};
  CHECK_OK(tk_run("DequantizeLinear", 13, ax, 1, dq, 3, &out, 1));
  float back[4] = {2, -3, 4, 4};
  CHECK(tk_near_f32(out, back, 4, 0));
  ol_value_release(out);
  ol_value_release(dq[0]);
  tk_release_all(pa, 3);
}

static void test_blocked_int4(void) {
  int64_t d[2] = {1, 4}, ds[2] = {1, 2};
  float x[4] = {1, 2, 30, -100};
  float s[2] = {1, 10};
  ol_value *in[2] = {tk_f32(2, d, x), tk_f32(2, ds, s)};
  ol_attr a[3] = {tk_attr_int("axis", 1), tk_attr_int("block_size", 2), tk_attr_int("output_dtype", OL_DTYPE_INT4)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("QuantizeLinear", 21, a, 3, in, 2, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_INT4);
  if (out) {
    const uint8_t *p = ol_tdata(&out->tensor);
    CHECK(ol_packed_get(OL_DTYPE_INT4, p, 0) == 1);
    CHECK(ol_packed_get(OL_DTYPE_INT4, p, 1) == 2);
    CHECK(ol_packed_get(OL_DTYPE_INT4, p, 2) == 3);
    CHECK(ol_packed_get(OL_DTYPE_INT4, p, 3) == -8);
    ol_value *dq[2] = {out, in[1]};
    ol_value *back = NULL;
    CHECK_OK(tk_run("DequantizeLinear", 21, a, 2, dq, 2, &back, 1));
    float want[4] = {1, 2, 30, -80};
    CHECK(tk_near_f32(back, want, 4, 0));
    ol_value_release(back);
  }
  ol_value_release(out);
  /* wrong block count */
  int64_t ds3[2] = {1, 3};
  float s3[3] = {1, 1, 1};
  ol_value *bad[2] = {in[0], tk_f32(2, ds3, s3)};
  out = NULL;
  CHECK_STATUS(tk_run("QuantizeLinear", 21, a, 3, bad, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(bad[1]);
  tk_release_all(in, 2);
}

static void test_float8(void) {
  int64_t d[1] = {3};
  float x[3] = {0, 1, 1000};
  float s = 1;
  uint8_t z = 0;
  ol_value *in[3] = {tk_f32(1, d, x), tk_f32(0, NULL, &s), tk_tensor(OL_DTYPE_FLOAT8E4M3FN, 0, NULL, &z)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("QuantizeLinear", 19, NULL, 0, in, 3, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_FLOAT8E4M3FN);
  if (out) {
    const uint8_t *p = ol_tdata(&out->tensor);
    CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FN, p[0]) == 0.0f);
    CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FN, p[1]) == 1.0f);
    CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FN, p[2]) == 448.0f);
  }
  ol_value_release(out);
  /* float4e2m1 (opset 23): 1000 saturates to 6 */
  ol_attr f4[1] = {tk_attr_int("output_dtype", OL_DTYPE_FLOAT4E2M1)};
  ol_value *in4[2] = {in[0], in[1]};
  CHECK_OK(tk_run("QuantizeLinear", 23, f4, 1, in4, 2, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_FLOAT4E2M1);
  if (out) {
    ol_value *back = NULL;
    ol_value *dq[2] = {out, in[1]};
    CHECK_OK(tk_run("DequantizeLinear", 23, NULL, 0, dq, 2, &back, 1));
    float want[3] = {0, 1, 6};
    CHECK(tk_near_f32(back, want, 3, 0));
    ol_value_release(back);
  }
  ol_value_release(out);
  CHECK_STATUS(tk_run("QuantizeLinear", 21, f4, 1, in4, 2, &out, 1), OL_NOT_IMPLEMENTED);
  /* precision float16: 2.5006 rounds to 2.5 in float16, then to even 2;
   * in float32 it stays above the tie and rounds to 3 */
  ol_attr pr[1] = {tk_attr_int("precision", OL_DTYPE_FLOAT16)};
  float one = 1, xv = 2.5006f;
  int64_t d1[1] = {1};
  ol_value *in3[2] = {tk_f32(1, d1, &xv), tk_f32(0, NULL, &one)};
  out = NULL;
  CHECK_OK(tk_run("QuantizeLinear", 23, pr, 1, in3, 2, &out, 1));
  uint8_t two = 2, three = 3;
  CHECK(eq_bytes(out, OL_DTYPE_UINT8, &two, 1));
  ol_value_release(out);
  CHECK_OK(tk_run("QuantizeLinear", 23, NULL, 0, in3, 2, &out, 1));
  CHECK(eq_bytes(out, OL_DTYPE_UINT8, &three, 1));
  ol_value_release(out);
  ol_attr badp[1] = {tk_attr_int("precision", OL_DTYPE_INT8)};
  CHECK_STATUS(tk_run("QuantizeLinear", 23, badp, 1, in3, 2, &out, 1), OL_INVALID_MODEL);
  ol_value_release(in3[0]);
  ol_value_release(in3[1]);
  /* float8 needs opset 19 */
  CHECK_STATUS(tk_run("QuantizeLinear", 13, NULL, 0, in, 3, &out, 1), OL_NOT_IMPLEMENTED);
  tk_release_all(in, 3);
}

static void test_dynamic(void) {
  int64_t d[1] = {6};
  float x[6] = {0, 2, -3, -2.5f, 1.34f, 0.5f};
  ol_value *in = tk_f32(1, d, x);
  ol_value *out[3] = {NULL, NULL, NULL};
  CHECK_OK(tk_run("DynamicQuantizeLinear", 11, NULL, 0, &in, 1, out, 3));
  uint8_t want[6] = {153, 255, 0, 26, 221, 179};
  CHECK(eq_bytes(out[0], OL_DTYPE_UINT8, want, 6));
  float sc = 0.019607844f;
  CHECK(tk_near_f32(out[1], &sc, 1, 1e-6f));
  uint8_t zp = 153;
  CHECK(eq_bytes(out[2], OL_DTYPE_UINT8, &zp, 1));
  tk_release_all(out, 3);
  ol_value_release(in);
}

static void test_qlinear_matmul(void) {
  int64_t da[2] = {2, 4}, db[2] = {4, 3};
  uint8_t a[8] = {208, 236, 0, 238, 3, 214, 255, 29};
  uint8_t b[12] = {152, 51, 244, 60, 26, 255, 0, 127, 246, 127, 254, 247};
  float as = 0.0066f, bs = 0.00705f, ys = 0.0107f;
  uint8_t az = 113, bz = 114, yz = 118;
  ol_value *in[8] = {tk_tensor(OL_DTYPE_UINT8, 2, da, a), tk_f32(0, NULL, &as), tk_tensor(OL_DTYPE_UINT8, 0, NULL, &az),
                     tk_tensor(OL_DTYPE_UINT8, 2, db, b), tk_f32(0, NULL, &bs), tk_tensor(OL_DTYPE_UINT8, 0, NULL, &bz),
                     tk_f32(0, NULL, &ys), tk_tensor(OL_DTYPE_UINT8, 0, NULL, &yz)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("QLinearMatMul", 10, NULL, 0, in, 8, &out, 1));
  uint8_t want[6] = {168, 115, 255, 1, 66, 151};
  CHECK(eq_bytes(out, OL_DTYPE_UINT8, want, 6));
  ol_value_release(out);
  out = NULL;
  ol_value *sw = in[0];
  in[0] = in[3]; /* [4,3] x [4,3]: inner dimensions differ */
  CHECK_STATUS(tk_run("QLinearMatMul", 10, NULL, 0, in, 8, &out, 1), OL_INVALID_ARGUMENT);
  in[0] = sw;
  ol_value_release(out);
  tk_release_all(in, 8);
}

static void test_conv(void) {
  int64_t dx[4] = {1, 1, 3, 3}, dw[4] = {1, 1, 2, 2};
  uint8_t x[9] = {2, 3, 4, 5, 6, 7, 8, 9, 10}, w[4] = {1, 1, 1, 1}, xz = 1;
  ol_value *in[3] = {tk_tensor(OL_DTYPE_UINT8, 4, dx, x), tk_tensor(OL_DTYPE_UINT8, 4, dw, w),
                     tk_tensor(OL_DTYPE_UINT8, 0, NULL, &xz)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("ConvInteger", 10, NULL, 0, in, 3, &out, 1));
  int32_t want[4] = {12, 16, 24, 28};
  CHECK(eq_bytes(out, OL_DTYPE_INT32, want, sizeof want));
  ol_value_release(out);
  /* padding 1 on every side: 4x4 output, corner sees one value */
  int64_t pads[4] = {1, 1, 1, 1};
  ol_attr pa[1] = {tk_attr_ints("pads", pads, 4)};
  CHECK_OK(tk_run("ConvInteger", 10, pa, 1, in, 3, &out, 1));
  int64_t od[4] = {1, 1, 4, 4};
  CHECK(tk_shape_is(out, 4, od) && ((int32_t *)ol_tdata(&out->tensor))[0] == 1);
  ol_value_release(out);
  ol_attr bad[1] = {tk_attr_string("auto_pad", "SOMETIMES")};
  CHECK_STATUS(tk_run("ConvInteger", 10, bad, 1, in, 3, &out, 1), OL_INVALID_MODEL);
  tk_release_all(in, 3);

  /* QLinearConv with a bias */
  int64_t dq[4] = {1, 1, 2, 2}, d1[4] = {1, 1, 1, 1}, dbias[1] = {1};
  uint8_t qx[4] = {10, 20, 30, 40};
  int8_t qw[1] = {2};
  int32_t bias[1] = {4};
  float one = 1.0f, half = 0.5f;
  uint8_t zero = 0;
  int8_t wzero = 0;
  ol_value *q[9] = {tk_tensor(OL_DTYPE_UINT8, 4, dq, qx), tk_f32(0, NULL, &one), tk_tensor(OL_DTYPE_UINT8, 0, NULL, &zero),
                    tk_tensor(OL_DTYPE_INT8, 4, d1, qw), tk_f32(0, NULL, &half), tk_tensor(OL_DTYPE_INT8, 0, NULL, &wzero),
                    tk_f32(0, NULL, &one), tk_tensor(OL_DTYPE_UINT8, 0, NULL, &zero), tk_tensor(OL_DTYPE_INT32, 1, dbias, bias)};
  CHECK_OK(tk_run("QLinearConv", 10, NULL, 0, q, 9, &out, 1));
  uint8_t wq[4] = {12, 22, 32, 42};
  CHECK(eq_bytes(out, OL_DTYPE_UINT8, wq, 4));
  ol_value_release(out);
  tk_release_all(q, 9);
}

static void test_errors(void) {
  int64_t d[2] = {2, 3}, d1[1] = {2};
  float x[6] = {0}, s[2] = {1, 1};
  ol_value *in[2] = {tk_f32(2, d, x), tk_f32(1, d1, s)};
  ol_value *out = NULL;
  /* axis 1 has 3 elements, the scale 2 */
  CHECK_STATUS(tk_run("QuantizeLinear", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  out = NULL;
  ol_attr a[1] = {tk_attr_int("block_size", -1)};
  CHECK_STATUS(tk_run("QuantizeLinear", 21, a, 1, in, 2, &out, 1), OL_INVALID_MODEL);
  ol_attr b[1] = {tk_attr_int("output_dtype", 9999)};
  CHECK_STATUS(tk_run("QuantizeLinear", 21, b, 1, in, 2, &out, 1), OL_INVALID_MODEL);
  /* dequantizing floats is not defined */
  CHECK_STATUS(tk_run("DequantizeLinear", 13, NULL, 0, in, 2, &out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(out);
  tk_release_all(in, 2);
}

OL_TEST_MAIN(TEST(test_quantize), TEST(test_blocked_int4), TEST(test_float8), TEST(test_dynamic),
             TEST(test_qlinear_matmul), TEST(test_conv), TEST(test_errors))
