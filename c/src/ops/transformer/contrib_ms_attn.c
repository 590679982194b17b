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
 * store: the past caches are widened one (batch, KV head) block at a time
 * through the dtype table (core/dtype.h) into scratch from the run's
 * allocator, never whole. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/transformer/transformer.h"
#include "simd/gemm.h"
#include "simd/gemm_tb.h"
#include "simd/math.h"


static bool is_ft(ol_dtype dt) { return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_FLOAT16; }

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

/* ------------------------------------------------------------ present caches */

/* Positions between a past cache's heads: its pitch when it grows in place
 * (pitched along the sequence axis; other layouts arrive dense), else P. */
static int64_t past_stride(const ol_tensor *past) {
  return past->pitch > 0 && past->pitch_axis == 2 ? ol_tensor_layout_pitch(past) : past->dims[2];
}

/* Where the rows of a present K or V cache go, in its own dtype: base (the
 * first (b, h) block), stride (elements between blocks) and kept (rows
 * already there: the past of a cache appended to in place, 0 for a fresh
 * present). base NULL: the present is not wanted. Both kernels compute on
 * float32 blocks: a float32 cache is that block itself, any other (float16)
 * is widened into scratch and gets only its rows after `kept` back, so a
 * float16 cache grows in place exactly as a float32 one. */
typedef struct kv_dest {
  void *base;
  ol_dtype dt;
  int64_t stride, kept;
} kv_dest;

static kv_dest kv_dest_of(void *base, ol_dtype dt, int64_t stride, int64_t kept) {
  kv_dest d = {base, dt, stride, kept};
  return d;
}

/* The cache holds float32 rows the kernel works on in place. */
static bool kv_dest_direct(const kv_dest *d) { return d->base && d->dt == OL_DTYPE_FLOAT; }

/* The float32 rows of block blk: in the cache, or scratch. */
static float *kv_dest_block(const kv_dest *d, int64_t blk, float *scratch) {
  return kv_dest_direct(d) ? (float *)d->base + blk * d->stride : scratch;
}

/* The past rows are in the block already (a float32 cache appended to). */
static bool kv_dest_has_past(const kv_dest *d) { return kv_dest_direct(d) && d->kept > 0; }

/* Rows [kept, T) of block blk, computed in scratch kd (width W), into a
 * cache of another dtype (float32 ones were written in place). */
static void kv_dest_store(const kv_dest *d, int64_t blk, const float *kd, int64_t T, int64_t W) {
  if (d->base && !kv_dest_direct(d))
    ol_floats_put(d->dt, d->base, blk * d->stride + d->kept * W, kd + d->kept * W, (T - d->kept) * W);
}

/* Where present K and V (outputs 1 and 2) go: reserved caches (persistent
 * state appends in place), session caches growing in place, or whole new
 * outputs (y; NULL when not wanted). */
typedef struct kv_presents {
  ol_append_reservation res[2];
  ol_value *grown[2];
  ol_tensor *y[2];
} kv_presents;

static void kv_presents_release(kv_presents *o) {
  for (int c = 0; c < 2; c++) {
    ol_value_release(o->res[c].result); /* left only when failing before the commit */
    ol_value_release(o->grown[c]);
    o->res[c].result = NULL, o->grown[c] = NULL;
  }
}

/* Reserves present output `out` (dims pd: [B, heads, T, W]) from bound past
 * input `in`, S new rows per (b, head). No result: not offered, declined or
 * not bound. */
static ol_status kv_reserve(ol_kernel_ctx *ctx, size_t in, size_t out, const int64_t *pd, int64_t S, size_t es,
                            ol_append_reservation *res) {
  OL_TRY(ctx->reserve_append(ctx->runtime, in, out, 4, pd, 2, res));
  if (!res->result) return OL_OK;
  size_t row = (size_t)pd[3] * es;
  if (res->rows != (size_t)(pd[0] * pd[1]) || res->row_bytes != (size_t)S * row || !row || res->row_stride % row ||
      (res->row_bytes && !res->writable)) {
    ol_value_release(res->result);
    res->result = NULL;
    return ol_kernel_error(ctx->node, OL_INTERNAL, "append reservation for output %zu does not match [%lld,%lld,%lld,%lld]",
                           out, (long long)pd[0], (long long)pd[1], (long long)pd[2], (long long)pd[3]);
  }
  return OL_OK;
}

/* Opens presents of dims pd[c] ([B, heads, T, W]) continuing the past
 * inputs past_input + c. append: every batch's S new rows go right after
 * its past, so bound caches get them written into their capacity (see
 * kv_reserve) and session caches into their spare rows; otherwise (and for
 * a cache neither offers) the present is built whole. */
