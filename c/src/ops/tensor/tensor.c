/* Tensor movement operators (ai.onnx), and the family's registration table.
 *
 *   Concat 1-23 (axis default 1 before opset 4)
 *   Split 1-23 (split attribute/input < 13, input 13+, num_outputs 18+)
 *   Slice 1-23 (attributes < 10, inputs 10+, negative steps, clamping)
 *   Transpose 1-23   Tile 6-23   Expand 8-23
 *   Pad 1-23 (paddings < 2, pads attribute < 11, inputs 11+, axes 18+, wrap 19+)
 *   DepthToSpace 1-23 (mode 11+)   SpaceToDepth 1-23
 * implemented in tensor_index.c:
 *   Gather 1-23   GatherElements 11-23   GatherND 11-23 (batch_dims 12+)
 *   ScatterND / ScatterElements 11-23 (reduction 16+, max/min 18+), Scatter 9-10
 *   Compress 9-23
 * and in tensor_sort.c:
 *   Unique 11-23   CumSum 11-23   TopK 1-23   ArgMax/ArgMin 1-23   Hardmax 1-23
 *
 * All movement is dtype-agnostic (bytes by element size, sub-byte types per
 * element, strings duplicated). Slice returns a zero-copy view when the
 * selected region is contiguous in the input. */
#include <stdlib.h>
#include <string.h>

#include "ops/reduce/reduce.h"
#include "ops/tensor/tensor.h"

/* Create functions defined in tensor_index.c and tensor_sort.c. */

/* ------------------------------------------------------------ element movement */

/* Copies src elements at src_off + sum(idx[i] * strides[i]) (strides in
 * elements, may be 0 or negative) into dst[dst_off..] in row-major order of
 * dims. Adjacent dimensions that are contiguous in the source are merged so
 * the inner loop is as long as possible. */
static ol_status strided_copy(ol_dtype dt, void *dst, int64_t dst_off, const void *src,
                              int64_t src_off, int rank, const int64_t *dims,
                              const int64_t *strides) {
  int64_t d[OL_MAX_RANK], s[OL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < rank; i++) {
    if (dims[i] == 0) return OL_OK;
    if (dims[i] == 1) continue;
    if (r > 0 && s[r - 1] == strides[i] * dims[i]) {
      d[r - 1] *= dims[i];
      s[r - 1] = strides[i];
      continue;
    }
    d[r] = dims[i];
    s[r] = strides[i];
    r++;
  }
  if (r == 0) return ol_elements_copy(dt, dst, dst_off, src, src_off, 1);
  size_t es = dt == OL_DTYPE_STRING ? 0 : ol_dtype_size(dt);
  int64_t n = d[r - 1], st = s[r - 1];
  int outer_rank = r - 1;
  /* Blocked 2-D transpose of the two innermost dims when the last one is
   * strided and the one before is contiguous. */
  bool blocked = r >= 2 && st != 1 && s[r - 2] == 1 && (es == 1 || es == 2 || es == 4 || es == 8);
  if (blocked) outer_rank = r - 2;
  int64_t idx[OL_MAX_RANK] = {0};
  int64_t so = src_off, dpos = dst_off;
  for (;;) {
    if (blocked) {
      int64_t rows = d[r - 2]; /* output rows, source stride 1 */
      const int B = 32;
      for (int64_t a0 = 0; a0 < rows; a0 += B) {
        int64_t a1 = a0 + B < rows ? a0 + B : rows;
        for (int64_t b0 = 0; b0 < n; b0 += B) {
          int64_t b1 = b0 + B < n ? b0 + B : n;
#define TBLOCK(T)                                                         \
  do {                                                                    \
    T *o = (T *)dst + dpos;                                               \
    const T *in = (const T *)src + so;                                    \
    for (int64_t a = a0; a < a1; a++)                                     \
      for (int64_t b = b0; b < b1; b++) o[a * n + b] = in[a + b * st];    \
  } while (0)
          switch (es) {
            case 1: TBLOCK(uint8_t); break;
            case 2: TBLOCK(uint16_t); break;
            case 4: TBLOCK(uint32_t); break;
            default: TBLOCK(uint64_t); break;
          }
#undef TBLOCK
        }
      }
      dpos += rows * n;
    } else if (st == 1) {
      OL_TRY(ol_elements_copy(dt, dst, dpos, src, so, n));
      dpos += n;
    } else {
#define SLOOP(T)                                                          \
  do {                                                                    \
    T *o = (T *)dst + dpos;                                               \
    const T *in = (const T *)src + so;                                    \
    for (int64_t j = 0; j < n; j++) o[j] = in[j * st];                    \
  } while (0)
      switch (es) {
        case 1: SLOOP(uint8_t); break;
        case 2: SLOOP(uint16_t); break;
        case 4: SLOOP(uint32_t); break;
        case 8: SLOOP(uint64_t); break;
        default:
          for (int64_t j = 0; j < n; j++) OL_TRY(ol_elements_copy(dt, dst, dpos + j, src, so + j * st, 1));
      }
#undef SLOOP
      dpos += n;
    }
    /* advance the outer counter */
    int i = outer_rank - 1;
    for (; i >= 0; i--) {
      so += s[i];
      if (++idx[i] < d[i]) break;
      so -= s[i] * d[i];
      idx[i] = 0;
    }
    if (i < 0) break;
  }
  return OL_OK;
}

static void contiguous_strides(int rank, const int64_t *dims, int64_t *strides) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    strides[i] = s;
    s *= dims[i];
  }
}

static ol_status read_ints(const ol_node *node, const ol_tensor *t, const char *what,
                           int64_t *values, size_t cap, size_t *count) {
  ol_status s = ol_tensor_to_int64s(t, values, cap, count);
  if (s != OL_OK)
    return ol_error_wrap(s, "%s node '%s': input '%s'", node->op_type, node->name, what);
  return OL_OK;
}

/* ------------------------------------------------------------ Concat */

