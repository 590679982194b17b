/* Paged caches as bytes, initializers and persistent state (ir/paged_proto.h,
 * the ol_paged_cache_* API, runtime/state.c): every PagedCacheProto
 * rejection, typed 16-bit and float fields, byte round trips with quantized
 * pages, a state running PagedAttention with events (dense and int8/uint4
 * policies), resuming from a serialized cache placed in a new model's
 * paged_cache_initializer (bit-identical to the uninterrupted run), session
 * defaults and overrides, name clashes, text export refused, shape
 * inference recording the cache type, truncate/fork, cache declarations,
 * and failures that leave a state untouched. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"
#include "ir/model.h"
#include "ir/paged_proto.h"
#include "onnx_light.pb-c.h"
#include "quant/paged.h"

static bool error_has(const char *text) {
  if (strstr(ol_last_error(), text)) return true;
  fprintf(stderr, "error text lacks '%s': %s\n", text, ol_last_error());
  return false;
}

/* ------------------------------------------------------------ PagedCacheProto messages */

/* Up to 4 blocks with dense FLOAT pages [1, 1, capacity, width]; tests
 * break one field, pack the message and parse the bytes. */
typedef struct proto_page {
  Onnx__TensorProto tensor;
  Onnx__EncodedValueProto encoded;
  Onnx__AffineLayoutProto affine;
  Onnx__TensorProto scale;
  Onnx__TypeProto logical;
  Onnx__TypeProto__Tensor logical_tensor;
  Onnx__TensorShapeProto shape;
  Onnx__TensorShapeProto__Dimension dims[4];
  Onnx__TensorShapeProto__Dimension *dim_list[4];
  Onnx__StringStringEntryProto location;
  Onnx__StringStringEntryProto *locations[1];
  int64_t tensor_dims[4];
  float data[64];
  float scale_value;
  uint8_t codes[64];
} proto_page;

typedef struct proto_cache {
  Onnx__PagedCacheProto cache;
  Onnx__PagedCacheBlockProto blocks[4];
  Onnx__PagedCacheBlockProto *list[4];
  proto_page key[4], value[4];
} proto_cache;

static void dense_page(proto_page *p, int64_t capacity, int64_t width, float base) {
  p->tensor = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  p->tensor.has_data_type = 1;
  p->tensor.data_type = OL_DTYPE_FLOAT;
  int64_t dims[4] = {1, 1, capacity, width};
  memcpy(p->tensor_dims, dims, sizeof dims);
  p->tensor.n_dims = 4;
  p->tensor.dims = p->tensor_dims;
  for (int i = 0; i < capacity * width; i++) p->data[i] = base + 0.25f * (float)i;
  p->tensor.has_raw_data = 1;
  p->tensor.raw_data = (ProtobufCBinaryData){sizeof(float) * (size_t)(capacity * width), (uint8_t *)p->data};
}

/* An affine INT8 page (scale 0.5, zero 0) with codes 0, 1, 2, ... */
static void int8_page(proto_page *p, int64_t capacity, int64_t width) {
  p->encoded = (Onnx__EncodedValueProto)ONNX__ENCODED_VALUE_PROTO__INIT;
  p->affine = (Onnx__AffineLayoutProto)ONNX__AFFINE_LAYOUT_PROTO__INIT;
  p->scale = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  p->logical = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  p->logical_tensor = (Onnx__TypeProto__Tensor)ONNX__TYPE_PROTO__TENSOR__INIT;
  p->shape = (Onnx__TensorShapeProto)ONNX__TENSOR_SHAPE_PROTO__INIT;
  int64_t dims[4] = {1, 1, capacity, width};
  for (int d = 0; d < 4; d++) {
    p->dims[d] = (Onnx__TensorShapeProto__Dimension)ONNX__TENSOR_SHAPE_PROTO__DIMENSION__INIT;
    p->dims[d].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    p->dims[d].dim_value = dims[d];
    p->dim_list[d] = &p->dims[d];
  }
  p->shape.n_dim = 4;
  p->shape.dim = p->dim_list;
  p->logical_tensor.has_elem_type = 1;
  p->logical_tensor.elem_type = OL_DTYPE_FLOAT;
  p->logical_tensor.shape = &p->shape;
  p->logical.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  p->logical.tensor_type = &p->logical_tensor;
  p->scale_value = 0.5f;
  p->scale.has_data_type = 1;
  p->scale.data_type = OL_DTYPE_FLOAT;
  p->scale.n_float_data = 1;
  p->scale.float_data = &p->scale_value;
  p->affine.has_storage_type = 1;
  p->affine.storage_type = OL_DTYPE_INT8;
  p->affine.scale = &p->scale;
  for (int i = 0; i < capacity * width; i++) p->codes[i] = (uint8_t)i;
  p->encoded.layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_AFFINE;
  p->encoded.affine = &p->affine;
  p->encoded.logical_type = &p->logical;
  p->encoded.has_raw_data = 1;
  p->encoded.raw_data = (ProtobufCBinaryData){(size_t)(capacity * width), p->codes};
}

/* n blocks of `length` tokens (capacity 2, key width 3, value width 2). */
static void proto_init(proto_cache *c, size_t n, int64_t length) {
  memset(c, 0, sizeof *c);
  c->cache = (Onnx__PagedCacheProto)ONNX__PAGED_CACHE_PROTO__INIT;
  for (size_t i = 0; i < n; i++) {
    Onnx__PagedCacheBlockProto *b = &c->blocks[i];
    *b = (Onnx__PagedCacheBlockProto)ONNX__PAGED_CACHE_BLOCK_PROTO__INIT;
    b->has_start = b->has_length = 1;
    b->start = (int64_t)i * length;
    b->length = length;
    dense_page(&c->key[i], 2, 3, (float)i);
    dense_page(&c->value[i], 2, 2, -(float)i);
    b->key_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__KEY_PAYLOAD_KEY;
    b->key = &c->key[i].tensor;
    b->value_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__VALUE_PAYLOAD_VALUE;
    b->value = &c->value[i].tensor;
    c->list[i] = b;
  }
  c->cache.n_blocks = n;
  c->cache.blocks = c->list;
}

static void use_encoded_key(proto_cache *c, size_t i) {
  int8_page(&c->key[i], 2, 3);
  c->blocks[i].key_payload_case = ONNX__PAGED_CACHE_BLOCK_PROTO__KEY_PAYLOAD_ENCODED_KEY;
  c->blocks[i].encoded_key = &c->key[i].encoded;
}

static ol_status parse_message(const Onnx__PagedCacheProto *m, ol_value **out) {
  size_t size = onnx__paged_cache_proto__get_packed_size(m);
  uint8_t *bytes = malloc(size + 1);
  onnx__paged_cache_proto__pack(m, bytes);
  ol_status s = ol_paged_cache_parse(bytes, size, out);
  free(bytes);
  return s;
}

