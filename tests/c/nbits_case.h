/* Random MatMulNBits operands for the GEMV kernel tests (include after
 * test_random.h, whose stream it draws from): B codes, packed uint8 and float
 * zero points, activations, scales, bias, and room for two results. */
#ifndef OL_TESTS_NBITS_CASE_H
#define OL_TESTS_NBITS_CASE_H
#include <stdint.h>
#include <stdlib.h>

#include "simd/qgemv.h"

typedef struct nbits_case {
  ol_qgemv_shape s;
  int64_t kb, blob, zrow; /* blocks along K, bytes per block, bytes of packed zero points per row */
  uint8_t *B, *zu;
  float *a, *sc, *zf, *bias, *want, *got;
} nbits_case;

/* zero_a: an all-zero row of activations */
static inline nbits_case nbits_case_new(int bits, int64_t K, int64_t N, int64_t block, int zero_a) {
  nbits_case c = {{K, N, block, bits}, (K + block - 1) / block, block * bits / 8, 0, NULL, NULL, NULL, NULL,
                  NULL, NULL, NULL, NULL};
  c.zrow = (c.kb * bits + 7) / 8;
  c.B = malloc((size_t)(N * c.kb * c.blob)), c.zu = malloc((size_t)(N * c.zrow));
  c.a = malloc(sizeof(float) * (size_t)K), c.sc = malloc(sizeof(float) * (size_t)(N * c.kb));
  c.zf = malloc(sizeof(float) * (size_t)(N * c.kb)), c.bias = malloc(sizeof(float) * (size_t)N);
  c.want = malloc(sizeof(float) * (size_t)N), c.got = malloc(sizeof(float) * (size_t)N);
  for (int64_t i = 0; i < N * c.kb * c.blob; i++) c.B[i] = (uint8_t)next_u32();
  for (int64_t i = 0; i < N * c.zrow; i++) c.zu[i] = (uint8_t)next_u32();
  for (int64_t i = 0; i < K; i++) c.a[i] = zero_a ? 0.0f : rnd();
  for (int64_t i = 0; i < N * c.kb; i++) c.sc[i] = rnd(), c.zf[i] = rnd() * 8.0f;
  for (int64_t i = 0; i < N; i++) c.bias[i] = rnd();
  return c;
}

static inline void nbits_case_free(nbits_case *c) {
  free(c->B), free(c->zu), free(c->a), free(c->sc), free(c->zf), free(c->bias), free(c->want), free(c->got);
}

#endif
