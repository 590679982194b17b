/* ai.rt::Quantize / ai.rt::Dequantize (c/src/ops/quantize_ops.c), encoded
 * edges through the runtime and Identity, and encoded initializers
 * (GraphProto.encoded_initializer) loaded by sessions and validated by the
 * checker. Models come from the ONNX text syntax; struct-typed attributes,
 * struct_types and encoded initializers are attached to the parsed proto and
 * the model is re-serialized (the test_state.c raw_bind pattern). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "harness.h"
#include "ir/model.h"
#include "kernel_util.h"
#include "onnxlight.h"
#include "quant/codec.h"
#include "quant/plan.h"
#include "quant/wire.h"

/* ------------------------------------------------------------ model editing */

typedef struct edits {
  Onnx__TypeProto *quantize_type;       /* "type" attribute added to every Quantize node */
  const char *parameter_ref;            /* "parameter_ref" attribute too (may be NULL) */
  Onnx__StructTypeProto **struct_types; /* ModelProto.struct_types */
  size_t n_struct_types;
  Onnx__EncodedValueProto **encoded; /* root GraphProto.encoded_initializer */
  size_t n_encoded;
  Onnx__ValueInfoProto *extra_output; /* appended to the root graph's outputs */
} edits;

#define MAX_NODES 16

/* Parses text, applies the edits to its proto, serializes and loads again. */
/* (a cast of ol_quant_proto_free to void (*)(void *) is a call through the wrong type) */
static void free_proto(void *value) { ol_quant_proto_free(value); }

static ol_status build(const char *text, const edits *e, ol_model **out) {
  *out = NULL;
  ol_model *m = NULL;
  OL_TRY(ol_model_parse_text(text, &m));
  Onnx__ModelProto *mp = m->data->proto;
  Onnx__GraphProto *g = mp->graph;
  Onnx__AttributeProto type_attr = ONNX__ATTRIBUTE_PROTO__INIT, ref_attr = ONNX__ATTRIBUTE_PROTO__INIT;
  type_attr.name = "type";
  type_attr.has_type = 1;
  type_attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
  type_attr.tp = e->quantize_type;
  ref_attr.name = "parameter_ref";
  ref_attr.has_type = 1;
  ref_attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
  ref_attr.has_s = 1;
  ref_attr.s.data = (uint8_t *)(e->parameter_ref ? e->parameter_ref : "");
  ref_attr.s.len = e->parameter_ref ? strlen(e->parameter_ref) : 0;
  Onnx__AttributeProto **saved_attrs[MAX_NODES] = {0};
  size_t saved_n[MAX_NODES] = {0};
  bool edited[MAX_NODES] = {0};
  Onnx__AttributeProto *lists[MAX_NODES][8];
  for (size_t i = 0; i < g->n_node && i < MAX_NODES; i++) {
    Onnx__NodeProto *n = g->node[i];
    if (strcmp(n->op_type, "Quantize") != 0 || n->n_attribute > 4) continue;
    edited[i] = true;
    saved_attrs[i] = n->attribute;
    saved_n[i] = n->n_attribute;
    for (size_t k = 0; k < n->n_attribute; k++) lists[i][k] = n->attribute[k];
    size_t count = n->n_attribute;
    if (e->quantize_type) lists[i][count++] = &type_attr;
    if (e->parameter_ref) lists[i][count++] = &ref_attr;
    n->attribute = lists[i];
    n->n_attribute = count;
  }
  size_t saved_types = mp->n_struct_types, saved_enc = g->n_encoded_initializer;
  Onnx__StructTypeProto **saved_type_list = mp->struct_types;
  Onnx__EncodedValueProto **saved_enc_list = g->encoded_initializer;
  size_t saved_outputs = g->n_output;
  Onnx__ValueInfoProto **saved_output_list = g->output, *outputs[8];
  if (e->extra_output && g->n_output < 8) {
    for (size_t i = 0; i < g->n_output; i++) outputs[i] = g->output[i];
    outputs[g->n_output] = e->extra_output;
    g->output = outputs;
    g->n_output = saved_outputs + 1;
  }
  mp->n_struct_types = e->n_struct_types;
  mp->struct_types = e->struct_types;
  g->n_encoded_initializer = e->n_encoded;
  g->encoded_initializer = e->encoded;
  void *bytes = NULL;
  size_t size = 0;
  ol_status s = ol_model_serialize(m, &bytes, &size);
  mp->n_struct_types = saved_types;
  mp->struct_types = saved_type_list;
  g->n_output = saved_outputs;
  g->output = saved_output_list;
  g->n_encoded_initializer = saved_enc;
  g->encoded_initializer = saved_enc_list;
  for (size_t i = 0; i < g->n_node && i < MAX_NODES; i++)
    if (edited[i]) {
      g->node[i]->attribute = saved_attrs[i];
      g->node[i]->n_attribute = saved_n[i];
    }
  ol_model_destroy(m);
  if (s != OL_OK) return s;
  s = ol_model_load(bytes, size, NULL, out);
  ol_free(bytes);
  return s;
}

