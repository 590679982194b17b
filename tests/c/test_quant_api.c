/* The public quantization API (onnxlight.h, ol_quant_*): the catalogue,
 * plans and their per-run settings, quantize / dequantize of tensor values,
 * the proto variants, the ORT MatMulNBits export and shared parameter sets,
 * through the public header only (the TensorProto bytes of the proto
 * variants are packed with protobuf-c, as a caller would). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"

static ol_value *f32(const float *values, const int64_t *dims, size_t rank) {
  ol_value *t = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, rank, &t));
  if (t) memcpy(ol_tensor_data(t), values, ol_tensor_byte_size(t));
  return t;
}

static bool error_has(const char *text) { return strstr(ol_last_error(), text) != NULL; }

/* ------------------------------------------------------------ catalogue */

static void formats(void) {
  CHECK(ol_quant_format_count() == 43 && OL_QUANT_FORMAT_COUNT == 43);
  for (size_t i = 0; i < ol_quant_format_count(); i++) {
    ol_quant_format_info info;
    CHECK_OK(ol_quant_format_get_info((ol_quant_format)i, &info));
    CHECK(strcmp(info.name, ol_quant_format_name((ol_quant_format)i)) == 0);
    ol_quant_format parsed = OL_QUANT_FORMAT_COUNT;
    CHECK_OK(ol_quant_format_parse(info.name, &parsed));
    CHECK(parsed == (ol_quant_format)i);
    CHECK(ol_quant_method_name(info.method) != NULL);
    CHECK(info.matmul_nbits == (i >= OL_QUANT_ORT_MATMULNBITS_INT2));
  }
  ol_quant_format_info info;
  CHECK_OK(ol_quant_format_get_info(OL_QUANT_NF4, &info));
  CHECK(strcmp(info.enum_name, "NF4") == 0 && info.method == OL_QUANT_CODEBOOK && info.bits == 4);
  CHECK_OK(ol_quant_format_get_info(OL_QUANT_ORT_MATMULNBITS_INT8, &info));
  CHECK(strcmp(info.name, "ort_matmulnbits_int8") == 0 && info.bits == 8 && info.matmul_nbits);
  CHECK(strcmp(ol_quant_method_name(OL_QUANT_CAST), "cast") == 0 && !ol_quant_method_name(OL_QUANT_METHOD_COUNT));
  ol_quant_format parsed;
  CHECK_STATUS(ol_quant_format_parse("INT4", &parsed), OL_INVALID_ARGUMENT);
  CHECK(error_has("Unknown quantization format: 'INT4'"));
  CHECK_STATUS(ol_quant_format_get_info(OL_QUANT_FORMAT_COUNT, &info), OL_INVALID_ARGUMENT);
  CHECK(ol_quant_format_name(OL_QUANT_FORMAT_COUNT) == NULL);
}

/* ------------------------------------------------------------ plans */

