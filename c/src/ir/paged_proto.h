/* PagedCacheProto <-> paged cache values (quant/paged.h), without decoding
 * a page: dense pages stay tensors (raw_data viewed or moved, typed
 * float_data / 16-bit int32_data packed into owned storage), encoded pages
 * stay EncodedValueProto messages. Also the cache's logical type
 * (onnx_light.PagedKVCache, version 1) that shape inference records.
 *
 * Parsing checks the message (both payloads present, start and length
 * given, no external data) and then the whole cache with
 * ol_paged_cache_validate; every error names the cache and the block. */
#ifndef OL_IR_PAGED_PROTO_H
#define OL_IR_PAGED_PROTO_H
#include "ir/model.h"

/* A cache whose payloads view proto in place (owner: the model holding
 * the message, retained by every payload that views it). proto is not
 * modified. */
ol_status ol_paged_cache_from_model_proto(const Onnx__PagedCacheProto *proto, ol_proto_owner *owner,
                                          ol_value **out);

/* A cache taking its payloads out of proto (an unpacked message owned by
 * the caller): raw_data buffers and encoded messages move into the value
 * (no copy), typed fields are packed. The caller frees what is left of
 * proto, also on failure. */
ol_status ol_paged_cache_from_proto_take(Onnx__PagedCacheProto *proto, ol_value **out);

/* The logical cache type: a struct_type with one field `blocks`, a sequence
 * of {start: INT64 [], length: INT64 [], key: FLOAT [1, 1, ?, ?], value:
 * FLOAT [1, 1, ?, ?]}. A static message: never free or modify it. */
const Onnx__TypeProto *ol_paged_cache_type(void);

#endif
