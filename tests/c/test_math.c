/* Accuracy of the project's own math (simd/math.h) against libm.
 *
 * Every function is swept densely over its useful range (uniform points plus
 * random values of every magnitude) and over special values. Float functions
 * are compared with the double libm function (error in float ulps); double
 * functions with the long double libm function (error in double ulps and
 * relative). The max error of each function is printed. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "float_bits.h"
#include "harness.h"
#include "simd/math.h"


#define SWEEP 1000000  /* points per float sweep */
#define SWEEP_D 300000 /* per double sweep (the long double reference is slow) */

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;
static uint64_t rng_next(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return rng_state;
}
static double rng_unit(void) { return (double)(rng_next() >> 11) * 0x1p-53; }

/* A point of the sweep over [lo, hi]: even i uniform, odd i with a random
 * binary exponent (so tiny and huge magnitudes are covered too). */
static double sample(int i, int n, double lo, double hi, int float_range) {
  if (i % 2 == 0) {
    double t = (double)i / (double)(n - 1);
    return lo * (1 - t) + hi * t;
  }
  double amax = fmax(fabs(lo), fabs(hi));
  int emax, emin = float_range ? -149 : -1074;
  frexp(amax, &emax);
  for (;;) {
    int e = emin + (int)(rng_next() % (uint64_t)(emax - emin + 1));
    double m = 0.5 + 0.5 * rng_unit();
    double x = ldexp(m, e);
    if (lo < 0 && (rng_next() & 1)) x = -x;
    if (float_range) x = (float)x;
    if (x >= lo && x <= hi) return x;
  }
}

static double ulp_err_f(float ours, double ref) {
  if (isnan(ref)) return isnan(ours) ? 0 : 1e9;
  float rf = (float)ref;
  if (isinf(rf) || isinf(ours)) return ours == rf ? 0 : 1e9;
  if (isnan(ours)) return 1e9;
  double a = fabs(ref), ulp;
  if (a < FLT_MIN) {
    ulp = 0x1p-149;
  } else {
    int e;
    frexp(a, &e);
    ulp = ldexp(1.0, e - 24);
  }
  return fabs((double)ours - ref) / ulp;
}

static long double ulp_err_d(double ours, long double ref, long double *rel) {
  *rel = 0;
  if (isnan(ref)) return isnan(ours) ? 0 : 1e9;
  double rd = (double)ref;
  if (isinf(rd) || isinf(ours)) return ours == rd ? 0 : 1e9;
  if (isnan(ours)) return 1e9;
  long double a = fabsl(ref), ulp;
  if (a < DBL_MIN) {
    ulp = 0x1p-1074L;
  } else {
    int e;
    frexpl(a, &e);
    ulp = ldexpl(1.0L, e - 53);
  }
  long double d = fabsl((long double)ours - ref);
  if (a >= DBL_MIN) *rel = d / a;
  return d / ulp;
}

/* Bitwise-equal results, NaN equal to NaN (any payload), signed zeros distinct. */
static int same_special(double a, double b) {
  if (isnan(a) || isnan(b)) return isnan(a) && isnan(b);
  if (a == 0 && b == 0) return signbit(a) == signbit(b);
  return a == b;
}

static const float special_f[] = {0.0f,     -0.0f,     INFINITY, -INFINITY, NAN,     1.0f,
                                  -1.0f,    0.5f,      -0.5f,    2.0f,      FLT_MIN, -FLT_MIN,
                                  1e-45f,   -1e-45f,   FLT_MAX,  -FLT_MAX,  100.0f,  -100.0f,
                                  1e-20f,   -1e-20f,   3.0f,     0.999999f, 1e30f,   -1e30f};
#define N_SPECIAL_F (sizeof special_f / sizeof special_f[0])
static const double special_d[] = {0.0,     -0.0,     INFINITY, -INFINITY, NAN,      1.0,
                                   -1.0,    0.5,      -0.5,     2.0,       DBL_MIN,  -DBL_MIN,
                                   5e-324,  -5e-324,  DBL_MAX,  -DBL_MAX,  1000.0,   -1000.0,
                                   1e-200,  -1e-200,  3.0,      1e300,     -1e300,   710.0,
                                   -746.0,  22.5,     0x1p60,   1e22,      6381956970095103.0 * 0x1p797};
#define N_SPECIAL_D (sizeof special_d / sizeof special_d[0])

