/* Neural-network operators (ai.onnx), part 1: normalizations and Einsum.
 *
 *   Softmax / LogSoftmax 1-23 (< 13: 2-D coercion at axis, default 1;
 *                              13+: along one axis, default -1)
 *   LayerNormalization 17-23      BatchNormalization 1-23 (training_mode 14+)
 *   InstanceNormalization 1-23    LpNormalization 1-23
 *   MeanVarianceNormalization 9-23
 *   GroupNormalization 18-23 (scale/bias per group < 21, per channel 21+)
 *   LRN 1-23
 * Einsum 12-23 is implemented in nn_einsum.c, and in nn_conv.c:
 *   Conv 1-23   ConvTranspose 1-23   MaxPool 1-23 (Indices 8+)
 *   AveragePool 1-23   GlobalAveragePool 1-23   GlobalMaxPool 1-23   LpPool 1-23
 *   GlobalLpPool 1-23
 *
 * Softmax on float32 computes exp with ol_expf and sums in double; the other
 * normalizations compute statistics in double and round once to the output
 * type. Transcendentals come from simd/math.h only. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn/nn.h"
#include "simd/math.h"

/* ------------------------------------------------------------ helpers */

static bool is_float_type(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

static inline double getd(const ol_tensor *t, int64_t i) {
  switch (t->dtype) {
    case OL_DTYPE_FLOAT: return ((const float *)ol_tdata(t))[i];
    case OL_DTYPE_DOUBLE: return ((const double *)ol_tdata(t))[i];
    default: return ol_tensor_get_double(t, i);
  }
}

static inline void setd(ol_tensor *t, int64_t i, double v) {
  switch (t->dtype) {
    case OL_DTYPE_FLOAT: ((float *)ol_tdata(t))[i] = (float)v; break;
    case OL_DTYPE_DOUBLE: ((double *)ol_tdata(t))[i] = v; break;
    default: ol_tensor_set_double(t, i, v); break;
  }
}

static ol_status require_float(const ol_node *node, const ol_tensor *t, const char *what) {
  if (!is_float_type(t->dtype)) return ol_kernel_bad_dtype(node, what, t->dtype);
  return OL_OK;
}

typedef struct axis_kernel {
  ol_kernel base;
  int64_t axis;
} axis_kernel;

/* ------------------------------------------------------------ Softmax / LogSoftmax */

typedef struct softmax_kernel {
  ol_kernel base;
  int64_t axis;
  bool log;
} softmax_kernel;

/* In place on a contiguous float row. */
static void softmax_row_f32(float *x, int64_t n, bool log) {
  float m = x[0];
  for (int64_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
  double sum = 0.0;
  if (log) {
    enum { CHUNK = 64 };
    float e[CHUNK];
    for (int64_t i0 = 0; i0 < n; i0 += CHUNK) {
      int64_t c = n - i0 < CHUNK ? n - i0 : CHUNK;
      for (int64_t j = 0; j < c; j++) e[j] = x[i0 + j] - m;
      ol_expf_n(e, e, c);
      for (int64_t j = 0; j < c; j++) sum += e[j];
    }
    double ls = ol_log(sum);
    for (int64_t i = 0; i < n; i++) x[i] = (float)((double)(x[i] - m) - ls);
  } else {
    /* e = exp(x - m) four lanes at a time (ol_expf's bits), summed in order */
    for (int64_t i = 0; i < n; i++) x[i] = x[i] - m;
    ol_expf_n(x, x, n);
    for (int64_t i = 0; i < n; i++) sum += x[i];
    for (int64_t i = 0; i < n; i++) x[i] = (float)(x[i] / sum);
  }
}

static void softmax_row_f64(double *x, int64_t n, bool log) {
  double m = x[0];
  for (int64_t i = 1; i < n; i++) m = x[i] > m ? x[i] : m;
  double sum = 0.0;
  if (log) {
    for (int64_t i = 0; i < n; i++) sum += ol_exp(x[i] - m);
    double ls = ol_log(sum);
    for (int64_t i = 0; i < n; i++) x[i] = (x[i] - m) - ls;
  } else {
    for (int64_t i = 0; i < n; i++) {
      x[i] = ol_exp(x[i] - m);
      sum += x[i];
    }
    for (int64_t i = 0; i < n; i++) x[i] = x[i] / sum;
  }
}

static ol_status softmax_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  softmax_kernel *k = (softmax_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_float(node, x, "input"));
  int64_t outer, n, inner;
  OL_TRY(ol_softmax_axis_split(node, k->axis, x, &outer, &n, &inner));
  ol_tensor *y;
  /* every element written below: each (outer, inner) row in full */
  OL_TRY(ol_ctx_output_uninit(ctx, 0, x->dtype, x->rank, x->dims, &y));
  if (n == 0 || ol_tcount(x) == 0) return OL_OK;
  bool dbl = x->dtype == OL_DTYPE_DOUBLE;
  /* float rows along the last axis (attention scores) work in place: no scratch */
  bool in_place = x->dtype == OL_DTYPE_FLOAT && inner == 1;
  void *row = in_place ? NULL : ol_alloc(ctx->allocator, (dbl ? sizeof(double) : sizeof(float)) * (size_t)n);
  if (!in_place && !row) return OL_OUT_OF_MEMORY;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i;
      if (dbl) {
        double *r = row;
        const double *src = ol_tdata(x);
        double *dst = ol_tdata(y);
        for (int64_t j = 0; j < n; j++) r[j] = src[base + j * inner];
        softmax_row_f64(r, n, k->log);
        for (int64_t j = 0; j < n; j++) dst[base + j * inner] = r[j];
      } else if (x->dtype == OL_DTYPE_FLOAT) {
        float *r = row;
        const float *src = ol_tdata(x);
        float *dst = ol_tdata(y);
        if (inner == 1) {
          memcpy(dst + base, src + base, sizeof(float) * (size_t)n);
          softmax_row_f32(dst + base, n, k->log);
          continue;
        }
        for (int64_t j = 0; j < n; j++) r[j] = src[base + j * inner];
        softmax_row_f32(r, n, k->log);
        for (int64_t j = 0; j < n; j++) dst[base + j * inner] = r[j];
      } else {
        float *r = row;
        for (int64_t j = 0; j < n; j++) r[j] = (float)getd(x, base + j * inner);
        softmax_row_f32(r, n, k->log);
        for (int64_t j = 0; j < n; j++) setd(y, base + j * inner, r[j]);
      }
    }
  ol_dealloc(ctx->allocator, row);
  return OL_OK;
}

