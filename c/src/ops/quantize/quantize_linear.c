/* Linear quantization operators (ai.onnx).
 *
 *   QuantizeLinear 10-23     (13 per-axis; 19 float8 + saturate; 21 blocked
 *                             block_size, int4/uint4/int16/uint16, output_dtype;
 *                             23 float4e2m1 and precision)
 *   DequantizeLinear 10-23   (13 per-axis; 19 float8; 21 blocked, int4/uint4;
 *                             23 float4e2m1; output_dtype honoured from 21)
 *   DynamicQuantizeLinear 11-23
 *   QLinearMatMul 10-23      ConvInteger 10-23     QLinearConv 10-23
 *
 * Quantization divides in the scale's type (or the 'precision' attribute;
 * float32 arithmetic for float16/bfloat16, rounded to the type), rounds half
 * to even and saturates; integer products accumulate in int64 in a fixed
 * order. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/quantize/quantize.h"

/* ------------------------------------------------------------ helpers */

static bool is_float_type(ol_dtype dt) {
  return ol_dtype_is_arith_float(dt);
}

static bool is_float8(ol_dtype dt) {
  return dt == OL_DTYPE_FLOAT8E4M3FN || dt == OL_DTYPE_FLOAT8E4M3FNUZ || dt == OL_DTYPE_FLOAT8E5M2 ||
         dt == OL_DTYPE_FLOAT8E5M2FNUZ;
}
static bool is_minifloat_q(ol_dtype dt) { return is_float8(dt) || dt == OL_DTYPE_FLOAT4E2M1; }

static bool int_range(ol_dtype dt, double *lo, double *hi) {
  switch (dt) {
    case OL_DTYPE_UINT8: *lo = 0; *hi = 255; return true;
    case OL_DTYPE_INT8: *lo = -128; *hi = 127; return true;
    case OL_DTYPE_UINT16: *lo = 0; *hi = 65535; return true;
    case OL_DTYPE_INT16: *lo = -32768; *hi = 32767; return true;
    case OL_DTYPE_UINT4: *lo = 0; *hi = 15; return true;
    case OL_DTYPE_INT4: *lo = -8; *hi = 7; return true;
    case OL_DTYPE_INT32: *lo = -2147483648.0; *hi = 2147483647.0; return true;
    default: return false;
  }
}

static double rint_even(double v) {
  double f = floor(v);
  double d = v - f;
  if (d > 0.5) return f + 1.0;
  if (d < 0.5) return f;
  return fmod(f, 2.0) == 0.0 ? f : f + 1.0;
}

/* Stores a quantized value (already divided by scale) into integer or float8. */
static void store_q(ol_tensor *y, int64_t i, double v, bool saturate) {
  double lo, hi;
  if (int_range(y->dtype, &lo, &hi)) {
    v = v != v ? 0.0 : v < lo ? lo : v > hi ? hi : v; /* NaN (0 / 0 with a zero scale) as 0 */
    if (y->dtype == OL_DTYPE_INT4 || y->dtype == OL_DTYPE_UINT4)
      ol_packed_set(y->dtype, ol_tdata(y), i, (int32_t)v);
    else
      ol_tensor_set_double(y, i, v);
  } else if (y->dtype == OL_DTYPE_FLOAT4E2M1) {
    ol_packed_set(OL_DTYPE_UINT4, ol_tdata(y), i, ol_f32_to_minifloat(y->dtype, (float)v, saturate));
  } else {
    ((uint8_t *)ol_tdata(y))[i] = ol_f32_to_minifloat(y->dtype, (float)v, saturate);
  }
}

/* Index of the scale/zero-point element for flat element i of x. */
typedef struct qparam_map {
  int mode; /* 0 per tensor, 1 per axis, 2 blocked */
  int64_t axis_len, inner, block;
  int64_t sdim; /* scale's dims[axis] (blocked) */
} qparam_map;

