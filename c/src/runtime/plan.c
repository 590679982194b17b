/* Plan construction (slots, topological order, kernels, release schedule)
 * and plan execution. */
#include "runtime/plan.h"

#include "runtime/fuse.h"

#include <stdlib.h>
#include <string.h>

#include "core/pool.h"

/* ------------------------------------------------------------ building */

typedef struct plan_builder {
  ol_plan *plan;
  size_t cap_slots;
  int32_t *producer;    /* slot -> producing node index, -1 otherwise */
  size_t cap_captures;
} plan_builder;


/* Input j of the step is packed or pitched in a way its kernel does not read in place. */
static bool needs_dense(const ol_plan_step *step, size_t j, const ol_tensor *t) {
  uint32_t bit = j < 32 ? 1u << j : 0;
  if (ol_tensor_is_packed(t)) return !(step->packed_inputs & bit);
  return t->pitch > 0 && ol_tensor_is_strided(t) && !(step->pitched_inputs & bit);
}

static ol_status add_slot(plan_builder *b, const char *name, int32_t *out) {
  ol_plan *p = b->plan;
  if (p->num_slots == b->cap_slots) {
    size_t cap = b->cap_slots ? b->cap_slots * 2 : 64;
    const char **names = realloc(p->slot_names, cap * sizeof *names);
    if (names) p->slot_names = names;
    int32_t *producer = realloc(b->producer, cap * sizeof *producer);
    if (producer) b->producer = producer;
    if (!names || !producer) return ol_error(OL_OUT_OF_MEMORY, "out of memory while planning");
    b->cap_slots = cap;
  }
  int32_t slot = (int32_t)p->num_slots++;
  p->slot_names[slot] = name;
  b->producer[slot] = -1;
  OL_TRY(ol_strmap_put(&p->slot_of, name, slot));
  *out = slot;
  return OL_OK;
}

/* Slot for a name used in this graph: defined here, or an outer-scope capture. */
static ol_status use_name(plan_builder *b, const ol_node *node, const char *name, int32_t *out) {
  ol_plan *p = b->plan;
  int32_t slot = ol_strmap_get(&p->slot_of, name);
  if (slot >= 0) {
    *out = slot;
    return OL_OK;
  }
  if (!p->graph->parent)
    return ol_error(OL_INVALID_MODEL, "node '%s' (%s): input '%s' is not a graph input, initializer or node output",
                    node->name, node->op_type, name);
  OL_TRY(add_slot(b, name, &slot));
  if (p->num_captures == b->cap_captures) {
    size_t cap = b->cap_captures ? b->cap_captures * 2 : 8;
    int32_t *slots = realloc(p->capture_slots, cap * sizeof *slots);
    if (slots) p->capture_slots = slots;
    const char **names = realloc(p->capture_names, cap * sizeof *names);
    if (names) p->capture_names = names;
    if (!slots || !names) return ol_error(OL_OUT_OF_MEMORY, "out of memory while planning");
    b->cap_captures = cap;
  }
  p->capture_slots[p->num_captures] = slot;
  p->capture_names[p->num_captures++] = name;
  *out = slot;
  return OL_OK;
}

static size_t count_subgraphs(const ol_node *n) {
  size_t count = n->function_body ? 1 : 0;
  for (size_t a = 0; a < n->num_attrs; a++) {
    if (n->attrs[a].type == OL_ATTR_GRAPH) count++;
    if (n->attrs[a].type == OL_ATTR_GRAPHS) count += n->attrs[a].count;
  }
  return count;
}

