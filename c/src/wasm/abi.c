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
#include "runtime/session.h"
#include "core/status.h"
#include "core/value.h"
#include "ir/proto_depth.h"
#include "ir/serial_pieces.h"
#include "quant/catalogue.h"
#include "quant/codec.h"
#include "quant/ort.h"
#include "quant/plan.h"
#include "quant/wire.h"
#include "ir/quant_params.h"

#define OLW EMSCRIPTEN_KEEPALIVE

/* ------------------------------------------------------------ status, version */

OLW const char *olw_version(void) { return ol_version(); }
OLW const char *olw_last_error(void) { return ol_last_error(); }
OLW const char *olw_status_name(int status) { return ol_status_name((ol_status)status); }
OLW int olw_set_num_threads(int threads) { return ol_set_num_threads(threads); }
OLW int olw_get_num_threads(void) { return ol_get_num_threads(); }
OLW const char *olw_dtype_name(int dtype) { return ol_dtype_name((ol_dtype)dtype); }
OLW int olw_dtype_bits(int dtype) { return ol_dtype_bits((ol_dtype)dtype); }

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

OLW int olw_model_load(const void *bytes, size_t size, ol_model **out) {
  return ol_model_load(bytes, size, NULL, out);
}
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
OLW int olw_model_check(const ol_model *model) { return ol_model_check(model); }
OLW int olw_model_infer_shapes(const ol_model *model, ol_model **out) { return ol_model_infer_shapes(model, out); }
OLW void olw_model_destroy(ol_model *model) { ol_model_destroy(model); }

/* Piecewise serialization (ir/serial_pieces.h) into out[4]: the pieces
 * handle (free with olw_serial_pieces_free), the piece list ({data, size}
 * pairs), the piece count and the total size. */
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
OLW void olw_serial_pieces_free(ol_serial_pieces *p) { ol_serial_pieces_free(p); }

/* The model's interface without a session (ol_model_input_count...). */
OLW size_t olw_model_io_count(const ol_model *model, int is_output) {
  return is_output ? ol_model_output_count(model) : ol_model_input_count(model);
}
OLW const char *olw_model_io_name(const ol_model *model, int is_output, size_t index) {
  return is_output ? ol_model_output_name(model, index) : ol_model_input_name(model, index);
}

/* ------------------------------------------------------------ sessions */

/* intra_op_num_threads: 0 for the module's default */
/* grow_outputs: present = Concat(past, new) outputs keep spare capacity and
 * a pitched layout (see ol_session_grow_outputs); olw_value_describe reports
 * such tensors with no data pointer and olw_value_densify copies them. */
OLW int olw_session_create(ol_model *model, int intra_op_num_threads, int grow_outputs, ol_session **out) {
  ol_session_options options;
  ol_session_options_init(&options);
  options.intra_op_num_threads = intra_op_num_threads;
  ol_status s = ol_session_create(model, &options, out);
  if (s == OL_OK) ol_session_grow_outputs(*out, grow_outputs != 0);
  return s;
}
OLW void olw_session_destroy(ol_session *session) { ol_session_destroy(session); }
OLW size_t olw_session_input_count(const ol_session *s) { return ol_session_input_count(s); }
OLW size_t olw_session_output_count(const ol_session *s) { return ol_session_output_count(s); }
/* 1 and *axis (Concat: its attribute, not normalized) when a feed of input
 * i is best copied in with spare rows (ol_session_input_grows); else 0. */
