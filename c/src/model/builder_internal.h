/* Internals of the graph builder (model/builder*.c): the builder's storage
 * and the struct-type catalogue passes used by its exports. */
#ifndef OL_MODEL_BUILDER_INTERNAL_H
#define OL_MODEL_BUILDER_INTERNAL_H
#include <stdbool.h>

#include "core/strmap.h"
#include "ir/proto_patch.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"

/* The model is one malloc-owned message tree (unpacked with the default
 * protobuf-c allocator, or built from malloc'd pieces), so appending means
 * reallocating a repeated field and removing means freeing one sub-message. */
struct ol_builder {
  Onnx__ModelProto *model; /* graph never NULL */
  ol_strmap names;         /* name -> (index << 4 | part) of its holder */
  bool names_stale;        /* indices shifted by a removal: rebuild before use */
  /* A shared builder (ol_builder_share): model and model->graph are blocks
   * of this patch, the part arrays are the builder's (malloc'd), every part
   * message is the source's unless the patch owns it (the messages the
   * builder added). NULL: the whole tree is the builder's. */
  ol_proto_patch *shared;
  /* Types kept by ol_builder_infer (NULL before the first inference). */
  struct ol_builder_inference *inference;
};

typedef struct ol_builder_inference ol_builder_inference;
void ol_builder_inference_free(ol_builder_inference *inference);
/* An edit changed value name (NULL: something any type may depend on, such
 * as an opset import): the next ol_builder_infer re-infers what reads it. */
void ol_builder_infer_touch(ol_builder *builder, const char *name);

/* Indexes b->model's names and checks its struct types (an import). */
ol_status ol_builder_index(ol_builder *b, const char *what);

/* A builder editing source (left unchanged) without copying it: it
 * shares every message of source until an edit replaces it, so weights
 * and other payloads are never copied. Used by the model passes that
 * return a model sharing the source's weights (ol_model_bind_persistent,
 * ol_model_to_paged, ol_model_with_paged_cache_initializers).
 * ol_builder_dedup_initializers refuses a shared builder. */
ol_status ol_builder_share(const Onnx__ModelProto *source, ol_builder **out);
/* The edited message of a shared builder and the patch that owns its own
 * pieces (for ol_model_from_patch, with the source's owner as base); the
 * builder is destroyed, also on failure. No struct-type compaction: the
 * catalogue is the source's. */
ol_status ol_builder_share_export(ol_builder *builder, ol_proto_patch **out_patch, Onnx__ModelProto **out_model);

/* Appends the persistent binding input_name <- output_name without the
 * declaration rules of ol_builder_add: for ol_model_bind_persistent, whose
 * contract leaves judging the bindings to the model checker (a session
 * rejects an undeclared or twice-bound input). */
ol_status ol_builder_append_binding(ol_builder *builder, const char *input_name, const char *output_name);
/* Points every node input named from (subgraphs included) at to. A shared
 * builder replaces a source node it changes by a renamed copy, at the same
 * position. */
ol_status ol_builder_rename_uses(ol_builder *builder, const char *from, const char *to);

/* ol_builder_add_at with a message unpacked by the default allocator
 * (owned by the builder from then on, freed on failure). */
ol_status ol_builder_insert_message(ol_builder *builder, ol_builder_part part, ProtobufCMessage *msg, size_t index);
/* ol_builder_add_at with the part given as a message (serialized and
 * copied: msg stays the caller's). */
ol_status ol_builder_add_copy(ol_builder *builder, ol_builder_part part, const ProtobufCMessage *msg, size_t index);
/* ol_builder_remove of the part at index (< its count): for parts a key
 * does not single out, such as nodes without a name. */
ol_status ol_builder_remove_at(ol_builder *builder, ol_builder_part part, size_t index);

/* The parts of a kind in model, and one of them. */
size_t ol_builder_part_count(const Onnx__ModelProto *model, ol_builder_part part);
ProtobufCMessage *ol_builder_part_item(const Onnx__ModelProto *model, ol_builder_part part, size_t index);

/* The array of a part's repeated field, and replacing it (count unchanged). */
ProtobufCMessage **ol_builder_part_items(const Onnx__ModelProto *model, ol_builder_part part);
void ol_builder_set_part_items(Onnx__ModelProto *model, ol_builder_part part, ProtobufCMessage **items);

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
