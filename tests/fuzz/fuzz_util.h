/* Shared pieces of the libFuzzer harnesses (tests/fuzz/fuzz_*.c): bounds that
 * keep one input cheap, so that a hang or an out-of-memory reported by
 * libFuzzer is a finding and not a legitimately huge model. */
#ifndef OL_FUZZ_UTIL_H
#define OL_FUZZ_UTIL_H
#include <stddef.h>
#include <stdint.h>

#include "onnxlight.h"

/* Tensor payloads a session may hold at once (its allocator refuses more:
 * the run fails with OL_OUT_OF_MEMORY, as it would on a small device). */
#define FUZZ_BUDGET_BYTES ((size_t)128 << 20)
/* The most elements of one generated feed; larger declared inputs skip the run. */
#define FUZZ_MAX_FEED_ELEMENTS 4096
/* A run still going after this is cancelled (Loop with a huge trip count):
 * cancellation between nodes is the runtime's answer to long models; a
 * single kernel that ignores it past libFuzzer's -timeout is a finding. */
#define FUZZ_RUN_MILLISECONDS 2000

/* The budget allocator (created once, never destroyed). */
ol_allocator *fuzz_allocator(void);

/* Cancels `completion` if the run is still going after FUZZ_RUN_MILLISECONDS;
 * fuzz_watch_end before the completion is destroyed. */
void fuzz_watch_begin(ol_completion *completion);
void fuzz_watch_end(void);

/* Deterministic bytes for feeds: xorshift seeded from the input. */
typedef struct fuzz_rng {
  uint64_t state;
} fuzz_rng;
fuzz_rng fuzz_rng_from(const uint8_t *data, size_t size);
uint64_t fuzz_next(fuzz_rng *rng);

/* Runs the session once with generated feeds (zeros or small values):
 * returns without running when an input is not a tensor or too large. */
void fuzz_run_session(ol_session *session, fuzz_rng *rng);

#endif
