/* Integer attention products over paged-cache codes (see qpage_int.h).
 *
 * A 16-byte group of a row holds G = 16 * per codes (per = 8 / bits per
 * byte). Part k (0 <= k < per) of the group is field k of every byte,
 * (byte >> bits * k) & mask, so part k's byte j is element per * j + k of
 * the group; each part is widened to two vectors of eight 16-bit lanes
 * (bytes 0-7, 8-15). Keys take the query in that lane order (ordered once
 * per query), so a row is dot products only. Values interleave two rows'
 * parts byte by byte before widening, so one 16-bit dot product of
 * (u_a, u_b) lanes with (W_a, W_b) adds both rows' products per column. */
#include "simd/qpage_int.h"

#include <math.h>

#include "simd/vec.h"
#include "simd/vec_f64.h"

/* The bytes that flip signed codes to unsigned ones, made once ahead of a
 * kernel's loops (ol_i32x4_opaque: kept in a register). */
static inline ol_i32x4 flip_bytes(int bits, bool signed_codes) {
  const uint32_t byte = !signed_codes ? 0 : bits == 8 ? 0x80 : bits == 4 ? 0x88 : 0xAA;
  return ol_i32x4_opaque(ol_i32x4_splat((int32_t)(byte * 0x01010101u)));
}

/* x rounded to an integer (|x| < 2^22), ties to even: adding and
 * subtracting 1.5 * 2^23 in float */
static inline float round_small(float x) { return (x + 12582912.0f) - 12582912.0f; }

/* x[i] * k rounded (|x[i] * k| < 2^22) into int16 lanes, eight at a time. */
static void round_into(const float *x, float k, int64_t n, int16_t *out) {
  const ol_f32x4 kv = ol_f32x4_splat(k);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const ol_i32x4 lo = ol_f32x4_round_small(ol_f32x4_mul(ol_f32x4_load(x + i), kv));
    const ol_i32x4 hi = ol_f32x4_round_small(ol_f32x4_mul(ol_f32x4_load(x + i + 4), kv));
    ol_i32x4_store(out + i, ol_i16x8_narrow(lo, hi));
  }
  for (; i < n; i++) out[i] = (int16_t)round_small(x[i] * k);
}

/* max |x[i]| (x finite) */
static float abs_max(const float *x, int64_t n) {
  ol_f32x4 mv = ol_f32x4_zero();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    const ol_f32x4 v = ol_f32x4_load(x + i);
    mv = ol_f32x4_max(ol_f32x4_max(v, ol_f32x4_sub(ol_f32x4_zero(), v)), mv);
  }
  float m = 0.0f;
  for (int k = 0; k < 4; k++) m = ol_f32x4_lane(mv, k) > m ? ol_f32x4_lane(mv, k) : m;
  for (; i < n; i++) m = fabsf(x[i]) > m ? fabsf(x[i]) : m;
  return m;
}

bool ol_qpage_quantize_query(const float *q, int64_t n, int16_t *Q, float *scale, int32_t *sum) {
  for (int64_t i = 0; i < n; i++)
    if (!isfinite(q[i])) return false;
  const float m = abs_max(q, n), k = m > 0.0f ? 16383.0f / m : 0.0f;
  if (isinf(k)) return false;
  round_into(q, k, n, Q);
  *scale = m / 16383.0f;
  *sum = 0;
  for (int64_t i = 0; i < n; i++) *sum += Q[i];
  return true;
}

float ol_qpage_quantize_weights(const float *e, const float *scale, int64_t n, int16_t *W) {
  float w[OL_QPAGE_INT_ROWS];
  int64_t r = 0;
  for (; r + 4 <= n; r += 4) ol_f32x4_store(w + r, ol_f32x4_mul(ol_f32x4_load(e + r), ol_f32x4_load(scale + r)));
  for (; r < n; r++) w[r] = e[r] * scale[r];
  const float m = abs_max(w, n), k = m > 0.0f ? 32767.0f / m : 0.0f;
  if (isinf(k)) { /* every |w| below 2^-112 */
    for (r = 0; r < n; r++) W[r] = 0;
    return 0.0f;
  }
  round_into(w, k, n, W);
  return m / 32767.0f;
}

