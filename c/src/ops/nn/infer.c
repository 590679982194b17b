/* Shape functions of convolutions and pools (Conv, ConvTranspose, MaxPool,
 * AveragePool, LpPool, Global*Pool), LayerNormalization and Resize/Upsample;
 * the Conv shape is shared with ConvInteger and QLinearConv. */
#include <string.h>

#include <math.h>

#include "ops/nn/nn.h"

/* Spatial extent of a window sweep: d input extent, k kernel, s stride,
 * dil dilation, pb/pe pads; auto_pad "SAME_*" or "VALID"; ceil mode. */
static ol_dim window_extent(ol_dim d, int64_t k, int64_t s, int64_t dil, int64_t pb, int64_t pe,
                            const char *auto_pad, bool ceil_mode) {
  if (!d.is_value || s <= 0 || k <= 0 || dil <= 0) return ol_dim_unknown();
  if (strncmp(auto_pad, "SAME", 4) == 0) return ol_dim_of(d.value / s + (d.value % s != 0));
  if (strcmp(auto_pad, "VALID") == 0) pb = pe = 0;
  int64_t span, room;
  if (!ol_i64_mul(k - 1, dil, &span) || !ol_i64_add(span, 1, &span) || !ol_i64_add(d.value, pb, &room) ||
      !ol_i64_add(room, pe, &room) || !ol_i64_sub(room, span, &room) || room < 0)
    return ol_dim_unknown();
  if (ceil_mode) return ol_dim_unknown(); /* the last-window rule differs between versions */
  return ol_dim_of(room / s + 1);
}

/* Output spatial dims of Conv / pooling over x (rank >= 3) with kernel dims. */
static ol_status spatial(ol_infer_ctx *ctx, const ol_infer_type *x, const int64_t *kernel, int n, ol_dim *dims) {
  const int64_t *strides, *dilations, *pads;
  int64_t ns = ol_attr_ints(ctx->node, "strides", &strides);
  int64_t nd = ol_attr_ints(ctx->node, "dilations", &dilations);
  int64_t np = ol_attr_ints(ctx->node, "pads", &pads);
  if ((ns >= 0 && ns != n) || (nd >= 0 && nd != n) || (np >= 0 && np != 2 * n))
    return ol_infer_error(ctx, "strides, dilations or pads do not match %d spatial dims", n);
  const char *auto_pad = ol_attr_string(ctx->node, "auto_pad", "NOTSET");
  bool ceil_mode = ol_attr_int(ctx->node, "ceil_mode", 0) != 0;
  for (int i = 0; i < n; i++)
    dims[i] = window_extent(x->dims[2 + i], kernel[i], ns >= 0 ? strides[i] : 1, nd >= 0 ? dilations[i] : 1,
                            np >= 0 ? pads[i] : 0, np >= 0 ? pads[i + n] : 0, auto_pad, ceil_mode);
  return OL_OK;
}

/* Kernel dims: attribute kernel_shape, else w's spatial dims (0: unknown). */
static void kernel_dims(const ol_infer_ctx *ctx, const ol_infer_type *w, int n, int64_t *kernel) {
  const int64_t *ks;
  int64_t nk = ol_attr_ints(ctx->node, "kernel_shape", &ks);
  for (int i = 0; i < n; i++) {
    if (nk >= 0) kernel[i] = i < nk ? ks[i] : 0;
    else if (w->dims[2 + i].is_value) kernel[i] = w->dims[2 + i].value;
    else kernel[i] = 0;
  }
}

/* Conv-shaped output of x and w with element type dtype. */
ol_status ol_infer_conv_shape(ol_infer_ctx *ctx, const ol_infer_type *x, const ol_infer_type *w, ol_dtype dtype) {
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, dtype, x->rank, NULL);
  if (x->rank < 3 || !w || w->rank != x->rank) return OL_OK;
  int n = x->rank - 2;
  int64_t kernel[OL_MAX_RANK];
  kernel_dims(ctx, w, n, kernel);
  out->dims[0] = x->dims[0];
  out->dims[1] = w->dims[0];
  return spatial(ctx, x, kernel, n, out->dims + 2);
}

