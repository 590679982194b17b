/* onnxruntime contrib operators (domain com.microsoft, opset 1), semantics as
 * in onnxruntime's docs/ContribOperators.md. This file:
 *
 *   SimplifiedLayerNormalization 1: registered in the default domain (opset
 *       1+), where onnxruntime registers it (it has no com.microsoft form);
 *       axis, epsilon; outputs Y, inv_std_var
 *   SkipLayerNormalization 1, SkipSimplifiedLayerNormalization 1: skip of the
 *       input's shape or broadcast over leading dimensions, optional beta/bias,
 *       outputs mean, inv_std_var, input_skip_bias_sum
 *   FastGelu 1 (optional bias), Gelu 1, BiasGelu 1, QuickGelu 1 (alpha), BiasAdd 1
 *   BiasSplitGelu 1: (X + bias) split in halves L, R; L * Gelu(R)
 *       (onnxruntime has BiasAdd and BiasSplitGelu on CUDA only: implemented
 *       from the schema, unit-tested, not in the CPU parity suite)
 *   FusedMatMul 1: transA, transB, alpha, numpy batching (transBatch* = 0)
 *   RotaryEmbedding 1: interleaved, rotary_embedding_dim, num_heads,
 *       position_ids (B, S) or a (1) offset, input (B, S, hidden) or (B, N, S, H)
 * matmul/matmul_nbits.c: MatMulNBits 1, GatherBlockQuantized 1.
 * contrib_ms_attn.c: MultiHeadAttention 1, GroupQueryAttention 1.
 *
 * float32 and float16 (computed in float32: float16 widened a row or a
 * block at a time through the dtype table, rounded on store). Statistics of
 * normalizations are summed in double; dot products in float with a fixed
 * lane order (ol_dot_f32), identical natively and in wasm. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/nn/nn.h"
#include "ops/transformer/transformer.h"
#include "simd/math.h"


/* ------------------------------------------------------------ shared helpers */

static bool is_ft(ol_dtype dt) { return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_FLOAT16; }

static ol_status require_ft(const ol_node *node, const ol_tensor *t, const char *what,
                            ol_dtype want) {
  if (!is_ft(t->dtype)) return ol_kernel_bad_dtype(node, what, t->dtype);
  if (want != OL_DTYPE_UNDEFINED && t->dtype != want)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s is %s, expected %s", what,
                           ol_dtype_name(t->dtype), ol_dtype_name(want));
  return OL_OK;
}

/* Scratch for float32 views of float16 data (ol_floats_row), carved from
 * one block of the run's allocator. */
typedef struct fscratch {
  float *base;
  int64_t used;
} fscratch;

/* Reserves the floats a view of n elements of dt needs: NULL for float32
 * (read in place; no scratch). */
static float *fs_take(fscratch *f, ol_dtype dt, int64_t n) {
  if (!f->base || !ol_dtype_widens(dt)) return NULL;
  float *p = f->base + f->used;
  f->used += n;
  return p;
}

/* Whole parameter t (NULL: absent) as float32, widened into f's scratch. */
static const float *fs_param(fscratch *f, const ol_tensor *t) {
  if (!t) return NULL;
  int64_t n = ol_tcount(t);
  return ol_floats_row(t->dtype, ol_tdata(t), 0, n, fs_take(f, t->dtype, n));
}

/* ------------------------------------------------------------ layer norms */

typedef enum { LN_SIMPLIFIED, LN_SKIP, LN_SKIP_SIMPLIFIED } ln_kind;

typedef struct ln_kernel {
  ol_kernel base;
  ln_kind kind;
  int64_t axis;
  double epsilon;
} ln_kernel;

/* Element count of a 1-D (or any-rank) parameter that must equal n. */
static ol_status check_param(const ol_node *node, const ol_tensor *p, const char *what, int64_t n,
                             ol_dtype dt) {
  if (!p) return OL_OK;
  OL_TRY(require_ft(node, p, what, dt));
  if (ol_tcount(p) != n || (p->rank > 0 && p->dims[p->rank - 1] != n))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s must have %lld values (hidden size), got %lld",
                           what, (long long)n, (long long)ol_tcount(p));
  return OL_OK;
}