static ol_status build_children(plan_builder *b) {
  ol_plan *p = b->plan;
  const ol_graph *g = p->graph;
  size_t total = 0;
  for (size_t i = 0; i < g->num_nodes; i++) total += count_subgraphs(&g->nodes[i]);
  if (!total) return OL_OK;
  p->child_graphs = ol_xcalloc(total, sizeof *p->child_graphs);
  p->children = ol_xcalloc(total, sizeof *p->children);
  if (!p->child_graphs || !p->children) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    if (n->function_body) {
      p->child_graphs[p->num_children] = n->function_body;
      ol_status s = ol_plan_create(n->function_body, p, &p->children[p->num_children]);
      if (s != OL_OK) return ol_error_wrap(s, "function %s called by node '%s'", n->op_type, n->name);
      p->num_children++;
    }
    for (size_t a = 0; a < n->num_attrs; a++) {
      const ol_attr *attr = &n->attrs[a];
      size_t count = attr->type == OL_ATTR_GRAPH ? 1 : attr->type == OL_ATTR_GRAPHS ? attr->count : 0;
      for (size_t k = 0; k < count; k++) {
        const ol_graph *sub = attr->type == OL_ATTR_GRAPH ? attr->graph : attr->graphs[k];
        p->child_graphs[p->num_children] = sub;
        ol_status s = ol_plan_create(sub, p, &p->children[p->num_children]);
        if (s != OL_OK) return ol_error_wrap(s, "subgraph '%s' of node '%s' (%s)", attr->name, n->name, n->op_type);
        p->num_children++;
      }
    }
  }
  return OL_OK;
}

/* Children of node n are the plans whose graphs hang off n's attributes. */
static bool child_belongs_to(const ol_graph *child, const ol_node *n) {
  if (n->function_body == child) return true;
  for (size_t a = 0; a < n->num_attrs; a++) {
    const ol_attr *attr = &n->attrs[a];
    if (attr->type == OL_ATTR_GRAPH && attr->graph == child) return true;
    if (attr->type == OL_ATTR_GRAPHS)
      for (size_t k = 0; k < attr->count; k++)
        if (attr->graphs[k] == child) return true;
  }
  return false;
}

/* Every slot node n reads: its inputs and the captures of its subgraphs. */
typedef struct node_uses {
  int32_t *slots;
  size_t count;
} node_uses;

static ol_status collect_uses(plan_builder *b, const ol_node *n, node_uses *u) {
  ol_plan *p = b->plan;
  size_t cap = n->num_inputs;
  for (size_t c = 0; c < p->num_children; c++)
    if (child_belongs_to(p->child_graphs[c], n)) cap += p->children[c]->num_captures;
  u->slots = ol_xcalloc(cap, sizeof(int32_t));
  if (!u->slots) return OL_OUT_OF_MEMORY;
  u->count = 0;
  for (size_t i = 0; i < n->num_inputs; i++)
    if (n->inputs[i][0]) OL_TRY(use_name(b, n, n->inputs[i], &u->slots[u->count++]));
  for (size_t c = 0; c < p->num_children; c++) {
    if (!child_belongs_to(p->child_graphs[c], n)) continue;
    const ol_plan *child = p->children[c];
    for (size_t k = 0; k < child->num_captures; k++)
      OL_TRY(use_name(b, n, child->capture_names[k], &u->slots[u->count++]));
  }
  return OL_OK;
}

/* Kahn's algorithm, keeping the file order among ready nodes. */
static ol_status topological_order(plan_builder *b, node_uses *uses, size_t *order) {
  const ol_graph *g = b->plan->graph;
  size_t n = g->num_nodes;
  int32_t *pending = ol_xcalloc(n, sizeof(int32_t));
  size_t *queue = ol_xcalloc(n, sizeof(size_t));
  if (!pending || !queue) {
    free(pending);
    free(queue);
    return OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < n; i++)
    for (size_t k = 0; k < uses[i].count; k++)
      if (b->producer[uses[i].slots[k]] >= 0) pending[i]++;
  size_t head = 0, tail = 0, done = 0;
  for (size_t i = 0; i < n; i++)
    if (!pending[i]) queue[tail++] = i;
  while (head < tail) {
    size_t i = queue[head++];
    order[done++] = i;
    const ol_node *node = &g->nodes[i];
    for (size_t o = 0; o < node->num_outputs; o++) {
      if (!node->outputs[o][0]) continue;
      int32_t slot = ol_strmap_get(&b->plan->slot_of, node->outputs[o]);
      for (size_t j = 0; j < n; j++)
        for (size_t k = 0; k < uses[j].count; k++)
          if (uses[j].slots[k] == slot && --pending[j] == 0) queue[tail++] = j;
    }
  }
  ol_status s = OL_OK;
  if (done != n) {
    for (size_t i = 0; i < n; i++)
      if (pending[i]) {
        s = ol_error(OL_INVALID_MODEL, "graph '%s' has a cycle through node '%s' (%s)", g->name,
                     g->nodes[i].name, g->nodes[i].op_type);
        break;
      }
  }
  free(pending);
  free(queue);
  return s;
}