static ol_status softmax_create_common(const ol_node *node, bool log, ol_kernel **out) {
  softmax_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, softmax_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", node->opset < 13 ? 1 : -1);
  k->log = log;
  *out = &k->base;
  return OL_OK;
}
static ol_status softmax_create(const ol_node *node, ol_kernel **out) {
  return softmax_create_common(node, false, out);
}
static ol_status logsoftmax_create(const ol_node *node, ol_kernel **out) {
  return softmax_create_common(node, true, out);
}

/* ------------------------------------------------------------ broadcast index maps */

/* map[j] for j in [0, n): index into param (shape pdims) when param is
 * unidirectionally broadcast to dims[0..r), allocated from a. NULL map:
 * param has n elements. */
static ol_status param_map(ol_allocator *a, const ol_node *node, const char *what, const ol_tensor *p,
                           int r, const int64_t *dims, int64_t **map) {
  *map = NULL;
  int64_t n = ol_shape_count(r, dims);
  if (ol_tcount(p) == n && (p->rank <= r)) {
    bool same = true;
    for (int i = 0; i < p->rank; i++) same = same && p->dims[i] == dims[r - p->rank + i];
    if (same) return OL_OK;
  }
  if (p->rank > r)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s has rank %d, more than %d", what,
                           p->rank, r);
  int64_t pstr[OL_MAX_RANK], s = 1;
  for (int i = r - 1; i >= 0; i--) {
    int pi = i - (r - p->rank);
    if (pi < 0) {
      pstr[i] = 0;
      continue;
    }
    if (p->dims[pi] != dims[i] && p->dims[pi] != 1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "%s dimension %d is %lld, cannot broadcast to %lld", what, pi,
                             (long long)p->dims[pi], (long long)dims[i]);
    pstr[i] = p->dims[pi] == 1 ? 0 : s;
    s *= p->dims[pi];
  }
  int64_t *m = ol_alloc(a, sizeof(int64_t) * (size_t)(n + 1));
  if (!m) return OL_OUT_OF_MEMORY;
  int64_t idx[OL_MAX_RANK] = {0}, off = 0;
  for (int64_t j = 0; j < n; j++) {
    m[j] = off;
    for (int i = r - 1; i >= 0; i--) {
      off += pstr[i];
      if (++idx[i] < dims[i]) break;
      off -= pstr[i] * dims[i];
      idx[i] = 0;
    }
  }
  *map = m;
  return OL_OK;
}

