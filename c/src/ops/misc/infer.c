/* Shape functions of GridSample, RoiAlign, NonMaxSuppression, Det and
 * Bernoulli. */
#include <math.h>
#include <string.h>

#include "ops/misc/misc.h"

/* ------------------------------------------------------------ resizing */

/* GridSample: [N, C] + the grid's spatial dims. */
ol_status ol_infer_grid_sample(ol_infer_ctx *ctx) {
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
ol_status ol_infer_roi_align(ol_infer_ctx *ctx) {
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

/* ------------------------------------------------------------ losses */

/* ------------------------------------------------------------ data-dependent extents */

ol_status ol_infer_nms(ol_infer_ctx *ctx) {
  ol_dim dims[2] = {ol_dim_unknown(), ol_dim_of(3)};
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_INT64, 2, dims);
  return OL_OK;
}

ol_status ol_infer_det(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  if (x->rank >= 0 && x->rank < 2) return ol_infer_error(ctx, "input must have rank >= 2 (got %d)", x->rank);
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank >= 0 ? x->rank - 2 : -1, x->dims);
  return OL_OK;
}

/* ------------------------------------------------------------ generators */

ol_status ol_infer_bernoulli(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = (ol_dtype)ol_attr_int(ctx->node, "dtype", x->dtype);
  if (!ol_dtype_valid(dtype) || dtype == OL_DTYPE_UNDEFINED)
    return ol_infer_error(ctx, "attribute 'dtype' is not an element type");
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x->rank, x->dims);
  return OL_OK;
}

