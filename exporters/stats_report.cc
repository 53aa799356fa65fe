#include "exporters/stats_report.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "live/dialect.h"

namespace waitpath {
namespace {

std::string FormatNs(int64_t ns) {
  if (ns == std::numeric_limits<int64_t>::max() || ns == std::numeric_limits<int64_t>::min())
    return "-";
  return fmt::format("{}.{:09d}", ns / 1000000000, ns % 1000000000);
}

uint64_t TotalDiscarded(const HostStats& s) {
  // Packet counters and discarded-events messages are the same information; the reader's
  // total is authoritative when the per-CPU reports carry no count.
  return s.reader.discarded;
}

// Streams name their CPU in packet contexts; a dialect without that still shows it per event.
size_t CpuCount(const HostStats& s) {
  return std::max<size_t>(s.reader.cpus, s.events_by_cpu.size());
}

}  // namespace

void WriteStatsText(std::ostream& out, const std::vector<HostSpec>& hosts,
                    const std::vector<HostStats>& stats) {
  for (size_t i = 0; i < stats.size(); ++i) {
    const HostStats& s = stats[i];
    fmt::print(out, "host {}\n", s.host);
    for (const std::string& dir : hosts[i].trace_dirs) fmt::print(out, "  trace        {}\n", dir);
    fmt::print(out, "  dialect      {}\n", DialectName(s.reader.dialect));
    fmt::print(out, "  cpus         {}\n", CpuCount(s));
    const double span = s.reader.events ? (s.reader.last_ns - s.reader.first_ns) / 1e9 : 0.0;
    fmt::print(out, "  time         {} .. {} ({:.3f} s)\n", FormatNs(s.reader.first_ns),
               FormatNs(s.reader.last_ns), span);
    fmt::print(out, "  events       {} ({} used, {} of other kinds skipped)\n", s.reader.events,
               s.reader.events - s.reader.unknown, s.reader.unknown);
    fmt::print(out, "  regressions  {} timestamps clamped\n", s.reader.regressions);
    if (s.inferred_switches) {
      fmt::print(
          out,
          "  inferred     {} switches (events naming another current task than the last switch)\n",
          s.inferred_switches);
    }
    fmt::print(out, "  discarded    {}", TotalDiscarded(s));
    if (!s.discarded_by_cpu.empty()) {
      out << " (";
      bool first = true;
      for (const auto& [cpu, n] : s.discarded_by_cpu) {
        fmt::print(out, "{}cpu{}: {}", first ? "" : ", ", cpu, n);
        first = false;
      }
      out << ")";
    }
    out << "\n";
    if (s.reader.damaged) {
      fmt::print(out,
                 "  damaged      {} holes skipped in damaged streams (each a loss on its CPU)\n",
                 s.reader.damaged);
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
    j["dialect"] = DialectName(s.reader.dialect);
    j["cpus"] = CpuCount(s);
    j["events"] = s.reader.events;
    j["first_ns"] = s.reader.events ? s.reader.first_ns : 0;
    j["last_ns"] = s.reader.events ? s.reader.last_ns : 0;
    j["unknown"] = s.reader.unknown;
    j["regressions"] = s.reader.regressions;
    j["inferred_switches"] = s.inferred_switches;
    j["discarded"] = TotalDiscarded(s);
    nlohmann::ordered_json per_cpu = nlohmann::ordered_json::object();
    for (const auto& [cpu, n] : s.discarded_by_cpu) per_cpu[std::to_string(cpu)] = n;
    j["discarded_by_cpu"] = per_cpu;
    j["damaged"] = s.reader.damaged;
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
