/* Quantization catalogue, plans and portable codecs (c/src/quant/):
 * catalogue rows and names, factory defaults and copy semantics, every
 * catalogue row encoding and decoding with the seed's plan configurations,
 * round-trip error bounds on random data, and the seed's worked examples.
 * Error paths and golden bytes are in test_quant_errors.c. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "harness.h"
#include "quant/catalogue.h"
#include "quant/codec.h"
#include "quant/plan.h"

/* ------------------------------------------------------------ helpers */

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double rng_uniform(double lo, double hi) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return lo + (hi - lo) * ((double)(rng_state >> 11) * 0x1p-53);
}

static void linspace(double lo, double hi, size_t n, double *out) {
  for (size_t i = 0; i < n; i++) out[i] = n == 1 ? lo : lo + (hi - lo) * (double)i / (double)(n - 1);
}

/* Encodes and decodes; out receives count values. */
static ol_status roundtrip(const ol_quant_plan *plan, const double *values, uint64_t count,
                           ol_dtype dtype, double *out) {
  uint8_t *payload;
  size_t size;
  OL_TRY(ol_quant_encode(plan, values, count, dtype, &payload, &size));
  uint64_t expected;
  ol_status s = ol_quant_plan_payload_size(plan, &expected);
  if (s == OL_OK && expected != size) s = ol_error(OL_INTERNAL, "payload size %zu", size);
  if (s == OL_OK) s = ol_quant_decode(plan, payload, size, count, dtype, out, NULL);
  free(payload);
  return s;
}

/* Sets one block's scale through the copy API (the seed's idiom). */
static void set_scale(ol_quant_plan *plan, size_t r, size_t b, double scale) {
  ol_quant_run run;
  ol_quant_block block;
  CHECK_OK(ol_quant_plan_run(plan, r, &run));
  CHECK_OK(ol_quant_run_block(&run, b, &block));
  block.scale = scale;
  CHECK_OK(ol_quant_run_set_block(&run, b, &block));
  CHECK_OK(ol_quant_plan_set_run(plan, r, &run));
  ol_quant_block_clear(&block);
  ol_quant_run_clear(&run);
}

static void set_codebook(ol_quant_plan *plan, const double *table, size_t n) {
  for (size_t r = 0; r < plan->run_count; r++)
    for (size_t b = 0; b < plan->runs[r].block_count; b++)
      CHECK_OK(ol_quant_block_set_codebook(&plan->runs[r].blocks[b], table, n));
}

/* ------------------------------------------------------------ catalogue */

static void test_catalogue_rows(void) {
  const ol_quant_format *all = ol_quant_formats();
  CHECK(OL_QUANT_FORMAT_COUNT == 43);
  CHECK(all[0] == OL_QUANT_INT8 && all[42] == OL_QUANT_ORT_MATMULNBITS_INT8);
  static const char *const expected[43] = {
      "int8", "int8_per_channel", "int4", "gptq", "awq", "eetq", "matmulnbits", "q2_k", "q3_k",
      "q4_k", "q5_k", "q6_k", "hqq", "exl2", "exl3", "nf4", "iq4_nl", "binary", "ternary",
      "tq1_0", "tq2_0", "bitnet", "paretoq", "tequila", "stq1_0", "iq1_s", "aqlm", "quip_sharp",
      "spqr", "squeezellm", "log", "fp6_llm", "fp8_e4m3", "mxfp4", "mxfp6", "nvfp4", "quarot",
      "smoothquant", "tiled_float", "column_major", "ort_matmulnbits_int2",
      "ort_matmulnbits_int4", "ort_matmulnbits_int8"};
  for (int i = 0; i < OL_QUANT_FORMAT_COUNT; i++) {
    const ol_quant_profile *row = ol_quant_profile_info(all[i]);
    CHECK(row && row->format == (ol_quant_format)i);
    CHECK(strcmp(ol_quant_format_name(all[i]), expected[i]) == 0);
    ol_quant_format parsed = OL_QUANT_FORMAT_COUNT;
    CHECK_OK(ol_quant_format_parse(expected[i], &parsed));
    CHECK(parsed == (ol_quant_format)i);
    /* upper-case enum name = wire name upper-cased */
    char upper[64];
    size_t n = strlen(row->name);
    for (size_t k = 0; k <= n; k++)
      upper[k] = (char)(row->name[k] >= 'a' && row->name[k] <= 'z' ? row->name[k] - 32 : row->name[k]);
    CHECK(strcmp(upper, row->enum_name) == 0);
    /* fixed tables agree with the row's entries; entries fit the index width */
    uint32_t count;
    const double *table = ol_quant_table_values(row->table, &count);
    if (table) CHECK(count == row->entries);
    if (row->method == OL_QUANT_CODEBOOK) CHECK(row->entries <= (1u << row->bits));
    CHECK(ol_quant_float_bytes(row->cast_type) != 0);
  }
  CHECK(ol_quant_profile_info((ol_quant_format)43) == NULL);
  CHECK(ol_quant_format_name((ol_quant_format)-1) == NULL);
}

