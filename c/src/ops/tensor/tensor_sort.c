/* Ordering and scanning operators of the tensor family (registered in
 * tensor.c):
 *
 *   Unique 11-23     CumSum 11-23 (float16/bfloat16 from 14)
 *   TopK 1-23 (k attribute < 10, input 10+; largest/sorted 11+)
 *   ArgMax / ArgMin 1-23 (select_last_index 12+)
 *   Hardmax 1-23 (2-D coercion at axis < 13, per axis 13+)
 *
 * Comparisons use exact keys: doubles for floating and narrow integer types,
 * int64/uint64 for the 64-bit integers, bytes for strings. NaN orders above
 * every number. Ties keep the lower index first (TopK, Unique, ArgMax). */
#include <stdlib.h>
#include <string.h>

#include "ops/tensor/tensor.h"

/* ------------------------------------------------------------ keys */

typedef union key {
  double d;
  int64_t i;
  uint64_t u;
} key;

enum { KEY_DOUBLE, KEY_INT, KEY_UINT, KEY_STRING };

static int key_kind(ol_dtype dt) {
  if (dt == OL_DTYPE_INT64) return KEY_INT;
  if (dt == OL_DTYPE_UINT64) return KEY_UINT;
  if (dt == OL_DTYPE_STRING) return KEY_STRING;
  return KEY_DOUBLE;
}

static bool key_dtype_ok(ol_dtype dt) {
  if (dt == OL_DTYPE_STRING || dt == OL_DTYPE_INT64 || dt == OL_DTYPE_UINT64) return true;
  const ol_dtype_traits *t = ol_dtype_info(dt);
  return t->bits >= 8 && (t->is_float || t->is_integer);
}

static inline key key_load(const ol_tensor *t, int kind, int64_t i) {
  key k;
  if (kind == KEY_INT) k.i = ((const int64_t *)ol_tdata(t))[i];
  else if (kind == KEY_UINT) k.u = ((const uint64_t *)ol_tdata(t))[i];
  else if (kind == KEY_STRING) k.i = i;
  else k.d = ol_tensor_get_double(t, i);
  return k;
}

/* -1, 0, 1; NaN is larger than every number and equal to NaN. For strings
 * the keys hold element indices into t. */
static inline int key_cmp(int kind, key a, key b, const ol_tensor *t) {
  switch (kind) {
    case KEY_INT: return a.i < b.i ? -1 : a.i > b.i;
    case KEY_UINT: return a.u < b.u ? -1 : a.u > b.u;
    case KEY_STRING: {
      const ol_string *s = ol_tdata(t);
      const ol_string *x = &s[a.i], *y = &s[b.i];
      size_t n = x->length < y->length ? x->length : y->length;
      int c = n ? memcmp(x->data, y->data, n) : 0;
      if (c) return c < 0 ? -1 : 1;
      return x->length < y->length ? -1 : x->length > y->length;
    }
    default: {
      bool na = a.d != a.d, nb = b.d != b.d;
      if (na || nb) return na == nb ? 0 : na ? 1 : -1;
      return a.d < b.d ? -1 : a.d > b.d;
    }
  }
}

static ol_status read_scalar_int(const ol_node *node, const ol_tensor *t, const char *what,
                                 int64_t *out) {
  if (ol_tcount(t) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input '%s' must hold exactly one value, got %lld elements", what,
                           (long long)ol_tcount(t));
  if (t->dtype == OL_DTYPE_INT64) *out = *(const int64_t *)ol_tdata(t);
  else if (t->dtype == OL_DTYPE_INT32) *out = *(const int32_t *)ol_tdata(t);
  else
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be int64 or int32, got %s",
                           what, ol_dtype_name(t->dtype));
  return OL_OK;
}

/* Stable merge sort of idx[0..n) with less(ctx, a, b); tmp has n slots. */
typedef bool (*less_fn)(const void *ctx, int64_t a, int64_t b);
static void merge_sort(int64_t *idx, int64_t *tmp, int64_t n, less_fn less, const void *ctx) {
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      int64_t mid = lo + width < n ? lo + width : n;
      int64_t hi = lo + 2 * width < n ? lo + 2 * width : n;
      int64_t i = lo, j = mid, o = lo;
      while (i < mid && j < hi) tmp[o++] = less(ctx, idx[j], idx[i]) ? idx[j++] : idx[i++];
      while (i < mid) tmp[o++] = idx[i++];
      while (j < hi) tmp[o++] = idx[j++];
    }
    memcpy(idx, tmp, sizeof(int64_t) * (size_t)n);
  }
}