void ol_qpage_order_query(const int16_t *Q, int64_t n, int bits, int16_t *ordered) {
  const int per = 8 / bits, G = 16 * per;
  for (int64_t g = 0; g < n; g += G)
    for (int i = 0; i < G; i++) ordered[g + i] = Q[g + per * (i % 16) + i / 16];
}

/* The mask of a byte's low field, made once ahead of a kernel's loop
 * (ol_i32x4_opaque: kept in a register). */
OL_AI ol_i32x4 field_mask(const int BITS) {
  return ol_i32x4_opaque(ol_i32x4_splat(BITS == 4 ? 0x0F0F0F0F : 0x03030303));
}

/* Part k of a group (every byte's field k, zero-extended within the byte;
 * mask: field_mask). */
OL_AI ol_i32x4 part(const int BITS, ol_i32x4 v, int k, ol_i32x4 mask) {
  if (BITS == 8) return v;
  return ol_i32x4_and(k ? ol_u16x8_shr(v, BITS * k) : v, mask);
}

/* [sum of a[0]'s lanes, ..., sum of a[3]'s lanes] */
OL_AI ol_i32x4 lane_totals(const ol_i32x4 *a) {
  ol_i32x4 t0 = ol_i32x4_add(ol_i32x4_zip_lo(a[0], a[1]), ol_i32x4_zip_hi(a[0], a[1]));
  ol_i32x4 t1 = ol_i32x4_add(ol_i32x4_zip_lo(a[2], a[3]), ol_i32x4_zip_hi(a[2], a[3]));
  return ol_i32x4_add(ol_i64x2_zip_lo(t0, t1), ol_i64x2_zip_hi(t0, t1));
}

/* ------------------------------------------------------------ keys */

/* T[r] for R (1 or 4) rows side by side: each group of the query loaded once.
 * SIGNED8: 8-bit signed codes widened with their sign (T = sum Q * code,
 * no flip), else u = code XOR flip widened without. */
OL_AI ol_i32x4 dots(const int BITS, const bool SIGNED8, const int R, const int16_t *ordered, ol_i32x4 flip,
                    ol_i32x4 mask, const uint8_t *const *rows, int64_t offset, int64_t n) {
  const int per = 8 / BITS;
  const int64_t groups = n * BITS / 128;
  ol_i32x4 acc[4];
  for (int r = 0; r < 4; r++) acc[r] = ol_i32x4_splat(0);
  for (int64_t g = 0; g < groups; g++) {
    ol_i32x4 v[4];
    for (int r = 0; r < R; r++) {
      v[r] = ol_i32x4_load(rows[r] + offset + 16 * g);
      if (!SIGNED8) v[r] = ol_i32x4_xor(v[r], flip);
    }
    const int16_t *qg = ordered + 16 * per * g;
    for (int k = 0; k < per; k++) {
      const ol_i32x4 q0 = ol_i32x4_load(qg + 16 * k), q1 = ol_i32x4_load(qg + 16 * k + 8);
      for (int r = 0; r < R; r++) {
        const ol_i32x4 c = part(BITS, v[r], k, mask);
        const ol_i32x4 lo = SIGNED8 ? ol_i16x8_from_i8_lo(c) : ol_u16x8_from_u8_lo(c);
        const ol_i32x4 hi = SIGNED8 ? ol_i16x8_from_i8_hi(c) : ol_u16x8_from_u8_hi(c);
        const ol_i32x4 d = ol_i32x4_add(ol_i32x4_dot_i16x8(lo, q0), ol_i32x4_dot_i16x8(hi, q1));
        acc[r] = ol_i32x4_add(acc[r], d);
      }
    }
  }
  return lane_totals(acc);
}

