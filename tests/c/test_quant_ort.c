/* ORT MatMulNBits input layout (c/src/quant/ort.c): the seed's example
 * (35 x 3 INT4 weights, block 16), exact B/scales/zero_points bytes, zero-point
 * storage selection, source dtypes, export, and every rejection. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "harness.h"
#include "quant/ort.h"
#include "quant/plan.h"
#include "quant/wire.h"

static Onnx__EncodedValueProto *reparse(const Onnx__EncodedValueProto *value) {
  size_t size = onnx__encoded_value_proto__get_packed_size(value);
  uint8_t *bytes = malloc(size);
  onnx__encoded_value_proto__pack(value, bytes);
  Onnx__EncodedValueProto *copy = onnx__encoded_value_proto__unpack(NULL, size, bytes);
  free(bytes);
  return copy;
}

/* The seed's weights: (arange(K*N).reshape(K, N) % 3 - 1). */
static void seed_weights(int k, int n, float *w) {
  for (int i = 0; i < k * n; i++) w[i] = (float)(i % 3 - 1);
}

static void test_seed_example(void) {
  float w[35 * 3];
  seed_weights(35, 3, w);
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 35, 3, 16, &plan));
  const int64_t dims[2] = {35, 3};
  Onnx__EncodedValueProto *value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, "w", &value));
  if (!value) return;
  CHECK(strcmp(value->struct_type->name, "onnx_light.quantization.v1/ort_matmulnbits_int4") == 0);
  CHECK(value->struct_type->structure->n_field == 3); /* zero points implicit */
  CHECK(value->raw_data.len == 3 * 3 * 8 + 3 * 3 * 4);
  /* column 0 rows 0..15 are (3r % 3 - 1) = -1 -> code 7, packed two per byte */
  CHECK(value->raw_data.data[0] == 0x77);
  /* column 1 rows: (3r+1) % 3 - 1 = 0 -> code 8 */
  CHECK(value->raw_data.data[3 * 8] == 0x88);
  /* column 0, group 2 holds rows 32..34 then 13 zero tail codes */
  CHECK(value->raw_data.data[2 * 8] == 0x77 && value->raw_data.data[2 * 8 + 1] == 0x07 &&
        value->raw_data.data[2 * 8 + 2] == 0);
  Onnx__EncodedValueProto *copy = reparse(value);
  ol_quant_decoded decoded;
  CHECK_OK(ol_quant_decode_proto(copy, NULL, &decoded, NULL));
  CHECK(decoded.rank == 2 && decoded.dims[0] == 35 && decoded.dims[1] == 3);
  for (int i = 0; i < 105; i++) CHECK(decoded.values[i] == w[i]);
  ol_quant_decoded_clear(&decoded);
  ol_quant_matmul_nbits_inputs in;
  CHECK_OK(ol_quant_export_matmul_nbits_inputs(copy, NULL, &in));
  CHECK(in.k == 35 && in.n == 3 && in.bits == 4 && in.block_size == 16 && in.zero_points == NULL);
  CHECK(strcmp(in.weights->name, "B") == 0 && in.weights->n_dims == 3 && in.weights->dims[2] == 8);
  CHECK(in.weights->data_type == OL_DTYPE_UINT8 && in.weights->raw_data.len == 72);
  CHECK(memcmp(in.weights->raw_data.data, value->raw_data.data, 72) == 0);
  CHECK(strcmp(in.scales->name, "scales") == 0 && in.scales->data_type == OL_DTYPE_FLOAT &&
        in.scales->dims[0] == 3 && in.scales->dims[1] == 3);
  float first;
  memcpy(&first, in.scales->raw_data.data, 4);
  CHECK(first == 1);
  ol_quant_matmul_nbits_inputs_clear(&in);
  /* a portable value is not an ORT value */
  ol_quant_plan *portable;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 105, 128, &portable));
  Onnx__EncodedValueProto *other = NULL;
  CHECK_OK(ol_quant_encode_proto(portable, OL_DTYPE_FLOAT, w, 2, dims, NULL, &other));
  CHECK_STATUS(ol_quant_export_matmul_nbits_inputs(other, NULL, &in), OL_INVALID_ARGUMENT);
  ol_quant_proto_free(other);
  ol_quant_plan_destroy(portable);
  ol_quant_proto_free(copy);
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
}

