/* Matrix products (ai.onnx).
 *
 *   MatMul 1-23: numpy batching and broadcasting, 1-D operands;
 *                float32, float64, float16 and bfloat16 (computed in float32),
 *                int32, int64, uint32, uint64 (wrapping arithmetic)
 *   Gemm 1-23:   transA/transB/alpha/beta, C unidirectionally broadcast
 *                (optional from 11); same element types as MatMul
 *   MatMulInteger 10-23: int8/uint8 with scalar, per-row (A) or per-column (B)
 *                zero points, int32 output
 *
 * Determinism: every output element is summed in increasing k order starting
 * from +0 (c = 0; c = c + a[k] * b[k]), with separate multiply and add (no
 * fma; the build uses -ffp-contract=off). Vector lanes hold different output
 * elements, never parts of one sum, so blocking, vector width and the code
 * path chosen for a shape do not change any bit: the native and wasm builds
 * agree exactly.
 *
 * The float32 products run on simd/gemm.c (ol_f32_gemm: packed 4 x 8 register
 * tiles for many rows, a streaming GEMV for up to eight rows), written once
 * against the 128-bit layer simd/vec.h (SSE2 natively, SIMD128 in wasm, plain
 * C otherwise) and tested against the scalar reference there. */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "ops/matmul/matmul.h"

#include "simd/gemm.h"

/* ------------------------------------------------------------ other element types */

static void dgemm(int64_t M, int64_t N, int64_t K, const double *A, const double *B, double *C) {
  for (int64_t i = 0; i < M; i++) {
    double *c = C + i * N;
    for (int64_t j = 0; j < N; j++) c[j] = 0.0;
    for (int64_t k = 0; k < K; k++) {
      double a = A[i * K + k];
      const double *b = B + k * N;
      for (int64_t j = 0; j < N; j++) c[j] = c[j] + a * b[j];
    }
  }
}

#define IGEMM(NAME, T, U)                                                                  \
  static void NAME(int64_t M, int64_t N, int64_t K, const T *A, const T *B, T *C) {        \
    for (int64_t i = 0; i < M; i++) {                                                      \
      T *c = C + i * N;                                                                    \
      for (int64_t j = 0; j < N; j++) c[j] = 0;                                            \
      for (int64_t k = 0; k < K; k++) {                                                    \
        U a = (U)A[i * K + k];                                                             \
        const T *b = B + k * N;                                                            \
        for (int64_t j = 0; j < N; j++) c[j] = (T)((U)c[j] + a * (U)b[j]);                 \
      }                                                                                    \
    }                                                                                      \
  }
IGEMM(igemm_i32, int32_t, uint32_t)
IGEMM(igemm_i64, int64_t, uint64_t)
IGEMM(igemm_u32, uint32_t, uint32_t)
IGEMM(igemm_u64, uint64_t, uint64_t)

static bool mm_dtype_ok(ol_dtype dt) {
  switch (dt) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_INT32: case OL_DTYPE_INT64: case OL_DTYPE_UINT32: case OL_DTYPE_UINT64:
      return true;
    default:
      return false;
  }
}

/* One contiguous M x K by K x N product of any supported type. scratch for
 * half types: (M*K + K*N + M*N) floats. */
/* (M*K + K*N + M*N + 1) floats; SIZE_MAX when that overflows (wasm32: past
 * 4 GiB), so that the allocation fails instead of being short */
size_t ol_mm_scratch_bytes(int64_t M, int64_t K, int64_t N) {
  int64_t mk, kn, mn, n;
  if (!ol_i64_mul(M, K, &mk) || !ol_i64_mul(K, N, &kn) || !ol_i64_mul(M, N, &mn) || !ol_i64_add(mk, kn, &n) ||
      !ol_i64_add(n, mn, &n) || !ol_i64_add(n, 1, &n))
    return SIZE_MAX;
  return ol_bytes_of(n, sizeof(float));
}

