/* Elementwise operators: unary math and activations, binary and variadic
 * operators with broadcasting, comparisons and logic, Where, Clip, Cast and
 * CastLike (elementwise.c: the table and binary/variadic kernels;
 * elementwise_unary.c; elementwise_cast.c; infer.c: shape functions). */
#ifndef OL_OPS_ELEMENTWISE_H
#define OL_OPS_ELEMENTWISE_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_elementwise[];

ol_status ol_ew_unary_create(const ol_node *node, ol_kernel **out);
ol_status ol_ew_clip_create(const ol_node *node, ol_kernel **out);
ol_status ol_ew_cast_create(const ol_node *node, ol_kernel **out);
ol_status ol_ew_castlike_create(const ol_node *node, ol_kernel **out);

ol_status ol_infer_to_bool(ol_infer_ctx *ctx);
ol_status ol_infer_cast(ol_infer_ctx *ctx);
ol_status ol_infer_cast_like(ol_infer_ctx *ctx);
ol_status ol_infer_broadcasting(ol_infer_ctx *ctx);
ol_status ol_infer_where(ol_infer_ctx *ctx);

#endif
