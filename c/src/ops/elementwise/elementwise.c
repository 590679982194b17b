/* Binary, variadic and ternary elementwise operators (ai.onnx), with numpy
 * broadcasting, and the registration table of the whole elementwise family.
 *
 *   Add Sub Mul Div 1-6 (legacy broadcast/axis attributes), 7-23
 *   Pow 1-6, 7-23 (mixed base/exponent types 12+)   Mod 10-23 (fmod)
 *   And Or Xor Equal Less Greater 1-6, 7-23 (Equal on strings 19+)
 *   LessOrEqual GreaterOrEqual 12-23   BitShift 11-23
 *   BitwiseAnd BitwiseOr BitwiseXor 18-23   PRelu 1-23 (1-D slope per channel < 7)
 *   Max Min Sum Mean 1-23 (variadic, broadcasting 8+)   Where 9-23
 * Unary ops and Clip live in elementwise_unary.c, Cast/CastLike in
 * elementwise_cast.c.
 *
 * Broadcasting: the output shape is walked as a collapsed iteration space
 * (size-1 dims dropped, adjacent dims merged when every operand is contiguous
 * across them), so same-shape, scalar-vs-tensor and row broadcasts become one
 * tight loop over contiguous memory per row. Each op x dtype is a loop
 * function generated from a one-line expression. float16/bfloat16 are
 * computed in float32 and rounded on store. Integer arithmetic wraps;
 * integer division (Div, Mod) by zero is an OL_INVALID_ARGUMENT error. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/elementwise/elementwise.h"
#include "simd/math.h"

/* ------------------------------------------------------------ broadcasting iterator */

#define EW_MAX_IN 3

typedef struct ew_shape {
  int rank;
  const int64_t *dims;
} ew_shape;

typedef struct ew_iter {
  int rank; /* >= 1 */
  int64_t dims[OL_MAX_RANK];
  int64_t strides[EW_MAX_IN][OL_MAX_RANK]; /* elements; 0 = broadcast */
  int nin;
} ew_iter;

static void ew_iter_init(ew_iter *it, int rank, const int64_t *out_dims, int nin,
                         const ew_shape *in) {
  int64_t full[EW_MAX_IN][OL_MAX_RANK];
  for (int k = 0; k < nin; k++) {
    int64_t s = 1;
    for (int d = rank - 1; d >= 0; d--) {
      int id = d - (rank - in[k].rank);
      int64_t n = id >= 0 ? in[k].dims[id] : 1;
      full[k][d] = n == 1 ? 0 : s;
      s *= n;
    }
  }
  it->nin = nin;
  it->rank = 0;
  for (int d = 0; d < rank; d++) {
    if (out_dims[d] == 1) continue;
    int m = it->rank;
    bool merge = m > 0;
    for (int k = 0; k < nin && merge; k++)
      merge = it->strides[k][m - 1] == full[k][d] * out_dims[d];
    if (merge) {
      it->dims[m - 1] *= out_dims[d];
      for (int k = 0; k < nin; k++) it->strides[k][m - 1] = full[k][d];
    } else {
      it->dims[m] = out_dims[d];
      for (int k = 0; k < nin; k++) it->strides[k][m] = full[k][d];
      it->rank++;
    }
  }
  if (it->rank == 0) {
    it->rank = 1;
    it->dims[0] = 1;
    for (int k = 0; k < nin; k++) it->strides[k][0] = 0;
  }
}

/* A row: n output elements, input k advancing by inner[k] (0 or 1). */
typedef int (*ew_row_fn)(void *state, char *out, const char *const *in, const int64_t *inner,
                         int64_t n);

/* Calls fn for every row; stops at the first nonzero return. */
static int ew_run(const ew_iter *it, char *out, size_t osize, const char *const *in,
                  const size_t *isize, ew_row_fn fn, void *state) {
  int r = it->rank;
  int64_t n = it->dims[r - 1], rows = 1, idx[OL_MAX_RANK] = {0}, inner[EW_MAX_IN];
  const char *p[EW_MAX_IN];
  for (int d = 0; d < r - 1; d++) rows *= it->dims[d];
  for (int k = 0; k < it->nin; k++) {
    inner[k] = it->strides[k][r - 1];
    p[k] = in[k];
  }
  for (int64_t row = 0; row < rows; row++) {
    int rc = fn(state, out + (size_t)(row * n) * osize, p, inner, n);
    if (rc) return rc;
    for (int d = r - 2; d >= 0; d--) {
      for (int k = 0; k < it->nin; k++) p[k] += it->strides[k][d] * (int64_t)isize[k];
      if (++idx[d] < it->dims[d]) break;
      for (int k = 0; k < it->nin; k++) p[k] -= it->strides[k][d] * it->dims[d] * (int64_t)isize[k];
      idx[d] = 0;
    }
  }
  return 0;
}

/* ------------------------------------------------------------ float16 / bfloat16 */

/* Narrow types are computed in float32 (ol_dtype_widens), converted by the
 * dtype table's rows. */
static bool is_narrow(ol_dtype dt) { return ol_dtype_widens(dt); }

/* A float32 copy of a narrow tensor in scratch of the run's allocator (NULL +
 * OL_OUT_OF_MEMORY on failure): broadcasting reads it in any order. */
static float *widen(ol_allocator *a, const ol_tensor *t) {
  int64_t n = ol_tcount(t);
  float *f = ol_alloc(a, sizeof(float) * (size_t)(n ? n : 1));
  if (f) ol_dtype_info(t->dtype)->load_row(ol_tdata(t), n, f);
  return f;
}