static void plan_runs_and_blocks(void) {
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 300, 128, &plan));
  if (!plan) return;
  CHECK(ol_quant_plan_format(plan) == OL_QUANT_INT8 && ol_quant_plan_run_count(plan) == 2);
  ol_quant_layout layout;
  size_t blocks = 0;
  CHECK_OK(ol_quant_plan_run_layout(plan, 0, &layout, &blocks));
  CHECK(layout.count == 128 && blocks == 2 && layout.method == OL_QUANT_AFFINE && layout.bits == 8 && layout.signed_codes);
  CHECK_OK(ol_quant_plan_run_layout(plan, 1, &layout, &blocks));
  CHECK(layout.count == 44 && blocks == 1);
  CHECK_STATUS(ol_quant_plan_run_layout(plan, 2, &layout, &blocks), OL_INVALID_ARGUMENT);
  /* per-run settings */
  const double scales[2] = {0.25, 0.5};
  CHECK_OK(ol_quant_plan_set_scales(plan, 0, scales, 2));
  CHECK_STATUS(ol_quant_plan_set_scales(plan, 0, scales, 1), OL_INVALID_ARGUMENT);
  CHECK(error_has("1 scales for 2 blocks"));
  ol_quant_block block;
  CHECK_OK(ol_quant_plan_block(plan, 0, 1, &block));
  CHECK(block.scale == 0.5 && block.zero_point == 0 && block.codebook_size == 0);
  CHECK_STATUS(ol_quant_plan_block(plan, 0, 2, &block), OL_INVALID_ARGUMENT);
  /* the wire header round trip */
  int64_t header[OL_QUANT_HEADER_SIZE];
  ol_quant_layout_header(&layout, header);
  ol_quant_layout back;
  CHECK_OK(ol_quant_layout_from_header(header, &back));
  CHECK(back.count == 44 && back.bits == 8);
  header[1] = 7; /* no such method */
  CHECK_STATUS(ol_quant_layout_from_header(header, &back), OL_INVALID_ARGUMENT);
  /* replacing every run: one INT4 run of three blocks, copied in */
  ol_quant_layout int4 = {4, OL_QUANT_AFFINE, 4, true, 1, 0, 1, false, OL_DTYPE_FLOAT};
  ol_quant_block three[3] = {{0.5, 0, 0, NULL, 0}, {1, 0, 0, NULL, 0}, {2, 0, 0, NULL, 0}};
  ol_quant_run run = {int4, three, 3};
  CHECK_OK(ol_quant_plan_set_runs(plan, &run, 1));
  three[0].scale = 99; /* the plan holds a copy */
  CHECK_OK(ol_quant_plan_block(plan, 0, 0, &block));
  CHECK(ol_quant_plan_run_count(plan) == 1 && block.scale == 0.5);
  CHECK_OK(ol_quant_plan_set_format(plan, OL_QUANT_INT4));
  CHECK_STATUS(ol_quant_plan_set_format(plan, OL_QUANT_FORMAT_COUNT), OL_INVALID_ARGUMENT);
  /* optional steps */
  const int64_t permutation[12] = {11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0};
  CHECK_OK(ol_quant_plan_set_permutation(plan, permutation, 12));
  const int64_t *indices = NULL;
  size_t count = 0;
  ol_quant_plan_permutation(plan, &indices, &count);
  CHECK(count == 12 && indices && indices[0] == 11);
  const int64_t outliers[1] = {3};
  CHECK_OK(ol_quant_plan_set_outliers(plan, outliers, 1));
  ol_quant_plan_outliers(plan, &indices, &count);
  CHECK(count == 1 && indices[0] == 3);
  const double h = sqrt(0.5), rotation[4] = {h, h, h, -h};
  CHECK_OK(ol_quant_plan_set_transform(plan, 2, rotation, 4, rotation, 4));
  uint32_t size = 0;
  const double *forward = NULL, *inverse = NULL;
  size_t nf = 0, ni = 0;
  ol_quant_plan_transform(plan, &size, &forward, &nf, &inverse, &ni);
  CHECK(size == 2 && nf == 4 && ni == 4 && forward[3] == -h);
  ol_quant_plan *copy = NULL;
  CHECK_OK(ol_quant_plan_clone(plan, &copy));
  CHECK(copy && ol_quant_plan_run_count(copy) == 1);
  ol_quant_plan_destroy(copy);
  ol_quant_plan_destroy(plan);
  ol_quant_plan_destroy(NULL);
  /* ORT profiles have their own factory */
  CHECK_STATUS(ol_quant_make_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 8, 128, &plan), OL_INVALID_ARGUMENT);
}

/* ------------------------------------------------------------ tensors */