/* Root graphs: which graph input each node input reads, directly or through
 * a chain of forwarding nodes (OL_SCHEMA_FORWARDS: bindings insert Identity
 * nodes when a bound input has several readers); append reservations are
 * offered only for those. */
static ol_status resolve_graph_inputs(plan_builder *b, ol_plan_step *step) {
  ol_plan *p = b->plan;
  const ol_node *n = step->node;
  step->in_graph_input = ol_xcalloc(n->num_inputs + 1, sizeof(int32_t));
  if (!step->in_graph_input) return OL_OUT_OF_MEMORY;
  for (size_t j = 0; j < n->num_inputs; j++) {
    int32_t slot = step->in_slots[j], found = -1;
    for (int hops = 0; slot >= 0 && found < 0 && hops < 64; hops++) {
      for (size_t i = 0; i < p->graph->num_inputs && found < 0; i++)
        if (p->input_slots[i] == slot) found = (int32_t)i;
      int32_t producer = found < 0 ? b->producer[slot] : -1;
      const ol_node *id = producer >= 0 ? &p->graph->nodes[producer] : NULL;
      const ol_op_schema *row = id ? ol_schema_lookup(id) : NULL;
      if (!row || !(row->flags & OL_SCHEMA_FORWARDS) || id->num_inputs != 1 || !id->inputs[0][0]) break;
      slot = ol_strmap_get(&p->slot_of, id->inputs[0]);
    }
    step->in_graph_input[j] = found;
  }
  return OL_OK;
}

/* Bit j: output j of the step is a graph output (kept past the run). */
static uint32_t kept_outputs(const ol_plan *p, const ol_plan_step *step) {
  uint32_t mask = 0;
  for (size_t j = 0; j < step->node->num_outputs && j < 32; j++)
    if (step->out_slots[j] >= 0 && p->keep[step->out_slots[j]]) mask |= 1u << j;
  return mask;
}

/* Slots for the graph inputs, then initializers (an input may carry an
 * initializer default), then every node output. */
static ol_status declare_slots(plan_builder *b) {
  ol_plan *p = b->plan;
  const ol_graph *g = p->graph;
  p->input_slots = ol_xcalloc(g->num_inputs, sizeof(int32_t));
  p->output_slots = ol_xcalloc(g->num_outputs, sizeof(int32_t));
  p->const_slots = ol_xcalloc(g->num_initializers, sizeof(int32_t));
  p->const_values = ol_xcalloc(g->num_initializers, sizeof(ol_value *));
  if (!p->input_slots || !p->output_slots || !p->const_slots || !p->const_values) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < g->num_inputs; i++) {
    if (ol_strmap_get(&p->slot_of, g->inputs[i].name) >= 0)
      return ol_error(OL_INVALID_MODEL, "graph '%s': input '%s' is declared twice", g->name, g->inputs[i].name);
    OL_TRY(add_slot(b, g->inputs[i].name, &p->input_slots[i]));
  }
  for (size_t i = 0; i < g->num_initializers; i++) {
    int32_t slot = ol_strmap_get(&p->slot_of, g->initializers[i].name);
    if (slot < 0) OL_TRY(add_slot(b, g->initializers[i].name, &slot));
    p->const_slots[p->num_consts] = slot;
    p->const_values[p->num_consts++] = g->initializers[i].value;
  }
  for (size_t i = 0; i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    for (size_t o = 0; o < n->num_outputs; o++) {
      if (!n->outputs[o][0]) continue;
      if (ol_strmap_get(&p->slot_of, n->outputs[o]) >= 0)
        return ol_error(OL_INVALID_MODEL, "node '%s' (%s): output '%s' is already defined in graph '%s'",
                        n->name, n->op_type, n->outputs[o], g->name);
      int32_t slot;
      OL_TRY(add_slot(b, n->outputs[o], &slot));
      b->producer[slot] = (int32_t)i;
    }
  }
  return OL_OK;
}

