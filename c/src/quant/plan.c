/* Quantization plans: factories, deep copies, geometry and validation. */
#include "quant/plan.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

/* ============================================================ helpers */

#define INVALID(...) ol_error(OL_INVALID_ARGUMENT, __VA_ARGS__)

static uint64_t ceil_div(uint64_t n, uint64_t d) { return n / d + (n % d != 0); }

/* Copies count elements of size bytes into a fresh array (NULL for 0). */
static ol_status dup_array(const void *src, size_t count, size_t size, void **out) {
  *out = NULL;
  if (count == 0) return OL_OK;
  if (!src) return INVALID("quantization plan: NULL array with %zu elements", count);
  if (count > SIZE_MAX / size) return INVALID("quantization plan: array size overflow");
  void *copy = ol_xmalloc(count * size);
  if (!copy) return OL_OUT_OF_MEMORY;
  memcpy(copy, src, count * size);
  *out = copy;
  return OL_OK;
}

/* ============================================================ blocks and runs */

void ol_quant_block_clear(ol_quant_block *block) {
  if (!block) return;
  free(block->codebook);
  block->codebook = NULL;
  block->codebook_size = 0;
}

ol_status ol_quant_block_copy(const ol_quant_block *src, ol_quant_block *dst) {
  ol_quant_block copy = *src;
  void *table;
  OL_TRY(dup_array(src->codebook, src->codebook_size, sizeof(double), &table));
  copy.codebook = table;
  *dst = copy;
  return OL_OK;
}

ol_status ol_quant_block_set_codebook(ol_quant_block *block, const double *values, size_t count) {
  void *table;
  OL_TRY(dup_array(values, count, sizeof(double), &table));
  free(block->codebook);
  block->codebook = table;
  block->codebook_size = count;
  return OL_OK;
}

void ol_quant_run_clear(ol_quant_run *run) {
  if (!run) return;
  /* a decoder shape (codec.h) has block counts without block arrays */
  for (size_t i = 0; run->blocks && i < run->block_count; i++) ol_quant_block_clear(&run->blocks[i]);
  free(run->blocks);
  run->blocks = NULL;
  run->block_count = 0;
}

/* Deep copies blocks[0..count) into a fresh array. */
static ol_status copy_blocks(const ol_quant_block *blocks, size_t count, ol_quant_block **out) {
  *out = NULL;
  if (count == 0) return OL_OK;
  if (!blocks) return INVALID("quantization run: NULL blocks");
  ol_quant_block *copy = ol_xcalloc(count, sizeof(*copy));
  if (!copy) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < count; i++) {
    ol_status s = ol_quant_block_copy(&blocks[i], &copy[i]);
    if (s != OL_OK) {
      for (size_t j = 0; j < i; j++) ol_quant_block_clear(&copy[j]);
      free(copy);
      return s;
    }
  }
  *out = copy;
  return OL_OK;
}

ol_status ol_quant_run_copy(const ol_quant_run *src, ol_quant_run *dst) {
  ol_quant_run copy = {src->layout, NULL, src->block_count};
  OL_TRY(copy_blocks(src->blocks, src->block_count, &copy.blocks));
  *dst = copy;
  return OL_OK;
}

ol_status ol_quant_run_block(const ol_quant_run *run, size_t index, ol_quant_block *out) {
  if (index >= run->block_count)
    return INVALID("quantization run: block index %zu out of range (%zu blocks)", index,
                   run->block_count);
  return ol_quant_block_copy(&run->blocks[index], out);
}

ol_status ol_quant_run_set_block(ol_quant_run *run, size_t index, const ol_quant_block *block) {
  if (index >= run->block_count)
    return INVALID("quantization run: block index %zu out of range (%zu blocks)", index,
                   run->block_count);
  ol_quant_block copy;
  OL_TRY(ol_quant_block_copy(block, &copy));
  ol_quant_block_clear(&run->blocks[index]);
  run->blocks[index] = copy;
  return OL_OK;
}

ol_status ol_quant_run_set_blocks(ol_quant_run *run, const ol_quant_block *blocks, size_t count) {
  ol_quant_block *copy;
  OL_TRY(copy_blocks(blocks, count, &copy));
  ol_quant_run_clear(run);
  run->blocks = copy;
  run->block_count = count;
  return OL_OK;
}

/* ============================================================ plans */

