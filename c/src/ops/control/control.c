/* Control flow (ai.onnx): If 1-23, Loop 1-23, Scan 8-23 (8: batched form), and
 * calls of model-local functions (FunctionProto).
 * Bodies run through ctx->run_subgraph, which resolves outer-scope names in
 * the calling frame. Cancellation is checked before every body iteration. */
#include <stdlib.h>
#include <string.h>

#include "ops/control/control.h"

/* ------------------------------------------------------------ helpers */

static bool truthy(const ol_tensor *t) { return ol_tcount(t) > 0 && ol_tensor_get_double(t, 0) != 0.0; }

static void release_all(ol_value **values, size_t n) {
  for (size_t i = 0; i < n; i++) {
    ol_value_release(values[i]);
    values[i] = NULL;
  }
}

static ol_status check_cancel(const ol_kernel_ctx *ctx) {
  if (ctx->cancelled && *ctx->cancelled)
    return ol_kernel_error(ctx->node, OL_CANCELLED, "cancelled between iterations");
  return OL_OK;
}

/* Slice t of tensor src along axis (the axis removed). Axis 0 is a view. */
static ol_status take_slice(ol_allocator *alloc, const ol_tensor *src, int axis, int64_t t, ol_value **out) {
  int64_t dims[OL_MAX_RANK];
  int rank = 0;
  for (int d = 0; d < src->rank; d++)
    if (d != axis) dims[rank++] = src->dims[d];
  int64_t inner = ol_shape_count(rank - axis, dims + axis);
  int64_t outer = ol_shape_count(axis, src->dims);
  int64_t len = src->dims[axis];
  size_t es = ol_dtype_size(src->dtype);
  if (axis == 0 && es && src->dtype != OL_DTYPE_STRING && src->buffer)
    return ol_value_new_view(src->buffer, src->offset + (size_t)(t * inner) * es, src->dtype, rank, dims, out);
  OL_TRY(ol_value_new_tensor(alloc, src->dtype, rank, dims, out));
  for (int64_t o = 0; o < outer; o++) {
    ol_status s = ol_elements_copy(src->dtype, ol_tdata(&(*out)->tensor), o * inner, ol_tdata(src),
                                   (o * len + t) * inner, inner);
    if (s != OL_OK) return s;
  }
  return OL_OK;
}

/* Stacks count equal-shaped tensors along a new axis; positions[i] is where
 * items[i] goes. declared describes the element when count == 0. */
static ol_status stack(const ol_node *node, ol_allocator *alloc, ol_value **items, size_t count,
                       const int64_t *positions, int axis, const ol_type_info *declared, ol_value **out) {
  int64_t dims[OL_MAX_RANK];
  int rank;
  if (count == 0) {
    ol_dtype dtype = declared && declared->dtype ? declared->dtype : OL_DTYPE_FLOAT;
    rank = 1;
    dims[0] = 0;
    if (declared && declared->rank >= 0 && declared->rank < OL_MAX_RANK) {
      bool known = true;
      for (int d = 0; d < declared->rank; d++) known &= declared->dims[d] >= 0;
      if (known) {
        rank = declared->rank + 1;
        for (int d = 0; d < declared->rank; d++) dims[d + 1] = declared->dims[d];
      }
    }
    return ol_value_new_tensor(alloc, dtype, rank, dims, out);
  }
  if (items[0]->kind != OL_VALUE_TENSOR)
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "scan outputs must be tensors");
  const ol_tensor *first = ol_vt(items[0]);
  if (first->rank + 1 > OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scan output rank too large");
  if (axis < 0) axis += first->rank + 1;
  if (axis < 0 || axis > first->rank)
    return ol_kernel_error(node, OL_INVALID_MODEL, "scan output axis out of range");
  rank = first->rank + 1;
  for (int d = 0, k = 0; d < rank; d++) dims[d] = d == axis ? (int64_t)count : first->dims[k++];
  for (size_t i = 1; i < count; i++) {
    const ol_tensor *t = ol_vt(items[i]);
    if (items[i]->kind != OL_VALUE_TENSOR || t->dtype != first->dtype || t->rank != first->rank ||
        memcmp(t->dims, first->dims, sizeof(int64_t) * (size_t)t->rank) != 0)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scan outputs change type or shape between iterations");
  }
  OL_TRY(ol_value_new_tensor(alloc, first->dtype, rank, dims, out));
  int64_t outer = ol_shape_count(axis, first->dims);
  int64_t inner = ol_shape_count(first->rank - axis, first->dims + axis);
  ol_status s = OL_OK;
  for (size_t i = 0; i < count && s == OL_OK; i++)
    for (int64_t o = 0; o < outer && s == OL_OK; o++)
      s = ol_elements_copy(first->dtype, ol_tdata(&(*out)->tensor), (o * (int64_t)count + positions[i]) * inner,
                           ol_tdata(ol_vt(items[i])), o * inner, inner);
  if (s != OL_OK) {
    ol_value_release(*out);
    *out = NULL;
  }
  return s;
}

