/* Cast 1-23 and CastLike 15-23 (ai.onnx).
 *
 * All numeric types, bool, float16, bfloat16, the float8 family (with the
 * `saturate` attribute, opset 19+), float4e2m1, int4/uint4 (2-bit too), and
 * string <-> number. Cast-1 names the target type with a string ("FLOAT").
 *
 * Rules (ONNX reference implementation / numpy):
 *  - float -> integer truncates toward zero; out-of-range values saturate and
 *    NaN gives 0 (C leaves this undefined, wasm would trap);
 *  - integer -> integer wraps (two's complement), anything -> bool is x != 0;
 *  - narrow floats round to nearest even; double -> fp16/bf16/fp8 rounds once
 *    (via round-to-odd float), saturate=1 maps out-of-range and inf to +-max
 *    for float8, saturate=0 gives inf/NaN as the format allows;
 *  - -> int4/uint4: round half to even after clipping to the range;
 *  - number -> string: shortest text that reads back to the same value,
 *    positional for 1e-4 <= |x| < 1e16 ("0.5", "100.0"), else scientific
 *    ("1e+20"); "nan", "inf", "-inf"; bool "True"/"False";
 *  - string -> number: decimal/scientific text, "INF"/"+INF"/"-INF"/"NaN" in
 *    any case, "true"/"false"; anything else is an error.
 * Casting to the same type returns a view (no copy). */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elementwise/elementwise.h"

/* ------------------------------------------------------------ fast paths */

#define SAT_FN(T, LO, HI)                             \
  static inline T sat_##T(double d) {                 \
    if (d != d) return 0;                             \
    if (d <= (double)(LO)) return (T)(LO);            \
    if (d >= (double)(HI)) return (T)(HI);            \
    return (T)d;                                      \
  }
SAT_FN(int8_t, INT8_MIN, INT8_MAX)
SAT_FN(int16_t, INT16_MIN, INT16_MAX)
SAT_FN(int32_t, INT32_MIN, INT32_MAX)
SAT_FN(int64_t, INT64_MIN, INT64_MAX)
SAT_FN(uint8_t, 0, UINT8_MAX)
SAT_FN(uint16_t, 0, UINT16_MAX)
SAT_FN(uint32_t, 0, UINT32_MAX)
SAT_FN(uint64_t, 0, UINT64_MAX)

/* CV_<dst kind>_<src kind>: F float, S signed, U unsigned, B bool. */
#define CV_F_F(T, v) ((T)(v))
#define CV_F_S(T, v) ((T)(v))
#define CV_F_U(T, v) ((T)(v))
#define CV_F_B(T, v) ((T)((v) != 0))
#define CV_S_F(T, v) sat_##T(v)
#define CV_S_S(T, v) ((T)(v))
#define CV_S_U(T, v) ((T)(v))
#define CV_S_B(T, v) ((T)((v) != 0))
#define CV_U_F(T, v) sat_##T(v)
#define CV_U_S(T, v) ((T)(v))
#define CV_U_U(T, v) ((T)(v))
#define CV_U_B(T, v) ((T)((v) != 0))
#define CV_B_F(T, v) ((T)((v) != 0))
#define CV_B_S(T, v) ((T)((v) != 0))
#define CV_B_U(T, v) ((T)((v) != 0))
#define CV_B_B(T, v) ((T)((v) != 0))

/* The type list twice: a macro cannot expand inside its own expansion. */
#define BASIC_SRC(X)                                                                         \
  X(FLOAT, float, F) X(DOUBLE, double, F) X(INT8, int8_t, S) X(INT16, int16_t, S)            \
  X(INT32, int32_t, S) X(INT64, int64_t, S) X(UINT8, uint8_t, U) X(UINT16, uint16_t, U)      \
  X(UINT32, uint32_t, U) X(UINT64, uint64_t, U) X(BOOL, uint8_t, B)
#define BASIC_DST(X, SN, ST, SK)                                                             \
  X(SN, ST, SK, FLOAT, float, F) X(SN, ST, SK, DOUBLE, double, F)                             \
  X(SN, ST, SK, INT8, int8_t, S) X(SN, ST, SK, INT16, int16_t, S)                             \
  X(SN, ST, SK, INT32, int32_t, S) X(SN, ST, SK, INT64, int64_t, S)                           \
  X(SN, ST, SK, UINT8, uint8_t, U) X(SN, ST, SK, UINT16, uint16_t, U)                         \
  X(SN, ST, SK, UINT32, uint32_t, U) X(SN, ST, SK, UINT64, uint64_t, U)                       \
  X(SN, ST, SK, BOOL, uint8_t, B)