static void narrow_store(ol_tensor *t, const float *f) {
  ol_dtype_info(t->dtype)->store_row(f, ol_tcount(t), ol_tdata(t));
}

/* ------------------------------------------------------------ binary loop generators */

/* bin_fn: n elements, sa/sb = 1 contiguous, 0 broadcast scalar. Nonzero
 * return: integer division by zero. out may alias a (variadic ops). */
typedef int (*bin_fn)(void *out, const void *a, const void *b, int64_t n, int sa, int sb);

#define BIN_BODY(TI, TO, EXPR)                                                 \
  TO *o = out_;                                                                \
  const TI *a = a_, *b = b_;                                                   \
  if (sa && sb) {                                                              \
    for (int64_t i = 0; i < n; i++) {                                          \
      TI x = a[i], y = b[i];                                                   \
      o[i] = (TO)(EXPR);                                                       \
    }                                                                          \
  } else if (sa) {                                                             \
    const TI y = b[0];                                                         \
    for (int64_t i = 0; i < n; i++) {                                          \
      TI x = a[i];                                                             \
      o[i] = (TO)(EXPR);                                                       \
    }                                                                          \
  } else if (sb) {                                                             \
    const TI x = a[0];                                                         \
    for (int64_t i = 0; i < n; i++) {                                          \
      TI y = b[i];                                                             \
      o[i] = (TO)(EXPR);                                                       \
    }                                                                          \
  } else {                                                                     \
    TI x = a[0], y = b[0];                                                     \
    TO v = (TO)(EXPR);                                                         \
    for (int64_t i = 0; i < n; i++) o[i] = v;                                  \
  }
#define BIN_FN(NAME, TI, TO, EXPR)                                                      \
  static int NAME(void *out_, const void *a_, const void *b_, int64_t n, int sa, int sb) { \
    BIN_BODY(TI, TO, EXPR) return 0;                                                    \
  }
#define BIN_FN_CHECKED(NAME, TI, TO, EXPR)                                              \
  static int NAME(void *out_, const void *a_, const void *b_, int64_t n, int sa, int sb) { \
    int err = 0;                                                                        \
    BIN_BODY(TI, TO, EXPR) return err;                                                  \
  }

#define FLOAT_TYPES(X, OP) X(OP, f32, float, F) X(OP, f64, double, F)
#define SINT_TYPES(X, OP) \
  X(OP, i8, int8_t, S) X(OP, i16, int16_t, S) X(OP, i32, int32_t, S) X(OP, i64, int64_t, S)
#define UINT_TYPES(X, OP) \
  X(OP, u8, uint8_t, U) X(OP, u16, uint16_t, U) X(OP, u32, uint32_t, U) X(OP, u64, uint64_t, U)
#define INT_TYPES(X, OP) SINT_TYPES(X, OP) UINT_TYPES(X, OP)
#define ALL_TYPES(X, OP) FLOAT_TYPES(X, OP) INT_TYPES(X, OP)

#define GEN(OP, SUF, T, K) BIN_FN(OP##_##SUF, T, T, OP##_##K(x, y, T))
#define GEN_CMP(OP, SUF, T, K) BIN_FN(OP##_##SUF, T, uint8_t, OP##_##K(x, y, T))
#define GEN_CHK(OP, SUF, T, K) BIN_FN_CHECKED(OP##_##SUF, T, T, OP##_##K(x, y, T))

/* Table rows: [dtype] = function. */
#define FLOAT_FNS(OP) [OL_DTYPE_FLOAT] = OP##_f32, [OL_DTYPE_DOUBLE] = OP##_f64
#define SINT_FNS(OP) \
  [OL_DTYPE_INT8] = OP##_i8, [OL_DTYPE_INT16] = OP##_i16, [OL_DTYPE_INT32] = OP##_i32, \
  [OL_DTYPE_INT64] = OP##_i64
#define UINT_FNS(OP) \
  [OL_DTYPE_UINT8] = OP##_u8, [OL_DTYPE_UINT16] = OP##_u16, [OL_DTYPE_UINT32] = OP##_u32, \
  [OL_DTYPE_UINT64] = OP##_u64
#define INT_FNS(OP) SINT_FNS(OP), UINT_FNS(OP)
#define ALL_FNS(OP) FLOAT_FNS(OP), INT_FNS(OP)

/* Integers wrap: arithmetic in uint64_t, truncated to the type. */
#define WRAP(T, e) ((T)(e))
#define add_F(x, y, T) (x + y)
#define add_S(x, y, T) WRAP(T, (uint64_t)x + (uint64_t)y)
#define add_U add_S
#define sub_F(x, y, T) (x - y)
#define sub_S(x, y, T) WRAP(T, (uint64_t)x - (uint64_t)y)
#define sub_U sub_S
#define mul_F(x, y, T) (x * y)
#define mul_S(x, y, T) WRAP(T, (uint64_t)x * (uint64_t)y)
#define mul_U mul_S
#define div_F(x, y, T) (x / y)
#define div_S(x, y, T) \
  (y == 0 ? (err = 1, (T)0) : y == -1 ? WRAP(T, 0 - (uint64_t)x) : (T)(x / y))
