/* Shared quantization parameter sets and compact values (see shared.h). */
#include "quant/shared.h"

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

/* ============================================================ geometry */

/* Offset of the outlier values in the self-contained payload:
 * reserved byte, permutation, forward, inverse, outlier indices. */
static uint64_t full_outlier_values_at(const ol_quant_plan *p) {
  return 1 + 8 * (uint64_t)p->permutation_size + 8 * (uint64_t)p->forward_size +
         8 * (uint64_t)p->inverse_size + 8 * (uint64_t)p->outlier_count;
}

static uint64_t code_bytes_total(const ol_quant_plan *p) {
  uint64_t total = 0;
  for (size_t r = 0; r < p->run_count; r++)
    total += ol_quant_layout_code_bytes(&p->runs[r].layout) * p->runs[r].block_count;
  return total;
}

/* ============================================================ descriptors */

static Onnx__StructTypeProto *copy_type(const Onnx__StructTypeProto *type) {
  size_t size = onnx__struct_type_proto__get_packed_size(type);
  uint8_t *bytes = malloc(size ? size : 1);
  if (!bytes) return NULL;
  onnx__struct_type_proto__pack(type, bytes);
  Onnx__StructTypeProto *copy = onnx__struct_type_proto__unpack(NULL, size, bytes);
  free(bytes);
  return copy;
}

static ol_status compact_type(const ol_quant_plan *plan, Onnx__StructTypeProto **out) {
  *out = NULL;
  char name[96];
  snprintf(name, sizeof(name), OL_QUANT_SHARED_PREFIX "%s", ol_quant_format_name(plan->format));
  Onnx__StructTypeProto *root = ol_qw_new_structure(name);
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (root && row->ort) {
    /* B [N, G, block_size * bits / 8] */
    const ol_quant_run *run = &plan->runs[0];
    const uint64_t n = (uint64_t)plan->matrix_shape[1], groups = n ? run->block_count / n : 0;
    const int64_t dims[3] = {(int64_t)n, (int64_t)groups, (int64_t)(run->layout.count * row->bits / 8)};
    if (ol_qw_add_field(root, "B", ol_qw_tensor_type(OL_DTYPE_UINT8, 3, dims), NULL)) {
      *out = root;
      return OL_OK;
    }
    return ol_error(OL_OUT_OF_MEMORY, "out of memory building a compact quantization type");
  }
  bool ok = root &&
            ol_qw_add_tensor(root, "reserved", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1, 1, 0) &&
            ol_qw_add_tensor(root, "outlier_values", ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE, 1,
                             (int64_t)plan->outlier_count, 0) &&
            ol_qw_add_tensor(root, "codes", ONNX__TENSOR_PROTO__DATA_TYPE__UINT8, 1,
                             (int64_t)code_bytes_total(plan), 0);
  if (!ok) {
    ol_quant_type_free(root);
    return ol_error(OL_OUT_OF_MEMORY, "out of memory building a compact quantization type");
  }
  *out = root;
  return OL_OK;
}

ol_status ol_quant_shared_type(const ol_quant_shared_set *set, Onnx__StructTypeProto **out) {
  *out = copy_type(set->compact);
  return *out ? OL_OK : ol_error(OL_OUT_OF_MEMORY, "out of memory copying a compact type");
}

/* ============================================================ sets */

/* ORT MatMulNBits: the plan from [K, N] and the descriptor's block size,
 * scales and zero points per block (or scalar); the descriptor the
 * parameters give must be the declared one. */
