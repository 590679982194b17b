/* Model-level type and shape inference (ol_model_infer_shapes): one test per
 * shape rule, symbolic dims, merging with declarations, contradictions, the
 * ai.rt Quantize/Dequantize rules and the seed 003 INT4 calibration graph. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "recorded_type.h"
#include "ir/model.h"
#include "model/infer_internal.h"
#include "onnxlight.h"
#include "quant/plan.h"
#include "quant/wire.h"

/* ------------------------------------------------------------ helpers */

static ol_model *infer_text(const char *text) {
  ol_model *m = NULL, *inferred = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return NULL;
  CHECK_OK(ol_model_infer_shapes(m, &inferred));
  ol_model_destroy(m);
  return inferred;
}

#define CHECK_TYPE(m, name, expected) CHECK_RECORDED((m)->data->graph, name, expected)

#define HEADER "<ir_version: 10, opset_import: [\"\" : 18]>\n"

/* ------------------------------------------------------------ elementwise */

static void broadcast_and_symbolic(void) {
  ol_model *m = infer_text(HEADER
                           "g (float[N,1,4] a, float[3,1] b, float[N,3,4] c, int32 i) => (float[N,3,4] y) {\n"
                           "  s = Add(a, b)\n"
                           "  t = Mul(s, c)\n"
                           "  r = Relu(t)\n"
                           "  e = Equal(a, b)\n"
                           "  l = Less(r, c)\n"
                           "  w = Where(l, r, c)\n"
                           "  p = Pow(w, i)\n"
                           "  k = Cast <to = 7> (p)\n"
                           "  q = CastLike(k, i)\n"
                           "  y = Identity(p)\n"
                           "}");
  if (!m) return;
  CHECK_TYPE(m, "s", "float32[N,3,4]");
  CHECK_TYPE(m, "t", "float32[N,3,4]");
  CHECK_TYPE(m, "r", "float32[N,3,4]");
  CHECK_TYPE(m, "e", "bool[N,3,4]");
  CHECK_TYPE(m, "l", "bool[N,3,4]");
  CHECK_TYPE(m, "w", "float32[N,3,4]");
  CHECK_TYPE(m, "p", "float32[N,3,4]");
  CHECK_TYPE(m, "k", "int64[N,3,4]");
  CHECK_TYPE(m, "q", "int32[N,3,4]");
  CHECK_TYPE(m, "y", ""); /* graph outputs keep their declaration */
  /* the source model is not modified and the result checks and runs */
  CHECK_OK(ol_model_check(m));
  ol_model_destroy(m);

  /* two different names broadcast to an unknown dim; a name and a number to the number */
  m = infer_text(HEADER "g (float[A,B] a, float[C,5] b) => (float[A,5] y) { y = Sub(a, b)\n z = Div(a, b) }");
  if (m) CHECK_TYPE(m, "z", "float32[?,5]");
  ol_model_destroy(m);

  /* incompatible concrete dims name the node */
  ol_model *src = NULL, *out = NULL;
  CHECK_OK(ol_model_parse_text(HEADER "g (float[2,3] a, float[4] b) => (float[2,3] y) { [adder] y = Add(a, b) }", &src));
  if (src) {
    CHECK_STATUS(ol_model_infer_shapes(src, &out), OL_INVALID_MODEL);
    CHECK(out == NULL && strstr(ol_last_error(), "'adder'") && strstr(ol_last_error(), "broadcast"));
  }
  ol_model_destroy(src);
}

static void softmax_norm_reduce(void) {
  ol_model *m = infer_text(
      "<ir_version: 10, opset_import: [\"\" : 17]>\n"
      "g (float[B,S,8] x, float[8] gamma, float[8] beta) => (float[B,S,8] y) {\n"
      "  sm = Softmax <axis = -1> (x)\n"
      "  ls = LogSoftmax(x)\n"
      "  ln, mean, inv = LayerNormalization <axis = -1> (x, gamma, beta)\n"
      "  rm = ReduceMean <axes = [-1]> (x)\n"
      "  rs = ReduceSum <keepdims = 0> (x, axes)\n"
      "  rx = ReduceMax <axes = [0, 2], keepdims = 0> (x)\n"
      "  am = ArgMax <axis = 1, keepdims = 0> (x)\n"
      "  y = Identity(ln)\n"
      "}");
  if (!m) return;
  CHECK_TYPE(m, "sm", "float32[B,S,8]");
  CHECK_TYPE(m, "ls", "float32[B,S,8]");
  CHECK_TYPE(m, "ln", "float32[B,S,8]");
  CHECK_TYPE(m, "mean", "float32[B,S,1]");
  CHECK_TYPE(m, "inv", "float32[B,S,1]");
  CHECK_TYPE(m, "rm", "float32[B,S,1]");
  CHECK_TYPE(m, "rs", "float32"); /* axes unknown (not a constant) and keepdims 0: rank unknown */
  CHECK_TYPE(m, "rx", "float32[S]");
  CHECK_TYPE(m, "am", "int64[B,8]");
  ol_model_destroy(m);

  /* opset 18: ReduceMean takes axes as an input */
  m = infer_text(HEADER "g (float[B,S,8] x) => (float[B,S] y) {\n"
                        "  axes = Constant <value = int64[1] {2}> ()\n"
                        "  y = ReduceMean <keepdims = 0> (x, axes)\n"
                        "  k = ReduceMean(x, axes)\n"
                        "  sl = SimplifiedLayerNormalization <axis = -1> (x, axes)\n"
                        "}");
  if (m) {
    CHECK_TYPE(m, "k", "float32[B,S,1]");
    CHECK_TYPE(m, "axes", "int64[1]");
    CHECK_TYPE(m, "sl", "float32[B,S,8]");
  }
  ol_model_destroy(m);
}

