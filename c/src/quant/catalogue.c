/* The quantization catalogue: one row per profile and the fixed tables.
 * Rows follow wire-facts §3.3 (profile overrides applied to the §3.2
 * defaults); fixed tables follow §3.4, in code order. */
#include "catalogue.h"

#include <string.h>

#include "core/status.h"

/* ------------------------------------------------------------ fixed tables */

static const double table_nf4[16] = {
    -1, -0.6961928009986877, -0.5250730514526367, -0.39491748809814453,
    -0.28444138169288635, -0.18477343022823334, -0.09105003625154495, 0,
    0.07958029955625534, 0.16093020141124725, 0.24611230194568634, 0.33791524171829224,
    0.44070982933044434, 0.5626170039176941, 0.7229568362236023, 1};
static const double table_iq4_nl[16] = {-127, -104, -83, -65, -49, -35, -22, -10,
                                        1,    13,   25,  38,  53,  69,  89,  113};
static const double table_binary[2] = {-1, 1};
static const double table_ternary[3] = {-1, 0, 1};
static const double table_log[15] = {0,    0.125, -0.125, 0.25, -0.25, 0.5, -0.5, 1,
                                     -1,   2,     -2,     4,    -4,    8,   -8};
/* FLOAT4E2M1: codes 0..15; code 8 is negative zero. */
static const double table_e2m1[16] = {0,   0.5,  1,  1.5,  2,  3,  4,  6,
                                      -0.0, -0.5, -1, -1.5, -2, -3, -4, -6};
/* FLOAT6E3M2 (bias 3, subnormals, no inf/NaN): codes 0..63. */
static const double table_e3m2[64] = {
    0,     0.0625,  0.125,  0.1875,  0.25,  0.3125,  0.375,  0.4375,
    0.5,   0.625,   0.75,   0.875,   1,     1.25,    1.5,    1.75,
    2,     2.5,     3,      3.5,     4,     5,       6,      7,
    8,     10,      12,     14,      16,    20,      24,     28,
    -0.0,  -0.0625, -0.125, -0.1875, -0.25, -0.3125, -0.375, -0.4375,
    -0.5,  -0.625,  -0.75,  -0.875,  -1,    -1.25,   -1.5,   -1.75,
    -2,    -2.5,    -3,     -3.5,    -4,    -5,      -6,     -7,
    -8,    -10,     -12,    -14,     -16,   -20,     -24,    -28};
/* FLOAT8E4M3FN finite levels in code order (codes 0x7F and 0xFF are NaN and
 * skipped, so entry 127 is code 0x80, negative zero). */
