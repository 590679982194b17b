/* Page formats and converting selected blocks of a paged cache: the checks
 * of a requested format (appended pages and conversions) and
 * ol_paged_cache_convert, the one implementation behind the
 * ai.rt::QuantizePagedCache kernel (ops/paged/quantize_paged_cache.c, with
 * the run's allocator for its scratch) and the public
 * ol_paged_cache_quantize (onnxlight.h). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "quant/paged.h"

ol_status ol_page_format_validate(const char *what, const ol_page_format *f, bool append) {
  bool dense = f->type == OL_DTYPE_FLOAT || (append ? f->type == OL_DTYPE_UNDEFINED
                                                    : f->type == OL_DTYPE_FLOAT16 || f->type == OL_DTYPE_BFLOAT16);
  if (dense) return OL_OK;
  if (!ol_page_code_bits(f->type))
    return ol_error(OL_INVALID_ARGUMENT, "%s pages cannot be %s (%s, INT8, UINT8, INT4, UINT4, INT2 or UINT2)", what,
                    ol_dtype_name(f->type), append ? "FLOAT" : "FLOAT, FLOAT16, BFLOAT16");
  if (!isfinite(f->scale) || !(f->scale >= 0.0f))
    return ol_error(OL_INVALID_ARGUMENT, "%s page scale %g must be finite and positive (0: calibrated)", what,
                    (double)f->scale);
  int32_t lo, hi;
  ol_page_code_range(f->type, &lo, &hi);
  if (f->scale > 0.0f && (f->zero_point < lo || f->zero_point > hi))
    return ol_error(OL_INVALID_ARGUMENT, "%s zero point %d is outside the %s range [%d, %d]", what, f->zero_point,
                    ol_dtype_name(f->type), lo, hi);
  return OL_OK;
}

/* The payload p (length valid rows) converted to format f, same capacity
 * (the float rows in scratch from alloc). */
static ol_status convert(ol_allocator *alloc, const ol_page_payload *p, int64_t length, const ol_page_format *f,
                         ol_value **out) {
  int64_t n = p->capacity * p->width;
  float *x = ol_calloc(alloc, (size_t)n + 1, sizeof *x); /* rows past length: logical zeros */
  if (!x) return OL_OUT_OF_MEMORY;
  for (int64_t t = 0; t < length; t++) ol_page_decode(p, t, 0, p->width, x + t * p->width);
  ol_status s;
  if (ol_page_code_bits(f->type)) {
    float scale = f->scale;
    int32_t zero = f->zero_point;
    if (scale == 0.0f) ol_page_calibrate(f->type, x, length * p->width, &scale, &zero); /* from the valid rows */
    uint8_t *codes;
    size_t bytes;
    s = ol_page_affine_new(f->type, scale, zero, p->capacity, p->width, out, &codes, &bytes);
    if (s == OL_OK) ol_page_encode(f->type, scale, zero, x, n, codes, 0);
  } else {
    s = ol_page_dense_new(NULL, f->type, p->capacity, p->width, out);
    if (s == OL_OK && n > 0) ol_dtype_info(f->type)->store_row(x, n, ol_tdata(&(*out)->tensor));
  }
  ol_dealloc(alloc, x);
  return s;
}

static ol_status convert_block(ol_allocator *alloc, const ol_value *block, size_t index, const ol_page_format *kf,
                               const ol_page_format *vf, ol_value **out) {
  ol_page page;
  OL_TRY(ol_page_view(block, index, &page));
  ol_value *key = NULL, *value = NULL;
  ol_status s = convert(alloc, &page.key, page.length, kf, &key);
  if (s == OL_OK) s = convert(alloc, &page.value, page.length, vf, &value);
  if (s == OL_OK) s = ol_page_block_new(page.start, page.length, key, value, out);
  ol_value_release(key);
  ol_value_release(value);
  ol_page_clear(&page);
  return s;
}

/* Every index unique and below n (checked in scratch from alloc). */
static ol_status check_indices(ol_allocator *alloc, const int64_t *indices, size_t count, size_t n) {
  bool *seen = ol_calloc(alloc, n + 1, sizeof *seen);
  if (!seen) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (size_t i = 0; i < count && s == OL_OK; i++) {
    if (indices[i] < 0 || (uint64_t)indices[i] >= n)
      s = ol_error(OL_INVALID_ARGUMENT, "block index %lld is out of range (the cache has %zu blocks)",
                   (long long)indices[i], n);
    else if (seen[indices[i]])
      s = ol_error(OL_INVALID_ARGUMENT, "block index %lld is repeated", (long long)indices[i]);
    else seen[indices[i]] = true;
  }
  ol_dealloc(alloc, seen);
  return s;
}

ol_status ol_paged_cache_convert(ol_allocator *alloc, const ol_value *cache, const int64_t *indices, size_t count,
                                 const ol_page_format *key, const ol_page_format *value, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_quantize: out is NULL");
  *out = NULL;
  if (!key || !value || (count && !indices))
    return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_quantize: NULL argument");
  /* the whole cache first (unselected blocks and empty selections too), then
   * the request, and only then anything is made */
  ol_status s = ol_paged_cache_validate(cache, NULL, NULL, NULL);
  if (s != OL_OK) return ol_error_wrap(s, "cache");
  size_t n = ol_paged_cache_block_count(cache);
  OL_TRY(check_indices(alloc, indices, count, n));
  OL_TRY(ol_page_format_validate("key", key, false));
  OL_TRY(ol_page_format_validate("value", value, false));
  ol_value **blocks = ol_calloc(alloc, n + 1, sizeof *blocks);
  if (!blocks) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; i++) blocks[i] = ol_value_retain((ol_value *)ol_paged_cache_block(cache, i));
  for (size_t i = 0; i < count && s == OL_OK; i++) {
    ol_value *converted = NULL;
    s = convert_block(alloc, blocks[indices[i]], (size_t)indices[i], key, value, &converted);
    if (s == OL_OK) {
      ol_value_release(blocks[indices[i]]);
      blocks[indices[i]] = converted;
    }
  }
  if (s == OL_OK) s = ol_paged_cache_new(blocks, n, out);
  for (size_t i = 0; i < n; i++) ol_value_release(blocks[i]);
  ol_dealloc(alloc, blocks);
  return s;
}

ol_status ol_paged_cache_quantize(const ol_value *cache, const int64_t *indices, size_t count,
                                  const ol_page_format *key, const ol_page_format *value, ol_value **out) {
  return ol_paged_cache_convert(NULL, cache, indices, count, key, value, out);
}