#define div_U(x, y, T) (y == 0 ? (err = 1, (T)0) : (T)(x / y))
#define mod_F(x, y, T) ((T)py_fmod(x, y))
#define mod_S(x, y, T) (y == 0 ? (err = 1, (T)0) : (T)py_imod(x, y))
#define mod_U(x, y, T) (y == 0 ? (err = 1, (T)0) : (T)(x % y))
#define fmod_F(x, y, T) ((T)fmod(x, y))
#define fmod_S(x, y, T) (y == 0 ? (err = 1, (T)0) : y == -1 ? (T)0 : (T)(x % y))
#define fmod_U mod_U
#define pow_F(x, y, T) (sizeof(T) == 4 ? (T)ol_powf((float)x, (float)y) : (T)ol_pow(x, y))
#define pow_S(x, y, T) ((T)ipow(x, y, &err))
#define pow_U pow_S
#define max_F(x, y, T) ((x >= y || x != x) ? x : y)
#define max_S(x, y, T) (x >= y ? x : y)
#define max_U max_S
#define min_F(x, y, T) ((x <= y || x != x) ? x : y)
#define min_S(x, y, T) (x <= y ? x : y)
#define min_U min_S
#define prelu_F(x, y, T) (x < 0 ? y * x : x)
#define prelu_S(x, y, T) (x < 0 ? WRAP(T, (uint64_t)x * (uint64_t)y) : x)
#define prelu_U(x, y, T) ((void)y, x)
#define eq_F(x, y, T) (x == y)
#define eq_S eq_F
#define eq_U eq_F
#define eq_B(x, y, T) ((x != 0) == (y != 0))
#define lt_F(x, y, T) (x < y)
#define lt_S lt_F
#define lt_U lt_F
#define le_F(x, y, T) (x <= y)
#define le_S le_F
#define le_U le_F
#define gt_F(x, y, T) (x > y)
#define gt_S gt_F
#define gt_U gt_F
#define ge_F(x, y, T) (x >= y)
#define ge_S ge_F
#define ge_U ge_F
#define band_S(x, y, T) ((T)(x & y))
#define band_U band_S
#define bor_S(x, y, T) ((T)(x | y))
#define bor_U bor_S
#define bxor_S(x, y, T) ((T)(x ^ y))
#define bxor_U bxor_S
#define and_B(x, y, T) ((x != 0) & (y != 0))
#define or_B(x, y, T) ((x != 0) | (y != 0))
#define xor_B(x, y, T) ((x != 0) ^ (y != 0))
#define shl_U(x, y, T) (y >= 8 * sizeof(T) ? (T)0 : (T)((uint64_t)x << y))
#define shr_U(x, y, T) (y >= 8 * sizeof(T) ? (T)0 : (T)(x >> y))

