/* Plan-time fusion of MatMul with the ai.rt::Dequantize of its weight. */
#ifndef OL_RUNTIME_FUSE_QMATMUL_H
#define OL_RUNTIME_FUSE_QMATMUL_H
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ops/kernel.h"

/* MatMul(A, W) with W = ai.rt::Dequantize(E, dtype = FLOAT), where E is an
 * encoded initializer of g that no graph input overrides and W has no other
 * reader (no other node, capture or graph output), runs as one kernel
 * decoding E in register (ops/qmatmul.h) when E's layout is eligible
 * (quant/affine_view.h). For every such pair: skip[dequantize] = true,
 * bypass[matmul] = E's slot, kernels[matmul] = the fused kernel, and the
 * MatMul's use_slots follow E. Arguments as for ol_fuse_transposed_b
 * (fuse.h); MatMuls already bypassed are left alone. Fails only with
 * OL_OUT_OF_MEMORY (kernels created so far stay in kernels[]). */
ol_status ol_fuse_dequantized_b(const ol_graph *g, const int32_t *producer, int32_t *const *use_slots,
                                const size_t *use_counts, const int32_t *output_slots, bool *skip,
                                int32_t *bypass, ol_kernel **kernels);

/* Destroys the kernels[0..n) not taken (NULL entries skipped). */
void ol_fuse_kernels_free(ol_kernel **kernels, size_t n);

#endif
