/* The allocations of a model proto that shares most of its sub-messages with
 * another model's proto (ol_model_bind_persistent through a shared graph
 * builder, the paged conversion): the patched message owns only the structs
 * it changed and the whole messages it added, recorded here and freed
 * together. */
#ifndef OL_IR_PROTO_PATCH_H
#define OL_IR_PROTO_PATCH_H
#include <stdbool.h>
#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

typedef struct ol_proto_patch {
  void **blocks; /* freed with free() */
  size_t count;
  size_t capacity;
  ProtobufCMessage **messages; /* whole unpacked trees, freed with protobuf_c_message_free_unpacked */
  size_t n_messages;
  size_t messages_capacity;
} ol_proto_patch;

/* A zeroed block owned by the patch (NULL when out of memory). */
void *ol_proto_patch_alloc(ol_proto_patch *p, size_t size);
/* A copy of size bytes at src owned by the patch. */
void *ol_proto_patch_copy(ol_proto_patch *p, const void *src, size_t size);
char *ol_proto_patch_strdup(ol_proto_patch *p, const char *s);
/* Room for n more blocks, so that the next n ol_proto_patch_adopt succeed. */
bool ol_proto_patch_reserve(ol_proto_patch *p, size_t n);
/* Takes block (from malloc) over; false (block not taken) when out of memory. */
bool ol_proto_patch_adopt(ol_proto_patch *p, void *block);
/* Takes a message tree unpacked with the default allocator over (false when out of memory). */
bool ol_proto_patch_adopt_message(ol_proto_patch *p, ProtobufCMessage *msg);
bool ol_proto_patch_owns_message(const ol_proto_patch *p, const ProtobufCMessage *msg);
/* Frees msg when the patch owns it (and forgets it); false when it does not. */
bool ol_proto_patch_free_message(ol_proto_patch *p, ProtobufCMessage *msg);
/* Frees every block and message, then p itself (p from malloc; NULL is a no-op). */
void ol_proto_patch_free(ol_proto_patch *p);

#endif
