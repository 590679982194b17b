/* Autoregressive generation one step at a time (seed 000, "Autoregressive
 * generation"): the only token loop of the project. ol_generate loops over
 * it (runtime/generate.c); the JS package steps it through the wasm ABI,
 * yielding to its event loop between tokens.
 *
 * A decoder maps INT64 input_ids [batch, seq] to floating-point logits
 * [batch, seq, vocab] or [batch, vocab]:
 *
 *  - models without GraphProto.persistent_bindings use an ordinary session
 *    (the caller's, or one of their own) and evaluate the whole growing prefix
 *    every step (no cache is guessed from names);
 *  - models with bindings use an ol_state created from the caller's initial
 *    values of the bound inputs (taken from the feeds by name): the prompt is
 *    evaluated once, then one token per step. Every generator owns fresh state.
 *
 * Declared INT64 attention_mask / position_ids inputs are created when the
 * caller does not feed them (mask of ones; positions = cumulative sum of the
 * mask minus one, clamped at 0) and extended every step; a caller-fed mask
 * (left padding as zeros) or position_ids are extended the same way. Every
 * other feed is retained and passed unchanged to every step. Caller feeds and
 * the model are never written to: ids, mask and positions live in buffers
 * owned here and are copied into fresh tensors for every run, inside the
 * run's payload reuse scope (so a decode step with stable shapes reuses the
 * previous step's blocks instead of calling the allocator).
 *
 * Tokens come from runtime/sampling.h: greedy at temperature 0, otherwise
 * one splitmix64 draw (seeded with options->seed) per unfinished row per
 * step, in row order.
 *
 * Stopping: after max_new_tokens, when every row has emitted eos_token_id
 * (finished rows then receive pad_token_id, or eos when pad is -1), when
 * on_token returns nonzero, or on ol_generator_stop.
 *
 * Cancellation: the completion is polled before every step (OL_CANCELLED,
 * nothing changes) and watched by every run, so a cancel also stops a
 * running step between nodes. State runs watch it without completing it
 * (ol_state_run_watching): the caller's completion is never marked completed.
 *
 * Failures: a step that fails before or during the model's run leaves the
 * generator as it was. Once a persistent state has run, a failure (logits of
 * the wrong type or shape, no memory for the sampling scratch) would leave
 * the caches one step ahead of the tokens, so the generator refuses further
 * steps. */
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
#include "runtime/sampling.h"
#include "runtime/session.h"

struct ol_generator {
  /* what runs the model: a session (no bindings) or a persistent state */
  ol_session *session;
  ol_session *own_session; /* the session when the generator made it */
  ol_state *state;
  const ol_session *meta; /* the session naming inputs and outputs */
  ol_context *context;    /* borrowed */
  ol_completion *completion; /* borrowed */
  ol_allocator *allocator;   /* of the step tensors and the result */
  /* options */
  char *ids_name, *logits_name, *mask_name, *pos_name;
  int64_t max_new_tokens, eos, pad;
  double temperature;
  uint64_t rng;
  int (*on_token)(void *user, const int64_t *tokens, size_t batch, size_t step);
  void *on_token_user;
  /* every run's feeds: the retained unbound feeds (names copied), then ids,
   * mask and positions */
  const char **run_names;
  ol_value **run_values;
  size_t n_fixed;
  bool has_mask, has_pos;
  /* ids, mask and positions of every row: [batch][cap] row-major */
  int64_t *tokens, *mask, *pos;
  int64_t batch, prompt, cap, len;
  int64_t *last, *next;    /* [batch]: the last step's tokens, the step in progress */
  unsigned char *finished; /* [batch] */
  double *weights;         /* [n_weights] sampling scratch */
  int64_t n_weights;
  bool done, broken;
};

/* The feeds generation reads itself, found by name. */
typedef struct feed_roles {
  const char *ids_name, *mask_name, *pos_name;
  const ol_value *ids, *mask, *pos;
} feed_roles;

static const char *describe(const ol_value *v, char *buf, size_t size) {
  if (v->kind != OL_VALUE_TENSOR) return "a non-tensor value";
  return ol_tensor_describe(&v->tensor, buf, size);
}