static ol_status ln_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  ln_kernel *k = (ln_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *skip = NULL, *gamma, *beta = NULL, *bias = NULL;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_ft(node, x, "input", OL_DTYPE_UNDEFINED));
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 1");
  int64_t outer, n;
  if (k->kind == LN_SIMPLIFIED) {
    OL_TRY(ol_ctx_require(ctx, 1, &gamma));
    int axis;
    OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
    outer = ol_shape_count(axis, x->dims);
    n = ol_shape_count(x->rank - axis, x->dims + axis);
    OL_TRY(require_ft(node, gamma, "scale", OL_DTYPE_UNDEFINED));
    if (ol_tcount(gamma) != n)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scale must have %lld values, got %lld",
                             (long long)n, (long long)ol_tcount(gamma));
  } else {
    OL_TRY(ol_ctx_require(ctx, 1, &skip));
    OL_TRY(ol_ctx_require(ctx, 2, &gamma));
    if (k->kind == LN_SKIP) {
      beta = ol_ctx_input(ctx, 3);
      bias = ol_ctx_input(ctx, 4);
    } else {
      bias = ol_ctx_input(ctx, 3);
    }
    if (x->rank != 2 && x->rank != 3)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be 2-D or 3-D, got rank %d",
                             x->rank);
    n = x->dims[x->rank - 1];
    outer = ol_tcount(x) / (n ? n : 1);
    OL_TRY(require_ft(node, skip, "skip", x->dtype));
    /* skip: same shape, or the input's trailing dimensions (broadcast) */
    bool ok = skip->rank >= 1 && skip->rank <= x->rank;
    for (int i = 0; ok && i < skip->rank; i++) {
      int xi = x->rank - skip->rank + i;
      ok = skip->dims[i] == x->dims[xi] || (i == 0 && skip->dims[i] == 1 && skip->rank == x->rank);
    }
    if (!ok || ol_tcount(skip) == 0 || ol_tcount(x) % ol_tcount(skip) != 0) {
      char b1[160], b2[160];
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "skip %s does not match input %s",
                             ol_tensor_describe(skip, b1, sizeof b1),
                             ol_tensor_describe(x, b2, sizeof b2));
    }
    OL_TRY(check_param(node, gamma, "gamma", n, x->dtype));
    OL_TRY(check_param(node, beta, "beta", n, x->dtype));
    OL_TRY(check_param(node, bias, "bias", n, x->dtype));
  }
  ol_tensor *y, *mean_t = NULL, *inv_t = NULL, *sum_t = NULL;
  int64_t sdims[OL_MAX_RANK];
  int srank = x->rank;
  int axis_first = k->kind == LN_SIMPLIFIED ? 0 : x->rank - 1;
  if (k->kind == LN_SIMPLIFIED) {
    int axis;
    OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
    axis_first = axis;
  }
  for (int i = 0; i < x->rank; i++) sdims[i] = i < axis_first ? x->dims[i] : 1;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  int inv_idx = k->kind == LN_SIMPLIFIED ? 1 : 2;
  if (k->kind != LN_SIMPLIFIED && ol_ctx_wants_output(ctx, 1))
    OL_TRY(ol_ctx_output(ctx, 1, OL_DTYPE_FLOAT, srank, sdims, &mean_t));
  if (ol_ctx_wants_output(ctx, (size_t)inv_idx))
    OL_TRY(ol_ctx_output(ctx, (size_t)inv_idx, OL_DTYPE_FLOAT, srank, sdims, &inv_t));
  if (k->kind != LN_SIMPLIFIED && ol_ctx_wants_output(ctx, 3))
    OL_TRY(ol_ctx_output(ctx, 3, x->dtype, x->rank, x->dims, &sum_t));
  if (outer * n == 0) return OL_OK;
  /* float16: input and skip rows widened a row at a time, the parameters once */
  fscratch fs = {NULL, 0};
  int64_t need = 2 * ol_floats_scratch(x->dtype, n);
  const ol_tensor *params[3] = {gamma, beta, bias};
  for (int i = 0; i < 3; i++) need += params[i] ? ol_floats_scratch(params[i]->dtype, ol_tcount(params[i])) : 0;
  fs.base = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(need + 1));
  float *xw = fs_take(&fs, x->dtype, n), *skw = fs_take(&fs, x->dtype, n);
  const float *g = fs_param(&fs, gamma), *be = fs_param(&fs, beta), *bi = fs_param(&fs, bias);
  float *row = ol_alloc(ctx->allocator, sizeof(float) * (size_t)n);
  float *out = ol_alloc(ctx->allocator, sizeof(float) * (size_t)n);
  ol_status s = OL_OK;
  bool oom = !row || !out || !fs.base;
  if (oom) s = OL_OUT_OF_MEMORY;
  int64_t skn = skip ? ol_tcount(skip) : 1;
  bool simplified = k->kind != LN_SKIP;
  for (int64_t o = 0; o < outer && s == OL_OK; o++) {
    int64_t base = o * n;
    double sum = 0.0, sq = 0.0;
    /* skip has the input's trailing dimensions: row base % skn is the one */
    const float *xf = ol_floats_row(x->dtype, ol_tdata(x), base, n, xw);
    const float *sk = skip ? ol_floats_row(x->dtype, ol_tdata(skip), base % skn, n, skw) : NULL;
    for (int64_t j = 0; j < n; j++) {
      float val = xf[j];
      if (sk) val = val + sk[j];
      if (bi) val = val + bi[j];
      row[j] = val;
      sum += val;
      sq += (double)val * (double)val;
    }
    if (sum_t) ol_floats_store(sum_t, base, row, n);
    double mean = sum / (double)n, denom;
    if (simplified)
      denom = sqrt(sq / (double)n + k->epsilon);
    else {
      double var = sq / (double)n - mean * mean;
      denom = sqrt((var > 0 ? var : 0.0) + k->epsilon);
    }
    for (int64_t j = 0; j < n; j++) {
      if (simplified) {
        out[j] = (float)((double)row[j] / denom) * g[j];
      } else {
        float val = (float)(((double)row[j] - mean) / denom) * g[j];
        if (be) val = val + be[j];
        out[j] = val;
      }
    }
    ol_floats_store(y, base, out, n);
    /* simplified forms have no mean: 0, as onnxruntime writes */
    if (mean_t) ((float *)ol_tdata(mean_t))[o] = simplified ? 0.0f : (float)mean;
    if (inv_t) ((float *)ol_tdata(inv_t))[o] = (float)(1.0 / denom);
  }
  ol_dealloc(ctx->allocator, fs.base);
  ol_dealloc(ctx->allocator, row);
  ol_dealloc(ctx->allocator, out);
  return s;
}

