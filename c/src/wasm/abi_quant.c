/* The wasm ABI of the quantization API (onnxlight.h, "quantization"): thin
 * exported wrappers, same conventions as abi.c. Plans, models and values
 * cross as handles; serialized messages as bytes the library allocated
 * (freed by JS with olw_ol_free). Counts and indices come from JS numbers
 * (doubles): u64 / index_of / i64 turn a value the integer type cannot
 * hold into an extreme one, which the library then rejects with its own
 * message. */
#include <emscripten/emscripten.h>
#include <stdlib.h>

#include "onnxlight.h"

#define OLW EMSCRIPTEN_KEEPALIVE

static uint64_t u64(double v) { return v >= 0 && v < 18446744073709551616.0 ? (uint64_t)v : UINT64_MAX; }
static size_t index_of(double v) { return v >= 0 && v < (double)SIZE_MAX ? (size_t)v : SIZE_MAX; }
static int64_t i64(double v) { return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN; }

/* ------------------------------------------------------------ formats */

OLW size_t olw_quant_format_count(void) { return ol_quant_format_count(); }
OLW int olw_quant_format_parse(const char *name, int *out) {
  ol_quant_format format = OL_QUANT_FORMAT_COUNT;
  ol_status s = ol_quant_format_parse(name, &format);
  *out = (int)format;
  return s;
}
/* ol_quant_format_get_info: names[0..1] = name, enum_name; numbers[0..2] =
 * method, bits, matmul_nbits. */
OLW int olw_quant_format_info(int format, const char **names, int32_t *numbers) {
  ol_quant_format_info info;
  ol_status s = ol_quant_format_get_info((ol_quant_format)format, &info);
  if (s != OL_OK) return s;
  names[0] = info.name;
  names[1] = info.enum_name;
  numbers[0] = (int32_t)info.method;
  numbers[1] = (int32_t)info.bits;
  numbers[2] = info.matmul_nbits;
  return OL_OK;
}
OLW const char *olw_quant_method_name(int method) { return ol_quant_method_name((ol_quant_method)method); }

/* ------------------------------------------------------------ plans */

OLW int olw_quant_make_plan(int format, double count, double block_size, ol_quant_plan **out) {
  return ol_quant_make_plan((ol_quant_format)format, u64(count), u64(block_size), out);
}
OLW int olw_quant_make_matmul_nbits_plan(int format, double k, double n, double block_size, ol_quant_plan **out) {
  return ol_quant_make_matmul_nbits_plan((ol_quant_format)format, u64(k), u64(n), u64(block_size), out);
}
OLW void olw_quant_plan_destroy(ol_quant_plan *plan) { ol_quant_plan_destroy(plan); }

/* out[0..7]: format, run count, permutation size, transform size, outlier
 * count, matrix rank, K, N. */
OLW void olw_quant_plan_info(const ol_quant_plan *plan, double *out) {
  const int64_t *indices;
  const double *forward, *inverse;
  size_t permutation, outliers, forward_count, inverse_count;
  uint32_t transform;
  int64_t dims[2] = {0, 0};
  ol_quant_plan_permutation(plan, &indices, &permutation);
  ol_quant_plan_outliers(plan, &indices, &outliers);
  ol_quant_plan_transform(plan, &transform, &forward, &forward_count, &inverse, &inverse_count);
  out[0] = ol_quant_plan_format(plan);
  out[1] = (double)ol_quant_plan_run_count(plan);
  out[2] = (double)permutation;
  out[3] = transform;
  out[4] = (double)outliers;
  out[5] = (double)ol_quant_plan_matrix_shape(plan, dims);
  out[6] = (double)dims[0];
  out[7] = (double)dims[1];
}
OLW int olw_quant_plan_set_format(ol_quant_plan *plan, int format) {
  return ol_quant_plan_set_format(plan, (ol_quant_format)format);
}
OLW int olw_quant_plan_set_matrix_shape(ol_quant_plan *plan, int rank, double k, double n) {
  const int64_t dims[2] = {i64(k), i64(n)};
  return ol_quant_plan_set_matrix_shape(plan, dims, rank < 0 ? SIZE_MAX : (size_t)rank);
}

/* Run r's layout (its OL_QUANT_HEADER_SIZE wire header entries), then its
 * block count. */
OLW int olw_quant_plan_run_layout(const ol_quant_plan *plan, double r, double *out) {
  ol_quant_layout layout;
  size_t blocks = 0;
  ol_status s = ol_quant_plan_run_layout(plan, index_of(r), &layout, &blocks);
  if (s != OL_OK) return s;
  int64_t header[OL_QUANT_HEADER_SIZE];
  ol_quant_layout_header(&layout, header);
  for (int i = 0; i < OL_QUANT_HEADER_SIZE; i++) out[i] = (double)header[i];
  out[OL_QUANT_HEADER_SIZE] = (double)blocks;
  return OL_OK;
}
/* Block b of run r: out[0..3] = scale, zero point, offset, codebook size;
 * *codebook points into the plan. */
