/* The project's own transcendental functions (declared in math.h).
 *
 * Why: glibc and musl (Emscripten) return different bits for exp, log, sin,
 * ... so kernels call these instead and the native build is a bit-exact
 * oracle for the wasm build. Only IEEE-exact operations are used: + - * /,
 * sqrt, fabs, floor/rint, copysign and integer/bit manipulation; no fma
 * (-ffp-contract=off) and a fixed evaluation order.
 *
 * Techniques: Cody-Waite range reduction, table-driven exp (2^(j/32)),
 * log via m = 1+f, s = f/(2+f), log(m) = 2 atanh(s), double-double
 * ("DD": value = hi + lo) arithmetic where double results need more than 53
 * bits internally (log inside pow, reduced arguments of sin/cos), Payne-Hanek
 * reduction for huge trigonometric arguments, rational identities for the
 * inverse and hyperbolic functions, and near-minimax polynomials.
 *
 * Float versions compute in double with shorter polynomials (accurate to
 * ~1e-10) or call the double version and round once. Measured accuracy
 * against libm is printed by tests/c/test_math.c (all within ~1 ulp). */
#include "simd/math.h"

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "simd/vec.h" /* the ISA headers: wasm_simd128.h or emmintrin.h */

/* Double expm1/log1p/erfc, used by the elementwise kernels (not yet in math.h). */
double ol_expm1(double x);
double ol_log1p(double x);
double ol_erfc(double x);

/* ------------------------------------------------------------ constants
 * Polynomials are Chebyshev fits computed with mpmath at 60 digits (monomial
 * coefficients, Horner order, lowest degree first); "fit error" is the
 * absolute error of the fitted function on its interval. Tables are exact
 * values rounded to double (hi) plus the rounded remainder (lo). */