/* A TypeProto wrapping st (not owned: the caller frees st). */
static Onnx__TypeProto wrap(Onnx__StructTypeProto *st) {
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  tp.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  tp.struct_type = st;
  return tp;
}

static Onnx__StructTypeProto *make_type(ol_quant_format format, uint64_t count, uint64_t block) {
  ol_quant_plan *plan = NULL;
  Onnx__StructTypeProto *st = NULL;
  CHECK_OK(ol_quant_make_plan(format, count, block, &plan));
  if (plan) CHECK_OK(ol_quant_make_type_proto(plan, &st));
  ol_quant_plan_destroy(plan);
  return st;
}

/* Runs a one-input one-output model on a float vector. */
static ol_status run_model(ol_model *m, const char *in_name, const float *x, int64_t n,
                           const char *out_name, ol_value **y) {
  *y = NULL;
  ol_session *sess = NULL;
  OL_TRY(ol_session_create(m, NULL, &sess));
  ol_value *xin = tk_f32(1, &n, x);
  const char *in_names[1] = {in_name};
  const char *out_names[1] = {out_name};
  ol_status s = ol_session_run(sess, in_name ? in_names : NULL, &xin, in_name ? 1 : 0, out_names,
                               y, 1, NULL);
  ol_value_release(xin);
  ol_session_destroy(sess);
  return s;
}

static const char *QDQ =
    "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
    "quantization (float[8] X) => (float[8] Y) {\n"
    "  Q = ai.rt.Quantize(X)\n"
    "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
    "}";

/* ------------------------------------------------------------ INT4 graph */

/* The seed's graph: INT4, 8 values in blocks of 4, automatic calibration. */
static void int4_calibration_graph(void) {
  Onnx__StructTypeProto *st = make_type(OL_QUANT_INT4, 8, 4);
  if (!st) return;
  Onnx__TypeProto tp = wrap(st);
  edits e = {.quantize_type = &tp};
  ol_model *m = NULL;
  CHECK_OK(build(QDQ, &e, &m));
  if (m) {
    CHECK_OK(ol_model_check(m));
    /* block 0: scale max(3.5/7, 4/8) = 0.5 is exact; block 1: scale 3/7 */
    const float x[8] = {-4, -0.5f, 0.5f, 3.5f, 1, 2, 3, -1};
    ol_value *y = NULL;
    CHECK_OK(run_model(m, "X", x, 8, "Y", &y));
    if (y) {
      const float *got = ol_tensor_data(y);
      const int64_t dims[1] = {8};
      CHECK(tk_shape_is(y, 1, dims));
      for (int i = 0; i < 4; i++) CHECK(got[i] == x[i]);
      const double s1 = 3.0 / 7.0;
      const double codes[4] = {2, 5, 7, -2}; /* round-half-even of x / s1 */
      for (int i = 0; i < 4; i++) {
        CHECK(got[4 + i] == (float)(codes[i] * s1));
        CHECK(fabs(got[4 + i] - x[4 + i]) <= s1 / 2 + 1e-6);
      }
      ol_value_release(y);
    }
    /* all-zero blocks calibrate to scale one and restore zeros */
    const float zeros[8] = {0};
    CHECK_OK(run_model(m, "X", zeros, 8, "Y", &y));
    if (y) {
      for (int i = 0; i < 8; i++) CHECK(((const float *)ol_tensor_data(y))[i] == 0);
      ol_value_release(y);
    }
    ol_model_destroy(m);
  }
  ol_quant_type_free(st);
}

/* The same descriptor through the model catalogue (type_ref), and an encoded
 * edge forwarded by Identity. */
static void type_ref_and_identity(void) {
  Onnx__StructTypeProto *st = make_type(OL_QUANT_INT4, 8, 4);
  if (!st) return;
  st->has_type_id = 1;
  st->type_id = 7;
  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 7;
  Onnx__TypeProto tp = wrap(&ref);
  Onnx__StructTypeProto *catalogue[1] = {st};
  edits e = {.quantize_type = &tp, .struct_types = catalogue, .n_struct_types = 1};
  const char *text =
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "quantization (float[8] X) => (float[8] Y) {\n"
      "  Q = ai.rt.Quantize(X)\n"
      "  Q_copy = Identity(Q)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q_copy)\n"
      "}";
  ol_model *m = NULL;
  CHECK_OK(build(text, &e, &m));
  if (m) {
    CHECK_OK(ol_model_check(m));
    const float x[8] = {-4, -0.5f, 0.5f, 3.5f, -8, -1, 1, 7};
    ol_value *y = NULL;
    CHECK_OK(run_model(m, "X", x, 8, "Y", &y));
    if (y) {
      const float *got = ol_tensor_data(y);
      for (int i = 0; i < 8; i++) CHECK(got[i] == x[i]);
      ol_value_release(y);
    }
    ol_model_destroy(m);
  }
  /* an unknown reference fails in the checker and when the session is created */
  ref.type_ref = 99;
  CHECK_OK(build(text, &e, &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "attribute 'type'") && strstr(ol_last_error(), "type_ref 99"));
    ol_session *sess = NULL;
    CHECK_STATUS(ol_session_create(m, NULL, &sess), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "type_ref 99") != NULL);
    ol_model_destroy(m);
  }
  ol_quant_type_free(st);

  /* Identity as a kernel forwards the encoded value itself (no copy) */
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  const float data[4] = {1, 2, 3, 4};
  const int64_t dims[1] = {4};
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 4, 4, &plan));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, data, 1, dims, "w", &ev));
  ol_quant_plan_destroy(plan);
  ol_value *encoded = NULL, *out = NULL;
  if (ev) CHECK_OK(ol_value_new_encoded(ev, free_proto, &encoded));
  if (encoded) {
    CHECK_OK(tk_run("Identity", 21, NULL, 0, &encoded, 1, &out, 1));
    CHECK(out == encoded && ol_value_get_kind(out) == OL_VALUE_ENCODED);
    ol_value_release(out);
    ol_value_release(encoded);
  }
}