static ol_status make_map(const ol_node *node, const ol_tensor *x, const ol_tensor *scale, int64_t axis_attr,
                          int64_t block, qparam_map *m) {
  memset(m, 0, sizeof *m);
  if (scale->rank == 0 || (scale->rank == 1 && scale->dims[0] == 1 && block == 0)) return OL_OK;
  int axis;
  OL_TRY(ol_normalize_axis(node, axis_attr, x->rank, &axis));
  m->axis_len = x->dims[axis];
  m->inner = ol_shape_count(x->rank - axis - 1, x->dims + axis + 1);
  if (block <= 0) {
    if (scale->rank != 1 || scale->dims[0] != x->dims[axis])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "per-axis scale must be 1-D of length %lld (axis %d), got %lld elements",
                             (long long)x->dims[axis], axis, (long long)ol_tcount(scale));
    m->mode = 1;
    return OL_OK;
  }
  if (scale->rank != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "blocked scale must have the rank of the input (%d), got %d",
                           x->rank, scale->rank);
  for (int i = 0; i < x->rank; i++) {
    int64_t want = i == axis ? (x->dims[i] + block - 1) / block : x->dims[i];
    if (scale->dims[i] != want)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "blocked scale dimension %d is %lld, expected %lld", i,
                             (long long)scale->dims[i], (long long)want);
  }
  m->mode = 2;
  m->block = block;
  m->sdim = scale->dims[axis];
  return OL_OK;
}

static inline int64_t map_index(const qparam_map *m, int64_t i) {
  if (m->mode == 0) return 0;
  int64_t a = (i / m->inner) % m->axis_len;
  if (m->mode == 1) return a;
  int64_t outer = i / (m->inner * m->axis_len);
  int64_t in = i % m->inner;
  return (outer * m->sdim + a / m->block) * m->inner + in;
}

static double get_q(const ol_tensor *t, int64_t i) {
  if (!t) return 0.0;
  return ol_tensor_get_double(t, i);
}

static bool same_shape(const ol_tensor *a, const ol_tensor *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  return true;
}

typedef struct q_kernel {
  ol_kernel base;
  int64_t axis, block;
  bool saturate;
  ol_dtype output_dtype; /* UNDEFINED: from zero point / default */
  ol_dtype precision;    /* UNDEFINED: the scale's type */
} q_kernel;

/* v rounded to type dt and widened back (through the dtype table). */
static float in_type(ol_dtype dt, float v) {
  const ol_dtype_traits *t = ol_dtype_info(dt);
  float e = 0.0f; /* room for one element of any floating type up to 32 bits */
  t->from_float(&e, 0, v);
  return t->to_float(&e, 0);
}

/* x / s computed in the precision type (float16/bfloat16: operands rounded
 * to the type, divided in float32, quotient rounded to the type). */
static double divide_in(ol_dtype prec, double x, double s) {
  if (prec == OL_DTYPE_DOUBLE) return x / s;
  if (ol_dtype_widens(prec)) return in_type(prec, in_type(prec, (float)x) / in_type(prec, (float)s));
  return (double)((float)x / (float)s);
}

/* ------------------------------------------------------------ QuantizeLinear */

static bool quant_target_ok(const ol_node *node, ol_dtype dt) {
  switch (dt) {
    case OL_DTYPE_UINT8: case OL_DTYPE_INT8: return true;
    case OL_DTYPE_UINT16: case OL_DTYPE_INT16: case OL_DTYPE_UINT4: case OL_DTYPE_INT4:
      return node->opset >= 21;
    case OL_DTYPE_INT32: return false;
    case OL_DTYPE_FLOAT4E2M1: return node->opset >= 23;
    default: return is_float8(dt) && node->opset >= 19;
  }
}

static ol_status quantize_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  q_kernel *k = (q_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *s, *zp = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &s));
  if (!is_float_type(x->dtype) && x->dtype != OL_DTYPE_INT32) return ol_kernel_bad_dtype(node, "input x", x->dtype);
  if (!is_float_type(s->dtype) && s->dtype != OL_DTYPE_INT32) return ol_kernel_bad_dtype(node, "y_scale", s->dtype);
  ol_dtype od = zp ? zp->dtype : k->output_dtype != OL_DTYPE_UNDEFINED ? k->output_dtype : OL_DTYPE_UINT8;
  if (zp && k->output_dtype != OL_DTYPE_UNDEFINED && k->output_dtype != zp->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output_dtype %s does not match y_zero_point type %s",
                           ol_dtype_name(k->output_dtype), ol_dtype_name(zp->dtype));
  if (!quant_target_ok(node, od)) return ol_kernel_bad_dtype(node, "output", od);
  if (node->opset < 13 && ol_tcount(s) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "y_scale must be a scalar before opset 13");
  qparam_map m;
  OL_TRY(make_map(node, x, s, k->axis, k->block, &m));
  if (zp && !same_shape(zp, s) && !(ol_tcount(zp) == 1 && ol_tcount(s) == 1))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "y_zero_point and y_scale must have the same shape");
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, od, x->rank, x->dims, &y));
  int64_t n = ol_tcount(x);
  bool f8 = is_minifloat_q(od);
  ol_dtype prec = k->precision != OL_DTYPE_UNDEFINED ? k->precision
                  : is_float_type(s->dtype)           ? s->dtype
                                                      : OL_DTYPE_FLOAT;
  for (int64_t i = 0; i < n; i++) {
    int64_t j = map_index(&m, i);
    double q = divide_in(prec, ol_tensor_get_double(x, i), ol_tensor_get_double(s, j));
    if (f8) {
      q = (double)(float)q + get_q(zp, j);
    } else {
      q = rint_even(q) + get_q(zp, j);
    }
    store_q(y, i, q, k->saturate);
  }
  return OL_OK;
}

