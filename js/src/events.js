// Runtime events of an ol_context (c/include/onnxlight.h, "contexts and
// events") as plain JS objects: PersistentValueState.events() and
// InferenceSession.events().

const EVENT_KINDS = { 1: 'persistent_storage', 2: 'paged_attention' };
const EVENT_ACTIONS = { 1: 'persistentStorage', 2: 'pagedAttention' };

/**
 * The events of an ol_context as plain objects: every event has kind
 * ('persistent_storage' | 'paged_attention'), node, opType and the
 * allocator's allocatedBytes / peakBytes (plus action and nodeName, the older
 * names); storage events the storage* counters, paged-attention events
 * copiedBytes (payload bytes of the appended pages), dequantizedBytes,
 * peakWorkspaceBytes and validatedPages.
 */
export function readEvents(runtime, context) {
  const m = runtime.m;
  const count = m._olw_context_event_count(context);
  return runtime.scratch(96 + 8, (out) => {
    const names = out + 96;
    const events = [];
    for (let i = 0; i < count; i++) {
      runtime.check(m._olw_context_event(context, i, out, names));
      const view = runtime.view();
      const at = (k) => view.getFloat64(out + 8 * k, true);
      const node = runtime.string(runtime.u32(names));
      const common = {
        kind: EVENT_KINDS[at(0)] ?? at(0),
        action: EVENT_ACTIONS[at(0)] ?? at(0),
        node,
        nodeName: node,
        opType: runtime.string(runtime.u32(names + 4)),
        allocatedBytes: at(6),
        peakBytes: at(7),
      };
      events.push(at(0) === 2
        ? { ...common, copiedBytes: at(8), dequantizedBytes: at(9), peakWorkspaceBytes: at(10), validatedPages: at(11) }
        : {
          ...common,
          storageAllocations: at(1),
          storageAllocatedBytes: at(2),
          storagePrefixCopiedBytes: at(3),
          storageAppendCopiedBytes: at(4),
          storageReuseCount: at(5),
        });
    }
    return events;
  });
}
