/* Unit tests of the com.microsoft contrib kernels (contrib_ms*.c) and the
 * opset-23 RMSNormalization / RotaryEmbedding (nn23.c), incl. error paths. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kernel_util.h"

#define MS "com.microsoft"

static const float *F32(ol_value *v) { return (const float *)ol_tdata(&v->tensor); }
static bool near(float a, float b, float tol) { return fabsf(a - b) <= tol; }
static void release_all(ol_value **v, size_t n) {
  for (size_t i = 0; i < n; i++)
    if (v[i]) ol_value_release(v[i]);
}

static void test_simplified_layernorm(void) {
  int64_t d[2] = {2, 4}, ds[1] = {4};
  float x[8] = {1, 2, 3, 4, -1, 0, 1, 0}, sc[4] = {1, 2, 1, 0.5f};
  ol_value *in[2] = {tk_f32(2, d, x), tk_f32(1, ds, sc)}, *out[2] = {0};
  ol_attr at[1] = {tk_attr_float("epsilon", 0.0f)};
  /* the default domain, where onnxruntime registers it */
  CHECK_OK(tk_run_domain("", "SimplifiedLayerNormalization", 17, at, 1, in, 2, out, 2));
  float r0 = sqrtf(30.0f / 4), r1 = sqrtf(2.0f / 4);
  CHECK(near(F32(out[0])[0], 1 / r0, 1e-6f) && near(F32(out[0])[1], 4 / r0, 1e-6f));
  CHECK(near(F32(out[0])[4], -1 / r1, 1e-6f) && near(F32(out[0])[7], 0, 1e-6f));
  CHECK(out[1] && near(F32(out[1])[1], 1 / r1, 1e-6f));
  release_all(out, 2);
  /* onnxruntime has no com.microsoft form */
  CHECK_STATUS(tk_run_domain(MS, "SimplifiedLayerNormalization", 1, at, 1, in, 2, out, 1), OL_NOT_IMPLEMENTED);
  /* scale of the wrong size */
  int64_t d3[1] = {3};
  ol_value *bad = tk_f32(1, d3, sc);
  ol_value *in2[2] = {in[0], bad};
  CHECK_STATUS(tk_run_domain("", "SimplifiedLayerNormalization", 1, at, 1, in2, 2, out, 1), OL_INVALID_ARGUMENT);
  ol_attr st[1] = {tk_attr_int("stash_type", 0)};
  CHECK_STATUS(tk_run_domain("", "SimplifiedLayerNormalization", 1, st, 1, in, 2, out, 1), OL_INVALID_MODEL);
  ol_value_release(bad);
  release_all(in, 2);
}

