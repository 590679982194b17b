/* Shape functions: the type and shape of a node's outputs from its inputs'.
 *
 * An operator's shape function is part of its schema row (ops/schema.h);
 * it checks node->opset itself where the operator changed across versions
 * (attribute vs input axes). Operators without one leave their outputs
 * uninferred. model/infer.c walks the graph and calls them.
 *
 * Besides types, small integer tensors (Shape outputs, Constant values,
 * their Gather/Concat/Unsqueeze/arithmetic) carry their values ("data", as
 * ONNX's data propagation): each element concrete, a symbolic dimension name
 * or unknown. That is what lets Reshape(x, Concat(Shape(x)[0], 4, 32)) keep
 * the symbolic batch dimension. */
#ifndef OL_OPS_INFER_H
#define OL_OPS_INFER_H
#include <stdbool.h>
#include <stdint.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/status.h"
#include "ir/model.h"
#include "ir/structured.h"

/* A dimension (or a propagated integer): value >= 0 concrete; otherwise
 * symbolic when param is set, unknown when not. Propagated integers may be
 * negative: then is_value marks a concrete value. */
typedef struct ol_dim {
  int64_t value;
  const char *param; /* borrowed from the model (or the rule's node) */
  bool is_value;     /* value holds a concrete number (may be negative) */
} ol_dim;

#define OL_INFER_MAX_DATA 16

typedef struct ol_infer_type {
  bool known;          /* false: nothing is known about the value */
  ol_value_kind kind;  /* OL_VALUE_TENSOR unless proto says otherwise */
  ol_dtype dtype;      /* tensors (UNDEFINED: unknown) */
  int rank;            /* -1: unknown */
  ol_dim dims[OL_MAX_RANK];
  /* Non-tensor types recorded whole (a struct_type: Quantize's output, a
   * declared encoded value or sequence); borrowed from the model. */
  const Onnx__TypeProto *proto;
  /* Values of a small INT64/INT32/BOOL tensor of rank 0 or 1 (-1: none). */
  int data_count;
  ol_dim data[OL_INFER_MAX_DATA];
  /* An encoded initializer's message. */
  const Onnx__EncodedValueProto *encoded;
  /* A structured value's record (ir/structured.h): physical type, dims,
   * checked byte size, logical type and logical tensor shape. Copied whole
   * wherever the type is bound (subgraphs, function calls). */
  bool has_record;
  ol_struct_record record;
  /* A constant's tensor (initializer or Constant; borrowed from the model),
   * e.g. Resize's floating scales. */
  const ol_tensor *constant;
} ol_infer_type;

typedef struct ol_infer_ctx {
  const ol_node *node;
  size_t num_inputs;
  const ol_infer_type *const *inputs; /* NULL: absent or nothing known */
  size_t num_outputs;
  ol_infer_type *outputs; /* start unknown (ol_infer_unknown) */
  const ol_type_catalogue *types; /* the model's struct types (resolves type_refs) */
} ol_infer_ctx;

/* Fills ctx->outputs. Returns OL_OK leaving outputs unknown when the inputs
 * do not say enough; an error (naming the node) when they contradict the
 * operator (shapes that cannot broadcast, a Reshape to a wrong count...). */
typedef ol_status (*ol_infer_fn)(ol_infer_ctx *ctx);

/* ------------------------------------------------------------ helpers for shape functions */

void ol_infer_unknown(ol_infer_type *t);
/* A tensor type with dtype and (when rank >= 0) dims (NULL: all unknown;
 * negative concrete dims become unknown). */
void ol_infer_set_tensor(ol_infer_type *t, ol_dtype dtype, int rank, const ol_dim *dims);
static inline ol_dim ol_dim_of(int64_t value) {
  ol_dim d = {value, NULL, true};
  return d;
}
static inline ol_dim ol_dim_unknown(void) {
  ol_dim d = {-1, NULL, false};
  return d;
}
/* Two dims known to be the same extent (equal numbers or equal names). */
bool ol_dim_same(ol_dim a, ol_dim b);
/* Input i's type when its tensor type (dtype at least) is known, else NULL. */
const ol_infer_type *ol_infer_input(const ol_infer_ctx *ctx, size_t i);
/* Input i with a known rank, else NULL. */
const ol_infer_type *ol_infer_shaped(const ol_infer_ctx *ctx, size_t i);
/* Input i's constant values as doubles (FLOAT, DOUBLE, FLOAT16, BFLOAT16 or
 * integers; at most capacity), false when not a known constant. */
bool ol_infer_doubles(const ol_infer_ctx *ctx, size_t i, double *values, int *count, int capacity);
/* Input i's propagated values when all of them are concrete numbers. */
bool ol_infer_ints(const ol_infer_ctx *ctx, size_t i, int64_t *values, int *count, int capacity);
/* An error naming the node and its op type. */
ol_status ol_infer_error(const ol_infer_ctx *ctx, const char *fmt, ...) OL_PRINTF(2, 3);
/* Multidirectional broadcasting of a and b into out (out may alias a). */
ol_status ol_infer_broadcast(const ol_infer_ctx *ctx, int rank_a, const ol_dim *a, int rank_b,
                             const ol_dim *b, int *rank_out, ol_dim *out);
/* A constant tensor's type, with its values when it is a small integer tensor. */
void ol_infer_from_tensor(const ol_tensor *t, ol_infer_type *out);
/* Output 0 gets input 0's element type and shape (unary-like operators). */
ol_status ol_infer_like_input0(ol_infer_ctx *ctx);
/* Normalizes axis into [0, rank) (error naming the node when out of range). */
ol_status ol_infer_axis(const ol_infer_ctx *ctx, int64_t axis, int rank, int *out);

#endif
