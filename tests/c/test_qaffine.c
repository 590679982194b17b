/* Affine encoded weights decoded in register (simd/qaffine.c) over views of
 * real encoded payloads (quant/affine_view.c): the vector decoder equals the
 * scalar reference and the codec's own decoder bit for bit, and the fused
 * products equal the fp32 reference product of the decoded weight bit for
 * bit, on many shapes (K, N, block sizes with odd counts and blocks spanning
 * rows, a shorter tail block, signed and unsigned 4- and 8-bit codes, zero
 * points, offsets, 1..17 rows of A, 1 to 3 threads). Plus what the view
 * refuses. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "harness.h"
#include "onnxlight.h"
#include "quant/affine_view.h"
#include "quant/codec.h"
#include "quant/plan.h"
#include "quant/wire.h"
#include "simd/gemm.h"
#include "simd/qaffine.h"

#include "test_random.h"

/* An encoded [K, N] weight of format with blocks of `block`; zmode 1: random
 * zero points, 2: also random offsets (0: the profile's defaults). */
static Onnx__EncodedValueProto *encode(ol_quant_format format, int64_t K, int64_t N, int64_t block, int zmode,
                                       float **weights) {
  int64_t count = K * N, dims[2] = {K, N};
  float *w = malloc(sizeof(float) * (size_t)count);
  double *v = malloc(sizeof(double) * (size_t)count);
  for (int64_t i = 0; i < count; i++) v[i] = w[i] = rnd();
  ol_quant_plan *plan = NULL;
  Onnx__EncodedValueProto *ev = NULL;
  CHECK_OK(ol_quant_make_plan(format, (uint64_t)count, (uint64_t)block, &plan));
  for (size_t r = 0; plan && zmode && r < plan->run_count; r++) {
    ol_quant_run *run = &plan->runs[r];
    double lo = run->layout.signed_codes ? -ldexp(1.0, (int)run->layout.bits - 1) : 0;
    uint32_t span = 1u << run->layout.bits;
    for (size_t b = 0; b < run->block_count; b++) {
      run->blocks[b].zero_point = lo + (double)(next_u32() % span);
      if (zmode == 2) run->blocks[b].offset = (double)rnd() * 0.37;
    }
  }
  if (plan) CHECK_OK(ol_quant_calibrate_values(plan, v, (uint64_t)count));
  if (plan) CHECK_OK(ol_quant_encode_proto(plan, OL_DTYPE_FLOAT, w, 2, dims, "W", &ev));
  ol_quant_plan_destroy(plan);
  free(v);
  *weights = w;
  return ev;
}

/* The codec's decoding as floats. */
static float *codec_floats(const Onnx__EncodedValueProto *ev) {
  ol_quant_decoded d;
  CHECK_OK(ol_quant_decode_proto(ev, NULL, &d, NULL));
  float *f = malloc(sizeof(float) * (size_t)(d.count ? d.count : 1));
  if (d.values) CHECK_OK(ol_quant_write_floats(OL_DTYPE_FLOAT, d.values, d.count, f));
  ol_quant_decoded_clear(&d);
  return f;
}

static int differ(const float *a, const float *b, int64_t n) {
  int bad = 0;
  for (int64_t i = 0; i < n; i++) bad += fbits(a[i]) != fbits(b[i]);
  return bad;
}

