/* Shared quantization parameter sets (c/src/quant/shared.c, ir/quant_params.c):
 * the seed's two-path example with its 3-byte compact payload and saturation,
 * quantize_tensor_shared, materialization, compact encoded initializers with
 * the checker's non-materializing validation, snapshots that outlive the
 * model and session, and every rejection with the name it must carry.
 * Models come from the ONNX text syntax, re-read as a malloc-owned proto,
 * edited (attributes, add_quantization_parameters, encoded initializers) and
 * loaded again. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "harness.h"
#include "ir/model.h"
#include "ir/quant_params.h"
#include "kernel_util.h"
#include "onnxlight.h"
#include "quant/shared.h"
#include "quant/wire.h"
#include "quant/wire_proto.h"
#include "runtime/session.h"

/* ------------------------------------------------------------ model editing */

static Onnx__ModelProto *parse_proto(const char *text) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return NULL;
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &bytes, &size));
  ol_model_destroy(m);
  Onnx__ModelProto *mp = bytes ? onnx__model_proto__unpack(NULL, size, bytes) : NULL;
  ol_free(bytes);
  CHECK(mp != NULL);
  return mp;
}

static ol_status load_proto(const Onnx__ModelProto *mp, ol_model **out) {
  size_t size = onnx__model_proto__get_packed_size(mp);
  uint8_t *bytes = malloc(size);
  onnx__model_proto__pack(mp, bytes);
  ol_status s = ol_model_load(bytes, size, NULL, out);
  free(bytes);
  return s;
}

static Onnx__StructTypeProto *copy_struct(const Onnx__StructTypeProto *st) {
  size_t size = onnx__struct_type_proto__get_packed_size(st);
  uint8_t *bytes = malloc(size ? size : 1);
  onnx__struct_type_proto__pack(st, bytes);
  Onnx__StructTypeProto *copy = onnx__struct_type_proto__unpack(NULL, size, bytes);
  free(bytes);
  return copy;
}

static Onnx__TypeProto *struct_type_proto(const Onnx__StructTypeProto *st) {
  Onnx__TypeProto *tp = malloc(sizeof *tp);
  *tp = (Onnx__TypeProto)ONNX__TYPE_PROTO__INIT;
  tp->value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  tp->struct_type = copy_struct(st);
  return tp;
}

static void add_attr(Onnx__NodeProto *n, Onnx__AttributeProto *a) {
  n->attribute = realloc(n->attribute, (n->n_attribute + 1) * sizeof(*n->attribute));
  n->attribute[n->n_attribute++] = a;
}

/* Adds `type` (and parameter_ref when ref is not NULL) to every Quantize. */
static void edit_quantize(Onnx__ModelProto *mp, const Onnx__StructTypeProto *st, const char *ref) {
  for (size_t i = 0; i < mp->graph->n_node; i++) {
    Onnx__NodeProto *n = mp->graph->node[i];
    if (strcmp(n->op_type, "Quantize") != 0) continue;
    Onnx__AttributeProto *a = malloc(sizeof *a);
    *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    a->name = strdup("type");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
    a->tp = struct_type_proto(st);
    add_attr(n, a);
    if (!ref) continue;
    a = malloc(sizeof *a);
    *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    a->name = strdup("parameter_ref");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    a->has_s = 1;
    a->s.data = (uint8_t *)strdup(ref);
    a->s.len = strlen(ref);
    add_attr(n, a);
  }
}

/* Appends output `name` declared with the compact struct type. */
static void add_struct_output(Onnx__ModelProto *mp, const char *name, const Onnx__StructTypeProto *st) {
  Onnx__GraphProto *g = mp->graph;
  Onnx__ValueInfoProto *v = malloc(sizeof *v);
  *v = (Onnx__ValueInfoProto)ONNX__VALUE_INFO_PROTO__INIT;
  v->name = strdup(name);
  v->type = struct_type_proto(st);
  g->output = realloc(g->output, (g->n_output + 1) * sizeof(*g->output));
  g->output[g->n_output++] = v;
}

/* Takes ownership of ev. */
static void add_encoded_initializer(Onnx__ModelProto *mp, Onnx__EncodedValueProto *ev) {
  Onnx__GraphProto *g = mp->graph;
  g->encoded_initializer =
      realloc(g->encoded_initializer, (g->n_encoded_initializer + 1) * sizeof(*g->encoded_initializer));
  g->encoded_initializer[g->n_encoded_initializer++] = ev;
}

/* The INT4 storage type of the seed: 4 values in one block of 4. */
static Onnx__StructTypeProto *int4_storage(uint64_t count, uint64_t block) {
  ol_quant_plan *plan = NULL;
  Onnx__StructTypeProto *st = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, count, block, &plan));
  if (plan) CHECK_OK(ol_quant_make_type_proto(plan, &st));
  ol_quant_plan_destroy(plan);
  return st;
}

static Onnx__TypeProto *float_type(int64_t n) {
  const int64_t dims[1] = {n};
  Onnx__TypeProto *tp = NULL;
  /* built through a throwaway encoded value's logical type */
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, (uint64_t)n, 128, &plan));
  float zeros[64] = {0};
  Onnx__EncodedValueProto *ev = NULL;
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, zeros, 1, dims, NULL, &ev));
  if (ev) {
    tp = ev->logical_type;
    ev->logical_type = NULL;
  }
  ol_quant_proto_free(ev);
  ol_quant_plan_destroy(plan);
  return tp;
}

static void free_type(Onnx__TypeProto *tp) {
  if (tp) onnx__type_proto__free_unpacked(tp, NULL);
}

/* Declares "common": INT4 [n] in blocks of `block` with scalar scale. */
static ol_status declare(Onnx__ModelProto *mp, const char *name, int64_t n, uint64_t block, float scale,
                         Onnx__StructTypeProto **compact) {
  Onnx__StructTypeProto *storage = int4_storage((uint64_t)n, block);
  Onnx__TypeProto *logical = float_type(n);
  ol_value *scales = tk_f32(0, NULL, &scale);
  const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {0};
  inputs[OL_QUANT_IN_SCALES] = &scales->tensor;
  ol_status s = ol_quant_add_parameters_proto(mp, name, storage, logical, inputs, compact);
  ol_value_release(scales);
  ol_quant_type_free(storage);
  free_type(logical);
  return s;
}

