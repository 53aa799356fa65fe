#include "tools/gen/trace_generator.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "tools/gen/ctf_trace_writer.h"
#include "tools/gen/event_dropper.h"
#include "tools/gen/host_clock.h"
#include "tools/gen/simulator.h"
#include "tools/gen/truth_file.h"

namespace waitpath::gen {
namespace {

double SecondsSince(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

uint64_t CountEvents(const SimulationResult& sim) {
  uint64_t n = 0;
  for (const HostTrace& h : sim.hosts) n += h.records.size();
  return n;
}

// Tunes the loop period of the scale workload with a short pilot run so that the trace
// gets close to the requested event rate.
void BuildScaleWorkload(Scenario& s) {
  const double tasks = static_cast<double>(s.scale_hosts) * s.scale_tasks_per_host;
  Ns cycle = static_cast<Ns>(tasks * 12.0 / s.scale_event_rate * 1e9);
  Scenario pilot = s;
  pilot.duration = std::min<Ns>(s.duration, 200 * kMs);
  ScaleWorkloadBuilder::Build(pilot, cycle);
  SimulationResult r = Simulator(pilot).Run();
  double rate = static_cast<double>(CountEvents(r)) / (static_cast<double>(pilot.duration) / 1e9);
  if (rate > 0) cycle = static_cast<Ns>(static_cast<double>(cycle) * rate / s.scale_event_rate);
  ScaleWorkloadBuilder::Build(s, cycle);
}

}  // namespace

GenerationSummary TraceGenerator::Generate(Scenario scenario, const std::string& out_dir) {
  namespace fs = std::filesystem;
  GenerationSummary summary;
  auto t0 = std::chrono::steady_clock::now();
  if (scenario.is_scale) BuildScaleWorkload(scenario);
  if (scenario.hosts.empty()) throw std::runtime_error("scenario: no hosts");
  SimulationResult sim = Simulator(scenario).Run();
  summary.simulate_seconds = SecondsSince(t0);

  auto t1 = std::chrono::steady_clock::now();
  fs::create_directories(out_dir);
  std::vector<HostClock> clocks;
  std::vector<std::vector<DroppedRange>> dropped(scenario.hosts.size());
  EventDropper dropper(scenario.loss, scenario.seed);
  for (size_t h = 0; h < scenario.hosts.size(); ++h) {
    const HostSpec& spec = scenario.hosts[h];
    clocks.emplace_back(scenario.epoch_ns, spec.clock_offset, spec.drift_ppm);
    CtfHostInput in;
    in.hostname = spec.name;
    in.host_index = static_cast<int>(h);
    in.cpus = spec.cpus;
    in.clock = clocks.back();
    in.uuid_seed = scenario.seed;
    in.sim = &sim;
    in.per_cpu.resize(static_cast<size_t>(spec.cpus));
    std::vector<TraceRecord>& records = sim.hosts[h].records;
    // Span events go to the host's UST trace, as LTTng records them in the same session.
    CtfHostInput ust;
    ust.hostname = spec.name;
    ust.host_index = static_cast<int>(h);
    ust.cpus = spec.cpus;
    ust.clock = clocks.back();
    ust.uuid_seed = scenario.seed;
    ust.sim = &sim;
    ust.ust = true;
    ust.per_cpu.resize(static_cast<size_t>(spec.cpus));
    ust.gaps.resize(static_cast<size_t>(spec.cpus));
    bool has_spans = false;
    for (const TraceRecord& r : records) {
      const bool span = r.kind == EventKind::kSpanBegin || r.kind == EventKind::kSpanEnd ||
                        r.kind == EventKind::kSpanHandoff;
      (span ? ust.per_cpu : in.per_cpu)[r.cpu].push_back(r);
      has_spans |= span;
    }
    records.clear();
    records.shrink_to_fit();
    for (auto& cpu : ust.per_cpu) {
      std::stable_sort(cpu.begin(), cpu.end(),
                       [](const TraceRecord& x, const TraceRecord& y) { return x.t < y.t; });
    }
    for (auto& cpu : in.per_cpu) {
      // Records are appended in simulation order; interrupt bodies are written ahead of
      // time, so sort, keeping emission order among equal timestamps.
      std::stable_sort(cpu.begin(), cpu.end(),
                       [](const TraceRecord& x, const TraceRecord& y) { return x.t < y.t; });
    }
    dropped[h] = dropper.Apply(spec.name, in.per_cpu, in.gaps);
    HostSummary hs;
    hs.host = spec.name;
    for (const auto& cpu : in.per_cpu) hs.events += cpu.size();
    for (const DroppedRange& d : dropped[h]) hs.discarded += d.count;
    summary.total_events += hs.events;
    summary.hosts.push_back(hs);
    fs::path dir = fs::path(out_dir) / spec.name;
    fs::remove_all(dir);
    CtfTraceWriter::Write(in, dir.string());
    fs::path ust_dir = fs::path(out_dir) / (spec.name + "-ust");
    fs::remove_all(ust_dir);
    if (has_spans) CtfTraceWriter::Write(ust, ust_dir.string());
  }
  summary.write_seconds = SecondsSince(t1);

  auto t2 = std::chrono::steady_clock::now();
  nlohmann::json truth = TruthFile::Build(scenario, sim, clocks, summary.hosts, dropped);
  fs::path truth_path = fs::path(out_dir) / "truth.json";
  std::ofstream out(truth_path);
  out << truth.dump(1) << "\n";
  if (!out) throw std::runtime_error("cannot write " + truth_path.string());
  summary.truth_seconds = SecondsSince(t2);
  return summary;
}

}  // namespace waitpath::gen