/* ------------------------------------------------------------ LayerNormalization */

typedef struct layernorm_kernel {
  ol_kernel base;
  int64_t axis;
  double epsilon;
} layernorm_kernel;

static ol_status layernorm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  layernorm_kernel *k = (layernorm_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *scale, *bias = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &scale));
  OL_TRY(require_float(node, x, "input X"));
  OL_TRY(require_float(node, scale, "input Scale"));
  if (bias) OL_TRY(require_float(node, bias, "input B"));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  int64_t outer = ol_shape_count(axis, x->dims);
  int64_t n = ol_shape_count(x->rank - axis, x->dims + axis);
  int64_t *smap = NULL, *bmap = NULL;
  OL_TRY(param_map(ctx->allocator, node, "Scale", scale, x->rank - axis, x->dims + axis, &smap));
  ol_status s = OL_OK;
  if (bias) s = param_map(ctx->allocator, node, "B", bias, x->rank - axis, x->dims + axis, &bmap);
  ol_tensor *y, *mean_t = NULL, *inv_t = NULL;
  int64_t sdims[OL_MAX_RANK];
  for (int i = 0; i < x->rank; i++) sdims[i] = i < axis ? x->dims[i] : 1;
  if (s == OL_OK) s = ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y);
  if (s == OL_OK && ol_ctx_wants_output(ctx, 1))
    s = ol_ctx_output(ctx, 1, OL_DTYPE_FLOAT, x->rank, sdims, &mean_t);
  if (s == OL_OK && ol_ctx_wants_output(ctx, 2))
    s = ol_ctx_output(ctx, 2, OL_DTYPE_FLOAT, x->rank, sdims, &inv_t);
  double *row = s == OL_OK ? ol_alloc(ctx->allocator, sizeof(double) * (size_t)(n + 1)) : NULL;
  if (s == OL_OK && !row) s = OL_OUT_OF_MEMORY;
  for (int64_t o = 0; o < outer && s == OL_OK; o++) {
    int64_t base = o * n;
    double sum = 0.0;
    for (int64_t j = 0; j < n; j++) {
      row[j] = getd(x, base + j);
      sum += row[j];
    }
    double mean = n ? sum / (double)n : 0.0, var = 0.0;
    for (int64_t j = 0; j < n; j++) {
      double d = row[j] - mean;
      var += d * d;
    }
    var = n ? var / (double)n : 0.0;
    double inv = 1.0 / sqrt(var + k->epsilon);
    for (int64_t j = 0; j < n; j++) {
      double v = (row[j] - mean) * inv * getd(scale, smap ? smap[j] : j);
      if (bias) v += getd(bias, bmap ? bmap[j] : j);
      setd(y, base + j, v);
    }
    if (mean_t) ((float *)ol_tdata(mean_t))[o] = (float)mean;
    if (inv_t) ((float *)ol_tdata(inv_t))[o] = (float)inv;
  }
  ol_dealloc(ctx->allocator, row);
  ol_dealloc(ctx->allocator, smap);
  ol_dealloc(ctx->allocator, bmap);
  return s;
}

