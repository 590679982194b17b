/* Attention (ai.onnx 23): numerics against a naive double-precision reference
 * written here, error paths, and the KV append path driven by a fake runtime
 * (reservation over a buffer the test owns, declined reservations, storage
 * counts against the seed's cost model). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

/* ------------------------------------------------------------ data */

static uint32_t rng_state = 12345u;
static float rnd(void) {
  rng_state = rng_state * 1664525u + 1013904223u;
  return (float)((rng_state >> 8) & 0xFFFF) / 32768.0f - 1.0f;
}
static float *rnd_array(int64_t n) {
  float *a = malloc(sizeof(float) * (size_t)(n ? n : 1));
  for (int64_t i = 0; i < n; i++) a[i] = rnd();
  return a;
}

/* [B, H, S, D] (logical) -> [B, S, H*D] */
static float *to_3d(const float *x, int64_t B, int64_t H, int64_t S, int64_t D) {
  float *y = malloc(sizeof(float) * (size_t)(B * H * S * D + 1));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++)
      for (int64_t s = 0; s < S; s++)
        for (int64_t d = 0; d < D; d++)
          y[((b * S + s) * H + h) * D + d] = x[((b * H + h) * S + s) * D + d];
  return y;
}

/* [B, H, P, D] ++ [B, H, L, D] along axis 2 */
static float *concat2(const float *p, const float *n, int64_t B, int64_t H, int64_t P, int64_t L,
                      int64_t D) {
  float *y = malloc(sizeof(float) * (size_t)(B * H * (P + L) * D + 1));
  for (int64_t b = 0; b < B; b++)
    for (int64_t h = 0; h < H; h++) {
      float *o = y + (b * H + h) * (P + L) * D;
      if (P) memcpy(o, p + (b * H + h) * P * D, sizeof(float) * (size_t)(P * D));
      if (L) memcpy(o + P * D, n + (b * H + h) * L * D, sizeof(float) * (size_t)(L * D));
    }
  return y;
}

/* ------------------------------------------------------------ reference */

typedef struct ref_case {
  int64_t B, Hq, Hkv, S, L, P, Dk, Dv;
  bool causal;
  float scale; /* 0: default */
  float softcap;
  /* mask: rank 0 = none; broadcast over [B, Hq, S, T] */
  int mask_rank;
  int64_t mask_dims[4];
  const float *fmask;
  const uint8_t *bmask;
} ref_case;

static double mask_at(const ref_case *c, int64_t b, int64_t h, int64_t i, int64_t j, bool *has) {
  *has = c->mask_rank > 0;
  if (!*has) return 0.0;
  int64_t idx4[4] = {b, h, i, j};
  int64_t off = 0;
  for (int k = 0; k < c->mask_rank; k++) {
    int64_t d = c->mask_dims[k];
    int64_t ix = idx4[4 - c->mask_rank + k];
    off = off * d + (d == 1 ? 0 : ix);
  }
  if (c->bmask) return c->bmask[off] ? 0.0 : -INFINITY;
  return c->fmask[off];
}

/* q [B,Hq,S,Dk], k [B,Hkv,T,Dk], v [B,Hkv,T,Dv] (present, 4-D logical).
 * y [B,Hq,S,Dv]; qk[4] per mode [B,Hq,S,T] (may be NULL). */
static void reference(const ref_case *c, const float *q, const float *k, const float *v, float *y,
                      float *qk[4]) {
  int64_t T = c->P + c->L;
  double scale = c->scale > 0 ? c->scale : 1.0 / sqrt((double)c->Dk);
  double *sc = malloc(sizeof(double) * (size_t)(T + 1));
  int64_t g = c->Hq / c->Hkv;
  for (int64_t b = 0; b < c->B; b++)
    for (int64_t h = 0; h < c->Hq; h++)
      for (int64_t i = 0; i < c->S; i++) {
        int64_t kvh = h / g;
        int64_t qo = ((b * c->Hq + h) * c->S + i) * T;
        for (int64_t j = 0; j < T; j++) {
          double dot = 0;
          for (int64_t d = 0; d < c->Dk; d++)
            dot += (double)q[((b * c->Hq + h) * c->S + i) * c->Dk + d] *
                   (double)k[((b * c->Hkv + kvh) * T + j) * c->Dk + d];
          dot *= scale;
          bool has;
          double bias = mask_at(c, b, h, i, j, &has);
          if (c->causal && j > c->P + i) bias = -INFINITY;
          if (qk) {
            qk[0][qo + j] = (float)dot;
            qk[1][qo + j] = (float)(dot + bias);
          }
          if (c->softcap > 0) dot = c->softcap * tanh(dot / c->softcap);
          sc[j] = dot + bias;
          if (qk) qk[2][qo + j] = (float)sc[j];
        }
        double m = -INFINITY, sum = 0;
        for (int64_t j = 0; j < T; j++) m = sc[j] > m ? sc[j] : m;
        for (int64_t j = 0; j < T; j++) {
          sc[j] = m == -INFINITY ? 0.0 : exp(sc[j] - m);
          sum += sc[j];
        }
        for (int64_t j = 0; j < T; j++) {
          sc[j] = sum > 0 ? sc[j] / sum : 0.0;
          if (qk) qk[3][qo + j] = (float)sc[j];
        }
        for (int64_t d = 0; d < c->Dv; d++) {
          double a = 0;
          for (int64_t j = 0; j < T; j++) a += sc[j] * v[((b * c->Hkv + kvh) * T + j) * c->Dv + d];
          y[((b * c->Hq + h) * c->S + i) * c->Dv + d] = (float)a;
        }
      }
  free(sc);
}

static bool close_f32(const float *got, const float *want, int64_t n, float tol) {
  for (int64_t i = 0; i < n; i++) {
    if (isinf(want[i]) && got[i] == want[i]) continue;
    if (!(fabsf(got[i] - want[i]) <= tol * (1.0f + fabsf(want[i])))) {
      fprintf(stderr, "  element %lld: got %.9g want %.9g\n", (long long)i, got[i], want[i]);
      return false;
    }
  }
  return true;
}
static bool dims_are(const ol_value *v, int rank, const int64_t *dims) {
  if (!v || v->kind != OL_VALUE_TENSOR || v->tensor.rank != rank) return false;
  for (int i = 0; i < rank; i++)
    if (v->tensor.dims[i] != dims[i]) return false;
  return true;
}
static void release_all(ol_value **v, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ol_value_release(v[i]);
    v[i] = NULL;
  }
}

