/* Resize and Upsample (ai.onnx).
 *
 *   Resize 10 (nearest/linear, asymmetric coordinates, scales input)
 *   Resize 11-12, 13-17 (roi/scales/sizes, coordinate_transformation_mode,
 *                        nearest_mode, cubic_coeff_a, exclude_outside,
 *                        extrapolation_value)
 *   Resize 18-23 (axes, keep_aspect_ratio_policy, antialias;
 *                 half_pixel_symmetric from 19)
 *   Upsample 7-9 (scales attribute at 7, input at 9; nearest/linear)
 *
 * Interpolation is separable: one pass per resized axis, each output index
 * reading a short list of (input index, weight) pairs computed in double.
 * Linear and cubic compute in double and round once to the output type;
 * nearest copies elements (any dtype). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn/nn.h"

enum { CT_HALF_PIXEL, CT_HALF_PIXEL_SYM, CT_PYTORCH, CT_ALIGN, CT_ASYM, CT_TF_CROP, CT_TF_NN };
enum { MODE_NEAREST, MODE_LINEAR, MODE_CUBIC };
enum { NM_ROUND_FLOOR, NM_ROUND_CEIL, NM_FLOOR, NM_CEIL, NM_SIMPLE };
enum { KA_STRETCH, KA_NOT_LARGER, KA_NOT_SMALLER };

typedef struct resize_kernel {
  ol_kernel base;
  int mode, ct, nearest, keep_aspect;
  double cubic_a, extrapolation;
  bool exclude_outside, antialias, upsample7;
  int64_t num_axes;
  int64_t axes[OL_MAX_RANK];
  int64_t num_scales7;
  double scales7[OL_MAX_RANK];
} resize_kernel;

/* One output index along one axis: weights over input indices. */
typedef struct axis_plan {
  int64_t in_len, out_len;
  int taps;         /* weights per output index */
  int64_t *index;   /* out_len * taps, clamped input indices */
  double *weight;   /* out_len * taps */
  bool *outside;    /* tf_crop_and_resize extrapolation */
  ol_allocator *alloc; /* of the three arrays (the run's) */
} axis_plan;

static void plan_free(axis_plan *p) {
  ol_dealloc(p->alloc, p->index);
  ol_dealloc(p->alloc, p->weight);
  ol_dealloc(p->alloc, p->outside);
}

static double cubic_w(double x, double a) {
  x = fabs(x);
  if (x <= 1.0) return ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0;
  if (x < 2.0) return ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a;
  return 0.0;
}

static int64_t clampi(int64_t v, int64_t lo, int64_t hi) { return v < lo ? lo : v > hi ? hi : v; }