static ol_status ln_create_common(const ol_node *node, ln_kind kind, ol_kernel **out) {
  float eps = ol_attr_float(node, "epsilon", 1e-5f);
  if (!(eps >= 0.0f))
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'epsilon' must be >= 0");
  if (kind == LN_SIMPLIFIED) {
    int64_t stash = ol_attr_int(node, "stash_type", 1);
    if (stash != 1)
      return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'stash_type' must be 1, got %lld",
                             (long long)stash);
  }
  ln_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, ln_compute, (ol_kernel **)&k));
  k->kind = kind;
  k->axis = ol_attr_int(node, "axis", -1);
  k->epsilon = eps;
  *out = &k->base;
  return OL_OK;
}
static ol_status simplified_ln_create(const ol_node *node, ol_kernel **out) {
  return ln_create_common(node, LN_SIMPLIFIED, out);
}
static ol_status skip_ln_create(const ol_node *node, ol_kernel **out) {
  return ln_create_common(node, LN_SKIP, out);
}
static ol_status skip_simplified_ln_create(const ol_node *node, ol_kernel **out) {
  return ln_create_common(node, LN_SKIP_SIMPLIFIED, out);
}

/* ------------------------------------------------------------ Gelu family, BiasAdd */

typedef enum { G_FAST, G_ERF, G_BIAS_ERF, G_QUICK, G_BIAS_ADD } gelu_kind;

