/* Payload reuse across runs (core/payload_pool.h): once shapes are stable a
 * session or state run makes no allocator call; growing caches allocate
 * rarely; results are bit-identical to runs without reuse; an output kept
 * across later runs keeps its bytes; the pool holds no more than one run
 * released and frees it with the session; injected allocation failures stay
 * clean. Each session gets its own counting allocator. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/dtype.h"
#include "core/value.h"
#include "onnxlight.h"
#include "runtime/session.h"

static uint32_t seed = 777u;
static float rnd(void) {
  seed = seed * 1664525u + 1013904223u;
  return (float)(seed >> 8) / (float)(1u << 24) - 0.5f;
}

static ol_value *rnd_tensor(int rank, const int64_t *dims) {
  ol_value *v = NULL;
  if (ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, (size_t)rank, &v) != OL_OK) return NULL;
  float *f = ol_tensor_data(v);
  for (int64_t i = 0; i < ol_tensor_element_count(v); i++) f[i] = rnd();
  return v;
}

static bool same_bytes(const ol_value *a, const ol_value *b) {
  if (!a || !b || a->tensor.rank != b->tensor.rank || ol_tensor_byte_size(a) != ol_tensor_byte_size(b)) return false;
  if (memcmp(a->tensor.dims, b->tensor.dims, sizeof(int64_t) * (size_t)a->tensor.rank) != 0) return false;
  return memcmp(ol_tensor_data(a), ol_tensor_data(b), ol_tensor_byte_size(a)) == 0;
}

static void release_all(ol_value **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ol_value_release(v[i]);
    v[i] = NULL;
  }
}

static ol_allocator_stats stats_of(ol_allocator *a) {
  ol_allocator_stats s;
  ol_allocator_get_stats(a, &s);
  return s;
}

static ol_session *session_on(ol_model *m, ol_allocator *a, bool reuse) {
  ol_session_options o;
  ol_session_options_init(&o);
  o.allocator = a;
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, &o, &s));
  if (s) CHECK_OK(ol_session_reuse_payloads(s, reuse));
  return s;
}

/* A dozen intermediates of three sizes, two outputs; shapes from x. */
static const char *STABLE =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (float[N,16] x) => (float[N,16] y, float[N,N] p) {\n"
    "  xt = Transpose <perm = [1, 0]> (x)\n"
    "  s = MatMul(x, xt)\n"
    "  p = Softmax <axis = -1> (s)\n"
    "  h = MatMul(p, x)\n"
    "  r = Relu(h)\n"
    "  n = Neg(x)\n"
    "  a = Add(r, n)\n"
    "  e = Exp(a)\n"
    "  y = Mul(a, e)\n"
    "}";

/* Same shapes every run: from the third run on (the first run's outputs
 * are kept, so the second allocates their replacements) no allocator call;
 * outputs equal the non-reusing session's; the kept outputs never change. */
static void stable_session_runs_allocate_nothing(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(STABLE, &m));
  ol_allocator *a = NULL, *b = NULL;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_allocator_create(NULL, NULL, NULL, &b);
  ol_session *pooled = m ? session_on(m, a, true) : NULL, *plain = m ? session_on(m, b, false) : NULL;
  int64_t dims[2] = {8, 16};
  const char *names[1] = {"x"};
  ol_value *kept[2] = {NULL, NULL}, *kept_copy[2] = {NULL, NULL};
  for (int run = 0; pooled && plain && run < 8; run++) {
    ol_value *x = rnd_tensor(2, dims), *o[2] = {0}, *d[2] = {0};
    uint64_t before = stats_of(a).total_allocations;
    CHECK_OK(ol_session_run(pooled, names, &x, 1, NULL, o, 2, NULL));
    uint64_t calls = stats_of(a).total_allocations - before;
    if (run >= 2 && calls) fprintf(stderr, "  run %d: %llu allocator calls\n", run, (unsigned long long)calls);
    if (run >= 2) CHECK(calls == 0);
    CHECK_OK(ol_session_run(plain, names, &x, 1, NULL, d, 2, NULL));
    CHECK(same_bytes(o[0], d[0]) && same_bytes(o[1], d[1]));
    if (run == 0)
      for (int i = 0; i < 2; i++) {
        kept[i] = ol_value_retain(o[i]);
        ol_tensor_clone(NULL, &o[i]->tensor, &kept_copy[i]);
      }
    release_all(o, 2);
    release_all(d, 2);
    ol_value_release(x);
  }
  for (int i = 0; i < 2; i++) CHECK(same_bytes(kept[i], kept_copy[i]));
  /* the pool holds the released payloads; the reuse-free session none */
  CHECK(stats_of(a).pooled_bytes > 0);
  CHECK(stats_of(b).pooled_bytes == 0);
  ol_session_destroy(pooled);
  ol_session_destroy(plain);
  /* a kept output outlives its session and its pool */
  CHECK(same_bytes(kept[0], kept_copy[0]));
  CHECK(stats_of(a).live_bytes == ol_tensor_byte_size(kept[0]) + ol_tensor_byte_size(kept[1]));
  CHECK(stats_of(a).pooled_bytes == 0);
  release_all(kept, 2);
  release_all(kept_copy, 2);
  CHECK(stats_of(a).live_bytes == 0 && stats_of(a).live_allocations == 0);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
  ol_allocator_destroy(b);
}