static void run_case(ol_quant_format format, int64_t K, int64_t N, int64_t block, int zmode) {
  float *weights = NULL;
  Onnx__EncodedValueProto *ev = encode(format, K, N, block, zmode, &weights);
  if (!ev) {
    free(weights);
    return;
  }
  ol_quant_affine_view view;
  bool eligible = false;
  const char *reason = NULL;
  CHECK_OK(ol_quant_affine_view_make(ev, NULL, &view, &eligible, &reason));
  CHECK(eligible);
  if (!eligible) fprintf(stderr, "  %s K %lld N %lld block %lld: %s\n", ol_quant_format_name(format),
                         (long long)K, (long long)N, (long long)block, reason);
  int64_t count = K * N;
  float *want = codec_floats(ev), *ref = malloc(sizeof(float) * (size_t)count);
  float *got = malloc(sizeof(float) * (size_t)count);
  int bad = 0;
  if (eligible) {
    ol_qaffine_decode_scalar(&view.weight, 0, count, ref);
    ol_qaffine_decode(&view.weight, 0, count, got);
    bad += differ(want, ref, count) + differ(want, got, count);
    /* ranges starting anywhere (odd nibbles, mid-block, across blocks) */
    for (int t = 0; t < 4 && count > 1; t++) {
      int64_t e0 = (int64_t)(next_u32() % (uint32_t)count), n = (int64_t)(next_u32() % (uint32_t)(count - e0)) + 1;
      memset(got, 0, sizeof(float) * (size_t)n);
      ol_qaffine_decode(&view.weight, e0, n, got);
      bad += differ(want + e0, got, n);
    }
    static const int64_t Ms[] = {1, 2, 3, 8, 9, 17};
    for (int mi = 0; mi < 6; mi++) {
      int64_t M = Ms[mi];
      float *A = malloc(sizeof(float) * (size_t)(M * K)), *C0 = malloc(sizeof(float) * (size_t)(M * N));
      float *C1 = malloc(sizeof(float) * (size_t)(M * N)), *C2 = malloc(sizeof(float) * (size_t)(M * N));
      for (int64_t i = 0; i < M * K; i++) A[i] = rnd();
      ol_f32_gemm_scalar(M, N, K, A, K, want, N, C0, N);
      CHECK_OK(ol_qaffine_matmul_scalar(&view.weight, M, A, C1));
      CHECK_OK(ol_qaffine_matmul(&view.weight, M, A, C2));
      bad += differ(C0, C1, M * N) + differ(C0, C2, M * N);
      free(A), free(C0), free(C1), free(C2);
    }
  }
  if (bad)
    fprintf(stderr, "  %s K %lld N %lld block %lld zmode %d: %d bad\n", ol_quant_format_name(format), (long long)K,
            (long long)N, (long long)block, zmode, bad);
  CHECK(bad == 0);
  ol_quant_affine_view_clear(&view);
  ol_quant_proto_free(ev);
  free(weights), free(want), free(ref), free(got);
}

static void test_qaffine_shapes(void) {
  /* int4, int8: signed; gptq: unsigned 4-bit, zero point 8; eetq: signed 8 */
  const ol_quant_format formats[] = {OL_QUANT_INT4, OL_QUANT_INT8, OL_QUANT_GPTQ, OL_QUANT_EETQ};
  const int64_t blocks[] = {3, 16, 17, 32, 33, 64, 128};
  const int64_t Ks[] = {1, 5, 32, 33};
  const int64_t Ns[] = {1, 7, 16, 31, 64};
  for (int f = 0; f < 4; f++)
    for (int b = 0; b < 7; b++)
      for (int k = 0; k < 4; k++)
        for (int n = 0; n < 5; n++) run_case(formats[f], Ks[k], Ns[n], blocks[b], (f + b + k + n) % 3);
}

static void test_qaffine_large(void) {
  run_case(OL_QUANT_INT4, 128, 384, 32, 0);
  run_case(OL_QUANT_INT4, 300, 130, 64, 2);
  run_case(OL_QUANT_INT8, 256, 200, 128, 1);
  run_case(OL_QUANT_AWQ, 96, 1030, 32, 1); /* wide enough for column panels with 17 rows */
}

/* Threads split columns (mid-block, odd nibbles): the same bits on 1, 2, 3 threads. */
static void test_qaffine_threads(void) {
  int saved = ol_get_num_threads();
  for (int t = 1; t <= 3; t++) {
    CHECK_OK(ol_set_num_threads(t));
    run_case(OL_QUANT_INT4, 512, 517, 32, 2);
    run_case(OL_QUANT_INT8, 300, 1001, 64, 1);
  }
  CHECK_OK(ol_set_num_threads(saved));
}

