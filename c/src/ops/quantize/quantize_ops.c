/* onnx-light quantization operators, domain "ai.rt" opset 1 (seed 003,
 * "Graph operators"; wire-facts §2.1-2.2). Not ONNX QuantizeLinear /
 * DequantizeLinear (those are quantize_linear.c).
 *
 *   Quantize(X, scales?, zero_points?, offsets?, codebooks?, permutation?,
 *            forward?, inverse?, outliers?) -> Y (encoded)
 *     attribute `type` (TYPE_PROTO, required): a TypeProto wrapping the
 *     destination StructTypeProto, inline or a struct_type.type_ref resolved
 *     through ModelProto.struct_types. Optional `parameter_ref` selects a
 *     shared parameter set the model declares (quant/shared.h): `type` must
 *     be its storage type, the optional inputs must be absent or empty, and Y
 *     is a compact value retaining the set. Otherwise Y is an
 *     OL_VALUE_ENCODED value owning a self-contained
 *     Onnx__EncodedValueProto (inline descriptor) with X's logical shape and
 *     dtype. When `scales` is omitted every block is calibrated from the
 *     actual input (ol_quant_calibrate_values); default zero points are 0 for signed
 *     and 2^(bits-1) for unsigned affine codes, offsets 0, fixed tables from
 *     the catalogue (ol_quant_plan_declared). ORT MatMulNBits destinations
 *     (the struct_type of an existing ORT value) take a [K, N] X, per-block
 *     scales/zero points or column/K-group calibration, and must match the
 *     result's matrix dimensions, scale dtype and zero-point storage.
 *   Dequantize(X) -> Y
 *     attribute `dtype` (INT, required): FLOAT, DOUBLE, FLOAT16 or BFLOAT16.
 *     Decodes portable and ORT MatMulNBits layouts and compact values (with
 *     the set the value retains, else the model's); nonfinite results and
 *     overflow of dtype are errors.
 *
 * Both kernels resolve what they need from the model holding the node when
 * they are created: Quantize decodes its destination into a declared plan
 * (or an ORT layout), Dequantize keeps the model's struct type catalogue
 * (for values whose struct_type is a type_ref) and shared parameter sets.
 * Kernels built on a bare node (no graph) only accept inline descriptors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/status.h"
#include "ir/model.h"
#include "ops/kernel.h"
#include "ops/quantize/quantize.h"
#include "quant/codec.h"
#include "quant/inputs.h"
#include "quant/shared.h"
#include "quant/wire.h"
#include "quant/wire_proto.h"

#define IN_X OL_QUANT_IN_X
#define IN_SCALES OL_QUANT_IN_SCALES
#define IN_ZERO_POINTS OL_QUANT_IN_ZERO_POINTS
#define IN_OFFSETS OL_QUANT_IN_OFFSETS
#define IN_COUNT OL_QUANT_IN_COUNT
#define input_names ol_quant_input_names

static const ol_model_data *node_model(const ol_node *node) {
  return node->graph ? node->graph->model : NULL;
}

static ol_status node_wrap(const ol_node *node, ol_status s) {
  return ol_error_wrap(s, "%s node '%s'", node->op_type, node->name);
}

static void encoded_free(void *payload) { ol_quant_proto_free((Onnx__EncodedValueProto *)payload); }

/* ------------------------------------------------------------ Quantize */

typedef struct quantize_kernel {
  ol_kernel base;
  ol_quant_plan *declared;     /* portable destinations: the plan `type` declares */
  ol_quant_format ort_format;  /* an ORT MatMulNBits destination, else FORMAT_COUNT */
  uint64_t ort_block_size;
  uint8_t *ort_type;           /* its descriptor, serialized without type_id */
  size_t ort_type_size;
  char *ort_name;
  ol_quant_shared_set *shared; /* parameter_ref: the retained set, else NULL */
} quantize_kernel;

/* A shared parameter set's compact value as the node's output; the value
 * retains the set so it outlives the model, session and context. */
