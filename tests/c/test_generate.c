/* ol_generate: greedy and seeded sampling on the byte-level fortunes model
 * (stateless full-prefix path and the persistent-state path with bound
 * caches), eos/pad, left padding, created attention_mask/position_ids, logits
 * dtypes and ranks, callbacks, cancellation, errors, fault injection; and the
 * step API under it (ol_generator_*): the same tokens step by step, create
 * errors, each stop condition, masks and positions, cancellation between
 * steps, failed steps that change nothing, bad logits after a state ran.
 * Small models are written in the ONNX text syntax. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "core/value.h"
#include "ir/model.h"
#include "onnxlight.h"
#include "runtime/session.h"

#define FORTUNES "models/fortunes-byte-0.8M.onnx"

/* Greedy continuation of "The " (known from onnxruntime). */
static const int64_t THE_PROMPT[4] = {84, 104, 101, 32};
static const int64_t THE_GREEDY[16] = {115, 101, 110, 115, 101, 32, 111, 102, 32, 116, 104, 101, 32, 115, 116, 97};

/* ------------------------------------------------------------ helpers */

static ol_value *ids_tensor(int64_t batch, int64_t len, const int64_t *values) {
  int64_t dims[2] = {batch, len};
  ol_value *v = NULL;
  ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &v);
  if (v && values) memcpy(ol_tensor_data(v), values, (size_t)(batch * len) * sizeof(int64_t));
  return v;
}

static const int64_t *tok(const ol_value *v) { return (const int64_t *)ol_tensor_data(v); }

static char *dup_string(const char *s) {
  char *d = malloc(strlen(s) + 1);
  strcpy(d, s);
  return d;
}

/* The fortunes model, optionally with past_key_values.{i}.key|value <-
 * present.{i}.key|value bound. ol_model_bind_persistent forwards the export's
 * second read of past_key_values.0.key (a Shape node) through one Identity,
 * as the single-use rule requires. */
static ol_model *load_fortunes(int bind) {
  ol_model *m = NULL;
  CHECK_OK(ol_model_load_file(FORTUNES, &m));
  if (!m || !bind) return m;
  const ol_graph *g = m->data->graph;
  const char *inputs[64];
  char outputs[64][256];
  const char *output_ptrs[64];
  size_t n = 0;
  for (size_t i = 0; i < g->num_inputs && n < 64; i++) {
    const char *name = g->inputs[i].name;
    if (strncmp(name, "past_key_values.", 16) != 0) continue;
    snprintf(outputs[n], sizeof outputs[n], "present.%s", name + 16);
    inputs[n] = name;
    output_ptrs[n] = outputs[n];
    n++;
  }
  CHECK(n > 0);
  ol_model *bound = NULL;
  CHECK_OK(ol_model_bind_persistent(m, inputs, output_ptrs, n, &bound));
  ol_model_destroy(m);
  return bound;
}

/* Feeds for the fortunes model: input_ids plus empty caches [batch, H, 0, D]. */
typedef struct fortunes_feeds {
  const char *names[64];
  ol_value *values[64];
  size_t count;
} fortunes_feeds;

static void make_feeds(ol_model *m, ol_value *ids, fortunes_feeds *f) {
  memset(f, 0, sizeof *f);
  f->names[0] = "input_ids";
  f->values[0] = ids;
  f->count = 1;
  ol_session *s = NULL;
  CHECK_OK(ol_session_create(m, NULL, &s));
  if (!s) return;
  int64_t batch = ol_tensor_dims(ids)[0];
  for (size_t i = 0; i < ol_session_input_count(s) && f->count < 64; i++) {
    const char *name = ol_session_input_name(s, i);
    if (strncmp(name, "past_key_values.", 16) != 0) continue;
    ol_value_info info;
    CHECK_OK(ol_session_input_info(s, i, &info));
    CHECK(info.rank == 4);
    int64_t dims[4] = {batch, info.dims[1] > 0 ? info.dims[1] : 2, 0, info.dims[3] > 0 ? info.dims[3] : 32};
    ol_value *v = NULL;
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 4, &v));
    /* the names live in the session: copy them */
    f->names[f->count] = dup_string(name);
    f->values[f->count++] = v;
  }
  ol_session_destroy(s);
}

static void free_feeds(fortunes_feeds *f) {
  for (size_t i = 1; i < f->count; i++) {
    free((char *)f->names[i]);
    ol_value_release(f->values[i]);
  }
}

/* Generates from a batch-1 byte prompt on the fortunes model. */
static ol_value *fortunes_generate(ol_model *m, const int64_t *prompt, int64_t len, const ol_generate_options *o) {
  ol_value *ids = ids_tensor(1, len, prompt);
  fortunes_feeds f;
  make_feeds(m, ids, &f);
  ol_value *out = NULL;
  CHECK_OK(ol_generate(m, NULL, f.names, f.values, f.count, o, NULL, NULL, &out));
  free_feeds(&f);
  ol_value_release(ids);
  return out;
}

/* ------------------------------------------------------------ toy models */

/* A [8,8] float table whose row t is one-hot at (t + 1) % 8: "next token
 * = index + 1" whatever is used as the index. */
static void table_text(char *buf, size_t size) {
  size_t w = (size_t)snprintf(buf, size, "float[8,8] table = {");
  for (int r = 0; r < 8; r++)
    for (int c = 0; c < 8; c++)
      w += (size_t)snprintf(buf + w, size - w, "%s%d", r || c ? ", " : "", c == (r + 1) % 8 ? 1 : 0);
  snprintf(buf + w, size - w, "}");
}

static ol_model *shift_model_typed(const char *type, int to) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "shift (int64[B,S] input_ids) => (%s[B,S,8] logits) <%s> {\n"
           "  f = Gather(table, input_ids)\n"
           "  logits = Cast<to = %d>(f)\n"
           "}\n",
           type, table, to);
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  return m;
}

/* Rank-2 logits [B, 8] from the last position. */
static ol_model *last_model(void) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "last (int64[B,S] input_ids) => (float[B,8] out) <%s, int64 minus1 = {-1}> {\n"
           "  f = Gather(table, input_ids)\n"
           "  out = Gather<axis = 1>(f, minus1)\n"
           "}\n",
           table);
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  return m;
}

/* logits = one-hot(position_ids + 1): shows the positions generate feeds. */
static ol_model *positions_model(void) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "positions (int64[B,S] input_ids, int64[B,S] attention_mask, int64[B,S] position_ids)"
           " => (float[B,S,8] logits) <%s> {\n"
           "  logits = Gather(table, position_ids)\n"
           "}\n",
           table);
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  return m;
}

/* logits[b, 0] = one-hot(sum(attention_mask[b]) + 1): shows the mask. */
static ol_model *mask_model(void) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "masks (int64[B,S] input_ids, int64[B,S] attention_mask) => (float[B,1,8] logits)"
           " <%s, int64[1] axes = {1}> {\n"
           "  s = ReduceSum<keepdims = 1>(attention_mask, axes)\n"
           "  logits = Gather(table, s)\n"
           "}\n",
           table);
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  return m;
}

static ol_status toy_generate(ol_model *m, int64_t batch, int64_t len, const int64_t *prompt,
                              const ol_generate_options *o, ol_value **out) {
  ol_value *ids = ids_tensor(batch, len, prompt);
  const char *names[1] = {"input_ids"};
  ol_status st = ol_generate(m, NULL, names, &ids, 1, o, NULL, NULL, out);
  ol_value_release(ids);
  return st;
}

