/* Reductions (ai.onnx), opsets 1-23:
 *
 *   ReduceSum (axes input from 13), ReduceMean, ReduceMax, ReduceMin, ReduceProd,
 *   ReduceL1, ReduceL2, ReduceSumSquare, ReduceLogSum, ReduceLogSumExp
 *   (axes input from 18); keepdims; noop_with_empty_axes with the axes input.
 *
 * Element types: float32, float64, float16, bfloat16, int32, int64, uint32,
 * uint64, plus int8/uint8 (and bool for Max/Min).
 *
 * Accumulation (documented determinism contract): floating inputs accumulate
 * in double, integers in 64-bit wrapping arithmetic, each output element
 * summing its inputs strictly in increasing input index order. The result is
 * rounded once to the output type. No reordering depends on vector width or
 * thread count, so native and wasm results are identical.
 *
 * With noop_with_empty_axes and empty axes every element is "reduced" on its
 * own: Sum/Mean/Max/Min/Prod/LogSumExp return the input, L1/L2 |x|,
 * SumSquare x*x, LogSum log(x) (this matches the ONNX reference). LogSumExp
 * subtracts the per-output maximum before exponentiating. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/reduce/reduce.h"
#include "simd/math.h"

typedef enum red_op {
  R_SUM, R_MEAN, R_MAX, R_MIN, R_PROD, R_L1, R_L2, R_SUMSQ, R_LOGSUM, R_LOGSUMEXP
} red_op;

typedef struct reduce_kernel {
  ol_kernel base;
  red_op op;
  bool keepdims, noop_empty;
  int axes_input_from; /* opset from which axes is an input */
  int64_t n_axes;      /* attribute; -1 absent */
  const int64_t *axes;
} reduce_kernel;

/* ------------------------------------------------------------ element access */

static bool is_int_path(red_op op, ol_dtype dt) {
  if (ol_dtype_info(dt)->is_float) return false;
  return op == R_SUM || op == R_MEAN || op == R_MAX || op == R_MIN || op == R_PROD ||
         op == R_L1 || op == R_SUMSQ;
}

static bool is_unsigned(ol_dtype dt) {
  return dt == OL_DTYPE_UINT8 || dt == OL_DTYPE_UINT16 || dt == OL_DTYPE_UINT32 ||
         dt == OL_DTYPE_UINT64 || dt == OL_DTYPE_BOOL;
}

static void load_double(ol_dtype dt, const void *p, int64_t off, int64_t n, double *out) {
  switch (dt) {
    case OL_DTYPE_FLOAT: {
      const float *s = (const float *)p + off;
      for (int64_t i = 0; i < n; i++) out[i] = s[i];
      break;
    }
    case OL_DTYPE_DOUBLE: memcpy(out, (const double *)p + off, sizeof(double) * (size_t)n); break;
    default: {
      ol_to_double_fn get = ol_dtype_info(dt)->to_double;
      for (int64_t i = 0; i < n; i++) out[i] = get(p, off + i);
    }
  }
}

/* Integers as 64-bit: sign-extended for signed types, zero-extended otherwise. */
static void load_int(ol_dtype dt, const void *p, int64_t off, int64_t n, int64_t *out) {
#define LI(T) \
  for (int64_t i = 0; i < n; i++) out[i] = (int64_t)((const T *)p)[off + i]; \
  break;
  switch (dt) {
    case OL_DTYPE_INT8: LI(int8_t)
    case OL_DTYPE_UINT8: case OL_DTYPE_BOOL: LI(uint8_t)
    case OL_DTYPE_INT16: LI(int16_t)
    case OL_DTYPE_UINT16: LI(uint16_t)
    case OL_DTYPE_INT32: LI(int32_t)
    case OL_DTYPE_UINT32: LI(uint32_t)
    default: memcpy(out, (const int64_t *)p + off, sizeof(int64_t) * (size_t)n); break;
  }
#undef LI
}

static void store_double(ol_dtype dt, void *p, int64_t i, double v) {
  switch (dt) {
    case OL_DTYPE_FLOAT: ((float *)p)[i] = (float)v; break;
    case OL_DTYPE_DOUBLE: ((double *)p)[i] = v; break;
    default: {
      const ol_dtype_traits *t = ol_dtype_info(dt);
      /* integer results of double-path ops (L2, LogSum, LogSumExp): truncate */
      if (!t->is_float && v != v) v = 0;
      if (t->from_double) t->from_double(p, i, v);
    }
  }
}

