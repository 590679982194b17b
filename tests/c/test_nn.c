/* NN kernels: Softmax family, normalizations, Einsum, Conv, ConvTranspose,
 * pooling, LRN. Expected values from the ONNX operator examples where
 * available, otherwise computed here in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static bool eq_i64(const ol_value *v, const int64_t *want, int64_t n) {
  if (!v || v->tensor.dtype != OL_DTYPE_INT64 || ol_tcount(&v->tensor) != n) return false;
  for (int64_t i = 0; i < n; i++)
    if (((int64_t *)ol_tdata(&v->tensor))[i] != want[i]) return false;
  return true;
}
static ol_value *iota_f32(int rank, const int64_t *dims, float start) {
  ol_value *v = tk_f32(rank, dims, NULL);
  float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < ol_tcount(&v->tensor); i++) d[i] = start + (float)i;
  return v;
}
static ol_value *fill_f32(int rank, const int64_t *dims, float value) {
  ol_value *v = tk_f32(rank, dims, NULL);
  float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < ol_tcount(&v->tensor); i++) d[i] = value;
  return v;
}
/* ------------------------------------------------------------ Softmax */

static void test_softmax(void) {
  int64_t d[2] = {1, 3};
  float v[3] = {-1, 0, 1};
  ol_value *x = tk_f32(2, d, v);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Softmax", 13, NULL, 0, &x, 1, &out, 1));
  float want[3] = {0.09003057f, 0.24472847f, 0.66524096f};
  CHECK(tk_near_f32(out, want, 3, 1e-6f));
  ol_value_release(out);
  CHECK_OK(tk_run("LogSoftmax", 13, NULL, 0, &x, 1, &out, 1));
  float wl[3] = {-2.40760596f, -1.40760596f, -0.40760596f};
  CHECK(tk_near_f32(out, wl, 3, 1e-6f));
  ol_value_release(out);
  ol_value_release(x);

  /* axis semantics: opset 11 flattens [2,2] at axis 0 to one row of 4;
   * opset 13 normalizes along axis 0 only */
  int64_t d2[2] = {2, 2};
  float v2[4] = {0, 0, 0, 0};
  x = tk_f32(2, d2, v2);
  ol_attr a0 = tk_attr_int("axis", 0);
  CHECK_OK(tk_run("Softmax", 11, &a0, 1, &x, 1, &out, 1));
  float q[4] = {0.25f, 0.25f, 0.25f, 0.25f};
  CHECK(tk_near_f32(out, q, 4, 1e-7f));
  ol_value_release(out);
  CHECK_OK(tk_run("Softmax", 13, &a0, 1, &x, 1, &out, 1));
  float h[4] = {0.5f, 0.5f, 0.5f, 0.5f};
  CHECK(tk_near_f32(out, h, 4, 1e-7f));
  ol_value_release(out);
  ol_value_release(x);

  /* large numbers stay finite; strided (middle axis) path */
  int64_t d3[3] = {1, 2, 2};
  float big[4] = {1000, 0, 1001, 0};
  x = tk_f32(3, d3, big);
  ol_attr a1 = tk_attr_int("axis", 1);
  CHECK_OK(tk_run("Softmax", 13, &a1, 1, &x, 1, &out, 1));
  float wb[4] = {0.26894142f, 0.5f, 0.73105858f, 0.5f};
  CHECK(tk_near_f32(out, wb, 4, 1e-6f));
  ol_value_release(out);
  ol_value_release(x);

  int64_t one = 1;
  double dv = 3.0;
  x = tk_tensor(OL_DTYPE_DOUBLE, 1, &one, &dv);
  CHECK_OK(tk_run("Softmax", 13, NULL, 0, &x, 1, &out, 1));
  CHECK(out && ((double *)ol_tdata(&out->tensor))[0] == 1.0);
  ol_value_release(out);
  ol_value_release(x);
  x = tk_i64(1, &one, NULL);
  CHECK_STATUS(tk_run("Softmax", 13, NULL, 0, &x, 1, &out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(x);
}

/* ------------------------------------------------------------ normalizations */

static void test_layernorm(void) {
  int64_t d[2] = {2, 4};
  float v[8] = {1, 2, 3, 4, -1, 0, 5, 8};
  int64_t d4[1] = {4};
  float sc[4] = {1, 2, 0.5f, 1}, bi[4] = {0, 1, 0, -1};
  ol_value *in[3] = {tk_f32(2, d, v), tk_f32(1, d4, sc), tk_f32(1, d4, bi)};
  ol_value *out[3] = {NULL, NULL, NULL};
  CHECK_OK(tk_run("LayerNormalization", 17, NULL, 0, in, 3, out, 3));
  float want[8], mean[2], inv[2];
  for (int r = 0; r < 2; r++) {
    double m = 0, var = 0;
    for (int j = 0; j < 4; j++) m += v[r * 4 + j];
    m /= 4;
    for (int j = 0; j < 4; j++) var += (v[r * 4 + j] - m) * (v[r * 4 + j] - m);
    var /= 4;
    double is = 1.0 / sqrt(var + 1e-5);
    for (int j = 0; j < 4; j++) want[r * 4 + j] = (float)((v[r * 4 + j] - m) * is * sc[j] + bi[j]);
    mean[r] = (float)m;
    inv[r] = (float)is;
  }
  CHECK(tk_near_f32(out[0], want, 8, 1e-6f));
  int64_t ws[2] = {2, 1};
  CHECK(tk_shape_is(out[1], 2, ws) && tk_near_f32(out[1], mean, 2, 1e-7f) && tk_near_f32(out[2], inv, 2, 1e-6f));
  tk_release_all(out, 3);
  /* axis 0 normalizes everything; scale [4] broadcasts over [2,4] */
  ol_attr a0 = tk_attr_int("axis", 0);
  CHECK_OK(tk_run("LayerNormalization", 17, &a0, 1, in, 3, out, 1));
  tk_release_all(out, 3);
  /* a scale that cannot broadcast */
  int64_t d3[1] = {3};
  ol_value *bad[2] = {in[0], tk_f32(1, d3, sc)};
  CHECK_STATUS(tk_run("LayerNormalization", 17, NULL, 0, bad, 2, out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(bad[1]);
  /* scalar-like scale broadcasts */
  float one = 1;
  ol_value *s1 = tk_f32(0, NULL, &one);
  ol_value *in2[2] = {in[0], s1};
  CHECK_OK(tk_run("LayerNormalization", 17, &a0, 1, in2, 2, out, 1));
  CHECK(out[0] && ol_tcount(&out[0]->tensor) == 8);
  tk_release_all(out, 1);
  ol_value_release(s1);
  tk_release_all(in, 3);
}

static void test_batch_instance_group_norm(void) {
  /* BatchNormalization example: x [1,2,1,3] */
  int64_t d[4] = {1, 2, 1, 3};
  float xv[6] = {-1, 0, 1, 2, 3, 4};
  int64_t c2[1] = {2};
  float s[2] = {1.0f, 1.5f}, b[2] = {0, 1}, m[2] = {0, 3}, var[2] = {1, 1.5f};
  ol_value *in[5] = {tk_f32(4, d, xv), tk_f32(1, c2, s), tk_f32(1, c2, b), tk_f32(1, c2, m),
                     tk_f32(1, c2, var)};
  ol_value *out[3] = {NULL, NULL, NULL};
  CHECK_OK(tk_run("BatchNormalization", 15, NULL, 0, in, 5, out, 1));
  float want[6];
  for (int c = 0; c < 2; c++)
    for (int j = 0; j < 3; j++)
      want[c * 3 + j] = (float)((xv[c * 3 + j] - m[c]) / sqrt(var[c] + 1e-5) * s[c] + b[c]);
  CHECK(tk_near_f32(out[0], want, 6, 1e-6f));
  tk_release_all(out, 1);
  /* training mode: batch statistics, running stats updated with momentum */
  ol_attr tm = tk_attr_int("training_mode", 1);
  CHECK_OK(tk_run("BatchNormalization", 15, &tm, 1, in, 5, out, 3));
  float rm[2] = {0.9f * 0 + 0.1f * 0, 0.9f * 3 + 0.1f * 3};
  float rv[2] = {0.9f * 1 + 0.1f * (2.0f / 3), 0.9f * 1.5f + 0.1f * (2.0f / 3)};
  CHECK(tk_near_f32(out[1], rm, 2, 1e-6f) && tk_near_f32(out[2], rv, 2, 1e-6f));
  float wt[6] = {(float)(-1 / sqrt(2.0 / 3 + 1e-5)), 0, (float)(1 / sqrt(2.0 / 3 + 1e-5)), 0, 0, 0};
  wt[3] = (float)(-1 / sqrt(2.0 / 3 + 1e-5) * 1.5 + 1);
  wt[4] = 1;
  wt[5] = (float)(1 / sqrt(2.0 / 3 + 1e-5) * 1.5 + 1);
  CHECK(tk_near_f32(out[0], wt, 6, 1e-6f));
  tk_release_all(out, 3);

  /* InstanceNormalization: per (n, c) statistics */
  ol_value *iin[3] = {in[0], in[1], in[2]};
  CHECK_OK(tk_run("InstanceNormalization", 6, NULL, 0, iin, 3, out, 1));
  CHECK(tk_near_f32(out[0], wt, 6, 1e-6f)); /* N = 1: same as batch statistics */
  tk_release_all(out, 1);

  /* GroupNormalization: 1 group over both channels; opset 18 per-group scale */
  int64_t one = 1;
  float gs = 2, gb = 0.5f;
  ol_value *gin[3] = {in[0], tk_f32(1, &one, &gs), tk_f32(1, &one, &gb)};
  ol_attr ng = tk_attr_int("num_groups", 1);
  CHECK_OK(tk_run("GroupNormalization", 18, &ng, 1, gin, 3, out, 1));
  float gw[6];
  {
    double mu = 1.5, vv = 0;
    for (int i = 0; i < 6; i++) vv += (xv[i] - mu) * (xv[i] - mu);
    vv /= 6;
    for (int i = 0; i < 6; i++) gw[i] = (float)((xv[i] - mu) / sqrt(vv + 1e-5) * 2 + 0.5);
  }
  CHECK(tk_near_f32(out[0], gw, 6, 1e-6f));
  tk_release_all(out, 1);
  /* opset 21 wants per-channel scale */
  CHECK_STATUS(tk_run("GroupNormalization", 21, &ng, 1, gin, 3, out, 1), OL_INVALID_ARGUMENT);
  ol_value *gin21[3] = {in[0], in[1], in[2]};
  ol_attr ng2 = tk_attr_int("num_groups", 2);
  CHECK_OK(tk_run("GroupNormalization", 21, &ng2, 1, gin21, 3, out, 1));
  CHECK(tk_near_f32(out[0], wt, 6, 1e-6f)); /* 2 groups of 1 channel = instance norm */
  tk_release_all(out, 1);
  ol_value_release(gin[1]);
  ol_value_release(gin[2]);
  tk_release_all(in, 5);
}

static void test_lp_mvn_lrn(void) {
  int64_t d[2] = {2, 2};
  float v[4] = {3, 4, -1, 0};
  ol_value *x = tk_f32(2, d, v);
  ol_value *out = NULL;
  CHECK_OK(tk_run("LpNormalization", 1, NULL, 0, &x, 1, &out, 1));
  float w2[4] = {0.6f, 0.8f, -1, 0};
  CHECK(tk_near_f32(out, w2, 4, 1e-7f));
  ol_value_release(out);
  ol_attr p1 = tk_attr_int("p", 1);
  CHECK_OK(tk_run("LpNormalization", 1, &p1, 1, &x, 1, &out, 1));
  float w1[4] = {3.0f / 7, 4.0f / 7, -1, 0};
  CHECK(tk_near_f32(out, w1, 4, 1e-7f));
  ol_value_release(out);
  ol_attr p3 = tk_attr_int("p", 3);
  CHECK_STATUS(tk_run("LpNormalization", 1, &p3, 1, &x, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(x);

  /* MVN over axes {0,2,3} of [1,2,1,2] */
  int64_t d4[4] = {1, 2, 1, 2};
  float mv[4] = {1, 3, 10, 10};
  x = tk_f32(4, d4, mv);
  CHECK_OK(tk_run("MeanVarianceNormalization", 13, NULL, 0, &x, 1, &out, 1));
  float wm[4] = {(float)(-1 / (1 + 1e-9)), (float)(1 / (1 + 1e-9)), 0, 0};
  CHECK(tk_near_f32(out, wm, 4, 1e-6f));
  ol_value_release(out);

  /* LRN size 3 over 2 channels */
  ol_attr la[4] = {tk_attr_int("size", 3), tk_attr_float("alpha", 0.3f), tk_attr_float("beta", 0.5f),
                   tk_attr_float("bias", 1.0f)};
  CHECK_OK(tk_run("LRN", 13, la, 4, &x, 1, &out, 1));
  float wl[4];
  for (int j = 0; j < 2; j++) {
    double sq = (double)mv[j] * mv[j] + (double)mv[2 + j] * mv[2 + j];
    double den = sqrt(1.0 + 0.3 / 3 * sq);
    wl[j] = (float)(mv[j] / den);
    wl[2 + j] = (float)(mv[2 + j] / den);
  }
  CHECK(tk_near_f32(out, wl, 4, 1e-5f));
  ol_value_release(out);
  CHECK_STATUS(tk_run("LRN", 13, NULL, 0, &x, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Einsum */

static void test_einsum(void) {
  int64_t da[2] = {2, 3}, db[2] = {3, 2};
  ol_value *a = iota_f32(2, da, 1), *b = iota_f32(2, db, 1);
  ol_value *in[2] = {a, b};
  ol_value *out = NULL;
  ol_attr eq = tk_attr_string("equation", "ij,jk->ik");
  CHECK_OK(tk_run("Einsum", 12, &eq, 1, in, 2, &out, 1));
  float mm[4] = {22, 28, 49, 64};
  CHECK(tk_near_f32(out, mm, 4, 0));
  ol_value_release(out);
  ol_attr imp = tk_attr_string("equation", "ij,jk");
  CHECK_OK(tk_run("Einsum", 12, &imp, 1, in, 2, &out, 1));
  CHECK(tk_near_f32(out, mm, 4, 0));
  ol_value_release(out);
  ol_attr tr = tk_attr_string("equation", "ij->ji");
  CHECK_OK(tk_run("Einsum", 12, &tr, 1, &a, 1, &out, 1));
  float t[6] = {1, 4, 2, 5, 3, 6};
  int64_t wt[2] = {3, 2};
  CHECK(tk_shape_is(out, 2, wt) && tk_near_f32(out, t, 6, 0));
  ol_value_release(out);
  ol_attr sum = tk_attr_string("equation", "ij->");
  CHECK_OK(tk_run("Einsum", 12, &sum, 1, &a, 1, &out, 1));
  float s = 21;
  CHECK(out && out->tensor.rank == 0 && tk_near_f32(out, &s, 1, 0));
  ol_value_release(out);
  int64_t dsq[2] = {3, 3};
  ol_value *sq = iota_f32(2, dsq, 0);
  ol_attr diag = tk_attr_string("equation", "ii->i");
  CHECK_OK(tk_run("Einsum", 12, &diag, 1, &sq, 1, &out, 1));
  float dg[3] = {0, 4, 8};
  CHECK(tk_near_f32(out, dg, 3, 0));
  ol_value_release(out);
  ol_value_release(sq);
  /* batched with ellipsis */
  int64_t d3[3] = {2, 2, 3}, e3[3] = {2, 3, 1};
  ol_value *bin[2] = {iota_f32(3, d3, 0), fill_f32(3, e3, 1)};
  ol_attr be = tk_attr_string("equation", "...ij,...jk->...ik");
  CHECK_OK(tk_run("Einsum", 12, &be, 1, bin, 2, &out, 1));
  int64_t wb[3] = {2, 2, 1};
  float bw[4] = {3, 12, 21, 30};
  CHECK(tk_shape_is(out, 3, wb) && tk_near_f32(out, bw, 4, 0));
  ol_value_release(out);
  tk_release_all(bin, 2);
  /* errors */
  ol_attr bad = tk_attr_string("equation", "ij,jk->iz");
  CHECK_STATUS(tk_run("Einsum", 12, &bad, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_attr mism = tk_attr_string("equation", "ij,ik->jk");
  CHECK_STATUS(tk_run("Einsum", 12, &mism, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_attr chars = tk_attr_string("equation", "i1->i");
  CHECK_STATUS(tk_run("Einsum", 12, &chars, 1, &a, 1, &out, 1), OL_INVALID_MODEL);
  tk_release_all(in, 2);
}

/* ------------------------------------------------------------ Conv / ConvTranspose */

static void test_conv(void) {
  int64_t dx[4] = {1, 1, 5, 5}, dw[4] = {1, 1, 3, 3};
  ol_value *in[3] = {iota_f32(4, dx, 0), fill_f32(4, dw, 1), NULL};
  int64_t pads[4] = {1, 1, 1, 1}, ks[2] = {3, 3};
  ol_attr a[2] = {tk_attr_ints("kernel_shape", ks, 2), tk_attr_ints("pads", pads, 4)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Conv", 11, a, 2, in, 2, &out, 1));
  float wp[25] = {12, 21, 27, 33, 24, 33, 54, 63, 72, 51, 63, 99, 108, 117, 81,
                  93, 144, 153, 162, 111, 72, 111, 117, 123, 84};
  CHECK(tk_shape_is(out, 4, dx) && tk_near_f32(out, wp, 25, 0));
  ol_value_release(out);
  CHECK_OK(tk_run("Conv", 11, a, 1, in, 2, &out, 1));
  float wn[9] = {54, 63, 72, 99, 108, 117, 144, 153, 162};
  CHECK(tk_near_f32(out, wn, 9, 0));
  ol_value_release(out);
  /* strides 2 with padding, and auto_pad SAME_LOWER */
  int64_t st[2] = {2, 2};
  ol_attr a2[3] = {a[0], a[1], tk_attr_ints("strides", st, 2)};
  CHECK_OK(tk_run("Conv", 11, a2, 3, in, 2, &out, 1));
  float ws[9] = {12, 27, 24, 63, 108, 81, 72, 117, 84};
  int64_t w33[4] = {1, 1, 3, 3};
  CHECK(tk_shape_is(out, 4, w33) && tk_near_f32(out, ws, 9, 0));
  ol_value_release(out);
  ol_attr same[2] = {tk_attr_string("auto_pad", "SAME_UPPER"), tk_attr_ints("strides", st, 2)};
  CHECK_OK(tk_run("Conv", 11, same, 2, in, 2, &out, 1));
  CHECK(tk_shape_is(out, 4, w33) && tk_near_f32(out, ws, 9, 0));
  ol_value_release(out);

  /* groups = 2 and bias: each output channel sees only its own input channel */
  int64_t dx2[4] = {1, 2, 2, 2}, dw2[4] = {2, 1, 1, 1}, db[1] = {2};
  float wv[2] = {2, -1}, bv[2] = {0.5f, 1};
  ol_value *gin[3] = {iota_f32(4, dx2, 0), tk_f32(4, dw2, wv), tk_f32(1, db, bv)};
  ol_attr g = tk_attr_int("group", 2);
  CHECK_OK(tk_run("Conv", 11, &g, 1, gin, 3, &out, 1));
  float wg[8] = {0.5f, 2.5f, 4.5f, 6.5f, -3, -4, -5, -6};
  CHECK(tk_near_f32(out, wg, 8, 0));
  ol_value_release(out);
  CHECK_STATUS(tk_run("Conv", 11, NULL, 0, gin, 3, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(gin, 3);

  /* 1-D with dilation */
  int64_t dx1[3] = {1, 1, 7}, dw1[3] = {1, 1, 2};
  float w1[2] = {1, 10};
  ol_value *in1[2] = {iota_f32(3, dx1, 0), tk_f32(3, dw1, w1)};
  int64_t dil[1] = {3};
  ol_attr da = tk_attr_ints("dilations", dil, 1);
  CHECK_OK(tk_run("Conv", 11, &da, 1, in1, 2, &out, 1));
  float wd[4] = {30, 41, 52, 63};
  CHECK(tk_near_f32(out, wd, 4, 0));
  ol_value_release(out);
  tk_release_all(in1, 2);
  tk_release_all(in, 2);
}

static void test_conv_transpose(void) {
  int64_t dx[4] = {1, 1, 3, 3}, dw[4] = {1, 2, 3, 3};
  ol_value *in[2] = {iota_f32(4, dx, 0), fill_f32(4, dw, 1)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("ConvTranspose", 11, NULL, 0, in, 2, &out, 1));
  float w1[25] = {0, 1, 3, 3, 2, 3, 8, 15, 12, 7, 9, 21, 36, 27, 15, 9, 20, 33, 24, 13, 6, 13, 21, 15, 8};
  int64_t wd[4] = {1, 2, 5, 5};
  CHECK(tk_shape_is(out, 4, wd));
  bool ok = out != NULL;
  for (int c = 0; ok && c < 2; c++)
    for (int i = 0; i < 25; i++) ok = ((float *)ol_tdata(&out->tensor))[c * 25 + i] == w1[i];
  CHECK(ok);
  ol_value_release(out);
  /* strides 3 with output_shape (pads derived) */
  int64_t st[2] = {3, 2}, os[2] = {10, 8};
  ol_attr a[2] = {tk_attr_ints("strides", st, 2), tk_attr_ints("output_shape", os, 2)};
  CHECK_OK(tk_run("ConvTranspose", 11, a, 2, in, 2, &out, 1));
  int64_t wo[4] = {1, 2, 10, 8};
  CHECK(tk_shape_is(out, 4, wo));
  ol_value_release(out);
  int64_t op[2] = {1, 1};
  ol_attr a2[2] = {tk_attr_ints("strides", st, 2), tk_attr_ints("output_padding", op, 2)};
  CHECK_OK(tk_run("ConvTranspose", 11, a2, 2, in, 2, &out, 1));
  CHECK(tk_shape_is(out, 4, wo));
  /* first row of the ONNX example (strides 3,2 + output_padding 1,1) */
  float row0[8] = {0, 0, 1, 1, 3, 2, 2, 0};
  ok = out != NULL;
  for (int i = 0; ok && i < 8; i++) ok = ((float *)ol_tdata(&out->tensor))[i] == row0[i];
  CHECK(ok);
  ol_value_release(out);
  tk_release_all(in, 2);
}

/* ------------------------------------------------------------ pooling */

static void test_pools(void) {
  int64_t dx[4] = {1, 1, 5, 5};
  ol_value *x = iota_f32(4, dx, 1);
  int64_t k5[2] = {5, 5}, p2[4] = {2, 2, 2, 2};
  ol_attr a[2] = {tk_attr_ints("kernel_shape", k5, 2), tk_attr_ints("pads", p2, 4)};
  ol_value *out[2] = {NULL, NULL};
  CHECK_OK(tk_run("MaxPool", 12, a, 2, &x, 1, out, 1));
  float wm[25] = {13, 14, 15, 15, 15, 18, 19, 20, 20, 20, 23, 24, 25, 25, 25,
                  23, 24, 25, 25, 25, 23, 24, 25, 25, 25};
  CHECK(tk_near_f32(out[0], wm, 25, 0));
  tk_release_all(out, 1);
  CHECK_OK(tk_run("AveragePool", 11, a, 2, &x, 1, out, 1));
  CHECK(out[0] && ((float *)ol_tdata(&out[0]->tensor))[0] == 7.0f &&
        ((float *)ol_tdata(&out[0]->tensor))[1] == 7.5f);
  tk_release_all(out, 1);
  ol_attr ci[3] = {a[0], a[1], tk_attr_int("count_include_pad", 1)};
  CHECK_OK(tk_run("AveragePool", 11, ci, 3, &x, 1, out, 1));
  CHECK(out[0] && fabsf(((float *)ol_tdata(&out[0]->tensor))[0] - 2.52f) < 1e-6f);
  tk_release_all(out, 1);

  /* MaxPool with Indices, both storage orders */
  int64_t k2[2] = {2, 2}, s2[2] = {2, 2};
  ol_attr b[3] = {tk_attr_ints("kernel_shape", k2, 2), tk_attr_ints("strides", s2, 2),
                  tk_attr_int("storage_order", 1)};
  CHECK_OK(tk_run("MaxPool", 12, b, 2, &x, 1, out, 2));
  float wv[4] = {7, 9, 17, 19};
  int64_t wi[4] = {6, 8, 16, 18};
  CHECK(tk_near_f32(out[0], wv, 4, 0) && eq_i64(out[1], wi, 4));
  tk_release_all(out, 2);
  CHECK_OK(tk_run("MaxPool", 12, b, 3, &x, 1, out, 2));
  int64_t wc[4] = {6, 16, 8, 18};
  CHECK(eq_i64(out[1], wc, 4));
  tk_release_all(out, 2);

  /* ceil_mode: 4x4 input, kernel 3, stride 2 -> 2x2 */
  int64_t d4[4] = {1, 1, 4, 4};
  ol_value *y = iota_f32(4, d4, 1);
  int64_t k3[2] = {3, 3};
  ol_attr c[3] = {tk_attr_ints("kernel_shape", k3, 2), tk_attr_ints("strides", s2, 2),
                  tk_attr_int("ceil_mode", 1)};
  CHECK_OK(tk_run("MaxPool", 12, c, 3, &y, 1, out, 1));
  float wcm[4] = {11, 12, 15, 16};
  int64_t w22[4] = {1, 1, 2, 2};
  CHECK(tk_shape_is(out[0], 4, w22) && tk_near_f32(out[0], wcm, 4, 0));
  tk_release_all(out, 1);
  CHECK_OK(tk_run("MaxPool", 12, c, 2, &y, 1, out, 1));
  int64_t w11[4] = {1, 1, 1, 1};
  CHECK(tk_shape_is(out[0], 4, w11));
  tk_release_all(out, 1);
  /* dilations */
  int64_t dl[2] = {2, 2};
  ol_attr dd[2] = {tk_attr_ints("kernel_shape", k2, 2), tk_attr_ints("dilations", dl, 2)};
  CHECK_OK(tk_run("MaxPool", 12, dd, 2, &y, 1, out, 1));
  float wdl[4] = {11, 12, 15, 16};
  CHECK(tk_shape_is(out[0], 4, w22) && tk_near_f32(out[0], wdl, 4, 0));
  tk_release_all(out, 1);
  CHECK_STATUS(tk_run("MaxPool", 12, NULL, 0, &y, 1, out, 1), OL_INVALID_MODEL);

  /* global pools and LpPool */
  CHECK_OK(tk_run("GlobalAveragePool", 1, NULL, 0, &y, 1, out, 1));
  float ga = 8.5f;
  CHECK(tk_shape_is(out[0], 4, w11) && tk_near_f32(out[0], &ga, 1, 0));
  tk_release_all(out, 1);
  CHECK_OK(tk_run("GlobalMaxPool", 1, NULL, 0, &y, 1, out, 1));
  float gm = 16;
  CHECK(tk_near_f32(out[0], &gm, 1, 0));
  tk_release_all(out, 1);
  ol_attr lp[2] = {tk_attr_ints("kernel_shape", k2, 2), tk_attr_ints("strides", s2, 2)};
  CHECK_OK(tk_run("LpPool", 18, lp, 2, &y, 1, out, 1));
  float wlp = sqrtf(1 + 4 + 25 + 36);
  CHECK(out[0] && fabsf(((float *)ol_tdata(&out[0]->tensor))[0] - wlp) < 1e-5f);
  tk_release_all(out, 1);

  /* uint8 MaxPool (opset 12) */
  uint8_t u[16];
  for (int i = 0; i < 16; i++) u[i] = (uint8_t)(200 + i);
  ol_value *uq = tk_tensor(OL_DTYPE_UINT8, 4, d4, u);
  CHECK_OK(tk_run("MaxPool", 12, lp, 2, &uq, 1, out, 1));
  CHECK(out[0] && out[0]->tensor.dtype == OL_DTYPE_UINT8 && ((uint8_t *)ol_tdata(&out[0]->tensor))[3] == 215);
  tk_release_all(out, 1);
  CHECK_STATUS(tk_run("AveragePool", 12, lp, 2, &uq, 1, out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(uq);
  ol_value_release(y);
  ol_value_release(x);
}

OL_TEST_MAIN(TEST(test_softmax), TEST(test_layernorm), TEST(test_batch_instance_group_norm),
             TEST(test_lp_mvn_lrn), TEST(test_einsum), TEST(test_conv), TEST(test_conv_transpose),
             TEST(test_pools))
