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

#endif
