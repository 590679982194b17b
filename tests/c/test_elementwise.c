/* Elementwise kernels: broadcasting against a naive reference, every dtype
 * family, fp16/bf16 rounding, Cast special cases, and the error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "float_bits.h"
#include "harness.h"
#include "kernel_util.h"
#include "simd/math.h"

/* ------------------------------------------------------------ helpers */

/* Runs op with inputs (released here) and returns output 0 (or NULL). */
static ol_value *run(const char *op, int opset, ol_attr *attrs, size_t na, ol_value **in,
                     size_t nin, ol_status *status) {
  ol_value *out[2] = {NULL, NULL};
  ol_status s = tk_run(op, opset, attrs, na, in, nin, out, 1);
  for (size_t i = 0; i < nin; i++) ol_value_release(in[i]);
  if (status) *status = s;
  if (s != OL_OK) {
    ol_value_release(out[0]);
    return NULL;
  }
  return out[0];
}

static ol_value *run_ok(const char *op, int opset, ol_attr *attrs, size_t na, ol_value **in,
                        size_t nin) {
  ol_status s;
  ol_value *v = run(op, opset, attrs, na, in, nin, &s);
  CHECK_OK(s);
  return v;
}

static ol_status run_status(const char *op, int opset, ol_attr *attrs, size_t na, ol_value **in,
                            size_t nin) {
  ol_status s;
  ol_value_release(run(op, opset, attrs, na, in, nin, &s));
  return s;
}

static const void *data(const ol_value *v) { return ol_tdata(&v->tensor); }

static bool same_shape(const ol_value *v, int rank, const int64_t *dims) {
  return v && v->tensor.rank == rank &&
         (rank == 0 || !memcmp(v->tensor.dims, dims, sizeof(int64_t) * (size_t)rank));
}

static bool feq(double a, double b, double rel) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == b) return true;
  return fabs(a - b) <= rel * fmax(fabs(a), fabs(b));
}

static uint64_t rng = 88172645463325252ull;
static float frand(void) {
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  return (float)((double)(rng >> 11) * 0x1p-53 * 4.0 - 2.0);
}

/* ------------------------------------------------------------ broadcasting */

typedef struct bshape {
  int ra;
  int64_t a[4];
  int rb;
  int64_t b[4];
} bshape;

/* Element of a (rank ra) at output index idx (rank r), numpy broadcasting. */
static int64_t bindex(int r, const int64_t *out, const int64_t *idx, int ra, const int64_t *a) {
  int64_t off = 0;
  for (int d = 0; d < ra; d++) {
    int od = d + r - ra;
    off = off * a[d] + (a[d] == 1 ? 0 : idx[od]);
  }
  (void)out;
  return off;
}

static void test_broadcast_shapes(void) {
  static const bshape cases[] = {
      {2, {2, 3}, 2, {2, 3}},       {2, {2, 3}, 0, {0}},          {0, {0}, 2, {2, 3}},
      {2, {2, 3}, 1, {3}},          {2, {2, 3}, 2, {2, 1}},       {2, {3, 1}, 2, {1, 4}},
      {3, {2, 1, 3}, 2, {4, 1}},    {3, {2, 3, 4}, 3, {2, 1, 4}}, {3, {5, 1, 1}, 1, {7}},
      {4, {2, 3, 4, 5}, 2, {4, 5}}, {4, {1, 3, 1, 5}, 4, {2, 1, 4, 1}},
      {1, {1}, 3, {2, 2, 2}},       {2, {1, 1}, 2, {1, 1}},       {3, {2, 1, 4}, 3, {1, 1, 1}},
      {2, {17, 33}, 1, {33}},       {3, {3, 0, 2}, 1, {2}},
  };
  const char *ops[] = {"Add", "Sub", "Mul", "Div"};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    const bshape *s = &cases[c];
    int64_t na = ol_shape_count(s->ra, s->a), nb = ol_shape_count(s->rb, s->b);
    float *a = malloc(sizeof(float) * (size_t)(na + 1)), *b = malloc(sizeof(float) * (size_t)(nb + 1));
    for (int64_t i = 0; i < na; i++) a[i] = frand();
    for (int64_t i = 0; i < nb; i++) b[i] = frand() + 3.0f;
    int r = s->ra > s->rb ? s->ra : s->rb;
    int64_t od[4];
    for (int d = 0; d < r; d++) {
      int ia = d - (r - s->ra), ib = d - (r - s->rb);
      int64_t da = ia >= 0 ? s->a[ia] : 1, db = ib >= 0 ? s->b[ib] : 1;
      od[d] = da == 1 ? db : da;
    }
    for (int o = 0; o < 4; o++) {
      ol_value *in[2] = {tk_f32(s->ra, s->a, a), tk_f32(s->rb, s->b, b)};
      ol_value *y = run_ok(ops[o], 14, NULL, 0, in, 2);
      CHECK(same_shape(y, r, od));
      if (!y) continue;
      const float *yv = data(y);
      int64_t n = ol_shape_count(r, od), idx[4] = {0}, bad = 0;
      for (int64_t i = 0; i < n; i++) {
        float x = a[bindex(r, od, idx, s->ra, s->a)], z = b[bindex(r, od, idx, s->rb, s->b)];
        float want = o == 0 ? x + z : o == 1 ? x - z : o == 2 ? x * z : x / z;
        if (yv[i] != want) bad++;
        for (int d = r - 1; d >= 0; d--) {
          if (++idx[d] < od[d]) break;
          idx[d] = 0;
        }
      }
      if (bad) fprintf(stderr, "  %s case %zu: %lld wrong elements\n", ops[o], c, (long long)bad);
      CHECK(bad == 0);
      ol_value_release(y);
    }
    free(a);
    free(b);
  }
}

static void test_shape_mismatch(void) {
  int64_t d23[] = {2, 3}, d4[] = {4};
  float a[6] = {0}, b[4] = {0};
  ol_value *in[2] = {tk_f32(2, d23, a), tk_f32(1, d4, b)};
  CHECK_STATUS(run_status("Add", 14, NULL, 0, in, 2), OL_INVALID_ARGUMENT);
  ol_value *in2[2] = {tk_f32(2, d23, a), tk_i64(1, d4, (int64_t[]){1, 2, 3, 4})};
  CHECK_STATUS(run_status("Mul", 14, NULL, 0, in2, 2), OL_INVALID_ARGUMENT); /* type mismatch */
  ol_value *in3[1] = {tk_f32(2, d23, a)};
  CHECK_STATUS(run_status("Add", 14, NULL, 0, in3, 1), OL_INVALID_ARGUMENT); /* missing input */
}

static void test_legacy_broadcast(void) {
  int64_t d234[] = {2, 3, 4}, d3[] = {3};
  float a[24], b[3] = {10, 20, 30};
  for (int i = 0; i < 24; i++) a[i] = (float)i;
  ol_attr attrs[] = {tk_attr_int("broadcast", 1), tk_attr_int("axis", 1)};
  ol_value *in[2] = {tk_f32(3, d234, a), tk_f32(1, d3, b)};
  ol_value *y = run_ok("Add", 6, attrs, 2, in, 2);
  CHECK(same_shape(y, 3, d234));
  if (y) {
    const float *v = data(y);
    CHECK(v[0] == 10 && v[4] == 24 && v[8] == 38 && v[12] == 22 && v[23] == 53);
  }
  ol_value_release(y);
  ol_value *in2[2] = {tk_f32(3, d234, a), tk_f32(1, d3, b)};
  CHECK_STATUS(run_status("Add", 6, NULL, 0, in2, 2), OL_INVALID_ARGUMENT); /* broadcast=0 */
}