/* Zero points: packed UINT8 for in-range integers, source dtype otherwise. */
static void test_zero_point_storage(void) {
  float w[40 * 2];
  for (int i = 0; i < 80; i++) w[i] = (float)((i * 7) % 11) * 0.25f - 1.0f;
  const int64_t dims[2] = {40, 2};
  const ol_quant_format formats[3] = {OL_QUANT_ORT_MATMULNBITS_INT2, OL_QUANT_ORT_MATMULNBITS_INT4,
                                      OL_QUANT_ORT_MATMULNBITS_INT8};
  for (int f = 0; f < 3; f++) {
    for (int mode = 0; mode < 2; mode++) {
      ol_quant_plan *plan;
      CHECK_OK(ol_quant_make_matmul_nbits_plan(formats[f], 40, 2, 16, &plan));
      ol_quant_run *run = &plan->runs[0];
      uint32_t bits = run->layout.bits;
      CHECK(run->block_count == 6);
      for (size_t b = 0; b < 6; b++) {
        run->blocks[b].scale = 0.25;
        run->blocks[b].zero_point = mode == 0 ? (double)(b % (1u << bits)) : 1.5;
      }
      Onnx__EncodedValueProto *value = NULL;
      CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value));
      if (!value) continue;
      CHECK(value->struct_type->structure->n_field == 4);
      const Onnx__TypeProto__Tensor *z = value->struct_type->structure->field[3]->type->tensor_type;
      uint64_t row_bytes = (3 * bits + 7) / 8;
      if (mode == 0) {
        CHECK(z->elem_type == OL_DTYPE_UINT8 && z->shape->dim[1]->dim_value == (int64_t)row_bytes);
        const uint8_t *zp = value->raw_data.data + 2 * 3 * 16 * bits / 8 + 6 * 4;
        /* column 1 restarts at a byte boundary: groups 3, 4, 5 */
        uint32_t mask = (1u << bits) - 1;
        CHECK((zp[row_bytes] & mask) == 3 % (1u << bits));
      } else {
        CHECK(z->elem_type == OL_DTYPE_FLOAT && z->shape->dim[1]->dim_value == 3);
      }
      ol_quant_decoded decoded;
      CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
      for (int i = 0; i < 80; i++) {
        int row = i / 2, col = i % 2;
        double zero = run->blocks[col * 3 + row / 16].zero_point;
        double code = w[i] / 0.25 + zero, hi = ldexp(1, (int)bits) - 1;
        if (code < 0 || code > hi) continue; /* saturated */
        if (mode == 0) CHECK(decoded.values[i] == w[i]);
        else CHECK(fabs(decoded.values[i] - w[i]) <= 0.125);
      }
      ol_quant_decoded_clear(&decoded);
      ol_quant_matmul_nbits_inputs in;
      CHECK_OK(ol_quant_export_matmul_nbits_inputs(value, NULL, &in));
      CHECK(in.zero_points != NULL && in.bits == bits);
      CHECK(in.zero_points->data_type == (mode == 0 ? OL_DTYPE_UINT8 : OL_DTYPE_FLOAT));
      ol_quant_matmul_nbits_inputs_clear(&in);
      ol_quant_proto_free(value);
      ol_quant_plan_destroy(plan);
    }
  }
}

/* FLOAT16 and BFLOAT16 sources: scales are rounded to the source dtype first. */
static void test_half_sources(void) {
  const ol_dtype types[2] = {OL_DTYPE_FLOAT16, OL_DTYPE_BFLOAT16};
  for (int t = 0; t < 2; t++) {
    uint16_t w[16 * 2];
    for (int i = 0; i < 32; i++) {
      float v = (float)(i % 5) * 0.1f - 0.2f;
      w[i] = types[t] == OL_DTYPE_FLOAT16 ? ol_f32_to_f16(v) : ol_f32_to_bf16(v);
    }
    ol_quant_plan *plan;
    CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT8, 16, 2, 16, &plan));
    for (size_t b = 0; b < 2; b++) plan->runs[0].blocks[b].scale = 0.2 / 127;
    const int64_t dims[2] = {16, 2};
    Onnx__EncodedValueProto *value = NULL;
    CHECK_OK(ol_quant_encode_proto(plan, types[t], w, 2, dims, NULL, &value));
    if (!value) continue;
    CHECK(value->raw_data.len == 2 * 16 + 2 * 2);
    uint16_t scale_bits;
    memcpy(&scale_bits, value->raw_data.data + 32, 2);
    uint16_t expected = types[t] == OL_DTYPE_FLOAT16 ? ol_f32_to_f16((float)(0.2 / 127))
                                                     : ol_f32_to_bf16((float)(0.2 / 127));
    CHECK(scale_bits == expected);
    ol_quant_decoded decoded;
    CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
    CHECK(decoded.dtype == types[t]);
    double scale = types[t] == OL_DTYPE_FLOAT16 ? ol_f16_to_f32(expected) : ol_bf16_to_f32(expected);
    for (int i = 0; i < 32; i++) {
      double src = types[t] == OL_DTYPE_FLOAT16 ? ol_f16_to_f32(w[i]) : ol_bf16_to_f32(w[i]);
      CHECK(fabs(decoded.values[i] - src) <= 0.5 * scale * (1 + 1e-9));
    }
    ol_quant_decoded_clear(&decoded);
    ol_quant_proto_free(value);
    ol_quant_plan_destroy(plan);
  }
}

