/* Greedy decoding of a Llama-style decoder export with its KV cache fed back
 * (present.* -> past_key_values.*), through the public C API. Prints JSON:
 *   {"tokens":[...], "hash":"<digest of every step's logits bytes>"}
 * Built natively and to wasm; tests/parity compares both and onnxruntime-node.
 * Usage: decode [--threads N] [--paged K/V] MODEL STEPS TOKEN...   (the prompt as token ids)
 * --paged K/V: the model on paged caches (ol_model_to_paged), key and value
 * pages appended as K and V (int8, uint8, int4, uint4, int2, uint2 with
 * calibrated scales, or float32); prints tokens and hash only. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxlight.h"

#define MAX_NAMES 128

static int fail(const char *what) {
  fprintf(stderr, "decode: %s: %s\n", what, ol_last_error());
  return 1;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

/* "int8" -> OL_DTYPE_INT8 ... ("float32": dense pages); false if unknown. */
static bool page_type(const char *name, size_t len, ol_dtype *out) {
  static const struct {
    const char *name;
    ol_dtype type;
  } types[] = {{"float32", OL_DTYPE_FLOAT}, {"int8", OL_DTYPE_INT8}, {"uint8", OL_DTYPE_UINT8}, {"int4", OL_DTYPE_INT4},
               {"uint4", OL_DTYPE_UINT4}, {"int2", OL_DTYPE_INT2}, {"uint2", OL_DTYPE_UINT2}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++)
    if (strlen(types[i].name) == len && strncmp(types[i].name, name, len) == 0) {
      *out = types[i].type;
      return true;
    }
  return false;
}