/* exp(r): degree 7 on [-0.347, 0.347], fit error 4.25e-11, cond 1.96 */
static const double EXPF_P[8] = {
    0.9999999999591618, 0.9999999999954646, 0.500000010852759,
    0.1666666678719516, 0.04166621610603964, 0.00833328329295277,
    0.0013948725566063458, 0.00019907732801207004,
};
/* 2(atanh(s)/s-1)/z, z=s^2: degree 4 on [0.0, 0.0295], fit error 7.35e-12, cond 1.0 */
static const double LOGF_R[5] = {
    0.6666666666738277, 0.39999998786883284, 0.28571756668146314,
    0.22191265599171967, 0.19365278421757223,
};
/* (sin(r)/r-1)/z: degree 4 on [0.0, 0.616912], fit error 2.78e-14, cond 1.06 */
static const double SINF_S[5] = {
    -0.16666666666663885, 0.008333333331078323, -0.00019841266916110632,
    2.7555990664728974e-06, -2.4805611712122475e-08,
};
/* (cos(r)-1)/z: degree 4 on [0.0, 0.616912], fit error 3.61e-13, cond 1.11 */
static const double COSF_C[5] = {
    -0.49999999999963873, 0.041666666637384386, -0.0013888885090262895,
    2.4799861846361453e-05, -2.7237108576245085e-07,
};
/* (tanh(x)/x-1)/z: degree 7 on [0.0, 0.3025], fit error 3.19e-13, cond 1.28 */
static const double TANHF_T[8] = {
    -0.3333333333330133, 0.13333333319778815, -0.05396824451257416,
    0.02186923608915792, -0.00885990445394119, 0.0035680076623922107,
    -0.0013570987618154516, 0.00036903745235464236,
};
/* erf(x)/x-1 in z=x^2: degree 7 on [0.0, 1.0], fit error 3.38e-11, cond 153.0 */
static const double ERFF_P[8] = {
    0.12837916706154343, -0.3761263846802871, 0.11283782495236845,
    -0.026865430727670243, 0.005221031807858023, -0.0008484080405535107,
    0.00011265959025606609, -9.667044571486996e-06,
};
/* erfc(x)exp(x^2): degree 12 on [1.0, 4.0], in t = x - 2.5, fit error 1.74e-9, cond 3.12 */
static const double ERFF_Q[13] = {
    0.2108063640611436, -0.07434733674204068, 0.024937994751043007,
    -0.008001693887595496, 0.0024670657614729186, -0.0007331529642909852,
    0.0002109179637713861, -5.9523157031741315e-05, 1.6114106393804864e-05,
    -3.7472737729690635e-06, 9.763901572173902e-07, -4.264734348150259e-07,
    1.0301512994682683e-07,
};
/* (atanh(s)/s-1-z/3)/z^2: degree 7 on [0.0, 0.0295], fit error 9.55e-19, cond 1.0 */
static const double LOG_G[8] = {
    0.2, 0.1428571428571469, 0.1111111111082441,
    0.09090909168496285, 0.07692297395881176, 0.06667406985646002,
    0.058529940782504536, 0.05862885610905572,
};
/* (sin(r)/r-1)/z: degree 6 on [0.0, 0.616912], fit error 1.16e-20, cond 1.06 */
static const double SIN_S[7] = {
    -0.16666666666666666, 0.008333333333333331, -0.00019841269841265063,
    2.7557319219337312e-06, -2.5052106231802837e-08, 1.6058531516797758e-10,
    -7.586691094197958e-13,
};
/* (cos(r)-1+z/2)/z^2: degree 6 on [0.0, 0.616912], fit error 6.45e-22, cond 1.04 */
static const double COS_C[7] = {
    0.041666666666666664, -0.0013888888888888887, 2.4801587301584645e-05,
    -2.755731922140179e-07, 2.0876755790721963e-09, -1.1470460830795304e-11,
    4.7458685530816656e-14,
};
/* (asin(x)/x-1)/z: degree 12 on [0.0, 0.25], fit error 1.5e-17, cond 1.0 */
static const double ASIN_P[13] = {
    0.16666666666666669, 0.07499999999998433, 0.04464285714635543,
    0.030381944138531247, 0.02237217294214989, 0.017352392720869973,
    0.013971212973552933, 0.011479177415184906, 0.01032281435018578,
    0.005457506718640358, 0.01740087944269402, -0.014851887071247204,
    0.028757851367421566,
};
/* (expm1(x)-x-x^2/2)/x^3: degree 10 on [-0.347, 0.347], fit error 1.01e-19, cond 1.18 */
static const double EXPM1_Q[11] = {
    0.16666666666666666, 0.04166666666666667, 0.008333333333333333,
    0.0013888888888883703, 0.00019841269841266383, 2.480158732571076e-05,
    2.7557319240065754e-06, 2.755727343657049e-07, 2.50520778646644e-08,
    2.091477283224809e-09, 1.6084385114917555e-10,
};
/* (tanh(x)/x-1)/z: degree 10 on [0.0, 0.3025], fit error 7.71e-18, cond 1.28 */
static const double TANH_T[11] = {
    -0.3333333333333333, 0.13333333333332714, -0.053968253967434016,
    0.021869488493666944, -0.008863234397814355, 0.003592110378689024,
    -0.001455661830100716, 0.0005889360520074057, -0.0002346347410887237,
    8.511313685577672e-05, -2.060276537636634e-05,
};
/* erf(x)/x-1 in z=x^2: degree 12 on [0.0, 1.0], fit error 1.3e-19, cond 153.0 */
static const double ERF_P[13] = {
    0.1283791670955126, -0.3761263890318375, 0.11283791670954879,
    -0.026866170645076792, 0.0052239776248180145, -0.000854832698083379,
    0.0001205533111164271, -1.4925595266831182e-05, 1.6461000484121368e-06,
    -1.6350312701054695e-07, 1.4659775274047436e-08, -1.1372848856791674e-09,
    5.957176147748911e-11,
};
/* erfc(x)exp(x^2): degree 16 on [1.0, 2.0], in t = x - 1.5, fit error 4.61e-19, cond 1.67 */
static const double ERFC_A[17] = {
    0.3215854164543175, -0.16362291773256005, 0.0761510398554774,
    -0.03293090529956527, 0.013377340953067394, -0.0051459575478377826,
    0.0018861348769919975, -0.0006619300701084315, 0.0002233099453004411,
    -7.265887301589559e-05, 2.2864299608127746e-05, -6.97536222785843e-06,
    2.0670657912156654e-06, -5.944961119917664e-07, 1.6714292901928126e-07,
    -4.9545807838901603e-08, 1.3242541506849586e-08,
};
/* erfc(x)exp(x^2): degree 16 on [2.0, 3.5], in t = x - 2.75, fit error 2.57e-18, cond 1.64 */
static const double ERFC_B[17] = {
    0.1936620962790687, -0.06323763756063479, 0.019758592987322854,
    -0.005934337897002171, 0.0017195818852900986, -0.00048219508487679243,
    0.0001311818005084561, -3.469861074039318e-05, 8.94015629298454e-06,
    -2.247366566986457e-06, 5.519743740073735e-07, -1.3264839014463818e-07,
    3.121415013712102e-08, -7.156467021431838e-09, 1.6207327188991065e-09,
    -4.056754880659121e-10, 8.831959586426476e-11,
};
/* x erfc(x)exp(x^2) : degree 12 on u = 1/x in [1/6, 1/3.5], in t = u - 0.225, fit error 2.06e-19, cond 1.03 */
static const double ERFC_C[13] = {
    0.5508756993323161, -0.11064483711983764, -0.18430994537612075,
    0.22048746439574157, 0.009895599975600201, -0.3350190162864005,
    0.413826292267289, 0.07861052365902896, -1.0631575457544056,
    1.6416166845510303, -0.16147557206197724, -4.52599928403852,
    9.466910394016919,
};
/* x erfc(x)exp(x^2), u = 1/x in [1/28, 1/6]: degree 13 on [0.0357143, 0.166667], in t = u - 0.1, u = 1/x, fit error 7.79e-19, cond 1.02 */
static const double ERFC_D[14] = {
    0.5614099274382258, -0.0547870553214018, -0.2581963159927242,
    0.1499914424607451, 0.2872835672856796, -0.46312738489858735,
    -0.3012686902023345, 1.5252818137124833, -0.6030425978692381,
    -4.700038731984062, 8.188081285285358, 9.131370421345052,
    -48.525658566619796, 30.212711159868686,
};
/* erfc(x)exp(x^2): degree 14 on [0.5, 1.0], in t = x - 0.75, fit error 8.93e-20, cond 1.44 */
static const double ERFC_H[15] = {
    0.5069376502931449, -0.3679726916557954, 0.2309581315512983,
    -0.12983606199487813, 0.06679054252756783, -0.03189726204019368,
    0.014289198666091785, -0.006051532258236163, 0.002437637348879293,
    -0.0009385135840131843, 0.00034675112699586235, -0.00012332254905491935,
    4.236277872839012e-05, -1.4426531927022256e-05, 4.6468063021709155e-06,
};
/* exp table: 2^(j/32) = hi + lo */
static const double EXP_T[32][2] = {
    {1.0, 0.0},
    {1.0218971486541166, 5.109225028973444e-17},
    {1.0442737824274138, 8.551889705537965e-17},
    {1.0671404006768237, -7.899853966841582e-17},
    {1.0905077326652577, -3.046782079812471e-17},
    {1.1143867425958924, 1.0410278456845571e-16},
    {1.1387886347566916, 8.912812676025408e-17},
    {1.1637248587775775, 3.8292048369240935e-17},
    {1.189207115002721, 3.982015231465646e-17},
    {1.215247359980469, -7.712630692681488e-17},
    {1.241857812073484, 4.658027591836937e-17},
    {1.2690509571917332, 2.667932131342186e-18},
    {1.2968395546510096, 2.5382502794888315e-17},
    {1.3252366431597413, -2.8587312100388614e-17},
    {1.3542555469368927, 7.70094837980299e-17},
    {1.383909881963832, -6.770511658794786e-17},
    {1.4142135623730951, -9.667293313452913e-17},
    {1.4451808069770467, -3.0237581349939873e-17},
    {1.4768261459394993, -3.483994556892796e-17},
    {1.5091644275934228, -1.016455327754295e-16},
    {1.5422108254079407, 7.949834809697621e-17},
    {1.5759808451078865, -1.0136916471278304e-17},
    {1.6104903319492543, 2.4707192569797888e-17},
    {1.645755478153965, -1.0125679913674773e-16},
    {1.681792830507429, 8.199010020581497e-17},
    {1.718619298122478, -1.851380418263111e-17},
    {1.7562521603732995, 2.960140695448873e-17},
    {1.7947090750031072, 1.8227458427912087e-17},
    {1.8340080864093424, 3.283107224245627e-17},
    {1.8741676341103, -6.122763413004143e-17},
    {1.9152065613971474, -1.0619946056195963e-16},
    {1.9571441241754002, 8.960767791036668e-17},
};
#define LN2_32_HI 0.021660849392446835
#define LN2_32_LO 5.145609244655338e-14
#define INV_LN2_32 46.16624130844683
#define LN2_HI 0.6931471805598903
#define LN2_LO 5.497923018708371e-14
#define LN2_D 0.6931471805599453
#define LOG2E_D 1.4426950408889634
#define TWO_THIRDS_HI 0.6666666666666666
#define TWO_THIRDS_LO 3.700743415417188e-17
#define PIO2_HI 1.5707963267948966
#define PIO2_LO 6.123233995736766e-17
#define PI_HI 3.141592653589793
#define PI_LO 1.2246467991473532e-16
#define PIO4_HI 0.7853981633974483
#define PIO4_LO 3.061616997868383e-17
#define PI3O4_HI 2.356194490192345
#define PI3O4_LO 9.184850993605148e-17
#define INV_PIO2 0.6366197723675814
#define PIO2_1 1.5707963267341256
#define PIO2_2 6.077100506303966e-11
#define PIO2_3 2.0222662487111665e-21
#define PIO2_4 8.4784276603689e-32
#define PIO2_3F 2.0222662487959506e-21 /* PIO2_3 + PIO2_4 */
/* atan(j/16) = hi + lo, j = 0..16 */
static const double ATAN_T[17][2] = {
    {0.0, 0.0},
    {0.06241880999595735, -1.5490756308295046e-18},
    {0.12435499454676144, -3.1253241424539383e-18},
    {0.18534794999569476, 4.180692268843079e-18},
    {0.24497866312686414, 1.0698755618734451e-17},
    {0.3028848683749714, -1.1010827903001369e-17},
    {0.35877067027057225, -2.4623815582638635e-17},
    {0.4124104415973873, -1.587652227770689e-17},
    {0.4636476090008061, 2.2698777452961687e-17},
    {0.5123894603107377, -2.5462781472855804e-17},
    {0.5585993153435624, -5.4556305485916264e-18},
    {0.6022873461349642, 2.950430737228402e-17},
    {0.6435011087932844, 1.5834785051444286e-17},
    {0.6823165548747481, 6.943223671560008e-18},
    {0.7188299996216245, -2.1478388444456983e-17},
    {0.7531512809621944, -2.4256934659182068e-17},
    {0.7853981633974483, 3.061616997868383e-17},
};
#define INV_SQRTPI 0.5641895835477563
/* 2/pi = sum TWO_OVER_PI[n] 2^(-32(n+1)) */
static const uint32_t TWO_OVER_PI[40] = {
    0xA2F9836E, 0x4E441529, 0xFC2757D1, 0xF534DDC0, 0xDB629599, 0x3C439041,
    0xFE5163AB, 0xDEBBC561, 0xB7246E3A, 0x424DD2E0, 0x06492EEA, 0x09D1921C,
    0xFE1DEB1C, 0xB129A73E, 0xE88235F5, 0x2EBB4484, 0xE99C7026, 0xB45F7E41,
    0x3991D639, 0x835339F4, 0x9C845F8B, 0xBDF9283B, 0x1FF897FF, 0xDE05980F,
    0xEF2F118B, 0x5A0A6D1F, 0x6D367ECF, 0x27CB09B7, 0x4F463F66, 0x9E5FEA2D,
    0x7527BAC7, 0xEBE5F17B, 0x3D0739F7, 0x8A5292EA, 0x6BFB5FB1, 0x1F8D5D08,
    0x56033046, 0xFC7B6BAB, 0xF0CFBC20, 0x9AF4361D,
};

