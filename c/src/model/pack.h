/* Weights packed for the kernels that read them, once, when a model is
 * loaded from its bytes. */
#ifndef OL_MODEL_PACK_H
#define OL_MODEL_PACK_H
#include "ir/model.h"

/* Asks the schema row of every node of the root graph which of its weights
 * its kernel reads packed (ol_pack_fn), and packs in place, in the model's
 * own wire buffer, each weight whose readers all ask for the same packing:
 * never graph inputs or outputs, names in quantization annotations or read
 * from subgraphs or functions, payloads outside the model's own wire bytes
 * (bound models share their source's, packed when it loaded). A request
 * whose weights cannot all be packed is dropped whole, which may drop
 * another's: repeated until stable. Best effort: without memory for the
 * scratch block the remaining weights stay dense (OL_OK).
 *
 * Packing happens at load rather than when a kernel is created (XNNPACK's
 * moment) because sessions share the model's bytes: packing at session
 * creation would rewrite bytes another session of the same model, or of a
 * model bound from it, may be reading. At load there is no reader yet, and
 * the decision depends only on the graph, the same for every session. */
ol_status ol_model_pack_weights(ol_model_data *d);

#endif