/* The graph outputs' slots (a subgraph may output an outer-scope value). */
static ol_status resolve_outputs(plan_builder *b) {
  ol_plan *p = b->plan;
  const ol_graph *g = p->graph;
  for (size_t i = 0; i < g->num_outputs; i++) {
    int32_t slot = ol_strmap_get(&p->slot_of, g->outputs[i].name);
    if (slot < 0 && g->parent)
      OL_TRY(use_name(b, &(ol_node){.name = "", .op_type = "graph output"}, g->outputs[i].name, &slot));
    if (slot < 0)
      return ol_error(OL_INVALID_MODEL, "graph '%s': output '%s' is not produced by any node, input or initializer",
                      g->name, g->outputs[i].name);
    p->output_slots[i] = slot;
  }
  return OL_OK;
}

/* Each node's schema row (NULL for function calls); an unknown operator is
 * an error naming it. */
static ol_status find_rows(const ol_graph *g, const ol_op_schema **rows) {
  for (size_t i = 0; i < g->num_nodes; i++)
    if (!g->nodes[i].function_body) OL_TRY(ol_schema_find(&g->nodes[i], &rows[i]));
  return OL_OK;
}

static ol_status apply_fusions(plan_builder *b, node_uses *uses, const ol_op_schema **rows, bool *skip,
                               ol_fused *fused) {
  const ol_graph *g = b->plan->graph;
  int32_t **use_slots = ol_xcalloc(g->num_nodes + 1, sizeof *use_slots);
  size_t *use_counts = ol_xcalloc(g->num_nodes + 1, sizeof *use_counts);
  ol_status s = (!use_slots || !use_counts) ? OL_OUT_OF_MEMORY : OL_OK;
  for (size_t i = 0; s == OL_OK && i < g->num_nodes; i++) {
    use_slots[i] = uses[i].slots;
    use_counts[i] = uses[i].count;
  }
  if (s == OL_OK)
    s = ol_fuse_apply(g, rows, b->producer, use_slots, use_counts, b->plan->output_slots, skip, fused);
  free(use_slots);
  free(use_counts);
  return s;
}

/* The step of node i (k-th in order): slots, kernel and the layouts it reads
 * in place; last_use records where each slot is read or written last. */
static ol_status make_step(plan_builder *b, size_t k, size_t i, const node_uses *uses, const ol_op_schema *row,
                           bool skipped, ol_fused *fused, int32_t *last_use) {
  ol_plan *p = b->plan;
  const ol_node *n = &p->graph->nodes[i];
  ol_plan_step *step = &p->steps[k];
  step->node = n;
  step->row = row;
  step->skipped = skipped;
  step->in_slots = ol_xcalloc(n->num_inputs, sizeof(int32_t));
  step->out_slots = ol_xcalloc(n->num_outputs, sizeof(int32_t));
  if (!step->in_slots || !step->out_slots) return OL_OUT_OF_MEMORY;
  for (size_t j = 0; j < n->num_inputs; j++)
    step->in_slots[j] = n->inputs[j][0] ? ol_strmap_get(&p->slot_of, n->inputs[j]) : -1;
  if (fused->kernel) step->in_slots[fused->fusion->input] = fused->slot;
  if (!p->graph->parent) OL_TRY(resolve_graph_inputs(b, step));
  for (size_t j = 0; j < n->num_outputs; j++) {
    step->out_slots[j] = n->outputs[j][0] ? ol_strmap_get(&p->slot_of, n->outputs[j]) : -1;
    if (step->out_slots[j] >= 0) last_use[step->out_slots[j]] = (int32_t)k;
  }
  for (size_t u = 0; u < uses->count; u++) last_use[uses->slots[u]] = (int32_t)k;
  if (skipped) return OL_OK; /* validated by the registry, computed by its reader */
  ol_status s;
  if (fused->kernel) {
    step->kernel = fused->kernel, fused->kernel = NULL;
    step->pitched_inputs = fused->fusion->pitched_inputs;
    step->packed_inputs = fused->fusion->packed_inputs;
    s = OL_OK;
  } else if (n->function_body) {
    s = ol_function_call_create(n, &step->kernel);
  } else {
    step->pitched_inputs = row->pitched_inputs;
    step->packed_inputs = row->packed_inputs;
    s = row->create(n, &step->kernel);
  }
  return s == OL_OK ? OL_OK : ol_error_wrap(s, "creating kernel for node '%s' (%s)", n->name, n->op_type);
}