static void test_skip_layernorms(void) {
  int64_t d[3] = {1, 2, 2}, dh[1] = {2}, ds[2] = {2, 2};
  float x[4] = {1, 3, 2, 2}, skip[4] = {1, 1, 0, 4}, g[2] = {1, 1}, b[2] = {0.5f, -0.5f}, bias[2] = {0, 1};
  ol_value *in[5] = {tk_f32(3, d, x), tk_f32(3, d, skip), tk_f32(1, dh, g), tk_f32(1, dh, b), tk_f32(1, dh, bias)};
  ol_value *out[4] = {0};
  ol_attr at[1] = {tk_attr_float("epsilon", 0.0f)};
  CHECK_OK(tk_run_domain(MS, "SkipLayerNormalization", 1, at, 1, in, 5, out, 4));
  /* row 0: 1+1+0, 3+1+1 = 2, 5 -> mean 3.5, std 1.5 -> -1, 1 */
  CHECK(near(F32(out[0])[0], -1 + 0.5f, 1e-6f) && near(F32(out[0])[1], 1 - 0.5f, 1e-6f));
  CHECK(near(F32(out[1])[0], 3.5f, 1e-6f) && near(F32(out[2])[0], 1 / 1.5f, 1e-6f));
  CHECK(near(F32(out[3])[0], 2, 0) && near(F32(out[3])[1], 5, 0) && near(F32(out[3])[3], 7, 0));
  release_all(out, 4);
  /* skip broadcast from (S, H) */
  ol_value *skip2 = tk_f32(2, ds, skip);
  ol_value *in2[5] = {in[0], skip2, in[2], NULL, NULL};
  CHECK_OK(tk_run_domain(MS, "SkipLayerNormalization", 1, at, 1, in2, 5, out, 1));
  CHECK(near(F32(out[0])[0], -1, 1e-6f));
  release_all(out, 1);
  /* simplified: bias is input 3 */
  ol_value *in3[4] = {in[0], in[1], in[2], in[4]};
  CHECK_OK(tk_run_domain(MS, "SkipSimplifiedLayerNormalization", 1, at, 1, in3, 4, out, 4));
  float rms = sqrtf((4 + 25) / 2.0f);
  CHECK(near(F32(out[0])[0], 2 / rms, 1e-6f) && near(F32(out[0])[1], 5 / rms, 1e-6f));
  CHECK(out[3] && near(F32(out[3])[1], 5, 0));
  release_all(out, 4);
  /* mismatched skip */
  int64_t dbad[3] = {1, 2, 3};
  float z[6] = {0};
  ol_value *skip3 = tk_f32(3, dbad, z);
  ol_value *in4[3] = {in[0], skip3, in[2]};
  CHECK_STATUS(tk_run_domain(MS, "SkipSimplifiedLayerNormalization", 1, at, 1, in4, 3, out, 1), OL_INVALID_ARGUMENT);
  ol_value_release(skip2);
  ol_value_release(skip3);
  release_all(in, 5);
}

static void test_gelus(void) {
  int64_t d[2] = {1, 3}, db[1] = {3};
  float x[3] = {-1, 0, 2}, b[3] = {1, 0, -1};
  ol_value *in[3] = {tk_f32(2, d, x), tk_f32(1, db, b), tk_f32(2, d, x)}, *out[1] = {0};
  CHECK_OK(tk_run_domain(MS, "Gelu", 1, NULL, 0, in, 1, out, 1));
  CHECK(near(F32(out[0])[0], -0.15865526f, 1e-6f) && near(F32(out[0])[2], 1.9544997f, 1e-6f));
  release_all(out, 1);
  CHECK_OK(tk_run_domain(MS, "BiasGelu", 1, NULL, 0, in, 2, out, 1));
  CHECK(near(F32(out[0])[0], 0, 1e-7f) && near(F32(out[0])[2], 0.84134475f, 1e-6f));
  release_all(out, 1);
  CHECK_OK(tk_run_domain(MS, "FastGelu", 1, NULL, 0, in, 1, out, 1));
  CHECK(near(F32(out[0])[0], -0.15880801f, 1e-6f) && near(F32(out[0])[2], 1.9545977f, 1e-6f));
  release_all(out, 1);
  ol_attr al[1] = {tk_attr_float("alpha", 1.0f)};
  CHECK_OK(tk_run_domain(MS, "QuickGelu", 1, al, 1, in, 1, out, 1));
  CHECK(near(F32(out[0])[0], -0.26894142f, 1e-6f) && near(F32(out[0])[2], 1.7615942f, 1e-6f));
  release_all(out, 1);
  /* BiasAdd wants 3-D */
  CHECK_STATUS(tk_run_domain(MS, "BiasAdd", 1, NULL, 0, in, 3, out, 1), OL_INVALID_ARGUMENT);
  int64_t d3[3] = {1, 1, 3};
  ol_value *x3 = tk_f32(3, d3, x), *in3[3] = {x3, in[1], x3};
  CHECK_OK(tk_run_domain(MS, "BiasAdd", 1, NULL, 0, in3, 3, out, 1));
  CHECK(near(F32(out[0])[0], -1, 0) && near(F32(out[0])[2], 3, 0));
  release_all(out, 1);
  /* bias of the wrong length */
  int64_t d2[1] = {2};
  ol_value *b2 = tk_f32(1, d2, b), *in4[2] = {in[0], b2};
  CHECK_STATUS(tk_run_domain(MS, "FastGelu", 1, NULL, 0, in4, 2, out, 1), OL_INVALID_ARGUMENT);
  /* BiasSplitGelu: (1, 1, 4) -> (1, 1, 2) = (x0 + b0) * gelu(x2 + b2), ... */
  int64_t d4[3] = {1, 1, 4}, db4[1] = {4};
  float x4[4] = {1, 2, 2, -1}, b4[4] = {1, 0, 0, 0};
  ol_value *in5[2] = {tk_f32(3, d4, x4), tk_f32(1, db4, b4)};
  CHECK_OK(tk_run_domain(MS, "BiasSplitGelu", 1, NULL, 0, in5, 2, out, 1));
  CHECK(out[0]->tensor.dims[2] == 2);
  CHECK(near(F32(out[0])[0], 2 * 1.9544997f, 1e-5f) && near(F32(out[0])[1], 2 * -0.15865526f, 1e-6f));
  release_all(out, 1);
  CHECK_STATUS(tk_run_domain(MS, "BiasSplitGelu", 1, NULL, 0, in3, 2, out, 1), OL_INVALID_ARGUMENT);
  release_all(in5, 2);
  ol_value_release(b2);
  ol_value_release(x3);
  release_all(in, 3);
}