/* ------------------------------------------------------------ one full case */

typedef struct run_opts {
  bool rank3;
  bool with_past;
  int qk_mode; /* -1: no qk output */
} run_opts;

/* Runs c through tk_run and checks Y (and presents, qk output) against the
 * reference. */
static void check_case(const ref_case *c, run_opts o) {
  int64_t T = c->P + c->L;
  float *q = rnd_array(c->B * c->Hq * c->S * c->Dk);
  float *kn = rnd_array(c->B * c->Hkv * c->L * c->Dk);
  float *vn = rnd_array(c->B * c->Hkv * c->L * c->Dv);
  float *pk = rnd_array(c->B * c->Hkv * c->P * c->Dk);
  float *pv = rnd_array(c->B * c->Hkv * c->P * c->Dv);
  float *kf = concat2(pk, kn, c->B, c->Hkv, c->P, c->L, c->Dk);
  float *vf = concat2(pv, vn, c->B, c->Hkv, c->P, c->L, c->Dv);
  int64_t ny = c->B * c->Hq * c->S * c->Dv, nqk = c->B * c->Hq * c->S * T;
  float *y = malloc(sizeof(float) * (size_t)(ny + 1));
  float *qk[4];
  for (int m = 0; m < 4; m++) qk[m] = malloc(sizeof(float) * (size_t)(nqk + 1));
  reference(c, q, kf, vf, y, qk);

  ol_value *in[6] = {0};
  if (o.rank3) {
    float *q3 = to_3d(q, c->B, c->Hq, c->S, c->Dk);
    float *k3 = to_3d(kn, c->B, c->Hkv, c->L, c->Dk);
    float *v3 = to_3d(vn, c->B, c->Hkv, c->L, c->Dv);
    int64_t qd[3] = {c->B, c->S, c->Hq * c->Dk}, kd[3] = {c->B, c->L, c->Hkv * c->Dk},
            vd[3] = {c->B, c->L, c->Hkv * c->Dv};
    in[0] = tk_f32(3, qd, q3);
    in[1] = tk_f32(3, kd, k3);
    in[2] = tk_f32(3, vd, v3);
    free(q3);
    free(k3);
    free(v3);
  } else {
    int64_t qd[4] = {c->B, c->Hq, c->S, c->Dk}, kd[4] = {c->B, c->Hkv, c->L, c->Dk},
            vd[4] = {c->B, c->Hkv, c->L, c->Dv};
    in[0] = tk_f32(4, qd, q);
    in[1] = tk_f32(4, kd, kn);
    in[2] = tk_f32(4, vd, vn);
  }
  if (c->mask_rank)
    in[3] = c->bmask ? tk_tensor(OL_DTYPE_BOOL, c->mask_rank, c->mask_dims, c->bmask)
                     : tk_f32(c->mask_rank, c->mask_dims, c->fmask);
  if (o.with_past) {
    int64_t pkd[4] = {c->B, c->Hkv, c->P, c->Dk}, pvd[4] = {c->B, c->Hkv, c->P, c->Dv};
    in[4] = tk_f32(4, pkd, pk);
    in[5] = tk_f32(4, pvd, pv);
  }
  ol_attr attrs[8];
  size_t na = 0;
  if (c->causal) attrs[na++] = tk_attr_int("is_causal", 1);
  if (o.rank3) {
    attrs[na++] = tk_attr_int("q_num_heads", c->Hq);
    attrs[na++] = tk_attr_int("kv_num_heads", c->Hkv);
  }
  if (c->scale > 0) attrs[na++] = tk_attr_float("scale", c->scale);
  if (c->softcap > 0) attrs[na++] = tk_attr_float("softcap", c->softcap);
  if (o.qk_mode >= 0) attrs[na++] = tk_attr_int("qk_matmul_output_mode", o.qk_mode);
  size_t nout = o.qk_mode >= 0 ? 4 : 3;
  ol_value *out[4] = {0};
  CHECK_OK(tk_run("Attention", 23, attrs, na, in, 6, out, nout));
  if (out[0]) {
    if (o.rank3) {
      int64_t yd[3] = {c->B, c->S, c->Hq * c->Dv};
      CHECK(dims_are(out[0], 3, yd));
      float *y3 = to_3d(y, c->B, c->Hq, c->S, c->Dv);
      CHECK(close_f32(ol_tdata(&out[0]->tensor), y3, ny, 2e-5f));
      free(y3);
    } else {
      int64_t yd[4] = {c->B, c->Hq, c->S, c->Dv};
      CHECK(dims_are(out[0], 4, yd));
      CHECK(close_f32(ol_tdata(&out[0]->tensor), y, ny, 2e-5f));
    }
    int64_t pkd[4] = {c->B, c->Hkv, T, c->Dk}, pvd[4] = {c->B, c->Hkv, T, c->Dv};
    CHECK(dims_are(out[1], 4, pkd));
    CHECK(dims_are(out[2], 4, pvd));
    if (out[1] && out[2]) {
      CHECK(memcmp(ol_tdata(&out[1]->tensor), kf, sizeof(float) * (size_t)(c->B * c->Hkv * T * c->Dk)) == 0);
      CHECK(memcmp(ol_tdata(&out[2]->tensor), vf, sizeof(float) * (size_t)(c->B * c->Hkv * T * c->Dv)) == 0);
    }
    if (o.qk_mode >= 0) {
      int64_t qd[4] = {c->B, c->Hq, c->S, T};
      CHECK(dims_are(out[3], 4, qd));
      if (out[3]) CHECK(close_f32(ol_tdata(&out[3]->tensor), qk[o.qk_mode], nqk, 2e-5f));
    }
  }
  release_all(out, 4);
  release_all(in, 6);
  free(q), free(kn), free(vn), free(pk), free(pv), free(kf), free(vf), free(y);
  for (int m = 0; m < 4; m++) free(qk[m]);
}

