/* The wasm ABI used by js/: thin exported wrappers over onnxlight.h.
 *
 * Every function here forwards to the public C API; none has logic of its own.
 * They exist because JS can only pass 32-bit integers, doubles and pointers:
 *  - handles and strings travel as pointers (wasm32: 4 bytes);
 *  - results come back through out-pointers the JS side allocates;
 *  - 64-bit quantities (dims stay int64 in memory) are returned as doubles,
 *    since this build has no BigInt integration for i64 parameters.
 * JS names: Module._olw_<name>. Statuses are the ol_status integers; the JS
 * layer turns a non-zero status into an OnnxLightError with ol_last_error().
 * Marshaling is all a wrapper does: options structs filled from arguments,
 * results packed into out-arrays, a flag choosing between two calls. The
 * quantization exports are abi_quant.c. */
#include <emscripten/emscripten.h>

#include "onnxlight.h"

#define OLW EMSCRIPTEN_KEEPALIVE

/* ------------------------------------------------------------ status, version */

OLW const char *olw_version(void) { return ol_version(); }
OLW const char *olw_last_error(void) { return ol_last_error(); }
OLW const char *olw_status_name(int status) { return ol_status_name((ol_status)status); }
OLW int olw_set_num_threads(int threads) { return ol_set_num_threads(threads); }
OLW int olw_get_num_threads(void) { return ol_get_num_threads(); }
OLW const char *olw_dtype_name(int dtype) { return ol_dtype_name((ol_dtype)dtype); }

/* ------------------------------------------------------------ memory */

/* malloc/free are exported as _malloc/_free. This frees memory the library
 * allocated for the caller (printed text, serialized bytes). */
OLW void olw_ol_free(void *ptr) { ol_free(ptr); }

/* Default allocator statistics into out[5]: live bytes, peak bytes, total and
 * live allocation counts, bytes sessions hold for reuse (as doubles). */
OLW void olw_allocator_stats(double *out) {
  ol_allocator_stats s;
  ol_allocator_get_stats(NULL, &s);
  out[0] = (double)s.live_bytes;
  out[1] = (double)s.peak_bytes;
  out[2] = (double)s.total_allocations;
  out[3] = (double)s.live_allocations;
  out[4] = (double)s.pooled_bytes;
}
OLW void olw_allocator_reset_peak(void) { ol_allocator_reset_peak(NULL); }

/* ------------------------------------------------------------ models */