typedef void (*breaker)(proto_cache *c);
static void no_key(proto_cache *c) { c->blocks[1].key_payload_case = 0, c->blocks[1].key = NULL; }
static void no_value(proto_cache *c) { c->blocks[0].value_payload_case = 0, c->blocks[0].value = NULL; }
static void no_start(proto_cache *c) { c->blocks[1].has_start = 0; }
static void no_length(proto_cache *c) { c->blocks[0].has_length = 0; }
static void negative_start(proto_cache *c) { c->blocks[0].start = -1; }
static void gap(proto_cache *c) { c->blocks[1].start = 5; }
static void zero_length(proto_cache *c) { c->blocks[1].length = 0, c->blocks[1].start = 2; }
static void too_long(proto_cache *c) { c->blocks[1].length = 3; }
static void capacity_mismatch(proto_cache *c) { dense_page(&c->value[1], 3, 2, 0); }
static void width_mismatch(proto_cache *c) { dense_page(&c->key[1], 2, 4, 0); }
static void symbolic_encoded_dim(proto_cache *c) {
  use_encoded_key(c, 1);
  c->key[1].dims[2].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
  c->key[1].dims[2].dim_param = (char *)"T";
}
static void external_dense(proto_cache *c) {
  proto_page *p = &c->value[1];
  p->tensor.has_raw_data = 0;
  p->tensor.has_data_location = 1;
  p->tensor.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  p->location = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  p->location.key = (char *)"location";
  p->location.value = (char *)"pages.bin";
  p->locations[0] = &p->location;
  p->tensor.n_external_data = 1;
  p->tensor.external_data = p->locations;
}
static void external_encoded(proto_cache *c) {
  use_encoded_key(c, 0);
  proto_page *p = &c->key[0];
  p->encoded.has_raw_data = 0;
  p->location = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  p->location.key = (char *)"location";
  p->location.value = (char *)"pages.bin";
  p->locations[0] = &p->location;
  p->encoded.n_external_data = 1;
  p->encoded.external_data = p->locations;
}
/* one code: 8, 4 and 2 bits all fit one byte */
static void ambiguous_signed_storage(proto_cache *c) {
  use_encoded_key(c, 0);
  proto_page *p = &c->key[0];
  p->dims[2].dim_value = 1, p->dims[3].dim_value = 1;
  p->encoded.raw_data.len = 1;
  p->affine.has_storage_type = 0;
  p->affine.has_signed_storage = 1;
  p->affine.signed_storage = 1;
  c->blocks[0].length = 1, c->blocks[1].start = 1;
  dense_page(&c->value[0], 1, 2, 0);
  dense_page(&c->key[1], 2, 1, 0);
}
static void int32_page(proto_cache *c) {
  proto_page *p = &c->key[0];
  p->tensor.data_type = OL_DTYPE_INT32;
}
static void wide_16bit(proto_cache *c) {
  static int32_t codes[6] = {0x3C00, 0x4000, 0x10000, 0, 0, 0};
  proto_page *p = &c->key[0];
  p->tensor.data_type = OL_DTYPE_FLOAT16;
  p->tensor.has_raw_data = 0;
  p->tensor.n_int32_data = 6;
  p->tensor.int32_data = codes;
}

static void proto_rejections(void) {
  static const struct {
    breaker fn;
    const char *message;
  } cases[] = {
      {no_key, "cache block 1 has no key payload (key or encoded_key)"},
      {no_value, "cache block 0 has no value payload (value or encoded_value)"},
      {no_start, "cache block 1 has no start"},
      {no_length, "cache block 0 has no length"},
      {negative_start, "cache block 0: start -1 is negative"},
      {gap, "cache block 1 starts at 5, expected 2"},
      {zero_length, "cache block 1: length 0 is not positive"},
      {too_long, "cache block 1: length 3 exceeds the capacity 2"},
      {capacity_mismatch, "cache block 1: key capacity 2 and value capacity 3 differ"},
      {width_mismatch, "cache block 1: key/value widths 4/2 differ from block 0's 3/2"},
      {symbolic_encoded_dim, "cache block 1: an encoded page's dimension 2 is not concrete"},
      {external_dense, "cache block 1: the value page's data is external"},
      {external_encoded, "cache block 0: the encoded key page's data is external"},
      {ambiguous_signed_storage, "cache block 0: the code width of 1 bytes for 1 values is ambiguous"},
      {int32_page, "cache block 0: a dense key page must be FLOAT, FLOAT16 or BFLOAT16, not int32"},
      {wide_16bit, "cache block 0: key int32_data[2] = 65536 is not a 16-bit value"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    proto_cache c;
    proto_init(&c, 2, 2);
    c.cache.name = (char *)"kv";
    cases[i].fn(&c);
    ol_value *v = (ol_value *)1;
    CHECK_STATUS(parse_message(&c.cache, &v), OL_INVALID_ARGUMENT);
    CHECK(v == NULL);
    CHECK(error_has("paged cache 'kv': ") && error_has(cases[i].message));
  }
  /* the message itself valid: both blocks parse */
  proto_cache c;
  proto_init(&c, 2, 2);
  use_encoded_key(&c, 1);
  ol_value *v = NULL;
  CHECK_OK(parse_message(&c.cache, &v));
  int64_t tokens = 0;
  CHECK_OK(ol_paged_cache_length(v, &tokens));
  CHECK(tokens == 4);
  ol_value_release(v);
  /* malformed bytes: an error, never a crash */
  static const uint8_t garbage[][6] = {{0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF}, {0x0A, 0x05, 0x08, 0x01}, {0x0A, 0x80}};
  static const size_t sizes[] = {6, 4, 2};
  for (size_t i = 0; i < 3; i++) {
    v = (ol_value *)1;
    CHECK_STATUS(ol_paged_cache_parse(garbage[i], sizes[i], &v), OL_INVALID_ARGUMENT);
    CHECK(v == NULL && error_has("not a serialized PagedCacheProto"));
  }
  CHECK_STATUS(ol_paged_cache_parse(NULL, 3, &v), OL_INVALID_ARGUMENT);
  /* no bytes: the empty cache */
  CHECK_OK(ol_paged_cache_parse(NULL, 0, &v));
  CHECK(v && ol_paged_cache_block_count(v) == 0 && ol_paged_cache_is(v));
  ol_value_release(v);
}

/* float_data pages, and FLOAT16/BFLOAT16 pages from int32_data (16-bit
 * patterns packed into owned storage); export writes raw_data. */
static void typed_fields(void) {
  proto_cache c;
  proto_init(&c, 2, 2);
  static const float floats[6] = {1, 2, 3, 4, 5, 6};
  Onnx__TensorProto *k0 = &c.key[0].tensor;
  k0->has_raw_data = 0;
  k0->n_float_data = 6;
  k0->float_data = (float *)floats;
  static int32_t halves[4] = {0x3C00, 0x4000, 0xC200, 0x3800};   /* 1, 2, -3, 0.5 as float16 */
  static int32_t brains[6] = {0x3F80, 0x4000, 0xC040, 0x3F00, 0, 0}; /* 1, 2, -3, 0.5 as bfloat16 */
  Onnx__TensorProto *v0 = &c.value[0].tensor, *k1 = &c.key[1].tensor;
  v0->data_type = OL_DTYPE_FLOAT16, v0->has_raw_data = 0, v0->n_int32_data = 4, v0->int32_data = halves;
  k1->data_type = OL_DTYPE_BFLOAT16, k1->has_raw_data = 0, k1->n_int32_data = 6, k1->int32_data = brains;
  ol_value *v = NULL;
  CHECK_OK(parse_message(&c.cache, &v));
  if (!v) return;
  ol_page p0, p1;
  CHECK_OK(ol_page_view(ol_paged_cache_block(v, 0), 0, &p0));
  CHECK_OK(ol_page_view(ol_paged_cache_block(v, 1), 1, &p1));
  float row[3];
  ol_page_decode(&p0.key, 1, 0, 3, row);
  CHECK(row[0] == 4 && row[1] == 5 && row[2] == 6);
  ol_page_decode(&p0.value, 1, 0, 2, row);
  CHECK(p0.value.storage == OL_DTYPE_FLOAT16 && row[0] == -3 && row[1] == 0.5f);
  ol_page_decode(&p1.key, 0, 0, 3, row);
  CHECK(p1.key.storage == OL_DTYPE_BFLOAT16 && row[0] == 1 && row[1] == 2 && row[2] == -3);
  ol_page_clear(&p0), ol_page_clear(&p1);
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(ol_paged_cache_serialize(v, &bytes, &size));
  Onnx__PagedCacheProto *m = bytes ? onnx__paged_cache_proto__unpack(NULL, size, bytes) : NULL;
  CHECK(m && m->n_blocks == 2);
  if (m && m->n_blocks == 2) {
    const Onnx__TensorProto *t = m->blocks[0]->value;
    CHECK(t->data_type == OL_DTYPE_FLOAT16 && t->has_raw_data && t->raw_data.len == 8 && t->n_int32_data == 0);
    CHECK(((const uint16_t *)t->raw_data.data)[2] == 0xC200);
    t = m->blocks[0]->key;
    CHECK(t->has_raw_data && t->n_float_data == 0 && memcmp(t->raw_data.data, floats, 24) == 0);
    CHECK(m->blocks[1]->key->n_dims == 4 && m->blocks[1]->key->dims[2] == 2 && m->blocks[1]->key->dims[3] == 3);
  }
  if (m) onnx__paged_cache_proto__free_unpacked(m, NULL);
  ol_free(bytes);
  ol_value_release(v);
}

/* ------------------------------------------------------------ models */

/* q, k, v and past; past and present get a cache type (model_spec) */
static const char *ATTENTION =
    "<ir_version: 10, opset_import: [\"\" : 18, \"ai.rt\" : 1]>\n"
    "g (float[1,2,L,4] q, float[1,2,L,4] k, float[1,2,L,4] v, float[1] past) => (float[1,2,L,4] y, float[1] present) {\n"
    "  y, present = ai.rt.PagedAttention <block_size = 2> (q, k, v, past)\n}";

typedef struct model_spec {
  const char *text;
  const Onnx__TypeProto *cache_type; /* past's and present's (NULL: as in the text) */
  const Onnx__TypeProto *present_type; /* NULL: cache_type */
  bool bind;                         /* past <- present */
  const void *cache;                 /* serialized cache for a paged_cache_initializer */
  size_t cache_size;
  const char *cache_name;
  Onnx__StructTypeProto **catalogue; /* ModelProto.struct_types */
  size_t catalogue_size;
} model_spec;

/* The serialized model of spec (ol_free). */
static void *model_bytes(const model_spec *spec, size_t *out_size) {
  size_t size = 0;
  void *text_bytes = tk_serialized(spec->text, &size);
  if (!text_bytes) return NULL;
  Onnx__ModelProto *mp = onnx__model_proto__unpack(NULL, size, text_bytes);
  ol_free(text_bytes);
  Onnx__GraphProto *g = mp->graph;
  Onnx__TypeProto *saved[8] = {0};
  Onnx__ValueInfoProto *where[8] = {0};
  size_t n = 0;
  for (size_t i = 0; spec->cache_type && i < g->n_input + g->n_output && n < 8; i++) {
    Onnx__ValueInfoProto *vi = i < g->n_input ? g->input[i] : g->output[i - g->n_input];
    bool past = strcmp(vi->name, "past") == 0, present = strcmp(vi->name, "present") == 0;
    if (!past && !present) continue;
    where[n] = vi;
    saved[n++] = vi->type;
    vi->type = (Onnx__TypeProto *)(present && spec->present_type ? spec->present_type : spec->cache_type);
  }
  Onnx__PersistentBindingProto binding = ONNX__PERSISTENT_BINDING_PROTO__INIT, *bindings[1] = {&binding};
  binding.input_name = (char *)"past";
  binding.output_name = (char *)"present";
  if (spec->bind) g->n_persistent_bindings = 1, g->persistent_bindings = bindings;
  Onnx__PagedCacheProto *pc = spec->cache ? onnx__paged_cache_proto__unpack(NULL, spec->cache_size, spec->cache) : NULL;
  CHECK(!spec->cache || pc);
  Onnx__PagedCacheProto *caches[1] = {pc};
  if (pc) {
    pc->name = (char *)spec->cache_name;
    g->n_paged_cache_initializer = 1;
    g->paged_cache_initializer = caches;
  }
  mp->n_struct_types = spec->catalogue_size;
  mp->struct_types = spec->catalogue;
  *out_size = onnx__model_proto__get_packed_size(mp);
  uint8_t *bytes = malloc(*out_size);
  onnx__model_proto__pack(mp, bytes);
  /* give the message back what it owns before freeing it */
  for (size_t i = 0; i < n; i++) where[i]->type = saved[i];
  g->n_persistent_bindings = 0, g->persistent_bindings = NULL;
  g->n_paged_cache_initializer = 0, g->paged_cache_initializer = NULL;
  mp->n_struct_types = 0, mp->struct_types = NULL;
  if (pc) {
    pc->name = NULL;
    onnx__paged_cache_proto__free_unpacked(pc, NULL);
  }
  onnx__model_proto__free_unpacked(mp, NULL);
  return bytes;
}

static ol_model *make_model(const model_spec *spec) {
  size_t size = 0;
  void *bytes = model_bytes(spec, &size);
  ol_model *m = NULL;
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &m));
  free(bytes);
  return m;
}

