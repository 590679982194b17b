/* Quantization from C with the public header only (built natively by CMake
 * and run by ctest as example_quantize):
 *   1. list the catalogue's formats;
 *   2. make an INT4 plan, calibrate it on a tensor, quantize, dequantize;
 *   3. pack a weight for com.microsoft::MatMulNBits and export its inputs;
 *   4. declare a shared parameter set in a model and encode compact values.
 * Every call returns an ol_status; on failure ol_last_error() says why. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxlight.h"

#define TRY(call)                                                                  \
  do {                                                                             \
    ol_status status_ = (call);                                                    \
    if (status_ != OL_OK) {                                                        \
      fprintf(stderr, "%s failed: %s: %s\n", #call, ol_status_name(status_), ol_last_error()); \
      exit(1);                                                                     \
    }                                                                              \
  } while (0)

static ol_value *float_tensor(const float *values, const int64_t *dims, size_t rank) {
  ol_value *t = NULL;
  TRY(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, rank, &t));
  memcpy(ol_tensor_data(t), values, ol_tensor_byte_size(t));
  return t;
}

static void list_formats(void) {
  printf("%zu quantization formats:", ol_quant_format_count());
  for (size_t i = 0; i < ol_quant_format_count(); i++) {
    ol_quant_format_info info;
    TRY(ol_quant_format_get_info((ol_quant_format)i, &info));
    printf("%s %s (%s, %u bits%s)", i ? "," : "", info.name, ol_quant_method_name(info.method), info.bits,
           info.matmul_nbits ? ", MatMulNBits" : "");
  }
  printf("\n");
}

/* INT4 in blocks of 4, scales calibrated per block from the data. */
static void round_trip(void) {
  const float weights[8] = {-1, -0.5f, 0.25f, 1, 8, -6, 2, 0};
  const int64_t dims[1] = {8};
  ol_value *x = float_tensor(weights, dims, 1), *encoded = NULL, *y = NULL;
  ol_quant_plan *plan = NULL;
  TRY(ol_quant_make_plan(OL_QUANT_INT4, 8, 4, &plan));
  TRY(ol_quant_calibrate(plan, x));
  TRY(ol_quant_quantize(plan, x, "weights", &encoded));
  TRY(ol_quant_dequantize(encoded, NULL, &y));
  void *bytes = NULL;
  size_t size = 0;
  TRY(ol_encoded_value_serialize(encoded, &bytes, &size));
  const float *restored = ol_tensor_data(y);
  double worst = 0;
  for (int i = 0; i < 8; i++) worst = fmax(worst, fabs(restored[i] - weights[i]));
  ol_quant_block first;
  TRY(ol_quant_plan_block(plan, 0, 0, &first));
  printf("int4: %zu runs, first block scale %g; 8 floats -> %zu bytes; largest error %g\n",
         ol_quant_plan_run_count(plan), first.scale, size, worst);
  ol_free(bytes);
  ol_value_release(y);
  ol_value_release(encoded);
  ol_value_release(x);
  ol_quant_plan_destroy(plan);
}

/* A [K, N] weight packed as com.microsoft::MatMulNBits inputs. */
static void matmul_nbits(void) {
  enum { K = 40, N = 2 };
  float w[K * N];
  for (int i = 0; i < K * N; i++) w[i] = (float)((i % 7) - 3) * 0.5f;
  const int64_t dims[2] = {K, N};
  ol_value *x = float_tensor(w, dims, 2), *encoded = NULL;
  ol_quant_plan *plan = NULL;
  TRY(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, K, N, 16, &plan));
  TRY(ol_quant_calibrate(plan, x));
  TRY(ol_quant_quantize(plan, x, "W", &encoded));
  ol_quant_matmul_nbits inputs;
  TRY(ol_quant_export_matmul_nbits(encoded, NULL, &inputs));
  const int64_t *b = ol_tensor_dims(inputs.weights);
  printf("MatMulNBits: K=%lld N=%lld bits=%lld block_size=%lld, B [%lld, %lld, %lld], %lld scales, %s zero points\n",
         (long long)inputs.k, (long long)inputs.n, (long long)inputs.bits, (long long)inputs.block_size,
         (long long)b[0], (long long)b[1], (long long)b[2], (long long)ol_tensor_element_count(inputs.scales),
         inputs.zero_points ? "explicit" : "implicit");
  ol_quant_matmul_nbits_clear(&inputs);
  ol_value_release(encoded);
  ol_value_release(x);
  ol_quant_plan_destroy(plan);
}

/* The seed's shared set: one scale for every value encoded with "common". */
static void shared_set(void) {
  ol_model *model = NULL, *declared = NULL;
  TRY(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                          "g (float[4] X) => (float[4] Y) { Y = Identity(X) }",
                          &model));
  ol_quant_plan *plan = NULL;
  void *storage = NULL;
  size_t storage_size = 0;
  TRY(ol_quant_make_plan(OL_QUANT_INT4, 4, 4, &plan));
  TRY(ol_quant_make_type(plan, &storage, &storage_size));
  const float half = 0.5f;
  ol_value *scale = float_tensor(&half, NULL, 0);
  const ol_quant_parameters params = {.scales = scale};
  const int64_t four[1] = {4};
  TRY(ol_quant_add_parameters(model, "common", storage, storage_size, OL_DTYPE_FLOAT, four, 1, &params, &declared,
                              NULL, NULL));
  const float x[4] = {-8, -1, 1, 7};
  ol_value *tensor = float_tensor(x, four, 1), *compact = NULL, *full = NULL, *y = NULL;
  TRY(ol_quant_quantize_shared(tensor, declared, "common", "Q", &compact));
  const void *raw = NULL;
  size_t raw_size = 0;
  TRY(ol_encoded_value_raw_data(compact, &raw, &raw_size));
  TRY(ol_quant_materialize(compact, NULL, &full));
  TRY(ol_quant_dequantize(full, NULL, &y));
  const float *v = ol_tensor_data(y);
  printf("shared set '%s': compact payload %zu bytes; decoded [%g, %g, %g, %g] (saturated at the shared range)\n",
         ol_encoded_value_parameter_ref(compact), raw_size, v[0], v[1], v[2], v[3]);
  ol_value_release(y);
  ol_value_release(full);
  ol_value_release(compact);
  ol_value_release(tensor);
  ol_value_release(scale);
  ol_free(storage);
  ol_quant_plan_destroy(plan);
  ol_model_destroy(declared);
  ol_model_destroy(model);
}

int main(void) {
  list_formats();
  round_trip();
  matmul_nbits();
  shared_set();
  return 0;
}
