/* Shape functions of shape and tensor-manipulation operators: Identity,
 * Dropout, Constant, ConstantOfShape, Shape, Size, Reshape, Flatten,
 * Unsqueeze, Squeeze, Concat, Gather, Transpose, Expand, Range. Integer data
 * is propagated through Identity, Constant, Shape, Gather, Unsqueeze,
 * Squeeze, Concat and Reshape (the Shape -> Gather -> Unsqueeze -> Concat ->
 * Reshape chains of exported models). */
#include <string.h>

#include "ops/tensor/tensor.h"

static void copy_data(const ol_infer_type *from, ol_infer_type *to) {
  if (from->data_count < 0) return;
  to->data_count = from->data_count;
  memcpy(to->data, from->data, sizeof from->data);
}

/* Ints of an attribute or (opset >= since) of input `input`: the axes of
 * Unsqueeze/Squeeze/reductions. Returns false when unknown; *present false
 * when absent. */
static bool axes_of(const ol_infer_ctx *ctx, int since, size_t input, int64_t *axes, int *count, bool *present) {
  *present = true;
  if (ctx->node->opset < since) {
    const int64_t *values;
    int64_t n = ol_attr_ints(ctx->node, "axes", &values);
    if (n < 0) {
      *present = false;
      *count = 0;
      return true;
    }
    if (n > OL_MAX_RANK) return false;
    memcpy(axes, values, (size_t)n * sizeof *axes);
    *count = (int)n;
    return true;
  }
  if (!ol_node_has_input(ctx->node, input)) {
    *present = false;
    *count = 0;
    return true;
  }
  return ol_infer_ints(ctx, input, axes, count, OL_MAX_RANK);
}

/* ------------------------------------------------------------ constants and shapes */

ol_status ol_infer_constant(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  const ol_node *n = ctx->node;
  const ol_attr *a;
  ol_dtype dtype;
  int rank;
  int64_t dims[OL_MAX_RANK];
  if ((a = ol_node_attr(n, "value")) && a->tensor) ol_infer_from_tensor(&a->tensor->tensor, out);
  else if (ol_attr_tensor_declared(n, "value", &dtype, &rank, dims)) { /* unread: type and dims, no values */
    ol_dim d[OL_MAX_RANK];
    for (int i = 0; i < rank; i++) d[i] = ol_dim_of(dims[i]);
    ol_infer_set_tensor(out, dtype, rank, d);
  } else if ((a = ol_node_attr(n, "value_int"))) {
    ol_infer_set_tensor(out, OL_DTYPE_INT64, 0, NULL);
    out->data[0] = ol_dim_of(a->i);
    out->data_count = 1;
  } else if ((a = ol_node_attr(n, "value_ints"))) {
    ol_dim d = ol_dim_of((int64_t)a->count);
    ol_infer_set_tensor(out, OL_DTYPE_INT64, 1, &d);
    if (a->count <= OL_INFER_MAX_DATA) {
      for (size_t i = 0; i < a->count; i++) out->data[i] = ol_dim_of(a->ints[i]);
      out->data_count = (int)a->count;
    }
  } else if ((a = ol_node_attr(n, "value_float"))) ol_infer_set_tensor(out, OL_DTYPE_FLOAT, 0, NULL);
  else if ((a = ol_node_attr(n, "value_floats"))) {
    ol_dim d = ol_dim_of((int64_t)a->count);
    ol_infer_set_tensor(out, OL_DTYPE_FLOAT, 1, &d);
  } else if ((a = ol_node_attr(n, "value_string"))) ol_infer_set_tensor(out, OL_DTYPE_STRING, 0, NULL);
  else if ((a = ol_node_attr(n, "value_strings"))) {
    ol_dim d = ol_dim_of((int64_t)a->count);
    ol_infer_set_tensor(out, OL_DTYPE_STRING, 1, &d);
  }
  return OL_OK;
}

/* The dims a shape tensor (input `input`) lists, each concrete, symbolic or
 * unknown; false when its length is unknown. */
static bool shape_of(const ol_infer_ctx *ctx, size_t input, ol_dim *dims, int *rank) {
  const ol_infer_type *s = ol_infer_input(ctx, input);
  if (!s) return false;
  if (s->data_count >= 0 && s->data_count <= OL_MAX_RANK) {
    for (int i = 0; i < s->data_count; i++) dims[i] = s->data[i];
    *rank = s->data_count;
    return true;
  }
  if (s->rank == 1 && s->dims[0].is_value && s->dims[0].value <= OL_MAX_RANK) {
    *rank = (int)s->dims[0].value;
    for (int i = 0; i < *rank; i++) dims[i] = ol_dim_unknown();
    return true;
  }
  return false;
}

