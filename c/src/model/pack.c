/* Weight packing at load (see pack.h): the schema rows' pack hooks say what
 * each kernel wants, this pass decides what is safe and does it. */
#include "model/pack.h"

#include <stdlib.h>
#include <string.h>

#include "ir/packed_views.h"
#include "ops/schema.h"

/* What a node's kernel asked for (granted together or not at all). */
typedef struct node_requests {
  size_t count;
  ol_pack_request r[OL_MAX_PACK_REQUESTS];
} node_requests;

/* Per root initializer: the packing its readers agreed on, or refused. */
typedef struct weight_state {
  const ol_pack_request *agreed;
  bool refused;
} weight_state;

typedef struct pack_pass {
  ol_model_data *d;
  const ol_graph *g;
  node_requests *requests; /* per node */
  weight_state *weights;   /* per initializer */
} pack_pass;

static int64_t initializer_index(const ol_graph *g, const char *name) {
  const ol_initializer *init = name[0] ? ol_graph_find_initializer(g, name) : NULL;
  return init ? init - g->initializers : -1;
}

static void refuse_name(pack_pass *p, const char *name) {
  int64_t i = initializer_index(p->g, name);
  if (i >= 0) p->weights[i].refused = true;
}

/* Everything a subgraph or function body reads stays dense. */
static void refuse_nested_reads(pack_pass *p, const ol_graph *g) {
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    if (g != p->g)
      for (size_t j = 0; j < n->num_inputs; j++) refuse_name(p, n->inputs[j]);
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *at = &n->attrs[a];
      if (at->graph) refuse_nested_reads(p, at->graph);
      for (size_t k = 0; at->graphs && k < at->count; k++) refuse_nested_reads(p, at->graphs[k]);
    }
    if (n->function_body) refuse_nested_reads(p, n->function_body);
  }
}

static void refuse_interface_and_annotations(pack_pass *p) {
  const ol_graph *g = p->g;
  for (size_t i = 0; i < g->num_inputs; i++) refuse_name(p, g->inputs[i].name);
  for (size_t i = 0; i < g->num_outputs; i++) refuse_name(p, g->outputs[i].name);
  const Onnx__GraphProto *gp = p->d->proto->graph;
  for (size_t i = 0; i < gp->n_quantization_annotation; i++) {
    const Onnx__TensorAnnotation *a = gp->quantization_annotation[i];
    if (a->tensor_name) refuse_name(p, a->tensor_name);
    for (size_t k = 0; k < a->n_quant_parameter_tensor_names; k++)
      if (a->quant_parameter_tensor_names[k]->value) refuse_name(p, a->quant_parameter_tensor_names[k]->value);
  }
}

/* The plain tensor initializer at index i, or NULL. */
static ol_tensor *plain_tensor(const ol_graph *g, int64_t i) {
  const ol_initializer *init = i >= 0 ? &g->initializers[i] : NULL;
  return init && !init->encoded && init->value && init->value->kind == OL_VALUE_TENSOR ? &init->value->tensor : NULL;
}

/* Node n's requests, each for a plain initializer held in the model's own
 * wire bytes (a request for anything else drops the node's whole set). */
static void ask(pack_pass *p, const ol_node *n, node_requests *out) {
  out->count = 0;
  const ol_op_schema *row = n->function_body ? NULL : ol_schema_lookup(n);
  if (!row || !row->pack) return;
  const ol_tensor *constants[32] = {0};
  size_t inputs = n->num_inputs < 32 ? n->num_inputs : 32;
  for (size_t j = 0; j < inputs; j++) constants[j] = plain_tensor(p->g, initializer_index(p->g, n->inputs[j]));
  size_t count = row->pack(n, constants, out->r);
  for (size_t k = 0; k < count; k++) {
    const ol_pack_request *r = &out->r[k];
    const ol_tensor *t = r->input < inputs ? constants[r->input] : NULL;
    const ol_wire_view *v = t ? ol_proto_owner_own_view(p->d->owner, ol_tdata(t)) : NULL;
    if (!v || v->encoded || v->packing.kind || v->length != ol_dtype_storage_bytes(t->dtype, ol_tcount(t))) return;
  }
  out->count = count;
}

