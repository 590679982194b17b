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
