/* PagedCacheProto <-> paged cache values (see paged_proto.h). */
#include "ir/paged_proto.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "quant/paged.h"

/* ------------------------------------------------------------ the logical type */

#define MSG(name) .base = PROTOBUF_C_MESSAGE_INIT(&onnx__##name##__descriptor)

static const Onnx__TensorShapeProto__Dimension DIM_ONE = {
    MSG(tensor_shape_proto__dimension), .value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE,
    .dim_value = 1};
static const Onnx__TensorShapeProto__Dimension DIM_ANY = {MSG(tensor_shape_proto__dimension)};
static Onnx__TensorShapeProto__Dimension *const PAGE_DIMS[4] = {
    (Onnx__TensorShapeProto__Dimension *)&DIM_ONE, (Onnx__TensorShapeProto__Dimension *)&DIM_ONE,
    (Onnx__TensorShapeProto__Dimension *)&DIM_ANY, (Onnx__TensorShapeProto__Dimension *)&DIM_ANY};
static const Onnx__TensorShapeProto PAGE_SHAPE = {MSG(tensor_shape_proto), .n_dim = 4,
                                                  .dim = (Onnx__TensorShapeProto__Dimension **)PAGE_DIMS};
static const Onnx__TensorShapeProto SCALAR_SHAPE = {MSG(tensor_shape_proto)};
static const Onnx__TypeProto__Tensor INT64_SCALAR = {MSG(type_proto__tensor), .has_elem_type = 1,
                                                     .elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT64,
                                                     .shape = (Onnx__TensorShapeProto *)&SCALAR_SHAPE};
static const Onnx__TypeProto__Tensor FLOAT_PAGE = {MSG(type_proto__tensor), .has_elem_type = 1,
                                                   .elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT,
                                                   .shape = (Onnx__TensorShapeProto *)&PAGE_SHAPE};
static const Onnx__TypeProto INT64_SCALAR_TYPE = {MSG(type_proto), .value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE,
                                                  .tensor_type = (Onnx__TypeProto__Tensor *)&INT64_SCALAR};
static const Onnx__TypeProto FLOAT_PAGE_TYPE = {MSG(type_proto), .value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE,
                                                .tensor_type = (Onnx__TypeProto__Tensor *)&FLOAT_PAGE};

#define FIELD(field_name, type_proto)                                                                 \
  {                                                                                                   \
    MSG(struct_type_proto__structure__field), .name = (char *)field_name,                            \
        .content_case = ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE,                      \
        .type = (Onnx__TypeProto *)&type_proto                                                       \
  }
static const Onnx__StructTypeProto__Structure__Field BLOCK_FIELDS[4] = {
    FIELD("start", INT64_SCALAR_TYPE), FIELD("length", INT64_SCALAR_TYPE), FIELD("key", FLOAT_PAGE_TYPE),
    FIELD("value", FLOAT_PAGE_TYPE)};
static Onnx__StructTypeProto__Structure__Field *const BLOCK_FIELD_LIST[4] = {
    (Onnx__StructTypeProto__Structure__Field *)&BLOCK_FIELDS[0],
    (Onnx__StructTypeProto__Structure__Field *)&BLOCK_FIELDS[1],
    (Onnx__StructTypeProto__Structure__Field *)&BLOCK_FIELDS[2],
    (Onnx__StructTypeProto__Structure__Field *)&BLOCK_FIELDS[3]};
static const Onnx__StructTypeProto__Structure BLOCK_STRUCTURE = {
    MSG(struct_type_proto__structure), .n_field = 4,
    .field = (Onnx__StructTypeProto__Structure__Field **)BLOCK_FIELD_LIST};
static const Onnx__StructTypeProto BLOCK_STRUCT = {MSG(struct_type_proto),
                                                   .kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE,
                                                   .structure = (Onnx__StructTypeProto__Structure *)&BLOCK_STRUCTURE};
static const Onnx__TypeProto BLOCK_TYPE = {MSG(type_proto), .value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE,
                                           .struct_type = (Onnx__StructTypeProto *)&BLOCK_STRUCT};
static const Onnx__TypeProto__Sequence BLOCK_SEQUENCE = {MSG(type_proto__sequence),
                                                         .elem_type = (Onnx__TypeProto *)&BLOCK_TYPE};
static const Onnx__TypeProto BLOCKS_TYPE = {MSG(type_proto), .value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE,
                                            .sequence_type = (Onnx__TypeProto__Sequence *)&BLOCK_SEQUENCE};
static const Onnx__StructTypeProto__Structure__Field CACHE_FIELD = FIELD("blocks", BLOCKS_TYPE);
static Onnx__StructTypeProto__Structure__Field *const CACHE_FIELD_LIST[1] = {
    (Onnx__StructTypeProto__Structure__Field *)&CACHE_FIELD};