/* Layouts the view must refuse (the unfused path keeps handling them). */
static void test_qaffine_refusals(void) {
  int64_t dims[2] = {4, 8}, vec = 32;
  float w[32];
  double v[32];
  for (int i = 0; i < 32; i++) v[i] = w[i] = rnd();
  struct {
    ol_quant_format format;
    int rank;
    const int64_t *dims;
    ol_dtype dtype;
    bool permute;
  } cases[] = {
      {OL_QUANT_NF4, 2, dims, OL_DTYPE_FLOAT, false},        /* codebook */
      {OL_QUANT_Q2_K, 2, dims, OL_DTYPE_FLOAT, false},       /* 2-bit codes */
      {OL_QUANT_INT4, 1, &vec, OL_DTYPE_FLOAT, false},       /* not a matrix */
      {OL_QUANT_INT4, 2, dims, OL_DTYPE_FLOAT16, false},     /* logical FLOAT16 */
      {OL_QUANT_INT8_PER_CHANNEL, 2, dims, OL_DTYPE_FLOAT, true}, /* permutation */
  };
  uint16_t half[32];
  for (int i = 0; i < 32; i++) half[i] = ol_f32_to_f16(w[i]);
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    ol_quant_plan *plan = NULL;
    Onnx__EncodedValueProto *ev = NULL;
    CHECK_OK(ol_quant_make_plan(cases[c].format, 32, 8, &plan));
    if (!plan) continue;
    if (cases[c].permute) {
      int64_t perm[32];
      for (int i = 0; i < 32; i++) perm[i] = (i % 4) * 8 + i / 4;
      CHECK_OK(ol_quant_plan_set_permutation(plan, perm, 32));
    }
    CHECK_OK(ol_quant_calibrate_values(plan, v, 32));
    CHECK_OK(ol_quant_encode_proto(plan, cases[c].dtype, cases[c].dtype == OL_DTYPE_FLOAT ? (const void *)w : half,
                                   cases[c].rank, cases[c].dims, "W", &ev));
    if (ev) {
      ol_quant_affine_view view;
      bool eligible = true;
      const char *reason = NULL;
      CHECK_OK(ol_quant_affine_view_make(ev, NULL, &view, &eligible, &reason));
      CHECK(!eligible && reason && view.runs == NULL);
      /* a corrupted padding / parameter is refused too (int4 only) */
      ol_quant_proto_free(ev);
    }
    ol_quant_plan_destroy(plan);
  }
  /* a valid int4 payload, then broken: bad scale, trailing byte */
  float *weights = NULL;
  Onnx__EncodedValueProto *ev = encode(OL_QUANT_INT4, 4, 8, 16, 0, &weights);
  if (ev) {
    ol_quant_affine_view view;
    bool eligible = false;
    const char *reason = NULL;
    CHECK_OK(ol_quant_affine_view_make(ev, NULL, &view, &eligible, &reason));
    CHECK(eligible);
    ol_quant_affine_view_clear(&view);
    uint8_t saved = ev->raw_data.data[8];
    ev->raw_data.data[8] = 0xFF; /* the first scale's top byte: negative NaN */
    CHECK_OK(ol_quant_affine_view_make(ev, NULL, &view, &eligible, &reason));
    CHECK(!eligible);
    ev->raw_data.data[8] = saved;
    ev->raw_data.len--;
    CHECK_OK(ol_quant_affine_view_make(ev, NULL, &view, &eligible, &reason));
    CHECK(!eligible);
    ev->raw_data.len++;
    ol_quant_proto_free(ev);
  }
  free(weights);
}

OL_TEST_MAIN(TEST(test_qaffine_shapes), TEST(test_qaffine_large), TEST(test_qaffine_threads), TEST(test_qaffine_refusals))
