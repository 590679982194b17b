/* onnxruntime contrib operators (com.microsoft 1), block-quantized weights:
 *
 *   MatMulNBits 1: Y = A x dequant(B)^T (+ bias). B uint8 (N, k_blocks, blob)
 *       with bits 4 or 8 (LSB-first nibbles), block_size a power of two >= 16,
 *       scales (N * k_blocks) of A's type, zero_points absent (default
 *       2^(bits-1)), packed uint8 (N, ceil(k_blocks * bits / 8)) or of A's type
 *       (N * k_blocks, not packed); g_idx must be absent; bias (N).
 *       Up to 4 rows of A: simd/qgemv.c, dequantized in register, per
 *       block scale * (sum a*q - zp * sum a) read straight from B (token
 *       generation, no copy of B; its order in qgemv.h); more
 *       rows: w = (q - zp) * scale dequantized 16 rows at a time, then dot
 *       products. Fixed summation order either way (native == wasm).
 *       accuracy_level 4: activations quantized to int8 per block
 *       (simd/qgemv_i8.c) for every row; B and scales packed at load
 *       (lane layout, packing.c) run the lane kernel
 *       (simd/qgemv_i8_lane.c), same bits; other paths read them dense.
 *   GatherBlockQuantized 1: data int4 / uint4 (zero point default 0), or
 *       uint8 with bits 4 (two values per byte along the last axis) or 8
 *       (MatMulNBits conventions: default zero point 2^(bits-1), zero points
 *       packed like the data); gather_axis, quantize_axis, block_size.
 *
 * float32 and float16 outputs (computed in float32: float16 read through
 * the dtype table's converters, rounded on store). */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "ops/float_io.h"
#include "ops/matmul/matmul.h"
#include "simd/qgemv.h"
#include "simd/qgemv_i8.h"
#include "simd/qgemv_i8_lane.h"


static bool is_ft(ol_dtype dt) { return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_FLOAT16; }
static bool pow2(int64_t v) { return v > 0 && (v & (v - 1)) == 0; }

/* ------------------------------------------------------------ MatMulNBits */

typedef struct nbits_kernel {
  ol_kernel base;
  int64_t K, N, bits, block;
  bool int8_activations; /* accuracy_level 4: rows of A run simd/qgemv_i8.c */
} nbits_kernel;

#define NB_ROWS 16 /* weight rows dequantized together */
#define NB_FUSED_M 4 /* up to this many rows of A: no dequantized copy of B */

typedef float v4f __attribute__((vector_size(16)));
typedef int32_t v4i __attribute__((vector_size(16)));

static inline v4f ld4(const float *p) {
  v4f v;
  memcpy(&v, p, sizeof v);
  return v;
}

/* o[q][c] = dot(a[q], w_c) for 4 rows of A and 2 weight rows, each with
 * the order of ol_dot_f32: four lane sums, (l0 + l1) + (l2 + l3), tail. */
/* kept out of line: inlined into nbits_compute, wasm prefill ran 1.4x slower */
__attribute__((noinline)) static void dot4x2(const float *const a[4], const float *w0, const float *w1, int64_t K,
                   float o[4][2]) {
  v4f c[4][2];
  for (int q = 0; q < 4; q++) c[q][0] = c[q][1] = (v4f){0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= K; i += 4) {
    v4f x0 = ld4(w0 + i), x1 = ld4(w1 + i);
    for (int q = 0; q < 4; q++) {
      v4f av = ld4(a[q] + i);
      c[q][0] += av * x0;
      c[q][1] += av * x1;
    }
  }
  for (int q = 0; q < 4; q++)
    for (int n = 0; n < 2; n++) {
      const float *wn = n ? w1 : w0;
      float s = (c[q][n][0] + c[q][n][1]) + (c[q][n][2] + c[q][n][3]);
      for (int64_t t = i; t < K; t++) s = s + a[q][t] * wn[t];
      o[q][n] = s;
    }
}

