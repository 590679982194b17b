/* ol_model_to_paged on fused attention nodes (GroupQueryAttention,
 * Attention 23, MultiHeadAttention): every refusal is triggered and names
 * the node and what it cannot express; supported attributes convert
 * (local_window_size becomes left_window_size, the graph has one
 * PagedAttention per layer). Generation equality is tested from JS
 * (tests/js/paged-convert.test.mjs). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "onnx_light.pb-c.h"
#include "onnxlight.h"

#define HEAD "<ir_version: 10, opset_import: [\"\" : 23, \"com.microsoft\" : 1]>\n"

/* A GroupQueryAttention graph: attributes attrs, extra inputs after the
 * cos/sin caches (extra, from ", ..."), Q/K/V [1, S, 8] (2 heads of 4). */
static void gqa_model(char *buf, size_t size, const char *attrs, const char *inputs) {
  snprintf(buf, size,
           HEAD "g (float[1,S,8] q, float[1,S,8] k, float[1,S,8] v, float[1,2,P,4] pk, float[1,2,P,4] pv,\n"
                "   int32[1] sl, int32 tl, float[16,2] cs, float[16,2] sn, float[1,1,S,T] bias)\n"
                " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv) {\n"
                "  y, yk, yv = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 2%s> (%s)\n"
                "}",
           attrs, inputs);
}

static const char *const GQA_INPUTS = "q, k, v, pk, pv, sl, tl, cs, sn";

/* The conversion of text fails with OL_NOT_IMPLEMENTED and a message
 * containing each of the wanted pieces. */
static void refused(const char *text, const ol_paged_model_options *o, const char *want1, const char *want2) {
  ol_model *m = NULL, *paged = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return;
  CHECK_STATUS(ol_model_to_paged(m, o, &paged), OL_NOT_IMPLEMENTED);
  CHECK(!paged);
  const char *msg = ol_last_error();
  CHECK(strstr(msg, want1) != NULL);
  CHECK(!want2 || strstr(msg, want2) != NULL);
  if (!strstr(msg, want1) || (want2 && !strstr(msg, want2))) fprintf(stderr, "  message: %s\n", msg);
  ol_model_destroy(m);
}

static void gqa_refusals(void) {
  char text[2048];
  const char *node = "GroupQueryAttention node ''";
  gqa_model(text, sizeof text, ", softcap = 30.0", GQA_INPUTS);
  refused(text, NULL, node, "attribute 'softcap'");
  gqa_model(text, sizeof text, ", smooth_softmax = 1", GQA_INPUTS);
  refused(text, NULL, node, "attribute 'smooth_softmax'");
  gqa_model(text, sizeof text, ", local_window_size = 0", GQA_INPUTS);
  refused(text, NULL, node, "attribute 'local_window_size' = 0");
  ol_paged_model_options o;
  ol_paged_model_options_init(&o);
  o.left_window_size = 3;
  gqa_model(text, sizeof text, ", local_window_size = 8", GQA_INPUTS);
  refused(text, &o, node, "conflicts with leftWindowSize 3");
  gqa_model(text, sizeof text, "", "q, , , pk, pv, sl, tl");
  refused(text, NULL, node, "packed QKV");
  gqa_model(text, sizeof text, "", "q, k, v, pk, pv, sl, tl, cs, sn, , bias");
  refused(text, NULL, node, "input attention_bias");
  gqa_model(text, sizeof text, ", do_rotary = 1", "q, k, v, pk, pv, sl, tl");
  refused(text, NULL, node, "do_rotary needs cos_cache and sin_cache");
  /* the past must be graph inputs, the presents graph outputs */
  refused(HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv, int32[1] sl, int32 tl)\n"
               " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv) {\n"
               "  pk2 = Identity(pk)\n"
               "  y, yk, yv = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 2> (q, q, q, pk2, pv, sl, tl)\n"
               "}",
          NULL, node, "past_key and past_value must both be graph inputs");
  refused(HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv, int32[1] sl, int32 tl) => (float[1,S,8] y) {\n"
               "  y, yk, yv = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 2> (q, q, q, pk, pv, sl, tl)\n"
               "}",
          NULL, node, "present_key and present_value must both be graph outputs");
  /* a scale other than 1 / sqrt(head size) needs the head size */
  refused(HEAD "g (float[1,S,8] q, float[1,2,P,D] pk, float[1,2,P,D] pv, int32[1] sl, int32 tl)\n"
               " => (float[1,S,8] y, float[1,2,T,D] yk, float[1,2,T,D] yv) {\n"
               "  y, yk, yv = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 2, scale = 0.3> (q, q, q, pk, pv, sl, tl)\n"
               "}",
          NULL, node, "attribute 'scale' = 0.3 needs the head size");
  /* another node reading a cache */
  refused(HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv, int32[1] sl, int32 tl)\n"
               " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv, float[1,2,T,4] z) {\n"
               "  y, yk, yv = com.microsoft.GroupQueryAttention <num_heads = 2, kv_num_heads = 2> (q, q, q, pk, pv, sl, tl)\n"
               "  z = Neg(yk)\n"
               "}",
          NULL, "reads the cache 'yk' besides the attention", NULL);
}