/* ------------------------------------------------------------ dtype families */

static void test_integer_arithmetic(void) {
  int64_t d4[] = {4};
  int8_t a8[] = {100, -128, 7, -7}, b8[] = {100, -1, 2, 2};
  ol_value *in[2] = {tk_tensor(OL_DTYPE_INT8, 1, d4, a8), tk_tensor(OL_DTYPE_INT8, 1, d4, b8)};
  ol_value *y = run_ok("Add", 14, NULL, 0, in, 2);
  if (y) CHECK(!memcmp(data(y), (int8_t[]){-56, 127, 9, -5}, 4)); /* wraps */
  ol_value_release(y);
  ol_value *in1[2] = {tk_tensor(OL_DTYPE_INT8, 1, d4, a8), tk_tensor(OL_DTYPE_INT8, 1, d4, b8)};
  y = run_ok("Div", 14, NULL, 0, in1, 2);
  if (y) CHECK(!memcmp(data(y), (int8_t[]){1, -128, 3, -3}, 4)); /* truncates, INT_MIN/-1 wraps */
  ol_value_release(y);

  int32_t a32[] = {7, -7, 7, -7}, b32[] = {3, 3, -3, -3};
  ol_value *in2[2] = {tk_tensor(OL_DTYPE_INT32, 1, d4, a32), tk_tensor(OL_DTYPE_INT32, 1, d4, b32)};
  y = run_ok("Mod", 13, NULL, 0, in2, 2);
  if (y) CHECK(!memcmp(data(y), (int32_t[]){1, 2, -2, -1}, 16)); /* sign of divisor */
  ol_value_release(y);
  ol_attr fm = tk_attr_int("fmod", 1);
  ol_value *in3[2] = {tk_tensor(OL_DTYPE_INT32, 1, d4, a32), tk_tensor(OL_DTYPE_INT32, 1, d4, b32)};
  y = run_ok("Mod", 13, &fm, 1, in3, 2);
  if (y) CHECK(!memcmp(data(y), (int32_t[]){1, -1, 1, -1}, 16)); /* sign of dividend */
  ol_value_release(y);

  uint16_t u1[] = {1, 65535, 300, 2}, u2[] = {2, 1, 300, 15};
  ol_value *in4[2] = {tk_tensor(OL_DTYPE_UINT16, 1, d4, u1), tk_tensor(OL_DTYPE_UINT16, 1, d4, u2)};
  y = run_ok("Sub", 14, NULL, 0, in4, 2);
  if (y) CHECK(!memcmp(data(y), (uint16_t[]){65535, 65534, 0, 65523}, 8));
  ol_value_release(y);
  ol_value *in5[2] = {tk_tensor(OL_DTYPE_UINT16, 1, d4, u1), tk_tensor(OL_DTYPE_UINT16, 1, d4, u2)};
  y = run_ok("Mul", 14, NULL, 0, in5, 2);
  if (y) CHECK(!memcmp(data(y), (uint16_t[]){2, 65535, (uint16_t)90000, 30}, 8));
  ol_value_release(y);
  ol_attr dir = tk_attr_string("direction", "LEFT");
  ol_value *in6[2] = {tk_tensor(OL_DTYPE_UINT16, 1, d4, u1), tk_tensor(OL_DTYPE_UINT16, 1, d4, u2)};
  y = run_ok("BitShift", 11, &dir, 1, in6, 2);
  if (y) CHECK(!memcmp(data(y), (uint16_t[]){4, 65534, 0, 0}, 8));
  ol_value_release(y);

  int64_t p1[] = {2, -3, 5, 1}, p2[] = {10, 3, 0, -2};
  ol_value *in7[2] = {tk_i64(1, d4, p1), tk_i64(1, d4, p2)};
  y = run_ok("Pow", 15, NULL, 0, in7, 2);
  if (y) CHECK(!memcmp(data(y), (int64_t[]){1024, -27, 1, 1}, 32));
  ol_value_release(y);
  ol_value *in8[2] = {tk_i64(1, d4, p1), tk_i64(1, d4, p2)};
  y = run_ok("BitwiseXor", 18, NULL, 0, in8, 2);
  if (y) CHECK(!memcmp(data(y), (int64_t[]){8, -2, 5, -1}, 32));
  ol_value_release(y);
  ol_value *in9[1] = {tk_i64(1, d4, p1)};
  y = run_ok("Abs", 13, NULL, 0, in9, 1);
  if (y) CHECK(!memcmp(data(y), (int64_t[]){2, 3, 5, 1}, 32));
  ol_value_release(y);
}

static void test_division_by_zero(void) {
  int64_t d3[] = {3};
  const char *ops[] = {"Div", "Mod"};
  for (int o = 0; o < 2; o++) {
    ol_value *in[2] = {tk_i64(1, d3, (int64_t[]){1, 2, 3}), tk_i64(1, d3, (int64_t[]){1, 0, 1})};
    CHECK_STATUS(run_status(ops[o], 13, NULL, 0, in, 2), OL_INVALID_ARGUMENT);
    uint8_t a[] = {1, 2, 3}, b[] = {0};
    ol_value *in2[2] = {tk_tensor(OL_DTYPE_UINT8, 1, d3, a), tk_tensor(OL_DTYPE_UINT8, 0, NULL, b)};
    CHECK_STATUS(run_status(ops[o], 14, NULL, 0, in2, 2), OL_INVALID_ARGUMENT);
  }
  /* Float division by zero is IEEE: inf, not an error. */
  ol_value *in[2] = {tk_f32(1, d3, (float[]){1, -1, 0}), tk_f32(0, NULL, (float[]){0})};
  ol_value *y = run_ok("Div", 14, NULL, 0, in, 2);
  if (y) {
    const float *v = data(y);
    CHECK(isinf(v[0]) && v[0] > 0 && isinf(v[1]) && v[1] < 0 && isnan(v[2]));
  }
  ol_value_release(y);
}

static void test_bad_dtype(void) {
  int64_t d2[] = {2};
  ol_value *in[1] = {tk_i64(1, d2, (int64_t[]){1, 2})};
  CHECK_STATUS(run_status("Exp", 13, NULL, 0, in, 1), OL_NOT_IMPLEMENTED);
  ol_value *in2[2] = {tk_f32(1, d2, (float[]){1, 2}), tk_f32(1, d2, (float[]){1, 2})};
  CHECK_STATUS(run_status("And", 7, NULL, 0, in2, 2), OL_NOT_IMPLEMENTED);
  ol_value *in3[2] = {tk_tensor(OL_DTYPE_INT32, 1, d2, (int32_t[]){1, 2}),
                      tk_tensor(OL_DTYPE_INT32, 1, d2, (int32_t[]){1, 2})};
  ol_attr dir = tk_attr_string("direction", "RIGHT");
  CHECK_STATUS(run_status("BitShift", 11, &dir, 1, in3, 2), OL_NOT_IMPLEMENTED);
  ol_value *in4[1] = {tk_tensor(OL_DTYPE_BOOL, 1, d2, (uint8_t[]){1, 0})};
  CHECK_STATUS(run_status("Sigmoid", 13, NULL, 0, in4, 1), OL_NOT_IMPLEMENTED);
  ol_value *in5[1] = {tk_f32(1, d2, (float[]){1, 2})};
  CHECK_STATUS(run_status("Exp", 0, NULL, 0, in5, 1), OL_NOT_IMPLEMENTED); /* no opset 0 */
}