static ol_status kv_presents_open(ol_kernel_ctx *ctx, bool append, size_t past_input, const ol_tensor *const *past,
                                  ol_dtype dt, const int64_t (*pd)[4], int64_t S, kv_presents *o) {
  memset(o, 0, sizeof *o);
  size_t es = ol_dtype_size(dt);
  ol_status s = OL_OK;
  for (int c = 0; append && c < 2 && s == OL_OK; c++) {
    size_t out = 1 + (size_t)c;
    if (!ol_ctx_wants_output(ctx, out)) continue;
    if (ctx->reserve_append) s = kv_reserve(ctx, past_input + (size_t)c, out, pd[c], S, es, &o->res[c]);
    else if ((ctx->grow_outputs >> out) & 1u &&
             ol_value_grow_from(ctx->allocator, past[c], 4, pd[c], 2, &o->grown[c]) != OL_OK)
      s = ol_kernel_error(ctx->node, OL_OUT_OF_MEMORY, "out of memory growing present output %zu", out);
  }
  for (int c = 0; c < 2 && s == OL_OK; c++)
    if (!o->res[c].result && !o->grown[c] && ol_ctx_wants_output(ctx, 1 + (size_t)c))
      s = ol_ctx_output(ctx, 1 + (size_t)c, dt, 4, pd[c], &o->y[c]);
  if (s != OL_OK) kv_presents_release(o);
  return s;
}

/* Where the rows of K (c 0) or V (c 1), W wide, P past of T rows per
 * (b, head), are written (see kv_dest): the reserved cache (its first block
 * at writable - P rows), the grown session cache (past rows already there),
 * a fresh present, or nowhere. */
static kv_dest kv_presents_dest(const kv_presents *o, int c, ol_dtype dt, int64_t P, int64_t T, int64_t W) {
  const ol_append_reservation *res = &o->res[c];
  size_t es = ol_dtype_size(dt);
  if (res->result) return kv_dest_of((char *)res->writable - (size_t)(P * W) * es, dt, (int64_t)(res->row_stride / es), P);
  if (o->grown[c]) return kv_dest_of(ol_tdata(&o->grown[c]->tensor), dt, o->grown[c]->tensor.pitch * W, P);
  return kv_dest_of(o->y[c] ? ol_tdata(o->y[c]) : NULL, dt, T * W, 0);
}

/* After the attention (status s): commits the filled reservations, reports
 * the storage work of bound caches (appended in place, or built whole as
 * the dense fallback: S fresh rows of each present pd[c], the rest past),
 * sets grown session caches as the outputs, releases the rest. */
static ol_status kv_presents_close(ol_kernel_ctx *ctx, kv_presents *o, ol_status s, const int64_t (*pd)[4], int64_t S,
                                   size_t es) {
  ol_storage_counts counts;
  memset(&counts, 0, sizeof counts);
  bool report = false;
  for (int c = 0; c < 2 && s == OL_OK; c++) {
    const ol_append_reservation *res = &o->res[c];
    uint64_t heads = (uint64_t)(pd[c][0] * pd[c][1]) * (uint64_t)pd[c][3] * es; /* bytes of one row of every head */
    uint64_t fresh = heads * (uint64_t)S, past = heads * (uint64_t)(pd[c][2] - S);
    report = report || res->bound;
    if (res->result) {
      counts.allocations += res->counts.allocations;
      counts.allocated_bytes += res->counts.allocated_bytes;
      counts.prefix_copied_bytes += res->counts.prefix_copied_bytes;
      counts.append_copied_bytes += res->counts.append_copied_bytes + fresh;
      counts.reuse_count += res->counts.reuse_count;
      s = ctx->commit_append(ctx->runtime, 1 + (size_t)c, &o->res[c]); /* clears res->result */
    } else if (res->bound) {
      counts.allocations += 1;
      counts.allocated_bytes += fresh + past;
      counts.prefix_copied_bytes += past;
      counts.append_copied_bytes += fresh;
    }
  }
  if (s == OL_OK && report && ctx->record_storage) s = ctx->record_storage(ctx->runtime, &counts);
  for (int c = 0; c < 2 && s == OL_OK; c++)
    if (o->grown[c]) {
      s = ol_ctx_set_output(ctx, 1 + (size_t)c, o->grown[c]);
      o->grown[c] = NULL;
    }
  kv_presents_release(o);
  return s;
}

/* ------------------------------------------------------------ MultiHeadAttention */

typedef struct mha_kernel {
  ol_kernel base;
  int64_t num_heads;
  float scale, mask_filter;
  bool causal;
} mha_kernel;

/* One MultiHeadAttention execution's inputs and shapes: B batch, S query
 * rows, N heads, D = N * H query width, L new K/V rows, Hv value head size,
 * P past rows, T = P + L; split: 4-D key/value (B, N, L, H). */
typedef struct mha_args {
  const ol_tensor *q, *key, *val, *bias, *kpm, *abias, *pk, *pv;
  int64_t B, S, N, D, H, L, Hv, Dv, P, T;
  bool split;
} mha_args;

