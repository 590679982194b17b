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
  return ol_dtype_is_arith_float(dt);
}

/* *out: t's values as doubles, allocated from alloc (NULL when t is absent). */
static ol_status load(ol_allocator *alloc, const ol_node *node, const ol_tensor *t, const char *what, int rank,
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
  double *d = ol_alloc(alloc, sizeof(double) * (size_t)(n > 0 ? n : 1));
  if (!d) return OL_OUT_OF_MEMORY;
  for (int64_t i = 0; i < n; i++) d[i] = ol_tensor_get_double(t, i);
  *out = d;
  return OL_OK;
}

static inline double clipv(double v, double c) {
  if (c > 0) return v < -c ? -c : v > c ? c : v;
  return v;
}

/* One execution: inputs as doubles, shapes, state rows and outputs. */
typedef struct rnn_run {
  const rnn_kernel *k;
  int64_t T, B, I, H, G, nd;
  double *X, *W, *R, *Bv, *H0, *C0, *P; /* inputs (NULL: absent) */
  double *h, *c, *gates, *tmp;          /* one row of state and gates */
  int64_t *lens;
  ol_tensor *Y, *Yh, *Yc;
} rnn_run;

/* gates = x W^T (+ Wb), the recurrent part added per cell. */
static void project_input(const rnn_run *r, const double *x, const double *Wd, const double *Wb) {
  for (int64_t g = 0; g < r->G * r->H; g++) {
    double v = 0.0;
    const double *wr = Wd + g * r->I;
    for (int64_t i = 0; i < r->I; i++) v += x[i] * wr[i];
    if (Wb) v += Wb[g];
    r->gates[g] = v;
  }
}

/* One GRU step: z and r gates, the candidate (linear_before_reset or not), h. */
static void gru_step(const rnn_run *r, const act *af, const double *Rd, const double *Rb) {
  const rnn_kernel *k = r->k;
  int64_t H = r->H;
  double *h = r->h, *gates = r->gates, *tmp = r->tmp;
  for (int64_t g = 0; g < 2 * H; g++) {
    double v = 0.0;
    const double *rr = Rd + g * H;
    for (int64_t i = 0; i < H; i++) v += h[i] * rr[i];
    v += gates[g];
    if (Rb) v += Rb[g];
    gates[g] = apply_act(&af[0], clipv(v, k->clip));
  }
  const double *z = gates, *rg = gates + H;
  for (int64_t j = 0; j < H; j++) {
    const double *rr = Rd + (2 * H + j) * H;
    double v = 0.0;
    if (k->linear_before_reset) {
      for (int64_t i = 0; i < H; i++) v += h[i] * rr[i];
      if (Rb) v += Rb[2 * H + j];
      v = rg[j] * v;
    } else {
      for (int64_t i = 0; i < H; i++) v += (rg[i] * h[i]) * rr[i];
      if (Rb) v += Rb[2 * H + j];
    }
    tmp[j] = apply_act(&af[1], clipv(gates[2 * H + j] + v, k->clip));
  }
  for (int64_t j = 0; j < H; j++) h[j] = (1.0 - z[j]) * tmp[j] + z[j] * h[j];
}

