/* LSTM / GRU / RNN: directions, activations, peepholes, sequence_lens,
 * layout and error paths, against the specification equations evaluated
 * here in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static double sigm(double x) { return 1.0 / (1.0 + exp(-x)); }

static ol_attr strings_attr(const char *name, char **v, size_t n) {
  ol_attr a = {0};
  a.name = name;
  a.type = OL_ATTR_STRINGS;
  a.strings = v;
  a.count = n;
  return a;
}

/* RNN, hidden 1, input 1: h_t = tanh(w x_t + r h_{t-1} + wb + rb) */
static void test_rnn(void) {
  int64_t dx[3] = {3, 1, 1}, dw[3] = {1, 1, 1}, db[2] = {1, 2};
  float x[3] = {0.5f, -1.0f, 2.0f}, w[1] = {0.7f}, r[1] = {0.3f}, b[2] = {0.1f, -0.2f};
  ol_value *in[4] = {tk_f32(3, dx, x), tk_f32(3, dw, w), tk_f32(3, dw, r), tk_f32(2, db, b)};
  ol_value *out[2] = {NULL, NULL};
  ol_attr a[1] = {tk_attr_int("hidden_size", 1)};
  CHECK_OK(tk_run("RNN", 14, a, 1, in, 4, out, 2));
  float want[3];
  double h = 0;
  for (int t = 0; t < 3; t++) {
    h = tanh(0.7 * x[t] + 0.3 * h + 0.1 - 0.2);
    want[t] = (float)h;
  }
  int64_t yd[4] = {3, 1, 1, 1};
  CHECK(tk_shape_is(out[0], 4, yd));
  CHECK(tk_near_f32(out[0], want, 3, 1e-5f));
  CHECK(tk_near_f32(out[1], &want[2], 1, 1e-5f));
  tk_release_all(out, 2);
  /* reverse: processes t = 2, 1, 0 */
  ol_attr ar[2] = {tk_attr_int("hidden_size", 1), tk_attr_string("direction", "reverse")};
  CHECK_OK(tk_run("RNN", 14, ar, 2, in, 4, out, 2));
  h = 0;
  float wr[3];
  for (int t = 2; t >= 0; t--) {
    h = tanh(0.7 * x[t] + 0.3 * h + 0.1 - 0.2);
    wr[t] = (float)h;
  }
  CHECK(tk_near_f32(out[0], wr, 3, 1e-5f));
  CHECK(tk_near_f32(out[1], &wr[0], 1, 1e-5f));
  tk_release_all(out, 2);
  /* Relu activation */
  char *acts[1] = {"Relu"};
  ol_attr aa[2] = {tk_attr_int("hidden_size", 1), strings_attr("activations", acts, 1)};
  CHECK_OK(tk_run("RNN", 7, aa, 2, in, 4, out, 2));
  h = 0;
  float wl[3];
  for (int t = 0; t < 3; t++) {
    double v = 0.7 * x[t] + 0.3 * h + 0.1 - 0.2;
    h = v > 0 ? v : 0;
    wl[t] = (float)h;
  }
  CHECK(tk_near_f32(out[0], wl, 3, 1e-6f));
  tk_release_all(out, 2);
  tk_release_all(in, 4);
}

static void test_gru(void) {
  int64_t dx[3] = {2, 1, 1}, dw[3] = {1, 3, 1};
  float x[2] = {1.0f, -0.5f};
  float w[3] = {0.2f, -0.3f, 0.5f}, r[3] = {0.4f, 0.1f, -0.6f};
  ol_value *in[3] = {tk_f32(3, dx, x), tk_f32(3, dw, w), tk_f32(3, dw, r)};
  for (int lbr = 0; lbr < 2; lbr++) {
    ol_value *out[2] = {NULL, NULL};
    ol_attr a[2] = {tk_attr_int("hidden_size", 1), tk_attr_int("linear_before_reset", lbr)};
    CHECK_OK(tk_run("GRU", 14, a, 2, in, 3, out, 2));
    double h = 0;
    float want[2];
    for (int t = 0; t < 2; t++) {
      double z = sigm(0.2 * x[t] + 0.4 * h), rr = sigm(-0.3 * x[t] + 0.1 * h);
      double hh = lbr ? tanh(0.5 * x[t] + rr * (-0.6 * h)) : tanh(0.5 * x[t] + (rr * h) * -0.6);
      h = (1 - z) * hh + z * h;
      want[t] = (float)h;
    }
    CHECK(tk_near_f32(out[0], want, 2, 1e-5f));
    tk_release_all(out, 2);
  }
  tk_release_all(in, 3);
}

