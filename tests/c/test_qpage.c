/* Paged-cache codes decoded in register (simd/qpage.c) against the
 * reference, ol_page_decode element by element (quant/paged.c), bit for
 * bit: every code type (INT8, UINT8, INT4, UINT4, INT2, UINT2), widths that
 * are not multiples of 4, 8 or 16, every start column (4- and 2-bit spans
 * starting mid-byte), zero points at both ends of the code range and in
 * between, scales of mixed magnitude. The dot product equals the reference
 * floats summed in page_dot's scalar order (four lanes, (l0 + l1) + (l2 +
 * l3), tail), which is ol_dot_f32's order. Spans ending at the last byte of
 * a buffer followed by an inaccessible page: nothing past it is read.
 * ol_page_row_codes takes rows whose parameters do not change along the
 * row (one set, one per token or per block of tokens), decoded alike.
 * Several rows at a time (ol_qpage_dot_rows, ol_qpage_add_rows) give the
 * one-row results bit for bit. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "harness.h"
#include "ops/float_io.h"
#include "quant/paged.h"
#include "simd/qpage.h"

#include "test_random.h"

static const ol_dtype TYPES[6] = {OL_DTYPE_INT8, OL_DTYPE_UINT8, OL_DTYPE_INT4,
                                  OL_DTYPE_UINT4, OL_DTYPE_INT2, OL_DTYPE_UINT2};

/* page_dot's scalar reference over decoded floats x. */
static float lanes_dot(const float *q, const float *x, int64_t n) {
  float lane[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4)
    for (int j = 0; j < 4; j++) lane[j] = lane[j] + q[i + j] * x[i + j];
  float s = (lane[0] + lane[1]) + (lane[2] + lane[3]);
  for (; i < n; i++) s = s + q[i] * x[i];
  return s;
}

static float positive_scale(void) {
  float s = rnd();
  s = s < 0 ? -s : s;
  return s > 0 ? s : 0.5f;
}

/* An affine page of storage [capacity, width] with random codes (every
 * bit pattern is a code) and one scale and zero point. */
static ol_value *random_page(ol_dtype storage, float scale, int32_t zero, int64_t capacity, int64_t width) {
  ol_value *v = NULL;
  uint8_t *codes = NULL;
  size_t bytes = 0;
  CHECK_OK(ol_page_affine_new(storage, scale, zero, capacity, width, &v, &codes, &bytes));
  for (size_t i = 0; v && i < bytes; i++) codes[i] = (uint8_t)next_u32();
  return v;
}

static int compare_row(const ol_page_payload *p, int64_t t, int64_t c0, int64_t n, const float *q, float *want,
                       float *got) {
  ol_qpage_codes c;
  if (!ol_page_row_codes(p, t, c0, &c)) return 1;
  ol_page_decode(p, t, c0, n, want);
  memset(got, 0xff, sizeof(float) * (size_t)n);
  ol_qpage_decode(&c, n, got);
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += fbits(want[i]) != fbits(got[i]);
  float ref = lanes_dot(q, want, n), dot = ol_qpage_dot(q, &c, n);
  bad += fbits(ref) != fbits(dot);
  bad += fbits(ref) != fbits(ol_dot_f32(q, want, n)); /* page_dot's scalar lanes = ol_dot_f32 */
  return bad;
}

static void decoders_match_reference(void) {
  static const int64_t widths[] = {1, 3, 4, 5, 7, 8, 15, 16, 17, 31, 32, 33, 47, 48, 63, 64, 67, 100, 130};
  const int64_t capacity = 3;
  float q[160], want[160], got[160];
  for (int ti = 0; ti < 6; ti++) {
    int32_t lo, hi;
    ol_page_code_range(TYPES[ti], &lo, &hi);
    const int32_t zeros[4] = {lo, hi, (lo + hi) / 2, lo < 0 ? 0 : lo + 1};
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
      for (int zi = 0; zi < 4; zi++) {
        const int64_t width = widths[wi];
        ol_value *v = random_page(TYPES[ti], positive_scale(), zeros[zi], capacity, width);
        ol_page_payload p;
        if (!v || ol_page_payload_view(v, &p) != OL_OK) {
          CHECK(0);
          ol_value_release(v);
          continue;
        }
        int bad = 0;
        for (int64_t t = 0; t < capacity; t++)
          for (int64_t c0 = 0; c0 < width && c0 < 21; c0++) {
            const int64_t lengths[3] = {width - c0, (width - c0) / 2, (width - c0) > 17 ? 17 : width - c0};
            for (int li = 0; li < 3; li++) {
              for (int64_t i = 0; i < lengths[li]; i++) q[i] = rnd();
              bad += compare_row(&p, t, c0, lengths[li], q, want, got);
            }
          }
        if (bad)
          fprintf(stderr, "  %s width %lld zero %d: %d differences\n", ol_dtype_name(TYPES[ti]), (long long)width,
                  zeros[zi], bad);
        CHECK(bad == 0);
        ol_page_payload_clear(&p);
        ol_value_release(v);
      }
  }
}

