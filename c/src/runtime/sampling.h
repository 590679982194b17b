/* Picking the next token from one row of logits (the token loop's sampler,
 * runtime/generator.c). Temperature 0 is greedy: the largest non-NaN logit,
 * lowest index on ties, 0 when every logit is NaN. Temperature > 0 samples
 * softmax(logits / T) computed in double with the project's own ol_exp,
 * drawing one uniform number from a splitmix64 generator per call. Only
 * integer operations, IEEE-exact arithmetic and ol_exp are involved, so a
 * seed gives the same tokens natively and in wasm. Logits of every supported
 * dtype (FLOAT, DOUBLE, FLOAT16, BFLOAT16) are widened exactly to double. */
#ifndef OL_RUNTIME_SAMPLING_H
#define OL_RUNTIME_SAMPLING_H
#include <stdbool.h>
#include <stdint.h>

#include "onnxlight.h"

/* True for the logits dtypes the sampler reads. */
bool ol_logits_dtype_ok(ol_dtype dtype);

/* The next token from row[0..vocab). temperature 0: greedy (rng and weights
 * unused, may be NULL). Otherwise *rng (splitmix64 state) advances by one
 * draw and weights is scratch of vocab doubles. */
int64_t ol_sample_token(ol_dtype dtype, const void *row, int64_t vocab, double temperature, uint64_t *rng,
                        double *weights);

#endif
