/* ModelProto -> ONNX text syntax (the inverse of text_parse.c).
 *
 * Everything the parser reads back is printed: the model header, graphs with
 * inputs/outputs/value infos/initializers, nodes with every attribute kind
 * (nested graphs included), and model-local functions. Floats print with
 * %.9g and doubles with %.17g so values survive the round trip; nan and inf
 * print as words. Not representable (dropped): doc strings of graphs, nodes,
 * attributes, values and tensors; metadata_props below the model; dimension
 * and type denotations; quantization annotations; training info.
 * Refused with an error naming them instead (they cannot be dropped without
 * changing what the model computes): shared quantization parameters,
 * encoded (structured) initializers, persistent bindings and paged cache
 * initializers. */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/grow.h"
#include "core/status.h"
#include "ir/model.h"
#include "ir/text.h"

typedef struct printer {
  char *buf;
  size_t len, cap;
  ol_status status; /* first failure */
  ol_proto_owner *owner; /* the model's: knows which payloads are packed (may be NULL) */
} printer;

/* AT(INT), AT(FLOATS), ...: AttributeProto.AttributeType values */
#define AT(x) ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##x

/* ------------------------------------------------------------ output */

static void fail(printer *pr, ol_status s) {
  if (pr->status == OL_OK) pr->status = s;
}

static void put(printer *pr, const char *s, size_t n) {
  if (pr->status != OL_OK) return;
  if (!ol_grow(&pr->buf, &pr->cap, pr->len, n + 1, 1, 1024)) { /* + 1: the terminating NUL */
    fail(pr, ol_error(OL_OUT_OF_MEMORY, "text printer: out of memory"));
    return;
  }
  memcpy(pr->buf + pr->len, s, n);
  pr->len += n;
  pr->buf[pr->len] = 0;
}

static void puts_(printer *pr, const char *s) { put(pr, s, strlen(s)); }

static void printf_(printer *pr, const char *fmt, ...) OL_PRINTF(2, 3);
static void printf_(printer *pr, const char *fmt, ...) {
  char small[128];
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(small, sizeof small, fmt, ap);
  va_end(ap);
  if (n < 0) return;
  if ((size_t)n < sizeof small) {
    put(pr, small, (size_t)n);
    return;
  }
  char *big = malloc((size_t)n + 1);
  if (!big) {
    fail(pr, ol_error(OL_OUT_OF_MEMORY, "text printer: out of memory"));
    return;
  }
  va_start(ap, fmt);
  vsnprintf(big, (size_t)n + 1, fmt, ap);
  va_end(ap);
  put(pr, big, (size_t)n);
  free(big);
}

static void indent(printer *pr, int level) {
  for (int i = 0; i < level; i++) put(pr, "  ", 2);
}

static void quoted(printer *pr, const void *data, size_t len) {
  const unsigned char *s = data;
  put(pr, "\"", 1);
  size_t run = 0; /* plain bytes waiting to be copied */
  for (size_t i = 0; i < len; i++) {
    unsigned char c = s[i];
    const char *esc = NULL;
    char hex[8];
    if (c == '"')
      esc = "\\\"";
    else if (c == '\\')
      esc = "\\\\";
    else if (c == '\n')
      esc = "\\n";
    else if (c == '\t')
      esc = "\\t";
    else if (c == '\r')
      esc = "\\r";
    else if (c < 0x20 || c == 0x7f) {
      snprintf(hex, sizeof hex, "\\x%02x", c);
      esc = hex;
    }
    if (!esc) {
      run++;
      continue;
    }
    if (run) put(pr, (const char *)s + i - run, run);
    run = 0;
    puts_(pr, esc);
  }
  if (run) put(pr, (const char *)s + len - run, run);
  put(pr, "\"", 1);
}

static void qstr(printer *pr, const char *s) { quoted(pr, s ? s : "", s ? strlen(s) : 0); }

/* A name: bare when it is a plain identifier, quoted otherwise. */
static void id(printer *pr, const char *s) {
  if (ol_text_is_plain_id(s))
    puts_(pr, s);
  else
    qstr(pr, s);
}

