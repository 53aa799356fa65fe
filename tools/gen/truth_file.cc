#include "tools/gen/truth_file.h"

#include <algorithm>

#include "tools/gen/active_path_truth.h"

namespace waitpath::gen {
namespace {

nlohmann::json States(const LeafVector& v, bool all_keys) {
  nlohmann::json out = nlohmann::json::object();
  for (size_t i = 0; i < kLeafCount; ++i) {
    if (all_keys || v[i] != 0) out[std::string(kLeafNames[i])] = v[i];
  }
  return out;
}

}  // namespace

nlohmann::json TruthFile::Build(const Scenario& scenario, const SimulationResult& sim,
                                const std::vector<HostClock>& clocks,
                                const std::vector<HostSummary>& hosts,
                                const std::vector<std::vector<DroppedRange>>& dropped) {
  using nlohmann::json;
  json out;
  out["scenario"] = scenario.name;
  out["seed"] = scenario.seed;
  out["reference_host"] = scenario.hosts.front().name;
  out["epoch_ns"] = scenario.epoch_ns;
  out["duration_ns"] = scenario.duration;
  if (scenario.truth_retention > 0) out["retention_ns"] = scenario.truth_retention;
  json jclocks = json::array();
  for (size_t h = 0; h < scenario.hosts.size(); ++h) {
    jclocks.push_back({{"host", scenario.hosts[h].name},
                       {"slope", clocks[h].Slope()},
                       {"offset_ns", clocks[h].OffsetNs()},
                       {"host_offset_ns", clocks[h].offset()},
                       {"drift_ppm", clocks[h].drift_ppm()}});
  }
  out["clocks"] = jclocks;
  json jhosts = json::array();
  for (size_t h = 0; h < scenario.hosts.size(); ++h) {
    json lost = json::array();
    for (const DroppedRange& d : dropped[h]) {
      lost.push_back({{"cpu", d.cpu},
                      {"count", d.count},
                      {"first_ns", clocks[h].ReferenceNs(d.first)},
                      {"last_ns", clocks[h].ReferenceNs(d.last)},
                      {"first_host_ns", clocks[h].HostNs(d.first)},
                      {"last_host_ns", clocks[h].HostNs(d.last)}});
    }
    jhosts.push_back({{"host", hosts[h].host},
                      {"cpus", scenario.hosts[h].cpus},
                      {"events", hosts[h].events},
                      {"discarded", hosts[h].discarded},
                      {"dropped", lost}});
  }
  out["hosts"] = jhosts;

  ActivePathTruth truth(sim.tasks, sim.timelines, scenario.truth_retention);
  json jtasks = json::array();
  for (size_t i = 0; i < sim.tasks.size(); ++i) {
    const TaskInfo& t = sim.tasks[i];
    const TaskTimeline& tl = sim.timelines[i];
    if (!t.watched || tl.segments().empty()) continue;
    const Ns a = tl.start();
    const Ns b = std::min(tl.end(), sim.end);
    PathBreakdown bd = truth.Compute(static_cast<int32_t>(i), a, b);
    std::vector<std::pair<int32_t, Ns>> order;
    for (const auto& [task, v] : bd.by_task) {
      Ns sum = 0;
      for (Ns x : v) sum += x;
      order.push_back({task, sum});
    }
    std::sort(order.begin(), order.end(), [&](const auto& x, const auto& y) {
      if (x.second != y.second) return x.second > y.second;
      return x.first < y.first;
    });
    json by_task = json::array();
    for (const auto& [task, ns] : order) {
      const TaskInfo& o = sim.tasks[static_cast<size_t>(task)];
      by_task.push_back({{"host", scenario.hosts[static_cast<size_t>(o.host)].name},
                         {"tid", o.tid},
                         {"comm", o.comm},
                         {"name", o.name},
                         {"ns", ns},
                         {"states", States(bd.by_task.at(task), false)}});
    }
    const HostClock& ref = clocks.front();
    jtasks.push_back({{"host", scenario.hosts[static_cast<size_t>(t.host)].name},
                      {"name", t.name},
                      {"tid", t.tid},
                      {"pid", t.pid},
                      {"comm", t.comm},
                      {"start_ns", ref.ReferenceNs(a)},
                      {"end_ns", ref.ReferenceNs(b)},
                      {"breakdown_ns", States(bd.total, true)},
                      {"by_task", by_task}});
  }
  out["tasks"] = jtasks;
  return out;
}

}  // namespace waitpath::gen