/* A big run, then small ones: the pool holds at most what the big run's
 * intermediates took without reuse (plus size-class slack), and after two
 * small runs only what those use. */
static void pool_holds_at_most_one_run(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(STABLE, &m));
  ol_allocator *a = NULL, *b = NULL;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_allocator_create(NULL, NULL, NULL, &b);
  ol_session *pooled = m ? session_on(m, a, true) : NULL, *plain = m ? session_on(m, b, false) : NULL;
  const char *names[1] = {"x"};
  const int64_t sizes[4] = {256, 8, 8, 8};
  for (int run = 0; pooled && plain && run < 4; run++) {
    int64_t dims[2] = {sizes[run], 16};
    ol_value *x = rnd_tensor(2, dims), *o[2] = {0}, *d[2] = {0};
    ol_allocator_reset_peak(b);
    CHECK_OK(ol_session_run(pooled, names, &x, 1, NULL, o, 2, NULL));
    CHECK_OK(ol_session_run(plain, names, &x, 1, NULL, d, 2, NULL));
    CHECK(same_bytes(o[0], d[0]) && same_bytes(o[1], d[1]));
    uint64_t peak = stats_of(b).peak_bytes; /* the run's payloads without reuse */
    release_all(o, 2);
    release_all(d, 2);
    ol_value_release(x);
    uint64_t held = stats_of(a).pooled_bytes;
    if (held > peak + peak / 4) fprintf(stderr, "  run %d: pool holds %llu, run peak %llu\n", run,
                                        (unsigned long long)held, (unsigned long long)peak);
    CHECK(held <= peak + peak / 4);
    CHECK(stats_of(a).live_bytes == 0);
  }
  ol_session_destroy(pooled);
  ol_session_destroy(plain);
  CHECK(stats_of(a).pooled_bytes == 0 && stats_of(a).live_allocations == 0);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
  ol_allocator_destroy(b);
}

/* Failing the k-th allocation of a warm session's run (k = 0, 1, ...): a
 * clean OL_OUT_OF_MEMORY or success, nothing lost, and the next run is
 * right again. */
