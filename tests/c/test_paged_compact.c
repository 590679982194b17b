/* ol_paged_cache_compact (quant/paged_compact.c) and ol_paged_cache_quantize
 * (quant/paged_convert.c): runs of one format merge losslessly (dense
 * elements and affine codes concatenated, scalar parameters spread to one
 * per token), PagedAttention over the compacted cache gives the same bits,
 * unaligned sub-byte codes, truncated blocks, FLOAT16 pages, the token
 * bound, idempotence and sharing, blocks that cannot merge (parameters
 * along the width, another storage type), and the checks of the quantize
 * function. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"
#include "onnx_light.pb-c.h"
#include "quant/paged.h"

/* A pseudo-random value in [-1, 1) for token t, column w and a seed. */
static float value_at(int64_t t, int64_t w, int seed) {
  uint32_t u = (uint32_t)((seed * 131 + t) * 977 + w) * 2654435761u;
  u ^= u >> 15;
  return (float)(u % 2001) / 1000.0f - 1.0f;
}

/* A page [1, 1, capacity, width] holding `length` tokens from `start` in
 * storage (dense FLOAT or affine codes with scale and zero). */
static ol_value *page(ol_dtype storage, float scale, int32_t zero, int64_t start, int64_t length, int64_t capacity,
                      int64_t width, int seed) {
  float x[512] = {0};
  for (int64_t t = 0; t < length; t++)
    for (int64_t w = 0; w < width; w++) x[t * width + w] = value_at(start + t, w, seed);
  ol_value *v = NULL;
  if (storage == OL_DTYPE_FLOAT) {
    CHECK_OK(ol_page_dense_new(NULL, OL_DTYPE_FLOAT, capacity, width, &v));
    if (v) memcpy(ol_tensor_data(v), x, sizeof(float) * (size_t)(capacity * width));
    return v;
  }
  uint8_t *codes;
  size_t bytes;
  CHECK_OK(ol_page_affine_new(storage, scale, zero, capacity, width, &v, &codes, &bytes));
  if (v) ol_page_encode(storage, scale, zero, x, capacity * width, codes, 0);
  return v;
}

typedef struct block_spec {
  int64_t length, capacity;
  ol_dtype kt, vt;
  float scale; /* both pages' (0.125 when 0) */
} block_spec;

/* A cache of key width kw and value width vw from specs. */
static ol_value *make_cache(const block_spec *specs, size_t n, int64_t kw, int64_t vw) {
  ol_value *blocks[64] = {0}, *cache = NULL;
  int64_t start = 0;
  for (size_t i = 0; i < n; i++) {
    const block_spec *b = &specs[i];
    int64_t cap = b->capacity ? b->capacity : b->length;
    float scale = b->scale ? b->scale : 0.125f;
    int32_t vzero = b->vt == OL_DTYPE_UINT4 ? 8 : b->vt == OL_DTYPE_UINT2 ? 2 : 0;
    ol_value *k = page(b->kt, scale, 0, start, b->length, cap, kw, 1);
    ol_value *v = page(b->vt, scale * 2, vzero, start, b->length, cap, vw, 2);
    if (k && v) CHECK_OK(ol_page_block_new(start, b->length, k, v, &blocks[i]));
    ol_value_release(k);
    ol_value_release(v);
    start += b->length;
  }
  CHECK_OK(ol_paged_cache_new(blocks, n, &cache));
  for (size_t i = 0; i < n; i++) ol_value_release(blocks[i]);
  return cache;
}

static int64_t block_length(const ol_value *cache, size_t i) {
  ol_page p;
  if (ol_page_view(ol_paged_cache_block(cache, i), i, &p) != OL_OK) return -1;
  int64_t n = p.length;
  ol_page_clear(&p);
  return n;
}

static ol_value *compacted(const ol_value *cache, int64_t max) {
  ol_value *out = NULL;
  CHECK_OK(ol_paged_cache_compact(cache, max, &out));
  if (out) CHECK_OK(ol_paged_cache_validate(out, NULL, NULL, NULL));
  return out;
}

/* q, k or v [1, 2, 1, 4] of the next token. */
static ol_value *qkv(int which) {
  int64_t dims[4] = {1, 2, 1, 4};
  float x[8];
  for (int i = 0; i < 8; i++) x[i] = value_at(which, i, 7);
  return tk_f32(4, dims, x);
}

