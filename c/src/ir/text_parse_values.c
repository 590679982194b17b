/* ONNX text syntax parser, the leaves: errors, scalar values, types and
 * tensor literals (see text_parser.h). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/grow.h"
#include "ir/text_parser.h"

/* ------------------------------------------------------------ errors */

bool ol_tp_fail_at(parser *p, const ol_token *t, const char *fmt, ...) {
  if (p->failed) return false;
  p->failed = true;
  p->status = OL_INVALID_MODEL;
  char msg[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  ol_error(OL_INVALID_MODEL, "line %d, column %d: %s", t->line, t->col, msg);
  return false;
}

bool ol_tp_oom(parser *p) {
  if (!p->failed) {
    p->failed = true;
    p->status = OL_OUT_OF_MEMORY;
    ol_error(OL_OUT_OF_MEMORY, "text parser: out of memory");
  }
  return false;
}

/* "expected WHAT, found TOKEN" at the current token. */
bool ol_tp_expected(parser *p, const char *what) {
  char found[64];
  ol_text_describe_token(cur(p), found, sizeof found);
  return ol_tp_fail_at(p, cur(p), "expected %s, found %s", what, found);
}

/* ------------------------------------------------------------ tokens -> values */

/* Identifier or quoted string as a NUL-terminated name. */
char *ol_tp_take_id(parser *p, const char *what) {
  const ol_token *t = cur(p);
  char *s = NULL;
  if (t->kind == OL_TOK_IDENT) {
    s = malloc(t->len + 1);
    if (!s) return ol_tp_oom(p), NULL;
    memcpy(s, t->start, t->len);
    s[t->len] = 0;
  } else if (t->kind == OL_TOK_STRING) {
    size_t len;
    s = ol_text_unescape(t, &len);
    if (!s) return ol_tp_oom(p), NULL;
    if (strlen(s) != len) {
      free(s);
      ol_tp_fail_at(p, t, "%s cannot contain a NUL byte", what);
      return NULL;
    }
  } else {
    ol_tp_expected(p, what);
    return NULL;
  }
  next(p);
  return s;
}

bool ol_tp_take_string(parser *p, const char *what, char **out) {
  if (cur(p)->kind != OL_TOK_STRING) return ol_tp_expected(p, what);
  size_t len;
  char *s = ol_text_unescape(cur(p), &len);
  if (!s) return ol_tp_oom(p);
  if (strlen(s) != len) {
    free(s);
    return ol_tp_fail_at(p, cur(p), "%s cannot contain a NUL byte", what);
  }
  next(p);
  *out = s;
  return true;
}

bool ol_tp_take_bytes(parser *p, ProtobufCBinaryData *out) {
  size_t len;
  char *s = ol_text_unescape(cur(p), &len);
  if (!s) return ol_tp_oom(p);
  next(p);
  out->data = (uint8_t *)s;
  out->len = len;
  return true;
}

/* Copies a NUMBER token into buf (NUL-terminated); false when too long. */
static bool number_text(parser *p, const ol_token *t, char *buf, size_t size) {
  if (t->len >= size) return ol_tp_fail_at(p, t, "number is too long");
  memcpy(buf, t->start, t->len);
  buf[t->len] = 0;
  return true;
}

bool ol_tp_take_int(parser *p, const char *what, int64_t lo, int64_t hi, int64_t *out) {
  const ol_token *t = cur(p);
  if (t->kind != OL_TOK_NUMBER || t->is_float) return ol_tp_expected(p, what);
  char buf[64];
  if (!number_text(p, t, buf, sizeof buf)) return false;
  errno = 0;
  long long v = strtoll(buf, NULL, 10);
  if (errno == ERANGE || v < lo || v > hi)
    return ol_tp_fail_at(p, t, "integer %s is out of range [%lld, %lld]", buf, (long long)lo,
                         (long long)hi);
  next(p);
  *out = v;
  return true;
}

static bool take_uint64(parser *p, const char *what, uint64_t *out) {
  const ol_token *t = cur(p);
  if (t->kind != OL_TOK_NUMBER || t->is_float) return ol_tp_expected(p, what);
  char buf[64];
  if (!number_text(p, t, buf, sizeof buf)) return false;
  errno = 0;
  unsigned long long v = strtoull(buf, NULL, 10);
  if (errno == ERANGE || buf[0] == '-')
    return ol_tp_fail_at(p, t, "integer %s is out of range for an unsigned 64-bit value", buf);
  next(p);
  *out = v;
  return true;
}

bool ol_tp_take_double(parser *p, const char *what, bool single, double *out) {
  const ol_token *t = cur(p);
  if (!at_float(p)) return ol_tp_expected(p, what);
  char buf[512];
  if (!number_text(p, t, buf, sizeof buf)) return false;
  const char *w = buf;
  bool neg = false;
  if (*w == '-' || *w == '+') neg = *w++ == '-';
  if (w[0] == 'n' || w[0] == 'N')
    *out = neg ? -(double)NAN : (double)NAN;
  else if (w[0] == 'i' || w[0] == 'I')
    *out = neg ? -(double)INFINITY : (double)INFINITY;
  else if (single)
    *out = strtof(buf, NULL); /* one rounding, straight to float */
  else
    *out = strtod(buf, NULL);
  next(p);
  return true;
}

/* ------------------------------------------------------------ types */

static bool parse_dims(parser *p, Onnx__TensorShapeProto *shape) {
  do {
    Onnx__TensorShapeProto__Dimension *d = ADD(p, shape->dim, shape->n_dim, new_dim);
    if (!d) return false;
    const ol_token *t = cur(p);
    if (accept(p, '?')) continue;
    if (t->kind == OL_TOK_IDENT || t->kind == OL_TOK_STRING) {
      d->dim_param = ol_tp_take_id(p, "a dimension");
      if (!d->dim_param) return false;
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
    } else {
      int64_t v;
      if (!ol_tp_take_int(p, "a dimension (number, name or '?')", INT64_MIN, INT64_MAX, &v))
        return false;
      d->dim_value = v;
      d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    }
  } while (accept(p, ','));
  return expect(p, ']', "',' or ']' in the dimension list");
}

/* elem-type ['[' dims? ']']: no brackets = scalar, '[]' = unknown rank. */
static bool parse_elem_shape(parser *p, int32_t *elem_type, protobuf_c_boolean *has_elem,
                             Onnx__TensorShapeProto **shape) {
  int dtype = ol_text_dtype_from_name(cur(p)->start, cur(p)->len);
  if (!dtype || cur(p)->kind != OL_TOK_IDENT)
    return ol_tp_expected(p, "an element type (float, int64, ...)");
  next(p);
  *has_elem = 1;
  *elem_type = dtype;
  if (accept(p, '[')) {
    if (accept(p, ']')) return true;
    if (!(*shape = new_shape(p))) return false;
    return parse_dims(p, *shape);
  }
  return (*shape = new_shape(p)) != NULL;
}

/* opaque '(' [name | domain ',' name] ')', names as strings or dotted ids. */
static bool parse_opaque_part(parser *p, char **out) {
  if (cur(p)->kind == OL_TOK_STRING) return ol_tp_take_string(p, "a name", out);
  char buf[512];
  size_t n = 0;
  do {
    const ol_token *t = cur(p);
    if (t->kind != OL_TOK_IDENT) return ol_tp_expected(p, "an opaque type name");
    if (n + t->len + 2 > sizeof buf) return ol_tp_fail_at(p, t, "opaque type name is too long");
    if (n) buf[n++] = '.';
    memcpy(buf + n, t->start, t->len);
    n += t->len;
    next(p);
  } while (accept(p, '.'));
  buf[n] = 0;
  return (*out = ol_strdup(buf)) != NULL || ol_tp_oom(p);
}

static bool parse_type_inner(parser *p, Onnx__TypeProto *tp) {
  const ol_token *t = cur(p);
  if (t->kind != OL_TOK_IDENT) return ol_tp_expected(p, "a type");
  if (ol_text_dtype_from_name(t->start, t->len)) {
    if (!(tp->tensor_type = new_ttype(p))) return false;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    return parse_elem_shape(p, &tp->tensor_type->elem_type, &tp->tensor_type->has_elem_type,
                            &tp->tensor_type->shape);
  }
  next(p);
  if (!expect(p, '(', "'(' after the type name")) return false;
  if (is_word(t, "seq")) {
    if (!(tp->sequence_type = new_seq(p))) return false;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
    if (!(tp->sequence_type->elem_type = new_type(p))) return false;
    if (!ol_tp_parse_type(p, tp->sequence_type->elem_type)) return false;
  } else if (is_word(t, "optional")) {
    if (!(tp->optional_type = new_opt(p))) return false;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE;
    if (!(tp->optional_type->elem_type = new_type(p))) return false;
    if (!ol_tp_parse_type(p, tp->optional_type->elem_type)) return false;
  } else if (is_word(t, "map")) {
    if (!(tp->map_type = new_map(p))) return false;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
    int key =
        cur(p)->kind == OL_TOK_IDENT ? ol_text_dtype_from_name(cur(p)->start, cur(p)->len) : 0;
    if (!key) return ol_tp_expected(p, "a map key type (int64, string, ...)");
    next(p);
    tp->map_type->has_key_type = 1;
    tp->map_type->key_type = key;
    if (!expect(p, ',', "',' after the map key type")) return false;
    if (!(tp->map_type->value_type = new_type(p))) return false;
    if (!ol_tp_parse_type(p, tp->map_type->value_type)) return false;
  } else if (is_word(t, "sparse_tensor")) {
    if (!(tp->sparse_tensor_type = new_stype(p))) return false;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE;
    Onnx__TypeProto__SparseTensor *st = tp->sparse_tensor_type;
    if (!parse_elem_shape(p, &st->elem_type, &st->has_elem_type, &st->shape)) return false;
  } else if (is_word(t, "opaque")) {
    if (!(tp->opaque_type = new_opaque(p))) return false;
    tp->value_case = ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE;
    if (!at(p, ')')) {
      char *first = NULL;
      if (!parse_opaque_part(p, &first)) return false;
      if (accept(p, ',')) {
        tp->opaque_type->domain = first;
        if (!parse_opaque_part(p, &tp->opaque_type->name)) return false;
      } else {
        tp->opaque_type->name = first;
      }
    }
  } else {
    return ol_tp_fail_at(p, t, "unknown type '%.*s'", (int)t->len, t->start);
  }
  return expect(p, ')', "')' to close the type");
}

bool ol_tp_parse_type(parser *p, Onnx__TypeProto *tp) {
  if (++p->type_depth > OL_MAX_TYPE_DEPTH)
    return ol_tp_fail_at(p, cur(p), "types are nested deeper than %d levels", OL_MAX_TYPE_DEPTH);
  bool ok = parse_type_inner(p, tp);
  p->type_depth--;
  return ok;
}

/* ------------------------------------------------------------ tensors */

typedef struct bytebuf {
  uint8_t *data;
  size_t len, cap;
} bytebuf;

static bool bb_put(parser *p, bytebuf *b, const void *src, size_t n) {
  if (!ol_grow(&b->data, &b->cap, b->len, n, 1, 64)) return ol_tp_oom(p);
  memcpy(b->data + b->len, src, n);
  b->len += n;
  return true;
}

/* One element of a numeric tensor literal, stored little-endian in b (one
 * byte per element for the 4- and 2-bit types, packed afterwards). */
static bool parse_element(parser *p, int dtype, bytebuf *b) {
  const char *what = "a tensor value";
  int64_t i;
  uint64_t u = 0;
  double d;
  switch (dtype) {
    case OL_DTYPE_FLOAT:
    case OL_DTYPE_COMPLEX64: {
      if (!ol_tp_take_double(p, what, true, &d)) return false;
      float f = (float)d;
      return bb_put(p, b, &f, 4);
    }
    case OL_DTYPE_DOUBLE:
    case OL_DTYPE_COMPLEX128: return ol_tp_take_double(p, what, false, &d) && bb_put(p, b, &d, 8);
    case OL_DTYPE_FLOAT16:
    case OL_DTYPE_BFLOAT16: {
      if (!ol_tp_take_double(p, what, true, &d)) return false;
      uint16_t h = dtype == OL_DTYPE_FLOAT16 ? ol_f32_to_f16((float)d) : ol_f32_to_bf16((float)d);
      return bb_put(p, b, &h, 2);
    }
    case OL_DTYPE_FLOAT8E4M3FN:
    case OL_DTYPE_FLOAT8E4M3FNUZ:
    case OL_DTYPE_FLOAT8E5M2:
    case OL_DTYPE_FLOAT8E5M2FNUZ:
    case OL_DTYPE_FLOAT8E8M0:
    case OL_DTYPE_FLOAT4E2M1: {
      if (!ol_tp_take_double(p, what, true, &d)) return false;
      uint8_t c = ol_f32_to_minifloat((ol_dtype)dtype, (float)d, false);
      /* -nan keeps its sign where the format has signed NaNs */
      if (isnan(d) && signbit(d) && (dtype == OL_DTYPE_FLOAT8E4M3FN || dtype == OL_DTYPE_FLOAT8E5M2))
        c |= 0x80;
      return bb_put(p, b, &c, 1);
    }
    case OL_DTYPE_BOOL: {
      uint8_t v;
      if (is_word(cur(p), "true") || is_word(cur(p), "false")) {
        v = is_word(cur(p), "true");
        next(p);
      } else {
        if (!ol_tp_take_int(p, "a bool value (0, 1, true or false)", 0, 1, &i)) return false;
        v = (uint8_t)i;
      }
      return bb_put(p, b, &v, 1);
    }
    case OL_DTYPE_INT8:
    case OL_DTYPE_INT4:
    case OL_DTYPE_INT2: {
      int64_t lo = dtype == OL_DTYPE_INT8 ? -128 : dtype == OL_DTYPE_INT4 ? -8 : -2;
      if (!ol_tp_take_int(p, what, lo, -lo - 1, &i)) return false;
      int8_t v = (int8_t)i;
      return bb_put(p, b, &v, 1);
    }
    case OL_DTYPE_UINT8:
    case OL_DTYPE_UINT4:
    case OL_DTYPE_UINT2: {
      int64_t hi = dtype == OL_DTYPE_UINT8 ? 255 : dtype == OL_DTYPE_UINT4 ? 15 : 3;
      if (!ol_tp_take_int(p, what, 0, hi, &i)) return false;
      uint8_t v = (uint8_t)i;
      return bb_put(p, b, &v, 1);
    }
    case OL_DTYPE_INT16: {
      if (!ol_tp_take_int(p, what, INT16_MIN, INT16_MAX, &i)) return false;
      int16_t v = (int16_t)i;
      return bb_put(p, b, &v, 2);
    }
    case OL_DTYPE_UINT16: {
      if (!ol_tp_take_int(p, what, 0, UINT16_MAX, &i)) return false;
      uint16_t v = (uint16_t)i;
      return bb_put(p, b, &v, 2);
    }
    case OL_DTYPE_INT32: {
      if (!ol_tp_take_int(p, what, INT32_MIN, INT32_MAX, &i)) return false;
      int32_t v = (int32_t)i;
      return bb_put(p, b, &v, 4);
    }
    case OL_DTYPE_UINT32: {
      if (!ol_tp_take_int(p, what, 0, UINT32_MAX, &i)) return false;
      uint32_t v = (uint32_t)i;
      return bb_put(p, b, &v, 4);
    }
    case OL_DTYPE_INT64:
      return ol_tp_take_int(p, what, INT64_MIN, INT64_MAX, &i) && bb_put(p, b, &i, 8);
    case OL_DTYPE_UINT64: return take_uint64(p, what, &u) && bb_put(p, b, &u, 8);
    default:
      return ol_tp_fail_at(p, cur(p), "tensor literals of element type %d are not supported",
                           dtype);
  }
}

static bool is_sub_byte(int dtype) {
  return dtype == OL_DTYPE_INT4 || dtype == OL_DTYPE_UINT4 || dtype == OL_DTYPE_FLOAT4E2M1 ||
         dtype == OL_DTYPE_INT2 || dtype == OL_DTYPE_UINT2;
}

/* '{' values '}' into raw_data (string_data for strings). */
static bool parse_tensor_values(parser *p, Onnx__TensorProto *t, int64_t count) {
  if (!expect(p, '{', "'{' to start the tensor values")) return false;
  int dtype = t->data_type;
  bool complex = dtype == OL_DTYPE_COMPLEX64 || dtype == OL_DTYPE_COMPLEX128;
  uint64_t want = (uint64_t)count * (complex ? 2u : 1u), got = 0;
  bytebuf b = {0};
  bool ok = true;
  if (!at(p, '}')) {
    do {
      if (got == want) {
        ok = ol_tp_fail_at(p, cur(p), "too many values: the tensor has %llu element%s",
                           (unsigned long long)count, count == 1 ? "" : "s");
        break;
      }
      if (dtype == OL_DTYPE_STRING) {
        if (cur(p)->kind != OL_TOK_STRING) {
          ok = ol_tp_expected(p, "a string value");
          break;
        }
        ok = GROW(p, t->string_data, t->n_string_data) &&
             ol_tp_take_bytes(p, &t->string_data[t->n_string_data]);
        if (ok) t->n_string_data++;
      } else {
        ok = parse_element(p, dtype, &b);
      }
      got++;
    } while (ok && accept(p, ','));
  }
  if (ok && got != want)
    ok = ol_tp_fail_at(p, cur(p), "the tensor has %llu element%s but %llu value%s were given",
                       (unsigned long long)count, count == 1 ? "" : "s", (unsigned long long)got,
                       got == 1 ? "" : "s");
  if (ok) ok = expect(p, '}', "',' or '}' in the tensor values");
  if (ok && dtype != OL_DTYPE_STRING) {
    size_t bytes = ol_dtype_storage_bytes((ol_dtype)dtype, count);
    uint8_t *raw = malloc(bytes ? bytes : 1);
    if (!raw) {
      ok = ol_tp_oom(p);
    } else if (is_sub_byte(dtype)) {
      memset(raw, 0, bytes ? bytes : 1);
      for (int64_t i = 0; i < count; i++)
        ol_packed_set(
            (ol_dtype)dtype, raw, i,
            dtype == OL_DTYPE_INT4 || dtype == OL_DTYPE_INT2 ? (int8_t)b.data[i] : b.data[i]);
    } else if (bytes) {
      memcpy(raw, b.data, bytes);
    }
    if (ok) {
      t->has_raw_data = 1;
      t->raw_data.data = raw;
      t->raw_data.len = bytes;
    }
  }
  free(b.data);
  return ok;
}

/* '[' "key": "value", ... ']' */
bool ol_tp_parse_entries(parser *p, Onnx__StringStringEntryProto ***list, size_t *n) {
  if (!expect(p, '[', "'['")) return false;
  if (accept(p, ']')) return true;
  do {
    Onnx__StringStringEntryProto *e = ADD(p, *list, *n, new_entry);
    if (!e) return false;
    if (!ol_tp_take_string(p, "a quoted key", &e->key)) return false;
    if (!expect(p, ':', "':' after the key")) return false;
    if (!ol_tp_take_string(p, "a quoted value", &e->value)) return false;
  } while (accept(p, ','));
  return expect(p, ']', "',' or ']' in the key/value list");
}

/* Tensor data for the given type: '{' values '}' or '[' external entries ']'. */
bool ol_tp_parse_tensor_data(parser *p, Onnx__TensorProto *t, const Onnx__TypeProto *type,
                             const ol_token *where) {
  if (type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE || !type->tensor_type->shape)
    return ol_tp_fail_at(p, where,
                         "a tensor value needs a tensor type with a shape (float[2], int64, ...)");
  const Onnx__TypeProto__Tensor *tt = type->tensor_type;
  t->has_data_type = 1;
  t->data_type = tt->elem_type;
  if (!(t->dims = malloc(sizeof(int64_t) * (tt->shape->n_dim + 1)))) return ol_tp_oom(p);
  int64_t count = 1;
  for (size_t i = 0; i < tt->shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = tt->shape->dim[i];
    if (d->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE || d->dim_value < 0)
      return ol_tp_fail_at(p, where, "a tensor value needs numeric dimensions");
    if (d->dim_value && count > (INT64_C(1) << 40) / d->dim_value)
      return ol_tp_fail_at(p, where, "the tensor is too large for a text literal");
    count *= d->dim_value;
    t->dims[t->n_dims++] = d->dim_value;
  }
  if (at(p, '[')) {
    t->has_data_location = 1;
    t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
    return ol_tp_parse_entries(p, &t->external_data, &t->n_external_data);
  }
  return parse_tensor_values(p, t, count);
}

/* sparse_tensor(T[dims]) '{' indices-tensor ',' values-tensor '}' */
bool ol_tp_parse_sparse_value(parser *p, Onnx__SparseTensorProto *sp, const Onnx__TypeProto *type) {
  const Onnx__TypeProto__SparseTensor *st = type->sparse_tensor_type;
  if (!st->shape) return ol_tp_expected(p, "a sparse tensor type with a shape");
  if (!(sp->dims = malloc(sizeof(int64_t) * (st->shape->n_dim + 1)))) return ol_tp_oom(p);
  for (size_t i = 0; i < st->shape->n_dim; i++) {
    if (st->shape->dim[i]->value_case != ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      return ol_tp_fail_at(p, cur(p), "a sparse tensor value needs numeric dimensions");
    sp->dims[sp->n_dims++] = st->shape->dim[i]->dim_value;
  }
  if (!expect(p, '{', "'{' to start the sparse tensor (indices, values)")) return false;
  if (!(sp->indices = new_tensor(p)) || !ol_tp_parse_tensor_literal(p, sp->indices)) return false;
  if (!expect(p, ',', "',' between the sparse indices and values")) return false;
  if (!(sp->values = new_tensor(p)) || !ol_tp_parse_tensor_literal(p, sp->values)) return false;
  if (sp->values->data_type != st->elem_type)
    return ol_tp_fail_at(p, cur(p),
                         "sparse values must have the element type of the sparse tensor");
  return expect(p, '}', "'}' to close the sparse tensor");
}

/* type [name] ['='] data */
bool ol_tp_parse_tensor_literal(parser *p, Onnx__TensorProto *t) {
  const ol_token *where = cur(p);
  Onnx__TypeProto *type = new_type(p);
  if (!type) return false;
  bool ok = ol_tp_parse_type(p, type);
  if (ok && (cur(p)->kind == OL_TOK_IDENT || cur(p)->kind == OL_TOK_STRING))
    ok = set_opt_str(&t->name, ol_tp_take_id(p, "a tensor name"));
  if (ok) accept(p, '=');
  if (ok) ok = ol_tp_parse_tensor_data(p, t, type, where);
  onnx__type_proto__free_unpacked(type, NULL);
  return ok;
}
