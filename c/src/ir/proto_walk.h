/* A generic walk over an unpacked protobuf-c message tree: every message of
 * one type reachable through message fields (repeated, optional and oneof)
 * is handed to a callback, parents before children. It lets code find
 * every StructTypeProto of a model (type_ref uses: in value types, encoded
 * initializers, attributes, decoder functions, nested struct fields) without
 * one hand-written traversal per message kind that could miss a place.
 * Trees come from unpacks whose nesting was bounded (ir/proto_depth.h), so
 * the recursion is bounded too. */
#ifndef OL_IR_PROTO_WALK_H
#define OL_IR_PROTO_WALK_H
#include <protobuf-c/protobuf-c.h>

#include "core/status.h"

/* Called for each message of the target type; a status other than OL_OK
 * stops the walk and is returned. */
typedef ol_status (*ol_proto_visit_fn)(void *user, ProtobufCMessage *message);

/* Visits msg itself when it has the target type, then its descendants. */
ol_status ol_proto_walk(ProtobufCMessage *msg, const ProtobufCMessageDescriptor *target, ol_proto_visit_fn visit,
                        void *user);

#endif
