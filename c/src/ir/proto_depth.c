#include "ir/proto_depth.h"

#include <stdbool.h>

#include "core/limits.h"
#include "onnx_light.pb-c.h"

typedef struct scan_state {
  int depth, graphs, types; /* on the current path */
  const char *what;
  ol_status status;
} scan_state;

/* Reads a varint at *p (before end); false when truncated or too long. */
static bool read_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *p < end; shift += 7) {
    uint8_t byte = *(*p)++;
    v |= (uint64_t)(byte & 0x7F) << shift;
    if (!(byte & 0x80)) {
      *out = v;
      return true;
    }
  }
  return false;
}

static bool enter(scan_state *s, const ProtobufCMessageDescriptor *d) {
  s->depth++;
  if (d == &onnx__graph_proto__descriptor) s->graphs++;
  if (d == &onnx__type_proto__descriptor) s->types++;
  if (s->graphs > OL_MAX_GRAPH_DEPTH)
    s->status = ol_error(OL_INVALID_MODEL, "%s nests graphs deeper than %d levels (graph attributes inside graphs)",
                         s->what, OL_MAX_GRAPH_DEPTH);
  else if (s->types > OL_MAX_TYPE_DEPTH)
    s->status = ol_error(OL_INVALID_MODEL,
                         "%s nests types deeper than %d levels (sequence, optional, map or struct types)", s->what,
                         OL_MAX_TYPE_DEPTH);
  else if (s->depth > OL_MAX_PROTO_DEPTH)
    s->status = ol_error(OL_INVALID_MODEL, "%s nests protobuf messages deeper than %d levels", s->what,
                         OL_MAX_PROTO_DEPTH);
  return s->status == OL_OK;
}

static void leave(scan_state *s, const ProtobufCMessageDescriptor *d) {
  s->depth--;
  if (d == &onnx__graph_proto__descriptor) s->graphs--;
  if (d == &onnx__type_proto__descriptor) s->types--;
}

/* Scans one message's fields; false when a limit was passed (s->status).
 * Recursion is bounded by the limits checked on entry. */
static bool scan(scan_state *s, const ProtobufCMessageDescriptor *d, const uint8_t *p, const uint8_t *end) {
  if (!enter(s, d)) return false;
  while (p < end) {
    uint64_t tag, len;
    if (!read_varint(&p, end, &tag)) break;
    switch (tag & 7) {
      case 0:
        if (!read_varint(&p, end, &len)) goto done;
        break;
      case 1:
        if (end - p < 8) goto done;
        p += 8;
        break;
      case 5:
        if (end - p < 4) goto done;
        p += 4;
        break;
      case 2: {
        if (!read_varint(&p, end, &len) || len > (uint64_t)(end - p)) goto done;
        uint64_t number = tag >> 3;
        const ProtobufCFieldDescriptor *f =
            number <= UINT32_MAX ? protobuf_c_message_descriptor_get_field(d, (unsigned)number) : NULL;
        if (f && f->type == PROTOBUF_C_TYPE_MESSAGE && !scan(s, f->descriptor, p, p + len)) return false;
        p += len;
        break;
      }
      default:
        goto done; /* groups and invalid wire types: protobuf-c refuses them */
    }
  }
done:
  leave(s, d);
  return true;
}

ol_status ol_proto_check_depth(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data, size_t size,
                               const char *what) {
  scan_state s = {0, 0, 0, what, OL_OK};
  if (data && size) scan(&s, descriptor, data, data + size);
  return s.status;
}