OLW int olw_model_load_owned(void *bytes, size_t size, ol_model **out) {
  return ol_model_load_owned(bytes, size, NULL, out);
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
OLW int olw_model_infer_shapes(const ol_model *model, ol_model **out) { return ol_model_infer_shapes(model, out); }
OLW void olw_model_destroy(ol_model *model) { ol_model_destroy(model); }

/* ol_model_serialize_pieces into out[4]: the pieces handle (destroy with
 * olw_serial_pieces_destroy), the piece list ({data, size} pairs), the piece
 * count and the total size. */
OLW int olw_model_serialize_pieces(const ol_model *model, uint32_t *out) {
  ol_serial_pieces *p = NULL;
  ol_status status = ol_model_serialize_pieces(model, &p);
  if (status != OL_OK) return status;
  out[0] = (uint32_t)(uintptr_t)p;
  out[1] = (uint32_t)(uintptr_t)ol_serial_pieces_list(p);
  out[2] = (uint32_t)ol_serial_pieces_count(p);
  out[3] = (uint32_t)ol_serial_pieces_total(p);
  return OL_OK;
}
OLW void olw_serial_pieces_destroy(ol_serial_pieces *p) { ol_serial_pieces_destroy(p); }

/* The model's interface without a session (ol_model_input_count...). */
OLW size_t olw_model_io_count(const ol_model *model, int is_output) {
  return is_output ? ol_model_output_count(model) : ol_model_input_count(model);
}
OLW const char *olw_model_io_name(const ol_model *model, int is_output, size_t index) {
  return is_output ? ol_model_output_name(model, index) : ol_model_input_name(model, index);
}

/* ------------------------------------------------------------ paged-cache formats */

/* The page formats of sessions, states and generators (ol_session_options
 * page_format_*) come from JS as a table of rules written in the C layout
 * (checked here once, at compile time) and/or a JS function added to the
 * wasm table (Module.addFunction, signature 'iiidi'): it gets the K and V
 * values, the cached length as a double and the formats to fill, and
 * returns a status. The trampoline only converts the int64 length. */
_Static_assert(sizeof(ol_page_format) == 12 && sizeof(ol_page_format_rule) == 32 &&
                   offsetof(ol_page_format_rule, formats) == 8 && offsetof(ol_page_formats, value) == 12,
               "js/src/paged-formats.js writes ol_page_format_rule as {int64 from; {i32 type, f32 scale, i32 zero} x 2}");
typedef int (*olw_page_format_js)(const ol_value *key, const ol_value *value, double past_length,
                                  ol_page_formats *out);

static ol_status call_js_page_format(void *user, const ol_value *key, const ol_value *value, int64_t past_length,
                                     ol_page_formats *out) {
  return (ol_status)((olw_page_format_js)user)(key, value, (double)past_length, out);
}

static void set_page_formats(ol_session_options *options, const ol_page_format_rule *rules, size_t rule_count,
                             olw_page_format_js fn) {
  options->page_format_rules = rules;
  options->page_format_rule_count = rule_count;
  if (fn) {
    options->page_format_fn = call_js_page_format;
    options->page_format_user = (void *)fn;
  }
}

/* ------------------------------------------------------------ sessions */

/* ol_session_options: intra_op_num_threads (0: the module's default),
 * grow_outputs (olw_value_describe then reports grown caches with no data
 * pointer, and olw_value_densify copies them) and the page formats. */
OLW int olw_session_create(ol_model *model, int intra_op_num_threads, int grow_outputs,
                           const ol_page_format_rule *rules, size_t rule_count, olw_page_format_js format_fn,
                           ol_session **out) {
  ol_session_options options;
  ol_session_options_init(&options);
  options.intra_op_num_threads = intra_op_num_threads;
  options.grow_outputs = grow_outputs;
  set_page_formats(&options, rules, rule_count, format_fn);
  return ol_session_create(model, &options, out);
}
OLW void olw_session_destroy(ol_session *session) { ol_session_destroy(session); }
OLW size_t olw_session_input_count(const ol_session *s) { return ol_session_input_count(s); }
OLW size_t olw_session_output_count(const ol_session *s) { return ol_session_output_count(s); }
OLW int olw_session_input_grow_axis(const ol_session *s, size_t i, int64_t *axis) {
  return ol_session_input_grow_axis(s, i, axis);
}
OLW const char *olw_session_input_name(const ol_session *s, size_t i) {
  return ol_session_input_name(s, i);
}
OLW const char *olw_session_output_name(const ol_session *s, size_t i) {
  return ol_session_output_name(s, i);
}

/* Metadata of input (is_output 0) or output (1) `index` into out[5]:
 * kind, dtype, rank, dims pointer, dim_params pointer. The pointers stay
 * valid while the session lives. */
static int io_info(ol_status status, const ol_value_info *info, int32_t *out) {
  if (status != OL_OK) return status;
  out[0] = (int32_t)info->kind;
  out[1] = (int32_t)info->dtype;
  out[2] = (int32_t)info->rank;
  out[3] = (int32_t)(uintptr_t)info->dims;
  out[4] = (int32_t)(uintptr_t)info->dim_params;
  return OL_OK;
}

OLW int olw_session_io_info(const ol_session *s, int is_output, size_t index, int32_t *out) {
  ol_value_info info;
  return io_info(is_output ? ol_session_output_info(s, index, &info) : ol_session_input_info(s, index, &info),
                 &info, out);
}

OLW int olw_session_run(ol_session *session, const char *const *input_names,
                        ol_value *const *inputs, size_t n_inputs,
                        const char *const *output_names, ol_value **outputs, size_t n_outputs,
                        ol_completion *completion) {
  return ol_session_run(session, input_names, inputs, n_inputs, output_names, outputs,
                        n_outputs, completion);
}

/* ------------------------------------------------------------ tensors and values */

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
OLW void *olw_tensor_data(const ol_value *t) { return ol_tensor_data(t); }

/* The per-run fast paths of the JS package: one call instead of several.
 * olw_tensor_new: olw_tensor_create, then out[1] = its payload pointer. */
OLW int olw_tensor_new(int dtype, const int64_t *dims, size_t rank, int32_t *out) {
  ol_value *v = NULL;
  ol_status s = ol_tensor_create(NULL, (ol_dtype)dtype, dims, rank, &v);
  out[0] = (int32_t)(uintptr_t)v;
  out[1] = s == OL_OK ? (int32_t)(uintptr_t)ol_tensor_data(v) : 0;
  return s;
}
/* ol_tensor_create_grown (the copy of a cache fed to a session whose Concat
 * appends to it, olw_session_input_grow_axis) into out[3]: the handle (0:
 * not worth growing), its payload pointer and ol_tensor_pitch. */
OLW int olw_tensor_new_grown(int dtype, const int64_t *dims, size_t rank, int axis, int32_t *out) {
  ol_value *v = NULL;
  ol_status s = ol_tensor_create_grown(NULL, (ol_dtype)dtype, dims, rank, axis, &v);
  out[0] = (int32_t)(uintptr_t)v;
  out[1] = v ? (int32_t)(uintptr_t)ol_tensor_data(v) : 0;
  out[2] = v ? (int32_t)ol_tensor_pitch(v) : 0;
  return s;
}
/* Kind of v; for a tensor of rank <= max_rank also out[0] dtype, out[1] rank,
 * out[2] payload pointer, out[3..] dims (doubles: exact below 2^53); a
 * larger rank sets out[1] = -1 (read the dims with olw_tensor_dims). */
OLW int olw_value_describe(const ol_value *v, double *out, size_t max_rank) {
  ol_value_kind kind = ol_value_get_kind(v);
  if (kind != OL_VALUE_TENSOR) return (int)kind;
  size_t rank = ol_tensor_rank(v);
  out[0] = (double)ol_tensor_dtype(v);
  out[1] = rank <= max_rank ? (double)rank : -1;
  /* -1: no dense view (a grown cache, weights laid out at load: olw_value_densify first) */
  out[2] = ol_tensor_is_dense(v) ? (double)(uintptr_t)ol_tensor_data(v) : -1;
  const int64_t *dims = ol_tensor_dims(v);
  for (size_t i = 0; rank <= max_rank && i < rank; i++) out[3 + i] = (double)dims[i];
  return (int)kind;
}
/* olw_value_describe of n values (NULL: kind -1) into records of 4 + max_rank
 * doubles: the kind, then what olw_value_describe writes. */
OLW void olw_values_describe(ol_value *const *values, size_t n, double *out, size_t max_rank) {
  for (size_t i = 0; i < n; i++) {
    double *record = out + i * (4 + max_rank);
    record[0] = values[i] ? (double)olw_value_describe(values[i], record + 1, max_rank) : -1;
  }
}

OLW int olw_value_kind(const ol_value *v) { return (int)ol_value_get_kind(v); }
OLW int olw_value_densify(ol_value *v, ol_value **out) { return ol_tensor_densify(v, out); }
OLW ol_value *olw_value_retain(ol_value *v) { return ol_value_retain(v); }
OLW void olw_value_release(ol_value *v) { ol_value_release(v); }
OLW size_t olw_sequence_length(const ol_value *v) { return ol_sequence_length(v); }
OLW ol_value *olw_sequence_at(const ol_value *v, size_t i) { return ol_sequence_at(v, i); }
OLW ol_value *olw_optional_get(const ol_value *v) { return ol_optional_get(v); }
OLW int olw_sequence_create(int dtype, ol_value *const *items, size_t count, ol_value **out) {
  return ol_sequence_create((ol_dtype)dtype, items, count, out);
}
OLW int olw_struct_create(const char *const *names, ol_value *const *fields, size_t count, ol_value **out) {
  return ol_struct_create(names, fields, count, out);
}
OLW size_t olw_struct_field_count(const ol_value *v) { return ol_struct_field_count(v); }
OLW const char *olw_struct_field_name(const ol_value *v, size_t i) { return ol_struct_field_name(v, i); }
OLW ol_value *olw_struct_field(const ol_value *v, const char *name) { return ol_struct_field(v, name); }
OLW int olw_encoded_value_parse(const void *bytes, size_t size, ol_value **out) {
  return ol_encoded_value_parse(bytes, size, out);
}
OLW int olw_encoded_value_serialize(const ol_value *v, void **out_bytes, size_t *out_size) {
  return ol_encoded_value_serialize(v, out_bytes, out_size);
}
OLW int olw_encoded_value_logical_type(const ol_value *v, int *dtype, int64_t *dims, size_t *rank) {
  ol_dtype d = OL_DTYPE_UNDEFINED;
  ol_status s = ol_encoded_value_logical_type(v, &d, dims, rank);
  *dtype = (int)d;
  return s;
}
OLW const char *olw_encoded_value_parameter_ref(const ol_value *v) { return ol_encoded_value_parameter_ref(v); }
OLW int olw_encoded_value_raw_data(const ol_value *v, const void **data, size_t *size) {
  return ol_encoded_value_raw_data(v, data, size);
}

/* ------------------------------------------------------------ cancellation */

OLW int olw_completion_create(ol_completion **out) { return ol_completion_create(out); }
OLW void olw_completion_destroy(ol_completion *c) { ol_completion_destroy(c); }
OLW int olw_completion_cancel(ol_completion *c, const char *reason) {
  return ol_completion_cancel(c, reason);
}

/* Fault injection on the default allocator (tests, ol_allocator_fail_after):
 * after `count` more successful allocations every allocation fails; -1
 * disables. */
OLW void olw_allocator_fail_after(double count) { ol_allocator_fail_after(NULL, (int64_t)count); }

/* ------------------------------------------------------------ runs with a context */

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
/* Event `index` into out[12] (doubles): action, storage_allocations,
 * storage_allocated_bytes, storage_prefix_copied_bytes,
 * storage_append_copied_bytes, storage_reuse_count, allocated_bytes,
 * peak_bytes, paged_copied_bytes, paged_dequantized_bytes,
 * paged_peak_workspace_bytes, paged_validated_pages; names[0..1] receive
 * node_name and op_type (borrowed). */
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
  out[8] = (double)e->paged_copied_bytes;
  out[9] = (double)e->paged_dequantized_bytes;
  out[10] = (double)e->paged_peak_workspace_bytes;
  out[11] = (double)e->paged_validated_pages;
  names[0] = e->node_name;
  names[1] = e->op_type;
  return OL_OK;
}