typedef struct gelu_kernel {
  ol_kernel base;
  gelu_kind kind;
  float alpha;
} gelu_kernel;

static inline float gelu_erf(float x) { return 0.5f * x * (1.0f + ol_erff(x * 0.70710678118654752f)); }
static inline float gelu_tanh(float x) {
  float inner = 0.7978845608028654f * (x + 0.044715f * x * x * x);
  return 0.5f * x * (1.0f + ol_tanhf(inner));
}

static ol_status gelu_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  gelu_kernel *k = (gelu_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *bias = NULL, *skip = NULL;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(require_ft(node, x, "input X", OL_DTYPE_UNDEFINED));
  if (k->kind == G_FAST) bias = ol_ctx_input(ctx, 1);
  if (k->kind == G_BIAS_ERF || k->kind == G_BIAS_ADD) OL_TRY(ol_ctx_require(ctx, 1, &bias));
  if (k->kind == G_BIAS_ADD) {
    OL_TRY(ol_ctx_require(ctx, 2, &skip));
    OL_TRY(require_ft(node, skip, "skip", x->dtype));
    if (x->rank != 3 || skip->rank != 3 || memcmp(x->dims, skip->dims, sizeof(int64_t) * 3) != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "X and skip must be 3-D tensors of the same shape");
  }
  int64_t total = ol_tcount(x), nb = 0;
  if (bias) {
    OL_TRY(require_ft(node, bias, "bias", x->dtype));
    nb = ol_tcount(bias);
    if (x->rank == 0 || bias->rank != 1 || nb != x->dims[x->rank - 1])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "bias must be 1-D with the last dimension of X (%lld values)",
                             (long long)(x->rank ? x->dims[x->rank - 1] : 0));
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  if (total == 0) return OL_OK;
  /* rows of the last dimension (the bias's length): float16 input, skip and
   * results a row at a time in scratch, the bias widened once */
  int64_t n = x->rank ? x->dims[x->rank - 1] : 1, rows = total / n;
  fscratch fs = {NULL, 0};
  fs.base = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(3 * ol_floats_scratch(x->dtype, n) +
                                                              (bias ? ol_floats_scratch(x->dtype, nb) : 0) + 1));
  if (!fs.base) return OL_OUT_OF_MEMORY;
  float *xw = fs_take(&fs, x->dtype, n), *sw = fs_take(&fs, x->dtype, n), *ow = fs_take(&fs, x->dtype, n);
  const float *bf = fs_param(&fs, bias);
  for (int64_t r = 0; r < rows; r++) {
    const float *xf = ol_floats_row(x->dtype, ol_tdata(x), r * n, n, xw);
    const float *sf = skip ? ol_floats_row(x->dtype, ol_tdata(skip), r * n, n, sw) : NULL;
    float *o = ow ? ow : (float *)ol_tdata(y) + r * n;
    for (int64_t i = 0; i < n; i++) {
      float a = xf[i];
      if (bf) a = a + bf[i];
      switch (k->kind) {
        case G_FAST: o[i] = gelu_tanh(a); break;
        case G_ERF:
        case G_BIAS_ERF: o[i] = gelu_erf(a); break;
        case G_QUICK: o[i] = a * (1.0f / (1.0f + ol_expf(-(k->alpha * a)))); break;
        case G_BIAS_ADD: o[i] = a + sf[i]; break;
      }
    }
    if (ow) ol_floats_store(y, r * n, ow, n);
  }
  ol_dealloc(ctx->allocator, fs.base);
  return OL_OK;
}