/* Concat of a bound persistent pair, present = Concat(past, new..., axis):
 * asks the runtime to append into past's capacity. *done false: no
 * reservation, use the ordinary path (*bound says whether to report it). */
static ol_status concat_append(ol_kernel_ctx *ctx, int axis, const int64_t *dims, bool *done, bool *bound) {
  const ol_node *node = ctx->node;
  const ol_tensor *first = ol_ctx_input(ctx, 0);
  *done = *bound = false;
  ol_append_reservation res;
  OL_TRY(ctx->reserve_append(ctx->runtime, 0, 0, first->rank, dims, axis, &res));
  *bound = res.bound;
  if (!res.result) return OL_OK;
  size_t es = ol_dtype_size(first->dtype);
  int64_t inner = ol_shape_count(first->rank - axis - 1, dims + axis + 1);
  size_t new_bytes = (size_t)((dims[axis] - first->dims[axis]) * inner) * es;
  if (res.rows != (size_t)ol_shape_count(axis, dims) || res.row_bytes != new_bytes || (new_bytes && !res.writable)) {
    ol_value_release(res.result);
    return ol_kernel_error(node, OL_INTERNAL, "append reservation does not match the concatenation");
  }
  for (size_t r = 0; r < res.rows; r++) {
    char *dst = (char *)res.writable + r * res.row_stride;
    for (size_t i = 1; i < ctx->num_inputs; i++) {
      const ol_tensor *t = ol_ctx_input(ctx, i);
      size_t chunk = (size_t)(t->dims[axis] * inner) * es;
      if (chunk) memcpy(dst, (const char *)ol_tdata(t) + r * chunk, chunk);
      dst += chunk;
    }
  }
  ol_storage_counts counts = res.counts;
  counts.append_copied_bytes += res.writable_bytes;
  OL_TRY(ctx->commit_append(ctx->runtime, 0, &res));
  if (ctx->record_storage) OL_TRY(ctx->record_storage(ctx->runtime, &counts));
  *done = true;
  return OL_OK;
}

/* Session caches (ctx->grow_outputs): the present = Concat(past, new) of a
 * torch export, run after run with each present fed back as the next past.
 * Output 0 gets spare rows along the axis and, when input 0 is such a view
 * holding every row in use, the new rows go into the spare ones without
 * copying the prefix again (ol_value_grow_from: views taken earlier keep
 * seeing their own rows, a second run from the same past copies). Sets
 * *done when output 0 is set. */
static ol_status concat_grow(ol_kernel_ctx *ctx, int axis, const int64_t *dims, bool *done) {
  const ol_tensor *first = ol_ctx_input(ctx, 0);
  *done = false;
  for (size_t i = 1; i < ctx->num_inputs; i++) {
    const ol_tensor *t = ol_ctx_input(ctx, i);
    if (ol_tensor_is_strided(t) || ol_tensor_is_packed(t) || (t->buffer && t->buffer == first->buffer)) return OL_OK;
  }
  ol_value *y = NULL;
  if (ol_value_grow_from(ctx->allocator, first, first->rank, dims, axis, &y) != OL_OK)
    return ol_kernel_error(ctx->node, OL_OUT_OF_MEMORY, "out of memory growing the output");
  if (!y) return OL_OK;
  const int rank = first->rank;
  const int64_t outer = ol_shape_count(axis, dims), inner = ol_shape_count(rank - axis - 1, dims + axis + 1);
  const size_t row = (size_t)inner * ol_dtype_size(first->dtype);
  for (int64_t o = 0; o < outer; o++) {
    char *dst = (char *)ol_tdata(&y->tensor) + (size_t)(o * y->tensor.pitch + first->dims[axis]) * row;
    for (size_t i = 1; i < ctx->num_inputs; i++) {
      const ol_tensor *t = ol_ctx_input(ctx, i);
      size_t chunk = (size_t)t->dims[axis] * row;
      if (chunk) memcpy(dst, (const char *)ol_tdata(t) + (size_t)o * chunk, chunk);
      dst += chunk;
    }
  }
  OL_TRY(ol_ctx_set_output(ctx, 0, y));
  *done = true;
  return OL_OK;
}

