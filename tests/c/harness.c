#include "harness.h"

#include <string.h>

int ol_test_failures = 0;
int ol_test_checks = 0;

int ol_test_main(const ol_test_case *cases, int argc, char **argv) {
  int passed = 0, failed = 0;
  for (const ol_test_case *c = cases; c->name; c++) {
    if (argc > 1 && strstr(c->name, argv[1]) == NULL) continue;
    int before = ol_test_failures;
    c->fn();
    if (ol_test_failures == before) {
      passed++;
    } else {
      failed++;
      fprintf(stderr, "FAIL %s\n", c->name);
    }
  }
  printf("%d passed, %d failed\n", passed, failed);
  return failed ? 1 : 0;
}
