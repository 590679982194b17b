/* Tensor-family kernels: movement, indexing, scatter, ordering. */
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
static ol_value *vec_i64(int64_t n, const int64_t *v) { return tk_i64(1, &n, v); }
static ol_value *scalar_i64(int64_t v) { return tk_i64(0, NULL, &v); }
static ol_value *iota_f32(int rank, const int64_t *dims) {
  ol_value *v = tk_f32(rank, dims, NULL);
  float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < ol_tcount(&v->tensor); i++) d[i] = (float)i;
  return v;
}
/* ------------------------------------------------------------ Concat / Split */

static void test_concat(void) {
  int64_t da[2] = {2, 2}, db[2] = {2, 1};
  float a[4] = {1, 2, 3, 4}, b[2] = {5, 6};
  ol_value *in[2] = {tk_f32(2, da, a), tk_f32(2, db, b)};
  ol_attr ax = tk_attr_int("axis", -1);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Concat", 13, &ax, 1, in, 2, &out, 1));
  int64_t w[2] = {2, 3};
  float want[6] = {1, 2, 5, 3, 4, 6};
  CHECK(tk_shape_is(out, 2, w) && eq_f32(out, want, 6));
  ol_value_release(out);
  ol_attr ax0 = tk_attr_int("axis", 0);
  CHECK_STATUS(tk_run("Concat", 13, &ax0, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "dimension 1") != NULL);
  CHECK_STATUS(tk_run("Concat", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_MODEL);
  ol_value_release(in[1]);
  /* empty input and int64 (shape building) */
  int64_t e[1] = {0};
  int64_t s1[2] = {7, 8}, s2[1] = {9};
  ol_value *iin[3] = {vec_i64(2, s1), tk_i64(1, e, NULL), vec_i64(1, s2)};
  CHECK_OK(tk_run("Concat", 13, &ax0, 1, iin, 3, &out, 1));
  int64_t iw[3] = {7, 8, 9};
  CHECK(eq_i64(out, iw, 3));
  ol_value_release(out);
  tk_release_all(iin, 3);
  in[1] = tk_i64(2, da, NULL);
  CHECK_STATUS(tk_run("Concat", 13, &ax0, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(in, 2);
}

static void test_split(void) {
  int64_t d[2] = {2, 6};
  ol_value *x = iota_f32(2, d);
  ol_value *out[4] = {NULL, NULL, NULL, NULL};
  ol_attr ax = tk_attr_int("axis", 1);
  CHECK_OK(tk_run("Split", 13, &ax, 1, &x, 1, out, 3));
  int64_t w[2] = {2, 2};
  float o1[4] = {2, 3, 8, 9};
  CHECK(tk_shape_is(out[1], 2, w) && eq_f32(out[1], o1, 4));
  tk_release_all(out, 3);

  int64_t sp[2] = {1, 5};
  ol_value *in[2] = {x, vec_i64(2, sp)};
  CHECK_OK(tk_run("Split", 13, &ax, 1, in, 2, out, 2));
  int64_t w5[2] = {2, 5};
  float o5[10] = {1, 2, 3, 4, 5, 7, 8, 9, 10, 11};
  CHECK(tk_shape_is(out[1], 2, w5) && eq_f32(out[1], o5, 10));
  tk_release_all(out, 2);
  CHECK_STATUS(tk_run("Split", 13, &ax, 1, in, 2, out, 3), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);

  ol_attr a11[2] = {ax, tk_attr_ints("split", sp, 2)};
  CHECK_OK(tk_run("Split", 11, a11, 2, &x, 1, out, 2));
  CHECK(eq_f32(out[1], o5, 10));
  tk_release_all(out, 2);

  ol_attr a18[2] = {ax, tk_attr_int("num_outputs", 4)};
  ol_value *o4[4] = {NULL};
  CHECK_OK(tk_run("Split", 18, a18, 2, &x, 1, o4, 4));
  int64_t wl[2] = {2, 0};
  CHECK(o4[3] && tk_shape_is(o4[3], 2, wl) && o4[2]->tensor.dims[1] == 2);
  tk_release_all(o4, 4);
  CHECK_STATUS(tk_run("Split", 13, &ax, 1, &x, 1, out, 4), OL_INVALID_ARGUMENT);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Slice */

static void test_slice(void) {
  int64_t d[2] = {3, 4};
  ol_value *x = iota_f32(2, d);
  int64_t st[2] = {0, 1}, en[2] = {2, 1000};
  ol_value *in[5] = {x, vec_i64(2, st), vec_i64(2, en), NULL, NULL};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Slice", 13, NULL, 0, in, 3, &out, 1));
  int64_t w[2] = {2, 3};
  float want[6] = {1, 2, 3, 5, 6, 7};
  CHECK(tk_shape_is(out, 2, w) && eq_f32(out, want, 6));
  ol_value_release(out);
  tk_release_all(in + 1, 2);

  /* negative steps, default starts clamp */
  int64_t st2[1] = {-1}, en2[1] = {INT64_MIN}, ax2[1] = {1}, sp2[1] = {-2};
  in[1] = vec_i64(1, st2);
  in[2] = vec_i64(1, en2);
  in[3] = vec_i64(1, ax2);
  in[4] = vec_i64(1, sp2);
  CHECK_OK(tk_run("Slice", 13, NULL, 0, in, 5, &out, 1));
  float want2[6] = {3, 1, 7, 5, 11, 9};
  CHECK(eq_f32(out, want2, 6));
  ol_value_release(out);
  tk_release_all(in + 1, 4);

  /* contiguous region: zero-copy view */
  int64_t st3[1] = {1}, en3[1] = {3};
  in[1] = vec_i64(1, st3);
  in[2] = vec_i64(1, en3);
  CHECK_OK(tk_run("Slice", 13, NULL, 0, in, 3, &out, 1));
  float want3[8] = {4, 5, 6, 7, 8, 9, 10, 11};
  CHECK(eq_f32(out, want3, 8));
  CHECK(out && ol_tdata(&out->tensor) == (float *)ol_tdata(&x->tensor) + 4);
  ol_value_release(out);
  tk_release_all(in + 1, 2);

  /* out-of-bounds starts give an empty result */
  int64_t st4[1] = {10}, en4[1] = {20};
  in[1] = vec_i64(1, st4);
  in[2] = vec_i64(1, en4);
  CHECK_OK(tk_run("Slice", 13, NULL, 0, in, 3, &out, 1));
  int64_t w4[2] = {0, 4};
  CHECK(tk_shape_is(out, 2, w4));
  ol_value_release(out);
  tk_release_all(in + 1, 2);

  /* zero step */
  int64_t z[1] = {0};
  in[1] = vec_i64(1, z);
  in[2] = vec_i64(1, en3);
  in[3] = vec_i64(1, z);
  in[4] = vec_i64(1, z);
  CHECK_STATUS(tk_run("Slice", 13, NULL, 0, in, 5, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(in + 1, 4);

  /* opset 1 attributes */
  int64_t as[1] = {1}, ae[1] = {-1}, aa[1] = {1};
  ol_attr attrs[3] = {tk_attr_ints("starts", as, 1), tk_attr_ints("ends", ae, 1),
                      tk_attr_ints("axes", aa, 1)};
  CHECK_OK(tk_run("Slice", 1, attrs, 3, &x, 1, &out, 1));
  float want5[6] = {1, 2, 5, 6, 9, 10};
  CHECK(eq_f32(out, want5, 6));
  ol_value_release(out);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Gather family */

static void test_gather(void) {
  int64_t d[2] = {3, 2};
  ol_value *x = iota_f32(2, d);
  int64_t id[2] = {2, 2}, idx[4] = {0, -1, 1, 0};
  ol_value *in[2] = {x, tk_i64(2, id, idx)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Gather", 13, NULL, 0, in, 2, &out, 1));
  int64_t w[3] = {2, 2, 2};
  float want[8] = {0, 1, 4, 5, 2, 3, 0, 1};
  CHECK(tk_shape_is(out, 3, w) && eq_f32(out, want, 8));
  ol_value_release(out);
  ol_attr ax = tk_attr_int("axis", 1);
  int64_t one = 1;
  ol_value_release(in[1]);
  in[1] = tk_i64(0, NULL, &one);
  CHECK_OK(tk_run("Gather", 13, &ax, 1, in, 2, &out, 1));
  float want1[3] = {1, 3, 5};
  int64_t w1[1] = {3};
  CHECK(tk_shape_is(out, 1, w1) && eq_f32(out, want1, 3));
  ol_value_release(out);
  ol_value_release(in[1]);
  int64_t bad = 3;
  in[1] = tk_i64(0, NULL, &bad);
  CHECK_STATUS(tk_run("Gather", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "out of range") != NULL);
  ol_value_release(in[1]);
  int32_t i32 = -3;
  in[1] = tk_tensor(OL_DTYPE_INT32, 0, NULL, &i32);
  CHECK_OK(tk_run("Gather", 13, NULL, 0, in, 2, &out, 1));
  float w0[2] = {0, 1};
  CHECK(eq_f32(out, w0, 2));
  ol_value_release(out);
  ol_value_release(in[1]);
  ol_value_release(x);

  /* strings and int4 move element by element */
  int64_t three = 3;
  ol_value *s = tk_tensor(OL_DTYPE_STRING, 1, &three, NULL);
  CHECK_OK(ol_tensor_set_string(s, 0, "a", 1));
  CHECK_OK(ol_tensor_set_string(s, 2, "ccc", 3));
  int64_t sel[2] = {2, 0};
  ol_value *sin[2] = {s, vec_i64(2, sel)};
  CHECK_OK(tk_run("Gather", 13, NULL, 0, sin, 2, &out, 1));
  const char *b;
  size_t len;
  CHECK_OK(ol_tensor_get_string(out, 0, &b, &len));
  CHECK(len == 3 && memcmp(b, "ccc", 3) == 0);
  ol_value_release(out);
  ol_value_release(sin[1]);
  ol_value_release(s);

  int64_t four = 4;
  uint8_t packed[2] = {0x21, 0x83}; /* int4: 1, 2, 3, -8 */
  ol_value *q = tk_tensor(OL_DTYPE_INT4, 1, &four, packed);
  int64_t qs[2] = {3, 1};
  ol_value *qin[2] = {q, vec_i64(2, qs)};
  CHECK_OK(tk_run("Gather", 13, NULL, 0, qin, 2, &out, 1));
  CHECK(out && ol_packed_get(OL_DTYPE_INT4, ol_tdata(&out->tensor), 0) == -8 &&
        ol_packed_get(OL_DTYPE_INT4, ol_tdata(&out->tensor), 1) == 2);
  ol_value_release(out);
  ol_value_release(qin[1]);
  ol_value_release(q);
}

static void test_gather_elements_nd(void) {
  int64_t d[2] = {2, 2};
  float data[4] = {1, 2, 3, 4};
  int64_t idx[4] = {0, 0, 1, 0};
  ol_value *in[2] = {tk_f32(2, d, data), tk_i64(2, d, idx)};
  ol_attr ax = tk_attr_int("axis", 1);
  ol_value *out = NULL;
  CHECK_OK(tk_run("GatherElements", 13, &ax, 1, in, 2, &out, 1));
  float want[4] = {1, 1, 4, 3};
  CHECK(eq_f32(out, want, 4));
  ol_value_release(out);
  ((int64_t *)ol_tdata(&in[1]->tensor))[0] = 2;
  CHECK_STATUS(tk_run("GatherElements", 13, &ax, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(in, 2);

  /* GatherND with batch_dims = 1: data [2,2,2], indices [2,1] */
  int64_t dd[3] = {2, 2, 2}, di[2] = {2, 1};
  int64_t ind[2] = {1, 0};
  in[0] = iota_f32(3, dd);
  in[1] = tk_i64(2, di, ind);
  ol_attr bd = tk_attr_int("batch_dims", 1);
  CHECK_OK(tk_run("GatherND", 13, &bd, 1, in, 2, &out, 1));
  int64_t w[2] = {2, 2};
  float want2[4] = {2, 3, 4, 5};
  CHECK(tk_shape_is(out, 2, w) && eq_f32(out, want2, 4));
  ol_value_release(out);
  ol_value_release(in[1]);
  /* batch_dims = 0, full index */
  int64_t di2[2] = {2, 3}, ind2[6] = {0, 1, 1, 1, 0, 0};
  in[1] = tk_i64(2, di2, ind2);
  CHECK_OK(tk_run("GatherND", 13, NULL, 0, in, 2, &out, 1));
  float want3[2] = {3, 4};
  CHECK(eq_f32(out, want3, 2));
  ol_value_release(out);
  tk_release_all(in, 2);
}

/* ------------------------------------------------------------ Scatter */

static void test_scatter(void) {
  int64_t d[1] = {8};
  float data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  int64_t di[2] = {4, 1}, ind[4] = {4, 3, 1, 7};
  int64_t du[1] = {4};
  float upd[4] = {9, 10, 11, 12};
  ol_value *in[3] = {tk_f32(1, d, data), tk_i64(2, di, ind), tk_f32(1, du, upd)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("ScatterND", 13, NULL, 0, in, 3, &out, 1));
  float want[8] = {1, 11, 3, 10, 9, 6, 7, 12};
  CHECK(eq_f32(out, want, 8));
  CHECK(((float *)ol_tdata(&in[0]->tensor))[1] == 2); /* input untouched */
  ol_value_release(out);
  ((int64_t *)ol_tdata(&in[1]->tensor))[3] = 3; /* duplicate index with add */
  ol_attr red = tk_attr_string("reduction", "add");
  CHECK_OK(tk_run("ScatterND", 16, &red, 1, in, 3, &out, 1));
  float want2[8] = {1, 13, 3, 26, 14, 6, 7, 8};
  CHECK(eq_f32(out, want2, 8));
  ol_value_release(out);
  ol_attr rmax = tk_attr_string("reduction", "max");
  CHECK_STATUS(tk_run("ScatterND", 16, &rmax, 1, in, 3, &out, 1), OL_INVALID_MODEL);
  CHECK_OK(tk_run("ScatterND", 18, &rmax, 1, in, 3, &out, 1));
  float want3[8] = {1, 11, 3, 12, 9, 6, 7, 8};
  CHECK(eq_f32(out, want3, 8));
  ol_value_release(out);
  ((int64_t *)ol_tdata(&in[1]->tensor))[0] = 8;
  CHECK_STATUS(tk_run("ScatterND", 13, NULL, 0, in, 3, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(in, 3);

  /* ScatterElements axis 1 with negative index and mul reduction */
  int64_t d2[2] = {1, 5};
  float data2[5] = {1, 2, 3, 4, 5};
  int64_t di2[2] = {1, 2}, ind2[2] = {1, -2};
  float upd2[2] = {10, 20};
  in[0] = tk_f32(2, d2, data2);
  in[1] = tk_i64(2, di2, ind2);
  in[2] = tk_f32(2, di2, upd2);
  ol_attr attrs[2] = {tk_attr_int("axis", 1), tk_attr_string("reduction", "mul")};
  CHECK_OK(tk_run("ScatterElements", 18, attrs, 1, in, 3, &out, 1));
  float w4[5] = {1, 10, 3, 20, 5};
  CHECK(eq_f32(out, w4, 5));
  ol_value_release(out);
  CHECK_OK(tk_run("ScatterElements", 18, attrs, 2, in, 3, &out, 1));
  float w5[5] = {1, 20, 3, 80, 5};
  CHECK(eq_f32(out, w5, 5));
  ol_value_release(out);
  CHECK_OK(tk_run("Scatter", 10, attrs, 1, in, 3, &out, 1));
  CHECK(eq_f32(out, w4, 5));
  ol_value_release(out);
  tk_release_all(in, 3);
}

/* ------------------------------------------------------------ Transpose / Expand / Tile */

static void test_transpose(void) {
  int64_t d[3] = {2, 3, 4};
  ol_value *x = iota_f32(3, d);
  int64_t perm[3] = {1, 2, 0};
  ol_attr p = tk_attr_ints("perm", perm, 3);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Transpose", 13, &p, 1, &x, 1, &out, 1));
  int64_t w[3] = {3, 4, 2};
  CHECK(tk_shape_is(out, 3, w));
  bool ok = out != NULL;
  for (int i = 0; ok && i < 3; i++)
    for (int j = 0; j < 4; j++)
      for (int k = 0; k < 2; k++)
        ok = ok && ((float *)ol_tdata(&out->tensor))[(i * 4 + j) * 2 + k] == (float)(k * 12 + i * 4 + j);
  CHECK(ok);
  ol_value_release(out);
  /* default: reverse */
  CHECK_OK(tk_run("Transpose", 13, NULL, 0, &x, 1, &out, 1));
  int64_t wr[3] = {4, 3, 2};
  CHECK(tk_shape_is(out, 3, wr) && ((float *)ol_tdata(&out->tensor))[1] == 12.0f);
  ol_value_release(out);
  int64_t bad[3] = {0, 0, 1};
  ol_attr pb = tk_attr_ints("perm", bad, 3);
  CHECK_STATUS(tk_run("Transpose", 13, &pb, 1, &x, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(x);

  /* large 2-D (blocked path) in several element sizes, and last-axis-kept */
  int64_t d2[2] = {67, 45};
  ol_value *m = iota_f32(2, d2);
  CHECK_OK(tk_run("Transpose", 13, NULL, 0, &m, 1, &out, 1));
  ok = out != NULL;
  for (int i = 0; ok && i < 45; i++)
    for (int j = 0; j < 67; j++) ok = ok && ((float *)ol_tdata(&out->tensor))[i * 67 + j] == (float)(j * 45 + i);
  CHECK(ok);
  ol_value_release(out);
  ol_value_release(m);
  ol_value *m16 = tk_tensor(OL_DTYPE_FLOAT16, 2, d2, NULL);
  for (int i = 0; i < 67 * 45; i++) ((uint16_t *)ol_tdata(&m16->tensor))[i] = (uint16_t)i;
  CHECK_OK(tk_run("Transpose", 13, NULL, 0, &m16, 1, &out, 1));
  CHECK(out && ((uint16_t *)ol_tdata(&out->tensor))[1] == 45 &&
        ((uint16_t *)ol_tdata(&out->tensor))[67] == 1);
  ol_value_release(out);
  ol_value_release(m16);
  int64_t d4[4] = {2, 3, 2, 5};
  ol_value *t4 = iota_f32(4, d4);
  int64_t perm4[4] = {2, 0, 1, 3};
  ol_attr p4 = tk_attr_ints("perm", perm4, 4);
  CHECK_OK(tk_run("Transpose", 13, &p4, 1, &t4, 1, &out, 1));
  /* out[a][b][c][e] = in[b][c][a][e] */
  ok = out != NULL;
  for (int a = 0; ok && a < 2; a++)
    for (int b = 0; b < 2; b++)
      for (int c = 0; c < 3; c++)
        for (int e = 0; e < 5; e++)
          ok = ok && ((float *)ol_tdata(&out->tensor))[((a * 2 + b) * 3 + c) * 5 + e] ==
                         (float)(((b * 3 + c) * 2 + a) * 5 + e);
  CHECK(ok);
  ol_value_release(out);
  ol_value_release(t4);

  /* strings */
  int64_t ds[2] = {1, 2};
  ol_value *s = tk_tensor(OL_DTYPE_STRING, 2, ds, NULL);
  CHECK_OK(ol_tensor_set_string(s, 1, "xy", 2));
  CHECK_OK(tk_run("Transpose", 13, NULL, 0, &s, 1, &out, 1));
  const char *bytes;
  size_t len;
  CHECK_OK(ol_tensor_get_string(out, 1, &bytes, &len));
  CHECK(len == 2 && bytes[1] == 'y');
  ol_value_release(out);
  ol_value_release(s);
}

static void test_expand_tile(void) {
  int64_t d[2] = {3, 1};
  float data[3] = {1, 2, 3};
  int64_t sh[3] = {2, 1, 2};
  ol_value *in[2] = {tk_f32(2, d, data), vec_i64(3, sh)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Expand", 13, NULL, 0, in, 2, &out, 1));
  int64_t w[3] = {2, 3, 2};
  float want[12] = {1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3};
  CHECK(tk_shape_is(out, 3, w) && eq_f32(out, want, 12));
  ol_value_release(out);
  ol_value_release(in[1]);
  int64_t bad[1] = {2};
  int64_t d2[1] = {3};
  ol_value *v3 = tk_f32(1, d2, data);
  ol_value *bin[2] = {v3, vec_i64(1, bad)};
  CHECK_STATUS(tk_run("Expand", 13, NULL, 0, bin, 2, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(bin, 2);

  int64_t reps[2] = {2, 3};
  in[1] = vec_i64(2, reps);
  CHECK_OK(tk_run("Tile", 13, NULL, 0, in, 2, &out, 1));
  int64_t wt[2] = {6, 3};
  float want2[18] = {1, 1, 1, 2, 2, 2, 3, 3, 3, 1, 1, 1, 2, 2, 2, 3, 3, 3};
  CHECK(tk_shape_is(out, 2, wt) && eq_f32(out, want2, 18));
  ol_value_release(out);
  ol_value_release(in[1]);
  int64_t reps1[1] = {2};
  in[1] = vec_i64(1, reps1);
  CHECK_STATUS(tk_run("Tile", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  tk_release_all(in, 2);

  int64_t dd[2] = {2, 2};
  ol_value *m = iota_f32(2, dd);
  int64_t r2[2] = {2, 2};
  ol_value *tin[2] = {m, vec_i64(2, r2)};
  CHECK_OK(tk_run("Tile", 13, NULL, 0, tin, 2, &out, 1));
  float want3[16] = {0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3};
  CHECK(eq_f32(out, want3, 16));
  ol_value_release(out);
  tk_release_all(tin, 2);
}

/* ------------------------------------------------------------ CenterCropPad */

static void test_center_crop_pad(void) {
  /* [3, 4]: axis 0 padded to 6 (1 before, 2 after), axis 1 cropped to 1 (from 1) */
  int64_t d[2] = {3, 4}, target[2] = {6, 1};
  ol_value *x = iota_f32(2, d), *in[2] = {x, vec_i64(2, target)}, *out = NULL;
  CHECK_OK(tk_run("CenterCropPad", 18, NULL, 0, in, 2, &out, 1));
  int64_t w[2] = {6, 1};
  float want[6] = {0, 1, 5, 9, 0, 0};
  CHECK(tk_shape_is(out, 2, w) && eq_f32(out, want, 6));
  ol_value_release(out);
  ol_value_release(in[1]);

  /* axes [-1]: only the last axis, 4 -> 7 (1 before, 2 after) */
  int64_t axes[1] = {-1}, t1[1] = {7};
  ol_attr ax = tk_attr_ints("axes", axes, 1);
  in[1] = vec_i64(1, t1);
  CHECK_OK(tk_run("CenterCropPad", 18, &ax, 1, in, 2, &out, 1));
  int64_t w1[2] = {3, 7};
  float want1[21] = {0, 0, 1, 2, 3, 0, 0, 0, 4, 5, 6, 7, 0, 0, 0, 8, 9, 10, 11, 0, 0};
  CHECK(tk_shape_is(out, 2, w1) && eq_f32(out, want1, 21));
  ol_value_release(out);
  ol_value_release(in[1]);

  /* a zero target gives an empty result */
  int64_t t0[1] = {0};
  in[1] = vec_i64(1, t0);
  CHECK_OK(tk_run("CenterCropPad", 18, &ax, 1, in, 2, &out, 1));
  int64_t w0[2] = {3, 0};
  CHECK(tk_shape_is(out, 2, w0));
  ol_value_release(out);
  ol_value_release(in[1]);

  /* errors: a shape for the wrong number of axes, a negative extent, a repeated axis */
  int64_t t2[2] = {2, 2}, neg[1] = {-1}, rep[2] = {1, -1};
  in[1] = vec_i64(2, t2);
  CHECK_STATUS(tk_run("CenterCropPad", 18, &ax, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_attr ax2 = tk_attr_ints("axes", rep, 2);
  CHECK_STATUS(tk_run("CenterCropPad", 18, &ax2, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  in[1] = vec_i64(1, neg);
  CHECK_STATUS(tk_run("CenterCropPad", 18, &ax, 1, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  ol_value_release(x);
}

/* ------------------------------------------------------------ Pad */

static void test_pad(void) {
  int64_t d[2] = {2, 3};
  float data[6] = {1, 2, 3, 4, 5, 6};
  int64_t pads[4] = {0, 2, 1, 0};
  float cv = 9;
  ol_value *in[3] = {tk_f32(2, d, data), vec_i64(4, pads), tk_f32(0, NULL, &cv)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("Pad", 13, NULL, 0, in, 3, &out, 1));
  int64_t w[2] = {3, 5};
  float want[15] = {9, 9, 1, 2, 3, 9, 9, 4, 5, 6, 9, 9, 9, 9, 9};
  CHECK(tk_shape_is(out, 2, w) && eq_f32(out, want, 15));
  ol_value_release(out);

  ol_attr refl = tk_attr_string("mode", "reflect");
  CHECK_OK(tk_run("Pad", 13, &refl, 1, in, 2, &out, 1));
  float wr[15] = {3, 2, 1, 2, 3, 6, 5, 4, 5, 6, 3, 2, 1, 2, 3};
  CHECK(eq_f32(out, wr, 15));
  ol_value_release(out);
  ol_attr edge = tk_attr_string("mode", "edge");
  CHECK_OK(tk_run("Pad", 13, &edge, 1, in, 2, &out, 1));
  float we[15] = {1, 1, 1, 2, 3, 4, 4, 4, 5, 6, 4, 4, 4, 5, 6};
  CHECK(eq_f32(out, we, 15));
  ol_value_release(out);
  ol_attr wrap = tk_attr_string("mode", "wrap");
  CHECK_OK(tk_run("Pad", 19, &wrap, 1, in, 2, &out, 1));
  float ww[15] = {2, 3, 1, 2, 3, 5, 6, 4, 5, 6, 2, 3, 1, 2, 3};
  CHECK(eq_f32(out, ww, 15));
  ol_value_release(out);
  ol_attr badm = tk_attr_string("mode", "mirror");
  CHECK_STATUS(tk_run("Pad", 13, &badm, 1, in, 2, &out, 1), OL_INVALID_MODEL);
  ol_value_release(in[1]);

  /* negative pads crop; axes input (18) */
  int64_t p2[2] = {-1, 1};
  int64_t axes[1] = {1};
  ol_value *ain[4] = {in[0], vec_i64(2, p2), NULL, vec_i64(1, axes)};
  CHECK_OK(tk_run("Pad", 18, NULL, 0, ain, 4, &out, 1));
  float wa[6] = {2, 3, 0, 5, 6, 0};
  CHECK(eq_f32(out, wa, 6));
  ol_value_release(out);
  ol_value_release(ain[1]);
  ol_value_release(ain[3]);
  int64_t p3[3] = {1, 1, 1};
  in[1] = vec_i64(3, p3);
  CHECK_STATUS(tk_run("Pad", 13, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);

  /* opset 2: pads and value attributes */
  int64_t ap[4] = {1, 0, 0, 0};
  ol_attr a2[2] = {tk_attr_ints("pads", ap, 4), tk_attr_float("value", 1.5f)};
  CHECK_OK(tk_run("Pad", 2, a2, 2, in, 1, &out, 1));
  float w2[9] = {1.5f, 1.5f, 1.5f, 1, 2, 3, 4, 5, 6};
  CHECK(eq_f32(out, w2, 9));
  ol_value_release(out);
  ol_value_release(in[0]);
  ol_value_release(in[2]);
}

/* ------------------------------------------------------------ DepthToSpace / SpaceToDepth / Compress */

static void test_depth_space(void) {
  int64_t d[4] = {1, 8, 2, 3};
  ol_value *x = iota_f32(4, d);
  ol_attr a[2] = {tk_attr_int("blocksize", 2), tk_attr_string("mode", "DCR")};
  ol_value *out = NULL, *back = NULL;
  CHECK_OK(tk_run("DepthToSpace", 13, a, 2, &x, 1, &out, 1));
  int64_t w[4] = {1, 2, 4, 6};
  CHECK(tk_shape_is(out, 4, w));
  /* DCR: out[0][c][h*2+i][w*2+j] = in[0][(i*2+j)*2+c][h][w] */
  CHECK(out && ((float *)ol_tdata(&out->tensor))[1] == 12.0f);  /* c0 h0 i0 w0 j1 -> ch 2 */
  CHECK(out && ((float *)ol_tdata(&out->tensor))[6] == 24.0f);  /* row 1 = i1 -> ch 4 */
  CHECK(out && ((float *)ol_tdata(&out->tensor))[24] == 6.0f);  /* c1 -> ch 1 */
  ol_value_release(out);
  ol_attr crd[2] = {tk_attr_int("blocksize", 2), tk_attr_string("mode", "CRD")};
  CHECK_OK(tk_run("DepthToSpace", 13, crd, 2, &x, 1, &out, 1));
  /* CRD: out[0][c][h*2+i][w*2+j] = in[0][c*4+i*2+j][h][w] */
  CHECK(out && ((float *)ol_tdata(&out->tensor))[1] == 6.0f);
  CHECK(out && ((float *)ol_tdata(&out->tensor))[24] == 24.0f);
  /* SpaceToDepth inverts DCR DepthToSpace */
  ol_value_release(out);
  CHECK_OK(tk_run("DepthToSpace", 13, a, 2, &x, 1, &out, 1));
  CHECK_OK(tk_run("SpaceToDepth", 13, a, 1, &out, 1, &back, 1));
  CHECK(tk_shape_is(back, 4, d) && eq_f32(back, ol_tdata(&x->tensor), 48));
  ol_value_release(back);
  ol_value_release(out);
  ol_attr b3 = tk_attr_int("blocksize", 3);
  CHECK_STATUS(tk_run("DepthToSpace", 13, &b3, 1, &x, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(x);
}

static void test_compress(void) {
  int64_t d[2] = {3, 2};
  ol_value *x = iota_f32(2, d);
  int64_t cd[1] = {3};
  uint8_t cond[3] = {0, 1, 1};
  ol_value *in[2] = {x, tk_tensor(OL_DTYPE_BOOL, 1, cd, cond)};
  ol_attr ax = tk_attr_int("axis", 0);
  ol_value *out = NULL;
  CHECK_OK(tk_run("Compress", 11, &ax, 1, in, 2, &out, 1));
  float want[4] = {2, 3, 4, 5};
  CHECK(eq_f32(out, want, 4));
  ol_value_release(out);
  CHECK_OK(tk_run("Compress", 11, NULL, 0, in, 2, &out, 1));
  float want2[2] = {1, 2};
  CHECK(eq_f32(out, want2, 2) && out->tensor.rank == 1);
  ol_value_release(out);
  tk_release_all(in, 2);
}

/* ------------------------------------------------------------ ordering */

static void test_argmax_topk(void) {
  int64_t d[2] = {2, 3};
  float data[6] = {1, 5, 5, 7, 2, 7};
  ol_value *x = tk_f32(2, d, data);
  ol_attr a[2] = {tk_attr_int("axis", 1), tk_attr_int("keepdims", 0)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("ArgMax", 13, a, 2, &x, 1, &out, 1));
  int64_t w[2] = {1, 0};
  CHECK(eq_i64(out, w, 2) && out->tensor.rank == 1);
  ol_value_release(out);
  ol_attr al[3] = {a[0], a[1], tk_attr_int("select_last_index", 1)};
  CHECK_OK(tk_run("ArgMax", 13, al, 3, &x, 1, &out, 1));
  int64_t wl[2] = {2, 2};
  CHECK(eq_i64(out, wl, 2));
  ol_value_release(out);
  CHECK_OK(tk_run("ArgMin", 13, NULL, 0, &x, 1, &out, 1));
  int64_t wm[3] = {0, 1, 0};
  int64_t ws[2] = {1, 3};
  CHECK(tk_shape_is(out, 2, ws) && eq_i64(out, wm, 3));
  ol_value_release(out);

  ol_value *in[2] = {x, vec_i64(1, (int64_t[]){2})};
  ol_value *tk[2] = {NULL, NULL};
  CHECK_OK(tk_run("TopK", 11, NULL, 0, in, 2, tk, 2));
  float tv[4] = {5, 5, 7, 7};
  int64_t ti[4] = {1, 2, 0, 2};
  CHECK(eq_f32(tk[0], tv, 4) && eq_i64(tk[1], ti, 4));
  tk_release_all(tk, 2);
  ol_attr small = tk_attr_int("largest", 0);
  CHECK_OK(tk_run("TopK", 11, &small, 1, in, 2, tk, 2));
  float sv[4] = {1, 5, 2, 7};
  int64_t si[4] = {0, 1, 1, 0};
  CHECK(eq_f32(tk[0], sv, 4) && eq_i64(tk[1], si, 4));
  tk_release_all(tk, 2);
  ol_value_release(in[1]);
  in[1] = vec_i64(1, (int64_t[]){4});
  CHECK_STATUS(tk_run("TopK", 11, NULL, 0, in, 2, tk, 2), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  ol_attr k1 = tk_attr_int("k", 1);
  CHECK_OK(tk_run("TopK", 1, &k1, 1, &x, 1, tk, 2));
  float t1[2] = {5, 7};
  CHECK(eq_f32(tk[0], t1, 2));
  tk_release_all(tk, 2);

  CHECK_OK(tk_run("Hardmax", 13, NULL, 0, &x, 1, &out, 1));
  float hm[6] = {0, 1, 0, 1, 0, 0};
  CHECK(eq_f32(out, hm, 6));
  ol_value_release(out);
  ol_attr h0 = tk_attr_int("axis", 0);
  CHECK_OK(tk_run("Hardmax", 11, &h0, 1, &x, 1, &out, 1));
  float hm0[6] = {0, 0, 0, 1, 0, 0};
  CHECK(eq_f32(out, hm0, 6));
  ol_value_release(out);
  ol_value_release(x);
}

static void test_cumsum_unique(void) {
  int64_t d[1] = {4};
  float data[4] = {1, 2, 3, 4};
  ol_value *in[2] = {tk_f32(1, d, data), scalar_i64(0)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("CumSum", 14, NULL, 0, in, 2, &out, 1));
  float w[4] = {1, 3, 6, 10};
  CHECK(eq_f32(out, w, 4));
  ol_value_release(out);
  ol_attr ex[2] = {tk_attr_int("exclusive", 1), tk_attr_int("reverse", 1)};
  CHECK_OK(tk_run("CumSum", 14, ex, 2, in, 2, &out, 1));
  float w2[4] = {9, 7, 4, 0};
  CHECK(eq_f32(out, w2, 4));
  ol_value_release(out);
  tk_release_all(in, 2);

  int64_t u[6] = {2, 1, 1, 3, 4, 3};
  int64_t six = 6;
  ol_value *x = tk_i64(1, &six, u);
  ol_value *o[4] = {NULL};
  CHECK_OK(tk_run("Unique", 11, NULL, 0, &x, 1, o, 4));
  int64_t y[4] = {1, 2, 3, 4}, idx[4] = {1, 0, 3, 4}, inv[6] = {1, 0, 0, 2, 3, 2},
          cnt[4] = {2, 1, 2, 1};
  CHECK(eq_i64(o[0], y, 4) && eq_i64(o[1], idx, 4) && eq_i64(o[2], inv, 6) &&
        eq_i64(o[3], cnt, 4));
  tk_release_all(o, 4);
  ol_attr ns = tk_attr_int("sorted", 0);
  CHECK_OK(tk_run("Unique", 11, &ns, 1, &x, 1, o, 4));
  int64_t y2[4] = {2, 1, 3, 4}, inv2[6] = {0, 1, 1, 2, 3, 2};
  CHECK(eq_i64(o[0], y2, 4) && eq_i64(o[2], inv2, 6));
  tk_release_all(o, 4);
  ol_value_release(x);

  int64_t d2[2] = {3, 2};
  float rows[6] = {1, 0, 0, 1, 1, 0};
  ol_value *m = tk_f32(2, d2, rows);
  ol_attr ax = tk_attr_int("axis", 0);
  CHECK_OK(tk_run("Unique", 11, &ax, 1, &m, 1, o, 4));
  int64_t w3[2] = {2, 2};
  float uy[4] = {0, 1, 1, 0};
  int64_t ucnt[2] = {1, 2};
  CHECK(tk_shape_is(o[0], 2, w3) && eq_f32(o[0], uy, 4) && eq_i64(o[3], ucnt, 2));
  tk_release_all(o, 4);
  ol_value_release(m);
}

OL_TEST_MAIN(TEST(test_concat), TEST(test_split), TEST(test_slice), TEST(test_gather),
             TEST(test_gather_elements_nd), TEST(test_scatter), TEST(test_transpose),
             TEST(test_expand_tile), TEST(test_pad), TEST(test_center_crop_pad), TEST(test_depth_space), TEST(test_compress),
             TEST(test_argmax_topk), TEST(test_cumsum_unique))