/* ------------------------------------------------------------ DequantizeLinear */

static ol_status dequantize_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  q_kernel *k = (q_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *x, *s, *zp = ol_ctx_input(ctx, 2);
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  OL_TRY(ol_ctx_require(ctx, 1, &s));
  double lo, hi;
  if (!int_range(x->dtype, &lo, &hi) && !(is_float8(x->dtype) && node->opset >= 19) &&
      !(x->dtype == OL_DTYPE_FLOAT4E2M1 && node->opset >= 23))
    return ol_kernel_bad_dtype(node, "input x", x->dtype);
  if (node->opset < 13 && ol_tcount(s) != 1)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "x_scale must be a scalar before opset 13");
  if (!is_float_type(s->dtype)) return ol_kernel_bad_dtype(node, "x_scale", s->dtype);
  if (zp && zp->dtype != x->dtype)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "x_zero_point type %s differs from x type %s",
                           ol_dtype_name(zp->dtype), ol_dtype_name(x->dtype));
  qparam_map m;
  OL_TRY(make_map(node, x, s, k->axis, k->block, &m));
  if (zp && !same_shape(zp, s) && !(ol_tcount(zp) == 1 && ol_tcount(s) == 1))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "x_zero_point and x_scale must have the same shape");
  ol_dtype od = k->output_dtype != OL_DTYPE_UNDEFINED ? k->output_dtype : s->dtype;
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, od, x->rank, x->dims, &y));
  int64_t n = ol_tcount(x);
  bool dbl = od == OL_DTYPE_DOUBLE;
  for (int64_t i = 0; i < n; i++) {
    int64_t j = map_index(&m, i);
    double d = ol_tensor_get_double(x, i) - get_q(zp, j);
    double v = dbl ? d * ol_tensor_get_double(s, j) : (double)((float)d * (float)ol_tensor_get_double(s, j));
    ol_tensor_set_double(y, i, v);
  }
  return OL_OK;
}

static ol_status q_create_common(const ol_node *node, ol_kernel_compute_fn fn, ol_kernel **out) {
  int64_t block = node->opset >= 21 ? ol_attr_int(node, "block_size", 0) : 0;
  if (block < 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'block_size' must be >= 0, got %lld", (long long)block);
  ol_dtype od = OL_DTYPE_UNDEFINED;
  if (node->opset >= 21) {
    int64_t o = ol_attr_int(node, "output_dtype", 0);
    if (o != 0) {
      od = (ol_dtype)o;
      if (!ol_dtype_valid(od))
        return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'output_dtype' %lld is not a valid type", (long long)o);
      if (fn == dequantize_compute && !is_float_type(od))
        return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'output_dtype' must be a float type");
    }
  }
  ol_dtype prec = OL_DTYPE_UNDEFINED;
  if (node->opset >= 23 && fn == quantize_compute) {
    int64_t p = ol_attr_int(node, "precision", 0);
    if (p != 0) {
      prec = (ol_dtype)p;
      if (!is_float_type(prec))
        return ol_kernel_error(node, OL_INVALID_MODEL,
                               "attribute 'precision' must be float32, float64, float16 or bfloat16, got %lld",
                               (long long)p);
    }
  }
  q_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, fn, (ol_kernel **)&k));
  k->axis = ol_attr_int(node, "axis", 1);
  k->block = block;
  k->saturate = ol_attr_int(node, "saturate", 1) != 0;
  k->output_dtype = od;
  k->precision = prec;
  *out = &k->base;
  return OL_OK;
}
static ol_status quantize_create(const ol_node *node, ol_kernel **out) {
  return q_create_common(node, quantize_compute, out);
}
static ol_status dequantize_create(const ol_node *node, ol_kernel **out) {
  return q_create_common(node, dequantize_compute, out);
}

