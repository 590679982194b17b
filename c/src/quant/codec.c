/* Portable quantization codecs (see codec.h for the payload layout). */
#include "quant/codec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "quant/ort.h"

#define INVALID(...) ol_error(OL_INVALID_ARGUMENT, __VA_ARGS__)

/* ============================================================ byte streams */

typedef struct byte_stream {
  uint8_t *out;      /* writer */
  const uint8_t *in; /* reader */
  size_t size, pos;
} byte_stream;

static ol_status put(byte_stream *w, uint64_t value, size_t width) {
  if (w->pos > w->size || width > w->size - w->pos)
    return ol_error(OL_INTERNAL, "Quantization payload size exceeded");
  for (size_t i = 0; i < width; i++) w->out[w->pos++] = (uint8_t)(value >> (8 * i));
  return OL_OK;
}

static ol_status put_double(byte_stream *w, double value) {
  uint64_t bits;
  memcpy(&bits, &value, 8);
  return put(w, bits, 8);
}

static ol_status get(byte_stream *r, size_t width, uint64_t *value) {
  *value = 0;
  if (r->pos > r->size || width > r->size - r->pos)
    return INVALID("Truncated quantization payload (%zu bytes, need %zu more at offset %zu)",
                   r->size, width, r->pos);
  uint64_t v = 0;
  for (size_t i = 0; i < width; i++) v |= (uint64_t)r->in[r->pos++] << (8 * i);
  *value = v;
  return OL_OK;
}

static ol_status get_double(byte_stream *r, double *value) {
  uint64_t bits = 0;
  OL_TRY(get(r, 8, &bits));
  memcpy(value, &bits, 8);
  return OL_OK;
}

/* ============================================================ packing */

/* Binary codes LSB-first with zero high padding, or base-3 (5 trits/byte). */
static ol_status pack_codes(byte_stream *w, const uint32_t *codes, uint64_t count, uint32_t bits,
                            bool base3) {
  if (base3) {
    for (uint64_t i = 0; i < count; i += 5) {
      uint32_t value = 0, multiplier = 1;
      for (uint64_t j = i; j < count && j < i + 5; j++, multiplier *= 3) value += multiplier * codes[j];
      OL_TRY(put(w, value, 1));
    }
    return OL_OK;
  }
  uint64_t buffer = 0;
  uint32_t available = 0;
  for (uint64_t i = 0; i < count; i++) {
    buffer |= (uint64_t)codes[i] << available;
    available += bits;
    while (available >= 8) {
      OL_TRY(put(w, buffer & 255, 1));
      buffer >>= 8;
      available -= 8;
    }
  }
  return available ? put(w, buffer, 1) : OL_OK;
}

static ol_status unpack_codes(byte_stream *r, uint64_t count, uint32_t bits, bool base3,
                              uint32_t *codes) {
  if (base3) {
    for (uint64_t i = 0; i < count; i += 5) {
      uint64_t byte = 0;
      OL_TRY(get(r, 1, &byte));
      uint32_t value = (uint32_t)byte;
      if (value >= 243) return INVALID("Invalid base-3 byte %u in quantization codes", value);
      for (uint64_t j = i; j < count && j < i + 5; j++) {
        codes[j] = value % 3;
        value /= 3;
      }
      if (value != 0) return INVALID("Nonzero base-3 padding in quantization codes");
    }
    return OL_OK;
  }
  uint64_t buffer = 0;
  uint32_t available = 0;
  for (uint64_t i = 0; i < count; i++) {
    while (available < bits) {
      uint64_t byte = 0;
      OL_TRY(get(r, 1, &byte));
      buffer |= byte << available;
      available += 8;
    }
    codes[i] = (uint32_t)(buffer & ((1ull << bits) - 1));
    buffer >>= bits;
    available -= bits;
  }
  if (buffer != 0) return INVALID("Nonzero quantization code padding bits");
  return OL_OK;
}

/* ============================================================ floats */