static const char *or_default(const char *name, const char *fallback) { return name ? name : fallback; }

/* ------------------------------------------------------------ checks before anything is made */

static ol_status check_options(const ol_generate_options *o) {
  if (o->max_new_tokens < 0)
    return ol_error(OL_INVALID_ARGUMENT, "generate: max_new_tokens must be >= 0, got %lld",
                    (long long)o->max_new_tokens);
  if (!(o->temperature >= 0) || isinf(o->temperature))
    return ol_error(OL_INVALID_ARGUMENT, "generate: temperature must be a finite number >= 0, got %g",
                    o->temperature);
  if (o->eos_token_id < -1)
    return ol_error(OL_INVALID_ARGUMENT, "generate: eos_token_id must be >= 0 or -1 (none), got %lld",
                    (long long)o->eos_token_id);
  if (o->pad_token_id < -1)
    return ol_error(OL_INVALID_ARGUMENT, "generate: pad_token_id must be >= 0 or -1 (eos), got %lld",
                    (long long)o->pad_token_id);
  return OL_OK;
}

/* Checks the feed table and finds input_ids, attention_mask, position_ids. */
static ol_status find_roles(const ol_generate_options *o, const char *const *names, ol_value *const *feeds,
                            size_t n_feeds, feed_roles *r) {
  memset(r, 0, sizeof *r);
  r->ids_name = or_default(o->input_ids_name, "input_ids");
  r->mask_name = or_default(o->attention_mask_name, "attention_mask");
  r->pos_name = or_default(o->position_ids_name, "position_ids");
  if (n_feeds && (!names || !feeds)) return ol_error(OL_INVALID_ARGUMENT, "generate: feed names or values are NULL");
  for (size_t i = 0; i < n_feeds; i++) {
    if (!names[i] || !feeds[i]) return ol_error(OL_INVALID_ARGUMENT, "generate: feed %zu has no name or no value", i);
    for (size_t k = 0; k < i; k++)
      if (strcmp(names[k], names[i]) == 0)
        return ol_error(OL_INVALID_ARGUMENT, "generate: input '%s' is fed twice", names[i]);
    if (strcmp(names[i], r->ids_name) == 0) r->ids = feeds[i];
    else if (strcmp(names[i], r->mask_name) == 0) r->mask = feeds[i];
    else if (strcmp(names[i], r->pos_name) == 0) r->pos = feeds[i];
  }
  char got[256];
  const ol_value *ids = r->ids;
  if (!ids)
    return ol_error(OL_INVALID_ARGUMENT, "generate: the feeds have no '%s' (int64 [batch, prompt])", r->ids_name);
  if (ids->kind != OL_VALUE_TENSOR || ids->tensor.dtype != OL_DTYPE_INT64 || ids->tensor.rank != 2 ||
      ids->tensor.dims[0] < 1 || ids->tensor.dims[1] < 1)
    return ol_error(OL_INVALID_ARGUMENT, "generate: '%s' must be a non-empty int64 [batch, prompt] tensor, got %s",
                    r->ids_name, describe(ids, got, sizeof got));
  return OL_OK;
}

/* ------------------------------------------------------------ setting up */

static ol_status copy_options(ol_generator *g, const ol_generate_options *o, const feed_roles *r) {
  g->ids_name = ol_strdup(r->ids_name);
  g->logits_name = ol_strdup(or_default(o->logits_name, "logits"));
  g->mask_name = ol_strdup(r->mask_name);
  g->pos_name = ol_strdup(r->pos_name);
  if (!g->ids_name || !g->logits_name || !g->mask_name || !g->pos_name) return OL_OUT_OF_MEMORY;
  g->max_new_tokens = o->max_new_tokens;
  g->temperature = o->temperature;
  g->rng = o->seed;
  g->eos = o->eos_token_id;
  g->pad = o->pad_token_id >= 0 ? o->pad_token_id : o->eos_token_id;
  g->on_token = o->on_token;
  g->on_token_user = o->on_token_user;
  g->batch = r->ids->tensor.dims[0];
  g->prompt = r->ids->tensor.dims[1];
  return OL_OK;
}