static void test_catalogue_parse_errors(void) {
  ol_quant_format f;
  const char *bad[] = {"", "unknown", "QUAROT", "Int4", "int4 "};
  for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
    CHECK_STATUS(ol_quant_format_parse(bad[i], &f), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "Unknown quantization format") != NULL);
    char quoted[32];
    snprintf(quoted, sizeof(quoted), "'%s'", bad[i]);
    CHECK(strstr(ol_last_error(), quoted) != NULL);
  }
}

static void test_fixed_tables(void) {
  uint32_t n;
  const double *t = ol_quant_table_values(OL_QUANT_TABLE_E4M3FN, &n);
  CHECK(n == 254 && t[126] == 448 && t[253] == -448 && t[1] == 0x1p-9);
  CHECK(t[127] == 0 && signbit(t[127]));
  t = ol_quant_table_values(OL_QUANT_TABLE_E3M2, &n);
  CHECK(n == 64 && t[31] == 28 && t[63] == -28 && t[1] == 0.0625 && signbit(t[32]));
  t = ol_quant_table_values(OL_QUANT_TABLE_E2M1, &n);
  CHECK(n == 16 && t[7] == 6 && signbit(t[8]) && t[15] == -6);
  t = ol_quant_table_values(OL_QUANT_TABLE_LOG, &n);
  CHECK(n == 15 && t[0] == 0 && t[13] == 8 && t[14] == -8);
  t = ol_quant_table_values(OL_QUANT_TABLE_NF4, &n);
  CHECK(n == 16 && t[0] == -1 && t[7] == 0 && t[15] == 1);
  t = ol_quant_table_values(OL_QUANT_TABLE_IQ4_NL, &n);
  CHECK(n == 16 && t[0] == -127 && t[15] == 113);
  CHECK(ol_quant_table_values(OL_QUANT_TABLE_LEARNED, &n) == NULL && n == 0);
}

/* ------------------------------------------------------------ plans */

static void test_plan_factory_defaults(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 300, OL_QUANT_DEFAULT_BLOCK_SIZE, &plan));
  CHECK(plan->run_count == 2);
  CHECK(plan->runs[0].layout.count == 128 && plan->runs[0].block_count == 2);
  CHECK(plan->runs[1].layout.count == 44 && plan->runs[1].block_count == 1);
  const ol_quant_layout *l = &plan->runs[0].layout;
  CHECK(l->method == OL_QUANT_AFFINE && l->bits == 4 && l->signed_codes && l->books == 1 &&
        l->entries == 0 && l->vector_size == 1 && !l->base3 && l->cast_type == OL_DTYPE_FLOAT16);
  const ol_quant_block *b = &plan->runs[1].blocks[0];
  CHECK(b->scale == 1 && b->zero_point == 0 && b->offset == 0 && b->codebook_size == 0);
  CHECK(plan->permutation_size == 0 && plan->transform_size == 0 && plan->outlier_count == 0);
  ol_quant_plan_destroy(plan);

  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 0, 128, &plan));
  CHECK(plan->run_count == 0);
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 256, 128, &plan));
  CHECK(plan->run_count == 1 && plan->runs[0].block_count == 2);
  ol_quant_plan_destroy(plan);

  /* profile overrides (wire-facts §3.3) */
  struct {
    ol_quant_format f;
    ol_quant_method method;
    uint32_t bits, signed_codes, books, entries, vec, base3;
    ol_dtype cast;
    double zp;
  } rows[] = {
      {OL_QUANT_INT8, OL_QUANT_AFFINE, 8, 1, 1, 0, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_GPTQ, OL_QUANT_AFFINE, 4, 0, 1, 0, 1, 0, OL_DTYPE_FLOAT16, 8},
      {OL_QUANT_Q3_K, OL_QUANT_AFFINE, 3, 1, 1, 0, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_Q6_K, OL_QUANT_AFFINE, 6, 1, 1, 0, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_SMOOTHQUANT, OL_QUANT_AFFINE, 8, 1, 1, 0, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_NF4, OL_QUANT_CODEBOOK, 4, 0, 1, 16, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_TERNARY, OL_QUANT_CODEBOOK, 2, 0, 1, 3, 1, 1, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_TQ2_0, OL_QUANT_CODEBOOK, 2, 0, 1, 3, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_STQ1_0, OL_QUANT_CODEBOOK, 5, 1, 1, 32, 4, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_AQLM, OL_QUANT_CODEBOOK, 8, 1, 2, 256, 8, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_SQUEEZELLM, OL_QUANT_CODEBOOK, 4, 1, 1, 16, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_LOG, OL_QUANT_CODEBOOK, 4, 0, 1, 15, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_FP6_LLM, OL_QUANT_CODEBOOK, 6, 0, 1, 64, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_FP8_E4M3, OL_QUANT_CODEBOOK, 8, 0, 1, 254, 1, 0, OL_DTYPE_FLOAT16, 0},
      {OL_QUANT_COLUMN_MAJOR, OL_QUANT_CAST, 4, 1, 1, 0, 1, 0, OL_DTYPE_FLOAT, 0},
  };
  for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
    CHECK_OK(ol_quant_make_plan(rows[i].f, 16, 128, &plan));
    l = &plan->runs[0].layout;
    CHECK(l->count == 16 && l->method == rows[i].method && l->bits == rows[i].bits);
    CHECK(l->signed_codes == (rows[i].signed_codes != 0) && l->books == rows[i].books);
    CHECK(l->entries == rows[i].entries && l->vector_size == rows[i].vec);
    CHECK(l->base3 == (rows[i].base3 != 0) && l->cast_type == rows[i].cast);
    b = &plan->runs[0].blocks[0];
    CHECK(b->zero_point == rows[i].zp);
    const ol_quant_profile *row = ol_quant_profile_info(rows[i].f);
    CHECK(b->codebook_size == (row->table == OL_QUANT_TABLE_LEARNED ? 0 : row->entries));
    ol_quant_plan_destroy(plan);
  }
}