static void test_fused_matmul(void) {
  int64_t da[2] = {2, 3}, db[2] = {2, 3};
  float a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {1, 0, 1, 0, 1, 0};
  ol_value *in[2] = {tk_f32(2, da, a), tk_f32(2, db, b)}, *out[1] = {0};
  ol_attr at[2] = {tk_attr_int("transB", 1), tk_attr_float("alpha", 0.5f)};
  CHECK_OK(tk_run_domain(MS, "FusedMatMul", 1, at, 2, in, 2, out, 1));
  CHECK(out[0]->tensor.dims[0] == 2 && out[0]->tensor.dims[1] == 2);
  CHECK(near(F32(out[0])[0], 2, 0) && near(F32(out[0])[1], 1, 0) && near(F32(out[0])[2], 5, 0));
  release_all(out, 1);
  CHECK_STATUS(tk_run_domain(MS, "FusedMatMul", 1, NULL, 0, in, 2, out, 1), OL_INVALID_ARGUMENT);
  ol_attr tb[1] = {tk_attr_int("transBatchA", 1)};
  CHECK_STATUS(tk_run_domain(MS, "FusedMatMul", 1, tb, 1, in, 2, out, 1), OL_NOT_IMPLEMENTED);
  release_all(in, 2);
}

static void test_rotary(void) {
  /* one head of 4, cache for 3 positions: angle pos*pi/2 on both pairs */
  int64_t dx[3] = {1, 2, 4}, dc[2] = {3, 2}, dp[2] = {1, 2}, dp1[1] = {1};
  float x[8] = {1, 2, 3, 4, 1, 2, 3, 4};
  float c[6] = {1, 1, 0, 0, -1, -1}, s[6] = {0, 0, 1, 1, 0, 0};
  int64_t pos[2] = {0, 1}, off[1] = {1};
  ol_value *in[4] = {tk_f32(3, dx, x), tk_i64(2, dp, pos), tk_f32(2, dc, c), tk_f32(2, dc, s)}, *out[1] = {0};
  CHECK_OK(tk_run_domain(MS, "RotaryEmbedding", 1, NULL, 0, in, 4, out, 1));
  const float *y = F32(out[0]);
  /* pos 0: identity; pos 1 (90 deg, halves): (x1, x2) -> (-x2, x1) */
  CHECK(y[0] == 1 && y[3] == 4);
  CHECK(y[4] == -3 && y[5] == -4 && y[6] == 1 && y[7] == 2);
  release_all(out, 1);
  ol_attr il[1] = {tk_attr_int("interleaved", 1)};
  CHECK_OK(tk_run_domain(MS, "RotaryEmbedding", 1, il, 1, in, 4, out, 1));
  y = F32(out[0]);
  CHECK(y[4] == -2 && y[5] == 1 && y[6] == -4 && y[7] == 3);
  release_all(out, 1);
  /* offset form: position_ids (1) = 1 -> positions 1, 2 */
  ol_value *o1 = tk_i64(1, dp1, off), *in2[4] = {in[0], o1, in[2], in[3]};
  CHECK_OK(tk_run_domain(MS, "RotaryEmbedding", 1, NULL, 0, in2, 4, out, 1));
  CHECK(F32(out[0])[0] == -3 && F32(out[0])[4] == -1);
  release_all(out, 1);
  /* positions beyond the cache */
  int64_t far[2] = {0, 3};
  ol_value *pf = tk_i64(2, dp, far), *in3[4] = {in[0], pf, in[2], in[3]};
  CHECK_STATUS(tk_run_domain(MS, "RotaryEmbedding", 1, NULL, 0, in3, 4, out, 1), OL_INVALID_ARGUMENT);
  ol_attr bad[1] = {tk_attr_int("rotary_embedding_dim", 3)};
  CHECK_STATUS(tk_run_domain(MS, "RotaryEmbedding", 1, bad, 1, in, 4, out, 1), OL_INVALID_MODEL);
  /* ONNX 23: X, cos, sin, position_ids; 3-D input needs num_heads */
  ol_value *in23[4] = {in[0], in[2], in[3], in[1]};
  CHECK_STATUS(tk_run_domain("", "RotaryEmbedding", 23, NULL, 0, in23, 4, out, 1), OL_INVALID_ARGUMENT);
  ol_attr nh[1] = {tk_attr_int("num_heads", 1)};
  CHECK_OK(tk_run_domain("", "RotaryEmbedding", 23, nh, 1, in23, 4, out, 1));
  CHECK(F32(out[0])[4] == -3 && F32(out[0])[7] == 2);
  release_all(out, 1);
  CHECK_STATUS(tk_run_domain("", "RotaryEmbedding", 22, nh, 1, in23, 4, out, 1), OL_NOT_IMPLEMENTED);
  ol_value_release(o1);
  ol_value_release(pf);
  release_all(in, 4);
}

