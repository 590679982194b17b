/* MatMulNBits with int8 activations on weights packed at load (the lane
 * layout of simd/qgemv_i8_lane.h, ops/matmul/packing.c, model/pack.c): the
 * layout round-trips; the lane kernel gives the scalar reference's bits on
 * many shapes (4 and 8 bits, blocks 16..256, K not a multiple of the block,
 * N with tails, zero points, bias, any row range, 1..4 rows); the
 * MatMulNBits kernel reads lane-layout inputs on every path; the loader
 * lays out exactly the qualifying initializers, sessions on 1..3 threads
 * compute the reference's bits, and serializing, printing, cloning and
 * densifying give the dense bytes back. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ops/matmul/matmul.h"
#include "kernel_util.h"
#include "core/pool.h"
#include "core/value.h"
#include "ir/model.h"
#include "onnxlight.h"
#include "simd/qgemv.h"
#include "simd/qgemv_i8.h"
#include "simd/qgemv_i8_lane.h"

#define TEST_RANDOM_SEED 2654435769u
#include "test_random.h"
#include "nbits_case.h"

/* The byte offset of word w of row `row` in the lane layout of R rows of
 * W bytes in blocks of BB bytes (simd/qgemv_i8_lane.h), spelled out: a
 * group's words interleave, a pair's blocks alternate between its groups. */
static size_t lane_place(int64_t R, size_t W, size_t BB, int64_t row, size_t w) {
  const int64_t G = OL_LANE_GROUP;
  if (row >= R / G * G) return (size_t)row * W + 4 * w; /* the dense tail */
  const size_t cpw = BB / 4, j = w / cpw, c = w % cpw, i = (size_t)(row % G);
  if (row >= R / (2 * G) * (2 * G)) return (size_t)(row - (int64_t)i) * W + 4 * (G * w + i); /* a lone group */
  const int64_t pair = row / (2 * G) * (2 * G);
  const size_t second = (size_t)(row - pair) / G; /* 0 or 1: which group of the pair */
  return (size_t)pair * W + BB * G * (2 * j + second) + 4 * (G * c + i);
}

static void test_lanes_round_trip(void) {
  const int64_t rows[] = {1, 3, 7, 8, 9, 16, 21, 24, 37, 48};
  const size_t row_bytes[] = {4, 8, 20, 64}, blocks[] = {1, 2, 4};
  for (int x = 0; x < 2; x++) /* B of 8 bits: odd bytes XOR 0x80 */
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++)
      for (size_t b = 0; b < sizeof row_bytes / sizeof row_bytes[0]; b++)
        for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) {
          const uint8_t odd_xor = x ? OL_LANE_ODD_XOR(8) : 0;
          int64_t R = rows[r];
          size_t W = row_bytes[b], n = (size_t)R * W;
          if ((W / 4) % blocks[k]) continue;
          const size_t BB = W / blocks[k];
          uint8_t *dense = malloc(n), *q = malloc(n), *back = malloc(n), *scratch = malloc(OL_LANE_SCRATCH(W));
          for (size_t i = 0; i < n; i++) dense[i] = (uint8_t)next_u32();
          memcpy(q, dense, n);
          ol_lanes_from_dense(R, W, BB, odd_xor, q, scratch);
          bool at = true;
          for (int64_t row = 0; row < R; row++)
            for (size_t w = 0; w < W / 4; w++) {
              const size_t place = lane_place(R, W, BB, row, w);
              for (int e = 0; e < 4; e++)
                at = at && q[place + e] == (dense[(size_t)row * W + 4 * w + e] ^ (e & 1 ? odd_xor : 0));
            }
          CHECK(at);
          ol_lanes_to_dense(R, W, BB, odd_xor, q, back);
          CHECK(memcmp(back, dense, n) == 0);
          free(dense), free(q), free(back), free(scratch);
        }
}

