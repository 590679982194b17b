/* Element types as data (dtype.h): the narrow floating formats' single
 * conversions, then each type's converters, the table that holds them, and
 * the lookups. */
#include "dtype.h"

#include <math.h>
#include <string.h>

#include "checked.h"

/* ------------------------------------------------------------ fp16 / bf16 */

static inline uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

/* The four conversions are written without branches (every case computed,
 * the answer selected by masks) so that the compilers vectorize the row
 * loops below; the single conversions are the same functions, so a row gives
 * the bits of its elements. tests/c/test_dtype.c checks them against the
 * plain case-by-case definitions. */

/* All ones when c holds, else zero. */
static inline uint32_t mask_if(bool c) { return (uint32_t)0 - (uint32_t)c; }
/* m ? a : b for a mask m. */
static inline uint32_t pick(uint32_t m, uint32_t a, uint32_t b) { return (a & m) | (b & ~m); }

/* Normal halves rebias the exponent (+112); subnormals are
 * 2^-14 * (1 + m/1024) - 2^-14 = m * 2^-24, exact; inf/NaN keep the payload. */
static inline float f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
  uint32_t em = (uint32_t)(h & 0x7FFFu) << 13; /* exponent and mantissa in place */
  uint32_t exp = em & 0x0F800000u;
  uint32_t normal = em + 0x38000000u;
  uint32_t special = em + 0x70000000u;
  uint32_t sub = f32_bits(bits_f32(em + 0x38800000u) - bits_f32(0x38800000u));
  uint32_t r = pick(mask_if(exp == 0x0F800000u), special, pick(mask_if(exp == 0), sub, normal));
  return bits_f32(sign | r);
}

/* Round to nearest even. NaN stays NaN (quiet, payload's top bits kept),
 * 65520 and above become inf; below 2^-14, a + 0.5 rounds a to a multiple
 * of 2^-24 (the float spacing in [0.5, 1)), which is the subnormal code. */
static inline uint16_t f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint32_t sign = (u >> 16) & 0x8000u;
  uint32_t a = u & 0x7FFFFFFFu;
  uint32_t nan = 0x7E00u | ((a >> 13) & 0x3FFu);
  uint32_t normal = (a + 0xFFFu + ((a >> 13) & 1u) - 0x38000000u) >> 13;
  uint32_t sub = f32_bits(bits_f32(a) + 0.5f) - 0x3F000000u;
  uint32_t finite = pick(mask_if(a >= 0x477FF000u), 0x7C00u, pick(mask_if(a < 0x38800000u), sub, normal));
  return (uint16_t)(sign | pick(mask_if(a > 0x7F800000u), nan, finite));
}

static inline float bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

/* Round to nearest even; NaN stays NaN (quiet). */
static inline uint16_t f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  uint32_t nan = (u >> 16) | 0x40u;
  uint32_t rounded = (u + 0x7FFFu + ((u >> 16) & 1u)) >> 16;
  return (uint16_t)pick(mask_if((u & 0x7FFFFFFFu) > 0x7F800000u), nan, rounded);
}

float ol_f16_to_f32(uint16_t h) { return f16_to_f32(h); }
uint16_t ol_f32_to_f16(float f) { return f32_to_f16(f); }
float ol_bf16_to_f32(uint16_t b) { return bf16_to_f32(b); }
uint16_t ol_f32_to_bf16(float f) { return f32_to_bf16(f); }

/* ------------------------------------------------------------ minifloats */

typedef struct minifloat {
  int exp_bits, mant_bits, bias;
  bool has_sign;
  bool fnuz;      /* NaN is 0x80, no negative zero, no inf */
  bool has_inf;   /* IEEE-like inf/NaN in the top exponent (E5M2) */
  bool nan_all_ones; /* E4M3FN: only S.1111.111 is NaN */
  float max;
} minifloat;

static const minifloat *minifloat_of(ol_dtype dtype) {
  static const minifloat e4m3fn = {4, 3, 7, true, false, false, true, 448.0f};
  static const minifloat e4m3fnuz = {4, 3, 8, true, true, false, false, 240.0f};
  static const minifloat e5m2 = {5, 2, 15, true, false, true, false, 57344.0f};
  static const minifloat e5m2fnuz = {5, 2, 16, true, true, false, false, 57344.0f};
  static const minifloat e2m1 = {2, 1, 1, true, false, false, false, 6.0f};
  switch (dtype) {
    case OL_DTYPE_FLOAT8E4M3FN: return &e4m3fn;
    case OL_DTYPE_FLOAT8E4M3FNUZ: return &e4m3fnuz;
    case OL_DTYPE_FLOAT8E5M2: return &e5m2;
    case OL_DTYPE_FLOAT8E5M2FNUZ: return &e5m2fnuz;
    case OL_DTYPE_FLOAT4E2M1: return &e2m1;
    default: return NULL;
  }
}

