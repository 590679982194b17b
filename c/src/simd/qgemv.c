/* Block-quantized GEMV (MatMulNBits, 4 and 8 bits): see qgemv.h for the
 * order every output is summed in. */
#include "simd/qgemv.h"

#include <stddef.h>
#include <string.h>

#include "simd/vec.h"

/* floats of prepared A per chunk: 4 lanes x per fields */
static int64_t chunk_floats(int bits) { return 128 / bits; }

int64_t ol_qgemv_work_floats(const ol_qgemv_shape *s) {
  int64_t kb = ol_qgemv_blocks(s);
  return kb * ol_qgemv_chunks(s) * chunk_floats(s->bits) + 8 * kb + 32;
}
/* 8 x 4 uint32 field masks after P, S and Z */
static const float *work_masks(const ol_qgemv_shape *s, const float *work) {
  int64_t kb = ol_qgemv_blocks(s);
  return work + kb * ol_qgemv_chunks(s) * chunk_floats(s->bits) + 8 * kb;
}

/* 2^-(bits*k) for fields below the top one, 1 for the top one */
static float field_scale(int bits, int k) {
  int per = 32 / bits;
  return k == per - 1 ? 1.0f : 1.0f / (float)(1u << (bits * k));
}

void ol_qgemv_prepare(const ol_qgemv_shape *s, const float *a, float *work) {
  int bits = s->bits, per = 32 / bits;
  int64_t kb = ol_qgemv_blocks(s), nc = ol_qgemv_chunks(s), cf = chunk_floats(bits), epc = 128 / bits;
  float *P = work, *S = work + kb * nc * cf, *Z = S + 4 * kb;
  float dflt = (float)(1 << (bits - 1));
  for (int64_t j = 0; j < kb; j++) {
    float sum[4] = {0, 0, 0, 0};
    for (int64_t c = 0; c < nc; c++) {
      float *p = P + (j * nc + c) * cf;
      for (int k = 0; k < per; k++)
        for (int i = 0; i < 4; i++) {
          int64_t e = c * epc + i * per + k, g = j * s->block + e;
          float v = e < s->block && g < s->K ? a[g] : 0.0f;
          p[4 * k + i] = v * field_scale(bits, k);
          sum[i] = sum[i] + v;
        }
    }
    for (int i = 0; i < 4; i++) {
      S[4 * j + i] = sum[i];
      Z[4 * j + i] = dflt * sum[i];
    }
  }
  uint32_t mk[32];
  for (int k = 0; k < 8; k++)
    for (int i = 0; i < 4; i++) mk[4 * k + i] = k < per - 1 ? ((1u << bits) - 1) << (bits * k) : 0;
  memcpy((float *)work_masks(s, work), mk, sizeof mk);
}

OL_AI ol_i32x4 load_chunk(const uint8_t *p, int half) {
  return half ? ol_i32x4_load64_zero(p) : ol_i32x4_load(p);
}

/* ev/od += the chunk's products (fields in order, even k to ev, odd to od).
 * mask[k]: the field masks, loaded from memory once per call of rows() (as
 * constants, each use would be rematerialized by the wasm engine). */
OL_AI void chunk_acc(const int bits, const float *p, ol_i32x4 v, const ol_i32x4 *mask,
                     ol_f32x4 *ev, ol_f32x4 *od) {
  const int per = 32 / bits;
  for (int k = 0; k < per; k += 2) {
    ol_i32x4 f0 = ol_i32x4_and(v, mask[k]);
    ol_i32x4 f1 = k + 1 == per - 1 ? ol_u32x4_shr(v, 32 - bits) : ol_i32x4_and(v, mask[k + 1]);
    *ev = ol_f32x4_muladd(*ev, ol_f32x4_load(p + 4 * k), ol_i32x4_to_f32x4(f0));
    *od = ol_f32x4_muladd(*od, ol_f32x4_load(p + 4 * k + 4), ol_i32x4_to_f32x4(f1));
  }
}

static float zero_point(const ol_qgemv_shape *s, const uint8_t *zp_u8, const float *zp_f,
                        int64_t n, int64_t j) {
  return ol_qgemv_given_zero_point(s->bits, ol_qgemv_blocks(s), zp_u8, zp_f, n, j);
}