static bool is_bound(const Onnx__GraphProto *gp, const char *name) {
  for (size_t b = 0; gp && b < gp->n_persistent_bindings; b++)
    if (gp->persistent_bindings[b]->input_name && strcmp(gp->persistent_bindings[b]->input_name, name) == 0)
      return true;
  return false;
}

/* Sorts the feeds that are neither ids, mask nor positions: the unbound ones
 * are retained for every run, the bound ones start the persistent state;
 * then opens the state, or takes the caller's session or makes one. */
static ol_status open_runner(ol_generator *g, ol_model *model, ol_session *session, const char *const *names,
                             ol_value *const *feeds, size_t n_feeds, const ol_session_options *session_options) {
  const Onnx__GraphProto *gp = model->data->proto ? model->data->proto->graph : NULL;
  const char **bound_names = ol_xcalloc(n_feeds, sizeof *bound_names);
  ol_value **bound_values = ol_xcalloc(n_feeds, sizeof *bound_values);
  g->run_names = ol_xcalloc(n_feeds + 3, sizeof *g->run_names);
  g->run_values = ol_xcalloc(n_feeds + 3, sizeof *g->run_values);
  ol_status st = bound_names && bound_values && g->run_names && g->run_values ? OL_OK : OL_OUT_OF_MEMORY;
  size_t n_bound = 0;
  for (size_t i = 0; st == OL_OK && i < n_feeds; i++) {
    const char *name = names[i];
    if (!strcmp(name, g->ids_name) || !strcmp(name, g->mask_name) || !strcmp(name, g->pos_name)) continue;
    if (is_bound(gp, name)) {
      bound_names[n_bound] = name;
      bound_values[n_bound++] = feeds[i];
    } else if ((g->run_names[g->n_fixed] = ol_strdup(name)) != NULL) {
      g->run_values[g->n_fixed++] = ol_value_retain(feeds[i]);
    } else {
      st = OL_OUT_OF_MEMORY;
    }
  }
  if (st == OL_OK && gp && gp->n_persistent_bindings) {
    st = ol_state_create(model, bound_names, bound_values, n_bound, session_options, &g->state);
    if (st != OL_OK) ol_error_wrap(st, "generate: creating the persistent state");
    g->meta = ol_state_session(g->state);
  } else if (st == OL_OK && session) {
    g->session = session;
    g->allocator = session->allocator;
    g->meta = session;
  } else if (st == OL_OK) {
    st = ol_session_create(model, session_options, &g->own_session);
    if (st != OL_OK) ol_error_wrap(st, "generate: creating the session");
    g->session = g->own_session;
    g->meta = g->own_session;
  }
  free(bound_names);
  free(bound_values);
  return st;
}

static int find_io(const ol_session *s, int output, const char *name, size_t *index) {
  size_t n = output ? ol_session_output_count(s) : ol_session_input_count(s);
  for (size_t i = 0; i < n; i++)
    if (strcmp(output ? ol_session_output_name(s, i) : ol_session_input_name(s, i), name) == 0) {
      *index = i;
      return 1;
    }
  return 0;
}

/* Declared type of an ids/mask/positions input, which must be INT64. */
static ol_status check_declared_int64(const ol_session *s, size_t index, const char *name) {
  ol_value_info info;
  OL_TRY(ol_session_input_info(s, index, &info));
  if (info.kind != OL_VALUE_TENSOR || (info.dtype != OL_DTYPE_UNDEFINED && info.dtype != OL_DTYPE_INT64))
    return ol_error(OL_INVALID_ARGUMENT, "generate: model input '%s' is declared as %s; generation needs int64", name,
                    info.kind != OL_VALUE_TENSOR ? "a non-tensor" : ol_dtype_name(info.dtype));
  if (info.rank >= 0 && info.rank != 2)
    return ol_error(OL_INVALID_ARGUMENT, "generate: model input '%s' has rank %d; generation needs [batch, sequence]",
                    name, info.rank);
  return OL_OK;
}

