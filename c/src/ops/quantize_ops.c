/* onnx-light quantization operators, domain "ai.rt" opset 1 (seed 003,
 * "Graph operators"; wire-facts §2.1-2.2). Not ONNX QuantizeLinear /
 * DequantizeLinear (those are quantize_linear.c).
 *
 *   Quantize(X, scales?, zero_points?, offsets?, codebooks?, permutation?,
 *            forward?, inverse?, outliers?) -> Y (encoded)
 *     attribute `type` (TYPE_PROTO, required): a TypeProto wrapping the
 *     destination StructTypeProto, inline or a struct_type.type_ref resolved
 *     through ModelProto.struct_types. Optional `parameter_ref` (shared
 *     parameter sets) is not implemented yet and rejected when the kernel is
 *     created. Y is an OL_VALUE_ENCODED value owning a self-contained
 *     Onnx__EncodedValueProto (inline descriptor) with X's logical shape and
 *     dtype. When `scales` is omitted every block is calibrated from the
 *     actual input (ol_quant_calibrate); default zero points are 0 for signed
 *     and 2^(bits-1) for unsigned affine codes, offsets 0, fixed tables from
 *     the catalogue (ol_quant_plan_from_type). ORT MatMulNBits destinations
 *     (the struct_type of an existing ORT value) take a [K, N] X, per-block
 *     scales/zero points or column/K-group calibration, and must match the
 *     result's matrix dimensions, scale dtype and zero-point storage.
 *   Dequantize(X) -> Y
 *     attribute `dtype` (INT, required): FLOAT, DOUBLE, FLOAT16 or BFLOAT16.
 *     Decodes portable and ORT MatMulNBits layouts; nonfinite results and
 *     overflow of dtype are errors.
 *
 * Descriptors and encoded values that use type_ref resolve through the
 * model holding the node (node->graph->model); kernels built on a bare node
 * (no graph) only accept inline descriptors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/model.h"
#include "ops/kernel.h"
#include "ops/registry.h"
#include "quant/codec.h"
#include "quant/wire.h"

enum { IN_X, IN_SCALES, IN_ZERO_POINTS, IN_OFFSETS, IN_CODEBOOKS, IN_PERMUTATION, IN_FORWARD,
       IN_INVERSE, IN_OUTLIERS, IN_COUNT };

static const char *const input_names[IN_COUNT] = {
    "X", "scales", "zero_points", "offsets", "codebooks", "permutation", "forward", "inverse", "outliers"};

static const Onnx__ModelProto *node_model(const ol_node *node) {
  return node->graph && node->graph->model ? node->graph->model->proto : NULL;
}

static ol_status node_wrap(const ol_node *node, ol_status s) {
  return ol_error_wrap(s, "%s node '%s'", node->op_type, node->name);
}

static void encoded_free(void *payload) { ol_quant_proto_free((Onnx__EncodedValueProto *)payload); }

/* ------------------------------------------------------------ Quantize */

typedef struct quantize_kernel {
  ol_kernel base;
  const Onnx__StructTypeProto *type; /* in the model's NodeProto */
  const Onnx__StructTypeProto *root; /* type resolved (ORT destinations) */
  const Onnx__ModelProto *model;     /* may be NULL */
  ol_quant_format ort_format;        /* an ORT MatMulNBits destination, else FORMAT_COUNT */
  uint64_t ort_block_size;
} quantize_kernel;

/* Parameter tensor of a floating dtype as doubles (malloc'd). */
static ol_status read_param(const ol_node *node, const ol_tensor *t, size_t input, double **out,
                            uint64_t *count) {
  *out = NULL;
  *count = (uint64_t)ol_tcount(t);
  if (!ol_quant_float_bytes(t->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input '%s' must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got %s)",
                           input_names[input], ol_dtype_name(t->dtype));
  double *v = ol_xmalloc(*count ? (size_t)*count * sizeof(double) : 1);
  if (!v) return OL_OUT_OF_MEMORY;
  ol_status s = ol_quant_read_floats(t->dtype, ol_tdata(t), *count, v);
  if (s != OL_OK) {
    free(v);
    return node_wrap(node, s);
  }
  *out = v;
  return OL_OK;
}