/* Codes flush against an inaccessible page: spans of every start and
 * length up to the buffer's last code decode like the reference formula. */
static void reads_stay_in_the_span(void) {
  const long page = sysconf(_SC_PAGESIZE);
  uint8_t *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  CHECK(map != MAP_FAILED);
  if (map == MAP_FAILED) return;
  CHECK(mprotect(map + page, (size_t)page, PROT_NONE) == 0);
  const size_t bytes = 40; /* 40, 80 or 160 codes */
  uint8_t *data = map + page - bytes;
  for (size_t i = 0; i < bytes; i++) data[i] = (uint8_t)next_u32();
  float q[160], got[160];
  for (int i = 0; i < 160; i++) q[i] = rnd();
  for (int ti = 0; ti < 6; ti++) {
    const int bits = ol_page_code_bits(TYPES[ti]);
    const int64_t count = (int64_t)bytes * 8 / bits;
    int32_t lo, hi;
    ol_page_code_range(TYPES[ti], &lo, &hi);
    ol_qpage_codes c = {data, 0, bits, lo < 0, 0.375f, hi};
    int bad = 0;
    for (int64_t first = 0; first < count; first++) {
      c.first = first;
      const int64_t n = count - first;
      ol_qpage_decode(&c, n, got);
      for (int64_t i = 0; i < n; i++) {
        int64_t e = first + i;
        uint32_t u = (data[e * bits / 8] >> (e * bits % 8)) & ((1u << bits) - 1);
        int32_t code = lo < 0 && (u >> (bits - 1)) ? (int32_t)u - (1 << bits) : (int32_t)u;
        bad += fbits(got[i]) != fbits((float)(code - hi) * 0.375f);
      }
      bad += fbits(ol_qpage_dot(q, &c, n)) != fbits(lanes_dot(q, got, n));
    }
    if (bad) fprintf(stderr, "  %s: %d differences\n", ol_dtype_name(TYPES[ti]), bad);
    CHECK(bad == 0);
  }
  munmap(map, 2 * (size_t)page);
}

/* Row-by-row checks of every start column of a payload. */
static int compare_rows(const ol_page_payload *p) {
  float q[64], want[64], got[64];
  int bad = 0;
  for (int64_t t = 0; t < p->capacity; t++)
    for (int64_t c0 = 0; c0 < p->width; c0++) {
      for (int64_t i = 0; i < p->width - c0; i++) q[i] = rnd();
      bad += compare_row(p, t, c0, p->width - c0, q, want, got);
    }
  return bad;
}

/* Spans are rows whose parameters do not change along the row: one set,
 * one per token (each row decodes with its token's), one per block of
 * tokens; not dense pages or parameters along the width. */
static void row_codes_take_row_constant_parameters(void) {
  const int64_t capacity = 3, width = 37;
  const float scales[3] = {0.5f, 0.25f, 3.0f};
  for (int ti = 0; ti < 6; ti++) {
    int32_t lo, hi;
    ol_page_code_range(TYPES[ti], &lo, &hi);
    int32_t z[3] = {lo, hi, (lo + hi) / 2};
    ol_value *rows = NULL;
    uint8_t *codes;
    size_t bytes;
    CHECK_OK(ol_page_affine_rows_new(TYPES[ti], scales, z, capacity, capacity, width, &rows, &codes, &bytes));
    for (size_t i = 0; rows && i < bytes; i++) codes[i] = (uint8_t)next_u32();
    ol_page_payload p;
    if (!rows || ol_page_payload_view(rows, &p) != OL_OK) {
      CHECK(0);
      ol_value_release(rows);
      continue;
    }
    CHECK(p.n_params == 3 && p.axis == 2 && compare_rows(&p) == 0);
    ol_qpage_codes c;
    CHECK(ol_page_row_codes(&p, 2, 5, &c) && c.first == 2 * width + 5 && c.scale == 3.0f && c.zero == z[2]);
    ol_page_payload blocked = p; /* tokens 0-1 share set 0, token 2 has set 1 */
    blocked.block_size = 2, blocked.n_params = 2;
    CHECK(compare_rows(&blocked) == 0);
    CHECK(ol_page_row_codes(&blocked, 1, 0, &c) && c.scale == 0.5f && c.zero == z[0]);
    float column_scales[37];
    int32_t column_zeros[37];
    for (int w = 0; w < width; w++) column_scales[w] = scales[w % 3], column_zeros[w] = 0;
    ol_page_payload columns = p;
    columns.axis = 3, columns.n_params = width, columns.scales = column_scales, columns.zeros = column_zeros;
    CHECK(!ol_page_row_codes(&columns, 0, 0, &c));
    ol_page_payload_clear(&p);
    ol_value_release(rows);
  }
  ol_value *dense = NULL;
  CHECK_OK(ol_page_dense_new(NULL, OL_DTYPE_FLOAT, 2, 8, &dense));
  ol_page_payload p;
  ol_qpage_codes c;
  if (dense && ol_page_payload_view(dense, &p) == OL_OK) {
    CHECK(!ol_page_row_codes(&p, 0, 0, &c));
    ol_page_payload_clear(&p);
  }
  ol_value_release(dense);
}