static ol_status elem_copy1(ol_dtype dtype, void *dst, int64_t di, const void *src, int64_t si) {
  if (dtype == OL_DTYPE_STRING) {
    ol_string *d = (ol_string *)dst + di;
    const ol_string *s = (const ol_string *)src + si;
    char *copy = ol_xmalloc(s->length + 1);
    if (!copy) return OL_OUT_OF_MEMORY;
    if (s->length) memcpy(copy, s->data, s->length);
    copy[s->length] = 0;
    free(d->data);
    d->data = copy;
    d->length = s->length;
    return OL_OK;
  }
  size_t es = ol_dtype_size(dtype);
  if (es) {
    memcpy((char *)dst + (size_t)di * es, (const char *)src + (size_t)si * es, es);
    return OL_OK;
  }
  ol_packed_set(dtype, dst, di, ol_packed_get(dtype, src, si));
  return OL_OK;
}

/* ------------------------------------------------------------ ArgMax / ArgMin */

typedef struct arg_kernel {
  ol_kernel base;
  int64_t axis;
  bool keepdims, last, is_max;
} arg_kernel;

static ol_status arg_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  arg_kernel *k = (arg_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!key_dtype_ok(x->dtype) || x->dtype == OL_DTYPE_STRING)
    return ol_kernel_bad_dtype(node, "input", x->dtype);
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  int64_t n = x->dims[axis];
  if (n == 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot reduce an empty axis %d", axis);
  int64_t outer = ol_shape_count(axis, x->dims);
  int64_t inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  int64_t dims[OL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (i == axis) {
      if (k->keepdims) dims[r++] = 1;
    } else {
      dims[r++] = x->dims[i];
    }
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_INT64, r, dims, &y));
  int64_t *out = ol_tdata(y);
  int kind = key_kind(x->dtype);
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i, best = 0;
      key bk = key_load(x, kind, base);
      for (int64_t j = 1; j < n; j++) {
        key v = key_load(x, kind, base + j * inner);
        int c = key_cmp(kind, v, bk, x);
        if (!k->is_max) c = -c;
        if (c > 0 || (c == 0 && k->last)) {
          best = j;
          bk = v;
        }
      }
      out[o * inner + i] = best;
    }
  return OL_OK;
}

static ol_status arg_create(const ol_node *node, bool is_max, ol_kernel **out) {
  arg_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, arg_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", 0);
  k->keepdims = ol_attr_int(node, "keepdims", 1) != 0;
  k->last = node->opset >= 12 && ol_attr_int(node, "select_last_index", 0) != 0;
  k->is_max = is_max;
  *out = &k->base;
  return OL_OK;
}

ol_status ol_tensor_argmax_create(const ol_node *node, ol_kernel **out) {
  return arg_create(node, true, out);
}
ol_status ol_tensor_argmin_create(const ol_node *node, ol_kernel **out) {
  return arg_create(node, false, out);
}

/* ------------------------------------------------------------ Hardmax */

typedef struct hardmax_kernel {
  ol_kernel base;
  int64_t axis;
} hardmax_kernel;

static ol_status hardmax_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  hardmax_kernel *k = (hardmax_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!ol_dtype_info(x->dtype)->is_float || ol_dtype_bits(x->dtype) < 16)
    return ol_kernel_bad_dtype(node, "input", x->dtype);
  int64_t outer, n, inner;
  if (node->opset >= 13 && x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 1");
  OL_TRY(ol_softmax_axis_split(node, k->axis, x, &outer, &n, &inner));
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  if (n == 0) return OL_OK;
  for (int64_t o = 0; o < outer; o++)
    for (int64_t i = 0; i < inner; i++) {
      int64_t base = o * n * inner + i, best = 0;
      key bk = key_load(x, KEY_DOUBLE, base);
      for (int64_t j = 1; j < n; j++) {
        key v = key_load(x, KEY_DOUBLE, base + j * inner);
        if (key_cmp(KEY_DOUBLE, v, bk, x) > 0) {
          best = j;
          bk = v;
        }
      }
      ol_tensor_set_double(y, base + best * inner, 1.0);
    }
  return OL_OK;
}

