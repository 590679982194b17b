/* Einsum 12-23 (registered in nn.c): explicit and implicit output, ellipsis
 * broadcasting, repeated labels (diagonals), any number of operands.
 *
 * A direct implementation: one loop over every output element and, inside,
 * over every combination of the summed labels, multiplying the operands in
 * order. Floating types accumulate in double (rounded once to the output
 * type), integers in 64-bit wrapping arithmetic. Simple and exact in order,
 * not fast: large contractions should be written as MatMul. */
#include <stdlib.h>
#include <string.h>

#include "ops/nn/nn.h"

static inline double getd(const ol_tensor *t, int64_t i) {
  switch (t->dtype) {
    case OL_DTYPE_FLOAT: return ((const float *)ol_tdata(t))[i];
    case OL_DTYPE_DOUBLE: return ((const double *)ol_tdata(t))[i];
    default: return ol_tensor_get_double(t, i);
  }
}

/* Integer element as 64 bits (exact for int64/uint64). */
static inline uint64_t geti(const ol_tensor *t, int64_t i) {
  if (t->dtype == OL_DTYPE_INT64 || t->dtype == OL_DTYPE_UINT64) return ((const uint64_t *)ol_tdata(t))[i];
  return (uint64_t)(int64_t)ol_tensor_get_double(t, i);
}

static inline void setd(ol_tensor *t, int64_t i, double v) {
  switch (t->dtype) {
    case OL_DTYPE_FLOAT: ((float *)ol_tdata(t))[i] = (float)v; break;
    case OL_DTYPE_DOUBLE: ((double *)ol_tdata(t))[i] = v; break;
    default: ol_tensor_set_double(t, i, v); break;
  }
}

/* ------------------------------------------------------------ Einsum */

#define EIN_LABELS (52 + OL_MAX_RANK) /* a-z, A-Z, then ellipsis dims */
#define EIN_MAX_INPUTS 16

typedef struct einsum_term {
  int n;                       /* labels written (ellipsis counts as one entry, -1) */
  int labels[OL_MAX_RANK + 1]; /* label ids; -1 marks the ellipsis */
  bool ellipsis;
} einsum_term;

typedef struct einsum_kernel {
  ol_kernel base;
  int n_inputs;
  einsum_term in[EIN_MAX_INPUTS];
  einsum_term out;
  bool explicit_out;
} einsum_kernel;

static int ein_label(char c) {
  if (c >= 'a' && c <= 'z') return c - 'a';
  if (c >= 'A' && c <= 'Z') return 26 + c - 'A';
  return -2;
}

static ol_status ein_parse_term(const ol_node *node, const char *s, size_t len, einsum_term *t) {
  t->n = 0;
  t->ellipsis = false;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == ' ') continue;
    if (s[i] == '.') {
      if (i + 2 >= len || s[i + 1] != '.' || s[i + 2] != '.' || t->ellipsis)
        return ol_kernel_error(node, OL_INVALID_MODEL, "malformed or repeated ellipsis in equation");
      t->ellipsis = true;
      if (t->n > OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_MODEL, "term too long");
      t->labels[t->n++] = -1;
      i += 2;
      continue;
    }
    int l = ein_label(s[i]);
    if (l < 0)
      return ol_kernel_error(node, OL_INVALID_MODEL, "invalid character '%c' in equation", s[i]);
    if (t->n > OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_MODEL, "term too long");
    t->labels[t->n++] = l;
  }
  return OL_OK;
}

static ol_status einsum_compute(ol_kernel *kernel, ol_kernel_ctx *ctx);

ol_status ol_nn_einsum_create(const ol_node *node, ol_kernel **out) {
  const char *eq = ol_attr_string(node, "equation", NULL);
  if (!eq) return ol_kernel_error(node, OL_INVALID_MODEL, "attribute 'equation' is required");
  einsum_kernel *k;
  OL_TRY(ol_kernel_alloc(node, sizeof *k, einsum_compute, (ol_kernel **)&k));
  const char *arrow = strstr(eq, "->");
  size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
  ol_status s = OL_OK;
  size_t start = 0;
  k->n_inputs = 0;
  for (size_t i = 0; i <= lhs_len && s == OL_OK; i++) {
    if (i == lhs_len || eq[i] == ',') {
      if (k->n_inputs >= EIN_MAX_INPUTS) {
        s = ol_kernel_error(node, OL_NOT_IMPLEMENTED, "more than %d operands", EIN_MAX_INPUTS);
        break;
      }
      s = ein_parse_term(node, eq + start, i - start, &k->in[k->n_inputs++]);
      start = i + 1;
    }
  }
  if (s == OL_OK && arrow) {
    k->explicit_out = true;
    s = ein_parse_term(node, arrow + 2, strlen(arrow + 2), &k->out);
  }
  if (s != OL_OK) {
    free(k);
    return s;
  }
  *out = &k->base;
  return OL_OK;
}