static ol_status build_plan(const resize_kernel *k, ol_allocator *alloc, axis_plan *p, int64_t in_len,
                            int64_t out_len, double scale, double roi_start, double roi_end) {
  memset(p, 0, sizeof *p);
  p->alloc = alloc;
  p->in_len = in_len;
  p->out_len = out_len;
  double out_w = scale * (double)in_len; /* the float output width of the reference */
  int taps;
  int start = 0;
  double s = scale < 1.0 ? scale : 1.0;
  if (k->mode == MODE_NEAREST) {
    taps = 1;
  } else if (k->mode == MODE_LINEAR) {
    if (k->antialias && scale < 1.0) {
      start = (int)(floor(-1.0 / s) + 1.0);
      taps = 2 - 2 * start;
    } else {
      start = 0;
      taps = 2;
    }
  } else {
    if (k->antialias && scale < 1.0) {
      start = (int)(floor(-2.0 / s) + 1.0);
      taps = 2 - 2 * start;
    } else {
      start = -1;
      taps = 4;
    }
  }
  if (taps > 4096) return ol_kernel_error(k->base.node, OL_INVALID_ARGUMENT, "scale %g is too small", scale);
  p->taps = taps;
  size_t n = (size_t)(out_len > 0 ? out_len : 1) * (size_t)taps;
  p->index = ol_alloc(alloc, sizeof(int64_t) * n);
  p->weight = ol_alloc(alloc, sizeof(double) * n);
  p->outside = ol_calloc(alloc, (size_t)(out_len > 0 ? out_len : 1), sizeof(bool));
  if (!p->index || !p->weight || !p->outside) {
    plan_free(p);
    return OL_OUT_OF_MEMORY;
  }
  for (int64_t x = 0; x < out_len; x++) {
    double xo;
    double xd = (double)x;
    switch (k->ct) {
      case CT_HALF_PIXEL: xo = (xd + 0.5) / scale - 0.5; break;
      case CT_HALF_PIXEL_SYM: {
        double adj = (double)out_len / out_w;
        double center = (double)in_len / 2.0;
        double off = center * (1.0 - adj);
        xo = off + (xd + 0.5) / scale - 0.5;
        break;
      }
      case CT_PYTORCH: xo = out_len > 1 ? (xd + 0.5) / scale - 0.5 : 0.0; break;
      case CT_ALIGN: xo = out_len == 1 ? 0.0 : xd * (double)(in_len - 1) / (out_w - 1.0); break;
      case CT_ASYM: xo = xd / scale; break;
      case CT_TF_NN: xo = (xd + 0.5) / scale; break;
      default: /* CT_TF_CROP */
        if (out_len == 1)
          xo = (roi_end - roi_start) * (double)(in_len - 1) / 2.0;
        else
          xo = xd * (roi_end - roi_start) * (double)(in_len - 1) / (out_w - 1.0);
        xo += roi_start * (double)(in_len - 1);
        if (xo < 0.0 || xo > (double)(in_len - 1)) p->outside[x] = true;
        break;
    }
    int64_t *ix = p->index + x * taps;
    double *w = p->weight + x * taps;
    double fl = floor(xo);
    int64_t xi = (int64_t)fl;
    double r = xo - fl;
    if (k->mode == MODE_NEAREST) {
      int64_t v;
      switch (k->nearest) {
        case NM_ROUND_FLOOR: v = r == 0.5 ? xi : (int64_t)floor(xo + 0.5); break;
        case NM_ROUND_CEIL: v = (int64_t)floor(xo + 0.5); break;
        case NM_FLOOR: v = xi; break;
        case NM_CEIL: v = (int64_t)ceil(xo); break;
        default: v = scale < 1.0 ? (int64_t)ceil(xo) : xi; break;
      }
      ix[0] = clampi(v, 0, in_len - 1);
      w[0] = 1.0;
      continue;
    }
    double sum = 0.0;
    for (int t = 0; t < taps; t++) {
      int64_t pos = xi + start + t;
      double d = (double)(start + t) - r;
      double wt;
      if (k->mode == MODE_LINEAR) {
        if (k->antialias && scale < 1.0) {
          wt = 1.0 - fabs(d * s);
          if (wt < 0.0) wt = 0.0;
        } else {
          wt = 1.0 - fabs(d);
        }
      } else {
        wt = cubic_w(k->antialias && scale < 1.0 ? d * s : d, k->cubic_a);
      }
      if (k->exclude_outside && (pos < 0 || pos >= in_len)) wt = 0.0;
      ix[t] = clampi(pos, 0, in_len - 1);
      w[t] = wt;
      sum += wt;
    }
    bool normalize = k->exclude_outside || (k->antialias && scale < 1.0);
    if (normalize && sum != 0.0)
      for (int t = 0; t < taps; t++) w[t] /= sum;
  }
  return OL_OK;
}

