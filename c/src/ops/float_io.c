/* Float32 access to float32/float16/bfloat16 tensors for kernels that
 * compute in float32, and the four-lane dot product attention kernels share
 * (see float_io.h). */
#include "ops/float_io.h"

#include <string.h>

typedef float v4f __attribute__((vector_size(16)));

bool ol_is_float_type(ol_dtype dt) {
  return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_FLOAT16 || dt == OL_DTYPE_BFLOAT16;
}

/* Float32 copy (or view, *owned false) of a float32/float16/bfloat16 tensor,
 * element for element of its storage (a pitched cache keeps its pitch).
 * Returns NULL with *owned true on allocation failure. */
float *ol_floats_load(const ol_tensor *t, bool *owned) {
  /* a pitched cache keeps its layout: every stored row, pitch rows per block */
  int64_t n = ol_tensor_is_strided(t)
                  ? ol_shape_count(t->pitch_axis, t->dims) * ol_tensor_layout_pitch(t) *
                        ol_shape_count(t->rank - t->pitch_axis - 1, t->dims + t->pitch_axis + 1)
                  : ol_tcount(t);
  if (t->dtype == OL_DTYPE_FLOAT) {
    *owned = false;
    static const float empty[1] = {0.0f}; /* never written: callers only read inputs */
    return n ? (float *)ol_tdata(t) : (float *)empty;
  }
  *owned = true;
  float *f = ol_xmalloc(sizeof(float) * (size_t)(n + 1));
  if (!f) return NULL;
  const uint16_t *h = ol_tdata(t);
  if (t->dtype == OL_DTYPE_FLOAT16)
    for (int64_t i = 0; i < n; i++) f[i] = ol_f16_to_f32(h[i]);
  else
    for (int64_t i = 0; i < n; i++) f[i] = ol_bf16_to_f32(h[i]);
  return f;
}

/* Stores n floats into y (float32 copy or rounded to float16/bfloat16). */
void ol_floats_store(ol_tensor *y, int64_t at, const float *src, int64_t n) {
  if (n <= 0) return;
  if (y->dtype == OL_DTYPE_FLOAT) {
    float *d = (float *)ol_tdata(y) + at;
    if (d != src) memmove(d, src, sizeof(float) * (size_t)n);
    return;
  }
  uint16_t *h = (uint16_t *)ol_tdata(y) + at;
  if (y->dtype == OL_DTYPE_FLOAT16)
    for (int64_t i = 0; i < n; i++) h[i] = ol_f32_to_f16(src[i]);
  else
    for (int64_t i = 0; i < n; i++) h[i] = ol_f32_to_bf16(src[i]);
}

/* sum a[i]*b[i]: four lane sums in i order, combined as (l0+l1)+(l2+l3),
 * then the tail in order. */
float ol_dot_f32(const float *a, const float *b, int64_t n) {
  v4f acc = {0.0f, 0.0f, 0.0f, 0.0f};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    v4f x, y;
    memcpy(&x, a + i, sizeof x);
    memcpy(&y, b + i, sizeof y);
    acc += x * y;
  }
  float s = (acc[0] + acc[1]) + (acc[2] + acc[3]);
  for (; i < n; i++) s = s + a[i] * b[i];
  return s;
}