#define BASIC_COUNT 11

typedef void (*cast_fn)(void *out, const void *in, int64_t n);

#define CAST_FN(SN, ST, SK, DN, DT, DK)                                       \
  static void cast_##SN##_##DN(void *out_, const void *in_, int64_t n) {      \
    DT *out = out_;                                                           \
    const ST *in = in_;                                                       \
    for (int64_t i = 0; i < n; i++) out[i] = CV_##DK##_##SK(DT, in[i]);       \
  }
#define CAST_ROW(SN, ST, SK) BASIC_DST(CAST_FN, SN, ST, SK)
BASIC_SRC(CAST_ROW)

#define CAST_ENTRY(SN, ST, SK, DN, DT, DK) cast_##SN##_##DN,
#define CAST_TABLE_ROW(SN, ST, SK) {BASIC_DST(CAST_ENTRY, SN, ST, SK)},
static const cast_fn cast_table[BASIC_COUNT][BASIC_COUNT] = {BASIC_SRC(CAST_TABLE_ROW)};

static int basic_index(ol_dtype dt) {
  static const ol_dtype order[BASIC_COUNT] = {
      OL_DTYPE_FLOAT,  OL_DTYPE_DOUBLE, OL_DTYPE_INT8,   OL_DTYPE_INT16,
      OL_DTYPE_INT32,  OL_DTYPE_INT64,  OL_DTYPE_UINT8,  OL_DTYPE_UINT16,
      OL_DTYPE_UINT32, OL_DTYPE_UINT64, OL_DTYPE_BOOL};
  for (int i = 0; i < BASIC_COUNT; i++)
    if (order[i] == dt) return i;
  return -1;
}

/* ------------------------------------------------------------ generic element access */

typedef enum num_kind { NUM_FLOAT, NUM_SIGNED, NUM_UNSIGNED } num_kind;
typedef struct num {
  num_kind kind;
  double d;
  int64_t i;
  uint64_t u;
} num;

static bool is_minifloat(ol_dtype dt) {
  return (dt >= OL_DTYPE_FLOAT8E4M3FN && dt <= OL_DTYPE_FLOAT8E5M2FNUZ) ||
         dt == OL_DTYPE_FLOAT4E2M1 || dt == OL_DTYPE_FLOAT8E8M0;
}
static bool is_packed_int(ol_dtype dt) {
  return dt == OL_DTYPE_INT4 || dt == OL_DTYPE_UINT4 || dt == OL_DTYPE_INT2 ||
         dt == OL_DTYPE_UINT2;
}
static bool castable(ol_dtype dt) {
  return basic_index(dt) >= 0 || ol_dtype_widens(dt) || is_minifloat(dt) || is_packed_int(dt) ||
         dt == OL_DTYPE_STRING;
}

static num load_num(ol_dtype dt, const void *p, int64_t i) {
  num v = {NUM_FLOAT, 0, 0, 0};
  switch (dt) {
    case OL_DTYPE_INT8: v.i = ((const int8_t *)p)[i]; break;
    case OL_DTYPE_INT16: v.i = ((const int16_t *)p)[i]; break;
    case OL_DTYPE_INT32: v.i = ((const int32_t *)p)[i]; break;
    case OL_DTYPE_INT64: v.i = ((const int64_t *)p)[i]; break;
    case OL_DTYPE_BOOL: v.i = ((const uint8_t *)p)[i] != 0; break;
    case OL_DTYPE_INT4:
    case OL_DTYPE_INT2: v.i = ol_packed_get(dt, p, i); break;
    case OL_DTYPE_UINT8: v.kind = NUM_UNSIGNED; v.u = ((const uint8_t *)p)[i]; return v;
    case OL_DTYPE_UINT16: v.kind = NUM_UNSIGNED; v.u = ((const uint16_t *)p)[i]; return v;
    case OL_DTYPE_UINT32: v.kind = NUM_UNSIGNED; v.u = ((const uint32_t *)p)[i]; return v;
    case OL_DTYPE_UINT64: v.kind = NUM_UNSIGNED; v.u = ((const uint64_t *)p)[i]; return v;
    case OL_DTYPE_UINT4:
    case OL_DTYPE_UINT2: v.kind = NUM_UNSIGNED; v.u = (uint64_t)ol_packed_get(dt, p, i); return v;
    case OL_DTYPE_FLOAT: v.d = ((const float *)p)[i]; return v;
    case OL_DTYPE_DOUBLE: v.d = ((const double *)p)[i]; return v;
    default: { /* float16, bfloat16, float8, float4: exact in double */
      ol_to_double_fn get = ol_dtype_info(dt)->to_double;
      v.d = get ? get(p, i) : NAN;
      return v;
    }
  }
  v.kind = NUM_SIGNED;
  return v;
}