/* zmode 0: default, 1: packed uint8, 2: float */
static void run_case(int bits, int64_t K, int64_t N, int64_t block, int zmode, int with_bias) {
  nbits_case c = nbits_case_new(bits, K, N, block, 0);
  const ol_qgemv_shape s = c.s;
  const int64_t kb = c.kb, blob = c.blob;
  uint8_t *B = c.B, *zu = c.zu;
  float *a = c.a, *sc = c.sc, *zf = c.zf, *bias = c.bias, *want = c.want, *got = c.got;
  uint8_t *scratch = malloc(OL_LANE_SCRATCH(kb * blob));
  void *work = malloc(ol_qgemv_i8_lane_work_bytes(&s));
  const uint8_t *zpu = zmode == 1 ? zu : NULL;
  const float *zpf = zmode == 2 ? zf : NULL, *bp = with_bias ? bias : NULL;
  ol_qgemv_i8_nbits_scalar(&s, a, B, sc, zpu, zpf, bp, want);
  ol_lanes_from_dense(N, (size_t)(kb * blob), (size_t)blob, OL_LANE_ODD_XOR(bits), B, scratch);
  ol_lanes_from_dense(N, sizeof(float) * (size_t)kb, sizeof(float), 0, sc, scratch);
  ol_qgemv_i8_lane_prepare(&s, a, work);
  /* split on group boundaries (as the threads split), anywhere, inside a
   * group, between the two groups of pairs */
  int64_t splits[4][2] = {{N / 16 * 8, N}, {N / 2 | 1, N / 2 + 2}, {N / 8 * 4, N / 8 * 4 + 8}, {8, 24}};
  int bad = 0;
  for (int k = 0; k < 4; k++) {
    int64_t c0 = splits[k][0] < N ? splits[k][0] : N, c1 = splits[k][1] < N ? splits[k][1] : N;
    if (c1 < c0) c1 = c0;
    memset(got, 0x55, sizeof(float) * (size_t)N);
    const void *w = work;
    ol_qgemv_i8_lane_rows(&s, &w, 1, B, sc, zpu, zpf, bp, 0, c0, got, 0);
    ol_qgemv_i8_lane_rows(&s, &w, 1, B, sc, zpu, zpf, bp, c0, c1, got + c0, 0);
    ol_qgemv_i8_lane_rows(&s, &w, 1, B, sc, zpu, zpf, bp, c1, N, got + c1, 0);
    for (int64_t n = 0; n < N; n++) bad += fbits(want[n]) != fbits(got[n]);
  }
  if (bad)
    fprintf(stderr, "  lane bits %d K %lld N %lld block %lld zmode %d bias %d: %d bad\n", bits, (long long)K,
            (long long)N, (long long)block, zmode, with_bias, bad);
  CHECK(bad == 0);
  nbits_case_free(&c);
  free(scratch), free(work);
}

static void test_lane_shapes(void) {
  const int64_t blocks[] = {16, 32, 64, 128, 256};
  const int64_t Ks[] = {1, 15, 16, 17, 33, 100, 257, 700};
  const int64_t Ns[] = {1, 3, 5, 8, 9, 14, 16, 20, 24, 33, 40, 50};
  for (int bits = 4; bits <= 8; bits += 4)
    for (int b = 0; b < 5; b++)
      for (int k = 0; k < (int)(sizeof Ks / sizeof Ks[0]); k++)
        for (int n = 0; n < (int)(sizeof Ns / sizeof Ns[0]); n++)
          for (int z = 0; z < 3; z++) run_case(bits, Ks[k], Ns[n], blocks[b], z, (k + n + z) & 1);
  run_case(4, 512, 1376, 32, 0, 0);
  run_case(4, 1376, 512, 32, 1, 1);
}

