/* Paged KV caches (quant/paged.h, ops/paged/): the seed's fixtures with its
 * numbers (the dense and the windowed one), paged vs dense attention on the
 * reconstructed values for INT4/UINT4/INT8/UINT8 pages, the four-step
 * accuracy table, grouped heads and batches, pinned bits over quantized
 * pages (every code type, odd head sizes), attribute and input
 * validation, every cache validation rejection, the page memo, format
 * policies, and QuantizePagedCache (the seed's block-3 example, shared
 * unselected blocks, errors that change nothing). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"
#include "ops/paged/paged.h"

#define RT "ai.rt"

/* ------------------------------------------------------------ a kernel kept across runs */

typedef struct pk {
  ol_node node;
  const char *inputs[6];
  const char *outputs[2];
  ol_kernel *kernel;
  ol_paged_stats stats;   /* of the last run */
  int events;
} pk;

static ol_status record(void *runtime, const ol_paged_stats *stats) {
  pk *p = runtime;
  p->stats = *stats;
  p->events++;
  return OL_OK;
}

static ol_status pk_create(pk *p, const char *op, ol_attr *attrs, size_t n_attrs, size_t n_inputs) {
  static const char *names[6] = {"q", "k", "v", "past", "i4", "i5"};
  memset(p, 0, sizeof *p);
  for (size_t i = 0; i < 6; i++) p->inputs[i] = names[i];
  p->outputs[0] = "y", p->outputs[1] = "present";
  p->node = (ol_node){.name = "paged", .op_type = op, .domain = RT, .opset = 1, .num_inputs = n_inputs,
                      .inputs = p->inputs, .num_outputs = strcmp(op, "PagedAttention") == 0 ? 2 : 1,
                      .outputs = p->outputs, .num_attrs = n_attrs, .attrs = attrs};
  const ol_op_schema *row;
  OL_TRY(ol_schema_find(&p->node, &row));
  return row->create(&p->node, &p->kernel);
}

static void pk_destroy(pk *p) {
  if (p->kernel && p->kernel->destroy) p->kernel->destroy(p->kernel);
  else free(p->kernel);
  p->kernel = NULL;
}

static ol_status pk_run(pk *p, ol_value *const *inputs, const ol_paged_policy *policy, ol_value **outputs) {
  int cancelled = 0;
  outputs[0] = outputs[1] = NULL;
  ol_kernel_ctx ctx = {0};
  ctx.node = &p->node;
  ctx.inputs = inputs;
  ctx.num_inputs = p->node.num_inputs;
  ctx.outputs = outputs;
  ctx.num_outputs = p->node.num_outputs;
  ctx.cancelled = &cancelled;
  ctx.runtime = p;
  ctx.paged = policy;
  ctx.record_paged = record;
  memset(&p->stats, 0, sizeof p->stats);
  ol_status s = p->kernel->compute(p->kernel, &ctx);
  if (s != OL_OK) tk_release_all(outputs, (int)p->node.num_outputs);
  return s;
}

static ol_value *empty_cache(void) {
  ol_value *c = NULL;
  CHECK_OK(ol_paged_cache_new(NULL, 0, &c));
  return c;
}

static ol_value *bhld(int64_t B, int64_t H, int64_t L, int64_t D, float (*f)(int64_t b, int64_t h, int64_t l, int64_t d)) {
  int64_t dims[4] = {B, H, L, D};
  ol_value *v = tk_f32(4, dims, NULL);
  float *x = ol_tdata(&v->tensor);
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t l = 0; l < L; l++)
        for (int64_t d = 0; d < D; d++) *x++ = f(b, h, l, d);
  return v;
}

/* Deterministic pseudo-random values in [-1, 1) for token l (absolute position via g_base). */
static int64_t g_base = 0;
static uint32_t g_salt = 1;
static float rnd_at(int64_t b, int64_t h, int64_t l, int64_t d) {
  uint32_t x = (uint32_t)((((b * 31 + h) * 4099 + (l + g_base)) * 131 + d) * 2654435761u) ^ g_salt * 0x9E3779B9u;
  x ^= x >> 15, x *= 0x2c1b3c6dU, x ^= x >> 12;
  return (float)(x % 20001) / 10000.0f - 1.0f;
}

/* ------------------------------------------------------------ reference */

typedef struct kv_history {
  int64_t T, B, Hkv, Dk, Dv;
  float *k, *v; /* [T][B][Hkv][D] */
} kv_history;

/* The cache's tokens decoded (what the kernel attends over). */
static void history_of(const ol_value *cache, kv_history *h, int64_t B, int64_t Hkv, int64_t Dk, int64_t Dv) {
  int64_t T = 0;
  CHECK_OK(ol_paged_cache_validate(cache, &T, NULL, NULL));
  *h = (kv_history){T, B, Hkv, Dk, Dv, calloc((size_t)(T * B * Hkv * Dk) + 1, 4), calloc((size_t)(T * B * Hkv * Dv) + 1, 4)};
  for (size_t i = 0; i < ol_paged_cache_block_count(cache); i++) {
    ol_page p;
    CHECK_OK(ol_page_view(ol_paged_cache_block(cache, i), i, &p));
    for (int64_t t = 0; t < p.length; t++) {
      ol_page_decode(&p.key, t, 0, p.key.width, h->k + (p.start + t) * B * Hkv * Dk);
      ol_page_decode(&p.value, t, 0, p.value.width, h->v + (p.start + t) * B * Hkv * Dv);
    }
    ol_page_clear(&p);
  }
}

/* Dense attention in double over h for queries q at positions [T - L, T). */
static double max_diff_to_reference(const kv_history *h, const ol_value *q, const ol_value *y, bool causal, int64_t window) {
  const ol_tensor *Q = &q->tensor, *Y = &y->tensor;
  int64_t B = Q->dims[0], Hq = Q->dims[1], L = Q->dims[2], Dk = Q->dims[3], g = Hq / h->Hkv;
  double worst = 0;
  for (int64_t b = 0; b < B; b++)
    for (int64_t qh = 0; qh < Hq; qh++)
      for (int64_t l = 0; l < L; l++) {
        int64_t pos = h->T - L + l, hi = causal ? pos : h->T - 1, lo = window >= 0 && pos - window > 0 ? pos - window : 0;
        const float *qv = (const float *)ol_tdata(Q) + ((b * Hq + qh) * L + l) * Dk;
        int64_t kvh = qh / g;
        double m = -INFINITY, sum = 0, acc[256] = {0}; /* Dv <= 256 */
        for (int64_t t = lo; t <= hi; t++) {
          const float *kv = h->k + ((t * B + b) * h->Hkv + kvh) * Dk;
          double s = 0;
          for (int64_t d = 0; d < Dk; d++) s += (double)qv[d] * kv[d];
          s /= sqrt((double)Dk);
          m = s > m ? s : m;
        }
        for (int64_t t = lo; t <= hi; t++) {
          const float *kv = h->k + ((t * B + b) * h->Hkv + kvh) * Dk, *vv = h->v + ((t * B + b) * h->Hkv + kvh) * h->Dv;
          double s = 0;
          for (int64_t d = 0; d < Dk; d++) s += (double)qv[d] * kv[d];
          double e = exp(s / sqrt((double)Dk) - m);
          sum += e;
          for (int64_t d = 0; d < h->Dv; d++) acc[d] += e * vv[d];
        }
        const float *yv = (const float *)ol_tdata(Y) + ((b * Hq + qh) * L + l) * h->Dv;
        for (int64_t d = 0; d < h->Dv; d++) {
          double diff = fabs(acc[d] / sum - yv[d]);
          worst = diff > worst ? diff : worst;
        }
      }
  return worst;
}