#define SQRT2_D 1.4142135623730951

/* ------------------------------------------------------------ helpers */

static inline uint64_t dbits(double x) {
  uint64_t u;
  memcpy(&u, &x, sizeof u);
  return u;
}
static inline double bitsd(uint64_t u) {
  double x;
  memcpy(&x, &u, sizeof x);
  return x;
}
/* 2^m for -1022 <= m <= 1023. */
static inline double pow2i(int m) { return bitsd((uint64_t)(m + 1023) << 52); }

/* v * 2^m with a single rounding (subnormal results) and overflow to inf. */
static double scale2(double v, int m) {
  if (m >= -1021 && m <= 1022) return v * pow2i(m);
  if (m > 1022) return v * pow2i(1022) * pow2i(m - 1022 > 1023 ? 1023 : m - 1022);
  return v * pow2i(m + 1000 < -1022 ? -1022 : m + 1000) * pow2i(-1000);
}

/* a + b = s + *err exactly. */
static inline double two_sum(double a, double b, double *err) {
  double s = a + b;
  double bb = s - a;
  *err = (a - (s - bb)) + (b - bb);
  return s;
}
/* Same when |a| >= |b|. */
static inline double fast_two_sum(double a, double b, double *err) {
  double s = a + b;
  *err = b - (s - a);
  return s;
}
/* Veltkamp split: a = hi + lo, both with <= 26 significant bits. */
static inline void split(double a, double *hi, double *lo) {
  double c = 134217729.0 * a; /* 2^27 + 1 */
  *hi = c - (c - a);
  *lo = a - *hi;
}
/* a * b = p + *err exactly (Dekker; |a|, |b| < 2^996). */
static inline double two_prod(double a, double b, double *err) {
  double p = a * b, ah, al, bh, bl;
  split(a, &ah, &al);
  split(b, &bh, &bl);
  *err = ((ah * bh - p) + ah * bl + al * bh) + al * bl;
  return p;
}

static inline double horner(const double *c, int n, double x) {
  double r = c[n - 1];
  for (int i = n - 2; i >= 0; i--) r = r * x + c[i];
  return r;
}
#define HORNER(c, x) horner((c), (int)(sizeof(c) / sizeof((c)[0])), (x))
#define HORNER2(c, n, x) horner((c), (n), (x))

/* ------------------------------------------------------------ exp */

/* exp(xh + xl) = 2^m * (*vh + *vl), |xh| <= 746. */
static int exp_reduce(double xh, double xl, double *vh, double *vl) {
  double kd = rint(xh * INV_LN2_32);
  int k = (int)kd;
  double r0 = xh - kd * LN2_32_HI; /* exact */
  double e1;
  double rh = two_sum(r0, -(kd * LN2_32_LO), &e1);
  double rl = e1 + xl;
  /* expm1(r), |r| <= 0.0109: Taylor to degree 6 (error < 4e-18). */
  double q = rh * rh * (0.5 + rh * (1.0 / 6 + rh * (1.0 / 24 + rh * (1.0 / 120 + rh * (1.0 / 720)))));
  double p = rh + (q + rl * (1.0 + rh + q)); /* exp(rh + rl) - 1 */
  int j = k & 31;
  *vh = EXP_T[j][0];
  *vl = EXP_T[j][1] + EXP_T[j][0] * p;
  return (k - j) / 32;
}

double ol_exp(double x) {
  if (isnan(x)) return x + x;
  if (x > 710.0) return INFINITY;
  if (x < -746.0) return 0.0;
  double vh, vl;
  int m = exp_reduce(x, 0.0, &vh, &vl);
  return scale2(vh + vl, m);
}

double ol_expm1(double x) {
  if (isnan(x)) return x + x;
  if (x > 710.0) return INFINITY;
  if (x < -38.0) return -1.0;
  double ax = fabs(x);
  if (ax < 0x1p-54) return x;
  if (ax < 0.3465) return x + (x * x * 0.5 + x * x * x * HORNER(EXPM1_Q, x));
  double vh, vl;
  int m = exp_reduce(x, 0.0, &vh, &vl);
  if (m > 1020) return scale2(vh + vl, m);
  double s = pow2i(m);
  return (vh * s - 1.0) + vl * s;
}

/* ------------------------------------------------------------ log */

