/* Contexts: the event log shared by runs made with the same context. */
#ifndef OL_RUNTIME_CONTEXT_H
#define OL_RUNTIME_CONTEXT_H
#include "core/alloc.h"
#include "ops/kernel.h"

struct ol_context {
  bool events_enabled;
  ol_allocator *allocator;
  ol_runtime_event *events;
  size_t num_events, cap_events;
};

/* Appends a storage event for node (no-op when events are off). */
/* Records an OL_EVENT_PAGED_ATTENTION event (no-op when events are off). */
ol_status ol_context_record_paged(ol_context *context, const ol_node *node, const ol_paged_stats *stats,
                                  ol_allocator *allocator);
ol_status ol_context_record_storage(ol_context *context, const ol_node *node,
                                    const ol_storage_counts *counts, ol_allocator *allocator);

#endif