/* One RNN or LSTM step (LSTM: gates i, o, f, c with peepholes Pd). */
static void rnn_lstm_step(const rnn_run *r, const act *af, const double *Rd, const double *Rb, const double *Pd) {
  const rnn_kernel *k = r->k;
  int64_t H = r->H;
  double *h = r->h, *c = r->c, *gates = r->gates;
  for (int64_t g = 0; g < r->G * H; g++) {
    double v = 0.0;
    const double *rr = Rd + g * H;
    for (int64_t i = 0; i < H; i++) v += h[i] * rr[i];
    gates[g] += v;
    if (Rb) gates[g] += Rb[g];
  }
  if (k->cell == CELL_RNN) {
    for (int64_t j = 0; j < H; j++) h[j] = apply_act(&af[0], clipv(gates[j], k->clip));
    return;
  }
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

/* Direction d over batch row b: the state from initial_h/c, every step of
 * its sequence, Y rows as they come, Y_h/Y_c at the end. */
static void run_row(const rnn_run *r, int64_t d, int64_t b) {
  const rnn_kernel *k = r->k;
  int64_t G = r->G, H = r->H, I = r->I, T = r->T, nd = r->nd;
  int nact = k->cell == CELL_LSTM ? 3 : k->cell == CELL_GRU ? 2 : 1;
  bool rev = nd == 2 ? d == 1 : k->reverse;
  const act *af = &k->acts[d * nact];
  const double *Wd = r->W + d * G * H * I, *Rd = r->R + d * G * H * H;
  const double *Wb = r->Bv ? r->Bv + d * 2 * G * H : NULL, *Rb = r->Bv ? r->Bv + d * 2 * G * H + G * H : NULL;
  const double *Pd = r->P ? r->P + d * 3 * H : NULL;
  int64_t so = k->layout ? (b * nd + d) * H : (d * r->B + b) * H;
  for (int64_t j = 0; j < H; j++) {
    r->h[j] = r->H0 ? r->H0[so + j] : 0.0;
    r->c[j] = r->C0 ? r->C0[so + j] : 0.0;
  }
  int64_t len = r->lens[b];
  for (int64_t s = 0; s < len; s++) {
    int64_t t = rev ? len - 1 - s : s;
    project_input(r, r->X + (k->layout ? (b * T + t) * I : (t * r->B + b) * I), Wd, Wb);
    if (k->cell == CELL_GRU) gru_step(r, af, Rd, Rb);
    else rnn_lstm_step(r, af, Rd, Rb, Pd);
    if (r->Y) {
      int64_t yo = k->layout ? ((b * T + t) * nd + d) * H : ((t * nd + d) * r->B + b) * H;
      for (int64_t j = 0; j < H; j++) ol_tensor_set_double(r->Y, yo + j, r->h[j]);
    }
  }
  if (r->Yh)
    for (int64_t j = 0; j < H; j++) ol_tensor_set_double(r->Yh, so + j, r->h[j]);
  if (r->Yc)
    for (int64_t j = 0; j < H; j++) ol_tensor_set_double(r->Yc, so + j, r->c[j]);
}

/* Sequence lengths (all T without sequence_lens), each in [0, T]. */
static ol_status read_lens(const ol_node *node, const ol_tensor *lt, rnn_run *r) {
  for (int64_t b = 0; b < r->B; b++) r->lens[b] = r->T;
  if (!lt) return OL_OK;
  if ((lt->dtype != OL_DTYPE_INT32 && lt->dtype != OL_DTYPE_INT64) || lt->rank != 1 || lt->dims[0] != r->B)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence_lens must be an int32/int64 tensor of shape [%lld]",
                           (long long)r->B);
  for (int64_t b = 0; b < r->B; b++) {
    r->lens[b] = (int64_t)ol_tensor_get_double(lt, b);
    if (r->lens[b] < 0 || r->lens[b] > r->T)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "sequence_lens[%lld] = %lld is outside [0, %lld]", (long long)b,
                             (long long)r->lens[b], (long long)r->T);
  }
  return OL_OK;
}

