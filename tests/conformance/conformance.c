/* Runs ONNX backend node tests (model.onnx plus test_data_set_N/input_N.pb,
 * output_*.pb) and prints one JSON line per test:
 *   {"name":..., "result":"pass"|"fail"|"unsupported", "reason":..., "hash":...}
 * "hash" digests every output's bytes, so native and wasm builds can be
 * compared bit for bit. Usage: conformance DIR [DIR...] */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/dtype.h"
#include "ir/model.h"
#include "onnxlight.h"
#include "ops/schema.h"
#include "runtime/session.h"

#define MAX_IO 64

static char *read_file(const char *path, size_t *size) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  char *buf = malloc(n > 0 ? (size_t)n : 1);
  if (buf && n > 0 && fread(buf, 1, (size_t)n, f) != (size_t)n) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  *size = n > 0 ? (size_t)n : 0;
  return buf;
}

static void json_string(const char *s) {
  putchar('"');
  for (; *s; s++) {
    if (*s == '"' || *s == '\\') printf("\\%c", *s);
    else if ((unsigned char)*s < 0x20) printf("\\u%04x", *s);
    else putchar(*s);
  }
  putchar('"');
}

/* ------------------------------------------------------------ data files
 * input_N.pb / output_N.pb hold a TensorProto, a SequenceProto or an
 * OptionalProto; the declared graph input/output type says which. protobuf-c
 * has no SequenceProto/OptionalProto here (proto/onnx_light.proto does not
 * declare them), so those two are read with a small wire-format reader:
 *   SequenceProto {name=1, elem_type=2, tensor_values=3, sparse_tensor_values=4,
 *                  sequence_values=5, map_values=6, optional_values=7}
 *   OptionalProto {name=1, elem_type=2, tensor_value=3, sparse_tensor_value=4,
 *                  sequence_value=5, map_value=6, optional_value=7}
 * elem_type: TENSOR=1, SPARSE_TENSOR=2, SEQUENCE=3, MAP=4, OPTIONAL=5. */

typedef struct pb_field {
  uint32_t number;
  uint32_t wire;       /* 0 varint, 1 fixed64, 2 length-delimited, 5 fixed32 */
  uint64_t varint;
  const uint8_t *data; /* wire 2 */
  size_t length;
} pb_field;

static int pb_varint(const uint8_t **p, const uint8_t *end, uint64_t *out) {
  uint64_t v = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (*p >= end) return 0;
    uint8_t b = *(*p)++;
    v |= (uint64_t)(b & 0x7f) << shift;
    if (!(b & 0x80)) {
      *out = v;
      return 1;
    }
  }
  return 0;
}

/* Next field of [*p, end): 1 read, 0 at the end, -1 malformed. */
static int pb_next(const uint8_t **p, const uint8_t *end, pb_field *f) {
  if (*p >= end) return 0;
  uint64_t key;
  if (!pb_varint(p, end, &key) || (key >> 3) == 0 || (key >> 3) > 0x1fffffff) return -1;
  memset(f, 0, sizeof *f);
  f->number = (uint32_t)(key >> 3);
  f->wire = (uint32_t)(key & 7);
  switch (f->wire) {
    case 0: return pb_varint(p, end, &f->varint) ? 1 : -1;
    case 1:
    case 5: {
      size_t n = f->wire == 1 ? 8 : 4;
      if ((size_t)(end - *p) < n) return -1;
      *p += n;
      return 1;
    }
    case 2: {
      uint64_t n;
      if (!pb_varint(p, end, &n) || n > (uint64_t)(end - *p)) return -1;
      f->data = *p;
      f->length = (size_t)n;
      *p += n;
      return 1;
    }
    default: return -1;
  }
}

enum { ELEM_TENSOR = 1, ELEM_SPARSE_TENSOR = 2, ELEM_SEQUENCE = 3, ELEM_MAP = 4, ELEM_OPTIONAL = 5 };

static ol_status decode_tensor(const uint8_t *data, size_t size, const char *path, ol_value **out) {
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, data);
  if (!tp) return ol_error(OL_INVALID_ARGUMENT, "%s: malformed TensorProto", path);
  ol_status s = ol_tensor_from_proto(tp, NULL, out);
  onnx__tensor_proto__free_unpacked(tp, NULL);
  return s;
}

