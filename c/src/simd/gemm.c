/* float32 GEMM/GEMV on simd/vec.h; see gemm.h for the summation-order
 * contract that keeps every kernel bit-identical to the scalar reference. */
#include "simd/gemm.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/pool.h"
#include "core/value.h"
#include "simd/vec.h"

typedef ol_f32x4 v4;
#define LD ol_f32x4_load
#define ST ol_f32x4_store
#define SPLAT ol_f32x4_splat
#define MADD ol_f32x4_muladd

/* ------------------------------------------------------------ scalar reference */

void ol_f32_gemm_scalar(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                        const float *B, int64_t ldb, float *C, int64_t ldc) {
  for (int64_t i = 0; i < M; i++) {
    float *c = C + i * ldc;
    for (int64_t j = 0; j < N; j++) c[j] = 0.0f;
    for (int64_t k = 0; k < K; k++) {
      float a = A[i * lda + k];
      const float *b = B + k * ldb;
      for (int64_t j = 0; j < N; j++) c[j] = c[j] + a * b[j];
    }
  }
}

/* ------------------------------------------------------------ few rows (GEMV) */

/* Two ways to stream B once per group of up to GEMV_ROWS rows, chosen by
 * the width of B (measured in wasm, weights streamed from DRAM):
 *  - narrow rows (N < GEMV_WIDE, the 2-6 KB rows of decoder layers): row
 *    after row as one sequential stream, c[j] = c[j] + a[k] * b[k][j] for
 *    each k, C in L1: about 20 GB/s, against 7-11 GB/s when 2-8 short rows
 *    are interleaved;
 *  - wide rows (a vocabulary head): eight rows of B interleaved per pass, so
 *    the C block is loaded and stored once per eight k; columns blocked so
 *    that the C blocks of the group fit in 128 KB (L2), but never shorter
 *    than 4096 (long contiguous runs of each B row stream best): for a
 *    512 x 32000 head about 18 GB/s unblocked, 15 with 4096 columns, 12
 *    with 1024, and 7-10 GB/s one B row at a time.
 * Either way each element adds its products in increasing k from +0. */
#define GEMV_ROWS 8
#define GEMV_WIDE 4096
#define GEMV_C_FLOATS 32768 /* wide: C block of a row group, 128 KB */

/* c[0..n) = c[0..n) + a * b[0..n) */
static void axpy1(float *c, int64_t n, float a, const float *b) {
  const v4 x = SPLAT(a);
  int64_t j = 0;
  for (; j + 16 <= n; j += 16) {
    v4 c0 = LD(c + j), c1 = LD(c + j + 4), c2 = LD(c + j + 8), c3 = LD(c + j + 12);
    c0 = MADD(c0, x, LD(b + j)), c1 = MADD(c1, x, LD(b + j + 4));
    c2 = MADD(c2, x, LD(b + j + 8)), c3 = MADD(c3, x, LD(b + j + 12));
    ST(c + j, c0), ST(c + j + 4, c1), ST(c + j + 8, c2), ST(c + j + 12, c3);
  }
  for (; j + 4 <= n; j += 4) ST(c + j, MADD(LD(c + j), x, LD(b + j)));
  for (; j < n; j++) c[j] = c[j] + a * b[j];
}

