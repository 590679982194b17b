/* onnx-light public C API.
 *
 * Conventions (see ../../README.md and DESIGN.md):
 *  - every fallible call returns ol_status; ol_last_error() gives the message
 *    of the last failure on the calling thread;
 *  - handles are opaque; whoever creates a handle destroys it; destroying NULL
 *    is a no-op;
 *  - functions that take ownership of an argument end in _take or say so.
 */
#ifndef ONNXLIGHT_H
#define ONNXLIGHT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define OL_VERSION "0.1.0"

/* ---------------------------------------------------------------- status */

typedef enum ol_status {
  OL_OK = 0,
  OL_INVALID_ARGUMENT = 1,
  OL_INVALID_MODEL = 2,
  OL_NOT_IMPLEMENTED = 3,
  OL_OUT_OF_MEMORY = 4,
  OL_CANCELLED = 5,
  OL_FAILED_PRECONDITION = 6,
  OL_NOT_FOUND = 7,
  OL_INTERNAL = 8,
  OL_STATUS_COUNT
} ol_status;

/* Message of the last failure on this thread ("" if none). */
const char *ol_last_error(void);
/* "OL_INVALID_ARGUMENT" etc. */
const char *ol_status_name(ol_status status);
const char *ol_version(void);

/* ---------------------------------------------------------------- threads */

/* Intra-op threads (the calling thread included) of runs whose session does
 * not set intra_op_num_threads; the number of cores until set. 1 <= threads
 * <= 64. Fewer take part when fewer workers can start (in wasm: the Web
 * Workers the module preloaded; built without threads: always 1). Results do
 * not depend on the count. */
ol_status ol_set_num_threads(int threads);
int ol_get_num_threads(void);

/* ---------------------------------------------------------------- dtypes */

/* Values equal TensorProto.DataType. */
typedef enum ol_dtype {
  OL_DTYPE_UNDEFINED = 0,
  OL_DTYPE_FLOAT = 1,
  OL_DTYPE_UINT8 = 2,
  OL_DTYPE_INT8 = 3,
  OL_DTYPE_UINT16 = 4,
  OL_DTYPE_INT16 = 5,
  OL_DTYPE_INT32 = 6,
  OL_DTYPE_INT64 = 7,
  OL_DTYPE_STRING = 8,
  OL_DTYPE_BOOL = 9,
  OL_DTYPE_FLOAT16 = 10,
  OL_DTYPE_DOUBLE = 11,
  OL_DTYPE_UINT32 = 12,
  OL_DTYPE_UINT64 = 13,
  OL_DTYPE_COMPLEX64 = 14,
  OL_DTYPE_COMPLEX128 = 15,
  OL_DTYPE_BFLOAT16 = 16,
  OL_DTYPE_FLOAT8E4M3FN = 17,
  OL_DTYPE_FLOAT8E4M3FNUZ = 18,
  OL_DTYPE_FLOAT8E5M2 = 19,
  OL_DTYPE_FLOAT8E5M2FNUZ = 20,
  OL_DTYPE_UINT4 = 21,
  OL_DTYPE_INT4 = 22,
  OL_DTYPE_FLOAT4E2M1 = 23,
  OL_DTYPE_FLOAT8E8M0 = 24,
  OL_DTYPE_UINT2 = 25,
  OL_DTYPE_INT2 = 26,
  OL_DTYPE_COUNT
} ol_dtype;

/* "float32"-style name used by the JS package ("float32", "int64", ...). */
const char *ol_dtype_name(ol_dtype dtype);
/* Bits per element (4 for INT4, 8 for INT8, 0 for STRING/UNDEFINED). */
int ol_dtype_bits(ol_dtype dtype);

/* ---------------------------------------------------------------- allocator */

typedef struct ol_allocator ol_allocator;

typedef struct ol_allocator_stats {
  uint64_t live_bytes;        /* bytes of blocks in use */
  uint64_t peak_bytes;        /* highest live_bytes + pooled_bytes */
  uint64_t total_allocations; /* calls that reached the allocator's function */
  uint64_t live_allocations;
  /* Released blocks a session keeps to reuse in its next runs instead of
   * allocating again (at most what one run released; freed with the session). */
  uint64_t pooled_bytes;
} ol_allocator_stats;

/* Process-wide default allocator (malloc/free with statistics). */
ol_allocator *ol_allocator_default(void);
/* A counting allocator on top of caller functions. fail_after >= 0 makes the
 * allocator fail after that many successful allocations (fault injection). */
ol_status ol_allocator_create(void *(*alloc_fn)(void *user, size_t size),
                              void (*free_fn)(void *user, void *ptr),
                              void *user, ol_allocator **out);
void ol_allocator_destroy(ol_allocator *allocator);
void ol_allocator_get_stats(const ol_allocator *allocator, ol_allocator_stats *out);
void ol_allocator_reset_peak(ol_allocator *allocator);
void ol_allocator_fail_after(ol_allocator *allocator, int64_t count);

/* ---------------------------------------------------------------- values */

typedef struct ol_value ol_value;

#ifndef OL_MAX_RANK
#define OL_MAX_RANK 16 /* the highest tensor rank */
#endif

typedef enum ol_value_kind {
  OL_VALUE_TENSOR = 0,
  OL_VALUE_SEQUENCE = 1,
  OL_VALUE_MAP = 2,
  OL_VALUE_OPTIONAL = 3,
  OL_VALUE_ENCODED = 4, /* an encoded (e.g. quantized) tensor: EncodedValueProto payload */
  OL_VALUE_STRUCT = 5,  /* named fields (StructTypeProto structure) */
} ol_value_kind;

/* A new tensor with zeroed storage from allocator (NULL = default). */
ol_status ol_tensor_create(ol_allocator *allocator, ol_dtype dtype, const int64_t *dims,
                           size_t rank, ol_value **out);
/* A tensor viewing caller memory; release(user) runs when the last reference
 * goes (release may be NULL when the caller outlives the tensor). */
ol_status ol_tensor_wrap(ol_dtype dtype, const int64_t *dims, size_t rank, void *data,
                         size_t byte_size, void (*release)(void *user), void *user,
                         ol_value **out);
/* Sets element i of a STRING tensor (copies the bytes). */
ol_status ol_tensor_set_string(ol_value *tensor, size_t index, const char *bytes, size_t length);
ol_status ol_tensor_get_string(const ol_value *tensor, size_t index, const char **bytes,
                               size_t *length);

ol_value *ol_value_retain(ol_value *value);
void ol_value_release(ol_value *value);
ol_value_kind ol_value_get_kind(const ol_value *value);

ol_dtype ol_tensor_dtype(const ol_value *tensor);
size_t ol_tensor_rank(const ol_value *tensor);
const int64_t *ol_tensor_dims(const ol_value *tensor);
int64_t ol_tensor_element_count(const ol_value *tensor);
size_t ol_tensor_byte_size(const ol_value *tensor);
void *ol_tensor_data(const ol_value *tensor);
/* True when the elements lie contiguous in row-major order at
 * ol_tensor_data(). False for a cache that grows in place (the storage
 * keeps spare rows: session outputs with ol_session_options.grow_outputs,
 * ol_tensor_create_grown) and for weights the loader laid out for their
 * kernel: read those through ol_tensor_densify. */
bool ol_tensor_is_dense(const ol_value *tensor);
/* *out: a new reference to a dense tensor with the elements of tensor
 * (tensor itself when it is dense, else a copy). */
ol_status ol_tensor_densify(ol_value *tensor, ol_value **out);
/* A tensor of dims (uninitialized) whose storage keeps spare rows along
 * axis, so that a session Concat appending along that axis (see
 * ol_session_input_grow_axis) grows it in place instead of copying it:
 * every row is in use; the rows of one outer index (the dims before axis)
 * start ol_tensor_pitch() rows apart. axis may be negative (counted from
 * the end). *out stays NULL (OL_OK) when such a tensor is not worth making:
 * elements smaller than a byte, or no elements; create an ordinary one. */
