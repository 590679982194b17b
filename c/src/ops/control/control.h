/* If, Loop, Scan and calls of model-local functions (control.c) */
#ifndef OL_OPS_CONTROL_H
#define OL_OPS_CONTROL_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_control[];

#endif
