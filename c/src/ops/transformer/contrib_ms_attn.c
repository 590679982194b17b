/* onnxruntime contrib operators (com.microsoft 1), attention:
 *
 *   MultiHeadAttention 1: query (B, S, N*H); key/value (B, L, N*H / N*Hv)
 *       or already split per head (B, N, L, H) (used as is, no past);
 *       bias (3 parts) for 3-D key/value; key_padding_mask int32 (B, T) (0 =
 *       masked) or (B) key lengths; attention_bias (B|1, N|1, S, T);
 *       past_key/past_value (B, N, P, H) concatenated in front; outputs
 *       output, present_key, present_value. num_heads, scale (default
 *       1/sqrt(H)), mask_filter_value (-10000, added to masked scores),
 *       unidirectional (key j visible to query s iff j <= P + s).
 *   GroupQueryAttention 1: query (B, S, N*H) with key/value (B, S, kvN*H) or
 *       packed QKV in query; past_key/past_value (B, kvN, P, H); seqlens_k
 *       (B) int32 = valid total length - 1 per batch; total_sequence_length
 *       (scalar int32). Present length max(P, total_sequence_length): the
 *       past buffer copied (as if past and present shared one buffer), the
 *       new keys written at [past_b, past_b + S)
 *       with past_b = 0 for the first prompt (S == total_sequence_length)
 *       and seqlens_k[b] + 1 - S otherwise; causal attention limited to
 *       the seqlens_k[b] + 1 valid keys (right-padded prompts), local window
 *       (the last local_window_size keys), rotary inside (do_rotary with
 *       cos_cache/sin_cache, rotary_interleaved, position_ids or implied
 *       positions), attention_bias, softcap, smooth_softmax (an extra zero
 *       logit in the softmax) and head_sink (N) (a per-head extra logit).
 *       qk_output is not supported.
 *
 * Scores are scale * dot(q, k) in float (fixed lane order), softmax with
 * ol_expf and a double sum; float16 is computed in float32 and rounded on
 * store. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/transformer/transformer.h"
#include "simd/gemm.h"
#include "simd/gemm_tb.h"
#include "simd/math.h"


static bool is_ft(ol_dtype dt) { return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_FLOAT16; }

typedef struct fviews {
  float *p[12];
  bool own[12];
  int n;
  bool oom;
} fviews;

static float *fv_load(fviews *v, const ol_tensor *t) {
  if (!t) return NULL;
  bool own;
  float *f = ol_floats_load(t, &own);
  if (!f) v->oom = true;
  v->p[v->n] = f;
  v->own[v->n] = own;
  v->n++;
  return f;
}
static void fv_free(fviews *v) {
  for (int i = 0; i < v->n; i++)
    if (v->own[i]) free(v->p[i]);
  v->n = 0;
}

/* out[0..Hv) = softmax over keys j in [lo, hi) of
 * (softcap? softcap*tanh(s/softcap) : s) + add1[j] + add2[j], s = scale*q.k_j,
 * times v_j. sink (or NULL): an extra logit only in the softmax denominator.
 * p: scratch of hi floats. */
static void attend_row(const float *q, const float *K, int64_t ks, const float *V, int64_t vs,
                       int64_t H, int64_t Hv, int64_t lo, int64_t hi, float scale, float softcap,
                       const float *add1, const float *add2, const float *sink, float *p,
                       float *out) {
  for (int64_t d = 0; d < Hv; d++) out[d] = 0.0f;
  if (hi <= lo) return;
  /* the dot products q.k_j in ol_dot_f32's lane order (ol_f32_gemm_tb sums
   * the same way), then the scalar steps per score */
  ol_f32_gemm_tb(1, hi - lo, H, q, H, K + lo * ks, ks, p + lo, hi - lo);
  float m = -INFINITY;
  for (int64_t j = lo; j < hi; j++) {
    float sc = scale * p[j];
    if (softcap > 0.0f) sc = softcap * ol_tanhf(sc / softcap);
    if (add1) sc = sc + add1[j];
    if (add2) sc = sc + add2[j];
    p[j] = sc;
    if (sc > m) m = sc;
  }
  double sum = 0.0;
  if (sink) {
    if (*sink > m) m = *sink;
    sum += ol_expf(*sink - m);
  }
  for (int64_t j = lo; j < hi; j++) p[j] = p[j] - m;
  ol_expf_n(p + lo, p + lo, hi - lo);
  for (int64_t j = lo; j < hi; j++) sum += p[j];
  float inv = (float)(1.0 / sum);
  for (int64_t j = lo; j < hi; j++) p[j] = p[j] * inv;
  /* out[d] = out[d] + w_j * v_j[d] for j in order: one GEMV row */
  ol_f32_gemv_simd128(1, Hv, hi - lo, p + lo, hi - lo, V + lo * vs, vs, out, Hv);
}

