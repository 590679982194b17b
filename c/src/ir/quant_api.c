/* The public quantization entry points that take a model or protobuf bytes
 * (onnxlight.h, "quantization"): decoding, the proto variants, the ORT
 * MatMulNBits export and shared parameter sets. A model argument gives its
 * struct type catalogue (type_refs) and its shared parameter sets. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/model.h"
#include "ir/proto_depth.h"
#include "ir/quant_params.h"
#include "quant/codec.h"
#include "quant/ort.h"
#include "quant/wire.h"

static const ol_model_data *data_of(const ol_model *model) { return model ? model->data : NULL; }
static const ol_type_catalogue *types_of(const ol_model *model) { return model ? model->data->types : NULL; }

static ol_status encoded_of(const ol_value *v, const char *what, const Onnx__EncodedValueProto **out) {
  if (!v || v->kind != OL_VALUE_ENCODED || !v->encoded)
    return ol_error(OL_INVALID_ARGUMENT, "%s: expected an encoded value", what);
  *out = v->encoded;
  return OL_OK;
}

static void encoded_free(void *payload) { ol_quant_proto_free(payload); }

/* A new ENCODED value owning ev (freed on failure), retaining set (may be NULL). */
static ol_status new_encoded(Onnx__EncodedValueProto *ev, ol_quant_shared_set *set, ol_value **out) {
  ol_status s = ol_value_new_encoded(ev, encoded_free, out);
  if (s != OL_OK) {
    ol_quant_proto_free(ev);
    return s;
  }
  if (set) ol_quant_shared_attach(*out, set);
  return OL_OK;
}

/* The set a compact value uses: the one it retains, else model's (a new reference). */
static ol_status set_for(const ol_value *v, const Onnx__EncodedValueProto *ev, const ol_model *model,
                         ol_quant_shared_set **out) {
  ol_quant_shared_set *retained = v ? ol_quant_shared_of(v) : NULL;
  if (retained && strcmp(retained->name, ev->parameter_ref) == 0) {
    *out = ol_quant_shared_retain(retained);
    return OL_OK;
  }
  return ol_quant_model_set(data_of(model), ev->parameter_ref, out);
}

static bool compact(const Onnx__EncodedValueProto *ev) { return ev->parameter_ref && ev->parameter_ref[0]; }

/* Decodes ev (compact: with v's set, else model's) into a new tensor. */
static ol_status decode(const ol_value *v, const Onnx__EncodedValueProto *ev, const ol_model *model, ol_value **out) {
  ol_quant_decoded decoded = {0};
  ol_status s;
  if (compact(ev)) {
    ol_quant_shared_set *set = NULL;
    OL_TRY(set_for(v, ev, model, &set));
    s = ol_quant_shared_decode(set, ev, types_of(model), &decoded);
    ol_quant_shared_release(set);
  } else {
    s = ol_quant_decode_proto(ev, types_of(model), &decoded, NULL);
  }
  ol_value *tensor = NULL;
  if (s == OL_OK) s = ol_value_new_tensor(NULL, decoded.dtype, decoded.rank, decoded.dims, &tensor);
  if (s == OL_OK) s = ol_quant_write_floats(decoded.dtype, decoded.values, decoded.count, ol_tdata(&tensor->tensor));
  ol_quant_decoded_clear(&decoded);
  if (s != OL_OK) {
    ol_value_release(tensor);
    return s;
  }
  *out = tensor;
  return OL_OK;
}

ol_status ol_quant_dequantize(const ol_value *encoded, const ol_model *model, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_dequantize: out is NULL");
  *out = NULL;
  const Onnx__EncodedValueProto *ev = NULL;
  OL_TRY(encoded_of(encoded, "ol_quant_dequantize", &ev));
  return decode(encoded, ev, model, out);
}

/* ------------------------------------------------------------ proto variants */

static ol_status pack_encoded(const Onnx__EncodedValueProto *ev, void **out, size_t *size) {
  *size = onnx__encoded_value_proto__get_packed_size(ev);
  *out = ol_xmalloc(*size ? *size : 1);
  if (!*out) return OL_OUT_OF_MEMORY;
  onnx__encoded_value_proto__pack(ev, *out);
  return OL_OK;
}

/* Seed: "quantization accepts [a tensor marked EXTERNAL] once raw_data is
 * loaded, without changing that metadata". Unloaded: marked external and no
 * raw_data yet. */
