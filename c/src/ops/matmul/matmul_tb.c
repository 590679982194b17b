/* MatMul(A, Transpose(B, perm = [.., r-1, r-2])) fused at plan time
 * (a fusion of MatMul's row): ai.onnx MatMul 1-23 whose B is the input of a Transpose
 * swapping the last two axes, which the plan no longer runs. Torch exports
 * compute attention scores this way, Q x K^T, with K the key cache: the
 * Transpose would copy the whole cache every token.
 *
 * float32 reads B in place as N rows of K contiguous elements per matrix
 * (a pitched cache included: its matrices lie `pitch` rows apart) with the
 * dot-product kernel of simd/gemm_tb.h. Other element types transpose B into
 * scratch and use the ordinary product, with MatMul's summation order. */
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "ops/matmul/matmul.h"

#include "simd/gemm_tb.h"

typedef struct tb_kernel {
  ol_kernel base;
  int rank; /* the fused Transpose's perm length */
} tb_kernel;

/* The ordinary route for non-float32 types: dense B^T in scratch. */
static ol_status tb_generic(ol_kernel_ctx *ctx, const ol_tensor *a, const ol_tensor *bt, const ol_mm_plan *p,
                            ol_tensor *y) {
  size_t es = ol_dtype_size(a->dtype);
  int64_t R = bt->dims[bt->rank - 2], Ccols = bt->dims[bt->rank - 1];
  int64_t mats = R > 0 && Ccols > 0 ? ol_tcount(bt) / (R * Ccols) : 0;
  char *b = ol_alloc(ctx->allocator, es * (size_t)ol_tcount(bt) + 1);
  float *scratch = NULL;
  bool half = ol_dtype_widens(a->dtype); /* widened into float32 scratch per product */
  if (half) scratch = ol_alloc(ctx->allocator, ol_mm_scratch_bytes(p->M, p->K, p->N));
  if (!b || (half && !scratch)) {
    ol_dealloc(ctx->allocator, b);
    ol_dealloc(ctx->allocator, scratch);
    return OL_OUT_OF_MEMORY;
  }
  const char *src = ol_tdata(bt);
  for (int64_t m = 0; m < mats; m++)
    for (int64_t r = 0; r < R; r++)
      for (int64_t c = 0; c < Ccols; c++)
        memcpy(b + (size_t)((m * Ccols + c) * R + r) * es, src + (size_t)((m * R + r) * Ccols + c) * es, es);
  ol_status s = OL_OK;
  for (int64_t t = 0; t < p->batches && s == OL_OK; t++) {
    int64_t ao, bo;
    ol_mm_offsets(p, t, &ao, &bo);
    s = ol_mm_gemm_any(a->dtype, p->M, p->N, p->K, (const char *)ol_tdata(a) + (size_t)ao * es,
                       b + (size_t)bo * es, (char *)ol_tdata(y) + (size_t)(t * p->M * p->N) * es, scratch);
  }
  ol_dealloc(ctx->allocator, b);
  ol_dealloc(ctx->allocator, scratch);
  return s;
}

/* float32 products, one per batch (attention: one per head), spread over
 * the thread pool when there is enough work; each is computed exactly as on
 * one thread. */
typedef struct tb_job {
  const ol_mm_plan *p;
  const float *A, *B;
  float *C;
  int64_t M, pitch, mat;
} tb_job;

static void tb_batch(const tb_job *j, int64_t t) {
  const ol_mm_plan *p = j->p;
  int64_t ao = 0, bo = 0;
  if (!p->fold_a) ol_mm_offsets(p, t, &ao, &bo);
  if (j->pitch && j->mat) bo = bo / j->mat * j->pitch * p->K;
  ol_f32_gemm_tb(j->M, p->N, p->K, j->A + ao, p->K, j->B + bo, p->K, j->C + t * j->M * p->N, p->N);
}

static void tb_task(void *arg, int64_t t, int slot) {
  (void)slot;
  tb_batch(arg, t);
}

#define TB_PAR_MIN_MACS (1 << 17) /* less is not worth waking a thread for */