static void history_free(kv_history *h) {
  free(h->k);
  free(h->v);
}

/* One execution over *cache (in[3], consumed) checked against dense
 * attention over the pages it returns: the largest difference (-1 when it
 * failed); in's tensors and Y released, *cache replaced by present. */
static double run_against_reference(pk *p, ol_value **in, const ol_paged_policy *policy, int64_t Hkv, int64_t Dv,
                                    int64_t window, ol_value **cache) {
  const ol_tensor *Q = &in[0]->tensor;
  ol_value *out[2] = {NULL, NULL};
  double diff = -1;
  CHECK_OK(pk_run(p, in, policy, out));
  if (out[1]) {
    kv_history h;
    history_of(out[1], &h, Q->dims[0], Hkv, Q->dims[3], Dv);
    diff = max_diff_to_reference(&h, in[0], out[0], true, window);
    history_free(&h);
  }
  tk_release_all(in, 3);
  ol_value_release(out[0]);
  ol_value_release(*cache);
  *cache = out[1];
  return diff;
}

static ol_paged_policy formats_policy(ol_page_format_rule *rule, ol_dtype kt, float ks, int32_t kz, ol_dtype vt,
                                      float vs, int32_t vz) {
  *rule = (ol_page_format_rule){0, {{kt, ks, kz}, {vt, vs, vz}}};
  return (ol_paged_policy){NULL, NULL, rule, 1};
}

/* ------------------------------------------------------------ the seed's fixtures */

/* Three tokens per call, key width 3, value width 2, dense FLOAT pages: 60
 * append bytes and 16 scratch bytes on every call; earlier blocks are the
 * same values in present (no prefix copy); results match dense attention. */
static void dense_fixture(void) {
  pk p;
  CHECK_OK(pk_create(&p, "PagedAttention", NULL, 0, 4));
  if (!p.kernel) return;
  ol_value *cache = empty_cache();
  for (int call = 0; call < 5; call++) {
    g_base = call * 3;
    ol_value *in[4] = {bhld(1, 1, 3, 3, rnd_at), bhld(1, 1, 3, 3, rnd_at), bhld(1, 1, 3, 2, rnd_at), cache}, *out[2];
    CHECK_OK(pk_run(&p, in, NULL, out));
    if (!out[1]) break;
    CHECK(p.stats.copied_bytes == 60 && p.stats.peak_workspace_bytes == 16 && p.stats.dequantized_bytes == 0);
    CHECK(ol_paged_cache_block_count(out[1]) == (size_t)call + 1);
    for (size_t i = 0; i < ol_paged_cache_block_count(cache); i++)
      CHECK(ol_paged_cache_block(out[1], i) == ol_paged_cache_block(cache, i)); /* shared, not copied */
    kv_history h;
    history_of(out[1], &h, 1, 1, 3, 2);
    CHECK(h.T == 3 * (call + 1) && max_diff_to_reference(&h, in[0], out[0], true, -1) < 1e-5);
    history_free(&h);
    tk_release_all(in, 3);
    ol_value_release(out[0]);
    ol_value_release(cache);
    cache = out[1];
  }
  ol_value_release(cache);
  pk_destroy(&p);
}

/* Six retained tokens, then two appended with INT8 keys (width 2) and
 * UINT4 values (width 3), left window 1: 7 payload bytes written, 80 FLOAT
 * bytes decoded over the two queries, 24 bytes of scratch, no prior page
 * copied. */
static void windowed_fixture(void) {
  ol_attr attrs[1] = {tk_attr_int("left_window_size", 1)};
  pk p;
  CHECK_OK(pk_create(&p, "PagedAttention", attrs, 1, 4));
  if (!p.kernel) return;
  ol_page_format_rule rule;
  ol_paged_policy policy = formats_policy(&rule, OL_DTYPE_INT8, 0.01f, 0, OL_DTYPE_UINT4, 0.25f, 8);
  g_base = 0;
  ol_value *cache = empty_cache();
  ol_value *in[4] = {bhld(1, 1, 6, 2, rnd_at), bhld(1, 1, 6, 2, rnd_at), bhld(1, 1, 6, 3, rnd_at), cache}, *out[2];
  CHECK_OK(pk_run(&p, in, &policy, out));
  tk_release_all(in, 4);
  ol_value_release(out[0]);
  ol_value *six = out[1];
  g_base = 6;
  ol_value *in2[4] = {bhld(1, 1, 2, 2, rnd_at), bhld(1, 1, 2, 2, rnd_at), bhld(1, 1, 2, 3, rnd_at), six};
  CHECK_OK(pk_run(&p, in2, &policy, out));
  CHECK(p.events == 2);
  CHECK(p.stats.copied_bytes == 7 && p.stats.dequantized_bytes == 80 && p.stats.peak_workspace_bytes == 24);
  if (out[1]) {
    CHECK(ol_paged_cache_block_count(out[1]) == 2 && ol_paged_cache_block(out[1], 0) == ol_paged_cache_block(six, 0));
    kv_history h;
    history_of(out[1], &h, 1, 1, 2, 3);
    CHECK(max_diff_to_reference(&h, in2[0], out[0], true, 1) < 1e-5);
    history_free(&h);
  }
  tk_release_all(in2, 4);
  tk_release_all(out, 2);
  pk_destroy(&p);
}

static const ol_dtype TYPES_ALL[6] = {OL_DTYPE_INT8, OL_DTYPE_UINT8, OL_DTYPE_INT4,
                                      OL_DTYPE_UINT4, OL_DTYPE_INT2, OL_DTYPE_UINT2};

/* Paged attention over quantized pages equals dense attention over the
 * pages' reconstructed values within 1e-5; grouped heads and two batch
 * rows; several executions, windows, calibrated scales. */
