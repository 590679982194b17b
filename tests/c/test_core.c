/* Core: status messages, allocators, dtype conversions, values. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/grow.h"
#include "core/status.h"
#include "core/strmap.h"
#include "core/value.h"
#include "harness.h"

static void status_names_and_messages(void) {
  CHECK(strcmp(ol_status_name(OL_INVALID_MODEL), "OL_INVALID_MODEL") == 0);
  CHECK(strcmp(ol_status_name((ol_status)99), "OL_UNKNOWN") == 0);
  CHECK(ol_error(OL_NOT_FOUND, "value '%s' missing", "x") == OL_NOT_FOUND);
  CHECK(strcmp(ol_last_error(), "value 'x' missing") == 0);
  ol_error_wrap(OL_NOT_FOUND, "node '%s'", "n");
  CHECK(strcmp(ol_last_error(), "node 'n': value 'x' missing") == 0);
}

static void allocator_counts_and_fails_on_demand(void) {
  ol_allocator *a;
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
  ol_value *v;
  int64_t dims[2] = {4, 8};
  CHECK_OK(ol_tensor_create(a, OL_DTYPE_FLOAT, dims, 2, &v));
  ol_allocator_stats st;
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_bytes == 128 && st.peak_bytes == 128 && st.live_allocations == 1);
  ol_value_release(v);
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_bytes == 0 && st.peak_bytes == 128);
  ol_allocator_fail_after(a, 0);
  CHECK_STATUS(ol_tensor_create(a, OL_DTYPE_FLOAT, dims, 2, &v), OL_OUT_OF_MEMORY);
  CHECK(v == NULL);
  ol_allocator_destroy(a);
  ol_allocator_destroy(NULL);
}

/* ol_realloc keeps the bytes it had, starts a block from NULL and leaves
 * the block as it was when the allocator refuses. */
static void realloc_keeps_bytes_and_survives_failure(void) {
  ol_allocator *a;
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
  int64_t *p = ol_realloc(a, NULL, 4 * sizeof *p);
  CHECK(p != NULL);
  for (int i = 0; p && i < 4; i++) p[i] = 10 + i;
  int64_t *q = ol_realloc(a, p, 3 * sizeof *p); /* shrinking keeps the block */
  CHECK(q == p);
  ol_allocator_fail_after(a, 0);
  q = ol_realloc(a, p, 1000 * sizeof *p);
  CHECK(q == NULL && strstr(ol_last_error(), "refused") != NULL);
  ol_allocator_fail_after(a, -1);
  CHECK(p && p[3] == 13);
  q = ol_realloc(a, p, 1000 * sizeof *p);
  CHECK(q != NULL && q != p);
  for (int i = 0; q && i < 4; i++) CHECK(q[i] == 10 + i);
  ol_allocator_stats st;
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_allocations == 1 && st.live_bytes == 1000 * sizeof *p);
  ol_dealloc(a, q ? q : p);
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_allocations == 0 && st.live_bytes == 0);
  ol_allocator_destroy(a);
}

/* An allocator handing out memory filled with 0xA5 bytes. */
static void *poison_alloc(void *user, size_t size) {
  (void)user;
  void *p = malloc(size);
  if (p) memset(p, 0xA5, size);
  return p;
}
static void poison_free(void *user, void *p) {
  (void)user;
  free(p);
}

static void uninitialized_tensors_skip_only_plain_clearing(void) {
  ol_allocator *a;
  CHECK_OK(ol_allocator_create(poison_alloc, poison_free, NULL, &a));
  int64_t dims[1] = {9};
  ol_value *v;
  /* the default clears */
  CHECK_OK(ol_value_new_tensor(a, OL_DTYPE_INT32, 1, dims, &v));
  CHECK(((const int32_t *)ol_tdata(&v->tensor))[8] == 0);
  ol_value_release(v);
  /* uninit leaves the allocator's bytes: no clearing pass */
  CHECK_OK(ol_value_new_tensor_uninit(a, OL_DTYPE_INT32, 1, dims, &v));
  CHECK(((const uint32_t *)ol_tdata(&v->tensor))[8] == 0xA5A5A5A5u);
  CHECK(v->tensor.dims[0] == 9 && v->tensor.dtype == OL_DTYPE_INT32);
  ol_value_release(v);
  /* strings (pointers, freed on release) and packed codes stay zeroed */
  CHECK_OK(ol_value_new_tensor_uninit(a, OL_DTYPE_STRING, 1, dims, &v));
  const ol_string *str = ol_tdata(&v->tensor);
  CHECK(str[0].data == NULL && str[8].data == NULL && str[8].length == 0);
  ol_value_release(v);
  CHECK_OK(ol_value_new_tensor_uninit(a, OL_DTYPE_INT4, 1, dims, &v));
  const uint8_t *codes = ol_tdata(&v->tensor);
  CHECK(codes[0] == 0 && codes[4] == 0);
  ol_value_release(v);
  /* empty and scalar shapes */
  int64_t none[2] = {3, 0};
  CHECK_OK(ol_value_new_tensor_uninit(a, OL_DTYPE_FLOAT, 2, none, &v));
  CHECK(ol_tcount(&v->tensor) == 0);
  ol_value_release(v);
  CHECK_OK(ol_value_new_tensor_uninit(a, OL_DTYPE_FLOAT, 0, NULL, &v));
  CHECK(ol_tcount(&v->tensor) == 1);
  ol_value_release(v);
  CHECK_STATUS(ol_value_new_tensor_uninit(a, OL_DTYPE_FLOAT, 1, (int64_t[1]){-1}, &v), OL_INVALID_ARGUMENT);
  ol_allocator_stats st;
  ol_allocator_get_stats(a, &st);
  CHECK(st.live_bytes == 0);
  ol_allocator_destroy(a);
}