static bool is_floatish(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

static double round_half_even(double v) {
  double f = floor(v);
  double d = v - f;
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

static ol_status resize_run(resize_kernel *k, ol_kernel_ctx *ctx, const ol_tensor *x,
                            const int64_t *out_dims, const double *scales, const double *roi) {
  const ol_node *node = ctx->node;
  int rank = x->rank;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, rank, out_dims, &y));
  int64_t total_out = ol_tcount(y);
  if (total_out == 0) return OL_OK;
  if (ol_tcount(x) == 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot resize an empty input to a nonempty output");
  axis_plan plans[OL_MAX_RANK];
  bool active[OL_MAX_RANK];
  int built = 0;
  ol_status st = OL_OK;
  for (int a = 0; a < rank; a++) {
    active[a] = !(out_dims[a] == x->dims[a] && scales[a] == 1.0 && k->ct != CT_TF_CROP);
    if (!active[a]) continue;
    st = build_plan(k, ctx->allocator, &plans[a], x->dims[a], out_dims[a], scales[a], roi[a], roi[rank + a]);
    if (st != OL_OK) break;
    built = a + 1;
  }
  if (st != OL_OK) {
    for (int a = 0; a < built; a++)
      if (active[a]) plan_free(&plans[a]);
    return st;
  }

  if (k->mode == MODE_NEAREST) {
    /* gather: output multi-index -> input offset */
    int64_t idx[OL_MAX_RANK] = {0};
    int64_t in_strides[OL_MAX_RANK];
    int64_t acc = 1;
    for (int a = rank - 1; a >= 0; a--) {
      in_strides[a] = acc;
      acc *= x->dims[a];
    }
    size_t es = ol_dtype_size(x->dtype);
    const char *src = ol_tdata(x);
    char *dst = ol_tdata(y);
    for (int64_t o = 0; o < total_out; o++) {
      int64_t off = 0;
      bool outside = false;
      for (int a = 0; a < rank; a++) {
        int64_t i = active[a] ? plans[a].index[idx[a]] : idx[a];
        if (active[a] && plans[a].outside[idx[a]]) outside = true;
        off += i * in_strides[a];
      }
      if (outside)
        ol_tensor_set_double(y, o, k->extrapolation);
      else if (es)
        memcpy(dst + (size_t)o * es, src + (size_t)off * es, es);
      else
        st = ol_elements_copy(x->dtype, dst, o, src, off, 1);
      if (st != OL_OK) break;
      for (int a = rank - 1; a >= 0; a--) {
        if (++idx[a] < out_dims[a]) break;
        idx[a] = 0;
      }
    }
  } else {
    /* separable passes in double */
    int64_t cur_dims[OL_MAX_RANK];
    memcpy(cur_dims, x->dims, sizeof(int64_t) * (size_t)rank);
    int64_t n = ol_tcount(x);
    double *cur = ol_alloc(ctx->allocator, sizeof(double) * (size_t)n);
    if (!cur) st = OL_OUT_OF_MEMORY;
    for (int64_t i = 0; st == OL_OK && i < n; i++) cur[i] = ol_tensor_get_double(x, i);
    for (int a = 0; st == OL_OK && a < rank; a++) {
      if (!active[a]) continue;
      const axis_plan *p = &plans[a];
      int64_t outer = ol_shape_count(a, cur_dims);
      int64_t inner = ol_shape_count(rank - a - 1, cur_dims + a + 1);
      int64_t nn = outer * p->out_len * inner;
      double *next = ol_alloc(ctx->allocator, sizeof(double) * (size_t)(nn > 0 ? nn : 1));
      if (!next) {
        st = OL_OUT_OF_MEMORY;
        break;
      }
      for (int64_t o = 0; o < outer; o++) {
        const double *sb = cur + o * p->in_len * inner;
        double *db = next + o * p->out_len * inner;
        for (int64_t j = 0; j < p->out_len; j++) {
          double *d = db + j * inner;
          if (p->outside[j]) {
            for (int64_t i = 0; i < inner; i++) d[i] = k->extrapolation;
            continue;
          }
          const int64_t *ix = p->index + j * p->taps;
          const double *w = p->weight + j * p->taps;
          for (int64_t i = 0; i < inner; i++) {
            double v = 0.0;
            for (int t = 0; t < p->taps; t++) v += w[t] * sb[ix[t] * inner + i];
            d[i] = v;
          }
        }
      }
      ol_dealloc(ctx->allocator, cur);
      cur = next;
      cur_dims[a] = p->out_len;
      if (ctx->cancelled && *ctx->cancelled) st = OL_CANCELLED;
    }
    if (st == OL_OK) {
      bool fl = is_floatish(y->dtype);
      for (int64_t i = 0; i < total_out; i++) {
        double v = cur[i];
        if (!fl) {
          v = round_half_even(v);
          if (y->dtype == OL_DTYPE_UINT8) v = v < 0 ? 0 : v > 255 ? 255 : v;
          if (y->dtype == OL_DTYPE_INT8) v = v < -128 ? -128 : v > 127 ? 127 : v;
        }
        ol_tensor_set_double(y, i, v);
      }
    }
    ol_dealloc(ctx->allocator, cur);
  }
  for (int a = 0; a < rank; a++)
    if (active[a]) plan_free(&plans[a]);
  return st;
}

static ol_status check_dtype(const resize_kernel *k, const ol_node *node, const ol_tensor *x) {
  const ol_dtype_traits *t = ol_dtype_info(x->dtype);
  if (k->mode == MODE_NEAREST) {
    if (x->dtype == OL_DTYPE_STRING || !t || t->bits == 0) return ol_kernel_bad_dtype(node, "input X", x->dtype);
    return OL_OK;
  }
  switch (x->dtype) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_INT8: case OL_DTYPE_UINT8: case OL_DTYPE_INT16: case OL_DTYPE_UINT16:
    case OL_DTYPE_INT32: case OL_DTYPE_UINT32: case OL_DTYPE_INT64: case OL_DTYPE_UINT64:
      return OL_OK;
    default: return ol_kernel_bad_dtype(node, "input X", x->dtype);
  }
}