/* ------------------------------------------------------------ If */

static ol_status if_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_tensor *cond;
  OL_TRY(ol_ctx_require(ctx, 0, &cond));
  const ol_graph *branch = ol_attr_graph(node, truthy(cond) ? "then_branch" : "else_branch");
  if (!branch) return ol_kernel_error(node, OL_INVALID_MODEL, "missing then_branch/else_branch attribute");
  if (branch->num_outputs != ctx->num_outputs)
    return ol_kernel_error(node, OL_INVALID_MODEL, "branch '%s' has %zu outputs, the node %zu", branch->name,
                           branch->num_outputs, ctx->num_outputs);
  return ctx->run_subgraph(ctx->runtime, branch, NULL, 0, ctx->outputs, ctx->num_outputs);
}

static ol_status if_create(const ol_node *node, ol_kernel **out) {
  if (!ol_attr_graph(node, "then_branch") || !ol_attr_graph(node, "else_branch"))
    return ol_kernel_error(node, OL_INVALID_MODEL, "If needs then_branch and else_branch graphs");
  return ol_kernel_simple(node, if_compute, out);
}

/* ------------------------------------------------------------ Loop */

static ol_status loop_run(const ol_node *node, ol_kernel_ctx *ctx, const ol_graph *body, ol_value **carried,
                          size_t n_carried, ol_value ***scans, size_t n_scans, size_t *iterations) {
  const ol_tensor *max_trips = ol_ctx_input(ctx, 0);
  const ol_tensor *cond_in = ol_ctx_input(ctx, 1);
  if (max_trips && ol_tcount(max_trips) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "M (the trip count) has %lld elements, expected 1",
                           (long long)ol_tcount(max_trips));
  int64_t limit = max_trips ? ol_tensor_get_int64(max_trips, 0) : INT64_MAX;
  bool go = cond_in ? truthy(cond_in) : true;
  size_t body_in = 2 + n_carried, body_out = 1 + n_carried + n_scans;
  ol_value **in = ol_calloc(ctx->allocator, body_in, sizeof *in);
  ol_value **out = ol_calloc(ctx->allocator, body_out, sizeof *out);
  size_t cap = 0;
  ol_status s = (!in || !out) ? OL_OUT_OF_MEMORY : OL_OK;
  int64_t scalar_dims[1];
  for (int64_t t = 0; s == OL_OK && t < limit && go; t++) {
    if ((s = check_cancel(ctx)) != OL_OK) break;
    if ((s = ol_value_new_tensor(ctx->allocator, OL_DTYPE_INT64, 0, scalar_dims, &in[0])) != OL_OK) break;
    *(int64_t *)ol_tdata(&in[0]->tensor) = t;
    if ((s = ol_value_new_tensor(ctx->allocator, OL_DTYPE_BOOL, 0, scalar_dims, &in[1])) != OL_OK) {
      ol_value_release(in[0]);
      break;
    }
    *(uint8_t *)ol_tdata(&in[1]->tensor) = 1;
    for (size_t i = 0; i < n_carried; i++) in[2 + i] = carried[i];
    s = ctx->run_subgraph(ctx->runtime, body, in, body_in, out, body_out);
    ol_value_release(in[0]);
    ol_value_release(in[1]);
    if (s != OL_OK) break;
    if (out[0]->kind != OL_VALUE_TENSOR) {
      s = ol_kernel_error(node, OL_INVALID_MODEL, "body's first output (cond) must be a tensor");
      break;
    }
    go = truthy(&out[0]->tensor);
    ol_value_release(out[0]);
    for (size_t i = 0; i < n_carried; i++) {
      ol_value_release(carried[i]);
      carried[i] = out[1 + i];
    }
    if (n_scans && *iterations == cap) {
      cap = cap ? cap * 2 : 16;
      for (size_t k2 = 0; k2 < n_scans && s == OL_OK; k2++) {
        ol_value **grown = ol_realloc(ctx->allocator, scans[k2], cap * sizeof **scans);
        if (!grown) s = ol_error(OL_OUT_OF_MEMORY, "out of memory collecting Loop scan outputs");
        else scans[k2] = grown;
      }
    }
    for (size_t k2 = 0; k2 < n_scans; k2++) {
      if (s == OL_OK) scans[k2][*iterations] = out[1 + n_carried + k2];
      else ol_value_release(out[1 + n_carried + k2]);
    }
    if (s == OL_OK) (*iterations)++;
    memset(out, 0, body_out * sizeof *out);
  }
  ol_dealloc(ctx->allocator, in);
  ol_dealloc(ctx->allocator, out);
  return s;
}