static ol_status check_declared_logits(const ol_session *s, const char *name) {
  size_t idx;
  if (!find_io(s, 1, name, &idx)) return ol_error(OL_INVALID_ARGUMENT, "generate: the model has no output '%s'", name);
  ol_value_info info;
  OL_TRY(ol_session_output_info(s, idx, &info));
  if (info.kind != OL_VALUE_TENSOR || (info.dtype != OL_DTYPE_UNDEFINED && !ol_logits_dtype_ok(info.dtype)))
    return ol_error(OL_INVALID_ARGUMENT,
                    "generate: output '%s' is declared as %s; logits must be float32, float64, float16 or bfloat16", name,
                    info.kind != OL_VALUE_TENSOR ? "a non-tensor" : ol_dtype_name(info.dtype));
  if (info.rank >= 0 && info.rank != 2 && info.rank != 3)
    return ol_error(OL_INVALID_ARGUMENT,
                    "generate: output '%s' has rank %d; logits must be [batch, sequence, vocab] or [batch, vocab]", name,
                    info.rank);
  return OL_OK;
}

/* An input generation extends (mask or positions): whether the model has it,
 * and a fed one must be int64 [batch, prompt] (a declared one int64 when
 * generation creates it). */
static ol_status check_extended_input(const ol_generator *g, const char *name, const ol_value *fed, bool *has) {
  size_t idx;
  *has = find_io(g->meta, 0, name, &idx);
  if (!*has && fed)
    return ol_error(OL_INVALID_ARGUMENT, "generate: '%s' is fed but the model has no such input", name);
  if (*has && !fed) return check_declared_int64(g->meta, idx, name);
  char got[256];
  if (fed && (fed->kind != OL_VALUE_TENSOR || fed->tensor.dtype != OL_DTYPE_INT64 || fed->tensor.rank != 2 ||
              fed->tensor.dims[0] != g->batch || fed->tensor.dims[1] != g->prompt))
    return ol_error(OL_INVALID_ARGUMENT, "generate: '%s' must be int64[%lld,%lld] like the input ids, got %s", name,
                    (long long)g->batch, (long long)g->prompt, describe(fed, got, sizeof got));
  return OL_OK;
}

/* The caller's attention_mask (int64 [batch, prompt], checked): 0/1, left
 * padded (zeros only before the first one) and ending with a one in every row. */
static ol_status check_mask_values(const ol_generator *g, const char *name, const ol_value *v) {
  const int64_t *m = ol_tensor_data(v);
  for (int64_t b = 0; b < g->batch; b++) {
    const int64_t *row = m + b * g->prompt;
    for (int64_t j = 0; j < g->prompt; j++) {
      if (row[j] != 0 && row[j] != 1)
        return ol_error(OL_INVALID_ARGUMENT, "generate: '%s'[%lld,%lld] is %lld; a mask holds 0 or 1", name,
                        (long long)b, (long long)j, (long long)row[j]);
      if (j > 0 && row[j] < row[j - 1])
        return ol_error(OL_INVALID_ARGUMENT,
                        "generate: row %lld of '%s' is not left-padded (a 0 at position %lld follows a 1); "
                        "prompts must be unpadded or left-padded",
                        (long long)b, name, (long long)j);
    }
    if (row[g->prompt - 1] != 1)
      return ol_error(OL_INVALID_ARGUMENT, "generate: row %lld of '%s' is all padding", (long long)b, name);
  }
  return OL_OK;
}

static ol_status check_interface(ol_generator *g, const feed_roles *r) {
  size_t idx;
  if (!find_io(g->meta, 0, g->ids_name, &idx))
    return ol_error(OL_INVALID_ARGUMENT, "generate: the model has no input '%s'", g->ids_name);
  OL_TRY(check_declared_int64(g->meta, idx, g->ids_name));
  OL_TRY(check_declared_logits(g->meta, g->logits_name));
  OL_TRY(check_extended_input(g, g->mask_name, r->mask, &g->has_mask));
  OL_TRY(check_extended_input(g, g->pos_name, r->pos, &g->has_pos));
  return r->mask ? check_mask_values(g, g->mask_name, r->mask) : OL_OK;
}

/* Grows the [batch][cap] buffers so that column `need - 1` exists (on
 * failure the old buffers stay). */
