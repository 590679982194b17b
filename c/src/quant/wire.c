/* Portable EncodedValueProto layout: descriptor construction, encoding to and
 * decoding from protobuf-c messages (see wire.h). */
#include "quant/wire.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "quant/codec.h"
#include "quant/ort.h"
#include "quant/wire_proto.h"

#define INVALID(...) ol_error(OL_INVALID_ARGUMENT, __VA_ARGS__)

/* ============================================================ descriptor */

static bool same_header(const ol_quant_layout *a, const ol_quant_layout *b) {
  int64_t ha[OL_QUANT_HEADER_SIZE], hb[OL_QUANT_HEADER_SIZE];
  ol_quant_layout_header(a, ha);
  ol_quant_layout_header(b, hb);
  return memcmp(ha, hb, sizeof(ha)) == 0;
}

/* One merged run: array of `dimension` blocks of layout l. */
static Onnx__TypeProto *run_type(const ol_quant_layout *l, uint64_t dimension) {
  Onnx__StructTypeProto *item = ol_qw_new_structure(NULL);
  if (!item) return NULL;
  int64_t header[OL_QUANT_HEADER_SIZE];
  ol_quant_layout_header(l, header);
  bool ok = ol_qw_add_field(item, "parameters", NULL, ol_qw_int64_constant(header, OL_QUANT_HEADER_SIZE, true)) &&
            ol_qw_add_tensor(item, "scale", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 0, 0, 0) &&
            ol_qw_add_tensor(item, "zero_point", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 0, 0, 0) &&
            ol_qw_add_tensor(item, "offset", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 0, 0, 0) &&
            ol_qw_add_tensor(item, "codebook", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1,
                       (int64_t)ol_quant_layout_table_size(l), 0) &&
            ol_qw_add_tensor(item, "codes", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1,
                       (int64_t)ol_quant_layout_code_bytes(l), 0);
  Onnx__StructTypeProto *array = NEW(Onnx__StructTypeProto, ONNX__STRUCT_TYPE_PROTO__INIT);
  Onnx__StructTypeProto__Array *a = NEW(Onnx__StructTypeProto__Array, ONNX__STRUCT_TYPE_PROTO__ARRAY__INIT);
  Onnx__TypeProto *element = ok ? ol_qw_struct_type_of(item) : NULL;
  if (!ok) onnx__struct_type_proto__free_unpacked(item, NULL);
  if (!array || !a || !element) {
    free(array), free(a);
    if (element) onnx__type_proto__free_unpacked(element, NULL);
    return NULL;
  }
  a->element_type = element;
  a->has_dimension = 1;
  a->dimension = dimension;
  array->kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY;
  array->array = a;
  return ol_qw_struct_type_of(array);
}

static Onnx__TypeProto *blocks_type(const ol_quant_plan *plan) {
  Onnx__StructTypeProto *blocks = ol_qw_new_structure(NULL);
  if (!blocks) return NULL;
  int64_t total = 0;
  for (size_t r = 0; r < plan->run_count; r++) total += (int64_t)plan->runs[r].block_count;
  bool ok = ol_qw_add_field(blocks, "count", NULL, ol_qw_int64_constant(&total, 1, false));
  uint64_t first = 0;
  for (size_t r = 0; ok && r < plan->run_count;) {
    uint64_t dimension = plan->runs[r].block_count;
    size_t end = r + 1;
    while (end < plan->run_count && same_header(&plan->runs[end].layout, &plan->runs[r].layout))
      dimension += plan->runs[end++].block_count;
    char name[32];
    snprintf(name, sizeof(name), "run_%llu", (unsigned long long)first);
    ok = ol_qw_add_field(blocks, name, run_type(&plan->runs[r].layout, dimension), NULL);
    first += dimension;
    r = end;
  }
  if (!ok) {
    onnx__struct_type_proto__free_unpacked(blocks, NULL);
    return NULL;
  }
  return ol_qw_struct_type_of(blocks);
}