static void quantize_and_dequantize(void) {
  /* the seed's INT4 example: scale 0.5 restores [-4, 0, 3.5] exactly */
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 3, OL_QUANT_DEFAULT_BLOCK_SIZE, &plan));
  if (!plan) return;
  const double half = 0.5;
  CHECK_OK(ol_quant_plan_set_scales(plan, 0, &half, 1));
  const float x[3] = {-4, 0, 3.5f};
  const int64_t dims[1] = {3};
  ol_value *tensor = f32(x, dims, 1), *encoded = NULL, *y = NULL;
  CHECK_OK(ol_quant_quantize(plan, tensor, "w", &encoded));
  CHECK(encoded && ol_value_get_kind(encoded) == OL_VALUE_ENCODED);
  CHECK(strcmp(ol_encoded_value_layout_name(encoded), "onnx_light.quantization.v1/int4") == 0);
  CHECK(ol_encoded_value_parameter_ref(encoded) == NULL);
  ol_quant_format format;
  CHECK_OK(ol_quant_value_format(encoded, &format));
  CHECK(format == OL_QUANT_INT4);
  CHECK_OK(ol_quant_dequantize(encoded, NULL, &y));
  if (y) {
    CHECK(ol_tensor_dtype(y) == OL_DTYPE_FLOAT && ol_tensor_element_count(y) == 3);
    CHECK(memcmp(ol_tensor_data(y), x, sizeof x) == 0);
  }
  ol_value_release(y);
  /* calibration: every element within half a scale step */
  float wide[8] = {1, -2, 3, 100, 0.5f, -0.25f, 2, -1};
  const int64_t eight[1] = {8};
  ol_value *w = f32(wide, eight, 1), *we = NULL;
  ol_quant_plan *cal = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 8, 4, &cal));
  if (cal) CHECK_OK(ol_quant_calibrate(cal, w));
  if (cal) CHECK_OK(ol_quant_quantize(cal, w, NULL, &we));
  if (we) CHECK_OK(ol_quant_dequantize(we, NULL, &y));
  for (int i = 0; y && i < 8; i++) {
    ol_quant_block block;
    CHECK_OK(ol_quant_plan_block(cal, 0, (size_t)i / 4, &block));
    CHECK(fabs(((const float *)ol_tensor_data(y))[i] - wide[i]) <= block.scale / 2 + 1e-6);
  }
  ol_value_release(y);
  /* errors name what is wrong */
  ol_value *ints = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT32, dims, 1, &ints));
  ol_value *bad = NULL;
  CHECK_STATUS(ol_quant_quantize(plan, ints, NULL, &bad), OL_INVALID_ARGUMENT);
  CHECK(error_has("float32") && error_has("int32"));
  CHECK_STATUS(ol_quant_dequantize(tensor, NULL, &bad), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_value_format(tensor, &format), OL_NOT_FOUND);
  CHECK_STATUS(ol_quant_quantize(plan, w, NULL, &bad), OL_INVALID_ARGUMENT); /* 8 values, plan of 3 */
  ol_value_release(ints);
  ol_value_release(we);
  ol_value_release(w);
  ol_value_release(encoded);
  ol_value_release(tensor);
  ol_quant_plan_destroy(cal);
  ol_quant_plan_destroy(plan);
}

/* The proto variants: TensorProto bytes in, EncodedValueProto bytes out, and back. */
static void proto_variants(void) {
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 3, 128, &plan));
  if (!plan) return;
  const double half = 0.5;
  CHECK_OK(ol_quant_plan_set_scales(plan, 0, &half, 1));
  float values[3] = {-4, 0, 3.5f};
  int64_t dims[1] = {3};
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.name = "weight";
  tp.has_data_type = 1;
  tp.data_type = OL_DTYPE_FLOAT;
  tp.n_dims = 1;
  tp.dims = dims;
  tp.n_float_data = 3;
  tp.float_data = values;
  uint8_t packed[64];
  size_t size = onnx__tensor_proto__pack(&tp, packed);
  void *encoded = NULL, *decoded = NULL;
  size_t encoded_size = 0, decoded_size = 0;
  CHECK_OK(ol_quant_quantize_tensor_proto(plan, packed, size, &encoded, &encoded_size));
  ol_value *value = NULL;
  if (encoded) CHECK_OK(ol_encoded_value_parse(encoded, encoded_size, &value));
  CHECK(value && ol_quant_value_format(value, &(ol_quant_format){0}) == OL_OK);
  ol_value_release(value);
  if (encoded) CHECK_OK(ol_quant_dequantize_tensor_proto(encoded, encoded_size, NULL, &decoded, &decoded_size));
  Onnx__TensorProto *back = decoded ? onnx__tensor_proto__unpack(NULL, decoded_size, decoded) : NULL;
  CHECK(back && strcmp(back->name, "weight") == 0 && back->data_type == OL_DTYPE_FLOAT && back->n_dims == 1 &&
        back->raw_data.len == sizeof values && memcmp(back->raw_data.data, values, sizeof values) == 0);
  if (back) onnx__tensor_proto__free_unpacked(back, NULL);
  /* non-float tensors are named in the error */
  int32_t ints[1] = {1};
  int64_t one[1] = {1};
  Onnx__TensorProto ip = ONNX__TENSOR_PROTO__INIT;
  ip.name = "i";
  ip.has_data_type = 1;
  ip.data_type = OL_DTYPE_INT32;
  ip.n_dims = 1;
  ip.dims = one;
  ip.n_int32_data = 1;
  ip.int32_data = ints;
  size = onnx__tensor_proto__pack(&ip, packed);
  void *none = NULL;
  size_t none_size = 0;
  CHECK_STATUS(ol_quant_quantize_tensor_proto(plan, packed, size, &none, &none_size), OL_INVALID_ARGUMENT);
  CHECK(error_has("'i'") && error_has("FLOAT, DOUBLE, FLOAT16 or BFLOAT16"));
  ol_free(encoded);
  ol_free(decoded);
  ol_quant_plan_destroy(plan);
}

