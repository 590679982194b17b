/* Signal processing operators (ai.onnx).
 *
 *   DFT 17-23 (17-19: axis attribute; 20+: axis input, default -2)
 *   STFT 17-23
 *   HannWindow 17-23   HammingWindow 17-23   BlackmanWindow 17-23
 *   MelWeightMatrix 17-23
 *
 * Transforms are direct O(n^2) sums in double with twiddle factors from the
 * project's ol_cos/ol_sin (index products reduced mod n first), summed in
 * index order and rounded once to the output type. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/signal/signal.h"
#include "simd/math.h"

static const double PI = 3.14159265358979323846;

static bool is_float_type(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

static ol_status scalar_int(const ol_node *node, const ol_tensor *t, const char *what, int64_t *out) {
  if ((t->dtype != OL_DTYPE_INT64 && t->dtype != OL_DTYPE_INT32) || ol_tcount(t) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be an int32/int64 scalar", what);
  *out = (int64_t)ol_tensor_get_double(t, 0);
  if (t->dtype == OL_DTYPE_INT64) *out = ((const int64_t *)ol_tdata(t))[0];
  return OL_OK;
}

/* Twiddle table: cos/sin of 2*pi*j/n for j in [0, n), allocated from a. */
static ol_status twiddles(ol_allocator *a, int64_t n, double **c, double **s) {
  *c = ol_alloc(a, sizeof(double) * (size_t)(n > 0 ? n : 1));
  *s = ol_alloc(a, sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!*c || !*s) {
    ol_dealloc(a, *c);
    ol_dealloc(a, *s);
    *c = *s = NULL;
    return OL_OUT_OF_MEMORY;
  }
  for (int64_t j = 0; j < n; j++) {
    double a = 2.0 * PI * (double)j / (double)n;
    (*c)[j] = ol_cos(a);
    (*s)[j] = ol_sin(a);
  }
  return OL_OK;
}

/* out[k] = sum_j in[j] * exp(-+ 2 pi i j k / n) for k < nout; in has len
 * values (zero beyond). Complex arrays interleaved (re, im). */
static void dft_line(const double *in, int64_t len, int64_t n, int64_t nout, bool inverse, const double *tc,
                     const double *ts, double *out) {
  double sg = inverse ? 1.0 : -1.0;
  int64_t m = len < n ? len : n;
  for (int64_t k = 0; k < nout; k++) {
    double re = 0.0, im = 0.0;
    int64_t idx = 0;
    for (int64_t j = 0; j < m; j++) {
      double c = tc[idx], s = sg * ts[idx];
      double xr = in[2 * j], xi = in[2 * j + 1];
      re += xr * c - xi * s;
      im += xr * s + xi * c;
      idx += k;
      if (idx >= n) idx %= n;
    }
    if (inverse) {
      re /= (double)n;
      im /= (double)n;
    }
    out[2 * k] = re;
    out[2 * k + 1] = im;
  }
}

/* ------------------------------------------------------------ DFT */

typedef struct dft_kernel {
  ol_kernel base;
  int64_t axis;
  bool inverse, onesided;
} dft_kernel;

static ol_status dft_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  dft_kernel *k = (dft_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input", x->dtype);
  int r = x->rank;
  if (r < 2 || (x->dims[r - 1] != 1 && x->dims[r - 1] != 2))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must end with a dimension of 1 (real) or 2 (complex)");
  bool cplx = x->dims[r - 1] == 2;
  int64_t axis = k->axis;
  const ol_tensor *at = node->opset >= 20 ? ol_ctx_input(ctx, 2) : NULL;
  if (at) OL_TRY(scalar_int(node, at, "axis", &axis));
  if (axis < 0) axis += r;
  if (axis < 0 || axis >= r - 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is out of range for rank %d", (long long)k->axis, r);
  int64_t len = x->dims[axis], n = len;
  const ol_tensor *lt = ol_ctx_input(ctx, 1);
  if (lt && ol_tcount(lt) > 0) {
    OL_TRY(scalar_int(node, lt, "dft_length", &n));
    if (n < 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "dft_length must be positive, got %lld", (long long)n);
  }
  if (k->onesided && k->inverse)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "onesided inverse DFT is not supported");
  int64_t nout = k->onesided ? n / 2 + 1 : n;
  int64_t od[OL_MAX_RANK];
  memcpy(od, x->dims, sizeof(int64_t) * (size_t)r);
  od[axis] = nout;
  od[r - 1] = 2;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, r, od, &y));
  int64_t outer = ol_shape_count((int)axis, x->dims);
  int64_t inner = ol_shape_count(r - 1 - (int)axis - 1, x->dims + axis + 1);
  int64_t comp = x->dims[r - 1];
  double *tc, *ts;
  OL_TRY(twiddles(ctx->allocator, n, &tc, &ts));
  double *in = ol_alloc(ctx->allocator, sizeof(double) * 2 * (size_t)(len > 0 ? len : 1));
  double *out = ol_alloc(ctx->allocator, sizeof(double) * 2 * (size_t)nout);
  if (!in || !out) {
    ol_dealloc(ctx->allocator, tc);
    ol_dealloc(ctx->allocator, ts);
    ol_dealloc(ctx->allocator, in);
    ol_dealloc(ctx->allocator, out);
    return OL_OUT_OF_MEMORY;
  }
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      for (int64_t j = 0; j < len; j++) {
        int64_t e = ((o * len + j) * inner + i) * comp;
        in[2 * j] = ol_tensor_get_double(x, e);
        in[2 * j + 1] = cplx ? ol_tensor_get_double(x, e + 1) : 0.0;
      }
      dft_line(in, len, n, nout, k->inverse, tc, ts, out);
      for (int64_t j = 0; j < nout; j++) {
        int64_t e = ((o * nout + j) * inner + i) * 2;
        ol_tensor_set_double(y, e, out[2 * j]);
        ol_tensor_set_double(y, e + 1, out[2 * j + 1]);
      }
    }
  ol_dealloc(ctx->allocator, tc);
  ol_dealloc(ctx->allocator, ts);
  ol_dealloc(ctx->allocator, in);
  ol_dealloc(ctx->allocator, out);
  return OL_OK;
}

