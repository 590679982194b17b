/* Sequence and Optional operators (sequence.c) */
#ifndef OL_OPS_SEQUENCE_H
#define OL_OPS_SEQUENCE_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_sequence[];

#endif