/* An encoded graph output declared with its struct_type, as in the seed. */
static void encoded_graph_output(void) {
  Onnx__StructTypeProto *st = make_type(OL_QUANT_INT4, 8, 4);
  if (!st) return;
  Onnx__TypeProto tp = wrap(st);
  Onnx__ValueInfoProto out = ONNX__VALUE_INFO_PROTO__INIT;
  out.name = "Q";
  out.type = &tp;
  edits e = {.quantize_type = &tp, .extra_output = &out};
  ol_model *m = NULL;
  CHECK_OK(build(QDQ, &e, &m));
  if (m) {
    CHECK_OK(ol_model_check(m));
    ol_session *sess = NULL;
    CHECK_OK(ol_session_create(m, NULL, &sess));
    const float x[8] = {-4, -0.5f, 0.5f, 3.5f, 1, 2, 3, -1};
    const int64_t n = 8;
    ol_value *xin = tk_f32(1, &n, x), *outs[2] = {NULL, NULL};
    const char *in_names[1] = {"X"};
    const char *out_names[2] = {"Q", "Y"};
    if (sess) CHECK_OK(ol_session_run(sess, in_names, &xin, 1, out_names, outs, 2, NULL));
    if (outs[0]) {
      CHECK(ol_value_get_kind(outs[0]) == OL_VALUE_ENCODED);
      const Onnx__EncodedValueProto *ev = outs[0]->encoded;
      CHECK(ev->has_raw_data && strcmp(ev->name, "X") == 0);
      ol_quant_decoded d;
      CHECK_OK(ol_quant_decode_proto(ev, NULL, &d, NULL));
      if (d.values && outs[1])
        for (int i = 0; i < 8; i++) CHECK((float)d.values[i] == ((const float *)ol_tensor_data(outs[1]))[i]);
      ol_quant_decoded_clear(&d);
    }
    ol_value_release(outs[0]);
    ol_value_release(outs[1]);
    ol_value_release(xin);
    ol_session_destroy(sess);
    ol_model_destroy(m);
  }
  ol_quant_type_free(st);
}

/* ------------------------------------------------------------ kernel level */

typedef struct type_attr {
  Onnx__TypeProto tp;
  Onnx__AttributeProto ap;
  ol_attr attr;
} type_attr;

static void make_type_attr(type_attr *t, Onnx__StructTypeProto *st) {
  t->tp = wrap(st);
  t->ap = (Onnx__AttributeProto)ONNX__ATTRIBUTE_PROTO__INIT;
  t->ap.name = "type";
  t->ap.has_type = 1;
  t->ap.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
  t->ap.tp = &t->tp;
  t->attr = (ol_attr){0};
  t->attr.name = "type";
  t->attr.type = OL_ATTR_TYPE_PROTO;
  t->attr.proto = &t->ap;
}

/* Quantize(X, inputs...) then Dequantize to FLOAT; *y receives the result. */
static ol_status qdq(Onnx__StructTypeProto *st, ol_value *const *inputs, size_t n, ol_value **encoded,
                     ol_value **y) {
  type_attr t;
  make_type_attr(&t, st);
  *y = NULL;
  ol_value *q = NULL;
  OL_TRY(tk_run_domain("ai.rt", "Quantize", 1, &t.attr, 1, inputs, n, &q, 1));
  ol_attr dtype = tk_attr_int("dtype", OL_DTYPE_FLOAT);
  ol_status s = tk_run_domain("ai.rt", "Dequantize", 1, &dtype, 1, &q, 1, y, 1);
  if (encoded) *encoded = q;
  else ol_value_release(q);
  return s;
}

static double nearest(const double *table, uint32_t n, double v) {
  double best = table[0];
  for (uint32_t i = 1; i < n; i++)
    if (fabs(table[i] - v) < fabs(best - v)) best = table[i];
  return best;
}