static bool external_unloaded(const Onnx__TensorProto *tp) {
  bool external = tp->n_external_data ||
                  (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL);
  return external && !tp->has_raw_data;
}

/* tp read as an ordinary raw_data tensor: a shallow copy hiding a loaded
 * external tensor's location metadata (tp itself is not changed). */
static Onnx__TensorProto loaded_view(const Onnx__TensorProto *tp) {
  Onnx__TensorProto view = *tp;
  if (tp->has_raw_data) {
    view.has_data_location = 0;
    view.n_external_data = 0;
    view.external_data = NULL;
  }
  return view;
}

/* Copies an optional doc_string keeping its presence (NULL stays absent). */
static ol_status copy_doc_string(const char *from, char **to) {
  if (!from) return OL_OK;
  char *copy = ol_strdup(from);
  if (!copy) return OL_OUT_OF_MEMORY;
  free(*to);
  *to = copy;
  return OL_OK;
}

ol_status ol_quant_quantize_tensor_proto(const ol_quant_plan *plan, const void *tensor_proto, size_t size,
                                         void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size || (!tensor_proto && size))
    return ol_error(OL_INVALID_ARGUMENT, "ol_quant_quantize_tensor_proto: NULL argument");
  *out_bytes = NULL;
  *out_size = 0;
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, tensor_proto);
  if (!tp) return ol_error(OL_INVALID_ARGUMENT, "not a serialized TensorProto (%zu bytes)", size);
  const char *name = tp->name; /* NULL: absent, "": present-empty (kept apart) */
  ol_status s = OL_OK;
  if (!ol_quant_float_bytes((ol_dtype)tp->data_type))
    s = ol_error(OL_INVALID_ARGUMENT, "tensor '%s' must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (data_type %d)",
                 name ? name : "", (int)tp->data_type);
  else if (external_unloaded(tp))
    s = ol_error(OL_INVALID_ARGUMENT, "tensor '%s' has external data (load it first)", name ? name : "");
  ol_value *tensor = NULL, *encoded = NULL;
  const ol_tensor_source copy = {NULL, NULL};
  const Onnx__TensorProto view = loaded_view(tp);
  if (s == OL_OK) s = ol_tensor_from_proto(&view, &copy, &tensor);
  if (s == OL_OK) s = ol_quant_quantize(plan, tensor, name, &encoded);
  if (s == OL_OK) s = copy_doc_string(tp->doc_string, &((Onnx__EncodedValueProto *)encoded->encoded)->doc_string);
  if (s == OL_OK) s = pack_encoded(encoded->encoded, out_bytes, out_size);
  ol_value_release(encoded);
  ol_value_release(tensor);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return s;
}

ol_status ol_quant_dequantize_tensor_proto(const void *encoded_proto, size_t size, const ol_model *model,
                                           void **out_bytes, size_t *out_size) {
  if (!out_bytes || !out_size) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_dequantize_tensor_proto: NULL argument");
  *out_bytes = NULL;
  *out_size = 0;
  ol_value *encoded = NULL, *tensor = NULL;
  OL_TRY(ol_encoded_value_parse(encoded_proto, size, &encoded));
  const Onnx__EncodedValueProto *ev = encoded->encoded;
  ol_status s = decode(NULL, ev, model, &tensor);
  Onnx__TensorProto *tp = NULL;
  if (s == OL_OK) s = ol_tensor_to_proto(&tensor->tensor, ev->name, &tp);
  if (s == OL_OK && !ev->name) { /* absent stays absent (ol_tensor_to_proto writes "") */
    free(tp->name);
    tp->name = NULL;
  }
  if (s == OL_OK) s = copy_doc_string(ev->doc_string, &tp->doc_string);
  if (s == OL_OK) {
    *out_size = onnx__tensor_proto__get_packed_size(tp);
    *out_bytes = ol_xmalloc(*out_size ? *out_size : 1);
    if (*out_bytes) onnx__tensor_proto__pack(tp, *out_bytes);
    else s = OL_OUT_OF_MEMORY;
  }
  if (tp) onnx__tensor_proto__free_unpacked(tp, NULL);
  ol_value_release(tensor);
  ol_value_release(encoded);
  return s;
}

/* ------------------------------------------------------------ ORT MatMulNBits */