/* ------------------------------------------------------------ MultiHeadAttention */

/* Positions between a past cache's heads: its pitch when it grows in place
 * (pitched along the sequence axis; other layouts arrive dense), else P. */
static int64_t past_stride(const ol_tensor *past) {
  return past->pitch > 0 && past->pitch_axis == 2 ? ol_tensor_layout_pitch(past) : past->dims[2];
}

typedef struct mha_kernel {
  ol_kernel base;
  int64_t num_heads;
  float scale, mask_filter;
  bool causal;
} mha_kernel;

static ol_status mha_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  mha_kernel *k = (mha_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *q, *key = ol_ctx_input(ctx, 1), *val = ol_ctx_input(ctx, 2),
                     *bias = ol_ctx_input(ctx, 3), *kpm = ol_ctx_input(ctx, 4),
                     *abias = ol_ctx_input(ctx, 5), *pk = ol_ctx_input(ctx, 6),
                     *pv = ol_ctx_input(ctx, 7);
  OL_TRY(ol_ctx_require(ctx, 0, &q));
  if (!is_ft(q->dtype)) return ol_kernel_bad_dtype(node, "query", q->dtype);
  if (!key || !val)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "packed QKV (key/value absent) is not supported");
  if (ctx->num_inputs > 8 && (ctx->inputs[8] || (ctx->num_inputs > 9 && ctx->inputs[9])))
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED,
                           "past_sequence_length/cache_indirection are not supported");
  const ol_tensor *fl[6] = {key, val, bias, abias, pk, pv};
  static const char *const fn[6] = {"key", "value", "bias", "attention_bias", "past_key", "past_value"};
  for (int i = 0; i < 6; i++)
    if (fl[i] && fl[i]->dtype != q->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s must be %s, got %s", fn[i],
                             ol_dtype_name(q->dtype), ol_dtype_name(fl[i]->dtype));
  if (q->rank != 3) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query must be 3-D, got rank %d", q->rank);
  int64_t B = q->dims[0], S = q->dims[1], N = k->num_heads, D = q->dims[2];
  if (D % N) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query hidden size %lld is not divisible by num_heads %lld",
                                    (long long)D, (long long)N);
  int64_t H = D / N, L, Hv;
  bool split = key->rank == 4;
  if (split) {
    if (val->rank != 4 || key->dims[0] != B || key->dims[1] != N || key->dims[3] != H ||
        val->dims[0] != B || val->dims[1] != N || val->dims[2] != key->dims[2])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "4-D key/value must be (B, N, L, H) and agree");
    if (pk || pv || bias)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past and bias are not allowed with 4-D key/value");
    L = key->dims[2];
    Hv = val->dims[3];
  } else {
    if (key->rank != 3 || val->rank != 3 || key->dims[0] != B || val->dims[0] != B ||
        key->dims[2] != D || val->dims[1] != key->dims[1] || val->dims[2] % N)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "key must be (B, L, %lld) and value (B, L, N*Hv)", (long long)D);
    L = key->dims[1];
    Hv = val->dims[2] / N;
  }
  int64_t Dv = N * Hv;
  if (bias && (bias->rank != 1 || bias->dims[0] != 2 * D + Dv))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "bias must have %lld values", (long long)(2 * D + Dv));
  if ((pk == NULL) != (pv == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key and past_value must be given together");
  int64_t P = 0;
  if (pk) {
    if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != B || pk->dims[1] != N || pk->dims[3] != H ||
        pv->dims[0] != B || pv->dims[1] != N || pv->dims[2] != pk->dims[2] || pv->dims[3] != Hv)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key/past_value must be (B, N, P, H)");
    P = pk->dims[2];
  }
  int64_t T = P + L;
  if (kpm) {
    if (kpm->dtype != OL_DTYPE_INT32) return ol_kernel_bad_dtype(node, "key_padding_mask", kpm->dtype);
    if (!(kpm->rank == 2 && kpm->dims[0] == B && kpm->dims[1] == T) && !(kpm->rank == 1 && kpm->dims[0] == B))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key_padding_mask must be (B, T) or (B)");
  }
  if (abias) {
    if (abias->rank != 4 || (abias->dims[0] != B && abias->dims[0] != 1) ||
        (abias->dims[1] != N && abias->dims[1] != 1) || abias->dims[2] != S || abias->dims[3] != T)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "attention_bias must be (B or 1, N or 1, %lld, %lld)", (long long)S, (long long)T);
  }
  int64_t od[3] = {B, S, Dv}, pd[4] = {B, N, T, H}, pvd[4] = {B, N, T, Hv};
  ol_tensor *y, *yk = NULL, *yv = NULL;
  OL_TRY(ol_ctx_output(ctx, 0, q->dtype, 3, od, &y));
  /* session caches (ctx->grow_outputs): float presents keep spare rows and
   * a past fed back from an earlier run's present is appended to in place */
  ol_value *grown[2] = {NULL, NULL};
  for (int c = 0; c < 2 && !split && pk && q->dtype == OL_DTYPE_FLOAT; c++)
    if ((ctx->grow_outputs >> (1 + c)) & 1u && ol_ctx_wants_output(ctx, 1 + (size_t)c) &&
        ol_value_grow_from(ctx->allocator, c ? pv : pk, 4, c ? pvd : pd, 2, &grown[c]) != OL_OK) {
      ol_value_release(grown[0]);
      return ol_kernel_error(node, OL_OUT_OF_MEMORY, "out of memory growing present output %d", 1 + c);
    }
  if (!split && !grown[0] && ol_ctx_wants_output(ctx, 1)) OL_TRY(ol_ctx_output(ctx, 1, q->dtype, 4, pd, &yk));
  if (!split && !grown[1] && ol_ctx_wants_output(ctx, 2)) OL_TRY(ol_ctx_output(ctx, 2, q->dtype, 4, pvd, &yv));
  if (B * N == 0) {
    ol_value_release(grown[0]);
    ol_value_release(grown[1]);
    return OL_OK;
  }
  fviews v = {0};
  const float *qf = fv_load(&v, q), *kf = fv_load(&v, key), *vf = fv_load(&v, val),
              *bf = fv_load(&v, bias), *af = fv_load(&v, abias), *pkf = fv_load(&v, pk),
              *pvf = fv_load(&v, pv);
  /* K/V rows: (b, h) blocks kst/vst elements apart — a grown present (past
   * rows already in place) or whole scratch; past blocks pks/pvs apart */
  float *Kb = grown[0] ? ol_tdata(&grown[0]->tensor) : ol_xmalloc(sizeof(float) * (size_t)(B * N * T * H + 1));
  float *Vb = grown[1] ? ol_tdata(&grown[1]->tensor) : ol_xmalloc(sizeof(float) * (size_t)(B * N * T * Hv + 1));
  const bool kgrown = grown[0] != NULL, vgrown = grown[1] != NULL; /* Kb/Vb belong to the presents */
  int64_t kst = (kgrown ? grown[0]->tensor.pitch : T) * H, vst = (vgrown ? grown[1]->tensor.pitch : T) * Hv;
  int64_t pks = pk ? past_stride(pk) * H : 0, pvs = pv ? past_stride(pv) * Hv : 0;
  float *qrow = ol_xmalloc(sizeof(float) * (size_t)(H + 1));
  float *p = ol_xmalloc(sizeof(float) * (size_t)(T + 1));
  float *add = ol_xmalloc(sizeof(float) * (size_t)(T + 1));
  float *out = ol_xmalloc(sizeof(float) * (size_t)(B * S * Dv + 1));
  ol_status s = OL_OK;
  if (v.oom || !Kb || !Vb || !qrow || !p || !add || !out) {
    s = OL_OUT_OF_MEMORY;
    goto done;
  }
  /* present K/V: past rows then the new (biased) rows, per (b, h) */
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < N; h++) {
      float *kd = Kb + (b * N + h) * kst, *vd = Vb + (b * N + h) * vst;
      if (P && !kgrown) memcpy(kd, pkf + (b * N + h) * pks, sizeof(float) * (size_t)(P * H));
      if (P && !vgrown) memcpy(vd, pvf + (b * N + h) * pvs, sizeof(float) * (size_t)(P * Hv));
      for (int64_t j = 0; j < L; j++)
        for (int64_t d = 0; d < H; d++) {
          float kv = split ? kf[((b * N + h) * L + j) * H + d] : kf[(b * L + j) * D + h * H + d];
          if (bf) kv = kv + bf[D + h * H + d];
          kd[(P + j) * H + d] = kv;
        }
      for (int64_t j = 0; j < L; j++)
        for (int64_t d = 0; d < Hv; d++) {
          float vv = split ? vf[((b * N + h) * L + j) * Hv + d] : vf[(b * L + j) * Dv + h * Hv + d];
          if (bf) vv = vv + bf[2 * D + h * Hv + d];
          vd[(P + j) * Hv + d] = vv;
        }
    }
  const int32_t *mk = kpm ? ol_tdata(kpm) : NULL;
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < N; h++) {
      if (ctx->cancelled && *ctx->cancelled) {
        s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
        goto done;
      }
      const float *kd = Kb + (b * N + h) * kst, *vd = Vb + (b * N + h) * vst;
      for (int64_t t = 0; t < S; t++) {
        for (int64_t d = 0; d < H; d++) {
          float qv = qf[(b * S + t) * D + h * H + d];
          if (bf) qv = qv + bf[h * H + d];
          qrow[d] = qv;
        }
        bool any = mk || k->causal;
        for (int64_t j = 0; any && j < T; j++) {
          bool masked = k->causal && j > P + t;
          if (mk) masked = masked || (kpm->rank == 2 ? mk[b * T + j] == 0 : j >= mk[b]);
          add[j] = masked ? k->mask_filter : 0.0f;
        }
        const float *ab = NULL;
        if (af)
          ab = af + (((abias->dims[0] == 1 ? 0 : b) * abias->dims[1] + (abias->dims[1] == 1 ? 0 : h)) * S + t) * T;
        attend_row(qrow, kd, H, vd, Hv, H, Hv, 0, T, k->scale > 0 ? k->scale : 1.0f / sqrtf((float)H),
                   0.0f, any ? add : NULL, ab, NULL, p, out + (b * S + t) * Dv + h * Hv);
      }
    }
  ol_floats_store(y, 0, out, B * S * Dv);
  if (yk) ol_floats_store(yk, 0, Kb, B * N * T * H);
  if (yv) ol_floats_store(yv, 0, Vb, B * N * T * Hv);
  for (int c = 0; c < 2 && s == OL_OK; c++)
    if (grown[c]) {
      s = ol_ctx_set_output(ctx, 1 + (size_t)c, grown[c]);
      grown[c] = NULL;
    }
