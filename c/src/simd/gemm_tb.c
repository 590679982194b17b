/* C = A * Bt^T in the dot-product order of gemm_tb.h. */
#include "simd/gemm_tb.h"

#include "simd/vec.h"

void ol_f32_gemm_tb_scalar(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bt,
                           int64_t ldb, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++)
    for (int64_t j = 0; j < N; j++) {
      const float *a = A + i * lda, *b = Bt + j * ldb;
      float l[4] = {0.0f, 0.0f, 0.0f, 0.0f};
      int64_t k = 0;
      for (; k + 4 <= K; k += 4)
        for (int q = 0; q < 4; q++) l[q] = l[q] + a[k + q] * b[k + q];
      float c = (l[0] + l[1]) + (l[2] + l[3]);
      for (; k < K; k++) c = c + a[k] * b[k];
      C[i * ldc + j] = c;
    }
}

/* the tail after the whole blocks, in increasing k */
static inline float finish(ol_f32x4 acc, const float *a, const float *b, int64_t k, int64_t K) {
  float c = ol_f32x4_hsum(acc);
  for (; k < K; k++) c = c + a[k] * b[k];
  return c;
}

void ol_f32_gemm_tb(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *Bt, int64_t ldb,
                    float *C, int64_t ldc) {
  int64_t K4 = K & ~(int64_t)3;
  for (int64_t i = 0; i < M; i++) {
    const float *a = A + i * lda;
    float *c = C + i * ldc;
    int64_t j = 0;
    /* four keys at a time share each load of the query */
    for (; j + 4 <= N; j += 4) {
      const float *b0 = Bt + j * ldb, *b1 = b0 + ldb, *b2 = b1 + ldb, *b3 = b2 + ldb;
      ol_f32x4 s0 = ol_f32x4_zero(), s1 = ol_f32x4_zero(), s2 = ol_f32x4_zero(), s3 = ol_f32x4_zero();
      for (int64_t k = 0; k < K4; k += 4) {
        ol_f32x4 x = ol_f32x4_load(a + k);
        s0 = ol_f32x4_muladd(s0, x, ol_f32x4_load(b0 + k));
        s1 = ol_f32x4_muladd(s1, x, ol_f32x4_load(b1 + k));
        s2 = ol_f32x4_muladd(s2, x, ol_f32x4_load(b2 + k));
        s3 = ol_f32x4_muladd(s3, x, ol_f32x4_load(b3 + k));
      }
      /* the four horizontal sums at once (shuffles, not lane extractions) */
      ol_f32x4_store(c + j, ol_f32x4_hsum4(s0, s1, s2, s3));
      for (int64_t k = K4; k < K; k++) {
        c[j] = c[j] + a[k] * b0[k], c[j + 1] = c[j + 1] + a[k] * b1[k];
        c[j + 2] = c[j + 2] + a[k] * b2[k], c[j + 3] = c[j + 3] + a[k] * b3[k];
      }
    }
    for (; j < N; j++) {
      const float *b = Bt + j * ldb;
      ol_f32x4 s = ol_f32x4_zero();
      for (int64_t k = 0; k < K4; k += 4) s = ol_f32x4_muladd(s, ol_f32x4_load(a + k), ol_f32x4_load(b + k));
      c[j] = finish(s, a, b, K4, K);
    }
  }
}