ol_status ol_mm_gemm_any(ol_dtype dt, int64_t M, int64_t N, int64_t K, const void *A,
                          const void *B, void *C, float *scratch) {
  switch (dt) {
    case OL_DTYPE_FLOAT: return ol_f32_gemm(M, N, K, A, K, B, N, C, N);
    case OL_DTYPE_DOUBLE: dgemm(M, N, K, A, B, C); return OL_OK;
    case OL_DTYPE_INT32: igemm_i32(M, N, K, A, B, C); return OL_OK;
    case OL_DTYPE_INT64: igemm_i64(M, N, K, A, B, C); return OL_OK;
    case OL_DTYPE_UINT32: igemm_u32(M, N, K, A, B, C); return OL_OK;
    case OL_DTYPE_UINT64: igemm_u64(M, N, K, A, B, C); return OL_OK;
    default: { /* float16, bfloat16: widened through the dtype table's rows */
      const ol_dtype_traits *t = ol_dtype_info(dt);
      float *a = scratch, *b = a + M * K, *c = b + K * N;
      t->load_row(A, M * K, a);
      t->load_row(B, K * N, b);
      OL_TRY(ol_f32_gemm(M, N, K, a, K, b, N, c, N));
      t->store_row(c, M * N, C);
      return OL_OK;
    }
  }
}

/* ------------------------------------------------------------ batching */

ol_status ol_mm_plan_make(const ol_node *node, const ol_tensor *a, const ol_tensor *b,
                              ol_mm_plan *p) {
  if (a->rank < 1 || b->rank < 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "operands must have rank >= 1 (got %d and %d)",
                           a->rank, b->rank);
  int64_t ad[OL_MAX_RANK + 1], bd[OL_MAX_RANK + 1];
  int ar = a->rank, br = b->rank;
  memcpy(ad, a->dims, sizeof(int64_t) * (size_t)ar);
  memcpy(bd, b->dims, sizeof(int64_t) * (size_t)br);
  if (ar == 1) {
    ad[1] = ad[0];
    ad[0] = 1;
    ar = 2;
  }
  if (br == 1) {
    bd[1] = 1;
    br = 2;
  }
  p->M = ad[ar - 2];
  p->K = ad[ar - 1];
  p->N = bd[br - 1];
  if (bd[br - 2] != p->K) {
    char b1[160], b2[160];
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "inner dimensions differ: A %s has K = %lld, B %s has K = %lld",
                           ol_tensor_describe(a, b1, sizeof b1), (long long)p->K,
                           ol_tensor_describe(b, b2, sizeof b2), (long long)bd[br - 2]);
  }
  int abr = ar - 2, bbr = br - 2;
  OL_TRY(ol_broadcast_shapes(node, abr, ad, bbr, bd, &p->brank, p->bdims));
  int64_t as = p->M * p->K, bs = p->K * p->N;
  for (int i = p->brank - 1; i >= 0; i--) {
    int ai = i - (p->brank - abr), bi = i - (p->brank - bbr);
    p->astr[i] = ai >= 0 && ad[ai] != 1 ? as : 0;
    p->bstr[i] = bi >= 0 && bd[bi] != 1 ? bs : 0;
    if (ai >= 0) as *= ad[ai];
    if (bi >= 0) bs *= bd[bi];
  }
  p->batches = ol_shape_count(p->brank, p->bdims);
  bool b_batched = false, a_full = true;
  for (int i = 0; i < p->brank; i++) {
    if (p->bstr[i]) b_batched = true;
    if (!p->astr[i] && p->bdims[i] != 1) a_full = false;
  }
  p->fold_a = !b_batched && a_full;
  p->out_rank = 0;
  for (int i = 0; i < p->brank; i++) p->out_dims[p->out_rank++] = p->bdims[i];
  if (a->rank > 1) p->out_dims[p->out_rank++] = p->M;
  if (b->rank > 1) p->out_dims[p->out_rank++] = p->N;
  if (p->out_rank > OL_MAX_RANK)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank is too large");
  return OL_OK;
}

void ol_mm_offsets(const ol_mm_plan *p, int64_t t, int64_t *aoff, int64_t *boff) {
  int64_t ao = 0, bo = 0;
  for (int i = p->brank - 1; i >= 0; i--) {
    int64_t c = t % p->bdims[i];
    t /= p->bdims[i];
    ao += c * p->astr[i];
    bo += c * p->bstr[i];
  }
  *aoff = ao;
  *boff = bo;
}

static ol_status matmul_product(ol_kernel_ctx *ctx, const ol_tensor *a, const ol_tensor *b, ol_mm_plan *pp,
                                int64_t bpitch);

/* float32 batches spread over threads (attention's per-head products): each
 * batch is one product, computed exactly as on one thread. */
typedef struct mm_job {
  const ol_mm_plan *p;
  const float *a, *b;
  float *y;
  int64_t M, bpitch; /* bpitch > 0: B's matrices lie bpitch rows apart */
  const volatile int *cancelled;
  atomic_int status;
} mm_job;

