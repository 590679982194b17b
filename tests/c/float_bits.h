/* The bits of a float and back, for tests that compare results bit for bit. */
#ifndef OL_TESTS_FLOAT_BITS_H
#define OL_TESTS_FLOAT_BITS_H
#include <stdint.h>
#include <string.h>

static inline uint32_t fbits(float f) {
  uint32_t u;
  memcpy(&u, &f, 4);
  return u;
}
static inline float bitsf(uint32_t u) {
  float f;
  memcpy(&f, &u, 4);
  return f;
}

#endif
