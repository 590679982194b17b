/* Float32 rows of float32/float16/bfloat16 data through the dtype table,
 * and the four-lane dot product attention kernels share (see float_io.h). */
#include "ops/float_io.h"

#include <string.h>

typedef float v4f __attribute__((vector_size(16)));

const float *ol_floats_row(ol_dtype dt, const void *data, int64_t at, int64_t n, float *scratch) {
  const char *p = (const char *)data + (size_t)at * ol_dtype_size(dt);
  if (dt == OL_DTYPE_FLOAT) return (const float *)p;
  ol_dtype_info(dt)->load_row(p, n, scratch);
  return scratch;
}

void ol_floats_get(ol_dtype dt, const void *data, int64_t at, int64_t n, float *dst) {
  if (n > 0) ol_dtype_info(dt)->load_row((const char *)data + (size_t)at * ol_dtype_size(dt), n, dst);
}

void ol_floats_put(ol_dtype dt, void *data, int64_t at, const float *src, int64_t n) {
  if (n > 0) ol_dtype_info(dt)->store_row(src, n, (char *)data + (size_t)at * ol_dtype_size(dt));
}

void ol_floats_store(ol_tensor *y, int64_t at, const float *src, int64_t n) {
  ol_floats_put(y->dtype, ol_tdata(y), at, src, n);
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
