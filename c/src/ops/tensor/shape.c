/* Shape and tensor-construction operators (ai.onnx), and the family's
 * registration table.
 *
 *   Shape 1-23 (start/end from 15)      Size 1-23
 *   Reshape 1-23 (shape attribute < 5, allowzero from 14)
 *   Flatten 1-23                        Squeeze / Unsqueeze 1-23 (axes input from 13)
 *   Identity 1-23 (sequences 14+, optionals 16+)
 *   ConstantOfShape 9-23                Constant 1-23 (value_* forms 12+; sparse: not implemented)
 *   Dropout 1-23 (inference only; training_mode with ratio > 0: not implemented)
 * and, in shape_gen.c: Range 11-23, EyeLike 9-23, Trilu 14-23, OneHot 9-23,
 * NonZero 9-23.
 *
 * Reshape, Flatten, Squeeze, Unsqueeze, Identity and Dropout return zero-copy
 * views of their input; Constant returns a view of its attribute tensor.
 * Element movement is dtype-agnostic: bytes by element size, sub-byte types
 * element by element, strings duplicated. (Expand lives in tensor.c next to
 * the strided-copy engine it uses.) */
#include <stdlib.h>
#include <string.h>

#include "ops/tensor/tensor.h"

/* Create functions defined in shape_gen.c. */

/* ------------------------------------------------------------ helpers */

static ol_status read_ints(const ol_node *node, const ol_tensor *t, const char *what,
                           int64_t *values, size_t cap, size_t *count) {
  ol_status s = ol_tensor_to_int64s(t, values, cap, count);
  if (s != OL_OK)
    return ol_error_wrap(s, "%s node '%s': input '%s'", node->op_type, node->name, what);
  return OL_OK;
}

static ol_status view_input(ol_kernel_ctx *ctx, const ol_tensor *x) {
  return ol_ctx_output_view(ctx, 0, x, x->rank, x->dims);
}

/* ------------------------------------------------------------ Shape / Size */

typedef struct shape_kernel {
  ol_kernel base;
  int64_t start, end;
  bool has_end;
} shape_kernel;

static ol_status shape_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  shape_kernel *k = (shape_kernel *)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t r = x->rank;
  int64_t start = k->start < 0 ? k->start + r : k->start;
  int64_t end = k->has_end ? (k->end < 0 ? k->end + r : k->end) : r;
  start = start < 0 ? 0 : start > r ? r : start;
  end = end < 0 ? 0 : end > r ? r : end;
  int64_t n = end > start ? end - start : 0;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_INT64, 1, &n, &y));
  if (n) memcpy(ol_tdata(y), x->dims + start, sizeof(int64_t) * (size_t)n);
  return OL_OK;
}

static ol_status shape_create(const ol_node *node, ol_kernel **out) {
  shape_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, shape_compute, (ol_kernel **)&k));
  k->start = node->opset >= 15 ? ol_attr_int(node, "start", 0) : 0;
  k->has_end = node->opset >= 15 && ol_node_attr(node, "end") != NULL;
  k->end = k->has_end ? ol_attr_int(node, "end", 0) : 0;
  *out = &k->base;
  return OL_OK;
}

static ol_status size_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_INT64, 0, NULL, &y));
  *(int64_t *)ol_tdata(y) = ol_tcount(x);
  return OL_OK;
}

static ol_status size_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, size_compute, out);
}

/* ------------------------------------------------------------ Reshape */

typedef struct reshape_kernel {
  ol_kernel base;
  bool allowzero;
  int64_t attr_count; /* opset < 5: shape attribute */
  const int64_t *attr_shape;
} reshape_kernel;

