/* Growable arrays: the one growth rule behind the hand-grown arrays of the
 * IR and model layers (name sets, type tables, patch blocks, byte buffers).
 * An array is a pointer from malloc (NULL while its capacity is 0), its
 * capacity in items, and a count of items in use, kept by the caller. */
#ifndef OL_CORE_GROW_H
#define OL_CORE_GROW_H
#include <stdbool.h>
#include <stddef.h>

/* Makes room for `need` more items after the first `count` of the array
 * whose pointer is at `items` (the address of a T *, item_size ==
 * sizeof(T)). When fewer than need are free, the array is reallocated to
 * the first capacity with room among `first` (when the capacity is 0) or
 * twice the current capacity, doubled again as often as needed; items in
 * use keep their values (they may move) and *capacity is updated. Returns
 * false, with the array and *capacity unchanged, when memory runs out or
 * the size would overflow; sets no error message (the caller names what it
 * was growing). */
bool ol_grow(void *items, size_t *capacity, size_t count, size_t need, size_t item_size, size_t first);

#endif
