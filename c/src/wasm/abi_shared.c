/* The wasm ABI of shared quantization parameter sets (quant/shared.h,
 * ir/quant_params.h) and of encoded runtime values. Same conventions as
 * abi.c: models and messages cross as serialized bytes (results malloc'd,
 * freed by JS with free()), values as ol_value handles. A compact value
 * handle retains its parameter set, so it outlives the model it came from. */
#include <emscripten/emscripten.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "core/value.h"
#include "ir/proto_depth.h"
#include "ir/quant_params.h"
#include "onnxlight.h"
#include "quant/codec.h"
#include "quant/shared.h"
#include "quant/wire.h"
#include "runtime/session.h"

#define OLW EMSCRIPTEN_KEEPALIVE

static ol_status unpack_model(const uint8_t *bytes, size_t size, Onnx__ModelProto **out) {
  *out = NULL;
  OL_TRY(ol_proto_check_depth(&onnx__model_proto__descriptor, bytes, size, "model"));
  *out = onnx__model_proto__unpack(NULL, size, bytes);
  return *out ? OL_OK : ol_error(OL_INVALID_ARGUMENT, "malformed ModelProto bytes");
}

static ol_status pack_encoded(const Onnx__EncodedValueProto *value, uint8_t **bytes, size_t *size) {
  *size = onnx__encoded_value_proto__get_packed_size(value);
  *bytes = malloc(*size ? *size : 1);
  if (!*bytes) return ol_error(OL_OUT_OF_MEMORY, "out of memory serializing an encoded value");
  onnx__encoded_value_proto__pack(value, *bytes);
  return OL_OK;
}

static void free_encoded(void *payload) { ol_quant_proto_free(payload); }

/* A new ENCODED value owning ev and retaining set (NULL: self-contained). */
static ol_status encoded_value(Onnx__EncodedValueProto *ev, ol_quant_shared_set *set, ol_value **out) {
  OL_TRY(ol_value_new_encoded(ev, free_encoded, out));
  if (set) ol_quant_shared_attach(*out, set);
  return OL_OK;
}

/* add_quantization_parameters on serialized bytes: params holds 9 value
 * handles in Quantize input order (X unused, NULL = absent). Returns the new
 * model and the compact storage type, both serialized. */
OLW int olw_quant_add_parameters(const uint8_t *model_bytes, size_t model_size, const char *name,
                                 const uint8_t *storage_bytes, size_t storage_size,
                                 const uint8_t *logical_bytes, size_t logical_size,
                                 ol_value *const *params, uint8_t **out_model, size_t *out_model_size,
                                 uint8_t **out_compact, size_t *out_compact_size) {
  Onnx__ModelProto *model = NULL;
  OL_TRY(ol_proto_check_depth(&onnx__struct_type_proto__descriptor, storage_bytes, storage_size, "storage_type"));
  OL_TRY(ol_proto_check_depth(&onnx__type_proto__descriptor, logical_bytes, logical_size, "logical_type"));
  OL_TRY(unpack_model(model_bytes, model_size, &model));
  Onnx__StructTypeProto *storage = onnx__struct_type_proto__unpack(NULL, storage_size, storage_bytes);
  Onnx__TypeProto *logical = onnx__type_proto__unpack(NULL, logical_size, logical_bytes);
  Onnx__StructTypeProto *compact = NULL;
  ol_status s = !storage ? ol_error(OL_INVALID_ARGUMENT, "malformed StructTypeProto bytes (storage_type)")
                : !logical ? ol_error(OL_INVALID_ARGUMENT, "malformed TypeProto bytes (logical_type)")
                           : OL_OK;
  const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {0};
  for (size_t i = 1; s == OL_OK && i < OL_QUANT_IN_COUNT; i++) {
    if (!params[i]) continue;
    if (params[i]->kind != OL_VALUE_TENSOR)
      s = ol_error(OL_INVALID_ARGUMENT, "parameter '%s' must be a tensor", ol_quant_input_names[i]);
    else inputs[i] = &params[i]->tensor;
  }
  if (s == OL_OK) s = ol_quant_add_parameters(model, name, storage, logical, inputs, &compact);
  if (s == OL_OK) {
    *out_model_size = onnx__model_proto__get_packed_size(model);
    *out_compact_size = onnx__struct_type_proto__get_packed_size(compact);
    *out_model = malloc(*out_model_size ? *out_model_size : 1);
    *out_compact = malloc(*out_compact_size ? *out_compact_size : 1);
    if (*out_model && *out_compact) {
      onnx__model_proto__pack(model, *out_model);
      onnx__struct_type_proto__pack(compact, *out_compact);
    } else {
      free(*out_model), free(*out_compact);
      s = ol_error(OL_OUT_OF_MEMORY, "out of memory serializing the model");
    }
  }
  ol_quant_type_free(compact);
  ol_quant_type_free(storage);
  if (logical) onnx__type_proto__free_unpacked(logical, NULL);
  onnx__model_proto__free_unpacked(model, NULL);
  return s;
}

