/* The intra-op thread pool: one process-wide set of persistent workers that
 * kernels hand independent tasks to with ol_parallel_for. The calling thread
 * takes part; workers spin briefly after a job, then sleep on a condition
 * variable. Tasks must write disjoint outputs, each computed by the same
 * operation sequence whichever thread runs it, so results never depend on
 * the thread count.
 *
 * The thread count is the process-wide default (ol_set_num_threads; the
 * number of cores until set) unless the calling thread opened a scope with
 * ol_pool_scope (a session's intra_op_num_threads). A parallel_for issued
 * while another one is in flight (from another thread, or nested in a task)
 * runs on its calling thread alone.
 *
 * Built without threads (wasm without -pthread) everything here is an inline
 * sequential loop. */
#ifndef OL_CORE_POOL_H
#define OL_CORE_POOL_H
#include <stdint.h>

#include "core/status.h"

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define OL_POOL_THREADED 0
#else
#define OL_POOL_THREADED 1
#endif

/* Most threads (caller included) a parallel_for uses. */
#define OL_POOL_MAX_THREADS 64

/* One task. slot in [0, threads) names the participant running it (0: the
 * caller), for per-thread scratch; two tasks never run at once on a slot. */
typedef void (*ol_pool_fn)(void *arg, int64_t task, int slot);

#if OL_POOL_THREADED

/* Runs fn(arg, t, slot) for every t in [0, n_tasks) on at most `threads`
 * threads (slot < threads), usually ol_pool_threads(), then returns. */
void ol_parallel_for(int64_t n_tasks, int threads, ol_pool_fn fn, void *arg);
/* Threads a parallel_for on this thread may use now (>= 1): the scope's or
 * the default count, at most 1 + the workers running. */
int ol_pool_threads(void);
/* Sets this thread's count (0: the process default); returns the previous
 * value, to restore when the scope ends. */
int ol_pool_scope(int threads);
/* Starts workers so that `threads` threads can take part (best effort: in
 * wasm only as many as the preloaded Web Workers allow). */
void ol_pool_reserve(int threads);

#else

static inline void ol_parallel_for(int64_t n_tasks, int threads, ol_pool_fn fn, void *arg) {
  (void)threads;
  for (int64_t t = 0; t < n_tasks; t++) fn(arg, t, 0);
}
static inline int ol_pool_threads(void) { return 1; }
static inline int ol_pool_scope(int threads) { return (void)threads, 0; }
static inline void ol_pool_reserve(int threads) { (void)threads; }

#endif

#endif
