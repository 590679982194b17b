/* Unsupported element types reported before running (sessions call this
 * after planning): shape inference gives each node's input types, and a
 * node whose first input has a known element type missing from its kernel
 * registration's declared `dtypes` fails with OL_NOT_IMPLEMENTED naming the
 * operator, the node, the input and the type. Only registrations whose
 * `dtypes` string is a plain list of element-type names are checked (their
 * first input carries the listed type); the others, nodes of model-local
 * functions and models where inference itself fails are left to the kernels
 * (never a false rejection from what inference cannot know). */
#ifndef OL_MODEL_ELEMENT_TYPES_H
#define OL_MODEL_ELEMENT_TYPES_H
#include "ir/model.h"

ol_status ol_model_check_element_types(const ol_model_data *model);

#endif
