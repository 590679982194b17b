/* MatMulNBits with int8 activations on weights in the quad layout (core/
 * value.h, simd/qgemv_i8_lane.h): the layout round-trips; the lane kernel
 * gives the scalar reference's bits on many shapes (4 and 8 bits, blocks
 * 16..256, K not a multiple of the block, N with tails, zero points, bias,
 * any row range, 1..4 rows). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/value.h"
#include "simd/qgemv_i8.h"
#include "simd/qgemv_i8_lane.h"

#define TEST_RANDOM_SEED 2654435769u
#include "test_random.h"

static void test_quad_round_trip(void) {
  const int64_t rows[] = {1, 3, 4, 5, 8, 11};
  const size_t row_bytes[] = {4, 8, 20, 64};
  for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
    for (size_t b = 0; b < sizeof row_bytes / sizeof row_bytes[0]; b++) {
      int64_t R = rows[r];
      size_t W = row_bytes[b], n = (size_t)R * W;
      uint8_t *dense = malloc(n), *q = malloc(n), *back = malloc(n), *scratch = malloc(4 * W);
      for (size_t i = 0; i < n; i++) dense[i] = (uint8_t)next_u32();
      memcpy(q, dense, n);
      ol_quad_from_dense(R, W, q, scratch);
      bool at = true;
      for (int64_t row = 0; row < R; row++)
        for (size_t w = 0; w < W / 4; w++) {
          int64_t g = row / 4 * 4;
          size_t place = row < R / 4 * 4 ? (size_t)g * W + 4 * (4 * w + (size_t)(row - g)) : (size_t)row * W + 4 * w;
          at = at && memcmp(q + place, dense + (size_t)row * W + 4 * w, 4) == 0;
        }
      CHECK(at);
      ol_quad_to_dense(R, W, q, back);
      CHECK(memcmp(back, dense, n) == 0);
      free(dense), free(q), free(back), free(scratch);
    }
}

/* zmode 0: default, 1: packed uint8, 2: float */
static void run_case(int bits, int64_t K, int64_t N, int64_t block, int zmode, int with_bias) {
  ol_qgemv_shape s = {K, N, block, bits};
  int64_t kb = (K + block - 1) / block, blob = block * bits / 8, zrow = (kb * bits + 7) / 8;
  uint8_t *B = malloc((size_t)(N * kb * blob)), *zu = malloc((size_t)(N * zrow)), *scratch = malloc((size_t)(4 * kb * blob));
  float *a = malloc(sizeof(float) * (size_t)K), *sc = malloc(sizeof(float) * (size_t)(N * kb));
  float *zf = malloc(sizeof(float) * (size_t)(N * kb)), *bias = malloc(sizeof(float) * (size_t)N);
  float *want = malloc(sizeof(float) * (size_t)N), *got = malloc(sizeof(float) * (size_t)N);
  void *work = malloc(ol_qgemv_i8_lane_work_bytes(&s));
  for (int64_t i = 0; i < N * kb * blob; i++) B[i] = (uint8_t)next_u32();
  for (int64_t i = 0; i < N * zrow; i++) zu[i] = (uint8_t)next_u32();
  for (int64_t i = 0; i < K; i++) a[i] = rnd();
  for (int64_t i = 0; i < N * kb; i++) sc[i] = rnd(), zf[i] = rnd() * 8.0f;
  for (int64_t i = 0; i < N; i++) bias[i] = rnd();
  const uint8_t *zpu = zmode == 1 ? zu : NULL;
  const float *zpf = zmode == 2 ? zf : NULL, *bp = with_bias ? bias : NULL;
  ol_qgemv_i8_nbits_scalar(&s, a, B, sc, zpu, zpf, bp, want);
  ol_quad_from_dense(N, (size_t)(kb * blob), B, scratch);
  ol_quad_from_dense(N, sizeof(float) * (size_t)kb, sc, scratch);
  ol_qgemv_i8_lane_prepare(&s, a, work);
  /* whole, split on a group boundary (as the threads split), split anywhere */
  int64_t splits[3][2] = {{N, N}, {N / 8 * 4, N}, {N / 2 | 1, N / 2 + 2}};
  int bad = 0;
  for (int k = 0; k < 3; k++) {
    int64_t c0 = splits[k][0] < N ? splits[k][0] : N, c1 = splits[k][1] < N ? splits[k][1] : N;
    if (c1 < c0) c1 = c0;
    memset(got, 0x55, sizeof(float) * (size_t)N);
    const void *w = work;
    ol_qgemv_i8_lane_rows(&s, &w, 1, B, sc, zpu, zpf, bp, 0, c0, got, 0);
    ol_qgemv_i8_lane_rows(&s, &w, 1, B, sc, zpu, zpf, bp, c0, c1, got + c0, 0);
    ol_qgemv_i8_lane_rows(&s, &w, 1, B, sc, zpu, zpf, bp, c1, N, got + c1, 0);
    for (int64_t n = 0; n < N; n++) bad += fbits(want[n]) != fbits(got[n]);
  }
  if (bad)
    fprintf(stderr, "  lane bits %d K %lld N %lld block %lld zmode %d bias %d: %d bad\n", bits, (long long)K,
            (long long)N, (long long)block, zmode, with_bias, bad);
  CHECK(bad == 0);
  free(B), free(zu), free(scratch), free(a), free(sc), free(zf), free(bias), free(want), free(got), free(work);
}