/* ------------------------------------------------------------ fortunes */

static void greedy_without_bindings(void) {
  ol_model *m = load_fortunes(0);
  if (!m) return;
  ol_generate_options o;
  ol_generate_options_init(&o);
  CHECK(o.max_new_tokens == 16 && o.temperature == 0 && o.eos_token_id == -1 && o.pad_token_id == -1);
  ol_value *out = fortunes_generate(m, THE_PROMPT, 4, &o);
  CHECK(out != NULL);
  if (out) {
    CHECK(ol_tensor_dtype(out) == OL_DTYPE_INT64 && ol_tensor_rank(out) == 2);
    CHECK(ol_tensor_dims(out)[0] == 1 && ol_tensor_dims(out)[1] == 20);
    CHECK(memcmp(tok(out), THE_PROMPT, sizeof THE_PROMPT) == 0);
    CHECK(memcmp(tok(out) + 4, THE_GREEDY, sizeof THE_GREEDY) == 0);
  }
  ol_value_release(out);
  ol_model_destroy(m);
}

static void greedy_with_bindings(void) {
  ol_model *m = load_fortunes(1);
  if (!m) return;
  CHECK(m->data->proto->graph->n_persistent_bindings > 0);
  void *before = NULL, *after = NULL;
  size_t before_size = 0, after_size = 0;
  CHECK_OK(ol_model_serialize(m, &before, &before_size));

  ol_value *ids = ids_tensor(1, 4, THE_PROMPT);
  fortunes_feeds f;
  make_feeds(m, ids, &f);
  /* snapshot of every feed: dims and bytes */
  unsigned char *snap[64];
  for (size_t i = 0; i < f.count; i++) {
    size_t n = ol_tensor_byte_size(f.values[i]);
    snap[i] = malloc(n + 1);
    if (n) memcpy(snap[i], ol_tensor_data(f.values[i]), n);
  }
  ol_generate_options o;
  ol_generate_options_init(&o);
  ol_value *out = NULL;
  for (int call = 0; call < 2; call++) { /* each call owns fresh state */
    CHECK_OK(ol_generate(m, NULL, f.names, f.values, f.count, &o, NULL, NULL, &out));
    if (out) {
      CHECK(ol_tensor_dims(out)[1] == 20);
      CHECK(memcmp(tok(out) + 4, THE_GREEDY, sizeof THE_GREEDY) == 0);
    }
    ol_value_release(out);
    out = NULL;
  }
  for (size_t i = 0; i < f.count; i++) {
    size_t n = ol_tensor_byte_size(f.values[i]);
    CHECK(n == 0 || memcmp(snap[i], ol_tensor_data(f.values[i]), n) == 0);
    if (i > 0) CHECK(ol_tensor_dims(f.values[i])[2] == 0); /* caches still empty */
    free(snap[i]);
  }
  CHECK(ol_tensor_dims(ids)[1] == 4);
  CHECK_OK(ol_model_serialize(m, &after, &after_size));
  CHECK(before_size == after_size && before && after && memcmp(before, after, before_size) == 0);
  ol_free(before);
  ol_free(after);

  /* a bound cache that is not fed: the state cannot start */
  CHECK(ol_generate(m, NULL, f.names, f.values, 1, &o, NULL, NULL, &out) != OL_OK);
  CHECK(out == NULL);
  free_feeds(&f);
  ol_value_release(ids);
  ol_model_destroy(m);
}

static void seeded_sampling_is_reproducible(void) {
  ol_model *plain = load_fortunes(0), *bound = load_fortunes(1);
  if (!plain || !bound) {
    ol_model_destroy(plain);
    ol_model_destroy(bound);
    return;
  }
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 12;
  o.temperature = 0.9;
  o.seed = 42;
  ol_value *a = fortunes_generate(plain, THE_PROMPT, 4, &o);
  ol_value *b = fortunes_generate(plain, THE_PROMPT, 4, &o);
  ol_value *c = fortunes_generate(bound, THE_PROMPT, 4, &o); /* same logits, same draws */
  CHECK(a && b && c);
  if (a && b && c) {
    CHECK(ol_tensor_dims(a)[1] == 16);
    CHECK(memcmp(tok(a), tok(b), 16 * sizeof(int64_t)) == 0);
    CHECK(memcmp(tok(a), tok(c), 16 * sizeof(int64_t)) == 0);
    for (int i = 4; i < 16; i++) CHECK(tok(a)[i] >= 0 && tok(a)[i] < 256);
  }
  int differs = 0;
  for (uint64_t seed = 1; seed <= 4; seed++) {
    o.seed = seed;
    ol_value *d = fortunes_generate(plain, THE_PROMPT, 4, &o);
    if (a && d && memcmp(tok(a), tok(d), 16 * sizeof(int64_t)) != 0) differs = 1;
    ol_value_release(d);
  }
  CHECK(differs);
  ol_value_release(a);
  ol_value_release(b);
  ol_value_release(c);
  ol_model_destroy(plain);
  ol_model_destroy(bound);
}

static int count_calls(void *user, const int64_t *tokens, size_t batch, size_t step) {
  (void)tokens;
  (void)batch;
  int *calls = user;
  CHECK((size_t)*calls == step);
  (*calls)++;
  return 0;
}

static void eos_stops_and_pads(void) {
  ol_model *m = load_fortunes(0);
  if (!m) return;
  /* batch 1: stops right after the first space (6th token) */
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.eos_token_id = 32;
  int calls = 0;
  o.on_token = count_calls;
  o.on_token_user = &calls;
  ol_value *out = fortunes_generate(m, THE_PROMPT, 4, &o);
  if (out) {
    CHECK(ol_tensor_dims(out)[1] == 4 + 6);
    CHECK(memcmp(tok(out) + 4, THE_GREEDY, 6 * sizeof(int64_t)) == 0);
  }
  CHECK(calls == 6);
  ol_value_release(out);

  /* batch 2: row 0 "The " ends at its first space; row 1 "the " ... pads */
  static const int64_t other[4] = {83, 104, 101, 32}; /* "She " */
  o.on_token = NULL;
  o.eos_token_id = -1;
  o.max_new_tokens = 16;
  ol_value *solo = fortunes_generate(m, other, 4, &o);
  int64_t first_space = -1;
  for (int i = 4; solo && i < 20; i++)
    if (tok(solo)[i] == 32) {
      first_space = i - 4;
      break;
    }
  int64_t prompts[8];
  memcpy(prompts, THE_PROMPT, sizeof THE_PROMPT);
  memcpy(prompts + 4, other, sizeof other);
  ol_value *ids = ids_tensor(2, 4, prompts);
  fortunes_feeds f;
  make_feeds(m, ids, &f);
  o.eos_token_id = 32;
  o.pad_token_id = 0;
  CHECK_OK(ol_generate(m, NULL, f.names, f.values, f.count, &o, NULL, NULL, &out));
  if (out && solo) {
    int64_t steps = first_space >= 0 && first_space + 1 > 6 ? first_space + 1 : 6;
    if (first_space < 0) steps = 16;
    CHECK(ol_tensor_dims(out)[0] == 2 && ol_tensor_dims(out)[1] == 4 + steps);
    int64_t w = ol_tensor_dims(out)[1];
    for (int64_t i = 0; i < steps; i++) {
      CHECK(tok(out)[4 + i] == (i < 6 ? THE_GREEDY[i] : 0));
      int64_t expect = first_space < 0 || i <= first_space ? tok(solo)[4 + i] : 0;
      CHECK(tok(out)[w + 4 + i] == expect);
    }
  }
  ol_value_release(out);
  /* pad defaults to eos */
  o.pad_token_id = -1;
  CHECK_OK(ol_generate(m, NULL, f.names, f.values, f.count, &o, NULL, NULL, &out));
  if (out && ol_tensor_dims(out)[1] > 10) CHECK(tok(out)[10] == 32);
  ol_value_release(out);
  free_feeds(&f);
  ol_value_release(ids);
  ol_value_release(solo);
  ol_model_destroy(m);
}