static ol_status create_ort(const Onnx__StructTypeProto *root, ol_quant_format format,
                            const ol_tensor *const inputs[OL_QUANT_IN_COUNT], ol_quant_shared_set *set) {
  for (size_t i = OL_QUANT_IN_OFFSETS; i < OL_QUANT_IN_COUNT; i++)
    if (inputs[i] && ol_tcount(inputs[i]))
      return INVALID("ORT MatMulNBits layouts reject offsets, codebooks, permutations, transforms "
                     "and outliers ('%s' is given)", ol_quant_input_names[i]);
  if (set->rank != 2) return INVALID("ORT MatMulNBits sets need a [K, N] logical type (rank %d)", set->rank);
  const Onnx__StructTypeProto__Structure__Field *f =
      root->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE && root->structure && root->structure->n_field
          ? root->structure->field[0] : NULL;
  const Onnx__TensorProto *c =
      f && f->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT ? f->constant : NULL;
  if (!c || c->n_int64_data != 2 || c->int64_data[1] <= 0)
    return INVALID("storage_type '%s': expected a parameters constant [bits, block_size]", root->name);
  OL_TRY(ol_quant_make_matmul_nbits_plan(format, (uint64_t)set->dims[0], (uint64_t)set->dims[1],
                                         (uint64_t)c->int64_data[1], &set->plan));
  ol_quant_run *run = &set->plan->runs[0];
  if (inputs[OL_QUANT_IN_ZERO_POINTS])
    OL_TRY(ol_quant_apply_per_block(set->plan, inputs[OL_QUANT_IN_ZERO_POINTS], OL_QUANT_IN_ZERO_POINTS,
                                    run->block_count));
  OL_TRY(ol_quant_apply_per_block(set->plan, inputs[OL_QUANT_IN_SCALES], OL_QUANT_IN_SCALES,
                                  run->block_count));
  for (size_t b = 0; b < run->block_count; b++) {
    const ol_quant_block *blk = &run->blocks[b];
    if (!(blk->scale > 0) || !isfinite(blk->scale))
      return INVALID("block %zu: Quantization scale must be finite and positive (got %g)", b, blk->scale);
  }
  uint64_t weight_bytes = 0;
  OL_TRY(ol_quant_ort_parameters(set->plan, set->dtype, &set->ort_type, &set->ort_tail,
                                 &set->ort_tail_size, &weight_bytes));
  if (ol_qw_same_descriptor(root, set->ort_type) != OL_OK)
    return INVALID("storage_type '%s' is not the ORT descriptor its parameters give (matrix "
                   "dimensions, scale dtype and zero-point storage must agree)", root->name);
  OL_TRY(compact_type(set->plan, &set->compact));
  set->compact_size = weight_bytes;
  return OL_OK;
}

static ol_status create(const Onnx__StructTypeProto *storage,
                        const Onnx__TypeProto *logical, const ol_type_catalogue *types,
                        const ol_tensor *const inputs[OL_QUANT_IN_COUNT], ol_quant_shared_set *set) {
  if (!storage) return INVALID("storage_type is missing");
  if (!logical) return INVALID("logical_type is missing");
  Onnx__EncodedValueProto probe = ONNX__ENCODED_VALUE_PROTO__INIT;
  probe.logical_type = (Onnx__TypeProto *)logical;
  ol_quant_decoded shape = {0};
  ol_status s = ol_qw_logical_tensor(&probe, &shape);
  if (s != OL_OK) return ol_error_wrap(s, "logical_type");
  set->dtype = shape.dtype;
  set->rank = shape.rank;
  memcpy(set->dims, shape.dims, sizeof(set->dims));
  set->count = shape.count;
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(ol_type_catalogue_resolve(types, storage, &root));
  const size_t prefix = strlen(OL_QUANT_WIRE_PREFIX);
  ol_quant_format format;
  bool ort = root->name && strncmp(root->name, OL_QUANT_WIRE_PREFIX, prefix) == 0 &&
             ol_quant_format_parse(root->name + prefix, &format) == OL_OK &&
             ol_quant_profile_info(format)->ort;
  const ol_tensor *scales = inputs[OL_QUANT_IN_SCALES];
  if (!scales || ol_tcount(scales) == 0)
    return INVALID("shared quantization requires fixed scales (shared mode never calibrates)");
  if (ort) return create_ort(root, format, inputs, set);
  s = ol_quant_plan_from_type(storage, types, set->count, &set->plan);
  if (s != OL_OK) return ol_error_wrap(s, "storage_type is incompatible with logical_type");
  uint64_t covered = 0;
  for (size_t r = 0; r < set->plan->run_count; r++)
    covered += (uint64_t)set->plan->runs[r].layout.count * set->plan->runs[r].block_count;
  if (covered != set->count)
    return INVALID("storage_type covers %llu values but logical_type has %llu",
                   (unsigned long long)covered, (unsigned long long)set->count);
  OL_TRY(ol_quant_apply_inputs(set->plan, inputs));
  OL_TRY(ol_quant_plan_validate(set->plan, set->count));
  OL_TRY(compact_type(set->plan, &set->compact));
  set->compact_size = 1 + 8 * (uint64_t)set->plan->outlier_count + code_bytes_total(set->plan);
  return OL_OK;
}

