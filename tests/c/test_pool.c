/* The thread pool (core/pool.c) and the kernels that use it: every task runs
 * exactly once on a valid slot, nested and concurrent calls work, bad counts
 * are rejected, and fp32 GEMV/GEMM, batched MatMul, MatMulNBits and a
 * session's run give the same bits with 1, 2 and 3 threads. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "harness.h"
#include "kernel_util.h"
#include "onnxlight.h"
#include "simd/gemm.h"

static uint32_t rng_state = 88172645u;
static uint32_t next_u32(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
static float rnd(void) { return (float)(next_u32() & 0xFFFFFF) / 16777216.0f - 0.5f; }

typedef struct count_job {
  atomic_int hits[1000];
  atomic_int bad_slot;
  int threads;
} count_job;

static void count_task(void *arg, int64_t t, int slot) {
  count_job *j = arg;
  atomic_fetch_add(&j->hits[t], 1);
  if (slot < 0 || slot >= j->threads) atomic_store(&j->bad_slot, 1);
}

static void test_every_task_once(void) {
  static const int64_t sizes[] = {1, 2, 3, 7, 64, 1000};
  for (int threads = 1; threads <= 4; threads++) {
    ol_pool_reserve(threads);
    for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++)
      for (int rep = 0; rep < 20; rep++) {
        static count_job job;
        memset(&job, 0, sizeof job);
        job.threads = threads;
        ol_parallel_for(sizes[s], threads, count_task, &job);
        int ok = 1;
        for (int64_t t = 0; t < 1000; t++) ok &= atomic_load(&job.hits[t]) == (t < sizes[s]);
        CHECK(ok);
        CHECK(!atomic_load(&job.bad_slot));
      }
  }
}

static void nested_task(void *arg, int64_t t, int slot) {
  (void)slot;
  count_job *inner = (count_job *)arg + 1 + t;
  inner->threads = 3;
  ol_parallel_for(10, 3, count_task, inner); /* runs inline: the pool is busy */
}

static void test_nested(void) {
  count_job *jobs = calloc(4, sizeof *jobs);
  ol_parallel_for(3, 3, nested_task, jobs);
  for (int i = 1; i < 4; i++) {
    int ok = 1;
    for (int t = 0; t < 10; t++) ok &= atomic_load(&jobs[i].hits[t]) == 1;
    CHECK(ok);
    CHECK(!atomic_load(&jobs[i].bad_slot));
  }
  free(jobs);
}

/* two threads issuing parallel_for at once: one uses the pool, the other
 * runs alone, both complete */
static void *caller_main(void *arg) {
  count_job *j = arg;
  for (int rep = 0; rep < 200; rep++) ol_parallel_for(100, 2, count_task, j);
  return NULL;
}

static void test_concurrent_callers(void) {
  count_job *jobs = calloc(2, sizeof *jobs);
  jobs[0].threads = jobs[1].threads = 2;
  pthread_t other;
  CHECK(pthread_create(&other, NULL, caller_main, &jobs[1]) == 0);
  caller_main(&jobs[0]);
  pthread_join(other, NULL);
  for (int i = 0; i < 2; i++) {
    int ok = 1;
    for (int t = 0; t < 100; t++) ok &= atomic_load(&jobs[i].hits[t]) == 200;
    CHECK(ok);
  }
  free(jobs);
}

static void test_thread_count_api(void) {
  CHECK_STATUS(ol_set_num_threads(0), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), ">= 1") != NULL);
  CHECK_STATUS(ol_set_num_threads(-3), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_set_num_threads(OL_POOL_MAX_THREADS + 1), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_set_num_threads(3));
  CHECK(ol_get_num_threads() == 3);
  CHECK(ol_pool_threads() == 3);
  int previous = ol_pool_scope(2);
  CHECK(ol_pool_threads() == 2);
  ol_pool_scope(previous);
  CHECK(ol_pool_threads() == 3);
}

static int same_bits(const float *a, const float *b, size_t n) { return memcmp(a, b, n * sizeof(float)) == 0; }

/* ol_f32_gemm with 1, 2 and 3 threads: the reference's bits each time */
static void gemm_case(int64_t M, int64_t N, int64_t K) {
  float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
  float *want = malloc(sizeof(float) * (size_t)(M * N)), *got = malloc(sizeof(float) * (size_t)(M * N));
  for (int64_t i = 0; i < M * K; i++) A[i] = rnd();
  for (int64_t i = 0; i < K * N; i++) B[i] = rnd();
  ol_f32_gemm_scalar(M, N, K, A, K, B, N, want, N);
  for (int threads = 1; threads <= 3; threads++) {
    int previous = ol_pool_scope(threads);
    memset(got, 0xff, sizeof(float) * (size_t)(M * N));
    CHECK_OK(ol_f32_gemm(M, N, K, A, K, B, N, got, N));
    ol_pool_scope(previous);
    if (!same_bits(want, got, (size_t)(M * N))) {
      fprintf(stderr, "gemm %lldx%lldx%lld differs with %d threads\n", (long long)M, (long long)N, (long long)K, threads);
      CHECK(0);
    }
  }
  free(A), free(B), free(want), free(got);
}

