/* The intra-op thread pool (see pool.h).
 *
 * Each worker has its own job counter: the caller bumps the counters of the
 * workers it picked, runs tasks itself, then waits until those workers have
 * left the job. Tasks are claimed from one shared counter, so a slow worker
 * only means others (or the caller) take more of them, and a worker must
 * accept its hand-over before running anything: when the caller has run out
 * of tasks it withdraws the offers not yet accepted, so it never waits for a
 * worker the OS has not scheduled yet (machines with more busy threads than
 * cores). Workers that are not running yet are never picked, so a worker
 * that cannot start (a Web Worker still loading) costs speed, never a hang. */
#include "core/pool.h"

#include <stdatomic.h>

#if OL_POOL_THREADED
#include <pthread.h>
#include <time.h>
#include <unistd.h>
#ifdef __EMSCRIPTEN__
#include <emscripten/threading.h>
#endif

/* Polls for this long before sleeping: longer than the gap between two
 * kernels of a decode step, far shorter than a scheduler time slice. */
#define SPIN_NS 50000
#define STACK_BYTES (256 * 1024)

typedef struct worker {
  _Alignas(64) atomic_uint job; /* bumped by the caller to hand over a job */
  atomic_int offered;           /* 1: the job is on offer; taken by worker or withdrawn by caller */
  atomic_int running;           /* the worker loop has started */
  int slot;                     /* set with job */
  pthread_t thread;
} worker;

static struct {
  pthread_mutex_t lock; /* sleeping and waking */
  pthread_cond_t wake, done;
  pthread_mutex_t spawn_lock;
  int spawned;
  int exhausted;            /* pthread_create failed: start no more */
  atomic_int sleepers;      /* workers waiting on wake */
  atomic_int caller_asleep; /* the caller waits on done */
  atomic_int busy;          /* a parallel_for is in flight */
  atomic_int threads;       /* process default; 0: not chosen yet */
  /* the job in flight */
  ol_pool_fn fn;
  void *arg;
  int64_t n_tasks;
  _Alignas(64) atomic_llong next;
  _Alignas(64) atomic_int pending; /* picked workers still in the job */
  worker w[OL_POOL_MAX_THREADS - 1];
} P = {.lock = PTHREAD_MUTEX_INITIALIZER,
       .wake = PTHREAD_COND_INITIALIZER,
       .done = PTHREAD_COND_INITIALIZER,
       .spawn_lock = PTHREAD_MUTEX_INITIALIZER};

static _Thread_local int tl_threads;

static inline void relax(void) {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#endif
}

static int64_t now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Polls until *value != unless (returns the value seen) or SPIN_NS pass. */
static unsigned spin_while_equal(atomic_uint *value, unsigned unless) {
  unsigned v = atomic_load_explicit(value, memory_order_acquire);
  for (int64_t start = now_ns(); v == unless;) {
    for (int i = 0; i < 64 && v == unless; i++) {
      relax();
      v = atomic_load_explicit(value, memory_order_acquire);
    }
    if (v != unless || now_ns() - start > SPIN_NS) break;
  }
  return v;
}

static void spin_while_nonzero(atomic_int *value) {
  for (int64_t start = now_ns(); atomic_load_explicit(value, memory_order_acquire);) {
    for (int i = 0; i < 64 && atomic_load_explicit(value, memory_order_acquire); i++) relax();
    if (now_ns() - start > SPIN_NS) break;
  }
}

static int cores(void) {
#ifdef __EMSCRIPTEN__
  int n = emscripten_num_logical_cores();
#else
  long n = sysconf(_SC_NPROCESSORS_ONLN);
#endif
  if (n < 1) return 1;
  return n > OL_POOL_MAX_THREADS ? OL_POOL_MAX_THREADS : (int)n;
}

static void run_tasks(int slot) {
  const int64_t n = P.n_tasks;
  for (int64_t t; (t = atomic_fetch_add_explicit(&P.next, 1, memory_order_relaxed)) < n;) P.fn(P.arg, t, slot);
}

static void *worker_main(void *p) {
  worker *w = p;
  unsigned seen = atomic_load(&w->job);
  atomic_store(&w->running, 1);
  for (;;) {
    unsigned job = spin_while_equal(&w->job, seen);
    if (job == seen) {
      pthread_mutex_lock(&P.lock);
      atomic_fetch_add(&P.sleepers, 1);
      while ((job = atomic_load(&w->job)) == seen) pthread_cond_wait(&P.wake, &P.lock);
      atomic_fetch_sub(&P.sleepers, 1);
      pthread_mutex_unlock(&P.lock);
    }
    seen = job;
    if (!atomic_exchange(&w->offered, 0)) continue; /* withdrawn */
    run_tasks(w->slot);
    if (atomic_fetch_sub(&P.pending, 1) == 1 && atomic_load(&P.caller_asleep)) {
      pthread_mutex_lock(&P.lock);
      pthread_cond_signal(&P.done);
      pthread_mutex_unlock(&P.lock);
    }
  }
  return NULL;
}

