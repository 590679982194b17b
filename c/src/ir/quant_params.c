/* Shared quantization parameter declarations in a ModelProto (see quant_params.h). */
#include "ir/quant_params.h"
#include "ir/proto_depth.h"

#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"

#define INVALID(...) ol_error(OL_INVALID_MODEL, __VA_ARGS__)
#define ROLE_STORAGE OL_QUANT_IN_COUNT
#define ROLE_LOGICAL (OL_QUANT_IN_COUNT + 1)
#define ROLE_COUNT (OL_QUANT_IN_COUNT + 2)

static const char *role_name(size_t role) {
  return role == ROLE_STORAGE ? "storage_type" : role == ROLE_LOGICAL ? "logical_type"
                                                                       : ol_quant_input_names[role];
}

/* The role of a key (0 for an unknown key: "X" is no role either). */
static size_t role_of(const char *key) {
  for (size_t r = OL_QUANT_IN_SCALES; r < ROLE_COUNT; r++)
    if (strcmp(key, role_name(r)) == 0) return r;
  return 0;
}

static const Onnx__TensorProto *find_initializer(const Onnx__GraphProto *g, const char *name) {
  for (size_t i = 0; i < g->n_initializer; i++)
    if (g->initializer[i]->name && strcmp(g->initializer[i]->name, name) == 0) return g->initializer[i];
  return NULL;
}

/* A rank-1 UINT8 descriptor initializer's bytes. */
static ol_status descriptor_bytes(const Onnx__TensorProto *t, const char *role, const uint8_t **data,
                                  size_t *size, uint8_t **owned) {
  *owned = NULL;
  if (!t->has_data_type || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__UINT8 || t->n_dims != 1)
    return INVALID("role '%s': initializer '%s' must be a rank-one UINT8 tensor", role, t->name);
  size_t n = t->dims[0] < 0 ? 0 : (size_t)t->dims[0];
  if (t->has_raw_data && t->raw_data.len == n) {
    *data = t->raw_data.data;
    *size = n;
    return OL_OK;
  }
  if (t->n_int32_data != n || t->has_raw_data)
    return INVALID("role '%s': initializer '%s' holds %zu bytes for dimension %zu", role, t->name,
                   t->has_raw_data ? t->raw_data.len : t->n_int32_data, n);
  *owned = ol_xmalloc(n ? n : 1);
  if (!*owned) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < n; i++) (*owned)[i] = (uint8_t)t->int32_data[i];
  *data = *owned;
  *size = n;
  return OL_OK;
}

typedef struct declaration {
  const Onnx__TensorProto *tensors[ROLE_COUNT];
  Onnx__StructTypeProto *storage;
  Onnx__TypeProto *logical;
  ol_value *values[OL_QUANT_IN_COUNT];
} declaration;

static void declaration_clear(declaration *d) {
  ol_quant_type_free(d->storage);
  if (d->logical) onnx__type_proto__free_unpacked(d->logical, NULL);
  for (size_t i = 0; i < OL_QUANT_IN_COUNT; i++) ol_value_release(d->values[i]);
}

static ol_status read_declaration(const Onnx__ModelProto *model, const Onnx__TensorAnnotation *a,
                                  const ol_tensor_source *src, declaration *d) {
  const Onnx__GraphProto *g = model->graph;
  for (size_t i = 0; i < a->n_quant_parameter_tensor_names; i++) {
    const Onnx__StringStringEntryProto *e = a->quant_parameter_tensor_names[i];
    const char *key = e->key ? e->key : "";
    size_t role = role_of(key);
    if (!role) return INVALID("unknown role '%s'", key);
    if (d->tensors[role]) return INVALID("duplicate role '%s'", key);
    const char *name = e->value ? e->value : "";
    d->tensors[role] = find_initializer(g, name);
    if (!d->tensors[role])
      return INVALID("role '%s' names initializer '%s', which is not a root graph initializer", key,
                     name);
  }
  for (size_t role = ROLE_STORAGE; role <= ROLE_LOGICAL; role++) {
    if (!d->tensors[role]) return INVALID("the required role '%s' is missing", role_name(role));
    const uint8_t *data = NULL;
    size_t size = 0;
    uint8_t *owned = NULL;
    OL_TRY(descriptor_bytes(d->tensors[role], role_name(role), &data, &size, &owned));
    ol_status deep = ol_proto_check_depth(role == ROLE_STORAGE ? &onnx__struct_type_proto__descriptor
                                                               : &onnx__type_proto__descriptor,
                                          data, size, role_name(role));
    if (deep != OL_OK) {
      free(owned);
      return deep;
    }
    if (role == ROLE_STORAGE) d->storage = onnx__struct_type_proto__unpack(NULL, size, data);
    else d->logical = onnx__type_proto__unpack(NULL, size, data);
    free(owned);
    if (role == ROLE_STORAGE ? !d->storage : !d->logical)
      return INVALID("role '%s': initializer '%s' is not a serialized %s", role_name(role),
                     d->tensors[role]->name, role == ROLE_STORAGE ? "StructTypeProto" : "TypeProto");
  }
  ol_tensor_source copy = {NULL, NULL};
  for (size_t role = OL_QUANT_IN_SCALES; role < OL_QUANT_IN_COUNT; role++) {
    if (!d->tensors[role]) continue;
    ol_status s = ol_tensor_from_proto(d->tensors[role], src ? src : &copy, &d->values[role]);
    if (s != OL_OK)
      return s == OL_OUT_OF_MEMORY ? s
                                   : ol_error_wrap(OL_INVALID_MODEL, "role '%s': initializer '%s'",
                                                   role_name(role), d->tensors[role]->name);
    if (d->values[role]->kind != OL_VALUE_TENSOR)
      return INVALID("role '%s': initializer '%s' is not a tensor", role_name(role),
                     d->tensors[role]->name);
  }
  return OL_OK;
}

