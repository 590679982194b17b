/* Ref-counted buffers and values (tensors, sequences, maps, optionals).
 * A tensor is a view: dtype + shape + (buffer, byte offset). Sharing a payload
 * is retaining its buffer; nothing here copies payload bytes implicitly. */
#ifndef OL_CORE_VALUE_H
#define OL_CORE_VALUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "alloc.h"
#include "onnxlight.h"

#ifndef OL_MAX_RANK
#define OL_MAX_RANK 16
#endif

/* One element of a STRING tensor. */
typedef struct ol_string {
  char *data; /* NUL-terminated, owned by the buffer */
  size_t length;
} ol_string;

typedef struct ol_buffer {
  void *data;
  size_t size;
  int refcount;
  ol_allocator *allocator;      /* owner of data when release is NULL */
  void (*release)(void *user);  /* caller-supplied release for wrapped memory */
  void *user;
  size_t string_count;          /* > 0: data is ol_string[string_count] */
  /* Rows in use along the pitched axis of a cache that grows in place from
   * run to run (ops/tensor.c, session caches): later rows are spare. Changed
   * only by compare-and-swap, so one appender wins and the others copy. */
  int64_t append_end;
  /* The session pool the payload came from during a run: released, it goes
   * back there (core/payload_pool.h). NULL: to allocator. */
  struct ol_payload_pool *pool;
} ol_buffer;

ol_buffer *ol_buffer_new(ol_allocator *allocator, size_t size); /* zeroed */
/* Like ol_buffer_new, the bytes left as the allocator returns them. */
ol_buffer *ol_buffer_new_uninit(ol_allocator *allocator, size_t size);
ol_buffer *ol_buffer_wrap(void *data, size_t size, void (*release)(void *user), void *user);
ol_buffer *ol_buffer_retain(ol_buffer *buffer);
void ol_buffer_release(ol_buffer *buffer);

/* A weight in a layout of its reader's own (XNNPACK's packed weights): the
 * operator family that reads it lays it out in place when the model is
 * loaded (model/pack.c, the schema rows' pack hooks). kind NULL: dense
 * row-major. Core knows only how to get the dense bytes back. */
typedef struct ol_packing ol_packing;
typedef struct ol_packing_kind {
  const char *name;
  /* Writes the dense row-major bytes of a payload packed as `packing`. */
  void (*to_dense)(const ol_packing *packing, const void *packed, void *dense);
} ol_packing_kind;
struct ol_packing {
  const ol_packing_kind *kind;
  int64_t params[4]; /* the kind's own (e.g. matrix rows, columns, block rows) */
};

typedef struct ol_tensor {
  ol_dtype dtype;
  int rank;
  int64_t dims[OL_MAX_RANK];
  ol_buffer *buffer; /* NULL for zero-element tensors is allowed */
  size_t offset;
  /* Pitched layout (persistent KV caches growing in place, see pitched.c):
   * pitch > 0 says the storage holds `pitch` entries along dims[pitch_axis]
   * for every index of the dims before it, of which only the first
   * dims[pitch_axis] are part of the tensor. pitch 0: dense row-major. Only
   * kernels whose schema row declares it (pitched_inputs) ever see a pitched
   * tensor whose layout is not dense; the runtime materializes it for all
   * others and before anything escapes to the user. */
  int pitch_axis;
  int64_t pitch;
  /* A weight packed for the kernels that read it (ol_packing above). Only
   * kernels whose schema row declares the input packed see one; the runtime
   * gives every other reader, and anything escaping to the user, a dense
   * copy (ol_tensor_materialize). */
  ol_packing packing;
} ol_tensor;

struct ol_value {
  int refcount;
  ol_value_kind kind;
  ol_tensor tensor;       /* OL_VALUE_TENSOR */
  ol_value **items;       /* SEQUENCE items; MAP: items[0]=keys, items[1]=values */
  size_t count;
  ol_dtype element_dtype; /* SEQUENCE/OPTIONAL element dtype (UNDEFINED: unknown) */
  ol_value *contained;    /* OPTIONAL (NULL: none) */
  char **field_names;     /* STRUCT: items[i] is the field named field_names[i] */
  void *encoded;          /* ENCODED: owned payload (an Onnx__EncodedValueProto, see quant/) */
  void (*encoded_free)(void *encoded);
  /* ENCODED values that refer to a shared resource (a compact value's
   * quantization parameter set, quant/shared.h): one retained reference,
   * released with the value. Opaque here: core sits below quant. */
  void *encoded_resource;
  void (*encoded_resource_release)(void *resource);
};

/* A new ENCODED value taking ownership of payload (freed with free_fn). */
ol_status ol_value_new_encoded(void *payload, void (*free_fn)(void *payload), ol_value **out);
/* Attaches a resource reference the value now owns (released with it). */
void ol_value_attach_resource(ol_value *v, void *resource, void (*release)(void *resource));

/* New tensor value; storage zeroed. rank may be 0 (scalar). */
ol_status ol_value_new_tensor(ol_allocator *allocator, ol_dtype dtype, int rank,
                              const int64_t *dims, ol_value **out);