static const double table_e4m3fn[254] = {
    0.0, 0.001953125, 0.00390625, 0.005859375, 0.0078125, 0.009765625, 0.01171875,
    0.013671875, 0.015625, 0.017578125, 0.01953125, 0.021484375, 0.0234375, 0.025390625,
    0.02734375, 0.029296875, 0.03125, 0.03515625, 0.0390625, 0.04296875, 0.046875,
    0.05078125, 0.0546875, 0.05859375, 0.0625, 0.0703125, 0.078125, 0.0859375, 0.09375,
    0.1015625, 0.109375, 0.1171875, 0.125, 0.140625, 0.15625, 0.171875, 0.1875, 0.203125,
    0.21875, 0.234375, 0.25, 0.28125, 0.3125, 0.34375, 0.375, 0.40625, 0.4375, 0.46875, 0.5,
    0.5625, 0.625, 0.6875, 0.75, 0.8125, 0.875, 0.9375, 1.0, 1.125, 1.25, 1.375, 1.5, 1.625,
    1.75, 1.875, 2.0, 2.25, 2.5, 2.75, 3.0, 3.25, 3.5, 3.75, 4.0, 4.5, 5.0, 5.5, 6.0, 6.5,
    7.0, 7.5, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0, 14.0, 15.0, 16.0, 18.0, 20.0, 22.0, 24.0,
    26.0, 28.0, 30.0, 32.0, 36.0, 40.0, 44.0, 48.0, 52.0, 56.0, 60.0, 64.0, 72.0, 80.0, 88.0,
    96.0, 104.0, 112.0, 120.0, 128.0, 144.0, 160.0, 176.0, 192.0, 208.0, 224.0, 240.0, 256.0,
    288.0, 320.0, 352.0, 384.0, 416.0, 448.0, -0.0, -0.001953125, -0.00390625, -0.005859375,
    -0.0078125, -0.009765625, -0.01171875, -0.013671875, -0.015625, -0.017578125,
    -0.01953125, -0.021484375, -0.0234375, -0.025390625, -0.02734375, -0.029296875, -0.03125,
    -0.03515625, -0.0390625, -0.04296875, -0.046875, -0.05078125, -0.0546875, -0.05859375,
    -0.0625, -0.0703125, -0.078125, -0.0859375, -0.09375, -0.1015625, -0.109375, -0.1171875,
    -0.125, -0.140625, -0.15625, -0.171875, -0.1875, -0.203125, -0.21875, -0.234375, -0.25,
    -0.28125, -0.3125, -0.34375, -0.375, -0.40625, -0.4375, -0.46875, -0.5, -0.5625, -0.625,
    -0.6875, -0.75, -0.8125, -0.875, -0.9375, -1.0, -1.125, -1.25, -1.375, -1.5, -1.625,
    -1.75, -1.875, -2.0, -2.25, -2.5, -2.75, -3.0, -3.25, -3.5, -3.75, -4.0, -4.5, -5.0,
    -5.5, -6.0, -6.5, -7.0, -7.5, -8.0, -9.0, -10.0, -11.0, -12.0, -13.0, -14.0, -15.0,
    -16.0, -18.0, -20.0, -22.0, -24.0, -26.0, -28.0, -30.0, -32.0, -36.0, -40.0, -44.0,
    -48.0, -52.0, -56.0, -60.0, -64.0, -72.0, -80.0, -88.0, -96.0, -104.0, -112.0, -120.0,
    -128.0, -144.0, -160.0, -176.0, -192.0, -208.0, -224.0, -240.0, -256.0, -288.0, -320.0,
    -352.0, -384.0, -416.0, -448.0,
};

typedef struct table_row {
  const char *name;
  const double *values;
  uint32_t count;
} table_row;

static const table_row tables[OL_QUANT_TABLE_COUNT] = {
    [OL_QUANT_TABLE_NONE] = {"none", NULL, 0},
    [OL_QUANT_TABLE_LEARNED] = {"learned", NULL, 0},
    [OL_QUANT_TABLE_NF4] = {"nf4", table_nf4, 16},
    [OL_QUANT_TABLE_IQ4_NL] = {"iq4_nl", table_iq4_nl, 16},
    [OL_QUANT_TABLE_BINARY] = {"binary", table_binary, 2},
    [OL_QUANT_TABLE_TERNARY] = {"ternary", table_ternary, 3},
    [OL_QUANT_TABLE_LOG] = {"log", table_log, 15},
    [OL_QUANT_TABLE_E2M1] = {"e2m1", table_e2m1, 16},
    [OL_QUANT_TABLE_E3M2] = {"e3m2", table_e3m2, 64},
    [OL_QUANT_TABLE_E4M3FN] = {"e4m3fn", table_e4m3fn, 254},
};

/* ------------------------------------------------------------ profile rows */

/* Row shorthands. F16 = FLOAT16, the header's cast_type for non-cast rows. */
#define F16 OL_DTYPE_FLOAT16
#define AFFINE(fmt, nm, en, bits, sgn, zp, xf)                                           \
  [fmt] = {fmt, nm, en, OL_QUANT_AFFINE, bits, sgn, 1, 0, 1, false, F16, zp,              \
           OL_QUANT_TABLE_NONE, xf, false}
#define FIXED(fmt, nm, en, bits, entries, b3, table)                                     \
  [fmt] = {fmt, nm, en, OL_QUANT_CODEBOOK, bits, false, 1, entries, 1, b3, F16, 0, table, \
           false, false}
#define LEARNED(fmt, nm, en, bits, books, entries, vec, xf)                              \
  [fmt] = {fmt, nm, en, OL_QUANT_CODEBOOK, bits, true, books, entries, vec, false, F16, 0, \
           OL_QUANT_TABLE_LEARNED, xf, false}
#define CASTROW(fmt, nm, en)                                                             \
  [fmt] = {fmt, nm, en, OL_QUANT_CAST, 4, true, 1, 0, 1, false, OL_DTYPE_FLOAT, 0,        \
           OL_QUANT_TABLE_NONE, false, false}
