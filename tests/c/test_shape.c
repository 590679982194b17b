/* Shape-family kernels: Constant, Shape, Size, Reshape, Flatten, Squeeze,
 * Unsqueeze, Identity, ConstantOfShape, Range, EyeLike, Dropout, Trilu,
 * OneHot, NonZero. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

static bool eq_f32(const ol_value *v, const float *want, int64_t n) {
  if (!v || v->tensor.dtype != OL_DTYPE_FLOAT || ol_tcount(&v->tensor) != n) return false;
  const float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < n; i++)
    if (d[i] != want[i]) return false;
  return true;
}
static bool eq_i64(const ol_value *v, const int64_t *want, int64_t n) {
  if (!v || v->tensor.dtype != OL_DTYPE_INT64 || ol_tcount(&v->tensor) != n) return false;
  const int64_t *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < n; i++)
    if (d[i] != want[i]) return false;
  return true;
}
static ol_attr attr_tensor(const char *name, ol_value *v) {
  ol_attr a = {0};
  a.name = name;
  a.type = OL_ATTR_TENSOR;
  a.tensor = v;
  return a;
}
static ol_value *scalar_i64(int64_t v) { return tk_i64(0, NULL, &v); }
static ol_value *vec_i64(int64_t n, const int64_t *v) { return tk_i64(1, &n, v); }

/* ------------------------------------------------------------ Constant */

static void test_constant_forms(void) {
  int64_t d[2] = {2, 2};
  float data[4] = {1, 2, 3, 4};
  ol_value *t = tk_f32(2, d, data);
  ol_attr a = attr_tensor("value", t);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Constant", 13, &a, 1, NULL, 0, &out, 1));
  CHECK(tk_shape_is(out, 2, d) && eq_f32(out, data, 4));
  /* zero-copy: the output views the attribute's payload */
  CHECK(out && ol_tdata(&out->tensor) == ol_tdata(&t->tensor));
  ol_value_release(out);

  ol_attr f = tk_attr_float("value_float", 2.5f);
  CHECK_OK(tk_run("Constant", 13, &f, 1, NULL, 0, &out, 1));
  CHECK(out && out->tensor.rank == 0 && *(float *)ol_tdata(&out->tensor) == 2.5f);
  ol_value_release(out);

  float fl[3] = {1, -1, 0.5f};
  ol_attr fs = {0};
  fs.name = "value_floats";
  fs.type = OL_ATTR_FLOATS;
  fs.floats = fl;
  fs.count = 3;
  CHECK_OK(tk_run("Constant", 13, &fs, 1, NULL, 0, &out, 1));
  CHECK(eq_f32(out, fl, 3) && out->tensor.rank == 1);
  ol_value_release(out);

  ol_attr i = tk_attr_int("value_int", -7);
  CHECK_OK(tk_run("Constant", 13, &i, 1, NULL, 0, &out, 1));
  int64_t m7 = -7;
  CHECK(eq_i64(out, &m7, 1) && out->tensor.rank == 0);
  ol_value_release(out);

  int64_t iv[2] = {4, 5};
  ol_attr is = tk_attr_ints("value_ints", iv, 2);
  CHECK_OK(tk_run("Constant", 13, &is, 1, NULL, 0, &out, 1));
  CHECK(eq_i64(out, iv, 2));
  ol_value_release(out);

  ol_attr s = tk_attr_string("value_string", "hello");
  CHECK_OK(tk_run("Constant", 13, &s, 1, NULL, 0, &out, 1));
  const char *bytes;
  size_t len;
  CHECK(out && out->tensor.dtype == OL_DTYPE_STRING);
  CHECK_OK(ol_tensor_get_string(out, 0, &bytes, &len));
  CHECK(len == 5 && memcmp(bytes, "hello", 5) == 0);
  ol_value_release(out);

  char *strs[2] = {"a", "bc"};
  ol_attr ss = {0};
  ss.name = "value_strings";
  ss.type = OL_ATTR_STRINGS;
  ss.strings = strs;
  ss.count = 2;
  CHECK_OK(tk_run("Constant", 13, &ss, 1, NULL, 0, &out, 1));
  CHECK_OK(ol_tensor_get_string(out, 1, &bytes, &len));
  CHECK(len == 2 && memcmp(bytes, "bc", 2) == 0);
  ol_value_release(out);

  /* errors: none, two, sparse */
  CHECK_STATUS(tk_run("Constant", 13, NULL, 0, NULL, 0, &out, 1), OL_INVALID_MODEL);
  ol_attr two[2] = {f, i};
  CHECK_STATUS(tk_run("Constant", 13, two, 2, NULL, 0, &out, 1), OL_INVALID_MODEL);
  ol_attr sp = {0};
  sp.name = "sparse_value";
  sp.type = OL_ATTR_SPARSE_TENSOR;
  CHECK_STATUS(tk_run("Constant", 13, &sp, 1, NULL, 0, &out, 1), OL_NOT_IMPLEMENTED);
  CHECK(strstr(ol_last_error(), "sparse") != NULL);
  ol_value_release(t);
}

