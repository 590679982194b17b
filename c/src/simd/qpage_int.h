/* Integer attention products over paged-cache codes (quant/paged.h), what
 * PagedAttention uses for rows of affine codes that fill whole 16-byte
 * groups (ol_qpage_int_fits): the float side is quantized to int16, the
 * codes enter as they are stored, and every sum is an exact integer, so
 * its order does not matter and vectors (simd/vec.h: wasm SIMD128, SSE2,
 * plain C) give the same integers on every build.
 *
 * A row is given by a pointer to the byte holding its first code; codes are
 * packed as ONNX raw_data (element 0 in the lowest bits). u = raw code XOR
 * flip (flip = 2^(bits-1) for signed codes, else 0) runs 0 .. 2^bits - 1,
 * and code - zero = u - (flip + zero). */
#ifndef OL_SIMD_QPAGE_INT_H
#define OL_SIMD_QPAGE_INT_H
#include <stdbool.h>
#include <stdint.h>

/* Keys: |Q| <= 16383 and u <= 255, so for rows of at most
 * OL_QPAGE_INT_KEYS elements both T = sum Q * u and sub * sum Q (sub =
 * flip + zero <= 255) stay below 2^30 and their difference fits an int32.
 * Values: |W| <= 32767, at most OL_QPAGE_INT_ROWS rows (the chunk of
 * PagedAttention) per sum: below 2^29. */
enum { OL_QPAGE_INT_KEYS = 256, OL_QPAGE_INT_ROWS = 64 };

/* Whether n codes of `bits` bits are whole 16-byte groups. */
static inline bool ol_qpage_int_fits(int bits, int64_t n) { return n > 0 && n * bits % 128 == 0; }

/* Q[i] = round(q[i] * k), k = 16383 / max |q| (float operations, ties to
 * even); *scale = max |q| / 16383, the value of a unit of Q (0 when q is
 * all zeros: Q = 0); *sum = sum of Q. False when q has a non-finite
 * element or k overflows (max |q| below 2^-112; Q then unset). */
bool ol_qpage_quantize_query(const float *q, int64_t n, int16_t *Q, float *scale, int32_t *sum);
/* Q reordered into the lane order in which the kernel splits rows of
 * `bits`-bit codes (ol_qpage_int_fits(bits, n)). */
void ol_qpage_order_query(const int16_t *Q, int64_t n, int bits, int16_t *ordered);
/* Key scores of the rows at rows[r] + offset (bytes), r < count, of one
 * code width and sign, n elements each (n <= OL_QPAGE_INT_KEYS):
 *   out[r] = (float)(T_r - (flip + zero[r]) * qsum) * (c * scale[r])
 * with T_r = sum over i < n of Q[i] * u_ri (ordered from
 * ol_qpage_order_query, qsum = sum of Q), the difference exact in int32,
 * float products. */
void ol_qpage_int_scores(const int16_t *ordered, int32_t qsum, float c, int bits, bool signed_codes,
                         const uint8_t *const *rows, int64_t offset, const float *scale, const int32_t *zero,
                         int64_t count, int64_t n, float *out);

/* W[r] = round(w_r * k) for w_r = e[r] * scale[r] and k = 32767 / max |w|
 * (float operations, ties to even; e and scale finite; n <=
 * OL_QPAGE_INT_ROWS): |W| <= 32767. Returns max |w| / 32767, the value of
 * a unit of W; 0 with W = 0 when every |w| is 0 or below 2^-112 (k would
 * overflow; PagedAttention's weights sum to at least 1, so such a chunk
 * adds nothing a float could hold beside it). */
float ol_qpage_quantize_weights(const float *e, const float *scale, int64_t n, int16_t *W);
/* Weighted value rows (rows as for ol_qpage_int_scores, count <=
 * OL_QPAGE_INT_ROWS) added to acc[d] for d < n:
 *   acc[d] = acc[d] + (float)(A_d - Z) * ws
 * with A_d = sum over r of W[r] * u_rd and Z = sum of W[r] * (flip +
 * zero[r]), both exact in int32. */
void ol_qpage_int_weighted_add(const int16_t *W, float ws, int bits, bool signed_codes, const uint8_t *const *rows,
                               int64_t offset, const int32_t *zero, int64_t count, int64_t n, float *acc);

#endif