/* Row 1 "Hi" left-padded to length 4 gives the same tokens as alone. */
static void left_padding_batch(int bind) {
  ol_model *m = load_fortunes(bind);
  if (!m) return;
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 10;
  static const int64_t hi[2] = {72, 105};
  ol_value *solo = fortunes_generate(m, hi, 2, &o);
  int64_t prompts[8] = {84, 104, 101, 32, 0, 0, 72, 105};
  int64_t mask[8] = {1, 1, 1, 1, 0, 0, 1, 1};
  ol_value *ids = ids_tensor(2, 4, prompts), *mask_v = ids_tensor(2, 4, mask);
  fortunes_feeds f;
  make_feeds(m, ids, &f);
  f.names[f.count] = dup_string("attention_mask");
  f.values[f.count++] = mask_v;
  ol_value *out = NULL;
  CHECK_OK(ol_generate(m, NULL, f.names, f.values, f.count, &o, NULL, NULL, &out));
  if (out && solo) {
    CHECK(ol_tensor_dims(out)[0] == 2 && ol_tensor_dims(out)[1] == 14);
    CHECK(memcmp(tok(out), prompts, 4 * sizeof(int64_t)) == 0);
    CHECK(memcmp(tok(out) + 4, THE_GREEDY, 10 * sizeof(int64_t)) == 0);
    CHECK(memcmp(tok(out) + 14, prompts + 4, 4 * sizeof(int64_t)) == 0);
    CHECK(memcmp(tok(out) + 18, tok(solo) + 2, 10 * sizeof(int64_t)) == 0);
  }
  CHECK(tok(mask_v)[4] == 0 && ol_tensor_dims(mask_v)[1] == 4); /* not modified */
  ol_value_release(out);
  free_feeds(&f); /* releases mask_v too */
  ol_value_release(ids);
  ol_value_release(solo);
  ol_model_destroy(m);
}

static void left_padding_without_bindings(void) { left_padding_batch(0); }
static void left_padding_with_bindings(void) { left_padding_batch(1); }

/* ------------------------------------------------------------ toy models */

static void logits_dtypes_and_ranks(void) {
  static const struct {
    const char *type;
    int to;
  } types[] = {{"float", 1}, {"double", 11}, {"float16", 10}, {"bfloat16", 16}};
  const int64_t prompt[2] = {5, 2};
  for (size_t t = 0; t < 4; t++) {
    ol_model *m = shift_model_typed(types[t].type, types[t].to);
    if (!m) continue;
    ol_generate_options o;
    ol_generate_options_init(&o);
    o.max_new_tokens = 5;
    ol_value *out = NULL;
    CHECK_OK(toy_generate(m, 1, 2, prompt, &o, &out));
    if (out) {
      CHECK(ol_tensor_dims(out)[1] == 7);
      for (int i = 0; i < 5; i++) CHECK(tok(out)[2 + i] == (3 + i) % 8);
    }
    ol_value_release(out);
    ol_model_destroy(m);
  }
  ol_model *m = last_model();
  if (m) {
    ol_generate_options o;
    ol_generate_options_init(&o);
    o.max_new_tokens = 3;
    o.logits_name = "out";
    ol_value *out = NULL;
    const int64_t two[4] = {1, 6, 7, 7};
    CHECK_OK(toy_generate(m, 2, 2, two, &o, &out));
    if (out) {
      static const int64_t want[10] = {1, 6, 7, 0, 1, 7, 7, 0, 1, 2};
      CHECK(ol_tensor_dims(out)[0] == 2 && ol_tensor_dims(out)[1] == 5);
      CHECK(memcmp(tok(out), want, sizeof want) == 0);
    }
    ol_value_release(out);
    o.logits_name = NULL; /* "logits" is not an output of this model */
    CHECK_STATUS(toy_generate(m, 1, 2, two, &o, &out), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "logits") != NULL);
    ol_model_destroy(m);
  }
  /* integer logits */
  m = shift_model_typed("int32", 6);
  if (m) {
    ol_value *out = NULL;
    CHECK_STATUS(toy_generate(m, 1, 2, prompt, NULL, &out), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "logits") != NULL && out == NULL);
    ol_model_destroy(m);
  }
}

static void creates_positions_and_mask(void) {
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 4;
  ol_model *m = positions_model();
  if (m) {
    /* row 0 unpadded: positions 0..2 -> tokens 3, 4, ...; row 1 [0, 1, 1]:
     * positions 0, 0, 1 -> tokens 2, 3, ... */
    int64_t prompts[6] = {7, 7, 7, 0, 7, 7};
    int64_t mask[6] = {1, 1, 1, 0, 1, 1};
    ol_value *ids = ids_tensor(2, 3, prompts), *mask_v = ids_tensor(2, 3, mask), *out = NULL;
    const char *names[2] = {"input_ids", "attention_mask"};
    ol_value *feeds[2] = {ids, mask_v};
    CHECK_OK(ol_generate(m, NULL, names, feeds, 2, &o, NULL, NULL, &out));
    if (out) {
      static const int64_t want[14] = {7, 7, 7, 3, 4, 5, 6, 0, 7, 7, 2, 3, 4, 5};
      CHECK(memcmp(tok(out), want, sizeof want) == 0);
    }
    ol_value_release(out);
    /* no mask fed: created as ones */
    CHECK_OK(ol_generate(m, NULL, names, feeds, 1, &o, NULL, NULL, &out));
    if (out) CHECK(tok(out)[3] == 3 && tok(out)[10] == 3);
    ol_value_release(out);
    /* caller positions are continued */
    int64_t pos[6] = {1, 2, 3, 0, 0, 1};
    ol_value *pos_v = ids_tensor(2, 3, pos);
    const char *names3[3] = {"input_ids", "attention_mask", "position_ids"};
    ol_value *feeds3[3] = {ids, mask_v, pos_v};
    CHECK_OK(ol_generate(m, NULL, names3, feeds3, 3, &o, NULL, NULL, &out));
    if (out) {
      static const int64_t want[14] = {7, 7, 7, 4, 5, 6, 7, 0, 7, 7, 2, 3, 4, 5};
      CHECK(memcmp(tok(out), want, sizeof want) == 0);
    }
    ol_value_release(out);
    /* right padding and non-binary masks are rejected */
    int64_t right[6] = {1, 1, 0, 1, 1, 1}, two[6] = {1, 2, 1, 1, 1, 1}, none[6] = {0, 0, 0, 1, 1, 1};
    const int64_t *bad[3] = {right, two, none};
    for (int k = 0; k < 3; k++) {
      memcpy(ol_tensor_data(mask_v), bad[k], sizeof right);
      CHECK_STATUS(ol_generate(m, NULL, names, feeds, 2, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
      CHECK(strstr(ol_last_error(), "attention_mask") != NULL);
    }
    ol_value_release(pos_v);
    ol_value_release(ids);
    ol_value_release(mask_v);
    ol_model_destroy(m);
  }
  m = mask_model();
  if (m) {
    int64_t prompts[6] = {7, 7, 7, 0, 7, 7};
    int64_t mask[6] = {1, 1, 1, 0, 1, 1};
    ol_value *ids = ids_tensor(2, 3, prompts), *mask_v = ids_tensor(2, 3, mask), *out = NULL;
    const char *names[2] = {"input_ids", "attention_mask"};
    ol_value *feeds[2] = {ids, mask_v};
    CHECK_OK(ol_generate(m, NULL, names, feeds, 2, &o, NULL, NULL, &out));
    if (out) {
      /* the mask grows by one column per step */
      static const int64_t want[14] = {7, 7, 7, 4, 5, 6, 7, 0, 7, 7, 3, 4, 5, 6};
      CHECK(memcmp(tok(out), want, sizeof want) == 0);
    }
    ol_value_release(out);
    CHECK_OK(ol_generate(m, NULL, names, feeds, 1, &o, NULL, NULL, &out));
    if (out) CHECK(tok(out)[3] == 4 && tok(out)[10] == 4);
    ol_value_release(out);
    ol_value_release(ids);
    ol_value_release(mask_v);
    ol_model_destroy(m);
  }
}

/* present = Concat(past, input_ids); the next token is (sum of every token
 * seen + 1) % 8. Bound (past <- present), each step must feed only the new
 * token; unbound with an empty past fed every step, the whole prefix. Both
 * give the same tokens. */
static ol_model *running_sum_model(int bind) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "sum (int64[B,S] input_ids, int64[B,P] past) => (float[B,1,8] logits, int64[B,T] present)"
           " <%s, int64[1] axes = {1}, int64 eight = {8}> {\n"
           "  present = Concat<axis = 1>(past, input_ids)\n"
           "  s = ReduceSum<keepdims = 1>(present, axes)\n"
           "  m = Mod(s, eight)\n"
           "  logits = Gather(table, m)\n"
           "}\n",
           table);
  ol_model *m = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (!m || !bind) return m;
  const char *in = "past", *out = "present";
  ol_model *bound = NULL;
  CHECK_OK(ol_model_bind_persistent(m, &in, &out, 1, &bound));
  ol_model_destroy(m);
  return bound;
}

