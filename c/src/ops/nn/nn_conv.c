/* Neural-network operators, part 2: convolutions and pooling (registered in
 * nn.c).
 *
 *   Conv 1-23:          N-D, groups, pads/auto_pad, strides, dilations, bias
 *   ConvTranspose 1-23: N-D, groups, output_padding, output_shape, auto_pad
 *   MaxPool 1-23:       Indices output (8+, storage_order), ceil_mode and
 *                       dilations (10+), int8/uint8 (12+)
 *   AveragePool 1-23:   count_include_pad (7+), ceil_mode (10+), dilations (19+)
 *   LpPool 1-23, GlobalAveragePool / GlobalMaxPool / GlobalLpPool 1-23
 *
 * Conv runs im2col over chunks of output positions and a fixed-order
 * multiply-accumulate (k increasing, starting from +0, bias added last), in
 * float32 for float32/float16/bfloat16 and in double for float64. Pooling
 * computes in double. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn/nn.h"
#include "simd/math.h"

/* ------------------------------------------------------------ attributes and geometry */

enum { PAD_NOTSET, PAD_SAME_UPPER, PAD_SAME_LOWER, PAD_VALID };

typedef struct conv_kernel {
  ol_kernel base;
  int auto_pad;
  int64_t n_kernel, n_pads, n_strides, n_dil, n_outpad, n_outshape;
  const int64_t *kernel_shape, *pads, *strides, *dilations, *output_padding, *output_shape;
  int64_t group;
  bool ceil_mode, count_include_pad;
  int64_t storage_order;
  double p;
} conv_kernel;

typedef struct geom {
  int nsp;
  int64_t in[OL_MAX_RANK], out[OL_MAX_RANK], k[OL_MAX_RANK], s[OL_MAX_RANK], d[OL_MAX_RANK];
  int64_t pb[OL_MAX_RANK], pe[OL_MAX_RANK];
  int64_t in_size, out_size, k_size;
} geom;

static ol_status conv_attrs_read(const ol_node *node, conv_kernel *k) {
  const char *ap = ol_attr_string(node, "auto_pad", "NOTSET");
  if (strcmp(ap, "NOTSET") == 0) k->auto_pad = PAD_NOTSET;
  else if (strcmp(ap, "SAME_UPPER") == 0) k->auto_pad = PAD_SAME_UPPER;
  else if (strcmp(ap, "SAME_LOWER") == 0) k->auto_pad = PAD_SAME_LOWER;
  else if (strcmp(ap, "VALID") == 0) k->auto_pad = PAD_VALID;
  else
    return ol_kernel_error(node, OL_INVALID_MODEL, "auto_pad '%s' is not valid", ap);
  k->n_kernel = ol_attr_ints(node, "kernel_shape", &k->kernel_shape);
  k->n_pads = ol_attr_ints(node, "pads", &k->pads);
  k->n_strides = ol_attr_ints(node, "strides", &k->strides);
  k->n_dil = ol_attr_ints(node, "dilations", &k->dilations);
  k->n_outpad = ol_attr_ints(node, "output_padding", &k->output_padding);
  k->n_outshape = ol_attr_ints(node, "output_shape", &k->output_shape);
  k->group = ol_attr_int(node, "group", 1);
  k->ceil_mode = ol_attr_int(node, "ceil_mode", 0) != 0;
  k->count_include_pad = ol_attr_int(node, "count_include_pad", 0) != 0;
  k->storage_order = ol_attr_int(node, "storage_order", 0);
  k->p = ol_attr_float(node, "p", 2.0f);
  if (k->group < 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "group must be >= 1, got %lld", (long long)k->group);
  for (int64_t i = 0; i < k->n_strides; i++)
    if (k->strides[i] < 1)
      return ol_kernel_error(node, OL_INVALID_MODEL, "strides must be >= 1");
  for (int64_t i = 0; i < k->n_dil; i++)
    if (k->dilations[i] < 1)
      return ol_kernel_error(node, OL_INVALID_MODEL, "dilations must be >= 1");
  for (int64_t i = 0; i < k->n_kernel; i++)
    if (k->kernel_shape[i] < 1)
      return ol_kernel_error(node, OL_INVALID_MODEL, "kernel_shape must be >= 1");
  for (int64_t i = 0; i < k->n_pads; i++)
    if (k->pads[i] < 0)
      return ol_kernel_error(node, OL_INVALID_MODEL, "pads must be >= 0");
  return OL_OK;
}

