/* An operator's schema row: everything the rest of the runtime needs to
 * know about one (domain, op type, opset range). The kernel registry, shape
 * inference, the planner (in-place cache growth, dense copies, fusions),
 * weight packing at load and the generated docs/operators.md all read these
 * rows; nothing outside c/src/ops names an operator.
 *
 * Each family folder (ops/<family>/) defines one table of rows ending with
 * an all-zero row; ops/families.h lists the tables. Adding an operator is
 * adding its kernel (and shape function) in its family and one row here:
 * see docs/adding-an-operator.md. */
#ifndef OL_OPS_SCHEMA_H
#define OL_OPS_SCHEMA_H
#include <stddef.h>
#include <stdint.h>

#include "ops/infer.h"
#include "ops/kernel.h"

#define OL_OPSET_LATEST 23

/* A cache the operator continues in place: node input `input` (a past
 * cache) is the prefix of node output `output` (its present) along `axis`.
 * The planner offers such inputs append reservations in persistent state,
 * lets such outputs keep spare rows in sessions, and copies caches fed as
 * user data in with spare rows. */
typedef struct ol_cache_pair {
  uint8_t input;
  uint8_t output;
  int8_t axis; /* OL_CACHE_AXIS_ATTR: the node's "axis" attribute (default 0) */
} ol_cache_pair;
#define OL_CACHE_AXIS_ATTR (-128)
#define OL_MAX_CACHE_PAIRS 2

/* ------------------------------------------------------------ fusions */

/* Where a fusion applies: `reader` reads input `input` from `producer`'s
 * only output, which nothing else reads (no other node, subgraph capture or
 * graph output), and the producer reads one value, its input 0. constant:
 * that value's initializer when no graph input overrides it, else NULL. */
typedef struct ol_fusion_site {
  const ol_graph *graph;
  const ol_node *reader;
  const ol_node *producer;
  size_t input;
  const ol_initializer *constant;
} ol_fusion_site;

/* A producer the reader's kernel can absorb: the planner skips the
 * producer and the reader's input `input` reads the producer's input 0
 * instead. create sets *out NULL when this site is not eligible (the
 * nodes then run as written). pitched_inputs/packed_inputs: as in the row,
 * for the fused kernel. */
typedef struct ol_fusion {
  const char *name;
  uint8_t input;
  const char *producer_domain; /* "" for ai.onnx */
  const char *producer_op;
  ol_status (*create)(const ol_fusion_site *site, ol_kernel **out);
  uint32_t pitched_inputs;
  uint32_t packed_inputs;
} ol_fusion;

/* ------------------------------------------------------------ weight packing */

/* A weight the kernel reads in a layout of its own (core/value.h,
 * ol_packing): input `input` of the node, laid out by from_dense in place
 * (scratch: scratch_bytes) into `packing`. */
#define OL_MAX_PACK_REQUESTS 4
typedef struct ol_pack_request {
  uint8_t input;
  ol_packing packing;
  void (*from_dense)(const ol_packing *packing, void *data, void *scratch);
  size_t scratch_bytes;
} ol_pack_request;

/* Asked once per node when a model is loaded (model/pack.c): which of the
 * node's weights its kernel wants packed. constants[i] is input i when it is
 * a plain tensor initializer held in the model's own bytes (else NULL).
 * Returns the number of requests written (at most OL_MAX_PACK_REQUESTS);
 * they are granted together or not at all, and only when every reader of
 * each weight asks for the same packing. */
typedef size_t (*ol_pack_fn)(const ol_node *node, const ol_tensor *const *constants,
                             ol_pack_request *requests);

/* ------------------------------------------------------------ the row */

enum {
  /* Output 0 is input 0 unchanged (Identity): the planner looks through it
   * when it traces a node input back to a persistent graph input. */
  OL_SCHEMA_FORWARDS = 1,
};

typedef struct ol_op_schema {
  const char *domain;  /* "" for the default ai.onnx domain */
  const char *op_type;
  int since_version;   /* first opset this row covers */
  int until_version;   /* last opset (inclusive) */
  ol_kernel_create_fn create; /* NULL: a shape function only, no kernel */
  ol_infer_fn infer;          /* NULL: outputs stay uninferred */
  const char *dtypes;         /* element types: "float32 float16 ..." (docs, creation-time checks) */
  uint32_t pitched_inputs;    /* bit i: input i may be a pitched cache, read in place */
  uint32_t packed_inputs;     /* bit i: input i may be a weight packed by `pack` */
  ol_cache_pair caches[OL_MAX_CACHE_PAIRS];
  uint8_t num_caches;
  uint8_t flags;              /* OL_SCHEMA_* */
  ol_pack_fn pack;
  const ol_fusion *fusions;   /* producers the kernel can absorb, ending with a zero entry */
  /* bit i: input i may be a structured (encoded) value. A tensor operator
   * never receives one implicitly: shape inference rejects an encoded value
   * on any other input (decode it first, e.g. with ai.rt::Dequantize). */
  uint32_t structured_inputs;
} ol_op_schema;

/* ------------------------------------------------------------ lookup (registry.c) */

/* The row for node's (domain, op_type, opset) that has a kernel; a clear
 * error names the domain, op type, version and node when there is none. */
ol_status ol_schema_find(const ol_node *node, const ol_op_schema **out);
/* The row of node's operator at its opset whose kernel would run, or NULL
 * (no error recorded). */
const ol_op_schema *ol_schema_lookup(const ol_node *node);
/* The shape function of node's (domain, op type), any opset, or NULL. */
ol_infer_fn ol_schema_infer(const ol_node *node);
/* Every row in turn (docs/operators.md); NULL at the end. */
const ol_op_schema *ol_schema_at(size_t index);

/* The kernel of a call of a model-local function (node->function_body). */
ol_status ol_function_call_create(const ol_node *node, ol_kernel **out);

#endif