#define ZERO_POINT(n, j)                                                            \
  (zf ? zf[(n) * kb + (j)]                                                          \
   : !zq ? dflt                                                                     \
   : bits == 4 ? (float)(((j) & 1) ? zq[(n) * zrow + (j) / 2] >> 4 : zq[(n) * zrow + (j) / 2] & 15) \
               : (float)zq[(n) * zrow + (j)])

/* w[r][k] = (q - zp) * scale for rows n0 .. n0 + nr - 1 of B (kept out of
 * nbits_compute: the wasm engine compiles the smaller functions better). */
__attribute__((noinline)) static void nbits_dequant(const uint8_t *bq, const float *sf,
                                                   const uint8_t *zq, const float *zf, int64_t K,
                                                   int64_t kb, int64_t bs, int64_t bits,
                                                   int64_t n0, int64_t nr, float *w) {
  int64_t blob = bs * bits / 8, zrow = (kb * bits + 7) / 8;
  float dflt = (float)(1 << (bits - 1));
  for (int64_t r = 0; r < nr; r++) {
    int64_t n = n0 + r;
    float *wr = w + r * K;
    for (int64_t j = 0; j < kb; j++) {
      float scale = sf[n * kb + j], z = ZERO_POINT(n, j);
      const uint8_t *blk = bq + (n * kb + j) * blob;
      int64_t k0 = j * bs, kn = K - k0 < bs ? K - k0 : bs;
      float *wd = wr + k0;
      if (bits == 4) {
        int64_t e = 0;
        for (; e + 2 <= kn; e += 2) {
          uint8_t byte = blk[e / 2];
          wd[e] = ((float)(byte & 15) - z) * scale;
          wd[e + 1] = ((float)(byte >> 4) - z) * scale;
        }
        if (e < kn) wd[e] = ((float)(blk[e / 2] & 15) - z) * scale;
      } else {
        for (int64_t e = 0; e < kn; e++) wd[e] = ((float)blk[e] - z) * scale;
      }
    }
  }
}

/* One MatMulNBits product split over threads: tasks are groups of output
 * columns (rows of B), each computed as on one thread. */
typedef struct nbits_job {
  const ol_qgemv_shape *qs;
  const float *work; /* the prepared row m of A (fused path) */
  const void *works[4]; /* int8 path: rows m .. m + rows - 1 of A, prepared */
  int rows;
  bool lane; /* int8 path on lane-layout B and scales (simd/qgemv_i8_lane.h) */
  const float *af, *sf, *zf, *bf;
  const uint8_t *bq, *zq;
  float *out, *w; /* w: NB_ROWS * K + 1 floats per slot (dequantizing path) */
  int64_t M, N, K, kb, bs, bits, m;
  const volatile int *cancelled;
  atomic_int stopped;
} nbits_job;

#define NB_FUSED_ROWS 64 /* outputs per task of the fused path */

static bool stop(nbits_job *j) {
  if (j->cancelled && *j->cancelled) atomic_store(&j->stopped, 1);
  return atomic_load(&j->stopped);
}

static void fused_task(void *arg, int64_t task, int slot) {
  nbits_job *j = arg;
  (void)slot;
  if (stop(j)) return;
  int64_t n = task * NB_FUSED_ROWS, n1 = j->N - n < NB_FUSED_ROWS ? j->N : n + NB_FUSED_ROWS;
  ol_qgemv_nbits(j->qs, j->work, j->bq, j->sf, j->zq, j->zf, j->bf, n, n1, j->out + j->m * j->N + n);
}