static void test_gemm_thread_independent(void) {
  ol_pool_reserve(3);
  gemm_case(1, 512, 512);    /* narrow GEMV */
  gemm_case(3, 1376, 512);   /* narrow GEMV, several rows */
  gemm_case(1, 8200, 64);    /* wide GEMV, split in two */
  gemm_case(2, 13000, 16);   /* wide GEMV, split in three */
  gemm_case(1, 600, 400);    /* narrow GEMV, split */
  gemm_case(2, 333, 517);    /* odd sizes */
  gemm_case(32, 512, 512);   /* GEMM */
  gemm_case(37, 1001, 300);  /* GEMM edges, K over one block */
}

/* MatMulNBits through its kernel: same bits with 1, 2 and 3 threads, for
 * the fused (M <= 4), dequantizing and int8-activation (accuracy_level 4)
 * paths, with and without zero points */
static void nbits_case(int64_t M, int64_t K, int64_t N, int bits, int with_zp, int accuracy_level) {
  int64_t block = 32, kb = (K + block - 1) / block, blob = block * bits / 8, zrow = (kb * bits + 7) / 8;
  uint8_t *b = malloc((size_t)(N * kb * blob)), *zp = malloc((size_t)(N * zrow));
  float *a = malloc(sizeof(float) * (size_t)(M * K)), *sc = malloc(sizeof(float) * (size_t)(N * kb));
  for (int64_t i = 0; i < N * kb * blob; i++) b[i] = (uint8_t)next_u32();
  for (int64_t i = 0; i < N * zrow; i++) zp[i] = (uint8_t)next_u32();
  for (int64_t i = 0; i < M * K; i++) a[i] = rnd();
  for (int64_t i = 0; i < N * kb; i++) sc[i] = rnd();
  int64_t da[2] = {M, K}, db[3] = {N, kb, blob}, ds[1] = {N * kb}, dz[1] = {N * zrow};
  ol_value *in[4] = {tk_f32(2, da, a), tk_tensor(OL_DTYPE_UINT8, 3, db, b), tk_f32(1, ds, sc),
                     tk_tensor(OL_DTYPE_UINT8, 1, dz, zp)};
  ol_attr at[5] = {tk_attr_int("K", K), tk_attr_int("N", N), tk_attr_int("bits", bits),
                   tk_attr_int("block_size", block), tk_attr_int("accuracy_level", accuracy_level)};
  ol_value *out[3] = {0};
  for (int threads = 1; threads <= 3; threads++) {
    int previous = ol_pool_scope(threads);
    CHECK_OK(tk_run_domain("com.microsoft", "MatMulNBits", 1, at, 5, in, with_zp ? 4 : 3, &out[threads - 1], 1));
    ol_pool_scope(previous);
  }
  for (int t = 1; t < 3; t++)
    if (out[0] && out[t]) CHECK(same_bits(ol_tdata(&out[0]->tensor), ol_tdata(&out[t]->tensor), (size_t)(M * N)));
  tk_release_all(out, 3);
  tk_release_all(in, 4);
  free(b), free(zp), free(a), free(sc);
}

static void test_nbits_thread_independent(void) {
  ol_pool_reserve(3);
  nbits_case(1, 512, 1376, 4, 0, 0);
  nbits_case(3, 200, 515, 4, 1, 0);
  nbits_case(1, 512, 700, 8, 1, 0);
  nbits_case(9, 96, 130, 4, 1, 0); /* dequantizing path */
  nbits_case(1, 512, 1376, 4, 0, 4); /* int8 activations */
  nbits_case(6, 200, 515, 4, 1, 4);
  nbits_case(2, 512, 700, 8, 1, 4);
}

/* batched float MatMul (per-head products) spread over batches: same bits */
static void test_batched_matmul_thread_independent(void) {
  int64_t da[3] = {8, 3, 64}, db[3] = {8, 64, 700};
  float *a = malloc(sizeof(float) * 8 * 3 * 64), *b = malloc(sizeof(float) * 8 * 64 * 700);
  for (int i = 0; i < 8 * 3 * 64; i++) a[i] = rnd();
  for (int i = 0; i < 8 * 64 * 700; i++) b[i] = rnd();
  ol_value *in[2] = {tk_f32(3, da, a), tk_f32(3, db, b)};
  ol_value *out[3] = {0};
  for (int threads = 1; threads <= 3; threads++) {
    int previous = ol_pool_scope(threads);
    CHECK_OK(tk_run("MatMul", 13, NULL, 0, in, 2, &out[threads - 1], 1));
    ol_pool_scope(previous);
  }
  for (int t = 1; t < 3; t++)
    if (out[0] && out[t]) CHECK(same_bits(ol_tdata(&out[0]->tensor), ol_tdata(&out[t]->tensor), 8 * 3 * 700));
  tk_release_all(out, 3);
  tk_release_all(in, 2);
  free(a), free(b);
}