/* The seed's NF4 example with automatic and with explicit scales. */
static void nf4_automatic_and_explicit(void) {
  uint32_t n_table = 0;
  const double *table = ol_quant_table_values(OL_QUANT_TABLE_NF4, &n_table);
  CHECK(table && n_table == 16);
  if (!table) return;
  Onnx__StructTypeProto *st = make_type(OL_QUANT_NF4, 8, 4);
  if (!st) return;
  const float x[8] = {-2, -1, 0.5f, 2, 0.3f, -0.1f, 0.05f, 0.2f};
  const int64_t dims[1] = {8};
  ol_value *in = tk_f32(1, dims, x), *encoded = NULL, *y = NULL;
  CHECK_OK(qdq(st, &in, 1, &encoded, &y));
  if (y) {
    /* automatic: block scales 2 and 0.3 (the NF4 table spans [-1, 1]) */
    const float *got = ol_tensor_data(y);
    const double scales[2] = {2.0, (double)0.3f};
    for (int i = 0; i < 8; i++) {
      double s = scales[i / 4];
      CHECK(got[i] == (float)(s * nearest(table, n_table, x[i] / s)));
    }
    CHECK(got[0] == -2 && got[3] == 2 && got[4] == 0.3f);
    ol_value_release(y);
  }
  if (encoded) {
    const Onnx__EncodedValueProto *ev = encoded->encoded;
    CHECK(ev->struct_type && strcmp(ev->struct_type->name, "onnx_light.quantization.v1/nf4") == 0);
    CHECK(ev->logical_type && ev->logical_type->tensor_type->elem_type == ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT);
    ol_value_release(encoded);
  }
  /* explicit per-block scales override calibration; values beyond saturate */
  const float scale_values[2] = {1.0f, 0.5f};
  const int64_t two[1] = {2};
  ol_value *inputs[2] = {in, tk_f32(1, two, scale_values)};
  CHECK_OK(qdq(st, inputs, 2, NULL, &y));
  if (y) {
    const float *got = ol_tensor_data(y);
    for (int i = 0; i < 8; i++) {
      double s = scale_values[i / 4];
      CHECK(got[i] == (float)(s * nearest(table, n_table, x[i] / s)));
    }
    CHECK(got[0] == -1 && got[3] == 1); /* saturated at the table ends */
    ol_value_release(y);
  }
  ol_value_release(inputs[1]);
  /* a scalar scale applies to every block */
  const float half = 0.5f;
  inputs[1] = tk_f32(0, NULL, &half);
  CHECK_OK(qdq(st, inputs, 2, NULL, &y));
  if (y) {
    CHECK(((const float *)ol_tensor_data(y))[3] == 0.5f);
    ol_value_release(y);
  }
  ol_value_release(inputs[1]);
  /* scales with the wrong number of values are rejected */
  const float three_scales[3] = {1, 1, 1};
  const int64_t three[1] = {3};
  inputs[1] = tk_f32(1, three, three_scales);
  CHECK_STATUS(qdq(st, inputs, 2, NULL, &y), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "scales") != NULL);
  ol_value_release(inputs[1]);
  ol_value_release(in);
  ol_quant_type_free(st);
}

/* Affine zero points and offsets as inputs; FLOAT16 parameters. */
static void affine_parameters(void) {
  Onnx__StructTypeProto *st = make_type(OL_QUANT_INT8, 4, 4);
  if (!st) return;
  const float x[4] = {1, 2, 3, 4};
  const int64_t dims[1] = {4};
  ol_value *inputs[4] = {tk_f32(1, dims, x), NULL, NULL, NULL};
  const uint16_t scale_f16 = 0x3800; /* 0.5 */
  const float zp = 3, offset = 1;
  inputs[1] = tk_tensor(OL_DTYPE_FLOAT16, 0, NULL, &scale_f16);
  inputs[2] = tk_f32(0, NULL, &zp);
  inputs[3] = tk_f32(0, NULL, &offset);
  ol_value *encoded = NULL, *y = NULL;
  CHECK_OK(qdq(st, inputs, 4, &encoded, &y));
  if (y) {
    const float *got = ol_tensor_data(y);
    for (int i = 0; i < 4; i++) CHECK(got[i] == x[i]);
    ol_value_release(y);
  }
  if (encoded) {
    ol_quant_decoded d;
    ol_quant_plan *parsed = NULL;
    CHECK_OK(ol_quant_decode_proto(encoded->encoded, NULL, &d, &parsed));
    if (parsed) {
      const ol_quant_block *b = &parsed->runs[0].blocks[0];
      CHECK(b->scale == 0.5 && b->zero_point == 3 && b->offset == 1);
      ol_quant_plan_destroy(parsed);
    }
    ol_quant_decoded_clear(&d);
    ol_value_release(encoded);
  }
  for (int i = 0; i < 4; i++) ol_value_release(inputs[i]);
  ol_quant_type_free(st);
}

