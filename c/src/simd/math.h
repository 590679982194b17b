/* The project's own transcendental functions. glibc and musl (Emscripten)
 * return different bits for exp/log/sin/...; kernels call these instead so
 * native and wasm builds agree bit for bit. Only + - * / sqrt, floor/ceil/
 * rint/trunc, fabs, ldexp and frexp (all IEEE-exact) come from the compiler. */
#ifndef OL_SIMD_MATH_H
#define OL_SIMD_MATH_H
#include <stdint.h>

float ol_expf(float x);
/* out[i] = ol_expf(in[i]) for i < n, four lanes at a time where the ISA has
 * vectors (same bits as the scalar calls); out may be in. */
void ol_expf_n(float *out, const float *in, int64_t n);
/* e^x in float arithmetic for x <= 0, the weights of a softmax once its
 * maximum is subtracted (PagedAttention): within 1 ulp of e^x (subnormal
 * results rounded once, 0 below -104); x > 0 and NaN as ol_expf. About a
 * third of ol_expf's operations, and the same bits on every build. */
float ol_expf_fast(float x);
/* out[i] = ol_expf_fast(in[i]) for i < n, four lanes at a time where the ISA
 * has vectors (same bits as the scalar calls); out may be in. */
void ol_expf_fast_n(float *out, const float *in, int64_t n);
float ol_logf(float x);
float ol_powf(float x, float y);
float ol_sinf(float x);
float ol_cosf(float x);
float ol_tanf(float x);
float ol_tanhf(float x);
float ol_erff(float x);
float ol_atanf(float x);
float ol_asinf(float x);
float ol_acosf(float x);
float ol_atan2f(float y, float x);
float ol_sinhf(float x);
float ol_coshf(float x);
float ol_asinhf(float x);
float ol_acoshf(float x);
float ol_atanhf(float x);
float ol_log1pf(float x);
float ol_expm1f(float x);

double ol_exp(double x);
double ol_log(double x);
double ol_pow(double x, double y);
double ol_sin(double x);
double ol_cos(double x);
double ol_tan(double x);
double ol_tanh(double x);
double ol_erf(double x);
double ol_atan(double x);
double ol_asin(double x);
double ol_acos(double x);
double ol_sinh(double x);
double ol_cosh(double x);
double ol_asinh(double x);
double ol_acosh(double x);
double ol_atanh(double x);
double ol_expm1(double x);
double ol_log1p(double x);
double ol_erfc(double x);

#endif
