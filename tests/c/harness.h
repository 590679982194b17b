/* A tiny test harness: CHECK records failures, the runner prints a summary
 * line "N passed, M failed" and exits nonzero on failure. */
#ifndef OL_TEST_HARNESS_H
#define OL_TEST_HARNESS_H
#include <stdio.h>

extern int ol_test_failures;
extern int ol_test_checks;

#define CHECK(cond)                                                            \
  do {                                                                         \
    ol_test_checks++;                                                          \
    if (!(cond)) {                                                             \
      ol_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
    }                                                                          \
  } while (0)

#define CHECK_OK(expr)                                                         \
  do {                                                                         \
    ol_status check_s_ = (expr);                                               \
    ol_test_checks++;                                                          \
    if (check_s_ != OL_OK) {                                                   \
      ol_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s returned %s: %s\n", __FILE__, __LINE__, #expr, \
              ol_status_name(check_s_), ol_last_error());                      \
    }                                                                          \
  } while (0)

#define CHECK_STATUS(expr, expected)                                           \
  do {                                                                         \
    ol_status check_s_ = (expr);                                               \
    ol_test_checks++;                                                          \
    if (check_s_ != (expected)) {                                              \
      ol_test_failures++;                                                      \
      fprintf(stderr, "%s:%d: %s returned %s (want %s): %s\n", __FILE__, __LINE__, \
              #expr, ol_status_name(check_s_), ol_status_name(expected),       \
              ol_last_error());                                                \
    }                                                                          \
  } while (0)

typedef void (*ol_test_fn)(void);
typedef struct ol_test_case {
  const char *name;
  ol_test_fn fn;
} ol_test_case;

int ol_test_main(const ol_test_case *cases, int argc, char **argv);
#define OL_TEST_MAIN(...)                                        \
  int main(int argc, char **argv) {                              \
    static const ol_test_case cases[] = {__VA_ARGS__, {0, 0}};   \
    return ol_test_main(cases, argc, argv);                      \
  }
#define TEST(fn) {#fn, fn}

#endif
