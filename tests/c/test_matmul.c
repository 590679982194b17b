/* MatMul, Gemm, MatMulInteger. The float32 kernel must equal the plain
 * sequential-k scalar loop bit for bit for every shape (blocking and vector
 * paths must not change the summation order). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static bool eq_f32(const ol_value *v, const float *want, int64_t n) {
  if (!v || v->tensor.dtype != OL_DTYPE_FLOAT || ol_tcount(&v->tensor) != n) return false;
  const float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < n; i++)
    if (d[i] != want[i]) return false;
  return true;
}

static uint32_t rng_state = 12345;
static float rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xFFFF) / 32768.0f - 1.0f + 1e-3f * (float)(rng_state & 7);
}

static void test_matmul_small(void) {
  int64_t da[2] = {2, 3}, db[2] = {3, 2};
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12};
  ol_value *in[2] = {tk_f32(2, da, a), tk_f32(2, db, b)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1));
  int64_t w[2] = {2, 2};
  float want[4] = {58, 64, 139, 154};
  CHECK(tk_shape_is(out, 2, w) && eq_f32(out, want, 4));
  ol_value_release(out);
  CHECK_STATUS(tk_run("MatMul", 13, NULL, 0, (ol_value *[]){in[0], in[0]}, 2, &out, 1),
               OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "inner dimensions") != NULL);
  ol_value_release(in[0]);
  ol_value_release(in[1]);
}

static void test_matmul_exact_vs_scalar(void) {
  static const int64_t Ms[] = {1, 2, 3, 4, 5, 9, 33};
  static const int64_t Ns[] = {1, 3, 8, 9, 31, 520};
  static const int64_t Ks[] = {0, 1, 7, 300};
  int bad = 0;
  for (size_t mi = 0; mi < sizeof Ms / sizeof *Ms; mi++)
    for (size_t ni = 0; ni < sizeof Ns / sizeof *Ns; ni++)
      for (size_t ki = 0; ki < sizeof Ks / sizeof *Ks; ki++) {
        int64_t M = Ms[mi], N = Ns[ni], K = Ks[ki];
        int64_t da[2] = {M, K}, db[2] = {K, N};
        ol_value *in[2] = {tk_f32(2, da, NULL), tk_f32(2, db, NULL)};
        float *a = ol_tdata(&in[0]->tensor), *b = ol_tdata(&in[1]->tensor);
        for (int64_t i = 0; i < M * K; i++) a[i] = rnd();
        for (int64_t i = 0; i < K * N; i++) b[i] = rnd();
        ol_value *out = NULL;
        ol_status s = tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1);
        if (s != OL_OK || !out) {
          bad++;
        } else {
          const float *c = ol_tdata(&out->tensor);
          for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < N; j++) {
              float ref = 0.0f;
              for (int64_t k = 0; k < K; k++) ref = ref + a[i * K + k] * b[k * N + j];
              if (memcmp(&ref, &c[i * N + j], 4) != 0) bad++;
            }
        }
        ol_value_release(out);
        ol_value_release(in[0]);
        ol_value_release(in[1]);
      }
  CHECK(bad == 0);
}

static void test_matmul_batch_broadcast(void) {
  int64_t da[4] = {2, 1, 3, 4}, db[3] = {3, 4, 5};
  ol_value *in[2] = {tk_f32(4, da, NULL), tk_f32(3, db, NULL)};
  float *a = ol_tdata(&in[0]->tensor), *b = ol_tdata(&in[1]->tensor);
  for (int i = 0; i < 24; i++) a[i] = (float)(i % 7) - 3;
  for (int i = 0; i < 60; i++) b[i] = (float)(i % 5) - 2;
  ol_value *out = NULL;
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1));
  int64_t w[4] = {2, 3, 3, 5};
  CHECK(tk_shape_is(out, 4, w));
  bool ok = out != NULL;
  for (int p = 0; ok && p < 2; p++)
    for (int q = 0; q < 3; q++)
      for (int i = 0; i < 3; i++)
        for (int j = 0; j < 5; j++) {
          float ref = 0;
          for (int k = 0; k < 4; k++) ref = ref + a[p * 12 + i * 4 + k] * b[q * 20 + k * 5 + j];
          ok = ok && ((float *)ol_tdata(&out->tensor))[((p * 3 + q) * 3 + i) * 5 + j] == ref;
        }
  CHECK(ok);
  ol_value_release(out);
  ol_value_release(in[0]);
  ol_value_release(in[1]);

  /* 1-D operands */
  int64_t k3[1] = {3}, m23[2] = {3, 2};
  float v[3] = {1, 2, 3}, m[6] = {1, 0, 0, 1, 1, 1};
  ol_value *vin[2] = {tk_f32(1, k3, v), tk_f32(2, m23, m)};
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, vin, 2, &out, 1));
  int64_t w2[1] = {2};
  float want2[2] = {4, 5};
  CHECK(tk_shape_is(out, 1, w2) && eq_f32(out, want2, 2));
  ol_value_release(out);
  ol_value *dot[2] = {vin[0], vin[0]};
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, dot, 2, &out, 1));
  float want3 = 14;
  CHECK(out && out->tensor.rank == 0 && eq_f32(out, &want3, 1));
  ol_value_release(out);
  int64_t m32[2] = {2, 3};
  ol_value *mv[2] = {tk_f32(2, m32, m), vin[0]};
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, mv, 2, &out, 1));
  float want4[2] = {1, 6};
  CHECK(tk_shape_is(out, 1, w2) && eq_f32(out, want4, 2));
  ol_value_release(out);
  ol_value_release(mv[0]);
  ol_value_release(vin[0]);
  ol_value_release(vin[1]);
}

