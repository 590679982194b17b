/* Shape functions of slicing, splitting, padding and indexing operators:
 * Slice (with data propagation, e.g. Shape(x)[1:]), Split, Tile, Pad, TopK,
 * GatherElements, GatherND, OneHot, EyeLike, NonZero, and of
 * DepthToSpace/SpaceToDepth, Unique and Compress. */
#include <string.h>

#include "ops/tensor/tensor.h"

/* Ints from input `input` (opset >= since) or attribute `name` (earlier):
 * true with *count when concrete; *absent when neither is given. */
static bool ints_of(const ol_infer_ctx *ctx, int since, size_t input, const char *name, int64_t *values,
                    int *count, int capacity, bool *absent) {
  *absent = false;
  if (ctx->node->opset < since) {
    const int64_t *v;
    int64_t n = ol_attr_ints(ctx->node, name, &v);
    if (n < 0) {
      *absent = true;
      return false;
    }
    if (n > capacity) return false;
    memcpy(values, v, (size_t)n * sizeof *values);
    *count = (int)n;
    return true;
  }
  if (!ol_node_has_input(ctx->node, input)) {
    *absent = true;
    return false;
  }
  return ol_infer_ints(ctx, input, values, count, capacity);
}

/* ------------------------------------------------------------ Slice */

/* Element count of x[start:end:step] along an axis of extent d (ONNX clamping). */
static int64_t slice_length(int64_t d, int64_t start, int64_t end, int64_t step) {
  if (start < 0) start += d;
  if (end < 0) end += d;
  if (step > 0) {
    start = start < 0 ? 0 : start > d ? d : start;
    end = end < 0 ? 0 : end > d ? d : end;
    return end > start ? (end - start - 1) / step + 1 : 0;
  }
  start = start < 0 ? 0 : start > d - 1 ? d - 1 : start;
  end = end < -1 ? -1 : end > d - 1 ? d - 1 : end;
  return start > end ? (start - end - 1) / -step + 1 : 0;
}

static int64_t slice_first(int64_t d, int64_t start, int64_t step) {
  if (start < 0) start += d;
  if (step > 0) return start < 0 ? 0 : start > d ? d : start;
  return start < 0 ? 0 : start > d - 1 ? d - 1 : start;
}