static bool is_ident(const char *s) {
  if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || *s == '_')) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
          *s == '_'))
      return false;
  return true;
}

/* %.9g (float) / %.17g (double); nan and inf as words; force_point makes an
 * integral value look like a float ("2.0") for untyped attribute values. */
static void number(printer *pr, double v, bool single, bool force_point) {
  if (isnan(v)) {
    puts_(pr, signbit(v) ? "-nan" : "nan");
    return;
  }
  if (isinf(v)) {
    puts_(pr, v < 0 ? "-inf" : "inf");
    return;
  }
  char buf[40];
  snprintf(buf, sizeof buf, single ? "%.9g" : "%.17g", v);
  puts_(pr, buf);
  if (force_point && !strpbrk(buf, ".e")) puts_(pr, ".0");
}

static void dtype_name(printer *pr, int dtype) {
  const char *n = ol_text_dtype_name(dtype);
  if (!n) {
    fail(pr, ol_error(OL_NOT_IMPLEMENTED,
                      "text printer: element type %d has no name in the text syntax", dtype));
    return;
  }
  puts_(pr, n);
}

/* ------------------------------------------------------------ types */

static void print_type(printer *pr, const Onnx__TypeProto *tp);

static void print_shape(printer *pr, const Onnx__TensorShapeProto *shape) {
  if (!shape) {
    puts_(pr, "[]");
    return;
  }
  if (shape->n_dim == 0) return; /* scalar */
  put(pr, "[", 1);
  for (size_t i = 0; i < shape->n_dim; i++) {
    const Onnx__TensorShapeProto__Dimension *d = shape->dim[i];
    if (i) put(pr, ",", 1);
    if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE)
      printf_(pr, "%lld", (long long)d->dim_value);
    else if (d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM)
      id(pr, d->dim_param);
    else
      put(pr, "?", 1);
  }
  put(pr, "]", 1);
}

static void print_type(printer *pr, const Onnx__TypeProto *tp) {
  switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE:
      dtype_name(pr, tp->tensor_type->elem_type);
      print_shape(pr, tp->tensor_type->shape);
      return;
    case ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE:
      puts_(pr, "sparse_tensor(");
      dtype_name(pr, tp->sparse_tensor_type->elem_type);
      print_shape(pr, tp->sparse_tensor_type->shape);
      puts_(pr, ")");
      return;
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE:
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
      bool seq = tp->value_case == ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE;
      const Onnx__TypeProto *elem =
          seq ? tp->sequence_type->elem_type : tp->optional_type->elem_type;
      if (!elem) break;
      puts_(pr, seq ? "seq(" : "optional(");
      print_type(pr, elem);
      puts_(pr, ")");
      return;
    }
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
      if (!tp->map_type->value_type) break;
      puts_(pr, "map(");
      dtype_name(pr, tp->map_type->key_type);
      puts_(pr, ", ");
      print_type(pr, tp->map_type->value_type);
      puts_(pr, ")");
      return;
    case ONNX__TYPE_PROTO__VALUE_OPAQUE_TYPE: {
      const Onnx__TypeProto__Opaque *o = tp->opaque_type;
      puts_(pr, "opaque(");
      if (o->domain && o->domain[0]) {
        qstr(pr, o->domain);
        puts_(pr, ", ");
        qstr(pr, o->name);
      } else if (o->name && o->name[0]) {
        qstr(pr, o->name);
      }
      puts_(pr, ")");
      return;
    }
    default: break;
  }
  fail(pr, ol_error(OL_NOT_IMPLEMENTED, "text printer: type proto (case %d) has no text form",
                    (int)tp->value_case));
}

/* ------------------------------------------------------------ tensors */