/* The model's struct types, for resolving storage type_refs. */
static ol_status model_types(const Onnx__ModelProto *model, ol_type_catalogue **out) {
  return ol_type_catalogue_create((const Onnx__StructTypeProto *const *)model->struct_types,
                                  model->n_struct_types, out);
}

/* One annotation's set (name is the text after the prefix). */
static ol_status read_set(const Onnx__ModelProto *model, const ol_type_catalogue *types,
                          const Onnx__TensorAnnotation *a, const char *name, const ol_tensor_source *src,
                          ol_quant_shared_set **out) {
  declaration d = {0};
  ol_status s = read_declaration(model, a, src, &d);
  if (s != OL_OK && s != OL_OUT_OF_MEMORY) s = ol_error_wrap(s, "quantization parameter set '%s'", name);
  if (s == OL_OK) {
    const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {0};
    for (size_t i = 0; i < OL_QUANT_IN_COUNT; i++) inputs[i] = d.values[i] ? &d.values[i]->tensor : NULL;
    s = ol_quant_shared_create(name, d.storage, d.logical, types, inputs, out);
    if (s != OL_OK && s != OL_OUT_OF_MEMORY) s = OL_INVALID_MODEL; /* message kept */
  }
  declaration_clear(&d);
  return s;
}

ol_status ol_quant_catalogue_from_model(const Onnx__ModelProto *model, const ol_tensor_source *src,
                                        ol_quant_catalogue **out) {
  *out = NULL;
  ol_quant_catalogue *c;
  OL_TRY(ol_quant_catalogue_new(&c));
  const Onnx__GraphProto *g = model->graph;
  const size_t prefix = strlen(OL_QUANT_PARAMETERS_PREFIX);
  ol_type_catalogue *types = NULL;
  ol_status s = model_types(model, &types);
  for (size_t i = 0; g && s == OL_OK && i < g->n_quantization_annotation; i++) {
    const Onnx__TensorAnnotation *a = g->quantization_annotation[i];
    if (!a->tensor_name || strncmp(a->tensor_name, OL_QUANT_PARAMETERS_PREFIX, prefix) != 0) continue;
    const char *name = a->tensor_name + prefix;
    if (!name[0]) {
      s = INVALID("quantization annotation '%s' declares a parameter set without a name", a->tensor_name);
    } else if (ol_quant_catalogue_find(c, name)) {
      s = INVALID("Duplicate quantization parameter set '%s'", name);
    } else {
      ol_quant_shared_set *set = NULL;
      s = read_set(model, types, a, name, src, &set);
      if (s == OL_OK) s = ol_quant_catalogue_add(c, set);
      ol_quant_shared_release(set);
    }
  }
  ol_type_catalogue_destroy(types);
  if (s != OL_OK) {
    ol_quant_catalogue_release(c);
    return s;
  }
  *out = c;
  return OL_OK;
}

/* ============================================================ declaring */

static Onnx__TensorProto *bytes_tensor(const char *name, uint8_t *bytes, size_t size) {
  Onnx__TensorProto *t = malloc(sizeof *t);
  int64_t *dims = malloc(sizeof(int64_t));
  char *copy = ol_strdup(name);
  if (!t || !dims || !copy) {
    free(t), free(dims), free(copy), free(bytes);
    return NULL;
  }
  *t = (Onnx__TensorProto)ONNX__TENSOR_PROTO__INIT;
  t->name = copy;
  t->has_data_type = 1;
  t->data_type = ONNX__TENSOR_PROTO__DATA_TYPE__UINT8;
  t->n_dims = 1;
  t->dims = dims;
  dims[0] = (int64_t)size;
  t->has_raw_data = 1;
  t->raw_data.data = bytes;
  t->raw_data.len = size;
  return t;
}