ol_status ol_infer_slice(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  if (x->rank < 0) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0; i < x->rank; i++) dims[i] = x->dims[i];
  int64_t starts[OL_MAX_RANK], ends[OL_MAX_RANK], axes[OL_MAX_RANK], steps[OL_MAX_RANK];
  int n_starts = 0, n_ends = 0, n_axes = 0, n_steps = 0;
  bool absent_s, absent_e, absent_a, absent_t;
  bool have_starts = ints_of(ctx, 10, 1, "starts", starts, &n_starts, OL_MAX_RANK, &absent_s);
  bool have_ends = ints_of(ctx, 10, 2, "ends", ends, &n_ends, OL_MAX_RANK, &absent_e);
  bool have_axes = ints_of(ctx, 10, 3, "axes", axes, &n_axes, OL_MAX_RANK, &absent_a);
  bool have_steps = ints_of(ctx, 10, 4, "steps", steps, &n_steps, OL_MAX_RANK, &absent_t);
  if (absent_s || absent_e) return ol_infer_error(ctx, "starts and ends are required");
  if (absent_a) {
    int n = have_starts ? n_starts : have_ends ? n_ends : -1;
    const ol_infer_type *s = ol_infer_input(ctx, 1);
    if (n < 0 && s && s->rank == 1 && s->dims[0].is_value) n = (int)s->dims[0].value;
    if (n < 0 || n > x->rank) {
      for (int i = 0; i < x->rank; i++) dims[i] = ol_dim_unknown();
      ol_infer_set_tensor(out, x->dtype, x->rank, dims);
      return OL_OK;
    }
    for (int i = 0; i < n; i++) axes[i] = i;
    n_axes = n;
    have_axes = true;
  }
  if (!have_axes) { /* which axes are sliced is unknown */
    for (int i = 0; i < x->rank; i++) dims[i] = ol_dim_unknown();
    ol_infer_set_tensor(out, x->dtype, x->rank, dims);
    return OL_OK;
  }
  if (absent_t) {
    for (int i = 0; i < n_axes; i++) steps[i] = 1;
    n_steps = n_axes;
    have_steps = true;
  }
  bool concrete = have_starts && have_ends && have_steps;
  if (concrete && (n_starts != n_axes || n_ends != n_axes || n_steps != n_axes))
    return ol_infer_error(ctx, "starts, ends, axes and steps have different lengths");
  int sliced_axis = -1;
  for (int i = 0; i < n_axes; i++) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, axes[i], x->rank, &axis));
    if (concrete && steps[i] == 0) return ol_infer_error(ctx, "step %d is 0", i);
    if (concrete && steps[i] == INT64_MIN) concrete = false;
    if (concrete && x->dims[axis].is_value)
      dims[axis] = ol_dim_of(slice_length(x->dims[axis].value, starts[i], ends[i], steps[i]));
    else if (concrete && steps[i] == 1 && starts[i] == 0 && ends[i] >= INT32_MAX)
      dims[axis] = x->dims[axis]; /* x[0:] */
    else
      dims[axis] = ol_dim_unknown();
    sliced_axis = axis;
  }
  ol_infer_set_tensor(out, x->dtype, x->rank, dims);
  if (concrete && x->rank == 1 && x->data_count >= 0 && n_axes == 1 && sliced_axis == 0 && dims[0].is_value) {
    int64_t first = slice_first(x->data_count, starts[0], steps[0]);
    for (int64_t k = 0; k < dims[0].value; k++) out->data[k] = x->data[first + k * steps[0]];
    out->data_count = (int)dims[0].value;
  }
  return OL_OK;
}

/* ------------------------------------------------------------ Split, Tile, Pad */

ol_status ol_infer_split(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  for (size_t o = 0; o < ctx->num_outputs; o++) ol_infer_set_tensor(&ctx->outputs[o], x->dtype, -1, NULL);
  if (x->rank < 0 || ctx->num_outputs == 0) return OL_OK;
  int axis;
  OL_TRY(ol_infer_axis(ctx, ol_attr_int(ctx->node, "axis", 0), x->rank, &axis));
  int64_t sizes[OL_MAX_RANK * 4];
  int count = 0;
  bool absent;
  bool known = ints_of(ctx, 13, 1, "split", sizes, &count, OL_MAX_RANK * 4, &absent);
  size_t n = ctx->num_outputs;
  ol_dim d = x->dims[axis];
  if (known && (size_t)count != n)
    return ol_infer_error(ctx, "'split' has %d sizes for %zu outputs", count, n);
  if (absent && d.is_value && n <= OL_MAX_RANK * 4) {
    int64_t each = d.value / (int64_t)n + (d.value % (int64_t)n != 0);
    bool uneven = ol_node_attr(ctx->node, "num_outputs") != NULL;
    if (!uneven && d.value % (int64_t)n != 0)
      return ol_infer_error(ctx, "axis %d of extent %lld does not split evenly into %zu outputs", axis,
                            (long long)d.value, n);
    for (size_t o = 0; o < n; o++) {
      int64_t left = d.value - (int64_t)o * each; /* o * each <= d + each: no overflow */
      sizes[o] = left < each ? (left > 0 ? left : 0) : each;
    }
    known = true;
  }
  if (known) {
    int64_t total = 0;
    bool fits = true;
    for (size_t o = 0; o < n; o++) {
      if (sizes[o] < 0) return ol_infer_error(ctx, "split size %zu is negative", o);
      fits = fits && ol_i64_add(total, sizes[o], &total);
    }
    if (fits && d.is_value && total != d.value)
      return ol_infer_error(ctx, "split sizes add up to %lld, axis %d has extent %lld", (long long)total, axis,
                            (long long)d.value);
  }
  for (size_t o = 0; o < n; o++) {
    ol_dim dims[OL_MAX_RANK];
    for (int i = 0; i < x->rank; i++) dims[i] = x->dims[i];
    dims[axis] = known ? ol_dim_of(sizes[o]) : (n == 1 ? d : ol_dim_unknown());
    ol_infer_set_tensor(&ctx->outputs[o], x->dtype, x->rank, dims);
  }
  return OL_OK;
}