/* Types and the shapes of query, key and value. */
static ol_status mha_check_qkv(const mha_kernel *k, ol_kernel_ctx *ctx, mha_args *a) {
  const ol_node *node = ctx->node;
  const ol_tensor *q = a->q, *key = a->key, *val = a->val;
  if (!is_ft(q->dtype)) return ol_kernel_bad_dtype(node, "query", q->dtype);
  if (!key || !val) return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "packed QKV (key/value absent) is not supported");
  if (ctx->num_inputs > 8 && (ctx->inputs[8] || (ctx->num_inputs > 9 && ctx->inputs[9])))
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "past_sequence_length/cache_indirection are not supported");
  const ol_tensor *fl[6] = {key, val, a->bias, a->abias, a->pk, a->pv};
  static const char *const fn[6] = {"key", "value", "bias", "attention_bias", "past_key", "past_value"};
  for (int i = 0; i < 6; i++)
    if (fl[i] && fl[i]->dtype != q->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s must be %s, got %s", fn[i], ol_dtype_name(q->dtype),
                             ol_dtype_name(fl[i]->dtype));
  if (q->rank != 3) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query must be 3-D, got rank %d", q->rank);
  a->B = q->dims[0], a->S = q->dims[1], a->N = k->num_heads, a->D = q->dims[2];
  if (a->D % a->N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query hidden size %lld is not divisible by num_heads %lld",
                           (long long)a->D, (long long)a->N);
  a->H = a->D / a->N;
  a->split = key->rank == 4;
  if (a->split) {
    if (val->rank != 4 || key->dims[0] != a->B || key->dims[1] != a->N || key->dims[3] != a->H || val->dims[0] != a->B ||
        val->dims[1] != a->N || val->dims[2] != key->dims[2])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "4-D key/value must be (B, N, L, H) and agree");
    if (a->pk || a->pv || a->bias)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past and bias are not allowed with 4-D key/value");
    a->L = key->dims[2], a->Hv = val->dims[3];
  } else {
    if (key->rank != 3 || val->rank != 3 || key->dims[0] != a->B || val->dims[0] != a->B || key->dims[2] != a->D ||
        val->dims[1] != key->dims[1] || val->dims[2] % a->N)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key must be (B, L, %lld) and value (B, L, N*Hv)", (long long)a->D);
    a->L = key->dims[1], a->Hv = val->dims[2] / a->N;
  }
  a->Dv = a->N * a->Hv;
  return OL_OK;
}

/* bias, past caches, key_padding_mask, attention_bias. */
static ol_status mha_check_extras(const ol_node *node, mha_args *a) {
  if (a->bias && (a->bias->rank != 1 || a->bias->dims[0] != 2 * a->D + a->Dv))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "bias must have %lld values", (long long)(2 * a->D + a->Dv));
  if ((a->pk == NULL) != (a->pv == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key and past_value must be given together");
  a->P = 0;
  if (a->pk) {
    const ol_tensor *pk = a->pk, *pv = a->pv;
    if (pk->rank != 4 || pv->rank != 4 || pk->dims[0] != a->B || pk->dims[1] != a->N || pk->dims[3] != a->H ||
        pv->dims[0] != a->B || pv->dims[1] != a->N || pv->dims[2] != pk->dims[2] || pv->dims[3] != a->Hv)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key/past_value must be (B, N, P, H)");
    a->P = pk->dims[2];
  }
  a->T = a->P + a->L;
  const ol_tensor *kpm = a->kpm, *ab = a->abias;
  if (kpm) {
    if (kpm->dtype != OL_DTYPE_INT32) return ol_kernel_bad_dtype(node, "key_padding_mask", kpm->dtype);
    if (!(kpm->rank == 2 && kpm->dims[0] == a->B && kpm->dims[1] == a->T) && !(kpm->rank == 1 && kpm->dims[0] == a->B))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key_padding_mask must be (B, T) or (B)");
  }
  if (ab && (ab->rank != 4 || (ab->dims[0] != a->B && ab->dims[0] != 1) || (ab->dims[1] != a->N && ab->dims[1] != 1) ||
             ab->dims[2] != a->S || ab->dims[3] != a->T))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attention_bias must be (B or 1, N or 1, %lld, %lld)",
                           (long long)a->S, (long long)a->T);
  return OL_OK;
}

/* The present of head (b, h): past rows then the new (biased) rows, into
 * kd/vd (past rows already there when a float32 present grew in place). */
static void mha_kv_block(const mha_args *a, int64_t b, int64_t h, float *kd, float *vd, bool k_past, bool v_past,
                         const float *bf) {
  ol_dtype ft = a->q->dtype;
  int64_t H = a->H, Hv = a->Hv, N = a->N, L = a->L, P = a->P;
  int64_t pks = a->pk ? past_stride(a->pk) * H : 0, pvs = a->pv ? past_stride(a->pv) * Hv : 0;
  if (P && !k_past) ol_floats_get(ft, ol_tdata(a->pk), (b * N + h) * pks, P * H, kd);
  if (P && !v_past) ol_floats_get(ft, ol_tdata(a->pv), (b * N + h) * pvs, P * Hv, vd);
  for (int64_t j = 0; j < L; j++) {
    float *kr = kd + (P + j) * H, *vr = vd + (P + j) * Hv;
    ol_floats_get(ft, ol_tdata(a->key), a->split ? ((b * N + h) * L + j) * H : (b * L + j) * a->D + h * H, H, kr);
    ol_floats_get(ft, ol_tdata(a->val), a->split ? ((b * N + h) * L + j) * Hv : (b * L + j) * a->Dv + h * Hv, Hv, vr);
    for (int64_t d = 0; bf && d < H; d++) kr[d] = kr[d] + bf[a->D + h * H + d];
    for (int64_t d = 0; bf && d < Hv; d++) vr[d] = vr[d] + bf[2 * a->D + h * Hv + d];
  }
}

