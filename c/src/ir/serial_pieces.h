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

/* ol_serial_piece(s), ol_model_serialize_pieces and the accessors are public
 * (onnxlight.h). */

#endif
