/* DFT (17 and 20 forms), STFT, Hann/Hamming/Blackman windows and
 * MelWeightMatrix: main semantics and error paths, expected values from
 * the closed forms. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static void test_dft(void) {
  int64_t d[3] = {1, 4, 1};
  float x[4] = {1, 2, 3, 4};
  ol_value *in = tk_f32(3, d, x);
  ol_value *out = NULL;
  CHECK_OK(tk_run("DFT", 17, NULL, 0, &in, 1, &out, 1));
  float want[8] = {10, 0, -2, 2, -2, 0, -2, -2};
  int64_t od[3] = {1, 4, 2};
  CHECK(tk_shape_is(out, 3, od) && tk_near_f32(out, want, 8, 1e-6f));
  /* inverse of the spectrum gives the signal back */
  ol_value *back = NULL;
  ol_attr inv[1] = {tk_attr_int("inverse", 1)};
  CHECK_OK(tk_run("DFT", 17, inv, 1, &out, 1, &back, 1));
  float sig[8] = {1, 0, 2, 0, 3, 0, 4, 0};
  CHECK(tk_near_f32(back, sig, 8, 1e-6f));
  ol_value_release(back);
  ol_value_release(out);
  /* onesided, zero padded to dft_length 6 */
  int64_t n6 = 6;
  ol_value *len = tk_i64(0, NULL, &n6);
  ol_value *in2[2] = {in, len};
  ol_attr one[1] = {tk_attr_int("onesided", 1)};
  CHECK_OK(tk_run("DFT", 17, one, 1, in2, 2, &out, 1));
  int64_t o4[3] = {1, 4, 2};
  CHECK(tk_shape_is(out, 3, o4));
  if (out) CHECK(fabsf(((float *)ol_tdata(&out->tensor))[0] - 10.0f) < 1e-6f);
  ol_value_release(out);
  /* opset 20: axis is an input; -2 (default) is the signal axis */
  int64_t ax = 1;
  ol_value *axv = tk_i64(0, NULL, &ax);
  ol_value *in3[3] = {in, NULL, axv};
  CHECK_OK(tk_run("DFT", 20, NULL, 0, in3, 3, &out, 1));
  CHECK(tk_near_f32(out, want, 8, 1e-6f));
  ol_value_release(out);
  out = NULL;
  *(int64_t *)ol_tdata(&axv->tensor) = 2; /* the complex dimension is not a signal axis */
  CHECK_STATUS(tk_run("DFT", 20, NULL, 0, in3, 3, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(axv);
  ol_value_release(len);
  ol_value_release(in);
}

static void test_windows(void) {
  int64_t n = 4;
  ol_value *in = tk_i64(0, NULL, &n);
  ol_value *out = NULL;
  CHECK_OK(tk_run("HannWindow", 17, NULL, 0, &in, 1, &out, 1));
  float hann[4] = {0, 0.5f, 1, 0.5f};
  CHECK(tk_near_f32(out, hann, 4, 1e-6f));
  ol_value_release(out);
  ol_attr sym[1] = {tk_attr_int("periodic", 0)};
  CHECK_OK(tk_run("HammingWindow", 17, sym, 1, &in, 1, &out, 1));
  float a0 = 25.0f / 46.0f;
  float ham[4] = {2 * a0 - 1, a0 - (1 - a0) * -0.5f, a0 - (1 - a0) * -0.5f, 2 * a0 - 1};
  CHECK(tk_near_f32(out, ham, 4, 1e-6f));
  ol_value_release(out);
  CHECK_OK(tk_run("BlackmanWindow", 17, NULL, 0, &in, 1, &out, 1));
  float bl[4] = {0, 0.34f, 1, 0.34f};
  CHECK(tk_near_f32(out, bl, 4, 1e-6f));
  ol_value_release(out);
  ol_attr dt[1] = {tk_attr_int("output_datatype", OL_DTYPE_DOUBLE)};
  CHECK_OK(tk_run("HannWindow", 17, dt, 1, &in, 1, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_DOUBLE);
  ol_value_release(out);
  ol_attr bad[1] = {tk_attr_int("output_datatype", OL_DTYPE_STRING)};
  CHECK_STATUS(tk_run("HannWindow", 17, bad, 1, &in, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(in);
}

static void test_stft(void) {
  int64_t d[3] = {1, 8, 1};
  float x[8] = {1, 1, 1, 1, 1, 1, 1, 1};
  int64_t step = 2, fl = 4;
  ol_value *in[4] = {tk_f32(3, d, x), tk_i64(0, NULL, &step), NULL, tk_i64(0, NULL, &fl)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("STFT", 17, NULL, 0, in, 4, &out, 1));
  int64_t od[4] = {1, 3, 3, 2};
  CHECK(tk_shape_is(out, 4, od));
  if (tk_shape_is(out, 4, od)) {
    const float *y = ol_tdata(&out->tensor);
    CHECK(y[0] == 4.0f && fabsf(y[2]) < 1e-6f && fabsf(y[4]) < 1e-6f);
  }
  ol_value_release(out);
  out = NULL;
  int64_t big = 9;
  ol_value *bl = tk_i64(0, NULL, &big);
  ol_value *in2[4] = {in[0], in[1], NULL, bl};
  CHECK_STATUS(tk_run("STFT", 17, NULL, 0, in2, 4, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(bl);
  tk_release_all(in, 4);
}

static void test_mel(void) {
  int64_t nmel = 8, dft = 16, rate = 8192;
  float lo = 0, hi = 4096;
  ol_value *in[5] = {tk_i64(0, NULL, &nmel), tk_i64(0, NULL, &dft), tk_i64(0, NULL, &rate), tk_f32(0, NULL, &lo),
                     tk_f32(0, NULL, &hi)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("MelWeightMatrix", 17, NULL, 0, in, 5, &out, 1));
  int64_t od[2] = {9, 8};
  CHECK(tk_shape_is(out, 2, od));
  if (tk_shape_is(out, 2, od)) {
    /* every band peaks at exactly 1 */
    const float *y = ol_tdata(&out->tensor);
    for (int b = 0; b < 8; b++) {
      float m = 0;
      for (int r = 0; r < 9; r++) m = y[r * 8 + b] > m ? y[r * 8 + b] : m;
      CHECK(m == 1.0f);
    }
  }
  ol_value_release(out);
  out = NULL;
  float bad = 9000;
  ol_value *hv = tk_f32(0, NULL, &bad);
  ol_value *in2[5] = {in[0], in[1], in[2], in[3], hv};
  CHECK_STATUS(tk_run("MelWeightMatrix", 17, NULL, 0, in2, 5, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(hv);
  tk_release_all(in, 5);
}

OL_TEST_MAIN(TEST(test_dft), TEST(test_windows), TEST(test_stft), TEST(test_mel))
