/* TensorProto <-> tensor values, including typed data fields and external data. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/grow.h"
#include "core/status.h"
#include "ir/model.h"
#include "ir/packed_views.h"

#define S(x) ((x) ? (x) : "")

static void release_model_view(void *user) { ol_proto_owner_release(user); }

/* Copies `count` typed elements from the proto's typed field into dst. */
static ol_status copy_typed_field(const Onnx__TensorProto *tp, const char *name, ol_dtype dtype,
                                  int64_t count, void *dst) {
  size_t n = (size_t)count;
  switch (dtype) {
    case OL_DTYPE_FLOAT:
      if (tp->n_float_data != n) break;
      memcpy(dst, tp->float_data, n * 4);
      return OL_OK;
    case OL_DTYPE_COMPLEX64:
      if (tp->n_float_data != 2 * n) break;
      memcpy(dst, tp->float_data, n * 8);
      return OL_OK;
    case OL_DTYPE_DOUBLE:
      if (tp->n_double_data != n) break;
      memcpy(dst, tp->double_data, n * 8);
      return OL_OK;
    case OL_DTYPE_COMPLEX128:
      if (tp->n_double_data != 2 * n) break;
      memcpy(dst, tp->double_data, n * 16);
      return OL_OK;
    case OL_DTYPE_INT64:
      if (tp->n_int64_data != n) break;
      memcpy(dst, tp->int64_data, n * 8);
      return OL_OK;
    case OL_DTYPE_UINT64:
    case OL_DTYPE_UINT32:
      if (tp->n_uint64_data != n) break;
      for (size_t i = 0; i < n; i++) {
        if (dtype == OL_DTYPE_UINT64)
          ((uint64_t *)dst)[i] = tp->uint64_data[i];
        else
          ((uint32_t *)dst)[i] = (uint32_t)tp->uint64_data[i];
      }
      return OL_OK;
    case OL_DTYPE_INT32:
    case OL_DTYPE_INT16:
    case OL_DTYPE_INT8:
    case OL_DTYPE_UINT16:
    case OL_DTYPE_UINT8:
    case OL_DTYPE_BOOL:
    case OL_DTYPE_FLOAT16:
    case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_FLOAT8E4M3FN:
    case OL_DTYPE_FLOAT8E4M3FNUZ:
    case OL_DTYPE_FLOAT8E5M2:
    case OL_DTYPE_FLOAT8E5M2FNUZ:
    case OL_DTYPE_FLOAT8E8M0: {
      if (tp->n_int32_data != n) break;
      size_t size = ol_dtype_size(dtype);
      for (size_t i = 0; i < n; i++) {
        int32_t v = tp->int32_data[i];
        if (size == 4) memcpy((char *)dst + 4 * i, &v, 4);
        else if (size == 2) ((uint16_t *)dst)[i] = (uint16_t)v;
        else ((uint8_t *)dst)[i] = (uint8_t)v;
      }
      return OL_OK;
    }
    case OL_DTYPE_INT4:
    case OL_DTYPE_UINT4:
    case OL_DTYPE_FLOAT4E2M1:
    case OL_DTYPE_INT2:
    case OL_DTYPE_UINT2: {
      /* int32_data holds packed bytes for sub-byte types */
      size_t bytes = ol_dtype_storage_bytes(dtype, count);
      if (tp->n_int32_data != bytes) break;
      for (size_t i = 0; i < bytes; i++) ((uint8_t *)dst)[i] = (uint8_t)tp->int32_data[i];
      return OL_OK;
    }
    default:
      return ol_error(OL_NOT_IMPLEMENTED, "tensor '%s': element type %s has no typed field",
                      name, ol_dtype_name(dtype));
  }
  return ol_error(OL_INVALID_MODEL, "tensor '%s': data field length does not match %lld elements",
                  name, (long long)count);
}

/* Checks tp's external data entries against its payload size `need`:
 * location (inside the model folder), offset and length. */
