/* MatMul(A, ai.rt::Dequantize(E, dtype=FLOAT)) fused at plan time
 * (ol_matmul_fuse_dequantized_b): E, a constant [K, N] encoded initializer of a
 * portable affine profile, is read in place and decoded in register
 * (simd/qaffine.h), never materialized. The result equals the unfused
 * Dequantize + MatMul bit for bit; shape and type errors read as MatMul's. */
#include "ops/matmul/matmul_affine.h"

#include <stdlib.h>
#include <string.h>

#include "ops/matmul/matmul.h"
#include "quant/affine_view.h"

typedef struct qmatmul_kernel {
  ol_kernel base;
  ol_quant_affine_view view;
  ol_value *encoded; /* retained: the view points into its payload */
} qmatmul_kernel;

static ol_status qmatmul_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  qmatmul_kernel *k = (qmatmul_kernel *)kernel;
  const ol_node *node = ctx->node;
  if (ctx->num_inputs < 2 || ctx->inputs[1] != k->encoded)
    return ol_kernel_error(node, OL_INTERNAL, "the fused encoded weight is not the planned initializer");
  const ol_tensor *a;
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  if (a->dtype != OL_DTYPE_FLOAT)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "A is %s but B is %s", ol_dtype_name(a->dtype),
                           ol_dtype_name(OL_DTYPE_FLOAT));
  ol_tensor b;
  memset(&b, 0, sizeof b);
  b.dtype = OL_DTYPE_FLOAT;
  b.rank = 2;
  b.dims[0] = k->view.weight.K;
  b.dims[1] = k->view.weight.N;
  ol_mm_plan p;
  OL_TRY(ol_mm_plan_make(node, a, &b, &p));
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_FLOAT, p.out_rank, p.out_dims, &y));
  if (ol_tcount(y) == 0) return OL_OK;
  if (ctx->cancelled && *ctx->cancelled) return ol_kernel_error(node, OL_CANCELLED, "cancelled");
  /* W has no batch dimensions: A's batch folds into M */
  return ol_qaffine_matmul(&k->view.weight, p.M * p.batches, ol_tdata(a), ol_tdata(y));
}

static void qmatmul_destroy(ol_kernel *kernel) {
  qmatmul_kernel *k = (qmatmul_kernel *)kernel;
  ol_quant_affine_view_clear(&k->view);
  ol_value_release(k->encoded);
  free(k);
}

static bool is_dequantize_float(const ol_node *d) {
  const ol_attr *dtype = ol_node_attr(d, "dtype");
  return d->num_outputs == 1 && dtype && dtype->type == OL_ATTR_INT && dtype->i == OL_DTYPE_FLOAT;
}

ol_status ol_matmul_fuse_dequantized_b(const ol_fusion_site *site, ol_kernel **out) {
  *out = NULL;
  const ol_node *m = site->reader;
  if (m->num_inputs != 2 || !m->inputs[0][0] || !site->constant || !site->constant->encoded ||
      !is_dequantize_float(site->producer))
    return OL_OK;
  const ol_type_catalogue *types = site->graph->model ? site->graph->model->types : NULL;
  return ol_qmatmul_create(m, site->constant->value, types, out);
}

ol_status ol_qmatmul_create(const ol_node *matmul, ol_value *encoded, const ol_type_catalogue *types,
                            ol_kernel **out) {
  *out = NULL;
  if (!encoded || encoded->kind != OL_VALUE_ENCODED || !encoded->encoded) return OL_OK;
  ol_quant_affine_view view;
  bool eligible;
  const char *reason;
  OL_TRY(ol_quant_affine_view_make(encoded->encoded, types, &view, &eligible, &reason));
  if (!eligible) return OL_OK;
  ol_kernel *kernel;
  ol_status s = ol_kernel_alloc(matmul, sizeof(qmatmul_kernel), qmatmul_compute, &kernel);
  if (s != OL_OK) {
    ol_quant_affine_view_clear(&view);
    return s;
  }
  qmatmul_kernel *k = (qmatmul_kernel *)kernel;
  k->view = view;
  k->encoded = ol_value_retain(encoded);
  kernel->destroy = qmatmul_destroy;
  *out = kernel;
  return OL_OK;
}
