/* Shape functions of convolution, pooling, normalization and linear
 * quantization operators: Conv, MaxPool, AveragePool, LpPool, Global*Pool,
 * BatchNormalization and the other normalizations, QuantizeLinear,
 * DequantizeLinear, DynamicQuantizeLinear; ConvInteger, QLinearConv,
 * ConvTranspose. */
#include <string.h>

#include "ops/infer.h"

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
static ol_status conv_shape(ol_infer_ctx *ctx, const ol_infer_type *x, const ol_infer_type *w, ol_dtype dtype) {
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

static ol_status infer_conv(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  return x ? conv_shape(ctx, x, ol_infer_input(ctx, 1), x->dtype) : OL_OK;
}

static ol_status infer_conv_integer(ol_infer_ctx *ctx) {
  return conv_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 1), OL_DTYPE_INT32);
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?): y_zp's type. */
static ol_status infer_qlinear_conv(ol_infer_ctx *ctx) {
  const ol_infer_type *zp = ol_infer_input(ctx, 7);
  return zp ? conv_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 3), zp->dtype) : OL_OK;
}

/* ConvTranspose: output_shape, or stride * (in - 1) + output_padding +
 * dilated kernel - pads (auto_pad SAME: in * stride). */
static ol_status infer_conv_transpose(ol_infer_ctx *ctx) {
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

static ol_status infer_pool(ol_infer_ctx *ctx) {
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

static ol_status infer_global_pool(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1 || x->rank > OL_MAX_RANK) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = i < 2 ? x->dims[i] : ol_dim_of(1);
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, dims);
  return OL_OK;
}

/* ------------------------------------------------------------ linear quantization */

static ol_status infer_quantize_linear(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *zp = ol_infer_input(ctx, 2);
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = OL_DTYPE_UINT8;
  if (ol_node_has_input(ctx->node, 2)) {
    if (!zp) return OL_OK;
    dtype = zp->dtype;
  } else if (ol_attr_int(ctx->node, "output_dtype", 0) != 0) {
    dtype = (ol_dtype)ol_attr_int(ctx->node, "output_dtype", 0);
    if (!ol_dtype_valid(dtype)) return ol_infer_error(ctx, "attribute 'output_dtype' is not an element type");
  }
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x ? x->rank : -1, x ? x->dims : NULL);
  return OL_OK;
}

static ol_status infer_dequantize_linear(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *scale = ol_infer_input(ctx, 1);
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = OL_DTYPE_FLOAT;
  if (ctx->node->opset >= 19) {
    if (!scale) return OL_OK;
    dtype = scale->dtype;
  }
  if (ol_attr_int(ctx->node, "output_dtype", 0) != 0) {
    dtype = (ol_dtype)ol_attr_int(ctx->node, "output_dtype", 0);
    if (!ol_dtype_valid(dtype)) return ol_infer_error(ctx, "attribute 'output_dtype' is not an element type");
  }
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x ? x->rank : -1, x ? x->dims : NULL);
  return OL_OK;
}

static ol_status infer_dynamic_quantize_linear(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_UINT8, x ? x->rank : -1, x ? x->dims : NULL);
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], OL_DTYPE_FLOAT, 0, NULL);
  if (ctx->num_outputs > 2) ol_infer_set_tensor(&ctx->outputs[2], OL_DTYPE_UINT8, 0, NULL);
  return OL_OK;
}

#define LIKE(name) {"", name, ol_infer_like_input0}

const ol_infer_rule ol_infer_rules_nn[] = {
    {"", "Conv", infer_conv},
    {"", "ConvInteger", infer_conv_integer},
    {"", "QLinearConv", infer_qlinear_conv},
    {"", "ConvTranspose", infer_conv_transpose},
    {"", "MaxPool", infer_pool},
    {"", "AveragePool", infer_pool},
    {"", "LpPool", infer_pool},
    {"", "GlobalAveragePool", infer_global_pool},
    {"", "GlobalMaxPool", infer_global_pool},
    {"", "GlobalLpPool", infer_global_pool},
    {"", "QuantizeLinear", infer_quantize_linear},
    {"", "DequantizeLinear", infer_dequantize_linear},
    {"", "DynamicQuantizeLinear", infer_dynamic_quantize_linear},
    LIKE("BatchNormalization"), LIKE("InstanceNormalization"), LIKE("GroupNormalization"),
    LIKE("LpNormalization"), LIKE("LRN"), LIKE("MeanVarianceNormalization"), LIKE("Shrink"),
    LIKE("RMSNormalization"),
    {0},
};
