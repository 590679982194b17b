/* The operator registry: every family's schema table (ops/schema.h). */
#include <stdio.h>
#include <string.h>

#include "ops/control/control.h"
#include "ops/elementwise/elementwise.h"
#include "ops/loss/loss.h"
#include "ops/matmul/matmul.h"
#include "ops/misc/misc.h"
#include "ops/nn/nn.h"
#include "ops/paged/paged.h"
#include "ops/quantize/quantize.h"
#include "ops/recurrent/recurrent.h"
#include "ops/reduce/reduce.h"
#include "ops/sequence/sequence.h"
#include "ops/signal/signal.h"
#include "ops/tensor/tensor.h"
#include "ops/transformer/transformer.h"

static const ol_op_schema *const tables[] = {
    ol_schema_elementwise, ol_schema_shape,  ol_schema_tensor,    ol_schema_reduce,
    ol_schema_matmul,      ol_schema_nn,     ol_schema_resize,    ol_schema_control,
    ol_schema_sequence,    ol_schema_nn23,   ol_schema_attention, ol_schema_contrib_ms,
    ol_schema_loss,        ol_schema_recurrent, ol_schema_quantize_linear, ol_schema_quantize_rt,
    ol_schema_misc,        ol_schema_signal,    ol_schema_paged,
};
#define TABLE_COUNT (sizeof tables / sizeof tables[0])

const ol_op_schema *ol_schema_at(size_t index) {
  for (size_t t = 0; t < TABLE_COUNT; t++) {
    size_t n = 0;
    while (tables[t][n].op_type) n++;
    if (index < n) return &tables[t][index];
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

static bool names(const ol_op_schema *row, const ol_node *node) {
  return strcmp(row->op_type, node->op_type) == 0 && same_domain(row->domain, node->domain);
}

/* known: some row names the operator (with a kernel) at another opset. */
static const ol_op_schema *find(const ol_node *node, bool *known) {
  *known = false;
  for (size_t t = 0; t < TABLE_COUNT; t++)
    for (const ol_op_schema *row = tables[t]; row->op_type; row++) {
      if (!row->create || !names(row, node)) continue;
      *known = true;
      if (node->opset >= row->since_version && node->opset <= row->until_version) return row;
    }
  return NULL;
}

const ol_op_schema *ol_schema_lookup(const ol_node *node) {
  bool known;
  return find(node, &known);
}

ol_status ol_schema_find(const ol_node *node, const ol_op_schema **out) {
  bool known;
  *out = find(node, &known);
  if (*out) return OL_OK;
  const char *domain = node->domain[0] ? node->domain : "ai.onnx";
  char label[300];
  if (node->name[0])
    snprintf(label, sizeof label, "node '%.256s'", node->name);
  else
    snprintf(label, sizeof label, "unnamed node #%zu", node->index);
  return ol_error(OL_NOT_IMPLEMENTED, "operator %s::%s version %d (%s) is not supported%s", domain,
                  node->op_type, node->opset, label, known ? " at this opset version" : "");
}

ol_infer_fn ol_schema_infer(const ol_node *node) {
  for (size_t t = 0; t < TABLE_COUNT; t++)
    for (const ol_op_schema *row = tables[t]; row->op_type; row++)
      if (row->infer && names(row, node)) return row->infer;
  return NULL;
}