ol_status ol_quant_plan_new(ol_quant_plan **out) {
  *out = NULL;
  ol_quant_plan *plan = ol_xcalloc(1, sizeof(*plan));
  if (!plan) return OL_OUT_OF_MEMORY;
  plan->format = OL_QUANT_INT4;
  *out = plan;
  return OL_OK;
}

static void free_runs(ol_quant_run *runs, size_t count) {
  for (size_t i = 0; i < count; i++) ol_quant_run_clear(&runs[i]);
  free(runs);
}

void ol_quant_plan_destroy(ol_quant_plan *plan) {
  if (!plan) return;
  free_runs(plan->runs, plan->run_count);
  free(plan->permutation);
  free(plan->forward);
  free(plan->inverse);
  free(plan->outliers);
  free(plan);
}

static ol_status copy_runs(const ol_quant_run *runs, size_t count, ol_quant_run **out) {
  *out = NULL;
  if (count == 0) return OL_OK;
  if (!runs) return INVALID("quantization plan: NULL runs");
  ol_quant_run *copy = ol_xcalloc(count, sizeof(*copy));
  if (!copy) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < count; i++) {
    ol_status s = ol_quant_run_copy(&runs[i], &copy[i]);
    if (s != OL_OK) {
      free_runs(copy, i);
      return s;
    }
  }
  *out = copy;
  return OL_OK;
}

ol_status ol_quant_plan_clone(const ol_quant_plan *src, ol_quant_plan **out) {
  if (!src || !out) return INVALID("ol_quant_plan_clone: NULL argument");
  ol_quant_plan *plan;
  OL_TRY(ol_quant_plan_new(&plan));
  plan->format = src->format;
  plan->transform_size = src->transform_size;
  plan->matrix_rank = src->matrix_rank;
  memcpy(plan->matrix_shape, src->matrix_shape, sizeof(plan->matrix_shape));
  /* arrays a descriptor declares but nobody supplied yet (NULL with a size,
   * ol_quant_plan_declared) stay declared */
  ol_status s = ol_quant_plan_set_runs(plan, src->runs, src->run_count);
  if (s == OL_OK) s = ol_quant_plan_set_permutation(plan, src->permutation, src->permutation ? src->permutation_size : 0);
  if (s == OL_OK)
    s = ol_quant_plan_set_transform(plan, src->transform_size, src->forward, src->forward ? src->forward_size : 0,
                                    src->inverse, src->inverse ? src->inverse_size : 0);
  if (s == OL_OK) s = ol_quant_plan_set_outliers(plan, src->outliers, src->outliers ? src->outlier_count : 0);
  if (s == OL_OK) {
    plan->permutation_size = src->permutation_size;
    plan->forward_size = src->forward_size;
    plan->inverse_size = src->inverse_size;
    plan->outlier_count = src->outlier_count;
  }
  if (s != OL_OK) {
    ol_quant_plan_destroy(plan);
    return s;
  }
  *out = plan;
  return OL_OK;
}

ol_status ol_quant_plan_run(const ol_quant_plan *plan, size_t index, ol_quant_run *out) {
  if (index >= plan->run_count)
    return INVALID("quantization plan: run index %zu out of range (%zu runs)", index,
                   plan->run_count);
  return ol_quant_run_copy(&plan->runs[index], out);
}

ol_status ol_quant_plan_set_run(ol_quant_plan *plan, size_t index, const ol_quant_run *run) {
  if (!plan || !run) return INVALID("ol_quant_plan_set_run: NULL argument");
  if (index >= plan->run_count)
    return INVALID("quantization plan: run index %zu out of range (%zu runs)", index,
                   plan->run_count);
  ol_quant_run copy;
  OL_TRY(ol_quant_run_copy(run, &copy));
  ol_quant_run_clear(&plan->runs[index]);
  plan->runs[index] = copy;
  return OL_OK;
}

ol_status ol_quant_plan_set_runs(ol_quant_plan *plan, const ol_quant_run *runs, size_t count) {
  if (!plan) return INVALID("ol_quant_plan_set_runs: plan is NULL");
  ol_quant_run *copy;
  OL_TRY(copy_runs(runs, count, &copy));
  free_runs(plan->runs, plan->run_count);
  plan->runs = copy;
  plan->run_count = count;
  return OL_OK;
}

ol_status ol_quant_plan_set_permutation(ol_quant_plan *plan, const int64_t *indices,
                                        size_t count) {
  if (!plan) return INVALID("ol_quant_plan_set_permutation: plan is NULL");
  void *copy;
  OL_TRY(dup_array(indices, count, sizeof(int64_t), &copy));
  free(plan->permutation);
  plan->permutation = copy;
  plan->permutation_size = count;
  return OL_OK;
}