static ol_status gelu_create_common(const ol_node *node, gelu_kind kind, ol_kernel **out) {
  gelu_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, gelu_compute, (ol_kernel **)&k));
  k->kind = kind;
  k->alpha = ol_attr_float(node, "alpha", 1.702f);
  *out = &k->base;
  return OL_OK;
}
static ol_status fast_gelu_create(const ol_node *node, ol_kernel **out) {
  return gelu_create_common(node, G_FAST, out);
}
static ol_status gelu_create(const ol_node *node, ol_kernel **out) {
  return gelu_create_common(node, G_ERF, out);
}
static ol_status bias_gelu_create(const ol_node *node, ol_kernel **out) {
  return gelu_create_common(node, G_BIAS_ERF, out);
}
static ol_status quick_gelu_create(const ol_node *node, ol_kernel **out) {
  return gelu_create_common(node, G_QUICK, out);
}
static ol_status bias_add_create(const ol_node *node, ol_kernel **out) {
  return gelu_create_common(node, G_BIAS_ADD, out);
}

/* BiasSplitGelu: X (B, HW, D) + bias (D) split into halves L, R on the last
 * axis; Y (B, HW, D/2) = L * Gelu(R) (erf form). */
static ol_status bias_split_gelu_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *bias;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &bias));
  OL_TRY(require_ft(node, x, "input X", OL_DTYPE_UNDEFINED));
  OL_TRY(require_ft(node, bias, "bias", x->dtype));
  if (x->rank != 3 || x->dims[2] % 2 != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input X must be 3-D with an even last dimension, got rank %d", x->rank);
  int64_t D = x->dims[2], half = D / 2;
  if (bias->rank != 1 || bias->dims[0] != D)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "bias must be 1-D with %lld values", (long long)D);
  int64_t od[3] = {x->dims[0], x->dims[1], half};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, 3, od, &y));
  int64_t rows = x->dims[0] * x->dims[1];
  if (rows * half == 0) return OL_OK;
  /* float16: a row of X at a time and the bias once, widened into scratch */
  fscratch fs = {NULL, 0};
  fs.base = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(2 * ol_floats_scratch(x->dtype, D) + 1));
  float *xw = fs_take(&fs, x->dtype, D);
  const float *bf = fs.base ? fs_param(&fs, bias) : NULL;
  float *row = ol_alloc(ctx->allocator, sizeof(float) * (size_t)half);
  ol_status s = OL_OK;
  if (!fs.base || !row) s = OL_OUT_OF_MEMORY;
  for (int64_t i = 0; i < rows && s == OL_OK; i++) {
    const float *xr = ol_floats_row(x->dtype, ol_tdata(x), i * D, D, xw);
    for (int64_t j = 0; j < half; j++) {
      float l = xr[j] + bf[j], r = xr[half + j] + bf[half + j];
      row[j] = l * gelu_erf(r);
    }
    ol_floats_store(y, i * half, row, half);
  }
  ol_dealloc(ctx->allocator, fs.base);
  ol_dealloc(ctx->allocator, row);
  return s;
}

static ol_status bias_split_gelu_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, bias_split_gelu_compute, out);
}

/* ------------------------------------------------------------ FusedMatMul */

typedef struct fmm_kernel {
  ol_kernel base;
  bool ta, tb;
  float alpha;
} fmm_kernel;