static void attention_refusals(void) {
  char text[2048];
  static const char *const cases[][3] = {
      {"<q_num_heads = 2, kv_num_heads = 2, softcap = 5.0>", "q, q, q, , pk, pv", "attribute 'softcap'"},
      {"<q_num_heads = 2, kv_num_heads = 2>", "q, q, q, , pk, pv, lens", "input nonpad_kv_seqlen"},
      {"<q_num_heads = 2>", "q, q, q, , pk, pv", "need attributes 'q_num_heads' and 'kv_num_heads'"},
      {"<q_num_heads = 2, kv_num_heads = 2, is_causal = 2>", "q, q, q, , pk, pv", "attribute 'is_causal' must be 0 or 1"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(text, sizeof text,
             HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv, int64[1] lens)\n"
                  " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv) {\n"
                  "  y, yk, yv = Attention %s (%s)\n"
                  "}",
             cases[i][0], cases[i][1]);
    refused(text, NULL, "Attention node ''", cases[i][2]);
  }
  refused(HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv)\n"
               " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv, float[1,2,S,T] qk) {\n"
               "  y, yk, yv, qk = Attention <q_num_heads = 2, kv_num_heads = 2> (q, q, q, , pk, pv)\n"
               "}",
          NULL, "Attention node ''", "output qk_matmul_output");
}

static void mha_refusals(void) {
  char text[2048];
  static const char *const cases[][3] = {
      {"<num_heads = 2>", "q, q, q, b, , , pk, pv", "input bias"},
      {"<num_heads = 2>", "q, q, q, , , , pk, pv, pl", "input past_sequence_length"},
      {"<num_heads = 2>", "q, q, q, , , , pk, pv, , ci", "input cache_indirection"},
      {"<unidirectional = 1>", "q, q, q, , , , pk, pv", "attribute 'num_heads' must be positive"},
      {"<num_heads = 2>", "q, , , , , , pk, pv", "packed QKV"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    snprintf(text, sizeof text,
             HEAD "g (float[1,S,8] q, float[24] b, float[1,2,P,4] pk, float[1,2,P,4] pv, int32 pl, int32[1,1,4] ci)\n"
                  " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv) {\n"
                  "  y, yk, yv = com.microsoft.MultiHeadAttention %s (%s)\n"
                  "}",
             cases[i][0], cases[i][1]);
    refused(text, NULL, "MultiHeadAttention node ''", cases[i][2]);
  }
}

/* Attribute name of the first node op_type of m's graph (NULL: none). */
static const Onnx__AttributeProto *attribute(const Onnx__ModelProto *m, const char *op_type, const char *name) {
  for (size_t i = 0; m && i < m->graph->n_node; i++) {
    const Onnx__NodeProto *n = m->graph->node[i];
    if (strcmp(n->op_type, op_type) != 0) continue;
    for (size_t a = 0; a < n->n_attribute; a++)
      if (strcmp(n->attribute[a]->name, name) == 0) return n->attribute[a];
  }
  return NULL;
}

/* Converts text; checks the int attribute `name` of the first op node is
 * value (or, for a float, within 1e-6). */
static void converts_to(const char *text, const ol_paged_model_options *o, const char *op, const char *name,
                        double value) {
  ol_model *m = NULL, *paged = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m) return;
  CHECK_OK(ol_model_to_paged(m, o, &paged));
  void *bytes = NULL;
  size_t size = 0;
  if (paged) CHECK_OK(ol_model_serialize(paged, &bytes, &size));
  Onnx__ModelProto *proto = bytes ? onnx__model_proto__unpack(NULL, size, bytes) : NULL;
  const Onnx__AttributeProto *a = attribute(proto, op, name);
  bool ok = a && (a->type == ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT ? fabs(a->f - value) < 1e-6 : a->i == (int64_t)value);
  CHECK(ok);
  if (!ok) fprintf(stderr, "  %s.%s is not %g\n", op, name, value);
  if (proto) onnx__model_proto__free_unpacked(proto, NULL);
  ol_free(bytes);
  ol_model_destroy(paged);
  ol_model_destroy(m);
}