ol_status ol_quant_plan_set_transform(ol_quant_plan *plan, uint32_t size, const double *forward,
                                      size_t forward_count, const double *inverse,
                                      size_t inverse_count) {
  if (!plan) return INVALID("ol_quant_plan_set_transform: plan is NULL");
  void *f, *i;
  OL_TRY(dup_array(forward, forward_count, sizeof(double), &f));
  ol_status s = dup_array(inverse, inverse_count, sizeof(double), &i);
  if (s != OL_OK) {
    free(f);
    return s;
  }
  free(plan->forward);
  free(plan->inverse);
  plan->transform_size = size;
  plan->forward = f;
  plan->forward_size = forward_count;
  plan->inverse = i;
  plan->inverse_size = inverse_count;
  return OL_OK;
}

/* Elements the plan's runs cover (saturating; ORT plans include padding). */
static uint64_t plan_element_count(const ol_quant_plan *plan) {
  uint64_t total = 0;
  for (size_t r = 0; r < plan->run_count; r++) {
    const ol_quant_run *run = &plan->runs[r];
    if (run->block_count && run->layout.count > (UINT64_MAX - total) / run->block_count) return UINT64_MAX;
    total += (uint64_t)run->layout.count * run->block_count;
  }
  return total;
}

/* The seed's separate assignments `plan.transform_size = n`, `plan.forward`,
 * `plan.inverse`, each checked when made. A new size drops matrices that no
 * longer hold size^2 values, so a stale matrix of the old size is never
 * encoded; assign the matrices after the size. */
ol_status ol_quant_plan_set_transform_size(ol_quant_plan *plan, uint32_t size) {
  if (!plan) return INVALID("ol_quant_plan_set_transform_size: plan is NULL");
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (size != 0 && row && row->ort)
    return INVALID("transform_size: the ORT MatMulNBits profile '%s' takes no transform (got %u)", row->name,
                   (unsigned)size);
  uint64_t count = plan_element_count(plan);
  if (size != 0 && count % size != 0)
    return INVALID("transform_size %u must divide the plan's %llu elements", (unsigned)size,
                   (unsigned long long)count);
  const uint64_t values = (uint64_t)size * size;
  if (plan->forward_size != values) {
    free(plan->forward);
    plan->forward = NULL;
    plan->forward_size = 0;
  }
  if (plan->inverse_size != values) {
    free(plan->inverse);
    plan->inverse = NULL;
    plan->inverse_size = 0;
  }
  plan->transform_size = size;
  return OL_OK;
}

/* Replaces *matrix with a copy of count finite values, transform_size^2 of them. */
static ol_status set_matrix(const ol_quant_plan *plan, const char *what, const double *values, size_t count,
                            double **matrix, size_t *size) {
  const uint64_t n = plan->transform_size, expected = n * n;
  if (count != expected)
    return INVALID("%s must hold transform_size^2 = %llu values (transform_size %llu), got %zu; "
                   "set transform_size first", what, (unsigned long long)expected, (unsigned long long)n, count);
  if (count && !values) return INVALID("%s: NULL values", what);
  for (size_t i = 0; i < count; i++)
    if (!isfinite(values[i])) return INVALID("%s value %zu is not finite (%g)", what, i, values[i]);
  void *copy;
  OL_TRY(dup_array(values, count, sizeof(double), &copy));
  free(*matrix);
  *matrix = copy;
  *size = count;
  return OL_OK;
}

ol_status ol_quant_plan_set_forward(ol_quant_plan *plan, const double *values, size_t count) {
  if (!plan) return INVALID("ol_quant_plan_set_forward: plan is NULL");
  return set_matrix(plan, "forward", values, count, &plan->forward, &plan->forward_size);
}

ol_status ol_quant_plan_set_inverse(ol_quant_plan *plan, const double *values, size_t count) {
  if (!plan) return INVALID("ol_quant_plan_set_inverse: plan is NULL");
  return set_matrix(plan, "inverse", values, count, &plan->inverse, &plan->inverse_size);
}

ol_status ol_quant_plan_set_outliers(ol_quant_plan *plan, const int64_t *indices, size_t count) {
  if (!plan) return INVALID("ol_quant_plan_set_outliers: plan is NULL");
  void *copy;
  OL_TRY(dup_array(indices, count, sizeof(int64_t), &copy));
  free(plan->outliers);
  plan->outliers = copy;
  plan->outlier_count = count;
  return OL_OK;
}

