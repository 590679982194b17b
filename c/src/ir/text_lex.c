/* ONNX text syntax: the lexer and the name tables (see text.h). */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "ir/text.h"

/* ------------------------------------------------------------ names */

static const char *const dtype_names[] = {
    [1] = "float",         [2] = "uint8",           [3] = "int8",        [4] = "uint16",
    [5] = "int16",         [6] = "int32",           [7] = "int64",       [8] = "string",
    [9] = "bool",          [10] = "float16",        [11] = "double",     [12] = "uint32",
    [13] = "uint64",       [14] = "complex64",      [15] = "complex128", [16] = "bfloat16",
    [17] = "float8e4m3fn", [18] = "float8e4m3fnuz", [19] = "float8e5m2", [20] = "float8e5m2fnuz",
    [21] = "uint4",        [22] = "int4",           [23] = "float4e2m1", [24] = "float8e8m0",
    [25] = "uint2",        [26] = "int2",
};
#define NUM_DTYPES ((int)(sizeof dtype_names / sizeof dtype_names[0]))

static const char *const attr_type_names[] = {
    [1] = "float",       [2] = "int",          [3] = "string",         [4] = "tensor",
    [5] = "graph",       [6] = "floats",       [7] = "ints",           [8] = "strings",
    [9] = "tensors",     [10] = "graphs",      [11] = "sparse_tensor", [12] = "sparse_tensors",
    [13] = "type_proto", [14] = "type_protos",
};
#define NUM_ATTR_TYPES ((int)(sizeof attr_type_names / sizeof attr_type_names[0]))

static bool span_eq(const char *s, size_t len, const char *word) {
  return strlen(word) == len && memcmp(s, word, len) == 0;
}

static bool span_ieq(const char *s, size_t len, const char *word) {
  if (strlen(word) != len) return false;
  for (size_t i = 0; i < len; i++)
    if (tolower((unsigned char)s[i]) != word[i]) return false;
  return true;
}

int ol_text_dtype_from_name(const char *name, size_t len) {
  for (int i = 1; i < NUM_DTYPES; i++)
    if (dtype_names[i] && span_eq(name, len, dtype_names[i])) return i;
  return 0;
}

const char *ol_text_dtype_name(int dtype) {
  return dtype > 0 && dtype < NUM_DTYPES ? dtype_names[dtype] : NULL;
}

int ol_text_attr_type_from_name(const char *name, size_t len) {
  for (int i = 1; i < NUM_ATTR_TYPES; i++)
    if (attr_type_names[i] && span_eq(name, len, attr_type_names[i])) return i;
  return 0;
}

const char *ol_text_attr_type_name(int type) {
  return type > 0 && type < NUM_ATTR_TYPES ? attr_type_names[type] : NULL;
}

bool ol_text_is_float_word(const char *s, size_t len) {
  return span_ieq(s, len, "inf") || span_ieq(s, len, "infinity") || span_ieq(s, len, "nan");
}

bool ol_text_is_type_word(const char *s, size_t len) {
  return ol_text_dtype_from_name(s, len) != 0 || span_eq(s, len, "seq") || span_eq(s, len, "map") ||
         span_eq(s, len, "optional") || span_eq(s, len, "sparse_tensor") ||
         span_eq(s, len, "opaque");
}

static bool is_id_start(int c) { return isalpha(c) || c == '_'; }
static bool is_id_char(int c) { return isalnum(c) || c == '_'; }

bool ol_text_is_plain_id(const char *s) {
  if (!s || !is_id_start((unsigned char)s[0])) return false;
  size_t n = 1;
  while (s[n]) {
    if (!is_id_char((unsigned char)s[n])) return false;
    n++;
  }
  return !ol_text_is_type_word(s, n) && !ol_text_is_float_word(s, n);
}

/* ------------------------------------------------------------ strings */

