/* Scaled dot-product attention (ai.onnx).
 *
 *   Attention 23 (inputs Q, K, V, attn_mask, past_key, past_value;
 *                 outputs Y, present_key, present_value, qk_matmul_output)
 *
 * Q, K, V are 4-D [B, H, S, D] or 3-D [B, S, H*D] (q_num_heads and
 * kv_num_heads required). Grouped-query attention: query head h reads KV head
 * h / (q_heads / kv_heads). present_key/value are 4-D [B, kv_heads, P+L, D]:
 * past followed by the new rows along axis 2. is_causal: query i (absolute
 * position P+i) sees keys j <= P+i. attn_mask (bool: true = attend, or the
 * query type: added) broadcasts numpy-style to [B, q_heads, S, P+L] and
 * combines with the causal mask.
 *
 * Score pipeline per row: s = (q . k) * scale  [qk mode 0]
 *                         s + mask             [qk mode 1]
 *                         softcap(s) + mask    [qk mode 2, the softmax input]
 *                         softmax              [qk mode 3]
 * softcap (c > 0: c * tanh(s / c)) is applied before the mask, as the current
 * ONNX reference does, so masked positions stay at -inf; without softcap the
 * four modes are exactly those of the opset-23 text. A row with every key
 * masked yields zero probabilities (Y = 0) instead of NaN.
 *
 * Arithmetic is float32 for float32/float16/bfloat16 (half types are widened
 * through the dtype table a query row and a (batch, KV head) block of K/V at
 * a time, and rounded on store): dot products and the P.V sum accumulate in
 * float in ascending index order, the softmax sum in double, exp/tanh come
 * from simd/math.h. No fma (the build uses -ffp-contract=off).
 *
 * KV append: with ctx->reserve_append available and both past_key and
 * present_key present, the kernel asks the runtime for an append reservation
 * of present_key (and likewise past_value/present_value), writes only the new
 * rows into the writable span (one run per batch and head: multi-head caches
 * are pitched, see core/pitched.c), commits, and reads the committed output
 * at its pitch; no second concatenation. past inputs may be pitched too
 * (read in place). A declined reservation uses ordinary concatenation.
 * One storage event (ctx->record_storage) per compute sums the K/V work. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/transformer/transformer.h"
#include "simd/gemm.h"
#include "simd/math.h"

#define OL_ATTN_MAX_INPUTS 8 /* Q K V attn_mask past_key past_value nonpad_kv_seqlen */

typedef struct attention_kernel {
  ol_kernel base;
  bool is_causal;
  int64_t q_num_heads;  /* 0: not given */
  int64_t kv_num_heads; /* 0: not given */
  int qk_mode;
  bool has_scale;
  float scale;
  float softcap;
} attention_kernel;

/* A K or V source in its native dtype: row (b, h, t) of D elements starts at
 * element b*sb + h*sh + t*st. */
typedef struct kv_src {
  const void *data;
  int64_t sb, sh, st;
} kv_src;

/* Copies n rows of D elements per (b, h) from src (strides in elements)
 * to a contiguous [B, H, *, D] destination starting at row t0 of dst_rows. */
static void copy_rows(char *dst, int64_t dst_rows, int64_t t0, const void *src, int64_t sb,
                      int64_t sh, int64_t st, int64_t B, int64_t H, int64_t n, int64_t D,
                      size_t es) {
  if (n == 0 || D == 0) return;
  const char *s = src;
  size_t row = (size_t)D * es;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      char *d = dst + ((size_t)((b * H + h) * dst_rows + t0)) * row;
      if (st == D) {
        memcpy(d, s + (size_t)(b * sb + h * sh) * es, row * (size_t)n);
        continue;
      }
      for (int64_t t = 0; t < n; t++)
        memcpy(d + (size_t)t * row, s + (size_t)(b * sb + h * sh + t * st) * es, row);
    }
}

/* Everything compute derives from the inputs. */
typedef struct attn_shape {
  ol_dtype dtype;
  size_t es;
  bool rank3;
  int64_t B, Hq, Hkv, S, L, P, T, Dk, Dv;
  int64_t q_sb, q_sh, q_ss; /* Q strides (elements) */
  int64_t k_sb, k_sh, k_st; /* new K rows */
  int64_t v_sb, v_sh, v_st; /* new V rows */
} attn_shape;

