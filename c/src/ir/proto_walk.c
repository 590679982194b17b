/* Generic message walk (see proto_walk.h). */
#include "ir/proto_walk.h"

#include <stdint.h>

/* The sub-message pointers a field holds: *count of them at *items (a
 * singular field is a one-element array). */
static ProtobufCMessage **field_messages(ProtobufCMessage *msg, const ProtobufCFieldDescriptor *f, size_t *count) {
  char *base = (char *)msg;
  if (f->label == PROTOBUF_C_LABEL_REPEATED) {
    *count = *(size_t *)(base + f->quantifier_offset);
    return *(ProtobufCMessage ***)(base + f->offset);
  }
  if (f->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) {
    uint32_t which = *(uint32_t *)(base + f->quantifier_offset);
    if (which != f->id) {
      *count = 0;
      return NULL;
    }
  }
  ProtobufCMessage **slot = (ProtobufCMessage **)(base + f->offset);
  *count = *slot ? 1 : 0;
  return slot;
}

ol_status ol_proto_walk(ProtobufCMessage *msg, const ProtobufCMessageDescriptor *target, ol_proto_visit_fn visit,
                        void *user) {
  if (!msg) return OL_OK;
  if (msg->descriptor == target) OL_TRY(visit(user, msg));
  const ProtobufCMessageDescriptor *d = msg->descriptor;
  for (unsigned i = 0; i < d->n_fields; i++) {
    const ProtobufCFieldDescriptor *f = &d->fields[i];
    if (f->type != PROTOBUF_C_TYPE_MESSAGE) continue;
    size_t count = 0;
    ProtobufCMessage **items = field_messages(msg, f, &count);
    for (size_t k = 0; k < count; k++) OL_TRY(ol_proto_walk(items[k], target, visit, user));
  }
  return OL_OK;
}