OLW int olw_quant_plan_block(const ol_quant_plan *plan, double r, double b, double *out, const double **codebook) {
  ol_quant_block block;
  ol_status s = ol_quant_plan_block(plan, index_of(r), index_of(b), &block);
  if (s != OL_OK) return s;
  out[0] = block.scale;
  out[1] = block.zero_point;
  out[2] = block.offset;
  out[3] = (double)block.codebook_size;
  *codebook = block.codebook;
  return OL_OK;
}
OLW int olw_quant_plan_set_scales(ol_quant_plan *plan, double r, const double *scales, double count) {
  return ol_quant_plan_set_scales(plan, index_of(r), scales, index_of(count));
}
OLW int olw_quant_plan_set_zero_points(ol_quant_plan *plan, double r, const double *values, double count) {
  return ol_quant_plan_set_zero_points(plan, index_of(r), values, index_of(count));
}

/* ol_quant_plan_set_runs from flat arrays: count runs, each a wire header
 * (OL_QUANT_HEADER_SIZE doubles, parsed by ol_quant_layout_from_header) and a
 * block count; per block scale, zero point, offset and codebook size;
 * codebooks concatenated in block order (the blocks point into them). */
OLW int olw_quant_plan_set_runs(ol_quant_plan *plan, double count, const double *headers, const double *block_counts,
                                const double *params, const double *codebook_sizes, const double *codebooks) {
  size_t n = index_of(count), total = 0;
  for (size_t r = 0; r < n; r++) total += index_of(block_counts[r]);
  ol_quant_run *runs = calloc(n ? n : 1, sizeof *runs);
  ol_quant_block *blocks = calloc(total ? total : 1, sizeof *blocks);
  ol_status s = runs && blocks ? OL_OK : OL_OUT_OF_MEMORY;
  size_t block = 0, book = 0;
  for (size_t r = 0; r < n && s == OL_OK; r++) {
    int64_t header[OL_QUANT_HEADER_SIZE];
    for (int i = 0; i < OL_QUANT_HEADER_SIZE; i++) header[i] = i64(headers[r * OL_QUANT_HEADER_SIZE + i]);
    s = ol_quant_layout_from_header(header, &runs[r].layout);
    runs[r].blocks = blocks + block;
    runs[r].block_count = index_of(block_counts[r]);
    for (size_t b = 0; b < runs[r].block_count; b++, block++) {
      ol_quant_block *dst = &blocks[block];
      dst->scale = params[3 * block];
      dst->zero_point = params[3 * block + 1];
      dst->offset = params[3 * block + 2];
      dst->codebook_size = index_of(codebook_sizes[block]);
      dst->codebook = dst->codebook_size ? (double *)codebooks + book : NULL;
      book += dst->codebook_size;
    }
  }
  if (s == OL_OK) s = ol_quant_plan_set_runs(plan, runs, n);
  free(runs);
  free(blocks);
  return s;
}

/* out[0..7]: pointer and count of the permutation (int64), forward and
 * inverse (doubles) and outliers (int64), read in place; out[8]: the
 * transform size. */
OLW void olw_quant_plan_arrays(const ol_quant_plan *plan, uint32_t *out) {
  const int64_t *permutation, *outliers;
  const double *forward, *inverse;
  size_t np, nf, ni, no;
  uint32_t size;
  ol_quant_plan_permutation(plan, &permutation, &np);
  ol_quant_plan_transform(plan, &size, &forward, &nf, &inverse, &ni);
  ol_quant_plan_outliers(plan, &outliers, &no);
  out[0] = (uint32_t)(uintptr_t)permutation, out[1] = (uint32_t)np;
  out[2] = (uint32_t)(uintptr_t)forward, out[3] = (uint32_t)nf;
  out[4] = (uint32_t)(uintptr_t)inverse, out[5] = (uint32_t)ni;
  out[6] = (uint32_t)(uintptr_t)outliers, out[7] = (uint32_t)no;
  out[8] = size;
}
OLW int olw_quant_plan_set_permutation(ol_quant_plan *plan, const int64_t *indices, size_t count) {
  return ol_quant_plan_set_permutation(plan, indices, count);
}
OLW int olw_quant_plan_set_outliers(ol_quant_plan *plan, const int64_t *indices, size_t count) {
  return ol_quant_plan_set_outliers(plan, indices, count);
}
OLW int olw_quant_plan_set_transform(ol_quant_plan *plan, double size, const double *forward, size_t forward_count,
                                     const double *inverse, size_t inverse_count) {
  return ol_quant_plan_set_transform(plan, size >= 0 && size <= UINT32_MAX ? (uint32_t)size : UINT32_MAX, forward,
                                     forward_count, inverse, inverse_count);
}
OLW int olw_quant_plan_set_transform_size(ol_quant_plan *plan, double size) {
  return ol_quant_plan_set_transform_size(plan, size >= 0 && size <= UINT32_MAX ? (uint32_t)size : UINT32_MAX);
}
OLW int olw_quant_plan_set_forward(ol_quant_plan *plan, const double *values, size_t count) {
  return ol_quant_plan_set_forward(plan, values, count);
}
OLW int olw_quant_plan_set_inverse(ol_quant_plan *plan, const double *values, size_t count) {
  return ol_quant_plan_set_inverse(plan, values, count);
}