static ol_status split_heads(const ol_node *node, const char *what, const ol_tensor *t,
                             int64_t heads, int64_t *B, int64_t *H, int64_t *S, int64_t *D,
                             int64_t *sb, int64_t *sh, int64_t *ss) {
  *B = t->dims[0];
  if (t->rank == 4) {
    *H = t->dims[1];
    *S = t->dims[2];
    *D = t->dims[3];
    *sb = *H * *S * *D;
    *sh = *S * *D;
    *ss = *D;
    if (heads > 0 && heads != *H)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "%s has %lld heads but the head-count attribute says %lld", what,
                             (long long)*H, (long long)heads);
    return OL_OK;
  }
  int64_t hidden = t->dims[2];
  if (hidden % heads != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "%s hidden size %lld is not a multiple of its %lld heads", what,
                           (long long)hidden, (long long)heads);
  *H = heads;
  *S = t->dims[1];
  *D = hidden / heads;
  *sb = *S * hidden;
  *sh = *D;
  *ss = hidden;
  return OL_OK;
}

static ol_status check_past(const ol_node *node, const char *what, const ol_tensor *t,
                            const attn_shape *sh, int64_t D, int64_t *P) {
  char buf[128];
  if (t->dtype != sh->dtype || t->rank != 4 || t->dims[0] != sh->B || t->dims[1] != sh->Hkv ||
      t->dims[3] != D)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "%s must be %s[%lld,%lld,past_len,%lld], got %s", what,
                           ol_dtype_name(sh->dtype), (long long)sh->B, (long long)sh->Hkv,
                           (long long)D, ol_tensor_describe(t, buf, sizeof buf));
  *P = t->dims[2];
  return OL_OK;
}

static ol_status derive_shape(const attention_kernel *k, const ol_kernel_ctx *ctx,
                              const ol_tensor *q, const ol_tensor *kt, const ol_tensor *vt,
                              attn_shape *sh) {
  const ol_node *node = ctx->node;
  memset(sh, 0, sizeof *sh);
  sh->dtype = q->dtype;
  if (!ol_dtype_computes_f32(q->dtype)) return ol_kernel_bad_dtype(node, "Q", q->dtype);
  if (kt->dtype != q->dtype || vt->dtype != q->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "Q, K and V must share one type, got %s, %s, %s",
                           ol_dtype_name(q->dtype), ol_dtype_name(kt->dtype),
                           ol_dtype_name(vt->dtype));
  sh->es = ol_dtype_size(q->dtype);
  if ((q->rank != 3 && q->rank != 4) || kt->rank != q->rank || vt->rank != q->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "Q, K and V must all be 3-D or all 4-D, got ranks %d, %d, %d", q->rank,
                           kt->rank, vt->rank);
  sh->rank3 = q->rank == 3;
  if (sh->rank3 && (k->q_num_heads <= 0 || k->kv_num_heads <= 0))
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "3-D inputs need the q_num_heads and kv_num_heads attributes");
  int64_t kb, vb, vh, vl, dq;
  OL_TRY(split_heads(node, "Q", q, k->q_num_heads, &sh->B, &sh->Hq, &sh->S, &dq, &sh->q_sb,
                     &sh->q_sh, &sh->q_ss));
  OL_TRY(split_heads(node, "K", kt, k->kv_num_heads, &kb, &sh->Hkv, &sh->L, &sh->Dk, &sh->k_sb,
                     &sh->k_sh, &sh->k_st));
  OL_TRY(split_heads(node, "V", vt, k->kv_num_heads, &vb, &vh, &vl, &sh->Dv, &sh->v_sb,
                     &sh->v_sh, &sh->v_st));
  if (kb != sh->B || vb != sh->B)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "batch sizes differ: Q %lld, K %lld, V %lld",
                           (long long)sh->B, (long long)kb, (long long)vb);
  if (vh != sh->Hkv || vl != sh->L)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "K and V must have the same heads and sequence length: K %lld x %lld, "
                           "V %lld x %lld",
                           (long long)sh->Hkv, (long long)sh->L, (long long)vh, (long long)vl);
  if (dq != sh->Dk)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "Q head size %lld differs from K head size %lld",
                           (long long)dq, (long long)sh->Dk);
  if (sh->Hkv == 0 ? sh->Hq != 0 : sh->Hq % sh->Hkv != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "query heads (%lld) must be a multiple of key/value heads (%lld)",
                           (long long)sh->Hq, (long long)sh->Hkv);
  const ol_tensor *pk = ol_ctx_input(ctx, 4), *pv = ol_ctx_input(ctx, 5);
  if ((pk == NULL) != (pv == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key and past_value must be given together");
  if (pk) {
    int64_t pkl, pvl;
    OL_TRY(check_past(node, "past_key", pk, sh, sh->Dk, &pkl));
    OL_TRY(check_past(node, "past_value", pv, sh, sh->Dv, &pvl));
    if (pkl != pvl)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "past_key has %lld positions but past_value %lld", (long long)pkl,
                             (long long)pvl);
    sh->P = pkl;
  }
  sh->T = sh->P + sh->L;
  return OL_OK;
}