static const char *SHARED =
    "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
    "shared_quantization (float[4] X0, float[4] X1) => (float[4] Y0, float[4] Y1) {\n"
    "  Q0 = ai.rt.Quantize(X0)\n"
    "  Q1 = ai.rt.Quantize(X1)\n"
    "  Q1_copy = Identity(Q1)\n"
    "  Y0 = ai.rt.Dequantize <dtype = 1> (Q0)\n"
    "  Y1 = ai.rt.Dequantize <dtype = 1> (Q1_copy)\n"
    "}";

/* The seed's example as a loaded model (NULL on failure). */
static ol_model *seed_model(void) {
  Onnx__ModelProto *mp = parse_proto(SHARED);
  if (!mp) return NULL;
  Onnx__StructTypeProto *compact = NULL, *storage = int4_storage(4, 4);
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, &compact));
  edit_quantize(mp, storage, "common");
  if (compact) add_struct_output(mp, "Q0", compact);
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  ol_quant_type_free(compact);
  ol_quant_type_free(storage);
  onnx__model_proto__free_unpacked(mp, NULL);
  return m;
}

/* ------------------------------------------------------------ the seed example */

static void seed_example(void) {
  ol_model *m = seed_model();
  if (!m) return;
  /* the declaration as wire-facts §3.6 describes it */
  const Onnx__GraphProto *g = m->data->proto->graph;
  CHECK(g->n_quantization_annotation == 1);
  const Onnx__TensorAnnotation *a = g->quantization_annotation[0];
  CHECK(strcmp(a->tensor_name, "onnx_light.quantization.parameters:common") == 0);
  CHECK(a->n_quant_parameter_tensor_names == 3);
  const char *keys[3] = {"storage_type", "logical_type", "scales"};
  for (size_t i = 0; i < 3 && i < a->n_quant_parameter_tensor_names; i++) {
    CHECK(strcmp(a->quant_parameter_tensor_names[i]->key, keys[i]) == 0);
    char want[96];
    snprintf(want, sizeof want, "onnx_light.quantization.parameters:common/%s", keys[i]);
    CHECK(strcmp(a->quant_parameter_tensor_names[i]->value, want) == 0);
  }
  CHECK_OK(ol_model_check(m));
  ol_session *sess = NULL;
  CHECK_OK(ol_session_create(m, NULL, &sess));
  if (!sess) {
    ol_model_destroy(m);
    return;
  }
  const float x0[4] = {-4, -0.5f, 0.5f, 3.5f}, x1[4] = {-8, -1, 1, 7};
  const int64_t dims[1] = {4};
  ol_value *feeds[2] = {tk_f32(1, dims, x0), tk_f32(1, dims, x1)};
  const char *in_names[2] = {"X0", "X1"}, *out_names[3] = {"Y0", "Y1", "Q0"};
  ol_value *outs[3] = {0};
  CHECK_OK(ol_session_run(sess, in_names, feeds, 2, out_names, outs, 3, NULL));
  ol_session_destroy(sess);
  ol_model_destroy(m); /* the compact output keeps its parameter snapshot */
  if (outs[0] && outs[1]) {
    const float y1[4] = {-4, -1, 1, 3.5f}; /* saturated at the shared scale */
    CHECK(memcmp(ol_tensor_data(outs[0]), x0, sizeof x0) == 0);
    CHECK(memcmp(ol_tensor_data(outs[1]), y1, sizeof y1) == 0);
  }
  ol_value *q0 = outs[2];
  CHECK(q0 && ol_value_get_kind(q0) == OL_VALUE_ENCODED);
  if (q0) {
    const Onnx__EncodedValueProto *ev = q0->encoded;
    CHECK(ev->parameter_ref && strcmp(ev->parameter_ref, "common") == 0);
    CHECK(ev->raw_data.len == 3); /* reserved byte plus four INT4 codes, no scale */
    CHECK(ev->raw_data.data[0] == 0 && ev->raw_data.data[1] == 0xF8 && ev->raw_data.data[2] == 0x71);
    const ol_quant_shared_set *set = q0->encoded_resource;
    CHECK(set && ol_quant_shared_of(q0) == set);
    if (set) {
      Onnx__EncodedValueProto *standalone = NULL;
      CHECK_OK(ol_quant_shared_materialize(set, ev, NULL, &standalone));
      if (standalone) {
        CHECK(standalone->parameter_ref == NULL);
        CHECK(standalone->raw_data.len == 1 + 24 + 2);
        ol_quant_decoded d = {0};
        CHECK_OK(ol_quant_decode_proto(standalone, NULL, &d, NULL));
        for (int i = 0; d.values && i < 4; i++) CHECK(d.values[i] == x0[i]);
        ol_quant_decoded_clear(&d);
        ol_quant_proto_free(standalone);
      }
      CHECK(ev->parameter_ref && ev->raw_data.len == 3); /* the source is unchanged */
      ol_quant_decoded d = {0};
      CHECK_OK(ol_quant_shared_decode(set, ev, NULL, &d));
      for (int i = 0; d.values && i < 4; i++) CHECK(d.values[i] == x0[i]);
      ol_quant_decoded_clear(&d);
    }
    /* a compact message alone cannot be decoded: its parameters are elsewhere */
    ol_quant_decoded d = {0};
    CHECK_STATUS(ol_quant_decode_proto(ev, NULL, &d, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "'common'") != NULL);
  }
  tk_release_all(feeds, 2);
  tk_release_all(outs, 3);
}

/* quantize_tensor_shared gives the Quantize node's bytes; an encoded
 * initializer holding them is retained and decoded by a session. */