/* ------------------------------------------------------------ float functions */

typedef struct f1 {
  const char *name;
  float (*ours)(float);
  double (*ref)(double);
  float (*libm)(float); /* special values are compared with this one */
  double lo, hi;
  double limit; /* max ulp checked */
} f1;

static double max_ulp_f1(const f1 *c) {
  double worst = 0, worst_x = 0;
  for (int i = 0; i < SWEEP; i++) {
    float x = (float)sample(i, SWEEP, c->lo, c->hi, 1);
    double e = ulp_err_f(c->ours(x), c->ref(x));
    if (e > worst) {
      worst = e;
      worst_x = x;
    }
  }
  int special_ok = 1;
  for (size_t i = 0; i < N_SPECIAL_F; i++) {
    float x = special_f[i];
    float o = c->ours(x), l = c->libm(x);
    if (isnan(l) || isinf(l) || l == 0 || isnan(o) || isinf(o) || o == 0) {
      if (!same_special(o, l) && ulp_err_f(o, c->ref(x)) > c->limit) {
        fprintf(stderr, "  %s(%a) = %a, libm %a\n", c->name, x, o, l);
        special_ok = 0;
      }
    } else {
      double e = ulp_err_f(o, c->ref(x));
      if (e > worst) {
        worst = e;
        worst_x = x;
      }
    }
  }
  printf("  %-8s max %.3f ulp (at %.9g)%s\n", c->name, worst, worst_x,
         special_ok ? "" : "  SPECIAL VALUES DIFFER");
  CHECK(special_ok);
  return worst;
}

static double ref_tanf(double x) { return tan(x); }

static void test_float_unary(void) {
  const f1 cases[] = {
      {"expf", ol_expf, exp, expf, -104, 89, 2},
      {"expf", ol_expf, exp, expf, -10, 10, 2},
      {"expf_fast", ol_expf_fast, exp, expf, -104, 0, 2},
      {"expf_fast", ol_expf_fast, exp, expf, -10, 0, 2},
      {"logf", ol_logf, log, logf, 0, FLT_MAX, 2},
      {"logf", ol_logf, log, logf, 0.5, 2, 2},
      {"sinf", ol_sinf, sin, sinf, -1e5, 1e5, 2},
      {"sinf", ol_sinf, sin, sinf, -10, 10, 2},
      {"sinf", ol_sinf, sin, sinf, -FLT_MAX, FLT_MAX, 2},
      {"cosf", ol_cosf, cos, cosf, -1e5, 1e5, 2},
      {"cosf", ol_cosf, cos, cosf, -10, 10, 2},
      {"cosf", ol_cosf, cos, cosf, -FLT_MAX, FLT_MAX, 2},
      {"tanf", ol_tanf, ref_tanf, tanf, -1e5, 1e5, 4},
      {"tanf", ol_tanf, ref_tanf, tanf, -2, 2, 4},
      {"tanhf", ol_tanhf, tanh, tanhf, -12, 12, 4},
      {"tanhf", ol_tanhf, tanh, tanhf, -1, 1, 4},
      {"erff", ol_erff, erf, erff, -5, 5, 4},
      {"erff", ol_erff, erf, erff, -1.5, 1.5, 4},
      {"atanf", ol_atanf, atan, atanf, -FLT_MAX, FLT_MAX, 4},
      {"atanf", ol_atanf, atan, atanf, -4, 4, 4},
      {"asinf", ol_asinf, asin, asinf, -1, 1, 4},
      {"acosf", ol_acosf, acos, acosf, -1, 1, 4},
      {"sinhf", ol_sinhf, sinh, sinhf, -90, 90, 4},
      {"sinhf", ol_sinhf, sinh, sinhf, -2, 2, 4},
      {"coshf", ol_coshf, cosh, coshf, -90, 90, 4},
      {"coshf", ol_coshf, cosh, coshf, -2, 2, 4},
      {"asinhf", ol_asinhf, asinh, asinhf, -FLT_MAX, FLT_MAX, 4},
      {"asinhf", ol_asinhf, asinh, asinhf, -3, 3, 4},
      {"acoshf", ol_acoshf, acosh, acoshf, 1, FLT_MAX, 4},
      {"acoshf", ol_acoshf, acosh, acoshf, 1, 3, 4},
      {"atanhf", ol_atanhf, atanh, atanhf, -1, 1, 4},
      {"log1pf", ol_log1pf, log1p, log1pf, -1, FLT_MAX, 4},
      {"log1pf", ol_log1pf, log1p, log1pf, -0.5, 1, 4},
      {"expm1f", ol_expm1f, expm1, expm1f, -104, 89, 4},
      {"expm1f", ol_expm1f, expm1, expm1f, -1, 1, 4},
  };
  printf("float functions vs libm (double reference):\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    double w = max_ulp_f1(&cases[i]);
    if (w > cases[i].limit) fprintf(stderr, "  %s exceeds %.0f ulp\n", cases[i].name, cases[i].limit);
    CHECK(w <= cases[i].limit);
  }
}

