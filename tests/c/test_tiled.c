/* Tiled float MatMul weights (simd/gemm.h, ops/matmul/packing.c, model/pack.c): the tiled
 * kernels give the reference's bits on every shape and thread count; the
 * loader tiles exactly the weights only MatMul reads as B; serializing,
 * printing and densifying give the dense bytes back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops/matmul/matmul.h"
#include "kernel_util.h"
#include "core/pool.h"
#include "core/value.h"
#include "ir/model.h"
#include "onnxlight.h"
#include "simd/gemm.h"

#define TEST_RANDOM_EXPONENTS 13
#include "test_random.h"

static void fill(float *x, int64_t n, uint32_t seed) {
  for (int64_t i = 0; i < n; i++) {
    seed = seed * 1664525u + 1013904223u;
    x[i] = ((float)(seed >> 8) / 16777216.0f - 0.5f) * (float)(1 + (seed & 7));
  }
}

/* mixed magnitudes: another summation order would round differently */
static void random_fill(float *x, int64_t n) {
  for (int64_t i = 0; i < n; i++) x[i] = rnd();
}

static void test_layout_round_trip(void) {
  const int64_t shapes[][2] = {{1, 16}, {31, 17}, {32, 16}, {33, 48}, {70, 100}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t K = shapes[s][0], N = shapes[s][1];
    float *dense = malloc(sizeof(float) * (size_t)(K * N)), *t = malloc(sizeof(float) * (size_t)(K * N));
    float *back = malloc(sizeof(float) * (size_t)(K * N)), *scratch = malloc(sizeof(float) * OL_TILE_ROWS * (size_t)N);
    fill(dense, K * N, (uint32_t)s + 1);
    memcpy(t, dense, sizeof(float) * (size_t)(K * N));
    ol_tiles_from_dense(K, N, OL_TILE_ROWS, t, scratch);
    bool at = true;
    for (int64_t k = 0; k < K; k++)
      for (int64_t j = 0; j < N; j++) at = at && t[ol_tile_offset(K, N, OL_TILE_ROWS, k, j)] == dense[k * N + j];
    CHECK(at);
    ol_tiles_to_dense(K, N, OL_TILE_ROWS, t, back);
    CHECK(memcmp(back, dense, sizeof(float) * (size_t)(K * N)) == 0);
    free(dense), free(t), free(back), free(scratch);
  }
}

/* M x K times a tiled K x N: ol_f32_gemm_tiled_simd128 (direct) and
 * ol_f32_gemm_tiled on 1 to 3 threads against the reference's bits on the
 * dense matrix; CHECK fails naming the shape. */
static void check_tiled(int64_t M, int64_t N, int64_t K, bool direct) {
  float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
  float *T = malloc(sizeof(float) * (size_t)(K * N)), *scratch = malloc(sizeof(float) * OL_TILE_ROWS * (size_t)N);
  float *want = malloc(sizeof(float) * (size_t)(M * N)), *got = malloc(sizeof(float) * (size_t)(M * N));
  random_fill(A, M * K);
  random_fill(B, K * N);
  memcpy(T, B, sizeof(float) * (size_t)(K * N));
  ol_tiles_from_dense(K, N, OL_TILE_ROWS, T, scratch);
  ol_f32_gemm_scalar(M, N, K, A, K, B, N, want, N);
  if (direct) {
    memset(got, 0x55, sizeof(float) * (size_t)(M * N));
    CHECK_OK(ol_f32_gemm_tiled_simd128(M, N, K, A, K, T, got, N, NULL));
    CHECK(memcmp(got, want, sizeof(float) * (size_t)(M * N)) == 0);
  }
  for (int threads = 1; threads <= 3; threads++) {
    int previous = ol_pool_scope(threads);
    memset(got, 0x55, sizeof(float) * (size_t)(M * N));
    CHECK_OK(ol_f32_gemm_tiled(M, N, K, A, K, T, got, N));
    ol_pool_scope(previous);
    if (memcmp(got, want, sizeof(float) * (size_t)(M * N)) != 0) {
      fprintf(stderr, "tiled M=%lld N=%lld K=%lld threads=%d differs\n", (long long)M, (long long)N, (long long)K,
              threads);
      CHECK(false);
    }
  }
  free(A), free(B), free(T), free(scratch), free(want), free(got);
}

/* every shape, M = 1 (the streaming kernel) and more rows (the tiles read
 * in place), on 1 to 3 threads: the reference's bits on the dense matrix */
static void test_tiled_kernels_match_reference(void) {
  const int64_t Ks[] = {1, 5, 31, 32, 33, 100};
  const int64_t Ns[] = {16, 17, 31, 48, 100, 300};
  const int64_t Ms[] = {1, 2, 5, 9};
  ol_pool_reserve(3);
  for (size_t a = 0; a < sizeof Ks / sizeof Ks[0]; a++)
    for (size_t b = 0; b < sizeof Ns / sizeof Ns[0]; b++)
      for (size_t c = 0; c < sizeof Ms / sizeof Ms[0]; c++) check_tiled(Ms[c], Ns[b], Ks[a], true);
  /* a wide one that the pool really splits (512 x 4096, one row) */
  check_tiled(1, 4096, 512, false);
}

/* More rows read the tiles in place (A packed, all of K, in chunks of rows
 * that fit the pack) unless K is so long that not even four rows fit (then
 * B is copied into panels): the reference's bits either way, across
 * blocks, narrow last panels, row chunks and thread splits. */