static void store_int(ol_dtype dt, void *p, int64_t i, int64_t v) {
  switch (dt) {
    case OL_DTYPE_INT8: ((int8_t *)p)[i] = (int8_t)v; break;
    case OL_DTYPE_UINT8: ((uint8_t *)p)[i] = (uint8_t)v; break;
    case OL_DTYPE_BOOL: ((uint8_t *)p)[i] = v != 0; break;
    case OL_DTYPE_INT16: ((int16_t *)p)[i] = (int16_t)v; break;
    case OL_DTYPE_UINT16: ((uint16_t *)p)[i] = (uint16_t)v; break;
    case OL_DTYPE_INT32: ((int32_t *)p)[i] = (int32_t)v; break;
    case OL_DTYPE_UINT32: ((uint32_t *)p)[i] = (uint32_t)v; break;
    default: ((int64_t *)p)[i] = v; break;
  }
}

/* ------------------------------------------------------------ row kernels */

static double d_init(red_op op) {
  switch (op) {
    case R_PROD: return 1.0;
    case R_MAX: return -INFINITY;
    case R_MIN: return INFINITY;
    default: return 0.0;
  }
}

/* acc = acc (op) x[0..n), sequentially. shift: LogSumExp max. */
static double d_reduce_row(red_op op, const double *x, int64_t n, double acc, double shift) {
  switch (op) {
    case R_MAX:
      for (int64_t i = 0; i < n; i++) acc = (x[i] > acc || x[i] != x[i]) && acc == acc ? x[i] : acc;
      return acc;
    case R_MIN:
      for (int64_t i = 0; i < n; i++) acc = (x[i] < acc || x[i] != x[i]) && acc == acc ? x[i] : acc;
      return acc;
    case R_PROD:
      for (int64_t i = 0; i < n; i++) acc = acc * x[i];
      return acc;
    case R_L1:
      for (int64_t i = 0; i < n; i++) acc = acc + fabs(x[i]);
      return acc;
    case R_L2:
    case R_SUMSQ:
      for (int64_t i = 0; i < n; i++) acc = acc + x[i] * x[i];
      return acc;
    case R_LOGSUMEXP:
      for (int64_t i = 0; i < n; i++) acc = acc + ol_exp(x[i] - shift);
      return acc;
    default:
      for (int64_t i = 0; i < n; i++) acc = acc + x[i];
      return acc;
  }
}

/* acc[i] = acc[i] (op) x[i] for i in [0, n). */
static void d_combine_row(red_op op, const double *x, int64_t n, double *acc, const double *shift) {
  switch (op) {
    case R_MAX:
      for (int64_t i = 0; i < n; i++)
        if ((x[i] > acc[i] || x[i] != x[i]) && acc[i] == acc[i]) acc[i] = x[i];
      return;
    case R_MIN:
      for (int64_t i = 0; i < n; i++)
        if ((x[i] < acc[i] || x[i] != x[i]) && acc[i] == acc[i]) acc[i] = x[i];
      return;
    case R_PROD:
      for (int64_t i = 0; i < n; i++) acc[i] = acc[i] * x[i];
      return;
    case R_L1:
      for (int64_t i = 0; i < n; i++) acc[i] = acc[i] + fabs(x[i]);
      return;
    case R_L2:
    case R_SUMSQ:
      for (int64_t i = 0; i < n; i++) acc[i] = acc[i] + x[i] * x[i];
      return;
    case R_LOGSUMEXP:
      for (int64_t i = 0; i < n; i++) acc[i] = acc[i] + ol_exp(x[i] - shift[i]);
      return;
    default:
      for (int64_t i = 0; i < n; i++) acc[i] = acc[i] + x[i];
      return;
  }
}

static int64_t i_init(red_op op, bool uns) {
  switch (op) {
    case R_PROD: return 1;
    case R_MAX: return uns ? 0 : INT64_MIN;
    case R_MIN: return uns ? (int64_t)UINT64_MAX : INT64_MAX;
    default: return 0;
  }
}