ol_status ol_infer_constant_of_shape(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_value *value = ol_attr_tensor(ctx->node, "value");
  ol_dtype dtype;
  int value_rank;
  int64_t value_dims[OL_MAX_RANK]; /* declared or unread value: only its type is needed */
  if (!ol_attr_tensor_declared(ctx->node, "value", &dtype, &value_rank, value_dims)) dtype = OL_DTYPE_FLOAT;
  ol_dim dims[OL_MAX_RANK];
  int rank;
  ol_infer_type *out = &ctx->outputs[0];
  if (!shape_of(ctx, 0, dims, &rank)) {
    ol_infer_set_tensor(out, dtype, -1, NULL);
    return OL_OK;
  }
  ol_infer_set_tensor(out, dtype, rank, dims);
  ol_infer_type fill;
  if (value && rank <= 1 && (rank == 0 || dims[0].is_value)) {
    ol_infer_from_tensor(&value->tensor, &fill);
    int64_t n = rank == 0 ? 1 : dims[0].value;
    if (fill.data_count == 1 && n <= OL_INFER_MAX_DATA) {
      for (int64_t i = 0; i < n; i++) out->data[i] = fill.data[0];
      out->data_count = (int)n;
    }
  }
  return OL_OK;
}

ol_status ol_infer_shape(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  const ol_infer_type *x = ol_infer_shaped(ctx, 0);
  if (!x) {
    ol_dim d = ol_dim_unknown();
    ol_infer_set_tensor(out, OL_DTYPE_INT64, 1, &d);
    return OL_OK;
  }
  int64_t start = ctx->node->opset >= 15 ? ol_attr_int(ctx->node, "start", 0) : 0;
  int64_t end = ctx->node->opset >= 15 ? ol_attr_int(ctx->node, "end", x->rank) : x->rank;
  if (start < 0) start += x->rank;
  if (end < 0) end += x->rank;
  if (start < 0) start = 0;
  if (end > x->rank) end = x->rank;
  int64_t n = end > start ? end - start : 0;
  ol_dim d = ol_dim_of(n);
  ol_infer_set_tensor(out, OL_DTYPE_INT64, 1, &d);
  for (int64_t i = 0; i < n; i++) out->data[i] = x->dims[start + i];
  out->data_count = (int)n;
  return OL_OK;
}

ol_status ol_infer_size(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_INT64, 0, NULL);
  const ol_infer_type *x = ol_infer_shaped(ctx, 0);
  int64_t count = 1;
  for (int i = 0; x && i < x->rank; i++) {
    if (!x->dims[i].is_value) return OL_OK;
    if (!ol_i64_mul(count, x->dims[i].value, &count)) return OL_OK;
  }
  if (x) {
    ctx->outputs[0].data[0] = ol_dim_of(count);
    ctx->outputs[0].data_count = 1;
  }
  return OL_OK;
}

/* ------------------------------------------------------------ reshaping */

/* Product of dims: concrete part *product, symbolic names in names[]
 * (count *n); false when some dim is unknown. */
static bool factor(const ol_dim *dims, int rank, int skip, int64_t *product, const char **names, int *n) {
  *product = 1;
  *n = 0;
  for (int i = 0; i < rank; i++) {
    if (i == skip) continue;
    if (dims[i].is_value) {
      if (!ol_i64_mul(*product, dims[i].value, product)) return false;
    }
    else if (dims[i].param) names[(*n)++] = dims[i].param;
    else return false;
  }
  return true;
}