/* ------------------------------------------------------------ numerics */

static void test_mha_4d(void) {
  ref_case c = {.B = 2, .Hq = 3, .Hkv = 3, .S = 4, .L = 6, .Dk = 8, .Dv = 8};
  check_case(&c, (run_opts){.qk_mode = -1});
  ref_case d = {.B = 2, .Hq = 3, .Hkv = 3, .S = 4, .L = 6, .Dk = 8, .Dv = 10}; /* Dv != Dk */
  check_case(&d, (run_opts){.qk_mode = -1});
}

static void test_gqa(void) {
  ref_case c = {.B = 2, .Hq = 9, .Hkv = 3, .S = 4, .L = 6, .Dk = 8, .Dv = 8};
  check_case(&c, (run_opts){.qk_mode = -1});
  ref_case mqa = {.B = 1, .Hq = 4, .Hkv = 1, .S = 3, .L = 5, .Dk = 4, .Dv = 6};
  check_case(&mqa, (run_opts){.qk_mode = -1});
}

static void test_causal(void) {
  ref_case c = {.B = 1, .Hq = 2, .Hkv = 2, .S = 5, .L = 5, .Dk = 4, .Dv = 4, .causal = true};
  check_case(&c, (run_opts){.qk_mode = 3});
  /* query 0 sees only key 0: its probabilities are exactly [1, 0, 0, ...] */
}

static void test_causal_with_past(void) {
  ref_case c = {.B = 2, .Hq = 4, .Hkv = 2, .S = 3, .L = 3, .P = 4, .Dk = 8, .Dv = 6,
                .causal = true};
  check_case(&c, (run_opts){.with_past = true, .qk_mode = 3});
  ref_case dec = {.B = 1, .Hq = 2, .Hkv = 1, .S = 1, .L = 1, .P = 7, .Dk = 4, .Dv = 4,
                  .causal = true};
  check_case(&dec, (run_opts){.with_past = true, .qk_mode = -1});
  ref_case nc = {.B = 1, .Hq = 2, .Hkv = 2, .S = 2, .L = 2, .P = 3, .Dk = 4, .Dv = 4};
  check_case(&nc, (run_opts){.with_past = true, .qk_mode = 0});
}

static void test_3d_inputs(void) {
  ref_case c = {.B = 2, .Hq = 4, .Hkv = 2, .S = 3, .L = 5, .Dk = 4, .Dv = 6};
  check_case(&c, (run_opts){.rank3 = true, .qk_mode = -1});
  ref_case p = {.B = 1, .Hq = 4, .Hkv = 2, .S = 2, .L = 2, .P = 3, .Dk = 4, .Dv = 4,
                .causal = true};
  check_case(&p, (run_opts){.rank3 = true, .with_past = true, .qk_mode = 2});
}

static void test_masks(void) {
  /* bool [S, T] */
  uint8_t bm[4 * 6];
  for (int i = 0; i < 24; i++) bm[i] = (uint8_t)((i * 7 + 3) % 4 != 0);
  bm[6] = bm[7] = bm[8] = bm[9] = bm[10] = bm[11] = 0; /* row 1 fully masked -> zeros */
  ref_case c = {.B = 2, .Hq = 3, .Hkv = 3, .S = 4, .L = 6, .Dk = 4, .Dv = 4, .mask_rank = 2,
                .mask_dims = {4, 6}, .bmask = bm};
  check_case(&c, (run_opts){.qk_mode = 3});
  /* float [B, 1, S, T] */
  float *fm = rnd_array(2 * 4 * 6);
  ref_case f = {.B = 2, .Hq = 3, .Hkv = 1, .S = 4, .L = 6, .Dk = 4, .Dv = 4, .mask_rank = 4,
                .mask_dims = {2, 1, 4, 6}, .fmask = fm};
  check_case(&f, (run_opts){.qk_mode = 1});
  /* float [Hq, 1, T] (rank 3), with causal and past */
  float *fm3 = rnd_array(3 * 1 * 5);
  ref_case g = {.B = 1, .Hq = 3, .Hkv = 3, .S = 2, .L = 2, .P = 3, .Dk = 4, .Dv = 4,
                .causal = true, .mask_rank = 3, .mask_dims = {3, 1, 5}, .fmask = fm3};
  check_case(&g, (run_opts){.with_past = true, .qk_mode = 1});
  free(fm);
  free(fm3);
}

static void test_scale_softcap(void) {
  ref_case c = {.B = 1, .Hq = 2, .Hkv = 2, .S = 3, .L = 4, .Dk = 4, .Dv = 4, .scale = 0.7f};
  check_case(&c, (run_opts){.qk_mode = 0});
  ref_case s = {.B = 1, .Hq = 2, .Hkv = 1, .S = 3, .L = 4, .Dk = 4, .Dv = 4, .scale = 3.0f,
                .softcap = 1.5f};
  for (int m = 0; m < 4; m++) check_case(&s, (run_opts){.qk_mode = m});
  /* softcap leaves masked positions masked */
  ref_case sc = {.B = 1, .Hq = 1, .Hkv = 1, .S = 3, .L = 3, .Dk = 4, .Dv = 4, .causal = true,
                 .softcap = 2.0f};
  check_case(&sc, (run_opts){.qk_mode = 3});
}

/* Hand-checked values: one query, two keys, uniform attention. */
static void test_known_values(void) {
  int64_t qd[4] = {1, 1, 1, 2}, kd[4] = {1, 1, 2, 2};
  float qv[2] = {0, 0}, kv[4] = {1, 2, 3, 4}, vv[4] = {1, 10, 3, 30};
  ol_value *in[3] = {tk_f32(4, qd, qv), tk_f32(4, kd, kv), tk_f32(4, kd, vv)};
  ol_value *out[1] = {0};
  CHECK_OK(tk_run("Attention", 23, NULL, 0, in, 3, out, 1));
  if (out[0]) {
    const float *y = ol_tdata(&out[0]->tensor);
    CHECK(y[0] == 2.0f && y[1] == 20.0f);
  }
  release_all(out, 1);
  release_all(in, 3);
}