static ol_status dft_create(const ol_node *node, ol_kernel **out) {
  dft_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, dft_compute, (ol_kernel **)&k));
  k->axis = node->opset >= 20 ? -2 : ol_attr_int(node, "axis", 1);
  k->inverse = ol_attr_int(node, "inverse", 0) != 0;
  k->onesided = ol_attr_int(node, "onesided", 0) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ STFT */

typedef struct stft_kernel {
  ol_kernel base;
  bool onesided;
} stft_kernel;

static ol_status stft_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  stft_kernel *k = (stft_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x, *st;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &st));
  const ol_tensor *wt = ol_ctx_input(ctx, 2), *flt = ol_ctx_input(ctx, 3);
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "signal", x->dtype);
  if (x->rank != 3 || (x->dims[2] != 1 && x->dims[2] != 2))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "signal must be [batch, length, 1 or 2]");
  bool cplx = x->dims[2] == 2;
  int64_t step = 0, fl = -1;
  OL_TRY(scalar_int(node, st, "frame_step", &step));
  if (step < 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "frame_step must be positive");
  if (wt && ol_tcount(wt) == 0) wt = NULL;
  if (flt && ol_tcount(flt) == 0) flt = NULL;
  if (wt) {
    if (wt->rank != 1 || !is_float_type(wt->dtype))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "window must be a 1-D float tensor");
    fl = wt->dims[0];
  }
  if (flt) {
    int64_t v = 0;
    OL_TRY(scalar_int(node, flt, "frame_length", &v));
    if (fl >= 0 && v != fl)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "frame_length %lld differs from the window length %lld",
                             (long long)v, (long long)fl);
    fl = v;
  }
  if (fl < 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "frame_length or window is required and must be positive");
  if (cplx && k->onesided)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "onesided output requires a real signal");
  int64_t B = x->dims[0], L = x->dims[1];
  if (L < fl) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "signal is shorter than one frame");
  int64_t frames = (L - fl) / step + 1;
  int64_t bins = k->onesided ? fl / 2 + 1 : fl;
  int64_t od[4] = {B, frames, bins, 2};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, 4, od, &y));
  double *tc, *ts;
  OL_TRY(twiddles(ctx->allocator, fl, &tc, &ts));
  double *in = ol_alloc(ctx->allocator, sizeof(double) * 2 * (size_t)fl);
  double *out = ol_alloc(ctx->allocator, sizeof(double) * 2 * (size_t)bins);
  if (!in || !out) {
    ol_dealloc(ctx->allocator, tc);
    ol_dealloc(ctx->allocator, ts);
    ol_dealloc(ctx->allocator, in);
    ol_dealloc(ctx->allocator, out);
    return OL_OUT_OF_MEMORY;
  }
  int64_t comp = x->dims[2];
  for (int64_t b = 0; b < B; b++)
    for (int64_t f = 0; f < frames; f++) {
      for (int64_t j = 0; j < fl; j++) {
        int64_t e = (b * L + f * step + j) * comp;
        double w = wt ? ol_tensor_get_double(wt, j) : 1.0;
        in[2 * j] = ol_tensor_get_double(x, e) * w;
        in[2 * j + 1] = cplx ? ol_tensor_get_double(x, e + 1) * w : 0.0;
      }
      dft_line(in, fl, fl, bins, false, tc, ts, out);
      for (int64_t j = 0; j < bins; j++) {
        int64_t e = ((b * frames + f) * bins + j) * 2;
        ol_tensor_set_double(y, e, out[2 * j]);
        ol_tensor_set_double(y, e + 1, out[2 * j + 1]);
      }
    }
  ol_dealloc(ctx->allocator, tc);
  ol_dealloc(ctx->allocator, ts);
  ol_dealloc(ctx->allocator, in);
  ol_dealloc(ctx->allocator, out);
  return OL_OK;
}

