/* Det, GridSample, MaxUnpool, NonMaxSuppression, ReverseSequence, RoiAlign,
 * Shrink, StringNormalizer, TfIdfVectorizer (misc.c); shape functions, and
 * Bernoulli's (no kernel), in infer.c. */
#ifndef OL_OPS_MISC_H
#define OL_OPS_MISC_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_misc[];

/* infer.c */
ol_status ol_infer_grid_sample(ol_infer_ctx *ctx);
ol_status ol_infer_roi_align(ol_infer_ctx *ctx);
ol_status ol_infer_nms(ol_infer_ctx *ctx);
ol_status ol_infer_det(ol_infer_ctx *ctx);
ol_status ol_infer_bernoulli(ol_infer_ctx *ctx);

#endif