ol_status ol_infer_reshape(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_dim dims[OL_MAX_RANK];
  int rank;
  if (!shape_of(ctx, 1, dims, &rank)) {
    ol_infer_set_tensor(out, x->dtype, -1, NULL);
    return OL_OK;
  }
  bool allowzero = ctx->node->opset >= 14 && ol_attr_int(ctx->node, "allowzero", 0) != 0;
  int infer_at = -1;
  for (int i = 0; i < rank; i++) {
    if (!dims[i].is_value) continue;
    if (dims[i].value == 0 && !allowzero) {
      if (x->rank >= 0 && i >= x->rank)
        return ol_infer_error(ctx, "shape entry %d is 0 (copy) but the input has rank %d", i, x->rank);
      dims[i] = x->rank >= 0 ? x->dims[i] : ol_dim_unknown();
    } else if (dims[i].value == -1) {
      if (infer_at >= 0) return ol_infer_error(ctx, "the shape has more than one -1 entry");
      infer_at = i;
    } else if (dims[i].value < -1) {
      return ol_infer_error(ctx, "shape entry %d is %lld", i, (long long)dims[i].value);
    }
  }
  if (infer_at >= 0) dims[infer_at] = ol_dim_unknown();
  const char *in_names[OL_MAX_RANK], *out_names[OL_MAX_RANK];
  int64_t in_product, out_product;
  int n_in, n_out;
  bool known = x->rank >= 0 && factor(x->dims, x->rank, -1, &in_product, in_names, &n_in) &&
               factor(dims, rank, infer_at, &out_product, out_names, &n_out);
  if (known) {
    /* cancel the names both sides share */
    for (int i = 0; i < n_out; i++)
      for (int k = 0; k < n_in; k++)
        if (in_names[k] && strcmp(in_names[k], out_names[i]) == 0) {
          in_names[k] = NULL;
          out_names[i] = NULL;
          break;
        }
    int left_in = 0, left_out = 0;
    const char *last_in = NULL;
    for (int k = 0; k < n_in; k++)
      if (in_names[k]) left_in++, last_in = in_names[k];
    for (int i = 0; i < n_out; i++) left_out += out_names[i] != NULL;
    if (left_in == 0 && left_out == 0) {
      if (infer_at >= 0 && out_product == 0) {
        /* -1 next to a zero extent is undetermined: leave it unknown */
      } else if (infer_at >= 0) {
        if (in_product % out_product != 0)
          return ol_infer_error(ctx, "cannot reshape %lld elements with -1 and the other dims multiplying to %lld",
                                (long long)in_product, (long long)out_product);
        dims[infer_at] = ol_dim_of(in_product / out_product);
      } else if (in_product != out_product) {
        return ol_infer_error(ctx, "cannot reshape %lld elements into %lld", (long long)in_product,
                              (long long)out_product);
      }
    } else if (infer_at >= 0 && left_in == 1 && left_out == 0 && in_product == out_product) {
      dims[infer_at].param = last_in;
    }
  }
  ol_infer_set_tensor(out, x->dtype, rank, dims);
  if (rank <= 1) copy_data(x, out);
  return OL_OK;
}

ol_status ol_infer_flatten(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  if (x->rank < 0) {
    ol_dim d[2] = {ol_dim_unknown(), ol_dim_unknown()};
    ol_infer_set_tensor(out, x->dtype, 2, d);
    return OL_OK;
  }
  int64_t axis = ol_attr_int(ctx->node, "axis", 1);
  if (axis < -x->rank || axis > x->rank)
    return ol_infer_error(ctx, "axis %lld is out of range for rank %d", (long long)axis, x->rank);
  if (axis < 0) axis += x->rank;
  ol_dim d[2];
  for (int part = 0; part < 2; part++) {
    int from = part ? (int)axis : 0, to = part ? x->rank : (int)axis;
    const char *names[OL_MAX_RANK];
    int64_t product;
    int n;
    if (!factor(x->dims + from, to - from, -1, &product, names, &n) || n > 1 || (n == 1 && product != 1))
      d[part] = ol_dim_unknown();
    else
      d[part] = n == 1 ? x->dims[from + 0] : ol_dim_of(product);
    if (n == 1 && product == 1)
      for (int i = from; i < to; i++)
        if (!x->dims[i].is_value) d[part] = x->dims[i];
  }
  ol_infer_set_tensor(out, x->dtype, 2, d);
  return OL_OK;
}

ol_status ol_infer_unsqueeze(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  int64_t axes[OL_MAX_RANK];
  int count;
  bool present;
  if (x->rank < 0 || !axes_of(ctx, 13, 1, axes, &count, &present)) {
    ol_infer_set_tensor(out, x->dtype, -1, NULL);
    return OL_OK;
  }
  if (!present) return ol_infer_error(ctx, "the axes are missing");
  int rank = x->rank + count;
  if (rank > OL_MAX_RANK) return ol_infer_error(ctx, "the result rank %d exceeds %d", rank, OL_MAX_RANK);
  bool inserted[OL_MAX_RANK] = {false};
  for (int i = 0; i < count; i++) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, axes[i], rank, &axis));
    if (inserted[axis]) return ol_infer_error(ctx, "axis %lld is repeated", (long long)axes[i]);
    inserted[axis] = true;
  }
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0, k = 0; i < rank; i++) dims[i] = inserted[i] ? ol_dim_of(1) : x->dims[k++];
  ol_infer_set_tensor(out, x->dtype, rank, dims);
  if (rank <= 1) copy_data(x, out);
  return OL_OK;
}

