/* libFuzzer: EncodedValueProto bytes (quantized payloads) -> parse ->
 * logical type, format, serialize -> dequantize, export as MatMulNBits
 * inputs (the public quantization API: what Dequantize and the JS API call). */
#include <stdlib.h>

#include "onnxlight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ol_value *value = NULL;
  if (ol_encoded_value_parse(data, size, &value) != OL_OK) return 0;
  ol_dtype dtype;
  int64_t dims[OL_MAX_RANK];
  size_t rank = 0;
  (void)ol_encoded_value_logical_type(value, &dtype, dims, &rank);
  (void)ol_encoded_value_layout_name(value);
  ol_quant_format format;
  (void)ol_quant_value_format(value, &format);
  void *bytes = NULL;
  size_t n = 0;
  if (ol_encoded_value_serialize(value, &bytes, &n) == OL_OK) ol_free(bytes);
  ol_value *decoded = NULL;
  if (ol_quant_dequantize(value, NULL, &decoded) == OL_OK) ol_value_release(decoded);
  ol_quant_matmul_nbits inputs = {0};
  if (ol_quant_export_matmul_nbits(value, NULL, &inputs) == OL_OK) ol_quant_matmul_nbits_clear(&inputs);
  ol_value_release(value);
  return 0;
}
