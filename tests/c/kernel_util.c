#include "kernel_util.h"

#include <stdlib.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "core/alloc.h"
#include "core/status.h"
#include "ir/serial_pieces.h"
#include "ir/text.h"
#include "quant/paged.h"
#include "ir/model.h"

ol_value *tk_tensor(ol_dtype dtype, int rank, const int64_t *dims, const void *data) {
  ol_value *v = NULL;
  if (ol_value_new_tensor(NULL, dtype, rank, dims, &v) != OL_OK) return NULL;
  size_t n = ol_dtype_storage_bytes(dtype, ol_shape_count(rank, dims));
  if (n && data) memcpy(ol_tdata(&v->tensor), data, n);
  return v;
}
ol_value *tk_f32(int rank, const int64_t *dims, const float *data) {
  return tk_tensor(OL_DTYPE_FLOAT, rank, dims, data);
}
ol_value *tk_i64(int rank, const int64_t *dims, const int64_t *data) {
  return tk_tensor(OL_DTYPE_INT64, rank, dims, data);
}

ol_attr tk_attr_int(const char *name, int64_t v) {
  ol_attr a = {0};
  a.name = name;
  a.type = OL_ATTR_INT;
  a.i = v;
  return a;
}
ol_attr tk_attr_float(const char *name, float v) {
  ol_attr a = {0};
  a.name = name;
  a.type = OL_ATTR_FLOAT;
  a.f = v;
  return a;
}
ol_attr tk_attr_ints(const char *name, int64_t *v, size_t n) {
  ol_attr a = {0};
  a.name = name;
  a.type = OL_ATTR_INTS;
  a.ints = v;
  a.count = n;
  return a;
}
ol_attr tk_attr_string(const char *name, char *s) {
  ol_attr a = {0};
  a.name = name;
  a.type = OL_ATTR_STRING;
  a.s = s;
  a.s_length = strlen(s);
  return a;
}

/* Before the run that counts, the kernel computes with a counting allocator
 * failing its allocation k, for k = 0, 1, ... until it stops reporting
 * OL_OUT_OF_MEMORY (success, or the kernel's own error): outputs and
 * scratch come from ctx->allocator (ops/kernel.h), so every failure must be
 * OL_OUT_OF_MEMORY with a message and leave no block behind. */
static void walk_allocation_failures(ol_kernel *k, ol_kernel_ctx *ctx) {
  ol_allocator *a = NULL;
  if (ol_allocator_create(NULL, NULL, NULL, &a) != OL_OK) return;
  ctx->allocator = a;
  for (int64_t fail = 0;; fail++) {
    ol_allocator_fail_after(a, fail);
    ol_clear_error();
    ol_status s = k->compute(k, ctx);
    bool injected = a->fail_after == 0; /* the run reached the refused allocation */
    ol_allocator_fail_after(a, -1);
    for (size_t i = 0; i < ctx->num_outputs; i++) {
      ol_value_release(ctx->outputs[i]);
      ctx->outputs[i] = NULL;
    }
    ol_allocator_stats st;
    ol_allocator_get_stats(a, &st);
    if (st.live_bytes != 0 || (s == OL_OUT_OF_MEMORY && !ol_last_error()[0]))
      fprintf(stderr, "  %s: failing allocation %lld left %llu bytes, message '%s'\n", ctx->node->op_type,
              (long long)fail, (unsigned long long)st.live_bytes, ol_last_error());
    CHECK(st.live_bytes == 0);
    if (s != OL_OUT_OF_MEMORY || !injected) break;
    CHECK(ol_last_error()[0] != '\0');
  }
  ctx->allocator = NULL;
  ol_allocator_destroy(a);
}

ol_status tk_run(const char *op_type, int opset, ol_attr *attrs, size_t num_attrs,
                 ol_value *const *inputs, size_t num_inputs, ol_value **outputs,
                 size_t num_outputs) {
  return tk_run_domain("", op_type, opset, attrs, num_attrs, inputs, num_inputs, outputs, num_outputs);
}

ol_status tk_run_domain(const char *domain, const char *op_type, int opset, ol_attr *attrs, size_t num_attrs,
                        ol_value *const *inputs, size_t num_inputs, ol_value **outputs, size_t num_outputs) {
  static const char *names[] = {"i0", "i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8", "i9", "i10", "i11"};
  static const char *out_names[] = {"o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7"};
  const char *in_list[12];
  if (num_inputs > 12 || num_outputs > 8) return ol_error(OL_INVALID_ARGUMENT, "tk_run: too many inputs or outputs");
  for (size_t i = 0; i < num_inputs; i++) in_list[i] = inputs[i] ? names[i] : "";
  ol_node node = {0};
  node.name = "test";
  node.op_type = op_type;
  node.domain = domain;
  node.opset = opset;
  node.num_inputs = num_inputs;
  node.inputs = in_list;
  node.num_outputs = num_outputs;
  node.outputs = out_names;
  node.num_attrs = num_attrs;
  node.attrs = attrs;
  const ol_op_schema *reg;
  OL_TRY(ol_schema_find(&node, &reg));
  ol_kernel *k;
  OL_TRY(reg->create(&node, &k));
  for (size_t i = 0; i < num_outputs; i++) outputs[i] = NULL;
  int cancelled = 0;
  ol_kernel_ctx ctx = {0};
  ctx.node = &node;
  ctx.inputs = inputs;
  ctx.num_inputs = num_inputs;
  ctx.outputs = outputs;
  ctx.num_outputs = num_outputs;
  ctx.cancelled = &cancelled;
  walk_allocation_failures(k, &ctx);
  ol_status s = k->compute(k, &ctx);
  if (k->destroy) k->destroy(k); else free(k);
  return s;
}

