/* NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: reductions, weights,
 * ignore_index, the log_prob output and error paths. Expected values are
 * computed by hand from the specification formulas. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static void test_nll(void) {
  int64_t d[2] = {2, 3}, dt[1] = {2}, dw[1] = {3};
  float x[6] = {-1, -2, -3, -0.5f, -1.5f, -2.5f};
  int64_t t[2] = {2, 0};
  float w[3] = {1, 2, 3};
  ol_value *in[3] = {tk_f32(2, d, x), tk_i64(1, dt, t), tk_f32(1, dw, w)};
  ol_value *out = NULL;
  ol_attr a[2] = {tk_attr_string("reduction", "none"), tk_attr_int("ignore_index", 0)};
  CHECK_OK(tk_run("NegativeLogLikelihoodLoss", 13, a, 1, in, 3, &out, 1));
  float none[2] = {9, 0.5f};
  CHECK(tk_shape_is(out, 1, dt));
  CHECK(tk_near_f32(out, none, 2, 1e-6f));
  ol_value_release(out);
  a[0] = tk_attr_string("reduction", "sum");
  CHECK_OK(tk_run("NegativeLogLikelihoodLoss", 13, a, 1, in, 3, &out, 1));
  float sum = 9.5f;
  CHECK(out && out->tensor.rank == 0 && tk_near_f32(out, &sum, 1, 1e-6f));
  ol_value_release(out);
  CHECK_OK(tk_run("NegativeLogLikelihoodLoss", 13, NULL, 0, in, 3, &out, 1)); /* mean */
  float mean = 9.5f / 4.0f;
  CHECK(tk_near_f32(out, &mean, 1, 1e-6f));
  ol_value_release(out);
  a[0] = tk_attr_string("reduction", "mean");
  CHECK_OK(tk_run("NegativeLogLikelihoodLoss", 22, a, 2, in, 3, &out, 1)); /* ignore class 0 */
  float mi = 3.0f;
  CHECK(tk_near_f32(out, &mi, 1, 1e-6f));
  ol_value_release(out);
  /* without weights */
  CHECK_OK(tk_run("NegativeLogLikelihoodLoss", 12, NULL, 0, in, 2, &out, 1));
  float mu = (3.0f + 0.5f) / 2.0f;
  CHECK(tk_near_f32(out, &mu, 1, 1e-6f));
  ol_value_release(out);
  tk_release_all(in, 3);
}

static void test_sce(void) {
  int64_t d[3] = {1, 3, 2}, dt[2] = {1, 2};
  float x[6] = {0, 1, 0, 1, 0, 1}; /* [N=1, C=3, D=2] */
  int64_t t[2] = {1, 2};
  ol_value *in[2] = {tk_f32(3, d, x), tk_i64(2, dt, t)};
  ol_value *out[2] = {NULL, NULL};
  ol_attr a[1] = {tk_attr_string("reduction", "none")};
  CHECK_OK(tk_run("SoftmaxCrossEntropyLoss", 13, a, 1, in, 2, out, 2));
  /* column 0: scores all 0 -> -log(1/3); column 1: all 1 -> same */
  float want[2] = {1.0986123f, 1.0986123f};
  CHECK(tk_near_f32(out[0], want, 2, 1e-6f));
  CHECK(tk_shape_is(out[1], 3, d));
  float lp = -1.0986123f;
  float lps[6] = {lp, lp, lp, lp, lp, lp};
  CHECK(tk_near_f32(out[1], lps, 6, 1e-6f));
  tk_release_all(out, 2);
  /* float64 and ignore_index */
  double xd[6] = {0, 1, 0, 1, 0, 1};
  ol_value *in64[2] = {tk_tensor(OL_DTYPE_DOUBLE, 3, d, xd), in[1]};
  ol_attr b[1] = {tk_attr_int("ignore_index", 2)};
  CHECK_OK(tk_run("SoftmaxCrossEntropyLoss", 12, b, 1, in64, 2, out, 1));
  CHECK(out[0] && out[0]->tensor.dtype == OL_DTYPE_DOUBLE &&
        fabs(((double *)ol_tdata(&out[0]->tensor))[0] - 1.0986122886681098) < 1e-12);
  tk_release_all(out, 2);
  ol_value_release(in64[0]);
  tk_release_all(in, 2);
}

static void test_errors(void) {
  int64_t d[2] = {2, 3}, dt[1] = {2};
  float x[6] = {0};
  int64_t t[2] = {5, 0};
  ol_value *in[2] = {tk_f32(2, d, x), tk_i64(1, dt, t)};
  ol_value *out = NULL;
  CHECK_STATUS(tk_run("NegativeLogLikelihoodLoss", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  out = NULL;
  ol_attr a[1] = {tk_attr_string("reduction", "avg")};
  CHECK_STATUS(tk_run("SoftmaxCrossEntropyLoss", 13, a, 1, in, 2, &out, 1), OL_INVALID_MODEL);
  int64_t d3[1] = {3};
  int64_t t3[3] = {0, 0, 0};
  ol_value *bad[2] = {in[0], tk_i64(1, d3, t3)};
  CHECK_STATUS(tk_run("SoftmaxCrossEntropyLoss", 13, NULL, 0, bad, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(bad[1]);
  tk_release_all(in, 2);
}

OL_TEST_MAIN(TEST(test_nll), TEST(test_sce), TEST(test_errors))
