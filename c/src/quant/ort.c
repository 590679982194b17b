/* ORT MatMulNBits input layout: encode, decode and export (see ort.h). */
#include "quant/ort.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "quant/codec.h"
#include "quant/wire_proto.h"

#define INVALID(...) ol_error(OL_INVALID_ARGUMENT, __VA_ARGS__)

/* ============================================================ geometry */

typedef struct ort_storage {
  uint64_t k, n, block_size, groups, blob;
  uint32_t bits;
  ol_dtype type;      /* source dtype: scales and float zero points */
  ol_dtype zero_type; /* UNDEFINED (implicit), UINT8 (packed) or type */
  uint64_t weight_bytes, scale_bytes, zero_row_bytes, zero_bytes, total;
} ort_storage;

static ol_status storage_init(ort_storage *st, ol_quant_format format, int rank,
                              const int64_t *dims, ol_dtype type, uint64_t block_size,
                              ol_dtype zero_type) {
  memset(st, 0, sizeof(*st));
  const ol_quant_profile *row = ol_quant_profile_info(format);
  if (!row || !row->ort) return INVALID("Expected an ORT MatMulNBits quantization format");
  if (rank != 2 || dims[0] <= 0 || dims[1] <= 0)
    return INVALID("ORT MatMulNBits requires a nonempty rank-two [K,N] tensor");
  if (block_size < 16 || block_size > UINT32_MAX || (block_size & (block_size - 1)) != 0)
    return INVALID("ORT MatMulNBits block_size must be a power of two in [16, UINT32_MAX] (got %llu)",
                   (unsigned long long)block_size);
  if (type != OL_DTYPE_FLOAT && type != OL_DTYPE_FLOAT16 && type != OL_DTYPE_BFLOAT16)
    return INVALID("ORT MatMulNBits requires FLOAT, FLOAT16 or BFLOAT16 weights");
  if (zero_type != OL_DTYPE_UNDEFINED && zero_type != OL_DTYPE_UINT8 && zero_type != type)
    return INVALID("Invalid ORT MatMulNBits zero-point dtype %d", (int)zero_type);
  st->k = (uint64_t)dims[0];
  st->n = (uint64_t)dims[1];
  st->block_size = block_size;
  st->bits = row->bits;
  st->type = type;
  st->zero_type = zero_type;
  st->groups = st->k / block_size + (st->k % block_size != 0);
  st->blob = block_size * st->bits / 8;
  if (st->groups > UINT64_MAX / st->n || st->n * st->groups > (UINT64_MAX / 4) / st->blob)
    return INVALID("ORT MatMulNBits payload size overflow");
  uint64_t per_byte = 8 / st->bits;
  st->weight_bytes = st->n * st->groups * st->blob;
  st->scale_bytes = st->n * st->groups * ol_quant_float_bytes(type);
  st->zero_row_bytes = zero_type == OL_DTYPE_UINT8 ? st->groups / per_byte + (st->groups % per_byte != 0)
                       : zero_type == OL_DTYPE_UNDEFINED ? 0
                                                         : st->groups * ol_quant_float_bytes(type);
  st->zero_bytes = st->n * st->zero_row_bytes;
  st->total = st->weight_bytes + st->scale_bytes + st->zero_bytes;
  return OL_OK;
}

static ol_status schema(const ort_storage *st, ol_quant_format format, Onnx__StructTypeProto **out) {
  char name[96];
  snprintf(name, sizeof(name), OL_QUANT_WIRE_PREFIX "%s", ol_quant_format_name(format));
  Onnx__StructTypeProto *root = ol_qw_new_structure(name);
  if (!root) return ol_error(OL_OUT_OF_MEMORY, "out of memory building an ORT descriptor");
  const int64_t parameters[2] = {st->bits, (int64_t)st->block_size};
  const int64_t b_dims[3] = {(int64_t)st->n, (int64_t)st->groups, (int64_t)st->blob};
  const int64_t s_dims[2] = {(int64_t)st->n, (int64_t)st->groups};
  const int64_t z_dims[2] = {(int64_t)st->n, (int64_t)(st->zero_type == OL_DTYPE_UINT8
                                                           ? st->zero_row_bytes : st->groups)};
  bool ok = ol_qw_add_field(root, "parameters", NULL, ol_qw_int64_constant(parameters, 2, true)) &&
            ol_qw_add_field(root, "B", ol_qw_tensor_type(OL_DTYPE_UINT8, 3, b_dims), NULL) &&
            ol_qw_add_field(root, "scales", ol_qw_tensor_type(st->type, 2, s_dims), NULL) &&
            (st->zero_type == OL_DTYPE_UNDEFINED ||
             ol_qw_add_field(root, "zero_points", ol_qw_tensor_type(st->zero_type, 2, z_dims), NULL));
  if (!ok) {
    ol_quant_type_free(root);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory building an ORT descriptor");
  }
  *out = root;
  return OL_OK;
}

