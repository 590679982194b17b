/* Zero-copy weights: protobuf-c copies every `bytes` field while unpacking,
 * which would keep a second copy of a model's weights. Instead the loader
 * strips the large raw_data payloads of the root graph's initializers (and
 * encoded initializers) from the wire bytes, unpacks the small remainder and
 * points those payloads back into the wire buffer it owns, moved in place to
 * 16-byte aligned addresses. */
#ifndef OL_IR_WIRE_WEIGHTS_H
#define OL_IR_WIRE_WEIGHTS_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "core/value.h"
#include "onnx_light.pb-c.h"

/* Payloads smaller than this stay in the unpacked message. */
#define OL_WIRE_VIEW_MIN_BYTES 256

/* One payload viewed in the wire buffer. */
typedef struct ol_wire_view {
  size_t offset;  /* of the payload in the wire buffer (after relocation: its aligned home) */
  size_t length;
  size_t index;   /* initializer (or encoded initializer) position in the root graph */
  bool encoded;   /* GraphProto.encoded_initializer instead of initializer */
  void *copy;     /* a separately allocated aligned copy when it could not move in place */
  ol_packing packing; /* kind set: packed in place for its readers (ir/packed_views.h) */
} ol_wire_view;

typedef struct ol_wire_weights {
  uint8_t *stripped; /* the wire bytes without the viewed payloads (malloc'd) */
  size_t stripped_size;
  ol_wire_view *views;
  size_t count;
  size_t attached; /* views whose payload slot points at them */
} ol_wire_weights;

/* Splits wire (size bytes, owned by the caller and modified: payloads are
 * moved within it). Returns false with *out zeroed when the bytes should be
 * unpacked as they are (nothing worth viewing, or a layout this pass does
 * not handle, such as a repeated graph field); OL_OUT_OF_MEMORY is reported
 * through *status. */
bool ol_wire_weights_split(uint8_t *wire, size_t size, ol_wire_weights *out, ol_status *status);

/* Points the unpacked proto's payloads at their views (wire: the buffer given
 * to split). Returns an error when the unpacked message does not have the
 * payload slots the split recorded. */
ol_status ol_wire_weights_attach(ol_wire_weights *w, uint8_t *wire, Onnx__ModelProto *proto);

/* Clears the attached payload pointers so protobuf-c does not free them
 * (proto may be NULL), and frees the split's own allocations (not the wire
 * buffer). */
void ol_wire_weights_detach(ol_wire_weights *w, Onnx__ModelProto *proto);

#endif
