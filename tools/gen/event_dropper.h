// Optional data loss: drops whole runs of events on one CPU, the way a full LTTng ring
// buffer loses sub-buffers, and remembers what it dropped for the truth file.
#pragma once

#include <vector>

#include "tools/gen/ctf_trace_writer.h"
#include "tools/gen/scenario.h"

namespace waitpath::gen {

struct DroppedRange {
  int cpu = 0;
  uint64_t count = 0;
  Ns first = 0;  // true times of the first and last dropped events
  Ns last = 0;
};

class EventDropper {
 public:
  EventDropper(const LossSpec& loss, uint64_t seed) : loss_(loss), seed_(seed) {}

  // Removes the dropped records from `per_cpu` of host `host_name`, fills `gaps`, and
  // returns what was dropped. The first and last runs of a CPU are always kept, so every
  // gap lies between two packets.
  std::vector<DroppedRange> Apply(const std::string& host_name,
                                  std::vector<std::vector<TraceRecord>>& per_cpu,
                                  std::vector<std::vector<DiscardGap>>& gaps) const;

 private:
  LossSpec loss_;
  uint64_t seed_;
};

}  // namespace waitpath::gen
