// Writes replay records through the waitpath_replay:event lttng-ust tracepoint.
#pragma once

#include <string>

#include "tools/replay/record_builder.h"

namespace waitpath {

class UstEmitter {
 public:
  // `host` is the original hostname, written into every record (informational: the reader
  // names the host after the trace's environment, i.e. the session daemon's hostname).
  explicit UstEmitter(std::string host) : host_(std::move(host)) {}

  // Whether any tracing session enables the tracepoint (a session daemon registered us and
  // `lttng enable-event -u waitpath_replay:event` was given); emitting is a no-op otherwise.
  static bool Enabled();

  void Emit(const ReplayRecord& record);

 private:
  std::string host_;
};

}  // namespace waitpath
