/* Pitched tensor layouts: the storage of a persistent KV cache [B, H, L, D]
 * keeps `pitch` >= L token rows per (batch, head), so appending a token
 * writes only the new rows and never moves the prefix. A pitched tensor is an
 * ordinary tensor view plus (pitch_axis, pitch); element (o, a, i) — o the
 * flattened index of the dims before the axis, a along it, i the flattened
 * inner index — lives at element offset (o * pitch + a) * inner. */
#include <string.h>

#include "core/dtype.h"
#include "core/status.h"
#include "core/value.h"

static int64_t outer_count(const ol_tensor *t) { return ol_shape_count(t->pitch_axis, t->dims); }

bool ol_tensor_is_strided(const ol_tensor *t) {
  if (t->pitch <= 0 || t->rank == 0) return false;
  if (t->pitch == t->dims[t->pitch_axis]) return false;
  return outer_count(t) > 1 && ol_tcount(t) > 0;
}

ol_status ol_value_new_pitched_view(ol_buffer *buffer, size_t offset, ol_dtype dtype, int rank,
                                    const int64_t *dims, int axis, int64_t pitch, ol_value **out) {
  *out = NULL;
  if (axis < 0 || axis >= rank || pitch < dims[axis])
    return ol_error(OL_INVALID_ARGUMENT, "pitched view: pitch %lld along axis %d is shorter than the dimension",
                    (long long)pitch, axis);
  size_t es = ol_dtype_size(dtype);
  if (!es || dtype == OL_DTYPE_STRING || ol_dtype_storage_bytes(dtype, 8) != 8 * es)
    return ol_error(OL_INVALID_ARGUMENT, "pitched view: %s has no whole-byte elements", ol_dtype_name(dtype));
  /* validate the storage extent, then build the view with a dense shape that
   * covers it and set the real dims */
  int64_t outer = ol_shape_count(axis, dims), inner = ol_shape_count(rank - axis - 1, dims + axis + 1);
  size_t need = (size_t)(outer * pitch * inner) * es;
  if (outer > 0 && inner > 0 && (!buffer || offset > buffer->size || buffer->size - offset < need))
    return ol_error(OL_INVALID_ARGUMENT, "pitched tensor of %zu bytes does not fit its buffer", need);
  OL_TRY(ol_value_new_view(buffer, offset, dtype, rank, dims, out));
  (*out)->tensor.pitch_axis = axis;
  (*out)->tensor.pitch = pitch;
  return OL_OK;
}

ol_status ol_value_new_grown(ol_allocator *allocator, ol_dtype dtype, int rank, const int64_t *dims, int axis,
                             ol_value **out) {
  *out = NULL;
  if (axis < 0 || axis >= rank) return ol_error(OL_INVALID_ARGUMENT, "grown tensor: axis %d out of range", axis);
  int64_t cap = ol_grow_capacity(dims[axis]);
  int64_t outer = ol_shape_count(axis, dims), inner = ol_shape_count(rank - axis - 1, dims + axis + 1);
  size_t es = ol_dtype_size(dtype);
  ol_buffer *b = ol_buffer_new_uninit(allocator, (size_t)(outer * cap * inner) * es);
  if (!b) return OL_OUT_OF_MEMORY;
  b->append_end = dims[axis];
  ol_status s = ol_value_new_pitched_view(b, 0, dtype, rank, dims, axis, cap, out);
  ol_buffer_release(b);
  return s;
}