static void tensor_shapes_are_validated(void) {
  ol_value *v = NULL;
  int64_t bad[2] = {2, -1};
  CHECK_STATUS(ol_tensor_create(NULL, OL_DTYPE_FLOAT, bad, 2, &v), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_tensor_create(NULL, (ol_dtype)77, NULL, 0, &v), OL_INVALID_ARGUMENT);
  int64_t huge[3] = {1LL << 40, 1LL << 40, 16};
  CHECK_STATUS(ol_tensor_create(NULL, OL_DTYPE_FLOAT, huge, 3, &v), OL_INVALID_ARGUMENT);
  float data[6] = {0};
  int64_t dims[2] = {2, 3};
  CHECK_STATUS(ol_tensor_wrap(OL_DTYPE_FLOAT, dims, 2, data, 8, NULL, NULL, &v), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_tensor_wrap(OL_DTYPE_FLOAT, dims, 2, data, sizeof data, NULL, NULL, &v));
  CHECK(ol_tensor_data(v) == data); /* wrapping never copies */
  CHECK(ol_tensor_element_count(v) == 6 && ol_tensor_byte_size(v) == 24);
  ol_value *view;
  int64_t flat[1] = {6};
  CHECK_OK(ol_value_reshape_view(v, 1, flat, &view));
  CHECK(ol_tensor_data(view) == data);
  ol_value_release(view);
  ol_value_release(v);
}

static int released;
static void count_release(void *user) { released += *(int *)user; }

static void wrapped_memory_is_released_once(void) {
  int one = 1;
  float data[2];
  int64_t dims[1] = {2};
  ol_value *v;
  released = 0;
  CHECK_OK(ol_tensor_wrap(OL_DTYPE_FLOAT, dims, 1, data, sizeof data, count_release, &one, &v));
  ol_value_retain(v);
  ol_value_release(v);
  CHECK(released == 0);
  ol_value_release(v);
  CHECK(released == 1);
}

static void strings_sequences_optionals(void) {
  int64_t dims[1] = {2};
  ol_value *s, *seq, *opt, *none;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_STRING, dims, 1, &s));
  CHECK_OK(ol_tensor_set_string(s, 1, "hello", 5));
  const char *bytes;
  size_t len;
  CHECK_OK(ol_tensor_get_string(s, 1, &bytes, &len));
  CHECK(len == 5 && memcmp(bytes, "hello", 5) == 0);
  CHECK_STATUS(ol_tensor_set_string(s, 2, "x", 1), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_sequence_create(OL_DTYPE_STRING, &s, 1, &seq));
  CHECK(ol_sequence_length(seq) == 1 && ol_sequence_at(seq, 0) == s);
  CHECK_STATUS(ol_sequence_create(OL_DTYPE_FLOAT, &s, 1, &opt), OL_INVALID_ARGUMENT);
  CHECK_OK(ol_optional_create(seq, &opt));
  CHECK(ol_optional_get(opt) == seq);
  CHECK_OK(ol_optional_create(NULL, &none));
  CHECK(ol_optional_get(none) == NULL);
  ol_value_release(none);
  ol_value_release(opt);
  ol_value_release(seq);
  ol_value_release(s);
}

static int freed_payload;
static void free_payload(void *p) { freed_payload += *(int *)p; }

