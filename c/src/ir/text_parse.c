/* ONNX text syntax -> ModelProto (protobuf-c, malloc'd like an unpacked
 * message) -> ol_model. A recursive-descent parser over the tokens of
 * text_lex.c; grammar in onnx/onnx docs/Syntax.md, extensions in text.h.
 * This file: attributes, nodes, graphs, functions and the model; the leaves
 * (types, tensors, scalars) are in text_parse_values.c. Errors read
 * "line L, column C: expected X, found Y". */
#include <stdio.h>

#include "core/alloc.h"
#include "ir/model.h"
#include "ir/text_parser.h"

/* AT(INT), AT(FLOATS), ...: AttributeProto.AttributeType values */
#define AT(x) ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__##x

/* ------------------------------------------------------------ attributes */

static bool parse_graph_body(parser *p, Onnx__GraphProto *g);

/* Starts a graph value: an identifier that is not a type or float word, or a
 * quoted name followed by '('. */
static bool at_graph(parser *p) {
  const ol_token *t = cur(p);
  if (t->kind == OL_TOK_STRING) return is_punct(ahead(p, 1), '(');
  return t->kind == OL_TOK_IDENT && !ol_text_is_type_word(t->start, t->len) &&
         !ol_text_is_float_word(t->start, t->len);
}

/* One value (not a list) into a fresh attribute: sets a->type and its field. */
static bool parse_single_value(parser *p, Onnx__AttributeProto *a, bool in_list) {
  const ol_token *t = cur(p);
  a->has_type = 1;
  if (at(p, '@')) {
    if (in_list) return ol_tp_fail_at(p, t, "an attribute reference cannot be a list element");
    if (p->fn_depth == 0)
      return ol_tp_fail_at(p, t, "attribute references (@name) are only allowed inside functions");
    next(p);
    a->has_type = 0;
    return (a->ref_attr_name = ol_tp_take_id(p, "an attribute name after '@'")) != NULL;
  }
  if (at_type(p)) {
    Onnx__TypeProto *type = new_type(p);
    if (!type || !ol_tp_parse_type(p, type))
      return onnx__type_proto__free_unpacked(type, NULL), false;
    const ol_token *n = cur(p);
    if (type->value_case == ONNX__TYPE_PROTO__VALUE_SPARSE_TENSOR_TYPE && is_punct(n, '{')) {
      a->type = AT(SPARSE_TENSOR);
      bool ok =
          (a->sparse_tensor = new_sparse(p)) && ol_tp_parse_sparse_value(p, a->sparse_tensor, type);
      onnx__type_proto__free_unpacked(type, NULL);
      return ok;
    }
    if (is_punct(n, '{') || is_punct(n, '=') || n->kind == OL_TOK_IDENT ||
        n->kind == OL_TOK_STRING) {
      a->type = AT(TENSOR);
      bool ok = (a->t = new_tensor(p)) != NULL;
      if (ok && n->kind != OL_TOK_PUNCT)
        ok = set_opt_str(&a->t->name, ol_tp_take_id(p, "a tensor name"));
      if (ok) accept(p, '=');
      if (ok) ok = ol_tp_parse_tensor_data(p, a->t, type, t);
      onnx__type_proto__free_unpacked(type, NULL);
      return ok;
    }
    a->type = AT(TYPE_PROTO);
    a->tp = type;
    return true;
  }
  if (at_graph(p)) {
    a->type = AT(GRAPH);
    if (!(a->g = new_graph(p))) return false;
    if (!set_opt_str(&a->g->name, ol_tp_take_id(p, "a graph name"))) return false;
    return parse_graph_body(p, a->g);
  }
  if (t->kind == OL_TOK_STRING) {
    a->type = AT(STRING);
    a->has_s = 1;
    return ol_tp_take_bytes(p, &a->s);
  }
  if (at_float(p) && (t->is_float || t->kind == OL_TOK_IDENT)) {
    double d;
    if (!ol_tp_take_double(p, "a float", true, &d)) return false;
    a->type = AT(FLOAT);
    a->has_f = 1;
    a->f = (float)d;
    return true;
  }
  if (t->kind == OL_TOK_NUMBER) {
    a->type = AT(INT);
    a->has_i = 1;
    return ol_tp_take_int(p, "an integer", INT64_MIN, INT64_MAX, &a->i);
  }
  return ol_tp_expected(p, in_list ? "a list element" : "an attribute value");
}

