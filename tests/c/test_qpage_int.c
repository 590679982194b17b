/* Integer attention products over paged-cache codes (simd/qpage_int.c)
 * against the formulas of simd/qpage_int.h written out element by element
 * here: every code width (8, 4, 2 bits), signed and unsigned, rows of one
 * to several 16-byte groups at unrelated addresses, row counts that are
 * not multiples of 4 (keys) or 2 (values), query values and weights of
 * both signs at their bounds (16383, 32767) against the largest codes
 * (the int32 bounds of qpage_int.h), per-row scales and zero points. The
 * integer sums are exact, so the results must be equal bit for bit. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "simd/qpage_int.h"

#include "test_random.h"

enum { MAX_N = 256, MAX_ROWS = 32 };

/* u of element e of a row: the raw field XOR the field's flip bits */
static int32_t code_u(const uint8_t *row, int64_t e, int bits, bool signed_codes) {
  const int per = 8 / bits;
  uint32_t raw = (uint32_t)(row[e / per] >> (bits * (e % per))) & ((1u << bits) - 1);
  uint32_t flip = signed_codes ? 1u << (bits - 1) : 0;
  return (int32_t)(raw ^ flip);
}

static void random_bytes(uint8_t *p, size_t n) {
  for (size_t i = 0; i < n; i++) p[i] = (uint8_t)next_u32();
}

/* Rows scattered through one buffer, each at its own offset. */
static void scattered_rows(uint8_t *buf, size_t buf_bytes, int64_t count, int64_t row_bytes, const uint8_t **rows) {
  random_bytes(buf, buf_bytes);
  for (int64_t r = 0; r < count; r++)
    rows[r] = buf + (size_t)r * (size_t)(row_bytes + 3) + (size_t)(next_u32() % 3);
}

/* round(x), ties to even, as a library call (the kernels add 1.5 * 2^23) */
static int32_t rounded(float x) { return (int32_t)nearbyintf(x); }

static void query_quantization(void) {
  float q[MAX_N];
  int16_t Q[MAX_N];
  int bad = 0;
  for (int trial = 0; trial < 50; trial++) {
    const int64_t n = 1 + next_u32() % MAX_N;
    for (int64_t i = 0; i < n; i++) q[i] = rnd();
    if (trial == 1) q[n / 2] = 3.0e38f, q[0] = -3.0e38f;
    float scale;
    int32_t sum;
    CHECK(ol_qpage_quantize_query(q, n, Q, &scale, &sum));
    float m = 0;
    int32_t want_sum = 0, biggest = 0;
    for (int64_t i = 0; i < n; i++) m = fmaxf(m, fabsf(q[i]));
    bad += scale != m / 16383.0f;
    const float k = 16383.0f / m;
    for (int64_t i = 0; i < n; i++) {
      bad += Q[i] != rounded(q[i] * k);
      want_sum += Q[i];
      biggest = abs(Q[i]) > biggest ? abs(Q[i]) : biggest;
    }
    bad += sum != want_sum || biggest != 16383;
  }
  CHECK(bad == 0);
  float zeros[16] = {0}, scale = 1;
  int32_t sum = 1;
  CHECK(ol_qpage_quantize_query(zeros, 16, Q, &scale, &sum));
  CHECK(scale == 0 && sum == 0 && Q[0] == 0 && Q[15] == 0);
  zeros[3] = NAN;
  CHECK(!ol_qpage_quantize_query(zeros, 16, Q, &scale, &sum));
  zeros[3] = INFINITY;
  CHECK(!ol_qpage_quantize_query(zeros, 16, Q, &scale, &sum));
  zeros[3] = 1e-38f; /* 16383 / max |q| overflows */
  CHECK(!ol_qpage_quantize_query(zeros, 16, Q, &scale, &sum));
  zeros[3] = 1e-30f;
  CHECK(ol_qpage_quantize_query(zeros, 16, Q, &scale, &sum) && Q[3] == 16383 && sum == 16383);
}

/* Rows of one width and sign with their scales and zero points: the
 * largest codes (u = 2^bits - 1) or random ones. */
static void random_params(bool largest, int bits, bool sign, float *scale, int32_t *zero, int64_t count) {
  const int32_t lo = sign ? -(1 << (bits - 1)) : 0, span = 1 << bits;
  for (int64_t r = 0; r < count; r++) {
    scale[r] = rnd();
    zero[r] = largest ? lo : lo + (int32_t)(next_u32() % (uint32_t)span);
  }
}