/* c[j] = c[j] + a[0]*b[0][j] + ... + a[7]*b[7][j], added in k order. */
static void axpy8(float *c, int64_t n, const float *a, const float *const *b) {
  const v4 x0 = SPLAT(a[0]), x1 = SPLAT(a[1]), x2 = SPLAT(a[2]), x3 = SPLAT(a[3]);
  const v4 x4 = SPLAT(a[4]), x5 = SPLAT(a[5]), x6 = SPLAT(a[6]), x7 = SPLAT(a[7]);
  const float *b0 = b[0], *b1 = b[1], *b2 = b[2], *b3 = b[3];
  const float *b4 = b[4], *b5 = b[5], *b6 = b[6], *b7 = b[7];
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    v4 c0 = LD(c + j), c1 = LD(c + j + 4);
    c0 = MADD(c0, x0, LD(b0 + j)), c1 = MADD(c1, x0, LD(b0 + j + 4));
    c0 = MADD(c0, x1, LD(b1 + j)), c1 = MADD(c1, x1, LD(b1 + j + 4));
    c0 = MADD(c0, x2, LD(b2 + j)), c1 = MADD(c1, x2, LD(b2 + j + 4));
    c0 = MADD(c0, x3, LD(b3 + j)), c1 = MADD(c1, x3, LD(b3 + j + 4));
    c0 = MADD(c0, x4, LD(b4 + j)), c1 = MADD(c1, x4, LD(b4 + j + 4));
    c0 = MADD(c0, x5, LD(b5 + j)), c1 = MADD(c1, x5, LD(b5 + j + 4));
    c0 = MADD(c0, x6, LD(b6 + j)), c1 = MADD(c1, x6, LD(b6 + j + 4));
    c0 = MADD(c0, x7, LD(b7 + j)), c1 = MADD(c1, x7, LD(b7 + j + 4));
    ST(c + j, c0), ST(c + j + 4, c1);
  }
  for (; j < n; j++) {
    float v = c[j];
    for (int q = 0; q < 8; q++) v = v + a[q] * b[q][j];
    c[j] = v;
  }
}

/* N < GEMV_WIDE: the C rows of a group (at most 8 x 16 KB) stay in cache. */
static void gemv_narrow(int64_t mr, int64_t N, int64_t K, const float *A, int64_t lda,
                        const float *B, int64_t ldb, float *C, int64_t ldc) {
  for (int64_t r = 0; r < mr; r++) memset(C + r * ldc, 0, sizeof(float) * (size_t)N);
  for (int64_t k = 0; k < K; k++) {
    const float *b = B + k * ldb;
    for (int64_t r = 0; r < mr; r++) axpy1(C + r * ldc, N, A[r * lda + k], b);
  }
}

static void gemv_wide(int64_t mr, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc) {
  int64_t cols = GEMV_C_FLOATS / mr < GEMV_WIDE ? GEMV_WIDE : GEMV_C_FLOATS / mr;
  for (int64_t jb = 0; jb < N; jb += cols) {
    int64_t nb = N - jb < cols ? N - jb : cols;
    for (int64_t r = 0; r < mr; r++) memset(C + r * ldc + jb, 0, sizeof(float) * (size_t)nb);
    int64_t k = 0;
    for (; k + 8 <= K; k += 8) {
      const float *b[8];
      for (int q = 0; q < 8; q++) b[q] = B + (k + q) * ldb + jb;
      for (int64_t r = 0; r < mr; r++) axpy8(C + r * ldc + jb, nb, A + r * lda + k, b);
    }
    for (; k < K; k++)
      for (int64_t r = 0; r < mr; r++) axpy1(C + r * ldc + jb, nb, A[r * lda + k], B + k * ldb + jb);
  }
}

/* One row of few columns, or rows over a B that fits in L2 (attention in
 * a decode step: the query times transposed keys, K = 64, the weights
 * times the values, N = 64): the sums of 32 columns stay in registers over all of k,
 * B read in strips of 32 columns. The row-streaming forms above store the
 * sums at every k and reload them at the next, a chain through memory:
 * 1.1-1.7x slower for these shapes (8-head products at 96 to 1000 cached
 * tokens, in wasm). A B streamed from memory keeps the row-streaming forms. */