static int list_type_of(int single) {
  switch (single) {
    case AT(FLOAT): return AT(FLOATS);
    case AT(INT): return AT(INTS);
    case AT(STRING): return AT(STRINGS);
    case AT(TENSOR): return AT(TENSORS);
    case AT(GRAPH): return AT(GRAPHS);
    case AT(SPARSE_TENSOR): return AT(SPARSE_TENSORS);
    case AT(TYPE_PROTO): return AT(TYPE_PROTOS);
    default: return 0;
  }
}

static bool is_list_type(int type) {
  for (int s = 1; s <= 14; s++)
    if (list_type_of(s) == type && type) return true;
  return false;
}

/* Moves the value of item (a single value) into list attribute a. */
static bool append_item(parser *p, Onnx__AttributeProto *a, Onnx__AttributeProto *item,
                        const ol_token *where) {
  int want = a->type, got = list_type_of(item->type);
  if (want == AT(FLOATS) && got == AT(INTS)) {
    item->f = (float)item->i; /* 2 in a float list */
    got = want;
  } else if (want == AT(INTS) && got == AT(FLOATS) && !a->has_type) {
    /* [1, 2.5]: an unannotated list becomes a float list */
    if (a->n_ints && !(a->floats = malloc(sizeof(float) * a->n_ints * 2))) return ol_tp_oom(p);
    for (size_t i = 0; i < a->n_ints; i++) a->floats[i] = (float)a->ints[i];
    a->n_floats = a->n_ints;
    free(a->ints);
    a->ints = NULL;
    a->n_ints = 0;
    a->type = want = got;
  }
  if (want != got) {
    const char *w = ol_text_attr_type_name(want), *g = ol_text_attr_type_name(item->type);
    return ol_tp_fail_at(p, where, "list element of type %s in a list of %s", g ? g : "?",
                         w ? w : "?");
  }
  switch (got) {
    case AT(FLOATS): return APPEND(p, a->floats, a->n_floats, item->f);
    case AT(INTS): return APPEND(p, a->ints, a->n_ints, item->i);
    case AT(STRINGS):
      if (!APPEND(p, a->strings, a->n_strings, item->s)) return false;
      item->s.data = NULL;
      return true;
#define MOVE(list, n, field)                                \
  if (!APPEND(p, a->list, a->n, item->field)) return false; \
  item->field = NULL;                                       \
  return true;
    case AT(TENSORS): MOVE(tensors, n_tensors, t)
    case AT(GRAPHS): MOVE(graphs, n_graphs, g)
    case AT(SPARSE_TENSORS): MOVE(sparse_tensors, n_sparse_tensors, sparse_tensor)
    case AT(TYPE_PROTOS): MOVE(type_protos, n_type_protos, tp)
#undef MOVE
    default: return ol_tp_fail_at(p, where, "unsupported list element");
  }
}

static bool parse_list_value(parser *p, Onnx__AttributeProto *a) {
  const ol_token *open = cur(p);
  next(p); /* '[' */
  if (accept(p, ']')) {
    if (!a->has_type)
      return ol_tp_fail_at(p, open, "an empty list needs a type annotation (name: ints = [])");
    if (!is_list_type(a->type))
      return ol_tp_fail_at(p, open, "attribute '%s' is declared %s but has a list value", a->name,
                           ol_text_attr_type_name(a->type));
    return true;
  }
  if (a->has_type && !is_list_type(a->type))
    return ol_tp_fail_at(p, open, "attribute '%s' is declared %s but has a list value", a->name,
                         ol_text_attr_type_name(a->type));
  do {
    const ol_token *where = cur(p);
    Onnx__AttributeProto *item = new_attr(p);
    if (!item) return false;
    bool ok = parse_single_value(p, item, true);
    if (ok && a->type == 0) a->type = list_type_of(item->type); /* the first element decides */
    if (ok) ok = append_item(p, a, item, where);
    onnx__attribute_proto__free_unpacked(item, NULL);
    if (!ok) return false;
  } while (accept(p, ','));
  a->has_type = 1;
  return expect(p, ']', "',' or ']' in the list value");
}