static ol_status external_entry(const Onnx__TensorProto *tp, size_t need, const char **out_location,
                                int64_t *out_offset) {
  const char *location = NULL;
  int64_t offset = 0, length = -1;
  for (size_t i = 0; i < tp->n_external_data; i++) {
    const char *key = S(tp->external_data[i]->key), *value = S(tp->external_data[i]->value);
    if (strcmp(key, "location") == 0) location = value;
    else if (strcmp(key, "offset") == 0) offset = strtoll(value, NULL, 10);
    else if (strcmp(key, "length") == 0) length = strtoll(value, NULL, 10);
  }
  const char *name = S(tp->name);
  if (!location)
    return ol_error(OL_INVALID_MODEL, "tensor '%s': external data has no location", name);
  if (strstr(location, "..") || location[0] == '/')
    return ol_error(OL_INVALID_MODEL, "tensor '%s': external data location '%s' escapes the model folder",
                    name, location);
  if (offset < 0 || (length >= 0 && (size_t)length != need))
    return ol_error(OL_INVALID_MODEL, "tensor '%s': external data offset/length do not match %zu bytes",
                    name, need);
  *out_location = location;
  *out_offset = offset;
  return OL_OK;
}

static ol_status read_external(const Onnx__TensorProto *tp, const ol_tensor_source *src,
                               size_t need, void *dst) {
  const char *location = NULL, *name = S(tp->name);
  int64_t offset = 0;
  OL_TRY(external_entry(tp, need, &location, &offset));
  const ol_model_load_options *o = src ? src->options : NULL;
  if (o) {
    for (size_t i = 0; i < o->external_count; i++) {
      if (strcmp(o->external_names[i], location) != 0) continue;
      if ((uint64_t)offset + need > o->external_sizes[i])
        return ol_error(OL_INVALID_MODEL, "tensor '%s': external buffer '%s' is too short", name,
                        location);
      memcpy(dst, (const char *)o->external_data[i] + offset, need);
      return OL_OK;
    }
  }
  if (!o || !o->external_data_dir)
    return ol_error(OL_NOT_FOUND, "tensor '%s': external data '%s' was not supplied", name, location);
  char path[4096];
  snprintf(path, sizeof path, "%s/%s", o->external_data_dir, location);
  FILE *f = fopen(path, "rb");
  if (!f) return ol_error(OL_NOT_FOUND, "tensor '%s': cannot open external data file '%s'", name, path);
  ol_status s = OL_OK;
  if (fseek(f, (long)offset, SEEK_SET) != 0 || fread(dst, 1, need, f) != need)
    s = ol_error(OL_INVALID_MODEL, "tensor '%s': external data file '%s' is too short", name, path);
  fclose(f);
  return s;
}

/* Checks tp's data type, rank and dims; dims gets the dims. */
static ol_status declared_shape(const Onnx__TensorProto *tp, int64_t dims[OL_MAX_RANK]) {
  const char *name = S(tp->name);
  if (!ol_dtype_valid((ol_dtype)tp->data_type))
    return ol_error(OL_INVALID_MODEL, "tensor '%s': invalid data_type %d", name, (int)tp->data_type);
  if (tp->n_dims > OL_MAX_RANK)
    return ol_error(OL_INVALID_MODEL, "tensor '%s': rank %zu exceeds %d", name, tp->n_dims, OL_MAX_RANK);
  if (tp->segment)
    return ol_error(OL_NOT_IMPLEMENTED, "tensor '%s': segmented tensors are not supported", name);
  for (size_t i = 0; i < tp->n_dims; i++) dims[i] = tp->dims[i];
  if (!ol_shape_valid((int)tp->n_dims, dims))
    return ol_error(OL_INVALID_MODEL, "tensor '%s': invalid dimensions", name);
  return OL_OK;
}

bool ol_tensor_proto_is_external(const Onnx__TensorProto *tp) {
  return tp->data_type != OL_DTYPE_STRING && tp->has_data_location &&
         tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
}

ol_status ol_tensor_proto_check_external(const Onnx__TensorProto *tp) {
  int64_t dims[OL_MAX_RANK], offset = 0;
  const char *location = NULL;
  OL_TRY(declared_shape(tp, dims));
  size_t need = ol_dtype_storage_bytes((ol_dtype)tp->data_type, ol_shape_count((int)tp->n_dims, dims));
  return external_entry(tp, need, &location, &offset);
}

/* The payload read from (location, offset, length) for owner's model or a
 * model it derives from (NULL: none). */
static ol_buffer *external_read_before(const ol_proto_owner *owner, const char *location, int64_t offset,
                                       size_t length) {
  for (; owner; owner = owner->base)
    for (size_t i = 0; i < owner->n_external; i++) {
      const ol_external_payload *e = &owner->external[i];
      if (e->offset == offset && e->length == length && strcmp(e->location, location) == 0) return e->buffer;
    }
  return NULL;
}