/* Each slot is released after its last use (graph outputs are kept). */
static ol_status schedule_releases(ol_plan *p, const int32_t *last_use) {
  for (size_t slot = 0; slot < p->num_slots; slot++)
    if (last_use[slot] >= 0 && !p->keep[slot]) p->steps[last_use[slot]].num_release++;
  for (size_t k = 0; k < p->num_steps; k++) {
    p->steps[k].release = ol_xcalloc(p->steps[k].num_release, sizeof(int32_t));
    if (!p->steps[k].release) return OL_OUT_OF_MEMORY;
    p->steps[k].num_release = 0;
  }
  for (size_t slot = 0; slot < p->num_slots; slot++)
    if (last_use[slot] >= 0 && !p->keep[slot]) {
      ol_plan_step *step = &p->steps[last_use[slot]];
      step->release[step->num_release++] = (int32_t)slot;
    }
  for (size_t k = 0; k < p->num_steps; k++) p->steps[k].kept_outputs = kept_outputs(p, &p->steps[k]);
  return OL_OK;
}

static ol_status make_steps(plan_builder *b, const size_t *order, const node_uses *uses,
                            const ol_op_schema **rows, const bool *skip, ol_fused *fused) {
  ol_plan *p = b->plan;
  const ol_graph *g = p->graph;
  p->steps = ol_xcalloc(g->num_nodes, sizeof *p->steps);
  p->keep = ol_xcalloc(p->num_slots, sizeof(bool));
  int32_t *last_use = malloc(p->num_slots * sizeof(int32_t) + 1);
  ol_status s = (!p->steps || !p->keep || !last_use) ? OL_OUT_OF_MEMORY : OL_OK;
  if (s == OL_OK) {
    for (size_t i = 0; i < p->num_slots; i++) last_use[i] = -1;
    for (size_t i = 0; i < g->num_outputs; i++) p->keep[p->output_slots[i]] = true;
    p->num_steps = g->num_nodes;
  }
  for (size_t k = 0; k < g->num_nodes && s == OL_OK; k++) {
    size_t i = order[k];
    s = make_step(b, k, i, &uses[i], rows[i], skip[i], &fused[i], last_use);
  }
  if (s == OL_OK) s = schedule_releases(p, last_use);
  free(last_use);
  return s;
}

static ol_status build(plan_builder *b) {
  const ol_graph *g = b->plan->graph;
  OL_TRY(declare_slots(b));
  OL_TRY(build_children(b));
  size_t n = g->num_nodes + 1;
  node_uses *uses = ol_xcalloc(n, sizeof *uses);
  size_t *order = ol_xcalloc(n, sizeof *order);
  const ol_op_schema **rows = ol_xcalloc(n, sizeof *rows);
  bool *skip = ol_xcalloc(n, sizeof *skip);
  ol_fused *fused = ol_xcalloc(n, sizeof *fused);
  ol_status s = (!uses || !order || !rows || !skip || !fused) ? OL_OUT_OF_MEMORY : OL_OK;
  for (size_t i = 0; s == OL_OK && i < g->num_nodes; i++) s = collect_uses(b, &g->nodes[i], &uses[i]);
  if (s == OL_OK) s = topological_order(b, uses, order);
  if (s == OL_OK) s = resolve_outputs(b);
  if (s == OL_OK) s = find_rows(g, rows);
  if (s == OL_OK) s = apply_fusions(b, uses, rows, skip, fused);
  if (s == OL_OK) s = make_steps(b, order, uses, rows, skip, fused);
  if (uses)
    for (size_t i = 0; i < g->num_nodes; i++) free(uses[i].slots);
  free(uses);
  free(order);
  free(rows);
  free(skip);
  ol_fused_free(fused, g->num_nodes);
  free(fused);
  return s;
}

ol_status ol_plan_create(const ol_graph *graph, const ol_plan *parent, ol_plan **out) {
  (void)parent;
  *out = NULL;
  ol_plan *p = ol_xcalloc(1, sizeof *p);
  if (!p) return OL_OUT_OF_MEMORY;
  p->graph = graph;
  ol_strmap_init(&p->slot_of);
  plan_builder b = {p, 0, NULL, 0};
  ol_status s = build(&b);
  free(b.producer);
  if (s != OL_OK) {
    ol_plan_destroy(p);
    return s;
  }
  *out = p;
  return OL_OK;
}

/* Node input `input` is a cache the node continues into an output (a cache
 * pair of its schema row): that output and the axis. */