static void test_float_binary(void) {
  double worst = 0;
  float wx = 0, wy = 0;
  for (int i = 0; i < SWEEP; i++) {
    float x, y;
    switch (i % 4) {
      case 0: /* moderate */
        x = (float)(10 * rng_unit());
        y = (float)(80 * rng_unit() - 40);
        break;
      case 1: /* any magnitude, result in range */
        x = (float)ldexp(0.5 + 0.5 * rng_unit(), (int)(rng_next() % 250) - 124);
        y = (float)((180 * rng_unit() - 90) / log(x));
        break;
      case 2: /* negative base, integer exponent */
        x = (float)(-8 * rng_unit());
        y = (float)((int)(rng_next() % 61) - 30);
        break;
      default: /* near 1, large exponent */
        x = (float)(1 + (rng_unit() - 0.5) * 1e-3);
        y = (float)((rng_unit() - 0.5) * 2e5);
        break;
    }
    double e = ulp_err_f(ol_powf(x, y), pow(x, y));
    if (e > worst) {
      worst = e;
      wx = x;
      wy = y;
    }
  }
  /* C99 special cases: every pair of special values against libm. */
  static const float sv[] = {0.0f,  -0.0f, INFINITY, -INFINITY, NAN,  1.0f, -1.0f, 0.5f,
                             -0.5f, 2.0f,  -2.0f,    3.0f,      -3.0f, 2.5f, -2.5f, 1e-45f, 1e30f};
  int nsv = (int)(sizeof sv / sizeof sv[0]), special_ok = 1;
  for (int i = 0; i < nsv; i++)
    for (int j = 0; j < nsv; j++) {
      float o = ol_powf(sv[i], sv[j]), l = powf(sv[i], sv[j]);
      if (!same_special(o, l) && ulp_err_f(o, pow(sv[i], sv[j])) > 1) {
        fprintf(stderr, "  powf(%a, %a) = %a, libm %a\n", sv[i], sv[j], o, l);
        special_ok = 0;
      }
    }
  printf("  %-8s max %.3f ulp (at %.9g, %.9g)\n", "powf", worst, wx, wy);
  CHECK(worst <= 2);
  CHECK(special_ok);

  worst = 0;
  for (int i = 0; i < SWEEP; i++) {
    float y = (float)(20 * rng_unit() - 10), x = (float)(20 * rng_unit() - 10);
    if (i % 2) {
      y = (float)ldexp(y, (int)(rng_next() % 200) - 100);
      x = (float)ldexp(x, (int)(rng_next() % 200) - 100);
    }
    double e = ulp_err_f(ol_atan2f(y, x), atan2(y, x));
    if (e > worst) {
      worst = e;
      wx = x;
      wy = y;
    }
  }
  special_ok = 1;
  for (int i = 0; i < nsv; i++)
    for (int j = 0; j < nsv; j++) {
      float o = ol_atan2f(sv[i], sv[j]), l = atan2f(sv[i], sv[j]);
      if (!same_special(o, l) && ulp_err_f(o, atan2(sv[i], sv[j])) > 1) {
        fprintf(stderr, "  atan2f(%a, %a) = %a, libm %a\n", sv[i], sv[j], o, l);
        special_ok = 0;
      }
    }
  printf("  %-8s max %.3f ulp (at y=%.9g, x=%.9g)\n", "atan2f", worst, wy, wx);
  CHECK(worst <= 2);
  CHECK(special_ok);
}

/* ------------------------------------------------------------ double functions */

typedef struct d1 {
  const char *name;
  double (*ours)(double);
  long double (*ref)(long double);
  double (*libm)(double);
  double lo, hi;
} d1;