static ol_status decode_sequence(const uint8_t *data, size_t size, ol_dtype dtype, const char *path,
                                 ol_value **out) {
  const uint8_t *p = data, *end = data + size;
  ol_value **items = NULL;
  size_t count = 0, cap = 0;
  ol_status s = OL_OK;
  pb_field f;
  int r = 0;
  while (s == OL_OK && (r = pb_next(&p, end, &f)) > 0) {
    if (f.number == 2 && f.wire == 0 && f.varint != ELEM_TENSOR && f.varint != 0)
      s = ol_error(OL_NOT_IMPLEMENTED, "%s: sequences of element kind %llu are not supported", path,
                   (unsigned long long)f.varint);
    else if (f.number >= 4 && f.number <= 7)
      s = ol_error(OL_NOT_IMPLEMENTED, "%s: sequences of non-tensor values are not supported", path);
    else if (f.number == 3 && f.wire == 2) {
      if (count == cap) {
        cap = cap ? cap * 2 : 8;
        ol_value **grown = realloc(items, cap * sizeof *items);
        if (!grown) {
          s = ol_error(OL_OUT_OF_MEMORY, "%s: out of memory", path);
          break;
        }
        items = grown;
      }
      s = decode_tensor(f.data, f.length, path, &items[count]);
      if (s == OL_OK) count++;
    }
  }
  if (s == OL_OK && r < 0) s = ol_error(OL_INVALID_ARGUMENT, "%s: malformed SequenceProto", path);
  if (s == OL_OK) {
    if (!dtype && count) dtype = items[0]->tensor.dtype;
    s = ol_sequence_create(dtype, items, count, out);
  }
  for (size_t i = 0; i < count; i++) ol_value_release(items[i]);
  free(items);
  return s;
}

static ol_status decode_optional(const uint8_t *data, size_t size, ol_dtype dtype, const char *path,
                                 ol_value **out) {
  const uint8_t *p = data, *end = data + size;
  ol_value *contained = NULL;
  ol_status s = OL_OK;
  pb_field f;
  int r = 0;
  while (s == OL_OK && (r = pb_next(&p, end, &f)) > 0) {
    if (f.wire != 2 || f.number < 3 || f.number > 7) continue;
    ol_value_release(contained);
    contained = NULL;
    if (f.number == 3) s = decode_tensor(f.data, f.length, path, &contained);
    else if (f.number == 5) s = decode_sequence(f.data, f.length, dtype, path, &contained);
    else s = ol_error(OL_NOT_IMPLEMENTED, "%s: optionals of sparse tensors/maps/optionals are not supported", path);
  }
  if (s == OL_OK && r < 0) s = ol_error(OL_INVALID_ARGUMENT, "%s: malformed OptionalProto", path);
  if (s == OL_OK) {
    s = ol_optional_create(contained, out);
    if (s == OL_OK && !contained) (*out)->element_dtype = dtype;
    if (s == OL_OK && contained && contained->kind == OL_VALUE_SEQUENCE)
      (*out)->element_dtype = contained->element_dtype;
  }
  ol_value_release(contained);
  return s;
}

/* Loads a data file as the kind the graph declares (a tensor when undeclared). */
static ol_status load_value_pb(const char *path, const ol_graph_value *declared, ol_value **out) {
  size_t size;
  *out = NULL;
  char *bytes = read_file(path, &size);
  if (!bytes) return ol_error(OL_NOT_FOUND, "cannot read %s", path);
  ol_value_kind kind = declared && declared->has_type ? declared->type.kind : OL_VALUE_TENSOR;
  ol_dtype dtype = declared && declared->has_type ? declared->type.dtype : OL_DTYPE_UNDEFINED;
  const uint8_t *data = (const uint8_t *)bytes;
  ol_status s;
  switch (kind) {
    case OL_VALUE_SEQUENCE: s = decode_sequence(data, size, dtype, path, out); break;
    case OL_VALUE_OPTIONAL: s = decode_optional(data, size, dtype, path, out); break;
    case OL_VALUE_MAP: s = ol_error(OL_NOT_IMPLEMENTED, "%s: map data is not supported", path); break;
    default:
      s = decode_tensor(data, size, path, out);
      /* numpy has no bfloat16: the backend tests store bfloat16 data as the
       * same 16-bit patterns in a UINT16 TensorProto. */
      if (s == OL_OK && dtype == OL_DTYPE_BFLOAT16 && (*out)->tensor.dtype == OL_DTYPE_UINT16)
        (*out)->tensor.dtype = OL_DTYPE_BFLOAT16;
      break;
  }
  free(bytes);
  return s;
}

