/* Block list of a patched model proto (see proto_patch.h). */
#include "ir/proto_patch.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/grow.h"

bool ol_proto_patch_reserve(ol_proto_patch *p, size_t n) {
  return ol_grow(&p->blocks, &p->capacity, p->count, n, sizeof *p->blocks, 16);
}

bool ol_proto_patch_adopt(ol_proto_patch *p, void *block) {
  if (!ol_proto_patch_reserve(p, 1)) return false;
  p->blocks[p->count++] = block;
  return true;
}

void *ol_proto_patch_alloc(ol_proto_patch *p, size_t size) {
  if (!ol_proto_patch_reserve(p, 1)) return NULL;
  void *block = ol_xcalloc(1, size ? size : 1);
  if (block) p->blocks[p->count++] = block;
  return block;
}

bool ol_proto_patch_adopt_message(ol_proto_patch *p, ProtobufCMessage *msg) {
  if (!ol_grow(&p->messages, &p->messages_capacity, p->n_messages, 1, sizeof *p->messages, 8)) return false;
  p->messages[p->n_messages++] = msg;
  return true;
}

bool ol_proto_patch_owns_message(const ol_proto_patch *p, const ProtobufCMessage *msg) {
  for (size_t i = 0; i < p->n_messages; i++)
    if (p->messages[i] == msg) return true;
  return false;
}

bool ol_proto_patch_free_message(ol_proto_patch *p, ProtobufCMessage *msg) {
  for (size_t i = 0; i < p->n_messages; i++) {
    if (p->messages[i] != msg) continue;
    protobuf_c_message_free_unpacked(msg, NULL);
    p->messages[i] = p->messages[--p->n_messages];
    return true;
  }
  return false;
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
  for (size_t i = 0; i < p->n_messages; i++) protobuf_c_message_free_unpacked(p->messages[i], NULL);
  free(p->messages);
  free(p);
}