static void structs_and_encoded_values(void) {
  int64_t dims[1] = {2};
  ol_value *a, *b, *st = NULL, *bad = NULL;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 1, &a);
  ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 1, &b);
  const char *names[2] = {"key", "value"};
  ol_value *fields[2] = {a, b};
  CHECK_OK(ol_struct_create(names, fields, 2, &st));
  CHECK(ol_value_get_kind(st) == OL_VALUE_STRUCT && ol_struct_field_count(st) == 2);
  CHECK(ol_struct_field(st, "value") == b && strcmp(ol_struct_field_name(st, 0), "key") == 0);
  CHECK(ol_struct_field(st, "nope") == NULL);
  const char *twice[2] = {"key", "key"};
  CHECK_STATUS(ol_struct_create(twice, fields, 2, &bad), OL_INVALID_ARGUMENT);
  CHECK(bad == NULL);
  ol_value_release(st);
  ol_value_release(a);
  ol_value_release(b);
  static int one = 1;
  ol_value *e;
  freed_payload = 0;
  CHECK_OK(ol_value_new_encoded(&one, free_payload, &e));
  CHECK(ol_value_get_kind(e) == OL_VALUE_ENCODED);
  ol_value_release(e);
  CHECK(freed_payload == 1);
}

static void half_precision_round_trips(void) {
  /* every fp16 bit pattern survives f16 -> f32 -> f16 */
  int mismatches = 0;
  for (uint32_t h = 0; h < 0x10000; h++) {
    float f = ol_f16_to_f32((uint16_t)h);
    uint16_t back = ol_f32_to_f16(f);
    if (isnan(f) ? !(back & 0x7C00) : back != h) mismatches++;
  }
  CHECK(mismatches == 0);
  CHECK(ol_f32_to_f16(65520.0f) == 0x7C00);           /* rounds to inf */
  CHECK(ol_f32_to_f16(1.0f + 1.0f / 2048) == 0x3C00); /* tie to even */
  CHECK(ol_f32_to_f16(5.96e-8f) == 0x0001);           /* smallest subnormal */
  CHECK(ol_f32_to_bf16(1.00390625f) == 0x3F80);       /* tie to even */
  CHECK(ol_f32_to_bf16(1.01171875f) == 0x3F82);
  CHECK(ol_bf16_to_f32(0x4049) == 3.140625f);
}

static void minifloats_follow_onnx_tables(void) {
  CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FN, 0x7E) == 448.0f);
  CHECK(isnan(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FN, 0x7F)));
  CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E5M2, 0x7B) == 57344.0f);
  CHECK(isinf(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E5M2, 0x7C)));
  CHECK(isnan(ol_minifloat_to_f32(OL_DTYPE_FLOAT8E4M3FNUZ, 0x80)));
  CHECK(ol_minifloat_to_f32(OL_DTYPE_FLOAT4E2M1, 0x7) == 6.0f);
  CHECK(ol_f32_to_minifloat(OL_DTYPE_FLOAT8E4M3FN, 1000.0f, true) == 0x7E);
  CHECK(ol_f32_to_minifloat(OL_DTYPE_FLOAT8E4M3FN, 1000.0f, false) == 0x7F);
  CHECK(ol_f32_to_minifloat(OL_DTYPE_FLOAT8E5M2, INFINITY, false) == 0x7C);
  CHECK(ol_f32_to_minifloat(OL_DTYPE_FLOAT8E5M2, INFINITY, true) == 0x7B);
  CHECK(ol_f32_to_minifloat(OL_DTYPE_FLOAT4E2M1, -5.5f, true) == 0xF); /* -6 */
  /* every finite code decodes and re-encodes to itself */
  const ol_dtype types[4] = {OL_DTYPE_FLOAT8E4M3FN, OL_DTYPE_FLOAT8E4M3FNUZ, OL_DTYPE_FLOAT8E5M2,
                             OL_DTYPE_FLOAT8E5M2FNUZ};
  int mismatches = 0;
  for (int t = 0; t < 4; t++)
    for (int c = 0; c < 256; c++) {
      float f = ol_minifloat_to_f32(types[t], (uint8_t)c);
      if (isnan(f) || isinf(f)) continue;
      if (f == 0.0f && c != 0 && types[t] != OL_DTYPE_FLOAT8E4M3FN && types[t] != OL_DTYPE_FLOAT8E5M2) continue;
      if (ol_f32_to_minifloat(types[t], f, true) != c) mismatches++;
    }
  CHECK(mismatches == 0);
}

static void packed_integers(void) {
  uint8_t data[2] = {0};
  ol_packed_set(OL_DTYPE_INT4, data, 0, -3);
  ol_packed_set(OL_DTYPE_INT4, data, 1, 7);
  ol_packed_set(OL_DTYPE_UINT4, data, 2, 15);
  CHECK(data[0] == 0x7D && data[1] == 0x0F);
  CHECK(ol_packed_get(OL_DTYPE_INT4, data, 0) == -3 && ol_packed_get(OL_DTYPE_INT4, data, 1) == 7);
  CHECK(ol_packed_get(OL_DTYPE_UINT4, data, 2) == 15);
  CHECK(ol_dtype_storage_bytes(OL_DTYPE_INT4, 3) == 2 && ol_dtype_storage_bytes(OL_DTYPE_INT2, 5) == 2);
  CHECK(ol_dtype_from_name("bfloat16") == OL_DTYPE_BFLOAT16 && ol_dtype_from_name("INT64") == OL_DTYPE_INT64);
}