float ol_minifloat_to_f32(ol_dtype dtype, uint8_t code) {
  if (dtype == OL_DTYPE_FLOAT8E8M0) {
    if (code == 0xFF) return NAN;
    return ldexpf(1.0f, (int)code - 127);
  }
  const minifloat *m = minifloat_of(dtype);
  if (!m) return NAN;
  int total = 1 + m->exp_bits + m->mant_bits;
  int sign = (code >> (total - 1)) & 1;
  int exp = (code >> m->mant_bits) & ((1 << m->exp_bits) - 1);
  int mant = code & ((1 << m->mant_bits) - 1);
  if (m->fnuz && code == 0x80) return NAN;
  if (m->nan_all_ones && exp == (1 << m->exp_bits) - 1 && mant == (1 << m->mant_bits) - 1)
    return NAN;
  if (m->has_inf && exp == (1 << m->exp_bits) - 1) return mant ? NAN : (sign ? -INFINITY : INFINITY);
  float v;
  if (exp == 0)
    v = ldexpf((float)mant, 1 - m->bias - m->mant_bits);
  else
    v = ldexpf((float)((1 << m->mant_bits) + mant), exp - m->bias - m->mant_bits);
  return sign ? -v : v;
}

static uint8_t minifloat_nan(ol_dtype dtype) {
  switch (dtype) {
    case OL_DTYPE_FLOAT8E4M3FN: return 0x7F;
    case OL_DTYPE_FLOAT8E5M2: return 0x7F;
    case OL_DTYPE_FLOAT4E2M1: return 0x7; /* no NaN: ONNX maps NaN to max */
    default: return 0x80;
  }
}

uint8_t ol_f32_to_minifloat(ol_dtype dtype, float value, bool saturate) {
  if (dtype == OL_DTYPE_FLOAT8E8M0) {
    /* ONNX default round mode "up": the next power of two at or above. */
    if (isnan(value) || value <= 0.0f) return 0xFF;
    if (isinf(value)) return saturate ? 0xFE : 0xFF;
    int e;
    float frac = frexpf(value, &e); /* value = frac * 2^e, frac in [0.5, 1) */
    int exponent = (frac == 0.5f) ? e - 1 : e;
    int code = exponent + 127;
    if (code < 0) code = 0;
    if (code > 254) code = saturate ? 254 : 255;
    return (uint8_t)code;
  }
  const minifloat *m = minifloat_of(dtype);
  if (!m) return 0;
  int total = 1 + m->exp_bits + m->mant_bits;
  uint8_t sign_bit = (uint8_t)(1u << (total - 1));
  bool negative = signbit(value) != 0;
  float a = fabsf(value);
  uint8_t max_code = (uint8_t)(m->has_inf ? ((((1 << m->exp_bits) - 2) << m->mant_bits) |
                                             ((1 << m->mant_bits) - 1))
                                          : (m->nan_all_ones ? 0x7E : (sign_bit - 1)));
  if (isnan(value)) return dtype == OL_DTYPE_FLOAT4E2M1 ? max_code : minifloat_nan(dtype);
  uint8_t sign = negative ? sign_bit : 0;
  if (isinf(value)) {
    if (saturate || dtype == OL_DTYPE_FLOAT4E2M1) return sign | max_code;
    if (m->has_inf) return sign | (uint8_t)(((1 << m->exp_bits) - 1) << m->mant_bits);
    return minifloat_nan(dtype) | (m->fnuz ? 0 : sign);
  }
  if (a == 0.0f) return (m->fnuz || !negative) ? 0 : sign;
  int emin = 1 - m->bias;
  int e;
  frexpf(a, &e);
  e -= 1; /* a = 1.f * 2^e */
  int quantum_exp = (e < emin ? emin : e) - m->mant_bits;
  float q = rintf(ldexpf(a, -quantum_exp)); /* round half to even */
  float rounded = ldexpf(q, quantum_exp);
  if (rounded > m->max) {
    if (saturate || dtype == OL_DTYPE_FLOAT4E2M1) return sign | max_code;
    if (m->has_inf) return sign | (uint8_t)(((1 << m->exp_bits) - 1) << m->mant_bits);
    return minifloat_nan(dtype) | (m->fnuz ? 0 : sign);
  }
  if (rounded == 0.0f) return (m->fnuz || !negative) ? 0 : sign;
  frexpf(rounded, &e);
  e -= 1;
  uint8_t code;
  if (e < emin) {
    code = (uint8_t)ldexpf(rounded, m->mant_bits - emin);
  } else {
    int mant = (int)ldexpf(rounded, m->mant_bits - e) - (1 << m->mant_bits);
    code = (uint8_t)(((e + m->bias) << m->mant_bits) | mant);
  }
  return sign | code;
}

