/* Neural-network layers: convolutions and pools (nn_conv.c), normalizations,
 * Softmax/LogSoftmax, LRN (nn.c), Einsum (nn_einsum.c), Resize/Upsample
 * (resize.c); shape functions in infer.c. */
#ifndef OL_OPS_NN_H
#define OL_OPS_NN_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_nn[];
extern const ol_op_schema ol_schema_resize[];

/* nn_conv.c */
ol_status ol_nn_conv_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_conv_transpose_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_maxpool_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_avgpool_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_lppool_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_global_avgpool_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_global_maxpool_create(const ol_node *node, ol_kernel **out);
ol_status ol_nn_global_lppool_create(const ol_node *node, ol_kernel **out);
/* nn_einsum.c */
ol_status ol_nn_einsum_create(const ol_node *node, ol_kernel **out);

/* infer.c */
ol_status ol_infer_conv(ol_infer_ctx *ctx);
ol_status ol_infer_conv_transpose(ol_infer_ctx *ctx);
ol_status ol_infer_pool(ol_infer_ctx *ctx);
ol_status ol_infer_global_pool(ol_infer_ctx *ctx);
ol_status ol_infer_layer_norm(ol_infer_ctx *ctx);
ol_status ol_infer_resize(ol_infer_ctx *ctx);
/* Conv-shaped output 0 of x and w with element type dtype (also ConvInteger's, QLinearConv's). */
ol_status ol_infer_conv_shape(ol_infer_ctx *ctx, const ol_infer_type *x, const ol_infer_type *w, ol_dtype dtype);

#endif