ol_status ol_infer_conv(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  return x ? ol_infer_conv_shape(ctx, x, ol_infer_input(ctx, 1), x->dtype) : OL_OK;
}

/* ConvTranspose: output_shape, or stride * (in - 1) + output_padding +
 * dilated kernel - pads (auto_pad SAME: in * stride). */
ol_status ol_infer_conv_transpose(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *w = ol_infer_input(ctx, 1);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, x->rank, NULL);
  if (x->rank < 3 || !w || w->rank != x->rank) return OL_OK;
  int n = x->rank - 2;
  int64_t kernel[OL_MAX_RANK], group = ol_attr_int(ctx->node, "group", 1), channels;
  kernel_dims(ctx, w, n, kernel);
  out->dims[0] = x->dims[0];
  if (w->dims[1].is_value && group > 0 && ol_i64_mul(w->dims[1].value, group, &channels))
    out->dims[1] = ol_dim_of(channels);
  const int64_t *strides, *dilations, *pads, *output_padding, *output_shape;
  int64_t ns = ol_attr_ints(ctx->node, "strides", &strides), nd = ol_attr_ints(ctx->node, "dilations", &dilations);
  int64_t np = ol_attr_ints(ctx->node, "pads", &pads), nop = ol_attr_ints(ctx->node, "output_padding", &output_padding);
  int64_t nos = ol_attr_ints(ctx->node, "output_shape", &output_shape);
  const char *auto_pad = ol_attr_string(ctx->node, "auto_pad", "NOTSET");
  if ((ns >= 0 && ns != n) || (nd >= 0 && nd != n) || (np >= 0 && np != 2 * n) || (nop >= 0 && nop != n))
    return ol_infer_error(ctx, "strides, dilations, pads or output_padding do not match %d spatial dims", n);
  for (int i = 0; i < n; i++) {
    ol_dim d = x->dims[2 + i];
    int64_t s = ns >= 0 ? strides[i] : 1, dil = nd >= 0 ? dilations[i] : 1, extent;
    if (nos == n) {
      out->dims[2 + i] = ol_dim_of(output_shape[i]);
      continue;
    }
    if (nos >= 0 || !d.is_value || kernel[i] <= 0 || s <= 0 || dil <= 0) continue;
    if (strncmp(auto_pad, "SAME", 4) == 0) {
      if (ol_i64_mul(d.value, s, &extent)) out->dims[2 + i] = ol_dim_of(extent);
      continue;
    }
    int64_t span, pb = np >= 0 && strcmp(auto_pad, "VALID") != 0 ? pads[i] : 0;
    int64_t pe = np >= 0 && strcmp(auto_pad, "VALID") != 0 ? pads[i + n] : 0, op = nop >= 0 ? output_padding[i] : 0;
    if (ol_i64_mul(kernel[i] - 1, dil, &span) && ol_i64_mul(d.value - 1, s, &extent) && ol_i64_add(extent, op, &extent) &&
        ol_i64_add(extent, span, &extent) && ol_i64_add(extent, 1, &extent) && ol_i64_sub(extent, pb, &extent) &&
        ol_i64_sub(extent, pe, &extent))
      out->dims[2 + i] = ol_dim_of(extent);
  }
  return OL_OK;
}

ol_status ol_infer_pool(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1 || x->rank > OL_MAX_RANK) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : ol_dim_unknown();
  if (x->rank >= 3) {
    int n = x->rank - 2;
    const int64_t *ks;
    if (ol_attr_ints(ctx->node, "kernel_shape", &ks) != n)
      return ol_infer_error(ctx, "attribute 'kernel_shape' must have %d entries", n);
    OL_TRY(spatial(ctx, x, ks, n, dims + 2));
  }
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, dims);
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], OL_DTYPE_INT64, x->rank, dims);
  return OL_OK;
}

ol_status ol_infer_global_pool(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1 || x->rank > OL_MAX_RANK) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : ol_dim_of(1);
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, dims);
  return OL_OK;
}

/* ------------------------------------------------------------ linear quantization */

#define LIKE(name) {"", name, ol_infer_like_input0}