/* name [':' type] '=' value */
static bool parse_attr_after_name(parser *p, Onnx__AttributeProto *a) {
  if (accept(p, ':')) {
    const ol_token *t = cur(p);
    int type = t->kind == OL_TOK_IDENT ? ol_text_attr_type_from_name(t->start, t->len) : 0;
    if (!type)
      return ol_tp_expected(p, "an attribute type (int, float, string, ints, tensor, graph, ...)");
    next(p);
    a->has_type = 1;
    a->type = type;
  }
  if (!expect(p, '=', "'=' after the attribute name")) return false;
  if (at(p, '[')) return parse_list_value(p, a);
  const ol_token *where = cur(p);
  int declared = a->has_type ? (int)a->type : 0;
  if (!parse_single_value(p, a, false)) return false;
  if (a->ref_attr_name) {
    a->has_type = declared != 0;
    a->type = declared;
    return true;
  }
  if (declared && declared != (int)a->type) {
    if (declared == AT(FLOAT) && a->type == AT(INT)) {
      a->has_i = 0;
      a->has_f = 1;
      a->f = (float)a->i;
      a->i = 0;
      a->type = declared;
      return true;
    }
    return ol_tp_fail_at(p, where, "attribute '%s' is declared %s but the value is %s", a->name,
                         ol_text_attr_type_name(declared), ol_text_attr_type_name(a->type));
  }
  return true;
}

static bool parse_attr_list(parser *p, Onnx__AttributeProto ***list, size_t *n) {
  next(p); /* '<' */
  do {
    Onnx__AttributeProto *a = ADD(p, *list, *n, new_attr);
    if (!a || !(a->name = ol_tp_take_id(p, "an attribute name"))) return false;
    if (!parse_attr_after_name(p, a)) return false;
  } while (accept(p, ','));
  return expect(p, '>', "',' or '>' after the attribute");
}

/* ------------------------------------------------------------ nodes and graphs */

/* Comma-separated names where an empty slot means "" (a trailing empty slot
 * is dropped): "(a, , b)", "(, x)". */
static bool parse_id_list(parser *p, char ***list, size_t *n, const char *what) {
  for (;;) {
    const ol_token *t = cur(p);
    char *s;
    if (t->kind == OL_TOK_IDENT || t->kind == OL_TOK_STRING) {
      if (!(s = ol_tp_take_id(p, what))) return false;
    } else if (is_punct(t, ',')) {
      if (!(s = ol_strdup(""))) return ol_tp_oom(p);
    } else {
      return true;
    }
    if (!APPEND(p, *list, *n, s)) return free(s), false;
    if (!accept(p, ',')) return true;
  }
}

static bool parse_node(parser *p, Onnx__NodeProto *node) {
  if (accept(p, '[')) {
    if (!set_opt_str(&node->name, ol_tp_take_id(p, "a node name"))) return false;
    if (!expect(p, ']', "']' after the node name")) return false;
  }
  if (!parse_id_list(p, &node->output, &node->n_output, "an output name")) return false;
  if (!expect(p, '=',
              node->n_output ? "'=' after the node outputs" : "a node (outputs = Op(inputs))"))
    return false;
  /* [domain '.'] op_type, the domain dotted identifiers or a string */
  char domain[512];
  size_t dn = 0;
  const ol_token *op = cur(p);
  bool quoted = false;
  if (op->kind == OL_TOK_STRING && is_punct(ahead(p, 1), '.')) {
    quoted = true;
    char *d = NULL;
    if (!ol_tp_take_string(p, "a domain", &d)) return false;
    set_opt_str(&node->domain, d);
    next(p); /* '.' */
    op = cur(p);
  }
  if (op->kind != OL_TOK_IDENT) return ol_tp_expected(p, "an operator name");
  next(p);
  while (!quoted && accept(p, '.')) {
    if (cur(p)->kind != OL_TOK_IDENT) return ol_tp_expected(p, "an operator name after '.'");
    if (dn + op->len + 2 > sizeof domain) return ol_tp_fail_at(p, op, "domain name is too long");
    if (dn) domain[dn++] = '.';
    memcpy(domain + dn, op->start, op->len);
    dn += op->len;
    op = cur(p);
    next(p);
  }
  if (dn) {
    domain[dn] = 0;
    if (!set_str(&node->domain, ol_strdup(domain))) return ol_tp_oom(p);
  }
  if (!(node->op_type = malloc(op->len + 1))) return ol_tp_oom(p);
  memcpy(node->op_type, op->start, op->len);
  node->op_type[op->len] = 0;
  if (accept(p, ':') &&
      !set_opt_str(&node->overload, ol_tp_take_id(p, "an overload name after ':'")))
    return false;
  if (at(p, '<') && !parse_attr_list(p, &node->attribute, &node->n_attribute)) return false;
  if (!expect(p, '(', "'(' to start the node inputs")) return false;
  if (!parse_id_list(p, &node->input, &node->n_input, "an input name")) return false;
  if (!expect(p, ')', "',' or ')' after the node inputs")) return false;
  if (node->n_attribute == 0 && at(p, '<'))
    return parse_attr_list(p, &node->attribute, &node->n_attribute);
  return true;
}

