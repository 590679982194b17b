/* Plan-time rewrites, decided once when a plan is built. */
#ifndef OL_RUNTIME_FUSE_H
#define OL_RUNTIME_FUSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ir/graph.h"

/* MatMul(A, Transpose(B, perm swapping the last two axes)) where the
 * Transpose result feeds nothing else (no other node, capture or graph
 * output) runs as one product reading B transposed in place: for a KV cache
 * that saves a full copy of the keys per token, and the product can read a
 * pitched cache. For every such pair: skip[transpose] = true and
 * bypass[matmul] = the slot of B (else -1); use_slots of the MatMul are
 * rewritten so that lifetimes follow B. use_slots[n] lists node n's nonempty
 * inputs in order, then its captures; producer: slot -> node, -1 none;
 * output_slots: the graph outputs' slots. */
void ol_fuse_transposed_b(const ol_graph *g, const int32_t *producer,
                          int32_t *const *use_slots, const size_t *use_counts, const int32_t *output_slots,
                          bool *skip, int32_t *bypass);

#endif