static void test_rmsnorm23(void) {
  int64_t d[2] = {2, 2}, ds[1] = {2};
  float x[4] = {3, 4, 0, 0}, sc[2] = {1, 10};
  ol_value *in[2] = {tk_f32(2, d, x), tk_f32(1, ds, sc)}, *out[1] = {0};
  ol_attr at[1] = {tk_attr_float("epsilon", 0.0f)};
  CHECK_OK(tk_run_domain("", "RMSNormalization", 23, at, 1, in, 2, out, 1));
  float r = sqrtf(12.5f);
  CHECK(near(F32(out[0])[0], 3 / r, 1e-6f) && near(F32(out[0])[1], 40 / r, 1e-5f));
  release_all(out, 1);
  /* float16 in, float16 out */
  uint16_t xh[4], sh[2];
  for (int i = 0; i < 4; i++) xh[i] = ol_f32_to_f16(x[i]);
  for (int i = 0; i < 2; i++) sh[i] = ol_f32_to_f16(sc[i]);
  ol_value *inh[2] = {tk_tensor(OL_DTYPE_FLOAT16, 2, d, xh), tk_tensor(OL_DTYPE_FLOAT16, 1, ds, sh)};
  CHECK_OK(tk_run_domain("", "RMSNormalization", 23, at, 1, inh, 2, out, 1));
  CHECK(out[0]->tensor.dtype == OL_DTYPE_FLOAT16);
  CHECK(near(ol_f16_to_f32(((uint16_t *)ol_tdata(&out[0]->tensor))[1]), 40 / r, 1e-2f));
  release_all(out, 1);
  ol_attr ax[1] = {tk_attr_int("axis", 2)};
  CHECK_STATUS(tk_run_domain("", "RMSNormalization", 23, ax, 1, in, 2, out, 1), OL_INVALID_ARGUMENT);
  ol_attr st[1] = {tk_attr_int("stash_type", 10)};
  CHECK_STATUS(tk_run_domain("", "RMSNormalization", 23, st, 1, in, 2, out, 1), OL_INVALID_MODEL);
  release_all(inh, 2);
  release_all(in, 2);
}