static void shared_encode_and_initializer(void) {
  Onnx__ModelProto *mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g () => (float[4] Y) {\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (W)\n"
      "}");
  if (!mp) return;
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "common");
  CHECK(set != NULL && cat && cat->count == 1);
  const float x[4] = {-8, -1, 1, 7};
  const int64_t dims[1] = {4};
  Onnx__EncodedValueProto *ev = NULL;
  if (set) CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 1, dims, "W", &ev));
  if (ev) {
    CHECK(ev->raw_data.len == 3 && strcmp(ev->parameter_ref, "common") == 0 && strcmp(ev->name, "W") == 0);
    CHECK_OK(ol_quant_shared_check(set, ev, NULL)); /* inline storage type: no catalogue needed */
    /* the logical type is part of the declaration */
    const int64_t other[2] = {2, 2};
    Onnx__EncodedValueProto *bad = NULL;
    CHECK_STATUS(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 2, other, "W", &bad), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "'common'") != NULL);
    CHECK_STATUS(ol_quant_shared_encode(set, OL_DTYPE_DOUBLE, x, 1, dims, "W", &bad), OL_INVALID_ARGUMENT);
    add_encoded_initializer(mp, ev);
  }
  ol_quant_catalogue_release(cat);
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  onnx__model_proto__free_unpacked(mp, NULL);
  if (!m) return;
  ol_session *sess = NULL;
  CHECK_OK(ol_session_create(m, NULL, &sess));
  ol_model_destroy(m);
  ol_value *y = NULL;
  const char *out = "Y";
  if (sess) CHECK_OK(ol_session_run(sess, NULL, NULL, 0, &out, &y, 1, NULL));
  ol_session_destroy(sess);
  if (y) {
    const float want[4] = {-4, -1, 1, 3.5f};
    CHECK(memcmp(ol_tensor_data(y), want, sizeof want) == 0);
  }
  ol_value_release(y);
}

/* The checker validates compact initializers without decoding them: an
 * out-of-range codebook index passes the checker and fails at Dequantize. */
static void validation_does_not_materialize(void) {
  Onnx__ModelProto *mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g () => (float[4] Y) {\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (W)\n"
      "}");
  if (!mp) return;
  ol_quant_plan *plan = NULL;
  Onnx__StructTypeProto *storage = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_TQ2_0, 4, 4, &plan));
  if (plan) CHECK_OK(ol_quant_make_type_proto(plan, &storage));
  ol_quant_plan_destroy(plan);
  Onnx__TypeProto *logical = float_type(4);
  float scale = 1;
  ol_value *scales = tk_f32(0, NULL, &scale);
  const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {0};
  inputs[OL_QUANT_IN_SCALES] = &scales->tensor;
  CHECK_OK(ol_quant_add_parameters_proto(mp, "ternary", storage, logical, inputs, NULL));
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "ternary");
  const float x[4] = {-1, 0, 1, 0};
  const int64_t dims[1] = {4};
  Onnx__EncodedValueProto *ev = NULL;
  if (set) CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 1, dims, "W", &ev));
  if (ev) {
    CHECK(ev->raw_data.len == 2); /* reserved byte + four 2-bit indices */
    ev->raw_data.data[1] = 0xFF;  /* index 3 of a 3-entry table */
    add_encoded_initializer(mp, ev);
  }
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  if (m) {
    CHECK_OK(ol_model_check(m));
    ol_session *sess = NULL;
    CHECK_OK(ol_session_create(m, NULL, &sess));
    ol_value *y = NULL;
    const char *out = "Y";
    if (sess) CHECK_STATUS(ol_session_run(sess, NULL, NULL, 0, &out, &y, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "codebook index 3") != NULL);
    ol_session_destroy(sess);
    ol_model_destroy(m);
  }
  ol_quant_catalogue_release(cat);
  ol_value_release(scales);
  ol_quant_type_free(storage);
  free_type(logical);
  onnx__model_proto__free_unpacked(mp, NULL);
}

/* ------------------------------------------------------------ rejections */

/* Loads mp and expects the checker to fail with code and every needle. */
static void expect_check(const Onnx__ModelProto *mp, ol_status code, const char *n1, const char *n2) {
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  if (!m) return;
  CHECK_STATUS(ol_model_check(m), code);
  const char *e = ol_last_error();
  CHECK(strstr(e, n1) != NULL);
  if (!strstr(e, n1) || (n2 && !strstr(e, n2))) fprintf(stderr, "  message: %s\n", e);
  if (n2) CHECK(strstr(e, n2) != NULL);
  ol_session *sess = NULL;
  CHECK_STATUS(ol_session_create(m, NULL, &sess), code); /* session start validates too */
  ol_model_destroy(m);
}

static const char *DEQ =
    "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
    "g () => (float[4] Y) {\n"
    "  Y = ai.rt.Dequantize <dtype = 1> (W)\n"
    "}";

/* A model declaring "common" plus a compact initializer W (edited by fn). */
static void compact_initializer_case(void (*edit)(Onnx__EncodedValueProto *ev), const char *n1,
                                     const char *n2) {
  Onnx__ModelProto *mp = parse_proto(DEQ);
  if (!mp) return;
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "common");
  const float x[4] = {1, 2, 3, 4};
  const int64_t dims[1] = {4};
  Onnx__EncodedValueProto *ev = NULL;
  if (set) CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 1, dims, "W", &ev));
  ol_quant_catalogue_release(cat);
  if (ev) {
    edit(ev);
    add_encoded_initializer(mp, ev);
    expect_check(mp, OL_INVALID_MODEL, n1, n2);
  }
  onnx__model_proto__free_unpacked(mp, NULL);
}

static void unknown_ref(Onnx__EncodedValueProto *ev) {
  free(ev->parameter_ref);
  ev->parameter_ref = strdup("missing");
}
static void short_payload(Onnx__EncodedValueProto *ev) { ev->raw_data.len = 2; }
static void wrong_logical(Onnx__EncodedValueProto *ev) {
  ev->logical_type->tensor_type->elem_type = ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE;
}
static void full_storage(Onnx__EncodedValueProto *ev) {
  ol_quant_type_free(ev->struct_type);
  ev->struct_type = int4_storage(4, 4);
}
static void reserved_byte(Onnx__EncodedValueProto *ev) { ev->raw_data.data[0] = 1; }

static void compact_initializer_rejections(void) {
  compact_initializer_case(unknown_ref, "'W'", "'missing'");
  compact_initializer_case(short_payload, "'W'", "2 bytes");
  compact_initializer_case(wrong_logical, "'W'", "logical type");
  compact_initializer_case(full_storage, "'W'", "compact storage type");
  compact_initializer_case(reserved_byte, "'W'", "reserved byte");
}

