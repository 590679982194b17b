/* Paged KV caches as runtime values (seed 000, "Optional heterogeneous
 * paged KV"; serialized as PagedCacheProto, ir/paged_proto.h).
 *
 * A cache is a struct with exactly one field, `blocks`, a sequence of block
 * structs with exactly the fields `start` and `length` (INT64 scalar
 * tensors), `key` and `value` (payloads). A payload has the logical shape
 * [1, 1, capacity, width] and is either a dense FLOAT, FLOAT16 or BFLOAT16
 * tensor, or an ENCODED value with an affine layout (AffineLayoutProto):
 * INT8, UINT8, INT4, UINT4, INT2 or UINT2 codes, x = (code - zero) * scale,
 * FLOAT scales per tensor, per axis or in blocks along an axis.
 *
 * Blocks start at 0 and are contiguous, 0 < length <= capacity, K and V
 * capacities agree within a block and each of K's and V's widths agrees
 * across blocks. A block is never modified once made (sealed): appends add
 * blocks, caches share blocks by reference, and a page's payload owner
 * lives as long as any cache holding it.
 *
 * Each row of a payload holds one token for every batch row and head
 * (PagedAttention stores width = batch * heads * head_size). */
#ifndef OL_QUANT_PAGED_H
#define OL_QUANT_PAGED_H
#include <stdbool.h>
#include <stdint.h>

#include "core/value.h"
#include "simd/qpage.h"

/* One K or V payload, its metadata decoded. Dense: scales NULL. Affine:
 * element (t, w) is (code - zero) * scale with the parameters of index
 * ol_page_param_index(p, t, w); with one parameter set scale0/zero0 hold it. */
typedef struct ol_page_payload {
  ol_dtype storage;       /* FLOAT, FLOAT16, BFLOAT16, or the code type */
  const void *data;       /* row-major [capacity, width]; codes packed as ONNX raw_data */
  int64_t capacity, width;
  size_t bytes;           /* of data */
  const float *scales;    /* affine: n_params scales (NULL: dense) */
  const int32_t *zeros;   /* affine: n_params zero points */
  int64_t n_params;
  int axis;               /* affine: -1 per tensor, else 2 (tokens) or 3 (width) */
  int64_t block_size;     /* affine blocked: elements along axis per parameter; 0: one per element */
  float scale0;
  int32_t zero0;
  void *owned;            /* parameter arrays, freed by ol_page_payload_clear */
} ol_page_payload;

/* One block: `length` tokens from `start`. */
typedef struct ol_page {
  int64_t start, length;
  ol_page_payload key, value;
} ol_page;

static inline bool ol_page_is_affine(const ol_page_payload *p) { return p->scales != NULL; }
/* Bits per code of an affine storage type (8, 4 or 2), 0 for others. */
int ol_page_code_bits(ol_dtype storage);
static inline int64_t ol_page_param_index(const ol_page_payload *p, int64_t t, int64_t w) {
  if (p->n_params == 1) return 0;
  int64_t i = p->axis == 2 ? t : w;
  return p->block_size ? i / p->block_size : i;
}

/* Decodes n elements of row t from column w0 into out (dense: converted
 * to float32; affine: reconstructed), element by element: the reference
 * of the in-register decoders below. */
void ol_page_decode(const ol_page_payload *p, int64_t t, int64_t w0, int64_t n, float *out);
/* Row t from column w0 of an affine payload whose parameters do not change
 * along a row (one set, or per token: axis 2, in blocks or not) as a span
 * for ol_qpage_decode / ol_qpage_dot (simd/qpage.h: the same floats as
 * ol_page_decode); false for a dense payload or parameters along the width
 * (decode those with ol_page_decode). */
bool ol_page_row_codes(const ol_page_payload *p, int64_t t, int64_t w0, ol_qpage_codes *out);

/* ------------------------------------------------------------ reading */

/* value has the cache structure (a struct whose only field is a `blocks`
 * sequence of structs with exactly start, length, key and value); the
 * payloads are not checked. */
bool ol_paged_cache_is(const ol_value *value);
/* Only the outer structure: a struct whose only field is a `blocks`
 * sequence (for readers that check each block themselves, e.g. through
 * ol_page_view). */
bool ol_paged_cache_outline_is(const ol_value *value);
/* One block of the structure: a struct with exactly start, length, key and value. */
bool ol_paged_cache_block_is(const ol_value *block);
size_t ol_paged_cache_block_count(const ol_value *cache);
const ol_value *ol_paged_cache_block(const ol_value *cache, size_t index);

