#include "payload_pool.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

/* Size classes: eight per power of two (2^o + i * 2^(o-3), i = 0..7), so
 * that rounding a request up to its class wastes at most 12.5%. A held block
 * sits in the bin of the largest class not above its capacity; a request
 * looks in the bin of the smallest class not below it and up to SLACK
 * classes above, so every block found fits, with at most about 60% to
 * spare (typically under 40%). Blocks under 16 bytes are never held (a held
 * block stores its list link in itself). */
#define MIN_BLOCK 16
#define CLASS_STEPS 8
#define NUM_CLASSES (64 * CLASS_STEPS)
#define SLACK 3
/* Decode steps grow attention scores, masks and positions by one position
 * per token: a request that outgrew the block an earlier run gave back (one
 * is held a class or two below) gets SLACK classes of headroom, so the next
 * few steps reuse it instead of allocating at every class boundary. */
#define GROWTH_CLASSES 2

typedef struct held_block {
  struct held_block *next;
  uint64_t epoch; /* the run that gave it back */
} held_block;

struct ol_payload_pool {
  ol_allocator *allocator;
  held_block *bins[NUM_CLASSES];
  size_t held_bytes, held_blocks;
  uint64_t epoch;   /* the current (or last) run */
  atomic_int busy;  /* a run uses it */
  /* The owner's reference plus one per block handed out by a run and not yet
   * back: an output released after its session is gone still finds the
   * pool, closed, and frees the block to the allocator. */
  atomic_int refs;
  bool closed;
  /* Guards the bins: outputs may come back from any thread during a run. */
  atomic_flag lock;
};

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define OL_THREAD_LOCAL /* one thread */
#else
#define OL_THREAD_LOCAL _Thread_local
#endif
/* The pool of the run in progress on this thread. Kernel worker threads have
 * none: their allocations and releases go to the allocator as before. (Why
 * this thread-local is acceptable: core/alloc.h, "Thread-local memory
 * state".) */
static OL_THREAD_LOCAL ol_payload_pool *active;

/* (the shift stays below the width of size_t: n >> 32 is undefined for a
 * 32-bit size_t and is n >> 0 in wasm, which looped forever) */
static unsigned floor_log2(size_t n) {
  unsigned o = 0;
  while (o + 1 < sizeof n * 8 && n >> (o + 1)) o++;
  return o;
}

/* The largest class whose size is <= n (n >= MIN_BLOCK). */
static unsigned class_below(size_t n) {
  unsigned o = floor_log2(n);
  size_t step = (size_t)1 << (o - 3);
  return o * CLASS_STEPS + (unsigned)((n - ((size_t)1 << o)) / step);
}

/* (UINT64_MAX past the last class: a request near the top of size_t) */
static uint64_t class_size(unsigned c) {
  unsigned o = c / CLASS_STEPS, i = c % CLASS_STEPS;
  if (o >= 64) return UINT64_MAX;
  return ((uint64_t)1 << o) + i * ((uint64_t)1 << (o - 3));
}

/* The smallest class whose size is >= n. */
static unsigned class_above(size_t n) {
  if (n < MIN_BLOCK) n = MIN_BLOCK;
  unsigned c = class_below(n);
  return class_size(c) == n ? c : c + 1;
}

static ol_payload_pool *pool_for(const ol_allocator *a) {
  ol_payload_pool *p = active;
  return p && p->allocator == a ? p : NULL;
}

/* Moves a block's bytes between the allocator's live and pooled counts. */
static void count_held(ol_allocator *a, size_t capacity, bool held) {
  if (held) {
    ol_stat_sub(&a->stats.live_bytes, capacity);
    ol_stat_sub(&a->stats.live_allocations, 1);
    ol_stat_add(&a->stats.pooled_bytes, capacity);
  } else {
    ol_stat_sub(&a->stats.pooled_bytes, capacity);
    ol_stat_add(&a->stats.live_bytes, capacity);
    ol_stat_add(&a->stats.live_allocations, 1);
  }
}

static void lock(ol_payload_pool *p) {
  while (atomic_flag_test_and_set_explicit(&p->lock, memory_order_acquire)) {
  }
}
static void unlock(ol_payload_pool *p) { atomic_flag_clear_explicit(&p->lock, memory_order_release); }

static void unref(ol_payload_pool *p) {
  if (atomic_fetch_sub(&p->refs, 1) == 1) free(p);
}

ol_payload_pool *ol_payload_pool_create(ol_allocator *allocator) {
  ol_payload_pool *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->allocator = allocator ? allocator : ol_allocator_default();
  atomic_init(&p->refs, 1);
  atomic_flag_clear(&p->lock);
  return p;
}