done:
  fv_free(&v);
  if (!kgrown) free(Kb);
  if (!vgrown) free(Vb);
  ol_value_release(grown[0]); /* left only when failing before setting the outputs */
  ol_value_release(grown[1]);
  free(qrow);
  free(p);
  free(add);
  free(out);
  return s;
}

ol_status ol_cms_mha_create(const ol_node *node, ol_kernel **out) {
  int64_t nh = ol_attr_int(node, "num_heads", 0);
  if (nh < 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'num_heads' is required and must be >= 1");
  float scale = ol_attr_float(node, "scale", 0.0f);
  if (scale < 0.0f || scale != scale)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'scale' must be > 0");
  mha_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, mha_compute, (ol_kernel **)&k));
  k->num_heads = nh;
  k->scale = scale;
  k->mask_filter = ol_attr_float(node, "mask_filter_value", -10000.0f);
  k->causal = ol_attr_int(node, "unidirectional", 0) != 0;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ GroupQueryAttention */

typedef struct gqa_kernel {
  ol_kernel base;
  int64_t num_heads, kv_heads, window;
  float scale, softcap;
  bool rotary, interleaved, smooth;
} gqa_kernel;

/* Reserves present output `out` from bound past input `in` ([B, KN, T, H],
 * S new rows per (b, h)). No result: not offered, declined or not bound. */
