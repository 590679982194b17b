/* Decoder building blocks: ONNX Attention 23 (attention.c), RMSNormalization
 * and RotaryEmbedding 23 (nn23.c), the com.microsoft normalizations, Gelu
 * variants, BiasAdd, FusedMatMul, RotaryEmbedding (contrib_ms.c),
 * MultiHeadAttention and GroupQueryAttention (contrib_ms_attn.c); shape
 * functions in infer.c. */
#ifndef OL_OPS_TRANSFORMER_H
#define OL_OPS_TRANSFORMER_H
#include "ops/float_io.h"
#include "ops/schema.h"

extern const ol_op_schema ol_schema_nn23[];
extern const ol_op_schema ol_schema_attention[];
extern const ol_op_schema ol_schema_contrib_ms[];

/* Rotates one head vector x[0..H) into y (may alias): the first rot values
 * by the angle pairs (c[i], s[i]), i < rot/2; the rest copied. */
void ol_nn23_rotate(const float *x, float *y, const float *c, const float *s, int64_t H, int64_t rot,
                    bool interleaved);

/* contrib_ms_attn.c */
ol_status ol_cms_mha_create(const ol_node *node, ol_kernel **out);
ol_status ol_cms_gqa_create(const ol_node *node, ol_kernel **out);

/* infer.c */
ol_status ol_infer_attention(ol_infer_ctx *ctx);
ol_status ol_infer_gqa(ol_infer_ctx *ctx);
ol_status ol_infer_skip_norm(ol_infer_ctx *ctx);

#endif
