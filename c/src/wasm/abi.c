/* The wasm ABI used by js/: thin exported wrappers over onnxlight.h.
 *
 * Every function here forwards to the public C API; none has logic of its own.
 * They exist because JS can only pass 32-bit integers, doubles and pointers:
 *  - handles and strings travel as pointers (wasm32: 4 bytes);
 *  - results come back through out-pointers the JS side allocates;
 *  - 64-bit quantities (dims stay int64 in memory) are returned as doubles,
 *    since this build has no BigInt integration for i64 parameters.
 * JS names: Module._olw_<name>. Statuses are the ol_status integers; the JS
 * layer turns a non-zero status into an OnnxLightError with ol_last_error(). */
#include <emscripten/emscripten.h>
#include <stdlib.h>

#include "onnxlight.h"
#include "runtime/generate.h"

#define OLW EMSCRIPTEN_KEEPALIVE

/* ------------------------------------------------------------ status, version */

OLW const char *olw_version(void) { return ol_version(); }
OLW const char *olw_last_error(void) { return ol_last_error(); }
OLW const char *olw_status_name(int status) { return ol_status_name((ol_status)status); }
OLW const char *olw_dtype_name(int dtype) { return ol_dtype_name((ol_dtype)dtype); }
OLW int olw_dtype_bits(int dtype) { return ol_dtype_bits((ol_dtype)dtype); }

/* ------------------------------------------------------------ memory */

/* malloc/free are exported as _malloc/_free. This frees memory the library
 * allocated for the caller (printed text, serialized bytes). */
OLW void olw_ol_free(void *ptr) { ol_free(ptr); }

/* Default allocator statistics into out[4]: live bytes, peak bytes, total and
 * live allocation counts (as doubles). */
OLW void olw_allocator_stats(double *out) {
  ol_allocator_stats s;
  ol_allocator_get_stats(NULL, &s);
  out[0] = (double)s.live_bytes;
  out[1] = (double)s.peak_bytes;
  out[2] = (double)s.total_allocations;
  out[3] = (double)s.live_allocations;
}
OLW void olw_allocator_reset_peak(void) { ol_allocator_reset_peak(NULL); }

/* ------------------------------------------------------------ models */

OLW int olw_model_load(const void *bytes, size_t size, ol_model **out) {
  return ol_model_load(bytes, size, NULL, out);
}
OLW int olw_model_parse_text(const char *text, ol_model **out) {
  return ol_model_parse_text(text, out);
}
OLW int olw_model_print_text(const ol_model *model, char **out_text) {
  return ol_model_print_text(model, out_text);
}
OLW int olw_model_serialize(const ol_model *model, void **out_bytes, size_t *out_size) {
  return ol_model_serialize(model, out_bytes, out_size);
}
OLW int olw_model_check(const ol_model *model) { return ol_model_check(model); }
OLW void olw_model_destroy(ol_model *model) { ol_model_destroy(model); }

/* ------------------------------------------------------------ sessions */

OLW int olw_session_create(ol_model *model, ol_session **out) {
  return ol_session_create(model, NULL, out);
}
OLW void olw_session_destroy(ol_session *session) { ol_session_destroy(session); }
OLW size_t olw_session_input_count(const ol_session *s) { return ol_session_input_count(s); }
OLW size_t olw_session_output_count(const ol_session *s) { return ol_session_output_count(s); }
OLW const char *olw_session_input_name(const ol_session *s, size_t i) {
  return ol_session_input_name(s, i);
}
OLW const char *olw_session_output_name(const ol_session *s, size_t i) {
  return ol_session_output_name(s, i);
}

/* Metadata of input (is_output 0) or output (1) `index` into out[5]:
 * kind, dtype, rank, dims pointer, dim_params pointer. The pointers stay
 * valid while the session lives. */
OLW int olw_session_io_info(const ol_session *s, int is_output, size_t index, int32_t *out) {
  ol_value_info info;
  ol_status status = is_output ? ol_session_output_info(s, index, &info)
                               : ol_session_input_info(s, index, &info);
  if (status != OL_OK) return status;
  out[0] = (int32_t)info.kind;
  out[1] = (int32_t)info.dtype;
  out[2] = (int32_t)info.rank;
  out[3] = (int32_t)(uintptr_t)info.dims;
  out[4] = (int32_t)(uintptr_t)info.dim_params;
  return OL_OK;
}