/* ------------------------------------------------------------ packed ints */

int32_t ol_packed_get(ol_dtype dtype, const uint8_t *data, int64_t index) {
  int bits = ol_dtype_bits(dtype);
  int per_byte = 8 / bits;
  int shift = (int)(index % per_byte) * bits;
  int32_t v = (data[index / per_byte] >> shift) & ((1 << bits) - 1);
  if (ol_dtype_info(dtype)->is_signed && (v & (1 << (bits - 1)))) v -= 1 << bits;
  return v;
}

void ol_packed_set(ol_dtype dtype, uint8_t *data, int64_t index, int32_t value) {
  int bits = ol_dtype_bits(dtype);
  int per_byte = 8 / bits;
  int shift = (int)(index % per_byte) * bits;
  uint8_t mask = (uint8_t)(((1 << bits) - 1) << shift);
  data[index / per_byte] = (uint8_t)((data[index / per_byte] & ~mask) |
                                     (((uint32_t)value << shift) & mask));
}

/* ------------------------------------------------------------ converters (the table's functions) */

/* Plain C types: read exactly (to_float rounds wide integers), written from
 * double truncated toward zero and saturated, NaN as 0 (a plain C conversion
 * of an out-of-range double is undefined, and x86 and wasm differ). */
#define PLAIN_CONVERTERS(NAME, T, TO_T)                                                  \
  static float NAME##_to_float(const void *d, int64_t i) { return (float)((const T *)d)[i]; } \
  static double NAME##_to_double(const void *d, int64_t i) { return (double)((const T *)d)[i]; } \
  static void NAME##_from_double(void *d, int64_t i, double v) { ((T *)d)[i] = (T)(TO_T); } \
  static void NAME##_load_row(const void *s, int64_t n, float *d) {                      \
    for (int64_t i = 0; i < n; i++) d[i] = (float)((const T *)s)[i];                     \
  }
PLAIN_CONVERTERS(i8, int8_t, ol_clamp_for_int(v, INT8_MIN, INT8_MAX))
PLAIN_CONVERTERS(u8, uint8_t, ol_clamp_for_int(v, 0, UINT8_MAX))
PLAIN_CONVERTERS(i16, int16_t, ol_clamp_for_int(v, INT16_MIN, INT16_MAX))
PLAIN_CONVERTERS(u16, uint16_t, ol_clamp_for_int(v, 0, UINT16_MAX))
PLAIN_CONVERTERS(i32, int32_t, ol_clamp_for_int(v, INT32_MIN, INT32_MAX))
PLAIN_CONVERTERS(u32, uint32_t, ol_clamp_for_int(v, 0, UINT32_MAX))
PLAIN_CONVERTERS(i64, int64_t, ol_double_to_int64(v))
PLAIN_CONVERTERS(u64, uint64_t, ol_double_to_uint64(v))
#undef PLAIN_CONVERTERS

static float bool_to_float(const void *d, int64_t i) { return ((const uint8_t *)d)[i] != 0; }
static double bool_to_double(const void *d, int64_t i) { return ((const uint8_t *)d)[i] != 0; }
static void bool_from_double(void *d, int64_t i, double v) { ((uint8_t *)d)[i] = v != 0.0; }
static void bool_load_row(const void *s, int64_t n, float *d) {
  for (int64_t i = 0; i < n; i++) d[i] = ((const uint8_t *)s)[i] != 0;
}

/* float32 rows copy (store_row may be given its own destination). */
static float f32_to_float(const void *d, int64_t i) { return ((const float *)d)[i]; }
static double f32_to_double(const void *d, int64_t i) { return ((const float *)d)[i]; }
static void f32_from_float(void *d, int64_t i, float v) { ((float *)d)[i] = v; }
static void f32_from_double(void *d, int64_t i, double v) { ((float *)d)[i] = (float)v; }
static void f32_load_row(const void *s, int64_t n, float *d) {
  if (n > 0 && (const void *)d != s) memmove(d, s, sizeof(float) * (size_t)n);
}
static void f32_store_row(const float *s, int64_t n, void *d) {
  if (n > 0 && d != (const void *)s) memmove(d, s, sizeof(float) * (size_t)n);
}