static ol_status concat_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  ol_axis_kernel *k = (ol_axis_kernel *)kernel;
  const ol_node *node = ctx->node;
  if (ctx->num_inputs == 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "needs at least one input");
  const ol_tensor *first;
  OL_TRY(ol_ctx_require(ctx, 0, &first));
  if (first->rank == 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot concatenate scalars (input 0)");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, first->rank, &axis));
  int64_t dims[OL_MAX_RANK];
  memcpy(dims, first->dims, sizeof(int64_t) * (size_t)first->rank);
  dims[axis] = 0;
  for (size_t i = 0; i < ctx->num_inputs; i++) {
    const ol_tensor *t;
    OL_TRY(ol_ctx_require(ctx, i, &t));
    if (t->dtype != first->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input %zu is %s but input 0 is %s", i,
                             ol_dtype_name(t->dtype), ol_dtype_name(first->dtype));
    if (t->rank != first->rank)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input %zu has rank %d but input 0 has rank %d",
                             i, t->rank, first->rank);
    for (int d = 0; d < t->rank; d++)
      if (d != axis && t->dims[d] != first->dims[d])
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "input %zu has dimension %d = %lld but input 0 has %lld", i, d,
                               (long long)t->dims[d], (long long)first->dims[d]);
    dims[axis] += t->dims[axis];
  }
  bool bound = false;
  if (ctx->reserve_append && ctx->num_inputs >= 2) {
    bool done;
    OL_TRY(concat_append(ctx, axis, dims, &done, &bound));
    if (done) return OL_OK;
  }
  if ((ctx->grow_outputs & 1u) && ctx->num_inputs >= 2) {
    bool done;
    OL_TRY(concat_grow(ctx, axis, dims, &done));
    if (done) return OL_OK;
  }
  ol_value *dense = NULL; /* input 0 pitched along another axis */
  if (ol_tensor_is_strided(first) && first->pitch_axis != axis) {
    OL_TRY(ol_tensor_materialize(ctx->allocator, first, &dense));
    first = &dense->tensor;
  }
  ol_tensor *y;
  ol_status s = ol_ctx_output_uninit(ctx, 0, first->dtype, first->rank, dims, &y); /* every element copied below */
  if (s != OL_OK) {
    ol_value_release(dense);
    return s;
  }
  int64_t outer = ol_shape_count(axis, dims);
  int64_t inner = ol_shape_count(first->rank - axis - 1, dims + axis + 1);
  int64_t pos = 0;
  for (int64_t o = 0; o < outer && s == OL_OK; o++) {
    for (size_t i = 0; i < ctx->num_inputs && s == OL_OK; i++) {
      const ol_tensor *t = i == 0 ? first : ol_ctx_input(ctx, i);
      int64_t chunk = t->dims[axis] * inner;
      /* input 0 may be a pitched cache (a declined append): rows at its pitch */
      int64_t from = i == 0 && t->pitch > 0 && t->pitch_axis == axis ? o * ol_tensor_layout_pitch(t) * inner
                                                                       : o * chunk;
      s = ol_elements_copy(y->dtype, ol_tdata(y), pos, ol_tdata(t), from, chunk);
      pos += chunk;
    }
  }
  ol_value_release(dense);
  OL_TRY(s);
  if (bound && ctx->record_storage) {
    /* the dense fallback of a bound pair: one buffer, the prefix copied */
    size_t es = ol_dtype_storage_bytes(first->dtype, 1);
    ol_storage_counts counts = {1, (uint64_t)ol_tcount(y) * es, (uint64_t)ol_tcount(first) * es,
                                (uint64_t)(ol_tcount(y) - ol_tcount(first)) * es, 0};
    OL_TRY(ctx->record_storage(ctx->runtime, &counts));
  }
  return OL_OK;
}

static ol_status concat_create(const ol_node *node, ol_kernel **out) {
  if (node->opset >= 4 && !ol_node_attr(node, "axis"))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'axis' is required");
  return ol_axis_kernel_create(node, concat_compute, 1, out);
}

/* ------------------------------------------------------------ Split */

typedef struct split_kernel {
  ol_kernel base;
  int64_t axis;
  int64_t num_outputs; /* 0: absent */
  int64_t split_count; /* attribute, -1 absent */
  const int64_t *split;
} split_kernel;

static ol_status split_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  split_kernel *k = (split_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot split a scalar");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  size_t nout = ctx->num_outputs;
  if (nout == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "has no outputs");
  int64_t *sizes = ol_calloc(ctx->allocator, nout, sizeof *sizes);
  if (!sizes) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  int64_t dim = x->dims[axis];
  const ol_tensor *st = (node->opset >= 13 || node->opset == 1) ? ol_ctx_input(ctx, 1) : NULL;
  if (st || k->split_count >= 0) {
    size_t n = 0;
    if (st) {
      if (st->rank > 1 || (size_t)ol_tcount(st) != nout) {
        s = ol_kernel_error(node, OL_INVALID_ARGUMENT,
                            "input 'split' has %lld values for %zu outputs",
                            (long long)ol_tcount(st), nout);
        goto done;
      }
      s = read_ints(node, st, "split", sizes, nout, &n);
      if (s != OL_OK) goto done;
    } else {
      if ((size_t)k->split_count != nout) {
        s = ol_kernel_error(node, OL_INVALID_ARGUMENT,
                            "attribute 'split' has %lld values for %zu outputs",
                            (long long)k->split_count, nout);
        goto done;
      }
      memcpy(sizes, k->split, sizeof(int64_t) * nout);
    }
    int64_t sum = 0;
    for (size_t i = 0; i < nout; i++) {
      if (sizes[i] < 0) {
        s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "split size %zu is negative", i);
        goto done;
      }
      sum += sizes[i];
    }
    if (sum != dim) {
      s = ol_kernel_error(node, OL_INVALID_ARGUMENT,
                          "split sizes add up to %lld but axis %d has dimension %lld",
                          (long long)sum, axis, (long long)dim);
      goto done;
    }
  } else if (k->num_outputs > 0) {
    if ((size_t)k->num_outputs != nout) {
      s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "num_outputs=%lld but the node has %zu outputs",
                          (long long)k->num_outputs, nout);
      goto done;
    }
    int64_t chunk = (dim + (int64_t)nout - 1) / (int64_t)nout;
    int64_t left = dim;
    for (size_t i = 0; i < nout; i++) {
      sizes[i] = left < chunk ? left : chunk;
      left -= sizes[i];
    }
  } else {
    if (dim % (int64_t)nout != 0) {
      s = ol_kernel_error(node, OL_INVALID_ARGUMENT,
                          "dimension %lld of axis %d cannot be split evenly into %zu outputs",
                          (long long)dim, axis, nout);
      goto done;
    }
    for (size_t i = 0; i < nout; i++) sizes[i] = dim / (int64_t)nout;
  }
  {
    int64_t outer = ol_shape_count(axis, x->dims);
    int64_t inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
    int64_t offset = 0;
    for (size_t i = 0; i < nout; i++) {
      if (ol_ctx_wants_output(ctx, i)) {
        int64_t dims[OL_MAX_RANK];
        memcpy(dims, x->dims, sizeof(int64_t) * (size_t)x->rank);
        dims[axis] = sizes[i];
        ol_tensor *y;
        s = ol_ctx_output_uninit(ctx, i, x->dtype, x->rank, dims, &y); /* every row copied */
        if (s != OL_OK) goto done;
        int64_t chunk = sizes[i] * inner;
        for (int64_t o = 0; o < outer && s == OL_OK; o++)
          s = ol_elements_copy(x->dtype, ol_tdata(y), o * chunk, ol_tdata(x), (o * dim + offset) * inner,
                        chunk);
        if (s != OL_OK) goto done;
      }
      offset += sizes[i];
    }
  }