double ol_quant_round_half_even(double value) {
  double low = floor(value);
  double fraction = value - low;
  if (fraction < 0.5) return low;
  if (fraction > 0.5) return low + 1;
  return floor(low * 0.5) * 2 == low ? low : low + 1;
}

ol_status ol_quant_read_floats(ol_dtype dtype, const void *data, uint64_t count, double *out) {
  const uint8_t *p = data;
  size_t width = ol_quant_float_bytes(dtype);
  if (!width)
    return INVALID("Quantization requires FLOAT, DOUBLE, FLOAT16 or BFLOAT16 (got %s)",
                   ol_dtype_valid(dtype) ? ol_dtype_info(dtype)->onnx_name : "invalid");
  for (uint64_t i = 0; i < count; i++, p += width) {
    if (dtype == OL_DTYPE_DOUBLE) {
      memcpy(&out[i], p, 8);
    } else if (dtype == OL_DTYPE_FLOAT) {
      float f;
      memcpy(&f, p, 4);
      out[i] = f;
    } else {
      uint16_t h;
      memcpy(&h, p, 2);
      out[i] = dtype == OL_DTYPE_FLOAT16 ? ol_f16_to_f32(h) : ol_bf16_to_f32(h);
    }
  }
  return OL_OK;
}

/* Narrows one value to dtype at p; rejects nonfinite values and overflow. */
static ol_status store_float(ol_dtype dtype, double value, uint8_t *p) {
  if (!isfinite(value)) return INVALID("Dequantization produced a nonfinite value");
  if (dtype == OL_DTYPE_DOUBLE) {
    memcpy(p, &value, 8);
    return OL_OK;
  }
  float f = (float)value;
  if (!isfinite(f)) return INVALID("Dequantization output dtype overflow (%g to FLOAT)", value);
  if (dtype == OL_DTYPE_FLOAT) {
    memcpy(p, &f, 4);
    return OL_OK;
  }
  uint16_t bits = dtype == OL_DTYPE_FLOAT16 ? ol_f32_to_f16(f) : ol_f32_to_bf16(f);
  float back = dtype == OL_DTYPE_FLOAT16 ? ol_f16_to_f32(bits) : ol_bf16_to_f32(bits);
  if (!isfinite(back))
    return INVALID("Dequantization output dtype overflow (%g to %s)", value,
                   dtype == OL_DTYPE_FLOAT16 ? "FLOAT16" : "BFLOAT16");
  memcpy(p, &bits, 2);
  return OL_OK;
}

ol_status ol_quant_write_floats(ol_dtype dtype, const double *values, uint64_t count, void *out) {
  size_t width = ol_quant_float_bytes(dtype);
  if (!width) return INVALID("Dequantization requires FLOAT, DOUBLE, FLOAT16 or BFLOAT16 output");
  uint8_t *p = out;
  for (uint64_t i = 0; i < count; i++, p += width) {
    ol_status s = store_float(dtype, values[i], p);
    if (s != OL_OK) return ol_error_wrap(s, "element %llu", (unsigned long long)i);
  }
  return OL_OK;
}

/* ============================================================ pipeline steps */

/* values[row] <- values[row] x matrix for consecutive row vectors of n. */
static ol_status transform(double *values, uint64_t count, const double *matrix, uint64_t n) {
  if (n == 0) return OL_OK;
  double *row = ol_xmalloc((size_t)n * sizeof(double));
  if (!row) return OL_OUT_OF_MEMORY;
  for (uint64_t offset = 0; offset < count; offset += n) {
    for (uint64_t j = 0; j < n; j++) {
      double sum = 0;
      for (uint64_t k = 0; k < n; k++) sum += values[offset + k] * matrix[k * n + j];
      if (!isfinite(sum)) {
        free(row);
        return INVALID("Quantization transform overflow");
      }
      row[j] = sum;
    }
    memcpy(values + offset, row, (size_t)n * sizeof(double));
  }
  free(row);
  return OL_OK;
}

