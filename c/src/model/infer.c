/* Model-level type and shape inference (ol_model_infer_shapes): walks each
 * graph in dependency order, seeds values from declared inputs and
 * initializers, applies the shape functions of ops/infer.h, checks every
 * inferred type against its declaration (value_info, graph outputs) and
 * records what it learned in the value_info of a copy of the model (graph
 * outputs: their declarations are refined in place).
 * Subgraphs (If/Loop/Scan bodies) are inferred with the enclosing values in
 * scope (Loop/Scan body inputs that are not declared get the element types
 * of the node's inputs, scan slices their shapes); If's outputs merge its
 * two branches, Loop/Scan outputs come from the body (loop-carried values
 * merged with their initial types, scan outputs stacked). Calls of
 * model-local functions are inferred through their bodies: the call's input
 * types (structured records whole) seed the body, which sees no outer value
 * (only the model's struct-type catalogue), and the body's output types are
 * the call's. Encoded initializers are seeded with their structured record
 * (ir/structured.h, the helper the graph builder uses); an encoded value on
 * an input its operator's schema row does not mark as structured
 * (structured_inputs) is an error: tensor operators never decode implicitly.
 * An initializer whose external data was not read (a graph builder's
 * decoding, ir/graph.h: unread) is seeded with its declared data type and
 * dims, without values. */
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/grow.h"
#include "core/limits.h"
#include "core/strmap.h"
#include "ir/paged_proto.h"
#include "ir/proto_patch.h"
#include "model/infer_internal.h"

/* The values of one graph. Pointers into types stay valid only until the
 * next bind (which may grow the array): a node's input types are used
 * before its outputs are bound. */
typedef struct scope {
  ol_strmap names;      /* value name -> index in types */
  ol_infer_type *types;
  size_t count, capacity;
  const struct scope *outer;
  const ol_graph *graph;
  ol_strmap declared;   /* value_info names (index) and graph outputs (-2 - index) */
} scope;

typedef struct walker {
  const ol_type_catalogue *types; /* the model's struct types */
  int depth;
  ol_infer_visit_fn visit; /* may be NULL */
  void *user;
  const ol_infer_cache *cache; /* root graph hooks (may be NULL) */
} walker;

static void scope_free(scope *s) {
  ol_strmap_free(&s->names);
  ol_strmap_free(&s->declared);
  free(s->types);
}

static const ol_infer_type *lookup(const scope *s, const char *name) {
  for (; s; s = s->outer) {
    int32_t i = ol_strmap_get(&s->names, name);
    if (i >= 0) return &s->types[i];
  }
  return NULL;
}

/* Defines (or redefines) name in s with type t. */
static ol_status bind(scope *s, const char *name, const ol_infer_type *t) {
  int32_t i = ol_strmap_get(&s->names, name);
  if (i >= 0) {
    s->types[i] = *t;
    return OL_OK;
  }
  if (!ol_grow(&s->types, &s->capacity, s->count, 1, sizeof *s->types, 64))
    return ol_error(OL_OUT_OF_MEMORY, "out of memory inferring shapes");
  s->types[s->count] = *t;
  OL_TRY(ol_strmap_put(&s->names, name, (int32_t)s->count));
  s->count++;
  return OL_OK;
}

/* The declaration of name in the scope's graph (value_info first, then the
 * graph outputs), or NULL. */
static const ol_graph_value *declared_in(const scope *s, const char *name) {
  int32_t i = ol_strmap_get(&s->declared, name);
  if (i >= 0) return &s->graph->value_infos[i];
  if (i <= -2) return &s->graph->outputs[-2 - i];
  return NULL;
}

static ol_status index_declarations(scope *s, const ol_graph *g) {
  for (size_t i = g->num_outputs; i-- > 0;) OL_TRY(ol_strmap_put(&s->declared, g->outputs[i].name, -2 - (int32_t)i));
  for (size_t i = g->num_value_infos; i-- > 0;) OL_TRY(ol_strmap_put(&s->declared, g->value_infos[i].name, (int32_t)i));
  return OL_OK;
}