static const Onnx__TypeProto LAYOUTLESS_STRUCT = {
    .base = PROTOBUF_C_MESSAGE_INIT(&onnx__type_proto__descriptor), .value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE,
    .struct_type = &(Onnx__StructTypeProto){.base = PROTOBUF_C_MESSAGE_INIT(&onnx__struct_type_proto__descriptor)}};

/* ------------------------------------------------------------ running */

/* q, k or v [1, 2, L, 4] for tokens [from, from + L): the same numbers
 * however a sequence is split into steps. */
static ol_value *qkv(int which, int64_t from, int64_t L) {
  int64_t dims[4] = {1, 2, L, 4};
  ol_value *t = tk_f32(4, dims, NULL);
  float *x = ol_tdata(&t->tensor);
  for (int64_t h = 0; h < 2; h++)
    for (int64_t l = 0; l < L; l++)
      for (int64_t d = 0; d < 4; d++) {
        uint32_t u = (uint32_t)(((which * 7 + h) * 1031 + (from + l)) * 17 + d) * 2654435761u;
        u ^= u >> 13;
        *x++ = (float)(u % 2001) / 1000.0f - 1.0f;
      }
  return t;
}

static const char *QKV[3] = {"q", "k", "v"};

/* One state step of L tokens from `from`; *y gets the output (may be NULL). */
static ol_status step(ol_state *st, ol_context *ctx, int64_t from, int64_t L, ol_completion *done, ol_value **y) {
  ol_value *in[3] = {qkv(0, from, L), qkv(1, from, L), qkv(2, from, L)}, *out = NULL;
  const char *yname = "y";
  ol_status s = ol_state_run(st, ctx, QKV, in, 3, &yname, &out, 1, done);
  tk_release_all(in, 3);
  if (y) *y = out;
  else ol_value_release(out);
  return s;
}

static bool same_bits(const ol_value *a, const ol_value *b) {
  return a && b && ol_tensor_byte_size(a) == ol_tensor_byte_size(b) &&
         memcmp(ol_tensor_data(a), ol_tensor_data(b), ol_tensor_byte_size(a)) == 0;
}

static ol_value *state_cache(ol_state *st) {
  ol_value *c = NULL;
  CHECK_OK(ol_state_value(st, "past", &c));
  return c;
}

static ol_state *new_state(ol_model *m, ol_value *initial, const ol_session_options *options) {
  const char *name = "past";
  ol_state *st = NULL;
  CHECK_OK(ol_state_create(m, &name, &initial, initial ? 1 : 0, options, &st));
  return st;
}

/* int8 keys (scale 0.01) and uint4 values (scale 0.25, zero 8) */
static const ol_page_format_rule QUANTIZED = {0, {{OL_DTYPE_INT8, 0.01f, 0}, {OL_DTYPE_UINT4, 0.25f, 8}}};

/* A state over a few steps: every step records one OL_EVENT_PAGED_ATTENTION
 * event with its counters, the formats follow the session options, and the
 * state's cache grows by the step's tokens (older blocks shared). */