ol_status ol_infer_squeeze(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  int64_t axes[OL_MAX_RANK];
  int count;
  bool present;
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  if (x->rank < 0 || !axes_of(ctx, 13, 1, axes, &count, &present)) return OL_OK;
  bool removed[OL_MAX_RANK] = {false};
  if (!present) {
    for (int i = 0; i < x->rank; i++) {
      if (!x->dims[i].is_value) return OL_OK; /* might be 1 */
      removed[i] = x->dims[i].value == 1;
    }
  }
  for (int i = 0; i < count; i++) {
    int axis;
    OL_TRY(ol_infer_axis(ctx, axes[i], x->rank, &axis));
    if (x->dims[axis].is_value && x->dims[axis].value != 1)
      return ol_infer_error(ctx, "cannot squeeze axis %d of extent %lld", axis, (long long)x->dims[axis].value);
    removed[axis] = true;
  }
  ol_dim dims[OL_MAX_RANK];
  int rank = 0;
  for (int i = 0; i < x->rank; i++)
    if (!removed[i]) dims[rank++] = x->dims[i];
  ol_infer_set_tensor(out, x->dtype, rank, dims);
  if (rank <= 1) copy_data(x, out);
  return OL_OK;
}

/* ------------------------------------------------------------ joining and indexing */

ol_status ol_infer_concat(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = OL_DTYPE_UNDEFINED;
  int rank = -1;
  for (size_t i = 0; i < ctx->num_inputs; i++) {
    const ol_infer_type *t = ol_infer_input(ctx, i);
    if (!t) continue;
    if (dtype == OL_DTYPE_UNDEFINED) dtype = t->dtype;
    if (t->rank >= 0) {
      if (rank >= 0 && t->rank != rank)
        return ol_infer_error(ctx, "input %zu has rank %d, an earlier input rank %d", i, t->rank, rank);
      rank = t->rank;
    }
  }
  if (dtype == OL_DTYPE_UNDEFINED) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, dtype, -1, NULL);
  if (rank < 0) return OL_OK;
  int axis;
  OL_TRY(ol_infer_axis(ctx, ol_attr_int(ctx->node, "axis", 0), rank, &axis));
  ol_dim dims[OL_MAX_RANK];
  for (int d = 0; d < rank; d++) dims[d] = ol_dim_unknown();
  bool sum_known = true, all_data = true;
  int64_t sum = 0;
  int data_count = 0;
  ol_dim data[OL_INFER_MAX_DATA];
  for (size_t i = 0; i < ctx->num_inputs; i++) {
    const ol_infer_type *t = ol_infer_shaped(ctx, i);
    if (!t) {
      sum_known = all_data = false;
      continue;
    }
    for (int d = 0; d < rank; d++) {
      if (d == axis) continue;
      if (t->dims[d].is_value && dims[d].is_value && t->dims[d].value != dims[d].value)
        return ol_infer_error(ctx, "input %zu has extent %lld on axis %d where an earlier input has %lld", i,
                              (long long)t->dims[d].value, d, (long long)dims[d].value);
      if (t->dims[d].is_value || (!dims[d].is_value && !dims[d].param)) dims[d] = t->dims[d];
    }
    if (!t->dims[axis].is_value || !ol_i64_add(sum, t->dims[axis].value, &sum)) sum_known = false;
    if (t->data_count < 0 || data_count + t->data_count > OL_INFER_MAX_DATA) {
      all_data = false;
    } else {
      memcpy(data + data_count, t->data, (size_t)t->data_count * sizeof *t->data);
      data_count += t->data_count;
    }
  }
  if (sum_known) dims[axis] = ol_dim_of(sum);
  else if (ctx->num_inputs == 1 && ol_infer_shaped(ctx, 0)) dims[axis] = ol_infer_shaped(ctx, 0)->dims[axis];
  else dims[axis] = ol_dim_unknown();
  ol_infer_set_tensor(out, dtype, rank, dims);
  if (all_data && rank == 1) {
    memcpy(out->data, data, (size_t)data_count * sizeof *data);
    out->data_count = data_count;
  }
  return OL_OK;
}

