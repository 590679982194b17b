/* The public quantization entry points that need no model (onnxlight.h,
 * "quantization"): calibration, storage descriptors and encoding of tensor
 * values, and the profile an encoded value's layout names. Those that take
 * a model or protobuf bytes are ir/quant_api.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "core/value.h"
#include "quant/catalogue.h"
#include "quant/codec.h"
#include "quant/shared.h"
#include "quant/wire.h"

static ol_status float_tensor(const ol_value *tensor, const char *what) {
  if (!tensor || tensor->kind != OL_VALUE_TENSOR)
    return ol_error(OL_INVALID_ARGUMENT, "%s: expected a tensor", what);
  if (!ol_quant_float_bytes(tensor->tensor.dtype))
    return ol_error(OL_INVALID_ARGUMENT, "%s: the tensor must be float32, float64, float16 or bfloat16 (got %s)",
                    what, ol_dtype_name(tensor->tensor.dtype));
  if (!ol_tensor_is_dense(tensor))
    return ol_error(OL_INVALID_ARGUMENT, "%s: the tensor is not dense (ol_tensor_densify it first)", what);
  return OL_OK;
}

ol_status ol_quant_calibrate(ol_quant_plan *plan, const ol_value *tensor) {
  if (!plan) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_calibrate: plan is NULL");
  OL_TRY(float_tensor(tensor, "ol_quant_calibrate"));
  const ol_tensor *t = &tensor->tensor;
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (row && row->ort && plan->matrix_rank == 2 &&
      (t->rank != 2 || t->dims[0] != plan->matrix_shape[0] || t->dims[1] != plan->matrix_shape[1])) {
    char got[64];
    if (t->rank == 2) snprintf(got, sizeof got, "[%lld, %lld]", (long long)t->dims[0], (long long)t->dims[1]);
    else snprintf(got, sizeof got, "a rank-%d tensor", t->rank);
    return ol_error(OL_INVALID_ARGUMENT, "ol_quant_calibrate: the plan is for a [%lld, %lld] matrix, got %s",
                    (long long)plan->matrix_shape[0], (long long)plan->matrix_shape[1], got);
  }
  uint64_t count = (uint64_t)ol_tcount(t);
  if (count > SIZE_MAX / sizeof(double)) return ol_error(OL_OUT_OF_MEMORY, "calibration input too large");
  double *values = ol_xmalloc(count ? (size_t)count * sizeof(double) : 1);
  if (!values) return OL_OUT_OF_MEMORY;
  ol_status s = ol_quant_read_floats(t->dtype, ol_tdata(t), count, values);
  if (s == OL_OK) s = ol_quant_calibrate_values(plan, values, count);
  free(values);
  return s;
}

ol_status ol_quant_make_type(const ol_quant_plan *plan, void **out_bytes, size_t *out_size) {
  if (!plan || !out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_make_type: NULL argument");
  *out_bytes = NULL;
  *out_size = 0;
  Onnx__StructTypeProto *type = NULL;
  OL_TRY(ol_quant_make_type_proto(plan, &type));
  size_t size = onnx__struct_type_proto__get_packed_size(type);
  uint8_t *bytes = ol_xmalloc(size ? size : 1);
  if (bytes) onnx__struct_type_proto__pack(type, bytes);
  ol_quant_type_free(type);
  if (!bytes) return OL_OUT_OF_MEMORY;
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}

static void encoded_free(void *payload) { ol_quant_proto_free(payload); }

ol_status ol_quant_quantize(const ol_quant_plan *plan, const ol_value *tensor, const char *name, ol_value **out) {
  if (!plan || !out) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_quantize: NULL argument");
  *out = NULL;
  OL_TRY(float_tensor(tensor, "ol_quant_quantize"));
  const ol_tensor *t = &tensor->tensor;
  Onnx__EncodedValueProto *ev = NULL;
  OL_TRY(ol_quant_encode_proto(plan, t->dtype, ol_tdata(t), t->rank, t->dims, name, &ev));
  return ol_value_new_encoded(ev, encoded_free, out);
}

ol_status ol_quant_value_format(const ol_value *encoded, ol_quant_format *out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_value_format: out is NULL");
  const Onnx__EncodedValueProto *ev = encoded && encoded->kind == OL_VALUE_ENCODED ? encoded->encoded : NULL;
  const char *layout = ev && ev->layout_case == ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE && ev->struct_type
                           ? ev->struct_type->name : NULL;
  const size_t shared = strlen(OL_QUANT_SHARED_PREFIX), portable = strlen(OL_QUANT_WIRE_PREFIX);
  const char *profile = !layout ? NULL
                        : strncmp(layout, OL_QUANT_SHARED_PREFIX, shared) == 0 ? layout + shared
                        : strncmp(layout, OL_QUANT_WIRE_PREFIX, portable) == 0 ? layout + portable
                                                                              : NULL;
  if (profile && ol_quant_format_parse(profile, out) == OL_OK) return OL_OK;
  return ol_error(OL_NOT_FOUND, "the encoded value's layout '%s' names no quantization profile",
                  layout ? layout : "");
}
