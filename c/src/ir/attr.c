/* Attribute lookup on decoded nodes. */
#include <string.h>

#include "ir/graph.h"
#include "onnx_light.pb-c.h"

const ol_attr *ol_node_attr(const ol_node *node, const char *name) {
  for (size_t i = 0; i < node->num_attrs; i++)
    if (strcmp(node->attrs[i].name, name) == 0) return &node->attrs[i];
  return NULL;
}

int64_t ol_attr_int(const ol_node *node, const char *name, int64_t default_value) {
  const ol_attr *a = ol_node_attr(node, name);
  return a && a->type == OL_ATTR_INT ? a->i : default_value;
}

float ol_attr_float(const ol_node *node, const char *name, float default_value) {
  const ol_attr *a = ol_node_attr(node, name);
  if (a && a->type == OL_ATTR_FLOAT) return a->f;
  if (a && a->type == OL_ATTR_INT) return (float)a->i;
  return default_value;
}

const char *ol_attr_string(const ol_node *node, const char *name, const char *default_value) {
  const ol_attr *a = ol_node_attr(node, name);
  return a && a->type == OL_ATTR_STRING ? a->s : default_value;
}

/* An empty list is a valid pointer too: callers memcpy count values from it
 * (protobuf-c leaves an empty repeated field NULL, and memcpy from NULL is
 * undefined even for 0 bytes). */
static const int64_t no_ints[1];
static const float no_floats[1];

int64_t ol_attr_ints(const ol_node *node, const char *name, const int64_t **values) {
  const ol_attr *a = ol_node_attr(node, name);
  if (!a || a->type != OL_ATTR_INTS) return -1;
  *values = a->ints ? a->ints : no_ints;
  return (int64_t)a->count;
}

int64_t ol_attr_floats(const ol_node *node, const char *name, const float **values) {
  const ol_attr *a = ol_node_attr(node, name);
  if (!a || a->type != OL_ATTR_FLOATS) return -1;
  *values = a->floats ? a->floats : no_floats;
  return (int64_t)a->count;
}

ol_value *ol_attr_tensor(const ol_node *node, const char *name) {
  const ol_attr *a = ol_node_attr(node, name);
  return a && a->type == OL_ATTR_TENSOR ? a->tensor : NULL;
}

bool ol_attr_tensor_declared(const ol_node *node, const char *name, ol_dtype *dtype, int *rank, int64_t *dims) {
  const ol_attr *a = ol_node_attr(node, name);
  if (!a || a->type != OL_ATTR_TENSOR) return false;
  if (a->tensor) {
    *dtype = a->tensor->tensor.dtype, *rank = a->tensor->tensor.rank;
    for (int d = 0; d < *rank; d++) dims[d] = a->tensor->tensor.dims[d];
    return true;
  }
  const Onnx__TensorProto *t = ((const Onnx__AttributeProto *)a->proto)->t; /* unread: checked at decoding */
  if (!t || t->n_dims > OL_MAX_RANK) return false;
  *dtype = (ol_dtype)t->data_type, *rank = (int)t->n_dims;
  for (size_t d = 0; d < t->n_dims; d++) dims[d] = t->dims[d];
  return true;
}

const ol_graph *ol_attr_graph(const ol_node *node, const char *name) {
  const ol_attr *a = ol_node_attr(node, name);
  return a && a->type == OL_ATTR_GRAPH ? a->graph : NULL;
}

const ol_initializer *ol_graph_find_initializer(const ol_graph *graph, const char *name) {
  for (size_t i = 0; i < graph->num_initializers; i++)
    if (strcmp(graph->initializers[i].name, name) == 0) return &graph->initializers[i];
  return NULL;
}
