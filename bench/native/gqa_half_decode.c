/* Microbenchmark: one float16 GroupQueryAttention decode step over a long
 * cache, natively. Prints, per step (averaged over the timed steps), the
 * run allocator's calls, transient and held bytes (ol_allocator_stats), the
 * process's malloc calls and bytes (this binary wraps malloc/calloc/realloc,
 * so allocations that bypass the run's allocator are counted too) and the
 * time. Figures are printed, never asserted.
 *
 *   build-native/gqa_half_decode [past_tokens=2048] [steps=16] [grow=0]
 *
 * grow=1 lets the presents keep spare rows (ol_session_options.grow_outputs,
 * what the JS package turns on): fed back, each step appends in place.
 *
 * Shape: 32 query heads, 8 KV heads, head size 64 (a 2048-wide model), one
 * new token a step; present K/V are fed back as the next step's past. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "onnxlight.h"

/* ------------------------------------------------------------ malloc counting (-Wl,--wrap) */

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
static atomic_uint_fast64_t malloc_calls, malloc_bytes;

void *__wrap_malloc(size_t size) {
  atomic_fetch_add(&malloc_calls, 1);
  atomic_fetch_add(&malloc_bytes, size);
  return __real_malloc(size);
}
void *__wrap_calloc(size_t count, size_t size) {
  atomic_fetch_add(&malloc_calls, 1);
  atomic_fetch_add(&malloc_bytes, count * size);
  return __real_calloc(count, size);
}
void *__wrap_realloc(void *ptr, size_t size) {
  atomic_fetch_add(&malloc_calls, 1);
  atomic_fetch_add(&malloc_bytes, size);
  return __real_realloc(ptr, size);
}

/* ------------------------------------------------------------ the step */

enum { HEADS = 32, KV_HEADS = 8, HEAD = 64 };

static const char *MODEL =
    "<ir_version: 10, opset_import: [\"\" : 18, \"com.microsoft\" : 1]>\n"
    "gqa (float16[1,1,2048] q, float16[1,1,512] k, float16[1,1,512] v, float16[1,8,P,64] past_k,"
    " float16[1,8,P,64] past_v, int32[1] seqlens_k, int32 total)"
    " => (float16[1,1,2048] y, float16[1,8,T,64] present_k, float16[1,8,T,64] present_v) {\n"
    "  y, present_k, present_v = com.microsoft.GroupQueryAttention <num_heads: int = 32, kv_num_heads: int = 8>"
    " (q, k, v, past_k, past_v, seqlens_k, total)\n"
    "}";

static const char *const NAMES[7] = {"q", "k", "v", "past_k", "past_v", "seqlens_k", "total"};

static uint32_t rng = 12345;
static uint16_t half_random(void) {
  rng = rng * 1664525u + 1013904223u;
  /* sign, exponent 13..15 (|x| in [2^-2, 2)), random mantissa */
  return (uint16_t)(((rng >> 16) & 0x8000u) | ((13u + (rng >> 8) % 3u) << 10) | (rng & 0x3FFu));
}

static ol_value *half_tensor(ol_allocator *a, int rank, const int64_t *dims) {
  ol_value *v = NULL;
  if (ol_tensor_create(a, OL_DTYPE_FLOAT16, dims, (size_t)rank, &v) != OL_OK) return NULL;
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  uint16_t *h = ol_tensor_data(v);
  for (int64_t i = 0; i < n; i++) h[i] = half_random();
  return v;
}