/* scales / zero_points / offsets: a scalar or one value per block. */
static ol_status apply_per_block(const ol_node *node, ol_quant_plan *plan, const ol_tensor *t,
                                 size_t input, size_t blocks) {
  double *v;
  uint64_t n;
  bool scalar = t->rank == 0;
  if (!scalar && !(t->rank == 1 && (uint64_t)t->dims[0] == blocks))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input '%s' must be a scalar or a 1-D tensor with one value per block "
                           "(%zu blocks), got rank %d with %lld values", input_names[input], blocks,
                           t->rank, (long long)ol_tcount(t));
  OL_TRY(read_param(node, t, input, &v, &n));
  size_t k = 0;
  for (size_t r = 0; r < plan->run_count; r++)
    for (size_t b = 0; b < plan->runs[r].block_count; b++, k++) {
      ol_quant_block *blk = &plan->runs[r].blocks[b];
      double x = v[scalar ? 0 : k];
      if (input == IN_SCALES) blk->scale = x;
      else if (input == IN_ZERO_POINTS) blk->zero_point = x;
      else blk->offset = x;
    }
  free(v);
  return OL_OK;
}

static ol_status apply_codebooks(const ol_node *node, ol_quant_plan *plan, const ol_tensor *t) {
  uint64_t want = 0;
  for (size_t r = 0; r < plan->run_count; r++)
    want += ol_quant_layout_table_size(&plan->runs[r].layout) * plan->runs[r].block_count;
  double *v;
  uint64_t n;
  OL_TRY(read_param(node, t, IN_CODEBOOKS, &v, &n));
  ol_status s = OL_OK;
  if (n != want)
    s = ol_kernel_error(node, OL_INVALID_ARGUMENT,
                        "input 'codebooks' has %llu values; the descriptor's blocks need %llu "
                        "(all blocks' tables concatenated in run order)",
                        (unsigned long long)n, (unsigned long long)want);
  uint64_t at = 0;
  for (size_t r = 0; s == OL_OK && r < plan->run_count; r++) {
    uint64_t size = ol_quant_layout_table_size(&plan->runs[r].layout);
    for (size_t b = 0; s == OL_OK && b < plan->runs[r].block_count; b++, at += size)
      s = ol_quant_block_set_codebook(&plan->runs[r].blocks[b], v + at, (size_t)size);
  }
  free(v);
  return s;
}

/* permutation / outliers: 1-D INT64 with exactly the declared count. */
static ol_status read_indices(const ol_node *node, ol_kernel_ctx *ctx, size_t input, size_t declared,
                              const int64_t **out, size_t *count) {
  *out = NULL;
  *count = 0;
  const ol_tensor *t = ol_ctx_input(ctx, input);
  if (!t || ol_tcount(t) == 0) {
    if (declared)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "the destination type declares %zu %s indices but input '%s' is %s",
                             declared, input_names[input], input_names[input], t ? "empty" : "missing");
    return OL_OK;
  }
  if (t->dtype != OL_DTYPE_INT64 || t->rank != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' must be a 1-D INT64 tensor",
                           input_names[input]);
  if ((size_t)t->dims[0] != declared)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input '%s' has %lld indices; the destination type declares %zu",
                           input_names[input], (long long)t->dims[0], declared);
  *out = ol_tdata(t);
  *count = declared;
  return OL_OK;
}

static ol_status read_matrix(const ol_node *node, ol_kernel_ctx *ctx, size_t input, uint32_t n,
                             double **out) {
  *out = NULL;
  const ol_tensor *t = ol_ctx_input(ctx, input);
  if (!t || ol_tcount(t) == 0) {
    if (n)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "the destination type declares a %u x %u transform but input '%s' is %s",
                             n, n, input_names[input], t ? "empty" : "missing");
    return OL_OK;
  }
  if (t->rank != 2 || t->dims[0] != (int64_t)n || t->dims[1] != (int64_t)n)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input '%s' must have shape [%u, %u] (the declared transform size), got "
                           "rank %d%s", input_names[input], n, n, t->rank,
                           t->rank == 2 ? " with another shape" : "");
  uint64_t count;
  return read_param(node, t, input, out, &count);
}

