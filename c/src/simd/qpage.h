/* Affine codes of a paged KV cache page (quant/paged.h) decoded in register,
 * a span at a time with one scale and zero point (a row of a page with one
 * parameter set, what PagedAttention appends, or one per token).
 *
 * Codes are packed as ONNX raw_data: 8, 4 or 2 bits, element 0 in the
 * lowest bits, signed (two's complement) or unsigned; a span may start at
 * any element (a 4- or 2-bit span in the middle of a byte too). Every
 * element decodes to the float ol_page_decode gives,
 *   x = (float)(code - zero) * scale
 * (here (u ^ flip) - (flip + zero) in exact 32-bit lanes from the raw bits
 * u, flip = 2^(bits-1) for signed codes, else 0; converted exactly; one
 * multiplication), 16 at a time through simd/vec.h, the last n % 16 one by
 * one. The dot product sums like ol_dot_f32 (ops/float_io.h): four lane
 * sums lane + q[i] * x[i] over the first n - n % 4 elements in order,
 * (l0 + l1) + (l2 + l3), then the rest one by one, separate multiply and
 * add. So the results are the same bits natively (SSE2, plain C) and in
 * wasm, and equal decoding with ol_page_decode and summing in that order.
 * The reference: ol_page_decode (quant/paged.c), element by element. */
#ifndef OL_SIMD_QPAGE_H
#define OL_SIMD_QPAGE_H
#include <stdbool.h>
#include <stdint.h>

/* A span of codes with one parameter set. */
typedef struct ol_qpage_codes {
  const uint8_t *data; /* the packed payload */
  int64_t first;       /* element index of the span's first code */
  int bits;            /* 8, 4 or 2 */
  bool signed_codes;
  float scale;
  int32_t zero;        /* in the code range */
} ol_qpage_codes;

/* dst[0..n) = the span's first n elements. */
void ol_qpage_decode(const ol_qpage_codes *c, int64_t n, float *dst);
/* sum q[i] * x[i] over the span's first n elements x, in the order above. */
float ol_qpage_dot(const float *q, const ol_qpage_codes *c, int64_t n);
/* out[r] = ol_qpage_dot(q, &rows[r], n) for r < count (rows of one code
 * width), four at a time: independent sums, the same bits. */
void ol_qpage_dot_rows(const float *q, const ol_qpage_codes *rows, int64_t count, int64_t n, float *out);
/* acc[i] = acc[i] + e[r] * x_r[i] for r = 0, 1, ..., count - 1 in turn
 * (each product rounded, then the sum), x_r the first n elements of
 * rows[r] as ol_qpage_decode gives them (rows of one code width): the
 * accumulator kept in registers across the rows. */
void ol_qpage_add_rows(float *acc, int64_t n, const ol_qpage_codes *rows, const float *e, int64_t count);

#endif