done:
  ol_dealloc(ctx->allocator, sizes);
  return s;
}

static ol_status split_create(const ol_node *node, ol_kernel **out) {
  split_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, split_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", 0);
  k->split_count = node->opset < 13 ? ol_attr_ints(node, "split", &k->split) : -1;
  k->num_outputs = node->opset >= 18 ? ol_attr_int(node, "num_outputs", 0) : 0;
  if (ol_node_attr(node, "num_outputs") && node->opset >= 18 && k->num_outputs < 1) {
    free(k);
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'num_outputs' must be >= 1");
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Slice */

typedef struct slice_kernel {
  ol_kernel base;
  int64_t n_starts, n_ends, n_axes; /* opset < 10 attributes */
  const int64_t *starts, *ends, *axes;
} slice_kernel;

static ol_status slice_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  slice_kernel *k = (slice_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int64_t starts[OL_MAX_RANK], ends[OL_MAX_RANK], axes[OL_MAX_RANK], steps[OL_MAX_RANK];
  size_t n, ne, na, ns;
  if (node->opset < 10) {
    if (k->n_starts > OL_MAX_RANK || k->n_ends > OL_MAX_RANK || k->n_axes > OL_MAX_RANK)
      return ol_kernel_error(node, OL_INVALID_MODEL, "too many slice values");
    n = (size_t)k->n_starts;
    ne = (size_t)k->n_ends;
    if (n) memcpy(starts, k->starts, n * sizeof(int64_t));
    if (ne) memcpy(ends, k->ends, ne * sizeof(int64_t));
    na = k->n_axes < 0 ? n : (size_t)k->n_axes;
    if (k->n_axes >= 0) {
      if (na) memcpy(axes, k->axes, na * sizeof(int64_t));
    } else {
      for (size_t i = 0; i < n; i++) axes[i] = (int64_t)i;
    }
    ns = n;
    for (size_t i = 0; i < n; i++) steps[i] = 1;
  } else {
    const ol_tensor *ts, *te;
    OL_TRY(ol_ctx_require(ctx, 1, &ts));
    OL_TRY(ol_ctx_require(ctx, 2, &te));
    OL_TRY(read_ints(node, ts, "starts", starts, OL_MAX_RANK, &n));
    OL_TRY(read_ints(node, te, "ends", ends, OL_MAX_RANK, &ne));
    const ol_tensor *ta = ol_ctx_input(ctx, 3), *tst = ol_ctx_input(ctx, 4);
    if (ta) {
      OL_TRY(read_ints(node, ta, "axes", axes, OL_MAX_RANK, &na));
    } else {
      na = n;
      for (size_t i = 0; i < n; i++) axes[i] = (int64_t)i;
    }
    if (tst) {
      OL_TRY(read_ints(node, tst, "steps", steps, OL_MAX_RANK, &ns));
    } else {
      ns = n;
      for (size_t i = 0; i < n; i++) steps[i] = 1;
    }
  }
  if (ne != n || na != n || ns != n)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "starts, ends, axes and steps must have the same length (got %zu, "
                           "%zu, %zu, %zu)", n, ne, na, ns);
  int64_t start_of[OL_MAX_RANK] = {0}, step_of[OL_MAX_RANK], dims[OL_MAX_RANK];
  bool seen[OL_MAX_RANK] = {false};
  for (int i = 0; i < x->rank; i++) {
    step_of[i] = 1;
    dims[i] = x->dims[i];
  }
  for (size_t i = 0; i < n; i++) {
    int a;
    OL_TRY(ol_normalize_axis(node, axes[i], x->rank, &a));
    if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot slice a scalar");
    if (seen[a])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
    seen[a] = true;
    int64_t dim = x->dims[a], step = steps[i], st = starts[i], en = ends[i];
    if (step == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "step %zu is zero", i);
    if (st < 0) st += dim;
    if (en < 0) en += dim;
    int64_t len;
    if (step > 0) {
      st = st < 0 ? 0 : st > dim ? dim : st;
      en = en < 0 ? 0 : en > dim ? dim : en;
      len = en > st ? (int64_t)(((uint64_t)(en - st) + (uint64_t)step - 1) / (uint64_t)step) : 0;
    } else {
      st = st < 0 ? 0 : st > dim - 1 ? dim - 1 : st;
      en = en < -1 ? -1 : en > dim - 1 ? dim - 1 : en;
      uint64_t ustep = 0 - (uint64_t)step;
      len = st > en ? (int64_t)(((uint64_t)(st - en) + ustep - 1) / ustep) : 0;
    }
    start_of[a] = len ? st : 0;
    step_of[a] = step;
    dims[a] = len;
  }
  int64_t in_strides[OL_MAX_RANK], strides[OL_MAX_RANK], offset = 0;
  contiguous_strides(x->rank, x->dims, in_strides);
  for (int i = 0; i < x->rank; i++) {
    strides[i] = in_strides[i] * step_of[i];
    offset += start_of[i] * in_strides[i];
  }
  /* Zero-copy view when the region is contiguous in the input. */
  size_t es = ol_dtype_size(x->dtype);
  if (es && x->buffer) {
    /* leading dims where the output takes one index */
    int f = 0;
    while (f < x->rank && dims[f] == 1) f++;
    bool contiguous = true;
    if (f < x->rank) {
      if (step_of[f] != 1 && dims[f] > 1) contiguous = false;
      for (int i = f + 1; i < x->rank && contiguous; i++)
        if (dims[i] != x->dims[i] || start_of[i] != 0 || (step_of[i] != 1 && dims[i] > 1))
          contiguous = false;
    }
    if (contiguous && ol_shape_count(x->rank, dims) > 0) {
      ol_value *v;
      OL_TRY(ol_value_new_view(x->buffer, x->offset + (size_t)offset * es, x->dtype, x->rank,
                               dims, &v));
      return ol_ctx_set_output(ctx, 0, v);
    }
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output_uninit(ctx, 0, x->dtype, x->rank, dims, &y)); /* strided_copy fills it */
  return strided_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), offset, x->rank, dims, strides);
}