static void quantized_pages_match_reconstruction(void) {
  const ol_dtype types[4] = {OL_DTYPE_INT4, OL_DTYPE_UINT4, OL_DTYPE_INT8, OL_DTYPE_UINT8};
  const float scales[4] = {0.25f, 0.25f, 0.01f, 0.01f};
  const int32_t zeros[4] = {0, 8, 0, 128};
  for (int ti = 0; ti < 4; ti++)
    for (int variant = 0; variant < 3; variant++) {
      int64_t window = variant == 2 ? 3 : -1;
      ol_attr attrs[2] = {tk_attr_int("left_window_size", window), tk_attr_int("block_size", 4)};
      pk p;
      CHECK_OK(pk_create(&p, "PagedAttention", attrs, 2, 4));
      if (!p.kernel) return;
      ol_page_format_rule rule;
      float s = variant == 1 ? 0.0f : scales[ti]; /* variant 1: calibrated per page */
      ol_paged_policy policy = formats_policy(&rule, types[ti], s, zeros[ti], types[ti], s, zeros[ti]);
      ol_value *cache = empty_cache();
      const int64_t steps[3] = {5, 1, 2};
      for (int st = 0; st < 3; st++) {
        g_base = st * 7;
        g_salt = (uint32_t)(ti * 10 + variant);
        int64_t L = steps[st];
        ol_value *in[4] = {bhld(2, 4, L, 8, rnd_at), bhld(2, 2, L, 8, rnd_at), bhld(2, 2, L, 6, rnd_at), cache};
        double diff = run_against_reference(&p, in, &policy, 2, 6, window, &cache);
        CHECK(diff >= 0 && diff < 1e-5);
        if (diff >= 1e-5) fprintf(stderr, "  %s variant %d step %d: %g\n", ol_dtype_name(types[ti]), variant, st, diff);
        if (!cache) break;
      }
      ol_value_release(cache);
      pk_destroy(&p);
    }
  g_salt = 1;
}

/* The integer products (simd/qpage_int.h: heads of whole 16-byte groups
 * of codes) against dense attention over the reconstructed pages: every
 * code width and sign for keys and values, head sizes 64 and 128 (and a
 * 48-element head, whose 4- and 2-bit rows fall back to floats), pages
 * that split chunks, calibrated and fixed scales, a window, 70 tokens in
 * executions of 37, 1, 32. Rounding the query and the weights to 15 bits
 * costs at most 2^-16 of their largest magnitude per element: within
 * 2e-4 of the reference here, where the float path is within 1e-5. */
static void integer_products_match_reconstruction(void) {
  static const int64_t sizes[3][2] = {{64, 64}, {128, 32}, {48, 80}}, steps[3] = {37, 1, 32};
  double worst = 0;
  for (int ti = 0; ti < 6; ti++)
    for (int si = 0; si < 3; si++) {
      const int64_t Dk = sizes[si][0], Dv = sizes[si][1], window = si == 2 ? 40 : -1;
      const ol_dtype kt = TYPES_ALL[ti], vt = TYPES_ALL[(ti + 3) % 6];
      ol_attr attrs[2] = {tk_attr_int("left_window_size", window), tk_attr_int("block_size", 5)};
      pk p;
      CHECK_OK(pk_create(&p, "PagedAttention", attrs, 2, 4));
      if (!p.kernel) return;
      ol_page_format_rule rule;
      const float fixed = si == 1 ? 0.0f : 0.02f; /* 0: calibrated per page */
      int32_t klo, khi, vlo, vhi; /* fixed scales: unsigned codes centred */
      ol_page_code_range(kt, &klo, &khi), ol_page_code_range(vt, &vlo, &vhi);
      ol_paged_policy policy = formats_policy(&rule, kt, fixed, klo ? 0 : (khi + 1) / 2, vt, si == 1 ? 0.0f : 0.3f,
                                              vlo ? 0 : (vhi + 1) / 2);
      ol_value *cache = empty_cache();
      g_base = 0;
      for (int st = 0; st < 3 && cache; st++) {
        g_salt = (uint32_t)(300 + ti * 3 + si);
        ol_value *in[4] = {bhld(1, 4, steps[st], Dk, rnd_at), bhld(1, 2, steps[st], Dk, rnd_at),
                           bhld(1, 2, steps[st], Dv, rnd_at), cache};
        g_base += steps[st];
        double diff = run_against_reference(&p, in, &policy, 2, Dv, window, &cache);
        worst = diff > worst ? diff : worst;
        CHECK(diff >= 0 && diff < 2e-4);
        if (diff >= 2e-4)
          fprintf(stderr, "  %s/%s Dk %lld Dv %lld step %d: %g\n", ol_dtype_name(kt), ol_dtype_name(vt), (long long)Dk,
                  (long long)Dv, st, diff);
      }
      ol_value_release(cache);
      pk_destroy(&p);
    }
  if (getenv("OL_TEST_VERBOSE")) fprintf(stderr, "  integer products: largest difference %g\n", worst);
  g_salt = 1;
}

/* Four steps of one token with components +/-(0.173 * step), quantized
 * pages against unquantized dense attention: INT8/UINT8 scale 0.01 zero
 * 0/128 within 0.01, INT4/UINT4 scale 0.25 zero 0/8 within 0.15. */
static int64_t g_step = 1;
static float step_value(int64_t b, int64_t h, int64_t l, int64_t d) {
  (void)b, (void)h, (void)l;
  return (d % 2 ? -0.173f : 0.173f) * (float)g_step;
}

static void four_step_accuracy(void) {
  const ol_dtype types[4] = {OL_DTYPE_INT8, OL_DTYPE_UINT8, OL_DTYPE_INT4, OL_DTYPE_UINT4};
  const float scales[4] = {0.01f, 0.01f, 0.25f, 0.25f}, tol[4] = {0.01f, 0.01f, 0.15f, 0.15f};
  const int32_t zeros[4] = {0, 128, 0, 8};
  for (int ti = 0; ti < 4; ti++) {
    pk p, dense;
    CHECK_OK(pk_create(&p, "PagedAttention", NULL, 0, 4));
    CHECK_OK(pk_create(&dense, "PagedAttention", NULL, 0, 4));
    if (!p.kernel || !dense.kernel) return;
    ol_page_format_rule rule;
    ol_paged_policy policy = formats_policy(&rule, types[ti], scales[ti], zeros[ti], types[ti], scales[ti], zeros[ti]);
    ol_value *qc = empty_cache(), *dc = empty_cache();
    for (g_step = 1; g_step <= 4; g_step++) {
      ol_value *in[4] = {bhld(1, 1, 1, 4, step_value), bhld(1, 1, 1, 4, step_value), bhld(1, 1, 1, 4, step_value), qc};
      ol_value *din[4] = {in[0], in[1], in[2], dc}, *qo[2], *dout[2];
      CHECK_OK(pk_run(&p, in, &policy, qo));
      CHECK_OK(pk_run(&dense, din, NULL, dout));
      if (qo[0] && dout[0]) {
        const float *a = ol_tdata(&qo[0]->tensor), *b = ol_tdata(&dout[0]->tensor);
        for (int d = 0; d < 4; d++) CHECK(fabsf(a[d] - b[d]) <= tol[ti]);
      }
      tk_release_all(in, 3);
      ol_value_release(qo[0]), ol_value_release(dout[0]);
      ol_value_release(qc), ol_value_release(dc);
      qc = qo[1], dc = dout[1];
      if (!qc || !dc) break;
    }
    ol_value_release(qc), ol_value_release(dc);
    pk_destroy(&p), pk_destroy(&dense);
  }
}

