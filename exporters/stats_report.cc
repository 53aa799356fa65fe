#include "exporters/stats_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "model/dialect.h"

namespace waitpath {
namespace {

// Streams name their CPU in packet contexts; a dialect without that still shows it per event.
size_t CpuCount(const HostStats& s) {
  return std::max<size_t>(s.reader.cpus, s.events_by_cpu.size());
}

}  // namespace

std::optional<uint64_t> StatsValue(const HostStats& s, QualityCounter counter) {
  switch (counter) {
    case QualityCounter::kEvents:
      return s.reader.events;
    case QualityCounter::kUnknown:
      return s.reader.unknown;
    case QualityCounter::kDiscarded:
      // Packet counters and discarded-events messages are the same information; the reader's
      // total is authoritative when the per-CPU reports carry no count.
      return s.reader.discarded;
    case QualityCounter::kRegressions:
      return s.reader.regressions;
    case QualityCounter::kInferredSwitches:
      return s.inferred_switches;
    case QualityCounter::kDamaged:
      return s.reader.damaged;
    default:
      return std::nullopt;  // not a figure of reading alone
  }
}

void WriteStatsText(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats, const TimeFormat& time_format) {
  for (size_t i = 0; i < stats.size(); ++i) {
    const HostStats& s = stats[i];
    fmt::print(out, "host {}\n", s.host);
    for (size_t t = 0; t < hosts[i].trace_dirs.size(); ++t) {
      fmt::print(out, "  {:<20} {}\n", "trace", hosts[i].trace_dirs[t]);
      if (t < hosts[i].envs.size())
        fmt::print(out, "  {:<20} {}\n", "format", hosts[i].envs[t].FormatLine());
    }
    fmt::print(out, "  {:<20} {}\n", "dialect", DialectName(s.reader.dialect));
    fmt::print(out, "  {:<20} {}\n", "cpus", CpuCount(s));
    const double span = s.reader.events ? (s.reader.last_ns - s.reader.first_ns) / 1e9 : 0.0;
    fmt::print(out, "  {:<20} {} .. {} ({:.3f} s)\n", "time",
               FormatTime(s.reader.first_ns, time_format),
               FormatTime(s.reader.last_ns, time_format), span);
    // The data-quality counters, one row each, in the table's order.
    for (const QualityCounterInfo& c : kQualityCounters) {
      if (!c.in_stats()) continue;
      fmt::print(out, "  {:<20} {}", c.stats_key, *StatsValue(s, c.id));
      if (!c.unit.empty()) fmt::print(out, " {}", c.unit);
      if (c.id == QualityCounter::kDiscarded && !s.discarded_by_cpu.empty()) {
        out << " (";
        bool first = true;
        for (const auto& [cpu, n] : s.discarded_by_cpu) {
          fmt::print(out, "{}cpu{}: {}", first ? "" : ", ", cpu, n);
          first = false;
        }
        out << ")";
      }
      out << "\n";
    }
    for (int k = 0; k < kEventKindCount; ++k) {
      if (s.by_kind[k] && static_cast<EventKind>(k) != EventKind::kLost) {
        fmt::print(out, "    {:<18} {}\n", EventKindName(static_cast<EventKind>(k)), s.by_kind[k]);
      }
    }
    if (!s.analysable() && s.reader.events > 0) {
      fmt::print(out,
                 "  warning: no scheduler switch events: nothing to analyse on this host"
                 " (not a kernel trace, or sched_switch was not enabled)\n");
    }
    if (!s.error.empty()) fmt::print(out, "  error: {}\n", s.error);
  }
}

void WriteStatsJson(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats) {
  for (size_t i = 0; i < stats.size(); ++i) {
    const HostStats& s = stats[i];
    nlohmann::ordered_json j;
    j["type"] = "stats";
    j["host"] = s.host;
    j["traces"] = hosts[i].trace_dirs;
    nlohmann::ordered_json formats = nlohmann::ordered_json::array();
    for (const TraceEnv& env : hosts[i].envs) formats.push_back(env.FormatLine());
    j["formats"] = formats;
    j["dialect"] = DialectName(s.reader.dialect);
    j["cpus"] = CpuCount(s);
    j["first_ns"] = s.reader.events ? s.reader.first_ns : 0;
    j["last_ns"] = s.reader.events ? s.reader.last_ns : 0;
    for (const QualityCounterInfo& c : kQualityCounters) {
      if (c.in_stats()) j[std::string(c.stats_key)] = *StatsValue(s, c.id);
    }
    nlohmann::ordered_json per_cpu = nlohmann::ordered_json::object();
    for (const auto& [cpu, n] : s.discarded_by_cpu) per_cpu[std::to_string(cpu)] = n;
    j["discarded_by_cpu"] = per_cpu;
    nlohmann::ordered_json events_by_cpu = nlohmann::ordered_json::object();
    for (const auto& [cpu, n] : s.events_by_cpu) events_by_cpu[std::to_string(cpu)] = n;
    j["events_by_cpu"] = events_by_cpu;
    nlohmann::ordered_json kinds = nlohmann::ordered_json::object();
    for (int k = 0; k < kEventKindCount; ++k) {
      if (s.by_kind[k]) kinds[std::string(EventKindName(static_cast<EventKind>(k)))] = s.by_kind[k];
    }
    j["kinds"] = kinds;
    j["analysable"] = s.analysable();
    if (!s.error.empty()) j["error"] = s.error;
    out << j.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) << "\n";
  }
}

}  // namespace waitpath