/* ------------------------------------------------------------ present K/V */

/* Positions between a past input's heads: its pitch when it is a cache
 * growing in place (pitched along the sequence axis), else its length.
 * attention_compute densifies any other pitched layout first. */
static int64_t past_pitch(const ol_tensor *past) {
  return past->pitch > 0 && past->pitch_axis == 2 ? ol_tensor_layout_pitch(past) : past->dims[2];
}

/* Builds present output `out` (1: key, 2: value) from past input `in` and the
 * new rows, through a reservation when the runtime offers one. On success
 * *src describes the present rows (contiguous [B, H, T, D]). */
static ol_status make_present(ol_kernel_ctx *ctx, const attn_shape *sh, size_t in, size_t out,
                              const ol_tensor *cur, int64_t D, int64_t csb, int64_t csh,
                              int64_t cst, kv_src *src, ol_storage_counts *counts) {
  const ol_node *node = ctx->node;
  const ol_tensor *past = ol_ctx_input(ctx, in);
  int64_t dims[4] = {sh->B, sh->Hkv, sh->T, D};
  size_t new_bytes = (size_t)(sh->B * sh->Hkv * sh->L * D) * sh->es;
  size_t past_bytes = (size_t)(sh->B * sh->Hkv * sh->P * D) * sh->es;
  src->sb = sh->Hkv * sh->T * D;
  src->sh = sh->T * D;
  src->st = D;
  if (ctx->reserve_append && past) {
    ol_append_reservation res;
    memset(&res, 0, sizeof res);
    OL_TRY(ctx->reserve_append(ctx->runtime, in, out, 4, dims, 2, &res));
    if (res.result) {
      const ol_tensor *rt = ol_vt(res.result);
      size_t row = (size_t)D * sh->es;
      bool shape_ok = res.result->kind == OL_VALUE_TENSOR && rt->dtype == sh->dtype &&
                      rt->rank == 4 && memcmp(rt->dims, dims, sizeof dims) == 0;
      if (!shape_ok || res.rows != (size_t)(sh->B * sh->Hkv) || res.writable_bytes != new_bytes || !row ||
          res.row_stride % row || (new_bytes && !res.writable)) {
        ol_value_release(res.result);
        return ol_kernel_error(node, OL_FAILED_PRECONDITION,
                               "append reservation for output %zu does not match the [%lld,%lld,%lld,%lld] "
                               "layout (%zu writable bytes, %zu new bytes)",
                               out, (long long)sh->B, (long long)sh->Hkv, (long long)sh->T, (long long)D,
                               res.writable_bytes, new_bytes);
      }
      /* run r = (b, h) starts at writable + r * row_stride: a [B, H, C, D]
       * layout whose first row is writable */
      int64_t C = (int64_t)(res.row_stride / row);
      copy_rows(res.writable, C, 0, ol_tdata(cur), csb, csh, cst, sh->B, sh->Hkv, sh->L, D, sh->es);
      OL_TRY(ctx->commit_append(ctx->runtime, out, &res));
      const ol_value *v = out < ctx->num_outputs ? ctx->outputs[out] : NULL;
      if (!v || v->kind != OL_VALUE_TENSOR || v->tensor.dtype != sh->dtype ||
          v->tensor.rank != 4 || memcmp(v->tensor.dims, dims, sizeof dims) != 0)
        return ol_kernel_error(node, OL_INTERNAL, "committed output %zu has the wrong shape", out);
      src->data = ol_tdata(&v->tensor);
      src->sb = sh->Hkv * C * D;
      src->sh = C * D;
      counts->allocations += res.counts.allocations;
      counts->allocated_bytes += res.counts.allocated_bytes;
      counts->prefix_copied_bytes += res.counts.prefix_copied_bytes;
      counts->append_copied_bytes += res.counts.append_copied_bytes + new_bytes;
      counts->reuse_count += res.counts.reuse_count;
      return OL_OK;
    }
  }
  if (!ctx->reserve_append && past && past->dtype == sh->dtype && ((ctx->grow_outputs >> out) & 1u)) {
    /* a session cache: spare rows, and a grown past is appended to in place */
    ol_value *g = NULL;
    if (ol_value_grow_from(ctx->allocator, past, 4, dims, 2, &g) != OL_OK)
      return ol_kernel_error(node, OL_OUT_OF_MEMORY, "out of memory growing present output %zu", out);
    if (g) {
      int64_t C = g->tensor.pitch;
      bool moved = g->tensor.buffer != past->buffer;
      copy_rows(ol_tdata(&g->tensor), C, sh->P, ol_tdata(cur), csb, csh, cst, sh->B, sh->Hkv, sh->L, D, sh->es);
      src->data = ol_tdata(&g->tensor);
      src->sb = sh->Hkv * C * D;
      src->sh = C * D;
      counts->allocations += moved;
      counts->allocated_bytes += moved ? g->tensor.buffer->size : 0;
      counts->prefix_copied_bytes += moved ? past_bytes : 0;
      counts->append_copied_bytes += new_bytes;
      return ol_ctx_set_output(ctx, out, g);
    }
  }
  ol_tensor *t;
  OL_TRY(ol_ctx_output(ctx, out, sh->dtype, 4, dims, &t));
  char *d = ol_tdata(t);
  int64_t pp = past ? past_pitch(past) : 0;
  if (past) copy_rows(d, sh->T, 0, ol_tdata(past), sh->Hkv * pp * D, pp * D, D, sh->B, sh->Hkv, sh->P, D, sh->es);
  copy_rows(d, sh->T, sh->P, ol_tdata(cur), csb, csh, cst, sh->B, sh->Hkv, sh->L, D, sh->es);
  src->data = d;
  counts->allocations += 1;
  counts->allocated_bytes += past_bytes + new_bytes;
  counts->prefix_copied_bytes += past_bytes;
  counts->append_copied_bytes += new_bytes;
  return OL_OK;
}

