#include "value.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

#include "checked.h"
#include "dtype.h"
#include "payload_pool.h"
#include "status.h"

/* ------------------------------------------------------------ recycled structs */

/* A decode step creates and releases a few hundred tensors, each a value and
 * a buffer struct: a short per-thread stack of released structs saves two
 * allocator round trips per tensor (payloads still go to their allocator).
 * Why this thread-local cache is acceptable: core/alloc.h, "Thread-local
 * memory state". */
#define RECYCLE_MAX 64
typedef struct recycle_bin {
  void *items[RECYCLE_MAX];
  int count;
} recycle_bin;
#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
#define OL_THREAD_LOCAL /* one thread */
#else
#define OL_THREAD_LOCAL _Thread_local
#endif
static OL_THREAD_LOCAL recycle_bin value_bin, buffer_bin;

static void *recycled_calloc(recycle_bin *bin, size_t size) {
  if (!bin->count) return ol_xcalloc(1, size);
  void *p = bin->items[--bin->count];
  memset(p, 0, size);
  return p;
}

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
static void watch_thread_exit(void) {}
#else
#include <pthread.h>
/* a thread's bins are emptied when it exits (a pthread key's destructor) */
static pthread_key_t exit_key;
static bool exit_key_made;
static pthread_once_t exit_once = PTHREAD_ONCE_INIT;
static OL_THREAD_LOCAL bool exit_watched;
static void empty_bins(void *unused) {
  (void)unused;
  while (value_bin.count) free(value_bin.items[--value_bin.count]);
  while (buffer_bin.count) free(buffer_bin.items[--buffer_bin.count]);
}
static void make_exit_key(void) { exit_key_made = pthread_key_create(&exit_key, empty_bins) == 0; }
static void watch_thread_exit(void) {
  if (exit_watched) return;
  exit_watched = true;
  pthread_once(&exit_once, make_exit_key);
  if (exit_key_made) pthread_setspecific(exit_key, &exit_watched); /* non-NULL: the destructor runs */
}
#endif

static void recycle(recycle_bin *bin, void *p) {
  if (bin->count < RECYCLE_MAX) {
    if (!bin->count) watch_thread_exit();
    bin->items[bin->count++] = p;
  } else {
    free(p);
  }
}

/* ------------------------------------------------------------ buffers */

static ol_buffer *buffer_new(ol_allocator *allocator, size_t size, bool zeroed) {
  ol_buffer *b = recycled_calloc(&buffer_bin, sizeof *b);
  if (!b) return NULL;
  b->data = ol_alloc(allocator, size ? size : 1);
  if (!b->data) {
    recycle(&buffer_bin, b);
    return NULL;
  }
  if (zeroed) memset(b->data, 0, size);
  b->size = size;
  b->refcount = 1;
  b->allocator = allocator ? allocator : ol_allocator_default();
  b->pool = ol_payload_pool_adopt(b->allocator);
  return b;
}

ol_buffer *ol_buffer_new(ol_allocator *allocator, size_t size) { return buffer_new(allocator, size, true); }
ol_buffer *ol_buffer_new_uninit(ol_allocator *allocator, size_t size) {
  return buffer_new(allocator, size, false);
}

ol_buffer *ol_buffer_wrap(void *data, size_t size, void (*release)(void *user), void *user) {
  ol_buffer *b = recycled_calloc(&buffer_bin, sizeof *b);
  if (!b) return NULL;
  b->data = data;
  b->size = size;
  b->refcount = 1;
  b->release = release;
  b->user = user;
  return b;
}

ol_buffer *ol_buffer_retain(ol_buffer *b) {
  if (b) b->refcount++;
  return b;
}

void ol_buffer_release(ol_buffer *b) {
  if (!b || --b->refcount > 0) return;
  if (b->string_count) {
    ol_string *s = b->data;
    for (size_t i = 0; i < b->string_count; i++) free(s[i].data);
  }
  if (b->pool)
    ol_payload_pool_return(b->pool, b->data);
  else if (b->allocator)
    ol_dealloc(b->allocator, b->data);
  else if (b->release)
    b->release(b->user);
  recycle(&buffer_bin, b);
}