static ol_status check_len(const ol_node *node, const char *what, int64_t n, int64_t want) {
  if (n >= 0 && n != want)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attribute '%s' has %lld values, expected %lld",
                           what, (long long)n, (long long)want);
  return OL_OK;
}

/* The dilated extent (k - 1) * d + 1 of a kernel dimension; false on overflow. */
static bool dilated_extent(int64_t k, int64_t d, int64_t *ek) {
  return ol_i64_mul(k - 1, d, ek) && ol_i64_add(*ek, 1, ek);
}

/* a / b rounded up, for a >= 0 and b >= 1 (no overflow) */
static int64_t div_up(int64_t a, int64_t b) { return a / b + (a % b != 0); }

/* Forward geometry (Conv and pools). kdims: kernel spatial dims. Attribute
 * values are anything a model says: the arithmetic is checked, so extreme
 * kernels, dilations and pads are errors, never wrapped sizes. */
static ol_status geom_forward(const ol_node *node, const conv_kernel *k, int nsp,
                              const int64_t *in, const int64_t *kdims, bool ceil_mode, geom *g) {
  OL_TRY(check_len(node, "strides", k->n_strides, nsp));
  OL_TRY(check_len(node, "dilations", k->n_dil, nsp));
  OL_TRY(check_len(node, "pads", k->n_pads, 2 * nsp));
  g->nsp = nsp;
  g->in_size = g->out_size = g->k_size = 1;
  for (int i = 0; i < nsp; i++) {
    g->in[i] = in[i];
    g->k[i] = kdims[i];
    g->s[i] = k->n_strides > 0 ? k->strides[i] : 1;
    g->d[i] = k->n_dil > 0 ? k->dilations[i] : 1;
    int64_t ek, out, padded_in = 0;
    if (!dilated_extent(g->k[i], g->d[i], &ek))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "kernel dimension %d (%lld, dilation %lld) overflows", i,
                             (long long)g->k[i], (long long)g->d[i]);
    switch (k->auto_pad) {
      case PAD_VALID:
        g->pb[i] = g->pe[i] = 0;
        out = in[i] >= ek ? (in[i] - ek) / g->s[i] + 1 : 0;
        if (ceil_mode && in[i] >= ek) out = div_up(in[i] - ek, g->s[i]) + 1;
        break;
      case PAD_SAME_UPPER:
      case PAD_SAME_LOWER: {
        out = div_up(in[i], g->s[i]);
        int64_t total = 0;
        if (out > 0 && (!ol_i64_mul(out - 1, g->s[i], &total) || !ol_i64_add(total, ek - in[i], &total)))
          return ol_kernel_error(node, OL_INVALID_ARGUMENT, "padding of dimension %d overflows", i);
        if (total < 0) total = 0;
        if (k->auto_pad == PAD_SAME_UPPER) {
          g->pb[i] = total / 2;
          g->pe[i] = total - g->pb[i];
        } else {
          g->pe[i] = total / 2;
          g->pb[i] = total - g->pe[i];
        }
        break;
      }
      default: {
        g->pb[i] = k->n_pads > 0 ? k->pads[i] : 0;
        g->pe[i] = k->n_pads > 0 ? k->pads[nsp + i] : 0;
        if (!ol_i64_add(in[i], g->pb[i], &padded_in) || !ol_i64_add(padded_in, g->pe[i], &padded_in))
          return ol_kernel_error(node, OL_INVALID_ARGUMENT, "pads %lld and %lld overflow dimension %d (%lld)",
                                 (long long)g->pb[i], (long long)g->pe[i], i, (long long)in[i]);
        int64_t span = padded_in - ek;
        if (span < 0) {
          out = 0;
        } else if (ceil_mode) {
          out = div_up(span, g->s[i]) + 1;
          int64_t last; /* the last window must start inside the input or the begin padding */
          if (!ol_i64_mul(out - 1, g->s[i], &last) || last >= in[i] + g->pb[i]) out--;
        } else {
          out = span / g->s[i] + 1;
        }
      }
    }
    /* the padded input (in + pb + pe) fits: window positions never overflow */
    if (!ol_i64_add(in[i], g->pb[i], &padded_in) || !ol_i64_add(padded_in, g->pe[i], &padded_in))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "padding of dimension %d overflows", i);
    g->out[i] = out;
    if (!ol_i64_mul(g->in_size, in[i], &g->in_size) || !ol_i64_mul(g->out_size, out, &g->out_size) ||
        !ol_i64_mul(g->k_size, g->k[i], &g->k_size))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "kernel or output size overflows at dimension %d", i);
  }
  return OL_OK;
}