/* Y of one PagedAttention execution (1 new token) over past. */
static ol_value *attend(ol_value *past) {
  ol_value *in[4] = {qkv(0), qkv(1), qkv(2), past}, *out[2] = {NULL, NULL};
  CHECK_OK(tk_run_domain("ai.rt", "PagedAttention", 1, NULL, 0, in, 4, out, 2));
  tk_release_all(in, 3);
  ol_value_release(out[1]);
  return out[0];
}

/* Dense, fixed-scale and per-page-scale blocks: two runs, every token the
 * same, the affine run's parameters one per token, the attention the same bits. */
static void merges_runs_losslessly(void) {
  const block_spec specs[] = {
      {2, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}, {1, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0},
      {3, 0, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0.01f}, {1, 0, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0.02f},
      {1, 0, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0.03f}, {1, 0, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0.01f},
  };
  ol_value *cache = make_cache(specs, 6, 8, 8), *c = cache ? compacted(cache, 64) : NULL;
  if (!c) return;
  CHECK(ol_paged_cache_block_count(c) == 2 && block_length(c, 0) == 3 && block_length(c, 1) == 6);
  CHECK(tk_paged_same_tokens(cache, c));
  ol_page p;
  CHECK_OK(ol_page_view(ol_paged_cache_block(c, 1), 1, &p));
  CHECK(p.key.storage == OL_DTYPE_INT8 && p.key.n_params == 6 && p.key.axis == 2 && p.key.capacity == 6);
  CHECK(p.value.storage == OL_DTYPE_UINT4 && p.value.n_params == 6 && p.value.zeros[5] == 8);
  CHECK(p.key.scales[0] == 0.01f && p.key.scales[3] == 0.02f && p.key.scales[4] == 0.03f);
  ol_page_clear(&p);
  size_t before = 0, after = 0;
  CHECK_OK(ol_paged_cache_payload_bytes(cache, &before));
  CHECK_OK(ol_paged_cache_payload_bytes(c, &after));
  CHECK(before == after); /* every page was full: nothing dropped, nothing added */
  ol_value *y0 = attend(cache), *y1 = attend(c);
  CHECK(y0 && y1 && memcmp(ol_tensor_data(y0), ol_tensor_data(y1), ol_tensor_byte_size(y0)) == 0);
  ol_value_release(y0);
  ol_value_release(y1);
  ol_value_release(c);
  ol_value_release(cache);
}

/* Widths whose rows end mid-byte (3 uint4 codes, 5 int2 codes): codes are
 * moved one by one where they do not line up. */
static void unaligned_codes(void) {
  const ol_dtype kinds[2][2] = {{OL_DTYPE_INT4, OL_DTYPE_UINT4}, {OL_DTYPE_INT2, OL_DTYPE_UINT2}};
  const int64_t widths[2] = {3, 5};
  for (int k = 0; k < 2; k++) {
    block_spec specs[5];
    for (int i = 0; i < 5; i++) specs[i] = (block_spec){1 + i % 2, 0, kinds[k][0], kinds[k][1], 0.1f * (float)(i + 1)};
    ol_value *cache = make_cache(specs, 5, widths[k], widths[k]), *c = cache ? compacted(cache, 64) : NULL;
    CHECK(c && ol_paged_cache_block_count(c) == 1 && tk_paged_same_tokens(cache, c));
    ol_value_release(c);
    ol_value_release(cache);
  }
}

/* A block whose length is below its capacity: only its valid rows move. */
static void truncated_blocks(void) {
  const block_spec specs[] = {{1, 3, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0}, {2, 4, OL_DTYPE_INT8, OL_DTYPE_UINT4, 0.5f},
                              {1, 2, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}, {1, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}};
  ol_value *cache = make_cache(specs, 4, 8, 4), *c = cache ? compacted(cache, 64) : NULL;
  if (!c) return;
  CHECK(ol_paged_cache_block_count(c) == 2 && tk_paged_same_tokens(cache, c));
  ol_page p;
  CHECK_OK(ol_page_view(ol_paged_cache_block(c, 0), 0, &p));
  CHECK(p.length == 3 && p.key.capacity == 3);
  ol_page_clear(&p);
  size_t bytes = 0;
  CHECK_OK(ol_paged_cache_payload_bytes(c, &bytes));
  CHECK(bytes == 3 * (8 + 2) + 2 * (8 + 4) * 4); /* 3 int8/uint4 rows, 2 dense rows */
  ol_value_release(c);
  ol_value_release(cache);
}

