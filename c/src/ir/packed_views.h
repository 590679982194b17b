/* Weights packed in place in a model's own wire buffer (core/value.h,
 * ol_packing; decided and done by model/pack.c through the schema rows).
 * The proto keeps pointing at the packed bytes; the owner's wire views
 * record each payload's packing, and every reader of those bytes goes
 * through them: tensors decoded from the proto carry the packing (kernels
 * that do not declare it get dense copies), serialization and the text
 * printer write the dense bytes. */
#ifndef OL_IR_PACKED_VIEWS_H
#define OL_IR_PACKED_VIEWS_H
#include "ir/model.h"

/* The view in owner's own wire buffer (not its bases') whose payload starts
 * at data, or NULL: only such payloads may be packed in place. */
ol_wire_view *ol_proto_owner_own_view(ol_proto_owner *owner, const void *data);

/* The packed payload starting at data, looked up in owner and the owners it
 * is based on (NULL: data is not a packed payload). */
const ol_wire_view *ol_proto_owner_find_packed(const ol_proto_owner *owner, const void *data);

/* Writes the dense bytes of the packed payload v (data: its bytes, v->length of dense). */
void ol_wire_view_to_dense(const ol_wire_view *v, const void *data, void *dense);

#endif