static void test_plan_factory_errors(void) {
  ol_quant_plan *plan = (ol_quant_plan *)1;
  CHECK_STATUS(ol_quant_make_plan(OL_QUANT_INT4, 8, 0, &plan), OL_INVALID_ARGUMENT);
  CHECK(plan == NULL);
  CHECK_STATUS(ol_quant_make_plan(OL_QUANT_INT4, 8, (uint64_t)UINT32_MAX + 1, &plan),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_make_plan((ol_quant_format)43, 8, 4, &plan), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_make_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 8, 4, &plan),
               OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "ort_matmulnbits_int4") != NULL);
  CHECK_STATUS(ol_quant_make_matmul_nbits_plan(OL_QUANT_INT4, 35, 3, 16, &plan),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 35, 3, 8, &plan),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 35, 3, 24, &plan),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 0, 3, 16, &plan),
               OL_INVALID_ARGUMENT);
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 35, 3, 16, &plan));
  CHECK(plan->format == OL_QUANT_ORT_MATMULNBITS_INT4 && plan->matrix_rank == 2);
  CHECK(plan->matrix_shape[0] == 35 && plan->matrix_shape[1] == 3);
  CHECK(plan->run_count == 1 && plan->runs[0].block_count == 9);
  CHECK(plan->runs[0].layout.count == 16 && plan->runs[0].layout.bits == 4);
  CHECK(!plan->runs[0].layout.signed_codes && plan->runs[0].blocks[8].zero_point == 8);
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT2, 16, 2, 16, &plan));
  CHECK(plan->runs[0].layout.bits == 2 && plan->runs[0].blocks[0].zero_point == 2);
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT8, 16, 2, 16, &plan));
  CHECK(plan->runs[0].layout.bits == 8 && plan->runs[0].blocks[0].zero_point == 128);
  ol_quant_plan_destroy(plan);
}

static void test_plan_copy_semantics(void) {
  ol_quant_plan *plan, *clone;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_NF4, 8, 4, &plan));
  ol_quant_run run;
  CHECK_OK(ol_quant_plan_run(plan, 0, &run));
  run.blocks[0].scale = 0.25; /* a copy: the plan does not change yet */
  run.blocks[0].codebook[0] = -2;
  CHECK(plan->runs[0].blocks[0].scale == 1 && plan->runs[0].blocks[0].codebook[0] == -1);
  CHECK_OK(ol_quant_plan_set_run(plan, 0, &run));
  run.blocks[0].scale = 7; /* the plan holds its own copy */
  CHECK(plan->runs[0].blocks[0].scale == 0.25 && plan->runs[0].blocks[0].codebook[0] == -2);
  CHECK(plan->runs[0].blocks[1].codebook != plan->runs[0].blocks[0].codebook);
  CHECK_OK(ol_quant_plan_clone(plan, &clone));
  CHECK(clone->runs[0].blocks[0].codebook != plan->runs[0].blocks[0].codebook);
  CHECK(clone->runs[0].blocks[0].codebook[0] == -2 && clone->format == OL_QUANT_NF4);
  ol_quant_block block;
  CHECK_STATUS(ol_quant_run_block(&run, 2, &block), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_plan_run(plan, 1, &run), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_quant_plan_set_run(plan, 1, &run), OL_INVALID_ARGUMENT);
  ol_quant_run_clear(&run);
  ol_quant_plan_destroy(clone);
  ol_quant_plan_destroy(plan);
  ol_quant_plan_destroy(NULL);
}

