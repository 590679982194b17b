/* The weights MatMul and MatMulNBits read in layouts of their own, packed
 * in place when a model is loaded (the rows' pack hooks, model/pack.c):
 *   f32 tiles: a float K x N B in OL_TILE_ROWS-row blocks of OL_TILE_COLS
 *     columns (simd/gemm.h), what a decode step's GEMV streams best;
 *   lanes: MatMulNBits B and scales for int8 activations with the 4-byte
 *     words of OL_LANE_GROUP outputs interleaved (simd/qgemv_i8_lane.h).
 * Every other reader gets the dense bytes back through to_dense. */
#include "ops/matmul/matmul.h"
#include "simd/gemm.h"
#include "simd/qgemv_i8_lane.h"

/* ------------------------------------------------------------ f32 tiles: params K, N, block rows */

static void tiles_to_dense(const ol_packing *p, const void *packed, void *dense) {
  ol_tiles_to_dense(p->params[0], p->params[1], (int)p->params[2], packed, dense);
}

static void tiles_from_dense(const ol_packing *p, void *data, void *scratch) {
  ol_tiles_from_dense(p->params[0], p->params[1], (int)p->params[2], data, scratch);
}

const ol_packing_kind ol_packing_f32_tiles = {"f32 tiles", tiles_to_dense};

/* MatMul's B: a float matrix of at least one panel's width. */
size_t ol_matmul_pack(const ol_node *node, const ol_tensor *const *constants, ol_pack_request *requests) {
  const ol_tensor *b = node->num_inputs == 2 ? constants[1] : NULL;
  if (!b || b->dtype != OL_DTYPE_FLOAT || b->rank != 2 || b->dims[0] < 1 || b->dims[1] < OL_TILE_COLS) return 0;
  requests[0] = (ol_pack_request){1, {&ol_packing_f32_tiles, {b->dims[0], b->dims[1], OL_TILE_ROWS}},
                                  tiles_from_dense, sizeof(float) * OL_TILE_ROWS * (size_t)b->dims[1]};
  return 1;
}

/* ------------------------------------------------------------ lanes: params rows, row bytes, odd-byte xor, block bytes */

static void lanes_to_dense(const ol_packing *p, const void *packed, void *dense) {
  ol_lanes_to_dense(p->params[0], (size_t)p->params[1], (size_t)p->params[3], (uint8_t)p->params[2], packed, dense);
}

static void lanes_from_dense(const ol_packing *p, void *data, void *scratch) {
  ol_lanes_from_dense(p->params[0], (size_t)p->params[1], (size_t)p->params[3], (uint8_t)p->params[2], data, scratch);
}

const ol_packing_kind ol_packing_lanes = {"lanes", lanes_to_dense};

static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* rows of `blocks` blocks */
static ol_pack_request lanes_of(uint8_t input, int64_t rows, int64_t blocks, const ol_tensor *t, uint8_t odd_xor) {
  size_t row_bytes = ol_dtype_storage_bytes(t->dtype, ol_tcount(t)) / (size_t)rows;
  return (ol_pack_request){input, {&ol_packing_lanes, {rows, (int64_t)row_bytes, odd_xor, (int64_t)row_bytes / blocks}},
                           lanes_from_dense, OL_LANE_SCRATCH(row_bytes)};
}

/* MatMulNBits B and scales, together, when the node runs the lane kernel:
 * int8 activations (accuracy_level 4, blocks 16..256), 4 or 8 bits, at
 * least one group of OL_LANE_GROUP outputs, no g_idx, zero points absent
 * or a uint8 initializer. */
size_t ol_nbits_pack(const ol_node *node, const ol_tensor *const *constants, ol_pack_request *requests) {
  if (node->num_inputs < 3 || (node->num_inputs > 4 && node->inputs[4][0])) return 0;
  int64_t bits = ol_attr_int(node, "bits", 4), bs = ol_attr_int(node, "block_size", -1);
  int64_t K = ol_attr_int(node, "K", -1), N = ol_attr_int(node, "N", -1);
  if ((bits != 4 && bits != 8) || bs < 16 || bs > 256 || !pow2(bs) || ol_attr_int(node, "accuracy_level", 0) != 4 ||
      K < 1 || N < OL_LANE_GROUP || N > INT32_MAX)
    return 0;
  int64_t kb = (K + bs - 1) / bs;
  const ol_tensor *b = constants[1], *sc = constants[2];
  if (!b || !sc || b->dtype != OL_DTYPE_UINT8 || b->dims[0] != N || ol_tcount(b) != N * kb * (bs * bits / 8) ||
      sc->dtype != OL_DTYPE_FLOAT || ol_tcount(sc) != N * kb)
    return 0;
  if (node->num_inputs > 3 && node->inputs[3][0] && (!constants[3] || constants[3]->dtype != OL_DTYPE_UINT8)) return 0;
  requests[0] = lanes_of(1, N, kb, b, OL_LANE_ODD_XOR(bits));
  requests[1] = lanes_of(2, N, kb, sc, 0);
  return 2;
}