static void print_elements(printer *pr, const ol_tensor *t) {
  int64_t n = ol_tcount(t);
  const void *data = ol_tdata(t);
  ol_dtype dt = t->dtype;
  bool complex = dt == OL_DTYPE_COMPLEX64 || dt == OL_DTYPE_COMPLEX128;
  int64_t values = complex ? 2 * n : n;
  put(pr, "{", 1);
  for (int64_t i = 0; i < values && pr->status == OL_OK; i++) {
    if (i) put(pr, ", ", 2);
    switch (dt) {
      case OL_DTYPE_FLOAT:
      case OL_DTYPE_COMPLEX64: number(pr, ((const float *)data)[i], true, false); break;
      case OL_DTYPE_DOUBLE:
      case OL_DTYPE_COMPLEX128: number(pr, ((const double *)data)[i], false, false); break;
      case OL_DTYPE_FLOAT16:
        number(pr, ol_f16_to_f32(((const uint16_t *)data)[i]), true, false);
        break;
      case OL_DTYPE_BFLOAT16:
        number(pr, ol_bf16_to_f32(((const uint16_t *)data)[i]), true, false);
        break;
      case OL_DTYPE_FLOAT8E4M3FN:
      case OL_DTYPE_FLOAT8E4M3FNUZ:
      case OL_DTYPE_FLOAT8E5M2:
      case OL_DTYPE_FLOAT8E5M2FNUZ:
      case OL_DTYPE_FLOAT8E8M0:
      case OL_DTYPE_FLOAT4E2M1: {
        uint8_t code = dt == OL_DTYPE_FLOAT4E2M1 ? (uint8_t)(ol_packed_get(dt, data, i) & 0xF)
                                                 : ((const uint8_t *)data)[i];
        float v = ol_minifloat_to_f32(dt, code);
        /* the sign of NaN codes that have one (E4M3FN, E5M2) */
        if (isnan(v) && (code & 0x80) && (dt == OL_DTYPE_FLOAT8E4M3FN || dt == OL_DTYPE_FLOAT8E5M2))
          v = -fabsf(v);
        else if (isnan(v))
          v = fabsf(v);
        number(pr, v, true, false);
        break;
      }
      case OL_DTYPE_BOOL: printf_(pr, "%d", ((const uint8_t *)data)[i] ? 1 : 0); break;
      case OL_DTYPE_INT8: printf_(pr, "%d", ((const int8_t *)data)[i]); break;
      case OL_DTYPE_UINT8: printf_(pr, "%u", ((const uint8_t *)data)[i]); break;
      case OL_DTYPE_INT16: printf_(pr, "%d", ((const int16_t *)data)[i]); break;
      case OL_DTYPE_UINT16: printf_(pr, "%u", ((const uint16_t *)data)[i]); break;
      case OL_DTYPE_INT32: printf_(pr, "%d", ((const int32_t *)data)[i]); break;
      case OL_DTYPE_UINT32: printf_(pr, "%u", ((const uint32_t *)data)[i]); break;
      case OL_DTYPE_INT64: printf_(pr, "%lld", (long long)((const int64_t *)data)[i]); break;
      case OL_DTYPE_UINT64:
        printf_(pr, "%llu", (unsigned long long)((const uint64_t *)data)[i]);
        break;
      case OL_DTYPE_INT4:
      case OL_DTYPE_UINT4:
      case OL_DTYPE_INT2:
      case OL_DTYPE_UINT2: printf_(pr, "%d", (int)ol_packed_get(dt, data, i)); break;
      case OL_DTYPE_STRING: {
        const ol_string *s = &((const ol_string *)data)[i];
        quoted(pr, s->data ? s->data : "", s->length);
        break;
      }
      default:
        fail(pr, ol_error(OL_NOT_IMPLEMENTED, "text printer: cannot print %s tensor values",
                          ol_dtype_name(dt)));
        break;
    }
  }
  put(pr, "}", 1);
}

/* "float[2,3] name = {...}": named, with '=' for initializers (and for
 * external data, which needs it to be unambiguous). */