/* Scratch rows of the query loop. */
typedef struct mha_scratch {
  float *qrow, *p, *add, *abw;
} mha_scratch;

/* The S query rows of head (b, h) over its present kd/vd. */
static void mha_attend_head(const mha_kernel *k, const mha_args *a, int64_t b, int64_t h, const float *kd,
                            const float *vd, const float *bf, const mha_scratch *w, float *out) {
  ol_dtype ft = a->q->dtype;
  int64_t H = a->H, T = a->T, S = a->S;
  const ol_tensor *kpm = a->kpm, *abias = a->abias;
  const int32_t *mk = kpm ? ol_tdata(kpm) : NULL;
  float scale = k->scale > 0 ? k->scale : 1.0f / sqrtf((float)H);
  bool any = mk || k->causal;
  for (int64_t t = 0; t < S; t++) {
    ol_floats_get(ft, ol_tdata(a->q), (b * S + t) * a->D + h * H, H, w->qrow);
    for (int64_t d = 0; bf && d < H; d++) w->qrow[d] = w->qrow[d] + bf[h * H + d];
    for (int64_t j = 0; any && j < T; j++) {
      bool masked = k->causal && j > a->P + t;
      if (mk) masked = masked || (kpm->rank == 2 ? mk[b * T + j] == 0 : j >= mk[b]);
      w->add[j] = masked ? k->mask_filter : 0.0f;
    }
    const float *ab = NULL;
    if (abias)
      ab = ol_floats_row(ft, ol_tdata(abias),
                         (((abias->dims[0] == 1 ? 0 : b) * abias->dims[1] + (abias->dims[1] == 1 ? 0 : h)) * S + t) * T, T,
                         w->abw);
    attend_row(w->qrow, kd, H, vd, a->Hv, H, a->Hv, 0, T, scale, 0.0f, any ? w->add : NULL, ab, NULL, w->p,
               out + (b * S + t) * a->Dv + h * a->Hv);
  }
}

/* K/V rows: per (b, h) block in the present (kd/vd, see kv_dest) or, when
 * not float32 or not wanted, one block at a time in scratch. */
static ol_status mha_attend(const mha_kernel *k, ol_kernel_ctx *ctx, const mha_args *a, const kv_dest *kv,
                            ol_tensor *y) {
  ol_dtype ft = a->q->dtype;
  int64_t B = a->B, N = a->N, H = a->H, Hv = a->Hv, T = a->T, D = a->D, Dv = a->Dv;
  /* one block of scratch: K/V blocks, the query row, scores, mask, float16
   * attention_bias rows, bias and output */
  int64_t nbias = a->bias ? ol_floats_scratch(ft, 2 * D + Dv) : 0, nout = ol_floats_scratch(ft, B * a->S * Dv);
  int64_t nk = kv_dest_direct(&kv[0]) ? 0 : T * H, nv = kv_dest_direct(&kv[1]) ? 0 : T * Hv;
  int64_t nab = a->abias ? ol_floats_scratch(ft, T) : 0;
  float *scratch = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(nk + nv + H + 3 * (T + 1) + nbias + nout));
  if (!scratch) return OL_OUT_OF_MEMORY;
  float *kblk = scratch, *vblk = kblk + nk;
  mha_scratch w = {vblk + nv, NULL, NULL, NULL};
  w.p = w.qrow + H, w.add = w.p + T + 1, w.abw = w.add + T + 1;
  float *bw = w.abw + nab, *ow = bw + nbias;
  const float *bf = a->bias ? ol_floats_row(ft, ol_tdata(a->bias), 0, 2 * D + Dv, bw) : NULL;
  float *out = ft == OL_DTYPE_FLOAT ? (float *)ol_tdata(y) : ow;
  ol_status s = OL_OK;
  for (int64_t b = 0; b < B && s == OL_OK; b++)
    for (int64_t h = 0; h < N && s == OL_OK; h++) {
      if (ctx->cancelled && *ctx->cancelled) {
        s = ol_kernel_error(ctx->node, OL_CANCELLED, "cancelled");
        break;
      }
      float *kd = kv_dest_block(&kv[0], b * N + h, kblk), *vd = kv_dest_block(&kv[1], b * N + h, vblk);
      mha_kv_block(a, b, h, kd, vd, kv_dest_has_past(&kv[0]), kv_dest_has_past(&kv[1]), bf);
      kv_dest_store(&kv[0], b * N + h, kd, T, H);
      kv_dest_store(&kv[1], b * N + h, vd, T, Hv);
      mha_attend_head(k, a, b, h, kd, vd, bf, &w, out);
    }
  if (s == OL_OK) ol_floats_store(y, 0, out, B * a->S * Dv);
  ol_dealloc(ctx->allocator, scratch);
  return s;
}

