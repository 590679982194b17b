/* Model loading: protobuf bytes -> protobuf-c message -> decoded graphs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/limits.h"
#include "core/status.h"
#include "ir/model.h"
#include "ir/proto_depth.h"
#include "ir/quant_params.h"
#include "ir/packed_views.h"
#include "ir/paged_proto.h"

#define S(x) ((x) ? (x) : "")

/* ------------------------------------------------------------ freeing */

static void graph_free(ol_graph *g);

static void attr_free(ol_attr *a) {
  free(a->s);
  if (a->strings)
    for (size_t i = 0; i < a->count; i++) free(a->strings[i]);
  free(a->strings);
  ol_value_release(a->tensor);
  if (a->tensors)
    for (size_t i = 0; i < a->count; i++) ol_value_release(a->tensors[i]);
  free(a->tensors);
  graph_free(a->graph);
  if (a->graphs)
    for (size_t i = 0; i < a->count; i++) graph_free(a->graphs[i]);
  free(a->graphs);
}

static void graph_free(ol_graph *g) {
  if (!g) return;
  for (size_t n = 0; n < g->num_nodes; n++) {
    ol_node *node = &g->nodes[n];
    for (size_t a = 0; a < node->num_attrs; a++) attr_free(&node->attrs[a]);
    free(node->attrs);
    graph_free(node->function_body);
    free(node->inputs);
    free(node->outputs);
  }
  free(g->nodes);
  for (size_t i = 0; i < g->num_initializers; i++) ol_value_release(g->initializers[i].value);
  free(g->initializers);
  free(g->inputs);
  free(g->outputs);
  free(g->value_infos);
  free(g);
}

ol_proto_owner *ol_proto_owner_retain(ol_proto_owner *o) {
  if (o) o->refcount++;
  return o;
}

bool ol_proto_owner_read_external(const ol_proto_owner *o) {
  for (; o; o = o->base)
    if (o->n_external) return true;
  return false;
}

void ol_proto_owner_release(ol_proto_owner *o) {
  if (!o || --o->refcount > 0) return;
  for (size_t i = 0; i < o->n_external; i++) {
    free(o->external[i].location);
    ol_buffer_release(o->external[i].buffer);
  }
  free(o->external);
  if (o->base) {
    ol_proto_patch_free(o->patch);
    ol_proto_owner_release(o->base);
    free(o);
    return;
  }
  if (!o->borrowed) {
    ol_wire_weights_detach(&o->weights, o->proto);
    onnx__model_proto__free_unpacked(o->proto, NULL);
  }
  free(o->wire);
  free(o);
}

ol_model_data *ol_model_data_retain(ol_model_data *d) {
  if (d) d->refcount++;
  return d;
}

void ol_model_data_release(ol_model_data *d) {
  if (!d || --d->refcount > 0) return;
  graph_free(d->graph);
  free(d->opsets);
  ol_quant_catalogue_release(d->quant_params);
  free(d->quant_params_error);
  ol_type_catalogue_destroy(d->types);
  ol_proto_owner_release(d->owner);
  free(d);
}

/* ------------------------------------------------------------ decoding */

typedef struct decode_ctx decode_ctx;
struct decode_ctx {
  ol_model_data *model;
  const ol_model_load_options *options;
  /* inside a model-local function body: the function, its call site and the
   * context the call site was decoded in (to resolve attribute references) */
  const Onnx__FunctionProto *function;
  const Onnx__NodeProto *call_site;
  const decode_ctx *outer;
  int depth;
};


static ol_status decode_graph(decode_ctx *dc, const Onnx__GraphProto *gp, const ol_graph *parent,
                              ol_graph **out);

static bool same_domain(const char *a, const char *b) {
  if (strcmp(a, "ai.onnx") == 0) a = "";
  if (strcmp(b, "ai.onnx") == 0) b = "";
  return strcmp(a, b) == 0;
}

