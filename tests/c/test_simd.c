/* The 128-bit vector layer (simd/vec.h) and the float32 GEMM/GEMV kernels
 * (simd/gemm.c): every vector kernel equals its scalar reference bit for bit,
 * on many shapes including the edges (n not a multiple of 4 or 8, k = 0 and
 * 1, m = 1, padded leading dimensions, several cache blocks). */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/status.h"
#include "simd/gemm.h"
#include "simd/vec.h"

#define TEST_RANDOM_EXPONENTS 13
#include "test_random.h"

/* ------------------------------------------------------------ vec.h */

/* ol_i16x8_dot_i8x16_u7 (the relaxed-SIMD dot where OL_VEC_DOT_I8),
 * ol_i16x8_add and ol_i32x4_sum_i16x8_pairs equal plain integer sums for
 * every signed byte against 0..127, the extremes included (-128 * 127
 * pairs: no 16-bit sum saturates). */
static void test_vec_dot_i8(void) {
  for (int round = 0; round < 2000; round++) {
    int8_t a[16];
    uint8_t b[16];
    int16_t c[8], want16[8], got16[8];
    int32_t want[4], got[4];
    for (int i = 0; i < 16; i++) {
      uint32_t r = next_u32();
      a[i] = round < 2 ? (int8_t)(round ? 127 : -128) : (int8_t)(r & 0xff);
      b[i] = round < 2 ? 127 : (uint8_t)((r >> 8) % 128);
    }
    for (int j = 0; j < 8; j++) {
      c[j] = (int16_t)((int32_t)(next_u32() % 1024) - 512);
      want16[j] = (int16_t)(c[j] + a[2 * j] * b[2 * j] + a[2 * j + 1] * b[2 * j + 1]);
    }
    for (int l = 0; l < 4; l++) want[l] = (int32_t)want16[2 * l] + want16[2 * l + 1];
    ol_i32x4 s = ol_i16x8_add(ol_i32x4_load(c), ol_i16x8_dot_i8x16_u7(ol_i32x4_load(a), ol_i32x4_load(b)));
    memcpy(got16, &s, sizeof got16);
    ol_i32x4 w = ol_i32x4_sum_i16x8_pairs(s, ol_i32x4_opaque(ol_i16x8_splat(1)));
    for (int l = 0; l < 4; l++) got[l] = ol_i32x4_lane(w, l);
    CHECK(memcmp(got16, want16, sizeof got16) == 0);
    CHECK(memcmp(got, want, sizeof got) == 0);
  }
}

static void test_vec_lanewise(void) {
  const float xs[] = {1.5f, -2.25f, 0.0f, -0.0f, INFINITY, -INFINITY, NAN, 3e38f, 1e-40f, -7.0f, 0.1f, 1.0f};
  const int n = (int)(sizeof xs / sizeof xs[0]);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      float a4[4] = {xs[i], xs[j], xs[(i + j) % n], xs[(i * 7 + 3) % n]};
      float b4[4] = {xs[j], xs[i], xs[(i + 2 * j) % n], xs[(j * 5 + 1) % n]};
      ol_f32x4 a = ol_f32x4_load(a4), b = ol_f32x4_load(b4);
      float r[6][4];
      ol_f32x4_store(r[0], ol_f32x4_add(a, b));
      ol_f32x4_store(r[1], ol_f32x4_sub(a, b));
      ol_f32x4_store(r[2], ol_f32x4_mul(a, b));
      ol_f32x4_store(r[3], ol_f32x4_div(a, b));
      ol_f32x4_store(r[4], ol_f32x4_max(a, b));
      ol_f32x4_store(r[5], ol_f32x4_min(a, b));
      for (int l = 0; l < 4; l++) {
        float x = a4[l], y = b4[l];
        float want[6] = {x + y, x - y, x * y, x / y, x > y ? x : y, x < y ? x : y};
        for (int o = 0; o < 6; o++) {
          /* NaN payloads may differ between ISAs: compare NaN-ness, else bits */
          if (isnan(want[o])) CHECK(isnan(r[o][l]));
          else CHECK(fbits(r[o][l]) == fbits(want[o]));
        }
      }
    }
}

