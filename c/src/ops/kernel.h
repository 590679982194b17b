/* The kernel interface. Kernels see nodes (decoded attributes) at creation
 * and an ol_kernel_ctx at compute time; they never see the runtime. */
#ifndef OL_OPS_KERNEL_H
#define OL_OPS_KERNEL_H
#include <stdbool.h>

#include "core/checked.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/value.h"
#include "ir/graph.h"

typedef struct ol_kernel ol_kernel;
typedef struct ol_kernel_ctx ol_kernel_ctx;

typedef ol_status (*ol_kernel_compute_fn)(ol_kernel *kernel, ol_kernel_ctx *ctx);

/* A kernel instance. Kernels with state embed this as their first member. */
struct ol_kernel {
  ol_kernel_compute_fn compute;
  void (*destroy)(ol_kernel *kernel); /* NULL: free(kernel) */
  const ol_node *node;
};

/* Storage work a kernel reports through ctx->record_storage (runtime events). */
typedef struct ol_storage_counts {
  uint64_t allocations;
  uint64_t allocated_bytes;
  uint64_t prefix_copied_bytes;
  uint64_t append_copied_bytes;
  uint64_t reuse_count;
} ol_storage_counts;

/* An append reservation (see ctx->reserve_append): result has the requested
 * shape (possibly pitched: one row of capacity per index of the dims before
 * the axis); its first elements along the axis already hold the retained
 * prefix. The writable span is `rows` runs of row_bytes bytes, run r at
 * (char *)writable + r * row_stride (the new positions of outer index r);
 * writable_bytes = rows * row_bytes. The kernel must write all of it and
 * then call ctx->commit_append. counts says what the reservation itself did.
 * bound: the node input/output pair is a persistent binding (the attempt was
 * consumed even when no result is given); kernels report their fallback
 * storage work only then. */
typedef struct ol_append_reservation {
  ol_value *result;
  void *writable;
  size_t writable_bytes;
  size_t rows, row_bytes, row_stride;
  bool bound;
  ol_storage_counts counts;
} ol_append_reservation;

/* The page-format policy of paged caches (ol_session_options). */
typedef struct ol_paged_policy {
  ol_page_format_fn fn;
  void *user;
  const ol_page_format_rule *rules;
  size_t rule_count;
} ol_paged_policy;

/* What one paged-attention execution did (OL_EVENT_PAGED_ATTENTION). */
typedef struct ol_paged_stats {
  uint64_t copied_bytes;
  uint64_t dequantized_bytes;
  uint64_t peak_workspace_bytes;
  uint64_t validated_pages;
} ol_paged_stats;

/* What a kernel may use while computing. Filled by the runtime. */
struct ol_kernel_ctx {
  const ol_node *node;
  ol_value *const *inputs; /* inputs[i] NULL: optional input absent */
  size_t num_inputs;
  ol_value **outputs;      /* the kernel sets outputs[i] (owned references) */
  size_t num_outputs;
  /* The run's allocator: outputs (ol_ctx_output) and every scratch block
   * (ol_alloc/ol_calloc/ol_realloc/ol_dealloc, freed on every path before
   * compute returns) come from it, so a session's payload pool hands them
   * back on the next run and the counting allocator and its fault injection
   * see them. Allocate on the calling thread, never in pool workers (they
   * have no payload pool and their error messages are lost). Outside it
   * remain: kernel objects and what they hold (attribute copies made by the
   * create functions, which get no allocator, when the session is created;
   * PagedAttention's page memo, kept across runs), freed with the session;
   * string element bytes (core's string convention: malloc'd, freed by
   * ol_buffer_release). */
  ol_allocator *allocator;
  const volatile int *cancelled; /* nonzero: stop and return OL_CANCELLED */
  /* Runs a subgraph attribute (If/Loop/Scan bodies) with the given inputs;
   * outer-scope names resolve in the calling context. outputs get owned refs. */
  void *runtime;
  ol_status (*run_subgraph)(void *runtime, const ol_graph *graph, ol_value *const *inputs,
                            size_t num_inputs, ol_value **outputs, size_t num_outputs);
  /* Append reservation for node input `input` (a persistent root input read
   * directly or through forwarding Identity nodes, as the planner resolved
   * once at session creation) producing node output `output` (its bound
   * root output), with
   * result shape dims and append axis. NULL outside persistent state. On
   * OL_OK with res->result == NULL no reservation is possible (disabled,
   * shared buffer, unsupported layout): use the ordinary path. One attempt
   * per output per run; a second attempt is an error. */
  ol_status (*reserve_append)(void *runtime, size_t input, size_t output, int rank,
                              const int64_t *dims, int axis, ol_append_reservation *res);
  /* Seals a filled reservation and sets node output `output` to its result. */
  ol_status (*commit_append)(void *runtime, size_t output, ol_append_reservation *res);
  /* Records a storage event; NULL when events are off (record nothing). */
  ol_status (*record_storage)(void *runtime, const ol_storage_counts *counts);
  /* Bit j: output j is a graph output of a session that lets caches grow in
   * place (ol_run_env.grow_outputs): a cache there may get spare capacity (a
   * pitched layout, buffer->append_end rows in use, see ol_value_grow_from)
   * and be appended to by a later run. */
  uint32_t grow_outputs;
  /* Formats of appended paged-cache pages; NULL: dense FLOAT. */
  const ol_paged_policy *paged;
  /* Records a paged-attention event; NULL when events are off. */
  ol_status (*record_paged)(void *runtime, const ol_paged_stats *stats);
};