/* Permutation, transform and outlier inputs; missing or reshaped ones fail. */
static void pipeline_inputs(void) {
  ol_quant_plan *plan = NULL;
  Onnx__StructTypeProto *st = NULL;
  const int64_t perm[4] = {3, 2, 1, 0}, outlier[1] = {1};
  const double swap[4] = {0, 1, 1, 0};
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 4, 4, &plan));
  if (!plan) return;
  CHECK_OK(ol_quant_plan_set_permutation(plan, perm, 4));
  CHECK_OK(ol_quant_plan_set_transform(plan, 2, swap, 4, swap, 4));
  CHECK_OK(ol_quant_plan_set_outliers(plan, outlier, 1));
  CHECK_OK(ol_quant_make_type_proto(plan, &st));
  ol_quant_plan_destroy(plan);
  if (!st) return;
  const float x[4] = {0.25f, 1000, -0.5f, 1};
  const float swap_f[4] = {0, 1, 1, 0};
  const int64_t four[1] = {4}, one[1] = {1}, square[2] = {2, 2};
  ol_value *inputs[9] = {tk_f32(1, four, x), NULL, NULL, NULL, NULL, tk_i64(1, four, perm),
                         tk_f32(2, square, swap_f), tk_f32(2, square, swap_f), tk_i64(1, one, outlier)};
  ol_value *y = NULL;
  CHECK_OK(qdq(st, inputs, 9, NULL, &y));
  if (y) {
    const float *got = ol_tensor_data(y);
    CHECK(got[1] == 1000); /* outliers are restored exactly */
    /* one calibrated block of the other values: scale 1/127 */
    for (int i = 0; i < 4; i++)
      if (i != 1) CHECK(fabsf(got[i] - x[i]) <= 0.5f / 127 + 1e-6f);
    ol_value_release(y);
  }
  /* a missing permutation */
  ol_value *saved = inputs[5];
  inputs[5] = NULL;
  CHECK_STATUS(qdq(st, inputs, 9, NULL, &y), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "permutation") && strstr(ol_last_error(), "missing"));
  inputs[5] = saved;
  /* a flattened transform with the same element count */
  saved = inputs[6];
  inputs[6] = tk_f32(1, four, swap_f);
  CHECK_STATUS(qdq(st, inputs, 9, NULL, &y), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "forward") && strstr(ol_last_error(), "[2, 2]"));
  ol_value_release(inputs[6]);
  inputs[6] = saved;
  /* outlier indices must be INT64 */
  saved = inputs[8];
  const float one_f = 1;
  inputs[8] = tk_f32(1, one, &one_f);
  CHECK_STATUS(qdq(st, inputs, 9, NULL, &y), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "outliers") != NULL);
  ol_value_release(inputs[8]);
  inputs[8] = saved;
  for (int i = 0; i < 9; i++) ol_value_release(inputs[i]);
  ol_quant_type_free(st);
}

/* Dequantize writes FLOAT16 directly and reads the ORT MatMulNBits layout. */
static void dequantize_dtypes_and_ort(void) {
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  float w[32 * 2];
  for (int i = 0; i < 64; i++) w[i] = (float)((i % 9) - 4) * 0.25f;
  const int64_t dims[2] = {32, 2};
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 32, 2, 16, &plan));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, "B", &ev));
  ol_quant_plan_destroy(plan);
  ol_value *encoded = NULL, *y = NULL;
  if (ev) CHECK_OK(ol_value_new_encoded(ev, free_proto, &encoded));
  if (!encoded) return;
  ol_quant_decoded ref;
  CHECK_OK(ol_quant_decode_proto(encoded->encoded, NULL, &ref, NULL));
  ol_attr f16 = tk_attr_int("dtype", OL_DTYPE_FLOAT16);
  CHECK_OK(tk_run_domain("ai.rt", "Dequantize", 1, &f16, 1, &encoded, 1, &y, 1));
  if (y && ref.values) {
    CHECK(tk_shape_is(y, 2, dims));
    uint16_t want[64];
    CHECK_OK(ol_quant_write_floats(OL_DTYPE_FLOAT16, ref.values, 64, want));
    CHECK(memcmp(ol_tensor_data(y), want, sizeof want) == 0);
  }
  ol_value_release(y);
  ol_quant_decoded_clear(&ref);
  ol_value_release(encoded);
}

