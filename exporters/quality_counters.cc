#include "exporters/quality_counters.h"

#include <fmt/format.h>
#include <fmt/ostream.h>

#include <ostream>
#include <string>

namespace waitpath {
namespace {

// "host,peer" -> "`host`, `peer`"
std::string LabelsCell(std::string_view labels) {
  std::string out;
  while (!labels.empty()) {
    const size_t comma = labels.find(',');
    if (!out.empty()) out += ", ";
    out += fmt::format("`{}`", labels.substr(0, comma));
    labels = comma == std::string_view::npos ? std::string_view() : labels.substr(comma + 1);
  }
  return out;
}

}  // namespace

std::string_view QualityScopeName(QualityScope scope) {
  switch (scope) {
    case QualityScope::kGlobal:
      return "global";
    case QualityScope::kHost:
      return "per host";
    case QualityScope::kRelayd:
      return "per relayd";
    case QualityScope::kShard:
      return "per shard";
  }
  return "?";
}

std::string_view QualitySeverityName(QualitySeverity severity) {
  switch (severity) {
    case QualitySeverity::kInfo:
      return "info";
    case QualitySeverity::kDataLoss:
      return "data loss";
    case QualitySeverity::kError:
      return "error";
  }
  return "?";
}

std::string_view QualitySourceName(QualitySource source) {
  switch (source) {
    case QualitySource::kReader:
      return "reader";
    case QualitySource::kMerger:
      return "time merger";
    case QualitySource::kRelayd:
      return "relayd link";
    case QualitySource::kClockSync:
      return "clock sync";
    case QualitySource::kEngine:
      return "engine";
    case QualitySource::kPacketMatcher:
      return "packet matcher";
    case QualitySource::kResolver:
      return "path resolver";
    case QualitySource::kHistory:
      return "history store";
    case QualitySource::kShard:
      return "shard peers";
  }
  return "?";
}

std::string_view QualityMetricTypeName(QualityMetricType type) {
  switch (type) {
    case QualityMetricType::kNone:
      return "";
    case QualityMetricType::kCounter:
      return "counter";
    case QualityMetricType::kGauge:
      return "gauge";
  }
  return "?";
}

void WriteHealthMetricsMarkdown(std::ostream& out) {
  out << "| family | type | labels | severity | counted by | meaning |\n";
  out << "|---|---|---|---|---|---|\n";
  for (const QualityCounterInfo& c : kQualityCounters) {
    if (!c.exported()) continue;
    fmt::print(out, "| `{}` | {} | {} | {} | {} | {} |\n", c.metric, QualityMetricTypeName(c.type),
               LabelsCell(c.labels), QualitySeverityName(c.severity), QualitySourceName(c.source),
               c.doc);
  }
}

void WriteStatsCountersMarkdown(std::ostream& out) {
  out << "| `stats --json` key | severity | counted by | metric | meaning |\n";
  out << "|---|---|---|---|---|\n";
  for (const QualityCounterInfo& c : kQualityCounters) {
    if (!c.in_stats()) continue;
    fmt::print(out, "| `{}` | {} | {} | {} | {} |\n", c.stats_key, QualitySeverityName(c.severity),
               QualitySourceName(c.source), c.exported() ? fmt::format("`{}`", c.metric) : "",
               c.doc);
  }
}

}  // namespace waitpath
