/* Internals of model-level shape inference (model/infer*.c). */
#ifndef OL_MODEL_INFER_INTERNAL_H
#define OL_MODEL_INFER_INTERNAL_H
#include <stddef.h>

#include "ir/model.h"
#include "ops/schema.h"

/* A declared type (graph input/output, value_info) as an inference type. */
void ol_infer_from_declared(const ol_graph_value *declared, ol_infer_type *out);

/* Merges an inferred type with a declaration of the same value: a
 * contradiction (kind, element type, rank or a concrete dim) is an error
 * naming the value and the node; otherwise *merged gets the union (concrete
 * dims win over symbolic ones, the declared name over an inferred one). */
ol_status ol_infer_merge(const ol_node *node, const char *name, const ol_infer_type *inferred,
                         const ol_infer_type *declared, ol_infer_type *merged);

/* "float[batch,3]"-style text of a type. */
void ol_infer_type_text(const ol_infer_type *t, char *buf, size_t size);

/* Whether a type says enough to be recorded (an element type or a whole TypeProto). */
bool ol_infer_recordable(const ol_infer_type *t);

/* Records name's type in graph's value_info: replaces the type of an existing
 * entry or appends one. The graph is a malloc-owned (unpacked) message. */
ol_status ol_infer_record(Onnx__GraphProto *graph, const char *name, const ol_infer_type *t);

/* Replaces the type of one ValueInfoProto (a graph output's). */
ol_status ol_infer_record_in(Onnx__ValueInfoProto *vi, const ol_infer_type *t);

/* Infers the types of model's values without recording them, calling visit
 * (when not NULL) for every node with its inputs' types (NULL entries:
 * absent or unknown) before the node's shape function runs. */
typedef ol_status (*ol_infer_visit_fn)(void *user, const ol_node *node, const ol_infer_type *const *inputs);
ol_status ol_infer_walk(const ol_model_data *model, ol_infer_visit_fn visit, void *user);

/* Hooks of an incremental inference (the graph builder's, model/builder_infer.c),
 * called for the root graph only. seeded: each input and initializer type as
 * it is seeded. reuse: before a node runs, may fill its outputs (merged with
 * their declarations) from an earlier inference and return true, so that the
 * node's shape function does not run. store: a node's outputs (merged) after
 * it ran. */
typedef struct ol_infer_cache {
  ol_status (*seeded)(void *user, const char *name, const ol_infer_type *t);
  bool (*reuse)(void *user, const ol_node *node, ol_infer_type *outputs);
  ol_status (*store)(void *user, const ol_node *node, const ol_infer_type *outputs);
  void *user;
} ol_infer_cache;
ol_status ol_infer_walk_cached(const ol_model_data *model, const ol_infer_cache *cache);

#endif