static ol_status reshape_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  reshape_kernel *k = (reshape_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t shape[OL_MAX_RANK];
  size_t n;
  if (node->opset < 5) {
    if (k->attr_count > OL_MAX_RANK)
      return ol_kernel_error(node, OL_INVALID_MODEL, "shape has %lld dimensions (max %d)",
                             (long long)k->attr_count, OL_MAX_RANK);
    n = (size_t)k->attr_count;
    if (n) memcpy(shape, k->attr_shape, n * sizeof(int64_t));
  } else {
    const ol_tensor *s;
    OL_TRY(ol_ctx_require(ctx, 1, &s));
    OL_TRY(read_ints(node, s, "shape", shape, OL_MAX_RANK, &n));
  }
  int infer = -1;
  int64_t known = 1;
  bool has_zero = false;
  for (size_t i = 0; i < n; i++) {
    if (shape[i] == -1) {
      if (infer >= 0)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "shape has more than one -1 (dimensions %d and %zu)", infer, i);
      infer = (int)i;
      continue;
    }
    if (shape[i] < -1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "shape dimension %zu is %lld", i,
                             (long long)shape[i]);
    if (shape[i] == 0) {
      has_zero = true;
      if (!k->allowzero) {
        if ((int)i >= x->rank)
          return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                                 "shape dimension %zu is 0 (copy) but the input has rank %d", i,
                                 x->rank);
        shape[i] = x->dims[i];
      }
    }
    if (!ol_i64_mul(known, shape[i], &known))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "shape dimensions overflow at dimension %zu (%lld)", i,
                             (long long)shape[i]);
  }
  if (k->allowzero && has_zero && infer >= 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "allowzero=1 forbids combining a 0 and a -1 in the shape");
  int64_t total = ol_tcount(x);
  if (infer >= 0) {
    if (known == 0 || total % known != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "cannot infer dimension %d: %lld elements are not divisible by %lld",
                             infer, (long long)total, (long long)known);
    shape[infer] = total / known;
  } else if (known != total) {
    char buf[160];
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input %s has %lld elements, the requested shape has %lld",
                           ol_tensor_describe(x, buf, sizeof buf), (long long)total,
                           (long long)known);
  }
  return ol_ctx_output_view(ctx, 0, x, (int)n, shape);
}

static ol_status reshape_create(const ol_node *node, ol_kernel **out) {
  reshape_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, reshape_compute, (ol_kernel **)&k));
  k->allowzero = node->opset >= 14 && ol_attr_int(node, "allowzero", 0) != 0;
  if (node->opset < 5) {
    k->attr_count = ol_attr_ints(node, "shape", &k->attr_shape);
    if (k->attr_count < 0) {
      free(k);
      return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'shape' is required (opset %d)",
                             node->opset);
    }
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Flatten */

typedef struct axis_kernel {
  ol_kernel base;
  int64_t axis;
} axis_kernel;

static ol_status flatten_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  axis_kernel *k = (axis_kernel *)kernel;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t axis = k->axis < 0 ? k->axis + x->rank : k->axis;
  if (axis < 0 || axis > x->rank)
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT,
                           "axis %lld is out of range for rank %d (expected [%d, %d])",
                           (long long)k->axis, x->rank, -x->rank, x->rank);
  int64_t dims[2] = {ol_shape_count((int)axis, x->dims),
                     ol_shape_count(x->rank - (int)axis, x->dims + axis)};
  return ol_ctx_output_view(ctx, 0, x, 2, dims);
}

static ol_status flatten_create(const ol_node *node, ol_kernel **out) {
  axis_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, flatten_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", 1);
  if (node->opset < 11 && k->axis < 0) {
    free(k);
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "negative axis %lld needs opset 11 (model imports %d)",
                           (long long)ol_attr_int(node, "axis", 1), node->opset);
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Squeeze / Unsqueeze */

typedef struct axes_kernel {
  ol_kernel base;
  int64_t count; /* -1: absent */
  const int64_t *axes;
} axes_kernel;

/* Axes from the attribute (opset < 13) or input 1. *count = -1 when absent. */
static ol_status get_axes(const axes_kernel *k, ol_kernel_ctx *ctx, int64_t *axes,
                          int64_t *count) {
  if (ctx->node->opset < 13) {
    if (k->count > OL_MAX_RANK)
      return ol_kernel_error(ctx->node, OL_INVALID_MODEL, "too many axes (%lld)",
                             (long long)k->count);
    *count = k->count;
    if (k->count > 0) memcpy(axes, k->axes, sizeof(int64_t) * (size_t)k->count);
    return OL_OK;
  }
  const ol_tensor *a = ol_ctx_input(ctx, 1);
  if (!a) {
    *count = -1;
    return OL_OK;
  }
  size_t n;
  OL_TRY(read_ints(ctx->node, a, "axes", axes, OL_MAX_RANK, &n));
  *count = (int64_t)n;
  return OL_OK;
}

static ol_status squeeze_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t axes[OL_MAX_RANK];
  int64_t count;
  OL_TRY(get_axes((axes_kernel *)kernel, ctx, axes, &count));
  bool drop[OL_MAX_RANK] = {false};
  if (count <= 0) { /* absent or empty axes: every dimension of size 1 (as onnxruntime) */
    for (int i = 0; i < x->rank; i++) drop[i] = x->dims[i] == 1;
  } else {
    for (int64_t i = 0; i < count; i++) {
      int a;
      OL_TRY(ol_normalize_axis(node, axes[i], x->rank, &a));
      if (x->rank == 0)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot squeeze a scalar");
      if (x->dims[a] != 1)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "cannot squeeze axis %lld: its dimension is %lld, not 1",
                               (long long)axes[i], (long long)x->dims[a]);
      drop[a] = true;
    }
  }
  int64_t dims[OL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++)
    if (!drop[i]) dims[r++] = x->dims[i];
  return ol_ctx_output_view(ctx, 0, x, r, dims);
}