static void test_float16(void) {
  int64_t B = 1, H = 2, S = 2, L = 3, D = 4;
  int64_t n_q = B * H * S * D, n_k = B * H * L * D;
  float *q = rnd_array(n_q), *k = rnd_array(n_k), *v = rnd_array(n_k);
  uint16_t *qh = malloc(2 * (size_t)n_q), *kh = malloc(2 * (size_t)n_k), *vh = malloc(2 * (size_t)n_k);
  for (int64_t i = 0; i < n_q; i++) q[i] = ol_f16_to_f32(qh[i] = ol_f32_to_f16(q[i]));
  for (int64_t i = 0; i < n_k; i++) k[i] = ol_f16_to_f32(kh[i] = ol_f32_to_f16(k[i]));
  for (int64_t i = 0; i < n_k; i++) v[i] = ol_f16_to_f32(vh[i] = ol_f32_to_f16(v[i]));
  int64_t qd[4] = {B, H, S, D}, kd[4] = {B, H, L, D};
  ol_value *in[3] = {tk_tensor(OL_DTYPE_FLOAT16, 4, qd, qh), tk_tensor(OL_DTYPE_FLOAT16, 4, kd, kh),
                     tk_tensor(OL_DTYPE_FLOAT16, 4, kd, vh)};
  ol_value *fin[3] = {tk_f32(4, qd, q), tk_f32(4, kd, k), tk_f32(4, kd, v)};
  ol_value *out[3] = {0}, *fout[1] = {0};
  CHECK_OK(tk_run("Attention", 23, NULL, 0, in, 3, out, 3));
  CHECK_OK(tk_run("Attention", 23, NULL, 0, fin, 3, fout, 1));
  if (out[0] && fout[0]) {
    CHECK(out[0]->tensor.dtype == OL_DTYPE_FLOAT16);
    const uint16_t *y = ol_tdata(&out[0]->tensor);
    const float *yf = ol_tdata(&fout[0]->tensor);
    /* same float32 computation, rounded once on store */
    for (int64_t i = 0; i < n_q; i++) CHECK(y[i] == ol_f32_to_f16(yf[i]));
    CHECK(out[1] && memcmp(ol_tdata(&out[1]->tensor), kh, 2 * (size_t)n_k) == 0);
  }
  release_all(out, 3);
  release_all(fout, 1);
  release_all(in, 3);
  release_all(fin, 3);
  free(q), free(k), free(v), free(qh), free(kh), free(vh);
}

/* ------------------------------------------------------------ errors */

static ol_status run_shapes(int rank, const int64_t *qd, const int64_t *kd, const int64_t *vd,
                            ol_attr *attrs, size_t na, ol_value *mask, ol_value *pk, ol_value *pv) {
  ol_value *in[6] = {tk_f32(rank, qd, NULL), tk_f32(rank, kd, NULL), tk_f32(rank, vd, NULL), mask,
                     pk, pv};
  ol_value *out[3] = {0};
  ol_status s = tk_run("Attention", 23, attrs, na, in, 6, out, 3);
  release_all(out, 3);
  release_all(in, 6);
  return s;
}