static ol_status infer_graph(walker *w, const ol_graph *g, Onnx__GraphProto *dst, const scope *outer,
                             const ol_infer_type *seeds, ol_infer_type *results);

/* ------------------------------------------------------------ control flow */

/* The common type of two branch outputs (If) or of a loop-carried value's
 * initial and updated types (Loop, Scan). */
static void unify(const ol_infer_type *a, const ol_infer_type *b, ol_infer_type *out) {
  ol_infer_unknown(out);
  if (!a->known || !b->known) return;
  if (a->proto || b->proto || a->kind != OL_VALUE_TENSOR || b->kind != OL_VALUE_TENSOR) {
    if (a->proto && b->proto && a->kind == b->kind) *out = *a;
    out->encoded = NULL;
    out->has_record = false;
    out->constant = NULL;
    return;
  }
  if (a->dtype != b->dtype) return;
  ol_infer_set_tensor(out, a->dtype, -1, NULL);
  if (a->rank < 0 || a->rank != b->rank) return;
  out->rank = a->rank;
  for (int i = 0; i < a->rank; i++) out->dims[i] = ol_dim_same(a->dims[i], b->dims[i]) ? a->dims[i] : ol_dim_unknown();
}

enum { PLAIN, IF, LOOP, SCAN };

/* What control-flow nodes need from their bodies. */
typedef struct bodies {
  int op;                    /* PLAIN, IF, LOOP, SCAN */
  ol_infer_type *results[2]; /* If: then, else; Loop/Scan: body (output types) */
  size_t counts[2];
} bodies;

static const ol_infer_type *present(const ol_infer_type *t) { return t && t->known ? t : NULL; }

/* The element type alone (a loop-carried value whose shape may change). */
static void dtype_only(const ol_infer_type *t, ol_infer_type *out) {
  ol_infer_unknown(out);
  if (!present(t)) return;
  if (t->kind != OL_VALUE_TENSOR || t->proto) {
    *out = *t;
    out->encoded = NULL;
    out->has_record = false;
    out->constant = NULL;
    out->data_count = -1;
    return;
  }
  ol_infer_set_tensor(out, t->dtype, -1, NULL);
}

/* Seeds of a Loop or Scan body's inputs from the node's inputs (bodies that
 * declare their input types keep the declarations): Loop (M, cond, v...) ->
 * body (iteration, cond, v...); Scan (opset >= 9: states..., scan inputs...)
 * -> body (states..., one slice of each scan input). */
static void body_seeds(const ol_node *n, const ol_infer_type *const *inputs, const ol_graph *body, int op,
                       ol_infer_type *seeds) {
  for (size_t i = 0; i < body->num_inputs; i++) ol_infer_unknown(&seeds[i]);
  if (op == LOOP) {
    if (body->num_inputs > 0) ol_infer_set_tensor(&seeds[0], OL_DTYPE_INT64, 0, NULL);
    if (body->num_inputs > 1) ol_infer_set_tensor(&seeds[1], OL_DTYPE_BOOL, 0, NULL);
    for (size_t i = 2; i < body->num_inputs && i < n->num_inputs; i++) dtype_only(inputs[i], &seeds[i]);
    return;
  }
  int64_t num_scan = ol_attr_int(n, "num_scan_inputs", 0);
  if (num_scan <= 0 || (size_t)num_scan > n->num_inputs || body->num_inputs != n->num_inputs) return;
  size_t first_scan = n->num_inputs - (size_t)num_scan;
  const int64_t *axes;
  int64_t n_axes = ol_attr_ints(n, "scan_input_axes", &axes);
  for (size_t i = 0; i < n->num_inputs; i++) {
    const ol_infer_type *t = present(inputs[i]);
    if (i < first_scan || !t || t->kind != OL_VALUE_TENSOR || t->proto) {
      dtype_only(inputs[i], &seeds[i]);
      continue;
    }
    ol_infer_set_tensor(&seeds[i], t->dtype, -1, NULL);
    int64_t axis = n_axes > (int64_t)(i - first_scan) ? axes[i - first_scan] : 0;
    if (t->rank < 1 || axis < -t->rank || axis >= t->rank) continue;
    if (axis < 0) axis += t->rank;
    ol_dim dims[OL_MAX_RANK];
    for (int d = 0, k = 0; d < t->rank; d++)
      if (d != axis) dims[k++] = t->dims[d];
    ol_infer_set_tensor(&seeds[i], t->dtype, t->rank - 1, dims);
  }
}

