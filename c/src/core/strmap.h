/* Open-addressing map from borrowed C strings to int32 indices. */
#ifndef OL_CORE_STRMAP_H
#define OL_CORE_STRMAP_H
#include <stddef.h>
#include <stdint.h>

#include "onnxlight.h"

typedef struct ol_strmap {
  const char **keys; /* borrowed; must outlive the map */
  int32_t *values;
  size_t capacity;   /* power of two */
  size_t count;
} ol_strmap;

void ol_strmap_init(ol_strmap *map);
void ol_strmap_free(ol_strmap *map);
/* Inserts or replaces. */
ol_status ol_strmap_put(ol_strmap *map, const char *key, int32_t value);
/* Returns -1 when absent. */
int32_t ol_strmap_get(const ol_strmap *map, const char *key);

#endif