/* New tensor value whose storage is NOT initialized, for producers that
 * write every element (a kernel's output, say): saves clearing memory about
 * to be overwritten. STRING and sub-byte tensors are still zeroed (string
 * pointers must start NULL; packed codes are set bit by bit). */
ol_status ol_value_new_tensor_uninit(ol_allocator *allocator, ol_dtype dtype, int rank,
                                     const int64_t *dims, ol_value **out);
/* New tensor value viewing buffer at offset (retains buffer). */
ol_status ol_value_new_view(ol_buffer *buffer, size_t offset, ol_dtype dtype, int rank,
                            const int64_t *dims, ol_value **out);
/* Same payload, new shape (element count must match). */
ol_status ol_value_reshape_view(const ol_value *src, int rank, const int64_t *dims,
                                ol_value **out);

int64_t ol_shape_count(int rank, const int64_t *dims);
bool ol_shape_valid(int rank, const int64_t *dims);

static inline void *ol_tdata(const ol_tensor *t) {
  return t->buffer ? (char *)t->buffer->data + t->offset : NULL;
}
static inline int64_t ol_tcount(const ol_tensor *t) { return ol_shape_count(t->rank, t->dims); }
static inline const ol_tensor *ol_vt(const ol_value *v) { return v ? &v->tensor : NULL; }

/* ---- pitched layouts (pitched.c) */

/* New tensor value viewing buffer at offset with the pitched layout above
 * (pitch >= dims[axis]; retains buffer). */
ol_status ol_value_new_pitched_view(ol_buffer *buffer, size_t offset, ol_dtype dtype, int rank,
                                    const int64_t *dims, int axis, int64_t pitch, ol_value **out);
/* Entries the storage holds along the pitched axis (dims[pitch_axis] when dense). */
static inline int64_t ol_tensor_layout_pitch(const ol_tensor *t) {
  return t->pitch > 0 ? t->pitch : (t->rank ? t->dims[t->pitch_axis] : 1);
}
/* True when the elements are not contiguous in row-major order. */
bool ol_tensor_is_strided(const ol_tensor *t);
/* A dense copy of a strided (pitched) or packed tensor (new buffer from allocator). */
ol_status ol_tensor_materialize(ol_allocator *allocator, const ol_tensor *t, ol_value **out);
/* Replaces *v (an owned reference) by a dense copy when it is a strided,
 * packed tensor; leaves every other value alone. */
ol_status ol_value_densify(ol_allocator *allocator, ol_value **v);
/* Storage rows for a cache of `rows` rows that grows in place from run to
 * run: half as many again spare, at least 64 and at most 256 (a long context
 * copies its prefix every 256 tokens, at most 256 rows idle). */
static inline int64_t ol_grow_capacity(int64_t rows) {
  int64_t spare = rows / 2 < 64 ? 64 : rows / 2 > 256 ? 256 : rows / 2;
  return rows + spare;
}
/* A new uninitialized tensor of dims, pitched along axis with
 * ol_grow_capacity(dims[axis]) rows, every row in use (buffer->append_end):
 * a Concat that grows its output appends to it in place. Whole-byte
 * element types only. */
ol_status ol_value_new_grown(ol_allocator *allocator, ol_dtype dtype, int rank, const int64_t *dims, int axis,
                             ol_value **out);
/* A session cache growing from run to run (Concat, Attention,
 * GroupQueryAttention with ol_kernel_ctx.grow_outputs): storage for dims
 * (past's dims, more rows along axis) whose first rows hold past's. In place
 * when past is a grown view of every row in use with room left (one run
 * claims the rows by compare-and-swap on buffer->append_end; another run from
 * the same past copies), else a new ol_value_new_grown tensor with past's rows
 * copied. The caller writes the new rows: those of outer index o at element
 * (o * pitch + past->dims[axis]) * inner. *out NULL (OL_OK): past does not
 * qualify (element type, layout, or no new rows); use the ordinary path. */
ol_status ol_value_grow_from(ol_allocator *allocator, const ol_tensor *past, int rank, const int64_t *dims, int axis,
                             ol_value **out);

/* ---- packed weights */

static inline bool ol_tensor_is_packed(const ol_tensor *t) { return t->packing.kind != NULL; }

/* Deep copy of a tensor's payload into a new value (strings duplicated). */
ol_status ol_tensor_clone(ol_allocator *allocator, const ol_tensor *src, ol_value **out);
/* Copies n bytes front to back (fast in wasm too): for disjoint ranges, or
 * when moving data to a lower address (dst < src). */
void ol_copy_forward(void *dst, const void *src, size_t n);
/* Copies n elements src[si..] to dst[di..] for any dtype (strings duplicated,
 * sub-byte types element by element). */
ol_status ol_elements_copy(ol_dtype dtype, void *dst, int64_t di, const void *src, int64_t si,
                           int64_t n);
/* Fills dst[0..n) with element si of src, for any dtype. */
ol_status ol_elements_fill(ol_dtype dtype, void *dst, int64_t n, const void *src, int64_t si);
/* Formats "float32[2,3]" into buf. */
const char *ol_tensor_describe(const ol_tensor *t, char *buf, size_t size);

#endif