ol_status ol_tensor_create_grown(ol_allocator *allocator, ol_dtype dtype, const int64_t *dims, size_t rank,
                                 int axis, ol_value **out);
/* Storage rows along a grown tensor's axis (its dim there when it has no
 * spare rows). */
int64_t ol_tensor_pitch(const ol_value *tensor);

/* Sequences and optionals (elements retained by the container). A sequence
 * with element_dtype UNDEFINED holds values of any one kind (tensors of any
 * type, structs, encoded values, sequences); otherwise tensors of that type. */
ol_status ol_sequence_create(ol_dtype element_dtype, ol_value *const *items, size_t count,
                             ol_value **out);
size_t ol_sequence_length(const ol_value *sequence);
ol_value *ol_sequence_at(const ol_value *sequence, size_t index);
ol_dtype ol_sequence_element_dtype(const ol_value *sequence);
/* contained may be NULL (an empty optional). */
ol_status ol_optional_create(ol_value *contained, ol_value **out);
ol_value *ol_optional_get(const ol_value *optional);

/* Named structs: fields retained by the struct, names copied. */
ol_status ol_struct_create(const char *const *names, ol_value *const *fields, size_t count, ol_value **out);
size_t ol_struct_field_count(const ol_value *value);
const char *ol_struct_field_name(const ol_value *value, size_t index);
ol_value *ol_struct_field(const ol_value *value, const char *name);

/* Encoded values (OL_VALUE_ENCODED) from and to serialized EncodedValueProto
 * bytes (the payload is copied; the bytes may be freed after parsing;
 * serialized bytes are freed with ol_free). Parsing checks the wire format
 * only: layouts are checked where the value is used. */
ol_status ol_encoded_value_parse(const void *bytes, size_t size, ol_value **out);
ol_status ol_encoded_value_serialize(const ol_value *value, void **out_bytes, size_t *out_size);
/* The logical (decoded) tensor type of an encoded value without decoding it:
 * element type, rank and concrete dims (dims has room for OL_MAX_RANK). */
ol_status ol_encoded_value_logical_type(const ol_value *value, ol_dtype *dtype, int64_t *dims, size_t *rank);
/* The name of an inline struct_type storage layout (e.g.
 * "onnx_light.quantization.v1/int4"), or NULL (affine layouts, type_ref). */
const char *ol_encoded_value_layout_name(const ol_value *value);
/* EncodedValueProto.parameter_ref: the shared quantization parameter set a
 * compact value refers to, or NULL for a self-contained value (and for
 * anything that is not an encoded value). Valid while the value lives. */
const char *ol_encoded_value_parameter_ref(const ol_value *value);
/* The payload bytes (raw_data) in place: valid while the value lives,
 * *data NULL and *size 0 when there is none. */
ol_status ol_encoded_value_raw_data(const ol_value *value, const void **data, size_t *size);

/* ---------------------------------------------------------------- models */

typedef struct ol_model ol_model;

typedef struct ol_model_load_options {
  /* Folder for external data files (native). NULL: no external files. */
  const char *external_data_dir;
  /* Caller-supplied external data: entries matched by location name. */
  size_t external_count;
  const char *const *external_names;
  const void *const *external_data;
  const size_t *external_sizes;
} ol_model_load_options;

/* Parses ModelProto bytes. The bytes may be freed after the call (they are
 * copied once; the weights then view that copy). */
ol_status ol_model_load(const void *bytes, size_t size, const ol_model_load_options *options,
                        ol_model **out);
/* Like ol_model_load without the copy: bytes (from malloc) belong to the
 * model from now on, also on failure; weights are viewed in them. */
ol_status ol_model_load_owned(void *bytes, size_t size, const ol_model_load_options *options,
                              ol_model **out);
ol_status ol_model_load_file(const char *path, ol_model **out);
/* ONNX text syntax. */
ol_status ol_model_parse_text(const char *text, ol_model **out);
/* Text form of a model; free with ol_free. */
ol_status ol_model_print_text(const ol_model *model, char **out_text);
/* Serialized ModelProto; free with ol_free. */
ol_status ol_model_serialize(const ol_model *model, void **out_bytes, size_t *out_size);
/* The same bytes as a list of pieces, without a contiguous copy: large
 * payloads (weights) are pieces pointing into the model's own message, the
 * small rest is copied into blocks; concatenated, the pieces are exactly
 * ol_model_serialize's bytes. A caller that copies the bytes elsewhere (the
 * JS package copies them out of wasm memory) never holds a second copy of
 * the weights. The pieces stay valid until ol_serial_pieces_destroy, also
 * after the model is destroyed. */
typedef struct ol_serial_pieces ol_serial_pieces;
typedef struct ol_serial_piece {
  const uint8_t *data;
  size_t size;
} ol_serial_piece;
ol_status ol_model_serialize_pieces(const ol_model *model, ol_serial_pieces **out);
size_t ol_serial_pieces_count(const ol_serial_pieces *pieces);
const ol_serial_piece *ol_serial_pieces_list(const ol_serial_pieces *pieces);
size_t ol_serial_pieces_total(const ol_serial_pieces *pieces);
void ol_serial_pieces_destroy(ol_serial_pieces *pieces);
ol_status ol_model_check(const ol_model *model);
/* Type and shape inference: a new model whose graph value_info (also in
 * If/Loop/Scan bodies) records the inferred type of every intermediate value
 * it could infer (element type; shape with concrete dims and symbolic
 * dim_params carried through), merged with existing declarations. An
 * inferred type contradicting a declared one (value_info or graph output)
 * fails with OL_INVALID_MODEL naming the value and the node. Operators
 * without a shape function leave their outputs uninferred. ai.rt::Quantize
 * outputs get the struct_type of their `type` attribute; ai.rt::Dequantize
 * its `dtype`, with the logical shape of a concrete encoded initializer.
 * The source model is not modified. External data must be in memory (the
 * result is decoded again without load options). Encoded initializers are
 * checked against their layout (payload size; type_ref resolved) and an
 * encoded value on the input of an operator that does not take one (a
 * tensor operator: decode it first) is OL_INVALID_MODEL naming the node.
 * Calls of model-local functions are inferred through their bodies. */
ol_status ol_model_infer_shapes(const ol_model *model, ol_model **out);
void ol_model_destroy(ol_model *model);
void ol_free(void *ptr);

/* ---------------------------------------------------------------- sessions */

typedef struct ol_session ol_session;
typedef struct ol_completion ol_completion;

/* Paged KV caches (ai.rt::PagedAttention): the storage format of the pages
 * an execution appends, chosen per execution for keys and values. */
typedef struct ol_page_format {
  /* OL_DTYPE_FLOAT (or UNDEFINED) for dense float pages, or affine codes:
   * INT8, UINT8, INT4, UINT4, INT2, UINT2 (x = (code - zero_point) * scale,
   * codes rounded to nearest even and saturated). */
  ol_dtype type;
  /* Affine: > 0. 0: calibrated for each appended page from its own values
   * (largest magnitude over the largest code distance from the zero point),
   * with zero_point 0 for signed codes and the range's midpoint for unsigned. */
  float scale;
  int32_t zero_point;
} ol_page_format;

typedef struct ol_page_formats {
  ol_page_format key, value;
} ol_page_formats;

/* Chooses the formats of the pages appended by one execution from the new
 * keys and values and the number of tokens already cached. */
typedef ol_status (*ol_page_format_fn)(void *user, const ol_value *key, const ol_value *value,
                                       int64_t past_length, ol_page_formats *out);

