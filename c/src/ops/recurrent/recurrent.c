/* Recurrent operators (ai.onnx).
 *
 *   LSTM 1-23 (7, 14 layout, 22)   GRU 1-23 (linear_before_reset from 3)
 *   RNN 1-23   (output_sequence of versions 1-6 does not change the results)
 *
 * forward / reverse / bidirectional, activations with activation_alpha/beta,
 * clip, sequence_lens, initial states, LSTM peepholes and input_forget,
 * layout (14+). Computation is in double in a fixed order (per batch row,
 * per time step, per gate: input product plus its bias, then recurrent
 * product plus its bias), rounded once to the output type. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/recurrent/recurrent.h"
#include "simd/math.h"

enum {
  ACT_SIGMOID, ACT_TANH, ACT_RELU, ACT_AFFINE, ACT_LEAKY, ACT_THRESH, ACT_SCALED_TANH,
  ACT_HARD_SIGMOID, ACT_ELU, ACT_SOFTSIGN, ACT_SOFTPLUS
};
enum { CELL_LSTM, CELL_GRU, CELL_RNN };

typedef struct act {
  int kind;
  double alpha, beta;
} act;

typedef struct rnn_kernel {
  ol_kernel base;
  int cell;
  int num_dir;   /* 1 or 2 */
  bool reverse;  /* single direction reverse */
  int64_t hidden;
  double clip;   /* <= 0: none */
  bool input_forget, linear_before_reset;
  int layout;
  act acts[6];
} rnn_kernel;

static double apply_act(const act *a, double x) {
  switch (a->kind) {
    case ACT_SIGMOID: return x >= 0 ? 1.0 / (1.0 + ol_exp(-x)) : ol_exp(x) / (1.0 + ol_exp(x));
    case ACT_TANH: return ol_tanh(x);
    case ACT_RELU: return x > 0 ? x : 0.0;
    case ACT_AFFINE: return a->alpha * x + a->beta;
    case ACT_LEAKY: return x >= 0 ? x : a->alpha * x;
    case ACT_THRESH: return x > a->alpha ? x : 0.0;
    case ACT_SCALED_TANH: return a->alpha * ol_tanh(a->beta * x);
    case ACT_HARD_SIGMOID: {
      double v = a->alpha * x + a->beta;
      return v < 0 ? 0 : v > 1 ? 1 : v;
    }
    case ACT_ELU: return x >= 0 ? x : a->alpha * (ol_exp(x) - 1.0);
    case ACT_SOFTSIGN: return x / (1.0 + fabs(x));
    default: return x > 0 ? x + ol_log1p(ol_exp(-x)) : ol_log1p(ol_exp(x)); /* softplus */
  }
}

static bool is_float_type(ol_dtype dt) {
  return dt == OL_DTYPE_FLOAT || dt == OL_DTYPE_DOUBLE || dt == OL_DTYPE_FLOAT16 ||
         dt == OL_DTYPE_BFLOAT16;
}

static ol_status load(const ol_node *node, const ol_tensor *t, const char *what, int rank,
                      const int64_t *dims, double **out) {
  *out = NULL;
  if (!t) return OL_OK;
  if (!is_float_type(t->dtype)) return ol_kernel_bad_dtype(node, what, t->dtype);
  bool ok = t->rank == rank;
  for (int i = 0; ok && i < rank; i++) ok = t->dims[i] == dims[i];
  if (!ok) {
    char buf[96];
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input '%s' has shape %s, expected rank %d with dims %lld,%lld%s",
                           what, ol_tensor_describe(t, buf, sizeof buf), rank, (long long)dims[0],
                           (long long)(rank > 1 ? dims[1] : 0), rank > 2 ? ",..." : "");
  }
  int64_t n = ol_tcount(t);
  double *d = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!d) return OL_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; i++) d[i] = ol_tensor_get_double(t, i);
  *out = d;
  return OL_OK;
}

static inline double clipv(double v, double c) {
  if (c > 0) return v < -c ? -c : v > c ? c : v;
  return v;
}

