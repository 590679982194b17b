/* The portable EncodedValueProto layout (c/src/quant/wire.c): descriptor
 * fields in order, 9-element block headers, run merging, type_ref through the
 * model catalogue, serialization round trips of every portable catalogue row,
 * and rejection of descriptors that differ from the versioned schema. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "harness.h"
#include "quant/codec.h"
#include "quant/plan.h"
#include "quant/wire.h"

typedef Onnx__StructTypeProto__Structure__Field field_t;

static const field_t *field(const Onnx__StructTypeProto *st, size_t i) {
  return st->structure->field[i];
}
static const Onnx__StructTypeProto *inner(const field_t *f) { return f->type->struct_type; }

/* Serializes and parses back (what a file or another runtime would see). */
static Onnx__EncodedValueProto *reparse(const Onnx__EncodedValueProto *value) {
  size_t size = onnx__encoded_value_proto__get_packed_size(value);
  uint8_t *bytes = malloc(size);
  onnx__encoded_value_proto__pack(value, bytes);
  Onnx__EncodedValueProto *copy = onnx__encoded_value_proto__unpack(NULL, size, bytes);
  free(bytes);
  return copy;
}

static Onnx__EncodedValueProto *encode_floats(const ol_quant_plan *plan, const float *data,
                                              int rank, const int64_t *dims) {
  Onnx__EncodedValueProto *value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, data, rank, dims, "weights", &value));
  return value;
}

/* ------------------------------------------------------------ layout */

static void test_descriptor_layout(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 300, 128, &plan));
  float data[300];
  for (int i = 0; i < 300; i++) data[i] = (float)((i % 15) - 7);
  const int64_t dims[2] = {3, 100};
  Onnx__EncodedValueProto *value = encode_floats(plan, data, 2, dims);
  if (!value) return;
  const Onnx__StructTypeProto *root = value->struct_type;
  CHECK(strcmp(root->name, "onnx_light.quantization.v1/int4") == 0);
  CHECK(root->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE && root->structure->n_field == 7);
  const char *names[7] = {"reserved", "permutation", "forward", "inverse", "outlier_indices",
                          "outlier_values", "blocks"};
  for (int i = 0; i < 7; i++) CHECK(strcmp(field(root, i)->name, names[i]) == 0);
  const Onnx__TypeProto__Tensor *reserved = field(root, 0)->type->tensor_type;
  CHECK(reserved->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 && reserved->shape->n_dim == 1 &&
        reserved->shape->dim[0]->dim_value == 1);
  CHECK(field(root, 2)->type->tensor_type->shape->n_dim == 2);
  const Onnx__StructTypeProto *blocks = inner(field(root, 6));
  CHECK(blocks->structure->n_field == 3);
  const field_t *count = field(blocks, 0);
  CHECK(strcmp(count->name, "count") == 0 && count->constant->n_int64_data == 1 &&
        count->constant->int64_data[0] == 3 && count->constant->n_dims == 0);
  CHECK(strcmp(field(blocks, 1)->name, "run_0") == 0 && strcmp(field(blocks, 2)->name, "run_2") == 0);
  const Onnx__StructTypeProto *run = inner(field(blocks, 2));
  CHECK(run->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY && run->array->dimension == 1);
  const Onnx__StructTypeProto *item = run->array->element_type->struct_type;
  const char *block_names[6] = {"parameters", "scale", "zero_point", "offset", "codebook", "codes"};
  for (int i = 0; i < 6; i++) CHECK(strcmp(field(item, i)->name, block_names[i]) == 0);
  const Onnx__TensorProto *header = field(item, 0)->constant;
  const int64_t expected[9] = {44, 0, 4, 1, 1, 0, 1, 0, 10};
  CHECK(header->n_dims == 1 && header->dims[0] == 9 && header->n_int64_data == 9 && !header->has_raw_data);
  CHECK(memcmp(header->int64_data, expected, sizeof(expected)) == 0);
  CHECK(field(item, 1)->type->tensor_type->shape != NULL &&
        field(item, 1)->type->tensor_type->shape->n_dim == 0); /* present, empty */
  CHECK(field(item, 5)->type->tensor_type->shape->dim[0]->dim_value == 22);
  CHECK(value->raw_data.len == 1 + 3 * 24 + 64 + 64 + 22);
  CHECK(strcmp(value->name, "weights") == 0 && value->logical_type->tensor_type->elem_type == 1);
  CHECK(value->parameter_ref == NULL && value->doc_string == NULL);

  Onnx__EncodedValueProto *copy = reparse(value);
  ol_quant_decoded decoded;
  CHECK_OK(ol_quant_decode_proto(copy, NULL, &decoded, NULL));
  CHECK(decoded.rank == 2 && decoded.dims[1] == 100 && decoded.count == 300 &&
        decoded.dtype == OL_DTYPE_FLOAT);
  ol_quant_decoded_clear(&decoded);
  ol_quant_proto_free(copy);
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
}

