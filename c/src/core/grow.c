/* Growable arrays (see grow.h). */
#include "core/grow.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

bool ol_grow(void *items, size_t *capacity, size_t count, size_t need, size_t item_size, size_t first) {
  if (*capacity - count >= need) return true;
  size_t grown;
  if (*capacity == 0) grown = first ? first : 1;
  else if (*capacity > SIZE_MAX / 2) return false;
  else grown = 2 * *capacity;
  while (grown - count < need) {
    if (grown > SIZE_MAX / 2) return false;
    grown *= 2;
  }
  if (grown > SIZE_MAX / item_size) return false;
  /* the pointer is read and written as bytes: items is a T **, not a void ** */
  void *array;
  memcpy(&array, items, sizeof array);
  array = realloc(array, grown * item_size);
  if (!array) return false;
  memcpy(items, &array, sizeof array);
  *capacity = grown;
  return true;
}
