/* Float32 rows of float32/float16/bfloat16 data, for kernels that compute
 * in float32 (normalizations, rotary embeddings, attention, MatMulNBits):
 * thin calls of the dtype table's row converters (core/dtype.h), so that a
 * kernel converts a row or a block at a time into scratch of its own (from
 * ctx->allocator) and float32 data is read in place. Plus the four-lane dot
 * product those kernels share. */
#ifndef OL_OPS_FLOAT_IO_H
#define OL_OPS_FLOAT_IO_H
#include <stdbool.h>
#include <stdint.h>

#include "ops/kernel.h"

/* Elements [at, at + n) of data of type dt (one computed in float32, see
 * ol_dtype_computes_f32) as float32: a pointer into data for float32,
 * else converted into scratch (n floats). */
const float *ol_floats_row(ol_dtype dt, const void *data, int64_t at, int64_t n, float *scratch);
/* The same elements converted into dst (n floats; copied for float32). */
void ol_floats_get(ol_dtype dt, const void *data, int64_t at, int64_t n, float *dst);
/* Stores n floats into elements [at, at + n) of data of type dt (copied, or
 * rounded to float16/bfloat16). */
void ol_floats_put(ol_dtype dt, void *data, int64_t at, const float *src, int64_t n);
/* The same into tensor y. */
void ol_floats_store(ol_tensor *y, int64_t at, const float *src, int64_t n);
/* Floats of scratch for n elements of type dt read as float32 rows: n for a
 * type that widens (float16, bfloat16), 0 for float32 (read in place). */
static inline int64_t ol_floats_scratch(ol_dtype dt, int64_t n) { return ol_dtype_widens(dt) ? n : 0; }
/* sum a[i]*b[i]: four lane sums in i order, combined as (l0+l1)+(l2+l3),
 * then the tail in order. */
float ol_dot_f32(const float *a, const float *b, int64_t n);

#endif