static bool grow_pair(const ol_plan_step *step, size_t input, size_t *output, int64_t *axis) {
  const ol_op_schema *row = step->row;
  for (size_t c = 0; row && c < row->num_caches; c++) {
    const ol_cache_pair *pair = &row->caches[c];
    if (pair->input != input) continue;
    *output = pair->output;
    *axis = pair->axis == OL_CACHE_AXIS_ATTR ? ol_attr_int(step->node, "axis", 0) : pair->axis;
    return true;
  }
  return false;
}

bool ol_plan_input_grow_axis(const ol_plan *p, size_t graph_input, int64_t *axis) {
  for (size_t k = 0; k < p->num_steps; k++) {
    const ol_plan_step *step = &p->steps[k];
    const ol_node *n = step->node;
    if (step->skipped || !step->in_graph_input) continue;
    for (size_t j = 0; j < n->num_inputs; j++) {
      size_t out;
      if (step->in_graph_input[j] != (int32_t)graph_input || !grow_pair(step, j, &out, axis)) continue;
      if (out >= n->num_outputs || step->out_slots[out] < 0 || !p->keep[step->out_slots[out]]) continue;
      bool again = false; /* read twice by the node (Concat(past, past)): not an append */
      for (size_t i = 0; i < n->num_inputs; i++) again |= i != j && step->in_graph_input[i] == (int32_t)graph_input;
      if (!again) return true;
    }
  }
  return false;
}

void ol_plan_destroy(ol_plan *p) {
  if (!p) return;
  for (size_t k = 0; k < p->num_steps; k++) {
    ol_plan_step *step = &p->steps[k];
    if (step->kernel) {
      if (step->kernel->destroy) step->kernel->destroy(step->kernel);
      else free(step->kernel);
    }
    free(step->in_slots);
    free(step->out_slots);
    free(step->release);
    free(step->in_graph_input);
  }
  free(p->steps);
  for (size_t c = 0; c < p->num_children; c++) ol_plan_destroy(p->children[c]);
  free(p->children);
  free(p->child_graphs);
  ol_strmap_free(&p->slot_of);
  free(p->slot_names);
  free(p->input_slots);
  free(p->output_slots);
  free(p->keep);
  free(p->const_slots);
  free(p->const_values);
  free(p->capture_slots);
  free(p->capture_names);
  free(p);
}

/* ------------------------------------------------------------ running */

typedef struct run_scope {
  const ol_frame *frame;
  const ol_run_env *env;
  const ol_plan_step *step; /* the step being computed */
  const ol_node *node;      /* its node */
  ol_value *const *inputs;  /* its input array */
  ol_value **outputs;       /* its output array */
  size_t num_outputs;
} run_scope;

static ol_status scope_reserve(void *runtime, size_t input, size_t output, int rank, const int64_t *dims,
                               int axis, ol_append_reservation *res) {
  run_scope *sc = runtime;
  memset(res, 0, sizeof *res);
  if (output >= sc->num_outputs || input >= sc->node->num_inputs)
    return ol_kernel_error(sc->node, OL_INTERNAL, "append reservation for a missing input/output");
  int32_t gi = sc->step->in_graph_input ? sc->step->in_graph_input[input] : -1;
  const ol_value *v = sc->inputs[input];
  if (gi < 0 || !v) return OL_OK; /* not a root input: ordinary path */
  int refs = 0;
  const ol_frame *f = sc->frame;
  for (size_t i = 0; i < f->plan->num_slots; i++) refs += f->slots[i] == v;
  return sc->env->append->reserve(sc->env->append->user, sc->node, (size_t)gi, v, refs, output, rank, dims, axis,
                                  res);
}

static ol_status scope_commit(void *runtime, size_t output, ol_append_reservation *res) {
  run_scope *sc = runtime;
  if (output >= sc->num_outputs) return ol_kernel_error(sc->node, OL_INTERNAL, "append commit for a missing output");
  ol_value *v = NULL;
  OL_TRY(sc->env->append->commit(sc->env->append->user, sc->node, output, res, &v));
  ol_value_release(sc->outputs[output]);
  sc->outputs[output] = v;
  return OL_OK;
}

static ol_status scope_record(void *runtime, const ol_storage_counts *counts) {
  run_scope *sc = runtime;
  return ol_context_record_storage(sc->env->context, sc->node, counts, sc->env->allocator);
}