static void test_vec_horizontal(void) {
  for (int t = 0; t < 1000; t++) {
    float f[4] = {rnd(), rnd(), rnd(), rnd()};
    ol_f32x4 v = ol_f32x4_load(f);
    CHECK(fbits(ol_f32x4_hsum(v)) == fbits((f[0] + f[1]) + (f[2] + f[3])));
    float x = f[0] > f[1] ? f[0] : f[1], y = f[2] > f[3] ? f[2] : f[3];
    CHECK(fbits(ol_f32x4_hmax(v)) == fbits(x > y ? x : y));
    ol_f32x4 s = ol_f32x4_splat(f[1]);
    for (int l = 0; l < 4; l++) CHECK(fbits(ol_f32x4_lane(s, l)) == fbits(f[1]));
    float acc[4] = {rnd(), rnd(), rnd(), rnd()}, out[4];
    ol_f32x4_store(out, ol_f32x4_muladd(ol_f32x4_load(acc), v, s));
    for (int l = 0; l < 4; l++) {
      float p = f[l] * f[1];
      CHECK(fbits(out[l]) == fbits(acc[l] + p));
    }
  }
  float z[4];
  ol_f32x4_store(z, ol_f32x4_zero());
  for (int l = 0; l < 4; l++) CHECK(fbits(z[l]) == 0);
}

/* ------------------------------------------------------------ gemm */

typedef struct gemm_case {
  int64_t m, n, k;
  int64_t pad; /* extra leading-dimension elements */
} gemm_case;

static int compare_kernels(gemm_case g) {
  int64_t lda = g.k + g.pad, ldb = g.n + g.pad, ldc = g.n + g.pad;
  size_t na = (size_t)(g.m * lda + 1), nb = (size_t)(g.k * ldb + 1), nc = (size_t)(g.m * ldc + 1);
  float *A = malloc(sizeof(float) * na), *B = malloc(sizeof(float) * nb);
  float *want = malloc(sizeof(float) * nc), *got = malloc(sizeof(float) * nc);
  for (size_t i = 0; i < na; i++) A[i] = rnd();
  for (size_t i = 0; i < nb; i++) B[i] = rnd();
  const float sentinel = -12345.5f; /* padding of C must stay untouched */
  for (size_t i = 0; i < nc; i++) want[i] = sentinel;
  ol_f32_gemm_scalar(g.m, g.n, g.k, A, lda, B, ldb, want, ldc);
  int bad = 0;
  for (int kernel = 0; kernel < 3; kernel++) {
    for (size_t i = 0; i < nc; i++) got[i] = sentinel;
    if (kernel == 0) ol_f32_gemv_simd128(g.m, g.n, g.k, A, lda, B, ldb, got, ldc);
    else if (kernel == 1) CHECK_OK(ol_f32_gemm_simd128(g.m, g.n, g.k, A, lda, B, ldb, got, ldc, NULL));
    else CHECK_OK(ol_f32_gemm(g.m, g.n, g.k, A, lda, B, ldb, got, ldc));
    if (memcmp(want, got, sizeof(float) * nc) != 0) {
      bad++;
      fprintf(stderr, "kernel %d differs from the scalar reference: m=%lld n=%lld k=%lld pad=%lld\n", kernel,
              (long long)g.m, (long long)g.n, (long long)g.k, (long long)g.pad);
    }
  }
  free(A), free(B), free(want), free(got);
  return bad;
}