static void test_run_merging(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_EXL2, 16, 4, &plan));
  ol_quant_run runs[3];
  for (int i = 0; i < 3; i++) CHECK_OK(ol_quant_plan_run(plan, 0, &runs[i]));
  /* runs 0 and 1 (1 + 2 blocks) share a header, run 2 (1 block) has 5 bits */
  CHECK_OK(ol_quant_run_set_blocks(&runs[0], runs[0].blocks, 1));
  CHECK_OK(ol_quant_run_set_blocks(&runs[1], runs[1].blocks, 2));
  runs[1].blocks[1].scale = 0.5;
  CHECK_OK(ol_quant_run_set_blocks(&runs[2], runs[2].blocks, 1));
  runs[2].layout.bits = 5;
  CHECK_OK(ol_quant_plan_set_runs(plan, runs, 3));
  float data[16];
  for (int i = 0; i < 16; i++) data[i] = (float)(i - 8);
  const int64_t dims[1] = {16};
  Onnx__EncodedValueProto *value = encode_floats(plan, data, 1, dims);
  if (value) {
    const Onnx__StructTypeProto *blocks = inner(field(value->struct_type, 6));
    CHECK(blocks->structure->n_field == 3);
    CHECK(strcmp(field(blocks, 1)->name, "run_0") == 0 && inner(field(blocks, 1))->array->dimension == 3);
    CHECK(strcmp(field(blocks, 2)->name, "run_3") == 0 && inner(field(blocks, 2))->array->dimension == 1);
    ol_quant_decoded decoded;
    ol_quant_plan *parsed;
    CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, &parsed));
    CHECK(parsed->run_count == 2 && parsed->runs[0].block_count == 3);
    CHECK(parsed->runs[0].blocks[2].scale == 0.5 && parsed->runs[1].layout.bits == 5);
    for (int i = 0; i < 16; i++) CHECK(decoded.values[i] == data[i] || i < 4 || i >= 12);
    ol_quant_plan_destroy(parsed);
    ol_quant_decoded_clear(&decoded);
  }
  for (int i = 0; i < 3; i++) ol_quant_run_clear(&runs[i]);
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
}

/* Every portable row: the message survives serialization and decodes to the
 * codec's own reconstruction. */
static void test_every_row_serializes(void) {
  float data[16];
  double values[16], expected[16];
  for (int i = 0; i < 16; i++) data[i] = (float)(-1 + i * 2.0 / 15), values[i] = data[i];
  const int64_t dims[2] = {4, 4};
  double table[4096];
  for (int i = 0; i < 4096; i++) table[i] = -1 + (i % 256) * 2.0 / 255;
  for (int f = 0; f < OL_QUANT_FORMAT_COUNT; f++) {
    const ol_quant_profile *row = ol_quant_profile_info((ol_quant_format)f);
    if (row->ort) continue;
    ol_quant_plan *plan;
    CHECK_OK(ol_quant_make_plan((ol_quant_format)f, 16, 8, &plan));
    for (size_t r = 0; r < plan->run_count; r++)
      for (size_t b = 0; b < plan->runs[r].block_count; b++)
        if (row->table == OL_QUANT_TABLE_LEARNED)
          CHECK_OK(ol_quant_block_set_codebook(&plan->runs[r].blocks[b], table,
                                               (size_t)ol_quant_layout_table_size(&plan->runs[r].layout)));
    if (row->needs_transform) {
      const double id[4] = {1, 0, 0, 1};
      CHECK_OK(ol_quant_plan_set_transform(plan, 2, id, 4, id, 4));
    }
    uint8_t *payload;
    size_t size;
    CHECK_OK(ol_quant_encode(plan, values, 16, OL_DTYPE_FLOAT, &payload, &size));
    CHECK_OK(ol_quant_decode(plan, payload, size, 16, OL_DTYPE_FLOAT, expected, NULL));
    Onnx__EncodedValueProto *value = encode_floats(plan, data, 2, dims);
    if (value) {
      CHECK(value->raw_data.len == size && memcmp(value->raw_data.data, payload, size) == 0);
      char name[96];
      snprintf(name, sizeof(name), "onnx_light.quantization.v1/%s", row->name);
      CHECK(strcmp(value->struct_type->name, name) == 0);
      Onnx__EncodedValueProto *copy = reparse(value);
      ol_quant_decoded decoded;
      CHECK_OK(ol_quant_decode_proto(copy, NULL, &decoded, NULL));
      CHECK(decoded.count == 16 && memcmp(decoded.values, expected, sizeof(expected)) == 0);
      ol_quant_decoded_clear(&decoded);
      ol_quant_proto_free(copy);
    }
    free(payload);
    ol_quant_proto_free(value);
    ol_quant_plan_destroy(plan);
  }
}