void ol_quant_matmul_nbits_clear(ol_quant_matmul_nbits *inputs) {
  if (!inputs) return;
  ol_value_release(inputs->weights);
  ol_value_release(inputs->scales);
  ol_value_release(inputs->zero_points);
  memset(inputs, 0, sizeof *inputs);
}

ol_status ol_quant_export_matmul_nbits(const ol_value *encoded, const ol_model *model,
                                       ol_quant_matmul_nbits *out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_export_matmul_nbits: out is NULL");
  memset(out, 0, sizeof *out);
  const Onnx__EncodedValueProto *ev = NULL;
  OL_TRY(encoded_of(encoded, "ol_quant_export_matmul_nbits", &ev));
  ol_quant_matmul_nbits_inputs in = {0};
  OL_TRY(ol_quant_export_matmul_nbits_inputs(ev, types_of(model), &in));
  const ol_tensor_source copy = {NULL, NULL};
  ol_status s = ol_tensor_from_proto(in.weights, &copy, &out->weights);
  if (s == OL_OK) s = ol_tensor_from_proto(in.scales, &copy, &out->scales);
  if (s == OL_OK && in.zero_points) s = ol_tensor_from_proto(in.zero_points, &copy, &out->zero_points);
  out->k = in.k;
  out->n = in.n;
  out->bits = in.bits;
  out->block_size = in.block_size;
  ol_quant_matmul_nbits_inputs_clear(&in);
  if (s != OL_OK) ol_quant_matmul_nbits_clear(out);
  return s;
}

/* ------------------------------------------------------------ shared parameter sets */

ol_status ol_quant_add_parameters(const ol_model *model, const char *name, const void *storage_type,
                                  size_t storage_size, ol_dtype logical_dtype, const int64_t *logical_dims,
                                  size_t logical_rank, const ol_quant_parameters *params,
                                  ol_model **out_model, void **out_compact, size_t *out_compact_size) {
  if (!model || !out_model || (!storage_type && storage_size) || (logical_rank && !logical_dims))
    return ol_error(OL_INVALID_ARGUMENT, "ol_quant_add_parameters: NULL argument");
  *out_model = NULL;
  if (out_compact) *out_compact = NULL;
  if (out_compact_size) *out_compact_size = 0;
  if (logical_rank > OL_MAX_RANK)
    return ol_error(OL_INVALID_ARGUMENT, "logical_type: rank %zu exceeds %d", logical_rank, OL_MAX_RANK);
  /* Quantize's tensors in input order (X unused) */
  const ol_value *given[OL_QUANT_IN_COUNT] = {NULL};
  if (params) {
    given[OL_QUANT_IN_SCALES] = params->scales;
    given[OL_QUANT_IN_ZERO_POINTS] = params->zero_points;
    given[OL_QUANT_IN_OFFSETS] = params->offsets;
    given[OL_QUANT_IN_CODEBOOKS] = params->codebooks;
    given[OL_QUANT_IN_PERMUTATION] = params->permutation;
    given[OL_QUANT_IN_FORWARD] = params->forward;
    given[OL_QUANT_IN_INVERSE] = params->inverse;
    given[OL_QUANT_IN_OUTLIERS] = params->outliers;
  }
  const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {NULL};
  for (size_t i = 1; i < OL_QUANT_IN_COUNT; i++) {
    if (!given[i]) continue;
    if (given[i]->kind != OL_VALUE_TENSOR)
      return ol_error(OL_INVALID_ARGUMENT, "parameter '%s' must be a tensor", ol_quant_input_names[i]);
    inputs[i] = &given[i]->tensor;
  }
  /* the logical TypeProto, on the stack */
  Onnx__TensorShapeProto__Dimension dims[OL_MAX_RANK], *dim_list[OL_MAX_RANK];
  for (size_t i = 0; i < logical_rank; i++) {
    onnx__tensor_shape_proto__dimension__init(&dims[i]);
    dims[i].value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    dims[i].dim_value = logical_dims[i];
    dim_list[i] = &dims[i];
  }
  Onnx__TensorShapeProto shape = ONNX__TENSOR_SHAPE_PROTO__INIT;
  shape.n_dim = logical_rank;
  shape.dim = dim_list;
  Onnx__TypeProto__Tensor tensor_type = ONNX__TYPE_PROTO__TENSOR__INIT;
  tensor_type.has_elem_type = 1;
  tensor_type.elem_type = (int32_t)logical_dtype;
  tensor_type.shape = &shape;
  Onnx__TypeProto logical = ONNX__TYPE_PROTO__INIT;
  logical.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  logical.tensor_type = &tensor_type;

  OL_TRY(ol_proto_check_depth(&onnx__struct_type_proto__descriptor, storage_type, storage_size, "storage_type"));
  Onnx__StructTypeProto *storage = onnx__struct_type_proto__unpack(NULL, storage_size, storage_type);
  if (!storage) return ol_error(OL_INVALID_ARGUMENT, "storage_type is not a serialized StructTypeProto");
  /* a malloc-owned copy of the model's message takes the additions */
  void *bytes = NULL;
  size_t size = 0;
  Onnx__ModelProto *copy = NULL;
  ol_status s = ol_model_serialize(model, &bytes, &size);
  if (s == OL_OK) {
    copy = onnx__model_proto__unpack(NULL, size, bytes);
    if (!copy) s = ol_error(OL_OUT_OF_MEMORY, "out of memory copying the model");
  }
  free(bytes);
  Onnx__StructTypeProto *compact_type = NULL;
  if (s == OL_OK) s = ol_quant_add_parameters_proto(copy, name, storage, &logical, inputs, &compact_type);
  ol_quant_type_free(storage);
  if (s == OL_OK && out_compact) {
    size_t n = onnx__struct_type_proto__get_packed_size(compact_type);
    uint8_t *packed = ol_xmalloc(n ? n : 1);
    if (packed) {
      onnx__struct_type_proto__pack(compact_type, packed);
      *out_compact = packed;
      if (out_compact_size) *out_compact_size = n;
    } else {
      s = OL_OUT_OF_MEMORY;
    }
  }
  ol_quant_type_free(compact_type);
  if (s == OL_OK) {
    s = ol_model_from_proto(copy, NULL, out_model); /* takes copy */
    copy = NULL;
  }
  if (copy) onnx__model_proto__free_unpacked(copy, NULL);
  if (s != OL_OK && out_compact && *out_compact) {
    free(*out_compact);
    *out_compact = NULL;
    if (out_compact_size) *out_compact_size = 0;
  }
  return s;
}

