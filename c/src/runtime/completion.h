#ifndef OL_RUNTIME_COMPLETION_H
#define OL_RUNTIME_COMPLETION_H
#include "core/alloc.h"
#include "core/status.h"

struct ol_completion {
  volatile int cancelled;
  char reason[256];
};

#endif
