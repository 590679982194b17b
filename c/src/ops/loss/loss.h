/* SoftmaxCrossEntropyLoss and NegativeLogLikelihoodLoss (loss.c, with their shape function) */
#ifndef OL_OPS_LOSS_H
#define OL_OPS_LOSS_H
#include "ops/schema.h"

extern const ol_op_schema ol_schema_loss[];

#endif
