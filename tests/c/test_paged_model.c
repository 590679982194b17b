/* ol_model_to_paged on the fortunes decoder (a torch export): the interface
 * (one cache input and output per layer, bound), the same logits as the
 * contiguous model within 1e-4 over a prompt and decode steps, the same
 * greedy tokens, and the errors (nothing recognized, bindings present, bad
 * options, a cache name already taken). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/status.h"
#include "builder_messages.h"
#include "harness.h"
#include "onnxlight.h"

#define MODEL "models/fortunes-byte-0.8M.onnx"
#define VOCAB 256
enum { MAX_LAYERS = 16 };

static ol_value *i64_tensor(int64_t rows, int64_t cols, const int64_t *data) {
  int64_t dims[2] = {rows, cols};
  ol_value *v = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &v));
  if (v && data) memcpy(ol_tensor_data(v), data, sizeof(int64_t) * (size_t)(rows * cols));
  return v;
}

/* One decoder step on either model: feeds the tokens with their positions,
 * the caches in `caches` (names from the session), keeps the new ones. */
typedef struct decoder {
  ol_session *session;
  size_t n_caches;
  char in_names[2 * MAX_LAYERS][64], out_names[2 * MAX_LAYERS][64];
  ol_value *caches[2 * MAX_LAYERS];
  int64_t past;
} decoder;

/* {blocks: []} */
static ol_status empty_cache(ol_value **out) {
  ol_value *blocks = NULL;
  OL_TRY(ol_sequence_create(OL_DTYPE_UNDEFINED, NULL, 0, &blocks));
  const char *name = "blocks";
  ol_status s = ol_struct_create(&name, &blocks, 1, out);
  ol_value_release(blocks);
  return s;
}

static bool starts_with(const char *s, const char *p) { return strncmp(s, p, strlen(p)) == 0; }

static void decoder_open(decoder *d, ol_model *m, bool paged) {
  memset(d, 0, sizeof *d);
  CHECK_OK(ol_session_create(m, NULL, &d->session));
  if (!d->session) return;
  for (size_t i = 0; i < ol_session_input_count(d->session); i++) {
    const char *name = ol_session_input_name(d->session, i);
    if (!starts_with(name, "past_key_values.")) continue;
    snprintf(d->in_names[d->n_caches], 64, "%s", name);
    snprintf(d->out_names[d->n_caches], 64, "present%s", name + strlen("past_key_values"));
    if (paged) CHECK_OK(empty_cache(&d->caches[d->n_caches]));
    else {
      int64_t dims[4] = {1, 2, 0, 32};
      CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 4, &d->caches[d->n_caches]));
    }
    d->n_caches++;
  }
}

static void decoder_close(decoder *d) {
  for (size_t i = 0; i < d->n_caches; i++) ol_value_release(d->caches[i]);
  ol_session_destroy(d->session);
}

/* Runs n tokens; *logits: their [1, n, VOCAB] logits (caller releases). */
static ol_status decoder_step(decoder *d, const int64_t *tokens, int64_t n, ol_value **logits) {
  int64_t positions[64], mask[512];
  for (int64_t i = 0; i < n; i++) positions[i] = d->past + i;
  for (int64_t i = 0; i < d->past + n; i++) mask[i] = 1;
  const char *names[3 + 2 * MAX_LAYERS] = {"input_ids", "attention_mask", "position_ids"};
  ol_value *feeds[3 + 2 * MAX_LAYERS] = {i64_tensor(1, n, tokens), i64_tensor(1, d->past + n, mask),
                                         i64_tensor(1, n, positions)};
  const char *out_names[1 + 2 * MAX_LAYERS] = {"logits"};
  ol_value *outs[1 + 2 * MAX_LAYERS] = {NULL};
  for (size_t i = 0; i < d->n_caches; i++) {
    names[3 + i] = d->in_names[i], feeds[3 + i] = d->caches[i];
    out_names[1 + i] = d->out_names[i];
  }
  ol_status s = ol_session_run(d->session, names, feeds, 3 + d->n_caches, out_names, outs, 1 + d->n_caches, NULL);
  for (int i = 0; i < 3; i++) ol_value_release(feeds[i]);
  if (s != OL_OK) return s;
  for (size_t i = 0; i < d->n_caches; i++) {
    ol_value_release(d->caches[i]);
    d->caches[i] = outs[1 + i];
  }
  d->past += n;
  *logits = outs[0];
  return OL_OK;
}

static int64_t argmax_last(const ol_value *logits) {
  const float *x = ol_tensor_data(logits);
  size_t rows = ol_tensor_dims(logits)[1];
  x += (rows - 1) * VOCAB;
  int64_t best = 0;
  for (int64_t i = 1; i < VOCAB; i++)
    if (x[i] > x[best]) best = i;
  return best;
}

