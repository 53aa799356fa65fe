// Serializes the ground truth (clocks, hosts, per-task active-path breakdowns) as JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <vector>

#include "tools/gen/event_dropper.h"
#include "tools/gen/host_clock.h"
#include "tools/gen/scenario.h"
#include "tools/gen/simulator.h"
#include "tools/gen/trace_generator.h"

namespace waitpath::gen {

class TruthFile {
 public:
  static nlohmann::json Build(const Scenario& scenario, const SimulationResult& sim,
                              const std::vector<HostClock>& clocks,
                              const std::vector<HostSummary>& hosts,
                              const std::vector<std::vector<DroppedRange>>& dropped);
};

}  // namespace waitpath::gen