/* Row-major multi-index increment; returns false after the last. */
static inline bool next_index(int n, const int64_t *dims, int64_t *idx) {
  for (int i = n - 1; i >= 0; i--) {
    if (++idx[i] < dims[i]) return true;
    idx[i] = 0;
  }
  return false;
}

static bool conv_float_type(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

/* Converts a tensor of any float type to a new float or double array of alloc. */
static void *to_array(ol_allocator *alloc, const ol_tensor *t, bool dbl) {
  int64_t n = ol_tcount(t);
  void *a = ol_alloc(alloc, (dbl ? sizeof(double) : sizeof(float)) * (size_t)(n + 1));
  if (!a) return NULL;
  if (dbl) {
    for (int64_t i = 0; i < n; i++) ((double *)a)[i] = ol_tensor_get_double(t, i);
  } else if (t->dtype == OL_DTYPE_FLOAT) {
    memcpy(a, ol_tdata(t), sizeof(float) * (size_t)n);
  } else {
    for (int64_t i = 0; i < n; i++) ((float *)a)[i] = (float)ol_tensor_get_double(t, i);
  }
  return a;
}

static void from_array(ol_tensor *t, const void *a, bool dbl) {
  int64_t n = ol_tcount(t);
  if (dbl) {
    memcpy(ol_tdata(t), a, sizeof(double) * (size_t)n);
  } else if (t->dtype == OL_DTYPE_FLOAT) {
    memcpy(ol_tdata(t), a, sizeof(float) * (size_t)n);
  } else {
    for (int64_t i = 0; i < n; i++) ol_tensor_set_double(t, i, ((const float *)a)[i]);
  }
}

/* ------------------------------------------------------------ Conv */

#define CONV_CHUNK 2048

#define DEF_CONV(T, NAME)                                                                      \
  static ol_status NAME(ol_allocator *alloc, const geom *g, int64_t N, int64_t C, int64_t M,   \
                        int64_t G, const T *x, const T *w, const T *b, T *y) {                 \
    int64_t Cg = C / G, Mg = M / G, K = g->k_size, OS = g->out_size, IS = g->in_size;          \
    int nsp = g->nsp;                                                                          \
    int64_t chunk = OS < CONV_CHUNK ? OS : CONV_CHUNK;                                         \
    int64_t rows = Cg * K;                                                                     \
    T *col = ol_alloc(alloc, sizeof(T) * (size_t)(rows * chunk + 1));                          \
    int64_t *ib = ol_alloc(alloc, sizeof(int64_t) * (size_t)(chunk * nsp + 1));                \
    int64_t *kd = ol_alloc(alloc, sizeof(int64_t) * (size_t)(K * nsp + 1));                    \
    if (!col || !ib || !kd) {                                                                  \
      ol_dealloc(alloc, col);                                                                  \
      ol_dealloc(alloc, ib);                                                                   \
      ol_dealloc(alloc, kd);                                                                   \
      return OL_OUT_OF_MEMORY;                                                                 \
    }                                                                                          \
    int64_t istr[OL_MAX_RANK], s = 1;                                                          \
    for (int i = nsp - 1; i >= 0; i--) {                                                       \
      istr[i] = s;                                                                             \
      s *= g->in[i];                                                                           \
    }                                                                                          \
    {                                                                                          \
      int64_t kidx[OL_MAX_RANK] = {0};                                                         \
      for (int64_t kk = 0; kk < K; kk++) {                                                     \
        for (int i = 0; i < nsp; i++) kd[kk * nsp + i] = kidx[i] * g->d[i];                    \
        next_index(nsp, g->k, kidx);                                                           \
      }                                                                                        \
    }                                                                                          \
    for (int64_t p0 = 0; p0 < OS; p0 += chunk) {                                               \
      int64_t cs = OS - p0 < chunk ? OS - p0 : chunk;                                          \
      for (int64_t p = 0; p < cs; p++) {                                                       \
        int64_t rem = p0 + p;                                                                  \
        for (int i = nsp - 1; i >= 0; i--) {                                                   \
          int64_t o = rem % g->out[i];                                                         \
          rem /= g->out[i];                                                                    \
          ib[p * nsp + i] = o * g->s[i] - g->pb[i];                                            \
        }                                                                                      \
      }                                                                                        \
      for (int64_t n = 0; n < N; n++)                                                          \
        for (int64_t gi = 0; gi < G; gi++) {                                                   \
          for (int64_t c = 0; c < Cg; c++) {                                                   \
            const T *xc = x + (n * C + gi * Cg + c) * IS;                                      \
            for (int64_t kk = 0; kk < K; kk++) {                                               \
              T *crow = col + (c * K + kk) * cs;                                               \
              for (int64_t p = 0; p < cs; p++) {                                               \
                int64_t off = 0;                                                               \
                bool in = true;                                                                \
                for (int i = 0; i < nsp; i++) {                                                \
                  int64_t v = ib[p * nsp + i] + kd[kk * nsp + i];                              \
                  if (v < 0 || v >= g->in[i]) {                                                \
                    in = false;                                                                \
                    break;                                                                     \
                  }                                                                            \
                  off += v * istr[i];                                                          \
                }                                                                              \
                crow[p] = in ? xc[off] : (T)0;                                                 \
              }                                                                                \
            }                                                                                  \
          }                                                                                    \
          for (int64_t m = 0; m < Mg; m++) {                                                   \
            int64_t oc = gi * Mg + m;                                                          \
            T *yr = y + (n * M + oc) * OS + p0;                                                \
            const T *wr = w + oc * rows;                                                       \
            for (int64_t p = 0; p < cs; p++) yr[p] = 0;                                        \
            for (int64_t r = 0; r < rows; r++) {                                               \
              T wv = wr[r];                                                                    \
              const T *cr = col + r * cs;                                                      \
              for (int64_t p = 0; p < cs; p++) yr[p] = yr[p] + wv * cr[p];                     \
            }                                                                                  \
            if (b)                                                                             \
              for (int64_t p = 0; p < cs; p++) yr[p] = yr[p] + b[oc];                          \
          }                                                                                    \
        }                                                                                      \
    }                                                                                          \
    ol_dealloc(alloc, col);                                                                    \
    ol_dealloc(alloc, ib);                                                                     \
    ol_dealloc(alloc, kd);                                                                     \
    return OL_OK;                                                                              \
  }
DEF_CONV(float, conv_f32)
DEF_CONV(double, conv_f64)

static ol_status conv_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  conv_kernel *k = (conv_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *w, *b = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &w));
  if (!conv_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "X, W and B must have the same type");
  if (x->rank < 3 || w->rank != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "X must have rank >= 3 and W the same rank (got %d and %d)", x->rank,
                           w->rank);
  int nsp = x->rank - 2;
  int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], G = k->group;
  if (C % G != 0 || M % G != 0 || w->dims[1] != C / G)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "channels do not match: X has %lld, W is [%lld, %lld, ...] with group %lld",
                           (long long)C, (long long)M, (long long)w->dims[1], (long long)G);
  if (b && ol_tcount(b) != M)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "B has %lld values for %lld output channels",
                           (long long)ol_tcount(b), (long long)M);
  OL_TRY(check_len(node, "kernel_shape", k->n_kernel, nsp));
  for (int i = 0; i < k->n_kernel; i++)
    if (k->kernel_shape[i] != w->dims[2 + i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "kernel_shape[%d] = %lld but W has %lld", i,
                             (long long)k->kernel_shape[i], (long long)w->dims[2 + i]);
  geom g;
  OL_TRY(geom_forward(node, k, nsp, x->dims + 2, w->dims + 2, false, &g));
  int64_t dims[OL_MAX_RANK];
  dims[0] = N;
  dims[1] = M;
  for (int i = 0; i < nsp; i++) dims[2 + i] = g.out[i];
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, dims, &y));
  if (ol_tcount(y) == 0) return OL_OK;
  bool dbl = x->dtype == OL_DTYPE_DOUBLE;
  ol_allocator *alloc = ctx->allocator;
  if (x->dtype == OL_DTYPE_FLOAT)
    return conv_f32(alloc, &g, N, C, M, G, ol_tdata(x), ol_tdata(w), b ? ol_tdata(b) : NULL, ol_tdata(y));
  if (dbl)
    return conv_f64(alloc, &g, N, C, M, G, ol_tdata(x), ol_tdata(w), b ? ol_tdata(b) : NULL, ol_tdata(y));
  float *xa = to_array(alloc, x, false), *wa = to_array(alloc, w, false), *ba = b ? to_array(alloc, b, false) : NULL;
  float *ya = ol_alloc(alloc, sizeof(float) * (size_t)ol_tcount(y));
  ol_status s = OL_OUT_OF_MEMORY;
  if (xa && wa && ya && (!b || ba)) {
    s = conv_f32(alloc, &g, N, C, M, G, xa, wa, ba, ya);
    if (s == OL_OK) from_array(y, ya, false);
  }
  ol_dealloc(alloc, xa);
  ol_dealloc(alloc, wa);
  ol_dealloc(alloc, ba);
  ol_dealloc(alloc, ya);
  return s;
}