static ol_status unsqueeze_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t axes[OL_MAX_RANK];
  int64_t count;
  OL_TRY(get_axes((axes_kernel *)kernel, ctx, axes, &count));
  if (count < 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           node->opset < 13 ? "attribute 'axes' is required"
                                            : "input 1 (axes) is required");
  int out_rank = x->rank + (int)count;
  if (out_rank > OL_MAX_RANK)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank %d exceeds the maximum %d",
                           out_rank, OL_MAX_RANK);
  bool inserted[OL_MAX_RANK] = {false};
  for (int64_t i = 0; i < count; i++) {
    int a;
    OL_TRY(ol_normalize_axis(node, axes[i], out_rank, &a));
    if (inserted[a])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is repeated in 'axes'",
                             (long long)axes[i]);
    inserted[a] = true;
  }
  int64_t dims[OL_MAX_RANK];
  int pitch_axis = -1; /* where a pitched input's axis lands */
  for (int i = 0, j = 0; i < out_rank; i++) {
    if (!inserted[i] && j == x->pitch_axis) pitch_axis = i;
    dims[i] = inserted[i] ? 1 : x->dims[j++];
  }
  if (!ol_tensor_is_strided(x)) return ol_ctx_output_view(ctx, 0, x, out_rank, dims);
  /* size-1 axes change neither the rows before the pitched axis nor those
   * after it: the same storage as a pitched view of the new rank */
  ol_value *v = NULL;
  OL_TRY(ol_value_new_pitched_view(x->buffer, x->offset, x->dtype, out_rank, dims, pitch_axis, x->pitch, &v));
  return ol_ctx_set_output(ctx, 0, v);
}

static ol_status axes_create(const ol_node *node, ol_kernel_compute_fn fn, ol_kernel **out) {
  axes_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, fn, (ol_kernel **)&k));
  k->count = -1;
  if (node->opset < 13) k->count = ol_attr_ints(node, "axes", &k->axes);
  *out = &k->base;
  return OL_OK;
}

static ol_status squeeze_create(const ol_node *node, ol_kernel **out) {
  return axes_create(node, squeeze_compute, out);
}

static ol_status unsqueeze_create(const ol_node *node, ol_kernel **out) {
  if (node->opset < 13 && !ol_node_attr(node, "axes"))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'axes' is required (opset %d)",
                           node->opset);
  return axes_create(node, unsqueeze_compute, out);
}

/* ------------------------------------------------------------ Identity */

static ol_status identity_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  if (ctx->num_inputs < 1 || !ctx->inputs[0])
    return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "required input 0 is missing");
  /* the same value, not a new view of its buffer: a forwarded persistent
   * cache then keeps one owner, so its append capacity stays usable, and a
   * pitched cache keeps its layout */
  return ol_ctx_set_output(ctx, 0, ol_value_retain(ctx->inputs[0]));
}

static ol_status identity_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, identity_compute, out);
}

/* ------------------------------------------------------------ Constant */

typedef struct const_kernel {
  ol_kernel base;
  ol_value *value; /* owned reference */
} const_kernel;

static ol_status const_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const_kernel *k = (const_kernel *)kernel;
  return view_input(ctx, &k->value->tensor);
}

static void const_destroy(ol_kernel *kernel) {
  const_kernel *k = (const_kernel *)kernel;
  ol_value_release(k->value);
  free(k);
}