static int hexval(int c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

char *ol_text_unescape(const ol_token *t, size_t *len) {
  /* the span is "..." and was validated by the lexer */
  const char *s = t->start + 1, *end = t->start + t->len - 1;
  char *out = malloc((size_t)(end - s) + 1);
  if (!out) return NULL;
  size_t n = 0;
  while (s < end) {
    char c = *s++;
    if (c != '\\') {
      out[n++] = c;
      continue;
    }
    c = *s++;
    switch (c) {
      case 'n': out[n++] = '\n'; break;
      case 't': out[n++] = '\t'; break;
      case 'r': out[n++] = '\r'; break;
      case 'x':
        out[n++] = (char)(hexval((unsigned char)s[0]) * 16 + hexval((unsigned char)s[1]));
        s += 2;
        break;
      default: out[n++] = c; break;
    }
  }
  out[n] = 0;
  *len = n;
  return out;
}

/* ------------------------------------------------------------ lexer */

typedef struct lexer {
  const char *p;
  int line, col;
  ol_token *tokens;
  size_t count, cap;
} lexer;

static void advance(lexer *lx, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (*lx->p == '\n') {
      lx->line++;
      lx->col = 1;
    } else {
      lx->col++;
    }
    lx->p++;
  }
}

static ol_status lex_error(int line, int col, const char *what) {
  return ol_error(OL_INVALID_MODEL, "line %d, column %d: %s", line, col, what);
}

static ol_status push(lexer *lx, ol_tok_kind kind, size_t len) {
  if (lx->count == lx->cap) {
    size_t cap = lx->cap ? lx->cap * 2 : 256;
    ol_token *t = realloc(lx->tokens, cap * sizeof *t);
    if (!t) return ol_error(OL_OUT_OF_MEMORY, "text parser: out of memory");
    lx->tokens = t;
    lx->cap = cap;
  }
  ol_token *t = &lx->tokens[lx->count++];
  memset(t, 0, sizeof *t);
  t->kind = kind;
  t->start = lx->p;
  t->len = len;
  t->line = lx->line;
  t->col = lx->col;
  return OL_OK;
}

/* Length of a number starting at s (after an optional sign), 0 if none.
 * Sets *is_float when it has a fraction or an exponent. */
static size_t number_length(const char *s, bool *is_float) {
  size_t n = 0, digits = 0;
  *is_float = false;
  while (isdigit((unsigned char)s[n])) n++, digits++;
  if (s[n] == '.') {
    *is_float = true;
    n++;
    while (isdigit((unsigned char)s[n])) n++, digits++;
  }
  if (!digits) return 0;
  if (s[n] == 'e' || s[n] == 'E') {
    size_t e = n + 1;
    if (s[e] == '+' || s[e] == '-') e++;
    if (isdigit((unsigned char)s[e])) {
      while (isdigit((unsigned char)s[e])) e++;
      n = e;
      *is_float = true;
    }
  }
  return n;
}

static ol_status lex_string(lexer *lx) {
  const char *s = lx->p + 1;
  while (*s && *s != '"') {
    if (*s == '\\') {
      if (!s[1]) break;
      if (s[1] == 'x' && (hexval((unsigned char)s[2]) < 0 || hexval((unsigned char)s[3]) < 0)) {
        lexer at = *lx;
        advance(&at, (size_t)(s - lx->p));
        return lex_error(at.line, at.col, "invalid escape in string: \\x needs two hex digits");
      }
      s++;
    }
    s++;
  }
  if (*s != '"') return lex_error(lx->line, lx->col, "unterminated string literal");
  OL_TRY(push(lx, OL_TOK_STRING, (size_t)(s + 1 - lx->p)));
  advance(lx, (size_t)(s + 1 - lx->p));
  return OL_OK;
}