static void test_logic_and_compare(void) {
  int64_t d4[] = {4}, d1[] = {1};
  uint8_t p[] = {0, 0, 1, 1}, q[] = {0, 1, 0, 1};
  const char *ops[] = {"And", "Or", "Xor"};
  const uint8_t want[3][4] = {{0, 0, 0, 1}, {0, 1, 1, 1}, {0, 1, 1, 0}};
  for (int o = 0; o < 3; o++) {
    ol_value *in[2] = {tk_tensor(OL_DTYPE_BOOL, 1, d4, p), tk_tensor(OL_DTYPE_BOOL, 1, d4, q)};
    ol_value *y = run_ok(ops[o], 7, NULL, 0, in, 2);
    if (y) CHECK(y->tensor.dtype == OL_DTYPE_BOOL && !memcmp(data(y), want[o], 4));
    ol_value_release(y);
  }
  ol_value *in[1] = {tk_tensor(OL_DTYPE_BOOL, 1, d4, p)};
  ol_value *y = run_ok("Not", 1, NULL, 0, in, 1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 1, 0, 0}, 4));
  ol_value_release(y);

  float a[] = {1, NAN, 3, -0.0f}, b[] = {2};
  const char *cmp[] = {"Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Equal"};
  const uint8_t cw[5][4] = {{1, 0, 0, 1}, {1, 0, 0, 1}, {0, 0, 1, 0}, {0, 0, 1, 0}, {0, 0, 0, 0}};
  for (int o = 0; o < 5; o++) {
    ol_value *in2[2] = {tk_f32(1, d4, a), tk_f32(1, d1, b)};
    y = run_ok(cmp[o], 16, NULL, 0, in2, 2);
    if (y) CHECK(y->tensor.dtype == OL_DTYPE_BOOL && !memcmp(data(y), cw[o], 4));
    ol_value_release(y);
  }
  double da[] = {0.0, 1.5}, db[] = {-0.0, 1.5};
  ol_value *in3[2] = {tk_tensor(OL_DTYPE_DOUBLE, 1, (int64_t[]){2}, da),
                      tk_tensor(OL_DTYPE_DOUBLE, 1, (int64_t[]){2}, db)};
  y = run_ok("Equal", 13, NULL, 0, in3, 2);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 1}, 2));
  ol_value_release(y);

  /* Equal on strings (opset 19) */
  int64_t d2[] = {2};
  ol_value *s1 = tk_tensor(OL_DTYPE_STRING, 1, d2, NULL), *s2 = tk_tensor(OL_DTYPE_STRING, 1, d2, NULL);
  ol_tensor_set_string(s1, 0, "abc", 3);
  ol_tensor_set_string(s1, 1, "x", 1);
  ol_tensor_set_string(s2, 0, "abc", 3);
  ol_tensor_set_string(s2, 1, "y", 1);
  ol_value *in4[2] = {s1, s2};
  y = run_ok("Equal", 19, NULL, 0, in4, 2);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 0}, 2));
  ol_value_release(y);
}

/* ------------------------------------------------------------ float16 / bfloat16 */

static void test_half_precision(void) {
  int64_t d3[] = {3};
  /* 1 + 2^-11 is halfway between two halves: ties to even gives 1.0; 1 + 3*2^-11 rounds up. */
  uint16_t ha[] = {ol_f32_to_f16(1.0f), ol_f32_to_f16(1.0f), ol_f32_to_f16(65504.0f)};
  uint16_t hb[] = {ol_f32_to_f16(0x1p-11f), ol_f32_to_f16(3 * 0x1p-11f), ol_f32_to_f16(32.0f)};
  ol_value *in[2] = {tk_tensor(OL_DTYPE_FLOAT16, 1, d3, ha), tk_tensor(OL_DTYPE_FLOAT16, 1, d3, hb)};
  ol_value *y = run_ok("Add", 14, NULL, 0, in, 2);
  if (y) {
    const uint16_t *v = data(y);
    CHECK(y->tensor.dtype == OL_DTYPE_FLOAT16);
    CHECK(ol_f16_to_f32(v[0]) == 1.0f);
    CHECK(ol_f16_to_f32(v[1]) == 1.0f + 0x1p-9f);
    CHECK(isinf(ol_f16_to_f32(v[2]))); /* 65536 overflows half */
  }
  ol_value_release(y);
  /* bfloat16: 1 + 2^-8 ties to even (1.0); 1 + 3*2^-8 rounds up to 1 + 2^-6 */
  uint16_t ba[] = {ol_f32_to_bf16(1.0f), ol_f32_to_bf16(1.0f), ol_f32_to_bf16(-2.0f)};
  uint16_t bb[] = {ol_f32_to_bf16(0x1p-8f), ol_f32_to_bf16(3 * 0x1p-8f), ol_f32_to_bf16(0.5f)};
  ol_value *in2[2] = {tk_tensor(OL_DTYPE_BFLOAT16, 1, d3, ba), tk_tensor(OL_DTYPE_BFLOAT16, 1, d3, bb)};
  y = run_ok("Add", 14, NULL, 0, in2, 2);
  if (y) {
    const uint16_t *v = data(y);
    CHECK(ol_bf16_to_f32(v[0]) == 1.0f && ol_bf16_to_f32(v[1]) == 1.0f + 0x1p-6f &&
          ol_bf16_to_f32(v[2]) == -1.5f);
  }
  ol_value_release(y);
  /* unary through float32: Exp(1) rounded to half */
  uint16_t h1[] = {ol_f32_to_f16(1.0f), ol_f32_to_f16(-1.0f), ol_f32_to_f16(0.0f)};
  ol_value *in3[1] = {tk_tensor(OL_DTYPE_FLOAT16, 1, d3, h1)};
  y = run_ok("Exp", 13, NULL, 0, in3, 1);
  if (y) {
    const uint16_t *v = data(y);
    CHECK(v[0] == ol_f32_to_f16(2.718281828f) && v[1] == ol_f32_to_f16(0.3678794412f) &&
          ol_f16_to_f32(v[2]) == 1.0f);
  }
  ol_value_release(y);
  /* comparisons on halves give bool; variadic Max on halves */
  ol_value *in4[2] = {tk_tensor(OL_DTYPE_FLOAT16, 1, d3, ha), tk_tensor(OL_DTYPE_FLOAT16, 1, d3, hb)};
  y = run_ok("Greater", 13, NULL, 0, in4, 2);
  if (y) CHECK(y->tensor.dtype == OL_DTYPE_BOOL && !memcmp(data(y), (uint8_t[]){1, 1, 1}, 3));
  ol_value_release(y);
  ol_value *in5[2] = {tk_tensor(OL_DTYPE_FLOAT16, 1, d3, ha), tk_tensor(OL_DTYPE_FLOAT16, 1, d3, hb)};
  y = run_ok("Max", 13, NULL, 0, in5, 2);
  if (y) CHECK(!memcmp(data(y), ha, 6));
  ol_value_release(y);
}

/* ------------------------------------------------------------ unary ops */

typedef struct uref {
  const char *op;
  int opset;
  double (*ref)(double);
} uref;

