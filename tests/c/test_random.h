/* Seeded test data shared by the kernel tests: xorshift32 integers, floats
 * of mixed magnitude and sign (so that another summation order would round
 * differently) and the bits of a float. Each test file gets its own stream. */
#ifndef OL_TESTS_RANDOM_H
#define OL_TESTS_RANDOM_H
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "float_bits.h"

#ifndef TEST_RANDOM_SEED
#define TEST_RANDOM_SEED 2463534242u
#endif
#ifndef TEST_RANDOM_EXPONENTS
#define TEST_RANDOM_EXPONENTS 9 /* rnd() spans 2^-5 .. 2^4 */
#endif

static uint32_t rng_state = TEST_RANDOM_SEED;
static inline uint32_t next_u32(void) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 17;
  rng_state ^= rng_state << 5;
  return rng_state;
}
static inline float rnd(void) {
  float m = (float)(next_u32() & 0xFFFFFF) / 16777216.0f - 0.5f;
  int e = (int)(next_u32() % TEST_RANDOM_EXPONENTS) - TEST_RANDOM_EXPONENTS / 2;
  return ldexpf(m, e);
}

#endif