static ol_status loop_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_graph *body = ol_attr_graph(node, "body");
  size_t n_carried = ctx->num_inputs > 2 ? ctx->num_inputs - 2 : 0;
  if (body->num_inputs != 2 + n_carried || body->num_outputs < 1 + n_carried)
    return ol_kernel_error(node, OL_INVALID_MODEL, "body takes %zu inputs and gives %zu outputs; expected %zu and >= %zu",
                           body->num_inputs, body->num_outputs, 2 + n_carried, 1 + n_carried);
  size_t n_scans = body->num_outputs - 1 - n_carried;
  if (ctx->num_outputs != n_carried + n_scans)
    return ol_kernel_error(node, OL_INVALID_MODEL, "node has %zu outputs, body implies %zu", ctx->num_outputs,
                           n_carried + n_scans);
  ol_value **carried = ol_calloc(ctx->allocator, n_carried, sizeof *carried);
  ol_value ***scans = ol_calloc(ctx->allocator, n_scans, sizeof *scans);
  if (!carried || !scans) {
    ol_dealloc(ctx->allocator, carried);
    ol_dealloc(ctx->allocator, scans);
    return OL_OUT_OF_MEMORY;
  }
  ol_status s = OL_OK;
  for (size_t i = 0; i < n_carried; i++) {
    carried[i] = ol_value_retain(ctx->inputs[2 + i]);
    if (!carried[i]) s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "loop-carried input %zu is missing", i);
  }
  size_t iterations = 0;
  if (s == OL_OK) s = loop_run(node, ctx, body, carried, n_carried, scans, n_scans, &iterations);
  for (size_t i = 0; i < n_carried; i++) {
    if (s == OL_OK) s = ol_ctx_set_output(ctx, i, carried[i]);
    else ol_value_release(carried[i]);
  }
  int64_t *positions = ol_calloc(ctx->allocator, iterations + 1, sizeof(int64_t));
  for (size_t t = 0; positions && t < iterations; t++) positions[t] = (int64_t)t;
  for (size_t k2 = 0; k2 < n_scans; k2++) {
    if (s == OL_OK) {
      ol_value *stacked = NULL;
      s = positions ? stack(node, ctx->allocator, scans[k2], iterations, positions, 0,
                            &body->outputs[1 + n_carried + k2].type, &stacked)
                    : OL_OUT_OF_MEMORY;
      if (s == OL_OK) s = ol_ctx_set_output(ctx, n_carried + k2, stacked);
    }
    if (scans[k2]) release_all(scans[k2], iterations);
    ol_dealloc(ctx->allocator, scans[k2]);
  }
  ol_dealloc(ctx->allocator, positions);
  ol_dealloc(ctx->allocator, carried);
  ol_dealloc(ctx->allocator, scans);
  return s;
}

static ol_status loop_create(const ol_node *node, ol_kernel **out) {
  if (!ol_attr_graph(node, "body")) return ol_kernel_error(node, OL_INVALID_MODEL, "Loop needs a body graph");
  return ol_kernel_simple(node, loop_compute, out);
}

/* ------------------------------------------------------------ Scan */