/* K/V rows for the computation when the present output is not requested:
 * the new rows in place, or past + new concatenated in scratch (*scratch). */
static ol_status scratch_kv(ol_kernel_ctx *ctx, const attn_shape *sh, size_t in,
                            const ol_tensor *cur, int64_t D, int64_t csb, int64_t csh,
                            int64_t cst, kv_src *src, void **scratch) {
  const ol_tensor *past = ol_ctx_input(ctx, in);
  if (!past || sh->P == 0) {
    src->data = ol_tdata(cur);
    src->sb = csb;
    src->sh = csh;
    src->st = cst;
    return OL_OK;
  }
  size_t bytes = (size_t)(sh->B * sh->Hkv * sh->T * D) * sh->es;
  char *d = ol_alloc(ctx->allocator, bytes ? bytes : 1);
  if (!d) return OL_OUT_OF_MEMORY;
  int64_t pp = past_pitch(past);
  copy_rows(d, sh->T, 0, ol_tdata(past), sh->Hkv * pp * D, pp * D, D, sh->B, sh->Hkv, sh->P, D, sh->es);
  copy_rows(d, sh->T, sh->P, ol_tdata(cur), csb, csh, cst, sh->B, sh->Hkv, sh->L, D, sh->es);
  *scratch = d;
  src->data = d;
  src->sb = sh->Hkv * sh->T * D;
  src->sh = sh->T * D;
  src->st = D;
  return OL_OK;
}

