/* Sessions: plan once, run many times. */
#include "runtime/session.h"

#include <stdlib.h>
#include <string.h>

#include "runtime/completion.h"
#include "runtime/context.h"

ol_status ol_session_create(ol_model *model, const ol_session_options *options, ol_session **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_session_create: out is NULL");
  *out = NULL;
  if (!model) return ol_error(OL_INVALID_ARGUMENT, "ol_session_create: model is NULL");
  OL_TRY(ol_model_check(model));
  ol_session *s = ol_xcalloc(1, sizeof *s);
  if (!s) return OL_OUT_OF_MEMORY;
  s->model = ol_model_data_retain(model->data);
  s->allocator = options && options->allocator ? options->allocator : ol_allocator_default();
  const ol_graph *g = s->model->graph;
  ol_status st = ol_plan_create(g, NULL, &s->plan);
  if (st == OL_OK) {
    s->input_index = ol_xcalloc(g->num_inputs, sizeof(size_t));
    if (!s->input_index) st = OL_OUT_OF_MEMORY;
  }
  if (st == OL_OK)
    for (size_t i = 0; i < g->num_inputs; i++) {
      if (ol_graph_find_initializer(g, g->inputs[i].name)) continue;
      s->input_index[s->num_inputs++] = i;
    }
  if (st != OL_OK) {
    ol_session_destroy(s);
    return st;
  }
  *out = s;
  return OL_OK;
}

void ol_session_destroy(ol_session *s) {
  if (!s) return;
  ol_plan_destroy(s->plan);
  free(s->input_index);
  ol_model_data_release(s->model);
  free(s);
}

size_t ol_session_input_count(const ol_session *s) { return s->num_inputs; }
size_t ol_session_output_count(const ol_session *s) { return s->model->graph->num_outputs; }

const char *ol_session_input_name(const ol_session *s, size_t i) {
  return i < s->num_inputs ? s->model->graph->inputs[s->input_index[i]].name : NULL;
}
const char *ol_session_output_name(const ol_session *s, size_t i) {
  return i < s->model->graph->num_outputs ? s->model->graph->outputs[i].name : NULL;
}

static ol_status describe(const ol_graph_value *v, ol_value_info *out) {
  out->kind = v->type.kind;
  out->dtype = v->type.dtype;
  out->rank = v->type.rank;
  out->dims = v->type.dims;
  out->dim_params = v->type.dim_params;
  return OL_OK;
}

ol_status ol_session_input_info(const ol_session *s, size_t i, ol_value_info *out) {
  if (i >= s->num_inputs) return ol_error(OL_INVALID_ARGUMENT, "input index %zu out of range", i);
  return describe(&s->model->graph->inputs[s->input_index[i]], out);
}

ol_status ol_session_output_info(const ol_session *s, size_t i, ol_value_info *out) {
  if (i >= s->model->graph->num_outputs) return ol_error(OL_INVALID_ARGUMENT, "output index %zu out of range", i);
  return describe(&s->model->graph->outputs[i], out);
}

/* A feed must match the declared kind, element type, rank and fixed dims. */
ol_status ol_check_value_type(const ol_graph_value *decl, const ol_value *v) {
  const ol_type_info *t = &decl->type;
  if (!decl->has_type) return OL_OK;
  if (v->kind != t->kind)
    return ol_error(OL_INVALID_ARGUMENT, "input '%s': expected a %s value", decl->name,
                    t->kind == OL_VALUE_TENSOR ? "tensor" : t->kind == OL_VALUE_SEQUENCE ? "sequence"
                    : t->kind == OL_VALUE_OPTIONAL ? "optional" : "map");
  if (v->kind != OL_VALUE_TENSOR) return OL_OK;
  char got[256];
  if (t->dtype && v->tensor.dtype != t->dtype)
    return ol_error(OL_INVALID_ARGUMENT, "input '%s': expected element type %s, got %s", decl->name,
                    ol_dtype_name(t->dtype), ol_tensor_describe(&v->tensor, got, sizeof got));
  if (t->rank >= 0 && v->tensor.rank != t->rank)
    return ol_error(OL_INVALID_ARGUMENT, "input '%s': expected rank %d, got %s", decl->name, t->rank,
                    ol_tensor_describe(&v->tensor, got, sizeof got));
  for (int d = 0; t->rank >= 0 && d < t->rank; d++)
    if (t->dims[d] >= 0 && v->tensor.dims[d] != t->dims[d])
      return ol_error(OL_INVALID_ARGUMENT, "input '%s': dimension %d must be %lld, got %s", decl->name, d,
                      (long long)t->dims[d], ol_tensor_describe(&v->tensor, got, sizeof got));
  return OL_OK;
}