static ol_status lex_number(lexer *lx) {
  const char *s = lx->p;
  size_t sign = (*s == '-' || *s == '+') ? 1 : 0;
  bool is_float = false;
  size_t n = number_length(s + sign, &is_float);
  if (n == 0 && sign) {
    /* -inf, -infinity, -nan */
    size_t w = 0;
    while (isalpha((unsigned char)s[sign + w])) w++;
    if (w && ol_text_is_float_word(s + sign, w) && !is_id_char((unsigned char)s[sign + w])) {
      n = w;
      is_float = true;
    }
  }
  if (n == 0) {
    char msg[64];
    snprintf(msg, sizeof msg, "unexpected character '%c'", *s);
    return lex_error(lx->line, lx->col, msg);
  }
  if (is_id_char((unsigned char)s[sign + n])) {
    size_t bad = sign + n;
    while (is_id_char((unsigned char)s[bad]) || s[bad] == '.') bad++;
    char msg[96];
    snprintf(msg, sizeof msg, "malformed number '%.*s'", (int)(bad > 40 ? 40 : bad), s);
    return lex_error(lx->line, lx->col, msg);
  }
  OL_TRY(push(lx, OL_TOK_NUMBER, sign + n));
  lx->tokens[lx->count - 1].is_float = is_float;
  advance(lx, sign + n);
  return OL_OK;
}

ol_status ol_text_lex(const char *text, ol_token_list *out) {
  lexer lx = {text, 1, 1, NULL, 0, 0};
  ol_status s = OL_OK;
  out->tokens = NULL;
  out->count = 0;
  for (;;) {
    unsigned char c = (unsigned char)*lx.p;
    if (c == 0) break;
    if (isspace(c)) {
      advance(&lx, 1);
    } else if (c == '#') {
      while (*lx.p && *lx.p != '\n') advance(&lx, 1);
    } else if (is_id_start(c)) {
      size_t n = 1;
      while (is_id_char((unsigned char)lx.p[n])) n++;
      if ((s = push(&lx, OL_TOK_IDENT, n)) != OL_OK) break;
      advance(&lx, n);
    } else if (c == '"') {
      if ((s = lex_string(&lx)) != OL_OK) break;
    } else if (isdigit(c) || c == '-' || c == '+' ||
               (c == '.' && isdigit((unsigned char)lx.p[1]))) {
      if ((s = lex_number(&lx)) != OL_OK) break;
    } else if (c == '=' && lx.p[1] == '>') {
      if ((s = push(&lx, OL_TOK_ARROW, 2)) != OL_OK) break;
      advance(&lx, 2);
    } else if (strchr("()[]{}<>,=:.@?", c)) {
      if ((s = push(&lx, OL_TOK_PUNCT, 1)) != OL_OK) break;
      lx.tokens[lx.count - 1].punct = (char)c;
      advance(&lx, 1);
    } else {
      char msg[64];
      if (isprint(c))
        snprintf(msg, sizeof msg, "unexpected character '%c'", c);
      else
        snprintf(msg, sizeof msg, "unexpected byte 0x%02x", c);
      s = lex_error(lx.line, lx.col, msg);
      break;
    }
  }
  if (s == OL_OK) s = push(&lx, OL_TOK_EOF, 0);
  if (s != OL_OK) {
    free(lx.tokens);
    return s;
  }
  out->tokens = lx.tokens;
  out->count = lx.count;
  return OL_OK;
}

void ol_text_tokens_free(ol_token_list *list) {
  if (!list) return;
  free(list->tokens);
  list->tokens = NULL;
  list->count = 0;
}

void ol_text_describe_token(const ol_token *t, char *buf, size_t size) {
  int n = t->len > 32 ? 32 : (int)t->len;
  const char *more = t->len > 32 ? "..." : "";
  switch (t->kind) {
    case OL_TOK_EOF: snprintf(buf, size, "end of input"); break;
    case OL_TOK_IDENT: snprintf(buf, size, "identifier '%.*s%s'", n, t->start, more); break;
    case OL_TOK_STRING: snprintf(buf, size, "string %.*s%s", n, t->start, more); break;
    case OL_TOK_NUMBER: snprintf(buf, size, "number %.*s%s", n, t->start, more); break;
    case OL_TOK_ARROW: snprintf(buf, size, "'=>'"); break;
    case OL_TOK_PUNCT: snprintf(buf, size, "'%c'", t->punct); break;
  }
}
