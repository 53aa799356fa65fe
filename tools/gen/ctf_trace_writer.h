// Writes one host's records as a real CTF trace directory in the LTTng kernel layout, by
// running a babeltrace2 graph: our source component -> sink.ctf.fs.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tools/gen/host_clock.h"
#include "tools/gen/simulator.h"

namespace waitpath::gen {

struct DiscardGap {
  size_t before = 0;   // index, in the CPU's kept records, of the first record after the gap
  uint64_t count = 0;  // events lost in the gap
};

struct CtfHostInput {
  std::string hostname;
  int host_index = 0;
  int cpus = 1;
  HostClock clock{0, 0, 0};
  uint64_t uuid_seed = 0;
  const SimulationResult* sim = nullptr;
  std::vector<std::vector<TraceRecord>> per_cpu;  // kept records, sorted by time
  std::vector<std::vector<DiscardGap>> gaps;      // per CPU, by increasing `before`
  size_t packet_events = 4096;                    // events per packet (LTTng: per sub-buffer)
  // The host's LTTng-UST trace (application spans) instead of its kernel trace: same host
  // name and clock, domain "ust", the vtid/vpid contexts.
  bool ust = false;
};

class CtfTraceWriter {
 public:
  // Writes the trace into `dir` (created). Throws std::runtime_error with babeltrace2's
  // error causes summarized on failure.
  static void Write(const CtfHostInput& input, const std::string& dir);
};

}  // namespace waitpath::gen