static void state_feeds_one_token_per_step(void) {
  ol_model *models[2] = {running_sum_model(0), running_sum_model(1)};
  const int64_t prompt[6] = {1, 2, 3, 0, 0, 5};
  int64_t want[2][10];
  for (int b = 0; b < 2; b++) { /* simulate */
    int64_t sum = 0;
    for (int j = 0; j < 10; j++) {
      want[b][j] = j < 3 ? prompt[b * 3 + j] : (sum + 1) % 8;
      sum += want[b][j];
    }
  }
  for (int k = 0; k < 2; k++) {
    ol_model *m = models[k];
    if (!m) continue;
    CHECK(m->data->proto->graph->n_persistent_bindings == (size_t)k);
    ol_generate_options o;
    ol_generate_options_init(&o);
    o.max_new_tokens = 7;
    int64_t dims[2] = {2, 0};
    ol_value *ids = ids_tensor(2, 3, prompt), *past = NULL, *out = NULL;
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &past));
    const char *names[2] = {"input_ids", "past"};
    ol_value *feeds[2] = {ids, past};
    for (int call = 0; call < 2; call++) {
      CHECK_OK(ol_generate(m, NULL, names, feeds, 2, &o, NULL, NULL, &out));
      if (out) {
        CHECK(ol_tensor_dims(out)[0] == 2 && ol_tensor_dims(out)[1] == 10);
        CHECK(memcmp(tok(out), want, sizeof want) == 0);
      }
      ol_value_release(out);
      out = NULL;
    }
    CHECK(ol_tensor_dims(past)[1] == 0 && memcmp(ol_tensor_data(ids), prompt, sizeof prompt) == 0);
    if (k == 1) { /* the bound input must be fed */
      CHECK(ol_generate(m, NULL, names, feeds, 1, &o, NULL, NULL, &out) != OL_OK);
      CHECK(out == NULL);
    }
    ol_value_release(ids);
    ol_value_release(past);
    ol_model_destroy(m);
  }
}

static int stop_after_three(void *user, const int64_t *tokens, size_t batch, size_t step) {
  int64_t *seen = user;
  CHECK(batch == 1);
  seen[step] = tokens[0];
  return step == 2;
}

static void callback_stops_early(void) {
  ol_model *m = shift_model_typed("float", 1);
  if (!m) return;
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 10;
  int64_t seen[10] = {0};
  o.on_token = stop_after_three;
  o.on_token_user = seen;
  const int64_t prompt[1] = {0};
  ol_value *out = NULL;
  CHECK_OK(toy_generate(m, 1, 1, prompt, &o, &out));
  if (out) {
    CHECK(ol_tensor_dims(out)[1] == 4);
    CHECK(tok(out)[3] == 3 && seen[0] == 1 && seen[1] == 2 && seen[2] == 3);
  }
  ol_value_release(out);
  /* max_new_tokens 0: the prompt alone */
  o.on_token = NULL;
  o.max_new_tokens = 0;
  CHECK_OK(toy_generate(m, 1, 1, prompt, &o, &out));
  if (out) CHECK(ol_tensor_dims(out)[1] == 1 && tok(out)[0] == 0);
  ol_value_release(out);
  /* eos in every row stops early; finished rows are padded */
  o.max_new_tokens = 10;
  o.eos_token_id = 4;
  o.pad_token_id = 7;
  const int64_t two[2] = {2, 0};
  CHECK_OK(toy_generate(m, 2, 1, two, &o, &out));
  if (out) {
    static const int64_t want[10] = {2, 3, 4, 7, 7, 0, 1, 2, 3, 4};
    CHECK(ol_tensor_dims(out)[1] == 5);
    CHECK(memcmp(tok(out), want, sizeof want) == 0);
  }
  ol_value_release(out);
  ol_model_destroy(m);
}

static void toy_sampling(void) {
  ol_model *m = shift_model_typed("float", 1);
  if (!m) return;
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 32;
  o.temperature = 1.0;
  o.seed = 7;
  const int64_t prompt[1] = {0};
  ol_value *a = NULL, *b = NULL, *c = NULL;
  CHECK_OK(toy_generate(m, 1, 1, prompt, &o, &a));
  CHECK_OK(toy_generate(m, 1, 1, prompt, &o, &b));
  o.seed = 8;
  CHECK_OK(toy_generate(m, 1, 1, prompt, &o, &c));
  if (a && b && c) {
    CHECK(memcmp(tok(a), tok(b), 33 * sizeof(int64_t)) == 0);
    CHECK(memcmp(tok(a), tok(c), 33 * sizeof(int64_t)) != 0);
    int not_greedy = 0;
    for (int i = 1; i < 33; i++) {
      CHECK(tok(a)[i] >= 0 && tok(a)[i] < 8);
      if (tok(a)[i] != (tok(a)[i - 1] + 1) % 8) not_greedy = 1;
    }
    CHECK(not_greedy);
  }
  ol_value_release(a);
  ol_value_release(b);
  ol_value_release(c);
  /* a tiny temperature is greedy in effect */
  o.temperature = 1e-3;
  CHECK_OK(toy_generate(m, 1, 1, prompt, &o, &a));
  if (a)
    for (int i = 1; i < 33; i++) CHECK(tok(a)[i] == i % 8);
  ol_value_release(a);
  ol_model_destroy(m);
}