/* ------------------------------------------------------------ shapes */

int64_t ol_shape_count(int rank, const int64_t *dims) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i];
  return n;
}

bool ol_shape_valid(int rank, const int64_t *dims) {
  int64_t n;
  return rank >= 0 && rank <= OL_MAX_RANK && ol_shape_count_checked(rank, dims, &n);
}

static ol_value *value_alloc(ol_value_kind kind) {
  ol_value *v = recycled_calloc(&value_bin, sizeof *v);
  if (v) {
    v->refcount = 1;
    v->kind = kind;
  }
  return v;
}

/* A valid dtype and shape whose storage fits this build's address space. */
static ol_status check_shape(ol_dtype dtype, int rank, const int64_t *dims) {
  if (!ol_dtype_valid(dtype))
    return ol_error(OL_INVALID_ARGUMENT, "invalid tensor element type %d", (int)dtype);
  if (rank < 0 || rank > OL_MAX_RANK)
    return ol_error(OL_INVALID_ARGUMENT, "tensor rank %d is outside 0..%d", rank, OL_MAX_RANK);
  if (rank && !dims) return ol_error(OL_INVALID_ARGUMENT, "tensor dims are NULL");
  int64_t count;
  size_t bytes;
  bool counted = ol_shape_count_checked(rank, dims, &count);
  if (counted && ol_dtype_storage_bytes_checked(dtype, count, &bytes)) return OL_OK;
  char shape[160];
  ol_tensor t = {.dtype = dtype, .rank = rank};
  memcpy(t.dims, dims, sizeof(int64_t) * (size_t)rank);
  ol_tensor_describe(&t, shape, sizeof shape);
  if (!counted)
    return ol_error(OL_INVALID_ARGUMENT, "tensor shape %s has a negative dimension or more than %lld elements",
                    shape, (long long)OL_MAX_ELEMENTS);
  return ol_error(OL_OUT_OF_MEMORY, "tensor %s needs more bytes than this build can address (%llu)", shape,
                  (unsigned long long)SIZE_MAX);
}

ol_status ol_value_new_view(ol_buffer *buffer, size_t offset, ol_dtype dtype, int rank,
                            const int64_t *dims, ol_value **out) {
  OL_TRY(check_shape(dtype, rank, dims));
  size_t need = ol_dtype_storage_bytes(dtype, ol_shape_count(rank, dims));
  if (need && (!buffer || offset > buffer->size || buffer->size - offset < need))
    return ol_error(OL_INVALID_ARGUMENT, "tensor of %zu bytes does not fit its buffer", need);
  ol_value *v = value_alloc(OL_VALUE_TENSOR);
  if (!v) return OL_OUT_OF_MEMORY;
  v->tensor.dtype = dtype;
  v->tensor.rank = rank;
  if (rank) memcpy(v->tensor.dims, dims, sizeof(int64_t) * (size_t)rank);
  v->tensor.buffer = ol_buffer_retain(buffer);
  v->tensor.offset = offset;
  *out = v;
  return OL_OK;
}

static ol_status new_tensor(ol_allocator *allocator, ol_dtype dtype, int rank, const int64_t *dims,
                            bool zeroed, ol_value **out) {
  *out = NULL;
  OL_TRY(check_shape(dtype, rank, dims));
  int64_t count = ol_shape_count(rank, dims);
  size_t bytes = ol_dtype_storage_bytes(dtype, count);
  ol_buffer *b = zeroed ? ol_buffer_new(allocator, bytes) : ol_buffer_new_uninit(allocator, bytes);
  if (!b) return OL_OUT_OF_MEMORY;
  if (dtype == OL_DTYPE_STRING) b->string_count = (size_t)count;
  /* ol_value_new_view without checking again what was just checked */
  ol_value *v = value_alloc(OL_VALUE_TENSOR);
  if (!v) {
    ol_buffer_release(b);
    return OL_OUT_OF_MEMORY;
  }
  v->tensor.dtype = dtype;
  v->tensor.rank = rank;
  if (rank) memcpy(v->tensor.dims, dims, sizeof(int64_t) * (size_t)rank);
  v->tensor.buffer = b; /* the new buffer's reference moves to the value */
  v->tensor.offset = 0;
  *out = v;
  return OL_OK;
}