static ol_status scope_record_paged(void *runtime, const ol_paged_stats *stats) {
  run_scope *sc = runtime;
  return ol_context_record_paged(sc->env->context, sc->node, stats, sc->env->allocator);
}

static ol_status run_subgraph(void *runtime, const ol_graph *graph, ol_value *const *inputs,
                              size_t num_inputs, ol_value **outputs, size_t num_outputs) {
  const run_scope *scope = runtime;
  const ol_plan *p = scope->frame->plan;
  for (size_t c = 0; c < p->num_children; c++)
    if (p->child_graphs[c] == graph)
      return ol_plan_run(p->children[c], scope->frame, scope->env, inputs, num_inputs, outputs,
                         num_outputs);
  return ol_error(OL_INTERNAL, "subgraph '%s' has no plan", graph->name);
}

static ol_value *lookup_outer(const ol_frame *frame, const char *name) {
  for (; frame; frame = frame->parent) {
    int32_t slot = ol_strmap_get(&frame->plan->slot_of, name);
    if (slot >= 0 && frame->slots[slot]) return frame->slots[slot];
  }
  return NULL;
}

static size_t max_arity(const ol_plan *p) {
  size_t m = 1;
  for (size_t k = 0; k < p->num_steps; k++) {
    if (p->steps[k].node->num_inputs > m) m = p->steps[k].node->num_inputs;
    if (p->steps[k].node->num_outputs > m) m = p->steps[k].node->num_outputs;
  }
  return m;
}