/* The descriptor without validating parameters (used for encode and for the
 * decoder's schema comparison). */
static ol_status schema(const ol_quant_plan *plan, Onnx__StructTypeProto **out) {
  *out = NULL;
  const char *profile = ol_quant_format_name(plan->format);
  if (!profile) return INVALID("Unknown quantization format: %d", (int)plan->format);
  char name[96];
  snprintf(name, sizeof(name), OL_QUANT_WIRE_PREFIX "%s", profile);
  Onnx__StructTypeProto *root = ol_qw_new_structure(name);
  if (!root) return OL_OUT_OF_MEMORY;
  const int64_t n = plan->transform_size, o = (int64_t)plan->outlier_count;
  bool ok = ol_qw_add_tensor(root, "reserved", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1, 1, 0) &&
            ol_qw_add_tensor(root, "permutation", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1,
                       (int64_t)plan->permutation_size, 0) &&
            ol_qw_add_tensor(root, "forward", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, n, n) &&
            ol_qw_add_tensor(root, "inverse", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, n, n) &&
            ol_qw_add_tensor(root, "outlier_indices", ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, o, 0) &&
            ol_qw_add_tensor(root, "outlier_values", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1, o, 0) &&
            ol_qw_add_field(root, "blocks", blocks_type(plan), NULL);
  if (!ok) {
    onnx__struct_type_proto__free_unpacked(root, NULL);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory building a quantization descriptor");
  }
  *out = root;
  return OL_OK;
}

ol_status ol_quant_make_type_proto(const ol_quant_plan *plan, Onnx__StructTypeProto **out) {
  *out = NULL;
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (!row) return INVALID("Unknown quantization format: %d", (int)plan->format);
  if (row->ort)
    return INVALID("ORT MatMulNBits descriptors ('%s') come from an existing ORT encoded value's "
                   "struct_type, not from a plan", row->name);
  for (size_t r = 0; r < plan->run_count; r++) {
    const ol_quant_layout *l = &plan->runs[r].layout;
    if (plan->runs[r].block_count == 0 || l->count == 0)
      return INVALID("Quantization runs must contain nonempty blocks (run %zu)", r);
    if (l->bits < 1 || l->bits > 16 || (int)l->method < 0 || l->method >= OL_QUANT_METHOD_COUNT ||
        !ol_quant_float_bytes(l->cast_type) || !ol_quant_layout_sizes_fit(l))
      return INVALID("Invalid quantization layout in run %zu", r);
  }
  if (plan->forward_size != (size_t)plan->transform_size * plan->transform_size &&
      plan->forward_size != 0)
    return INVALID("Transform matrices must be square");
  return schema(plan, out);
}

/* ============================================================ encode */

void ol_quant_proto_free(Onnx__EncodedValueProto *value) {
  if (value) onnx__encoded_value_proto__free_unpacked(value, NULL);
}

void ol_quant_type_free(Onnx__StructTypeProto *type) {
  if (type) onnx__struct_type_proto__free_unpacked(type, NULL);
}

ol_status ol_quant_encode_proto(const ol_quant_plan *plan, ol_dtype dtype, const void *data,
                                int rank, const int64_t *dims, const char *name,
                                Onnx__EncodedValueProto **out) {
  *out = NULL;
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (row && row->ort) return ol_quant_ort_encode_proto(plan, dtype, data, rank, dims, name, out);
  uint64_t count = 0;
  OL_TRY(ol_qw_shape_count(rank, dims, &count));
  if (!ol_quant_float_bytes(dtype))
    return INVALID("Quantization requires FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got dtype %d)", (int)dtype);
  if (count > SIZE_MAX / sizeof(double)) return ol_error(OL_OUT_OF_MEMORY, "Quantization input too large");
  if (count && !data) return INVALID("Quantization source has no storage");
  double *values = ol_xmalloc(count ? (size_t)count * sizeof(double) : 1);
  if (!values) return OL_OUT_OF_MEMORY;
  uint8_t *payload = NULL;
  size_t size = 0;
  ol_status s = ol_quant_read_floats(dtype, data, count, values);
  if (s == OL_OK) s = ol_quant_encode(plan, values, count, dtype, &payload, &size);
  free(values);
  if (s != OL_OK) return s;
  Onnx__StructTypeProto *root;
  s = schema(plan, &root);
  Onnx__EncodedValueProto *ev = NEW(Onnx__EncodedValueProto, ONNX__ENCODED_VALUE_PROTO__INIT);
  Onnx__TypeProto *logical = ol_qw_tensor_type(dtype, rank, dims);
  char *copy = name ? ol_strdup(name) : NULL;
  if (s == OL_OK && (!ev || !logical || (name && !copy)))
    s = ol_error(OL_OUT_OF_MEMORY, "out of memory building an encoded value");
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
  ev->raw_data.len = size;
  ev->name = copy;
  *out = ev;
  return OL_OK;
}