static int64_t attr_at(const ol_node *node, const char *name, size_t i, int64_t dflt) {
  const int64_t *v;
  int64_t n = ol_attr_ints(node, name, &v);
  return n > (int64_t)i ? v[i] : dflt;
}

/* One scan over len steps. states[n_state] are replaced by the final states;
 * scan_out[j] receives the stacked output j. Scan 8 names the input
 * directions "directions"; Scan 9 "scan_input_directions". */
typedef struct scan_job {
  const ol_node *node;
  ol_kernel_ctx *ctx;
  const ol_graph *body;
  size_t n_state, n_scan_in, n_scan_out;
  const ol_tensor *const *xs; /* scan inputs */
  const int *axes;            /* per scan input */
  const char *directions_attr;
} scan_job;

static ol_status scan_run(const scan_job *job, int64_t len, ol_value **states, ol_value **scan_out) {
  const ol_node *node = job->node;
  ol_kernel_ctx *ctx = job->ctx;
  size_t n_body_in = job->body->num_inputs, n_body_out = job->body->num_outputs;
  size_t n_state = job->n_state;
  ol_value **in = ol_calloc(ctx->allocator, n_body_in, sizeof *in);
  ol_value **out = ol_calloc(ctx->allocator, n_body_out, sizeof *out);
  ol_value **scans = ol_calloc(ctx->allocator, job->n_scan_out * (size_t)len + 1, sizeof *scans);
  int64_t *positions = ol_calloc(ctx->allocator, (size_t)len + 1, sizeof *positions);
  ol_status s = (!in || !out || !scans || !positions) ? OL_OUT_OF_MEMORY : OL_OK;
  for (int64_t t = 0; s == OL_OK && t < len; t++) {
    if ((s = check_cancel(ctx)) != OL_OK) break;
    for (size_t i = 0; i < n_state; i++) in[i] = states[i];
    for (size_t j = 0; s == OL_OK && j < job->n_scan_in; j++) {
      int64_t at = attr_at(node, job->directions_attr, j, 0) ? len - 1 - t : t;
      s = take_slice(ctx->allocator, job->xs[j], job->axes[j], at, &in[n_state + j]);
    }
    if (s == OL_OK) s = ctx->run_subgraph(ctx->runtime, job->body, in, n_body_in, out, n_body_out);
    for (size_t j = 0; j < job->n_scan_in; j++) {
      ol_value_release(in[n_state + j]);
      in[n_state + j] = NULL;
    }
    if (s != OL_OK) break;
    for (size_t i = 0; i < n_state; i++) {
      ol_value_release(states[i]);
      states[i] = out[i];
    }
    for (size_t j = 0; j < job->n_scan_out; j++) scans[j * (size_t)len + (size_t)t] = out[n_state + j];
  }
  for (size_t j = 0; j < job->n_scan_out; j++) {
    if (s == OL_OK) {
      bool reverse = attr_at(node, "scan_output_directions", j, 0) != 0;
      for (int64_t t = 0; t < len; t++) positions[t] = reverse ? len - 1 - t : t;
      s = stack(node, ctx->allocator, scans + j * (size_t)len, (size_t)len, positions,
                (int)attr_at(node, "scan_output_axes", j, 0), &job->body->outputs[n_state + j].type, &scan_out[j]);
    }
    if (scans) release_all(scans + j * (size_t)len, (size_t)len);
  }
  ol_dealloc(ctx->allocator, in);
  ol_dealloc(ctx->allocator, out);
  ol_dealloc(ctx->allocator, scans);
  ol_dealloc(ctx->allocator, positions);
  return s;
}

