#include "ops/registry.h"

#include <stdio.h>
#include <string.h>

static const ol_op_registration *const families[] = {
    ol_ops_elementwise, ol_ops_shape, ol_ops_tensor, ol_ops_reduce, ol_ops_matmul, ol_ops_nn,
    ol_ops_control, ol_ops_sequence, ol_ops_nn23, ol_ops_contrib_ms,
    ol_ops_attention,
    ol_ops_resize, ol_ops_loss, ol_ops_recurrent, ol_ops_quantize_linear,
    ol_ops_misc, ol_ops_signal, ol_ops_quantize_rt,
};
#define FAMILY_COUNT (sizeof families / sizeof families[0])

const ol_op_registration *ol_registry_at(size_t index) {
  for (size_t f = 0; f < FAMILY_COUNT; f++) {
    size_t n = 0;
    while (families[f][n].op_type) n++;
    if (index < n) return &families[f][index];
    index -= n;
  }
  return NULL;
}

static bool same_domain(const char *a, const char *b) {
  /* "ai.onnx" and "" name the same default domain. */
  if (strcmp(a, "ai.onnx") == 0) a = "";
  if (strcmp(b, "ai.onnx") == 0) b = "";
  return strcmp(a, b) == 0;
}

ol_status ol_registry_find(const ol_node *node, const ol_op_registration **out) {
  bool known = false;
  for (size_t f = 0; f < FAMILY_COUNT; f++)
    for (const ol_op_registration *reg = families[f]; reg->op_type; reg++) {
      if (strcmp(reg->op_type, node->op_type) != 0 || !same_domain(reg->domain, node->domain))
        continue;
      known = true;
      if (node->opset >= reg->since_version && node->opset <= reg->until_version) {
        *out = reg;
        return OL_OK;
      }
    }
  const char *domain = node->domain[0] ? node->domain : "ai.onnx";
  char label[300];
  if (node->name[0])
    snprintf(label, sizeof label, "node '%.256s'", node->name);
  else
    snprintf(label, sizeof label, "unnamed node #%zu", node->index);
  return ol_error(OL_NOT_IMPLEMENTED, "operator %s::%s version %d (%s) is not supported%s", domain,
                  node->op_type, node->opset, label,
                  known ? " at this opset version" : "");
}