/* Python-style remainder (sign of the divisor), Mod with fmod = 0. */
static inline double py_fmod(double x, double y) {
  double r = fmod(x, y);
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
static inline int64_t py_imod(int64_t x, int64_t y) {
  if (y == -1) return 0;
  int64_t r = x % y;
  if (r != 0 && ((r < 0) != (y < 0))) r += y;
  return r;
}
/* Exact integer power (wrapping); 0 to a negative power is an error. */
static inline int64_t ipow(int64_t b, int64_t e, int *err) {
  if (e < 0) {
    if (b == 0) *err = 1;
    return b == 1 ? 1 : b == -1 ? ((e & 1) ? -1 : 1) : 0;
  }
  uint64_t r = 1, x = (uint64_t)b;
  for (; e; e >>= 1, x *= x)
    if (e & 1) r *= x;
  return (int64_t)r;
}

ALL_TYPES(GEN, add)
ALL_TYPES(GEN, sub)
ALL_TYPES(GEN, mul)
FLOAT_TYPES(GEN, div)
INT_TYPES(GEN_CHK, div)
FLOAT_TYPES(GEN, mod)
INT_TYPES(GEN_CHK, mod)
FLOAT_TYPES(GEN, fmod)
INT_TYPES(GEN_CHK, fmod)
BIN_FN(pow_any_f32, float, float, pow_F(x, y, float))
GEN(pow, f64, double, F)
INT_TYPES(GEN_CHK, pow)
/* float32 Pow with one exponent 2 for the row (RMSNorm's x^2): ol_pow's
 * shortcut for y == 2 in float. The double square of a float is exact, so
 * rounding it once to float gives the float product: same bits as
 * pow_any_f32 on every input (tests/c/test_elementwise.c). (No shortcut for
 * y == 1: the compiler folds x * 1 to x, which would not quiet a signaling
 * NaN as pow does.) */
static int pow_f32(void *out_, const void *a_, const void *b_, int64_t n, int sa, int sb) {
  const float *a = a_;
  float *o = out_;
  if (sa && !sb && *(const float *)b_ == 2.0f) {
    for (int64_t i = 0; i < n; i++) o[i] = a[i] * a[i];
    return 0;
  }
  return pow_any_f32(out_, a_, b_, n, sa, sb);
}
ALL_TYPES(GEN, max)
ALL_TYPES(GEN, min)
ALL_TYPES(GEN, prelu)
ALL_TYPES(GEN_CMP, eq)
ALL_TYPES(GEN_CMP, lt)
ALL_TYPES(GEN_CMP, le)
ALL_TYPES(GEN_CMP, gt)
ALL_TYPES(GEN_CMP, ge)
INT_TYPES(GEN, band)
INT_TYPES(GEN, bor)
INT_TYPES(GEN, bxor)
UINT_TYPES(GEN, shl)
UINT_TYPES(GEN, shr)
static inline int str_eq(ol_string x, ol_string y) {
  return x.length == y.length && (x.length == 0 || memcmp(x.data, y.data, x.length) == 0);
}
BIN_FN(eq_str, ol_string, uint8_t, str_eq(x, y))
BIN_FN(eq_bool, uint8_t, uint8_t, eq_B(x, y, uint8_t))
BIN_FN(and_bool, uint8_t, uint8_t, and_B(x, y, uint8_t))
BIN_FN(or_bool, uint8_t, uint8_t, or_B(x, y, uint8_t))
BIN_FN(xor_bool, uint8_t, uint8_t, xor_B(x, y, uint8_t))

typedef struct binary_op {
  const char *name;
  bin_fn fns[OL_DTYPE_COUNT];
  bool out_bool;
  bool mixed;  /* Pow: exponent may have another type */
  bool legacy; /* broadcast/axis attributes before opset 7 */
} binary_op;

enum { OP_MAX, OP_MIN, OP_SUM, OP_MEAN }; /* variadic ops: indexes into binary_ops */
static const binary_op binary_ops[] = {
    {"Max", {ALL_FNS(max)}, 0, 0, 0},
    {"Min", {ALL_FNS(min)}, 0, 0, 0},
    {"Sum", {FLOAT_FNS(add)}, 0, 0, 0},
    {"Mean", {FLOAT_FNS(add)}, 0, 0, 0},
    {"Add", {ALL_FNS(add)}, 0, 0, 1},
    {"Sub", {ALL_FNS(sub)}, 0, 0, 1},
    {"Mul", {ALL_FNS(mul)}, 0, 0, 1},
    {"Div", {ALL_FNS(div)}, 0, 0, 1},
    {"Pow", {ALL_FNS(pow)}, 0, 1, 1},
    {"Mod", {ALL_FNS(mod)}, 0, 0, 0},
    {"PRelu", {ALL_FNS(prelu)}, 0, 0, 0},
    {"Equal", {ALL_FNS(eq), [OL_DTYPE_BOOL] = eq_bool, [OL_DTYPE_STRING] = eq_str}, 1, 0, 1},
    {"Less", {ALL_FNS(lt)}, 1, 0, 1},
    {"LessOrEqual", {ALL_FNS(le)}, 1, 0, 0},
    {"Greater", {ALL_FNS(gt)}, 1, 0, 1},
    {"GreaterOrEqual", {ALL_FNS(ge)}, 1, 0, 0},
    {"And", {[OL_DTYPE_BOOL] = and_bool}, 1, 0, 1},
    {"Or", {[OL_DTYPE_BOOL] = or_bool}, 1, 0, 1},
    {"Xor", {[OL_DTYPE_BOOL] = xor_bool}, 1, 0, 1},
    {"BitwiseAnd", {INT_FNS(band)}, 0, 0, 0},
    {"BitwiseOr", {INT_FNS(bor)}, 0, 0, 0},
    {"BitwiseXor", {INT_FNS(bxor)}, 0, 0, 0},
    {"BitShift", {UINT_FNS(shl)}, 0, 0, 0},
};
static const bin_fn fmod_fns[OL_DTYPE_COUNT] = {ALL_FNS(fmod)};
static const bin_fn shr_fns[OL_DTYPE_COUNT] = {UINT_FNS(shr)};

/* ------------------------------------------------------------ running a binary fn */

typedef struct bin_state {
  bin_fn fn;
} bin_state;

static int bin_row(void *state, char *out, const char *const *in, const int64_t *inner, int64_t n) {
  return ((bin_state *)state)->fn(out, in[0], in[1], n, (int)inner[0], (int)inner[1]);
}

/* out[shape] = fn(a, b); a/b data of element size isz (broadcast per shape). */
static int bin_apply(bin_fn fn, int rank, const int64_t *dims, void *out, size_t osz,
                     const void *a, ew_shape sa, const void *b, ew_shape sb, size_t isz) {
  if (ol_shape_count(rank, dims) == 0) return 0;
  ew_iter it;
  ew_shape shapes[2] = {sa, sb};
  ew_iter_init(&it, rank, dims, 2, shapes);
  const char *in[2] = {a, b};
  size_t isize[2] = {isz, isz};
  bin_state st = {fn};
  return ew_run(&it, out, osz, in, isize, bin_row, &st);
}

static ol_status div_zero(const ol_node *node) {
  return ol_kernel_error(node, OL_INVALID_ARGUMENT, "integer division by zero");
}

/* ------------------------------------------------------------ Pow with mixed types */

/* A floating or uint64 element as double (the dtype table's to_double). */
static double load_d(ol_dtype dt, const char *p) { return ol_dtype_info(dt)->to_double(p, 0); }
static int64_t load_i(ol_dtype dt, const char *p) {
  switch (dt) {
    case OL_DTYPE_INT8: return *(const int8_t *)p;
    case OL_DTYPE_INT16: return *(const int16_t *)p;
    case OL_DTYPE_INT32: return *(const int32_t *)p;
    case OL_DTYPE_INT64: return *(const int64_t *)p;
    case OL_DTYPE_UINT8: return *(const uint8_t *)p;
    case OL_DTYPE_UINT16: return *(const uint16_t *)p;
    case OL_DTYPE_UINT32: return *(const uint32_t *)p;
    case OL_DTYPE_UINT64: return (int64_t) * (const uint64_t *)p;
    default: return 0;
  }
}

typedef struct pow_state {
  ol_dtype ta, tb;
  size_t sa, sb;
  bool ia, ib; /* integer base / exponent */
  int err;
} pow_state;

static int pow_row(void *state, char *out, const char *const *in, const int64_t *inner, int64_t n) {
  pow_state *s = state;
  for (int64_t i = 0; i < n; i++) {
    const char *a = in[0] + (size_t)(i * inner[0]) * s->sa, *b = in[1] + (size_t)(i * inner[1]) * s->sb;
    double e = s->ib ? (s->tb == OL_DTYPE_UINT64 ? load_d(s->tb, b) : (double)load_i(s->tb, b))
                     : load_d(s->tb, b);
    char *o = out + (size_t)i * s->sa;
    if (s->ia) {
      int64_t v;
      if (s->ib) {
        v = ipow(load_i(s->ta, a), load_i(s->tb, b), &s->err);
      } else {
        double r = ol_pow((double)load_i(s->ta, a), e);
        v = r != r ? 0 : r >= 9.2233720368547758e18 ? INT64_MAX : r <= -9.2233720368547758e18 ? INT64_MIN : (int64_t)r;
      }
      if (s->ta == OL_DTYPE_INT32) *(int32_t *)o = (int32_t)v;
      else *(int64_t *)o = v;
    } else {
      ol_dtype_info(s->ta)->from_double(o, 0, ol_pow(load_d(s->ta, a), e));
    }
  }
  return 0;
}

static ol_status pow_mixed(ol_kernel_ctx *ctx, const ol_tensor *a, ew_shape sa, const ol_tensor *b,
                           ew_shape sb, int rank, const int64_t *dims) {
  ol_dtype ta = a->dtype, tb = b->dtype;
  bool fa = ta == OL_DTYPE_FLOAT || ta == OL_DTYPE_DOUBLE || is_narrow(ta);
  bool ia = ta == OL_DTYPE_INT32 || ta == OL_DTYPE_INT64;
  const ol_dtype_traits *eb = ol_dtype_info(tb);
  bool ib = eb->is_integer && tb != OL_DTYPE_BOOL && ol_dtype_size(tb) > 0;
  bool fb = tb == OL_DTYPE_FLOAT || tb == OL_DTYPE_DOUBLE || is_narrow(tb);
  if (!fa && !ia) return ol_kernel_bad_dtype(ctx->node, "base", ta);
  if (!fb && !ib) return ol_kernel_bad_dtype(ctx->node, "exponent", tb);
  ol_tensor *y;
  OL_TRY(ol_ctx_output_uninit(ctx, 0, ta, rank, dims, &y)); /* ew_run writes every element */
  if (ol_tcount(y) == 0) return OL_OK;
  ew_iter it;
  ew_shape shapes[2] = {sa, sb};
  ew_iter_init(&it, rank, dims, 2, shapes);
  pow_state st = {ta, tb, ol_dtype_size(ta), ol_dtype_size(tb), ia, ib, 0};
  const char *in[2] = {ol_tdata(a), ol_tdata(b)};
  ew_run(&it, ol_tdata(y), st.sa, in, (size_t[2]){st.sa, st.sb}, pow_row, &st);
  return st.err ? ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "0 to a negative integer power")
                : OL_OK;
}