/* ------------------------------------------------------------ MatMul, Gemm */

static void matmul_batch(void) {
  ol_model *m = infer_text(HEADER
                           "g (float[B,1,S,K] a, float[H,K,N] b, float[K] v, float[M,K] x, float[N,K] w, float[N] c)"
                           " => (float[B,H,S,N] y) {\n"
                           "  y = MatMul(a, b)\n"
                           "  mv = MatMul(a, v)\n"
                           "  vm = MatMul(v, b)\n"
                           "  g1 = Gemm <transB = 1> (x, w, c)\n"
                           "}");
  if (!m) return;
  CHECK_TYPE(m, "mv", "float32[B,1,S]");
  CHECK_TYPE(m, "vm", "float32[H,N]");
  CHECK_TYPE(m, "g1", "float32[M,N]");
  ol_model_destroy(m);
  m = infer_text(HEADER "g (float[2,1,3,4] a, float[5,4,6] b) => (float[2,5,3,6] y) { y = MatMul(a, b)\n z = Identity(y) }");
  if (m) CHECK_TYPE(m, "z", "float32[2,5,3,6]");
  ol_model_destroy(m);
  /* mismatched inner dimensions */
  ol_model *src = NULL, *out = NULL;
  CHECK_OK(ol_model_parse_text(HEADER "g (float[2,3] a, float[4,5] b) => (float[2,5] y) { [mm] y = MatMul(a, b) }", &src));
  if (src) {
    CHECK_STATUS(ol_model_infer_shapes(src, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'mm'") && strstr(ol_last_error(), "inner dimensions 3 and 4"));
  }
  ol_model_destroy(src);
}

/* ------------------------------------------------------------ shape ops */

static void reshape_with_zero_and_minus_one(void) {
  ol_model *m = infer_text(
      HEADER
      "g (float[B,S,64] x) => (float[B,4,S,16] y)"
      " <int64[1] minus1 = {-1}, int64 zero = {0}, int64 one = {1}, int64[1] zero1 = {0}, int64[1] c64 = {64},"
      " int64[2] merge = {-1, 64}> {\n"
      "  shape = Constant <value = int64[4] {0, 0, 4, -1}> ()\n"
      "  r = Reshape(x, shape)\n"
      "  y = Transpose <perm = [0, 2, 1, 3]> (r)\n"
      "  flat = Reshape(x, minus1)\n"
      "  sh = Shape(x)\n"
      "  b = Gather <axis = 0> (sh, zero)\n"
      "  s = Gather <axis = 0> (sh, one)\n"
      "  bu = Unsqueeze(b, zero1)\n"
      "  su = Unsqueeze(s, zero1)\n"
      "  target = Concat <axis = 0> (bu, su, c64)\n"
      "  back = Reshape(r, target)\n"
      "  tail = Shape <start = 1> (x)\n"
      "  merged = Reshape(x, merge)\n"
      "  sq = Squeeze(bu, zero1)\n"
      "  n = Size(x)\n"
      "}");
  if (!m) return;
  CHECK_TYPE(m, "r", "float32[B,S,4,16]");
  CHECK_TYPE(m, "sh", "int64[3]");
  CHECK_TYPE(m, "b", "int64[]");
  CHECK_TYPE(m, "bu", "int64[1]");
  CHECK_TYPE(m, "target", "int64[3]");
  CHECK_TYPE(m, "back", "float32[B,S,64]");
  CHECK_TYPE(m, "tail", "int64[2]");
  CHECK_TYPE(m, "sq", "int64[]");
  CHECK_TYPE(m, "merged", "float32[?,64]");
  CHECK_TYPE(m, "flat", "float32[?]");
  CHECK_TYPE(m, "n", "int64[]");
  ol_model_destroy(m);

  /* initializer shapes; -1 resolved from concrete dims, a symbolic one by cancellation */
  m = infer_text(HEADER
                 "g (float[6,4] x, float[N,2,3] z) => (float[3,8] y) <int64[2] s = {3, -1}, int64[2] f = {-1, 3},"
                 " int64[1] all = {-1}> {\n"
                 "  y = Reshape(x, s)\n"
                 "  w = Reshape(z, f)\n"
                 "  v = Reshape(x, all)\n"
                 "  u = Flatten <axis = 1> (z)\n"
                 "}");
  if (m) {
    CHECK_TYPE(m, "w", "float32[?,3]");
    CHECK_TYPE(m, "v", "float32[24]");
    CHECK_TYPE(m, "u", "float32[N,6]");
  }
  ol_model_destroy(m);
  m = infer_text(HEADER "g (float[N,6] x) => (float[N,2,3] y) <int64[3] s = {-1, 2, 3}> { y = Reshape(x, s)\n z = Identity(y) }");
  if (m) CHECK_TYPE(m, "z", "float32[N,2,3]");
  ol_model_destroy(m);

  /* a wrong element count names the node */
  ol_model *src = NULL, *out = NULL;
  CHECK_OK(ol_model_parse_text(HEADER "g (float[6,4] x) => (float[5,5] y) <int64[2] s = {5, 5}> { [rs] y = Reshape(x, s) }", &src));
  if (src) {
    CHECK_STATUS(ol_model_infer_shapes(src, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'rs'") && strstr(ol_last_error(), "24"));
  }
  ol_model_destroy(src);
}

static void concat_gather_unsqueeze(void) {
  ol_model *m = infer_text(
      "<ir_version: 10, opset_import: [\"\" : 11]>\n"
      "g (float[B,2,P,8] past, float[B,2,S,8] cur, float[V,8] emb, int64[B,S] ids) => (float[B,2,?,8] y)"
      " <int64[4] shp = {3, 1, 1, 1}> {\n"
      "  y = Concat <axis = 2> (past, cur)\n"
      "  both = Concat <axis = 1> (past, past)\n"
      "  e = Gather(emb, ids)\n"
      "  u = Unsqueeze <axes = [0, -1]> (ids)\n"
      "  q = Squeeze <axes = [0]> (u)\n"
      "  ex = Expand(cur, shp)\n"
      "  two = Concat <axis = 0> (emb, emb)\n"
      "}");
  if (!m) return;
  CHECK_TYPE(m, "both", "float32[B,4,P,8]");
  CHECK_TYPE(m, "e", "float32[B,S,8]");
  CHECK_TYPE(m, "u", "int64[1,B,S,1]");
  CHECK_TYPE(m, "q", "int64[B,S,1]");
  CHECK_TYPE(m, "ex", "float32[3,2,S,8]");
  CHECK_TYPE(m, "two", "float32[?,8]");
  ol_model_destroy(m);
}

static void slice_split_pad_and_friends(void) {
  ol_model *m = infer_text(
      HEADER
      "g (float[B,S,12] x, int64[B,S] ids) => (float[B,S,12] y)"
      " <int64[1] s1 = {1}, int64[1] big = {9223372036854775807}, int64[1] z = {0}, int64[1] four = {4},"
      " int64[1] m1 = {-1}, int64[2] halves = {6, 6}, int64[3] reps = {1, 2, 1}, int64[6] pads = {0, 0, 1, 0, 0, 2},"
      " int64[1] k3 = {3}> {\n"
      "  y = Identity(x)\n"
      "  sh = Shape(x)\n"
      "  tail = Slice(sh, s1, big)\n"
      "  flat = Reshape(x, cat)\n"
      "  cat = Concat <axis = 0> (m1, tail)\n"
      "  head = Slice(x, z, four, m1)\n"
      "  all = Slice(x, z, big, z)\n"
      "  a, b = Split <axis = -1> (x, halves)\n"
      "  c, d, e = Split <axis = 2, num_outputs = 3> (x)\n"
      "  t = Tile(x, reps)\n"
      "  p = Pad(x, pads)\n"
      "  cp = CenterCropPad <axes = [-1]> (x, four)\n"
      "  tv, ti = TopK(x, k3)\n"
      "  oh = OneHot(ids, k3, two)\n"
      "  nz = NonZero(ids)\n"
      "}"
      "");
  if (m) {
    CHECK_TYPE(m, "tail", "int64[2]");
    CHECK_TYPE(m, "cat", "int64[3]");
    CHECK_TYPE(m, "flat", "float32[B,S,12]"); /* -1 resolves to B by cancellation */
    CHECK_TYPE(m, "head", "float32[B,S,4]");
    CHECK_TYPE(m, "all", "float32[B,S,12]");
    CHECK_TYPE(m, "a", "float32[B,S,6]");
    CHECK_TYPE(m, "e", "float32[B,S,4]");
    CHECK_TYPE(m, "t", "float32[B,?,12]");
    CHECK_TYPE(m, "p", "float32[B,S,15]");
    CHECK_TYPE(m, "cp", "float32[B,S,4]");
    CHECK_TYPE(m, "tv", "float32[B,S,3]");
    CHECK_TYPE(m, "ti", "int64[B,S,3]");
    CHECK_TYPE(m, "nz", "int64[2,?]");
  }
  ol_model_destroy(m);
  m = infer_text(HEADER
                 "g (float[N,3,32,32] x, float[8,3,3,3] w, uint8[4] q, float s, uint8 zp) => (float[N,8,16,16] y) {\n"
                 "  y = Conv <strides = [2, 2], pads = [1, 1, 1, 1]> (x, w)\n"
                 "  same = Conv <auto_pad = \"SAME_UPPER\"> (x, w)\n"
                 "  mp = MaxPool <kernel_shape = [2, 2], strides = [2, 2]> (x)\n"
                 "  gp = GlobalAveragePool(x)\n"
                 "  bn = InstanceNormalization(x, s, s)\n"
                 "  dq = DequantizeLinear(q, s, zp)\n"
                 "  ql = QuantizeLinear(dq, s, zp)\n"
                 "}");
  if (m) {
    CHECK_TYPE(m, "same", "float32[N,8,32,32]");
    CHECK_TYPE(m, "mp", "float32[N,3,16,16]");
    CHECK_TYPE(m, "gp", "float32[N,3,1,1]");
    CHECK_TYPE(m, "bn", "float32[N,3,32,32]");
    CHECK_TYPE(m, "dq", "float32[4]");
    CHECK_TYPE(m, "ql", "uint8[4]");
  }
  ol_model_destroy(m);
  m = infer_text("<ir_version: 10, opset_import: [\"\" : 23, \"com.microsoft\" : 1]>\n"
                 "g (float[B,8,S,16] q, float[B,2,S,16] k, float[B,2,S,16] v, float[B,2,P,16] pk, float[B,2,P,16] pv,"
                 " float[B,S,64] x, uint8[32,2,32] wq, float[64] gamma) => (float[B,8,S,16] y) {\n"
                 "  y, presk, presv = Attention(q, k, v, , pk, pv)\n"
                 "  gqa, gk, gv = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 1> (x)\n"
                 "  nb = com.microsoft.MatMulNBits <K = 64, N = 32, bits = 4, block_size = 32> (x, wq)\n"
                 "  sn = com.microsoft.SkipSimplifiedLayerNormalization(x, x, gamma)\n"
                 "}");
  if (m) {
    CHECK_TYPE(m, "presk", "float32[B,2,?,16]");
    CHECK_TYPE(m, "gqa", "float32[B,S,32]");
    CHECK_TYPE(m, "gk", "float32[B,1,?,16]");
    CHECK_TYPE(m, "nb", "float32[B,S,32]");
    CHECK_TYPE(m, "sn", "float32[B,S,64]");
  }
  ol_model_destroy(m);
}

static void resize_recurrent_losses(void) {
  ol_model *m = infer_text(
      HEADER
      "g (float[N,3,8,8] x, float[T,B,4] seq, float[B,5] scores, int64[B] labels, float[1,2,3,3] w)"
      " => (float[N,3,16,16] y) <float[4] scales = {1.0, 1.0, 2.0, 2.0}> {\n"
      "  y = Resize <mode = \"nearest\"> (x, , scales)\n"
      "  ys, yh, yc = LSTM <hidden_size = 6, direction = \"bidirectional\"> (seq, wl, rl)\n"
      "  loss = SoftmaxCrossEntropyLoss(scores, labels)\n"
      "  each = NegativeLogLikelihoodLoss <reduction = \"none\"> (scores, labels)\n"
      "  d2s = DepthToSpace <blocksize = 2> (big)\n"
      "  big = Concat <axis = 1> (x, x, x, x)\n"
      "  ct = ConvTranspose <strides = [2, 2]> (wx, w)\n"
      "  wx = Identity(w)\n"
      "}");
  if (!m) return;
  CHECK_TYPE(m, "ys", "float32[T,2,B,6]");
  CHECK_TYPE(m, "yc", "float32[2,B,6]");
  CHECK_TYPE(m, "loss", "float32[]");
  CHECK_TYPE(m, "each", "float32[B]");
  CHECK_TYPE(m, "big", "float32[N,12,8,8]");
  CHECK_TYPE(m, "d2s", "float32[N,3,16,16]");
  CHECK_TYPE(m, "ct", "float32[1,2,7,7]");
  ol_model_destroy(m);
}

/* Extreme values in shape data and attributes: no overflow, no negative dims. */
static void hostile_values(void) {
  ol_model *m = infer_text(
      HEADER
      "g (float[4,5] x, int64[3] ids) => (float[4,5] y)"
      " <int64[2] huge = {9223372036854775807, 9223372036854775807}, int64 lo = {-9223372036854775808},"
      " int64 hi = {9223372036854775807}, int64 one = {1}, int64 mone = {-1}, int64[1] minstep = {-9223372036854775808},"
      " int64[1] z = {0}, int64[1] e = {3}, int64[2] neg = {-3, 2}, int64 depth = {-5}, float[2] vals = {0.0, 1.0},"
      " int64[4] wide = {4611686018427387904, 0, 4611686018427387904, 1}> {\n"
      "  y = Identity(x)\n"
      "  t = Tile(x, huge)\n"
      "  r = Range(lo, hi, one)\n"
      "  r2 = Range(hi, lo, mone)\n"
      "  s = Slice(x, e, z, z, minstep)\n"
      "  sq = Mul(huge, huge)\n"
      "  dv = Div(lo, mone)\n"
      "  c = ConstantOfShape(neg)\n"
      "  oh = OneHot(ids, depth, vals)\n"
      "  p = Pad(x, wide)\n"
      "  w = Reshape(x, sq)\n"
      "}");
  if (!m) return;
  CHECK_TYPE(m, "t", "float32[?,?]");
  CHECK_TYPE(m, "r", "int64[?]");
  CHECK_TYPE(m, "r2", "int64[?]");
  CHECK_TYPE(m, "s", "float32[?,5]");
  CHECK_TYPE(m, "sq", "int64[2]");
  CHECK_TYPE(m, "c", "float32[?,2]");
  CHECK_TYPE(m, "oh", "float32[3,?]");
  CHECK_TYPE(m, "p", "float32[?,6]");
  CHECK_TYPE(m, "w", "float32[?,?]");
  ol_model_destroy(m);
}

/* ------------------------------------------------------------ declarations */

static void merge_and_contradiction(void) {
  /* a declaration fills what inference cannot know and refines a symbolic dim */
  ol_model *m = infer_text(HEADER
                           "g (float[N,4] x, int64[2] s) => (float[N,4] y) {\n"
                           "  r = Reshape(x, s)\n"
                           "  y = Relu(x)\n"
                           "  z = Neg(r)\n"
                           "}");
  if (m) {
    CHECK_TYPE(m, "r", "float32[?,?]"); /* the rank from the shape's length */
    CHECK_TYPE(m, "z", "float32[?,?]");
  }
  ol_model_destroy(m);
  ol_model *src = NULL, *out = NULL;
  const char *declared =
      "<ir_version: 10, opset_import: [\"\" : 18]>\n"
      "g (float[N,4] x, int64[2] s) => (float[N,4] y) {\n"
      "  r = Reshape(x, s)\n"
      "  y = Relu(x)\n"
      "  z = Neg(r)\n"
      "}";
  CHECK_OK(ol_model_parse_text(declared, &src));
  if (src) {
    /* declare r as float[N,4] through value_info on the proto, then re-load */
    Onnx__GraphProto *g = src->data->proto->graph;
    Onnx__ValueInfoProto vi = ONNX__VALUE_INFO_PROTO__INIT, *list[1] = {&vi};
    vi.name = "r";
    vi.type = g->input[0]->type;
    g->n_value_info = 1;
    g->value_info = list;
    void *bytes = NULL;
    size_t size = 0;
    CHECK_OK(ol_model_serialize(src, &bytes, &size));
    g->n_value_info = 0;
    g->value_info = NULL;
    ol_model *with_vi = NULL;
    if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &with_vi));
    ol_free(bytes);
    if (with_vi) {
      CHECK_OK(ol_model_infer_shapes(with_vi, &out));
      if (out) {
        CHECK_TYPE(out, "r", "float32[N,4]");
        CHECK_TYPE(out, "z", "float32[N,4]"); /* the declaration flows downstream */
        CHECK(out->data->proto->graph->n_value_info == 2);
      }
      ol_model_destroy(out);
      out = NULL;
      ol_model_destroy(with_vi);
    }
  }
  ol_model_destroy(src);

  /* an output declared with another element type / dim: error naming value and node */
  CHECK_OK(ol_model_parse_text(HEADER "g (float[2,3] x) => (int64[2,3] y) { [relu] y = Relu(x) }", &src));
  if (src) {
    CHECK_STATUS(ol_model_infer_shapes(src, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'y'") && strstr(ol_last_error(), "'relu'") &&
          strstr(ol_last_error(), "element type"));
  }
  ol_model_destroy(src);
  CHECK_OK(ol_model_parse_text(HEADER "g (float[2,3] x) => (float[2,4] y) { [relu] y = Relu(x) }", &src));
  if (src) {
    CHECK_STATUS(ol_model_infer_shapes(src, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'y'") && strstr(ol_last_error(), "float32[2,3]") &&
          strstr(ol_last_error(), "float32[2,4]") && strstr(ol_last_error(), "dimension 1"));
  }
  ol_model_destroy(src);
  CHECK_OK(ol_model_parse_text(HEADER "g (float[2,3] x) => (float[6] y) { y = Relu(x) }", &src));
  if (src) {
    CHECK_STATUS(ol_model_infer_shapes(src, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "unnamed node #0 (Relu)") && strstr(ol_last_error(), "rank"));
  }
  ol_model_destroy(src);
  /* NULL arguments */
  CHECK_STATUS(ol_model_infer_shapes(NULL, &out), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_model_infer_shapes(src, NULL), OL_INVALID_ARGUMENT);
}

static void unknown_ops_and_subgraphs(void) {
  ol_model *m = infer_text(
      HEADER
      "g (float[N,4] x, bool c) => (float[N,4] y) {\n"
      "  t = Einsum <equation = \"ij,j->ij\"> (x, k)\n"
      "  u = Relu(t)\n"
      "  y = If (c) <then_branch = a () => (float[N,4] ya) { ia = Neg(x)\n ya = Relu(ia) },\n"
      "              else_branch = b () => (float[N,4] yb) { yb = Abs(x) }>\n"
      "  z = Identity(y)\n"
      "}");
  if (!m) return;
  CHECK_TYPE(m, "t", ""); /* unknown operator: not inferred, not an error */
  CHECK_TYPE(m, "u", "");
  CHECK_TYPE(m, "z", "float32[N,4]");
  const ol_graph *then_g = m->data->graph->nodes[2].attrs[0].graph;
  char buf[128];
  if (then_g) CHECK(strcmp(recorded_type(then_g, "ia", buf, sizeof buf), "float32[N,4]") == 0);
  ol_model_destroy(m);
  /* a Loop body: its intermediates are inferred from its declared inputs and the outer scope;
   * the Loop's own outputs are not */
  m = infer_text(HEADER
                 "g (float[N] x, int64 n) => (float[N] y) {\n"
                 "  y = Loop (n, , x) <body = body (int64 i, bool c, float[N] v) => (bool c2, float[N] w) {\n"
                 "    c2 = Identity(c)\n"
                 "    d = Add(v, x)\n"
                 "    w = Neg(d)\n"
                 "  }>\n"
                 "  z = Relu(y)\n"
                 "}");
  if (m) {
    const ol_graph *body = m->data->graph->nodes[0].attrs[0].graph;
    if (body) {
      CHECK(strcmp(recorded_type(body, "d", buf, sizeof buf), "float32[N]") == 0);
      CHECK(strcmp(recorded_type(body, "c2", buf, sizeof buf), "") == 0); /* a body output: declared, not value_info */
    }
    CHECK_TYPE(m, "z", "float32[N]"); /* from y's declaration */
  }
  ol_model_destroy(m);
  /* Loop outputs: the carried value merged with its initial type, scan outputs stacked */
  m = infer_text(HEADER
                 "g (float[N] x, int64 n) => (float[N] y) {\n"
                 "  carried, stacked = Loop (n, , x) <body = body (i, c, v) => (c2, w, s) {\n"
                 "    c2 = Identity(c)\n"
                 "    w = Neg(v)\n"
                 "    s = Cast <to = 7> (i)\n"
                 "  }>\n"
                 "  y = Relu(carried)\n"
                 "  st = Identity(stacked)\n"
                 "}");
  if (m) {
    CHECK_TYPE(m, "carried", "float32"); /* the body only knows the element type of v */
    CHECK_TYPE(m, "stacked", "int64[?]");
  }
  ol_model_destroy(m);
  m = infer_text(HEADER
                 "g (float[4] init, float[T,4] xs) => (float[4] y) {\n"
                 "  y, ys = Scan (init, xs) <num_scan_inputs = 1, body = body (float[4] s, x) => (s2, o) {\n"
                 "    s2 = Add(s, x)\n"
                 "    o = Mul(s, x)\n"
                 "  }>\n"
                 "  z = Identity(ys)\n"
                 "}");
  if (m) {
    CHECK_TYPE(m, "z", "float32[T,4]");
    const ol_graph *body = m->data->graph->nodes[0].attrs[1].graph;
    if (!body) body = m->data->graph->nodes[0].attrs[0].graph;
    CHECK(body && body->num_nodes == 2);
  }
  ol_model_destroy(m);
}

/* ------------------------------------------------------------ ai.rt */

/* A loaded model from text with a Quantize `type` attribute, the model's
 * struct_types and encoded initializers attached to the proto. */
static ol_model *build_rt(const char *text, Onnx__TypeProto *quantize_type, Onnx__StructTypeProto **types,
                          size_t n_types, Onnx__EncodedValueProto **encoded, size_t n_encoded) {
  ol_model *m = NULL, *out = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return NULL;
  Onnx__ModelProto *mp = m->data->proto;
  Onnx__GraphProto *g = mp->graph;
  Onnx__AttributeProto attr = ONNX__ATTRIBUTE_PROTO__INIT, *attrs[1] = {&attr};
  attr.name = "type";
  attr.has_type = 1;
  attr.type = ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TYPE_PROTO;
  attr.tp = quantize_type;
  Onnx__NodeProto *edited[8] = {0};
  for (size_t i = 0; i < g->n_node && i < 8; i++)
    if (strcmp(g->node[i]->op_type, "Quantize") == 0 && g->node[i]->n_attribute == 0 && quantize_type) {
      edited[i] = g->node[i];
      g->node[i]->attribute = attrs;
      g->node[i]->n_attribute = 1;
    }
  mp->struct_types = types;
  mp->n_struct_types = n_types;
  g->encoded_initializer = encoded;
  g->n_encoded_initializer = n_encoded;
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &bytes, &size));
  for (size_t i = 0; i < 8; i++)
    if (edited[i]) {
      edited[i]->attribute = NULL;
      edited[i]->n_attribute = 0;
    }
  mp->struct_types = NULL;
  mp->n_struct_types = 0;
  g->encoded_initializer = NULL;
  g->n_encoded_initializer = 0;
  ol_model_destroy(m);
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &out));
  ol_free(bytes);
  return out;
}