/* ============================================================ public accessors */

#define NEED_PLAN(plan, what) \
  if (!(plan)) return ol_error(OL_INVALID_ARGUMENT, what ": plan is NULL")

static ol_status run_at(const ol_quant_plan *plan, size_t run, ol_quant_run **out) {
  if (run >= plan->run_count)
    return INVALID("quantization plan: run index %zu out of range (%zu runs)", run, plan->run_count);
  *out = &plan->runs[run];
  return OL_OK;
}

ol_quant_format ol_quant_plan_format(const ol_quant_plan *plan) {
  return plan ? plan->format : OL_QUANT_FORMAT_COUNT;
}

ol_status ol_quant_plan_set_format(ol_quant_plan *plan, ol_quant_format format) {
  NEED_PLAN(plan, "ol_quant_plan_set_format");
  if (!ol_quant_format_valid(format)) return INVALID("Unknown quantization format: %d", (int)format);
  plan->format = format;
  return OL_OK;
}

size_t ol_quant_plan_run_count(const ol_quant_plan *plan) { return plan ? plan->run_count : 0; }

ol_status ol_quant_plan_run_layout(const ol_quant_plan *plan, size_t run, ol_quant_layout *layout,
                                   size_t *block_count) {
  NEED_PLAN(plan, "ol_quant_plan_run_layout");
  ol_quant_run *r = NULL;
  OL_TRY(run_at(plan, run, &r));
  if (layout) *layout = r->layout;
  if (block_count) *block_count = r->block_count;
  return OL_OK;
}

ol_status ol_quant_plan_block(const ol_quant_plan *plan, size_t run, size_t block, ol_quant_block *out) {
  NEED_PLAN(plan, "ol_quant_plan_block");
  if (!out) return INVALID("ol_quant_plan_block: out is NULL");
  ol_quant_run *r = NULL;
  OL_TRY(run_at(plan, run, &r));
  if (block >= r->block_count)
    return INVALID("quantization plan: block index %zu out of range (%zu blocks)", block, r->block_count);
  *out = r->blocks[block];
  return OL_OK;
}

/* Sets one parameter of every block of a run (offsetof picks which). */
static ol_status set_each(ol_quant_plan *plan, size_t run, const double *values, size_t count, size_t field,
                          const char *what) {
  NEED_PLAN(plan, "quantization plan");
  ol_quant_run *r = NULL;
  OL_TRY(run_at(plan, run, &r));
  if (count != r->block_count) return INVALID("%zu %s for %zu blocks", count, what, r->block_count);
  if (count && !values) return INVALID("quantization plan: NULL %s", what);
  for (size_t i = 0; i < count; i++) memcpy((char *)&r->blocks[i] + field, &values[i], sizeof(double));
  return OL_OK;
}

ol_status ol_quant_plan_set_scales(ol_quant_plan *plan, size_t run, const double *scales, size_t count) {
  return set_each(plan, run, scales, count, offsetof(ol_quant_block, scale), "scales");
}

ol_status ol_quant_plan_set_zero_points(ol_quant_plan *plan, size_t run, const double *zero_points,
                                        size_t count) {
  return set_each(plan, run, zero_points, count, offsetof(ol_quant_block, zero_point), "zero points");
}

void ol_quant_plan_permutation(const ol_quant_plan *plan, const int64_t **indices, size_t *count) {
  *indices = plan ? plan->permutation : NULL;
  *count = plan ? plan->permutation_size : 0;
}

void ol_quant_plan_transform(const ol_quant_plan *plan, uint32_t *size, const double **forward,
                             size_t *forward_count, const double **inverse, size_t *inverse_count) {
  *size = plan ? plan->transform_size : 0;
  *forward = plan ? plan->forward : NULL;
  *forward_count = plan ? plan->forward_size : 0;
  *inverse = plan ? plan->inverse : NULL;
  *inverse_count = plan ? plan->inverse_size : 0;
}

void ol_quant_plan_outliers(const ol_quant_plan *plan, const int64_t **indices, size_t *count) {
  *indices = plan ? plan->outliers : NULL;
  *count = plan ? plan->outlier_count : 0;
}

size_t ol_quant_plan_matrix_shape(const ol_quant_plan *plan, int64_t dims[2]) {
  if (!plan || plan->matrix_rank != 2) return 0;
  dims[0] = plan->matrix_shape[0];
  dims[1] = plan->matrix_shape[1];
  return 2;
}