/* Views block's metadata, checking its fields, payload formats and extents
 * (0 < length <= capacity, equal K/V capacities); errors name the block by
 * index. Clear with ol_page_clear. */
ol_status ol_page_view(const ol_value *block, size_t index, ol_page *out);
void ol_page_clear(ol_page *page);
ol_status ol_page_payload_view(const ol_value *payload, ol_page_payload *out);
void ol_page_payload_clear(ol_page_payload *p);

/* Checks the whole cache without decoding a payload: the structure, every
 * block (ol_page_view), contiguous starts from 0 and widths that agree
 * across blocks. *tokens: the total length; *key_width, *value_width: the
 * widths (0 when empty). Any may be NULL. */
ol_status ol_paged_cache_validate(const ol_value *cache, int64_t *tokens, int64_t *key_width,
                                  int64_t *value_width);

/* ------------------------------------------------------------ making */

/* An empty cache: {blocks: []}. */
ol_status ol_paged_cache_new(ol_value *const *blocks, size_t count, ol_value **out);
/* A block taking references to key and value (not consumed on failure). */
ol_status ol_page_block_new(int64_t start, int64_t length, ol_value *key, ol_value *value, ol_value **out);
/* A dense page [1, 1, capacity, width] of dtype (FLOAT, FLOAT16, BFLOAT16), uninitialized. */
ol_status ol_page_dense_new(ol_allocator *allocator, ol_dtype dtype, int64_t capacity, int64_t width, ol_value **out);
/* An affine page [1, 1, capacity, width] of storage codes with one scale
 * and zero point; *codes: its payload (zeroed), *bytes its size. */
ol_status ol_page_affine_new(ol_dtype storage, float scale, int32_t zero, int64_t capacity, int64_t width,
                             ol_value **out, uint8_t **codes, size_t *bytes);
/* The same with n_params parameter sets: 1 (per tensor) or capacity (one
 * per token: AffineLayoutProto axis 2, 1-D scale and zero point tensors). */
ol_status ol_page_affine_rows_new(ol_dtype storage, const float *scales, const int32_t *zeros, int64_t n_params,
                                  int64_t capacity, int64_t width, ol_value **out, uint8_t **codes, size_t *bytes);
/* Copies n codes of storage from element `from` of src to element `to` of dst. */
void ol_page_copy_codes(ol_dtype storage, const uint8_t *src, int64_t from, uint8_t *dst, int64_t to, int64_t n);

/* Checks a requested page format: for pages PagedAttention appends
 * (append: FLOAT) or for a conversion (FLOAT, FLOAT16, BFLOAT16), or codes
 * with scale >= 0 (0 meaning calibrated from each page's values); zero
 * points in the code range. Errors name `what` ("key", "value"). */
ol_status ol_page_format_validate(const char *what, const ol_page_format *f, bool append);

/* A state's cache as it grows (runtime/state.c): decoding one token per
 * step adds a block per token, and past a few hundred blocks their
 * metadata and the attention's per-block work outweigh the tokens. When
 * cache has OL_PAGED_CACHE_COMPACT_TOKENS blocks more than *mark (the count
 * the last compaction left; a smaller cache lowers it), *out is cache
 * compacted with that many tokens per block (ol_paged_cache_compact:
 * lossless, same attention bits) and *mark its block count; else *out is
 * NULL. cache: a validated paged cache. */
ol_status ol_paged_cache_compact_grown(const ol_value *cache, size_t *mark, ol_value **out);

/* ol_paged_cache_quantize with its scratch (index check, float rows, block
 * list) from alloc (NULL: the default allocator). */
ol_status ol_paged_cache_convert(ol_allocator *alloc, const ol_value *cache, const int64_t *indices, size_t count,
                                 const ol_page_format *key, const ol_page_format *value, ol_value **out);

/* Encodes n floats as codes of storage at element index `at` of codes:
 * round(x / scale) + zero, ties to even, saturated to the code range. */
void ol_page_encode(ol_dtype storage, float scale, int32_t zero, const float *x, int64_t n, uint8_t *codes,
                    int64_t at);
/* The code range of an affine storage type. */
void ol_page_code_range(ol_dtype storage, int32_t *lo, int32_t *hi);
/* A calibrated scale and zero point for n floats in storage (a format's
 * scale 0): the largest magnitude over the largest code distance from the
 * zero point, which is 0 for signed codes and the midpoint for unsigned
 * ones; scale 1 when every value is 0. */
void ol_page_calibrate(ol_dtype storage, const float *x, int64_t n, float *scale, int32_t *zero);

#endif
