/* Autoregressive generation (seed 000, "Autoregressive generation").
 *
 * ol_generate runs the token loop for a decoder that maps INT64 input_ids
 * [batch, seq] to floating-point logits [batch, seq, vocab] or [batch, vocab]:
 *
 *  - models without GraphProto.persistent_bindings use an ordinary session and
 *    evaluate the whole growing prefix every step (no cache is guessed from
 *    names);
 *  - models with bindings use an ol_state created from the caller's initial
 *    values of the bound inputs (taken from the feeds by name): the prompt is
 *    evaluated once, then one token per step. Every call owns fresh state.
 *
 * Declared INT64 attention_mask / position_ids inputs are created when the
 * caller does not feed them (mask of ones; positions = cumulative sum of the
 * mask minus one, clamped at 0) and extended every step; a caller-fed mask
 * (left padding as zeros) or position_ids are extended the same way. Every
 * other feed is passed unchanged to every step. Caller feeds and the model are
 * never written to: ids, mask and positions live in buffers owned here and are
 * copied into fresh tensors for every run.
 *
 * Sampling: temperature 0 is greedy (lowest index wins ties; NaN logits never
 * win). temperature > 0 samples softmax(logits / T) computed in double with
 * the project's own ol_exp, drawing one uniform number per unfinished row per
 * step (row order) from a splitmix64 generator seeded with options->seed. Only
 * integer operations, IEEE-exact arithmetic and ol_exp are involved, so a
 * seed gives the same tokens natively and in wasm.
 *
 * Logits of every supported dtype (FLOAT, DOUBLE, FLOAT16, BFLOAT16) are
 * widened exactly to double before use.
 *
 * Stopping: after max_new_tokens (default 16 from ol_generate_options_init),
 * when every row has emitted eos_token_id (finished rows then receive
 * pad_token_id, or eos when pad is -1), or when on_token returns nonzero.
 * on_token gets the new token of every row and the 0-based index of the step.
 *
 * Cancellation: the caller's completion is polled before every step
 * (OL_CANCELLED, nothing returned) and watched by every run, so a cancel also
 * stops a running step between nodes. State runs watch it without completing
 * it (ol_state_run_watching): the caller's completion is never marked
 * completed by ol_generate. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/value.h"
#include "ir/model.h"
#include "onnxlight.h"
#include "runtime/completion.h"
#include "runtime/generate.h"
#include "runtime/session.h"
#include "simd/math.h"

/* Default number of new tokens when the caller does not set one. */
#define OL_GENERATE_DEFAULT_MAX_NEW_TOKENS 16

void ol_generate_options_init(ol_generate_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->max_new_tokens = OL_GENERATE_DEFAULT_MAX_NEW_TOKENS;
  options->temperature = 0.0;
  options->seed = 0;
  options->eos_token_id = -1;
  options->pad_token_id = -1;
  options->input_ids_name = NULL;      /* "input_ids" */
  options->logits_name = NULL;         /* "logits" */
  options->attention_mask_name = NULL; /* "attention_mask" */
  options->position_ids_name = NULL;   /* "position_ids" */
  options->on_token = NULL;
  options->on_token_user = NULL;
}

/* ------------------------------------------------------------ PRNG */

/* splitmix64: 64-bit state, integer operations only. */
typedef struct gen_rng {
  uint64_t state;
} gen_rng;