OLW int olw_session_run(ol_session *session, const char *const *input_names,
                        ol_value *const *inputs, size_t n_inputs,
                        const char *const *output_names, ol_value **outputs, size_t n_outputs,
                        ol_completion *completion) {
  return ol_session_run(session, input_names, inputs, n_inputs, output_names, outputs,
                        n_outputs, completion);
}

/* ------------------------------------------------------------ tensors and values */

OLW int olw_tensor_create(int dtype, const int64_t *dims, size_t rank, ol_value **out) {
  return ol_tensor_create(NULL, (ol_dtype)dtype, dims, rank, out);
}
/* Wraps caller memory; with take_ownership the tensor frees it (free()) when
 * its last reference goes, otherwise the caller must outlive the tensor. */
OLW int olw_tensor_wrap(int dtype, const int64_t *dims, size_t rank, void *data,
                        size_t byte_size, int take_ownership, ol_value **out) {
  return ol_tensor_wrap((ol_dtype)dtype, dims, rank, data, byte_size,
                        take_ownership ? free : NULL, data, out);
}
OLW int olw_tensor_set_string(ol_value *t, size_t index, const char *bytes, size_t length) {
  return ol_tensor_set_string(t, index, bytes, length);
}
OLW int olw_tensor_get_string(const ol_value *t, size_t index, const char **bytes,
                              size_t *length) {
  return ol_tensor_get_string(t, index, bytes, length);
}
OLW int olw_tensor_dtype(const ol_value *t) { return (int)ol_tensor_dtype(t); }
OLW size_t olw_tensor_rank(const ol_value *t) { return ol_tensor_rank(t); }
OLW const int64_t *olw_tensor_dims(const ol_value *t) { return ol_tensor_dims(t); }
OLW double olw_tensor_element_count(const ol_value *t) {
  return (double)ol_tensor_element_count(t);
}
OLW size_t olw_tensor_byte_size(const ol_value *t) { return ol_tensor_byte_size(t); }
OLW void *olw_tensor_data(const ol_value *t) { return ol_tensor_data(t); }

OLW int olw_value_kind(const ol_value *v) { return (int)ol_value_get_kind(v); }
OLW ol_value *olw_value_retain(ol_value *v) { return ol_value_retain(v); }
OLW void olw_value_release(ol_value *v) { ol_value_release(v); }
OLW size_t olw_sequence_length(const ol_value *v) { return ol_sequence_length(v); }
OLW ol_value *olw_sequence_at(const ol_value *v, size_t i) { return ol_sequence_at(v, i); }
OLW ol_value *olw_optional_get(const ol_value *v) { return ol_optional_get(v); }

/* ------------------------------------------------------------ cancellation */

OLW int olw_completion_create(ol_completion **out) { return ol_completion_create(out); }
OLW void olw_completion_destroy(ol_completion *c) { ol_completion_destroy(c); }
OLW int olw_completion_cancel(ol_completion *c, const char *reason) {
  return ol_completion_cancel(c, reason);
}
OLW int olw_completion_is_cancelled(const ol_completion *c) {
  return ol_completion_is_cancelled(c);
}

/* Fault injection on the default allocator (tests): after `count` more
 * successful allocations every allocation fails; -1 disables. */
OLW void olw_allocator_fail_after(double count) { ol_allocator_fail_after(NULL, (int64_t)count); }

/* ------------------------------------------------------------ sessions with options */

/* ol_session_create with ol_session_options (default allocator). */
OLW int olw_session_create_with(ol_model *model, double persistent_tensor_initial_capacity,
                                ol_session **out) {
  ol_session_options options;
  ol_session_options_init(&options);
  options.persistent_tensor_initial_capacity = (int64_t)persistent_tensor_initial_capacity;
  return ol_session_create(model, &options, out);
}

OLW int olw_session_run_with(ol_session *session, ol_context *context,
                             const char *const *input_names, ol_value *const *inputs,
                             size_t n_inputs, const char *const *output_names,
                             ol_value **outputs, size_t n_outputs, ol_completion *completion) {
  return ol_session_run_with(session, context, input_names, inputs, n_inputs, output_names,
                             outputs, n_outputs, completion);
}

/* ------------------------------------------------------------ contexts and events */

