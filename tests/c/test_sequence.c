/* Sequence and optional kernels: SequenceConstruct/Empty/Insert/Erase/At/Length,
 * SplitToSequence, ConcatFromSequence, SequenceMap, Optional,
 * OptionalHasElement, OptionalGetElement; their error paths; a session run. */
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "kernel_util.h"

static ol_value *vec_f32(int64_t n, const float *v) { return tk_f32(1, &n, v); }
static ol_value *scalar_i64(int64_t v) { return tk_i64(0, NULL, &v); }
static ol_value *scalar_f32(float v) { return tk_f32(0, NULL, &v); }

static ol_value *seq_of(ol_value **items, size_t n) {
  ol_value *s = NULL;
  ol_sequence_create(n ? items[0]->tensor.dtype : OL_DTYPE_FLOAT, items, n, &s);
  return s;
}

static bool eq_f32(const ol_value *v, const float *want, int64_t n) {
  if (!v || v->kind != OL_VALUE_TENSOR || v->tensor.dtype != OL_DTYPE_FLOAT || ol_tcount(&v->tensor) != n)
    return false;
  const float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < n; i++)
    if (d[i] != want[i]) return false;
  return true;
}
static float first_f32(const ol_value *v) { return *(const float *)ol_tdata(&v->tensor); }
static int64_t scalar_of(const ol_value *v) { return *(const int64_t *)ol_tdata(&v->tensor); }
static bool bool_of(const ol_value *v) {
  return v && v->kind == OL_VALUE_TENSOR && v->tensor.dtype == OL_DTYPE_BOOL && v->tensor.rank == 0 &&
         *(const uint8_t *)ol_tdata(&v->tensor) != 0;
}

/* ------------------------------------------------------------ construct / empty / length */