static ol_status slice_create(const ol_node *node, ol_kernel **out) {
  slice_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, slice_compute, (ol_kernel **)&k));
  if (node->opset < 10) {
    k->n_starts = ol_attr_ints(node, "starts", &k->starts);
    k->n_ends = ol_attr_ints(node, "ends", &k->ends);
    k->n_axes = ol_attr_ints(node, "axes", &k->axes);
    if (k->n_starts < 0 || k->n_ends < 0) {
      free(k);
      return ol_kernel_error(node, OL_INVALID_MODEL,
                             "attributes 'starts' and 'ends' are required (opset %d)", node->opset);
    }
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Transpose */

typedef struct transpose_kernel {
  ol_kernel base;
  int64_t count; /* -1: reverse */
  const int64_t *perm;
} transpose_kernel;

static ol_status transpose_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  transpose_kernel *k = (transpose_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int r = x->rank;
  int perm[OL_MAX_RANK];
  if (k->count < 0) {
    for (int i = 0; i < r; i++) perm[i] = r - 1 - i;
  } else {
    if (k->count != r)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "perm has %lld entries for rank %d",
                             (long long)k->count, r);
    bool seen[OL_MAX_RANK] = {false};
    for (int i = 0; i < r; i++) {
      int64_t p = k->perm[i];
      if (p < 0 || p >= r || seen[p])
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "perm is not a permutation of 0..%d (entry %d is %lld)", r - 1, i,
                               (long long)p);
      seen[p] = true;
      perm[i] = (int)p;
    }
  }
  int64_t xs[OL_MAX_RANK], dims[OL_MAX_RANK], strides[OL_MAX_RANK];
  contiguous_strides(r, x->dims, xs);
  for (int i = 0; i < r; i++) {
    dims[i] = x->dims[perm[i]];
    strides[i] = xs[perm[i]];
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output_uninit(ctx, 0, x->dtype, r, dims, &y)); /* strided_copy fills it */
  return strided_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), 0, r, dims, strides);
}

static ol_status transpose_create(const ol_node *node, ol_kernel **out) {
  transpose_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, transpose_compute, (ol_kernel **)&k));
  k->count = ol_attr_ints(node, "perm", &k->perm);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ Expand */

static ol_status expand_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *st;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &st));
  int64_t shape[OL_MAX_RANK], dims[OL_MAX_RANK];
  size_t n;
  OL_TRY(read_ints(node, st, "shape", shape, OL_MAX_RANK, &n));
  int r;
  OL_TRY(ol_broadcast_shapes(node, x->rank, x->dims, (int)n, shape, &r, dims));
  int64_t xs[OL_MAX_RANK], strides[OL_MAX_RANK];
  contiguous_strides(x->rank, x->dims, xs);
  if (ol_tensor_is_strided(x)) /* a pitched cache: the dims before its axis step over the pitch */
    for (int i = 0; i < x->pitch_axis; i++) xs[i] = xs[i] / x->dims[x->pitch_axis] * x->pitch;
  for (int i = 0; i < r; i++) {
    int xi = i - (r - x->rank);
    strides[i] = xi < 0 || x->dims[xi] == 1 ? 0 : xs[xi];
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output_uninit(ctx, 0, x->dtype, r, dims, &y)); /* strided_copy fills it */
  return strided_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), 0, r, dims, strides);
}

static ol_status expand_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, expand_compute, out);
}

/* ------------------------------------------------------------ Tile */

/* Writes input block (dims[axis..]) at src_off into dst at dst_off with the
 * repeats of axis.. applied; returns the number of elements written. */
static ol_status tile_rec(const ol_tensor *x, ol_tensor *y, const int64_t *reps, int axis,
                          int64_t src_off, int64_t dst_off, const int64_t *xs, int64_t *written) {
  int r = x->rank;
  int64_t d = x->dims[axis];
  int64_t block = 0;
  if (axis == r - 1) {
    OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), dst_off, ol_tdata(x), src_off, d));
    block = d;
  } else {
    for (int64_t i = 0; i < d; i++) {
      int64_t w;
      OL_TRY(tile_rec(x, y, reps, axis + 1, src_off + i * xs[axis], dst_off + block, xs, &w));
      block += w;
    }
  }
  for (int64_t t = 1; t < reps[axis]; t++)
    OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), dst_off + t * block, ol_tdata(y), dst_off, block));
  *written = block * reps[axis];
  return OL_OK;
}

static ol_status tile_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *rt;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &rt));
  int64_t reps[OL_MAX_RANK], dims[OL_MAX_RANK];
  size_t n;
  OL_TRY(read_ints(node, rt, "repeats", reps, OL_MAX_RANK, &n));
  if ((int)n != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "repeats has %zu values for rank %d", n,
                           x->rank);
  for (int i = 0; i < x->rank; i++) {
    if (reps[i] < 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "repeats[%d] is negative (%lld)", i,
                             (long long)reps[i]);
    if (!ol_i64_mul(x->dims[i], reps[i], &dims[i]))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "repeats[%d] = %lld overflows dimension %d (%lld)", i,
                             (long long)reps[i], i, (long long)x->dims[i]);
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, dims, &y));
  if (ol_tcount(y) == 0) return OL_OK;
  if (x->rank == 0) return ol_elements_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), 0, 1);
  int64_t xs[OL_MAX_RANK], w;
  contiguous_strides(x->rank, x->dims, xs);
  return tile_rec(x, y, reps, 0, 0, 0, xs, &w);
}

static ol_status tile_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, tile_compute, out);
}

/* ------------------------------------------------------------ Pad */

