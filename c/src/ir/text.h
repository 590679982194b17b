/* ONNX text syntax (docs/Syntax.md of onnx/onnx): the lexer and the name
 * tables shared by the parser (text_parse.c) and the printer (text_print.c).
 *
 * Extensions over the upstream grammar, all printed only when needed:
 *  - strings take C escapes (\n \t \r \\ \" \xHH);
 *  - a quoted graph name in an attribute value ("my graph" () => () {...});
 *  - lists of tensors, graphs and type protos as attribute values;
 *  - a quoted node domain ("my-domain".Op) and quoted dimension names;
 *  - sparse tensor values: sparse_tensor(float[4]) {int64[1] {2}, float[1] {5.0}}
 *    (indices first, then values);
 *  - float16/bfloat16/float8/float4 literals are values (1.5, nan, -inf), not
 *    bit patterns; they round to nearest even without saturation;
 *  - the element types float8e8m0, uint2 and int2. */
#ifndef OL_IR_TEXT_H
#define OL_IR_TEXT_H
#include <stdbool.h>
#include <stddef.h>

#include "onnx_light.pb-c.h"
#include "onnxlight.h"

typedef enum ol_tok_kind {
  OL_TOK_EOF = 0,
  OL_TOK_IDENT,  /* [A-Za-z_][A-Za-z0-9_]* */
  OL_TOK_STRING, /* "..." (span includes the quotes, escapes not decoded) */
  OL_TOK_NUMBER, /* [+-]digits[.digits][e[+-]digits], or -inf / -nan */
  OL_TOK_PUNCT,  /* one of ( ) [ ] { } < > , = : . @ ? */
  OL_TOK_ARROW,  /* => */
} ol_tok_kind;

typedef struct ol_token {
  ol_tok_kind kind;
  const char *start;
  size_t len;
  int line, col; /* 1-based */
  bool is_float; /* NUMBER with '.', an exponent, or -inf/-nan */
  char punct;    /* PUNCT: the character */
} ol_token;

typedef struct ol_token_list {
  ol_token *tokens; /* count tokens, the last one is OL_TOK_EOF */
  size_t count;
} ol_token_list;

/* Splits text into tokens; skips white space and '#' comments. Fails with
 * OL_INVALID_MODEL and "line L, column C: ..." on a malformed token. */
ol_status ol_text_lex(const char *text, ol_token_list *out);
void ol_text_tokens_free(ol_token_list *list);

/* "identifier 'x'", "'('", "end of input"... for error messages. */
void ol_text_describe_token(const ol_token *t, char *buf, size_t size);
/* Decodes a STRING token into a malloc'd buffer (NUL-terminated; *len gets the
 * byte length, which may include NULs). NULL when out of memory. */
char *ol_text_unescape(const ol_token *t, size_t *len);

/* Element type names ("float", "int64", ...): TensorProto.DataType or 0. */
int ol_text_dtype_from_name(const char *name, size_t len);
const char *ol_text_dtype_name(int dtype); /* NULL when unknown */
/* Attribute type names ("int", "floats", "graph", ...): AttributeType or 0. */
int ol_text_attr_type_from_name(const char *name, size_t len);
const char *ol_text_attr_type_name(int type); /* NULL when unknown */

/* inf, infinity, nan (any case). */
bool ol_text_is_float_word(const char *s, size_t len);
/* The token starts a type: an element type name or seq/map/optional/
 * sparse_tensor/opaque. */
bool ol_text_is_type_word(const char *s, size_t len);
/* s can be printed unquoted: an identifier that is neither a type word nor a
 * float word. */
bool ol_text_is_plain_id(const char *s);

/* Text -> a ModelProto allocated like an unpacked message (free with
 * onnx__model_proto__free_unpacked(m, NULL)). */
ol_status ol_text_parse_proto(const char *text, Onnx__ModelProto **out);
/* ModelProto -> text (malloc'd). */
ol_status ol_text_print_proto(const Onnx__ModelProto *model, char **out_text);

#endif
