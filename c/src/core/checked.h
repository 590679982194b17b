/* Checked arithmetic for sizes and shapes. Every byte count, element count or
 * output dimension computed from model or caller data goes through these, so
 * that an overflow becomes an error naming what was asked for instead of a
 * short buffer (in wasm size_t is 32 bits: 4 GiB wraps to 0). Each returns
 * false on overflow and leaves *out unspecified. The limits themselves are
 * documented in docs/limits.md. */
#ifndef OL_CORE_CHECKED_H
#define OL_CORE_CHECKED_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest element count of a tensor: a byte offset of any element type
 * (up to 16 bytes) stays below INT64_MAX. */
#define OL_MAX_ELEMENTS (INT64_MAX / 16)

static inline bool ol_mul_size(size_t a, size_t b, size_t *out) { return !__builtin_mul_overflow(a, b, out); }
static inline bool ol_add_size(size_t a, size_t b, size_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool ol_i64_add(int64_t a, int64_t b, int64_t *out) { return !__builtin_add_overflow(a, b, out); }
static inline bool ol_i64_sub(int64_t a, int64_t b, int64_t *out) { return !__builtin_sub_overflow(a, b, out); }
static inline bool ol_i64_mul(int64_t a, int64_t b, int64_t *out) { return !__builtin_mul_overflow(a, b, out); }

/* The element count of dims[0..rank): false when a dim is negative or the
 * count exceeds OL_MAX_ELEMENTS. */
static inline bool ol_shape_count_checked(int rank, const int64_t *dims, int64_t *out) {
  int64_t n = 1;
  for (int i = 0; i < rank; i++) {
    if (dims[i] < 0 || !ol_i64_mul(n, dims[i], &n) || n > OL_MAX_ELEMENTS) return false;
  }
  *out = n;
  return true;
}

/* A size_t for a non-negative int64: false when it does not fit (wasm32). */
static inline bool ol_size_from_i64(int64_t v, size_t *out) {
  if (v < 0 || (uint64_t)v > SIZE_MAX) return false;
  *out = (size_t)v;
  return true;
}

/* Bytes of count elements of `size` bytes each, SIZE_MAX when they do not
 * fit in size_t (or count is negative): an allocation of that fails. */
static inline size_t ol_bytes_of(int64_t count, size_t size) {
  size_t n, bytes;
  return ol_size_from_i64(count, &n) && ol_mul_size(n, size, &bytes) ? bytes : SIZE_MAX;
}

/* v clamped to [lo, hi], NaN as 0: C leaves converting a NaN or an
 * out-of-range double to an integer undefined (and x86 and wasm differ). */
static inline double ol_clamp_for_int(double v, double lo, double hi) {
  return v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v;
}
/* v truncated toward zero and saturated to int64 / uint64, NaN as 0 (2^63
 * and 2^64 are the first doubles past each range). */
static inline int64_t ol_double_to_int64(double v) {
  return v >= 0x1p63 ? INT64_MAX : (int64_t)ol_clamp_for_int(v, -0x1p63, 0x1p63);
}
static inline uint64_t ol_double_to_uint64(double v) {
  return v >= 0x1p64 ? UINT64_MAX : (uint64_t)ol_clamp_for_int(v, 0, 0x1p64);
}

#endif
