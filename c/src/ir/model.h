/* A loaded model: the unpacked protobuf message plus the decoded graph.
 * Shared (ref-counted) by sessions and by tensors viewing its weights. */
#ifndef OL_IR_MODEL_H
#define OL_IR_MODEL_H
#include "ir/graph.h"
#include "ir/proto_patch.h"
#include "ir/wire_weights.h"
#include "onnx_light.pb-c.h"
#include "quant/shared.h"
#include "quant/type_catalogue.h"

typedef struct ol_opset {
  const char *domain;
  int version;
} ol_opset;

/* Owns the unpacked protobuf message. Weight views retain it, so a tensor
 * viewing an initializer stays valid after the model is destroyed.
 * A patched owner (base set) holds a message that shares the sub-messages of
 * base's message: it owns only the blocks in `patch` and retains base. */
/* An external data payload read while decoding (ol_tensor_from_proto),
 * identified by where it was read from: derived models (bound, converted,
 * inferred) find it here instead of reading the file or the caller's
 * buffer again, which they have no access to. */
typedef struct ol_external_payload {
  char *location;
  int64_t offset;
  size_t length;
  ol_buffer *buffer; /* retained */
} ol_external_payload;

typedef struct ol_proto_owner {
  int refcount;
  Onnx__ModelProto *proto;
  uint8_t *wire;            /* the model's wire bytes when weights view them (else NULL) */
  ol_wire_weights weights;  /* which payloads view `wire` */
  struct ol_proto_owner *base;
  ol_proto_patch *patch;
  bool borrowed; /* proto is someone else's (ol_model_borrow_proto): never freed here */
  /* external data read for this owner's model (base owners have theirs) */
  ol_external_payload *external;
  size_t n_external, external_capacity;
} ol_proto_owner;

/* The decoded model, shared by the model handle and its sessions. */
struct ol_model_data {
  int refcount;
  ol_proto_owner *owner;
  Onnx__ModelProto *proto; /* == owner->proto */
  ol_graph *graph;
  size_t num_opsets;
  ol_opset *opsets;
  int64_t ir_version;
  /* ModelProto.struct_types with their type_refs resolved (never NULL once
   * loaded): what codecs, kernels and checks resolve type_refs through. */
  ol_type_catalogue *types;
  /* Shared quantization parameter sets of the root graph (ir/quant_params.h),
   * an immutable snapshot taken at load. NULL when a declaration is invalid:
   * quant_params_status / quant_params_error then hold the failure, reported
   * by the checker (and thus at session start). */
  ol_quant_catalogue *quant_params;
  ol_status quant_params_status;
  char *quant_params_error;
};

struct ol_model {
  ol_model_data *data;
};

ol_proto_owner *ol_proto_owner_retain(ol_proto_owner *owner);
/* owner or one it derives from read external data (see ol_external_payload). */
bool ol_proto_owner_read_external(const ol_proto_owner *owner);
void ol_proto_owner_release(ol_proto_owner *owner);
ol_model_data *ol_model_data_retain(ol_model_data *data);
void ol_model_data_release(ol_model_data *data);

/* Decodes a model proto (takes ownership of proto, also on failure). */
/* ol_model_load_owned without the weight packing of model/pack.c (the
 * public entry points in model/load.c add it). */
ol_status ol_ir_load_owned(void *bytes, size_t size, const ol_model_load_options *options, ol_model **out);
ol_status ol_model_from_proto(Onnx__ModelProto *proto, const ol_model_load_options *options,
                              ol_model **out);

/* Decodes proto, a message made of the blocks in patch and of sub-messages
 * of base->proto (left unchanged). Takes ownership of patch (proto is one of
 * its blocks), also on failure; retains base. */
ol_status ol_model_from_patch(ol_proto_patch *patch, Onnx__ModelProto *proto, ol_proto_owner *base,
                              ol_model **out);

/* Decodes proto without taking it (no copy): the caller keeps every
 * message the model uses alive and unchanged while the model is used (a
 * graph builder's inference between two edits). The model must not escape
 * to sessions or values that could outlive that. Tensor initializers whose
 * payloads are external data are declarations only: checked, never read
 * (ol_initializer.unread), since such a decoding has no folder to read from. */
ol_status ol_model_borrow_proto(Onnx__ModelProto *proto, ol_model **out);

/* Context for decoding tensors: external data sources and the owning model. */
typedef struct ol_tensor_source {
  const ol_model_load_options *options;
  ol_proto_owner *owner; /* NULL: copy payloads instead of viewing them */
} ol_tensor_source;

/* TensorProto -> tensor value. raw_data is viewed in place when src->model is
 * set (the view keeps the protobuf message alive). */
ol_status ol_tensor_from_proto(const Onnx__TensorProto *tp, const ol_tensor_source *src,
                               ol_value **out);
/* Whether tp's payload is external data (data_location EXTERNAL). */
bool ol_tensor_proto_is_external(const Onnx__TensorProto *tp);
/* Checks what ol_tensor_from_proto checks of an external tp (data type,
 * dims, the location/offset/length entries) without reading the payload. */
ol_status ol_tensor_proto_check_external(const Onnx__TensorProto *tp);
/* Tensor value -> newly allocated TensorProto (free with onnx__tensor_proto__free_unpacked
 * and NULL allocator). */
ol_status ol_tensor_to_proto(const ol_tensor *t, const char *name, Onnx__TensorProto **out);

/* An ENCODED value viewing ev in place (no payload copy): it retains owner,
 * whose message holds ev, so it stays valid after the model is destroyed.
 * Treat it as read-only. */
ol_status ol_encoded_view_new(const Onnx__EncodedValueProto *ev, ol_proto_owner *owner, ol_value **out);

/* Decodes a TypeProto into the flat type description. */
void ol_type_info_from_proto(const Onnx__TypeProto *tp, ol_type_info *out);

#endif