/* Outputs of Loop and Scan from the body's output types: loop-carried values
 * merged with their initial types, scan outputs stacked along a new axis
 * (Scan: the scanned extent; Loop: unknown, iterations may stop early). */
static void loop_outputs(const ol_node *n, const ol_infer_type *const *inputs, const bodies *b, ol_infer_type *outputs) {
  const ol_infer_type *r = b->results[0];
  if (!r) return;
  bool loop = b->op == LOOP;
  int64_t num_scan = loop ? 0 : ol_attr_int(n, "num_scan_inputs", 0);
  if (num_scan < 0 || (size_t)num_scan > n->num_inputs || (loop && n->num_inputs < 2)) return;
  size_t carried = loop ? n->num_inputs - 2 : n->num_inputs - (size_t)num_scan;
  size_t skip = loop ? 1 : 0; /* a Loop body returns its condition first */
  ol_dim seq = ol_dim_unknown();
  const ol_infer_type *scanned = !loop && carried < n->num_inputs ? present(inputs[carried]) : NULL;
  if (scanned && scanned->rank >= 1) {
    const int64_t *axes;
    int64_t axis = ol_attr_ints(n, "scan_input_axes", &axes) > 0 ? axes[0] : 0;
    if (axis < 0) axis += scanned->rank;
    if (axis >= 0 && axis < scanned->rank) seq = scanned->dims[axis];
  }
  const int64_t *out_axes;
  int64_t n_out_axes = ol_attr_ints(n, "scan_output_axes", &out_axes);
  for (size_t o = 0; o < n->num_outputs && skip + o < b->counts[0]; o++) {
    const ol_infer_type *body = &r[skip + o];
    if (o < carried) {
      const ol_infer_type *initial = present(inputs[(loop ? 2 : 0) + o]);
      if (initial) unify(initial, body, &outputs[o]);
      continue;
    }
    if (!body->known || body->kind != OL_VALUE_TENSOR || body->proto) continue;
    ol_infer_set_tensor(&outputs[o], body->dtype, -1, NULL);
    if (body->rank < 0 || body->rank + 1 > OL_MAX_RANK) continue;
    int64_t axis = !loop && n_out_axes > (int64_t)(o - carried) ? out_axes[o - carried] : 0;
    if (axis < 0) axis += body->rank + 1;
    if (axis < 0 || axis > body->rank) continue;
    ol_dim dims[OL_MAX_RANK];
    for (int d = 0, k = 0; d <= body->rank; d++) dims[d] = d == axis ? seq : body->dims[k++];
    ol_infer_set_tensor(&outputs[o], body->dtype, body->rank + 1, dims);
  }
}

/* Infers the subgraph attributes of n (np: its copy's NodeProto, may be
 * NULL); b collects the bodies' output types control flow needs. */