/* ------------------------------------------------------------ the seed's examples */

/* EXL2 mixed precision: two runs (4 bits, scale 0.5) and (5 bits, scale 2). */
static void test_seed_exl2_mixed_precision(void) {
  const double weights[6] = {-4, 0, 3.5, -32, 0, 30};
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_EXL2, 6, 3, &plan));
  ol_quant_run runs[2];
  const uint32_t bits[2] = {4, 5};
  const double scales[2] = {0.5, 2};
  for (int i = 0; i < 2; i++) {
    CHECK_OK(ol_quant_plan_run(plan, 0, &runs[i]));
    runs[i].layout.bits = bits[i];
    ol_quant_block block;
    CHECK_OK(ol_quant_run_block(&runs[i], 0, &block));
    block.scale = scales[i];
    CHECK_OK(ol_quant_run_set_blocks(&runs[i], &block, 1));
    ol_quant_block_clear(&block);
  }
  CHECK_OK(ol_quant_plan_set_runs(plan, runs, 2));
  double restored[6];
  CHECK_OK(roundtrip(plan, weights, 6, OL_DTYPE_FLOAT, restored));
  CHECK(memcmp(restored, weights, sizeof(weights)) == 0);
  ol_quant_run_clear(&runs[0]);
  ol_quant_run_clear(&runs[1]);
  ol_quant_plan_destroy(plan);
}

/* C++ example: INT4, three values, scale 0.5 restores exactly. */
static void test_seed_int4_example(void) {
  const double input[3] = {-4, 0, 3.5};
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 3, 128, &plan));
  set_scale(plan, 0, 0, 0.5);
  double restored[3];
  CHECK_OK(roundtrip(plan, input, 3, OL_DTYPE_FLOAT, restored));
  CHECK(memcmp(restored, input, sizeof(input)) == 0);
  ol_quant_plan_destroy(plan);
}

/* INT4 calibration graph: 8 values in blocks of 4, scales from the data. */
static void test_seed_int4_calibration(void) {
  const double input[8] = {-4, -1, 0.5, 3.5, 7, -2, 1, 0};
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, 8, 4, &plan));
  CHECK_OK(ol_quant_calibrate_values(plan, input, 8));
  /* block 0: max(3.5/7, 4/8) = 0.5; block 1: max(7/7, 2/8) = 1 */
  CHECK(plan->runs[0].blocks[0].scale == 0.5 && plan->runs[0].blocks[1].scale == 1);
  double restored[8];
  CHECK_OK(roundtrip(plan, input, 8, OL_DTYPE_FLOAT, restored));
  for (int i = 0; i < 8; i++) CHECK(restored[i] == input[i]);
  /* all-zero blocks use scale one; unsigned codes use the zero point */
  const double zeros[4] = {0, 0, 0, 0};
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_plan(OL_QUANT_GPTQ, 4, 4, &plan));
  CHECK_OK(ol_quant_calibrate_values(plan, zeros, 4));
  CHECK(plan->runs[0].blocks[0].scale == 1);
  const double mixed[4] = {-16, 0, 1, 7};
  CHECK_OK(ol_quant_calibrate_values(plan, mixed, 4)); /* zp 8: max(7/7, 16/8) = 2 */
  CHECK(plan->runs[0].blocks[0].scale == 2);
  ol_quant_plan_destroy(plan);
  /* scalar codebooks: ratio to the extreme entries (NF4: +-1) */
  CHECK_OK(ol_quant_make_plan(OL_QUANT_NF4, 4, 4, &plan));
  const double nf[4] = {-3, 0.5, 2, 0};
  CHECK_OK(ol_quant_calibrate_values(plan, nf, 4));
  CHECK(plan->runs[0].blocks[0].scale == 3);
  ol_quant_plan_destroy(plan);
  CHECK_OK(ol_quant_make_plan(OL_QUANT_TILED_FLOAT, 4, 4, &plan));
  CHECK_OK(ol_quant_calibrate_values(plan, nf, 4));
  CHECK(plan->runs[0].blocks[0].scale == 1);
  ol_quant_plan_destroy(plan);
}

