/* Zero-copy weights (see wire_weights.h). The pass reads the protobuf wire
 * format directly: ModelProto.graph (7) -> GraphProto.initializer (5) ->
 * TensorProto.raw_data (9), and GraphProto.encoded_initializer (1000) ->
 * EncodedValueProto.raw_data (4). Everything else is copied unchanged into
 * the stripped message, whose enclosing lengths are re-encoded. */
#include "ir/wire_weights.h"

#include <stdlib.h>
#include <string.h>

#include "core/grow.h"
#include "core/value.h"

#define GRAPH_FIELD 7
#define INITIALIZER_FIELD 5
#define ENCODED_INITIALIZER_FIELD 1000
#define TENSOR_RAW_DATA_FIELD 9
#define ENCODED_RAW_DATA_FIELD 4
#define WIRE_LEN 2
#define VIEW_ALIGNMENT 16

/* ------------------------------------------------------------ wire reading */

typedef struct field {
  uint32_t number;
  int wire_type;
  size_t start;   /* of the key */
  size_t payload; /* WIRE_LEN: first payload byte */
  size_t length;  /* WIRE_LEN: payload length */
  size_t end;
} field;

static bool read_varint(const uint8_t *p, size_t n, size_t *pos, uint64_t *value) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64 && *pos < n; shift += 7) {
    uint8_t byte = p[(*pos)++];
    v |= (uint64_t)(byte & 0x7f) << shift;
    if (!(byte & 0x80)) {
      *value = v;
      return true;
    }
  }
  return false;
}

/* The field at *pos of [p, p + n); false on malformed input or groups. */
static bool next_field(const uint8_t *p, size_t n, size_t *pos, field *f) {
  f->start = *pos;
  uint64_t key, skip;
  if (!read_varint(p, n, pos, &key) || (key >> 3) > UINT32_MAX) return false;
  f->number = (uint32_t)(key >> 3);
  f->wire_type = (int)(key & 7);
  switch (f->wire_type) {
    case 0:
      if (!read_varint(p, n, pos, &skip)) return false;
      break;
    case 1:
      if (n - *pos < 8) return false;
      *pos += 8;
      break;
    case WIRE_LEN:
      if (!read_varint(p, n, pos, &skip) || skip > n - *pos) return false;
      f->payload = *pos;
      f->length = (size_t)skip;
      *pos += f->length;
      break;
    case 5:
      if (n - *pos < 4) return false;
      *pos += 4;
      break;
    default:
      return false;
  }
  f->end = *pos;
  return true;
}

/* ------------------------------------------------------------ output */

typedef struct obuf {
  uint8_t *data;
  size_t size, cap;
  bool oom;
} obuf;

static void put(obuf *b, const void *p, size_t n) {
  if (b->oom || n == 0) return;
  if (!ol_grow(&b->data, &b->cap, b->size, n, 1, 256)) {
    b->oom = true;
    return;
  }
  memcpy(b->data + b->size, p, n);
  b->size += n;
}

static void put_varint(obuf *b, uint64_t v) {
  uint8_t tmp[10];
  size_t n = 0;
  do {
    uint8_t c = v & 0x7f;
    v >>= 7;
    tmp[n++] = (uint8_t)(c | (v ? 0x80 : 0));
  } while (v);
  put(b, tmp, n);
}

/* A length-delimited field holding `inner`. */
static void put_message(obuf *b, uint32_t number, const obuf *inner) {
  put_varint(b, ((uint64_t)number << 3) | WIRE_LEN);
  put_varint(b, inner->size);
  put(b, inner->data, inner->size);
  if (inner->oom) b->oom = true;
}

/* ------------------------------------------------------------ the split */

typedef struct splitter {
  const uint8_t *wire;
  ol_wire_view *views;
  size_t count, cap;
  bool oom;
} splitter;

static void add_view(splitter *s, size_t offset, size_t length, size_t index, bool encoded) {
  if (!ol_grow(&s->views, &s->cap, s->count, 1, sizeof *s->views, 64)) {
    s->oom = true;
    return;
  }
  s->views[s->count++] = (ol_wire_view){.offset = offset, .length = length, .index = index, .encoded = encoded};
}

/* A TensorProto or EncodedValueProto at [base, base + n) without its large
 * payload field. false: a layout left to protobuf-c (a repeated payload). */
static bool strip_payload(splitter *s, size_t base, size_t n, uint32_t payload_field, size_t index, bool encoded,
                          obuf *out) {
  const uint8_t *p = s->wire + base;
  size_t pos = 0;
  int payloads = 0;
  field f;
  while (pos < n) {
    if (!next_field(p, n, &pos, &f)) return false;
    if (f.number == payload_field && f.wire_type == WIRE_LEN) {
      if (++payloads > 1) return false;
      if (f.length >= OL_WIRE_VIEW_MIN_BYTES) {
        add_view(s, base + f.payload, f.length, index, encoded);
        continue;
      }
    }
    put(out, p + f.start, f.end - f.start);
  }
  return true;
}