/* ------------------------------------------------------------ DynamicQuantizeLinear */

static ol_status dynq_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const ol_node *node = kernel->node;
  const ol_tensor *x;
  OL_TRY(ol_ctx_require(ctx, 0, &x));
  if (x->dtype != OL_DTYPE_FLOAT) return ol_kernel_bad_dtype(node, "input x", x->dtype);
  const float *xd = ol_tdata(x);
  int64_t n = ol_tcount(x);
  float mn = 0.0f, mx = 0.0f;
  for (int64_t i = 0; i < n; i++) {
    mn = xd[i] < mn ? xd[i] : mn;
    mx = xd[i] > mx ? xd[i] : mx;
  }
  float scale = (mx - mn) / 255.0f;
  float zpf = scale != 0.0f ? (float)rint_even((double)(0.0f - mn / scale)) : 0.0f;
  zpf = zpf < 0 ? 0 : zpf > 255 ? 255 : zpf;
  ol_tensor *y, *ys, *yz;
  OL_TRY(ol_ctx_output(ctx, 0, OL_DTYPE_UINT8, x->rank, x->dims, &y));
  OL_TRY(ol_ctx_output(ctx, 1, OL_DTYPE_FLOAT, 0, NULL, &ys));
  OL_TRY(ol_ctx_output(ctx, 2, OL_DTYPE_UINT8, 0, NULL, &yz));
  *(float *)ol_tdata(ys) = scale;
  *(uint8_t *)ol_tdata(yz) = (uint8_t)zpf;
  uint8_t *yd = ol_tdata(y);
  for (int64_t i = 0; i < n; i++) {
    double q = scale != 0.0f ? rint_even((double)(xd[i] / scale)) + zpf : zpf;
    yd[i] = (uint8_t)(q < 0 ? 0 : q > 255 ? 255 : q);
  }
  return OL_OK;
}
static ol_status dynq_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, dynq_compute, out);
}

/* ------------------------------------------------------------ QLinearMatMul */

static bool is_q8(ol_dtype dt) { return dt == OL_DTYPE_UINT8 || dt == OL_DTYPE_INT8; }

/* Reads an int8/uint8/int32 zero point (or scale) element j (0 when absent). */
static double param_at(const ol_tensor *t, int64_t j) {
  if (!t) return 0.0;
  return ol_tensor_get_double(t, ol_tcount(t) == 1 ? 0 : j);
}

