/* MatMul(A, ai.rt::Dequantize(E)) fused at session creation
 * (runtime/fuse_qmatmul.c, ops/qmatmul.c): the fused plan skips the
 * Dequantize step and gives the unfused result bit for bit (one row, a few
 * rows, batched prefill rows, a 1-D A); patterns that must stay unfused
 * (W read twice, W a graph output, a codebook profile, DOUBLE dtype, E
 * overridable by a graph input) stay unfused and correct; errors read as
 * MatMul's. Models come from the ONNX text syntax with encoded initializers
 * attached to the parsed proto (the test_quantize_ops.c pattern). */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "kernel_util.h"
#include "onnxlight.h"
#include "quant/codec.h"
#include "quant/plan.h"
#include "quant/wire.h"
#include "runtime/plan.h"
#include "runtime/session.h"
#include "simd/gemm.h"

#include "test_random.h"

enum { K = 40, N = 24 };

/* Parses text, adds the encoded initializers, serializes and loads again. */
static ol_status build(const char *text, Onnx__EncodedValueProto **encoded, size_t n_encoded, ol_model **out) {
  *out = NULL;
  ol_model *m = NULL;
  OL_TRY(ol_model_parse_text(text, &m));
  Onnx__GraphProto *g = m->data->proto->graph;
  size_t saved_n = g->n_encoded_initializer;
  Onnx__EncodedValueProto **saved = g->encoded_initializer;
  g->n_encoded_initializer = n_encoded;
  g->encoded_initializer = encoded;
  void *bytes = NULL;
  size_t size = 0;
  ol_status s = ol_model_serialize(m, &bytes, &size);
  g->n_encoded_initializer = saved_n;
  g->encoded_initializer = saved;
  ol_model_destroy(m);
  if (s != OL_OK) return s;
  s = ol_model_load(bytes, size, NULL, out);
  ol_free(bytes);
  return s;
}

static float weights[K * N];

static Onnx__EncodedValueProto *encode(ol_quant_format format, const char *name) {
  int64_t dims[2] = {K, N};
  double v[K * N];
  for (int i = 0; i < K * N; i++) v[i] = weights[i];
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  CHECK_OK(ol_quant_make_plan(format, K * N, 32, &plan));
  if (plan) CHECK_OK(ol_quant_calibrate_values(plan, v, K * N));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, weights, 2, dims, name, &ev));
  ol_quant_plan_destroy(plan);
  return ev;
}

/* Dequantize steps the plan skipped (fused into their MatMul). */
static int fused_steps(const ol_session *sess) {
  int n = 0;
  for (size_t k = 0; k < sess->plan->num_steps; k++)
    n += sess->plan->steps[k].skipped && strcmp(sess->plan->steps[k].node->op_type, "Dequantize") == 0;
  return n;
}

/* Runs model m on X (rank/dims) and returns output "Y"; *fused gets the count. */
static ol_value *run(ol_model *m, ol_value *x, int *fused) {
  ol_session *sess = NULL;
  ol_value *y = NULL;
  CHECK_OK(ol_session_create(m, NULL, &sess));
  if (!sess) return NULL;
  *fused = fused_steps(sess);
  const char *in[1] = {"X"}, *out[1] = {"Y"};
  CHECK_OK(ol_session_run(sess, in, &x, 1, out, &y, 1, NULL));
  ol_session_destroy(sess);
  return y;
}

/* The reference: the codec's floats, then the fp32 reference product. */
static void reference(const Onnx__EncodedValueProto *ev, const float *a, int64_t M, float *c) {
  ol_quant_decoded d;
  float w[K * N];
  CHECK_OK(ol_quant_decode_proto(ev, NULL, &d, NULL));
  if (d.values) CHECK_OK(ol_quant_write_floats(OL_DTYPE_FLOAT, d.values, d.count, w));
  ol_quant_decoded_clear(&d);
  ol_f32_gemm_scalar(M, N, K, a, K, w, N, c, N);
}