static uint64_t rng_next(gen_rng *r) {
  uint64_t z = (r->state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/* Uniform in [0, 1) with 53 random bits (exact conversion and scaling). */
static double rng_uniform(gen_rng *r) { return (double)(rng_next(r) >> 11) * 0x1p-53; }

/* ------------------------------------------------------------ logits */

static int logits_dtype_ok(ol_dtype dt) { return ol_dtype_is_arith_float(dt); }

/* Logit i of a row of a logits_dtype_ok type (the dtype table's to_double). */
static double logit_at(ol_dtype dt, const void *row, int64_t i) { return ol_dtype_info(dt)->to_double(row, i); }

/* Greedy: the largest non-NaN logit, lowest index on ties; 0 if all NaN. */
static int64_t argmax_row(ol_dtype dt, const void *row, int64_t vocab) {
  int64_t best = -1;
  double best_x = 0;
  for (int64_t v = 0; v < vocab; v++) {
    double x = logit_at(dt, row, v);
    if (isnan(x)) continue;
    if (best < 0 || x > best_x) {
      best = v;
      best_x = x;
    }
  }
  return best < 0 ? 0 : best;
}

/* Samples softmax(logits / T). weights: scratch of vocab doubles. Draws one
 * uniform number whatever the logits. */
static int64_t sample_row(ol_dtype dt, const void *row, int64_t vocab, double temperature, gen_rng *rng,
                          double *weights) {
  double u = rng_uniform(rng);
  int64_t best = argmax_row(dt, row, vocab);
  double m = logit_at(dt, row, best);
  /* Degenerate rows (all NaN, all -inf, or a +inf logit): greedy. */
  if (isnan(m) || isinf(m)) return best;
  double sum = 0;
  for (int64_t v = 0; v < vocab; v++) {
    double x = logit_at(dt, row, v);
    double w = isnan(x) ? 0.0 : ol_exp((x - m) / temperature);
    weights[v] = w;
    sum += w;
  }
  /* sum >= 1 (the maximum contributes exp(0)), finite (every weight <= 1). */
  double target = u * sum, acc = 0;
  int64_t last = best;
  for (int64_t v = 0; v < vocab; v++) {
    if (weights[v] <= 0) continue;
    acc += weights[v];
    last = v;
    if (target < acc) return v;
  }
  return last;
}

int64_t ol_generate_pick_token(ol_dtype dtype, const void *row, int64_t vocab, double temperature,
                               uint64_t *rng_state, double *weights) {
  if (temperature == 0.0 || !weights || !rng_state) return argmax_row(dtype, row, vocab);
  gen_rng rng = {*rng_state};
  int64_t token = sample_row(dtype, row, vocab, temperature, &rng, weights);
  *rng_state = rng.state;
  return token;
}

/* ------------------------------------------------------------ the loop */

typedef struct gen {
  /* resources released by gen_free */
  ol_session *session;
  ol_state *state;
  int64_t *tokens, *mask, *pos; /* [batch][cap] row-major */
  double *weights;              /* [vocab] sampling scratch */
  int64_t n_weights;
  int64_t *step_tokens;         /* [batch] */
  unsigned char *finished;      /* [batch] */
  const char **run_names;
  ol_value **run_values;
  const char **bound_names;
  ol_value **bound_values;
  /* description */
  const ol_session *meta;
  ol_allocator *allocator;
  int64_t batch, prompt, cap, len;
} gen;

static void gen_free(gen *g) {
  ol_state_destroy(g->state);
  ol_session_destroy(g->session);
  free(g->tokens);
  free(g->mask);
  free(g->pos);
  free(g->weights);
  free(g->step_tokens);
  free(g->finished);
  free(g->run_names);
  free(g->run_values);
  free(g->bound_names);
  free(g->bound_values);
}

/* Grows the [batch][cap] buffers so that column `need - 1` exists. */
static ol_status gen_reserve(gen *g, int64_t need) {
  if (need <= g->cap) return OL_OK;
  int64_t cap = g->cap * 2;
  if (cap < need) cap = need;
  if ((uint64_t)cap > SIZE_MAX / sizeof(int64_t) / (uint64_t)g->batch)
    return ol_error(OL_OUT_OF_MEMORY, "ol_generate: %lld tokens per row do not fit in memory", (long long)cap);
  size_t bytes = (size_t)g->batch * (size_t)cap * sizeof(int64_t);
  int64_t *bufs[3] = {ol_xmalloc(bytes), ol_xmalloc(bytes), ol_xmalloc(bytes)};
  if (!bufs[0] || !bufs[1] || !bufs[2]) {
    for (int i = 0; i < 3; i++) free(bufs[i]);
    return OL_OUT_OF_MEMORY;
  }
  int64_t **old[3] = {&g->tokens, &g->mask, &g->pos};
  for (int i = 0; i < 3; i++) {
    if (*old[i])
      for (int64_t b = 0; b < g->batch; b++)
        memcpy(bufs[i] + b * cap, *old[i] + b * g->cap, (size_t)g->len * sizeof(int64_t));
    free(*old[i]);
    *old[i] = bufs[i];
  }
  g->cap = cap;
  return OL_OK;
}

/* New INT64 tensor [batch, end - start] from columns [start, end) of buf. */
static ol_status gen_slice(const gen *g, const int64_t *buf, int64_t start, int64_t end, ol_value **out) {
  int64_t dims[2] = {g->batch, end - start};
  OL_TRY(ol_tensor_create(g->allocator, OL_DTYPE_INT64, dims, 2, out));
  int64_t *dst = ol_tensor_data(*out);
  for (int64_t b = 0; b < g->batch; b++)
    memcpy(dst + b * (end - start), buf + b * g->cap + start, (size_t)(end - start) * sizeof(int64_t));
  return OL_OK;
}

static int find_session_input(const ol_session *s, const char *name, size_t *index) {
  size_t n = ol_session_input_count(s);
  for (size_t i = 0; i < n; i++)
    if (strcmp(ol_session_input_name(s, i), name) == 0) {
      if (index) *index = i;
      return 1;
    }
  return 0;
}

static int find_session_output(const ol_session *s, const char *name, size_t *index) {
  size_t n = ol_session_output_count(s);
  for (size_t i = 0; i < n; i++)
    if (strcmp(ol_session_output_name(s, i), name) == 0) {
      if (index) *index = i;
      return 1;
    }
  return 0;
}

static const char *describe(const ol_value *v, char *buf, size_t size) {
  if (v->kind != OL_VALUE_TENSOR) return "a non-tensor value";
  return ol_tensor_describe(&v->tensor, buf, size);
}

/* The caller's attention_mask: INT64 [batch, prompt] of 0/1, left padded
 * (zeros only before the first one) and ending with a one in every row. */
static ol_status check_mask(const gen *g, const char *name, const ol_value *v) {
  char got[256];
  if (v->kind != OL_VALUE_TENSOR || v->tensor.dtype != OL_DTYPE_INT64 || v->tensor.rank != 2 ||
      v->tensor.dims[0] != g->batch || v->tensor.dims[1] != g->prompt)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: '%s' must be int64[%lld,%lld] like the input ids, got %s", name,
                    (long long)g->batch, (long long)g->prompt, describe(v, got, sizeof got));
  const int64_t *m = ol_tensor_data(v);
  for (int64_t b = 0; b < g->batch; b++) {
    const int64_t *row = m + b * g->prompt;
    for (int64_t j = 0; j < g->prompt; j++) {
      if (row[j] != 0 && row[j] != 1)
        return ol_error(OL_INVALID_ARGUMENT, "ol_generate: '%s'[%lld,%lld] is %lld; a mask holds 0 or 1", name,
                        (long long)b, (long long)j, (long long)row[j]);
      if (j > 0 && row[j] < row[j - 1])
        return ol_error(OL_INVALID_ARGUMENT,
                        "ol_generate: row %lld of '%s' is not left-padded (a 0 at position %lld follows a 1); "
                        "prompts must be unpadded or left-padded",
                        (long long)b, name, (long long)j);
    }
    if (row[g->prompt - 1] != 1)
      return ol_error(OL_INVALID_ARGUMENT, "ol_generate: row %lld of '%s' is all padding", (long long)b, name);
  }
  return OL_OK;
}

/* Declared type of an ids/mask/positions input, which must be INT64. */
static ol_status check_declared_int64(const ol_session *s, size_t index, const char *name) {
  ol_value_info info;
  OL_TRY(ol_session_input_info(s, index, &info));
  if (info.kind != OL_VALUE_TENSOR || (info.dtype != OL_DTYPE_UNDEFINED && info.dtype != OL_DTYPE_INT64))
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: model input '%s' is declared as %s; generation needs int64",
                    name, info.kind != OL_VALUE_TENSOR ? "a non-tensor" : ol_dtype_name(info.dtype));
  if (info.rank >= 0 && info.rank != 2)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: model input '%s' has rank %d; generation needs [batch, sequence]",
                    name, info.rank);
  return OL_OK;
}