/* Applies the optional inputs to the plan the descriptor gave. */
static ol_status apply_inputs(const ol_node *node, ol_kernel_ctx *ctx, ol_quant_plan *plan) {
  size_t blocks = 0;
  for (size_t r = 0; r < plan->run_count; r++) blocks += plan->runs[r].block_count;
  const ol_tensor *t;
  if ((t = ol_ctx_input(ctx, IN_CODEBOOKS))) OL_TRY(apply_codebooks(node, plan, t));
  if ((t = ol_ctx_input(ctx, IN_ZERO_POINTS))) OL_TRY(apply_per_block(node, plan, t, IN_ZERO_POINTS, blocks));
  if ((t = ol_ctx_input(ctx, IN_OFFSETS))) OL_TRY(apply_per_block(node, plan, t, IN_OFFSETS, blocks));
  if ((t = ol_ctx_input(ctx, IN_SCALES))) OL_TRY(apply_per_block(node, plan, t, IN_SCALES, blocks));
  const int64_t *idx;
  size_t count;
  OL_TRY(read_indices(node, ctx, IN_PERMUTATION, plan->permutation_size, &idx, &count));
  plan->permutation_size = 0;
  OL_TRY(ol_quant_plan_set_permutation(plan, idx, count));
  OL_TRY(read_indices(node, ctx, IN_OUTLIERS, plan->outlier_count, &idx, &count));
  plan->outlier_count = 0;
  OL_TRY(ol_quant_plan_set_outliers(plan, idx, count));
  uint32_t n = plan->transform_size;
  plan->transform_size = 0;
  plan->forward_size = plan->inverse_size = 0;
  double *fwd = NULL, *inv = NULL;
  ol_status s = read_matrix(node, ctx, IN_FORWARD, n, &fwd);
  if (s == OL_OK) s = read_matrix(node, ctx, IN_INVERSE, n, &inv);
  size_t nn = (size_t)n * n;
  if (s == OL_OK) s = ol_quant_plan_set_transform(plan, n, fwd, nn, inv, nn);
  free(fwd);
  free(inv);
  return s;
}

/* Quantize into an ORT MatMulNBits layout: X is [K, N]; blocks run column
 * first, then K group (padding rows excluded). Scales and zero points are
 * per-block inputs or calibrated (zero point 2^(bits-1), scale from the
 * largest positive/negative ratio to the code range); the encoder rounds them
 * to X's dtype. The result's descriptor must equal the destination (matrix
 * dimensions, scale dtype, zero-point storage). */
static bool same_type_bytes(const Onnx__StructTypeProto *a, const Onnx__StructTypeProto *b) {
  Onnx__StructTypeProto ca = *a, cb = *b;
  ca.has_type_id = cb.has_type_id = 0;
  ca.type_id = cb.type_id = 0;
  size_t na = onnx__struct_type_proto__get_packed_size(&ca), nb = onnx__struct_type_proto__get_packed_size(&cb);
  if (na != nb) return false;
  uint8_t *ba = ol_xmalloc(na ? na : 1), *bb = ol_xmalloc(nb ? nb : 1);
  bool same = false;
  if (ba && bb) {
    onnx__struct_type_proto__pack(&ca, ba);
    onnx__struct_type_proto__pack(&cb, bb);
    same = memcmp(ba, bb, na) == 0;
  }
  free(ba);
  free(bb);
  return same;
}