static void int8_task(void *arg, int64_t task, int slot) {
  nbits_job *j = arg;
  (void)slot;
  if (stop(j)) return;
  int64_t n = task * NB_FUSED_ROWS, n1 = j->N - n < NB_FUSED_ROWS ? j->N : n + NB_FUSED_ROWS;
  /* tasks start on multiples of 64: whole groups of the lane layout */
  if (j->lane)
    ol_qgemv_i8_lane_rows(j->qs, j->works, j->rows, j->bq, j->sf, j->zq, j->zf, j->bf, n, n1,
                          j->out + j->m * j->N + n, j->N);
  else
    ol_qgemv_i8_nbits_rows(j->qs, j->works, j->rows, j->bq, j->sf, j->zq, j->zf, j->bf, n, n1,
                           j->out + j->m * j->N + n, j->N);
}

static void dequant_task(void *arg, int64_t task, int slot) {
  nbits_job *j = arg;
  if (stop(j)) return;
  const int64_t M = j->M, N = j->N, K = j->K, n0 = task * NB_ROWS;
  const int64_t nr = N - n0 < NB_ROWS ? N - n0 : NB_ROWS;
  float *w = j->w + (size_t)slot * (size_t)(NB_ROWS * K + 1);
  nbits_dequant(j->bq, j->sf, j->zq, j->zf, K, j->kb, j->bs, j->bits, n0, nr, w);
  for (int64_t m = 0; m < M; m += 4)
    for (int64_t r = 0; r < nr; r += 2) {
      const float *a4[4];
      for (int q = 0; q < 4; q++) a4[q] = j->af + (m + q < M ? m + q : m) * K;
      const float *w0 = w + r * K, *w1 = w + (r + 1 < nr ? r + 1 : r) * K;
      float o[4][2];
      dot4x2(a4, w0, w1, K, o);
      for (int q = 0; q < 4 && m + q < M; q++)
        for (int c = 0; c < 2 && r + c < nr; c++) {
          float v = o[q][c];
          if (j->bf) v = v + j->bf[n0 + r + c];
          j->out[(m + q) * N + n0 + r + c] = v;
        }
    }
}

