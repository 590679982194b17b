/* Shape functions of elementwise operators: Cast/CastLike, binary and
 * variadic operators with multidirectional broadcasting, comparisons and
 * logical operators (-> BOOL), IsNaN/IsInf, Where (unary operators use
 * ol_infer_like_input0). Integer data (shape arithmetic on Shape outputs) is
 * propagated through Cast, Add/Sub/Mul/Div, comparisons and Where. */
#include <string.h>

#include "ops/elementwise/elementwise.h"

/* ------------------------------------------------------------ data helpers */

static bool is_data_dtype(ol_dtype d) {
  return d == OL_DTYPE_INT64 || d == OL_DTYPE_INT32 || d == OL_DTYPE_BOOL;
}

/* The element of a's data at broadcast position i (a has 1 or n elements). */
static ol_dim data_at(const ol_infer_type *a, int i) { return a->data[a->data_count == 1 ? 0 : i]; }

/* Elementwise data of a binary operation when both sides carry data of
 * compatible lengths. op: '+', '-', '*', '/', '=', '<', '>', 'l' (<=), 'g' (>=). */
static void binary_data(const ol_infer_type *a, const ol_infer_type *b, char op, ol_infer_type *out) {
  if (a->data_count < 0 || b->data_count < 0 || out->rank > 1) return;
  int n = a->data_count > b->data_count ? a->data_count : b->data_count;
  if ((a->data_count != n && a->data_count != 1) || (b->data_count != n && b->data_count != 1)) return;
  if (out->rank == 1 && out->dims[0].is_value && out->dims[0].value != n) return;
  for (int i = 0; i < n; i++) {
    ol_dim x = data_at(a, i), y = data_at(b, i), r = ol_dim_unknown();
    bool compare = op == '=' || op == '<' || op == '>' || op == 'l' || op == 'g';
    if (x.is_value && y.is_value) {
      int64_t u = x.value, v = y.value, value = 0;
      bool ok = true;
      switch (op) {
        case '+': ok = ol_i64_add(u, v, &value); break;
        case '-': ok = ol_i64_sub(u, v, &value); break;
        case '*': ok = ol_i64_mul(u, v, &value); break;
        case '/':
          ok = v != 0 && !(u == INT64_MIN && v == -1);
          if (ok) value = u / v;
          break;
        case '=': value = u == v; break;
        case '<': value = u < v; break;
        case '>': value = u > v; break;
        case 'l': value = u <= v; break;
        case 'g': value = u >= v; break;
      }
      r = ok ? ol_dim_of(value) : ol_dim_unknown();
    } else if (compare && (x.param || y.param)) {
      /* a symbolic dimension is never negative: compare it with a negative number */
      bool sym_left = !x.is_value;
      ol_dim number = sym_left ? y : x;
      if (number.is_value && number.value < 0) {
        bool sym_greater = true; /* sym > number */
        switch (op) {
          case '=': r = ol_dim_of(0); break;
          case '<': r = ol_dim_of(sym_left ? !sym_greater : sym_greater); break;
          case '>': r = ol_dim_of(sym_left ? sym_greater : !sym_greater); break;
          case 'l': r = ol_dim_of(sym_left ? 0 : 1); break;
          case 'g': r = ol_dim_of(sym_left ? 1 : 0); break;
        }
      } else if (op == '=' && ol_dim_same(x, y)) {
        r = ol_dim_of(1);
      }
    } else if (op == '*' && ((x.is_value && x.value == 1) || (y.is_value && y.value == 1))) {
      r = x.is_value && x.value == 1 ? y : x;
    } else if ((op == '+' || op == '-') && y.is_value && y.value == 0) {
      r = x;
    } else if (op == '+' && x.is_value && x.value == 0) {
      r = y;
    }
    out->data[i] = r;
  }
  out->data_count = n;
}

/* ------------------------------------------------------------ rules */

/* IsNaN, IsInf: a BOOL of the input's shape. */
ol_status ol_infer_to_bool(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x || ctx->num_outputs < 1) return OL_OK;
  ol_infer_set_tensor(&ctx->outputs[0], OL_DTYPE_BOOL, x->rank, x->dims);
  return OL_OK;
}

static void keep_int_data(const ol_infer_type *x, ol_infer_type *out) {
  if (x->data_count >= 0 && is_data_dtype(x->dtype) && out->dtype != OL_DTYPE_BOOL && is_data_dtype(out->dtype)) {
    out->data_count = x->data_count;
    memcpy(out->data, x->data, sizeof x->data);
  }
}

ol_status ol_infer_cast(ol_infer_ctx *ctx) {
  const ol_attr *to = ol_node_attr(ctx->node, "to");
  if (!to || to->type != OL_ATTR_INT) return ol_infer_error(ctx, "required integer attribute 'to' is missing");
  if (!ol_dtype_valid((ol_dtype)to->i) || to->i == OL_DTYPE_UNDEFINED)
    return ol_infer_error(ctx, "attribute 'to' is not an element type (%lld)", (long long)to->i);
  if (ctx->num_outputs < 1) return OL_OK;
  const ol_infer_type *x = ol_infer_input(ctx, 0);
  if (!x) {
    ol_infer_set_tensor(&ctx->outputs[0], (ol_dtype)to->i, -1, NULL);
    return OL_OK;
  }
  ol_infer_set_tensor(&ctx->outputs[0], (ol_dtype)to->i, x->rank, x->dims);
  keep_int_data(x, &ctx->outputs[0]);
  return OL_OK;
}