static void print_tensor(printer *pr, const Onnx__TensorProto *tp, bool with_name,
                         bool initializer) {
  dtype_name(pr, tp->data_type);
  if (tp->n_dims) {
    put(pr, "[", 1);
    for (size_t i = 0; i < tp->n_dims; i++)
      printf_(pr, i ? ",%lld" : "%lld", (long long)tp->dims[i]);
    put(pr, "]", 1);
  }
  /* an initializer always has its name (the parser requires one: "" if empty) */
  if (with_name && tp->name && (tp->name[0] || initializer)) {
    put(pr, " ", 1);
    id(pr, tp->name);
  }
  bool external =
      tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
  puts_(pr, initializer || external ? " = " : " ");
  if (external) {
    put(pr, "[", 1);
    for (size_t i = 0; i < tp->n_external_data; i++) {
      if (i) put(pr, ", ", 2);
      qstr(pr, tp->external_data[i]->key);
      put(pr, ": ", 2);
      qstr(pr, tp->external_data[i]->value);
    }
    put(pr, "]", 1);
    return;
  }
  if (pr->status != OL_OK) return;
  ol_value *v = NULL;
  /* through the owner, packed weights come back with their layout (densified here) */
  ol_tensor_source src = {NULL, pr->owner};
  ol_status s = ol_tensor_from_proto(tp, &src, &v);
  if (s == OL_OK) s = ol_value_densify(NULL, &v);
  if (s != OL_OK) {
    ol_value_release(v);
    fail(pr, ol_error_wrap(s, "text printer"));
    return;
  }
  print_elements(pr, &v->tensor);
  ol_value_release(v);
}

static void print_tensor_type_and_literal(printer *pr, const Onnx__SparseTensorProto *sp) {
  if (!sp->values || !sp->indices) {
    fail(pr, ol_error(OL_NOT_IMPLEMENTED, "text printer: sparse tensor without values or indices"));
    return;
  }
  puts_(pr, "sparse_tensor(");
  dtype_name(pr, sp->values->data_type);
  if (sp->n_dims) {
    put(pr, "[", 1);
    for (size_t i = 0; i < sp->n_dims; i++)
      printf_(pr, i ? ",%lld" : "%lld", (long long)sp->dims[i]);
    put(pr, "]", 1);
  }
  puts_(pr, ") {");
  print_tensor(pr, sp->indices, true, false);
  puts_(pr, ", ");
  print_tensor(pr, sp->values, true, false);
  puts_(pr, "}");
}

/* ------------------------------------------------------------ graphs */

static void print_graph(printer *pr, const Onnx__GraphProto *g, int level);

static void print_value_info(printer *pr, const Onnx__ValueInfoProto *vi) {
  if (vi->type) {
    print_type(pr, vi->type);
    put(pr, " ", 1);
  }
  id(pr, vi->name ? vi->name : "");
}

static void print_vi_list(printer *pr, Onnx__ValueInfoProto *const *vis, size_t n) {
  put(pr, "(", 1);
  for (size_t i = 0; i < n; i++) {
    if (i) put(pr, ", ", 2);
    print_value_info(pr, vis[i]);
  }
  put(pr, ")", 1);
}

static int attr_type(const Onnx__AttributeProto *a) {
  if (a->has_type && a->type) return a->type;
  /* IR < 3 models may omit the type: infer it from the field that is set */
  if (a->has_f) return AT(FLOAT);
  if (a->has_i) return AT(INT);
  if (a->has_s) return AT(STRING);
  if (a->t) return AT(TENSOR);
  if (a->g) return AT(GRAPH);
  if (a->sparse_tensor) return AT(SPARSE_TENSOR);
  if (a->tp) return AT(TYPE_PROTO);
  if (a->n_floats) return AT(FLOATS);
  if (a->n_ints) return AT(INTS);
  if (a->n_strings) return AT(STRINGS);
  if (a->n_tensors) return AT(TENSORS);
  if (a->n_graphs) return AT(GRAPHS);
  if (a->n_sparse_tensors) return AT(SPARSE_TENSORS);
  if (a->n_type_protos) return AT(TYPE_PROTOS);
  return 0;
}

