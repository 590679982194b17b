/* ai.rt::QuantizePagedCache 1:
 *   quantized_cache = QuantizePagedCache(cache, block_indices, key_scale,
 *                                        key_zero_point, value_scale, value_zero_point)
 *
 * Converts the selected blocks (block_indices: rank-1 INT64, unique, in
 * range) of a paged cache (quant/paged.h) without touching the others. Each
 * zero point's element type picks the destination of K or V: INT8, UINT8,
 * INT4, UINT4, INT2, UINT2 for affine codes with that zero point and the
 * scale (a positive finite FLOAT scalar); FLOAT, FLOAT16 or BFLOAT16 for
 * dense pages (the zero point's value and the scale are then ignored). The
 * valid prefix of each selected page is decoded and converted; capacity and
 * length stay, rows past the length hold logical zeros in the new format
 * (the source's unused rows are never read). The whole cache is checked
 * first, unselected and empty selections included, then every index and
 * parameter, and only then is the new cache made: an invalid request
 * changes nothing. Unselected blocks are shared with the input. The
 * conversion itself is ol_paged_cache_convert (quant/paged_convert.c, also
 * the public ol_paged_cache_quantize) with the run's allocator for its
 * scratch; this kernel reads its tensors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/paged/paged.h"

/* The destination a scale and zero point select. */
static ol_status destination(const ol_node *node, const char *what, const ol_tensor *scale, const ol_tensor *zero,
                             ol_page_format *out) {
  if (scale->dtype != OL_DTYPE_FLOAT || ol_tcount(scale) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s_scale must be a FLOAT scalar", what);
  if (ol_tcount(zero) != 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s_zero_point must be a scalar", what);
  float s = ((const float *)ol_tdata(scale))[0];
  if (!isfinite(s) || s <= 0.0f)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s_scale %g must be positive and finite", what, (double)s);
  out->type = zero->dtype;
  out->scale = s;
  out->zero_point = 0;
  if (ol_dtype_computes_f32(zero->dtype)) return OL_OK;
  if (!ol_page_code_bits(zero->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "%s_zero_point is %s (INT8, UINT8, INT4, UINT4, INT2, UINT2, FLOAT, FLOAT16 or BFLOAT16)",
                           what, ol_dtype_name(zero->dtype));
  out->zero_point = (int32_t)ol_tensor_get_double(zero, 0);
  return OL_OK;
}

static ol_status qpc_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_value *cache = ctx->num_inputs > 0 ? ctx->inputs[0] : NULL;
  if (!cache || !ol_paged_cache_is(cache))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cache must be a paged cache (a struct of 'blocks')");
  const ol_tensor *idx, *ks, *kz, *vs, *vz;
  OL_TRY(ol_ctx_require(ctx, 1, &idx));
  OL_TRY(ol_ctx_require(ctx, 2, &ks));
  OL_TRY(ol_ctx_require(ctx, 3, &kz));
  OL_TRY(ol_ctx_require(ctx, 4, &vs));
  OL_TRY(ol_ctx_require(ctx, 5, &vz));
  if (idx->dtype != OL_DTYPE_INT64 || idx->rank != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "block_indices must be a rank-1 INT64 tensor");
  ol_page_format kf, vf;
  OL_TRY(destination(node, "key", ks, kz, &kf));
  OL_TRY(destination(node, "value", vs, vz, &vf));
  ol_value *out = NULL;
  ol_status s = ol_paged_cache_convert(ctx->allocator, cache, ol_tdata(idx), (size_t)ol_tcount(idx), &kf, &vf, &out);
  if (s != OL_OK) return s == OL_OUT_OF_MEMORY ? s : ol_kernel_error(node, s, "%s", ol_last_error());
  return ol_ctx_set_output(ctx, 0, out);
}

ol_status ol_quantize_paged_cache_create(const ol_node *node, ol_kernel **out) {
  if (node->num_attrs)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "QuantizePagedCache has no attributes ('%s' given)",
                           node->attrs[0].name);
  return ol_kernel_simple(node, qpc_compute, out);
}