/* ------------------------------------------------------------ every catalogue row */

/* Configures plan for format exactly as the seed's catalogue table does, on
 * a 4x4 weight matrix linspace(-1, 1, 16). */
static ol_quant_plan *seed_row_plan(ol_quant_format f) {
  const int n = 16;
  ol_quant_plan *plan = NULL;
  uint64_t block_size = 128;
  switch (f) {
    case OL_QUANT_INT8_PER_CHANNEL: case OL_QUANT_TILED_FLOAT: block_size = 4; break;
    case OL_QUANT_GPTQ: case OL_QUANT_AWQ: case OL_QUANT_MATMULNBITS: block_size = 4; break;
    case OL_QUANT_Q2_K: case OL_QUANT_Q3_K: case OL_QUANT_Q4_K: case OL_QUANT_Q5_K:
    case OL_QUANT_Q6_K: block_size = 4; break;
    case OL_QUANT_HQQ: case OL_QUANT_EXL2: case OL_QUANT_EXL3: block_size = 8; break;
    case OL_QUANT_MXFP4: case OL_QUANT_NVFP4: block_size = 8; break;
    default: break;
  }
  if (ol_quant_make_plan(f, n, block_size, &plan) != OL_OK) return NULL;
  ol_quant_run *run0 = &plan->runs[0];
  ol_quant_block *b0 = &run0->blocks[0];
  int64_t transpose[16], tiles[16];
  for (int i = 0; i < 16; i++) transpose[i] = (i % 4) * 4 + i / 4;
  for (int i = 0; i < 16; i++) { /* (2,2,2,2) transposed to (0,2,1,3) */
    int a = i / 8, c = (i / 4) % 2, bb = (i / 2) % 2, d = i % 2;
    tiles[i] = a * 8 + bb * 4 + c * 2 + d;
  }
  const double r = 1 / sqrt(2.0);
  const double rotation[4] = {r, r, r, -r};
  double table[4096];
  switch (f) {
    case OL_QUANT_INT8: case OL_QUANT_EETQ: case OL_QUANT_INT4:
      b0->scale = 1 / (ldexp(1, (int)run0->layout.bits - 1) - 1);
      break;
    case OL_QUANT_INT8_PER_CHANNEL:
      ol_quant_plan_set_permutation(plan, transpose, 16);
      for (int i = 0; i < 4; i++) { /* column i: rows -1 + (4r + i) * 2/15 */
        double m = 0;
        for (int row = 0; row < 4; row++) m = fmax(m, fabs(-1 + (4 * row + i) * 2.0 / 15));
        run0->blocks[i].scale = m > 0 ? m / 127 : 1;
      }
      break;
    case OL_QUANT_GPTQ: case OL_QUANT_AWQ: case OL_QUANT_MATMULNBITS: {
      const double s[4] = {0.15, 0.05, 0.05, 0.15};
      for (int i = 0; i < 4; i++) run0->blocks[i].scale = s[i], run0->blocks[i].zero_point = 8;
      break;
    }
    case OL_QUANT_Q2_K: case OL_QUANT_Q3_K: case OL_QUANT_Q4_K: case OL_QUANT_Q5_K:
    case OL_QUANT_Q6_K:
      for (size_t i = 0; i < run0->block_count; i++) {
        run0->blocks[i].scale = 1 / (ldexp(1, (int)run0->layout.bits - 1) - 1);
        run0->blocks[i].offset = 0.125;
      }
      break;
    case OL_QUANT_HQQ: case OL_QUANT_EXL2: case OL_QUANT_EXL3: {
      ol_quant_run runs[2];
      for (int i = 0; i < 2; i++) {
        ol_quant_plan_run(plan, 0, &runs[i]);
        runs[i].layout.bits = i ? 5 : 3;
        ol_quant_block block = runs[i].blocks[0];
        block.scale = i ? 0.125 : 0.25;
        ol_quant_run_set_blocks(&runs[i], &block, 1);
      }
      ol_quant_plan_set_runs(plan, runs, 2);
      ol_quant_run_clear(&runs[0]);
      ol_quant_run_clear(&runs[1]);
      break;
    }
    case OL_QUANT_NF4: b0->scale = 1; break;
    case OL_QUANT_IQ4_NL: b0->scale = 1.0 / 127; break;
    case OL_QUANT_BINARY: b0->scale = 0.5; break;
    case OL_QUANT_TERNARY: case OL_QUANT_TQ1_0: case OL_QUANT_BITNET: case OL_QUANT_PARETOQ:
    case OL_QUANT_TEQUILA: case OL_QUANT_TQ2_0: b0->scale = 0.75; break;
    case OL_QUANT_STQ1_0:
      linspace(-1, 1, 128, table);
      set_codebook(plan, table, 128);
      break;
    case OL_QUANT_IQ1_S: case OL_QUANT_QUIP_SHARP:
      linspace(-1, 1, 2048, table);
      set_codebook(plan, table, 2048);
      if (f == OL_QUANT_QUIP_SHARP) ol_quant_plan_set_transform(plan, 2, rotation, 4, rotation, 4);
      break;
    case OL_QUANT_AQLM: {
      double a[256], c[256];
      linspace(-1, 1, 256, a);
      linspace(-0.125, 0.125, 256, c);
      for (int e = 0; e < 256; e++)
        for (int j = 0; j < 8; j++) table[e * 8 + j] = a[e], table[2048 + e * 8 + j] = c[e];
      set_codebook(plan, table, 4096);
      break;
    }
    case OL_QUANT_SPQR: case OL_QUANT_SQUEEZELLM: {
      const int64_t outliers[2] = {0, 15};
      ol_quant_plan_set_outliers(plan, outliers, 2);
      if (f == OL_QUANT_SPQR) {
        b0->scale = 0.125;
      } else {
        linspace(-1, 1, 16, table);
        set_codebook(plan, table, 16);
      }
      break;
    }
    case OL_QUANT_LOG: b0->scale = 0.125; break;
    case OL_QUANT_FP6_LLM: case OL_QUANT_MXFP6: b0->scale = 0.25; break;
    case OL_QUANT_MXFP4: case OL_QUANT_NVFP4:
      run0->blocks[0].scale = 0.25;
      run0->blocks[1].scale = 0.5;
      break;
    case OL_QUANT_FP8_E4M3: b0->scale = 0.5; break;
    case OL_QUANT_QUAROT: case OL_QUANT_SMOOTHQUANT: {
      const double diag[4] = {2, 0, 0, 0.5}, diag_inv[4] = {0.5, 0, 0, 2};
      if (f == OL_QUANT_QUAROT) ol_quant_plan_set_transform(plan, 2, rotation, 4, rotation, 4);
      else ol_quant_plan_set_transform(plan, 2, diag, 4, diag_inv, 4);
      b0->scale = 0.25;
      break;
    }
    case OL_QUANT_TILED_FLOAT:
      ol_quant_plan_set_permutation(plan, tiles, 16);
      for (size_t i = 0; i < plan->run_count; i++) plan->runs[i].layout.cast_type = OL_DTYPE_FLOAT16;
      break;
    case OL_QUANT_COLUMN_MAJOR: ol_quant_plan_set_permutation(plan, transpose, 16); break;
    default: break;
  }
  return plan;
}

