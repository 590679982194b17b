/* Element types as data: one row per ONNX dtype, plus exact conversions for
 * the narrow floating formats (fp16, bf16, the fp8 family, fp4). */
#ifndef OL_CORE_DTYPE_H
#define OL_CORE_DTYPE_H
#include <stdbool.h>
#include <stdint.h>
#include "onnxlight.h"

typedef struct ol_dtype_traits {
  const char *name;      /* JS name: "float32", "int64", ... */
  const char *onnx_name; /* TensorProto enum name: "FLOAT", "INT64", ... */
  int bits;              /* storage bits per element (0: strings, undefined) */
  bool is_float;         /* any floating format (incl. fp16/bf16/fp8/fp4) */
  bool is_signed;        /* signed integers and floats */
  bool is_integer;       /* integer codes incl. bool and 2/4-bit */
} ol_dtype_traits;

const ol_dtype_traits *ol_dtype_info(ol_dtype dtype);
bool ol_dtype_valid(ol_dtype dtype);
/* Bytes for count elements (rounds sub-byte types up) into *out; false when
 * they do not fit in size_t (4 GiB and more in wasm). */
bool ol_dtype_storage_bytes_checked(ol_dtype dtype, int64_t count, size_t *out);
/* The same, SIZE_MAX when they do not fit: an allocation of it fails. */
size_t ol_dtype_storage_bytes(ol_dtype dtype, int64_t count);
/* Size of one element in bytes for byte-aligned types, 0 otherwise. */
size_t ol_dtype_size(ol_dtype dtype);
ol_dtype ol_dtype_from_name(const char *name);

float ol_f16_to_f32(uint16_t h);
uint16_t ol_f32_to_f16(float f);
float ol_bf16_to_f32(uint16_t b);
uint16_t ol_f32_to_bf16(float f);
/* FLOAT8* and FLOAT4E2M1 codes. saturate follows ONNX Cast's attribute. */
float ol_minifloat_to_f32(ol_dtype dtype, uint8_t code);
uint8_t ol_f32_to_minifloat(ol_dtype dtype, float value, bool saturate);

/* Sub-byte integers: element i of a packed array (LSB-first nibble/crumb). */
int32_t ol_packed_get(ol_dtype dtype, const uint8_t *data, int64_t index);
void ol_packed_set(ol_dtype dtype, uint8_t *data, int64_t index, int32_t value);

#endif