static void errors(void) {
  ol_model *m = shift_model_typed("float", 1);
  if (!m) return;
  ol_generate_options o;
  ol_generate_options_init(&o);
  const int64_t prompt[2] = {1, 2};
  ol_value *ids = ids_tensor(1, 2, prompt), *out = (ol_value *)&o;
  const char *names[1] = {"input_ids"};
  const char *wrong_names[1] = {"tokens"};

  CHECK_STATUS(ol_generate(m, NULL, wrong_names, &ids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "input_ids") != NULL && out == NULL);
  CHECK_STATUS(ol_generate(m, NULL, NULL, NULL, 0, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);

  int64_t dims[2] = {1, 2};
  ol_value *fids = NULL, *empty = NULL, *flat = NULL;
  ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 2, &fids);
  CHECK_STATUS(ol_generate(m, NULL, names, &fids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "int64") != NULL);
  int64_t zero[2] = {1, 0};
  ol_tensor_create(NULL, OL_DTYPE_INT64, zero, 2, &empty);
  CHECK_STATUS(ol_generate(m, NULL, names, &empty, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  ol_tensor_create(NULL, OL_DTYPE_INT64, dims + 1, 1, &flat);
  CHECK_STATUS(ol_generate(m, NULL, names, &flat, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);

  const double bad_temps[3] = {-0.5, NAN, INFINITY};
  for (int i = 0; i < 3; i++) {
    o.temperature = bad_temps[i];
    CHECK_STATUS(ol_generate(m, NULL, names, &ids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "temperature") != NULL);
  }
  ol_generate_options_init(&o);
  o.max_new_tokens = -1;
  CHECK_STATUS(ol_generate(m, NULL, names, &ids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  ol_generate_options_init(&o);
  o.eos_token_id = -2;
  CHECK_STATUS(ol_generate(m, NULL, names, &ids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  ol_generate_options_init(&o);

  /* duplicated feed, unknown feed, mask fed to a model without one */
  const char *twice[2] = {"input_ids", "input_ids"};
  ol_value *two[2] = {ids, ids};
  CHECK_STATUS(ol_generate(m, NULL, twice, two, 2, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  const char *extra[2] = {"input_ids", "bogus"};
  CHECK(ol_generate(m, NULL, extra, two, 2, &o, NULL, NULL, &out) != OL_OK);
  const char *masked[2] = {"input_ids", "attention_mask"};
  CHECK_STATUS(ol_generate(m, NULL, masked, two, 2, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_generate(NULL, NULL, names, &ids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_generate(m, NULL, names, &ids, 1, &o, NULL, NULL, NULL), OL_INVALID_ARGUMENT);

  /* a cancelled completion: nothing runs */
  ol_completion *c = NULL;
  CHECK_OK(ol_completion_create(&c));
  CHECK_OK(ol_completion_cancel(c, "user pressed stop"));
  CHECK_STATUS(ol_generate(m, NULL, names, &ids, 1, &o, NULL, c, &out), OL_CANCELLED);
  CHECK(out == NULL && strstr(ol_last_error(), "user pressed stop") != NULL);
  ol_completion_destroy(c);
  /* a live completion and a context are accepted */
  CHECK_OK(ol_completion_create(&c));
  ol_context *ctx = NULL;
  CHECK_OK(ol_context_create(NULL, &ctx));
  CHECK_OK(ol_generate(m, ctx, names, &ids, 1, &o, NULL, c, &out));
  if (out) CHECK(ol_tensor_dims(out)[1] == 18);
  ol_value_release(out);
  ol_context_destroy(ctx);
  ol_completion_destroy(c);

  /* a declared mask that generate cannot create */
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "fmask (int64[B,S] input_ids, float[B,S] attention_mask) => (float[B,S,8] logits) <%s> {\n"
           "  logits = Gather(table, input_ids)\n"
           "}\n",
           table);
  ol_model *fm = NULL;
  CHECK_OK(ol_model_parse_text(text, &fm));
  if (fm) {
    CHECK_STATUS(ol_generate(fm, NULL, names, &ids, 1, &o, NULL, NULL, &out), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "attention_mask") != NULL && strstr(ol_last_error(), "int64") != NULL);
    ol_model_destroy(fm);
  }

  ol_value_release(fids);
  ol_value_release(empty);
  ol_value_release(flat);
  ol_value_release(ids);
  ol_model_destroy(m);
}

static int cancel_at_step(void *user, const int64_t *tokens, size_t batch, size_t step) {
  (void)tokens;
  (void)batch;
  if (step == 2) ol_completion_cancel(user, "enough");
  return 0;
}

static void cancelled_between_tokens(void) {
  ol_model *models[2] = {shift_model_typed("float", 1), load_fortunes(1)};
  for (int k = 0; k < 2; k++) {
    ol_model *m = models[k];
    if (!m) continue;
    ol_completion *c = NULL;
    CHECK_OK(ol_completion_create(&c));
    ol_generate_options o;
    ol_generate_options_init(&o);
    o.on_token = cancel_at_step;
    o.on_token_user = c;
    static const int64_t small[4] = {1, 2, 3, 4};
    ol_value *ids = ids_tensor(1, 4, k == 1 ? THE_PROMPT : small), *out = NULL;
    fortunes_feeds f;
    if (k == 1) make_feeds(m, ids, &f);
    const char *names[1] = {"input_ids"};
    ol_status st = k == 1 ? ol_generate(m, NULL, f.names, f.values, f.count, &o, NULL, c, &out)
                          : ol_generate(m, NULL, names, &ids, 1, &o, NULL, c, &out);
    CHECK_STATUS(st, OL_CANCELLED);
    CHECK(out == NULL && strstr(ol_last_error(), "enough") != NULL);
    if (k == 1) free_feeds(&f);
    ol_value_release(ids);
    ol_completion_destroy(c);
    ol_model_destroy(m);
  }
}

/* Every allocation failure is reported, nothing leaks, and a retry works. */
static void allocation_failures(void) {
  ol_model *m = shift_model_typed("float", 1);
  if (!m) return;
  ol_allocator *a = NULL;
  CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
  if (!a) return;
  ol_session_options so;
  ol_session_options_init(&so);
  so.allocator = a;
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 4;
  const int64_t prompt[2] = {1, 2};
  ol_value *ids = ids_tensor(1, 2, prompt), *out = NULL;
  const char *names[1] = {"input_ids"};
  int succeeded = 0;
  for (int64_t k = 0; k < 200 && !succeeded; k++) {
    ol_allocator_fail_after(a, k);
    ol_status st = ol_generate(m, NULL, names, &ids, 1, &o, &so, NULL, &out);
    ol_allocator_fail_after(a, -1);
    if (st == OL_OK) {
      succeeded = 1;
      CHECK(out && ol_tensor_dims(out)[1] == 6 && tok(out)[5] == 6);
      ol_value_release(out);
    } else {
      CHECK_STATUS(st, OL_OUT_OF_MEMORY);
      CHECK(out == NULL);
    }
    ol_allocator_stats stats;
    ol_allocator_get_stats(a, &stats);
    CHECK(stats.live_bytes == 0 && stats.live_allocations == 0);
  }
  CHECK(succeeded);
  ol_value_release(ids);
  ol_allocator_destroy(a);
  ol_model_destroy(m);
}

/* ------------------------------------------------------------ the step API */

/* Steps a generator to the end, checking each step's tokens against the
 * columns of `want` ([batch, prompt + n]); returns the steps taken. */
static int64_t step_to_end(ol_generator *g, const ol_value *want, int64_t prompt) {
  int64_t batch = (int64_t)ol_generator_batch(g), width = ol_tensor_dims(want)[1], steps = 0;
  CHECK(ol_generator_last_tokens(g) == NULL || ol_generator_generated(g) > 0);
  while (!ol_generator_done(g)) {
    int done = -1;
    CHECK_OK(ol_generator_step(g, &done));
    steps++;
    CHECK(done == ol_generator_done(g) && ol_generator_generated(g) == steps);
    const int64_t *last = ol_generator_last_tokens(g);
    CHECK(last != NULL);
    for (int64_t b = 0; last && b < batch && prompt + steps <= width; b++)
      CHECK(last[b] == tok(want)[b * width + prompt + steps - 1]);
    if (steps > 1000) break;
  }
  return steps;
}

/* Stepping gives ol_generate's tokens step by step, on both paths (a session
 * re-running the prefix, a state fed one token per step), greedy and sampled. */
static void steps_equal_generate(void) {
  for (int bind = 0; bind < 2; bind++) {
    ol_model *m = load_fortunes(bind);
    if (!m) continue;
    ol_value *ids = ids_tensor(1, 4, THE_PROMPT);
    fortunes_feeds f;
    make_feeds(m, ids, &f);
    ol_generate_options o;
    ol_generate_options_init(&o);
    for (int sampled = 0; sampled < 2; sampled++) {
      o.temperature = sampled ? 0.9 : 0.0;
      o.seed = 42;
      ol_value *want = NULL, *got = NULL;
      CHECK_OK(ol_generate(m, NULL, f.names, f.values, f.count, &o, NULL, NULL, &want));
      /* sampled: on the caller's session (used without bindings, unused with) */
      ol_session *s = NULL;
      if (sampled) CHECK_OK(ol_session_create(m, NULL, &s));
      ol_generator *g = NULL;
      CHECK_OK(ol_generator_create(m, s, NULL, f.names, f.values, f.count, &o, NULL, NULL, &g));
      CHECK(g && ol_generator_batch(g) == 1 && ol_generator_generated(g) == 0 && !ol_generator_done(g));
      CHECK(ol_generator_last_tokens(g) == NULL);
      if (g && want) CHECK(step_to_end(g, want, 4) == 16);
      CHECK_OK(ol_generator_tokens(g, &got));
      if (want && got) {
        CHECK(ol_tensor_dims(got)[1] == 20);
        CHECK(memcmp(tok(got), tok(want), 20 * sizeof(int64_t)) == 0);
        if (!sampled) CHECK(memcmp(tok(got) + 4, THE_GREEDY, sizeof THE_GREEDY) == 0);
      }
      /* a finished generator refuses another step and keeps its tokens */
      CHECK_STATUS(ol_generator_step(g, NULL), OL_FAILED_PRECONDITION);
      CHECK(strstr(ol_last_error(), "finished") != NULL && ol_generator_generated(g) == 16);
      ol_generator_destroy(g);
      if (s) CHECK(ol_session_input_count(s) >= f.count); /* still the caller's */
      ol_session_destroy(s);
      ol_value_release(want);
      ol_value_release(got);
    }
    free_feeds(&f);
    ol_value_release(ids);
    ol_model_destroy(m);
  }
}

/* The generator keeps what it needs: feeds released right after create. */
static void generator_retains_its_feeds(void) {
  ol_model *m = running_sum_model(0);
  if (!m) return;
  const int64_t prompt[2] = {1, 2};
  int64_t dims[2] = {1, 0};
  ol_value *ids = ids_tensor(1, 2, prompt), *past = NULL, *out = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &past));
  char ids_name[] = "input_ids", past_name[] = "past";
  const char *names[2] = {ids_name, past_name};
  ol_value *feeds[2] = {ids, past};
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 3;
  ol_generator *g = NULL;
  CHECK_OK(ol_generator_create(m, NULL, NULL, names, feeds, 2, &o, NULL, NULL, &g));
  ol_value_release(ids);
  ol_value_release(past);
  memset(past_name, 'x', 4); /* names are copied too */
  while (g && !ol_generator_done(g)) CHECK_OK(ol_generator_step(g, NULL));
  CHECK_OK(ol_generator_tokens(g, &out));
  if (out) {
    static const int64_t want[5] = {1, 2, 4, 0, 0}; /* (sum + 1) % 8 */
    CHECK(ol_tensor_dims(out)[1] == 5 && memcmp(tok(out), want, sizeof want) == 0);
  }
  ol_value_release(out);
  ol_generator_destroy(g);
  ol_model_destroy(m);
}

static void generator_create_errors(void) {
  ol_model *m = shift_model_typed("float", 1);
  if (!m) return;
  const int64_t prompt[2] = {1, 2};
  ol_value *ids = ids_tensor(1, 2, prompt), *out = NULL;
  const char *names[1] = {"input_ids"};
  ol_generator *g = (ol_generator *)&g;
  ol_generate_options o;
  ol_generate_options_init(&o);
  CHECK_STATUS(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, NULL), OL_INVALID_ARGUMENT);
  CHECK_STATUS(ol_generator_create(NULL, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g), OL_INVALID_ARGUMENT);
  CHECK(g == NULL);
  ol_model *other = last_model();
  ol_session *foreign = NULL;
  if (other) CHECK_OK(ol_session_create(other, NULL, &foreign));
  if (foreign) {
    CHECK_STATUS(ol_generator_create(m, foreign, NULL, names, &ids, 1, &o, NULL, NULL, &g), OL_INVALID_ARGUMENT);
    CHECK(g == NULL && strstr(ol_last_error(), "not made from this model") != NULL);
  }
  ol_session_destroy(foreign);
  ol_model_destroy(other);
  o.max_new_tokens = -3;
  CHECK_STATUS(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g), OL_INVALID_ARGUMENT);
  CHECK(g == NULL && strstr(ol_last_error(), "max_new_tokens must be >= 0, got -3") != NULL);
  ol_generate_options_init(&o);
  o.pad_token_id = -7;
  CHECK_STATUS(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "pad_token_id") != NULL);
  o.pad_token_id = -1;
  o.input_ids_name = "tokens"; /* the feeds have no 'tokens' */
  CHECK_STATUS(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g), OL_INVALID_ARGUMENT);
  CHECK(strstr(ol_last_error(), "'tokens'") != NULL);
  o.input_ids_name = NULL;
  o.max_new_tokens = 0;
  CHECK_OK(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g));
  /* max_new_tokens 0: done at once, the prompt is the result */
  CHECK(ol_generator_done(g) && ol_generator_generated(g) == 0 && ol_generator_last_tokens(g) == NULL);
  CHECK_STATUS(ol_generator_step(g, NULL), OL_FAILED_PRECONDITION);
  CHECK_OK(ol_generator_tokens(g, &out));
  if (out) CHECK(ol_tensor_dims(out)[1] == 2 && tok(out)[1] == 2);
  CHECK_STATUS(ol_generator_tokens(g, NULL), OL_INVALID_ARGUMENT);
  ol_value_release(out);
  ol_generator_destroy(g);
  /* NULL handles */
  int done = 0;
  CHECK_STATUS(ol_generator_step(NULL, &done), OL_INVALID_ARGUMENT);
  CHECK(done == 1 && ol_generator_done(NULL) && ol_generator_batch(NULL) == 0 && ol_generator_generated(NULL) == 0);
  CHECK(ol_generator_last_tokens(NULL) == NULL);
  CHECK_STATUS(ol_generator_tokens(NULL, &out), OL_INVALID_ARGUMENT);
  ol_generator_stop(NULL);
  ol_generator_destroy(NULL);
  ol_value_release(ids);
  ol_model_destroy(m);
}

/* Each way a generation ends, seen through the step API. */
static void generator_stop_conditions(void) {
  ol_model *m = shift_model_typed("float", 1);
  if (!m) return;
  const char *names[1] = {"input_ids"};
  const int64_t two[2] = {2, 0};
  ol_value *ids = ids_tensor(2, 1, two), *out = NULL;
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 10;
  ol_generator *g = NULL;
  /* ol_generator_stop: done, not an error; the tokens so far are the result */
  CHECK_OK(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g));
  CHECK_OK(ol_generator_step(g, NULL));
  CHECK_OK(ol_generator_step(g, NULL));
  ol_generator_stop(g);
  CHECK(ol_generator_done(g));
  CHECK_STATUS(ol_generator_step(g, NULL), OL_FAILED_PRECONDITION);
  CHECK_OK(ol_generator_tokens(g, &out));
  if (out) {
    static const int64_t want[6] = {2, 3, 4, 0, 1, 2};
    CHECK(ol_tensor_dims(out)[1] == 3 && memcmp(tok(out), want, sizeof want) == 0);
  }
  ol_value_release(out);
  ol_generator_destroy(g);
  /* every row at eos: done on that step; a finished row gets pad meanwhile */
  o.eos_token_id = 4;
  o.pad_token_id = 7;
  CHECK_OK(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g));
  static const int64_t rows[4][2] = {{3, 1}, {4, 2}, {7, 3}, {7, 4}};
  for (int s = 0; g && s < 4; s++) {
    int done = -1;
    CHECK_OK(ol_generator_step(g, &done));
    const int64_t *last = ol_generator_last_tokens(g);
    CHECK(last && last[0] == rows[s][0] && last[1] == rows[s][1]);
    CHECK(done == (s == 3));
  }
  ol_generator_destroy(g);
  /* max_new_tokens: done with the last one */
  ol_generate_options_init(&o);
  o.max_new_tokens = 2;
  CHECK_OK(ol_generator_create(m, NULL, NULL, names, &ids, 1, &o, NULL, NULL, &g));
  int done = -1;
  CHECK_OK(ol_generator_step(g, &done));
  CHECK(done == 0);
  CHECK_OK(ol_generator_step(g, &done));
  CHECK(done == 1 && ol_generator_generated(g) == 2);
  ol_generator_destroy(g);
  ol_value_release(ids);
  ol_model_destroy(m);
}