static void test_construct(void) {
  ol_value *in[3] = {scalar_f32(1), scalar_f32(2), scalar_f32(3)};
  ol_value *out = NULL;
  CHECK_OK(tk_run("SequenceConstruct", 11, NULL, 0, in, 3, &out, 1));
  CHECK(out && out->kind == OL_VALUE_SEQUENCE && out->count == 3);
  CHECK(out && out->element_dtype == OL_DTYPE_FLOAT);
  CHECK(out && out->items[1] == in[1]); /* retained, not copied */
  CHECK(in[1]->refcount == 2);
  ol_value_release(out);
  CHECK(in[1]->refcount == 1);

  ol_value *mixed[2] = {in[0], scalar_i64(4)};
  CHECK_STATUS(tk_run("SequenceConstruct", 11, NULL, 0, mixed, 2, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "input 1 is int64") != NULL);
  ol_value *absent[2] = {in[0], NULL};
  CHECK_STATUS(tk_run("SequenceConstruct", 11, NULL, 0, absent, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value *nested[1] = {seq_of(in, 2)};
  CHECK_STATUS(tk_run("SequenceConstruct", 11, NULL, 0, nested, 1, &out, 1), OL_INVALID_ARGUMENT);
  CHECK_STATUS(tk_run("SequenceConstruct", 10, NULL, 0, in, 1, &out, 1), OL_NOT_IMPLEMENTED);
  CHECK(out == NULL);
  ol_value_release(nested[0]);
  ol_value_release(mixed[1]);
  for (int i = 0; i < 3; i++) ol_value_release(in[i]);
}

static void test_empty_and_length(void) {
  ol_value *out = NULL, *len = NULL;
  CHECK_OK(tk_run("SequenceEmpty", 11, NULL, 0, NULL, 0, &out, 1));
  CHECK(out && out->kind == OL_VALUE_SEQUENCE && out->count == 0 && out->element_dtype == OL_DTYPE_FLOAT);
  CHECK_OK(tk_run("SequenceLength", 11, NULL, 0, &out, 1, &len, 1));
  CHECK(len && len->tensor.dtype == OL_DTYPE_INT64 && len->tensor.rank == 0 && scalar_of(len) == 0);
  ol_value_release(out);
  ol_value_release(len);

  ol_attr dt = tk_attr_int("dtype", OL_DTYPE_INT64);
  CHECK_OK(tk_run("SequenceEmpty", 23, &dt, 1, NULL, 0, &out, 1));
  CHECK(out && out->element_dtype == OL_DTYPE_INT64);
  ol_value_release(out);
  ol_attr bad = tk_attr_int("dtype", 999);
  CHECK_STATUS(tk_run("SequenceEmpty", 11, &bad, 1, NULL, 0, &out, 1), OL_INVALID_MODEL);

  ol_value *items[3] = {scalar_f32(1), scalar_f32(2), scalar_f32(3)};
  ol_value *seq = seq_of(items, 3);
  CHECK_OK(tk_run("SequenceLength", 11, NULL, 0, &seq, 1, &len, 1));
  CHECK(len && scalar_of(len) == 3);
  ol_value_release(len);
  CHECK_STATUS(tk_run("SequenceLength", 11, NULL, 0, items, 1, &len, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "must be a sequence") != NULL);
  ol_value *none = NULL;
  CHECK_STATUS(tk_run("SequenceLength", 11, NULL, 0, &none, 1, &len, 1), OL_INVALID_ARGUMENT);
  ol_value_release(seq);
  for (int i = 0; i < 3; i++) ol_value_release(items[i]);
}

/* ------------------------------------------------------------ insert / erase / at */

static void test_insert(void) {
  ol_value *items[2] = {scalar_f32(1), scalar_f32(2)};
  ol_value *seq = seq_of(items, 2), *t = scalar_f32(9), *out = NULL;
  ol_value *in[3] = {seq, t, NULL};
  /* no position: append */
  CHECK_OK(tk_run("SequenceInsert", 11, NULL, 0, in, 2, &out, 1));
  CHECK(out && out->count == 3 && out->items[2] == t && out->items[0] == items[0]);
  CHECK(seq->count == 2); /* the input sequence is unchanged */
  ol_value_release(out);
  /* positions: 0 (front), -1 (before the last), 2 (== count: back) */
  const int64_t positions[3] = {0, -1, 2};
  const size_t expected_at[3] = {0, 1, 2};
  for (int i = 0; i < 3; i++) {
    in[2] = scalar_i64(positions[i]);
    CHECK_OK(tk_run("SequenceInsert", 11, NULL, 0, in, 3, &out, 1));
    CHECK(out && out->count == 3 && out->items[expected_at[i]] == t);
    ol_value_release(out);
    ol_value_release(in[2]);
  }
  int32_t p32 = -2;
  in[2] = tk_tensor(OL_DTYPE_INT32, 0, NULL, &p32);
  CHECK_OK(tk_run("SequenceInsert", 23, NULL, 0, in, 3, &out, 1));
  CHECK(out && out->items[0] == t && first_f32(out->items[1]) == 1);
  ol_value_release(out);
  ol_value_release(in[2]);
  /* out of range: [-2, 2] is valid */
  const int64_t bad[2] = {3, -3};
  for (int i = 0; i < 2; i++) {
    in[2] = scalar_i64(bad[i]);
    CHECK_STATUS(tk_run("SequenceInsert", 11, NULL, 0, in, 3, &out, 1), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "out of range") != NULL);
    CHECK(out == NULL);
    ol_value_release(in[2]);
  }
  float fpos = 0;
  in[2] = tk_f32(0, NULL, &fpos);
  CHECK_STATUS(tk_run("SequenceInsert", 11, NULL, 0, in, 3, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[2]);
  int64_t two[2] = {0, 1}, d2 = 2;
  in[2] = tk_i64(1, &d2, two);
  CHECK_STATUS(tk_run("SequenceInsert", 11, NULL, 0, in, 3, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[2]);
  /* wrong element type, wrong container */
  ol_value *wrong[2] = {seq, scalar_i64(1)};
  CHECK_STATUS(tk_run("SequenceInsert", 11, NULL, 0, wrong, 2, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "int64") != NULL);
  ol_value *not_seq[2] = {t, t};
  CHECK_STATUS(tk_run("SequenceInsert", 11, NULL, 0, not_seq, 2, &out, 1), OL_INVALID_ARGUMENT);
  /* into an empty sequence of unknown type */
  ol_value *empty = NULL;
  ol_sequence_create(OL_DTYPE_UNDEFINED, NULL, 0, &empty);
  ol_value *into_empty[2] = {empty, wrong[1]};
  CHECK_OK(tk_run("SequenceInsert", 11, NULL, 0, into_empty, 2, &out, 1));
  CHECK(out && out->count == 1 && out->element_dtype == OL_DTYPE_INT64);
  ol_value_release(out);
  ol_value_release(empty);
  ol_value_release(wrong[1]);
  ol_value_release(t);
  ol_value_release(seq);
  for (int i = 0; i < 2; i++) {
    CHECK(items[i]->refcount == 1);
    ol_value_release(items[i]);
  }
}

static void test_erase_and_at(void) {
  ol_value *items[3] = {scalar_f32(1), scalar_f32(2), scalar_f32(3)};
  ol_value *seq = seq_of(items, 3), *out = NULL;
  ol_value *in[2] = {seq, NULL};
  CHECK_OK(tk_run("SequenceErase", 11, NULL, 0, in, 1, &out, 1)); /* default: the last */
  CHECK(out && out->count == 2 && out->items[0] == items[0] && out->items[1] == items[1]);
  CHECK(out && out->element_dtype == OL_DTYPE_FLOAT);
  ol_value_release(out);
  in[1] = scalar_i64(-3);
  CHECK_OK(tk_run("SequenceErase", 11, NULL, 0, in, 2, &out, 1));
  CHECK(out && out->count == 2 && out->items[0] == items[1] && out->items[1] == items[2]);
  ol_value_release(out);
  ol_value_release(in[1]);
  in[1] = scalar_i64(3); /* [-3, 2] is valid */
  CHECK_STATUS(tk_run("SequenceErase", 11, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  in[1] = scalar_i64(-4);
  CHECK_STATUS(tk_run("SequenceErase", 11, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);

  /* SequenceAt returns the item itself */
  ol_value *at_in[2] = {seq, in[1]};
  CHECK_STATUS(tk_run("SequenceAt", 11, NULL, 0, at_in, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(in[1]);
  const int64_t positions[4] = {0, 2, -1, -3};
  const int want[4] = {0, 2, 2, 0};
  for (int i = 0; i < 4; i++) {
    at_in[1] = scalar_i64(positions[i]);
    CHECK_OK(tk_run("SequenceAt", 11, NULL, 0, at_in, 2, &out, 1));
    CHECK(out == items[want[i]]);
    ol_value_release(out);
    ol_value_release(at_in[1]);
  }
  at_in[1] = scalar_i64(3);
  CHECK_STATUS(tk_run("SequenceAt", 11, NULL, 0, at_in, 2, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "position 3 is out of range [-3, 2]") != NULL);
  ol_value_release(at_in[1]);
  at_in[1] = NULL;
  CHECK_STATUS(tk_run("SequenceAt", 11, NULL, 0, at_in, 2, &out, 1), OL_INVALID_ARGUMENT);

  /* empty sequences: nothing to erase or read */
  ol_value *empty = NULL;
  CHECK_OK(tk_run("SequenceEmpty", 11, NULL, 0, NULL, 0, &empty, 1));
  CHECK_STATUS(tk_run("SequenceErase", 11, NULL, 0, &empty, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value *empty_at[2] = {empty, scalar_i64(0)};
  CHECK_STATUS(tk_run("SequenceAt", 11, NULL, 0, empty_at, 2, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(empty_at[1]);
  ol_value_release(empty);
  ol_value_release(seq);
  for (int i = 0; i < 3; i++) {
    CHECK(items[i]->refcount == 1);
    ol_value_release(items[i]);
  }
}

/* ------------------------------------------------------------ SplitToSequence */

static ol_value *iota_f32(int rank, const int64_t *dims) {
  ol_value *v = tk_f32(rank, dims, NULL);
  float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < ol_tcount(&v->tensor); i++) d[i] = (float)i;
  return v;
}

static void test_split_to_sequence(void) {
  int64_t dims[2] = {3, 2};
  ol_value *x = iota_f32(2, dims), *out = NULL;
  ol_value *in[2] = {x, NULL};
  /* no split, keepdims=1: pieces of 1 along axis 0, views on x */
  CHECK_OK(tk_run("SplitToSequence", 11, NULL, 0, in, 1, &out, 1));
  int64_t d12[2] = {1, 2};
  CHECK(out && out->kind == OL_VALUE_SEQUENCE && out->count == 3 && out->element_dtype == OL_DTYPE_FLOAT);
  if (out && out->count == 3) {
    const float w2[2] = {4, 5};
    CHECK(tk_shape_is(out->items[2], 2, d12) && eq_f32(out->items[2], w2, 2));
    CHECK(out->items[2]->tensor.buffer == x->tensor.buffer); /* zero copy */
  }
  ol_value_release(out);
  /* keepdims=0 removes the axis; axis=-1 splits columns (copied) */
  ol_attr attrs[2] = {tk_attr_int("axis", -1), tk_attr_int("keepdims", 0)};
  CHECK_OK(tk_run("SplitToSequence", 11, attrs, 2, in, 1, &out, 1));
  int64_t d3[1] = {3};
  CHECK(out && out->count == 2);
  if (out && out->count == 2) {
    const float c1[3] = {1, 3, 5};
    CHECK(tk_shape_is(out->items[1], 1, d3) && eq_f32(out->items[1], c1, 3));
  }
  ol_value_release(out);
  /* scalar split: chunks of 2, the last smaller; keepdims ignored */
  in[1] = scalar_i64(2);
  ol_attr keep0 = tk_attr_int("keepdims", 0);
  CHECK_OK(tk_run("SplitToSequence", 11, &keep0, 1, in, 2, &out, 1));
  CHECK(out && out->count == 2);
  if (out && out->count == 2) {
    const float last[2] = {4, 5};
    int64_t d22[2] = {2, 2};
    CHECK(tk_shape_is(out->items[0], 2, d22));
    CHECK(tk_shape_is(out->items[1], 2, d12) && eq_f32(out->items[1], last, 2));
  }
  ol_value_release(out);
  ol_value_release(in[1]);
  /* 1-D split (int32) with a zero-length part */
  int32_t parts[3] = {1, 0, 2};
  int64_t n3 = 3;
  in[1] = tk_tensor(OL_DTYPE_INT32, 1, &n3, parts);
  CHECK_OK(tk_run("SplitToSequence", 11, NULL, 0, in, 2, &out, 1));
  CHECK(out && out->count == 3);
  if (out && out->count == 3) {
    int64_t d02[2] = {0, 2}, d22[2] = {2, 2};
    const float tail[4] = {2, 3, 4, 5};
    CHECK(tk_shape_is(out->items[1], 2, d02));
    CHECK(tk_shape_is(out->items[2], 2, d22) && eq_f32(out->items[2], tail, 4));
  }
  ol_value_release(out);
  ol_value_release(in[1]);
  /* errors: bad sums, negative parts, non-positive chunk, float split, scalar input, bad axis */
  int64_t bad_sum[2] = {1, 1}, negative[2] = {4, -1}, n2 = 2;
  ol_value *bads[4] = {tk_i64(1, &n2, bad_sum), tk_i64(1, &n2, negative), scalar_i64(0), scalar_f32(1)};
  for (int i = 0; i < 4; i++) {
    in[1] = bads[i];
    CHECK_STATUS(tk_run("SplitToSequence", 11, NULL, 0, in, 2, &out, 1), OL_INVALID_ARGUMENT);
    CHECK(out == NULL);
    ol_value_release(bads[i]);
  }
  ol_value *s = scalar_f32(1);
  CHECK_STATUS(tk_run("SplitToSequence", 11, NULL, 0, &s, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(s);
  ol_attr axis2 = tk_attr_int("axis", 2);
  CHECK_STATUS(tk_run("SplitToSequence", 11, &axis2, 1, in, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(x);

  /* strings are copied element by element */
  int64_t n4 = 4;
  ol_value *strs = tk_tensor(OL_DTYPE_STRING, 1, &n4, NULL);
  const char *words[4] = {"a", "bb", "ccc", "dddd"};
  for (int i = 0; i < 4; i++) ol_tensor_set_string(strs, (size_t)i, words[i], strlen(words[i]));
  ol_value *sin[2] = {strs, scalar_i64(3)};
  CHECK_OK(tk_run("SplitToSequence", 11, NULL, 0, sin, 2, &out, 1));
  CHECK(out && out->count == 2 && out->element_dtype == OL_DTYPE_STRING);
  if (out && out->count == 2) {
    const char *b;
    size_t blen;
    CHECK_OK(ol_tensor_get_string(out->items[1], 0, &b, &blen));
    CHECK(blen == 4 && memcmp(b, "dddd", 4) == 0);
  }
  ol_value_release(out);
  ol_value_release(sin[1]);
  ol_value_release(strs);

  /* an empty axis gives an empty sequence */
  int64_t d0[2] = {0, 2};
  ol_value *z = tk_f32(2, d0, NULL);
  CHECK_OK(tk_run("SplitToSequence", 11, NULL, 0, &z, 1, &out, 1));
  CHECK(out && out->count == 0 && out->element_dtype == OL_DTYPE_FLOAT);
  ol_value_release(out);
  ol_value_release(z);
}

/* ------------------------------------------------------------ ConcatFromSequence */

static void test_concat_from_sequence(void) {
  int64_t da[2] = {1, 2}, db[2] = {2, 2};
  const float a[2] = {1, 2}, b[4] = {3, 4, 5, 6};
  ol_value *items[2] = {tk_f32(2, da, a), tk_f32(2, db, b)};
  ol_value *seq = seq_of(items, 2), *out = NULL;
  ol_attr ax0 = tk_attr_int("axis", 0);
  CHECK_OK(tk_run("ConcatFromSequence", 11, &ax0, 1, &seq, 1, &out, 1));
  int64_t d32[2] = {3, 2};
  const float w0[6] = {1, 2, 3, 4, 5, 6};
  CHECK(tk_shape_is(out, 2, d32) && eq_f32(out, w0, 6));
  ol_value_release(out);
  ol_attr ax1 = tk_attr_int("axis", 1);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, &ax1, 1, &seq, 1, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "item 1") != NULL);
  ol_value_release(seq);

  /* axis 1 of two [2,1]/[2,2] tensors */
  int64_t dc[2] = {2, 1};
  const float c[2] = {7, 8};
  ol_value *items2[2] = {tk_f32(2, dc, c), items[1]};
  seq = seq_of(items2, 2);
  ol_attr axm1 = tk_attr_int("axis", -1);
  CHECK_OK(tk_run("ConcatFromSequence", 11, &axm1, 1, &seq, 1, &out, 1));
  int64_t d23[2] = {2, 3};
  const float w1[6] = {7, 3, 4, 8, 5, 6};
  CHECK(tk_shape_is(out, 2, d23) && eq_f32(out, w1, 6));
  ol_value_release(out);
  ol_value_release(seq);
  ol_value_release(items2[0]);

  /* new_axis stacks equal shapes; axis may be rank (append a last axis) */
  const float e[2] = {10, 20}, f[2] = {30, 40};
  ol_value *vs[2] = {vec_f32(2, e), vec_f32(2, f)};
  seq = seq_of(vs, 2);
  ol_attr stack0[2] = {tk_attr_int("axis", 0), tk_attr_int("new_axis", 1)};
  CHECK_OK(tk_run("ConcatFromSequence", 11, stack0, 2, &seq, 1, &out, 1));
  int64_t d22[2] = {2, 2};
  const float s0[4] = {10, 20, 30, 40}, s1[4] = {10, 30, 20, 40};
  CHECK(tk_shape_is(out, 2, d22) && eq_f32(out, s0, 4));
  ol_value_release(out);
  ol_attr stack1[2] = {tk_attr_int("axis", 1), tk_attr_int("new_axis", 1)};
  CHECK_OK(tk_run("ConcatFromSequence", 11, stack1, 2, &seq, 1, &out, 1));
  CHECK(tk_shape_is(out, 2, d22) && eq_f32(out, s1, 4));
  ol_value_release(out);
  ol_attr stackm1[2] = {tk_attr_int("axis", -1), tk_attr_int("new_axis", 1)};
  CHECK_OK(tk_run("ConcatFromSequence", 11, stackm1, 2, &seq, 1, &out, 1));
  CHECK(tk_shape_is(out, 2, d22) && eq_f32(out, s1, 4));
  ol_value_release(out);
  ol_attr stack3[2] = {tk_attr_int("axis", 2), tk_attr_int("new_axis", 1)};
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, stack3, 2, &seq, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_attr plain1 = tk_attr_int("axis", 1);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, &plain1, 1, &seq, 1, &out, 1), OL_INVALID_ARGUMENT);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, NULL, 0, &seq, 1, &out, 1), OL_INVALID_MODEL);
  ol_value_release(seq);

  /* stacking scalars; shape mismatch under new_axis; empty and non-sequence inputs */
  ol_value *sc[2] = {scalar_f32(1), scalar_f32(2)};
  seq = seq_of(sc, 2);
  CHECK_OK(tk_run("ConcatFromSequence", 11, stack0, 2, &seq, 1, &out, 1));
  const float w_sc[2] = {1, 2};
  CHECK(tk_shape_is(out, 1, d22) && eq_f32(out, w_sc, 2));
  ol_value_release(out);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, &ax0, 1, &seq, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(seq);
  ol_value *mixed[2] = {vs[0], items[0]};
  seq = seq_of(mixed, 2);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, stack0, 2, &seq, 1, &out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(seq);
  ol_value *empty = NULL;
  ol_sequence_create(OL_DTYPE_FLOAT, NULL, 0, &empty);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, &ax0, 1, &empty, 1, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "empty") != NULL);
  CHECK_STATUS(tk_run("ConcatFromSequence", 11, &ax0, 1, vs, 1, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(out == NULL);
  ol_value_release(empty);
  for (int i = 0; i < 2; i++) {
    ol_value_release(sc[i]);
    ol_value_release(vs[i]);
    ol_value_release(items[i]);
  }
}

/* ------------------------------------------------------------ optionals */

static void test_optional(void) {
  ol_value *t = scalar_f32(5), *out = NULL, *flag = NULL;
  CHECK_OK(tk_run("Optional", 15, NULL, 0, &t, 1, &out, 1));
  CHECK(out && out->kind == OL_VALUE_OPTIONAL && out->contained == t && out->element_dtype == OL_DTYPE_FLOAT);
  CHECK_OK(tk_run("OptionalHasElement", 15, NULL, 0, &out, 1, &flag, 1));
  CHECK(bool_of(flag));
  ol_value_release(flag);
  ol_value *got = NULL;
  CHECK_OK(tk_run("OptionalGetElement", 15, NULL, 0, &out, 1, &got, 1));
  CHECK(got == t);
  ol_value_release(got);
  ol_value_release(out);

  /* optional(seq) */
  ol_value *seq = seq_of(&t, 1);
  CHECK_OK(tk_run("Optional", 15, NULL, 0, &seq, 1, &out, 1));
  CHECK(out && out->contained == seq && out->element_dtype == OL_DTYPE_FLOAT);
  CHECK_OK(tk_run("OptionalGetElement", 18, NULL, 0, &out, 1, &got, 1));
  CHECK(got == seq);
  ol_value_release(got);
  ol_value_release(out);

  /* empty optional from the type attribute */
  Onnx__TypeProto tp = ONNX__TYPE_PROTO__INIT;
  Onnx__TypeProto__Tensor tt = ONNX__TYPE_PROTO__TENSOR__INIT;
  tt.has_elem_type = 1;
  tt.elem_type = OL_DTYPE_INT32;
  tp.value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
  tp.tensor_type = &tt;
  Onnx__AttributeProto ap = ONNX__ATTRIBUTE_PROTO__INIT;
  ap.tp = &tp;
  ol_attr type = {0};
  type.name = "type";
  type.type = OL_ATTR_TYPE_PROTO;
  type.proto = &ap;
  ol_value *none = NULL;
  CHECK_OK(tk_run("Optional", 15, &type, 1, &none, 1, &out, 1));
  CHECK(out && out->kind == OL_VALUE_OPTIONAL && !out->contained && out->element_dtype == OL_DTYPE_INT32);
  CHECK_OK(tk_run("OptionalHasElement", 15, NULL, 0, &out, 1, &flag, 1));
  CHECK(flag && !bool_of(flag));
  ol_value_release(flag);
  CHECK_STATUS(tk_run("OptionalGetElement", 15, NULL, 0, &out, 1, &got, 1), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "empty") != NULL && got == NULL);
  ol_value_release(out);
  CHECK_OK(tk_run("Optional", 15, &type, 1, NULL, 0, &out, 1)); /* no input slot at all */
  CHECK(out && !out->contained);
  ol_value_release(out);

  /* the attribute must be a type; no input and no type is an error */
  ol_attr not_type = tk_attr_int("type", 1);
  CHECK_STATUS(tk_run("Optional", 15, &not_type, 1, &none, 1, &out, 1), OL_INVALID_MODEL);
  CHECK_STATUS(tk_run("Optional", 15, NULL, 0, &none, 1, &out, 1), OL_INVALID_MODEL);
  tp.value_case = ONNX__TYPE_PROTO__VALUE_MAP_TYPE;
  CHECK_STATUS(tk_run("Optional", 15, &type, 1, &none, 1, &out, 1), OL_INVALID_MODEL);
  CHECK_STATUS(tk_run("Optional", 14, NULL, 0, &t, 1, &out, 1), OL_NOT_IMPLEMENTED);
  ol_value *opt = NULL;
  ol_optional_create(t, &opt);
  CHECK_STATUS(tk_run("Optional", 15, NULL, 0, &opt, 1, &out, 1), OL_INVALID_ARGUMENT);
  CHECK(out == NULL);
  ol_value_release(opt);
  ol_value_release(seq);
  CHECK(t->refcount == 1);
  ol_value_release(t);
}

static void test_optional_widening(void) {
  ol_value *t = scalar_f32(1), *flag = NULL, *got = NULL, *none = NULL;
  ol_value *seq = seq_of(&t, 1);
  /* 18: plain tensors and sequences are present elements, an absent input is not */
  CHECK_OK(tk_run("OptionalHasElement", 18, NULL, 0, &t, 1, &flag, 1));
  CHECK(bool_of(flag));
  ol_value_release(flag);
  CHECK_OK(tk_run("OptionalHasElement", 18, NULL, 0, &seq, 1, &flag, 1));
  CHECK(bool_of(flag));
  ol_value_release(flag);
  CHECK_OK(tk_run("OptionalHasElement", 18, NULL, 0, &none, 1, &flag, 1));
  CHECK(flag && !bool_of(flag));
  ol_value_release(flag);
  CHECK_OK(tk_run("OptionalHasElement", 23, NULL, 0, NULL, 0, &flag, 1));
  CHECK(flag && !bool_of(flag));
  ol_value_release(flag);
  CHECK_OK(tk_run("OptionalGetElement", 18, NULL, 0, &t, 1, &got, 1));
  CHECK(got == t);
  ol_value_release(got);
  CHECK_OK(tk_run("OptionalGetElement", 18, NULL, 0, &seq, 1, &got, 1));
  CHECK(got == seq);
  ol_value_release(got);
  CHECK_STATUS(tk_run("OptionalGetElement", 18, NULL, 0, &none, 1, &got, 1), OL_INVALID_ARGUMENT);
  /* 15: an absent input is an error; a bare value (a Loop-carried optional the
   * body handed back unwrapped) counts as present */
  CHECK_STATUS(tk_run("OptionalHasElement", 15, NULL, 0, &none, 1, &flag, 1), OL_INVALID_ARGUMENT);
  CHECK(flag == NULL);
  CHECK_STATUS(tk_run("OptionalGetElement", 15, NULL, 0, &none, 1, &got, 1), OL_INVALID_ARGUMENT);
  CHECK_OK(tk_run("OptionalHasElement", 15, NULL, 0, &seq, 1, &flag, 1));
  CHECK(bool_of(flag));
  ol_value_release(flag);
  CHECK_STATUS(tk_run("OptionalHasElement", 14, NULL, 0, &seq, 1, &flag, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(seq);
  ol_value_release(t);
}

/* ------------------------------------------------------------ through a session */

static ol_session *make_session(const char *text, ol_model **model, ol_allocator *a) {
  ol_session *s = NULL;
  *model = NULL;
  CHECK_OK(ol_model_parse_text(text, model));
  ol_session_options options = {.allocator = a};
  if (*model) CHECK_OK(ol_session_create(*model, &options, &s));
  return s;
}

static const char *ROUND_TRIP =
    "<ir_version: 10, opset_import: [\"\" : 18]>\n"
    "g (float[4,2] x, int64 pos) => (float[5,2] y, int64 n, seq(float[2]) rows) {\n"
    "  parts = SplitToSequence <keepdims = 0> (x)\n"
    "  first = SequenceAt (parts, pos)\n"
    "  grown = SequenceInsert (parts, first)\n"
    "  n = SequenceLength (grown)\n"
    "  y = ConcatFromSequence <axis = 0, new_axis = 1> (grown)\n"
    "  rows = SequenceErase (grown)\n"
    "}\n";

static void test_session_round_trip(void) {
  ol_allocator *a;
  ol_allocator_create(NULL, NULL, NULL, &a);
  ol_model *m;
  ol_session *s = make_session(ROUND_TRIP, &m, a);
  if (!s) {
    ol_model_destroy(m);
    ol_allocator_destroy(a);
    return;
  }
  int64_t dims[2] = {4, 2};
  ol_value *feeds[2] = {iota_f32(2, dims), scalar_i64(-3)};
  const char *names[2] = {"x", "pos"};
  ol_value *out[3] = {0};
  CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 3, NULL));
  int64_t d52[2] = {5, 2};
  const float want[10] = {0, 1, 2, 3, 4, 5, 6, 7, 2, 3};
  CHECK(tk_shape_is(out[0], 2, d52) && eq_f32(out[0], want, 10));
  CHECK(out[1] && scalar_of(out[1]) == 5);
  CHECK(out[2] && out[2]->kind == OL_VALUE_SEQUENCE && out[2]->count == 4);
  for (int i = 0; i < 3; i++) ol_value_release(out[i]);
  /* a bad position fails the run cleanly, and nothing stays allocated */
  ol_value_release(feeds[1]);
  feeds[1] = scalar_i64(4);
  CHECK_STATUS(ol_session_run(s, names, feeds, 2, NULL, out, 3, NULL), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "SequenceAt") != NULL);
  ol_allocator_stats st;
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_bytes == 0);
  /* out of memory at every step: no crash, no leak */
  ol_value_release(feeds[1]);
  feeds[1] = scalar_i64(0);
  for (int64_t k = 0; k < 8; k++) {
    ol_allocator_fail_after(a, k);
    ol_status r = ol_session_run(s, names, feeds, 2, NULL, out, 3, NULL);
    ol_allocator_fail_after(a, -1);
    if (r == OL_OK) {
      for (int i = 0; i < 3; i++) ol_value_release(out[i]);
    } else {
      CHECK(r == OL_OUT_OF_MEMORY);
    }
    ol_allocator_get_stats(a, &st);
    CHECK(st.live_bytes == 0);
  }
  ol_value_release(feeds[0]);
  ol_value_release(feeds[1]);
  ol_session_destroy(s);
  ol_model_destroy(m);
  ol_allocator_destroy(a);
}

static const char *SEQ_MAP =
    "<ir_version: 10, opset_import: [\"\" : 17]>\n"
    "g (seq(float[N]) xs, float[1] bias) => (seq(float[N]) ys, seq(int64[1]) shapes) {\n"
    "  ys, shapes = SequenceMap <body = b (float[M] x, float[1] c) => (float[M] y, int64[1] s) {\n"
    "    y = Add (x, c)\n"
    "    s = Shape (x)\n"
    "  }> (xs, bias)\n"
    "}\n";

static void test_sequence_map(void) {
  ol_model *m;
  ol_session *s = make_session(SEQ_MAP, &m, NULL);
  const float a[3] = {1, 2, 3}, b[1] = {10}, c[1] = {100};
  ol_value *items[2] = {vec_f32(3, a), vec_f32(1, b)};
  ol_value *feeds[2] = {seq_of(items, 2), vec_f32(1, c)};
  const char *names[2] = {"xs", "bias"};
  ol_value *out[2] = {0};
  if (s) {
    CHECK_OK(ol_session_run(s, names, feeds, 2, NULL, out, 2, NULL));
    CHECK(out[0] && out[0]->kind == OL_VALUE_SEQUENCE && out[0]->count == 2);
    CHECK(out[1] && out[1]->kind == OL_VALUE_SEQUENCE && out[1]->count == 2);
    if (out[0] && out[0]->count == 2 && out[1] && out[1]->count == 2) {
      const float w0[3] = {101, 102, 103}, w1[1] = {110};
      CHECK(eq_f32(out[0]->items[0], w0, 3) && eq_f32(out[0]->items[1], w1, 1));
      CHECK(scalar_of(out[1]->items[0]) == 3 && scalar_of(out[1]->items[1]) == 1);
    }
    for (int i = 0; i < 2; i++) ol_value_release(out[i]);
    /* an empty input sequence maps to empty outputs typed by the body */
    ol_value *empty = NULL;
    ol_sequence_create(OL_DTYPE_FLOAT, NULL, 0, &empty);
    ol_value *efeeds[2] = {empty, feeds[1]};
    CHECK_OK(ol_session_run(s, names, efeeds, 2, NULL, out, 2, NULL));
    CHECK(out[0] && out[0]->count == 0 && out[0]->element_dtype == OL_DTYPE_FLOAT);
    CHECK(out[1] && out[1]->count == 0 && out[1]->element_dtype == OL_DTYPE_INT64);
    for (int i = 0; i < 2; i++) ol_value_release(out[i]);
    ol_value_release(empty);
  }
  ol_session_destroy(s);
  ol_model_destroy(m);
  /* a second sequence input must have the same length */
  static const char *TWO =
      "<ir_version: 10, opset_import: [\"\" : 17]>\n"
      "g (seq(float[N]) xs, seq(float[N]) zs) => (seq(float[N]) ys) {\n"
      "  ys = SequenceMap <body = b (float[M] x, float[M] z) => (float[M] y) { y = Add (x, z) }> (xs, zs)\n"
      "}\n";
  s = make_session(TWO, &m, NULL);
  if (s) {
    ol_value *one = seq_of(items, 1);
    ol_value *tfeeds[2] = {feeds[0], one};
    const char *tnames[2] = {"xs", "zs"};
    CHECK_STATUS(ol_session_run(s, tnames, tfeeds, 2, NULL, out, 1, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "sequence input 1 has 1 items") != NULL);
    ol_value_release(one);
  }
  ol_session_destroy(s);
  ol_model_destroy(m);
  /* without a runtime (no subgraph callback) the kernel refuses instead of crashing */
  ol_attr body = {0};
  body.name = "body";
  body.type = OL_ATTR_GRAPH;
  ol_graph g = {0};
  body.graph = &g;
  ol_value *y = NULL;
  CHECK_STATUS(tk_run("SequenceMap", 17, &body, 1, feeds, 1, &y, 1), OL_FAILED_PRECONDITION);
  CHECK_STATUS(tk_run("SequenceMap", 17, NULL, 0, feeds, 1, &y, 1), OL_INVALID_MODEL);
  for (int i = 0; i < 2; i++) {
    ol_value_release(feeds[i]);
    ol_value_release(items[i]);
  }
}

OL_TEST_MAIN(TEST(test_construct), TEST(test_empty_and_length), TEST(test_insert), TEST(test_erase_and_at),
             TEST(test_split_to_sequence), TEST(test_concat_from_sequence), TEST(test_optional),
             TEST(test_optional_widening), TEST(test_session_round_trip), TEST(test_sequence_map))