static const Onnx__StructTypeProto__Structure CACHE_STRUCTURE = {
    MSG(struct_type_proto__structure), .n_field = 1,
    .field = (Onnx__StructTypeProto__Structure__Field **)CACHE_FIELD_LIST};
static const Onnx__StringStringEntryProto TYPE_VERSION = {MSG(string_string_entry_proto),
                                                          .key = (char *)"onnx_light.type_version",
                                                          .value = (char *)"1"};
static Onnx__StringStringEntryProto *const CACHE_METADATA[1] = {(Onnx__StringStringEntryProto *)&TYPE_VERSION};
static const Onnx__StructTypeProto CACHE_STRUCT = {
    MSG(struct_type_proto), .name = (char *)"onnx_light.PagedKVCache",
    .doc_string = (char *)"A paged key/value cache: contiguous blocks of start, length and key/value pages "
                          "[1, 1, capacity, width] (dense or affine encoded).",
    .n_metadata_props = 1, .metadata_props = (Onnx__StringStringEntryProto **)CACHE_METADATA,
    .kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE,
    .structure = (Onnx__StructTypeProto__Structure *)&CACHE_STRUCTURE};
static const Onnx__TypeProto CACHE_TYPE = {MSG(type_proto), .value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE,
                                           .struct_type = (Onnx__StructTypeProto *)&CACHE_STRUCT};

const Onnx__TypeProto *ol_paged_cache_type(void) { return &CACHE_TYPE; }

/* ------------------------------------------------------------ parsing */

/* Where payloads come from: viewed in a model's message (owner), or moved
 * out of a message the caller owns (take). */
typedef struct page_source {
  ol_proto_owner *owner;
  bool take;
  ol_status invalid; /* the status of a malformed cache (a model's: OL_INVALID_MODEL) */
} page_source;

