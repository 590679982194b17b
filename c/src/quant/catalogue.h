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

/* ol_quant_format and ol_quant_method (the public enums) are in onnxlight.h. */

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
/* All formats in catalogue order (OL_QUANT_FORMAT_COUNT entries). */
const ol_quant_format *ol_quant_formats(void);

/* A fixed table's values in code order; NULL with *count = 0 for NONE/LEARNED. */
const double *ol_quant_table_values(ol_quant_table table, uint32_t *count);

/* "onnx_light.quantization.v1/" */
#define OL_QUANT_WIRE_PREFIX "onnx_light.quantization.v1/"

#endif