enum { PAD_CONSTANT, PAD_REFLECT, PAD_EDGE, PAD_WRAP };

typedef struct pad_kernel {
  ol_kernel base;
  int mode;
  float value;          /* opset < 11 */
  int64_t n_pads;       /* opset < 11 */
  const int64_t *pads;
} pad_kernel;

/* Source coordinate for output coordinate o, or -1 for the constant. */
static int64_t pad_map(int64_t o, int64_t begin, int64_t d, int mode) {
  int64_t i = o - begin;
  if (i >= 0 && i < d) return i;
  switch (mode) {
    case PAD_EDGE: return i < 0 ? 0 : d - 1;
    case PAD_WRAP: return ((i % d) + d) % d;
    case PAD_REFLECT: {
      if (d == 1) return 0;
      int64_t period = 2 * (d - 1);
      i = ((i % period) + period) % period;
      return i >= d ? period - i : i;
    }
    default: return -1;
  }
}

static ol_status pad_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  pad_kernel *k = (pad_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  int r = x->rank;
  int64_t raw[2 * OL_MAX_RANK], axes[OL_MAX_RANK];
  size_t np, na;
  const ol_tensor *cv = NULL;
  if (node->opset < 11) {
    if (k->n_pads > 2 * OL_MAX_RANK)
      return ol_kernel_error(node, OL_INVALID_MODEL, "too many pads");
    np = (size_t)k->n_pads;
    if (np) memcpy(raw, k->pads, np * sizeof(int64_t));
    na = (size_t)r;
    for (int i = 0; i < r; i++) axes[i] = i;
  } else {
    const ol_tensor *pt;
    OL_TRY(ol_ctx_require(ctx, 1, &pt));
    OL_TRY(read_ints(node, pt, "pads", raw, 2 * OL_MAX_RANK, &np));
    cv = ol_ctx_input(ctx, 2);
    const ol_tensor *at = node->opset >= 18 ? ol_ctx_input(ctx, 3) : NULL;
    if (at) {
      OL_TRY(read_ints(node, at, "axes", axes, OL_MAX_RANK, &na));
    } else {
      na = (size_t)r;
      for (int i = 0; i < r; i++) axes[i] = i;
    }
  }
  if (np != 2 * na)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "pads has %zu values, expected %zu", np,
                           2 * na);
  int64_t begin[OL_MAX_RANK] = {0}, end[OL_MAX_RANK] = {0}, dims[OL_MAX_RANK];
  bool seen[OL_MAX_RANK] = {false};
  for (size_t i = 0; i < na; i++) {
    int a;
    OL_TRY(ol_normalize_axis(node, axes[i], r, &a));
    if (r == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot pad a scalar");
    if (seen[a])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
    seen[a] = true;
    begin[a] = raw[i];
    end[a] = raw[na + i];
  }
  for (int i = 0; i < r; i++) {
    if (!ol_i64_add(x->dims[i], begin[i], &dims[i]) || !ol_i64_add(dims[i], end[i], &dims[i]))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "pads %lld and %lld overflow dimension %d (%lld)",
                             (long long)begin[i], (long long)end[i], i, (long long)x->dims[i]);
    if (dims[i] < 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "pads make dimension %d negative (%lld)", i, (long long)dims[i]);
    if (k->mode != PAD_CONSTANT && x->dims[i] == 0 && dims[i] > 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "cannot pad an empty dimension %d in a non-constant mode", i);
  }
  if (cv && cv->dtype != x->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "constant_value is %s but data is %s",
                           ol_dtype_name(cv->dtype), ol_dtype_name(x->dtype));
  if (cv && ol_tcount(cv) < 1) cv = NULL;
  ol_value *tmp = NULL;
  if (!cv && x->dtype != OL_DTYPE_STRING) {
    OL_TRY(ol_value_new_tensor(ctx->allocator, x->dtype, 0, NULL, &tmp));
    if (k->value != 0.0f) ol_tensor_set_double(&tmp->tensor, 0, k->value);
    cv = &tmp->tensor;
  }
  ol_tensor *y;
  ol_status s = ol_ctx_output(ctx, 0, x->dtype, r, dims, &y);
  int64_t total = s == OL_OK ? ol_tcount(y) : 0;
  if (s == OL_OK && total > 0 && r == 0) s = ol_elements_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), 0, 1);
  if (s == OL_OK && total > 0 && r > 0) {
    int64_t xs[OL_MAX_RANK], idx[OL_MAX_RANK] = {0};
    contiguous_strides(r, x->dims, xs);
    int64_t w = dims[r - 1], d = x->dims[r - 1], b = begin[r - 1];
    int64_t rows = total / w;
    ol_dtype dt = x->dtype;
    for (int64_t row = 0; row < rows && s == OL_OK; row++) {
      int64_t src = 0;
      bool constant = false;
      for (int i = 0; i < r - 1; i++) {
        int64_t si = pad_map(idx[i], begin[i], x->dims[i], k->mode);
        if (si < 0) constant = true;
        else src += si * xs[i];
      }
      int64_t dst = row * w;
      if (constant) {
        for (int64_t j = 0; j < w && s == OL_OK; j++)
          if (cv) s = ol_elements_copy(dt, ol_tdata(y), dst + j, ol_tdata(cv), 0, 1);
      } else {
        int64_t lo = b > 0 ? b : 0, hi = b + d < w ? b + d : w;
        if (hi > lo) s = ol_elements_copy(dt, ol_tdata(y), dst + lo, ol_tdata(x), src + lo - b, hi - lo);
        for (int64_t j = 0; j < w && s == OL_OK; j++) {
          if (j >= lo && j < hi) {
            j = hi - 1;
            continue;
          }
          int64_t sj = pad_map(j, b, d, k->mode);
          if (sj >= 0) s = ol_elements_copy(dt, ol_tdata(y), dst + j, ol_tdata(x), src + sj, 1);
          else if (cv) s = ol_elements_copy(dt, ol_tdata(y), dst + j, ol_tdata(cv), 0, 1);
        }
      }
      for (int i = r - 2; i >= 0; i--) {
        if (++idx[i] < dims[i]) break;
        idx[i] = 0;
      }
    }
  }
  ol_value_release(tmp);
  return s;
}

