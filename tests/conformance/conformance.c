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
#include "ops/registry.h"
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

static ol_status load_tensor_pb(const char *path, ol_value **out) {
  size_t size;
  char *bytes = read_file(path, &size);
  if (!bytes) return ol_error(OL_NOT_FOUND, "cannot read %s", path);
  Onnx__TensorProto *tp = onnx__tensor_proto__unpack(NULL, size, (const uint8_t *)bytes);
  free(bytes);
  if (!tp) return ol_error(OL_NOT_IMPLEMENTED, "%s is not a TensorProto (sequence/optional data)", path);
  ol_status s = ol_tensor_from_proto(tp, NULL, out);
  onnx__tensor_proto__free_unpacked(tp, NULL);
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
      s = load_tensor_pb(path, &inputs[n_in]);
      if (s != OL_OK) break;
      names[n_in] = g->inputs[n_in].name;
    }
    for (size_t i = 0; s == OL_OK && i < n_out && i < MAX_IO; i++) {
      snprintf(path, sizeof path, "%s/output_%zu.pb", set_dir, i);
      s = load_tensor_pb(path, &expected[i]);
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
        if (outputs[i]->kind != OL_VALUE_TENSOR ||
            !compare(&outputs[i]->tensor, &expected[i]->tensor, why, sizeof why)) {
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

/* --registry: the registered kernels as JSON lines, for docs/operators.md. */
static int print_registry(void) {
  const ol_op_registration *r;
  for (size_t i = 0; (r = ol_registry_at(i)) != NULL; i++)
    printf("{\"domain\":\"%s\",\"op\":\"%s\",\"since\":%d,\"until\":%d,\"dtypes\":\"%s\"}\n",
           r->domain, r->op_type, r->since_version, r->until_version, r->dtypes ? r->dtypes : "");
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