static bool same_packing(const ol_pack_request *a, const ol_pack_request *b) {
  return a->packing.kind == b->packing.kind && memcmp(a->packing.params, b->packing.params, sizeof a->packing.params) == 0 &&
         a->from_dense == b->from_dense;
}

static const ol_pack_request *request_for(const node_requests *nr, size_t input) {
  for (size_t k = 0; k < nr->count; k++)
    if (nr->r[k].input == input) return &nr->r[k];
  return NULL;
}

/* The state of the weight node i's k-th request is for. */
static weight_state *requested(pack_pass *p, size_t i, size_t k) {
  const ol_node *n = &p->g->nodes[i];
  return &p->weights[initializer_index(p->g, n->inputs[p->requests[i].r[k].input])];
}

/* A weight is packed only when every root-graph read of it comes with the
 * same request. */
static void agree(pack_pass *p) {
  const ol_graph *g = p->g;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    for (size_t j = 0; j < n->num_inputs; j++) {
      int64_t w = initializer_index(g, n->inputs[j]);
      if (w < 0) continue;
      const ol_pack_request *r = request_for(&p->requests[i], j);
      weight_state *st = &p->weights[w];
      if (!r) st->refused = true;
      else if (!st->agreed) st->agreed = r;
      else if (!same_packing(st->agreed, r)) st->refused = true;
    }
  }
  /* a node's requests stand or fall together */
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < g->num_nodes; i++) {
      const node_requests *nr = &p->requests[i];
      bool any_refused = false;
      for (size_t k = 0; k < nr->count; k++) any_refused |= requested(p, i, k)->refused;
      for (size_t k = 0; any_refused && k < nr->count; k++) {
        changed |= !requested(p, i, k)->refused;
        requested(p, i, k)->refused = true;
      }
    }
  }
}

/* Packs the agreed weights in place. */
static void apply(pack_pass *p) {
  void *scratch = NULL;
  size_t scratch_bytes = 0;
  for (size_t w = 0; w < p->g->num_initializers; w++) {
    const ol_pack_request *r = p->weights[w].agreed;
    if (!r || p->weights[w].refused) continue;
    ol_tensor *t = plain_tensor(p->g, (int64_t)w);
    ol_wire_view *v = ol_proto_owner_own_view(p->d->owner, ol_tdata(t));
    if (r->scratch_bytes > scratch_bytes) {
      free(scratch);
      scratch = malloc(r->scratch_bytes);
      scratch_bytes = scratch ? r->scratch_bytes : 0;
      if (!scratch) break; /* an optimization: the rest stays dense */
    }
    r->from_dense(&r->packing, ol_tdata(t), scratch);
    t->packing = r->packing;
    v->packing = r->packing;
  }
  free(scratch);
}

ol_status ol_model_pack_weights(ol_model_data *d) {
  const ol_graph *g = d->graph;
  if (!g || !d->owner || !d->owner->wire || d->owner->base || !d->owner->weights.count) return OL_OK;
  pack_pass p = {d, g, calloc(g->num_nodes + 1, sizeof(node_requests)),
                 calloc(g->num_initializers + 1, sizeof(weight_state))};
  if (p.requests && p.weights) { /* an optimization: without memory, everything stays dense */
    refuse_interface_and_annotations(&p);
    refuse_nested_reads(&p, g);
    for (size_t i = 0; i < g->num_nodes; i++) ask(&p, &g->nodes[i], &p.requests[i]);
    agree(&p);
    apply(&p);
  }
  free(p.requests);
  free(p.weights);
  return OL_OK;
}