ol_status ol_quant_plan_set_matrix_shape(ol_quant_plan *plan, const int64_t *dims, size_t rank) {
  NEED_PLAN(plan, "ol_quant_plan_set_matrix_shape");
  if (rank != 0 && rank != 2)
    return INVALID("matrix_shape must have 0 or 2 dimensions (got %zu)", rank);
  if (rank == 2 && (dims[0] < 0 || dims[1] < 0))
    return INVALID("matrix_shape dimensions must be non-negative");
  plan->matrix_rank = (int)rank;
  plan->matrix_shape[0] = rank ? dims[0] : 0;
  plan->matrix_shape[1] = rank ? dims[1] : 0;
  return OL_OK;
}

/* ============================================================ factories */

/* The profile row turned into a run layout and a starting block. */
static ol_status profile_start(const ol_quant_profile *row, ol_quant_layout *layout,
                               ol_quant_block *block) {
  *layout = (ol_quant_layout){0, row->method, row->bits, row->signed_codes, row->books,
                              row->entries, row->vector_size, row->base3, row->cast_type};
  *block = (ol_quant_block){1.0, row->zero_point, 0.0, NULL, 0};
  uint32_t count;
  const double *table = ol_quant_table_values(row->table, &count);
  return table ? ol_quant_block_set_codebook(block, table, count) : OL_OK;
}

/* Fills plan->runs with `full` blocks of block_size then one tail block. */
static ol_status emit_runs(ol_quant_plan *plan, const ol_quant_layout *layout,
                           const ol_quant_block *block, uint64_t count, uint64_t block_size) {
  ol_quant_run runs[2];
  size_t run_count = 0;
  uint64_t full = count / block_size, tail = count % block_size;
  ol_status s = OL_OK;
  if (full > SIZE_MAX / sizeof(ol_quant_block))
    return ol_error(OL_OUT_OF_MEMORY, "quantization plan: %llu blocks", (unsigned long long)full);
  if (full > 0) {
    ol_quant_run *run = &runs[run_count++];
    run->layout = *layout;
    run->layout.count = (uint32_t)block_size;
    run->block_count = (size_t)full;
    run->blocks = ol_xcalloc((size_t)full, sizeof(ol_quant_block));
    if (!run->blocks) return OL_OUT_OF_MEMORY;
    for (size_t i = 0; i < run->block_count && s == OL_OK; i++)
      s = ol_quant_block_copy(block, &run->blocks[i]);
  }
  if (s == OL_OK && tail > 0) {
    ol_quant_run *run = &runs[run_count++];
    run->layout = *layout;
    run->layout.count = (uint32_t)tail;
    run->block_count = 1;
    run->blocks = ol_xcalloc(1, sizeof(ol_quant_block));
    s = run->blocks ? ol_quant_block_copy(block, &run->blocks[0]) : OL_OUT_OF_MEMORY;
  }
  if (s == OL_OK) {
    plan->runs = ol_xcalloc(run_count ? run_count : 1, sizeof(ol_quant_run));
    if (!plan->runs) s = OL_OUT_OF_MEMORY;
  }
  if (s != OL_OK) {
    for (size_t i = 0; i < run_count; i++) ol_quant_run_clear(&runs[i]);
    return s;
  }
  memcpy(plan->runs, runs, run_count * sizeof(ol_quant_run));
  plan->run_count = run_count;
  return OL_OK;
}

static ol_status make_plan(ol_quant_format format, uint64_t count, uint64_t block_size,
                           ol_quant_plan **out) {
  if (!out) return INVALID("quantization plan: out is NULL");
  *out = NULL;
  const ol_quant_profile *row = ol_quant_profile_info(format);
  if (!row) return INVALID("Unknown quantization format: %d", (int)format);
  if (block_size == 0 || block_size > UINT32_MAX)
    return INVALID("Invalid quantization block size %llu (must be in [1, UINT32_MAX])",
                   (unsigned long long)block_size);
  ol_quant_layout layout;
  ol_quant_block block;
  OL_TRY(profile_start(row, &layout, &block));
  ol_quant_plan *plan;
  ol_status s = ol_quant_plan_new(&plan);
  if (s == OL_OK) {
    plan->format = format;
    s = emit_runs(plan, &layout, &block, count, block_size);
    if (s != OL_OK) ol_quant_plan_destroy(plan);
  }
  ol_quant_block_clear(&block);
  if (s == OL_OK) *out = plan;
  return s;
}

