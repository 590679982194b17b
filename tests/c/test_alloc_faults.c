/* Allocation failures walked over whole runs: failing the k-th allocation
 * of a run, for every k from 0 until the run succeeds, must return
 * OL_OUT_OF_MEMORY with a message, leak nothing (the counting allocator's
 * live bytes come back to their level before the run) and change nothing:
 * - decode steps of the fortunes model through a persistent state with
 *   bound caches: the step that finally succeeds gives the same logits and
 *   caches, bit for bit, as a state that never failed;
 * - control-flow and sequence kernels, whose bodies run through the runtime
 *   (Loop with more scan outputs than its first buffer holds, Scan,
 *   SequenceMap over SplitToSequence): the same outputs as a run without
 *   failures.
 * Kernel scratch comes from the run's allocator, so the walk reaches it too. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/status.h"
#include "core/value.h"
#include "onnxlight.h"

#define FORTUNES "models/fortunes-byte-0.8M.onnx"
#define MAX_CACHES 16

/* The fortunes model with present.{i}.key|value bound to past_key_values.{i}.key|value. */
static ol_model *load_bound(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_load_file(FORTUNES, &m));
  if (!m) return NULL;
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  const char *ins[MAX_CACHES];
  char outs[MAX_CACHES][64];
  const char *out_ptrs[MAX_CACHES];
  size_t n = 0;
  for (size_t i = 0; s && i < ol_session_input_count(s) && n < MAX_CACHES; i++) {
    const char *name = ol_session_input_name(s, i);
    if (strncmp(name, "past_key_values.", 16) != 0) continue;
    snprintf(outs[n], sizeof outs[n], "present.%s", name + 16);
    ins[n] = name;
    out_ptrs[n] = outs[n];
    n++;
  }
  CHECK(n == 8);
  ol_model *bound = NULL;
  if (n) CHECK_OK(ol_model_bind_persistent(m, ins, out_ptrs, n, &bound));
  ol_session_destroy(s);
  ol_model_destroy(m);
  return bound;
}

/* A state on allocator a whose caches start empty ([1, 2, 0, 32]). */
static ol_state *state_on(ol_model *m, ol_allocator *a) {
  char names[MAX_CACHES][64];
  const char *name_ptrs[MAX_CACHES];
  ol_value *empty[MAX_CACHES];
  int64_t dims[4] = {1, 2, 0, 32};
  for (int i = 0; i < 8; i++) {
    snprintf(names[i], sizeof names[i], "past_key_values.%d.%s", i / 2, i % 2 ? "value" : "key");
    name_ptrs[i] = names[i];
    empty[i] = NULL;
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 4, &empty[i]));
  }
  ol_session_options o;
  ol_session_options_init(&o);
  o.allocator = a;
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, name_ptrs, empty, 8, &o, &st));
  for (int i = 0; i < 8; i++) ol_value_release(empty[i]);
  return st;
}

static ol_value *i64_tensor(int64_t n, const int64_t *values) {
  int64_t dims[2] = {1, n};
  ol_value *v = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &v));
  if (v) memcpy(ol_tensor_data(v), values, sizeof(int64_t) * (size_t)n);
  return v;
}

/* One step: tokens ids[0..n) after `past` cached positions; the logits. */
static ol_status step(ol_state *st, const int64_t *ids, int64_t n, int64_t past, ol_value **logits) {
  int64_t mask[64], pos[64];
  for (int64_t i = 0; i < past + n; i++) mask[i] = 1;
  for (int64_t i = 0; i < n; i++) pos[i] = past + i;
  ol_value *feeds[3] = {i64_tensor(n, ids), i64_tensor(past + n, mask), i64_tensor(n, pos)};
  const char *names[3] = {"input_ids", "attention_mask", "position_ids"}, *out[1] = {"logits"};
  *logits = NULL;
  ol_status s = ol_state_run(st, NULL, names, feeds, 3, out, logits, 1, NULL);
  for (int i = 0; i < 3; i++) ol_value_release(feeds[i]);
  return s;
}

/* The greedy token after the last position of logits [1, n, 256]. */
static int64_t argmax_last(const ol_value *logits) {
  const float *f = ol_tensor_data(logits);
  int64_t n = ol_tensor_dims(logits)[1], v = ol_tensor_dims(logits)[2];
  const float *row = f + (n - 1) * v;
  int64_t best = 0;
  for (int64_t j = 1; j < v; j++)
    if (row[j] > row[best]) best = j;
  return best;
}