/* The T rows (stride st) of one (batch, head) block of a K or V source
 * as float32: in place for float32, else widened into scratch (T x D). */
static const float *kv_block(const attn_shape *sh, const kv_src *src, int64_t b, int64_t h, int64_t D,
                             float *scratch, int64_t *stride) {
  int64_t at = b * src->sb + h * src->sh;
  if (sh->dtype == OL_DTYPE_FLOAT) {
    *stride = src->st;
    return (const float *)src->data + at;
  }
  for (int64_t t = 0; t < sh->T; t++) ol_floats_get(sh->dtype, src->data, at + t * src->st, D, scratch + t * D);
  *stride = D;
  return scratch;
}

/* ------------------------------------------------------------ mask */

typedef struct mask_map {
  const void *data; /* NULL: no mask */
  bool is_bool;
  ol_to_float_fn to_float; /* an additive mask's elements */
  int64_t sb, sh, ss, st; /* element strides over [B, Hq, S, T] (0: broadcast) */
} mask_map;

static ol_status map_mask(const ol_node *node, const ol_tensor *m, const attn_shape *sh,
                          mask_map *map) {
  memset(map, 0, sizeof *map);
  if (!m) return OL_OK;
  char buf[128];
  if (m->dtype != OL_DTYPE_BOOL && m->dtype != sh->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attn_mask must be bool or %s, got %s",
                           ol_dtype_name(sh->dtype), ol_tensor_describe(m, buf, sizeof buf));
  if (m->rank > 4)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attn_mask has rank %d (at most 4)", m->rank);
  int64_t target[4] = {sh->B, sh->Hq, sh->S, sh->T};
  int64_t strides[4] = {0, 0, 0, 0};
  int64_t stride = 1;
  for (int i = 3, j = m->rank - 1; j >= 0; i--, j--) {
    int64_t d = m->dims[j];
    if (d != target[i] && d != 1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "attn_mask %s does not broadcast to [%lld,%lld,%lld,%lld]",
                             ol_tensor_describe(m, buf, sizeof buf), (long long)target[0],
                             (long long)target[1], (long long)target[2], (long long)target[3]);
    strides[i] = d == 1 ? 0 : stride;
    stride *= d;
  }
  map->data = ol_tdata(m);
  map->is_bool = m->dtype == OL_DTYPE_BOOL;
  map->to_float = ol_dtype_info(m->dtype)->to_float;
  map->sb = strides[0];
  map->sh = strides[1];
  map->ss = strides[2];
  map->st = strides[3];
  return OL_OK;
}

/* ------------------------------------------------------------ compute */

static void softmax_row(float *x, int64_t n) {
  float m = -INFINITY;
  for (int64_t j = 0; j < n; j++) m = x[j] > m ? x[j] : m;
  if (m == -INFINITY) { /* every key masked */
    for (int64_t j = 0; j < n; j++) x[j] = 0.0f;
    return;
  }
  double sum = 0.0;
  for (int64_t j = 0; j < n; j++) x[j] = x[j] - m;
  ol_expf_n(x, x, n); /* the bits of ol_expf, four at a time */
  for (int64_t j = 0; j < n; j++) sum += x[j];
  for (int64_t j = 0; j < n; j++) x[j] = (float)(x[j] / sum);
}

static ol_status attention_run(ol_kernel *kernel, ol_kernel_ctx *ctx);

/* past_key/past_value may be pitched caches read in place (pitched_inputs);
 * one pitched along any axis but the sequence gets a dense copy first. */