static size_t list_count(const Onnx__AttributeProto *a, int type) {
  switch (type) {
    case AT(FLOATS): return a->n_floats;
    case AT(INTS): return a->n_ints;
    case AT(STRINGS): return a->n_strings;
    case AT(TENSORS): return a->n_tensors;
    case AT(GRAPHS): return a->n_graphs;
    case AT(SPARSE_TENSORS): return a->n_sparse_tensors;
    case AT(TYPE_PROTOS): return a->n_type_protos;
    default: return (size_t)-1; /* not a list */
  }
}

/* One attribute: "name = value", with ": type" where the value alone does not
 * tell the type (empty lists, references). level: indentation of nested graphs. */
static void print_attr(printer *pr, const Onnx__AttributeProto *a, int level) {
  int type = attr_type(a);
  id(pr, a->name ? a->name : "");
  const char *tname = ol_text_attr_type_name(type);
  if (a->ref_attr_name && a->ref_attr_name[0]) {
    if (a->has_type && tname) printf_(pr, ": %s", tname);
    puts_(pr, " = @");
    id(pr, a->ref_attr_name);
    return;
  }
  if (!tname) {
    fail(pr, ol_error(OL_NOT_IMPLEMENTED, "text printer: attribute '%s' has no value",
                      a->name ? a->name : ""));
    return;
  }
  size_t n = list_count(a, type);
  if (n == 0) printf_(pr, ": %s", tname);
  puts_(pr, " = ");
  if (n != (size_t)-1) put(pr, "[", 1);
  for (size_t i = 0; i < (n == (size_t)-1 ? 1 : n); i++) {
    if (i) put(pr, ", ", 2);
    switch (type) {
      case AT(FLOAT): number(pr, a->f, true, true); break;
      case AT(INT): printf_(pr, "%lld", (long long)a->i); break;
      case AT(STRING): quoted(pr, a->s.data, a->s.len); break;
      case AT(TENSOR):
        if (a->t)
          print_tensor(pr, a->t, true, false);
        else
          fail(pr,
               ol_error(OL_INVALID_MODEL, "text printer: tensor attribute '%s' is empty", a->name));
        break;
      case AT(GRAPH):
        if (a->g)
          print_graph(pr, a->g, level);
        else
          fail(pr,
               ol_error(OL_INVALID_MODEL, "text printer: graph attribute '%s' is empty", a->name));
        break;
      case AT(SPARSE_TENSOR):
        if (a->sparse_tensor)
          print_tensor_type_and_literal(pr, a->sparse_tensor);
        else
          fail(pr,
               ol_error(OL_INVALID_MODEL, "text printer: sparse attribute '%s' is empty", a->name));
        break;
      case AT(TYPE_PROTO):
        if (a->tp)
          print_type(pr, a->tp);
        else
          fail(pr,
               ol_error(OL_INVALID_MODEL, "text printer: type attribute '%s' is empty", a->name));
        break;
      case AT(FLOATS): number(pr, a->floats[i], true, true); break;
      case AT(INTS): printf_(pr, "%lld", (long long)a->ints[i]); break;
      case AT(STRINGS): quoted(pr, a->strings[i].data, a->strings[i].len); break;
      case AT(TENSORS): print_tensor(pr, a->tensors[i], true, false); break;
      case AT(GRAPHS): print_graph(pr, a->graphs[i], level); break;
      case AT(SPARSE_TENSORS): print_tensor_type_and_literal(pr, a->sparse_tensors[i]); break;
      case AT(TYPE_PROTOS): print_type(pr, a->type_protos[i]); break;
      default: break;
    }
  }
  if (n != (size_t)-1) put(pr, "]", 1);
}

static void print_names(printer *pr, char *const *names, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (i) put(pr, ", ", 2);
    id(pr, names[i] ? names[i] : "");
  }
}

static bool is_dotted_ident(const char *s) {
  char buf[512];
  if (strlen(s) >= sizeof buf) return false;
  strcpy(buf, s);
  for (char *part = buf, *dot;; part = dot + 1) {
    dot = strchr(part, '.');
    if (dot) *dot = 0;
    if (!is_ident(part)) return false;
    if (!dot) return true;
  }
}