/* log(x) = result + *lo for finite x > 0 (relative error ~2^-68). */
static double log_dd(double x, double *lo) {
  uint64_t u = dbits(x);
  int e = (int)(u >> 52) - 1023;
  if ((u >> 52) == 0) { /* subnormal */
    u = dbits(x * 0x1p54);
    e = (int)(u >> 52) - 1023 - 54;
  }
  double m = bitsd((u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (m > SQRT2_D) {
    m *= 0.5;
    e++;
  }
  double f = m - 1.0; /* exact, |f| <= 0.415 */
  /* s = f / (2 + f) as sh + sl */
  double dh = 2.0 + f, dl = f - (dh - 2.0);
  double sh = f / dh, pe;
  double p = two_prod(sh, dh, &pe);
  double sl = (((f - p) - pe) - sh * dl) / dh;
  /* log(m) = 2s + (2/3)s^3 + 2 s^5 g(s^2) */
  double zl, zh = two_prod(sh, sh, &zl);
  double cl, ch = two_prod(sh, zh, &cl); /* s^3 */
  cl += sh * zl + 3.0 * zh * sl;
  double bl, bh = two_prod(TWO_THIRDS_HI, ch, &bl);
  bl += TWO_THIRDS_LO * ch + TWO_THIRDS_HI * cl;
  double tail = 2.0 * sh * zh * zh * HORNER(LOG_G, zh);
  double l1, h = fast_two_sum(2.0 * sh, bh, &l1);
  l1 += 2.0 * sl + bl + tail;
  double ed = (double)e, l2;
  double H = two_sum(ed * LN2_HI, h, &l2);
  l2 += l1 + ed * LN2_LO;
  double r = H + l2;
  *lo = l2 - (r - H);
  return r;
}

double ol_log(double x) {
  if (isnan(x)) return x + x;
  if (x < 0.0) return NAN;
  if (x == 0.0) return -INFINITY;
  if (isinf(x)) return x;
  double lo;
  return log_dd(x, &lo);
}

double ol_log1p(double x) {
  if (isnan(x)) return x + x;
  if (x < -1.0) return NAN;
  if (x == -1.0) return -INFINITY;
  if (isinf(x)) return x;
  if (fabs(x) < 0x1p-54) return x;
  double u = 1.0 + x;
  double c = x - (u - 1.0); /* rounding error of 1 + x */
  double lo, lh = log_dd(u, &lo);
  return lh + (lo + c / u);
}

/* ------------------------------------------------------------ pow */

static int is_odd_integer(double y) {
  return fabs(y) < 0x1p53 && floor(y) == y && floor(y * 0.5) != y * 0.5;
}

double ol_pow(double x, double y) {
  if (y == 0.0 || x == 1.0) return 1.0;
  if (isnan(x) || isnan(y)) return x + y;
  double ax = fabs(x);
  if (isinf(y)) {
    if (ax == 1.0) return 1.0;
    return ((ax > 1.0) == (y > 0.0)) ? INFINITY : 0.0;
  }
  int y_int = floor(y) == y, y_odd = is_odd_integer(y);
  if (isinf(x) || x == 0.0) {
    /* pow(+-0, y) and pow(+-inf, y): the result is 0 or inf, signed when
     * x is negative and y an odd integer. */
    int big = (x == 0.0) == (y < 0.0);
    double r = big ? INFINITY : 0.0;
    return (signbit(x) && y_odd) ? -r : r;
  }
  if (x < 0.0 && !y_int) return NAN;
  double sign = (x < 0.0 && y_odd) ? -1.0 : 1.0;
  if (ax == 1.0) return sign;
  /* Exact (correctly rounded) shortcuts. */
  if (y == 1.0) return x;
  if (y == 2.0) return x * x;
  if (y == -1.0) return 1.0 / x;
  if (y == 0.5) return sqrt(x);
  double lo, lh = log_dd(ax, &lo);
  double wh = y * lh;
  if (wh > 710.0) return sign * INFINITY;
  if (wh < -746.0) return sign * 0.0;
  double wl;
  wh = two_prod(y, lh, &wl);
  wl += y * lo;
  double vh, vl;
  int m = exp_reduce(wh, wl, &vh, &vl);
  return sign * scale2(vh + vl, m);
}

/* ------------------------------------------------------------ sin, cos, tan */

/* Payne-Hanek: x = n pi/2 + (*rh + *rl), |r| <= pi/4, for finite |x| >= 2^20.
 * x = M 2^ex (M a 53-bit integer); only the bits of 2/pi that reach the
 * fractional part and the two quadrant bits are multiplied. */
static int rem_pio2_large(double x, double *rh, double *rl) {
  uint64_t u = dbits(fabs(x));
  int ex = (int)(u >> 52) - 1075;
  uint64_t M = (u & 0x000FFFFFFFFFFFFFull) | 0x0010000000000000ull;
  int n0 = ex - 2 >= 0 ? (ex - 2) / 32 : 0;
  uint64_t mw[2] = {M & 0xFFFFFFFFu, M >> 32};
  uint32_t p[9] = {0};
  for (int i = 0; i < 7; i++) { /* little-endian limb i of 2/pi's window */
    uint64_t w = TWO_OVER_PI[n0 + 6 - i], carry = 0;
    for (int j = 0; j < 2; j++) {
      uint64_t t = w * mw[j] + p[i + j] + carry;
      p[i + j] = (uint32_t)t;
      carry = t >> 32;
    }
    p[i + 2] = (uint32_t)carry;
  }
  int S = 32 * (n0 + 7) - ex; /* fraction bits of p: 191..256 */
  /* 128 fraction bits below the binary point, and the quadrant above it. */
  uint32_t fw[4];
  for (int k = 0; k < 4; k++) {
    int pos = S - 32 * (k + 1); /* lowest bit of this word */
    int li = pos >> 5, sh = pos & 31;
    uint64_t lo = li < 9 ? p[li] : 0, hi = li + 1 < 9 ? p[li + 1] : 0;
    fw[k] = (uint32_t)((((hi << 32) | lo) >> sh) & 0xFFFFFFFFu);
  }
  int li = S >> 5, sh = S & 31;
  uint64_t qlo = li < 9 ? p[li] : 0, qhi = li + 1 < 9 ? p[li + 1] : 0;
  int n = (int)((((qhi << 32) | qlo) >> sh) & 3);
  uint64_t fh = ((uint64_t)fw[0] << 32) | fw[1], fl = ((uint64_t)fw[2] << 32) | fw[3];
  int neg = 0;
  if (fh >> 63) { /* fraction >= 1/2: r = -(1 - fraction), next quadrant */
    fh = ~fh;
    fl = ~fl + 1;
    if (fl == 0) fh++;
    n++;
    neg = 1;
  }
  int shift = 0;
  while (shift < 120 && !(fh >> 63)) {
    fh = (fh << 1) | (fl >> 63);
    fl <<= 1;
    shift++;
  }
  double scale = pow2i(-64 - shift);
  double ah = (double)(fh & ~0x7FFull) * scale;
  double al = ((double)(fh & 0x7FFull) * 0x1p64 + (double)fl) * 0x1p-64 * scale;
  /* r = fraction * pi/2 */
  double e, h = two_prod(ah, PIO2_HI, &e);
  e += ah * PIO2_LO + al * PIO2_HI;
  double r = h + e;
  double rlo = e - (r - h);
  if (neg) {
    r = -r;
    rlo = -rlo;
  }
  if (x < 0) {
    r = -r;
    rlo = -rlo;
    n = -n;
  }
  *rh = r;
  *rl = rlo;
  return n;
}

/* x = n pi/2 + (*rh + *rl) for finite x. */
static int rem_pio2(double x, double *rh, double *rl) {
  if (fabs(x) <= PIO4_HI) {
    *rh = x;
    *rl = 0.0;
    return 0;
  }
  if (fabs(x) < 1.6e6) { /* k < 2^20: k * PIO2_{1,2,3} are exact */
    double kd = rint(x * INV_PIO2);
    double t1 = x - kd * PIO2_1; /* exact */
    double ea, a = two_sum(t1, -(kd * PIO2_2), &ea);
    double eb, b = two_sum(a, -(kd * PIO2_3), &eb);
    double lo = (ea + eb) - kd * PIO2_4;
    *rh = two_sum(b, lo, rl);
    return (int)kd;
  }
  return rem_pio2_large(x, rh, rl);
}

/* sin and cos of r = rh + rl, |r| <= pi/4 (+ a little). */
static double sin_kernel(double rh, double rl) {
  double z = rh * rh;
  return rh + (rh * (z * HORNER(SIN_S, z)) + rl * (1.0 - 0.5 * z));
}
static double cos_kernel(double rh, double rl) {
  double z = rh * rh, hz = 0.5 * z;
  double w = 1.0 - hz;
  double corr = (1.0 - w) - hz;
  return w + (corr + (z * z * HORNER(COS_C, z) - rh * rl));
}

double ol_sin(double x) {
  if (!isfinite(x)) return x - x;
  if (fabs(x) < 0x1p-26) return x;
  double rh, rl;
  switch (rem_pio2(x, &rh, &rl) & 3) {
    case 0: return sin_kernel(rh, rl);
    case 1: return cos_kernel(rh, rl);
    case 2: return -sin_kernel(rh, rl);
    default: return -cos_kernel(rh, rl);
  }
}

double ol_cos(double x) {
  if (!isfinite(x)) return x - x;
  if (fabs(x) < 0x1p-27) return 1.0;
  double rh, rl;
  switch (rem_pio2(x, &rh, &rl) & 3) {
    case 0: return cos_kernel(rh, rl);
    case 1: return -sin_kernel(rh, rl);
    case 2: return -cos_kernel(rh, rl);
    default: return sin_kernel(rh, rl);
  }
}

double ol_tan(double x) {
  if (!isfinite(x)) return x - x;
  if (fabs(x) < 0x1p-27) return x;
  double rh, rl;
  int n = rem_pio2(x, &rh, &rl);
  double s = sin_kernel(rh, rl), c = cos_kernel(rh, rl);
  return (n & 1) ? -c / s : s / c;
}

/* ------------------------------------------------------------ atan, asin, acos */

/* atan(a + al) = result + *lo for 0 <= a <= 1 (al tiny). */
static double atan_pos(double a, double al, double *lo) {
  static const double A[8] = {-1.0 / 3,  1.0 / 5,  -1.0 / 7,  1.0 / 9,
                              -1.0 / 11, 1.0 / 13, -1.0 / 15, 1.0 / 17};
  if (a < 3.0 / 32) {
    double z = a * a;
    double r = a + (al + a * z * HORNER(A, z));
    *lo = 0.0;
    return r;
  }
  /* atan(a) = atan(c) + atan(t), c = j/16, t = (a - c) / (1 + a c), |t| <= 1/32 */
  int j = (int)rint(a * 16.0);
  double c = j / 16.0;
  double nh = a - c; /* exact */
  double pe, p = two_prod(a, c, &pe);
  double de, dh = two_sum(1.0, p, &de);
  double dl = de + pe + al * c;
  double t = nh / dh, qe;
  double q = two_prod(t, dh, &qe);
  double tl = (((nh - q) - qe) - t * dl + al) / dh;
  double z = t * t;
  double se, s = two_sum(ATAN_T[j][0], t, &se);
  double l = se + (ATAN_T[j][1] + tl + t * z * HORNER(A, z));
  double r = s + l;
  *lo = l - (r - s);
  return r;
}

double ol_atan(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x), lo, r;
  if (ax <= 1.0) {
    r = atan_pos(ax, 0.0, &lo);
    r += lo;
  } else if (ax > 0x1p60) {
    r = PIO2_HI;
  } else {
    /* atan(x) = pi/2 - atan(1/x), 1/x as qh + ql */
    double qh = 1.0 / ax, pe;
    double p = two_prod(qh, ax, &pe);
    double ql = ((1.0 - p) - pe) / ax;
    double vh = atan_pos(qh, ql, &lo);
    double de, d = two_sum(PIO2_HI, -vh, &de);
    r = d + (de + (PIO2_LO - lo));
  }
  return copysign(r, x);
}

/* sqrt(w) = *sh + *sl */
static void sqrt_dd(double w, double *sh, double *sl) {
  double s = sqrt(w), pe;
  double p = two_prod(s, s, &pe);
  *sh = s;
  *sl = ((w - p) - pe) / (2.0 * s);
}

double ol_asin(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x);
  if (ax > 1.0) return NAN;
  if (ax < 0x1p-27) return x;
  if (ax <= 0.5) {
    double z = x * x;
    return x + x * z * HORNER(ASIN_P, z);
  }
  /* asin(a) = pi/2 - 2 asin(sqrt((1 - a)/2)) */
  double w = (1.0 - ax) * 0.5, r;
  if (w == 0.0) {
    r = PIO2_HI;
  } else {
    double sh, sl;
    sqrt_dd(w, &sh, &sl);
    double al = sl + sh * w * HORNER(ASIN_P, w);
    double re, rh = two_sum(PIO2_HI, -2.0 * sh, &re);
    r = rh + (re + (PIO2_LO - 2.0 * al));
  }
  return copysign(r, x);
}