static uint64_t fnv(uint64_t h, const void *data, size_t n) {
  const unsigned char *p = data;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

static uint64_t hash_value(uint64_t h, const ol_value *v) {
  if (!v) return fnv(h, "null", 4);
  h = fnv(h, &v->kind, sizeof v->kind);
  if (v->kind == OL_VALUE_TENSOR) {
    const ol_tensor *t = &v->tensor;
    h = fnv(h, &t->dtype, sizeof t->dtype);
    h = fnv(h, t->dims, sizeof(int64_t) * (size_t)t->rank);
    if (t->dtype == OL_DTYPE_STRING) {
      const ol_string *s = ol_tdata(t);
      for (int64_t i = 0; i < ol_tcount(t); i++) h = fnv(h, s[i].data ? s[i].data : "", s[i].length);
    } else {
      h = fnv(h, ol_tdata(t), ol_dtype_storage_bytes(t->dtype, ol_tcount(t)));
    }
  }
  for (size_t i = 0; i < v->count; i++) h = hash_value(h, v->items[i]);
  if (v->kind == OL_VALUE_OPTIONAL) h = hash_value(h, v->contained);
  return h;
}

/* numpy.testing.assert_allclose(rtol=1e-3, atol=1e-7) as the ONNX backend runner does */
static int compare(const ol_tensor *got, const ol_tensor *want, char *why, size_t why_size) {
  char a[128], b[128];
  if (got->dtype != want->dtype || got->rank != want->rank ||
      memcmp(got->dims, want->dims, sizeof(int64_t) * (size_t)got->rank) != 0) {
    snprintf(why, why_size, "got %s, want %s", ol_tensor_describe(got, a, sizeof a),
             ol_tensor_describe(want, b, sizeof b));
    return 0;
  }
  int64_t n = ol_tcount(got);
  if (got->dtype == OL_DTYPE_STRING) {
    const ol_string *x = ol_tdata(got), *y = ol_tdata(want);
    for (int64_t i = 0; i < n; i++)
      if (x[i].length != y[i].length || memcmp(x[i].data, y[i].data, x[i].length) != 0) {
        snprintf(why, why_size, "string %lld differs", (long long)i);
        return 0;
      }
    return 1;
  }
  bool is_float = ol_dtype_info(got->dtype)->is_float;
  for (int64_t i = 0; i < n; i++) {
    double x = ol_tensor_get_double(got, i), y = ol_tensor_get_double(want, i);
    if (got->dtype == OL_DTYPE_INT64 || got->dtype == OL_DTYPE_UINT64) {
      if (((const int64_t *)ol_tdata(got))[i] != ((const int64_t *)ol_tdata(want))[i]) {
        snprintf(why, why_size, "element %lld: got %lld, want %lld", (long long)i,
                 (long long)((const int64_t *)ol_tdata(got))[i], (long long)((const int64_t *)ol_tdata(want))[i]);
        return 0;
      }
      continue;
    }
    if (isnan(x) && isnan(y)) continue;
    if (x == y) continue;
    if (is_float && fabs(x - y) <= 1e-7 + 1e-3 * fabs(y)) continue;
    snprintf(why, why_size, "element %lld: got %.9g, want %.9g", (long long)i, x, y);
    return 0;
  }
  return 1;
}

/* Sequences and optionals compare item by item with the tensor rules. */
static int compare_value(const ol_value *got, const ol_value *want, char *why, size_t why_size) {
  static const char *kinds[] = {"tensor", "sequence", "map", "optional"};
  if (!got || !want) {
    snprintf(why, why_size, "%s", got ? "unexpected value" : "missing value");
    return !got && !want;
  }
  if (got->kind != want->kind) {
    snprintf(why, why_size, "got a %s, want a %s", kinds[got->kind & 3], kinds[want->kind & 3]);
    return 0;
  }
  switch (got->kind) {
    case OL_VALUE_TENSOR: return compare(&got->tensor, &want->tensor, why, why_size);
    case OL_VALUE_SEQUENCE:
      if (got->count != want->count) {
        snprintf(why, why_size, "sequence of %zu items, want %zu", got->count, want->count);
        return 0;
      }
      for (size_t i = 0; i < got->count; i++)
        if (!compare_value(got->items[i], want->items[i], why, why_size)) {
          char inner[1024];
          snprintf(inner, sizeof inner, "%s", why);
          snprintf(why, why_size, "item %zu: %.900s", i, inner);
          return 0;
        }
      return 1;
    case OL_VALUE_OPTIONAL:
      if (!got->contained != !want->contained) {
        snprintf(why, why_size, "optional is %s, want %s", got->contained ? "full" : "empty",
                 want->contained ? "full" : "empty");
        return 0;
      }
      return !got->contained || compare_value(got->contained, want->contained, why, why_size);
    default: snprintf(why, why_size, "cannot compare maps"); return 0;
  }
}

static const ol_graph *current_graph; /* for listing the operators a case uses */

static void print_ops(const ol_graph *g, int *first) {
  for (size_t i = 0; g && i < g->num_nodes; i++) {
    const ol_node *n = &g->nodes[i];
    if (!*first) putchar(',');
    *first = 0;
    printf("\"%s%s%s\"", n->domain, n->domain[0] ? "::" : "", n->op_type);
    for (size_t a = 0; a < n->num_attrs; a++) {
      if (n->attrs[a].type == OL_ATTR_GRAPH) print_ops(n->attrs[a].graph, first);
      for (size_t k = 0; n->attrs[a].type == OL_ATTR_GRAPHS && k < n->attrs[a].count; k++)
        print_ops(n->attrs[a].graphs[k], first);
    }
  }
}

static void report(const char *name, const char *result, const char *reason, uint64_t hash) {
  printf("{\"name\":");
  json_string(name);
  printf(",\"ops\":[");
  int first = 1;
  print_ops(current_graph, &first);
  printf("]");
  printf(",\"result\":\"%s\",\"reason\":", result);
  json_string(reason ? reason : "");
  printf(",\"hash\":\"%016llx\"}\n", (unsigned long long)hash);
  fflush(stdout);
}

static void run_case(const char *dir, const char *name) {
  char path[4400], why[1024] = "";
  snprintf(path, sizeof path, "%s/model.onnx", dir);
  ol_model *model = NULL;
  ol_session *session = NULL;
  ol_status s = ol_model_load_file(path, &model);
  current_graph = model ? model->data->graph : NULL;
  if (s == OL_OK) s = ol_session_create(model, NULL, &session);
  if (s != OL_OK) {
    report(name, s == OL_NOT_IMPLEMENTED ? "unsupported" : "fail", ol_last_error(), 0);
    ol_model_destroy(model);
    return;
  }
  const ol_graph *g = model->data->graph;
  uint64_t hash = 1469598103934665603ull;
  int sets = 0, ok = 1;
  const char *result = "pass";
  for (int set = 0; ok; set++) {
    char set_dir[4200];
    snprintf(set_dir, sizeof set_dir, "%s/test_data_set_%d", dir, set);
    struct stat st;
    if (stat(set_dir, &st) != 0) break;
    sets++;
    ol_value *inputs[MAX_IO] = {0}, *outputs[MAX_IO] = {0}, *expected[MAX_IO] = {0};
    const char *names[MAX_IO];
    size_t n_in = 0, n_out = g->num_outputs;
    for (; n_in < MAX_IO && n_in < g->num_inputs; n_in++) {
      snprintf(path, sizeof path, "%s/input_%zu.pb", set_dir, n_in);
      if (stat(path, &st) != 0) break;
      s = load_value_pb(path, &g->inputs[n_in], &inputs[n_in]);
      if (s != OL_OK) break;
      names[n_in] = g->inputs[n_in].name;
    }
    for (size_t i = 0; s == OL_OK && i < n_out && i < MAX_IO; i++) {
      snprintf(path, sizeof path, "%s/output_%zu.pb", set_dir, i);
      s = load_value_pb(path, &g->outputs[i], &expected[i]);
    }
    if (s != OL_OK) {
      result = "unsupported";
      snprintf(why, sizeof why, "%s", ol_last_error());
      ok = 0;
    } else {
      s = ol_session_run(session, names, inputs, n_in, NULL, outputs, n_out, NULL);
      if (s != OL_OK) {
        result = s == OL_NOT_IMPLEMENTED ? "unsupported" : "fail";
        snprintf(why, sizeof why, "%s", ol_last_error());
        ok = 0;
      }
      for (size_t i = 0; ok && i < n_out; i++) {
        hash = hash_value(hash, outputs[i]);
        if (!compare_value(outputs[i], expected[i], why, sizeof why)) {
          char detail[2048];
          snprintf(detail, sizeof detail, "output '%s': %s", g->outputs[i].name, why);
          snprintf(why, sizeof why, "%.1000s", detail);
          result = "fail";
          ok = 0;
        }
      }
    }
    for (size_t i = 0; i < MAX_IO; i++) {
      ol_value_release(inputs[i]);
      ol_value_release(outputs[i]);
      ol_value_release(expected[i]);
    }
  }
  if (!sets && ok) {
    result = "unsupported";
    snprintf(why, sizeof why, "no test data");
  }
  report(name, result, why, hash);
  ol_session_destroy(session);
  ol_model_destroy(model);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* --registry: the schema rows as JSON lines, for docs/operators.md. */
static int print_registry(void) {
  const ol_op_schema *r;
  for (size_t i = 0; (r = ol_schema_at(i)) != NULL; i++) {
    printf("{\"domain\":\"%s\",\"op\":\"%s\",\"since\":%d,\"until\":%d,\"dtypes\":\"%s\",\"kernel\":%s,"
           "\"infer\":%s,\"pitched\":%u,\"packed\":%s,\"caches\":[",
           r->domain, r->op_type, r->since_version, r->until_version, r->dtypes ? r->dtypes : "",
           r->create ? "true" : "false", r->infer ? "true" : "false", (unsigned)r->pitched_inputs,
           r->pack ? "true" : "false");
    for (size_t c = 0; c < r->num_caches; c++)
      printf("%s[%d,%d,%d]", c ? "," : "", r->caches[c].input, r->caches[c].output,
             r->caches[c].axis == OL_CACHE_AXIS_ATTR ? -1 : r->caches[c].axis);
    printf("],\"fusions\":[");
    for (const ol_fusion *f = r->fusions; f && f->create; f++)
      printf("%s\"%s\"", f == r->fusions ? "" : ",", f->name);
    printf("]}\n");
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc == 2 && strcmp(argv[1], "--registry") == 0) return print_registry();
  if (argc < 2) {
    fprintf(stderr, "usage: %s DIR [DIR...]  (a folder of test_* cases, or one case)\n", argv[0]);
    return 2;
  }
  for (int a = 1; a < argc; a++) {
    char path[4096];
    struct stat st;
    snprintf(path, sizeof path, "%s/model.onnx", argv[a]);
    if (stat(path, &st) == 0) {
      const char *base = strrchr(argv[a], '/');
      run_case(argv[a], base ? base + 1 : argv[a]);
      continue;
    }
    DIR *d = opendir(argv[a]);
    if (!d) {
      fprintf(stderr, "cannot open %s\n", argv[a]);
      return 2;
    }
    char **names = NULL;
    size_t count = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
      if (e->d_name[0] == '.') continue;
      if (count == cap) {
        cap = cap ? cap * 2 : 256;
        names = realloc(names, cap * sizeof *names);
      }
      names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof *names, by_name);
    for (size_t i = 0; i < count; i++) {
      char dir[4096];
      snprintf(dir, sizeof dir, "%s/%s", argv[a], names[i]);
      run_case(dir, names[i]);
      free(names[i]);
    }
    free(names);
  }
  return 0;
}