static ol_status fmm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  fmm_kernel *k = (fmm_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *b;
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &b));
  OL_TRY(require_ft(node, a, "A", OL_DTYPE_UNDEFINED));
  OL_TRY(require_ft(node, b, "B", a->dtype));
  if (a->rank < 1 || b->rank < 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A and B must have rank >= 1");
  /* logical (rows, cols) of op(A) and op(B); 1-D operands are never transposed */
  int64_t M, K, Kb, N;
  bool ta = k->ta && a->rank >= 2, tb = k->tb && b->rank >= 2;
  if (a->rank == 1) M = 1, K = a->dims[0];
  else if (ta) M = a->dims[a->rank - 1], K = a->dims[a->rank - 2];
  else M = a->dims[a->rank - 2], K = a->dims[a->rank - 1];
  if (b->rank == 1) Kb = b->dims[0], N = 1;
  else if (tb) Kb = b->dims[b->rank - 1], N = b->dims[b->rank - 2];
  else Kb = b->dims[b->rank - 2], N = b->dims[b->rank - 1];
  if (K != Kb)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "inner dimensions differ: op(A) has K = %lld, op(B) has K = %lld",
                           (long long)K, (long long)Kb);
  int abr = a->rank > 2 ? a->rank - 2 : 0, bbr = b->rank > 2 ? b->rank - 2 : 0;
  int brank;
  int64_t bd[OL_MAX_RANK];
  OL_TRY(ol_broadcast_shapes(node, abr, a->dims, bbr, b->dims, &brank, bd));
  int64_t astr[OL_MAX_RANK], bstr[OL_MAX_RANK], as = M * K, bs = K * N;
  for (int i = brank - 1; i >= 0; i--) {
    int ai = i - (brank - abr), bi = i - (brank - bbr);
    astr[i] = ai >= 0 && a->dims[ai] != 1 ? as : 0;
    bstr[i] = bi >= 0 && b->dims[bi] != 1 ? bs : 0;
    if (ai >= 0) as *= a->dims[ai];
    if (bi >= 0) bs *= b->dims[bi];
  }
  int64_t od[OL_MAX_RANK + 2];
  int orank = 0;
  for (int i = 0; i < brank; i++) od[orank++] = bd[i];
  if (a->rank > 1) od[orank++] = M;
  if (b->rank > 1) od[orank++] = N;
  if (orank > OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank too large");
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, a->dtype, orank, od, &y));
  int64_t batches = ol_shape_count(brank, bd);
  if (ol_tcount(y) == 0) return OL_OK;
  /* float16: one batch of A and of B at a time, widened into scratch */
  fscratch fs = {NULL, 0};
  fs.base = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(ol_floats_scratch(a->dtype, M * K + K * N) + 1));
  float *aw = fs_take(&fs, a->dtype, M * K), *bw = fs_take(&fs, a->dtype, K * N);
  float *arow = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(K + 1));
  float *bt = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(K * N + 1)); /* op(B) transposed: N x K */
  float *orow = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(N + 1));
  ol_status s = OL_OK;
  if (!fs.base || !arow || !bt || !orow) s = OL_OUT_OF_MEMORY;
  for (int64_t t = 0; t < batches && s == OL_OK; t++) {
    int64_t ao = 0, bo = 0, r = t;
    for (int i = brank - 1; i >= 0; i--) {
      int64_t c = r % bd[i];
      r /= bd[i];
      ao += c * astr[i];
      bo += c * bstr[i];
    }
    const float *B = ol_floats_row(a->dtype, ol_tdata(b), bo, K * N, bw);
    for (int64_t j = 0; j < N; j++)
      for (int64_t q = 0; q < K; q++) bt[j * K + q] = tb ? B[j * K + q] : B[q * N + j];
    const float *A = ol_floats_row(a->dtype, ol_tdata(a), ao, M * K, aw);
    for (int64_t i = 0; i < M; i++) {
      for (int64_t q = 0; q < K; q++) arow[q] = ta ? A[q * M + i] : A[i * K + q];
      for (int64_t j = 0; j < N; j++) orow[j] = k->alpha * ol_dot_f32(arow, bt + j * K, K);
      ol_floats_store(y, (t * M + i) * N, orow, N);
    }
  }
  ol_dealloc(ctx->allocator, fs.base);
  ol_dealloc(ctx->allocator, arow);
  ol_dealloc(ctx->allocator, bt);
  ol_dealloc(ctx->allocator, orow);
  return s;
}