static ol_status pad_create(const ol_node *node, ol_kernel **out) {
  const char *mode = ol_attr_string(node, "mode", "constant");
  int m;
  if (strcmp(mode, "constant") == 0) m = PAD_CONSTANT;
  else if (strcmp(mode, "reflect") == 0) m = PAD_REFLECT;
  else if (strcmp(mode, "edge") == 0) m = PAD_EDGE;
  else if (strcmp(mode, "wrap") == 0) m = PAD_WRAP;
  else
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "mode '%s' is not one of constant, reflect, edge, wrap", mode);
  pad_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, pad_compute, (ol_kernel **)&k));
  k->mode = m;
  if (node->opset < 11) {
    k->value = ol_attr_float(node, "value", 0.0f);
    k->n_pads = ol_attr_ints(node, node->opset < 2 ? "paddings" : "pads", &k->pads);
    if (k->n_pads < 0) {
      free(k);
      return ol_kernel_error(node, OL_INVALID_MODEL, "attribute '%s' is required (opset %d)",
                             node->opset < 2 ? "paddings" : "pads", node->opset);
    }
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ CenterCropPad */

/* CenterCropPad 18: each axis listed in `axes` (default all) becomes
 * shape[i] long, centered: a longer input is cropped starting at
 * floor((in - out) / 2), a shorter one is padded with zeros (empty strings)
 * of which floor((out - in) / 2) go before it, the odd one after. */
typedef struct ccp_kernel {
  ol_kernel base;
  int64_t n_axes; /* -1: attribute absent (every axis) */
  const int64_t *axes;
} ccp_kernel;

/* The output dims for x and the target shape input t. */
static ol_status ccp_dims(const ccp_kernel *k, const ol_node *node, const ol_tensor *x, const ol_tensor *t,
                          int64_t *dims) {
  int64_t shape[OL_MAX_RANK];
  size_t n;
  OL_TRY(read_ints(node, t, "shape", shape, OL_MAX_RANK, &n));
  size_t n_axes = k->n_axes < 0 ? (size_t)x->rank : (size_t)k->n_axes;
  if (n != n_axes)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "shape has %zu values for %zu axes", n, n_axes);
  bool seen[OL_MAX_RANK] = {false};
  for (int i = 0; i < x->rank; i++) dims[i] = x->dims[i];
  for (size_t i = 0; i < n_axes; i++) {
    int a = (int)i;
    if (k->n_axes >= 0) OL_TRY(ol_normalize_axis(node, k->axes[i], x->rank, &a));
    if (seen[a]) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %d is repeated", a);
    if (shape[i] < 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "shape[%zu] is negative (%lld)", i, (long long)shape[i]);
    seen[a] = true;
    dims[a] = shape[i];
  }
  return OL_OK;
}

static ol_status ccp_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const ol_tensor *x, *t;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &t));
  int r = x->rank;
  int64_t dims[OL_MAX_RANK];
  OL_TRY(ccp_dims((const ccp_kernel *)kernel, ctx->node, x, t, dims));
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, r, dims, &y)); /* zeroed: the padding */
  /* the region both share: len[i] elements from src[i] in x to dst[i] in y */
  int64_t len[OL_MAX_RANK], src[OL_MAX_RANK], dst[OL_MAX_RANK], xs[OL_MAX_RANK], ys[OL_MAX_RANK];
  for (int i = 0; i < r; i++) {
    len[i] = x->dims[i] < dims[i] ? x->dims[i] : dims[i];
    src[i] = x->dims[i] > dims[i] ? (x->dims[i] - dims[i]) / 2 : 0;
    dst[i] = dims[i] > x->dims[i] ? (dims[i] - x->dims[i]) / 2 : 0;
    if (len[i] == 0) return OL_OK;
  }
  if (r == 0) return ol_elements_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), 0, 1);
  contiguous_strides(r, x->dims, xs);
  contiguous_strides(r, dims, ys);
  int64_t idx[OL_MAX_RANK] = {0};
  for (;;) {
    int64_t so = 0, d = 0;
    for (int i = 0; i < r; i++) so += (src[i] + idx[i]) * xs[i], d += (dst[i] + idx[i]) * ys[i];
    OL_TRY(ol_elements_copy(x->dtype, ol_tdata(y), d, ol_tdata(x), so, len[r - 1]));
    int i = r - 2;
    for (; i >= 0; i--) {
      if (++idx[i] < len[i]) break;
      idx[i] = 0;
    }
    if (i < 0) return OL_OK;
  }
}

static ol_status ccp_create(const ol_node *node, ol_kernel **out) {
  ccp_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, ccp_compute, (ol_kernel **)&k));
  k->n_axes = ol_attr_ints(node, "axes", &k->axes);
  if (k->n_axes > OL_MAX_RANK) {
    free(k);
    return ol_kernel_error(node, OL_INVALID_MODEL, "%lld axes (at most %d)", (long long)k->n_axes, OL_MAX_RANK);
  }
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ DepthToSpace / SpaceToDepth */

typedef struct d2s_kernel {
  ol_kernel base;
  int64_t blocksize;
  bool crd;
} d2s_kernel;