OLW int olw_context_create(int events_enabled, ol_context **out) {
  ol_context_options options = {events_enabled, NULL};
  return ol_context_create(&options, out);
}
OLW void olw_context_destroy(ol_context *c) { ol_context_destroy(c); }
OLW size_t olw_context_event_count(const ol_context *c) { return ol_context_event_count(c); }
OLW void olw_context_clear_events(ol_context *c) { ol_context_clear_events(c); }
/* Event `index` into out[8] (doubles): action, storage_allocations,
 * storage_allocated_bytes, storage_prefix_copied_bytes,
 * storage_append_copied_bytes, storage_reuse_count, allocated_bytes,
 * peak_bytes; names[0..1] receive node_name and op_type (borrowed). */
OLW int olw_context_event(const ol_context *c, size_t index, double *out, const char **names) {
  const ol_runtime_event *e = ol_context_event(c, index);
  if (!e) return OL_NOT_FOUND;
  out[0] = (double)e->action;
  out[1] = (double)e->storage_allocations;
  out[2] = (double)e->storage_allocated_bytes;
  out[3] = (double)e->storage_prefix_copied_bytes;
  out[4] = (double)e->storage_append_copied_bytes;
  out[5] = (double)e->storage_reuse_count;
  out[6] = (double)e->allocated_bytes;
  out[7] = (double)e->peak_bytes;
  names[0] = e->node_name;
  names[1] = e->op_type;
  return OL_OK;
}

/* ------------------------------------------------------------ persistent state */

OLW int olw_state_create(ol_model *model, const char *const *names, ol_value *const *initial,
                         size_t count, double persistent_tensor_initial_capacity, ol_state **out) {
  ol_session_options options;
  ol_session_options_init(&options);
  options.persistent_tensor_initial_capacity = (int64_t)persistent_tensor_initial_capacity;
  return ol_state_create(model, names, initial, count, &options, out);
}
OLW int olw_state_run(ol_state *state, ol_context *context, const char *const *input_names,
                      ol_value *const *inputs, size_t n_inputs, const char *const *output_names,
                      ol_value **outputs, size_t n_outputs, ol_completion *completion) {
  return ol_state_run(state, context, input_names, inputs, n_inputs, output_names, outputs,
                      n_outputs, completion);
}
OLW int olw_state_reset(ol_state *state, const char *const *names, ol_value *const *initial,
                        size_t count) {
  return ol_state_reset(state, names, initial, count);
}
OLW int olw_state_close(ol_state *state) { return ol_state_close(state); }
OLW void olw_state_destroy(ol_state *state) { ol_state_destroy(state); }
OLW size_t olw_state_value_count(const ol_state *state) { return ol_state_value_count(state); }
OLW const char *olw_state_value_name(const ol_state *state, size_t i) {
  return ol_state_value_name(state, i);
}
/* Borrowed reference into *out (retain to keep it). */
OLW int olw_state_value(const ol_state *state, const char *name, ol_value **out) {
  return ol_state_value(state, name, out);
}
OLW const ol_session *olw_state_session(const ol_state *state) { return ol_state_session(state); }

OLW int olw_model_bind_persistent(const ol_model *model, const char *const *input_names,
                                  const char *const *output_names, size_t count, ol_model **out) {
  return ol_model_bind_persistent(model, input_names, output_names, count, out);
}

/* ------------------------------------------------------------ generation */

/* ol_generate without a token callback (the JS package runs its own loop for
 * streaming; this export serves parity checks against the C loop). seed is
 * exact up to 2^53; eos/pad -1 mean none/eos. */
/* One token from a logits row in wasm memory (see runtime/generate.h). */
OLW int olw_pick_token(int dtype, const void *row, int vocab, double temperature, uint64_t *rng_state,
                       double *weights) {
  return (int)ol_generate_pick_token((ol_dtype)dtype, row, vocab, temperature, rng_state, weights);
}

OLW int olw_generate(ol_model *model, const char *const *names, ol_value *const *feeds,
                     size_t n_feeds, double max_new_tokens, double temperature, double seed,
                     double eos_token_id, double pad_token_id, ol_value **out) {
  ol_generate_options options;
  ol_generate_options_init(&options);
  options.max_new_tokens = (int64_t)max_new_tokens;
  options.temperature = temperature;
  options.seed = (uint64_t)seed;
  options.eos_token_id = (int64_t)eos_token_id;
  options.pad_token_id = (int64_t)pad_token_id;
  return ol_generate(model, NULL, names, feeds, n_feeds, &options, NULL, NULL, out);
}
