/* Paged KV caches as runtime values (see paged.h). */
#include "quant/paged.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "onnx_light.pb-c.h"

static const char *const BLOCK_FIELDS[4] = {"start", "length", "key", "value"};

/* ------------------------------------------------------------ codes */

int ol_page_code_bits(ol_dtype storage) {
  switch (storage) {
    case OL_DTYPE_INT8: case OL_DTYPE_UINT8: return 8;
    case OL_DTYPE_INT4: case OL_DTYPE_UINT4: return 4;
    case OL_DTYPE_INT2: case OL_DTYPE_UINT2: return 2;
    default: return 0;
  }
}

static bool code_signed(ol_dtype storage) {
  return storage == OL_DTYPE_INT8 || storage == OL_DTYPE_INT4 || storage == OL_DTYPE_INT2;
}

void ol_page_code_range(ol_dtype storage, int32_t *lo, int32_t *hi) {
  int bits = ol_page_code_bits(storage);
  *lo = code_signed(storage) ? -(1 << (bits - 1)) : 0;
  *hi = code_signed(storage) ? (1 << (bits - 1)) - 1 : (1 << bits) - 1;
}

void ol_page_calibrate(ol_dtype storage, const float *x, int64_t n, float *scale, int32_t *zero) {
  int32_t lo, hi;
  ol_page_code_range(storage, &lo, &hi);
  *zero = lo < 0 ? 0 : (hi + 1) / 2;
  float absmax = 0.0f;
  for (int64_t i = 0; i < n; i++) absmax = fabsf(x[i]) > absmax ? fabsf(x[i]) : absmax;
  *scale = absmax > 0.0f ? absmax / (float)(hi - *zero) : 1.0f;
}

/* Code number e of a packed payload (ONNX raw_data packing: element 0 in
 * the lowest bits). */
static int32_t code_at(ol_dtype storage, const uint8_t *codes, int64_t e) {
  int bits = ol_page_code_bits(storage);
  uint32_t u = bits == 8 ? codes[e] : bits == 4 ? (codes[e >> 1] >> ((e & 1) * 4)) & 0xF
                                                : (codes[e >> 2] >> ((e & 3) * 2)) & 0x3;
  if (code_signed(storage) && (u >> (bits - 1))) return (int32_t)u - (1 << bits);
  return (int32_t)u;
}

static void set_code(ol_dtype storage, uint8_t *codes, int64_t e, int32_t c) {
  int bits = ol_page_code_bits(storage);
  uint32_t u = (uint32_t)c & ((1u << bits) - 1);
  if (bits == 8) {
    codes[e] = (uint8_t)u;
    return;
  }
  int per = 8 / bits, shift = (int)(e % per) * bits;
  uint8_t *b = &codes[e / per];
  *b = (uint8_t)((*b & ~(((1u << bits) - 1) << shift)) | (u << shift));
}

void ol_page_encode(ol_dtype storage, float scale, int32_t zero, const float *x, int64_t n, uint8_t *codes,
                    int64_t at) {
  int32_t lo, hi;
  ol_page_code_range(storage, &lo, &hi);
  for (int64_t i = 0; i < n; i++) {
    float q = rintf(x[i] / scale); /* ties to even */
    float c = q != q ? 0.0f : q + (float)zero; /* NaN encodes as the zero point */
    int32_t v = c <= (float)lo ? lo : c >= (float)hi ? hi : (int32_t)c;
    set_code(storage, codes, at + i, v);
  }
}

void ol_page_decode(const ol_page_payload *p, int64_t t, int64_t w0, int64_t n, float *out) {
  int64_t e0 = t * p->width + w0;
  if (!ol_page_is_affine(p)) {
    const ol_dtype_traits *d = ol_dtype_info(p->storage);
    d->load_row((const char *)p->data + (size_t)e0 * (d->bits / 8), n, out);
    return;
  }
  for (int64_t i = 0; i < n; i++) {
    int64_t k = ol_page_param_index(p, t, w0 + i);
    float scale = p->n_params == 1 ? p->scale0 : p->scales[k];
    int32_t zero = p->n_params == 1 ? p->zero0 : p->zeros[k];
    out[i] = (float)(code_at(p->storage, p->data, e0 + i) - zero) * scale;
  }
}