/* Quantize into an ORT MatMulNBits descriptor taken from an existing value. */
static void quantize_ort_layout(void) {
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *existing = NULL;
  float w[32 * 2];
  for (int i = 0; i < 64; i++) w[i] = (float)((i * 7) % 13 - 6) * 0.125f;
  const int64_t dims[2] = {32, 2};
  CHECK_OK(ol_quant_make_matmul_nbits_plan(OL_QUANT_ORT_MATMULNBITS_INT4, 32, 2, 16, &plan));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, "B", &existing));
  ol_quant_plan_destroy(plan);
  if (!existing) return;
  ol_value *x = tk_f32(2, dims, w), *encoded = NULL, *y = NULL;
  CHECK_OK(qdq(existing->struct_type, &x, 1, &encoded, &y));
  if (y) {
    /* per (column, 16-row group) scale = max(pos / 7, neg / 8) */
    const float *got = ol_tensor_data(y);
    for (int col = 0; col < 2; col++)
      for (int g = 0; g < 2; g++) {
        double scale = 0;
        for (int r = g * 16; r < g * 16 + 16; r++) {
          double v = w[r * 2 + col];
          double ratio = v > 0 ? v / 7 : -v / 8;
          if (ratio > scale) scale = ratio;
        }
        for (int r = g * 16; r < g * 16 + 16; r++)
          CHECK(fabs(got[r * 2 + col] - w[r * 2 + col]) <= scale / 2 + 1e-6);
      }
    ol_value_release(y);
  }
  if (encoded) {
    const Onnx__EncodedValueProto *ev = encoded->encoded;
    CHECK(strcmp(ev->struct_type->name, "onnx_light.quantization.v1/ort_matmulnbits_int4") == 0);
    ol_value_release(encoded);
  }
  /* explicit zero points other than the midpoint need zero-point storage the
   * destination does not declare */
  const float zp = 3;
  ol_value *inputs[3] = {x, NULL, tk_f32(0, NULL, &zp)};
  CHECK_STATUS(qdq(existing->struct_type, inputs, 3, NULL, &y), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "does not match the destination type") != NULL);
  ol_value_release(inputs[2]);
  /* a matrix of another shape does not match either; offsets are rejected */
  const int64_t small[2] = {16, 2};
  ol_value *x16 = tk_f32(2, small, w);
  CHECK_STATUS(qdq(existing->struct_type, &x16, 1, NULL, &y), OL_INVALID_ARGUMENT);
  const float offset = 1;
  ol_value *with_offset[4] = {x, NULL, NULL, tk_f32(0, NULL, &offset)};
  CHECK_STATUS(qdq(existing->struct_type, with_offset, 4, NULL, &y), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "offsets") != NULL);
  ol_value_release(with_offset[3]);
  ol_value_release(x16);
  ol_value_release(x);
  ol_quant_proto_free(existing);
}

/* ------------------------------------------------------------ rejections */

static void rejections(void) {
  Onnx__StructTypeProto *st = make_type(OL_QUANT_INT4, 8, 4);
  if (!st) return;
  ol_model *m = NULL;
  ol_session *sess = NULL;
  /* missing type attribute */
  edits none = {0};
  CHECK_OK(build(QDQ, &none, &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &sess), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'type'") && strstr(ol_last_error(), "missing"));
    ol_model_destroy(m);
  }
  /* bad dtype */
  Onnx__TypeProto tp = wrap(st);
  edits e = {.quantize_type = &tp};
  const char *bad_dtype =
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "quantization (float[8] X) => (int64[8] Y) {\n"
      "  Q = ai.rt.Quantize(X)\n"
      "  Y = ai.rt.Dequantize <dtype = 7> (Q)\n"
      "}";
  CHECK_OK(build(bad_dtype, &e, &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &sess), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'dtype'") && strstr(ol_last_error(), "got 7"));
    ol_model_destroy(m);
  }
  /* parameter_ref naming an undeclared set (shared sets: test_quant_shared.c) */
  edits shared = {.quantize_type = &tp, .parameter_ref = "common"};
  CHECK_OK(build(QDQ, &shared, &m));
  if (m) {
    CHECK_STATUS(ol_session_create(m, NULL, &sess), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "parameter_ref") && strstr(ol_last_error(), "'common'") &&
          strstr(ol_last_error(), "does not declare"));
    ol_model_destroy(m);
  }
  /* nonfinite input */
  CHECK_OK(build(QDQ, &e, &m));
  if (m) {
    float x[8] = {1, 2, 3, 4, 5, 6, 7, 8};
    x[5] = INFINITY;
    ol_value *y = NULL;
    CHECK_STATUS(run_model(m, "X", x, 8, "Y", &y), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "finite") && strstr(ol_last_error(), "Quantize"));
    x[5] = NAN;
    CHECK_STATUS(run_model(m, "X", x, 8, "Y", &y), OL_INVALID_ARGUMENT);
    ol_model_destroy(m);
  }
  /* input count not covered by the descriptor */
  const char *sixteen =
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "quantization (float[6] X) => (float[6] Y) {\n"
      "  Q = ai.rt.Quantize(X)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
      "}";
  CHECK_OK(build(sixteen, &e, &m));
  if (m) {
    const float x[6] = {1, 2, 3, 4, 5, 6};
    ol_value *y = NULL;
    CHECK(run_model(m, "X", x, 6, "Y", &y) != OL_OK);
    ol_model_destroy(m);
  }
  /* Dequantize of a plain tensor */
  const float x4[4] = {1, 2, 3, 4};
  const int64_t dims[1] = {4};
  ol_value *t = tk_f32(1, dims, x4), *y = NULL;
  ol_attr dtype = tk_attr_int("dtype", OL_DTYPE_FLOAT);
  CHECK_STATUS(tk_run_domain("ai.rt", "Dequantize", 1, &dtype, 1, &t, 1, &y, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "encoded value") != NULL);
  ol_value_release(t);
  /* overflow: a DOUBLE value beyond FLOAT's range cannot be dequantized to FLOAT */
  Onnx__StructTypeProto *st8 = make_type(OL_QUANT_INT8, 4, 4);
  const double big[4] = {1e300, -1e300, 0, 1};
  ol_value *dbl = tk_tensor(OL_DTYPE_DOUBLE, 1, dims, big), *q = NULL;
  type_attr ta;
  if (st8) {
    make_type_attr(&ta, st8);
    CHECK_OK(tk_run_domain("ai.rt", "Quantize", 1, &ta.attr, 1, &dbl, 1, &q, 1));
  }
  if (q) {
    CHECK_STATUS(tk_run_domain("ai.rt", "Dequantize", 1, &dtype, 1, &q, 1, &y, 1), OL_INVALID_ARGUMENT);
    ol_attr as_double = tk_attr_int("dtype", OL_DTYPE_DOUBLE);
    CHECK_OK(tk_run_domain("ai.rt", "Dequantize", 1, &as_double, 1, &q, 1, &y, 1));
    if (y) {
      CHECK(((const double *)ol_tensor_data(y))[0] == 1e300);
      ol_value_release(y);
    }
    ol_value_release(q);
  }
  ol_value_release(dbl);
  ol_quant_type_free(st8);
  ol_quant_type_free(st);
}