static inline int64_t i_step(red_op op, bool uns, int64_t acc, int64_t x) {
  switch (op) {
    case R_MAX:
      return uns ? ((uint64_t)x > (uint64_t)acc ? x : acc) : (x > acc ? x : acc);
    case R_MIN:
      return uns ? ((uint64_t)x < (uint64_t)acc ? x : acc) : (x < acc ? x : acc);
    case R_PROD: return (int64_t)((uint64_t)acc * (uint64_t)x);
    case R_L1: return (int64_t)((uint64_t)acc + (uint64_t)(x < 0 && !uns ? 0 - (uint64_t)x : (uint64_t)x));
    case R_SUMSQ: return (int64_t)((uint64_t)acc + (uint64_t)x * (uint64_t)x);
    default: return (int64_t)((uint64_t)acc + (uint64_t)x);
  }
}

/* ------------------------------------------------------------ driver */

typedef struct red_geom {
  int r;                       /* coalesced rank */
  int64_t d[OL_MAX_RANK];      /* coalesced dims */
  bool red[OL_MAX_RANK];       /* reduced? */
  int64_t ostr[OL_MAX_RANK];   /* output stride per coalesced dim (0 when reduced) */
  int64_t out_count, in_count, per_out;
} red_geom;

static void geom_make(const ol_tensor *x, const bool *reduced, red_geom *g) {
  g->r = 0;
  g->per_out = 1;
  for (int i = 0; i < x->rank; i++) {
    if (reduced[i]) g->per_out *= x->dims[i];
    if (x->dims[i] == 1) continue;
    if (g->r > 0 && g->red[g->r - 1] == reduced[i]) {
      g->d[g->r - 1] *= x->dims[i];
      continue;
    }
    g->d[g->r] = x->dims[i];
    g->red[g->r] = reduced[i];
    g->r++;
  }
  int64_t s = 1;
  for (int i = g->r - 1; i >= 0; i--) {
    g->ostr[i] = g->red[i] ? 0 : s;
    if (!g->red[i]) s *= g->d[i];
  }
  g->out_count = s;
  g->in_count = ol_tcount(x);
}

/* Walks the input rows (innermost coalesced dim); fn(row_offset, out_offset). */
#define FOR_EACH_ROW(g, ROW, OUT, ...)                                   \
  do {                                                                    \
    int64_t idx_[OL_MAX_RANK] = {0};                                      \
    int64_t L_ = (g)->r ? (g)->d[(g)->r - 1] : 1;                         \
    int64_t rows_ = L_ ? (g)->in_count / L_ : 0;                          \
    int64_t OUT = 0;                                                      \
    for (int64_t ROW = 0; ROW < rows_; ROW++) {                           \
      __VA_ARGS__;                                                        \
      for (int i_ = (g)->r - 2; i_ >= 0; i_--) {                          \
        OUT += (g)->ostr[i_];                                             \
        if (++idx_[i_] < (g)->d[i_]) break;                               \
        OUT -= (g)->ostr[i_] * (g)->d[i_];                                \
        idx_[i_] = 0;                                                     \
      }                                                                   \
    }                                                                     \
  } while (0)

/* The scratch rows come from the run's allocator: inside a session run its
 * payload pool hands back the previous run's blocks (no malloc per token). */
static ol_status reduce_double(ol_allocator *a, red_op op, const ol_tensor *x, const red_geom *g, ol_tensor *y) {
  int64_t L = g->r ? g->d[g->r - 1] : 1;
  bool inner_red = g->r && g->red[g->r - 1];
  double *acc = ol_alloc(a, sizeof(double) * (size_t)(g->out_count + 1));
  double *row = ol_alloc(a, sizeof(double) * (size_t)(L + 1));
  double *shift = NULL;
  if (!acc || !row) {
    ol_dealloc(a, acc);
    ol_dealloc(a, row);
    return OL_OUT_OF_MEMORY;
  }
  const void *src = ol_tdata(x);
  if (op == R_LOGSUMEXP) {
    shift = ol_alloc(a, sizeof(double) * (size_t)(g->out_count + 1));
    if (!shift) {
      ol_dealloc(a, acc);
      ol_dealloc(a, row);
      return OL_OUT_OF_MEMORY;
    }
    for (int64_t i = 0; i < g->out_count; i++) shift[i] = -INFINITY;
    FOR_EACH_ROW(g, rw, o, {
      load_double(x->dtype, src, rw * L, L, row);
      if (inner_red) shift[o] = d_reduce_row(R_MAX, row, L, shift[o], 0);
      else d_combine_row(R_MAX, row, L, shift + o, NULL);
    });
    for (int64_t i = 0; i < g->out_count; i++)
      if (shift[i] == -INFINITY || shift[i] == INFINITY || shift[i] != shift[i]) shift[i] = 0;
  }
  double init = d_init(op);
  for (int64_t i = 0; i < g->out_count; i++) acc[i] = init;
  FOR_EACH_ROW(g, rw, o, {
    load_double(x->dtype, src, rw * L, L, row);
    if (inner_red) acc[o] = d_reduce_row(op, row, L, acc[o], shift ? shift[o] : 0);
    else d_combine_row(op, row, L, acc + o, shift ? shift + o : NULL);
  });
  void *dst = ol_tdata(y);
  for (int64_t i = 0; i < g->out_count; i++) {
    double v = acc[i];
    switch (op) {
      case R_MEAN: v = v / (double)g->per_out; break;
      case R_L2: v = sqrt(v); break;
      case R_LOGSUM: v = ol_log(v); break;
      case R_LOGSUMEXP: v = ol_log(v) + shift[i]; break;
      default: break;
    }
    store_double(y->dtype, dst, i, v);
  }
  ol_dealloc(a, acc);
  ol_dealloc(a, row);
  ol_dealloc(a, shift);
  return OL_OK;
}

