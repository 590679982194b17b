/* Shape inference over every ONNX backend node test model (Debian package
 * libonnx-testdata): no model with a supported operator may fail, every
 * declared output must agree with what is inferred (the outputs' declared
 * types are the oracle), and the result must pass the checker. Skipped when
 * the data is not installed. A second pass removes the outputs' declared
 * types and compares what inference finds with them (coverage, reported). */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "model/infer_internal.h"
#include "onnxlight.h"

#define NODE_DIR "/usr/share/libonnx-testdata/data/node"

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

typedef struct coverage {
  size_t outputs, typed, shaped, wrong;
} coverage;

/* Infers m with its output types removed and compares with the declarations. */
static void compare_outputs(const char *test, ol_model *m, coverage *c) {
  Onnx__GraphProto *g = m->data->proto->graph;
  Onnx__TypeProto *saved[64];
  if (g->n_output > 64) return;
  for (size_t i = 0; i < g->n_output; i++) {
    saved[i] = g->output[i]->type;
    g->output[i]->type = NULL;
  }
  void *bytes = NULL;
  size_t size = 0;
  ol_status s = ol_model_serialize(m, &bytes, &size);
  for (size_t i = 0; i < g->n_output; i++) g->output[i]->type = saved[i];
  ol_model *bare = NULL, *out = NULL;
  if (s == OL_OK) s = ol_model_load(bytes, size, NULL, &bare);
  ol_free(bytes);
  if (s == OL_OK) s = ol_model_infer_shapes(bare, &out);
  if (s != OL_OK) {
    fprintf(stderr, "%s (outputs undeclared): %s\n", test, ol_last_error());
    c->wrong++;
  }
  for (size_t i = 0; out && i < g->n_output; i++) {
    ol_infer_type want, got;
    ol_infer_from_declared(&m->data->graph->outputs[i], &want);
    ol_infer_from_declared(&out->data->graph->outputs[i], &got);
    if (!want.known || want.kind != OL_VALUE_TENSOR || want.proto) continue;
    c->outputs++;
    if (!got.known) continue;
    char a[256], b[256];
    ol_infer_type_text(&got, a, sizeof a);
    ol_infer_type_text(&want, b, sizeof b);
    bool same_dtype = got.dtype == want.dtype, same_shape = got.rank == want.rank && want.rank >= 0;
    for (int d = 0; same_shape && d < want.rank; d++)
      same_shape = want.dims[d].is_value ? got.dims[d].is_value && got.dims[d].value == want.dims[d].value
                                         : !got.dims[d].is_value;
    bool clash = got.rank >= 0 && want.rank >= 0 && got.rank != want.rank;
    for (int d = 0; !clash && got.rank == want.rank && d < want.rank; d++)
      clash = want.dims[d].is_value && got.dims[d].is_value && want.dims[d].value != got.dims[d].value;
    if (!same_dtype || clash) {
      c->wrong++;
      fprintf(stderr, "%s: output '%s' inferred as %s, declared %s\n", test, g->output[i]->name, a, b);
      continue;
    }
    c->typed++;
    c->shaped += same_shape;
  }
  ol_model_destroy(out);
  ol_model_destroy(bare);
}

static void every_backend_model(void) {
  DIR *dir = opendir(NODE_DIR);
  if (!dir) {
    printf("skipped: %s is not installed\n", NODE_DIR);
    return;
  }
  char **names = NULL;
  size_t count = 0, capacity = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL) {
    if (strncmp(e->d_name, "test_", 5) != 0) continue;
    if (count == capacity) {
      capacity = capacity ? 2 * capacity : 1024;
      names = realloc(names, capacity * sizeof *names);
    }
    size_t length = strlen(e->d_name) + 1;
    names[count] = malloc(length);
    memcpy(names[count++], e->d_name, length);
  }
  closedir(dir);
  qsort(names, count, sizeof *names, by_name);
  size_t loaded = 0, inferred = 0, failed = 0, recorded = 0;
  coverage cov = {0};
  for (size_t i = 0; i < count; i++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/model.onnx", NODE_DIR, names[i]);
    ol_model *m = NULL, *out = NULL;
    if (ol_model_load_file(path, &m) != OL_OK) {
      free(names[i]);
      continue;
    }
    loaded++;
    ol_status s = ol_model_infer_shapes(m, &out);
    if (s == OL_OK) {
      inferred++;
      recorded += out->data->proto->graph->n_value_info;
      if (ol_model_check(m) == OL_OK && ol_model_check(out) != OL_OK) {
        failed++;
        fprintf(stderr, "%s: the inferred model fails the checker: %s\n", names[i], ol_last_error());
      }
    } else {
      failed++;
      fprintf(stderr, "%s: %s\n", names[i], ol_last_error());
    }
    ol_model_destroy(out);
    compare_outputs(names[i], m, &cov);
    ol_model_destroy(m);
    free(names[i]);
  }
  free(names);
  printf("%zu models, %zu inferred, %zu failed, %zu value_info entries recorded\n", loaded, inferred, failed,
         recorded);
  printf("outputs undeclared: %zu tensor outputs, element type found for %zu, full shape for %zu, %zu wrong\n",
         cov.outputs, cov.typed, cov.shaped, cov.wrong);
  CHECK(failed == 0);
  CHECK(cov.wrong == 0);
}

OL_TEST_MAIN(TEST(every_backend_model))