/* Encoder steps 1-3 on a copy: finite check, outliers saved and zeroed,
 * permutation gathered, forward transform. *exceptions gets the outliers. */
static ol_status prepare(const ol_quant_plan *plan, const double *values, uint64_t count,
                         double **work_out, double **exceptions_out) {
  *work_out = *exceptions_out = NULL;
  double *work = ol_xmalloc(count ? (size_t)count * sizeof(double) : 1);
  double *exceptions = ol_xmalloc(plan->outlier_count ? plan->outlier_count * sizeof(double) : 1);
  double *gathered = plan->permutation_size ? ol_xmalloc((size_t)count * sizeof(double)) : NULL;
  ol_status s = (!work || !exceptions || (plan->permutation_size && !gathered)) ? OL_OUT_OF_MEMORY
                                                                                  : OL_OK;
  for (uint64_t i = 0; s == OL_OK && i < count; i++) {
    if (!isfinite(values[i]))
      s = INVALID("Quantization input must be finite (element %llu is %g)", (unsigned long long)i,
                  values[i]);
    else
      work[i] = values[i];
  }
  for (size_t i = 0; s == OL_OK && i < plan->outlier_count; i++) {
    exceptions[i] = work[plan->outliers[i]];
    work[plan->outliers[i]] = 0;
  }
  if (s == OL_OK && gathered) {
    for (uint64_t i = 0; i < count; i++) gathered[i] = work[plan->permutation[i]];
    memcpy(work, gathered, (size_t)count * sizeof(double));
  }
  free(gathered);
  if (s == OL_OK) s = transform(work, count, plan->forward, plan->transform_size);
  if (s != OL_OK) {
    free(work);
    free(exceptions);
    return s;
  }
  *work_out = work;
  *exceptions_out = exceptions;
  return OL_OK;
}

/* ============================================================ blocks */

static void affine_range(const ol_quant_layout *l, double *lo, double *hi) {
  *lo = l->signed_codes ? -ldexp(1.0, (int)l->bits - 1) : 0;
  *hi = *lo + ldexp(1.0, (int)l->bits) - 1;
}

/* Codes of one block into codes[]; values are the block's count inputs. */
static ol_status quantize_block(const ol_quant_layout *l, const ol_quant_block *b,
                                const double *values, uint32_t *codes) {
  if (l->method == OL_QUANT_AFFINE) {
    double lo, hi;
    affine_range(l, &lo, &hi);
    uint32_t mask = (uint32_t)((1ull << l->bits) - 1);
    for (uint32_t i = 0; i < l->count; i++) {
      double normalized = (values[i] - b->offset) / b->scale + b->zero_point;
      double clamped = normalized < lo ? lo : normalized > hi ? hi : normalized;
      int64_t code = (int64_t)ol_quant_round_half_even(clamped);
      codes[i] = (uint32_t)code & mask;
    }
    return OL_OK;
  }
  /* Codebook: greedy per book on the residual, first entry wins ties; a
   * partial final vector compares only its logical components. */
  uint32_t vs = l->vector_size, nc = 0;
  double residual[64];
  double *res = vs <= 64 ? residual : ol_xmalloc(vs * sizeof(double));
  if (!res) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  for (uint32_t i = 0; i < l->count && s == OL_OK; i += vs) {
    uint32_t width = l->count - i < vs ? l->count - i : vs;
    for (uint32_t j = 0; j < width; j++) {
      res[j] = values[i + j] / b->scale;
      if (!isfinite(res[j])) s = INVALID("Quantization scaling overflow");
    }
    for (uint32_t book = 0; book < l->books && s == OL_OK; book++) {
      const double *table = b->codebook + (size_t)book * l->entries * vs;
      uint32_t best = 0;
      double best_error = INFINITY;
      for (uint32_t e = 0; e < l->entries; e++) {
        double error = 0;
        for (uint32_t j = 0; j < width; j++) {
          double diff = res[j] - table[(size_t)e * vs + j];
          error += diff * diff;
        }
        if (error < best_error) {
          best_error = error;
          best = e;
        }
      }
      if (!isfinite(best_error)) s = INVALID("Codebook distance overflow");
      codes[nc++] = best;
      for (uint32_t j = 0; j < width && s == OL_OK; j++) {
        res[j] -= table[(size_t)best * vs + j];
        if (!isfinite(res[j])) s = INVALID("Codebook residual overflow");
      }
    }
  }
  if (res != residual) free(res);
  return s;
}