/* Declarations edited after add_quantization_parameters. */
static void declaration_case(void (*edit)(Onnx__GraphProto *g), const char *n1, const char *n2) {
  Onnx__ModelProto *mp = parse_proto(DEQ);
  if (!mp) return;
  /* the body needs W: a plain self-contained INT4 value */
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  edit(mp->graph);
  ol_quant_catalogue *cat = NULL;
  CHECK_STATUS(ol_quant_catalogue_from_model(mp, NULL, &cat), OL_INVALID_MODEL);
  CHECK(strstr(ol_last_error(), n1) && (!n2 || strstr(ol_last_error(), n2)));
  expect_check(mp, OL_INVALID_MODEL, n1, n2);
  onnx__model_proto__free_unpacked(mp, NULL);
}

static Onnx__TensorAnnotation *first(Onnx__GraphProto *g) { return g->quantization_annotation[0]; }
static void duplicate_set(Onnx__GraphProto *g) {
  Onnx__TensorAnnotation *copy = malloc(sizeof *copy);
  *copy = (Onnx__TensorAnnotation)ONNX__TENSOR_ANNOTATION__INIT;
  copy->tensor_name = strdup(first(g)->tensor_name);
  g->quantization_annotation = realloc(g->quantization_annotation, 2 * sizeof(*g->quantization_annotation));
  g->quantization_annotation[g->n_quantization_annotation++] = copy;
}
static void unknown_role(Onnx__GraphProto *g) {
  free(first(g)->quant_parameter_tensor_names[2]->key);
  first(g)->quant_parameter_tensor_names[2]->key = strdup("scale");
}
static void duplicate_role(Onnx__GraphProto *g) {
  free(first(g)->quant_parameter_tensor_names[1]->key);
  first(g)->quant_parameter_tensor_names[1]->key = strdup("storage_type");
}
static void missing_initializer(Onnx__GraphProto *g) {
  free(first(g)->quant_parameter_tensor_names[2]->value);
  first(g)->quant_parameter_tensor_names[2]->value = strdup("nowhere");
}
static void missing_scales(Onnx__GraphProto *g) {
  Onnx__TensorAnnotation *a = first(g);
  onnx__string_string_entry_proto__free_unpacked(a->quant_parameter_tensor_names[2], NULL);
  a->n_quant_parameter_tensor_names = 2;
}
static void bad_descriptor(Onnx__GraphProto *g) {
  Onnx__TensorProto *t = g->initializer[g->n_initializer - 3]; /* storage_type */
  t->raw_data.data[0] = 0xFF;
  t->raw_data.data[1] = 0xFF;
}
static void negative_scale(Onnx__GraphProto *g) {
  Onnx__TensorProto *t = g->initializer[g->n_initializer - 1]; /* scales */
  float minus = -0.5f;
  if (t->has_raw_data && t->raw_data.len == 4) memcpy(t->raw_data.data, &minus, 4);
  else if (t->n_float_data == 1) t->float_data[0] = minus;
}
static void incompatible_logical(Onnx__GraphProto *g) {
  /* a logical type of 8 values against a storage type for 4 */
  Onnx__TensorProto *t = g->initializer[g->n_initializer - 2];
  Onnx__TypeProto *eight = float_type(8);
  size_t size = onnx__type_proto__get_packed_size(eight);
  free(t->raw_data.data);
  t->raw_data.data = malloc(size);
  onnx__type_proto__pack(eight, t->raw_data.data);
  t->raw_data.len = size;
  t->dims[0] = (int64_t)size;
  free_type(eight);
}
static void no_name(Onnx__GraphProto *g) {
  free(first(g)->tensor_name);
  first(g)->tensor_name = strdup("onnx_light.quantization.parameters:");
}

static void declaration_rejections(void) {
  declaration_case(duplicate_set, "Duplicate quantization parameter set 'common'", NULL);
  declaration_case(unknown_role, "'common'", "unknown role 'scale'");
  declaration_case(duplicate_role, "'common'", "duplicate role 'storage_type'");
  declaration_case(missing_initializer, "'common'", "'nowhere'");
  declaration_case(missing_scales, "'common'", "requires fixed scales");
  declaration_case(bad_descriptor, "'common'", "storage_type");
  declaration_case(negative_scale, "'common'", "scale");
  declaration_case(incompatible_logical, "'common'", "covers 4 values but logical_type has 8");
  declaration_case(no_name, "without a name", NULL);
}