/* A format rule: from `from_tokens` cached tokens on (the last rule whose
 * from_tokens <= the cached length applies). Rules are checked when a
 * session (state, generator) is made: from_tokens >= 0 and strictly
 * ascending, formats as above (OL_INVALID_ARGUMENT naming the rule). */
typedef struct ol_page_format_rule {
  int64_t from_tokens;
  ol_page_formats formats;
} ol_page_format_rule;

typedef struct ol_session_options {
  ol_allocator *allocator; /* NULL: default */
  /* Initial capacity (elements along the append axis, tokens for Attention)
   * of append buffers made for persistent state; 0 disables reservations.
   * Only ol_state uses it. Set by ol_session_options_init to 32. */
  int64_t persistent_tensor_initial_capacity;
  /* Threads of this session's runs; 0 (the default): ol_get_num_threads(). */
  int intra_op_num_threads;
  /* Nonzero: Concat outputs that are graph outputs (a decoder's present.*)
   * leave a run with spare rows (ol_tensor_is_dense false), so that fed
   * back as the next run's past they grow in place instead of being copied.
   * 0 (the default): every output is dense. ol_state_create ignores it. */
  int grow_outputs;
  /* Formats of appended paged-cache pages: the function when set, else the
   * rules (ascending from_tokens, copied at creation), else dense FLOAT. */
  ol_page_format_fn page_format_fn;
  void *page_format_user;
  const ol_page_format_rule *page_format_rules;
  size_t page_format_rule_count;
} ol_session_options;

void ol_session_options_init(ol_session_options *options);

/* The session keeps a reference to the model; destroy the model afterwards. */
ol_status ol_session_create(ol_model *model, const ol_session_options *options,
                            ol_session **out);
void ol_session_destroy(ol_session *session);

size_t ol_session_input_count(const ol_session *session);
size_t ol_session_output_count(const ol_session *session);
const char *ol_session_input_name(const ol_session *session, size_t index);
const char *ol_session_output_name(const ol_session *session, size_t index);
/* With grow_outputs: true when input index is the past of a cache that a
 * Concat appends to along *axis (its attribute as written): a caller that
 * copies such a feed in gives it spare rows there (ol_tensor_create_grown),
 * so that the first run appends in place too. */
bool ol_session_input_grow_axis(const ol_session *session, size_t index, int64_t *axis);

/* Declared metadata of a graph input/output: element dtype (UNDEFINED for
 * non-tensors), rank (-1 unknown), dims (-1 for symbolic) and symbolic names. */
typedef struct ol_value_info {
  ol_value_kind kind;
  ol_dtype dtype;
  int rank;
  const int64_t *dims;
  const char *const *dim_params; /* NULL entries where the dim is numeric */
} ol_value_info;
ol_status ol_session_input_info(const ol_session *session, size_t index, ol_value_info *out);
ol_status ol_session_output_info(const ol_session *session, size_t index, ol_value_info *out);

/* The same interface read from a model without making a session (which
 * checks and plans the model): its graph inputs that have no initializer
 * and its graph outputs, in declaration order. Names and info stay valid
 * while the model lives. */
size_t ol_model_input_count(const ol_model *model);
size_t ol_model_output_count(const ol_model *model);
const char *ol_model_input_name(const ol_model *model, size_t index);
const char *ol_model_output_name(const ol_model *model, size_t index);
ol_status ol_model_input_info(const ol_model *model, size_t index, ol_value_info *out);
ol_status ol_model_output_info(const ol_model *model, size_t index, ol_value_info *out);

/* Runs the graph. input_names[i] names inputs[i] (not taken). output_names may
 * be NULL (all outputs in declaration order, n_outputs must equal the count).
 * outputs[i] receive new references. completion may be NULL. */
ol_status ol_session_run(ol_session *session, const char *const *input_names,
                         ol_value *const *inputs, size_t n_inputs,
                         const char *const *output_names, ol_value **outputs,
                         size_t n_outputs, ol_completion *completion);

/* Payload reuse for feeds made around a run. A session keeps the payload
 * blocks its runs release and hands them out again in its next runs. A
 * caller that creates a run's feeds just before the run and releases them
 * just after (the JS package copies feeds into wasm memory) brackets both
 * with a scope: the feeds then reuse blocks too, so that a decode step with
 * stable shapes makes no allocator call at all. Between begin and end, the
 * calling thread's allocations from the session's allocator come from the
 * pool. begin returns false (then there is nothing to end) when the session
 * reuses no payloads or its pool is in use; scopes do not nest. The scope
 * is the caller's storage. */
typedef struct ol_run_scope {
  void *reserved[2];
} ol_run_scope;
bool ol_session_scope_begin(const ol_session *session, ol_run_scope *scope);
void ol_session_scope_end(ol_run_scope *scope);

/* ---------------------------------------------------------------- contexts and events */

/* A context carries the event log shared by every run made with it (and by
 * their subgraphs). Events are off unless enabled; with events off nothing is
 * recorded and no lock is taken. */
typedef struct ol_context ol_context;

typedef enum ol_event_action {
  OL_EVENT_PERSISTENT_STORAGE = 1,
  OL_EVENT_PAGED_ATTENTION = 2, /* the paged_* counters of one execution */
} ol_event_action;

typedef struct ol_runtime_event {
  ol_event_action action;
  char node_name[128];     /* truncated to fit */
  char op_type[64];
  uint64_t storage_allocations;
  uint64_t storage_allocated_bytes;
  uint64_t storage_prefix_copied_bytes;
  uint64_t storage_append_copied_bytes;
  uint64_t storage_reuse_count;
  uint64_t allocated_bytes; /* allocator live bytes when recorded */
  uint64_t peak_bytes;      /* allocator peak bytes when recorded */
  /* OL_EVENT_PAGED_ATTENTION: payload bytes of the appended pages written
   * (copied or converted); float bytes decoded from quantized pages for
   * visible tokens (every query counts); peak numerical scratch; page
   * metadata checked for the first time by this node. */
  uint64_t paged_copied_bytes;
  uint64_t paged_dequantized_bytes;
  uint64_t paged_peak_workspace_bytes;
  uint64_t paged_validated_pages;
} ol_runtime_event;

typedef struct ol_context_options {
  int events_enabled;
  ol_allocator *allocator; /* NULL: the session's / default allocator */
} ol_context_options;

ol_status ol_context_create(const ol_context_options *options, ol_context **out);
void ol_context_destroy(ol_context *context);
size_t ol_context_event_count(const ol_context *context);
/* Borrowed pointer, valid until the next record or clear. */
const ol_runtime_event *ol_context_event(const ol_context *context, size_t index);
void ol_context_clear_events(ol_context *context);

/* Runs like ol_session_run, recording events in context (may be NULL). */
ol_status ol_session_run_with(ol_session *session, ol_context *context,
                              const char *const *input_names, ol_value *const *inputs,
                              size_t n_inputs, const char *const *output_names,
                              ol_value **outputs, size_t n_outputs, ol_completion *completion);

/* ---------------------------------------------------------------- persistent state */

/* Values retained between calls for the inputs bound by
 * GraphProto.persistent_bindings (input <- output). Initial values, feeds and
 * published outputs are retained by reference: payloads are never copied by
 * the state layer. A failed or cancelled run leaves the state unchanged. */
typedef struct ol_state ol_state;

/* initial: one value per bound input (names are exact graph input names);
 * an input left out starts from its initializer default (a
 * GraphProto.paged_cache_initializer, say), else it is an error. Paged
 * caches are checked whole when retained (ol_paged_cache_parse's rules).
 * options->page_format_* choose the formats PagedAttention appends. */
ol_status ol_state_create(ol_model *model, const char *const *names, ol_value *const *initial,
                          size_t count, const ol_session_options *options, ol_state **out);