static ol_status infer_subgraphs(walker *w, const ol_node *n, const Onnx__NodeProto *np, scope *s,
                                 const ol_infer_type *const *inputs, bodies *b) {
  ol_status st = OL_OK;
  for (size_t a = 0; st == OL_OK && a < n->num_attrs; a++) {
    const ol_attr *attr = &n->attrs[a];
    Onnx__AttributeProto *ap = np && a < np->n_attribute ? np->attribute[a] : NULL;
    for (size_t k = 0; st == OL_OK && attr->graphs && k < attr->count; k++)
      if (!np || (ap && k < ap->n_graphs)) st = infer_graph(w, attr->graphs[k], ap ? ap->graphs[k] : NULL, s, NULL, NULL);
    if (st != OL_OK || !attr->graph || (np && (!ap || !ap->g))) continue;
    const ol_graph *sub = attr->graph;
    int slot = -1;
    if (b->op == IF) slot = strcmp(attr->name, "then_branch") == 0 ? 0 : strcmp(attr->name, "else_branch") == 0 ? 1 : -1;
    if ((b->op == LOOP || b->op == SCAN) && strcmp(attr->name, "body") == 0) slot = 0;
    if (slot < 0 || b->results[slot]) {
      st = infer_graph(w, sub, ap ? ap->g : NULL, s, NULL, NULL);
      continue;
    }
    ol_infer_type *seeds = b->op == IF ? NULL : ol_xcalloc(sub->num_inputs ? sub->num_inputs : 1, sizeof *seeds);
    b->results[slot] = ol_xcalloc(sub->num_outputs ? sub->num_outputs : 1, sizeof *b->results[slot]);
    b->counts[slot] = sub->num_outputs;
    if (!b->results[slot] || (b->op != IF && !seeds)) st = OL_OUT_OF_MEMORY;
    if (st == OL_OK && seeds) body_seeds(n, inputs, sub, b->op, seeds);
    if (st == OL_OK) st = infer_graph(w, sub, ap ? ap->g : NULL, s, seeds, b->results[slot]);
    free(seeds);
  }
  return st;
}

/* ------------------------------------------------------------ nodes */

/* A call of a model-local function: the body specialized for this call site
 * is inferred with the call's input types (records copied whole) and no
 * outer scope; its output types become the call's. */
static ol_status infer_call(walker *w, const ol_node *n, const ol_infer_type *const *inputs, ol_infer_type *outputs) {
  const ol_graph *body = n->function_body;
  ol_infer_type *seeds = ol_xcalloc(body->num_inputs ? body->num_inputs : 1, sizeof *seeds);
  ol_infer_type *results = ol_xcalloc(body->num_outputs ? body->num_outputs : 1, sizeof *results);
  ol_status st = seeds && results ? OL_OK : OL_OUT_OF_MEMORY;
  for (size_t i = 0; st == OL_OK && i < body->num_inputs; i++) {
    if (i < n->num_inputs && inputs[i]) seeds[i] = *inputs[i];
    else ol_infer_unknown(&seeds[i]);
  }
  if (st == OL_OK) st = infer_graph(w, body, NULL, NULL, seeds, results);
  if (st != OL_OK && st != OL_OUT_OF_MEMORY)
    st = ol_error_wrap(st, "in the body of function %s::%s called by node '%s'", n->domain, n->op_type, n->name);
  for (size_t i = 0; st == OL_OK && i < n->num_outputs && i < body->num_outputs; i++) outputs[i] = results[i];
  free(seeds);
  free(results);
  return st;
}

/* An encoded value reaches only the inputs its operator's row accepts
 * structured values on. */
static ol_status check_structured_inputs(const ol_node *n, const ol_infer_type *const *inputs) {
  const ol_op_schema *row = NULL;
  for (size_t i = 0; i < n->num_inputs; i++) {
    if (!inputs[i] || !inputs[i]->known || inputs[i]->kind != OL_VALUE_ENCODED) continue;
    if (!row && !(row = ol_schema_lookup(n))) return OL_OK; /* unknown operator: nothing to say */
    if (i < 32 && (row->structured_inputs >> i & 1u)) continue;
    return ol_error(OL_INVALID_MODEL,
                    "shape inference: node '%s' (%s): input %zu '%s' is a structured (encoded) value, which the "
                    "operator does not take; decode it first (ai.rt::Dequantize)", n->name, n->op_type, i,
                    n->inputs[i]);
  }
  return OL_OK;
}

/* The outputs an incremental inference kept for n, bound without running it. */
static ol_status reuse_node(walker *w, scope *s, const ol_node *n, bool *reused) {
  ol_infer_type *outputs = ol_xcalloc(n->num_outputs ? n->num_outputs : 1, sizeof *outputs);
  if (!outputs) return OL_OUT_OF_MEMORY;
  ol_status st = OL_OK;
  *reused = w->cache->reuse(w->cache->user, n, outputs);
  for (size_t i = 0; *reused && st == OL_OK && i < n->num_outputs; i++)
    if (n->outputs[i][0]) st = bind(s, n->outputs[i], &outputs[i]);
  free(outputs);
  return st;
}

