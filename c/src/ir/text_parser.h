/* ONNX text syntax parser internals shared by text_parse.c (model, graphs,
 * nodes, attributes) and text_parse_values.c (scalars, types, tensors).
 *
 * Ownership: every message is attached to its parent as soon as it is
 * created, so on failure onnx__model_proto__free_unpacked(model, NULL) frees
 * everything built so far. The first error wins. */
#ifndef OL_IR_TEXT_PARSER_H
#define OL_IR_TEXT_PARSER_H
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/status.h"
#include "ir/text.h"


typedef struct parser {
  const ol_token *tok;
  size_t pos;
  int fn_depth; /* > 0 inside a function body: @ref attributes allowed */
  int graph_depth, type_depth; /* nesting of graphs, of types (core/limits.h) */
  bool failed;
  ol_status status;
} parser;

/* Records "line L, column C: message" (first error wins); returns false. */
bool ol_tp_fail_at(parser *p, const ol_token *t, const char *fmt, ...) OL_PRINTF(3, 4);
bool ol_tp_oom(parser *p);
/* "expected WHAT, found TOKEN" at the current token; returns false. */
bool ol_tp_expected(parser *p, const char *what);

/* Identifier or quoted string as a malloc'd name (NULL on failure). */
char *ol_tp_take_id(parser *p, const char *what);
bool ol_tp_take_string(parser *p, const char *what, char **out);
bool ol_tp_take_bytes(parser *p, ProtobufCBinaryData *out);
bool ol_tp_take_int(parser *p, const char *what, int64_t lo, int64_t hi, int64_t *out);
/* single: round once, straight to float */
bool ol_tp_take_double(parser *p, const char *what, bool single, double *out);

bool ol_tp_parse_type(parser *p, Onnx__TypeProto *tp);
/* Tensor data for a tensor type: '{' values '}' or '[' external entries ']'. */
bool ol_tp_parse_tensor_data(parser *p, Onnx__TensorProto *t, const Onnx__TypeProto *type,
                             const ol_token *where);
/* type [name] ['='] data */
bool ol_tp_parse_tensor_literal(parser *p, Onnx__TensorProto *t);
/* after a sparse_tensor(...) type: '{' indices ',' values '}' */
bool ol_tp_parse_sparse_value(parser *p, Onnx__SparseTensorProto *sp, const Onnx__TypeProto *type);
/* '[' "key": "value", ... ']' */
bool ol_tp_parse_entries(parser *p, Onnx__StringStringEntryProto ***list, size_t *n);

/* ------------------------------------------------------------ tokens */

static inline const ol_token *cur(const parser *p) { return &p->tok[p->pos]; }
static inline const ol_token *ahead(const parser *p, size_t k) {
  size_t i = p->pos;
  while (k-- && p->tok[i].kind != OL_TOK_EOF) i++;
  return &p->tok[i];
}
static inline void next(parser *p) {
  if (p->tok[p->pos].kind != OL_TOK_EOF) p->pos++;
}
static inline bool is_punct(const ol_token *t, char c) {
  return t->kind == OL_TOK_PUNCT && t->punct == c;
}
static inline bool is_word(const ol_token *t, const char *w) {
  return t->kind == OL_TOK_IDENT && strlen(w) == t->len && memcmp(t->start, w, t->len) == 0;
}
static inline bool at(parser *p, char c) { return is_punct(cur(p), c); }
static inline bool accept(parser *p, char c) {
  if (!at(p, c)) return false;
  next(p);
  return true;
}
static inline bool expect(parser *p, char c, const char *what) {
  if (accept(p, c)) return true;
  return ol_tp_expected(p, what);
}
static inline bool at_type(parser *p) {
  return cur(p)->kind == OL_TOK_IDENT && ol_text_is_type_word(cur(p)->start, cur(p)->len);
}

/* ------------------------------------------------------------ allocation */

#define DEFINE_NEW(fn, T, init)    \
  static inline T *fn(parser *p) { \
    T *m = malloc(sizeof *m);      \
    if (!m) {                      \
      ol_tp_oom(p);                \
      return NULL;                 \
    }                              \
    init(m);                       \
    return m;                      \
  }
