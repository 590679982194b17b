/* The wasm ABI of the graph builder (onnxlight.h, "graph builder"): thin
 * exported wrappers, same conventions as abi.c and abi_quant.c. Parts cross
 * as serialized messages; results as bytes the library allocated (out[0]
 * pointer, out[1] size; freed by JS with olw_ol_free). */
#include <emscripten/emscripten.h>
#include <stdint.h>
#include <stdlib.h>

#include "onnxlight.h"

#define OLW EMSCRIPTEN_KEEPALIVE

static size_t index_of(double v) { return v >= 0 && v < (double)SIZE_MAX ? (size_t)v : SIZE_MAX; }
static int64_t i64(double v) { return v >= -9223372036854775808.0 && v < 9223372036854775808.0 ? (int64_t)v : INT64_MIN; }

/* domains[i] / versions[i]: the opset imports (count of them). */
OLW int olw_builder_create(double ir_version, const char *const *domains, const double *versions, int count,
                           ol_builder **out) {
  ol_builder_opset opsets[64];
  if (count < 0 || count > 64) return ol_builder_create(i64(ir_version), NULL, (size_t)-1, out);
  for (int i = 0; i < count; i++) opsets[i] = (ol_builder_opset){domains[i], i64(versions[i])};
  return ol_builder_create(i64(ir_version), opsets, (size_t)count, out);
}
OLW int olw_builder_from_model(const void *bytes, size_t size, ol_builder **out) {
  return ol_builder_from_model(bytes, size, out);
}
OLW void olw_builder_destroy(ol_builder *builder) { ol_builder_destroy(builder); }
OLW int olw_builder_add(ol_builder *builder, int part, const void *bytes, size_t size) {
  return ol_builder_add(builder, (ol_builder_part)part, bytes, size);
}
OLW int olw_builder_add_at(ol_builder *builder, int part, const void *bytes, size_t size, double index) {
  return ol_builder_add_at(builder, (ol_builder_part)part, bytes, size, index_of(index));
}
OLW int olw_builder_replace(ol_builder *builder, int part, double index, const void *bytes, size_t size) {
  return ol_builder_replace(builder, (ol_builder_part)part, index_of(index), bytes, size);
}
OLW int olw_builder_add_persistent_binding(ol_builder *builder, const char *input_name, const char *output_name) {
  return ol_builder_add_persistent_binding(builder, input_name, output_name);
}
OLW int olw_builder_remove(ol_builder *builder, int part, const char *key) {
  return ol_builder_remove(builder, (ol_builder_part)part, key);
}
OLW double olw_builder_count(const ol_builder *builder, int part) {
  return (double)ol_builder_count(builder, (ol_builder_part)part);
}
OLW int olw_builder_get(const ol_builder *builder, int part, double index, void **out_bytes, size_t *out_size) {
  return ol_builder_get(builder, (ol_builder_part)part, index_of(index), out_bytes, out_size);
}
OLW int olw_builder_to_model(const ol_builder *builder, void **out_bytes, size_t *out_size) {
  return ol_builder_to_model(builder, out_bytes, out_size);
}
OLW int olw_builder_to_graph(const ol_builder *builder, void **out_bytes, size_t *out_size) {
  return ol_builder_to_graph(builder, out_bytes, out_size);
}
OLW int olw_builder_dedup_initializers(ol_builder *builder, size_t *removed) {
  return ol_builder_dedup_initializers(builder, removed);
}
OLW int olw_builder_infer(ol_builder *builder, size_t *reinferred) { return ol_builder_infer(builder, reinferred); }
OLW int olw_builder_value_info(ol_builder *builder, const char *name, void **out_bytes, size_t *out_size) {
  return ol_builder_value_info(builder, name, out_bytes, out_size);
}
