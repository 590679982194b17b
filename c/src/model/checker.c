/* The model checker: structural validation with precise messages naming the
 * offending graph, node or value. Operator semantics are the kernels' job. */
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/strmap.h"
#include "ir/model.h"
#include "quant/wire.h"

typedef struct scope {
  ol_strmap names; /* values defined in this graph */
  const struct scope *outer;
} scope;

static bool defined(const scope *s, const char *name) {
  for (; s; s = s->outer)
    if (ol_strmap_get(&s->names, name) >= 0) return true;
  return false;
}

static ol_status check_type(const ol_graph *g, const ol_graph_value *v, const char *role) {
  if (!v->name[0]) return ol_error(OL_INVALID_MODEL, "graph '%s': an %s has an empty name", g->name, role);
  if (v->has_type && v->type.kind == OL_VALUE_TENSOR && v->type.dtype != OL_DTYPE_UNDEFINED &&
      !ol_dtype_valid(v->type.dtype))
    return ol_error(OL_INVALID_MODEL, "graph '%s': %s '%s' has invalid element type %d", g->name, role,
                    v->name, (int)v->type.dtype);
  return OL_OK;
}

static bool domain_imported(const ol_model_data *m, const char *domain) {
  if (strcmp(domain, "ai.onnx") == 0) domain = "";
  for (size_t i = 0; i < m->num_opsets; i++)
    if (strcmp(m->opsets[i].domain, domain) == 0) return true;
  return false;
}

static bool is_model_function(const ol_model_data *m, const ol_node *n) {
  for (size_t i = 0; i < m->proto->n_functions; i++) {
    const Onnx__FunctionProto *f = m->proto->functions[i];
    if (f->name && strcmp(f->name, n->op_type) == 0 && strcmp(f->domain ? f->domain : "", n->domain) == 0)
      return true;
  }
  return false;
}

static ol_status check_graph(const ol_model_data *m, const ol_graph *g, const scope *outer);

static ol_status define(scope *s, const ol_graph *g, const char *name, const char *what) {
  if (ol_strmap_get(&s->names, name) >= 0)
    return ol_error(OL_INVALID_MODEL, "graph '%s': %s '%s' is defined more than once", g->name, what, name);
  return ol_strmap_put(&s->names, name, 1);
}

/* An encoded initializer's layout must decode with the quantization wire
 * decoder: inline descriptor or struct_type.type_ref through
 * ModelProto.struct_types, payload consistent with it. */
static ol_status check_encoded(const ol_model_data *m, const ol_graph *g, const ol_initializer *init) {
  const Onnx__EncodedValueProto *ev = init->proto;
  if (ev->parameter_ref && ev->parameter_ref[0]) {
    /* compact value: reference, types and byte extent, without materializing */
    const ol_quant_shared_set *set = ol_quant_catalogue_find(m->quant_params, ev->parameter_ref);
    if (!set)
      return ol_error(OL_INVALID_MODEL,
                      "graph '%s': encoded initializer '%s' refers to the quantization parameter set "
                      "'%s', which the model does not declare", g->name, init->name, ev->parameter_ref);
    ol_status st = ol_quant_shared_check(set, ev, m->types);
    if (st == OL_OK || st == OL_OUT_OF_MEMORY) return st;
    return ol_error_wrap(OL_INVALID_MODEL, "graph '%s': encoded initializer '%s' (parameter set '%s')",
                         g->name, init->name, ev->parameter_ref);
  }
  ol_quant_decoded decoded;
  ol_status st = ol_quant_decode_proto(ev, m->types, &decoded, NULL);
  ol_quant_decoded_clear(&decoded);
  if (st == OL_OK || st == OL_OUT_OF_MEMORY) return st;
  return ol_error_wrap(OL_INVALID_MODEL, "graph '%s': encoded initializer '%s' has an invalid layout",
                       g->name, init->name);
}

/* ai.rt::Quantize's parameter_ref (resolved at call sites for function
 * bodies) must name a declared set whose storage type is the node's `type`. */
static ol_status check_parameter_ref(const ol_model_data *m, const ol_node *n) {
  if (strcmp(n->op_type, "Quantize") != 0 || strcmp(n->domain, "ai.rt") != 0) return OL_OK;
  const ol_attr *ref = ol_node_attr(n, "parameter_ref");
  if (!ref) return OL_OK;
  const Onnx__AttributeProto *rp = ref->proto;
  if (ref->type == OL_ATTR_UNDEFINED && rp && rp->ref_attr_name && rp->ref_attr_name[0])
    return ol_error(OL_INVALID_MODEL,
                    "node '%s' (%s): attribute 'parameter_ref' refers to the function attribute '%s', "
                    "which the call omits and which has no default", n->name, n->op_type,
                    rp->ref_attr_name);
  if (ref->type != OL_ATTR_STRING)
    return ol_error(OL_INVALID_MODEL, "node '%s' (%s): attribute 'parameter_ref' must be a STRING",
                    n->name, n->op_type);
  const ol_quant_shared_set *set = ol_quant_catalogue_find(m->quant_params, ref->s);
  if (!set)
    return ol_error(OL_INVALID_MODEL,
                    "node '%s' (%s): attribute 'parameter_ref' names the quantization parameter set "
                    "'%s', which the model does not declare", n->name, n->op_type, ref->s);
  const ol_attr *type = ol_node_attr(n, "type");
  const Onnx__AttributeProto *ap = type ? type->proto : NULL;
  if (!ap || !ap->tp || ap->tp->value_case != ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE) return OL_OK;
  ol_status st = ol_quant_shared_check_storage(set, ap->tp->struct_type, m->types);
  if (st == OL_OK || st == OL_OUT_OF_MEMORY) return st;
  return ol_error_wrap(OL_INVALID_MODEL, "node '%s' (%s): attribute 'type'", n->name, n->op_type);
}

