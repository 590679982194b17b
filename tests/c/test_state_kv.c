/* Multi-head KV caches growing in place: the plain torch-export pattern
 * present = Concat(past, new, axis=2) on a bound pair appends into pitched
 * capacity (storage events: zero prefix bytes, append = the new bytes),
 * MatMul reads the pitched caches in place (Q x K^T fused with its
 * Transpose, probs x V), every other consumer and the user get dense
 * tensors; growth, aliases and ineligible patterns fall back correctly. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"
#include "core/status.h"
#include "core/dtype.h"
#include "core/value.h"
#include "ir/model.h"
#include "onnxlight.h"
#include "runtime/session.h"
#include "simd/gemm_tb.h"

static uint32_t seed = 12345u;
static float rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
}

/* Random elements: float32, float16, bfloat16 or int64. */
static void fill_rnd(ol_value *v) {
  ol_dtype dt = v->tensor.dtype;
  for (int64_t i = 0; i < ol_tcount(&v->tensor); i++) {
    if (dt == OL_DTYPE_FLOAT) ((float *)ol_tensor_data(v))[i] = rnd();
    else if (dt == OL_DTYPE_FLOAT16) ((uint16_t *)ol_tensor_data(v))[i] = ol_f32_to_f16(rnd());
    else if (dt == OL_DTYPE_BFLOAT16) ((uint16_t *)ol_tensor_data(v))[i] = ol_f32_to_bf16(rnd());
    else ((int64_t *)ol_tensor_data(v))[i] = (int64_t)(rnd() * 1000);
  }
}

static ol_value *rnd_new(ol_dtype dt, int rank, const int64_t *dims) {
  ol_value *v = NULL;
  if (ol_tensor_create(NULL, dt, dims, (size_t)rank, &v) != OL_OK) return NULL;
  fill_rnd(v);
  return v;
}

static ol_value *rnd_tensor(ol_dtype dt, int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  int64_t dims[4] = {d0, d1, d2, d3};
  return rnd_new(dt, 4, dims);
}

/* A model text written for float32 with every float[...] tensor of type dt. */
static char *retyped(const char *text, ol_dtype dt) {
  const char *name = dt == OL_DTYPE_FLOAT16 ? "float16" : dt == OL_DTYPE_BFLOAT16 ? "bfloat16" : "float";
  char *out = malloc(strlen(text) * 3 + 1), *o = out;
  if (!out) return NULL;
  for (const char *t = text; *t;)
    if (strncmp(t, "float[", 6) == 0) {
      o += sprintf(o, "%s[", name);
      t += 6;
    } else {
      *o++ = *t++;
    }
  *o = 0;
  return out;
}

static ol_model *parse_typed(const char *text, ol_dtype dt) {
  char *typed = retyped(text, dt);
  ol_model *m = NULL;
  CHECK(typed != NULL);
  if (typed) CHECK_OK(ol_model_parse_text(typed, &m));
  free(typed);
  return m;
}

static bool same_tensor(const ol_value *a, const ol_value *b) {
  if (!a || !b || a->tensor.rank != b->tensor.rank || a->tensor.dtype != b->tensor.dtype) return false;
  if (memcmp(a->tensor.dims, b->tensor.dims, sizeof(int64_t) * (size_t)a->tensor.rank) != 0) return false;
  if (ol_tensor_is_strided(&a->tensor) || ol_tensor_is_strided(&b->tensor)) return false; /* users see dense */
  size_t n = ol_dtype_storage_bytes(a->tensor.dtype, ol_tcount(&a->tensor));
  return n == 0 || memcmp(ol_tensor_data((ol_value *)a), ol_tensor_data((ol_value *)b), n) == 0;
}

static void release_all(ol_value **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ol_value_release(v[i]);
    v[i] = NULL;
  }
}

/* Torch's attention over a cache: the key is also read by Shape (the binding
 * then forwards it through an Identity), the value directly; a ReduceSum of
 * the key cache is a consumer that does not read pitched tensors; repeat_kv
 * (Unsqueeze, Expand) reads the value cache through its pitch. */
static const char *PLAIN =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "plain (float[1,H,1,4] q, float[1,H,1,4] k, float[1,H,1,4] v, float[1,H,P,4] past_k,"
    " float[1,H,P,4] past_v) => (float[1,H,1,4] y, float[1,H,T,4] present_k, float[1,H,T,4] present_v,"
    " int64[4] past_shape, float[1,1,1,1] ksum, float[1,H,2,T,4] rep) {\n"
    "  past_shape = Shape(past_k)\n"
    "  present_k = Concat <axis = 2> (past_k, k)\n"
    "  present_v = Concat <axis = 2> (past_v, v)\n"
    "  kt = Transpose <perm = [0, 1, 3, 2]> (present_k)\n"
    "  scores = MatMul(q, kt)\n"
    "  probs = Softmax <axis = -1> (scores)\n"
    "  y = MatMul(probs, present_v)\n"
    "  ksum = ReduceSum <keepdims = 1> (present_k)\n"
    "  axes = Constant <value = int64[1] {2}> ()\n"
    "  ones = Constant <value = int64[5] {1, 1, 2, 1, 1}> ()\n"
    "  v5 = Unsqueeze(present_v, axes)\n"
    "  rep = Expand(v5, ones)\n"
    "}";

static const char *INS[2] = {"past_k", "past_v"}, *OUTS[2] = {"present_k", "present_v"};
static const char *FEEDS[3] = {"q", "k", "v"};
static const char *ALL[5] = {"q", "k", "v", "past_k", "past_v"};