ol_status ol_value_new_tensor(ol_allocator *allocator, ol_dtype dtype, int rank,
                              const int64_t *dims, ol_value **out) {
  return new_tensor(allocator, dtype, rank, dims, true, out);
}

ol_status ol_value_new_tensor_uninit(ol_allocator *allocator, ol_dtype dtype, int rank,
                                     const int64_t *dims, ol_value **out) {
  /* strings hold pointers that are freed and overwritten, sub-byte codes
   * are written by read-modify-write: both start from zeroed storage */
  bool zeroed = dtype == OL_DTYPE_STRING || ol_dtype_size(dtype) == 0;
  return new_tensor(allocator, dtype, rank, dims, zeroed, out);
}

ol_status ol_value_reshape_view(const ol_value *src, int rank, const int64_t *dims,
                                ol_value **out) {
  const ol_tensor *t = &src->tensor;
  OL_TRY(check_shape(t->dtype, rank, dims));
  if (ol_shape_count(rank, dims) != ol_tcount(t))
    return ol_error(OL_INVALID_ARGUMENT, "cannot view %lld elements as %lld",
                    (long long)ol_tcount(t), (long long)ol_shape_count(rank, dims));
  return ol_value_new_view(t->buffer, t->offset, t->dtype, rank, dims, out);
}

ol_status ol_tensor_clone(ol_allocator *allocator, const ol_tensor *src, ol_value **out) {
  if (ol_tensor_is_packed(src)) return ol_tensor_materialize(allocator, src, out);
  /* every element copied below (strings start zeroed: see _uninit) */
  OL_TRY(ol_value_new_tensor_uninit(allocator, src->dtype, src->rank, src->dims, out));
  ol_tensor *dst = &(*out)->tensor;
  int64_t n = ol_tcount(src);
  if (src->dtype == OL_DTYPE_STRING) {
    const ol_string *from = ol_tdata(src);
    ol_string *to = ol_tdata(dst);
    for (int64_t i = 0; i < n; i++) {
      to[i].data = ol_xmalloc(from[i].length + 1);
      if (!to[i].data) {
        ol_value_release(*out);
        *out = NULL;
        return OL_OUT_OF_MEMORY;
      }
      memcpy(to[i].data, from[i].data ? from[i].data : "", from[i].length);
      to[i].data[from[i].length] = 0;
      to[i].length = from[i].length;
    }
  } else if (n) {
    memcpy(ol_tdata(dst), ol_tdata(src), ol_dtype_storage_bytes(src->dtype, n));
  }
  return OL_OK;
}

/* In wasm (no bulk memory) memcpy hands copies of 512 bytes and more to
 * JavaScript (a call out of wasm per copy) and memmove is a plain loop:
 * 16-byte vectors copy about four times faster. */
void ol_copy_forward(void *dst_, const void *src_, size_t n) {
  uint8_t *dst = dst_;
  const uint8_t *src = src_;
#if defined(__wasm_simd128__)
  size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    v128_t a = wasm_v128_load(src + i), b = wasm_v128_load(src + i + 16);
    v128_t c = wasm_v128_load(src + i + 32), d = wasm_v128_load(src + i + 48);
    wasm_v128_store(dst + i, a), wasm_v128_store(dst + i + 16, b);
    wasm_v128_store(dst + i + 32, c), wasm_v128_store(dst + i + 48, d);
  }
  for (; i + 16 <= n; i += 16) wasm_v128_store(dst + i, wasm_v128_load(src + i));
  for (; i < n; i++) dst[i] = src[i];
#else
  memmove(dst, src, n);
#endif
}

