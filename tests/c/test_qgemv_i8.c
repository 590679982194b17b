/* MatMulNBits with int8 activations (simd/qgemv_i8.c, accuracy_level 4):
 * the vector kernel equals its scalar reference bit for bit on many shapes
 * (4 and 8 bits, blocks 16..256, K not a multiple of the block, odd N, row
 * ranges starting anywhere, default / packed uint8 / float zero points,
 * bias), and stays within the int8 rounding error of a float64
 * dequantize-then-dot (half a step of each block's activation scale).
 * The activation codes (ol_qgemv_i8_quantize_block, vectorized for finite
 * blocks) equal the rule written out element by element here, on random
 * blocks, exact ties, zeros, NaN, infinities, subnormal and huge values,
 * and partial last blocks. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "simd/qgemv_i8.h"

#define TEST_RANDOM_SEED 88172645u
#include "test_random.h"
#include "nbits_case.h"

/* zmode 0: default, 1: packed uint8, 2: float; zero_a: an all-zero row */
static void run_case(int bits, int64_t K, int64_t N, int64_t block, int zmode, int with_bias, int zero_a) {
  nbits_case c = nbits_case_new(bits, K, N, block, zero_a);
  const ol_qgemv_shape s = c.s;
  const int64_t kb = c.kb, blob = c.blob, zrow = c.zrow;
  uint8_t *B = c.B, *zu = c.zu;
  float *a = c.a, *sc = c.sc, *zf = c.zf, *bias = c.bias, *want = c.want, *got = c.got;
  void *work = malloc(ol_qgemv_i8_work_bytes(&s));
  const uint8_t *zpu = zmode == 1 ? zu : NULL;
  const float *zpf = zmode == 2 ? zf : NULL, *bp = with_bias ? bias : NULL;
  ol_qgemv_i8_nbits_scalar(&s, a, B, sc, zpu, zpf, bp, want);
  ol_qgemv_i8_prepare(&s, a, work);
  int64_t mid = N / 2 | 1;
  if (mid > N) mid = N;
  ol_qgemv_i8_nbits(&s, work, B, sc, zpu, zpf, bp, 0, mid, got);
  ol_qgemv_i8_nbits(&s, work, B, sc, zpu, zpf, bp, mid, N, got + mid);
  int bad = 0;
  for (int64_t n = 0; n < N; n++) {
    if (fbits(want[n]) != fbits(got[n])) bad++;
    /* float64 reference; each activation is off by at most half its block's
     * step max|a| / 254, which bounds the error by sum |w| * step / 2 */
    double ref = with_bias ? bias[n] : 0.0, bound = 1e-6 * fabs(ref);
    for (int64_t j = 0; j < kb; j++) {
      double amax = 0.0;
      for (int64_t e = j * block; e < K && e < (j + 1) * block; e++) amax = fmax(amax, fabs(a[e]));
      for (int64_t k = j * block; k < K && k < (j + 1) * block; k++) {
        int64_t e = k % block;
        const uint8_t *blk = B + (n * kb + j) * blob;
        int q = bits == 4 ? (e & 1 ? blk[e / 2] >> 4 : blk[e / 2] & 15) : blk[e];
        double z = zmode == 2 ? zf[n * kb + j]
                   : zmode == 1 ? (bits == 4 ? (j & 1 ? zu[n * zrow + j / 2] >> 4 : zu[n * zrow + j / 2] & 15)
                                             : zu[n * zrow + j])
                                : (double)(1 << (bits - 1));
        double w = (q - z) * sc[n * kb + j];
        ref += (double)a[k] * w;
        bound += fabs(w) * (amax / 254.0 * 1.0001) + 1e-6 * fabs(a[k] * w);
      }
    }
    if (fabs(ref - want[n]) > bound + 1e-30) bad++;
  }
  if (bad)
    fprintf(stderr, "  bits %d K %lld N %lld block %lld zmode %d bias %d zero %d: %d bad\n", bits, (long long)K,
            (long long)N, (long long)block, zmode, with_bias, zero_a, bad);
  CHECK(bad == 0);
  nbits_case_free(&c);
  free(work);
}

/* 1..4 rows at once give each row's single-row bits */
static void test_qgemv_i8_rows(void) {
  const int64_t K = 300, N = 37, block = 32;
  for (int bits = 4; bits <= 8; bits += 4) {
    ol_qgemv_shape s = {K, N, block, bits};
    int64_t kb = (K + block - 1) / block, blob = block * bits / 8;
    uint8_t *B = malloc((size_t)(N * kb * blob));
    float *a = malloc(sizeof(float) * (size_t)(4 * K)), *sc = malloc(sizeof(float) * (size_t)(N * kb));
    float *one = malloc(sizeof(float) * (size_t)(4 * N)), *many = malloc(sizeof(float) * (size_t)(4 * N));
    size_t wb = ol_qgemv_i8_work_bytes(&s);
    char *work = malloc(4 * wb);
    for (int64_t i = 0; i < N * kb * blob; i++) B[i] = (uint8_t)next_u32();
    for (int64_t i = 0; i < 4 * K; i++) a[i] = rnd();
    for (int64_t i = 0; i < N * kb; i++) sc[i] = rnd();
    const void *works[4];
    for (int r = 0; r < 4; r++) {
      works[r] = work + r * wb;
      ol_qgemv_i8_prepare(&s, a + r * K, work + r * wb);
      ol_qgemv_i8_nbits(&s, works[r], B, sc, NULL, NULL, NULL, 0, N, one + r * N);
    }
    for (int rows = 1; rows <= 4; rows++) {
      memset(many, 0, sizeof(float) * (size_t)(4 * N));
      ol_qgemv_i8_nbits_rows(&s, works, rows, B, sc, NULL, NULL, NULL, 0, N, many, N);
      CHECK(memcmp(one, many, sizeof(float) * (size_t)(rows * N)) == 0);
    }
    free(B), free(a), free(sc), free(one), free(many), free(work);
  }
}