static bool tensor_external(const Onnx__TensorProto *t) {
  return t->n_external_data || (t->has_data_location && t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
}

static bool encoded_external(const Onnx__EncodedValueProto *e) {
  return e->n_external_data || (e->has_data_location && e->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
}

static void free_raw(void *data) { free(data); }

/* raw_data moved into a tensor value (the message's buffer, from malloc,
 * becomes the payload). false: not movable as it is (ol_tensor_from_proto
 * then copies it or reports what is wrong). */
static bool move_raw(Onnx__TensorProto *t, ol_dtype dtype, ol_value **out, ol_status *s) {
  int64_t dims[OL_MAX_RANK];
  int rank = (int)t->n_dims;
  if (t->n_dims > OL_MAX_RANK || !t->raw_data.data || (uintptr_t)t->raw_data.data % 16) return false;
  for (int d = 0; d < rank; d++) dims[d] = t->dims[d];
  if (!ol_shape_valid(rank, dims) || ol_dtype_storage_bytes(dtype, ol_shape_count(rank, dims)) != t->raw_data.len)
    return false;
  ol_buffer *b = ol_buffer_wrap(t->raw_data.data, t->raw_data.len, free_raw, t->raw_data.data);
  if (!b) {
    *s = OL_OUT_OF_MEMORY;
    return true;
  }
  t->raw_data.data = NULL; /* the buffer frees it now */
  t->raw_data.len = 0;
  t->has_raw_data = 0;
  *s = ol_value_new_view(b, 0, dtype, rank, dims, out);
  ol_buffer_release(b);
  return true;
}

/* A dense page: raw_data, float_data (FLOAT) or int32_data holding 16-bit
 * patterns (FLOAT16, BFLOAT16). */
static ol_status dense_payload(Onnx__TensorProto *t, const page_source *src, size_t block, const char *which,
                               ol_value **out) {
  ol_dtype dtype = t->has_data_type ? (ol_dtype)t->data_type : OL_DTYPE_UNDEFINED;
  if (dtype != OL_DTYPE_FLOAT && dtype != OL_DTYPE_FLOAT16 && dtype != OL_DTYPE_BFLOAT16)
    return ol_error(OL_INVALID_ARGUMENT, "cache block %zu: a dense %s page must be FLOAT, FLOAT16 or BFLOAT16, not %s",
                    block, which, ol_dtype_name(dtype));
  if (tensor_external(t))
    return ol_error(OL_INVALID_ARGUMENT,
                    "cache block %zu: the %s page's data is external (load it before building the cache)", block,
                    which);
  if (!t->has_raw_data) {
    bool wide = dtype == OL_DTYPE_FLOAT;
    size_t typed = wide ? t->n_float_data : t->n_int32_data, other = wide ? t->n_int32_data : t->n_float_data;
    if (other || t->n_int64_data || t->n_double_data || t->n_uint64_data || t->n_string_data)
      return ol_error(OL_INVALID_ARGUMENT, "cache block %zu: a %s %s page holds raw_data or %s only", block,
                      ol_dtype_name(dtype), which, wide ? "float_data" : "int32_data (16-bit values)");
    for (size_t i = 0; !wide && i < typed; i++)
      if (t->int32_data[i] < 0 || t->int32_data[i] > 0xFFFF)
        return ol_error(OL_INVALID_ARGUMENT, "cache block %zu: %s int32_data[%zu] = %d is not a 16-bit value", block,
                        which, i, (int)t->int32_data[i]);
  }
  ol_status s = OL_OK;
  if (src->take && t->has_raw_data && move_raw(t, dtype, out, &s)) return s;
  ol_tensor_source from = {NULL, src->owner};
  s = ol_tensor_from_proto(t, &from, out);
  return s == OL_OK ? OL_OK : ol_error_wrap(s, "cache block %zu: %s page", block, which);
}

static void free_encoded(void *payload) { onnx__encoded_value_proto__free_unpacked(payload, NULL); }

/* An encoded page: the message itself (viewed or moved, never decoded here). */
static ol_status encoded_payload(Onnx__EncodedValueProto **slot, const page_source *src, size_t block,
                                 const char *which, ol_value **out) {
  Onnx__EncodedValueProto *e = *slot;
  if (encoded_external(e))
    return ol_error(OL_INVALID_ARGUMENT,
                    "cache block %zu: the encoded %s page's data is external (load it before building the cache)",
                    block, which);
  if (!src->take) return ol_encoded_view_new(e, src->owner, out);
  *slot = NULL; /* the value owns it from here, also if making it fails */
  return ol_value_new_encoded(e, free_encoded, out);
}

static ol_status block_value(Onnx__PagedCacheBlockProto *b, size_t i, const page_source *src, ol_value **out) {
  *out = NULL;
  if (b->key_payload_case == ONNX__PAGED_CACHE_BLOCK_PROTO__KEY_PAYLOAD__NOT_SET || !b->key)
    return ol_error(OL_INVALID_ARGUMENT, "cache block %zu has no key payload (key or encoded_key)", i);
  if (b->value_payload_case == ONNX__PAGED_CACHE_BLOCK_PROTO__VALUE_PAYLOAD__NOT_SET || !b->value)
    return ol_error(OL_INVALID_ARGUMENT, "cache block %zu has no value payload (value or encoded_value)", i);
  if (!b->has_start) return ol_error(OL_INVALID_ARGUMENT, "cache block %zu has no start", i);
  if (!b->has_length) return ol_error(OL_INVALID_ARGUMENT, "cache block %zu has no length", i);
  ol_value *key = NULL, *value = NULL;
  ol_status s = b->key_payload_case == ONNX__PAGED_CACHE_BLOCK_PROTO__KEY_PAYLOAD_KEY
                    ? dense_payload(b->key, src, i, "key", &key)
                    : encoded_payload(&b->encoded_key, src, i, "key", &key);
  if (s == OL_OK)
    s = b->value_payload_case == ONNX__PAGED_CACHE_BLOCK_PROTO__VALUE_PAYLOAD_VALUE
            ? dense_payload(b->value, src, i, "value", &value)
            : encoded_payload(&b->encoded_value, src, i, "value", &value);
  if (s == OL_OK) s = ol_page_block_new(b->start, b->length, key, value, out);
  ol_value_release(key);
  ol_value_release(value);
  return s;
}

static ol_status from_proto(Onnx__PagedCacheProto *proto, const page_source *src, ol_value **out) {
  *out = NULL;
  ol_value **blocks = ol_xcalloc(proto->n_blocks + 1, sizeof *blocks);
  if (!blocks) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  size_t made = 0;
  for (; s == OL_OK && made < proto->n_blocks; made++) s = block_value(proto->blocks[made], made, src, &blocks[made]);
  if (s == OL_OK) s = ol_paged_cache_new(blocks, made, out);
  for (size_t i = 0; i < made; i++) ol_value_release(blocks[i]);
  free(blocks);
  /* ranges, capacities, widths, formats and extents: checked on the values */
  if (s == OL_OK && (s = ol_paged_cache_validate(*out, NULL, NULL, NULL)) != OL_OK) {
    ol_value_release(*out);
    *out = NULL;
  }
  if (s == OL_OK || s == OL_OUT_OF_MEMORY) return s;
  ol_status code = s == OL_NOT_IMPLEMENTED ? s : src->invalid;
  return proto->name && proto->name[0] ? ol_error_wrap(code, "paged cache '%s'", proto->name)
                                        : ol_error_wrap(code, "paged cache");
}

ol_status ol_paged_cache_from_model_proto(const Onnx__PagedCacheProto *proto, ol_proto_owner *owner,
                                          ol_value **out) {
  page_source src = {owner, false, OL_INVALID_MODEL};
  return from_proto((Onnx__PagedCacheProto *)proto, &src, out); /* not modified without take */
}

ol_status ol_paged_cache_from_proto_take(Onnx__PagedCacheProto *proto, ol_value **out) {
  page_source src = {NULL, true, OL_INVALID_ARGUMENT};
  return from_proto(proto, &src, out);
}

/* ------------------------------------------------------------ public: bytes */

ol_status ol_paged_cache_parse(const void *bytes, size_t size, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_parse: out is NULL");
  *out = NULL;
  if (!bytes && size) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_parse: bytes is NULL");
  static const uint8_t none = 0;
  Onnx__PagedCacheProto *proto = onnx__paged_cache_proto__unpack(NULL, size, size ? bytes : &none);
  if (!proto) return ol_error(OL_INVALID_ARGUMENT, "not a serialized PagedCacheProto (%zu bytes)", size);
  ol_status s = ol_paged_cache_from_proto_take(proto, out);
  onnx__paged_cache_proto__free_unpacked(proto, NULL);
  return s;
}

/* The messages of one exported block; payloads point into the cache's
 * values (nothing is copied or decoded). */
typedef struct export_block {
  Onnx__PagedCacheBlockProto block;
  Onnx__TensorProto key, value;
  int64_t key_dims[4], value_dims[4];
} export_block;

static void dense_message(const ol_tensor *t, Onnx__TensorProto *tp, int64_t *dims) {
  onnx__tensor_proto__init(tp);
  tp->has_data_type = 1;
  tp->data_type = (int32_t)t->dtype;
  for (int d = 0; d < 4; d++) dims[d] = t->dims[d];
  tp->n_dims = 4;
  tp->dims = dims;
  tp->has_raw_data = 1;
  tp->raw_data.len = ol_dtype_storage_bytes(t->dtype, ol_tcount(t));
  tp->raw_data.data = ol_tdata(t);
}

ol_status ol_paged_cache_serialize(const ol_value *cache, void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_serialize: NULL output");
  *out_bytes = NULL;
  *out_size = 0;
  if (!cache) return ol_error(OL_INVALID_ARGUMENT, "ol_paged_cache_serialize: cache is NULL");
  /* payload types, shapes and page ranges are checked before export (by
   * compacting, which also keeps one-token blocks from dominating the bytes) */
  ol_value *compact = NULL;
  OL_TRY(ol_paged_cache_compact(cache, OL_PAGED_CACHE_COMPACT_TOKENS, &compact));
  cache = compact;
  size_t n = ol_paged_cache_block_count(cache);
  export_block *blocks = ol_xcalloc(n + 1, sizeof *blocks);
  Onnx__PagedCacheBlockProto **list = ol_xcalloc(n + 1, sizeof *list);
  if (!blocks || !list) {
    free(blocks);
    free(list);
    ol_value_release(compact);
    return OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < n; i++) {
    const ol_value *b = ol_paged_cache_block(cache, i);
    const ol_value *key = ol_struct_field(b, "key"), *value = ol_struct_field(b, "value");
    export_block *e = &blocks[i];
    onnx__paged_cache_block_proto__init(&e->block);
    e->block.has_start = e->block.has_length = 1;
    e->block.start = *(const int64_t *)ol_tdata(&ol_struct_field(b, "start")->tensor);
    e->block.length = *(const int64_t *)ol_tdata(&ol_struct_field(b, "length")->tensor);
    if (key->kind == OL_VALUE_TENSOR) {
      dense_message(&key->tensor, &e->key, e->key_dims);
      e->block.key_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__KEY_PAYLOAD_KEY;
      e->block.key = &e->key;
    } else {
      e->block.key_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__KEY_PAYLOAD_ENCODED_KEY;
      e->block.encoded_key = key->encoded;
    }
    if (value->kind == OL_VALUE_TENSOR) {
      dense_message(&value->tensor, &e->value, e->value_dims);
      e->block.value_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__VALUE_PAYLOAD_VALUE;
      e->block.value = &e->value;
    } else {
      e->block.value_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__VALUE_PAYLOAD_ENCODED_VALUE;
      e->block.encoded_value = value->encoded;
    }
    list[i] = &e->block;
  }
  Onnx__PagedCacheProto proto = ONNX__PAGED_CACHE_PROTO__INIT;
  proto.n_blocks = n;
  proto.blocks = list;
  size_t size = onnx__paged_cache_proto__get_packed_size(&proto);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (bytes) onnx__paged_cache_proto__pack(&proto, bytes);
  free(blocks);
  free(list);
  ol_value_release(compact);
  if (!bytes) return OL_OUT_OF_MEMORY;
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}
