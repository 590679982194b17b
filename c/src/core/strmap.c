#include "strmap.h"

#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static uint64_t hash_string(const char *s) {
  uint64_t h = 1469598103934665603ull; /* FNV-1a */
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

void ol_strmap_init(ol_strmap *map) { memset(map, 0, sizeof *map); }

void ol_strmap_free(ol_strmap *map) {
  free(map->keys);
  free(map->values);
  memset(map, 0, sizeof *map);
}

static size_t find_slot(const ol_strmap *map, const char *key) {
  size_t mask = map->capacity - 1;
  size_t i = (size_t)hash_string(key) & mask;
  while (map->keys[i] && strcmp(map->keys[i], key) != 0) i = (i + 1) & mask;
  return i;
}

static ol_status grow(ol_strmap *map) {
  size_t capacity = map->capacity ? map->capacity * 2 : 16;
  ol_strmap bigger = {ol_xcalloc(capacity, sizeof(char *)), ol_xcalloc(capacity, sizeof(int32_t)),
                      capacity, 0};
  if (!bigger.keys || !bigger.values) {
    free(bigger.keys);
    free(bigger.values);
    return OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < map->capacity; i++)
    if (map->keys[i]) {
      size_t j = find_slot(&bigger, map->keys[i]);
      bigger.keys[j] = map->keys[i];
      bigger.values[j] = map->values[i];
      bigger.count++;
    }
  ol_strmap_free(map);
  *map = bigger;
  return OL_OK;
}

ol_status ol_strmap_put(ol_strmap *map, const char *key, int32_t value) {
  if ((map->count + 1) * 2 > map->capacity) {
    ol_status s = grow(map);
    if (s != OL_OK) return s;
  }
  size_t i = find_slot(map, key);
  if (!map->keys[i]) {
    map->keys[i] = key;
    map->count++;
  }
  map->values[i] = value;
  return OL_OK;
}

int32_t ol_strmap_get(const ol_strmap *map, const char *key) {
  if (!map->capacity) return -1;
  size_t i = find_slot(map, key);
  return map->keys[i] ? map->values[i] : -1;
}