static ol_status set_shared_output(ol_kernel_ctx *ctx, ol_quant_shared_set *set,
                                   Onnx__EncodedValueProto *ev) {
  ol_value *v;
  OL_TRY(ol_value_new_encoded(ev, encoded_free, &v));
  ol_quant_shared_attach(v, set);
  return ol_ctx_set_output(ctx, 0, v);
}

/* The node's tensor inputs (NULL = absent), in ol_quant_input order. */
static void gather_inputs(ol_kernel_ctx *ctx, const ol_tensor *inputs[OL_QUANT_IN_COUNT]) {
  for (size_t i = 0; i < OL_QUANT_IN_COUNT; i++) inputs[i] = ol_ctx_input(ctx, i);
}

static ol_status apply_per_block(const ol_node *node, ol_quant_plan *plan, const ol_tensor *t,
                                 ol_quant_input input, size_t blocks) {
  ol_status s = ol_quant_apply_per_block(plan, t, input, blocks);
  return s == OL_OK || s == OL_OUT_OF_MEMORY ? s : node_wrap(node, s);
}

/* Applies the optional inputs to the plan the descriptor gave. */
static ol_status apply_inputs(const ol_node *node, ol_kernel_ctx *ctx, ol_quant_plan *plan) {
  const ol_tensor *inputs[OL_QUANT_IN_COUNT];
  gather_inputs(ctx, inputs);
  ol_status s = ol_quant_apply_inputs(plan, inputs);
  return s == OL_OK || s == OL_OUT_OF_MEMORY ? s : node_wrap(node, s);
}

/* Per-block calibration from X (ol_quant_calibrate_values: the portable
 * rule, or per column and K group for ORT layouts), X's values read into
 * scratch from alloc. */
static ol_status calibrate(ol_allocator *alloc, ol_quant_plan *plan, const ol_tensor *x) {
  uint64_t count = (uint64_t)ol_tcount(x);
  double *values = count <= SIZE_MAX / sizeof(double) ? ol_alloc(alloc, count ? (size_t)count * sizeof(double) : 1)
                                                       : NULL;
  ol_status s = values ? ol_quant_read_floats(x->dtype, ol_tdata(x), count, values) : OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = ol_quant_calibrate_values(plan, values, count);
  ol_dealloc(alloc, values);
  return s == OL_OK || s == OL_OUT_OF_MEMORY ? s : ol_error_wrap(s, "calibration");
}

/* Quantize into an ORT MatMulNBits layout: X is [K, N]; blocks run column
 * first, then K group (padding rows excluded). Scales and zero points are
 * per-block inputs or calibrated (zero point 2^(bits-1), scale from the
 * largest positive/negative ratio to the code range); the encoder rounds them
 * to X's dtype. The result's descriptor must equal the destination (matrix
 * dimensions, scale dtype, zero-point storage). */
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
  const ol_tensor *t;
  if ((t = ol_ctx_input(ctx, IN_ZERO_POINTS))) s = apply_per_block(node, plan, t, IN_ZERO_POINTS, run->block_count);
  if (s == OL_OK && (t = ol_ctx_input(ctx, IN_SCALES)))
    s = apply_per_block(node, plan, t, IN_SCALES, run->block_count);
  else if (s == OL_OK && (s = calibrate(ctx->allocator, plan, x)) != OL_OK && s != OL_OUT_OF_MEMORY)
    s = node_wrap(node, s);
  Onnx__EncodedValueProto *ev = NULL;
  if (s == OL_OK) {
    s = ol_quant_encode_proto(plan, x->dtype, ol_tdata(x), x->rank, x->dims,
                              node->num_inputs ? node->inputs[IN_X] : NULL, &ev);
    if (s != OL_OK && s != OL_OUT_OF_MEMORY) s = node_wrap(node, s);
  }
  ol_quant_plan_destroy(plan);
  if (s != OL_OK) return s;
  size_t size = 0;
  uint8_t *bytes = ol_qw_pack_without_id(ev->struct_type, &size);
  bool oom = !bytes, same = !oom && size == k->ort_type_size && memcmp(bytes, k->ort_type, size) == 0;
  free(bytes);
  if (!same) {
    ol_quant_proto_free(ev);
    if (oom) return OL_OUT_OF_MEMORY;
    return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                           "the ORT MatMulNBits result for a [%lld, %lld] %s input does not match the "
                           "destination type '%s' (matrix dimensions, scale dtype and zero-point "
                           "storage must agree)", (long long)kk, (long long)n,
                           ol_dtype_name(x->dtype), k->ort_name);
  }
  ol_value *out;
  OL_TRY(ol_value_new_encoded(ev, encoded_free, &out));
  return ol_ctx_set_output(ctx, 0, out);
}

