/* Errors are values: a status code plus a thread-local message. */
#ifndef OL_CORE_STATUS_H
#define OL_CORE_STATUS_H
#include "onnxlight.h"

#if defined(__GNUC__)
#define OL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define OL_PRINTF(a, b)
#endif

/* Records the message and returns status, so callers can `return ol_error(...)`. */
ol_status ol_error(ol_status status, const char *fmt, ...) OL_PRINTF(2, 3);
/* Prefixes the current message with context ("node 'x' (Add): ..."). */
ol_status ol_error_wrap(ol_status status, const char *fmt, ...) OL_PRINTF(2, 3);
void ol_clear_error(void);

#define OL_TRY(expr)                  \
  do {                                \
    ol_status ol_try_s_ = (expr);     \
    if (ol_try_s_ != OL_OK) return ol_try_s_; \
  } while (0)

#endif
