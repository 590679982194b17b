/* Neural-network operators new in ai.onnx opset 23.
 *
 *   RMSNormalization 23: axis, epsilon, stash_type (statistics in double)
 *   RotaryEmbedding 23:  interleaved, rotary_embedding_dim, num_heads;
 *                        X (B, N, S, H) or (B, S, N*H); cos/sin caches
 *                        (max_pos, rot/2) with position_ids (B, S), or
 *                        (B, S, rot/2) without
 *
 * float32, float16 and bfloat16 (computed in float32: half types widened a
 * row at a time through the dtype table, rounded on store). Also defines
 * the rotary helper shared with the com.microsoft kernels (contrib_ms*.c). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/transformer/transformer.h"

/* ------------------------------------------------------------ shared helpers */

/* Rotates one head vector x[0..H) into y (may alias): the first rot values
 * by the angle pairs (c[i], s[i]), i < rot/2; the rest copied. */
void ol_nn23_rotate(const float *x, float *y, const float *c, const float *s, int64_t H,
                    int64_t rot, bool interleaved) {
  int64_t half = rot / 2;
  if (interleaved) {
    for (int64_t i = 0; i < half; i++) {
      float x1 = x[2 * i], x2 = x[2 * i + 1];
      y[2 * i] = x1 * c[i] - x2 * s[i];
      y[2 * i + 1] = x2 * c[i] + x1 * s[i];
    }
  } else {
    for (int64_t i = 0; i < half; i++) {
      float x1 = x[i], x2 = x[i + half];
      y[i] = x1 * c[i] - x2 * s[i];
      y[i + half] = x2 * c[i] + x1 * s[i];
    }
  }
  if (y != x)
    for (int64_t i = rot; i < H; i++) y[i] = x[i];
}

/* ------------------------------------------------------------ RMSNormalization */

typedef struct rms_kernel {
  ol_kernel base;
  int64_t axis;
  double epsilon;
} rms_kernel;

static ol_status rms_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  rms_kernel *k = (rms_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *scale;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &scale));
  if (!ol_dtype_computes_f32(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (!ol_dtype_computes_f32(scale->dtype)) return ol_kernel_bad_dtype(node, "input scale", scale->dtype);
  if (x->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must have rank >= 1");
  int axis;
  OL_TRY(ol_normalize_axis(node, k->axis, x->rank, &axis));
  int64_t outer = ol_shape_count(axis, x->dims);
  int64_t n = ol_shape_count(x->rank - axis, x->dims + axis);
  /* scale broadcasts (numpy, from the right) to the normalized shape */
  int r = x->rank - axis;
  if (scale->rank > r)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scale has rank %d, more than %d",
                           scale->rank, r);
  int64_t sstr[OL_MAX_RANK], st = 1;
  for (int i = r - 1; i >= 0; i--) {
    int si = i - (r - scale->rank);
    int64_t d = si >= 0 ? scale->dims[si] : 1;
    if (d != 1 && d != x->dims[axis + i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "scale dimension %d is %lld, cannot broadcast to %lld", si,
                             (long long)d, (long long)x->dims[axis + i]);
    sstr[i] = d == 1 ? 0 : st;
    st *= d;
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, scale->dtype, x->rank, x->dims, &y)); /* Y has scale's type V */
  if (outer * n == 0) return OL_OK;
  /* float16/bfloat16: X a row at a time and the scale once, widened into scratch */
  int64_t ns = ol_tcount(scale), nx = ol_floats_scratch(x->dtype, n);
  float *wide = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(nx + ol_floats_scratch(scale->dtype, ns) + 1));
  const float *sf = wide ? ol_floats_row(scale->dtype, ol_tdata(scale), 0, ns, wide + nx) : NULL;
  float *row = ol_alloc(ctx->allocator, sizeof(float) * (size_t)n);
  int64_t *smap = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)n);
  ol_status s = OL_OK;
  if (!wide || !row || !smap) {
    s = OL_OUT_OF_MEMORY;
    goto done;
  }
  {
    int64_t idx[OL_MAX_RANK] = {0}, off = 0;
    for (int64_t j = 0; j < n; j++) {
      smap[j] = off;
      for (int i = r - 1; i >= 0; i--) {
        off += sstr[i];
        if (++idx[i] < x->dims[axis + i]) break;
        off -= sstr[i] * x->dims[axis + i];
        idx[i] = 0;
      }
    }
  }
  for (int64_t o = 0; o < outer; o++) {
    const float *xr = ol_floats_row(x->dtype, ol_tdata(x), o * n, n, wide);
    double sq = 0.0;
    for (int64_t j = 0; j < n; j++) sq += (double)xr[j] * (double)xr[j];
    double inv = 1.0 / sqrt(sq / (double)n + k->epsilon);
    for (int64_t j = 0; j < n; j++) row[j] = (float)((double)xr[j] * inv) * sf[smap[j]];
    ol_floats_store(y, o * n, row, n);
  }
done:
  ol_dealloc(ctx->allocator, wide);
  ol_dealloc(ctx->allocator, row);
  ol_dealloc(ctx->allocator, smap);
  return s;
}