/* parameter_ref inside model-local function bodies (specialized per call
 * site at load) and their subgraphs. */
static ol_status check_function_refs(const ol_model_data *m, const ol_graph *g, int depth) {
  if (depth > 64) return OL_OK;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    OL_TRY(check_parameter_ref(m, n));
    if (n->function_body) {
      ol_status st = check_function_refs(m, n->function_body, depth + 1);
      if (st != OL_OK) return ol_error_wrap(st, "in the body of function call '%s' (%s)", n->name, n->op_type);
    }
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *attr = &n->attrs[a];
      for (size_t k = 0; k < attr->count || (attr->graph && k == 0); k++) {
        const ol_graph *sub = attr->type == OL_ATTR_GRAPH ? attr->graph
                              : attr->type == OL_ATTR_GRAPHS ? attr->graphs[k] : NULL;
        if (!sub) break;
        OL_TRY(check_function_refs(m, sub, depth + 1));
      }
    }
  }
  return OL_OK;
}

/* A TYPE_PROTO attribute holding a struct_type.type_ref (e.g. ai.rt::Quantize's
 * destination `type`) must name a declaration in ModelProto.struct_types. */
static ol_status check_type_attr(const ol_model_data *m, const ol_node *n, const ol_attr *attr) {
  const Onnx__AttributeProto *ap = attr->proto;
  if (attr->type != OL_ATTR_TYPE_PROTO || !ap || !ap->tp ||
      ap->tp->value_case != ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE || !ap->tp->struct_type)
    return OL_OK;
  const Onnx__StructTypeProto *root = NULL;
  if (ol_type_catalogue_resolve(m->types, ap->tp->struct_type, &root) == OL_OK) return OL_OK;
  return ol_error_wrap(OL_INVALID_MODEL, "node '%s' (%s): attribute '%s'", n->name, n->op_type, attr->name);
}

static ol_status check_graph_body(const ol_model_data *m, const ol_graph *g, scope *s) {
  const Onnx__GraphProto *gp = g->proto;
  if (g->parent && gp && gp->n_persistent_bindings)
    return ol_error(OL_INVALID_MODEL, "graph '%s': persistent_bindings are only allowed in the root graph", g->name);
  for (size_t i = 0; i < g->num_inputs; i++) {
    OL_TRY(check_type(g, &g->inputs[i], "input"));
    OL_TRY(define(s, g, g->inputs[i].name, "input"));
  }
  for (size_t i = 0; i < g->num_initializers; i++) {
    const ol_initializer *init = &g->initializers[i];
    const char *name = init->name;
    const char *kind = ol_initializer_kind(init);
    if (!name[0]) return ol_error(OL_INVALID_MODEL, "graph '%s': %s %zu has no name", g->name, kind, i);
    /* names are unique across initializer kinds (an input may still carry a default) */
    for (size_t k = 0; k < i; k++)
      if (strcmp(g->initializers[k].name, name) == 0)
        return ol_error(OL_INVALID_MODEL, "graph '%s': %s '%s' has the same name as an earlier %s",
                        g->name, kind, name, ol_initializer_kind(&g->initializers[k]));
    if (init->encoded) OL_TRY(check_encoded(m, g, init));
    bool is_input = false;
    for (size_t k = 0; k < g->num_inputs; k++) is_input |= strcmp(g->inputs[k].name, name) == 0;
    if (!is_input) OL_TRY(define(s, g, name, kind));
  }
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    for (size_t o = 0; o < n->num_outputs; o++)
      if (n->outputs[o][0]) {
        ol_status st = define(s, g, n->outputs[o], "value");
        if (st != OL_OK) return ol_error_wrap(st, "node '%s' (%s)", n->name, n->op_type);
      }
  }
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    if (!domain_imported(m, n->domain) && !is_model_function(m, n))
      return ol_error(OL_INVALID_MODEL, "node '%s' (%s): domain '%s' is not in the model's opset_import",
                      n->name, n->op_type, n->domain[0] ? n->domain : "ai.onnx");
    for (size_t k = 0; k < n->num_inputs; k++)
      if (n->inputs[k][0] && !defined(s, n->inputs[k]))
        return ol_error(OL_INVALID_MODEL, "node '%s' (%s): input '%s' is not defined", n->name, n->op_type,
                        n->inputs[k]);
    OL_TRY(check_parameter_ref(m, n));
    if (n->function_body) {
      ol_status st = check_function_refs(m, n->function_body, 1);
      if (st != OL_OK) return ol_error_wrap(st, "in the body of function call '%s' (%s)", n->name, n->op_type);
    }
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *attr = &n->attrs[a];
      OL_TRY(check_type_attr(m, n, attr));
      for (size_t k = 0; k < attr->count || (attr->graph && k == 0); k++) {
        const ol_graph *sub = attr->type == OL_ATTR_GRAPH ? attr->graph
                              : attr->type == OL_ATTR_GRAPHS ? attr->graphs[k] : NULL;
        if (!sub) break;
        ol_status st = check_graph(m, sub, s);
        if (st != OL_OK) return ol_error_wrap(st, "in attribute '%s' of node '%s' (%s)", attr->name, n->name, n->op_type);
      }
    }
  }
  for (size_t i = 0; i < g->num_outputs; i++) {
    OL_TRY(check_type(g, &g->outputs[i], "output"));
    if (!defined(s, g->outputs[i].name))
      return ol_error(OL_INVALID_MODEL, "graph '%s': output '%s' is not produced by any node, input or initializer",
                      g->name, g->outputs[i].name);
  }
  return OL_OK;
}