static ol_status read_floats(const ol_node *node, const ol_tensor *t, const char *what, double *v,
                             int cap, int *count) {
  int64_t n = ol_tcount(t);
  if (t->rank > 1 || n > cap)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be 1-D with at most %d values", what, cap);
  if (!is_floatish(t->dtype)) return ol_kernel_bad_dtype(node, what, t->dtype);
  for (int64_t i = 0; i < n; i++) v[i] = ol_tensor_get_double(t, i);
  *count = (int)n;
  return OL_OK;
}

static ol_status resize_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  resize_kernel *k = (resize_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(check_dtype(k, node, x));
  int rank = x->rank;
  double scales[OL_MAX_RANK], roi[2 * OL_MAX_RANK];
  int64_t out_dims[OL_MAX_RANK];
  for (int a = 0; a < rank; a++) {
    scales[a] = 1.0;
    roi[a] = 0.0;
    roi[rank + a] = 1.0;
    out_dims[a] = x->dims[a];
  }
  bool old = k->upsample7 || !strcmp(node->op_type, "Upsample") || node->opset < 11;
  const ol_tensor *roi_t = NULL, *scales_t = NULL, *sizes_t = NULL;
  if (k->upsample7) {
    if (k->num_scales7 != rank)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attribute 'scales' has %lld values for an input of rank %d",
                             (long long)k->num_scales7, rank);
  } else if (old) {
    OL_TRY(ol_ctx_require(ctx, 1, &scales_t));
  } else {
    roi_t = ol_ctx_input(ctx, 1);
    scales_t = ol_ctx_input(ctx, 2);
    sizes_t = ol_ctx_input(ctx, 3);
    if (scales_t && ol_tcount(scales_t) == 0) scales_t = NULL;
    if (sizes_t && ol_tcount(sizes_t) == 0) sizes_t = NULL;
    if (roi_t && ol_tcount(roi_t) == 0) roi_t = NULL;
  }
  if (!old && ((scales_t == NULL) == (sizes_t == NULL)))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "exactly one of 'scales' and 'sizes' must be given");
  /* axes the scales/sizes/roi refer to */
  int naxes = rank;
  int axes[OL_MAX_RANK];
  if (k->num_axes > 0) {
    naxes = (int)k->num_axes;
    for (int i = 0; i < naxes; i++) {
      OL_TRY(ol_normalize_axis(node, k->axes[i], rank, &axes[i]));
      for (int j = 0; j < i; j++)
        if (axes[j] == axes[i]) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'axes' repeats axis %d", axes[i]);
    }
  } else {
    for (int i = 0; i < rank; i++) axes[i] = i;
  }
  if (roi_t && k->ct == CT_TF_CROP) {
    double rv[2 * OL_MAX_RANK];
    int cnt;
    OL_TRY(read_floats(node, roi_t, "roi", rv, 2 * OL_MAX_RANK, &cnt));
    if (cnt != 2 * naxes)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input 'roi' has %d values, expected %d", cnt, 2 * naxes);
    for (int i = 0; i < naxes; i++) {
      roi[axes[i]] = rv[i];
      roi[rank + axes[i]] = rv[naxes + i];
    }
  }
  if (k->upsample7 || scales_t) {
    double sv[OL_MAX_RANK];
    int cnt = 0;
    if (k->upsample7) {
      for (int i = 0; i < rank; i++) sv[i] = k->scales7[i];
      cnt = rank;
    } else {
      OL_TRY(read_floats(node, scales_t, "scales", sv, OL_MAX_RANK, &cnt));
    }
    if (cnt != naxes)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input 'scales' has %d values, expected %d", cnt, naxes);
    for (int i = 0; i < naxes; i++) {
      if (!(sv[i] > 0.0))
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scale %g must be positive", sv[i]);
      if (old && sv[i] < 1.0 && !strcmp(node->op_type, "Upsample"))
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "Upsample scale %g must be >= 1", sv[i]);
      int a = axes[i];
      scales[a] = sv[i];
      out_dims[a] = (int64_t)floor(sv[i] * (double)x->dims[a]);
    }
  } else {
    int64_t zv[OL_MAX_RANK];
    size_t cnt;
    if (ol_tensor_to_int64s(sizes_t, zv, OL_MAX_RANK, &cnt) != OL_OK || sizes_t->dtype != OL_DTYPE_INT64)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input 'sizes' must be a 1-D int64 tensor");
    if ((int)cnt != naxes)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input 'sizes' has %zu values, expected %d", cnt, naxes);
    for (int i = 0; i < naxes; i++)
      if (zv[i] < 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "size %lld is negative", (long long)zv[i]);
    if (k->keep_aspect == KA_STRETCH) {
      for (int i = 0; i < naxes; i++) {
        int a = axes[i];
        out_dims[a] = zv[i];
        scales[a] = x->dims[a] ? (double)zv[i] / (double)x->dims[a] : 1.0;
      }
    } else {
      double sc = 0.0;
      for (int i = 0; i < naxes; i++) {
        double r = x->dims[axes[i]] ? (double)zv[i] / (double)x->dims[axes[i]] : 1.0;
        if (i == 0 || (k->keep_aspect == KA_NOT_LARGER ? r < sc : r > sc)) sc = r;
      }
      for (int i = 0; i < naxes; i++) {
        int a = axes[i];
        scales[a] = sc;
        out_dims[a] = (int64_t)floor(sc * (double)x->dims[a] + 0.5);
      }
    }
  }
  return resize_run(k, ctx, x, out_dims, scales, roi);
}