static double num_double(num v) {
  return v.kind == NUM_FLOAT ? v.d : v.kind == NUM_SIGNED ? (double)v.i : (double)v.u;
}

/* double -> float rounding to odd: a later rounding to a narrower format
 * (fp16, bf16, fp8) then equals one correct rounding of the double. */
static float f32_odd(double d) {
  float f = (float)d;
  if ((double)f == d || d != d) return f;
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  if (fabs((double)f) > fabs(d)) u--; /* toward zero (inf becomes max) */
  u |= 1;
  memcpy(&f, &u, sizeof f);
  return f;
}

static void store_num(ol_dtype dt, void *p, int64_t i, num v, bool saturate) {
  double d = num_double(v);
  switch (dt) {
    case OL_DTYPE_FLOAT:
      ((float *)p)[i] = v.kind == NUM_FLOAT    ? (float)v.d
                        : v.kind == NUM_SIGNED ? (float)v.i
                                               : (float)v.u;
      return;
    case OL_DTYPE_DOUBLE: ((double *)p)[i] = d; return;
    case OL_DTYPE_BOOL: ((uint8_t *)p)[i] = v.kind == NUM_FLOAT ? d != 0 : (v.i | (int64_t)v.u) != 0; return;
    case OL_DTYPE_FLOAT4E2M1:
      ol_packed_set(OL_DTYPE_UINT4, p, i, ol_f32_to_minifloat(dt, f32_odd(d), saturate));
      return;
    case OL_DTYPE_INT4:
    case OL_DTYPE_UINT4:
    case OL_DTYPE_INT2:
    case OL_DTYPE_UINT2: {
      int bits = ol_dtype_bits(dt);
      bool sgn = dt == OL_DTYPE_INT4 || dt == OL_DTYPE_INT2;
      int64_t lo = sgn ? -(1 << (bits - 1)) : 0, hi = sgn ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
      int64_t q;
      if (v.kind == NUM_FLOAT) {
        double c = d != d ? 0 : d < (double)lo ? (double)lo : d > (double)hi ? (double)hi : d;
        q = (int64_t)rint(c);
      } else if (v.kind == NUM_SIGNED) {
        q = v.i < lo ? lo : v.i > hi ? hi : v.i;
      } else {
        q = v.u > (uint64_t)hi ? hi : (int64_t)v.u;
      }
      ol_packed_set(dt, p, i, (int32_t)q);
      return;
    }
    default: break;
  }
  if (is_minifloat(dt)) {
    ((uint8_t *)p)[i] = ol_f32_to_minifloat(dt, f32_odd(d), saturate);
    return;
  }
  if (ol_dtype_widens(dt)) { /* float16, bfloat16 */
    ol_dtype_info(dt)->from_float(p, i, f32_odd(d));
    return;
  }
  /* Integers: wrap from integers, saturate from floats. */
  int64_t s = v.kind == NUM_SIGNED ? v.i : (int64_t)v.u;
  switch (dt) {
#define INT_STORE(DT, T)                                                    \
  case DT:                                                                  \
    ((T *)p)[i] = v.kind == NUM_FLOAT ? sat_##T(d) : (T)s;                   \
    return;
    INT_STORE(OL_DTYPE_INT8, int8_t)
    INT_STORE(OL_DTYPE_INT16, int16_t)
    INT_STORE(OL_DTYPE_INT32, int32_t)
    INT_STORE(OL_DTYPE_INT64, int64_t)
    INT_STORE(OL_DTYPE_UINT8, uint8_t)
    INT_STORE(OL_DTYPE_UINT16, uint16_t)
    INT_STORE(OL_DTYPE_UINT32, uint32_t)
    INT_STORE(OL_DTYPE_UINT64, uint64_t)
#undef INT_STORE
    default: return;
  }
}

/* ------------------------------------------------------------ number -> text */

/* Does text read back to element i of (dt, p)? */
static bool reads_back(const char *text, ol_dtype dt, const void *p, int64_t i) {
  switch (dt) {
    case OL_DTYPE_DOUBLE: return strtod(text, NULL) == ((const double *)p)[i];
    case OL_DTYPE_FLOAT: return strtof(text, NULL) == ((const float *)p)[i];
    default:
      if (ol_dtype_widens(dt)) { /* float16, bfloat16: the text rounds to the same bits */
        size_t es = ol_dtype_size(dt);
        float back = 0.0f; /* room for one element */
        ol_dtype_info(dt)->from_float(&back, 0, f32_odd(strtod(text, NULL)));
        return memcmp(&back, (const char *)p + (size_t)i * es, es) == 0;
      }
      return strtof(text, NULL) == (float)load_num(dt, p, i).d;
  }
}