/* feeds: the remaining (unbound) inputs. outputs as in ol_session_run.
 * A paged cache that grew by OL_PAGED_CACHE_COMPACT_TOKENS blocks since its
 * last compaction (decoding adds a block per token) is compacted
 * (ol_paged_cache_compact, OL_PAGED_CACHE_COMPACT_TOKENS tokens per block)
 * before it is published or returned: lossless, the same attention bits,
 * a few blocks instead of one per token. */
ol_status ol_state_run(ol_state *state, ol_context *context, const char *const *input_names,
                       ol_value *const *inputs, size_t n_inputs,
                       const char *const *output_names, ol_value **outputs, size_t n_outputs,
                       ol_completion *completion);
/* Replaces the retained values as ol_state_create takes them (omitted
 * inputs from their initializer defaults); on failure nothing changes. */
ol_status ol_state_reset(ol_state *state, const char *const *names, ol_value *const *initial,
                         size_t count);
/* Releases the retained values; later calls fail with OL_FAILED_PRECONDITION. */
ol_status ol_state_close(ol_state *state);
void ol_state_destroy(ol_state *state);
/* Retained values (borrowed references; retain to keep them). */
size_t ol_state_value_count(const ol_state *state);
const char *ol_state_value_name(const ol_state *state, size_t index);
ol_status ol_state_value(const ol_state *state, const char *name, ol_value **out);
/* The session inside the state (names and metadata). */
const ol_session *ol_state_session(const ol_state *state);

/* A new model with persistent bindings added (input_names[i] <- output_names[i]).
 * A bound input read by more than one node position gets one forwarding
 * Identity node (a zero-copy view) so that it has exactly one use, as the
 * binding rules require. The source model is not modified. The new model
 * shares the source's weights and unchanged protobuf messages (nothing is
 * copied but the few structs the binding changes); either model may be
 * destroyed first. */
ol_status ol_model_bind_persistent(const ol_model *model, const char *const *input_names,
                                   const char *const *output_names, size_t count, ol_model **out);

/* ---------------------------------------------------------------- paged KV caches */

/* A paged cache (the past/present of ai.rt::PagedAttention) is an ol_value:
 * a struct whose one field `blocks` is a sequence of blocks {start, length:
 * INT64 scalars; key, value: pages of logical shape [1, 1, capacity, width],
 * dense FLOAT/FLOAT16/BFLOAT16 tensors or affine ENCODED values}. Starts run
 * contiguously from 0 and 0 < length <= capacity. Blocks are immutable once
 * made: caches share them by reference, an append adds blocks, and nothing
 * here copies or decodes a page. Its wire form is PagedCacheProto (also
 * GraphProto.paged_cache_initializer, a cache default for a graph input or
 * a persistent state). */

/* A new empty cache ({blocks: []}). */
ol_status ol_paged_cache_empty(ol_value **out);
/* Whether value has the cache structure (a struct of one `blocks` sequence
 * of structs with exactly start, length, key and value); the pages are not
 * checked (ol_paged_cache_length does). */
bool ol_paged_cache_is(const ol_value *value);
/* Serialized PagedCacheProto bytes -> a cache owning its pages (the bytes
 * may be freed after the call). Malformed bytes or a cache that breaks a
 * rule (a block without key or value, a missing, negative or
 * non-contiguous start, length <= 0 or above the page capacity, K/V
 * capacities or widths that disagree, external data, non-concrete or
 * ambiguous encoded pages) fail with OL_INVALID_ARGUMENT naming the block;
 * page formats this runtime cannot read fail with OL_NOT_IMPLEMENTED. */
ol_status ol_paged_cache_parse(const void *bytes, size_t size, ol_value **out);
/* The cache as PagedCacheProto bytes (free with ol_free): dense pages as
 * TensorProto raw_data, encoded pages as their EncodedValueProto. The cache
 * is validated and compacted first (ol_paged_cache_compact with
 * OL_PAGED_CACHE_COMPACT_TOKENS, on a temporary copy: the cache itself is
 * unchanged); pages are never decoded or requantized, so the parsed cache
 * decodes every token to the same floats. */
#define OL_PAGED_CACHE_COMPACT_TOKENS 64
ol_status ol_paged_cache_serialize(const ol_value *cache, void **out_bytes, size_t *out_size);
/* A new cache with runs of consecutive blocks merged into blocks of at most
 * max_block_tokens tokens (>= 1): a run's K pages share one storage type,
 * its V pages too, and their affine parameters are per page or per token
 * (not along the width). The valid rows are concatenated as stored (dense
 * elements, affine codes; rows past a block's length are dropped) and the
 * affine parameters become one scale and zero point per token
 * (AffineLayoutProto axis 2), or one pair when all tokens share it: lossless,
 * every token decodes to the same floats. Blocks left alone are shared.
 * Decoding one token per step makes one block per token; compacting saves
 * the per-block metadata (in memory and in bytes). */
ol_status ol_paged_cache_compact(const ol_value *cache, int64_t max_block_tokens, ol_value **out);
/* Tokens held (the sum of the block lengths); the cache is validated. */
ol_status ol_paged_cache_length(const ol_value *cache, int64_t *tokens);
/* Bytes of the K and V page payloads (codes or elements, whole capacity;
 * affine parameters and block metadata not counted). Pages shared with
 * other caches count in full. */
ol_status ol_paged_cache_payload_bytes(const ol_value *cache, size_t *bytes);
/* A new cache holding the first `tokens` tokens (all when tokens >= the
 * length): earlier blocks are shared, the block crossing the boundary is a
 * new block over the same payloads with a shorter length (no copy). */
ol_status ol_paged_cache_truncate(const ol_value *cache, int64_t tokens, ol_value **out);
/* A new cache with the blocks `indices` (unique, in range) converted to
 * the formats key and value, the others shared (what ai.rt::QuantizePagedCache
 * does): INT8, UINT8, INT4, UINT4, INT2, UINT2 with scale > 0 and a zero
 * point in range, or scale 0: calibrated for each converted page from its
 * valid rows as appended pages are (the zero point chosen), or FLOAT,
 * FLOAT16, BFLOAT16 (scale and zero point ignored). A converted block keeps its capacity and length: its valid rows
 * are decoded and encoded again (ties to even, saturated), the rest hold
 * zeros. The whole cache is checked first, then the request; nothing is
 * made before both pass. */
ol_status ol_paged_cache_quantize(const ol_value *cache, const int64_t *indices, size_t count,
                                  const ol_page_format *key, const ol_page_format *value, ol_value **out);
/* A second reference to the cache (ol_value_retain after a structure
 * check). Blocks being immutable, both holders may go on independently: a
 * run appending to one makes a new cache value sharing the old blocks. */
ol_status ol_paged_cache_fork(ol_value *cache, ol_value **out);

/* A decoder on paged KV caches: every cached attention of a recognized form
 * (a torch `present = Concat(past, new, axis 2)` pair with Q x K^T scaled by
 * 1/sqrt(head size), optional mask Add, Softmax, x V, repeat_kv allowed;
 * com.microsoft GroupQueryAttention, rotary included; ai.onnx Attention 23;
 * com.microsoft MultiHeadAttention) becomes one ai.rt::PagedAttention (and
 * the reshapes, rotary and scaling it needs) with a paged-cache input
 * `<prefix>` replacing `<prefix>.key`/`<prefix>.value` (past_key_values.0.key
 * -> past_key_values.0), the same for outputs, bound input <- output. Masks
 * no longer take part (paged attention is causal; left padding is not
 * supported). Shares the source's weights like ol_model_bind_persistent.
 * OL_NOT_IMPLEMENTED, naming the node and attribute or input, when nothing
 * is recognized, an attention uses what PagedAttention cannot express
 * (docs/paged-cache.md lists it) or another node reads a cache. */
