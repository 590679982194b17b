/* Loss operators (ai.onnx).
 *
 *   NegativeLogLikelihoodLoss 12-23 (12, 13, 22)
 *   SoftmaxCrossEntropyLoss 12-23 (12, 13; optional log_prob output)
 *
 * Both take (N, C, d1..dk) scores and (N, d1..dk) int32/int64 targets, an
 * optional per-class weight, ignore_index and reduction none/sum/mean.
 * Computation is in double (log-softmax with the project's ol_exp/ol_log),
 * rounded once to the input type; sums run in element order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/loss/loss.h"
#include "simd/math.h"

enum { RED_NONE, RED_SUM, RED_MEAN };

typedef struct loss_kernel {
  ol_kernel base;
  int reduction;
  bool has_ignore;
  int64_t ignore_index;
  bool softmax;
} loss_kernel;

static bool is_float_type(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

static ol_status loss_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  loss_kernel *k = (loss_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *t, *w = NULL;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &t));
  w = ol_ctx_input(ctx, 2);
  if (!is_float_type(x->dtype)) return ol_kernel_bad_dtype(node, "input", x->dtype);
  if (t->dtype != OL_DTYPE_INT64 && t->dtype != OL_DTYPE_INT32)
    return ol_kernel_bad_dtype(node, "target", t->dtype);
  if (x->rank < 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input must have rank >= 2 (N, C, ...), got rank %d", x->rank);
  if (t->rank != x->rank - 1 || t->dims[0] != x->dims[0])
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "target shape must be input shape without dimension 1");
  for (int i = 1; i < t->rank; i++)
    if (t->dims[i] != x->dims[i + 1])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "target dimension %d is %lld, input has %lld", i,
                             (long long)t->dims[i], (long long)x->dims[i + 1]);
  int64_t N = x->dims[0], C = x->dims[1];
  int64_t D = ol_shape_count(x->rank - 2, x->dims + 2);
  if (w) {
    if (w->rank != 1 || w->dims[0] != C)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "weight must be 1-D of length C=%lld", (long long)C);
    if (!is_float_type(w->dtype)) return ol_kernel_bad_dtype(node, "weight", w->dtype);
  }
  int64_t total = ol_tcount(x);
  double *lp = ol_alloc(ctx->allocator, sizeof(double) * (size_t)(total > 0 ? total : 1));
  if (!lp) return OL_OUT_OF_MEMORY;
  for (int64_t i = 0; i < total; i++) lp[i] = ol_tensor_get_double(x, i);
  if (k->softmax) {
    for (int64_t n = 0; n < N; n++)
      for (int64_t d = 0; d < D; d++) {
        double *b = lp + n * C * D + d;
        double m = b[0];
        for (int64_t c = 1; c < C; c++) m = b[c * D] > m ? b[c * D] : m;
        double s = 0.0;
        for (int64_t c = 0; c < C; c++) s += ol_exp(b[c * D] - m);
        double ls = ol_log(s);
        for (int64_t c = 0; c < C; c++) b[c * D] = (b[c * D] - m) - ls;
      }
    if (ol_ctx_wants_output(ctx, 1)) {
      ol_tensor *lpo;
      ol_status st = ol_ctx_output(ctx, 1, x->dtype, x->rank, x->dims, &lpo);
      if (st != OL_OK) {
        ol_dealloc(ctx->allocator, lp);
        return st;
      }
      for (int64_t i = 0; i < total; i++) ol_tensor_set_double(lpo, i, lp[i]);
    }
  }
  int64_t nd = N * D;
  double *loss = ol_alloc(ctx->allocator, sizeof(double) * (size_t)(nd > 0 ? nd : 1));
  if (!loss) {
    ol_dealloc(ctx->allocator, lp);
    return OL_OUT_OF_MEMORY;
  }
  double sum = 0.0, wsum = 0.0;
  ol_status st = OL_OK;
  for (int64_t n = 0; n < N && st == OL_OK; n++)
    for (int64_t d = 0; d < D; d++) {
      int64_t i = n * D + d;
      int64_t c = (int64_t)ol_tensor_get_double(t, i);
      if (t->dtype == OL_DTYPE_INT64) c = ((const int64_t *)ol_tdata(t))[i];
      if (k->has_ignore && c == k->ignore_index) {
        loss[i] = 0.0;
        continue;
      }
      if (c < 0 || c >= C) {
        st = ol_kernel_error(node, OL_INVALID_ARGUMENT, "target value %lld is out of range [0, %lld)",
                             (long long)c, (long long)C);
        break;
      }
      double wt = w ? ol_tensor_get_double(w, c) : 1.0;
      loss[i] = -lp[(n * C + c) * D + d] * wt;
      sum += loss[i];
      wsum += wt;
    }
  if (st == OL_OK) {
    ol_tensor *y;
    if (k->reduction == RED_NONE) {
      st = ol_ctx_output(ctx, 0, x->dtype, t->rank, t->dims, &y);
      if (st == OL_OK)
        for (int64_t i = 0; i < nd; i++) ol_tensor_set_double(y, i, loss[i]);
    } else {
      st = ol_ctx_output(ctx, 0, x->dtype, 0, NULL, &y);
      if (st == OL_OK) ol_tensor_set_double(y, 0, k->reduction == RED_SUM ? sum : sum / wsum);
    }
  }
  ol_dealloc(ctx->allocator, loss);
  ol_dealloc(ctx->allocator, lp);
  return st;
}

static ol_status loss_create_common(const ol_node *node, bool softmax, ol_kernel **out) {
  const char *r = ol_attr_string(node, "reduction", "mean");
  int red;
  if (!strcmp(r, "none")) red = RED_NONE;
  else if (!strcmp(r, "sum")) red = RED_SUM;
  else if (!strcmp(r, "mean")) red = RED_MEAN;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'reduction' must be none, sum or mean, got '%s'", r);
  loss_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, loss_compute, (ol_kernel **)&k));
  k->reduction = red;
  k->softmax = softmax;
  const ol_attr *ii = ol_node_attr(node, "ignore_index");
  if (ii) {
    k->has_ignore = true;
    k->ignore_index = ii->i;
  }
  *out = &k->base;
  return OL_OK;
}

static ol_status nll_create(const ol_node *node, ol_kernel **out) {
  return loss_create_common(node, false, out);
}
static ol_status sce_create(const ol_node *node, ol_kernel **out) {
  return loss_create_common(node, true, out);
}

/* ------------------------------------------------------------ shape function */