static float f64_to_float(const void *d, int64_t i) { return (float)((const double *)d)[i]; }
static double f64_to_double(const void *d, int64_t i) { return ((const double *)d)[i]; }
static void f64_from_float(void *d, int64_t i, float v) { ((double *)d)[i] = v; }
static void f64_from_double(void *d, int64_t i, double v) { ((double *)d)[i] = v; }
static void f64_load_row(const void *s, int64_t n, float *d) {
  for (int64_t i = 0; i < n; i++) d[i] = (float)((const double *)s)[i];
}
static void f64_store_row(const float *s, int64_t n, void *d) {
  for (int64_t i = 0; i < n; i++) ((double *)d)[i] = s[i];
}

/* float16 and bfloat16: from double through float, as ol_tensor_set_double
 * always rounded. */
#define HALF_CONVERTERS(NAME)                                                                  \
  static float NAME##_to_float(const void *d, int64_t i) { return NAME##_to_f32(((const uint16_t *)d)[i]); } \
  static double NAME##_to_double(const void *d, int64_t i) { return NAME##_to_f32(((const uint16_t *)d)[i]); } \
  static void NAME##_from_float(void *d, int64_t i, float v) { ((uint16_t *)d)[i] = f32_to_##NAME(v); } \
  static void NAME##_from_double(void *d, int64_t i, double v) { ((uint16_t *)d)[i] = f32_to_##NAME((float)v); } \
  static void NAME##_load_row(const void *s, int64_t n, float *d) {                            \
    const uint16_t *h = s;                                                                     \
    for (int64_t i = 0; i < n; i++) d[i] = NAME##_to_f32(h[i]);                                \
  }                                                                                            \
  static void NAME##_store_row(const float *s, int64_t n, void *d) {                           \
    uint16_t *h = d;                                                                           \
    for (int64_t i = 0; i < n; i++) h[i] = f32_to_##NAME(s[i]);                                \
  }
HALF_CONVERTERS(f16)
HALF_CONVERTERS(bf16)
#undef HALF_CONVERTERS

/* float8 formats (one code a byte), saturating from float. */
#define FLOAT8_CONVERTERS(NAME, DT)                                                            \
  static float NAME##_to_float(const void *d, int64_t i) { return ol_minifloat_to_f32(DT, ((const uint8_t *)d)[i]); } \
  static double NAME##_to_double(const void *d, int64_t i) { return NAME##_to_float(d, i); }   \
  static void NAME##_from_float(void *d, int64_t i, float v) { ((uint8_t *)d)[i] = ol_f32_to_minifloat(DT, v, true); } \
  static void NAME##_from_double(void *d, int64_t i, double v) { NAME##_from_float(d, i, (float)v); } \
  static void NAME##_load_row(const void *s, int64_t n, float *d) {                            \
    for (int64_t i = 0; i < n; i++) d[i] = NAME##_to_float(s, i);                              \
  }                                                                                            \
  static void NAME##_store_row(const float *s, int64_t n, void *d) {                           \
    for (int64_t i = 0; i < n; i++) NAME##_from_float(d, i, s[i]);                             \
  }
FLOAT8_CONVERTERS(e4m3fn, OL_DTYPE_FLOAT8E4M3FN)
FLOAT8_CONVERTERS(e4m3fnuz, OL_DTYPE_FLOAT8E4M3FNUZ)
FLOAT8_CONVERTERS(e5m2, OL_DTYPE_FLOAT8E5M2)
FLOAT8_CONVERTERS(e5m2fnuz, OL_DTYPE_FLOAT8E5M2FNUZ)
FLOAT8_CONVERTERS(e8m0, OL_DTYPE_FLOAT8E8M0)
#undef FLOAT8_CONVERTERS