/* ------------------------------------------------------------ Shape / Size */

static void test_shape_size(void) {
  int64_t d[4] = {2, 3, 4, 5};
  ol_value *x = tk_f32(4, d, NULL);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Shape", 14, NULL, 0, &x, 1, &out, 1));
  CHECK(eq_i64(out, d, 4));
  ol_value_release(out);

  ol_attr se[2] = {tk_attr_int("start", 1), tk_attr_int("end", -1)};
  CHECK_OK(tk_run("Shape", 15, se, 2, &x, 1, &out, 1));
  CHECK(eq_i64(out, d + 1, 2));
  ol_value_release(out);

  ol_attr clip[2] = {tk_attr_int("start", -10), tk_attr_int("end", 10)};
  CHECK_OK(tk_run("Shape", 15, clip, 2, &x, 1, &out, 1));
  CHECK(eq_i64(out, d, 4));
  ol_value_release(out);

  ol_attr empty[2] = {tk_attr_int("start", 3), tk_attr_int("end", 1)};
  CHECK_OK(tk_run("Shape", 15, empty, 2, &x, 1, &out, 1));
  CHECK(out && ol_tcount(&out->tensor) == 0);
  ol_value_release(out);

  CHECK_OK(tk_run("Size", 13, NULL, 0, &x, 1, &out, 1));
  int64_t n = 120;
  CHECK(eq_i64(out, &n, 1) && out->tensor.rank == 0);
  ol_value_release(out);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Reshape */

static void test_reshape(void) {
  int64_t d[3] = {2, 3, 4};
  float data[24];
  for (int i = 0; i < 24; i++) data[i] = (float)i;
  ol_value *x = tk_f32(3, d, data);
  int64_t sh[3] = {4, 0, -1};
  ol_value *in[2] = {x, vec_i64(3, sh)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Reshape", 14, NULL, 0, in, 2, &out, 1));
  int64_t want[3] = {4, 3, 2};
  CHECK(tk_shape_is(out, 3, want) && eq_f32(out, data, 24));
  CHECK(out && ol_tdata(&out->tensor) == ol_tdata(&x->tensor)); /* zero copy */
  ol_value_release(out);
  ol_value_release(in[1]);

  /* allowzero: 0 is a real zero; with data elements that's an error */
  int64_t z[2] = {0, 24};
  in[1] = vec_i64(2, z);
  ol_attr az = tk_attr_int("allowzero", 1);
  CHECK_STATUS(tk_run("Reshape", 14, &az, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);

  int64_t zd[3] = {0, 3, 4};
  ol_value *ez = tk_f32(3, zd, NULL);
  int64_t zs[2] = {3, 0};
  ol_value *ein[2] = {ez, vec_i64(2, zs)};
  CHECK_OK(tk_run("Reshape", 14, &az, 1, ein, 2, &out, 1));
  int64_t zw[2] = {3, 0};
  CHECK(tk_shape_is(out, 2, zw));
  ol_value_release(out);
  int64_t zneg[2] = {0, -1};
  ol_value_release(ein[1]);
  ein[1] = vec_i64(2, zneg);
  CHECK_STATUS(tk_run("Reshape", 14, &az, 1, ein, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(ein[1]);
  ol_value_release(ez);

  /* bad shapes */
  int64_t two_neg[2] = {-1, -1};
  in[1] = vec_i64(2, two_neg);
  CHECK_STATUS(tk_run("Reshape", 14, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  int64_t wrong[2] = {5, 5};
  in[1] = vec_i64(2, wrong);
  CHECK_STATUS(tk_run("Reshape", 14, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "24") != NULL);
  ol_value_release(in[1]);
  int64_t indiv[2] = {5, -1};
  in[1] = vec_i64(2, indiv);
  CHECK_STATUS(tk_run("Reshape", 14, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);

  /* opset 1: shape attribute */
  int64_t attr_shape[2] = {6, -1};
  ol_attr sa = tk_attr_ints("shape", attr_shape, 2);
  CHECK_OK(tk_run("Reshape", 1, &sa, 1, &x, 1, &out, 1));
  int64_t w1[2] = {6, 4};
  CHECK(tk_shape_is(out, 2, w1));
  ol_value_release(out);

  /* int32 shape input */
  int32_t s32[1] = {24};
  int64_t one = 1;
  in[1] = tk_tensor(OL_DTYPE_INT32, 1, &one, s32);
  CHECK_OK(tk_run("Reshape", 19, NULL, 0, in, 2, &out, 1));
  CHECK(tk_shape_is(out, 1, &w1[0]) == false && out && out->tensor.dims[0] == 24);
  ol_value_release(out);
  ol_value_release(in[1]);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Flatten / Squeeze / Unsqueeze */

static void test_flatten(void) {
  int64_t d[4] = {2, 3, 4, 5};
  ol_value *x = tk_f32(4, d, NULL);
  ol_value *out = NULL;
  int64_t axes_want[5][2] = {{1, 120}, {2, 60}, {6, 20}, {24, 5}, {120, 1}};
  for (int a = 0; a <= 4; a++) {
    ol_attr at = tk_attr_int("axis", a);
    CHECK_OK(tk_run("Flatten", 13, &at, 1, &x, 1, &out, 1));
    CHECK(tk_shape_is(out, 2, axes_want[a]));
    ol_value_release(out);
    out = NULL;
  }
  ol_attr neg = tk_attr_int("axis", -1);
  CHECK_OK(tk_run("Flatten", 13, &neg, 1, &x, 1, &out, 1));
  CHECK(tk_shape_is(out, 2, axes_want[3]));
  ol_value_release(out);
  CHECK_STATUS(tk_run("Flatten", 9, &neg, 1, &x, 1, &out, 1), OL_INVALID_MODEL);
  ol_attr big = tk_attr_int("axis", 5);
  CHECK_STATUS(tk_run("Flatten", 13, &big, 1, &x, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(x);
}

static void test_squeeze_unsqueeze(void) {
  int64_t d[4] = {1, 3, 1, 5};
  ol_value *x = tk_f32(4, d, NULL);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Squeeze", 13, NULL, 0, &x, 1, &out, 1));
  int64_t w[2] = {3, 5};
  CHECK(tk_shape_is(out, 2, w));
  CHECK(out && ol_tdata(&out->tensor) == ol_tdata(&x->tensor));
  ol_value_release(out);

  int64_t ax[1] = {-2};
  ol_value *in[2] = {x, vec_i64(1, ax)};
  CHECK_OK(tk_run("Squeeze", 13, NULL, 0, in, 2, &out, 1));
  int64_t w2[3] = {1, 3, 5};
  CHECK(tk_shape_is(out, 3, w2));
  ol_value_release(out);
  ol_value_release(in[1]);

  /* an empty axes input squeezes every 1 (as onnxruntime) */
  in[1] = tk_i64(1, (int64_t[]){0}, NULL);
  CHECK_OK(tk_run("Squeeze", 13, NULL, 0, in, 2, &out, 1));
  CHECK(tk_shape_is(out, 2, w));
  ol_value_release(out);
  ol_value_release(in[1]);

  int64_t bad[1] = {1};
  in[1] = vec_i64(1, bad);
  CHECK_STATUS(tk_run("Squeeze", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);

  int64_t attr_axes[1] = {0};
  ol_attr aa = tk_attr_ints("axes", attr_axes, 1);
  CHECK_OK(tk_run("Squeeze", 11, &aa, 1, &x, 1, &out, 1));
  int64_t w3[3] = {3, 1, 5};
  CHECK(tk_shape_is(out, 3, w3));
  ol_value_release(out);

  /* Unsqueeze with unsorted and negative axes */
  int64_t ud[2] = {3, 4};
  ol_value *y = tk_f32(2, ud, NULL);
  int64_t uax[3] = {4, 0, -3};
  ol_value *uin[2] = {y, vec_i64(3, uax)};
  CHECK_OK(tk_run("Unsqueeze", 13, NULL, 0, uin, 2, &out, 1));
  int64_t uw[5] = {1, 3, 1, 4, 1};
  CHECK(tk_shape_is(out, 5, uw));
  CHECK(out && ol_tdata(&out->tensor) == ol_tdata(&y->tensor));
  ol_value_release(out);
  ol_value_release(uin[1]);

  int64_t dup[2] = {0, 0};
  uin[1] = vec_i64(2, dup);
  CHECK_STATUS(tk_run("Unsqueeze", 13, NULL, 0, uin, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(uin[1]);
  int64_t oob[1] = {5};
  uin[1] = vec_i64(1, oob);
  CHECK_STATUS(tk_run("Unsqueeze", 13, NULL, 0, uin, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(uin[1]);
  CHECK_STATUS(tk_run("Unsqueeze", 13, NULL, 0, &y, 1, &out, 1), OL_INVALID_ARGUMENT);

  int64_t a11[1] = {1};
  ol_attr ua = tk_attr_ints("axes", a11, 1);
  CHECK_OK(tk_run("Unsqueeze", 11, &ua, 1, &y, 1, &out, 1));
  int64_t uw2[3] = {3, 1, 4};
  CHECK(tk_shape_is(out, 3, uw2));
  ol_value_release(out);
  CHECK_STATUS(tk_run("Unsqueeze", 11, NULL, 0, &y, 1, &out, 1), OL_INVALID_MODEL);

  /* scalar -> [1] */
  ol_value *s = scalar_i64(9);
  int64_t z[1] = {0};
  ol_value *sin[2] = {s, vec_i64(1, z)};
  CHECK_OK(tk_run("Unsqueeze", 13, NULL, 0, sin, 2, &out, 1));
  int64_t nine = 9, one = 1;
  CHECK(tk_shape_is(out, 1, &one) && eq_i64(out, &nine, 1));
  ol_value_release(out);
  ol_value_release(sin[1]);
  ol_value_release(s);
  ol_value_release(y);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Identity / Dropout */

static void test_identity_dropout(void) {
  int64_t d[1] = {3};
  float data[3] = {1, 2, 3};
  ol_value *x = tk_f32(1, d, data);
  ol_value *out[2] = {NULL, NULL};
  CHECK_OK(tk_run("Identity", 16, NULL, 0, &x, 1, out, 1));
  CHECK(eq_f32(out[0], data, 3) && ol_tdata(&out[0]->tensor) == ol_tdata(&x->tensor));
  ol_value_release(out[0]);

  ol_value *seq;
  CHECK_OK(ol_sequence_create(OL_DTYPE_FLOAT, &x, 1, &seq));
  CHECK_OK(tk_run("Identity", 16, NULL, 0, &seq, 1, out, 1));
  CHECK(out[0] == seq && seq->refcount == 2);
  ol_value_release(out[0]);
  ol_value_release(seq);

  ol_value *opt;
  CHECK_OK(ol_optional_create(NULL, &opt));
  CHECK_OK(tk_run("Identity", 16, NULL, 0, &opt, 1, out, 1));
  CHECK(out[0] == opt);
  ol_value_release(out[0]);
  ol_value_release(opt);

  CHECK_OK(tk_run("Dropout", 13, NULL, 0, &x, 1, out, 2));
  CHECK(eq_f32(out[0], data, 3));
  CHECK(out[1] && out[1]->tensor.dtype == OL_DTYPE_BOOL &&
        ((uint8_t *)ol_tdata(&out[1]->tensor))[2] == 1);
  ol_value_release(out[0]);
  ol_value_release(out[1]);

  float zero = 0.0f;
  uint8_t yes = 1;
  ol_value *din[3] = {x, tk_f32(0, NULL, &zero), tk_tensor(OL_DTYPE_BOOL, 0, NULL, &yes)};
  CHECK_OK(tk_run("Dropout", 13, NULL, 0, din, 3, out, 1));
  CHECK(eq_f32(out[0], data, 3));
  ol_value_release(out[0]);
  float half = 0.5f;
  ol_value_release(din[1]);
  din[1] = tk_f32(0, NULL, &half);
  CHECK_STATUS(tk_run("Dropout", 13, NULL, 0, din, 3, out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(din[1]);
  ol_value_release(din[2]);

  CHECK_OK(tk_run("Dropout", 7, NULL, 0, &x, 1, out, 2));
  float ones[3] = {1, 1, 1};
  CHECK(eq_f32(out[1], ones, 3));
  ol_value_release(out[0]);
  ol_value_release(out[1]);
  ol_value_release(x);
}

/* ------------------------------------------------------------ ConstantOfShape / Range / EyeLike */

static void test_constant_of_shape(void) {
  int64_t sh[2] = {2, 3};
  ol_value *s = vec_i64(2, sh);
  ol_value *out = NULL;
  CHECK_OK(tk_run("ConstantOfShape", 9, NULL, 0, &s, 1, &out, 1));
  float zeros[6] = {0};
  CHECK(tk_shape_is(out, 2, sh) && eq_f32(out, zeros, 6));
  ol_value_release(out);

  int64_t one = 1, seven = 7;
  ol_value *v = tk_i64(1, &one, &seven);
  ol_attr a = attr_tensor("value", v);
  CHECK_OK(tk_run("ConstantOfShape", 20, &a, 1, &s, 1, &out, 1));
  int64_t sevens[6] = {7, 7, 7, 7, 7, 7};
  CHECK(eq_i64(out, sevens, 6));
  ol_value_release(out);

  int64_t zero_shape[2] = {0, 3};
  ol_value *zs = vec_i64(2, zero_shape);
  CHECK_OK(tk_run("ConstantOfShape", 20, &a, 1, &zs, 1, &out, 1));
  CHECK(tk_shape_is(out, 2, zero_shape));
  ol_value_release(out);
  ol_value_release(zs);

  int64_t neg[1] = {-1};
  ol_value *ns = vec_i64(1, neg);
  CHECK_STATUS(tk_run("ConstantOfShape", 20, NULL, 0, &ns, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(ns);

  int64_t two = 2;
  ol_value *bad = tk_i64(1, &two, sh);
  ol_attr ba = attr_tensor("value", bad);
  CHECK_STATUS(tk_run("ConstantOfShape", 20, &ba, 1, &s, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(bad);
  ol_value_release(v);
  ol_value_release(s);
}

static void test_range(void) {
  ol_value *in[3] = {scalar_i64(10), scalar_i64(4), scalar_i64(-3)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Range", 11, NULL, 0, in, 3, &out, 1));
  int64_t want[2] = {10, 7};
  CHECK(eq_i64(out, want, 2));
  ol_value_release(out);
  for (int i = 0; i < 3; i++) ol_value_release(in[i]);

  float a = 1, b = 5, c = 2;
  ol_value *fin[3] = {tk_f32(0, NULL, &a), tk_f32(0, NULL, &b), tk_f32(0, NULL, &c)};
  CHECK_OK(tk_run("Range", 11, NULL, 0, fin, 3, &out, 1));
  float fw[2] = {1, 3};
  CHECK(eq_f32(out, fw, 2));
  ol_value_release(out);
  float z = 0;
  ol_value_release(fin[2]);
  fin[2] = tk_f32(0, NULL, &z);
  CHECK_STATUS(tk_run("Range", 11, NULL, 0, fin, 3, &out, 1), OL_INVALID_ARGUMENT);
  for (int i = 0; i < 3; i++) ol_value_release(fin[i]);

  /* empty range, int32 */
  int32_t s = 5, l = 5, d = 1;
  ol_value *iin[3] = {tk_tensor(OL_DTYPE_INT32, 0, NULL, &s), tk_tensor(OL_DTYPE_INT32, 0, NULL, &l),
                      tk_tensor(OL_DTYPE_INT32, 0, NULL, &d)};
  CHECK_OK(tk_run("Range", 11, NULL, 0, iin, 3, &out, 1));
  CHECK(out && ol_tcount(&out->tensor) == 0 && out->tensor.dtype == OL_DTYPE_INT32);
  ol_value_release(out);
  for (int i = 0; i < 3; i++) ol_value_release(iin[i]);
}

static void test_eyelike(void) {
  int64_t d[2] = {3, 4};
  ol_value *x = tk_i64(2, d, NULL);
  ol_attr a[2] = {tk_attr_int("k", 1), tk_attr_int("dtype", OL_DTYPE_FLOAT)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("EyeLike", 9, a, 2, &x, 1, &out, 1));
  float want[12] = {0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  CHECK(tk_shape_is(out, 2, d) && eq_f32(out, want, 12));
  ol_value_release(out);
  CHECK_OK(tk_run("EyeLike", 9, NULL, 0, &x, 1, &out, 1));
  int64_t iw[12] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0};
  CHECK(eq_i64(out, iw, 12));
  ol_value_release(out);
  ol_value_release(x);
  int64_t d3[3] = {1, 2, 3};
  x = tk_f32(3, d3, NULL);
  CHECK_STATUS(tk_run("EyeLike", 9, NULL, 0, &x, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Trilu / OneHot / NonZero */

static void test_trilu(void) {
  int64_t d[2] = {3, 4};
  float data[12];
  for (int i = 0; i < 12; i++) data[i] = (float)(i + 1);
  ol_value *x = tk_f32(2, d, data);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Trilu", 14, NULL, 0, &x, 1, &out, 1));
  float up[12] = {1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12};
  CHECK(eq_f32(out, up, 12));
  ol_value_release(out);

  ol_attr lower = tk_attr_int("upper", 0);
  ol_value *in[2] = {x, scalar_i64(-1)};
  CHECK_OK(tk_run("Trilu", 14, &lower, 1, in, 2, &out, 1));
  float lo[12] = {0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0};
  CHECK(eq_f32(out, lo, 12));
  ol_value_release(out);
  ol_value_release(in[1]);
  in[1] = scalar_i64(100);
  CHECK_OK(tk_run("Trilu", 14, NULL, 0, in, 2, &out, 1));
  float zeros[12] = {0};
  CHECK(eq_f32(out, zeros, 12));
  ol_value_release(out);
  ol_value_release(in[1]);
  ol_value_release(x);
}

static void test_onehot(void) {
  int64_t d[2] = {2, 2};
  int64_t ind[4] = {0, 2, -1, 5};
  ol_value *in[3];
  in[0] = tk_i64(2, d, ind);
  float depth = 3;
  in[1] = tk_f32(0, NULL, &depth);
  int64_t two = 2;
  float vals[2] = {-1, 9};
  in[2] = tk_f32(1, &two, vals);
  ol_value *out = NULL;
  CHECK_OK(tk_run("OneHot", 11, NULL, 0, in, 3, &out, 1));
  int64_t w[3] = {2, 2, 3};
  float want[12] = {9, -1, -1, -1, -1, 9, -1, -1, 9, -1, -1, -1};
  CHECK(tk_shape_is(out, 3, w) && eq_f32(out, want, 12));
  ol_value_release(out);
  ol_attr ax = tk_attr_int("axis", 0);
  CHECK_OK(tk_run("OneHot", 11, &ax, 1, in, 3, &out, 1));
  int64_t w0[3] = {3, 2, 2};
  float want0[12] = {9, -1, -1, -1, -1, -1, -1, -1, -1, 9, 9, -1};
  CHECK(tk_shape_is(out, 3, w0) && eq_f32(out, want0, 12));
  ol_value_release(out);
  for (int i = 0; i < 3; i++) ol_value_release(in[i]);
}

static void test_nonzero(void) {
  int64_t d[2] = {2, 3};
  float data[6] = {1, 0, 0, -0.0f, 2, 3};
  ol_value *x = tk_f32(2, d, data);
  ol_value *out = NULL;
  CHECK_OK(tk_run("NonZero", 13, NULL, 0, &x, 1, &out, 1));
  int64_t w[2] = {2, 3};
  int64_t want[6] = {0, 1, 1, 0, 1, 2};
  CHECK(tk_shape_is(out, 2, w) && eq_i64(out, want, 6));
  ol_value_release(out);
  ol_value_release(x);
}

OL_TEST_MAIN(TEST(test_constant_forms), TEST(test_shape_size), TEST(test_reshape),
             TEST(test_flatten), TEST(test_squeeze_unsqueeze), TEST(test_identity_dropout),
             TEST(test_constant_of_shape), TEST(test_range), TEST(test_eyelike), TEST(test_trilu),
             TEST(test_onehot), TEST(test_nonzero))