int main(int argc, char **argv) {
  /* --threads N: the intra-op thread count (the bits must not change) */
  if (argc > 2 && strcmp(argv[1], "--threads") == 0) {
    if (ol_set_num_threads(atoi(argv[2])) != OL_OK) return fail("threads");
    argc -= 2, argv += 2;
  }
  /* --paged K/V: paged caches with key pages K and value pages V */
  bool paged = false;
  ol_page_format_rule rule = {0};
  if (argc > 2 && strcmp(argv[1], "--paged") == 0) {
    const char *slash = strchr(argv[2], '/');
    if (!slash || !page_type(argv[2], (size_t)(slash - argv[2]), &rule.formats.key.type) ||
        !page_type(slash + 1, strlen(slash + 1), &rule.formats.value.type)) {
      fprintf(stderr, "decode: --paged takes KEY/VALUE page types, got '%s'\n", argv[2]);
      return 2;
    }
    paged = true;
    argc -= 2, argv += 2;
  }
  if (argc < 4) {
    fprintf(stderr, "usage: decode [--threads N] [--paged K/V] MODEL STEPS TOKEN...\n");
    return 2;
  }
  int steps = atoi(argv[2]);
  int64_t prompt_len = argc - 3;
  int64_t *tokens = calloc((size_t)(prompt_len + steps), sizeof(int64_t));
  for (int64_t i = 0; i < prompt_len; i++) tokens[i] = atoll(argv[3 + i]);
  int64_t total = prompt_len;

  ol_model *model;
  ol_session *session;
  if (ol_model_load_file(argv[1], &model) != OL_OK) return fail("load");
  ol_session_options options;
  ol_session_options_init(&options);
  if (paged) {
    ol_model *converted;
    if (ol_model_to_paged(model, NULL, &converted) != OL_OK) return fail("paged model");
    ol_model_destroy(model);
    model = converted;
    options.page_format_rules = &rule; /* scale 0: calibrated per page */
    options.page_format_rule_count = 1;
  }
  if (ol_session_create(model, &options, &session) != OL_OK) return fail("session");
  size_t n_in = ol_session_input_count(session), n_out = ol_session_output_count(session);
  if (n_in > MAX_NAMES || n_out > MAX_NAMES) return fail("too many inputs");

  /* past[i] holds the cache fed as input i (NULL for non-cache inputs). */
  ol_value *past[MAX_NAMES] = {0};
  int present_of[MAX_NAMES]; /* output index feeding input i, or -1 */
  for (size_t i = 0; i < n_in; i++) {
    const char *name = ol_session_input_name(session, i);
    present_of[i] = -1;
    if (strncmp(name, "past_key_values.", 16) != 0) continue;
    for (size_t o = 0; o < n_out; o++) {
      const char *out = ol_session_output_name(session, o);
      if (strncmp(out, "present.", 8) == 0 && strcmp(out + 8, name + 16) == 0) present_of[i] = (int)o;
    }
    if (paged) {
      if (ol_paged_cache_empty(&past[i]) != OL_OK) return fail("cache");
      continue;
    }
    ol_value_info info;
    ol_session_input_info(session, i, &info);
    int64_t dims[4] = {1, info.dims[1], 0, info.dims[3]};
    if (ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 4, &past[i]) != OL_OK) return fail("cache");
  }
  size_t logits_index = 0;
  for (size_t o = 0; o < n_out; o++)
    if (strcmp(ol_session_output_name(session, o), "logits") == 0) logits_index = o;

  uint64_t hash = 1469598103934665603ull;
  int64_t past_len = 0;
  for (int step = 0; step < steps; step++) {
    int64_t seq = step == 0 ? prompt_len : 1;
    int64_t ids_dims[2] = {1, seq}, mask_dims[2] = {1, past_len + seq};
    ol_value *ids, *mask, *pos;
    ol_tensor_create(NULL, OL_DTYPE_INT64, ids_dims, 2, &ids);
    ol_tensor_create(NULL, OL_DTYPE_INT64, mask_dims, 2, &mask);
    ol_tensor_create(NULL, OL_DTYPE_INT64, ids_dims, 2, &pos);
    for (int64_t j = 0; j < seq; j++) {
      ((int64_t *)ol_tensor_data(ids))[j] = tokens[total - seq + j];
      ((int64_t *)ol_tensor_data(pos))[j] = past_len + j;
    }
    for (int64_t j = 0; j < past_len + seq; j++) ((int64_t *)ol_tensor_data(mask))[j] = 1;

    const char *names[MAX_NAMES];
    ol_value *feeds[MAX_NAMES];
    for (size_t i = 0; i < n_in; i++) {
      const char *name = ol_session_input_name(session, i);
      names[i] = name;
      if (past[i]) feeds[i] = past[i];
      else if (strcmp(name, "input_ids") == 0) feeds[i] = ids;
      else if (strcmp(name, "attention_mask") == 0) feeds[i] = mask;
      else if (strcmp(name, "position_ids") == 0) feeds[i] = pos;
      else {
        fprintf(stderr, "decode: unexpected input '%s'\n", name);
        return 1;
      }
    }
    ol_value *outs[MAX_NAMES];
    if (ol_session_run(session, names, feeds, n_in, NULL, outs, n_out, NULL) != OL_OK)
      return fail("run");
    ol_value *logits = outs[logits_index];
    hash = fnv(hash, ol_tensor_data(logits), ol_tensor_byte_size(logits));
    const int64_t *ld = ol_tensor_dims(logits);
    int64_t vocab = ld[2];
    const float *last = (const float *)ol_tensor_data(logits) + (ld[1] - 1) * vocab;
    int64_t best = 0;
    for (int64_t v = 1; v < vocab; v++)
      if (last[v] > last[best]) best = v;
    tokens[total++] = best;
    for (size_t i = 0; i < n_in; i++)
      if (past[i]) {
        ol_value_release(past[i]);
        past[i] = ol_value_retain(outs[present_of[i]]);
      }
    for (size_t o = 0; o < n_out; o++) ol_value_release(outs[o]);
    ol_value_release(ids);
    ol_value_release(mask);
    ol_value_release(pos);
    past_len += seq;
  }
  printf("{\"tokens\":[");
  for (int64_t i = prompt_len; i < total; i++) printf(i > prompt_len ? ",%lld" : "%lld", (long long)tokens[i]);
  printf("],\"hash\":\"%016llx\"", (unsigned long long)hash);
  if (paged) {
    printf("}\n");
    for (size_t i = 0; i < n_in; i++) ol_value_release(past[i]);
    ol_session_destroy(session);
    ol_model_destroy(model);
    free(tokens);
    return 0;
  }

  /* Seeded sampling through ol_generate on the bound model, twice: the same
   * tokens every run, and (compared by run.mjs) in both builds. */
  const char *bind_in[MAX_NAMES], *bind_out[MAX_NAMES], *gen_names[MAX_NAMES];
  ol_value *gen_feeds[MAX_NAMES];
  size_t n_bound = 0, n_gen = 0;
  int64_t prompt_dims[2] = {1, prompt_len};
  ol_value *prompt;
  if (ol_tensor_create(NULL, OL_DTYPE_INT64, prompt_dims, 2, &prompt) != OL_OK) return fail("prompt");
  memcpy(ol_tensor_data(prompt), tokens, sizeof(int64_t) * (size_t)prompt_len);
  gen_names[n_gen] = "input_ids";
  gen_feeds[n_gen++] = prompt;
  for (size_t i = 0; i < n_in; i++) {
    if (!past[i] || present_of[i] < 0) continue;
    bind_in[n_bound] = ol_session_input_name(session, i);
    bind_out[n_bound++] = ol_session_output_name(session, (size_t)present_of[i]);
    ol_value_info info;
    ol_session_input_info(session, i, &info);
    int64_t dims[4] = {1, info.dims[1], 0, info.dims[3]};
    gen_names[n_gen] = ol_session_input_name(session, i);
    if (ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 4, &gen_feeds[n_gen++]) != OL_OK) return fail("cache");
  }
  ol_model *bound;
  if (ol_model_bind_persistent(model, bind_in, bind_out, n_bound, &bound) != OL_OK) return fail("bind");
  ol_generate_options gen;
  ol_generate_options_init(&gen);
  gen.max_new_tokens = 32;
  gen.temperature = 0.8;
  gen.seed = 1234;
  for (int run = 0; run < 2; run++) {
    ol_value *sampled;
    if (ol_generate(bound, NULL, gen_names, gen_feeds, n_gen, &gen, NULL, NULL, &sampled) != OL_OK)
      return fail("generate");
    const int64_t *ids = ol_tensor_data(sampled);
    int64_t n = ol_tensor_dims(sampled)[1];
    printf(run ? "],\"sampledAgain\":[" : ",\"sampled\":[");
    for (int64_t i = prompt_len; i < n; i++) printf(i > prompt_len ? ",%lld" : "%lld", (long long)ids[i]);
    ol_value_release(sampled);
  }
  printf("]}\n");
  for (size_t i = 0; i < n_gen; i++) ol_value_release(gen_feeds[i]);
  ol_model_destroy(bound);
  for (size_t i = 0; i < n_in; i++) ol_value_release(past[i]);
  ol_session_destroy(session);
  ol_model_destroy(model);
  free(tokens);
  return 0;
}
