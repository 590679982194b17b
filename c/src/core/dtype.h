/* Element types as data: one row per ONNX dtype, plus exact conversions for
 * the narrow floating formats (fp16, bf16, the fp8 family, fp4). */
#ifndef OL_CORE_DTYPE_H
#define OL_CORE_DTYPE_H
#include <stdbool.h>
#include <stdint.h>
#include "onnxlight.h"

/* Converters between an element type and float, as data (ggml's type
 * traits): a kernel that computes in float32 reads and writes any type
 * through its row, never through a switch of its own.
 *   element: element i of an array (packed sub-byte types too);
 *   row:     n elements from the start of an array (a row of a sub-byte
 *            type starts at a byte).
 * Floating formats round to nearest even; float8/float4 saturate (the ONNX
 * default: callers of Cast/QuantizeLinear's saturate = 0 use
 * ol_f32_to_minifloat). Integers and bool read exactly (to_float rounds
 * above 2^24) and are written only from double (C conversion, as
 * ol_tensor_set_double always did). Row and element converters give the
 * same bits (tests/c/test_dtype.c). NULL: no such conversion. */
typedef float (*ol_to_float_fn)(const void *data, int64_t i);
typedef double (*ol_to_double_fn)(const void *data, int64_t i);
typedef void (*ol_from_float_fn)(void *data, int64_t i, float value);
typedef void (*ol_from_double_fn)(void *data, int64_t i, double value);
typedef void (*ol_load_row_fn)(const void *src, int64_t n, float *dst);
typedef void (*ol_store_row_fn)(const float *src, int64_t n, void *dst);

typedef struct ol_dtype_traits {
  const char *name;      /* JS name: "float32", "int64", ... */
  const char *onnx_name; /* TensorProto enum name: "FLOAT", "INT64", ... */
  int bits;              /* storage bits per element (0: strings, undefined) */
  bool is_float;         /* any floating format (incl. fp16/bf16/fp8/fp4) */
  bool is_signed;        /* signed integers and floats */
  bool is_integer;       /* integer codes incl. bool and 2/4-bit */
  /* Kernels compute it in float32: float32 itself, and float16/bfloat16
   * widened on load and rounded on store through the converters below. */
  bool computes_f32;
  ol_to_float_fn to_float;
  ol_to_double_fn to_double;
  ol_from_float_fn from_float;   /* floating formats only */
  ol_from_double_fn from_double; /* numeric types but packed integers */
  ol_load_row_fn load_row;
  ol_store_row_fn store_row;     /* floating formats only */
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
/* float32, float16 or bfloat16: computed in float32 (traits.computes_f32). */
bool ol_dtype_computes_f32(ol_dtype dtype);
/* float16 or bfloat16: computed in float32 through the row converters. */
bool ol_dtype_widens(ol_dtype dtype);
/* float16, bfloat16, float32 or float64: the floating types operators
 * compute with (float8 and float4 are storage formats). */
bool ol_dtype_is_arith_float(ol_dtype dtype);


/* Single conversions; the rows in the table give the same bits. */
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
