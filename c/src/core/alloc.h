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
/* Resizes a block of allocator (ptr NULL: a new one), keeping its first
 * bytes; NULL (ptr left as it was) when out of memory. */
void *ol_realloc(ol_allocator *allocator, void *ptr, size_t size);
/* Frees ptr, or keeps it for reuse when a run's payload pool is active on
 * this thread (core/payload_pool.h). */
void ol_dealloc(ol_allocator *allocator, void *ptr);
/* Frees ptr to allocator (not NULL), bypassing any payload pool. */
void ol_dealloc_direct(ol_allocator *allocator, void *ptr);
/* The capacity of a block from ol_alloc: its size, or the size class it was
 * rounded up to (at least the size asked for). */
size_t ol_alloc_capacity(const void *ptr);

/* Bookkeeping that is neither a tensor payload nor kernel scratch (structs,
 * name and attribute copies, string element bytes): malloc with an error
 * message on failure. Kernel scratch comes from the run's allocator
 * (ol_alloc) instead. */
void *ol_xmalloc(size_t size);
void *ol_xcalloc(size_t count, size_t size);
char *ol_strdup(const char *text);

/* Thread-local memory state. Besides the operator registry and the
 * thread-local error message (the only global state DESIGN.md allows), the
 * allocation layer keeps two per-thread variables. Both are acceptable for
 * the same reason: they are scopes and caches of memory, never state that a
 * result, an error or an ownership rule depends on, and no thread sees
 * another's.
 * - core/payload_pool.c `active`: the pool of the run in progress on this
 *   thread, set and restored around the run (ol_payload_pool_enter and
 *   ol_payload_pool_leave): an argument ol_alloc cannot be given through
 *   every layer.
 * - core/value.c `value_bin`, `buffer_bin`: up to 64 released ol_value and
 *   ol_buffer structs per thread, handed zeroed to the next value made on
 *   that thread and freed when it exits. They are fixed-size bookkeeping
 *   from the process allocator (ol_xcalloc: outside any counting allocator
 *   and its fault injection, like kernel objects); payloads always go to
 *   their own allocator. A recycled struct is indistinguishable from a new
 *   one: it only saves two malloc round trips per tensor. */

#endif