static ol_status encode_block(byte_stream *w, const ol_quant_layout *l, const ol_quant_block *b,
                              const double *values, uint32_t *codes) {
  OL_TRY(put_double(w, b->scale));
  OL_TRY(put_double(w, b->zero_point));
  OL_TRY(put_double(w, b->offset));
  for (size_t i = 0; i < b->codebook_size; i++) OL_TRY(put_double(w, b->codebook[i]));
  if (l->method == OL_QUANT_CAST) {
    size_t width = ol_quant_float_bytes(l->cast_type);
    uint8_t bytes[8];
    for (uint32_t i = 0; i < l->count; i++) {
      double value = values[i] / b->scale;
      if (!isfinite(value)) return INVALID("Quantization scaling overflow");
      ol_status s = store_float(l->cast_type, value, bytes);
      if (s != OL_OK) return INVALID("Quantization cast overflow (%g)", value);
      uint64_t raw = 0;
      for (size_t k = 0; k < width; k++) raw |= (uint64_t)bytes[k] << (8 * k);
      OL_TRY(put(w, raw, width));
    }
    return OL_OK;
  }
  OL_TRY(quantize_block(l, b, values, codes));
  return pack_codes(w, codes, ol_quant_layout_code_count(l), l->bits, l->base3);
}

/* Appends the block's count reconstructed values to out. */
static ol_status decode_block(byte_stream *r, const ol_quant_layout *l, const ol_quant_block *b,
                              uint32_t *codes, double *out) {
  if (l->method == OL_QUANT_CAST) {
    size_t width = ol_quant_float_bytes(l->cast_type);
    for (uint32_t i = 0; i < l->count; i++) {
      uint64_t raw = 0;
      OL_TRY(get(r, width, &raw));
      double value;
      if (width == 8) {
        memcpy(&value, &raw, 8);
      } else if (width == 4) {
        uint32_t u = (uint32_t)raw;
        float f;
        memcpy(&f, &u, 4);
        value = f;
      } else {
        value = l->cast_type == OL_DTYPE_FLOAT16 ? ol_f16_to_f32((uint16_t)raw)
                                                 : ol_bf16_to_f32((uint16_t)raw);
      }
      out[i] = value * b->scale;
    }
    return OL_OK;
  }
  OL_TRY(unpack_codes(r, ol_quant_layout_code_count(l), l->bits, l->base3, codes));
  if (l->method == OL_QUANT_AFFINE) {
    for (uint32_t i = 0; i < l->count; i++) {
      int64_t code = codes[i];
      if (l->signed_codes && (codes[i] & (1u << (l->bits - 1)))) code -= (int64_t)1 << l->bits;
      out[i] = ((double)code - b->zero_point) * b->scale + b->offset;
    }
    return OL_OK;
  }
  uint32_t vs = l->vector_size;
  for (uint32_t i = 0, group = 0; i < l->count; i += vs, group++) {
    for (uint32_t book = 0; book < l->books; book++)
      if (codes[(size_t)group * l->books + book] >= l->entries)
        return INVALID("Quantization codebook index %u out of range (%u entries)",
                       codes[(size_t)group * l->books + book], l->entries);
    for (uint32_t j = 0; j < vs && i + j < l->count; j++) {
      double sum = 0;
      for (uint32_t book = 0; book < l->books; book++) {
        uint32_t entry = codes[(size_t)group * l->books + book];
        sum += b->codebook[((size_t)book * l->entries + entry) * vs + j];
      }
      out[i + j] = sum * b->scale;
    }
  }
  return OL_OK;
}

