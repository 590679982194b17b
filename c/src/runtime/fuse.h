/* Plan-time fusions: the schema rows' fusion offers (ops/schema.h), applied
 * once when a plan is built. */
#ifndef OL_RUNTIME_FUSE_H
#define OL_RUNTIME_FUSE_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/schema.h"

/* A node that absorbed its input's producer. */
typedef struct ol_fused {
  ol_kernel *kernel;        /* NULL: not fused */
  const ol_fusion *fusion;
  int32_t slot;             /* what the node's input fusion->input reads instead */
} ol_fused;

/* For every node of g whose row (rows[i], NULL: none) offers fusions, the
 * first one whose producer matches and whose create gives a kernel:
 * skip[producer] = true, fused[node] records the kernel and the slot the
 * node reads instead (the producer's input 0), and the node's use_slots
 * follow it so that lifetimes do. use_slots[n] lists node n's nonempty
 * inputs in order, then its captures; producer: slot -> node, -1 none;
 * output_slots: the graph outputs' slots. Fails only with OL_OUT_OF_MEMORY
 * or a create's error (kernels made so far stay in fused[]). */
ol_status ol_fuse_apply(const ol_graph *g, const ol_op_schema *const *rows, const int32_t *producer,
                        int32_t *const *use_slots, const size_t *use_counts, const int32_t *output_slots,
                        bool *skip, ol_fused *fused);

/* Destroys the fused kernels not taken (NULL entries skipped). */
void ol_fused_free(ol_fused *fused, size_t n);

#endif
