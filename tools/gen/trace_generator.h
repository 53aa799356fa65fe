// The whole pipeline: simulate the scenario, write one CTF trace per host, write truth.json.
#pragma once

#include <string>
#include <vector>

#include "tools/gen/scenario.h"

namespace waitpath::gen {

struct HostSummary {
  std::string host;
  uint64_t events = 0;     // written to the trace
  uint64_t discarded = 0;  // dropped by the loss option
};

struct GenerationSummary {
  std::vector<HostSummary> hosts;
  uint64_t total_events = 0;
  double simulate_seconds = 0;
  double write_seconds = 0;
  double truth_seconds = 0;
};

class TraceGenerator {
 public:
  // Writes out_dir/<hostname>/ (CTF) for every host and out_dir/truth.json.
  static GenerationSummary Generate(Scenario scenario, const std::string& out_dir);
};

}  // namespace waitpath::gen