/* SIGNED8: 8-bit signed codes (see dots), the flip's part of T then 0 */
OL_AI void scores(const int BITS, const bool SIGNED8, const int16_t *ordered, int32_t qsum, float c, bool signed_codes,
                  const uint8_t *const *rows, int64_t offset, const float *scale, const int32_t *zero, int64_t count,
                  int64_t n, float *out) {
  const ol_i32x4 f = flip_bytes(BITS, signed_codes), mask = field_mask(BITS);
  const int32_t flip = signed_codes && !SIGNED8 ? 1 << (BITS - 1) : 0;
  for (int64_t r0 = 0; r0 < count;) {
    const int R = count - r0 >= 4 ? 4 : 1;
    const ol_i32x4 t = R == 4 ? dots(BITS, SIGNED8, 4, ordered, f, mask, rows + r0, offset, n)
                              : dots(BITS, SIGNED8, 1, ordered, f, mask, rows + r0, offset, n);
    if (R == 4) { /* the scalar form's operations, lane by lane */
      const ol_i32x4 zq = ol_i32x4_mul(ol_i32x4_add(ol_i32x4_load(zero + r0), ol_i32x4_splat(flip)), ol_i32x4_splat(qsum));
      const ol_f32x4 k = ol_f32x4_mul(ol_f32x4_splat(c), ol_f32x4_load(scale + r0));
      ol_f32x4_store(out + r0, ol_f32x4_mul(ol_i32x4_to_f32x4(ol_i32x4_sub(t, zq)), k));
    } else {
      const int32_t T = ol_i32x4_lane(t, 0) - (flip + zero[r0]) * qsum;
      out[r0] = (float)T * (c * scale[r0]);
    }
    r0 += R;
  }
}

void ol_qpage_int_scores(const int16_t *ordered, int32_t qsum, float c, int bits, bool signed_codes,
                         const uint8_t *const *rows, int64_t offset, const float *scale, const int32_t *zero,
                         int64_t count, int64_t n, float *out) {
  if (bits == 8 && signed_codes) scores(8, true, ordered, qsum, c, signed_codes, rows, offset, scale, zero, count, n, out);
  else if (bits == 8) scores(8, false, ordered, qsum, c, signed_codes, rows, offset, scale, zero, count, n, out);
  else if (bits == 4) scores(4, false, ordered, qsum, c, signed_codes, rows, offset, scale, zero, count, n, out);
  else scores(2, false, ordered, qsum, c, signed_codes, rows, offset, scale, zero, count, n, out);
}

/* ------------------------------------------------------------ values */

/* One group g of every row: pairs of rows (an odd last row pairs with
 * itself at weight 0); acc[4k + q] lane l is part k's byte j = 4q + l,
 * element per * j + k of the group. Then out[d] += (float)(A_d - Z) * ws
 * in element order. */