static void test_every_catalogue_row(void) {
  double weights[16], restored[16];
  for (int i = 0; i < 16; i++) weights[i] = (double)(float)(-1 + i * 2.0 / 15);
  int encoded = 0;
  for (int f = 0; f < OL_QUANT_FORMAT_COUNT; f++) {
    const ol_quant_profile *row = ol_quant_profile_info((ol_quant_format)f);
    if (row->ort) continue; /* separate factory and layout (next increment) */
    ol_quant_plan *plan = seed_row_plan((ol_quant_format)f);
    CHECK(plan != NULL);
    if (!plan) continue;
    ol_status s = roundtrip(plan, weights, 16, OL_DTYPE_FLOAT, restored);
    CHECK_OK(s);
    if (s != OL_OK) fprintf(stderr, "  profile %s\n", row->name);
    double err = 0;
    for (int i = 0; i < 16; i++) err = fmax(err, fabs(restored[i] - weights[i]));
    /* the seed's synthetic vector tables are ramps, far from these weights */
    double bound = row->vector_size > 1 ? 1.25 : 0.5;
    if (err > bound) fprintf(stderr, "  profile %s max error %g\n", row->name, err);
    CHECK(err <= bound);
    if (row->method == OL_QUANT_CAST && plan->runs[0].layout.cast_type == OL_DTYPE_FLOAT)
      CHECK(err == 0);
    if (plan->outlier_count) CHECK(restored[0] == weights[0] && restored[15] == weights[15]);
    if (row->method == OL_QUANT_AFFINE && plan->transform_size == 0 && plan->run_count == 1) {
      /* affine: at most half a step where not saturated */
      const ol_quant_layout *l = &plan->runs[0].layout;
      double lo = l->signed_codes ? -ldexp(1, (int)l->bits - 1) : 0;
      double hi = lo + ldexp(1, (int)l->bits) - 1;
      for (int i = 0; i < 16; i++) {
        size_t position = i;
        if (plan->permutation_size)
          for (size_t k = 0; k < 16; k++)
            if (plan->permutation[k] == i) position = k;
        const ol_quant_block *b = &plan->runs[0].blocks[position / l->count];
        double scale = b->scale, code = (weights[i] - b->offset) / scale + b->zero_point;
        if (code < lo - 0.5 || code > hi + 0.5) continue;
        CHECK(fabs(restored[i] - weights[i]) <= 0.5 * scale * (1 + 1e-12));
      }
    }
    encoded++;
    ol_quant_plan_destroy(plan);
  }
  CHECK(encoded == 40);
}

