/* Shared protobuf-c helpers of the quantization wire layouts (wire.c for the
 * portable layout, ort.c for the ORT MatMulNBits layout). Internal to quant/.
 *
 * Builders return NULL when out of memory and take ownership of message
 * arguments (freeing them on failure), so a caller checks the root once and
 * frees the whole malloc-owned tree with *_free_unpacked(msg, NULL). */
#ifndef OL_QUANT_WIRE_PROTO_H
#define OL_QUANT_WIRE_PROTO_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnx_light.pb-c.h"
#include "quant/wire.h"

typedef Onnx__StructTypeProto__Structure__Field field_t;

void *ol_qw_msg_new(size_t size, const void *init);
/* A malloc'd message initialized with its generated INIT macro. */
#define NEW(type, INIT) ((type *)ol_qw_msg_new(sizeof(type), &(type)INIT))

/* tensor_type with a present (possibly empty) concrete shape */
Onnx__TypeProto *ol_qw_tensor_type(int32_t dtype, int rank, const int64_t *dims);
Onnx__TypeProto *ol_qw_struct_type_of(Onnx__StructTypeProto *inner);
/* INT64 constant in int64_data; with_dims gives dims [n], else no dims */
Onnx__TensorProto *ol_qw_int64_constant(const int64_t *values, size_t n, bool with_dims);
/* kind structure with no fields; name may be NULL */
Onnx__StructTypeProto *ol_qw_new_structure(const char *name);
bool ol_qw_add_field(Onnx__StructTypeProto *st, const char *name, Onnx__TypeProto *type,
                     Onnx__TensorProto *constant);
bool ol_qw_add_tensor(Onnx__StructTypeProto *st, const char *name, int32_t dtype, int rank,
                      int64_t d0, int64_t d1);

/* Element count of a concrete shape (rank <= OL_MAX_RANK). */
ol_status ol_qw_shape_count(int rank, const int64_t *dims, uint64_t *count);
/* Field `index` of a structure, which must be named `name`. */
ol_status ol_qw_get_field(const Onnx__StructTypeProto *type, size_t index, const char *name,
                          const field_t **out);
/* Dimension `axis` of a tensor field of the given dtype and rank. */
ol_status ol_qw_extent(const field_t *f, int32_t dtype, size_t rank, size_t axis, uint64_t *out);
/* The struct_type of a type field, or NULL. */
const Onnx__StructTypeProto *ol_qw_field_struct(const field_t *f);
/* The concrete FLOAT/DOUBLE/FLOAT16/BFLOAT16 logical tensor type (values untouched). */
ol_status ol_qw_logical_tensor(const Onnx__EncodedValueProto *v, ol_quant_decoded *out);
/* Serialized bytes of a descriptor ignoring type_id (malloc'd; NULL if out of memory). */
uint8_t *ol_qw_pack_without_id(const Onnx__StructTypeProto *type, size_t *size);
/* OL_OK when actual equals expected byte for byte (type_id ignored). */
ol_status ol_qw_same_descriptor(const Onnx__StructTypeProto *actual,
                                const Onnx__StructTypeProto *expected);

#endif
