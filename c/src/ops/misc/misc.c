/* Miscellaneous operators (ai.onnx).
 *
 *   NonMaxSuppression 10-23      GridSample 16-23 (16: 4-D bilinear/nearest/
 *                                bicubic; 20+: N-D linear/nearest/cubic)
 *   RoiAlign 10-23 (16: coordinate_transformation_mode)
 *   MaxUnpool 9-23               Shrink 9-23          Det 11-23
 *   ReverseSequence 10-23        StringNormalizer 10-23
 *   TfIdfVectorizer 9-23
 *
 * Floating computations run in double and round once to the output type. */
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/misc/misc.h"

static bool is_float_type(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

static bool is_numeric(ol_dtype dt) {
  const ol_dtype_traits *t = ol_dtype_info(dt);
  return t && t->bits >= 8 && dt != OL_DTYPE_STRING && dt != OL_DTYPE_BOOL &&
         (is_float_type(dt) || t->is_integer);
}

/* ------------------------------------------------------------ NonMaxSuppression */

typedef struct nms_kernel {
  ol_kernel base;
  int center_point_box;
} nms_kernel;

typedef struct nms_cand {
  double score;
  int64_t index;
} nms_cand;

static int cand_cmp(const void *a, const void *b) {
  const nms_cand *x = a, *y = b;
  if (x->score > y->score) return -1;
  if (x->score < y->score) return 1;
  return x->index < y->index ? -1 : x->index > y->index;
}

static void box_corners(const double *b, int center, double *y1, double *x1, double *y2, double *x2) {
  if (center) {
    *x1 = b[0] - b[2] / 2.0;
    *x2 = b[0] + b[2] / 2.0;
    *y1 = b[1] - b[3] / 2.0;
    *y2 = b[1] + b[3] / 2.0;
  } else {
    *y1 = b[0] < b[2] ? b[0] : b[2];
    *y2 = b[0] < b[2] ? b[2] : b[0];
    *x1 = b[1] < b[3] ? b[1] : b[3];
    *x2 = b[1] < b[3] ? b[3] : b[1];
  }
}

static double iou(const double *a, const double *b, int center) {
  double ay1, ax1, ay2, ax2, by1, bx1, by2, bx2;
  box_corners(a, center, &ay1, &ax1, &ay2, &ax2);
  box_corners(b, center, &by1, &bx1, &by2, &bx2);
  double iw = (ax2 < bx2 ? ax2 : bx2) - (ax1 > bx1 ? ax1 : bx1);
  double ih = (ay2 < by2 ? ay2 : by2) - (ay1 > by1 ? ay1 : by1);
  if (iw <= 0 || ih <= 0) return 0.0;
  double inter = iw * ih;
  double uni = (ax2 - ax1) * (ay2 - ay1) + (bx2 - bx1) * (by2 - by1) - inter;
  return uni > 0 ? inter / uni : 0.0;
}

static ol_status nms_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  nms_kernel *k = (nms_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *bt, *st;
  OL_TRY(ol_ctx_require(ctx, 0, &bt));
  OL_TRY(ol_ctx_require(ctx, 1, &st));
  const ol_tensor *mt = ol_ctx_input(ctx, 2), *it = ol_ctx_input(ctx, 3), *tt = ol_ctx_input(ctx, 4);
  if (!is_float_type(bt->dtype)) return ol_kernel_bad_dtype(node, "boxes", bt->dtype);
  if (!is_float_type(st->dtype)) return ol_kernel_bad_dtype(node, "scores", st->dtype);
  if (bt->rank != 3 || bt->dims[2] != 4)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "boxes must have shape [batch, spatial, 4]");
  if (st->rank != 3 || st->dims[0] != bt->dims[0] || st->dims[2] != bt->dims[1])
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scores must have shape [batch, classes, spatial]");
  int64_t maxout = 0;
  double iou_th = 0.0, score_th = 0.0;
  bool has_score = false;
  if (mt && ol_tcount(mt) > 0) {
    if (mt->dtype != OL_DTYPE_INT64) return ol_kernel_bad_dtype(node, "max_output_boxes_per_class", mt->dtype);
    maxout = ((const int64_t *)ol_tdata(mt))[0];
  }
  if (it && ol_tcount(it) > 0) iou_th = ol_tensor_get_double(it, 0);
  if (tt && ol_tcount(tt) > 0) {
    score_th = ol_tensor_get_double(tt, 0);
    has_score = true;
  }
  if (iou_th < 0 || iou_th > 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "iou_threshold %g must be in [0, 1]", iou_th);
  int64_t B = bt->dims[0], C = st->dims[1], S = bt->dims[1];
  double *boxes = ol_alloc(ctx->allocator, sizeof(double) * (size_t)(B * S * 4 + 1));
  nms_cand *cand = ol_alloc(ctx->allocator, sizeof(nms_cand) * (size_t)(S + 1));
  int64_t *sel = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(S + 1));
  int64_t cap = 64, count = 0;
  int64_t *res = ol_alloc(ctx->allocator, sizeof(int64_t) * 3 * (size_t)cap);
  ol_status status = OL_OK;
  if (!boxes || !cand || !sel || !res) {
    status = OL_OUT_OF_MEMORY;
    goto done;
  }
  for (int64_t i = 0; i < B * S * 4; i++) boxes[i] = ol_tensor_get_double(bt, i);
  if (maxout > 0)
    for (int64_t b = 0; b < B; b++)
      for (int64_t c = 0; c < C; c++) {
        int64_t nc = 0;
        for (int64_t s = 0; s < S; s++) {
          double sc = ol_tensor_get_double(st, (b * C + c) * S + s);
          if (has_score && !(sc > score_th)) continue;
          cand[nc].score = sc;
          cand[nc].index = s;
          nc++;
        }
        qsort(cand, (size_t)nc, sizeof *cand, cand_cmp);
        int64_t ns = 0;
        for (int64_t i = 0; i < nc && ns < maxout; i++) {
          const double *bx = boxes + (b * S + cand[i].index) * 4;
          bool keep = true;
          for (int64_t j = 0; j < ns && keep; j++)
            if (iou(bx, boxes + (b * S + sel[j]) * 4, k->center_point_box) > iou_th) keep = false;
          if (!keep) continue;
          sel[ns++] = cand[i].index;
          if (count == cap) {
            cap *= 2;
            int64_t *r2 = ol_realloc(ctx->allocator, res, sizeof(int64_t) * 3 * (size_t)cap);
            if (!r2) {
              status = OL_OUT_OF_MEMORY;
              goto done;
            }
            res = r2;
          }
          res[count * 3] = b;
          res[count * 3 + 1] = c;
          res[count * 3 + 2] = cand[i].index;
          count++;
        }
      }
  {
    int64_t od[2] = {count, 3};
    ol_tensor *y;
    status = ol_ctx_output(ctx, 0, OL_DTYPE_INT64, 2, od, &y);
    if (status == OL_OK && count) memcpy(ol_tdata(y), res, sizeof(int64_t) * 3 * (size_t)count);
  }