OL_AI void weighted_group(const int BITS, const bool SIGNED, const int16_t *W, ol_i32x4 flip, ol_i32x4 mask,
                          const uint8_t *const *rows, int64_t offset, int64_t count, int64_t g, ol_i32x4 Z, ol_f32x4 ws,
                          float *out) {
  const int PER = 8 / BITS;
  ol_i32x4 acc[16];
  for (int i = 0; i < 4 * PER; i++) acc[i] = ol_i32x4_splat(0);
  for (int64_t j = 0; j < count; j += 2) {
    const bool two = j + 1 < count;
    const ol_i32x4 w = ol_i32x4_splat((int32_t)((uint32_t)(uint16_t)W[j] | (uint32_t)(uint16_t)(two ? W[j + 1] : 0) << 16));
    ol_i32x4 va = ol_i32x4_load(rows[j] + offset + 16 * g), vb = ol_i32x4_load(rows[two ? j + 1 : j] + offset + 16 * g);
    if (SIGNED) va = ol_i32x4_xor(va, flip), vb = ol_i32x4_xor(vb, flip); /* unsigned: flip is 0 */
    for (int k = 0; k < PER; k++) {
      const ol_i32x4 ca = part(BITS, va, k, mask), cb = part(BITS, vb, k, mask);
      const ol_i32x4 lo = ol_u8x16_zip_lo(ca, cb), hi = ol_u8x16_zip_hi(ca, cb);
      acc[4 * k] = ol_i32x4_add(acc[4 * k], ol_i32x4_dot_i16x8(ol_u16x8_from_u8_lo(lo), w));
      acc[4 * k + 1] = ol_i32x4_add(acc[4 * k + 1], ol_i32x4_dot_i16x8(ol_u16x8_from_u8_hi(lo), w));
      acc[4 * k + 2] = ol_i32x4_add(acc[4 * k + 2], ol_i32x4_dot_i16x8(ol_u16x8_from_u8_lo(hi), w));
      acc[4 * k + 3] = ol_i32x4_add(acc[4 * k + 3], ol_i32x4_dot_i16x8(ol_u16x8_from_u8_hi(hi), w));
    }
  }
  /* back to element order: lanes of part k interleaved with the other parts' */
  ol_i32x4 e[16];
  for (int q = 0; q < 4; q++) {
    if (PER == 1) {
      e[q] = acc[q];
    } else if (PER == 2) {
      e[2 * q] = ol_i32x4_zip_lo(acc[q], acc[4 + q]), e[2 * q + 1] = ol_i32x4_zip_hi(acc[q], acc[4 + q]);
    } else {
      const ol_i32x4 a0 = acc[q], a1 = acc[4 + q], a2 = acc[8 + q], a3 = acc[12 + q];
      const ol_i32x4 t0 = ol_i32x4_zip_lo(a0, a1), t1 = ol_i32x4_zip_lo(a2, a3);
      const ol_i32x4 t2 = ol_i32x4_zip_hi(a0, a1), t3 = ol_i32x4_zip_hi(a2, a3);
      e[4 * q] = ol_i64x2_zip_lo(t0, t1), e[4 * q + 1] = ol_i64x2_zip_hi(t0, t1);
      e[4 * q + 2] = ol_i64x2_zip_lo(t2, t3), e[4 * q + 3] = ol_i64x2_zip_hi(t2, t3);
    }
  }
  float *o = out + 16 * PER * g;
  for (int i = 0; i < 4 * PER; i++)
    ol_f32x4_store(o + 4 * i, ol_f32x4_add(ol_f32x4_load(o + 4 * i), ol_f32x4_mul(ol_i32x4_to_f32x4(ol_i32x4_sub(e[i], Z)), ws)));
}

OL_AI void weighted_add(const int BITS, const int16_t *W, float ws, bool signed_codes, const uint8_t *const *rows,
                        int64_t offset, const int32_t *zero, int64_t count, int64_t n, float *acc) {
  const int32_t flip = signed_codes ? 1 << (BITS - 1) : 0;
  int32_t Z = 0;
  for (int64_t r = 0; r < count; r++) Z += W[r] * (flip + zero[r]);
  const ol_i32x4 f = flip_bytes(BITS, signed_codes), mask = field_mask(BITS), z = ol_i32x4_splat(Z);
  const ol_f32x4 s = ol_f32x4_splat(ws);
  const int64_t groups = n * BITS / 128;
  if (signed_codes)
    for (int64_t g = 0; g < groups; g++) weighted_group(BITS, true, W, f, mask, rows, offset, count, g, z, s, acc);
  else
    for (int64_t g = 0; g < groups; g++) weighted_group(BITS, false, W, f, mask, rows, offset, count, g, z, s, acc);
}

void ol_qpage_int_weighted_add(const int16_t *W, float ws, int bits, bool signed_codes, const uint8_t *const *rows,
                               int64_t offset, const int32_t *zero, int64_t count, int64_t n, float *acc) {
  if (count <= 0) return;
  if (bits == 8) weighted_add(8, W, ws, signed_codes, rows, offset, zero, count, n, acc);
  else if (bits == 4) weighted_add(4, W, ws, signed_codes, rows, offset, zero, count, n, acc);
  else weighted_add(2, W, ws, signed_codes, rows, offset, zero, count, n, acc);
}