static ol_status const_build(const ol_node *node, ol_value **out) {
  static const char *const forms[] = {"value",      "value_float",  "value_floats",
                                      "value_int",  "value_ints",   "value_string",
                                      "value_strings", "sparse_value"};
  const ol_attr *found = NULL;
  int which = -1;
  for (int i = 0; i < 8; i++) {
    const ol_attr *a = ol_node_attr(node, forms[i]);
    if (!a) continue;
    if (found)
      return ol_kernel_error(node, OL_INVALID_MODEL,
                             "exactly one value attribute is allowed, got '%s' and '%s'",
                             found->name, a->name);
    found = a;
    which = i;
  }
  if (!found)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "one of the attributes value, value_float(s), value_int(s), "
                           "value_string(s) or sparse_value is required");
  int64_t n = (int64_t)found->count;
  ol_value *v = NULL;
  switch (which) {
    case 0:
      if (found->type != OL_ATTR_TENSOR || !found->tensor)
        return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'value' must be a tensor");
      *out = ol_value_retain(found->tensor);
      return OL_OK;
    case 1:
      if (found->type != OL_ATTR_FLOAT) break;
      OL_TRY(ol_value_new_tensor(NULL, OL_DTYPE_FLOAT, 0, NULL, &v));
      *(float *)ol_tdata(&v->tensor) = found->f;
      *out = v;
      return OL_OK;
    case 2:
      if (found->type != OL_ATTR_FLOATS) break;
      OL_TRY(ol_value_new_tensor(NULL, OL_DTYPE_FLOAT, 1, &n, &v));
      if (n) memcpy(ol_tdata(&v->tensor), found->floats, sizeof(float) * (size_t)n);
      *out = v;
      return OL_OK;
    case 3:
      if (found->type != OL_ATTR_INT) break;
      OL_TRY(ol_value_new_tensor(NULL, OL_DTYPE_INT64, 0, NULL, &v));
      *(int64_t *)ol_tdata(&v->tensor) = found->i;
      *out = v;
      return OL_OK;
    case 4:
      if (found->type != OL_ATTR_INTS) break;
      OL_TRY(ol_value_new_tensor(NULL, OL_DTYPE_INT64, 1, &n, &v));
      if (n) memcpy(ol_tdata(&v->tensor), found->ints, sizeof(int64_t) * (size_t)n);
      *out = v;
      return OL_OK;
    case 5: {
      if (found->type != OL_ATTR_STRING) break;
      OL_TRY(ol_value_new_tensor(NULL, OL_DTYPE_STRING, 0, NULL, &v));
      ol_status s = ol_tensor_set_string(v, 0, found->s ? found->s : "", found->s ? found->s_length : 0);
      if (s != OL_OK) {
        ol_value_release(v);
        return s;
      }
      *out = v;
      return OL_OK;
    }
    case 6:
      if (found->type != OL_ATTR_STRINGS) break;
      OL_TRY(ol_value_new_tensor(NULL, OL_DTYPE_STRING, 1, &n, &v));
      for (int64_t i = 0; i < n; i++) {
        const char *str = found->strings[i] ? found->strings[i] : "";
        ol_status s = ol_tensor_set_string(v, (size_t)i, str, strlen(str));
        if (s != OL_OK) {
          ol_value_release(v);
          return s;
        }
      }
      *out = v;
      return OL_OK;
    default:
      return ol_kernel_error(node, OL_NOT_IMPLEMENTED,
                             "sparse_value constants are not supported; store the tensor as "
                             "a dense 'value' attribute");
  }
  return ol_kernel_error(node, OL_INVALID_MODEL, "attribute '%s' has the wrong type (%d)",
                         found->name, (int)found->type);
}

static ol_status const_create(const ol_node *node, ol_kernel **out) {
  ol_value *v = NULL;
  OL_TRY(const_build(node, &v));
  if (v->kind != OL_VALUE_TENSOR) {
    ol_value_release(v);
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'value' is not a tensor");
  }
  const_kernel *k;
  ol_status s = ol_kernel_alloc(node, sizeof *k, const_compute, (ol_kernel **)&k);
  if (s != OL_OK) {
    ol_value_release(v);
    return s;
  }
  k->value = v;
  k->base.destroy = const_destroy;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ ConstantOfShape */

typedef struct cos_kernel {
  ol_kernel base;
  ol_value *value; /* owned; NULL: float32 zero */
} cos_kernel;

static ol_status cos_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  cos_kernel *k = (cos_kernel *)kernel;
  const ol_tensor *s;
  OL_TRY(ol_ctx_require(ctx, 0, &s));
  int64_t dims[OL_MAX_RANK];
  size_t n;
  OL_TRY(read_ints(ctx->node, s, "input", dims, OL_MAX_RANK, &n));
  for (size_t i = 0; i < n; i++)
    if (dims[i] < 0)
      return ol_kernel_error(ctx->node, OL_INVALID_ARGUMENT, "shape dimension %zu is negative (%lld)",
                             i, (long long)dims[i]);
  ol_dtype dt = k->value ? k->value->tensor.dtype : OL_DTYPE_FLOAT;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, dt, (int)n, dims, &y));
  if (!k->value) return OL_OK;
  return ol_elements_fill(dt, ol_tdata(y), ol_tcount(y), ol_tdata(&k->value->tensor), 0);
}

static void cos_destroy(ol_kernel *kernel) {
  cos_kernel *k = (cos_kernel *)kernel;
  ol_value_release(k->value);
  free(k);
}