ol_status ol_quant_quantize_shared(const ol_value *tensor, const ol_model *model, const char *set_name,
                                   const char *value_name, ol_value **out) {
  if (!out || !set_name) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_quantize_shared: NULL argument");
  *out = NULL;
  if (!tensor || tensor->kind != OL_VALUE_TENSOR)
    return ol_error(OL_INVALID_ARGUMENT, "ol_quant_quantize_shared: expected a tensor");
  const ol_tensor *t = &tensor->tensor;
  if (!ol_tensor_is_dense(tensor))
    return ol_error(OL_INVALID_ARGUMENT, "ol_quant_quantize_shared: the tensor is not dense (ol_tensor_densify it first)");
  ol_quant_shared_set *set = NULL;
  OL_TRY(ol_quant_model_set(data_of(model), set_name, &set));
  Onnx__EncodedValueProto *ev = NULL;
  ol_status s = ol_quant_shared_encode(set, t->dtype, ol_tdata(t), t->rank, t->dims, value_name, &ev);
  if (s == OL_OK) s = new_encoded(ev, set, out);
  ol_quant_shared_release(set);
  return s;
}

ol_status ol_quant_materialize(const ol_value *compact_value, const ol_model *model, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_materialize: out is NULL");
  *out = NULL;
  const Onnx__EncodedValueProto *ev = NULL;
  OL_TRY(encoded_of(compact_value, "ol_quant_materialize", &ev));
  if (!compact(ev))
    return ol_error(OL_INVALID_ARGUMENT, "the encoded value has no parameter_ref (it is already self-contained)");
  ol_quant_shared_set *set = NULL;
  OL_TRY(set_for(compact_value, ev, model, &set));
  Onnx__EncodedValueProto *full = NULL;
  ol_status s = ol_quant_shared_materialize(set, ev, types_of(model), &full);
  ol_quant_shared_release(set);
  return s == OL_OK ? new_encoded(full, NULL, out) : s;
}

ol_status ol_quant_bind_model(ol_value *encoded, const ol_model *model) {
  return ol_quant_bind_value(encoded, data_of(model));
}
