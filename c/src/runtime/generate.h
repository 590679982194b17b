/* The token picker shared by ol_generate and the JS token loop (through the
 * wasm ABI), so both draw the same tokens from the same seed. */
#ifndef OL_RUNTIME_GENERATE_H
#define OL_RUNTIME_GENERATE_H
#include <stdint.h>

#include "onnxlight.h"

/* Greedy (largest non-NaN logit, lowest index on ties) when temperature is 0;
 * otherwise samples softmax(row / temperature) with one splitmix64 draw from
 * *rng_state (advanced). weights: vocab doubles of scratch. */
int64_t ol_generate_pick_token(ol_dtype dtype, const void *row, int64_t vocab, double temperature,
                               uint64_t *rng_state, double *weights);

#endif