DEFINE_NEW(new_graph, Onnx__GraphProto, onnx__graph_proto__init)
DEFINE_NEW(new_node, Onnx__NodeProto, onnx__node_proto__init)
DEFINE_NEW(new_attr, Onnx__AttributeProto, onnx__attribute_proto__init)
DEFINE_NEW(new_tensor, Onnx__TensorProto, onnx__tensor_proto__init)
DEFINE_NEW(new_sparse, Onnx__SparseTensorProto, onnx__sparse_tensor_proto__init)
DEFINE_NEW(new_vi, Onnx__ValueInfoProto, onnx__value_info_proto__init)
DEFINE_NEW(new_type, Onnx__TypeProto, onnx__type_proto__init)
DEFINE_NEW(new_ttype, Onnx__TypeProto__Tensor, onnx__type_proto__tensor__init)
DEFINE_NEW(new_seq, Onnx__TypeProto__Sequence, onnx__type_proto__sequence__init)
DEFINE_NEW(new_map, Onnx__TypeProto__Map, onnx__type_proto__map__init)
DEFINE_NEW(new_opt, Onnx__TypeProto__Optional, onnx__type_proto__optional__init)
DEFINE_NEW(new_stype, Onnx__TypeProto__SparseTensor, onnx__type_proto__sparse_tensor__init)
DEFINE_NEW(new_opaque, Onnx__TypeProto__Opaque, onnx__type_proto__opaque__init)
DEFINE_NEW(new_shape, Onnx__TensorShapeProto, onnx__tensor_shape_proto__init)
DEFINE_NEW(new_dim, Onnx__TensorShapeProto__Dimension, onnx__tensor_shape_proto__dimension__init)
DEFINE_NEW(new_opset, Onnx__OperatorSetIdProto, onnx__operator_set_id_proto__init)
DEFINE_NEW(new_entry, Onnx__StringStringEntryProto, onnx__string_string_entry_proto__init)
DEFINE_NEW(new_function, Onnx__FunctionProto, onnx__function_proto__init)

/* Makes room for element n of a growable array (capacity: the next power of
 * two, so no capacity field is needed). */
static inline bool grow_(parser *p, void *array_ptr, size_t n, size_t elem) {
  if (n != 0 && (n & (n - 1)) != 0) return true;
  size_t cap = n ? 2 * n : 1;
  if (cap > SIZE_MAX / elem) return ol_tp_oom(p);
  void *old;
  memcpy(&old, array_ptr, sizeof old);
  void *grown = realloc(old, cap * elem);
  if (!grown) return ol_tp_oom(p);
  memcpy(array_ptr, &grown, sizeof grown);
  return true;
}
#define GROW(p, array, n) grow_((p), &(array), (n), sizeof *(array))
/* Appends value to array[n++]; value must not need freeing on failure. */
#define APPEND(p, array, n, value) (GROW(p, array, n) && ((array)[(n)++] = (value), true))

/* Creates a message with fn and appends it; NULL on failure. */
#define ADD(p, array, n, fn) add_(p, (void *)fn(p), &(array), &(n))
static inline void *add_(parser *p, void *msg, void *array_ptr, size_t *n) {
  if (!msg) return NULL;
  void **array;
  memcpy(&array, array_ptr, sizeof array);
  if (!grow_(p, &array, *n, sizeof(void *))) {
    protobuf_c_message_free_unpacked(msg, NULL);
    return NULL;
  }
  array[(*n)++] = msg;
  memcpy(array_ptr, &array, sizeof array);
  return msg;
}

/* ------------------------------------------------------------ fields */

static inline bool set_str(char **field, char *value) {
  free(*field);
  *field = value;
  return value != NULL;
}

/* Optional string fields: empty means absent. */
static inline bool set_opt_str(char **field, char *value) {
  if (value && !value[0]) {
    free(value);
    value = NULL;
    free(*field);
    *field = NULL;
    return true;
  }
  return set_str(field, value);
}

/* A float literal: a number or inf/infinity/nan (optionally signed). */
static inline bool at_float(parser *p) {
  const ol_token *t = cur(p);
  return t->kind == OL_TOK_NUMBER ||
         (t->kind == OL_TOK_IDENT && ol_text_is_float_word(t->start, t->len));
}

#endif