float ol_qgemv_zero_point(const ol_qgemv_shape *s, const uint8_t *zp_u8, const float *zp_f, int64_t n, int64_t j) {
  return zp_u8 || zp_f ? zero_point(s, zp_u8, zp_f, n, j) : (float)(1 << (s->bits - 1));
}

/* NC: chunks per block when known at compile time (0: one 8-byte chunk,
 * 1: one 16-byte chunk), -1 otherwise. Indices are pointer-sized (32-bit in
 * wasm) in the loops. */
OL_AI void rows(const int bits, const int NC, const ol_qgemv_shape *s, const float *work,
                const uint8_t *B, const float *scales, const uint8_t *zp_u8, const float *zp_f,
                const float *bias, int64_t n0, int64_t n1, float *y) {
  const ptrdiff_t kb = (ptrdiff_t)ol_qgemv_blocks(s), cf = (ptrdiff_t)chunk_floats(bits);
  const ptrdiff_t blob = (ptrdiff_t)ol_qgemv_blob_bytes(s);
  const ptrdiff_t nc = NC >= 0 ? 1 : (ptrdiff_t)ol_qgemv_chunks(s);
  const int half = NC == 0;
  const float *P = work, *S = work + kb * nc * cf, *Z = S + 4 * kb;
  const bool zdef = !zp_u8 && !zp_f;
  const int per = 32 / bits;
  ol_i32x4 mask[8];
  for (int k = 0; k < per - 1; k++) mask[k] = ol_i32x4_load(work_masks(s, work) + 4 * k);
  int64_t n = n0;
  for (; n + 2 <= n1; n += 2) {
    const uint8_t *b0 = B + n * kb * blob, *b1 = b0 + kb * blob;
    const float *s0 = scales + n * kb, *s1 = s0 + kb, *p = P;
    ol_f32x4 acc0 = ol_f32x4_zero(), acc1 = ol_f32x4_zero();
    for (ptrdiff_t j = 0; j < kb; j++) {
      ol_f32x4 e0 = ol_f32x4_zero(), o0 = ol_f32x4_zero(), e1 = ol_f32x4_zero(), o1 = ol_f32x4_zero();
      if (NC >= 0) {
        chunk_acc(bits, p, load_chunk(b0, half), mask, &e0, &o0);
        chunk_acc(bits, p, load_chunk(b1, half), mask, &e1, &o1);
        p += cf, b0 += blob, b1 += blob;
      } else {
        for (ptrdiff_t c = 0; c < nc; c++, p += cf, b0 += 16, b1 += 16) {
          chunk_acc(bits, p, ol_i32x4_load(b0), mask, &e0, &o0);
          chunk_acc(bits, p, ol_i32x4_load(b1), mask, &e1, &o1);
        }
      }
      ol_f32x4 sj = ol_f32x4_load(S + 4 * j), z0, z1;
      if (zdef) {
        z0 = z1 = ol_f32x4_load(Z + 4 * j);
      } else {
        z0 = ol_f32x4_mul(ol_f32x4_splat(zero_point(s, zp_u8, zp_f, n, j)), sj);
        z1 = ol_f32x4_mul(ol_f32x4_splat(zero_point(s, zp_u8, zp_f, n + 1, j)), sj);
      }
      acc0 = ol_f32x4_muladd(acc0, ol_f32x4_splat(s0[j]), ol_f32x4_sub(ol_f32x4_add(e0, o0), z0));
      acc1 = ol_f32x4_muladd(acc1, ol_f32x4_splat(s1[j]), ol_f32x4_sub(ol_f32x4_add(e1, o1), z1));
    }
    float r0 = ol_f32x4_hsum(acc0), r1 = ol_f32x4_hsum(acc1);
    if (bias) r0 = r0 + bias[n], r1 = r1 + bias[n + 1];
    y[n - n0] = r0;
    y[n + 1 - n0] = r1;
  }
  for (; n < n1; n++) {
    const uint8_t *b0 = B + n * kb * blob;
    const float *s0 = scales + n * kb, *p = P;
    ol_f32x4 acc0 = ol_f32x4_zero();
    for (ptrdiff_t j = 0; j < kb; j++) {
      ol_f32x4 e0 = ol_f32x4_zero(), o0 = ol_f32x4_zero();
      if (NC >= 0) {
        chunk_acc(bits, p, load_chunk(b0, half), mask, &e0, &o0);
        p += cf, b0 += blob;
      } else {
        for (ptrdiff_t c = 0; c < nc; c++, p += cf, b0 += 16)
          chunk_acc(bits, p, ol_i32x4_load(b0), mask, &e0, &o0);
      }
      ol_f32x4 sj = ol_f32x4_load(S + 4 * j);
      ol_f32x4 z0 = zdef ? ol_f32x4_load(Z + 4 * j)
                         : ol_f32x4_mul(ol_f32x4_splat(zero_point(s, zp_u8, zp_f, n, j)), sj);
      acc0 = ol_f32x4_muladd(acc0, ol_f32x4_splat(s0[j]), ol_f32x4_sub(ol_f32x4_add(e0, o0), z0));
    }
    float r0 = ol_f32x4_hsum(acc0);
    if (bias) r0 = r0 + bias[n];
    y[n - n0] = r0;
  }
}