ol_status ol_value_grow_from(ol_allocator *allocator, const ol_tensor *past, int rank, const int64_t *dims, int axis,
                             ol_value **out) {
  *out = NULL;
  size_t es = ol_dtype_size(past->dtype);
  if (!es || past->dtype == OL_DTYPE_STRING || ol_dtype_storage_bytes(past->dtype, 8) != 8 * es ||
      ol_tensor_is_packed(past) || past->rank != rank || axis < 0 || axis >= rank ||
      (ol_tensor_is_strided(past) && past->pitch_axis != axis))
    return OL_OK;
  const int64_t outer = ol_shape_count(axis, dims), inner = ol_shape_count(rank - axis - 1, dims + axis + 1);
  const int64_t L0 = past->dims[axis], total = dims[axis];
  if (outer == 0 || inner == 0 || total <= L0) return OL_OK;
  const int64_t pitch = past->pitch > 0 && past->pitch_axis == axis ? past->pitch : L0; /* rows per block */
  ol_buffer *b = past->buffer;
  int64_t expected = L0;
  /* L0 > 0: only buffers grown here record rows in use (others read 0) */
  if (b && L0 > 0 && past->offset == 0 && past->pitch_axis == axis && pitch >= total &&
      __atomic_compare_exchange_n(&b->append_end, &expected, total, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
    return ol_value_new_pitched_view(b, 0, past->dtype, rank, dims, axis, pitch, out);
  OL_TRY(ol_value_new_grown(allocator, past->dtype, rank, dims, axis, out));
  const ol_tensor *y = &(*out)->tensor;
  size_t row = (size_t)inner * es;
  for (int64_t o = 0; o < outer && L0 > 0; o++)
    memcpy((char *)ol_tdata(y) + (size_t)(o * y->pitch) * row, (const char *)ol_tdata(past) + (size_t)(o * pitch) * row,
           (size_t)L0 * row);
  return OL_OK;
}

ol_status ol_tensor_materialize(ol_allocator *allocator, const ol_tensor *t, ol_value **out) {
  OL_TRY(ol_value_new_tensor_uninit(allocator, t->dtype, t->rank, t->dims, out)); /* every row copied */
  if (ol_tcount(t) == 0) return OL_OK;
  if (ol_tensor_is_packed(t)) {
    t->packing.kind->to_dense(&t->packing, ol_tdata(t), ol_tdata(&(*out)->tensor));
    return OL_OK;
  }
  size_t es = ol_dtype_size(t->dtype);
  int axis = t->pitch_axis;
  int64_t outer = outer_count(t), inner = ol_shape_count(t->rank - axis - 1, t->dims + axis + 1);
  size_t row = (size_t)(t->dims[axis] * inner) * es, stride = (size_t)(ol_tensor_layout_pitch(t) * inner) * es;
  const char *src = ol_tdata(t);
  char *dst = ol_tdata(&(*out)->tensor);
  for (int64_t o = 0; o < outer; o++) memcpy(dst + (size_t)o * row, src + (size_t)o * stride, row);
  return OL_OK;
}

ol_status ol_value_densify(ol_allocator *allocator, ol_value **v) {
  if (!*v || (*v)->kind != OL_VALUE_TENSOR) return OL_OK;
  if (!ol_tensor_is_strided(&(*v)->tensor) && !ol_tensor_is_packed(&(*v)->tensor)) return OL_OK;
  ol_value *dense = NULL;
  OL_TRY(ol_tensor_materialize(allocator, &(*v)->tensor, &dense));
  ol_value_release(*v);
  *v = dense;
  return OL_OK;
}

/* ------------------------------------------------------------ public */

bool ol_tensor_is_dense(const ol_value *v) {
  return v && v->kind == OL_VALUE_TENSOR && !ol_tensor_is_strided(&v->tensor) && !ol_tensor_is_packed(&v->tensor);
}

ol_status ol_tensor_densify(ol_value *tensor, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_densify: out is NULL");
  *out = NULL;
  if (!tensor || tensor->kind != OL_VALUE_TENSOR) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_densify: not a tensor");
  ol_value *v = ol_value_retain(tensor);
  ol_status s = ol_value_densify(NULL, &v);
  if (s != OL_OK) {
    ol_value_release(v);
    return s;
  }
  *out = v;
  return OL_OK;
}

ol_status ol_tensor_create_grown(ol_allocator *allocator, ol_dtype dtype, const int64_t *dims, size_t rank, int axis,
                                 ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_create_grown: out is NULL");
  *out = NULL;
  if (rank > OL_MAX_RANK) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_create_grown: rank %zu is too large", rank);
  if (rank && !dims) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_create_grown: dims is NULL");
  if (axis < 0) axis += (int)rank;
  size_t es = ol_dtype_size(dtype);
  if (axis < 0 || axis >= (int)rank)
    return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_create_grown: axis out of range for rank %zu", rank);
  bool empty = false;
  for (size_t i = 0; i < rank; i++) {
    if (dims[i] < 0) return ol_error(OL_INVALID_ARGUMENT, "ol_tensor_create_grown: negative dim %lld", (long long)dims[i]);
    empty = empty || dims[i] == 0;
  }
  /* not worth growing: *out stays NULL */
  if (!es || dtype == OL_DTYPE_STRING || ol_dtype_storage_bytes(dtype, 8) != 8 * es || empty) return OL_OK;
  return ol_value_new_grown(allocator, dtype, (int)rank, dims, axis, out);
}

int64_t ol_tensor_pitch(const ol_value *tensor) {
  return tensor && tensor->kind == OL_VALUE_TENSOR ? ol_tensor_layout_pitch(&tensor->tensor) : 0;
}