static void test_qgemv_i8_shapes(void) {
  const int64_t blocks[] = {16, 32, 64, 128, 256};
  const int64_t Ks[] = {1, 15, 16, 17, 31, 32, 33, 64, 100, 255, 256, 257, 512, 700};
  const int64_t Ns[] = {1, 2, 3, 7, 16, 33};
  for (int bits = 4; bits <= 8; bits += 4)
    for (int b = 0; b < 5; b++)
      for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++)
        for (int n = 0; n < (int)(sizeof Ns / sizeof Ns[0]); n++)
          for (int z = 0; z < 3; z++) run_case(bits, Ks[k], Ns[n], blocks[b], z, (k + n + z) & 1, 0);
}

static void test_qgemv_i8_edges(void) {
  run_case(4, 2048, 130, 32, 0, 0, 0);
  run_case(4, 1376, 64, 32, 1, 1, 0);
  run_case(8, 2048, 65, 128, 2, 0, 0);
  run_case(4, 4096, 9, 256, 2, 1, 0);
  run_case(4, 100, 5, 32, 1, 1, 1); /* all-zero activations: scale 0, bias only */
  run_case(8, 64, 4, 16, 0, 0, 1);
}

/* qgemv_i8.h's rule for block j, element by element */
static float rule_codes(const ol_qgemv_shape *s, const float *a, int64_t j, int16_t *q) {
  int64_t e0 = j * s->block, n = s->K - e0 < s->block ? s->K - e0 : s->block;
  float amax = 0.0f;
  for (int64_t e = 0; e < n; e++)
    if (fabsf(a[e0 + e]) > amax) amax = fabsf(a[e0 + e]);
  float inv = amax > 0.0f ? 127.0f / amax : 0.0f;
  for (int64_t e = 0; e < s->block; e++) {
    float r = e < n ? nearbyintf(a[e0 + e] * inv) : 0.0f;
    q[e] = (int16_t)(r != r ? 0 : r > 127.0f ? 127 : r < -127.0f ? -127 : r); /* a NaN's code: 0 */
  }
  return amax / 127.0f;
}

static void test_quantize_block_rule(void) {
  const int64_t blocks[] = {16, 32, 64, 128, 256}, tails[] = {0, 5, 8, 13};
  float a[1024];
  int bad = 0, cases = 0;
  for (int kind = 0; kind < 8; kind++)
    for (size_t bi = 0; bi < 5; bi++)
      for (size_t ti = 0; ti < 4; ti++) {
        const int64_t block = blocks[bi], K = 3 * block + tails[ti];
        for (int64_t i = 0; i < K; i++) {
          float r = rnd();
          switch (kind) {
          case 0: a[i] = r; break;
          case 1: a[i] = (float)((int)(r * 254.0f)) / 2.0f + (i % 3 ? 0.0f : 0.5f); break; /* ties once amax is 127 */
          case 2: a[i] = i % 7 ? 0.0f : r; break;
          case 3: a[i] = i == K / 2 ? NAN : r; break;
          case 4: a[i] = i == 1 ? -INFINITY : r; break;
          case 5: a[i] = r * 1e-39f; break; /* subnormal maximum: 127 / amax overflows */
          case 6: a[i] = r * 3e38f; break;  /* the block's sum overflows */
          default: a[i] = i % 2 ? -0.0f : 0.0f; break;
          }
        }
        if (kind == 1) a[0] = 127.0f;
        const ol_qgemv_shape s = {.K = K, .N = 1, .block = block, .bits = 4};
        for (int64_t j = 0; j * block < K; j++) {
          int16_t want[256], got[256];
          float sw = rule_codes(&s, a, j, want), sg = ol_qgemv_i8_quantize_block(&s, a, j, got);
          cases++;
          bad += memcmp(&sw, &sg, sizeof sw) != 0 || memcmp(want, got, sizeof(int16_t) * (size_t)block) != 0;
        }
      }
  if (bad) fprintf(stderr, "  %d of %d blocks differ\n", bad, cases);
  CHECK(bad == 0 && cases > 400);
}

OL_TEST_MAIN(TEST(test_qgemv_i8_shapes), TEST(test_qgemv_i8_edges), TEST(test_qgemv_i8_rows), TEST(test_quantize_block_rule))