/* add_quantization_parameters validates before changing the model. */
static void add_parameters_rejections(void) {
  Onnx__ModelProto *mp = parse_proto(DEQ);
  if (!mp) return;
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  size_t inits = mp->graph->n_initializer;
  CHECK_STATUS(declare(mp, "common", 4, 4, 0.5f, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "Duplicate quantization parameter set 'common'") != NULL);
  CHECK_STATUS(declare(mp, "", 4, 4, 0.5f, NULL), OL_INVALID_ARGUMENT);
  CHECK_STATUS(declare(mp, "bad", 4, 4, -1.0f, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'bad'") != NULL);
  /* scales are required */
  Onnx__StructTypeProto *storage = int4_storage(4, 4), *eight = int4_storage(8, 4);
  Onnx__TypeProto *logical = float_type(4);
  const ol_tensor *none[OL_QUANT_IN_COUNT] = {0};
  float half = 0.5f;
  ol_value *half_scale = tk_f32(0, NULL, &half);
  const ol_tensor *with_scale[OL_QUANT_IN_COUNT] = {0};
  with_scale[OL_QUANT_IN_SCALES] = &half_scale->tensor;
  /* a storage type for 8 values does not fit a logical type of 4 */
  CHECK_STATUS(ol_quant_add_parameters_proto(mp, "short", eight, logical, with_scale, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'short'") && strstr(ol_last_error(), "covers 8 values"));
  /* numerical tensors follow Quantize's shapes: a scalar or one value per block */
  const float three[3] = {1, 1, 1};
  const int64_t three_dims[1] = {3};
  ol_value *bad_scales = tk_f32(1, three_dims, three);
  with_scale[OL_QUANT_IN_SCALES] = &bad_scales->tensor;
  CHECK_STATUS(ol_quant_add_parameters_proto(mp, "shape", storage, logical, with_scale, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'shape'") && strstr(ol_last_error(), "input 'scales'") &&
        strstr(ol_last_error(), "one value per block"));
  ol_value_release(bad_scales);
  ol_value_release(half_scale);
  ol_quant_type_free(eight);
  CHECK_STATUS(ol_quant_add_parameters_proto(mp, "noscale", storage, logical, none, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "requires fixed scales") && strstr(ol_last_error(), "'noscale'"));
  /* an existing initializer of the same name collides */
  free(mp->graph->initializer[0]->name);
  mp->graph->initializer[0]->name = strdup("onnx_light.quantization.parameters:other/storage_type");
  CHECK_STATUS(declare(mp, "other", 4, 4, 0.5f, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "collision") != NULL);
  CHECK(mp->graph->n_initializer == inits && mp->graph->n_quantization_annotation == 1);
  ol_quant_type_free(storage);
  free_type(logical);
  onnx__model_proto__free_unpacked(mp, NULL);
}

/* Quantize with parameter_ref: no overriding inputs, the set's storage type
 * and logical shape, a declared set. */
static void quantize_rejections(void) {
  /* nonempty scales next to parameter_ref */
  Onnx__ModelProto *mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g (float[4] X, float S) => (float[4] Y) {\n"
      "  Q = ai.rt.Quantize(X, S)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
      "}");
  if (!mp) return;
  Onnx__StructTypeProto *storage = int4_storage(4, 4);
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  edit_quantize(mp, storage, "common");
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  onnx__model_proto__free_unpacked(mp, NULL);
  if (m) {
    ol_session *sess = NULL;
    CHECK_OK(ol_session_create(m, NULL, &sess));
    const float x[4] = {1, 2, 3, 4}, s = 2;
    const int64_t dims[1] = {4};
    ol_value *feeds[2] = {tk_f32(1, dims, x), tk_f32(0, NULL, &s)};
    const char *in[2] = {"X", "S"}, *out = "Y";
    ol_value *y = NULL;
    if (sess) CHECK_STATUS(ol_session_run(sess, in, feeds, 2, &out, &y, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "parameter_ref") && strstr(ol_last_error(), "'scales'"));
    ol_session_destroy(sess);
    tk_release_all(feeds, 2);
    ol_model_destroy(m);
  }
  /* a `type` that is not the set's storage type */
  mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g (float[4] X) => (float[4] Y) {\n"
      "  Q = ai.rt.Quantize(X)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
      "}");
  if (!mp) return;
  Onnx__StructTypeProto *other = int4_storage(4, 2);
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  edit_quantize(mp, other, "common");
  expect_check(mp, OL_INVALID_MODEL, "attribute 'type'", "'common'");
  onnx__model_proto__free_unpacked(mp, NULL);
  /* the input must have the declared logical shape */
  mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g (float[8] X) => (float[8] Y) {\n"
      "  Q = ai.rt.Quantize(X)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
      "}");
  if (mp) {
    CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
    edit_quantize(mp, storage, "common");
    m = NULL;
    CHECK_OK(load_proto(mp, &m));
    onnx__model_proto__free_unpacked(mp, NULL);
    if (m) {
      ol_session *sess = NULL;
      CHECK_OK(ol_session_create(m, NULL, &sess));
      const float x[8] = {0};
      const int64_t dims[1] = {8};
      ol_value *feed = tk_f32(1, dims, x), *y = NULL;
      const char *in = "X", *out = "Y";
      if (sess) CHECK_STATUS(ol_session_run(sess, &in, &feed, 1, &out, &y, 1, NULL), OL_INVALID_ARGUMENT);
      CHECK(strstr(ol_last_error(), "'common'") && strstr(ol_last_error(), "Quantize"));
      ol_session_destroy(sess);
      ol_value_release(feed);
      ol_model_destroy(m);
    }
  }
  ol_quant_type_free(other);
  ol_quant_type_free(storage);
}

static void free_ev(void *p) { ol_quant_proto_free(p); }

static Onnx__EncodedValueProto *copy_ev(const Onnx__EncodedValueProto *ev) {
  size_t size = onnx__encoded_value_proto__get_packed_size(ev);
  uint8_t *bytes = malloc(size);
  onnx__encoded_value_proto__pack(ev, bytes);
  Onnx__EncodedValueProto *copy = onnx__encoded_value_proto__unpack(NULL, size, bytes);
  free(bytes);
  return copy;
}

/* Compact feeds carry their set and are checked before execution (also under
 * a struct_type declaration); the text form refuses shared declarations. */
static void compact_feeds_and_text(void) {
  Onnx__ModelProto *mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g (float[4] Q) => (float[4] Y) {\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
      "}");
  if (!mp) return;
  Onnx__StructTypeProto *compact = NULL;
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, &compact));
  if (compact) {
    onnx__type_proto__free_unpacked(mp->graph->input[0]->type, NULL);
    mp->graph->input[0]->type = struct_type_proto(compact);
  }
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "common");
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  onnx__model_proto__free_unpacked(mp, NULL);
  ol_quant_type_free(compact);
  if (!m || !set) {
    ol_model_destroy(m);
    ol_quant_catalogue_release(cat);
    return;
  }
  char *text = NULL;
  CHECK_STATUS(ol_model_print_text(m, &text), OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "shared quantization") && strstr(ol_last_error(), "common"));
  ol_free(text);
  const float x[4] = {-1, 0.5f, 1, 2};
  const int64_t dims[1] = {4};
  Onnx__EncodedValueProto *ev = NULL;
  CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 1, dims, "Q", &ev));
  ol_session *sess = NULL;
  CHECK_OK(ol_session_create(m, NULL, &sess));
  ol_model_destroy(m);
  if (ev && sess) {
    ol_value *with_set = NULL, *without = NULL, *truncated = NULL, *y = NULL;
    CHECK_OK(ol_value_new_encoded(copy_ev(ev), free_ev, &with_set));
    ol_quant_shared_attach(with_set, set);
    const char *in = "Q", *out = "Y";
    CHECK_OK(ol_session_run(sess, &in, &with_set, 1, &out, &y, 1, NULL));
    if (y) CHECK(memcmp(ol_tensor_data(y), x, sizeof x) == 0);
    ol_value_release(y);
    y = NULL;
    CHECK_OK(ol_value_new_encoded(copy_ev(ev), free_ev, &without));
    CHECK_STATUS(ol_session_run(sess, &in, &without, 1, &out, &y, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "'Q'") && strstr(ol_last_error(), "carries no parameter catalogue"));
    /* conversions for a known model bind the bare value to that model's set */
    CHECK_OK(ol_quant_bind_value(without, sess->model));
    CHECK(ol_quant_shared_of(without) != NULL);
    CHECK_OK(ol_session_run(sess, &in, &without, 1, &out, &y, 1, NULL));
    ol_value_release(y);
    y = NULL;
    ol_value *stranger = NULL;
    Onnx__EncodedValueProto *renamed = copy_ev(ev);
    free(renamed->parameter_ref);
    renamed->parameter_ref = strdup("missing");
    CHECK_OK(ol_value_new_encoded(renamed, free_ev, &stranger));
    CHECK_STATUS(ol_quant_bind_value(stranger, sess->model), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "'missing'") != NULL);
    ol_value_release(stranger);
    Onnx__EncodedValueProto *short_ev = copy_ev(ev);
    short_ev->raw_data.len = 1;
    CHECK_OK(ol_value_new_encoded(short_ev, free_ev, &truncated));
    ol_quant_shared_attach(truncated, set);
    CHECK_STATUS(ol_session_run(sess, &in, &truncated, 1, &out, &y, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "'Q'") && strstr(ol_last_error(), "1 bytes"));
    ol_value_release(with_set);
    ol_value_release(without);
    ol_value_release(truncated);
  }
  ol_quant_proto_free(ev);
  ol_session_destroy(sess);
  ol_quant_catalogue_release(cat);
}