#define GEMV_REG_COLS 128
#define GEMV_REG_FLOATS (64 * 1024)
static void gemv_regs(int64_t N, int64_t K, const float *a, const float *B, int64_t ldb, float *c) {
  int64_t j = 0;
  for (; j + 32 <= N; j += 32) {
    v4 s0 = ol_f32x4_zero(), s1 = s0, s2 = s0, s3 = s0, s4 = s0, s5 = s0, s6 = s0, s7 = s0;
    const float *b = B + j;
    for (int64_t k = 0; k < K; k++, b += ldb) {
      const v4 x = SPLAT(a[k]);
      s0 = MADD(s0, x, LD(b)), s1 = MADD(s1, x, LD(b + 4)), s2 = MADD(s2, x, LD(b + 8));
      s3 = MADD(s3, x, LD(b + 12)), s4 = MADD(s4, x, LD(b + 16)), s5 = MADD(s5, x, LD(b + 20));
      s6 = MADD(s6, x, LD(b + 24)), s7 = MADD(s7, x, LD(b + 28));
    }
    ST(c + j, s0), ST(c + j + 4, s1), ST(c + j + 8, s2), ST(c + j + 12, s3);
    ST(c + j + 16, s4), ST(c + j + 20, s5), ST(c + j + 24, s6), ST(c + j + 28, s7);
  }
  for (; j + 4 <= N; j += 4) {
    v4 s = ol_f32x4_zero();
    for (int64_t k = 0; k < K; k++) s = MADD(s, SPLAT(a[k]), LD(B + k * ldb + j));
    ST(c + j, s);
  }
  for (; j < N; j++) {
    float s = 0.0f;
    for (int64_t k = 0; k < K; k++) s = s + a[k] * B[k * ldb + j];
    c[j] = s;
  }
}

/* wide: the way to stream B, chosen by the width of the whole matrix even
 * when a thread computes only some of its columns */
static void gemv(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                 int64_t ldb, float *C, int64_t ldc, int wide) {
  if (M <= 0 || N <= 0) return;
  /* more rows read B once each: only where B stays in cache */
  if (K * N <= GEMV_REG_FLOATS || (M == 1 && N <= GEMV_REG_COLS)) {
    for (int64_t i = 0; i < M; i++) gemv_regs(N, K, A + i * lda, B, ldb, C + i * ldc);
    return;
  }
  for (int64_t i0 = 0; i0 < M; i0 += GEMV_ROWS) {
    int64_t mr = M - i0 < GEMV_ROWS ? M - i0 : GEMV_ROWS;
    if (!wide) gemv_narrow(mr, N, K, A + i0 * lda, lda, B, ldb, C + i0 * ldc, ldc);
    else gemv_wide(mr, N, K, A + i0 * lda, lda, B, ldb, C + i0 * ldc, ldc);
  }
}

void ol_f32_gemv_simd128(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float *C, int64_t ldc) {
  gemv(M, N, K, A, lda, B, ldb, C, ldc, N >= GEMV_WIDE);
}

/* ------------------------------------------------------------ many rows (GEMM) */

#define MR 4
#define NR 8
#define KC 256
#define NC 512

/* A 4 x 8 tile of C in registers: row r in c[2r], c[2r + 1]. */
typedef struct acc4x8 {
  v4 c[8];
} acc4x8;

OL_AI void acc_load(acc4x8 *t, const float *c, int64_t ldc, int first) {
  for (int r = 0; r < MR; r++) {
    t->c[2 * r] = first ? ol_f32x4_zero() : LD(c + r * ldc);
    t->c[2 * r + 1] = first ? ol_f32x4_zero() : LD(c + r * ldc + 4);
  }
}

OL_AI void acc_store(const acc4x8 *t, float *c, int64_t ldc) {
  for (int r = 0; r < MR; r++) ST(c + r * ldc, t->c[2 * r]), ST(c + r * ldc + 4, t->c[2 * r + 1]);
}

/* t += sum over k < kc of a[k*4 + r] * b[k*BS + c], k in order. A comes
 * packed (row r of the tile at a[k*4 + r]), so the loop's only address
 * arithmetic is two pointer steps: every splat is a load at a constant
 * offset. BS: the row stride of B (NR packed, OL_TILE_COLS in a tile). */