/* parameter_ref: the set's fixed parameters (never recalibrated; values
 * outside its range saturate) and a compact output. */
static ol_status quantize_shared(quantize_kernel *k, ol_kernel_ctx *ctx, const ol_tensor *x) {
  const ol_node *node = ctx->node;
  for (size_t i = IN_SCALES; i < IN_COUNT; i++) {
    const ol_tensor *t = ol_ctx_input(ctx, i);
    if (t && ol_tcount(t))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "attribute 'parameter_ref' ('%s') cannot be combined with the nonempty "
                             "input '%s': a shared parameter set is not overridden",
                             k->shared->name, input_names[i]);
  }
  Onnx__EncodedValueProto *ev = NULL;
  ol_status s = ol_quant_shared_encode(k->shared, x->dtype, ol_tdata(x), x->rank, x->dims,
                                       node->num_inputs ? node->inputs[IN_X] : NULL, &ev);
  if (s != OL_OK) return s == OL_OUT_OF_MEMORY ? s : node_wrap(node, s);
  return set_shared_output(ctx, k->shared, ev);
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
  if (k->shared) return quantize_shared(k, ctx, x);
  ol_quant_plan *plan = NULL;
  ol_status s = ol_quant_plan_fits(k->declared, (uint64_t)ol_tcount(x));
  if (s != OL_OK) return ol_error_wrap(s, "%s node '%s': attribute 'type'", node->op_type, node->name);
  OL_TRY(ol_quant_plan_clone(k->declared, &plan));
  s = apply_inputs(node, ctx, plan);
  if (s == OL_OK && !ol_ctx_input(ctx, IN_SCALES)) s = calibrate(ctx->allocator, plan, x);
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

/* The destination `type` resolved through the model's struct types. */
static ol_status resolve_type(const ol_node *node, const Onnx__StructTypeProto *type,
                              const Onnx__StructTypeProto **root) {
  const ol_model_data *md = node_model(node);
  ol_status s = ol_type_catalogue_resolve(md ? md->types : NULL, type, root);
  return s == OL_OK ? OL_OK
                    : ol_error_wrap(OL_INVALID_MODEL, "%s node '%s': attribute 'type'", node->op_type, node->name);
}

static void quantize_destroy(ol_kernel *kernel) {
  quantize_kernel *k = (quantize_kernel *)kernel;
  ol_quant_shared_release(k->shared);
  ol_quant_plan_destroy(k->declared);
  free(k->ort_type);
  free(k->ort_name);
  free(kernel);
}

/* Quantize with parameter_ref: the set must be declared by the model holding
 * the node and `type` must be its storage descriptor. */