/* ------------------------------------------------------------ binary kernel */

typedef struct binary_kernel {
  ol_kernel base;
  const binary_op *op;
  const bin_fn *fns;
  bool legacy_broadcast; /* opset < 7 */
  int64_t legacy_axis;   /* INT64_MIN: align trailing dims */
} binary_kernel;

static ol_status binary_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const binary_kernel *k = (const binary_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *b;
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &b));
  ew_shape sa = {a->rank, a->dims}, sb = {b->rank, b->dims};
  int64_t bdims[OL_MAX_RANK];
  if (k->op->legacy && node->opset < 7) {
    bool same = a->rank == b->rank && !memcmp(a->dims, b->dims, sizeof(int64_t) * (size_t)a->rank);
    if (!k->legacy_broadcast && !same)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "shapes differ and broadcast is not set (opset %d)", node->opset);
    if (k->legacy_broadcast) {
      int64_t axis = k->legacy_axis == INT64_MIN ? a->rank - b->rank : k->legacy_axis;
      if (axis < 0) axis += a->rank;
      if (axis < 0 || axis + b->rank > a->rank)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot broadcast rank %d at axis %lld to rank %d",
                               b->rank, (long long)axis, a->rank);
      for (int d = 0; d < a->rank; d++)
        bdims[d] = d >= axis && d < axis + b->rank ? b->dims[d - axis] : 1;
      sb.rank = a->rank;
      sb.dims = bdims;
    }
  }
  if (node->opset < 7 && strcmp(k->op->name, "PRelu") == 0 && b->rank == 1 && a->rank > 2 &&
      b->dims[0] == a->dims[1]) {
    /* PRelu-1/6: a 1-D slope holds one value per channel (axis 1). */
    for (int d = 0; d < a->rank - 1; d++) bdims[d] = d == 0 ? b->dims[0] : 1;
    sb.rank = a->rank - 1;
    sb.dims = bdims;
  }
  int rank;
  int64_t dims[OL_MAX_RANK];
  OL_TRY(ol_broadcast_shapes(node, sa.rank, sa.dims, sb.rank, sb.dims, &rank, dims));
  if (k->op->mixed && a->dtype != b->dtype) return pow_mixed(ctx, a, sa, b, sb, rank, dims);
  if (a->dtype != b->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input types differ: %s and %s",
                           ol_dtype_name(a->dtype), ol_dtype_name(b->dtype));
  ol_dtype dt = a->dtype;
  bool narrow = is_narrow(dt);
  bin_fn fn = ol_dtype_valid(dt) ? k->fns[narrow ? OL_DTYPE_FLOAT : dt] : NULL;
  if (!fn) return ol_kernel_bad_dtype(node, "input", dt);
  ol_dtype odt = k->op->out_bool ? OL_DTYPE_BOOL : dt;
  ol_tensor *y;
  /* every element written (bin_apply covers the broadcast shape) */
  OL_TRY(ol_ctx_output_uninit(ctx, 0, odt, rank, dims, &y));
  int64_t n = ol_tcount(y);
  if (n == 0) return OL_OK;
  if (!narrow) {
    if (bin_apply(fn, rank, dims, ol_tdata(y), ol_dtype_size(odt), ol_tdata(a), sa, ol_tdata(b), sb,
                  ol_dtype_size(dt)))
      return div_zero(node);
    return OL_OK;
  }
  float *fa = widen(ctx->allocator, a), *fb = widen(ctx->allocator, b);
  float *fy = k->op->out_bool ? NULL : ol_alloc(ctx->allocator, sizeof(float) * (size_t)n);
  ol_status s = OL_OUT_OF_MEMORY;
  if (fa && fb && (fy || k->op->out_bool)) {
    bin_apply(fn, rank, dims, fy ? (void *)fy : ol_tdata(y), fy ? sizeof(float) : 1, fa, sa, fb, sb,
              sizeof(float));
    if (fy) narrow_store(y, fy);
    s = OL_OK;
  }
  ol_dealloc(ctx->allocator, fa);
  ol_dealloc(ctx->allocator, fb);
  ol_dealloc(ctx->allocator, fy);
  return s;
}