#define ORTROW(fmt, nm, en, bits)                                                        \
  [fmt] = {fmt, nm, en, OL_QUANT_AFFINE, bits, false, 1, 0, 1, false, F16,                \
           (double)(1u << ((bits) - 1)), OL_QUANT_TABLE_NONE, false, true}

static const ol_quant_profile profiles[OL_QUANT_FORMAT_COUNT] = {
    AFFINE(OL_QUANT_INT8, "int8", "INT8", 8, true, 0, false),
    AFFINE(OL_QUANT_INT8_PER_CHANNEL, "int8_per_channel", "INT8_PER_CHANNEL", 8, true, 0, false),
    AFFINE(OL_QUANT_INT4, "int4", "INT4", 4, true, 0, false),
    AFFINE(OL_QUANT_GPTQ, "gptq", "GPTQ", 4, false, 8, false),
    AFFINE(OL_QUANT_AWQ, "awq", "AWQ", 4, false, 8, false),
    AFFINE(OL_QUANT_EETQ, "eetq", "EETQ", 8, true, 0, false),
    AFFINE(OL_QUANT_MATMULNBITS, "matmulnbits", "MATMULNBITS", 4, false, 8, false),
    AFFINE(OL_QUANT_Q2_K, "q2_k", "Q2_K", 2, true, 0, false),
    AFFINE(OL_QUANT_Q3_K, "q3_k", "Q3_K", 3, true, 0, false),
    AFFINE(OL_QUANT_Q4_K, "q4_k", "Q4_K", 4, true, 0, false),
    AFFINE(OL_QUANT_Q5_K, "q5_k", "Q5_K", 5, true, 0, false),
    AFFINE(OL_QUANT_Q6_K, "q6_k", "Q6_K", 6, true, 0, false),
    AFFINE(OL_QUANT_HQQ, "hqq", "HQQ", 4, true, 0, false),
    AFFINE(OL_QUANT_EXL2, "exl2", "EXL2", 4, true, 0, false),
    AFFINE(OL_QUANT_EXL3, "exl3", "EXL3", 4, true, 0, false),
    FIXED(OL_QUANT_NF4, "nf4", "NF4", 4, 16, false, OL_QUANT_TABLE_NF4),
    FIXED(OL_QUANT_IQ4_NL, "iq4_nl", "IQ4_NL", 4, 16, false, OL_QUANT_TABLE_IQ4_NL),
    FIXED(OL_QUANT_BINARY, "binary", "BINARY", 1, 2, false, OL_QUANT_TABLE_BINARY),
    FIXED(OL_QUANT_TERNARY, "ternary", "TERNARY", 2, 3, true, OL_QUANT_TABLE_TERNARY),
    FIXED(OL_QUANT_TQ1_0, "tq1_0", "TQ1_0", 2, 3, true, OL_QUANT_TABLE_TERNARY),
    FIXED(OL_QUANT_TQ2_0, "tq2_0", "TQ2_0", 2, 3, false, OL_QUANT_TABLE_TERNARY),
    FIXED(OL_QUANT_BITNET, "bitnet", "BITNET", 2, 3, true, OL_QUANT_TABLE_TERNARY),
    FIXED(OL_QUANT_PARETOQ, "paretoq", "PARETOQ", 2, 3, true, OL_QUANT_TABLE_TERNARY),
    FIXED(OL_QUANT_TEQUILA, "tequila", "TEQUILA", 2, 3, true, OL_QUANT_TABLE_TERNARY),
    LEARNED(OL_QUANT_STQ1_0, "stq1_0", "STQ1_0", 5, 1, 32, 4, false),
    LEARNED(OL_QUANT_IQ1_S, "iq1_s", "IQ1_S", 8, 1, 256, 8, false),
    LEARNED(OL_QUANT_AQLM, "aqlm", "AQLM", 8, 2, 256, 8, false),
    LEARNED(OL_QUANT_QUIP_SHARP, "quip_sharp", "QUIP_SHARP", 8, 1, 256, 8, true),
    AFFINE(OL_QUANT_SPQR, "spqr", "SPQR", 4, true, 0, false),
    LEARNED(OL_QUANT_SQUEEZELLM, "squeezellm", "SQUEEZELLM", 4, 1, 16, 1, false),
    FIXED(OL_QUANT_LOG, "log", "LOG", 4, 15, false, OL_QUANT_TABLE_LOG),
    FIXED(OL_QUANT_FP6_LLM, "fp6_llm", "FP6_LLM", 6, 64, false, OL_QUANT_TABLE_E3M2),
    FIXED(OL_QUANT_FP8_E4M3, "fp8_e4m3", "FP8_E4M3", 8, 254, false, OL_QUANT_TABLE_E4M3FN),
    FIXED(OL_QUANT_MXFP4, "mxfp4", "MXFP4", 4, 16, false, OL_QUANT_TABLE_E2M1),
    FIXED(OL_QUANT_MXFP6, "mxfp6", "MXFP6", 6, 64, false, OL_QUANT_TABLE_E3M2),
    FIXED(OL_QUANT_NVFP4, "nvfp4", "NVFP4", 4, 16, false, OL_QUANT_TABLE_E2M1),
    AFFINE(OL_QUANT_QUAROT, "quarot", "QUAROT", 4, true, 0, true),
    AFFINE(OL_QUANT_SMOOTHQUANT, "smoothquant", "SMOOTHQUANT", 8, true, 0, true),
    CASTROW(OL_QUANT_TILED_FLOAT, "tiled_float", "TILED_FLOAT"),
    CASTROW(OL_QUANT_COLUMN_MAJOR, "column_major", "COLUMN_MAJOR"),
    ORTROW(OL_QUANT_ORT_MATMULNBITS_INT2, "ort_matmulnbits_int2", "ORT_MATMULNBITS_INT2", 2),
    ORTROW(OL_QUANT_ORT_MATMULNBITS_INT4, "ort_matmulnbits_int4", "ORT_MATMULNBITS_INT4", 4),
    ORTROW(OL_QUANT_ORT_MATMULNBITS_INT8, "ort_matmulnbits_int8", "ORT_MATMULNBITS_INT8", 8),
};