/* The same tokens in one execution or one at a time give the same bits. */
static void split_executions_agree(void) {
  pk a, b;
  CHECK_OK(pk_create(&a, "PagedAttention", NULL, 0, 4));
  CHECK_OK(pk_create(&b, "PagedAttention", NULL, 0, 4));
  if (!a.kernel || !b.kernel) return;
  ol_page_format_rule rule;
  ol_paged_policy policy = formats_policy(&rule, OL_DTYPE_INT8, 0.02f, 0, OL_DTYPE_UINT4, 0.2f, 8);
  g_base = 0;
  ol_value *whole[4] = {bhld(1, 2, 5, 4, rnd_at), bhld(1, 1, 5, 4, rnd_at), bhld(1, 1, 5, 4, rnd_at), empty_cache()}, *wo[2];
  CHECK_OK(pk_run(&a, whole, &policy, wo));
  ol_value *cache = empty_cache(), *last[2] = {NULL, NULL};
  for (int64_t t = 0; t < 5; t++) {
    g_base = t;
    ol_value *in[4] = {bhld(1, 2, 1, 4, rnd_at), bhld(1, 1, 1, 4, rnd_at), bhld(1, 1, 1, 4, rnd_at), cache};
    tk_release_all(last, 2);
    CHECK_OK(pk_run(&b, in, &policy, last));
    tk_release_all(in, 4);
    cache = last[1] ? ol_value_retain(last[1]) : empty_cache();
  }
  if (wo[0] && last[0]) {
    const float *w = ol_tdata(&wo[0]->tensor), *l = ol_tdata(&last[0]->tensor);
    for (int h = 0; h < 2; h++) CHECK(memcmp(w + (h * 5 + 4) * 4, l + h * 4, 4 * sizeof(float)) == 0);
  }
  ol_value_release(cache);
  tk_release_all(whole, 4);
  tk_release_all(wo, 2);
  tk_release_all(last, 2);
  pk_destroy(&a), pk_destroy(&b);
}

/* Chunks of 64 tokens at absolute positions, pages of 7: a prompt of 100
 * tokens in one execution and the same tokens in executions of 13, 1, 40,
 * 9 and 37 give the last token the same bits, for FLOAT and INT8/UINT4
 * pages, without and with a window that starts mid-chunk; both match
 * dense attention. Query heads 4 on 2 K/V heads, 130 on 1 (passes of 64,
 * 64 and 2 heads) and 120 on 3 (one group of 40 per pass). */
static void chunks_span_pages(void) {
  static const int64_t heads[3][2] = {{4, 2}, {130, 1}, {120, 3}}, splits[5] = {13, 1, 40, 9, 37};
  for (int hi = 0; hi < 3; hi++)
    for (int variant = 0; variant < 4; variant++) {
      const int64_t Hq = heads[hi][0], Hkv = heads[hi][1], B = hi == 0 ? 2 : 1, Dk = 20, Dv = 18;
      const int64_t window = variant & 1 ? 45 : -1;
      ol_attr attrs[2] = {tk_attr_int("block_size", 7), tk_attr_int("left_window_size", window)};
      ol_page_format_rule rule;
      ol_paged_policy policy = formats_policy(&rule, OL_DTYPE_INT8, 0.02f, 0, OL_DTYPE_UINT4, 0.2f, 8);
      const ol_paged_policy *pol = variant & 2 ? &policy : NULL;
      pk a, b;
      CHECK_OK(pk_create(&a, "PagedAttention", attrs, 2, 4));
      CHECK_OK(pk_create(&b, "PagedAttention", attrs, 2, 4));
      if (!a.kernel || !b.kernel) return;
      g_base = 0;
      g_salt = (uint32_t)(200 + hi * 4 + variant);
      ol_value *whole[4] = {bhld(B, Hq, 100, Dk, rnd_at), bhld(B, Hkv, 100, Dk, rnd_at), bhld(B, Hkv, 100, Dv, rnd_at),
                            empty_cache()}, *wo[2];
      CHECK_OK(pk_run(&a, whole, pol, wo));
      ol_value *cache = empty_cache(), *last[2] = {NULL, NULL}, *last_q = NULL;
      for (int i = 0; i < 5 && cache; i++) {
        ol_value *in[4] = {bhld(B, Hq, splits[i], Dk, rnd_at), bhld(B, Hkv, splits[i], Dk, rnd_at),
                           bhld(B, Hkv, splits[i], Dv, rnd_at), cache};
        g_base += splits[i];
        tk_release_all(last, 2);
        CHECK_OK(pk_run(&b, in, pol, last));
        ol_value_release(last_q);
        last_q = in[0];
        tk_release_all(in + 1, 3);
        cache = last[1] ? ol_value_retain(last[1]) : NULL;
      }
      if (wo[0] && last[0]) {
        const float *w = ol_tdata(&wo[0]->tensor), *l = ol_tdata(&last[0]->tensor);
        int bad = 0;
        for (int64_t r = 0; r < B * Hq; r++) bad += memcmp(w + (r * 100 + 99) * Dv, l + (r * 37 + 36) * Dv, 4 * Dv) != 0;
        CHECK(bad == 0);
        kv_history h;
        history_of(wo[1], &h, B, Hkv, Dk, Dv);
        double dw = max_diff_to_reference(&h, whole[0], wo[0], true, window);
        double dl = max_diff_to_reference(&h, last_q, last[0], true, window);
        CHECK(dw < 1e-5 && dl < 1e-5);
        if (bad || dw >= 1e-5 || dl >= 1e-5)
          fprintf(stderr, "  heads %lld/%lld variant %d: %d rows differ, %g %g\n", (long long)Hq, (long long)Hkv,
                  variant, bad, dw, dl);
        history_free(&h);
      }
      ol_value_release(cache);
      ol_value_release(last_q);
      tk_release_all(whole, 4);
      tk_release_all(wo, 2);
      tk_release_all(last, 2);
      pk_destroy(&a), pk_destroy(&b);
    }
  g_salt = 1;
}

/* ------------------------------------------------------------ known answers */

static uint64_t fnv1a(uint64_t h, const void *data, size_t n) {
  const unsigned char *b = data;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 1099511628211ull;
  return h;
}

/* Whether every page of cache holds affine codes whose parameters do not
 * change along a row (read by the in-register decoders); *per_token: how
 * many of those pages have one parameter set per token. */
static bool pages_in_register(const ol_value *cache, int *per_token) {
  bool all = true;
  *per_token = 0;
  for (size_t i = 0; i < ol_paged_cache_block_count(cache); i++) {
    ol_page p;
    ol_qpage_codes c;
    if (ol_page_view(ol_paged_cache_block(cache, i), i, &p) != OL_OK) return false;
    all = all && ol_page_row_codes(&p.key, 0, 0, &c) && ol_page_row_codes(&p.value, 0, 0, &c);
    *per_token += (p.key.n_params > 1) + (p.value.n_params > 1);
    ol_page_clear(&p);
  }
  return all;
}

typedef struct known_case {
  int64_t Dk, Dv;
  ol_dtype kt, vt;
  float ks, vs; /* 0: calibrated per page */
  int32_t kz, vz;
  uint64_t hash; /* of every Y */
} known_case;