static void state_runs_paged_attention(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
  ol_model *m = make_model(&spec);
  if (!m) return;
  for (int quantized = 0; quantized < 2; quantized++) {
    ol_session_options options;
    ol_session_options_init(&options);
    if (quantized) options.page_format_rules = &QUANTIZED, options.page_format_rule_count = 1;
    ol_value *empty = NULL;
    CHECK_OK(ol_paged_cache_empty(&empty));
    ol_state *st = new_state(m, empty, &options);
    ol_value_release(empty);
    ol_context_options co = {1, NULL};
    ol_context *ctx = NULL;
    CHECK_OK(ol_context_create(&co, &ctx));
    if (!st || !ctx) return;
    const int64_t lengths[4] = {3, 1, 1, 2};
    int64_t from = 0;
    for (int i = 0; i < 4; i++) {
      ol_value *before = state_cache(st);
      ol_value_retain(before);
      ol_context_clear_events(ctx);
      CHECK_OK(step(st, ctx, from, lengths[i], NULL, NULL));
      from += lengths[i];
      CHECK(ol_context_event_count(ctx) == 1);
      const ol_runtime_event *e = ol_context_event_count(ctx) ? ol_context_event(ctx, 0) : NULL;
      if (e) {
        /* width 2 heads x 4 = 8 per token: 64 dense bytes (K + V), or 8 int8 + 4 uint4 */
        uint64_t per_token = quantized ? 12 : 64;
        CHECK(e->action == OL_EVENT_PAGED_ATTENTION && strcmp(e->op_type, "PagedAttention") == 0);
        CHECK(e->paged_copied_bytes == per_token * (uint64_t)lengths[i]);
        CHECK(e->paged_validated_pages == 0); /* pages the node made itself are not checked again */
        CHECK(quantized ? e->paged_dequantized_bytes > 0 : e->paged_dequantized_bytes == 0);
        CHECK(e->paged_peak_workspace_bytes > 0);
      }
      ol_value *after = state_cache(st);
      int64_t tokens = 0;
      CHECK_OK(ol_paged_cache_length(after, &tokens));
      CHECK(tokens == from);
      for (size_t b = 0; b < ol_paged_cache_block_count(before); b++)
        CHECK(ol_paged_cache_block(after, b) == ol_paged_cache_block(before, b));
      ol_value_release(before);
    }
    ol_value *cache = state_cache(st);
    ol_page page;
    CHECK_OK(ol_page_view(ol_paged_cache_block(cache, 0), 0, &page));
    CHECK(page.key.storage == (quantized ? OL_DTYPE_INT8 : OL_DTYPE_FLOAT));
    CHECK(page.value.storage == (quantized ? OL_DTYPE_UINT4 : OL_DTYPE_FLOAT));
    ol_page_clear(&page);
    ol_context_destroy(ctx);
    ol_state_destroy(st);
  }
  ol_model_destroy(m);
}

/* Bytes -> cache -> bytes: the blocks compacted (each run of one format
 * becomes one block), every token decoding to the same bits, the same bytes
 * again. */
static void byte_round_trip(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
  ol_model *m = make_model(&spec);
  if (!m) return;
  ol_page_format_rule rules[2] = {{0, {{0}, {0}}}, {3, QUANTIZED.formats}};
  ol_session_options options;
  ol_session_options_init(&options);
  options.page_format_rules = rules, options.page_format_rule_count = 2;
  ol_value *empty = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  ol_state *st = new_state(m, empty, &options);
  ol_value_release(empty);
  if (!st) return;
  for (int64_t t = 0; t < 6; t += 3) CHECK_OK(step(st, NULL, t, 3, NULL, NULL));
  ol_value *cache = state_cache(st), *back = NULL;
  void *bytes = NULL, *again = NULL;
  size_t size = 0, again_size = 0;
  CHECK(ol_paged_cache_block_count(cache) == 4); /* 3 tokens in pages of 2: 2 + 1, twice */
  CHECK_OK(ol_paged_cache_serialize(cache, &bytes, &size));
  CHECK_OK(ol_paged_cache_parse(bytes, size, &back));
  if (back) CHECK_OK(ol_paged_cache_serialize(back, &again, &again_size));
  CHECK(again && again_size == size && memcmp(again, bytes, size) == 0);
  CHECK(back && ol_paged_cache_block_count(back) == 2 && tk_paged_same_tokens(cache, back));
  for (size_t i = 0; back && i < 2; i++) {
    ol_page b;
    CHECK_OK(ol_page_view(ol_paged_cache_block(back, i), i, &b));
    CHECK(b.start == 3 * (int64_t)i && b.length == 3 && b.key.capacity == 3);
    CHECK(b.key.storage == (i == 0 ? OL_DTYPE_FLOAT : OL_DTYPE_INT8));
    CHECK(b.value.storage == (i == 0 ? OL_DTYPE_FLOAT : OL_DTYPE_UINT4));
    CHECK(b.key.n_params == (i == 0 ? 0 : 1)); /* one fixed scale: the pair stays per tensor */
    ol_page_clear(&b);
  }
  size_t payload = 0;
  CHECK_OK(ol_paged_cache_payload_bytes(back, &payload));
  /* dense pages: 3 rows x 8 x 4 bytes x (K + V); quantized: 8 + 4 bytes per row */
  CHECK(payload == 3 * 64 + 3 * 12);
  ol_free(bytes);
  ol_free(again);
  ol_value_release(back);
  ol_state_destroy(st);
  ol_model_destroy(m);
}

/* int8 keys and uint4 values, scales calibrated per page: compacted, their
 * parameters become one per token */
static const ol_page_format_rule CALIBRATED = {0, {{OL_DTYPE_INT8, 0.0f, 0}, {OL_DTYPE_UINT4, 0.0f, 0}}};

/* Continues `resumed` (a model whose paged_cache_initializer 'past' holds N
 * tokens) for M steps from a state without initial values, twice (reset
 * goes back to the initializer): the outputs are expected's bits. */
static void continue_resumed(ol_model *resumed, const ol_session_options *options, int N, int M,
                             ol_value *const *expected) {
  ol_state *next = new_state(resumed, NULL, options);
  ol_context_options co = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&co, &ctx));
  for (int round = 0; next && round < 2; round++) {
    int64_t tokens = 0;
    CHECK_OK(ol_paged_cache_length(state_cache(next), &tokens));
    CHECK(tokens == N);
    for (int i = 0; i < M; i++) {
      ol_value *y = NULL;
      ol_context_clear_events(ctx);
      CHECK_OK(step(next, ctx, N + i, 1, NULL, &y));
      CHECK(same_bits(y, expected[i]));
      ol_value_release(y);
      /* the imported pages are checked once, by the first step: the N
       * one-token blocks were saved compacted, as one */
      const ol_runtime_event *e = ol_context_event_count(ctx) == 1 ? ol_context_event(ctx, 0) : NULL;
      CHECK(e && e->paged_validated_pages == (round == 0 && i == 0 ? 1 : 0));
    }
    CHECK_OK(ol_state_reset(next, NULL, NULL, 0));
  }
  ol_context_destroy(ctx);
  ol_state_destroy(next);
}

/* Run N steps, serialize the cache, put it in a new model as
 * paged_cache_initializer (serialized model bytes, and with
 * ol_model_with_paged_cache_initializers), load, continue M steps: the
 * outputs are bit-identical to the uninterrupted N + M steps, with dense,
 * fixed-scale and calibrated (per-token parameters once compacted) pages. */
