/* The operator registry: (domain, op type, opset range) -> kernel factory. */
#ifndef OL_OPS_REGISTRY_H
#define OL_OPS_REGISTRY_H
#include "ops/kernel.h"

typedef struct ol_op_registration {
  const char *domain;   /* "" for the default ai.onnx domain */
  const char *op_type;
  int since_version;    /* first opset this kernel implements */
  int until_version;    /* last opset (inclusive) */
  ol_kernel_create_fn create;
  const char *dtypes;   /* documentation: "float32 float16 int64 ..." */
} ol_op_registration;

#define OL_OPSET_LATEST 23

/* Each family file defines one table ending with an all-zero row. */
extern const ol_op_registration ol_ops_elementwise[];
extern const ol_op_registration ol_ops_shape[];
extern const ol_op_registration ol_ops_tensor[];
extern const ol_op_registration ol_ops_reduce[];
extern const ol_op_registration ol_ops_matmul[];
extern const ol_op_registration ol_ops_nn[];
extern const ol_op_registration ol_ops_control[];
extern const ol_op_registration ol_ops_sequence[];
extern const ol_op_registration ol_ops_nn23[];
extern const ol_op_registration ol_ops_contrib_ms[];
extern const ol_op_registration ol_ops_attention[];
extern const ol_op_registration ol_ops_resize[];
extern const ol_op_registration ol_ops_loss[];
extern const ol_op_registration ol_ops_recurrent[];
extern const ol_op_registration ol_ops_quantize_linear[];
extern const ol_op_registration ol_ops_misc[];
extern const ol_op_registration ol_ops_signal[];
extern const ol_op_registration ol_ops_quantize_rt[]; /* ai.rt Quantize, Dequantize */

/* The kernel of a call of a model-local function (node->function_body). */
ol_status ol_function_call_create(const ol_node *node, ol_kernel **out);

/* Finds the kernel for node's (domain, op_type, opset); a clear error names
 * the domain, op type, version and node when none is registered. */
ol_status ol_registry_find(const ol_node *node, const ol_op_registration **out);

/* Iterates all registrations (for docs/operators.md). Returns NULL at the end. */
const ol_op_registration *ol_registry_at(size_t index);

#endif
