/* Sequence and optional operators: see the helper that owns this file. */
#include "ops/registry.h"
const ol_op_registration ol_ops_sequence[] = {{0}};