bool tk_shape_is(const ol_value *v, int rank, const int64_t *dims) {
  if (!v || v->kind != OL_VALUE_TENSOR || v->tensor.rank != rank) return false;
  for (int i = 0; i < rank; i++)
    if (v->tensor.dims[i] != dims[i]) return false;
  return true;
}

bool tk_near_f32(const ol_value *v, const float *want, int64_t n, float tol) {
  if (!v || v->tensor.dtype != OL_DTYPE_FLOAT || ol_tcount(&v->tensor) != n) return false;
  const float *d = ol_tdata(&v->tensor);
  for (int64_t i = 0; i < n; i++)
    if (!(fabsf(d[i] - want[i]) <= tol * (1.0f + fabsf(want[i])))) {
      fprintf(stderr, "  element %lld: got %.9g want %.9g\n", (long long)i, d[i], want[i]);
      return false;
    }
  return true;
}

void tk_release_all(ol_value **v, int n) {
  for (int i = 0; i < n; i++) {
    ol_value_release(v[i]);
    v[i] = NULL;
  }
}

void *tk_serialized(const char *text, size_t *size) {
  ol_model *parsed = NULL;
  void *bytes = NULL;
  CHECK_OK(ol_model_parse_text(text, &parsed));
  if (parsed) CHECK_OK(ol_model_serialize(parsed, &bytes, size));
  ol_model_destroy(parsed);
  return bytes;
}

ol_model *tk_model_on_wire(const char *text) {
  ol_model *m = NULL;
  size_t size = 0;
  void *bytes = tk_serialized(text, &size);
  if (bytes) CHECK_OK(ol_model_load_owned(bytes, size, NULL, &m));
  return m;
}

const ol_tensor *tk_initializer(const ol_model *m, const char *name) {
  const ol_initializer *init = ol_graph_find_initializer(m->data->graph, name);
  return init ? &init->value->tensor : NULL;
}

void tk_check_gives_back_bytes(ol_model *m, const uint8_t *bytes, size_t size) {
  /* serialization writes the dense bytes: exactly the bytes loaded */
  void *again = NULL;
  size_t again_size = 0;
  CHECK_OK(ol_model_serialize(m, &again, &again_size));
  CHECK(again && again_size == size && memcmp(again, bytes, size) == 0);
  ol_free(again);
  ol_serial_pieces *pieces = NULL;
  CHECK_OK(ol_model_serialize_pieces(m, &pieces));
  if (pieces) {
    uint8_t *joined = malloc(ol_serial_pieces_total(pieces) + 1);
    size_t at = 0;
    for (size_t i = 0; i < ol_serial_pieces_count(pieces); i++) {
      const ol_serial_piece *piece = &ol_serial_pieces_list(pieces)[i];
      memcpy(joined + at, piece->data, piece->size);
      at += piece->size;
    }
    CHECK(at == size && memcmp(joined, bytes, size) == 0);
    free(joined);
    ol_serial_pieces_destroy(pieces);
  }
  /* the text printer prints the dense values */
  char *printed = NULL, *plain = NULL;
  CHECK_OK(ol_model_print_text(m, &printed));
  Onnx__ModelProto *proto = onnx__model_proto__unpack(NULL, size, bytes);
  CHECK(proto != NULL);
  if (proto) CHECK_OK(ol_text_print_proto(proto, &plain));
  CHECK(printed && plain && strcmp(printed, plain) == 0);
  free(plain);
  ol_free(printed);
  if (proto) onnx__model_proto__free_unpacked(proto, NULL);
}

/* Row t of K (which 0) or V of cache into out (false: no such token). */
static bool paged_row(const ol_value *cache, int64_t t, int which, int64_t width, float *out) {
  for (size_t i = 0; i < ol_paged_cache_block_count(cache); i++) {
    ol_page p;
    if (ol_page_view(ol_paged_cache_block(cache, i), i, &p) != OL_OK) return false;
    bool here = t >= p.start && t < p.start + p.length;
    if (here) ol_page_decode(which ? &p.value : &p.key, t - p.start, 0, width, out);
    ol_page_clear(&p);
    if (here) return true;
  }
  return false;
}

bool tk_paged_same_tokens(const ol_value *a, const ol_value *b) {
  int64_t na = 0, nb = 0, kw = 0, vw = 0, kw2 = 0, vw2 = 0;
  if (ol_paged_cache_validate(a, &na, &kw, &vw) != OL_OK || ol_paged_cache_validate(b, &nb, &kw2, &vw2) != OL_OK ||
      na != nb || kw != kw2 || vw != vw2 || kw > 256 || vw > 256)
    return false;
  float x[256], y[256];
  for (int64_t t = 0; t < na; t++)
    for (int which = 0; which < 2; which++) {
      int64_t w = which ? vw : kw;
      if (!paged_row(a, t, which, w, x) || !paged_row(b, t, which, w, y) || memcmp(x, y, sizeof(float) * (size_t)w))
        return false;
    }
  return true;
}