done:
  ol_dealloc(ctx->allocator, boxes);
  ol_dealloc(ctx->allocator, cand);
  ol_dealloc(ctx->allocator, sel);
  ol_dealloc(ctx->allocator, res);
  return status;
}

static ol_status nms_create(const ol_node *node, ol_kernel **out) {
  int64_t c = ol_attr_int(node, "center_point_box", 0);
  if (c != 0 && c != 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'center_point_box' must be 0 or 1");
  nms_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, nms_compute, (ol_kernel **)&k));
  k->center_point_box = (int)c;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ GridSample */

enum { GS_LINEAR, GS_NEAREST, GS_CUBIC };
enum { GS_ZEROS, GS_BORDER, GS_REFLECTION };

typedef struct gs_kernel {
  ol_kernel base;
  int mode, padding;
  bool align;
} gs_kernel;

static double gs_reflect(double x, double lo, double hi) {
  double rng = hi - lo;
  if (rng <= 0) return lo;
  if (x < lo) {
    double dx = lo - x;
    int64_t n = (int64_t)(dx / rng);
    double r = dx - (double)n * rng;
    return n % 2 == 0 ? lo + r : hi - r;
  }
  if (x > hi) {
    double dx = x - hi;
    int64_t n = (int64_t)(dx / rng);
    double r = dx - (double)n * rng;
    return n % 2 == 0 ? hi - r : lo + r;
  }
  return x;
}