OL_AI void acc_steps(const int BS, acc4x8 *t, int64_t kc, const float *a, const float *b) {
  v4 c00 = t->c[0], c01 = t->c[1], c10 = t->c[2], c11 = t->c[3];
  v4 c20 = t->c[4], c21 = t->c[5], c30 = t->c[6], c31 = t->c[7];
  for (const float *end = a + kc * MR; a < end; a += MR, b += BS) {
    const v4 b0 = LD(b), b1 = LD(b + 4);
    v4 x = SPLAT(a[0]);
    c00 = MADD(c00, x, b0), c01 = MADD(c01, x, b1);
    x = SPLAT(a[1]);
    c10 = MADD(c10, x, b0), c11 = MADD(c11, x, b1);
    x = SPLAT(a[2]);
    c20 = MADD(c20, x, b0), c21 = MADD(c21, x, b1);
    x = SPLAT(a[3]);
    c30 = MADD(c30, x, b0), c31 = MADD(c31, x, b1);
  }
  t->c[0] = c00, t->c[1] = c01, t->c[2] = c10, t->c[3] = c11;
  t->c[4] = c20, t->c[5] = c21, t->c[6] = c30, t->c[7] = c31;
}

/* The MR-row tile of A from row i, columns [kb, kb + kc), interleaved:
 * apack[k * MR + r] = A[i + r][kb + k] (rows past mr repeat row i; their
 * sums are never stored). */
static void pack_a(const float *A, int64_t lda, int64_t i, int64_t mr, int64_t kb, int64_t kc, float *apack) {
  for (int r = 0; r < MR; r++) {
    const float *src = A + (i + (r < mr ? r : 0)) * lda + kb;
    for (int64_t k = 0; k < kc; k++) apack[k * MR + r] = src[k];
  }
}

/* The mr x nr (at most 4 x 8) tile of C at c into registers (first: zeros)
 * and back: whole tiles in place, edge ones through a local 4 x 8 buffer
 * (its rows and columns past mr, nr are never stored). */
OL_AI void acc_load_edge(acc4x8 *t, const float *c, int64_t ldc, int64_t mr, int64_t nr, int first) {
  if (first || (mr == MR && nr == NR)) {
    acc_load(t, c, ldc, first);
    return;
  }
  float tile[MR * NR] = {0};
  for (int64_t r = 0; r < mr; r++)
    for (int64_t q = 0; q < nr; q++) tile[r * NR + q] = c[r * ldc + q];
  acc_load(t, tile, NR, 0);
}

OL_AI void acc_store_edge(const acc4x8 *t, float *c, int64_t ldc, int64_t mr, int64_t nr) {
  if (mr == MR && nr == NR) {
    acc_store(t, c, ldc);
    return;
  }
  float tile[MR * NR];
  acc_store(t, tile, NR);
  for (int64_t r = 0; r < mr; r++)
    for (int64_t q = 0; q < nr; q++) c[r * ldc + q] = tile[r * NR + q];
}

/* C[0..mr)[0..nr) = (first ? 0 : C) + sum over k < kc of a[k*4 + r] * b[k*BS + c],
 * k in order (acc_steps). */
OL_AI void tile_4x8(const int BS, int64_t kc, const float *a, const float *b, float *c, int64_t ldc, int64_t mr,
                    int64_t nr, int first) {
  acc4x8 t;
  acc_load_edge(&t, c, ldc, mr, nr, first);
  acc_steps(BS, &t, kc, a, b);
  acc_store_edge(&t, c, ldc, mr, nr);
}

/* B copied into panels of NR columns, KC x NC at a time (pack: that many
 * floats); M, N, K > 0. tiled: B is a K x N matrix in the tiled layout of
 * core/value.h with OL_TILE_ROWS-row blocks (ldb unused): only the packing
 * reads differ */