/* value rounded to dtype (rejecting nonfinite values and overflow). */
static ol_status round_to(ol_dtype dtype, double value, double *out) {
  uint8_t bytes[8];
  OL_TRY(ol_quant_write_floats(dtype, &value, 1, bytes));
  return ol_quant_read_floats(dtype, bytes, 1, out);
}

/* Sub-byte code j of a packed LSB-first array. */
static uint32_t get_code(const uint8_t *data, uint64_t j, uint32_t bits) {
  return (data[j * bits / 8] >> ((j * bits) % 8)) & ((1u << bits) - 1);
}
static void set_code(uint8_t *data, uint64_t j, uint32_t bits, uint32_t code) {
  data[j * bits / 8] |= (uint8_t)(code << ((j * bits) % 8));
}

/* ============================================================ encode */

static ol_status check_plan(const ol_quant_plan *plan, int rank, const int64_t *dims,
                            ort_storage *st, ol_dtype dtype) {
  if (plan->matrix_rank != 2 || rank != 2 || dims[0] != plan->matrix_shape[0] ||
      dims[1] != plan->matrix_shape[1])
    return INVALID("ORT MatMulNBits source shape must match the plan's [K,N]");
  if (plan->run_count != 1) return INVALID("ORT MatMulNBits requires one shared block layout");
  if (plan->permutation_size || plan->transform_size || plan->forward_size || plan->inverse_size ||
      plan->outlier_count)
    return INVALID("ORT MatMulNBits does not support permutations, transforms or outliers");
  const ol_quant_run *run = &plan->runs[0];
  OL_TRY(storage_init(st, plan->format, rank, dims, dtype, run->layout.count, OL_DTYPE_UNDEFINED));
  ol_quant_layout expected = {(uint32_t)st->block_size, OL_QUANT_AFFINE, st->bits, false, 1, 0, 1,
                              false, OL_DTYPE_FLOAT16};
  int64_t a[OL_QUANT_HEADER_SIZE], b[OL_QUANT_HEADER_SIZE];
  ol_quant_layout_header(&run->layout, a);
  ol_quant_layout_header(&expected, b);
  if (memcmp(a, b, sizeof(a)) != 0)
    return INVALID("ORT MatMulNBits requires a uniform unsigned affine layout");
  if (run->block_count != st->n * st->groups)
    return INVALID("ORT MatMulNBits requires N * ceil(K/block_size) = %llu parameter blocks (got %zu)",
                   (unsigned long long)(st->n * st->groups), run->block_count);
  return OL_OK;
}

ol_status ol_quant_ort_calibrate(ol_quant_plan *plan, const double *values, uint64_t count) {
  if (plan->matrix_rank != 2)
    return INVALID("ORT MatMulNBits calibration needs the plan's [K, N] matrix shape");
  const uint64_t k = (uint64_t)plan->matrix_shape[0], n = (uint64_t)plan->matrix_shape[1];
  if (plan->matrix_shape[0] < 0 || plan->matrix_shape[1] < 0 || (n && k > UINT64_MAX / n) || k * n != count)
    return INVALID("the plan is for a [%lld, %lld] matrix, the tensor has %llu elements",
                   (long long)plan->matrix_shape[0], (long long)plan->matrix_shape[1], (unsigned long long)count);
  if (plan->run_count != 1 || plan->runs[0].layout.count == 0)
    return INVALID("ORT MatMulNBits requires one shared block layout");
  ol_quant_run *run = &plan->runs[0];
  const uint64_t bs = run->layout.count, groups = (k + bs - 1) / bs;
  if (run->block_count != n * groups)
    return INVALID("ORT MatMulNBits requires N * ceil(K/block_size) = %llu parameter blocks (got %zu)",
                   (unsigned long long)(n * groups), run->block_count);
  const double maximum = ldexp(1.0, (int)run->layout.bits) - 1;
  for (uint64_t col = 0; col < n; col++)
    for (uint64_t g = 0; g < groups; g++) {
      ol_quant_block *b = &run->blocks[col * groups + g];
      double up = maximum - b->zero_point, down = b->zero_point, scale = 0;
      for (uint64_t r = g * bs; r < (g + 1) * bs && r < k; r++) {
        double value = values[r * n + col], ratio = 0;
        if (!isfinite(value))
          return INVALID("Quantization input must be finite (row %llu, column %llu)", (unsigned long long)r,
                         (unsigned long long)col);
        if (value > 0 && up > 0) ratio = value / up;
        if (value < 0 && down > 0) ratio = -value / down;
        if (ratio > scale) scale = ratio;
      }
      b->scale = scale > 0 && isfinite(scale) ? scale : 1.0;
    }
  return OL_OK;
}