static double r_sigmoid(double x) { return 1 / (1 + exp(-x)); }
static double r_relu(double x) { return x > 0 ? x : 0; }
static double r_recip(double x) { return 1 / x; }
static double r_neg(double x) { return -x; }
static double r_sign(double x) { return x > 0 ? 1 : x < 0 ? -1 : 0; }
static double r_softplus(double x) { return log1p(exp(x)); }
static double r_softsign(double x) { return x / (1 + fabs(x)); }
static double r_hardsigmoid(double x) { return fmax(0, fmin(1, (double)0.2f * x + 0.5)); }
static double r_hardswish(double x) { return x * fmax(0, fmin(1, x / 6 + 0.5)); }
static double r_leaky(double x) { return x < 0 ? (double)0.01f * x : x; }
static double r_elu(double x) { return x < 0 ? expm1(x) : x; }
static double r_selu(double x) {
  /* the attribute defaults are float32 values */
  return 1.05070102214813232421875 * (x > 0 ? x : 1.67326319217681884765625 * expm1(x));
}
static double r_celu(double x) { return x > 0 ? x : expm1(x); }
static double r_threlu(double x) { return x > 1 ? x : 0; }
static double r_mish(double x) { return x * tanh(log1p(exp(x))); }
static double r_gelu(double x) { return 0.5 * x * erfc(-x / sqrt(2.0)); }
static double r_round(double x) { return rint(x); }

static void test_unary_float(void) {
  const uref ops[] = {
      {"Abs", 13, fabs},       {"Neg", 13, r_neg},         {"Exp", 13, exp},
      {"Log", 13, log},        {"Sqrt", 13, sqrt},         {"Reciprocal", 13, r_recip},
      {"Tanh", 13, tanh},      {"Sigmoid", 13, r_sigmoid}, {"Relu", 14, r_relu},
      {"Cos", 7, cos},         {"Sin", 7, sin},            {"Tan", 7, tan},
      {"Asin", 7, asin},       {"Acos", 7, acos},          {"Atan", 7, atan},
      {"Sinh", 9, sinh},       {"Cosh", 9, cosh},          {"Asinh", 9, asinh},
      {"Acosh", 9, acosh},     {"Atanh", 9, atanh},        {"Erf", 13, erf},
      {"Floor", 13, floor},    {"Ceil", 13, ceil},         {"Round", 11, r_round},
      {"Sign", 13, r_sign},    {"Softplus", 1, r_softplus}, {"Softsign", 1, r_softsign},
      {"HardSigmoid", 6, r_hardsigmoid}, {"HardSwish", 14, r_hardswish},
      {"LeakyRelu", 16, r_leaky}, {"Elu", 6, r_elu},       {"Selu", 6, r_selu},
      {"Celu", 12, r_celu},    {"ThresholdedRelu", 10, r_threlu}, {"Mish", 18, r_mish},
      {"Gelu", 20, r_gelu},
  };
  enum { N = 64 };
  float x[N];
  for (int i = 0; i < N; i++) x[i] = (float)(-4.0 + 8.0 * i / (N - 1));
  x[0] = 0.5f, x[1] = -0.5f, x[2] = 2.5f, x[3] = -1.5f, x[4] = 0.0f, x[5] = 3.0f, x[6] = 1.2f;
  int64_t dn[] = {N};
  for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++) {
    for (int dt = 0; dt < 2; dt++) {
      ol_value *in[1];
      double xd[N];
      for (int i = 0; i < N; i++) xd[i] = x[i];
      in[0] = dt == 0 ? tk_f32(1, dn, x) : tk_tensor(OL_DTYPE_DOUBLE, 1, dn, xd);
      ol_value *y = run_ok(ops[o].op, ops[o].opset, NULL, 0, in, 1);
      if (!y) continue;
      int bad = 0;
      for (int i = 0; i < N; i++) {
        double want = ops[o].ref(x[i]);
        double got = dt == 0 ? ((const float *)data(y))[i] : ((const double *)data(y))[i];
        /* float: a few ulp, or absolute 1e-7 where the formula itself cancels in
         * float arithmetic (HardSigmoid, HardSwish near their kinks) */
        double tol = dt == 0 ? 4e-7 : 1e-14, abs_tol = dt == 0 ? 1e-7 : 1e-300;
        if (!feq(got, want, tol) && fabs(got - want) > abs_tol) {
          if (!bad) fprintf(stderr, "  %s(%s)(%g) = %.17g, want %.17g\n", ops[o].op,
                            dt ? "double" : "float", x[i], got, want);
          bad++;
        }
      }
      CHECK(bad == 0);
      ol_value_release(y);
    }
  }
}

static void test_unary_attributes(void) {
  int64_t d4[] = {4};
  float x[] = {-INFINITY, INFINITY, NAN, 1.0f};
  ol_attr neg_only[] = {tk_attr_int("detect_positive", 0)};
  ol_value *in[1] = {tk_f32(1, d4, x)};
  ol_value *y = run_ok("IsInf", 10, neg_only, 1, in, 1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 0, 0, 0}, 4));
  ol_value_release(y);
  ol_value *in2[1] = {tk_f32(1, d4, x)};
  y = run_ok("IsNaN", 13, NULL, 0, in2, 1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){0, 0, 1, 0}, 4));
  ol_value_release(y);
  /* IsNaN on float8e4m3fn (opset 20): 0x7F is NaN */
  ol_value *in3[1] = {tk_tensor(OL_DTYPE_FLOAT8E4M3FN, 1, d4, (uint8_t[]){0x7F, 0xFF, 0x38, 0x7E})};
  y = run_ok("IsNaN", 20, NULL, 0, in3, 1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 1, 0, 0}, 4));
  ol_value_release(y);

  float g[] = {-1.0f, 0.5f, 2.0f, -3.0f};
  ol_attr tanh_attr = tk_attr_string("approximate", "tanh");
  ol_value *in4[1] = {tk_f32(1, d4, g)};
  y = run_ok("Gelu", 20, &tanh_attr, 1, in4, 1);
  if (y)
    for (int i = 0; i < 4; i++) {
      double v = g[i], want = 0.5 * v * (1 + tanh(sqrt(2 / 3.14159265358979323846) * (v + 0.044715 * v * v * v)));
      CHECK(feq(((const float *)data(y))[i], want, 1e-6));
    }
  ol_value_release(y);
  ol_attr alpha = tk_attr_float("alpha", 0.5f);
  ol_value *in5[1] = {tk_f32(1, d4, g)};
  y = run_ok("LeakyRelu", 16, &alpha, 1, in5, 1);
  if (y) CHECK(!memcmp(data(y), (float[]){-0.5f, 0.5f, 2.0f, -1.5f}, 16));
  ol_value_release(y);
  /* Round: half to even */
  float r[] = {0.5f, 1.5f, 2.5f, -2.5f};
  ol_value *in6[1] = {tk_f32(1, d4, r)};
  y = run_ok("Round", 11, NULL, 0, in6, 1);
  if (y) CHECK(!memcmp(data(y), (float[]){0, 2, 2, -2}, 16));
  ol_value_release(y);
  int32_t si[] = {-5, 0, 7, INT32_MIN};
  ol_value *in7[1] = {tk_tensor(OL_DTYPE_INT32, 1, d4, si)};
  y = run_ok("Sign", 13, NULL, 0, in7, 1);
  if (y) CHECK(!memcmp(data(y), (int32_t[]){-1, 0, 1, -1}, 16));
  ol_value_release(y);
  ol_value *in8[1] = {tk_tensor(OL_DTYPE_INT32, 1, d4, si)};
  y = run_ok("Relu", 14, NULL, 0, in8, 1);
  if (y) CHECK(!memcmp(data(y), (int32_t[]){0, 0, 7, 0}, 16));
  ol_value_release(y);
  ol_value *in9[1] = {tk_tensor(OL_DTYPE_UINT8, 1, d4, (uint8_t[]){0, 1, 0xF0, 0xFF})};
  y = run_ok("BitwiseNot", 18, NULL, 0, in9, 1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){0xFF, 0xFE, 0x0F, 0}, 4));
  ol_value_release(y);
}