static ol_status infer_node(walker *w, const ol_graph *g, Onnx__GraphProto *dst, scope *s, const ol_node *n) {
  bool root = w->cache && w->depth == 1;
  if (root) {
    bool reused = false;
    OL_TRY(reuse_node(w, s, n, &reused));
    if (reused) return OL_OK;
  }
  const ol_infer_type **inputs = ol_xcalloc(n->num_inputs ? n->num_inputs : 1, sizeof *inputs);
  ol_infer_type *outputs = ol_xcalloc(n->num_outputs ? n->num_outputs : 1, sizeof *outputs);
  ol_status st = inputs && outputs ? OL_OK : OL_OUT_OF_MEMORY;
  for (size_t i = 0; st == OL_OK && i < n->num_inputs; i++) inputs[i] = n->inputs[i][0] ? lookup(s, n->inputs[i]) : NULL;
  for (size_t i = 0; st == OL_OK && i < n->num_outputs; i++) ol_infer_unknown(&outputs[i]);
  bodies b = {PLAIN, {NULL, NULL}, {0, 0}};
  if (n->domain[0] == 0 && !n->function_body) {
    if (strcmp(n->op_type, "If") == 0) b.op = IF;
    else if (strcmp(n->op_type, "Loop") == 0) b.op = LOOP;
    else if (strcmp(n->op_type, "Scan") == 0 && n->opset >= 9) b.op = SCAN;
  }
  /* subgraph bodies first: their intermediates get value_info too */
  if (st == OL_OK) st = infer_subgraphs(w, n, dst ? dst->node[n->index] : NULL, s, inputs, &b);
  if (st == OL_OK && w->visit) st = w->visit(w->user, n, inputs);
  if (st == OL_OK && n->function_body) st = infer_call(w, n, inputs, outputs);
  if (st == OL_OK && !n->function_body && b.op == PLAIN) st = check_structured_inputs(n, inputs);
  if (st == OL_OK && !n->function_body) {
    if (b.op == IF && b.results[0] && b.results[1]) {
      for (size_t i = 0; i < n->num_outputs && i < b.counts[0] && i < b.counts[1]; i++)
        unify(&b.results[0][i], &b.results[1][i], &outputs[i]);
    } else if (b.op == LOOP || b.op == SCAN) {
      loop_outputs(n, inputs, &b, outputs);
    } else if (b.op == PLAIN) {
      ol_infer_fn fn = ol_schema_infer(n);
      if (fn) {
        ol_infer_ctx ctx = {n, n->num_inputs, inputs, n->num_outputs, outputs, w->types};
        st = fn(&ctx);
      }
    }
  }
  for (size_t i = 0; st == OL_OK && i < n->num_outputs; i++) {
    const char *name = n->outputs[i];
    if (!name[0]) continue;
    ol_infer_type declared, merged;
    ol_infer_from_declared(declared_in(s, name), &declared);
    st = ol_infer_merge(n, name, &outputs[i], &declared, &merged);
    if (st == OL_OK) st = bind(s, name, &merged);
    if (st == OL_OK) outputs[i] = merged;
    if (st != OL_OK || !dst || !ol_infer_recordable(&merged)) continue;
    /* a graph output's declaration is refined in place, other values go to value_info */
    bool is_output = false;
    for (size_t k = 0; st == OL_OK && k < g->num_outputs; k++)
      if (strcmp(g->outputs[k].name, name) == 0 && k < dst->n_output) {
        is_output = true;
        st = ol_infer_record_in(dst->output[k], &merged);
      }
    if (st == OL_OK && !is_output) st = ol_infer_record(dst, name, &merged);
  }
  if (st == OL_OK && root) st = w->cache->store(w->cache->user, n, outputs);
  free(b.results[0]);
  free(b.results[1]);
  free(inputs);
  free(outputs);
  return st;
}