static void gemm_blocked(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B, int64_t ldb,
                         bool tiled, float *C, int64_t ldc, float *pack) {
  float apack[MR * KC];
  for (int64_t jb = 0; jb < N; jb += NC) {
    int64_t nb = N - jb < NC ? N - jb : NC;
    int64_t panels = (nb + NR - 1) / NR;
    for (int64_t kb = 0; kb < K; kb += KC) {
      int64_t kc = K - kb < KC ? K - kb : KC;
      /* B[kb..kb+kc)[jb..jb+nb) as panels of NR columns, zero padded */
      for (int64_t p = 0; p < panels; p++) {
        float *dst = pack + p * kc * NR;
        int64_t j0 = jb + p * NR, nr = N - j0 < NR ? N - j0 : NR;
        for (int64_t k = 0; k < kc; k++) {
          const float *src = tiled ? B + ol_tile_offset(K, N, OL_TILE_ROWS, kb + k, j0) : B + (kb + k) * ldb + j0;
          if (nr == NR) {
            memcpy(dst + k * NR, src, sizeof(float) * NR);
          } else {
            for (int64_t q = 0; q < NR; q++) dst[k * NR + q] = q < nr ? src[q] : 0.0f;
          }
        }
      }
      for (int64_t i = 0; i < M; i += MR) {
        int64_t mr = M - i < MR ? M - i : MR;
        pack_a(A, lda, i, mr, kb, kc, apack);
        for (int64_t p = 0; p < panels; p++) {
          int64_t j0 = jb + p * NR, nr = N - j0 < NR ? N - j0 : NR;
          tile_4x8(NR, kc, apack, pack + p * kc * NR, C + i * ldc + j0, ldc, mr, nr, kb == 0);
        }
      }
    }
  }
}

/* ------------------------------------------------------------ tiled B, many rows */

/* Blocks of OL_TILE_ROWS rows that a 4 x 8 tile of C runs through in
 * registers (256 k, 16 KB of a panel: it stays in L1 for every tile of A).
 * One block at a time was as fast in V8 12 (Node 22) and made the 58M
 * prefill 1.2-1.3x slower in V8 14-15 (Node 26, Chromium 156): it loads and
 * stores C, and enters the loop, every 32 k. */
#define TILE_GROUP 8

/* The rows of A one call of tiled_rows packs at a time: a multiple of MR
 * whose packed rows (all of K) fit beside a padded group of blocks, or 0
 * when not even MR rows do (K > ~32K: gemm_blocked copies B instead). */
static int64_t tiled_rows_chunk(int64_t K) {
  return (OL_F32_GEMM_PACK_FLOATS - TILE_GROUP * OL_TILE_ROWS * OL_TILE_COLS) / K / MR * MR;
}

/* One 4 x 8 tile of C (mr x nr valid) over blocks [b0, b1) of K: the sums
 * stay in registers across the blocks (from +0 when b0 is 0, else from C).
 * half: which 8 columns of the panel (0 or 1). */
static void tile_blocks(int64_t K, int64_t b0, int64_t b1, const float *a, const float *T, int64_t N, int64_t p0,
                        const float *padded, int half, float *c, int64_t ldc, int64_t mr, int64_t nr) {
  const int64_t TC = OL_TILE_COLS, TR = OL_TILE_ROWS;
  acc4x8 t;
  acc_load_edge(&t, c, ldc, mr, nr, b0 == 0);
  for (int64_t k0 = b0; k0 < b1; k0 += TR) {
    const int64_t kr = K - k0 < TR ? K - k0 : TR;
    const float *panel = padded ? padded + (k0 - b0) * TC : T + k0 * N + p0 * kr;
    acc_steps(OL_TILE_COLS, &t, kr, a + k0 * MR, panel + half * NR);
  }
  acc_store_edge(&t, c, ldc, mr, nr);
}