static ol_status qlinear_matmul_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  const ol_node *node = kernel->node;
  const ol_tensor *a, *as, *az, *b, *bs, *bz, *ys, *yz;
  OL_TRY(ol_ctx_require(ctx, 0, &a));
  OL_TRY(ol_ctx_require(ctx, 1, &as));
  OL_TRY(ol_ctx_require(ctx, 3, &b));
  OL_TRY(ol_ctx_require(ctx, 4, &bs));
  OL_TRY(ol_ctx_require(ctx, 6, &ys));
  az = ol_ctx_input(ctx, 2);
  bz = ol_ctx_input(ctx, 5);
  yz = ol_ctx_input(ctx, 7);
  if (!is_q8(a->dtype)) return ol_kernel_bad_dtype(node, "input a", a->dtype);
  if (!is_q8(b->dtype)) return ol_kernel_bad_dtype(node, "input b", b->dtype);
  if (a->rank < 1 || b->rank < 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "inputs must have rank >= 1");
  ol_dtype od = yz ? yz->dtype : OL_DTYPE_UINT8;
  if (!is_q8(od)) return ol_kernel_bad_dtype(node, "y_zero_point", od);
  int ra = a->rank, rb = b->rank;
  int64_t M = ra >= 2 ? a->dims[ra - 2] : 1, K = a->dims[ra - 1];
  int64_t Kb = rb >= 2 ? b->dims[rb - 2] : b->dims[0], N = rb >= 2 ? b->dims[rb - 1] : 1;
  if (K != Kb)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "inner dimensions differ: %lld vs %lld", (long long)K, (long long)Kb);
  int bra = ra > 2 ? ra - 2 : 0, brb = rb > 2 ? rb - 2 : 0;
  int64_t bdims[OL_MAX_RANK];
  int br;
  OL_TRY(ol_broadcast_shapes(node, bra, a->dims, brb, b->dims, &br, bdims));
  int64_t odims[OL_MAX_RANK];
  int orank = 0;
  for (int i = 0; i < br; i++) odims[orank++] = bdims[i];
  if (ra >= 2) odims[orank++] = M;
  if (rb >= 2) odims[orank++] = N;
  if (ol_tcount(as) != 1 && ol_tcount(as) != M)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "a_scale must be a scalar or have M=%lld values", (long long)M);
  if (ol_tcount(bs) != 1 && ol_tcount(bs) != N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "b_scale must be a scalar or have N=%lld values", (long long)N);
  if (ol_tcount(ys) != 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "y_scale must be a scalar");
  if (az && ol_tcount(az) != 1 && ol_tcount(az) != M)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "a_zero_point must be a scalar or have M=%lld values", (long long)M);
  if (bz && ol_tcount(bz) != 1 && ol_tcount(bz) != N)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "b_zero_point must be a scalar or have N=%lld values", (long long)N);
  if (yz && ol_tcount(yz) != 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "y_zero_point must be a scalar");
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, od, orank, odims, &y));
  int64_t batches = ol_shape_count(br, bdims);
  double lo = od == OL_DTYPE_UINT8 ? 0 : -128, hi = od == OL_DTYPE_UINT8 ? 255 : 127;
  float ysv = (float)param_at(ys, 0);
  double yzv = param_at(yz, 0);
  /* zero-point-shifted operands as int32 (a: per row, b: per column) */
  int64_t na = ol_tcount(a), nb = ol_tcount(b);
  int32_t *av = ol_alloc(ctx->allocator, sizeof(int32_t) * (size_t)(na > 0 ? na : 1));
  int32_t *bv = ol_alloc(ctx->allocator, sizeof(int32_t) * (size_t)(nb > 0 ? nb : 1));
  int64_t *acc = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(N > 0 ? N : 1));
  if (!av || !bv || !acc) {
    ol_dealloc(ctx->allocator, av);
    ol_dealloc(ctx->allocator, bv);
    ol_dealloc(ctx->allocator, acc);
    return OL_OUT_OF_MEMORY;
  }
  for (int64_t i = 0; i < na; i++)
    av[i] = (a->dtype == OL_DTYPE_UINT8 ? (int32_t)((const uint8_t *)ol_tdata(a))[i]
                                         : (int32_t)((const int8_t *)ol_tdata(a))[i]) -
            (int32_t)param_at(az, (i / (K > 0 ? K : 1)) % (M > 0 ? M : 1));
  for (int64_t i = 0; i < nb; i++)
    bv[i] = (b->dtype == OL_DTYPE_UINT8 ? (int32_t)((const uint8_t *)ol_tdata(b))[i]
                                         : (int32_t)((const int8_t *)ol_tdata(b))[i]) -
            (int32_t)param_at(bz, i % (N > 0 ? N : 1));
  for (int64_t bt = 0; bt < batches; bt++) {
    /* batch offsets with broadcasting */
    int64_t rem = bt, oa = 0, ob = 0, sa = 1, sb = 1;
    for (int i = br - 1; i >= 0; i--) {
      int64_t idx = rem % bdims[i];
      rem /= bdims[i];
      int ia = i - (br - bra), ib = i - (br - brb);
      if (ia >= 0) {
        oa += (a->dims[ia] == 1 ? 0 : idx) * sa;
        sa *= a->dims[ia];
      }
      if (ib >= 0) {
        ob += (b->dims[ib] == 1 ? 0 : idx) * sb;
        sb *= b->dims[ib];
      }
    }
    oa *= M * K;
    ob *= K * N;
    for (int64_t i = 0; i < M; i++) {
      for (int64_t j = 0; j < N; j++) acc[j] = 0;
      for (int64_t kk = 0; kk < K; kk++) {
        int64_t x = av[oa + i * K + kk];
        const int32_t *brow = bv + ob + kk * N;
        for (int64_t j = 0; j < N; j++) acc[j] += x * brow[j];
      }
      for (int64_t j = 0; j < N; j++) {
        float mult = (float)param_at(as, i) * (float)param_at(bs, j) / ysv;
        double q = rint_even((double)acc[j] * (double)mult) + yzv;
        q = q < lo ? lo : q > hi ? hi : q;
        ol_tensor_set_double(y, (bt * M + i) * N + j, q);
      }
    }
  }
  ol_dealloc(ctx->allocator, av);
  ol_dealloc(ctx->allocator, bv);
  ol_dealloc(ctx->allocator, acc);
  return OL_OK;
}
static ol_status qlinear_matmul_create(const ol_node *node, ol_kernel **out) {
  return ol_kernel_simple(node, qlinear_matmul_compute, out);
}

