/* Shape function of the reductions (and ArgMax/ArgMin): axes from the
 * attribute or, from the opset that made them an input, from input 1. */
#include <string.h>

#include "ops/reduce/reduce.h"

/* The opset from which an operator takes its axes as input 1. */
static int axes_input_since(const char *op_type) {
  if (strcmp(op_type, "ReduceSum") == 0) return 13;
  if (strncmp(op_type, "Reduce", 6) == 0) return 18;
  return 1000; /* ArgMax / ArgMin: attribute `axis` */
}

ol_status ol_infer_reduce(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  const ol_node *node = ctx->node;
  bool arg = strncmp(node->op_type, "Arg", 3) == 0;
  ol_dtype dtype = arg ? OL_DTYPE_INT64 : x->dtype;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, dtype, -1, NULL);
  if (x->rank < 0) return OL_OK;
  bool keep = ol_attr_int(node, "keepdims", 1) != 0;
  int64_t axes[OL_MAX_RANK];
  int count = 0;
  if (arg) {
    axes[0] = ol_attr_int(node, "axis", 0);
    count = 1;
  } else if (node->opset < axes_input_since(node->op_type)) {
    const int64_t *values;
    int64_t n = ol_attr_ints(node, "axes", &values);
    if (n > OL_MAX_RANK) return OL_OK;
    for (int64_t i = 0; i < n; i++) axes[i] = values[i];
    count = n > 0 ? (int)n : 0;
  } else if (ol_node_has_input(node, 1)) {
    if (!ol_infer_ints(ctx, 1, axes, &count, OL_MAX_RANK)) {
      /* unknown axes: with keepdims the rank stays */
      if (keep) {
        ol_dim dims[OL_MAX_RANK];
        for (int i = 0; i < x->rank; i++) dims[i] = ol_dim_unknown();
        ol_infer_set_tensor(out, dtype, x->rank, dims);
      }
      return OL_OK;
    }
  }
  bool reduced[OL_MAX_RANK] = {false};
  if (count == 0) {
    if (!arg && ol_attr_int(node, "noop_with_empty_axes", 0) != 0 && node->opset >= 13) {
      ol_infer_set_tensor(out, dtype, x->rank, x->dims);
      return OL_OK;
    }
    for (int i = 0; i < x->rank; i++) reduced[i] = true;
  }
  for (int i = 0; i < count; i++) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, axes[i], x->rank, &axis));
    reduced[axis] = true;
  }
  ol_dim dims[OL_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!reduced[i]) dims[rank++] = x->dims[i];
    else if (keep) dims[rank++] = ol_dim_of(1);
  }
  ol_infer_set_tensor(out, dtype, rank, dims);
  return OL_OK;
}