static void injected_failures_stay_clean(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(STABLE, &m));
  ol_allocator *a = NULL;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_session *s = m ? session_on(m, a, true) : NULL;
  const char *names[1] = {"x"};
  bool succeeded = false;
  for (int k = 0; s && k < 40 && !succeeded; k++) {
    /* new shapes each round, so that the run needs fresh blocks too */
    int64_t dims[2] = {3 + k, 16};
    ol_value *x = rnd_tensor(2, dims), *o[2] = {0}, *ref[2] = {0};
    ol_allocator_fail_after(a, k);
    ol_status st = ol_session_run(s, names, &x, 1, NULL, o, 2, NULL);
    ol_allocator_fail_after(a, -1);
    CHECK(st == OL_OK || st == OL_OUT_OF_MEMORY);
    succeeded = st == OL_OK;
    release_all(o, 2);
    CHECK(stats_of(a).live_bytes == 0);
    CHECK_OK(ol_session_run(s, names, &x, 1, NULL, ref, 2, NULL));
    CHECK_OK(ol_session_run(s, names, &x, 1, NULL, o, 2, NULL));
    CHECK(same_bytes(o[0], ref[0]) && same_bytes(o[1], ref[1]));
    release_all(o, 2);
    release_all(ref, 2);
    ol_value_release(x);
  }
  CHECK(succeeded);
  ol_session_destroy(s);
  CHECK(stats_of(a).live_bytes == 0 && stats_of(a).pooled_bytes == 0);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
}

/* Two threads: one running the session, one releasing its outputs (which
 * go back to the pool while runs take from it); and two threads running the
 * same session at once on their own inputs (one of them without the pool).
 * Results stay right, nothing is lost. */
typedef struct thread_job {
  ol_session *session;
  ol_value *x, *want;
  ol_value *outputs[64];
  int count, bad;
} thread_job;

static void *release_outputs(void *arg) {
  thread_job *job = arg;
  for (int i = 0; i < job->count; i++) ol_value_release(job->outputs[i]);
  return NULL;
}

static void *run_many(void *arg) {
  thread_job *job = arg;
  const char *names[1] = {"x"};
  for (int i = 0; i < 40; i++) {
    ol_value *o[2] = {0};
    if (ol_session_run(job->session, names, &job->x, 1, NULL, o, 2, NULL) != OL_OK || !same_bytes(o[0], job->want))
      job->bad++;
    release_all(o, 2);
  }
  return NULL;
}

static void threads_share_a_pool_safely(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(STABLE, &m));
  ol_allocator *a = NULL;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_session *s = m ? session_on(m, a, true) : NULL;
  int64_t dims[2] = {16, 16};
  ol_value *x = rnd_tensor(2, dims), *want[2] = {0};
  const char *names[1] = {"x"};
  if (s) CHECK_OK(ol_session_run(s, names, &x, 1, NULL, want, 2, NULL));
  /* thread b compares against its own copy of y */
  ol_value_release(want[1]);
  want[1] = NULL;
  if (want[0]) ol_tensor_clone(NULL, &want[0]->tensor, &want[1]);
  for (int round = 0; s && round < 4; round++) {
    thread_job job = {s, x, want[0], {0}, 0, 0};
    for (int i = 0; i < 32; i++) {
      ol_value *o[2] = {0};
      CHECK_OK(ol_session_run(s, names, &x, 1, NULL, o, 2, NULL));
      CHECK(same_bytes(o[0], want[0]));
      job.outputs[job.count++] = o[0];
      job.outputs[job.count++] = o[1];
    }
    pthread_t releaser;
    pthread_create(&releaser, NULL, release_outputs, &job);
    thread_job meanwhile = {s, x, want[0], {0}, 0, 0};
    run_many(&meanwhile);
    pthread_join(releaser, NULL);
    CHECK(meanwhile.bad == 0);
    /* (each thread its own input: value refcounts are not atomic) */
    ol_value *x2 = NULL;
    ol_tensor_clone(NULL, &x->tensor, &x2);
    thread_job a_job = {s, x, want[0], {0}, 0, 0}, b_job = {s, x2, want[1], {0}, 0, 0};
    pthread_t t1, t2;
    pthread_create(&t1, NULL, run_many, &a_job);
    pthread_create(&t2, NULL, run_many, &b_job);
    pthread_join(t1, NULL);
    pthread_join(t2, NULL);
    CHECK(a_job.bad == 0 && b_job.bad == 0);
    ol_value_release(x2);
  }
  release_all(want, 2);
  ol_session_destroy(s);
  CHECK(stats_of(a).live_bytes == 0 && stats_of(a).pooled_bytes == 0 && stats_of(a).live_allocations == 0);
  ol_value_release(x);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
}