/* 1..4 rows at once give each row's single-row bits, the old kernel's too */
static void test_lane_rows(void) {
  const int64_t K = 300, N = 38, block = 32;
  for (int bits = 4; bits <= 8; bits += 4) {
    ol_qgemv_shape s = {K, N, block, bits};
    int64_t kb = (K + block - 1) / block, blob = block * bits / 8;
    uint8_t *B = malloc((size_t)(N * kb * blob)), *Q = malloc((size_t)(N * kb * blob)), *scratch = malloc(OL_LANE_SCRATCH(kb * blob));
    float *a = malloc(sizeof(float) * (size_t)(4 * K)), *sc = malloc(sizeof(float) * (size_t)(N * kb));
    float *scq = malloc(sizeof(float) * (size_t)(N * kb));
    float *one = malloc(sizeof(float) * (size_t)(4 * N)), *many = malloc(sizeof(float) * (size_t)(4 * N));
    size_t wb = ol_qgemv_i8_lane_work_bytes(&s), ob = ol_qgemv_i8_work_bytes(&s);
    char *work = malloc(4 * wb), *owork = malloc(4 * ob);
    for (int64_t i = 0; i < N * kb * blob; i++) B[i] = (uint8_t)next_u32();
    for (int64_t i = 0; i < 4 * K; i++) a[i] = rnd();
    for (int64_t i = 0; i < N * kb; i++) sc[i] = rnd();
    memcpy(Q, B, (size_t)(N * kb * blob));
    memcpy(scq, sc, sizeof(float) * (size_t)(N * kb));
    ol_lanes_from_dense(N, (size_t)(kb * blob), (size_t)blob, OL_LANE_ODD_XOR(bits), Q, scratch);
    ol_lanes_from_dense(N, sizeof(float) * (size_t)kb, sizeof(float), 0, scq, scratch);
    const void *works[4], *oworks[4];
    for (int r = 0; r < 4; r++) {
      works[r] = work + r * wb;
      oworks[r] = owork + r * ob;
      ol_qgemv_i8_lane_prepare(&s, a + r * K, work + r * wb);
      ol_qgemv_i8_prepare(&s, a + r * K, owork + r * ob);
      ol_qgemv_i8_lane_rows(&s, &works[r], 1, Q, scq, NULL, NULL, NULL, 0, N, one + r * N, 0);
    }
    for (int rows = 1; rows <= 4; rows++) {
      memset(many, 0, sizeof(float) * (size_t)(4 * N));
      ol_qgemv_i8_lane_rows(&s, works, rows, Q, scq, NULL, NULL, NULL, 0, N, many, N);
      CHECK(memcmp(one, many, sizeof(float) * (size_t)(rows * N)) == 0);
      memset(many, 0, sizeof(float) * (size_t)(4 * N));
      ol_qgemv_i8_nbits_rows(&s, oworks, rows, B, sc, NULL, NULL, NULL, 0, N, many, N);
      CHECK(memcmp(one, many, sizeof(float) * (size_t)(rows * N)) == 0);
    }
    free(B), free(Q), free(scratch), free(a), free(sc), free(scq), free(one), free(many), free(work), free(owork);
  }
}

/* ------------------------------------------------------------ the MatMulNBits kernel */

#define MS "com.microsoft"

/* B and scales given to the kernel in the lane layout (as the loader leaves
 * them) give the dense inputs' bits on every path: int8 activations (the
 * lane kernel, 1, 2 and 5 rows), float activations (fused and dequantizing)
 * and int8 with float zero points (dense copies) */