static Onnx__StructTypeProto *int4_type(uint64_t count, uint64_t block) {
  ol_quant_plan *plan = NULL;
  Onnx__StructTypeProto *st = NULL;
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT4, count, block, &plan));
  if (plan) CHECK_OK(ol_quant_make_type_proto(plan, &st));
  ol_quant_plan_destroy(plan);
  return st;
}

/* The recorded value_info TypeProto of name (root graph), or NULL. */
static const Onnx__TypeProto *recorded(const ol_model *m, const char *name) {
  const Onnx__GraphProto *g = m->data->proto->graph;
  for (size_t i = 0; i < g->n_value_info; i++)
    if (strcmp(g->value_info[i]->name, name) == 0) return g->value_info[i]->type;
  return NULL;
}

static const char *QDQ =
    "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
    "quantization (float[8] X) => (float[8] Y) {\n"
    "  Q = ai.rt.Quantize(X)\n"
    "  Y = ai.rt.Dequantize <dtype = 1> (Q)\n"
    "  Z = ai.rt.Dequantize <dtype = 10> (Q)\n"
    "}";

/* Seed 003's INT4 calibration graph: Quantize records the inline physical
 * type, Dequantize only its requested dtype (the input is not an initializer). */
static void int4_calibration_graph(void) {
  Onnx__StructTypeProto *st = int4_type(8, 4);
  if (!st) return;
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  tp.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  tp.struct_type = st;
  ol_model *m = build_rt(QDQ, &tp, NULL, 0, NULL, 0);
  ol_model *out = NULL;
  if (m) CHECK_OK(ol_model_infer_shapes(m, &out));
  if (out) {
    const Onnx__TypeProto *q = recorded(out, "Q");
    CHECK(q && q->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE);
    if (q && q->struct_type) {
      CHECK(q->struct_type->name && strcmp(q->struct_type->name, st->name) == 0);
      /* the whole descriptor, byte for byte */
      size_t a = onnx__struct_type_proto__get_packed_size(q->struct_type);
      size_t b = onnx__struct_type_proto__get_packed_size(st);
      CHECK(a == b);
    }
    CHECK_TYPE(out, "Z", "float16");
    const Onnx__TypeProto *z = recorded(out, "Z");
    CHECK(z && z->tensor_type && z->tensor_type->shape == NULL);
    CHECK_OK(ol_model_check(out));
    /* the result still runs */
    ol_session *sess = NULL;
    CHECK_OK(ol_session_create(out, NULL, &sess));
    ol_session_destroy(sess);
  }
  ol_model_destroy(out);
  ol_model_destroy(m);
  ol_quant_type_free(st);
}