static ol_status quantize_create_shared(const ol_node *node, const ol_attr *ref,
                                        const Onnx__StructTypeProto *type, ol_kernel **out) {
  if (ref->type != OL_ATTR_STRING)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'parameter_ref' must be a STRING");
  const ol_model_data *md = node->graph ? node->graph->model : NULL;
  ol_quant_shared_set *set = md ? ol_quant_catalogue_find(md->quant_params, ref->s) : NULL;
  if (!set)
    return ol_kernel_error(node, OL_INVALID_MODEL,
                           "attribute 'parameter_ref' names the quantization parameter set '%s', "
                           "which the model does not declare", ref->s);
  ol_status s = ol_quant_shared_check_storage(set, type, md->types);
  if (s != OL_OK)
    return s == OL_OUT_OF_MEMORY ? s : ol_error_wrap(OL_INVALID_MODEL, "%s node '%s': attribute 'type'",
                                                     node->op_type, node->name);
  ol_kernel *kernel;
  OL_TRY(ol_kernel_alloc(node, sizeof(quantize_kernel), quantize_compute, &kernel));
  quantize_kernel *k = (quantize_kernel *)kernel;
  k->ort_format = OL_QUANT_FORMAT_COUNT;
  k->shared = ol_quant_shared_retain(set);
  kernel->destroy = quantize_destroy;
  *out = kernel;
  return OL_OK;
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
  const ol_attr *ref = ol_node_attr(node, "parameter_ref");
  if (ref) return quantize_create_shared(node, ref, ap->tp->struct_type, out);
  const Onnx__StructTypeProto *root = NULL;
  OL_TRY(resolve_type(node, ap->tp->struct_type, &root));
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
    kernel->destroy = quantize_destroy;
    k->ort_format = format;
    k->ort_block_size = (uint64_t)c->int64_data[1];
    k->ort_type = ol_qw_pack_without_id(root, &k->ort_type_size);
    k->ort_name = ol_strdup(root->name);
    if (!k->ort_type || !k->ort_name) {
      quantize_destroy(kernel);
      return OL_OUT_OF_MEMORY;
    }
    *out = kernel;
    return OL_OK;
  }
  ol_quant_plan *declared = NULL;
  ol_status s = ol_quant_plan_declared(root, NULL, &declared);
  if (s != OL_OK)
    return s == OL_OUT_OF_MEMORY ? s : ol_error_wrap(s, "%s node '%s': attribute 'type'", node->op_type, node->name);
  ol_kernel *kernel;
  s = ol_kernel_alloc(node, sizeof(quantize_kernel), quantize_compute, &kernel);
  if (s != OL_OK) {
    ol_quant_plan_destroy(declared);
    return s;
  }
  quantize_kernel *k = (quantize_kernel *)kernel;
  kernel->destroy = quantize_destroy;
  k->declared = declared;
  k->ort_format = OL_QUANT_FORMAT_COUNT;
  *out = kernel;
  return OL_OK;
}

/* ------------------------------------------------------------ Dequantize */

typedef struct dequantize_kernel {
  ol_kernel base;
  ol_dtype dtype;
  const ol_type_catalogue *types; /* the model's (outlives the kernel), or NULL */
  ol_quant_catalogue *params;     /* the model's shared parameter sets (retained), or NULL */
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
  const Onnx__EncodedValueProto *ev = x->encoded;
  ol_quant_decoded decoded;
  ol_status s;
  if (ev->parameter_ref && ev->parameter_ref[0]) {
    /* compact: the value's retained set, else the node's model catalogue */
    const ol_quant_shared_set *set = ol_quant_shared_of(x);
    if (!set || strcmp(set->name, ev->parameter_ref) != 0) set = ol_quant_catalogue_find(k->params, ev->parameter_ref);
    if (!set)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "input 'X' ('%s') refers to the quantization parameter set '%s', which "
                             "neither the value nor the model provides", node->inputs[0],
                             ev->parameter_ref);
    s = ol_quant_shared_decode(set, ev, k->types, &decoded);
  } else {
    s = ol_quant_decode_proto(ev, k->types, &decoded, NULL);
  }
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

static void dequantize_destroy(ol_kernel *kernel) {
  ol_quant_catalogue_release(((dequantize_kernel *)kernel)->params);
  free(kernel);
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
  kernel->destroy = dequantize_destroy;
  k->dtype = dtype;
  const ol_model_data *md = node_model(node);
  k->types = md ? md->types : NULL;
  k->params = md ? ol_quant_catalogue_retain(md->quant_params) : NULL;
  *out = kernel;
  return OL_OK;
}

const ol_op_schema ol_schema_quantize_rt[] = {
    {"ai.rt", "Quantize", 1, 1, quantize_create, ol_infer_quantize, "float32 float64 float16 bfloat16 -> encoded"},
    {"ai.rt", "Dequantize", 1, 1, dequantize_create, ol_infer_dequantize, "encoded -> float32 float64 float16 bfloat16",
     .structured_inputs = 1},
    {0},
};