static void test_kernel_reads_lanes(void) {
  const int64_t K = 100, N = 22, block = 32, kb = (K + block - 1) / block;
  for (int bits = 4; bits <= 8; bits += 4) {
    const int64_t blob = block * bits / 8, zrow = (kb * bits + 7) / 8;
    uint8_t *b = malloc((size_t)(N * kb * blob)), *zu = malloc((size_t)(N * zrow)), *scratch = malloc(OL_LANE_SCRATCH(kb * blob));
    float *a = malloc(sizeof(float) * (size_t)(6 * K)), *sc = malloc(sizeof(float) * (size_t)(N * kb));
    float *zf = malloc(sizeof(float) * (size_t)(N * kb)), *bias = malloc(sizeof(float) * (size_t)N);
    for (int64_t i = 0; i < N * kb * blob; i++) b[i] = (uint8_t)next_u32();
    for (int64_t i = 0; i < N * zrow; i++) zu[i] = (uint8_t)next_u32();
    for (int64_t i = 0; i < 6 * K; i++) a[i] = rnd();
    for (int64_t i = 0; i < N * kb; i++) sc[i] = rnd(), zf[i] = rnd() * 8.0f;
    for (int64_t i = 0; i < N; i++) bias[i] = rnd();
    int64_t db[3] = {N, kb, blob}, ds[2] = {N, kb}, dzu[1] = {N * zrow}, dzf[1] = {N * kb}, dbias[1] = {N};
    ol_value *dense_b = tk_tensor(OL_DTYPE_UINT8, 3, db, b), *dense_s = tk_f32(2, ds, sc);
    ol_value *lane_b = tk_tensor(OL_DTYPE_UINT8, 3, db, b), *lane_s = tk_f32(2, ds, sc);
    ol_value *z_u8 = tk_tensor(OL_DTYPE_UINT8, 1, dzu, zu), *z_f = tk_f32(1, dzf, zf), *vb = tk_f32(1, dbias, bias);
    ol_lanes_from_dense(N, (size_t)(kb * blob), (size_t)blob, OL_LANE_ODD_XOR(bits), ol_tdata(&lane_b->tensor), scratch);
    ol_lanes_from_dense(N, sizeof(float) * (size_t)kb, sizeof(float), 0, ol_tdata(&lane_s->tensor), scratch);
    lane_b->tensor.packing = (ol_packing){&ol_packing_lanes, {N, kb * blob, OL_LANE_ODD_XOR(bits), blob}};
    lane_s->tensor.packing = (ol_packing){&ol_packing_lanes, {N, (int64_t)sizeof(float) * kb, 0, (int64_t)sizeof(float)}};
    const int64_t Ms[] = {1, 2, 5, 6};
    for (int level = 0; level <= 4; level += 4)
      for (int z = 0; z < 3; z++)
        for (size_t mi = 0; mi < sizeof Ms / sizeof Ms[0]; mi++) {
          int64_t da[2] = {Ms[mi], K};
          ol_value *va = tk_f32(2, da, a), *want[1] = {NULL}, *got[1] = {NULL};
          ol_value *zp = z == 1 ? z_u8 : z == 2 ? z_f : NULL;
          ol_value *din[6] = {va, dense_b, dense_s, zp, NULL, vb}, *qin[6] = {va, lane_b, lane_s, zp, NULL, vb};
          ol_attr at[5] = {tk_attr_int("K", K), tk_attr_int("N", N), tk_attr_int("bits", bits),
                           tk_attr_int("block_size", block), tk_attr_int("accuracy_level", level)};
          CHECK_OK(tk_run_domain(MS, "MatMulNBits", 1, at, 5, din, 6, want, 1));
          CHECK_OK(tk_run_domain(MS, "MatMulNBits", 1, at, 5, qin, 6, got, 1));
          CHECK(want[0] && got[0] && memcmp(ol_tdata(&want[0]->tensor), ol_tdata(&got[0]->tensor),
                                            sizeof(float) * (size_t)(Ms[mi] * N)) == 0);
          /* the lane-layout inputs were read in place, not changed */
          CHECK(lane_b->tensor.packing.kind == &ol_packing_lanes && memcmp(ol_tdata(&lane_b->tensor), b, (size_t)(N * kb * blob)) != 0);
          tk_release_all(want, 1);
          tk_release_all(got, 1);
          ol_value_release(va);
        }
    ol_value_release(dense_b), ol_value_release(dense_s), ol_value_release(lane_b), ol_value_release(lane_s);
    ol_value_release(z_u8), ol_value_release(z_f), ol_value_release(vb);
    free(b), free(zu), free(scratch), free(a), free(sc), free(zf), free(bias);
  }
}

/* ------------------------------------------------------------ the loader */

#define K_ 160
#define N_ 20
#define KB_ 5
#define ZROW_ 3

/* name: bits, accuracy level, zero points; b: weights, s: scales */
typedef struct node_spec {
  const char *name;
  int bits, level;
  bool zp;
  uint8_t b[N_ * KB_ * 32];
  float s[N_ * KB_];
  uint8_t z[N_ * ZROW_];
} node_spec;

static node_spec specs[5] = {
    {"q1", 4, 4, false, {0}, {0}, {0}}, /* laid out */
    {"q2", 4, 4, true, {0}, {0}, {0}},  /* laid out, zero points stay dense */
    {"q3", 4, 0, false, {0}, {0}, {0}}, /* float activations: dense */
    {"q4", 4, 4, false, {0}, {0}, {0}}, /* B also read by Identity: B and scales dense */
    {"q5", 8, 4, false, {0}, {0}, {0}}, /* 8 bits: laid out */
};

static void put_bytes(char **p, const uint8_t *x, int n) {
  *p += sprintf(*p, "{");
  for (int i = 0; i < n; i++) *p += sprintf(*p, "%s%u", i ? ", " : "", (unsigned)x[i]);
  *p += sprintf(*p, "}");
}

static void put_floats(char **p, const float *x, int n) {
  *p += sprintf(*p, "{");
  for (int i = 0; i < n; i++) *p += sprintf(*p, "%s%.9g", i ? ", " : "", (double)x[i]);
  *p += sprintf(*p, "}");
}

static int blob_of(const node_spec *n) { return 32 * n->bits / 8; }