/* ============================================================ decode */

void ol_quant_decoded_clear(ol_quant_decoded *decoded) {
  if (!decoded) return;
  free(decoded->values);
  decoded->values = NULL;
}

/* A run field: array of `dimension` blocks whose first field is the header. */
static ol_status read_run(const field_t *f, ol_quant_run *run) {
  const Onnx__StructTypeProto *st = ol_qw_field_struct(f);
  if (!st || st->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_ARRAY || !st->array->has_dimension ||
      st->array->dimension == 0 || !st->array->element_type ||
      st->array->element_type->value_case != ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE)
    return INVALID("Invalid quantization block run '%s'", f->name);
  const field_t *params = NULL;
  OL_TRY(ol_qw_get_field(st->array->element_type->struct_type, 0, "parameters", &params));
  const Onnx__TensorProto *p =
      params->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT
          ? params->constant : NULL;
  if (!p || p->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__INT64 || p->n_int64_data != 9 ||
      p->n_dims != 1 || p->dims[0] != 9 || p->has_raw_data)
    return INVALID("Invalid quantization parameters in run '%s'", f->name);
  OL_TRY(ol_quant_layout_from_header(p->int64_data, &run->layout));
  if (st->array->dimension > SIZE_MAX / sizeof(ol_quant_block))
    return INVALID("Invalid quantization block run length");
  run->block_count = (size_t)st->array->dimension;
  return OL_OK;
}

static ol_status check_schema(const Onnx__StructTypeProto *root, const ol_quant_plan *plan) {
  Onnx__StructTypeProto *expected;
  OL_TRY(schema(plan, &expected));
  ol_status s = ol_qw_same_descriptor(root, expected);
  ol_quant_type_free(expected);
  return s;
}

/* The declared sizes must fit a tensor of count elements. */
static ol_status check_count(const ol_quant_plan *shape, uint64_t count) {
  if (shape->outlier_count > count) return INVALID("Invalid quantization outlier count");
  if (shape->permutation_size != 0 && shape->permutation_size != count)
    return INVALID("Invalid quantization permutation size");
  return OL_OK;
}

/* Builds the structure the descriptor declares (runs without parameters);
 * check_count relates it to a tensor. */