static ol_status reduce_int(ol_allocator *a, red_op op, const ol_tensor *x, const red_geom *g, ol_tensor *y) {
  int64_t L = g->r ? g->d[g->r - 1] : 1;
  bool inner_red = g->r && g->red[g->r - 1];
  bool uns = is_unsigned(x->dtype);
  int64_t *acc = ol_alloc(a, sizeof(int64_t) * (size_t)(g->out_count + 1));
  int64_t *row = ol_alloc(a, sizeof(int64_t) * (size_t)(L + 1));
  if (!acc || !row) {
    ol_dealloc(a, acc);
    ol_dealloc(a, row);
    return OL_OUT_OF_MEMORY;
  }
  int64_t init = i_init(op, uns);
  for (int64_t i = 0; i < g->out_count; i++) acc[i] = init;
  const void *src = ol_tdata(x);
  FOR_EACH_ROW(g, rw, o, {
    load_int(x->dtype, src, rw * L, L, row);
    if (inner_red) {
      int64_t a = acc[o];
      for (int64_t j = 0; j < L; j++) a = i_step(op, uns, a, row[j]);
      acc[o] = a;
    } else {
      for (int64_t j = 0; j < L; j++) acc[o + j] = i_step(op, uns, acc[o + j], row[j]);
    }
  });
  void *dst = ol_tdata(y);
  for (int64_t i = 0; i < g->out_count; i++) {
    int64_t v = acc[i];
    if (op == R_MEAN)
      v = g->per_out == 0 ? 0
          : uns ? (int64_t)((uint64_t)v / (uint64_t)g->per_out)
                : v / g->per_out;
    store_int(y->dtype, dst, i, v);
  }
  ol_dealloc(a, acc);
  ol_dealloc(a, row);
  return OL_OK;
}

static bool dtype_ok(red_op op, ol_dtype dt, int opset) {
  switch (dt) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_INT32: case OL_DTYPE_INT64: case OL_DTYPE_UINT32: case OL_DTYPE_UINT64:
      return true;
    case OL_DTYPE_INT8: case OL_DTYPE_UINT8:
      return true;
    case OL_DTYPE_BOOL:
      return (op == R_MAX || op == R_MIN) && opset >= 20;
    default:
      return false;
  }
}