static ol_status layernorm_create(const ol_node *node, ol_kernel **out) {
  layernorm_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, layernorm_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", -1);
  k->epsilon = ol_attr_float(node, "epsilon", 1e-5f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ BatchNormalization */

typedef struct batchnorm_kernel {
  ol_kernel base;
  double epsilon, momentum;
  bool training;
} batchnorm_kernel;

static ol_status batchnorm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  batchnorm_kernel *k = (batchnorm_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *p[4];
  static const char *const names[4] = {"scale", "B", "input_mean", "input_var"};
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_float(node, x, "input X"));
  if (x->rank < 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must have rank >= 2, got %d", x->rank);
  int64_t N = x->dims[0], C = x->dims[1], S = ol_shape_count(x->rank - 2, x->dims + 2);
  for (int i = 0; i < 4; i++) {
    OL_TRY(ol_ctx_require(ctx, (size_t)(i + 1), &p[i]));
    OL_TRY(require_float(node, p[i], names[i]));
    if (ol_tcount(p[i]) != C)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' has %lld values for %lld channels",
                             names[i], (long long)ol_tcount(p[i]), (long long)C);
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  double *mean = ol_alloc(ctx->allocator, sizeof(double) * (size_t)(2 * C + 1));
  if (!mean) return OL_OUT_OF_MEMORY;
  double *var = mean + C;
  for (int64_t c = 0; c < C; c++) {
    mean[c] = getd(p[2], c);
    var[c] = getd(p[3], c);
  }
  bool training = k->training && node->opset >= 14;
  ol_status s = OL_OK;
  if (training) {
    for (int64_t c = 0; c < C; c++) {
      double sum = 0.0, cnt = (double)(N * S), sq = 0.0;
      for (int64_t nn = 0; nn < N; nn++)
        for (int64_t j = 0; j < S; j++) sum += getd(x, (nn * C + c) * S + j);
      double m = cnt > 0 ? sum / cnt : 0.0;
      for (int64_t nn = 0; nn < N; nn++)
        for (int64_t j = 0; j < S; j++) {
          double d = getd(x, (nn * C + c) * S + j) - m;
          sq += d * d;
        }
      double v = cnt > 0 ? sq / cnt : 0.0;
      ol_tensor *rm = NULL, *rv = NULL;
      if (c == 0) {
        if (ol_ctx_wants_output(ctx, 1))
          s = ol_ctx_output(ctx, 1, p[2]->dtype, p[2]->rank, p[2]->dims, &rm);
        if (s == OL_OK && ol_ctx_wants_output(ctx, 2))
          s = ol_ctx_output(ctx, 2, p[3]->dtype, p[3]->rank, p[3]->dims, &rv);
        if (s != OL_OK) break;
      }
      if (ol_ctx_wants_output(ctx, 1))
        setd(&ctx->outputs[1]->tensor, c, mean[c] * k->momentum + m * (1.0 - k->momentum));
      if (ol_ctx_wants_output(ctx, 2))
        setd(&ctx->outputs[2]->tensor, c, var[c] * k->momentum + v * (1.0 - k->momentum));
      mean[c] = m;
      var[c] = v;
    }
  }
  for (int64_t nn = 0; nn < N && s == OL_OK; nn++)
    for (int64_t c = 0; c < C; c++) {
      double inv = 1.0 / sqrt(var[c] + k->epsilon), sc = getd(p[0], c), b = getd(p[1], c);
      int64_t base = (nn * C + c) * S;
      for (int64_t j = 0; j < S; j++) setd(y, base + j, (getd(x, base + j) - mean[c]) * inv * sc + b);
    }
  ol_dealloc(ctx->allocator, mean);
  return s;
}

static ol_status batchnorm_create(const ol_node *node, ol_kernel **out) {
  if (node->opset < 9 && ol_attr_int(node, "spatial", 1) == 0)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "spatial=0 is not supported");
  batchnorm_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, batchnorm_compute, (ol_kernel **)&k));
  k->epsilon = ol_attr_float(node, "epsilon", 1e-5f);
  k->momentum = ol_attr_float(node, "momentum", 0.9f);
  k->training = ol_attr_int(node, "training_mode", 0) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ InstanceNormalization */

typedef struct eps_kernel {
  ol_kernel base;
  double epsilon;
  int64_t groups;
} eps_kernel;