static ol_status quantize_ort(quantize_kernel *k, ol_kernel_ctx *ctx, const ol_tensor *x) {
  const ol_node *node = ctx->node;
  for (size_t i = IN_OFFSETS; i < IN_COUNT; i++) {
    const ol_tensor *t = ol_ctx_input(ctx, i);
    if (t && ol_tcount(t))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "ORT MatMulNBits layouts reject offsets, codebooks, permutations, "
                             "transforms and outliers (input '%s' is given)", input_names[i]);
  }
  if (x->rank != 2)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "ORT MatMulNBits layouts need a [K, N] matrix (got rank %d)", x->rank);
  const uint64_t kk = (uint64_t)x->dims[0], n = (uint64_t)x->dims[1];
  ol_quant_plan *plan = NULL;
  ol_status s = ol_quant_make_matmul_nbits_plan(k->ort_format, kk, n, k->ort_block_size, &plan);
  if (s != OL_OK) return node_wrap(node, s);
  ol_quant_run *run = &plan->runs[0];
  const uint64_t bs = run->layout.count, groups = n ? run->block_count / n : 0;
  const double maximum = ldexp(1.0, (int)run->layout.bits) - 1;
  const ol_tensor *t;
  if ((t = ol_ctx_input(ctx, IN_ZERO_POINTS))) s = apply_per_block(node, plan, t, IN_ZERO_POINTS, run->block_count);
  if (s == OL_OK && (t = ol_ctx_input(ctx, IN_SCALES)))
    s = apply_per_block(node, plan, t, IN_SCALES, run->block_count);
  else if (s == OL_OK) {
    uint64_t count = kk * n;
    double *v = ol_xmalloc(count ? (size_t)count * sizeof(double) : 1);
    s = v ? ol_quant_read_floats(x->dtype, ol_tdata(x), count, v) : OL_OUT_OF_MEMORY;
    for (uint64_t col = 0; s == OL_OK && col < n; col++)
      for (uint64_t g = 0; s == OL_OK && g < groups; g++) {
        ol_quant_block *b = &run->blocks[col * groups + g];
        double up = maximum - b->zero_point, down = b->zero_point, scale = 0;
        for (uint64_t r = g * bs; r < (g + 1) * bs && r < kk; r++) {
          double value = v[r * n + col], ratio = 0;
          if (!isfinite(value)) {
            s = ol_kernel_error(node, OL_INVALID_ARGUMENT,
                                "Quantization input must be finite (row %llu, column %llu)",
                                (unsigned long long)r, (unsigned long long)col);
            break;
          }
          if (value > 0 && up > 0) ratio = value / up;
          if (value < 0 && down > 0) ratio = -value / down;
          if (ratio > scale) scale = ratio;
        }
        b->scale = scale > 0 && isfinite(scale) ? scale : 1.0;
      }
    free(v);
  }
  Onnx__EncodedValueProto *ev = NULL;
  if (s == OL_OK) {
    s = ol_quant_encode_proto(plan, x->dtype, ol_tdata(x), x->rank, x->dims,
                              node->num_inputs ? node->inputs[IN_X] : NULL, &ev);
    if (s != OL_OK && s != OL_OUT_OF_MEMORY) s = node_wrap(node, s);
  }
  ol_quant_plan_destroy(plan);
  if (s != OL_OK) return s;
  if (!same_type_bytes(ev->struct_type, k->root)) {
    ol_quant_proto_free(ev);
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "the ORT MatMulNBits result for a [%lld, %lld] %s input does not match the "
                           "destination type '%s' (matrix dimensions, scale dtype and zero-point "
                           "storage must agree)", (long long)kk, (long long)n,
                           ol_dtype_name(x->dtype), k->root->name);
  }
  ol_value *out;
  OL_TRY(ol_value_new_encoded(ev, encoded_free, &out));
  return ol_ctx_set_output(ctx, 0, out);
}

static ol_status quantize_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  quantize_kernel *k = (quantize_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, IN_X, &x));
  if (!ol_quant_float_bytes(x->dtype))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input 'X' must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got %s)",
                           ol_dtype_name(x->dtype));
  if (k->ort_format != OL_QUANT_FORMAT_COUNT) return quantize_ort(k, ctx, x);
  uint64_t count = (uint64_t)ol_tcount(x);
  ol_quant_plan *plan = NULL;
  ol_status s = ol_quant_plan_from_type(k->type, k->model, count, &plan);
  if (s != OL_OK) return ol_error_wrap(s, "%s node '%s': attribute 'type'", node->op_type, node->name);
  s = apply_inputs(node, ctx, plan);
  if (s == OL_OK && !ol_ctx_input(ctx, IN_SCALES)) {
    double *values = count <= SIZE_MAX / sizeof(double) ? ol_xmalloc(count ? (size_t)count * sizeof(double) : 1) : NULL;
    s = values ? ol_quant_read_floats(x->dtype, ol_tdata(x), count, values) : OL_OUT_OF_MEMORY;
    if (s == OL_OK) s = ol_quant_calibrate(plan, values, count);
    free(values);
    if (s != OL_OK && s != OL_OUT_OF_MEMORY) s = ol_error_wrap(s, "calibration");
  }
  Onnx__EncodedValueProto *ev = NULL;
  if (s == OL_OK)
    s = ol_quant_encode_proto(plan, x->dtype, ol_tdata(x), x->rank, x->dims,
                              node->num_inputs ? node->inputs[IN_X] : NULL, &ev);
  ol_quant_plan_destroy(plan);
  if (s != OL_OK) return s == OL_OUT_OF_MEMORY ? s : node_wrap(node, s);
  ol_value *v;
  OL_TRY(ol_value_new_encoded(ev, encoded_free, &v));
  return ol_ctx_set_output(ctx, 0, v);
}