static void print_node(printer *pr, const Onnx__NodeProto *n, int level) {
  indent(pr, level);
  if (n->name && n->name[0]) {
    put(pr, "[", 1);
    id(pr, n->name);
    put(pr, "] ", 2);
  }
  print_names(pr, n->output, n->n_output);
  puts_(pr, n->n_output ? " = " : "= ");
  if (n->domain && n->domain[0]) {
    if (is_dotted_ident(n->domain))
      puts_(pr, n->domain);
    else
      qstr(pr, n->domain);
    put(pr, ".", 1);
  }
  if (!is_ident(n->op_type)) {
    fail(pr, ol_error(OL_NOT_IMPLEMENTED, "text printer: op_type '%s' is not an identifier",
                      n->op_type ? n->op_type : ""));
    return;
  }
  puts_(pr, n->op_type);
  if (n->overload && n->overload[0]) {
    put(pr, ":", 1);
    id(pr, n->overload);
  }
  bool graphs = false;
  for (size_t i = 0; i < n->n_attribute; i++)
    if (n->attribute[i]->g || n->attribute[i]->n_graphs) graphs = true;
  if (n->n_attribute && !graphs) {
    puts_(pr, " <");
    for (size_t i = 0; i < n->n_attribute; i++) {
      if (i) put(pr, ", ", 2);
      print_attr(pr, n->attribute[i], level);
    }
    put(pr, ">", 1);
  }
  puts_(pr, n->n_attribute && !graphs ? " (" : "(");
  print_names(pr, n->input, n->n_input);
  put(pr, ")", 1);
  if (graphs) { /* attributes holding graphs go one per line after the inputs */
    puts_(pr, " <\n");
    for (size_t i = 0; i < n->n_attribute; i++) {
      indent(pr, level + 1);
      print_attr(pr, n->attribute[i], level + 1);
      puts_(pr, i + 1 < n->n_attribute ? ",\n" : "\n");
    }
    indent(pr, level);
    put(pr, ">", 1);
  }
  put(pr, "\n", 1);
}

static void print_nodes(printer *pr, Onnx__NodeProto *const *nodes, size_t n, int level) {
  puts_(pr, "{\n");
  for (size_t i = 0; i < n && pr->status == OL_OK; i++) print_node(pr, nodes[i], level + 1);
  indent(pr, level);
  put(pr, "}", 1);
}

/* name (inputs) => (outputs) [<initializers, value infos>] {nodes}; the
 * graph starts on a line indented by level, nodes go one level deeper. */
/* Shared quantization parameter sets cannot be dropped silently: the text
 * form would keep references (parameter_ref) without their declarations. */
static bool has_shared_quantization(const Onnx__GraphProto *g, const char **what) {
  const size_t prefix = strlen(OL_QUANT_PARAMETERS_PREFIX);
  for (size_t i = 0; i < g->n_quantization_annotation; i++) {
    const char *t = g->quantization_annotation[i]->tensor_name;
    if (t && strncmp(t, OL_QUANT_PARAMETERS_PREFIX, prefix) == 0) return *what = t, true;
  }
  for (size_t i = 0; i < g->n_encoded_initializer; i++)
    if (g->encoded_initializer[i]->parameter_ref && g->encoded_initializer[i]->parameter_ref[0])
      return *what = g->encoded_initializer[i]->name ? g->encoded_initializer[i]->name : "", true;
  return false;
}

static ol_status shared_error(const Onnx__GraphProto *g, const char *what) {
  return ol_error(OL_NOT_IMPLEMENTED,
                  "text printer: graph '%s' holds shared quantization parameters ('%s'), which the "
                  "text form cannot represent", g->name ? g->name : "", what);
}

/* Paged cache initializers have no text form either: refused by name
 * rather than dropped (the printed model would lose its cache defaults). */
