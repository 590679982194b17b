#include "alloc.h"

#include <stdlib.h>
#include <string.h>

#include "payload_pool.h"
#include "status.h"

/* Each block starts with a header holding its size, so frees update stats. */
#define OL_ALLOC_HEADER 16

static void *malloc_fn(void *user, size_t size) {
  (void)user;
  return malloc(size);
}
static void free_fn(void *user, void *ptr) {
  (void)user;
  free(ptr);
}

static ol_allocator default_allocator = {malloc_fn, free_fn, NULL, {0, 0, 0, 0, 0}, -1};

ol_allocator *ol_allocator_default(void) { return &default_allocator; }

ol_status ol_allocator_create(void *(*alloc)(void *user, size_t size),
                              void (*dealloc)(void *user, void *ptr), void *user,
                              ol_allocator **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_allocator_create: out is NULL");
  *out = NULL;
  if ((alloc == NULL) != (dealloc == NULL))
    return ol_error(OL_INVALID_ARGUMENT, "ol_allocator_create: give both functions or neither");
  ol_allocator *a = calloc(1, sizeof *a);
  if (!a) return ol_error(OL_OUT_OF_MEMORY, "ol_allocator_create: out of memory");
  a->alloc_fn = alloc ? alloc : malloc_fn;
  a->free_fn = dealloc ? dealloc : free_fn;
  a->user = user;
  a->fail_after = -1;
  *out = a;
  return OL_OK;
}

void ol_allocator_destroy(ol_allocator *allocator) {
  if (allocator && allocator != &default_allocator) free(allocator);
}

void ol_allocator_get_stats(const ol_allocator *allocator, ol_allocator_stats *out) {
  if (!out) return;
  if (!allocator) allocator = &default_allocator;
  *out = allocator->stats;
}

void ol_allocator_reset_peak(ol_allocator *allocator) {
  if (!allocator) allocator = &default_allocator;
  allocator->stats.peak_bytes = allocator->stats.live_bytes + allocator->stats.pooled_bytes;
}

void ol_allocator_fail_after(ol_allocator *allocator, int64_t count) {
  if (!allocator) allocator = &default_allocator;
  allocator->fail_after = count;
}

void *ol_alloc(ol_allocator *a, size_t size) {
  if (!a) a = &default_allocator;
  if (a->fail_after == 0) {
    ol_error(OL_OUT_OF_MEMORY, "allocation of %zu bytes refused (injected fault)", size);
    return NULL;
  }
  if (size > SIZE_MAX - OL_ALLOC_HEADER - OL_ALLOC_HEADER) {
    ol_error(OL_OUT_OF_MEMORY, "allocation of %zu bytes is too large", size);
    return NULL;
  }
  /* a block a run released earlier counts as an allocation for fault
   * injection, so the Nth-allocation failure lands where it always did */
  unsigned char *reused = ol_payload_pool_take(a, size);
  if (reused) {
    if (a->fail_after > 0) a->fail_after--;
    return reused;
  }
  size = ol_payload_pool_capacity(a, size);
  unsigned char *block = a->alloc_fn(a->user, size + OL_ALLOC_HEADER);
  if (!block) {
    ol_error(OL_OUT_OF_MEMORY, "out of memory allocating %zu bytes", size);
    return NULL;
  }
  if (a->fail_after > 0) a->fail_after--;
  memcpy(block, &size, sizeof size);
  ol_stat_add(&a->stats.live_bytes, size);
  ol_stat_add(&a->stats.live_allocations, 1);
  ol_stat_add(&a->stats.total_allocations, 1);
  uint64_t held = __atomic_load_n(&a->stats.live_bytes, __ATOMIC_RELAXED) +
                  __atomic_load_n(&a->stats.pooled_bytes, __ATOMIC_RELAXED);
  uint64_t peak = __atomic_load_n(&a->stats.peak_bytes, __ATOMIC_RELAXED);
  while (held > peak &&
         !__atomic_compare_exchange_n(&a->stats.peak_bytes, &peak, held, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED)) {
  }
  return block + OL_ALLOC_HEADER;
}

void *ol_calloc(ol_allocator *a, size_t count, size_t size) {
  if (size && count > SIZE_MAX / size) {
    ol_error(OL_OUT_OF_MEMORY, "allocation of %zu x %zu bytes overflows", count, size);
    return NULL;
  }
  void *p = ol_alloc(a, count * size);
  if (p) memset(p, 0, count * size);
  return p;
}

void *ol_realloc(ol_allocator *a, void *ptr, size_t size) {
  if (!ptr) return ol_alloc(a, size);
  size_t capacity = ol_alloc_capacity(ptr);
  if (size <= capacity) return ptr;
  void *grown = ol_alloc(a, size);
  if (!grown) return NULL;
  memcpy(grown, ptr, capacity);
  ol_dealloc(a, ptr);
  return grown;
}

void ol_dealloc(ol_allocator *a, void *ptr) {
  if (!ptr) return;
  if (!a) a = &default_allocator;
  if (!ol_payload_pool_give(a, ptr)) ol_dealloc_direct(a, ptr);
}

void ol_dealloc_direct(ol_allocator *a, void *ptr) {
  unsigned char *block = (unsigned char *)ptr - OL_ALLOC_HEADER;
  size_t size = ol_alloc_capacity(ptr);
  ol_stat_sub(&a->stats.live_bytes, size);
  ol_stat_sub(&a->stats.live_allocations, 1);
  a->free_fn(a->user, block);
}

size_t ol_alloc_capacity(const void *ptr) {
  size_t size;
  memcpy(&size, (const unsigned char *)ptr - OL_ALLOC_HEADER, sizeof size);
  return size;
}

void *ol_xmalloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) ol_error(OL_OUT_OF_MEMORY, "out of memory allocating %zu bytes", size);
  return p;
}

void *ol_xcalloc(size_t count, size_t size) {
  void *p = calloc(count ? count : 1, size ? size : 1);
  if (!p) ol_error(OL_OUT_OF_MEMORY, "out of memory allocating %zu x %zu bytes", count, size);
  return p;
}

char *ol_strdup(const char *text) {
  size_t n = strlen(text ? text : "") + 1;
  char *copy = ol_xmalloc(n);
  if (copy) memcpy(copy, text ? text : "", n);
  return copy;
}

void ol_free(void *ptr) { free(ptr); }