/* transform_size / forward / inverse assigned one at a time, each checked. */
static void transform_fields(void) {
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_QUAROT, 8, 128, &plan));
  if (!plan) return;
  const double h = 0.70710678118654752440, rotation[4] = {h, h, h, -h}, bad[4] = {1, NAN, 0, 1};
  CHECK_STATUS(ol_quant_plan_set_forward(plan, rotation, 4), OL_INVALID_ARGUMENT); /* size still 0 */
  CHECK(error_has("forward must hold transform_size^2 = 0 values") && error_has("set transform_size first"));
  CHECK_STATUS(ol_quant_plan_set_transform_size(plan, 3), OL_INVALID_ARGUMENT);
  CHECK(error_has("transform_size 3 must divide the plan's 8 elements"));
  CHECK_OK(ol_quant_plan_set_transform_size(plan, 2));
  CHECK_STATUS(ol_quant_plan_set_inverse(plan, rotation, 3), OL_INVALID_ARGUMENT);
  CHECK(error_has("inverse must hold transform_size^2 = 4 values (transform_size 2), got 3"));
  CHECK_STATUS(ol_quant_plan_set_forward(plan, bad, 4), OL_INVALID_ARGUMENT);
  CHECK(error_has("forward value 1 is not finite"));
  CHECK_STATUS(ol_quant_plan_set_forward(plan, NULL, 4), OL_INVALID_ARGUMENT);
  CHECK(error_has("forward: NULL values"));
  CHECK_OK(ol_quant_plan_set_forward(plan, rotation, 4));
  CHECK_OK(ol_quant_plan_set_inverse(plan, rotation, 4));
  uint32_t size = 0;
  const double *forward = NULL, *inverse = NULL;
  size_t nf = 0, ni = 0;
  ol_quant_plan_transform(plan, &size, &forward, &nf, &inverse, &ni);
  CHECK(size == 2 && nf == 4 && ni == 4 && forward[3] == -h && inverse[0] == h);
  const float values[8] = {-1, -0.5f, 0, 0.25f, 0.5f, 0.75f, 1, 0.125f};
  const int64_t dims[1] = {8};
  ol_value *x = f32(values, dims, 1), *encoded = NULL;
  CHECK_OK(ol_quant_quantize(plan, x, NULL, &encoded));
  ol_value_release(encoded);
  CHECK_OK(ol_quant_plan_set_transform_size(plan, 2)); /* same size: matrices kept */
  ol_quant_plan_transform(plan, &size, &forward, &nf, &inverse, &ni);
  CHECK(nf == 4 && ni == 4);
  CHECK_OK(ol_quant_plan_set_transform_size(plan, 4)); /* new size: old matrices dropped */
  ol_quant_plan_transform(plan, &size, &forward, &nf, &inverse, &ni);
  CHECK(size == 4 && nf == 0 && ni == 0);
  CHECK_STATUS(ol_quant_quantize(plan, x, NULL, &encoded), OL_INVALID_ARGUMENT);
  CHECK(error_has("Transform matrices must be square (4 x 4)"));
  ol_value_release(x);
  ol_quant_plan_destroy(plan);
  plan = NULL;
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 32, 2, 16, &plan));
  CHECK_STATUS(ol_quant_plan_set_transform_size(plan, 2), OL_INVALID_ARGUMENT);
  CHECK(error_has("takes no transform"));
  CHECK_OK(ol_quant_plan_set_transform_size(plan, 0));
  CHECK_STATUS(ol_quant_plan_set_transform_size(NULL, 0), OL_INVALID_ARGUMENT);
  ol_quant_plan_destroy(plan);
}

