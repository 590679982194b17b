#ifndef OL_RUNTIME_SESSION_H
#define OL_RUNTIME_SESSION_H
#include "core/payload_pool.h"
#include "ir/model.h"
#include "runtime/plan.h"

struct ol_session {
  ol_model_data *model;
  ol_plan *plan;
  ol_allocator *allocator;
  int threads;              /* intra-op threads; 0: the process default */
  size_t num_inputs;        /* graph inputs without an initializer default */
  size_t *input_index;      /* -> graph input position */
  size_t num_optional;      /* inputs with an initializer default (overridable) */
  bool grow_outputs;        /* see ol_session_grow_outputs */
  /* Payloads released during runs, reused by the next (core/payload_pool.h);
   * NULL: every run allocates afresh. */
  ol_payload_pool *pool;
  /* Formats of appended paged-cache pages (rules copied from the options). */
  ol_paged_policy paged;
};

/* Copies the page-format function and rules of options (paged caches). */
ol_status ol_session_set_page_formats(ol_session *s, const ol_session_options *options);
/* Turns payload reuse across runs on (the default) or off; off frees what
 * the pool holds. Not during a run. */
ol_status ol_session_reuse_payloads(ol_session *s, bool on);
/* The payload pool of a state's session (NULL: none). */
ol_payload_pool *ol_state_payload_pool(const ol_state *st);

/* Lets Concat outputs that are graph outputs (a torch export's present.*)
 * keep spare capacity and a pitched layout when they leave a run, so that
 * feeding them back as past appends in place (ops/tensor.c). The caller then
 * receives pitched tensors: the JS package, which densifies one before
 * showing its data. C API sessions keep dense outputs. */
void ol_session_grow_outputs(ol_session *s, bool on);
/* (ol_session_input_grow_axis, onnxlight.h, reports the inputs that grow.) */

/* Matches named feeds to graph inputs (feeds[k] borrowed, per graph input).
 * bound (may be NULL) marks inputs supplied by a persistent state: naming
 * one is an error, and they are not reported missing. */
ol_status ol_session_match_feeds(const ol_session *s, const char *const *names, ol_value *const *inputs,
                                 size_t n_inputs, const bool *bound, ol_value **feeds);
/* pick[i] = graph output index of names[i] (names NULL: all, in order). */
ol_status ol_session_match_outputs(const ol_session *s, const char *const *names, size_t n, size_t *pick);
/* A value must match a declaration's kind, element type, rank and fixed dims. */
ol_status ol_check_value_type(const ol_graph_value *decl, const ol_value *v);
/* The same check walking struct fields (declaration order, constant fields
 * excluded) and sequence elements recursively (at most OL_TYPE_REF_MAX_DEPTH
 * levels); types (may be NULL) resolves struct type_refs. persistent also rejects map, optional, sparse, opaque and
 * string leaves and external encoded payloads, and reads a layout-less
 * struct as a paged cache declaration. Under a paged cache declaration
 * (ol_struct_type_paged_cache) the value must have the cache structure;
 * dense FLOAT16/BFLOAT16 pages match FLOAT key/value declarations. Messages
 * read "<label> '<name>': field 'blocks'[2].key: <problem>". */
ol_status ol_check_value_decl(const ol_type_catalogue *types, const ol_graph_value *decl, const ol_value *v,
                              bool persistent, const char *label);
/* The same for a persistent value's next value, given the value it replaces
 * (accepted: passed this declaration and still held; may be NULL): blocks of
 * a paged cache that are accepted's blocks at the same index are not walked
 * again. */
ol_status ol_check_next_value_decl(const ol_type_catalogue *types, const ol_graph_value *decl, const ol_value *v,
                                   const ol_value *accepted, const char *label);

/* A paged cache declaration (seed 000, wire facts 1.7): a layout-less
 * struct_type, or a structure whose one runtime field `blocks` is a
 * sequence of structs (inline or type_ref) with exactly the runtime fields
 * start, length, key and value. st is resolved (not a type_ref). out gets
 * the declared field types (NULL: unconstrained); named is false for the
 * layout-less form. */
typedef struct ol_cache_decl {
  bool named;
  const Onnx__TypeProto *start, *length, *key, *value;
} ol_cache_decl;
bool ol_struct_type_paged_cache(const ol_type_catalogue *types, const Onnx__StructTypeProto *st, ol_cache_decl *out);

/* ol_state_run that polls watch for cancellation (between nodes and at the
 * publication gate) without completing it: generation passes its caller's
 * completion to every step this way. */
ol_status ol_state_run_watching(ol_state *st, ol_context *context, const char *const *input_names,
                                ol_value *const *inputs, size_t n_inputs, const char *const *output_names,
                                ol_value **outputs, size_t n_outputs, ol_completion *watch);

#endif