/* A left-padded mask through the step API: each step feeds the grown mask
 * (mask_model) and continued positions (positions_model). */
static void generator_masks_and_positions(void) {
  int64_t prompts[6] = {7, 7, 7, 0, 7, 7};
  int64_t mask[6] = {1, 1, 1, 0, 1, 1};
  static const int64_t want_mask[2][4] = {{4, 5, 6, 7}, {3, 4, 5, 6}};
  static const int64_t want_pos[2][4] = {{3, 4, 5, 6}, {2, 3, 4, 5}};
  for (int k = 0; k < 2; k++) {
    ol_model *m = k ? positions_model() : mask_model();
    if (!m) continue;
    ol_value *ids = ids_tensor(2, 3, prompts), *mask_v = ids_tensor(2, 3, mask);
    const char *names[2] = {"input_ids", "attention_mask"};
    ol_value *feeds[2] = {ids, mask_v};
    ol_generate_options o;
    ol_generate_options_init(&o);
    o.max_new_tokens = 4;
    ol_generator *g = NULL;
    CHECK_OK(ol_generator_create(m, NULL, NULL, names, feeds, 2, &o, NULL, NULL, &g));
    for (int s = 0; g && s < 4; s++) {
      CHECK_OK(ol_generator_step(g, NULL));
      const int64_t *last = ol_generator_last_tokens(g);
      const int64_t(*want)[4] = k ? want_pos : want_mask;
      CHECK(last && last[0] == want[0][s] && last[1] == want[1][s]);
    }
    CHECK(ol_generator_done(g) && tok(mask_v)[3] == 0 && ol_tensor_dims(mask_v)[1] == 3);
    ol_generator_destroy(g);
    /* a right-padded mask is refused at create */
    {
      int64_t right[6] = {1, 1, 0, 1, 1, 1};
      memcpy(ol_tensor_data(mask_v), right, sizeof right);
      g = (ol_generator *)&g;
      CHECK_STATUS(ol_generator_create(m, NULL, NULL, names, feeds, 2, &o, NULL, NULL, &g), OL_INVALID_ARGUMENT);
      CHECK(g == NULL && strstr(ol_last_error(), "left-padded") != NULL);
    }
    ol_value_release(ids);
    ol_value_release(mask_v);
    ol_model_destroy(m);
  }
}