static void mm_batch_task(void *arg, int64_t t, int slot) {
  mm_job *j = arg;
  (void)slot;
  if (atomic_load(&j->status) != OL_OK) return;
  if (j->cancelled && *j->cancelled) {
    atomic_store(&j->status, OL_CANCELLED);
    return;
  }
  int64_t ao, bo;
  ol_mm_offsets(j->p, t, &ao, &bo);
  if (j->bpitch && j->p->K > 0 && j->p->N > 0) bo = bo / (j->p->K * j->p->N) * j->bpitch * j->p->N;
  ol_status s = ol_f32_gemm(j->M, j->p->N, j->p->K, j->a + ao, j->p->K, j->b + bo, j->p->N, j->y + t * j->M * j->p->N,
                            j->p->N);
  if (s != OL_OK) atomic_store(&j->status, s);
}

#define MM_PAR_MIN_MACS (1 << 17) /* less is not worth waking a thread for */

/* B is a float weight matrix packed in tiles (packing.c): every row of A
 * against it at once (B is 2-D, so A's batch dimensions fold into rows). */
static ol_status matmul_tiled(ol_kernel_ctx *ctx, const ol_tensor *a, const ol_tensor *b, const ol_mm_plan *p) {
  const ol_node *node = ctx->node;
  if (a->dtype != OL_DTYPE_FLOAT || b->rank != 2 || b->packing.params[2] != OL_TILE_ROWS || !p->fold_a)
    return ol_kernel_error(node, OL_INTERNAL, "tiled weights reached an unsupported product");
  ol_tensor *y;
  OL_TRY(ol_ctx_output_uninit(ctx, 0, a->dtype, p->out_rank, p->out_dims, &y));
  if (ol_tcount(y) == 0) return OL_OK;
  ol_status s = ol_f32_gemm_tiled(p->M * p->batches, p->N, p->K, ol_tdata(a), p->K, ol_tdata(b), ol_tdata(y), p->N);
  return s == OL_OK ? OL_OK : ol_kernel_error(node, s, "out of memory");
}

static ol_status matmul_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *b;
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &b));
  if (a->dtype != b->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A is %s but B is %s",
                           ol_dtype_name(a->dtype), ol_dtype_name(b->dtype));
  if (!mm_dtype_ok(a->dtype)) return ol_kernel_bad_dtype(node, "input A", a->dtype);
  ol_mm_plan p;
  OL_TRY(ol_mm_plan_make(node, a, b, &p));
  if (b->packing.kind == &ol_packing_f32_tiles) return matmul_tiled(ctx, a, b, &p);
  /* B may be a pitched cache (probs x V): its matrices are dense, only their
   * distance differs; pitched along another axis it gets a dense copy */
  ol_value *dense = NULL;
  int64_t bpitch = 0;
  if (ol_tensor_is_strided(b)) {
    if (b->rank >= 3 && b->pitch_axis == b->rank - 2) {
      bpitch = ol_tensor_layout_pitch(b);
    } else {
      OL_TRY(ol_tensor_materialize(ctx->allocator, b, &dense));
      b = &dense->tensor;
    }
  }
  ol_status s = matmul_product(ctx, a, b, &p, bpitch);
  ol_value_release(dense);
  return s;
}