static void resume_from_initializer(void) {
  enum { N = 5, M = 4 };
  const ol_page_format_rule *formats[3] = {NULL, &QUANTIZED, &CALIBRATED};
  for (int f = 0; f < 3; f++) {
    model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
    ol_model *m = make_model(&spec);
    if (!m) return;
    ol_session_options options;
    ol_session_options_init(&options);
    if (formats[f]) options.page_format_rules = formats[f], options.page_format_rule_count = 1;
    ol_value *empty = NULL;
    CHECK_OK(ol_paged_cache_empty(&empty));
    ol_state *whole = new_state(m, empty, &options), *first = new_state(m, empty, &options);
    ol_value_release(empty);
    if (!whole || !first) return;
    ol_value *expected[M] = {0};
    for (int i = 0; i < N + M; i++) CHECK_OK(step(whole, NULL, i, 1, NULL, i >= N ? &expected[i - N] : NULL));
    for (int i = 0; i < N; i++) CHECK_OK(step(first, NULL, i, 1, NULL, NULL));
    void *cache_bytes = NULL;
    size_t cache_size = 0;
    CHECK_OK(ol_paged_cache_serialize(state_cache(first), &cache_bytes, &cache_size));
    ol_model *edited = NULL;
    const char *past = "past";
    ol_value *saved_cache = state_cache(first);
    CHECK_OK(ol_model_with_paged_cache_initializers(m, &past, &saved_cache, 1, &edited));
    ol_state_destroy(first);
    if (edited) {
      const ol_initializer *init = ol_graph_find_initializer(edited->data->graph, "past");
      ol_page page = {0};
      if (init) CHECK_OK(ol_page_view(ol_paged_cache_block(init->value, 0), 0, &page));
      CHECK(init && ol_paged_cache_block_count(init->value) == 1 && page.length == N);
      CHECK(page.key.n_params == (f == 0 ? 0 : f == 1 ? 1 : N) && (f < 2 || page.key.axis == 2));
      ol_page_clear(&page);
      continue_resumed(edited, &options, N, M, expected);
      ol_model_destroy(edited);
    }
    model_spec resumed_spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true, .cache = cache_bytes, .cache_size = cache_size, .cache_name = "past"};
    size_t size = 0;
    void *bytes = model_bytes(&resumed_spec, &size);
    ol_free(cache_bytes);
    ol_model *resumed = NULL;
    if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &resumed));
    if (resumed) {
      /* serialization keeps the initializer: whole and in pieces */
      void *saved = NULL;
      size_t saved_size = 0;
      CHECK_OK(ol_model_serialize(resumed, &saved, &saved_size));
      CHECK(saved && saved_size == size && memcmp(saved, bytes, size) == 0);
      ol_serial_pieces *pieces = NULL;
      CHECK_OK(ol_model_serialize_pieces(resumed, &pieces));
      if (pieces && saved) {
        size_t at = 0;
        bool same = ol_serial_pieces_total(pieces) == saved_size;
        for (size_t i = 0; same && i < ol_serial_pieces_count(pieces); i++) {
          const ol_serial_piece *p = &ol_serial_pieces_list(pieces)[i];
          same = at + p->size <= saved_size && memcmp((uint8_t *)saved + at, p->data, p->size) == 0;
          at += p->size;
        }
        CHECK(same && at == saved_size);
      }
      ol_serial_pieces_destroy(pieces);
      ol_free(saved);
      /* no initial value: the state starts from the initializer; reset goes back to it */
      continue_resumed(resumed, &options, N, M, expected);
    }
    free(bytes);
    for (int i = 0; i < M; i++) ol_value_release(expected[i]);
    ol_state_destroy(whole);
    ol_model_destroy(resumed);
    ol_model_destroy(m);
  }
}

/* A graph input with a cache default may be omitted from a session's feeds;
 * an explicit feed overrides it. */
/* A state compacts its cache as it grows (ol_paged_cache_compact_grown):
 * 150 one-token steps, every output bit-identical to a session fed its own
 * presents (never compacted), with dense, fixed-scale and calibrated pages;
 * the state's blocks: one per token up to 64, then 64 one-token blocks
 * merged into one, and so on (2 full blocks and 22 new ones at the end). */
static void state_compacts_as_it_grows(void) {
  enum { STEPS = 150 };
  const ol_page_format_rule *formats[3] = {NULL, &QUANTIZED, &CALIBRATED};
  for (int f = 0; f < 3; f++) {
    model_spec bound = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
    model_spec unbound = {.text = ATTENTION, .cache_type = ol_paged_cache_type()};
    ol_model *m = make_model(&bound), *um = make_model(&unbound);
    ol_session_options options;
    ol_session_options_init(&options);
    if (formats[f]) options.page_format_rules = formats[f], options.page_format_rule_count = 1;
    ol_value *cache = NULL;
    CHECK_OK(ol_paged_cache_empty(&cache));
    ol_state *st = m ? new_state(m, cache, &options) : NULL;
    ol_session *session = NULL;
    if (um) CHECK_OK(ol_session_create(um, &options, &session));
    bool same = true, counts = true;
    for (int64_t i = 0; st && session && i < STEPS; i++) {
      ol_value *y = NULL, *in[4] = {qkv(0, i, 1), qkv(1, i, 1), qkv(2, i, 1), cache}, *out[2] = {0};
      const char *names[4] = {"q", "k", "v", "past"};
      CHECK_OK(ol_session_run(session, names, in, 4, NULL, out, 2, NULL));
      if (i == 63 && f == 0) {
        /* the first compacting step, failing at each allocation in turn
         * (dense pages come from the default allocator) until it succeeds:
         * a failure publishes nothing */
        const ol_value *before = state_cache(st);
        ol_status r = OL_OUT_OF_MEMORY;
        int failures = 0;
        ol_value *qkv_in[3] = {qkv(0, i, 1), qkv(1, i, 1), qkv(2, i, 1)};
        const char *yname = "y";
        for (int64_t k = 0; r == OL_OUT_OF_MEMORY && k < 1000; k++) {
          ol_allocator_fail_after(NULL, k);
          r = ol_state_run(st, NULL, QKV, qkv_in, 3, &yname, &y, 1, NULL);
          ol_allocator_fail_after(NULL, -1);
          if (r == OL_OUT_OF_MEMORY) {
            failures++;
            CHECK(!y && state_cache(st) == before && ol_paged_cache_block_count(before) == 63);
          }
        }
        tk_release_all(qkv_in, 3);
        CHECK(r == OL_OK && failures > 0);
      } else {
        CHECK_OK(step(st, NULL, i, 1, NULL, &y));
      }
      same = same && same_bits(y, out[0]);
      size_t blocks = ol_paged_cache_block_count(state_cache(st));
      const size_t tokens = (size_t)i + 1, full = tokens / 64;
      counts = counts && blocks == (full ? full + tokens % 64 : tokens);
      tk_release_all(in, 4);
      cache = out[1];
      ol_value_release(out[0]);
      ol_value_release(y);
    }
    CHECK(same);
    CHECK(counts);
    int64_t tokens = 0;
    if (st) CHECK_OK(ol_paged_cache_length(state_cache(st), &tokens));
    CHECK(tokens == STEPS && ol_paged_cache_block_count(cache) == STEPS); /* the session's cache: one block per step */
    ol_value_release(cache);
    ol_session_destroy(session);
    ol_state_destroy(st);
    ol_model_destroy(m);
    ol_model_destroy(um);
  }
}

