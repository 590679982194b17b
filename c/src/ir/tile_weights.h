/* Weights laid out at load, in place in the model's own wire buffer: float
 * MatMul weights tiled (the layout of core/value.h that the fp32 GEMV
 * streams best), MatMulNBits weights and scales in the lane layout (the
 * int8-activation GEMV's, simd/qgemv_i8_lane.h). The proto keeps pointing
 * at the laid-out bytes; the owner's wire views record which payloads are
 * laid out, and every reader of those bytes goes through them: tensors
 * decoded from the proto carry the layout (kernels that do not declare it
 * get dense copies), serialization and the text printer write the dense
 * bytes. */
#ifndef OL_IR_TILE_WEIGHTS_H
#define OL_IR_TILE_WEIGHTS_H
#include "ir/model.h"

/* Tiles the root graph's 2-D float initializers that only MatMul nodes of
 * the root graph read as B, and puts in the lane layout the B and scales
 * (uint8, float) that only the root graph's MatMulNBits nodes with int8
 * activations (accuracy_level 4, 4 or 8 bits, N >= 8, zero points absent or
 * a uint8 initializer) read, each only in that role, B and scales of a node
 * together or neither. Never: graph inputs or outputs, names in quantization
 * annotations or referenced from subgraphs, payloads that are not views
 * into d->owner's wire buffer. Best effort: without memory for the scratch
 * block the remaining weights stay dense (OL_OK). */
ol_status ol_model_tile_weights(ol_model_data *d);

/* The tiled or lane-layout payload starting at data, looked up in owner and the
 * owners it is based on (NULL: data is not such a payload). */
const ol_wire_view *ol_proto_owner_find_tiled(const ol_proto_owner *owner, const void *data);

/* Writes the dense bytes of the tiled or lane-layout payload v (data: its bytes, v->length of dense). */
void ol_tiled_view_to_dense(const ol_wire_view *v, const void *data, void *dense);

#endif