static double rint_even(double v) {
  double f = floor(v);
  double d = v - f;
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

static void cubic_coeffs(double x, double *c) {
  const double a = -0.75;
  x = fabs(x);
  c[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  c[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  c[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  c[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

static ol_status gs_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  gs_kernel *k = (gs_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x, *g;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &g));
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (!is_float_type(g->dtype)) return ol_kernel_bad_dtype(node, "grid", g->dtype);
  int sp = x->rank - 2;
  if (sp < 1 || (node->opset < 20 && sp != 2))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must be 4-D%s, got rank %d",
                           node->opset < 20 ? "" : " or more", x->rank);
  if (sp > 3 && k->mode == GS_CUBIC)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "cubic mode supports at most 3 spatial dimensions");
  if (g->rank != x->rank || g->dims[0] != x->dims[0] || g->dims[x->rank - 1] != sp)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "grid must have shape [N, out..., %d]", sp);
  int64_t N = x->dims[0], C = x->dims[1];
  int64_t odims[OL_MAX_RANK];
  odims[0] = N;
  odims[1] = C;
  for (int i = 0; i < sp; i++) odims[2 + i] = g->dims[1 + i];
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, odims, &y));
  int64_t osp = ol_shape_count(sp, odims + 2), isp = ol_shape_count(sp, x->dims + 2);
  if (isp == 0) { /* an empty image: every sample falls outside it, so reads as 0 */
    for (int64_t i = 0; i < ol_tcount(y); i++) ol_tensor_set_double(y, i, 0.0);
    return OL_OK;
  }
  int taps = k->mode == GS_NEAREST ? 1 : k->mode == GS_LINEAR ? 2 : 4;
  int64_t combos = 1;
  for (int i = 0; i < sp; i++) combos *= taps;
  for (int64_t n = 0; n < N; n++)
    for (int64_t o = 0; o < osp; o++) {
      double coord[OL_MAX_RANK];
      int64_t base[OL_MAX_RANK];
      double w[OL_MAX_RANK][4];
      for (int d = 0; d < sp; d++) {
        int64_t len = x->dims[2 + d];
        double nc = ol_tensor_get_double(g, (n * osp + o) * sp + (sp - 1 - d));
        double c = k->align ? (nc + 1.0) / 2.0 * (double)(len - 1) : ((nc + 1.0) * (double)len - 1.0) / 2.0;
        if (k->mode == GS_NEAREST) c = rint_even(c);
        double lo = k->align ? 0.0 : -0.5, hi = k->align ? (double)(len - 1) : (double)len - 0.5;
        if (c < lo || c > hi) {
          if (k->padding == GS_BORDER) c = c < 0 ? 0 : c > (double)(len - 1) ? (double)(len - 1) : c;
          else if (k->padding == GS_REFLECTION) c = gs_reflect(c, lo, hi);
        }
        coord[d] = c;
        if (k->mode == GS_NEAREST) {
          base[d] = (int64_t)c;
          w[d][0] = 1.0;
        } else if (k->mode == GS_LINEAR) {
          double f = floor(c);
          base[d] = (int64_t)f;
          w[d][0] = f + 1.0 - c;
          w[d][1] = c - f;
        } else {
          double f = floor(c);
          base[d] = (int64_t)f - 1;
          cubic_coeffs(c - f, w[d]);
        }
      }
      (void)coord;
      for (int64_t ch = 0; ch < C; ch++) {
        double acc = 0.0;
        for (int64_t cb = 0; cb < combos; cb++) {
          int64_t rem = cb, off = 0;
          double wt = 1.0;
          bool zero = false;
          int tix[OL_MAX_RANK];
          for (int d = sp - 1; d >= 0; d--) {
            tix[d] = (int)(rem % taps);
            rem /= taps;
          }
          for (int d = 0; d < sp; d++) {
            int64_t len = x->dims[2 + d];
            int64_t p = base[d] + tix[d];
            wt *= w[d][tix[d]];
            if (k->padding == GS_ZEROS) {
              if (p < 0 || p >= len) zero = true;
            } else if (k->padding == GS_BORDER) {
              p = p < 0 ? 0 : p >= len ? len - 1 : p;
            } else {
              double lo = k->align ? 0.0 : -0.5, hi = k->align ? (double)(len - 1) : (double)len - 0.5;
              p = (int64_t)gs_reflect((double)p, lo, hi);
              p = p < 0 ? 0 : p >= len ? len - 1 : p;
            }
            off = off * len + p;
          }
          if (zero) continue;
          acc += wt * ol_tensor_get_double(x, (n * C + ch) * isp + off);
        }
        ol_tensor_set_double(y, (n * C + ch) * osp + o, acc);
      }
    }
  return OL_OK;
}

static ol_status gs_create(const ol_node *node, ol_kernel **out) {
  const char *m = ol_attr_string(node, "mode", node->opset >= 20 ? "linear" : "bilinear");
  int mode;
  if (!strcmp(m, node->opset >= 20 ? "linear" : "bilinear")) mode = GS_LINEAR;
  else if (!strcmp(m, "nearest")) mode = GS_NEAREST;
  else if (!strcmp(m, node->opset >= 20 ? "cubic" : "bicubic")) mode = GS_CUBIC;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported mode '%s' at opset %d", m, node->opset);
  const char *p = ol_attr_string(node, "padding_mode", "zeros");
  int pad;
  if (!strcmp(p, "zeros")) pad = GS_ZEROS;
  else if (!strcmp(p, "border")) pad = GS_BORDER;
  else if (!strcmp(p, "reflection")) pad = GS_REFLECTION;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported padding_mode '%s'", p);
  gs_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, gs_compute, (ol_kernel **)&k));
  k->mode = mode;
  k->padding = pad;
  k->align = ol_attr_int(node, "align_corners", 0) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ RoiAlign */

typedef struct roi_kernel {
  ol_kernel base;
  bool max_mode, half_pixel;
  int64_t oh, ow, sampling;
  double scale;
} roi_kernel;

/* samples between two looks at the cancellation flag */
#define ROI_CANCEL_SAMPLES 4096