typedef ol_status (*ol_kernel_create_fn)(const ol_node *node, ol_kernel **out);

/* ------------------------------------------------------------ helpers */

/* Allocates a plain kernel (no state) computing with fn. */
ol_status ol_kernel_simple(const ol_node *node, ol_kernel_compute_fn fn, ol_kernel **out);
/* Allocates size bytes (>= sizeof(ol_kernel)), zeroed, with compute fn set. */
ol_status ol_kernel_alloc(const ol_node *node, size_t size, ol_kernel_compute_fn fn,
                          ol_kernel **out);

/* Runs fn on ctx with the strided (pitched) inputs selected by `which` (bit
 * i: input i) replaced by dense copies: for kernels that read some pitched
 * layouts in place (their row's pitched_inputs) and meet another one. */
ol_status ol_kernel_run_densified(ol_kernel *kernel, ol_kernel_ctx *ctx, uint32_t which, ol_kernel_compute_fn fn);

/* Input i as a tensor; NULL when absent. */
const ol_tensor *ol_ctx_input(const ol_kernel_ctx *ctx, size_t i);
/* Input i must be present and a tensor; error names the node otherwise. */
ol_status ol_ctx_require(const ol_kernel_ctx *ctx, size_t i, const ol_tensor **out);
/* Allocates output i with the given type and shape (zeroed). */
ol_status ol_ctx_output(ol_kernel_ctx *ctx, size_t i, ol_dtype dtype, int rank,
                        const int64_t *dims, ol_tensor **out);
/* Like ol_ctx_output, the payload left uninitialized (see
 * ol_value_new_tensor_uninit): only for kernels that write every element of
 * the output on every successful path, empty and broadcast shapes included. */
ol_status ol_ctx_output_uninit(ol_kernel_ctx *ctx, size_t i, ol_dtype dtype, int rank,
                               const int64_t *dims, ol_tensor **out);
/* Sets output i to value (takes ownership of the reference). */
ol_status ol_ctx_set_output(ol_kernel_ctx *ctx, size_t i, ol_value *value);
/* Output i shares input tensor's payload with a new shape (no copy). */
ol_status ol_ctx_output_view(ol_kernel_ctx *ctx, size_t i, const ol_tensor *src, int rank,
                             const int64_t *dims);
bool ol_ctx_wants_output(const ol_kernel_ctx *ctx, size_t i);

/* A kernel whose only attribute is an integer `axis` (Concat, Gather, ...). */
typedef struct ol_axis_kernel {
  ol_kernel base;
  int64_t axis;
  bool has_axis;
} ol_axis_kernel;
ol_status ol_axis_kernel_create(const ol_node *node, ol_kernel_compute_fn fn, int64_t default_axis,
                                ol_kernel **out);

/* Copies an INTS attribute (absent: count 0) into dst (at most cap values);
 * every value must be >= 1 (positive) or >= 0, else OL_INVALID_MODEL. */
ol_status ol_attr_copy_ints(const ol_node *node, const char *name, int64_t *dst, int64_t cap, int64_t *count,
                            bool positive);

/* Error helpers naming the node: "Add node 'n1': ..." */
ol_status ol_kernel_error(const ol_node *node, ol_status status, const char *fmt, ...)
    OL_PRINTF(3, 4);
/* Standard error for an element type the kernel does not implement. */
ol_status ol_kernel_bad_dtype(const ol_node *node, const char *what, ol_dtype dtype);

/* Reads a 1-D integer tensor (int32/int64) into values (at most cap). */
ol_status ol_tensor_to_int64s(const ol_tensor *t, int64_t *values, size_t cap, size_t *count);
/* Reads a scalar (any numeric dtype) as double. */
double ol_tensor_scalar_double(const ol_tensor *t, int64_t index);
/* Element i of a tensor converted to double (numeric and bool types; 0 for
 * others): the dtype table's to_double. */
double ol_tensor_get_double(const ol_tensor *t, int64_t index);
/* Element i as an int64: integers exactly (uint64 saturates), floats
 * truncated toward zero and saturated, NaN as 0. */
int64_t ol_tensor_get_int64(const ol_tensor *t, int64_t index);
/* Stores a double into element i (the dtype table's from_double: integers
 * truncate toward zero and saturate, NaN as 0; through float for
 * float16/bfloat16, saturating for float8; strings and complex are left
 * alone). */
void ol_tensor_set_double(ol_tensor *t, int64_t index, double value);

/* Normalizes a possibly negative axis against rank; error when out of range. */
ol_status ol_normalize_axis(const ol_node *node, int64_t axis, int rank, int *out);

/* The [outer, n, inner] view of x that Softmax, LogSoftmax and Hardmax reduce
 * over: before opset 13 the input is coerced to 2-D at axis (n = everything
 * from axis on), from 13 the reduction is along axis alone. */
ol_status ol_softmax_axis_split(const ol_node *node, int64_t axis, const ol_tensor *x, int64_t *outer,
                                int64_t *n, int64_t *inner);

/* Numpy-style broadcast of two shapes. */
ol_status ol_broadcast_shapes(const ol_node *node, int rank_a, const int64_t *a, int rank_b,
                              const int64_t *b, int *rank_out, int64_t *out);

#endif