double ol_acos(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x);
  if (ax > 1.0) return NAN;
  if (ax <= 0.5) {
    if (ax < 0x1p-57) return PIO2_HI;
    double z = x * x;
    double de, d = two_sum(PIO2_HI, -x, &de);
    return d + (de + (PIO2_LO - x * z * HORNER(ASIN_P, z)));
  }
  /* acos(x) = 2 asin(sqrt((1 - x)/2)), acos(-x) = pi - acos(x) */
  double w = (1.0 - ax) * 0.5;
  double sh = 0.0, sl = 0.0;
  if (w != 0.0) sqrt_dd(w, &sh, &sl);
  double al = sl + sh * w * HORNER(ASIN_P, w);
  if (x > 0.0) return 2.0 * sh + 2.0 * al;
  double re, rh = two_sum(PI_HI, -2.0 * sh, &re);
  return rh + (re + (PI_LO - 2.0 * al));
}

/* ------------------------------------------------------------ hyperbolic */

double ol_sinh(double x) {
  if (!isfinite(x)) return x + x;
  double ax = fabs(x), r;
  if (ax < 0x1p-28) return x;
  if (ax < 22.0) {
    double t = ol_expm1(ax);
    r = ax < 1.0 ? 0.5 * (2.0 * t - t * t / (t + 1.0)) : 0.5 * (t + t / (t + 1.0));
  } else if (ax < 709.0) {
    r = 0.5 * ol_exp(ax);
  } else {
    double w = ol_exp(0.5 * ax);
    r = (0.5 * w) * w;
  }
  return copysign(r, x);
}

double ol_cosh(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x);
  if (isinf(x)) return INFINITY;
  if (ax < 0x1p-27) return 1.0;
  if (ax < 0.3465) {
    double t = ol_expm1(ax), w = 1.0 + t;
    return 1.0 + (t * t) / (w + w);
  }
  if (ax < 22.0) {
    double t = ol_exp(ax);
    return 0.5 * t + 0.5 / t;
  }
  if (ax < 709.0) return 0.5 * ol_exp(ax);
  double w = ol_exp(0.5 * ax);
  return (0.5 * w) * w;
}

double ol_tanh(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x), r;
  if (ax < 0x1p-55) return x;
  if (ax < 0.55) {
    double z = x * x;
    return x + x * z * HORNER(TANH_T, z);
  }
  if (ax < 22.0) {
    /* tanh(a) = 1 - 2E/(1 + E), E = exp(-2a) <= 1/3 */
    double vh, vl;
    int m = exp_reduce(-2.0 * ax, 0.0, &vh, &vl);
    double E = (vh + vl) * pow2i(m);
    r = 1.0 - 2.0 * E / (1.0 + E);
  } else {
    r = 1.0;
  }
  return copysign(r, x);
}

double ol_asinh(double x) {
  if (!isfinite(x)) return x + x;
  double ax = fabs(x), r;
  if (ax < 0x1p-28) return x;
  if (ax > 0x1p28) {
    double lo, lh = log_dd(ax, &lo);
    r = lh + (lo + LN2_D);
  } else if (ax > 2.0) {
    r = ol_log(2.0 * ax + 1.0 / (sqrt(ax * ax + 1.0) + ax));
  } else {
    double t = ax * ax;
    r = ol_log1p(ax + t / (1.0 + sqrt(1.0 + t)));
  }
  return copysign(r, x);
}

double ol_acosh(double x) {
  if (isnan(x)) return x + x;
  if (x < 1.0) return NAN;
  if (isinf(x)) return x;
  if (x > 0x1p28) {
    double lo, lh = log_dd(x, &lo);
    return lh + (lo + LN2_D);
  }
  if (x > 2.0) return ol_log(2.0 * x - 1.0 / (x + sqrt(x * x - 1.0)));
  double t = x - 1.0;
  return ol_log1p(t + sqrt(2.0 * t + t * t));
}

double ol_atanh(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x), r;
  if (ax > 1.0) return NAN;
  if (ax == 1.0) return copysign(INFINITY, x);
  if (ax < 0x1p-28) return x;
  if (ax < 0.5) {
    double t = ax + ax;
    r = 0.5 * ol_log1p(t + t * ax / (1.0 - ax));
  } else {
    r = 0.5 * ol_log1p((ax + ax) / (1.0 - ax));
  }
  return copysign(r, x);
}