static void key_scores_match_formula(void) {
  static uint8_t buf[MAX_ROWS * (MAX_N + 3) + 16];
  const uint8_t *rows[MAX_ROWS];
  int16_t Q[MAX_N], ordered[MAX_N];
  float scale[MAX_ROWS], out[MAX_ROWS];
  int32_t zero[MAX_ROWS];
  int bad = 0;
  for (int bits = 8; bits >= 2; bits /= 2)
    for (int sign = 0; sign < 2; sign++)
      for (int trial = 0; trial < 12; trial++) {
        const int64_t group = 128 / bits, n = trial < 2 ? MAX_N : group * (1 + next_u32() % (MAX_N / group));
        const int64_t count = 1 + next_u32() % MAX_ROWS;
        int32_t qsum = 0;
        for (int64_t i = 0; i < n; i++) {
          Q[i] = (int16_t)(trial < 2 ? (trial ? -16383 : 16383) : (int32_t)(next_u32() % 32767) - 16383);
          qsum += Q[i];
        }
        scattered_rows(buf, sizeof buf, count, n * bits / 8, rows);
        if (trial < 2) /* every u at its largest: the bound of qpage_int.h */
          for (int64_t r = 0; r < count; r++)
            memset((uint8_t *)rows[r], sign ? (bits == 8 ? 0x7F : bits == 4 ? 0x77 : 0x55) : 0xFF, (size_t)(n * bits / 8));
        random_params(trial < 2, bits, sign, scale, zero, count);
        const float c = fabsf(rnd());
        ol_qpage_order_query(Q, n, bits, ordered);
        ol_qpage_int_scores(ordered, qsum, c, bits, sign, rows, 0, scale, zero, count, n, out);
        for (int64_t r = 0; r < count; r++) {
          int64_t T = 0;
          for (int64_t i = 0; i < n; i++) T += (int64_t)Q[i] * code_u(rows[r], i, bits, sign);
          const int64_t sub = (sign ? 1 << (bits - 1) : 0) + zero[r];
          const float want = (float)(T - sub * qsum) * (c * scale[r]);
          bad += memcmp(&want, &out[r], sizeof want) != 0;
        }
      }
  CHECK(bad == 0);
}

static void weighted_rows_match_formula(void) {
  static uint8_t buf[MAX_ROWS * (MAX_N + 3) + 16];
  const uint8_t *rows[MAX_ROWS];
  int16_t W[MAX_ROWS];
  float scale[MAX_ROWS], acc[MAX_N], want[MAX_N];
  int32_t zero[MAX_ROWS];
  int bad = 0;
  for (int bits = 8; bits >= 2; bits /= 2)
    for (int sign = 0; sign < 2; sign++)
      for (int trial = 0; trial < 12; trial++) {
        const int64_t group = 128 / bits, n = group * (1 + next_u32() % (MAX_N / group));
        const int64_t count = trial < 2 ? MAX_ROWS : 1 + next_u32() % MAX_ROWS;
        for (int64_t r = 0; r < count; r++)
          W[r] = (int16_t)(trial < 2 ? (trial ? -32767 : 32767) : (int32_t)(next_u32() % 65535) - 32767);
        scattered_rows(buf, sizeof buf, count, n * bits / 8, rows);
        if (trial < 2)
          for (int64_t r = 0; r < count; r++)
            memset((uint8_t *)rows[r], sign ? (bits == 8 ? 0x7F : bits == 4 ? 0x77 : 0x55) : 0xFF, (size_t)(n * bits / 8));
        random_params(trial < 2, bits, sign, scale, zero, count);
        const float ws = fabsf(rnd());
        int64_t Z = 0;
        for (int64_t r = 0; r < count; r++) Z += (int64_t)W[r] * ((sign ? 1 << (bits - 1) : 0) + zero[r]);
        for (int64_t d = 0; d < n; d++) {
          acc[d] = rnd();
          int64_t A = 0;
          for (int64_t r = 0; r < count; r++) A += (int64_t)W[r] * code_u(rows[r], d, bits, sign);
          want[d] = acc[d] + (float)(A - Z) * ws;
        }
        ol_qpage_int_weighted_add(W, ws, bits, sign, rows, 0, zero, count, n, acc);
        bad += memcmp(acc, want, sizeof(float) * (size_t)n) != 0;
      }
  CHECK(bad == 0);
}

static void weight_quantization(void) {
  float e[MAX_ROWS], scale[MAX_ROWS];
  int16_t W[MAX_ROWS];
  int bad = 0;
  for (int trial = 0; trial < 200; trial++) {
    const int64_t n = 1 + next_u32() % MAX_ROWS;
    for (int64_t r = 0; r < n; r++) e[r] = fabsf(rnd()), scale[r] = rnd();
    if (trial % 7 == 3) e[n / 2] = 0.0f;
    float m = 0;
    for (int64_t r = 0; r < n; r++) m = fmaxf(m, fabsf(e[r] * scale[r]));
    bad += ol_qpage_quantize_weights(e, scale, n, W) != m / 32767.0f;
    const float k = 32767.0f / m;
    int biggest = 0;
    for (int64_t r = 0; r < n; r++) {
      bad += W[r] != rounded(e[r] * scale[r] * k);
      biggest = abs(W[r]) > biggest ? abs(W[r]) : biggest;
    }
    bad += biggest != (m > 0 ? 32767 : 0);
  }
  for (int r = 0; r < 8; r++) e[r] = 0.0f, scale[r] = 1.0f;
  bad += ol_qpage_quantize_weights(e, scale, 8, W) != 0.0f || W[0] != 0 || W[7] != 0;
  e[5] = 1e-37f, W[5] = 7; /* 32767 / max |w| overflows: nothing */
  bad += ol_qpage_quantize_weights(e, scale, 8, W) != 0.0f || W[5] != 0;
  CHECK(bad == 0);
}

OL_TEST_MAIN(TEST(query_quantization), TEST(key_scores_match_formula), TEST(weighted_rows_match_formula),
             TEST(weight_quantization))