static ol_status paged_error(const Onnx__GraphProto *g) {
  const char *name = g->paged_cache_initializer[0]->name;
  return ol_error(OL_NOT_IMPLEMENTED,
                  "text printer: graph '%s' holds the paged cache initializer '%s', which the text form cannot "
                  "represent (serialize the model as binary protobuf)", g->name ? g->name : "", name ? name : "");
}

/* Encoded initializers and persistent bindings have no text form: refused
 * by name (dropping them would change what the model computes). */
static ol_status extension_error(const Onnx__GraphProto *g) {
  if (g->n_encoded_initializer) {
    const char *name = g->encoded_initializer[0]->name;
    return ol_error(OL_NOT_IMPLEMENTED,
                    "text printer: graph '%s' holds the encoded initializer '%s', which the text form cannot "
                    "represent (serialize the model as binary protobuf)", g->name ? g->name : "", name ? name : "");
  }
  const Onnx__PersistentBindingProto *pb = g->persistent_bindings[0];
  return ol_error(OL_NOT_IMPLEMENTED,
                  "text printer: graph '%s' holds the persistent binding '%s' <- '%s', which the text form cannot "
                  "represent (serialize the model as binary protobuf)", g->name ? g->name : "",
                  pb->input_name ? pb->input_name : "", pb->output_name ? pb->output_name : "");
}

static void print_graph(printer *pr, const Onnx__GraphProto *g, int level) {
  const char *shared = NULL;
  if (has_shared_quantization(g, &shared)) {
    fail(pr, shared_error(g, shared));
    return;
  }
  if (g->n_paged_cache_initializer) {
    fail(pr, paged_error(g));
    return;
  }
  if (g->n_encoded_initializer || g->n_persistent_bindings) {
    fail(pr, extension_error(g));
    return;
  }
  id(pr, g->name ? g->name : "");
  put(pr, " ", 1);
  print_vi_list(pr, g->input, g->n_input);
  puts_(pr, " => ");
  print_vi_list(pr, g->output, g->n_output);
  if (g->n_initializer || g->n_value_info) {
    put(pr, "\n", 1);
    indent(pr, level + 1);
    put(pr, "<", 1);
    for (size_t i = 0; i < g->n_initializer; i++) {
      if (i) puts_(pr, ",\n"), indent(pr, level + 1), put(pr, " ", 1);
      print_tensor(pr, g->initializer[i], true, true);
    }
    for (size_t i = 0; i < g->n_value_info; i++) {
      if (i || g->n_initializer) puts_(pr, ",\n"), indent(pr, level + 1), put(pr, " ", 1);
      print_value_info(pr, g->value_info[i]);
    }
    puts_(pr, ">\n");
    indent(pr, level);
  } else {
    put(pr, " ", 1);
  }
  print_nodes(pr, g->node, g->n_node, level);
}

/* ------------------------------------------------------------ model */

static void print_opsets(printer *pr, Onnx__OperatorSetIdProto *const *ops, size_t n) {
  put(pr, "[", 1);
  for (size_t i = 0; i < n; i++) {
    if (i) put(pr, ", ", 2);
    qstr(pr, ops[i]->domain);
    printf_(pr, " : %lld", (long long)ops[i]->version);
  }
  put(pr, "]", 1);
}

static void key(printer *pr, int *count, const char *name) {
  puts_(pr, (*count)++ ? ",\n  " : "<\n  ");
  puts_(pr, name);
  puts_(pr, ": ");
}

static void end_header(printer *pr, int count) {
  if (count) puts_(pr, "\n>\n");
}