static bool parse_node_list(parser *p, Onnx__NodeProto ***list, size_t *n, const char *owner) {
  const ol_token *open = cur(p);
  if (!at(p, '{')) {
    char what[160];
    snprintf(what, sizeof what, "'{' to start the nodes of '%.100s'", owner);
    return ol_tp_expected(p, what);
  }
  next(p);
  while (!accept(p, '}')) {
    if (cur(p)->kind == OL_TOK_EOF)
      return ol_tp_fail_at(p, cur(p),
                           "expected '}' to close the nodes of '%.100s' (opened at line %d, column "
                           "%d), found end of input",
                           owner, open->line, open->col);
    Onnx__NodeProto *node = ADD(p, *list, *n, new_node);
    if (!node || !parse_node(p, node)) return false;
  }
  return true;
}

/* [type] name */
static bool parse_value_info(parser *p, Onnx__ValueInfoProto *vi, const char *what) {
  const ol_token *t = cur(p), *n = ahead(p, 1);
  if (t->kind == OL_TOK_IDENT && !at_type(p) &&
      (is_punct(n, '[') || is_punct(n, '(') || n->kind == OL_TOK_IDENT))
    return ol_tp_fail_at(p, t, "unknown type '%.*s'", (int)t->len, t->start);
  if (at_type(p)) {
    if (!(vi->type = new_type(p)) || !ol_tp_parse_type(p, vi->type)) return false;
  }
  return set_str(&vi->name, ol_tp_take_id(p, what));
}

/* '(' [value-info ['=' data]] ... ')' for graph inputs; '<' ... '>' for
 * value infos / initializers. An item with '=' becomes an initializer (for
 * inputs, also an input). */
static bool parse_vi_list(parser *p, Onnx__GraphProto *g, char close, bool inputs) {
  next(p); /* '(' or '<' */
  if (accept(p, close)) return true;
  do {
    const ol_token *where = cur(p);
    Onnx__ValueInfoProto *vi = new_vi(p);
    if (!vi) return false;
    bool ok = parse_value_info(p, vi, inputs ? "an input name" : "a value name");
    if (ok && at(p, '=')) {
      next(p);
      Onnx__TensorProto *t = ADD(p, g->initializer, g->n_initializer, new_tensor);
      if (!t)
        ok = false;
      else if (!vi->type)
        ok = ol_tp_fail_at(p, where, "initializer '%s' needs a tensor type", vi->name);
      else
        ok = set_str(&t->name, ol_strdup(vi->name)) ? ol_tp_parse_tensor_data(p, t, vi->type, where)
                                                    : ol_tp_oom(p);
      if (ok && !inputs) {
        onnx__value_info_proto__free_unpacked(vi, NULL);
        continue;
      }
    }
    if (!ok || !(inputs ? APPEND(p, g->input, g->n_input, vi)
                        : APPEND(p, g->value_info, g->n_value_info, vi))) {
      onnx__value_info_proto__free_unpacked(vi, NULL);
      return false;
    }
  } while (accept(p, ','));
  if (close == ')') return expect(p, ')', "',' or ')' after the input list");
  return expect(p, '>', "',' or '>' after the value info / initializer list");
}

static bool parse_outputs(parser *p, Onnx__ValueInfoProto ***list, size_t *n) {
  if (!expect(p, '(', "'(' to start the output list")) return false;
  if (accept(p, ')')) return true;
  do {
    Onnx__ValueInfoProto *vi = ADD(p, *list, *n, new_vi);
    if (!vi || !parse_value_info(p, vi, "an output name")) return false;
  } while (accept(p, ','));
  return expect(p, ')', "',' or ')' after the output list");
}

/* After the graph name: inputs '=>' outputs ['<' ... '>'] '{' nodes '}' */
static bool parse_graph_inner(parser *p, Onnx__GraphProto *g) {
  const char *name = g->name ? g->name : "";
  if (!at(p, '(')) return ol_tp_expected(p, "'(' to start the input list");
  if (!parse_vi_list(p, g, ')', true)) return false;
  if (cur(p)->kind != OL_TOK_ARROW) return ol_tp_expected(p, "'=>' after the input list");
  next(p);
  if (!parse_outputs(p, &g->output, &g->n_output)) return false;
  if (at(p, '<') && !parse_vi_list(p, g, '>', false)) return false;
  return parse_node_list(p, &g->node, &g->n_node, name);
}