/* LayerNormalization: Y like X; Mean and InvStdDev (stash_type, default
 * FLOAT) keep X's leading dims before axis and 1 after it.
 * SimplifiedLayerNormalization: Y like X, inv_std_var likewise. */
ol_status ol_infer_layer_norm(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, x->dims);
  ol_dtype stash = (ol_dtype)ol_attr_int(ctx->node, "stash_type", OL_DTYPE_FLOAT);
  if (!ol_dtype_valid(stash)) stash = OL_DTYPE_FLOAT;
  for (size_t o = 1; o < ctx->num_outputs && o < 3; o++) {
    ol_infer_set_tensor(&ctx->outputs[o], stash, -1, NULL);
    if (x->rank < 0) continue;
    int axis;
    OL_TRY(ol_infer_axis(ctx, ol_attr_int(ctx->node, "axis", -1), x->rank, &axis));
    ol_dim dims[OL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = i < axis ? x->dims[i] : ol_dim_of(1);
    ol_infer_set_tensor(&ctx->outputs[o], stash, x->rank, dims);
  }
  return OL_OK;
}

/* Resize (opset >= 11: X, roi, scales, sizes; 10: X, scales) and Upsample
 * (7: attribute scales; 9: input scales). Extents from constant sizes, or
 * floor(extent * scale) from constant scales. */
ol_status ol_infer_resize(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, x->rank, NULL);
  if (x->rank < 0) return OL_OK;
  const ol_node *node = ctx->node;
  bool resize = strcmp(node->op_type, "Resize") == 0;
  if (resize && strcmp(ol_attr_string(node, "coordinate_transformation_mode", ""), "tf_crop_and_resize") == 0)
    return OL_OK;
  const char *policy = ol_attr_string(node, "keep_aspect_ratio_policy", "stretch");
  int64_t axes[OL_MAX_RANK];
  const int64_t *attr_axes;
  int64_t n_axes = resize && node->opset >= 18 ? ol_attr_ints(node, "axes", &attr_axes) : -1;
  int n = n_axes >= 0 ? (int)n_axes : x->rank;
  if (n > x->rank) return ol_infer_error(ctx, "attribute 'axes' has %d entries for rank %d", n, x->rank);
  for (int i = 0; i < n; i++) {
    int axis = i;
    if (n_axes >= 0) OL_TRY(ol_infer_axis(ctx, attr_axes[i], x->rank, &axis));
    axes[i] = axis;
  }
  for (int i = 0; i < x->rank; i++) out->dims[i] = x->dims[i];
  int64_t sizes[OL_MAX_RANK];
  double scales[OL_MAX_RANK];
  int count = 0;
  size_t scales_input = resize ? (node->opset >= 11 ? 2 : 1) : 1;
  if (resize && node->opset >= 11 && ol_node_has_input(node, 3) && strcmp(policy, "stretch") == 0 &&
      ol_infer_ints(ctx, 3, sizes, &count, OL_MAX_RANK) && count == n) {
    for (int i = 0; i < n; i++) out->dims[axes[i]] = ol_dim_of(sizes[i]);
    return OL_OK;
  }
  bool have_scales;
  if (!resize && node->opset < 9) {
    const float *attr_scales;
    int64_t k = ol_attr_floats(node, "scales", &attr_scales);
    have_scales = k == n;
    for (int i = 0; have_scales && i < n; i++) scales[i] = attr_scales[i];
    count = (int)k;
  } else {
    have_scales = ol_node_has_input(node, scales_input) &&
                  ol_infer_doubles(ctx, scales_input, scales, &count, OL_MAX_RANK) && count == n;
  }
  for (int i = 0; i < n; i++) {
    ol_dim d = x->dims[axes[i]];
    double extent = have_scales && d.is_value ? floor((double)d.value * scales[i]) : -1;
    if (have_scales && scales[i] == 1.0) continue; /* unchanged, also symbolic */
    out->dims[axes[i]] = extent >= 0 && extent < 9.2e18 ? ol_dim_of((int64_t)extent) : ol_dim_unknown();
  }
  return OL_OK;
}