/* memmove for ol_elements_copy: forward copies where they are safe */
static void copy_bytes(uint8_t *dst, const uint8_t *src, size_t n) {
  if (dst + n <= src || src + n <= dst) ol_copy_forward(dst, src, n);
  else memmove(dst, src, n);
}

ol_status ol_elements_copy(ol_dtype dtype, void *dst, int64_t di, const void *src, int64_t si,
                           int64_t n) {
  if (n <= 0) return OL_OK;
  if (dtype == OL_DTYPE_STRING) {
    ol_string *d = (ol_string *)dst + di;
    const ol_string *s = (const ol_string *)src + si;
    for (int64_t i = 0; i < n; i++) {
      if (d + i == s + i) continue;
      char *copy = ol_xmalloc(s[i].length + 1);
      if (!copy) return OL_OUT_OF_MEMORY;
      if (s[i].length) memcpy(copy, s[i].data, s[i].length);
      copy[s[i].length] = 0;
      free(d[i].data);
      d[i].data = copy;
      d[i].length = s[i].length;
    }
    return OL_OK;
  }
  size_t es = ol_dtype_size(dtype);
  if (es) {
    copy_bytes((uint8_t *)dst + (size_t)di * es, (const uint8_t *)src + (size_t)si * es, (size_t)n * es);
    return OL_OK;
  }
  for (int64_t i = 0; i < n; i++) ol_packed_set(dtype, dst, di + i, ol_packed_get(dtype, src, si + i));
  return OL_OK;
}

ol_status ol_elements_fill(ol_dtype dtype, void *dst, int64_t n, const void *src, int64_t si) {
  if (n <= 0) return OL_OK;
  size_t es = ol_dtype_size(dtype);
  if (dtype != OL_DTYPE_STRING && es) {
    /* doubling copies: log2(n) memcpy calls */
    char *d = dst;
    memcpy(d, (const char *)src + (size_t)si * es, es);
    int64_t done = 1;
    while (done < n) {
      int64_t chunk = done < n - done ? done : n - done;
      memcpy(d + (size_t)done * es, d, (size_t)chunk * es);
      done += chunk;
    }
    return OL_OK;
  }
  for (int64_t i = 0; i < n; i++) OL_TRY(ol_elements_copy(dtype, dst, i, src, si, 1));
  return OL_OK;
}

const char *ol_tensor_describe(const ol_tensor *t, char *buf, size_t size) {
  int w = snprintf(buf, size, "%s[", ol_dtype_name(t->dtype));
  for (int i = 0; i < t->rank && w > 0 && (size_t)w < size; i++)
    w += snprintf(buf + w, size - (size_t)w, i ? ",%lld" : "%lld", (long long)t->dims[i]);
  if (w > 0 && (size_t)w < size) snprintf(buf + w, size - (size_t)w, "]");
  return buf;
}

/* ------------------------------------------------------------ public values */

ol_value *ol_value_retain(ol_value *v) {
  if (v) v->refcount++;
  return v;
}

void ol_value_release(ol_value *v) {
  if (!v || --v->refcount > 0) return;
  ol_buffer_release(v->tensor.buffer);
  for (size_t i = 0; i < v->count; i++) ol_value_release(v->items[i]);
  free(v->items);
  ol_value_release(v->contained);
  if (v->field_names)
    for (size_t i = 0; i < v->count; i++) free(v->field_names[i]);
  free(v->field_names);
  if (v->encoded && v->encoded_free) v->encoded_free(v->encoded);
  if (v->encoded_resource && v->encoded_resource_release)
    v->encoded_resource_release(v->encoded_resource);
  recycle(&value_bin, v);
}

ol_value_kind ol_value_get_kind(const ol_value *v) { return v->kind; }

ol_status ol_tensor_create(ol_allocator *allocator, ol_dtype dtype, const int64_t *dims,
                           size_t rank, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_create: out is NULL");
  return ol_value_new_tensor(allocator, dtype, (int)rank, dims, out);
}