static ol_status fmm_create(const ol_node *node, ol_kernel **out) {
  if (ol_attr_int(node, "transBatchA", 0) != 0 || ol_attr_int(node, "transBatchB", 0) != 0)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "transBatchA/transBatchB are not supported");
  fmm_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, fmm_compute, (ol_kernel **)&k));
  k->ta = ol_attr_int(node, "transA", 0) != 0;
  k->tb = ol_attr_int(node, "transB", 0) != 0;
  k->alpha = ol_attr_float(node, "alpha", 1.0f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ RotaryEmbedding (contrib) */

typedef struct crope_kernel {
  ol_kernel base;
  bool interleaved;
  int64_t rot_dim, num_heads;
} crope_kernel;

static ol_status crope_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  crope_kernel *k = (crope_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *pos, *cosc, *sinc;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &pos));
  OL_TRY(ol_ctx_require(ctx, 2, &cosc));
  OL_TRY(ol_ctx_require(ctx, 3, &sinc));
  OL_TRY(require_ft(node, x, "input", OL_DTYPE_UNDEFINED));
  OL_TRY(require_ft(node, cosc, "cos_cache", x->dtype));
  OL_TRY(require_ft(node, sinc, "sin_cache", x->dtype));
  if (pos->dtype != OL_DTYPE_INT64) return ol_kernel_bad_dtype(node, "position_ids", pos->dtype);
  if (cosc->rank != 2 || sinc->rank != 2 || cosc->dims[0] != sinc->dims[0] ||
      cosc->dims[1] != sinc->dims[1] || cosc->dims[1] < 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "cos_cache and sin_cache must be 2-D of the same shape (max_position, rot/2)");
  int64_t half = cosc->dims[1], B, S, N, H;
  bool bnsh = x->rank == 4;
  if (x->rank == 4) {
    B = x->dims[0], N = x->dims[1], S = x->dims[2], H = x->dims[3];
  } else if (x->rank == 3) {
    B = x->dims[0], S = x->dims[1];
    if (k->num_heads > 0) {
      N = k->num_heads;
      if (x->dims[2] % N)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "hidden size %lld is not divisible by num_heads %lld",
                               (long long)x->dims[2], (long long)N);
      H = x->dims[2] / N;
    } else {
      H = 2 * half;
      if (x->dims[2] % H)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "hidden size %lld is not a multiple of the head size %lld",
                               (long long)x->dims[2], (long long)H);
      N = x->dims[2] / H;
    }
  } else {
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must be 3-D or 4-D, got rank %d", x->rank);
  }
  int64_t rot = k->rot_dim > 0 ? k->rot_dim : H;
  if (rot != 2 * half || rot > H)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "rotary dimension %lld must be 2 * cache width (%lld) and <= head size %lld",
                           (long long)rot, (long long)half, (long long)H);
  int64_t np = ol_tcount(pos);
  bool offset_form = pos->rank <= 1 && np == 1;
  if (!offset_form && (pos->rank != 2 || pos->dims[0] != B || pos->dims[1] != S))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "position_ids must have shape (%lld, %lld) or (1)", (long long)B,
                           (long long)S);
  const int64_t *p = ol_tdata(pos);
  for (int64_t b = 0; b < B; b++)
    for (int64_t t = 0; t < S; t++) {
      int64_t ci = offset_form ? p[0] + t : p[b * S + t];
      if (ci < 0 || ci >= cosc->dims[0])
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "position %lld is outside the cache [0, %lld)", (long long)ci,
                               (long long)cosc->dims[0]);
    }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  if (ol_tcount(x) == 0) return OL_OK;
  /* float16: a head vector and a cos/sin row at a time, widened into scratch */
  fscratch fs = {NULL, 0};
  fs.base = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(ol_floats_scratch(x->dtype, H + 2 * half) + 1));
  float *xw = fs_take(&fs, x->dtype, H), *cw = fs_take(&fs, x->dtype, half), *sw = fs_take(&fs, x->dtype, half);
  float *row = ol_alloc(ctx->allocator, sizeof(float) * (size_t)H);
  ol_status s = OL_OK;
  if (!fs.base || !row) s = OL_OUT_OF_MEMORY;
  for (int64_t b = 0; b < B && s == OL_OK; b++)
    for (int64_t t = 0; t < S; t++) {
      int64_t ci = offset_form ? p[0] + t : p[b * S + t];
      const float *cr = ol_floats_row(x->dtype, ol_tdata(cosc), ci * half, half, cw),
                  *sr = ol_floats_row(x->dtype, ol_tdata(sinc), ci * half, half, sw);
      for (int64_t h = 0; h < N; h++) {
        int64_t off = bnsh ? ((b * N + h) * S + t) * H : ((b * S + t) * N + h) * H;
        ol_nn23_rotate(ol_floats_row(x->dtype, ol_tdata(x), off, H, xw), row, cr, sr, H, rot, k->interleaved);
        ol_floats_store(y, off, row, H);
      }
    }
  ol_dealloc(ctx->allocator, fs.base);
  ol_dealloc(ctx->allocator, row);
  return s;
}