static ol_status roi_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  roi_kernel *k = (roi_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x, *rois, *bi;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &rois));
  OL_TRY(ol_ctx_require(ctx, 2, &bi));
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (!is_float_type(rois->dtype)) return ol_kernel_bad_dtype(node, "rois", rois->dtype);
  if (bi->dtype != OL_DTYPE_INT64 && bi->dtype != OL_DTYPE_INT32) return ol_kernel_bad_dtype(node, "batch_indices", bi->dtype);
  if (x->rank != 4) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must be 4-D");
  if (rois->rank != 2 || rois->dims[1] != 4)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "rois must have shape [num_rois, 4]");
  int64_t R = rois->dims[0];
  if (bi->rank != 1 || bi->dims[0] != R)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "batch_indices must have shape [%lld]", (long long)R);
  int64_t C = x->dims[1], H = x->dims[2], W = x->dims[3];
  int64_t od[4] = {R, C, k->oh, k->ow};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, 4, od, &y));
  double off = k->half_pixel ? 0.5 : 0.0;
  uint64_t samples = 0;
  for (int64_t r = 0; r < R; r++) {
    int64_t b = ol_tensor_get_int64(bi, r);
    if (b < 0 || b >= x->dims[0])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "batch index %lld is out of range", (long long)b);
    double sw = ol_tensor_get_double(rois, r * 4) * k->scale - off;
    double sh = ol_tensor_get_double(rois, r * 4 + 1) * k->scale - off;
    double ew = ol_tensor_get_double(rois, r * 4 + 2) * k->scale - off;
    double eh = ol_tensor_get_double(rois, r * 4 + 3) * k->scale - off;
    double rw = ew - sw, rh = eh - sh;
    if (!k->half_pixel) {
      rw = rw > 1.0 ? rw : 1.0;
      rh = rh > 1.0 ? rh : 1.0;
    }
    double bh = rh / (double)k->oh, bw = rw / (double)k->ow;
    int64_t gh = k->sampling > 0 ? k->sampling : ol_double_to_int64(ceil(rh / (double)k->oh));
    int64_t gw = k->sampling > 0 ? k->sampling : ol_double_to_int64(ceil(rw / (double)k->ow));
    if (gh < 0) gh = 0;
    if (gw < 0) gw = 0;
    double cnt = (double)gh * (double)gw > 1 ? (double)gh * (double)gw : 1.0; /* (no int64 product: may overflow) */
    for (int64_t c = 0; c < C; c++) {
      int64_t xb = (b * C + c) * H * W;
      for (int64_t ph = 0; ph < k->oh; ph++)
        for (int64_t pw = 0; pw < k->ow; pw++) {
          double acc = 0.0;
          bool first = true;
          for (int64_t iy = 0; iy < gh; iy++) {
            double yy = sh + (double)ph * bh + ((double)iy + 0.5) * bh / (double)gh;
            for (int64_t ix = 0; ix < gw; ix++) {
              /* the adaptive grid grows with the box (and spatial_scale),
               * along either axis: a run can be stopped inside it, every
               * ROI_CANCEL_SAMPLES samples */
              if (++samples % ROI_CANCEL_SAMPLES == 0 && ctx->cancelled && *ctx->cancelled)
                return ol_kernel_error(node, OL_CANCELLED, "cancelled inside the sampling grid (%lld x %lld a bin)",
                                       (long long)gh, (long long)gw);
              double xx = sw + (double)pw * bw + ((double)ix + 0.5) * bw / (double)gw;
              double v1 = 0, v2 = 0, v3 = 0, v4 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0;
              /* (written so that NaN positions and an empty image sample nothing) */
              if (H > 0 && W > 0 && yy >= -1.0 && yy <= (double)H && xx >= -1.0 && xx <= (double)W) {
                double yv = yy <= 0 ? 0 : yy, xv = xx <= 0 ? 0 : xx;
                int64_t yl = (int64_t)yv, xl = (int64_t)xv, yhh, xhh;
                if (yl >= H - 1) {
                  yhh = yl = H - 1;
                  yv = (double)yl;
                } else {
                  yhh = yl + 1;
                }
                if (xl >= W - 1) {
                  xhh = xl = W - 1;
                  xv = (double)xl;
                } else {
                  xhh = xl + 1;
                }
                double ly = yv - (double)yl, lx = xv - (double)xl, hy = 1.0 - ly, hx = 1.0 - lx;
                w1 = hy * hx; w2 = hy * lx; w3 = ly * hx; w4 = ly * lx;
                v1 = ol_tensor_get_double(x, xb + yl * W + xl);
                v2 = ol_tensor_get_double(x, xb + yl * W + xhh);
                v3 = ol_tensor_get_double(x, xb + yhh * W + xl);
                v4 = ol_tensor_get_double(x, xb + yhh * W + xhh);
              }
              if (k->max_mode) {
                double m = w1 * v1;
                m = w2 * v2 > m ? w2 * v2 : m;
                m = w3 * v3 > m ? w3 * v3 : m;
                m = w4 * v4 > m ? w4 * v4 : m;
                acc = first || m > acc ? m : acc;
                first = false;
              } else {
                acc += w1 * v1 + w2 * v2 + w3 * v3 + w4 * v4;
              }
            }
          }
          ol_tensor_set_double(y, ((r * C + c) * k->oh + ph) * k->ow + pw, k->max_mode ? acc : acc / cnt);
        }
    }
  }
  return OL_OK;
}