static void session_cache_default(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
  ol_model *m = make_model(&spec);
  ol_value *empty = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  ol_state *st = m ? new_state(m, empty, NULL) : NULL;
  if (!st) return;
  CHECK_OK(step(st, NULL, 0, 3, NULL, NULL));
  void *cache_bytes = NULL;
  size_t cache_size = 0;
  CHECK_OK(ol_paged_cache_serialize(state_cache(st), &cache_bytes, &cache_size));
  model_spec with_default = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .cache = cache_bytes, .cache_size = cache_size, .cache_name = "past"};
  ol_model *dm = make_model(&with_default);
  ol_session *s = NULL;
  if (dm) CHECK_OK(ol_session_create(dm, NULL, &s));
  if (s) {
    CHECK(ol_session_input_count(s) == 3);
    ol_value *in[4] = {qkv(0, 3, 1), qkv(1, 3, 1), qkv(2, 3, 1), empty}, *out[2] = {0}, *fresh[2] = {0};
    const char *names[4] = {"q", "k", "v", "past"};
    CHECK_OK(ol_session_run(s, names, in, 3, NULL, out, 2, NULL));
    ol_value *y_state = NULL;
    CHECK_OK(step(st, NULL, 3, 1, NULL, &y_state));
    CHECK(same_bits(out[0], y_state)); /* continued from the default */
    int64_t tokens = 0;
    CHECK_OK(ol_paged_cache_length(out[1], &tokens));
    CHECK(tokens == 4);
    CHECK_OK(ol_session_run(s, names, in, 4, NULL, fresh, 2, NULL)); /* the empty cache overrides */
    CHECK_OK(ol_paged_cache_length(fresh[1], &tokens));
    CHECK(tokens == 1 && !same_bits(fresh[0], out[0]));
    tk_release_all(in, 3);
    tk_release_all(out, 2);
    tk_release_all(fresh, 2);
    ol_value_release(y_state);
  }
  ol_session_destroy(s);
  ol_model_destroy(dm);
  ol_free(cache_bytes);
  ol_value_release(empty);
  ol_state_destroy(st);
  ol_model_destroy(m);
}

/* Names are unique across initializer kinds; the text form refuses a cache
 * initializer by name; a malformed one fails the load naming it. */
static void initializers_checked(void) {
  proto_cache c;
  proto_init(&c, 1, 2);
  size_t size = onnx__paged_cache_proto__get_packed_size(&c.cache);
  uint8_t *cache = malloc(size);
  onnx__paged_cache_proto__pack(&c.cache, cache);
  static const char *CLASH = "<ir_version: 10, opset_import: [\"\" : 18]>\n"
                             "g (float[1] x) => (float[1] y) <float[1] w = {1.0}> {\n  y = Add(x, w)\n}";
  model_spec clash = {.text = CLASH, .cache = cache, .cache_size = size, .cache_name = "w"};
  ol_model *m = make_model(&clash);
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(error_has("paged cache initializer 'w' has the same name as an earlier initializer"));
    ol_session *s = NULL;
    CHECK_STATUS(ol_session_create(m, NULL, &s), OL_INVALID_MODEL);
    ol_model_destroy(m);
  }
  model_spec fine = {.text = CLASH, .cache = cache, .cache_size = size, .cache_name = "kv_default"};
  m = make_model(&fine);
  if (m) {
    CHECK_OK(ol_model_check(m));
    char *text = NULL;
    CHECK_STATUS(ol_model_print_text(m, &text), OL_NOT_IMPLEMENTED);
    CHECK(text == NULL && error_has("paged cache initializer 'kv_default'"));
    ol_model_destroy(m);
  }
  free(cache);
  /* a malformed cache initializer fails the load with OL_INVALID_MODEL naming it */
  proto_init(&c, 2, 2);
  c.blocks[1].start = 7;
  size = onnx__paged_cache_proto__get_packed_size(&c.cache);
  cache = malloc(size);
  onnx__paged_cache_proto__pack(&c.cache, cache);
  model_spec bad = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .cache = cache, .cache_size = size, .cache_name = "past"};
  size_t model_size = 0;
  void *bytes = model_bytes(&bad, &model_size);
  ol_model *broken = NULL;
  CHECK_STATUS(ol_model_load(bytes, model_size, NULL, &broken), OL_INVALID_MODEL);
  CHECK(broken == NULL && error_has("paged cache 'past': cache block 1 starts at 7, expected 2"));
  free(bytes);
  free(cache);
}

/* Shape inference gives a cache initializer the logical cache type, which
 * PagedAttention passes on to present. */
static void inference_records_cache_type(void) {
  static const char *TWO =
      "<ir_version: 10, opset_import: [\"\" : 18, \"ai.rt\" : 1]>\n"
      "g (float[1,2,1,4] q, float[1,2,1,4] k, float[1,2,1,4] v) => (float[1,2,1,4] y2) {\n"
      "  y, present = ai.rt.PagedAttention (q, k, v, past)\n"
      "  y2, present2 = ai.rt.PagedAttention (q, k, v, present)\n}";
  ol_value *empty = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  void *cache = NULL;
  size_t size = 0;
  CHECK_OK(ol_paged_cache_serialize(empty, &cache, &size));
  model_spec spec = {.text = TWO, .cache = cache, .cache_size = size, .cache_name = "past"};
  ol_model *m = make_model(&spec), *inferred = NULL;
  if (m) CHECK_OK(ol_model_infer_shapes(m, &inferred));
  if (inferred) {
    const Onnx__GraphProto *g = inferred->data->proto->graph;
    const Onnx__TypeProto *present = NULL;
    for (size_t i = 0; i < g->n_value_info; i++)
      if (strcmp(g->value_info[i]->name, "present") == 0) present = g->value_info[i]->type;
    CHECK(present && present->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE);
    if (present && present->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE) {
      const Onnx__StructTypeProto *st = present->struct_type;
      CHECK(st->name && strcmp(st->name, "onnx_light.PagedKVCache") == 0);
      CHECK(st->n_metadata_props == 1 && strcmp(st->metadata_props[0]->value, "1") == 0);
      CHECK(st->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE && st->structure->n_field == 1 &&
            strcmp(st->structure->field[0]->name, "blocks") == 0);
    }
    CHECK(inferred->data->proto->graph->n_paged_cache_initializer == 1);
    /* the session of the inferred model runs from the default */
    ol_session *s = NULL;
    CHECK_OK(ol_session_create(inferred, NULL, &s));
    if (s) {
      ol_value *in[3] = {qkv(0, 0, 1), qkv(1, 0, 1), qkv(2, 0, 1)}, *out = NULL;
      CHECK_OK(ol_session_run(s, QKV, in, 3, NULL, &out, 1, NULL));
      tk_release_all(in, 3);
      ol_value_release(out);
    }
    ol_session_destroy(s);
  }
  ol_model_destroy(inferred);
  ol_model_destroy(m);
  ol_free(cache);
  ol_value_release(empty);
}

/* ------------------------------------------------------------ truncate, fork */

static void truncate_and_fork(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = &LAYOUTLESS_STRUCT, .bind = true};
  ol_model *m = make_model(&spec);
  ol_value *empty = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  ol_state *st = m ? new_state(m, empty, NULL) : NULL;
  if (!st) return;
  CHECK_OK(step(st, NULL, 0, 5, NULL, NULL)); /* blocks of 2, 2 and 1 tokens */
  ol_value *cache = state_cache(st), *cut = NULL;
  CHECK(ol_paged_cache_block_count(cache) == 3);
  CHECK_OK(ol_paged_cache_truncate(cache, 3, &cut));
  int64_t tokens = 0;
  if (cut) {
    CHECK_OK(ol_paged_cache_length(cut, &tokens));
    CHECK(tokens == 3 && ol_paged_cache_block_count(cut) == 2);
    CHECK(ol_paged_cache_block(cut, 0) == ol_paged_cache_block(cache, 0)); /* shared */
    const ol_value *a = ol_paged_cache_block(cut, 1), *b = ol_paged_cache_block(cache, 1);
    CHECK(a != b && ol_struct_field(a, "key") == ol_struct_field(b, "key") &&
          ol_struct_field(a, "value") == ol_struct_field(b, "value")); /* same payloads, shorter */
    /* a truncated cache continues: the state appends after token 3 */
    ol_value *y = NULL, *again = NULL;
    const char *name = "past";
    CHECK_OK(ol_state_reset(st, &name, &cut, 1));
    CHECK_OK(step(st, NULL, 3, 1, NULL, &y));
    CHECK_OK(ol_paged_cache_length(state_cache(st), &tokens));
    CHECK(tokens == 4);
    CHECK_OK(ol_state_reset(st, &name, &cut, 1));
    CHECK_OK(step(st, NULL, 3, 1, NULL, &again));
    CHECK(same_bits(y, again));
    ol_value_release(y);
    ol_value_release(again);
  }
  ol_value_release(cut);
  cache = state_cache(st);
  CHECK_OK(ol_paged_cache_truncate(cache, 0, &cut));
  CHECK(cut && ol_paged_cache_block_count(cut) == 0);
  ol_value_release(cut);
  CHECK_OK(ol_paged_cache_truncate(cache, 100, &cut));
  CHECK(cut && ol_paged_cache_block_count(cut) == ol_paged_cache_block_count(cache));
  ol_value_release(cut);
  cut = (ol_value *)1;
  CHECK_STATUS(ol_paged_cache_truncate(cache, -1, &cut), OL_INVALID_ARGUMENT);
  CHECK(cut == NULL);
  ol_value *fork = NULL;
  CHECK_OK(ol_paged_cache_fork(cache, &fork));
  CHECK(fork == cache);
  ol_value_release(fork);
  ol_value *not_cache = qkv(0, 0, 1);
  CHECK_STATUS(ol_paged_cache_fork(not_cache, &fork), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_paged_cache_length(not_cache, &tokens), OL_INVALID_ARGUMENT);
  ol_value_release(not_cache);
  ol_value_release(empty);
  ol_state_destroy(st);
  ol_model_destroy(m);
}

