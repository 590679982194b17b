/* In-place views of affine encoded weights (see affine_view.h). */
#include "quant/affine_view.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "quant/plan.h"
#include "quant/wire.h"
#include "quant/wire_proto.h"

static double le_f64(const uint8_t *p) {
  uint64_t u = 0;
  for (int i = 0; i < 8; i++) u |= (uint64_t)p[i] << (8 * i);
  double d;
  memcpy(&d, &u, 8);
  return d;
}

/* The decoder's checks of one block's parameters and padding, plus: every
 * code of the range reconstructs a finite float (monotonic in the code, so
 * the two ends decide). */
static bool block_ok(const ol_quant_layout *l, const uint8_t *blk, uint64_t code_bytes) {
  double scale = le_f64(blk), zp = le_f64(blk + 8), offset = le_f64(blk + 16);
  double lo = l->signed_codes ? -ldexp(1.0, (int)l->bits - 1) : 0, hi = lo + ldexp(1.0, (int)l->bits) - 1;
  if (!isfinite(scale) || !(scale > 0) || !isfinite(zp) || !isfinite(offset) || trunc(zp) != zp || zp < lo ||
      zp > hi)
    return false;
  for (int end = 0; end < 2; end++) {
    double v = ((end ? hi : lo) - zp) * scale + offset;
    if (!isfinite(v) || !isfinite((float)v)) return false;
  }
  /* 4-bit codes of an odd count leave a high nibble that must be zero */
  return l->bits != 4 || !(l->count & 1) || (blk[OL_QAFFINE_PARAM_BYTES + code_bytes - 1] >> 4) == 0;
}

/* Fills view->runs from the checked shape; false when the payload does not
 * match it exactly. */
static bool layout_runs(const ol_quant_plan *shape, const uint8_t *raw, size_t size, uint64_t total,
                        ol_quant_affine_view *view, const char **reason) {
  uint64_t covered = 0, offset = 1;
  for (size_t r = 0; r < shape->run_count; r++) {
    const ol_quant_run *run = &shape->runs[r];
    const ol_quant_layout *l = &run->layout;
    if (l->method != OL_QUANT_AFFINE || (l->bits != 4 && l->bits != 8) || l->base3) {
      *reason = "not an affine layout with 4- or 8-bit codes";
      return false;
    }
    if (!ol_quant_float_bytes(l->cast_type) || !ol_quant_layout_sizes_fit(l) || l->count == 0 ||
        run->block_count == 0 || run->block_count > (total - covered) / l->count) {
      *reason = "invalid block run";
      return false;
    }
    uint64_t code_bytes = ol_quant_layout_code_bytes(l), stride = OL_QAFFINE_PARAM_BYTES + code_bytes;
    if (offset > size || run->block_count > (size - offset) / stride) {
      *reason = "payload size does not match the descriptor";
      return false;
    }
    for (size_t b = 0; b < run->block_count; b++)
      if (!block_ok(l, raw + offset + b * stride, code_bytes)) {
        *reason = "a block's parameters or padding are invalid, or its range overflows FLOAT";
        return false;
      }
    view->runs[r] = (ol_qaffine_run){(int64_t)covered, (int64_t)run->block_count, (int64_t)l->count,
                                     (int64_t)stride, raw + offset, (int)l->bits, l->signed_codes};
    covered += (uint64_t)l->count * run->block_count;
    offset += stride * run->block_count;
  }
  if (covered != total || offset != size) {
    *reason = "blocks do not cover the tensor or the payload exactly";
    return false;
  }
  return true;
}

ol_status ol_quant_affine_view_make(const Onnx__EncodedValueProto *value, const ol_type_catalogue *types,
                                    ol_quant_affine_view *view, bool *eligible, const char **reason) {
  memset(view, 0, sizeof *view);
  *eligible = false;
  *reason = NULL;
  const Onnx__StructTypeProto *root = NULL;
  const size_t prefix = strlen(OL_QUANT_WIRE_PREFIX);
  ol_quant_format format;
  if (value->parameter_ref && value->parameter_ref[0]) *reason = "refers to a shared parameter set";
  else if (value->layout_case != ONNX__ENCODED_VALUE_PROTO__LAYOUT_STRUCT_TYPE || !value->struct_type)
    *reason = "not a structured layout";
  else if (ol_quant_payload_unloaded(value) || !value->has_raw_data || !value->raw_data.len)
    *reason = "payload not loaded";
  else if (ol_type_catalogue_resolve(types, value->struct_type, &root) != OL_OK || !root->name ||
           strncmp(root->name, OL_QUANT_WIRE_PREFIX, prefix) != 0 ||
           ol_quant_format_parse(root->name + prefix, &format) != OL_OK)
    *reason = "not a portable quantization layout";
  else if (ol_quant_profile_info(format)->ort)
    *reason = "ORT MatMulNBits layout";
  if (*reason) return OL_OK;
  ol_quant_decoded logical;
  memset(&logical, 0, sizeof logical);
  if (ol_qw_logical_tensor(value, &logical) != OL_OK || logical.dtype != OL_DTYPE_FLOAT || logical.rank != 2 ||
      logical.dims[0] <= 0 || logical.dims[1] <= 0) {
    *reason = "logical type is not a nonempty FLOAT matrix";
    return OL_OK;
  }
  ol_quant_plan *shape;
  OL_TRY(ol_quant_plan_new(&shape));
  shape->format = format;
  ol_status s = ol_quant_descriptor_shape(root, logical.count, shape);
  if (s == OL_OUT_OF_MEMORY) {
    ol_quant_plan_destroy(shape);
    return s;
  }
  if (s != OL_OK) *reason = "descriptor does not follow the versioned schema";
  else if (shape->permutation_size || shape->transform_size || shape->outlier_count)
    *reason = "uses a permutation, transform or outliers";
  else if (value->raw_data.data[0] != 0)
    *reason = "nonzero reserved byte";
  if (!*reason) {
    view->runs = ol_xcalloc(shape->run_count ? shape->run_count : 1, sizeof *view->runs);
    if (!view->runs) {
      ol_quant_plan_destroy(shape);
      return OL_OUT_OF_MEMORY;
    }
    *eligible = layout_runs(shape, value->raw_data.data, value->raw_data.len, logical.count, view, reason);
    view->weight = (ol_qaffine){logical.dims[0], logical.dims[1], shape->run_count, view->runs};
  }
  ol_quant_plan_destroy(shape);
  if (!*eligible) ol_quant_affine_view_clear(view);
  return OL_OK;
}

void ol_quant_affine_view_clear(ol_quant_affine_view *view) {
  if (!view) return;
  free(view->runs);
  memset(view, 0, sizeof *view);
}