/* Decodes `steps` tokens through a state (capacity 4) and a stateless
 * session fed the previous presents; checks bit-identical outputs and the
 * storage events of each step. */
static void run_plain_decode(int64_t H, int steps, bool keep_outputs) {
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(PLAIN, &m));
  if (!m) return;
  CHECK_OK(ol_model_bind_persistent(m, INS, OUTS, 2, &bound));
  ol_session *stateless = NULL;
  CHECK_OK(ol_session_create(m, NULL, &stateless));
  ol_value *init[2] = {rnd_tensor(OL_DTYPE_FLOAT, 1, H, 0, 4), rnd_tensor(OL_DTYPE_FLOAT, 1, H, 0, 4)};
  ol_session_options opts;
  ol_session_options_init(&opts);
  opts.persistent_tensor_initial_capacity = 4;
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, INS, init, 2, &opts, &st));
  ol_context_options copts = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&copts, &ctx));
  ol_value *dpast[2] = {ol_value_retain(init[0]), ol_value_retain(init[1])};
  ol_value *kept[2] = {NULL, NULL};
  float kept_copy[2][64 * 4 * 4];
  const uint64_t token = 4u * 4u * (uint64_t)H; /* one position of one cache, all heads */
  int64_t capacity[2] = {0, 0};
  for (int step = 0; st && ctx && stateless && step < steps; step++) {
    ol_value *feeds[5] = {rnd_tensor(OL_DTYPE_FLOAT, 1, H, 1, 4), rnd_tensor(OL_DTYPE_FLOAT, 1, H, 1, 4),
                          rnd_tensor(OL_DTYPE_FLOAT, 1, H, 1, 4), dpast[0], dpast[1]};
    ol_value *o[6] = {0}, *d[6] = {0};
    ol_context_clear_events(ctx);
    CHECK_OK(ol_state_run(st, ctx, FEEDS, feeds, 3, NULL, o, 6, NULL));
    CHECK_OK(ol_session_run(stateless, ALL, feeds, 5, NULL, d, 6, NULL));
    for (int i = 0; i < 6; i++) CHECK(same_tensor(o[i], d[i]));
    /* the state's values are the returned presents */
    for (int i = 0; i < 2; i++) {
      ol_value *v = NULL;
      CHECK_OK(ol_state_value(st, INS[i], &v));
      CHECK(v == o[1 + i]);
    }
    /* events: one per Concat of a bound pair */
    CHECK(ol_context_event_count(ctx) == 2);
    int64_t T = step + 1;
    for (size_t e = 0; e < ol_context_event_count(ctx) && e < 2; e++) {
      const ol_runtime_event *ev = ol_context_event(ctx, e);
      CHECK(ev->action == OL_EVENT_PERSISTENT_STORAGE && strcmp(ev->op_type, "Concat") == 0);
      CHECK(ev->storage_append_copied_bytes == token);
      /* step 0 imports the initial (empty) caches: a fresh buffer of 4
       * positions; exhausted capacity or a kept alias of a single-head
       * output (returned as the state's value itself) moves the prefix once
       * into a buffer of twice the capacity; otherwise reuse */
      uint64_t allocs = 0, prefix = 0, reuse = 1, cap = 0;
      bool aliased = keep_outputs && H == 1 && step == 6;
      if (step == 0) {
        allocs = 1, reuse = 0, cap = 4;
      } else if (aliased || T > capacity[e]) {
        allocs = 1, reuse = 0, prefix = (uint64_t)(T - 1) * token, cap = 2u * (uint64_t)capacity[e];
      }
      if (cap) capacity[e] = (int64_t)cap;
      if (ev->storage_allocations != allocs || ev->storage_prefix_copied_bytes != prefix ||
          ev->storage_reuse_count != reuse)
        fprintf(stderr, "  H %lld step %d: allocations %llu prefix %llu reuse %llu\n", (long long)H, step,
                (unsigned long long)ev->storage_allocations, (unsigned long long)ev->storage_prefix_copied_bytes,
                (unsigned long long)ev->storage_reuse_count);
      CHECK(ev->storage_allocations == allocs);
      CHECK(ev->storage_prefix_copied_bytes == prefix);
      CHECK(ev->storage_reuse_count == reuse);
      CHECK(ev->storage_allocated_bytes == cap * token);
    }
    if (keep_outputs && step == 5) /* keep both presents alive across the next step */
      for (int i = 0; i < 2; i++) {
        kept[i] = ol_value_retain(o[1 + i]);
        memcpy(kept_copy[i], ol_tensor_data(kept[i]), 4 * (size_t)ol_tcount(&kept[i]->tensor));
      }
    if (keep_outputs && step == 6)
      for (int i = 0; i < 2; i++) {
        /* the old views are unchanged (shape and bytes) */
        CHECK(kept[i] && kept[i]->tensor.dims[2] == 6);
        if (kept[i]) CHECK(memcmp(kept_copy[i], ol_tensor_data(kept[i]), 4 * (size_t)ol_tcount(&kept[i]->tensor)) == 0);
        release_all(&kept[i], 1);
      }
    ol_value_release(dpast[0]);
    ol_value_release(dpast[1]);
    dpast[0] = d[1];
    dpast[1] = d[2];
    d[1] = d[2] = NULL;
    release_all(feeds, 3);
    release_all(o, 6);
    release_all(d, 6);
  }
  release_all(kept, 2);
  release_all(dpast, 2);
  release_all(init, 2);
  ol_context_destroy(ctx);
  ol_state_destroy(st);
  ol_session_destroy(stateless);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