/* The product after validation; bpitch > 0: B's matrices lie bpitch rows apart. */
static ol_status matmul_product(ol_kernel_ctx *ctx, const ol_tensor *a, const ol_tensor *b, ol_mm_plan *pp,
                                int64_t bpitch) {
  const ol_node *node = ctx->node;
  ol_mm_plan p = *pp;
  ol_tensor *y;
  /* every product overwrites its block of Y (K = 0 included: zeros) */
  OL_TRY(ol_ctx_output_uninit(ctx, 0, a->dtype, p.out_rank, p.out_dims, &y));
  if (ol_tcount(y) == 0) return OL_OK;
  ol_dtype dt = a->dtype;
  size_t es = ol_dtype_size(dt);
  int64_t M = p.M, batches = p.batches;
  if (p.fold_a) {
    M *= batches;
    batches = 1;
  }
  float *scratch = NULL;
  if (ol_dtype_widens(dt)) {
    scratch = ol_alloc(ctx->allocator, ol_mm_scratch_bytes(M, p.K, p.N));
    if (!scratch) return OL_OUT_OF_MEMORY;
  }
  int threads = dt == OL_DTYPE_FLOAT && batches > 1 && batches * M * p.N * p.K >= MM_PAR_MIN_MACS ? ol_pool_threads() : 1;
  if (threads > 1) {
    mm_job job = {&p, ol_tdata(a), ol_tdata(b), ol_tdata(y), M, bpitch, ctx->cancelled, OL_OK};
    ol_parallel_for(batches, threads, mm_batch_task, &job);
    ol_status s = atomic_load(&job.status);
    if (s == OL_CANCELLED) return ol_kernel_error(node, OL_CANCELLED, "cancelled");
    return s == OL_OK ? OL_OK : ol_kernel_error(node, s, "out of memory");
  }
  ol_status s = OL_OK;
  for (int64_t t = 0; t < batches && s == OL_OK; t++) {
    if (ctx->cancelled && *ctx->cancelled) {
      s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
      break;
    }
    int64_t ao = 0, bo = 0;
    if (!p.fold_a) ol_mm_offsets(&p, t, &ao, &bo);
    if (bpitch && p.K > 0 && p.N > 0) bo = bo / (p.K * p.N) * bpitch * p.N;
    s = ol_mm_gemm_any(dt, M, p.N, p.K, (const char *)ol_tdata(a) + (size_t)ao * es,
                 (const char *)ol_tdata(b) + (size_t)bo * es,
                 (char *)ol_tdata(y) + (size_t)(t * M * p.N) * es, scratch);
  }
  ol_dealloc(ctx->allocator, scratch);
  return s;
}

static ol_status matmul_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, matmul_compute, out);
}

static const ol_fusion matmul_fusions[] = {
    /* Q x K^T of torch exports: K, the key cache, read in place */
    {"transposed B", 1, "", "Transpose", ol_matmul_fuse_transposed_b, .pitched_inputs = 1u << 1},
    {"dequantized B", 1, "ai.rt", "Dequantize", ol_matmul_fuse_dequantized_b},
    {0},
};

/* ------------------------------------------------------------ Gemm */

typedef struct gemm_kernel {
  ol_kernel base;
  bool trans_a, trans_b;
  float alpha, beta;
} gemm_kernel;

static void transpose_copy(size_t es, const void *src, void *dst, int64_t rows, int64_t cols) {
  /* src rows x cols -> dst cols x rows */
  const char *s = src;
  char *d = dst;
  for (int64_t i0 = 0; i0 < rows; i0 += 32)
    for (int64_t j0 = 0; j0 < cols; j0 += 32)
      for (int64_t i = i0; i < rows && i < i0 + 32; i++)
        for (int64_t j = j0; j < cols && j < j0 + 32; j++)
          memcpy(d + (size_t)(j * rows + i) * es, s + (size_t)(i * cols + j) * es, es);
}