typedef struct ol_paged_model_options {
  int64_t block_size;       /* tokens per appended page at most (16) */
  int64_t max_tokens;       /* cached tokens at most (4096) */
  int64_t left_window_size; /* -1: unbounded (the default); >= 0: preceding tokens seen */
} ol_paged_model_options;
void ol_paged_model_options_init(ol_paged_model_options *options);
ol_status ol_model_to_paged(const ol_model *model, const ol_paged_model_options *options, ol_model **out);

/* A new model with caches[i] as GraphProto.paged_cache_initializer
 * names[i] (replacing one of that name): each name is a graph input without
 * a tensor or encoded initializer (a bound cache input: a state or
 * generator created without it starts from the cache, a feed overrides
 * it). The caches are serialized as ol_paged_cache_serialize does
 * (validated, compacted) and copied into the new model, which shares the
 * rest of the source's messages (like ol_model_bind_persistent); the source
 * is not modified. */
ol_status ol_model_with_paged_cache_initializers(const ol_model *model, const char *const *names,
                                                 ol_value *const *caches, size_t count, ol_model **out);

/* ---------------------------------------------------------------- generation */

typedef struct ol_generate_options {
  int64_t max_new_tokens;   /* >= 0 (16 from ol_generate_options_init) */
  double temperature;       /* 0: greedy */
  uint64_t seed;            /* sampling seed */
  int64_t eos_token_id;     /* -1: none */
  int64_t pad_token_id;     /* -1: eos_token_id */
  const char *input_ids_name;      /* default "input_ids" */
  const char *logits_name;         /* default "logits" */
  const char *attention_mask_name; /* default "attention_mask" */
  const char *position_ids_name;   /* default "position_ids" */
  /* Called after each step with the new token of every row and the 0-based
   * step; returning nonzero stops generation (not an error). */
  int (*on_token)(void *user, const int64_t *tokens, size_t batch, size_t step);
  void *on_token_user;
} ol_generate_options;

void ol_generate_options_init(ol_generate_options *options);

/* Runs the token loop: ol_generator_create, ol_generator_step until done,
 * ol_generator_tokens. feeds: input_ids [batch, prompt] (INT64) plus any
 * other inputs (initial empty caches for models with persistent bindings).
 * out: INT64 [batch, prompt + generated]. Feeds and model are not modified. */
ol_status ol_generate(ol_model *model, ol_context *context, const char *const *names,
                      ol_value *const *feeds, size_t n_feeds, const ol_generate_options *options,
                      const ol_session_options *session_options, ol_completion *completion,
                      ol_value **out);

/* The token loop one step at a time, for callers that must regain control
 * between tokens (an event loop streaming tokens or watching a stop button).
 * It holds every rule of generation:
 *  - models without persistent bindings run in `session` (may be NULL: the
 *    generator makes one from session_options), which evaluates the whole
 *    growing prefix every step; models with bindings in a fresh ol_state
 *    made from the bound feeds (the initial caches) with session_options
 *    (allocator, threads, persistent_tensor_initial_capacity): the prompt
 *    once, then one token per step;
 *  - declared INT64 attention_mask / position_ids inputs are created when not
 *    fed (ones; positions = cumulative mask - 1, clamped at 0) and extended
 *    every step; a fed mask must be left-padded (0/1, zeros first, ending in 1);
 *  - temperature 0 is greedy (lowest index wins ties, NaN never wins); > 0
 *    samples softmax(logits / T) with one splitmix64 draw per unfinished row
 *    per step, seeded by seed: the same tokens natively and in wasm;
 *  - done after max_new_tokens, when every row has emitted eos_token_id
 *    (finished rows then get pad_token_id), when on_token returns nonzero,
 *    or after ol_generator_stop.
 * Feeds are retained (the caller may release them after create), names and
 * options copied. session (a session of `model`), context and completion
 * (each may be NULL) must outlive the generator, and the session must not
 * run elsewhere during a step. Nothing runs before the first step. */
typedef struct ol_generator ol_generator;

ol_status ol_generator_create(ol_model *model, ol_session *session, ol_context *context,
                              const char *const *names, ol_value *const *feeds, size_t n_feeds,
                              const ol_generate_options *options,
                              const ol_session_options *session_options, ol_completion *completion,
                              ol_generator **out);
/* One step: the prompt on the first, otherwise the last token; appends one
 * token to every row. *done (may be NULL) is set to ol_generator_done.
 * A cancelled completion fails with OL_CANCELLED (polled before the step,
 * and between nodes during it). A failed step leaves the generator as it was,
 * except after a persistent state has run (the logits are not usable
 * logits, or no memory for the sampling scratch): then every later step
 * fails. Stepping a finished generator fails with OL_FAILED_PRECONDITION. */
ol_status ol_generator_step(ol_generator *gen, int *done);
/* 1 when no step remains (finished, stopped, or failed after a state run). */
int ol_generator_done(const ol_generator *gen);
/* Ends the generation here (not an error): the tokens so far are the result. */
void ol_generator_stop(ol_generator *gen);
size_t ol_generator_batch(const ol_generator *gen);
/* Tokens appended to every row so far. */
int64_t ol_generator_generated(const ol_generator *gen);
/* The batch tokens of the last step (NULL before the first); valid until
 * the next step or destroy. */
const int64_t *ol_generator_last_tokens(const ol_generator *gen);
/* New INT64 [batch, prompt + generated]: the prompt and every token so far. */
ol_status ol_generator_tokens(const ol_generator *gen, ol_value **out);
/* The persistent state a model with bindings runs in (NULL for other
 * models): its values (ol_state_value) are the caches after the last step
 * (the last token is not in them yet: it is the next step's input). Owned
 * by the generator; read it, do not run, reset or close it. */
const ol_state *ol_generator_state(const ol_generator *gen);
void ol_generator_destroy(ol_generator *gen);

/* ---------------------------------------------------------------- quantization
 *
 * The quantization catalogue (seed 003): tensors encode into encoded values
 * (OL_VALUE_ENCODED, EncodedValueProto) with a plan, and decode without it.
 * Portable profiles use the self-contained layout
 * "onnx_light.quantization.v1/<profile>"; the three ORT MatMulNBits
 * profiles pack com.microsoft::MatMulNBits inputs (ol_quant_export_matmul_nbits).
 * Shared parameter sets (ol_quant_add_parameters) let compact values carry
 * only their codes. Model arguments (may be NULL) resolve struct_type.type_ref
 * through the model's struct_types and name the model's shared sets. */

/* Profiles in catalogue order (the wire contract's order). */
typedef enum ol_quant_format {
  OL_QUANT_INT8 = 0,
  OL_QUANT_INT8_PER_CHANNEL,
  OL_QUANT_INT4,
  OL_QUANT_GPTQ,
  OL_QUANT_AWQ,
  OL_QUANT_EETQ,
  OL_QUANT_MATMULNBITS,
  OL_QUANT_Q2_K,
  OL_QUANT_Q3_K,
  OL_QUANT_Q4_K,
  OL_QUANT_Q5_K,
  OL_QUANT_Q6_K,
  OL_QUANT_HQQ,
  OL_QUANT_EXL2,
  OL_QUANT_EXL3,
  OL_QUANT_NF4,
  OL_QUANT_IQ4_NL,
  OL_QUANT_BINARY,
  OL_QUANT_TERNARY,
  OL_QUANT_TQ1_0,
  OL_QUANT_TQ2_0,
  OL_QUANT_BITNET,
  OL_QUANT_PARETOQ,
  OL_QUANT_TEQUILA,
  OL_QUANT_STQ1_0,
  OL_QUANT_IQ1_S,
  OL_QUANT_AQLM,
  OL_QUANT_QUIP_SHARP,
  OL_QUANT_SPQR,
  OL_QUANT_SQUEEZELLM,
  OL_QUANT_LOG,
  OL_QUANT_FP6_LLM,
  OL_QUANT_FP8_E4M3,
  OL_QUANT_MXFP4,
  OL_QUANT_MXFP6,
  OL_QUANT_NVFP4,
  OL_QUANT_QUAROT,
  OL_QUANT_SMOOTHQUANT,
  OL_QUANT_TILED_FLOAT,
  OL_QUANT_COLUMN_MAJOR,
  OL_QUANT_ORT_MATMULNBITS_INT2,
  OL_QUANT_ORT_MATMULNBITS_INT4,
  OL_QUANT_ORT_MATMULNBITS_INT8,
  OL_QUANT_FORMAT_COUNT /* 43 */
} ol_quant_format;