/* Pinned bits of PagedAttention over appended affine pages: a prompt of 5
 * tokens, then 3 single tokens, pages of 4 tokens, 4 query heads on 2 K/V
 * heads, head sizes with and without tails of 16 (odd ones put the second
 * head's 4-bit codes mid-byte and its 2-bit codes mid-byte at every
 * offset), calibrated and fixed scales, zero points at both ends of the
 * code range; int8 keys / uint4 values is what apps use. The hashes were
 * recorded with every element decoded by ol_page_decode (the in-register
 * decoders switched off), so they hold the decoders and the vector
 * accumulator to those bits; re-recorded when the online softmax went
 * from one rescale per token to one per chunk of 32 tokens, and when its
 * exponentials went from ol_expf to ol_expf_fast (float arithmetic). Case 1's
 * heads of 64 fill 16-byte groups of codes, so it takes the integer
 * products (simd/qpage_int.h; integer_products_match_reconstruction holds
 * them to the dense reference): re-recorded when they landed. The other
 * cases keep the float path. Then one more token over the cache compacted
 * (one block; calibrated scales become one per token, and rows start at
 * other bit offsets) gives the same bits as over the cache itself. */
static void quantized_known_answers(void) {
  static const known_case cases[] = {
      {40, 24, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0, 0, 0, 0, 0x99150861327d155bull},
      {64, 64, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0, 0, 0, 0, 0x504b2cf8a1da89c8ull},
      {19, 21, OL_DTYPE_UINT4, OL_DTYPE_INT4, 0.05f, 0.125f, 15, -8, 0xfc9be612b35586d6ull},
      {37, 18, OL_DTYPE_INT2, OL_DTYPE_UINT2, 0, 0.3f, 0, 3, 0x98b1018968c9d36full},
      {33, 35, OL_DTYPE_UINT8, OL_DTYPE_INT8, 0.01f, 0.01f, 255, -128, 0xd8f8ce687ae1de05ull},
      {23, 17, OL_DTYPE_UINT2, OL_DTYPE_INT2, 0.2f, 0, 0, 0, 0xe623b114e4763322ull},
  };
  for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
    const known_case *kc = &cases[ci];
    ol_attr attrs[1] = {tk_attr_int("block_size", 4)};
    pk p;
    CHECK_OK(pk_create(&p, "PagedAttention", attrs, 1, 4));
    if (!p.kernel) return;
    ol_page_format_rule rule;
    ol_paged_policy policy = formats_policy(&rule, kc->kt, kc->ks, kc->kz, kc->vt, kc->vs, kc->vz);
    g_salt = 101 + (uint32_t)ci;
    ol_value *cache = empty_cache();
    uint64_t hash = 1469598103934665603ull;
    const int64_t steps[4] = {5, 1, 1, 1};
    for (int st = 0; st < 4 && cache; st++) {
      g_base = st ? 4 + st : 0;
      int64_t L = steps[st];
      ol_value *in[4] = {bhld(1, 4, L, kc->Dk, rnd_at), bhld(1, 2, L, kc->Dk, rnd_at), bhld(1, 2, L, kc->Dv, rnd_at),
                         cache}, *out[2] = {NULL, NULL};
      CHECK_OK(pk_run(&p, in, &policy, out));
      if (out[0]) hash = fnv1a(hash, ol_tdata(&out[0]->tensor), sizeof(float) * (size_t)ol_tcount(&out[0]->tensor));
      tk_release_all(in, 4);
      ol_value_release(out[0]);
      cache = out[1];
    }
    if (hash != kc->hash)
      fprintf(stderr, "  case %zu (%s/%s, Dk %lld, Dv %lld): hash %016llx, pinned %016llx\n", ci,
              ol_dtype_name(kc->kt), ol_dtype_name(kc->vt), (long long)kc->Dk, (long long)kc->Dv,
              (unsigned long long)hash, (unsigned long long)kc->hash);
    CHECK(hash == kc->hash);
    int per_token = 0;
    CHECK(cache && pages_in_register(cache, &per_token) && per_token == 0);
    /* one more token over the cache and over it compacted */
    ol_value *compact = NULL;
    if (cache) CHECK_OK(ol_paged_cache_compact(cache, 64, &compact));
    CHECK(compact && ol_paged_cache_block_count(compact) == 1 && pages_in_register(compact, &per_token));
    CHECK(per_token == (kc->ks == 0) + (kc->vs == 0));
    g_base = 8;
    ol_value *ys[2] = {NULL, NULL};
    ol_value *pasts[2] = {cache, compact};
    for (int i = 0; i < 2 && compact; i++) {
      pk fresh;
      CHECK_OK(pk_create(&fresh, "PagedAttention", attrs, 1, 4));
      if (!fresh.kernel) break;
      ol_value *in[4] = {bhld(1, 4, 1, kc->Dk, rnd_at), bhld(1, 2, 1, kc->Dk, rnd_at), bhld(1, 2, 1, kc->Dv, rnd_at),
                         pasts[i]}, *out[2] = {NULL, NULL};
      CHECK_OK(pk_run(&fresh, in, &policy, out));
      ys[i] = out[0];
      ol_value_release(out[1]);
      tk_release_all(in, 3);
      pk_destroy(&fresh);
    }
    CHECK(ys[0] && ys[1] && memcmp(ol_tdata(&ys[0]->tensor), ol_tdata(&ys[1]->tensor), 4 * (size_t)(4 * kc->Dv)) == 0);
    tk_release_all(ys, 2);
    ol_value_release(compact);
    ol_value_release(cache);
    pk_destroy(&p);
  }
  g_salt = 1;
}

/* ------------------------------------------------------------ validation */