static ol_status roi_create(const ol_node *node, ol_kernel **out) {
  const char *m = ol_attr_string(node, "mode", "avg");
  if (strcmp(m, "avg") && strcmp(m, "max"))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'mode' must be avg or max, got '%s'", m);
  bool half = false;
  if (node->opset >= 16) {
    const char *c = ol_attr_string(node, "coordinate_transformation_mode", "half_pixel");
    if (!strcmp(c, "half_pixel")) half = true;
    else if (strcmp(c, "output_half_pixel"))
      return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported coordinate_transformation_mode '%s'", c);
  }
  int64_t oh = ol_attr_int(node, "output_height", 1), ow = ol_attr_int(node, "output_width", 1);
  int64_t sr = ol_attr_int(node, "sampling_ratio", 0);
  if (oh < 1 || ow < 1 || sr < 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "output_height/output_width must be >= 1 and sampling_ratio >= 0");
  roi_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, roi_compute, (ol_kernel **)&k));
  k->max_mode = !strcmp(m, "max");
  k->half_pixel = half;
  k->oh = oh;
  k->ow = ow;
  k->sampling = sr;
  k->scale = ol_attr_float(node, "spatial_scale", 1.0f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ MaxUnpool */

typedef struct unpool_kernel {
  ol_kernel base;
  int64_t nk, ks[OL_MAX_RANK], np, pads[2 * OL_MAX_RANK], ns, strides[OL_MAX_RANK];
} unpool_kernel;

static ol_status unpool_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  unpool_kernel *k = (unpool_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x, *ind, *os = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &ind));
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (ind->dtype != OL_DTYPE_INT64) return ol_kernel_bad_dtype(node, "indices", ind->dtype);
  int sp = x->rank - 2;
  if (sp < 1 || k->nk != sp) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "kernel_shape must have %d values", sp);
  if (ol_tcount(ind) != ol_tcount(x))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "indices must have the shape of X");
  int64_t od[OL_MAX_RANK], inf[OL_MAX_RANK];
  od[0] = x->dims[0];
  od[1] = x->dims[1];
  for (int i = 0; i < sp; i++) {
    int64_t s = k->ns ? k->strides[i] : 1;
    int64_t pb = k->np ? k->pads[i] : 0, pe = k->np ? k->pads[sp + i] : 0;
    od[2 + i] = (x->dims[2 + i] - 1) * s + k->ks[i] - pb - pe;
    if (od[2 + i] < 0) od[2 + i] = 0;
  }
  memcpy(inf, od, sizeof(int64_t) * (size_t)x->rank);
  if (os) {
    int64_t v[OL_MAX_RANK];
    size_t cnt;
    if (ol_tensor_to_int64s(os, v, OL_MAX_RANK, &cnt) != OL_OK || (int)cnt != x->rank)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output_shape must be a 1-D int64 tensor of length %d", x->rank);
    for (int i = 0; i < x->rank; i++) {
      if (v[i] < 0 || (i < 2 && v[i] != x->dims[i]) || (i >= 2 && v[i] < od[i]))
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output_shape dimension %d (%lld) is invalid", i, (long long)v[i]);
      od[i] = v[i];
    }
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, od, &y));
  /* indices address the inferred (unpadded) shape; output_shape pads at the end */
  int64_t total = ol_shape_count(x->rank, inf), n = ol_tcount(x);
  const int64_t *id = ol_tdata(ind);
  for (int64_t i = 0; i < n; i++) {
    if (id[i] < 0 || id[i] >= total)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "index %lld is out of range", (long long)id[i]);
    int64_t rem = id[i], off = 0, stride = 1;
    for (int d = x->rank - 1; d >= 0; d--) {
      off += (rem % inf[d]) * stride;
      rem /= inf[d];
      stride *= od[d];
    }
    ol_tensor_set_double(y, off, ol_tensor_get_double(x, i));
  }
  return OL_OK;
}

static ol_status unpool_create(const ol_node *node, ol_kernel **out) {
  unpool_kernel t;
  memset(&t, 0, sizeof t);
  OL_TRY(ol_attr_copy_ints(node, "kernel_shape", t.ks, OL_MAX_RANK, &t.nk, true));
  if (t.nk == 0) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'kernel_shape' is required");
  OL_TRY(ol_attr_copy_ints(node, "pads", t.pads, 2 * OL_MAX_RANK, &t.np, false));
  OL_TRY(ol_attr_copy_ints(node, "strides", t.strides, OL_MAX_RANK, &t.ns, true));
  if ((t.np && t.np != 2 * t.nk) || (t.ns && t.ns != t.nk))
    return ol_kernel_error(node, OL_INVALID_MODEL, "pads/strides do not match kernel_shape");
  unpool_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, unpool_compute, (ol_kernel **)&k));
  t.base = k->base;
  *k = t;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Shrink */

typedef struct shrink_kernel {
  ol_kernel base;
  double lambd, bias;
} shrink_kernel;

static ol_status shrink_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  shrink_kernel *k = (shrink_kernel *)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!is_numeric(x->dtype)) return ol_kernel_bad_dtype(kernel->node, "input", x->dtype);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int64_t n = ol_tcount(x);
  if (x->dtype == OL_DTYPE_FLOAT) {
    const float *s = ol_tdata(x);
    float *d = ol_tdata(y);
    float l = (float)k->lambd, b = (float)k->bias;
    for (int64_t i = 0; i < n; i++) d[i] = s[i] < -l ? s[i] + b : s[i] > l ? s[i] - b : 0.0f;
    return OL_OK;
  }
  for (int64_t i = 0; i < n; i++) {
    double v = ol_tensor_get_double(x, i);
    ol_tensor_set_double(y, i, v < -k->lambd ? v + k->bias : v > k->lambd ? v - k->bias : 0.0);
  }
  return OL_OK;
}