static ol_status reduce_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  reduce_kernel *k = (reduce_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (!dtype_ok(k->op, x->dtype, node->opset)) return ol_kernel_bad_dtype(node, "input", x->dtype);
  int64_t axes[OL_MAX_RANK];
  int64_t n_axes = -1; /* -1: not given */
  if (node->opset >= k->axes_input_from) {
    const ol_tensor *at = ol_ctx_input(ctx, 1);
    if (at) {
      size_t n;
      ol_status s = ol_tensor_to_int64s(at, axes, OL_MAX_RANK, &n);
      if (s != OL_OK)
        return ol_error_wrap(s, "%s node '%s': input 'axes'", node->op_type, node->name);
      n_axes = (int64_t)n;
    }
  } else if (k->n_axes >= 0) {
    if (k->n_axes > OL_MAX_RANK)
      return ol_kernel_error(node, OL_INVALID_MODEL, "too many axes (%lld)", (long long)k->n_axes);
    n_axes = k->n_axes;
    if (n_axes) memcpy(axes, k->axes, sizeof(int64_t) * (size_t)n_axes);
  }
  bool reduced[OL_MAX_RANK] = {false};
  bool noop = n_axes <= 0 && k->noop_empty && node->opset >= k->axes_input_from;
  if (n_axes <= 0) {
    if (!noop)
      for (int i = 0; i < x->rank; i++) reduced[i] = true;
  } else {
    for (int64_t i = 0; i < n_axes; i++) {
      int a;
      OL_TRY(ol_normalize_axis(node, axes[i], x->rank, &a));
      if (x->rank == 0) break; /* a scalar reduces to itself */
      if (reduced[a])
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "axis %lld is repeated", (long long)axes[i]);
      reduced[a] = true;
    }
  }
  int64_t dims[OL_MAX_RANK];
  int r = 0;
  for (int i = 0; i < x->rank; i++) {
    if (!reduced[i]) dims[r++] = x->dims[i];
    else if (k->keepdims) dims[r++] = 1;
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, r, dims, &y));
  red_geom g;
  geom_make(x, reduced, &g);
  red_op op = k->op;
  if (noop && (op == R_MEAN || op == R_MAX || op == R_MIN || op == R_PROD || op == R_LOGSUMEXP))
    op = R_SUM; /* single-element reductions that return the element */
  if (is_int_path(op, x->dtype)) return reduce_int(ctx->allocator, op, x, &g, y);
  return reduce_double(ctx->allocator, op, x, &g, y);
}

static ol_status reduce_create(const ol_node *node, red_op op, ol_kernel **out) {
  reduce_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, reduce_compute, (ol_kernel **)&k));
  k->op = op;
  k->keepdims = ol_attr_int(node, "keepdims", 1) != 0;
  k->axes_input_from = op == R_SUM ? 13 : 18;
  k->noop_empty = node->opset >= k->axes_input_from &&
                  ol_attr_int(node, "noop_with_empty_axes", 0) != 0;
  k->n_axes = node->opset < k->axes_input_from ? ol_attr_ints(node, "axes", &k->axes) : -1;
  *out = &k->base;
  return OL_OK;
}

#define REDUCE_CREATE(NAME, OP) \
  static ol_status NAME(const ol_node *node, ol_kernel **out) { return reduce_create(node, OP, out); }
REDUCE_CREATE(sum_create, R_SUM)
REDUCE_CREATE(mean_create, R_MEAN)
REDUCE_CREATE(max_create, R_MAX)
REDUCE_CREATE(min_create, R_MIN)
REDUCE_CREATE(prod_create, R_PROD)
REDUCE_CREATE(l1_create, R_L1)
REDUCE_CREATE(l2_create, R_L2)
REDUCE_CREATE(sumsq_create, R_SUMSQ)
REDUCE_CREATE(logsum_create, R_LOGSUM)
REDUCE_CREATE(logsumexp_create, R_LOGSUMEXP)

#define RT "float16 bfloat16 float32 float64 int8 uint8 int32 int64 uint32 uint64"
const ol_op_schema ol_schema_reduce[] = {
    {"", "ReduceSum", 1, OL_OPSET_LATEST, sum_create, ol_infer_reduce, RT},
    {"", "ReduceMean", 1, OL_OPSET_LATEST, mean_create, ol_infer_reduce, RT},
    {"", "ReduceMax", 1, OL_OPSET_LATEST, max_create, ol_infer_reduce, RT " bool(20+)"},
    {"", "ReduceMin", 1, OL_OPSET_LATEST, min_create, ol_infer_reduce, RT " bool(20+)"},
    {"", "ReduceProd", 1, OL_OPSET_LATEST, prod_create, ol_infer_reduce, RT},
    {"", "ReduceL1", 1, OL_OPSET_LATEST, l1_create, ol_infer_reduce, RT},
    {"", "ReduceL2", 1, OL_OPSET_LATEST, l2_create, ol_infer_reduce, RT},
    {"", "ReduceSumSquare", 1, OL_OPSET_LATEST, sumsq_create, ol_infer_reduce, RT},
    {"", "ReduceLogSum", 1, OL_OPSET_LATEST, logsum_create, ol_infer_reduce, RT},
    {"", "ReduceLogSumExp", 1, OL_OPSET_LATEST, logsumexp_create, ol_infer_reduce, RT},
    {0},
};
