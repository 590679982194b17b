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

/* ol_quant_layout, ol_quant_block and ol_quant_run are public (onnxlight.h):
 * internally a plan owns its runs' blocks and their codebooks (malloc). */

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

/* An empty plan (format int4, no runs). */
ol_status ol_quant_plan_new(ol_quant_plan **out);

/* ---- copies in and out -------------------------------------------------- */

/* Deep copy of run i into *out (caller calls ol_quant_run_clear). */
ol_status ol_quant_plan_run(const ol_quant_plan *plan, size_t index, ol_quant_run *out);
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