static ol_status gqa_reserve(ol_kernel_ctx *ctx, size_t in, size_t out, const int64_t *pd, int64_t S,
                             ol_append_reservation *res) {
  OL_TRY(ctx->reserve_append(ctx->runtime, in, out, 4, pd, 2, res));
  if (!res->result) return OL_OK;
  size_t row = (size_t)pd[3] * sizeof(float);
  if (res->rows != (size_t)(pd[0] * pd[1]) || res->row_bytes != (size_t)S * row || !row || res->row_stride % row ||
      (res->row_bytes && !res->writable)) {
    ol_value_release(res->result);
    res->result = NULL;
    return ol_kernel_error(ctx->node, OL_INTERNAL, "append reservation for output %zu does not match [%lld,%lld,%lld,%lld]",
                           out, (long long)pd[0], (long long)pd[1], (long long)pd[2], (long long)pd[3]);
  }
  return OL_OK;
}

/* Commits the filled reservations and reports the storage work of bound
 * caches (appended in place, or built whole as the dense fallback).
 * Element counts: fresh rows, past rows, whole present. */
static ol_status gqa_commit(ol_kernel_ctx *ctx, ol_append_reservation *res, int64_t fresh, int64_t past,
                            int64_t whole) {
  ol_storage_counts counts;
  memset(&counts, 0, sizeof counts);
  bool report = false;
  for (int c = 0; c < 2; c++) {
    report = report || res[c].bound;
    if (res[c].result) {
      counts.allocations += res[c].counts.allocations;
      counts.allocated_bytes += res[c].counts.allocated_bytes;
      counts.prefix_copied_bytes += res[c].counts.prefix_copied_bytes;
      counts.append_copied_bytes += res[c].counts.append_copied_bytes + (uint64_t)fresh * sizeof(float);
      counts.reuse_count += res[c].counts.reuse_count;
      OL_TRY(ctx->commit_append(ctx->runtime, 1 + (size_t)c, &res[c])); /* clears res[c].result */
    } else if (res[c].bound) {
      counts.allocations += 1;
      counts.allocated_bytes += (uint64_t)whole * sizeof(float);
      counts.prefix_copied_bytes += (uint64_t)past * sizeof(float);
      counts.append_copied_bytes += (uint64_t)fresh * sizeof(float);
    }
  }
  if (report && ctx->record_storage) OL_TRY(ctx->record_storage(ctx->runtime, &counts));
  return OL_OK;
}