static ol_status mha_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  mha_kernel *k = (mha_kernel *)kernel;
  mha_args a = {.key = ol_ctx_input(ctx, 1), .val = ol_ctx_input(ctx, 2), .bias = ol_ctx_input(ctx, 3),
                .kpm = ol_ctx_input(ctx, 4), .abias = ol_ctx_input(ctx, 5), .pk = ol_ctx_input(ctx, 6),
                .pv = ol_ctx_input(ctx, 7)};
  OL_TRY(ol_ctx_require(ctx, 0, &a.q));
  OL_TRY(mha_check_qkv(k, ctx, &a));
  OL_TRY(mha_check_extras(ctx->node, &a));
  int64_t od[3] = {a.B, a.S, a.Dv}, pd[2][4] = {{a.B, a.N, a.T, a.H}, {a.B, a.N, a.T, a.Hv}};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, a.q->dtype, 3, od, &y));
  /* past rows, then the L new ones: bound caches (persistent state) and
   * session caches grow in place; 4-D key/value have no presents */
  kv_presents o;
  memset(&o, 0, sizeof o);
  const ol_tensor *past[2] = {a.pk, a.pv};
  if (!a.split) OL_TRY(kv_presents_open(ctx, a.pk && a.pv, 6, past, a.q->dtype, pd, a.L, &o));
  const kv_dest kv[2] = {kv_presents_dest(&o, 0, a.q->dtype, a.P, a.T, a.H),
                         kv_presents_dest(&o, 1, a.q->dtype, a.P, a.T, a.Hv)};
  ol_status s = a.B * a.N > 0 ? mha_attend(k, ctx, &a, kv, y) : OL_OK;
  return kv_presents_close(ctx, &o, s, pd, a.L, ol_dtype_size(a.q->dtype));
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

static ol_status gqa_run(ol_kernel *kernel, ol_kernel_ctx *ctx);

/* past_key/past_value are read in place when pitched along the sequence
 * axis (caches growing in place; float16 ones a head block at a time
 * through the dtype table); any other pitched layout gets a dense copy
 * first. */
static ol_status gqa_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  for (size_t i = 3; i <= 4 && i < ctx->num_inputs; i++) {
    const ol_tensor *t = ol_ctx_input(ctx, i);
    if (t && ol_tensor_is_strided(t) && t->pitch_axis != 2)
      return ol_kernel_run_densified(kernel, ctx, (1u << 3) | (1u << 4), gqa_run);
  }
  return gqa_run(kernel, ctx);
}

/* One execution's inputs and shapes: B batch, S new tokens, N query heads,
 * KN K/V heads, H head size, P past rows, T present rows, total (the
 * total_sequence_length input), first (a prompt: S == total), half (rotary
 * pairs). */
typedef struct gqa_args {
  const ol_tensor *q, *key, *val, *pk, *pv, *seqlens, *totl, *cosc, *sinc, *pos, *abias, *sinkt;
  const int32_t *sl;
  int64_t B, S, N, KN, H, P, T, total, half;
  bool packed, first;
} gqa_args;

/* Query, key and value: types, packing, shapes. */
static ol_status gqa_check_qkv(const gqa_kernel *k, const ol_node *node, gqa_args *a) {
  const ol_tensor *q = a->q;
  if (!is_ft(q->dtype)) return ol_kernel_bad_dtype(node, "query", q->dtype);
  const ol_tensor *fl[8] = {a->key, a->val, a->pk, a->pv, a->cosc, a->sinc, a->abias, a->sinkt};
  static const char *const fn[8] = {"key", "value", "past_key", "past_value", "cos_cache", "sin_cache", "attention_bias", "head_sink"};
  for (int i = 0; i < 8; i++)
    if (fl[i] && fl[i]->dtype != q->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s must be %s, got %s", fn[i],
                             ol_dtype_name(q->dtype), ol_dtype_name(fl[i]->dtype));
  if (q->rank != 3) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query must be 3-D, got rank %d", q->rank);
  a->B = q->dims[0], a->S = q->dims[1], a->N = k->num_heads, a->KN = k->kv_heads;
  a->packed = a->key == NULL;
  if (a->packed != (a->val == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key and value must be given together");
  if (a->packed) {
    if (q->dims[2] % (a->N + 2 * a->KN))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "packed QKV width %lld is not divisible by num_heads + 2 * kv_num_heads",
                             (long long)q->dims[2]);
    a->H = q->dims[2] / (a->N + 2 * a->KN);
    return OL_OK;
  }
  if (q->dims[2] % a->N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "query hidden size %lld is not divisible by num_heads %lld",
                           (long long)q->dims[2], (long long)a->N);
  a->H = q->dims[2] / a->N;
  if (a->key->rank != 3 || a->val->rank != 3 || a->key->dims[0] != a->B || a->key->dims[1] != a->S ||
      a->key->dims[2] != a->KN * a->H || memcmp(a->key->dims, a->val->dims, sizeof(int64_t) * 3) != 0)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "key and value must be (%lld, %lld, %lld)",
                           (long long)a->B, (long long)a->S, (long long)(a->KN * a->H));
  return OL_OK;
}

