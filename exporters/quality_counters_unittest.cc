// The data-quality table: its rows are consistent, and the documentation lists exactly them
// (docs/metrics.md, docs/reading.md hold tables generated from it).
#include "exporters/quality_counters.h"

#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "exporters/stats_report.h"

namespace waitpath {
namespace {

TEST(QualityCounters, RowsAreConsistent) {
  std::set<std::string_view> metrics, keys;
  for (size_t i = 0; i < kQualityCounterCount; ++i) {
    const QualityCounterInfo& c = kQualityCounters[i];
    EXPECT_EQ(static_cast<size_t>(c.id), i);
    EXPECT_EQ(&Info(c.id), &c);
    EXPECT_FALSE(c.doc.empty()) << i;
    EXPECT_TRUE(c.exported() || c.in_stats()) << "row " << i << " is neither exported nor in stats";
    if (c.in_stats()) {
      EXPECT_TRUE(keys.insert(c.stats_key).second) << c.stats_key;
      // Every figure `stats` reports has a value there.
      EXPECT_TRUE(StatsValue(HostStats{}, c.id).has_value()) << c.stats_key;
    } else {
      EXPECT_FALSE(StatsValue(HostStats{}, c.id).has_value()) << c.metric;
    }
    if (!c.exported()) {
      EXPECT_TRUE(c.metric.empty() && c.help.empty() && c.labels.empty()) << c.stats_key;
      continue;
    }
    EXPECT_TRUE(metrics.insert(c.metric).second) << c.metric;
    EXPECT_TRUE(c.metric.starts_with("waitpath_")) << c.metric;
    EXPECT_EQ(c.metric.ends_with("_total"), c.type == QualityMetricType::kCounter) << c.metric;
    EXPECT_FALSE(c.help.empty()) << c.metric;
    // The scope is the first label.
    switch (c.scope) {
      case QualityScope::kGlobal:
        EXPECT_EQ(c.labels, "") << c.metric;
        break;
      case QualityScope::kHost:
        EXPECT_TRUE(c.labels == "host" || c.labels.starts_with("host,")) << c.metric;
        break;
      case QualityScope::kRelayd:
        EXPECT_EQ(c.labels, "relayd") << c.metric;
        break;
      case QualityScope::kShard:
        EXPECT_TRUE(c.labels == "shard" || c.labels.starts_with("shard,")) << c.metric;
        break;
    }
  }
}

// The block of `doc` between "<!-- quality-counters:NAME begin" and "<!-- quality-counters:NAME
// end -->" must be what `write` generates. WAITPATH_UPDATE_DOCS=1 rewrites it.
void ExpectDocBlock(const std::string& doc, const std::string& name, void (*write)(std::ostream&)) {
  const std::string path = std::string(WAITPATH_SOURCE_DIR) + "/" + doc;
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  const std::string begin_mark = "<!-- quality-counters:" + name + " begin";
  const std::string end_mark = "<!-- quality-counters:" + name + " end -->";
  const size_t begin = text.find(begin_mark);
  ASSERT_NE(begin, std::string::npos) << doc << " has no " << begin_mark;
  const size_t body = text.find("-->\n", begin);
  ASSERT_NE(body, std::string::npos);
  const size_t end = text.find(end_mark, body);
  ASSERT_NE(end, std::string::npos) << doc << " has no " << end_mark;
  std::ostringstream generated;
  write(generated);
  const std::string have = text.substr(body + 4, end - body - 4);
  if (have != generated.str() && std::getenv("WAITPATH_UPDATE_DOCS")) {
    std::ofstream(path) << text.substr(0, body + 4) << generated.str() << text.substr(end);
    return;
  }
  EXPECT_EQ(have, generated.str())
      << doc << " does not list the counters of exporters/quality_counters.h; regenerate with "
      << "WAITPATH_UPDATE_DOCS=1 build/exporters/waitpath_exporters_unittest "
         "--gtest_filter='QualityCounters.*'";
}

TEST(QualityCounters, MetricsDocListsExactlyTheExportedCounters) {
  ExpectDocBlock("docs/metrics.md", "health", WriteHealthMetricsMarkdown);
}

TEST(QualityCounters, ReadingDocListsExactlyTheStatsCounters) {
  ExpectDocBlock("docs/reading.md", "stats", WriteStatsCountersMarkdown);
}

// The generated tables have one row per counter of their kind, by name.
TEST(QualityCounters, GeneratedTablesHaveOneRowPerCounter) {
  std::ostringstream health, stats;
  WriteHealthMetricsMarkdown(health);
  WriteStatsCountersMarkdown(stats);
  for (const QualityCounterInfo& c : kQualityCounters) {
    EXPECT_EQ(c.exported(),
              health.str().find("| `" + std::string(c.metric) + "` |") != std::string::npos)
        << c.metric;
    if (c.in_stats()) {
      EXPECT_NE(stats.str().find("| `" + std::string(c.stats_key) + "` |"), std::string::npos);
    }
  }
}

}  // namespace
}  // namespace waitpath