/* ------------------------------------------------------------ erf */

/* erfc(a) = exp(-a^2) R(a) for 0.5 <= a < 27.3 (below 2^-1074 beyond). */
static double erfc_pos(double a) {
  double qe, q = two_prod(a, a, &qe);
  double vh, vl;
  int m = exp_reduce(-q, -qe, &vh, &vl);
  double R;
  if (a < 1.0) {
    R = HORNER(ERFC_H, a - 0.75);
  } else if (a < 2.0) {
    R = HORNER(ERFC_A, a - 1.5);
  } else if (a < 3.5) {
    R = HORNER(ERFC_B, a - 2.75);
  } else {
    double u = 1.0 / a;
    R = HORNER2(a < 6.0 ? ERFC_C : ERFC_D, a < 6.0 ? 13 : 14, u - (a < 6.0 ? 0.225 : 0.1)) * u;
  }
  return scale2((vh + vl) * R, m);
}

double ol_erf(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x);
  if (ax < 1.0) return x + x * HORNER(ERF_P, x * x);
  if (ax >= 6.0) return copysign(1.0, x);
  return copysign(1.0 - erfc_pos(ax), x);
}

double ol_erfc(double x) {
  if (isnan(x)) return x + x;
  double ax = fabs(x);
  if (ax < 0.5) return 1.0 - (x + x * HORNER(ERF_P, x * x));
  if (x >= 27.3) return 0.0;
  if (x <= -6.0) return 2.0;
  double e = erfc_pos(ax);
  return x > 0 ? e : 2.0 - e;
}

/* ------------------------------------------------------------ float versions */

/* exp(d) in double, relative error ~5e-11, for -104 <= d <= 89. */
static inline double expf_core(double d) {
  double kd = rint(d * LOG2E_D);
  double r = (d - kd * LN2_HI) - kd * LN2_LO;
  return HORNER(EXPF_P, r) * pow2i((int)kd);
}

float ol_expf(float x) {
  if (isnan(x)) return x + x;
  if (x > 89.0f) return INFINITY;
  if (x < -104.0f) return 0.0f;
  return (float)expf_core(x);
}

/* ol_expf on four lanes with exactly ol_expf's operations: the reduction
 * and polynomial in double (two f64 lanes at a time), rint(t) as
 * (t + 1.5 2^52) - 1.5 2^52 (the same integer for |t| < 2^51, ties to
 * even), 2^k from the integer in that sum's low bits, one rounding to
 * float; NaN, overflow and underflow lanes are selected afterwards. SSE2
 * and wasm SIMD128 give the same bits as the scalar function on every input
 * (tests/c/test_math.c). */
#define EXPF_RINT_MAGIC 6755399441055744.0 /* 1.5 * 2^52 */
#if defined(__wasm_simd128__)
/* expf_x4k's constants, made once per call of ol_expf_n with
 * ol_i32x4_opaque (simd/vec.h): V8 would rebuild a v128.const at every use
 * inside the loop (three instructions apiece); these stay in registers or
 * come back from the stack in one. */
typedef struct expf_consts {
  v128_t magic, log2e, ln2_hi, ln2_lo, p[8], bias, big, small, inf;
} expf_consts;
static inline expf_consts expf_constants(void) {
  expf_consts k;
  k.magic = ol_i32x4_opaque(wasm_f64x2_splat(EXPF_RINT_MAGIC));
  k.log2e = ol_i32x4_opaque(wasm_f64x2_splat(LOG2E_D));
  k.ln2_hi = ol_i32x4_opaque(wasm_f64x2_splat(LN2_HI));
  k.ln2_lo = ol_i32x4_opaque(wasm_f64x2_splat(LN2_LO));
  for (int i = 0; i < 8; i++) k.p[i] = ol_i32x4_opaque(wasm_f64x2_splat(EXPF_P[i]));
  k.bias = ol_i32x4_opaque(wasm_i64x2_splat(1023));
  k.big = ol_i32x4_opaque(wasm_f32x4_splat(89.0f));
  k.small = ol_i32x4_opaque(wasm_f32x4_splat(-104.0f));
  k.inf = ol_i32x4_opaque(wasm_f32x4_splat(INFINITY));
  return k;
}
static inline v128_t expf_core_f64x2(v128_t d, const expf_consts *k) {
  v128_t t = wasm_f64x2_add(wasm_f64x2_mul(d, k->log2e), k->magic);
  v128_t kd = wasm_f64x2_sub(t, k->magic);
  v128_t r = wasm_f64x2_sub(wasm_f64x2_sub(d, wasm_f64x2_mul(kd, k->ln2_hi)), wasm_f64x2_mul(kd, k->ln2_lo));
  v128_t p = k->p[7];
  for (int i = 6; i >= 0; i--) p = wasm_f64x2_add(wasm_f64x2_mul(p, r), k->p[i]);
  v128_t scale = wasm_i64x2_shl(wasm_i64x2_add(t, k->bias), 52);
  return wasm_f64x2_mul(p, scale);
}
static inline void expf_x4k(float *out, const float *in, const expf_consts *k) {
  v128_t x = wasm_v128_load(in);
  v128_t nan = wasm_f32x4_ne(x, x);
  v128_t big = wasm_f32x4_gt(x, k->big);
  v128_t small = wasm_f32x4_lt(x, k->small);
  v128_t xc = wasm_v128_andnot(x, wasm_v128_or(nan, wasm_v128_or(big, small)));
  v128_t lo = expf_core_f64x2(wasm_f64x2_promote_low_f32x4(xc), k);
  v128_t hi = expf_core_f64x2(wasm_f64x2_promote_low_f32x4(wasm_i32x4_shuffle(xc, xc, 2, 3, 2, 3)), k);
  v128_t y = wasm_i64x2_shuffle(wasm_f32x4_demote_f64x2_zero(lo), wasm_f32x4_demote_f64x2_zero(hi), 0, 2);
  y = wasm_v128_bitselect(wasm_f32x4_add(x, x), y, nan);
  y = wasm_v128_bitselect(k->inf, y, big);
  wasm_v128_store(out, wasm_v128_andnot(y, small));
}
#define OL_EXPF_X4 1
#elif defined(__SSE2__)
static inline __m128d expf_core_f64x2(__m128d d) {
  __m128d magic = _mm_set1_pd(EXPF_RINT_MAGIC);
  __m128d t = _mm_add_pd(_mm_mul_pd(d, _mm_set1_pd(LOG2E_D)), magic);
  __m128d kd = _mm_sub_pd(t, magic);
  __m128d r = _mm_sub_pd(_mm_sub_pd(d, _mm_mul_pd(kd, _mm_set1_pd(LN2_HI))),
                         _mm_mul_pd(kd, _mm_set1_pd(LN2_LO)));
  __m128d p = _mm_set1_pd(EXPF_P[7]);
  for (int i = 6; i >= 0; i--) p = _mm_add_pd(_mm_mul_pd(p, r), _mm_set1_pd(EXPF_P[i]));
  __m128i e = _mm_slli_epi64(_mm_add_epi64(_mm_castpd_si128(t), _mm_set1_epi64x(1023)), 52);
  return _mm_mul_pd(p, _mm_castsi128_pd(e));
}
static inline void expf_x4(float *out, const float *in) {
  __m128 x = _mm_loadu_ps(in);
  __m128 nan = _mm_cmpunord_ps(x, x);
  __m128 big = _mm_cmpgt_ps(x, _mm_set1_ps(89.0f));
  __m128 small = _mm_cmplt_ps(x, _mm_set1_ps(-104.0f));
  __m128 xc = _mm_andnot_ps(_mm_or_ps(nan, _mm_or_ps(big, small)), x);
  __m128d lo = expf_core_f64x2(_mm_cvtps_pd(xc));
  __m128d hi = expf_core_f64x2(_mm_cvtps_pd(_mm_movehl_ps(xc, xc)));
  __m128 y = _mm_movelh_ps(_mm_cvtpd_ps(lo), _mm_cvtpd_ps(hi));
  y = _mm_or_ps(_mm_and_ps(nan, _mm_add_ps(x, x)), _mm_andnot_ps(nan, y));
  y = _mm_or_ps(_mm_and_ps(big, _mm_set1_ps(INFINITY)), _mm_andnot_ps(big, y));
  _mm_storeu_ps(out, _mm_andnot_ps(small, y));
}
#define OL_EXPF_X4 1
#endif

