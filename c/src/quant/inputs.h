/* The numerical inputs of ai.rt::Quantize (scales, zero_points, offsets,
 * codebooks, permutation, forward, inverse, outliers) applied to the plan a
 * destination descriptor declares. Shared by the Quantize kernel and by shared
 * parameter sets (quant/shared.h), which take the same names, shapes and
 * dtypes. */
#ifndef OL_QUANT_INPUTS_H
#define OL_QUANT_INPUTS_H
#include "core/value.h"
#include "quant/plan.h"

typedef enum ol_quant_input {
  OL_QUANT_IN_X = 0,
  OL_QUANT_IN_SCALES,
  OL_QUANT_IN_ZERO_POINTS,
  OL_QUANT_IN_OFFSETS,
  OL_QUANT_IN_CODEBOOKS,
  OL_QUANT_IN_PERMUTATION,
  OL_QUANT_IN_FORWARD,
  OL_QUANT_IN_INVERSE,
  OL_QUANT_IN_OUTLIERS,
  OL_QUANT_IN_COUNT
} ol_quant_input;

/* "X", "scales", ... in input order (also the shared parameter role keys). */
extern const char *const ol_quant_input_names[OL_QUANT_IN_COUNT];

/* Parameter tensor of a floating dtype as doubles (malloc'd). */
ol_status ol_quant_read_param(const ol_tensor *t, ol_quant_input input, double **out, uint64_t *count);

/* scales / zero_points / offsets: a scalar or one value per block (blocks in
 * run order), written into every block of plan. */
ol_status ol_quant_apply_per_block(ol_quant_plan *plan, const ol_tensor *t, ol_quant_input input,
                                   size_t blocks);

/* Applies inputs[1..8] (NULL = absent; inputs[0] ignored) to a plan from
 * ol_quant_plan_from_type: parameters override the defaults, codebooks are all
 * blocks' tables concatenated, and permutation / outliers / forward / inverse
 * must have exactly the declared sizes (missing or empty when none declared).
 * Scales are not calibrated here. */
ol_status ol_quant_apply_inputs(ol_quant_plan *plan, const ol_tensor *const inputs[OL_QUANT_IN_COUNT]);

#endif