static void test_clip(void) {
  int64_t d5[] = {5};
  float x[] = {-3, -1, 0, 2, NAN};
  ol_attr attrs[] = {tk_attr_float("min", -1.5f), tk_attr_float("max", 1.0f)};
  ol_value *in[1] = {tk_f32(1, d5, x)};
  ol_value *y = run_ok("Clip", 6, attrs, 2, in, 1);
  if (y) {
    const float *v = data(y);
    CHECK(v[0] == -1.5f && v[1] == -1 && v[2] == 0 && v[3] == 1 && isnan(v[4]));
  }
  ol_value_release(y);
  /* opset 13: optional inputs, only max given */
  ol_value *in2[3] = {tk_f32(1, d5, x), NULL, tk_f32(0, NULL, (float[]){0.5f})};
  y = run_ok("Clip", 13, NULL, 0, in2, 3);
  if (y) CHECK(((const float *)data(y))[0] == -3 && ((const float *)data(y))[3] == 0.5f);
  ol_value_release(y);
  /* min > max gives max */
  ol_value *in3[3] = {tk_f32(1, d5, x), tk_f32(0, NULL, (float[]){2}), tk_f32(0, NULL, (float[]){1})};
  y = run_ok("Clip", 13, NULL, 0, in3, 3);
  if (y) CHECK(((const float *)data(y))[0] == 1 && ((const float *)data(y))[3] == 1);
  ol_value_release(y);
  int8_t xi[] = {-128, -5, 0, 5, 127};
  ol_value *in4[3] = {tk_tensor(OL_DTYPE_INT8, 1, d5, xi), tk_tensor(OL_DTYPE_INT8, 0, NULL, (int8_t[]){-4}),
                      NULL};
  y = run_ok("Clip", 13, NULL, 0, in4, 3);
  if (y) CHECK(!memcmp(data(y), (int8_t[]){-4, -4, 0, 5, 127}, 5));
  ol_value_release(y);
  ol_value *in5[3] = {tk_f32(1, d5, x), tk_f32(1, (int64_t[]){2}, (float[]){0, 1}), NULL};
  CHECK_STATUS(run_status("Clip", 13, NULL, 0, in5, 3), OL_INVALID_ARGUMENT); /* not a scalar */
}

/* ------------------------------------------------------------ Pow, PRelu, variadic, Where */

static void test_pow(void) {
  int64_t d4[] = {4};
  float b[] = {2, -2, 4, 0};
  ol_value *in[2] = {tk_f32(1, d4, b), tk_i64(1, d4, (int64_t[]){3, 3, -1, 2})};
  ol_value *y = run_ok("Pow", 15, NULL, 0, in, 2);
  if (y) CHECK(!memcmp(data(y), (float[]){8, -8, 0.25f, 0}, 16));
  ol_value_release(y);
  ol_value *in2[2] = {tk_tensor(OL_DTYPE_INT32, 1, d4, (int32_t[]){4, 9, 2, -8}),
                      tk_f32(1, d4, (float[]){0.5f, 0.5f, 3.0f, 1.0f})};
  y = run_ok("Pow", 15, NULL, 0, in2, 2);
  if (y) CHECK(y->tensor.dtype == OL_DTYPE_INT32 && !memcmp(data(y), (int32_t[]){2, 3, 8, -8}, 16));
  ol_value_release(y);
  ol_value *in3[2] = {tk_f32(1, d4, b), tk_f32(0, NULL, (float[]){2.0f})};
  y = run_ok("Pow", 15, NULL, 0, in3, 2);
  if (y) CHECK(!memcmp(data(y), (float[]){4, 4, 16, 0}, 16));
  ol_value_release(y);
  ol_value *in4[2] = {tk_tensor(OL_DTYPE_INT32, 1, d4, (int32_t[]){4, 9, 0, -8}),
                      tk_i64(1, d4, (int64_t[]){1, 1, -1, 1})};
  CHECK_STATUS(run_status("Pow", 15, NULL, 0, in4, 2), OL_INVALID_ARGUMENT); /* 0^-1 */
}


/* Pow(x, 2) with a scalar exponent takes a float shortcut (1.0: the general path):
 * same bits as the general path (ol_powf) on special values, subnormals,
 * overflow, exact-midpoint squares and random bit patterns. */
static void test_pow_scalar_exponent_shortcuts(void) {
  enum { N = 1 << 16 };
  float *x = malloc(sizeof(float) * N);
  const uint32_t special[] = {
      0x7FC00000u, 0xFFC00000u, 0x7FC12345u, 0x7F800000u, 0xFF800000u, 0x00000000u, 0x80000000u,
      0x00000001u, 0x80000001u, 0x007FFFFFu, 0x00800000u, 0x1F800000u, 0x1F7FFFFFu, 0x7F7FFFFFu,
      0xFF7FFFFFu, 0x5F800000u, 0x5F7FFFFFu, 0xDF800000u, 0x3F800000u, 0xBF800000u, 0x3F800800u,
      0x3F801000u, 0xBF800800u, 0x40000000u, 0x3F000000u, 0x1A000000u, 0x19FFFFFFu};
  size_t ns = sizeof special / sizeof special[0];
  uint64_t state = 0x9E3779B97F4A7C15ull;
  for (int i = 0; i < N; i++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = i < (int)ns ? bitsf(special[i]) : bitsf((uint32_t)(state >> 32));
  }
  /* squares that fall exactly halfway between two floats: 1 + k 2^-12 */
  for (int k = 0; k < 256; k++) x[ns + (size_t)k] = 1.0f + (float)(2 * k + 1) * 0x1p-12f;
  int64_t dn[1] = {N};
  const float exps[] = {2.0f, 1.0f};
  for (int e = 0; e < 2; e++) {
    ol_value *in[2] = {tk_f32(1, dn, x), tk_f32(0, NULL, &exps[e])};
    ol_value *y = run_ok("Pow", 15, NULL, 0, in, 2);
    int wrong = 0;
    if (y) {
      const float *o = data(y);
      for (int i = 0; i < N; i++) {
        int bad = fbits(o[i]) != fbits(ol_powf(x[i], exps[e]));
        if (bad && wrong < 5) fprintf(stderr, "pow %08x ^ %g: %08x vs %08x\n", fbits(x[i]), exps[e], fbits(o[i]), fbits(ol_powf(x[i], exps[e])));
        wrong += bad;
      }
    }
    CHECK(y && wrong == 0);
    ol_value_release(y);
  }
  /* exponent 2 as a [1] tensor broadcast too, and a non-shortcut exponent */
  int64_t d1[1] = {1};
  ol_value *in[2] = {tk_f32(1, dn, x), tk_f32(1, d1, (float[]){2.0f})};
  ol_value *y = run_ok("Pow", 15, NULL, 0, in, 2);
  CHECK(y && fbits(((const float *)data(y))[ns]) == fbits(x[ns] * x[ns]));
  ol_value_release(y);
  ol_value *in3[2] = {tk_f32(1, dn, x), tk_f32(0, NULL, (float[]){3.0f})};
  y = run_ok("Pow", 15, NULL, 0, in3, 2);
  CHECK(y && fbits(((const float *)data(y))[1000]) == fbits(ol_powf(x[1000], 3.0f)));
  ol_value_release(y);
  free(x);
}

