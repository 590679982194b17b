/* Nesting limits. Protobuf-c unpacks recursively, and so do the decoder,
 * checker, shape inference, planner and printer: unbounded nesting in a
 * small hostile model would exhaust the stack (1 MiB in wasm). Models are
 * refused beyond these depths with an error naming the limit (see
 * docs/limits.md). Size limits live with the arithmetic (core/checked.h). */
#ifndef OL_CORE_LIMITS_H
#define OL_CORE_LIMITS_H

/* Graphs inside graph attributes (If/Loop/Scan bodies inside each other). */
#define OL_MAX_GRAPH_DEPTH 32
/* Types inside types (sequence, optional, map, struct element types). */
#define OL_MAX_TYPE_DEPTH 32
/* Model-local function calls inside function bodies. */
#define OL_MAX_FUNCTION_DEPTH 32
/* Protobuf messages inside each other, whatever their kind: a nested graph
 * costs 3 levels (graph, node, attribute), a nested type 2 or 3. */
#define OL_MAX_PROTO_DEPTH (3 * OL_MAX_GRAPH_DEPTH + 3 * OL_MAX_TYPE_DEPTH + 16)

#endif