ol_status ol_tensor_wrap(ol_dtype dtype, const int64_t *dims, size_t rank, void *data,
                         size_t byte_size, void (*release)(void *user), void *user,
                         ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_wrap: out is NULL");
  *out = NULL;
  if (dtype == OL_DTYPE_STRING)
    return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_wrap: string tensors cannot wrap memory");
  OL_TRY(check_shape(dtype, (int)rank, dims));
  size_t need = ol_dtype_storage_bytes(dtype, ol_shape_count((int)rank, dims));
  if (byte_size < need)
    return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_wrap: %zu bytes given, shape needs %zu",
                    byte_size, need);
  ol_buffer *b = ol_buffer_wrap(data, byte_size, release, user);
  if (!b) return OL_OUT_OF_MEMORY;
  ol_status s = ol_value_new_view(b, 0, dtype, (int)rank, dims, out);
  ol_buffer_release(b);
  return s;
}

static ol_status string_slot(const ol_value *t, size_t index, ol_string **slot) {
  *slot = NULL;
  if (!t || t->kind != OL_VALUE_TENSOR || t->tensor.dtype != OL_DTYPE_STRING)
    return ol_error(OL_INVALID_ARGUMENT, "not a string tensor");
  if ((int64_t)index >= ol_tcount(&t->tensor))
    return ol_error(OL_INVALID_ARGUMENT, "string index %zu out of range", index);
  *slot = (ol_string *)ol_tdata(&t->tensor) + index;
  return OL_OK;
}

ol_status ol_tensor_set_string(ol_value *t, size_t index, const char *bytes, size_t length) {
  ol_string *s;
  OL_TRY(string_slot(t, index, &s));
  char *copy = ol_xmalloc(length + 1);
  if (!copy) return OL_OUT_OF_MEMORY;
  if (length) memcpy(copy, bytes, length);
  copy[length] = 0;
  free(s->data);
  s->data = copy;
  s->length = length;
  return OL_OK;
}

ol_status ol_tensor_get_string(const ol_value *t, size_t index, const char **bytes,
                               size_t *length) {
  ol_string *s;
  OL_TRY(string_slot(t, index, &s));
  *bytes = s->data ? s->data : "";
  *length = s->length;
  return OL_OK;
}

ol_dtype ol_tensor_dtype(const ol_value *t) { return t->tensor.dtype; }
size_t ol_tensor_rank(const ol_value *t) { return (size_t)t->tensor.rank; }
const int64_t *ol_tensor_dims(const ol_value *t) { return t->tensor.dims; }
int64_t ol_tensor_element_count(const ol_value *t) { return ol_tcount(&t->tensor); }
size_t ol_tensor_byte_size(const ol_value *t) {
  return ol_dtype_storage_bytes(t->tensor.dtype, ol_tcount(&t->tensor));
}
void *ol_tensor_data(const ol_value *t) { return ol_tdata(&t->tensor); }

ol_status ol_sequence_create(ol_dtype element_dtype, ol_value *const *items, size_t count,
                             ol_value **out) {
  *out = NULL;
  for (size_t i = 0; i < count; i++) {
    if (!items[i]) return ol_error(OL_INVALID_ARGUMENT, "sequence item %zu is NULL", i);
    /* an untyped sequence holds values of one kind (structs, encoded values, ...) */
    bool fits = element_dtype ? items[i]->kind == OL_VALUE_TENSOR && items[i]->tensor.dtype == element_dtype
                              : items[i]->kind == items[0]->kind;
    if (!fits)
      return element_dtype ? ol_error(OL_INVALID_ARGUMENT, "sequence item %zu is not a %s tensor", i,
                                      ol_dtype_name(element_dtype))
                           : ol_error(OL_INVALID_ARGUMENT, "sequence item %zu is not of the same kind as item 0", i);
  }
  ol_value *v = value_alloc(OL_VALUE_SEQUENCE);
  if (!v) return OL_OUT_OF_MEMORY;
  v->items = ol_xcalloc(count, sizeof *v->items);
  if (!v->items) {
    free(v);
    return OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < count; i++) v->items[i] = ol_value_retain(items[i]);
  v->count = count;
  v->element_dtype = element_dtype;
  *out = v;
  return OL_OK;
}

