/* Runs one kernel on hand-made tensors, without a model or session. */
#ifndef OL_TEST_KERNEL_UTIL_H
#define OL_TEST_KERNEL_UTIL_H
#include "ops/schema.h"

/* A float/int64 tensor from literal data (copied). */
ol_value *tk_f32(int rank, const int64_t *dims, const float *data);
ol_value *tk_i64(int rank, const int64_t *dims, const int64_t *data);
ol_value *tk_tensor(ol_dtype dtype, int rank, const int64_t *dims, const void *data);

/* Runs op_type (domain "", given opset) with attrs on inputs (NULL = absent).
 * outputs receive new references. Returns the kernel's status. */
ol_status tk_run(const char *op_type, int opset, ol_attr *attrs, size_t num_attrs,
                 ol_value *const *inputs, size_t num_inputs, ol_value **outputs,
                 size_t num_outputs);

/* The same for an operator of another domain (e.g. "com.microsoft"). */
ol_status tk_run_domain(const char *domain, const char *op_type, int opset, ol_attr *attrs, size_t num_attrs,
                        ol_value *const *inputs, size_t num_inputs, ol_value **outputs, size_t num_outputs);

/* Attribute builders (the arrays must outlive tk_run). */
ol_attr tk_attr_int(const char *name, int64_t v);
ol_attr tk_attr_float(const char *name, float v);
ol_attr tk_attr_ints(const char *name, int64_t *v, size_t n);
ol_attr tk_attr_string(const char *name, char *s);

/* The serialized bytes of the model in `text` (ol_free them; NULL after a
 * failed check). */
void *tk_serialized(const char *text, size_t *size);
/* The model of `text`, reloaded from its serialized bytes so that its weights
 * view a wire buffer the way a loaded file's do (NULL after a failed check). */
ol_model *tk_model_on_wire(const char *text);
/* The value of initializer `name` of m's graph (NULL: none). */
const ol_tensor *tk_initializer(const ol_model *m, const char *name);
/* Checks that m, loaded from bytes (size) and possibly holding weights in a
 * prepared layout, gives back exactly those bytes when serialized (whole and
 * piecewise) and prints the text of the untouched proto. */
void tk_check_gives_back_bytes(ol_model *m, const uint8_t *bytes, size_t size);

/* Checks used by the kernel tests. */
bool tk_shape_is(const ol_value *v, int rank, const int64_t *dims);
/* |got - want| <= tol * (1 + |want|) elementwise (prints the first miss). */
bool tk_near_f32(const ol_value *v, const float *want, int64_t n, float tol);
/* Paged caches a and b hold the same tokens, each decoding to the same
 * bits (K and V rows of at most 256 values), whatever their blocks. */
bool tk_paged_same_tokens(const ol_value *a, const ol_value *b);
/* Releases n values and clears the slots. */
void tk_release_all(ol_value **v, int n);

#endif