bool ol_page_row_codes(const ol_page_payload *p, int64_t t, int64_t w0, ol_qpage_codes *out) {
  if (!ol_page_is_affine(p) || (p->n_params != 1 && p->axis != 2)) return false;
  int64_t k = ol_page_param_index(p, t, w0);
  bool one = p->n_params == 1;
  *out = (ol_qpage_codes){.data = p->data, .first = t * p->width + w0, .bits = ol_page_code_bits(p->storage),
                          .signed_codes = code_signed(p->storage), .scale = one ? p->scale0 : p->scales[k],
                          .zero = one ? p->zero0 : p->zeros[k]};
  return true;
}

/* ------------------------------------------------------------ reading */

static bool is_int64_scalar(const ol_value *v) {
  return v && v->kind == OL_VALUE_TENSOR && v->tensor.dtype == OL_DTYPE_INT64 && ol_tcount(&v->tensor) == 1 &&
         v->tensor.rank <= 1;
}

/* Runs for every block of every cache a step reads, so the usual field
 * order (the one blocks are made with) is checked first, name by name. */
static bool is_block(const ol_value *v) {
  if (!v || v->kind != OL_VALUE_STRUCT || v->count != 4) return false;
  bool in_order = true;
  for (size_t i = 0; i < 4 && in_order; i++) in_order = strcmp(v->field_names[i], BLOCK_FIELDS[i]) == 0;
  if (in_order) return true;
  for (size_t i = 0; i < 4; i++)
    if (!ol_struct_field(v, BLOCK_FIELDS[i])) return false;
  return true;
}

static const ol_value *blocks_of(const ol_value *cache) {
  if (!cache || cache->kind != OL_VALUE_STRUCT || cache->count != 1 || strcmp(cache->field_names[0], "blocks") != 0)
    return NULL;
  const ol_value *b = cache->items[0];
  return b && b->kind == OL_VALUE_SEQUENCE ? b : NULL;
}

bool ol_paged_cache_outline_is(const ol_value *value) { return blocks_of(value) != NULL; }

bool ol_paged_cache_block_is(const ol_value *block) { return is_block(block); }

bool ol_paged_cache_is(const ol_value *value) {
  const ol_value *blocks = blocks_of(value);
  if (!blocks) return false;
  for (size_t i = 0; i < blocks->count; i++)
    if (!is_block(blocks->items[i])) return false;
  return true;
}

size_t ol_paged_cache_block_count(const ol_value *cache) {
  const ol_value *b = blocks_of(cache);
  return b ? b->count : 0;
}

const ol_value *ol_paged_cache_block(const ol_value *cache, size_t index) {
  const ol_value *b = blocks_of(cache);
  return b && index < b->count ? b->items[index] : NULL;
}

static ol_status dense_view(const ol_tensor *t, ol_page_payload *out) {
  if (!ol_dtype_computes_f32(t->dtype))
    return ol_error(OL_INVALID_ARGUMENT, "a dense page must be FLOAT, FLOAT16 or BFLOAT16, not %s",
                    ol_dtype_name(t->dtype));
  if (t->rank != 4 || t->dims[0] != 1 || t->dims[1] != 1)
    return ol_error(OL_INVALID_ARGUMENT, "a page must have the shape [1, 1, capacity, width]");
  if (ol_tensor_is_strided(t) || ol_tensor_is_packed(t))
    return ol_error(OL_INVALID_ARGUMENT, "a dense page must be stored row-major");
  out->storage = t->dtype;
  out->data = ol_tdata(t);
  out->capacity = t->dims[2];
  out->width = t->dims[3];
  out->bytes = ol_dtype_storage_bytes(t->dtype, ol_tcount(t));
  return OL_OK;
}