/* ------------------------------------------------------------ declarations and failures */

/* Cache declarations: layout-less, the named logical type (inline or with
 * a type_ref'd block), FLOAT16 pages under FLOAT declarations; a FLOAT16
 * declaration and non-cache values are refused. */
static void cache_declarations(void) {
  /* the block struct through ModelProto.struct_types */
  const Onnx__StructTypeProto *logical = ol_paged_cache_type()->struct_type;
  const Onnx__TypeProto *blocks = logical->structure->field[0]->type;
  Onnx__StructTypeProto block = *blocks->sequence_type->elem_type->struct_type;
  block.has_type_id = 1;
  block.type_id = 7;
  Onnx__StructTypeProto *catalogue[1] = {&block};
  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 7;
  Onnx__TypeProto ref_type = ONNX__TYPE_PROTO__INIT;
  ref_type.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  ref_type.struct_type = &ref;
  Onnx__TypeProto__Sequence seq = *blocks->sequence_type;
  seq.elem_type = &ref_type;
  Onnx__TypeProto blocks_type = *blocks;
  blocks_type.sequence_type = &seq;
  Onnx__StructTypeProto__Structure__Field field = *logical->structure->field[0], *fields[1] = {&field};
  field.type = &blocks_type;
  Onnx__StructTypeProto__Structure structure = *logical->structure;
  structure.field = fields;
  Onnx__StructTypeProto by_ref = *logical;
  by_ref.structure = &structure;
  Onnx__TypeProto by_ref_type = *ol_paged_cache_type();
  by_ref_type.struct_type = &by_ref;

  /* a dense FLOAT16 key page and an int8 one: valid under FLOAT declarations */
  proto_cache c;
  proto_init(&c, 2, 2);
  static int32_t halves[6] = {0x3C00, 0x4000, 0xC200, 0x3800, 0, 0};
  Onnx__TensorProto *k0 = &c.key[0].tensor;
  k0->data_type = OL_DTYPE_FLOAT16, k0->has_raw_data = 0, k0->n_int32_data = 6, k0->int32_data = halves;
  use_encoded_key(&c, 1);
  ol_value *mixed = NULL;
  CHECK_OK(parse_message(&c.cache, &mixed));

  const struct {
    const Onnx__TypeProto *past, *present;
    Onnx__StructTypeProto **catalogue;
  } accepted[] = {
      {&LAYOUTLESS_STRUCT, NULL, NULL},
      {ol_paged_cache_type(), NULL, NULL},
      {&by_ref_type, NULL, catalogue},
      {&LAYOUTLESS_STRUCT, ol_paged_cache_type(), NULL}, /* both describe a cache */
  };
  for (size_t i = 0; i < sizeof accepted / sizeof accepted[0]; i++) {
    model_spec spec = {.text = ATTENTION, .cache_type = accepted[i].past, .present_type = accepted[i].present, .bind = true, .catalogue = accepted[i].catalogue, .catalogue_size = accepted[i].catalogue ? 1 : 0};
    ol_model *m = make_model(&spec);
    ol_state *st = m ? new_state(m, mixed, NULL) : NULL;
    if (st) {
      /* widths 3/2 do not fit this model's 8/8 rows: the kernel says so, nothing is published */
      CHECK_STATUS(step(st, NULL, 4, 1, NULL, NULL), OL_INVALID_ARGUMENT);
      CHECK(state_cache(st) == mixed);
      ol_value *wrong = qkv(0, 0, 1);
      const char *name = "past";
      CHECK_STATUS(ol_state_reset(st, &name, &wrong, 1), OL_INVALID_ARGUMENT);
      CHECK(error_has("persistent input 'past'") && error_has("expected a paged cache"));
      ol_value_release(wrong);
    }
    ol_state_destroy(st);
    ol_model_destroy(m);
  }
  /* FLOAT16 is a page format, not a declaration */
  Onnx__TypeProto__Tensor half_key = *logical->structure->field[0]->type->sequence_type->elem_type->struct_type
                                          ->structure->field[2]->type->tensor_type;
  half_key.elem_type = OL_DTYPE_FLOAT16;
  Onnx__TypeProto half_key_type = ONNX__TYPE_PROTO__INIT;
  half_key_type.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  half_key_type.tensor_type = &half_key;
  Onnx__StructTypeProto__Structure__Field key_field = *block.structure->field[2];
  key_field.type = &half_key_type;
  Onnx__StructTypeProto__Structure__Field *block_fields[4] = {block.structure->field[0], block.structure->field[1],
                                                              &key_field, block.structure->field[3]};
  Onnx__StructTypeProto__Structure block_structure = *block.structure;
  block_structure.field = block_fields;
  block.structure = &block_structure;
  model_spec half = {.text = ATTENTION, .cache_type = &by_ref_type, .bind = true, .catalogue = catalogue, .catalogue_size = 1};
  ol_model *m = make_model(&half);
  ol_state *st = NULL;
  const char *name = "past";
  if (m) CHECK_STATUS(ol_state_create(m, &name, &mixed, 1, NULL, &st), OL_INVALID_MODEL);
  CHECK(st == NULL && error_has("persistent input 'past': field 'blocks'[].key: a paged cache's key must be declared "
                                "as a float32 tensor"));
  ol_model_destroy(m);
  ol_value_release(mixed);
}

/* Malformed bytes, invalid caches, failed and cancelled runs: the state
 * keeps its cache (pointer identity) and goes on as if nothing happened. */