static int default_threads(void) {
  int n = atomic_load(&P.threads);
  if (n) return n;
  int expected = 0;
  atomic_compare_exchange_strong(&P.threads, &expected, cores());
  return atomic_load(&P.threads);
}

void ol_pool_reserve(int threads) {
  if (threads > OL_POOL_MAX_THREADS) threads = OL_POOL_MAX_THREADS;
  pthread_mutex_lock(&P.spawn_lock);
  while (!P.exhausted && P.spawned < threads - 1) {
    worker *w = &P.w[P.spawned];
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setstacksize(&attr, STACK_BYTES);
    int failed = pthread_create(&w->thread, &attr, worker_main, w);
    pthread_attr_destroy(&attr);
    if (failed) { /* e.g. wasm: no preloaded Web Worker left */
      P.exhausted = 1;
      break;
    }
    pthread_detach(w->thread);
    P.spawned++;
  }
  pthread_mutex_unlock(&P.spawn_lock);
}

static int running_workers(void) {
  pthread_mutex_lock(&P.spawn_lock);
  int n = P.spawned;
  pthread_mutex_unlock(&P.spawn_lock);
  return n;
}

int ol_pool_threads(void) {
  int want = tl_threads ? tl_threads : default_threads();
  if (want <= 1) return 1;
  int have = 1, spawned = running_workers();
  for (int i = 0; i < spawned && have < want; i++) have += atomic_load(&P.w[i].running);
  return have;
}

int ol_pool_scope(int threads) {
  int previous = tl_threads;
  tl_threads = threads < 0 ? 0 : threads;
  return previous;
}

void ol_parallel_for(int64_t n_tasks, int threads, ol_pool_fn fn, void *arg) {
  if (n_tasks <= 0) return;
  int want = threads < OL_POOL_MAX_THREADS ? threads : OL_POOL_MAX_THREADS;
  if (want > n_tasks) want = (int)n_tasks;
  int idle = 0;
  if (want > 1 && !atomic_compare_exchange_strong(&P.busy, &idle, 1)) want = 1;
  if (want <= 1) {
    for (int64_t t = 0; t < n_tasks; t++) fn(arg, t, 0);
    return;
  }
  int spawned = running_workers();
  if (spawned < want - 1) {
    ol_pool_reserve(want);
    spawned = running_workers();
  }
  worker *picked[OL_POOL_MAX_THREADS - 1];
  int helpers = 0;
  for (int i = 0; i < spawned && helpers < want - 1; i++)
    if (atomic_load(&P.w[i].running)) picked[helpers++] = &P.w[i];
  P.fn = fn, P.arg = arg, P.n_tasks = n_tasks;
  atomic_store(&P.next, 0);
  atomic_store(&P.pending, helpers);
  for (int i = 0; i < helpers; i++) {
    picked[i]->slot = i + 1;
    atomic_store(&picked[i]->offered, 1);
    atomic_fetch_add(&picked[i]->job, 1);
  }
  if (helpers && atomic_load(&P.sleepers)) {
    pthread_mutex_lock(&P.lock);
    pthread_cond_broadcast(&P.wake);
    pthread_mutex_unlock(&P.lock);
  }
  run_tasks(0);
  for (int i = 0; i < helpers; i++)
    if (atomic_exchange(&picked[i]->offered, 0)) atomic_fetch_sub(&P.pending, 1);
  spin_while_nonzero(&P.pending);
  if (atomic_load(&P.pending)) {
    pthread_mutex_lock(&P.lock);
    atomic_store(&P.caller_asleep, 1);
    while (atomic_load(&P.pending)) pthread_cond_wait(&P.done, &P.lock);
    atomic_store(&P.caller_asleep, 0);
    pthread_mutex_unlock(&P.lock);
  }
  atomic_store(&P.busy, 0);
}

ol_status ol_set_num_threads(int threads) {
  if (threads < 1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_set_num_threads: threads must be >= 1, got %d", threads);
  if (threads > OL_POOL_MAX_THREADS)
    return ol_error(OL_INVALID_ARGUMENT, "ol_set_num_threads: threads must be <= %d, got %d",
                    OL_POOL_MAX_THREADS, threads);
  atomic_store(&P.threads, threads);
  ol_pool_reserve(threads);
  /* let the new workers reach their loop (bounded: one that cannot start
   * is simply not used) */
  for (int i = 0; i < 1000; i++) {
    int spawned = running_workers(), up = 0;
    for (int k = 0; k < spawned; k++) up += atomic_load(&P.w[k].running);
    if (up == spawned) break;
    usleep(1000);
  }
  return OL_OK;
}

int ol_get_num_threads(void) { return default_threads(); }

#else /* built without threads */

ol_status ol_set_num_threads(int threads) {
  if (threads < 1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_set_num_threads: threads must be >= 1, got %d", threads);
  return OL_OK;
}

int ol_get_num_threads(void) { return 1; }

#endif