/* y[t - 1]: the single output of m run with intra_op_num_threads t = 1..3 */
static void run_on_1_to_3_threads(ol_model *m, const char *const *names, ol_value *const *in, size_t n, ol_value **y) {
  ol_session_options o;
  ol_session_options_init(&o);
  for (int threads = 1; threads <= 3; threads++) {
    ol_session *s = NULL;
    o.intra_op_num_threads = threads;
    CHECK_OK(ol_session_create(m, &o, &s));
    if (s) CHECK_OK(ol_session_run(s, names, in, n, NULL, &y[threads - 1], 1, NULL));
    ol_session_destroy(s);
  }
}

/* A session with intra_op_num_threads: rejected below 0, same bits at 1..3 */
static void test_session_threads(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[4, 300] x, float[300, 700] w) => (float[4, 700] y) { y = MatMul(x, w) }",
                               &m));
  ol_session_options o;
  ol_session_options_init(&o);
  CHECK(o.intra_op_num_threads == 0);
  ol_session *s = NULL;
  o.intra_op_num_threads = -1;
  CHECK_STATUS(ol_session_create(m, &o, &s), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "intra_op_num_threads") != NULL);
  float *x = malloc(sizeof(float) * 4 * 300), *w = malloc(sizeof(float) * 300 * 700);
  for (int i = 0; i < 4 * 300; i++) x[i] = rnd();
  for (int i = 0; i < 300 * 700; i++) w[i] = rnd();
  int64_t dx[2] = {4, 300}, dw[2] = {300, 700};
  ol_value *in[2] = {tk_f32(2, dx, x), tk_f32(2, dw, w)};
  const char *names[2] = {"x", "w"};
  ol_value *y[3] = {0};
  run_on_1_to_3_threads(m, names, in, 2, y);
  for (int t = 1; t < 3; t++)
    if (y[0] && y[t]) CHECK(same_bits(ol_tdata(&y[0]->tensor), ol_tdata(&y[t]->tensor), 4 * 700));
  tk_release_all(y, 3);
  tk_release_all(in, 2);
  ol_model_destroy(m);
  free(x), free(w);
  /* attention scores Q x K^T (the fused Transpose) split by head */
  m = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]>\n"
                               "g (float[1, 8, 1, 64] q, float[1, 8, 300, 64] k) => (float[1, 8, 1, 300] s) {\n"
                               "  kt = Transpose <perm = [0, 1, 3, 2]> (k)\n  s = MatMul(q, kt)\n}",
                               &m));
  float *q = malloc(sizeof(float) * 8 * 64), *k = malloc(sizeof(float) * 8 * 300 * 64);
  for (int i = 0; i < 8 * 64; i++) q[i] = rnd();
  for (int i = 0; i < 8 * 300 * 64; i++) k[i] = rnd();
  int64_t dq[4] = {1, 8, 1, 64}, dk[4] = {1, 8, 300, 64};
  ol_value *qk[2] = {tk_f32(4, dq, q), tk_f32(4, dk, k)};
  const char *qk_names[2] = {"q", "k"};
  run_on_1_to_3_threads(m, qk_names, qk, 2, y);
  if (y[0]) {
    bool right = true; /* head 5, key 123: the fused kernel's dot product order */
    const float *qh = q + 5 * 64, *kh = k + (5 * 300 + 123) * 64;
    float l[4] = {0, 0, 0, 0};
    for (int e = 0; e < 64; e += 4)
      for (int c = 0; c < 4; c++) l[c] = l[c] + qh[e + c] * kh[e + c];
    right = ((const float *)ol_tdata(&y[0]->tensor))[5 * 300 + 123] == (l[0] + l[1]) + (l[2] + l[3]);
    CHECK(right);
  }
  for (int t = 1; t < 3; t++)
    if (y[0] && y[t]) CHECK(same_bits(ol_tdata(&y[0]->tensor), ol_tdata(&y[t]->tensor), 8 * 300));
  tk_release_all(y, 3);
  tk_release_all(qk, 2);
  ol_model_destroy(m);
  free(q), free(k);
}

OL_TEST_MAIN(TEST(test_every_task_once), TEST(test_nested), TEST(test_concurrent_callers),
             TEST(test_thread_count_api), TEST(test_gemm_thread_independent),
             TEST(test_nbits_thread_independent), TEST(test_batched_matmul_thread_independent),
             TEST(test_session_threads))