static ol_value *int32_scalar(ol_allocator *a, int rank, int32_t value) {
  int64_t one = 1;
  ol_value *v = NULL;
  if (ol_tensor_create(a, OL_DTYPE_INT32, &one, (size_t)rank, &v) != OL_OK) return NULL;
  *(int32_t *)ol_tensor_data(v) = value;
  return v;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv) {
  int64_t past = argc > 1 ? atoll(argv[1]) : 2048;
  int steps = argc > 2 ? atoi(argv[2]) : 16, warmup = 2, grow = argc > 3 ? atoi(argv[3]) : 0;
  ol_allocator *alloc = NULL;
  ol_model *model = NULL;
  ol_session *session = NULL;
  ol_session_options opts;
  ol_session_options_init(&opts);
  if (ol_allocator_create(NULL, NULL, NULL, &alloc) != OL_OK || ol_model_parse_text(MODEL, &model) != OL_OK) {
    fprintf(stderr, "setup: %s\n", ol_last_error());
    return 1;
  }
  opts.allocator = alloc;
  opts.intra_op_num_threads = 1;
  opts.grow_outputs = grow != 0;
  if (ol_session_create(model, &opts, &session) != OL_OK) {
    fprintf(stderr, "session: %s\n", ol_last_error());
    return 1;
  }
  int64_t qd[3] = {1, 1, HEADS * HEAD}, kd[3] = {1, 1, KV_HEADS * HEAD}, pd[4] = {1, KV_HEADS, past, HEAD};
  ol_value *pk = half_tensor(alloc, 4, pd), *pv = half_tensor(alloc, 4, pd);
  uint64_t calls = 0, transient = 0, held = 0, mcalls = 0, mbytes = 0;
  double seconds = 0;
  for (int step = 0; step < warmup + steps; step++) {
    int64_t len = past + step;
    ol_value *in[7] = {half_tensor(alloc, 3, qd), half_tensor(alloc, 3, kd), half_tensor(alloc, 3, kd), pk, pv,
                       int32_scalar(alloc, 1, (int32_t)len), int32_scalar(alloc, 0, (int32_t)(len + 1))};
    ol_value *out[3] = {NULL, NULL, NULL};
    ol_allocator_stats before, after;
    ol_allocator_reset_peak(alloc);
    ol_allocator_get_stats(alloc, &before);
    uint64_t mc = atomic_load(&malloc_calls), mb = atomic_load(&malloc_bytes);
    double t0 = now();
    ol_status s = ol_session_run(session, NAMES, in, 7, NULL, out, 3, NULL);
    double t1 = now();
    uint64_t mc1 = atomic_load(&malloc_calls), mb1 = atomic_load(&malloc_bytes);
    ol_allocator_get_stats(alloc, &after);
    if (s != OL_OK) {
      fprintf(stderr, "step %d: %s\n", step, ol_last_error());
      return 1;
    }
    if (step >= warmup) {
      calls += after.total_allocations - before.total_allocations;
      /* held at the peak beyond what was held before, outputs included */
      transient += after.peak_bytes - (before.live_bytes + before.pooled_bytes);
      if (after.peak_bytes > held) held = after.peak_bytes;
      mcalls += mc1 - mc;
      mbytes += mb1 - mb;
      seconds += t1 - t0;
    }
    for (int i = 0; i < 7; i++)
      if (i != 3 && i != 4) ol_value_release(in[i]);
    ol_value_release(pk);
    ol_value_release(pv);
    ol_value_release(out[0]);
    pk = out[1];
    pv = out[2];
  }
  printf("float16 GroupQueryAttention decode, %d heads / %d KV heads x %d, past %lld..%lld tokens, %d steps%s:\n",
         HEADS, KV_HEADS, HEAD, (long long)(past + warmup), (long long)(past + warmup + steps - 1), steps,
         grow ? ", presents growing in place" : "");
  printf("  run allocator: %.1f calls/step, %.0f KiB/step peak above what it held before the step,"
         " %.0f KiB held at the peak (caches, outputs, pooled blocks)\n",
         (double)calls / steps, (double)transient / steps / 1024.0, (double)held / 1024.0);
  printf("  malloc:        %.1f calls/step, %.0f KiB/step\n", (double)mcalls / steps, (double)mbytes / steps / 1024.0);
  printf("  time:          %.3f ms/step\n", 1e3 * seconds / steps);
  ol_value_release(pk);
  ol_value_release(pv);
  ol_session_destroy(session);
  ol_model_destroy(model);
  ol_allocator_destroy(alloc);
  return 0;
}