static ol_status nbits_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  nbits_kernel *k = (nbits_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *b, *sc, *zp = ol_ctx_input(ctx, 3), *gidx = ol_ctx_input(ctx, 4),
                              *bias = ol_ctx_input(ctx, 5);
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &b));
  OL_TRY(ol_ctx_require(ctx, 2, &sc));
  if (!is_ft(a->dtype)) return ol_kernel_bad_dtype(node, "input A", a->dtype);
  if (gidx) return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "input g_idx is not supported");
  int64_t K = k->K, N = k->N, bits = k->bits, bs = k->block;
  int64_t kb = (K + bs - 1) / bs, blob = bs * bits / 8;
  if (a->rank < 1 || a->dims[a->rank - 1] != K)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A's last dimension must be K = %lld",
                           (long long)K);
  if (b->dtype != OL_DTYPE_UINT8) return ol_kernel_bad_dtype(node, "input B", b->dtype);
  if (ol_tcount(b) != N * kb * blob || b->dims[0] != N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "B must be uint8 (%lld, %lld, %lld), got %lld bytes", (long long)N,
                           (long long)kb, (long long)blob, (long long)ol_tcount(b));
  if (sc->dtype != a->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scales must be %s, got %s",
                           ol_dtype_name(a->dtype), ol_dtype_name(sc->dtype));
  if (ol_tcount(sc) != N * kb)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scales must have N * k_blocks = %lld values, got %lld",
                           (long long)(N * kb), (long long)ol_tcount(sc));
  int64_t zrow = (kb * bits + 7) / 8;
  bool zfloat = false;
  if (zp) {
    if (zp->dtype == OL_DTYPE_UINT8) {
      if (ol_tcount(zp) != N * zrow)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "uint8 zero_points must have N * %lld = %lld bytes, got %lld",
                               (long long)zrow, (long long)(N * zrow), (long long)ol_tcount(zp));
    } else if (zp->dtype == a->dtype) {
      zfloat = true;
      if (ol_tcount(zp) != N * kb)
        return ol_kernel_error(node, OL_INVALID_ARGUMENT, "zero_points must have %lld values, got %lld",
                               (long long)(N * kb), (long long)ol_tcount(zp));
    } else {
      return ol_kernel_bad_dtype(node, "input zero_points", zp->dtype);
    }
  }
  if (bias) {
    if (bias->dtype != a->dtype || ol_tcount(bias) != N)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "bias must be %s with N = %lld values",
                             ol_dtype_name(a->dtype), (long long)N);
  }
  int64_t od[OL_MAX_RANK];
  memcpy(od, a->dims, sizeof(int64_t) * (size_t)a->rank);
  od[a->rank - 1] = N;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, a->dtype, a->rank, od, &y));
  int64_t M = ol_tcount(a) / (K ? K : 1);
  if (a->rank >= 1 && K == 0) M = ol_shape_count(a->rank - 1, a->dims);
  if (M == 0 || N == 0) return OL_OK;
  bool int8 = k->int8_activations && !zfloat;
  /* B and scales laid out at load run the lane kernel; any other case (say
   * a float zero point fed at run time) reads dense copies */
  bool lane = int8 && b->packing.kind == &ol_packing_lanes && sc->packing.kind == &ol_packing_lanes &&
              b->packing.params[0] == N && b->packing.params[2] == OL_LANE_ODD_XOR(k->bits) &&
              b->packing.params[3] == blob && sc->packing.params[0] == N && sc->packing.params[2] == 0 &&
              sc->packing.params[3] == (int64_t)sizeof(float) && sc->dtype == OL_DTYPE_FLOAT;
  ol_value *dense_b = NULL, *dense_sc = NULL;
  if (!lane && ol_tensor_is_packed(b)) {
    OL_TRY(ol_tensor_materialize(ctx->allocator, b, &dense_b));
    b = &dense_b->tensor;
  }
  if (!lane && ol_tensor_is_packed(sc)) {
    ol_status st = ol_tensor_materialize(ctx->allocator, sc, &dense_sc);
    if (st != OL_OK) {
      ol_value_release(dense_b);
      return st;
    }
    sc = &dense_sc->tensor;
  }
  int threads = ol_pool_threads();
  /* scratch from the run's allocator: a session's payload pool hands back
   * the previous token's blocks, so decoding does not malloc per call */
  ol_allocator *scratch = ctx->allocator;
  /* float16: A widened a row at a time where rows are read one at a time
   * (up to NB_FUSED_M rows, int8 activations), whole for the dequantizing
   * path (every row against each block of B); scales, float zero points
   * and bias once per call. float32 is read in place and written straight
   * into Y. */
  bool whole_a = M > NB_FUSED_M && !int8;
  ol_dtype ft = a->dtype;
  int64_t na = ol_floats_scratch(ft, whole_a ? M * K : K), nsc = ol_floats_scratch(ft, N * kb);
  int64_t nz = zfloat ? nsc : 0, nb = bias ? ol_floats_scratch(ft, N) : 0;
  float *wide = ol_alloc(scratch, sizeof(float) * (size_t)(na + nsc + nz + nb + 1));
  const float *af = wide && whole_a ? ol_floats_row(ft, ol_tdata(a), 0, M * K, wide) : NULL;
  const float *sf = wide ? ol_floats_row(ft, ol_tdata(sc), 0, N * kb, wide + na) : NULL;
  const float *zf = wide && zfloat ? ol_floats_row(ft, ol_tdata(zp), 0, N * kb, wide + na + nsc) : NULL;
  const float *bf = wide && bias ? ol_floats_row(ft, ol_tdata(bias), 0, N, wide + na + nsc + nz) : NULL;
  float *w = M > NB_FUSED_M && !int8 ? ol_alloc(scratch, sizeof(float) * (size_t)(NB_ROWS * K + 1) * (size_t)threads) : NULL;
  float *out = ft == OL_DTYPE_FLOAT ? (float *)ol_tdata(y) : ol_alloc(scratch, sizeof(float) * (size_t)(M * N));
  ol_status s = OL_OK;
  if (!wide || !out || (M > NB_FUSED_M && !int8 && !w)) s = OL_OUT_OF_MEMORY;
  const uint8_t *bq = ol_tdata(b), *zq = zp && !zfloat ? ol_tdata(zp) : NULL;
  ol_qgemv_shape qs = {K, N, bs, (int)bits};
  nbits_job job = {.qs = &qs, .lane = lane, .af = af, .sf = sf, .zf = zf, .bf = bf, .bq = bq, .zq = zq, .out = out, .w = w,
                   .M = M, .N = N, .K = K, .kb = kb, .bs = bs, .bits = bits, .cancelled = ctx->cancelled};
  if (s == OL_OK && int8) {
    /* accuracy_level 4: activations quantized to int8 per block, exact
     * integer dot products (simd/qgemv_i8.c), for every row (a token's
     * result does not depend on how many rows the call has); up to 4 rows
     * share each weight block */
    size_t wb = lane ? ol_qgemv_i8_lane_work_bytes(&qs) : ol_qgemv_i8_work_bytes(&qs);
    char *work = ol_alloc(scratch, 4 * wb);
    if (!work) s = OL_OUT_OF_MEMORY;
    for (int64_t m = 0; m < M && s == OL_OK; m += 4) {
      job.rows = M - m < 4 ? (int)(M - m) : 4;
      for (int r = 0; r < job.rows; r++) {
        job.works[r] = work + (size_t)r * wb;
        const float *ar = ol_floats_row(ft, ol_tdata(a), (m + r) * K, K, wide);
        if (lane) ol_qgemv_i8_lane_prepare(&qs, ar, work + (size_t)r * wb);
        else ol_qgemv_i8_prepare(&qs, ar, work + (size_t)r * wb);
      }
      job.m = m;
      ol_parallel_for((N + NB_FUSED_ROWS - 1) / NB_FUSED_ROWS, threads, int8_task, &job);
      if (atomic_load(&job.stopped)) s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
    }
    ol_dealloc(scratch, work);
  } else if (M <= NB_FUSED_M && s == OL_OK) {
    /* token generation: dequantized in register (simd/qgemv.c), B streamed
     * once per row of A */
    float *work = ol_alloc(scratch, sizeof(float) * (size_t)ol_qgemv_work_floats(&qs));
    if (!work) s = OL_OUT_OF_MEMORY;
    job.work = work;
    for (int64_t m = 0; m < M && s == OL_OK; m++) {
      ol_qgemv_prepare(&qs, ol_floats_row(ft, ol_tdata(a), m * K, K, wide), work);
      job.m = m;
      ol_parallel_for((N + NB_FUSED_ROWS - 1) / NB_FUSED_ROWS, threads, fused_task, &job);
      if (atomic_load(&job.stopped)) s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
    }
    ol_dealloc(scratch, work);
  } else if (s == OL_OK) {
    ol_parallel_for((N + NB_ROWS - 1) / NB_ROWS, threads, dequant_task, &job);
    if (atomic_load(&job.stopped)) s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
  }