static ol_status check_graph(const ol_model_data *m, const ol_graph *g, const scope *outer) {
  scope s = {{0}, outer};
  ol_strmap_init(&s.names);
  ol_status st = check_graph_body(m, g, &s);
  ol_strmap_free(&s.names);
  return st;
}

/* References to name anywhere in g: node input positions (every position
 * counts, read-only operators too), captures in nested graphs (all branches
 * count), and graph outputs that return it directly. */
static size_t count_uses(const ol_graph *g, const char *name) {
  size_t uses = 0;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    for (size_t k = 0; k < n->num_inputs; k++) uses += strcmp(n->inputs[k], name) == 0;
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *attr = &n->attrs[a];
      if (attr->type == OL_ATTR_GRAPH) uses += count_uses(attr->graph, name);
      for (size_t k = 0; attr->type == OL_ATTR_GRAPHS && k < attr->count; k++) uses += count_uses(attr->graphs[k], name);
    }
  }
  for (size_t i = 0; i < g->num_outputs; i++) uses += strcmp(g->outputs[i].name, name) == 0;
  return uses;
}

static ol_status check_bindings(const ol_graph *g) {
  const Onnx__GraphProto *gp = g->proto;
  for (size_t i = 0; i < gp->n_persistent_bindings; i++) {
    const Onnx__PersistentBindingProto *b = gp->persistent_bindings[i];
    const char *in = b->input_name ? b->input_name : "", *out = b->output_name ? b->output_name : "";
    bool in_ok = false, out_ok = false;
    for (size_t k = 0; k < g->num_inputs; k++) in_ok |= strcmp(g->inputs[k].name, in) == 0;
    for (size_t k = 0; k < g->num_outputs; k++) out_ok |= strcmp(g->outputs[k].name, out) == 0;
    if (!in_ok) return ol_error(OL_INVALID_MODEL, "persistent binding %zu: '%s' is not a graph input", i, in);
    if (!out_ok) return ol_error(OL_INVALID_MODEL, "persistent binding %zu: '%s' is not a graph output", i, out);
    size_t uses = count_uses(g, in);
    if (uses != 1)
      return ol_error(OL_INVALID_MODEL,
                      "persistent input '%s' must have exactly one use in the graph, found %zu "
                      "(every node input position, nested-graph capture and graph output counts)",
                      in, uses);
    for (size_t k = 0; k < i; k++) {
      const Onnx__PersistentBindingProto *p = gp->persistent_bindings[k];
      if (strcmp(p->input_name ? p->input_name : "", in) == 0)
        return ol_error(OL_INVALID_MODEL, "persistent binding %zu: input '%s' is bound twice", i, in);
      if (strcmp(p->output_name ? p->output_name : "", out) == 0)
        return ol_error(OL_INVALID_MODEL, "persistent binding %zu: output '%s' is bound twice", i, out);
    }
  }
  return OL_OK;
}

ol_status ol_model_check(const ol_model *model) {
  if (!model) return ol_error(OL_INVALID_ARGUMENT, "ol_model_check: model is NULL");
  const ol_model_data *m = model->data;
  if (m->ir_version < 3)
    return ol_error(OL_INVALID_MODEL, "ir_version %lld is not supported (3 or newer is required)",
                    (long long)m->ir_version);
  for (size_t i = 0; i < m->num_opsets; i++)
    for (size_t k = 0; k < i; k++)
      if (strcmp(m->opsets[i].domain, m->opsets[k].domain) == 0)
        return ol_error(OL_INVALID_MODEL, "opset_import lists domain '%s' twice",
                        m->opsets[i].domain[0] ? m->opsets[i].domain : "ai.onnx");
  if (m->quant_params_status != OL_OK)
    return ol_error(m->quant_params_status, "%s", m->quant_params_error);
  OL_TRY(check_bindings(m->graph));
  return check_graph(m, m->graph, NULL);
}