/* The values of a small FLOAT tensor proto (float_data or little-endian raw_data). */
static ol_status proto_floats(const Onnx__TensorProto *t, float *out, int64_t count) {
  if (!t->has_data_type || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
    return ol_error(OL_INVALID_ARGUMENT, "affine scales must be FLOAT");
  if (t->n_float_data == (size_t)count) {
    memcpy(out, t->float_data, sizeof(float) * (size_t)count);
  } else if (t->has_raw_data && t->raw_data.len == sizeof(float) * (size_t)count) {
    memcpy(out, t->raw_data.data, t->raw_data.len);
  } else {
    return ol_error(OL_INVALID_ARGUMENT, "affine scales hold %zu values, the layout needs %lld",
                    t->n_float_data ? t->n_float_data : t->raw_data.len / sizeof(float), (long long)count);
  }
  for (int64_t i = 0; i < count; i++)
    if (!isfinite(out[i]) || out[i] == 0.0f)
      return ol_error(OL_INVALID_ARGUMENT, "affine scale %lld is %g (must be finite and nonzero)", (long long)i,
                      (double)out[i]);
  return OL_OK;
}

/* Zero points of the storage type (raw_data packed, or int32_data). */
static ol_status proto_zeros(const Onnx__TensorProto *t, ol_dtype storage, int32_t *out, int64_t count) {
  if (!t) {
    memset(out, 0, sizeof(int32_t) * (size_t)count);
    return OL_OK;
  }
  if (!t->has_data_type || t->data_type != (int32_t)storage)
    return ol_error(OL_INVALID_ARGUMENT, "the affine zero point is %s, the codes %s",
                    ol_dtype_name(t->has_data_type ? (ol_dtype)t->data_type : OL_DTYPE_UNDEFINED),
                    ol_dtype_name(storage));
  if (t->n_int32_data == (size_t)count) {
    int32_t lo, hi;
    ol_page_code_range(storage, &lo, &hi);
    for (int64_t i = 0; i < count; i++) {
      int32_t v = t->int32_data[i];
      if (v < lo || v > hi) return ol_error(OL_INVALID_ARGUMENT, "affine zero point %d is out of the code range", v);
      out[i] = v;
    }
    return OL_OK;
  }
  if (!t->has_raw_data || t->raw_data.len != ol_dtype_storage_bytes(storage, count))
    return ol_error(OL_INVALID_ARGUMENT, "affine zero points do not hold %lld values", (long long)count);
  for (int64_t i = 0; i < count; i++) out[i] = code_at(storage, t->raw_data.data, i);
  return OL_OK;
}

/* The code type of an affine layout: storage_type, or inferred from the
 * payload size with signed_storage (unique among 8, 4 and 2 bits). */
static ol_status code_type(const Onnx__AffineLayoutProto *a, int64_t count, size_t bytes, ol_dtype *out) {
  if (a->has_storage_type) {
    *out = (ol_dtype)a->storage_type;
    if (!ol_page_code_bits(*out))
      return ol_error(OL_INVALID_ARGUMENT, "affine storage %s is not INT8, UINT8, INT4, UINT4, INT2 or UINT2",
                      ol_dtype_name(*out));
    return OL_OK;
  }
  if (!a->has_signed_storage)
    return ol_error(OL_INVALID_ARGUMENT, "an affine page needs storage_type or signed_storage");
  static const ol_dtype signed_types[3] = {OL_DTYPE_INT8, OL_DTYPE_INT4, OL_DTYPE_INT2};
  static const ol_dtype unsigned_types[3] = {OL_DTYPE_UINT8, OL_DTYPE_UINT4, OL_DTYPE_UINT2};
  int matches = 0;
  for (int i = 0; i < 3; i++)
    if (ol_dtype_storage_bytes(signed_types[i], count) == bytes) {
      *out = a->signed_storage ? signed_types[i] : unsigned_types[i];
      matches++;
    }
  if (matches == 1) return OL_OK;
  return ol_error(OL_INVALID_ARGUMENT,
                  matches ? "the code width of %zu bytes for %lld values is ambiguous (give storage_type)"
                          : "%zu payload bytes fit no 8-, 4- or 2-bit code width for %lld values",
                  bytes, (long long)count);
}

/* The logical [1, 1, capacity, width] FLOAT shape of an encoded page. */
static ol_status logical_shape(const Onnx__EncodedValueProto *e, int64_t *dims) {
  const Onnx__TypeProto *lt = e->logical_type;
  if (!lt || lt->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !lt->tensor_type->shape)
    return ol_error(OL_INVALID_ARGUMENT, "an encoded page needs a logical tensor type with a shape");
  if (lt->tensor_type->elem_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
    return ol_error(OL_INVALID_ARGUMENT, "an encoded page's logical type must be FLOAT");
  const Onnx__TensorShapeProto *shape = lt->tensor_type->shape;
  if (shape->n_dim != 4) return ol_error(OL_INVALID_ARGUMENT, "a page must have the shape [1, 1, capacity, width]");
  for (int d = 0; d < 4; d++) {
    const Onnx__TensorShapeProto__Dimension *dim = shape->dim[d];
    if (dim->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || dim->dim_value < 0)
      return ol_error(OL_INVALID_ARGUMENT, "an encoded page's dimension %d is not concrete", d);
    dims[d] = dim->dim_value;
  }
  if (dims[0] != 1 || dims[1] != 1)
    return ol_error(OL_INVALID_ARGUMENT, "a page must have the shape [1, 1, capacity, width]");
  return OL_OK;
}

static ol_status affine_params(const Onnx__AffineLayoutProto *a, const int64_t *dims, ol_page_payload *out) {
  out->axis = -1;
  int64_t n = 1;
  if (a->has_axis) {
    int64_t axis = a->axis < 0 ? a->axis + 4 : a->axis;
    if (axis < 0 || axis > 3) return ol_error(OL_INVALID_ARGUMENT, "affine axis %lld is out of range", (long long)a->axis);
    if (axis >= 2) out->axis = (int)axis;
    n = dims[axis];
    if (a->has_block_size) {
      if (a->block_size == 0 || a->block_size > (uint64_t)INT64_MAX)
        return ol_error(OL_INVALID_ARGUMENT, "affine block_size must be positive");
      out->block_size = (int64_t)a->block_size;
      n = (dims[axis] + out->block_size - 1) / out->block_size;
    }
    if (axis < 2) n = 1; /* along a dimension of 1: one set */
  } else if (a->has_block_size) {
    return ol_error(OL_INVALID_ARGUMENT, "affine block_size needs an axis");
  }
  if (!a->scale) return ol_error(OL_INVALID_ARGUMENT, "an affine page needs scales");
  if (n < 1) n = 1;
  out->n_params = n;
  out->owned = ol_xmalloc((sizeof(float) + sizeof(int32_t)) * (size_t)n);
  if (!out->owned) return OL_OUT_OF_MEMORY;
  float *scales = out->owned;
  int32_t *zeros = (int32_t *)(scales + n);
  OL_TRY(proto_floats(a->scale, scales, n));
  OL_TRY(proto_zeros(a->zero_point, out->storage, zeros, n));
  out->scales = scales;
  out->zeros = zeros;
  out->scale0 = scales[0];
  out->zero0 = zeros[0];
  return OL_OK;
}

static ol_status encoded_view(const Onnx__EncodedValueProto *e, ol_page_payload *out) {
  if (e->n_external_data || (e->has_data_location && e->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL))
    return ol_error(OL_INVALID_ARGUMENT, "a page's data is external (load it before building the cache)");
  if (e->parameter_ref && e->parameter_ref[0])
    return ol_error(OL_NOT_IMPLEMENTED, "a page with shared quantization parameters ('%s') is not supported",
                    e->parameter_ref);
  if (e->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_AFFINE || !e->affine)
    return ol_error(OL_NOT_IMPLEMENTED, "an encoded page must use an affine layout (structured encodings are "
                                        "not supported by paged caches)");
  int64_t dims[4];
  OL_TRY(logical_shape(e, dims));
  size_t bytes = e->has_raw_data ? e->raw_data.len : 0;
  int64_t count;
  if (__builtin_mul_overflow(dims[2], dims[3], &count)) return ol_error(OL_INVALID_ARGUMENT, "a page is too large");
  OL_TRY(code_type(e->affine, count, bytes, &out->storage));
  if (bytes != ol_dtype_storage_bytes(out->storage, count))
    return ol_error(OL_INVALID_ARGUMENT, "an encoded page holds %zu bytes, %lld %s codes need %zu", bytes,
                    (long long)count, ol_dtype_name(out->storage), ol_dtype_storage_bytes(out->storage, count));
  out->data = e->raw_data.data;
  out->bytes = bytes;
  out->capacity = dims[2];
  out->width = dims[3];
  return affine_params(e->affine, dims, out);
}

ol_status ol_page_payload_view(const ol_value *payload, ol_page_payload *out) {
  memset(out, 0, sizeof *out);
  if (!payload) return ol_error(OL_INVALID_ARGUMENT, "a page payload is missing");
  ol_status s;
  if (payload->kind == OL_VALUE_TENSOR) s = dense_view(&payload->tensor, out);
  else if (payload->kind == OL_VALUE_ENCODED && payload->encoded)
    s = encoded_view((const Onnx__EncodedValueProto *)payload->encoded, out);
  else s = ol_error(OL_INVALID_ARGUMENT, "a page payload must be a tensor or an encoded value");
  if (s != OL_OK) ol_page_payload_clear(out);
  return s;
}

void ol_page_payload_clear(ol_page_payload *p) {
  free(p->owned);
  memset(p, 0, sizeof *p);
}

static int64_t int64_scalar(const ol_value *v) { return *(const int64_t *)ol_tdata(&v->tensor); }

ol_status ol_page_view(const ol_value *block, size_t index, ol_page *out) {
  memset(out, 0, sizeof *out);
  if (!is_block(block))
    return ol_error(OL_INVALID_ARGUMENT, "cache block %zu is not a struct of exactly start, length, key and value",
                    index);
  const ol_value *start = ol_struct_field(block, "start"), *length = ol_struct_field(block, "length");
  if (!is_int64_scalar(start) || !is_int64_scalar(length))
    return ol_error(OL_INVALID_ARGUMENT, "cache block %zu: start and length must be INT64 scalars", index);
  out->start = int64_scalar(start);
  out->length = int64_scalar(length);
  if (out->start < 0) return ol_error(OL_INVALID_ARGUMENT, "cache block %zu: start %lld is negative", index, (long long)out->start);
  if (out->length <= 0)
    return ol_error(OL_INVALID_ARGUMENT, "cache block %zu: length %lld is not positive", index, (long long)out->length);
  ol_status s = ol_page_payload_view(ol_struct_field(block, "key"), &out->key);
  if (s == OL_OK) s = ol_page_payload_view(ol_struct_field(block, "value"), &out->value);
  if (s != OL_OK) {
    ol_page_clear(out);
    return ol_error_wrap(s, "cache block %zu", index);
  }
  if (out->key.capacity != out->value.capacity)
    s = ol_error(OL_INVALID_ARGUMENT, "cache block %zu: key capacity %lld and value capacity %lld differ", index,
                 (long long)out->key.capacity, (long long)out->value.capacity);
  else if (out->length > out->key.capacity)
    s = ol_error(OL_INVALID_ARGUMENT, "cache block %zu: length %lld exceeds the capacity %lld", index,
                 (long long)out->length, (long long)out->key.capacity);
  if (s != OL_OK) ol_page_clear(out);
  return s;
}

void ol_page_clear(ol_page *page) {
  ol_page_payload_clear(&page->key);
  ol_page_payload_clear(&page->value);
}

ol_status ol_paged_cache_validate(const ol_value *cache, int64_t *tokens, int64_t *key_width,
                                  int64_t *value_width) {
  const ol_value *blocks = blocks_of(cache);
  if (!blocks) return ol_error(OL_INVALID_ARGUMENT, "a paged cache is a struct with one field, a 'blocks' sequence");
  int64_t next = 0, kw = 0, vw = 0;
  for (size_t i = 0; i < blocks->count; i++) {
    ol_page page;
    OL_TRY(ol_page_view(blocks->items[i], i, &page));
    ol_status s = OL_OK;
    if (page.start != next)
      s = ol_error(OL_INVALID_ARGUMENT, "cache block %zu starts at %lld, expected %lld (blocks are contiguous from 0)",
                   i, (long long)page.start, (long long)next);
    else if (i > 0 && (page.key.width != kw || page.value.width != vw))
      s = ol_error(OL_INVALID_ARGUMENT, "cache block %zu: key/value widths %lld/%lld differ from block 0's %lld/%lld",
                   i, (long long)page.key.width, (long long)page.value.width, (long long)kw, (long long)vw);
    kw = page.key.width, vw = page.value.width;
    next = page.start + page.length;
    ol_page_clear(&page);
    OL_TRY(s);
  }
  if (tokens) *tokens = next;
  if (key_width) *key_width = kw;
  if (value_width) *value_width = vw;
  return OL_OK;
}

/* ------------------------------------------------------------ making */

ol_status ol_paged_cache_new(ol_value *const *blocks, size_t count, ol_value **out) {
  ol_value *seq = NULL;
  OL_TRY(ol_sequence_create(OL_DTYPE_UNDEFINED, blocks, count, &seq));
  const char *name = "blocks";
  ol_status s = ol_struct_create(&name, &seq, 1, out);
  ol_value_release(seq);
  return s;
}

ol_status ol_page_block_new(int64_t start, int64_t length, ol_value *key, ol_value *value, ol_value **out) {
  ol_value *fields[4] = {NULL, NULL, key, value};
  ol_status s = ol_value_new_tensor(NULL, OL_DTYPE_INT64, 0, NULL, &fields[0]);
  if (s == OL_OK) s = ol_value_new_tensor(NULL, OL_DTYPE_INT64, 0, NULL, &fields[1]);
  if (s == OL_OK) {
    *(int64_t *)ol_tdata(&fields[0]->tensor) = start;
    *(int64_t *)ol_tdata(&fields[1]->tensor) = length;
    s = ol_struct_create(BLOCK_FIELDS, fields, 4, out);
  }
  ol_value_release(fields[0]);
  ol_value_release(fields[1]);
  return s;
}

ol_status ol_page_dense_new(ol_allocator *allocator, ol_dtype dtype, int64_t capacity, int64_t width, ol_value **out) {
  int64_t dims[4] = {1, 1, capacity, width};
  return ol_value_new_tensor_uninit(allocator, dtype, 4, dims, out);
}

/* One allocation holding an affine page's EncodedValueProto, its nested
 * messages, its codes and its parameters. The message comes first (ENCODED
 * values are read as an Onnx__EncodedValueProto). */
typedef struct affine_page {
  Onnx__EncodedValueProto message;
  Onnx__AffineLayoutProto affine;
  Onnx__TensorProto scale, zero;
  Onnx__TypeProto logical;
  Onnx__TypeProto__Tensor tensor;
  Onnx__TensorShapeProto shape;
  Onnx__TensorShapeProto__Dimension dims[4];
  Onnx__TensorShapeProto__Dimension *dim_list[4];
  int64_t param_dims[1];
  uint8_t bytes[]; /* codes, then the scales (floats), then the packed zero points */
} affine_page;

ol_status ol_page_affine_rows_new(ol_dtype storage, const float *scales, const int32_t *zeros, int64_t n_params,
                                  int64_t capacity, int64_t width, ol_value **out, uint8_t **codes, size_t *bytes) {
  *out = NULL;
  if (n_params != 1 && n_params != capacity)
    return ol_error(OL_INVALID_ARGUMENT, "an affine page has 1 or capacity (%lld) parameter sets, not %lld",
                    (long long)capacity, (long long)n_params);
  size_t n = ol_dtype_storage_bytes(storage, capacity * width);
  size_t scales_at = (n + 3) & ~(size_t)3, zeros_at = scales_at + sizeof(float) * (size_t)n_params;
  size_t zero_bytes = ol_dtype_storage_bytes(storage, n_params);
  affine_page *p = ol_xcalloc(1, sizeof *p + zeros_at + zero_bytes);
  if (!p) return OL_OUT_OF_MEMORY;
  p->message = (Onnx__EncodedValueProto)ONNX__ENCODED_VALUE_PROTO__INIT;
  p->affine = (Onnx__AffineLayoutProto)ONNX__AFFINE_LAYOUT_PROTO__INIT;
  p->scale = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  p->zero = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  p->logical = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  p->tensor = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
  p->shape = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
  const int64_t dims[4] = {1, 1, capacity, width};
  for (int d = 0; d < 4; d++) {
    p->dims[d] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    p->dims[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    p->dims[d].dim_value = dims[d];
    p->dim_list[d] = &p->dims[d];
  }
  p->shape.n_dim = 4;
  p->shape.dim = p->dim_list;
  p->tensor.has_elem_type = 1;
  p->tensor.elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  p->tensor.shape = &p->shape;
  p->logical.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  p->logical.tensor_type = &p->tensor;
  uint8_t *scale_bytes = p->bytes + scales_at, *zero_codes = p->bytes + zeros_at;
  memcpy(scale_bytes, scales, sizeof(float) * (size_t)n_params);
  for (int64_t i = 0; i < n_params; i++) set_code(storage, zero_codes, i, zeros[i]);
  p->scale.has_data_type = 1;
  p->scale.data_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT;
  p->scale.has_raw_data = 1;
  p->scale.raw_data = (ProtobufCBinaryData){sizeof(float) * (size_t)n_params, scale_bytes};
  p->zero.has_data_type = 1;
  p->zero.data_type = (int32_t)storage;
  p->zero.has_raw_data = 1;
  p->zero.raw_data = (ProtobufCBinaryData){zero_bytes, zero_codes};
  if (n_params > 1) { /* one set per token (row): axis 2, 1-D parameters */
    p->param_dims[0] = n_params;
    p->scale.n_dims = p->zero.n_dims = 1;
    p->scale.dims = p->zero.dims = p->param_dims;
    p->affine.has_axis = 1;
    p->affine.axis = 2;
  }
  p->affine.has_storage_type = 1;
  p->affine.storage_type = (int32_t)storage;
  p->affine.scale = &p->scale;
  p->affine.zero_point = &p->zero;
  p->message.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_AFFINE;
  p->message.affine = &p->affine;
  p->message.logical_type = &p->logical;
  p->message.has_raw_data = 1;
  p->message.raw_data = (ProtobufCBinaryData){n, p->bytes};
  ol_status s = ol_value_new_encoded(p, free, out);
  if (s != OL_OK) return s; /* p was freed */
  *codes = p->bytes;
  *bytes = n;
  return OL_OK;
}

ol_status ol_page_affine_new(ol_dtype storage, float scale, int32_t zero, int64_t capacity, int64_t width,
                             ol_value **out, uint8_t **codes, size_t *bytes) {
  return ol_page_affine_rows_new(storage, &scale, &zero, 1, capacity, width, out, codes, bytes);
}

void ol_page_copy_codes(ol_dtype storage, const uint8_t *src, int64_t from, uint8_t *dst, int64_t to, int64_t n) {
  int bits = ol_page_code_bits(storage), per = 8 / bits;
  if (from % per == 0 && to % per == 0) { /* whole bytes, plus a partial last one */
    size_t whole = (size_t)(n / per);
    memcpy(dst + to / per, src + from / per, whole);
    from += (int64_t)whole * per, to += (int64_t)whole * per, n -= (int64_t)whole * per;
  }
  for (int64_t i = 0; i < n; i++) set_code(storage, dst, to + i, code_at(storage, src, from + i));
}

/* ------------------------------------------------------------ public API */

ol_status ol_paged_cache_empty(ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_empty: out is NULL");
  *out = NULL;
  return ol_paged_cache_new(NULL, 0, out);
}

ol_status ol_paged_cache_length(const ol_value *cache, int64_t *tokens) {
  if (!tokens) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_length: tokens is NULL");
  *tokens = 0;
  return ol_paged_cache_validate(cache, tokens, NULL, NULL);
}

ol_status ol_paged_cache_payload_bytes(const ol_value *cache, size_t *bytes) {
  if (!bytes) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_payload_bytes: bytes is NULL");
  *bytes = 0;
  OL_TRY(ol_paged_cache_validate(cache, NULL, NULL, NULL));
  size_t total = 0;
  for (size_t i = 0; i < ol_paged_cache_block_count(cache); i++) {
    ol_page page;
    OL_TRY(ol_page_view(ol_paged_cache_block(cache, i), i, &page));
    total += page.key.bytes + page.value.bytes;
    ol_page_clear(&page);
  }
  *bytes = total;
  return OL_OK;
}

ol_status ol_paged_cache_truncate(const ol_value *cache, int64_t tokens, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_truncate: out is NULL");
  *out = NULL;
  if (tokens < 0) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_truncate: tokens %lld is negative", (long long)tokens);
  OL_TRY(ol_paged_cache_validate(cache, NULL, NULL, NULL));
  size_t n = ol_paged_cache_block_count(cache), kept = 0;
  ol_value **blocks = ol_xcalloc(n + 1, sizeof *blocks);
  if (!blocks) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (; s == OL_OK && kept < n; kept++) {
    ol_value *b = (ol_value *)ol_paged_cache_block(cache, kept);
    int64_t start = int64_scalar(ol_struct_field(b, "start")), length = int64_scalar(ol_struct_field(b, "length"));
    if (start >= tokens) break;
    if (start + length <= tokens) {
      blocks[kept] = ol_value_retain(b); /* shared: blocks are immutable */
      continue;
    }
    /* the block crossing the boundary: same payloads, a shorter valid prefix */
    s = ol_page_block_new(start, tokens - start, ol_struct_field(b, "key"), ol_struct_field(b, "value"), &blocks[kept]);
  }
  if (s == OL_OK) s = ol_paged_cache_new(blocks, kept, out);
  for (size_t i = 0; i < kept; i++) ol_value_release(blocks[i]);
  free(blocks);
  return s;
}

ol_status ol_paged_cache_fork(ol_value *cache, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_fork: out is NULL");
  *out = NULL;
  if (!ol_paged_cache_is(cache))
    return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_fork: not a paged cache (a struct of 'blocks': start, length, "
                                         "key, value)");
  *out = ol_value_retain(cache);
  return OL_OK;
}