/* Scan 9+: inputs are states then scan inputs, scanned along scan_input_axes. */
static ol_status scan_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_graph *body = ol_attr_graph(node, "body");
  int64_t m = ol_attr_int(node, "num_scan_inputs", 0);
  if (m <= 0 || (size_t)m > ctx->num_inputs)
    return ol_kernel_error(node, OL_INVALID_MODEL, "num_scan_inputs %lld does not fit %zu inputs", (long long)m,
                           ctx->num_inputs);
  size_t n_state = ctx->num_inputs - (size_t)m, n_scan_in = (size_t)m;
  if (body->num_inputs != ctx->num_inputs || body->num_outputs < n_state || ctx->num_outputs != body->num_outputs)
    return ol_kernel_error(node, OL_INVALID_MODEL, "body signature does not match the node");
  const ol_tensor *xs[OL_MAX_RANK * 4];
  int axes[OL_MAX_RANK * 4];
  if (n_scan_in > sizeof axes / sizeof axes[0]) return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "too many scan inputs");
  int64_t len = -1;
  for (size_t j = 0; j < n_scan_in; j++) {
    OL_TRY(ol_ctx_require(ctx, n_state + j, &xs[j]));
    if (xs[j]->rank == 0) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scan input %zu is a scalar", j);
    OL_TRY(ol_normalize_axis(node, attr_at(node, "scan_input_axes", j, 0), xs[j]->rank, &axes[j]));
    if (len >= 0 && xs[j]->dims[axes[j]] != len)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scan inputs have different sequence lengths");
    len = xs[j]->dims[axes[j]];
  }
  scan_job job = {node, ctx, body, n_state, n_scan_in, body->num_outputs - n_state, xs, axes, "scan_input_directions"};
  ol_value **states = ol_calloc(ctx->allocator, n_state + job.n_scan_out + 1, sizeof *states);
  if (!states) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < n_state; i++) states[i] = ol_value_retain(ctx->inputs[i]);
  ol_status s = scan_run(&job, len, states, states + n_state);
  for (size_t i = 0; i < n_state + job.n_scan_out; i++) {
    if (s == OL_OK) s = ol_ctx_set_output(ctx, i, states[i]);
    else ol_value_release(states[i]);
  }
  ol_dealloc(ctx->allocator, states);
  return s;
}

/* Scan 8: a leading batch axis on every input and output, the sequence on
 * axis 1 of scan inputs, and an optional sequence_lens input (only full
 * lengths are supported). Each batch row runs the 9+ logic. */
static ol_status scan8_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_node *node = k->node;
  const ol_graph *body = ol_attr_graph(node, "body");
  int64_t m = ol_attr_int(node, "num_scan_inputs", 0);
  if (ctx->num_inputs < 1 || m <= 0 || (size_t)m > ctx->num_inputs - 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "num_scan_inputs %lld does not fit the inputs", (long long)m);
  size_t n_scan_in = (size_t)m, n_state = ctx->num_inputs - 1 - n_scan_in;
  if (body->num_inputs != n_state + n_scan_in || body->num_outputs < n_state || ctx->num_outputs != body->num_outputs)
    return ol_kernel_error(node, OL_INVALID_MODEL, "body signature does not match the node");
  size_t n_scan_out = body->num_outputs - n_state;
  const ol_tensor *first;
  OL_TRY(ol_ctx_require(ctx, 1 + n_state, &first));
  if (first->rank < 2) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "scan inputs need [batch, sequence, ...]");
  int64_t batch = first->dims[0], len = first->dims[1];
  const ol_tensor *lens = ol_ctx_input(ctx, 0);
  for (int64_t b = 0; lens && b < ol_tcount(lens); b++)
    if ((int64_t)ol_tensor_get_double(lens, b) != len)
      return ol_kernel_error(node, OL_NOT_IMPLEMENTED, "sequence_lens shorter than the scan inputs are not supported");
  size_t n_out = n_state + n_scan_out;
  ol_value **rows = ol_calloc(ctx->allocator, (size_t)batch * n_out + 1, sizeof *rows);
  ol_value **row_in = ol_calloc(ctx->allocator, n_state + n_scan_in + 1, sizeof *row_in);
  const ol_tensor **xs = ol_calloc(ctx->allocator, n_scan_in + 1, sizeof *xs);
  int *axes = ol_calloc(ctx->allocator, n_scan_in + 1, sizeof *axes);
  int64_t *positions = ol_calloc(ctx->allocator, (size_t)batch + 1, sizeof *positions);
  ol_status s = (!rows || !row_in || !xs || !axes || !positions) ? OL_OUT_OF_MEMORY : OL_OK;
  for (int64_t b = 0; s == OL_OK && b < batch; b++) {
    positions[b] = b;
    for (size_t i = 0; s == OL_OK && i < n_state + n_scan_in; i++) {
      const ol_tensor *t;
      s = ol_ctx_require(ctx, 1 + i, &t);
      if (s == OL_OK && (t->rank < 1 || t->dims[0] != batch))
        s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "input %zu does not have the batch size %lld", 1 + i, (long long)batch);
      if (s == OL_OK) s = take_slice(ctx->allocator, t, 0, b, &row_in[i]);
    }
    for (size_t j = 0; s == OL_OK && j < n_scan_in; j++) {
      xs[j] = &row_in[n_state + j]->tensor;
      axes[j] = 0;
      if (xs[j]->rank < 1 || xs[j]->dims[0] != len)
        s = ol_kernel_error(node, OL_INVALID_ARGUMENT, "scan inputs have different sequence lengths");
    }
    scan_job job = {node, ctx, body, n_state, n_scan_in, n_scan_out, xs, axes, "directions"};
    ol_value **row = rows + (size_t)b * n_out;
    for (size_t i = 0; s == OL_OK && i < n_state; i++) row[i] = ol_value_retain(row_in[i]);
    if (s == OL_OK) s = scan_run(&job, len, row, row + n_state);
    release_all(row_in, n_state + n_scan_in);
  }
  /* gather rows into [batch, ...] outputs */
  ol_value **column = ol_calloc(ctx->allocator, (size_t)batch + 1, sizeof *column);
  if (!column && s == OL_OK) s = OL_OUT_OF_MEMORY;
  for (size_t i = 0; s == OL_OK && i < n_out; i++) {
    for (int64_t b = 0; b < batch; b++) column[b] = rows[(size_t)b * n_out + i];
    ol_value *stacked = NULL;
    s = stack(node, ctx->allocator, column, (size_t)batch, positions, 0, NULL, &stacked);
    if (s == OL_OK) s = ol_ctx_set_output(ctx, i, stacked);
  }
  if (rows) release_all(rows, (size_t)batch * n_out);
  ol_dealloc(ctx->allocator, column);
  ol_dealloc(ctx->allocator, rows);
  ol_dealloc(ctx->allocator, row_in);
  ol_dealloc(ctx->allocator, xs);
  ol_dealloc(ctx->allocator, axes);
  ol_dealloc(ctx->allocator, positions);
  return s;
}