static ol_status shrink_create(const ol_node *node, ol_kernel **out) {
  shrink_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, shrink_compute, (ol_kernel **)&k));
  k->lambd = ol_attr_float(node, "lambd", 0.5f);
  k->bias = ol_attr_float(node, "bias", 0.0f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Det */

static ol_status det_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const ol_node *node = kernel->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input", x->dtype);
  if (x->rank < 2 || x->dims[x->rank - 1] != x->dims[x->rank - 2])
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be [*, M, M]");
  int64_t M = x->dims[x->rank - 1];
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank - 2, x->dims, &y));
  int64_t batches = ol_tcount(y);
  double *a = ol_alloc(ctx->allocator, sizeof(double) * (size_t)(M * M > 0 ? M * M : 1));
  if (!a) return OL_OUT_OF_MEMORY;
  for (int64_t b = 0; b < batches; b++) {
    for (int64_t i = 0; i < M * M; i++) a[i] = ol_tensor_get_double(x, b * M * M + i);
    double det = 1.0;
    for (int64_t c = 0; c < M; c++) {
      int64_t p = c;
      for (int64_t r = c + 1; r < M; r++)
        if (fabs(a[r * M + c]) > fabs(a[p * M + c])) p = r;
      if (a[p * M + c] == 0.0) {
        det = 0.0;
        break;
      }
      if (p != c) {
        for (int64_t j = 0; j < M; j++) {
          double t = a[c * M + j];
          a[c * M + j] = a[p * M + j];
          a[p * M + j] = t;
        }
        det = -det;
      }
      det *= a[c * M + c];
      for (int64_t r = c + 1; r < M; r++) {
        double f = a[r * M + c] / a[c * M + c];
        for (int64_t j = c; j < M; j++) a[r * M + j] -= f * a[c * M + j];
      }
    }
    ol_tensor_set_double(y, b, det);
  }
  ol_dealloc(ctx->allocator, a);
  return OL_OK;
}

static ol_status det_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, det_compute, out);
}

/* ------------------------------------------------------------ ReverseSequence */

typedef struct revseq_kernel {
  ol_kernel base;
  int64_t time_axis, batch_axis;
} revseq_kernel;

static ol_status revseq_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  revseq_kernel *k = (revseq_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x, *lt;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &lt));
  if (x->rank < 2) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 2");
  int ta = (int)k->time_axis, ba = (int)k->batch_axis;
  int64_t T = x->dims[ta], B = x->dims[ba];
  if (lt->dtype != OL_DTYPE_INT64 || lt->rank != 1 || lt->dims[0] != B)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence_lens must be an int64 tensor of shape [%lld]", (long long)B);
  const int64_t *lens = ol_tdata(lt);
  for (int64_t b = 0; b < B; b++)
    if (lens[b] < 0 || lens[b] > T)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                             (long long)b, (long long)lens[b], (long long)T);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int64_t inner = ol_shape_count(x->rank - 2, x->dims + 2);
  int64_t st = ta == 0 ? B * inner : inner, sb = ba == 0 ? T * inner : inner;
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < T; t++) {
      int64_t src_t = t < lens[b] ? lens[b] - 1 - t : t;
      OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), b * sb + t * st, ol_tdata(x), b * sb + src_t * st, inner));
    }
  return OL_OK;
}

static ol_status revseq_create(const ol_node *node, ol_kernel **out) {
  int64_t ta = ol_attr_int(node, "time_axis", 0), ba = ol_attr_int(node, "batch_axis", 1);
  if (!((ta == 0 && ba == 1) || (ta == 1 && ba == 0)))
    return ol_kernel_error(node, OL_INVALID_MODEL, "time_axis/batch_axis must be 0/1 or 1/0, got %lld/%lld",
                           (long long)ta, (long long)ba);
  revseq_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, revseq_compute, (ol_kernel **)&k));
  k->time_axis = ta;
  k->batch_axis = ba;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ StringNormalizer */

typedef struct strnorm_kernel {
  ol_kernel base;
  int action; /* 0 none, 1 lower, 2 upper */
  bool case_sensitive;
  size_t nstop;
  char **stop;
} strnorm_kernel;

static bool str_eq(const char *a, size_t la, const char *b, bool cs) {
  size_t lb = strlen(b);
  if (la != lb) return false;
  for (size_t i = 0; i < la; i++) {
    unsigned char x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (!cs) {
      x = (unsigned char)tolower(x);
      y = (unsigned char)tolower(y);
    }
    if (x != y) return false;
  }
  return true;
}