ol_status ol_tensor_hardmax_create(const ol_node *node, ol_kernel **out) {
  hardmax_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, hardmax_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", node->opset < 13 ? 1 : -1);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ TopK */

typedef struct topk_kernel {
  ol_kernel base;
  int64_t axis, k_attr;
  bool largest;
} topk_kernel;

typedef struct topk_sort_ctx {
  const key *keys;
  int kind;
  bool largest;
} topk_sort_ctx;

static bool topk_less(const void *vctx, int64_t a, int64_t b) {
  const topk_sort_ctx *c = vctx;
  int r = key_cmp(c->kind, c->keys[a], c->keys[b], NULL);
  if (r == 0) return a < b;
  return c->largest ? r > 0 : r < 0;
}

static ol_status topk_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  topk_kernel *tk = (topk_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!key_dtype_ok(x->dtype) || x->dtype == OL_DTYPE_STRING)
    return ol_kernel_bad_dtype(node, "input", x->dtype);
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, tk->axis, x->rank, &axis));
  int64_t k = tk->k_attr;
  if (node->opset >= 10) {
    const ol_tensor *kt;
    OL_TRY(ol_ctx_require(ctx, 1, &kt));
    OL_TRY(read_scalar_int(node, kt, "K", &k));
  }
  int64_t n = x->dims[axis];
  if (k < 0 || k > n)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "k = %lld is outside [0, %lld] for axis %d",
                           (long long)k, (long long)n, axis);
  int64_t dims[OL_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
  dims[axis] = k;
  ol_tensor *vals, *inds = NULL;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, dims, &vals));
  if (ctx->num_outputs > 1) OL_TRY(ol_ctx_output(ctx, 1, OL_DTYPE_INT64, x->rank, dims, &inds));
  if (k == 0 || ol_tcount(vals) == 0) return OL_OK;
  int64_t outer = ol_shape_count(axis, x->dims);
  int64_t inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  key *keys = ol_alloc(ctx->allocator, sizeof(key) * (size_t)n);
  int64_t *idx = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)n * 2);
  if (!keys || !idx) {
    ol_dealloc(ctx->allocator, keys);
    ol_dealloc(ctx->allocator, idx);
    return OL_OUT_OF_MEMORY;
  }
  topk_sort_ctx sc = {keys, key_kind(x->dtype), tk->largest};
  ol_status s = OL_OK;
  for (int64_t o = 0; o < outer && s == OL_OK; o++)
    for (int64_t i = 0; i < inner && s == OL_OK; i++) {
      int64_t base = o * n * inner + i;
      for (int64_t j = 0; j < n; j++) {
        keys[j] = key_load(x, sc.kind, base + j * inner);
        idx[j] = j;
      }
      merge_sort(idx, idx + n, n, topk_less, &sc);
      int64_t obase = o * k * inner + i;
      for (int64_t j = 0; j < k && s == OL_OK; j++) {
        s = elem_copy1(x->dtype, ol_tdata(vals), obase + j * inner, ol_tdata(x),
                       base + idx[j] * inner);
        if (inds) ((int64_t *)ol_tdata(inds))[obase + j * inner] = idx[j];
      }
    }
  ol_dealloc(ctx->allocator, keys);
  ol_dealloc(ctx->allocator, idx);
  return s;
}