static void max_err_d1(const d1 *c, long double *worst_ulp, long double *worst_rel) {
  long double wu = 0, wr = 0;
  double wx = 0;
  for (int i = 0; i < SWEEP_D; i++) {
    double x = sample(i, SWEEP_D, c->lo, c->hi, 0);
    long double rel, e = ulp_err_d(c->ours(x), c->ref(x), &rel);
    if (e > wu) {
      wu = e;
      wx = x;
    }
    if (rel > wr) wr = rel;
  }
  int special_ok = 1;
  for (size_t i = 0; i < N_SPECIAL_D; i++) {
    double x = special_d[i], o = c->ours(x), l = c->libm(x);
    long double rel, e = ulp_err_d(o, c->ref(x), &rel);
    if (isnan(l) || isinf(l) || l == 0 || isnan(o) || isinf(o) || o == 0) {
      if (!same_special(o, l) && e > 2) {
        fprintf(stderr, "  %s(%a) = %a, libm %a\n", c->name, x, o, l);
        special_ok = 0;
      }
    } else {
      if (e > wu) {
        wu = e;
        wx = x;
      }
      if (rel > wr) wr = rel;
    }
  }
  printf("  %-8s max %.3Lf ulp, rel %.2Le (at %.17g)%s\n", c->name, wu, wr, wx,
         special_ok ? "" : "  SPECIAL VALUES DIFFER");
  CHECK(special_ok);
  *worst_ulp = wu;
  *worst_rel = wr;
}

static void test_double_unary(void) {
  const d1 cases[] = {
      {"exp", ol_exp, expl, exp, -746, 710},
      {"exp", ol_exp, expl, exp, -2, 2},
      {"log", ol_log, logl, log, 0, DBL_MAX},
      {"log", ol_log, logl, log, 0.5, 2},
      {"sin", ol_sin, sinl, sin, -1e5, 1e5},
      {"sin", ol_sin, sinl, sin, -4, 4},
      {"sin", ol_sin, sinl, sin, -DBL_MAX, DBL_MAX},
      {"cos", ol_cos, cosl, cos, -1e5, 1e5},
      {"cos", ol_cos, cosl, cos, -4, 4},
      {"cos", ol_cos, cosl, cos, -DBL_MAX, DBL_MAX},
      {"tan", ol_tan, tanl, tan, -1e5, 1e5},
      {"tan", ol_tan, tanl, tan, -2, 2},
      {"tanh", ol_tanh, tanhl, tanh, -25, 25},
      {"tanh", ol_tanh, tanhl, tanh, -1.5, 1.5},
      {"erf", ol_erf, erfl, erf, -7, 7},
      {"erf", ol_erf, erfl, erf, -2, 2},
      {"atan", ol_atan, atanl, atan, -DBL_MAX, DBL_MAX},
      {"atan", ol_atan, atanl, atan, -3, 3},
      {"asin", ol_asin, asinl, asin, -1, 1},
      {"acos", ol_acos, acosl, acos, -1, 1},
      {"sinh", ol_sinh, sinhl, sinh, -711, 711},
      {"sinh", ol_sinh, sinhl, sinh, -2, 2},
      {"cosh", ol_cosh, coshl, cosh, -711, 711},
      {"cosh", ol_cosh, coshl, cosh, -2, 2},
      {"asinh", ol_asinh, asinhl, asinh, -DBL_MAX, DBL_MAX},
      {"asinh", ol_asinh, asinhl, asinh, -3, 3},
      {"acosh", ol_acosh, acoshl, acosh, 1, DBL_MAX},
      {"acosh", ol_acosh, acoshl, acosh, 1, 3},
      {"atanh", ol_atanh, atanhl, atanh, -1, 1},
      {"expm1", ol_expm1, expm1l, expm1, -40, 710},
      {"expm1", ol_expm1, expm1l, expm1, -1, 1},
      {"log1p", ol_log1p, log1pl, log1p, -1, DBL_MAX},
      {"log1p", ol_log1p, log1pl, log1p, -0.5, 1},
      {"erfc", ol_erfc, erfcl, erfc, -7, 28},
      {"erfc", ol_erfc, erfcl, erfc, -1, 1},
  };
  printf("double functions vs libm (long double reference):\n");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    long double u, r;
    max_err_d1(&cases[i], &u, &r);
    CHECK(r <= 1e-14L);
    CHECK(u <= 4);
  }
}

