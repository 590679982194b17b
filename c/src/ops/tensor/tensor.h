/* Tensor and shape operators: Identity, Constant*, Shape/Size, Reshape,
 * Flatten, (Un)Squeeze, Concat, Split, Slice, Pad, Tile, Expand, Transpose,
 * Gather/Scatter families, Range, EyeLike, Trilu, OneHot, NonZero,
 * Unique, CumSum, TopK, ArgMax/ArgMin, Hardmax, DepthToSpace/SpaceToDepth
 * (shape.c, shape_gen.c, tensor.c, tensor_index.c, tensor_sort.c; shape
 * functions in infer.c and infer_index.c). */
#ifndef OL_OPS_TENSOR_H
#define OL_OPS_TENSOR_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_shape[];
extern const ol_op_schema ol_schema_tensor[];

/* shape_gen.c */
ol_status ol_shape_range_create(const ol_node *node, ol_kernel **out);
ol_status ol_shape_eyelike_create(const ol_node *node, ol_kernel **out);
ol_status ol_shape_trilu_create(const ol_node *node, ol_kernel **out);
ol_status ol_shape_onehot_create(const ol_node *node, ol_kernel **out);
ol_status ol_shape_nonzero_create(const ol_node *node, ol_kernel **out);
/* tensor_index.c */
ol_status ol_tensor_gather_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_gather_elements_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_gather_nd_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_scatter_nd_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_scatter_elements_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_compress_create(const ol_node *node, ol_kernel **out);
/* tensor_sort.c */
ol_status ol_tensor_unique_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_cumsum_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_topk_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_argmax_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_argmin_create(const ol_node *node, ol_kernel **out);
ol_status ol_tensor_hardmax_create(const ol_node *node, ol_kernel **out);

/* infer.c */
ol_status ol_infer_identity(ol_infer_ctx *ctx);
ol_status ol_infer_dropout(ol_infer_ctx *ctx);
ol_status ol_infer_constant(ol_infer_ctx *ctx);
ol_status ol_infer_constant_of_shape(ol_infer_ctx *ctx);
ol_status ol_infer_shape(ol_infer_ctx *ctx);
ol_status ol_infer_size(ol_infer_ctx *ctx);
ol_status ol_infer_reshape(ol_infer_ctx *ctx);
ol_status ol_infer_flatten(ol_infer_ctx *ctx);
ol_status ol_infer_unsqueeze(ol_infer_ctx *ctx);
ol_status ol_infer_squeeze(ol_infer_ctx *ctx);
ol_status ol_infer_concat(ol_infer_ctx *ctx);
ol_status ol_infer_gather(ol_infer_ctx *ctx);
ol_status ol_infer_transpose(ol_infer_ctx *ctx);
ol_status ol_infer_expand(ol_infer_ctx *ctx);
ol_status ol_infer_range(ol_infer_ctx *ctx);
/* infer_index.c */
ol_status ol_infer_slice(ol_infer_ctx *ctx);
ol_status ol_infer_split(ol_infer_ctx *ctx);
ol_status ol_infer_tile(ol_infer_ctx *ctx);
ol_status ol_infer_pad(ol_infer_ctx *ctx);
ol_status ol_infer_center_crop_pad(ol_infer_ctx *ctx);
ol_status ol_infer_topk(ol_infer_ctx *ctx);
ol_status ol_infer_gather_elements(ol_infer_ctx *ctx);
ol_status ol_infer_gather_nd(ol_infer_ctx *ctx);
ol_status ol_infer_one_hot(ol_infer_ctx *ctx);
ol_status ol_infer_eye_like(ol_infer_ctx *ctx);
ol_status ol_infer_non_zero(ol_infer_ctx *ctx);
ol_status ol_infer_depth_space(ol_infer_ctx *ctx);
ol_status ol_infer_unique(ol_infer_ctx *ctx);
ol_status ol_infer_compress(ol_infer_ctx *ctx);

#endif