/* ------------------------------------------------------------ encoding and decoding */

OLW int olw_quant_calibrate(ol_quant_plan *plan, const ol_value *tensor) { return ol_quant_calibrate(plan, tensor); }
OLW int olw_quant_make_type(const ol_quant_plan *plan, void **bytes, size_t *size) {
  return ol_quant_make_type(plan, bytes, size);
}
OLW int olw_quant_quantize(const ol_quant_plan *plan, const ol_value *tensor, const char *name, ol_value **out) {
  return ol_quant_quantize(plan, tensor, name, out);
}
OLW int olw_quant_dequantize(const ol_value *encoded, const ol_model *model, ol_value **out) {
  return ol_quant_dequantize(encoded, model, out);
}
OLW int olw_quant_quantize_tensor_proto(const ol_quant_plan *plan, const void *bytes, size_t size, void **out,
                                        size_t *out_size) {
  return ol_quant_quantize_tensor_proto(plan, bytes, size, out, out_size);
}
OLW int olw_quant_dequantize_tensor_proto(const void *bytes, size_t size, const ol_model *model, void **out,
                                          size_t *out_size) {
  return ol_quant_dequantize_tensor_proto(bytes, size, model, out, out_size);
}
OLW int olw_quant_value_format(const ol_value *encoded, int *out) {
  ol_quant_format format = OL_QUANT_FORMAT_COUNT;
  ol_status s = ol_quant_value_format(encoded, &format);
  *out = (int)format;
  return s;
}

/* ol_quant_export_matmul_nbits: tensors[0..2] = new references to B,
 * scales, zero_points (0: implicit); attributes[0..3] = K, N, bits,
 * block_size. */
OLW int olw_quant_export_matmul_nbits(const ol_value *encoded, const ol_model *model, ol_value **tensors,
                                      double *attributes) {
  ol_quant_matmul_nbits inputs;
  ol_status s = ol_quant_export_matmul_nbits(encoded, model, &inputs);
  if (s != OL_OK) return s;
  tensors[0] = inputs.weights;
  tensors[1] = inputs.scales;
  tensors[2] = inputs.zero_points;
  attributes[0] = (double)inputs.k;
  attributes[1] = (double)inputs.n;
  attributes[2] = (double)inputs.bits;
  attributes[3] = (double)inputs.block_size;
  return OL_OK;
}

/* ------------------------------------------------------------ shared parameter sets */

/* params: 8 value handles in ol_quant_parameters order (0: absent). */
OLW int olw_quant_add_parameters(const ol_model *model, const char *name, const void *storage, size_t storage_size,
                                 int dtype, const int64_t *dims, size_t rank, const ol_value *const *params,
                                 ol_model **out_model, void **out_compact, size_t *out_compact_size) {
  const ol_quant_parameters p = {params[0], params[1], params[2], params[3],
                                 params[4], params[5], params[6], params[7]};
  return ol_quant_add_parameters(model, name, storage, storage_size, (ol_dtype)dtype, dims, rank, &p, out_model,
                                 out_compact, out_compact_size);
}
OLW int olw_quant_quantize_shared(const ol_value *tensor, const ol_model *model, const char *set_name,
                                  const char *value_name, ol_value **out) {
  return ol_quant_quantize_shared(tensor, model, set_name, value_name, out);
}
OLW int olw_quant_materialize(const ol_value *compact, const ol_model *model, ol_value **out) {
  return ol_quant_materialize(compact, model, out);
}
OLW int olw_quant_bind_model(ol_value *encoded, const ol_model *model) { return ol_quant_bind_model(encoded, model); }
OLW int olw_quant_bind_session(ol_value *encoded, const ol_session *session) {
  return ol_quant_bind_session(encoded, session);
}