static ol_status crope_create(const ol_node *node, ol_kernel **out) {
  int64_t rot = ol_attr_int(node, "rotary_embedding_dim", 0);
  int64_t nh = ol_attr_int(node, "num_heads", 0);
  if (rot < 0 || rot % 2)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'rotary_embedding_dim' must be even and >= 0, got %lld",
                           (long long)rot);
  if (nh < 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'num_heads' must be >= 0");
  if (rot > 0 && nh == 0)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'num_heads' is required when rotary_embedding_dim is set");
  if (ol_attr_int(node, "is_packed_batching", 0) != 0)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "is_packed_batching is not supported");
  crope_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, crope_compute, (ol_kernel **)&k));
  k->interleaved = ol_attr_int(node, "interleaved", 0) != 0;
  k->rot_dim = rot;
  k->num_heads = nh;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ registry */

#define MS "com.microsoft"
#define F "float32 float16"
const ol_op_schema ol_schema_contrib_ms[] = {
    {"", "SimplifiedLayerNormalization", 1, OL_OPSET_LATEST, simplified_ln_create, ol_infer_layer_norm, F},
    {MS, "SkipLayerNormalization", 1, 1, skip_ln_create, ol_infer_skip_norm, F},
    {MS, "SkipSimplifiedLayerNormalization", 1, 1, skip_simplified_ln_create, ol_infer_skip_norm, F},
    {MS, "FastGelu", 1, 1, fast_gelu_create, ol_infer_like_input0, F},
    {MS, "Gelu", 1, 1, gelu_create, ol_infer_like_input0, F},
    {MS, "BiasGelu", 1, 1, bias_gelu_create, ol_infer_like_input0, F},
    {MS, "QuickGelu", 1, 1, quick_gelu_create, ol_infer_like_input0, F},
    {MS, "BiasAdd", 1, 1, bias_add_create, ol_infer_like_input0, F},
    {MS, "BiasSplitGelu", 1, 1, bias_split_gelu_create, NULL, F},
    {MS, "FusedMatMul", 1, 1, fmm_create, NULL, F},
    {MS, "RotaryEmbedding", 1, 1, crope_create, ol_infer_like_input0, F},
    /* past_key, past_value: caches continued by present_key, present_value, read in place */
    {MS, "MultiHeadAttention", 1, 1, ol_cms_mha_create, NULL, F, .pitched_inputs = 1u << 6 | 1u << 7,
     .caches = {{6, 1, 2}, {7, 2, 2}}, .num_caches = 2},
    {MS, "GroupQueryAttention", 1, 1, ol_cms_gqa_create, ol_infer_gqa, F, .pitched_inputs = 1u << 3 | 1u << 4,
     .caches = {{3, 1, 2}, {4, 2, 2}}, .num_caches = 2},
    {0},
};