/* Equal shapes and logical contents (pitched caches compared densely). */
static bool same_bits(const ol_value *a, const ol_value *b) {
  if (!a || !b || a->tensor.rank != b->tensor.rank || a->tensor.dtype != b->tensor.dtype) return false;
  if (memcmp(a->tensor.dims, b->tensor.dims, sizeof(int64_t) * (size_t)a->tensor.rank) != 0) return false;
  ol_value *da = NULL, *db = NULL;
  bool same = ol_tensor_materialize(NULL, &a->tensor, &da) == OL_OK &&
              ol_tensor_materialize(NULL, &b->tensor, &db) == OL_OK &&
              memcmp(ol_tensor_data(da), ol_tensor_data(db), ol_tensor_byte_size(da)) == 0;
  ol_value_release(da);
  ol_value_release(db);
  return same;
}

static bool same_caches(const ol_state *a, const ol_state *b) {
  bool same = ol_state_value_count(a) == ol_state_value_count(b);
  for (size_t i = 0; same && i < ol_state_value_count(a); i++) {
    ol_value *va = NULL, *vb = NULL;
    const char *name = ol_state_value_name(a, i);
    same = ol_state_value(a, name, &va) == OL_OK && ol_state_value(b, name, &vb) == OL_OK && same_bits(va, vb);
  }
  return same;
}

static uint64_t live_bytes(const ol_allocator *a) {
  ol_allocator_stats s;
  ol_allocator_get_stats(a, &s);
  return s.live_bytes;
}

/* The checks after a run whose allocation k was refused (status st, first
 * output out): OL_OUT_OF_MEMORY with a message, no output, and the
 * allocator's live bytes back at baseline. False: stop walking (reported). */
static bool failed_cleanly(ol_status st, const ol_value *out, const ol_allocator *a, uint64_t baseline, int64_t k) {
  CHECK_STATUS(st, OL_OUT_OF_MEMORY);
  CHECK(out == NULL && ol_last_error()[0] != '\0');
  uint64_t live = live_bytes(a);
  if (live != baseline)
    fprintf(stderr, "  failing allocation %lld: %llu live bytes, %llu before the run\n", (long long)k,
            (unsigned long long)live, (unsigned long long)baseline);
  CHECK(live == baseline);
  return st == OL_OUT_OF_MEMORY && out == NULL && live == baseline;
}

/* Fails allocation k = 0, 1, ... of one step of `walked` until the step
 * succeeds; every failure must leave the state's values as they were.
 * Returns the number of allocations the step makes (the first k that
 * succeeds), and the successful step's logits in *logits. */
static int64_t walk_step(ol_state *walked, ol_allocator *a, const int64_t *ids, int64_t n, int64_t past,
                         ol_value **logits) {
  ol_value *before[MAX_CACHES];
  size_t count = ol_state_value_count(walked);
  for (size_t i = 0; i < count && i < MAX_CACHES; i++)
    CHECK_OK(ol_state_value(walked, ol_state_value_name(walked, i), &before[i]));
  uint64_t baseline = live_bytes(a);
  for (int64_t k = 0; k < 100000; k++) {
    ol_clear_error();
    ol_allocator_fail_after(a, k);
    ol_status s = step(walked, ids, n, past, logits);
    ol_allocator_fail_after(a, -1);
    if (s == OL_OK) return k;
    bool clean = failed_cleanly(s, *logits, a, baseline, k);
    for (size_t i = 0; i < count && i < MAX_CACHES; i++) {
      ol_value *now = NULL;
      CHECK_OK(ol_state_value(walked, ol_state_value_name(walked, i), &now));
      CHECK(now == before[i]);
    }
    if (!clean) return -1; /* one report is enough */
  }
  CHECK(!"the step never succeeded");
  return -1;
}

/* The prompt "The ", then decode steps; steps 1 (the first single-token
 * step: fresh shapes) and 4 (warm: the session's pool hands out the
 * previous step's blocks) are walked. */
static void decode_steps_survive_every_allocation_failure(void) {
  ol_model *m = load_bound();
  ol_allocator *a = NULL, *b = NULL;
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &b));
  ol_state *walked = m ? state_on(m, a) : NULL, *clean = m ? state_on(m, b) : NULL;
  if (!walked || !clean) {
    ol_state_destroy(walked);
    ol_state_destroy(clean);
    ol_model_destroy(m);
    ol_allocator_destroy(a);
    ol_allocator_destroy(b);
    return;
  }
  int64_t ids[8] = {84, 104, 101, 32}, n = 4, past = 0;
  for (int s = 0; s <= 4; s++) {
    ol_value *want = NULL, *got = NULL;
    CHECK_OK(step(clean, ids, n, past, &want));
    bool walk = s == 1 || s == 4;
    if (walk) {
      int64_t points = walk_step(walked, a, ids, n, past, &got);
      if (points > 0)
        fprintf(stderr, "  decode step %d: %lld allocation points, each failure clean\n", s, (long long)points);
      CHECK(points > 0);
    } else {
      CHECK_OK(step(walked, ids, n, past, &got));
    }
    CHECK(same_bits(got, want));
    CHECK(same_caches(walked, clean));
    past += n;
    ids[0] = want ? argmax_last(want) : 0;
    n = 1;
    ol_value_release(want);
    ol_value_release(got);
  }
  ol_state_destroy(walked);
  ol_state_destroy(clean);
  /* nothing left behind by any failure */
  CHECK(live_bytes(a) == 0 && live_bytes(b) == 0);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
  ol_allocator_destroy(b);
}