/* parameter_ref bound through a model-local function attribute resolves with
 * the call-site value (or the function default); an undeclared set is
 * rejected by the checker, naming the call. */
static const char *FUNCTION_MODEL =
    "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1, \"local\" : 1]>\n"
    "main (float[4] X) => (float[4] Y) { Y = local.Roundtrip %s (X) }\n"
    "<domain: \"local\", opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
    "Roundtrip %s (X) => (Y) {\n"
    "  Q = ai.rt.Quantize <parameter_ref: string = @set> (X)\n"
    "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
    "}\n";

static const char *FUNCTION_MODEL_DEFAULT = "<set: string = \"common\">";

static ol_status function_case(const char *call_attrs, ol_model **out) {
  char text[1024];
  snprintf(text, sizeof text, FUNCTION_MODEL, call_attrs, FUNCTION_MODEL_DEFAULT);
  Onnx__ModelProto *mp = parse_proto(text);
  if (!mp) return OL_INVALID_ARGUMENT;
  CHECK(mp->n_functions == 1);
  Onnx__StructTypeProto *storage = int4_storage(4, 4);
  if (mp->n_functions == 1) {
    Onnx__FunctionProto *f = mp->functions[0];
    Onnx__AttributeProto *a = malloc(sizeof *a);
    *a = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
    a->name = strdup("type");
    a->has_type = 1;
    a->type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
    a->tp = struct_type_proto(storage);
    add_attr(f->node[0], a);
  }
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, NULL));
  ol_status s = load_proto(mp, out);
  ol_quant_type_free(storage);
  onnx__model_proto__free_unpacked(mp, NULL);
  return s;
}

static void function_bound_reference(void) {
  const char *calls[2] = {"<set = \"common\">", ""}; /* call-site value, function default */
  for (int i = 0; i < 2; i++) {
    ol_model *m = NULL;
    CHECK_OK(function_case(calls[i], &m));
    if (!m) continue;
    CHECK_OK(ol_model_check(m));
    ol_session *sess = NULL;
    CHECK_OK(ol_session_create(m, NULL, &sess));
    ol_model_destroy(m);
    const float x[4] = {-8, -1, 1, 7}, want[4] = {-4, -1, 1, 3.5f};
    const int64_t dims[1] = {4};
    ol_value *feed = tk_f32(1, dims, x), *y = NULL;
    const char *in = "X", *out = "Y";
    if (sess) CHECK_OK(ol_session_run(sess, &in, &feed, 1, &out, &y, 1, NULL));
    if (y) CHECK(memcmp(ol_tensor_data(y), want, sizeof want) == 0);
    ol_value_release(feed);
    ol_value_release(y);
    ol_session_destroy(sess);
  }
  /* a required function attribute (no default) omitted at the call */
  ol_model *m = NULL;
  FUNCTION_MODEL_DEFAULT = "<set>";
  CHECK_OK(function_case("", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "function attribute 'set'") && strstr(ol_last_error(), "no default"));
    ol_model_destroy(m);
  }
  FUNCTION_MODEL_DEFAULT = "<set: string = \"common\">";
  m = NULL;
  CHECK_OK(function_case("<set = \"missing\">", &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'missing'") && strstr(ol_last_error(), "function call"));
    ol_model_destroy(m);
  }
}

/* A persistent compact value keeps its parameter set through runs, reset,
 * close and the end of the model; its reference is validated on entry. */