static ol_status conv_create_common(const ol_node *node, ol_kernel_compute_fn fn, ol_kernel **out) {
  conv_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, fn, (ol_kernel **)&k));
  ol_status s = conv_attrs_read(node, k);
  if (s != OL_OK) {
    free(k);
    return s;
  }
  *out = &k->base;
  return OL_OK;
}

ol_status ol_nn_conv_create(const ol_node *node, ol_kernel **out) {
  return conv_create_common(node, conv_compute, out);
}

/* ------------------------------------------------------------ ConvTranspose */

static ol_status conv_transpose_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  conv_kernel *k = (conv_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *w, *b = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &w));
  if (!conv_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (w->dtype != x->dtype || (b && b->dtype != x->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "X, W and B must have the same type");
  if (x->rank < 3 || w->rank != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "X must have rank >= 3 and W the same rank (got %d and %d)", x->rank,
                           w->rank);
  int nsp = x->rank - 2;
  int64_t N = x->dims[0], C = x->dims[1], G = k->group;
  if (w->dims[0] != C || C % G != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "W has %lld input channels, X has %lld (group %lld)",
                           (long long)w->dims[0], (long long)C, (long long)G);
  int64_t Mg = w->dims[1], M = Mg * G, Cg = C / G;
  if (b && ol_tcount(b) != M)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "B has %lld values for %lld output channels",
                           (long long)ol_tcount(b), (long long)M);
  OL_TRY(check_len(node, "kernel_shape", k->n_kernel, nsp));
  OL_TRY(check_len(node, "strides", k->n_strides, nsp));
  OL_TRY(check_len(node, "dilations", k->n_dil, nsp));
  OL_TRY(check_len(node, "pads", k->n_pads, 2 * nsp));
  OL_TRY(check_len(node, "output_padding", k->n_outpad, nsp));
  if (k->n_outshape >= 0 && k->n_outshape != nsp && k->n_outshape != nsp + 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output_shape has %lld values",
                           (long long)k->n_outshape);
  geom g;
  g.nsp = nsp;
  g.in_size = g.out_size = g.k_size = 1;
  for (int i = 0; i < nsp; i++) {
    g.in[i] = x->dims[2 + i];
    g.k[i] = w->dims[2 + i];
    g.s[i] = k->n_strides > 0 ? k->strides[i] : 1;
    g.d[i] = k->n_dil > 0 ? k->dilations[i] : 1;
    int64_t op = k->n_outpad > 0 ? k->output_padding[i] : 0;
    int64_t ek, full, target = -1;
    if (!dilated_extent(g.k[i], g.d[i], &ek) || !ol_i64_mul(g.s[i], g.in[i] - 1, &full) ||
        !ol_i64_add(full, op, &full) || !ol_i64_add(full, ek, &full))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output dimension %d overflows (kernel %lld, dilation %lld, "
                             "stride %lld, output_padding %lld)", i, (long long)g.k[i], (long long)g.d[i],
                             (long long)g.s[i], (long long)op);
    if (k->n_outshape >= 0) target = k->output_shape[k->n_outshape - nsp + i];
    else if ((k->auto_pad == PAD_SAME_UPPER || k->auto_pad == PAD_SAME_LOWER) && !ol_i64_mul(g.in[i], g.s[i], &target))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output dimension %d overflows", i);
    if (target >= 0) {
      int64_t total = full - target;
      if (total < 0) total = 0; /* extra output is zero-filled on the end */
      if (k->auto_pad == PAD_SAME_UPPER) {
        g.pb[i] = total / 2;
        g.pe[i] = total - total / 2;
      } else {
        g.pb[i] = total - total / 2;
        g.pe[i] = total / 2;
      }
      g.out[i] = target;
    } else {
      g.pb[i] = k->auto_pad == PAD_VALID || k->n_pads <= 0 ? 0 : k->pads[i];
      g.pe[i] = k->auto_pad == PAD_VALID || k->n_pads <= 0 ? 0 : k->pads[nsp + i];
      if (!ol_i64_sub(full, g.pb[i], &g.out[i]) || !ol_i64_sub(g.out[i], g.pe[i], &g.out[i]) || g.out[i] < 0)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output dimension %d would be negative", i);
    }
    if (!ol_i64_mul(g.out_size, g.out[i], &g.out_size))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output size overflows at dimension %d", i);
    g.in_size *= g.in[i];
    g.k_size *= g.k[i];
  }
  int64_t dims[OL_MAX_RANK];
  dims[0] = N;
  dims[1] = M;
  for (int i = 0; i < nsp; i++) dims[2 + i] = g.out[i];
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, dims, &y));
  if (ol_tcount(y) == 0) return OL_OK;
  bool dbl = x->dtype == OL_DTYPE_DOUBLE;
  double *xa = to_array(ctx->allocator, x, true), *wa = to_array(ctx->allocator, w, true);
  double *ya = ol_calloc(ctx->allocator, (size_t)ol_tcount(y), sizeof(double));
  size_t kd_count; /* SIZE_MAX on overflow: the allocation below fails */
  if (!ol_mul_size((size_t)g.k_size, (size_t)nsp, &kd_count) || !ol_add_size(kd_count, 1, &kd_count)) kd_count = SIZE_MAX;
  int64_t *kd = ol_calloc(ctx->allocator, kd_count, sizeof(int64_t));
  ol_status s = OL_OUT_OF_MEMORY;
  (void)dbl;
  if (xa && wa && ya && kd) {
    s = OL_OK;
    int64_t kidx[OL_MAX_RANK] = {0};
    for (int64_t kk = 0; kk < g.k_size; kk++) {
      for (int i = 0; i < nsp; i++) kd[kk * nsp + i] = kidx[i] * g.d[i];
      next_index(nsp, g.k, kidx);
    }
    int64_t ostr[OL_MAX_RANK], st = 1;
    for (int i = nsp - 1; i >= 0; i--) {
      ostr[i] = st;
      st *= g.out[i];
    }
    for (int64_t n = 0; n < N; n++)
      for (int64_t gi = 0; gi < G; gi++)
        for (int64_t c = 0; c < Cg; c++) {
          const double *xc = xa + (n * C + gi * Cg + c) * g.in_size;
          int64_t iidx[OL_MAX_RANK] = {0};
          for (int64_t ip = 0; ip < g.in_size; ip++) {
            double xv = xc[ip];
            for (int64_t kk = 0; kk < g.k_size; kk++) {
              int64_t off = 0;
              bool in = true;
              for (int i = 0; i < nsp; i++) {
                int64_t v = iidx[i] * g.s[i] - g.pb[i] + kd[kk * nsp + i];
                if (v < 0 || v >= g.out[i]) {
                  in = false;
                  break;
                }
                off += v * ostr[i];
              }
              if (!in) continue;
              for (int64_t m = 0; m < Mg; m++) {
                double wv = wa[((gi * Cg + c) * Mg + m) * g.k_size + kk];
                ya[(n * M + gi * Mg + m) * g.out_size + off] += xv * wv;
              }
            }
            next_index(nsp, g.in, iidx);
          }
        }
    if (b)
      for (int64_t n = 0; n < N; n++)
        for (int64_t m = 0; m < M; m++) {
          double bv = ol_tensor_get_double(b, m);
          double *yr = ya + (n * M + m) * g.out_size;
          for (int64_t p = 0; p < g.out_size; p++) yr[p] += bv;
        }
    int64_t n_out = ol_tcount(y);
    for (int64_t i = 0; i < n_out; i++) {
      if (y->dtype == OL_DTYPE_DOUBLE) ((double *)ol_tdata(y))[i] = ya[i];
      else if (y->dtype == OL_DTYPE_FLOAT) ((float *)ol_tdata(y))[i] = (float)ya[i];
      else ol_tensor_set_double(y, i, (float)ya[i]);
    }
  }
  ol_dealloc(ctx->allocator, xa);
  ol_dealloc(ctx->allocator, wa);
  ol_dealloc(ctx->allocator, ya);
  ol_dealloc(ctx->allocator, kd);
  return s;
}