/* M > 1 rows on the tiled layout without copying B: A is packed once (4-row
 * tiles, all of K), then for each panel of OL_TILE_COLS columns and group
 * of TILE_GROUP blocks (2 KB each, contiguous in the layout) every tile of
 * A runs its two 4 x 8 halves of C through the group's blocks in registers
 * (tile_blocks); C stays in L1 between groups. Each C element adds its
 * products in increasing k from +0 (stored and reloaded exactly between
 * groups). A panel narrower than OL_TILE_COLS (the last) is read through a
 * zero-padded copy of the group's blocks, so no read passes the end of T. */
static void tiled_rows(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *T, float *C,
                       int64_t ldc, float *pack) {
  const int64_t TC = OL_TILE_COLS, TR = OL_TILE_ROWS, GK = TILE_GROUP * TR, chunk = tiled_rows_chunk(K);
  float *padded = pack, *apack = pack + GK * TC;
  for (int64_t i0 = 0; i0 < M; i0 += chunk) {
    const int64_t mc = M - i0 < chunk ? M - i0 : chunk;
    for (int64_t i = 0; i < mc; i += MR) pack_a(A, lda, i0 + i, mc - i < MR ? mc - i : MR, 0, K, apack + i * K);
    for (int64_t p0 = 0; p0 < N; p0 += TC) {
      const int64_t w = N - p0 < TC ? N - p0 : TC;
      for (int64_t g0 = 0; g0 < K; g0 += GK) {
        const int64_t g1 = K - g0 < GK ? K : g0 + GK;
        if (w < TC)
          for (int64_t b0 = g0; b0 < g1; b0 += TR) {
            const int64_t kr = K - b0 < TR ? K - b0 : TR;
            const float *panel = T + b0 * N + p0 * kr;
            for (int64_t k = 0; k < kr; k++)
              for (int64_t q = 0; q < TC; q++) padded[(b0 - g0 + k) * TC + q] = q < w ? panel[k * w + q] : 0.0f;
          }
        for (int64_t i = 0; i < mc; i += MR) {
          const int64_t mr = mc - i < MR ? mc - i : MR;
          float *c = C + (i0 + i) * ldc + p0;
          const float *pad = w < TC ? padded : NULL;
          tile_blocks(K, g0, g1, apack + i * K, T, N, p0, pad, 0, c, ldc, mr, w < NR ? w : NR);
          if (w > NR) tile_blocks(K, g0, g1, apack + i * K, T, N, p0, pad, 1, c + NR, ldc, mr, w - NR);
        }
      }
    }
  }
}

/* Many rows (pack: OL_F32_GEMM_PACK_FLOATS floats, or NULL: allocated
 * here): tiled B read in place where A's rows fit the pack, else copied
 * into panels. */
static ol_status gemm_rows_any(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *B,
                               int64_t ldb, bool tiled, float *C, int64_t ldc, float *pack) {
  if (M <= 0 || N <= 0) return OL_OK;
  if (K <= 0) {
    for (int64_t i = 0; i < M; i++) memset(C + i * ldc, 0, sizeof(float) * (size_t)N);
    return OL_OK;
  }
  float *owned = NULL;
  if (!pack) {
    pack = owned = ol_xmalloc(sizeof(float) * OL_F32_GEMM_PACK_FLOATS);
    if (!pack) return OL_OUT_OF_MEMORY;
  }
  if (tiled && tiled_rows_chunk(K) > 0) tiled_rows(M, N, K, A, lda, B, C, ldc, pack);
  else gemm_blocked(M, N, K, A, lda, B, ldb, tiled, C, ldc, pack);
  free(owned);
  return OL_OK;
}

ol_status ol_f32_gemm_simd128(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *B, int64_t ldb, float *C, int64_t ldc, float *pack) {
  return gemm_rows_any(M, N, K, A, lda, B, ldb, false, C, ldc, pack);
}

/* ------------------------------------------------------------ tiled B, one row */

