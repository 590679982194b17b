/* libFuzzer: model bytes -> load -> print, infer shapes, check -> session
 * (budget allocator, one thread) -> one run with generated feeds. */
#include <stdlib.h>

#include "fuzz_util.h"

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  ol_set_num_threads(1);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  ol_model *model = NULL;
  if (ol_model_load(data, size, NULL, &model) != OL_OK) return 0;
  char *text = NULL;
  if (ol_model_print_text(model, &text) == OL_OK) ol_free(text);
  ol_model *inferred = NULL;
  if (ol_model_infer_shapes(model, &inferred) == OL_OK) ol_model_destroy(inferred);
  ol_session_options options;
  ol_session_options_init(&options);
  options.allocator = fuzz_allocator();
  options.intra_op_num_threads = 1;
  ol_session *session = NULL;
  if (ol_model_check(model) == OL_OK && ol_session_create(model, &options, &session) == OL_OK) {
    fuzz_rng rng = fuzz_rng_from(data, size);
    fuzz_run_session(session, &rng);
  }
  ol_session_destroy(session);
  ol_model_destroy(model);
  return 0;
}