static void multi_head_cache_grows_in_place(void) { run_plain_decode(3, 12, false); }

/* Returned multi-head presents are dense copies: keeping them is no alias */
static void kept_multi_head_outputs_do_not_block_reuse(void) { run_plain_decode(2, 8, true); }

/* A single-head cache is returned as itself: keeping it forces a fresh
 * buffer (one prefix copy) and leaves the kept view unchanged. */
static void kept_single_head_output_forces_a_fresh_buffer(void) { run_plain_decode(1, 8, true); }

/* com.microsoft GroupQueryAttention with past/present bound: the same
 * multi-head append (2 KV heads), bit-identical to a stateless session. */
static const char *GQA =
    "<ir_version: 10, opset_import: [\"\" : 18, \"com.microsoft\" : 1]>\n"
    "gqa (float[1,1,32] q, float[1,1,16] k, float[1,1,16] v, float[1,2,P,8] past_k, float[1,2,P,8] past_v,"
    " int32[1] seqlens_k, int32 total) => (float[1,1,32] y, float[1,2,T,8] present_k, float[1,2,T,8] present_v) {\n"
    "  y, present_k, present_v = com.microsoft.GroupQueryAttention <num_heads: int = 4, kv_num_heads: int = 2>"
    " (q, k, v, past_k, past_v, seqlens_k, total)\n"
    "}";

/* dt: the element type of every float tensor (float32 or float16). */
static void run_state_gqa(ol_dtype dt) {
  ol_model *m = parse_typed(GQA, dt), *bound = NULL;
  if (!m) return;
  CHECK_OK(ol_model_bind_persistent(m, INS, OUTS, 2, &bound));
  ol_session *stateless = NULL;
  CHECK_OK(ol_session_create(m, NULL, &stateless));
  ol_value *init[2] = {rnd_tensor(dt, 1, 2, 0, 8), rnd_tensor(dt, 1, 2, 0, 8)};
  ol_session_options opts;
  ol_session_options_init(&opts);
  opts.persistent_tensor_initial_capacity = 4;
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, INS, init, 2, &opts, &st));
  ol_context_options copts = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&copts, &ctx));
  ol_value *dpast[2] = {ol_value_retain(init[0]), ol_value_retain(init[1])};
  const char *names[7] = {"q", "k", "v", "seqlens_k", "total", "past_k", "past_v"};
  int64_t capacity = 4;
  for (int step = 0; st && ctx && stateless && step < 10; step++) {
    int64_t one = 1, d32[3] = {1, 1, 32}, d16[3] = {1, 1, 16};
    ol_value *feeds[7] = {rnd_new(dt, 3, d32), rnd_new(dt, 3, d16), rnd_new(dt, 3, d16)};
    ol_tensor_create(NULL, OL_DTYPE_INT32, &one, 1, &feeds[3]);
    ol_tensor_create(NULL, OL_DTYPE_INT32, NULL, 0, &feeds[4]);
    ((int32_t *)ol_tensor_data(feeds[3]))[0] = step;
    ((int32_t *)ol_tensor_data(feeds[4]))[0] = step + 1;
    feeds[5] = dpast[0];
    feeds[6] = dpast[1];
    ol_value *o[3] = {0}, *d[3] = {0};
    ol_context_clear_events(ctx);
    CHECK_OK(ol_state_run(st, ctx, names, feeds, 5, NULL, o, 3, NULL));
    CHECK_OK(ol_session_run(stateless, names, feeds, 7, NULL, d, 3, NULL));
    for (int i = 0; i < 3; i++) CHECK(same_tensor(o[i], d[i]));
    CHECK(ol_context_event_count(ctx) == 1);
    if (ol_context_event_count(ctx) == 1) {
      const ol_runtime_event *ev = ol_context_event(ctx, 0);
      const uint64_t token = 2u * 2u * 8u * ol_dtype_size(dt); /* K and V, 2 heads, 8 wide */
      CHECK(strcmp(ev->op_type, "GroupQueryAttention") == 0);
      CHECK(ev->storage_append_copied_bytes == token);
      bool grow = step > 0 && step + 1 > capacity;
      if (step == 0) CHECK(ev->storage_allocations == 2 && ev->storage_prefix_copied_bytes == 0);
      else if (grow) CHECK(ev->storage_allocations == 2 && ev->storage_prefix_copied_bytes == (uint64_t)step * token);
      else CHECK(ev->storage_allocations == 0 && ev->storage_prefix_copied_bytes == 0 && ev->storage_reuse_count == 2);
      if (grow) capacity *= 2;
    }
    ol_value_release(dpast[0]);
    ol_value_release(dpast[1]);
    dpast[0] = d[1];
    dpast[1] = d[2];
    d[1] = d[2] = NULL;
    release_all(feeds, 5);
    release_all(o, 3);
    release_all(d, 3);
  }
  release_all(dpast, 2);
  release_all(init, 2);
  ol_context_destroy(ctx);
  ol_state_destroy(st);
  ol_session_destroy(stateless);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

/* ONNX Attention 23 with two KV heads (GQA: four query heads): the same
 * multi-head append, bit-identical to a stateless session. */
static const char *ATTN =
    "<ir_version: 10, opset_import: [\"\" : 23]>\n"
    "attn (float[1,4,1,8] q, float[1,2,1,8] k, float[1,2,1,8] v, float[1,2,P,8] past_k, float[1,2,P,8] past_v)"
    " => (float[1,4,1,8] y, float[1,2,T,8] present_k, float[1,2,T,8] present_v) {\n"
    "  y, present_k, present_v = Attention <is_causal: int = 1> (q, k, v, \"\", past_k, past_v)\n"
    "}";