static ol_status stft_create(const ol_node *node, ol_kernel **out) {
  stft_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, stft_compute, (ol_kernel **)&k));
  k->onesided = ol_attr_int(node, "onesided", 1) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ windows */

enum { WIN_HANN, WIN_HAMMING, WIN_BLACKMAN };

typedef struct win_kernel {
  ol_kernel base;
  int kind;
  bool periodic;
  ol_dtype dtype;
} win_kernel;

static bool window_dtype_ok(ol_dtype dt) {
  switch (dt) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_INT8: case OL_DTYPE_UINT8: case OL_DTYPE_INT16: case OL_DTYPE_UINT16:
    case OL_DTYPE_INT32: case OL_DTYPE_UINT32: case OL_DTYPE_INT64: case OL_DTYPE_UINT64:
      return true;
    default: return false;
  }
}

static ol_status win_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  win_kernel *k = (win_kernel *)kernel;
  const ol_tensor *st;
  OL_TRY(ol_ctx_require(ctx, 0, &st));
  int64_t n;
  OL_TRY(scalar_int(kernel->node, st, "size", &n));
  if (n < 0) return ol_kernel_error(kernel->node, OL_INVALID_ARGUMENT, "size must be >= 0, got %lld", (long long)n);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, k->dtype, 1, &n, &y));
  double den = k->periodic ? (double)n : (double)(n - 1);
  for (int64_t i = 0; i < n; i++) {
    double a = den > 0 ? 2.0 * PI * (double)i / den : 0.0;
    double v;
    if (k->kind == WIN_HANN) v = 0.5 - 0.5 * ol_cos(a);
    else if (k->kind == WIN_HAMMING) v = 25.0 / 46.0 - (1.0 - 25.0 / 46.0) * ol_cos(a);
    else v = 0.42 - 0.5 * ol_cos(a) + 0.08 * ol_cos(2.0 * a);
    ol_tensor_set_double(y, i, v);
  }
  return OL_OK;
}

static ol_status win_create_common(const ol_node *node, int kind, ol_kernel **out) {
  ol_dtype dt = (ol_dtype)ol_attr_int(node, "output_datatype", OL_DTYPE_FLOAT);
  if (!window_dtype_ok(dt))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'output_datatype' %d is not a supported numeric type", (int)dt);
  win_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, win_compute, (ol_kernel **)&k));
  k->kind = kind;
  k->periodic = ol_attr_int(node, "periodic", 1) != 0;
  k->dtype = dt;
  *out = &k->base;
  return OL_OK;
}
static ol_status hann_create(const ol_node *node, ol_kernel **out) {
  return win_create_common(node, WIN_HANN, out);
}
static ol_status hamming_create(const ol_node *node, ol_kernel **out) {
  return win_create_common(node, WIN_HAMMING, out);
}
static ol_status blackman_create(const ol_node *node, ol_kernel **out) {
  return win_create_common(node, WIN_BLACKMAN, out);
}

/* ------------------------------------------------------------ MelWeightMatrix */

typedef struct mel_kernel {
  ol_kernel base;
  ol_dtype dtype;
} mel_kernel;

static double log10_f32(double x) { return (double)(float)(ol_log(x) / ol_log(10.0)); }