/* Largest code count over the plan's runs, for one scratch array. */
static uint64_t max_code_count(const ol_quant_plan *plan) {
  uint64_t m = 1;
  for (size_t r = 0; r < plan->run_count; r++) {
    uint64_t c = ol_quant_layout_code_count(&plan->runs[r].layout);
    if (c > m) m = c;
  }
  return m;
}

/* ============================================================ calibration */

/* Scale for one block so its extreme values reach the available range. */
static ol_status calibrate_block(const ol_quant_layout *l, ol_quant_block *b, const double *v) {
  double scale = 0;
  if (l->method == OL_QUANT_AFFINE) {
    double lo, hi;
    affine_range(l, &lo, &hi);
    double up = hi - b->zero_point, down = b->zero_point - lo;
    for (uint32_t i = 0; i < l->count; i++) {
      double x = v[i] - b->offset, ratio = 0;
      if (x > 0 && up > 0) ratio = x / up;
      if (x < 0 && down > 0) ratio = -x / down;
      if (ratio > scale) scale = ratio;
    }
  } else if (l->method == OL_QUANT_CODEBOOK) {
    double top = 0, bottom = 0;
    for (size_t e = 0; e < b->codebook_size; e++) {
      if (b->codebook[e] > top) top = b->codebook[e];
      if (b->codebook[e] < bottom) bottom = b->codebook[e];
    }
    for (uint32_t i = 0; i < l->count; i++) {
      double ratio = 0;
      if (v[i] > 0 && top > 0) ratio = v[i] / top;
      if (v[i] < 0 && bottom < 0) ratio = v[i] / bottom;
      if (ratio > scale) scale = ratio;
    }
  }
  if (!isfinite(scale)) return INVALID("Quantization calibration overflow");
  b->scale = scale > 0 ? scale : 1.0;
  return OL_OK;
}

ol_status ol_quant_calibrate_values(ol_quant_plan *plan, const double *values, uint64_t count) {
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (!row) return INVALID("Unknown quantization format: %d", (int)plan->format);
  if (row->ort) return ol_quant_ort_calibrate(plan, values, count);
  for (size_t r = 0; r < plan->run_count; r++) {
    const ol_quant_layout *l = &plan->runs[r].layout;
    if (l->method != OL_QUANT_CODEBOOK) continue;
    if (l->books != 1 || l->vector_size != 1)
      return INVALID("Vector and additive codebooks require explicit scales (run %zu: %u books "
                     "of %u-component vectors)", r, l->books, l->vector_size);
    for (size_t b = 0; b < plan->runs[r].block_count; b++)
      if (plan->runs[r].blocks[b].codebook_size == 0)
        return INVALID("Missing codebook for run %zu block %zu: learned codebooks must be "
                       "supplied", r, b);
  }
  for (size_t r = 0; r < plan->run_count; r++)
    for (size_t b = 0; b < plan->runs[r].block_count; b++) plan->runs[r].blocks[b].scale = 1.0;
  OL_TRY(ol_quant_plan_validate(plan, count));
  double *work, *exceptions;
  OL_TRY(prepare(plan, values, count, &work, &exceptions));
  ol_status s = OL_OK;
  uint64_t offset = 0;
  for (size_t r = 0; r < plan->run_count && s == OL_OK; r++) {
    ol_quant_run *run = &plan->runs[r];
    for (size_t b = 0; b < run->block_count && s == OL_OK; b++) {
      s = calibrate_block(&run->layout, &run->blocks[b], work + offset);
      offset += run->layout.count;
    }
  }
  free(work);
  free(exceptions);
  return s;
}

/* ============================================================ encode */