static void test_gemm_edges(void) {
  const int64_t ms[] = {1, 2, 3, 4, 5, 7, 8, 9, 13};
  const int64_t ns[] = {1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 33};
  const int64_t ks[] = {0, 1, 2, 3, 4, 7, 8, 9, 17};
  for (size_t a = 0; a < sizeof ms / sizeof ms[0]; a++)
    for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++)
      for (size_t c = 0; c < sizeof ks / sizeof ks[0]; c++) {
        gemm_case g = {ms[a], ns[b], ks[c], (int64_t)((a + b + c) % 3)};
        CHECK(compare_kernels(g) == 0);
      }
}

/* Shapes crossing the cache blocks (KC = 256, NC = 512, GEMV columns 4096,
 * GEMV sums in registers up to 128 columns or 64K floats of B) and the
 * decoder shapes of bench/decode.mjs. */
static void test_gemm_blocks(void) {
  const gemm_case cases[] = {
      {1, 512, 512, 0},   {1, 1376, 512, 0},  {1, 512, 1376, 0},  {1, 4097, 9, 0},
      {1, 8200, 33, 1},   {2, 4100, 20, 3},   {8, 4095, 10, 1},   {3, 4096, 16, 0},   {1, 33000, 17, 0},  {5, 9000, 12, 2},   {8, 520, 300, 0},   {9, 520, 300, 0},
      {32, 172, 64, 0},   {32, 64, 172, 0},   {33, 513, 257, 2},  {17, 1030, 600, 1},
      {64, 96, 513, 0},   {5, 3, 1000, 0},    {12, 1, 1, 0},      {1, 1, 1000, 0},
      /* a decode step's attention (GEMV sums in registers): scores over 96,
       * 200 and 1000 keys, weights times 96 and 1000 values */
      {1, 96, 64, 0},     {1, 200, 64, 1},    {1, 1000, 64, 0},   {1, 64, 96, 2},     {1, 64, 1000, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) CHECK(compare_kernels(cases[i]) == 0);
}

/* The test can see an order change: summing the same products in another
 * order gives different bits for these inputs (guards against a vacuous test). */
static void test_gemm_order_matters(void) {
  enum { K = 300 };
  float a[K], b[K];
  for (int k = 0; k < K; k++) a[k] = rnd(), b[k] = rnd();
  float fwd = 0.0f, rev = 0.0f, got;
  for (int k = 0; k < K; k++) fwd = fwd + a[k] * b[k];
  for (int k = K - 1; k >= 0; k--) rev = rev + a[k] * b[k];
  CHECK(fbits(fwd) != fbits(rev));
  ol_f32_gemm_scalar(1, 1, K, a, K, b, 1, &got, 1);
  CHECK(fbits(got) == fbits(fwd));
}

/* Non-finite inputs propagate the same way (NaN-ness and infinities). */
static void test_gemm_nonfinite(void) {
  enum { M = 5, N = 11, K = 9 };
  float A[M * K], B[K * N], want[M * N], got[M * N];
  for (int i = 0; i < M * K; i++) A[i] = rnd();
  for (int i = 0; i < K * N; i++) B[i] = rnd();
  A[3] = INFINITY, A[K + 2] = NAN, B[5] = -INFINITY, B[N * 4 + 7] = 0.0f;
  ol_f32_gemm_scalar(M, N, K, A, K, B, N, want, N);
  CHECK_OK(ol_f32_gemm_simd128(M, N, K, A, K, B, N, got, N, NULL));
  for (int i = 0; i < M * N; i++) CHECK(isnan(want[i]) ? isnan(got[i]) : fbits(want[i]) == fbits(got[i]));
  ol_f32_gemv_simd128(M, N, K, A, K, B, N, got, N);
  for (int i = 0; i < M * N; i++) CHECK(isnan(want[i]) ? isnan(got[i]) : fbits(want[i]) == fbits(got[i]));
}

OL_TEST_MAIN(TEST(test_vec_dot_i8), TEST(test_vec_lanewise), TEST(test_vec_horizontal), TEST(test_gemm_edges),
             TEST(test_gemm_blocks), TEST(test_gemm_order_matters), TEST(test_gemm_nonfinite))