/* Exp, Sigmoid and Softmax on float32 evaluate exp four lanes at a time
 * (ol_expf_n): same bits as the scalar formulas with ol_expf. */
static void test_vector_exp_users_match_scalar(void) {
  enum { N = 4099 };
  float *x = malloc(sizeof(float) * N);
  const float special[] = {NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-149f, -0x1p-149f, 89.0f, 89.5f,
                           -104.0f, -104.5f, 3.4e38f, -3.4e38f, 1e-20f, -1e-20f};
  size_t ns = sizeof special / sizeof special[0];
  for (int i = 0; i < N; i++) x[i] = i < (int)ns ? special[i] : frand() * (i % 3 == 0 ? 60.0f : 8.0f);
  int64_t dn[1] = {N};
  int bad = 0;
  ol_value *in1[1] = {tk_f32(1, dn, x)};
  ol_value *y = run_ok("Exp", 13, NULL, 0, in1, 1);
  if (y)
    for (int i = 0; i < N; i++) bad += fbits(((const float *)data(y))[i]) != fbits(ol_expf(x[i]));
  CHECK(y && bad == 0);
  ol_value_release(y);
  ol_value *in2[1] = {tk_f32(1, dn, x)};
  y = run_ok("Sigmoid", 13, NULL, 0, in2, 1);
  bad = 0;
  if (y)
    for (int i = 0; i < N; i++) {
      double e = ol_expf(-fabsf(x[i])), r = 1.0 / (1.0 + e);
      bad += fbits(((const float *)data(y))[i]) != fbits((float)(x[i] >= 0 ? r : e * r));
    }
  CHECK(y && bad == 0);
  ol_value_release(y);
  /* Softmax / LogSoftmax over rows of 131 (finite values) */
  int64_t d2[2] = {3, 131};
  for (int lg = 0; lg < 2; lg++) {
    ol_value *in3[1] = {tk_f32(2, d2, x + ns)};
    y = run_ok(lg ? "LogSoftmax" : "Softmax", 13, NULL, 0, in3, 1);
    bad = 0;
    for (int r = 0; r < 3 && y; r++) {
      const float *row = x + ns + 131 * r;
      float m = row[0];
      for (int i = 1; i < 131; i++) m = row[i] > m ? row[i] : m;
      double sum = 0;
      for (int i = 0; i < 131; i++) sum += ol_expf(row[i] - m);
      double ls = ol_log(sum);
      for (int i = 0; i < 131; i++) {
        float want = lg ? (float)((double)(row[i] - m) - ls) : (float)(ol_expf(row[i] - m) / sum);
        bad += fbits(((const float *)data(y))[131 * r + i]) != fbits(want);
      }
    }
    CHECK(y && bad == 0);
    ol_value_release(y);
  }
  free(x);
}

static void test_prelu(void) {
  int64_t d23[] = {2, 3}, d3[] = {3};
  float x[] = {-1, 2, -3, 4, -5, 6}, s[] = {0.1f, 0.2f, 0.3f};
  ol_value *in[2] = {tk_f32(2, d23, x), tk_f32(1, d3, s)};
  ol_value *y = run_ok("PRelu", 16, NULL, 0, in, 2);
  if (y) CHECK(!memcmp(data(y), (float[]){-0.1f, 2, -3 * 0.3f, 4, -5 * 0.2f, 6}, 24));
  ol_value_release(y);
  /* opset 6: a 1-D slope of length C applies per channel of [N, C, W] */
  int64_t d132[] = {1, 3, 2};
  ol_value *in2[2] = {tk_f32(3, d132, x), tk_f32(1, d3, s)};
  y = run_ok("PRelu", 6, NULL, 0, in2, 2);
  CHECK(same_shape(y, 3, d132));
  if (y) CHECK(!memcmp(data(y), (float[]){-0.1f, 2, -3 * 0.2f, 4, -5 * 0.3f, 6}, 24));
  ol_value_release(y);
}

static void test_variadic(void) {
  int64_t d23[] = {2, 3}, d3[] = {3}, d21[] = {2, 1};
  float a[] = {1, 5, 3, 4, 2, 6}, b[] = {2, 2, 2}, c[] = {0, 10};
  ol_value *in[3] = {tk_f32(2, d23, a), tk_f32(1, d3, b), tk_f32(2, d21, c)};
  ol_value *y = run_ok("Max", 13, NULL, 0, in, 3);
  CHECK(same_shape(y, 2, d23));
  if (y) CHECK(!memcmp(data(y), (float[]){2, 5, 3, 10, 10, 10}, 24));
  ol_value_release(y);
  ol_value *in2[3] = {tk_f32(1, d3, b), tk_f32(2, d23, a), tk_f32(2, d21, c)};
  y = run_ok("Sum", 13, NULL, 0, in2, 3);
  CHECK(same_shape(y, 2, d23));
  if (y) CHECK(!memcmp(data(y), (float[]){3, 7, 5, 16, 14, 18}, 24));
  ol_value_release(y);
  ol_value *in3[2] = {tk_f32(2, d23, a), tk_f32(1, d3, b)};
  y = run_ok("Mean", 13, NULL, 0, in3, 2);
  if (y) CHECK(!memcmp(data(y), (float[]){1.5f, 3.5f, 2.5f, 3, 2, 4}, 24));
  ol_value_release(y);
  ol_value *in4[1] = {tk_f32(2, d23, a)};
  y = run_ok("Min", 13, NULL, 0, in4, 1);
  if (y) CHECK(!memcmp(data(y), a, 24));
  ol_value_release(y);
  int64_t ia[] = {INT64_MIN, 5}, ib[] = {3, INT64_MAX};
  ol_value *in5[2] = {tk_i64(1, (int64_t[]){2}, ia), tk_i64(1, (int64_t[]){2}, ib)};
  y = run_ok("Min", 13, NULL, 0, in5, 2);
  if (y) CHECK(!memcmp(data(y), (int64_t[]){INT64_MIN, 5}, 16));
  ol_value_release(y);
  float n1[] = {NAN, 1}, n2[] = {1, NAN};
  ol_value *in6[2] = {tk_f32(1, (int64_t[]){2}, n1), tk_f32(1, (int64_t[]){2}, n2)};
  y = run_ok("Max", 13, NULL, 0, in6, 2);
  if (y) CHECK(isnan(((const float *)data(y))[0]) && isnan(((const float *)data(y))[1]));
  ol_value_release(y);
}