OLW int olw_session_input_grow_axis(const ol_session *s, size_t i, int32_t *axis) {
  int64_t a = 0;
  if (!ol_session_input_grows(s, i, &a) || a < -OL_MAX_RANK || a >= OL_MAX_RANK) return 0;
  *axis = (int32_t)a;
  return 1;
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

/* The per-run fast paths of the JS package: one call instead of several.
 * olw_tensor_new: olw_tensor_create, then out[1] = its payload pointer. */
OLW int olw_tensor_new(int dtype, const int64_t *dims, size_t rank, int32_t *out) {
  ol_value *v = NULL;
  ol_status s = ol_tensor_create(NULL, (ol_dtype)dtype, dims, rank, &v);
  out[0] = (int32_t)(uintptr_t)v;
  out[1] = s == OL_OK ? (int32_t)(uintptr_t)ol_tensor_data(v) : 0;
  return s;
}
/* olw_tensor_new with spare rows along axis (ol_value_new_grown: pitched,
 * out[2] = storage rows per block): the copy of a cache fed to a session
 * whose Concat appends to it (olw_session_input_grow_axis). */
OLW int olw_tensor_new_grown(int dtype, const int64_t *dims, size_t rank, int axis, int32_t *out) {
  ol_value *v = NULL;
  ol_status s = rank > OL_MAX_RANK ? ol_error(OL_INVALID_ARGUMENT, "rank %zu is too large", rank)
                                   : ol_value_new_grown(NULL, (ol_dtype)dtype, (int)rank, dims, axis, &v);
  out[0] = (int32_t)(uintptr_t)v;
  out[1] = s == OL_OK ? (int32_t)(uintptr_t)ol_tensor_data(v) : 0;
  out[2] = s == OL_OK ? (int32_t)v->tensor.pitch : 0;
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
  /* -1: no dense view (a pitched cache, weights laid out at load: olw_value_densify first) */
  out[2] = ol_tensor_is_strided(&v->tensor) || ol_tensor_has_layout(&v->tensor) ? -1 : (double)(uintptr_t)ol_tensor_data(v);
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
/* A dense tensor with v's elements: v itself (retained) when it is dense. */
OLW int olw_value_densify(ol_value *v, ol_value **out) {
  *out = ol_value_retain(v);
  ol_status s = ol_value_densify(NULL, out);
  if (s != OL_OK) {
    ol_value_release(*out);
    *out = NULL;
  }
  return s;
}
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
OLW const char *olw_encoded_value_layout_name(const ol_value *v) { return ol_encoded_value_layout_name(v); }

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
                         size_t count, double persistent_tensor_initial_capacity, int intra_op_num_threads,
                         ol_state **out) {
  ol_session_options options;
  ol_session_options_init(&options);
  options.persistent_tensor_initial_capacity = (int64_t)persistent_tensor_initial_capacity;
  options.intra_op_num_threads = intra_op_num_threads;
  return ol_state_create(model, names, initial, count, &options, out);
}
/* A run from JS copies its feeds into wasm values just before the run and
 * releases them just after: inside the run's payload reuse scope, those
 * copies reuse the previous run's blocks too, so that a decode step with
 * stable shapes makes no allocator call at all. Returns 1 when it entered
 * (then call olw_run_reuse_leave), 0 otherwise. Runs from JS are
 * synchronous, so one scope at a time. */
static ol_payload_pool_scope js_run_scope;
static int js_run_scope_open;
OLW int olw_run_reuse_enter(ol_session *session, ol_state *state) {
  if (js_run_scope_open) return 0;
  ol_payload_pool *pool = state ? ol_state_payload_pool(state) : session ? session->pool : NULL;
  js_run_scope = ol_payload_pool_enter(pool, session ? session->allocator : NULL);
  js_run_scope_open = js_run_scope.pool != NULL;
  return js_run_scope_open;
}
OLW void olw_run_reuse_leave(void) {
  if (!js_run_scope_open) return;
  js_run_scope_open = 0;
  ol_payload_pool_leave(js_run_scope);
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

/* ------------------------------------------------------------ quantization
 * Thin wrappers over c/src/quant (catalogue, plans, wire, ORT MatMulNBits).
 * Encoded values cross the boundary as serialized EncodedValueProto bytes;
 * models (optional, for type_ref resolution) as serialized ModelProto bytes. */

OLW int olw_quant_format_count(void) { return OL_QUANT_FORMAT_COUNT; }
OLW int olw_quant_format_at(int index) { return (int)ol_quant_formats()[index]; }
OLW const char *olw_quant_format_name(int format) {
  return ol_quant_format_name((ol_quant_format)format);
}
OLW const char *olw_quant_format_enum_name(int format) {
  const ol_quant_profile *row = ol_quant_profile_info((ol_quant_format)format);
  return row ? row->enum_name : NULL;
}
OLW int olw_quant_format_parse(const char *name, int *out) {
  ol_quant_format format;
  ol_status s = ol_quant_format_parse(name, &format);
  if (s == OL_OK) *out = (int)format;
  return s;
}

OLW int olw_quant_make_plan(int format, double count, double block_size, ol_quant_plan **out) {
  if (!(count >= 0) || !(block_size >= 0))
    return ol_error(OL_INVALID_ARGUMENT, "count and block_size must be non-negative");
  return ol_quant_make_plan((ol_quant_format)format, (uint64_t)count, (uint64_t)block_size, out);
}
OLW int olw_quant_make_matmul_nbits_plan(int format, double k, double n, double block_size,
                                         ol_quant_plan **out) {
  if (!(k >= 0) || !(n >= 0) || !(block_size >= 0))
    return ol_error(OL_INVALID_ARGUMENT, "k, n and block_size must be non-negative");
  return ol_quant_make_matmul_nbits_plan((ol_quant_format)format, (uint64_t)k, (uint64_t)n,
                                         (uint64_t)block_size, out);
}
OLW void olw_quant_plan_destroy(ol_quant_plan *plan) { ol_quant_plan_destroy(plan); }
OLW int olw_quant_plan_clone(const ol_quant_plan *plan, ol_quant_plan **out) {
  return ol_quant_plan_clone(plan, out);
}
/* out[0..6]: format, run count, permutation size, transform size, outlier
 * count, matrix rank, K, N */
OLW void olw_quant_plan_info(const ol_quant_plan *plan, double *out) {
  out[0] = plan->format;
  out[1] = (double)plan->run_count;
  out[2] = (double)plan->permutation_size;
  out[3] = plan->transform_size;
  out[4] = (double)plan->outlier_count;
  out[5] = plan->matrix_rank;
  out[6] = (double)plan->matrix_shape[0];
  out[7] = (double)plan->matrix_shape[1];
}
/* Run r's layout (9-element header order: count, method, bits, signed, books,
 * entries, vector_size, base3, cast_type) then its block count. */
OLW int olw_quant_plan_run_info(const ol_quant_plan *plan, double r, double *out) {
  if (!(r >= 0) || (size_t)r >= plan->run_count)
    return ol_error(OL_INVALID_ARGUMENT, "run index %g out of range (%zu runs)", r, plan->run_count);
  const ol_quant_run *run = &plan->runs[(size_t)r];
  int64_t header[OL_QUANT_HEADER_SIZE];
  ol_quant_layout_header(&run->layout, header);
  for (int i = 0; i < OL_QUANT_HEADER_SIZE; i++) out[i] = (double)header[i];
  out[OL_QUANT_HEADER_SIZE] = (double)run->block_count;
  return OL_OK;
}
static ol_status block_at(const ol_quant_plan *plan, double r, double b, ol_quant_block **out) {
  if (!(r >= 0) || (size_t)r >= plan->run_count)
    return ol_error(OL_INVALID_ARGUMENT, "run index %g out of range (%zu runs)", r, plan->run_count);
  const ol_quant_run *run = &plan->runs[(size_t)r];
  if (!(b >= 0) || (size_t)b >= run->block_count)
    return ol_error(OL_INVALID_ARGUMENT, "block index %g out of range (%zu blocks)", b,
                    run->block_count);
  *out = &run->blocks[(size_t)b];
  return OL_OK;
}
/* out: scale, zero point, offset, codebook size */
OLW int olw_quant_plan_block(const ol_quant_plan *plan, double r, double b, double *out) {
  ol_quant_block *block;
  OL_TRY(block_at(plan, r, b, &block));
  out[0] = block->scale;
  out[1] = block->zero_point;
  out[2] = block->offset;
  out[3] = (double)block->codebook_size;
  return OL_OK;
}
OLW int olw_quant_plan_block_codebook(const ol_quant_plan *plan, double r, double b, double *out) {
  ol_quant_block *block;
  OL_TRY(block_at(plan, r, b, &block));
  for (size_t i = 0; i < block->codebook_size; i++) out[i] = block->codebook[i];
  return OL_OK;
}
/* Sets every block's scale of run r from `scales` (block order). */
OLW int olw_quant_plan_set_scales(ol_quant_plan *plan, double r, const double *scales,
                                  double count) {
  if (!(r >= 0) || (size_t)r >= plan->run_count)
    return ol_error(OL_INVALID_ARGUMENT, "run index %g out of range (%zu runs)", r, plan->run_count);
  ol_quant_run *run = &plan->runs[(size_t)r];
  if ((size_t)count != run->block_count)
    return ol_error(OL_INVALID_ARGUMENT, "%g scales for %zu blocks", count, run->block_count);
  for (size_t i = 0; i < run->block_count; i++) run->blocks[i].scale = scales[i];
  return OL_OK;
}
OLW int olw_quant_plan_set_zero_points(ol_quant_plan *plan, double r, const double *values,
                                       double count) {
  if (!(r >= 0) || (size_t)r >= plan->run_count)
    return ol_error(OL_INVALID_ARGUMENT, "run index %g out of range (%zu runs)", r, plan->run_count);
  ol_quant_run *run = &plan->runs[(size_t)r];
  if ((size_t)count != run->block_count)
    return ol_error(OL_INVALID_ARGUMENT, "%g zero points for %zu blocks", count, run->block_count);
  for (size_t i = 0; i < run->block_count; i++) run->blocks[i].zero_point = values[i];
  return OL_OK;
}

/* ol_quant_calibrate over a logical tensor of `count` elements of dtype. */
OLW int olw_quant_calibrate(ol_quant_plan *plan, int dtype, const void *data, double count) {
  size_t n = (size_t)count;
  double *values = malloc(n ? n * sizeof(double) : 1);
  if (!values) return ol_error(OL_OUT_OF_MEMORY, "out of memory reading %zu values", n);
  ol_status s = ol_quant_read_floats((ol_dtype)dtype, data, n, values);
  if (s == OL_OK) s = ol_quant_calibrate(plan, values, n);
  free(values);
  return s;
}

/* ol_quant_encode_proto, serialized (bytes freed with free()). name may be NULL. */
OLW int olw_quant_encode(const ol_quant_plan *plan, int dtype, const void *data, const int64_t *dims,
                         int rank, const char *name, uint8_t **out_bytes, size_t *out_size) {
  Onnx__EncodedValueProto *value = NULL;
  OL_TRY(ol_quant_encode_proto(plan, (ol_dtype)dtype, data, rank, dims, name, &value));
  size_t size = onnx__encoded_value_proto__get_packed_size(value);
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes) {
    ol_quant_proto_free(value);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory serializing an encoded value");
  }
  onnx__encoded_value_proto__pack(value, bytes);
  ol_quant_proto_free(value);
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}

static ol_status unpack_inputs(const uint8_t *bytes, size_t size, const uint8_t *model_bytes,
                               size_t model_size, Onnx__EncodedValueProto **value,
                               Onnx__ModelProto **model) {
  *value = NULL;
  *model = NULL;
  OL_TRY(ol_proto_check_depth(&onnx__encoded_value_proto__descriptor, bytes, size, "EncodedValueProto"));
  if (model_bytes) OL_TRY(ol_proto_check_depth(&onnx__model_proto__descriptor, model_bytes, model_size, "model"));
  *value = onnx__encoded_value_proto__unpack(NULL, size, bytes);
  if (!*value) return ol_error(OL_INVALID_ARGUMENT, "malformed EncodedValueProto bytes");
  *model = NULL;
  if (model_bytes) {
    *model = onnx__model_proto__unpack(NULL, model_size, model_bytes);
    if (!*model) {
      onnx__encoded_value_proto__free_unpacked(*value, NULL);
      return ol_error(OL_INVALID_ARGUMENT, "malformed ModelProto bytes");
    }
  }
  return OL_OK;
}

/* Decodes serialized EncodedValueProto bytes into a new tensor of its logical
 * dtype. model_bytes may be NULL. */
OLW int olw_quant_decode(const uint8_t *bytes, size_t size, const uint8_t *model_bytes,
                         size_t model_size, ol_value **out) {
  Onnx__EncodedValueProto *value;
  Onnx__ModelProto *model;
  OL_TRY(unpack_inputs(bytes, size, model_bytes, model_size, &value, &model));
  ol_quant_decoded decoded = {0};
  ol_status s = ol_quant_decode_with_model(value, model, &decoded); /* compact: model's set */
  ol_value *tensor = NULL;
  if (s == OL_OK) s = ol_tensor_create(NULL, decoded.dtype, decoded.dims, (size_t)decoded.rank, &tensor);
  if (s == OL_OK) s = ol_quant_write_floats(decoded.dtype, decoded.values, decoded.count,
                                            ol_tensor_data(tensor));
  if (s == OL_OK) {
    *out = tensor;
    tensor = NULL;
  }
  if (tensor) ol_value_release(tensor);
  ol_quant_decoded_clear(&decoded);
  onnx__encoded_value_proto__free_unpacked(value, NULL);
  if (model) onnx__model_proto__free_unpacked(model, NULL);
  return s;
}

/* ol_quant_export_matmul_nbits_inputs into an owned handle. */
OLW int olw_quant_export_matmul_nbits(const uint8_t *bytes, size_t size, const uint8_t *model_bytes,
                                      size_t model_size, ol_quant_matmul_nbits_inputs **out) {
  Onnx__EncodedValueProto *value;
  Onnx__ModelProto *model;
  OL_TRY(unpack_inputs(bytes, size, model_bytes, model_size, &value, &model));
  ol_quant_matmul_nbits_inputs *inputs = calloc(1, sizeof *inputs);
  ol_status s = inputs ? ol_quant_export_matmul_nbits_inputs(value, model, inputs)
                       : ol_error(OL_OUT_OF_MEMORY, "out of memory");
  onnx__encoded_value_proto__free_unpacked(value, NULL);
  if (model) onnx__model_proto__free_unpacked(model, NULL);
  if (s != OL_OK) {
    free(inputs);
    return s;
  }
  *out = inputs;
  return OL_OK;
}
OLW void olw_quant_matmul_nbits_destroy(ol_quant_matmul_nbits_inputs *inputs) {
  if (!inputs) return;
  ol_quant_matmul_nbits_inputs_clear(inputs);
  free(inputs);
}
/* out: K, N, bits, block_size */
OLW void olw_quant_matmul_nbits_attributes(const ol_quant_matmul_nbits_inputs *in, double *out) {
  out[0] = (double)in->k;
  out[1] = (double)in->n;
  out[2] = (double)in->bits;
  out[3] = (double)in->block_size;
}
/* Tensor i (0 B, 1 scales, 2 zero_points): 0 when absent, else 1 with
 * info = [dtype, rank, dims...] and the raw bytes. */
OLW int olw_quant_matmul_nbits_tensor(const ol_quant_matmul_nbits_inputs *in, int i, double *info,
                                      const uint8_t **data, size_t *size) {
  const Onnx__TensorProto *t = i == 0 ? in->weights : i == 1 ? in->scales : in->zero_points;
  if (!t) return 0;
  info[0] = t->data_type;
  info[1] = (double)t->n_dims;
  for (size_t d = 0; d < t->n_dims && d < 4; d++) info[2 + d] = (double)t->dims[d];
  *data = t->raw_data.data;
  *size = t->raw_data.len;
  return 1;
}

/* ol_quant_plan_set_runs from flat arrays: count runs, each a 9-entry wire
 * header (checked by ol_quant_layout_from_header) and a block count; per
 * block scale, zero point, offset and codebook size; codebooks concatenated
 * in block order. The plan keeps deep copies. */
OLW int olw_quant_plan_set_runs(ol_quant_plan *plan, double count, const double *headers,
                                const double *block_counts, const double *params,
                                const double *codebook_sizes, const double *codebooks) {
  size_t n = (size_t)count, block = 0, book = 0;
  ol_quant_run *runs = calloc(n ? n : 1, sizeof *runs);
  if (!runs) return ol_error(OL_OUT_OF_MEMORY, "out of memory");
  ol_status s = OL_OK;
  for (size_t r = 0; r < n && s == OL_OK; r++) {
    int64_t header[OL_QUANT_HEADER_SIZE];
    for (int i = 0; i < OL_QUANT_HEADER_SIZE; i++) header[i] = (int64_t)headers[r * OL_QUANT_HEADER_SIZE + i];
    s = ol_quant_layout_from_header(header, &runs[r].layout);
    size_t blocks = (size_t)block_counts[r];
    runs[r].blocks = s == OL_OK ? calloc(blocks ? blocks : 1, sizeof(ol_quant_block)) : NULL;
    if (s == OL_OK && !runs[r].blocks) s = ol_error(OL_OUT_OF_MEMORY, "out of memory");
    if (s == OL_OK) runs[r].block_count = blocks;
    for (size_t b = 0; b < blocks && s == OL_OK; b++, block++) {
      ol_quant_block *dst = &runs[r].blocks[b];
      dst->scale = params[3 * block];
      dst->zero_point = params[3 * block + 1];
      dst->offset = params[3 * block + 2];
      size_t size = (size_t)codebook_sizes[block];
      if (size) s = ol_quant_block_set_codebook(dst, codebooks + book, size);
      book += size;
    }
  }
  if (s == OL_OK) s = ol_quant_plan_set_runs(plan, runs, n);
  for (size_t r = 0; r < n; r++) ol_quant_run_clear(&runs[r]);
  free(runs);
  return s;
}

/* make_quantization_type(plan), serialized StructTypeProto (freed with free()). */
OLW int olw_quant_make_type(const ol_quant_plan *plan, uint8_t **out_bytes, size_t *out_size) {
  Onnx__StructTypeProto *type = NULL;
  OL_TRY(ol_quant_make_type(plan, &type));
  size_t size = onnx__struct_type_proto__get_packed_size(type);
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes) {
    ol_quant_type_free(type);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory serializing a quantization type");
  }
  onnx__struct_type_proto__pack(type, bytes);
  ol_quant_type_free(type);
  *out_bytes = bytes;
  *out_size = size;
  return OL_OK;
}

