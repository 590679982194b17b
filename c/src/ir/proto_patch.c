/* Block list of a patched model proto (see proto_patch.h). */
#include "ir/proto_patch.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"

void *ol_proto_patch_alloc(ol_proto_patch *p, size_t size) {
  if (p->count == p->capacity) {
    size_t capacity = p->capacity ? 2 * p->capacity : 16;
    void **blocks = realloc(p->blocks, capacity * sizeof *blocks);
    if (!blocks) return NULL;
    p->blocks = blocks;
    p->capacity = capacity;
  }
  void *block = ol_xcalloc(1, size ? size : 1);
  if (block) p->blocks[p->count++] = block;
  return block;
}

void *ol_proto_patch_copy(ol_proto_patch *p, const void *src, size_t size) {
  void *block = ol_proto_patch_alloc(p, size);
  if (block && size) memcpy(block, src, size);
  return block;
}

char *ol_proto_patch_strdup(ol_proto_patch *p, const char *s) {
  return ol_proto_patch_copy(p, s, strlen(s) + 1);
}

void ol_proto_patch_free(ol_proto_patch *p) {
  if (!p) return;
  for (size_t i = 0; i < p->count; i++) free(p->blocks[i]);
  free(p->blocks);
  free(p);
}