static ol_status tb_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  tb_kernel *k = (tb_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *a, *bt;
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &bt));
  if (bt->rank != k->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input B comes from a Transpose whose perm has %d entries, but its input has rank %d",
                           k->rank, bt->rank);
  if (a->dtype != bt->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A is %s but B is %s", ol_dtype_name(a->dtype),
                           ol_dtype_name(bt->dtype));
  switch (a->dtype) {
    case OL_DTYPE_FLOAT: case OL_DTYPE_DOUBLE: case OL_DTYPE_FLOAT16: case OL_DTYPE_BFLOAT16:
    case OL_DTYPE_INT32: case OL_DTYPE_INT64: case OL_DTYPE_UINT32: case OL_DTYPE_UINT64:
      break;
    default:
      return ol_kernel_bad_dtype(node, "input A", a->dtype);
  }
  /* B as MatMul sees it: the last two dims swapped (shape only) */
  ol_tensor lb;
  memset(&lb, 0, sizeof lb);
  lb.dtype = bt->dtype;
  lb.rank = bt->rank;
  memcpy(lb.dims, bt->dims, sizeof(int64_t) * (size_t)bt->rank);
  lb.dims[bt->rank - 2] = bt->dims[bt->rank - 1];
  lb.dims[bt->rank - 1] = bt->dims[bt->rank - 2];
  ol_mm_plan p;
  OL_TRY(ol_mm_plan_make(node, a, &lb, &p));
  ol_value *dense = NULL;
  int64_t pitch = 0; /* rows between B's matrices when pitched along its rows */
  if (ol_tensor_is_strided(bt)) {
    if (bt->rank >= 3 && bt->pitch_axis == bt->rank - 2 && a->dtype == OL_DTYPE_FLOAT) {
      pitch = ol_tensor_layout_pitch(bt);
    } else {
      OL_TRY(ol_tensor_materialize(ctx->allocator, bt, &dense));
      bt = &dense->tensor;
    }
  }
  ol_tensor *y;
  ol_status s = ol_ctx_output(ctx, 0, a->dtype, p.out_rank, p.out_dims, &y);
  if (s == OL_OK && ol_tcount(y) > 0) {
    if (a->dtype != OL_DTYPE_FLOAT) {
      s = tb_generic(ctx, a, bt, &p, y);
    } else {
      int64_t M = p.M, batches = p.batches, mat = p.K * p.N;
      if (p.fold_a) {
        M *= batches;
        batches = 1;
      }
      tb_job job = {&p, ol_tdata(a), ol_tdata(bt), ol_tdata(y), M, pitch, mat};
      int threads = batches > 1 && batches * M * p.N * p.K >= TB_PAR_MIN_MACS ? ol_pool_threads() : 1;
      if (ctx->cancelled && *ctx->cancelled) s = ol_kernel_error(node, OL_CANCELLED, "cancelled");
      else if (threads > 1) ol_parallel_for(batches, threads, tb_task, &job);
      else
        for (int64_t t = 0; t < batches; t++) tb_batch(&job, t);
    }
  }
  ol_value_release(dense);
  return s;
}

/* perm = [0, 1, ..., r-3, r-1, r-2] with r >= 2 */
static bool swaps_last_two(const ol_node *t) {
  const ol_attr *perm = ol_node_attr(t, "perm");
  if (!perm || perm->type != OL_ATTR_INTS || perm->count < 2) return false;
  size_t r = perm->count;
  for (size_t i = 0; i + 2 < r; i++)
    if (perm->ints[i] != (int64_t)i) return false;
  return perm->ints[r - 2] == (int64_t)(r - 1) && perm->ints[r - 1] == (int64_t)(r - 2);
}

ol_status ol_matmul_fuse_transposed_b(const ol_fusion_site *site, ol_kernel **out) {
  *out = NULL;
  if (site->reader->num_inputs != 2 || !site->reader->inputs[0][0] || !swaps_last_two(site->producer))
    return OL_OK;
  tb_kernel *k;
  OL_TRY(ol_kernel_alloc(site->reader, sizeof *k, tb_compute, (ol_kernel **)&k));
  k->rank = (int)ol_node_attr(site->producer, "perm")->count;
  *out = &k->base;
  return OL_OK;
}
