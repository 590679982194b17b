/* A model's inputs and outputs without a session (ol_model_input_count...):
 * the graph inputs that have no initializer, as sessions list them. */
#include <stddef.h>

#include "core/status.h"
#include "ir/model.h"

/* The graph value of the index-th input without an initializer, or NULL. */
static const ol_graph_value *feed_input(const ol_model *model, size_t index) {
  const ol_graph *g = model ? model->data->graph : NULL;
  for (size_t i = 0; g && i < g->num_inputs; i++) {
    if (ol_graph_find_initializer(g, g->inputs[i].name)) continue;
    if (index-- == 0) return &g->inputs[i];
  }
  return NULL;
}

static const ol_graph_value *output(const ol_model *model, size_t index) {
  const ol_graph *g = model ? model->data->graph : NULL;
  return g && index < g->num_outputs ? &g->outputs[index] : NULL;
}

size_t ol_model_input_count(const ol_model *model) {
  const ol_graph *g = model ? model->data->graph : NULL;
  size_t count = 0;
  for (size_t i = 0; g && i < g->num_inputs; i++) count += !ol_graph_find_initializer(g, g->inputs[i].name);
  return count;
}

size_t ol_model_output_count(const ol_model *model) { return model ? model->data->graph->num_outputs : 0; }

const char *ol_model_input_name(const ol_model *model, size_t index) {
  const ol_graph_value *v = feed_input(model, index);
  return v ? v->name : NULL;
}

const char *ol_model_output_name(const ol_model *model, size_t index) {
  const ol_graph_value *v = output(model, index);
  return v ? v->name : NULL;
}

static ol_status describe(const ol_graph_value *v, const char *what, size_t index, ol_value_info *out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_%s_info: out is NULL", what);
  if (!v) return ol_error(OL_INVALID_ARGUMENT, "%s index %zu out of range", what, index);
  ol_graph_value_info(v, out);
  return OL_OK;
}

ol_status ol_model_input_info(const ol_model *model, size_t index, ol_value_info *out) {
  return describe(feed_input(model, index), "input", index, out);
}

ol_status ol_model_output_info(const ol_model *model, size_t index, ol_value_info *out) {
  return describe(output(model, index), "output", index, out);
}
