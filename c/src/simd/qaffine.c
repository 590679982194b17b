/* Affine-encoded weights decoded in register (see qaffine.h for the bits). */
#include "simd/qaffine.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/pool.h"
#include "simd/gemm.h"
#include "simd/vec.h"
#include "simd/vec_f64.h"

/* A little-endian float64 at p (any alignment). */
static inline double read_f64(const uint8_t *p) {
  double d;
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  memcpy(&d, p, 8);
#else
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u |= (uint64_t)p[i] << (8 * i);
  memcpy(&d, &u, 8);
#endif
  return d;
}

static uint32_t code_at(const uint8_t *codes, int bits, int64_t r) {
  return bits == 4 ? (codes[r >> 1] >> (4 * (r & 1))) & 15u : codes[r];
}

/* ------------------------------------------------------------ reference */

void ol_qaffine_decode_scalar(const ol_qaffine *w, int64_t e0, int64_t n, float *dst) {
  for (int64_t i = 0; i < n; i++) {
    int64_t e = e0 + i;
    const ol_qaffine_run *run = w->runs;
    while (e >= run->first + run->blocks * run->count) run++;
    int64_t b = (e - run->first) / run->count, r = (e - run->first) % run->count;
    const uint8_t *blk = run->base + b * run->stride;
    uint32_t u = code_at(blk + OL_QAFFINE_PARAM_BYTES, run->bits, r);
    int64_t code = u;
    if (run->signed_codes && (u & (1u << (run->bits - 1)))) code -= (int64_t)1 << run->bits;
    dst[i] = (float)(((double)code - read_f64(blk + 8)) * read_f64(blk) + read_f64(blk + 16));
  }
}

ol_status ol_qaffine_matmul_scalar(const ol_qaffine *w, int64_t M, const float *A, float *C) {
  int64_t K = w->K, N = w->N;
  float *W = ol_xmalloc(sizeof(float) * (size_t)(K * N));
  if (!W) return OL_OUT_OF_MEMORY;
  ol_qaffine_decode_scalar(w, 0, K * N, W);
  ol_f32_gemm_scalar(M, N, K, A, K, W, N, C, N);
  free(W);
  return OL_OK;
}

/* ------------------------------------------------------------ vector decode */

/* One block's decoding constants: w = (double)((u ^ flip) - sub) * scale + offset. */
typedef struct block_params {
  ol_i32x4 flip, sub;
  ol_f64x2 scale, offset;
  double s, o;
  int32_t flip1, sub1;
  bool has_offset;
} block_params;

static void block_params_init(const ol_qaffine_run *run, const uint8_t *blk, block_params *p) {
  int32_t half = run->signed_codes ? 1 << (run->bits - 1) : 0;
  p->s = read_f64(blk);
  p->o = read_f64(blk + 16);
  p->flip1 = half;
  p->sub1 = half + (int32_t)read_f64(blk + 8); /* an integer in the code range (validated) */
  p->has_offset = p->o != 0;
  p->flip = ol_i32x4_splat(p->flip1);
  p->sub = ol_i32x4_splat(p->sub1);
  p->scale = ol_f64x2_splat(p->s);
  p->offset = ol_f64x2_splat(p->o);
}

OL_AI float decode1(const block_params *p, uint32_t u) {
  double v = (double)((int32_t)(u ^ (uint32_t)p->flip1) - p->sub1) * p->s;
  return (float)(p->has_offset ? v + p->o : v);
}

OL_AI ol_f32x4 decode4(const block_params *p, ol_i32x4 u) {
  ol_i32x4 i = ol_i32x4_sub(ol_i32x4_xor(u, p->flip), p->sub);
  ol_f64x2 lo = ol_f64x2_mul(ol_f64x2_from_i32_lo(i), p->scale);
  ol_f64x2 hi = ol_f64x2_mul(ol_f64x2_from_i32_hi(i), p->scale);
  if (p->has_offset) lo = ol_f64x2_add(lo, p->offset), hi = ol_f64x2_add(hi, p->offset);
  return ol_f32x4_from_f64x2(lo, hi);
}

/* AXPY = 0: dst[j] = w[j]; AXPY = 1: dst[j] = dst[j] + a * w[j]. */
OL_AI void emit4(const int AXPY, float *dst, float a, ol_f32x4 wv) {
  if (AXPY) ol_f32x4_store(dst, ol_f32x4_muladd(ol_f32x4_load(dst), ol_f32x4_splat(a), wv));
  else ol_f32x4_store(dst, wv);
}

OL_AI void emit1(const int AXPY, float *dst, float a, float wv) {
  *dst = AXPY ? *dst + a * wv : wv;
}

/* Elements [r, r + n) of one block, 16 at a time in register. */
OL_AI void block_span(const int AXPY, const int BITS, const block_params *p, const uint8_t *codes,
                      int64_t r, int64_t n, float a, float *dst) {
  int64_t end = r + n;
  if (BITS == 4 && (r & 1) && r < end) emit1(AXPY, dst++, a, decode1(p, code_at(codes, 4, r++)));
  for (; r + 16 <= end; r += 16, dst += 16) {
    ol_i32x4 bytes = BITS == 4 ? ol_u8x16_nibbles(ol_i32x4_load64_zero(codes + (r >> 1)))
                               : ol_i32x4_load(codes + r);
    ol_i32x4 u[4];
    ol_u8x16_widen(bytes, u);
    for (int q = 0; q < 4; q++) emit4(AXPY, dst + 4 * q, a, decode4(p, u[q]));
  }
  for (; r < end; r++) emit1(AXPY, dst++, a, decode1(p, code_at(codes, BITS, r)));
}