/* ------------------------------------------------------------ random round trips */

/* Affine profiles with calibrated scales on random data: every reconstruction
 * is within half a scale step (calibration leaves nothing saturated). */
static void test_random_affine_bounds(void) {
  enum { N = 1000 };
  static double values[N], restored[N];
  for (int f = 0; f < OL_QUANT_FORMAT_COUNT; f++) {
    const ol_quant_profile *row = ol_quant_profile_info((ol_quant_format)f);
    if (row->method != OL_QUANT_AFFINE || row->ort || row->needs_transform) continue;
    for (int i = 0; i < N; i++) values[i] = rng_uniform(-3, 5);
    values[17] = 0;
    ol_quant_plan *plan;
    CHECK_OK(ol_quant_make_plan((ol_quant_format)f, N, 64, &plan));
    CHECK(plan->run_count == 2 && plan->runs[1].layout.count == N % 64);
    CHECK_OK(ol_quant_calibrate_values(plan, values, N));
    CHECK_OK(roundtrip(plan, values, N, OL_DTYPE_DOUBLE, restored));
    for (int i = 0; i < N; i++) {
      const ol_quant_run *run = &plan->runs[i / 64 < 15 ? 0 : 1];
      double scale = run->blocks[i / 64 < 15 ? i / 64 : 0].scale;
      if (!(fabs(restored[i] - values[i]) <= 0.5 * scale * (1 + 1e-9))) {
        fprintf(stderr, "  %s element %d: %g vs %g (scale %g)\n", row->name, i, restored[i],
                values[i], scale);
        CHECK(0);
        break;
      }
    }
    ol_quant_plan_destroy(plan);
  }
}

/* Scalar codebooks: every value decodes to the nearest scaled entry. */
static void test_random_codebook_nearest(void) {
  enum { N = 300 };
  static double values[N], restored[N];
  for (int f = 0; f < OL_QUANT_FORMAT_COUNT; f++) {
    const ol_quant_profile *row = ol_quant_profile_info((ol_quant_format)f);
    if (row->method != OL_QUANT_CODEBOOK || row->table == OL_QUANT_TABLE_LEARNED) continue;
    for (int i = 0; i < N; i++) values[i] = rng_uniform(-2, 2);
    ol_quant_plan *plan;
    CHECK_OK(ol_quant_make_plan((ol_quant_format)f, N, 32, &plan));
    CHECK_OK(ol_quant_calibrate_values(plan, values, N));
    CHECK_OK(roundtrip(plan, values, N, OL_DTYPE_DOUBLE, restored));
    uint32_t entries;
    const double *table = ol_quant_table_values(row->table, &entries);
    for (int i = 0; i < N; i++) {
      const ol_quant_run *run = &plan->runs[i / 32 < 9 ? 0 : 1];
      double scale = run->blocks[i / 32 < 9 ? i / 32 : 0].scale, best = INFINITY;
      for (uint32_t e = 0; e < entries; e++) best = fmin(best, fabs(values[i] / scale - table[e]));
      CHECK(fabs(restored[i] / scale - values[i] / scale) <= best + 1e-12);
    }
    ol_quant_plan_destroy(plan);
  }
}

/* Casts: FLOAT exact for float inputs, FLOAT16/BFLOAT16 within half an ulp. */
static void test_random_cast_bounds(void) {
  enum { N = 200 };
  static double values[N], restored[N];
  const ol_dtype types[4] = {OL_DTYPE_FLOAT, OL_DTYPE_DOUBLE, OL_DTYPE_FLOAT16, OL_DTYPE_BFLOAT16};
  const double rel[4] = {0, 0, 0x1p-11, 0x1p-8};
  for (int t = 0; t < 4; t++) {
    for (int i = 0; i < N; i++) values[i] = (double)(float)rng_uniform(-100, 100);
    ol_quant_plan *plan;
    CHECK_OK(ol_quant_make_plan(OL_QUANT_TILED_FLOAT, N, 64, &plan));
    for (size_t r = 0; r < plan->run_count; r++) plan->runs[r].layout.cast_type = types[t];
    CHECK_OK(roundtrip(plan, values, N, OL_DTYPE_FLOAT, restored));
    for (int i = 0; i < N; i++) CHECK(fabs(restored[i] - values[i]) <= rel[t] * fabs(values[i]));
    ol_quant_plan_destroy(plan);
  }
}