ol_status ol_quant_shared_create(const char *name, const Onnx__StructTypeProto *storage,
                                 const Onnx__TypeProto *logical, const ol_type_catalogue *types,
                                 const ol_tensor *const inputs[OL_QUANT_IN_COUNT],
                                 ol_quant_shared_set **out) {
  *out = NULL;
  if (!name || !name[0]) return INVALID("The quantization parameter set name must be nonempty");
  ol_quant_shared_set *set = ol_xcalloc(1, sizeof *set);
  if (!set) return OL_OUT_OF_MEMORY;
  set->refcount = 1;
  set->name = ol_strdup(name);
  ol_status s = set->name ? create(storage, logical, types, inputs, set) : OL_OUT_OF_MEMORY;
  if (s != OL_OK) {
    ol_quant_shared_release(set);
    return s == OL_OUT_OF_MEMORY ? s : ol_error_wrap(s, "quantization parameter set '%s'", name);
  }
  *out = set;
  return OL_OK;
}

ol_quant_shared_set *ol_quant_shared_retain(ol_quant_shared_set *set) {
  if (set) set->refcount++;
  return set;
}

void ol_quant_shared_release(ol_quant_shared_set *set) {
  if (!set || --set->refcount > 0) return;
  free(set->name);
  ol_quant_plan_destroy(set->plan);
  ol_quant_type_free(set->compact);
  ol_quant_type_free(set->ort_type);
  free(set->ort_tail);
  free(set);
}

void ol_quant_shared_release_resource(void *set) { ol_quant_shared_release(set); }

ol_quant_shared_set *ol_quant_shared_of(const ol_value *value) {
  return value && value->encoded_resource_release == ol_quant_shared_release_resource
             ? value->encoded_resource
             : NULL;
}

void ol_quant_shared_attach(ol_value *value, ol_quant_shared_set *set) {
  ol_value_attach_resource(value, ol_quant_shared_retain(set), ol_quant_shared_release_resource);
}

/* ============================================================ values */

static Onnx__EncodedValueProto *new_value(const ol_quant_shared_set *set, Onnx__StructTypeProto *type,
                                          uint8_t *payload, size_t size, const char *name,
                                          const char *parameter_ref) {
  Onnx__EncodedValueProto *ev = NEW(Onnx__EncodedValueProto, ONNX__ENCODED_VALUE_PROTO__INIT);
  Onnx__TypeProto *logical = ol_qw_tensor_type(set->dtype, set->rank, set->dims);
  char *name_copy = name ? ol_strdup(name) : NULL;
  char *ref_copy = parameter_ref ? ol_strdup(parameter_ref) : NULL;
  if (!ev || !type || !logical || (name && !name_copy) || (parameter_ref && !ref_copy)) {
    free(ev), free(payload), free(name_copy), free(ref_copy);
    ol_quant_type_free(type);
    if (logical) onnx__type_proto__free_unpacked(logical, NULL);
    return NULL;
  }
  ev->layout_case = ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE;
  ev->struct_type = type;
  ev->logical_type = logical;
  ev->has_raw_data = 1;
  ev->raw_data.data = payload;
  ev->raw_data.len = size;
  ev->name = name_copy;
  ev->parameter_ref = ref_copy;
  return ev;
}