static void persistent_compact_value(void) {
  Onnx__ModelProto *mp = parse_proto(
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "g (float[4] past) => (float[4] Y, float[4] present) {\n"
      "  C = Identity(past)\n"
      "  present = Identity(C)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (C)\n"
      "}");
  if (!mp) return;
  Onnx__StructTypeProto *compact = NULL;
  CHECK_OK(declare(mp, "common", 4, 4, 0.5f, &compact));
  Onnx__GraphProto *g = mp->graph;
  if (compact) {
    onnx__type_proto__free_unpacked(g->input[0]->type, NULL);
    g->input[0]->type = struct_type_proto(compact);
    onnx__type_proto__free_unpacked(g->output[1]->type, NULL);
    g->output[1]->type = struct_type_proto(compact);
  }
  Onnx__PersistentBindingProto *b = malloc(sizeof *b);
  *b = (Onnx__PersistentBindingProto)ONNX__PERSISTENT_BINDING_PROTO__INIT;
  b->input_name = strdup("past");
  b->output_name = strdup("present");
  g->persistent_bindings = malloc(sizeof(*g->persistent_bindings));
  g->persistent_bindings[0] = b;
  g->n_persistent_bindings = 1;
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "common");
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  onnx__model_proto__free_unpacked(mp, NULL);
  ol_quant_type_free(compact);
  const float x[4] = {-1, 0.5f, 1, 2};
  const int64_t dims[1] = {4};
  Onnx__EncodedValueProto *ev = NULL;
  if (set) CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 1, dims, "past", &ev));
  if (m && ev) {
    ol_value *initial = NULL, *bare = NULL, *kept = NULL, *y = NULL;
    CHECK_OK(ol_value_new_encoded(copy_ev(ev), free_ev, &initial));
    ol_quant_shared_attach(initial, set);
    CHECK_OK(ol_value_new_encoded(copy_ev(ev), free_ev, &bare));
    const char *past = "past", *out = "Y";
    ol_state *st = NULL;
    CHECK_STATUS(ol_state_create(m, &past, &bare, 1, NULL, &st), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "'past'") && strstr(ol_last_error(), "carries no parameter catalogue"));
    CHECK_OK(ol_state_create(m, &past, &initial, 1, NULL, &st));
    ol_model_destroy(m);
    m = NULL;
    if (st) {
      CHECK_OK(ol_state_run(st, NULL, NULL, NULL, 0, &out, &y, 1, NULL));
      if (y) CHECK(memcmp(ol_tensor_data(y), x, sizeof x) == 0);
      CHECK_OK(ol_state_value(st, "past", &kept));
      CHECK(kept == initial); /* retained and published without a copy */
      ol_value_retain(kept);
      CHECK_OK(ol_state_close(st));
      ol_state_destroy(st);
    }
    ol_value_release(initial);
    ol_quant_catalogue_release(cat);
    cat = NULL;
    if (kept) { /* the only owner of the set is now the value */
      const ol_quant_shared_set *own = kept->encoded_resource;
      ol_quant_decoded d = {0};
      CHECK(own && own->refcount >= 1);
      if (own) CHECK_OK(ol_quant_shared_decode(own, kept->encoded, NULL, &d));
      for (int i = 0; d.values && i < 4; i++) CHECK(d.values[i] == x[i]);
      ol_quant_decoded_clear(&d);
    }
    ol_value_release(kept);
    ol_value_release(bare);
    ol_value_release(y);
  }
  ol_model_destroy(m);
  ol_quant_proto_free(ev);
  ol_quant_catalogue_release(cat);
}

/* ORT MatMulNBits sets: the compact value is the B bytes; materializing
 * appends the set's scales (and zero points) in the ORT layout. */
static void ort_shared_set(void) {
  Onnx__ModelProto *mp = parse_proto(DEQ);
  if (!mp) return;
  ol_quant_plan *plan = NULL;
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 20, 2, 16, &plan));
  float w[40];
  for (int i = 0; i < 40; i++) w[i] = (float)((i % 7) - 3) * 0.5f;
  const int64_t dims[2] = {20, 2};
  if (!plan) return;
  /* the reference: the same fixed parameters through the self-contained encoder */
  for (size_t b = 0; b < plan->runs[0].block_count; b++) plan->runs[0].blocks[b].scale = 0.25;
  Onnx__EncodedValueProto *reference = NULL;
  CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, "W", &reference));
  float quarter = 0.25f, zero_point = 3;
  ol_value *scales = tk_f32(0, NULL, &quarter), *zeros = tk_f32(0, NULL, &zero_point);
  const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {0};
  inputs[OL_QUANT_IN_SCALES] = &scales->tensor;
  Onnx__StructTypeProto *compact = NULL;
  if (reference)
    CHECK_OK(ol_quant_add_parameters_proto(mp, "ort", reference->struct_type, reference->logical_type, inputs, &compact));
  CHECK(compact && strcmp(compact->name, "onnx_light.quantization.v1/shared/ort_matmulnbits_int4") == 0);
  /* zero points change the zero-point storage: not this descriptor */
  inputs[OL_QUANT_IN_ZERO_POINTS] = &zeros->tensor;
  if (reference)
    CHECK_STATUS(ol_quant_add_parameters_proto(mp, "ort2", reference->struct_type, reference->logical_type, inputs, NULL),
                 OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'ort2'") && strstr(ol_last_error(), "zero-point storage"));
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "ort");
  Onnx__EncodedValueProto *ev = NULL, *full = NULL;
  if (set) CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, w, 2, dims, "W", &ev));
  if (ev && reference) {
    CHECK(ev->raw_data.len == 2 * 2 * 8); /* N * G * block_size * bits / 8: B only */
    CHECK(memcmp(ev->raw_data.data, reference->raw_data.data, ev->raw_data.len) == 0);
    CHECK_OK(ol_quant_shared_materialize(set, ev, NULL, &full));
    if (full) {
      CHECK(full->raw_data.len == reference->raw_data.len &&
            memcmp(full->raw_data.data, reference->raw_data.data, full->raw_data.len) == 0);
      CHECK_OK(ol_qw_same_descriptor(full->struct_type, reference->struct_type));
    }
    ol_quant_decoded a = {0}, b = {0};
    CHECK_OK(ol_quant_shared_decode(set, ev, NULL, &a));
    CHECK_OK(ol_quant_decode_proto(reference, NULL, &b, NULL));
    CHECK(a.values && b.values && a.count == 40 && memcmp(a.values, b.values, 40 * sizeof(double)) == 0);
    ol_quant_decoded_clear(&a);
    ol_quant_decoded_clear(&b);
    add_encoded_initializer(mp, ev);
    ev = NULL;
  }
  /* a session decodes the compact initializer (Y is declared float[4]: drop the shape) */
  Onnx__TensorShapeProto *shape = mp->graph->output[0]->type->tensor_type->shape;
  for (size_t i = 0; i < shape->n_dim; i++) protobuf_c_message_free_unpacked(&shape->dim[i]->base, NULL);
  shape->n_dim = 0;
  ol_model *m = NULL;
  CHECK_OK(load_proto(mp, &m));
  ol_session *sess = NULL;
  if (m) CHECK_OK(ol_session_create(m, NULL, &sess));
  ol_model_destroy(m);
  ol_value *y = NULL;
  const char *out = "Y";
  if (sess) CHECK_OK(ol_session_run(sess, NULL, NULL, 0, &out, &y, 1, NULL));
  ol_quant_decoded want = {0};
  if (reference) CHECK_OK(ol_quant_decode_proto(reference, NULL, &want, NULL));
  if (y && want.values) {
    const float *got = ol_tensor_data(y);
    for (int i = 0; i < 40; i++) CHECK(got[i] == (float)want.values[i]);
  }
  ol_quant_decoded_clear(&want);
  ol_value_release(y);
  ol_session_destroy(sess);
  ol_quant_proto_free(full);
  ol_quant_proto_free(ev);
  ol_quant_proto_free(reference);
  ol_quant_catalogue_release(cat);
  ol_quant_type_free(compact);
  ol_value_release(scales);
  ol_value_release(zeros);
  ol_quant_plan_destroy(plan);
  onnx__model_proto__free_unpacked(mp, NULL);
}

