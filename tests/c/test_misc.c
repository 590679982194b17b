/* NonMaxSuppression, Shrink, Det, ReverseSequence, StringNormalizer,
 * TfIdfVectorizer, GridSample, RoiAlign, MaxUnpool: main semantics and
 * error paths, expected values computed by hand. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static ol_value *strings(int rank, const int64_t *dims, const char *const *s) {
  ol_value *v = NULL;
  if (ol_value_new_tensor(NULL, OL_DTYPE_STRING, rank, dims, &v) != OL_OK) return NULL;
  for (int64_t i = 0; i < ol_tcount(&v->tensor); i++) ol_tensor_set_string(v, (size_t)i, s[i], strlen(s[i]));
  return v;
}
static bool str_is(const ol_value *v, int64_t i, const char *want) {
  const char *b;
  size_t n;
  if (!v || ol_tensor_get_string(v, (size_t)i, &b, &n) != OL_OK) return false;
  return n == strlen(want) && memcmp(b, want, n) == 0;
}

static void test_nms(void) {
  int64_t db[3] = {1, 4, 4}, ds[3] = {1, 1, 4};
  float boxes[16] = {0, 0, 1, 1, 0, 0.1f, 1, 1.1f, 0, 10, 1, 11, 1, 1, 0, 0 /* flipped copy of box 0 */};
  float scores[4] = {0.9f, 0.75f, 0.6f, 0.95f};
  int64_t maxo = 3;
  float iou = 0.5f, thr = 0.0f;
  ol_value *in[5] = {tk_f32(3, db, boxes), tk_f32(3, ds, scores), tk_i64(0, NULL, &maxo), tk_f32(0, NULL, &iou),
                     tk_f32(0, NULL, &thr)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("NonMaxSuppression", 11, NULL, 0, in, 5, &out, 1));
  /* box 3 (0.95) suppresses 0 and 1; box 2 is far away */
  int64_t od[2] = {2, 3};
  CHECK(tk_shape_is(out, 2, od));
  if (tk_shape_is(out, 2, od)) {
    const int64_t *s = ol_tdata(&out->tensor);
    CHECK(s[2] == 3 && s[5] == 2 && s[0] == 0 && s[1] == 0);
  }
  ol_value_release(out);
  ol_attr bad[1] = {tk_attr_int("center_point_box", 2)};
  CHECK_STATUS(tk_run("NonMaxSuppression", 11, bad, 1, in, 5, &out, 1), OL_INVALID_MODEL);
  tk_release_all(in, 5);
}