/* Rounded scales/zero points and the zero-point storage choice. */
static ol_status effective_parameters(const ol_quant_run *run, ort_storage *st, double *scales,
                                      double *zeros) {
  const double midpoint = ldexp(1, (int)st->bits - 1), maximum = ldexp(1, (int)st->bits) - 1;
  bool implicit = true, packed = true;
  for (size_t i = 0; i < run->block_count; i++) {
    const ol_quant_block *b = &run->blocks[i];
    if (b->offset != 0 || b->codebook_size != 0)
      return INVALID("ORT MatMulNBits does not support offsets or codebooks (block %zu)", i);
    ol_status s = round_to(st->type, b->scale, &scales[i]);
    if (s == OL_OK) s = round_to(st->type, b->zero_point, &zeros[i]);
    if (s != OL_OK) return ol_error_wrap(s, "ORT MatMulNBits block %zu", i);
    if (scales[i] == 0 && b->scale != 0)
      return INVALID("ORT MatMulNBits scale %g underflows the input dtype (block %zu)", b->scale, i);
    implicit = implicit && zeros[i] == midpoint;
    packed = packed && zeros[i] >= 0 && zeros[i] <= maximum && trunc(zeros[i]) == zeros[i];
  }
  st->zero_type = implicit ? OL_DTYPE_UNDEFINED : packed ? OL_DTYPE_UINT8 : st->type;
  return OL_OK;
}

/* Scales, then zero points (in their storage choice), at dst. */
static ol_status write_parameters(const ort_storage *st, const double *scales, const double *zeros,
                                  uint8_t *dst) {
  uint8_t *zero_bytes = dst + st->scale_bytes;
  for (uint64_t i = 0; i < st->n * st->groups; i++)
    OL_TRY(ol_quant_write_floats(st->type, &scales[i], 1, dst + i * ol_quant_float_bytes(st->type)));
  for (uint64_t col = 0; st->zero_type != OL_DTYPE_UNDEFINED && col < st->n; col++)
    for (uint64_t g = 0; g < st->groups; g++) {
      double z = zeros[col * st->groups + g];
      if (st->zero_type == OL_DTYPE_UINT8)
        set_code(zero_bytes + col * st->zero_row_bytes, g, st->bits, (uint32_t)z);
      else
        OL_TRY(ol_quant_write_floats(st->type, &z, 1,
                                     zero_bytes + (col * st->groups + g) * ol_quant_float_bytes(st->type)));
    }
  return OL_OK;
}

static ol_status write_payload(const ort_storage *st, const double *src, const double *scales,
                               const double *zeros, uint8_t *payload) {
  const double maximum = ldexp(1, (int)st->bits) - 1;
  uint8_t *weights = payload;
  uint8_t check[8];
  for (uint64_t col = 0; col < st->n; col++)
    for (uint64_t g = 0; g < st->groups; g++) {
      uint64_t index = col * st->groups + g;
      for (uint64_t j = 0; j < st->block_size; j++) {
        uint64_t row = g * st->block_size + j;
        if (row >= st->k) continue; /* zero tail codes */
        double v = src[row * st->n + col];
        if (!isfinite(v)) return INVALID("Quantization input must be finite (row %llu, column %llu)",
                                         (unsigned long long)row, (unsigned long long)col);
        if (scales[index] == 0 && v != 0)
          return INVALID("ORT MatMulNBits zero scale requires an all-zero source block");
        double normalized = scales[index] == 0 ? zeros[index] : v / scales[index] + zeros[index];
        double clamped = normalized < 0 ? 0 : normalized > maximum ? maximum : normalized;
        uint32_t code = (uint32_t)ol_quant_round_half_even(clamped);
        double back = ((double)code - zeros[index]) * scales[index];
        ol_status s = ol_quant_write_floats(st->type, &back, 1, check);
        if (s != OL_OK) return ol_error_wrap(s, "Encoding rejects this reconstruction");
        set_code(weights + index * st->blob, j, st->bits, code);
      }
    }
  return write_parameters(st, scales, zeros, payload + st->weight_bytes);
}

