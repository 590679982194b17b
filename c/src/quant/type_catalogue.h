/* A model's struct types (ModelProto.struct_types) with every type_ref chain
 * resolved once, when the catalogue is built: the one place where
 * StructTypeProto.type_ref is followed. Codecs, kernels, the checker and
 * the session's value checks take this catalogue, never a ModelProto.
 *
 * A chain follows at most OL_TYPE_REF_MAX_DEPTH references (the type_ref a
 * caller resolves included); a longer chain is reported as a probable cycle.
 * Broken entries (a reference to an undeclared id, a cycle) do not fail the
 * build: resolving a reference to them does, naming the reference.
 *
 * The catalogue borrows the declarations: it must not outlive them (a
 * model's catalogue lives as long as its ol_model_data). */
#ifndef OL_QUANT_TYPE_CATALOGUE_H
#define OL_QUANT_TYPE_CATALOGUE_H
#include <stddef.h>

#include "onnx_light.pb-c.h"
#include "onnxlight.h"

/* The one depth limit of type_ref chains (and of struct type nesting in the
 * session's value checks). */
#define OL_TYPE_REF_MAX_DEPTH 64

typedef struct ol_type_catalogue ol_type_catalogue;

/* Builds the catalogue of count declarations (borrowed; may be 0). */
ol_status ol_type_catalogue_create(const Onnx__StructTypeProto *const *types, size_t count,
                                   ol_type_catalogue **out);
void ol_type_catalogue_destroy(ol_type_catalogue *catalogue);

/* *out = type itself when it is not a type_ref, else the declaration (with
 * a kind) its reference chain ends at. catalogue may be NULL (no struct
 * types: every type_ref fails). Errors are OL_INVALID_ARGUMENT naming the
 * reference ("struct_type.type_ref 7 ..."); callers rewrap the status. */
ol_status ol_type_catalogue_resolve(const ol_type_catalogue *catalogue, const Onnx__StructTypeProto *type,
                                    const Onnx__StructTypeProto **out);

#endif