/* ------------------------------------------------------------ encoded initializers */

static Onnx__EncodedValueProto *encode_weights(const char *name, const float *data, int64_t n) {
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, (uint64_t)n, 4, &plan));
  if (plan) CHECK_OK(ol_quant_calibrate_values(plan, (const double[8]){data[0], data[1], data[2], data[3],
                                                                 data[4], data[5], data[6], data[7]},
                                        8));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, data, 1, &n, name, &ev));
  ol_quant_plan_destroy(plan);
  return ev;
}

static const char *DEQ_INIT =
    "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
    "weights (float[8] X) => (float[8] Y) {\n"
    "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
    "  Y = Add(X, W_f)\n"
    "}";

static void encoded_initializer_session(void) {
  const float w[8] = {-4, -0.5f, 0.5f, 3.5f, -8, -1, 1, 7};
  Onnx__EncodedValueProto *ev = encode_weights("W", w, 8);
  if (!ev) return;
  Onnx__EncodedValueProto *list[1] = {ev};
  edits e = {.encoded = list, .n_encoded = 1};
  ol_model *m = NULL;
  CHECK_OK(build(DEQ_INIT, &e, &m));
  if (m) {
    CHECK(m->data->graph->num_initializers == 1 && m->data->graph->initializers[0].encoded);
    CHECK_OK(ol_model_check(m));
    /* the value views the model's payload in place and keeps it alive */
    ol_value *kept = m->data->graph->initializers[0].value;
    const Onnx__EncodedValueProto *view = kept->encoded;
    CHECK(ol_value_get_kind(kept) == OL_VALUE_ENCODED &&
          view->raw_data.data == m->data->proto->graph->encoded_initializer[0]->raw_data.data);
    kept = ol_value_retain(kept);
    const float x[8] = {1, 1, 1, 1, 1, 1, 1, 1};
    ol_value *y = NULL;
    CHECK_OK(run_model(m, "X", x, 8, "Y", &y));
    if (y) {
      const float *got = ol_tensor_data(y);
      for (int i = 0; i < 8; i++) CHECK(got[i] == w[i] + 1);
      ol_value_release(y);
    }
    ol_model_destroy(m);
    ol_quant_decoded d;
    CHECK_OK(ol_quant_decode_proto(kept->encoded, NULL, &d, NULL));
    CHECK(d.count == 8 && d.values && d.values[7] == 7);
    ol_quant_decoded_clear(&d);
    ol_value_release(kept);
  }
  /* the same payload with its descriptor in ModelProto.struct_types */
  Onnx__StructTypeProto *inline_type = ev->struct_type;
  inline_type->has_type_id = 1;
  inline_type->type_id = 3;
  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 3;
  ev->struct_type = &ref;
  Onnx__StructTypeProto *catalogue[1] = {inline_type};
  e.struct_types = catalogue;
  e.n_struct_types = 1;
  CHECK_OK(build(DEQ_INIT, &e, &m));
  if (m) {
    CHECK_OK(ol_model_check(m));
    const float x[8] = {0};
    ol_value *y = NULL;
    CHECK_OK(run_model(m, "X", x, 8, "Y", &y));
    if (y) {
      for (int i = 0; i < 8; i++) CHECK(((const float *)ol_tensor_data(y))[i] == w[i]);
      ol_value_release(y);
    }
    ol_model_destroy(m);
  }
  /* unknown type_ref: the checker names the initializer */
  ref.type_ref = 4;
  CHECK_OK(build(DEQ_INIT, &e, &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'W'") && strstr(ol_last_error(), "type_ref 4"));
    ol_model_destroy(m);
  }
  ev->struct_type = inline_type;
  inline_type->has_type_id = 0;
  inline_type->type_id = 0;
  ol_quant_proto_free(ev);
}

static void encoded_initializer_checker(void) {
  const float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  Onnx__EncodedValueProto *ev = encode_weights("W", w, 8);
  if (!ev) return;
  Onnx__EncodedValueProto *list[1] = {ev};
  edits e = {.encoded = list, .n_encoded = 1};
  ol_model *m = NULL;
  /* truncated payload */
  size_t len = ev->raw_data.len;
  ev->raw_data.len = len - 1;
  CHECK_OK(build(DEQ_INIT, &e, &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "encoded initializer 'W'") != NULL);
    /* the session loads it; Dequantize rejects it when running */
    const float x[8] = {0};
    ol_value *y = NULL;
    CHECK(run_model(m, "X", x, 8, "Y", &y) != OL_OK);
    ol_model_destroy(m);
  }
  ev->raw_data.len = len;
  /* a descriptor that is not a quantization layout */
  char *saved_name = ev->struct_type->name;
  ev->struct_type->name = "something.else";
  CHECK_OK(build(DEQ_INIT, &e, &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'W'") && strstr(ol_last_error(), "something.else"));
    ol_model_destroy(m);
  }
  ev->struct_type->name = saved_name;
  /* no name */
  char *saved = ev->name;
  ev->name = NULL;
  CHECK_OK(build(DEQ_INIT, &e, &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "encoded initializer 0 has no name") != NULL);
    ol_model_destroy(m);
  }
  ev->name = saved;
  /* the same name as a tensor initializer */
  const char *clash =
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "weights (float[8] X) => (float[8] Y)\n"
      "<float[8] W = {1, 2, 3, 4, 5, 6, 7, 8}> {\n"
      "  Y = Add(X, W)\n"
      "}";
  CHECK_OK(build(clash, &e, &m));
  if (m) {
    CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "encoded initializer 'W'") && strstr(ol_last_error(), "same name"));
    ol_model_destroy(m);
  }
  ol_quant_proto_free(ev);
}