static uint8_t *model_bytes(size_t *size) {
  char *text = malloc(400000), *p = text;
  p += sprintf(p, "<ir_version: 8, opset_import: [\"\" : 17, \"com.microsoft\" : 1]>\ng (float[2,%d] x) => (", K_);
  for (int i = 0; i < 5; i++) p += sprintf(p, "float[2,%d] y%d, ", N_, i + 1);
  p += sprintf(p, "uint8[%d,%d,%d] c)\n  <", N_, KB_, blob_of(&specs[3]));
  for (int i = 0; i < 5; i++) {
    node_spec *n = &specs[i];
    int bytes = N_ * KB_ * blob_of(n);
    for (int k = 0; k < bytes; k++) n->b[k] = (uint8_t)next_u32();
    for (int k = 0; k < N_ * KB_; k++) n->s[k] = rnd();
    for (int k = 0; k < N_ * ZROW_; k++) n->z[k] = (uint8_t)next_u32();
    p += sprintf(p, "%suint8[%d,%d,%d] b%d = ", i ? ", " : "", N_, KB_, blob_of(n), i + 1);
    put_bytes(&p, n->b, bytes);
    p += sprintf(p, ", float[%d] s%d = ", N_ * KB_, i + 1);
    put_floats(&p, n->s, N_ * KB_);
    if (n->zp) {
      p += sprintf(p, ", uint8[%d] z%d = ", N_ * ZROW_, i + 1);
      put_bytes(&p, n->z, N_ * ZROW_);
    }
  }
  p += sprintf(p, ">\n{\n");
  for (int i = 0; i < 5; i++) {
    node_spec *n = &specs[i];
    p += sprintf(p,
                 "  y%d = com.microsoft.MatMulNBits <K = %d, N = %d, bits = %d, block_size = 32, accuracy_level = %d> "
                 "(x, b%d, s%d%s",
                 i + 1, K_, N_, n->bits, n->level, i + 1, i + 1, n->zp ? ", z" : ")\n");
    if (n->zp) p += sprintf(p, "%d)\n", i + 1);
  }
  sprintf(p, "  c = Identity(b4)\n}\n");
  void *bytes = tk_serialized(text, size);
  free(text);
  return bytes;
}

/* n bytes of B laid out (odd bytes XOR odd_xor) equal the dense bytes */
static bool laid_equal(const uint8_t *laid, const uint8_t *dense, size_t n, uint8_t odd_xor) {
  for (size_t i = 0; i < n; i++)
    if (laid[i] != (dense[i] ^ (i & 1 ? odd_xor : 0))) return false;
  return true;
}