/* FLOAT16 and BFLOAT16 pages (made by ol_paged_cache_quantize) concatenate as stored. */
static void half_pages(void) {
  const block_spec specs[] = {{2, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}, {1, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0},
                              {1, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}};
  ol_value *cache = make_cache(specs, 3, 8, 8), *half = NULL;
  const int64_t all[3] = {0, 1, 2};
  ol_page_format kf = {OL_DTYPE_FLOAT16, 1.0f, 0}, vf = {OL_DTYPE_BFLOAT16, 1.0f, 0};
  CHECK_OK(ol_paged_cache_quantize(cache, all, 3, &kf, &vf, &half));
  ol_value *c = half ? compacted(half, 64) : NULL;
  if (c) {
    ol_page p;
    CHECK_OK(ol_page_view(ol_paged_cache_block(c, 0), 0, &p));
    CHECK(ol_paged_cache_block_count(c) == 1 && p.key.storage == OL_DTYPE_FLOAT16 && p.value.storage == OL_DTYPE_BFLOAT16);
    ol_page_clear(&p);
    CHECK(tk_paged_same_tokens(half, c));
  }
  ol_value_release(c);
  ol_value_release(half);
  ol_value_release(cache);
}

/* Runs end at the bound; single blocks are shared; compacting again changes
 * nothing; the bound must be positive. */
static void bound_and_sharing(void) {
  block_spec specs[7];
  for (int i = 0; i < 7; i++) specs[i] = (block_spec){1, 0, OL_DTYPE_INT8, OL_DTYPE_INT8, 0.01f * (float)(i + 1)};
  specs[3].length = 2;
  ol_value *cache = make_cache(specs, 7, 4, 4);
  if (!cache) return;
  ol_value *c = compacted(cache, 3), *again = c ? compacted(c, 3) : NULL, *ones = compacted(cache, 1);
  /* lengths 1 1 1 2 1 1 1 in runs of at most 3 tokens: 1+1+1, 2+1, 1+1 */
  CHECK(c && ol_paged_cache_block_count(c) == 3 && block_length(c, 0) == 3 && block_length(c, 1) == 3 &&
        block_length(c, 2) == 2);
  CHECK(c && tk_paged_same_tokens(cache, c));
  for (size_t i = 0; again && i < ol_paged_cache_block_count(again); i++)
    CHECK(ol_paged_cache_block(again, i) == ol_paged_cache_block(c, i));
  for (size_t i = 0; ones && i < 7; i++) CHECK(ol_paged_cache_block(ones, i) == ol_paged_cache_block(cache, i));
  ol_value *none = NULL;
  CHECK_STATUS(ol_paged_cache_compact(cache, 0, &none), OL_INVALID_ARGUMENT);
  CHECK(none == NULL);
  ol_value *empty = NULL, *empty_out = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  CHECK_OK(ol_paged_cache_compact(empty, 64, &empty_out));
  CHECK(empty_out && ol_paged_cache_block_count(empty_out) == 0);
  ol_value_release(empty_out);
  ol_value_release(empty);
  ol_value_release(ones);
  ol_value_release(again);
  ol_value_release(c);
  ol_value_release(cache);
}

/* An affine page with one parameter set per column (axis 3): parsed from
 * EncodedValueProto bytes. */