static ol_status gqa_run(ol_kernel *kernel, ol_kernel_ctx *ctx);

/* past_key/past_value are read in place when pitched along the sequence
 * axis in float32 (caches growing in place); any other pitched layout gets
 * a dense copy first. */
static ol_status gqa_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  for (size_t i = 3; i <= 4 && i < ctx->num_inputs; i++) {
    const ol_tensor *t = ol_ctx_input(ctx, i);
    if (t && ol_tensor_is_strided(t) && (t->dtype != OL_DTYPE_FLOAT || t->pitch_axis != 2))
      return ol_kernel_run_densified(kernel, ctx, (1u << 3) | (1u << 4), gqa_run);
  }
  return gqa_run(kernel, ctx);
}

static ol_status gqa_run(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  gqa_kernel *k = (gqa_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *q, *key = ol_ctx_input(ctx, 1), *val = ol_ctx_input(ctx, 2),
                     *pk = ol_ctx_input(ctx, 3), *pv = ol_ctx_input(ctx, 4), *seqlens, *totl,
                     *cosc = ol_ctx_input(ctx, 7), *sinc = ol_ctx_input(ctx, 8),
                     *pos = ol_ctx_input(ctx, 9), *abias = ol_ctx_input(ctx, 10);
  OL_TRY(ol_ctx_require(ctx, 0, &q));
  OL_TRY(ol_ctx_require(ctx, 5, &seqlens));
  OL_TRY(ol_ctx_require(ctx, 6, &totl));
  const ol_tensor *sinkt = ol_ctx_input(ctx, 11);
  if (!is_ft(q->dtype)) return ol_kernel_bad_dtype(node, "query", q->dtype);
  const ol_tensor *fl[8] = {key, val, pk, pv, cosc, sinc, abias, sinkt};
  static const char *const fn[8] = {"key", "value", "past_key", "past_value", "cos_cache", "sin_cache", "attention_bias", "head_sink"};
  for (int i = 0; i < 8; i++)
    if (fl[i] && fl[i]->dtype != q->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s must be %s, got %s", fn[i],
                             ol_dtype_name(q->dtype), ol_dtype_name(fl[i]->dtype));
  if (q->rank != 3) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query must be 3-D, got rank %d", q->rank);
  int64_t B = q->dims[0], S = q->dims[1], N = k->num_heads, KN = k->kv_heads, H;
  bool packed = key == NULL;
  if (packed != (val == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key and value must be given together");
  if (packed) {
    if (q->dims[2] % (N + 2 * KN))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "packed QKV width %lld is not divisible by num_heads + 2 * kv_num_heads",
                             (long long)q->dims[2]);
    H = q->dims[2] / (N + 2 * KN);
  } else {
    if (q->dims[2] % N)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query hidden size %lld is not divisible by num_heads %lld",
                             (long long)q->dims[2], (long long)N);
    H = q->dims[2] / N;
    if (key->rank != 3 || val->rank != 3 || key->dims[0] != B || key->dims[1] != S ||
        key->dims[2] != KN * H || memcmp(key->dims, val->dims, sizeof(int64_t) * 3) != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key and value must be (%lld, %lld, %lld)",
                             (long long)B, (long long)S, (long long)(KN * H));
  }
  if ((pk == NULL) != (pv == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key and past_value must be given together");
  int64_t P = 0;
  if (pk) {
    if (pk->rank != 4 || pk->dims[0] != B || pk->dims[1] != KN || pk->dims[3] != H ||
        pv->rank != 4 || memcmp(pk->dims, pv->dims, sizeof(int64_t) * 4) != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key/past_value must be (%lld, %lld, P, %lld)",
                             (long long)B, (long long)KN, (long long)H);
    P = pk->dims[2];
  }
  if (seqlens->dtype != OL_DTYPE_INT32 || ol_tcount(seqlens) != B)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "seqlens_k must be int32 with %lld values", (long long)B);
  if (totl->dtype != OL_DTYPE_INT32 || ol_tcount(totl) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "total_sequence_length must be an int32 scalar");
  int64_t total = ((const int32_t *)ol_tdata(totl))[0];
  if (total < S)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "total_sequence_length %lld is less than the sequence length %lld",
                           (long long)total, (long long)S);
  int64_t T = P > total ? P : total; /* present length */
  bool first = S == total;
  const int32_t *sl = ol_tdata(seqlens);
  for (int64_t b = 0; b < B; b++) {
    int64_t tb = (int64_t)sl[b] + 1, pb = first ? 0 : tb - S;
    if (tb < 1 || tb > T || pb < 0 || pb > P)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "seqlens_k[%lld] = %d is inconsistent with past length %lld and sequence length %lld",
                             (long long)b, sl[b], (long long)P, (long long)S);
  }
  int64_t half = 0;
  if (k->rotary) {
    if (!cosc || !sinc)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "do_rotary requires cos_cache and sin_cache");
    if (cosc->rank != 2 || sinc->rank != 2 || memcmp(cosc->dims, sinc->dims, sizeof(int64_t) * 2) != 0 ||
        cosc->dims[1] * 2 > H || cosc->dims[1] < 1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "cos_cache/sin_cache must be (max_position, rot/2) with rot <= head size %lld",
                             (long long)H);
    half = cosc->dims[1];
    if (pos) {
      if (pos->dtype != OL_DTYPE_INT64 || pos->rank != 2 || pos->dims[0] != B || pos->dims[1] != S)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "position_ids must be int64 (%lld, %lld)",
                               (long long)B, (long long)S);
    }
    for (int64_t b = 0; b < B; b++) {
      int64_t pb = first ? 0 : (int64_t)sl[b] + 1 - S;
      for (int64_t t = 0; t < S; t++) {
        int64_t pi = pos ? ((const int64_t *)ol_tdata(pos))[b * S + t] : pb + t;
        if (pi < 0 || pi >= cosc->dims[0])
          return ol_kernel_error(node, OL_INVALID_ARGUMENT, "position %lld is outside the cache [0, %lld)",
                                 (long long)pi, (long long)cosc->dims[0]);
      }
    }
  }
  if (abias && (abias->rank != 4 || (abias->dims[0] != B && abias->dims[0] != 1) ||
                (abias->dims[1] != N && abias->dims[1] != 1) || abias->dims[2] != S || abias->dims[3] != total))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attention_bias must be (B or 1, N or 1, %lld, %lld)",
                           (long long)S, (long long)total);
  if (sinkt && ol_tcount(sinkt) != N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "head_sink must have num_heads = %lld values",
                           (long long)N);
  int64_t od[3] = {B, S, N * H}, pd[4] = {B, KN, T, H};
  ol_tensor *y, *yk = NULL, *yv = NULL;
  OL_TRY(ol_ctx_output(ctx, 0, q->dtype, 3, od, &y));
  if (B * S == 0) {
    if (ol_ctx_wants_output(ctx, 1)) OL_TRY(ol_ctx_output(ctx, 1, q->dtype, 4, pd, &yk));
    if (ol_ctx_wants_output(ctx, 2)) OL_TRY(ol_ctx_output(ctx, 2, q->dtype, 4, pd, &yv));
    return OL_OK;
  }
  /* A plain append (float32, every batch's new rows right after its past)
   * on bound caches writes the new rows into their capacity (see
   * gqa_reserve); otherwise present K/V are built whole. */
  bool plain = q->dtype == OL_DTYPE_FLOAT && pk && T == P + S;
  for (int64_t b = 0; plain && b < B; b++) plain = (first ? 0 : (int64_t)sl[b] + 1 - S) == P;
  ol_append_reservation res[2];
  memset(res, 0, sizeof res);
  ol_value *grown[2] = {NULL, NULL}; /* session caches growing in place (ctx->grow_outputs) */
  ol_status s = OL_OK;
  for (int c = 0; plain && c < 2 && s == OL_OK; c++) {
    size_t o = 1 + (size_t)c;
    const ol_tensor *past = c ? pv : pk;
    if (!ol_ctx_wants_output(ctx, o)) continue;
    if (ctx->reserve_append) s = gqa_reserve(ctx, 3 + (size_t)c, o, pd, S, &res[c]);
    else if ((ctx->grow_outputs >> o) & 1u && past && past->dtype == OL_DTYPE_FLOAT &&
             ol_value_grow_from(ctx->allocator, past, 4, pd, 2, &grown[c]) != OL_OK)
      s = ol_kernel_error(node, OL_OUT_OF_MEMORY, "out of memory growing present output %zu", o);
  }
  if (s == OL_OK && !res[0].result && !grown[0] && ol_ctx_wants_output(ctx, 1)) s = ol_ctx_output(ctx, 1, q->dtype, 4, pd, &yk);
  if (s == OL_OK && !res[1].result && !grown[1] && ol_ctx_wants_output(ctx, 2)) s = ol_ctx_output(ctx, 2, q->dtype, 4, pd, &yv);
  if (s != OL_OK) {
    ol_value_release(res[0].result);
    ol_value_release(res[1].result);
    ol_value_release(grown[0]);
    ol_value_release(grown[1]);
    return s;
  }
  fviews v = {0};
  const float *qf = fv_load(&v, q), *kf = fv_load(&v, key), *vf = fv_load(&v, val),
              *pkf = fv_load(&v, pk), *pvf = fv_load(&v, pv), *cf = fv_load(&v, cosc),
              *sf = fv_load(&v, sinc), *af = fv_load(&v, abias), *hs = fv_load(&v, sinkt);
  static const float zero_sink = 0.0f;
  size_t kvn = (size_t)(B * KN * T * H);
  /* K/V rows: (b, h) blocks kst/vst elements apart — the reserved caches
   * (first block at writable - P rows, see gqa_reserve), the grown session
   * caches (past rows already in place) or whole scratch */
  bool kres = res[0].result || grown[0], vres = res[1].result || grown[1]; /* the commit clears result */
  float *Kb = res[0].result ? (float *)res[0].writable - P * H
              : grown[0]    ? ol_tdata(&grown[0]->tensor)
                            : ol_xcalloc(kvn + 1, sizeof(float));
  float *Vb = res[1].result ? (float *)res[1].writable - P * H
              : grown[1]    ? ol_tdata(&grown[1]->tensor)
                            : ol_xcalloc(kvn + 1, sizeof(float));
  int64_t kst = res[0].result ? (int64_t)(res[0].row_stride / sizeof(float))
                : grown[0]    ? grown[0]->tensor.pitch * H
                              : T * H;
  int64_t vst = res[1].result ? (int64_t)(res[1].row_stride / sizeof(float))
                : grown[1]    ? grown[1]->tensor.pitch * H
                              : T * H;
  int64_t pks = pk ? past_stride(pk) * H : 0, pvs = pv ? past_stride(pv) * H : 0;
  float *Qb = ol_xmalloc(sizeof(float) * (size_t)(B * S * N * H + 1));
  float *p = ol_xmalloc(sizeof(float) * (size_t)(T + 1));
  float *out = ol_xmalloc(sizeof(float) * (size_t)(B * S * N * H + 1));
  if (v.oom || !Kb || !Vb || !Qb || !p || !out) {
    s = OL_OUT_OF_MEMORY;
    goto done;
  }
  int64_t qw = packed ? (N + 2 * KN) * H : N * H, kw = packed ? qw : KN * H;
  const float *ksrc = packed ? qf + N * H : kf, *vsrc = packed ? qf + (N + KN) * H : vf;
  int64_t rot = 2 * half;
  for (int64_t b = 0; b < B; b++) {
    int64_t tb = (int64_t)sl[b] + 1, pb = first ? 0 : tb - S;
    for (int64_t h = 0; h < KN; h++) {
      float *kd = Kb + (b * KN + h) * kst, *vd = Vb + (b * KN + h) * vst;
      /* the whole past buffer, as a shared past/present buffer would hold
       * it (already in place in a reserved cache) */
      if (P && !kres) memcpy(kd, pkf + (b * KN + h) * pks, sizeof(float) * (size_t)(P * H));
      if (P && !vres) memcpy(vd, pvf + (b * KN + h) * pvs, sizeof(float) * (size_t)(P * H));
      for (int64_t t = 0; t < S; t++) {
        float *kr = kd + (pb + t) * H;
        memcpy(kr, ksrc + (b * S + t) * kw + h * H, sizeof(float) * (size_t)H);
        memcpy(vd + (pb + t) * H, vsrc + (b * S + t) * kw + h * H, sizeof(float) * (size_t)H);
        if (k->rotary) {
          int64_t pi = pos ? ((const int64_t *)ol_tdata(pos))[b * S + t] : pb + t;
          ol_nn23_rotate(kr, kr, cf + pi * half, sf + pi * half, H, rot, k->interleaved);
        }
      }
    }
    for (int64_t t = 0; t < S; t++)
      for (int64_t h = 0; h < N; h++) {
        float *qr = Qb + ((b * S + t) * N + h) * H;
        memcpy(qr, qf + (b * S + t) * qw + h * H, sizeof(float) * (size_t)H);
        if (k->rotary) {
          int64_t pi = pos ? ((const int64_t *)ol_tdata(pos))[b * S + t] : pb + t;
          ol_nn23_rotate(qr, qr, cf + pi * half, sf + pi * half, H, rot, k->interleaved);
        }
      }
  }
  float scale = k->scale > 0 ? k->scale : 1.0f / sqrtf((float)H);
  int64_t group = N / KN;
  for (int64_t b = 0; b < B; b++) {
    int64_t tb = (int64_t)sl[b] + 1, pb = first ? 0 : tb - S;
    for (int64_t h = 0; h < N; h++) {
      if (ctx->cancelled && *ctx->cancelled) {
        s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
        goto done;
      }
      const float *kd = Kb + (b * KN + h / group) * kst, *vd = Vb + (b * KN + h / group) * vst;
      for (int64_t t = 0; t < S; t++) {
        int64_t causal = pb + t + 1, lo = 0;
        if (causal > tb) causal = tb; /* padding rows of a prompt see the valid keys only */
        if (k->window >= 0 && causal > k->window) lo = causal - k->window;
        const float *ab = NULL;
        if (af)
          ab = af + (((abias->dims[0] == 1 ? 0 : b) * abias->dims[1] + (abias->dims[1] == 1 ? 0 : h)) * S + t) * total;
        attend_row(Qb + ((b * S + t) * N + h) * H, kd, H, vd, H, H, H, lo, causal, scale,
                   k->softcap, ab, NULL, hs ? hs + h : k->smooth ? &zero_sink : NULL, p,
                   out + (b * S + t) * N * H + h * H);
      }
    }
  }
  ol_floats_store(y, 0, out, B * S * N * H);
  if (yk) ol_floats_store(yk, 0, Kb, (int64_t)kvn);
  if (yv) ol_floats_store(yv, 0, Vb, (int64_t)kvn);
  s = gqa_commit(ctx, res, B * KN * S * H, B * KN * P * H, (int64_t)kvn);
  for (int c = 0; c < 2 && s == OL_OK; c++)
    if (grown[c]) {
      s = ol_ctx_set_output(ctx, 1 + (size_t)c, grown[c]);
      grown[c] = NULL;
    }