static ol_status binary_create(const ol_node *node, ol_kernel **out) {
  const binary_op *op = NULL;
  for (size_t i = 0; i < sizeof binary_ops / sizeof binary_ops[0]; i++)
    if (strcmp(binary_ops[i].name, node->op_type) == 0) op = &binary_ops[i];
  if (!op) return ol_kernel_error(node, OL_INTERNAL, "not a binary elementwise operator");
  const bin_fn *fns = op->fns;
  if (strcmp(op->name, "Mod") == 0 && ol_attr_int(node, "fmod", 0)) fns = fmod_fns;
  if (strcmp(op->name, "BitShift") == 0) {
    const char *dir = ol_attr_string(node, "direction", "");
    if (strcmp(dir, "RIGHT") == 0)
      fns = shr_fns;
    else if (strcmp(dir, "LEFT") != 0)
      return ol_kernel_error(node, OL_INVALID_MODEL,
                             "direction must be \"LEFT\" or \"RIGHT\", got \"%s\"", dir);
  }
  OL_TRY(ol_kernel_alloc(node, sizeof(binary_kernel), binary_compute, out));
  binary_kernel *k = (binary_kernel *)*out;
  k->op = op;
  k->fns = fns;
  k->legacy_broadcast = ol_attr_int(node, "broadcast", 0) != 0;
  k->legacy_axis = ol_node_attr(node, "axis") ? ol_attr_int(node, "axis", 0) : INT64_MIN;
  return OL_OK;
}

/* ------------------------------------------------------------ Max Min Sum Mean */

static ol_status variadic_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const binary_op *op = ((const binary_kernel *)kernel)->op;
  const ol_node *node = ctx->node;
  size_t count = ctx->num_inputs;
  if (count == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "needs at least one input");
  const ol_tensor *first;
  OL_TRY(ol_ctx_require(ctx, 0, &first));
  ol_dtype dt = first->dtype;
  int rank = first->rank;
  int64_t dims[OL_MAX_RANK];
  memcpy(dims, first->dims, sizeof(int64_t) * (size_t)rank);
  for (size_t i = 1; i < count; i++) {
    const ol_tensor *t;
    OL_TRY(ol_ctx_require(ctx, i, &t));
    if (t->dtype != dt)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input %zu has type %s, input 0 has %s", i,
                             ol_dtype_name(t->dtype), ol_dtype_name(dt));
    int64_t prev[OL_MAX_RANK];
    memcpy(prev, dims, sizeof prev);
    OL_TRY(ol_broadcast_shapes(node, rank, prev, t->rank, t->dims, &rank, dims));
  }
  bool narrow = is_narrow(dt);
  ol_dtype cdt = narrow ? OL_DTYPE_FLOAT : dt;
  bin_fn fn = ol_dtype_valid(dt) ? op->fns[cdt] : NULL;
  if (!fn) return ol_kernel_bad_dtype(node, "input", dt);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, dt, rank, dims, &y));
  int64_t n = ol_tcount(y);
  if (n == 0) return OL_OK;
  size_t esz = ol_dtype_size(cdt);
  char *acc = narrow ? ol_alloc(ctx->allocator, sizeof(float) * (size_t)n) : ol_tdata(y);
  if (!acc) return OL_OUT_OF_MEMORY;
  ew_shape sacc = {rank, dims};
  ol_status s = OL_OK;
  for (size_t i = 0; i < count && s == OL_OK; i++) {
    const ol_tensor *t = ol_ctx_input(ctx, i);
    ew_shape st = {t->rank, t->dims};
    float *wide = narrow ? widen(ctx->allocator, t) : NULL;
    const void *data = narrow ? (const void *)wide : ol_tdata(t);
    if (narrow && !wide) {
      s = OL_OUT_OF_MEMORY;
      break;
    }
    /* The first input is broadcast into acc as max(x, x), which is exact. */
    bin_fn f = i == 0 ? binary_ops[OP_MAX].fns[cdt] : fn;
    if (bin_apply(f, rank, dims, acc, esz, i == 0 ? data : acc, i == 0 ? st : sacc, data, st, esz))
      s = div_zero(node);
    ol_dealloc(ctx->allocator, wide);
  }
  if (s == OL_OK && op == &binary_ops[OP_MEAN]) {
    if (cdt == OL_DTYPE_FLOAT)
      for (int64_t i = 0; i < n; i++) ((float *)acc)[i] /= (float)count;
    else
      for (int64_t i = 0; i < n; i++) ((double *)acc)[i] /= (double)count;
  }
  if (narrow) {
    if (s == OL_OK) narrow_store(y, (const float *)acc);
    ol_dealloc(ctx->allocator, acc);
  }
  return s;
}