/* Inputs as doubles (checked against their shapes) and the state rows. */
static ol_status load_inputs(ol_kernel_ctx *ctx, const ol_tensor *xt, const ol_tensor *wt, const ol_tensor *rt, rnn_run *r) {
  const ol_node *node = ctx->node;
  const rnn_kernel *k = r->k;
  int64_t nd = r->nd, G = r->G, H = r->H, I = r->I;
  const ol_tensor *bt = ol_ctx_input(ctx, 3), *ht = ol_ctx_input(ctx, 5);
  const ol_tensor *ct = k->cell == CELL_LSTM ? ol_ctx_input(ctx, 6) : NULL;
  const ol_tensor *pt = k->cell == CELL_LSTM ? ol_ctx_input(ctx, 7) : NULL;
  int64_t wd[3] = {nd, G * H, I}, rd[3] = {nd, G * H, H}, bd[2] = {nd, 2 * G * H};
  int64_t sd[3] = {nd, r->B, H}, sd1[3] = {r->B, nd, H}, pd[2] = {nd, 3 * H};
  ol_allocator *al = ctx->allocator;
  OL_TRY(load(al, node, xt, "X", 3, xt->dims, &r->X));
  OL_TRY(load(al, node, wt, "W", 3, wd, &r->W));
  OL_TRY(load(al, node, rt, "R", 3, rd, &r->R));
  OL_TRY(load(al, node, bt, "B", 2, bd, &r->Bv));
  OL_TRY(load(al, node, ht, "initial_h", 3, k->layout ? sd1 : sd, &r->H0));
  OL_TRY(load(al, node, ct, "initial_c", 3, k->layout ? sd1 : sd, &r->C0));
  OL_TRY(load(al, node, pt, "P", 2, pd, &r->P));
  r->lens = ol_alloc(al, sizeof(int64_t) * (size_t)(r->B > 0 ? r->B : 1));
  r->h = ol_alloc(al, sizeof(double) * (size_t)(H > 0 ? H : 1));
  r->c = ol_alloc(al, sizeof(double) * (size_t)(H > 0 ? H : 1));
  r->gates = ol_alloc(al, sizeof(double) * (size_t)(G * H > 0 ? G * H : 1));
  r->tmp = ol_alloc(al, sizeof(double) * (size_t)(H > 0 ? H : 1));
  return r->lens && r->h && r->c && r->gates && r->tmp ? OL_OK : OL_OUT_OF_MEMORY;
}

/* Y, Y_h and (LSTM) Y_c, those wanted. */
static ol_status make_outputs(ol_kernel_ctx *ctx, const ol_tensor *xt, rnn_run *r) {
  const rnn_kernel *k = r->k;
  int64_t ydims[4] = {r->T, r->nd, r->B, r->H}, sd[3] = {r->nd, r->B, r->H}, sd1[3] = {r->B, r->nd, r->H};
  if (k->layout) ydims[0] = r->B, ydims[1] = r->T, ydims[2] = r->nd;
  if (ol_ctx_wants_output(ctx, 0)) OL_TRY(ol_ctx_output(ctx, 0, xt->dtype, 4, ydims, &r->Y));
  if (ol_ctx_wants_output(ctx, 1)) OL_TRY(ol_ctx_output(ctx, 1, xt->dtype, 3, k->layout ? sd1 : sd, &r->Yh));
  if (k->cell == CELL_LSTM && ol_ctx_wants_output(ctx, 2))
    OL_TRY(ol_ctx_output(ctx, 2, xt->dtype, 3, k->layout ? sd1 : sd, &r->Yc));
  return OL_OK;
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
  rnn_run r = {k, k->layout ? xt->dims[1] : xt->dims[0], k->layout ? xt->dims[0] : xt->dims[1], xt->dims[2], k->hidden,
               k->cell == CELL_LSTM ? 4 : k->cell == CELL_GRU ? 3 : 1, k->num_dir};
  if (r.H <= 0) {
    if (wt->rank != 3 || wt->dims[1] % r.G) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "cannot infer hidden_size from W");
    r.H = wt->dims[1] / r.G;
  }
  ol_status st = load_inputs(ctx, xt, wt, rt, &r);
  if (st == OL_OK) st = read_lens(node, ol_ctx_input(ctx, 4), &r);
  if (st == OL_OK) st = make_outputs(ctx, xt, &r);
  for (int64_t d = 0; st == OL_OK && d < r.nd; d++)
    for (int64_t b = 0; st == OL_OK && b < r.B; b++) {
      run_row(&r, d, b);
      if (ctx->cancelled && *ctx->cancelled) st = OL_CANCELLED;
    }
  void *scratch[] = {r.X, r.W, r.R, r.Bv, r.H0, r.C0, r.P, r.h, r.c, r.gates, r.tmp, r.lens};
  for (size_t i = 0; i < sizeof scratch / sizeof scratch[0]; i++) ol_dealloc(ctx->allocator, scratch[i]);
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