ol_status ol_nn_conv_transpose_create(const ol_node *node, ol_kernel **out) {
  return conv_create_common(node, conv_transpose_compute, out);
}

/* ------------------------------------------------------------ pooling */

enum { POOL_MAX, POOL_AVG, POOL_LP };

typedef struct pool_kernel {
  conv_kernel c;
  int kind;
  bool global;
} pool_kernel;

static bool pool_dtype_ok(int kind, ol_dtype dt, int opset) {
  if (conv_float_type(dt)) return true;
  return kind == POOL_MAX && opset >= 12 && (dt == OL_DTYPE_INT8 || dt == OL_DTYPE_UINT8);
}

static ol_status pool_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  pool_kernel *pk = (pool_kernel *)kernel;
  conv_kernel *k = &pk->c;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!pool_dtype_ok(pk->kind, x->dtype, node->opset))
    return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (x->rank < 3)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "X must have rank >= 3, got %d", x->rank);
  int nsp = x->rank - 2;
  int64_t N = x->dims[0], C = x->dims[1];
  geom g;
  if (pk->global) {
    g.nsp = nsp;
    g.in_size = g.k_size = 1;
    g.out_size = 1;
    for (int i = 0; i < nsp; i++) {
      g.in[i] = g.k[i] = x->dims[2 + i];
      g.out[i] = 1;
      g.s[i] = g.d[i] = 1;
      g.pb[i] = g.pe[i] = 0;
      g.in_size *= g.in[i];
      g.k_size *= g.k[i];
    }
  } else {
    if (k->n_kernel != nsp)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "kernel_shape has %lld values for %d spatial dimensions",
                             (long long)k->n_kernel, nsp);
    OL_TRY(geom_forward(node, k, nsp, x->dims + 2, k->kernel_shape, k->ceil_mode, &g));
  }
  int64_t dims[OL_MAX_RANK];
  dims[0] = N;
  dims[1] = C;
  for (int i = 0; i < nsp; i++) dims[2 + i] = g.out[i];
  ol_tensor *y, *ind = NULL;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, dims, &y));
  if (pk->kind == POOL_MAX && ol_ctx_wants_output(ctx, 1))
    OL_TRY(ol_ctx_output(ctx, 1, OL_DTYPE_INT64, x->rank, dims, &ind));
  int64_t istr[OL_MAX_RANK], cstr[OL_MAX_RANK], s = 1, cs = 1;
  for (int i = nsp - 1; i >= 0; i--) {
    istr[i] = s;
    s *= g.in[i];
  }
  for (int i = 0; i < nsp; i++) { /* column-major spatial strides (storage_order 1) */
    cstr[i] = cs;
    cs *= g.in[i];
  }
  double p = k->p;
  for (int64_t nc = 0; nc < N * C; nc++) {
    int64_t xbase = nc * g.in_size;
    int64_t oidx[OL_MAX_RANK] = {0};
    for (int64_t op = 0; op < g.out_size; op++) {
      double acc = pk->kind == POOL_MAX ? -INFINITY : 0.0;
      int64_t best = -1, count = 0, padded = 1;
      /* The window clipped to the input: kernel indices klo[i] .. klo[i] +
       * kn[i] - 1 land inside it, in the same order as over the whole
       * window. Those in the padding only count (count_include_pad), so a
       * kernel far larger than the input costs no more than the input. */
      int64_t start[OL_MAX_RANK], klo[OL_MAX_RANK], kn[OL_MAX_RANK], box = 1;
      for (int i = 0; i < nsp; i++) {
        start[i] = oidx[i] * g.s[i] - g.pb[i];
        klo[i] = start[i] >= 0 ? 0 : div_up(-start[i], g.d[i]);
        int64_t khi = start[i] >= g.in[i] ? -1 : (g.in[i] - 1 - start[i]) / g.d[i];
        if (khi > g.k[i] - 1) khi = g.k[i] - 1;
        kn[i] = khi >= klo[i] ? khi - klo[i] + 1 : 0;
        box *= kn[i];
        int64_t room = g.in[i] + g.pe[i] - start[i]; /* positions left before the end padding ends */
        int64_t in_pad = room > 0 ? div_up(room, g.d[i]) : 0;
        padded *= in_pad < g.k[i] ? in_pad : g.k[i];
      }
      int64_t kidx[OL_MAX_RANK] = {0};
      for (int64_t kk = 0; kk < box; kk++) {
        int64_t off = 0, coff = 0;
        for (int i = 0; i < nsp; i++) {
          int64_t v = start[i] + (klo[i] + kidx[i]) * g.d[i];
          off += v * istr[i];
          coff += v * cstr[i];
        }
        next_index(nsp, kn, kidx);
        double v = ol_tensor_get_double(x, xbase + off);
        count++;
        switch (pk->kind) {
          case POOL_MAX:
            if (v > acc || best < 0 || (v != v && acc == acc)) {
              acc = v;
              best = k->storage_order ? nc * g.in_size + coff : xbase + off;
            }
            break;
          case POOL_AVG: acc += v; break;
          default:
            acc += p == 1.0 ? fabs(v) : p == 2.0 ? v * v : ol_pow(fabs(v), p);
        }
      }
      int64_t e = nc * g.out_size + op;
      double r = acc;
      if (pk->kind == POOL_AVG) {
        int64_t div = pk->global ? g.k_size : k->count_include_pad ? padded : count;
        r = div ? acc / (double)div : 0.0;
      } else if (pk->kind == POOL_LP) {
        r = p == 1.0 ? acc : p == 2.0 ? sqrt(acc) : ol_pow(acc, 1.0 / p);
      } else if (best < 0) {
        r = 0.0; /* window entirely in the padding */
      }
      if (y->dtype == OL_DTYPE_FLOAT) ((float *)ol_tdata(y))[e] = (float)r;
      else if (y->dtype == OL_DTYPE_DOUBLE) ((double *)ol_tdata(y))[e] = r;
      else ol_tensor_set_double(y, e, r);
      if (ind) ((int64_t *)ol_tdata(ind))[e] = best < 0 ? 0 : best;
      next_index(nsp, g.out, oidx);
    }
  }
  return OL_OK;
}