static void test_matmul_nbits(void) {
  /* K = 16, N = 2, block 16, 4 bits: row 0 all q = 9 (zp 8 -> w = scale),
   * row 1 q = e % 16 with zero point 0 */
  int64_t K = 16, N = 2;
  uint8_t b[16];
  for (int i = 0; i < 8; i++) b[i] = 9 | (9 << 4);
  for (int i = 0; i < 8; i++) b[8 + i] = (uint8_t)((2 * i) | ((2 * i + 1) << 4));
  float a[16], scales[2] = {0.5f, 2.0f};
  for (int i = 0; i < 16; i++) a[i] = 1.0f;
  uint8_t zp[2] = {8, 0};
  int64_t da[2] = {1, 16}, db[3] = {2, 1, 8}, ds[1] = {2}, dz[1] = {2};
  ol_value *in[4] = {tk_f32(2, da, a), tk_tensor(OL_DTYPE_UINT8, 3, db, b), tk_f32(1, ds, scales),
                     tk_tensor(OL_DTYPE_UINT8, 1, dz, zp)};
  ol_value *out[1] = {0};
  ol_attr at[4] = {tk_attr_int("K", K), tk_attr_int("N", N), tk_attr_int("bits", 4), tk_attr_int("block_size", 16)};
  CHECK_OK(tk_run_domain(MS, "MatMulNBits", 1, at, 4, in, 4, out, 1));
  CHECK(out[0]->tensor.dims[1] == 2);
  CHECK(near(F32(out[0])[0], 8.0f, 0) && near(F32(out[0])[1], 2.0f * 120, 0));
  release_all(out, 1);
  /* without zero points: default 8 */
  CHECK_OK(tk_run_domain(MS, "MatMulNBits", 1, at, 4, in, 3, out, 1));
  CHECK(near(F32(out[0])[1], 2.0f * (120 - 128), 0));
  release_all(out, 1);
  /* 6 rows of A (the dequantizing path) give the same rows */
  float a6[96];
  for (int i = 0; i < 96; i++) a6[i] = 1.0f;
  int64_t da6[2] = {6, 16};
  ol_value *in6[4] = {tk_f32(2, da6, a6), in[1], in[2], in[3]};
  CHECK_OK(tk_run_domain(MS, "MatMulNBits", 1, at, 4, in6, 4, out, 1));
  CHECK(near(F32(out[0])[10], 8.0f, 0) && near(F32(out[0])[11], 2.0f * 120, 0));
  release_all(out, 1);
  ol_value_release(in6[0]);
  /* 8 bits: K = 16, one block of 16 bytes per row, default zero point 128 */
  uint8_t b8[32];
  for (int i = 0; i < 16; i++) b8[i] = 130, b8[16 + i] = (uint8_t)(120 + i);
  int64_t db8[3] = {2, 1, 16};
  ol_value *in8[3] = {in[0], tk_tensor(OL_DTYPE_UINT8, 3, db8, b8), in[2]};
  ol_attr at8[4] = {tk_attr_int("K", K), tk_attr_int("N", N), tk_attr_int("bits", 8), tk_attr_int("block_size", 16)};
  CHECK_OK(tk_run_domain(MS, "MatMulNBits", 1, at8, 4, in8, 3, out, 1));
  CHECK(near(F32(out[0])[0], 0.5f * 2 * 16, 0) && near(F32(out[0])[1], 2.0f * (120 * 16 + 120 - 128 * 16), 0));
  release_all(out, 1);
  ol_value_release(in8[1]);
  ol_attr bad[4] = {tk_attr_int("K", K), tk_attr_int("N", N), tk_attr_int("bits", 4), tk_attr_int("block_size", 24)};
  CHECK_STATUS(tk_run_domain(MS, "MatMulNBits", 1, bad, 4, in, 3, out, 1), OL_INVALID_MODEL);
  ol_attr bad2[3] = {tk_attr_int("K", K), tk_attr_int("bits", 3), tk_attr_int("block_size", 16)};
  CHECK_STATUS(tk_run_domain(MS, "MatMulNBits", 1, bad2, 3, in, 3, out, 1), OL_INVALID_MODEL);
  ol_attr wrongk[4] = {tk_attr_int("K", 32), tk_attr_int("N", N), tk_attr_int("bits", 4), tk_attr_int("block_size", 16)};
  CHECK_STATUS(tk_run_domain(MS, "MatMulNBits", 1, wrongk, 4, in, 3, out, 1), OL_INVALID_ARGUMENT);
  release_all(in, 4);
}

