/* Quantization plans: how a flattened tensor is cut into blocks and which
 * layout and numerical parameters each block uses.
 *
 * A plan holds runs; a run has ONE layout shared by its blocks plus one
 * parameter set per block (scale, zero point, offset, codebook). The factory
 * emits one run of full blocks and, if needed, a tail run for the shorter last
 * block (no runs for count 0). Optional steps: a permutation (gather
 * source[permutation[i]] into position i), a forward/inverse transform pair
 * applied to consecutive row vectors, and exact outliers.
 *
 * Copy semantics (seed: "plan.run(i) returns one run copy; plan.set_run(i, run)
 * replaces it"): ol_quant_plan_run / ol_quant_run_block hand out deep copies
 * the caller clears; the set functions copy their argument in. Nothing hands
 * out a pointer into the plan's arrays for mutation. Scalar layout fields and
 * plan.format / plan.transform_size may be written directly. */
#ifndef OL_QUANT_PLAN_H
#define OL_QUANT_PLAN_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxlight.h"
#include "quant/catalogue.h"

#define OL_QUANT_DEFAULT_BLOCK_SIZE 128
#define OL_QUANT_HEADER_SIZE 9 /* INT64 entries of a portable block header */

/* Shared type parameters of a run (the 9-element wire header). */
typedef struct ol_quant_layout {
  uint32_t count; /* scalar elements per block */
  ol_quant_method method;
  uint32_t bits; /* code / index width 1..16 */
  bool signed_codes;
  uint32_t books;
  uint32_t entries;
  uint32_t vector_size;
  bool base3;
  ol_dtype cast_type; /* FLOAT, DOUBLE, FLOAT16 or BFLOAT16 for every method */
} ol_quant_layout;

/* Independent numerical parameters of one block. */
typedef struct ol_quant_block {
  double scale;
  double zero_point;
  double offset;
  double *codebook; /* owned; books * entries * vector_size values */
  size_t codebook_size;
} ol_quant_block;

typedef struct ol_quant_run {
  ol_quant_layout layout;
  ol_quant_block *blocks; /* owned */
  size_t block_count;
} ol_quant_run;

typedef struct ol_quant_plan {
  ol_quant_format format;
  ol_quant_run *runs; /* owned */
  size_t run_count;
  int64_t *permutation; /* owned; empty = identity */
  size_t permutation_size;
  uint32_t transform_size; /* 0 disables the transform */
  double *forward;         /* owned, row-major, transform_size^2 values */
  size_t forward_size;
  double *inverse;
  size_t inverse_size;
  int64_t *outliers; /* owned; flattened source indices */
  size_t outlier_count;
  int matrix_rank;         /* 2 for ORT profiles, else 0 */
  int64_t matrix_shape[2]; /* [K, N] for ORT profiles */
} ol_quant_plan;

/* ---- factories -------------------------------------------------------- */

/* Portable profiles: count elements in blocks of block_size (use
 * OL_QUANT_DEFAULT_BLOCK_SIZE for the seed's default). ORT profiles are
 * rejected here (use ol_quant_make_matmul_nbits_plan). */
ol_status ol_quant_make_plan(ol_quant_format format, uint64_t count, uint64_t block_size,
                             ol_quant_plan **out);
/* ORT MatMulNBits profiles: N * ceil(K/block_size) blocks of block_size
 * (padding included), column-major then K-group; block_size a power of two
 * in [16, UINT32_MAX]. */
ol_status ol_quant_make_matmul_nbits_plan(ol_quant_format format, uint64_t k, uint64_t n,
                                          uint64_t block_size, ol_quant_plan **out);
/* An empty plan (format int4, no runs). */
ol_status ol_quant_plan_new(ol_quant_plan **out);
ol_status ol_quant_plan_clone(const ol_quant_plan *src, ol_quant_plan **out);
void ol_quant_plan_destroy(ol_quant_plan *plan);

/* ---- copies in and out -------------------------------------------------- */

/* Deep copy of run i into *out (caller calls ol_quant_run_clear). */
ol_status ol_quant_plan_run(const ol_quant_plan *plan, size_t index, ol_quant_run *out);
/* Replaces run i with a deep copy of run. */
ol_status ol_quant_plan_set_run(ol_quant_plan *plan, size_t index, const ol_quant_run *run);
/* Replaces all runs with deep copies (count may be 0). */
ol_status ol_quant_plan_set_runs(ol_quant_plan *plan, const ol_quant_run *runs, size_t count);

ol_status ol_quant_plan_set_permutation(ol_quant_plan *plan, const int64_t *indices,
                                        size_t count);
/* Sets transform_size and copies both matrices (count = values each). */
ol_status ol_quant_plan_set_transform(ol_quant_plan *plan, uint32_t size, const double *forward,
                                      size_t forward_count, const double *inverse,
                                      size_t inverse_count);
ol_status ol_quant_plan_set_outliers(ol_quant_plan *plan, const int64_t *indices, size_t count);

ol_status ol_quant_run_copy(const ol_quant_run *src, ol_quant_run *dst);
void ol_quant_run_clear(ol_quant_run *run);
ol_status ol_quant_run_block(const ol_quant_run *run, size_t index, ol_quant_block *out);
ol_status ol_quant_run_set_block(ol_quant_run *run, size_t index, const ol_quant_block *block);
/* Replaces the blocks with copies (the seed's `run.blocks = [...]`). */
ol_status ol_quant_run_set_blocks(ol_quant_run *run, const ol_quant_block *blocks, size_t count);

ol_status ol_quant_block_copy(const ol_quant_block *src, ol_quant_block *dst);
void ol_quant_block_clear(ol_quant_block *block);
ol_status ol_quant_block_set_codebook(ol_quant_block *block, const double *values, size_t count);

/* ---- geometry and validation ------------------------------------------ */

/* Codes per block: ceil(count / vector_size) * books for codebooks, else count. */
uint64_t ol_quant_layout_code_count(const ol_quant_layout *layout);
/* Packed code bytes per block; 0 with an error for invalid cast types. */
uint64_t ol_quant_layout_code_bytes(const ol_quant_layout *layout);
/* books * entries * vector_size for codebooks, else 0. */
uint64_t ol_quant_layout_table_size(const ol_quant_layout *layout);
/* False when code count, code bytes or table size would overflow 64 bits
 * (the three functions above are only meaningful when this holds). */
bool ol_quant_layout_sizes_fit(const ol_quant_layout *layout);
/* The 9-element wire header. */
void ol_quant_layout_header(const ol_quant_layout *layout, int64_t header[OL_QUANT_HEADER_SIZE]);
/* Parses and checks a wire header (bounds, booleans, method, bits, base3). */
ol_status ol_quant_layout_from_header(const int64_t header[OL_QUANT_HEADER_SIZE],
                                      ol_quant_layout *out);
/* Bytes of a floating dtype accepted by the codecs (FLOAT/DOUBLE/FLOAT16/
 * BFLOAT16), 0 otherwise. */
size_t ol_quant_float_bytes(ol_dtype dtype);

/* Checks one block's parameters against its layout. */
ol_status ol_quant_validate_block(const ol_quant_layout *layout, const ol_quant_block *block);
/* Checks a portable plan for a tensor of count elements: exact coverage,
 * every block, permutation, outliers, finite inverse transform pair. */
ol_status ol_quant_plan_validate(const ol_quant_plan *plan, uint64_t count);
/* Exact payload size of a portable plan's self-contained raw_data. */
ol_status ol_quant_plan_payload_size(const ol_quant_plan *plan, uint64_t *size);

#endif
