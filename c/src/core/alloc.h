/* Counting allocators. Every runtime allocation goes through one. */
#ifndef OL_CORE_ALLOC_H
#define OL_CORE_ALLOC_H
#include <stddef.h>
#include "onnxlight.h"

struct ol_allocator {
  void *(*alloc_fn)(void *user, size_t size);
  void (*free_fn)(void *user, void *ptr);
  void *user;
  ol_allocator_stats stats;
  int64_t fail_after; /* < 0: never fail */
};

/* Returns 16-byte aligned memory or NULL (and sets OL_OUT_OF_MEMORY). */
void *ol_alloc(ol_allocator *allocator, size_t size);
void *ol_calloc(ol_allocator *allocator, size_t count, size_t size);
void ol_dealloc(ol_allocator *allocator, void *ptr);

/* Small bookkeeping allocations (structs, arrays of pointers) that are not
 * tensor payloads: malloc with an error message on failure. */
void *ol_xmalloc(size_t size);
void *ol_xcalloc(size_t count, size_t size);
char *ol_strdup(const char *text);

#endif