static ol_status read_shape(const Onnx__StructTypeProto *root, ol_quant_plan *shape) {
  const field_t *f = NULL;
  uint64_t p = 0, n = 0, n2 = 0, o = 0, o2 = 0, one = 0;
  OL_TRY(ol_qw_get_field(root, 0, "reserved", &f));
  OL_TRY(ol_qw_extent(f, ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1, 0, &one));
  OL_TRY(ol_qw_get_field(root, 1, "permutation", &f));
  OL_TRY(ol_qw_extent(f, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, 0, &p));
  OL_TRY(ol_qw_get_field(root, 2, "forward", &f));
  OL_TRY(ol_qw_extent(f, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, 0, &n));
  OL_TRY(ol_qw_extent(f, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 2, 1, &n2));
  if (one != 1 || n != n2 || n > UINT32_MAX) return INVALID("Invalid quantization transform size");
  OL_TRY(ol_qw_get_field(root, 4, "outlier_indices", &f));
  OL_TRY(ol_qw_extent(f, ONNX__TENSOR_PROTO__DATA_TYPE__INT64, 1, 0, &o));
  OL_TRY(ol_qw_get_field(root, 5, "outlier_values", &f));
  OL_TRY(ol_qw_extent(f, ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1, 0, &o2));
  if (o != o2 || o > SIZE_MAX / 8) return INVALID("Invalid quantization outlier count");
  if (p > SIZE_MAX / 8) return INVALID("Invalid quantization permutation size");
  shape->permutation_size = (size_t)p;
  shape->transform_size = (uint32_t)n;
  shape->forward_size = shape->inverse_size = (size_t)(n * n);
  shape->outlier_count = (size_t)o;
  OL_TRY(ol_qw_get_field(root, 6, "blocks", &f));
  const Onnx__StructTypeProto *blocks = ol_qw_field_struct(f);
  if (!blocks || blocks->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE)
    return INVALID("Invalid quantization block list");
  OL_TRY(ol_qw_get_field(blocks, 0, "count", &f));
  size_t runs = blocks->structure->n_field - 1;
  shape->runs = ol_xcalloc(runs ? runs : 1, sizeof(ol_quant_run));
  if (!shape->runs) return OL_OUT_OF_MEMORY;
  shape->run_count = runs;
  for (size_t r = 0; r < runs; r++) OL_TRY(read_run(blocks->structure->field[r + 1], &shape->runs[r]));
  return OL_OK;
}

ol_status ol_quant_decode_proto(const Onnx__EncodedValueProto *value, const ol_type_catalogue *types,
                                ol_quant_decoded *out, ol_quant_plan **parsed) {
  memset(out, 0, sizeof(*out));
  if (parsed) *parsed = NULL;
  if (value->parameter_ref && value->parameter_ref[0])
    return INVALID("The encoded value refers to the shared quantization parameter set '%s': decode "
                   "it with the declaring model's catalogue (or materialize it first)",
                   value->parameter_ref);
  if (value->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE || !value->struct_type)
    return INVALID("Expected a structured quantization layout");
  if (ol_quant_payload_unloaded(value))
    return INVALID("Load external encoded data before dequantization");
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(ol_type_catalogue_resolve(types, value->struct_type, &root));
  const size_t prefix = strlen(OL_QUANT_WIRE_PREFIX);
  if (!root->name || strncmp(root->name, OL_QUANT_WIRE_PREFIX, prefix) != 0)
    return INVALID("Unsupported encoded quantization layout '%s'", root->name ? root->name : "");
  ol_quant_plan *shape;
  OL_TRY(ol_quant_plan_new(&shape));
  ol_status s = ol_quant_format_parse(root->name + prefix, &shape->format);
  if (s == OL_OK && ol_quant_profile_info(shape->format)->ort) {
    s = ol_quant_ort_decode_proto(value, root, shape->format, out);
    ol_quant_plan_destroy(shape);
    if (s != OL_OK) ol_quant_decoded_clear(out);
    return s; /* no portable plan to hand back */
  }
  if (s == OL_OK) s = ol_qw_logical_tensor(value, out);
  if (s == OL_OK) s = read_shape(root, shape);
  if (s == OL_OK) s = check_count(shape, out->count);
  if (s == OL_OK && out->count > SIZE_MAX / sizeof(double)) s = INVALID("Quantization value too large");
  if (s == OL_OK) {
    out->values = ol_xmalloc(out->count ? (size_t)out->count * sizeof(double) : 1);
    if (!out->values) s = OL_OUT_OF_MEMORY;
  }
  ol_quant_plan *plan = NULL;
  if (s == OL_OK)
    s = ol_quant_decode(shape, value->has_raw_data ? value->raw_data.data : NULL,
                        value->has_raw_data ? value->raw_data.len : 0, out->count, out->dtype,
                        out->values, &plan);
  if (s == OL_OK) s = check_schema(root, plan);
  ol_quant_plan_destroy(shape);
  if (s != OL_OK || !parsed) ol_quant_plan_destroy(plan);
  else *parsed = plan;
  if (s != OL_OK) ol_quant_decoded_clear(out);
  return s;
}