ol_status ol_quant_encode(const ol_quant_plan *plan, const double *values, uint64_t count,
                          ol_dtype logical_dtype, uint8_t **payload, size_t *size) {
  *payload = NULL;
  *size = 0;
  const ol_quant_profile *row = ol_quant_profile_info(plan->format);
  if (!row) return INVALID("Unknown quantization format: %d", (int)plan->format);
  if (row->ort)
    return INVALID("ORT MatMulNBits profile '%s' has its own layout: encode it with "
                   "ol_quant_encode_proto (ort.h)", row->name);
  if (!ol_quant_float_bytes(logical_dtype))
    return INVALID("Quantization requires a FLOAT, DOUBLE, FLOAT16 or BFLOAT16 logical dtype");
  OL_TRY(ol_quant_plan_validate(plan, count));
  uint64_t total;
  OL_TRY(ol_quant_plan_payload_size(plan, &total));
  if (total > SIZE_MAX) return ol_error(OL_OUT_OF_MEMORY, "Quantization payload too large");
  double *work, *exceptions;
  OL_TRY(prepare(plan, values, count, &work, &exceptions));
  byte_stream w = {ol_xmalloc((size_t)total), NULL, (size_t)total, 0};
  uint32_t *codes = ol_xmalloc((size_t)max_code_count(plan) * sizeof(uint32_t));
  double *check = ol_xmalloc(count ? (size_t)count * sizeof(double) : 1);
  ol_status s = (w.out && codes && check) ? OL_OK : OL_OUT_OF_MEMORY;
  if (s == OL_OK) s = put(&w, 0, 1);
  for (size_t i = 0; s == OL_OK && i < plan->permutation_size; i++)
    s = put(&w, (uint64_t)plan->permutation[i], 8);
  for (size_t i = 0; s == OL_OK && i < plan->forward_size; i++) s = put_double(&w, plan->forward[i]);
  for (size_t i = 0; s == OL_OK && i < plan->inverse_size; i++) s = put_double(&w, plan->inverse[i]);
  for (size_t i = 0; s == OL_OK && i < plan->outlier_count; i++)
    s = put(&w, (uint64_t)plan->outliers[i], 8);
  for (size_t i = 0; s == OL_OK && i < plan->outlier_count; i++) s = put_double(&w, exceptions[i]);
  uint64_t offset = 0;
  for (size_t r = 0; s == OL_OK && r < plan->run_count; r++) {
    const ol_quant_run *run = &plan->runs[r];
    for (size_t b = 0; s == OL_OK && b < run->block_count; b++) {
      s = encode_block(&w, &run->layout, &run->blocks[b], work + offset, codes);
      if (s != OL_OK) s = ol_error_wrap(s, "run %zu block %zu", r, b);
      offset += run->layout.count;
    }
  }
  if (s == OL_OK && w.pos != w.size)
    s = ol_error(OL_INTERNAL, "Quantization payload size mismatch (%zu of %zu)", w.pos, w.size);
  /* The reconstruction (after the inverse transform, permutation and outlier
   * restoration) must be finite and fit the logical dtype. */
  if (s == OL_OK) {
    s = ol_quant_decode(plan, w.out, w.size, count, logical_dtype, check, NULL);
    if (s != OL_OK) s = ol_error_wrap(s, "Encoding rejects this reconstruction");
  }
  free(work);
  free(exceptions);
  free(codes);
  free(check);
  if (s != OL_OK) {
    free(w.out);
    return s;
  }
  *payload = w.out;
  *size = w.size;
  return OL_OK;
}

/* ============================================================ decode */

static ol_status read_indices(byte_stream *r, size_t count, int64_t **out) {
  *out = NULL;
  if (count > (r->size - r->pos) / 8) return INVALID("Truncated quantization index array");
  if (count == 0) return OL_OK;
  int64_t *v = ol_xmalloc(count * sizeof(int64_t));
  if (!v) return OL_OUT_OF_MEMORY;
  for (size_t i = 0; i < count; i++) {
    uint64_t raw = 0;
    get(r, 8, &raw);
    v[i] = (int64_t)raw;
  }
  *out = v;
  return OL_OK;
}