static ol_status rnn_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  rnn_kernel *k = (rnn_kernel *)kernel;
  const ol_node *node = ctx->node;
  const ol_tensor *xt, *wt, *rt;
  OL_TRY(ol_ctx_require(ctx, 0, &xt));
  OL_TRY(ol_ctx_require(ctx, 1, &wt));
  OL_TRY(ol_ctx_require(ctx, 2, &rt));
  if (!is_float_type(xt->dtype)) return ol_kernel_bad_dtype(node, "input X", xt->dtype);
  if (xt->rank != 3) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input X must have rank 3, got %d", xt->rank);
  int64_t T = k->layout ? xt->dims[1] : xt->dims[0];
  int64_t B = k->layout ? xt->dims[0] : xt->dims[1];
  int64_t I = xt->dims[2];
  int64_t H = k->hidden;
  int G = k->cell == CELL_LSTM ? 4 : k->cell == CELL_GRU ? 3 : 1;
  int64_t nd = k->num_dir;
  if (H <= 0) {
    if (wt->rank != 3 || wt->dims[1] % G)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot infer hidden_size from W");
    H = wt->dims[1] / G;
  }
  const ol_tensor *bt = ol_ctx_input(ctx, 3), *lt = ol_ctx_input(ctx, 4), *ht = ol_ctx_input(ctx, 5);
  const ol_tensor *ct = k->cell == CELL_LSTM ? ol_ctx_input(ctx, 6) : NULL;
  const ol_tensor *pt = k->cell == CELL_LSTM ? ol_ctx_input(ctx, 7) : NULL;
  double *X = NULL, *W = NULL, *R = NULL, *Bv = NULL, *H0 = NULL, *C0 = NULL, *P = NULL;
  double *h = NULL, *c = NULL, *gates = NULL, *tmp = NULL;
  int64_t *lens = NULL;
  ol_status st;
  int64_t wd[3] = {nd, G * H, I}, rd[3] = {nd, G * H, H}, bd[2] = {nd, 2 * G * H};
  int64_t sd[3] = {nd, B, H}, sd1[3] = {B, nd, H}, pd[2] = {nd, 3 * H};
  st = load(node, xt, "X", 3, xt->dims, &X);
  if (st == OL_OK) st = load(node, wt, "W", 3, wd, &W);
  if (st == OL_OK) st = load(node, rt, "R", 3, rd, &R);
  if (st == OL_OK) st = load(node, bt, "B", 2, bd, &Bv);
  if (st == OL_OK) st = load(node, ht, "initial_h", 3, k->layout ? sd1 : sd, &H0);
  if (st == OL_OK) st = load(node, ct, "initial_c", 3, k->layout ? sd1 : sd, &C0);
  if (st == OL_OK) st = load(node, pt, "P", 2, pd, &P);
  if (st != OL_OK) goto done;
  lens = malloc(sizeof(int64_t) * (size_t)(B > 0 ? B : 1));
  h = malloc(sizeof(double) * (size_t)(H > 0 ? H : 1));
  c = malloc(sizeof(double) * (size_t)(H > 0 ? H : 1));
  gates = malloc(sizeof(double) * (size_t)(G * H > 0 ? G * H : 1));
  tmp = malloc(sizeof(double) * (size_t)(H > 0 ? H : 1));
  if (!lens || !h || !c || !gates || !tmp) {
    st = OL_OUT_OF_MEMORY;
    goto done;
  }
  for (int64_t b = 0; b < B; b++) lens[b] = T;
  if (lt) {
    if ((lt->dtype != OL_DTYPE_INT32 && lt->dtype != OL_DTYPE_INT64) || lt->rank != 1 || lt->dims[0] != B) {
      st = ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence_lens must be an int32/int64 tensor of shape [%lld]",
                           (long long)B);
      goto done;
    }
    for (int64_t b = 0; b < B; b++) {
      lens[b] = (int64_t)ol_tensor_get_double(lt, b);
      if (lens[b] < 0 || lens[b] > T) {
        st = ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside [0, %lld]",
                             (long long)b, (long long)lens[b], (long long)T);
        goto done;
      }
    }
  }
  ol_tensor *Y = NULL, *Yh = NULL, *Yc = NULL;
  int64_t ydims[4];
  if (k->layout) {
    ydims[0] = B; ydims[1] = T; ydims[2] = nd; ydims[3] = H;
  } else {
    ydims[0] = T; ydims[1] = nd; ydims[2] = B; ydims[3] = H;
  }
  if (ol_ctx_wants_output(ctx, 0) && (st = ol_ctx_output(ctx, 0, xt->dtype, 4, ydims, &Y)) != OL_OK) goto done;
  if (ol_ctx_wants_output(ctx, 1) && (st = ol_ctx_output(ctx, 1, xt->dtype, 3, k->layout ? sd1 : sd, &Yh)) != OL_OK)
    goto done;
  if (k->cell == CELL_LSTM && ol_ctx_wants_output(ctx, 2) &&
      (st = ol_ctx_output(ctx, 2, xt->dtype, 3, k->layout ? sd1 : sd, &Yc)) != OL_OK)
    goto done;
  int nact = k->cell == CELL_LSTM ? 3 : k->cell == CELL_GRU ? 2 : 1;
  for (int64_t d = 0; d < nd; d++) {
    bool rev = nd == 2 ? d == 1 : k->reverse;
    const act *af = &k->acts[d * nact];
    const double *Wd = W + d * G * H * I, *Rd = R + d * G * H * H;
    const double *Wb = Bv ? Bv + d * 2 * G * H : NULL, *Rb = Bv ? Bv + d * 2 * G * H + G * H : NULL;
    const double *Pd = P ? P + d * 3 * H : NULL;
    for (int64_t b = 0; b < B; b++) {
      int64_t so = k->layout ? (b * nd + d) * H : (d * B + b) * H;
      for (int64_t j = 0; j < H; j++) {
        h[j] = H0 ? H0[so + j] : 0.0;
        c[j] = C0 ? C0[so + j] : 0.0;
      }
      int64_t len = lens[b];
      for (int64_t s = 0; s < len; s++) {
        int64_t t = rev ? len - 1 - s : s;
        const double *x = X + (k->layout ? (b * T + t) * I : (t * B + b) * I);
        /* gates = x W^T + (bias) ; recurrent part added per cell */
        for (int64_t g = 0; g < G * H; g++) {
          double v = 0.0;
          const double *wr = Wd + g * I;
          for (int64_t i = 0; i < I; i++) v += x[i] * wr[i];
          if (Wb) v += Wb[g];
          gates[g] = v;
        }
        if (k->cell == CELL_GRU) {
          /* z, r gates */
          for (int64_t g = 0; g < 2 * H; g++) {
            double v = 0.0;
            const double *rr = Rd + g * H;
            for (int64_t i = 0; i < H; i++) v += h[i] * rr[i];
            v += gates[g];
            if (Rb) v += Rb[g];
            gates[g] = apply_act(&af[0], clipv(v, k->clip));
          }
          const double *z = gates, *r = gates + H;
          for (int64_t j = 0; j < H; j++) {
            const double *rr = Rd + (2 * H + j) * H;
            double v = 0.0;
            if (k->linear_before_reset) {
              for (int64_t i = 0; i < H; i++) v += h[i] * rr[i];
              if (Rb) v += Rb[2 * H + j];
              v = r[j] * v;
            } else {
              for (int64_t i = 0; i < H; i++) v += (r[i] * h[i]) * rr[i];
              if (Rb) v += Rb[2 * H + j];
            }
            tmp[j] = apply_act(&af[1], clipv(gates[2 * H + j] + v, k->clip));
          }
          for (int64_t j = 0; j < H; j++) h[j] = (1.0 - z[j]) * tmp[j] + z[j] * h[j];
        } else {
          for (int64_t g = 0; g < G * H; g++) {
            double v = 0.0;
            const double *rr = Rd + g * H;
            for (int64_t i = 0; i < H; i++) v += h[i] * rr[i];
            gates[g] += v;
            if (Rb) gates[g] += Rb[g];
          }
          if (k->cell == CELL_RNN) {
            for (int64_t j = 0; j < H; j++) h[j] = apply_act(&af[0], clipv(gates[j], k->clip));
          } else {
            double *gi = gates, *go = gates + H, *gf = gates + 2 * H, *gc = gates + 3 * H;
            for (int64_t j = 0; j < H; j++) {
              double iv = gi[j] + (Pd ? Pd[j] * c[j] : 0.0);
              double fv = gf[j] + (Pd ? Pd[2 * H + j] * c[j] : 0.0);
              iv = apply_act(&af[0], clipv(iv, k->clip));
              fv = k->input_forget ? 1.0 - iv : apply_act(&af[0], clipv(fv, k->clip));
              double cv = apply_act(&af[1], clipv(gc[j], k->clip));
              double cn = fv * c[j] + iv * cv;
              double ov = go[j] + (Pd ? Pd[H + j] * cn : 0.0);
              ov = apply_act(&af[0], clipv(ov, k->clip));
              c[j] = cn;
              h[j] = ov * apply_act(&af[2], cn);
            }
          }
        }
        if (Y) {
          int64_t yo = k->layout ? ((b * T + t) * nd + d) * H : ((t * nd + d) * B + b) * H;
          for (int64_t j = 0; j < H; j++) ol_tensor_set_double(Y, yo + j, h[j]);
        }
      }
      if (Yh)
        for (int64_t j = 0; j < H; j++) ol_tensor_set_double(Yh, so + j, h[j]);
      if (Yc)
        for (int64_t j = 0; j < H; j++) ol_tensor_set_double(Yc, so + j, c[j]);
      if (ctx->cancelled && *ctx->cancelled) {
        st = OL_CANCELLED;
        goto done;
      }
    }
  }