static ol_status pool_create(const ol_node *node, int kind, bool global, ol_kernel **out) {
  pool_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, pool_compute, (ol_kernel **)&k));
  ol_status s = conv_attrs_read(node, &k->c);
  if (s == OL_OK && !global && k->c.n_kernel < 1)
    s = ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'kernel_shape' is required");
  if (s == OL_OK && kind == POOL_MAX && node->opset < 10 && (k->c.n_dil > 0 || k->c.ceil_mode))
    s = ol_kernel_error(node, OL_INVALID_MODEL, "dilations/ceil_mode need MaxPool opset 10");
  if (s == OL_OK && kind == POOL_LP && !(k->c.p > 0))
    s = ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'p' must be positive");
  if (s != OL_OK) {
    free(k);
    return s;
  }
  if (kind == POOL_LP) {
    const ol_attr *pa = ol_node_attr(node, "p");
    k->c.p = pa && pa->type == OL_ATTR_INT ? (double)pa->i : pa ? pa->f : 2.0;
  }
  k->kind = kind;
  k->global = global;
  *out = &k->c.base;
  return OL_OK;
}

ol_status ol_nn_maxpool_create(const ol_node *node, ol_kernel **out) {
  return pool_create(node, POOL_MAX, false, out);
}
ol_status ol_nn_avgpool_create(const ol_node *node, ol_kernel **out) {
  return pool_create(node, POOL_AVG, false, out);
}
ol_status ol_nn_lppool_create(const ol_node *node, ol_kernel **out) {
  return pool_create(node, POOL_LP, false, out);
}
ol_status ol_nn_global_avgpool_create(const ol_node *node, ol_kernel **out) {
  return pool_create(node, POOL_AVG, true, out);
}
ol_status ol_nn_global_maxpool_create(const ol_node *node, ol_kernel **out) {
  return pool_create(node, POOL_MAX, true, out);
}
ol_status ol_nn_global_lppool_create(const ol_node *node, ol_kernel **out) {
  return pool_create(node, POOL_LP, true, out);
}