/* An attention operator appending K/V: its op_type and the dims of q and
 * of k, v (rank rank). */
typedef struct attn_case {
  const char *op;
  int rank;
  int64_t q[4], kv[4];
} attn_case;

static const attn_case ATTENTION23 = {"Attention", 4, {1, 4, 1, 8}, {1, 2, 1, 8}};
static const attn_case MULTI_HEAD = {"MultiHeadAttention", 3, {1, 1, 16}, {1, 1, 16}};

static void run_state_attention(const char *text, const attn_case *c, ol_dtype dt) {
  ol_model *m = parse_typed(text, dt), *bound = NULL;
  if (!m) return;
  CHECK_OK(ol_model_bind_persistent(m, INS, OUTS, 2, &bound));
  ol_session *stateless = NULL;
  CHECK_OK(ol_session_create(m, NULL, &stateless));
  ol_value *init[2] = {rnd_tensor(dt, 1, 2, 0, 8), rnd_tensor(dt, 1, 2, 0, 8)};
  ol_session_options opts;
  ol_session_options_init(&opts);
  opts.persistent_tensor_initial_capacity = 4;
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, INS, init, 2, &opts, &st));
  ol_context_options copts = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&copts, &ctx));
  ol_value *dpast[2] = {ol_value_retain(init[0]), ol_value_retain(init[1])};
  int64_t capacity = 4;
  for (int step = 0; st && ctx && stateless && step < 10; step++) {
    ol_value *feeds[5] = {rnd_new(dt, c->rank, c->q), rnd_new(dt, c->rank, c->kv), rnd_new(dt, c->rank, c->kv),
                          dpast[0], dpast[1]};
    ol_value *o[3] = {0}, *d[3] = {0};
    ol_context_clear_events(ctx);
    CHECK_OK(ol_state_run(st, ctx, FEEDS, feeds, 3, NULL, o, 3, NULL));
    CHECK_OK(ol_session_run(stateless, ALL, feeds, 5, NULL, d, 3, NULL));
    for (int i = 0; i < 3; i++) CHECK(same_tensor(o[i], d[i]));
    CHECK(ol_context_event_count(ctx) == 1);
    if (ol_context_event_count(ctx) == 1) {
      const ol_runtime_event *ev = ol_context_event(ctx, 0);
      const uint64_t token = 2u * 2u * 8u * ol_dtype_size(dt);
      CHECK(strcmp(ev->op_type, c->op) == 0);
      CHECK(ev->storage_append_copied_bytes == token);
      bool grow = step > 0 && step + 1 > capacity;
      if (step == 0) CHECK(ev->storage_allocations == 2 && ev->storage_prefix_copied_bytes == 0);
      else if (grow) CHECK(ev->storage_allocations == 2 && ev->storage_prefix_copied_bytes == (uint64_t)step * token);
      else CHECK(ev->storage_allocations == 0 && ev->storage_prefix_copied_bytes == 0 && ev->storage_reuse_count == 2);
      if (grow) capacity *= 2;
    }
    ol_value_release(dpast[0]);
    ol_value_release(dpast[1]);
    dpast[0] = d[1];
    dpast[1] = d[2];
    d[1] = d[2] = NULL;
    release_all(feeds, 3);
    release_all(o, 3);
    release_all(d, 3);
  }
  release_all(dpast, 2);
  release_all(init, 2);
  ol_context_destroy(ctx);
  ol_state_destroy(st);
  ol_session_destroy(stateless);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

static void gqa_cache_grows_in_place(void) { run_state_gqa(OL_DTYPE_FLOAT); }
static void attention_cache_grows_in_place(void) { run_state_attention(ATTN, &ATTENTION23, OL_DTYPE_FLOAT); }
/* float16 (and Attention's bfloat16) caches: the same events with 2-byte
 * elements, bit-identical to the stateless session */
static void half_gqa_cache_grows_in_place(void) { run_state_gqa(OL_DTYPE_FLOAT16); }
static void half_attention_cache_grows_in_place(void) {
  run_state_attention(ATTN, &ATTENTION23, OL_DTYPE_FLOAT16);
  run_state_attention(ATTN, &ATTENTION23, OL_DTYPE_BFLOAT16);
}

/* Sessions (no state) that let caches grow (ol_session_grow_outputs, what
 * the JS package turns on): GroupQueryAttention and Attention give their
 * presents spare rows, and a present fed back as past is appended to in
 * place (the same buffer run after run); every output equals a dense
 * session's fed dense presents, bit for bit. */
/* mode 0: GroupQueryAttention, 1: Attention 23, 2: MultiHeadAttention;
 * dt: the element type of every float tensor */