/* ORT: encode the self-contained layout, keep B. */
static ol_status encode_ort(const ol_quant_shared_set *set, ol_dtype dtype, const void *data, int rank,
                            const int64_t *dims, const char *name, Onnx__EncodedValueProto **out) {
  Onnx__EncodedValueProto *full = NULL;
  ol_status s = ol_quant_encode_proto(set->plan, dtype, data, rank, dims, NULL, &full);
  if (s != OL_OK)
    return s == OL_OUT_OF_MEMORY ? s : ol_error_wrap(s, "quantization parameter set '%s'", set->name);
  uint8_t *compact = NULL;
  if (ol_qw_same_descriptor(full->struct_type, set->ort_type) != OL_OK ||
      full->raw_data.len != set->compact_size + set->ort_tail_size)
    s = ol_error(OL_INTERNAL, "ORT encoding of parameter set '%s' changed its descriptor", set->name);
  else if (!(compact = ol_xmalloc((size_t)set->compact_size)))
    s = OL_OUT_OF_MEMORY;
  if (s == OL_OK) memcpy(compact, full->raw_data.data, (size_t)set->compact_size);
  ol_quant_proto_free(full);
  if (s != OL_OK) return s;
  *out = new_value(set, copy_type(set->compact), compact, (size_t)set->compact_size, name, set->name);
  return *out ? OL_OK : ol_error(OL_OUT_OF_MEMORY, "out of memory building a compact value");
}

ol_status ol_quant_shared_encode(const ol_quant_shared_set *set, ol_dtype dtype, const void *data,
                                 int rank, const int64_t *dims, const char *name,
                                 Onnx__EncodedValueProto **out) {
  *out = NULL;
  bool same = dtype == set->dtype && rank == set->rank;
  for (int i = 0; same && i < rank; i++) same = dims[i] == set->dims[i];
  if (!same)
    return INVALID("quantization parameter set '%s' is declared for a %s tensor of %d dimensions "
                   "(%llu elements); the input is %s with rank %d", set->name,
                   ol_dtype_name(set->dtype), set->rank, (unsigned long long)set->count,
                   ol_dtype_name(dtype), rank);
  if (set->count && !data) return INVALID("Quantization source has no storage");
  if (set->ort_type) return encode_ort(set, dtype, data, rank, dims, name, out);
  double *values = ol_xmalloc(set->count ? (size_t)set->count * sizeof(double) : 1);
  if (!values) return OL_OUT_OF_MEMORY;
  uint8_t *full = NULL, *compact = NULL;
  size_t full_size = 0;
  ol_status s = ol_quant_read_floats(dtype, data, set->count, values);
  if (s == OL_OK) s = ol_quant_encode(set->plan, values, set->count, dtype, &full, &full_size);
  free(values);
  if (s == OL_OK) {
    compact = ol_xmalloc((size_t)set->compact_size);
    if (!compact) s = OL_OUT_OF_MEMORY;
  }
  if (s != OL_OK) {
    free(full);
    return s == OL_OUT_OF_MEMORY ? s : ol_error_wrap(s, "quantization parameter set '%s'", set->name);
  }
  /* keep the reserved byte, the outlier values and each block's code bytes */
  const ol_quant_plan *p = set->plan;
  size_t at = 1, from = (size_t)full_outlier_values_at(p);
  compact[0] = full[0];
  memcpy(compact + at, full + from, 8 * p->outlier_count);
  at += 8 * p->outlier_count;
  from += 8 * p->outlier_count;
  for (size_t r = 0; r < p->run_count; r++) {
    const ol_quant_layout *l = &p->runs[r].layout;
    size_t skip = 24 + 8 * (size_t)ol_quant_layout_table_size(l);
    size_t codes = (size_t)ol_quant_layout_code_bytes(l);
    for (size_t b = 0; b < p->runs[r].block_count; b++) {
      memcpy(compact + at, full + from + skip, codes);
      at += codes;
      from += skip + codes;
    }
  }
  free(full);
  Onnx__StructTypeProto *type = copy_type(set->compact);
  *out = new_value(set, type, compact, (size_t)set->compact_size, name, set->name);
  return *out ? OL_OK : ol_error(OL_OUT_OF_MEMORY, "out of memory building a compact value");
}