/* A function body uses its own opset_import first, then the model's. */
static int opset_for(const decode_ctx *dc, const char *domain) {
  for (const decode_ctx *c = dc; c && c->function; c = c->outer)
    for (size_t i = 0; i < c->function->n_opset_import; i++)
      if (same_domain(S(c->function->opset_import[i]->domain), domain))
        return (int)c->function->opset_import[i]->version;
  const ol_model_data *m = dc->model;
  for (size_t i = 0; i < m->num_opsets; i++)
    if (same_domain(m->opsets[i].domain, domain)) return m->opsets[i].version;
  return -1;
}

static const Onnx__FunctionProto *model_function(const ol_model_data *m, const char *domain, const char *name) {
  for (size_t i = 0; i < m->proto->n_functions; i++) {
    const Onnx__FunctionProto *f = m->proto->functions[i];
    if (strcmp(S(f->name), name) == 0 && same_domain(S(f->domain), domain)) return f;
  }
  return NULL;
}

/* The attribute a reference names: the call site's, else the function's
 * default, else NULL (the attribute is then absent). References inside
 * nested functions resolve through the enclosing call sites. */
static const Onnx__AttributeProto *resolve_ref(const decode_ctx *dc, const char *ref, const decode_ctx **where) {
  for (size_t i = 0; i < dc->call_site->n_attribute; i++) {
    const Onnx__AttributeProto *a = dc->call_site->attribute[i];
    if (strcmp(S(a->name), ref) != 0) continue;
    if (a->ref_attr_name && a->ref_attr_name[0] && dc->outer && dc->outer->function)
      return resolve_ref(dc->outer, a->ref_attr_name, where);
    *where = dc->outer;
    return a;
  }
  for (size_t i = 0; i < dc->function->n_attribute_proto; i++)
    if (strcmp(S(dc->function->attribute_proto[i]->name), ref) == 0) {
      *where = dc;
      return dc->function->attribute_proto[i];
    }
  return NULL;
}

static char *binary_to_cstring(const ProtobufCBinaryData *b) {
  char *s = ol_xmalloc(b->len + 1);
  if (!s) return NULL;
  if (b->len) memcpy(s, b->data, b->len);
  s[b->len] = 0;
  return s;
}