done:
  free(X); free(W); free(R); free(Bv); free(H0); free(C0); free(P);
  free(h); free(c); free(gates); free(tmp); free(lens);
  return st;
}

static const struct {
  const char *name;
  int kind;
  double alpha, beta;
  int uses; /* 0 none, 1 alpha, 2 alpha+beta */
} act_table[] = {
    {"Sigmoid", ACT_SIGMOID, 0, 0, 0},   {"Tanh", ACT_TANH, 0, 0, 0},
    {"Relu", ACT_RELU, 0, 0, 0},         {"Affine", ACT_AFFINE, 1.0, 0.0, 2},
    {"LeakyRelu", ACT_LEAKY, 0.01, 0, 1}, {"ThresholdedRelu", ACT_THRESH, 1.0, 0, 1},
    {"ScaledTanh", ACT_SCALED_TANH, 1.0, 1.0, 2}, {"HardSigmoid", ACT_HARD_SIGMOID, 0.2, 0.5, 2},
    {"Elu", ACT_ELU, 1.0, 0, 1},         {"Softsign", ACT_SOFTSIGN, 0, 0, 0},
    {"Softplus", ACT_SOFTPLUS, 0, 0, 0},
};

static ol_status rnn_create_common(const ol_node *node, int cell, ol_kernel **out) {
  const char *dir = ol_attr_string(node, "direction", "forward");
  int nd;
  bool reverse = false;
  if (!strcmp(dir, "forward")) nd = 1;
  else if (!strcmp(dir, "reverse")) nd = 1, reverse = true;
  else if (!strcmp(dir, "bidirectional")) nd = 2;
  else return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'direction' must be forward, reverse or bidirectional, got '%s'", dir);
  int64_t hidden = ol_attr_int(node, "hidden_size", 0);
  if (ol_node_attr(node, "hidden_size") && hidden <= 0)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'hidden_size' must be positive");
  int layout = (int)ol_attr_int(node, "layout", 0);
  if (layout != 0 && layout != 1)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'layout' must be 0 or 1");
  int nact = cell == CELL_LSTM ? 3 : cell == CELL_GRU ? 2 : 1;
  const char *defaults[3];
  if (cell == CELL_LSTM) defaults[0] = "Sigmoid", defaults[1] = "Tanh", defaults[2] = "Tanh";
  else if (cell == CELL_GRU) defaults[0] = "Sigmoid", defaults[1] = "Tanh";
  else defaults[0] = "Tanh";
  const ol_attr *acts = ol_node_attr(node, "activations");
  if (acts && acts->type != OL_ATTR_STRINGS)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'activations' must be a list of strings");
  if (acts && (int64_t)acts->count != nact * nd)
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'activations' has %zu names, expected %d", acts->count,
                           nact * nd);
  const float *alphas = NULL, *betas = NULL;
  int64_t na = ol_attr_floats(node, "activation_alpha", &alphas);
  int64_t nb = ol_attr_floats(node, "activation_beta", &betas);
  rnn_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, rnn_compute, (ol_kernel **)&k));
  k->cell = cell;
  k->num_dir = nd;
  k->reverse = reverse;
  k->hidden = hidden;
  k->layout = node->opset >= 14 ? layout : 0;
  const ol_attr *ca = ol_node_attr(node, "clip");
  k->clip = ca ? ca->f : 0.0;
  if (ca && !(ca->f > 0)) {
    free(k);
    return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'clip' must be positive");
  }
  k->input_forget = ol_attr_int(node, "input_forget", 0) != 0;
  k->linear_before_reset = node->opset >= 3 && ol_attr_int(node, "linear_before_reset", 0) != 0;
  int64_t ai = 0, bi = 0;
  for (int i = 0; i < nact * nd; i++) {
    const char *name = acts ? acts->strings[i] : defaults[i % nact];
    size_t j;
    for (j = 0; j < sizeof act_table / sizeof act_table[0]; j++)
      if (!strcmp(act_table[j].name, name)) break;
    if (j == sizeof act_table / sizeof act_table[0]) {
      free(k);
      return ol_kernel_error(node, OL_INVALID_MODEL, "unsupported activation '%s'", name);
    }
    k->acts[i].kind = act_table[j].kind;
    k->acts[i].alpha = act_table[j].alpha;
    k->acts[i].beta = act_table[j].beta;
    if (acts && act_table[j].uses >= 1 && ai < na) k->acts[i].alpha = alphas[ai++];
    if (acts && act_table[j].uses >= 2 && bi < nb) k->acts[i].beta = betas[bi++];
  }
  *out = &k->base;
  return OL_OK;
}

