/* DFT, STFT, window functions and MelWeightMatrix (signal.c, with their shape functions) */
#ifndef OL_OPS_SIGNAL_H
#define OL_OPS_SIGNAL_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_signal[];

#endif