static ol_status attention_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  if (ctx->num_inputs < 6) return attention_run(kernel, ctx);
  ol_value *in[OL_ATTN_MAX_INPUTS], *dense[2] = {NULL, NULL};
  bool copy = false;
  for (size_t i = 0; i < ctx->num_inputs && i < OL_ATTN_MAX_INPUTS; i++) in[i] = ctx->inputs[i];
  for (int j = 0; j < 2; j++) {
    const ol_value *v = ctx->inputs[4 + j];
    if (!v || v->kind != OL_VALUE_TENSOR || !ol_tensor_is_strided(&v->tensor) || v->tensor.pitch_axis == 2) continue;
    ol_status s = ol_tensor_materialize(ctx->allocator, &v->tensor, &dense[j]);
    if (s != OL_OK) {
      ol_value_release(dense[0]);
      return s;
    }
    in[4 + j] = dense[j];
    copy = true;
  }
  if (!copy) return attention_run(kernel, ctx);
  ol_kernel_ctx inner = *ctx;
  inner.inputs = in;
  ol_status s = attention_run(kernel, &inner);
  ol_value_release(dense[0]);
  ol_value_release(dense[1]);
  return s;
}

static ol_status attention_run(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  attention_kernel *k = (attention_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *q, *kt, *vt;
  OL_TRY(ol_ctx_require(ctx, 0, &q));
  OL_TRY(ol_ctx_require(ctx, 1, &kt));
  OL_TRY(ol_ctx_require(ctx, 2, &vt));
  attn_shape sh;
  OL_TRY(derive_shape(k, ctx, q, kt, vt, &sh));
  mask_map mask;
  OL_TRY(map_mask(node, ol_ctx_input(ctx, 3), &sh, &mask));

  /* Outputs Y and qk_matmul_output first: validation is done, and failing
   * allocations here leave no reservation behind. */
  ol_tensor *y, *qk = NULL;
  int64_t ydims[4];
  if (sh.rank3) {
    int64_t yd[3] = {sh.B, sh.S, sh.Hq * sh.Dv};
    OL_TRY(ol_ctx_output(ctx, 0, sh.dtype, 3, yd, &y));
  } else {
    ydims[0] = sh.B, ydims[1] = sh.Hq, ydims[2] = sh.S, ydims[3] = sh.Dv;
    OL_TRY(ol_ctx_output(ctx, 0, sh.dtype, 4, ydims, &y));
  }
  if (ol_ctx_wants_output(ctx, 3)) {
    int64_t qd[4] = {sh.B, sh.Hq, sh.S, sh.T};
    OL_TRY(ol_ctx_output(ctx, 3, sh.dtype, 4, qd, &qk));
  }

  /* Present K/V (reserved or dense), or the rows to read otherwise. */
  kv_src ks, vs;
  void *kscratch = NULL, *vscratch = NULL;
  float *wide = NULL, *row = NULL, *raw = NULL, *acc = NULL;
  ol_storage_counts counts;
  memset(&counts, 0, sizeof counts);
  bool want_pk = ol_ctx_wants_output(ctx, 1), want_pv = ol_ctx_wants_output(ctx, 2);
  ol_status s = OL_OK;
  if (want_pk)
    s = make_present(ctx, &sh, 4, 1, kt, sh.Dk, sh.k_sb, sh.k_sh, sh.k_st, &ks, &counts);
  else
    s = scratch_kv(ctx, &sh, 4, kt, sh.Dk, sh.k_sb, sh.k_sh, sh.k_st, &ks, &kscratch);
  if (s == OL_OK) {
    if (want_pv)
      s = make_present(ctx, &sh, 5, 2, vt, sh.Dv, sh.v_sb, sh.v_sh, sh.v_st, &vs, &counts);
    else
      s = scratch_kv(ctx, &sh, 5, vt, sh.Dv, sh.v_sb, sh.v_sh, sh.v_st, &vs, &vscratch);
  }
  if (s == OL_OK && (want_pk || want_pv) && ctx->record_storage)
    s = ctx->record_storage(ctx->runtime, &counts);
  if (s != OL_OK) goto done;

  /* float32 read in place; float16/bfloat16 widened into scratch from the
   * run's allocator: a query row at a time, K and V one (batch, KV head)
   * block at a time (never the whole cache). */
  int64_t nq = ol_floats_scratch(sh.dtype, sh.Dk), nk = ol_floats_scratch(sh.dtype, sh.T * sh.Dk);
  wide = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(nq + nk + ol_floats_scratch(sh.dtype, sh.T * sh.Dv) + 1));
  if (!wide) {
    s = OL_OUT_OF_MEMORY;
    goto done;
  }
  ol_from_float_fn put = ol_dtype_info(sh.dtype)->from_float;
  float scale = k->has_scale ? k->scale : (float)(1.0 / sqrt((double)(sh.Dk ? sh.Dk : 1)));
  size_t tn = (size_t)(sh.T ? sh.T : 1);
  row = ol_alloc(ctx->allocator, sizeof(float) * tn);
  raw = ol_alloc(ctx->allocator, sizeof(float) * tn);
  acc = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(sh.Dv ? sh.Dv : 1));
  if (!row || !raw || !acc) {
    s = OL_OUT_OF_MEMORY;
    goto done;
  }
  int64_t group = sh.Hkv ? sh.Hq / sh.Hkv : 1;
  void *yd = ol_tdata(y);
  void *qkd = qk ? ol_tdata(qk) : NULL;
  const float *kbase = NULL, *vbase = NULL;
  int64_t kst = 0, vst = 0;
  for (int64_t b = 0; b < sh.B; b++)
    for (int64_t h = 0; h < sh.Hq; h++) {
      if (ctx->cancelled && *ctx->cancelled) {
        s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
        goto done;
      }
      if (h % group == 0) { /* the group's KV head: its block once */
        kbase = kv_block(&sh, &ks, b, h / group, sh.Dk, wide + nq, &kst);
        vbase = kv_block(&sh, &vs, b, h / group, sh.Dv, wide + nq + nk, &vst);
      }
      for (int64_t i = 0; i < sh.S; i++) {
        const float *qr = ol_floats_row(sh.dtype, ol_tdata(q), b * sh.q_sb + h * sh.q_sh + i * sh.q_ss, sh.Dk, wide);
        for (int64_t j = 0; j < sh.T; j++) {
          const float *kr = kbase + j * kst;
          float dot = 0.0f;
          for (int64_t d = 0; d < sh.Dk; d++) dot += qr[d] * kr[d];
          raw[j] = dot * scale;
        }
        /* Bias: mask + causal. */
        const int64_t qk_off = ((b * sh.Hq + h) * sh.S + i) * sh.T;
        if (qkd && k->qk_mode == 0)
          for (int64_t j = 0; j < sh.T; j++) put(qkd, qk_off + j, raw[j]);
        for (int64_t j = 0; j < sh.T; j++) {
          float bias = 0.0f;
          if (mask.data) {
            int64_t mi = b * mask.sb + h * mask.sh + i * mask.ss + j * mask.st;
            if (mask.is_bool)
              bias = ((const uint8_t *)mask.data)[mi] ? 0.0f : -INFINITY;
            else
              bias = mask.to_float(mask.data, mi);
          }
          if (k->is_causal && j > sh.P + i) bias = -INFINITY;
          if (qkd && k->qk_mode == 1) put(qkd, qk_off + j, raw[j] + bias);
          float x = raw[j];
          if (k->softcap > 0.0f) x = k->softcap * ol_tanhf(x / k->softcap);
          row[j] = x + bias;
        }
        if (qkd && k->qk_mode == 2)
          for (int64_t j = 0; j < sh.T; j++) put(qkd, qk_off + j, row[j]);
        softmax_row(row, sh.T);
        if (qkd && k->qk_mode == 3)
          for (int64_t j = 0; j < sh.T; j++) put(qkd, qk_off + j, row[j]);
        /* acc[d] = sum over j in order of row[j] * v_j[d]: one GEMV row */
        if (sh.T > 0) ol_f32_gemv_simd128(1, sh.Dv, sh.T, row, sh.T, vbase, vst, acc, sh.Dv);
        else memset(acc, 0, sizeof(float) * (size_t)sh.Dv);
        int64_t yo = sh.rank3 ? (b * sh.S + i) * sh.Hq * sh.Dv + h * sh.Dv
                              : ((b * sh.Hq + h) * sh.S + i) * sh.Dv;
        ol_floats_put(sh.dtype, yd, yo, acc, sh.Dv);
      }
    }