/* A state whose value keeps its shape (a running accumulator). */
static const char *ACCUMULATE =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (float[8,16] x, float[8,16] acc) => (float[8,16] y, float[8,16] acc_out) {\n"
    "  t = Mul(x, acc)\n"
    "  u = Tanh(t)\n"
    "  v = Sigmoid(u)\n"
    "  acc_out = Add(acc, v)\n"
    "  y = Relu(acc_out)\n"
    "}";

static void stable_state_runs_allocate_nothing(void) {
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(ACCUMULATE, &m));
  const char *in[1] = {"acc"}, *out[1] = {"acc_out"}, *feeds[1] = {"x"};
  if (m) CHECK_OK(ol_model_bind_persistent(m, in, out, 1, &bound));
  ol_allocator *a = NULL, *b = NULL;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_allocator_create(NULL, NULL, NULL, &b);
  ol_session_options o;
  ol_session_options_init(&o);
  o.allocator = a;
  int64_t dims[2] = {8, 16};
  ol_value *acc = rnd_tensor(2, dims), *past = ol_value_retain(acc);
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, in, &acc, 1, &o, &st));
  ol_session *plain = m ? session_on(m, b, false) : NULL;
  const char *all[2] = {"x", "acc"};
  for (int run = 0; st && plain && run < 8; run++) {
    ol_value *x = rnd_tensor(2, dims), *y = NULL, *d[2] = {0};
    uint64_t before = stats_of(a).total_allocations;
    CHECK_OK(ol_state_run(st, NULL, feeds, &x, 1, (const char *[]){"y"}, &y, 1, NULL));
    if (run >= 2) CHECK(stats_of(a).total_allocations == before);
    ol_value *f[2] = {x, past};
    CHECK_OK(ol_session_run(plain, all, f, 2, NULL, d, 2, NULL));
    CHECK(same_bytes(y, d[0]));
    ol_value *now = NULL;
    CHECK_OK(ol_state_value(st, "acc", &now));
    CHECK(same_bytes(now, d[1]));
    ol_value_release(past);
    past = d[1];
    d[1] = NULL;
    ol_value_release(y);
    release_all(d, 2);
    ol_value_release(x);
  }
  ol_state_destroy(st);
  ol_session_destroy(plain);
  CHECK(stats_of(a).live_bytes == 0 && stats_of(a).pooled_bytes == 0);
  ol_value_release(acc);
  ol_value_release(past);
  ol_model_destroy(bound);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
  ol_allocator_destroy(b);
}

/* Attention over a KV cache that grows by one position per run (the torch
 * export pattern: Concat into the bound cache, scores [1,H,1,T], a mask
 * [1,T]). The state's runs match a reuse-free session fed the presents, and
 * after warm-up allocate a small fraction of what runs without reuse do. */