/* ============================================================ destination descriptors */

ol_status ol_quant_plan_declared(const Onnx__StructTypeProto *type, const ol_type_catalogue *types,
                                 ol_quant_plan **out) {
  *out = NULL;
  if (!type) return INVALID("Missing quantization descriptor");
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(ol_type_catalogue_resolve(types, type, &root));
  const size_t prefix = strlen(OL_QUANT_WIRE_PREFIX);
  if (!root->name || strncmp(root->name, OL_QUANT_WIRE_PREFIX, prefix) != 0)
    return INVALID("Unsupported quantization descriptor '%s' (expected a name starting with '"
                   OL_QUANT_WIRE_PREFIX "')", root->name ? root->name : "");
  ol_quant_plan *plan;
  OL_TRY(ol_quant_plan_new(&plan));
  ol_status s = ol_quant_format_parse(root->name + prefix, &plan->format);
  const ol_quant_profile *row = s == OL_OK ? ol_quant_profile_info(plan->format) : NULL;
  if (s == OL_OK && row->ort)
    s = ol_error(OL_NOT_IMPLEMENTED,
                 "Quantizing into the ORT MatMulNBits layout '%s' from a descriptor is not "
                 "implemented; use ol_quant_make_matmul_nbits_plan and ol_quant_encode_proto",
                 row->name);
  if (s == OL_OK) s = read_shape(root, plan);
  uint32_t table_count = 0;
  const double *table = row ? ol_quant_table_values(row->table, &table_count) : NULL;
  for (size_t r = 0; s == OL_OK && r < plan->run_count; r++) {
    ol_quant_run *run = &plan->runs[r];
    const ol_quant_layout *l = &run->layout;
    if (!ol_quant_layout_sizes_fit(l)) {
      s = INVALID("Invalid quantization layout in run %zu", r);
      break;
    }
    run->blocks = ol_xcalloc(run->block_count, sizeof(ol_quant_block));
    if (!run->blocks) {
      run->block_count = 0;
      s = OL_OUT_OF_MEMORY;
      break;
    }
    double zero_point = 0;
    if (l->method == OL_QUANT_AFFINE && !l->signed_codes) zero_point = ldexp(1.0, (int)l->bits - 1);
    bool fixed = table && l->method == OL_QUANT_CODEBOOK && ol_quant_layout_table_size(l) == table_count;
    for (size_t b = 0; s == OL_OK && b < run->block_count; b++) {
      run->blocks[b] = (ol_quant_block){1.0, zero_point, 0.0, NULL, 0};
      if (fixed) s = ol_quant_block_set_codebook(&run->blocks[b], table, table_count);
    }
  }
  if (s == OL_OK) s = check_schema(root, plan);
  if (s != OL_OK) {
    ol_quant_plan_destroy(plan);
    return s;
  }
  *out = plan;
  return OL_OK;
}

ol_status ol_quant_plan_fits(const ol_quant_plan *declared, uint64_t count) {
  return check_count(declared, count);
}

ol_status ol_quant_plan_from_type(const Onnx__StructTypeProto *type, const ol_type_catalogue *types,
                                  uint64_t count, ol_quant_plan **out) {
  OL_TRY(ol_quant_plan_declared(type, types, out));
  ol_status s = check_count(*out, count);
  if (s != OL_OK) {
    ol_quant_plan_destroy(*out);
    *out = NULL;
  }
  return s;
}

/* ============================================================ structure only */

ol_status ol_quant_descriptor_shape(const Onnx__StructTypeProto *root, uint64_t count,
                                    ol_quant_plan *shape) {
  OL_TRY(read_shape(root, shape));
  OL_TRY(check_count(shape, count));
  return check_schema(root, shape);
}