static void test_tiled_many_rows(void) {
  const int64_t cases[][3] = {
      {32, 100, 513}, /* a prefill's shape: many blocks, a 4-column last panel */
      {33, 31, 64},   /* an edge row tile; a last panel of 15 columns */
      {4, 25, 32},    /* one block; a last panel of 9 columns */
      {9, 24, 20000}, /* rows in chunks of 4 */
      {5, 17, 40000}, /* K too long for four packed rows: panels copied */
  };
  ol_pool_reserve(3);
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_tiled(cases[i][0], cases[i][1], cases[i][2], false);
}

/* ------------------------------------------------------------ the loader */

#define K_ 40
#define N_ 24

static float W[K_ * N_], V[K_ * N_];

static void put_floats(char **p, const float *x, int n) {
  *p += sprintf(*p, "{");
  for (int i = 0; i < n; i++) *p += sprintf(*p, "%s%.9g", i ? ", " : "", (double)x[i]);
  *p += sprintf(*p, "}");
}

/* y = MatMul(x, w) + MatMul(x, v), z = MatMul(v, t): w is tiled, v (also
 * read as A) stays dense; bytes from protobuf-c, so a faithful
 * serialization gives them back exactly. */
static uint8_t *model_bytes(size_t *size) {
  fill(W, K_ * N_, 11), fill(V, K_ * N_, 12);
  char *text = malloc(100000), *p = text;
  p += sprintf(p, "<ir_version: 8, opset_import: [\"\" : 17]>\n"
                  "g (float[2,%d] x, float[%d,3] t) => (float[2,%d] y, float[%d,3] z)\n  <float[%d,%d] w = ",
               K_, N_, N_, K_, K_, N_);
  put_floats(&p, W, K_ * N_);
  p += sprintf(p, ", float[%d,%d] v = ", K_, N_);
  put_floats(&p, V, K_ * N_);
  sprintf(p, ">\n{\n  a = MatMul(x, w)\n  b = MatMul(x, v)\n  y = Add(a, b)\n  z = MatMul(v, t)\n}\n");
  void *bytes = tk_serialized(text, size);
  free(text);
  return bytes;
}

static void test_loader_tiles_matmul_weights(void) {
  size_t size = 0;
  uint8_t *bytes = model_bytes(&size);
  ol_model *m = NULL;
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &m));
  if (!m) {
    ol_free(bytes);
    return;
  }
  const ol_tensor *w = tk_initializer(m, "w"), *v = tk_initializer(m, "v");
  CHECK(w && w->packing.kind == &ol_packing_f32_tiles && w->packing.params[2] == OL_TILE_ROWS);
  CHECK(v && !ol_tensor_is_packed(v) && memcmp(ol_tdata(v), V, sizeof V) == 0);
  if (w) CHECK(((const float *)ol_tdata(w))[ol_tile_offset(K_, N_, OL_TILE_ROWS, 33, 17)] == W[33 * N_ + 17]);

  /* the session computes the reference's bits */
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  float x[2 * K_], t[N_ * 3];
  fill(x, 2 * K_, 21), fill(t, N_ * 3, 22);
  int64_t xd[2] = {2, K_}, td[2] = {N_, 3};
  ol_value *in[2] = {NULL, NULL}, *out[2] = {NULL, NULL};
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, xd, 2, &in[0]));
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, td, 2, &in[1]));
  if (s && in[0] && in[1]) {
    memcpy(ol_tensor_data(in[0]), x, sizeof x);
    memcpy(ol_tensor_data(in[1]), t, sizeof t);
    const char *names[2] = {"x", "t"};
    CHECK_OK(ol_session_run(s, names, in, 2, NULL, out, 2, NULL));
    float a[2 * N_], b[2 * N_], z[K_ * 3];
    ol_f32_gemm_scalar(2, N_, K_, x, K_, W, N_, a, N_);
    ol_f32_gemm_scalar(2, N_, K_, x, K_, V, N_, b, N_);
    ol_f32_gemm_scalar(K_, 3, N_, V, N_, t, 3, z, 3);
    bool same = out[0] && out[1];
    for (int i = 0; same && i < 2 * N_; i++) same = ((float *)ol_tensor_data(out[0]))[i] == a[i] + b[i];
    for (int i = 0; same && i < K_ * 3; i++) same = ((float *)ol_tensor_data(out[1]))[i] == z[i];
    CHECK(same);
  }
  for (int i = 0; i < 2; i++) ol_value_release(in[i]), ol_value_release(out[i]);
  ol_session_destroy(s);

  /* serialization and the text printer give back the dense bytes */
  tk_check_gives_back_bytes(m, bytes, size);

  /* densifying or cloning a tiled tensor gives the dense matrix */
  ol_value *dense = NULL, *clone = NULL;
  const ol_initializer *init = ol_graph_find_initializer(m->data->graph, "w");
  ol_value *tiled = init ? ol_value_retain(init->value) : NULL;
  if (tiled) CHECK_OK(ol_tensor_clone(NULL, &tiled->tensor, &clone));
  CHECK(clone && !ol_tensor_is_packed(&clone->tensor) && memcmp(ol_tdata(&clone->tensor), W, sizeof W) == 0);
  dense = tiled;
  CHECK_OK(ol_value_densify(NULL, &dense));
  CHECK(dense && dense != tiled && memcmp(ol_tdata(&dense->tensor), W, sizeof W) == 0);
  ol_value_release(dense);
  ol_value_release(clone);
  ol_model_destroy(m);
  ol_free(bytes);
}

OL_TEST_MAIN(TEST(test_layout_round_trip), TEST(test_tiled_kernels_match_reference), TEST(test_tiled_many_rows),
             TEST(test_loader_tiles_matmul_weights))
