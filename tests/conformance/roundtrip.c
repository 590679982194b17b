/* Text syntax round trip over ONNX backend test models.
 *
 * Usage: roundtrip [-v] [-p] DIR...  (DIR holds model.onnx, or folders that do)
 *
 * For every model: load it, print it (text1), parse text1, print the result
 * (text2), then require
 *   1. text1 == text2 (printing is a fixed point), and
 *   2. the serialized protos of the loaded and the parsed model are equal
 *      after normalization: tensors re-encoded in one canonical form
 *      (raw_data, or string_data for strings) and empty optional strings
 *      treated as absent. Everything else must match byte for byte.
 * Prints the failing names with a reason, then "N passed, M failed". -v also
 * prints the first differing line of the texts, -p prints every model's text. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/dtype.h"
#include "core/status.h"
#include "ir/model.h"
#include "ir/text.h"
#include "onnxlight.h"
#include "sorted_dir.h"

static int verbose = 0, print_text = 0;

/* ------------------------------------------------------------ normalization */

static void free_typed_data(Onnx__TensorProto *tp) {
  free(tp->float_data), tp->float_data = NULL, tp->n_float_data = 0;
  free(tp->int32_data), tp->int32_data = NULL, tp->n_int32_data = 0;
  free(tp->int64_data), tp->int64_data = NULL, tp->n_int64_data = 0;
  free(tp->double_data), tp->double_data = NULL, tp->n_double_data = 0;
  free(tp->uint64_data), tp->uint64_data = NULL, tp->n_uint64_data = 0;
  for (size_t i = 0; i < tp->n_string_data; i++) free(tp->string_data[i].data);
  free(tp->string_data), tp->string_data = NULL, tp->n_string_data = 0;
  free(tp->raw_data.data), tp->raw_data.data = NULL, tp->raw_data.len = 0, tp->has_raw_data = 0;
}