static void test_errors(void) {
  int64_t q4[4] = {1, 3, 2, 4}, k4[4] = {1, 2, 3, 4}, ok4[4] = {1, 3, 3, 4};
  /* 3 query heads over 2 kv heads */
  CHECK_STATUS(run_shapes(4, q4, k4, k4, NULL, 0, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  /* head size mismatch */
  int64_t kbad[4] = {1, 3, 3, 5};
  CHECK_STATUS(run_shapes(4, q4, kbad, ok4, NULL, 0, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  /* batch mismatch */
  int64_t kb[4] = {2, 3, 3, 4};
  CHECK_STATUS(run_shapes(4, q4, kb, kb, NULL, 0, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  /* K and V sequence lengths differ */
  int64_t vl[4] = {1, 3, 4, 4};
  CHECK_STATUS(run_shapes(4, q4, ok4, vl, NULL, 0, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  /* mask that does not broadcast */
  int64_t md[2] = {2, 2};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, NULL, 0, tk_f32(2, md, NULL), NULL, NULL),
               OL_INVALID_ARGUMENT);
  /* int64 mask */
  int64_t md2[2] = {2, 3};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, NULL, 0, tk_i64(2, md2, NULL), NULL, NULL),
               OL_INVALID_ARGUMENT);
  /* past_key without past_value, past with wrong heads */
  int64_t pd[4] = {1, 3, 2, 4}, pbad[4] = {1, 2, 2, 4};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, NULL, 0, NULL, tk_f32(4, pd, NULL), NULL),
               OL_INVALID_ARGUMENT);
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, NULL, 0, NULL, tk_f32(4, pbad, NULL),
                          tk_f32(4, pbad, NULL)),
               OL_INVALID_ARGUMENT);
  /* mixed ranks */
  {
    int64_t k3[3] = {1, 3, 12};
    ol_value *in[3] = {tk_f32(4, q4, NULL), tk_f32(3, k3, NULL), tk_f32(3, k3, NULL)};
    ol_value *out[1] = {0};
    CHECK_STATUS(tk_run("Attention", 23, NULL, 0, in, 3, out, 1), OL_INVALID_ARGUMENT);
    release_all(out, 1);
    release_all(in, 3);
  }
  /* 3-D: missing head attributes; hidden not a multiple of heads */
  int64_t q3[3] = {1, 2, 12}, k3[3] = {1, 3, 8};
  CHECK_STATUS(run_shapes(3, q3, k3, k3, NULL, 0, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr heads[2] = {tk_attr_int("q_num_heads", 5), tk_attr_int("kv_num_heads", 1)};
  CHECK_STATUS(run_shapes(3, q3, k3, k3, heads, 2, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  /* 4-D with a contradicting head attribute */
  ol_attr qh[1] = {tk_attr_int("q_num_heads", 6)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, qh, 1, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  /* bad attributes */
  ol_attr a1[1] = {tk_attr_int("qk_matmul_output_mode", 4)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a1, 1, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr a2[1] = {tk_attr_float("scale", 0.0f)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a2, 1, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr a3[1] = {tk_attr_float("softcap", -1.0f)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a3, 1, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr a4[1] = {tk_attr_int("is_causal", 2)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a4, 1, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr a5[2] = {tk_attr_int("q_num_heads", 3), tk_attr_int("kv_num_heads", 2)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a5, 2, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr a6[1] = {tk_attr_int("kv_num_heads", 0)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a6, 1, NULL, NULL, NULL), OL_INVALID_MODEL);
  ol_attr a7[1] = {tk_attr_int("softmax_precision", 7)};
  CHECK_STATUS(run_shapes(4, q4, ok4, ok4, a7, 1, NULL, NULL, NULL), OL_INVALID_MODEL);
  /* not an opset-22 operator */
  {
    ol_value *in[3] = {tk_f32(4, q4, NULL), tk_f32(4, ok4, NULL), tk_f32(4, ok4, NULL)};
    ol_value *out[1] = {0};
    CHECK_STATUS(tk_run("Attention", 22, NULL, 0, in, 3, out, 1), OL_NOT_IMPLEMENTED);
    release_all(out, 1);
    release_all(in, 3);
  }
}

/* ------------------------------------------------------------ fake runtime */

typedef struct fake_rt {
  ol_kernel_ctx *ctx;
  bool grant;
  ol_buffer *buf[3];  /* [1]: key, [2]: value (capacity cap rows) */
  int64_t cap;
  ol_storage_counts give[3]; /* counts the fake reservation reports */
  int reserve_calls[3], commit_calls[3], record_calls;
  int bad_calls; /* calls with wrong arguments */
  ol_storage_counts recorded;
} fake_rt;

static ol_status fake_reserve(void *runtime, size_t input, size_t output, int rank,
                              const int64_t *dims, int axis, ol_append_reservation *res) {
  fake_rt *rt = runtime;
  if (output != 1 && output != 2) return ol_error(OL_INTERNAL, "fake: bad output %zu", output);
  rt->reserve_calls[output]++;
  if (rt->reserve_calls[output] > 1) return ol_error(OL_FAILED_PRECONDITION, "second attempt");
  if (input != output + 3 || rank != 4 || axis != 2) rt->bad_calls++;
  memset(res, 0, sizeof *res);
  if (!rt->grant) return OL_OK;
  const ol_tensor *past = &rt->ctx->inputs[input]->tensor;
  if (dims[0] != 1 || dims[1] != 1 || dims[2] > rt->cap || dims[3] != past->dims[3]) return OL_OK;
  OL_TRY(ol_value_new_view(rt->buf[output], 0, OL_DTYPE_FLOAT, 4, dims, &res->result));
  size_t row = sizeof(float) * (size_t)dims[3];
  res->writable = (char *)rt->buf[output]->data + row * (size_t)past->dims[2];
  res->writable_bytes = row * (size_t)(dims[2] - past->dims[2]);
  res->rows = 1;
  res->row_bytes = res->writable_bytes;
  res->row_stride = row * (size_t)rt->cap;
  res->bound = true;
  res->counts = rt->give[output];
  return OL_OK;
}
static ol_status fake_commit(void *runtime, size_t output, ol_append_reservation *res) {
  fake_rt *rt = runtime;
  rt->commit_calls[output]++;
  if (rt->ctx->outputs[output]) return ol_error(OL_INTERNAL, "output already set");
  rt->ctx->outputs[output] = res->result;
  res->result = NULL;
  return OL_OK;
}
static ol_status fake_record(void *runtime, const ol_storage_counts *c) {
  fake_rt *rt = runtime;
  rt->record_calls++;
  rt->recorded.allocations += c->allocations;
  rt->recorded.allocated_bytes += c->allocated_bytes;
  rt->recorded.prefix_copied_bytes += c->prefix_copied_bytes;
  rt->recorded.append_copied_bytes += c->append_copied_bytes;
  rt->recorded.reuse_count += c->reuse_count;
  return OL_OK;
}

/* tk_run with the fake runtime's callbacks. */
static ol_status run_fake(fake_rt *rt, ol_attr *attrs, size_t na, ol_value *const *inputs,
                          ol_value **outputs, size_t nout) {
  static const char *names[] = {"q", "k", "v", "m", "pk", "pv"};
  static const char *out_names[] = {"y", "present_k", "present_v", "qk"};
  const char *in_list[6];
  for (size_t i = 0; i < 6; i++) in_list[i] = inputs[i] ? names[i] : "";
  ol_node node = {0};
  node.name = "attn";
  node.op_type = "Attention";
  node.domain = "";
  node.opset = 23;
  node.num_inputs = 6;
  node.inputs = in_list;
  node.num_outputs = nout;
  node.outputs = out_names;
  node.num_attrs = na;
  node.attrs = attrs;
  const ol_op_schema *reg;
  OL_TRY(ol_schema_find(&node, &reg));
  ol_kernel *k;
  OL_TRY(reg->create(&node, &k));
  for (size_t i = 0; i < nout; i++) outputs[i] = NULL;
  int cancelled = 0;
  ol_kernel_ctx ctx = {0};
  ctx.node = &node;
  ctx.inputs = inputs;
  ctx.num_inputs = 6;
  ctx.outputs = outputs;
  ctx.num_outputs = nout;
  ctx.cancelled = &cancelled;
  ctx.runtime = rt;
  ctx.reserve_append = fake_reserve;
  ctx.commit_append = fake_commit;
  ctx.record_storage = fake_record;
  rt->ctx = &ctx;
  ol_status s = k->compute(k, &ctx);
  rt->ctx = NULL;
  if (k->destroy) k->destroy(k); else free(k);
  return s;
}

#define SENTINEL 0xA5u

/* One decode step, B = H = 1 (eligible layout): the reservation reuses spare
 * capacity; only the tail is written; results equal the dense path. */
static void append_case(int64_t P, int64_t L, int64_t Dk, int64_t Dv, int64_t Hq, bool rank3,
                        bool growth) {
  const int64_t cap = P + L + 5, T = P + L;
  fake_rt rt;
  memset(&rt, 0, sizeof rt);
  rt.grant = true;
  rt.cap = cap;
  int64_t D[3] = {0, Dk, Dv};
  float *prefix[3] = {0}, *newrows[3] = {0};
  ol_value *past[3] = {0};
  for (int o = 1; o <= 2; o++) {
    size_t bytes = sizeof(float) * (size_t)(cap * D[o]);
    rt.buf[o] = ol_buffer_new(NULL, bytes);
    memset(rt.buf[o]->data, SENTINEL, bytes);
    prefix[o] = rnd_array(P * D[o]);
    if (P) memcpy(rt.buf[o]->data, prefix[o], sizeof(float) * (size_t)(P * D[o]));
    int64_t pd[4] = {1, 1, P, D[o]};
    CHECK_OK(ol_value_new_view(rt.buf[o], 0, OL_DTYPE_FLOAT, 4, pd, &past[o]));
    newrows[o] = rnd_array(L * D[o]);
    if (growth) {
      rt.give[o].allocations = 1;
      rt.give[o].allocated_bytes = bytes;
      rt.give[o].prefix_copied_bytes = sizeof(float) * (size_t)(P * D[o]);
    } else {
      rt.give[o].reuse_count = 1;
    }
  }
  float *q = rnd_array(Hq * L * Dk);
  ol_value *in[6] = {0};
  ol_attr attrs[3];
  size_t na = 0;
  attrs[na++] = tk_attr_int("is_causal", 1);
  if (rank3) {
    int64_t qd[3] = {1, L, Hq * Dk}, kd[3] = {1, L, Dk}, vd[3] = {1, L, Dv};
    float *q3 = to_3d(q, 1, Hq, L, Dk);
    in[0] = tk_f32(3, qd, q3);
    free(q3);
    in[1] = tk_f32(3, kd, newrows[1]);
    in[2] = tk_f32(3, vd, newrows[2]);
    attrs[na++] = tk_attr_int("q_num_heads", Hq);
    attrs[na++] = tk_attr_int("kv_num_heads", 1);
  } else {
    int64_t qd[4] = {1, Hq, L, Dk}, kd[4] = {1, 1, L, Dk}, vd[4] = {1, 1, L, Dv};
    in[0] = tk_f32(4, qd, q);
    in[1] = tk_f32(4, kd, newrows[1]);
    in[2] = tk_f32(4, vd, newrows[2]);
  }
  in[4] = past[1];
  in[5] = past[2];
  ol_value *out[3] = {0}, *dense[3] = {0};
  CHECK_OK(run_fake(&rt, attrs, na, in, out, 3));
  CHECK_OK(tk_run("Attention", 23, attrs, na, in, 6, dense, 3));
  CHECK(rt.reserve_calls[1] == 1 && rt.reserve_calls[2] == 1);
  CHECK(rt.commit_calls[1] == 1 && rt.commit_calls[2] == 1);
  CHECK(rt.bad_calls == 0);
  CHECK(rt.record_calls == 1);
  for (int o = 1; o <= 2; o++) {
    const unsigned char *b = rt.buf[o]->data;
    size_t row = sizeof(float) * (size_t)D[o];
    /* the output is the reservation over our buffer */
    CHECK(out[o] && ol_tdata(&out[o]->tensor) == rt.buf[o]->data);
    /* prefix untouched, tail equals the new rows, spare capacity untouched */
    CHECK(P == 0 || memcmp(b, prefix[o], row * (size_t)P) == 0);
    CHECK(L == 0 || memcmp(b + row * (size_t)P, newrows[o], row * (size_t)L) == 0);
    bool spare_ok = true;
    for (size_t i = row * (size_t)T; i < row * (size_t)cap; i++) spare_ok = spare_ok && b[i] == SENTINEL;
    CHECK(spare_ok);
    /* bit-identical to the dense path */
    CHECK(dense[o] && out[o] && memcmp(ol_tdata(&dense[o]->tensor), ol_tdata(&out[o]->tensor),
                                       row * (size_t)T) == 0);
  }
  CHECK(out[0] && dense[0] &&
        memcmp(ol_tdata(&out[0]->tensor), ol_tdata(&dense[0]->tensor),
               sizeof(float) * (size_t)ol_tcount(&dense[0]->tensor)) == 0);
  /* cost model: 4 * L * (Dk + Dv) append bytes; 0 prefix bytes within capacity */
  uint64_t kv = (uint64_t)(Dk + Dv);
  CHECK(rt.recorded.append_copied_bytes == 4u * (uint64_t)L * kv);
  if (growth) {
    CHECK(rt.recorded.allocations == 2);
    CHECK(rt.recorded.prefix_copied_bytes == 4u * (uint64_t)P * kv);
    CHECK(rt.recorded.allocated_bytes == 4u * (uint64_t)cap * kv);
    CHECK(rt.recorded.reuse_count == 0);
  } else {
    CHECK(rt.recorded.allocations == 0);
    CHECK(rt.recorded.allocated_bytes == 0);
    CHECK(rt.recorded.prefix_copied_bytes == 0);
    CHECK(rt.recorded.reuse_count == 2);
  }
  release_all(out, 3);
  release_all(dense, 3);
  release_all(in, 6);
  for (int o = 1; o <= 2; o++) {
    ol_buffer_release(rt.buf[o]);
    free(prefix[o]);
    free(newrows[o]);
  }
  free(q);
}

static void test_append_reserved(void) {
  append_case(7, 1, 8, 8, 2, false, false);  /* one token, MQA */
  append_case(7, 1, 4, 6, 1, false, false);  /* Dk != Dv */
  append_case(5, 3, 4, 4, 2, true, false);   /* 3-D inputs, 3 new tokens */
  append_case(0, 2, 4, 4, 1, false, false);  /* empty prefix */
  append_case(6, 1, 4, 4, 2, false, true);   /* growth reported by the reservation */
}

/* Declined reservation (or multi-head layout): dense concatenation; counts as
 * the cost model says for the fallback. */
static void decline_case(int64_t B, int64_t H, int64_t P, int64_t L, int64_t Dk, int64_t Dv,
                         bool grant) {
  fake_rt rt;
  memset(&rt, 0, sizeof rt);
  rt.grant = grant; /* granted but the fake declines layouts other than [1,1,T,D] */
  rt.cap = P + L + 4;
  for (int o = 1; o <= 2; o++) rt.buf[o] = ol_buffer_new(NULL, 4 * (size_t)(rt.cap * (o == 1 ? Dk : Dv)));
  int64_t qd[4] = {B, H, L, Dk}, kd[4] = {B, H, L, Dk}, vd[4] = {B, H, L, Dv},
          pkd[4] = {B, H, P, Dk}, pvd[4] = {B, H, P, Dv};
  float *a = rnd_array(B * H * (L + P) * (Dk + Dv) + B * H * L * Dk);
  ol_value *in[6] = {tk_f32(4, qd, a), tk_f32(4, kd, a + 1), tk_f32(4, vd, a + 2), NULL,
                     tk_f32(4, pkd, a + 3), tk_f32(4, pvd, a + 4)};
  ol_value *out[3] = {0}, *dense[3] = {0};
  CHECK_OK(run_fake(&rt, NULL, 0, in, out, 3));
  CHECK_OK(tk_run("Attention", 23, NULL, 0, in, 6, dense, 3));
  CHECK(rt.reserve_calls[1] == 1 && rt.reserve_calls[2] == 1);
  CHECK(rt.commit_calls[1] == 0 && rt.commit_calls[2] == 0);
  CHECK(rt.record_calls == 1);
  for (int o = 0; o < 3; o++)
    CHECK(out[o] && dense[o] &&
          memcmp(ol_tdata(&out[o]->tensor), ol_tdata(&dense[o]->tensor),
                 sizeof(float) * (size_t)ol_tcount(&dense[o]->tensor)) == 0);
  uint64_t bh = (uint64_t)(B * H), kv = (uint64_t)(Dk + Dv);
  CHECK(rt.recorded.allocations == 2);
  CHECK(rt.recorded.allocated_bytes == 4u * bh * (uint64_t)(P + L) * kv);
  CHECK(rt.recorded.prefix_copied_bytes == 4u * bh * (uint64_t)P * kv);
  CHECK(rt.recorded.append_copied_bytes == 4u * bh * (uint64_t)L * kv);
  CHECK(rt.recorded.reuse_count == 0);
  release_all(out, 3);
  release_all(dense, 3);
  release_all(in, 6);
  for (int o = 1; o <= 2; o++) ol_buffer_release(rt.buf[o]);
  free(a);
}

static void test_append_declined(void) {
  decline_case(1, 1, 6, 1, 4, 4, false); /* reservations disabled */
  decline_case(2, 3, 5, 1, 4, 6, true);  /* multi-batch / multi-head: layout not eligible */
  decline_case(1, 2, 0, 2, 4, 4, false); /* empty prefix: no prefix bytes */
}

/* Without past_key there is nothing to append to: no reservation attempt;
 * the dense construction is still reported. Without present outputs nothing
 * is reserved or recorded. */
static void test_append_not_attempted(void) {
  fake_rt rt;
  memset(&rt, 0, sizeof rt);
  rt.grant = true;
  int64_t d4[4] = {1, 1, 3, 4};
  float *a = rnd_array(64);
  ol_value *in[6] = {tk_f32(4, d4, a), tk_f32(4, d4, a + 8), tk_f32(4, d4, a + 16), NULL, NULL,
                     NULL};
  ol_value *out[3] = {0};
  CHECK_OK(run_fake(&rt, NULL, 0, in, out, 3));
  CHECK(rt.reserve_calls[1] == 0 && rt.reserve_calls[2] == 0);
  CHECK(rt.record_calls == 1);
  CHECK(rt.recorded.allocations == 2 && rt.recorded.prefix_copied_bytes == 0 &&
        rt.recorded.append_copied_bytes == 4u * 3u * 8u);
  release_all(out, 3);
  /* past given, only Y requested */
  memset(&rt, 0, sizeof rt);
  rt.grant = true;
  int64_t p4[4] = {1, 1, 2, 4};
  in[4] = tk_f32(4, p4, a + 32);
  in[5] = tk_f32(4, p4, a + 40);
  ol_value *y[1] = {0};
  CHECK_OK(run_fake(&rt, NULL, 0, in, y, 1));
  CHECK(rt.reserve_calls[1] == 0 && rt.reserve_calls[2] == 0 && rt.record_calls == 0);
  release_all(y, 1);
  release_all(in, 6);
  free(a);
}

/* ------------------------------------------------------------ end to end */

/* A decode loop through ol_state with past_k <- present_k, past_v <- present_v
 * bound, events on: per token 4 * (Dk + Dv) append bytes and reuse within
 * capacity; growth past capacity and a kept alias allocate and copy the prefix
 * once; results are bit-identical to a stateless session fed the previous
 * presents (dense concatenation). */
static const char *DECODE =
    "<ir_version: 10, opset_import: [\"\" : 23]>\n"
    "decode (float[1,2,1,4] q, float[1,1,1,4] k, float[1,1,1,6] v, float[1,1,P,4] past_k,"
    " float[1,1,P,6] past_v) => (float[1,2,1,6] y, float[1,1,T,4] present_k,"
    " float[1,1,T,6] present_v) {\n"
    "  y, present_k, present_v = Attention <is_causal: int = 1> (q, k, v, \"\", past_k, past_v)\n"
    "}";

static ol_value *rnd_tensor(int64_t d0, int64_t d1, int64_t d2, int64_t d3) {
  int64_t dims[4] = {d0, d1, d2, d3};
  ol_value *v = NULL;
  if (ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 4, &v) != OL_OK) return NULL;
  float *f = ol_tensor_data(v);
  for (int64_t i = 0; i < d0 * d1 * d2 * d3; i++) f[i] = rnd();
  return v;
}

static void test_state_decode_events(void) {
  const int64_t Dk = 4, Dv = 6;
  const uint64_t per_token = 4u * (uint64_t)(Dk + Dv);
  ol_model *m = NULL, *bound = NULL;
  CHECK_OK(ol_model_parse_text(DECODE, &m));
  if (!m) return;
  const char *ins[2] = {"past_k", "past_v"}, *outs[2] = {"present_k", "present_v"};
  CHECK_OK(ol_model_bind_persistent(m, ins, outs, 2, &bound));
  ol_session *stateless = NULL;
  CHECK_OK(ol_session_create(m, NULL, &stateless));
  ol_value *init[2] = {rnd_tensor(1, 1, 0, Dk), rnd_tensor(1, 1, 0, Dv)};
  ol_state *st = NULL;
  ol_session_options opts;
  ol_session_options_init(&opts);
  CHECK(opts.persistent_tensor_initial_capacity == 32);
  if (bound) CHECK_OK(ol_state_create(bound, ins, init, 2, &opts, &st));
  ol_context_options copts = {1, NULL};
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(&copts, &ctx));
  if (!st || !ctx || !stateless) goto out;
  ol_value *dpast[2] = {ol_value_retain(init[0]), ol_value_retain(init[1])};
  ol_value *kept = NULL;
  float kept_copy[40 * 4];
  const void *prev_ptr[3] = {0};
  const char *feed_names[3] = {"q", "k", "v"};
  const char *all_names[5] = {"q", "k", "v", "past_k", "past_v"};
  for (int step = 0; step < 40; step++) {
    ol_value *feeds[5] = {rnd_tensor(1, 2, 1, Dk), rnd_tensor(1, 1, 1, Dk), rnd_tensor(1, 1, 1, Dv),
                          dpast[0], dpast[1]};
    ol_value *o[3] = {0}, *d[3] = {0};
    ol_context_clear_events(ctx);
    CHECK_OK(ol_state_run(st, ctx, feed_names, feeds, 3, NULL, o, 3, NULL));
    CHECK_OK(ol_session_run(stateless, all_names, feeds, 5, NULL, d, 3, NULL));
    bool same = true;
    for (int i = 0; i < 3; i++)
      same = same && o[i] && d[i] &&
             ol_tcount(&o[i]->tensor) == ol_tcount(&d[i]->tensor) &&
             memcmp(ol_tensor_data(o[i]), ol_tensor_data(d[i]),
                    sizeof(float) * (size_t)ol_tcount(&d[i]->tensor)) == 0;
    CHECK(same);
    CHECK(ol_context_event_count(ctx) == 1);
    const ol_runtime_event *e = ol_context_event_count(ctx) ? ol_context_event(ctx, 0) : NULL;
    if (e) {
      CHECK(e->action == OL_EVENT_PERSISTENT_STORAGE && strcmp(e->op_type, "Attention") == 0);
      CHECK(e->storage_append_copied_bytes == per_token);
      /* step 0: the initial values are not append buffers (both allocate);
       * step 21: the present_k alias kept at step 20 forces a fresh K buffer
       * (capacity doubled to 64) and one K prefix copy; step 32: V's capacity
       * of 32 tokens is exhausted (K still has room). Otherwise both reuse. */
      uint64_t allocs = 0, prefix = 0, reuse = 2;
      if (step == 0) allocs = 2, reuse = 0;
      if (step == 21) allocs = 1, reuse = 1, prefix = 21u * 4u * (uint64_t)Dk;
      if (step == 32) allocs = 1, reuse = 1, prefix = 32u * 4u * (uint64_t)Dv;
      if (e->storage_allocations != allocs || e->storage_prefix_copied_bytes != prefix ||
          e->storage_reuse_count != reuse)
        fprintf(stderr, "  step %d: allocations %llu prefix %llu reuse %llu\n", step,
                (unsigned long long)e->storage_allocations,
                (unsigned long long)e->storage_prefix_copied_bytes,
                (unsigned long long)e->storage_reuse_count);
      CHECK(e->storage_allocations == allocs);
      CHECK(e->storage_prefix_copied_bytes == prefix);
      CHECK(e->storage_reuse_count == reuse);
      if (allocs == 0) CHECK(e->storage_allocated_bytes == 0);
      if (step == 0) CHECK(e->storage_allocated_bytes == 32u * per_token);
      if (step == 21) CHECK(e->storage_allocated_bytes == 64u * 4u * (uint64_t)Dk);
      if (step == 32) CHECK(e->storage_allocated_bytes == 64u * 4u * (uint64_t)Dv);
    }
    /* reuse keeps the same buffer: the present output is the retained past */
    for (int i = 1; i <= 2 && o[i]; i++) {
      bool moved = step == 0 || (i == 1 && step == 21) || (i == 2 && step == 32);
      if (!moved) CHECK(ol_tensor_data(o[i]) == prev_ptr[i]);
      prev_ptr[i] = ol_tensor_data(o[i]);
    }
    if (step == 20 && o[1]) { /* keep present_k alive across the next step */
      kept = ol_value_retain(o[1]);
      memcpy(kept_copy, ol_tensor_data(kept), sizeof(float) * (size_t)ol_tcount(&kept->tensor));
    }
    if (step == 21 && kept) {
      CHECK(ol_tensor_data(kept) != ol_tensor_data(o[1]));
      CHECK(kept->tensor.dims[2] == 21);
      CHECK(memcmp(kept_copy, ol_tensor_data(kept), sizeof(float) * 21 * 4) == 0);
      ol_value_release(kept);
      kept = NULL;
    }
    ol_value_release(dpast[0]);
    ol_value_release(dpast[1]);
    dpast[0] = d[1];
    dpast[1] = d[2];
    d[1] = d[2] = NULL;
    for (int i = 0; i < 3; i++) ol_value_release(feeds[i]);
    release_all(o, 3);
    release_all(d, 3);
  }
  ol_value_release(kept);
  ol_value_release(dpast[0]);
  ol_value_release(dpast[1]);
out:
  ol_context_destroy(ctx);
  ol_state_destroy(st);
  ol_session_destroy(stateless);
  release_all(init, 2);
  ol_model_destroy(bound);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(test_known_values), TEST(test_mha_4d), TEST(test_gqa), TEST(test_causal),
             TEST(test_causal_with_past), TEST(test_3d_inputs), TEST(test_masks),
             TEST(test_scale_softcap), TEST(test_float16), TEST(test_errors),
             TEST(test_append_reserved), TEST(test_append_declined),
             TEST(test_append_not_attempted), TEST(test_state_decode_events))