done:
  ol_dealloc(ctx->allocator, kscratch);
  ol_dealloc(ctx->allocator, vscratch);
  ol_dealloc(ctx->allocator, wide);
  ol_dealloc(ctx->allocator, row);
  ol_dealloc(ctx->allocator, raw);
  ol_dealloc(ctx->allocator, acc);
  return s;
}

static ol_status attention_create(const ol_node *node, ol_kernel **out) {
  if (node->num_inputs < 3 || node->num_inputs > 6)
    return ol_kernel_error(node, OL_INVALID_MODEL, "expects 3 to 6 inputs, got %zu",
                           node->num_inputs);
  if (node->num_outputs < 1 || node->num_outputs > 4)
    return ol_kernel_error(node, OL_INVALID_MODEL, "expects 1 to 4 outputs, got %zu",
                           node->num_outputs);
  int64_t causal = ol_attr_int(node, "is_causal", 0);
  int64_t qh = ol_attr_int(node, "q_num_heads", 0);
  int64_t kvh = ol_attr_int(node, "kv_num_heads", 0);
  int64_t mode = ol_attr_int(node, "qk_matmul_output_mode", 0);
  int64_t prec = ol_attr_int(node, "softmax_precision", 0);
  float softcap = ol_attr_float(node, "softcap", 0.0f);
  bool has_scale = ol_node_attr(node, "scale") != NULL;
  float scale = ol_attr_float(node, "scale", 1.0f);
  if (causal != 0 && causal != 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "is_causal must be 0 or 1, got %lld",
                           (long long)causal);
  if ((ol_node_attr(node, "q_num_heads") && qh <= 0) ||
      (ol_node_attr(node, "kv_num_heads") && kvh <= 0))
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "q_num_heads (%lld) and kv_num_heads (%lld) must be positive",
                           (long long)qh, (long long)kvh);
  if (qh > 0 && kvh > 0 && qh % kvh != 0)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "q_num_heads (%lld) must be a multiple of kv_num_heads (%lld)",
                           (long long)qh, (long long)kvh);
  if (mode < 0 || mode > 3)
    return ol_kernel_error(node, OL_INVALID_MODEL, "qk_matmul_output_mode must be 0..3, got %lld",
                           (long long)mode);
  if (has_scale && !(scale > 0.0f && isfinite(scale)))
    return ol_kernel_error(node, OL_INVALID_MODEL, "scale must be a positive number, got %g",
                           (double)scale);
  if (!(softcap >= 0.0f && isfinite(softcap)))
    return ol_kernel_error(node, OL_INVALID_MODEL, "softcap must be >= 0, got %g", (double)softcap);
  /* softmax_precision: a TensorProto float type; computation is float32 with
   * a double sum, at least as precise as any of them but double. */
  if (prec != 0 && prec != OL_DTYPE_FLOAT && prec != OL_DTYPE_FLOAT16 &&
      prec != OL_DTYPE_BFLOAT16 && prec != OL_DTYPE_DOUBLE)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "softmax_precision must be a float type (1, 10, 11 or 16), got %lld",
                           (long long)prec);
  attention_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, attention_compute, (ol_kernel **)&k));
  k->is_causal = causal == 1;
  k->q_num_heads = qh;
  k->kv_num_heads = kvh;
  k->qk_mode = (int)mode;
  k->has_scale = has_scale;
  k->scale = scale;
  k->softcap = softcap;
  *out = &k->base;
  return OL_OK;
}

const ol_op_schema ol_schema_attention[] = {
    /* past_key, past_value: caches continued by present_key, present_value, read in place */
    {"", "Attention", 23, OL_OPSET_LATEST, attention_create, ol_infer_attention, "float32 float16 bfloat16",
     .pitched_inputs = 1u << 4 | 1u << 5, .caches = {{4, 1, 2}, {5, 2, 2}}, .num_caches = 2},
    {0},
};