static ol_status rms_create(const ol_node *node, ol_kernel **out) {
  int64_t stash = ol_attr_int(node, "stash_type", 1);
  if (stash != 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'stash_type' must be 1 (float), got %lld",
                           (long long)stash);
  rms_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, rms_compute, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", -1);
  k->epsilon = ol_attr_float(node, "epsilon", 1e-5f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ RotaryEmbedding */

typedef struct rope_kernel {
  ol_kernel base;
  bool interleaved;
  int64_t rot_dim, num_heads;
} rope_kernel;

static ol_status rope_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  rope_kernel *k = (rope_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *cosc, *sinc, *pos = ol_ctx_input(ctx, 3);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &cosc));
  OL_TRY(ol_ctx_require(ctx, 2, &sinc));
  if (!ol_dtype_computes_f32(x->dtype)) return ol_kernel_bad_dtype(node, "input X", x->dtype);
  if (cosc->dtype != x->dtype || sinc->dtype != x->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cos_cache and sin_cache must be %s",
                           ol_dtype_name(x->dtype));
  int64_t B, S, N, H;
  bool bnsh;
  if (x->rank == 4) {
    B = x->dims[0], N = x->dims[1], S = x->dims[2], H = x->dims[3];
    bnsh = true;
  } else if (x->rank == 3) {
    if (k->num_heads <= 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "attribute 'num_heads' is required for a 3-D input");
    B = x->dims[0], S = x->dims[1], N = k->num_heads;
    if (x->dims[2] % N != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "hidden size %lld is not divisible by num_heads %lld",
                             (long long)x->dims[2], (long long)N);
    H = x->dims[2] / N;
    bnsh = false;
  } else {
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must be 3-D or 4-D, got rank %d",
                           x->rank);
  }
  int64_t rot = k->rot_dim > 0 ? k->rot_dim : H;
  if (rot > H || rot % 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "rotary_embedding_dim %lld must be even and <= head size %lld",
                           (long long)rot, (long long)H);
  int64_t half = rot / 2;
  int want_rank = pos ? 2 : 3;
  if (cosc->rank != want_rank || sinc->rank != want_rank ||
      cosc->dims[want_rank - 1] != half || sinc->dims[want_rank - 1] != half ||
      ol_tcount(cosc) != ol_tcount(sinc))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "cos_cache/sin_cache must have shape %s with last dimension %lld",
                           pos ? "(max_position, rot/2)" : "(batch, sequence, rot/2)",
                           (long long)half);
  if (!pos && (cosc->dims[0] != B || cosc->dims[1] != S))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "cos_cache must have shape (%lld, %lld, %lld) without position_ids",
                           (long long)B, (long long)S, (long long)half);
  if (pos) {
    if (pos->dtype != OL_DTYPE_INT64)
      return ol_kernel_bad_dtype(node, "input position_ids", pos->dtype);
    if (pos->rank != 2 || pos->dims[0] != B || pos->dims[1] != S)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "position_ids must have shape (%lld, %lld)",
                             (long long)B, (long long)S);
    const int64_t *p = ol_tdata(pos);
    for (int64_t i = 0; i < B * S; i++)
      if (p[i] < 0 || p[i] >= cosc->dims[0])
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "position_ids value %lld is outside the cache [0, %lld)",
                               (long long)p[i], (long long)cosc->dims[0]);
  }
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, x->dtype, x->rank, x->dims, &y));
  if (ol_tcount(x) == 0) return OL_OK;
  /* float16/bfloat16: a head vector and a cos/sin row at a time, widened into scratch */
  int64_t nx = ol_floats_scratch(x->dtype, H), nc = ol_floats_scratch(x->dtype, half);
  float *wide = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(nx + 2 * nc + 1));
  float *row = ol_alloc(ctx->allocator, sizeof(float) * (size_t)H);
  ol_status s = OL_OK;
  if (!wide || !row) {
    s = OL_OUT_OF_MEMORY;
  } else {
    const int64_t *p = pos ? ol_tdata(pos) : NULL;
    for (int64_t b = 0; b < B; b++)
      for (int64_t t = 0; t < S; t++) {
        int64_t ci = p ? p[b * S + t] : b * S + t;
        const float *cr = ol_floats_row(x->dtype, ol_tdata(cosc), ci * half, half, wide + nx),
                    *sr = ol_floats_row(x->dtype, ol_tdata(sinc), ci * half, half, wide + nx + nc);
        for (int64_t h = 0; h < N; h++) {
          int64_t off = bnsh ? ((b * N + h) * S + t) * H : ((b * S + t) * N + h) * H;
          ol_nn23_rotate(ol_floats_row(x->dtype, ol_tdata(x), off, H, wide), row, cr, sr, H, rot, k->interleaved);
          ol_floats_store(y, off, row, H);
        }
      }
  }
  ol_dealloc(ctx->allocator, wide);
  ol_dealloc(ctx->allocator, row);
  return s;
}

static ol_status rope_create(const ol_node *node, ol_kernel **out) {
  int64_t rot = ol_attr_int(node, "rotary_embedding_dim", 0);
  int64_t nh = ol_attr_int(node, "num_heads", 0);
  if (rot < 0 || rot % 2)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'rotary_embedding_dim' must be even and >= 0, got %lld",
                           (long long)rot);
  if (nh < 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'num_heads' must be >= 0, got %lld",
                           (long long)nh);
  rope_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, rope_compute, (ol_kernel **)&k));
  k->interleaved = ol_attr_int(node, "interleaved", 0) != 0;
  k->rot_dim = rot;
  k->num_heads = nh;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ registry */

const ol_op_schema ol_schema_nn23[] = {
    {"", "RMSNormalization", 23, OL_OPSET_LATEST, rms_create, ol_infer_like_input0, "float32 float16 bfloat16"},
    {"", "RotaryEmbedding", 23, OL_OPSET_LATEST, rope_create, ol_infer_like_input0, "float32 float16 bfloat16"},
    {0},
};