static ol_status decode_attr(decode_ctx *dc, const ol_node *node, const Onnx__AttributeProto *ap,
                             const ol_graph *graph, ol_attr *a) {
  ol_tensor_source src = {dc->options, dc->model->owner};
  a->name = S(ap->name);
  a->proto = ap;
  if (ap->ref_attr_name && ap->ref_attr_name[0]) {
    if (!dc->function)
      return ol_error(OL_INVALID_MODEL, "node '%s': attribute '%s' refers to a function attribute outside a function",
                      node->name, a->name);
    const decode_ctx *where = dc;
    const Onnx__AttributeProto *target = resolve_ref(dc, ap->ref_attr_name, &where);
    if (!target) return OL_OK; /* neither given nor defaulted: absent */
    OL_TRY(decode_attr((decode_ctx *)where, node, target, graph, a));
    a->name = S(ap->name);
    return OL_OK;
  }
  a->type = ap->has_type ? (ol_attr_type)ap->type : OL_ATTR_UNDEFINED;
  if (a->type == OL_ATTR_UNDEFINED) {
    /* IR < 3 models may omit the type: infer it from the field set. */
    if (ap->has_f) a->type = OL_ATTR_FLOAT;
    else if (ap->has_i) a->type = OL_ATTR_INT;
    else if (ap->has_s) a->type = OL_ATTR_STRING;
    else if (ap->t) a->type = OL_ATTR_TENSOR;
    else if (ap->g) a->type = OL_ATTR_GRAPH;
    else if (ap->n_floats) a->type = OL_ATTR_FLOATS;
    else if (ap->n_ints) a->type = OL_ATTR_INTS;
    else if (ap->n_strings) a->type = OL_ATTR_STRINGS;
  }
  switch (a->type) {
    case OL_ATTR_FLOAT: a->f = ap->f; break;
    case OL_ATTR_INT: a->i = ap->i; break;
    case OL_ATTR_STRING:
      a->s = binary_to_cstring(&ap->s);
      a->s_length = ap->s.len;
      if (!a->s) return OL_OUT_OF_MEMORY;
      break;
    case OL_ATTR_FLOATS: a->floats = ap->floats; a->count = ap->n_floats; break;
    case OL_ATTR_INTS: a->ints = ap->ints; a->count = ap->n_ints; break;
    case OL_ATTR_STRINGS:
      a->strings = ol_xcalloc(ap->n_strings, sizeof(char *));
      if (!a->strings) return OL_OUT_OF_MEMORY;
      a->count = ap->n_strings;
      for (size_t i = 0; i < ap->n_strings; i++)
        if (!(a->strings[i] = binary_to_cstring(&ap->strings[i]))) return OL_OUT_OF_MEMORY;
      break;
    case OL_ATTR_TENSOR:
      if (!ap->t) return ol_error(OL_INVALID_MODEL, "node '%s': tensor attribute '%s' is empty", node->name, a->name);
      /* a borrowed decoding (a graph builder's) has no folder to read external
       * data from: the tensor stays unread (NULL), its declaration checked */
      if (dc->model->owner->borrowed && ol_tensor_proto_is_external(ap->t)) OL_TRY(ol_tensor_proto_check_external(ap->t));
      else OL_TRY(ol_tensor_from_proto(ap->t, &src, &a->tensor));
      break;
    case OL_ATTR_TENSORS:
      a->tensors = ol_xcalloc(ap->n_tensors, sizeof(ol_value *));
      if (!a->tensors) return OL_OUT_OF_MEMORY;
      a->count = ap->n_tensors;
      for (size_t i = 0; i < ap->n_tensors; i++)
        OL_TRY(ol_tensor_from_proto(ap->tensors[i], &src, &a->tensors[i]));
      break;
    case OL_ATTR_GRAPH:
      if (!ap->g) return ol_error(OL_INVALID_MODEL, "node '%s': graph attribute '%s' is empty", node->name, a->name);
      OL_TRY(decode_graph(dc, ap->g, graph, &a->graph));
      break;
    case OL_ATTR_GRAPHS:
      a->graphs = ol_xcalloc(ap->n_graphs, sizeof(ol_graph *));
      if (!a->graphs) return OL_OUT_OF_MEMORY;
      a->count = ap->n_graphs;
      for (size_t i = 0; i < ap->n_graphs; i++) OL_TRY(decode_graph(dc, ap->graphs[i], graph, &a->graphs[i]));
      break;
    default:
      break; /* sparse tensors, type protos: kernels read a->proto */
  }
  return OL_OK;
}

static ol_status decode_node(decode_ctx *dc, const Onnx__NodeProto *np, size_t index, const ol_graph *graph,
                             ol_node *n);

/* A call of a model-local function becomes a subgraph specialized for its
 * call site (attribute references resolved, the function's opsets). */
static ol_status decode_function_body(decode_ctx *dc, const Onnx__FunctionProto *fp, const Onnx__NodeProto *call,
                                      const ol_graph *parent, ol_graph **out) {
  ol_graph *g = ol_xcalloc(1, sizeof *g);
  if (!g) return OL_OUT_OF_MEMORY;
  *out = g;
  g->name = S(fp->name);
  g->parent = parent;
  g->model = dc->model;
  g->proto = NULL;
  g->inputs_optional = true;
  g->inputs = ol_xcalloc(fp->n_input, sizeof *g->inputs);
  g->outputs = ol_xcalloc(fp->n_output, sizeof *g->outputs);
  g->nodes = ol_xcalloc(fp->n_node, sizeof *g->nodes);
  if (!g->inputs || !g->outputs || !g->nodes) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < fp->n_input; i++) {
    g->inputs[i].name = S(fp->input[i]);
    g->inputs[i].type.rank = -1;
  }
  g->num_inputs = fp->n_input;
  for (size_t i = 0; i < fp->n_output; i++) {
    g->outputs[i].name = S(fp->output[i]);
    g->outputs[i].type.rank = -1;
  }
  g->num_outputs = fp->n_output;
  decode_ctx inner = {dc->model, dc->options, fp, call, dc, dc->depth + 1};
  for (size_t i = 0; i < fp->n_node; i++) {
    g->num_nodes = i + 1;
    OL_TRY(decode_node(&inner, fp->node[i], i, g, &g->nodes[i]));
  }
  return OL_OK;
}