/* Packs a FLOAT [3] TensorProto with optional name / doc_string (NULL: absent). */
static size_t pack_tensor(const char *name, const char *doc, bool external, bool loaded, uint8_t *out) {
  static float values[3] = {-4, 0, 3.5f};
  static int64_t dims[1] = {3};
  static Onnx__StringStringEntryProto where = ONNX__STRING_STRING_ENTRY_PROTO__INIT;
  static Onnx__StringStringEntryProto *entries[1] = {&where};
  where.key = "location", where.value = "weights.bin";
  Onnx__TensorProto tp = ONNX__TENSOR_PROTO__INIT;
  tp.name = (char *)name;
  tp.doc_string = (char *)doc;
  tp.has_data_type = 1;
  tp.data_type = OL_DTYPE_FLOAT;
  tp.n_dims = 1;
  tp.dims = dims;
  if (external) {
    tp.has_data_location = 1;
    tp.data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    tp.n_external_data = 1;
    tp.external_data = entries;
  }
  if (!external || loaded) tp.has_raw_data = 1, tp.raw_data.len = sizeof values, tp.raw_data.data = (uint8_t *)values;
  return onnx__tensor_proto__pack(&tp, out);
}

static bool same_optional(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* Proto conversions keep name and doc_string presence apart (absent vs ""). */
static void name_and_doc_presence(void) {
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 3, 128, &plan));
  if (!plan) return;
  const char *cases[][2] = {{NULL, NULL}, {"", NULL}, {NULL, ""}, {"", ""}, {"w", "d"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    uint8_t packed[128];
    size_t size = pack_tensor(cases[i][0], cases[i][1], false, false, packed);
    void *encoded = NULL, *decoded = NULL;
    size_t encoded_size = 0, decoded_size = 0;
    CHECK_OK(ol_quant_quantize_tensor_proto(plan, packed, size, &encoded, &encoded_size));
    Onnx__EncodedValueProto *ev = encoded ? onnx__encoded_value_proto__unpack(NULL, encoded_size, encoded) : NULL;
    CHECK(ev && same_optional(ev->name, cases[i][0]) && same_optional(ev->doc_string, cases[i][1]));
    if (ev) onnx__encoded_value_proto__free_unpacked(ev, NULL);
    if (encoded) CHECK_OK(ol_quant_dequantize_tensor_proto(encoded, encoded_size, NULL, &decoded, &decoded_size));
    Onnx__TensorProto *back = decoded ? onnx__tensor_proto__unpack(NULL, decoded_size, decoded) : NULL;
    CHECK(back && same_optional(back->name, cases[i][0]) && same_optional(back->doc_string, cases[i][1]));
    if (back) onnx__tensor_proto__free_unpacked(back, NULL);
    ol_free(encoded);
    ol_free(decoded);
  }
  ol_quant_plan_destroy(plan);
}

/* A tensor marked EXTERNAL is accepted once raw_data is loaded (metadata kept);
 * before that it is rejected by name. Same for an encoded value. */
static void external_once_loaded(void) {
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 3, 128, &plan));
  if (!plan) return;
  uint8_t packed[160];
  void *encoded = NULL, *plain = NULL, *none = NULL, *decoded = NULL;
  size_t encoded_size = 0, plain_size = 0, none_size = 0, decoded_size = 0;
  size_t size = pack_tensor("w", NULL, true, false, packed);
  CHECK_STATUS(ol_quant_quantize_tensor_proto(plan, packed, size, &none, &none_size), OL_INVALID_ARGUMENT);
  CHECK(error_has("tensor 'w' has external data (load it first)"));
  size = pack_tensor("w", NULL, true, true, packed);
  CHECK_OK(ol_quant_quantize_tensor_proto(plan, packed, size, &encoded, &encoded_size));
  size = pack_tensor("w", NULL, false, false, packed);
  CHECK_OK(ol_quant_quantize_tensor_proto(plan, packed, size, &plain, &plain_size));
  CHECK(encoded && plain && encoded_size == plain_size && memcmp(encoded, plain, plain_size) == 0);
  /* the encoded value marked EXTERNAL: decoded while raw_data is there */
  Onnx__EncodedValueProto *ev = encoded ? onnx__encoded_value_proto__unpack(NULL, encoded_size, encoded) : NULL;
  if (ev) {
    ev->has_data_location = 1;
    ev->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    uint8_t *marked = malloc(onnx__encoded_value_proto__get_packed_size(ev));
    size_t marked_size = onnx__encoded_value_proto__pack(ev, marked);
    CHECK_OK(ol_quant_dequantize_tensor_proto(marked, marked_size, NULL, &decoded, &decoded_size));
    ev->has_raw_data = 0;
    marked_size = onnx__encoded_value_proto__pack(ev, marked);
    ev->has_raw_data = 1;
    void *rejected = NULL;
    size_t rejected_size = 0;
    CHECK_STATUS(ol_quant_dequantize_tensor_proto(marked, marked_size, NULL, &rejected, &rejected_size),
                 OL_INVALID_ARGUMENT);
    CHECK(error_has("Load external encoded data before dequantization"));
    free(marked);
    onnx__encoded_value_proto__free_unpacked(ev, NULL);
  }
  CHECK(decoded != NULL);
  ol_free(decoded);
  ol_free(encoded);
  ol_free(plain);
  ol_quant_plan_destroy(plan);
}