static void test_lane_shapes(void) {
  const int64_t blocks[] = {16, 32, 64, 128, 256};
  const int64_t Ks[] = {1, 15, 16, 17, 33, 100, 257, 700};
  const int64_t Ns[] = {1, 3, 4, 5, 8, 14, 33};
  for (int bits = 4; bits <= 8; bits += 4)
    for (int b = 0; b < 5; b++)
      for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++)
        for (int n = 0; n < (int)(sizeof Ns / sizeof Ns[0]); n++)
          for (int z = 0; z < 3; z++) run_case(bits, Ks[k], Ns[n], blocks[b], z, (k + n + z) & 1);
  run_case(4, 512, 1376, 32, 0, 0);
  run_case(4, 1376, 512, 32, 1, 1);
}

/* 1..4 rows at once give each row's single-row bits, the old kernel's too */
static void test_lane_rows(void) {
  const int64_t K = 300, N = 38, block = 32;
  for (int bits = 4; bits <= 8; bits += 4) {
    ol_qgemv_shape s = {K, N, block, bits};
    int64_t kb = (K + block - 1) / block, blob = block * bits / 8;
    uint8_t *B = malloc((size_t)(N * kb * blob)), *Q = malloc((size_t)(N * kb * blob)), *scratch = malloc((size_t)(4 * kb * blob));
    float *a = malloc(sizeof(float) * (size_t)(4 * K)), *sc = malloc(sizeof(float) * (size_t)(N * kb));
    float *scq = malloc(sizeof(float) * (size_t)(N * kb));
    float *one = malloc(sizeof(float) * (size_t)(4 * N)), *many = malloc(sizeof(float) * (size_t)(4 * N));
    size_t wb = ol_qgemv_i8_lane_work_bytes(&s), ob = ol_qgemv_i8_work_bytes(&s);
    char *work = malloc(4 * wb), *owork = malloc(4 * ob);
    for (int64_t i = 0; i < N * kb * blob; i++) B[i] = (uint8_t)next_u32();
    for (int64_t i = 0; i < 4 * K; i++) a[i] = rnd();
    for (int64_t i = 0; i < N * kb; i++) sc[i] = rnd();
    memcpy(Q, B, (size_t)(N * kb * blob));
    memcpy(scq, sc, sizeof(float) * (size_t)(N * kb));
    ol_quad_from_dense(N, (size_t)(kb * blob), Q, scratch);
    ol_quad_from_dense(N, sizeof(float) * (size_t)kb, scq, scratch);
    const void *works[4], *oworks[4];
    for (int r = 0; r < 4; r++) {
      works[r] = work + r * wb;
      oworks[r] = owork + r * ob;
      ol_qgemv_i8_lane_prepare(&s, a + r * K, work + r * wb);
      ol_qgemv_i8_prepare(&s, a + r * K, owork + r * ob);
      ol_qgemv_i8_lane_rows(&s, &works[r], 1, Q, scq, NULL, NULL, NULL, 0, N, one + r * N, 0);
    }
    for (int rows = 1; rows <= 4; rows++) {
      memset(many, 0, sizeof(float) * (size_t)(4 * N));
      ol_qgemv_i8_lane_rows(&s, works, rows, Q, scq, NULL, NULL, NULL, 0, N, many, N);
      CHECK(memcmp(one, many, sizeof(float) * (size_t)(rows * N)) == 0);
      memset(many, 0, sizeof(float) * (size_t)(4 * N));
      ol_qgemv_i8_nbits_rows(&s, oworks, rows, B, sc, NULL, NULL, NULL, 0, N, many, N);
      CHECK(memcmp(one, many, sizeof(float) * (size_t)(rows * N)) == 0);
    }
    free(B), free(Q), free(scratch), free(a), free(sc), free(scq), free(one), free(many), free(work), free(owork);
  }
}

OL_TEST_MAIN(TEST(test_quad_round_trip), TEST(test_lane_shapes), TEST(test_lane_rows))