#undef ZERO_POINT
  if (s == OL_OK) ol_floats_store(y, 0, out, M * N);
  ol_dealloc(scratch, wide);
  ol_dealloc(scratch, w);
  if (out != ol_tdata(y)) ol_dealloc(scratch, out);
  ol_value_release(dense_b);
  ol_value_release(dense_sc);
  return s;
}

ol_status ol_cms_matmul_nbits_create(const ol_node *node, ol_kernel **out) {
  int64_t K = ol_attr_int(node, "K", -1), N = ol_attr_int(node, "N", -1);
  int64_t bits = ol_attr_int(node, "bits", 4), bs = ol_attr_int(node, "block_size", -1);
  if (K < 1 || N < 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attributes 'K' and 'N' are required and must be >= 1 (got %lld, %lld)",
                           (long long)K, (long long)N);
  if (bits != 4 && bits != 8)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'bits' must be 4 or 8, got %lld",
                           (long long)bits);
  if (bs < 16 || !pow2(bs))
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'block_size' must be a power of two >= 16, got %lld",
                           (long long)bs);
  if (ol_node_has_input(node, 4))
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "input g_idx is not supported");
  nbits_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, nbits_compute, (ol_kernel **)&k));
  k->K = K, k->N = N, k->bits = bits, k->block = bs;
  /* int8 activations are what accuracy_level 4 allows (as onnxruntime does,
   * also keeping float zero points in float); blocks up to 256 */
  k->int8_activations = ol_attr_int(node, "accuracy_level", 0) == 4 && bs <= 256;
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ GatherBlockQuantized */