static bool same_bits(const ol_value *y, const float *want, int64_t n) {
  if (!y || ol_tensor_element_count(y) != n) return false;
  const float *got = ol_tensor_data(y);
  for (int64_t i = 0; i < n; i++)
    if (fbits(got[i]) != fbits(want[i])) return false;
  return true;
}

static const char *FUSED = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                           "g (float[M, 40] X) => (float[M, 24] Y) {\n"
                           "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                           "  Y = MatMul(X, W_f)\n"
                           "}";

/* Fused and unfused (W also a graph output) give the same bits for 1, 3, 8
 * and 9 rows, batched rows and a 1-D A. */
static void fused_equals_unfused(void) {
  for (int i = 0; i < K * N; i++) weights[i] = rnd();
  const ol_quant_format formats[] = {OL_QUANT_INT4, OL_QUANT_INT8, OL_QUANT_GPTQ};
  static const char *UNFUSED = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                               "g (float[M, 40] X) => (float[M, 24] Y, float[40, 24] W_f) {\n"
                               "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                               "  Y = MatMul(X, W_f)\n"
                               "}";
  for (int f = 0; f < 3; f++) {
    Onnx__EncodedValueProto *ev = encode(formats[f], "W");
    if (!ev) continue;
    ol_model *fused = NULL, *unfused = NULL;
    CHECK_OK(build(FUSED, &ev, 1, &fused));
    CHECK_OK(build(UNFUSED, &ev, 1, &unfused));
    static const int64_t rows[] = {1, 3, 8, 9, 20};
    for (int r = 0; fused && unfused && r < 5; r++) {
      int64_t M = rows[r], dims[2] = {M, K};
      float a[20 * K], want[20 * N];
      for (int64_t i = 0; i < M * K; i++) a[i] = rnd();
      reference(ev, a, M, want);
      ol_value *x = tk_f32(2, dims, a);
      int nf = -1, nu = -1;
      ol_value *y0 = run(fused, x, &nf), *y1 = run(unfused, x, &nu);
      CHECK(nf == 1 && nu == 0);
      CHECK(same_bits(y0, want, M * N) && same_bits(y1, want, M * N));
      ol_value_release(x), ol_value_release(y0), ol_value_release(y1);
    }
    ol_model_destroy(fused);
    ol_model_destroy(unfused);
    ol_quant_proto_free(ev);
  }
  /* batched A [2, 5, K] and a 1-D A [K] */
  Onnx__EncodedValueProto *ev = encode(OL_QUANT_INT4, "W");
  static const char *BATCHED = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                               "g (float[2, 5, 40] X) => (float[2, 5, 24] Y) {\n"
                               "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                               "  Y = MatMul(X, W_f)\n"
                               "}";
  static const char *VECTOR = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                              "g (float[40] X) => (float[24] Y) {\n"
                              "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                              "  Y = MatMul(X, W_f)\n"
                              "}";
  const char *texts[2] = {BATCHED, VECTOR};
  const int64_t bdims[3] = {2, 5, K}, vdims[1] = {K}, Ms[2] = {10, 1};
  for (int t = 0; ev && t < 2; t++) {
    ol_model *m = NULL;
    CHECK_OK(build(texts[t], &ev, 1, &m));
    float a[10 * K], want[10 * N];
    for (int64_t i = 0; i < Ms[t] * K; i++) a[i] = rnd();
    reference(ev, a, Ms[t], want);
    ol_value *x = t ? tk_f32(1, vdims, a) : tk_f32(3, bdims, a);
    int nf = -1;
    ol_value *y = m ? run(m, x, &nf) : NULL;
    CHECK(nf == 1 && same_bits(y, want, Ms[t] * N));
    CHECK(y && ol_tensor_rank(y) == (size_t)(t ? 1 : 3));
    ol_value_release(x), ol_value_release(y);
    ol_model_destroy(m);
  }
  ol_quant_proto_free(ev);
}