ol_status ol_infer_tile(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, x->rank, x->dims);
  if (x->rank < 0) return OL_OK;
  int64_t repeats[OL_MAX_RANK];
  int count;
  bool known = ol_infer_ints(ctx, 1, repeats, &count, OL_MAX_RANK);
  if (known && count != x->rank)
    return ol_infer_error(ctx, "'repeats' has %d entries for an input of rank %d", count, x->rank);
  for (int i = 0; i < x->rank; i++) {
    if (!known) out->dims[i] = ol_dim_unknown();
    else if (repeats[i] < 0) return ol_infer_error(ctx, "repeat %d is negative", i);
    else if (x->dims[i].is_value) {
      int64_t extent;
      out->dims[i] = ol_i64_mul(x->dims[i].value, repeats[i], &extent) ? ol_dim_of(extent) : ol_dim_unknown();
    }
    else if (repeats[i] != 1) out->dims[i] = ol_dim_unknown();
  }
  return OL_OK;
}

ol_status ol_infer_pad(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  if (x->rank < 0) return OL_OK;
  ol_infer_set_tensor(out, x->dtype, x->rank, x->dims);
  int64_t pads[2 * OL_MAX_RANK], axes[OL_MAX_RANK];
  int count = 0, n_axes = 0;
  bool absent;
  bool known = ints_of(ctx, 11, 1, "pads", pads, &count, 2 * OL_MAX_RANK, &absent);
  bool axes_given = ctx->node->opset >= 18 && ol_node_has_input(ctx->node, 3);
  bool axes_known = axes_given && ol_infer_ints(ctx, 3, axes, &n_axes, OL_MAX_RANK);
  if (!axes_given) {
    n_axes = x->rank;
    for (int i = 0; i < n_axes; i++) axes[i] = i;
    axes_known = true;
  }
  if (!known || !axes_known) {
    for (int i = 0; i < x->rank; i++) out->dims[i] = ol_dim_unknown();
    return OL_OK;
  }
  if (count != 2 * n_axes)
    return ol_infer_error(ctx, "'pads' has %d entries for %d axes", count, n_axes);
  for (int i = 0; i < n_axes; i++) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, axes[i], x->rank, &axis));
    int64_t extra, extent;
    if (!ol_i64_add(pads[i], pads[i + n_axes], &extra)) out->dims[axis] = ol_dim_unknown();
    else if (x->dims[axis].is_value)
      out->dims[axis] = ol_i64_add(x->dims[axis].value, extra, &extent) ? ol_dim_of(extent) : ol_dim_unknown();
    else if (extra != 0) out->dims[axis] = ol_dim_unknown();
  }
  return OL_OK;
}

/* CenterCropPad: the listed axes (default all) take the values of the
 * constant `shape` input; the others keep the input's extent. */
ol_status ol_infer_center_crop_pad(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, x->rank, x->rank >= 0 ? x->dims : NULL);
  if (x->rank < 0) return OL_OK;
  const int64_t *attr_axes = NULL;
  int64_t n_axes = ol_attr_ints(ctx->node, "axes", &attr_axes);
  if (n_axes < 0) n_axes = x->rank;
  int64_t shape[OL_MAX_RANK];
  int count = 0;
  bool known = n_axes <= OL_MAX_RANK && ol_infer_ints(ctx, 1, shape, &count, OL_MAX_RANK);
  if (known && count != n_axes) return ol_infer_error(ctx, "'shape' has %d values for %lld axes", count, (long long)n_axes);
  for (int64_t i = 0; i < n_axes && i < OL_MAX_RANK; i++) {
    int axis = (int)i;
    if (attr_axes) OL_TRY(ol_infer_axis(ctx, attr_axes[i], x->rank, &axis));
    out->dims[axis] = known && shape[i] >= 0 ? ol_dim_of(shape[i]) : ol_dim_unknown();
  }
  return OL_OK;
}

