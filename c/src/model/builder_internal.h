/* Internals of the graph builder (model/builder*.c): the builder's storage
 * and the struct-type catalogue passes used by its exports. */
#ifndef OL_MODEL_BUILDER_INTERNAL_H
#define OL_MODEL_BUILDER_INTERNAL_H
#include <stdbool.h>

#include "core/strmap.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"

/* The model is one malloc-owned message tree (unpacked with the default
 * protobuf-c allocator, or built from malloc'd pieces), so appending means
 * reallocating a repeated field and removing means freeing one sub-message. */
struct ol_builder {
  Onnx__ModelProto *model; /* graph never NULL */
  ol_strmap names;         /* name -> (index << 4 | part) of its holder */
  bool names_stale;        /* indices shifted by a removal: rebuild before use */
};

/* The parts of a kind in model, and one of them. */
size_t ol_builder_part_count(const Onnx__ModelProto *model, ol_builder_part part);
ProtobufCMessage *ol_builder_part_item(const Onnx__ModelProto *model, ol_builder_part part, size_t index);

/* "graph input 'x'", "output 'y' of node 'n' (Add)" ... for messages. */
void ol_builder_part_label(const Onnx__ModelProto *model, ol_builder_part part, size_t index, char *buf,
                           size_t size);

/* A compacted and renumbered copy of model (see ol_builder_to_model), as
 * serialized bytes (malloc'd). model is not modified. */
ol_status ol_builder_export_model(const Onnx__ModelProto *model, void **out_bytes, size_t *out_size);

/* OL_FAILED_PRECONDITION naming the first graph part that holds a
 * struct_type.type_ref, else OL_OK. */
ol_status ol_builder_check_standalone(const Onnx__ModelProto *model);

#endif