static void session_attention_caches_grow_in_place(const char *text, int mode, ol_dtype dt) {
  const bool gqa = mode == 0;
  ol_model *m = parse_typed(text, dt);
  if (!m) return;
  ol_session *grown = NULL, *dense = NULL;
  CHECK_OK(ol_session_create(m, NULL, &grown));
  CHECK_OK(ol_session_create(m, NULL, &dense));
  ol_model_destroy(m);
  if (!grown || !dense) return;
  ol_session_grow_outputs(grown, true);
  const size_t past_k = 3; /* session input numbering: past_k follows q, k, v */
  int64_t axis = -1;
  CHECK(ol_session_input_grow_axis(grown, past_k, &axis) && axis == 2);
  CHECK(!ol_session_input_grow_axis(grown, 0, &axis) && !ol_session_input_grow_axis(dense, past_k, &axis));
  const char *gnames[7] = {"q", "k", "v", "past_k", "past_v", "seqlens_k", "total"};
  ol_value *gpast[2] = {rnd_tensor(dt, 1, 2, 0, 8), rnd_tensor(dt, 1, 2, 0, 8)};
  ol_value *dpast[2] = {ol_value_retain(gpast[0]), ol_value_retain(gpast[1])};
  const ol_buffer *storage[2] = {NULL, NULL};
  for (int step = 0; step < 10; step++) {
    ol_value *feeds[7] = {0};
    if (gqa) {
      int64_t one = 1, d32[3] = {1, 1, 32}, d16[3] = {1, 1, 16};
      feeds[0] = rnd_new(dt, 3, d32), feeds[1] = rnd_new(dt, 3, d16), feeds[2] = rnd_new(dt, 3, d16);
      ol_tensor_create(NULL, OL_DTYPE_INT32, &one, 1, &feeds[5]);
      ol_tensor_create(NULL, OL_DTYPE_INT32, NULL, 0, &feeds[6]);
      if (feeds[5] && feeds[6]) {
        ((int32_t *)ol_tensor_data(feeds[5]))[0] = step;
        ((int32_t *)ol_tensor_data(feeds[6]))[0] = step + 1;
      }
    } else if (mode == 1) {
      feeds[0] = rnd_tensor(dt, 1, 4, 1, 8);
      feeds[1] = rnd_tensor(dt, 1, 2, 1, 8);
      feeds[2] = rnd_tensor(dt, 1, 2, 1, 8);
    } else {
      int64_t d3[3] = {1, 1, 16};
      for (int i = 0; i < 3; i++) feeds[i] = rnd_new(dt, 3, d3);
    }
    size_t n = gqa ? 7 : 5;
    ol_value *o[3] = {0}, *d[3] = {0};
    feeds[3] = gpast[0], feeds[4] = gpast[1];
    CHECK_OK(ol_session_run(grown, gnames, feeds, n, NULL, o, 3, NULL));
    feeds[3] = dpast[0], feeds[4] = dpast[1];
    CHECK_OK(ol_session_run(dense, gnames, feeds, n, NULL, d, 3, NULL));
    feeds[3] = feeds[4] = NULL;
    for (int i = 0; i < 3; i++) {
      if (!o[i] || !d[i]) continue;
      if (i) {
        const ol_tensor *t = &o[i]->tensor;
        CHECK(t->pitch_axis == 2 && t->pitch > t->dims[2] && t->buffer->append_end == step + 1);
        if (step == 0) storage[i - 1] = t->buffer;
        CHECK(t->buffer == storage[i - 1]); /* appended in place after the first run */
      }
      ol_value *view = ol_value_retain(o[i]);
      CHECK_OK(ol_value_densify(NULL, &view));
      CHECK(same_tensor(view, d[i]));
      ol_value_release(view);
    }
    release_all(gpast, 2);
    release_all(dpast, 2);
    gpast[0] = o[1], gpast[1] = o[2], dpast[0] = d[1], dpast[1] = d[2];
    o[1] = o[2] = d[1] = d[2] = NULL;
    release_all(feeds, 7);
    release_all(o, 3);
    release_all(d, 3);
  }
  release_all(gpast, 2);
  release_all(dpast, 2);
  ol_session_destroy(grown);
  ol_session_destroy(dense);
}
static const char *MHA =
    "<ir_version: 10, opset_import: [\"\" : 18, \"com.microsoft\" : 1]>\n"
    "mha (float[1,1,16] q, float[1,1,16] k, float[1,1,16] v, float[1,2,P,8] past_k, float[1,2,P,8] past_v)"
    " => (float[1,1,16] y, float[1,2,T,8] present_k, float[1,2,T,8] present_v) {\n"
    "  y, present_k, present_v = com.microsoft.MultiHeadAttention <num_heads: int = 2>"
    " (q, k, v, \"\", \"\", \"\", past_k, past_v)\n"
    "}";
static void session_gqa_caches_grow_in_place(void) { session_attention_caches_grow_in_place(GQA, 0, OL_DTYPE_FLOAT); }
static void session_attention23_caches_grow_in_place(void) {
  session_attention_caches_grow_in_place(ATTN, 1, OL_DTYPE_FLOAT);
}
static void session_mha_caches_grow_in_place(void) { session_attention_caches_grow_in_place(MHA, 2, OL_DTYPE_FLOAT); }
/* com.microsoft MultiHeadAttention in persistent state appends in place
 * too (float32 and float16), bit-identical to a stateless session */
static void mha_cache_grows_in_place(void) {
  run_state_attention(MHA, &MULTI_HEAD, OL_DTYPE_FLOAT);
  run_state_attention(MHA, &MULTI_HEAD, OL_DTYPE_FLOAT16);
}
/* float16 caches grow exactly so (and Attention's bfloat16 ones) */
static void session_half_caches_grow_in_place(void) {
  session_attention_caches_grow_in_place(GQA, 0, OL_DTYPE_FLOAT16);
  session_attention_caches_grow_in_place(ATTN, 1, OL_DTYPE_FLOAT16);
  session_attention_caches_grow_in_place(ATTN, 1, OL_DTYPE_BFLOAT16);
  session_attention_caches_grow_in_place(MHA, 2, OL_DTYPE_FLOAT16);
}