/* ------------------------------------------------------------ integer convolution */

typedef struct iconv_kernel {
  ol_kernel base;
  int auto_pad; /* 0 NOTSET, 1 SAME_UPPER, 2 SAME_LOWER, 3 VALID */
  int64_t group;
  int64_t nk, ks[OL_MAX_RANK];
  int64_t np, pads[2 * OL_MAX_RANK];
  int64_t ns, strides[OL_MAX_RANK];
  int64_t ndl, dilations[OL_MAX_RANK];
  bool qlinear;
} iconv_kernel;

static ol_status iconv_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  iconv_kernel *k = (iconv_kernel *)kernel;
  const ol_node *node = kernel->node;
  const ol_tensor *x, *w, *xz, *wz, *xs = NULL, *ws = NULL, *ys = NULL, *yz = NULL, *bias = NULL;
  if (k->qlinear) {
    OL_TRY(ol_ctx_require(ctx, 0, &x));
    OL_TRY(ol_ctx_require(ctx, 1, &xs));
    OL_TRY(ol_ctx_require(ctx, 3, &w));
    OL_TRY(ol_ctx_require(ctx, 4, &ws));
    OL_TRY(ol_ctx_require(ctx, 6, &ys));
    xz = ol_ctx_input(ctx, 2);
    wz = ol_ctx_input(ctx, 5);
    yz = ol_ctx_input(ctx, 7);
    bias = ol_ctx_input(ctx, 8);
  } else {
    OL_TRY(ol_ctx_require(ctx, 0, &x));
    OL_TRY(ol_ctx_require(ctx, 1, &w));
    xz = ol_ctx_input(ctx, 2);
    wz = ol_ctx_input(ctx, 3);
  }
  if (!is_q8(x->dtype)) return ol_kernel_bad_dtype(node, "input x", x->dtype);
  if (!is_q8(w->dtype)) return ol_kernel_bad_dtype(node, "input w", w->dtype);
  if (x->rank < 3 || w->rank != x->rank)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "x and w must have the same rank >= 3");
  int sp = x->rank - 2;
  int64_t N = x->dims[0], C = x->dims[1], M = w->dims[0], G = k->group;
  if (C % G || M % G || w->dims[1] != C / G)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "channels (x %lld, w %lldx%lld) do not match group %lld",
                           (long long)C, (long long)M, (long long)w->dims[1], (long long)G);
  if (k->nk > 0 && k->nk != sp) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "kernel_shape has wrong length");
  if ((k->ns > 0 && k->ns != sp) || (k->ndl > 0 && k->ndl != sp) || (k->np > 0 && k->np != 2 * sp))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "strides/dilations/pads do not match spatial rank %d", sp);
  int64_t ks[OL_MAX_RANK], st[OL_MAX_RANK], dl[OL_MAX_RANK], pb[OL_MAX_RANK], pe[OL_MAX_RANK], od[OL_MAX_RANK];
  for (int i = 0; i < sp; i++) {
    ks[i] = w->dims[2 + i];
    if (k->nk > 0 && k->ks[i] != ks[i])
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "kernel_shape does not match the weights");
    st[i] = k->ns > 0 ? k->strides[i] : 1;
    dl[i] = k->ndl > 0 ? k->dilations[i] : 1;
    pb[i] = k->np > 0 ? k->pads[i] : 0;
    pe[i] = k->np > 0 ? k->pads[sp + i] : 0;
    int64_t in = x->dims[2 + i], ek = (ks[i] - 1) * dl[i] + 1;
    if (k->auto_pad == 1 || k->auto_pad == 2) {
      int64_t o = (in + st[i] - 1) / st[i];
      int64_t total = (o - 1) * st[i] + ek - in;
      if (total < 0) total = 0;
      pb[i] = k->auto_pad == 1 ? total / 2 : total - total / 2;
      pe[i] = total - pb[i];
    } else if (k->auto_pad == 3) {
      pb[i] = pe[i] = 0;
    }
    od[i] = (in + pb[i] + pe[i] - ek) / st[i] + 1;
    if (od[i] < 0) od[i] = 0;
  }
  int64_t wsn = ws ? ol_tcount(ws) : 1, wzn = wz ? ol_tcount(wz) : 1;
  if ((wsn != 1 && wsn != M) || (wzn != 1 && wzn != M))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "weight scale/zero point must be scalars or have M=%lld values",
                           (long long)M);
  if (xz && ol_tcount(xz) != 1) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "x_zero_point must be a scalar");
  if (bias && (bias->dtype != OL_DTYPE_INT32 || ol_tcount(bias) != M))
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "B must be an int32 vector of length M=%lld", (long long)M);
  ol_dtype odt = OL_DTYPE_INT32;
  if (k->qlinear) {
    odt = yz ? yz->dtype : OL_DTYPE_UINT8;
    if (!is_q8(odt)) return ol_kernel_bad_dtype(node, "y_zero_point", odt);
  }
  int64_t odims[OL_MAX_RANK];
  odims[0] = N;
  odims[1] = M;
  for (int i = 0; i < sp; i++) odims[2 + i] = od[i];
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, odt, x->rank, odims, &y));
  int64_t osp = ol_shape_count(sp, od), isp = ol_shape_count(sp, x->dims + 2), ksp = ol_shape_count(sp, ks);
  int64_t cg = C / G, mg = M / G;
  double lo = odt == OL_DTYPE_UINT8 ? 0 : -128, hi = odt == OL_DTYPE_UINT8 ? 255 : 127;
  /* zero-point-shifted operands as int32, kernel offsets precomputed */
  int64_t nx = ol_tcount(x), nw = ol_tcount(w);
  int32_t *xv = ol_alloc(ctx->allocator, sizeof(int32_t) * (size_t)(nx > 0 ? nx : 1));
  int32_t *wv = ol_alloc(ctx->allocator, sizeof(int32_t) * (size_t)(nw > 0 ? nw : 1));
  int64_t *kidx = ol_alloc(ctx->allocator, sizeof(int64_t) * (size_t)(ksp * sp > 0 ? ksp * sp : 1));
  if (!xv || !wv || !kidx) {
    ol_dealloc(ctx->allocator, xv);
    ol_dealloc(ctx->allocator, wv);
    ol_dealloc(ctx->allocator, kidx);
    return OL_OUT_OF_MEMORY;
  }
  int32_t xzv = (int32_t)param_at(xz, 0);
  for (int64_t i = 0; i < nx; i++)
    xv[i] = (x->dtype == OL_DTYPE_UINT8 ? (int32_t)((const uint8_t *)ol_tdata(x))[i]
                                         : (int32_t)((const int8_t *)ol_tdata(x))[i]) - xzv;
  int64_t wper = nw / (M > 0 ? M : 1);
  for (int64_t i = 0; i < nw; i++)
    wv[i] = (w->dtype == OL_DTYPE_UINT8 ? (int32_t)((const uint8_t *)ol_tdata(w))[i]
                                         : (int32_t)((const int8_t *)ol_tdata(w))[i]) -
            (int32_t)param_at(wz, i / wper);
  for (int64_t kk = 0; kk < ksp; kk++) {
    int64_t krem = kk;
    for (int i = sp - 1; i >= 0; i--) {
      kidx[kk * sp + i] = (krem % ks[i]) * dl[i];
      krem /= ks[i];
    }
  }
  const int32_t *bias_d = bias ? ol_tdata(bias) : NULL;
  ol_status status = OL_OK;
  for (int64_t n = 0; n < N && status == OL_OK; n++)
    for (int64_t m = 0; m < M; m++) {
      int64_t g = m / mg;
      float mult = k->qlinear ? (float)param_at(xs, 0) * (float)param_at(ws, m) / (float)param_at(ys, 0) : 0.0f;
      for (int64_t o = 0; o < osp; o++) {
        int64_t base[OL_MAX_RANK], rem = o;
        for (int i = sp - 1; i >= 0; i--) {
          base[i] = (rem % od[i]) * st[i] - pb[i];
          rem /= od[i];
        }
        int64_t acc = 0;
        for (int64_t kk = 0; kk < ksp; kk++) {
          const int64_t *kd = kidx + kk * sp;
          int64_t xoff = 0;
          bool inside = true;
          for (int i = 0; i < sp; i++) {
            int64_t p = base[i] + kd[i];
            if (p < 0 || p >= x->dims[2 + i]) {
              inside = false;
              break;
            }
            xoff = xoff * x->dims[2 + i] + p;
          }
          if (!inside) continue;
          const int32_t *xp = xv + (n * C + g * cg) * isp + xoff;
          const int32_t *wp = wv + m * cg * ksp + kk;
          for (int64_t c = 0; c < cg; c++) acc += (int64_t)xp[c * isp] * wp[c * ksp];
        }
        int64_t yi = (n * M + m) * osp + o;
        if (!k->qlinear) {
          ((int32_t *)ol_tdata(y))[yi] = (int32_t)acc;
        } else {
          if (bias_d) acc += bias_d[m];
          double q = rint_even((double)acc * (double)mult) + param_at(yz, 0);
          q = q < lo ? lo : q > hi ? hi : q;
          ol_tensor_set_double(y, yi, q);
        }
      }
      if (ctx->cancelled && *ctx->cancelled) {
        status = OL_CANCELLED;
        break;
      }
    }
  ol_dealloc(ctx->allocator, xv);
  ol_dealloc(ctx->allocator, wv);
  ol_dealloc(ctx->allocator, kidx);
  return status;
}