static void string_map(void) {
  ol_strmap m;
  ol_strmap_init(&m);
  char names[100][8];
  for (int i = 0; i < 100; i++) {
    snprintf(names[i], sizeof names[i], "v%d", i);
    CHECK_OK(ol_strmap_put(&m, names[i], i));
  }
  int wrong = 0;
  for (int i = 0; i < 100; i++) wrong += ol_strmap_get(&m, names[i]) != i;
  CHECK(wrong == 0 && ol_strmap_get(&m, "nope") == -1 && m.count == 100);
  ol_strmap_free(&m);
}

/* value and buffer structs are recycled (core/value.c): a new value never
 * inherits a released one's layout, payload or reference count */
static void recycled_structs_start_clean(void) {
  int64_t dims[2] = {4, 16};
  ol_value *old[80];
  for (int i = 0; i < 80; i++) {
    CHECK_OK(ol_value_new_tensor(NULL, OL_DTYPE_FLOAT, 2, dims, &old[i]));
    if (!old[i]) return;
    static const ol_packing_kind kind = {"test", NULL};
    old[i]->tensor.pitch = 9, old[i]->tensor.pitch_axis = 1, old[i]->tensor.packing.kind = &kind;
    old[i]->tensor.offset = 12;
  }
  for (int i = 0; i < 80; i++) ol_value_release(old[i]);
  for (int i = 0; i < 80; i++) {
    ol_value *v = NULL;
    CHECK_OK(ol_value_new_tensor(NULL, OL_DTYPE_FLOAT, 2, dims, &v));
    if (!v) return;
    const ol_tensor *t = &v->tensor;
    CHECK(v->refcount == 1 && t->pitch == 0 && t->pitch_axis == 0 && !ol_tensor_is_packed(t) && t->offset == 0);
    CHECK(t->buffer && t->buffer->refcount == 1 && t->buffer->size == 64 * sizeof(float));
    CHECK(((const float *)ol_tdata(t))[63] == 0.0f && !v->items && !v->encoded);
    old[i] = v;
  }
  for (int i = 0; i < 80; i++) ol_value_release(old[i]);
}

/* ol_grow: the first capacity, then doubling until the items asked for fit;
 * items in use keep their values; an overflowing size leaves the array as it was. */
static void growable_arrays(void) {
  int64_t *items = NULL;
  size_t capacity = 0, count = 0;
  CHECK(ol_grow(&items, &capacity, count, 0, sizeof *items, 8) && items == NULL && capacity == 0);
  CHECK(ol_grow(&items, &capacity, count, 1, sizeof *items, 8) && items != NULL && capacity == 8);
  if (!items) return;
  for (; count < 8; count++) items[count] = (int64_t)count * 3;
  int64_t *before = items;
  CHECK(ol_grow(&items, &capacity, 5, 3, sizeof *items, 8) && items == before && capacity == 8); /* room already */
  CHECK(ol_grow(&items, &capacity, count, 1, sizeof *items, 8) && capacity == 16);
  CHECK(ol_grow(&items, &capacity, count, 50, sizeof *items, 8) && capacity == 64); /* 32 has room for 24 only */
  bool kept = true;
  for (size_t i = 0; i < count; i++) kept = kept && items[i] == (int64_t)i * 3;
  CHECK(kept);
  before = items;
  CHECK(!ol_grow(&items, &capacity, count, SIZE_MAX / 2, sizeof *items, 8));
  CHECK(items == before && capacity == 64);
  free(items);
  char *bytes = NULL;
  capacity = 0;
  CHECK(ol_grow(&bytes, &capacity, 0, 1500, 1, 1024) && capacity == 2048);
  free(bytes);
}

OL_TEST_MAIN(TEST(status_names_and_messages), TEST(recycled_structs_start_clean), TEST(allocator_counts_and_fails_on_demand),
             TEST(realloc_keeps_bytes_and_survives_failure),
             TEST(uninitialized_tensors_skip_only_plain_clearing),
             TEST(tensor_shapes_are_validated), TEST(wrapped_memory_is_released_once),
             TEST(strings_sequences_optionals), TEST(structs_and_encoded_values), TEST(half_precision_round_trips),
             TEST(minifloats_follow_onnx_tables), TEST(packed_integers), TEST(string_map),
             TEST(growable_arrays))