static void test_where(void) {
  int64_t d23[] = {2, 3}, d3[] = {3}, d21[] = {2, 1};
  uint8_t c[] = {1, 0, 1};
  float x[] = {1, 2, 3, 4, 5, 6}, yv[] = {-1, -2};
  ol_value *in[3] = {tk_tensor(OL_DTYPE_BOOL, 1, d3, c), tk_f32(2, d23, x), tk_f32(2, d21, yv)};
  ol_value *y = run_ok("Where", 16, NULL, 0, in, 3);
  CHECK(same_shape(y, 2, d23));
  if (y) CHECK(!memcmp(data(y), (float[]){1, -1, 3, 4, -2, 6}, 24));
  ol_value_release(y);
  int64_t i64x[] = {7, 8, 9};
  ol_value *in2[3] = {tk_tensor(OL_DTYPE_BOOL, 1, d3, c), tk_i64(1, d3, i64x), tk_i64(0, NULL, (int64_t[]){0})};
  y = run_ok("Where", 16, NULL, 0, in2, 3);
  if (y) CHECK(!memcmp(data(y), (int64_t[]){7, 0, 9}, 24));
  ol_value_release(y);
  ol_value *sx = tk_tensor(OL_DTYPE_STRING, 1, d3, NULL), *sy = tk_tensor(OL_DTYPE_STRING, 0, NULL, NULL);
  ol_tensor_set_string(sx, 0, "a", 1);
  ol_tensor_set_string(sx, 1, "b", 1);
  ol_tensor_set_string(sx, 2, "c", 1);
  ol_tensor_set_string(sy, 0, "no", 2);
  ol_value *in3[3] = {tk_tensor(OL_DTYPE_BOOL, 1, d3, c), sx, sy};
  y = run_ok("Where", 16, NULL, 0, in3, 3);
  if (y) {
    const char *s;
    size_t n;
    CHECK_OK(ol_tensor_get_string(y, 1, &s, &n));
    CHECK(n == 2 && !memcmp(s, "no", 2));
    CHECK_OK(ol_tensor_get_string(y, 2, &s, &n));
    CHECK(n == 1 && s[0] == 'c');
  }
  ol_value_release(y);
  ol_value *in4[3] = {tk_f32(1, d3, x), tk_f32(1, d3, x), tk_f32(1, d3, x)};
  CHECK_STATUS(run_status("Where", 16, NULL, 0, in4, 3), OL_NOT_IMPLEMENTED); /* float condition */
}

/* ------------------------------------------------------------ Cast */

static ol_value *cast(ol_value *x, ol_dtype to, int opset, int saturate) {
  ol_attr attrs[] = {tk_attr_int("to", to), tk_attr_int("saturate", saturate)};
  ol_value *in[1] = {x};
  return run_ok("Cast", opset, attrs, saturate < 0 ? 1 : 2, in, 1);
}

static void test_cast_numeric(void) {
  int64_t d6[] = {6};
  float f[] = {1.9f, -1.9f, 3e9f, -3e9f, NAN, 300.5f};
  ol_value *y = cast(tk_f32(1, d6, f), OL_DTYPE_INT32, 13, -1);
  if (y) CHECK(!memcmp(data(y), (int32_t[]){1, -1, INT32_MAX, INT32_MIN, 0, 300}, 24));
  ol_value_release(y);
  y = cast(tk_f32(1, d6, f), OL_DTYPE_UINT8, 13, -1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 0, 255, 0, 0, 255}, 6));
  ol_value_release(y);
  y = cast(tk_f32(1, d6, f), OL_DTYPE_BOOL, 13, -1);
  if (y) CHECK(!memcmp(data(y), (uint8_t[]){1, 1, 1, 1, 1, 1}, 6));
  ol_value_release(y);
  int64_t big[] = {300, -1, (int64_t)1 << 40, 65535, 16777217, -129};
  y = cast(tk_i64(1, d6, big), OL_DTYPE_INT8, 13, -1);
  if (y) CHECK(!memcmp(data(y), (int8_t[]){44, -1, 0, -1, 1, 127}, 6)); /* wraps */
  ol_value_release(y);
  y = cast(tk_i64(1, d6, big), OL_DTYPE_FLOAT, 13, -1);
  if (y) CHECK(((const float *)data(y))[4] == 16777216.0f);
  ol_value_release(y);
  /* double -> float16 rounds once: 1 + 2^-11 + 2^-40 is just above a tie */
  double dd[] = {1.0 + 0x1p-11 + 0x1p-40, 1.0 + 0x1p-11, 70000.0, -1e-9, 0.1, 65519.0};
  y = cast(tk_tensor(OL_DTYPE_DOUBLE, 1, d6, dd), OL_DTYPE_FLOAT16, 13, -1);
  if (y) {
    const uint16_t *h = data(y);
    CHECK(ol_f16_to_f32(h[0]) == 1.0f + 0x1p-10f);
    CHECK(ol_f16_to_f32(h[1]) == 1.0f);
    CHECK(isinf(ol_f16_to_f32(h[2])));
    CHECK(h[3] == 0x8000);
    CHECK(h[4] == ol_f32_to_f16(0.1f));
    CHECK(ol_f16_to_f32(h[5]) == 65504.0f);
  }
  ol_value_release(y);
  /* same type: a view, no copy */
  ol_value *x = tk_f32(1, d6, f);
  ol_value *xref = ol_value_retain(x);
  y = cast(x, OL_DTYPE_FLOAT, 13, -1);
  if (y) CHECK(data(y) == data(xref));
  ol_value_release(y);
  ol_value_release(xref);
  /* CastLike takes the type of input 1 */
  ol_value *in[2] = {tk_f32(1, d6, f), tk_tensor(OL_DTYPE_INT16, 0, NULL, (int16_t[]){0})};
  y = run_ok("CastLike", 15, NULL, 0, in, 2);
  if (y) CHECK(y->tensor.dtype == OL_DTYPE_INT16 && ((const int16_t *)data(y))[5] == 300);
  ol_value_release(y);
  /* Cast-1 names the type with a string */
  ol_attr to_s = tk_attr_string("to", "DOUBLE");
  ol_value *in2[1] = {tk_f32(1, d6, f)};
  y = run_ok("Cast", 1, &to_s, 1, in2, 1);
  if (y) CHECK(y->tensor.dtype == OL_DTYPE_DOUBLE && ((const double *)data(y))[0] == (double)1.9f);
  ol_value_release(y);
  ol_attr bad = tk_attr_int("to", 99);
  ol_value *in3[1] = {tk_f32(1, d6, f)};
  CHECK_STATUS(run_status("Cast", 13, &bad, 1, in3, 1), OL_INVALID_MODEL);
}

static void test_cast_float8(void) {
  int64_t d6[] = {6};
  float f[] = {NAN, INFINITY, -INFINITY, 1000.0f, -1000.0f, 0.3f};
  /* saturate = 1: inf and out-of-range go to +-max (448), NaN stays NaN */
  ol_value *y = cast(tk_f32(1, d6, f), OL_DTYPE_FLOAT8E4M3FN, 19, 1);
  if (y) {
    const uint8_t *v = data(y);
    CHECK((v[0] & 0x7F) == 0x7F);
    CHECK(v[1] == 0x7E && v[2] == 0xFE && v[3] == 0x7E && v[4] == 0xFE);
    CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FN, v[5]) == 0.3125f);
  }
  ol_value_release(y);
  /* saturate = 0: e4m3fn has no inf, so overflow is NaN */
  y = cast(tk_f32(1, d6, f), OL_DTYPE_FLOAT8E4M3FN, 19, 0);
  if (y) {
    const uint8_t *v = data(y);
    CHECK((v[1] & 0x7F) == 0x7F && (v[3] & 0x7F) == 0x7F);
  }
  ol_value_release(y);
  /* e5m2 keeps inf without saturation, saturates to 57344 with it */
  y = cast(tk_f32(1, d6, f), OL_DTYPE_FLOAT8E5M2, 19, 0);
  if (y) CHECK(isinf(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E5M2, ((const uint8_t *)data(y))[1])));
  ol_value_release(y);
  y = cast(tk_f32(1, d6, f), OL_DTYPE_FLOAT8E5M2, 19, 1);
  if (y) CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E5M2, ((const uint8_t *)data(y))[1]) == 57344.0f);
  ol_value_release(y);
  /* and back to float */
  ol_value *x8 = tk_tensor(OL_DTYPE_FLOAT8E4M3FNUZ, 1, (int64_t[]){2}, (uint8_t[]){0x80, 0x40});
  y = cast(x8, OL_DTYPE_FLOAT, 19, -1);
  if (y) CHECK(isnan(((const float *)data(y))[0]) && ((const float *)data(y))[1] == 1.0f);
  ol_value_release(y);
}