static void test_double_pow(void) {
  long double wu = 0, wr = 0;
  double wx = 0, wy = 0;
  for (int i = 0; i < SWEEP; i++) {
    double x, y;
    switch (i % 4) {
      case 0:
        x = 10 * rng_unit();
        y = 80 * rng_unit() - 40;
        break;
      case 1:
        x = ldexp(0.5 + 0.5 * rng_unit(), (int)(rng_next() % 2000) - 1000);
        y = (1400 * rng_unit() - 700) / log(x);
        break;
      case 2:
        x = -8 * rng_unit();
        y = (double)((int)(rng_next() % 301) - 150);
        break;
      default:
        x = 1 + (rng_unit() - 0.5) * 1e-6;
        y = (rng_unit() - 0.5) * 1e9;
        break;
    }
    long double rel, e = ulp_err_d(ol_pow(x, y), powl(x, y), &rel);
    if (e > wu) {
      wu = e;
      wx = x;
      wy = y;
    }
    if (rel > wr) wr = rel;
  }
  static const double sv[] = {0.0,  -0.0, INFINITY, -INFINITY, NAN,  1.0,  -1.0,   0.5,    -0.5,
                              2.0,  -2.0, 3.0,      -3.0,      2.5,  -2.5, 5e-324, 1e300, 0x1p53,
                              -0x1p53 - 2, 0x1p53 + 2};
  int nsv = (int)(sizeof sv / sizeof sv[0]), special_ok = 1;
  for (int i = 0; i < nsv; i++)
    for (int j = 0; j < nsv; j++) {
      double o = ol_pow(sv[i], sv[j]), l = pow(sv[i], sv[j]);
      long double rel;
      if (!same_special(o, l) && ulp_err_d(o, powl(sv[i], sv[j]), &rel) > 2) {
        fprintf(stderr, "  pow(%a, %a) = %a, libm %a\n", sv[i], sv[j], o, l);
        special_ok = 0;
      }
    }
  printf("  %-8s max %.3Lf ulp, rel %.2Le (at %.17g, %.17g)\n", "pow", wu, wr, wx, wy);
  CHECK(wr <= 1e-14L);
  CHECK(special_ok);
}

/* Exact cases people rely on. */
static void test_exact_values(void) {
  CHECK(ol_expf(0.0f) == 1.0f);
  CHECK(ol_exp(0.0) == 1.0);
  CHECK(ol_logf(1.0f) == 0.0f && !signbit(ol_logf(1.0f)));
  CHECK(ol_log(1.0) == 0.0);
  CHECK(ol_powf(3.0f, 2.0f) == 9.0f);
  CHECK(ol_powf(2.0f, 10.0f) == 1024.0f);
  CHECK(ol_powf(-2.0f, 3.0f) == -8.0f);
  CHECK(ol_powf(4.0f, 0.5f) == 2.0f);
  CHECK(ol_pow(2.0, -2.0) == 0.25);
  CHECK(ol_sinf(0.0f) == 0.0f);
  CHECK(signbit(ol_sinf(-0.0f)));
  CHECK(signbit(ol_tanhf(-0.0f)));
  CHECK(signbit(ol_erff(-0.0f)));
  CHECK(ol_cosf(0.0f) == 1.0f);
  CHECK(ol_tanhf(30.0f) == 1.0f && ol_tanhf(-30.0f) == -1.0f);
  CHECK(ol_erff(10.0f) == 1.0f && ol_erff(-10.0f) == -1.0f);
  CHECK(ol_expf(-200.0f) == 0.0f && isinf(ol_expf(200.0f)));
  /* the softmax weights' exp: 1 at 0, 0 below -104 and at -inf, ol_expf above 0 and for NaN */
  CHECK(ol_expf_fast(0.0f) == 1.0f && ol_expf_fast(-0.0f) == 1.0f);
  CHECK(ol_expf_fast(-104.5f) == 0.0f && ol_expf_fast(-INFINITY) == 0.0f && ol_expf_fast(-103.0f) > 0.0f);
  CHECK(ol_expf_fast(3.5f) == ol_expf(3.5f) && isinf(ol_expf_fast(INFINITY)) && isnan(ol_expf_fast(NAN)));
  CHECK(isnan(ol_logf(-1.0f)) && isinf(ol_logf(0.0f)) && ol_logf(0.0f) < 0);
  CHECK(isnan(ol_expf(NAN)) && isnan(ol_sinf(INFINITY)) && isnan(ol_acosf(2.0f)));
}

