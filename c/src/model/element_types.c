/* Element types checked against the kernel registrations before running
 * (see element_types.h). */
#include <stdio.h>
#include <string.h>

#include "model/element_types.h"
#include "model/infer_internal.h"
#include "ops/schema.h"

/* Whether dtypes is a plain space-separated list of element-type names
 * ("float32 float16 bfloat16"); *listed tells whether it names dtype. */
static bool plain_list(const char *dtypes, ol_dtype dtype, bool *listed) {
  *listed = false;
  if (!dtypes || !dtypes[0]) return false;
  const char *name = ol_dtype_name(dtype);
  size_t name_length = strlen(name);
  const char *p = dtypes;
  bool any = false;
  while (*p) {
    while (*p == ' ') p++;
    if (!*p) break;
    const char *end = p;
    while (*end && *end != ' ') end++;
    char token[32];
    size_t n = (size_t)(end - p);
    if (n >= sizeof token) return false;
    memcpy(token, p, n);
    token[n] = 0;
    ol_dtype parsed = ol_dtype_from_name(token);
    if (parsed == OL_DTYPE_UNDEFINED || strcmp(ol_dtype_name(parsed), token) != 0) return false;
    if (n == name_length && memcmp(p, name, n) == 0) *listed = true;
    any = true;
    p = end;
  }
  return any;
}

static ol_status visit(void *user, const ol_node *node, const ol_infer_type *const *inputs) {
  bool *rejected = user;
  if (node->function_body || node->num_inputs == 0 || !inputs[0]) return OL_OK;
  const ol_infer_type *x = inputs[0];
  if (!x->known || x->kind != OL_VALUE_TENSOR || x->proto || x->encoded || x->dtype == OL_DTYPE_UNDEFINED)
    return OL_OK;
  const ol_op_schema *reg = NULL;
  if (ol_schema_find(node, &reg) != OL_OK) return OL_OK; /* the planner reports it */
  bool listed;
  if (!plain_list(reg->dtypes, x->dtype, &listed) || listed) return OL_OK;
  const char *domain = node->domain[0] ? node->domain : "ai.onnx";
  char label[300];
  if (node->name[0]) snprintf(label, sizeof label, "node '%.256s'", node->name);
  else snprintf(label, sizeof label, "unnamed node #%zu", node->index);
  *rejected = true;
  return ol_error(OL_NOT_IMPLEMENTED,
                  "operator %s::%s version %d (%s): input '%s' has element type %s, which is not supported "
                  "(supported: %s)",
                  domain, node->op_type, node->opset, label, node->inputs[0], ol_dtype_name(x->dtype),
                  reg->dtypes);
}

ol_status ol_model_check_element_types(const ol_model_data *model) {
  if (!model || !model->graph) return OL_OK;
  bool rejected = false;
  ol_status s = ol_infer_walk(model, visit, &rejected);
  /* inference failures other than the check's own are not this check's business */
  return rejected || s == OL_OUT_OF_MEMORY ? s : OL_OK;
}