static ol_status reserve_columns(ol_generator *g, int64_t need) {
  if (need <= g->cap) return OL_OK;
  int64_t cap = g->cap * 2;
  if (cap < need) cap = need;
  if ((uint64_t)cap > SIZE_MAX / sizeof(int64_t) / (uint64_t)g->batch)
    return ol_error(OL_OUT_OF_MEMORY, "generate: %lld tokens per row do not fit in memory", (long long)cap);
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

/* The prompt's ids, mask (fed, or ones) and positions (fed, or the
 * cumulative mask minus one, clamped at 0). */
static ol_status init_rows(ol_generator *g, const feed_roles *r) {
  int64_t first = g->max_new_tokens < 256 ? g->max_new_tokens : 256;
  OL_TRY(reserve_columns(g, g->prompt + (first > 0 ? first : 1)));
  g->last = ol_xcalloc((size_t)g->batch, sizeof *g->last);
  g->next = ol_xcalloc((size_t)g->batch, sizeof *g->next);
  g->finished = ol_xcalloc((size_t)g->batch, 1);
  if (!g->last || !g->next || !g->finished) return OL_OUT_OF_MEMORY;
  const int64_t *ids = ol_tensor_data(r->ids);
  const int64_t *mask = r->mask ? ol_tensor_data(r->mask) : NULL;
  const int64_t *pos = r->pos ? ol_tensor_data(r->pos) : NULL;
  for (int64_t b = 0; b < g->batch; b++) {
    int64_t *t = g->tokens + b * g->cap, *m = g->mask + b * g->cap, *p = g->pos + b * g->cap;
    int64_t ones = 0;
    for (int64_t j = 0; j < g->prompt; j++) {
      t[j] = ids[b * g->prompt + j];
      m[j] = mask ? mask[b * g->prompt + j] : 1;
      ones += m[j];
      p[j] = pos ? pos[b * g->prompt + j] : (ones > 0 ? ones - 1 : 0);
    }
  }
  g->len = g->prompt;
  return OL_OK;
}

static ol_status setup(ol_generator *g, ol_model *model, ol_session *session, const char *const *names,
                       ol_value *const *feeds, size_t n_feeds, const ol_generate_options *o,
                       const ol_session_options *session_options, const feed_roles *r) {
  OL_TRY(copy_options(g, o, r));
  g->allocator = session_options ? session_options->allocator : NULL;
  OL_TRY(open_runner(g, model, session, names, feeds, n_feeds, session_options));
  OL_TRY(check_interface(g, r));
  OL_TRY(init_rows(g, r));
  g->done = g->max_new_tokens == 0;
  return OL_OK;
}

/* ------------------------------------------------------------ one step */

/* New INT64 tensor [batch, end - start] from columns [start, end) of buf. */
static ol_status slice_columns(const ol_generator *g, const int64_t *buf, int64_t start, int64_t end,
                               ol_value **out) {
  int64_t dims[2] = {g->batch, end - start};
  OL_TRY(ol_tensor_create(g->allocator, OL_DTYPE_INT64, dims, 2, out));
  int64_t *dst = ol_tensor_data(*out);
  for (int64_t b = 0; b < g->batch; b++)
    memcpy(dst + b * (end - start), buf + b * g->cap + start, (size_t)(end - start) * sizeof(int64_t));
  return OL_OK;
}

static ol_payload_pool *step_pool(const ol_generator *g) {
  return g->state ? ol_state_payload_pool(g->state) : g->session->pool;
}

/* Runs the model once: stateless, the whole prefix; stateful, the prompt on
 * the first step and then the last token. The step's ids, mask and
 * positions come from (and go back to) the run's reusable payloads. */
static ol_status run_model(ol_generator *g, ol_value **logits) {
  int64_t start = (g->state && g->len > g->prompt) ? g->len - 1 : 0;
  ol_value *made[3] = {NULL, NULL, NULL};
  size_t n_run = g->n_fixed;
  ol_payload_pool_scope reuse = ol_payload_pool_enter(step_pool(g), g->allocator);
  ol_status st = slice_columns(g, g->tokens, start, g->len, &made[0]);
  g->run_names[n_run] = g->ids_name;
  g->run_values[n_run++] = made[0];
  if (st == OL_OK && g->has_mask) {
    st = slice_columns(g, g->mask, 0, g->len, &made[1]);
    g->run_names[n_run] = g->mask_name;
    g->run_values[n_run++] = made[1];
  }
  if (st == OL_OK && g->has_pos) {
    st = slice_columns(g, g->pos, start, g->len, &made[2]);
    g->run_names[n_run] = g->pos_name;
    g->run_values[n_run++] = made[2];
  }
  const char *out_names[1] = {g->logits_name};
  if (st == OL_OK)
    st = g->state ? ol_state_run_watching(g->state, g->context, g->run_names, g->run_values, n_run, out_names,
                                          logits, 1, g->completion)
                  : ol_session_run_with(g->session, g->context, g->run_names, g->run_values, n_run, out_names,
                                        logits, 1, g->completion);
  /* a session that grows its outputs may return a pitched tensor */
  if (st == OL_OK && (st = ol_value_densify(g->allocator, logits)) != OL_OK) {
    ol_value_release(*logits);
    *logits = NULL;
  }
  if (st != OL_OK) ol_error_wrap(st, "generate: step %lld", (long long)(g->len - g->prompt));
  for (int i = 0; i < 3; i++) ol_value_release(made[i]);
  ol_payload_pool_leave(reuse);
  return st;
}

/* Picks the next token of every row into g->next (finished rows: pad),
 * advancing *rng; nothing else changes. */
static ol_status pick_tokens(ol_generator *g, const ol_value *logits, uint64_t *rng) {
  char got[256];
  const ol_tensor *lt = logits->kind == OL_VALUE_TENSOR ? &logits->tensor : NULL;
  if (!lt || !ol_logits_dtype_ok(lt->dtype) || (lt->rank != 2 && lt->rank != 3) || lt->dims[0] != g->batch ||
      lt->dims[lt->rank - 1] < 1 || (lt->rank == 3 && lt->dims[1] < 1))
    return ol_error(OL_INVALID_ARGUMENT,
                    "generate: output '%s' is %s; expected float32/float64/float16/bfloat16 logits "
                    "[%lld, sequence, vocab] or [%lld, vocab]",
                    g->logits_name, describe(logits, got, sizeof got), (long long)g->batch, (long long)g->batch);
  int64_t vocab = lt->dims[lt->rank - 1];
  int64_t seq = lt->rank == 3 ? lt->dims[1] : 1;
  if (g->temperature > 0 && g->n_weights < vocab) {
    double *w = ol_xmalloc((size_t)vocab * sizeof *w);
    if (!w) return OL_OUT_OF_MEMORY;
    free(g->weights);
    g->weights = w;
    g->n_weights = vocab;
  }
  size_t esize = ol_dtype_size(lt->dtype);
  const char *data = ol_tdata(lt);
  for (int64_t b = 0; b < g->batch; b++) {
    const void *row = data + ((size_t)(b * seq + seq - 1) * (size_t)vocab) * esize;
    g->next[b] = g->finished[b] ? g->pad : ol_sample_token(lt->dtype, row, vocab, g->temperature, rng, g->weights);
  }
  return OL_OK;
}

/* Appends g->next to every row (mask 1, position + 1) and decides whether
 * the generation is done. */
static void commit_tokens(ol_generator *g, uint64_t rng) {
  bool all_finished = true;
  for (int64_t b = 0; b < g->batch; b++) {
    int64_t token = g->next[b], at = b * g->cap + g->len;
    if (g->eos >= 0 && token == g->eos) g->finished[b] = 1;
    all_finished &= g->finished[b] != 0;
    g->tokens[at] = token;
    g->mask[at] = 1;
    g->pos[at] = g->pos[at - 1] + 1;
  }
  int64_t *swap = g->last;
  g->last = g->next;
  g->next = swap;
  g->rng = rng;
  g->len++;
  int64_t generated = g->len - g->prompt;
  bool stop = g->on_token && g->on_token(g->on_token_user, g->last, (size_t)g->batch, (size_t)(generated - 1));
  g->done = generated >= g->max_new_tokens || all_finished || stop;
}

/* ------------------------------------------------------------ public */

ol_status ol_generator_create(ol_model *model, ol_session *session, ol_context *context, const char *const *names,
                              ol_value *const *feeds, size_t n_feeds, const ol_generate_options *options,
                              const ol_session_options *session_options, ol_completion *completion,
                              ol_generator **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "generate: out is NULL");
  *out = NULL;
  if (!model || !model->data) return ol_error(OL_INVALID_ARGUMENT, "generate: model is NULL");
  if (session && session->model != model->data)
    return ol_error(OL_INVALID_ARGUMENT, "generate: the session was not made from this model");
  ol_generate_options defaults;
  if (!options) {
    ol_generate_options_init(&defaults);
    options = &defaults;
  }
  feed_roles roles;
  OL_TRY(check_options(options));
  OL_TRY(find_roles(options, names, feeds, n_feeds, &roles));
  ol_generator *g = ol_xcalloc(1, sizeof *g);
  if (!g) return OL_OUT_OF_MEMORY;
  g->context = context;
  g->completion = completion;
  ol_status st = setup(g, model, session, names, feeds, n_feeds, options, session_options, &roles);
  if (st != OL_OK) {
    ol_generator_destroy(g);
    return st;
  }
  *out = g;
  return OL_OK;
}

