/* Tiled float matrices (see gemm.h): the layout the fp32 GEMV streams
 * best, packed once when a model is loaded (ops/matmul/packing.c). A
 * decoder's matrix-vector product reads every weight once per token; in the row-major layout each weight
 * row is combined with the whole output vector (load, multiply-add, store
 * per four outputs), in the tiled one a panel of 16 outputs stays in
 * registers over a block of rows, and the matrix is still read front to
 * back. Blocks only permute rows*N elements among themselves, so tiling in
 * place needs one block of scratch. */
#include <stdint.h>
#include <string.h>

#include "simd/gemm.h"

void ol_tiles_from_dense(int64_t K, int64_t N, int rows, float *data, float *scratch) {
  for (int64_t b0 = 0; b0 < K; b0 += rows) {
    int64_t kr = K - b0 < rows ? K - b0 : rows;
    float *block = data + b0 * N;
    memcpy(scratch, block, sizeof(float) * (size_t)(kr * N));
    for (int64_t p0 = 0; p0 < N; p0 += OL_TILE_COLS) {
      int64_t w = N - p0 < OL_TILE_COLS ? N - p0 : OL_TILE_COLS;
      float *panel = block + p0 * kr;
      if (w == OL_TILE_COLS) /* a constant size: inlined, not a call per row */
        for (int64_t k = 0; k < kr; k++) memcpy(panel + k * OL_TILE_COLS, scratch + k * N + p0, sizeof(float) * OL_TILE_COLS);
      else
        for (int64_t k = 0; k < kr; k++) memcpy(panel + k * w, scratch + k * N + p0, sizeof(float) * (size_t)w);
    }
  }
}

void ol_tiles_to_dense(int64_t K, int64_t N, int rows, const float *tiles, void *dense_) {
  char *dense = dense_; /* any alignment: serialized weights land at any byte of the wire */
  for (int64_t b0 = 0; b0 < K; b0 += rows) {
    int64_t kr = K - b0 < rows ? K - b0 : rows;
    const float *block = tiles + b0 * N;
    for (int64_t p0 = 0; p0 < N; p0 += OL_TILE_COLS) {
      int64_t w = N - p0 < OL_TILE_COLS ? N - p0 : OL_TILE_COLS;
      const float *panel = block + p0 * kr;
      if (w == OL_TILE_COLS)
        for (int64_t k = 0; k < kr; k++)
          memcpy(dense + ((b0 + k) * N + p0) * sizeof(float), panel + k * OL_TILE_COLS, sizeof(float) * OL_TILE_COLS);
      else
        for (int64_t k = 0; k < kr; k++)
          memcpy(dense + ((b0 + k) * N + p0) * sizeof(float), panel + k * w, sizeof(float) * (size_t)w);
    }
  }
}