/* float4 (two codes a byte, LSB first), saturating from float. */
static float e2m1_to_float(const void *d, int64_t i) {
  return ol_minifloat_to_f32(OL_DTYPE_FLOAT4E2M1, (uint8_t)ol_packed_get(OL_DTYPE_UINT4, d, i));
}
static double e2m1_to_double(const void *d, int64_t i) { return e2m1_to_float(d, i); }
static void e2m1_from_float(void *d, int64_t i, float v) {
  ol_packed_set(OL_DTYPE_UINT4, d, i, ol_f32_to_minifloat(OL_DTYPE_FLOAT4E2M1, v, true));
}
static void e2m1_from_double(void *d, int64_t i, double v) { e2m1_from_float(d, i, (float)v); }
static void e2m1_load_row(const void *s, int64_t n, float *d) {
  for (int64_t i = 0; i < n; i++) d[i] = e2m1_to_float(s, i);
}
static void e2m1_store_row(const float *s, int64_t n, void *d) {
  for (int64_t i = 0; i < n; i++) e2m1_from_float(d, i, s[i]);
}

/* Packed integers: read, and written from double truncated and saturated to
 * int32, then wrapped to the code width by ol_packed_set; operators that
 * clamp to the code range do so themselves. */
#define PACKED_CONVERTERS(NAME, DT)                                                            \
  static float NAME##_to_float(const void *d, int64_t i) { return (float)ol_packed_get(DT, d, i); } \
  static double NAME##_to_double(const void *d, int64_t i) { return ol_packed_get(DT, d, i); } \
  static void NAME##_from_double(void *d, int64_t i, double v) { ol_packed_set(DT, d, i, (int32_t)ol_clamp_for_int(v, INT32_MIN, INT32_MAX)); } \
  static void NAME##_load_row(const void *s, int64_t n, float *d) {                            \
    for (int64_t i = 0; i < n; i++) d[i] = (float)ol_packed_get(DT, s, i);                     \
  }
PACKED_CONVERTERS(u4, OL_DTYPE_UINT4)
PACKED_CONVERTERS(i4, OL_DTYPE_INT4)
PACKED_CONVERTERS(u2, OL_DTYPE_UINT2)
PACKED_CONVERTERS(i2, OL_DTYPE_INT2)
#undef PACKED_CONVERTERS

/* ------------------------------------------------------------ the table */

