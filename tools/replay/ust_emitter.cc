#include "tools/replay/ust_emitter.h"

// The probes are defined (LTTNG_UST_TRACEPOINT_DEFINE) in replay_tp.c; here only the call site.
#include "tools/replay/replay_tp.h"

namespace waitpath {

bool UstEmitter::Enabled() {
  return lttng_ust_tracepoint_enabled(waitpath_replay, event);
}

void UstEmitter::Emit(const ReplayRecord& record) {
  lttng_ust_tracepoint(waitpath_replay, event, &record.fields, record.c_str, record.d_str,
                       host_.c_str());
}

}  // namespace waitpath