/* c[j0..j1) of one row (j0 a multiple of OL_TILE_COLS): blocks outer, so the
 * matrix is read front to back; a full panel's 16 sums stay in registers
 * over a block and go through c between blocks (stored and reloaded
 * exactly, the reference's order). */
static void gemv_tiled(int64_t N, int64_t K, const float *a, const float *T, float *c, int64_t j0, int64_t j1) {
  const int rows = OL_TILE_ROWS;
  for (int64_t b0 = 0; b0 < K; b0 += rows) {
    const int64_t kr = K - b0 < rows ? K - b0 : rows;
    const float *block = T + b0 * N, *ak = a + b0;
    for (int64_t p0 = j0; p0 < j1; p0 += OL_TILE_COLS) {
      const int64_t w = N - p0 < OL_TILE_COLS ? N - p0 : OL_TILE_COLS;
      const float *t = block + p0 * kr;
      float *cp = c + p0;
      if (w == OL_TILE_COLS) {
        v4 c0, c1, c2, c3;
        if (b0 == 0) {
          c0 = c1 = c2 = c3 = ol_f32x4_zero();
        } else {
          c0 = LD(cp), c1 = LD(cp + 4), c2 = LD(cp + 8), c3 = LD(cp + 12);
        }
        for (int64_t k = 0; k < kr; k++, t += OL_TILE_COLS) {
          const v4 x = SPLAT(ak[k]);
          c0 = MADD(c0, x, LD(t)), c1 = MADD(c1, x, LD(t + 4));
          c2 = MADD(c2, x, LD(t + 8)), c3 = MADD(c3, x, LD(t + 12));
        }
        ST(cp, c0), ST(cp + 4, c1), ST(cp + 8, c2), ST(cp + 12, c3);
        continue;
      }
      for (int64_t q = 0; q < w; q++) {
        float v = b0 == 0 ? 0.0f : cp[q];
        for (int64_t k = 0; k < kr; k++) v = v + ak[k] * t[k * w + q];
        cp[q] = v;
      }
    }
  }
}

ol_status ol_f32_gemm_tiled_simd128(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *T,
                                    float *C, int64_t ldc, float *pack) {
  if (M <= 0 || N <= 0) return OL_OK;
  if (M > 1 || K <= 0) return gemm_rows_any(M, N, K, A, lda, T, 0, true, C, ldc, pack);
  gemv_tiled(N, K, A, T, C, 0, N);
  return OL_OK;
}

/* ------------------------------------------------------------ threads */

/* Threads split output elements, never a sum (see gemm.h), so the bits do
 * not depend on the split:
 *  - GEMV on a tiled B (weights prepared at load): whole panels per task,
 *    each thread reading its contiguous part of every block;
 *  - GEMV on a row-major B: contiguous column ranges of at least
 *    PAR_MIN_COLS columns, each computed with the wide kernel (eight B rows
 *    interleaved). The narrow kernel needs whole B rows: its one sequential
 *    stream breaks on part rows (measured natively, a 512 x 1376 product as
 *    two column halves took 2.5x as long as whole rows), the wide one only
 *    1.1x as long;
 *  - GEMM: ranges of rows (multiples of MR), each task packing B itself
 *    (B is reused by every row, packing it twice costs little).
 * Products under PAR_MIN_MACS multiply-adds are not worth waking a thread. */
#define PAR_MIN_MACS (1 << 17)
#define PAR_MIN_COLS 256

typedef struct gemm_job {
  int64_t M, N, K, lda, ldb, ldc, step; /* step: columns (GEMV) or rows (GEMM) per task */
  bool tiled; /* B in the tiled layout (ldb unused) */
  const float *A, *B;
  float *C, *packs;
  atomic_int failed;
} gemm_job;

static void gemv_task(void *arg, int64_t task, int slot) {
  gemm_job *j = arg;
  (void)slot;
  int64_t j0 = task * j->step, n = j->N - j0 < j->step ? j->N - j0 : j->step;
  gemv(j->M, n, j->K, j->A, j->lda, j->B + j0, j->ldb, j->C + j0, j->ldc, 1);
}

