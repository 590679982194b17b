#ifndef OL_RUNTIME_SESSION_H
#define OL_RUNTIME_SESSION_H
#include "ir/model.h"
#include "runtime/plan.h"

struct ol_session {
  ol_model_data *model;
  ol_plan *plan;
  ol_allocator *allocator;
  size_t num_inputs;        /* graph inputs without an initializer default */
  size_t *input_index;      /* -> graph input position */
  size_t num_optional;      /* inputs with an initializer default (overridable) */
};

/* Matches named feeds to graph inputs (feeds[k] borrowed, per graph input).
 * bound (may be NULL) marks inputs supplied by a persistent state: naming
 * one is an error, and they are not reported missing. */
ol_status ol_session_match_feeds(const ol_session *s, const char *const *names, ol_value *const *inputs,
                                 size_t n_inputs, const bool *bound, ol_value **feeds);
/* pick[i] = graph output index of names[i] (names NULL: all, in order). */
ol_status ol_session_match_outputs(const ol_session *s, const char *const *names, size_t n, size_t *pick);
/* A value must match a declaration's kind, element type, rank and fixed dims. */
ol_status ol_check_value_type(const ol_graph_value *decl, const ol_value *v);

/* ol_state_run that polls watch for cancellation (between nodes and at the
 * publication gate) without completing it: generation passes its caller's
 * completion to every step this way. */
ol_status ol_state_run_watching(ol_state *st, ol_context *context, const char *const *input_names,
                                ol_value *const *inputs, size_t n_inputs, const char *const *output_names,
                                ol_value **outputs, size_t n_outputs, ol_completion *watch);

#endif