static ol_status variadic_create(const ol_node *node, ol_kernel **out) {
  int which = strcmp(node->op_type, "Max") == 0   ? OP_MAX
              : strcmp(node->op_type, "Min") == 0 ? OP_MIN
              : strcmp(node->op_type, "Sum") == 0 ? OP_SUM
                                                  : OP_MEAN;
  OL_TRY(ol_kernel_alloc(node, sizeof(binary_kernel), variadic_compute, out));
  ((binary_kernel *)*out)->op = &binary_ops[which];
  return OL_OK;
}

/* ------------------------------------------------------------ Where */

typedef struct where_state {
  size_t esize;
} where_state;

#define WHERE_LOOP(T)                                                                      \
  do {                                                                                     \
    T *o = (T *)out;                                                                       \
    const T *x = (const T *)in[1], *y = (const T *)in[2];                                  \
    for (int64_t i = 0; i < n; i++) o[i] = c[i * sc] ? x[i * sx] : y[i * sy];              \
  } while (0)

static int where_row(void *state, char *out, const char *const *in, const int64_t *inner, int64_t n) {
  const uint8_t *c = (const uint8_t *)in[0];
  int64_t sc = inner[0], sx = inner[1], sy = inner[2];
  switch (((where_state *)state)->esize) {
    case 1: WHERE_LOOP(uint8_t); break;
    case 2: WHERE_LOOP(uint16_t); break;
    case 4: WHERE_LOOP(uint32_t); break;
    case 8: WHERE_LOOP(uint64_t); break;
    default: { /* strings: duplicate the chosen element */
      ol_string *o = (ol_string *)out;
      const ol_string *x = (const ol_string *)in[1], *y = (const ol_string *)in[2];
      for (int64_t i = 0; i < n; i++) {
        const ol_string *src = c[i * sc] ? &x[i * sx] : &y[i * sy];
        o[i].data = ol_xmalloc(src->length + 1);
        if (!o[i].data) return 1;
        if (src->length) memcpy(o[i].data, src->data, src->length);
        o[i].data[src->length] = 0;
        o[i].length = src->length;
      }
    }
  }
  return 0;
}

static ol_status where_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_tensor *c, *x, *y;
  OL_TRY(ol_ctx_require(ctx, 0, &c));
  OL_TRY(ol_ctx_require(ctx, 1, &x));
  OL_TRY(ol_ctx_require(ctx, 2, &y));
  if (c->dtype != OL_DTYPE_BOOL) return ol_kernel_bad_dtype(ctx->node, "condition", c->dtype);
  if (x->dtype != y->dtype)
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "X is %s but Y is %s",
                           ol_dtype_name(x->dtype), ol_dtype_name(y->dtype));
  size_t esz = ol_dtype_size(x->dtype);
  if (!esz || !ol_dtype_valid(x->dtype)) return ol_kernel_bad_dtype(ctx->node, "X", x->dtype);
  int rank;
  int64_t dims[OL_MAX_RANK];
  OL_TRY(ol_broadcast_shapes(ctx->node, c->rank, c->dims, x->rank, x->dims, &rank, dims));
  int64_t cx[OL_MAX_RANK];
  memcpy(cx, dims, sizeof cx);
  OL_TRY(ol_broadcast_shapes(ctx->node, rank, cx, y->rank, y->dims, &rank, dims));
  ol_tensor *out;
  OL_TRY(ol_ctx_output_uninit(ctx, 0, x->dtype, rank, dims, &out)); /* ew_run writes every element */
  if (ol_tcount(out) == 0) return OL_OK;
  ew_iter it;
  ew_shape shapes[3] = {{c->rank, c->dims}, {x->rank, x->dims}, {y->rank, y->dims}};
  ew_iter_init(&it, rank, dims, 3, shapes);
  const char *in[3] = {ol_tdata(c), ol_tdata(x), ol_tdata(y)};
  size_t isize[3] = {1, esz, esz};
  where_state st = {x->dtype == OL_DTYPE_STRING ? 0 : esz};
  if (ew_run(&it, ol_tdata(out), esz, in, isize, where_row, &st)) return OL_OUT_OF_MEMORY;
  return OL_OK;
}

