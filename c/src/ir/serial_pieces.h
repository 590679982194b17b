/* A model's serialization as a list of pieces, without a contiguous copy:
 * large payloads (weights) are pieces that point into the model's own
 * message, the small rest is copied into fixed blocks. Concatenating the
 * pieces gives exactly the bytes of ol_model_serialize. The wasm build uses
 * it to copy a model's bytes out of wasm memory once, without first
 * building a second copy of the weights there. */
#ifndef OL_IR_SERIAL_PIECES_H
#define OL_IR_SERIAL_PIECES_H
#include <stddef.h>
#include <stdint.h>

#include "core/status.h"
#include "onnxlight.h"

/* Payloads of at least this many bytes are pointed at, not copied. */
#define OL_SERIAL_PIECE_VIEW_MIN 1024

typedef struct ol_serial_piece {
  const uint8_t *data;
  size_t size;
} ol_serial_piece;

typedef struct ol_serial_pieces ol_serial_pieces;

/* The pieces stay valid until ol_serial_pieces_free, also after the model
 * handle is destroyed (they retain the model's data). */
ol_status ol_model_serialize_pieces(const ol_model *model, ol_serial_pieces **out);
size_t ol_serial_pieces_count(const ol_serial_pieces *p);
const ol_serial_piece *ol_serial_pieces_list(const ol_serial_pieces *p);
size_t ol_serial_pieces_total(const ol_serial_pieces *p);
void ol_serial_pieces_free(ol_serial_pieces *p);

#endif
