/* Counting allocators. Every runtime allocation goes through one. */
#ifndef OL_CORE_ALLOC_H
#define OL_CORE_ALLOC_H
#include <stddef.h>
#include <stdint.h>
#include "onnxlight.h"

struct ol_allocator {
  void *(*alloc_fn)(void *user, size_t size);
  void (*free_fn)(void *user, void *ptr);
  void *user;
  ol_allocator_stats stats;
  int64_t fail_after; /* < 0: never fail */
};

/* Statistics change from several threads at once (kernel workers, outputs
 * released while a run goes on): counted atomically. */
static inline void ol_stat_add(uint64_t *counter, uint64_t n) { __atomic_fetch_add(counter, n, __ATOMIC_RELAXED); }
static inline void ol_stat_sub(uint64_t *counter, uint64_t n) { __atomic_fetch_sub(counter, n, __ATOMIC_RELAXED); }

/* Returns 16-byte aligned memory or NULL (and sets OL_OUT_OF_MEMORY). */
void *ol_alloc(ol_allocator *allocator, size_t size);
void *ol_calloc(ol_allocator *allocator, size_t count, size_t size);
/* Frees ptr, or keeps it for reuse when a run's payload pool is active on
 * this thread (core/payload_pool.h). */
void ol_dealloc(ol_allocator *allocator, void *ptr);
/* Frees ptr to allocator (not NULL), bypassing any payload pool. */
void ol_dealloc_direct(ol_allocator *allocator, void *ptr);
/* The capacity of a block from ol_alloc: its size, or the size class it was
 * rounded up to (at least the size asked for). */
size_t ol_alloc_capacity(const void *ptr);

/* Small bookkeeping allocations (structs, arrays of pointers) that are not
 * tensor payloads: malloc with an error message on failure. */
void *ol_xmalloc(size_t size);
void *ol_xcalloc(size_t count, size_t size);
char *ol_strdup(const char *text);

#endif