static void test_gather_block_quantized(void) {
  /* int4 data [2, 16], one block per row, scales [2, 1] */
  int64_t dd[2] = {2, 16}, ds[2] = {2, 1}, di[1] = {2};
  uint8_t data[16];
  for (int i = 0; i < 8; i++) data[i] = 0x1F;      /* row 0: -1, 1 pairs (low nibble F = -1) */
  for (int i = 8; i < 16; i++) data[i] = 0x70;     /* row 1: 0, 7 */
  float sc[2] = {2.0f, 0.5f};
  int64_t idx[2] = {1, -2};
  ol_value *in[3] = {tk_tensor(OL_DTYPE_INT4, 2, dd, data), tk_i64(1, di, idx), tk_f32(2, ds, sc)};
  ol_value *out[1] = {0};
  ol_attr at[2] = {tk_attr_int("quantize_axis", 1), tk_attr_int("block_size", 16)};
  CHECK_OK(tk_run_domain(MS, "GatherBlockQuantized", 1, at, 2, in, 3, out, 1));
  CHECK(out[0]->tensor.rank == 2 && out[0]->tensor.dims[0] == 2 && out[0]->tensor.dims[1] == 16);
  const float *y = F32(out[0]);
  CHECK(y[0] == 0 && y[1] == 3.5f && y[16] == -2 && y[17] == 2);
  release_all(out, 1);
  int64_t badi[2] = {2, 0};
  ol_value *bi = tk_i64(1, di, badi), *in2[3] = {in[0], bi, in[2]};
  CHECK_STATUS(tk_run_domain(MS, "GatherBlockQuantized", 1, at, 2, in2, 3, out, 1), OL_INVALID_ARGUMENT);
  ol_attr bs[1] = {tk_attr_int("block_size", 8)};
  CHECK_STATUS(tk_run_domain(MS, "GatherBlockQuantized", 1, bs, 1, in, 3, out, 1), OL_INVALID_MODEL);
  ol_value_release(bi);
  release_all(in, 3);
}