/* How a block maps values to codes (the wire header's method entry). */
typedef enum ol_quant_method {
  OL_QUANT_AFFINE = 0,   /* (code - zero_point) * scale + offset */
  OL_QUANT_CODEBOOK = 1, /* table entries times scale */
  OL_QUANT_CAST = 2,     /* floating casts (cast_type) */
  OL_QUANT_METHOD_COUNT
} ol_quant_method;

/* What a profile is (borrowed strings, valid for the process). */
typedef struct ol_quant_format_info {
  const char *name;      /* stable wire name: "int4", "ort_matmulnbits_int4" */
  const char *enum_name; /* upper-case name: "INT4" (the JS QuantizationFormat keys) */
  ol_quant_method method;
  uint32_t bits;         /* code / index width */
  bool matmul_nbits;     /* an ORT MatMulNBits input layout (ol_quant_make_matmul_nbits_plan) */
} ol_quant_format_info;

/* OL_QUANT_FORMAT_COUNT: formats are 0 .. count-1 in catalogue order. */
size_t ol_quant_format_count(void);
/* The stable wire name, or NULL for a value outside the enum. */
const char *ol_quant_format_name(ol_quant_format format);
/* Case-sensitive wire name -> format; unknown names: OL_INVALID_ARGUMENT naming them. */
ol_status ol_quant_format_parse(const char *name, ol_quant_format *out);
ol_status ol_quant_format_get_info(ol_quant_format format, ol_quant_format_info *out);
/* "affine", "codebook", "cast"; NULL past the last method. */
const char *ol_quant_method_name(ol_quant_method method);

/* ---- plans
 * How a flattened tensor is cut into blocks: runs of blocks sharing one
 * layout, each block with its own parameters, plus optional steps (a
 * permutation gathering source[permutation[i]] into position i, a
 * forward/inverse transform pair on consecutive row vectors, exact
 * outliers). Setters copy their arguments; nothing is checked against a
 * tensor until it is encoded. */
typedef struct ol_quant_plan ol_quant_plan;

#define OL_QUANT_DEFAULT_BLOCK_SIZE 128
#define OL_QUANT_HEADER_SIZE 9 /* entries of a layout's wire header */

/* The layout a run's blocks share (the 9-entry wire header). */
typedef struct ol_quant_layout {
  uint32_t count; /* scalar elements per block */
  ol_quant_method method;
  uint32_t bits; /* code / index width, 1..16 */
  bool signed_codes;
  uint32_t books;       /* codebooks: additive books, entries and vector width */
  uint32_t entries;
  uint32_t vector_size;
  bool base3;           /* five ternary indices per byte */
  ol_dtype cast_type;   /* FLOAT, DOUBLE, FLOAT16 or BFLOAT16 */
} ol_quant_layout;

/* One block's numerical parameters. */
typedef struct ol_quant_block {
  double scale;
  double zero_point;
  double offset;
  double *codebook; /* books * entries * vector_size values (codebook layouts), else none */
  size_t codebook_size;
} ol_quant_block;

/* A run: block_count blocks of one layout. */
typedef struct ol_quant_run {
  ol_quant_layout layout;
  ol_quant_block *blocks;
  size_t block_count;
} ol_quant_run;

/* A portable plan for count elements in blocks of block_size (the last
 * block may be shorter: a run of full blocks and a tail run), with the
 * profile's default parameters and fixed tables. ORT MatMulNBits profiles
 * are rejected (use ol_quant_make_matmul_nbits_plan). */
ol_status ol_quant_make_plan(ol_quant_format format, uint64_t count, uint64_t block_size,
                             ol_quant_plan **out);
/* An ORT MatMulNBits plan for a [k, n] weight: one unsigned affine run of
 * n * ceil(k / block_size) blocks of block_size (padding included), column
 * first, then K group; scales 1, zero points 2^(bits-1). block_size is a
 * power of two in [16, UINT32_MAX]. */
ol_status ol_quant_make_matmul_nbits_plan(ol_quant_format format, uint64_t k, uint64_t n,
                                          uint64_t block_size, ol_quant_plan **out);
ol_status ol_quant_plan_clone(const ol_quant_plan *plan, ol_quant_plan **out);
void ol_quant_plan_destroy(ol_quant_plan *plan);

ol_quant_format ol_quant_plan_format(const ol_quant_plan *plan);
/* Changes the profile (the layouts stay; mismatches fail when encoding). */
ol_status ol_quant_plan_set_format(ol_quant_plan *plan, ol_quant_format format);
size_t ol_quant_plan_run_count(const ol_quant_plan *plan);
/* Run run's layout and block count. */
ol_status ol_quant_plan_run_layout(const ol_quant_plan *plan, size_t run, ol_quant_layout *layout,
                                   size_t *block_count);
/* Block block of run run: its parameters, with out->codebook pointing into
 * the plan (read only; valid until the plan changes). */
ol_status ol_quant_plan_block(const ol_quant_plan *plan, size_t run, size_t block, ol_quant_block *out);
/* Replaces run index (or every run: count may be 0) with copies of the
 * given runs; blocks and codebooks are read, not taken. */
ol_status ol_quant_plan_set_run(ol_quant_plan *plan, size_t index, const ol_quant_run *run);
ol_status ol_quant_plan_set_runs(ol_quant_plan *plan, const ol_quant_run *runs, size_t count);
/* Sets the scale (zero point) of every block of run run, in block order:
 * count must be its block count. */
ol_status ol_quant_plan_set_scales(ol_quant_plan *plan, size_t run, const double *scales, size_t count);
ol_status ol_quant_plan_set_zero_points(ol_quant_plan *plan, size_t run, const double *zero_points,
                                        size_t count);
/* The wire header of a layout, and a layout from a wire header (checked:
 * ranges, booleans, method, bits, base-3 packing). */
void ol_quant_layout_header(const ol_quant_layout *layout, int64_t header[OL_QUANT_HEADER_SIZE]);
ol_status ol_quant_layout_from_header(const int64_t header[OL_QUANT_HEADER_SIZE], ol_quant_layout *out);

/* The plan's permutation (empty: identity), transform (size 0: none;
 * row-major size x size matrices) and outlier indices (flattened source
 * positions), read in place (valid until the plan changes), and setters
 * copying new ones in. */
void ol_quant_plan_permutation(const ol_quant_plan *plan, const int64_t **indices, size_t *count);
ol_status ol_quant_plan_set_permutation(ol_quant_plan *plan, const int64_t *indices, size_t count);
void ol_quant_plan_transform(const ol_quant_plan *plan, uint32_t *size, const double **forward,
                             size_t *forward_count, const double **inverse, size_t *inverse_count);
ol_status ol_quant_plan_set_transform(ol_quant_plan *plan, uint32_t size, const double *forward,
                                      size_t forward_count, const double *inverse, size_t inverse_count);
/* The seed's field-by-field assignments, each checked when made: a nonzero
 * size must divide the plan's element count (ORT MatMulNBits plans take no
 * transform), and a new size drops matrices that no longer hold size^2
 * values; forward / inverse must hold exactly transform_size^2 finite values
 * (set the size first). Whether they are inverse of each other is checked
 * when encoding. */