static ol_status read_doubles(byte_stream *r, uint64_t count, double **out) {
  *out = NULL;
  if (count > (r->size - r->pos) / 8) return INVALID("Truncated quantization parameter array");
  if (count == 0) return OL_OK;
  double *v = ol_xmalloc((size_t)count * sizeof(double));
  if (!v) return OL_OUT_OF_MEMORY;
  for (uint64_t i = 0; i < count; i++) get_double(r, &v[i]);
  *out = v;
  return OL_OK;
}

/* Reads the payload's header arrays and blocks into p (whose runs mirror
 * shape's), decoding codes into values. */
static ol_status read_payload(const ol_quant_plan *shape, byte_stream *r, uint64_t count,
                              ol_quant_plan *p, double **exceptions, double *values) {
  uint64_t reserved;
  OL_TRY(get(r, 1, &reserved));
  if (reserved != 0) return INVALID("Nonzero quantization reserved byte");
  if (shape->permutation_size != 0 && shape->permutation_size != count)
    return INVALID("Invalid quantization permutation size %zu for %llu elements",
                   shape->permutation_size, (unsigned long long)count);
  OL_TRY(read_indices(r, shape->permutation_size, &p->permutation));
  p->permutation_size = shape->permutation_size;
  uint64_t n = shape->transform_size;
  p->transform_size = shape->transform_size;
  if (n > 0 && n > (r->size / 8) / n) return INVALID("Truncated quantization transform");
  OL_TRY(read_doubles(r, n * n, &p->forward));
  p->forward_size = (size_t)(n * n);
  OL_TRY(read_doubles(r, n * n, &p->inverse));
  p->inverse_size = (size_t)(n * n);
  if (shape->outlier_count > count) return INVALID("Too many quantization outliers");
  OL_TRY(read_indices(r, shape->outlier_count, &p->outliers));
  p->outlier_count = shape->outlier_count;
  OL_TRY(read_doubles(r, shape->outlier_count, exceptions));

  uint32_t *codes = ol_xmalloc((size_t)max_code_count(shape) * sizeof(uint32_t));
  if (!codes) return OL_OUT_OF_MEMORY;
  ol_status s = OL_OK;
  uint64_t done = 0;
  for (size_t ri = 0; ri < shape->run_count && s == OL_OK; ri++) {
    const ol_quant_run *src = &shape->runs[ri];
    ol_quant_run *run = &p->runs[ri];
    run->layout = src->layout;
    if (src->block_count == 0 || src->block_count > (r->size - r->pos) / 24 ||
        src->layout.count == 0 || src->layout.count > (count - done) / src->block_count) {
      s = INVALID("Invalid quantization block run %zu (%zu blocks of %u elements, %llu of %llu "
                  "elements left)", ri, src->block_count, src->layout.count,
                  (unsigned long long)(count - done), (unsigned long long)count);
      break;
    }
    run->blocks = ol_xcalloc(src->block_count, sizeof(ol_quant_block));
    if (!run->blocks) {
      s = OL_OUT_OF_MEMORY;
      break;
    }
    run->block_count = src->block_count;
    uint64_t table = ol_quant_layout_table_size(&run->layout);
    for (size_t bi = 0; bi < run->block_count && s == OL_OK; bi++) {
      ol_quant_block *b = &run->blocks[bi];
      s = get_double(r, &b->scale);
      if (s == OL_OK) s = get_double(r, &b->zero_point);
      if (s == OL_OK) s = get_double(r, &b->offset);
      if (s == OL_OK) s = read_doubles(r, table, &b->codebook);
      if (s == OL_OK) b->codebook_size = (size_t)table;
      if (s == OL_OK) s = ol_quant_validate_block(&run->layout, b);
      if (s == OL_OK && ol_quant_layout_code_bytes(&run->layout) > r->size - r->pos)
        s = INVALID("Truncated quantization codes");
      if (s == OL_OK) s = decode_block(r, &run->layout, b, codes, values + done);
      if (s != OL_OK) s = ol_error_wrap(s, "run %zu block %zu", ri, bi);
      done += run->layout.count;
    }
  }
  free(codes);
  return s;
}