/* Past caches, seqlens_k and total_sequence_length: P, T, first. */
static ol_status gqa_check_lengths(const ol_node *node, gqa_args *a) {
  if ((a->pk == NULL) != (a->pv == NULL))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key and past_value must be given together");
  a->P = 0;
  if (a->pk) {
    const ol_tensor *pk = a->pk, *pv = a->pv;
    if (pk->rank != 4 || pk->dims[0] != a->B || pk->dims[1] != a->KN || pk->dims[3] != a->H || pv->rank != 4 ||
        memcmp(pk->dims, pv->dims, sizeof(int64_t) * 4) != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "past_key/past_value must be (%lld, %lld, P, %lld)",
                             (long long)a->B, (long long)a->KN, (long long)a->H);
    a->P = pk->dims[2];
  }
  if (a->seqlens->dtype != OL_DTYPE_INT32 || ol_tcount(a->seqlens) != a->B)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "seqlens_k must be int32 with %lld values", (long long)a->B);
  if (a->totl->dtype != OL_DTYPE_INT32 || ol_tcount(a->totl) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "total_sequence_length must be an int32 scalar");
  a->total = ((const int32_t *)ol_tdata(a->totl))[0];
  if (a->total < a->S)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "total_sequence_length %lld is less than the sequence length %lld",
                           (long long)a->total, (long long)a->S);
  a->T = a->P > a->total ? a->P : a->total; /* present length */
  a->first = a->S == a->total;
  a->sl = ol_tdata(a->seqlens);
  for (int64_t b = 0; b < a->B; b++) {
    int64_t tb = (int64_t)a->sl[b] + 1, pb = a->first ? 0 : tb - a->S;
    if (tb < 1 || tb > a->T || pb < 0 || pb > a->P)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "seqlens_k[%lld] = %d is inconsistent with past length %lld and sequence length %lld",
                             (long long)b, a->sl[b], (long long)a->P, (long long)a->S);
  }
  return OL_OK;
}

/* The past rows of batch b (0 on a prompt). */
static int64_t gqa_past_of(const gqa_args *a, int64_t b) { return a->first ? 0 : (int64_t)a->sl[b] + 1 - a->S; }

/* Rotary caches and positions, attention_bias, head_sink. */
static ol_status gqa_check_extras(const gqa_kernel *k, const ol_node *node, gqa_args *a) {
  a->half = 0;
  if (k->rotary) {
    const ol_tensor *cosc = a->cosc, *sinc = a->sinc, *pos = a->pos;
    if (!cosc || !sinc) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "do_rotary requires cos_cache and sin_cache");
    if (cosc->rank != 2 || sinc->rank != 2 || memcmp(cosc->dims, sinc->dims, sizeof(int64_t) * 2) != 0 ||
        cosc->dims[1] * 2 > a->H || cosc->dims[1] < 1)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "cos_cache/sin_cache must be (max_position, rot/2) with rot <= head size %lld", (long long)a->H);
    a->half = cosc->dims[1];
    if (pos && (pos->dtype != OL_DTYPE_INT64 || pos->rank != 2 || pos->dims[0] != a->B || pos->dims[1] != a->S))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "position_ids must be int64 (%lld, %lld)", (long long)a->B,
                             (long long)a->S);
    for (int64_t b = 0; b < a->B; b++)
      for (int64_t t = 0; t < a->S; t++) {
        int64_t pi = pos ? ((const int64_t *)ol_tdata(pos))[b * a->S + t] : gqa_past_of(a, b) + t;
        if (pi < 0 || pi >= cosc->dims[0])
          return ol_kernel_error(node, OL_INVALID_ARGUMENT, "position %lld is outside the cache [0, %lld)",
                                 (long long)pi, (long long)cosc->dims[0]);
      }
  }
  const ol_tensor *ab = a->abias;
  if (ab && (ab->rank != 4 || (ab->dims[0] != a->B && ab->dims[0] != 1) || (ab->dims[1] != a->N && ab->dims[1] != 1) ||
             ab->dims[2] != a->S || ab->dims[3] != a->total))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "attention_bias must be (B or 1, N or 1, %lld, %lld)",
                           (long long)a->S, (long long)a->total);
  if (a->sinkt && ol_tcount(a->sinkt) != a->N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "head_sink must have num_heads = %lld values", (long long)a->N);
  return OL_OK;
}

/* Float32 copies of the rows the attention loop reads (see gqa_attend). */
typedef struct gqa_scratch {
  float *kblk, *vblk, *Qb, *p, *cw, *sw, *abw, *hsw, *ow;
} gqa_scratch;

/* The queries of batch b, rotated: Qb rows (b * S + t) * N + h. */
static void gqa_queries(const gqa_kernel *k, const gqa_args *a, int64_t b, const gqa_scratch *w) {
  ol_dtype ft = a->q->dtype;
  int64_t qw = a->packed ? (a->N + 2 * a->KN) * a->H : a->N * a->H, H = a->H, half = a->half;
  const int64_t *posd = a->pos ? ol_tdata(a->pos) : NULL;
  for (int64_t t = 0; t < a->S; t++) {
    int64_t pi = posd ? posd[b * a->S + t] : gqa_past_of(a, b) + t;
    const float *cr = k->rotary ? ol_floats_row(ft, ol_tdata(a->cosc), pi * half, half, w->cw) : NULL;
    const float *sr = k->rotary ? ol_floats_row(ft, ol_tdata(a->sinc), pi * half, half, w->sw) : NULL;
    for (int64_t h = 0; h < a->N; h++) {
      float *qr = w->Qb + ((b * a->S + t) * a->N + h) * H;
      ol_floats_get(ft, ol_tdata(a->q), (b * a->S + t) * qw + h * H, H, qr);
      if (k->rotary) ol_nn23_rotate(qr, qr, cr, sr, H, 2 * half, k->interleaved);
    }
  }
}

