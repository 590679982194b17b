/* The allocations of a model proto that shares most of its sub-messages with
 * another model's proto (ol_model_bind_persistent): the patched message owns
 * only the structs it changed, recorded here and freed together. */
#ifndef OL_IR_PROTO_PATCH_H
#define OL_IR_PROTO_PATCH_H
#include <stddef.h>

typedef struct ol_proto_patch {
  void **blocks;
  size_t count;
  size_t capacity;
} ol_proto_patch;

/* A zeroed block owned by the patch (NULL when out of memory). */
void *ol_proto_patch_alloc(ol_proto_patch *p, size_t size);
/* A copy of size bytes at src owned by the patch. */
void *ol_proto_patch_copy(ol_proto_patch *p, const void *src, size_t size);
char *ol_proto_patch_strdup(ol_proto_patch *p, const char *s);
/* Frees every block, then p itself (p from malloc; NULL is a no-op). */
void ol_proto_patch_free(ol_proto_patch *p);

#endif