/* ol_expf_n and ol_expf_fast_n (four lanes at a time) give their scalar
 * function's bits on every input: special values, the cut-offs, a stride
 * through all bit patterns and a denser one through the finite range, odd
 * lengths, in place. */
typedef struct expf_pair {
  const char *name;
  void (*vector)(float *, const float *, int64_t);
  float (*scalar)(float);
} expf_pair;
static const expf_pair EXPF_PAIRS[] = {{"expf_n", ol_expf_n, ol_expf}, {"expf_fast_n", ol_expf_fast_n, ol_expf_fast}};

static int expf_n_mismatches(const float *x, int64_t n) {
  float y[1027];
  int bad = 0;
  for (size_t f = 0; f < sizeof EXPF_PAIRS / sizeof EXPF_PAIRS[0]; f++) {
    const expf_pair *e = &EXPF_PAIRS[f];
    e->vector(y, x, n);
    for (int64_t i = 0; i < n; i++) {
      if (fbits(y[i]) != fbits(e->scalar(x[i]))) {
        if (bad < 5)
          fprintf(stderr, "%s(%a = %08x): %08x, scalar %08x\n", e->name, x[i], fbits(x[i]), fbits(y[i]),
                  fbits(e->scalar(x[i])));
        bad++;
      }
    }
  }
  return bad;
}
static void test_expf_vector_matches_scalar(void) {
  float x[1027];
  const float special[] = {NAN, -NAN, INFINITY, -INFINITY, 0.0f, -0.0f, 0x1p-149f, -0x1p-149f,
                           0x1p-126f, 1.0f, -1.0f, 89.0f, 89.00001f, 88.72283f, 88.72284f, -104.0f,
                           -104.00001f, -103.97208f, -87.33655f, -87.33654f, FLT_MAX, -FLT_MAX,
                           0.5f * 0.6931472f, 0.34657359f, -0.34657359f, 1e-8f, -1e-8f, 20.0f,
                           -87.0f, -87.5f, -100.0f, -103.9f, -0x1p-149f, -45.0f};
  size_t ns = sizeof special / sizeof special[0];
  int bad = 0;
  /* specials at every lane position, plus a signaling NaN with payload */
  for (int shift = 0; shift < 4; shift++) {
    int64_t n = 0;
    for (int k = 0; k < shift; k++) x[n++] = 0.25f;
    for (size_t k = 0; k < ns; k++) x[n++] = special[k];
    x[n++] = bitsf(0x7FA00001u);
    x[n++] = bitsf(0xFFC12345u);
    bad += expf_n_mismatches(x, n);
  }
  /* all bit patterns, stride 4093 */
  uint64_t u = 0;
  while (u <= 0xFFFFFFFFull) {
    int64_t n = 0;
    for (; n < 1024 && u <= 0xFFFFFFFFull; u += 4093) x[n++] = bitsf((uint32_t)u);
    bad += expf_n_mismatches(x, n);
  }
  /* finite range [-110, 95]: every 61st float */
  for (float v = -110.0f; v < 95.0f;) {
    int64_t n = 0;
    for (; n < 1024 && v < 95.0f; n++) {
      x[n] = v;
      uint32_t b = fbits(v);
      v = v < 0 ? (b - 61 >= 0x80000000u ? bitsf(b - 61) : 0.0f) : bitsf(b + 61);
    }
    bad += expf_n_mismatches(x, n);
  }
  /* odd lengths and in place */
  for (size_t f = 0; f < sizeof EXPF_PAIRS / sizeof EXPF_PAIRS[0]; f++)
    for (int64_t n = 0; n < 11; n++) {
      float a[11], b[11];
      for (int64_t i = 0; i < n; i++) a[i] = b[i] = (float)i * 1.37f - 12.0f;
      EXPF_PAIRS[f].vector(b, b, n);
      for (int64_t i = 0; i < n; i++) bad += fbits(b[i]) != fbits(EXPF_PAIRS[f].scalar(a[i]));
    }
  CHECK(bad == 0);
}

OL_TEST_MAIN(TEST(test_exact_values), TEST(test_expf_vector_matches_scalar), TEST(test_float_unary), TEST(test_float_binary),
             TEST(test_double_unary), TEST(test_double_pow))