ol_status ol_plan_run(const ol_plan *p, const ol_frame *parent, const ol_run_env *env,
                      ol_value *const *inputs, size_t num_inputs, ol_value **outputs,
                      size_t num_outputs) {
  const ol_graph *g = p->graph;
  if (num_inputs > g->num_inputs)
    return ol_error(OL_INVALID_ARGUMENT, "graph '%s' takes %zu inputs, %zu given", g->name,
                    g->num_inputs, num_inputs);
  if (num_outputs != g->num_outputs)
    return ol_error(OL_INVALID_ARGUMENT, "graph '%s' has %zu outputs, %zu requested", g->name,
                    g->num_outputs, num_outputs);
  for (size_t i = 0; i < num_outputs; i++) outputs[i] = NULL;
  size_t arity = max_arity(p);
  /* small plans keep their per-run tables on the stack (no heap traffic per run) */
  enum { LOCAL_SLOTS = 256, LOCAL_ARITY = 16 };
  ol_value *local_slots[LOCAL_SLOTS], *local_io[3][LOCAL_ARITY];
  bool small = p->num_slots <= LOCAL_SLOTS, narrow = arity <= LOCAL_ARITY;
  if (small) memset(local_slots, 0, p->num_slots * sizeof *local_slots);
  if (narrow) memset(local_io, 0, sizeof local_io);
  /* larger ones take theirs from the run's allocator (a session's pool reuses it) */
  ol_value **slots = small ? local_slots : ol_calloc(env->allocator, p->num_slots, sizeof *slots);
  ol_value **step_in = narrow ? local_io[0] : ol_xcalloc(arity, sizeof *step_in);
  ol_value **step_out = narrow ? local_io[1] : ol_xcalloc(arity, sizeof *step_out);
  ol_status s = (!slots || !step_in || !step_out) ? OL_OUT_OF_MEMORY : OL_OK;
  ol_frame frame = {p, slots, parent};
  /* per-step dense copies of pitched inputs */
  ol_value **dense = narrow ? local_io[2] : ol_xcalloc(arity, sizeof *dense);
  if (!dense) s = OL_OUT_OF_MEMORY;
  run_scope scope = {&frame, env, NULL, NULL, step_in, step_out, 0};
  bool events = env->context && env->context->events_enabled;
  bool appends = !parent && env->append;
  bool grow = !parent && !appends && env->grow_outputs;

  for (size_t i = 0; s == OL_OK && i < p->num_consts; i++)
    slots[p->const_slots[i]] = ol_value_retain(p->const_values[i]);
  for (size_t i = 0; s == OL_OK && i < num_inputs; i++)
    if (inputs[i]) {
      ol_value_release(slots[p->input_slots[i]]);
      slots[p->input_slots[i]] = ol_value_retain(inputs[i]);
    }
  for (size_t i = 0; s == OL_OK && !g->inputs_optional && i < g->num_inputs; i++)
    if (!slots[p->input_slots[i]])
      s = ol_error(OL_INVALID_ARGUMENT, "graph '%s': input '%s' was not given", g->name, g->inputs[i].name);
  for (size_t i = 0; s == OL_OK && i < p->num_captures; i++) {
    ol_value *v = lookup_outer(parent, p->capture_names[i]);
    if (!v) s = ol_error(OL_INVALID_MODEL, "graph '%s': outer-scope value '%s' is not available", g->name, p->capture_names[i]);
    else slots[p->capture_slots[i]] = ol_value_retain(v);
  }

  /* the root graph's run sets the kernels' thread count (subgraphs inherit it) */
  int outer_threads = parent ? 0 : ol_pool_scope(env->threads);
  for (size_t k = 0; s == OL_OK && k < p->num_steps; k++) {
    const ol_plan_step *step = &p->steps[k];
    const ol_node *n = step->node;
    if (env->cancelled && *env->cancelled) {
      s = ol_error(OL_CANCELLED, "run cancelled before node '%s' (%s)", n->name, n->op_type);
      break;
    }
    if (step->skipped) goto release;
    bool densified = false;
    for (size_t j = 0; s == OL_OK && j < n->num_inputs; j++) {
      step_in[j] = step->in_slots[j] >= 0 ? slots[step->in_slots[j]] : NULL;
      /* kernels that do not read pitched caches or packed weights in place get a dense copy */
      if (step_in[j] && step_in[j]->kind == OL_VALUE_TENSOR && needs_dense(step, j, &step_in[j]->tensor)) {
        s = ol_tensor_materialize(env->allocator, &step_in[j]->tensor, &dense[j]);
        step_in[j] = dense[j];
        densified = true;
      }
    }
    for (size_t j = 0; j < n->num_outputs; j++) step_out[j] = NULL;
    scope.step = step;
    scope.node = n;
    scope.num_outputs = n->num_outputs;
    ol_kernel_ctx ctx = {n, step_in, n->num_inputs, step_out, n->num_outputs, env->allocator,
                         env->cancelled, &scope, run_subgraph,
                         appends ? scope_reserve : NULL, appends ? scope_commit : NULL,
                         events ? scope_record : NULL,
                         grow ? step->kept_outputs : 0, env->paged, events ? scope_record_paged : NULL};
    if (s == OL_OK) s = step->kernel->compute(step->kernel, &ctx);
    for (size_t j = 0; densified && j < n->num_inputs; j++) {
      ol_value_release(dense[j]);
      dense[j] = NULL;
    }
    for (size_t j = 0; s == OL_OK && j < n->num_outputs; j++)
      if (step->out_slots[j] >= 0 && !step_out[j])
        s = ol_error(OL_INTERNAL, "node '%s' (%s) did not produce output %zu", n->name, n->op_type, j);
    for (size_t j = 0; j < n->num_outputs; j++) {
      if (s == OL_OK && step->out_slots[j] >= 0) {
        slots[step->out_slots[j]] = step_out[j];
      } else {
        ol_value_release(step_out[j]);
      }
      step_out[j] = NULL;
    }
  release:
    for (size_t r = 0; r < step->num_release; r++) {
      ol_value_release(slots[step->release[r]]);
      slots[step->release[r]] = NULL;
    }
  }
  if (!parent) ol_pool_scope(outer_threads);

  for (size_t i = 0; s == OL_OK && i < num_outputs; i++) {
    outputs[i] = ol_value_retain(slots[p->output_slots[i]]);
    if (!outputs[i]) s = ol_error(OL_INTERNAL, "graph '%s': output '%s' was not produced", g->name, g->outputs[i].name);
  }
  if (s != OL_OK)
    for (size_t i = 0; i < num_outputs; i++) {
      ol_value_release(outputs[i]);
      outputs[i] = NULL;
    }
  if (slots)
    for (size_t i = 0; i < p->num_slots; i++) ol_value_release(slots[i]);
  if (!small) ol_dealloc(env->allocator, slots);
  if (!narrow) {
    free(step_in);
    free(step_out);
    free(dense);
  }
  return s;
}