/* Normalizes x[base .. base+n) in double: returns mean and 1/sqrt(var+eps). */
static void moments(const ol_tensor *x, int64_t base, int64_t n, double eps, double *mean,
                    double *inv) {
  double sum = 0.0, sq = 0.0;
  for (int64_t j = 0; j < n; j++) sum += getd(x, base + j);
  double m = n ? sum / (double)n : 0.0;
  for (int64_t j = 0; j < n; j++) {
    double d = getd(x, base + j) - m;
    sq += d * d;
  }
  *mean = m;
  *inv = 1.0 / sqrt((n ? sq / (double)n : 0.0) + eps);
}

static ol_status instancenorm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  eps_kernel *k = (eps_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *scale, *bias;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &scale));
  OL_TRY(ol_ctx_require(ctx, 2, &bias));
  OL_TRY(require_float(node, x, "input"));
  if (x->rank < 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 2, got %d", x->rank);
  int64_t N = x->dims[0], C = x->dims[1], S = ol_shape_count(x->rank - 2, x->dims + 2);
  if (ol_tcount(scale) != C || ol_tcount(bias) != C)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "scale and B must have C = %lld values (got %lld and %lld)",
                           (long long)C, (long long)ol_tcount(scale), (long long)ol_tcount(bias));
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  for (int64_t nn = 0; nn < N; nn++)
    for (int64_t c = 0; c < C; c++) {
      int64_t base = (nn * C + c) * S;
      double mean, inv, sc = getd(scale, c), b = getd(bias, c);
      moments(x, base, S, k->epsilon, &mean, &inv);
      for (int64_t j = 0; j < S; j++) setd(y, base + j, (getd(x, base + j) - mean) * inv * sc + b);
    }
  return OL_OK;
}

static ol_status instancenorm_create(const ol_node *node, ol_kernel **out) {
  eps_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, instancenorm_compute, (ol_kernel **)&k));
  k->epsilon = ol_attr_float(node, "epsilon", 1e-5f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ GroupNormalization */

static ol_status groupnorm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  eps_kernel *k = (eps_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *scale, *bias;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &scale));
  OL_TRY(ol_ctx_require(ctx, 2, &bias));
  OL_TRY(require_float(node, x, "input"));
  if (x->rank < 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 2, got %d", x->rank);
  int64_t N = x->dims[0], C = x->dims[1], S = ol_shape_count(x->rank - 2, x->dims + 2);
  int64_t G = k->groups;
  if (C % G != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%lld channels are not divisible by num_groups %lld",
                           (long long)C, (long long)G);
  /* opset 18: per group; 21+: per channel. A per-channel scale is accepted
   * in opset 18 too (exporters emitted both). */
  bool per_channel;
  int64_t ns = ol_tcount(scale);
  if (ns == C && (node->opset >= 21 || ns != G)) per_channel = true;
  else if (ns == G && node->opset < 21) per_channel = false;
  else
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "scale has %lld values; expected %lld (%s)", (long long)ns,
                           (long long)(node->opset >= 21 ? C : G),
                           node->opset >= 21 ? "channels" : "groups");
  if (ol_tcount(bias) != ns)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "bias has %lld values but scale has %lld",
                           (long long)ol_tcount(bias), (long long)ns);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int64_t cg = C / G;
  for (int64_t nn = 0; nn < N; nn++)
    for (int64_t g = 0; g < G; g++) {
      int64_t base = (nn * C + g * cg) * S;
      double mean, inv;
      moments(x, base, cg * S, k->epsilon, &mean, &inv);
      for (int64_t c = 0; c < cg; c++) {
        int64_t pi = per_channel ? g * cg + c : g;
        double sc = getd(scale, pi), b = getd(bias, pi);
        for (int64_t j = 0; j < S; j++) {
          int64_t e = base + c * S + j;
          setd(y, e, (getd(x, e) - mean) * inv * sc + b);
        }
      }
    }
  return OL_OK;
}

static ol_status groupnorm_create(const ol_node *node, ol_kernel **out) {
  int64_t g = ol_attr_int(node, "num_groups", 0);
  if (g < 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'num_groups' must be >= 1, got %lld",
                           (long long)g);
  eps_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, groupnorm_compute, (ol_kernel **)&k));
  k->epsilon = ol_attr_float(node, "epsilon", 1e-5f);
  k->groups = g;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ LpNormalization */

