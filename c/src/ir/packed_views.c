/* Packed weight payloads of a model's wire buffer (see packed_views.h). */
#include "ir/packed_views.h"

static uint8_t *view_data(const ol_proto_owner *owner, const ol_wire_view *v) {
  return v->copy ? v->copy : owner->wire + v->offset;
}

ol_wire_view *ol_proto_owner_own_view(ol_proto_owner *owner, const void *data) {
  if (!owner || !owner->wire || owner->base || !data) return NULL;
  for (size_t i = 0; i < owner->weights.count; i++)
    if (view_data(owner, &owner->weights.views[i]) == data) return &owner->weights.views[i];
  return NULL;
}

const ol_wire_view *ol_proto_owner_find_packed(const ol_proto_owner *owner, const void *data) {
  for (; owner && data; owner = owner->base) {
    if (!owner->wire) continue;
    for (size_t i = 0; i < owner->weights.count; i++) {
      const ol_wire_view *v = &owner->weights.views[i];
      if (v->packing.kind && view_data(owner, v) == data) return v;
    }
  }
  return NULL;
}

void ol_wire_view_to_dense(const ol_wire_view *v, const void *data, void *dense) {
  v->packing.kind->to_dense(&v->packing, data, dense);
}