static ol_value *per_column_page(int64_t width) {
  float scales[8];
  uint8_t codes[8];
  for (int64_t w = 0; w < width; w++) scales[w] = 0.1f * (float)(w + 1), codes[w] = (uint8_t)(w * 3);
  Onnx__TensorShapeProto__Dimension dims[4], *dim_list[4];
  const int64_t values[4] = {1, 1, 1, width};
  for (int d = 0; d < 4; d++) {
    dims[d] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    dims[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    dims[d].dim_value = values[d];
    dim_list[d] = &dims[d];
  }
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = 4, shape.dim = dim_list;
  Onnx__TypeProto__Tensor tensor = ONNX__TYPE_PROTO__TENSOR__INIT;
  tensor.has_elem_type = 1, tensor.elem_type = OL_DTYPE_FLOAT, tensor.shape = &shape;
  Onnx__TypeProto logical = ONNX__TYPE_PROTO__INIT;
  logical.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE, logical.tensor_type = &tensor;
  Onnx__TensorProto scale = ONNX__TENSOR_PROTO__INIT;
  scale.has_data_type = 1, scale.data_type = OL_DTYPE_FLOAT, scale.n_float_data = (size_t)width, scale.float_data = scales;
  Onnx__AffineLayoutProto affine = ONNX__AFFINE_LAYOUT_PROTO__INIT;
  affine.has_storage_type = 1, affine.storage_type = OL_DTYPE_INT8, affine.has_axis = 1, affine.axis = 3;
  affine.scale = &scale;
  Onnx__EncodedValueProto e = ONNX__ENCODED_VALUE_PROTO__INIT;
  e.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_AFFINE, e.affine = &affine, e.logical_type = &logical;
  e.has_raw_data = 1, e.raw_data = (ProtobufCBinaryData){(size_t)width, codes};
  uint8_t bytes[512];
  size_t size = onnx__encoded_value_proto__pack(&e, bytes);
  ol_value *v = NULL;
  CHECK_OK(ol_encoded_value_parse(bytes, size, &v));
  return v;
}

/* A block with parameters along the width, or in another storage type,
 * ends a run and stays shared. */
static void unmergeable_blocks(void) {
  const block_spec specs[] = {{1, 0, OL_DTYPE_INT8, OL_DTYPE_INT8, 0}, {1, 0, OL_DTYPE_INT8, OL_DTYPE_INT8, 0},
                              {1, 0, OL_DTYPE_INT8, OL_DTYPE_INT8, 0}, {1, 0, OL_DTYPE_INT8, OL_DTYPE_INT8, 0},
                              {1, 0, OL_DTYPE_UINT8, OL_DTYPE_INT8, 0}, {1, 0, OL_DTYPE_UINT8, OL_DTYPE_INT8, 0}};
  ol_value *cache = make_cache(specs, 6, 4, 4);
  if (!cache) return;
  /* block 1's key: parameters per column */
  ol_value *blocks[6], *mixed = NULL, *column = per_column_page(4);
  for (size_t i = 0; i < 6; i++) blocks[i] = (ol_value *)ol_paged_cache_block(cache, i);
  ol_value *b1 = NULL;
  if (column) CHECK_OK(ol_page_block_new(1, 1, column, ol_struct_field(blocks[1], "value"), &b1));
  blocks[1] = b1;
  if (b1) CHECK_OK(ol_paged_cache_new(blocks, 6, &mixed));
  ol_value *c = mixed ? compacted(mixed, 64) : NULL;
  /* 0 | 1 (per column) | 2 3 | 4 5 (UINT8 keys) */
  CHECK(c && ol_paged_cache_block_count(c) == 4 && block_length(c, 2) == 2 && block_length(c, 3) == 2);
  CHECK(c && ol_paged_cache_block(c, 0) == ol_paged_cache_block(mixed, 0) &&
        ol_paged_cache_block(c, 1) == ol_paged_cache_block(mixed, 1));
  CHECK(c && tk_paged_same_tokens(mixed, c));
  ol_value_release(c);
  ol_value_release(mixed);
  ol_value_release(b1);
  ol_value_release(column);
  ol_value_release(cache);
}

/* ol_paged_cache_quantize: converted blocks decode within half a scale,
 * others are shared; every bad request fails before anything is made. */
static void quantize_function(void) {
  const block_spec specs[] = {{2, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}, {1, 0, OL_DTYPE_FLOAT, OL_DTYPE_FLOAT, 0}};
  ol_value *cache = make_cache(specs, 2, 4, 4), *out = NULL;
  if (!cache) return;
  const int64_t one[1] = {1}, twice[2] = {0, 0}, beyond[1] = {2};
  ol_page_format int8 = {OL_DTYPE_INT8, 0.01f, 0}, uint2 = {OL_DTYPE_UINT2, 0.5f, 2};
  CHECK_OK(ol_paged_cache_quantize(cache, one, 1, &int8, &uint2, &out));
  if (out) {
    CHECK(ol_paged_cache_block(out, 0) == ol_paged_cache_block(cache, 0));
    ol_page a, b;
    CHECK_OK(ol_page_view(ol_paged_cache_block(cache, 1), 1, &a));
    CHECK_OK(ol_page_view(ol_paged_cache_block(out, 1), 1, &b));
    CHECK(b.key.storage == OL_DTYPE_INT8 && b.value.storage == OL_DTYPE_UINT2 && b.value.zero0 == 2);
    float x[4], y[4];
    ol_page_decode(&a.key, 0, 0, 4, x);
    ol_page_decode(&b.key, 0, 0, 4, y);
    for (int i = 0; i < 4; i++) CHECK(fabsf(x[i] - y[i]) <= 0.005f + 1e-6f);
    ol_page_clear(&a), ol_page_clear(&b);
  }
  ol_value_release(out);
  /* scale 0: calibrated from the block's valid rows (as appended pages are) */
  ol_page_format int8_auto = {OL_DTYPE_INT8, 0.0f, 0}, uint4_auto = {OL_DTYPE_UINT4, 0.0f, 0};
  out = NULL;
  CHECK_OK(ol_paged_cache_quantize(cache, one, 1, &int8_auto, &uint4_auto, &out));
  if (out) {
    ol_page a, b;
    CHECK_OK(ol_page_view(ol_paged_cache_block(cache, 1), 1, &a));
    CHECK_OK(ol_page_view(ol_paged_cache_block(out, 1), 1, &b));
    float x[4], y[4], v[4], w[4], kmax = 0.0f, vmax = 0.0f;
    ol_page_decode(&a.key, 0, 0, 4, x);
    ol_page_decode(&b.key, 0, 0, 4, y);
    ol_page_decode(&a.value, 0, 0, 4, v);
    ol_page_decode(&b.value, 0, 0, 4, w);
    for (int i = 0; i < 4; i++) kmax = fmaxf(kmax, fabsf(x[i])), vmax = fmaxf(vmax, fabsf(v[i]));
    CHECK(kmax > 0.0f && b.key.scale0 == kmax / 127.0f && b.key.zero0 == 0);
    CHECK(vmax > 0.0f && b.value.scale0 == vmax / 7.0f && b.value.zero0 == 8);
    for (int i = 0; i < 4; i++) CHECK(fabsf(x[i] - y[i]) <= b.key.scale0 / 2 + 1e-6f);
    for (int i = 0; i < 4; i++) CHECK(fabsf(v[i] - w[i]) <= b.value.scale0 / 2 + 1e-6f);
    ol_page_clear(&a), ol_page_clear(&b);
  }
  ol_value_release(out);
  ol_page_format int32 = {OL_DTYPE_INT32, 1.0f, 0}, no_scale = {OL_DTYPE_INT8, -1.0f, 0}, wide = {OL_DTYPE_UINT4, 1.0f, 16};
  struct {
    const int64_t *indices;
    size_t count;
    const ol_page_format *key;
    const char *message;
  } bad[] = {{twice, 2, &int8, "repeated"}, {beyond, 1, &int8, "out of range"}, {one, 1, &int32, "cannot be"},
             {one, 1, &no_scale, "must be finite and positive"}, {one, 1, &wide, "outside the uint4 range"}};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    out = NULL;
    CHECK_STATUS(ol_paged_cache_quantize(cache, bad[i].indices, bad[i].count, bad[i].key, &int8, &out),
                 OL_INVALID_ARGUMENT);
    CHECK(out == NULL);
    bool named = strstr(ol_last_error(), bad[i].message) != NULL;
    if (!named) fprintf(stderr, "request %zu: %s\n", i, ol_last_error());
    CHECK(named);
  }
  ol_value_release(cache);
}

OL_TEST_MAIN(TEST(merges_runs_losslessly), TEST(unaligned_codes), TEST(truncated_blocks), TEST(half_pages),
             TEST(bound_and_sharing), TEST(unmergeable_blocks), TEST(quantize_function))