ol_status ol_quant_make_plan(ol_quant_format format, uint64_t count, uint64_t block_size,
                             ol_quant_plan **out) {
  const ol_quant_profile *row = ol_quant_profile_info(format);
  if (row && row->ort)
    return INVALID("Use ol_quant_make_matmul_nbits_plan with K and N for the ORT MatMulNBits "
                   "profile '%s'", row->name);
  return make_plan(format, count, block_size, out);
}

ol_status ol_quant_make_matmul_nbits_plan(ol_quant_format format, uint64_t k, uint64_t n,
                                          uint64_t block_size, ol_quant_plan **out) {
  if (!out) return INVALID("ol_quant_make_matmul_nbits_plan: out is NULL");
  *out = NULL;
  const ol_quant_profile *row = ol_quant_profile_info(format);
  if (!row || !row->ort)
    return INVALID("Expected an ORT MatMulNBits quantization format, got %d", (int)format);
  if (k == 0 || n == 0 || k > INT64_MAX || n > INT64_MAX)
    return INVALID("ORT MatMulNBits requires positive K and N dimensions (got K=%llu N=%llu)",
                   (unsigned long long)k, (unsigned long long)n);
  if (block_size < 16 || block_size > UINT32_MAX || (block_size & (block_size - 1)) != 0)
    return INVALID("ORT MatMulNBits block_size must be a power of two in [16, UINT32_MAX] "
                   "(got %llu)", (unsigned long long)block_size);
  uint64_t groups = ceil_div(k, block_size);
  if (groups > UINT64_MAX / n || n * groups > UINT64_MAX / block_size)
    return INVALID("ORT MatMulNBits plan size overflow");
  /* matmulnbits row layout, then the ORT width and midpoint zero point. */
  OL_TRY(make_plan(OL_QUANT_MATMULNBITS, n * groups * block_size, block_size, out));
  ol_quant_plan *plan = *out;
  plan->format = format;
  plan->matrix_rank = 2;
  plan->matrix_shape[0] = (int64_t)k;
  plan->matrix_shape[1] = (int64_t)n;
  plan->runs[0].layout.bits = row->bits;
  for (size_t i = 0; i < plan->runs[0].block_count; i++)
    plan->runs[0].blocks[i].zero_point = row->zero_point;
  return OL_OK;
}

/* ============================================================ geometry */

size_t ol_quant_float_bytes(ol_dtype dtype) {
  switch (dtype) {
    case OL_DTYPE_DOUBLE: return 8;
    case OL_DTYPE_FLOAT: return 4;
    case OL_DTYPE_FLOAT16:
    case OL_DTYPE_BFLOAT16: return 2;
    default: return 0;
  }
}

uint64_t ol_quant_layout_code_count(const ol_quant_layout *l) {
  if (l->method == OL_QUANT_CODEBOOK)
    return l->vector_size ? ceil_div(l->count, l->vector_size) * l->books : 0;
  return l->count;
}

uint64_t ol_quant_layout_code_bytes(const ol_quant_layout *l) {
  if (l->method == OL_QUANT_CAST) return (uint64_t)l->count * ol_quant_float_bytes(l->cast_type);
  if (l->base3) return ceil_div(ol_quant_layout_code_count(l), 5);
  return ceil_div(ol_quant_layout_code_count(l) * l->bits, 8);
}

uint64_t ol_quant_layout_table_size(const ol_quant_layout *l) {
  if (l->method != OL_QUANT_CODEBOOK) return 0;
  return (uint64_t)l->books * l->entries * l->vector_size;
}

bool ol_quant_layout_sizes_fit(const ol_quant_layout *l) {
  if (l->method != OL_QUANT_CODEBOOK) return true;
  if (l->vector_size == 0) return true; /* rejected by validation, sizes are 0 */
  uint64_t vectors = ceil_div(l->count, l->vector_size);
  const uint64_t limit = UINT64_MAX / 64; /* room for x bits / x 8 bytes */
  return (vectors == 0 || l->books <= limit / vectors) &&
         ((uint64_t)l->books * l->entries <= limit / l->vector_size);
}

void ol_quant_layout_header(const ol_quant_layout *l, int64_t h[OL_QUANT_HEADER_SIZE]) {
  h[0] = l->count;
  h[1] = l->method;
  h[2] = l->bits;
  h[3] = l->signed_codes;
  h[4] = l->books;
  h[5] = l->entries;
  h[6] = l->vector_size;
  h[7] = l->base3;
  h[8] = l->cast_type;
}