static const ol_quant_format format_list[OL_QUANT_FORMAT_COUNT] = {
    0,  1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
    22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41, 42};

static const char *const method_names[OL_QUANT_METHOD_COUNT] = {"affine", "codebook", "cast"};

/* ------------------------------------------------------------ entry points */

bool ol_quant_format_valid(ol_quant_format format) {
  return (int)format >= 0 && format < OL_QUANT_FORMAT_COUNT;
}

const ol_quant_profile *ol_quant_profile_info(ol_quant_format format) {
  return ol_quant_format_valid(format) ? &profiles[format] : NULL;
}

const char *ol_quant_format_name(ol_quant_format format) {
  return ol_quant_format_valid(format) ? profiles[format].name : NULL;
}

ol_status ol_quant_format_parse(const char *name, ol_quant_format *out) {
  if (!name || !out) return ol_error(OL_INVALID_ARGUMENT, "quantization format: NULL argument");
  for (int i = 0; i < OL_QUANT_FORMAT_COUNT; i++)
    if (strcmp(profiles[i].name, name) == 0) {
      *out = (ol_quant_format)i;
      return OL_OK;
    }
  return ol_error(OL_INVALID_ARGUMENT, "Unknown quantization format: '%s'", name);
}

const ol_quant_format *ol_quant_formats(void) { return format_list; }

const double *ol_quant_table_values(ol_quant_table table, uint32_t *count) {
  if ((int)table < 0 || table >= OL_QUANT_TABLE_COUNT) {
    *count = 0;
    return NULL;
  }
  *count = tables[table].count;
  return tables[table].values;
}

const char *ol_quant_method_name(ol_quant_method method) {
  return (int)method >= 0 && method < OL_QUANT_METHOD_COUNT ? method_names[method] : NULL;
}

size_t ol_quant_format_count(void) { return OL_QUANT_FORMAT_COUNT; }

ol_status ol_quant_format_get_info(ol_quant_format format, ol_quant_format_info *out) {
  const ol_quant_profile *row = ol_quant_profile_info(format);
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_quant_format_get_info: out is NULL");
  if (!row) return ol_error(OL_INVALID_ARGUMENT, "Unknown quantization format: %d", (int)format);
  *out = (ol_quant_format_info){row->name, row->enum_name, row->method, row->bits, row->ort};
  return OL_OK;
}