static ol_status d2s_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  d2s_kernel *k = (d2s_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->rank != 4)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be 4-D, got rank %d", x->rank);
  int64_t b = k->blocksize, N = x->dims[0], C = x->dims[1], H = x->dims[2], W = x->dims[3];
  bool to_space = strcmp(node->op_type, "DepthToSpace") == 0;
  int64_t out[4], d6[6], s6[6];
  if (to_space) {
    if (C % (b * b) != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "channels %lld are not divisible by blocksize^2 = %lld", (long long)C,
                             (long long)(b * b));
    int64_t c = C / (b * b);
    out[0] = N; out[1] = c; out[2] = H * b; out[3] = W * b;
    /* output viewed as [N, c, H, b, W, b] */
    d6[0] = N; d6[1] = c; d6[2] = H; d6[3] = b; d6[4] = W; d6[5] = b;
    int64_t hw = H * W;
    if (k->crd) { /* input [N, c, b, b, H, W] */
      s6[0] = C * hw; s6[1] = b * b * hw; s6[2] = W; s6[3] = b * hw; s6[4] = 1; s6[5] = hw;
    } else {      /* input [N, b, b, c, H, W] */
      s6[0] = C * hw; s6[1] = hw; s6[2] = W; s6[3] = b * c * hw; s6[4] = 1; s6[5] = c * hw;
    }
  } else {
    if (H % b != 0 || W % b != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "height %lld and width %lld must be divisible by blocksize %lld",
                             (long long)H, (long long)W, (long long)b);
    int64_t h = H / b, w = W / b;
    out[0] = N; out[1] = C * b * b; out[2] = h; out[3] = w;
    /* output viewed as [N, b, b, C, h, w]; input [N, C, h, b, w, b] */
    d6[0] = N; d6[1] = b; d6[2] = b; d6[3] = C; d6[4] = h; d6[5] = w;
    s6[0] = C * H * W; s6[1] = W; s6[2] = 1; s6[3] = H * W; s6[4] = b * W; s6[5] = b;
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, 4, out, &y));
  return strided_copy(x->dtype, ol_tdata(y), 0, ol_tdata(x), 0, 6, d6, s6);
}

static ol_status d2s_create(const ol_node *node, ol_kernel **out) {
  int64_t b = ol_attr_int(node, "blocksize", 0);
  if (b < 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'blocksize' must be >= 1, got %lld",
                           (long long)b);
  const char *mode = ol_attr_string(node, "mode", "DCR");
  if (strcmp(mode, "DCR") != 0 && strcmp(mode, "CRD") != 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "mode '%s' is not DCR or CRD", mode);
  d2s_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, d2s_compute, (ol_kernel **)&k));
  k->blocksize = b;
  k->crd = strcmp(mode, "CRD") == 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ registry */

#define ALL "all tensor types"
#define NUM "float16 bfloat16 float32 float64 int8-64 uint8-64"
const ol_op_schema ol_schema_tensor[] = {
    /* Concat(past, new): a bound cache appended to, or read at its pitch */
    {"", "Concat", 1, OL_OPSET_LATEST, concat_create, ol_infer_concat, ALL, .pitched_inputs = 1,
     .caches = {{0, 0, OL_CACHE_AXIS_ATTR}}, .num_caches = 1},
    {"", "Split", 1, OL_OPSET_LATEST, split_create, ol_infer_split, ALL},
    {"", "Slice", 1, OL_OPSET_LATEST, slice_create, ol_infer_slice, ALL},
    {"", "Gather", 1, OL_OPSET_LATEST, ol_tensor_gather_create, ol_infer_gather, ALL},
    {"", "GatherElements", 11, OL_OPSET_LATEST, ol_tensor_gather_elements_create, ol_infer_gather_elements, ALL},
    {"", "GatherND", 11, OL_OPSET_LATEST, ol_tensor_gather_nd_create, ol_infer_gather_nd, ALL},
    {"", "ScatterND", 11, OL_OPSET_LATEST, ol_tensor_scatter_nd_create, ol_infer_like_input0, ALL " (reductions: " NUM " bool)"},
    {"", "ScatterElements", 11, OL_OPSET_LATEST, ol_tensor_scatter_elements_create, ol_infer_like_input0,
     ALL " (reductions: " NUM " bool)"},
    {"", "Scatter", 9, 10, ol_tensor_scatter_elements_create, ol_infer_like_input0, ALL},
    {"", "Transpose", 1, OL_OPSET_LATEST, transpose_create, ol_infer_transpose, ALL},
    {"", "Expand", 8, OL_OPSET_LATEST, expand_create, ol_infer_expand, ALL, .pitched_inputs = 1},
    {"", "CenterCropPad", 18, OL_OPSET_LATEST, ccp_create, ol_infer_center_crop_pad, ALL},
    {"", "Tile", 6, OL_OPSET_LATEST, tile_create, ol_infer_tile, ALL},
    {"", "Pad", 1, OL_OPSET_LATEST, pad_create, ol_infer_pad, ALL},
    {"", "DepthToSpace", 1, OL_OPSET_LATEST, d2s_create, ol_infer_depth_space, ALL},
    {"", "SpaceToDepth", 1, OL_OPSET_LATEST, d2s_create, ol_infer_depth_space, ALL},
    {"", "Compress", 9, OL_OPSET_LATEST, ol_tensor_compress_create, ol_infer_compress, ALL},
    {"", "Unique", 11, OL_OPSET_LATEST, ol_tensor_unique_create, ol_infer_unique, NUM " string bool"},
    {"", "CumSum", 11, OL_OPSET_LATEST, ol_tensor_cumsum_create, ol_infer_like_input0,
     "float16 bfloat16 float32 float64 int32 int64 uint32 uint64"},
    {"", "TopK", 1, OL_OPSET_LATEST, ol_tensor_topk_create, ol_infer_topk, NUM},
    {"", "ArgMax", 1, OL_OPSET_LATEST, ol_tensor_argmax_create, ol_infer_reduce, NUM " bool"},
    {"", "ArgMin", 1, OL_OPSET_LATEST, ol_tensor_argmin_create, ol_infer_reduce, NUM " bool"},
    {"", "Hardmax", 1, OL_OPSET_LATEST, ol_tensor_hardmax_create, ol_infer_like_input0, "float16 bfloat16 float32 float64"},
    {0},
};
