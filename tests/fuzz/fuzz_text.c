/* libFuzzer: ONNX text syntax -> parse -> print -> parse the printed text ->
 * print again: both prints must agree (the printer writes what the parser
 * reads back to the same model). Also checks and infers shapes. */
#include <stdlib.h>
#include <string.h>

#include "onnxlight.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *text = malloc(size + 1);
  if (!text) return 0;
  memcpy(text, data, size);
  text[size] = 0;
  ol_model *model = NULL;
  ol_status s = ol_model_parse_text(text, &model);
  free(text);
  if (s != OL_OK) return 0;
  char *printed = NULL, *again = NULL;
  ol_model *reparsed = NULL, *inferred = NULL;
  if (ol_model_print_text(model, &printed) == OL_OK) {
    if (ol_model_parse_text(printed, &reparsed) != OL_OK) __builtin_trap(); /* the printer wrote what the parser refuses */
    if (ol_model_print_text(reparsed, &again) == OL_OK && strcmp(printed, again) != 0)
      __builtin_trap(); /* print(parse(print(m))) != print(m) */
  }
  if (ol_model_check(model) == OL_OK && ol_model_infer_shapes(model, &inferred) == OL_OK) ol_model_destroy(inferred);
  ol_free(printed);
  ol_free(again);
  ol_model_destroy(reparsed);
  ol_model_destroy(model);
  return 0;
}