done:
  fv_free(&v);
  if (!kres) free(Kb);
  if (!vres) free(Vb);
  ol_value_release(res[0].result); /* left only when failing before the commit */
  ol_value_release(res[1].result);
  ol_value_release(grown[0]);
  ol_value_release(grown[1]);
  free(Qb);
  free(p);
  free(out);
  return s;
}

ol_status ol_cms_gqa_create(const ol_node *node, ol_kernel **out) {
  int64_t nh = ol_attr_int(node, "num_heads", 0), kvh = ol_attr_int(node, "kv_num_heads", 0);
  if (nh < 1 || kvh < 1 || nh % kvh)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attributes 'num_heads' (%lld) and 'kv_num_heads' (%lld) must be >= 1 with num_heads a multiple of kv_num_heads",
                           (long long)nh, (long long)kvh);
  float scale = ol_attr_float(node, "scale", 0.0f), softcap = ol_attr_float(node, "softcap", 0.0f);
  if (scale < 0.0f || scale != scale || softcap < 0.0f || softcap != softcap)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attributes 'scale' and 'softcap' must be >= 0");
  int64_t window = ol_attr_int(node, "local_window_size", -1);
  if (window < -1 || window == 0)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'local_window_size' must be -1 (none) or >= 1, got %lld",
                           (long long)window);
  if (ol_attr_int(node, "qk_output", 0) != 0)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "qk_output is not supported");
  gqa_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, gqa_compute, (ol_kernel **)&k));
  k->num_heads = nh;
  k->kv_heads = kvh;
  k->window = window;
  k->scale = scale;
  k->softcap = softcap;
  k->smooth = ol_attr_int(node, "smooth_softmax", 0) != 0;
  k->rotary = ol_attr_int(node, "do_rotary", 0) != 0;
  k->interleaved = ol_attr_int(node, "rotary_interleaved", 0) != 0;
  *out = &k->base;
  return OL_OK;
}
