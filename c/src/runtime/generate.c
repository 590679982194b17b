/* ol_generate: the whole token loop in one call, as a loop over the step
 * API (runtime/generator.c holds every rule of generation). */
#include <string.h>

#include "core/status.h"
#include "onnxlight.h"

/* Default number of new tokens when the caller does not set one. */
#define OL_GENERATE_DEFAULT_MAX_NEW_TOKENS 16

void ol_generate_options_init(ol_generate_options *options) {
  if (!options) return;
  memset(options, 0, sizeof *options);
  options->max_new_tokens = OL_GENERATE_DEFAULT_MAX_NEW_TOKENS;
  options->eos_token_id = -1;
  options->pad_token_id = -1;
  /* NULL names: "input_ids", "logits", "attention_mask", "position_ids" */
}

ol_status ol_generate(ol_model *model, ol_context *context, const char *const *names, ol_value *const *feeds,
                      size_t n_feeds, const ol_generate_options *options,
                      const ol_session_options *session_options, ol_completion *completion, ol_value **out) {
  if (!out) return ol_error(OL_INVALID_ARGUMENT, "ol_generate: out is NULL");
  *out = NULL;
  ol_generator *g = NULL;
  OL_TRY(ol_generator_create(model, NULL, context, names, feeds, n_feeds, options, session_options, completion, &g));
  ol_status st = OL_OK;
  while (st == OL_OK && !ol_generator_done(g)) st = ol_generator_step(g, NULL);
  if (st == OL_OK) st = ol_generator_tokens(g, out);
  ol_generator_destroy(g);
  return st;
}