/* Quantize with a type_ref keeps the reference; an undeclared one is an error. */
static void quantize_type_ref(void) {
  Onnx__StructTypeProto *st = int4_type(8, 4);
  if (!st) return;
  st->has_type_id = 1;
  st->type_id = 7;
  Onnx__StructTypeProto ref = ONNX__STRUCT_TYPE_PROTO__INIT;
  ref.kind_case = ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF;
  ref.type_ref = 7;
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  tp.value_case = ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE;
  tp.struct_type = &ref;
  Onnx__StructTypeProto *catalogue[1] = {st};
  const char *text =
      "<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
      "quantization (float[8] X) => (float[8] Y) {\n"
      "  Q = ai.rt.Quantize(X)\n"
      "  Q_copy = Identity(Q)\n"
      "  Y = ai.rt.Dequantize <dtype = 1> (Q_copy)\n"
      "}";
  ol_model *m = build_rt(text, &tp, catalogue, 1, NULL, 0), *out = NULL;
  if (m) CHECK_OK(ol_model_infer_shapes(m, &out));
  if (out) {
    const Onnx__TypeProto *q = recorded(out, "Q"), *qc = recorded(out, "Q_copy");
    CHECK(q && q->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE && q->struct_type &&
          q->struct_type->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF && q->struct_type->type_ref == 7);
    CHECK(qc && qc->struct_type && qc->struct_type->type_ref == 7); /* Identity forwards it */
    CHECK(out->data->proto->n_struct_types == 1);
  }
  ol_model_destroy(out);
  out = NULL;
  ol_model_destroy(m);
  ref.type_ref = 99;
  m = build_rt(text, &tp, catalogue, 1, NULL, 0);
  if (m) {
    CHECK_STATUS(ol_model_infer_shapes(m, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "type_ref 99") && strstr(ol_last_error(), "Quantize"));
  }
  ol_model_destroy(m);
  /* a tensor fed to Dequantize is an error; a declared Quantize output must be structured */
  m = build_rt("<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
               "g (float[8] X) => (float[8] Y) { [deq] Y = ai.rt.Dequantize <dtype = 1> (X) }",
               NULL, NULL, 0, NULL, 0);
  if (m) {
    CHECK_STATUS(ol_model_infer_shapes(m, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'deq'") && strstr(ol_last_error(), "encoded"));
  }
  ol_model_destroy(m);
  ref.type_ref = 7;
  m = build_rt("<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
               "g (float[8] X) => (float[8] Q) { [quant] Q = ai.rt.Quantize(X) }",
               &tp, catalogue, 1, NULL, 0);
  if (m) {
    CHECK_STATUS(ol_model_infer_shapes(m, &out), OL_INVALID_MODEL);
    CHECK(strstr(ol_last_error(), "'Q'") && strstr(ol_last_error(), "'quant'") &&
          strstr(ol_last_error(), "kind of value"));
  }
  ol_model_destroy(m);
  st->has_type_id = 0;
  st->type_id = 0;
  ol_quant_type_free(st);
}

/* Dequantize of a concrete encoded initializer gets its logical shape. */
static void dequantize_encoded_initializer(void) {
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  const float w[6] = {1, 2, 3, 4, 5, 6};
  const int64_t dims[2] = {2, 3};
  CHECK_OK(ol_quant_make_plan(OL_QUANT_INT8, 6, 3, &plan));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, "W", &ev));
  ol_quant_plan_destroy(plan);
  if (!ev) return;
  Onnx__EncodedValueProto *list[1] = {ev};
  ol_model *m = build_rt("<ir_version: 10, opset_import: [\"\" : 21, \"ai.rt\" : 1]>\n"
                         "g (float[N,2] X) => (float[N,3] Y) {\n"
                         "  Wf = ai.rt.Dequantize <dtype = 1> (W)\n"
                         "  Wd = ai.rt.Dequantize <dtype = 11> (W)\n"
                         "  Wi = Identity(W)\n"
                         "  Wk = ai.rt.Dequantize <dtype = 1> (Wi)\n"
                         "  Y = MatMul(X, Wf)\n"
                         "  Z = Relu(Y)\n"
                         "}",
                         NULL, NULL, 0, list, 1);
  ol_model *out = NULL;
  if (m) CHECK_OK(ol_model_infer_shapes(m, &out));
  if (out) {
    CHECK_TYPE(out, "Wf", "float32[2,3]");
    CHECK_TYPE(out, "Wd", "float64[2,3]");
    CHECK_TYPE(out, "Wk", "float32[2,3]");
    CHECK_TYPE(out, "Z", "float32[N,3]");
    const Onnx__TypeProto *wi = recorded(out, "Wi");
    CHECK(wi && wi->value_case == ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE && wi->struct_type &&
          strcmp(wi->struct_type->name, ev->struct_type->name) == 0);
    CHECK_OK(ol_model_check(out));
  }
  ol_model_destroy(out);
  ol_model_destroy(m);
  ol_quant_proto_free(ev);
}