/* Encoded initializers of nested graphs are loaded and checked too. */
static void encoded_initializer_nested(void) {
  const float w[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  Onnx__EncodedValueProto *ev = encode_weights("Wn", w, 8);
  if (!ev) return;
  const char *text =
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "nested (bool c) => (float[8] Y) {\n"
      "  Y = If (c) <then_branch = t () => (float[8] a) { a = ai.rt.Dequantize <dtype = 1> (Wn) },\n"
      "              else_branch = e () => (float[8] b) { b = ai.rt.Dequantize <dtype = 1> (Wn) }>\n"
      "}";
  ol_model *m = NULL;
  ol_model *parsed = NULL;
  CHECK_OK(ol_model_parse_text(text, &parsed));
  if (!parsed) {
    ol_quant_proto_free(ev);
    return;
  }
  Onnx__GraphProto *g = parsed->data->proto->graph;
  Onnx__NodeProto *node = g->node[0];
  Onnx__GraphProto *branches[2] = {NULL, NULL};
  for (size_t a = 0; a < node->n_attribute; a++)
    if (node->attribute[a]->g) branches[strcmp(node->attribute[a]->name, "else_branch") == 0] = node->attribute[a]->g;
  Onnx__EncodedValueProto *list[1] = {ev};
  for (int pass = 0; pass < 2 && branches[0] && branches[1]; pass++) {
    if (pass == 1) ev->raw_data.data[0] = 1; /* the reserved byte must be zero */
    for (int b = 0; b < 2; b++) {
      branches[b]->n_encoded_initializer = 1;
      branches[b]->encoded_initializer = list;
    }
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(ol_model_serialize(parsed, &bytes, &size));
    for (int b = 0; b < 2; b++) {
      branches[b]->n_encoded_initializer = 0;
      branches[b]->encoded_initializer = NULL;
    }
    if (!bytes) break;
    CHECK_OK(ol_model_load(bytes, size, NULL, &m));
    ol_free(bytes);
    if (!m) break;
    if (pass == 0) {
      CHECK_OK(ol_model_check(m));
      ol_session *sess = NULL;
      CHECK_OK(ol_session_create(m, NULL, &sess));
      const bool cond = true;
      ol_value *c = tk_tensor(OL_DTYPE_BOOL, 0, NULL, &cond), *y = NULL;
      const char *in_names[1] = {"c"};
      if (sess) CHECK_OK(ol_session_run(sess, in_names, &c, 1, NULL, &y, 1, NULL));
      if (y) {
        const float *got = ol_tensor_data(y);
        for (int i = 0; i < 8; i++) CHECK(fabsf(got[i] - w[i]) <= 8.0f / 14 + 1e-6f);
        ol_value_release(y);
      }
      ol_value_release(c);
      ol_session_destroy(sess);
    } else {
      CHECK_STATUS(ol_model_check(m), OL_INVALID_MODEL);
      CHECK(strstr(ol_last_error(), "encoded initializer 'Wn'") != NULL);
    }
    ol_model_destroy(m);
    m = NULL;
  }
  ol_model_destroy(parsed);
  ol_quant_proto_free(ev);
}

OL_TEST_MAIN(TEST(int4_calibration_graph), TEST(type_ref_and_identity), TEST(encoded_graph_output), TEST(nf4_automatic_and_explicit),
             TEST(affine_parameters), TEST(pipeline_inputs),
             TEST(dequantize_dtypes_and_ort), TEST(quantize_ort_layout),
             TEST(rejections), TEST(encoded_initializer_session),
             TEST(encoded_initializer_checker), TEST(encoded_initializer_nested))