static void test_lstm(void) {
  /* T=2, B=2 with sequence_lens {2, 1}, hidden 1, peepholes */
  int64_t dx[3] = {2, 2, 1}, dw[3] = {1, 4, 1}, dl[1] = {2}, dp[2] = {1, 3};
  float x[4] = {1.0f, 0.5f, -1.0f, 9.0f}; /* x[t][b] */
  float w[4] = {0.1f, 0.2f, 0.3f, 0.4f}, r[4] = {-0.1f, 0.2f, -0.3f, 0.4f}, p[3] = {0.05f, -0.05f, 0.1f};
  int32_t lens[2] = {2, 1};
  ol_value *in[8] = {tk_f32(3, dx, x), tk_f32(3, dw, w), tk_f32(3, dw, r), NULL,
                     tk_tensor(OL_DTYPE_INT32, 1, dl, lens), NULL, NULL, tk_f32(2, dp, p)};
  ol_value *out[3] = {NULL, NULL, NULL};
  ol_attr a[1] = {tk_attr_int("hidden_size", 1)};
  CHECK_OK(tk_run("LSTM", 14, a, 1, in, 8, out, 3));
  float wy[4] = {0}, wh[2], wc[2];
  for (int b = 0; b < 2; b++) {
    double h = 0, c = 0;
    for (int t = 0; t < lens[b]; t++) {
      double xv = x[t * 2 + b];
      double i = sigm(0.1 * xv - 0.1 * h + 0.05 * c);
      double f = sigm(0.3 * xv - 0.3 * h + 0.1 * c);
      double g = tanh(0.4 * xv + 0.4 * h);
      c = f * c + i * g;
      double o = sigm(0.2 * xv + 0.2 * h - 0.05 * c);
      h = o * tanh(c);
      wy[t * 2 + b] = (float)h;
    }
    wh[b] = (float)h;
    wc[b] = (float)c;
  }
  CHECK(tk_near_f32(out[0], wy, 4, 1e-5f));
  CHECK(tk_near_f32(out[1], wh, 2, 1e-5f));
  CHECK(tk_near_f32(out[2], wc, 2, 1e-5f));
  tk_release_all(out, 3);
  /* bidirectional shapes with layout 1 */
  float w2[8] = {0.1f, 0.2f, 0.3f, 0.4f, 0.1f, 0.2f, 0.3f, 0.4f};
  int64_t dw2[3] = {2, 4, 1};
  ol_value *bi[3] = {in[0], tk_f32(3, dw2, w2), tk_f32(3, dw2, w2)};
  ol_attr ab[3] = {tk_attr_int("hidden_size", 1), tk_attr_string("direction", "bidirectional"),
                   tk_attr_int("layout", 1)};
  CHECK_OK(tk_run("LSTM", 14, ab, 3, bi, 3, out, 3));
  int64_t yd[4] = {2, 2, 2, 1}, hd[3] = {2, 2, 1};
  CHECK(tk_shape_is(out[0], 4, yd));
  CHECK(tk_shape_is(out[1], 3, hd));
  tk_release_all(out, 3);
  ol_value_release(bi[1]);
  ol_value_release(bi[2]);
  tk_release_all(in, 8);
}

static void test_errors(void) {
  int64_t dx[3] = {2, 1, 1}, dw[3] = {1, 4, 1};
  float x[2] = {0}, w[4] = {0};
  ol_value *in[3] = {tk_f32(3, dx, x), tk_f32(3, dw, w), tk_f32(3, dw, w)};
  ol_value *out[3] = {NULL, NULL, NULL};
  ol_attr a[2] = {tk_attr_int("hidden_size", 1), tk_attr_string("direction", "sideways")};
  CHECK_STATUS(tk_run("LSTM", 14, a, 2, in, 3, out, 3), OL_INVALID_MODEL);
  char *acts[1] = {"Sigmoid"};
  ol_attr b[2] = {tk_attr_int("hidden_size", 1), strings_attr("activations", acts, 1)};
  CHECK_STATUS(tk_run("LSTM", 14, b, 2, in, 3, out, 3), OL_INVALID_MODEL); /* needs 3 */
  char *unknown[1] = {"Swish"};
  ol_attr c[2] = {tk_attr_int("hidden_size", 1), strings_attr("activations", unknown, 1)};
  CHECK_STATUS(tk_run("RNN", 14, c, 2, in, 3, out, 2), OL_INVALID_MODEL);
  /* GRU with LSTM-sized weights: W must be [1, 3, 1] */
  CHECK_STATUS(tk_run("GRU", 14, a, 1, in, 3, out, 2), OL_INVALID_ARGUMENT);
  tk_release_all(out, 3);
  int64_t dl[1] = {1};
  int64_t lens[1] = {5};
  ol_value *in2[5] = {in[0], in[1], in[2], NULL, tk_i64(1, dl, lens)};
  CHECK_STATUS(tk_run("LSTM", 14, a, 1, in2, 5, out, 3), OL_INVALID_ARGUMENT); /* length > T */
  tk_release_all(out, 3);
  ol_value_release(in2[4]);
  tk_release_all(in, 3);
}

OL_TEST_MAIN(TEST(test_rnn), TEST(test_gru), TEST(test_lstm), TEST(test_errors))