ol_status ol_quant_ort_parameters(const ol_quant_plan *plan, ol_dtype dtype,
                                  Onnx__StructTypeProto **type, uint8_t **tail, size_t *tail_size,
                                  uint64_t *weight_bytes) {
  *type = NULL;
  *tail = NULL;
  *tail_size = 0;
  *weight_bytes = 0;
  ort_storage st;
  OL_TRY(check_plan(plan, 2, plan->matrix_shape, &st, dtype));
  size_t blocks = plan->runs[0].block_count;
  double *scales = ol_xmalloc(blocks * sizeof(double)), *zeros = ol_xmalloc(blocks * sizeof(double));
  ol_status s = scales && zeros ? OL_OK : OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = effective_parameters(&plan->runs[0], &st, scales, zeros);
  if (s == OL_OK)
    s = storage_init(&st, plan->format, 2, plan->matrix_shape, dtype, st.block_size, st.zero_type);
  size_t size = (size_t)(st.scale_bytes + st.zero_bytes);
  if (s == OL_OK && !(*tail = calloc(1, size ? size : 1))) s = OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = write_parameters(&st, scales, zeros, *tail);
  if (s == OL_OK) s = schema(&st, plan->format, type);
  free(scales), free(zeros);
  if (s != OL_OK) {
    free(*tail);
    *tail = NULL;
    return s;
  }
  *tail_size = size;
  *weight_bytes = st.weight_bytes;
  return OL_OK;
}

ol_status ol_quant_ort_encode_proto(const ol_quant_plan *plan, ol_dtype dtype, const void *data,
                                    int rank, const int64_t *dims, const char *name,
                                    Onnx__EncodedValueProto **out) {
  *out = NULL;
  ort_storage st;
  OL_TRY(check_plan(plan, rank, dims, &st, dtype));
  size_t blocks = plan->runs[0].block_count;
  double *scales = ol_xmalloc(blocks * sizeof(double)), *zeros = ol_xmalloc(blocks * sizeof(double));
  double *src = ol_xmalloc((size_t)(st.k * st.n) * sizeof(double));
  uint8_t *payload = NULL;
  Onnx__StructTypeProto *root = NULL;
  ol_status s = scales && zeros && src ? OL_OK : OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = effective_parameters(&plan->runs[0], &st, scales, zeros);
  if (s == OL_OK) s = storage_init(&st, plan->format, rank, dims, dtype, st.block_size, st.zero_type);
  if (s == OL_OK) s = ol_quant_read_floats(dtype, data, st.k * st.n, src);
  if (s == OL_OK && !(payload = calloc(1, (size_t)st.total))) s = OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = write_payload(&st, src, scales, zeros, payload);
  if (s == OL_OK) s = schema(&st, plan->format, &root);
  Onnx__EncodedValueProto *ev = s == OL_OK ? NEW(Onnx__EncodedValueProto, ONNX__ENCODED_VALUE_PROTO__INIT) : NULL;
  Onnx__TypeProto *logical = s == OL_OK ? ol_qw_tensor_type(dtype, 2, dims) : NULL;
  char *copy = s == OL_OK && name ? ol_strdup(name) : NULL;
  if (s == OL_OK && (!ev || !logical || (name && !copy)))
    s = ol_error(OL_OUT_OF_MEMORY, "out of memory building an encoded value");
  free(scales), free(zeros), free(src);
  if (s != OL_OK) {
    free(payload), free(ev), free(copy);
    ol_quant_type_free(root);
    if (logical) onnx__type_proto__free_unpacked(logical, NULL);
    return s;
  }
  ev->layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  ev->struct_type = root;
  ev->logical_type = logical;
  ev->has_raw_data = 1;
  ev->raw_data.data = payload;
  ev->raw_data.len = (size_t)st.total;
  ev->name = copy;
  *out = ev;
  return OL_OK;
}

/* ============================================================ decode */