ol_status ol_quant_layout_from_header(const int64_t h[OL_QUANT_HEADER_SIZE], ol_quant_layout *out) {
  for (int i = 0; i < OL_QUANT_HEADER_SIZE; i++)
    if (h[i] < 0 || h[i] > (int64_t)UINT32_MAX)
      return INVALID("Quantization block parameter %d (%lld) exceeds supported bounds", i,
                     (long long)h[i]);
  if (h[3] > 1 || h[7] > 1) return INVALID("Invalid quantization boolean parameter");
  if (h[1] >= OL_QUANT_METHOD_COUNT) return INVALID("Unknown quantization method %lld", (long long)h[1]);
  *out = (ol_quant_layout){(uint32_t)h[0], (ol_quant_method)h[1], (uint32_t)h[2], h[3] != 0,
                           (uint32_t)h[4], (uint32_t)h[5], (uint32_t)h[6], h[7] != 0,
                           (ol_dtype)h[8]};
  return OL_OK;
}

/* ============================================================ validation */

ol_status ol_quant_validate_block(const ol_quant_layout *l, const ol_quant_block *b) {
  if ((int)l->method < 0 || l->method >= OL_QUANT_METHOD_COUNT)
    return INVALID("Unknown quantization method %d", (int)l->method);
  if (!isfinite(b->scale) || !(b->scale > 0))
    return INVALID("Quantization scale must be finite and positive (got %g)", b->scale);
  if (!isfinite(b->zero_point)) return INVALID("Nonfinite quantization zero point");
  if (!isfinite(b->offset)) return INVALID("Nonfinite quantization offset");
  if (l->method != OL_QUANT_AFFINE && b->offset != 0)
    return INVALID("Only affine quantization accepts an offset (got %g for %s)", b->offset,
                   ol_quant_method_name(l->method));
  if (l->bits < 1 || l->bits > 16)
    return INVALID("Quantization index width must be between 1 and 16 (got %u)", l->bits);
  if (!ol_quant_float_bytes(l->cast_type))
    return INVALID("Quantization cast_type must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got %d)",
                   (int)l->cast_type);
  if (!ol_quant_layout_sizes_fit(l)) return INVALID("Quantization size overflow");
  if (l->method == OL_QUANT_CODEBOOK) {
    if (l->books == 0 || l->entries == 0 || l->vector_size == 0 ||
        l->entries > (1u << l->bits))
      return INVALID("Invalid codebook dimensions or index width (books %u, entries %u, "
                     "vector_size %u, bits %u)", l->books, l->entries, l->vector_size, l->bits);
    uint64_t size = ol_quant_layout_table_size(l);
    if (b->codebook_size != size)
      return INVALID("Supplied codebook must have books * entries * vector_size = %llu values "
                     "(got %zu)", (unsigned long long)size, b->codebook_size);
    for (size_t i = 0; i < b->codebook_size; i++)
      if (!isfinite(b->codebook[i])) return INVALID("Codebooks must contain finite values");
    if (b->zero_point != 0) return INVALID("Codebook zero_point must be zero (got %g)", b->zero_point);
  } else if (b->codebook_size != 0) {
    return INVALID("Only codebook quantization accepts a table (%s block has %zu values)",
                   ol_quant_method_name(l->method), b->codebook_size);
  }
  if (l->method == OL_QUANT_AFFINE) {
    double lo = l->signed_codes ? -ldexp(1.0, (int)l->bits - 1) : 0;
    double hi = lo + ldexp(1.0, (int)l->bits) - 1;
    if (trunc(b->zero_point) != b->zero_point || b->zero_point < lo || b->zero_point > hi)
      return INVALID("Affine zero point must be an integer in the code range [%g, %g] (got %g)",
                     lo, hi, b->zero_point);
  }
  if (l->base3 && !(l->method == OL_QUANT_CODEBOOK && l->entries == 3 && l->books == 1 &&
                    l->vector_size == 1))
    return INVALID("Base-3 packing requires a single three-entry scalar codebook");
  if (l->method == OL_QUANT_CAST && b->zero_point != 0)
    return INVALID("Cast zero_point must be zero (got %g)", b->zero_point);
  return OL_OK;
}