/* numpy-style shortest repr of a finite nonzero float element. */
static void format_float(ol_dtype dt, const void *p, int64_t i, char *out, size_t cap) {
  double v = load_num(dt, p, i).d;
  if (v != v) {
    snprintf(out, cap, "nan");
    return;
  }
  if (isinf(v)) {
    snprintf(out, cap, v < 0 ? "-inf" : "inf");
    return;
  }
  if (v == 0) {
    snprintf(out, cap, signbit(v) ? "-0.0" : "0.0");
    return;
  }
  char sci[48];
  int maxp = dt == OL_DTYPE_DOUBLE ? 17 : 9;
  for (int prec = 1; prec <= maxp; prec++) {
    snprintf(sci, sizeof sci, "%.*e", prec - 1, v);
    if (reads_back(sci, dt, p, i)) break;
  }
  /* sci = [-]d[.ddd]e[+-]XX -> sign, digits, decimal exponent */
  const char *s = sci;
  bool neg = *s == '-';
  if (neg) s++;
  char digits[24];
  int nd = 0;
  for (; *s && *s != 'e'; s++)
    if (isdigit((unsigned char)*s) && nd < 23) digits[nd++] = *s;
  int exp10 = atoi(s + 1);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  digits[nd] = 0;
  double a = fabs(v);
  char *o = out;
  size_t left = cap;
#define EMIT(...)                                            \
  do {                                                       \
    int w_ = snprintf(o, left, __VA_ARGS__);                 \
    if (w_ < 0 || (size_t)w_ >= left) return;                \
    o += w_;                                                 \
    left -= (size_t)w_;                                      \
  } while (0)
  if (neg) EMIT("-");
  if (a >= 1e-4 && a < 1e16) {
    if (exp10 >= 0) {
      for (int k = 0; k <= exp10; k++) EMIT("%c", k < nd ? digits[k] : '0');
      EMIT(".");
      if (nd > exp10 + 1)
        EMIT("%s", digits + exp10 + 1);
      else
        EMIT("0");
    } else {
      EMIT("0.");
      for (int k = 0; k < -exp10 - 1; k++) EMIT("0");
      EMIT("%s", digits);
    }
  } else {
    EMIT("%c", digits[0]);
    if (nd > 1) EMIT(".%s", digits + 1);
    EMIT("e%c%02d", exp10 < 0 ? '-' : '+', exp10 < 0 ? -exp10 : exp10);
  }
#undef EMIT
}

static void format_elem(ol_dtype dt, const void *p, int64_t i, char *out, size_t cap) {
  num v = load_num(dt, p, i);
  if (dt == OL_DTYPE_BOOL)
    snprintf(out, cap, v.i ? "True" : "False");
  else if (v.kind == NUM_SIGNED)
    snprintf(out, cap, "%lld", (long long)v.i);
  else if (v.kind == NUM_UNSIGNED)
    snprintf(out, cap, "%llu", (unsigned long long)v.u);
  else
    format_float(dt, p, i, out, cap);
}

/* ------------------------------------------------------------ text -> number */

static bool iequal(const char *a, size_t n, const char *b) {
  if (strlen(b) != n) return false;
  for (size_t i = 0; i < n; i++)
    if (tolower((unsigned char)a[i]) != tolower((unsigned char)b[i])) return false;
  return true;
}

static ol_status parse_num(const ol_node *node, const ol_string *str, ol_dtype to, num *out) {
  const char *s = str->data ? str->data : "";
  size_t n = str->data ? str->length : 0;
  while (n && isspace((unsigned char)*s)) s++, n--;
  while (n && isspace((unsigned char)s[n - 1])) n--;
  char buf[128];
  if (n == 0 || n >= sizeof buf || memchr(s, 0, n))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot convert string \"%.*s\" to %s",
                           (int)(n < 64 ? n : 64), s, ol_dtype_name(to));
  memcpy(buf, s, n);
  buf[n] = 0;
  out->kind = NUM_FLOAT;
  out->d = 0;
  out->i = 0;
  out->u = 0;
  if (iequal(buf, n, "true") || iequal(buf, n, "false")) {
    out->kind = NUM_SIGNED;
    out->i = iequal(buf, n, "true");
    return OL_OK;
  }
  char *end;
  bool int_target = ol_dtype_info(to)->is_integer;
  if (int_target && buf[0] != '-' && to != OL_DTYPE_BOOL && !ol_dtype_info(to)->is_signed) {
    unsigned long long u = strtoull(buf, &end, 10);
    if (*end == 0) {
      out->kind = NUM_UNSIGNED;
      out->u = u;
      return OL_OK;
    }
  } else if (int_target) {
    long long v = strtoll(buf, &end, 10);
    if (*end == 0) {
      out->kind = NUM_SIGNED;
      out->i = v;
      return OL_OK;
    }
  }
  out->d = to == OL_DTYPE_FLOAT ? (double)strtof(buf, &end) : strtod(buf, &end);
  if (*end != 0 || end == buf)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot convert string \"%s\" to %s", buf,
                           ol_dtype_name(to));
  return OL_OK;
}

