/* libFuzzer: EncodedValueProto bytes (quantized payloads) -> parse ->
 * logical type -> dequantize, export as MatMulNBits inputs, serialize. */
#include <stdlib.h>

#include "ir/proto_depth.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"
#include "quant/ort.h"
#include "quant/plan.h"
#include "quant/wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ol_value *value = NULL;
  if (ol_encoded_value_parse(data, size, &value) != OL_OK) return 0;
  ol_dtype dtype;
  int64_t dims[OL_MAX_RANK];
  size_t rank = 0;
  (void)ol_encoded_value_logical_type(value, &dtype, dims, &rank);
  (void)ol_encoded_value_layout_name(value);
  void *bytes = NULL;
  size_t n = 0;
  if (ol_encoded_value_serialize(value, &bytes, &n) == OL_OK) ol_free(bytes);
  ol_value_release(value);

  /* the codecs on the message itself (what Dequantize and the JS API call) */
  if (ol_proto_check_depth(&onnx__encoded_value_proto__descriptor, data, size, "fuzz") != OL_OK) return 0;
  Onnx__EncodedValueProto *proto = onnx__encoded_value_proto__unpack(NULL, size, data);
  if (!proto) return 0;
  ol_quant_decoded decoded = {0};
  ol_quant_plan *plan = NULL;
  (void)ol_quant_decode_proto(proto, NULL, &decoded, &plan);
  ol_quant_decoded_clear(&decoded);
  ol_quant_plan_destroy(plan);
  ol_quant_matmul_nbits_inputs inputs = {0};
  if (ol_quant_export_matmul_nbits_inputs(proto, NULL, &inputs) == OL_OK) ol_quant_matmul_nbits_inputs_clear(&inputs);
  onnx__encoded_value_proto__free_unpacked(proto, NULL);
  return 0;
}