static uint8_t *pack_storage(const Onnx__StructTypeProto *type, size_t *size) {
  *size = onnx__struct_type_proto__get_packed_size(type);
  uint8_t *bytes = malloc(*size ? *size : 1);
  if (bytes) onnx__struct_type_proto__pack(type, bytes);
  return bytes;
}

static uint8_t *pack_logical(const Onnx__TypeProto *type, size_t *size) {
  *size = onnx__type_proto__get_packed_size(type);
  uint8_t *bytes = malloc(*size ? *size : 1);
  if (bytes) onnx__type_proto__pack(type, bytes);
  return bytes;
}

static bool name_taken(const Onnx__GraphProto *g, const char *name) {
  if (find_initializer(g, name)) return true;
  for (size_t i = 0; i < g->n_encoded_initializer; i++)
    if (g->encoded_initializer[i]->name && strcmp(g->encoded_initializer[i]->name, name) == 0)
      return true;
  return false;
}

/* The new initializers and annotation, built before the model is touched. */
typedef struct additions {
  Onnx__TensorProto *tensors[ROLE_COUNT];
  size_t count;
  Onnx__TensorAnnotation *annotation;
} additions;

static void additions_free(additions *a) {
  for (size_t i = 0; i < a->count; i++) onnx__tensor_proto__free_unpacked(a->tensors[i], NULL);
  if (a->annotation) onnx__tensor_annotation__free_unpacked(a->annotation, NULL);
}

static ol_status build_additions(const char *name, const Onnx__StructTypeProto *storage,
                                 const Onnx__TypeProto *logical,
                                 const ol_tensor *const inputs[OL_QUANT_IN_COUNT], additions *a) {
  Onnx__TensorAnnotation *annotation = malloc(sizeof *annotation);
  if (!annotation) return OL_OUT_OF_MEMORY;
  *annotation = (Onnx__TensorAnnotation)ONNX__TENSOR_ANNOTATION__INIT;
  a->annotation = annotation;
  size_t length = strlen(OL_QUANT_PARAMETERS_PREFIX) + strlen(name);
  annotation->tensor_name = malloc(length + 1);
  annotation->quant_parameter_tensor_names = calloc(ROLE_COUNT, sizeof(Onnx__StringStringEntryProto *));
  if (!annotation->tensor_name || !annotation->quant_parameter_tensor_names) return OL_OUT_OF_MEMORY;
  strcpy(annotation->tensor_name, OL_QUANT_PARAMETERS_PREFIX);
  strcat(annotation->tensor_name, name);
  static const size_t order[ROLE_COUNT] = {ROLE_STORAGE, ROLE_LOGICAL, 1, 2, 3, 4, 5, 6, 7, 8};
  for (size_t k = 0; k < ROLE_COUNT; k++) {
    size_t role = order[k];
    if (role < OL_QUANT_IN_COUNT && !inputs[role]) continue;
    const char *rname = role_name(role);
    char *tensor_name = malloc(length + strlen(rname) + 2);
    if (!tensor_name) return OL_OUT_OF_MEMORY;
    strcpy(tensor_name, annotation->tensor_name);
    strcat(tensor_name, "/");
    strcat(tensor_name, rname);
    Onnx__TensorProto *t = NULL;
    ol_status s = OL_OK;
    if (role >= OL_QUANT_IN_COUNT) {
      size_t size;
      uint8_t *bytes = role == ROLE_STORAGE ? pack_storage(storage, &size) : pack_logical(logical, &size);
      t = bytes ? bytes_tensor(tensor_name, bytes, size) : NULL;
      if (!t) s = OL_OUT_OF_MEMORY;
    } else {
      s = ol_tensor_to_proto(inputs[role], tensor_name, &t);
    }
    Onnx__StringStringEntryProto *e = s == OL_OK ? malloc(sizeof *e) : NULL;
    char *key = e ? ol_strdup(rname) : NULL;
    if (s == OL_OK && !key) s = OL_OUT_OF_MEMORY;
    if (s != OL_OK) {
      free(tensor_name), free(e);
      if (t) onnx__tensor_proto__free_unpacked(t, NULL);
      return s;
    }
    *e = (Onnx__StringStringEntryProto)ONNX__STRING_STRING_ENTRY_PROTO__INIT;
    e->key = key;
    e->value = tensor_name;
    annotation->quant_parameter_tensor_names[annotation->n_quant_parameter_tensor_names++] = e;
    a->tensors[a->count++] = t;
  }
  return OL_OK;
}

