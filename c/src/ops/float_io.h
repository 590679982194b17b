/* Float32 access to float32/float16/bfloat16 tensors, for kernels that
 * compute in float32 (normalizations, rotary embeddings, attention,
 * MatMulNBits), and the four-lane dot product they share. */
#ifndef OL_OPS_FLOAT_IO_H
#define OL_OPS_FLOAT_IO_H
#include <stdbool.h>
#include <stdint.h>

#include "ops/kernel.h"

/* FLOAT, FLOAT16 or BFLOAT16. */
bool ol_is_float_type(ol_dtype dt);
/* A float32 copy (or a view, *owned false) of a float32/float16/bfloat16
 * tensor, element for element of its storage (a pitched cache keeps its
 * pitch). NULL with *owned true when out of memory. */
float *ol_floats_load(const ol_tensor *t, bool *owned);
/* Stores n floats into y at element `at` (copied, or rounded to
 * float16/bfloat16). */
void ol_floats_store(ol_tensor *y, int64_t at, const float *src, int64_t n);
/* sum a[i]*b[i]: four lane sums in i order, combined as (l0+l1)+(l2+l3),
 * then the tail in order. */
float ol_dot_f32(const float *a, const float *b, int64_t n);

#endif
