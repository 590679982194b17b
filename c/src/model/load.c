/* Loading models from bytes and files: the ir/ loader, then the weight
 * packing the operators' schema rows ask for (model/pack.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ir/model.h"
#include "model/pack.h"

ol_status ol_model_load_owned(void *bytes, size_t size, const ol_model_load_options *options,
                              ol_model **out) {
  OL_TRY(ol_ir_load_owned(bytes, size, options, out));
  ol_status s = ol_model_pack_weights((*out)->data);
  if (s != OL_OK) {
    ol_model_destroy(*out);
    *out = NULL;
  }
  return s;
}

ol_status ol_model_load(const void *bytes, size_t size, const ol_model_load_options *options,
                        ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_load: out is NULL");
  *out = NULL;
  if (!bytes && size) return ol_error(OL_INVALID_ARGUMENT, "ol_model_load: bytes is NULL");
  if (size == 0) return ol_error(OL_INVALID_MODEL, "model bytes are empty");
  void *copy = malloc(size);
  if (!copy) return ol_error(OL_OUT_OF_MEMORY, "cannot copy %zu bytes of model", size);
  memcpy(copy, bytes, size);
  return ol_model_load_owned(copy, size, options, out);
}

ol_status ol_model_load_file(const char *path, ol_model **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_model_load_file: out is NULL");
  *out = NULL;
  FILE *f = fopen(path, "rb");
  if (!f) return ol_error(OL_NOT_FOUND, "cannot open model file '%s'", path);
  fseek(f, 0, SEEK_END);
  long size = ftell(f);
  fseek(f, 0, SEEK_SET);
  void *bytes = size > 0 ? malloc((size_t)size) : NULL;
  if (size > 0 && !bytes) {
    fclose(f);
    return ol_error(OL_OUT_OF_MEMORY, "cannot read model file '%s' (%ld bytes)", path, size);
  }
  size_t got = size > 0 ? fread(bytes, 1, (size_t)size, f) : 0;
  fclose(f);
  if (size <= 0 || got != (size_t)size) {
    free(bytes);
    return ol_error(OL_INVALID_MODEL, "cannot read model file '%s'", path);
  }
  /* external data files live beside the model */
  char dir[4096];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash) *slash = 0; else snprintf(dir, sizeof dir, ".");
  ol_model_load_options options = {0};
  options.external_data_dir = dir;
  return ol_model_load_owned(bytes, (size_t)size, &options, out);
}