static ol_payload_pool *step_pool(const gen *g) {
  return g->state ? ol_state_payload_pool(g->state) : g->session ? g->session->pool : NULL;
}

static ol_status run_step(gen *g, ol_context *context, const char *logits_name, size_t n_run,
                          ol_completion *completion, ol_value **logits) {
  const char *out_names[1] = {logits_name};
  if (g->state)
    return ol_state_run_watching(g->state, context, g->run_names, g->run_values, n_run, out_names, logits, 1,
                                 completion);
  return ol_session_run_with(g->session, context, g->run_names, g->run_values, n_run, out_names, logits, 1,
                             completion);
}

static ol_status generate(gen *g, ol_model *model, ol_context *context, const char *const *names,
                          ol_value *const *feeds, size_t n_feeds, const ol_generate_options *o,
                          const ol_session_options *session_options, ol_completion *completion, ol_value **out) {
  const char *ids_name = o->input_ids_name ? o->input_ids_name : "input_ids";
  const char *logits_name = o->logits_name ? o->logits_name : "logits";
  const char *mask_name = o->attention_mask_name ? o->attention_mask_name : "attention_mask";
  const char *pos_name = o->position_ids_name ? o->position_ids_name : "position_ids";
  char got[256];

  /* ---- options */
  if (o->max_new_tokens < 0)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: max_new_tokens must be >= 0, got %lld",
                    (long long)o->max_new_tokens);
  if (!(o->temperature >= 0) || isinf(o->temperature))
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: temperature must be a finite number >= 0, got %g",
                    o->temperature);
  if (o->eos_token_id < -1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: eos_token_id must be >= 0 or -1 (none), got %lld",
                    (long long)o->eos_token_id);
  if (o->pad_token_id < -1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: pad_token_id must be >= 0 or -1 (eos), got %lld",
                    (long long)o->pad_token_id);
  int64_t pad = o->pad_token_id >= 0 ? o->pad_token_id : o->eos_token_id;

  /* ---- feeds */
  if (n_feeds && (!names || !feeds)) return ol_error(OL_INVALID_ARGUMENT, "ol_generate: feed names or values are NULL");
  const ol_value *ids = NULL, *user_mask = NULL, *user_pos = NULL;
  for (size_t i = 0; i < n_feeds; i++) {
    if (!names[i] || !feeds[i]) return ol_error(OL_INVALID_ARGUMENT, "ol_generate: feed %zu has no name or no value", i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[k], names[i]) == 0)
        return ol_error(OL_INVALID_ARGUMENT, "ol_generate: input '%s' is fed twice", names[i]);
    if (strcmp(names[i], ids_name) == 0) ids = feeds[i];
    else if (strcmp(names[i], mask_name) == 0) user_mask = feeds[i];
    else if (strcmp(names[i], pos_name) == 0) user_pos = feeds[i];
  }
  if (!ids) return ol_error(OL_INVALID_ARGUMENT, "ol_generate: the feeds have no '%s' (int64 [batch, prompt])", ids_name);
  if (ids->kind != OL_VALUE_TENSOR || ids->tensor.dtype != OL_DTYPE_INT64 || ids->tensor.rank != 2 ||
      ids->tensor.dims[0] < 1 || ids->tensor.dims[1] < 1)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: '%s' must be a non-empty int64 [batch, prompt] tensor, got %s",
                    ids_name, describe(ids, got, sizeof got));
  g->batch = ids->tensor.dims[0];
  g->prompt = ids->tensor.dims[1];
  g->allocator = session_options ? session_options->allocator : NULL;

  /* ---- session or state */
  const Onnx__GraphProto *gp = model->data->proto ? model->data->proto->graph : NULL;
  size_t n_bindings = gp ? gp->n_persistent_bindings : 0;
  g->run_names = ol_xcalloc(n_feeds + 3, sizeof *g->run_names);
  g->run_values = ol_xcalloc(n_feeds + 3, sizeof *g->run_values);
  if (!g->run_names || !g->run_values) return OL_OUT_OF_MEMORY;
  size_t n_fixed = 0;
  if (n_bindings) {
    g->bound_names = ol_xcalloc(n_bindings, sizeof *g->bound_names);
    g->bound_values = ol_xcalloc(n_bindings, sizeof *g->bound_values);
    if (!g->bound_names || !g->bound_values) return OL_OUT_OF_MEMORY;
  }
  size_t n_bound = 0;
  for (size_t i = 0; i < n_feeds; i++) {
    /* ids, mask and positions are rebuilt for every step */
    if (strcmp(names[i], ids_name) == 0 || strcmp(names[i], mask_name) == 0 || strcmp(names[i], pos_name) == 0)
      continue;
    int bound = 0;
    for (size_t b = 0; b < n_bindings; b++)
      if (gp->persistent_bindings[b]->input_name && strcmp(gp->persistent_bindings[b]->input_name, names[i]) == 0)
        bound = 1;
    if (bound) {
      g->bound_names[n_bound] = names[i];
      g->bound_values[n_bound++] = feeds[i];
    } else {
      g->run_names[n_fixed] = names[i];
      g->run_values[n_fixed++] = feeds[i];
    }
  }
  ol_status st;
  if (n_bindings) {
    st = ol_state_create(model, g->bound_names, g->bound_values, n_bound, session_options, &g->state);
    if (st != OL_OK) return ol_error_wrap(st, "ol_generate: creating the persistent state");
    g->meta = ol_state_session(g->state);
  } else {
    st = ol_session_create(model, session_options, &g->session);
    if (st != OL_OK) return ol_error_wrap(st, "ol_generate: creating the session");
    g->meta = g->session;
  }

  /* ---- model interface */
  size_t idx;
  if (!find_session_input(g->meta, ids_name, &idx))
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: the model has no input '%s'", ids_name);
  OL_TRY(check_declared_int64(g->meta, idx, ids_name));
  if (!find_session_output(g->meta, logits_name, &idx))
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: the model has no output '%s'", logits_name);
  {
    ol_value_info info;
    OL_TRY(ol_session_output_info(g->meta, idx, &info));
    if (info.kind != OL_VALUE_TENSOR || (info.dtype != OL_DTYPE_UNDEFINED && !logits_dtype_ok(info.dtype)))
      return ol_error(OL_INVALID_ARGUMENT,
                      "ol_generate: output '%s' is declared as %s; logits must be float32, float64, float16 or bfloat16",
                      logits_name, info.kind != OL_VALUE_TENSOR ? "a non-tensor" : ol_dtype_name(info.dtype));
    if (info.rank >= 0 && info.rank != 2 && info.rank != 3)
      return ol_error(OL_INVALID_ARGUMENT,
                      "ol_generate: output '%s' has rank %d; logits must be [batch, sequence, vocab] or [batch, vocab]",
                      logits_name, info.rank);
  }
  int has_mask = find_session_input(g->meta, mask_name, &idx);
  if (has_mask && !user_mask) OL_TRY(check_declared_int64(g->meta, idx, mask_name));
  if (!has_mask && user_mask)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: '%s' is fed but the model has no such input", mask_name);
  int has_pos = find_session_input(g->meta, pos_name, &idx);
  if (has_pos && !user_pos) OL_TRY(check_declared_int64(g->meta, idx, pos_name));
  if (!has_pos && user_pos)
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: '%s' is fed but the model has no such input", pos_name);
  if (user_mask) OL_TRY(check_mask(g, mask_name, user_mask));
  if (user_pos && (user_pos->kind != OL_VALUE_TENSOR || user_pos->tensor.dtype != OL_DTYPE_INT64 ||
                   user_pos->tensor.rank != 2 || user_pos->tensor.dims[0] != g->batch ||
                   user_pos->tensor.dims[1] != g->prompt))
    return ol_error(OL_INVALID_ARGUMENT, "ol_generate: '%s' must be int64[%lld,%lld] like the input ids, got %s",
                    pos_name, (long long)g->batch, (long long)g->prompt, describe(user_pos, got, sizeof got));

  /* ---- buffers: prompt ids, mask and positions */
  int64_t first_cap = o->max_new_tokens < 256 ? o->max_new_tokens : 256;
  OL_TRY(gen_reserve(g, g->prompt + (first_cap > 0 ? first_cap : 1)));
  g->step_tokens = ol_xcalloc((size_t)g->batch, sizeof *g->step_tokens);
  g->finished = ol_xcalloc((size_t)g->batch, 1);
  if (!g->step_tokens || !g->finished) return OL_OUT_OF_MEMORY;
  const int64_t *src_ids = ol_tensor_data(ids);
  const int64_t *src_mask = user_mask ? ol_tensor_data(user_mask) : NULL;
  const int64_t *src_pos = user_pos ? ol_tensor_data(user_pos) : NULL;
  for (int64_t b = 0; b < g->batch; b++) {
    int64_t *t = g->tokens + b * g->cap, *m = g->mask + b * g->cap, *p = g->pos + b * g->cap;
    int64_t ones = 0;
    for (int64_t j = 0; j < g->prompt; j++) {
      t[j] = src_ids[b * g->prompt + j];
      m[j] = src_mask ? src_mask[b * g->prompt + j] : 1;
      ones += m[j];
      p[j] = src_pos ? src_pos[b * g->prompt + j] : (ones > 0 ? ones - 1 : 0);
    }
  }
  g->len = g->prompt;

  /* ---- the loop */
  gen_rng rng = {o->seed};
  int64_t generated = 0;
  while (generated < o->max_new_tokens) {
    if (ol_completion_is_cancelled(completion))
      return ol_error(OL_CANCELLED, "ol_generate: cancelled after %lld tokens: %s", (long long)generated,
                      completion->reason[0] ? completion->reason : "cancelled");
    /* Stateless: the whole prefix. Stateful: the prompt, then the last token. */
    int64_t start = (g->state && generated > 0) ? g->len - 1 : 0;
    size_t n_run = n_fixed;
    ol_value *ids_v = NULL, *mask_v = NULL, *pos_v = NULL, *logits = NULL;
    /* the step's feeds come from (and go back to) the run's reusable payloads */
    ol_payload_pool_scope reuse = ol_payload_pool_enter(step_pool(g), g->allocator);
    st = gen_slice(g, g->tokens, start, g->len, &ids_v);
    if (st == OL_OK) {
      g->run_names[n_run] = ids_name;
      g->run_values[n_run++] = ids_v;
    }
    if (st == OL_OK && has_mask) {
      st = gen_slice(g, g->mask, 0, g->len, &mask_v);
      g->run_names[n_run] = mask_name;
      g->run_values[n_run++] = mask_v;
    }
    if (st == OL_OK && has_pos) {
      st = gen_slice(g, g->pos, start, g->len, &pos_v);
      g->run_names[n_run] = pos_name;
      g->run_values[n_run++] = pos_v;
    }
    if (st == OL_OK) {
      st = run_step(g, context, logits_name, n_run, completion, &logits);
      if (st != OL_OK) ol_error_wrap(st, "ol_generate: step %lld", (long long)generated);
    }
    ol_value_release(ids_v);
    ol_value_release(mask_v);
    ol_value_release(pos_v);
    ol_payload_pool_leave(reuse);
    if (st != OL_OK) return st;

    /* ---- pick the next token of every row */
    const ol_tensor *lt = logits->kind == OL_VALUE_TENSOR ? &logits->tensor : NULL;
    int ok_shape = lt && logits_dtype_ok(lt->dtype) && (lt->rank == 2 || lt->rank == 3) &&
                   lt->dims[0] == g->batch && lt->dims[lt->rank - 1] >= 1 && (lt->rank == 2 || lt->dims[1] >= 1);
    if (!ok_shape) {
      st = ol_error(OL_INVALID_ARGUMENT,
                    "ol_generate: output '%s' is %s; expected float32/float64/float16/bfloat16 logits "
                    "[%lld, sequence, vocab] or [%lld, vocab]",
                    logits_name, describe(logits, got, sizeof got), (long long)g->batch, (long long)g->batch);
      ol_value_release(logits);
      return st;
    }
    int64_t vocab = lt->dims[lt->rank - 1];
    int64_t seq = lt->rank == 3 ? lt->dims[1] : 1;
    size_t esize = ol_dtype_size(lt->dtype);
    if (o->temperature > 0 && g->n_weights < vocab) {
      free(g->weights);
      g->weights = ol_xmalloc((size_t)vocab * sizeof *g->weights);
      g->n_weights = g->weights ? vocab : 0;
      if (!g->weights) {
        ol_value_release(logits);
        return OL_OUT_OF_MEMORY;
      }
    }
    st = gen_reserve(g, g->len + 1);
    if (st != OL_OK) {
      ol_value_release(logits);
      return st;
    }
    const char *ldata = ol_tdata(lt);
    for (int64_t b = 0; b < g->batch; b++) {
      int64_t token;
      if (g->finished[b]) {
        token = pad;
      } else {
        const void *row = ldata + ((size_t)(b * seq + seq - 1) * (size_t)vocab) * esize;
        token = o->temperature > 0 ? sample_row(lt->dtype, row, vocab, o->temperature, &rng, g->weights)
                                   : argmax_row(lt->dtype, row, vocab);
        if (o->eos_token_id >= 0 && token == o->eos_token_id) g->finished[b] = 1;
      }
      g->step_tokens[b] = token;
      g->tokens[b * g->cap + g->len] = token;
      g->mask[b * g->cap + g->len] = 1;
      g->pos[b * g->cap + g->len] = g->pos[b * g->cap + g->len - 1] + 1;
    }
    ol_value_release(logits);
    g->len++;
    generated++;
    int stop = 0;
    if (o->on_token && o->on_token(o->on_token_user, g->step_tokens, (size_t)g->batch, (size_t)(generated - 1)))
      stop = 1;
    int all_done = 1;
    for (int64_t b = 0; b < g->batch; b++) all_done &= g->finished[b];
    if (stop || all_done) break;
  }

  /* ---- result: [batch, prompt + generated] */
  return gen_slice(g, g->tokens, 0, g->len, out);
}

ol_status ol_generate(ol_model *model, ol_context *context, const char *const *names, ol_value *const *feeds,
                      size_t n_feeds, const ol_generate_options *options,
                      const ol_session_options *session_options, ol_completion *completion, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_generate: out is NULL");
  *out = NULL;
  if (!model || !model->data) return ol_error(OL_INVALID_ARGUMENT, "ol_generate: model is NULL");
  ol_generate_options defaults;
  if (!options) {
    ol_generate_options_init(&defaults);
    options = &defaults;
  }
  gen g;
  memset(&g, 0, sizeof g);
  ol_status st = generate(&g, model, context, names, feeds, n_feeds, options, session_options, completion, out);
  gen_free(&g);
  if (st != OL_OK && *out) {
    ol_value_release(*out);
    *out = NULL;
  }
  return st;
}