static ol_status gemm_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  gemm_kernel *k = (gemm_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *b, *c = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &b));
  if (a->dtype != b->dtype || (c && c->dtype != a->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A, B and C must have the same type (%s, %s, %s)",
                           ol_dtype_name(a->dtype), ol_dtype_name(b->dtype),
                           c ? ol_dtype_name(c->dtype) : "absent");
  if (!mm_dtype_ok(a->dtype)) return ol_kernel_bad_dtype(node, "input A", a->dtype);
  if (a->rank != 2 || b->rank != 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A and B must be 2-D (got rank %d and %d)",
                           a->rank, b->rank);
  int64_t M = k->trans_a ? a->dims[1] : a->dims[0], K = k->trans_a ? a->dims[0] : a->dims[1];
  int64_t Kb = k->trans_b ? b->dims[1] : b->dims[0], N = k->trans_b ? b->dims[0] : b->dims[1];
  if (K != Kb)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "inner dimensions differ: op(A) is %lldx%lld, op(B) is %lldx%lld",
                           (long long)M, (long long)K, (long long)Kb, (long long)N);
  int64_t cd[2] = {1, 1};
  if (c) {
    if (c->rank > 2)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "C must have rank <= 2, got %d", c->rank);
    for (int i = 0; i < c->rank; i++) cd[2 - c->rank + i] = c->dims[i];
    if ((cd[0] != 1 && cd[0] != M) || (cd[1] != 1 && cd[1] != N))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "C of shape [%lld,%lld] cannot broadcast to [%lld,%lld]",
                             (long long)cd[0], (long long)cd[1], (long long)M, (long long)N);
  }
  int64_t dims[2] = {M, N};
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, a->dtype, 2, dims, &y));
  if (M == 0 || N == 0) return OL_OK;
  ol_dtype dt = a->dtype;
  size_t es = ol_dtype_size(dt);
  void *ta = NULL, *tb = NULL;
  float *scratch = NULL;
  ol_status s = OL_OK;
  const void *pa = ol_tdata(a), *pb = ol_tdata(b);
  if (k->trans_a && M * K > 0) {
    ta = ol_alloc(ctx->allocator, es * (size_t)(M * K));
    if (!ta) { s = OL_OUT_OF_MEMORY; goto done; }
    transpose_copy(es, pa, ta, K, M);
    pa = ta;
  }
  if (k->trans_b && K * N > 0) {
    tb = ol_alloc(ctx->allocator, es * (size_t)(K * N));
    if (!tb) { s = OL_OUT_OF_MEMORY; goto done; }
    transpose_copy(es, pb, tb, N, K);
    pb = tb;
  }
  if (ol_dtype_widens(dt)) {
    scratch = ol_alloc(ctx->allocator, ol_mm_scratch_bytes(M, K, N));
    if (!scratch) { s = OL_OUT_OF_MEMORY; goto done; }
  }
  s = ol_mm_gemm_any(dt, M, N, K, pa, pb, ol_tdata(y), scratch);
  if (s != OL_OK) goto done;
  bool scale = k->alpha != 1.0f;
  if (scale || c) {
    double alpha = k->alpha, beta = k->beta;
    for (int64_t i = 0; i < M; i++)
      for (int64_t j = 0; j < N; j++) {
        int64_t e = i * N + j;
        switch (dt) {
          case OL_DTYPE_FLOAT: {
            float v = ((float *)ol_tdata(y))[e];
            if (scale) v = k->alpha * v;
            if (c) v = v + k->beta * ((const float *)ol_tdata(c))[(cd[0] > 1 ? i * cd[1] : 0) + (cd[1] > 1 ? j : 0)];
            ((float *)ol_tdata(y))[e] = v;
            break;
          }
          case OL_DTYPE_INT32: case OL_DTYPE_INT64: case OL_DTYPE_UINT32: case OL_DTYPE_UINT64: {
            /* integer Gemm: alpha/beta applied as integers when integral */
            int64_t ce = c ? (cd[0] > 1 ? i * cd[1] : 0) + (cd[1] > 1 ? j : 0) : 0;
            uint64_t v, cv = 0;
            if (dt == OL_DTYPE_INT32) v = (uint64_t)(int64_t)((int32_t *)ol_tdata(y))[e];
            else if (dt == OL_DTYPE_UINT32) v = ((uint32_t *)ol_tdata(y))[e];
            else v = ((uint64_t *)ol_tdata(y))[e];
            if (c) {
              if (dt == OL_DTYPE_INT32) cv = (uint64_t)(int64_t)((const int32_t *)ol_tdata(c))[ce];
              else if (dt == OL_DTYPE_UINT32) cv = ((const uint32_t *)ol_tdata(c))[ce];
              else cv = ((const uint64_t *)ol_tdata(c))[ce];
            }
            v = v * (uint64_t)(int64_t)alpha + cv * (uint64_t)(int64_t)beta;
            if (dt == OL_DTYPE_INT32) ((int32_t *)ol_tdata(y))[e] = (int32_t)(uint32_t)v;
            else if (dt == OL_DTYPE_UINT32) ((uint32_t *)ol_tdata(y))[e] = (uint32_t)v;
            else ((uint64_t *)ol_tdata(y))[e] = v;
            break;
          }
          default: {
            double v = ol_tensor_get_double(y, e);
            if (scale) v = alpha * v;
            if (c) v = v + beta * ol_tensor_get_double(c, (cd[0] > 1 ? i * cd[1] : 0) + (cd[1] > 1 ? j : 0));
            if (dt == OL_DTYPE_DOUBLE) ((double *)ol_tdata(y))[e] = v;
            else ol_tensor_set_double(y, e, (float)v);
            break;
          }
        }
      }
  }
done:
  ol_dealloc(ctx->allocator, ta);
  ol_dealloc(ctx->allocator, tb);
  ol_dealloc(ctx->allocator, scratch);
  return s;
}

static ol_status gemm_create(const ol_node *node, ol_kernel **out) {
  gemm_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, gemm_compute, (ol_kernel **)&k));
  k->trans_a = ol_attr_int(node, "transA", 0) != 0;
  k->trans_b = ol_attr_int(node, "transB", 0) != 0;
  k->alpha = ol_attr_float(node, "alpha", 1.0f);
  k->beta = ol_attr_float(node, "beta", 1.0f);
  *out = &k->base;
  return OL_OK;
}

