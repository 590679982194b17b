/* Cancellation: a flag checked between nodes (and between tokens). */
#include "runtime/completion.h"

#include <stdlib.h>
#include <stdio.h>
#include <string.h>

ol_status ol_completion_create(ol_completion **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_completion_create: out is NULL");
  *out = ol_xcalloc(1, sizeof **out);
  return *out ? OL_OK : OL_OUT_OF_MEMORY;
}

void ol_completion_destroy(ol_completion *c) { free(c); }

ol_status ol_completion_cancel(ol_completion *c, const char *reason) {
  if (!c) return ol_error(OL_INVALID_ARGUMENT, "ol_completion_cancel: completion is NULL");
  if (c->completed)
    return ol_error(OL_FAILED_PRECONDITION, "the completion already completed: its run published successfully");
  snprintf(c->reason, sizeof c->reason, "%s", reason ? reason : "cancelled");
  c->cancelled = 1;
  return OL_OK;
}

int ol_completion_is_cancelled(const ol_completion *c) { return c && c->cancelled; }
