/* float32 matrix products on the 128-bit vector layer (simd/vec.h).
 *
 * C[M x N] = A[M x K] * B[K x N], row-major, leading dimensions lda/ldb/ldc
 * (elements). Every output element is summed exactly like the scalar
 * reference ol_f32_gemm_scalar: c = +0; then c = c + a[i][k] * b[k][j] for
 * k = 0, 1, ..., K-1, a separate multiply and add (no fma). The vector
 * kernels put different output columns in different lanes, never parts of
 * one sum, and their blocking only pauses a sum (stored to C, reloaded
 * exactly), so every kernel here returns the reference's bits for every
 * shape, natively (SSE2) and in wasm (SIMD128). */
#ifndef OL_SIMD_GEMM_H
#define OL_SIMD_GEMM_H
#include <stdint.h>

#include "core/status.h"

/* The reference: three loops, k outer per row (same order as every kernel). */
void ol_f32_gemm_scalar(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                        const float *B, int64_t ldb, float *C, int64_t ldc);

/* Few rows (token generation, M small): streams B once per group of up to
 * eight rows, reusing each B row for all of them while C stays in cache; one
 * B row at a time when rows are short (N < 4096), eight interleaved when
 * they are long (see gemm.c for the measurements behind the choice). */
void ol_f32_gemv_simd128(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                         const float *B, int64_t ldb, float *C, int64_t ldc);

/* Many rows: B packed in KC x 8 panels (scratch), 4 x 8 register tiles.
 * pack: OL_F32_GEMM_PACK_FLOATS floats or NULL (allocated and freed here).
 * Fails only with OL_OUT_OF_MEMORY. */
#define OL_F32_GEMM_PACK_FLOATS (256 * 512)
ol_status ol_f32_gemm_simd128(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                              const float *B, int64_t ldb, float *C, int64_t ldc, float *pack);

/* ---- tiled B: the layout a decode step's GEMV streams best (gemm_tiles.c)
 * A K x N float matrix stored as blocks of OL_TILE_ROWS rows, each block as
 * panels of OL_TILE_COLS columns (the last may be narrower), each panel
 * row-major: a panel of 16 outputs stays in registers over a block of rows
 * and the matrix is still read front to back. */
#define OL_TILE_COLS 16
#define OL_TILE_ROWS 32
/* Element (k, j) of a K x N matrix tiled with `rows`-row blocks: block
 * b = k / rows holds rows*N elements (fewer in the last). */
static inline int64_t ol_tile_offset(int64_t K, int64_t N, int rows, int64_t k, int64_t j) {
  int64_t b0 = k / rows * rows, kr = K - b0 < rows ? K - b0 : rows;
  int64_t p0 = j / OL_TILE_COLS * OL_TILE_COLS, w = N - p0 < OL_TILE_COLS ? N - p0 : OL_TILE_COLS;
  return b0 * N + p0 * kr + (k - b0) * w + (j - p0);
}
/* Rearranges a dense row-major K x N float matrix into the tiled layout in
 * place; scratch holds rows * N floats. */
void ol_tiles_from_dense(int64_t K, int64_t N, int rows, float *data, float *scratch);
/* Writes the dense row-major form of a tiled K x N matrix to dense. */
void ol_tiles_to_dense(int64_t K, int64_t N, int rows, const float *tiles, void *dense);

/* B tiled (OL_TILE_ROWS-row blocks, K x N): the same sums as
 * the reference on the dense matrix. One row streams the tiles with the
 * sums of a 16-column panel in registers; more rows read the tiles in
 * place with A packed (pack holds A's rows and a padded last panel; with K
 * beyond ~32K they copy B into panels instead). pack as above. */
ol_status ol_f32_gemm_tiled_simd128(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *T,
                                    float *C, int64_t ldc, float *pack);
/* ol_f32_gemm_tiled_simd128 over the thread pool: one row by column panels,
 * more rows by row ranges. Fails only with OL_OUT_OF_MEMORY. */
ol_status ol_f32_gemm_tiled(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda, const float *T, float *C,
                            int64_t ldc);

/* Picks the kernel for the shape (all give the same bits) and, for large
 * enough products, splits the output over the thread pool (core/pool.h):
 * column ranges for few rows, row ranges for many. */
ol_status ol_f32_gemm(int64_t M, int64_t N, int64_t K, const float *A, int64_t lda,
                      const float *B, int64_t ldb, float *C, int64_t ldc);

#endif
