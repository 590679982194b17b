/* Quantize's numerical inputs applied to a plan (see inputs.h). */
#include "quant/inputs.h"

#include <stdlib.h>

#include "core/alloc.h"
#include "core/status.h"
#include "quant/codec.h"

#define INVALID(...) ol_error(OL_INVALID_ARGUMENT, __VA_ARGS__)

const char *const ol_quant_input_names[OL_QUANT_IN_COUNT] = {
    "X", "scales", "zero_points", "offsets", "codebooks", "permutation", "forward", "inverse", "outliers"};

ol_status ol_quant_read_param(const ol_tensor *t, ol_quant_input input, double **out, uint64_t *count) {
  *out = NULL;
  *count = (uint64_t)ol_tcount(t);
  if (!ol_quant_float_bytes(t->dtype))
    return INVALID("input '%s' must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got %s)",
                   ol_quant_input_names[input], ol_dtype_name(t->dtype));
  double *v = ol_xmalloc(*count ? (size_t)*count * sizeof(double) : 1);
  if (!v) return OL_OUT_OF_MEMORY;
  ol_status s = ol_quant_read_floats(t->dtype, ol_tdata(t), *count, v);
  if (s != OL_OK) {
    free(v);
    return s;
  }
  *out = v;
  return OL_OK;
}

ol_status ol_quant_apply_per_block(ol_quant_plan *plan, const ol_tensor *t, ol_quant_input input,
                                   size_t blocks) {
  double *v;
  uint64_t n;
  bool scalar = t->rank == 0;
  if (!scalar && !(t->rank == 1 && (uint64_t)t->dims[0] == blocks))
    return INVALID("input '%s' must be a scalar or a 1-D tensor with one value per block "
                   "(%zu blocks), got rank %d with %lld values", ol_quant_input_names[input], blocks,
                   t->rank, (long long)ol_tcount(t));
  OL_TRY(ol_quant_read_param(t, input, &v, &n));
  size_t k = 0;
  for (size_t r = 0; r < plan->run_count; r++)
    for (size_t b = 0; b < plan->runs[r].block_count; b++, k++) {
      ol_quant_block *blk = &plan->runs[r].blocks[b];
      double x = v[scalar ? 0 : k];
      if (input == OL_QUANT_IN_SCALES) blk->scale = x;
      else if (input == OL_QUANT_IN_ZERO_POINTS) blk->zero_point = x;
      else blk->offset = x;
    }
  free(v);
  return OL_OK;
}

static ol_status apply_codebooks(ol_quant_plan *plan, const ol_tensor *t) {
  uint64_t want = 0;
  for (size_t r = 0; r < plan->run_count; r++)
    want += ol_quant_layout_table_size(&plan->runs[r].layout) * plan->runs[r].block_count;
  double *v;
  uint64_t n;
  OL_TRY(ol_quant_read_param(t, OL_QUANT_IN_CODEBOOKS, &v, &n));
  ol_status s = OL_OK;
  if (n != want)
    s = INVALID("input 'codebooks' has %llu values; the descriptor's blocks need %llu "
                "(all blocks' tables concatenated in run order)",
                (unsigned long long)n, (unsigned long long)want);
  uint64_t at = 0;
  for (size_t r = 0; s == OL_OK && r < plan->run_count; r++) {
    uint64_t size = ol_quant_layout_table_size(&plan->runs[r].layout);
    for (size_t b = 0; s == OL_OK && b < plan->runs[r].block_count; b++, at += size)
      s = ol_quant_block_set_codebook(&plan->runs[r].blocks[b], v + at, (size_t)size);
  }
  free(v);
  return s;
}

/* permutation / outliers: 1-D INT64 with exactly the declared count. */
static ol_status read_indices(const ol_tensor *t, ol_quant_input input, size_t declared,
                              const int64_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  const char *name = ol_quant_input_names[input];
  if (!t || ol_tcount(t) == 0) {
    if (declared)
      return INVALID("the destination type declares %zu %s indices but input '%s' is %s", declared,
                     name, name, t ? "empty" : "missing");
    return OL_OK;
  }
  if (t->dtype != OL_DTYPE_INT64 || t->rank != 1)
    return INVALID("input '%s' must be a 1-D INT64 tensor", name);
  if ((size_t)t->dims[0] != declared)
    return INVALID("input '%s' has %lld indices; the destination type declares %zu", name,
                   (long long)t->dims[0], declared);
  *out = ol_tdata(t);
  *count = declared;
  return OL_OK;
}

static ol_status read_matrix(const ol_tensor *t, ol_quant_input input, uint32_t n, double **out) {
  *out = NULL;
  const char *name = ol_quant_input_names[input];
  if (!t || ol_tcount(t) == 0) {
    if (n)
      return INVALID("the destination type declares a %u x %u transform but input '%s' is %s", n, n,
                     name, t ? "empty" : "missing");
    return OL_OK;
  }
  if (t->rank != 2 || t->dims[0] != (int64_t)n || t->dims[1] != (int64_t)n)
    return INVALID("input '%s' must have shape [%u, %u] (the declared transform size), got rank "
                   "%d%s", name, n, n, t->rank, t->rank == 2 ? " with another shape" : "");
  uint64_t count;
  return ol_quant_read_param(t, input, out, &count);
}

ol_status ol_quant_apply_inputs(ol_quant_plan *plan, const ol_tensor *const inputs[OL_QUANT_IN_COUNT]) {
  size_t blocks = 0;
  for (size_t r = 0; r < plan->run_count; r++) blocks += plan->runs[r].block_count;
  const ol_tensor *t;
  if ((t = inputs[OL_QUANT_IN_CODEBOOKS])) OL_TRY(apply_codebooks(plan, t));
  static const ol_quant_input per_block[] = {OL_QUANT_IN_ZERO_POINTS, OL_QUANT_IN_OFFSETS,
                                             OL_QUANT_IN_SCALES};
  for (size_t i = 0; i < 3; i++)
    if ((t = inputs[per_block[i]])) OL_TRY(ol_quant_apply_per_block(plan, t, per_block[i], blocks));
  const int64_t *idx;
  size_t count;
  OL_TRY(read_indices(inputs[OL_QUANT_IN_PERMUTATION], OL_QUANT_IN_PERMUTATION,
                      plan->permutation_size, &idx, &count));
  plan->permutation_size = 0;
  OL_TRY(ol_quant_plan_set_permutation(plan, idx, count));
  OL_TRY(read_indices(inputs[OL_QUANT_IN_OUTLIERS], OL_QUANT_IN_OUTLIERS, plan->outlier_count, &idx,
                      &count));
  plan->outlier_count = 0;
  OL_TRY(ol_quant_plan_set_outliers(plan, idx, count));
  uint32_t n = plan->transform_size;
  plan->transform_size = 0;
  plan->forward_size = plan->inverse_size = 0;
  double *fwd = NULL, *inv = NULL;
  ol_status s = read_matrix(inputs[OL_QUANT_IN_FORWARD], OL_QUANT_IN_FORWARD, n, &fwd);
  if (s == OL_OK) s = read_matrix(inputs[OL_QUANT_IN_INVERSE], OL_QUANT_IN_INVERSE, n, &inv);
  size_t nn = (size_t)n * n;
  if (s == OL_OK) s = ol_quant_plan_set_transform(plan, n, fwd, nn, inv, nn);
  free(fwd);
  free(inv);
  return s;
}
