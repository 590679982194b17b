/* Seed corpora for the fuzz harnesses, made from files at run time (nothing
 * generated is committed): seeds OUT_DIR FILE...
 *   *.onnx -> OUT_DIR/model/ (the bytes) and OUT_DIR/text/ (printed text)
 *   *.pb   -> OUT_DIR/encoded/ (EncodedValueProto bytes)
 * plus, in OUT_DIR/encoded/, a small tensor encoded with every format of the
 * quantization catalogue, and in OUT_DIR/paged/, small paged caches
 * (PagedCacheProto) with float, float16 and affine pages.
 * Files larger than the harness's input limit are left out. Names are
 * content hashes, so a file seen twice is one seed. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnxlight.h"
#include "quant/paged.h"

static void write_seed(const char *dir, const char *kind, const void *data, size_t size, size_t limit) {
  if (size == 0 || size > limit) return;
  uint64_t h = 1469598103934665603ull;
  for (size_t i = 0; i < size; i++) h = (h ^ ((const uint8_t *)data)[i]) * 1099511628211ull;
  char path[4096];
  snprintf(path, sizeof path, "%s/%s/%016llx", dir, kind, (unsigned long long)h);
  FILE *f = fopen(path, "wb");
  if (!f || fwrite(data, 1, size, f) != size) {
    fprintf(stderr, "seeds: cannot write %s\n", path);
    exit(1);
  }
  fclose(f);
}

static void *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *data = n > 0 ? malloc((size_t)n) : NULL;
  if (data && fread(data, 1, (size_t)n, f) != (size_t)n) {
    free(data);
    data = NULL;
  }
  fclose(f);
  *size = data ? (size_t)n : 0;
  return data;
}

static int ends_with(const char *s, const char *tail) {
  size_t a = strlen(s), b = strlen(tail);
  return a >= b && strcmp(s + a - b, tail) == 0;
}

/* A [16, 8] float tensor quantized with every catalogue format. */
static void catalogue_seeds(const char *dir, size_t limit) {
  int64_t dims[2] = {16, 8};
  ol_value *tensor = NULL;
  if (ol_tensor_create(NULL, OL_DTYPE_FLOAT, dims, 2, &tensor) != OL_OK) exit(1);
  float *data = ol_tensor_data(tensor);
  for (int i = 0; i < 128; i++) data[i] = (float)((i * 37) % 29 - 14) * 0.25f;
  for (size_t f = 0; f < ol_quant_format_count(); f++) {
    ol_quant_plan *plan = NULL;
    if (ol_quant_make_plan((ol_quant_format)f, 128, 32, &plan) != OL_OK &&
        ol_quant_make_matmul_nbits_plan((ol_quant_format)f, 16, 8, 16, &plan) != OL_OK)
      continue;
    ol_value *encoded = NULL;
    void *bytes = NULL;
    size_t size = 0;
    if (ol_quant_calibrate(plan, tensor) == OL_OK && ol_quant_quantize(plan, tensor, "w", &encoded) == OL_OK &&
        ol_encoded_value_serialize(encoded, &bytes, &size) == OL_OK)
      write_seed(dir, "encoded", bytes, size, limit);
    ol_free(bytes);
    ol_value_release(encoded);
    ol_quant_plan_destroy(plan);
  }
  ol_value_release(tensor);
}

/* A cache of three float blocks (4 + 4 + 2 tokens, width 6) saved as it is,
 * with blocks converted to each page format, and compacted. */
static void paged_seeds(const char *dir, size_t limit) {
  ol_value *blocks[3] = {NULL, NULL, NULL}, *cache = NULL;
  for (int b = 0; b < 3; b++) {
    ol_value *k = NULL, *v = NULL;
    if (ol_page_dense_new(NULL, OL_DTYPE_FLOAT, 4, 6, &k) != OL_OK || ol_page_dense_new(NULL, OL_DTYPE_FLOAT, 4, 6, &v) != OL_OK)
      exit(1);
    float *kd = ol_tensor_data(k), *vd = ol_tensor_data(v);
    for (int i = 0; i < 24; i++) kd[i] = (float)((i * 7 + b) % 11 - 5) * 0.1f, vd[i] = (float)((i * 5 + b) % 13 - 6) * 0.2f;
    if (ol_page_block_new(4 * b, b == 2 ? 2 : 4, k, v, &blocks[b]) != OL_OK) exit(1);
    ol_value_release(k);
    ol_value_release(v);
  }
  if (ol_paged_cache_new(blocks, 3, &cache) != OL_OK) exit(1);
  const ol_page_format formats[] = {
      {.type = OL_DTYPE_FLOAT},  {.type = OL_DTYPE_FLOAT16},           {.type = OL_DTYPE_BFLOAT16},
      {OL_DTYPE_INT8, 0.01f, 0}, {OL_DTYPE_UINT8, 0.01f, 128},         {OL_DTYPE_INT4, 0.1f, 0},
      {OL_DTYPE_UINT4, 0.1f, 8}, {OL_DTYPE_INT2, 0.5f, 0},             {OL_DTYPE_UINT2, 0.5f, 2},
  };
  const int64_t all[3] = {0, 1, 2};
  size_t n = sizeof formats / sizeof formats[0];
  for (size_t f = 0; f < n; f++) {
    ol_value *converted = NULL;
    void *bytes = NULL;
    size_t size = 0;
    /* keys and values in two different formats, every block or the middle one */
    if (ol_paged_cache_quantize(cache, f % 2 ? all + 1 : all, f % 2 ? 1 : 3, &formats[f], &formats[(f + 3) % n], &converted) == OL_OK &&
        ol_paged_cache_serialize(converted, &bytes, &size) == OL_OK)
      write_seed(dir, "paged", bytes, size, limit);
    ol_free(bytes);
    ol_value_release(converted);
  }
  ol_value *empty = NULL;
  void *bytes = NULL;
  size_t size = 0;
  if (ol_paged_cache_empty(&empty) == OL_OK && ol_paged_cache_serialize(empty, &bytes, &size) == OL_OK)
    write_seed(dir, "paged", bytes, size, limit);
  ol_free(bytes);
  ol_value_release(empty);
  for (int b = 0; b < 3; b++) ol_value_release(blocks[b]);
  ol_value_release(cache);
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: seeds OUT_DIR FILE...\n");
    return 2;
  }
  size_t limit = (size_t)atol(getenv("FUZZ_MAX_LEN") ? getenv("FUZZ_MAX_LEN") : "65536");
  for (int i = 2; i < argc; i++) {
    size_t size;
    void *data = read_file(argv[i], &size);
    if (!data) continue;
    if (ends_with(argv[i], ".onnx")) {
      write_seed(argv[1], "model", data, size, limit);
      ol_model *m = NULL;
      char *text = NULL;
      if (ol_model_load(data, size, NULL, &m) == OL_OK && ol_model_print_text(m, &text) == OL_OK)
        write_seed(argv[1], "text", text, strlen(text), limit);
      ol_free(text);
      ol_model_destroy(m);
    } else if (ends_with(argv[i], ".pb")) {
      write_seed(argv[1], "encoded", data, size, limit);
    }
    free(data);
  }
  catalogue_seeds(argv[1], limit);
  paged_seeds(argv[1], limit);
  return 0;
}