ol_status ol_quant_shared_check(const ol_quant_shared_set *set, const Onnx__EncodedValueProto *value,
                                const ol_type_catalogue *types) {
  if (!value->parameter_ref || strcmp(value->parameter_ref, set->name) != 0)
    return INVALID("the encoded value refers to parameter set '%s', not '%s'",
                   value->parameter_ref ? value->parameter_ref : "", set->name);
  if (ol_quant_payload_unloaded(value))
    return INVALID("compact value for parameter set '%s': load external data first", set->name);
  if (value->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE || !value->struct_type)
    return INVALID("compact value for parameter set '%s' has no struct_type layout", set->name);
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(ol_type_catalogue_resolve(types, value->struct_type, &root));
  if (ol_qw_same_descriptor(root, set->compact) != OL_OK)
    return INVALID("the storage type '%s' is not parameter set '%s''s compact storage type '%s'",
                   root->name ? root->name : "", set->name, set->compact->name);
  ol_quant_decoded logical = {0};
  ol_status s = ol_qw_logical_tensor(value, &logical);
  if (s != OL_OK) return ol_error_wrap(s, "compact value for parameter set '%s'", set->name);
  bool same = logical.dtype == set->dtype && logical.rank == set->rank;
  for (int i = 0; same && i < logical.rank; i++) same = logical.dims[i] == set->dims[i];
  if (!same)
    return INVALID("the logical type (%s, rank %d, %llu elements) does not match parameter set "
                   "'%s' (%s, rank %d, %llu elements)", ol_dtype_name(logical.dtype), logical.rank,
                   (unsigned long long)logical.count, set->name, ol_dtype_name(set->dtype),
                   set->rank, (unsigned long long)set->count);
  size_t size = value->has_raw_data ? value->raw_data.len : 0;
  if (size != set->compact_size)
    return INVALID("the compact payload has %zu bytes; parameter set '%s' expects %llu (reserved "
                   "byte, %zu outlier values, %llu code bytes)", size, set->name,
                   (unsigned long long)set->compact_size, set->plan->outlier_count,
                   (unsigned long long)code_bytes_total(set->plan));
  if (!set->ort_type && value->raw_data.data[0] != 0)
    return INVALID("nonzero reserved byte in a compact value");
  return OL_OK;
}

ol_status ol_quant_shared_check_storage(const ol_quant_shared_set *set,
                                        const Onnx__StructTypeProto *type,
                                        const ol_type_catalogue *types) {
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(ol_type_catalogue_resolve(types, type, &root));
  Onnx__StructTypeProto *expected = NULL;
  if (set->ort_type) expected = copy_type(set->ort_type);
  else OL_TRY(ol_quant_make_type_proto(set->plan, &expected));
  ol_status s = expected ? ol_qw_same_descriptor(root, expected) : OL_OUT_OF_MEMORY;
  ol_quant_type_free(expected);
  if (s == OL_OUT_OF_MEMORY) return s;
  return s == OL_OK ? OL_OK
                    : INVALID("the storage type '%s' is not parameter set '%s''s storage_type",
                              root->name ? root->name : "", set->name);
}