/* Plan arrays as doubles (indices exact below 2^53). which: 0 permutation,
 * 1 forward, 2 inverse, 3 outliers. Copies plan values into out. */
OLW void olw_quant_plan_array(const ol_quant_plan *plan, int which, double *out) {
  size_t n = which == 0 ? plan->permutation_size : which == 1 ? plan->forward_size
           : which == 2 ? plan->inverse_size : plan->outlier_count;
  for (size_t i = 0; i < n; i++) {
    if (which == 0) out[i] = plan->permutation ? (double)plan->permutation[i] : 0;
    else if (which == 1) out[i] = plan->forward ? plan->forward[i] : 0;
    else if (which == 2) out[i] = plan->inverse ? plan->inverse[i] : 0;
    else out[i] = plan->outliers ? (double)plan->outliers[i] : 0;
  }
}
OLW double olw_quant_plan_array_size(const ol_quant_plan *plan, int which) {
  return (double)(which == 0 ? plan->permutation_size : which == 1 ? plan->forward_size
                  : which == 2 ? plan->inverse_size : plan->outlier_count);
}
static ol_status to_indices(const double *values, size_t count, int64_t **out) {
  *out = malloc(count ? count * sizeof(int64_t) : 1);
  if (!*out) return ol_error(OL_OUT_OF_MEMORY, "out of memory");
  for (size_t i = 0; i < count; i++) (*out)[i] = (int64_t)values[i];
  return OL_OK;
}
OLW int olw_quant_plan_set_permutation(ol_quant_plan *plan, const double *values, double count) {
  int64_t *indices;
  OL_TRY(to_indices(values, (size_t)count, &indices));
  ol_status s = ol_quant_plan_set_permutation(plan, indices, (size_t)count);
  free(indices);
  return s;
}
OLW int olw_quant_plan_set_outliers(ol_quant_plan *plan, const double *values, double count) {
  int64_t *indices;
  OL_TRY(to_indices(values, (size_t)count, &indices));
  ol_status s = ol_quant_plan_set_outliers(plan, indices, (size_t)count);
  free(indices);
  return s;
}
OLW int olw_quant_plan_set_transform(ol_quant_plan *plan, double size, const double *forward,
                                     double forward_count, const double *inverse,
                                     double inverse_count) {
  return ol_quant_plan_set_transform(plan, (uint32_t)size, forward, (size_t)forward_count, inverse,
                                     (size_t)inverse_count);
}

/* plan.format and plan.matrix_shape assignment (checked when encoding). */
OLW int olw_quant_plan_set_format(ol_quant_plan *plan, int format) {
  if (!ol_quant_format_valid((ol_quant_format)format))
    return ol_error(OL_INVALID_ARGUMENT, "Unknown quantization format: %d", format);
  plan->format = (ol_quant_format)format;
  return OL_OK;
}
OLW int olw_quant_plan_set_matrix_shape(ol_quant_plan *plan, int rank, double k, double n) {
  if (rank != 0 && rank != 2)
    return ol_error(OL_INVALID_ARGUMENT, "matrix_shape must have 0 or 2 dimensions (got %d)", rank);
  if (rank == 2 && (!(k >= 0) || !(n >= 0)))
    return ol_error(OL_INVALID_ARGUMENT, "matrix_shape dimensions must be non-negative");
  plan->matrix_rank = rank;
  plan->matrix_shape[0] = rank ? (int64_t)k : 0;
  plan->matrix_shape[1] = rank ? (int64_t)n : 0;
  return OL_OK;
}
