/* Shape functions of the remaining operator families: resizing (Resize,
 * Upsample, DepthToSpace, SpaceToDepth, GridSample, RoiAlign), recurrent
 * layers (RNN, GRU, LSTM), losses (SoftmaxCrossEntropyLoss,
 * NegativeLogLikelihoodLoss), data-dependent extents (Unique, Compress,
 * NonMaxSuppression), Det, window functions and Bernoulli. */
#include <math.h>
#include <string.h>

#include "ops/infer.h"

/* ------------------------------------------------------------ resizing */

/* Resize (opset >= 11: X, roi, scales, sizes; 10: X, scales) and Upsample
 * (7: attribute scales; 9: input scales). Extents from constant sizes, or
 * floor(extent * scale) from constant scales. */
static ol_status infer_resize(ol_infer_ctx *ctx) {
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

static ol_status infer_depth_space(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, x->rank, NULL);
  int64_t b = ol_attr_int(ctx->node, "blocksize", 0), bb, extent;
  if (x->rank != 4 || b <= 0 || !ol_i64_mul(b, b, &bb)) return OL_OK;
  bool to_space = strcmp(ctx->node->op_type, "DepthToSpace") == 0;
  out->dims[0] = x->dims[0];
  ol_dim c = x->dims[1];
  if (c.is_value) {
    if (to_space) out->dims[1] = c.value % bb == 0 ? ol_dim_of(c.value / bb) : ol_dim_unknown();
    else if (ol_i64_mul(c.value, bb, &extent)) out->dims[1] = ol_dim_of(extent);
  }
  for (int i = 2; i < 4; i++) {
    ol_dim d = x->dims[i];
    if (!d.is_value) continue;
    if (!to_space) out->dims[i] = d.value % b == 0 ? ol_dim_of(d.value / b) : ol_dim_unknown();
    else if (ol_i64_mul(d.value, b, &extent)) out->dims[i] = ol_dim_of(extent);
  }
  return OL_OK;
}

/* GridSample: [N, C] + the grid's spatial dims. */
static ol_status infer_grid_sample(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *grid = ol_infer_shaped(ctx, 1);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, x->rank, NULL);
  if (x->rank < 3 || !grid || grid->rank != x->rank) return OL_OK;
  out->dims[0] = x->dims[0];
  out->dims[1] = x->dims[1];
  for (int i = 2; i < x->rank; i++) out->dims[i] = grid->dims[i - 1];
  return OL_OK;
}

/* RoiAlign: [num_rois, C, output_height, output_width]. */
static ol_status infer_roi_align(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *rois = ol_infer_shaped(ctx, 1);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_dim dims[4] = {rois && rois->rank == 2 ? rois->dims[0] : ol_dim_unknown(),
                    x->rank == 4 ? x->dims[1] : ol_dim_unknown(),
                    ol_dim_of(ol_attr_int(ctx->node, "output_height", 1)),
                    ol_dim_of(ol_attr_int(ctx->node, "output_width", 1))};
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, 4, dims);
  return OL_OK;
}

/* ------------------------------------------------------------ recurrent */

/* RNN, GRU, LSTM: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs,
 * hidden]); Y_h, Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]). */
static ol_status infer_recurrent(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  int64_t hidden = ol_attr_int(ctx->node, "hidden_size", -1);
  bool batch_first = ol_attr_int(ctx->node, "layout", 0) != 0;
  ol_dim h = hidden > 0 ? ol_dim_of(hidden) : ol_dim_unknown();
  ol_dim dirs = ol_dim_of(strcmp(ol_attr_string(ctx->node, "direction", "forward"), "bidirectional") == 0 ? 2 : 1);
  ol_dim seq = x->rank == 3 ? x->dims[batch_first ? 1 : 0] : ol_dim_unknown();
  ol_dim batch = x->rank == 3 ? x->dims[batch_first ? 0 : 1] : ol_dim_unknown();
  ol_dim y[4] = {seq, dirs, batch, h}, state[3] = {dirs, batch, h};
  if (batch_first) {
    y[0] = batch, y[1] = seq, y[2] = dirs;
    state[0] = batch, state[1] = dirs;
  }
  for (size_t o = 0; o < ctx->num_outputs && o < 3; o++)
    ol_infer_set_tensor(&ctx->outputs[o], x->dtype, o == 0 ? 4 : 3, o == 0 ? y : state);
  return OL_OK;
}

/* ------------------------------------------------------------ losses */