/* Cancelling between steps: the next step fails with OL_CANCELLED and the
 * reason; the tokens so far stay readable. Stateless and stateful. */
static void generator_cancelled_between_steps(void) {
  for (int bind = 0; bind < 2; bind++) {
    ol_model *m = running_sum_model(bind);
    if (!m) continue;
    const int64_t prompt[2] = {1, 2};
    int64_t dims[2] = {1, 0};
    ol_value *ids = ids_tensor(1, 2, prompt), *past = NULL, *out = NULL;
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &past));
    const char *names[2] = {"input_ids", "past"};
    ol_value *feeds[2] = {ids, past};
    ol_completion *c = NULL;
    CHECK_OK(ol_completion_create(&c));
    ol_generator *g = NULL;
    CHECK_OK(ol_generator_create(m, NULL, NULL, names, feeds, 2, NULL, NULL, c, &g));
    CHECK_OK(ol_generator_step(g, NULL));
    CHECK_OK(ol_generator_step(g, NULL));
    CHECK_OK(ol_completion_cancel(c, "stop button"));
    CHECK_STATUS(ol_generator_step(g, NULL), OL_CANCELLED);
    CHECK(strstr(ol_last_error(), "stop button") != NULL && strstr(ol_last_error(), "after 2 tokens") != NULL);
    CHECK(ol_generator_generated(g) == 2 && !ol_generator_done(g));
    CHECK_OK(ol_generator_tokens(g, &out));
    if (out) {
      static const int64_t want[4] = {1, 2, 4, 0};
      CHECK(ol_tensor_dims(out)[1] == 4 && memcmp(tok(out), want, sizeof want) == 0);
    }
    ol_value_release(out);
    ol_generator_destroy(g);
    ol_completion_destroy(c);
    ol_value_release(ids);
    ol_value_release(past);
    ol_model_destroy(m);
  }
}

/* An allocation failing inside any step leaves the generator (and its
 * persistent state) as it was: stepping again continues the same tokens. */