static ol_status iconv_create_common(const ol_node *node, bool qlinear, ol_kernel **out) {
  iconv_kernel tmp;
  memset(&tmp, 0, sizeof tmp);
  const char *ap = ol_attr_string(node, "auto_pad", "NOTSET");
  if (!strcmp(ap, "NOTSET")) tmp.auto_pad = 0;
  else if (!strcmp(ap, "SAME_UPPER")) tmp.auto_pad = 1;
  else if (!strcmp(ap, "SAME_LOWER")) tmp.auto_pad = 2;
  else if (!strcmp(ap, "VALID")) tmp.auto_pad = 3;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported auto_pad '%s'", ap);
  tmp.group = ol_attr_int(node, "group", 1);
  if (tmp.group < 1) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'group' must be >= 1");
  OL_TRY(ol_attr_copy_ints(node, "kernel_shape", tmp.ks, OL_MAX_RANK, &tmp.nk, true));
  OL_TRY(ol_attr_copy_ints(node, "pads", tmp.pads, 2 * OL_MAX_RANK, &tmp.np, false));
  OL_TRY(ol_attr_copy_ints(node, "strides", tmp.strides, OL_MAX_RANK, &tmp.ns, true));
  OL_TRY(ol_attr_copy_ints(node, "dilations", tmp.dilations, OL_MAX_RANK, &tmp.ndl, true));
  iconv_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, iconv_compute, (ol_kernel **)&k));
  tmp.base = k->base;
  *k = tmp;
  k->qlinear = qlinear;
  *out = &k->base;
  return OL_OK;
}
static ol_status conv_integer_create(const ol_node *node, ol_kernel **out) {
  return iconv_create_common(node, false, out);
}
static ol_status qlinear_conv_create(const ol_node *node, ol_kernel **out) {
  return iconv_create_common(node, true, out);
}

const ol_op_schema ol_schema_quantize_linear[] = {
    {"", "QuantizeLinear", 10, OL_OPSET_LATEST, quantize_create, ol_infer_quantize_linear,
     "float32 float16 bfloat16 float64 int32 -> uint8 int8 (21: uint16 int16 uint4 int4; 19: float8)"},
    {"", "DequantizeLinear", 10, OL_OPSET_LATEST, dequantize_create, ol_infer_dequantize_linear,
     "uint8 int8 int32 (21: uint16 int16 uint4 int4; 19: float8) -> float32 float16 bfloat16"},
    {"", "DynamicQuantizeLinear", 11, OL_OPSET_LATEST, dynq_create, ol_infer_dynamic_quantize_linear, "float32 -> uint8"},
    {"", "QLinearMatMul", 10, OL_OPSET_LATEST, qlinear_matmul_create, ol_infer_qlinear_matmul, "uint8 int8"},
    {"", "ConvInteger", 10, OL_OPSET_LATEST, conv_integer_create, ol_infer_conv_integer, "uint8 int8 -> int32"},
    {"", "QLinearConv", 10, OL_OPSET_LATEST, qlinear_conv_create, ol_infer_qlinear_conv, "uint8 int8"},
    {0},
};
