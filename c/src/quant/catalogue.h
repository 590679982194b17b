/* The quantization catalogue as data: one row per profile (wire name, method,
 * code width, signedness, codebook geometry, fixed table, default zero point,
 * required extras). Adding a profile means adding a row, not editing switch
 * statements. The enum order is the upstream onnx-light order and is part of
 * the wire contract (wire-facts §3.1). */
#ifndef OL_QUANT_CATALOGUE_H
#define OL_QUANT_CATALOGUE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "onnxlight.h"

typedef enum ol_quant_format {
  OL_QUANT_INT8 = 0,
  OL_QUANT_INT8_PER_CHANNEL,
  OL_QUANT_INT4,
  OL_QUANT_GPTQ,
  OL_QUANT_AWQ,
  OL_QUANT_EETQ,
  OL_QUANT_MATMULNBITS,
  OL_QUANT_Q2_K,
  OL_QUANT_Q3_K,
  OL_QUANT_Q4_K,
  OL_QUANT_Q5_K,
  OL_QUANT_Q6_K,
  OL_QUANT_HQQ,
  OL_QUANT_EXL2,
  OL_QUANT_EXL3,
  OL_QUANT_NF4,
  OL_QUANT_IQ4_NL,
  OL_QUANT_BINARY,
  OL_QUANT_TERNARY,
  OL_QUANT_TQ1_0,
  OL_QUANT_TQ2_0,
  OL_QUANT_BITNET,
  OL_QUANT_PARETOQ,
  OL_QUANT_TEQUILA,
  OL_QUANT_STQ1_0,
  OL_QUANT_IQ1_S,
  OL_QUANT_AQLM,
  OL_QUANT_QUIP_SHARP,
  OL_QUANT_SPQR,
  OL_QUANT_SQUEEZELLM,
  OL_QUANT_LOG,
  OL_QUANT_FP6_LLM,
  OL_QUANT_FP8_E4M3,
  OL_QUANT_MXFP4,
  OL_QUANT_MXFP6,
  OL_QUANT_NVFP4,
  OL_QUANT_QUAROT,
  OL_QUANT_SMOOTHQUANT,
  OL_QUANT_TILED_FLOAT,
  OL_QUANT_COLUMN_MAJOR,
  OL_QUANT_ORT_MATMULNBITS_INT2,
  OL_QUANT_ORT_MATMULNBITS_INT4,
  OL_QUANT_ORT_MATMULNBITS_INT8,
  OL_QUANT_FORMAT_COUNT /* 43 */
} ol_quant_format;

/* Wire values of the block header's method entry. */
typedef enum ol_quant_method {
  OL_QUANT_AFFINE = 0,
  OL_QUANT_CODEBOOK = 1,
  OL_QUANT_CAST = 2,
  OL_QUANT_METHOD_COUNT
} ol_quant_method;

/* Fixed scalar tables the factory copies into each block's codebook. */
typedef enum ol_quant_table {
  OL_QUANT_TABLE_NONE = 0, /* affine, cast */
  OL_QUANT_TABLE_LEARNED,  /* codebook supplied by the caller */
  OL_QUANT_TABLE_NF4,
  OL_QUANT_TABLE_IQ4_NL,
  OL_QUANT_TABLE_BINARY,
  OL_QUANT_TABLE_TERNARY,
  OL_QUANT_TABLE_LOG,
  OL_QUANT_TABLE_E2M1,
  OL_QUANT_TABLE_E3M2,
  OL_QUANT_TABLE_E4M3FN,
  OL_QUANT_TABLE_COUNT
} ol_quant_table;

/* One catalogue row: the layout and parameters the factory starts from. */
typedef struct ol_quant_profile {
  ol_quant_format format;
  const char *name;      /* stable wire name: "int4", "ort_matmulnbits_int4" */
  const char *enum_name; /* upper-case name used by the JS API: "INT4" */
  ol_quant_method method;
  uint32_t bits;         /* code / index width, 1..16 */
  bool signed_codes;     /* raw header value (fixed tables clear it) */
  uint32_t books;
  uint32_t entries;      /* codebook entries (0 for affine/cast) */
  uint32_t vector_size;
  bool base3;            /* five ternary indices per byte */
  ol_dtype cast_type;    /* serialized for every method */
  double zero_point;     /* default block zero point */
  ol_quant_table table;
  bool needs_transform;  /* quarot, quip_sharp, smoothquant */
  bool ort;              /* ORT MatMulNBits input layout (separate factory) */
} ol_quant_profile;

/* The row for format, or NULL for a value outside the enum. */
const ol_quant_profile *ol_quant_profile_info(ol_quant_format format);
bool ol_quant_format_valid(ol_quant_format format);
/* The stable wire name, or NULL for an invalid value. */
const char *ol_quant_format_name(ol_quant_format format);
/* Case-sensitive; unknown names give OL_INVALID_ARGUMENT naming them. */
ol_status ol_quant_format_parse(const char *name, ol_quant_format *out);
/* All formats in catalogue order (OL_QUANT_FORMAT_COUNT entries). */
const ol_quant_format *ol_quant_formats(void);

/* A fixed table's values in code order; NULL with *count = 0 for NONE/LEARNED. */
const double *ol_quant_table_values(ol_quant_table table, uint32_t *count);
const char *ol_quant_method_name(ol_quant_method method);

/* "onnx_light.quantization.v1/" */
#define OL_QUANT_WIRE_PREFIX "onnx_light.quantization.v1/"

#endif