/* Re-encodes the payload as raw_data (string_data for strings). */
static void canon_tensor(Onnx__TensorProto *tp) {
  if (tp->has_data_location && tp->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
    return;
  ol_value *v = NULL;
  if (ol_tensor_from_proto(tp, NULL, &v) != OL_OK) return; /* left as is: will differ if broken */
  free_typed_data(tp);
  const ol_tensor *t = &v->tensor;
  int64_t n = ol_tcount(t);
  if (t->dtype == OL_DTYPE_STRING) {
    tp->string_data = calloc((size_t)n + 1, sizeof *tp->string_data);
    const ol_string *s = ol_tdata(t);
    for (int64_t i = 0; tp->string_data && i < n; i++) {
      tp->string_data[i].data = malloc(s[i].length + 1);
      if (s[i].length) memcpy(tp->string_data[i].data, s[i].data, s[i].length);
      tp->string_data[i].len = s[i].length;
      tp->n_string_data++;
    }
  } else {
    size_t bytes = ol_dtype_storage_bytes(t->dtype, n);
    tp->has_raw_data = 1;
    tp->raw_data.data = malloc(bytes + 1);
    tp->raw_data.len = bytes;
    if (bytes) memcpy(tp->raw_data.data, ol_tdata(t), bytes);
  }
  ol_value_release(v);
}

/* Walks any message: empty non-oneof optional strings become absent, tensors
 * get the canonical encoding. */
static void normalize(ProtobufCMessage *msg) {
  if (!msg) return;
  const ProtobufCMessageDescriptor *d = msg->descriptor;
  for (unsigned f = 0; f < d->n_fields; f++) {
    const ProtobufCFieldDescriptor *fd = &d->fields[f];
    char *base = (char *)msg + fd->offset;
    bool oneof = (fd->flags & PROTOBUF_C_FIELD_FLAG_ONEOF) != 0;
    if (oneof && *(uint32_t *)((char *)msg + fd->quantifier_offset) != fd->id) continue;
    if (fd->label == PROTOBUF_C_LABEL_REPEATED) {
      if (fd->type != PROTOBUF_C_TYPE_MESSAGE) continue;
      size_t n = *(size_t *)((char *)msg + fd->quantifier_offset);
      ProtobufCMessage **items = *(ProtobufCMessage ***)base;
      for (size_t i = 0; i < n; i++) normalize(items[i]);
    } else if (fd->type == PROTOBUF_C_TYPE_STRING && !oneof) {
      char **s = (char **)base;
      if (*s && !**s && *s != fd->default_value) {
        free(*s);
        *s = NULL;
      }
    } else if (fd->type == PROTOBUF_C_TYPE_MESSAGE) {
      normalize(*(ProtobufCMessage **)base);
    }
  }
  if (d == &onnx__tensor_proto__descriptor) canon_tensor((Onnx__TensorProto *)msg);
}

/* Normalized serialization of a model's proto (via a fresh copy). */
static uint8_t *canonical_bytes(const ol_model *m, size_t *size) {
  void *bytes;
  size_t n;
  if (ol_model_serialize(m, &bytes, &n) != OL_OK) return NULL;
  Onnx__ModelProto *copy = onnx__model_proto__unpack(NULL, n, bytes);
  free(bytes);
  if (!copy) return NULL;
  normalize(&copy->base);
  *size = onnx__model_proto__get_packed_size(copy);
  uint8_t *out = malloc(*size + 1);
  if (out) onnx__model_proto__pack(copy, out);
  onnx__model_proto__free_unpacked(copy, NULL);
  return out;
}

/* ------------------------------------------------------------ one model */

static void first_difference(const char *a, const char *b) {
  int line = 1;
  const char *la = a, *lb = b;
  while (*a && *a == *b) {
    if (*a == '\n') {
      line++;
      la = a + 1;
      lb = b + 1;
    }
    a++, b++;
  }
  const char *ea = strchr(la, '\n'), *eb = strchr(lb, '\n');
  int na = ea ? (int)(ea - la) : (int)strlen(la), nb = eb ? (int)(eb - lb) : (int)strlen(lb);
  fprintf(stderr, "    line %d:\n    printed:   %.*s\n    reprinted: %.*s\n", line,
          na > 300 ? 300 : na, la, nb > 300 ? 300 : nb, lb);
}

/* NULL on success, else the reason. */
static const char *check_model(const char *path, char *reason, size_t size) {
  ol_model *m1 = NULL, *m2 = NULL;
  char *text1 = NULL, *text2 = NULL;
  uint8_t *b1 = NULL, *b2 = NULL;
  size_t n1 = 0, n2 = 0;
  const char *result = reason;
  if (ol_model_load_file(path, &m1) != OL_OK) {
    snprintf(reason, size, "load: %s", ol_last_error());
  } else if (ol_model_print_text(m1, &text1) != OL_OK) {
    snprintf(reason, size, "print: %s", ol_last_error());
  } else if ((print_text && printf("%s", text1) < 0) || ol_model_parse_text(text1, &m2) != OL_OK) {
    snprintf(reason, size, "parse: %s", ol_last_error());
    if (verbose) fprintf(stderr, "%s\n", text1);
  } else if (ol_model_print_text(m2, &text2) != OL_OK) {
    snprintf(reason, size, "reprint: %s", ol_last_error());
  } else if (strcmp(text1, text2) != 0) {
    snprintf(reason, size, "print(parse(print(m))) != print(m)");
    if (verbose) first_difference(text1, text2);
  } else if (!(b1 = canonical_bytes(m1, &n1)) || !(b2 = canonical_bytes(m2, &n2))) {
    snprintf(reason, size, "serialize failed");
  } else if (n1 != n2 || memcmp(b1, b2, n1) != 0) {
    snprintf(reason, size, "normalized protos differ (%zu vs %zu bytes)", n1, n2);
  } else {
    result = NULL;
  }
  free(b1);
  free(b2);
  ol_free(text1);
  ol_free(text2);
  ol_model_destroy(m1);
  ol_model_destroy(m2);
  return result;
}

/* ------------------------------------------------------------ driver */

static int passed = 0, failed = 0;

static void run_model(const char *name, const char *path) {
  char reason[1024];
  const char *why = check_model(path, reason, sizeof reason);
  if (!why) {
    passed++;
    return;
  }
  failed++;
  printf("FAIL %s: %s\n", name, why);
}

static void run_dir(const char *dir) {
  char path[4096];
  struct stat st;
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  if (stat(path, &st) == 0) {
    const char *name = strrchr(dir, '/');
    run_model(name ? name + 1 : dir, path);
    return;
  }
  size_t n = 0;
  char **names = sorted_dir_entries(dir, &n);
  if (!names) {
    fprintf(stderr, "roundtrip: cannot open %s\n", dir);
    failed++;
    return;
  }
  for (size_t i = 0; i < n; i++) {
    snprintf(path, sizeof path, "%s/%s/model.onnx", dir, names[i]);
    if (stat(path, &st) == 0) run_model(names[i], path);
    free(names[i]);
  }
  free(names);
}

int main(int argc, char **argv) {
  int dirs = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "-v") == 0 || strcmp(argv[i], "-p") == 0) {
      if (argv[i][1] == 'v')
        verbose = 1;
      else
        print_text = 1;
      continue;
    }
    run_dir(argv[i]);
    dirs++;
  }
  if (!dirs) {
    fprintf(stderr, "usage: roundtrip [-v] [-p] DIR...\n");
    return 2;
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
