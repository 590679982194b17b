/* The in-memory graph: nodes with decoded attributes, value names, and the
 * protobuf-c message they came from (kept alive by the model). */
#ifndef OL_IR_GRAPH_H
#define OL_IR_GRAPH_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/value.h"

typedef struct ol_graph ol_graph;
typedef struct ol_model_data ol_model_data;

typedef enum ol_attr_type {
  OL_ATTR_UNDEFINED = 0,
  OL_ATTR_FLOAT = 1,
  OL_ATTR_INT = 2,
  OL_ATTR_STRING = 3,
  OL_ATTR_TENSOR = 4,
  OL_ATTR_GRAPH = 5,
  OL_ATTR_SPARSE_TENSOR = 11,
  OL_ATTR_TYPE_PROTO = 13,
  OL_ATTR_FLOATS = 6,
  OL_ATTR_INTS = 7,
  OL_ATTR_STRINGS = 8,
  OL_ATTR_TENSORS = 9,
  OL_ATTR_GRAPHS = 10,
  OL_ATTR_SPARSE_TENSORS = 12,
  OL_ATTR_TYPE_PROTOS = 14,
} ol_attr_type;

typedef struct ol_attr {
  const char *name;
  ol_attr_type type;
  int64_t i;
  float f;
  char *s;          /* STRING, NUL-terminated copy */
  size_t s_length;  /* STRING byte length (may contain NUL) */
  int64_t *ints;
  float *floats;
  char **strings;
  size_t count;     /* element count of ints/floats/strings/tensors/graphs */
  ol_value *tensor; /* TENSOR (decoded once) */
  ol_value **tensors;
  ol_graph *graph;  /* GRAPH */
  ol_graph **graphs;
  const void *proto; /* the Onnx__AttributeProto (e.g. TYPE_PROTO attributes) */
} ol_attr;

typedef struct ol_node {
  const char *name;    /* may be "" */
  const char *op_type;
  const char *domain;  /* "" for ai.onnx */
  int opset;           /* version of domain imported by the model */
  size_t index;        /* position in the graph's node list */
  size_t num_inputs;
  const char **inputs; /* "" marks an omitted optional input */
  size_t num_outputs;
  const char **outputs;
  size_t num_attrs;
  ol_attr *attrs;
  const void *proto;   /* Onnx__NodeProto */
  /* A call of a model-local function: its body, specialized for this call
   * site (NULL otherwise). Runs as a subgraph. */
  struct ol_graph *function_body;
  /* The graph holding this node (its model is graph->model: kernels reach
   * the ModelProto, e.g. ModelProto.struct_types, through it). */
  const struct ol_graph *graph;
} ol_node;

/* Declared type of a graph input/output/value_info. */
typedef struct ol_type_info {
  ol_value_kind kind;
  ol_dtype dtype;      /* tensor element type (or sequence/optional element) */
  int rank;            /* -1: unknown */
  int64_t dims[OL_MAX_RANK]; /* -1: symbolic or unknown */
  const char *dim_params[OL_MAX_RANK];
  /* The Onnx__TypeProto it came from (NULL: none), kept alive by the model:
   * nested checks (struct fields, sequence elements) walk it. STRUCT kinds
   * may carry a type_ref resolved through ModelProto.struct_types. */
  const void *proto;
} ol_type_info;

typedef struct ol_graph_value {
  const char *name;
  ol_type_info type;
  bool has_type;
} ol_graph_value;

typedef struct ol_initializer {
  const char *name;
  /* decoded tensor, payload viewed in place where possible; for encoded
   * initializers an OL_VALUE_ENCODED value whose payload reads as the
   * model's Onnx__EncodedValueProto in place (it keeps the model's proto
   * alive; treat it as read-only) */
  ol_value *value;
  /* from GraphProto.encoded_initializer (they follow the tensor initializers
   * in the graph's initializer list) */
  bool encoded;
  /* from GraphProto.paged_cache_initializer (last in the list): value is a
   * paged cache (quant/paged.h) whose pages view the model's message */
  bool paged;
  /* a tensor initializer with external data that a borrowed decoding
   * (ol_model_borrow_proto) did not read: value is NULL; its data type and
   * dims (checked) are in proto */
  bool unread;
  /* encoded: the model's Onnx__EncodedValueProto; paged: its
   * Onnx__PagedCacheProto; unread: its Onnx__TensorProto; else NULL */
  const void *proto;
} ol_initializer;

/* "initializer", "encoded initializer" or "paged cache initializer". */
static inline const char *ol_initializer_kind(const ol_initializer *init) {
  return init->paged ? "paged cache initializer" : init->encoded ? "encoded initializer" : "initializer";
}

struct ol_graph {
  const char *name;
  size_t num_nodes;
  ol_node *nodes;
  size_t num_inputs;
  ol_graph_value *inputs;
  size_t num_outputs;
  ol_graph_value *outputs;
  size_t num_value_infos;
  ol_graph_value *value_infos;
  size_t num_initializers;
  ol_initializer *initializers;
  const ol_graph *parent; /* enclosing graph for subgraphs (outer-scope names) */
  const ol_model_data *model;
  const void *proto; /* Onnx__GraphProto (NULL for function bodies) */
  bool inputs_optional; /* function bodies: omitted inputs stay absent */
};

/* Attribute lookup (NULL / default when absent). */
const ol_attr *ol_node_attr(const ol_node *node, const char *name);
int64_t ol_attr_int(const ol_node *node, const char *name, int64_t default_value);
float ol_attr_float(const ol_node *node, const char *name, float default_value);
const char *ol_attr_string(const ol_node *node, const char *name, const char *default_value);
/* Returns the count, or -1 when absent; *values points into the node. */
int64_t ol_attr_ints(const ol_node *node, const char *name, const int64_t **values);
int64_t ol_attr_floats(const ol_node *node, const char *name, const float **values);
/* Borrowed tensor value (NULL when absent, or unread: external data in a
 * borrowed decoding, see ol_attr_tensor_declared). */
ol_value *ol_attr_tensor(const ol_node *node, const char *name);
/* A TENSOR attribute's declared element type and dims (decoded or unread);
 * false when absent. dims holds OL_MAX_RANK. */
bool ol_attr_tensor_declared(const ol_node *node, const char *name, ol_dtype *dtype, int *rank, int64_t *dims);
const ol_graph *ol_attr_graph(const ol_node *node, const char *name);

/* Optional input i is present (declared with a nonempty name). */
static inline bool ol_node_has_input(const ol_node *n, size_t i) {
  return i < n->num_inputs && n->inputs[i][0] != '\0';
}
static inline bool ol_node_has_output(const ol_node *n, size_t i) {
  return i < n->num_outputs && n->outputs[i][0] != '\0';
}

const ol_initializer *ol_graph_find_initializer(const ol_graph *graph, const char *name);

/* The public description of a declared graph value (views into the graph). */
static inline void ol_graph_value_info(const ol_graph_value *v, ol_value_info *out) {
  out->kind = v->type.kind;
  out->dtype = v->type.dtype;
  out->rank = v->type.rank;
  out->dims = v->type.dims;
  out->dim_params = v->type.dim_params;
}

#endif
