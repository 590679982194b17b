/* The dtype table's converters (core/dtype.h): float16/bfloat16 against
 * their plain case-by-case definitions (the library computes them without
 * branches so the row loops vectorize), known values (NaN, inf, signed
 * zeros, subnormals, ties), and for every converting type: element and row
 * converters give the same bits, codes round-trip through float. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "harness.h"
#include "test_random.h"

/* ------------------------------------------------------------ references */

/* float16 -> float32, case by case. */
static float ref_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return bitsf(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    float v = (float)mant * 5.9604644775390625e-08f; /* mant * 2^-24, exact */
    return sign ? -v : v;
  }
  return bitsf(sign | ((exp + 112) << 23) | (mant << 13));
}

/* float32 -> float16, round to nearest even; NaN quiet with its top payload bits. */
static uint16_t ref_f32_to_f16(float f) {
  uint32_t u = fbits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00 | (uint16_t)((a >> 13) & 0x3FF);
  if (a >= 0x477FF000u) return sign | 0x7C00;
  if (a < 0x38800000u) return sign | (uint16_t)rintf(bitsf(a) * 16777216.0f);
  uint32_t rounded = a + 0xFFF + ((a >> 13) & 1);
  return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

static uint16_t ref_f32_to_bf16(float f) {
  uint32_t u = fbits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

/* ------------------------------------------------------------ float16 / bfloat16 */

/* Float bit patterns that exercise rounding: every value of the bits above
 * `low` bits, each with a set of low patterns (zero, one, just below, at and
 * just above the halfway point, all ones). */
static uint32_t sweep(uint32_t index, int low) {
  uint32_t half = 1u << (low - 1), mask = (1u << low) - 1;
  static const int kinds = 6;
  uint32_t pats[6] = {0, 1, half - 1, half, half + 1, mask};
  return ((index / kinds) << low) | pats[index % kinds];
}

static void half_from_float_matches_reference(void) {
  const ol_dtype_traits *t = ol_dtype_info(OL_DTYPE_FLOAT16);
  enum { ROW = 4096 };
  static float in[ROW];
  static uint16_t out[ROW];
  int64_t mismatches = 0;
  /* bits 13.. above the rounding point, then random floats (subnormal
   * halves round at other positions) */
  uint32_t total = (1u << 19) * 6u;
  for (uint32_t base = 0; base < total; base += ROW) {
    for (uint32_t k = 0; k < ROW; k++) in[k] = bitsf(sweep(base + k, 13));
    t->store_row(in, ROW, out);
    for (uint32_t k = 0; k < ROW; k++) {
      uint16_t want = ref_f32_to_f16(in[k]), one;
      t->from_float(&one, 0, in[k]);
      mismatches += out[k] != want || one != want || ol_f32_to_f16(in[k]) != want;
    }
  }
  for (int r = 0; r < 256; r++) {
    for (int k = 0; k < ROW; k++) in[k] = bitsf(next_u32());
    t->store_row(in, ROW, out);
    for (int k = 0; k < ROW; k++) mismatches += out[k] != ref_f32_to_f16(in[k]);
  }
  CHECK(mismatches == 0);
  /* known values */
  CHECK(ol_f32_to_f16(65504.0f) == 0x7BFF && ol_f32_to_f16(65519.996f) == 0x7BFF);
  CHECK(ol_f32_to_f16(65520.0f) == 0x7C00 && ol_f32_to_f16(-INFINITY) == 0xFC00);
  CHECK(ol_f32_to_f16(1.0f + 1.0f / 2048) == 0x3C00);            /* tie to even: down */
  CHECK(ol_f32_to_f16(1.0f + 3.0f / 2048) == 0x3C02);            /* tie to even: up */
  CHECK(ol_f32_to_f16(5.9604644775390625e-08f) == 0x0001);       /* smallest subnormal */
  CHECK(ol_f32_to_f16(2.98023223876953125e-08f) == 0x0000);      /* half of it: tie to 0 */
  CHECK(ol_f32_to_f16(8.940696716308594e-08f) == 0x0002);        /* 1.5 of it: tie to 2 */
  CHECK(ol_f32_to_f16(6.097555160522461e-05f) == 0x03FF);        /* largest subnormal */
  CHECK(ol_f32_to_f16(6.1035156e-05f) == 0x0400);                /* smallest normal */
  CHECK(ol_f32_to_f16(-0.0f) == 0x8000 && ol_f32_to_f16(1e-30f) == 0x0000);
  CHECK(ol_f32_to_f16(NAN) == 0x7E00 && ol_f32_to_f16(bitsf(0xFF801234u)) == 0xFE00);
  CHECK(ol_f32_to_f16(bitsf(0x7FC02000u)) == 0x7E01); /* payload's top bits kept */
}

static void half_to_float_matches_reference(void) {
  const ol_dtype_traits *t = ol_dtype_info(OL_DTYPE_FLOAT16);
  static uint16_t in[0x10000];
  static float out[0x10000];
  for (uint32_t h = 0; h < 0x10000; h++) in[h] = (uint16_t)h;
  t->load_row(in, 0x10000, out);
  int mismatches = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    uint32_t want = fbits(ref_f16_to_f32((uint16_t)h));
    mismatches += fbits(out[h]) != want || fbits(t->to_float(in, h)) != want ||
                  fbits(ol_f16_to_f32((uint16_t)h)) != want;
    /* every code survives the round trip (NaN stays NaN, made quiet) */
    uint16_t back = ol_f32_to_f16(out[h]);
    mismatches += isnan(out[h]) ? back != (h | 0x0200) : back != h;
  }
  CHECK(mismatches == 0);
  CHECK(ol_f16_to_f32(0x0001) == 5.9604644775390625e-08f && ol_f16_to_f32(0x8000) == 0.0f &&
        signbit(ol_f16_to_f32(0x8000)));
  CHECK(ol_f16_to_f32(0x7BFF) == 65504.0f && isinf(ol_f16_to_f32(0xFC00)) && ol_f16_to_f32(0xFC00) < 0);
  CHECK(fbits(ol_f16_to_f32(0x7C01)) == 0x7F802000u); /* signaling NaN keeps its payload */
}

static void bfloat16_matches_reference(void) {
  const ol_dtype_traits *t = ol_dtype_info(OL_DTYPE_BFLOAT16);
  enum { ROW = 4096 };
  static float in[ROW], back[ROW];
  static uint16_t out[ROW];
  int64_t mismatches = 0;
  uint32_t total = (1u << 16) * 6u;
  for (uint32_t base = 0; base < total; base += ROW) {
    for (uint32_t k = 0; k < ROW; k++) in[k] = bitsf(sweep(base + k, 16));
    t->store_row(in, ROW, out);
    t->load_row(out, ROW, back);
    for (uint32_t k = 0; k < ROW; k++) {
      uint16_t want = ref_f32_to_bf16(in[k]), one;
      t->from_float(&one, 0, in[k]);
      mismatches += out[k] != want || one != want || ol_f32_to_bf16(in[k]) != want;
      mismatches += fbits(back[k]) != (uint32_t)want << 16 || fbits(t->to_float(out, k)) != (uint32_t)want << 16;
    }
  }
  CHECK(mismatches == 0);
  CHECK(ol_f32_to_bf16(1.00390625f) == 0x3F80); /* tie to even: down */
  CHECK(ol_f32_to_bf16(1.01171875f) == 0x3F82); /* tie to even: up */
  CHECK(ol_f32_to_bf16(INFINITY) == 0x7F80 && ol_f32_to_bf16(3.4028235e38f) == 0x7F80); /* max rounds to inf */
  CHECK(ol_f32_to_bf16(bitsf(0x7F800001u)) == 0x7FC0);                                  /* NaN stays NaN */
  CHECK(ol_f32_to_bf16(bitsf(0x00010000u)) == 0x0001 && ol_f32_to_bf16(-0.0f) == 0x8000); /* subnormal, -0 */
  CHECK(ol_bf16_to_f32(0x4049) == 3.140625f);
}

/* ------------------------------------------------------------ every converting type */

/* Storage for n random codes of type dt (bit patterns; sub-byte types packed). */
static void random_codes(ol_dtype dt, void *data, int64_t n) {
  size_t bytes = ol_dtype_storage_bytes(dt, n);
  for (size_t i = 0; i < bytes; i++) ((uint8_t *)data)[i] = (uint8_t)next_u32();
}

static void rows_match_elements(void) {
  enum { N = 999 };
  static uint8_t codes[N * 8], stored[N * 8], one[N * 8];
  static float wide[N], values[N];
  int types = 0;
  for (int d = 1; d < OL_DTYPE_COUNT; d++) {
    ol_dtype dt = (ol_dtype)d;
    const ol_dtype_traits *t = ol_dtype_info(dt);
    if (!t->load_row) {
      CHECK(!t->to_float && !t->store_row); /* strings, complex */
      continue;
    }
    types++;
    CHECK(t->to_float && t->to_double);
    CHECK((t->store_row != NULL) == t->is_float && (t->from_float != NULL) == t->is_float);
    random_codes(dt, codes, N);
    t->load_row(codes, N, wide);
    int bad = 0;
    for (int i = 0; i < N; i++) {
      float e = t->to_float(codes, i);
      double x = t->to_double(codes, i);
      bad += fbits(wide[i]) != fbits(e) && !(isnan(e) && isnan(wide[i]));
      /* to_float is to_double rounded (64-bit integers round once, directly) */
      if (t->bits < 64 || t->is_float) bad += !(isnan(x) && isnan(e)) && (float)x != e;
    }
    CHECK(bad == 0);
    if (!t->store_row) continue;
    /* floats from every range of the format: decoded codes, random values
     * (overflowing the narrow formats too), ties and specials */
    for (int i = 0; i < N; i++)
      values[i] = i % 3 == 0 ? wide[i] : i % 3 == 1 ? rnd() * (float)(1 << (next_u32() % 20)) : bitsf(next_u32());
    values[0] = INFINITY, values[1] = -INFINITY, values[2] = NAN, values[3] = -0.0f;
    memset(stored, 0, sizeof stored);
    memset(one, 0, sizeof one);
    t->store_row(values, N, stored);
    for (int i = 0; i < N; i++) t->from_float(one, i, values[i]);
    CHECK(memcmp(stored, one, ol_dtype_storage_bytes(dt, N)) == 0);
    /* a decoded code is stored back as itself (NaN: as a NaN; the
     * saturating formats' infinities become their largest values) */
    t->store_row(wide, N, stored);
    t->load_row(stored, N, values);
    bad = 0;
    for (int i = 0; i < N; i++)
      bad += isnan(wide[i]) ? !isnan(values[i]) : !isinf(wide[i]) && fbits(values[i]) != fbits(wide[i]);
    CHECK(bad == 0);
  }
  CHECK(types == 23); /* every numeric type but the complex ones */
}

static void known_values_through_the_table(void) {
  const ol_dtype_traits *e4 = ol_dtype_info(OL_DTYPE_FLOAT8E4M3FN), *e2 = ol_dtype_info(OL_DTYPE_FLOAT4E2M1);
  uint8_t c = 0, b[2] = {0, 0};
  e4->from_float(&c, 0, 1000.0f); /* saturates (ONNX default) */
  CHECK(c == 0x7E && e4->to_float(&c, 0) == 448.0f);
  e2->from_float(b, 1, -5.5f); /* nibble 1 of byte 0 */
  e2->from_float(b, 2, 0.5f);
  CHECK(b[0] == 0xF0 && b[1] == 0x01 && e2->to_float(b, 1) == -6.0f && e2->to_float(b, 2) == 0.5f);
  int64_t big = (int64_t)1 << 53 | 1;
  CHECK(ol_dtype_info(OL_DTYPE_INT64)->to_double(&big, 0) == 9007199254740992.0);
  uint8_t flag = 7;
  CHECK(ol_dtype_info(OL_DTYPE_BOOL)->to_float(&flag, 0) == 1.0f);
  double d = 0;
  ol_dtype_info(OL_DTYPE_DOUBLE)->from_float(&d, 0, 0.1f);
  CHECK(d == (double)0.1f);
  uint16_t h;
  ol_dtype_info(OL_DTYPE_FLOAT16)->from_double(&h, 0, 1.0 + 1.0 / 2048 + 1e-12); /* through float: a tie */
  CHECK(h == 0x3C00);
  int8_t packed = (int8_t)0xA7;
  CHECK(ol_dtype_info(OL_DTYPE_INT4)->to_float(&packed, 1) == -6.0f && ol_dtype_info(OL_DTYPE_INT4)->from_float == NULL);
  ol_dtype_info(OL_DTYPE_INT4)->from_double(&packed, 0, -3.0); /* the other nibble stays */
  CHECK((uint8_t)packed == 0xAD);
  CHECK(ol_dtype_computes_f32(OL_DTYPE_FLOAT) && ol_dtype_computes_f32(OL_DTYPE_BFLOAT16) &&
        !ol_dtype_computes_f32(OL_DTYPE_DOUBLE) && !ol_dtype_computes_f32(OL_DTYPE_FLOAT8E5M2));
  CHECK(ol_dtype_widens(OL_DTYPE_FLOAT16) && !ol_dtype_widens(OL_DTYPE_FLOAT) && !ol_dtype_widens(OL_DTYPE_UNDEFINED));
}

OL_TEST_MAIN(TEST(half_from_float_matches_reference), TEST(half_to_float_matches_reference),
             TEST(bfloat16_matches_reference), TEST(rows_match_elements), TEST(known_values_through_the_table))
