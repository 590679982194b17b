/* The MatMul whose B is an ai.rt::Dequantize of a constant affine encoded
 * initializer, decoded in register (qmatmul.c). */
#ifndef OL_OPS_QMATMUL_H
#define OL_OPS_QMATMUL_H
#include "onnx_light.pb-c.h"
#include "ops/kernel.h"
#include "quant/type_catalogue.h"

/* The fused kernel of MatMul node matmul reading encoded (node input 1 is
 * then that value). OL_OK with *out NULL when the value is not eligible
 * (quant/affine_view.h): keep the unfused nodes. types (the model's struct
 * types, may be NULL) resolves descriptor type_refs. */
ol_status ol_qmatmul_create(const ol_node *matmul, ol_value *encoded, const ol_type_catalogue *types,
                            ol_kernel **out);

#endif
