/* Paged-cache affine codes decoded in register (see qpage.h for the bits). */
#include "simd/qpage.h"

#include <string.h>

#include "simd/vec.h"
#include "simd/vec_f64.h"

/* x = (float)((u ^ flip) - sub) * scale for raw code bits u: (u ^ flip) -
 * flip is the signed code, so with sub = flip + zero this is code - zero.
 * In vectors the bytes u ^ flip become the floats 2^23 + (u ^ flip)
 * (ol_u8x16_biased) and bias = 2^23 + sub is subtracted: integers below
 * 2^24 on both sides, so the difference is code - zero exactly, the float
 * a conversion would give. */
typedef struct qparams {
  ol_i32x4 flip8; /* flip in every byte */
  ol_f32x4 bias, scale;
  uint32_t flip1;
  int32_t sub1;
  float scale1;
} qparams;

static void qparams_init(const ol_qpage_codes *c, qparams *p) {
  int32_t half = c->signed_codes ? 1 << (c->bits - 1) : 0;
  p->flip1 = (uint32_t)half;
  p->sub1 = half + c->zero;
  p->scale1 = c->scale;
  p->flip8 = ol_i32x4_splat((int32_t)((uint32_t)half * 0x01010101u));
  p->bias = ol_f32x4_splat(8388608.0f + (float)p->sub1);
  p->scale = ol_f32x4_splat(c->scale);
}

OL_AI uint32_t raw_code(const int BITS, const uint8_t *data, int64_t e) {
  if (BITS == 8) return data[e];
  if (BITS == 4) return (data[e >> 1] >> ((e & 1) * 4)) & 15u;
  return (data[e >> 2] >> ((e & 3) * 2)) & 3u;
}

OL_AI float decode1(const qparams *p, uint32_t u) { return (float)((int32_t)(u ^ p->flip1) - p->sub1) * p->scale1; }

/* The raw codes of elements [e, e + 16) zero-extended to 16 bytes. Reads
 * only the bytes those elements occupy; a 4- or 2-bit span starting inside
 * a byte is first shifted into whole bytes. */
OL_AI ol_i32x4 code_bytes(const int BITS, const uint8_t *data, int64_t e) {
  if (BITS == 8) return ol_i32x4_load(data + e);
  uint8_t t[8] = {0};
  if (BITS == 4) {
    const uint8_t *b = data + (e >> 1);
    if (!(e & 1)) return ol_u8x16_nibbles(ol_i32x4_load64_zero(b));
    for (int i = 0; i < 8; i++) t[i] = (uint8_t)((b[i] >> 4) | (b[i + 1] << 4));
    return ol_u8x16_nibbles(ol_i32x4_load64_zero(t));
  }
  const uint8_t *b = data + (e >> 2);
  const int shift = (int)(e & 3) * 2;
  if (!shift) memcpy(t, b, 4);
  else
    for (int i = 0; i < 4; i++) t[i] = (uint8_t)((b[i] >> shift) | (b[i + 1] << (8 - shift)));
  return ol_u8x16_crumbs(ol_u8x16_nibbles(ol_i32x4_load64_zero(t)));
}

/* Elements [e, e + 16) as four vectors of floats. */
OL_AI void decode16(const int BITS, const qparams *p, const uint8_t *data, int64_t e, ol_f32x4 x[4]) {
  ol_u8x16_biased(ol_i32x4_xor(code_bytes(BITS, data, e), p->flip8), x);
  for (int k = 0; k < 4; k++) x[k] = ol_f32x4_mul(ol_f32x4_sub(x[k], p->bias), p->scale);
}

OL_AI void decode_span(const int BITS, const ol_qpage_codes *c, int64_t n, float *dst) {
  qparams p;
  qparams_init(c, &p);
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    ol_f32x4 x[4];
    decode16(BITS, &p, c->data, c->first + i, x);
    for (int k = 0; k < 4; k++) ol_f32x4_store(dst + i + 4 * k, x[k]);
  }
  for (; i < n; i++) dst[i] = decode1(&p, raw_code(BITS, c->data, c->first + i));
}

/* The dot product's elements [i, n) (fewer than 16) added to lanes acc:
 * decoded one by one, then the same lanes and tail. */
OL_AI float dot_finish(const int BITS, const float *q, const ol_qpage_codes *c, const qparams *p, ol_f32x4 acc,
                       int64_t i, int64_t n) {
  float rest[16];
  const int64_t r = n - i;
  for (int64_t j = 0; j < r; j++) rest[j] = decode1(p, raw_code(BITS, c->data, c->first + i + j));
  int64_t j = 0;
  for (; j + 4 <= r; j += 4) acc = ol_f32x4_muladd(acc, ol_f32x4_load(q + i + j), ol_f32x4_load(rest + j));
  float s = ol_f32x4_hsum(acc);
  for (; j < r; j++) s = s + q[i + j] * rest[j];
  return s;
}