ol_status ol_tensor_topk_create(const ol_node *node, ol_kernel **out) {
  topk_kernel *k;
  if (node->opset < 10 && !ol_node_attr(node, "k"))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'k' is required (opset %d)",
                           node->opset);
  OL_TRY(ol_kernel_alloc(node, sizeof *k, topk_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", -1);
  k->k_attr = ol_attr_int(node, "k", 0);
  k->largest = node->opset < 11 || ol_attr_int(node, "largest", 1) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ CumSum */

typedef struct cumsum_kernel {
  ol_kernel base;
  bool exclusive, reverse;
} cumsum_kernel;

#define CUMSUM_LOOP(T, ACC, LOAD, STORE)                                          \
  do {                                                                            \
    const T *in = ol_tdata(x);                                                    \
    T *out = ol_tdata(y);                                                         \
    for (int64_t o = 0; o < outer; o++)                                           \
      for (int64_t i = 0; i < inner; i++) {                                       \
        ACC acc = 0;                                                              \
        for (int64_t jj = 0; jj < n; jj++) {                                      \
          int64_t j = k->reverse ? n - 1 - jj : jj;                               \
          int64_t e = (o * n + j) * inner + i;                                    \
          ACC v = LOAD(in[e]);                                                    \
          if (k->exclusive) {                                                     \
            out[e] = STORE(acc);                                                  \
            acc = acc + v;                                                        \
          } else {                                                                \
            acc = acc + v;                                                        \
            out[e] = STORE(acc);                                                  \
          }                                                                       \
        }                                                                         \
      }                                                                           \
  } while (0)
#define ID(v) (v)

static ol_status cumsum_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  cumsum_kernel *k = (cumsum_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *at;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &at));
  int64_t a;
  OL_TRY(read_scalar_int(node, at, "axis", &a));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, a, x->rank, &axis));
  int64_t outer = ol_shape_count(axis, x->dims), n = x->dims[axis];
  int64_t inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  switch (x->dtype) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_INT32: case OL_DTYPE_INT64:
    case OL_DTYPE_UINT32: case OL_DTYPE_UINT64: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
      break;
    default:
      return ol_kernel_bad_dtype(node, "input", x->dtype);
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  switch (x->dtype) {
    case OL_DTYPE_FLOAT: CUMSUM_LOOP(float, float, ID, ID); break;
    case OL_DTYPE_DOUBLE: CUMSUM_LOOP(double, double, ID, ID); break;
    case OL_DTYPE_INT32: CUMSUM_LOOP(int32_t, uint32_t, (uint32_t), (int32_t)); break;
    case OL_DTYPE_INT64: CUMSUM_LOOP(int64_t, uint64_t, (uint64_t), (int64_t)); break;
    case OL_DTYPE_UINT32: CUMSUM_LOOP(uint32_t, uint32_t, ID, ID); break;
    case OL_DTYPE_UINT64: CUMSUM_LOOP(uint64_t, uint64_t, ID, ID); break;
    default: { /* float16, bfloat16: summed in float32 through the dtype table */
      const ol_dtype_traits *t = ol_dtype_info(x->dtype);
      const void *in = ol_tdata(x);
      void *out = ol_tdata(y);
      for (int64_t o = 0; o < outer; o++)
        for (int64_t i = 0; i < inner; i++) {
          float acc = 0;
          for (int64_t jj = 0; jj < n; jj++) {
            int64_t j = k->reverse ? n - 1 - jj : jj;
            int64_t e = (o * n + j) * inner + i;
            float v = t->to_float(in, e);
            if (k->exclusive) {
              t->from_float(out, e, acc);
              acc = acc + v;
            } else {
              acc = acc + v;
              t->from_float(out, e, acc);
            }
          }
        }
      break;
    }
  }
  return OL_OK;
}

ol_status ol_tensor_cumsum_create(const ol_node *node, ol_kernel **out) {
  cumsum_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, cumsum_compute, (ol_kernel **)&k));
  k->exclusive = ol_attr_int(node, "exclusive", 0) != 0;
  k->reverse = ol_attr_int(node, "reverse", 0) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Unique */

typedef struct unique_kernel {
  ol_kernel base;
  int64_t axis;
  bool has_axis, sorted;
} unique_kernel;

typedef struct unique_ctx {
  const ol_tensor *x;
  int kind;
  int64_t outer, n, inner;
} unique_ctx;

/* Lexicographic comparison of slices a and b along the unique axis. */
static int slice_cmp(const unique_ctx *c, int64_t a, int64_t b) {
  for (int64_t o = 0; o < c->outer; o++)
    for (int64_t i = 0; i < c->inner; i++) {
      int64_t ea = (o * c->n + a) * c->inner + i, eb = (o * c->n + b) * c->inner + i;
      int r = key_cmp(c->kind, key_load(c->x, c->kind, ea), key_load(c->x, c->kind, eb), c->x);
      if (r) return r;
    }
  return 0;
}

static bool slice_less(const void *vctx, int64_t a, int64_t b) {
  return slice_cmp(vctx, a, b) < 0;
}

static bool first_less(const void *vctx, int64_t a, int64_t b) {
  const int64_t *first = vctx;
  return first[a] < first[b];
}