size_t ol_sequence_length(const ol_value *s) { return s->kind == OL_VALUE_SEQUENCE ? s->count : 0; }
ol_value *ol_sequence_at(const ol_value *s, size_t i) {
  return s->kind == OL_VALUE_SEQUENCE && i < s->count ? s->items[i] : NULL;
}
ol_dtype ol_sequence_element_dtype(const ol_value *s) { return s->element_dtype; }

ol_status ol_optional_create(ol_value *contained, ol_value **out) {
  ol_value *v = value_alloc(OL_VALUE_OPTIONAL);
  if (!v) return OL_OUT_OF_MEMORY;
  v->contained = ol_value_retain(contained);
  if (contained && contained->kind == OL_VALUE_TENSOR) v->element_dtype = contained->tensor.dtype;
  *out = v;
  return OL_OK;
}

ol_value *ol_optional_get(const ol_value *o) { return o->kind == OL_VALUE_OPTIONAL ? o->contained : NULL; }

ol_status ol_value_new_encoded(void *payload, void (*free_fn)(void *payload), ol_value **out) {
  *out = NULL;
  if (!payload) return ol_error(OL_INVALID_ARGUMENT, "encoded value without a payload");
  ol_value *v = value_alloc(OL_VALUE_ENCODED);
  if (!v) {
    if (free_fn) free_fn(payload);
    return OL_OUT_OF_MEMORY;
  }
  v->encoded = payload;
  v->encoded_free = free_fn;
  *out = v;
  return OL_OK;
}

void ol_value_attach_resource(ol_value *v, void *resource, void (*release)(void *resource)) {
  if (v->encoded_resource && v->encoded_resource_release)
    v->encoded_resource_release(v->encoded_resource);
  v->encoded_resource = resource;
  v->encoded_resource_release = release;
}

ol_status ol_struct_create(const char *const *names, ol_value *const *fields, size_t count, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_struct_create: out is NULL");
  *out = NULL;
  if (count && (!names || !fields)) return ol_error(OL_INVALID_ARGUMENT, "ol_struct_create: NULL names or fields");
  for (size_t i = 0; i < count; i++) {
    if (!names[i] || !names[i][0] || !fields[i])
      return ol_error(OL_INVALID_ARGUMENT, "struct field %zu has no name or no value", i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[k], names[i]) == 0) return ol_error(OL_INVALID_ARGUMENT, "struct field '%s' appears twice", names[i]);
  }
  ol_value *v = value_alloc(OL_VALUE_STRUCT);
  if (!v) return OL_OUT_OF_MEMORY;
  v->items = ol_xcalloc(count, sizeof *v->items);
  v->field_names = ol_xcalloc(count, sizeof *v->field_names);
  if (!v->items || !v->field_names) {
    ol_value_release(v);
    return OL_OUT_OF_MEMORY;
  }
  for (size_t i = 0; i < count; i++) {
    v->field_names[i] = ol_strdup(names[i]);
    if (!v->field_names[i]) {
      ol_value_release(v);
      return OL_OUT_OF_MEMORY;
    }
    v->items[i] = ol_value_retain(fields[i]);
    v->count = i + 1;
  }
  *out = v;
  return OL_OK;
}

size_t ol_struct_field_count(const ol_value *v) { return v && v->kind == OL_VALUE_STRUCT ? v->count : 0; }

const char *ol_struct_field_name(const ol_value *v, size_t i) {
  return v && v->kind == OL_VALUE_STRUCT && i < v->count ? v->field_names[i] : NULL;
}

ol_value *ol_struct_field(const ol_value *v, const char *name) {
  if (!v || v->kind != OL_VALUE_STRUCT || !name) return NULL;
  for (size_t i = 0; i < v->count; i++)
    if (strcmp(v->field_names[i], name) == 0) return v->items[i];
  return NULL;
}