/* SoftmaxCrossEntropyLoss(scores, labels, weights?) -> loss, log_prob?;
 * NegativeLogLikelihoodLoss(input, target, weight?) -> loss. reduction
 * "none" gives labels' shape, otherwise a scalar. */
ol_status ol_infer_loss(ol_infer_ctx *ctx) {
  const ol_infer_type *scores = ol_infer_input(ctx, 0), *labels = ol_infer_input(ctx, 1);
  if (!scores) return OL_OK;
  bool none = strcmp(ol_attr_string(ctx->node, "reduction", "mean"), "none") == 0;
  if (ctx->num_outputs > 0) {
    if (none) ol_infer_set_tensor(&ctx->outputs[0], scores->dtype, labels ? labels->rank : -1, labels ? labels->dims : NULL);
    else ol_infer_set_tensor(&ctx->outputs[0], scores->dtype, 0, NULL);
  }
  if (ctx->num_outputs > 1) ol_infer_set_tensor(&ctx->outputs[1], scores->dtype, scores->rank, scores->dims);
  return OL_OK;
}

#define LT "float16 bfloat16 float32 float64 (targets int32 int64)"
const ol_op_schema ol_schema_loss[] = {
    {"", "NegativeLogLikelihoodLoss", 12, OL_OPSET_LATEST, nll_create, ol_infer_loss, LT},
    {"", "SoftmaxCrossEntropyLoss", 12, OL_OPSET_LATEST, sce_create, ol_infer_loss, LT},
    {0},
};