static ol_status strnorm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  strnorm_kernel *k = (strnorm_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->dtype != OL_DTYPE_STRING) return ol_kernel_bad_dtype(node, "input", x->dtype);
  if (!(x->rank == 1 || (x->rank == 2 && x->dims[0] == 1)))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be [C] or [1, C]");
  int64_t n = ol_tcount(x);
  const ol_string *s = ol_tdata(x);
  bool *keep = ol_alloc(ctx->allocator, sizeof(bool) * (size_t)(n + 1));
  if (!keep) return OL_OUT_OF_MEMORY;
  int64_t kept = 0;
  for (int64_t i = 0; i < n; i++) {
    const char *d = s[i].data ? s[i].data : "";
    keep[i] = true;
    for (size_t j = 0; j < k->nstop && keep[i]; j++)
      if (str_eq(d, s[i].length, k->stop[j], k->case_sensitive)) keep[i] = false;
    kept += keep[i];
  }
  int64_t od[2];
  int r = x->rank;
  if (r == 1) od[0] = kept ? kept : 1;
  else od[0] = 1, od[1] = kept ? kept : 1;
  ol_tensor *y;
  ol_status st = ol_ctx_output(ctx, 0, OL_DTYPE_STRING, r, od, &y);
  if (st != OL_OK) {
    ol_dealloc(ctx->allocator, keep);
    return st;
  }
  ol_string *o = ol_tdata(y);
  int64_t j = 0;
  for (int64_t i = 0; i <= n && st == OL_OK; i++) {
    const char *d;
    size_t len;
    if (i == n) {
      if (kept) break;
      d = "";
      len = 0;
    } else {
      if (!keep[i]) continue;
      d = s[i].data ? s[i].data : "";
      len = s[i].length;
    }
    char *c = ol_xmalloc(len + 1);
    if (!c) {
      st = OL_OUT_OF_MEMORY;
      break;
    }
    for (size_t q = 0; q < len; q++) {
      unsigned char ch = (unsigned char)d[q];
      if (k->action == 1 && ch < 128) ch = (unsigned char)tolower(ch);
      if (k->action == 2 && ch < 128) ch = (unsigned char)toupper(ch);
      c[q] = (char)ch;
    }
    c[len] = 0;
    free(o[j].data);
    o[j].data = c;
    o[j].length = len;
    j++;
  }
  ol_dealloc(ctx->allocator, keep);
  return st;
}

static ol_status strnorm_create(const ol_node *node, ol_kernel **out) {
  const char *a = ol_attr_string(node, "case_change_action", "NONE");
  int action;
  if (!strcmp(a, "NONE")) action = 0;
  else if (!strcmp(a, "LOWER")) action = 1;
  else if (!strcmp(a, "UPPER")) action = 2;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "case_change_action must be NONE, LOWER or UPPER, got '%s'", a);
  const ol_attr *sw = ol_node_attr(node, "stopwords");
  if (sw && sw->type != OL_ATTR_STRINGS)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'stopwords' must be a list of strings");
  strnorm_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, strnorm_compute, (ol_kernel **)&k));
  k->action = action;
  k->case_sensitive = ol_attr_int(node, "is_case_sensitive", 0) != 0;
  k->nstop = sw ? sw->count : 0;
  k->stop = sw ? sw->strings : NULL; /* borrowed from the node */
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ TfIdfVectorizer */

typedef struct tfidf_kernel {
  ol_kernel base;
  int mode; /* 0 TF, 1 IDF, 2 TFIDF */
  int64_t min_n, max_n, max_skip;
  int64_t ncounts;
  const int64_t *counts;  /* start offset in pool of each gram length */
  int64_t nindexes;
  const int64_t *indexes; /* output index per n-gram */
  int64_t nweights;
  const float *weights;
  int64_t npool;
  const int64_t *pool_i;
  char **pool_s;
  int64_t out_size;
} tfidf_kernel;

/* Items of one row as int64 or strings. */
static bool item_eq(const tfidf_kernel *k, const ol_tensor *x, int64_t xi, int64_t pi) {
  if (x->dtype == OL_DTYPE_STRING) {
    const ol_string *s = (const ol_string *)ol_tdata(x) + xi;
    const char *p = k->pool_s[pi];
    return strlen(p) == s->length && memcmp(p, s->data ? s->data : "", s->length) == 0;
  }
  int64_t v = x->dtype == OL_DTYPE_INT64 ? ((const int64_t *)ol_tdata(x))[xi] : ((const int32_t *)ol_tdata(x))[xi];
  return v == k->pool_i[pi];
}

static ol_status tfidf_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  tfidf_kernel *k = (tfidf_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->dtype == OL_DTYPE_STRING ? !k->pool_s : (x->dtype != OL_DTYPE_INT64 && x->dtype != OL_DTYPE_INT32) || !k->pool_i)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input type %s does not match the pool attribute",
                           ol_dtype_name(x->dtype));
  if (x->rank != 1 && x->rank != 2) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be [C] or [N, C]");
  int64_t rows = x->rank == 2 ? x->dims[0] : 1, C = x->dims[x->rank - 1];
  int64_t od[2];
  if (x->rank == 2) od[0] = rows, od[1] = k->out_size;
  else od[0] = k->out_size;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_FLOAT, x->rank, od, &y));
  float *yd = ol_tdata(y);
  for (int64_t r = 0; r < rows; r++) {
    float *cnt = yd + r * k->out_size;
    int64_t first_id = 0; /* n-gram id of the first n-gram of length n */
    for (int64_t n = 1; n <= k->max_n && n <= k->ncounts; n++) {
      int64_t pstart = k->counts[n - 1];
      int64_t pend = n < k->ncounts ? k->counts[n] : k->npool;
      int64_t ngrams = (pend - pstart) / n; /* n items each from pstart */
      if (n >= k->min_n)
        for (int64_t skip = 0; skip <= (n == 1 ? 0 : k->max_skip); skip++)
          for (int64_t s = 0; s + (n - 1) * (skip + 1) < C; s++)
            for (int64_t g = 0; g < ngrams; g++) {
              bool eq = true;
              for (int64_t q = 0; q < n && eq; q++)
                eq = item_eq(k, x, r * C + s + q * (skip + 1), pstart + g * n + q);
              if (!eq) continue;
              cnt[k->indexes[first_id + g]] += 1.0f;
              break;
            }
      first_id += ngrams;
    }
    /* weights are indexed by output position, as in onnxruntime and the
     * ONNX reference */
    if (k->mode != 0) {
      for (int64_t o = 0; o < k->out_size; o++) {
        float w = k->weights && o < k->nweights ? k->weights[o] : 1.0f;
        if (k->mode == 1) cnt[o] = cnt[o] > 0 ? w : 0.0f;
        else cnt[o] = cnt[o] * w;
      }
    }
  }
  return OL_OK;
}