static bool parse_graph_body(parser *p, Onnx__GraphProto *g) {
  if (++p->graph_depth > OL_MAX_GRAPH_DEPTH)
    return ol_tp_fail_at(p, cur(p), "graphs are nested deeper than %d levels", OL_MAX_GRAPH_DEPTH);
  bool ok = parse_graph_inner(p, g);
  p->graph_depth--;
  return ok;
}

/* ------------------------------------------------------------ model and functions */

static bool parse_opsets(parser *p, Onnx__OperatorSetIdProto ***list, size_t *n) {
  if (!expect(p, '[', "'[' to start the opset list")) return false;
  if (accept(p, ']')) return true;
  do {
    Onnx__OperatorSetIdProto *o = ADD(p, *list, *n, new_opset);
    if (!o) return false;
    if (cur(p)->kind == OL_TOK_IDENT) {
      if (!set_opt_str(&o->domain, ol_tp_take_id(p, "a domain"))) return false;
    } else {
      char *d = NULL;
      if (!ol_tp_take_string(p, "a quoted domain (\"\" for the default domain)", &d)) return false;
      set_opt_str(&o->domain, d);
    }
    if (!expect(p, ':', "':' after the opset domain")) return false;
    if (!ol_tp_take_int(p, "an opset version", INT64_MIN, INT64_MAX, &o->version)) return false;
    o->has_version = 1;
  } while (accept(p, ','));
  return expect(p, ']', "',' or ']' in the opset list");
}

/* '<' key ':' value, ... '>' for models (is_model) and functions. */
static bool parse_header(parser *p, Onnx__ModelProto *m, Onnx__FunctionProto *f) {
  next(p); /* '<' */
  if (accept(p, '>')) return true;
  do {
    const ol_token *key = cur(p);
    if (key->kind != OL_TOK_IDENT)
      return ol_tp_expected(p, m ? "a model property name" : "a function property name");
    next(p);
    if (!expect(p, ':', "':' after the property name")) return false;
    char *s = NULL;
    bool ok;
    if (is_word(key, "opset_import")) {
      ok = m ? parse_opsets(p, &m->opset_import, &m->n_opset_import)
             : parse_opsets(p, &f->opset_import, &f->n_opset_import);
    } else if (is_word(key, "domain")) {
      ok = ol_tp_take_string(p, "a quoted domain", &s) &&
           set_opt_str(m ? &m->domain : &f->domain, s);
    } else if (is_word(key, "doc_string")) {
      ok = ol_tp_take_string(p, "a quoted doc string", &s) &&
           set_opt_str(m ? &m->doc_string : &f->doc_string, s);
    } else if (m && is_word(key, "ir_version")) {
      ok = ol_tp_take_int(p, "an IR version", INT64_MIN, INT64_MAX, &m->ir_version);
      m->has_ir_version = ok;
    } else if (m && is_word(key, "model_version")) {
      ok = ol_tp_take_int(p, "a model version", INT64_MIN, INT64_MAX, &m->model_version);
      m->has_model_version = ok;
    } else if (m && is_word(key, "producer_name")) {
      ok = ol_tp_take_string(p, "a quoted producer name", &s) && set_opt_str(&m->producer_name, s);
    } else if (m && is_word(key, "producer_version")) {
      ok = ol_tp_take_string(p, "a quoted producer version", &s) &&
           set_opt_str(&m->producer_version, s);
    } else if (m && is_word(key, "metadata_props")) {
      ok = ol_tp_parse_entries(p, &m->metadata_props, &m->n_metadata_props);
    } else if (!m && is_word(key, "overload")) {
      ok = ol_tp_take_string(p, "a quoted overload name", &s) && set_opt_str(&f->overload, s);
    } else {
      return ol_tp_fail_at(p, key, "unknown %s property '%.*s'", m ? "model" : "function",
                           (int)key->len, key->start);
    }
    if (!ok) return false;
  } while (accept(p, ','));
  return expect(
      p, '>', m ? "',' or '>' after the model property" : "',' or '>' after the function property");
}