static void failures_leave_state_untouched(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
  ol_model *m = make_model(&spec);
  ol_value *empty = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  ol_state *st = m ? new_state(m, empty, NULL) : NULL, *reference = m ? new_state(m, empty, NULL) : NULL;
  if (!st || !reference) return;
  /* without an initial value or a default there is nothing to start from */
  ol_state *none = NULL;
  CHECK_STATUS(ol_state_create(m, NULL, NULL, 0, NULL, &none), OL_INVALID_ARGUMENT);
  CHECK(none == NULL && error_has("no initial value for persistent input 'past' (and no initializer default)"));
  for (int i = 0; i < 2; i++) {
    CHECK_OK(step(st, NULL, i, 1, NULL, NULL));
    CHECK_OK(step(reference, NULL, i, 1, NULL, NULL));
  }
  ol_value *kept = state_cache(st);
  /* garbage bytes, then a well-formed message breaking a rule */
  static const uint8_t garbage[3] = {0x0A, 0xFF, 0x01};
  ol_value *parsed = NULL;
  CHECK_STATUS(ol_paged_cache_parse(garbage, sizeof garbage, &parsed), OL_INVALID_ARGUMENT);
  proto_cache c;
  proto_init(&c, 2, 2);
  c.blocks[0].length = 5;
  CHECK_STATUS(parse_message(&c.cache, &parsed), OL_INVALID_ARGUMENT);
  CHECK(parsed == NULL && state_cache(st) == kept);
  /* a cache value breaking a rule (a gap) is refused at reset */
  ol_value *key = NULL, *value = NULL, *b0 = NULL, *b1 = NULL, *gapped = NULL;
  CHECK_OK(ol_page_dense_new(NULL, OL_DTYPE_FLOAT, 2, 8, &key));
  CHECK_OK(ol_page_dense_new(NULL, OL_DTYPE_FLOAT, 2, 8, &value));
  CHECK_OK(ol_page_block_new(0, 2, key, value, &b0));
  CHECK_OK(ol_page_block_new(3, 1, key, value, &b1));
  ol_value *list[2] = {b0, b1};
  CHECK_OK(ol_paged_cache_new(list, 2, &gapped));
  const char *name = "past";
  CHECK_STATUS(ol_state_reset(st, &name, &gapped, 1), OL_INVALID_ARGUMENT);
  CHECK(error_has("persistent input 'past': cache block 1 starts at 3, expected 2") && state_cache(st) == kept);
  ol_value *both[4] = {key, value, b0, b1};
  tk_release_all(both, 4);
  ol_value_release(gapped);
  /* a run failing in the kernel (Q not finite) and a cancelled one publish nothing */
  ol_value *in[3] = {qkv(0, 2, 1), qkv(1, 2, 1), qkv(2, 2, 1)}, *out = NULL;
  ((float *)ol_tensor_data(in[0]))[3] = NAN;
  const char *yname = "y";
  CHECK_STATUS(ol_state_run(st, NULL, QKV, in, 3, &yname, &out, 1, NULL), OL_INVALID_ARGUMENT);
  CHECK(out == NULL && error_has("not finite"));
  tk_release_all(in, 3);
  CHECK(state_cache(st) == kept);
  ol_completion *done = NULL;
  CHECK_OK(ol_completion_create(&done));
  CHECK_OK(ol_completion_cancel(done, "stop"));
  CHECK_STATUS(step(st, NULL, 2, 1, done, NULL), OL_CANCELLED);
  CHECK(state_cache(st) == kept);
  ol_completion_destroy(done);
  /* and the next step gives the bits of a state that never failed */
  ol_value *y = NULL, *want = NULL;
  CHECK_OK(step(st, NULL, 2, 1, NULL, &y));
  CHECK_OK(step(reference, NULL, 2, 1, NULL, &want));
  CHECK(same_bits(y, want));
  ol_value_release(y);
  ol_value_release(want);
  ol_value_release(empty);
  ol_state_destroy(st);
  ol_state_destroy(reference);
  ol_model_destroy(m);
}

/* ol_model_with_paged_cache_initializers: a second call replaces the
 * initializer; names must be graph inputs, given once, with cache values;
 * the source model is unchanged. */
static void initializers_by_api(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
  ol_model *m = make_model(&spec);
  ol_value *empty = NULL;
  CHECK_OK(ol_paged_cache_empty(&empty));
  ol_state *st = m ? new_state(m, empty, NULL) : NULL;
  if (!st) return;
  for (int64_t t = 0; t < 3; t++) CHECK_OK(step(st, NULL, t, 1, NULL, NULL));
  ol_value *three = NULL;
  CHECK_OK(ol_paged_cache_truncate(state_cache(st), 3, &three));
  ol_value *two = NULL;
  CHECK_OK(ol_paged_cache_truncate(three, 2, &two));
  const char *past = "past";
  ol_model *once = NULL, *twice = NULL;
  CHECK_OK(ol_model_with_paged_cache_initializers(m, &past, &three, 1, &once));
  if (once) CHECK_OK(ol_model_with_paged_cache_initializers(once, &past, &two, 1, &twice));
  if (twice) {
    CHECK(twice->data->proto->graph->n_paged_cache_initializer == 1);
    ol_state *resumed = new_state(twice, NULL, NULL);
    int64_t tokens = 0;
    if (resumed) CHECK_OK(ol_paged_cache_length(state_cache(resumed), &tokens));
    CHECK(tokens == 2);
    ol_state_destroy(resumed);
  }
  CHECK(m->data->proto->graph->n_paged_cache_initializer == 0);
  const char *names[2] = {"past", "past"};
  ol_value *caches[2] = {three, two}, *tensor = qkv(0, 0, 1);
  ol_model *bad = NULL;
  CHECK_STATUS(ol_model_with_paged_cache_initializers(m, names, caches, 2, &bad), OL_INVALID_ARGUMENT);
  CHECK(bad == NULL && error_has("given twice"));
  CHECK_STATUS(ol_model_with_paged_cache_initializers(m, &past, &tensor, 1, &bad), OL_INVALID_ARGUMENT);
  CHECK(error_has("not a paged cache"));
  const char *missing = "pasta";
  CHECK_STATUS(ol_model_with_paged_cache_initializers(m, &missing, &three, 1, &bad), OL_INVALID_ARGUMENT);
  CHECK(error_has("'pasta' names no graph input"));
  ol_value_release(tensor);
  ol_value_release(two);
  ol_value_release(three);
  ol_value_release(empty);
  ol_model_destroy(twice);
  ol_model_destroy(once);
  ol_state_destroy(st);
  ol_model_destroy(m);
}

/* Page format rules are checked when the session (state) is made. */
static void format_rules_checked(void) {
  model_spec spec = {.text = ATTENTION, .cache_type = ol_paged_cache_type(), .bind = true};
  ol_model *m = make_model(&spec);
  if (!m) return;
  const ol_page_formats int8 = {{OL_DTYPE_INT8, 0.0f, 0}, {OL_DTYPE_FLOAT, 0.0f, 0}};
  struct {
    ol_page_format_rule rules[2];
    const char *message;
  } bad[] = {
      {{{4, int8}, {4, int8}}, "rule 1: from_tokens 4 must be >= 0 and above the previous rule's"},
      {{{0, int8}, {8, {{OL_DTYPE_INT32, 1.0f, 0}, {0}}}}, "rule 1: key pages cannot be int32"},
      {{{0, int8}, {8, {{0}, {OL_DTYPE_UINT4, -1.0f, 0}}}}, "rule 1: value page scale -1 must be finite"},
      {{{0, {{OL_DTYPE_INT4, 0.5f, 8}, {0}}}, {8, int8}}, "rule 0: key zero point 8 is outside the int4 range"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    ol_session_options options;
    ol_session_options_init(&options);
    options.page_format_rules = bad[i].rules, options.page_format_rule_count = 2;
    ol_session *s = NULL;
    CHECK_STATUS(ol_session_create(m, &options, &s), OL_INVALID_ARGUMENT);
    CHECK(s == NULL && error_has(bad[i].message));
    ol_value *empty = NULL;
    CHECK_OK(ol_paged_cache_empty(&empty));
    const char *name = "past";
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &name, &empty, 1, &options, &st), OL_INVALID_ARGUMENT);
    CHECK(st == NULL && error_has(bad[i].message));
    ol_value_release(empty);
  }
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(proto_rejections), TEST(typed_fields), TEST(state_runs_paged_attention), TEST(state_compacts_as_it_grows),
             TEST(byte_round_trip),
             TEST(resume_from_initializer), TEST(session_cache_default), TEST(initializers_checked),
             TEST(inference_records_cache_type), TEST(truncate_and_fork), TEST(cache_declarations),
             TEST(failures_leave_state_untouched), TEST(initializers_by_api), TEST(format_rules_checked))
