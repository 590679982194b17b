/* Reductions: axes as attribute and input, keepdims, noop_with_empty_axes,
 * all ten operations, integer paths, empty reductions, errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static bool near_f32(const ol_value *v, const float *want, int64_t n, float tol) {
  if (!v || v->tensor.dtype != OL_DTYPE_FLOAT || ol_tcount(&v->tensor) != n) return false;
  const float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < n; i++) {
    if (isinf(want[i]) && d[i] == want[i]) continue;
    if (!(fabsf(d[i] - want[i]) <= tol * (1.0f + fabsf(want[i])))) return false;
  }
  return true;
}
static ol_value *vec_i64(int64_t n, const int64_t *v) { return tk_i64(1, &n, v); }

/* data [2,3]: 1 2 3 / 4 5 6 */
static ol_value *data23(void) {
  int64_t d[2] = {2, 3};
  float v[6] = {1, 2, 3, 4, 5, 6};
  return tk_f32(2, d, v);
}

static void test_reduce_mean_axes(void) {
  ol_value *x = data23();
  ol_value *out = NULL;
  /* default: all axes, keepdims */
  CHECK_OK(tk_run("ReduceMean", 13, NULL, 0, &x, 1, &out, 1));
  int64_t w11[2] = {1, 1};
  float m = 3.5f;
  CHECK(tk_shape_is(out, 2, w11) && near_f32(out, &m, 1, 0));
  ol_value_release(out);
  /* attribute axes (opset 13) */
  int64_t ax[1] = {-1};
  ol_attr a[2] = {tk_attr_ints("axes", ax, 1), tk_attr_int("keepdims", 0)};
  CHECK_OK(tk_run("ReduceMean", 13, a, 2, &x, 1, &out, 1));
  int64_t w2[1] = {2};
  float want[2] = {2, 5};
  CHECK(tk_shape_is(out, 1, w2) && near_f32(out, want, 2, 0));
  ol_value_release(out);
  /* axes input (opset 18), reducing the outer axis (inner kept path) */
  int64_t ax0[1] = {0};
  ol_value *in[2] = {x, vec_i64(1, ax0)};
  CHECK_OK(tk_run("ReduceMean", 18, NULL, 0, in, 2, &out, 1));
  int64_t w13[2] = {1, 3};
  float want2[3] = {2.5f, 3.5f, 4.5f};
  CHECK(tk_shape_is(out, 2, w13) && near_f32(out, want2, 3, 0));
  ol_value_release(out);
  /* attribute is ignored from 18 on: the input decides */
  CHECK_OK(tk_run("ReduceMean", 18, a + 1, 1, in, 2, &out, 1));
  int64_t w3[1] = {3};
  CHECK(tk_shape_is(out, 1, w3));
  ol_value_release(out);
  ol_value_release(in[1]);
  /* errors */
  int64_t dup[2] = {1, -1};
  in[1] = vec_i64(2, dup);
  CHECK_STATUS(tk_run("ReduceMean", 18, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  int64_t oob[1] = {2};
  in[1] = vec_i64(1, oob);
  CHECK_STATUS(tk_run("ReduceMean", 18, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  ol_value_release(x);
  int64_t one = 1;
  ol_value *s = tk_tensor(OL_DTYPE_STRING, 1, &one, NULL);
  CHECK_STATUS(tk_run("ReduceMean", 18, NULL, 0, &s, 1, &out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(s);
}

static void test_reduce_sum_noop(void) {
  ol_value *x = data23();
  ol_value *out = NULL;
  int64_t e[1] = {0};
  ol_value *in[2] = {x, tk_i64(1, e, NULL)};
  ol_attr noop = tk_attr_int("noop_with_empty_axes", 1);
  CHECK_OK(tk_run("ReduceSum", 13, &noop, 1, in, 2, &out, 1));
  int64_t d[2] = {2, 3};
  float v[6] = {1, 2, 3, 4, 5, 6};
  CHECK(tk_shape_is(out, 2, d) && near_f32(out, v, 6, 0));
  ol_value_release(out);
  /* empty axes without noop: reduce everything */
  CHECK_OK(tk_run("ReduceSum", 13, NULL, 0, in, 2, &out, 1));
  float s = 21;
  CHECK(near_f32(out, &s, 1, 0));
  ol_value_release(out);
  /* noop applies the element transform for SumSquare (ONNX reference) */
  CHECK_OK(tk_run("ReduceSumSquare", 18, &noop, 1, in, 2, &out, 1));
  float sq[6] = {1, 4, 9, 16, 25, 36};
  CHECK(near_f32(out, sq, 6, 0));
  ol_value_release(out);
  ol_value_release(in[1]);
  /* opset 11 ReduceSum takes attribute axes */
  int64_t ax[1] = {1};
  ol_attr a = tk_attr_ints("axes", ax, 1);
  CHECK_OK(tk_run("ReduceSum", 11, &a, 1, &x, 1, &out, 1));
  float want[2] = {6, 15};
  int64_t w[2] = {2, 1};
  CHECK(tk_shape_is(out, 2, w) && near_f32(out, want, 2, 0));
  ol_value_release(out);
  ol_value_release(x);
}

static void test_reduce_ops(void) {
  int64_t d[2] = {2, 2};
  float v[4] = {1, -2, 3, 0.5f};
  ol_value *x = tk_f32(2, d, v);
  int64_t ax[1] = {1};
  ol_attr a[2] = {tk_attr_ints("axes", ax, 1), tk_attr_int("keepdims", 0)};
  struct {
    const char *op;
    float want[2];
  } cases[] = {
      {"ReduceSum", {-1, 3.5f}},
      {"ReduceMax", {1, 3}},
      {"ReduceMin", {-2, 0.5f}},
      {"ReduceProd", {-2, 1.5f}},
      {"ReduceL1", {3, 3.5f}},
      {"ReduceL2", {2.2360680f, 3.0413813f}},
      {"ReduceSumSquare", {5, 9.25f}},
      {"ReduceLogSumExp", {1.0485874f, 3.0788897f}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    ol_value *out = NULL;
    CHECK_OK(tk_run(cases[i].op, 11, a, 2, &x, 1, &out, 1));
    bool ok = near_f32(out, cases[i].want, 2, 1e-6f);
    if (!ok) fprintf(stderr, "  %s mismatch\n", cases[i].op);
    CHECK(ok);
    ol_value_release(out);
  }
  ol_value *out = NULL;
  float pos[4] = {1, 2, 3, 4};
  ol_value *p = tk_f32(2, d, pos);
  CHECK_OK(tk_run("ReduceLogSum", 13, a, 2, &p, 1, &out, 1));
  float wl[2] = {1.0986123f, 1.9459101f};
  CHECK(near_f32(out, wl, 2, 1e-6f));
  ol_value_release(out);
  ol_value_release(p);
  /* LogSumExp stays finite for large inputs */
  float big[4] = {1000, 1000, -1000, -1000};
  ol_value *b = tk_f32(2, d, big);
  CHECK_OK(tk_run("ReduceLogSumExp", 13, a, 2, &b, 1, &out, 1));
  float wb[2] = {1000.6931472f, -999.3068528f};
  CHECK(near_f32(out, wb, 2, 1e-6f));
  ol_value_release(out);
  ol_value_release(b);
  /* NaN propagates through Max */
  float nanv[4] = {1, NAN, 3, 4};
  ol_value *n = tk_f32(2, d, nanv);
  CHECK_OK(tk_run("ReduceMax", 13, a, 2, &n, 1, &out, 1));
  CHECK(out && isnan(((float *)ol_tdata(&out->tensor))[0]) &&
        ((float *)ol_tdata(&out->tensor))[1] == 4);
  ol_value_release(out);
  ol_value_release(n);
  ol_value_release(x);
}

static void test_reduce_int_and_empty(void) {
  int64_t d[2] = {2, 3};
  int64_t v[6] = {INT64_MAX - 1, 1, 0, -5, 7, 2};
  ol_value *x = tk_i64(2, d, v);
  int64_t ax[1] = {1};
  ol_attr a[2] = {tk_attr_ints("axes", ax, 1), tk_attr_int("keepdims", 0)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("ReduceSum", 11, a, 2, &x, 1, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_INT64 &&
        ((int64_t *)ol_tdata(&out->tensor))[0] == INT64_MAX &&
        ((int64_t *)ol_tdata(&out->tensor))[1] == 4);
  ol_value_release(out);
  CHECK_OK(tk_run("ReduceMin", 11, a, 2, &x, 1, &out, 1));
  CHECK(out && ((int64_t *)ol_tdata(&out->tensor))[1] == -5);
  ol_value_release(out);
  CHECK_OK(tk_run("ReduceMean", 11, a, 2, &x, 1, &out, 1));
  CHECK(out && ((int64_t *)ol_tdata(&out->tensor))[1] == 1);
  ol_value_release(out);
  ol_value_release(x);

  int32_t i32[4] = {3, -4, 5, 6};
  int64_t d22[2] = {2, 2};
  ol_value *y = tk_tensor(OL_DTYPE_INT32, 2, d22, i32);
  CHECK_OK(tk_run("ReduceL1", 13, a, 2, &y, 1, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_INT32 && ((int32_t *)ol_tdata(&out->tensor))[0] == 7);
  ol_value_release(out);
  CHECK_OK(tk_run("ReduceL2", 13, a, 2, &y, 1, &out, 1));
  CHECK(out && ((int32_t *)ol_tdata(&out->tensor))[0] == 5); /* sqrt(25) */
  ol_value_release(out);
  ol_value_release(y);

  uint8_t bools[4] = {0, 1, 0, 0};
  ol_value *bv = tk_tensor(OL_DTYPE_BOOL, 2, d22, bools);
  ol_value *bin[2] = {bv, vec_i64(1, ax)};
  CHECK_OK(tk_run("ReduceMax", 20, a + 1, 1, bin, 2, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_BOOL && ((uint8_t *)ol_tdata(&out->tensor))[0] == 1 &&
        ((uint8_t *)ol_tdata(&out->tensor))[1] == 0);
  ol_value_release(out);
  CHECK_STATUS(tk_run("ReduceMax", 18, a + 1, 1, bin, 2, &out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(bin[1]);
  ol_value_release(bv);

  /* reducing an empty axis */
  int64_t de[2] = {2, 0};
  ol_value *e = tk_f32(2, de, NULL);
  CHECK_OK(tk_run("ReduceSum", 11, a, 2, &e, 1, &out, 1));
  float zeros[2] = {0, 0};
  CHECK(near_f32(out, zeros, 2, 0));
  ol_value_release(out);
  CHECK_OK(tk_run("ReduceMax", 11, a, 2, &e, 1, &out, 1));
  float ninf[2] = {-INFINITY, -INFINITY};
  CHECK(near_f32(out, ninf, 2, 0));
  ol_value_release(out);
  CHECK_OK(tk_run("ReduceProd", 11, a, 2, &e, 1, &out, 1));
  float ones[2] = {1, 1};
  CHECK(near_f32(out, ones, 2, 0));
  ol_value_release(out);
  ol_value_release(e);
}

static void test_reduce_3d_middle(void) {
  /* [2,3,4] reduce axis 1 and axes {0,2}; compare with direct loops */
  int64_t d[3] = {2, 3, 4};
  ol_value *x = tk_f32(3, d, NULL);
  float *v = ol_tdata(&x->tensor);
  for (int i = 0; i < 24; i++) v[i] = (float)((i * 7) % 11) - 5.0f;
  int64_t ax[1] = {1};
  ol_attr a = tk_attr_ints("axes", ax, 1);
  ol_value *out = NULL;
  CHECK_OK(tk_run("ReduceSum", 11, &a, 1, &x, 1, &out, 1));
  bool ok = out != NULL;
  for (int i = 0; ok && i < 2; i++)
    for (int k = 0; k < 4; k++) {
      float s = 0;
      for (int j = 0; j < 3; j++) s += v[(i * 3 + j) * 4 + k];
      ok = ((float *)ol_tdata(&out->tensor))[i * 4 + k] == s;
    }
  CHECK(ok);
  ol_value_release(out);
  int64_t ax2[2] = {0, 2};
  ol_attr a2 = tk_attr_ints("axes", ax2, 2);
  CHECK_OK(tk_run("ReduceMax", 11, &a2, 1, &x, 1, &out, 1));
  int64_t w[3] = {1, 3, 1};
  CHECK(tk_shape_is(out, 3, w));
  ok = out != NULL;
  for (int j = 0; ok && j < 3; j++) {
    float m = -INFINITY;
    for (int i = 0; i < 2; i++)
      for (int k = 0; k < 4; k++) m = fmaxf(m, v[(i * 3 + j) * 4 + k]);
    ok = ((float *)ol_tdata(&out->tensor))[j] == m;
  }
  CHECK(ok);
  ol_value_release(out);
  ol_value_release(x);
}

OL_TEST_MAIN(TEST(test_reduce_mean_axes), TEST(test_reduce_sum_noop), TEST(test_reduce_ops),
             TEST(test_reduce_int_and_empty), TEST(test_reduce_3d_middle))