/* ------------------------------------------------------------ kernel */

typedef struct cast_kernel {
  ol_kernel base;
  ol_dtype to; /* UNDEFINED for CastLike: the type of input 1 */
  bool saturate;
} cast_kernel;

static ol_status cast_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const cast_kernel *k = (const cast_kernel *)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  ol_dtype to = k->to;
  if (to == OL_DTYPE_UNDEFINED) {
    const ol_tensor *like;
    OL_TRY(ol_ctx_require(ctx, 1, &like));
    to = like->dtype;
  }
  ol_dtype from = x->dtype;
  if (!castable(from)) return ol_kernel_bad_dtype(ctx->node, "input", from);
  if (!castable(to)) return ol_kernel_bad_dtype(ctx->node, "target type", to);
  if (from == to) return ol_ctx_output_view(ctx, 0, x, x->rank, x->dims);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, to, x->rank, x->dims, &y));
  int64_t n = ol_tcount(x);
  if (n == 0) return OL_OK;
  const void *in = ol_tdata(x);
  void *out = ol_tdata(y);
  int bi = basic_index(from), bo = basic_index(to);
  if (bi >= 0 && bo >= 0) {
    cast_table[bi][bo](out, in, n);
  } else if (from == OL_DTYPE_FLOAT && ol_dtype_widens(to)) {
    ol_dtype_info(to)->store_row(in, n, out); /* float16/bfloat16 rows */
  } else if (ol_dtype_widens(from) && to == OL_DTYPE_FLOAT) {
    ol_dtype_info(from)->load_row(in, n, out);
  } else if (to == OL_DTYPE_STRING) {
    ol_string *dst = out;
    char text[96];
    for (int64_t i = 0; i < n; i++) {
      format_elem(from, in, i, text, sizeof text);
      dst[i].data = ol_strdup(text);
      if (!dst[i].data) return OL_OUT_OF_MEMORY;
      dst[i].length = strlen(text);
    }
  } else if (from == OL_DTYPE_STRING) {
    const ol_string *src = in;
    for (int64_t i = 0; i < n; i++) {
      num v = {NUM_FLOAT, 0, 0, 0};
      OL_TRY(parse_num(ctx->node, &src[i], to, &v));
      store_num(to, out, i, v, k->saturate);
    }
  } else {
    for (int64_t i = 0; i < n; i++) store_num(to, out, i, load_num(from, in, i), k->saturate);
  }
  return OL_OK;
}

static ol_status cast_make(const ol_node *node, ol_dtype to, ol_kernel **out) {
  OL_TRY(ol_kernel_alloc(node, sizeof(cast_kernel), cast_compute, out));
  cast_kernel *k = (cast_kernel *)*out;
  k->to = to;
  k->saturate = node->opset < 19 || ol_attr_int(node, "saturate", 1) != 0;
  return OL_OK;
}

ol_status ol_ew_cast_create(const ol_node *node, ol_kernel **out) {
  const ol_attr *a = ol_node_attr(node, "to");
  if (!a) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'to' is required");
  ol_dtype to = a->type == OL_ATTR_STRING ? ol_dtype_from_name(a->s) : (ol_dtype)a->i;
  if (a->type != OL_ATTR_STRING && (a->i <= 0 || a->i >= OL_DTYPE_COUNT)) to = OL_DTYPE_UNDEFINED;
  if (!ol_dtype_valid(to) || !castable(to))
    return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported target type 'to' = %s",
                           a->type == OL_ATTR_STRING ? a->s : ol_dtype_name(to));
  return cast_make(node, to, out);
}

ol_status ol_ew_castlike_create(const ol_node *node, ol_kernel **out) {
  return cast_make(node, OL_DTYPE_UNDEFINED, out);
}