/* '(' [type] name, ... ')': names into ids, typed entries into value_info. */
static bool parse_fn_io(parser *p, Onnx__FunctionProto *f, char ***ids, size_t *n,
                        const char *what) {
  if (!expect(p, '(', what)) return false;
  if (accept(p, ')')) return true;
  do {
    Onnx__ValueInfoProto *vi = NULL;
    if (at_type(p)) {
      if (!(vi = ADD(p, f->value_info, f->n_value_info, new_vi))) return false;
      if (!(vi->type = new_type(p)) || !ol_tp_parse_type(p, vi->type)) return false;
    }
    char *name = ol_tp_take_id(p, "a name");
    if (!name || !APPEND(p, *ids, *n, name)) return free(name), false;
    if (vi && !(vi->name = ol_strdup(name))) return ol_tp_oom(p);
  } while (accept(p, ','));
  return expect(p, ')', "',' or ')' after the function inputs/outputs");
}

static bool parse_function(parser *p, Onnx__FunctionProto *f) {
  if (at(p, '<') && !parse_header(p, NULL, f)) return false;
  if (!(f->name = ol_tp_take_id(p, "a function name"))) return false;
  if (accept(p, '<')) {
    do {
      char *name = ol_tp_take_id(p, "an attribute name");
      if (!name) return false;
      if (at(p, ':') || at(p, '=')) {
        Onnx__AttributeProto *a = ADD(p, f->attribute_proto, f->n_attribute_proto, new_attr);
        if (!a) return free(name), false;
        a->name = name;
        if (!parse_attr_after_name(p, a)) return false;
      } else if (!APPEND(p, f->attribute, f->n_attribute, name)) {
        return free(name), false;
      }
    } while (accept(p, ','));
    if (!expect(p, '>', "',' or '>' after the function attributes")) return false;
  }
  if (!parse_fn_io(p, f, &f->input, &f->n_input, "'(' to start the function inputs")) return false;
  if (cur(p)->kind != OL_TOK_ARROW) return ol_tp_expected(p, "'=>' after the function inputs");
  next(p);
  if (!parse_fn_io(p, f, &f->output, &f->n_output, "'(' to start the function outputs"))
    return false;
  if (accept(p, '<')) {
    do {
      Onnx__ValueInfoProto *vi = ADD(p, f->value_info, f->n_value_info, new_vi);
      if (!vi || !parse_value_info(p, vi, "a value name")) return false;
    } while (accept(p, ','));
    if (!expect(p, '>', "',' or '>' after the function value infos")) return false;
  }
  p->fn_depth++;
  bool ok = parse_node_list(p, &f->node, &f->n_node, f->name);
  p->fn_depth--;
  return ok;
}

static bool parse_model(parser *p, Onnx__ModelProto *m) {
  if (at(p, '<') && !parse_header(p, m, NULL)) return false;
  if (!(m->graph = new_graph(p))) return false;
  if (!set_opt_str(&m->graph->name, ol_tp_take_id(p, "a graph name"))) return false;
  if (!parse_graph_body(p, m->graph)) return false;
  while (cur(p)->kind != OL_TOK_EOF) {
    if (cur(p)->kind != OL_TOK_IDENT && cur(p)->kind != OL_TOK_STRING && !at(p, '<'))
      return ol_tp_expected(p, "a function or end of input");
    Onnx__FunctionProto *f = ADD(p, m->functions, m->n_functions, new_function);
    if (!f || !parse_function(p, f)) return false;
  }
  return true;
}

ol_status ol_text_parse_proto(const char *text, Onnx__ModelProto **out) {
  *out = NULL;
  ol_token_list toks;
  OL_TRY(ol_text_lex(text, &toks));
  parser p = {toks.tokens, 0, 0, 0, 0, false, OL_OK};
  Onnx__ModelProto *m = malloc(sizeof *m);
  if (!m) {
    ol_text_tokens_free(&toks);
    return ol_error(OL_OUT_OF_MEMORY, "text parser: out of memory");
  }
  onnx__model_proto__init(m);
  bool ok = parse_model(&p, m);
  ol_text_tokens_free(&toks);
  if (!ok) {
    onnx__model_proto__free_unpacked(m, NULL);
    return p.failed ? p.status : ol_error(OL_INTERNAL, "text parser failed without a message");
  }
  *out = m;
  return OL_OK;
}

ol_status ol_model_parse_text(const char *text, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_parse_text: out is NULL");
  *out = NULL;
  if (!text) return ol_error(OL_INVALID_ARGUMENT, "ol_model_parse_text: text is NULL");
  Onnx__ModelProto *m;
  OL_TRY(ol_text_parse_proto(text, &m));
  return ol_model_from_proto(m, NULL, out);
}