static void print_function(printer *pr, const Onnx__FunctionProto *f) {
  int k = 0;
  if (f->domain && f->domain[0]) key(pr, &k, "domain"), qstr(pr, f->domain);
  if (f->overload && f->overload[0]) key(pr, &k, "overload"), qstr(pr, f->overload);
  if (f->n_opset_import)
    key(pr, &k, "opset_import"), print_opsets(pr, f->opset_import, f->n_opset_import);
  if (f->doc_string && f->doc_string[0]) key(pr, &k, "doc_string"), qstr(pr, f->doc_string);
  end_header(pr, k);
  id(pr, f->name ? f->name : "");
  if (f->n_attribute || f->n_attribute_proto) {
    puts_(pr, " <");
    print_names(pr, f->attribute, f->n_attribute);
    for (size_t i = 0; i < f->n_attribute_proto; i++) {
      if (i || f->n_attribute) put(pr, ", ", 2);
      print_attr(pr, f->attribute_proto[i], 0);
    }
    put(pr, ">", 1);
  }
  puts_(pr, " (");
  print_names(pr, f->input, f->n_input);
  puts_(pr, ") => (");
  print_names(pr, f->output, f->n_output);
  put(pr, ")", 1);
  if (f->n_value_info) {
    puts_(pr, "\n  <");
    for (size_t i = 0; i < f->n_value_info; i++) {
      if (i) puts_(pr, ",\n   ");
      print_value_info(pr, f->value_info[i]);
    }
    puts_(pr, ">\n");
  } else {
    put(pr, " ", 1);
  }
  print_nodes(pr, f->node, f->n_node, 0);
  put(pr, "\n", 1);
}

static ol_status print_model(const Onnx__ModelProto *m, ol_proto_owner *owner, char **out_text);

ol_status ol_text_print_proto(const Onnx__ModelProto *m, char **out_text) { return print_model(m, NULL, out_text); }

static ol_status print_model(const Onnx__ModelProto *m, ol_proto_owner *owner, char **out_text) {
  *out_text = NULL;
  if (!m->graph) return ol_error(OL_INVALID_MODEL, "text printer: the model has no graph");
  const char *shared = NULL;
  if (has_shared_quantization(m->graph, &shared)) return shared_error(m->graph, shared);
  if (m->graph->n_paged_cache_initializer) return paged_error(m->graph);
  printer pr = {0};
  pr.owner = owner;
  int k = 0;
  if (m->has_ir_version) key(&pr, &k, "ir_version"), printf_(&pr, "%lld", (long long)m->ir_version);
  if (m->n_opset_import)
    key(&pr, &k, "opset_import"), print_opsets(&pr, m->opset_import, m->n_opset_import);
  if (m->producer_name && m->producer_name[0])
    key(&pr, &k, "producer_name"), qstr(&pr, m->producer_name);
  if (m->producer_version && m->producer_version[0])
    key(&pr, &k, "producer_version"), qstr(&pr, m->producer_version);
  if (m->domain && m->domain[0]) key(&pr, &k, "domain"), qstr(&pr, m->domain);
  if (m->has_model_version)
    key(&pr, &k, "model_version"), printf_(&pr, "%lld", (long long)m->model_version);
  if (m->doc_string && m->doc_string[0]) key(&pr, &k, "doc_string"), qstr(&pr, m->doc_string);
  if (m->n_metadata_props) {
    key(&pr, &k, "metadata_props");
    put(&pr, "[", 1);
    for (size_t i = 0; i < m->n_metadata_props; i++) {
      if (i) put(&pr, ", ", 2);
      qstr(&pr, m->metadata_props[i]->key);
      put(&pr, ": ", 2);
      qstr(&pr, m->metadata_props[i]->value);
    }
    put(&pr, "]", 1);
  }
  end_header(&pr, k);
  print_graph(&pr, m->graph, 0);
  put(&pr, "\n", 1);
  for (size_t i = 0; i < m->n_functions; i++) {
    put(&pr, "\n", 1);
    print_function(&pr, m->functions[i]);
  }
  if (pr.status != OL_OK) {
    free(pr.buf);
    return pr.status;
  }
  *out_text = pr.buf;
  return OL_OK;
}

ol_status ol_model_print_text(const ol_model *model, char **out_text) {
  if (!out_text) return ol_error(OL_INVALID_ARGUMENT, "ol_model_print_text: out_text is NULL");
  *out_text = NULL;
  if (!model || !model->data || !model->data->proto)
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_print_text: model is NULL");
  return print_model(model->data->proto, model->data->owner, out_text);
}
