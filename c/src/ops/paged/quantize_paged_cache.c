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
 * changes nothing. Unselected blocks are shared with the input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/float_io.h"
#include "ops/paged/paged.h"

/* The destination a scale and zero point select. */
static ol_status destination(const ol_node *node, const char *what, const ol_tensor *scale, const ol_tensor *zero,
                             ol_page_format *out) {
  if (scale->dtype != OL_DTYPE_FLOAT || ol_tcount(scale) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s_scale must be a FLOAT scalar", what);
  float s = ((const float *)ol_tdata(scale))[0];
  if (!isfinite(s) || s <= 0.0f)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s_scale %g must be positive and finite", what, (double)s);
  if (ol_tcount(zero) != 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "%s_zero_point must be a scalar", what);
  out->type = zero->dtype;
  out->scale = s;
  out->zero_point = 0;
  if (ol_is_float_type(zero->dtype)) return OL_OK;
  if (!ol_page_code_bits(zero->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "%s_zero_point is %s (INT8, UINT8, INT4, UINT4, INT2, UINT2, FLOAT, FLOAT16 or BFLOAT16)",
                           what, ol_dtype_name(zero->dtype));
  out->zero_point = (int32_t)ol_tensor_get_double(zero, 0);
  return ol_page_format_check(node, what, out);
}

/* Reads the selected indices; each unique and below n. */
static ol_status read_indices(const ol_node *node, const ol_tensor *t, size_t n, int64_t **out, size_t *count) {
  if (t->dtype != OL_DTYPE_INT64 || t->rank != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "block_indices must be a rank-1 INT64 tensor");
  const int64_t *v = ol_tdata(t);
  *count = (size_t)ol_tcount(t);
  bool *seen = calloc(n + 1, sizeof *seen);
  if (!seen) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (size_t i = 0; i < *count && s == OL_OK; i++) {
    if (v[i] < 0 || (uint64_t)v[i] >= n)
      s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "block index %lld is out of range (the cache has %zu blocks)",
                          (long long)v[i], n);
    else if (seen[v[i]])
      s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "block index %lld is repeated", (long long)v[i]);
    else seen[v[i]] = true;
  }
  free(seen);
  *out = (int64_t *)v;
  return s;
}

/* The payload p (length valid rows) converted to format f, same capacity. */
static ol_status convert(const ol_page_payload *p, int64_t length, const ol_page_format *f, ol_value **out) {
  int64_t n = p->capacity * p->width;
  float *x = calloc((size_t)n + 1, sizeof *x); /* rows past length: logical zeros */
  if (!x) return OL_OUT_OF_MEMORY;
  for (int64_t t = 0; t < length; t++) ol_page_decode(p, t, 0, p->width, x + t * p->width);
  ol_status s;
  if (ol_page_code_bits(f->type)) {
    uint8_t *codes;
    size_t bytes;
    s = ol_page_affine_new(f->type, f->scale, f->zero_point, p->capacity, p->width, out, &codes, &bytes);
    if (s == OL_OK) ol_page_encode(f->type, f->scale, f->zero_point, x, n, codes, 0);
  } else {
    s = ol_page_dense_new(NULL, f->type, p->capacity, p->width, out);
    if (s == OL_OK) ol_floats_store(&(*out)->tensor, 0, x, n);
  }
  free(x);
  return s;
}

static ol_status convert_block(const ol_value *block, size_t index, const ol_page_format *kf,
                               const ol_page_format *vf, ol_value **out) {
  ol_page page;
  OL_TRY(ol_page_view(block, index, &page));
  ol_value *key = NULL, *value = NULL;
  ol_status s = convert(&page.key, page.length, kf, &key);
  if (s == OL_OK) s = convert(&page.value, page.length, vf, &value);
  if (s == OL_OK) s = ol_page_block_new(page.start, page.length, key, value, out);
  ol_value_release(key);
  ol_value_release(value);
  ol_page_clear(&page);
  return s;
}

static ol_status qpc_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_value *cache = ctx->num_inputs > 0 ? ctx->inputs[0] : NULL;
  if (!cache || !ol_paged_cache_is(cache))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cache must be a paged cache (a struct of 'blocks')");
  ol_status s = ol_paged_cache_validate(cache, NULL, NULL, NULL);
  if (s != OL_OK) return ol_kernel_error(node, s, "cache: %s", ol_last_error());
  const ol_tensor *idx, *ks, *kz, *vs, *vz;
  OL_TRY(ol_ctx_require(ctx, 1, &idx));
  OL_TRY(ol_ctx_require(ctx, 2, &ks));
  OL_TRY(ol_ctx_require(ctx, 3, &kz));
  OL_TRY(ol_ctx_require(ctx, 4, &vs));
  OL_TRY(ol_ctx_require(ctx, 5, &vz));
  size_t n = ol_paged_cache_block_count(cache), count = 0;
  int64_t *indices = NULL;
  ol_page_format kf, vf;
  OL_TRY(read_indices(node, idx, n, &indices, &count));
  OL_TRY(destination(node, "key", ks, kz, &kf));
  OL_TRY(destination(node, "value", vs, vz, &vf));
  ol_value **blocks = calloc(n + 1, sizeof *blocks);
  if (!blocks) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; i++) blocks[i] = ol_value_retain((ol_value *)ol_paged_cache_block(cache, i));
  for (size_t i = 0; i < count && s == OL_OK; i++) {
    ol_value *converted = NULL;
    s = convert_block(blocks[indices[i]], (size_t)indices[i], &kf, &vf, &converted);
    if (s == OL_OK) {
      ol_value_release(blocks[indices[i]]);
      blocks[indices[i]] = converted;
    }
  }
  ol_value *out = NULL;
  if (s == OL_OK) s = ol_paged_cache_new(blocks, n, &out);
  for (size_t i = 0; i < n; i++) ol_value_release(blocks[i]);
  free(blocks);
  return s == OL_OK ? ol_ctx_set_output(ctx, 0, out) : s;
}

ol_status ol_quantize_paged_cache_create(const ol_node *node, ol_kernel **out) {
  if (node->num_attrs)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "QuantizePagedCache has no attributes ('%s' given)",
                           node->attrs[0].name);
  return ol_kernel_simple(node, qpc_compute, out);
}