static ol_status decode_node(decode_ctx *dc, const Onnx__NodeProto *np, size_t index,
                             const ol_graph *graph, ol_node *n) {
  n->proto = np;
  n->graph = graph;
  n->index = index;
  n->name = S(np->name);
  n->op_type = S(np->op_type);
  n->domain = S(np->domain);
  if (!n->op_type[0]) return ol_error(OL_INVALID_MODEL, "node %zu ('%s') has no op_type", index, n->name);
  n->opset = opset_for(dc, n->domain);
  n->num_inputs = np->n_input;
  n->inputs = ol_xcalloc(np->n_input, sizeof(char *));
  n->num_outputs = np->n_output;
  n->outputs = ol_xcalloc(np->n_output, sizeof(char *));
  n->attrs = ol_xcalloc(np->n_attribute, sizeof(ol_attr));
  if (!n->inputs || !n->outputs || !n->attrs) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < np->n_input; i++) n->inputs[i] = S(np->input[i]);
  for (size_t i = 0; i < np->n_output; i++) n->outputs[i] = S(np->output[i]);
  n->num_attrs = np->n_attribute;
  for (size_t i = 0; i < np->n_attribute; i++) {
    ol_status s = decode_attr(dc, n, np->attribute[i], graph, &n->attrs[i]);
    if (s != OL_OK) {
      n->num_attrs = i + 1;
      return s;
    }
  }
  const Onnx__FunctionProto *f = model_function(dc->model, n->domain, n->op_type);
  if (f) {
    if (dc->depth >= OL_MAX_FUNCTION_DEPTH)
      return ol_error(OL_INVALID_MODEL, "node '%s': model-local functions nest deeper than %d (recursion?)", n->name,
                      OL_MAX_FUNCTION_DEPTH);
    ol_status s = decode_function_body(dc, f, np, graph, &n->function_body);
    if (s != OL_OK && dc->depth == 0) /* name the outermost call only */
      return ol_error_wrap(s, "in function %s::%s called by node '%s'", n->domain, n->op_type, n->name);
    if (s != OL_OK) return s;
  }
  return OL_OK;
}

static ol_status decode_values(Onnx__ValueInfoProto **vi, size_t count, ol_graph_value **out) {
  *out = ol_xcalloc(count, sizeof(ol_graph_value));
  if (!*out) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < count; i++) {
    (*out)[i].name = S(vi[i]->name);
    (*out)[i].has_type = vi[i]->type != NULL;
    ol_type_info_from_proto(vi[i]->type, &(*out)[i].type);
  }
  return OL_OK;
}

