/* The attention forms ol_model_to_paged recognizes, one file each
 * (paged_model.c drives them, paged_model_emit.c builds their nodes):
 *   paged_model_concat.c     torch Concat(past, new) + MatMul/Softmax/MatMul
 *   paged_model_gqa.c        com.microsoft GroupQueryAttention
 *   paged_model_attention.c  ai.onnx Attention (opset 23)
 *   paged_model_mha.c        com.microsoft MultiHeadAttention
 * A matcher looks at one node of the root graph. When that node ends a
 * cached attention of its form it fills the layer: the cache names, the
 * nodes it replaces, and the nodes replacing them (an ai.rt::PagedAttention
 * and what adapts its inputs and output), allocated in the conversion's
 * scratch patch (paged_model.c copies them into its builder). An
 * attention of its form that cannot be expressed is refused with an error
 * naming the node and the attribute or input; nodes of other kinds are left
 * to the other matchers. */
#ifndef OL_MODEL_PAGED_MODEL_FORMS_H
#define OL_MODEL_PAGED_MODEL_FORMS_H
#include <stdbool.h>
#include <stdint.h>

#include "core/status.h"
#include "ir/model.h"
#include "ir/proto_patch.h"

enum { PAGED_MAX_REPLACED = 24, PAGED_MAX_NEW = 32 };

typedef struct paged_layer {
  const char *past_k, *past_v;       /* graph inputs the cache replaces */
  const char *present_k, *present_v; /* graph outputs likewise */
  int anchor;                        /* the replaced node whose place the new nodes take */
  int replaced[PAGED_MAX_REPLACED];
  int n_replaced;
  Onnx__NodeProto *nodes[PAGED_MAX_NEW];
  int n_nodes;
  int64_t left_window; /* the PagedAttention's left_window_size (-1: none) */
  const char *cache_past, *cache_present; /* the paged cache's input and output (set when emitted) */
} paged_layer;

typedef struct paged_build {
  ol_proto_patch *p; /* scratch: the new nodes and names until they are copied */
  const ol_graph *g;
  const ol_paged_model_options *o;
  int counter;     /* fresh value names */
  bool oom;        /* an allocation failed (sticky) */
} paged_build;

/* *matched: node i ends a layer of this form (layer filled). */
typedef ol_status (*paged_matcher)(paged_build *b, int i, paged_layer *layer, bool *matched);
ol_status ol_paged_match_concat(paged_build *b, int i, paged_layer *layer, bool *matched);
ol_status ol_paged_match_gqa(paged_build *b, int i, paged_layer *layer, bool *matched);
ol_status ol_paged_match_attention(paged_build *b, int i, paged_layer *layer, bool *matched);
ol_status ol_paged_match_mha(paged_build *b, int i, paged_layer *layer, bool *matched);

/* ------------------------------------------------------------ graph queries */

/* op_type in the default domain, or in com.microsoft (ms). */
bool ol_paged_is_op(const ol_node *n, const char *op);
bool ol_paged_is_ms(const ol_node *n, const char *op);
/* The node producing name (-1: a graph input, initializer or absent). */
int ol_paged_producer(const ol_graph *g, const char *name);
/* Node inputs and graph outputs reading name. */
size_t ol_paged_readers(const ol_graph *g, const char *name);
bool ol_paged_is_graph_input(const ol_graph *g, const char *name);
bool ol_paged_is_graph_output(const ol_graph *g, const char *name);
/* The declared rank of a graph input or value_info (-1: unknown). */
int ol_paged_declared_rank(const ol_graph *g, const char *name);
/* dims[3] of a rank-4 graph input (-1: unknown). */
int64_t ol_paged_declared_head_size(const ol_graph *g, const char *name);
/* Optional input k of n (NULL when absent or empty). */
const char *ol_paged_input(const ol_node *n, size_t k);

/* An error refusing the conversion of node n (OL_NOT_IMPLEMENTED). */
ol_status ol_paged_refuse(const ol_node *n, const char *fmt, ...);
/* Fills the layer's cache names from a fused node's past inputs and present
 * outputs: they must be graph inputs and outputs (else a refusal). */
ol_status ol_paged_cache_pair(const ol_graph *g, const ol_node *n, size_t past_k, size_t past_v, paged_layer *l);

/* ------------------------------------------------------------ new nodes */

/* Appends node op (domain NULL: the default) reading in[0..n_in) to the
 * layer; its output is out (NULL: a fresh name), returned (NULL: out of
 * memory, b->oom set). The node is l->nodes[l->n_nodes - 1]. */
const char *ol_paged_emit(paged_build *b, paged_layer *l, const char *op, const char *domain, const char *const *in,
                          size_t n_in, const char *out);
void ol_paged_attr_int(paged_build *b, Onnx__NodeProto *n, const char *name, int64_t value);
void ol_paged_attr_ints(paged_build *b, Onnx__NodeProto *n, const char *name, const int64_t *values, size_t count);
/* Constant nodes: an int64 vector, a float scalar. */
const char *ol_paged_const_ints(paged_build *b, paged_layer *l, const int64_t *values, size_t count);
const char *ol_paged_const_float(paged_build *b, paged_layer *l, float value);
/* [B, S, heads * D] -> [B, heads, S, D] (Reshape, Transpose). */
const char *ol_paged_split_heads(paged_build *b, paged_layer *l, const char *x, int64_t heads);
/* [B, H, S, D] -> [B, S, H * D] named out. */
const char *ol_paged_merge_heads(paged_build *b, paged_layer *l, const char *y, const char *out);
/* q scaled so that PagedAttention's 1 / sqrt(head_size) gives scale (0:
 * the default, q unchanged); a refusal naming attribute `what` of n when
 * the head size is unknown. */
ol_status ol_paged_scaled_query(paged_build *b, paged_layer *l, const ol_node *n, const char *what, double scale,
                                int64_t head_size, const char **q);
/* The layer's PagedAttention (Q, K, V in [B, H, L, D], past) -> (y, present)
 * with the conversion's options (the layer's window when it has one); y
 * NULL: a fresh name. Its Y (NULL: out of memory). */
const char *ol_paged_emit_attention(paged_build *b, paged_layer *l, const char *q, const char *k, const char *v,
                                  const char *y, bool causal);

/* The attention forms' common end: q, k, v split per head when heads > 0
 * (3-D inputs: q into heads, k and v into kv_heads; heads 0: already
 * [B, H, S, D]), q scaled by n's 'scale' attribute, the layer's
 * PagedAttention writing n's first output (merged back to 3-D when split),
 * node i replaced as the layer's anchor. */
ol_status ol_paged_replace_with_attention(paged_build *b, int i, paged_layer *l, const ol_node *n, const char *q,
                                          const char *k, const char *v, int64_t heads, int64_t kv_heads, bool causal,
                                          bool *matched);

#endif