static void generator_failed_step_changes_nothing(void) {
  for (int bind = 0; bind < 2; bind++) {
    ol_model *m = running_sum_model(bind);
    ol_allocator *a = NULL;
    CHECK_OK(ol_allocator_create(NULL, NULL, NULL, &a));
    if (!m || !a) {
      ol_model_destroy(m);
      ol_allocator_destroy(a);
      continue;
    }
    ol_session_options so;
    ol_session_options_init(&so);
    so.allocator = a;
    const int64_t prompt[6] = {1, 2, 3, 0, 0, 5};
    int64_t dims[2] = {2, 0};
    ol_value *ids = ids_tensor(2, 3, prompt), *past = NULL, *want = NULL, *got = NULL;
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &past));
    const char *names[2] = {"input_ids", "past"};
    ol_value *feeds[2] = {ids, past};
    ol_generate_options o;
    ol_generate_options_init(&o);
    o.max_new_tokens = 6;
    CHECK_OK(ol_generate(m, NULL, names, feeds, 2, &o, &so, NULL, &want));
    ol_generator *g = NULL;
    CHECK_OK(ol_generator_create(m, NULL, NULL, names, feeds, 2, &o, &so, NULL, &g));
    /* every step: fail its first allocation, then its second, ... until it
     * goes through (the step's allocation count is reached) */
    int failures = 0;
    for (int64_t k = 0, tries = 0; g && !ol_generator_done(g) && tries < 10000; tries++) {
      int64_t before = ol_generator_generated(g);
      ol_allocator_fail_after(a, k);
      ol_status st = ol_generator_step(g, NULL);
      ol_allocator_fail_after(a, -1);
      k = st == OL_OK ? 0 : k + 1;
      if (st == OL_OK) continue;
      failures++;
      CHECK_STATUS(st, OL_OUT_OF_MEMORY);
      CHECK(ol_generator_generated(g) == before && !ol_generator_done(g));
    }
    CHECK(failures > 0);
    CHECK_OK(ol_generator_tokens(g, &got));
    if (want && got) CHECK(ol_tensor_dims(got)[1] == 9 && memcmp(tok(got), tok(want), 18 * sizeof(int64_t)) == 0);
    ol_value_release(got);
    ol_value_release(want);
    ol_generator_destroy(g);
    ol_value_release(ids);
    ol_value_release(past);
    ol_allocator_stats stats;
    ol_allocator_get_stats(a, &stats);
    CHECK(stats.live_bytes == 0 && stats.live_allocations == 0);
    ol_allocator_destroy(a);
    ol_model_destroy(m);
  }
}

/* A session that grows its Concat outputs returns pitched logits (spare
 * rows per batch row): the generator reads them densified. */
static void generator_on_a_growing_session(void) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "grow (int64[B,S] input_ids, float[B,P,8] seen) => (float[B,T,8] logits) <%s> {\n"
           "  f = Gather(table, input_ids)\n"
           "  logits = Concat<axis = 1>(seen, f)\n"
           "}\n",
           table);
  ol_model *m = NULL;
  ol_session *s = NULL;
  CHECK_OK(ol_model_parse_text(text, &m));
  if (m) CHECK_OK(ol_session_create(m, NULL, &s));
  if (!s) {
    ol_model_destroy(m);
    return;
  }
  ol_session_grow_outputs(s, true);
  const int64_t prompt[4] = {1, 2, 5, 6};
  int64_t dims[3] = {2, 0, 8};
  ol_value *ids = ids_tensor(2, 2, prompt), *seen = NULL, *out = NULL;
  CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 3, &seen));
  const char *names[2] = {"input_ids", "seen"};
  ol_value *feeds[2] = {ids, seen};
  const char *outn = "logits";
  CHECK_OK(ol_session_run(s, names, feeds, 2, &outn, &out, 1, NULL));
  CHECK(out && ol_tensor_is_strided(&out->tensor)); /* the case under test */
  ol_value_release(out);
  out = NULL;
  ol_generate_options o;
  ol_generate_options_init(&o);
  o.max_new_tokens = 3;
  ol_generator *g = NULL;
  CHECK_OK(ol_generator_create(m, s, NULL, names, feeds, 2, &o, NULL, NULL, &g));
  while (g && !ol_generator_done(g)) CHECK_OK(ol_generator_step(g, NULL));
  CHECK_OK(ol_generator_tokens(g, &out));
  if (out) {
    static const int64_t want[10] = {1, 2, 3, 4, 5, 5, 6, 7, 0, 1};
    CHECK(memcmp(tok(out), want, sizeof want) == 0);
  }
  ol_value_release(out);
  ol_generator_destroy(g);
  ol_value_release(ids);
  ol_value_release(seen);
  ol_session_destroy(s);
  ol_model_destroy(m);
}

/* Logits of the wrong batch size: a session's step fails the same way every
 * time; a state has already taken the step, so the generator ends. */
static void generator_bad_logits(void) {
  char table[1024], text[4096];
  table_text(table, sizeof table);
  snprintf(text, sizeof text,
           "<ir_version: 10, opset_import: [\"\" : 18]>\n"
           "one (int64[B,S] input_ids, int64[B,P] past) => (float[N,1,8] logits, int64[B,T] present)"
           " <%s, int64[2] axes = {0, 1}, int64 eight = {8}> {\n"
           "  present = Concat<axis = 1>(past, input_ids)\n"
           "  s = ReduceSum<keepdims = 1>(present, axes)\n"
           "  m = Mod(s, eight)\n"
           "  logits = Gather(table, m)\n"
           "}\n",
           table);
  for (int bind = 0; bind < 2; bind++) {
    ol_model *m = NULL;
    CHECK_OK(ol_model_parse_text(text, &m));
    if (m && bind) {
      const char *in = "past", *outn = "present";
      ol_model *bound = NULL;
      CHECK_OK(ol_model_bind_persistent(m, &in, &outn, 1, &bound));
      ol_model_destroy(m);
      m = bound;
    }
    if (!m) continue;
    const int64_t prompt[4] = {1, 2, 3, 4};
    int64_t dims[2] = {2, 0};
    ol_value *ids = ids_tensor(2, 2, prompt), *past = NULL;
    CHECK_OK(ol_tensor_create(NULL, OL_DTYPE_INT64, dims, 2, &past));
    const char *names[2] = {"input_ids", "past"};
    ol_value *feeds[2] = {ids, past};
    ol_generator *g = NULL;
    CHECK_OK(ol_generator_create(m, NULL, NULL, names, feeds, 2, NULL, NULL, NULL, &g));
    CHECK_STATUS(ol_generator_step(g, NULL), OL_INVALID_ARGUMENT);
    CHECK(strstr(ol_last_error(), "logits") != NULL);
    CHECK(ol_generator_generated(g) == 0 && ol_generator_done(g) == bind);
    CHECK_STATUS(ol_generator_step(g, NULL), bind ? OL_FAILED_PRECONDITION : OL_INVALID_ARGUMENT);
    if (bind) CHECK(strstr(ol_last_error(), "cannot continue") != NULL);
    ol_generator_destroy(g);
    ol_value_release(ids);
    ol_value_release(past);
    ol_model_destroy(m);
  }
}

OL_TEST_MAIN(TEST(greedy_without_bindings), TEST(greedy_with_bindings), TEST(seeded_sampling_is_reproducible),
             TEST(eos_stops_and_pads), TEST(left_padding_without_bindings), TEST(left_padding_with_bindings),
             TEST(logits_dtypes_and_ranks), TEST(creates_positions_and_mask), TEST(callback_stops_early), TEST(state_feeds_one_token_per_step),
             TEST(toy_sampling), TEST(errors), TEST(cancelled_between_tokens), TEST(allocation_failures),
             TEST(steps_equal_generate), TEST(generator_retains_its_feeds), TEST(generator_create_errors),
             TEST(generator_stop_conditions), TEST(generator_masks_and_positions),
             TEST(generator_cancelled_between_steps), TEST(generator_failed_step_changes_nothing),
             TEST(generator_on_a_growing_session), TEST(generator_bad_logits))