static void test_attention(void) {
  /* MHA: 1 head of 2, query 1, keys 2 with identical scores -> mean of values */
  int64_t dq[3] = {1, 1, 2}, dk[3] = {1, 2, 2};
  float q[2] = {0, 0}, k[4] = {1, 2, 3, 4}, v[4] = {1, 2, 3, 6};
  ol_value *in[3] = {tk_f32(3, dq, q), tk_f32(3, dk, k), tk_f32(3, dk, v)}, *out[3] = {0};
  ol_attr nh[1] = {tk_attr_int("num_heads", 1)};
  CHECK_OK(tk_run_domain(MS, "MultiHeadAttention", 1, nh, 1, in, 3, out, 3));
  CHECK(near(F32(out[0])[0], 2, 1e-6f) && near(F32(out[0])[1], 4, 1e-6f));
  CHECK(out[1] && out[1]->tensor.rank == 4 && out[1]->tensor.dims[2] == 2 && F32(out[1])[3] == 4);
  release_all(out, 3);
  ol_attr nh0[1] = {tk_attr_int("num_heads", 0)};
  CHECK_STATUS(tk_run_domain(MS, "MultiHeadAttention", 1, nh0, 1, in, 3, out, 1), OL_INVALID_MODEL);
  ol_attr nh3[1] = {tk_attr_int("num_heads", 3)};
  CHECK_STATUS(tk_run_domain(MS, "MultiHeadAttention", 1, nh3, 1, in, 3, out, 1), OL_INVALID_ARGUMENT);

  /* GQA prompt of 2 tokens: causal, so token 0 sees only value 0 */
  int32_t seql[1] = {1}, tot[1] = {2};
  int64_t d1[1] = {1};
  ol_value *g[7] = {tk_f32(3, dk, k), tk_f32(3, dk, k), tk_f32(3, dk, v), NULL, NULL,
                    tk_tensor(OL_DTYPE_INT32, 1, d1, seql), tk_tensor(OL_DTYPE_INT32, 0, NULL, tot)};
  ol_attr ga[2] = {tk_attr_int("num_heads", 1), tk_attr_int("kv_num_heads", 1)};
  CHECK_OK(tk_run_domain(MS, "GroupQueryAttention", 1, ga, 2, g, 7, out, 3));
  CHECK(F32(out[0])[0] == 1 && F32(out[0])[1] == 2);
  CHECK(out[1] && out[1]->tensor.dims[2] == 2);
  release_all(out, 3);
  /* smooth_softmax: an extra zero logit. One key (seqlens 0, total 1) with
   * score 0: weight 1/2 */
  int64_t dq1[3] = {1, 1, 2};
  float zq[2] = {0, 0};
  int32_t sl0[1] = {0}, tot1[1] = {1};
  ol_value *s1[7] = {tk_f32(3, dq1, zq), tk_f32(3, dq1, k), tk_f32(3, dq1, v), NULL, NULL,
                     tk_tensor(OL_DTYPE_INT32, 1, d1, sl0), tk_tensor(OL_DTYPE_INT32, 0, NULL, tot1)};
  ol_attr gs[3] = {tk_attr_int("num_heads", 1), tk_attr_int("kv_num_heads", 1), tk_attr_int("smooth_softmax", 1)};
  CHECK_OK(tk_run_domain(MS, "GroupQueryAttention", 1, gs, 3, s1, 7, out, 3));
  CHECK(near(F32(out[0])[0], 0.5f, 1e-6f) && near(F32(out[0])[1], 1.0f, 1e-6f));
  release_all(out, 3);
  /* head_sink of the wrong size */
  int64_t d2s[1] = {2};
  float hs[2] = {0, 0};
  ol_value *s2[12] = {s1[0], s1[1], s1[2], NULL, NULL, s1[5], s1[6], NULL, NULL, NULL, NULL, tk_f32(1, d2s, hs)};
  CHECK_STATUS(tk_run_domain(MS, "GroupQueryAttention", 1, ga, 2, s2, 12, out, 3), OL_INVALID_ARGUMENT);
  ol_value_release(s2[11]);
  release_all(s1, 7);
  int32_t badl[1] = {5};
  ol_value *bl = tk_tensor(OL_DTYPE_INT32, 1, d1, badl);
  ol_value *g2[7] = {g[0], g[1], g[2], NULL, NULL, bl, g[6]};
  CHECK_STATUS(tk_run_domain(MS, "GroupQueryAttention", 1, ga, 2, g2, 7, out, 3), OL_INVALID_ARGUMENT);
  ol_attr gbad[2] = {tk_attr_int("num_heads", 3), tk_attr_int("kv_num_heads", 2)};
  CHECK_STATUS(tk_run_domain(MS, "GroupQueryAttention", 1, gbad, 2, g, 7, out, 3), OL_INVALID_MODEL);
  ol_value_release(bl);
  release_all(g, 7);
  release_all(in, 3);
}

OL_TEST_MAIN(TEST(test_simplified_layernorm), TEST(test_skip_layernorms), TEST(test_gelus),
             TEST(test_fused_matmul), TEST(test_rotary), TEST(test_rmsnorm23),
             TEST(test_matmul_nbits), TEST(test_gather_block_quantized), TEST(test_attention))