ol_status ol_generator_step(ol_generator *g, int *done) {
  if (done) *done = 1;
  if (!g) return ol_error(OL_INVALID_ARGUMENT, "generate: the generator is NULL");
  int64_t generated = g->len - g->prompt;
  if (g->broken)
    return ol_error(OL_FAILED_PRECONDITION, "generate: an earlier step failed after the model had run; "
                                            "the generation cannot continue");
  if (g->done)
    return ol_error(OL_FAILED_PRECONDITION, "generate: the generation has finished (%lld tokens)",
                    (long long)generated);
  if (ol_completion_is_cancelled(g->completion))
    return ol_error(OL_CANCELLED, "generate: cancelled after %lld tokens: %s", (long long)generated,
                    g->completion->reason[0] ? g->completion->reason : "cancelled");
  OL_TRY(reserve_columns(g, g->len + 1));
  ol_value *logits = NULL;
  OL_TRY(run_model(g, &logits));
  uint64_t rng = g->rng;
  ol_status st = pick_tokens(g, logits, &rng);
  ol_value_release(logits);
  if (st != OL_OK) {
    g->broken = g->state != NULL; /* the caches have taken this step */
    return st;
  }
  commit_tokens(g, rng);
  if (done) *done = g->done;
  return OL_OK;
}