/* Validates descriptor and payload; *payload points into value's raw_data. */
static ol_status parse(const Onnx__EncodedValueProto *value, const Onnx__StructTypeProto *root,
                       ol_quant_format format, ol_quant_decoded *logical, ort_storage *st,
                       const uint8_t **payload) {
  OL_TRY(ol_qw_logical_tensor(value, logical));
  const field_t *params = NULL;
  OL_TRY(ol_qw_get_field(root, 0, "parameters", &params));
  const Onnx__TensorProto *p =
      params->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT
          ? params->constant : NULL;
  const ol_quant_profile *row = ol_quant_profile_info(format);
  if (!p || p->n_int64_data != 2 || p->int64_data[0] != (int64_t)row->bits || p->int64_data[1] <= 0)
    return INVALID("Invalid ORT MatMulNBits layout parameters");
  ol_dtype zero_type = OL_DTYPE_UNDEFINED;
  if (root->structure->n_field > 3) {
    const field_t *z = NULL;
    OL_TRY(ol_qw_get_field(root, 3, "zero_points", &z));
    if (z->content_case != ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_TYPE || !z->type ||
        z->type->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE)
      return INVALID("Invalid ORT MatMulNBits zero-point field");
    zero_type = (ol_dtype)z->type->tensor_type->elem_type;
  }
  OL_TRY(storage_init(st, format, logical->rank, logical->dims, logical->dtype,
                      (uint64_t)p->int64_data[1], zero_type));
  Onnx__StructTypeProto *expected;
  OL_TRY(schema(st, format, &expected));
  ol_status s = ol_qw_same_descriptor(root, expected);
  ol_quant_type_free(expected);
  OL_TRY(s);
  if (ol_quant_payload_unloaded(value))
    return INVALID("Load external encoded data before dequantization");
  if (!value->has_raw_data || value->raw_data.len != st->total)
    return INVALID("ORT MatMulNBits payload size mismatch (%zu bytes, expected %llu)",
                   value->has_raw_data ? value->raw_data.len : 0, (unsigned long long)st->total);
  const uint8_t *data = value->raw_data.data;
  const uint8_t *scales = data + st->weight_bytes, *zeros = scales + st->scale_bytes;
  size_t width = ol_quant_float_bytes(st->type);
  for (uint64_t i = 0; i < st->n * st->groups; i++) {
    double v;
    ol_quant_read_floats(st->type, scales + i * width, 1, &v);
    if (!isfinite(v)) return INVALID("Nonfinite ORT MatMulNBits scale (block %llu)", (unsigned long long)i);
    if (st->zero_type == st->type) {
      ol_quant_read_floats(st->type, zeros + i * width, 1, &v);
      if (!isfinite(v)) return INVALID("Nonfinite ORT MatMulNBits zero point");
    }
  }
  /* tail codes past K and unused zero-point bits must be zero */
  for (uint64_t col = 0; col < st->n; col++) {
    const uint8_t *last = data + (col * st->groups + st->groups - 1) * st->blob;
    for (uint64_t j = st->k - (st->groups - 1) * st->block_size; j < st->block_size; j++)
      if (get_code(last, j, st->bits))
        return INVALID("Nonzero ORT MatMulNBits weight tail code (column %llu)", (unsigned long long)col);
    if (st->zero_type == OL_DTYPE_UINT8)
      for (uint64_t g = st->groups; g < st->zero_row_bytes * (8 / st->bits); g++)
        if (get_code(zeros + col * st->zero_row_bytes, g, st->bits))
          return INVALID("Nonzero ORT MatMulNBits zero-point padding (column %llu)", (unsigned long long)col);
  }
  *payload = data;
  return OL_OK;
}

ol_status ol_quant_ort_decode_proto(const Onnx__EncodedValueProto *value,
                                    const Onnx__StructTypeProto *root, ol_quant_format format,
                                    ol_quant_decoded *out) {
  ort_storage st;
  const uint8_t *data;
  OL_TRY(parse(value, root, format, out, &st, &data));
  out->values = ol_xmalloc((size_t)out->count * sizeof(double));
  if (!out->values) return OL_OUT_OF_MEMORY;
  const uint8_t *scales = data + st.weight_bytes, *zeros = scales + st.scale_bytes;
  size_t width = ol_quant_float_bytes(st.type);
  for (uint64_t col = 0; col < st.n; col++)
    for (uint64_t row = 0; row < st.k; row++) {
      uint64_t g = row / st.block_size, index = col * st.groups + g;
      double scale, zero = ldexp(1, (int)st.bits - 1);
      ol_quant_read_floats(st.type, scales + index * width, 1, &scale);
      if (st.zero_type == OL_DTYPE_UINT8) zero = get_code(zeros + col * st.zero_row_bytes, g, st.bits);
      else if (st.zero_type != OL_DTYPE_UNDEFINED) ol_quant_read_floats(st.type, zeros + index * width, 1, &zero);
      uint32_t code = get_code(data + index * st.blob, row % st.block_size, st.bits);
      out->values[row * st.n + col] = ((double)code - zero) * scale;
    }
  return OL_OK;
}

