/* A check of protobuf bytes before protobuf-c unpacks them: messages nest at
 * most OL_MAX_PROTO_DEPTH levels, graphs OL_MAX_GRAPH_DEPTH and types
 * OL_MAX_TYPE_DEPTH (core/limits.h). It walks the wire format with the
 * message descriptors, descending only into message fields (payload bytes are
 * skipped by length), so it costs a fraction of the unpack. Malformed bytes
 * pass: the unpack that follows reports them. */
#ifndef OL_IR_PROTO_DEPTH_H
#define OL_IR_PROTO_DEPTH_H
#include <protobuf-c/protobuf-c.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"

/* OL_INVALID_MODEL naming `what` ("model", "EncodedValueProto") and the
 * limit when the bytes nest too deeply, else OL_OK. */
ol_status ol_proto_check_depth(const ProtobufCMessageDescriptor *descriptor, const uint8_t *data, size_t size,
                               const char *what);

#endif