typedef struct lpnorm_kernel {
  ol_kernel base;
  int64_t axis, p;
} lpnorm_kernel;

static ol_status lpnorm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  lpnorm_kernel *k = (lpnorm_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_float(node, x, "input"));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  int64_t outer = ol_shape_count(axis, x->dims), n = x->dims[axis];
  int64_t inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i;
      double norm = 0.0;
      for (int64_t j = 0; j < n; j++) {
        double v = getd(x, base + j * inner);
        norm += k->p == 1 ? fabs(v) : v * v;
      }
      if (k->p == 2) norm = sqrt(norm);
      for (int64_t j = 0; j < n; j++) setd(y, base + j * inner, getd(x, base + j * inner) / norm);
    }
  return OL_OK;
}

static ol_status lpnorm_create(const ol_node *node, ol_kernel **out) {
  int64_t p = ol_attr_int(node, "p", 2);
  if (p != 1 && p != 2)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'p' must be 1 or 2, got %lld",
                           (long long)p);
  lpnorm_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, lpnorm_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", -1);
  k->p = p;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ MeanVarianceNormalization */

typedef struct mvn_kernel {
  ol_kernel base;
  int64_t n_axes;
  const int64_t *axes;
} mvn_kernel;

static ol_status mvn_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  mvn_kernel *k = (mvn_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_float(node, x, "input"));
  static const int64_t default_axes[3] = {0, 2, 3};
  const int64_t *axes = k->n_axes >= 0 ? k->axes : default_axes;
  int64_t na = k->n_axes >= 0 ? k->n_axes : 3;
  bool red[OL_MAX_RANK] = {false};
  for (int64_t i = 0; i < na; i++) {
    int a;
    OL_TRY(ol_normalize_axis(node, axes[i], x->rank, &a));
    red[a] = true;
  }
  /* group index per element: position over the kept axes */
  int64_t gstr[OL_MAX_RANK], groups = 1;
  for (int i = x->rank - 1; i >= 0; i--) {
    gstr[i] = red[i] ? 0 : groups;
    if (!red[i]) groups *= x->dims[i];
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int64_t total = ol_tcount(x);
  if (total == 0) return OL_OK;
  double *sum = ol_calloc(ctx->allocator, (size_t)groups * 3, sizeof(double));
  if (!sum) return OL_OUT_OF_MEMORY;
  double *sq = sum + groups, *cnt = sq + groups;
  for (int pass = 0; pass < 3; pass++) {
    int64_t idx[OL_MAX_RANK] = {0}, g = 0;
    for (int64_t e = 0; e < total; e++) {
      double v = getd(x, e);
      if (pass == 0) {
        sum[g] += v;
        cnt[g] += 1.0;
      } else if (pass == 1) {
        double d = v - sum[g];
        sq[g] += d * d;
      } else {
        setd(y, e, (v - sum[g]) / (sq[g] + 1e-9));
      }
      for (int i = x->rank - 1; i >= 0; i--) {
        g += gstr[i];
        if (++idx[i] < x->dims[i]) break;
        g -= gstr[i] * x->dims[i];
        idx[i] = 0;
      }
    }
    if (pass == 0)
      for (int64_t i = 0; i < groups; i++) sum[i] = cnt[i] > 0 ? sum[i] / cnt[i] : 0.0;
    if (pass == 1)
      for (int64_t i = 0; i < groups; i++) sq[i] = sqrt(cnt[i] > 0 ? sq[i] / cnt[i] : 0.0);
  }
  ol_dealloc(ctx->allocator, sum);
  return OL_OK;
}

static ol_status mvn_create(const ol_node *node, ol_kernel **out) {
  mvn_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, mvn_compute, (ol_kernel **)&k));
  k->n_axes = ol_attr_ints(node, "axes", &k->axes);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ LRN */

typedef struct lrn_kernel {
  ol_kernel base;
  int64_t size;
  double alpha, beta, bias;
} lrn_kernel;

