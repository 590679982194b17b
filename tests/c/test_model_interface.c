/* ol_model_input_count...: a model's interface without a session matches
 * the session's (graph inputs with an initializer are not inputs). */
#include <string.h>

#include "harness.h"
#include "onnxlight.h"

static const char *TEXT =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (float[B,4] x, float[4] bias, int64[2] shape) => (float[B,4] y, float[B,4] z)"
    " <float[4] bias = {1, 2, 3, 4}> {\n"
    "  y = Add(x, bias)\n"
    "  z = Relu(y)\n"
    "}\n";

static int same_info(const ol_value_info *a, const ol_value_info *b) {
  if (a->kind != b->kind || a->dtype != b->dtype || a->rank != b->rank) return 0;
  for (int d = 0; d < a->rank; d++) {
    if (a->dims[d] != b->dims[d]) return 0;
    const char *pa = a->dim_params ? a->dim_params[d] : NULL, *pb = b->dim_params ? b->dim_params[d] : NULL;
    if ((pa == NULL) != (pb == NULL) || (pa && strcmp(pa, pb) != 0)) return 0;
  }
  return 1;
}

static void interface_matches_the_session(void) {
  ol_model *m = NULL;
  ol_session *s = NULL;
  CHECK_OK(ol_model_parse_text(TEXT, &m));
  if (m) CHECK_OK(ol_session_create(m, NULL, &s));
  if (!s) goto out;
  CHECK(ol_model_input_count(m) == 2 && ol_model_input_count(m) == ol_session_input_count(s));
  CHECK(ol_model_output_count(m) == 2 && ol_model_output_count(m) == ol_session_output_count(s));
  CHECK(strcmp(ol_model_input_name(m, 0), "x") == 0 && strcmp(ol_model_input_name(m, 1), "shape") == 0);
  CHECK(strcmp(ol_model_output_name(m, 1), "z") == 0);
  for (size_t i = 0; i < 2; i++) {
    ol_value_info a, b;
    CHECK_OK(ol_model_input_info(m, i, &a));
    CHECK_OK(ol_session_input_info(s, i, &b));
    CHECK(same_info(&a, &b));
    CHECK_OK(ol_model_output_info(m, i, &a));
    CHECK_OK(ol_session_output_info(s, i, &b));
    CHECK(same_info(&a, &b));
  }
  ol_value_info info;
  CHECK_OK(ol_model_input_info(m, 0, &info));
  CHECK(info.dtype == OL_DTYPE_FLOAT && info.rank == 2 && info.dims[1] == 4 && strcmp(info.dim_params[0], "B") == 0);
  CHECK(ol_model_input_name(m, 2) == NULL && ol_model_output_name(m, 2) == NULL);
  CHECK_STATUS(ol_model_input_info(m, 2, &info), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_model_output_info(m, 2, &info), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_model_input_info(m, 0, NULL), OL_INVALID_ARGUMENT);
out:
  ol_session_destroy(s);
  ol_model_destroy(m);
}

static void null_model(void) {
  ol_value_info info;
  CHECK(ol_model_input_count(NULL) == 0 && ol_model_output_count(NULL) == 0);
  CHECK(ol_model_input_name(NULL, 0) == NULL && ol_model_output_name(NULL, 0) == NULL);
  CHECK_STATUS(ol_model_input_info(NULL, 0, &info), OL_INVALID_ARGUMENT);
}

OL_TEST_MAIN(TEST(interface_matches_the_session), TEST(null_model))