/* The K and V rows of (b, kh) into kd/vd: the past and zeros after it
 * (unless the past is already there: *_past), then the new rows (keys
 * rotated). */
static void gqa_kv_block(const gqa_kernel *k, const gqa_args *a, int64_t b, int64_t kh, float *kd, float *vd,
                         bool k_past, bool v_past, const gqa_scratch *w) {
  ol_dtype ft = a->q->dtype;
  int64_t H = a->H, P = a->P, T = a->T, pb = gqa_past_of(a, b), half = a->half;
  int64_t pks = a->pk ? past_stride(a->pk) * H : 0, pvs = a->pv ? past_stride(a->pv) * H : 0;
  if (!k_past) {
    memset(kd + P * H, 0, sizeof(float) * (size_t)((T - P) * H));
    if (P) ol_floats_get(ft, ol_tdata(a->pk), (b * a->KN + kh) * pks, P * H, kd);
  }
  if (!v_past) {
    memset(vd + P * H, 0, sizeof(float) * (size_t)((T - P) * H));
    if (P) ol_floats_get(ft, ol_tdata(a->pv), (b * a->KN + kh) * pvs, P * H, vd);
  }
  int64_t kw = a->packed ? (a->N + 2 * a->KN) * H : a->KN * H;
  const void *ksrc = a->packed ? ol_tdata(a->q) : ol_tdata(a->key), *vsrc = a->packed ? ol_tdata(a->q) : ol_tdata(a->val);
  int64_t koff = a->packed ? a->N * H : 0, voff = a->packed ? (a->N + a->KN) * H : 0;
  const int64_t *posd = a->pos ? ol_tdata(a->pos) : NULL;
  for (int64_t t = 0; t < a->S; t++) {
    float *kr = kd + (pb + t) * H;
    ol_floats_get(ft, ksrc, (b * a->S + t) * kw + koff + kh * H, H, kr);
    ol_floats_get(ft, vsrc, (b * a->S + t) * kw + voff + kh * H, H, vd + (pb + t) * H);
    if (k->rotary) {
      int64_t pi = posd ? posd[b * a->S + t] : pb + t;
      ol_nn23_rotate(kr, kr, ol_floats_row(ft, ol_tdata(a->cosc), pi * half, half, w->cw),
                     ol_floats_row(ft, ol_tdata(a->sinc), pi * half, half, w->sw), H, 2 * half, k->interleaved);
    }
  }
}

/* Every query row of heads sharing K/V head kh of batch b over kd/vd. */
static ol_status gqa_attend_group(const gqa_kernel *k, ol_kernel_ctx *ctx, const gqa_args *a, int64_t b, int64_t kh,
                                  const float *kd, const float *vd, const gqa_scratch *w, float *out) {
  static const float zero_sink = 0.0f;
  ol_dtype ft = a->q->dtype;
  const float *hs = a->sinkt ? ol_floats_row(ft, ol_tdata(a->sinkt), 0, a->N, w->hsw) : NULL;
  float scale = k->scale > 0 ? k->scale : 1.0f / sqrtf((float)a->H);
  int64_t group = a->N / a->KN, tb = (int64_t)a->sl[b] + 1, pb = gqa_past_of(a, b), H = a->H;
  const ol_tensor *abias = a->abias;
  for (int64_t h = kh * group; h < (kh + 1) * group; h++) {
    if (ctx->cancelled && *ctx->cancelled) return ol_kernel_error(ctx->node, OL_CANCELLED, "cancelled");
    for (int64_t t = 0; t < a->S; t++) {
      int64_t causal = pb + t + 1, lo = 0;
      if (causal > tb) causal = tb; /* padding rows of a prompt see the valid keys only */
      if (k->window >= 0 && causal > k->window) lo = causal - k->window;
      const float *ab = NULL;
      if (abias)
        ab = ol_floats_row(ft, ol_tdata(abias),
                           (((abias->dims[0] == 1 ? 0 : b) * abias->dims[1] + (abias->dims[1] == 1 ? 0 : h)) * a->S + t) *
                               a->total,
                           a->total, w->abw);
      attend_row(w->Qb + ((b * a->S + t) * a->N + h) * H, kd, H, vd, H, H, H, lo, causal, scale, k->softcap, ab, NULL,
                 hs ? hs + h : k->smooth ? &zero_sink : NULL, w->p, out + (b * a->S + t) * a->N * H + h * H);
    }
  }
  return OL_OK;
}

/* Rotary queries, then per (b, K/V head) the K/V rows and their query
 * heads' attention; Y stored when done. */
