/* Quantization operators: QuantizeLinear, DequantizeLinear,
 * DynamicQuantizeLinear, QLinearMatMul, QLinearConv, ConvInteger
 * (quantize_linear.c) and this project's ai.rt Quantize/Dequantize of the
 * quantization catalogue (quantize_ops.c); shape functions in infer.c. */
#ifndef OL_OPS_QUANTIZE_H
#define OL_OPS_QUANTIZE_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_quantize_linear[];
extern const ol_op_schema ol_schema_quantize_rt[];

ol_status ol_infer_quantize(ol_infer_ctx *ctx);
ol_status ol_infer_dequantize(ol_infer_ctx *ctx);
ol_status ol_infer_qlinear_matmul(ol_infer_ctx *ctx);
ol_status ol_infer_conv_integer(ol_infer_ctx *ctx);
ol_status ol_infer_qlinear_conv(ol_infer_ctx *ctx);
ol_status ol_infer_quantize_linear(ol_infer_ctx *ctx);
ol_status ol_infer_dequantize_linear(ol_infer_ctx *ctx);
ol_status ol_infer_dynamic_quantize_linear(ol_infer_ctx *ctx);

#endif