ol_status ol_quant_decode(const ol_quant_plan *shape, const uint8_t *payload, size_t size,
                          uint64_t count, ol_dtype logical_dtype, double *out,
                          ol_quant_plan **parsed) {
  if (parsed) *parsed = NULL;
  const ol_quant_profile *row = ol_quant_profile_info(shape->format);
  if (!row) return INVALID("Unknown quantization format: %d", (int)shape->format);
  if (row->ort)
    return INVALID("ORT MatMulNBits profile '%s' has its own layout: decode it with "
                   "ol_quant_decode_proto (ort.h)", row->name);
  if (!ol_quant_float_bytes(logical_dtype))
    return INVALID("Quantization logical dtype must be FLOAT, DOUBLE, FLOAT16 or BFLOAT16");
  if (!payload && size) return INVALID("NULL quantization payload");
  uint64_t covered = 0;
  for (size_t r = 0; r < shape->run_count; r++) {
    const ol_quant_run *run = &shape->runs[r];
    if (run->block_count == 0 || run->layout.count == 0 ||
        run->layout.count > (count - covered) / run->block_count)
      return INVALID("Quantization blocks exceed logical size (run %zu: %zu blocks of %u, "
                     "%llu elements)", r, run->block_count, run->layout.count,
                     (unsigned long long)count);
    covered += (uint64_t)run->layout.count * run->block_count;
    /* bound scratch sizes by the payload before allocating anything */
    if (!ol_quant_layout_sizes_fit(&run->layout) || ol_quant_layout_code_bytes(&run->layout) > size ||
        ol_quant_layout_table_size(&run->layout) > size / 8)
      return INVALID("Truncated quantization payload (%zu bytes) for run %zu", size, r);
  }
  ol_quant_plan *p;
  OL_TRY(ol_quant_plan_new(&p));
  p->format = shape->format;
  double *exceptions = NULL;
  byte_stream r = {NULL, payload, size, 0};
  ol_status s = OL_OK;
  if (shape->run_count) {
    p->runs = ol_xcalloc(shape->run_count, sizeof(ol_quant_run));
    if (!p->runs) s = OL_OUT_OF_MEMORY;
    else p->run_count = shape->run_count;
  }
  if (s == OL_OK) s = read_payload(shape, &r, count, p, &exceptions, out);
  if (s == OL_OK) s = ol_quant_plan_validate(p, count);
  if (s == OL_OK && r.pos != r.size)
    s = INVALID("Trailing quantization payload (%zu of %zu bytes used)", r.pos, r.size);
  if (s == OL_OK) s = transform(out, count, p->inverse, p->transform_size);
  if (s == OL_OK && p->permutation_size) {
    double *reordered = ol_xmalloc((size_t)count * sizeof(double));
    if (!reordered) {
      s = OL_OUT_OF_MEMORY;
    } else {
      memcpy(reordered, out, (size_t)count * sizeof(double));
      for (uint64_t i = 0; i < count; i++) out[p->permutation[i]] = reordered[i];
      free(reordered);
    }
  }
  for (size_t i = 0; s == OL_OK && i < p->outlier_count; i++) out[p->outliers[i]] = exceptions[i];
  uint8_t scratch[8];
  for (uint64_t i = 0; s == OL_OK && i < count; i++) {
    s = store_float(logical_dtype, out[i], scratch);
    if (s != OL_OK) s = ol_error_wrap(s, "element %llu", (unsigned long long)i);
  }
  free(exceptions);
  if (s != OL_OK || !parsed) ol_quant_plan_destroy(p);
  else *parsed = p;
  return s;
}