static void test_shrink_det(void) {
  int64_t d[1] = {5};
  float x[5] = {-2, -1, 0, 1, 2};
  ol_value *in = tk_f32(1, d, x);
  ol_attr a[2] = {tk_attr_float("lambd", 1.5f), tk_attr_float("bias", 1.5f)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Shrink", 9, a, 2, &in, 1, &out, 1));
  float want[5] = {-0.5f, 0, 0, 0, 0.5f};
  CHECK(tk_near_f32(out, want, 5, 0));
  ol_value_release(out);
  ol_value_release(in);

  int64_t dm[3] = {2, 2, 2};
  float m[8] = {1, 2, 3, 4, 0, 1, 1, 0};
  in = tk_f32(3, dm, m);
  CHECK_OK(tk_run("Det", 11, NULL, 0, &in, 1, &out, 1));
  float dets[2] = {-2, -1};
  CHECK(tk_shape_is(out, 1, dm) && tk_near_f32(out, dets, 2, 1e-6f));
  ol_value_release(out);
  ol_value_release(in);
  int64_t dn[2] = {2, 3};
  in = tk_f32(2, dn, m);
  CHECK_STATUS(tk_run("Det", 11, NULL, 0, &in, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in);
}

static void test_reverse_sequence(void) {
  int64_t d[2] = {3, 2}, dl[1] = {2};
  float x[6] = {0, 1, 2, 3, 4, 5}; /* [T=3, B=2] */
  int64_t lens[2] = {3, 2};
  ol_value *in[2] = {tk_f32(2, d, x), tk_i64(1, dl, lens)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("ReverseSequence", 10, NULL, 0, in, 2, &out, 1));
  float want[6] = {4, 3, 2, 1, 0, 5};
  CHECK(tk_near_f32(out, want, 6, 0));
  ol_value_release(out);
  out = NULL;
  ol_attr bad[2] = {tk_attr_int("time_axis", 0), tk_attr_int("batch_axis", 0)};
  CHECK_STATUS(tk_run("ReverseSequence", 10, bad, 2, in, 2, &out, 1), OL_INVALID_MODEL);
  int64_t big[2] = {4, 1};
  ol_value *in2[2] = {in[0], tk_i64(1, dl, big)};
  CHECK_STATUS(tk_run("ReverseSequence", 10, NULL, 0, in2, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(in2[1]);
  tk_release_all(in, 2);
}

static void test_string_normalizer(void) {
  int64_t d[1] = {4};
  const char *words[4] = {"monday", "tuesday", "Monday", "wednesday"};
  ol_value *in = strings(1, d, words);
  char *stop[1] = {"monday"};
  ol_attr sw = {0};
  sw.name = "stopwords";
  sw.type = OL_ATTR_STRINGS;
  sw.strings = stop;
  sw.count = 1;
  ol_attr a[2] = {sw, tk_attr_string("case_change_action", "UPPER")};
  ol_value *out = NULL;
  CHECK_OK(tk_run("StringNormalizer", 10, a, 2, &in, 1, &out, 1));
  int64_t w2[1] = {2};
  CHECK(tk_shape_is(out, 1, w2) && str_is(out, 0, "TUESDAY") && str_is(out, 1, "WEDNESDAY"));
  ol_value_release(out);
  ol_attr cs[3] = {sw, tk_attr_string("case_change_action", "LOWER"), tk_attr_int("is_case_sensitive", 1)};
  CHECK_OK(tk_run("StringNormalizer", 10, cs, 3, &in, 1, &out, 1));
  int64_t w3[1] = {3};
  CHECK(tk_shape_is(out, 1, w3) && str_is(out, 1, "monday"));
  ol_value_release(out);
  ol_value_release(in);
  /* everything removed: one empty string */
  int64_t d1[2] = {1, 1};
  const char *only[1] = {"MONDAY"};
  in = strings(2, d1, only);
  CHECK_OK(tk_run("StringNormalizer", 10, a, 1, &in, 1, &out, 1));
  CHECK(tk_shape_is(out, 2, d1) && str_is(out, 0, ""));
  ol_value_release(out);
  ol_attr bad[1] = {tk_attr_string("case_change_action", "TITLE")};
  CHECK_STATUS(tk_run("StringNormalizer", 10, bad, 1, &in, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(in);
}

static void test_tfidf(void) {
  int64_t d[1] = {6};
  int32_t x[6] = {1, 2, 3, 2, 3, 1};
  ol_value *in = tk_tensor(OL_DTYPE_INT32, 1, d, x);
  /* pool: unigrams 1, 3; bigrams (2,3), (3,1) */
  int64_t counts[2] = {0, 2}, idx[4] = {0, 1, 2, 3};
  int64_t pool2[6] = {1, 3, 2, 3, 3, 1};
  ol_attr a[7] = {tk_attr_string("mode", "TF"), tk_attr_int("min_gram_length", 1), tk_attr_int("max_gram_length", 2),
                  tk_attr_int("max_skip_count", 0), tk_attr_ints("ngram_counts", counts, 2),
                  tk_attr_ints("ngram_indexes", idx, 4), tk_attr_ints("pool_int64s", pool2, 6)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("TfIdfVectorizer", 9, a, 7, &in, 1, &out, 1));
  float want[4] = {2, 2, 2, 1}; /* "1" x2, "3" x2, (2,3) x2, (3,1) x1 */
  CHECK(tk_near_f32(out, want, 4, 0));
  ol_value_release(out);
  a[0] = tk_attr_string("mode", "IDF");
  CHECK_OK(tk_run("TfIdfVectorizer", 9, a, 7, &in, 1, &out, 1));
  float idf[4] = {1, 1, 1, 1};
  CHECK(tk_near_f32(out, idf, 4, 0));
  ol_value_release(out);
  /* TFIDF: counts times the weight of each output position */
  float wts[4] = {0.5f, 1, 2, 3};
  ol_attr wa = {0};
  wa.name = "weights";
  wa.type = OL_ATTR_FLOATS;
  wa.floats = wts;
  wa.count = 4;
  ol_attr a8[8];
  memcpy(a8, a, sizeof a);
  a8[0] = tk_attr_string("mode", "TFIDF");
  a8[7] = wa;
  CHECK_OK(tk_run("TfIdfVectorizer", 9, a8, 8, &in, 1, &out, 1));
  float tfidf[4] = {1, 2, 4, 3};
  CHECK(tk_near_f32(out, tfidf, 4, 0));
  ol_value_release(out);
  int64_t idx3[3] = {0, 1, 2};
  a[5] = tk_attr_ints("ngram_indexes", idx3, 3);
  CHECK_STATUS(tk_run("TfIdfVectorizer", 9, a, 7, &in, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(in);
}

static void test_grid_sample(void) {
  int64_t dx[4] = {1, 1, 2, 2}, dg[4] = {1, 1, 2, 2};
  float x[4] = {1, 2, 3, 4};
  /* (x, y) in [-1, 1]: corners with align_corners=1, then the centre */
  float g[4] = {-1, -1, 0, 0};
  ol_value *in[2] = {tk_f32(4, dx, x), tk_f32(4, dg, g)};
  ol_value *out = NULL;
  ol_attr a[1] = {tk_attr_int("align_corners", 1)};
  CHECK_OK(tk_run("GridSample", 16, a, 1, in, 2, &out, 1));
  float want[2] = {1, 2.5f};
  int64_t od[4] = {1, 1, 1, 2};
  CHECK(tk_shape_is(out, 4, od) && tk_near_f32(out, want, 2, 1e-6f));
  ol_value_release(out);
  ol_attr n[2] = {tk_attr_string("mode", "nearest"), tk_attr_string("padding_mode", "border")};
  CHECK_OK(tk_run("GridSample", 20, n, 2, in, 2, &out, 1));
  CHECK(out && ol_tcount(&out->tensor) == 2);
  ol_value_release(out);
  ol_attr bad[1] = {tk_attr_string("mode", "bilinear")}; /* renamed to linear at 20 */
  CHECK_STATUS(tk_run("GridSample", 20, bad, 1, in, 2, &out, 1), OL_INVALID_MODEL);
  tk_release_all(in, 2);
}

static void test_roi_align_unpool(void) {
  int64_t dx[4] = {1, 1, 2, 2}, dr[2] = {1, 4}, db[1] = {1};
  float x[4] = {1, 2, 3, 4};
  float roi[4] = {0, 0, 1, 1};
  int64_t bi[1] = {0};
  ol_value *in[3] = {tk_f32(4, dx, x), tk_f32(2, dr, roi), tk_i64(1, db, bi)};
  ol_value *out = NULL;
  ol_attr a[2] = {tk_attr_int("sampling_ratio", 1), tk_attr_string("coordinate_transformation_mode", "output_half_pixel")};
  CHECK_OK(tk_run("RoiAlign", 16, a, 2, in, 3, &out, 1));
  /* one bin over [0,1]x[0,1], one sample at (0.5, 0.5): bilinear = 2.5 */
  float want = 2.5f;
  CHECK(tk_near_f32(out, &want, 1, 1e-6f));
  ol_value_release(out);
  out = NULL;
  int64_t bad_b[1] = {3};
  ol_value *in2[3] = {in[0], in[1], tk_i64(1, db, bad_b)};
  CHECK_STATUS(tk_run("RoiAlign", 16, a, 2, in2, 3, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_value_release(in2[2]);
  tk_release_all(in, 3);

  int64_t dp[4] = {1, 1, 1, 1};
  float v[1] = {7};
  int64_t ix[1] = {3};
  ol_value *up[2] = {tk_f32(4, dp, v), tk_i64(4, dp, ix)};
  int64_t ks[2] = {2, 2}, st[2] = {2, 2};
  ol_attr ua[2] = {tk_attr_ints("kernel_shape", ks, 2), tk_attr_ints("strides", st, 2)};
  CHECK_OK(tk_run("MaxUnpool", 11, ua, 2, up, 2, &out, 1));
  float uw[4] = {0, 0, 0, 7};
  CHECK(tk_shape_is(out, 4, dx) && tk_near_f32(out, uw, 4, 0));
  ol_value_release(out);
  CHECK_STATUS(tk_run("MaxUnpool", 11, NULL, 0, up, 2, &out, 1), OL_INVALID_MODEL);
  tk_release_all(up, 2);
}

OL_TEST_MAIN(TEST(test_nms), TEST(test_shrink_det), TEST(test_reverse_sequence), TEST(test_string_normalizer),
             TEST(test_tfidf), TEST(test_grid_sample), TEST(test_roi_align_unpool))