ol_status ol_infer_gather(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *idx = ol_infer_input(ctx, 1);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  if (x->rank < 0 || !idx || idx->rank < 0) return OL_OK;
  if (x->rank == 0) return ol_infer_error(ctx, "input 'data' must have rank >= 1");
  int axis;
  OL_TRY(ol_infer_axis(ctx, ol_attr_int(ctx->node, "axis", 0), x->rank, &axis));
  int rank = x->rank + idx->rank - 1;
  if (rank > OL_MAX_RANK) return ol_infer_error(ctx, "the result rank %d exceeds %d", rank, OL_MAX_RANK);
  ol_dim dims[OL_MAX_RANK];
  int k = 0;
  for (int i = 0; i < axis; i++) dims[k++] = x->dims[i];
  for (int i = 0; i < idx->rank; i++) dims[k++] = idx->dims[i];
  for (int i = axis + 1; i < x->rank; i++) dims[k++] = x->dims[i];
  ol_infer_set_tensor(out, x->dtype, rank, dims);
  int64_t indices[OL_INFER_MAX_DATA];
  int count;
  if (x->rank == 1 && x->data_count >= 0 && idx->rank <= 1 &&
      ol_infer_ints(ctx, 1, indices, &count, OL_INFER_MAX_DATA)) {
    for (int i = 0; i < count; i++) {
      int64_t at = indices[i] < 0 ? indices[i] + x->data_count : indices[i];
      if (at < 0 || at >= x->data_count)
        return ol_infer_error(ctx, "index %lld is out of range for %d elements", (long long)indices[i],
                              x->data_count);
      out->data[i] = x->data[at];
    }
    out->data_count = count;
  }
  return OL_OK;
}

ol_status ol_infer_transpose(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  if (x->rank < 0) return OL_OK;
  const int64_t *perm;
  int64_t n = ol_attr_ints(ctx->node, "perm", &perm);
  if (n >= 0 && n != x->rank)
    return ol_infer_error(ctx, "attribute 'perm' has %lld entries for an input of rank %d", (long long)n, x->rank);
  ol_dim dims[OL_MAX_RANK];
  bool used[OL_MAX_RANK] = {false};
  for (int i = 0; i < x->rank; i++) {
    int64_t p = n >= 0 ? perm[i] : x->rank - 1 - i;
    if (p < 0 || p >= x->rank || used[p])
      return ol_infer_error(ctx, "attribute 'perm' is not a permutation of 0..%d", x->rank - 1);
    used[p] = true;
    dims[i] = x->dims[p];
  }
  ol_infer_set_tensor(out, x->dtype, x->rank, dims);
  return OL_OK;
}

ol_status ol_infer_expand(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x->dtype, -1, NULL);
  ol_dim shape[OL_MAX_RANK];
  int n;
  if (x->rank < 0 || !shape_of(ctx, 1, shape, &n)) return OL_OK;
  for (int i = 0; i < n; i++)
    if (shape[i].is_value && shape[i].value < 0)
      return ol_infer_error(ctx, "shape entry %d is %lld", i, (long long)shape[i].value);
  /* an unknown shape entry may be 1 (keep x's dim) or x's extent: unknown */
  return ol_infer_broadcast(ctx, x->rank, x->dims, n, shape, &out->rank, out->dims);
}

ol_status ol_infer_range(ol_infer_ctx *ctx) {
  const ol_infer_type *start = ol_infer_input(ctx, 0);
  if (!start || ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_dim d = ol_dim_unknown();
  int64_t v[3], one;
  int count;
  bool concrete = true;
  for (size_t i = 0; i < 3 && concrete; i++) {
    concrete = ol_infer_ints(ctx, i, &one, &count, 1) && count == 1;
    v[i] = one;
  }
  int64_t span;
  if (concrete && v[2] != 0 && v[2] != INT64_MIN && ol_i64_sub(v[1], v[0], &span)) {
    int64_t n = span / v[2] + (span % v[2] != 0 && (span > 0) == (v[2] > 0));
    d = ol_dim_of(n > 0 ? n : 0);
  }
  ol_infer_set_tensor(out, start->dtype, 1, &d);
  if (d.is_value && d.value <= OL_INFER_MAX_DATA) {
    for (int64_t i = 0; i < d.value; i++) out->data[i] = ol_dim_of(v[0] + i * v[2]); /* within [start, limit) */
    out->data_count = (int)d.value;
  }
  return OL_OK;
}

/* Identity forwards everything (tensors, encoded values, sequences). */
ol_status ol_infer_identity(ol_infer_ctx *ctx) {
  if (ctx->num_inputs < 1 || !ctx->inputs[0] || ctx->num_outputs < 1) return OL_OK;
  ctx->outputs[0] = *ctx->inputs[0];
  return OL_OK;
}

/* Dropout: output 0 like the input, the optional mask BOOL of its shape. */
ol_status ol_infer_dropout(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], x->dtype, x->rank, x->dims);
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], OL_DTYPE_BOOL, x->rank, x->dims);
  return OL_OK;
}
