/* Execution plans: a graph resolved once into kernels, value slots and a
 * release schedule, then run many times. */
#ifndef OL_RUNTIME_PLAN_H
#define OL_RUNTIME_PLAN_H
#include "core/strmap.h"
#include "ops/schema.h"
#include "runtime/context.h"

typedef struct ol_plan ol_plan;

typedef struct ol_plan_step {
  const ol_node *node;
  ol_kernel *kernel;
  int32_t *in_slots;  /* node->num_inputs entries, -1 for omitted inputs */
  int32_t *out_slots; /* node->num_outputs entries, -1 for omitted outputs */
  int32_t *release;   /* slots whose last use is this step */
  size_t num_release;
  /* Root plans: per node input, the graph input it reads directly or through
   * forwarding Identity nodes (-1: none). Decides append eligibility once. */
  int32_t *in_graph_input;
  bool skipped;       /* folded into a later step (see fuse.c): no kernel */
  const ol_op_schema *row;     /* the node's schema row (NULL: a function call) */
  uint32_t pitched_inputs;     /* inputs the kernel reads pitched (row or fusion) */
  uint32_t packed_inputs;      /* inputs the kernel reads packed (row or fusion) */
  uint32_t kept_outputs; /* bit j: output j is a graph output (kept past the run) */
} ol_plan_step;

struct ol_plan {
  const ol_graph *graph;
  ol_strmap slot_of;        /* value name -> slot */
  size_t num_slots;
  const char **slot_names;
  int32_t *input_slots;     /* per graph input */
  int32_t *output_slots;    /* per graph output */
  bool *keep;               /* slots never released early (graph outputs) */
  size_t num_steps;
  ol_plan_step *steps;
  size_t num_consts;        /* initializers not overridden by an input */
  int32_t *const_slots;
  ol_value **const_values;  /* borrowed from the graph */
  size_t num_captures;      /* outer-scope names used by this graph */
  int32_t *capture_slots;
  const char **capture_names;
  size_t num_children;      /* plans of subgraph attributes */
  const ol_graph **child_graphs;
  ol_plan **children;
};

typedef struct ol_frame ol_frame;
struct ol_frame {
  const ol_plan *plan;
  ol_value **slots;
  const ol_frame *parent;
};

/* Provider of append reservations for the root graph (persistent state). */
typedef struct ol_append_host {
  void *user;
  /* graph_input: the root input the node input forwards; value: the node
   * input's value; frame_refs: references the running frame itself holds on
   * it (its slots), so that any other holder is an outstanding alias. */
  ol_status (*reserve)(void *user, const ol_node *node, size_t graph_input, const ol_value *value,
                       int frame_refs, size_t output, int rank, const int64_t *dims, int axis,
                       ol_append_reservation *res);
  ol_status (*commit)(void *user, const ol_node *node, size_t output, ol_append_reservation *res,
                      ol_value **out);
} ol_append_host;

typedef struct ol_run_env {
  ol_allocator *allocator;
  const volatile int *cancelled;
  ol_context *context;          /* events; may be NULL */
  const ol_append_host *append; /* root graph only; NULL outside persistent state */
  int threads;                  /* intra-op threads of the run; 0: the process default */
  /* Session caches: nodes continuing a cache into a graph output give it
   * spare capacity and append in place to such an input (ctx->grow_outputs). */
  bool grow_outputs;
  const ol_paged_policy *paged; /* formats of appended paged-cache pages (may be NULL) */
} ol_run_env;

/* Builds the plan for graph (and, recursively, its subgraphs). parent_names
 * resolves outer-scope names for subgraphs (NULL for the root graph). */
ol_status ol_plan_create(const ol_graph *graph, const ol_plan *parent, ol_plan **out);
void ol_plan_destroy(ol_plan *plan);
/* Root plans: true when graph input graph_input is a cache that a node
 * continues into a graph output (a cache pair of the node's schema row, e.g.
 * a torch export's present = Concat(past, new) or an attention operator's
 * past_* -> present_*), with the axis it grows along (from an attribute:
 * not normalized). */
bool ol_plan_input_grow_axis(const ol_plan *p, size_t graph_input, int64_t *axis);

/* Runs a plan. inputs[i] feeds graph input i (NULL: use its initializer).
 * outputs[i] receive owned references to graph output i. */
ol_status ol_plan_run(const ol_plan *plan, const ol_frame *parent, const ol_run_env *env,
                      ol_value *const *inputs, size_t num_inputs, ol_value **outputs,
                      size_t num_outputs);

#endif