/* SoftmaxCrossEntropyLoss(scores, labels, weights?) -> loss, log_prob?;
 * NegativeLogLikelihoodLoss(input, target, weight?) -> loss. reduction
 * "none" gives labels' shape, otherwise a scalar. */
static ol_status infer_loss(ol_infer_ctx *ctx) {
  const ol_infer_type *scores = ol_infer_input(ctx, 0), *labels = ol_infer_input(ctx, 1);
  if (!scores) return OL_OK;
  bool none = strcmp(ol_attr_string(ctx->node, "reduction", "mean"), "none") == 0;
  if (ctx->num_outputs > 0) {
    if (none) ol_infer_set_tensor(&ctx->outputs[0], scores->dtype, labels ? labels->rank : -1, labels ? labels->dims : NULL);
    else ol_infer_set_tensor(&ctx->outputs[0], scores->dtype, 0, NULL);
  }
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], scores->dtype, scores->rank, scores->dims);
  return OL_OK;
}

/* ------------------------------------------------------------ data-dependent extents */

static ol_status infer_unique(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  ol_dim unknown = ol_dim_unknown();
  const ol_attr *axis_attr = ol_node_attr(ctx->node, "axis");
  if (ctx->num_outputs > 0) {
    if (!axis_attr || x->rank < 0) {
      ol_infer_set_tensor(&ctx->outputs[0], x->dtype, 1, &unknown);
    } else {
      int axis;
      OL_TRY(ol_infer_axis(ctx, axis_attr->i, x->rank, &axis));
      ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, x->dims);
      ctx->outputs[0].dims[axis] = unknown;
    }
  }
  for (size_t o = 1; o < ctx->num_outputs && o < 4; o++) ol_infer_set_tensor(&ctx->outputs[o], OL_DTYPE_INT64, 1, &unknown);
  return OL_OK;
}

static ol_status infer_compress(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_dim unknown = ol_dim_unknown();
  const ol_attr *axis_attr = ol_node_attr(ctx->node, "axis");
  if (!axis_attr || x->rank < 0) {
    ol_infer_set_tensor(&ctx->outputs[0], x->dtype, axis_attr ? -1 : 1, &unknown);
    return OL_OK;
  }
  int axis;
  OL_TRY(ol_infer_axis(ctx, axis_attr->i, x->rank, &axis));
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, x->dims);
  ctx->outputs[0].dims[axis] = unknown;
  return OL_OK;
}

static ol_status infer_nms(ol_infer_ctx *ctx) {
  ol_dim dims[2] = {ol_dim_unknown(), ol_dim_of(3)};
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_INT64, 2, dims);
  return OL_OK;
}

static ol_status infer_det(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  if (x->rank >= 0 && x->rank < 2) return ol_infer_error(ctx, "input must have rank >= 2 (got %d)", x->rank);
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank >= 0 ? x->rank - 2 : -1, x->dims);
  return OL_OK;
}

/* ------------------------------------------------------------ generators */

/* HannWindow, HammingWindow, BlackmanWindow: [size], output_datatype (FLOAT). */
static ol_status infer_window(ol_infer_ctx *ctx) {
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

static ol_status infer_bernoulli(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = (ol_dtype)ol_attr_int(ctx->node, "dtype", x->dtype);
  if (!ol_dtype_valid(dtype) || dtype == OL_DTYPE_UNDEFINED)
    return ol_infer_error(ctx, "attribute 'dtype' is not an element type");
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x->rank, x->dims);
  return OL_OK;
}

const ol_infer_rule ol_infer_rules_misc[] = {
    {"", "Resize", infer_resize},
    {"", "Upsample", infer_resize},
    {"", "DepthToSpace", infer_depth_space},
    {"", "SpaceToDepth", infer_depth_space},
    {"", "GridSample", infer_grid_sample},
    {"", "RoiAlign", infer_roi_align},
    {"", "RNN", infer_recurrent},
    {"", "GRU", infer_recurrent},
    {"", "LSTM", infer_recurrent},
    {"", "SoftmaxCrossEntropyLoss", infer_loss},
    {"", "NegativeLogLikelihoodLoss", infer_loss},
    {"", "Unique", infer_unique},
    {"", "Compress", infer_compress},
    {"", "NonMaxSuppression", infer_nms},
    {"", "Det", infer_det},
    {"", "HannWindow", infer_window},
    {"", "HammingWindow", infer_window},
    {"", "BlackmanWindow", infer_window},
    {"", "Bernoulli", infer_bernoulli},
    {0},
};