/* ------------------------------------------------------------ MatMulNBits */

static void matmul_nbits_export(void) {
  enum { K = 35, N = 3 };
  float w[K * N];
  for (int i = 0; i < K * N; i++) w[i] = (float)(i % 3 - 1);
  const int64_t dims[2] = {K, N};
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, K, N, 16, &plan));
  if (!plan) return;
  int64_t shape[2];
  CHECK(ol_quant_plan_matrix_shape(plan, shape) == 2 && shape[0] == K && shape[1] == N);
  ol_value *x = f32(w, dims, 2), *encoded = NULL, *y = NULL;
  CHECK_OK(ol_quant_calibrate(plan, x));
  CHECK_OK(ol_quant_quantize(plan, x, "W", &encoded));
  ol_quant_matmul_nbits inputs;
  CHECK_OK(ol_quant_export_matmul_nbits(encoded, NULL, &inputs));
  CHECK(inputs.k == K && inputs.n == N && inputs.bits == 4 && inputs.block_size == 16);
  CHECK(inputs.weights && ol_tensor_dtype(inputs.weights) == OL_DTYPE_UINT8 && ol_tensor_rank(inputs.weights) == 3);
  CHECK(inputs.weights && ol_tensor_dims(inputs.weights)[0] == N && ol_tensor_dims(inputs.weights)[1] == 3 &&
        ol_tensor_dims(inputs.weights)[2] == 8);
  CHECK(inputs.scales && ol_tensor_dtype(inputs.scales) == OL_DTYPE_FLOAT && ol_tensor_element_count(inputs.scales) == 9);
  CHECK(inputs.zero_points == NULL); /* every zero point is the midpoint */
  ol_quant_matmul_nbits_clear(&inputs);
  CHECK(inputs.weights == NULL);
  CHECK_OK(ol_quant_dequantize(encoded, NULL, &y));
  if (y) CHECK(memcmp(ol_tensor_data(y), w, sizeof w) == 0); /* -1, 0 and 1 come back exactly */
  ol_value_release(y);
  /* a source of another shape is rejected, naming the plan's matrix */
  const int64_t flipped[2] = {N, K};
  ol_value *other = f32(w, flipped, 2);
  CHECK_STATUS(ol_quant_calibrate(plan, other), OL_INVALID_ARGUMENT);
  CHECK(error_has("[35, 3]"));
  /* a portable value has no MatMulNBits inputs */
  ol_quant_plan *int4 = NULL;
  ol_value *portable = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, K * N, 32, &int4));
  if (int4) CHECK_OK(ol_quant_quantize(int4, x, NULL, &portable));
  if (portable) CHECK_STATUS(ol_quant_export_matmul_nbits(portable, NULL, &inputs), OL_INVALID_ARGUMENT);
  ol_value_release(portable);
  ol_quant_plan_destroy(int4);
  ol_value_release(other);
  ol_value_release(encoded);
  ol_value_release(x);
  ol_quant_plan_destroy(plan);
}

/* ------------------------------------------------------------ shared parameter sets */