static ol_status decode_graph(decode_ctx *dc, const Onnx__GraphProto *gp, const ol_graph *parent,
                              ol_graph **out) {
  /* the wire check bounds models from bytes; this bounds every other source */
  int depth = 1;
  for (const ol_graph *p = parent; p; p = p->parent) depth += p->proto != NULL; /* (function bodies: no proto) */
  if (depth > OL_MAX_GRAPH_DEPTH)
    return ol_error(OL_INVALID_MODEL, "graph '%s' nests deeper than %d graphs", S(gp->name), OL_MAX_GRAPH_DEPTH);
  ol_graph *g = ol_xcalloc(1, sizeof *g);
  if (!g) return OL_OUT_OF_MEMORY;
  *out = g;
  g->proto = gp;
  g->name = S(gp->name);
  g->parent = parent;
  g->model = dc->model;
  OL_TRY(decode_values(gp->input, gp->n_input, &g->inputs));
  g->num_inputs = gp->n_input;
  OL_TRY(decode_values(gp->output, gp->n_output, &g->outputs));
  g->num_outputs = gp->n_output;
  OL_TRY(decode_values(gp->value_info, gp->n_value_info, &g->value_infos));
  g->num_value_infos = gp->n_value_info;

  for (size_t i = 0; i < gp->n_persistent_bindings; i++) {
    const ProtobufCMessage *b = &gp->persistent_bindings[i]->base;
    for (unsigned k = 0; k < b->n_unknown_fields; k++)
      if (b->unknown_fields[k].tag == 3 || b->unknown_fields[k].tag == 4)
        return ol_error(OL_INVALID_MODEL,
                        "graph '%s': persistent binding %zu uses the removed field-path field %u; "
                        "bindings are whole-value input_name/output_name pairs",
                        g->name, i, b->unknown_fields[k].tag);
  }
  if (gp->n_sparse_initializer)
    return ol_error(OL_NOT_IMPLEMENTED, "graph '%s': sparse initializers are not supported yet", g->name);
  size_t total = gp->n_initializer + gp->n_encoded_initializer + gp->n_paged_cache_initializer;
  g->initializers = ol_xcalloc(total ? total : 1, sizeof(ol_initializer));
  if (!g->initializers) return OL_OUT_OF_MEMORY;
  ol_tensor_source src = {dc->options, dc->model->owner};
  for (size_t i = 0; i < gp->n_initializer; i++) {
    const Onnx__TensorProto *tp = gp->initializer[i];
    ol_initializer *init = &g->initializers[i];
    init->name = S(tp->name);
    /* a borrowed decoding has no folder for external data: declarations only */
    init->unread = dc->model->owner->borrowed && ol_tensor_proto_is_external(tp);
    ol_status s = init->unread ? ol_tensor_proto_check_external(tp) : ol_tensor_from_proto(tp, &src, &init->value);
    if (init->unread) init->proto = tp;
    g->num_initializers = i + 1;
    if (s != OL_OK) return ol_error_wrap(s, "graph '%s' initializer %zu", g->name, i);
  }
  /* Encoded initializers: ENCODED values viewing the model's message (layouts
   * are validated by the checker and by the consumers). */
  for (size_t i = 0; i < gp->n_encoded_initializer; i++) {
    const Onnx__EncodedValueProto *ev = gp->encoded_initializer[i];
    ol_initializer *init = &g->initializers[g->num_initializers++];
    init->name = S(ev->name);
    init->encoded = true;
    init->proto = ev;
    ol_status s = ol_encoded_view_new(ev, dc->model->owner, &init->value);
    if (s != OL_OK)
      return ol_error_wrap(s, "graph '%s' encoded initializer '%s'", g->name, init->name);
    /* a compact value retains its parameter set (validated by the checker) */
    ol_quant_shared_set *set = ev->parameter_ref && ev->parameter_ref[0]
                                   ? ol_quant_catalogue_find(dc->model->quant_params, ev->parameter_ref)
                                   : NULL;
    if (set)
      ol_quant_shared_attach(init->value, set);
  }
  /* Paged cache initializers: caches whose pages view the model's message;
   * a malformed one fails the load (it cannot become a value). */
  for (size_t i = 0; i < gp->n_paged_cache_initializer; i++) {
    const Onnx__PagedCacheProto *pc = gp->paged_cache_initializer[i];
    ol_initializer *init = &g->initializers[g->num_initializers++];
    init->name = S(pc->name);
    init->paged = true;
    init->proto = pc;
    ol_status s = ol_paged_cache_from_model_proto(pc, dc->model->owner, &init->value);
    if (s != OL_OK) return ol_error_wrap(s, "graph '%s' paged_cache_initializer %zu", g->name, i);
  }
  g->nodes = ol_xcalloc(gp->n_node, sizeof(ol_node));
  if (!g->nodes) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < gp->n_node; i++) {
    g->num_nodes = i + 1;
    OL_TRY(decode_node(dc, gp->node[i], i, g, &g->nodes[i]));
  }
  return OL_OK;
}

/* ------------------------------------------------------------ public */

/* The root graph's shared quantization parameter sets. An invalid
 * declaration does not fail the load: the checker reports it. */