static const char *DECODER =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (float[1,4,1,16] q, float[1,4,1,16] k, float[1,4,1,16] v, float[1,T] mask, float[1,4,P,16] past_k,"
    " float[1,4,P,16] past_v) => (float[1,4,1,16] y, float[1,4,T,16] present_k, float[1,4,T,16] present_v) {\n"
    "  present_k = Concat <axis = 2> (past_k, k)\n"
    "  present_v = Concat <axis = 2> (past_v, v)\n"
    "  kt = Transpose <perm = [0, 1, 3, 2]> (present_k)\n"
    "  raw = MatMul(q, kt)\n"
    "  scale = Constant <value = float {0.25}> ()\n"
    "  scaled = Mul(raw, scale)\n"
    "  one = Constant <value = float {1}> ()\n"
    "  inv = Sub(one, mask)\n"
    "  big = Constant <value = float {-10000}> ()\n"
    "  bias = Mul(inv, big)\n"
    "  scores = Add(scaled, bias)\n"
    "  probs = Softmax <axis = -1> (scores)\n"
    "  ctx = MatMul(probs, present_v)\n"
    "  y = Tanh(ctx)\n"
    "}";

static void growing_state_allocates_rarely(void) {
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(DECODER, &m));
  const char *ins[2] = {"past_k", "past_v"}, *outs[2] = {"present_k", "present_v"};
  const char *feeds[4] = {"q", "k", "v", "mask"}, *all[6] = {"q", "k", "v", "mask", "past_k", "past_v"};
  if (m) CHECK_OK(ol_model_bind_persistent(m, ins, outs, 2, &bound));
  ol_allocator *a = NULL, *b = NULL;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_allocator_create(NULL, NULL, NULL, &b);
  ol_session_options o;
  ol_session_options_init(&o);
  o.allocator = a;
  enum { PROMPT = 32 }; /* positions already cached, as after a prompt */
  int64_t empty[4] = {1, 4, PROMPT, 16}, one[4] = {1, 4, 1, 16};
  ol_value *init[2] = {rnd_tensor(4, empty), rnd_tensor(4, empty)};
  ol_value *past[2] = {ol_value_retain(init[0]), ol_value_retain(init[1])};
  ol_state *st = NULL;
  if (bound) CHECK_OK(ol_state_create(bound, ins, init, 2, &o, &st));
  ol_session *plain = m ? session_on(m, b, false) : NULL;
  const int steps = 64, warm = 4;
  uint64_t pooled_calls = 0, plain_calls = 0;
  for (int step = 0; st && plain && step < steps; step++) {
    int64_t mdims[2] = {1, PROMPT + step + 1};
    ol_value *x[4] = {rnd_tensor(4, one), rnd_tensor(4, one), rnd_tensor(4, one), rnd_tensor(2, mdims)};
    float *mask = ol_tensor_data(x[3]);
    for (int i = 0; i < mdims[1]; i++) mask[i] = i % 5 == 3 ? 0.0f : 1.0f;
    ol_value *y = NULL, *d[3] = {0};
    uint64_t a0 = stats_of(a).total_allocations, b0 = stats_of(b).total_allocations;
    CHECK_OK(ol_state_run(st, NULL, feeds, x, 4, (const char *[]){"y"}, &y, 1, NULL));
    ol_value *f[6] = {x[0], x[1], x[2], x[3], past[0], past[1]};
    CHECK_OK(ol_session_run(plain, all, f, 6, NULL, d, 3, NULL));
    if (step >= warm) {
      pooled_calls += stats_of(a).total_allocations - a0;
      plain_calls += stats_of(b).total_allocations - b0;
    }
    CHECK(same_bytes(y, d[0]));
    release_all(past, 2);
    past[0] = d[1], past[1] = d[2];
    d[1] = d[2] = NULL;
    ol_value_release(y);
    release_all(d, 3);
    release_all(x, 4);
  }
  /* the cache doubles its capacity now and then; intermediates allocate
   * once when they outgrow their block (with headroom: every ~40%) */
  fprintf(stderr, "  growing decode: %llu allocator calls with reuse, %llu without (%d steps)\n",
          (unsigned long long)pooled_calls, (unsigned long long)plain_calls, steps - warm);
  CHECK(pooled_calls * 20 <= plain_calls);
  CHECK(pooled_calls <= (uint64_t)(steps - warm) / 4);
  /* the state's values still equal the presents */
  for (int i = 0; st && i < 2; i++) {
    ol_value *v = NULL;
    CHECK_OK(ol_state_value(st, ins[i], &v));
    CHECK(same_bytes(v, past[i]));
  }
  ol_state_destroy(st);
  ol_session_destroy(plain);
  CHECK(stats_of(a).live_bytes == 0 && stats_of(a).pooled_bytes == 0);
  release_all(past, 2);
  release_all(init, 2);
  ol_model_destroy(bound);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
  ol_allocator_destroy(b);
}

OL_TEST_MAIN(TEST(stable_session_runs_allocate_nothing), TEST(pool_holds_at_most_one_run),
             TEST(injected_failures_stay_clean), TEST(threads_share_a_pool_safely),
             TEST(stable_state_runs_allocate_nothing),
             TEST(growing_state_allocates_rarely))