int ol_generator_done(const ol_generator *g) { return !g || g->done || g->broken; }

void ol_generator_stop(ol_generator *g) {
  if (g) g->done = true;
}

size_t ol_generator_batch(const ol_generator *g) { return g ? (size_t)g->batch : 0; }

int64_t ol_generator_generated(const ol_generator *g) { return g ? g->len - g->prompt : 0; }

const int64_t *ol_generator_last_tokens(const ol_generator *g) {
  return g && g->len > g->prompt ? g->last : NULL;
}

ol_status ol_generator_tokens(const ol_generator *g, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "generate: out is NULL");
  *out = NULL;
  if (!g) return ol_error(OL_INVALID_ARGUMENT, "generate: the generator is NULL");
  return slice_columns(g, g->tokens, 0, g->len, out);
}

const ol_state *ol_generator_state(const ol_generator *g) { return g ? g->state : NULL; }

void ol_generator_destroy(ol_generator *g) {
  if (!g) return;
  ol_state_destroy(g->state);
  ol_session_destroy(g->own_session);
  for (size_t i = 0; i < g->n_fixed; i++) {
    free((char *)g->run_names[i]);
    ol_value_release(g->run_values[i]);
  }
  free(g->run_names);
  free(g->run_values);
  free(g->ids_name);
  free(g->logits_name);
  free(g->mask_name);
  free(g->pos_name);
  free(g->tokens);
  free(g->mask);
  free(g->pos);
  free(g->last);
  free(g->next);
  free(g->finished);
  free(g->weights);
  free(g);
}
