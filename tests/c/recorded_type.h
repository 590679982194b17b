/* The type shape inference recorded for a value of a graph (its value_info),
 * as text, and a CHECK that compares it: shared by the inference tests. */
#ifndef OL_TESTS_RECORDED_TYPE_H
#define OL_TESTS_RECORDED_TYPE_H

#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "ir/model.h"
#include "model/infer_internal.h"

/* The recorded value_info type of name in graph g as text ("" if none). */
static inline const char *recorded_type(const ol_graph *g, const char *name, char *buf, size_t size) {
  buf[0] = 0;
  for (size_t i = 0; i < g->num_value_infos; i++)
    if (strcmp(g->value_infos[i].name, name) == 0) {
      ol_infer_type t;
      ol_infer_from_declared(&g->value_infos[i], &t);
      ol_infer_type_text(&t, buf, size);
    }
  return buf;
}

#define CHECK_RECORDED(g, name, expected)                                                               \
  do {                                                                                                  \
    char buf_[512];                                                                                     \
    const char *got_ = recorded_type(g, name, buf_, sizeof buf_);                                       \
    CHECK(strcmp(got_, expected) == 0);                                                                 \
    if (strcmp(got_, expected) != 0) fprintf(stderr, "  %s: got '%s', want '%s'\n", name, got_, expected); \
  } while (0)

#endif