OL_AI float dot_span(const int BITS, const float *q, const ol_qpage_codes *c, int64_t n) {
  qparams p;
  qparams_init(c, &p);
  ol_f32x4 acc = ol_f32x4_zero();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    ol_f32x4 x[4];
    decode16(BITS, &p, c->data, c->first + i, x);
    for (int k = 0; k < 4; k++) acc = ol_f32x4_muladd(acc, ol_f32x4_load(q + i + 4 * k), x[k]);
  }
  return dot_finish(BITS, q, c, &p, acc, i, n);
}

/* Four spans' dot products interleaved: independent sums, each in
 * dot_span's order. */
OL_AI void dot4_span(const int BITS, const bool SHARED, const float *q, const ol_qpage_codes *c, int64_t n,
                     float *out) {
  qparams p[4];
  ol_f32x4 acc[4];
  for (int r = 0; r < 4; r++) qparams_init(&c[r], &p[r]), acc[r] = ol_f32x4_zero();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    for (int r = 0; r < 4; r++) {
      ol_f32x4 x[4];
      decode16(BITS, &p[SHARED ? 0 : r], c[r].data, c[r].first + i, x);
      for (int k = 0; k < 4; k++) acc[r] = ol_f32x4_muladd(acc[r], ol_f32x4_load(q + i + 4 * k), x[k]);
    }
  }
  for (int r = 0; r < 4; r++) out[r] = dot_finish(BITS, q, &c[r], &p[r], acc[r], i, n);
}

static inline bool same_params(const ol_qpage_codes *c, int n) {
  bool same = true;
  for (int r = 1; r < n; r++) same = same && c[r].scale == c[0].scale && c[r].zero == c[0].zero;
  return same;
}

OL_AI void dot_rows(const int BITS, const float *q, const ol_qpage_codes *rows, int64_t count, int64_t n,
                    float *out) {
  int64_t r = 0;
  for (; r + 4 <= count; r += 4) {
    if (same_params(rows + r, 4)) dot4_span(BITS, true, q, rows + r, n, out + r);
    else dot4_span(BITS, false, q, rows + r, n, out + r);
  }
  for (; r < count; r++) out[r] = dot_span(BITS, q, rows + r, n);
}

/* acc[i] = acc[i] + e[j] * x_j[i] over rows j in order, 16 columns at a
 * time in registers, up to 32 rows' parameters at a time. */
OL_AI void add_rows(const int BITS, float *acc, int64_t n, const ol_qpage_codes *rows, const float *e, int64_t count) {
  for (int64_t j0 = 0; j0 < count; j0 += 32) {
    const int64_t m = count - j0 < 32 ? count - j0 : 32;
    qparams p[32];
    for (int64_t j = 0; j < m; j++) qparams_init(&rows[j0 + j], &p[j]);
    int64_t i = 0;
    for (; i + 16 <= n; i += 16) {
      ol_f32x4 a[4];
      for (int k = 0; k < 4; k++) a[k] = ol_f32x4_load(acc + i + 4 * k);
      for (int64_t j = 0; j < m; j++) {
        ol_f32x4 x[4];
        const ol_f32x4 ev = ol_f32x4_splat(e[j0 + j]);
        decode16(BITS, &p[j], rows[j0 + j].data, rows[j0 + j].first + i, x);
        for (int k = 0; k < 4; k++) a[k] = ol_f32x4_muladd(a[k], ev, x[k]);
      }
      for (int k = 0; k < 4; k++) ol_f32x4_store(acc + i + 4 * k, a[k]);
    }
    for (; i < n; i++) {
      float a = acc[i];
      for (int64_t j = 0; j < m; j++) a = a + e[j0 + j] * decode1(&p[j], raw_code(BITS, rows[j0 + j].data, rows[j0 + j].first + i));
      acc[i] = a;
    }
  }
}

void ol_qpage_decode(const ol_qpage_codes *c, int64_t n, float *dst) {
  if (c->bits == 8) decode_span(8, c, n, dst);
  else if (c->bits == 4) decode_span(4, c, n, dst);
  else decode_span(2, c, n, dst);
}

float ol_qpage_dot(const float *q, const ol_qpage_codes *c, int64_t n) {
  if (c->bits == 8) return dot_span(8, q, c, n);
  if (c->bits == 4) return dot_span(4, q, c, n);
  return dot_span(2, q, c, n);
}

void ol_qpage_dot_rows(const float *q, const ol_qpage_codes *rows, int64_t count, int64_t n, float *out) {
  if (count <= 0) return;
  if (rows[0].bits == 8) dot_rows(8, q, rows, count, n, out);
  else if (rows[0].bits == 4) dot_rows(4, q, rows, count, n, out);
  else dot_rows(2, q, rows, count, n, out);
}

void ol_qpage_add_rows(float *acc, int64_t n, const ol_qpage_codes *rows, const float *e, int64_t count) {
  if (count <= 0) return;
  if (rows[0].bits == 8) add_rows(8, acc, n, rows, e, count);
  else if (rows[0].bits == 4) add_rows(4, acc, n, rows, e, count);
  else add_rows(2, acc, n, rows, e, count);
}