static ol_status unique_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  unique_kernel *k = (unique_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!key_dtype_ok(x->dtype)) return ol_kernel_bad_dtype(node, "input", x->dtype);
  unique_ctx c = {x, key_kind(x->dtype), 1, ol_tcount(x), 1};
  int axis = 0;
  if (k->has_axis) {
    if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input is a scalar");
    OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
    c.outer = ol_shape_count(axis, x->dims);
    c.n = x->dims[axis];
    c.inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  }
  int64_t n = c.n;
  /* order: sorted slice indices; group[i]: unique id of slice i */
  int64_t *order = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(n * 2 + 1));
  int64_t *group = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(n + 1));
  int64_t *first = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(n + 1)); /* per group */
  int64_t *count = ol_calloc(ctx->allocator, (size_t)n + 1, sizeof(int64_t));
  int64_t *rank_of = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(n + 1)); /* group -> output pos */
  int64_t *gorder = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(n * 2 + 1));
  ol_status s = OL_OK;
  if (!order || !group || !first || !count || !rank_of || !gorder) {
    s = OL_OUT_OF_MEMORY;
    goto done;
  }
  for (int64_t i = 0; i < n; i++) order[i] = i;
  merge_sort(order, order + n, n, slice_less, &c);
  int64_t u = 0;
  for (int64_t i = 0; i < n; i++) {
    if (i == 0 || slice_cmp(&c, order[i - 1], order[i]) != 0) {
      first[u] = order[i]; /* stable sort: the lowest index of the run */
      u++;
    }
    group[order[i]] = u - 1;
    count[u - 1]++;
  }
  for (int64_t g = 0; g < u; g++) gorder[g] = g;
  if (!k->sorted) merge_sort(gorder, gorder + u, u, first_less, first);
  for (int64_t p = 0; p < u; p++) rank_of[gorder[p]] = p;
  {
    int64_t dims[OL_MAX_RANK];
    int r;
    if (k->has_axis) {
      r = x->rank;
      memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
      dims[axis] = u;
    } else {
      r = 1;
      dims[0] = u;
    }
    ol_tensor *y;
    s = ol_ctx_output(ctx, 0, x->dtype, r, dims, &y);
    if (s != OL_OK) goto done;
    for (int64_t p = 0; p < u && s == OL_OK; p++) {
      int64_t src = first[gorder[p]];
      for (int64_t o = 0; o < c.outer && s == OL_OK; o++)
        for (int64_t i = 0; i < c.inner && s == OL_OK; i++)
          s = elem_copy1(x->dtype, ol_tdata(y), (o * u + p) * c.inner + i, ol_tdata(x),
                         (o * n + src) * c.inner + i);
    }
    if (s != OL_OK) goto done;
    ol_tensor *t;
    if (ol_ctx_wants_output(ctx, 1)) {
      s = ol_ctx_output(ctx, 1, OL_DTYPE_INT64, 1, &u, &t);
      if (s != OL_OK) goto done;
      for (int64_t p = 0; p < u; p++) ((int64_t *)ol_tdata(t))[p] = first[gorder[p]];
    }
    if (ol_ctx_wants_output(ctx, 2)) {
      s = ol_ctx_output(ctx, 2, OL_DTYPE_INT64, 1, &n, &t);
      if (s != OL_OK) goto done;
      for (int64_t i = 0; i < n; i++) ((int64_t *)ol_tdata(t))[i] = rank_of[group[i]];
    }
    if (ol_ctx_wants_output(ctx, 3)) {
      s = ol_ctx_output(ctx, 3, OL_DTYPE_INT64, 1, &u, &t);
      if (s != OL_OK) goto done;
      for (int64_t p = 0; p < u; p++) ((int64_t *)ol_tdata(t))[p] = count[gorder[p]];
    }
  }
done:
  ol_dealloc(ctx->allocator, order);
  ol_dealloc(ctx->allocator, group);
  ol_dealloc(ctx->allocator, first);
  ol_dealloc(ctx->allocator, count);
  ol_dealloc(ctx->allocator, rank_of);
  ol_dealloc(ctx->allocator, gorder);
  return s;
}

ol_status ol_tensor_unique_create(const ol_node *node, ol_kernel **out) {
  unique_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, unique_compute, (ol_kernel **)&k));
  k->has_axis = ol_node_attr(node, "axis") != NULL;
  k->axis = ol_attr_int(node, "axis", 0);
  k->sorted = ol_attr_int(node, "sorted", 1) != 0;
  *out = &k->base;
  return OL_OK;
}