static ol_status einsum_compute(ol_kernel *kernel, ol_kernel_ctx *ctx) {
  einsum_kernel *k = (einsum_kernel *)kernel;
  const ol_node *node = ctx->node;
  if ((int)ctx->num_inputs != k->n_inputs)
    return ol_kernel_error(node, OL_INVALID_ARGUMENT, "equation has %d operands but %zu inputs are given",
                           k->n_inputs, ctx->num_inputs);
  const ol_tensor *in[EIN_MAX_INPUTS];
  int64_t label_dim[EIN_LABELS];
  for (int l = 0; l < EIN_LABELS; l++) label_dim[l] = -1;
  int ell_rank = 0;
  /* per input: label of each dimension */
  int dim_label[EIN_MAX_INPUTS][OL_MAX_RANK];
  for (int t = 0; t < k->n_inputs; t++) {
    OL_TRY(ol_ctx_require(ctx, (size_t)t, &in[t]));
    if (in[t]->dtype != in[0]->dtype)
      return ol_kernel_error(node, OL_INVALID_ARGUMENT, "input %d is %s but input 0 is %s", t,
                             ol_dtype_name(in[t]->dtype), ol_dtype_name(in[0]->dtype));
    const einsum_term *term = &k->in[t];
    int named = term->n - (term->ellipsis ? 1 : 0);
    int er = in[t]->rank - named;
    if (er < 0 || (!term->ellipsis && er != 0))
      return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                             "operand %d has rank %d but its term names %d dimensions", t,
                             in[t]->rank, named);
    if (er > ell_rank) ell_rank = er;
  }
  for (int t = 0; t < k->n_inputs; t++) {
    const einsum_term *term = &k->in[t];
    int er = in[t]->rank - (term->n - (term->ellipsis ? 1 : 0));
    int d = 0;
    for (int i = 0; i < term->n; i++) {
      if (term->labels[i] == -1) {
        for (int e = 0; e < er; e++) dim_label[t][d++] = 52 + (ell_rank - er) + e;
      } else {
        dim_label[t][d++] = term->labels[i];
      }
    }
    for (int i = 0; i < in[t]->rank; i++) {
      int l = dim_label[t][i];
      int64_t dim = in[t]->dims[i];
      if (label_dim[l] < 0 || label_dim[l] == 1) label_dim[l] = dim;
      else if (dim != label_dim[l] && !(l >= 52 && dim == 1))
        return ol_kernel_error(node, OL_INVALID_ARGUMENT,
                               "label '%c' has inconsistent sizes %lld and %lld",
                               l < 26 ? 'a' + l : l < 52 ? 'A' + l - 26 : '.',
                               (long long)label_dim[l], (long long)dim);
    }
  }
  /* output labels */
  int out_labels[OL_MAX_RANK];
  int out_n = 0;
  if (k->explicit_out) {
    for (int i = 0; i < k->out.n; i++) {
      if (k->out.labels[i] == -1) {
        for (int e = 0; e < ell_rank; e++) out_labels[out_n++] = 52 + e;
      } else {
        int l = k->out.labels[i];
        if (label_dim[l] < 0)
          return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output label '%c' is not in any input",
                                 l < 26 ? 'a' + l : 'A' + l - 26);
        if (out_n >= OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank too large");
        for (int j = 0; j < out_n; j++) /* a repeated output label would be looped over twice */
          if (out_labels[j] == l)
            return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output label '%c' appears more than once",
                                   l < 26 ? 'a' + l : 'A' + l - 26);
        out_labels[out_n++] = l;
      }
    }
  } else {
    int count[EIN_LABELS] = {0};
    for (int t = 0; t < k->n_inputs; t++)
      for (int i = 0; i < k->in[t].n; i++)
        if (k->in[t].labels[i] >= 0) count[k->in[t].labels[i]]++;
    for (int e = 0; e < ell_rank; e++) out_labels[out_n++] = 52 + e;
    for (int l = 0; l < 52; l++)
      if (count[l] == 1) {
        if (out_n >= OL_MAX_RANK) return ol_kernel_error(node, OL_INVALID_ARGUMENT, "output rank too large");
        out_labels[out_n++] = l;
      }
  }
  /* all loop labels: output first, then summed */
  int loop[EIN_LABELS], nloop = 0;
  bool in_out[EIN_LABELS] = {false};
  for (int i = 0; i < out_n; i++) {
    loop[nloop++] = out_labels[i];
    in_out[out_labels[i]] = true;
  }
  for (int l = 0; l < EIN_LABELS; l++)
    if (label_dim[l] >= 0 && !in_out[l]) loop[nloop++] = l;
  int64_t dims[OL_MAX_RANK];
  for (int i = 0; i < out_n; i++) dims[i] = label_dim[out_labels[i]];
  /* strides of each loop label in each input (0 when absent/broadcast) */
  int64_t str[EIN_MAX_INPUTS][EIN_LABELS];
  for (int t = 0; t < k->n_inputs; t++) {
    int64_t ls[EIN_LABELS] = {0}, s = 1;
    for (int i = in[t]->rank - 1; i >= 0; i--) {
      if (in[t]->dims[i] != 1) ls[dim_label[t][i]] += s;
      s *= in[t]->dims[i];
    }
    for (int j = 0; j < nloop; j++) str[t][j] = ls[loop[j]];
  }
  ol_dtype dt = in[0]->dtype;
  bool fl = ol_dtype_info(dt)->is_float;
  if (dt == OL_DTYPE_STRING || dt == OL_DTYPE_BOOL || ol_dtype_bits(dt) < 8)
    return ol_kernel_bad_dtype(node, "input", dt);
  ol_tensor *y;
  OL_TRY(ol_ctx_output(ctx, 0, dt, out_n, dims, &y));
  int64_t n_out = ol_tcount(y), n_sum = 1;
  for (int j = out_n; j < nloop; j++) n_sum *= label_dim[loop[j]];
  if (n_out == 0) return OL_OK;
  int64_t idx[EIN_LABELS] = {0}, off[EIN_MAX_INPUTS] = {0};
  int64_t ldim[EIN_LABELS];
  for (int j = 0; j < nloop; j++) ldim[j] = label_dim[loop[j]];
  for (int64_t o = 0; o < n_out; o++) {
    double accd = 0.0;
    uint64_t acci = 0;
    for (int64_t s = 0; s < n_sum; s++) {
      if (fl) {
        double p = 1.0;
        for (int t = 0; t < k->n_inputs; t++) p *= getd(in[t], off[t]);
        accd += p;
      } else {
        uint64_t p = 1;
        for (int t = 0; t < k->n_inputs; t++) p *= geti(in[t], off[t]);
        acci += p;
      }
      /* advance the summed labels */
      for (int j = nloop - 1; j >= out_n; j--) {
        for (int t = 0; t < k->n_inputs; t++) off[t] += str[t][j];
        if (++idx[j] < ldim[j]) break;
        for (int t = 0; t < k->n_inputs; t++) off[t] -= str[t][j] * ldim[j];
        idx[j] = 0;
      }
    }
    if (fl) setd(y, o, accd);
    else if (dt == OL_DTYPE_INT64) ((int64_t *)ol_tdata(y))[o] = (int64_t)acci;
    else if (dt == OL_DTYPE_UINT64) ((uint64_t *)ol_tdata(y))[o] = acci;
    else ol_tensor_set_double(y, o, (double)(int64_t)acci);
    for (int j = out_n - 1; j >= 0; j--) {
      for (int t = 0; t < k->n_inputs; t++) off[t] += str[t][j];
      if (++idx[j] < ldim[j]) break;
      for (int t = 0; t < k->n_inputs; t++) off[t] -= str[t][j] * ldim[j];
      idx[j] = 0;
    }
  }
  return OL_OK;
}