/* A pitched float16 cache is read in place with its pitch (a head block at
 * a time through the dtype table): GroupQueryAttention, MultiHeadAttention
 * and Attention give on it the bits they give on a dense copy. */
static void pitched_half_caches_read_with_their_pitch(void) {
  int64_t dims[4] = {1, 2, 3, 4}; /* B, KV heads, P, H */
  ol_value *pitched[2] = {NULL, NULL}, *dense[2] = {NULL, NULL};
  uint16_t rows[2 * 3 * 4];
  for (int c = 0; c < 2; c++) {
    CHECK_OK(ol_value_new_grown(NULL, OL_DTYPE_FLOAT16, 4, dims, 2, &pitched[c]));
    if (!pitched[c]) return;
    const int64_t pitch = pitched[c]->tensor.pitch;
    CHECK(pitch > 3 && ol_tensor_is_strided(&pitched[c]->tensor));
    uint16_t *h = ol_tensor_data(pitched[c]);
    for (int64_t o = 0; o < 2; o++)
      for (int64_t i = 0; i < 3 * 4; i++) h[o * pitch * 4 + i] = rows[o * 12 + i] = ol_f32_to_f16(rnd());
    dense[c] = tk_tensor(OL_DTYPE_FLOAT16, 4, dims, rows);
  }
  uint16_t q16[16], k8[8], v8[8];
  for (int i = 0; i < 16; i++) q16[i] = ol_f32_to_f16(rnd());
  for (int i = 0; i < 8; i++) k8[i] = ol_f32_to_f16(rnd()), v8[i] = ol_f32_to_f16(rnd());
  int64_t dq[3] = {1, 1, 16}, dk[3] = {1, 1, 8}, d1[1] = {1}, dq4[4] = {1, 2, 1, 4};
  int32_t seqlens[1] = {3}, total[1] = {4};
  ol_value *q = tk_tensor(OL_DTYPE_FLOAT16, 3, dq, q16), *q8 = tk_tensor(OL_DTYPE_FLOAT16, 3, dk, q16),
           *k = tk_tensor(OL_DTYPE_FLOAT16, 3, dk, k8), *v = tk_tensor(OL_DTYPE_FLOAT16, 3, dk, v8),
           *q4 = tk_tensor(OL_DTYPE_FLOAT16, 4, dq4, q16), *k4 = tk_tensor(OL_DTYPE_FLOAT16, 4, dq4, k8),
           *v4 = tk_tensor(OL_DTYPE_FLOAT16, 4, dq4, v8), *sl = tk_tensor(OL_DTYPE_INT32, 1, d1, seqlens),
           *tot = tk_tensor(OL_DTYPE_INT32, 0, NULL, total);
  ol_attr gqa[2] = {tk_attr_int("num_heads", 4), tk_attr_int("kv_num_heads", 2)}, mha[1] = {tk_attr_int("num_heads", 2)};
  for (int op = 0; op < 3; op++) {
    ol_value *out[2][3] = {{NULL}};
    for (int layout = 0; layout < 2; layout++) {
      ol_value **past = layout ? pitched : dense;
      ol_value *gin[7] = {q, k, v, past[0], past[1], sl, tot};
      ol_value *min[8] = {q8, k, v, NULL, NULL, NULL, past[0], past[1]};
      ol_value *ain[6] = {q4, k4, v4, NULL, past[0], past[1]};
      if (op == 0) CHECK_OK(tk_run_domain("com.microsoft", "GroupQueryAttention", 1, gqa, 2, gin, 7, out[layout], 3));
      if (op == 1) CHECK_OK(tk_run_domain("com.microsoft", "MultiHeadAttention", 1, mha, 1, min, 8, out[layout], 3));
      if (op == 2) CHECK_OK(tk_run("Attention", 23, NULL, 0, ain, 6, out[layout], 3));
    }
    for (int i = 0; i < 3; i++) CHECK(same_tensor(out[0][i], out[1][i]));
    CHECK(out[0][1] && out[0][1]->tensor.dims[2] == 4); /* past and the new row */
    release_all(out[0], 3);
    release_all(out[1], 3);
  }
  ol_value *all[9] = {q, q8, k, v, q4, k4, v4, sl, tot};
  release_all(all, 9);
  release_all(pitched, 2);
  release_all(dense, 2);
}

/* float16 caches take the same path; the half-type kernels read the
 * pitched caches through their offsets or get dense copies. */
static const char *HALF =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "half (float16[1,2,1,4] q, float16[1,2,1,4] k, float16[1,2,1,4] v, float16[1,2,P,4] past_k,"
    " float16[1,2,P,4] past_v) => (float16[1,2,1,4] y, float16[1,2,T,4] present_k, float16[1,2,T,4] present_v,"
    " float16[1,2,2,T,4] rep) {\n"
    "  present_k = Concat <axis = 2> (past_k, k)\n"
    "  present_v = Concat <axis = 2> (past_v, v)\n"
    "  kt = Transpose <perm = [0, 1, 3, 2]> (present_k)\n"
    "  scores = MatMul(q, kt)\n"
    "  y = MatMul(scores, present_v)\n"
    "  axes = Constant <value = int64[1] {2}> ()\n"
    "  ones = Constant <value = int64[5] {1, 1, 2, 1, 1}> ()\n"
    "  v5 = Unsqueeze(present_v, axes)\n"
    "  rep = Expand(v5, ones)\n"
    "}";

