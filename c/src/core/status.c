#include "status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define OL_ERROR_CAPACITY 1024

static _Thread_local char error_message[OL_ERROR_CAPACITY];

static const char *const status_names[OL_STATUS_COUNT] = {
    "OL_OK",          "OL_INVALID_ARGUMENT",    "OL_INVALID_MODEL",
    "OL_NOT_IMPLEMENTED", "OL_OUT_OF_MEMORY",   "OL_CANCELLED",
    "OL_FAILED_PRECONDITION", "OL_NOT_FOUND",   "OL_INTERNAL",
};

const char *ol_status_name(ol_status status) {
  if ((int)status < 0 || status >= OL_STATUS_COUNT) return "OL_UNKNOWN";
  return status_names[status];
}

const char *ol_last_error(void) { return error_message; }

const char *ol_version(void) { return OL_VERSION; }

void ol_clear_error(void) { error_message[0] = '\0'; }

ol_status ol_error(ol_status status, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(error_message, OL_ERROR_CAPACITY, fmt, ap);
  va_end(ap);
  return status;
}

ol_status ol_error_wrap(ol_status status, const char *fmt, ...) {
  char prefix[OL_ERROR_CAPACITY];
  char previous[OL_ERROR_CAPACITY];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(prefix, sizeof prefix, fmt, ap);
  va_end(ap);
  memcpy(previous, error_message, sizeof previous);
  size_t used = strlen(prefix);
  if (used > OL_ERROR_CAPACITY - 3) used = OL_ERROR_CAPACITY - 3;
  memcpy(error_message, prefix, used);
  memcpy(error_message + used, ": ", 2);
  size_t rest = strlen(previous);
  if (rest > OL_ERROR_CAPACITY - used - 3) rest = OL_ERROR_CAPACITY - used - 3;
  memcpy(error_message + used + 2, previous, rest);
  error_message[used + 2 + rest] = '\0';
  return status;
}