/* ------------------------------------------------------------ the shipped decoder */

static void fortunes_model(void) {
  ol_model *m = NULL, *out = NULL;
  CHECK_OK(ol_model_load_file("models/fortunes-byte-0.8M.onnx", &m));
  if (!m) return;
  CHECK_OK(ol_model_infer_shapes(m, &out));
  if (out) {
    CHECK_TYPE(out, "/Gather_2_output_0", "float32[batch_size,sequence_length,128]");
    CHECK_TYPE(out, "/Reshape_output_0", "float32[batch_size,sequence_length,4,32]");
    CHECK(out->data->proto->graph->n_value_info > 500);
    CHECK_OK(ol_model_check(out));
  }
  ol_model_destroy(out);
  out = NULL;
  /* without the declaration of logits, inference finds it, symbolic dims carried */
  Onnx__GraphProto *g = m->data->proto->graph;
  Onnx__TypeProto *declared = g->output[0]->type;
  CHECK(strcmp(g->output[0]->name, "logits") == 0);
  g->output[0]->type = NULL;
  void *bytes = NULL;
  size_t size = 0;
  CHECK_OK(ol_model_serialize(m, &bytes, &size));
  g->output[0]->type = declared;
  ol_model *bare = NULL;
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &bare));
  ol_free(bytes);
  if (bare) CHECK_OK(ol_model_infer_shapes(bare, &out));
  if (out) {
    ol_infer_type t;
    char text[128];
    ol_infer_from_declared(&out->data->graph->outputs[0], &t);
    ol_infer_type_text(&t, text, sizeof text);
    CHECK(strcmp(text, "float32[batch_size,sequence_length,256]") == 0);
    ol_infer_from_declared(&out->data->graph->outputs[1], &t);
    ol_infer_type_text(&t, text, sizeof text);
    CHECK(strcmp(text, "float32[batch_size,2,total_sequence_length,32]") == 0); /* declared, kept */
  }
  ol_model_destroy(out);
  ol_model_destroy(bare);
  ol_model_destroy(m);
}