static ol_status mel_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  mel_kernel *k = (mel_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *t[5];
  for (size_t i = 0; i < 5; i++) OL_TRY(ol_ctx_require(ctx, i, &t[i]));
  int64_t nmel = 0, dftlen = 0, rate = 0;
  OL_TRY(scalar_int(node, t[0], "num_mel_bins", &nmel));
  OL_TRY(scalar_int(node, t[1], "dft_length", &dftlen));
  OL_TRY(scalar_int(node, t[2], "sample_rate", &rate));
  if (!is_float_type(t[3]->dtype) || !is_float_type(t[4]->dtype) || ol_tcount(t[3]) != 1 || ol_tcount(t[4]) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "lower/upper_edge_hertz must be float scalars");
  if (nmel < 1 || dftlen < 1 || rate < 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "num_mel_bins, dft_length and sample_rate must be positive");
  double lo = ol_tensor_get_double(t[3], 0), hi = ol_tensor_get_double(t[4], 0);
  if (lo < 0 || hi < lo || hi > (double)rate / 2.0 + 1e-6)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "edge frequencies [%g, %g] are invalid for sample rate %lld", lo,
                           hi, (long long)rate);
  int64_t nspec = dftlen / 2 + 1;
  int64_t od[2] = {nspec, nmel};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, k->dtype, 2, od, &y));
  int64_t *bins = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(nmel + 2));
  double *w = ol_calloc(ctx->allocator, (size_t)(nspec * nmel), sizeof(double));
  if (!bins || !w) {
    ol_dealloc(ctx->allocator, bins);
    ol_dealloc(ctx->allocator, w);
    return OL_OUT_OF_MEMORY;
  }
  /* float32 steps as in the reference (inputs are float32 scalars) */
  double lmel = (double)(float)(2595.0f * (float)log10_f32((double)(float)(1.0f + (float)lo / 700.0f)));
  double hmel = (double)(float)(2595.0f * (float)log10_f32((double)(float)(1.0f + (float)hi / 700.0f)));
  double step = (double)(float)((float)(hmel - lmel) / (float)(nmel + 2)); /* the reference divides by the point count */
  for (int64_t i = 0; i < nmel + 2; i++) {
    double f = (double)i * step + lmel;
    f = 700.0 * (ol_exp(f / 2595.0 * ol_log(10.0)) - 1.0);
    bins[i] = (int64_t)floor((double)(dftlen + 1) * f / (double)rate);
  }
  ol_status st = OL_OK;
  for (int64_t i = 0; i < nmel && st == OL_OK; i++) {
    int64_t l = bins[i], c = bins[i + 1], h = bins[i + 2];
    if (l < 0 || h >= nspec + 1 || c >= nspec) {
      st = ol_kernel_error(node, OL_INVALID_ARGUMENT, "mel bin %lld falls outside the spectrum", (long long)i);
      break;
    }
    if (c - l == 0) {
      w[c * nmel + i] = 1.0;
    } else {
      for (int64_t j = l; j <= c; j++) w[j * nmel + i] = (double)(j - l) / (double)(c - l);
    }
    if (h - c > 0)
      for (int64_t j = c; j < h && j < nspec; j++) w[j * nmel + i] = (double)(h - j) / (double)(h - c);
  }
  if (st == OL_OK)
    for (int64_t i = 0; i < nspec * nmel; i++) ol_tensor_set_double(y, i, w[i]);
  ol_dealloc(ctx->allocator, bins);
  ol_dealloc(ctx->allocator, w);
  return st;
}

static ol_status mel_create(const ol_node *node, ol_kernel **out) {
  ol_dtype dt = (ol_dtype)ol_attr_int(node, "output_datatype", OL_DTYPE_FLOAT);
  if (!window_dtype_ok(dt))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'output_datatype' %d is not a supported numeric type", (int)dt);
  mel_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, mel_compute, (ol_kernel **)&k));
  k->dtype = dt;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ registry */

/* ------------------------------------------------------------ shape function */

/* HannWindow, HammingWindow, BlackmanWindow: [size], output_datatype (FLOAT). */
ol_status ol_infer_window(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = (ol_dtype)ol_attr_int(ctx->node, "output_datatype", OL_DTYPE_FLOAT);
  if (!ol_dtype_valid(dtype) || dtype == OL_DTYPE_UNDEFINED)
    return ol_infer_error(ctx, "attribute 'output_datatype' is not an element type");
  int64_t size;
  int count;
  ol_dim d = ol_infer_ints(ctx, 0, &size, &count, 1) && count == 1 ? ol_dim_of(size) : ol_dim_unknown();
  ol_infer_set_tensor(&ctx->outputs[0], dtype, 1, &d);
  return OL_OK;
}

#define FT "float16 bfloat16 float32 float64"
const ol_op_schema ol_schema_signal[] = {
    {"", "DFT", 17, OL_OPSET_LATEST, dft_create, NULL, FT},
    {"", "STFT", 17, OL_OPSET_LATEST, stft_create, NULL, FT},
    {"", "HannWindow", 17, OL_OPSET_LATEST, hann_create, ol_infer_window, "-> float32 float64 float16 bfloat16 ints"},
    {"", "HammingWindow", 17, OL_OPSET_LATEST, hamming_create, ol_infer_window, "-> float32 float64 float16 bfloat16 ints"},
    {"", "BlackmanWindow", 17, OL_OPSET_LATEST, blackman_create, ol_infer_window, "-> float32 float64 float16 bfloat16 ints"},
    {"", "MelWeightMatrix", 17, OL_OPSET_LATEST, mel_create, NULL, "-> float32 float64 float16 bfloat16 ints"},
    {0},
};