static void test_rejections(void) {
  float w[32] = {0};
  const int64_t dims[2] = {16, 2}, wrong[2] = {16, 3};
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 16, 2, 16, &plan));
  Onnx__EncodedValueProto *value = NULL;
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, wrong, NULL, &value), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_DOUBLE, w, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "FLOAT, FLOAT16 or BFLOAT16") != NULL);
  const int64_t perm[32] = {0};
  CHECK_OK(ol_quant_plan_set_permutation(plan, perm, 32));
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_quant_plan_set_permutation(plan, NULL, 0));
  plan->runs[0].blocks[1].offset = 0.5;
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  plan->runs[0].blocks[1].offset = 0;
  plan->runs[0].layout.signed_codes = true;
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  plan->runs[0].layout.signed_codes = false;
  /* zero scale: only for all-zero groups; underflowing scales rejected */
  plan->runs[0].blocks[0].scale = 0;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value));
  ol_quant_proto_free(value);
  value = NULL;
  w[0] = 1;
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "zero scale") != NULL);
  plan->runs[0].blocks[0].scale = 1e-30;
  uint16_t h[32] = {0};
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT16, h, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "underflows") != NULL);
  plan->runs[0].blocks[0].scale = -0.5; /* negative finite scales are accepted */
  w[1] = NAN;
  CHECK_STATUS(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value), OL_INVALID_ARGUMENT);
  w[1] = 0;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, NULL, &value));
  ol_quant_decoded decoded;
  CHECK_OK(ol_quant_decode_proto(value, NULL, &decoded, NULL));
  CHECK(decoded.values[0] == 1); /* code round(1 / -0.5 + 8) = 6: (6 - 8) * -0.5 */
  ol_quant_decoded_clear(&decoded);
  /* decoding rejects tail codes, bad sizes and schema changes */
  Onnx__EncodedValueProto *copy = reparse(value);
  copy->raw_data.len--;
  CHECK_STATUS(ol_quant_decode_proto(copy, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  copy->raw_data.len++;
  copy->struct_type->structure->field[0]->constant->int64_data[1] = 32;
  CHECK_STATUS(ol_quant_decode_proto(copy, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
  ol_quant_proto_free(copy);
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);

  float w2[20 * 1] = {0};
  const int64_t d2[2] = {20, 1};
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 20, 1, 16, &plan));
  plan->runs[0].blocks[1].zero_point = 3; /* packed: one byte, low nibble 8, high nibble 3 */
  value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w2, 2, d2, NULL, &value));
  if (value) {
    copy = reparse(value);
    CHECK(copy->raw_data.len == 16 + 8 + 1 && copy->raw_data.data[24] == 0x38);
    copy->raw_data.data[8 + 2] = 0x80; /* row 16 + 5 is past K = 20 */
    CHECK_STATUS(ol_quant_decode_proto(copy, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "tail code") != NULL);
    ol_quant_matmul_nbits_inputs in;
    CHECK_STATUS(ol_quant_export_matmul_nbits_inputs(copy, NULL, &in), OL_INVALID_ARGUMENT);
    ol_quant_proto_free(copy);
  }
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);

  /* unused zero-point bits: INT2, 3 groups -> one byte with one unused crumb */
  float w3[48] = {0};
  const int64_t d3[2] = {48, 1};
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT2, 48, 1, 16, &plan));
  plan->runs[0].blocks[0].zero_point = 1;
  value = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w3, 2, d3, NULL, &value));
  if (value) {
    uint8_t *zp = value->raw_data.data + value->raw_data.len - 1;
    CHECK(*zp == (1 | 2 << 2 | 2 << 4));
    *zp |= 0xC0;
    CHECK_STATUS(ol_quant_decode_proto(value, NULL, &decoded, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "zero-point padding") != NULL);
  }
  ol_quant_proto_free(value);
  ol_quant_plan_destroy(plan);
}

OL_TEST_MAIN(TEST(test_seed_example), TEST(test_zero_point_storage), TEST(test_half_sources),
             TEST(test_rejections))
