/* Graph builder round trip: ModelProto -> builder -> ModelProto.
 *
 * Usage: builder_roundtrip [-n MIN] PATH...  (PATH: a model file, or a folder
 * whose sub-folders hold model.onnx, as the ONNX backend node tests do)
 *
 * For every model: import its bytes with ol_builder_from_model, export with
 * ol_builder_to_model and require the export to equal the model's own
 * re-serialization (unpack + pack, which fixes field order) byte for byte:
 * same graph, same payload bytes, same types, same bindings, cache
 * initializers and catalogue. A model the loader accepts must load again
 * after the round trip. Prints failing names, then "N passed, M failed";
 * with -n, fewer than MIN models passing is a failure too (a missing data
 * set must not pass silently). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "onnx_light.pb-c.h"
#include "onnxlight.h"
#include "sorted_dir.h"

static int passed = 0, failed = 0;

static uint8_t *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *data = n >= 0 ? malloc((size_t)n + 1) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = (size_t)n;
  return data;
}

static void fail(const char *name, const char *why) {
  printf("FAIL %s: %s %s\n", name, why, ol_last_error());
  failed++;
}

static void run_model(const char *name, const char *path) {
  size_t size = 0;
  uint8_t *data = read_file(path, &size);
  if (!data) return fail(name, "cannot read");
  Onnx__ModelProto *m = onnx__model_proto__unpack(NULL, size, data);
  if (!m) {
    free(data);
    return fail(name, "not a ModelProto");
  }
  size_t canon_size = onnx__model_proto__get_packed_size(m);
  uint8_t *canon = malloc(canon_size + 1);
  onnx__model_proto__pack(m, canon);
  onnx__model_proto__free_unpacked(m, NULL);

  ol_model *before = NULL;
  bool loads = ol_model_load(data, size, NULL, &before) == OL_OK;
  ol_model_destroy(before);

  ol_builder *b = NULL;
  void *out = NULL;
  size_t out_size = 0;
  if (ol_builder_from_model(data, size, &b) != OL_OK) {
    fail(name, "import:");
  } else if (ol_builder_to_model(b, &out, &out_size) != OL_OK) {
    fail(name, "export:");
  } else if (out_size != canon_size || memcmp(out, canon, canon_size) != 0) {
    fail(name, "the export differs from the model");
  } else {
    ol_model *after = NULL;
    if (loads && ol_model_load(out, out_size, NULL, &after) != OL_OK) fail(name, "the export no longer loads:");
    else passed++;
    ol_model_destroy(after);
  }
  ol_free(out);
  ol_builder_destroy(b);
  free(canon);
  free(data);
}

static void run_path(const char *dir) {
  struct stat st;
  if (stat(dir, &st) == 0 && S_ISREG(st.st_mode)) return run_model(dir, dir);
  size_t n = 0;
  char **names = sorted_dir_entries(dir, &n);
  if (!names) {
    printf("FAIL %s: cannot open\n", dir);
    failed++;
    return;
  }
  char path[4096];
  for (size_t i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
    if (stat(path, &st) == 0) run_model(names[i], path);
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  int paths = 0;
  long minimum = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
      minimum = strtol(argv[++i], NULL, 10);
      continue;
    }
    run_path(argv[i]);
    paths++;
  }
  if (!paths) {
    fprintf(stderr, "usage: builder_roundtrip [-n MIN] PATH...\n");
    return 2;
  }
  printf("%d passed, %d failed\n", passed, failed);
  if (passed < minimum) printf("FAIL: fewer than %ld models passed\n", minimum);
  return failed || passed < minimum ? 1 : 0;
}