static bool strip_graph(splitter *s, size_t base, size_t n, obuf *out) {
  const uint8_t *p = s->wire + base;
  size_t pos = 0, initializers = 0, encoded = 0;
  field f;
  while (pos < n) {
    if (!next_field(p, n, &pos, &f)) return false;
    bool tensor = f.number == INITIALIZER_FIELD, enc = f.number == ENCODED_INITIALIZER_FIELD;
    if ((tensor || enc) && f.wire_type == WIRE_LEN) {
      obuf inner = {0};
      bool ok = strip_payload(s, base + f.payload, f.length, enc ? ENCODED_RAW_DATA_FIELD : TENSOR_RAW_DATA_FIELD,
                              enc ? encoded++ : initializers++, enc, &inner);
      if (ok) put_message(out, f.number, &inner);
      free(inner.data);
      if (!ok) return false;
    } else {
      put(out, p + f.start, f.end - f.start);
    }
  }
  return true;
}

static bool strip_model(splitter *s, size_t n, obuf *out) {
  size_t pos = 0;
  int graphs = 0;
  field f;
  while (pos < n) {
    if (!next_field(s->wire, n, &pos, &f)) return false;
    if (f.number == GRAPH_FIELD && f.wire_type == WIRE_LEN) {
      if (++graphs > 1) return false; /* protobuf would merge them */
      obuf inner = {0};
      bool ok = strip_graph(s, f.payload, f.length, &inner);
      if (ok) put_message(out, f.number, &inner);
      free(inner.data);
      if (!ok) return false;
    } else {
      put(out, s->wire + f.start, f.end - f.start);
    }
  }
  return true;
}


/* Moves payloads (ascending offsets) down to aligned homes; a payload whose
 * aligned home would start after it gets its own copy instead. The metadata
 * between payloads is no longer needed once the stripped message exists. */
static bool relocate(uint8_t *wire, ol_wire_view *views, size_t count) {
  size_t cursor = 0;
  for (size_t i = 0; i < count; i++) {
    ol_wire_view *v = &views[i];
    uintptr_t at = (uintptr_t)(wire + cursor);
    size_t dest = cursor + (size_t)((VIEW_ALIGNMENT - at % VIEW_ALIGNMENT) % VIEW_ALIGNMENT);
    if (dest <= v->offset) {
      if (dest < v->offset) ol_copy_forward(wire + dest, wire + v->offset, v->length); /* moves down */
      v->offset = dest;
      cursor = dest + v->length;
    } else {
      v->copy = malloc(v->length);
      if (!v->copy) return false;
      memcpy(v->copy, wire + v->offset, v->length);
    }
  }
  return true;
}

static void free_views(ol_wire_view *views, size_t count) {
  for (size_t i = 0; i < count; i++) free(views[i].copy);
  free(views);
}

bool ol_wire_weights_split(uint8_t *wire, size_t size, ol_wire_weights *out, ol_status *status) {
  memset(out, 0, sizeof *out);
  *status = OL_OK;
  splitter s = {wire, NULL, 0, 0, false};
  obuf stripped = {0};
  bool ok = strip_model(&s, size, &stripped) && s.count > 0;
  if (ok && (s.oom || stripped.oom)) {
    *status = ol_error(OL_OUT_OF_MEMORY, "out of memory splitting the model's weights");
    ok = false;
  }
  if (ok && !relocate(wire, s.views, s.count)) {
    *status = ol_error(OL_OUT_OF_MEMORY, "out of memory placing the model's weights");
    ok = false;
  }
  if (!ok) {
    free(stripped.data);
    free_views(s.views, s.count);
    return false;
  }
  out->stripped = stripped.data;
  out->stripped_size = stripped.size;
  out->views = s.views;
  out->count = s.count;
  return true;
}

/* The raw_data slot a view fills, or NULL when the message has none. */
static ProtobufCBinaryData *slot(const ol_wire_view *v, Onnx__ModelProto *proto, protobuf_c_boolean **has) {
  Onnx__GraphProto *g = proto ? proto->graph : NULL;
  if (!g) return NULL;
  if (v->encoded) {
    if (v->index >= g->n_encoded_initializer || !g->encoded_initializer[v->index]) return NULL;
    *has = &g->encoded_initializer[v->index]->has_raw_data;
    return &g->encoded_initializer[v->index]->raw_data;
  }
  if (v->index >= g->n_initializer || !g->initializer[v->index]) return NULL;
  *has = &g->initializer[v->index]->has_raw_data;
  return &g->initializer[v->index]->raw_data;
}

ol_status ol_wire_weights_attach(ol_wire_weights *w, uint8_t *wire, Onnx__ModelProto *proto) {
  for (w->attached = 0; w->attached < w->count; w->attached++) {
    const ol_wire_view *v = &w->views[w->attached];
    protobuf_c_boolean *has = NULL;
    ProtobufCBinaryData *data = slot(v, proto, &has);
    if (!data || *has)
      return ol_error(OL_INVALID_MODEL, "%sinitializer %zu: its payload does not match the model's structure",
                      v->encoded ? "encoded " : "", v->index);
    data->data = v->copy ? v->copy : wire + v->offset;
    data->len = v->length;
    *has = 1;
  }
  return OL_OK;
}

void ol_wire_weights_detach(ol_wire_weights *w, Onnx__ModelProto *proto) {
  for (size_t i = 0; i < w->attached; i++) { /* protobuf-c must not free these */
    protobuf_c_boolean *has = NULL;
    ProtobufCBinaryData *data = slot(&w->views[i], proto, &has);
    if (!data) continue;
    data->data = NULL;
    data->len = 0;
    *has = 0;
  }
  free(w->stripped);
  free_views(w->views, w->count);
  memset(w, 0, sizeof *w);
}