static ol_status cos_create(const ol_node *node, ol_kernel **out) {
  ol_value *v = ol_attr_tensor(node, "value");
  if (ol_node_attr(node, "value") && !v)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'value' must be a tensor");
  if (v && (v->kind != OL_VALUE_TENSOR || ol_tcount(&v->tensor) != 1))
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'value' must be a one-element tensor, got %lld elements",
                           v->kind == OL_VALUE_TENSOR ? (long long)ol_tcount(&v->tensor) : -1LL);
  cos_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, cos_compute, (ol_kernel **)&k));
  k->value = ol_value_retain(v);
  k->base.destroy = cos_destroy;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Dropout */

static ol_status dropout_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (node->opset >= 12) {
    const ol_tensor *training = ol_ctx_input(ctx, 2);
    const ol_tensor *ratio = ol_ctx_input(ctx, 1);
    if (training && ol_tcount(training) > 0 && ol_tensor_get_double(training, 0) != 0.0) {
      double r = ratio && ol_tcount(ratio) > 0 ? ol_tensor_get_double(ratio, 0) : 0.5;
      if (r != 0.0)
        return ol_kernel_error(node, OL_NOT_IMPLEMENTED,
                               "training_mode=true with ratio %g is not supported (inference "
                               "runtime: random dropout is not implemented)",
                               r);
    }
  }
  OL_TRY(view_input(ctx, x));
  if (ol_ctx_wants_output(ctx, 1)) {
    ol_dtype mask_type = node->opset >= 10 ? OL_DTYPE_BOOL : x->dtype;
    ol_tensor *m;
    OL_TRY(ol_ctx_output(ctx, 1, mask_type, x->rank, x->dims, &m));
    int64_t n = ol_tcount(m);
    if (mask_type == OL_DTYPE_BOOL)
      memset(ol_tdata(m), 1, (size_t)n);
    else
      for (int64_t i = 0; i < n; i++) ol_tensor_set_double(m, i, 1.0);
  }
  return OL_OK;
}

static ol_status dropout_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, dropout_compute, out);
}

/* ------------------------------------------------------------ registry */

#define ALL "all tensor types"
const ol_op_schema ol_schema_shape[] = {
    /* Shape reads dims only; Unsqueeze and Identity keep a pitched cache a pitched view (repeat_kv) */
    {"", "Shape", 1, OL_OPSET_LATEST, shape_create, ol_infer_shape, ALL, .pitched_inputs = 1},
    {"", "Size", 1, OL_OPSET_LATEST, size_create, ol_infer_size, ALL},
    {"", "Reshape", 1, OL_OPSET_LATEST, reshape_create, ol_infer_reshape, ALL},
    {"", "Flatten", 1, OL_OPSET_LATEST, flatten_create, ol_infer_flatten, ALL},
    {"", "Squeeze", 1, OL_OPSET_LATEST, squeeze_create, ol_infer_squeeze, ALL},
    {"", "Unsqueeze", 1, OL_OPSET_LATEST, unsqueeze_create, ol_infer_unsqueeze, ALL, .pitched_inputs = 1},
    {"", "Identity", 1, OL_OPSET_LATEST, identity_create, ol_infer_identity, ALL " + sequences, optionals",
     .pitched_inputs = 1, .flags = OL_SCHEMA_FORWARDS, .structured_inputs = 1},
    {"", "Constant", 1, OL_OPSET_LATEST, const_create, ol_infer_constant, ALL},
    {"", "ConstantOfShape", 9, OL_OPSET_LATEST, cos_create, ol_infer_constant_of_shape, ALL},
    {"", "Range", 11, OL_OPSET_LATEST, ol_shape_range_create, ol_infer_range, "float32 float64 int16 int32 int64"},
    {"", "EyeLike", 9, OL_OPSET_LATEST, ol_shape_eyelike_create, ol_infer_eye_like,
     "float16 bfloat16 float32 float64 int8-64 uint8-64 bool"},
    {"", "Dropout", 1, OL_OPSET_LATEST, dropout_create, ol_infer_dropout, ALL " (inference)"},
    {"", "Trilu", 14, OL_OPSET_LATEST, ol_shape_trilu_create, ol_infer_like_input0, ALL},
    {"", "OneHot", 9, OL_OPSET_LATEST, ol_shape_onehot_create, ol_infer_one_hot, ALL " (values); numeric indices/depth"},
    {"", "NonZero", 9, OL_OPSET_LATEST, ol_shape_nonzero_create, ol_infer_non_zero, ALL},
    {0},
};