/* name, onnx_name, bits, is_float, is_signed, is_integer, computes_f32, converters */
#define READ(N) N##_to_float, N##_to_double, NULL, N##_from_double, N##_load_row, NULL
#define PACKED(N) N##_to_float, N##_to_double, NULL, N##_from_double, N##_load_row, NULL
#define FLOATING(N) N##_to_float, N##_to_double, N##_from_float, N##_from_double, N##_load_row, N##_store_row
#define NO_CONVERTERS NULL, NULL, NULL, NULL, NULL, NULL
static const ol_dtype_traits traits[OL_DTYPE_COUNT] = {
    [OL_DTYPE_UNDEFINED] = {"undefined", "UNDEFINED", 0, false, false, false, false, NO_CONVERTERS},
    [OL_DTYPE_FLOAT] = {"float32", "FLOAT", 32, true, true, false, true, FLOATING(f32)},
    [OL_DTYPE_UINT8] = {"uint8", "UINT8", 8, false, false, true, false, READ(u8)},
    [OL_DTYPE_INT8] = {"int8", "INT8", 8, false, true, true, false, READ(i8)},
    [OL_DTYPE_UINT16] = {"uint16", "UINT16", 16, false, false, true, false, READ(u16)},
    [OL_DTYPE_INT16] = {"int16", "INT16", 16, false, true, true, false, READ(i16)},
    [OL_DTYPE_INT32] = {"int32", "INT32", 32, false, true, true, false, READ(i32)},
    [OL_DTYPE_INT64] = {"int64", "INT64", 64, false, true, true, false, READ(i64)},
    [OL_DTYPE_STRING] = {"string", "STRING", 0, false, false, false, false, NO_CONVERTERS},
    [OL_DTYPE_BOOL] = {"bool", "BOOL", 8, false, false, true, false, READ(bool)},
    [OL_DTYPE_FLOAT16] = {"float16", "FLOAT16", 16, true, true, false, true, FLOATING(f16)},
    [OL_DTYPE_DOUBLE] = {"float64", "DOUBLE", 64, true, true, false, false, FLOATING(f64)},
    [OL_DTYPE_UINT32] = {"uint32", "UINT32", 32, false, false, true, false, READ(u32)},
    [OL_DTYPE_UINT64] = {"uint64", "UINT64", 64, false, false, true, false, READ(u64)},
    [OL_DTYPE_COMPLEX64] = {"complex64", "COMPLEX64", 64, false, true, false, false, NO_CONVERTERS},
    [OL_DTYPE_COMPLEX128] = {"complex128", "COMPLEX128", 128, false, true, false, false, NO_CONVERTERS},
    [OL_DTYPE_BFLOAT16] = {"bfloat16", "BFLOAT16", 16, true, true, false, true, FLOATING(bf16)},
    [OL_DTYPE_FLOAT8E4M3FN] = {"float8e4m3fn", "FLOAT8E4M3FN", 8, true, true, false, false, FLOATING(e4m3fn)},
    [OL_DTYPE_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", "FLOAT8E4M3FNUZ", 8, true, true, false, false, FLOATING(e4m3fnuz)},
    [OL_DTYPE_FLOAT8E5M2] = {"float8e5m2", "FLOAT8E5M2", 8, true, true, false, false, FLOATING(e5m2)},
    [OL_DTYPE_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", "FLOAT8E5M2FNUZ", 8, true, true, false, false, FLOATING(e5m2fnuz)},
    [OL_DTYPE_UINT4] = {"uint4", "UINT4", 4, false, false, true, false, PACKED(u4)},
    [OL_DTYPE_INT4] = {"int4", "INT4", 4, false, true, true, false, PACKED(i4)},
    [OL_DTYPE_FLOAT4E2M1] = {"float4e2m1", "FLOAT4E2M1", 4, true, true, false, false, FLOATING(e2m1)},
    [OL_DTYPE_FLOAT8E8M0] = {"float8e8m0", "FLOAT8E8M0", 8, true, false, false, false, FLOATING(e8m0)},
    [OL_DTYPE_UINT2] = {"uint2", "UINT2", 2, false, false, true, false, PACKED(u2)},
    [OL_DTYPE_INT2] = {"int2", "INT2", 2, false, true, true, false, PACKED(i2)},
};
#undef READ
#undef PACKED
#undef FLOATING
#undef NO_CONVERTERS

/* ------------------------------------------------------------ lookups */

bool ol_dtype_valid(ol_dtype dtype) {
  return dtype > OL_DTYPE_UNDEFINED && dtype < OL_DTYPE_COUNT;
}

const ol_dtype_traits *ol_dtype_info(ol_dtype dtype) {
  return ol_dtype_valid(dtype) ? &traits[dtype] : &traits[OL_DTYPE_UNDEFINED];
}

const char *ol_dtype_name(ol_dtype dtype) { return ol_dtype_info(dtype)->name; }
int ol_dtype_bits(ol_dtype dtype) { return ol_dtype_info(dtype)->bits; }

size_t ol_dtype_size(ol_dtype dtype) {
  int bits = ol_dtype_bits(dtype);
  if (dtype == OL_DTYPE_STRING) return sizeof(void *) * 2; /* ol_string */
  return bits % 8 ? 0 : (size_t)bits / 8;
}

bool ol_dtype_storage_bytes_checked(ol_dtype dtype, int64_t count, size_t *out) {
  *out = 0;
  if (count <= 0) return true;
  size_t n;
  if (!ol_size_from_i64(count, &n)) return false;
  if (dtype == OL_DTYPE_STRING) return ol_mul_size(n, ol_dtype_size(dtype), out);
  uint64_t bits = (uint64_t)ol_dtype_bits(dtype), total;
  if (__builtin_mul_overflow((uint64_t)count, bits, &total) || total > UINT64_MAX - 7) return false;
  total = (total + 7) / 8;
  if (total > SIZE_MAX) return false;
  *out = (size_t)total;
  return true;
}

size_t ol_dtype_storage_bytes(ol_dtype dtype, int64_t count) {
  size_t bytes;
  return ol_dtype_storage_bytes_checked(dtype, count, &bytes) ? bytes : SIZE_MAX;
}

ol_dtype ol_dtype_from_name(const char *name) {
  for (int d = 1; d < OL_DTYPE_COUNT; d++)
    if (strcmp(traits[d].name, name) == 0 || strcmp(traits[d].onnx_name, name) == 0)
      return (ol_dtype)d;
  return OL_DTYPE_UNDEFINED;
}

bool ol_dtype_computes_f32(ol_dtype dtype) { return ol_dtype_info(dtype)->computes_f32; }
bool ol_dtype_widens(ol_dtype dtype) { return dtype != OL_DTYPE_FLOAT && ol_dtype_computes_f32(dtype); }
bool ol_dtype_is_arith_float(ol_dtype dtype) { return dtype == OL_DTYPE_DOUBLE || ol_dtype_computes_f32(dtype); }
