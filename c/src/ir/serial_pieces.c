/* Piecewise model serialization (see serial_pieces.h): protobuf-c packs into
 * a ProtobufCBuffer whose append either records a pointer to the appended
 * bytes (large appends come straight from the message: protobuf-c only uses
 * its 16-byte stack scratch for tags, lengths and varints) or copies them. */
#include "ir/serial_pieces.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/grow.h"
#include "ir/model.h"
#include "ir/packed_views.h"

#define BLOCK_BYTES 65536

struct ol_serial_pieces {
  ol_serial_piece *pieces;
  size_t count, capacity;
  uint8_t **blocks; /* copied small appends; blocks never move */
  size_t num_blocks;
  size_t block_used; /* in the last block */
  bool copy_open;    /* the last piece is a copy ending at block_used */
  uint8_t **dense;   /* dense copies of packed weights (ir/packed_views.h) */
  size_t num_dense;
  size_t total;
  ol_model_data *model; /* retained: view pieces point into its message */
};

typedef struct piece_buffer {
  ProtobufCBuffer base;
  ol_serial_pieces *p;
  bool failed;
} piece_buffer;

static bool add_piece(ol_serial_pieces *p, const uint8_t *data, size_t size) {
  if (!ol_grow(&p->pieces, &p->capacity, p->count, 1, sizeof *p->pieces, 64)) return false;
  p->pieces[p->count++] = (ol_serial_piece){data, size};
  p->copy_open = false;
  return true;
}

/* Copies size (< BLOCK_BYTES) bytes, extending the last piece when it is
 * the copy just before them. */
static bool add_copy(ol_serial_pieces *p, const uint8_t *data, size_t size) {
  if (!p->num_blocks || p->block_used + size > BLOCK_BYTES) {
    uint8_t **blocks = realloc(p->blocks, (p->num_blocks + 1) * sizeof *blocks);
    if (!blocks) return false;
    p->blocks = blocks;
    if (!(blocks[p->num_blocks] = malloc(BLOCK_BYTES))) return false;
    p->num_blocks++;
    p->block_used = 0;
    p->copy_open = false;
  }
  uint8_t *at = p->blocks[p->num_blocks - 1] + p->block_used;
  memcpy(at, data, size);
  p->block_used += size;
  if (p->copy_open) {
    p->pieces[p->count - 1].size += size;
    return true;
  }
  if (!add_piece(p, at, size)) return false;
  p->copy_open = true;
  return true;
}

/* A packed weight payload as its dense bytes, in a copy the pieces own. */
static bool add_dense(ol_serial_pieces *p, const ol_wire_view *v, const uint8_t *data) {
  uint8_t **dense = realloc(p->dense, (p->num_dense + 1) * sizeof *dense);
  if (!dense) return false;
  p->dense = dense;
  if (!(dense[p->num_dense] = malloc(v->length))) return false;
  ol_wire_view_to_dense(v, data, dense[p->num_dense]);
  return add_piece(p, dense[p->num_dense++], v->length);
}

static void append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data) {
  piece_buffer *b = (piece_buffer *)buffer;
  if (b->failed || len == 0) return;
  /* laid-out payloads (views of at least OL_WIRE_VIEW_MIN_BYTES) are written dense, whatever their size */
  const ol_wire_view *packed = len >= OL_WIRE_VIEW_MIN_BYTES ? ol_proto_owner_find_packed(b->p->model->owner, data) : NULL;
  bool ok = packed && packed->length == len ? add_dense(b->p, packed, data)
            : len >= OL_SERIAL_PIECE_VIEW_MIN ? add_piece(b->p, data, len)
                                              : add_copy(b->p, data, len);
  if (ok) b->p->total += len;
  else b->failed = true;
}

ol_status ol_model_serialize_pieces(const ol_model *model, ol_serial_pieces **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_serialize_pieces: out is NULL");
  *out = NULL;
  if (!model) return ol_error(OL_INVALID_ARGUMENT, "ol_model_serialize_pieces: model is NULL");
  ol_serial_pieces *p = ol_xcalloc(1, sizeof *p);
  if (!p) return OL_OUT_OF_MEMORY;
  p->model = ol_model_data_retain(model->data);
  piece_buffer b = {{append}, p, false};
  size_t n = onnx__model_proto__pack_to_buffer(model->data->proto, &b.base);
  if (b.failed || n != p->total) {
    ol_serial_pieces_destroy(p);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory serializing the model");
  }
  *out = p;
  return OL_OK;
}

size_t ol_serial_pieces_count(const ol_serial_pieces *p) { return p->count; }
const ol_serial_piece *ol_serial_pieces_list(const ol_serial_pieces *p) { return p->pieces; }
size_t ol_serial_pieces_total(const ol_serial_pieces *p) { return p->total; }

void ol_serial_pieces_destroy(ol_serial_pieces *p) {
  if (!p) return;
  for (size_t i = 0; i < p->num_blocks; i++) free(p->blocks[i]);
  free(p->blocks);
  for (size_t i = 0; i < p->num_dense; i++) free(p->dense[i]);
  free(p->dense);
  free(p->pieces);
  ol_model_data_release(p->model);
  free(p);
}