/* Indices must be in [0, count) and unique; seen is count flags. */
static ol_status check_indices(const int64_t *idx, size_t n, uint64_t count, const char *what) {
  if (n == 0) return OL_OK;
  unsigned char *seen = ol_xcalloc((size_t)count, 1);
  if (!seen) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (size_t i = 0; i < n && s == OL_OK; i++) {
    if (idx[i] < 0 || (uint64_t)idx[i] >= count || seen[idx[i]])
      s = INVALID("Invalid or duplicate %s index %lld at position %zu", what, (long long)idx[i], i);
    else
      seen[idx[i]] = 1;
  }
  free(seen);
  return s;
}

ol_status ol_quant_plan_validate(const ol_quant_plan *plan, uint64_t count) {
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (!row) return INVALID("Unknown quantization format: %d", (int)plan->format);
  if (plan->matrix_rank != 0)
    return INVALID("Only ORT MatMulNBits profiles accept a matrix_shape");
  uint64_t consumed = 0;
  for (size_t r = 0; r < plan->run_count; r++) {
    const ol_quant_run *run = &plan->runs[r];
    if (run->block_count == 0 || run->layout.count == 0)
      return INVALID("Quantization runs must contain nonempty blocks (run %zu)", r);
    if (run->layout.count > (count - consumed) / run->block_count)
      return INVALID("Quantization blocks exceed tensor size (%llu elements, run %zu)",
                     (unsigned long long)count, r);
    for (size_t b = 0; b < run->block_count; b++) {
      ol_status s = ol_quant_validate_block(&run->layout, &run->blocks[b]);
      if (s != OL_OK) return ol_error_wrap(s, "run %zu block %zu", r, b);
    }
    consumed += (uint64_t)run->layout.count * run->block_count;
  }
  if (consumed != count)
    return INVALID("Quantization blocks must cover the tensor exactly (%llu of %llu elements)",
                   (unsigned long long)consumed, (unsigned long long)count);
  if (plan->permutation_size != 0 && plan->permutation_size != count)
    return INVALID("Quantization permutation must cover the tensor (%zu of %llu indices)",
                   plan->permutation_size, (unsigned long long)count);
  OL_TRY(check_indices(plan->permutation, plan->permutation_size, count, "permutation"));
  OL_TRY(check_indices(plan->outliers, plan->outlier_count, count, "outlier"));
  uint64_t n = plan->transform_size;
  if (plan->forward_size != n * n || plan->inverse_size != n * n || (n != 0 && count % n != 0))
    return INVALID("Transform matrices must be square (%llu x %llu) and divide the tensor size "
                   "(forward %zu, inverse %zu values, %llu elements)", (unsigned long long)n,
                   (unsigned long long)n, plan->forward_size, plan->inverse_size,
                   (unsigned long long)count);
  for (size_t i = 0; i < plan->forward_size; i++)
    if (!isfinite(plan->forward[i])) return INVALID("Nonfinite forward transform");
  for (size_t i = 0; i < plan->inverse_size; i++)
    if (!isfinite(plan->inverse[i])) return INVALID("Nonfinite inverse transform");
  for (uint64_t i = 0; i < n; i++)
    for (uint64_t j = 0; j < n; j++) {
      double sum = 0;
      for (uint64_t k = 0; k < n; k++) sum += plan->forward[i * n + k] * plan->inverse[k * n + j];
      if (!(fabs(sum - (i == j ? 1.0 : 0.0)) <= 1e-6))
        return INVALID("Quantization transforms must be inverse matrices (forward x inverse "
                       "[%llu][%llu] = %.9g)", (unsigned long long)i, (unsigned long long)j, sum);
    }
  if (row->needs_transform && n == 0)
    return INVALID("The profile '%s' requires explicit forward/inverse transforms", row->name);
  return OL_OK;
}

ol_status ol_quant_plan_payload_size(const ol_quant_plan *plan, uint64_t *size) {
  uint64_t total = 1 + 8 * ((uint64_t)plan->permutation_size + plan->forward_size +
                            plan->inverse_size + 2 * (uint64_t)plan->outlier_count);
  for (size_t r = 0; r < plan->run_count; r++) {
    const ol_quant_layout *l = &plan->runs[r].layout;
    uint64_t per_block = 24 + 8 * ol_quant_layout_table_size(l) + ol_quant_layout_code_bytes(l);
    if (plan->runs[r].block_count > (UINT64_MAX - total) / per_block)
      return INVALID("Quantization size overflow");
    total += per_block * plan->runs[r].block_count;
  }
  *size = total;
  return OL_OK;
}
