/* Payload reuse across runs: blocks released during a run are kept in a pool
 * and handed out again for later requests of about the same size, so that a
 * decode loop whose shapes are stable (or grow slowly) stops calling the
 * allocator after its first step.
 *
 * A pool belongs to a session. While a run is in progress, the pool is
 * the running thread's pool for the session's allocator: ol_alloc takes from
 * it, ol_dealloc gives to it (core/alloc.c), and a buffer allocated then
 * remembers the pool (ol_buffer.pool), so that an output the caller releases
 * between runs comes back too. Only blocks whose buffer was released
 * (refcount zero) ever arrive there, so no live value can see a reused
 * block. Kernel worker threads have no pool: they allocate and free as
 * before. The pool is reference counted: an output released after its
 * session is gone finds it closed and frees its block to the allocator. At
 * the end of a run the pool frees what that run did not reuse, so it holds
 * at most what one run (and the outputs released after it) gave back. */
#ifndef OL_CORE_PAYLOAD_POOL_H
#define OL_CORE_PAYLOAD_POOL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"

typedef struct ol_payload_pool ol_payload_pool;

/* A pool for blocks of allocator (NULL on out of memory). */
ol_payload_pool *ol_payload_pool_create(ol_allocator *allocator);
/* Frees every held block; the pool must not be in use. */
void ol_payload_pool_destroy(ol_payload_pool *pool);

/* One run's use of a pool (see ol_payload_pool_enter). */
typedef struct ol_payload_pool_scope {
  ol_payload_pool *pool;  /* NULL: this scope did not activate a pool */
  ol_payload_pool *outer; /* the thread's pool before it */
} ol_payload_pool_scope;

/* Makes pool the calling thread's pool while a run is in progress. Does
 * nothing (the run allocates as usual) when pool is NULL, is already in use
 * (a nested or concurrent run of the same session) or belongs to another
 * allocator than the run's. */
ol_payload_pool_scope ol_payload_pool_enter(ol_payload_pool *pool, ol_allocator *allocator);
/* Ends the scope: frees the blocks the run did not reuse, restores the outer pool. */
void ol_payload_pool_leave(ol_payload_pool_scope scope);

/* ---- hooks of ol_alloc / ol_dealloc (core/alloc.c) */

/* A held block of at least size bytes for allocator a from the thread's
 * active pool, counted live again; NULL when there is none. */
void *ol_payload_pool_take(ol_allocator *a, size_t size);
/* The capacity to allocate for size bytes: rounded up to the pool's size
 * class while a pool for a is active (so that a slightly larger request of
 * a later run still fits), size otherwise. */
size_t ol_payload_pool_capacity(ol_allocator *a, size_t size);
/* Keeps a released block of a in the thread's active pool (true) or leaves
 * it to the caller to free (false). */
bool ol_payload_pool_give(ol_allocator *a, void *ptr);

/* ---- buffers (core/value.c) */

/* The thread's active pool for allocator a, with a reference for a buffer
 * allocated now (NULL: none). */
ol_payload_pool *ol_payload_pool_adopt(ol_allocator *a);
/* A released buffer's block back to the pool that handed it out (held, or
 * freed when the pool is closed), dropping the buffer's reference. */
void ol_payload_pool_return(ol_payload_pool *pool, void *ptr);

#endif