/* ------------------------------------------------------------ graphs */

static ol_status seed(walker *w, scope *s, const ol_graph *g, const ol_infer_type *seeds) {
  for (size_t i = 0; i < g->num_inputs; i++) {
    ol_infer_type t;
    ol_infer_from_declared(&g->inputs[i], &t);
    if (!t.known && seeds) t = seeds[i];
    OL_TRY(bind(s, g->inputs[i].name, &t));
    if (w->cache && w->depth == 1) OL_TRY(w->cache->seeded(w->cache->user, g->inputs[i].name, &t));
  }
  for (size_t i = 0; i < g->num_initializers; i++) {
    const ol_initializer *init = &g->initializers[i];
    if (ol_strmap_get(&s->names, init->name) >= 0) continue; /* an input's default: may be overridden */
    ol_infer_type t;
    if (init->encoded) {
      ol_infer_unknown(&t);
      t.known = true;
      t.kind = OL_VALUE_ENCODED;
      t.encoded = init->proto;
      t.has_record = true;
      ol_status st = ol_structured_describe(init->proto, w->types, &t.record);
      if (st != OL_OK)
        return st == OL_OUT_OF_MEMORY ? st
                                      : ol_error_wrap(OL_INVALID_MODEL, "shape inference: graph '%s': encoded initializer",
                                                      g->name);
    } else if (init->paged) {
      ol_infer_unknown(&t);
      t.known = true;
      t.kind = OL_VALUE_STRUCT;
      t.proto = ol_paged_cache_type(); /* static: never freed */
    } else if (init->value && init->value->kind == OL_VALUE_TENSOR) {
      ol_infer_from_tensor(&init->value->tensor, &t);
    } else if (init->unread) { /* declared data type and dims; its values are not known */
      const Onnx__TensorProto *tp = init->proto;
      ol_dim dims[OL_MAX_RANK];
      for (size_t d = 0; d < tp->n_dims; d++) dims[d] = ol_dim_of(tp->dims[d]);
      ol_infer_set_tensor(&t, (ol_dtype)tp->data_type, (int)tp->n_dims, dims);
    } else {
      continue;
    }
    OL_TRY(bind(s, init->name, &t));
    if (w->cache && w->depth == 1) OL_TRY(w->cache->seeded(w->cache->user, init->name, &t));
  }
  return OL_OK;
}

/* Node indices in dependency order (the listed order when it is one). */
static ol_status order_nodes(const ol_graph *g, size_t *order) {
  ol_strmap producer;
  ol_strmap_init(&producer);
  ol_status st = OL_OK;
  for (size_t i = 0; st == OL_OK && i < g->num_nodes; i++)
    for (size_t k = 0; st == OL_OK && k < g->nodes[i].num_outputs; k++)
      if (g->nodes[i].outputs[k][0]) st = ol_strmap_put(&producer, g->nodes[i].outputs[k], (int32_t)i);
  bool *done = st == OL_OK ? ol_xcalloc(g->num_nodes ? g->num_nodes : 1, sizeof *done) : NULL;
  if (st == OL_OK && !done) st = OL_OUT_OF_MEMORY;
  size_t placed = 0;
  while (st == OL_OK && placed < g->num_nodes) {
    size_t before = placed;
    for (size_t i = 0; i < g->num_nodes; i++) {
      if (done[i]) continue;
      bool ready = true;
      for (size_t k = 0; ready && k < g->nodes[i].num_inputs; k++) {
        int32_t p = g->nodes[i].inputs[k][0] ? ol_strmap_get(&producer, g->nodes[i].inputs[k]) : -1;
        ready = p < 0 || (size_t)p == i || done[p];
      }
      if (ready) {
        done[i] = true;
        order[placed++] = i;
      }
    }
    if (placed == before) /* a cycle: the rest in listed order (their inputs stay unknown) */
      for (size_t i = 0; i < g->num_nodes; i++)
        if (!done[i]) {
          done[i] = true;
          order[placed++] = i;
        }
  }
  free(done);
  ol_strmap_free(&producer);
  return st;
}

