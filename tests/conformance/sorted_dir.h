/* A directory's entries sorted by name (dot files left out), for the
 * conformance tools that walk the backend test data in a stable order.
 * Header-only: every .c file here is a tool of its own. */
#ifndef OL_TESTS_SORTED_DIR_H
#define OL_TESTS_SORTED_DIR_H
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

static int sorted_dir_by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names (free each and the array), *count of them; NULL when dir cannot
 * be opened. Stops early (a shorter list) if memory runs out. */
static char **sorted_dir_entries(const char *dir, size_t *count) {
  *count = 0;
  DIR *d = opendir(dir);
  if (!d) return NULL;
  char **names = NULL;
  size_t n = 0, cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    if (e->d_name[0] == '.') continue;
    if (n == cap) {
      cap = cap ? cap * 2 : 64;
      char **grown = realloc(names, cap * sizeof *names);
      if (!grown) break;
      names = grown;
    }
    size_t len = strlen(e->d_name) + 1;
    if (!(names[n] = malloc(len))) break;
    memcpy(names[n++], e->d_name, len);
  }
  closedir(d);
  if (n) qsort(names, n, sizeof *names, sorted_dir_by_name);
  if (!names) names = malloc(sizeof *names); /* an empty directory: still a list */
  *count = n;
  return names;
}
#endif