/* ------------------------------------------------------------ persistent state */

OLW int olw_state_create(ol_model *model, const char *const *names, ol_value *const *initial,
                         size_t count, double persistent_tensor_initial_capacity, int intra_op_num_threads,
                         const ol_page_format_rule *rules, size_t rule_count, olw_page_format_js format_fn,
                         ol_state **out) {
  ol_session_options options;
  ol_session_options_init(&options);
  options.persistent_tensor_initial_capacity = (int64_t)persistent_tensor_initial_capacity;
  options.intra_op_num_threads = intra_op_num_threads;
  set_page_formats(&options, rules, rule_count, format_fn);
  return ol_state_create(model, names, initial, count, &options, out);
}
/* A run from JS copies its feeds into wasm values just before the run and
 * releases them just after, inside the session's payload reuse scope
 * (ol_session_scope_begin; a state's: its session). scope is JS memory. */
OLW int olw_session_scope_begin(const ol_session *session, ol_run_scope *scope) {
  return ol_session_scope_begin(session, scope);
}
OLW void olw_session_scope_end(ol_run_scope *scope) { ol_session_scope_end(scope); }

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

OLW int olw_model_to_paged(const ol_model *model, double block_size, double max_tokens, double left_window_size,
                           ol_model **out) {
  ol_paged_model_options options = {(int64_t)block_size, (int64_t)max_tokens, (int64_t)left_window_size};
  return ol_model_to_paged(model, &options, out);
}