ol_status ol_quant_plan_set_transform_size(ol_quant_plan *plan, uint32_t size);
ol_status ol_quant_plan_set_forward(ol_quant_plan *plan, const double *values, size_t count);
ol_status ol_quant_plan_set_inverse(ol_quant_plan *plan, const double *values, size_t count);
void ol_quant_plan_outliers(const ol_quant_plan *plan, const int64_t **indices, size_t *count);
ol_status ol_quant_plan_set_outliers(ol_quant_plan *plan, const int64_t *indices, size_t count);
/* [K, N] of an ORT MatMulNBits plan into dims (rank 2), else rank 0. The
 * setter copies rank 0 or 2 dims in; blocks are not rebuilt. */
size_t ol_quant_plan_matrix_shape(const ol_quant_plan *plan, int64_t dims[2]);
ol_status ol_quant_plan_set_matrix_shape(ol_quant_plan *plan, const int64_t *dims, size_t rank);

/* ---- encoding and decoding */

/* Sets the block scales from a FLOAT/DOUBLE/FLOAT16/BFLOAT16 tensor (the
 * Quantize operator's rule when scales are omitted): each block's largest
 * ratio of a value (after outlier removal, permutation and the forward
 * transform) to the codes above / below its zero point, or to the largest
 * / smallest entry of a scalar codebook; 1 for casts and all-zero blocks.
 * ORT MatMulNBits plans go per column and K block of the [K, N] tensor.
 * Vector/additive codebooks need explicit scales. */
ol_status ol_quant_calibrate(ol_quant_plan *plan, const ol_value *tensor);
/* make_quantization_type: the storage descriptor of a portable plan as a
 * serialized StructTypeProto (free with ol_free); it needs the layouts and
 * sizes only, not codebook values or transform matrices. */
ol_status ol_quant_make_type(const ol_quant_plan *plan, void **out_bytes, size_t *out_size);
/* quantize_tensor: a self-contained encoded value of a FLOAT, DOUBLE,
 * FLOAT16 or BFLOAT16 tensor with the plan's parameters as they are (no
 * calibration). name (may be NULL) becomes EncodedValueProto.name. */
ol_status ol_quant_quantize(const ol_quant_plan *plan, const ol_value *tensor, const char *name,
                            ol_value **out);
/* dequantize_tensor: a new tensor of the value's logical type and shape.
 * Portable and ORT layouts; a compact value (parameter_ref) decodes with
 * the parameter set it retains, else with the one model declares.
 * Nonfinite results and overflow of the logical dtype are errors. */
ol_status ol_quant_dequantize(const ol_value *encoded, const ol_model *model, ol_value **out);
/* The proto variants: a serialized TensorProto (raw_data or typed fields,
 * no external data) to a serialized EncodedValueProto named like it, and
 * back (a TensorProto with raw_data and the value's name). Free the bytes
 * with ol_free. */
ol_status ol_quant_quantize_tensor_proto(const ol_quant_plan *plan, const void *tensor_proto,
                                         size_t size, void **out_bytes, size_t *out_size);
ol_status ol_quant_dequantize_tensor_proto(const void *encoded_proto, size_t size, const ol_model *model,
                                           void **out_bytes, size_t *out_size);
/* The profile an encoded value's layout names (portable, ORT or compact);
 * OL_NOT_FOUND for other layouts. */
ol_status ol_quant_value_format(const ol_value *encoded, ol_quant_format *out);

/* ---- ORT MatMulNBits inputs */

/* The initializers and attributes of a com.microsoft::MatMulNBits node
 * (version 1) taken from an ORT MatMulNBits encoded value without
 * dequantizing it. */
typedef struct ol_quant_matmul_nbits {
  ol_value *weights;     /* "B": UINT8 [N, ceil(K/block_size), block_size * bits / 8] */
  ol_value *scales;      /* the source dtype, [N, ceil(K/block_size)] */
  ol_value *zero_points; /* packed UINT8 or the source dtype; NULL when implicit */
  int64_t k, n, bits, block_size;
} ol_quant_matmul_nbits;
ol_status ol_quant_export_matmul_nbits(const ol_value *encoded, const ol_model *model,
                                       ol_quant_matmul_nbits *out);
/* Releases the tensors (out may then be reused). */
void ol_quant_matmul_nbits_clear(ol_quant_matmul_nbits *inputs);

/* ---- shared parameter sets
 * A named set of fixed numerical parameters declared by a model (a root
 * quantization_annotation "onnx_light.quantization.parameters:<name>" and
 * its initializers). Values encoded with it are compact: parameter_ref
 * names the set and the payload holds the codes only. A compact value
 * retains its set, so it outlives the model, session and context. */

/* Quantize's optional numerical inputs (NULL: absent): same names, shapes
 * and dtypes. scales is required for a shared set. */
typedef struct ol_quant_parameters {
  const ol_value *scales;
  const ol_value *zero_points;
  const ol_value *offsets;
  const ol_value *codebooks;
  const ol_value *permutation;
  const ol_value *forward;
  const ol_value *inverse;
  const ol_value *outliers;
} ol_quant_parameters;

/* add_quantization_parameters: *out_model is a new model that declares the
 * set name for the storage descriptor storage_type (a serialized
 * StructTypeProto, e.g. from ol_quant_make_type) and the logical tensor
 * type (dtype and concrete dims), with params. Everything is validated
 * first; model is not modified. *out_compact (may be NULL; free with
 * ol_free) receives the compact storage type (a serialized StructTypeProto)
 * to declare compact graph outputs with. */
ol_status ol_quant_add_parameters(const ol_model *model, const char *name, const void *storage_type,
                                  size_t storage_size, ol_dtype logical_dtype, const int64_t *logical_dims,
                                  size_t logical_rank, const ol_quant_parameters *params,
                                  ol_model **out_model, void **out_compact, size_t *out_compact_size);
/* quantize_tensor_shared: a compact encoded value of tensor (exactly the
 * set's logical type) with the fixed parameters of model's set set_name
 * (never calibrated: values outside its range saturate). value_name may be
 * NULL. */
ol_status ol_quant_quantize_shared(const ol_value *tensor, const ol_model *model, const char *set_name,
                                   const char *value_name, ol_value **out);
/* materialize_quantized_value: a self-contained encoded value (inline
 * storage type, every parameter, no parameter_ref) from a compact one,
 * with the set it retains, else with model's. The source is unchanged. */
ol_status ol_quant_materialize(const ol_value *compact, const ol_model *model, ol_value **out);
/* Lets a compact value that carries no set (one parsed from bytes) retain
 * the set model (or the session's model) declares, after checking it
 * against the set; a run needs that. Other values are left alone. */
ol_status ol_quant_bind_model(ol_value *encoded, const ol_model *model);
ol_status ol_quant_bind_session(ol_value *encoded, const ol_session *session);

/* ---------------------------------------------------------------- graph builder */

/* A model being built or edited (seed 002's GraphBuilder). Every part is kept
 * as its protobuf message, unchanged: structured (encoded) initializers are
 * never decoded nor converted to TensorProto, external data stays external,
 * cache initializers, persistent bindings, model-local functions and the
 * model's struct-type catalogue are kept. Parts cross this API as serialized
 * messages (the message type each part takes is listed below).
 *
 * One namespace: graph inputs, initializers of every kind and node outputs
 * share names. A new part whose name is already taken fails with
 * OL_INVALID_ARGUMENT naming both holders; the one exception is a graph
 * input's overridable default, one TensorProto or paged cache initializer
 * named like the input.
 * The builder edits the root graph; subgraphs travel inside their nodes. */
typedef struct ol_builder ol_builder;

