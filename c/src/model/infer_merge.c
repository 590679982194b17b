/* Declared types meet inferred ones: conversion, merging with contradiction
 * errors, and printing types in messages. */
#include <stdio.h>
#include <string.h>

#include "model/infer_internal.h"

void ol_infer_from_declared(const ol_graph_value *declared, ol_infer_type *out) {
  ol_infer_unknown(out);
  if (!declared || !declared->has_type || !declared->type.proto) return;
  const ol_type_info *ti = &declared->type;
  const Onnx__TypeProto *tp = ti->proto;
  if (tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE) {
    if (tp->value_case == ONNX__TYPE_PROTO__VALUE__NOT_SET) return;
    out->known = true;
    out->kind = ti->kind;
    out->proto = tp;
    return;
  }
  if (ti->dtype == OL_DTYPE_UNDEFINED && ti->rank < 0) return;
  out->known = true;
  out->kind = OL_VALUE_TENSOR;
  out->dtype = ti->dtype;
  out->rank = ti->rank;
  for (int i = 0; i < ti->rank; i++) {
    out->dims[i] = ti->dims[i] >= 0 ? ol_dim_of(ti->dims[i]) : ol_dim_unknown();
    if (ti->dims[i] < 0 && ti->dim_params[i] && ti->dim_params[i][0]) out->dims[i].param = ti->dim_params[i];
  }
}

static void dim_text(ol_dim d, char *buf, size_t size) {
  if (d.is_value) snprintf(buf, size, "%lld", (long long)d.value);
  else snprintf(buf, size, "%s", d.param ? d.param : "?");
}

void ol_infer_type_text(const ol_infer_type *t, char *buf, size_t size) {
  if (!t->known) {
    snprintf(buf, size, "unknown");
    return;
  }
  if (t->kind != OL_VALUE_TENSOR || t->proto) {
    static const char *const kinds[] = {"tensor", "sequence", "map", "optional", "encoded", "struct"};
    snprintf(buf, size, "a %s type", (unsigned)t->kind < 6 ? kinds[t->kind] : "non-tensor");
    return;
  }
  size_t used = (size_t)snprintf(buf, size, "%s",
                                 t->dtype == OL_DTYPE_UNDEFINED ? "tensor" : ol_dtype_name(t->dtype));
  if (t->rank < 0 || used >= size) return;
  used += (size_t)snprintf(buf + used, size - used, "[");
  for (int i = 0; i < t->rank && used < size; i++) {
    char d[80];
    dim_text(t->dims[i], d, sizeof d);
    used += (size_t)snprintf(buf + used, size - used, "%s%s", i ? "," : "", d);
  }
  if (used < size) snprintf(buf + used, size - used, "]");
}

bool ol_infer_recordable(const ol_infer_type *t) {
  if (!t->known) return false;
  if (t->proto) return true;
  if (t->kind == OL_VALUE_ENCODED)
    return t->encoded && t->encoded->layout_case == ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE &&
           t->encoded->struct_type;
  return t->kind == OL_VALUE_TENSOR && t->dtype != OL_DTYPE_UNDEFINED;
}

static ol_status contradiction(const ol_node *node, const char *name, const ol_infer_type *inferred,
                               const ol_infer_type *declared, const char *what) {
  char a[256], b[256];
  ol_infer_type_text(inferred, a, sizeof a);
  ol_infer_type_text(declared, b, sizeof b);
  char where[320];
  if (node->name[0]) snprintf(where, sizeof where, "node '%s' (%s)", node->name, node->op_type);
  else snprintf(where, sizeof where, "unnamed node #%zu (%s)", node->index, node->op_type);
  return ol_error(OL_INVALID_MODEL,
                  "shape inference: %s: output '%s' is inferred as %s but declared as %s (%s differs)", where,
                  name, a, b, what);
}

/* Structured, encoded, sequence... values: the declared TypeProto stands (a
 * compact storage type may legitimately differ from Quantize's descriptor). */
static bool is_whole_type(const ol_infer_type *t) {
  return t->proto || t->kind != OL_VALUE_TENSOR || t->encoded;
}

ol_status ol_infer_merge(const ol_node *node, const char *name, const ol_infer_type *inferred,
                         const ol_infer_type *declared, ol_infer_type *merged) {
  if (!declared->known) {
    *merged = *inferred;
    return OL_OK;
  }
  if (!inferred->known) {
    *merged = *declared;
    return OL_OK;
  }
  bool whole_i = is_whole_type(inferred), whole_d = is_whole_type(declared);
  if (whole_i || whole_d) {
    bool struct_like_i = inferred->kind == OL_VALUE_STRUCT || inferred->kind == OL_VALUE_ENCODED;
    bool struct_like_d = declared->kind == OL_VALUE_STRUCT || declared->kind == OL_VALUE_ENCODED;
    if (whole_i != whole_d || (struct_like_i != struct_like_d) ||
        (!struct_like_i && inferred->kind != declared->kind))
      return contradiction(node, name, inferred, declared, "the kind of value");
    *merged = *declared;
    merged->encoded = inferred->encoded;
    merged->has_record = inferred->has_record;
    merged->record = inferred->record;
    return OL_OK;
  }
  if (inferred->dtype != OL_DTYPE_UNDEFINED && declared->dtype != OL_DTYPE_UNDEFINED &&
      inferred->dtype != declared->dtype)
    return contradiction(node, name, inferred, declared, "the element type");
  if (inferred->rank >= 0 && declared->rank >= 0 && inferred->rank != declared->rank)
    return contradiction(node, name, inferred, declared, "the rank");
  *merged = *inferred;
  if (merged->dtype == OL_DTYPE_UNDEFINED) merged->dtype = declared->dtype;
  if (declared->rank < 0) return OL_OK;
  if (inferred->rank < 0) {
    merged->rank = declared->rank;
    memcpy(merged->dims, declared->dims, sizeof declared->dims);
    return OL_OK;
  }
  for (int i = 0; i < declared->rank; i++) {
    ol_dim di = inferred->dims[i], dd = declared->dims[i];
    if (di.is_value && dd.is_value && di.value != dd.value) {
      char what[64];
      snprintf(what, sizeof what, "dimension %d", i);
      return contradiction(node, name, inferred, declared, what);
    }
    if (dd.is_value || (!di.is_value && dd.param)) merged->dims[i] = dd;
  }
  return OL_OK;
}
