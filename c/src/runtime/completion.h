#ifndef OL_RUNTIME_COMPLETION_H
#define OL_RUNTIME_COMPLETION_H
#include "core/alloc.h"
#include "core/status.h"

/* TaskCompletion: single use. A state run that publishes completes it. */
struct ol_completion {
  volatile int cancelled;
  volatile int completed;
  char reason[256];
};

#endif