static void attributes_and_inputs(void) {
  struct { const char *name; int64_t v; } bad[] = {{"block_size", 0}, {"max_tokens", 0}, {"is_causal", 2},
                                                   {"left_window_size", -2}, {"mask_value", 1}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ol_attr a = tk_attr_int(bad[i].name, bad[i].v);
    pk p;
    ol_status s = pk_create(&p, "PagedAttention", &a, 1, 4);
    CHECK(s == OL_INVALID_MODEL || s == OL_NOT_IMPLEMENTED);
    CHECK(!p.kernel);
  }
  pk masked;
  CHECK_STATUS(pk_create(&masked, "PagedAttention", NULL, 0, 5), OL_NOT_IMPLEMENTED);

  ol_attr max = tk_attr_int("max_tokens", 4);
  pk p;
  CHECK_OK(pk_create(&p, "PagedAttention", &max, 1, 4));
  if (!p.kernel) return;
  ol_value *cache = empty_cache(), *out[2];
  ol_value *q = bhld(1, 3, 2, 4, rnd_at), *k = bhld(1, 2, 2, 4, rnd_at), *v = bhld(1, 2, 2, 4, rnd_at);
  ol_value *in[4] = {q, k, v, cache};
  CHECK_STATUS(pk_run(&p, in, NULL, out), OL_INVALID_ARGUMENT); /* 3 query heads over 2 K/V heads */
  ol_value *q2 = bhld(1, 2, 2, 4, rnd_at), *k3 = bhld(1, 2, 3, 4, rnd_at);
  ol_value *bad_len[4] = {q2, k3, v, cache};
  CHECK_STATUS(pk_run(&p, bad_len, NULL, out), OL_INVALID_ARGUMENT);
  ol_value *not_cache[4] = {q2, k, v, q2};
  CHECK_STATUS(pk_run(&p, not_cache, NULL, out), OL_INVALID_ARGUMENT);
  ((float *)ol_tdata(&k->tensor))[1] = NAN;
  ol_value *nan[4] = {q2, k, v, cache};
  CHECK_STATUS(pk_run(&p, nan, NULL, out), OL_INVALID_ARGUMENT);
  ((float *)ol_tdata(&k->tensor))[1] = 0.5f;
  ol_value *ok[4] = {q2, k, v, cache};
  CHECK_OK(pk_run(&p, ok, NULL, out));
  ol_value *grown = out[1];
  ol_value_release(out[0]);
  ol_value *over[4] = {q2, k, v, grown}; /* 2 + 2 <= 4 fits, then 6 > 4 */
  CHECK_OK(pk_run(&p, over, NULL, out));
  ol_value *full = out[1];
  ol_value_release(out[0]);
  ol_value *past_full[4] = {q2, k, v, full};
  CHECK_STATUS(pk_run(&p, past_full, NULL, out), OL_INVALID_ARGUMENT);
  /* a batch of two does not match pages of one */
  ol_value *q_b2 = bhld(2, 2, 1, 4, rnd_at), *k_b2 = bhld(2, 2, 1, 4, rnd_at), *v_b2 = bhld(2, 2, 1, 4, rnd_at);
  ol_value *wide[4] = {q_b2, k_b2, v_b2, grown};
  CHECK_STATUS(pk_run(&p, wide, NULL, out), OL_INVALID_ARGUMENT);
  /* a bad format from the policy */
  ol_page_format_rule rule;
  ol_paged_policy policy = formats_policy(&rule, OL_DTYPE_UINT4, 0.25f, 99, OL_DTYPE_FLOAT, 0, 0);
  CHECK_STATUS(pk_run(&p, ok, &policy, out), OL_INVALID_ARGUMENT);
  policy = formats_policy(&rule, OL_DTYPE_INT16, 0.25f, 0, OL_DTYPE_FLOAT, 0, 0);
  CHECK_STATUS(pk_run(&p, ok, &policy, out), OL_INVALID_ARGUMENT);
  ol_value *all[] = {q, k, v, q2, k3, q_b2, k_b2, v_b2, cache, grown, full};
  tk_release_all(all, 11);
  pk_destroy(&p);
}

/* A block value with the given start/length and key/value payloads. */
static ol_value *block_of(int64_t start, int64_t length, ol_value *key, ol_value *value) {
  ol_value *b = NULL;
  CHECK_OK(ol_page_block_new(start, length, key, value, &b));
  ol_value_release(key);
  ol_value_release(value);
  return b;
}

static ol_value *dense_page(int64_t capacity, int64_t width) {
  ol_value *v = NULL;
  CHECK_OK(ol_page_dense_new(NULL, OL_DTYPE_FLOAT, capacity, width, &v));
  if (v) memset(ol_tdata(&v->tensor), 0, sizeof(float) * (size_t)(capacity * width));
  return v;
}

static ol_status validate_blocks(ol_value **blocks, size_t n) {
  ol_value *cache = NULL;
  ol_status s = ol_paged_cache_new(blocks, n, &cache);
  for (size_t i = 0; i < n; i++) ol_value_release(blocks[i]);
  if (s == OL_OK) s = ol_paged_cache_validate(cache, NULL, NULL, NULL);
  ol_value_release(cache);
  return s;
}

static ol_value *affine_page(ol_dtype storage, int64_t capacity, int64_t width) {
  ol_value *v = NULL;
  uint8_t *codes;
  size_t bytes;
  CHECK_OK(ol_page_affine_new(storage, 0.5f, 0, capacity, width, &v, &codes, &bytes));
  return v;
}