static ol_status resize_create(const ol_node *node, ol_kernel **out) {
  bool upsample = !strcmp(node->op_type, "Upsample");
  const char *mode = ol_attr_string(node, "mode", "nearest");
  int m;
  if (!strcmp(mode, "nearest"))
    m = MODE_NEAREST;
  else if (!strcmp(mode, "linear") || (upsample && !strcmp(mode, "bilinear")))
    m = MODE_LINEAR;
  else if (!strcmp(mode, "cubic") && !upsample && node->opset >= 11)
    m = MODE_CUBIC;
  else
    return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported mode '%s'", mode);
  int ct = CT_ASYM, nm = NM_SIMPLE;
  if (!upsample && node->opset >= 11) {
    const char *c = ol_attr_string(node, "coordinate_transformation_mode", "half_pixel");
    if (!strcmp(c, "half_pixel")) ct = CT_HALF_PIXEL;
    else if (!strcmp(c, "half_pixel_symmetric")) ct = CT_HALF_PIXEL_SYM; /* defined from 19 */
    else if (!strcmp(c, "pytorch_half_pixel")) ct = CT_PYTORCH;
    else if (!strcmp(c, "align_corners")) ct = CT_ALIGN;
    else if (!strcmp(c, "asymmetric")) ct = CT_ASYM;
    else if (!strcmp(c, "tf_crop_and_resize")) ct = CT_TF_CROP;
    else if (!strcmp(c, "tf_half_pixel_for_nn")) ct = CT_TF_NN; /* accepted at every opset, as onnxruntime does */
    else
      return ol_kernel_error(node, OL_INVALID_MODEL,
                             "unsupported coordinate_transformation_mode '%s' at opset %d", c, node->opset);
    const char *n = ol_attr_string(node, "nearest_mode", "round_prefer_floor");
    if (!strcmp(n, "round_prefer_floor")) nm = NM_ROUND_FLOOR;
    else if (!strcmp(n, "round_prefer_ceil")) nm = NM_ROUND_CEIL;
    else if (!strcmp(n, "floor")) nm = NM_FLOOR;
    else if (!strcmp(n, "ceil")) nm = NM_CEIL;
    else return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported nearest_mode '%s'", n);
  }
  int ka = KA_STRETCH;
  const int64_t *axes = NULL;
  int64_t naxes = -1;
  if (!upsample && node->opset >= 18) {
    const char *p = ol_attr_string(node, "keep_aspect_ratio_policy", "stretch");
    if (!strcmp(p, "stretch")) ka = KA_STRETCH;
    else if (!strcmp(p, "not_larger")) ka = KA_NOT_LARGER;
    else if (!strcmp(p, "not_smaller")) ka = KA_NOT_SMALLER;
    else return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported keep_aspect_ratio_policy '%s'", p);
    naxes = ol_attr_ints(node, "axes", &axes);
    if (naxes > OL_MAX_RANK)
      return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'axes' has too many values");
  }
  const float *sc7 = NULL;
  int64_t nsc7 = -1;
  if (upsample && node->opset < 9) {
    nsc7 = ol_attr_floats(node, "scales", &sc7);
    if (nsc7 < 0) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'scales' is required");
    if (nsc7 > OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'scales' has too many values");
  }
  resize_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, resize_compute, (ol_kernel **)&k));
  k->mode = m;
  k->ct = ct;
  k->nearest = nm;
  k->keep_aspect = ka;
  k->cubic_a = ol_attr_float(node, "cubic_coeff_a", -0.75f);
  k->exclude_outside = ol_attr_int(node, "exclude_outside", 0) != 0;
  k->extrapolation = ol_attr_float(node, "extrapolation_value", 0.0f);
  k->antialias = !upsample && node->opset >= 18 && ol_attr_int(node, "antialias", 0) != 0;
  k->num_axes = naxes > 0 ? naxes : 0;
  for (int64_t i = 0; i < k->num_axes; i++) k->axes[i] = axes[i];
  if (nsc7 >= 0) {
    k->upsample7 = true;
    k->num_scales7 = nsc7;
    for (int64_t i = 0; i < nsc7; i++) k->scales7[i] = sc7[i];
  }
  *out = &k->base;
  return OL_OK;
}

#define RT "float16 bfloat16 float32 float64 int8 uint8 int32 int64 (nearest: any)"
const ol_op_schema ol_schema_resize[] = {
    {"", "Resize", 10, OL_OPSET_LATEST, resize_create, ol_infer_resize, RT},
    {"", "Upsample", 7, 9, resize_create, ol_infer_resize, RT},
    {0},
};