/* Frees the held blocks given back before run `before` (all: UINT64_MAX). */
static void trim(ol_payload_pool *p, uint64_t before) {
  for (unsigned c = 0; c < NUM_CLASSES && p->held_blocks; c++) {
    held_block **link = &p->bins[c];
    while (*link) {
      held_block *b = *link;
      if (b->epoch >= before) {
        link = &b->next;
        continue;
      }
      *link = b->next;
      size_t capacity = ol_alloc_capacity(b);
      p->held_bytes -= capacity;
      p->held_blocks--;
      count_held(p->allocator, capacity, false);
      ol_dealloc_direct(p->allocator, b);
    }
  }
}

void ol_payload_pool_destroy(ol_payload_pool *p) {
  if (!p) return;
  lock(p);
  p->closed = true;
  trim(p, UINT64_MAX);
  unlock(p);
  unref(p);
}

ol_payload_pool_scope ol_payload_pool_enter(ol_payload_pool *p, ol_allocator *allocator) {
  ol_payload_pool_scope scope = {NULL, active};
  if (!allocator) allocator = ol_allocator_default();
  if (!p || p->allocator != allocator || atomic_exchange(&p->busy, 1)) return scope;
  lock(p);
  p->epoch++;
  unlock(p);
  active = p;
  scope.pool = p;
  return scope;
}

void ol_payload_pool_leave(ol_payload_pool_scope scope) {
  ol_payload_pool *p = scope.pool;
  if (!p) return;
  /* what the run released stays for the next one; older blocks it did not
   * want go back to the allocator, so the pool never outgrows one run */
  lock(p);
  trim(p, p->epoch);
  unlock(p);
  active = scope.outer;
  atomic_store(&p->busy, 0);
}

void *ol_payload_pool_take(ol_allocator *a, size_t size) {
  ol_payload_pool *p = pool_for(a);
  if (!p || size > SIZE_MAX / 2) return NULL;
  unsigned c = class_above(size);
  lock(p);
  held_block *b = NULL;
  for (unsigned k = 0; !b && k <= SLACK && c + k < NUM_CLASSES; k++) {
    b = p->bins[c + k];
    if (b) p->bins[c + k] = b->next;
  }
  if (b) {
    size_t capacity = ol_alloc_capacity(b);
    p->held_bytes -= capacity;
    p->held_blocks--;
    count_held(a, capacity, false);
  }
  unlock(p);
  return b;
}

/* Whether a block of an earlier run sits just below class c (the request
 * likely comes from a tensor that grew since); the caller holds the lock. */
static bool outgrown(const ol_payload_pool *p, unsigned c) {
  for (unsigned k = 1; k <= GROWTH_CLASSES && k <= c; k++)
    for (const held_block *b = p->bins[c - k]; b; b = b->next)
      if (b->epoch < p->epoch) return true;
  return false;
}

size_t ol_payload_pool_capacity(ol_allocator *a, size_t size) {
  ol_payload_pool *p = pool_for(a);
  if (!p) return size;
  unsigned c = class_above(size);
  lock(p);
  if (outgrown(p, c)) c += SLACK;
  unlock(p);
  uint64_t rounded = class_size(c);
  /* (ol_alloc adds its header to what this returns) */
  return rounded <= SIZE_MAX / 2 ? (size_t)rounded : size;
}

/* Holds ptr (a block of p's allocator) for reuse; the caller holds the lock. */
static bool hold(ol_payload_pool *p, void *ptr) {
  size_t capacity = ol_alloc_capacity(ptr);
  if (p->closed || capacity < MIN_BLOCK) return false;
  held_block *b = ptr;
  unsigned c = class_below(capacity);
  b->next = p->bins[c];
  b->epoch = p->epoch;
  p->bins[c] = b;
  p->held_bytes += capacity;
  p->held_blocks++;
  count_held(p->allocator, capacity, true);
  return true;
}

bool ol_payload_pool_give(ol_allocator *a, void *ptr) {
  ol_payload_pool *p = pool_for(a);
  if (!p) return false;
  lock(p);
  bool held = hold(p, ptr);
  unlock(p);
  return held;
}

ol_payload_pool *ol_payload_pool_adopt(ol_allocator *a) {
  ol_payload_pool *p = pool_for(a ? a : ol_allocator_default());
  if (p) atomic_fetch_add(&p->refs, 1);
  return p;
}

void ol_payload_pool_return(ol_payload_pool *p, void *ptr) {
  lock(p);
  bool held = hold(p, ptr);
  if (!held) ol_dealloc_direct(p->allocator, ptr);
  unlock(p);
  unref(p);
}