static void cache_validation_rejections(void) {
  ol_value *ok[2] = {block_of(0, 2, dense_page(2, 3), dense_page(2, 2)), block_of(2, 1, dense_page(4, 3), dense_page(4, 2))};
  CHECK_OK(validate_blocks(ok, 2));
  ol_value *neg[1] = {block_of(-1, 1, dense_page(2, 3), dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(neg, 1), OL_INVALID_ARGUMENT);
  ol_value *late[1] = {block_of(1, 1, dense_page(2, 3), dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(late, 1), OL_INVALID_ARGUMENT);
  ol_value *gap[2] = {block_of(0, 1, dense_page(2, 3), dense_page(2, 2)), block_of(2, 1, dense_page(2, 3), dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(gap, 2), OL_INVALID_ARGUMENT);
  ol_value *zero_len[1] = {block_of(0, 0, dense_page(2, 3), dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(zero_len, 1), OL_INVALID_ARGUMENT);
  ol_value *too_long[1] = {block_of(0, 3, dense_page(2, 3), dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(too_long, 1), OL_INVALID_ARGUMENT);
  ol_value *capacities[1] = {block_of(0, 1, dense_page(2, 3), dense_page(3, 2))};
  CHECK_STATUS(validate_blocks(capacities, 1), OL_INVALID_ARGUMENT);
  ol_value *widths[2] = {block_of(0, 1, dense_page(2, 3), dense_page(2, 2)), block_of(1, 1, dense_page(2, 4), dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(widths, 2), OL_INVALID_ARGUMENT);
  ol_value *quantized[2] = {block_of(0, 2, affine_page(OL_DTYPE_INT4, 2, 3), affine_page(OL_DTYPE_UINT2, 2, 2)),
                            block_of(2, 2, affine_page(OL_DTYPE_INT8, 2, 3), dense_page(2, 2))};
  CHECK_OK(validate_blocks(quantized, 2));

  /* an encoded page with a symbolic dimension, external data, a wrong size, signed_storage */
  ol_value *sym = affine_page(OL_DTYPE_INT8, 2, 3);
  Onnx__EncodedValueProto *e = sym->encoded;
  Onnx__TensorShapeProto__Dimension *d2 = e->logical_type->tensor_type->shape->dim[2];
  d2->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  d2->dim_param = "T";
  ol_value *b_sym[1] = {block_of(0, 1, sym, dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(b_sym, 1), OL_INVALID_ARGUMENT);
  ol_value *ext = affine_page(OL_DTYPE_INT8, 2, 3);
  ((Onnx__EncodedValueProto *)ext->encoded)->has_data_location = 1;
  ((Onnx__EncodedValueProto *)ext->encoded)->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  ol_value *b_ext[1] = {block_of(0, 1, ext, dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(b_ext, 1), OL_INVALID_ARGUMENT);
  ol_value *size = affine_page(OL_DTYPE_INT8, 2, 3);
  ((Onnx__EncodedValueProto *)size->encoded)->raw_data.len = 5;
  ol_value *b_size[1] = {block_of(0, 1, size, dense_page(2, 2))};
  CHECK_STATUS(validate_blocks(b_size, 1), OL_INVALID_ARGUMENT);
  /* signed_storage: 24 codes in 12 bytes are 4-bit (unique); 1 code in 1 byte is ambiguous */
  ol_value *inferred = affine_page(OL_DTYPE_INT4, 4, 6);
  Onnx__AffineLayoutProto *a = ((Onnx__EncodedValueProto *)inferred->encoded)->affine;
  a->has_storage_type = 0, a->has_signed_storage = 1, a->signed_storage = 1, a->zero_point = NULL;
  ol_page_payload view;
  CHECK_OK(ol_page_payload_view(inferred, &view));
  CHECK(view.storage == OL_DTYPE_INT4);
  ol_page_payload_clear(&view);
  ol_value *ambiguous = affine_page(OL_DTYPE_INT8, 1, 1);
  a = ((Onnx__EncodedValueProto *)ambiguous->encoded)->affine;
  a->has_storage_type = 0, a->has_signed_storage = 1, a->signed_storage = 1, a->zero_point = NULL;
  CHECK_STATUS(ol_page_payload_view(ambiguous, &view), OL_INVALID_ARGUMENT);
  ol_value_release(inferred);
  ol_value_release(ambiguous);
  /* a block missing a field is not a cache */
  ol_value *start = NULL, *fields[3];
  CHECK_OK(ol_value_new_tensor(NULL, OL_DTYPE_INT64, 0, NULL, &start));
  fields[0] = start, fields[1] = start, fields[2] = dense_page(1, 1);
  const char *names[3] = {"start", "length", "key"};
  ol_value *partial = NULL, *cache = NULL;
  CHECK_OK(ol_struct_create(names, fields, 3, &partial));
  CHECK_OK(ol_paged_cache_new(&partial, 1, &cache));
  CHECK(!ol_paged_cache_is(cache));
  CHECK_STATUS(ol_paged_cache_validate(cache, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  ol_value *all[] = {start, fields[2], partial, cache};
  tk_release_all(all, 4);
}

/* Pages are checked once per kernel: a second run over the same past checks
 * only what is new to it; a different cache is checked again. */
static void page_memo(void) {
  ol_attr block = tk_attr_int("block_size", 2);
  pk p;
  CHECK_OK(pk_create(&p, "PagedAttention", &block, 1, 4));
  if (!p.kernel) return;
  ol_value *in[4] = {bhld(1, 1, 5, 2, rnd_at), bhld(1, 1, 5, 2, rnd_at), bhld(1, 1, 5, 2, rnd_at), empty_cache()}, *out[2];
  CHECK_OK(pk_run(&p, in, NULL, out));
  CHECK(p.stats.validated_pages == 0 && out[1] && ol_paged_cache_block_count(out[1]) == 3);
  ol_value *past = out[1], *step[4] = {bhld(1, 1, 1, 2, rnd_at), bhld(1, 1, 1, 2, rnd_at), bhld(1, 1, 1, 2, rnd_at), past};
  ol_value_release(out[0]);
  CHECK_OK(pk_run(&p, step, NULL, out)); /* its own present: nothing new to check */
  CHECK(p.stats.validated_pages == 0);
  tk_release_all(out, 2);
  pk q;
  CHECK_OK(pk_create(&q, "PagedAttention", &block, 1, 4));
  CHECK_OK(pk_run(&q, step, NULL, out)); /* another kernel: three pages checked */
  CHECK(q.stats.validated_pages == 3);
  tk_release_all(out, 2);
  CHECK_OK(pk_run(&q, step, NULL, out));
  CHECK(q.stats.validated_pages == 0);
  tk_release_all(out, 2);
  tk_release_all(in, 4);
  tk_release_all(step, 4);
  pk_destroy(&p), pk_destroy(&q);
}

/* Rules pick the format from the cached length; a function overrides them. */
static ol_status pick_int8(void *user, const ol_value *key, const ol_value *value, int64_t past, ol_page_formats *out) {
  (void)key, (void)value;
  *(int64_t *)user = past;
  *out = (ol_page_formats){{OL_DTYPE_INT8, 0.0f, 0}, {OL_DTYPE_UINT8, 0.0f, 0}};
  return OL_OK;
}

static void format_policies(void) {
  pk p;
  CHECK_OK(pk_create(&p, "PagedAttention", NULL, 0, 4));
  if (!p.kernel) return;
  ol_page_format_rule rules[2] = {{0, {{0}, {0}}}, {3, {{OL_DTYPE_INT8, 0.05f, 0}, {OL_DTYPE_UINT4, 0.25f, 8}}}};
  ol_paged_policy policy = {NULL, NULL, rules, 2};
  ol_value *cache = empty_cache();
  for (int call = 0; call < 3; call++) {
    ol_value *in[4] = {bhld(1, 1, 2, 2, rnd_at), bhld(1, 1, 2, 2, rnd_at), bhld(1, 1, 2, 2, rnd_at), cache}, *out[2];
    CHECK_OK(pk_run(&p, in, &policy, out));
    tk_release_all(in, 3);
    ol_value_release(out[0]);
    ol_value_release(cache);
    cache = out[1];
    if (!cache) return;
    ol_page page;
    CHECK_OK(ol_page_view(ol_paged_cache_block(cache, (size_t)call), (size_t)call, &page));
    /* past 0 and 2: dense; past 4 >= 3: int8 keys, uint4 values */
    CHECK(page.key.storage == (call < 2 ? OL_DTYPE_FLOAT : OL_DTYPE_INT8));
    CHECK(page.value.storage == (call < 2 ? OL_DTYPE_FLOAT : OL_DTYPE_UINT4));
    ol_page_clear(&page);
  }
  int64_t seen = -1;
  ol_paged_policy fn = {pick_int8, &seen, rules, 2};
  ol_value *in[4] = {bhld(1, 1, 1, 2, rnd_at), bhld(1, 1, 1, 2, rnd_at), bhld(1, 1, 1, 2, rnd_at), cache}, *out[2];
  CHECK_OK(pk_run(&p, in, &fn, out));
  CHECK(seen == 6);
  if (out[1]) {
    ol_page page;
    CHECK_OK(ol_page_view(ol_paged_cache_block(out[1], 3), 3, &page));
    /* calibrated: uint8 zero point at the midpoint, scale = absmax / 127 */
    CHECK(page.key.storage == OL_DTYPE_INT8 && page.value.storage == OL_DTYPE_UINT8 && page.value.zero0 == 128);
    ol_page_clear(&page);
  }
  tk_release_all(in, 4);
  tk_release_all(out, 2);
  pk_destroy(&p);
}

/* ------------------------------------------------------------ QuantizePagedCache */

static ol_value *scalar(ol_dtype dtype, double v) {
  ol_value *t = NULL;
  CHECK_OK(ol_value_new_tensor(NULL, dtype, 0, NULL, &t));
  if (t) ol_tensor_set_double(&t->tensor, 0, v);
  return t;
}

static void quantize_paged_cache(void) {
  /* five blocks of 2 dense tokens (capacity 4) */
  ol_attr block = tk_attr_int("block_size", 2);
  pk att;
  CHECK_OK(pk_create(&att, "PagedAttention", &block, 1, 4));
  if (!att.kernel) return;
  g_base = 0;
  ol_value *in[4] = {bhld(1, 1, 10, 3, rnd_at), bhld(1, 1, 10, 3, rnd_at), bhld(1, 1, 10, 2, rnd_at), empty_cache()}, *out[2];
  CHECK_OK(pk_run(&att, in, NULL, out));
  ol_value *cache = out[1];
  ol_value_release(out[0]);
  tk_release_all(in, 4);
  pk_destroy(&att);
  if (!cache) return;

  pk q;
  CHECK_OK(pk_create(&q, "QuantizePagedCache", NULL, 0, 6));
  if (!q.kernel) return;
  int64_t three = 3, dims1[1] = {1};
  ol_value *sel = tk_i64(1, dims1, &three);
  ol_value *ks = scalar(OL_DTYPE_FLOAT, 0.25), *kz = scalar(OL_DTYPE_INT2, 0), *vs = scalar(OL_DTYPE_FLOAT, 0.125),
           *vz = scalar(OL_DTYPE_UINT4, 8), *ignored = scalar(OL_DTYPE_FLOAT, 1), *f16 = scalar(OL_DTYPE_FLOAT16, 0),
           *bf16 = scalar(OL_DTYPE_BFLOAT16, 0);
  ol_value *qin[6] = {cache, sel, ks, kz, vs, vz}, *quantized[2] = {NULL, NULL};
  CHECK_OK(pk_run(&q, qin, NULL, quantized));
  ol_value *back[2] = {NULL, NULL};
  if (quantized[0]) {
    ol_page page;
    CHECK_OK(ol_page_view(ol_paged_cache_block(quantized[0], 3), 3, &page));
    CHECK(page.key.storage == OL_DTYPE_INT2 && page.value.storage == OL_DTYPE_UINT4 && page.start == 6 &&
          page.length == 2 && page.key.capacity == 2);
    ol_page_clear(&page);
    for (size_t i = 0; i < 5; i++)
      if (i != 3) CHECK(ol_paged_cache_block(quantized[0], i) == ol_paged_cache_block(cache, i));
    ol_value *din[6] = {quantized[0], sel, ignored, f16, ignored, bf16};
    CHECK_OK(pk_run(&q, din, NULL, back));
  }
  if (back[0]) {
    ol_page page, orig;
    CHECK_OK(ol_page_view(ol_paged_cache_block(back[0], 3), 3, &page));
    CHECK_OK(ol_page_view(ol_paged_cache_block(cache, 3), 3, &orig));
    CHECK(page.key.storage == OL_DTYPE_FLOAT16 && page.value.storage == OL_DTYPE_BFLOAT16);
    /* every value within half a step of its source (0.125 keys, 0.0625 values) unless saturated */
    float a[3], b[3];
    for (int64_t t = 0; t < 2; t++) {
      ol_page_decode(&page.key, t, 0, 3, a), ol_page_decode(&orig.key, t, 0, 3, b);
      for (int d = 0; d < 3; d++) CHECK(fabsf(a[d] - b[d]) <= 0.125f + 1e-3f || b[d] > 0.375f || b[d] < -0.625f); /* INT2: [-0.5, 0.25] */
      ol_page_decode(&page.value, t, 0, 2, a), ol_page_decode(&orig.value, t, 0, 2, b);
      for (int d = 0; d < 2; d++) CHECK(fabsf(a[d] - b[d]) <= 0.0625f + 1e-3f || b[d] > 0.9375f); /* UINT4 saturates at 0.875 */
    }
    ol_page_clear(&page), ol_page_clear(&orig);
  }
  /* errors publish nothing: repeated or out-of-range indices, bad scales and zero points */
  int64_t rep[2] = {1, 1}, dims2[1] = {2}, far = 9;
  ol_value *repeated = tk_i64(1, dims2, rep), *out_of_range = tk_i64(1, dims1, &far), *neg_scale = scalar(OL_DTYPE_FLOAT, -1),
           *i16 = scalar(OL_DTYPE_INT16, 0);
  ol_value *bad1[6] = {cache, repeated, ks, kz, vs, vz}, *bad2[6] = {cache, out_of_range, ks, kz, vs, vz},
           *bad3[6] = {cache, sel, neg_scale, kz, vs, vz}, *bad4[6] = {cache, sel, ks, i16, vs, vz}, *none[2];
  CHECK_STATUS(pk_run(&q, bad1, NULL, none), OL_INVALID_ARGUMENT);
  CHECK_STATUS(pk_run(&q, bad2, NULL, none), OL_INVALID_ARGUMENT);
  CHECK_STATUS(pk_run(&q, bad3, NULL, none), OL_INVALID_ARGUMENT);
  CHECK_STATUS(pk_run(&q, bad4, NULL, none), OL_INVALID_ARGUMENT);
  /* an empty selection still checks the whole cache */
  int64_t nothing = 0;
  ol_value *empty_sel = tk_i64(1, &nothing, NULL);
  ol_value *broken_blocks[1] = {block_of(3, 1, dense_page(2, 3), dense_page(2, 2))}, *broken = NULL;
  CHECK_OK(ol_paged_cache_new(broken_blocks, 1, &broken));
  ol_value_release(broken_blocks[0]);
  ol_value *bad5[6] = {broken, empty_sel, ks, kz, vs, vz};
  CHECK_STATUS(pk_run(&q, bad5, NULL, none), OL_INVALID_ARGUMENT);
  ol_value *all[] = {cache, sel, ks, kz, vs, vz, ignored, f16, bf16, quantized[0], back[0], repeated, out_of_range,
                     neg_scale, i16, empty_sel, broken};
  tk_release_all(all, (int)(sizeof all / sizeof all[0]));
  pk_destroy(&q);
}

/* Encoding rounds ties to even and saturates. */
static void encoding(void) {
  const float x[6] = {0.5f, 1.5f, 2.5f, -0.5f, 1000.0f, -1000.0f};
  uint8_t codes[6] = {0};
  ol_page_encode(OL_DTYPE_INT8, 1.0f, 0, x, 6, codes, 0);
  CHECK((int8_t)codes[0] == 0 && (int8_t)codes[1] == 2 && (int8_t)codes[2] == 2 && (int8_t)codes[3] == 0 &&
        (int8_t)codes[4] == 127 && (int8_t)codes[5] == -128);
  uint8_t u4[3] = {0};
  ol_page_encode(OL_DTYPE_UINT4, 1.0f, 8, x, 6, u4, 0);
  CHECK((u4[0] & 0xF) == 8 && (u4[0] >> 4) == 10 && (u4[1] & 0xF) == 10 && (u4[1] >> 4) == 8 && (u4[2] & 0xF) == 15 &&
        (u4[2] >> 4) == 0);
}

OL_TEST_MAIN(TEST(dense_fixture), TEST(windowed_fixture), TEST(quantized_pages_match_reconstruction), TEST(integer_products_match_reconstruction),
             TEST(four_step_accuracy), TEST(split_executions_agree), TEST(chunks_span_pages), TEST(quantized_known_answers),
             TEST(attributes_and_inputs),
             TEST(cache_validation_rejections), TEST(page_memo), TEST(format_policies), TEST(quantize_paged_cache),
             TEST(encoding))