/* Patterns left unfused still compute Dequantize + MatMul correctly. */
static void ineligible_stay_unfused(void) {
  for (int i = 0; i < K * N; i++) weights[i] = rnd();
  static const char *TWICE = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                             "g (float[M, 40] X) => (float[M, 24] Y) {\n"
                             "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                             "  Y0 = MatMul(X, W_f)\n"
                             "  Z = Mul(X, X)\n"
                             "  Y1 = MatMul(Z, W_f)\n"
                             "  Y = Sub(Y0, Y1)\n"
                             "}";
  static const char *OVERRIDABLE = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                                   "g (float[M, 40] X, float[40, 24] W) => (float[M, 24] Y) {\n"
                                   "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                                   "  Y = MatMul(X, W_f)\n"
                                   "}";
  static const char *DOUBLE = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                              "g (float[M, 40] X) => (float[M, 24] Y) {\n"
                              "  W_d = ai.rt.Dequantize <dtype = 11> (W)\n"
                              "  X_d = Cast <to = 11> (X)\n"
                              "  Y_d = MatMul(X_d, W_d)\n"
                              "  Y = Cast <to = 1> (Y_d)\n"
                              "}";
  struct {
    const char *text;
    ol_quant_format format;
  } cases[] = {{TWICE, OL_QUANT_INT4}, {FUSED, OL_QUANT_NF4}, {DOUBLE, OL_QUANT_INT4}, {OVERRIDABLE, OL_QUANT_INT4}};
  for (int c = 0; c < 4; c++) {
    Onnx__EncodedValueProto *ev = encode(cases[c].format, "W");
    ol_model *m = NULL;
    if (ev) CHECK_OK(build(cases[c].text, &ev, 1, &m));
    int64_t dims[2] = {2, K};
    float a[2 * K], want[2 * N];
    for (int i = 0; i < 2 * K; i++) a[i] = rnd();
    ol_value *x = tk_f32(2, dims, a);
    int nf = -1;
    ol_value *y = m ? run(m, x, &nf) : NULL;
    CHECK(nf == 0 && y);
    if (y && ev && c != 0) {
      /* DOUBLE: the float64 product rounded once, within float tolerance */
      if (c == 2) {
        reference(ev, a, 2, want);
        CHECK(tk_near_f32(y, want, 2 * N, 1e-5f));
      } else {
        reference(ev, a, 2, want);
        CHECK(same_bits(y, want, 2 * N));
      }
    }
    if (y && ev && c == 0) {
      float a2[2 * K], y1[2 * N], y0[2 * N];
      for (int i = 0; i < 2 * K; i++) a2[i] = a[i] * a[i];
      reference(ev, a, 2, y0);
      reference(ev, a2, 2, y1);
      for (int i = 0; i < 2 * N; i++) want[i] = y0[i] - y1[i];
      CHECK(same_bits(y, want, 2 * N));
    }
    ol_value_release(x), ol_value_release(y);
    ol_model_destroy(m);
    ol_quant_proto_free(ev);
  }
}

/* Shape and type errors read as MatMul's. */
static void fused_errors(void) {
  for (int i = 0; i < K * N; i++) weights[i] = rnd();
  static const char *ANY = "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                           "g (float[M, K] X) => (float[M, 24] Y) {\n"
                           "  W_f = ai.rt.Dequantize <dtype = 1> (W)\n"
                           "  Y = MatMul(X, W_f)\n"
                           "}";
  Onnx__EncodedValueProto *ev = encode(OL_QUANT_INT4, "W");
  ol_model *m = NULL;
  if (ev) CHECK_OK(build(ANY, &ev, 1, &m));
  ol_session *sess = NULL;
  if (m) CHECK_OK(ol_session_create(m, NULL, &sess));
  if (sess) {
    CHECK(fused_steps(sess) == 1);
    int64_t dims[2] = {2, K - 1};
    float a[2 * K] = {0};
    ol_value *x = tk_f32(2, dims, a), *y = NULL;
    const char *in[1] = {"X"}, *out[1] = {"Y"};
    CHECK_STATUS(ol_session_run(sess, in, &x, 1, out, &y, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "inner dimensions differ") != NULL);
    ol_value_release(x);
    ol_session_destroy(sess);
  }
  ol_model_destroy(m);
  ol_quant_proto_free(ev);
}

OL_TEST_MAIN(TEST(fused_equals_unfused), TEST(ineligible_stay_unfused), TEST(fused_errors))