static void test_loader_lays_out_nbits_weights(void) {
  size_t size = 0;
  uint8_t *bytes = model_bytes(&size);
  ol_model *m = NULL;
  if (bytes) CHECK_OK(ol_model_load(bytes, size, NULL, &m));
  if (!m) {
    ol_free(bytes);
    return;
  }
  for (int i = 0; i < 5; i++) {
    const node_spec *n = &specs[i];
    char bn[8], sn[8], zn[8];
    snprintf(bn, sizeof bn, "b%d", i + 1), snprintf(sn, sizeof sn, "s%d", i + 1), snprintf(zn, sizeof zn, "z%d", i + 1);
    const ol_tensor *b = tk_initializer(m, bn), *s = tk_initializer(m, sn);
    bool laid = i != 2 && i != 3;
    CHECK(b && s && (b->packing.kind == &ol_packing_lanes) == laid && (s->packing.kind == &ol_packing_lanes) == laid);
    if (!b || !s) continue;
    if (laid) {
      const uint8_t ox = OL_LANE_ODD_XOR(n->bits);
      CHECK(b->packing.params[0] == N_ && s->packing.params[0] == N_);
      CHECK(b->packing.params[2] == ox && s->packing.params[2] == 0);
      CHECK(b->packing.params[3] == blob_of(n) && s->packing.params[3] == (int64_t)sizeof(float));
      /* output 9 (group 1 of the pair of groups 0 and 1, lane 1), word 3 of
       * its bytes (block 3 / cpw, word 3 % cpw of the block); scale of block 2 */
      const int cpw = blob_of(n) / 4, j = 3 / cpw, c = 3 % cpw;
      const uint8_t *word = (const uint8_t *)ol_tdata(b) + blob_of(n) * 8 * (2 * j + 1) + 4 * (8 * c + 1);
      CHECK(laid_equal(word, n->b + 9 * KB_ * blob_of(n) + 4 * 3, 4, ox));
      CHECK(((const float *)ol_tdata(s))[8 * (2 * 2 + 1) + 1] == n->s[9 * KB_ + 2]);
      /* the tail (outputs 16..19) stays in its dense place */
      CHECK(laid_equal((const uint8_t *)ol_tdata(b) + 16 * KB_ * blob_of(n), n->b + 16 * KB_ * blob_of(n),
                       (size_t)(4 * KB_ * blob_of(n)), ox));
    } else {
      CHECK(memcmp(ol_tdata(b), n->b, (size_t)(N_ * KB_ * blob_of(n))) == 0);
    }
    if (n->zp) CHECK(!ol_tensor_is_packed(tk_initializer(m, zn)));
  }

  /* sessions on 1..3 threads compute the references' bits */
  float x[2 * K_];
  for (int i = 0; i < 2 * K_; i++) x[i] = rnd();
  float want[5][2 * N_];
  for (int i = 0; i < 5; i++) {
    const node_spec *n = &specs[i];
    ol_qgemv_shape s = {K_, N_, 32, n->bits};
    for (int r = 0; r < 2; r++) {
      if (n->level == 4) ol_qgemv_i8_nbits_scalar(&s, x + r * K_, n->b, n->s, n->zp ? n->z : NULL, NULL, NULL, want[i] + r * N_);
      else ol_qgemv_nbits_scalar(&s, x + r * K_, n->b, n->s, n->zp ? n->z : NULL, NULL, NULL, want[i] + r * N_);
    }
  }
  ol_pool_reserve(3);
  for (int threads = 1; threads <= 3; threads++) {
    ol_session_options options;
    ol_session_options_init(&options);
    options.intra_op_num_threads = threads;
    ol_session *session = NULL;
    CHECK_OK(ol_session_create(m, &options, &session));
    int64_t xd[2] = {2, K_};
    ol_value *in[1] = {NULL}, *out[6] = {NULL};
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, xd, 2, &in[0]));
    if (session && in[0]) {
      memcpy(ol_tensor_data(in[0]), x, sizeof x);
      const char *names[1] = {"x"};
      CHECK_OK(ol_session_run(session, names, in, 1, NULL, out, 6, NULL));
      for (int i = 0; i < 5; i++) {
        bool same = out[i] && memcmp(ol_tensor_data(out[i]), want[i], sizeof want[i]) == 0;
        if (!same) fprintf(stderr, "  output y%d on %d threads differs\n", i + 1, threads);
        CHECK(same);
      }
      CHECK(out[5] && memcmp(ol_tensor_data(out[5]), specs[3].b, (size_t)(N_ * KB_ * blob_of(&specs[3]))) == 0);
    }
    ol_value_release(in[0]);
    for (int i = 0; i < 6; i++) ol_value_release(out[i]);
    ol_session_destroy(session);
  }

  /* serialization and the text printer give back the dense bytes */
  tk_check_gives_back_bytes(m, bytes, size);

  /* cloning or densifying a lane-layout tensor gives the dense bytes */
  const char *names[2] = {"b1", "s1"};
  const void *dense[2] = {specs[0].b, specs[0].s};
  size_t lengths[2] = {sizeof specs[0].b / 2, sizeof specs[0].s};
  for (int i = 0; i < 2; i++) {
    const ol_initializer *init = ol_graph_find_initializer(m->data->graph, names[i]);
    ol_value *laid = init ? ol_value_retain(init->value) : NULL, *clone = NULL, *d = NULL;
    if (laid) CHECK_OK(ol_tensor_clone(NULL, &laid->tensor, &clone));
    CHECK(clone && !ol_tensor_is_packed(&clone->tensor) && memcmp(ol_tdata(&clone->tensor), dense[i], lengths[i]) == 0);
    d = laid;
    CHECK_OK(ol_value_densify(NULL, &d));
    CHECK(d && d != laid && !ol_tensor_is_packed(&d->tensor) && memcmp(ol_tdata(&d->tensor), dense[i], lengths[i]) == 0);
    ol_value_release(d);
    ol_value_release(clone);
  }
  ol_model_destroy(m);
  ol_free(bytes);
}

OL_TEST_MAIN(TEST(test_lanes_round_trip), TEST(test_lane_shapes), TEST(test_lane_rows), TEST(test_kernel_reads_lanes),
             TEST(test_loader_lays_out_nbits_weights))