ol_status ol_session_run(ol_session *s, const char *const *input_names, ol_value *const *inputs,
                         size_t n_inputs, const char *const *output_names, ol_value **outputs,
                         size_t n_outputs, ol_completion *completion) {
  return ol_session_run_with(s, NULL, input_names, inputs, n_inputs, output_names, outputs, n_outputs,
                             completion);
}

ol_status ol_session_match_feeds(const ol_session *s, const char *const *names, ol_value *const *inputs,
                                 size_t n_inputs, const bool *bound, ol_value **feeds) {
  const ol_graph *g = s->model->graph;
  for (size_t k = 0; k < g->num_inputs; k++) feeds[k] = NULL;
  if (n_inputs && (!names || !inputs)) return ol_error(OL_INVALID_ARGUMENT, "feed names or values are NULL");
  for (size_t i = 0; i < n_inputs; i++) {
    if (!names[i] || !inputs[i]) return ol_error(OL_INVALID_ARGUMENT, "feed %zu has no name or no value", i);
    size_t k = 0;
    while (k < g->num_inputs && strcmp(g->inputs[k].name, names[i]) != 0) k++;
    if (k == g->num_inputs) return ol_error(OL_INVALID_ARGUMENT, "unknown input name '%s'", names[i]);
    if (bound && bound[k])
      return ol_error(OL_INVALID_ARGUMENT, "input '%s' is retained by the persistent state; current feeds cannot override it",
                      names[i]);
    if (feeds[k]) return ol_error(OL_INVALID_ARGUMENT, "input '%s' is fed twice", names[i]);
    OL_TRY(ol_check_value_type(&g->inputs[k], inputs[i]));
    feeds[k] = inputs[i];
  }
  for (size_t k = 0; k < g->num_inputs; k++)
    if (!feeds[k] && !(bound && bound[k]) && !ol_graph_find_initializer(g, g->inputs[k].name))
      return ol_error(OL_INVALID_ARGUMENT, "missing input '%s'", g->inputs[k].name);
  return OL_OK;
}

ol_status ol_session_match_outputs(const ol_session *s, const char *const *names, size_t n, size_t *pick) {
  const ol_graph *g = s->model->graph;
  if (!names && n != g->num_outputs)
    return ol_error(OL_INVALID_ARGUMENT, "the model has %zu outputs, %zu requested", g->num_outputs, n);
  for (size_t i = 0; i < n; i++) {
    if (!names) {
      pick[i] = i;
      continue;
    }
    const char *name = names[i] ? names[i] : "(null)";
    size_t k = 0;
    while (k < g->num_outputs && strcmp(g->outputs[k].name, name) != 0) k++;
    if (k == g->num_outputs) return ol_error(OL_INVALID_ARGUMENT, "unknown output name '%s'", name);
    pick[i] = k;
  }
  return OL_OK;
}

ol_status ol_session_run_with(ol_session *s, ol_context *context, const char *const *input_names,
                              ol_value *const *inputs, size_t n_inputs, const char *const *output_names,
                              ol_value **outputs, size_t n_outputs, ol_completion *completion) {
  if (!s) return ol_error(OL_INVALID_ARGUMENT, "ol_session_run: session is NULL");
  const ol_graph *g = s->model->graph;
  if (n_outputs && !outputs) return ol_error(OL_INVALID_ARGUMENT, "ol_session_run: outputs is NULL");
  for (size_t i = 0; i < n_outputs; i++) outputs[i] = NULL;
  ol_value **feeds = ol_xcalloc(g->num_inputs, sizeof *feeds);
  ol_value **all = ol_xcalloc(g->num_outputs, sizeof *all);
  size_t *pick = ol_xcalloc(n_outputs, sizeof *pick);
  ol_status st = (!feeds || !all || !pick) ? OL_OUT_OF_MEMORY : OL_OK;
  if (st == OL_OK) st = ol_session_match_feeds(s, input_names, inputs, n_inputs, NULL, feeds);
  if (st == OL_OK) st = ol_session_match_outputs(s, output_names, n_outputs, pick);
  if (st == OL_OK) {
    ol_allocator *allocator = context && context->allocator ? context->allocator : s->allocator;
    ol_run_env env = {allocator, completion ? &completion->cancelled : NULL, context, NULL};
    st = ol_plan_run(s->plan, NULL, &env, feeds, g->num_inputs, all, g->num_outputs);
    if (st == OL_CANCELLED && completion && completion->reason[0]) ol_error_wrap(st, "%s", completion->reason);
  }
  if (st == OL_OK)
    for (size_t i = 0; i < n_outputs; i++) outputs[i] = ol_value_retain(all[pick[i]]);
  if (all)
    for (size_t k = 0; k < g->num_outputs; k++) ol_value_release(all[k]);
  free(feeds);
  free(all);
  free(pick);
  return st;
}