static void test_matmul_types(void) {
  int64_t d[2] = {2, 2};
  double a[4] = {1, 2, 3, 4};
  ol_value *in[2] = {tk_tensor(OL_DTYPE_DOUBLE, 2, d, a), tk_tensor(OL_DTYPE_DOUBLE, 2, d, a)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1));
  CHECK(out && ((double *)ol_tdata(&out->tensor))[3] == 22.0);
  ol_value_release(out);
  ol_value_release(in[0]);
  ol_value_release(in[1]);

  int64_t ia[4] = {1, -2, 3, 4};
  in[0] = tk_i64(2, d, ia);
  in[1] = tk_i64(2, d, ia);
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1));
  CHECK(out && ((int64_t *)ol_tdata(&out->tensor))[0] == -5 &&
        ((int64_t *)ol_tdata(&out->tensor))[3] == 10);
  ol_value_release(out);
  ol_value_release(in[1]);
  in[1] = tk_f32(2, d, NULL);
  CHECK_STATUS(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[0]);
  ol_value_release(in[1]);

  uint16_t h[4];
  float hf[4] = {1, 2, 3, 0.5f};
  for (int i = 0; i < 4; i++) h[i] = ol_f32_to_f16(hf[i]);
  in[0] = tk_tensor(OL_DTYPE_FLOAT16, 2, d, h);
  in[1] = tk_tensor(OL_DTYPE_FLOAT16, 2, d, h);
  CHECK_OK(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1));
  CHECK(out && out->tensor.dtype == OL_DTYPE_FLOAT16 &&
        ol_f16_to_f32(((uint16_t *)ol_tdata(&out->tensor))[3]) == 6.25f);
  ol_value_release(out);
  ol_value_release(in[0]);
  ol_value_release(in[1]);

  int8_t i8[4] = {1, 2, 3, 4};
  in[0] = tk_tensor(OL_DTYPE_INT8, 2, d, i8);
  in[1] = tk_tensor(OL_DTYPE_INT8, 2, d, i8);
  CHECK_STATUS(tk_run("MatMul", 13, NULL, 0, in, 2, &out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(in[0]);
  ol_value_release(in[1]);
}

static void test_gemm(void) {
  int64_t da[2] = {3, 2}, db[2] = {4, 3};
  float a[6] = {1, 2, 3, 4, 5, 6};   /* A^T is [2,3] */
  float b[12];
  for (int i = 0; i < 12; i++) b[i] = (float)(i + 1); /* B^T is [3,4] */
  int64_t dc[1] = {4};
  float c[4] = {1, 2, 3, 4};
  ol_value *in[3] = {tk_f32(2, da, a), tk_f32(2, db, b), tk_f32(1, dc, c)};
  ol_attr at[4] = {tk_attr_int("transA", 1), tk_attr_int("transB", 1), tk_attr_float("alpha", 2.0f),
                   tk_attr_float("beta", 0.5f)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Gemm", 13, at, 4, in, 3, &out, 1));
  int64_t w[2] = {2, 4};
  CHECK(tk_shape_is(out, 2, w));
  bool ok = out != NULL;
  for (int i = 0; ok && i < 2; i++)
    for (int j = 0; j < 4; j++) {
      float s = 0;
      for (int k = 0; k < 3; k++) s = s + a[k * 2 + i] * b[j * 3 + k];
      float ref = 2.0f * s + 0.5f * c[j];
      ok = ok && ((float *)ol_tdata(&out->tensor))[i * 4 + j] == ref;
    }
  CHECK(ok);
  ol_value_release(out);
  /* no C */
  CHECK_OK(tk_run("Gemm", 13, at, 2, in, 2, &out, 1));
  CHECK(out && ((float *)ol_tdata(&out->tensor))[0] == 1 * 1 + 3 * 2 + 5 * 3);
  ol_value_release(out);
  /* C of the wrong shape */
  ol_value_release(in[2]);
  int64_t dbad[1] = {3};
  in[2] = tk_f32(1, dbad, c);
  CHECK_STATUS(tk_run("Gemm", 13, at, 2, in, 3, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[2]);
  /* column C [2,1] broadcasts along N */
  int64_t dcol[2] = {2, 1};
  in[2] = tk_f32(2, dcol, c);
  CHECK_OK(tk_run("Gemm", 13, at, 2, in, 3, &out, 1));
  CHECK(out && ((float *)ol_tdata(&out->tensor))[5] == 2 + (2 * 4 + 4 * 5 + 6 * 6));
  ol_value_release(out);
  ol_value_release(in[0]);
  ol_value_release(in[1]);
  ol_value_release(in[2]);
}

static void test_matmul_integer(void) {
  int64_t da[2] = {2, 2};
  uint8_t a[4] = {11, 7, 3, 10};
  uint8_t b[4] = {1, 4, 2, 3};
  uint8_t za = 1, zb[2] = {1, 2};
  int64_t two = 2;
  ol_value *in[4] = {tk_tensor(OL_DTYPE_UINT8, 2, da, a), tk_tensor(OL_DTYPE_UINT8, 2, da, b),
                     tk_tensor(OL_DTYPE_UINT8, 0, NULL, &za),
                     tk_tensor(OL_DTYPE_UINT8, 1, &two, zb)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("MatMulInteger", 10, NULL, 0, in, 4, &out, 1));
  /* (a - 1) x (b - [1,2]) = [[10,6],[2,9]] x [[0,2],[1,1]] */
  int32_t want[4] = {6, 26, 9, 13};
  CHECK(out && out->tensor.dtype == OL_DTYPE_INT32 &&
        memcmp(ol_tdata(&out->tensor), want, sizeof want) == 0);
  ol_value_release(out);
  CHECK_OK(tk_run("MatMulInteger", 10, NULL, 0, in, 2, &out, 1));
  int32_t want2[4] = {11 + 14, 44 + 21, 3 + 20, 12 + 30};
  CHECK(out && memcmp(ol_tdata(&out->tensor), want2, sizeof want2) == 0);
  ol_value_release(out);
  for (int i = 0; i < 4; i++) ol_value_release(in[i]);
}

OL_TEST_MAIN(TEST(test_matmul_small), TEST(test_matmul_exact_vs_scalar),
             TEST(test_matmul_batch_broadcast), TEST(test_matmul_types), TEST(test_gemm),
             TEST(test_matmul_integer))