/* Elements [e0, e0 + n) of W, block by block (one division per run entered). */
OL_AI void span(const int AXPY, const ol_qaffine *w, int64_t e0, int64_t n, float a, float *dst) {
  const ol_qaffine_run *run = w->runs;
  while (n > 0) {
    while (e0 >= run->first + run->blocks * run->count) run++;
    const int64_t off = e0 - run->first, count = run->count;
    int64_t b = off / count, r = off - b * count;
    const uint8_t *blk = run->base + b * run->stride;
    for (; n > 0 && b < run->blocks; b++, r = 0, blk += run->stride) {
      const int64_t take = count - r < n ? count - r : n;
      block_params p;
      block_params_init(run, blk, &p);
      if (run->bits == 4) block_span(AXPY, 4, &p, blk + OL_QAFFINE_PARAM_BYTES, r, take, a, dst);
      else block_span(AXPY, 8, &p, blk + OL_QAFFINE_PARAM_BYTES, r, take, a, dst);
      e0 += take, n -= take, dst += take;
    }
  }
}

void ol_qaffine_decode(const ol_qaffine *w, int64_t e0, int64_t n, float *dst) {
  span(0, w, e0, n, 0.0f, dst);
}

/* c[0..n) = c + a * b[0..n) */
static void axpy(float *c, int64_t n, float a, const float *b) {
  const ol_f32x4 x = ol_f32x4_splat(a);
  int64_t j = 0;
  for (; j + 4 <= n; j += 4) ol_f32x4_store(c + j, ol_f32x4_muladd(ol_f32x4_load(c + j), x, ol_f32x4_load(b + j)));
  for (; j < n; j++) c[j] = c[j] + a * b[j];
}

/* ------------------------------------------------------------ products */

#define ROWS_GEMV 8
#define PANEL_FLOATS (1 << 18) /* decoded panel for many rows: 1 MB */
#define PAR_MIN_MACS (1 << 17) /* as simd/gemm.c: smaller products stay on one thread */
#define PAR_MIN_COLS 64

/* Columns [j0, j0 + n) of C for up to ROWS_GEMV rows: one row of A takes the
 * codes decoded in register; more reuse each decoded row segment (row: n
 * floats of scratch). */
static void gemv_cols(const ol_qaffine *w, int64_t M, const float *A, float *C, int64_t j0, int64_t n, float *row) {
  const int64_t K = w->K, N = w->N;
  for (int64_t i = 0; i < M; i++) memset(C + i * N + j0, 0, sizeof(float) * (size_t)n);
  for (int64_t k = 0; k < K; k++) {
    if (M == 1) {
      span(1, w, k * N + j0, n, A[k], C + j0);
      continue;
    }
    ol_qaffine_decode(w, k * N + j0, n, row);
    for (int64_t i = 0; i < M; i++) axpy(C + i * N + j0, n, A[i * K + k], row);
  }
}

/* Threads split the columns, never a sum: the bits do not depend on them. */
typedef struct gemv_job {
  const ol_qaffine *w;
  int64_t M, step;
  const float *A;
  float *C, *rows; /* rows: step floats per thread slot (M > 1) */
} gemv_job;

static void gemv_task(void *arg, int64_t task, int slot) {
  const gemv_job *j = arg;
  int64_t j0 = task * j->step, n = j->w->N - j0 < j->step ? j->w->N - j0 : j->step;
  gemv_cols(j->w, j->M, j->A, j->C, j0, n, j->rows ? j->rows + (size_t)slot * (size_t)j->step : NULL);
}

ol_status ol_qaffine_matmul(const ol_qaffine *w, int64_t M, const float *A, float *C) {
  const int64_t K = w->K, N = w->N;
  if (M <= 0 || N <= 0) return OL_OK;
  if (M <= ROWS_GEMV) {
    int threads = M * N * (K > 0 ? K : 1) >= PAR_MIN_MACS ? ol_pool_threads() : 1;
    int64_t step = ((N + threads - 1) / threads + 15) / 16 * 16;
    if (threads <= 1 || step < PAR_MIN_COLS) threads = 1, step = N;
    gemv_job job = {w, M, step, A, C, NULL};
    if (M > 1) {
      job.rows = ol_xmalloc(sizeof(float) * (size_t)step * (size_t)threads);
      if (!job.rows) return OL_OUT_OF_MEMORY;
    }
    if (threads <= 1) gemv_task(&job, 0, 0);
    else ol_parallel_for((N + step - 1) / step, threads, gemv_task, &job);
    free(job.rows);
    return OL_OK;
  }
  /* column panels W[:, j0 .. j0 + nb), K * nb floats, through the fp32 GEMM
   * (its every kernel sums in the reference order) */
  int64_t nb = K * N <= PANEL_FLOATS ? N : (PANEL_FLOATS / K) & ~(int64_t)7;
  if (nb < 8) nb = 8;
  if (nb > N) nb = N;
  float *panel = ol_xmalloc(sizeof(float) * (size_t)(K * nb));
  if (!panel) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (int64_t j0 = 0; j0 < N && s == OL_OK; j0 += nb) {
    int64_t cols = N - j0 < nb ? N - j0 : nb;
    for (int64_t k = 0; k < K; k++) ol_qaffine_decode(w, k * N + j0, cols, panel + k * cols);
    s = ol_f32_gemm(M, cols, K, A, K, panel, cols, C + j0, N);
  }
  free(panel);
  return s;
}