/* ------------------------------------------------------------ generation */

/* An int64 option passed as a double: NaN (not given) keeps the default. */
static int64_t option_or(double value, int64_t fallback) { return value == value ? (int64_t)value : fallback; }

/* ol_generator_create with its options as scalars: int64 quantities as
 * doubles (exact below 2^53; NaN: the default), the uint64 seed as two 32-bit halves, the
 * graph names (input ids, logits, attention mask, position ids; NULL entries
 * for the defaults) as a table, and the session options the JS package sets. */
OLW int olw_generator_create(ol_model *model, ol_session *session, ol_context *context, const char *const *names,
                             ol_value *const *feeds, size_t n_feeds,
                             double max_new_tokens, double temperature, uint32_t seed_low, uint32_t seed_high,
                             double eos_token_id, double pad_token_id, const char *const *io_names,
                             double persistent_tensor_initial_capacity, int intra_op_num_threads,
                             const ol_page_format_rule *rules, size_t rule_count, olw_page_format_js format_fn,
                             ol_completion *completion, ol_generator **out) {
  ol_generate_options options;
  ol_generate_options_init(&options);
  options.max_new_tokens = option_or(max_new_tokens, options.max_new_tokens);
  options.temperature = temperature;
  options.seed = (uint64_t)seed_high << 32 | seed_low;
  options.eos_token_id = option_or(eos_token_id, options.eos_token_id);
  options.pad_token_id = option_or(pad_token_id, options.pad_token_id);
  options.input_ids_name = io_names[0];
  options.logits_name = io_names[1];
  options.attention_mask_name = io_names[2];
  options.position_ids_name = io_names[3];
  ol_session_options session_options;
  ol_session_options_init(&session_options);
  session_options.persistent_tensor_initial_capacity =
      option_or(persistent_tensor_initial_capacity, session_options.persistent_tensor_initial_capacity);
  session_options.intra_op_num_threads = intra_op_num_threads;
  set_page_formats(&session_options, rules, rule_count, format_fn);
  return ol_generator_create(model, session, context, names, feeds, n_feeds, &options, &session_options, completion,
                             out);
}
OLW int olw_generator_step(ol_generator *g, int *done) { return ol_generator_step(g, done); }
OLW int olw_generator_done(const ol_generator *g) { return ol_generator_done(g); }
OLW void olw_generator_stop(ol_generator *g) { ol_generator_stop(g); }
OLW size_t olw_generator_batch(const ol_generator *g) { return ol_generator_batch(g); }
OLW double olw_generator_generated(const ol_generator *g) { return (double)ol_generator_generated(g); }
OLW const int64_t *olw_generator_last_tokens(const ol_generator *g) { return ol_generator_last_tokens(g); }
OLW int olw_generator_tokens(const ol_generator *g, ol_value **out) { return ol_generator_tokens(g, out); }
OLW void olw_generator_destroy(ol_generator *g) { ol_generator_destroy(g); }
/* The generator's persistent state into *out (0 for models without bindings). */
OLW void olw_generator_state(const ol_generator *g, const ol_state **out) { *out = ol_generator_state(g); }