static void put_le(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_f64(uint8_t *p, double v) {
  uint64_t bits;
  memcpy(&bits, &v, 8);
  put_le(p, bits);
}

ol_status ol_quant_shared_materialize(const ol_quant_shared_set *set,
                                      const Onnx__EncodedValueProto *value,
                                      const ol_type_catalogue *types, Onnx__EncodedValueProto **out) {
  *out = NULL;
  OL_TRY(ol_quant_shared_check(set, value, types));
  if (set->ort_type) { /* B, then the set's scales and zero points */
    uint8_t *raw = ol_xmalloc((size_t)set->compact_size + set->ort_tail_size);
    if (!raw) return OL_OUT_OF_MEMORY;
    memcpy(raw, value->raw_data.data, (size_t)set->compact_size);
    memcpy(raw + set->compact_size, set->ort_tail, set->ort_tail_size);
    *out = new_value(set, copy_type(set->ort_type), raw, (size_t)set->compact_size + set->ort_tail_size,
                     value->name, NULL);
    return *out ? OL_OK : ol_error(OL_OUT_OF_MEMORY, "out of memory materializing a compact value");
  }
  const ol_quant_plan *p = set->plan;
  uint64_t total = 0;
  OL_TRY(ol_quant_plan_payload_size(p, &total));
  if (total > SIZE_MAX) return ol_error(OL_OUT_OF_MEMORY, "Quantization payload too large");
  uint8_t *full = ol_xmalloc((size_t)total);
  if (!full) return OL_OUT_OF_MEMORY;
  const uint8_t *compact = value->raw_data.data;
  size_t at = 0, from = 1;
  full[at++] = 0;
  for (size_t i = 0; i < p->permutation_size; i++, at += 8) put_le(full + at, (uint64_t)p->permutation[i]);
  for (size_t i = 0; i < p->forward_size; i++, at += 8) put_f64(full + at, p->forward[i]);
  for (size_t i = 0; i < p->inverse_size; i++, at += 8) put_f64(full + at, p->inverse[i]);
  for (size_t i = 0; i < p->outlier_count; i++, at += 8) put_le(full + at, (uint64_t)p->outliers[i]);
  memcpy(full + at, compact + from, 8 * p->outlier_count);
  at += 8 * p->outlier_count;
  from += 8 * p->outlier_count;
  for (size_t r = 0; r < p->run_count; r++) {
    const ol_quant_layout *l = &p->runs[r].layout;
    size_t codes = (size_t)ol_quant_layout_code_bytes(l);
    for (size_t b = 0; b < p->runs[r].block_count; b++) {
      const ol_quant_block *blk = &p->runs[r].blocks[b];
      put_f64(full + at, blk->scale);
      put_f64(full + at + 8, blk->zero_point);
      put_f64(full + at + 16, blk->offset);
      at += 24;
      for (size_t i = 0; i < blk->codebook_size; i++, at += 8) put_f64(full + at, blk->codebook[i]);
      memcpy(full + at, compact + from, codes);
      at += codes;
      from += codes;
    }
  }
  if (at != total || from != set->compact_size) {
    free(full);
    return ol_error(OL_INTERNAL, "materialized payload size mismatch (%zu of %llu)", at,
                    (unsigned long long)total);
  }
  Onnx__StructTypeProto *type = NULL;
  ol_status s = ol_quant_make_type_proto(p, &type);
  if (s != OL_OK) {
    free(full);
    return s;
  }
  *out = new_value(set, type, full, (size_t)total, value->name, NULL);
  return *out ? OL_OK : ol_error(OL_OUT_OF_MEMORY, "out of memory materializing a compact value");
}

ol_status ol_quant_shared_decode(const ol_quant_shared_set *set, const Onnx__EncodedValueProto *value,
                                 const ol_type_catalogue *types, ol_quant_decoded *out) {
  memset(out, 0, sizeof(*out));
  Onnx__EncodedValueProto *full = NULL;
  OL_TRY(ol_quant_shared_materialize(set, value, types, &full));
  ol_status s = ol_quant_decode_proto(full, NULL, out, NULL);
  ol_quant_proto_free(full);
  return s;
}

/* ============================================================ catalogues */

ol_status ol_quant_catalogue_new(ol_quant_catalogue **out) {
  *out = ol_xcalloc(1, sizeof **out);
  if (!*out) return OL_OUT_OF_MEMORY;
  (*out)->refcount = 1;
  return OL_OK;
}

ol_status ol_quant_catalogue_add(ol_quant_catalogue *c, ol_quant_shared_set *set) {
  if (ol_quant_catalogue_find(c, set->name))
    return INVALID("Duplicate quantization parameter set '%s'", set->name);
  ol_quant_shared_set **grown = realloc(c->sets, (c->count + 1) * sizeof(*grown));
  if (!grown) return OL_OUT_OF_MEMORY;
  c->sets = grown;
  c->sets[c->count++] = ol_quant_shared_retain(set);
  return OL_OK;
}

ol_quant_shared_set *ol_quant_catalogue_find(const ol_quant_catalogue *c, const char *name) {
  for (size_t i = 0; c && name && i < c->count; i++)
    if (strcmp(c->sets[i]->name, name) == 0) return c->sets[i];
  return NULL;
}

ol_quant_catalogue *ol_quant_catalogue_retain(ol_quant_catalogue *c) {
  if (c) c->refcount++;
  return c;
}

void ol_quant_catalogue_release(ol_quant_catalogue *c) {
  if (!c || --c->refcount > 0) return;
  for (size_t i = 0; i < c->count; i++) ol_quant_shared_release(c->sets[i]);
  free(c->sets);
  free(c);
}