static ol_status tfidf_create(const ol_node *node, ol_kernel **out) {
  const char *m = ol_attr_string(node, "mode", "");
  int mode;
  if (!strcmp(m, "TF")) mode = 0;
  else if (!strcmp(m, "IDF")) mode = 1;
  else if (!strcmp(m, "TFIDF")) mode = 2;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'mode' must be TF, IDF or TFIDF, got '%s'", m);
  int64_t minn = ol_attr_int(node, "min_gram_length", 0), maxn = ol_attr_int(node, "max_gram_length", 0);
  int64_t skip = ol_attr_int(node, "max_skip_count", 0);
  if (minn < 1 || maxn < minn || skip < 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "invalid gram lengths [%lld, %lld] or max_skip_count %lld",
                           (long long)minn, (long long)maxn, (long long)skip);
  tfidf_kernel t;
  memset(&t, 0, sizeof t);
  t.ncounts = ol_attr_ints(node, "ngram_counts", &t.counts);
  t.nindexes = ol_attr_ints(node, "ngram_indexes", &t.indexes);
  t.nweights = ol_attr_floats(node, "weights", &t.weights);
  if (t.nweights < 0) t.weights = NULL;
  int64_t npi = ol_attr_ints(node, "pool_int64s", &t.pool_i);
  const ol_attr *ps = ol_node_attr(node, "pool_strings");
  if (npi >= 0) t.npool = npi;
  else t.pool_i = NULL;
  if (ps && ps->type == OL_ATTR_STRINGS) {
    t.pool_s = ps->strings;
    t.npool = (int64_t)ps->count;
  }
  if ((npi >= 0) == (t.pool_s != NULL))
    return ol_kernel_error(node, OL_INVALID_MODEL, "exactly one of pool_int64s and pool_strings must be given");
  if (t.ncounts < 1 || t.nindexes < 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attributes ngram_counts and ngram_indexes are required");
  int64_t total = 0;
  for (int64_t i = 0; i < t.ncounts; i++) {
    int64_t s = t.counts[i], e = i + 1 < t.ncounts ? t.counts[i + 1] : t.npool;
    if (s < 0 || e < s || e > t.npool || (e - s) % (i + 1))
      return ol_kernel_error(node, OL_INVALID_MODEL, "ngram_counts[%lld] = %lld is inconsistent with the pool", (long long)i,
                             (long long)s);
    total += (e - s) / (i + 1);
  }
  if (t.nindexes != total)
    return ol_kernel_error(node, OL_INVALID_MODEL, "ngram_indexes has %lld values for %lld n-grams", (long long)t.nindexes,
                           (long long)total);
  int64_t out_size = 0;
  for (int64_t i = 0; i < t.nindexes; i++) {
    if (t.indexes[i] < 0) return ol_kernel_error(node, OL_INVALID_MODEL, "ngram_indexes has a negative value");
    if (t.indexes[i] + 1 > out_size) out_size = t.indexes[i] + 1;
  }
  tfidf_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, tfidf_compute, (ol_kernel **)&k));
  t.base = k->base;
  *k = t;
  k->mode = mode;
  k->min_n = minn;
  k->max_n = maxn;
  k->max_skip = skip;
  k->out_size = out_size;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ registry */

#define FT "float16 bfloat16 float32 float64"
const ol_op_schema ol_schema_misc[] = {
    {"", "NonMaxSuppression", 10, OL_OPSET_LATEST, nms_create, ol_infer_nms, "float32 (+float16 float64)"},
    {"", "GridSample", 16, OL_OPSET_LATEST, gs_create, ol_infer_grid_sample, FT},
    {"", "RoiAlign", 10, OL_OPSET_LATEST, roi_create, ol_infer_roi_align, FT},
    {"", "MaxUnpool", 9, OL_OPSET_LATEST, unpool_create, NULL, FT},
    {"", "Shrink", 9, OL_OPSET_LATEST, shrink_create, ol_infer_like_input0, FT " int8..uint64"},
    {"", "Det", 11, OL_OPSET_LATEST, det_create, ol_infer_det, FT},
    {"", "ReverseSequence", 10, OL_OPSET_LATEST, revseq_create, ol_infer_like_input0, "any"},
    {"", "StringNormalizer", 10, OL_OPSET_LATEST, strnorm_create, NULL, "string"},
    {"", "TfIdfVectorizer", 9, OL_OPSET_LATEST, tfidf_create, NULL, "string int32 int64 -> float32"},
    {"", "Bernoulli", 15, OL_OPSET_LATEST, NULL, ol_infer_bernoulli, "float16 bfloat16 float32 float64 -> numeric, bool (shape only: no kernel)"},
    {0},
};