static void supported_attributes(void) {
  char text[2048];
  /* GQA's window of 8 keys: the query and 7 preceding tokens */
  gqa_model(text, sizeof text, ", local_window_size = 8, do_rotary = 1, rotary_interleaved = 1", GQA_INPUTS);
  converts_to(text, NULL, "PagedAttention", "left_window_size", 7);
  converts_to(text, NULL, "RotaryEmbedding", "interleaved", 1);
  /* the same window as the option: accepted */
  ol_paged_model_options o;
  ol_paged_model_options_init(&o);
  o.left_window_size = 7;
  converts_to(text, &o, "PagedAttention", "left_window_size", 7);
  /* non-causal MultiHeadAttention without a mask; a scale folded into Q */
  converts_to(HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv)\n"
                   " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv) {\n"
                   "  y, yk, yv = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.25> (q, q, q, , , , pk, pv)\n"
                   "}",
              NULL, "PagedAttention", "is_causal", 0);
  converts_to(HEAD "g (float[1,S,8] q, float[1,2,P,4] pk, float[1,2,P,4] pv)\n"
                   " => (float[1,S,8] y, float[1,2,T,4] yk, float[1,2,T,4] yv) {\n"
                   "  y, yk, yv = com.microsoft.MultiHeadAttention <num_heads = 2, scale = 0.25> (q, q, q, , , , pk, pv)\n"
                   "}",
              NULL, "Constant", "value_float", 0.5);
}

/* A paged cache initializer of a cache input the conversion would remove. */
static void cache_initializer_of_a_replaced_input(void) {
  char text[2048];
  gqa_model(text, sizeof text, "", GQA_INPUTS);
  ol_model *m = NULL, *with = NULL, *paged = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  ol_value *blocks = NULL, *cache = NULL;
  CHECK_OK(ol_sequence_create(OL_DTYPE_UNDEFINED, NULL, 0, &blocks));
  const char *field = "blocks", *name = "pk";
  CHECK_OK(ol_struct_create(&field, &blocks, 1, &cache));
  if (m && cache) CHECK_OK(ol_model_with_paged_cache_initializers(m, &name, &cache, 1, &with));
  if (with) {
    CHECK_STATUS(ol_model_to_paged(with, NULL, &paged), OL_NOT_IMPLEMENTED);
    CHECK(!paged && strstr(ol_last_error(), "paged cache initializer 'pk' names a cache input"));
  }
  ol_value_release(blocks);
  ol_value_release(cache);
  ol_model_destroy(with);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(gqa_refusals), TEST(cache_initializer_of_a_replaced_input), TEST(attention_refusals), TEST(mha_refusals), TEST(supported_attributes))