static ol_status load_quant_params(ol_model_data *d, const ol_model_load_options *options) {
  ol_tensor_source src = {options, d->owner};
  ol_status s = ol_quant_catalogue_from_model(d->proto, &src, &d->quant_params);
  if (s == OL_OK || s == OL_OUT_OF_MEMORY) return s;
  d->quant_params_status = s;
  d->quant_params_error = ol_strdup(ol_last_error());
  return d->quant_params_error ? OL_OK : OL_OUT_OF_MEMORY;
}

static ol_status model_from_owner(ol_proto_owner *owner, const ol_model_load_options *options,
                                  ol_model **out);

/* Decodes proto, whose payloads may view wire (weights says which); takes
 * ownership of all three, also on failure. */
static ol_status model_from_parts(Onnx__ModelProto *proto, uint8_t *wire, ol_wire_weights *weights,
                                  const ol_model_load_options *options, ol_model **out) {
  *out = NULL;
  ol_proto_owner *owner = ol_xcalloc(1, sizeof *owner);
  if (!owner) {
    ol_wire_weights_detach(weights, proto);
    onnx__model_proto__free_unpacked(proto, NULL);
    free(wire);
    return OL_OUT_OF_MEMORY;
  }
  owner->refcount = 1;
  owner->proto = proto;
  owner->wire = wire;
  owner->weights = *weights;
  return model_from_owner(owner, options, out);
}

ol_status ol_model_from_patch(ol_proto_patch *patch, Onnx__ModelProto *proto, ol_proto_owner *base,
                              ol_model **out) {
  *out = NULL;
  ol_proto_owner *owner = ol_xcalloc(1, sizeof *owner);
  if (!owner) {
    ol_proto_patch_free(patch);
    return OL_OUT_OF_MEMORY;
  }
  owner->refcount = 1;
  owner->proto = proto;
  owner->patch = patch;
  owner->base = ol_proto_owner_retain(base);
  return model_from_owner(owner, NULL, out);
}

/* Decodes owner->proto; takes ownership of owner (one reference), also on failure. */
static ol_status model_from_owner(ol_proto_owner *owner, const ol_model_load_options *options,
                                  ol_model **out) {
  Onnx__ModelProto *proto = owner->proto;
  ol_model_data *d = ol_xcalloc(1, sizeof *d);
  ol_model *m = ol_xcalloc(1, sizeof *m);
  if (!d || !m) {
    free(d);
    free(m);
    ol_proto_owner_release(owner);
    return OL_OUT_OF_MEMORY;
  }
  d->refcount = 1;
  d->owner = owner;
  d->proto = proto;
  m->data = d;
  ol_status s = OL_OK;
  d->ir_version = proto->has_ir_version ? proto->ir_version : 0;
  if (!proto->graph) {
    s = ol_error(OL_INVALID_MODEL, "model has no graph");
    goto fail;
  }
  d->opsets = ol_xcalloc(proto->n_opset_import + 1, sizeof(ol_opset));
  if (!d->opsets) {
    s = OL_OUT_OF_MEMORY;
    goto fail;
  }
  for (size_t i = 0; i < proto->n_opset_import; i++) {
    const char *domain = S(proto->opset_import[i]->domain);
    d->opsets[d->num_opsets].domain = strcmp(domain, "ai.onnx") == 0 ? "" : domain;
    d->opsets[d->num_opsets].version = (int)proto->opset_import[i]->version;
    d->num_opsets++;
  }
  if (proto->n_opset_import == 0 && d->ir_version < 3) {
    /* Very old models imply opset 1 of the default domain. */
    d->opsets[0].domain = "";
    d->opsets[0].version = 1;
    d->num_opsets = 1;
  }
  s = ol_type_catalogue_create((const Onnx__StructTypeProto *const *)proto->struct_types,
                               proto->n_struct_types, &d->types);
  if (s == OL_OK) s = load_quant_params(d, options);
  if (s != OL_OK) goto fail;
  decode_ctx dc = {d, options, NULL, NULL, NULL, 0};
  s = decode_graph(&dc, proto->graph, NULL, &d->graph);
  if (s != OL_OK) goto fail;
  *out = m;
  return OL_OK;
fail:
  ol_model_data_release(d);
  free(m);
  return s;
}

