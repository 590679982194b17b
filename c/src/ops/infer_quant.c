/* Shape functions of the ai.rt quantization operators (seed 003, "Graph
 * operators"): Quantize records its physical structured type, the
 * StructTypeProto of its `type` attribute as written (inline, or kept as a
 * type_ref into ModelProto.struct_types). Dequantize gives its requested
 * `dtype`; the logical shape only when its input is a concrete encoded
 * initializer (its logical_type), otherwise the shape stays unknown. */
#include <stdio.h>
#include <string.h>

#include "ops/infer.h"
#include "quant/plan.h"
#include "quant/type_catalogue.h"

static ol_status infer_quantize(ol_infer_ctx *ctx) {
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

static ol_status infer_dequantize(ol_infer_ctx *ctx) {
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
  const Onnx__TypeProto *lt = x && x->encoded ? x->encoded->logical_type : NULL;
  if (!lt || lt->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !lt->tensor_type->shape ||
      lt->tensor_type->shape->n_dim > OL_MAX_RANK)
    return OL_OK;
  const Onnx__TensorShapeProto *shape = lt->tensor_type->shape;
  ol_dim dims[OL_MAX_RANK];
  for (size_t i = 0; i < shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
    if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || d->dim_value < 0)
      return OL_OK; /* not concrete: the dtype only */
    dims[i] = ol_dim_of(d->dim_value);
  }
  ol_infer_set_tensor(out, dtype, (int)shape->n_dim, dims);
  return OL_OK;
}

const ol_infer_rule ol_infer_rules_quant[] = {
    {"ai.rt", "Quantize", infer_quantize},
    {"ai.rt", "Dequantize", infer_dequantize},
    {0},
};