/* Permutation + transform + outliers together restore the original order. */
static void test_pipeline_order(void) {
  enum { N = 12 };
  double values[N], restored[N];
  for (int i = 0; i < N; i++) values[i] = i - 5.5;
  values[3] = 1e6; /* an outlier far outside the range */
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_TILED_FLOAT, N, 6, &plan));
  for (size_t r = 0; r < plan->run_count; r++) plan->runs[r].layout.cast_type = OL_DTYPE_DOUBLE;
  int64_t perm[N];
  for (int i = 0; i < N; i++) perm[i] = (i * 5) % N;
  const int64_t outliers[1] = {3};
  const double fwd[9] = {2, 0, 0, 0, 0.5, 0, 0, 0, 4}, inv[9] = {0.5, 0, 0, 0, 2, 0, 0, 0, 0.25};
  CHECK_OK(ol_quant_plan_set_permutation(plan, perm, N));
  CHECK_OK(ol_quant_plan_set_outliers(plan, outliers, 1));
  CHECK_OK(ol_quant_plan_set_transform(plan, 3, fwd, 9, inv, 9));
  uint8_t *payload;
  size_t size;
  CHECK_OK(ol_quant_encode(plan, values, N, OL_DTYPE_FLOAT, &payload, &size));
  /* block 0's first cast value is forward(source[perm[0]], ...)[0] = 2 * values[0] */
  size_t head = 1 + 8 * N + 2 * 9 * 8 + 2 * 8;
  double first;
  memcpy(&first, payload + head + 24, 8);
  CHECK(first == 2 * values[0]);
  ol_quant_plan *parsed;
  CHECK_OK(ol_quant_decode(plan, payload, size, N, OL_DTYPE_FLOAT, restored, &parsed));
  for (int i = 0; i < N; i++) CHECK(restored[i] == values[i]);
  CHECK(parsed->outlier_count == 1 && parsed->outliers[0] == 3 && parsed->permutation[1] == 5);
  ol_quant_plan_destroy(parsed);
  free(payload);
  ol_quant_plan_destroy(plan);
}

/* Additive codebooks: greedy residual, first-entry ties, partial vectors. */
static void test_codebook_greedy(void) {
  ol_quant_plan *plan;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_AQLM, 3, 3, &plan));
  ol_quant_layout *l = &plan->runs[0].layout;
  l->books = 2, l->entries = 3, l->vector_size = 2, l->bits = 2;
  /* book 0: (0,0) (1,1) (1,1) [tie: first wins]; book 1: (0,0) (0.25,0) (0,0.25) */
  const double table[12] = {0, 0, 1, 1, 1, 1, 0, 0, 0.25, 0, 0, 0.25};
  set_codebook(plan, table, 12);
  const double values[3] = {1.25, 1, 0.25};
  uint8_t *payload;
  size_t size;
  CHECK_OK(ol_quant_encode(plan, values, 3, OL_DTYPE_FLOAT, &payload, &size));
  /* 2 vectors x 2 books = 4 indices of 2 bits: (1, 1), (0, 1): 0b01000101 */
  CHECK(size == 1 + 24 + 12 * 8 + 1);
  CHECK(payload[size - 1] == 0x45);
  double restored[3];
  CHECK_OK(ol_quant_decode(plan, payload, size, 3, OL_DTYPE_FLOAT, restored, NULL));
  CHECK(restored[0] == 1.25 && restored[1] == 1 && restored[2] == 0.25);
  free(payload);
  ol_quant_plan_destroy(plan);
}

OL_TEST_MAIN(TEST(test_catalogue_rows), TEST(test_catalogue_parse_errors),
             TEST(test_fixed_tables), TEST(test_plan_factory_defaults),
             TEST(test_plan_factory_errors), TEST(test_plan_copy_semantics),
             TEST(test_seed_exl2_mixed_precision), TEST(test_seed_int4_example),
             TEST(test_seed_int4_calibration), TEST(test_every_catalogue_row),
             TEST(test_random_affine_bounds), TEST(test_random_codebook_nearest),
             TEST(test_random_cast_bounds), TEST(test_pipeline_order),
             TEST(test_codebook_greedy))
