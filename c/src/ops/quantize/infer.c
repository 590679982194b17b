/* Shape functions of the quantization operators. The ai.rt operators (seed
 * 003, "Graph operators"): Quantize records its physical structured type,
 * the StructTypeProto of its `type` attribute as written (inline, or kept as
 * a type_ref into ModelProto.struct_types). Dequantize gives its requested
 * `dtype`; the logical shape only when its input is a concrete encoded
 * initializer (its logical_type), otherwise the shape stays unknown. Then
 * QuantizeLinear, DequantizeLinear, DynamicQuantizeLinear, QLinearMatMul,
 * ConvInteger and QLinearConv. */
#include <stdio.h>
#include <string.h>

#include "ops/matmul/matmul.h"
#include "ops/nn/nn.h"
#include "ops/quantize/quantize.h"
#include "quant/plan.h"
#include "quant/type_catalogue.h"

ol_status ol_infer_quantize(ol_infer_ctx *ctx) {
  const ol_attr *a = ol_node_attr(ctx->node, "type");
  const Onnx__AttributeProto *ap = a ? a->proto : NULL;
  if (!a || a->type != OL_ATTR_TYPE_PROTO || !ap || !ap->tp ||
      ap->tp->value_case != ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE || !ap->tp->struct_type)
    return ol_infer_error(ctx, "attribute 'type' must be a TYPE_PROTO holding a struct_type (the "
                               "destination StructTypeProto, inline or a type_ref)");
  const Onnx__StructTypeProto *st = ap->tp->struct_type;
  const Onnx__StructTypeProto *root = NULL;
  if (ol_type_catalogue_resolve(ctx->types, st, &root) != OL_OK) {
    char why[256];
    snprintf(why, sizeof why, "%s", ol_last_error());
    return ol_infer_error(ctx, "attribute 'type': %s", why);
  }
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (x && !ol_quant_float_bytes(x->dtype))
    return ol_infer_error(ctx, "input 'X' must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got %s)",
                          ol_dtype_name(x->dtype));
  if (ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_unknown(out);
  out->known = true;
  out->kind = OL_VALUE_STRUCT;
  out->proto = ap->tp;
  return OL_OK;
}

ol_status ol_infer_dequantize(ol_infer_ctx *ctx) {
  const ol_attr *a = ol_node_attr(ctx->node, "dtype");
  if (!a || a->type != OL_ATTR_INT)
    return ol_infer_error(ctx, "required integer attribute 'dtype' is %s", a ? "not an INT" : "missing");
  ol_dtype dtype = (ol_dtype)a->i;
  if (a->i < 0 || a->i > 0xffff || !ol_quant_float_bytes(dtype))
    return ol_infer_error(ctx, "attribute 'dtype' must be FLOAT (1), DOUBLE (11), FLOAT16 (10) or BFLOAT16 (16), "
                               "got %lld", (long long)a->i);
  const ol_infer_type *x = ctx->num_inputs ? ctx->inputs[0] : NULL;
  if (x && x->known && x->kind == OL_VALUE_TENSOR && !x->proto && !x->encoded && x->dtype != OL_DTYPE_UNDEFINED)
    return ol_infer_error(ctx, "input 'X' ('%s') is a %s tensor; it must be an encoded value",
                          ctx->node->inputs[0], ol_dtype_name(x->dtype));
  if (ctx->num_outputs < 1) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, dtype, -1, NULL);
  /* the logical tensor of the value's record (ir/structured.h) */
  const ol_struct_record *r = x && x->has_record ? &x->record : NULL;
  if (!r || !r->has_tensor || r->tensor_rank < 0) return OL_OK;
  ol_dim dims[OL_MAX_RANK];
  for (int i = 0; i < r->tensor_rank; i++) {
    if (r->tensor_dims[i] < 0) return OL_OK; /* not concrete: the dtype only */
    dims[i] = ol_dim_of(r->tensor_dims[i]);
  }
  ol_infer_set_tensor(out, dtype, r->tensor_rank, dims);
  return OL_OK;
}

/* QLinearMatMul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp): y_zp's type. */
ol_status ol_infer_qlinear_matmul(ol_infer_ctx *ctx) {
  const ol_infer_type *zp = ol_infer_input(ctx, 7);
  if (!zp || ctx->num_outputs < 1) return OL_OK;
  return ol_infer_matmul_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 3), zp->dtype, &ctx->outputs[0]);
}

ol_status ol_infer_conv_integer(ol_infer_ctx *ctx) {
  return ol_infer_conv_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 1), OL_DTYPE_INT32);
}

/* QLinearConv(x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B?): y_zp's type. */
ol_status ol_infer_qlinear_conv(ol_infer_ctx *ctx) {
  const ol_infer_type *zp = ol_infer_input(ctx, 7);
  return zp ? ol_infer_conv_shape(ctx, ol_infer_input(ctx, 0), ol_infer_input(ctx, 3), zp->dtype) : OL_OK;
}

ol_status ol_infer_quantize_linear(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *zp = ol_infer_input(ctx, 2);
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = OL_DTYPE_UINT8;
  if (ol_node_has_input(ctx->node, 2)) {
    if (!zp) return OL_OK;
    dtype = zp->dtype;
  } else if (ol_attr_int(ctx->node, "output_dtype", 0) != 0) {
    dtype = (ol_dtype)ol_attr_int(ctx->node, "output_dtype", 0);
    if (!ol_dtype_valid(dtype)) return ol_infer_error(ctx, "attribute 'output_dtype' is not an element type");
  }
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x ? x->rank : -1, x ? x->dims : NULL);
  return OL_OK;
}

ol_status ol_infer_dequantize_linear(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *scale = ol_infer_input(ctx, 1);
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = OL_DTYPE_FLOAT;
  if (ctx->node->opset >= 19) {
    if (!scale) return OL_OK;
    dtype = scale->dtype;
  }
  if (ol_attr_int(ctx->node, "output_dtype", 0) != 0) {
    dtype = (ol_dtype)ol_attr_int(ctx->node, "output_dtype", 0);
    if (!ol_dtype_valid(dtype)) return ol_infer_error(ctx, "attribute 'output_dtype' is not an element type");
  }
  ol_infer_set_tensor(&ctx->outputs[0], dtype, x ? x->rank : -1, x ? x->dims : NULL);
  return OL_OK;
}

ol_status ol_infer_dynamic_quantize_linear(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (ctx->num_outputs > 0) ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_UINT8, x ? x->rank : -1, x ? x->dims : NULL);
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], OL_DTYPE_FLOAT, 0, NULL);
  if (ctx->num_outputs > 2) ol_infer_set_tensor(&ctx->outputs[2], OL_DTYPE_UINT8, 0, NULL);
  return OL_OK;
}