typedef enum ol_builder_part {
  OL_BUILDER_INPUT = 0,                  /* ValueInfoProto, graph.input */
  OL_BUILDER_OUTPUT = 1,                 /* ValueInfoProto, graph.output */
  OL_BUILDER_NODE = 2,                   /* NodeProto, graph.node (appended in order) */
  OL_BUILDER_INITIALIZER = 3,            /* TensorProto, graph.initializer */
  OL_BUILDER_STRUCTURED_INITIALIZER = 4, /* EncodedValueProto, graph.encoded_initializer */
  OL_BUILDER_CACHE_INITIALIZER = 5,      /* PagedCacheProto, graph.paged_cache_initializer */
  OL_BUILDER_PERSISTENT_BINDING = 6,     /* PersistentBindingProto, graph.persistent_bindings */
  OL_BUILDER_STRUCT_TYPE = 7,            /* StructTypeProto, model.struct_types */
  OL_BUILDER_FUNCTION = 8,               /* FunctionProto, model.functions */
  OL_BUILDER_VALUE_INFO = 9,             /* ValueInfoProto, graph.value_info */
  OL_BUILDER_SPARSE_INITIALIZER = 10,    /* SparseTensorProto, graph.sparse_initializer */
  OL_BUILDER_OPSET_IMPORT = 11,          /* OperatorSetIdProto, model.opset_import (key: its domain) */
  OL_BUILDER_PART_COUNT
} ol_builder_part;

/* "structured initializer" etc. ("" for an unknown part). */
const char *ol_builder_part_name(ol_builder_part part);

typedef struct ol_builder_opset {
  const char *domain; /* "" or NULL: the default ONNX domain */
  int64_t version;
} ol_builder_opset;

/* An empty model: ir_version, opset imports and an empty graph named "graph". */
ol_status ol_builder_create(int64_t ir_version, const ol_builder_opset *opsets, size_t count, ol_builder **out);
/* Imports serialized ModelProto bytes (copied; the model's names must follow
 * the namespace rule above). */
ol_status ol_builder_from_model(const void *bytes, size_t size, ol_builder **out);
void ol_builder_destroy(ol_builder *builder);

/* Appends one part: bytes is the serialized message of the part's type.
 * Rules besides the namespace: names are non-empty (node names may be empty;
 * a node needs an op_type), graph outputs are declared once, a struct type
 * has a nonzero type_id not yet in the catalogue, a persistent binding joins
 * a declared graph input to a declared graph output and binds an input once,
 * a function is unique by (domain, name, overload), a domain is imported once
 * with a positive version. The builder is unchanged on failure. */
ol_status ol_builder_add(ol_builder *builder, ol_builder_part part, const void *bytes, size_t size);
/* ol_builder_add with the new part placed at index of its repeated field
 * (count: appended), e.g. a node inserted before the nodes reading it. */
ol_status ol_builder_add_at(ol_builder *builder, ol_builder_part part, const void *bytes, size_t size,
                            size_t index);
/* Replaces the part at index by a new one at the same position, under the
 * rules of ol_builder_add with the replaced part gone (a node may reuse
 * its outputs' names); persistent bindings naming a replaced input or
 * output must still be satisfied by the new part's name. The builder is
 * unchanged on failure. */
ol_status ol_builder_replace(ol_builder *builder, ol_builder_part part, size_t index, const void *bytes,
                             size_t size);
ol_status ol_builder_add_input(ol_builder *builder, const void *value_info, size_t size);
ol_status ol_builder_add_output(ol_builder *builder, const void *value_info, size_t size);
ol_status ol_builder_add_node(ol_builder *builder, const void *node, size_t size);
ol_status ol_builder_add_initializer(ol_builder *builder, const void *tensor, size_t size);
/* MakeStructuredInitializer: the EncodedValueProto is stored unchanged,
 * after the checks shape inference seeds encoded initializers with: its
 * layout resolves (a type_ref through the struct types added so far:
 * declare them first) and an inline payload fits the layout (quantization
 * layouts through their decoder, other layouts against the bits their
 * fields add up to; external and compact payloads are not size-checked). */
ol_status ol_builder_add_structured_initializer(ol_builder *builder, const void *encoded, size_t size);
ol_status ol_builder_add_cache_initializer(ol_builder *builder, const void *paged_cache, size_t size);
ol_status ol_builder_add_struct_type(ol_builder *builder, const void *struct_type, size_t size);
ol_status ol_builder_add_persistent_binding(ol_builder *builder, const char *input_name, const char *output_name);

/* Removes the part named key: a value's name; a node's name (or, for a node
 * without a name, one of its outputs); the bound input of a persistent
 * binding; a function's name; a struct type's type_id in decimal; an
 * opset import's domain. A graph
 * input or output a persistent binding names cannot be removed before the
 * binding. OL_NOT_FOUND when nothing matches. */
ol_status ol_builder_remove(ol_builder *builder, ol_builder_part part, const char *key);

/* Number of parts of a kind, and the serialized message of one of them
 * (*out_bytes freed with ol_free). */
size_t ol_builder_count(const ol_builder *builder, ol_builder_part part);
ol_status ol_builder_get(const ol_builder *builder, ol_builder_part part, size_t index, void **out_bytes,
                         size_t *out_size);

/* Initializer de-duplication: a later initializer equal to an earlier one
 * of the same kind is removed and the node inputs naming it (subgraphs
 * included) renamed to the first. Equal means: TensorProto data type, dims,
 * payload and external data entries; structured initializers: the resolved
 * physical type (type_ref followed, type_id ignored), payload, logical type,
 * affine layout, parameter_ref and external data (equal bytes alone are not
 * enough). Names and doc strings do not count. Initializers named by graph
 * inputs or outputs, persistent bindings or quantization annotations stay.
 * *removed (may be NULL) receives the count. */
ol_status ol_builder_dedup_initializers(ol_builder *builder, size_t *removed);

/* Shape inference over the builder's model (the rules of
 * ol_model_infer_shapes), kept up to date incrementally: the types of the
 * root graph's values are kept between calls, and after edits only the
 * nodes they affect run their shape functions again (the nodes reading a
 * changed value, onwards while types keep changing; nodes with subgraphs
 * and function calls every time; everything after an edit of opset
 * imports, struct types or functions). The result equals a full inference.
 * *reinferred (may be NULL) receives the number of nodes whose shape
 * function ran. An inference error names the node; the edits then stay
 * pending. */
ol_status ol_builder_infer(ol_builder *builder, size_t *reinferred);
/* The inferred ValueInfoProto of a root-graph value (graph input,
 * initializer or node output; without a type when nothing is known),
 * inferring first when edits are pending. OL_NOT_FOUND for other names.
 * *out_bytes freed with ol_free. */
ol_status ol_builder_value_info(ol_builder *builder, const char *name, void **out_bytes, size_t *out_size);

/* ToModel: the serialized ModelProto. The struct-type catalogue is compacted
 * to the entries the model references (directly or through other entries,
 * shared quantization descriptors included) and renumbered 1..n in catalogue
 * order, every type_ref rewritten to match. A type_ref to an undeclared id
 * fails naming the part that holds it. The builder is unchanged. */
ol_status ol_builder_to_model(const ol_builder *builder, void **out_bytes, size_t *out_size);
/* ToGraph: the serialized root GraphProto. Fails with OL_FAILED_PRECONDITION
 * naming the part when any part uses a model-level reference
 * (struct_type.type_ref): a standalone graph cannot resolve it. */
ol_status ol_builder_to_graph(const ol_builder *builder, void **out_bytes, size_t *out_size);

/* ---------------------------------------------------------------- cancellation */

ol_status ol_completion_create(ol_completion **out);
void ol_completion_destroy(ol_completion *completion);
/* Safe from another thread while a run is in progress. A completion is single
 * use: a run that publishes successfully completes it, and cancelling a
 * completed completion fails with OL_FAILED_PRECONDITION. */
ol_status ol_completion_cancel(ol_completion *completion, const char *reason);
int ol_completion_is_cancelled(const ol_completion *completion);

#ifdef __cplusplus
}
#endif
#endif