/* Follows type_ref through the catalogue (unknown references fail when the
 * kernel is created; the codec resolves again when encoding). */
static ol_status resolve_type(const ol_node *node, const Onnx__StructTypeProto *type,
                              const Onnx__ModelProto *model, const Onnx__StructTypeProto **root) {
  for (int depth = 0; depth < 64; depth++) {
    if (type->kind_case != ONNX__STRUCT_TYPE_PROTO__KIND_TYPE_REF) {
      *root = type;
      return OL_OK;
    }
    const Onnx__StructTypeProto *found = NULL;
    for (size_t i = 0; model && i < model->n_struct_types && !found; i++)
      if (model->struct_types[i]->has_type_id && model->struct_types[i]->type_id == type->type_ref)
        found = model->struct_types[i];
    if (!found)
      return ol_kernel_error(node, OL_INVALID_MODEL,
                             "attribute 'type' refers to struct_type.type_ref %llu, which is not "
                             "declared in the model's struct_types",
                             (unsigned long long)type->type_ref);
    type = found;
  }
  return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'type': type_ref nesting exceeds 64");
}

static ol_status quantize_create(const ol_node *node, ol_kernel **out) {
  const ol_attr *a = ol_node_attr(node, "type");
  if (!a)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "required attribute 'type' (TYPE_PROTO wrapping the destination "
                           "StructTypeProto) is missing");
  const Onnx__AttributeProto *ap = a->proto;
  if (a->type != OL_ATTR_TYPE_PROTO || !ap || !ap->tp ||
      ap->tp->value_case != ONNX__TYPE_PROTO__VALUE_STRUCT_TYPE || !ap->tp->struct_type)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'type' must be a TYPE_PROTO holding a struct_type (the "
                           "destination StructTypeProto, inline or a type_ref)");
  if (ol_node_attr(node, "parameter_ref"))
    return ol_kernel_error(node, OL_NOT_IMPLEMENTED,
                           "attribute 'parameter_ref' ('%s'): shared quantization parameter sets "
                           "are not implemented yet",
                           ol_attr_string(node, "parameter_ref", ""));
  const Onnx__ModelProto *model = node_model(node);
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(resolve_type(node, ap->tp->struct_type, model, &root));
  ol_quant_format format = OL_QUANT_FORMAT_COUNT;
  const size_t prefix = strlen(OL_QUANT_WIRE_PREFIX);
  if (root->name && strncmp(root->name, OL_QUANT_WIRE_PREFIX, prefix) == 0 &&
      ol_quant_format_parse(root->name + prefix, &format) == OL_OK &&
      ol_quant_profile_info(format)->ort) {
    /* ORT MatMulNBits destination: block size from the descriptor's
     * parameters constant [bits, block_size] (fully checked after encoding) */
    const Onnx__StructTypeProto__Structure__Field *f =
        root->kind_case == ONNX__STRUCT_TYPE_PROTO__KIND_STRUCTURE && root->structure &&
                root->structure->n_field
            ? root->structure->field[0] : NULL;
    const Onnx__TensorProto *c =
        f && f->content_case == ONNX__STRUCT_TYPE_PROTO__STRUCTURE__FIELD__CONTENT_CONSTANT ? f->constant : NULL;
    if (!c || c->n_int64_data != 2 || c->int64_data[1] <= 0)
      return ol_kernel_error(node, OL_INVALID_MODEL,
                             "attribute 'type': invalid ORT MatMulNBits descriptor '%s' (expected a "
                             "parameters constant [bits, block_size])", root->name);
    ol_kernel *kernel;
    OL_TRY(ol_kernel_alloc(node, sizeof(quantize_kernel), quantize_compute, &kernel));
    quantize_kernel *k = (quantize_kernel *)kernel;
    k->type = ap->tp->struct_type;
    k->root = root;
    k->model = model;
    k->ort_format = format;
    k->ort_block_size = (uint64_t)c->int64_data[1];
    *out = kernel;
    return OL_OK;
  }
  ol_kernel *kernel;
  OL_TRY(ol_kernel_alloc(node, sizeof(quantize_kernel), quantize_compute, &kernel));
  quantize_kernel *k = (quantize_kernel *)kernel;
  k->type = ap->tp->struct_type;
  k->root = root;
  k->model = model;
  k->ort_format = OL_QUANT_FORMAT_COUNT;
  *out = kernel;
  return OL_OK;
}