static ol_value *half_tensor(int64_t d2) {
  int64_t dims[4] = {1, 2, d2, 4};
  ol_value *v = NULL;
  if (ol_tensor_create(NULL, OL_DTYPE_FLOAT16, dims, 4, &v) != OL_OK) return NULL;
  for (int64_t i = 0; i < 8 * d2; i++) ((uint16_t *)ol_tensor_data(v))[i] = ol_f32_to_f16(rnd());
  return v;
}

static void half_cache_grows_in_place(void) {
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(HALF, &m));
  if (!m) return;
  CHECK_OK(ol_model_bind_persistent(m, INS, OUTS, 2, &bound));
  ol_session *stateless = NULL;
  CHECK_OK(ol_session_create(m, NULL, &stateless));
  ol_value *init[2] = {half_tensor(0), half_tensor(0)};
  ol_session_options opts;
  ol_session_options_init(&opts);
  opts.persistent_tensor_initial_capacity = 4;
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, INS, init, 2, &opts, &st));
  ol_context_options copts = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&copts, &ctx));
  ol_value *dpast[2] = {ol_value_retain(init[0]), ol_value_retain(init[1])};
  for (int step = 0; st && ctx && stateless && step < 9; step++) {
    ol_value *feeds[5] = {half_tensor(1), half_tensor(1), half_tensor(1), dpast[0], dpast[1]};
    ol_value *o[4] = {0}, *d[4] = {0};
    ol_context_clear_events(ctx);
    CHECK_OK(ol_state_run(st, ctx, FEEDS, feeds, 3, NULL, o, 4, NULL));
    CHECK_OK(ol_session_run(stateless, ALL, feeds, 5, NULL, d, 4, NULL));
    for (int i = 0; i < 4; i++) CHECK(same_tensor(o[i], d[i]));
    uint64_t prefix = 0;
    for (size_t e = 0; e < ol_context_event_count(ctx); e++) prefix += ol_context_event(ctx, e)->storage_prefix_copied_bytes;
    CHECK(ol_context_event_count(ctx) == 2);
    CHECK(prefix == (step == 4 || step == 8 ? 2u * 2u * 4u * 2u * (uint64_t)step : 0u)); /* growth at 4 and 8 positions */
    ol_value_release(dpast[0]);
    ol_value_release(dpast[1]);
    dpast[0] = d[1];
    dpast[1] = d[2];
    d[1] = d[2] = NULL;
    release_all(feeds, 3);
    release_all(o, 4);
    release_all(d, 4);
  }
  release_all(dpast, 2);
  release_all(init, 2);
  ol_context_destroy(ctx);
  ol_state_destroy(st);
  ol_session_destroy(stateless);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

/* Patterns the append does not serve keep ordinary concatenation: new rows
 * before the cache (no reservation, no event), and an int64 cache (bound,
 * declined: the dense fallback reports its full prefix copy). */
static const char *INELIGIBLE =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "ineligible (float[1,2,1,4] k, int64[1,2,1,4] v, float[1,2,P,4] past_k, int64[1,2,P,4] past_v)"
    " => (float[1,2,T,4] present_k, int64[1,2,T,4] present_v) {\n"
    "  present_k = Concat <axis = 2> (k, past_k)\n"
    "  present_v = Concat <axis = 2> (past_v, v)\n"
    "}";

static void ineligible_patterns_fall_back(void) {
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(INELIGIBLE, &m));
  if (!m) return;
  CHECK_OK(ol_model_bind_persistent(m, INS, OUTS, 2, &bound));
  ol_value *init[2] = {rnd_tensor(OL_DTYPE_FLOAT, 1, 2, 0, 4), rnd_tensor(OL_DTYPE_INT64, 1, 2, 0, 4)};
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, INS, init, 2, NULL, &st));
  ol_context_options copts = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&copts, &ctx));
  const char *names[2] = {"k", "v"};
  for (int step = 0; st && ctx && step < 3; step++) {
    ol_value *feeds[2] = {rnd_tensor(OL_DTYPE_FLOAT, 1, 2, 1, 4), rnd_tensor(OL_DTYPE_INT64, 1, 2, 1, 4)};
    ol_value *before[2] = {NULL, NULL}, *o[2] = {0};
    for (int i = 0; i < 2; i++) {
      ol_value *v = NULL;
      CHECK_OK(ol_state_value(st, INS[i], &v));
      before[i] = ol_value_retain(v);
    }
    ol_context_clear_events(ctx);
    CHECK_OK(ol_state_run(st, ctx, names, feeds, 2, NULL, o, 2, NULL));
    /* contents: k first then the old keys; the old values then v */
    if (o[0] && o[1] && before[0] && before[1]) {
      const float *pk = ol_tensor_data(o[0]);
      const int64_t *pv = ol_tensor_data(o[1]);
      for (int h = 0; h < 2; h++) {
        CHECK(memcmp(pk + h * (step + 1) * 4, (float *)ol_tensor_data(feeds[0]) + h * 4, 16) == 0);
        if (step) CHECK(memcmp(pk + h * (step + 1) * 4 + 4, (float *)ol_tensor_data(before[0]) + h * step * 4,
                               16 * (size_t)step) == 0);
        if (step) CHECK(memcmp(pv + h * (step + 1) * 4, (int64_t *)ol_tensor_data(before[1]) + h * step * 4,
                               32 * (size_t)step) == 0);
        CHECK(memcmp(pv + h * (step + 1) * 4 + step * 4, (int64_t *)ol_tensor_data(feeds[1]) + h * 4, 32) == 0);
      }
    }
    CHECK(ol_context_event_count(ctx) == 1);
    if (ol_context_event_count(ctx) == 1) {
      const ol_runtime_event *ev = ol_context_event(ctx, 0);
      CHECK(ev->storage_allocations == 1 && ev->storage_reuse_count == 0);
      CHECK(ev->storage_prefix_copied_bytes == 8u * 2u * 4u * (uint64_t)step);
      CHECK(ev->storage_append_copied_bytes == 8u * 2u * 4u);
    }
    release_all(feeds, 2);
    release_all(before, 2);
    release_all(o, 2);
  }
  release_all(init, 2);
  ol_context_destroy(ctx);
  ol_state_destroy(st);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