/* out[i] = f(in[i]) for i < n, four lanes at a time through x4 (NULL: the
 * ISA has no vectors); inlined with both functions known. */
static inline __attribute__((always_inline)) void map_x4(float *out, const float *in, int64_t n,
                                                         void (*x4)(float *, const float *), float (*f)(float)) {
  int64_t i = 0;
  if (x4)
    for (; i + 4 <= n; i += 4) x4(out + i, in + i);
  for (; i < n; i++) out[i] = f(in[i]);
}
#ifdef OL_EXPF_X4 /* the vector ISAs, which also have expf_fast_x4 (below) */
#define X4(f) f
#else
#define X4(f) NULL
#endif

void ol_expf_n(float *out, const float *in, int64_t n) {
#if defined(__wasm_simd128__)
  const expf_consts k = expf_constants();
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) expf_x4k(out + i, in + i, &k);
  for (; i < n; i++) out[i] = ol_expf(in[i]);
#else
  map_x4(out, in, n, X4(expf_x4), ol_expf);
#endif
}

/* ------------------------------------------------------------ exp of x <= 0 in float */

/* e^x for -104 <= x <= 0 in float arithmetic: x = n ln2 + r with n =
 * rint(x log2e) (magic-number rounding, ties to even) and ln2 in two parts
 * (n * LN2F_HI is exact), e^r by a degree-7 polynomial in the form
 * 1 + r + r^2 p(r) (Cephes' expf coefficients), times 2^(n + 24) from the
 * exponent bits (exact), times 2^-24 (one rounding, so results below 2^-126
 * round to the right subnormal). Every operation is an IEEE float one in a
 * fixed order, so vector lanes and the scalar function give the same bits. */
#define EXPF_FAST_MAGIC 12582912.0f /* 1.5 * 2^23 */
#define EXPF_FAST_LOG2E 1.44269504f
#define LN2F_HI 0.693359375f
#define LN2F_LO -2.12194440e-4f
#define EXPF_FAST_P0 5.0000001201e-1f
#define EXPF_FAST_P1 1.6666665459e-1f
#define EXPF_FAST_P2 4.1665795894e-2f
#define EXPF_FAST_P3 8.3334519073e-3f
#define EXPF_FAST_P4 1.3981999507e-3f
#define EXPF_FAST_P5 1.9875691500e-4f
static const float EXPF_FAST_P[6] = {EXPF_FAST_P0, EXPF_FAST_P1, EXPF_FAST_P2, EXPF_FAST_P3, EXPF_FAST_P4, EXPF_FAST_P5};

static inline float expf_fast_core(float x) {
  float t = x * EXPF_FAST_LOG2E + EXPF_FAST_MAGIC;
  float n = t - EXPF_FAST_MAGIC;
  float r = (x - n * LN2F_HI) - n * LN2F_LO;
  float p = EXPF_FAST_P[5];
  for (int i = 4; i >= 0; i--) p = p * r + EXPF_FAST_P[i];
  float y = (p * (r * r) + r) + 1.0f;
  /* t's low mantissa bits hold n (t = 1.5 * 2^23 + n): the shift drops
   * the rest, so this is (n + 127 + 24) << 23 */
  uint32_t bits;
  memcpy(&bits, &t, sizeof bits);
  uint32_t scale = (bits + 127 + 24) << 23;
  float f;
  memcpy(&f, &scale, sizeof f);
  return y * f * 0x1p-24f;
}

float ol_expf_fast(float x) {
  if (!(x <= 0.0f)) return ol_expf(x); /* NaN and x > 0 */
  if (x < -104.0f) return 0.0f;
  return expf_fast_core(x);
}

#if defined(__wasm_simd128__)
/* expf_fast_x4's constants as memory operands: a v128.const is built anew
 * at every use in V8's code (three instructions apiece, about a third of
 * the function), a load from memory is one instruction or none (folded
 * into the arithmetic). The table is writable so that the compiler cannot
 * turn its loads back into constants; nothing writes it. */
enum { EXPF_LOWEST, EXPF_MAGIC, EXPF_LOG2E, EXPF_LN2_HI, EXPF_LN2_LO, EXPF_P0, EXPF_ONE = EXPF_P0 + 6, EXPF_BIAS, EXPF_UNSCALE, EXPF_CONSTS };
#define EXPF_F(c) ((v128_t)(__f32x4){c, c, c, c})
extern v128_t ol_expf_fast_consts[EXPF_CONSTS];
v128_t ol_expf_fast_consts[EXPF_CONSTS] = {
    EXPF_F(-104.0f),      EXPF_F(EXPF_FAST_MAGIC), EXPF_F(EXPF_FAST_LOG2E), EXPF_F(LN2F_HI),
    EXPF_F(LN2F_LO),      EXPF_F(EXPF_FAST_P0),    EXPF_F(EXPF_FAST_P1),    EXPF_F(EXPF_FAST_P2),
    EXPF_F(EXPF_FAST_P3), EXPF_F(EXPF_FAST_P4),    EXPF_F(EXPF_FAST_P5),    EXPF_F(1.0f),
    (v128_t)(__i32x4){127 + 24, 127 + 24, 127 + 24, 127 + 24}, EXPF_F(0x1p-24f)};
#define EXPF_K(i) (ol_expf_fast_consts[i])