/* Differences of ol_qpage_dot_rows / ol_qpage_add_rows over rows [0, count)
 * from column c0 against one ol_qpage_dot per row and the reference
 * floats added row by row (acc = acc + e * x, in row order). */
static int compare_row_sets(const ol_page_payload *p, int64_t count, int64_t c0, int64_t n) {
  ol_qpage_codes rows[9];
  float q[64], x[64], out[9], e[9], acc[64], want[64];
  int bad = 0;
  for (int64_t i = 0; i < n; i++) q[i] = rnd(), acc[i] = want[i] = rnd();
  for (int64_t r = 0; r < count; r++) {
    if (!ol_page_row_codes(p, r, c0, &rows[r])) return 1;
    e[r] = positive_scale();
  }
  ol_qpage_dot_rows(q, rows, count, n, out);
  ol_qpage_add_rows(acc, n, rows, e, count);
  for (int64_t r = 0; r < count; r++) {
    bad += fbits(out[r]) != fbits(ol_qpage_dot(q, &rows[r], n));
    ol_page_decode(p, r, c0, n, x);
    for (int64_t i = 0; i < n; i++) want[i] = want[i] + e[r] * x[i];
  }
  for (int64_t i = 0; i < n; i++) bad += fbits(acc[i]) != fbits(want[i]);
  return bad;
}

/* Several rows at a time (what PagedAttention reads per chunk) give the
 * one-row results: one parameter set or one per token (rows 4 at a time
 * with shared or differing parameters, and the rest), every code type,
 * start columns mid-byte, lengths with and without tails of 16. */
static void row_sets_match_single_rows(void) {
  const int64_t capacity = 9, width = 45;
  float scales[9];
  int32_t zeros[9];
  for (int ti = 0; ti < 6; ti++) {
    int32_t lo, hi;
    ol_page_code_range(TYPES[ti], &lo, &hi);
    for (int r = 0; r < 9; r++) scales[r] = positive_scale(), zeros[r] = lo + (hi - lo) * r / 8;
    for (int per_token = 0; per_token < 2; per_token++) {
      ol_value *v = NULL;
      uint8_t *codes;
      size_t bytes;
      CHECK_OK(ol_page_affine_rows_new(TYPES[ti], scales, zeros, per_token ? capacity : 1, capacity, width, &v,
                                       &codes, &bytes));
      for (size_t i = 0; v && i < bytes; i++) codes[i] = (uint8_t)next_u32();
      ol_page_payload p;
      if (!v || ol_page_payload_view(v, &p) != OL_OK) {
        CHECK(0);
        ol_value_release(v);
        continue;
      }
      int bad = 0;
      const int64_t starts[4] = {0, 1, 3, 6};
      for (int si = 0; si < 4; si++)
        for (int64_t count = 1; count <= capacity; count++) {
          const int64_t c0 = starts[si], lengths[3] = {width - c0, 32, 7};
          for (int li = 0; li < 3; li++) bad += compare_row_sets(&p, count, c0, lengths[li]);
        }
      if (bad) fprintf(stderr, "  %s per token %d: %d differences\n", ol_dtype_name(TYPES[ti]), per_token, bad);
      CHECK(bad == 0);
      ol_page_payload_clear(&p);
      ol_value_release(v);
    }
  }
}

OL_TEST_MAIN(TEST(decoders_match_reference), TEST(reads_stay_in_the_span), TEST(row_codes_take_row_constant_parameters),
             TEST(row_sets_match_single_rows))