/* ------------------------------------------------------------ control flow */

static const char *CONTROL =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (int64[] n, float[2] x, float[5,2] xs) => (float[2] last, float[T,2] steps, float[2] acc, float[5,2] ys,"
    " float[10] flat) {\n"
    "  last, steps = Loop (n, , x) <body = lb (int64 i, bool c, float[2] v) => (bool c2, float[2] w, float[2] o) {\n"
    "    c2 = Identity (c)\n"
    "    h = Constant <value = float {0.5}> ()\n"
    "    w = Mul (v, h)\n"
    "    o = Neg (v)\n"
    "  }>\n"
    "  acc, ys = Scan (x, xs) <num_scan_inputs = 1, body = sb (float[2] s, float[2] r) => (float[2] s2, float[2] y) {\n"
    "    s2 = Add (s, r)\n"
    "    y = Mul (s2, r)\n"
    "  }>\n"
    "  parts = SplitToSequence <axis = 0, keepdims = 0> (xs)\n"
    "  mapped = SequenceMap <body = mb (float[2] e) => (float[2] f) { f = Sigmoid (e) }> (parts)\n"
    "  flat = ConcatFromSequence <axis = 0> (mapped)\n"
    "}\n";

static bool same_outputs(ol_value **a, ol_value **b, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (!same_bits(a[i], b[i])) return false;
  return true;
}

static void release_outputs(ol_value **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ol_value_release(v[i]);
    v[i] = NULL;
  }
}

/* Walks every allocation failure of one run of the CONTROL model (session s
 * on allocator a) and compares the run that finally succeeds with a run
 * without failures. */
static void walk_run(ol_session *s, ol_allocator *a, const char *const *names, ol_value *const *feeds,
                     size_t n_feeds) {
  ol_value *want[5] = {0}, *got[5] = {0};
  CHECK_OK(ol_session_run(s, names, feeds, n_feeds, NULL, want, 5, NULL));
  CHECK(want[1] && ol_tensor_dims(want[1])[0] == 20);
  uint64_t baseline = live_bytes(a); /* the reference outputs */
  int64_t k = 0;
  for (; k < 100000; k++) {
    ol_clear_error();
    ol_allocator_fail_after(a, k);
    ol_status st = ol_session_run(s, names, feeds, n_feeds, NULL, got, 5, NULL);
    ol_allocator_fail_after(a, -1);
    if (st == OL_OK || !failed_cleanly(st, got[0], a, baseline, k)) break;
  }
  if (got[0]) fprintf(stderr, "  Loop, Scan, SequenceMap: %lld allocation points, each failure clean\n", (long long)k);
  CHECK(same_outputs(got, want, 5));
  release_outputs(got, 5);
  release_outputs(want, 5);
}

static void control_flow_survives_every_allocation_failure(void) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(CONTROL, &m));
  ol_allocator *a = NULL;
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
  ol_session_options o;
  ol_session_options_init(&o);
  o.allocator = a;
  ol_session *s = NULL;
  if (m) CHECK_OK(ol_session_create(m, &o, &s));
  int64_t one[1] = {2}, many[2] = {5, 2};
  ol_value *feeds[3] = {NULL, NULL, NULL};
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, NULL, 0, &feeds[0]));
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, one, 1, &feeds[1]));
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, many, 2, &feeds[2]));
  if (s && feeds[0] && feeds[1] && feeds[2]) {
    *(int64_t *)ol_tensor_data(feeds[0]) = 20; /* 20 scan rows: the first buffer holds 16 */
    float *x = ol_tensor_data(feeds[1]), *xs = ol_tensor_data(feeds[2]);
    x[0] = 1.5f, x[1] = -2.0f;
    for (int i = 0; i < 10; i++) xs[i] = sinf((float)i);
    const char *names[3] = {"n", "x", "xs"};
    walk_run(s, a, names, feeds, 3);
  }
  for (int i = 0; i < 3; i++) ol_value_release(feeds[i]);
  ol_session_destroy(s);
  CHECK(live_bytes(a) == 0);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
}

OL_TEST_MAIN(TEST(decode_steps_survive_every_allocation_failure), TEST(control_flow_survives_every_allocation_failure))
