/* Float MatMul weights tiled at load (the layout of core/value.h that the
 * fp32 GEMV streams best), in place in the model's own wire buffer. The
 * proto keeps pointing at the tiled bytes; the owner's wire views record
 * which payloads are tiled, and every reader of those bytes goes through
 * them: tensors decoded from the proto carry the tiled layout (kernels that
 * do not declare it get dense copies), serialization and the text printer
 * write the dense bytes. */
#ifndef OL_IR_TILE_WEIGHTS_H
#define OL_IR_TILE_WEIGHTS_H
#include "ir/model.h"

/* Tiles the root graph's 2-D float initializers that only MatMul nodes of
 * the root graph read as B (not graph inputs or outputs, not named by
 * quantization annotations, not referenced from subgraphs), when their
 * payload is a view into d->owner's wire buffer. Best effort: without memory
 * for the scratch block the remaining weights stay row-major (OL_OK). */
ol_status ol_model_tile_weights(ol_model_data *d);

/* The tiled payload starting at data, looked up in owner and the owners it
 * is based on (NULL: data is not a tiled payload). */
const ol_wire_view *ol_proto_owner_find_tiled(const ol_proto_owner *owner, const void *data);

/* Writes the dense bytes of the tiled payload v (data: its bytes, v->length of dense). */
void ol_tiled_view_to_dense(const ol_wire_view *v, const void *data, void *dense);

#endif