static ol_status lrn_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  lrn_kernel *k = (lrn_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_float(node, x, "input"));
  if (x->rank < 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 2, got %d", x->rank);
  int64_t N = x->dims[0], C = x->dims[1], S = ol_shape_count(x->rank - 2, x->dims + 2);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int64_t lo = (k->size - 1) / 2, hi = k->size - 1 - lo;
  for (int64_t nn = 0; nn < N; nn++)
    for (int64_t c = 0; c < C; c++)
      for (int64_t j = 0; j < S; j++) {
        double sq = 0.0;
        /* the window clipped to the channels (size may be up to INT64_MAX) */
        int64_t first = c - lo < 0 ? 0 : c - lo, last = hi > C - 1 - c ? C - 1 : c + hi;
        for (int64_t cc = first; cc <= last; cc++) {
          double v = getd(x, (nn * C + cc) * S + j);
          sq += v * v;
        }
        int64_t e = (nn * C + c) * S + j;
        setd(y, e, getd(x, e) / ol_pow(k->bias + k->alpha / (double)k->size * sq, k->beta));
      }
  return OL_OK;
}

static ol_status lrn_create(const ol_node *node, ol_kernel **out) {
  int64_t size = ol_attr_int(node, "size", 0);
  if (size < 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'size' must be >= 1, got %lld",
                           (long long)size);
  lrn_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, lrn_compute, (ol_kernel **)&k));
  k->size = size;
  k->alpha = ol_attr_float(node, "alpha", 1e-4f);
  k->beta = ol_attr_float(node, "beta", 0.75f);
  k->bias = ol_attr_float(node, "bias", 1.0f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ registry */

#define FT "float16 bfloat16 float32 float64"
const ol_op_schema ol_schema_nn[] = {
    {"", "Softmax", 1, OL_OPSET_LATEST, softmax_create, ol_infer_like_input0, FT},
    {"", "LogSoftmax", 1, OL_OPSET_LATEST, logsoftmax_create, ol_infer_like_input0, FT},
    {"", "LayerNormalization", 17, OL_OPSET_LATEST, layernorm_create, ol_infer_layer_norm, FT},
    {"", "BatchNormalization", 1, OL_OPSET_LATEST, batchnorm_create, ol_infer_like_input0, FT},
    {"", "InstanceNormalization", 1, OL_OPSET_LATEST, instancenorm_create, ol_infer_like_input0, FT},
    {"", "GroupNormalization", 18, OL_OPSET_LATEST, groupnorm_create, ol_infer_like_input0, FT},
    {"", "LpNormalization", 1, OL_OPSET_LATEST, lpnorm_create, ol_infer_like_input0, FT},
    {"", "MeanVarianceNormalization", 9, OL_OPSET_LATEST, mvn_create, ol_infer_like_input0, FT},
    {"", "LRN", 1, OL_OPSET_LATEST, lrn_create, ol_infer_like_input0, FT},
    {"", "Einsum", 12, OL_OPSET_LATEST, ol_nn_einsum_create, NULL, FT " int32 int64 uint32 uint64 ..."},
    {"", "Conv", 1, OL_OPSET_LATEST, ol_nn_conv_create, ol_infer_conv, FT},
    {"", "ConvTranspose", 1, OL_OPSET_LATEST, ol_nn_conv_transpose_create, ol_infer_conv_transpose, FT},
    {"", "MaxPool", 1, OL_OPSET_LATEST, ol_nn_maxpool_create, ol_infer_pool, FT " int8 uint8"},
    {"", "AveragePool", 1, OL_OPSET_LATEST, ol_nn_avgpool_create, ol_infer_pool, FT},
    {"", "LpPool", 1, OL_OPSET_LATEST, ol_nn_lppool_create, ol_infer_pool, FT},
    {"", "GlobalAveragePool", 1, OL_OPSET_LATEST, ol_nn_global_avgpool_create, ol_infer_global_pool, FT},
    {"", "GlobalMaxPool", 1, OL_OPSET_LATEST, ol_nn_global_maxpool_create, ol_infer_global_pool, FT},
    {"", "GlobalLpPool", 1, OL_OPSET_LATEST, ol_nn_global_lppool_create, ol_infer_global_pool, FT},
    {0},
};