/* The fused Q x K^T agrees with an explicit Transpose + MatMul (the
 * transposed value is also a graph output there, so nothing is fused),
 * within the rounding of a different summation order. */
static const char *FUSED =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "fused (float[2,3,5,7] q, float[2,3,9,7] k) => (float[2,3,5,9] s) {\n"
    "  kt = Transpose <perm = [0, 1, 3, 2]> (k)\n"
    "  s = MatMul(q, kt)\n"
    "}";
static const char *UNFUSED =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "unfused (float[2,3,5,7] q, float[2,3,9,7] k) => (float[2,3,5,9] s, float[2,3,7,9] kt) {\n"
    "  kt = Transpose <perm = [0, 1, 3, 2]> (k)\n"
    "  s = MatMul(q, kt)\n"
    "}";

static void fused_transposed_matmul_matches(void) {
  ol_model *a = NULL, *b = NULL;
  CHECK_OK(ol_model_parse_text(FUSED, &a));
  CHECK_OK(ol_model_parse_text(UNFUSED, &b));
  ol_session *sa = NULL, *sb = NULL;
  if (a) CHECK_OK(ol_session_create(a, NULL, &sa));
  if (b) CHECK_OK(ol_session_create(b, NULL, &sb));
  int64_t qd[4] = {2, 3, 5, 7}, kd[4] = {2, 3, 9, 7};
  ol_value *feeds[2] = {rnd_tensor(OL_DTYPE_FLOAT, qd[0], qd[1], qd[2], qd[3]),
                        rnd_tensor(OL_DTYPE_FLOAT, kd[0], kd[1], kd[2], kd[3])};
  const char *names[2] = {"q", "k"};
  ol_value *oa[1] = {0}, *ob[2] = {0};
  if (sa && sb) {
    CHECK_OK(ol_session_run(sa, names, feeds, 2, NULL, oa, 1, NULL));
    CHECK_OK(ol_session_run(sb, names, feeds, 2, NULL, ob, 2, NULL));
  }
  if (oa[0] && ob[0]) {
    CHECK(oa[0]->tensor.rank == 4 && oa[0]->tensor.dims[3] == 9);
    const float *x = ol_tensor_data(oa[0]), *y = ol_tensor_data(ob[0]);
    float worst = 0;
    for (int64_t i = 0; i < ol_tcount(&oa[0]->tensor); i++) worst = fmaxf(worst, fabsf(x[i] - y[i]));
    CHECK(worst < 1e-5f);
  }
  release_all(oa, 1);
  release_all(ob, 2);
  release_all(feeds, 2);
  ol_session_destroy(sa);
  ol_session_destroy(sb);
  ol_model_destroy(a);
  ol_model_destroy(b);
}

/* The dot-product kernel returns the scalar reference's bits. */
static void gemm_tb_matches_reference(void) {
  static const int64_t shapes[][3] = {{1, 1, 1}, {1, 7, 64}, {3, 5, 7}, {32, 33, 64}, {2, 9, 3}, {4, 4, 0}};
  for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++) {
    int64_t M = shapes[s][0], N = shapes[s][1], K = shapes[s][2], lda = K + 1, ldb = K + 3, ldc = N + 2;
    float *A = malloc(sizeof(float) * (size_t)(M * lda + 1)), *B = malloc(sizeof(float) * (size_t)(N * ldb + 1));
    float *C1 = calloc((size_t)(M * ldc + 1), sizeof(float)), *C2 = calloc((size_t)(M * ldc + 1), sizeof(float));
    if (A && B && C1 && C2) {
      for (int64_t i = 0; i < M * lda; i++) A[i] = rnd();
      for (int64_t i = 0; i < N * ldb; i++) B[i] = rnd();
      ol_f32_gemm_tb_scalar(M, N, K, A, lda, B, ldb, C1, ldc);
      ol_f32_gemm_tb(M, N, K, A, lda, B, ldb, C2, ldc);
      CHECK(memcmp(C1, C2, sizeof(float) * (size_t)(M * ldc)) == 0);
    }
    free(A);
    free(B);
    free(C1);
    free(C2);
  }
}

OL_TEST_MAIN(TEST(multi_head_cache_grows_in_place), TEST(kept_multi_head_outputs_do_not_block_reuse),
             TEST(kept_single_head_output_forces_a_fresh_buffer), TEST(ineligible_patterns_fall_back),
             TEST(gqa_cache_grows_in_place), TEST(attention_cache_grows_in_place),
             TEST(half_gqa_cache_grows_in_place), TEST(half_attention_cache_grows_in_place),
             TEST(half_cache_grows_in_place), TEST(session_gqa_caches_grow_in_place),
             TEST(session_attention23_caches_grow_in_place), TEST(session_mha_caches_grow_in_place), TEST(mha_cache_grows_in_place),
             TEST(session_half_caches_grow_in_place),
             TEST(pitched_half_caches_read_with_their_pitch),
             TEST(fused_transposed_matmul_matches), TEST(gemm_tb_matches_reference))