/* Infers g (its proto copy is dst). seeds (may be NULL) give the types of
 * g's inputs where g does not declare them; results (may be NULL) receive
 * the types of g's outputs. */
static ol_status infer_graph(walker *w, const ol_graph *g, Onnx__GraphProto *dst, const scope *outer,
                             const ol_infer_type *seeds, ol_infer_type *results) {
  if (w->depth >= OL_MAX_GRAPH_DEPTH)
    return ol_error(OL_INVALID_MODEL, "shape inference: graph '%s' nests deeper than %d subgraphs", g->name,
                    OL_MAX_GRAPH_DEPTH);
  if (dst && dst->n_node != g->num_nodes)
    return ol_error(OL_INTERNAL, "shape inference: graph '%s' does not match its copy", g->name);
  w->depth++;
  scope s = {.outer = outer, .graph = g};
  ol_strmap_init(&s.names);
  ol_strmap_init(&s.declared);
  size_t *order = ol_xcalloc(g->num_nodes ? g->num_nodes : 1, sizeof *order);
  ol_status st = order ? index_declarations(&s, g) : OL_OUT_OF_MEMORY;
  if (st == OL_OK) st = seed(w, &s, g, seeds);
  if (st == OL_OK) st = order_nodes(g, order);
  for (size_t i = 0; st == OL_OK && i < g->num_nodes; i++) st = infer_node(w, g, dst, &s, &g->nodes[order[i]]);
  for (size_t i = 0; st == OL_OK && results && i < g->num_outputs; i++) {
    const ol_infer_type *t = lookup(&s, g->outputs[i].name);
    if (t) results[i] = *t;
    else ol_infer_from_declared(&g->outputs[i], &results[i]);
  }
  free(order);
  scope_free(&s);
  w->depth--;
  return st;
}

ol_status ol_model_infer_shapes(const ol_model *model, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_infer_shapes: out is NULL");
  *out = NULL;
  if (!model || !model->data || !model->data->graph)
    return ol_error(OL_INVALID_ARGUMENT, "ol_model_infer_shapes: model is NULL");
  void *bytes;
  size_t size;
  OL_TRY(ol_model_serialize(model, &bytes, &size));
  Onnx__ModelProto *copy = onnx__model_proto__unpack(NULL, size, bytes);
  free(bytes);
  if (!copy) return ol_error(OL_OUT_OF_MEMORY, "shape inference: cannot copy the model");
  walker w = {model->data->types, 0, NULL, NULL, NULL};
  ol_status st = infer_graph(&w, model->data->graph, copy->graph, NULL, NULL, NULL);
  if (st != OL_OK) {
    onnx__model_proto__free_unpacked(copy, NULL);
    return st;
  }
  /* external data the source read is shared through its owner, not read
   * again (it may be gone); other models stand alone, not keeping the
   * source's bytes alive */
  if (!ol_proto_owner_read_external(model->data->owner)) return ol_model_from_proto(copy, NULL, out);
  ol_proto_patch *patch = ol_xcalloc(1, sizeof *patch);
  if (!patch || !ol_proto_patch_adopt_message(patch, &copy->base)) {
    free(patch);
    onnx__model_proto__free_unpacked(copy, NULL);
    return ol_error(OL_OUT_OF_MEMORY, "shape inference: out of memory");
  }
  return ol_model_from_patch(patch, copy, model->data->owner, out);
}

ol_status ol_infer_walk(const ol_model_data *model, ol_infer_visit_fn visit, void *user) {
  walker w = {model->types, 0, visit, user, NULL};
  return infer_graph(&w, model->graph, NULL, NULL, NULL, NULL);
}

ol_status ol_infer_walk_cached(const ol_model_data *model, const ol_infer_cache *cache) {
  walker w = {model->types, 0, NULL, NULL, cache};
  return infer_graph(&w, model->graph, NULL, NULL, NULL, NULL);
}