/* The seed's example: a set "common" of INT4 scale 0.5 over 4 floats. */
static void shared_parameter_set(void) {
  ol_model *model = NULL, *declared = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                               "g (float[4] X) => (float[4] Y) { Y = Identity(X) }",
                               &model));
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 4, 4, &plan));
  void *storage = NULL, *compact_type = NULL;
  size_t storage_size = 0, compact_size = 0;
  if (plan) CHECK_OK(ol_quant_make_type(plan, &storage, &storage_size));
  const int64_t four[1] = {4}, scalar[1] = {0};
  const float half = 0.5f;
  ol_value *scale = f32(&half, scalar, 0);
  ol_quant_parameters params = {.scales = scale};
  if (model && storage)
    CHECK_OK(ol_quant_add_parameters(model, "common", storage, storage_size, OL_DTYPE_FLOAT, four, 1, &params,
                                     &declared, &compact_type, &compact_size));
  CHECK(compact_type && compact_size > 0);
  /* duplicates and missing scales are rejected; the source model is unchanged */
  ol_model *again = NULL;
  if (declared)
    CHECK_STATUS(ol_quant_add_parameters(declared, "common", storage, storage_size, OL_DTYPE_FLOAT, four, 1,
                                         &params, &again, NULL, NULL), OL_INVALID_ARGUMENT);
  CHECK(error_has("Duplicate quantization parameter set 'common'"));
  ol_quant_parameters none = {0};
  if (model)
    CHECK_STATUS(ol_quant_add_parameters(model, "noscale", storage, storage_size, OL_DTYPE_FLOAT, four, 1, &none,
                                         &again, NULL, NULL), OL_INVALID_ARGUMENT);
  CHECK(error_has("requires fixed scales"));
  /* quantize_tensor_shared: values beyond the set's range saturate */
  const float x[4] = {-8, -1, 1, 7};
  ol_value *tensor = f32(x, four, 1), *shared = NULL, *y = NULL, *full = NULL;
  CHECK_OK(ol_quant_quantize_shared(tensor, declared, "common", "Q", &shared));
  const void *raw = NULL;
  size_t raw_size = 0;
  if (shared) {
    CHECK(strcmp(ol_encoded_value_parameter_ref(shared), "common") == 0);
    CHECK_OK(ol_encoded_value_raw_data(shared, &raw, &raw_size));
    CHECK(raw_size == 3); /* reserved byte plus four INT4 codes */
    CHECK_OK(ol_quant_dequantize(shared, NULL, &y)); /* the set the value retains */
  }
  const float saturated[4] = {-4, -1, 1, 3.5f};
  if (y) CHECK(memcmp(ol_tensor_data(y), saturated, sizeof saturated) == 0);
  ol_value_release(y);
  y = NULL;
  /* materialize: a self-contained value that decodes without any model */
  if (shared) CHECK_OK(ol_quant_materialize(shared, NULL, &full));
  if (full) {
    CHECK(ol_encoded_value_parameter_ref(full) == NULL);
    CHECK_OK(ol_quant_dequantize(full, NULL, &y));
    if (y) CHECK(memcmp(ol_tensor_data(y), saturated, sizeof saturated) == 0);
    ol_value_release(y);
    y = NULL;
  }
  /* a bare compact message needs the declaring model */
  void *bytes = NULL;
  size_t size = 0;
  ol_value *bare = NULL;
  if (shared) CHECK_OK(ol_encoded_value_serialize(shared, &bytes, &size));
  if (bytes) CHECK_OK(ol_encoded_value_parse(bytes, size, &bare));
  if (bare) {
    CHECK_STATUS(ol_quant_dequantize(bare, NULL, &y), OL_INVALID_ARGUMENT);
    CHECK(error_has("'common'"));
    CHECK_OK(ol_quant_dequantize(bare, declared, &y));
    ol_value_release(y);
    CHECK_STATUS(ol_quant_bind_model(bare, model), OL_INVALID_ARGUMENT); /* not declared there */
    CHECK_OK(ol_quant_bind_model(bare, declared));
    ol_value *again_full = NULL;
    CHECK_OK(ol_quant_materialize(bare, NULL, &again_full)); /* now it retains the set */
    ol_value_release(again_full);
  }
  ol_free(bytes);
  ol_value_release(bare);
  ol_value_release(full);
  ol_value_release(shared);
  ol_value_release(tensor);
  ol_value_release(scale);
  ol_free(storage);
  ol_free(compact_type);
  ol_quant_plan_destroy(plan);
  ol_model_destroy(declared);
  ol_model_destroy(model);
}

OL_TEST_MAIN(TEST(formats), TEST(plan_runs_and_blocks), TEST(quantize_and_dequantize), TEST(proto_variants),
             TEST(transform_fields), TEST(name_and_doc_presence), TEST(external_once_loaded),
             TEST(matmul_nbits_export), TEST(shared_parameter_set))