static ol_status gqa_attend(const gqa_kernel *k, ol_kernel_ctx *ctx, const gqa_args *a, const kv_presents *o,
                            ol_tensor *y) {
  ol_dtype ft = a->q->dtype;
  int64_t H = a->H, T = a->T;
  const kv_dest kv[2] = {kv_presents_dest(o, 0, a->q->dtype, a->P, a->T, a->H), kv_presents_dest(o, 1, a->q->dtype, a->P, a->T, a->H)};
  /* one block of scratch: K/V blocks, rotated queries, scores, and float16
   * rows of cos/sin, attention_bias, head_sink and the output */
  int64_t nq = a->B * a->S * a->N * H, nk = kv_dest_direct(&kv[0]) ? 0 : T * H, nv = kv_dest_direct(&kv[1]) ? 0 : T * H;
  int64_t ncs = k->rotary ? ol_floats_scratch(ft, a->half) : 0, nab = a->abias ? ol_floats_scratch(ft, T) : 0;
  int64_t nhs = a->sinkt ? ol_floats_scratch(ft, a->N) : 0, nout = ol_floats_scratch(ft, nq);
  float *scratch = ol_alloc(ctx->allocator, sizeof(float) * (size_t)(nk + nv + nq + T + 1 + 2 * ncs + nab + nhs + nout));
  if (!scratch) return OL_OUT_OF_MEMORY;
  gqa_scratch w;
  w.kblk = scratch, w.vblk = w.kblk + nk, w.Qb = w.vblk + nv, w.p = w.Qb + nq, w.cw = w.p + T + 1, w.sw = w.cw + ncs;
  w.abw = w.sw + ncs, w.hsw = w.abw + nab, w.ow = w.hsw + nhs;
  if (nab) memset(w.abw, 0, sizeof(float) * (size_t)nab); /* past `total`: read only when seqlens_k exceeds it */
  float *out = ft == OL_DTYPE_FLOAT ? (float *)ol_tdata(y) : w.ow;
  ol_status s = OL_OK;
  for (int64_t b = 0; b < a->B && s == OL_OK; b++) {
    gqa_queries(k, a, b, &w);
    for (int64_t kh = 0; kh < a->KN && s == OL_OK; kh++) {
      int64_t blk = b * a->KN + kh;
      float *kd = kv_dest_block(&kv[0], blk, w.kblk), *vd = kv_dest_block(&kv[1], blk, w.vblk);
      gqa_kv_block(k, a, b, kh, kd, vd, kv_dest_has_past(&kv[0]), kv_dest_has_past(&kv[1]), &w);
      kv_dest_store(&kv[0], blk, kd, T, H);
      kv_dest_store(&kv[1], blk, vd, T, H);
      s = gqa_attend_group(k, ctx, a, b, kh, kd, vd, &w, out);
    }
  }
  if (s == OL_OK) ol_floats_store(y, 0, out, nq);
  ol_dealloc(ctx->allocator, scratch);
  return s;
}

static ol_status gqa_run(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  gqa_kernel *k = (gqa_kernel *)kernel;
  gqa_args a = {.key = ol_ctx_input(ctx, 1), .val = ol_ctx_input(ctx, 2), .pk = ol_ctx_input(ctx, 3),
                .pv = ol_ctx_input(ctx, 4), .cosc = ol_ctx_input(ctx, 7), .sinc = ol_ctx_input(ctx, 8),
                .pos = ol_ctx_input(ctx, 9), .abias = ol_ctx_input(ctx, 10), .sinkt = ol_ctx_input(ctx, 11)};
  OL_TRY(ol_ctx_require(ctx, 0, &a.q));
  OL_TRY(ol_ctx_require(ctx, 5, &a.seqlens));
  OL_TRY(ol_ctx_require(ctx, 6, &a.totl));
  OL_TRY(gqa_check_qkv(k, ctx->node, &a));
  OL_TRY(gqa_check_lengths(ctx->node, &a));
  OL_TRY(gqa_check_extras(k, ctx->node, &a));
  int64_t od[3] = {a.B, a.S, a.N * a.H}, pd[2][4] = {{a.B, a.KN, a.T, a.H}, {a.B, a.KN, a.T, a.H}};
  ol_tensor *y, *unused;
  OL_TRY(ol_ctx_output(ctx, 0, a.q->dtype, 3, od, &y));
  if (a.B * a.S == 0) {
    if (ol_ctx_wants_output(ctx, 1)) OL_TRY(ol_ctx_output(ctx, 1, a.q->dtype, 4, pd[0], &unused));
    if (ol_ctx_wants_output(ctx, 2)) OL_TRY(ol_ctx_output(ctx, 2, a.q->dtype, 4, pd[1], &unused));
    return OL_OK;
  }
  /* a plain append: every batch's new rows right after its past */
  bool append = a.pk && a.T == a.P + a.S;
  for (int64_t b = 0; append && b < a.B; b++) append = gqa_past_of(&a, b) == a.P;
  const ol_tensor *past[2] = {a.pk, a.pv};
  kv_presents o;
  OL_TRY(kv_presents_open(ctx, append, 3, past, a.q->dtype, pd, a.S, &o));
  ol_status s = gqa_attend(k, ctx, &a, &o, y);
  return kv_presents_close(ctx, &o, s, pd, a.S, ol_dtype_size(a.q->dtype));
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