ol_status ol_model_from_proto(Onnx__ModelProto *proto, const ol_model_load_options *options,
                              ol_model **out) {
  ol_wire_weights none = {0};
  return model_from_parts(proto, NULL, &none, options, out);
}

ol_status ol_model_borrow_proto(Onnx__ModelProto *proto, ol_model **out) {
  *out = NULL;
  ol_proto_owner *owner = ol_xcalloc(1, sizeof *owner);
  if (!owner) return OL_OUT_OF_MEMORY;
  owner->refcount = 1;
  owner->proto = proto;
  owner->borrowed = true;
  return model_from_owner(owner, NULL, out);
}

ol_status ol_ir_load_owned(void *bytes, size_t size, const ol_model_load_options *options, ol_model **out) {
  if (!out) {
    free(bytes);
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_load_owned: out is NULL");
  }
  *out = NULL;
  if (!bytes && size) return ol_error(OL_INVALID_ARGUMENT, "ol_model_load_owned: bytes is NULL");
  if (size == 0) {
    free(bytes);
    return ol_error(OL_INVALID_MODEL, "model bytes are empty");
  }
  uint8_t *wire = bytes;
  ol_wire_weights weights;
  ol_status s = OL_OK;
  bool split = ol_wire_weights_split(wire, size, &weights, &s);
  if (s != OL_OK) {
    free(wire);
    return s;
  }
  /* split: unpack the small remainder, then view the payloads in `wire` */
  s = split ? ol_proto_check_depth(&onnx__model_proto__descriptor, weights.stripped, weights.stripped_size, "model")
            : ol_proto_check_depth(&onnx__model_proto__descriptor, wire, size, "model");
  if (s != OL_OK) {
    ol_wire_weights_detach(&weights, NULL); /* (nothing attached yet: frees the split) */
    free(wire);
    return s;
  }
  Onnx__ModelProto *proto = split ? onnx__model_proto__unpack(NULL, weights.stripped_size, weights.stripped)
                                  : onnx__model_proto__unpack(NULL, size, wire);
  free(weights.stripped);
  weights.stripped = NULL;
  if (proto && split) s = ol_wire_weights_attach(&weights, wire, proto);
  if (!proto || s != OL_OK) {
    ol_wire_weights_detach(&weights, proto);
    if (proto) onnx__model_proto__free_unpacked(proto, NULL);
    free(wire);
    return proto ? s
                 : ol_error(OL_INVALID_MODEL,
                            "cannot parse %zu bytes as an ONNX ModelProto (truncated or not a model)", size);
  }
  if (!split) {
    free(wire); /* protobuf-c copied what it needs */
    wire = NULL;
  }
  return model_from_parts(proto, wire, &weights, options, out);
}

/* Packs into one buffer, writing packed weights (ir/packed_views.h) dense. */
typedef struct flat_buffer {
  ProtobufCBuffer base;
  uint8_t *out;
  size_t len;
  const ol_proto_owner *owner;
} flat_buffer;

static void flat_append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data) {
  flat_buffer *b = (flat_buffer *)buffer;
  const ol_wire_view *packed = len >= OL_WIRE_VIEW_MIN_BYTES ? ol_proto_owner_find_packed(b->owner, data) : NULL;
  if (packed && packed->length == len) ol_wire_view_to_dense(packed, data, b->out + b->len);
  else if (len) memcpy(b->out + b->len, data, len); /* (data may be NULL when len is 0) */
  b->len += len;
}

ol_status ol_model_serialize(const ol_model *model, void **out_bytes, size_t *out_size) {
  size_t n = onnx__model_proto__get_packed_size(model->data->proto);
  void *bytes = ol_xmalloc(n ? n : 1);
  if (!bytes) return OL_OUT_OF_MEMORY;
  flat_buffer b = {{flat_append}, bytes, 0, model->data->owner};
  onnx__model_proto__pack_to_buffer(model->data->proto, &b.base);
  *out_bytes = bytes;
  *out_size = n;
  return OL_OK;
}

void ol_model_destroy(ol_model *model) {
  if (!model) return;
  ol_model_data_release(model->data);
  free(model);
}