static ol_status scan_create(const ol_node *node, ol_kernel **out) {
  if (!ol_attr_graph(node, "body")) return ol_kernel_error(node, OL_INVALID_MODEL, "Scan needs a body graph");
  return ol_kernel_simple(node, node->opset < 9 ? scan8_compute : scan_compute, out);
}

/* ------------------------------------------------------------ model-local functions */

/* A call runs the body specialized for this call site; omitted optional
 * inputs stay absent inside the body. */
static ol_status function_call_compute(ol_kernel *k, ol_kernel_ctx *ctx) {
  const ol_graph *body = k->node->function_body;
  if (ctx->num_inputs > body->num_inputs || ctx->num_outputs > body->num_outputs)
    return ol_kernel_error(k->node, OL_INVALID_MODEL, "the call has %zu inputs and %zu outputs, the function %zu and %zu",
                           ctx->num_inputs, ctx->num_outputs, body->num_inputs, body->num_outputs);
  ol_value **outputs = ol_calloc(ctx->allocator, body->num_outputs, sizeof *outputs);
  if (!outputs) return OL_OUT_OF_MEMORY;
  ol_status s = ctx->run_subgraph(ctx->runtime, body, ctx->inputs, ctx->num_inputs, outputs, body->num_outputs);
  for (size_t i = 0; i < body->num_outputs; i++) {
    if (s == OL_OK && i < ctx->num_outputs) s = ol_ctx_set_output(ctx, i, outputs[i]);
    else ol_value_release(outputs[i]);
    outputs[i] = NULL;
  }
  ol_dealloc(ctx->allocator, outputs);
  return s;
}

ol_status ol_function_call_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, function_call_compute, out);
}

const ol_op_schema ol_schema_control[] = {
    {"", "If", 1, OL_OPSET_LATEST, if_create, NULL, "any"},
    {"", "Loop", 1, OL_OPSET_LATEST, loop_create, NULL, "any"},
    {"", "Scan", 8, OL_OPSET_LATEST, scan_create, NULL, "any"},
    {0},
};
