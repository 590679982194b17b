/* Reductions: ReduceSum/Mean/Max/Min/Prod/L1/L2/LogSum/LogSumExp/SumSquare
 * (reduce.c; their shape function, shared with ArgMax/ArgMin, in infer.c). */
#ifndef OL_OPS_REDUCE_H
#define OL_OPS_REDUCE_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_reduce[];

/* Reductions and ArgMax/ArgMin: axes (attribute or input, by opset), keepdims. */
ol_status ol_infer_reduce(ol_infer_ctx *ctx);

#endif