/* ------------------------------------------------------------ Dequantize */

typedef struct dequantize_kernel {
  ol_kernel base;
  ol_dtype dtype;
  const Onnx__ModelProto *model; /* may be NULL */
} dequantize_kernel;

static ol_status dequantize_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  dequantize_kernel *k = (dequantize_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_value *x = ctx->num_inputs ? ctx->inputs[0] : NULL;
  if (!x) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "required input 'X' is missing");
  if (x->kind != OL_VALUE_ENCODED || !x->encoded)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "input 'X' ('%s') must be an encoded value (a Quantize output or an "
                           "encoded initializer)", node->inputs[0]);
  ol_quant_decoded decoded;
  ol_status s = ol_quant_decode_proto((const Onnx__EncodedValueProto *)x->encoded, k->model, &decoded, NULL);
  if (s != OL_OK) return s == OL_OUT_OF_MEMORY ? s : node_wrap(node, s);
  /* the output is published only once the conversion succeeded */
  ol_value *y = NULL;
  s = ol_value_new_tensor(ctx->allocator, k->dtype, decoded.rank, decoded.dims, &y);
  if (s == OL_OK) {
    s = ol_quant_write_floats(k->dtype, decoded.values, decoded.count, ol_tdata(&y->tensor));
    if (s != OL_OK && s != OL_OUT_OF_MEMORY)
      s = ol_error_wrap(s, "%s node '%s': result does not fit %s", node->op_type, node->name,
                        ol_dtype_name(k->dtype));
  }
  ol_quant_decoded_clear(&decoded);
  if (s != OL_OK) {
    ol_value_release(y);
    return s;
  }
  return ol_ctx_set_output(ctx, 0, y);
}

static ol_status dequantize_create(const ol_node *node, ol_kernel **out) {
  const ol_attr *a = ol_node_attr(node, "dtype");
  if (!a || a->type != OL_ATTR_INT)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "required integer attribute 'dtype' (FLOAT, DOUBLE, FLOAT16 or "
                           "BFLOAT16) is %s", a ? "not an INT" : "missing");
  ol_dtype dtype = (ol_dtype)a->i;
  if (a->i < 0 || a->i > 0xffff || !ol_quant_float_bytes(dtype))
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'dtype' must be FLOAT (1), DOUBLE (11), FLOAT16 (10) or "
                           "BFLOAT16 (16), got %lld", (long long)a->i);
  ol_kernel *kernel;
  OL_TRY(ol_kernel_alloc(node, sizeof(dequantize_kernel), dequantize_compute, &kernel));
  dequantize_kernel *k = (dequantize_kernel *)kernel;
  k->dtype = dtype;
  k->model = node_model(node);
  *out = kernel;
  return OL_OK;
}

const ol_op_registration ol_ops_quantize_rt[] = {
    {"ai.rt", "Quantize", 1, 1, quantize_create, "float32 float64 float16 bfloat16 -> encoded"},
    {"ai.rt", "Dequantize", 1, 1, dequantize_create, "encoded -> float32 float64 float16 bfloat16"},
    {0},
};