/* quantize_tensor_shared: a compact ENCODED value retaining the set. */
OLW int olw_quant_shared_encode(const uint8_t *model_bytes, size_t model_size, const char *set_name,
                                int dtype, const void *data, const int64_t *dims, int rank,
                                const char *value_name, ol_value **out) {
  Onnx__ModelProto *model = NULL;
  OL_TRY(unpack_model(model_bytes, model_size, &model));
  ol_quant_shared_set *set = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  ol_status s = ol_quant_model_set(model, set_name, &set);
  onnx__model_proto__free_unpacked(model, NULL); /* the set is an independent snapshot */
  if (s == OL_OK) s = ol_quant_shared_encode(set, (ol_dtype)dtype, data, rank, dims, value_name, &ev);
  if (s == OL_OK) s = encoded_value(ev, set, out);
  ol_quant_shared_release(set);
  return s;
}


static ol_status encoded_of(const ol_value *v, const Onnx__EncodedValueProto **out) {
  if (!v || v->kind != OL_VALUE_ENCODED || !v->encoded)
    return ol_error(OL_INVALID_ARGUMENT, "expected an encoded value");
  *out = v->encoded;
  return OL_OK;
}

/* The value's parameter_ref, or NULL for a self-contained value. */
OLW const char *olw_encoded_parameter_ref(const ol_value *v) {
  const Onnx__EncodedValueProto *ev = v && v->kind == OL_VALUE_ENCODED ? v->encoded : NULL;
  return ev && ev->parameter_ref && ev->parameter_ref[0] ? ev->parameter_ref : NULL;
}

/* materialize_quantized_value of a compact value handle, serialized. */
OLW int olw_quant_materialize(const ol_value *v, uint8_t **out, size_t *size) {
  const Onnx__EncodedValueProto *ev;
  OL_TRY(encoded_of(v, &ev));
  const ol_quant_shared_set *set = ol_quant_shared_of(v);
  if (!set)
    return ol_error(OL_INVALID_ARGUMENT, "the value carries no shared quantization parameter set");
  Onnx__EncodedValueProto *full = NULL;
  OL_TRY(ol_quant_shared_materialize(set, ev, NULL, &full));
  ol_status s = pack_encoded(full, out, size);
  ol_quant_proto_free(full);
  return s;
}

/* Decodes an encoded value handle (compact: its retained set) into a new
 * tensor of its logical dtype. */
OLW int olw_quant_decode_value(const ol_value *v, ol_value **out) {
  const Onnx__EncodedValueProto *ev;
  OL_TRY(encoded_of(v, &ev));
  const ol_quant_shared_set *set = ol_quant_shared_of(v);
  ol_quant_decoded decoded = {0};
  ol_status s = set && ev->parameter_ref ? ol_quant_shared_decode(set, ev, NULL, &decoded)
                                         : ol_quant_decode_proto(ev, NULL, &decoded, NULL);
  ol_value *tensor = NULL;
  if (s == OL_OK) s = ol_tensor_create(NULL, decoded.dtype, decoded.dims, (size_t)decoded.rank, &tensor);
  if (s == OL_OK)
    s = ol_quant_write_floats(decoded.dtype, decoded.values, decoded.count, ol_tensor_data(tensor));
  ol_quant_decoded_clear(&decoded);
  if (s != OL_OK) {
    ol_value_release(tensor);
    return s;
  }
  *out = tensor;
  return OL_OK;
}

/* materialize_quantized_value(bytes, model) for a bare compact message. */
OLW int olw_quant_materialize_bytes(const uint8_t *bytes, size_t size, const uint8_t *model_bytes,
                                    size_t model_size, uint8_t **out, size_t *out_size) {
  OL_TRY(ol_proto_check_depth(&onnx__encoded_value_proto__descriptor, bytes, size, "EncodedValueProto"));
  Onnx__EncodedValueProto *ev = onnx__encoded_value_proto__unpack(NULL, size, bytes);
  if (!ev) return ol_error(OL_INVALID_ARGUMENT, "malformed EncodedValueProto bytes");
  Onnx__ModelProto *model = NULL;
  Onnx__EncodedValueProto *full = NULL;
  ol_status s = model_bytes ? unpack_model(model_bytes, model_size, &model) : OL_OK;
  if (s == OL_OK) s = ol_quant_materialize_with_model(ev, model, &full);
  if (s == OL_OK) s = pack_encoded(full, out, out_size);
  ol_quant_proto_free(full);
  ol_quant_proto_free(ev);
  if (model) onnx__model_proto__free_unpacked(model, NULL);
  return s;
}

/* The value's raw_data (a view; valid while the value lives). */
OLW int olw_encoded_raw(const ol_value *v, const uint8_t **data, size_t *size) {
  const Onnx__EncodedValueProto *ev;
  OL_TRY(encoded_of(v, &ev));
  *data = ev->has_raw_data ? ev->raw_data.data : NULL;
  *size = ev->has_raw_data ? ev->raw_data.len : 0;
  return OL_OK;
}

/* JS conversions resolve a compact value's parameter_ref against the model
 * of the session or state it is given to (ol_quant_bind_value). */
OLW int olw_encoded_bind_model(ol_value *v, const ol_model *model) {
  return ol_quant_bind_value(v, model ? model->data : NULL);
}
OLW int olw_encoded_bind_session(ol_value *v, const ol_session *session) {
  return ol_quant_bind_value(v, session ? session->model : NULL);
}
OLW int olw_encoded_bind_state(ol_value *v, const ol_state *state) {
  return olw_encoded_bind_session(v, state ? ol_state_session(state) : NULL);
}