static ol_status lstm_create(const ol_node *node, ol_kernel **out) {
  return rnn_create_common(node, CELL_LSTM, out);
}
static ol_status gru_create(const ol_node *node, ol_kernel **out) {
  return rnn_create_common(node, CELL_GRU, out);
}
static ol_status rnn_create(const ol_node *node, ol_kernel **out) {
  return rnn_create_common(node, CELL_RNN, out);
}

/* ------------------------------------------------------------ shape function */

/* RNN, GRU, LSTM: Y [seq, dirs, batch, hidden] (layout 1: [batch, seq, dirs,
 * hidden]); Y_h, Y_c [dirs, batch, hidden] (layout 1: [batch, dirs, hidden]). */
ol_status ol_infer_recurrent(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) return OL_OK;
  int64_t hidden = ol_attr_int(ctx->node, "hidden_size", -1);
  bool batch_first = ol_attr_int(ctx->node, "layout", 0) != 0;
  ol_dim h = hidden > 0 ? ol_dim_of(hidden) : ol_dim_unknown();
  ol_dim dirs = ol_dim_of(strcmp(ol_attr_string(ctx->node, "direction", "forward"), "bidirectional") == 0 ? 2 : 1);
  ol_dim seq = x->rank == 3 ? x->dims[batch_first ? 1 : 0] : ol_dim_unknown();
  ol_dim batch = x->rank == 3 ? x->dims[batch_first ? 0 : 1] : ol_dim_unknown();
  ol_dim y[4] = {seq, dirs, batch, h}, state[3] = {dirs, batch, h};
  if (batch_first) {
    y[0] = batch, y[1] = seq, y[2] = dirs;
    state[0] = batch, state[1] = dirs;
  }
  for (size_t o = 0; o < ctx->num_outputs && o < 3; o++)
    ol_infer_set_tensor(&ctx->outputs[o], x->dtype, o == 0 ? 4 : 3, o == 0 ? y : state);
  return OL_OK;
}

#define FT "float16 bfloat16 float32 float64"
const ol_op_schema ol_schema_recurrent[] = {
    {"", "LSTM", 1, OL_OPSET_LATEST, lstm_create, ol_infer_recurrent, FT},
    {"", "GRU", 1, OL_OPSET_LATEST, gru_create, ol_infer_recurrent, FT},
    {"", "RNN", 1, OL_OPSET_LATEST, rnn_create, ol_infer_recurrent, FT},
    {0},
};