static void gemm_task(void *arg, int64_t task, int slot) {
  gemm_job *j = arg;
  int64_t i0 = task * j->step, m = j->M - i0 < j->step ? j->M - i0 : j->step;
  float *pack = j->packs + (size_t)slot * OL_F32_GEMM_PACK_FLOATS;
  if (gemm_rows_any(m, j->N, j->K, j->A + i0 * j->lda, j->lda, j->B, j->ldb, j->tiled, j->C + i0 * j->ldc, j->ldc,
                   pack) != OL_OK)
    atomic_store(&j->failed, 1);
}

static void gemv_tiled_task(void *arg, int64_t task, int slot) {
  gemm_job *j = arg;
  (void)slot;
  int64_t j0 = task * j->step, j1 = j->N - j0 < j->step ? j->N : j0 + j->step;
  gemv_tiled(j->N, j->K, j->A, j->B, j->C, j0, j1);
}

/* ------------------------------------------------------------ dispatch */

/* Many rows over threads (tiled B or not): row ranges, each task packing B. */
static ol_status gemm_rows(gemm_job *job, int threads) {
  const int64_t M = job->M;
  job->step = ((M + threads - 1) / threads + MR - 1) / MR * MR;
  if (threads <= 1 || job->step >= M)
    return gemm_rows_any(M, job->N, job->K, job->A, job->lda, job->B, job->ldb, job->tiled, job->C, job->ldc, NULL);
  int64_t tasks = (M + job->step - 1) / job->step;
  if (tasks < threads) threads = (int)tasks;
  job->packs = ol_xmalloc(sizeof(float) * OL_F32_GEMM_PACK_FLOATS * (size_t)threads);
  if (!job->packs) return OL_OUT_OF_MEMORY;
  ol_parallel_for(tasks, threads, gemm_task, job);
  free(job->packs);
  return atomic_load(&job->failed) ? OL_OUT_OF_MEMORY : OL_OK;
}

ol_status ol_f32_gemm_tiled(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *T, float *C,
                            int64_t ldc) {
  if (M <= 0 || N <= 0) return OL_OK;
  int threads = M * N * (K > 0 ? K : 1) >= PAR_MIN_MACS ? ol_pool_threads() : 1;
  gemm_job job = {M, N, K, lda, 0, ldc, 0, true, A, T, C, NULL, 0};
  if (M > 1 || K <= 0) return gemm_rows(&job, threads);
  /* one row: whole panels per task, so each thread reads its part of every block in one run */
  job.step = ((N + threads - 1) / threads + OL_TILE_COLS - 1) / OL_TILE_COLS * OL_TILE_COLS;
  if (threads <= 1 || job.step < PAR_MIN_COLS) {
    gemv_tiled(N, K, A, T, C, 0, N);
    return OL_OK;
  }
  ol_parallel_for((N + job.step - 1) / job.step, threads, gemv_tiled_task, &job);
  return OL_OK;
}

ol_status ol_f32_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc) {
  if (M <= 0 || N <= 0) return OL_OK;
  int few = M <= GEMV_ROWS || K <= 0;
  int threads = M * N * (K > 0 ? K : 1) >= PAR_MIN_MACS ? ol_pool_threads() : 1;
  gemm_job job = {M, N, K, lda, ldb, ldc, 0, false, A, B, C, NULL, 0};
  if (few) {
    job.step = ((N + threads - 1) / threads + 15) / 16 * 16;
    if (threads <= 1 || job.step < PAR_MIN_COLS) {
      ol_f32_gemv_simd128(M, N, K, A, lda, B, ldb, C, ldc);
      return OL_OK;
    }
    ol_parallel_for((N + job.step - 1) / job.step, threads, gemv_task, &job);
    return OL_OK;
  }
  return gemm_rows(&job, threads);
}