static ol_status where_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, where_compute, out);
}

/* ------------------------------------------------------------ registration */

#define FLOATS "float32 float64 float16 bfloat16"
#define INTS "int8 int16 int32 int64 uint8 uint16 uint32 uint64"
#define NUMERIC FLOATS " " INTS
#define U(op, since, dtypes) {"", op, since, OL_OPSET_LATEST, ol_ew_unary_create, ol_infer_like_input0, dtypes}
/* IsNaN, IsInf: BOOL results */
#define UB(op, since, dtypes) {"", op, since, OL_OPSET_LATEST, ol_ew_unary_create, ol_infer_to_bool, dtypes}
#define B(op, since, until, dtypes) {"", op, since, until, binary_create, ol_infer_broadcasting, dtypes}
#define B2(op, dtypes) B(op, 1, 6, dtypes), B(op, 7, OL_OPSET_LATEST, dtypes)

const ol_op_schema ol_schema_elementwise[] = {
    U("Abs", 1, NUMERIC), U("Neg", 1, FLOATS " int8 int16 int32 int64"),
    U("Sign", 9, NUMERIC), U("Relu", 1, FLOATS " int8 int16 int32 int64"),
    U("Exp", 1, FLOATS), U("Log", 1, FLOATS), U("Sqrt", 1, FLOATS),
    U("Reciprocal", 1, FLOATS), U("Tanh", 1, FLOATS), U("Sigmoid", 1, FLOATS),
    U("Cos", 7, FLOATS), U("Sin", 7, FLOATS), U("Tan", 7, FLOATS), U("Asin", 7, FLOATS),
    U("Acos", 7, FLOATS), U("Atan", 7, FLOATS), U("Sinh", 9, FLOATS), U("Cosh", 9, FLOATS),
    U("Asinh", 9, FLOATS), U("Acosh", 9, FLOATS), U("Atanh", 9, FLOATS), U("Erf", 9, FLOATS),
    U("Floor", 1, FLOATS), U("Ceil", 1, FLOATS), U("Round", 11, FLOATS),
    U("Softplus", 1, FLOATS), U("Softsign", 1, FLOATS), U("HardSigmoid", 1, FLOATS),
    U("HardSwish", 14, FLOATS), U("LeakyRelu", 1, FLOATS), U("Elu", 1, FLOATS),
    U("Selu", 1, FLOATS), U("Celu", 12, FLOATS), U("ThresholdedRelu", 10, FLOATS),
    U("Mish", 18, FLOATS), U("Gelu", 20, FLOATS),
    UB("IsNaN", 9, FLOATS " float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz"),
    UB("IsInf", 10, FLOATS " float8e4m3fn float8e4m3fnuz float8e5m2 float8e5m2fnuz"),
    U("Not", 1, "bool"), U("BitwiseNot", 18, INTS),
    {"", "Clip", 1, 10, ol_ew_clip_create, ol_infer_like_input0, "float32 float64 float16"},
    {"", "Clip", 11, OL_OPSET_LATEST, ol_ew_clip_create, ol_infer_like_input0, NUMERIC},
    B2("Add", NUMERIC), B2("Sub", NUMERIC), B2("Mul", NUMERIC), B2("Div", NUMERIC),
    B2("Pow", "base: float32 float64 float16 bfloat16 int32 int64; exponent: " NUMERIC),
    B("Mod", 10, OL_OPSET_LATEST, NUMERIC), B("PRelu", 1, OL_OPSET_LATEST, NUMERIC),
    B2("And", "bool"), B2("Or", "bool"), B2("Xor", "bool"),
    B2("Equal", "bool string " NUMERIC), B2("Less", NUMERIC), B2("Greater", NUMERIC),
    B("LessOrEqual", 12, OL_OPSET_LATEST, NUMERIC), B("GreaterOrEqual", 12, OL_OPSET_LATEST, NUMERIC),
    B("BitShift", 11, OL_OPSET_LATEST, "uint8 uint16 uint32 uint64"),
    B("BitwiseAnd", 18, OL_OPSET_LATEST, INTS), B("BitwiseOr", 18, OL_OPSET_LATEST, INTS),
    B("BitwiseXor", 18, OL_OPSET_LATEST, INTS),
    {"", "Max", 1, OL_OPSET_LATEST, variadic_create, ol_infer_broadcasting, NUMERIC},
    {"", "Min", 1, OL_OPSET_LATEST, variadic_create, ol_infer_broadcasting, NUMERIC},
    {"", "Sum", 1, OL_OPSET_LATEST, variadic_create, ol_infer_broadcasting, FLOATS},
    {"", "Mean", 1, OL_OPSET_LATEST, variadic_create, ol_infer_broadcasting, FLOATS},
    {"", "Where", 9, OL_OPSET_LATEST, where_create, ol_infer_where, "any fixed-size type, string"},
    {"", "Cast", 1, OL_OPSET_LATEST, ol_ew_cast_create, ol_infer_cast,
     "all numeric, bool, string, float16, bfloat16, float8*, float4e2m1, int4, uint4"},
    {"", "CastLike", 15, OL_OPSET_LATEST, ol_ew_castlike_create, ol_infer_cast_like,
     "all numeric, bool, string, float16, bfloat16, float8*, float4e2m1, int4, uint4"},
    {0},
};
