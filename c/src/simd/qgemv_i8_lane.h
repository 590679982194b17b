/* MatMulNBits GEMV with int8 activations on weights laid out lane per
 * output (prepared once at load): the same result, bit for bit, as
 * ol_qgemv_i8_nbits (qgemv_i8.h: formula and order) on the dense weights.
 *
 * Layout: B (N, kb, blob) and the float scales (N, kb), each viewed as N
 * rows of 4-byte words, in the lane layout (ol_lanes_from_dense below,
 * groups of OL_LANE_GROUP = 8 outputs): for group g,
 * word w of output 8g+i is stored at word 8w+i of the group; pairs of
 * groups (outputs 16p .. 16p + 15) then alternate block by block (block j
 * of the first group, block j of the second, block j + 1 of the first,
 * ...); a lone last group keeps its group order, and the N % 8 outputs of
 * the tail stay dense in their dense place. So for block j and chunk c
 * (4 bytes of each output's block: 32 / bits elements) one 16-byte load
 * holds four outputs' codes side by side, i32 lane i of the integer sums
 * belongs to one output for the whole block (no transpose), a pair's
 * weights are one ascending stream, and one vector load gives four block
 * scales.
 * Needs blob % 4 == 0 (every MatMulNBits block of 4 or 8 bits). 8-bit
 * codes are stored with the odd bytes (the high byte of every 16-bit pair)
 * XOR 0x80, i.e. as the signed byte code - 128 (OL_LANE_ODD_XOR below;
 * qgemv_i8_lane.c says why). */
#ifndef OL_SIMD_QGEMV_I8_LANE_H
#define OL_SIMD_QGEMV_I8_LANE_H
#include <stddef.h>
#include <stdint.h>

#include "simd/qgemv.h"

/* Lane layout: rows of equal length in 4-byte words, made of blocks of
 * block_bytes (a multiple of 4 dividing row_bytes); the words of each
 * group of OL_LANE_GROUP rows interleaved (word w of row g+i at word
 * G*w + i of the group), the blocks of each pair of groups alternating
 * (a lone last group as it is); a tail of fewer rows stays dense. Every odd
 * byte is XORed with odd_xor (OL_LANE_ODD_XOR(bits) for B, 0 for the
 * scales). In place; scratch holds OL_LANE_SCRATCH(row_bytes) bytes. */
#define OL_LANE_GROUP 8
#define OL_LANE_ODD_XOR(bits) ((bits) == 8 ? 0x80 : 0)
#define OL_LANE_SCRATCH(row_bytes) (2 * OL_LANE_GROUP * (size_t)(row_bytes))
void ol_lanes_from_dense(int64_t rows, size_t row_bytes, size_t block_bytes, uint8_t odd_xor, void *data,
                         void *scratch);
/* Writes the dense form of lane-layout bytes (rows of row_bytes) to dense. */
void ol_lanes_to_dense(int64_t rows, size_t row_bytes, size_t block_bytes, uint8_t odd_xor, const void *lanes,
                       void *dense);

/* Bytes of scratch for one prepared row of A, and its preparation: codes
 * quantized as ol_qgemv_i8_prepare does, arranged for this kernel. */
size_t ol_qgemv_i8_lane_work_bytes(const ol_qgemv_shape *s);
void ol_qgemv_i8_lane_prepare(const ol_qgemv_shape *s, const float *a, void *work);

/* y[r * ldy + n - n0] for nrows (1..4) prepared rows and n in [n0, n1): B
 * and scales in the lane layout, zero points (packed uint8 or float, as
 * given to ol_qgemv_i8_nbits, dense) and bias dense. Any range; ranges on
 * multiples of 8 compute only their own groups. */
void ol_qgemv_i8_lane_rows(const ol_qgemv_shape *s, const void *const *works, int nrows, const uint8_t *B,
                           const float *scales, const uint8_t *zp_u8, const float *zp_f, const float *bias,
                           int64_t n0, int64_t n1, float *y, int64_t ldy);

#endif