/* ------------------------------------------------------------ sessions */

static ol_status create_session(const char *text) {
  ol_model *m = NULL;
  ol_session *sess = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  ol_status s = m ? ol_session_create(m, NULL, &sess) : OL_INVALID_MODEL;
  ol_session_destroy(sess);
  ol_model_destroy(m);
  return s;
}

/* An element type the registration does not list fails at session creation,
 * also when inference finds the type several nodes away from the inputs. */
static void unsupported_element_type_at_creation(void) {
  CHECK_STATUS(create_session(HEADER "g (int32[4] x) => (int32[4] y) { [root] y = Sqrt(x) }"), OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "Sqrt") && strstr(ol_last_error(), "'root'") && strstr(ol_last_error(), "int32") &&
        strstr(ol_last_error(), "'x'"));
  CHECK_STATUS(create_session(HEADER "g (float[4] x) => (int64[4] y) {\n"
                                     "  i = Cast <to = 7> (x)\n"
                                     "  n = Neg(i)\n"
                                     "  [root] y = Sqrt(n)\n"
                                     "}"),
               OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "'root'") && strstr(ol_last_error(), "int64") && strstr(ol_last_error(), "'n'"));
  /* inside an If branch */
  CHECK_STATUS(create_session(HEADER "g (int32[4] x, bool c) => (int32[4] y) {\n"
                                     "  y = If (c) <then_branch = a () => (int32[4] ya) { [inner] ya = Exp(x) },\n"
                                     "              else_branch = b () => (int32[4] yb) { yb = Identity(x) }>\n"
                                     "}"),
               OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "'inner'") != NULL);
  /* listed types, unknown types and non-plain lists are accepted */
  CHECK_OK(create_session(HEADER "g (int8[4] x) => (int8[4] y) { y = Add(x, x) }"));
  CHECK_OK(create_session(HEADER "g (x) => (y) { y = Sqrt(x) }"));
  CHECK_OK(create_session(HEADER "g (int32[4] x, int32[4] e) => (int32[4] y) { y = Pow(x, e) }"));
  /* an unregistered operator keeps its own message */
  CHECK_STATUS(create_session(HEADER "g (float[4] x) => (float[4] y) { y = NoSuchOp(x) }"), OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "NoSuchOp") && strstr(ol_last_error(), "is not supported"));
}

OL_TEST_MAIN(TEST(broadcast_and_symbolic), TEST(softmax_norm_reduce), TEST(matmul_batch),
             TEST(reshape_with_zero_and_minus_one), TEST(concat_gather_unsqueeze), TEST(slice_split_pad_and_friends),
             TEST(hostile_values), TEST(resize_recurrent_losses),
             TEST(merge_and_contradiction), TEST(unknown_ops_and_subgraphs), TEST(int4_calibration_graph),
             TEST(quantize_type_ref), TEST(dequantize_encoded_initializer), TEST(fortunes_model),
             TEST(unsupported_element_type_at_creation))