static void test_cast_int4(void) {
  int64_t d6[] = {6};
  float f[] = {2.5f, 3.5f, -9.0f, 100.0f, -0.5f, NAN};
  ol_value *y = cast(tk_f32(1, d6, f), OL_DTYPE_INT4, 21, -1);
  if (y) {
    const int8_t want[] = {2, 4, -8, 7, 0, 0};
    for (int i = 0; i < 6; i++) CHECK(ol_packed_get(OL_DTYPE_INT4, data(y), i) == want[i]);
    ol_value *back = cast(y, OL_DTYPE_INT32, 21, -1);
    if (back) CHECK(!memcmp(data(back), (int32_t[]){2, 4, -8, 7, 0, 0}, 24));
    ol_value_release(back);
  }
  y = cast(tk_i64(1, d6, (int64_t[]){-1, 0, 15, 16, 7, 300}), OL_DTYPE_UINT4, 21, -1);
  if (y) {
    const int want[] = {0, 0, 15, 15, 7, 15};
    for (int i = 0; i < 6; i++) CHECK(ol_packed_get(OL_DTYPE_UINT4, data(y), i) == want[i]);
  }
  ol_value_release(y);
}

static void test_cast_string(void) {
  int64_t d8[] = {8};
  float f[] = {0.9767611f, 1.0f, 100.0f, 1e20f, 1e-5f, -0.0f, NAN, -INFINITY};
  const char *want[] = {"0.9767611", "1.0", "100.0", "1e+20", "1e-05", "-0.0", "nan", "-inf"};
  ol_value *y = cast(tk_f32(1, d8, f), OL_DTYPE_STRING, 13, -1);
  if (y) {
    for (int i = 0; i < 8; i++) {
      const char *s;
      size_t n;
      CHECK_OK(ol_tensor_get_string(y, (size_t)i, &s, &n));
      if (strcmp(s, want[i])) fprintf(stderr, "  string %d: \"%s\", want \"%s\"\n", i, s, want[i]);
      CHECK(!strcmp(s, want[i]));
    }
    ol_value *back = cast(y, OL_DTYPE_FLOAT, 13, -1);
    if (back) {
      const float *v = data(back);
      for (int i = 0; i < 6; i++) CHECK(v[i] == f[i] && signbit(v[i]) == signbit(f[i]));
      CHECK(isnan(v[6]) && isinf(v[7]) && v[7] < 0);
    }
    ol_value_release(back);
  }
  ol_value *s = tk_tensor(OL_DTYPE_STRING, 1, (int64_t[]){5}, NULL);
  const char *texts[] = {"+INF", " -3.25e2 ", "nAn", "123456789012345", "true"};
  for (int i = 0; i < 5; i++) ol_tensor_set_string(s, (size_t)i, texts[i], strlen(texts[i]));
  ol_value *sref = ol_value_retain(s);
  y = cast(s, OL_DTYPE_DOUBLE, 13, -1);
  if (y) {
    const double *v = data(y);
    CHECK(isinf(v[0]) && v[0] > 0 && v[1] == -325.0 && isnan(v[2]) && v[3] == 123456789012345.0 &&
          v[4] == 1.0);
  }
  ol_value_release(y);
  y = cast(ol_value_retain(sref), OL_DTYPE_INT64, 13, -1);
  if (y) CHECK(((const int64_t *)data(y))[3] == 123456789012345 && ((const int64_t *)data(y))[1] == -325);
  ol_value_release(y);
  ol_value_release(sref);
  ol_value *bad = tk_tensor(OL_DTYPE_STRING, 1, (int64_t[]){1}, NULL);
  ol_tensor_set_string(bad, 0, "hello", 5);
  ol_attr to = tk_attr_int("to", OL_DTYPE_FLOAT);
  ol_value *in[1] = {bad};
  CHECK_STATUS(run_status("Cast", 13, &to, 1, in, 1), OL_INVALID_ARGUMENT);
  /* ints and bools to string */
  y = cast(tk_i64(1, (int64_t[]){2}, (int64_t[]){-42, INT64_MAX}), OL_DTYPE_STRING, 13, -1);
  if (y) {
    const char *t;
    size_t n;
    CHECK_OK(ol_tensor_get_string(y, 1, &t, &n));
    CHECK(!strcmp(t, "9223372036854775807"));
  }
  ol_value_release(y);
  y = cast(tk_tensor(OL_DTYPE_BOOL, 1, (int64_t[]){2}, (uint8_t[]){1, 0}), OL_DTYPE_STRING, 13, -1);
  if (y) {
    const char *t;
    size_t n;
    CHECK_OK(ol_tensor_get_string(y, 0, &t, &n));
    CHECK(!strcmp(t, "True"));
  }
  ol_value_release(y);
}

/* ------------------------------------------------------------ speed (printed only) */

static double now(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void test_speed(void) {
  enum { ROWS = 1024, COLS = 1024 };
  int64_t dm[] = {ROWS, COLS}, dr[] = {COLS};
  float *a = malloc(sizeof(float) * ROWS * COLS), *r = malloc(sizeof(float) * COLS);
  for (int i = 0; i < ROWS * COLS; i++) a[i] = frand();
  for (int i = 0; i < COLS; i++) r[i] = frand();
  struct {
    const char *op, *what;
    int row;
  } cases[] = {{"Add", "same shape", 0}, {"Add", "row broadcast", 1}, {"Mul", "scalar", 2},
               {"Exp", "unary", 3},      {"Tanh", "unary", 3},        {"Erf", "unary", 3},
               {"Sigmoid", "unary", 3},  {"Gelu", "unary", 3}};
  printf("float32 speed, %d elements (one cold run: includes output allocation):\n", ROWS * COLS);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    double best = 1e9;
    for (int rep = 0; rep < 3; rep++) {
      ol_value *in[2] = {tk_f32(2, dm, a), NULL};
      size_t nin = 2;
      if (cases[c].row == 0) in[1] = tk_f32(2, dm, a);
      else if (cases[c].row == 1) in[1] = tk_f32(1, dr, r);
      else if (cases[c].row == 2) in[1] = tk_f32(0, NULL, r);
      else nin = 1;
      double t0 = now();
      ol_value *y = run_ok(cases[c].op, 20, NULL, 0, in, nin);
      double t = now() - t0;
      if (t < best) best = t;
      ol_value_release(y);
    }
    printf("  %-8s %-14s %6.2f ns/element\n", cases[c].op, cases[c].what, best * 1e9 / (ROWS * COLS));
  }
  free(a);
  free(r);
}

OL_TEST_MAIN(TEST(test_broadcast_shapes), TEST(test_shape_mismatch), TEST(test_legacy_broadcast),
             TEST(test_integer_arithmetic), TEST(test_division_by_zero), TEST(test_bad_dtype),
             TEST(test_logic_and_compare), TEST(test_half_precision), TEST(test_unary_float),
             TEST(test_unary_attributes), TEST(test_clip), TEST(test_pow), TEST(test_pow_scalar_exponent_shortcuts),
             TEST(test_vector_exp_users_match_scalar), TEST(test_prelu),
             TEST(test_variadic), TEST(test_where), TEST(test_cast_numeric), TEST(test_cast_float8),
             TEST(test_cast_int4), TEST(test_cast_string), TEST(test_speed))