ol_status ol_quant_add_parameters_proto(Onnx__ModelProto *model, const char *name,
                                  const Onnx__StructTypeProto *storage, const Onnx__TypeProto *logical,
                                  const ol_tensor *const inputs[OL_QUANT_IN_COUNT],
                                  Onnx__StructTypeProto **compact) {
  if (compact) *compact = NULL;
  if (!model || !model->graph) return ol_error(OL_INVALID_ARGUMENT, "add_quantization_parameters: no model graph");
  if (!name || !name[0])
    return ol_error(OL_INVALID_ARGUMENT, "The quantization parameter set name must be nonempty");
  Onnx__GraphProto *g = model->graph;
  const size_t prefix = strlen(OL_QUANT_PARAMETERS_PREFIX);
  for (size_t i = 0; i < g->n_quantization_annotation; i++) {
    const char *t = g->quantization_annotation[i]->tensor_name;
    if (t && strncmp(t, OL_QUANT_PARAMETERS_PREFIX, prefix) == 0 && strcmp(t + prefix, name) == 0)
      return ol_error(OL_INVALID_ARGUMENT, "Duplicate quantization parameter set '%s'", name);
  }
  ol_quant_shared_set *set = NULL;
  ol_type_catalogue *types = NULL;
  OL_TRY(model_types(model, &types));
  ol_status created = ol_quant_shared_create(name, storage, logical, types, inputs, &set);
  ol_type_catalogue_destroy(types);
  OL_TRY(created);
  additions a = {0};
  ol_status s = build_additions(name, storage, logical, inputs, &a);
  for (size_t i = 0; s == OL_OK && i < a.count; i++)
    if (name_taken(g, a.tensors[i]->name))
      s = ol_error(OL_INVALID_ARGUMENT, "Shared parameter initializer collision: '%s'", a.tensors[i]->name);
  Onnx__TensorProto **inits = s == OL_OK ? realloc(g->initializer, (g->n_initializer + a.count) * sizeof(*inits)) : NULL;
  if (inits) g->initializer = inits;
  Onnx__TensorAnnotation **notes =
      inits ? realloc(g->quantization_annotation, (g->n_quantization_annotation + 1) * sizeof(*notes)) : NULL;
  if (notes) g->quantization_annotation = notes;
  if (s == OL_OK && compact) s = notes ? ol_quant_shared_type(set, compact) : OL_OUT_OF_MEMORY;
  if (s == OL_OK && !notes) s = OL_OUT_OF_MEMORY;
  ol_quant_shared_release(set);
  if (s != OL_OK) {
    additions_free(&a);
    return s;
  }
  for (size_t i = 0; i < a.count; i++) g->initializer[g->n_initializer++] = a.tensors[i];
  g->quantization_annotation[g->n_quantization_annotation++] = a.annotation;
  return OL_OK;
}

/* ============================================================ loaded models */

ol_status ol_quant_model_set(const ol_model_data *md, const char *name, ol_quant_shared_set **out) {
  *out = NULL;
  if (!md)
    return ol_error(OL_INVALID_ARGUMENT,
                    "the encoded value refers to the quantization parameter set '%s': pass its model",
                    name);
  if (!md->quant_params) /* the declarations failed to load: their error */
    return ol_error(md->quant_params_status, "%s", md->quant_params_error ? md->quant_params_error : "");
  *out = ol_quant_shared_retain(ol_quant_catalogue_find(md->quant_params, name));
  return *out ? OL_OK
              : ol_error(OL_INVALID_ARGUMENT,
                         "the model does not declare the quantization parameter set '%s'", name);
}

ol_status ol_quant_bind_value(ol_value *value, const ol_model_data *md) {
  if (!value || value->kind != OL_VALUE_ENCODED || !value->encoded)
    return ol_error(OL_INVALID_ARGUMENT, "expected an encoded value");
  const Onnx__EncodedValueProto *ev = value->encoded;
  if (!ev->parameter_ref || !ev->parameter_ref[0] || ol_quant_shared_of(value)) return OL_OK;
  ol_quant_shared_set *set = md ? ol_quant_catalogue_find(md->quant_params, ev->parameter_ref) : NULL;
  if (!set)
    return ol_error(OL_INVALID_ARGUMENT,
                    "the encoded value refers to the quantization parameter set '%s', which the model "
                    "does not declare", ev->parameter_ref);
  OL_TRY(ol_quant_shared_check(set, ev, md->types));
  ol_quant_shared_attach(value, set);
  return OL_OK;
}
