#include "fuzz_util.h"

#include <malloc.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ------------------------------------------------------------ budget allocator */

static atomic_size_t budget_used;

static void *budget_alloc(void *user, size_t size) {
  (void)user;
  if (size > FUZZ_BUDGET_BYTES || atomic_fetch_add(&budget_used, size) + size > FUZZ_BUDGET_BYTES) {
    if (size <= FUZZ_BUDGET_BYTES) atomic_fetch_sub(&budget_used, size);
    return NULL;
  }
  void *p = malloc(size);
  if (!p) {
    atomic_fetch_sub(&budget_used, size);
    return NULL;
  }
  /* count what malloc really reserved, so the free below matches */
  size_t usable = malloc_usable_size(p);
  atomic_fetch_add(&budget_used, usable - size);
  return p;
}

static void budget_free(void *user, void *ptr) {
  (void)user;
  if (!ptr) return;
  atomic_fetch_sub(&budget_used, malloc_usable_size(ptr));
  free(ptr);
}

ol_allocator *fuzz_allocator(void) {
  static ol_allocator *allocator;
  if (!allocator && ol_allocator_create(budget_alloc, budget_free, NULL, &allocator) != OL_OK) abort();
  return allocator;
}

/* ------------------------------------------------------------ watchdog */

static pthread_mutex_t watch_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t watch_changed = PTHREAD_COND_INITIALIZER;
static ol_completion *watched;
static struct timespec watch_deadline;
static bool watch_started;

static void *watchdog(void *unused) {
  (void)unused;
  pthread_mutex_lock(&watch_lock);
  for (;;) {
    if (!watched) {
      pthread_cond_wait(&watch_changed, &watch_lock);
      continue;
    }
    ol_completion *current = watched;
    if (pthread_cond_timedwait(&watch_changed, &watch_lock, &watch_deadline) != 0 && watched == current) {
      ol_completion_cancel(current, "fuzz run time limit");
      watched = NULL;
    }
  }
  return NULL;
}

void fuzz_watch_begin(ol_completion *completion) {
  pthread_mutex_lock(&watch_lock);
  if (!watch_started) {
    pthread_t thread;
    if (pthread_create(&thread, NULL, watchdog, NULL) != 0) abort();
    pthread_detach(thread);
    watch_started = true;
  }
  clock_gettime(CLOCK_REALTIME, &watch_deadline);
  watch_deadline.tv_sec += FUZZ_RUN_MILLISECONDS / 1000;
  watch_deadline.tv_nsec += (long)(FUZZ_RUN_MILLISECONDS % 1000) * 1000000L;
  if (watch_deadline.tv_nsec >= 1000000000L) {
    watch_deadline.tv_sec++;
    watch_deadline.tv_nsec -= 1000000000L;
  }
  watched = completion;
  pthread_cond_signal(&watch_changed);
  pthread_mutex_unlock(&watch_lock);
}

void fuzz_watch_end(void) {
  pthread_mutex_lock(&watch_lock);
  watched = NULL;
  pthread_cond_signal(&watch_changed);
  pthread_mutex_unlock(&watch_lock);
}

/* ------------------------------------------------------------ feeds */

fuzz_rng fuzz_rng_from(const uint8_t *data, size_t size) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (size_t i = 0; i < size; i++) h = (h ^ data[i]) * 1099511628211ull;
  fuzz_rng r = {h | 1};
  return r;
}

uint64_t fuzz_next(fuzz_rng *rng) {
  uint64_t x = rng->state;
  x ^= x << 13;
  x ^= x >> 7;
  x ^= x << 17;
  return rng->state = x;
}

/* Small values (indices, shapes and axes stay meaningful), zeros half the time. */
static void fill(ol_value *v, bool zeros, fuzz_rng *rng) {
  ol_dtype dtype = ol_tensor_dtype(v);
  int64_t n = ol_tensor_element_count(v);
  if (dtype == OL_DTYPE_STRING) {
    static const char *const words[4] = {"", "a", "hello", "\xc3\xa9t\xc3\xa9"};
    for (int64_t i = 0; i < n; i++) {
      const char *w = zeros ? "" : words[fuzz_next(rng) % 4];
      if (ol_tensor_set_string(v, (size_t)i, w, strlen(w)) != OL_OK) return;
    }
    return;
  }
  if (zeros) return; /* created zeroed */
  uint8_t *data = ol_tensor_data(v);
  size_t bytes = ol_tensor_byte_size(v);
  static const float floats[8] = {0.0f, 1.0f, -1.0f, 0.5f, 2.0f, -3.0f, 0.25f, 7.0f};
  for (int64_t i = 0; i < n; i++) {
    uint64_t r = fuzz_next(rng);
    switch (dtype) {
      case OL_DTYPE_FLOAT: ((float *)data)[i] = floats[r % 8]; break;
      case OL_DTYPE_DOUBLE: ((double *)data)[i] = floats[r % 8]; break;
      case OL_DTYPE_INT64: ((int64_t *)data)[i] = (int64_t)(r % 5) - 1; break;
      case OL_DTYPE_INT32: ((int32_t *)data)[i] = (int32_t)(r % 5) - 1; break;
      case OL_DTYPE_BOOL: data[i] = (uint8_t)(r & 1); break;
      default:
        /* other types: random bits, byte by byte */
        for (size_t b = (size_t)i * bytes / (size_t)n; b < (size_t)(i + 1) * bytes / (size_t)n; b++)
          data[b] = (uint8_t)(fuzz_next(rng) % 4);
    }
  }
}

void fuzz_run_session(ol_session *session, fuzz_rng *rng) {
  enum { MAX_IO = 64 };
  size_t n_in = ol_session_input_count(session), n_out = ol_session_output_count(session);
  if (n_in > MAX_IO || n_out > MAX_IO) return;
  const char *names[MAX_IO];
  ol_value *feeds[MAX_IO] = {0}, *outputs[MAX_IO] = {0};
  bool zeros = fuzz_next(rng) & 1, runnable = true;
  for (size_t i = 0; i < n_in && runnable; i++) {
    ol_value_info info;
    names[i] = ol_session_input_name(session, i);
    if (ol_session_input_info(session, i, &info) != OL_OK || info.kind != OL_VALUE_TENSOR ||
        info.dtype == OL_DTYPE_UNDEFINED || info.rank > 8) {
      runnable = false;
      break;
    }
    int64_t dims[8] = {1};
    int rank = info.rank < 0 ? 1 : info.rank;
    int64_t count = 1;
    for (int d = 0; d < rank; d++) {
      int64_t dim = info.rank < 0 || info.dims[d] < 0 ? (int64_t)(1 + fuzz_next(rng) % 3) : info.dims[d];
      dims[d] = dim;
      count = dim > 0 && count > FUZZ_MAX_FEED_ELEMENTS / dim ? FUZZ_MAX_FEED_ELEMENTS + 1 : count * dim;
    }
    if (count > FUZZ_MAX_FEED_ELEMENTS || ol_tensor_create(NULL, info.dtype, dims, (size_t)rank, &feeds[i]) != OL_OK) {
      runnable = false;
      break;
    }
    fill(feeds[i], zeros, rng);
  }
  if (runnable) {
    ol_completion *completion = NULL;
    if (ol_completion_create(&completion) != OL_OK) abort();
    fuzz_watch_begin(completion);
    ol_session_run(session, names, feeds, n_in, NULL, outputs, n_out, completion);
    fuzz_watch_end();
    ol_completion_destroy(completion);
  }
  for (size_t i = 0; i < MAX_IO; i++) {
    ol_value_release(feeds[i]);
    ol_value_release(outputs[i]);
  }
}