/* Empty tensors have no runs; scalars are one-element tensors. */
static void test_empty_and_scalar(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 0, 128, &plan));
  const int64_t empty[2] = {0, 3};
  Onnx__EncodedValueProto *value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT16, NULL, 2, empty, "e", &value));
  if (value) {
    CHECK(value->raw_data.len == 1);
    const Onnx__StructTypeProto *blocks = inner(field(value->struct_type, 6));
    CHECK(blocks->structure->n_field == 1 && field(blocks, 0)->constant->int64_data[0] == 0);
    Onnx__EncodedValueProto *copy = reparse(value);
    ol_quant_decoded decoded;
    CHECK_OK(ol_quant_decode_proto(copy, NULL, &decoded, NULL));
    CHECK(decoded.count == 0 && decoded.rank == 2 && decoded.dims[1] == 3 &&
          decoded.dtype == OL_DTYPE_FLOAT16);
    ol_quant_decoded_clear(&decoded);
    ol_quant_proto_free(copy);
  }
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_plan(OL_QUANT_NF4, 1, 128, &plan));
  const double scalar = -0.5;
  value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_DOUBLE, &scalar, 0, NULL, NULL, &value));
  if (value) {
    ol_quant_decoded decoded;
    CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
    CHECK(decoded.rank == 0 && decoded.count == 1 && decoded.values[0] == -0.5250730514526367);
    ol_quant_decoded_clear(&decoded);
  }
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
}

static void test_make_type_without_tables(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_AQLM, 20, 16, &plan));
  Onnx__StructTypeProto *type;
  CHECK_OK(ol_quant_make_type_proto(plan, &type)); /* learned tables not supplied yet */
  const Onnx__StructTypeProto *blocks = inner(field(type, 6));
  const Onnx__StructTypeProto *item = inner(field(blocks, 1))->array->element_type->struct_type;
  CHECK(field(item, 4)->type->tensor_type->shape->dim[0]->dim_value == 2 * 256 * 8);
  CHECK(field(item, 5)->type->tensor_type->shape->dim[0]->dim_value == 2 * 2); /* 2 vectors x 2 books */
  ol_quant_type_free(type);
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 16, 2, 16, &plan));
  CHECK_STATUS(ol_quant_make_type_proto(plan, &type), OL_INVALID_ARGUMENT);
  ol_quant_plan_destroy(plan);
}

/* ------------------------------------------------------------ references and rejections */

static Onnx__EncodedValueProto *int4_value(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 6, 4, &plan));
  const float data[6] = {-4, 0, 3, 1, 2, -1};
  const int64_t dims[1] = {6};
  Onnx__EncodedValueProto *value = encode_floats(plan, data, 1, dims);
  ol_quant_plan_destroy(plan);
  Onnx__EncodedValueProto *copy = reparse(value);
  ol_quant_proto_free(value);
  return copy;
}

static void replace_string(char **slot, const char *text) {
  free(*slot);
  *slot = strdup(text);
}

