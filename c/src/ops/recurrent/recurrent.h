/* RNN, GRU and LSTM (recurrent.c, with their shape function) */
#ifndef OL_OPS_RECURRENT_H
#define OL_OPS_RECURRENT_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_recurrent[];

#endif