/* ------------------------------------------------------------ MatMulInteger */

static inline int32_t q8_at(const ol_tensor *t, int64_t i) {
  return t->dtype == OL_DTYPE_INT8 ? ((const int8_t *)ol_tdata(t))[i]
                                   : ((const uint8_t *)ol_tdata(t))[i];
}

static ol_status matmul_integer_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  (void)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *b, *za = ol_ctx_input(ctx, 2), *zb = ol_ctx_input(ctx, 3);
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &b));
  const ol_tensor *all[4] = {a, b, za, zb};
  static const char *const names[4] = {"A", "B", "a_zero_point", "b_zero_point"};
  for (int i = 0; i < 4; i++)
    if (all[i] && all[i]->dtype != OL_DTYPE_INT8 && all[i]->dtype != OL_DTYPE_UINT8)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be int8 or uint8, got %s",
                             names[i], ol_dtype_name(all[i]->dtype));
  if (za && za->dtype != a->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "a_zero_point type differs from A");
  if (zb && zb->dtype != b->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "b_zero_point type differs from B");
  ol_mm_plan p;
  OL_TRY(ol_mm_plan_make(node, a, b, &p));
  int64_t nza = za ? ol_tcount(za) : 0, nzb = zb ? ol_tcount(zb) : 0;
  if (za && nza != 1 && nza != p.M)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "a_zero_point has %lld values; expected 1 or M = %lld", (long long)nza,
                           (long long)p.M);
  if (zb && nzb != 1 && nzb != p.N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "b_zero_point has %lld values; expected 1 or N = %lld", (long long)nzb,
                           (long long)p.N);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_INT32, p.out_rank, p.out_dims, &y));
  int32_t *out = ol_tdata(y);
  int64_t M = p.M, N = p.N, K = p.K;
  int32_t *row = ol_alloc(ctx->allocator, sizeof(int32_t) * (size_t)(N + 1));
  if (!row) return OL_OUT_OF_MEMORY;
  for (int64_t t = 0; t < p.batches; t++) {
    int64_t ao, bo;
    ol_mm_offsets(&p, t, &ao, &bo);
    for (int64_t i = 0; i < M; i++) {
      int32_t zav = za ? q8_at(za, nza == 1 ? 0 : i) : 0;
      for (int64_t j = 0; j < N; j++) row[j] = 0;
      for (int64_t kk = 0; kk < K; kk++) {
        int32_t av = q8_at(a, ao + i * K + kk) - zav;
        for (int64_t j = 0; j < N; j++) {
          int32_t bv = q8_at(b, bo + kk * N + j) - (zb ? q8_at(zb, nzb == 1 ? 0 : j) : 0);
          row[j] = (int32_t)((uint32_t)row[j] + (uint32_t)(av * bv));
        }
      }
      memcpy(out + (t * M + i) * N, row, sizeof(int32_t) * (size_t)N);
    }
  }
  ol_dealloc(ctx->allocator, row);
  return OL_OK;
}

static ol_status matmul_integer_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, matmul_integer_compute, out);
}

/* ------------------------------------------------------------ registry */

#define MM_TYPES "float32 float64 float16 bfloat16 int32 int64 uint32 uint64"
const ol_op_schema ol_schema_matmul[] = {
    /* B: probs x V over a pitched value cache, or float weights packed in tiles */
    {"", "MatMul", 1, OL_OPSET_LATEST, matmul_create, ol_infer_matmul, MM_TYPES, .pitched_inputs = 1u << 1,
     .packed_inputs = 1u << 1, .pack = ol_matmul_pack, .fusions = matmul_fusions},
    {"", "Gemm", 1, OL_OPSET_LATEST, gemm_create, ol_infer_gemm, MM_TYPES},
    {"", "MatMulInteger", 10, OL_OPSET_LATEST, matmul_integer_create, ol_infer_matmul_integer, "int8 uint8 -> int32"},
    /* B and scales packed in lanes for int8 activations */
    {"com.microsoft", "MatMulNBits", 1, 1, ol_cms_matmul_nbits_create, ol_infer_matmul_nbits,
     "float32 float16 (B uint8, 4/8 bits)", .packed_inputs = 1u << 1 | 1u << 2, .pack = ol_nbits_pack},
    {"com.microsoft", "GatherBlockQuantized", 1, 1, ol_cms_gather_block_quantized_create, NULL,
     "int4 uint4 uint8 -> float32 float16"},
    {0},
};