ol_status ol_infer_cast_like(ol_infer_ctx *ctx) {
  const ol_infer_type *x = ol_infer_input(ctx, 0), *like = ol_infer_input(ctx, 1);
  if (!like || ctx->num_outputs < 1) return OL_OK;
  ol_infer_set_tensor(&ctx->outputs[0], like->dtype, x ? x->rank : -1, x ? x->dims : NULL);
  if (x) keep_int_data(x, &ctx->outputs[0]);
  return OL_OK;
}

/* Broadcast of inputs [first, num_inputs) into out's rank and dims; false
 * when some input's rank is unknown. */
static ol_status broadcast_inputs(ol_infer_ctx *ctx, size_t first, ol_infer_type *out, bool *shaped) {
  *shaped = true;
  int rank = 0;
  ol_dim dims[OL_MAX_RANK];
  for (size_t i = first; i < ctx->num_inputs; i++) {
    if (!ctx->node->inputs[i][0]) continue;
    const ol_infer_type *t = ol_infer_shaped(ctx, i);
    if (!t) {
      *shaped = false;
      continue;
    }
    OL_TRY(ol_infer_broadcast(ctx, rank, dims, t->rank, t->dims, &rank, dims));
  }
  if (*shaped) {
    out->rank = rank;
    for (int i = 0; i < rank; i++) out->dims[i] = dims[i];
  }
  return OL_OK;
}

static char data_op(const char *op_type) {
  static const struct { const char *name; char op; } ops[] = {
      {"Add", '+'}, {"Sub", '-'}, {"Mul", '*'}, {"Div", '/'}, {"Equal", '='}, {"Less", '<'},
      {"Greater", '>'}, {"LessOrEqual", 'l'}, {"GreaterOrEqual", 'g'},
  };
  for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++)
    if (strcmp(ops[i].name, op_type) == 0) return ops[i].op;
  return 0;
}

static bool returns_bool(const char *op_type) {
  static const char *const names[] = {"Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual",
                                      "And", "Or", "Xor"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
    if (strcmp(names[i], op_type) == 0) return true;
  return false;
}

/* Binary and variadic elementwise operators (Add ... Max, Sum). */
ol_status ol_infer_broadcasting(ol_infer_ctx *ctx) {
  if (ctx->num_outputs < 1) return OL_OK;
  ol_dtype dtype = OL_DTYPE_UNDEFINED;
  for (size_t i = 0; i < ctx->num_inputs && dtype == OL_DTYPE_UNDEFINED; i++) {
    const ol_infer_type *t = ol_infer_input(ctx, i);
    if (t) dtype = t->dtype;
    if (i == 0 && strcmp(ctx->node->op_type, "Pow") == 0 && !t) return OL_OK; /* base gives the type */
  }
  if (returns_bool(ctx->node->op_type)) dtype = OL_DTYPE_BOOL;
  if (dtype == OL_DTYPE_UNDEFINED) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, dtype, -1, NULL);
  bool shaped;
  OL_TRY(broadcast_inputs(ctx, 0, out, &shaped));
  char op = data_op(ctx->node->op_type);
  const ol_infer_type *a = ol_infer_input(ctx, 0), *b = ol_infer_input(ctx, 1);
  if (op && shaped && a && b && ctx->num_inputs == 2 && is_data_dtype(a->dtype) && a->dtype == b->dtype)
    binary_data(a, b, op, out);
  return OL_OK;
}

ol_status ol_infer_where(ol_infer_ctx *ctx) {
  const ol_infer_type *c = ol_infer_input(ctx, 0), *x = ol_infer_input(ctx, 1), *y = ol_infer_input(ctx, 2);
  if (ctx->num_outputs < 1 || (!x && !y)) return OL_OK;
  ol_infer_type *out = &ctx->outputs[0];
  ol_infer_set_tensor(out, x ? x->dtype : y->dtype, -1, NULL);
  bool shaped;
  OL_TRY(broadcast_inputs(ctx, 0, out, &shaped));
  if (!shaped || !c || !x || !y || out->rank > 1 || c->data_count < 0 || x->data_count < 0 || y->data_count < 0)
    return OL_OK;
  int n = out->rank == 0 ? 1 : (out->dims[0].is_value ? (int)out->dims[0].value : -1);
  if (n < 0 || n > OL_INFER_MAX_DATA) return OL_OK;
  const ol_infer_type *all[3] = {c, x, y};
  for (int k = 0; k < 3; k++)
    if (all[k]->data_count != 1 && all[k]->data_count != n) return OL_OK;
  for (int i = 0; i < n; i++) {
    ol_dim cond = data_at(c, i);
    out->data[i] = !cond.is_value ? ol_dim_unknown() : cond.value ? data_at(x, i) : data_at(y, i);
  }
  out->data_count = n;
  return OL_OK;
}