/* tp's external payload: the one a model owner derives from already read
 * (shared, not copied), else read from the caller's buffers or folder and
 * recorded in the owner for the models derived from it. */
static ol_status external_tensor(const Onnx__TensorProto *tp, const ol_tensor_source *src, size_t need, int rank,
                                 const int64_t *dims, ol_value **out) {
  const char *location = NULL;
  int64_t offset = 0;
  OL_TRY(external_entry(tp, need, &location, &offset));
  ol_proto_owner *owner = src ? src->owner : NULL;
  ol_buffer *read = need ? external_read_before(owner, location, offset, need) : NULL;
  if (read) return ol_value_new_view(read, 0, (ol_dtype)tp->data_type, rank, dims, out);
  OL_TRY(ol_value_new_tensor(NULL, (ol_dtype)tp->data_type, rank, dims, out));
  ol_status s = read_external(tp, src, need, ol_tdata(&(*out)->tensor));
  ol_buffer *buffer = (*out)->tensor.buffer;
  if (s == OL_OK && owner && buffer &&
      ol_grow(&owner->external, &owner->external_capacity, owner->n_external, 1, sizeof *owner->external, 8)) {
    char *copy = ol_strdup(location);
    if (copy)
      owner->external[owner->n_external++] = (ol_external_payload){copy, offset, need, ol_buffer_retain(buffer)};
    /* out of memory here only costs a derived model a second read */
  }
  if (s != OL_OK) {
    ol_value_release(*out);
    *out = NULL;
  }
  return s;
}

ol_status ol_tensor_from_proto(const Onnx__TensorProto *tp, const ol_tensor_source *src,
                               ol_value **out) {
  *out = NULL;
  const char *name = S(tp->name);
  ol_dtype dtype = (ol_dtype)tp->data_type;
  int rank = (int)tp->n_dims;
  int64_t dims[OL_MAX_RANK];
  OL_TRY(declared_shape(tp, dims));
  int64_t count = ol_shape_count(rank, dims);
  size_t need = ol_dtype_storage_bytes(dtype, count);

  if (dtype == OL_DTYPE_STRING) {
    if (tp->n_string_data != (size_t)count)
      return ol_error(OL_INVALID_MODEL, "tensor '%s': %zu strings for %lld elements", name,
                      tp->n_string_data, (long long)count);
    OL_TRY(ol_value_new_tensor(NULL, dtype, rank, dims, out));
    for (int64_t i = 0; i < count; i++) {
      ol_status s = ol_tensor_set_string(*out, (size_t)i, (const char *)tp->string_data[i].data,
                                         tp->string_data[i].len);
      if (s != OL_OK) {
        ol_value_release(*out);
        *out = NULL;
        return s;
      }
    }
    return OL_OK;
  }

  bool external = ol_tensor_proto_is_external(tp); /* (strings returned above) */
  if (!external && tp->has_raw_data) {
    if (tp->raw_data.len != need)
      return ol_error(OL_INVALID_MODEL, "tensor '%s': raw_data has %zu bytes, shape needs %zu", name,
                      tp->raw_data.len, need);
    if (src && src->owner && need && ((uintptr_t)tp->raw_data.data % 8) == 0) {
      /* View the weights where protobuf-c put them: no second copy. */
      ol_buffer *b = ol_buffer_wrap(tp->raw_data.data, need, release_model_view,
                                    ol_proto_owner_retain(src->owner));
      if (!b) {
        ol_proto_owner_release(src->owner);
        return OL_OUT_OF_MEMORY;
      }
      ol_status s = ol_value_new_view(b, 0, dtype, rank, dims, out);
      ol_buffer_release(b);
      const ol_wire_view *packed = s == OL_OK ? ol_proto_owner_find_packed(src->owner, tp->raw_data.data) : NULL;
      if (packed) (*out)->tensor.packing = packed->packing;
      return s;
    }
    OL_TRY(ol_value_new_tensor(NULL, dtype, rank, dims, out));
    const ol_wire_view *packed = src ? ol_proto_owner_find_packed(src->owner, tp->raw_data.data) : NULL;
    if (packed && packed->length == need)
      ol_wire_view_to_dense(packed, tp->raw_data.data, ol_tdata(&(*out)->tensor));
    else if (need)
      memcpy(ol_tdata(&(*out)->tensor), tp->raw_data.data, need);
    return OL_OK;
  }
  if (external) return external_tensor(tp, src, need, rank, dims, out);
  OL_TRY(ol_value_new_tensor(NULL, dtype, rank, dims, out));
  ol_status s = OL_OK;
  if (count) s = copy_typed_field(tp, name, dtype, count, ol_tdata(&(*out)->tensor));
  if (s != OL_OK) {
    ol_value_release(*out);
    *out = NULL;
  }
  return s;
}