static double max_diff(const ol_value *a, const ol_value *b) {
  const float *x = ol_tensor_data(a), *y = ol_tensor_data(b);
  size_t n = ol_tensor_byte_size(a) / sizeof(float);
  double worst = 0;
  for (size_t i = 0; i < n; i++) worst = fmax(worst, fabs((double)x[i] - y[i]));
  return worst;
}

static void fortunes_on_paged_caches(void) {
  ol_model *m = NULL, *paged = NULL;
  CHECK_OK(ol_model_load_file(MODEL, &m));
  if (!m) return;
  ol_paged_model_options o;
  ol_paged_model_options_init(&o);
  o.block_size = 8;
  CHECK_OK(ol_model_to_paged(m, &o, &paged));
  if (!paged) {
    ol_model_destroy(m);
    return;
  }
  /* interface: past_key_values.{i} and present.{i}, one per layer */
  size_t caches = 0, pairs = 0;
  for (size_t i = 0; i < ol_model_input_count(m); i++) pairs += starts_with(ol_model_input_name(m, i), "past_key_values.");
  for (size_t i = 0; i < ol_model_input_count(paged); i++) {
    const char *name = ol_model_input_name(paged, i);
    CHECK(!strstr(name, ".key") && !strstr(name, ".value"));
    caches += starts_with(name, "past_key_values.");
  }
  CHECK(pairs == 8 && caches == 4); /* four layers */
  decoder a, b;
  decoder_open(&a, m, false);
  decoder_open(&b, paged, true);
  CHECK(a.n_caches == 8 && b.n_caches == 4);
  const int64_t prompt[4] = {84, 104, 101, 32}; /* "The " */
  ol_value *la = NULL, *lb = NULL;
  CHECK_OK(decoder_step(&a, prompt, 4, &la));
  CHECK_OK(decoder_step(&b, prompt, 4, &lb));
  int agree = 0, steps = 0;
  for (; steps < 64 && la && lb; steps++) {
    double diff = max_diff(la, lb);
    CHECK(diff < 1e-4);
    if (diff >= 1e-4) fprintf(stderr, "  step %d: logits differ by %g\n", steps, diff);
    int64_t ta = argmax_last(la), tb = argmax_last(lb);
    agree += ta == tb;
    ol_value_release(la), ol_value_release(lb);
    la = lb = NULL;
    CHECK_OK(decoder_step(&a, &ta, 1, &la));
    CHECK_OK(decoder_step(&b, &ta, 1, &lb));
  }
  CHECK(steps == 64 && agree == 64);
  ol_value_release(la), ol_value_release(lb);
  decoder_close(&a), decoder_close(&b);

  /* errors: already bound, bad options, nothing to convert */
  ol_model *again = NULL;
  CHECK_STATUS(ol_model_to_paged(paged, NULL, &again), OL_INVALID_ARGUMENT);
  o.block_size = 0;
  CHECK_STATUS(ol_model_to_paged(m, &o, &again), OL_INVALID_ARGUMENT);
  ol_model *plain = NULL;
  CHECK_OK(ol_model_parse_text("<ir_version: 10, opset_import: [\"\" : 18]> g (float[2] x) => (float[2] y) { y = Neg(x) }",
                               &plain));
  CHECK_STATUS(ol_model_to_paged(plain, NULL, &again), OL_NOT_IMPLEMENTED);
  CHECK(!again);
  ol_model_destroy(plain);
  ol_model_destroy(paged);
  ol_model_destroy(m);
}

/* The paged cache's name must be free: a graph input already named
 * `past_key_values.0` (what the layer's pair would become) is an error
 * naming it, not a model with two inputs of that name. */
static void cache_name_taken(void) {
  ol_model *m = NULL, *taken = NULL, *paged = NULL;
  CHECK_OK(ol_model_load_file(MODEL, &m));
  void *bytes = NULL, *edited = NULL;
  size_t size = 0, edited_size = 0;
  if (m) CHECK_OK(ol_model_serialize(m, &bytes, &size));
  ol_builder *b = NULL;
  if (bytes) CHECK_OK(ol_builder_from_model(bytes, size, &b));
  const int64_t dims[4] = {1, 2, 0, 32};
  if (b) CHECK_OK(put_float_value(b, OL_BUILDER_INPUT, ADD_PART, "past_key_values.0", dims, 4));
  if (b) CHECK_OK(ol_builder_to_model(b, &edited, &edited_size));
  if (edited) CHECK_OK(ol_model_load(edited, edited_size, NULL, &taken));
  if (taken) {
    CHECK_STATUS(ol_model_to_paged(taken, NULL, &paged), OL_INVALID_ARGUMENT);
    CHECK(!paged && strstr(ol_last_error(), "ol_model_to_paged") &&
          strstr(ol_last_error(), "the name 'past_key_values.0' is taken"));
  }
  ol_builder_destroy(b);
  ol_free(bytes);
  ol_free(edited);
  ol_model_destroy(taken);
  ol_model_destroy(m);
}

OL_TEST_MAIN(TEST(fortunes_on_paged_caches), TEST(cache_name_taken))