/* A set with permutation, transform and outliers: the compact value holds
 * the reserved byte, the outlier values and the codes; materializing gives
 * exactly the self-contained encoding of the same plan. */
static void permutation_transform_outliers(void) {
  Onnx__ModelProto *mp = parse_proto(DEQ);
  if (!mp) return;
  ol_quant_plan *plan = NULL;
  Onnx__StructTypeProto *storage = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_QUAROT, 8, 4, &plan));
  const int64_t perm[8] = {7, 6, 5, 4, 3, 2, 1, 0}, outliers[1] = {2};
  const double swap[4] = {0, 1, 1, 0};
  if (plan) {
    CHECK_OK(ol_quant_plan_set_permutation(plan, perm, 8));
    CHECK_OK(ol_quant_plan_set_outliers(plan, outliers, 1));
    CHECK_OK(ol_quant_plan_set_transform(plan, 2, swap, 4, swap, 4));
    CHECK_OK(ol_quant_make_type_proto(plan, &storage));
  }
  Onnx__TypeProto *logical = float_type(8);
  float scale = 0.125f;
  const int64_t pdims[1] = {8}, odims[1] = {1}, tdims[2] = {2, 2};
  const float fswap[4] = {0, 1, 1, 0};
  ol_value *scales = tk_f32(0, NULL, &scale), *pv = tk_i64(1, pdims, perm), *ov = tk_i64(1, odims, outliers);
  ol_value *fw = tk_f32(2, tdims, fswap), *inv = tk_f32(2, tdims, fswap);
  const ol_tensor *inputs[OL_QUANT_IN_COUNT] = {0};
  inputs[OL_QUANT_IN_SCALES] = &scales->tensor;
  inputs[OL_QUANT_IN_PERMUTATION] = &pv->tensor;
  inputs[OL_QUANT_IN_OUTLIERS] = &ov->tensor;
  inputs[OL_QUANT_IN_FORWARD] = &fw->tensor;
  inputs[OL_QUANT_IN_INVERSE] = &inv->tensor;
  CHECK_OK(ol_quant_add_parameters_proto(mp, "rotated", storage, logical, inputs, NULL));
  /* a transform is required by this storage type */
  inputs[OL_QUANT_IN_FORWARD] = NULL;
  CHECK_STATUS(ol_quant_add_parameters_proto(mp, "unrotated", storage, logical, inputs, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'unrotated'") && strstr(ol_last_error(), "forward"));
  ol_quant_catalogue *cat = NULL;
  CHECK_OK(ol_quant_catalogue_from_model(mp, NULL, &cat));
  ol_quant_shared_set *set = ol_quant_catalogue_find(cat, "rotated");
  const float x[8] = {0.5f, -0.25f, 100, 0.75f, -1, 0.125f, 0.375f, -0.5f};
  const int64_t dims[1] = {8};
  Onnx__EncodedValueProto *ev = NULL, *full = NULL, *reference = NULL;
  if (set) CHECK_OK(ol_quant_shared_encode(set, OL_DTYPE_FLOAT, x, 1, dims, "W", &ev));
  if (set) CHECK_OK(ol_quant_encode_proto(set->plan, OL_DTYPE_FLOAT, x, 1, dims, "W", &reference));
  if (ev && reference) {
    CHECK(ev->raw_data.len == 1 + 8 + 4); /* reserved, one outlier value, 8 INT4 codes */
    double outlier;
    memcpy(&outlier, ev->raw_data.data + 1, 8);
    CHECK(outlier == 100);
    CHECK_OK(ol_quant_shared_materialize(set, ev, NULL, &full));
    if (full)
      CHECK(full->raw_data.len == reference->raw_data.len &&
            memcmp(full->raw_data.data, reference->raw_data.data, full->raw_data.len) == 0);
    ol_quant_decoded d = {0};
    CHECK_OK(ol_quant_shared_decode(set, ev, NULL, &d));
    for (int i = 0; d.values && i < 8; i++)
      CHECK(i == 2 ? d.values[i] == 100 : fabs(d.values[i] - x[i]) <= 0.0625 + 1e-9);
    ol_quant_decoded_clear(&d);
  }
  ol_quant_proto_free(ev);
  ol_quant_proto_free(full);
  ol_quant_proto_free(reference);
  ol_quant_catalogue_release(cat);
  ol_value *all[5] = {scales, pv, ov, fw, inv};
  tk_release_all(all, 5);
  ol_quant_type_free(storage);
  free_type(logical);
  ol_quant_plan_destroy(plan);
  onnx__model_proto__free_unpacked(mp, NULL);
}

OL_TEST_MAIN(TEST(seed_example), TEST(permutation_transform_outliers), TEST(ort_shared_set), TEST(persistent_compact_value), TEST(function_bound_reference), TEST(compact_feeds_and_text), TEST(shared_encode_and_initializer),
             TEST(validation_does_not_materialize), TEST(compact_initializer_rejections),
             TEST(declaration_rejections), TEST(add_parameters_rejections), TEST(quantize_rejections))