void ol_qgemv_nbits(const ol_qgemv_shape *s, const float *work, const uint8_t *B,
                    const float *scales, const uint8_t *zp_u8, const float *zp_f,
                    const float *bias, int64_t n0, int64_t n1, float *y) {
  int64_t blob = ol_qgemv_blob_bytes(s);
  if (s->bits == 4) {
    if (blob == 8) rows(4, 0, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
    else if (blob == 16) rows(4, 1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
    else rows(4, -1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
  } else {
    if (blob == 16) rows(8, 1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
    else rows(8, -1, s, work, B, scales, zp_u8, zp_f, bias, n0, n1, y);
  }
}

/* ------------------------------------------------------------ reference */

void ol_qgemv_nbits_scalar(const ol_qgemv_shape *s, const float *a, const uint8_t *B,
                           const float *scales, const uint8_t *zp_u8, const float *zp_f,
                           const float *bias, float *y) {
  const int bits = s->bits, per = 32 / bits;
  const int64_t kb = ol_qgemv_blocks(s), blob = ol_qgemv_blob_bytes(s), epc = 128 / bits;
  const int64_t nc = ol_qgemv_chunks(s), cbytes = blob < 16 ? blob : 16;
  const uint32_t m = (1u << bits) - 1;
  for (int64_t n = 0; n < s->N; n++) {
    float acc[4] = {0, 0, 0, 0};
    for (int64_t j = 0; j < kb; j++) {
      float ev[4] = {0, 0, 0, 0}, od[4] = {0, 0, 0, 0}, sum[4] = {0, 0, 0, 0};
      for (int64_t c = 0; c < nc; c++)
        for (int k = 0; k < per; k++)
          for (int i = 0; i < 4; i++) {
            uint32_t word = 0;
            for (int b = 0; b < 4; b++) {
              int64_t at = 16 * c + 4 * i + b;
              if (at < cbytes + 16 * c) word |= (uint32_t)B[(n * kb + j) * blob + at] << (8 * b);
            }
            uint32_t field = k == per - 1 ? word >> (32 - bits) : word & (m << (bits * k));
            int64_t e = c * epc + i * per + k, g = j * s->block + e;
            float av = e < s->block && g < s->K ? a[g] : 0.0f;
            float prod = (av * field_scale(bits, k)) * (float)(int32_t)field;
            if (k & 1) od[i] = od[i] + prod;
            else ev[i] = ev[i] + prod;
            sum[i] = sum[i] + av;
          }
      float z = zp_u8 || zp_f ? zero_point(s, zp_u8, zp_f, n, j) : (float)(1 << (bits - 1));
      for (int i = 0; i < 4; i++) acc[i] = acc[i] + scales[n * kb + j] * ((ev[i] + od[i]) - z * sum[i]);
    }
    float r = (acc[0] + acc[1]) + (acc[2] + acc[3]);
    if (bias) r = r + bias[n];
    y[n] = r;
  }
}