static inline void expf_fast_x4(float *out, const float *in) {
  v128_t x = wasm_v128_load(in);
  if (wasm_v128_any_true(wasm_v128_not(wasm_f32x4_le(x, wasm_f32x4_splat(0.0f))))) {
    for (int i = 0; i < 4; i++) out[i] = ol_expf_fast(in[i]);
    return;
  }
  v128_t small = wasm_f32x4_lt(x, EXPF_K(EXPF_LOWEST));
  x = wasm_f32x4_pmax(x, EXPF_K(EXPF_LOWEST));
  v128_t t = wasm_f32x4_add(wasm_f32x4_mul(x, EXPF_K(EXPF_LOG2E)), EXPF_K(EXPF_MAGIC));
  v128_t n = wasm_f32x4_sub(t, EXPF_K(EXPF_MAGIC));
  v128_t r = wasm_f32x4_sub(wasm_f32x4_sub(x, wasm_f32x4_mul(n, EXPF_K(EXPF_LN2_HI))), wasm_f32x4_mul(n, EXPF_K(EXPF_LN2_LO)));
  v128_t p = EXPF_K(EXPF_P0 + 5);
  for (int i = 4; i >= 0; i--) p = wasm_f32x4_add(wasm_f32x4_mul(p, r), EXPF_K(EXPF_P0 + i));
  v128_t y = wasm_f32x4_add(wasm_f32x4_add(wasm_f32x4_mul(p, wasm_f32x4_mul(r, r)), r), EXPF_K(EXPF_ONE));
  v128_t scale = wasm_i32x4_shl(wasm_i32x4_add(t, EXPF_K(EXPF_BIAS)), 23); /* as expf_fast_core */
  v128_t e = wasm_f32x4_mul(wasm_f32x4_mul(y, scale), EXPF_K(EXPF_UNSCALE));
  wasm_v128_store(out, wasm_v128_andnot(e, small));
}
#elif defined(__SSE2__)
static inline void expf_fast_x4(float *out, const float *in) {
  __m128 x = _mm_loadu_ps(in);
  if (_mm_movemask_ps(_mm_cmpnle_ps(x, _mm_setzero_ps()))) { /* NaN or x > 0 */
    for (int i = 0; i < 4; i++) out[i] = ol_expf_fast(in[i]);
    return;
  }
  __m128 small = _mm_cmplt_ps(x, _mm_set1_ps(-104.0f));
  x = _mm_max_ps(x, _mm_set1_ps(-104.0f));
  __m128 magic = _mm_set1_ps(EXPF_FAST_MAGIC);
  __m128 t = _mm_add_ps(_mm_mul_ps(x, _mm_set1_ps(EXPF_FAST_LOG2E)), magic);
  __m128 n = _mm_sub_ps(t, magic);
  __m128 r = _mm_sub_ps(_mm_sub_ps(x, _mm_mul_ps(n, _mm_set1_ps(LN2F_HI))), _mm_mul_ps(n, _mm_set1_ps(LN2F_LO)));
  __m128 p = _mm_set1_ps(EXPF_FAST_P[5]);
  for (int i = 4; i >= 0; i--) p = _mm_add_ps(_mm_mul_ps(p, r), _mm_set1_ps(EXPF_FAST_P[i]));
  __m128 y = _mm_add_ps(_mm_add_ps(_mm_mul_ps(p, _mm_mul_ps(r, r)), r), _mm_set1_ps(1.0f));
  __m128i e = _mm_slli_epi32(_mm_add_epi32(_mm_castps_si128(t), _mm_set1_epi32(127 + 24)), 23); /* as expf_fast_core */
  __m128 v = _mm_mul_ps(_mm_mul_ps(y, _mm_castsi128_ps(e)), _mm_set1_ps(0x1p-24f));
  _mm_storeu_ps(out, _mm_andnot_ps(small, v));
}
#endif

void ol_expf_fast_n(float *out, const float *in, int64_t n) { map_x4(out, in, n, X4(expf_fast_x4), ol_expf_fast); }

float ol_logf(float x) {
  if (isnan(x)) return x + x;
  if (x < 0.0f) return NAN;
  if (x == 0.0f) return -INFINITY;
  if (isinf(x)) return x;
  uint64_t u = dbits((double)x); /* float subnormals are normal doubles */
  int e = (int)(u >> 52) - 1023;
  double m = bitsd((u & 0x000FFFFFFFFFFFFFull) | 0x3FF0000000000000ull);
  if (m > SQRT2_D) {
    m *= 0.5;
    e++;
  }
  double f = m - 1.0, s = f / (2.0 + f), z = s * s;
  return (float)((double)e * LN2_D + (2.0 * s + s * z * HORNER(LOGF_R, z)));
}

float ol_powf(float x, float y) { return (float)ol_pow(x, y); }

/* x = n pi/2 + r (double), for finite float x. */
static int remf_pio2(double d, double *r) {
  if (fabs(d) <= PIO4_HI) {
    *r = d;
    return 0;
  }
  if (fabs(d) < 1.6e6) {
    double kd = rint(d * INV_PIO2);
    *r = ((d - kd * PIO2_1) - kd * PIO2_2) - kd * PIO2_3F;
    return (int)kd;
  }
  double rl;
  return rem_pio2_large(d, r, &rl);
}
static inline double sinf_poly(double r) {
  double z = r * r;
  return r + r * z * HORNER(SINF_S, z);
}
static inline double cosf_poly(double r) {
  double z = r * r;
  return 1.0 + z * HORNER(COSF_C, z);
}

float ol_sinf(float x) {
  if (!isfinite(x)) return x - x;
  if (fabsf(x) < 0x1p-12f) return x; /* sin(x) = x within half an ulp */
  double r;
  switch (remf_pio2(x, &r) & 3) {
    case 0: return (float)sinf_poly(r);
    case 1: return (float)cosf_poly(r);
    case 2: return (float)-sinf_poly(r);
    default: return (float)-cosf_poly(r);
  }
}

float ol_cosf(float x) {
  if (!isfinite(x)) return x - x;
  double r;
  switch (remf_pio2(x, &r) & 3) {
    case 0: return (float)cosf_poly(r);
    case 1: return (float)-sinf_poly(r);
    case 2: return (float)-cosf_poly(r);
    default: return (float)sinf_poly(r);
  }
}

float ol_tanf(float x) {
  if (!isfinite(x)) return x - x;
  if (fabsf(x) < 0x1p-13f) return x;
  double r;
  int n = remf_pio2(x, &r);
  double s = sinf_poly(r), c = cosf_poly(r);
  return (float)((n & 1) ? -c / s : s / c);
}

float ol_tanhf(float x) {
  if (isnan(x)) return x + x;
  double d = x, ad = fabs(d);
  if (ad < 0x1p-13) return x;
  if (ad < 0.55) {
    double z = d * d;
    return (float)(d + d * z * HORNER(TANHF_T, z));
  }
  if (ad > 10.0) return copysignf(1.0f, x);
  double e = expf_core(2.0 * ad);
  return (float)copysign(1.0 - 2.0 / (e + 1.0), d);
}

float ol_erff(float x) {
  if (isnan(x)) return x + x;
  double d = x, ad = fabs(d);
  if (ad < 1.0) return (float)(d + d * HORNER(ERFF_P, d * d));
  if (ad >= 4.0) return copysignf(1.0f, x);
  double erfc = expf_core(-(ad * ad)) * HORNER(ERFF_Q, ad - 2.5);
  return (float)copysign(1.0 - erfc, d);
}

float ol_atan2f(float y, float x) {
  if (isnan(x) || isnan(y)) return x + y;
  double dy = y, dx = x, r;
  if (dy == 0.0) {
    r = signbit(dx) ? PI_HI : 0.0;
  } else if (dx == 0.0) {
    r = PIO2_HI;
  } else if (isinf(dx)) {
    if (isinf(dy))
      r = dx > 0 ? PIO4_HI : PI3O4_HI;
    else
      r = dx > 0 ? 0.0 : PI_HI;
  } else if (isinf(dy)) {
    r = PIO2_HI;
  } else {
    r = ol_atan(fabs(dy / dx));
    if (dx < 0.0) r = (PI_HI - r) + PI_LO;
  }
  return (float)copysign(r, dy);
}

float ol_atanf(float x) { return (float)ol_atan(x); }
float ol_asinf(float x) { return (float)ol_asin(x); }
float ol_acosf(float x) { return (float)ol_acos(x); }
float ol_sinhf(float x) { return (float)ol_sinh(x); }
float ol_coshf(float x) { return (float)ol_cosh(x); }
float ol_asinhf(float x) { return (float)ol_asinh(x); }
float ol_acoshf(float x) { return (float)ol_acosh(x); }
float ol_atanhf(float x) { return (float)ol_atanh(x); }
float ol_log1pf(float x) { return (float)ol_log1p(x); }
float ol_expm1f(float x) { return (float)ol_expm1(x); }
