#include "runtime/context.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

ol_status ol_context_create(const ol_context_options *options, ol_context **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_context_create: out is NULL");
  *out = ol_xcalloc(1, sizeof **out);
  if (!*out) return OL_OUT_OF_MEMORY;
  if (options) {
    (*out)->events_enabled = options->events_enabled != 0;
    (*out)->allocator = options->allocator;
  }
  return OL_OK;
}

void ol_context_destroy(ol_context *c) {
  if (!c) return;
  free(c->events);
  free(c);
}

size_t ol_context_event_count(const ol_context *c) { return c ? c->num_events : 0; }

const ol_runtime_event *ol_context_event(const ol_context *c, size_t i) {
  return c && i < c->num_events ? &c->events[i] : NULL;
}

void ol_context_clear_events(ol_context *c) {
  if (c) c->num_events = 0;
}

/* A new event for node, the allocator's figures filled in (NULL: out of memory). */
static ol_runtime_event *new_event(ol_context *c, const ol_node *node, ol_event_action action, ol_allocator *allocator) {
  if (c->num_events == c->cap_events) {
    size_t cap = c->cap_events ? c->cap_events * 2 : 64;
    ol_runtime_event *grown = realloc(c->events, cap * sizeof *grown);
    if (!grown) return NULL;
    c->events = grown;
    c->cap_events = cap;
  }
  ol_allocator_stats stats;
  ol_allocator_get_stats(allocator, &stats);
  ol_runtime_event *e = &c->events[c->num_events++];
  memset(e, 0, sizeof *e);
  e->action = action;
  snprintf(e->node_name, sizeof e->node_name, "%s", node->name);
  snprintf(e->op_type, sizeof e->op_type, "%s", node->op_type);
  e->allocated_bytes = stats.live_bytes;
  e->peak_bytes = stats.peak_bytes;
  return e;
}

ol_status ol_context_record_storage(ol_context *c, const ol_node *node, const ol_storage_counts *counts,
                                    ol_allocator *allocator) {
  if (!c || !c->events_enabled) return OL_OK;
  ol_runtime_event *e = new_event(c, node, OL_EVENT_PERSISTENT_STORAGE, allocator);
  if (!e) return ol_error(OL_OUT_OF_MEMORY, "out of memory recording a runtime event");
  e->storage_allocations = counts->allocations;
  e->storage_allocated_bytes = counts->allocated_bytes;
  e->storage_prefix_copied_bytes = counts->prefix_copied_bytes;
  e->storage_append_copied_bytes = counts->append_copied_bytes;
  e->storage_reuse_count = counts->reuse_count;
  return OL_OK;
}

ol_status ol_context_record_paged(ol_context *c, const ol_node *node, const ol_paged_stats *stats,
                                  ol_allocator *allocator) {
  if (!c || !c->events_enabled) return OL_OK;
  ol_runtime_event *e = new_event(c, node, OL_EVENT_PAGED_ATTENTION, allocator);
  if (!e) return ol_error(OL_OUT_OF_MEMORY, "out of memory recording a runtime event");
  e->paged_copied_bytes = stats->copied_bytes;
  e->paged_dequantized_bytes = stats->dequantized_bytes;
  e->paged_peak_workspace_bytes = stats->peak_workspace_bytes;
  e->paged_validated_pages = stats->validated_pages;
  return OL_OK;
}