static void test_type_ref(void) {
  Onnx__EncodedValueProto *value = int4_value();
  Onnx__StructTypeProto *declared = value->struct_type;
  declared->has_type_id = 1;
  declared->type_id = 7;
  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 7;
  value->struct_type = &ref;
  const Onnx__StructTypeProto *catalogue[1] = {declared};
  ol_type_catalogue *types = NULL;
  CHECK_OK(ol_type_catalogue_create(catalogue, 1, &types));
  ol_quant_decoded decoded;
  CHECK_OK(ol_quant_decode_proto(value, types, &decoded, NULL));
  CHECK(decoded.count == 6 && decoded.values[0] == -4);
  ol_quant_decoded_clear(&decoded);
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "type_ref 7") != NULL);
  ref.type_ref = 8;
  CHECK_STATUS(ol_quant_decode_proto(value, types, &decoded, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "type_ref 8") != NULL);
  ol_type_catalogue_destroy(types);
  value->struct_type = declared; /* a type_id on an inline declaration is ignored */
  CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
  ol_quant_decoded_clear(&decoded);
  ol_quant_proto_free(value);
}

static void test_schema_rejections(void) {
  ol_quant_decoded decoded;
  const char *bad_names[] = {"onnx_light.quantization.v1/QUAROT", "onnx_light.quantization.v1/",
                             "onnx_light.quantization.v1/unknown", "int4",
                             "onnx_light.quantization.v2/int4"};
  for (size_t i = 0; i < sizeof(bad_names) / sizeof(bad_names[0]); i++) {
    Onnx__EncodedValueProto *value = int4_value();
    replace_string(&value->struct_type->name, bad_names[i]);
    CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
    ol_quant_proto_free(value);
  }
  /* a renamed profile with the same layout is a different schema name, still valid */
  Onnx__EncodedValueProto *value = int4_value();
  replace_string(&value->struct_type->name, "onnx_light.quantization.v1/exl2");
  CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
  ol_quant_decoded_clear(&decoded);
  replace_string(&value->struct_type->name, "onnx_light.quantization.v1/ort_matmulnbits_int4");
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  ol_quant_proto_free(value);

  /* field names, run names, block counts and headers must match exactly */
  value = int4_value();
  replace_string(&value->struct_type->structure->field[1]->name, "perm");
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "perm") != NULL);
  ol_quant_proto_free(value);
  value = int4_value();
  Onnx__StructTypeProto *blocks = value->struct_type->structure->field[6]->type->struct_type;
  replace_string(&blocks->structure->field[2]->name, "run_2");
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "versioned schema") != NULL);
  ol_quant_proto_free(value);
  value = int4_value();
  blocks = value->struct_type->structure->field[6]->type->struct_type;
  blocks->structure->field[0]->constant->int64_data[0] = 3;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  ol_quant_proto_free(value);
  value = int4_value();
  blocks = value->struct_type->structure->field[6]->type->struct_type;
  Onnx__TensorProto *header = blocks->structure->field[1]->type->struct_type->array->element_type
                                  ->struct_type->structure->field[0]->constant;
  header->int64_data[3] = 2; /* signedness must be 0/1 */
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  header->int64_data[3] = 1;
  header->int64_data[2] = 17; /* bits */
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  header->int64_data[2] = 4;
  header->int64_data[8] = 3; /* cast_type INT8 */
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  header->int64_data[8] = 10;
  header->int64_data[0] = 5; /* block count exceeds the logical size */
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  header->int64_data[0] = -1;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  header->int64_data[0] = 4;
  CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
  ol_quant_decoded_clear(&decoded);
  /* payload problems surface through the codec */
  value->raw_data.data[0] = 1;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  value->raw_data.data[0] = 0;
  value->raw_data.len--;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  value->raw_data.len++;
  /* the logical type must be a concrete floating tensor covering the blocks */
  value->logical_type->tensor_type->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__INT8;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  value->logical_type->tensor_type->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16;
  CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
  ol_quant_decoded_clear(&decoded);
  value->logical_type->tensor_type->shape->dim[0]->dim_value = 7;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  value->logical_type->tensor_type->shape->dim[0]->dim_value = 6;
  /* marked EXTERNAL: decoded once raw_data is loaded, rejected before */
  value->has_data_location = 1;
  value->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
  ol_quant_decoded_clear(&decoded);
  CHECK(value->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
  value->has_raw_data = 0;
  CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "external") != NULL);
  value->has_raw_data = 1;
  ol_quant_proto_free(value);
}

