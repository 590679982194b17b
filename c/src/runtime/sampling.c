/* The token sampler of generation (see runtime/sampling.h). */
#include <math.h>

#include "core/dtype.h"
#include "runtime/sampling.h"
#include "simd/math.h"

/* ------------------------------------------------------------ PRNG */

/* splitmix64: 64-bit state, integer operations only. */
static uint64_t rng_next(uint64_t *state) {
  uint64_t z = (*state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits (exact conversion and scaling). */
static double rng_uniform(uint64_t *state) { return (double)(rng_next(state) >> 11) * 0x1p-53; }

/* ------------------------------------------------------------ logits */

bool ol_logits_dtype_ok(ol_dtype dt) { return ol_dtype_is_arith_float(dt); }

/* Logit i of a row of an ol_logits_dtype_ok type (the dtype table's to_double). */
static double logit_at(ol_dtype dt, const void *row, int64_t i) { return ol_dtype_info(dt)->to_double(row, i); }

/* Greedy: the largest non-NaN logit, lowest index on ties; 0 if all NaN. */
static int64_t argmax_row(ol_dtype dt, const void *row, int64_t vocab) {
  int64_t best = -1;
  double best_x = 0;
  for (int64_t v = 0; v < vocab; v++) {
    double x = logit_at(dt, row, v);
    if (isnan(x)) continue;
    if (best < 0 || x > best_x) {
      best = v;
      best_x = x;
    }
  }
  return best < 0 ? 0 : best;
}

/* Samples softmax(logits / T). Draws one uniform number whatever the logits. */
static int64_t sample_row(ol_dtype dt, const void *row, int64_t vocab, double temperature, uint64_t *rng,
                          double *weights) {
  double u = rng_uniform(rng);
  int64_t best = argmax_row(dt, row, vocab);
  double m = logit_at(dt, row, best);
  /* Degenerate rows (all NaN, all -inf, or a +inf logit): greedy. */
  if (isnan(m) || isinf(m)) return best;
  double sum = 0;
  for (int64_t v = 0; v < vocab; v++) {
    double x = logit_at(dt, row, v);
    double w = isnan(x) ? 0.0 : ol_exp((x - m) / temperature);
    weights[v] = w;
    sum += w;
  }
  /* sum >= 1 (the maximum contributes exp(0)), finite (every weight <= 1). */
  double target = u * sum, acc = 0;
  int64_t last = best;
  for (int64_t v = 0; v < vocab; v++) {
    if (weights[v] <= 0) continue;
    acc += weights[v];
    last = v;
    if (target < acc) return v;
  }
  return last;
}

int64_t ol_sample_token(ol_dtype dtype, const void *row, int64_t vocab, double temperature, uint64_t *rng,
                        double *weights) {
  if (temperature == 0.0 || !rng || !weights) return argmax_row(dtype, row, vocab);
  return sample_row(dtype, row, vocab, temperature, rng, weights);
}