typedef struct gbq_kernel {
  ol_kernel base;
  int64_t gather_axis, quantize_axis, block, bits;
} gbq_kernel;

static ol_status gbq_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  gbq_kernel *k = (gbq_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *data, *idx, *sc, *zp = ol_ctx_input(ctx, 3);
  OL_TRY(ol_ctx_require(ctx, 0, &data));
  OL_TRY(ol_ctx_require(ctx, 1, &idx));
  OL_TRY(ol_ctx_require(ctx, 2, &sc));
  ol_dtype dt = data->dtype;
  if (dt != OL_DTYPE_INT4 && dt != OL_DTYPE_UINT4 && dt != OL_DTYPE_UINT8)
    return ol_kernel_bad_dtype(node, "input data", dt);
  if (dt != OL_DTYPE_UINT8 && k->bits != 4)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "bits must be 4 for %s data", ol_dtype_name(dt));
  if (idx->dtype != OL_DTYPE_INT32 && idx->dtype != OL_DTYPE_INT64)
    return ol_kernel_bad_dtype(node, "input indices", idx->dtype);
  if (!is_ft(sc->dtype)) return ol_kernel_bad_dtype(node, "input scales", sc->dtype);
  int r = data->rank;
  if (r < 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "data must have rank >= 1");
  int64_t D[OL_MAX_RANK];
  memcpy(D, data->dims, sizeof(int64_t) * (size_t)r);
  bool packed8 = dt == OL_DTYPE_UINT8 && k->bits == 4;
  if (packed8) D[r - 1] *= 2;
  int ga, qa;
  OL_TRY(ol_normalize_axis(node, k->gather_axis, r, &ga));
  OL_TRY(ol_normalize_axis(node, k->quantize_axis, r, &qa));
  if (dt == OL_DTYPE_UINT8 && qa != r - 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "uint8 data must be quantized along the last axis");
  bool shape_ok = sc->rank == r;
  for (int i = 0; shape_ok && i < r; i++)
    shape_ok = sc->dims[i] == (i == qa ? (D[i] + k->block - 1) / k->block : D[i]);
  if (!shape_ok)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "scales must have data's shape with dimension %d = ceil(%lld / %lld)", qa,
                           (long long)D[qa], (long long)k->block);
  int64_t SQ = sc->dims[qa], Slast = sc->dims[r - 1];
  if (zp) {
    if (zp->dtype != dt)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "zero_points must be %s, got %s",
                             ol_dtype_name(dt), ol_dtype_name(zp->dtype));
    int64_t want = packed8 ? ol_tcount(sc) / (Slast ? Slast : 1) * ((Slast + 1) / 2) : ol_tcount(sc);
    if (ol_tcount(zp) != want)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "zero_points must have %lld values, got %lld",
                             (long long)want, (long long)ol_tcount(zp));
  }
  int64_t ni = ol_tcount(idx), G = D[ga];
  int64_t *ix = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(ni + 1));
  if (!ix) return OL_OUT_OF_MEMORY;
  for (int64_t i = 0; i < ni; i++) {
    int64_t v = idx->dtype == OL_DTYPE_INT32 ? ((const int32_t *)ol_tdata(idx))[i]
                                             : ((const int64_t *)ol_tdata(idx))[i];
    if (v < -G || v >= G) {
      ol_dealloc(ctx->allocator, ix);
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "index %lld is out of range [-%lld, %lld)",
                             (long long)v, (long long)G, (long long)G);
    }
    ix[i] = v < 0 ? v + G : v;
  }
  int64_t od[OL_MAX_RANK];
  int orank = 0;
  for (int i = 0; i < ga; i++) od[orank++] = D[i];
  if (r - 1 + idx->rank > OL_MAX_RANK) {
    ol_dealloc(ctx->allocator, ix);
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank is too large");
  }
  for (int i = 0; i < idx->rank; i++) od[orank++] = idx->dims[i];
  for (int i = ga + 1; i < r; i++) od[orank++] = D[i];
  ol_tensor *y;
  ol_status s = ol_ctx_output(ctx, 0, sc->dtype, orank, od, &y);
  int64_t outer = ol_shape_count(ga, D), inner = ol_shape_count(r - ga - 1, D + ga + 1);
  int64_t total = outer * ni * inner;
  float *row = NULL;
  if (s == OL_OK && total > 0) {
    row = ol_alloc(ctx->allocator, sizeof(float) * (size_t)inner);
    if (!row) s = OL_OUT_OF_MEMORY;
  }
  /* the scales an element at a time: a gather reads a few of them */
  ol_to_float_fn scale_of = ol_dtype_info(sc->dtype)->to_float;
  const void *sd = ol_tdata(sc);
  int64_t qstride = ol_shape_count(r - qa - 1, D + qa + 1);
  const uint8_t *dq = ol_tdata(data), *zq = zp ? ol_tdata(zp) : NULL;
  int32_t dflt = dt == OL_DTYPE_UINT8 ? 1 << (k->bits - 1) : 0;
  for (int64_t o = 0; o < outer && s == OL_OK && total > 0; o++)
    for (int64_t i = 0; i < ni; i++) {
      int64_t src0 = (o * G + ix[i]) * inner;
      for (int64_t e = 0; e < inner; e++) {
        int64_t f = src0 + e; /* flat logical index into data */
        int64_t cq = (f / qstride) % D[qa];
        int64_t si = ((f / (qstride * D[qa])) * SQ + cq / k->block) * qstride + f % qstride;
        int32_t q, z = dflt;
        if (dt == OL_DTYPE_UINT8) {
          q = packed8 ? ((f & 1) ? dq[f / 2] >> 4 : dq[f / 2] & 15) : dq[f];
          if (zq) {
            if (packed8) {
              int64_t zr = si / Slast, zc = si % Slast;
              uint8_t byte = zq[zr * ((Slast + 1) / 2) + zc / 2];
              z = (zc & 1) ? byte >> 4 : byte & 15;
            } else {
              z = zq[si];
            }
          }
        } else {
          q = ol_packed_get(dt, dq, f);
          if (zq) z = ol_packed_get(dt, zq, si);
        }
        row[e] = (float)(q - z) * scale_of(sd, si);
      }
      ol_floats_store(y, (o * ni + i) * inner, row, inner);
    }
  ol_dealloc(ctx->allocator, row);
  ol_dealloc(ctx->allocator, ix);
  return s;
}

ol_status ol_cms_gather_block_quantized_create(const ol_node *node, ol_kernel **out) {
  int64_t bs = ol_attr_int(node, "block_size", 128), bits = ol_attr_int(node, "bits", 4);
  if (bs < 16 || !pow2(bs))
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'block_size' must be a power of two >= 16, got %lld",
                           (long long)bs);
  if (bits != 4 && bits != 8)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'bits' must be 4 or 8, got %lld",
                           (long long)bits);
  gbq_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, gbq_compute, (ol_kernel **)&k));
  k->gather_axis = ol_attr_int(node, "gather_axis", 0);
  k->quantize_axis = ol_attr_int(node, "quantize_axis", 1);
  k->block = bs;
  k->bits = bits;
  *out = &k->base;
  return OL_OK;
}
