#include "dtype.h"

#include <math.h>
#include <string.h>

#include "checked.h"

static const ol_dtype_traits traits[OL_DTYPE_COUNT] = {
    [OL_DTYPE_UNDEFINED] = {"undefined", "UNDEFINED", 0, false, false, false},
    [OL_DTYPE_FLOAT] = {"float32", "FLOAT", 32, true, true, false},
    [OL_DTYPE_UINT8] = {"uint8", "UINT8", 8, false, false, true},
    [OL_DTYPE_INT8] = {"int8", "INT8", 8, false, true, true},
    [OL_DTYPE_UINT16] = {"uint16", "UINT16", 16, false, false, true},
    [OL_DTYPE_INT16] = {"int16", "INT16", 16, false, true, true},
    [OL_DTYPE_INT32] = {"int32", "INT32", 32, false, true, true},
    [OL_DTYPE_INT64] = {"int64", "INT64", 64, false, true, true},
    [OL_DTYPE_STRING] = {"string", "STRING", 0, false, false, false},
    [OL_DTYPE_BOOL] = {"bool", "BOOL", 8, false, false, true},
    [OL_DTYPE_FLOAT16] = {"float16", "FLOAT16", 16, true, true, false},
    [OL_DTYPE_DOUBLE] = {"float64", "DOUBLE", 64, true, true, false},
    [OL_DTYPE_UINT32] = {"uint32", "UINT32", 32, false, false, true},
    [OL_DTYPE_UINT64] = {"uint64", "UINT64", 64, false, false, true},
    [OL_DTYPE_COMPLEX64] = {"complex64", "COMPLEX64", 64, false, true, false},
    [OL_DTYPE_COMPLEX128] = {"complex128", "COMPLEX128", 128, false, true, false},
    [OL_DTYPE_BFLOAT16] = {"bfloat16", "BFLOAT16", 16, true, true, false},
    [OL_DTYPE_FLOAT8E4M3FN] = {"float8e4m3fn", "FLOAT8E4M3FN", 8, true, true, false},
    [OL_DTYPE_FLOAT8E4M3FNUZ] = {"float8e4m3fnuz", "FLOAT8E4M3FNUZ", 8, true, true, false},
    [OL_DTYPE_FLOAT8E5M2] = {"float8e5m2", "FLOAT8E5M2", 8, true, true, false},
    [OL_DTYPE_FLOAT8E5M2FNUZ] = {"float8e5m2fnuz", "FLOAT8E5M2FNUZ", 8, true, true, false},
    [OL_DTYPE_UINT4] = {"uint4", "UINT4", 4, false, false, true},
    [OL_DTYPE_INT4] = {"int4", "INT4", 4, false, true, true},
    [OL_DTYPE_FLOAT4E2M1] = {"float4e2m1", "FLOAT4E2M1", 4, true, true, false},
    [OL_DTYPE_FLOAT8E8M0] = {"float8e8m0", "FLOAT8E8M0", 8, true, false, false},
    [OL_DTYPE_UINT2] = {"uint2", "UINT2", 2, false, false, true},
    [OL_DTYPE_INT2] = {"int2", "INT2", 2, false, true, true},
};

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

/* ------------------------------------------------------------ fp16 / bf16 */

static uint32_t f32_bits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static float bits_f32(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

float ol_f16_to_f32(uint16_t h) {
  uint32_t sign = (uint32_t)(h & 0x8000) << 16;
  uint32_t exp = (h >> 10) & 0x1F;
  uint32_t mant = h & 0x3FF;
  if (exp == 0x1F) return bits_f32(sign | 0x7F800000u | (mant << 13));
  if (exp == 0) {
    /* zero or subnormal: mant * 2^-24, exact in float */
    float v = (float)mant * 5.9604644775390625e-08f;
    return sign ? -v : v;
  }
  return bits_f32(sign | ((exp + 112) << 23) | (mant << 13));
}

uint16_t ol_f32_to_f16(float f) {
  uint32_t u = f32_bits(f);
  uint16_t sign = (uint16_t)((u >> 16) & 0x8000);
  uint32_t a = u & 0x7FFFFFFFu;
  if (a > 0x7F800000u) return sign | 0x7E00 | (uint16_t)((a >> 13) & 0x3FF); /* NaN */
  if (a >= 0x477FF000u) return sign | 0x7C00;                                 /* overflow to inf */
  if (a < 0x38800000u) {
    /* subnormal half: round a * 2^24 to nearest even integer */
    float v = bits_f32(a) * 16777216.0f;
    return sign | (uint16_t)rintf(v);
  }
  uint32_t rounded = a + 0xFFF + ((a >> 13) & 1); /* round to nearest even */
  return sign | (uint16_t)((rounded - 0x38000000u) >> 13);
}

float ol_bf16_to_f32(uint16_t b) { return bits_f32((uint32_t)b << 16); }

uint16_t ol_f32_to_bf16(float f) {
  uint32_t u = f32_bits(f);
  if ((u & 0x7FFFFFFFu) > 0x7F800000u) return (uint16_t)((u >> 16) | 0x40);
  return (uint16_t)((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

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