/* Encoding errors surface unchanged through the proto entry point. */
static void test_encode_proto_errors(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 4, 4, &plan));
  const float data[4] = {1, NAN, 0, 0};
  const int64_t dims[1] = {4}, wrong[1] = {5}, negative[1] = {-4};
  Onnx__EncodedValueProto *value = NULL;
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, data, 1, dims, NULL, &value),
               OL_INVALID_ARGUMENT);
  CHECK(value == NULL && strstr(ol_last_error(), "finite") != NULL);
  const float ok[5] = {1, 2, 3, 4, 5};
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, ok, 1, wrong, NULL, &value),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, ok, 1, negative, NULL, &value),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_INT32, ok, 1, dims, NULL, &value),
               OL_INVALID_ARGUMENT);
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, ok, 1, dims, NULL, &value));
  CHECK(value && value->name == NULL); /* absent name stays absent */
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
}

/* ------------------------------------------------------------ golden messages */

/* Whole serialized messages written by tests/data/quant/gen_golden.py. */
static void check_golden_message(const char *file, const ol_quant_plan *plan, const float *data,
                                 int rank, const int64_t *dims, const char *name) {
  char path[256];
  snprintf(path, sizeof(path), "tests/data/quant/%s", file);
  FILE *f = fopen(path, "rb");
  CHECK(f != NULL);
  if (!f) return;
  static uint8_t golden[4096];
  size_t golden_size = fread(golden, 1, sizeof(golden), f);
  fclose(f);
  Onnx__EncodedValueProto *value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, data, rank, dims, name, &value));
  if (!value) return;
  size_t size = onnx__encoded_value_proto__get_packed_size(value);
  uint8_t *bytes = malloc(size);
  onnx__encoded_value_proto__pack(value, bytes);
  CHECK(size == golden_size && memcmp(bytes, golden, size) == 0);
  if (size != golden_size || memcmp(bytes, golden, size) != 0)
    fprintf(stderr, "  golden %s: %zu vs %zu bytes\n", file, size, golden_size);
  free(bytes);
  Onnx__EncodedValueProto *parsed = onnx__encoded_value_proto__unpack(NULL, golden_size, golden);
  CHECK(parsed != NULL);
  ol_quant_decoded a, b;
  CHECK_OK(ol_quant_decode_proto(parsed, NULL, &a, NULL));
  CHECK_OK(ol_quant_decode_proto(value, NULL, &b, NULL));
  CHECK(a.count == b.count && memcmp(a.values, b.values, a.count * sizeof(double)) == 0);
  CHECK(strcmp(parsed->name, name) == 0);
  ol_quant_decoded_clear(&a);
  ol_quant_decoded_clear(&b);
  if (parsed) onnx__encoded_value_proto__free_unpacked(parsed, NULL);
  ol_quant_proto_free(value);
}

static void test_golden_messages(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 7, 4, &plan));
  plan->runs[0].blocks[0].scale = 0.5;
  const float v1[7] = {-4, 0, 3.5f, -1.25f, 7, -8, 2.5f};
  const int64_t d1[1] = {7};
  check_golden_message("int4_two_runs.encoded.pb", plan, v1, 1, d1, "weights");
  ol_quant_plan_destroy(plan);

  CHECK_OK(ol_quant_make_plan(OL_QUANT_NF4, 8, 8, &plan));
  plan->runs[0].blocks[0].scale = 2;
  const float v2[8] = {-2, -1.3f, -0.2f, 0, 0.1f, 0.5f, 1.5f, 2};
  const int64_t d2[2] = {2, 4};
  check_golden_message("nf4.encoded.pb", plan, v2, 2, d2, "nf4_weights");
  ol_quant_plan_destroy(plan);

  CHECK_OK(ol_quant_make_plan(OL_QUANT_TILED_FLOAT, 4, 4, &plan));
  plan->runs[0].layout.cast_type = OL_DTYPE_FLOAT16;
  const int64_t perm[4] = {3, 2, 1, 0}, outlier[1] = {1};
  CHECK_OK(ol_quant_plan_set_permutation(plan, perm, 4));
  CHECK_OK(ol_quant_plan_set_outliers(plan, outlier, 1));
  const float v3[4] = {1.5f, 1000, -2.25f, 0.1f};
  const int64_t d3[2] = {2, 2};
  check_golden_message("tiled_float_f16_perm_outlier.encoded.pb", plan, v3, 2, d3, "tiles");
  ol_quant_plan_destroy(plan);
}

OL_TEST_MAIN(TEST(test_descriptor_layout), TEST(test_run_merging), TEST(test_every_row_serializes), TEST(test_empty_and_scalar),
             TEST(test_make_type_without_tables), TEST(test_type_ref), TEST(test_schema_rejections),
             TEST(test_encode_proto_errors), TEST(test_golden_messages))