ol_status ol_tensor_to_proto(const ol_tensor *t, const char *name, Onnx__TensorProto **out) {
  Onnx__TensorProto *tp = ol_xmalloc(sizeof *tp);
  if (!tp) return OL_OUT_OF_MEMORY;
  onnx__tensor_proto__init(tp);
  tp->has_data_type = 1;
  tp->data_type = (int32_t)t->dtype;
  tp->name = ol_strdup(name ? name : "");
  tp->n_dims = (size_t)t->rank;
  tp->dims = ol_xcalloc((size_t)t->rank, sizeof(int64_t));
  if (t->rank) memcpy(tp->dims, t->dims, sizeof(int64_t) * (size_t)t->rank);
  int64_t count = ol_tcount(t);
  if (t->dtype == OL_DTYPE_STRING) {
    tp->n_string_data = (size_t)count;
    tp->string_data = ol_xcalloc((size_t)count, sizeof(ProtobufCBinaryData));
    const ol_string *s = ol_tdata(t);
    for (int64_t i = 0; i < count; i++) {
      tp->string_data[i].len = s[i].length;
      tp->string_data[i].data = ol_xmalloc(s[i].length + 1);
      if (s[i].length) memcpy(tp->string_data[i].data, s[i].data, s[i].length);
    }
  } else {
    size_t bytes = ol_dtype_storage_bytes(t->dtype, count);
    tp->has_raw_data = 1;
    tp->raw_data.len = bytes;
    tp->raw_data.data = ol_xmalloc(bytes);
    if (bytes) memcpy(tp->raw_data.data, ol_tdata(t), bytes);
  }
  *out = tp;
  return OL_OK;
}

void ol_type_info_from_proto(const Onnx__TypeProto *tp, ol_type_info *out) {
  memset(out, 0, sizeof *out);
  out->rank = -1;
  out->proto = tp;
  if (!tp) return;
  switch (tp->value_case) {
    case ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE: {
      const Onnx__TypeProto__Tensor *t = tp->tensor_type;
      out->kind = OL_VALUE_TENSOR;
      out->dtype = t->has_elem_type ? (ol_dtype)t->elem_type : OL_DTYPE_UNDEFINED;
      if (t->shape && t->shape->n_dim <= OL_MAX_RANK) {
        out->rank = (int)t->shape->n_dim;
        for (size_t i = 0; i < t->shape->n_dim; i++) {
          const Onnx__TensorShapeProto__Dimension *d = t->shape->dim[i];
          out->dims[i] = d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE
                             ? d->dim_value : -1;
          out->dim_params[i] =
              d->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM ? d->dim_param : NULL;
        }
      }
      break;
    }
    case ONNX__TYPE_PROTO__VALUE_SEQUENCE_TYPE: {
      ol_type_info inner;
      ol_type_info_from_proto(tp->sequence_type->elem_type, &inner);
      out->kind = OL_VALUE_SEQUENCE;
      out->dtype = inner.dtype;
      break;
    }
    case ONNX__TYPE_PROTO__VALUE_MAP_TYPE:
      out->kind = OL_VALUE_MAP;
      break;
    case ONNX__TYPE_PROTO__VALUE_OPTIONAL_TYPE: {
      ol_type_info inner;
      ol_type_info_from_proto(tp->optional_type->elem_type, &inner);
      out->kind = OL_VALUE_OPTIONAL;
      out->dtype = inner.dtype;
      break;
    }
    case ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE:
      /* named fields (inline structure or type_ref); checked through proto */
      out->kind = OL_VALUE_STRUCT;
      break;
    default:
      /* sparse, opaque or no type: no runtime kind of their own (tensor kind
       * kept for ordinary feeds; persistent declarations reject them) */
      out->kind = OL_VALUE_TENSOR;
      break;
  }
}