/* ------------------------------------------------------------ indexing */

ol_status ol_infer_topk(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  int rank = x->rank;
  for (int i = 0; i < rank; i++) dims[i] = x->dims[i];
  if (rank >= 0) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, ol_attr_int(ctx->node, "axis", -1), rank, &axis));
    int64_t k;
    int count;
    if (ctx->node->opset < 10) dims[axis] = ol_dim_of(ol_attr_int(ctx->node, "k", 1));
    else if (ol_infer_ints(ctx, 1, &k, &count, 1) && count == 1) dims[axis] = ol_dim_of(k);
    else dims[axis] = ol_dim_unknown();
  }
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], x->dtype, rank, dims);
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], OL_DTYPE_INT64, rank, dims);
  return OL_OK;
}

ol_status ol_infer_gather_elements(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *idx = ol_infer_input(ctx, 1);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_set_tensor(&ctx->outputs[0], x->dtype, idx ? idx->rank : -1, idx ? idx->dims : NULL);
  return OL_OK;
}

ol_status ol_infer_gather_nd(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *idx = ol_infer_input(ctx, 1);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  if (!idx || x->rank < 0 || idx->rank < 1 || !idx->dims[idx->rank - 1].is_value) return OL_OK;
  int64_t last = idx->dims[idx->rank - 1].value, batch = ol_attr_int(ctx->node, "batch_dims", 0);
  if (batch < 0 || batch + last > x->rank)
    return ol_infer_error(ctx, "indices address %lld dims after %lld batch dims of a rank-%d input", (long long)last,
                          (long long)batch, x->rank);
  int rank = idx->rank - 1 + x->rank - (int)(batch + last);
  if (rank > OL_MAX_RANK) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  int k = 0;
  for (int i = 0; i < idx->rank - 1; i++) dims[k++] = idx->dims[i];
  for (int i = (int)(batch + last); i < x->rank; i++) dims[k++] = x->dims[i];
  ol_infer_set_tensor(out, x->dtype, rank, dims);
  return OL_OK;
}

ol_status ol_infer_one_hot(ol_infer_ctx *ctx) {
  const ol_infer_type *idx = ol_infer_input(ctx, 0), *values = ol_infer_input(ctx, 2);
  if (!values || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, values->dtype, -1, NULL);
  if (!idx || idx->rank < 0 || idx->rank + 1 > OL_MAX_RANK) return OL_OK;
  int rank = idx->rank + 1, axis;
  OL_TRY(ol_infer_axis(ctx, ol_attr_int(ctx->node, "axis", -1), rank, &axis));
  int64_t depth;
  int count;
  ol_dim d = ol_infer_ints(ctx, 1, &depth, &count, 1) && count == 1 ? ol_dim_of(depth) : ol_dim_unknown();
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0, k = 0; i < rank; i++) dims[i] = i == axis ? d : idx->dims[k++];
  ol_infer_set_tensor(out, values->dtype, rank, dims);
  return OL_OK;
}

ol_status ol_infer_eye_like(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = (ol_dtype)ol_attr_int(ctx->node, "dtype", x->dtype);
  if (!ol_dtype_valid(dtype)) return ol_infer_error(ctx, "attribute 'dtype' is not an element type");
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x->rank, x->dims);
  return OL_OK;
}

ol_status ol_infer_non_zero(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_dim dims[2] = {x->rank >= 0 ? ol_dim_of(x->rank) : ol_dim_unknown(), ol_dim_unknown()};
  ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_INT64, 2, dims);
  return OL_OK;
}

#define LIKE(name) {"", name, ol_infer_like_input0}

ol_status ol_infer_depth_space(ol_infer_ctx *ctx) {
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

ol_status ol_infer_unique(ol_infer_ctx *ctx) {
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

ol_status ol_infer_compress(ol_infer_ctx *ctx) {
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