/* ============================================================ export */

static Onnx__TensorProto *raw_tensor(const char *name, ol_dtype dtype, int rank, const int64_t *dims,
                                     const uint8_t *bytes, uint64_t size) {
  Onnx__TensorProto *t = NEW(Onnx__TensorProto, ONNX__TENSOR_PROTO__INIT);
  if (!t) return NULL;
  t->name = ol_strdup(name);
  t->dims = malloc((size_t)rank * sizeof(int64_t));
  t->raw_data.data = malloc(size ? (size_t)size : 1);
  if (!t->name || !t->dims || !t->raw_data.data) {
    onnx__tensor_proto__free_unpacked(t, NULL);
    return NULL;
  }
  memcpy(t->dims, dims, (size_t)rank * sizeof(int64_t));
  t->n_dims = (size_t)rank;
  t->has_data_type = 1;
  t->data_type = dtype;
  memcpy(t->raw_data.data, bytes, (size_t)size);
  t->raw_data.len = (size_t)size;
  t->has_raw_data = 1;
  return t;
}

void ol_quant_matmul_nbits_inputs_clear(ol_quant_matmul_nbits_inputs *in) {
  if (!in) return;
  if (in->weights) onnx__tensor_proto__free_unpacked(in->weights, NULL);
  if (in->scales) onnx__tensor_proto__free_unpacked(in->scales, NULL);
  if (in->zero_points) onnx__tensor_proto__free_unpacked(in->zero_points, NULL);
  memset(in, 0, sizeof(*in));
}

ol_status ol_quant_export_matmul_nbits_inputs(const Onnx__EncodedValueProto *value,
                                              const ol_type_catalogue *types,
                                              ol_quant_matmul_nbits_inputs *out) {
  memset(out, 0, sizeof(*out));
  if (value->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE || !value->struct_type)
    return INVALID("Expected a structured ORT MatMulNBits layout");
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(ol_type_catalogue_resolve(types, value->struct_type, &root));
  const size_t prefix = strlen(OL_QUANT_WIRE_PREFIX);
  ol_quant_format format;
  if (!root->name || strncmp(root->name, OL_QUANT_WIRE_PREFIX, prefix) != 0)
    return INVALID("Unsupported encoded quantization layout '%s'", root->name ? root->name : "");
  OL_TRY(ol_quant_format_parse(root->name + prefix, &format));
  if (!ol_quant_profile_info(format)->ort)
    return INVALID("Expected an ORT MatMulNBits encoded value, got '%s'", root->name + prefix);
  ol_quant_decoded logical;
  ort_storage st;
  const uint8_t *data;
  OL_TRY(parse(value, root, format, &logical, &st, &data));
  const int64_t b_dims[3] = {(int64_t)st.n, (int64_t)st.groups, (int64_t)st.blob};
  const int64_t s_dims[2] = {(int64_t)st.n, (int64_t)st.groups};
  const int64_t z_dims[2] = {(int64_t)st.n, (int64_t)(st.zero_type == OL_DTYPE_UINT8
                                                          ? st.zero_row_bytes : st.groups)};
  out->weights = raw_tensor("B", OL_DTYPE_UINT8, 3, b_dims, data, st.weight_bytes);
  out->scales = raw_tensor("scales", st.type, 2, s_dims, data + st.weight_bytes, st.scale_bytes);
  if (st.zero_type != OL_DTYPE_UNDEFINED)
    out->zero_points = raw_tensor("zero_points", st.zero_type, 2, z_dims,
                                  data + st.weight_bytes + st.scale_bytes, st.zero_bytes);
  if (!out->weights || !out->scales || (st.zero_type != OL_DTYPE_UNDEFINED && !out->zero_points)) {
    ol_quant_matmul_nbits_inputs_clear(out);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory exporting MatMulNBits inputs");
  }
  out->k = (int64_t)st.k;
  out->n = (int64_t)st.n;
  out->bits = st.bits;
  out->block_size = (int64_t)st.block_size;
  return OL_OK;
}