/* ------------------------------------------------------------ paged KV caches */

/* Token and byte counts come back as doubles (see the top of this file). */
OLW int olw_paged_cache_empty(ol_value **out) { return ol_paged_cache_empty(out); }
OLW int olw_paged_cache_parse(const void *bytes, size_t size, ol_value **out) {
  return ol_paged_cache_parse(bytes, size, out);
}
OLW int olw_paged_cache_serialize(const ol_value *cache, void **out_bytes, size_t *out_size) {
  return ol_paged_cache_serialize(cache, out_bytes, out_size);
}
OLW int olw_paged_cache_length(const ol_value *cache, double *tokens) {
  int64_t n = 0;
  ol_status s = ol_paged_cache_length(cache, &n);
  *tokens = (double)n;
  return s;
}
OLW int olw_paged_cache_payload_bytes(const ol_value *cache, double *bytes) {
  size_t n = 0;
  ol_status s = ol_paged_cache_payload_bytes(cache, &n);
  *bytes = (double)n;
  return s;
}
OLW int olw_paged_cache_truncate(const ol_value *cache, double tokens, ol_value **out) {
  return ol_paged_cache_truncate(cache, (int64_t)tokens, out);
}
OLW int olw_paged_cache_fork(ol_value *cache, ol_value **out) { return ol_paged_cache_fork(cache, out); }
OLW int olw_paged_cache_is(const ol_value *value) { return ol_paged_cache_is(value); }
OLW int olw_paged_cache_compact(const ol_value *cache, double max_block_tokens, ol_value **out) {
  return ol_paged_cache_compact(cache, (int64_t)max_block_tokens, out);
}
/* ol_paged_cache_quantize with the two formats as scalars (dtype codes). */
OLW int olw_paged_cache_quantize(const ol_value *cache, const int64_t *indices, size_t count, int key_type,
                                 float key_scale, int key_zero_point, int value_type, float value_scale,
                                 int value_zero_point, ol_value **out) {
  ol_page_format key = {(ol_dtype)key_type, key_scale, key_zero_point};
  ol_page_format value = {(ol_dtype)value_type, value_scale, value_zero_point};
  return ol_paged_cache_quantize(cache, indices, count, &key, &value, out);
}
OLW int olw_model_with_paged_cache_initializers(const ol_model *model, const char *const *names,
                                                ol_value *const *caches, size_t count, ol_model **out) {
  return ol_model_with_paged_cache_initializers(model, names, caches, count, out);
}
