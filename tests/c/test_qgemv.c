/* Block-quantized GEMV (simd/qgemv.c, the MatMulNBits token kernel): the
 * vector kernel equals its scalar reference bit for bit on many shapes
 * (4 and 8 bits, blocks 16..256, K not a multiple of the block, odd N, row
 * ranges starting anywhere, default / packed uint8 / float zero points,
 * bias), and both agree with a float64 dequantize-then-dot. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "simd/qgemv.h"

#include "test_random.h"
#include "nbits_case.h"

/* zmode 0: default, 1: packed uint8, 2: float */
static void run_case(int bits, int64_t K, int64_t N, int64_t block, int zmode, int with_bias) {
  nbits_case c = nbits_case_new(bits, K, N, block, 0);
  const ol_qgemv_shape s = c.s;
  const int64_t kb = c.kb, blob = c.blob, zrow = c.zrow;
  uint8_t *B = c.B, *zu = c.zu;
  float *a = c.a, *sc = c.sc, *zf = c.zf, *bias = c.bias, *want = c.want, *got = c.got;
  float *work = malloc(sizeof(float) * (size_t)ol_qgemv_work_floats(&s));
  const uint8_t *zpu = zmode == 1 ? zu : NULL;
  const float *zpf = zmode == 2 ? zf : NULL, *bp = with_bias ? bias : NULL;
  ol_qgemv_nbits_scalar(&s, a, B, sc, zpu, zpf, bp, want);
  ol_qgemv_prepare(&s, a, work);
  /* in two ranges split at an odd row */
  int64_t mid = N / 2 | 1;
  if (mid > N) mid = N;
  ol_qgemv_nbits(&s, work, B, sc, zpu, zpf, bp, 0, mid, got);
  ol_qgemv_nbits(&s, work, B, sc, zpu, zpf, bp, mid, N, got + mid);
  int bad = 0;
  for (int64_t n = 0; n < N; n++) {
    if (fbits(want[n]) != fbits(got[n])) bad++;
    double ref = with_bias ? bias[n] : 0.0, mag = fabs(ref);
    for (int64_t k = 0; k < K; k++) {
      int64_t j = k / block, e = k % block;
      const uint8_t *blk = B + (n * kb + j) * blob;
      int q = bits == 4 ? (e & 1 ? blk[e / 2] >> 4 : blk[e / 2] & 15) : blk[e];
      double z = zmode == 2 ? zf[n * kb + j]
                 : zmode == 1 ? (bits == 4 ? (j & 1 ? zu[n * zrow + j / 2] >> 4 : zu[n * zrow + j / 2] & 15)
                                           : zu[n * zrow + j])
                              : (double)(1 << (bits - 1));
      double t = (double)a[k] * ((q - z) * sc[n * kb + j]);
      ref += t, mag += fabs(t) + fabs(a[k] * z * sc[n * kb + j]);
    }
    if (fabs(ref - want[n]) > 1e-5 * mag + 1e-30) bad++;
  }
  if (bad) fprintf(stderr, "  bits %d K %lld N %lld block %lld zmode %d bias %d: %d bad\n", bits,
                   (long long)K, (long long)N, (long long)block, zmode, with_bias, bad);
  CHECK(bad == 0);
  nbits_case_free(&c);
  free(work);
}

static void test_qgemv_shapes(void) {
  const int64_t blocks[] = {16, 32, 64, 128, 256};
  const int64_t Ks[] = {1, 15, 16, 17, 31, 32, 33, 64, 100, 255, 256, 257, 512, 700};
  const int64_t Ns[] = {1, 2, 3, 7, 16, 33};
  for (int bits = 4; bits <= 8; bits += 4)
    for (int b = 0; b < 5; b++)
      for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++)
        for (int n = 0; n < (int)(sizeof Ns / sizeof Ns[0]); n++)
          for (int z = 0; z < 3; z++) run_case(bits, Ks[k], Ns[n], blocks[b], z, (k + n + z) & 1);
}

static void test_qgemv_large(void) {
  run_case(4, 2048, 130, 32, 0, 0);
  run_case(4, 1376, 64, 32, 1, 1);
  run_case(8, 2048, 65, 128, 2, 0);
  run_case(4, 4096, 9, 256, 2, 1);
}

OL_TEST_MAIN(TEST(test_qgemv_shapes), TEST(test_qgemv_large))
